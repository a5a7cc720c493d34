// Browser tests of the teachers' app at /app/, in Debian's Chromium driven by playwright-core,
// against a real `examkit serve` on 127.0.0.1 (SQLite by default; PostgreSQL when DATABASE_URL is
// set). One teacher signs in, makes an API key, marks a handwritten scan through the API with it,
// reads the key's usage, reviews the uncertain decisions with the keyboard alone, meets a conflict
// with a change made through the API, and revokes the key. Every page visited is checked with
// axe-core and screenshotted into test-output/<database>/.
//
// The steps share one server, one account and one key, so they run in order and each one builds
// on the ones before it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const DATABASE = process.env.DATABASE_URL ? 'postgres' : 'sqlite';
/** How long one browser step (a click, a navigation, a selector) may wait. */
const STEP_LIMIT_MS = 120_000;
const output = join(here, 'test-output', DATABASE);
const targetDir = process.env.CARGO_TARGET_DIR ?? join(homedir(), '.cache', 'examkit', 'target');
const EXAMKIT = process.env.EXAMKIT_BIN ?? join(targetDir, 'debug', 'examkit');
const SCANMAKER = process.env.EXAMKIT_SCANMAKER_BIN ?? join(targetDir, 'debug', 'examkit-scanmaker');
const FONT = process.env.EXAMKIT_HANDWRITING_FONT ?? '/usr/share/fonts/opentype/comic-neue/ComicNeue-Regular.otf';
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const AXE = readFileSync(join(here, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

const EMAIL = 't@school.test';
const PASSWORD = 'correct horse battery staple';
const SCOPES = ['questions:read', 'papers:read', 'papers:write', 'marking:submit', 'marking:read', 'marking:review'];
// Names a person can choose, holding markup that must stay text wherever it is shown.
const PAPER_TITLE = '<script>window.__pwned=1</script>"><img src=x onerror="window.__pwned=2">';
const KEY_NAME = 'marking <img src=x onerror="window.__pwned=3">';
// The three sample questions that examples/scanmaker/answers.example.json answers.
const SAMPLE_QUESTIONS = [
  '8a834eff-5ac7-5e3d-902e-0c7342b819d4',
  '6c2fd79f-8d1f-50f9-87cb-aa6638109d53',
  '24edba06-39ce-5306-9e48-2c6afec357a4',
];
const MARKING_LIMIT_MS = 6 * 60_000;

let dataDir; // the service's files (and its SQLite database when DATABASE_URL is not set)
let server;
let baseUrl;
let browser;
let context; // the teacher's browser, with the app's Content-Security-Policy enforced
let auditContext; // the same pages again for axe-core, with CSP bypassed so its script can be added
let page;
let problems = [];
let shot = 0;
const axeReport = []; // every page's axe results, written to test-output/<database>/axe.json

// What the steps learn and pass on.
const state = { secret: null, keyId: null, paperId: null, sessionId: null, session: null, reviewed: null };

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** The environment of every examkit command: the test's database, one OCR thread per engine. */
function examkitEnv() {
  return { ...process.env, EXAMKIT_DATA_DIR: dataDir, OMP_THREAD_LIMIT: '1' };
}

function run(command, args, input) {
  const result = spawnSync(command, args, { env: examkitEnv(), input, encoding: 'utf8', cwd: root });
  if (result.error) throw result.error;
  assert.equal(result.status, 0, `${command} ${args.join(' ')} failed:\n${result.stderr}`);
  return result.stdout.trim();
}

/** Calls the API with `key` (the step's key unless given); JSON bodies are serialised. */
async function api(method, path, { body, headers = {}, key = state.secret } = {}) {
  const sent = { authorization: `Bearer ${key}`, ...headers };
  let payload = body;
  if (body !== undefined && typeof body !== 'string' && !(body instanceof Uint8Array)) {
    payload = JSON.stringify(body);
    sent['content-type'] ??= 'application/json';
  }
  return fetch(baseUrl + path, { method, headers: sent, body: payload });
}

/** Like api(), but the call must succeed; returns the body's text. */
async function apiText(method, path, options) {
  const response = await api(method, path, options);
  const text = await response.text();
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
  return text;
}

const apiJson = async (method, path, options) => JSON.parse(await apiText(method, path, options));

/** A full-page screenshot, numbered in visiting order. */
async function screenshot(name) {
  shot += 1;
  await page.screenshot({ path: join(output, `${String(shot).padStart(2, '0')}-${name}.png`), fullPage: true });
}

/**
 * Checks the page as it stands with axe-core: the page's current DOM is served at its own address
 * in the audit context (same cookies, so its styles and scan images load as they do for the
 * teacher), axe is added there, and no violation may be serious or critical. Markup the server put
 * into the page runs there (CSP is bypassed), so `window.__pwned` must stay undefined. Then takes
 * the screenshot.
 */
async function audit(name) {
  const html = await page.content();
  const address = new URL(page.url());
  address.hash = '';
  await auditContext.clearCookies();
  await auditContext.addCookies(await context.cookies());
  const view = await auditContext.newPage();
  try {
    let served = false;
    await view.route(
      (url) => !served && url.href === address.href,
      (route) => {
        served = true;
        return route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html });
      },
    );
    await view.goto(address.href);
    await view.waitForLoadState('load');
    await view.addScriptTag({ content: AXE });
    const { violations, passed, incomplete } = await view.evaluate(async () => {
      const results = await window.axe.run(document);
      return {
        violations: results.violations.map((v) => ({
          id: v.id,
          impact: v.impact,
          help: v.help,
          nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary}`),
        })),
        passed: results.passes.map((r) => r.id),
        incomplete: results.incomplete.map((r) => r.id),
      };
    });
    axeReport.push({ page: name, path: address.pathname, violations, incomplete, passed: passed.length });
    writeFileSync(join(output, 'axe.json'), JSON.stringify(axeReport, null, 2));
    assert.ok(passed.length > 10, `axe ran on ${name}`);
    if (violations.length) {
      console.log(`axe on ${name} (${address.pathname}):\n${JSON.stringify(violations, null, 2)}`);
    }
    const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepStrictEqual(serious, [], `serious accessibility problems on ${name}`);
    assert.equal(await view.evaluate(() => window.__pwned), undefined, `markup ran on ${name}`);
  } finally {
    await view.close();
  }
  await screenshot(name);
}

/** Problems the page reported, less the refusals the steps cause on purpose. */
function takeProblems(expectedStatuses = []) {
  const seen = problems.filter((p) => {
    const status = /status of (\d{3})/.exec(p);
    return !(status && expectedStatuses.includes(Number(status[1])));
  });
  problems = [];
  return seen;
}

async function waitForServer() {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`examkit serve exited with ${server.exitCode}; see ${output}/server.log`);
    try {
      const response = await fetch(`${baseUrl}/v1/guide.txt`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('examkit serve did not answer within 60 s');
}

before(async () => {
  rmSync(output, { recursive: true, force: true });
  mkdirSync(output, { recursive: true });
  dataDir = process.env.EXAMKIT_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'examkit-app-'));

  run(EXAMKIT, ['users', 'create', '--email', EMAIL, '--password-stdin'], `${PASSWORD}\n`);

  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  const log = createWriteStream(join(output, 'server.log'));
  server = spawn(EXAMKIT, ['serve', '--listen', `127.0.0.1:${port}`], { env: examkitEnv(), cwd: root });
  server.stdout.pipe(log);
  server.stderr.pipe(log);
  await waitForServer();

  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  const size = { viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 };
  context = await browser.newContext(size);
  auditContext = await browser.newContext({ ...size, bypassCSP: true });
  // A shared machine can be slow: a step waits up to two minutes, never failing on a busy moment.
  for (const c of [context, auditContext]) c.setDefaultTimeout(STEP_LIMIT_MS);
  page = await context.newPage();
  page.on('console', (message) => {
    const where = message.location()?.url ?? '';
    // Chromium asks for /favicon.ico on its own; the app has no icon.
    if (message.type() === 'error' && !where.endsWith('/favicon.ico')) problems.push(`console error: ${message.text()} (${where})`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()}`));
});

after(async () => {
  await browser?.close();
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((resolve) => {
      const timer = setTimeout(() => {
        server.kill('SIGKILL');
        resolve();
      }, 10_000);
      server.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  if (dataDir && !process.env.EXAMKIT_DATA_DIR) rmSync(dataDir, { recursive: true, force: true });
});

test('signing in: a wrong password is refused with a message, the right one opens the app', async () => {
  const response = await page.goto(baseUrl + '/');
  assert.equal(new URL(page.url()).pathname, '/app/sign-in');
  const csp = response.headers()['content-security-policy'];
  assert.match(csp, /script-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline/);
  await audit('sign-in');

  await page.fill('#email', EMAIL);
  await page.fill('#password', 'not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForSelector('#sign-in-error');
  assert.match(await page.textContent('#sign-in-error'), /email or password is not right/);
  assert.equal(await page.inputValue('#email'), EMAIL, 'the email is kept');
  assert.equal(await page.inputValue('#password'), '', 'the password is not sent back');
  await audit('sign-in-refused');

  await page.fill('#password', PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname === '/app/sessions');
  assert.match(await page.textContent('header.top .account'), /Signed in as t@school\.test/);
  const cookies = await context.cookies();
  const session = cookies.find((c) => c.name === 'examkit_session');
  assert.ok(session, 'the session cookie is set');
  assert.equal(session.httpOnly, true);
  assert.equal(session.sameSite, 'Strict');
  assert.equal(cookies.some((c) => c.name === 'examkit_sign_in'), false, 'the sign-in cookie is gone');
  assert.match(await page.textContent('#no-sessions'), /No marked work yet/);
  await audit('sessions-empty');
  assert.deepStrictEqual(takeProblems([401]), []);
});

test('making an API key: the secret is shown once and works on /v1', async () => {
  await page.getByRole('link', { name: 'API keys' }).click();
  await page.waitForURL((url) => url.pathname === '/app/keys');
  assert.equal(await page.getAttribute('header nav a[href="/app/keys"]', 'aria-current'), 'page');
  await audit('keys-empty');

  await page.fill('#key-name', KEY_NAME);
  for (const scope of SCOPES) await page.check(`input[name=scope][value="${scope}"]`);
  await page.check('#expires-30d');
  await page.getByRole('button', { name: 'Make key' }).click();
  await page.waitForSelector('#secret');
  state.secret = await page.inputValue('#secret');
  assert.match(state.secret, /^\S{20,}$/);
  assert.match(await page.textContent('main'), /Copy the key now/);
  assert.ok((await page.textContent('main')).includes(`Key “${KEY_NAME}”`), 'the name is shown as text');
  await audit('key-created');

  const me = await apiJson('GET', '/v1/me');
  assert.equal(me.key.name, KEY_NAME);
  assert.deepStrictEqual([...me.key.scopes].sort(), [...SCOPES].sort());
  state.keyId = me.key.id;

  await page.getByRole('link', { name: 'Back to your keys' }).click();
  await page.waitForURL((url) => url.pathname === '/app/keys');
  const row = page.locator(`#keys tr[data-key="${state.keyId}"]`);
  assert.equal(await row.locator('th').textContent(), KEY_NAME);
  const cells = await row.locator('td').allTextContents();
  assert.equal(cells[2], 'active');
  for (const scope of SCOPES) assert.ok(cells[1].includes(scope), `scope ${scope} listed`);
  assert.equal(await page.locator('#keys img').count(), 0, 'the key name made no element');
  await audit('keys');
  assert.deepStrictEqual(takeProblems(), []);
});

test('marking a handwritten scan through the API with the key (the README walkthrough)', { timeout: MARKING_LIMIT_MS + 120_000 }, async () => {
  const work = join(output, 'walkthrough');
  mkdirSync(work, { recursive: true });
  const pins = [];
  for (const id of SAMPLE_QUESTIONS) {
    pins.push((await apiJson('GET', `/v1/questions/${id}/revisions/1`)).question.pin);
  }
  state.paperId = randomUUID();
  await apiJson('POST', '/v1/papers', {
    body: { id: state.paperId, title: PAPER_TITLE, questions: pins, writingSpace: 'smart', gradeGuide: false },
  });
  const exported = await apiText('POST', `/v1/papers/${state.paperId}/revisions/1/exports`, { body: {} });
  writeFileSync(join(work, 'export.json'), exported);
  const pdf = await api('GET', `/v1/papers/${state.paperId}/revisions/1/exports/question-paper`);
  assert.equal(pdf.status, 200);
  writeFileSync(join(work, 'question-paper.pdf'), Buffer.from(await pdf.arrayBuffer()));
  run(SCANMAKER, [
    '--paper', join(work, 'question-paper.pdf'),
    '--layout', join(work, 'export.json'),
    '--answers', join(root, 'examples', 'scanmaker', 'answers.example.json'),
    '--out', join(work, 'scan.pdf'),
    '--rotate', '2:180',
    '--skew', '0.8',
    '--font', FONT,
  ]);

  const made = await apiJson('POST', '/v1/marking/sessions/from-builder', {
    body: { paperId: state.paperId, revision: 1 },
    headers: { 'idempotency-key': `session-${state.paperId}` },
  });
  state.sessionId = made.session.id;
  assert.equal(made.session.title, PAPER_TITLE);
  await apiJson('POST', `/v1/marking/sessions/${state.sessionId}/assets?kind=work&name=scan.pdf`, {
    body: new Uint8Array(readFileSync(join(work, 'scan.pdf'))),
    headers: { 'content-type': 'application/pdf' },
  });
  await apiJson('POST', `/v1/marking/sessions/${state.sessionId}/start`, {
    headers: { 'idempotency-key': `start-${state.sessionId}` },
  });

  const started = Date.now();
  let session;
  for (;;) {
    session = (await apiJson('GET', `/v1/marking/sessions/${state.sessionId}`)).session;
    const done = session.indexingFinished && session.questions.length > 0
      && session.questions.every((q) => q.status !== 'queued' && q.status !== 'running');
    if (done) break;
    assert.ok(Date.now() - started < MARKING_LIMIT_MS, `marking unfinished after 6 minutes: ${JSON.stringify(session.questions.map((q) => q.status))}`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  writeFileSync(join(work, 'session.json'), JSON.stringify(session, null, 2));
  console.log(`marked in ${Math.round((Date.now() - started) / 1000)} s: ${session.questions.map((q) => `${q.label} ${q.status}`).join(', ')}`);
  state.session = session;
  assert.equal(session.questions.length, 3);
  assert.ok(
    session.questions.some((q) => q.status === 'needs_review' && q.allocations.some((a) => a.decision === 'uncertain')),
    'the handwritten answers leave decisions to a person',
  );
});

test("the key's usage page shows the requests just made", async () => {
  await page.goto(`${baseUrl}/app/keys`);
  await page.locator(`#keys tr[data-key="${state.keyId}"] a[href="/app/keys/${state.keyId}"]`).click();
  await page.waitForURL((url) => url.pathname === `/app/keys/${state.keyId}`);
  const total = Number(await page.textContent('#usage-total'));
  assert.ok(total > 0, `usage total ${total}`);
  const rows = await page.$$eval('#usage tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent.trim())));
  const me = rows.find((r) => r[1] === 'GET /v1/me' && r[2] === '200');
  assert.ok(me, `GET /v1/me listed: ${JSON.stringify(rows)}`);
  assert.ok(Number(me[3]) >= 1);
  assert.ok(rows.some((r) => r[1] === 'POST /v1/marking/sessions/from-builder'), 'the session request listed');
  assert.equal(rows.reduce((sum, r) => sum + Number(r[3]), 0), total, 'the rows add up to the total');
  assert.ok(await page.locator('figure.chart svg rect.ok').count() >= 1, 'the chart has a bar');
  assert.ok((await page.textContent('h1')).includes(KEY_NAME));
  await audit('key-usage');
  assert.deepStrictEqual(takeProblems(), []);
});

test('the marked work: the session title stays text, the class set lists the questions', async () => {
  await page.goto(`${baseUrl}/app/sessions`);
  const heading = page.locator(`#s-${state.sessionId}`);
  assert.equal(await heading.textContent(), PAPER_TITLE);
  assert.ok(await heading.isVisible());
  assert.equal(await page.locator('main script, main img').count(), 0, 'the title made no element');
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator('ul.questions a[href^="/app/questions/"]').count(), 3);
  await audit('sessions');

  await page.click('#filter-review');
  await page.waitForURL((url) => url.search === '?review=1');
  const waiting = state.session.questions.filter((q) => q.status === 'needs_review');
  assert.equal(await page.locator('ul.questions a[href^="/app/questions/"]').count(), waiting.length);
  await audit('sessions-needing-review');

  await heading.locator('a').click();
  await page.waitForURL((url) => url.pathname === `/app/sessions/${state.sessionId}`);
  assert.equal(await page.textContent('h1'), PAPER_TITLE);
  assert.equal(await page.title(), `${PAPER_TITLE} · examkit`);
  assert.equal(await page.locator('#questions tbody tr').count(), 3);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  await audit('session');

  await page.getByRole('link', { name: /Mark every student's script of this paper/ }).click();
  await page.waitForURL((url) => url.pathname === `/app/sets/${state.paperId}/1`);
  const set = await page.$$eval('#set tbody tr', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent.trim())));
  assert.deepStrictEqual(set.map((r) => r[1]), ['1', '1', '1']);
  await audit('class-set');
  assert.deepStrictEqual(takeProblems(), []);
});

test('a class set from a roster: listed, its copies shown with a form for each', async () => {
  const made = await apiJson('POST', '/v1/class-sets', {
    body: {
      paperId: state.paperId,
      revision: 1,
      title: 'Class <b>set</b>',
      roster: [{ name: 'Ada Lovelace', candidateNumber: '0001' }, { name: '=HYPERLINK("x")' }],
    },
    headers: { 'idempotency-key': `set-${Date.now()}` },
  });
  const id = made.classSet.id;
  await page.goto(`${baseUrl}/app/class-sets`);
  const link = page.locator(`a[href="/app/class-sets/${id}"]`);
  assert.equal(await link.textContent(), 'Class <b>set</b>', 'the title stays text');
  await audit('class-sets');
  await link.click();
  await page.waitForURL((url) => url.pathname === `/app/class-sets/${id}`);
  const students = await page.$$eval('tbody tr[data-copy] td.student', (tds) => tds.map((td) => td.textContent.trim()));
  assert.deepStrictEqual(students, ['Ada Lovelace', '=HYPERLINK("x")']);
  assert.ok(await page.locator('select[name="student"]').count() >= 2, 'a student form per copy');
  await audit('class-set-page');
  // Its results, before any script: the markbook's rows, every question's criteria charted.
  await page.goto(`${baseUrl}/app/class-sets/${id}/results`);
  const rows = await page.$$eval('#marks-table tbody tr', (trs) => trs.map((tr) => tr.children[0].textContent));
  assert.deepStrictEqual(rows, ['Maximum', 'Ada Lovelace', '=HYPERLINK("x")']);
  // Nothing is scanned yet: no copy is absent, nothing is started.
  const statuses = await page.$$eval('#marks-table tbody tr', (trs) => trs.map((tr) => tr.lastElementChild.textContent));
  assert.deepStrictEqual(statuses, ['', 'not started', 'not started']);
  assert.ok(await page.locator('#criteria-chart svg rect.track').count() > 0, 'a bar per criterion');
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  await audit('class-set-results');
  assert.deepStrictEqual(takeProblems(), []);
});

/** The review page's criteria as shown. */
function criteria() {
  return page.$$eval('li.criterion', (rows) => rows.map((row) => ({
    id: row.dataset.criterion,
    outcome: row.dataset.outcome,
    selected: row.classList.contains('selected'),
    by: row.querySelector('.by')?.textContent ?? '',
    canDecide: !!row.querySelector('form.decide'),
  })));
}

async function revision() {
  return Number(await page.textContent('#revision'));
}

/** Moves the selection to criterion `id` with j and k, as a person would. */
async function selectWithKeys(id) {
  for (let guard = 0; guard < 50; guard++) {
    const rows = await criteria();
    const at = rows.findIndex((r) => r.selected);
    const to = rows.findIndex((r) => r.id === id);
    assert.ok(to >= 0, `criterion ${id} shown`);
    if (at === to) return;
    await page.keyboard.press(to > at ? 'j' : 'k');
  }
  assert.fail(`could not select ${id}`);
}

/** Decides the selected criterion with `key` (a or w), a typed reason and Enter; waits for the save. */
async function decideWithKeys(key, reason) {
  const before = await revision();
  await page.keyboard.press(key);
  // The key moves focus in its handler; on a loaded machine the check may run before it has.
  const focused = await page
    .waitForFunction(() => document.activeElement?.classList.contains('reason-input'), null, { timeout: 5000 })
    .then(() => true, () => false);
  assert.equal(focused, true, 'the reason field has focus');
  await page.keyboard.type(reason);
  await page.keyboard.press('Enter');
  await page.waitForFunction(
    (previous) => Number(document.getElementById('revision')?.textContent) === previous + 1 || document.getElementById('problem'),
    before,
  );
  assert.equal(await page.locator('#problem').count(), 0, `refused: ${await page.locator('#problem').allTextContents()}`);
  assert.match(await page.textContent('#saved'), /^Saved the decision on /);
}

test('reviewing a question with the keyboard alone: every uncertain decision, saved in place', async () => {
  await page.goto(`${baseUrl}/app/sessions?review=1`);
  const link = page.locator(`#s-${state.sessionId}`).locator('..').locator('a[href^="/app/questions/"]').first();
  const questionPath = await link.getAttribute('href');
  const label = await link.textContent();
  await link.click();
  await page.waitForURL((url) => url.pathname === questionPath);
  state.reviewed = questionPath.split('/').pop();
  assert.equal(await page.textContent('h1'), `${label} · ${PAPER_TITLE}`);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.ok(await page.locator('figure.page-view img').count() >= 1, 'a page of the scan is shown');
  await page.waitForFunction(() => [...document.querySelectorAll('figure.page-view img')].every((img) => img.complete && img.naturalWidth > 0));
  assert.ok(await page.locator('svg.boxes rect.box[data-criterion]').count() >= 1, 'evidence boxes are drawn');

  const first = await criteria();
  const uncertain = first.filter((r) => r.outcome === 'uncertain' && r.canDecide);
  assert.ok(uncertain.length >= 1, 'the question has uncertain decisions');
  assert.deepStrictEqual(first.slice(0, uncertain.length).map((r) => r.outcome), uncertain.map(() => 'uncertain'), 'uncertain ones come first');
  assert.ok(first[0].selected, 'the first criterion starts selected');
  const selectedBoxes = await page.$$eval('rect.box.selected', (boxes) => [...new Set(boxes.map((b) => b.dataset.criterion))]);
  assert.ok(selectedBoxes.every((id) => id === first[0].id), 'only its boxes are selected');
  const scoreBefore = await page.textContent('#score');
  const revisionBefore = await revision();
  await audit('question');

  // The shortcuts dialog, and single-key shortcuts switched off and on again.
  await page.keyboard.press('?');
  assert.equal(await page.evaluate(() => document.getElementById('shortcuts').open), true);
  await audit('question-shortcuts');
  await page.keyboard.press('Escape');
  assert.equal(await page.evaluate(() => document.getElementById('shortcuts').open), false);
  if (first.length > 1) {
    // A key pressed as the list closes, while focus is still on its checkbox, moves the selection.
    const raced = await page.evaluate(() => {
      const selected = () => [...document.querySelectorAll('li.criterion')].findIndex((r) => r.classList.contains('selected'));
      const dialog = document.getElementById('shortcuts');
      const before = selected();
      document.activeElement?.blur(); // as when ? is pressed with nothing focused: no focus to give back
      dialog.showModal();
      document.getElementById('single-keys').focus();
      dialog.close();
      const focus = document.activeElement.id;
      document.activeElement.dispatchEvent(new KeyboardEvent('keydown', { key: 'j', bubbles: true, cancelable: true }));
      return { before, focus, after: selected() };
    });
    assert.deepStrictEqual(raced, { before: 0, focus: 'single-keys', after: 1 }, 'j pressed as the list closes');
    await page.waitForFunction(() => document.activeElement?.matches('li.criterion.selected'));
    await page.keyboard.press('k');
    assert.equal((await criteria())[0].selected, true, 'k selects the previous criterion');
    await page.keyboard.press('j');
    assert.equal((await criteria())[1].selected, true, 'j selects the next criterion');
    assert.deepStrictEqual(
      await page.$$eval('rect.box.selected', (boxes) => [...new Set(boxes.map((b) => b.dataset.criterion))]).then((ids) => ids.filter((id) => id !== first[1].id)),
      [],
      "the selected criterion's boxes are highlighted",
    );
    await page.keyboard.press('ArrowUp');
    assert.equal((await criteria())[0].selected, true, 'the up arrow goes back');
  }
  await page.click('#show-shortcuts');
  await page.uncheck('#single-keys');
  await page.keyboard.press('Escape');
  await page.keyboard.press('a');
  assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('reason-input') ?? false), false, 'a does nothing when single keys are off');
  await page.click('#show-shortcuts');
  await page.check('#single-keys');
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !document.getElementById('shortcuts').open, null, { timeout: 5000 });
  await page.evaluate(() => document.activeElement?.blur());

  // Decide each uncertain criterion: award the first, withhold the next, and so on.
  const decided = [];
  for (const [i, row] of uncertain.entries()) {
    await selectWithKeys(row.id);
    await decideWithKeys(i % 2 === 0 ? 'a' : 'w', `${i % 2 === 0 ? 'Correct' : 'Not shown'} on reading the handwriting (${i + 1})`);
    decided.push(row.id);
    const now = await criteria();
    const stillOpen = now.find((r) => r.outcome === 'uncertain' && !decided.includes(r.id));
    if (stillOpen) assert.equal(now.find((r) => r.selected)?.outcome, 'uncertain', 'an uncertain criterion is selected next');
  }
  assert.equal(await revision(), revisionBefore + uncertain.length);
  assert.notEqual(await page.textContent('#score'), scoreBefore, 'the score changed');
  assert.equal(new URL(page.url()).pathname, questionPath, 'saved in place, without leaving the page');

  // Enter on the selected row (it has focus after a save) accepts its decision as it stands.
  const accepted = (await criteria()).find((r) => r.selected);
  assert.equal(await page.evaluate(() => document.activeElement?.matches('li.criterion.selected')), true, 'the selected row has focus');
  await page.keyboard.press('Enter');
  await page.waitForFunction((previous) => Number(document.getElementById('revision')?.textContent) === previous + 1, revisionBefore + uncertain.length);
  assert.equal((await criteria()).find((r) => r.id === accepted.id).outcome, accepted.outcome, 'accepting keeps the outcome');
  const saves = uncertain.length + 1;
  await audit('question-reviewed');

  await page.reload();
  const saved = await criteria();
  for (const id of decided) {
    const row = saved.find((r) => r.id === id);
    assert.notEqual(row.outcome, 'uncertain', `${id} is decided`);
    assert.match(row.by, /^Decided by Teacher t@school\.test at /);
  }
  assert.equal(await revision(), revisionBefore + saves);
  const api = (await apiJson('GET', `/v1/marking/sessions/${state.sessionId}`)).session.questions.find((q) => q.id === state.reviewed);
  assert.equal(api.revision, revisionBefore + saves);
  for (const id of decided) {
    assert.notEqual(api.allocations.find((a) => a.criterionId === id).decision, 'uncertain');
  }
  assert.deepStrictEqual(takeProblems(), []);
});

test('a save after a change through the API shows the conflict; applying mine saves on top', async () => {
  // From the question just reviewed, n opens the next answer needing review.
  assert.equal(new URL(page.url()).pathname, `/app/questions/${state.reviewed}`);
  const next = await page.getAttribute('#next-review', 'href');
  assert.ok(next, 'another answer needs review');
  await page.keyboard.press('n');
  await page.waitForURL((url) => url.pathname === next);
  const session = (await apiJson('GET', `/v1/marking/sessions/${state.sessionId}`)).session;
  const question = session.questions.find((q) => `/app/questions/${q.id}` === next);
  assert.equal(question.status, 'needs_review');
  const shown = await revision();
  assert.equal(shown, question.revision);

  // Someone changes one criterion through the API meanwhile.
  const allocation = question.allocations[question.allocations.length - 1];
  const outcome = allocation.decision === 'awarded' ? 'withheld' : 'awarded';
  const patched = await apiJson('PATCH', `/v1/marking/questions/${question.id}`, {
    body: {
      revision: question.revision,
      decisions: [{
        criterionId: allocation.criterionId,
        outcome,
        reason: 'changed through the API',
        evidence: allocation.evidence,
        conditionChecks: (allocation.conditionChecks ?? []).map((c) => ({ index: c.index, result: outcome === 'awarded' ? 'met' : 'not_met' })),
      }],
    },
  });
  assert.equal(JSON.stringify(patched).includes(`"revision":${question.revision + 1}`), true, 'the API saved a new revision');

  // The page still shows the old revision; its save is refused and the conflict explained.
  await page.evaluate(() => document.activeElement?.blur());
  await page.keyboard.press('w');
  await page.keyboard.type('Not shown in the working');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#conflict');
  assert.match(await page.textContent('#conflict'), new RegExp(`You decided on revision ${shown}; revision ${shown + 1} is now saved`));
  assert.equal(await revision(), shown + 1);
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'apply-mine', 'the choice has focus');
  assert.ok(await page.locator('#keep-saved').isVisible());
  await audit('question-conflict');

  await page.keyboard.press('Enter');
  await page.waitForURL((url) => url.searchParams.has('saved'));
  assert.equal(await revision(), shown + 2);
  assert.equal(await page.locator('#conflict').count(), 0);
  assert.match(await page.textContent('#saved'), /^Saved the decision on /);
  const mine = (await criteria()).find((r) => r.by.startsWith('Decided by Teacher t@school.test'));
  assert.ok(mine, "the teacher's decision is shown");
  const byKey = (await criteria()).find((r) => r.id === allocation.criterionId);
  if (byKey.id !== mine.id) assert.ok(byKey.by.includes(`API key “${KEY_NAME}”`), `the API's change is credited: ${byKey.by}`);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  await audit('question-after-conflict');
  assert.deepStrictEqual(takeProblems([409]), []);
});

test('revoking the key after confirming: its next request is refused', async () => {
  await page.goto(`${baseUrl}/app/keys`);
  await page.locator(`#keys tr[data-key="${state.keyId}"]`).getByRole('link', { name: /^Revoke/ }).click();
  await page.waitForURL((url) => url.pathname === `/app/keys/${state.keyId}/revoke`);
  assert.equal(await page.textContent('h1'), `Revoke “${KEY_NAME}”?`);
  await audit('revoke-confirm');
  assert.equal((await api('GET', '/v1/me')).status, 200, 'nothing is revoked before confirming');

  await page.getByRole('button', { name: 'Revoke the key' }).click();
  await page.waitForURL((url) => url.pathname === '/app/keys');
  const row = page.locator(`#keys tr[data-key="${state.keyId}"]`);
  assert.equal((await row.locator('td').allTextContents())[2], 'revoked');
  assert.equal(await row.getByRole('link', { name: /^Revoke/ }).count(), 0);
  await audit('keys-revoked');

  const refused = await api('GET', '/v1/me');
  assert.equal(refused.status, 401);
  assert.equal((await refused.json()).error.code, 'revoked_api_key');
  assert.deepStrictEqual(takeProblems(), []);
});

test('signing out ends the session: the app asks to sign in again', async () => {
  const cookie = (await context.cookies()).find((c) => c.name === 'examkit_session');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL((url) => url.pathname === '/app/sign-in');
  await page.goto(`${baseUrl}/app/keys`);
  assert.equal(new URL(page.url()).pathname, '/app/sign-in');
  assert.equal(new URL(page.url()).searchParams.get('next'), '/app/keys');
  // The old cookie opens nothing any more.
  const again = await fetch(`${baseUrl}/app/questions/${state.reviewed}`, {
    redirect: 'manual',
    headers: { cookie: `examkit_session=${cookie.value}` },
  });
  assert.equal(again.status, 303);
  assert.match(again.headers.get('location'), /^\/app\/sign-in/);
  assert.deepStrictEqual(takeProblems(), []);
});
