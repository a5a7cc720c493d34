// The teacher's loop in the app, walked in Debian's Chromium (playwright-core) against a real
// `examkit serve` on a database of its own with no account: the first account made with the setup
// token the service printed, the bank searched by facet and words, a paper built, reordered with the
// keyboard and by dragging, saved and saved again, a class printed from a pasted roster with a bad
// line then fixed, its print PDF downloaded, a stack of scans made from it by the scan maker (a
// skewed copy, a copy missing a page with another page's code blotted out, a page scanned twice and
// a page of another print) uploaded, partly chosen and partly dropped on the form, and read, the
// stack settled (one scan of two chosen, the blotted page placed by hand), a name confirmed, the
// class marked, a question reviewed across the class with its maths typeset, and the markbook and
// returned scripts downloaded. Then the same walk with script off reaches every step by plain
// forms. Every page is checked with axe-core and screenshotted into test-output/<database>/loop/
// (the screenshots of docs/app.md).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const POSTGRES = process.env.EXAMKIT_TEST_POSTGRES_URL && process.env.DATABASE_URL;
const DATABASE = POSTGRES ? 'postgres' : 'sqlite';
/** How long one browser step (a click, a navigation, a selector) may wait. */
const STEP_LIMIT_MS = 120_000;
const output = join(here, 'test-output', DATABASE, 'loop');
const targetDir = process.env.CARGO_TARGET_DIR ?? join(homedir(), '.cache', 'examkit', 'target');
const EXAMKIT = process.env.EXAMKIT_BIN ?? join(targetDir, 'debug', 'examkit');
const SCANMAKER = process.env.EXAMKIT_SCANMAKER_BIN ?? join(targetDir, 'debug', 'examkit-scanmaker');
const FONT = process.env.EXAMKIT_HANDWRITING_FONT ?? '/usr/share/fonts/opentype/comic-neue/ComicNeue-Regular.otf';
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];
const AXE = readFileSync(join(here, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

const EMAIL = 'head.of.maths@school.test';
const PASSWORD = 'a long password of the loop';
// The sample questions the scan maker's example answers, by a word of their titles.
const QUESTIONS = [
  { id: '8a834eff-5ac7-5e3d-902e-0c7342b819d4', words: 'composite inverse reciprocal' },
  { id: '24edba06-39ce-5306-9e48-2c6afec357a4', words: 'Newton-Raphson' },
];
const ROSTER_BAD = [
  'Name\tCandidate number',
  'Ada Lovelace\t0001',
  'Alan Turing\t0002',
  'Emmy Noether\t0003\t12B',
  'Grace Hopper, 0004',
  'Katherine Johnson\t0005',
  'Mary Somerville',
].join('\n');
const ROSTER = ROSTER_BAD.replace('\t0003\t12B', '\t0003');

let dataDir;
let pgDatabase = null;
let server;
let serverOutput = '';
let baseUrl;
let browser;
let context;
let auditContext;
let page;
let shot = 0;
const problems = [];
const state = {};

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

function examkitEnv() {
  const env = { ...process.env, EXAMKIT_DATA_DIR: dataDir, OMP_THREAD_LIMIT: '1' };
  delete env.DATABASE_URL;
  if (pgDatabase) {
    const url = new URL(process.env.EXAMKIT_TEST_POSTGRES_URL);
    url.pathname = `/${pgDatabase}`;
    env.DATABASE_URL = url.href;
  }
  return env;
}

function run(command, args, input) {
  const result = spawnSync(command, args, { env: examkitEnv(), input, encoding: 'utf8', cwd: root });
  if (result.error) throw result.error;
  assert.equal(result.status, 0, `${command} ${args.join(' ')} failed:\n${result.stderr}`);
  return result.stdout.trim();
}

function psql(sql) {
  const result = spawnSync('psql', [process.env.EXAMKIT_TEST_POSTGRES_URL, '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', sql], { encoding: 'utf8' });
  assert.equal(result.status, 0, `psql ${sql}: ${result.stderr}`);
}

/** A screenshot of `p`, numbered in the walk's order; `docs: false` keeps it out of docs/. */
async function screenshot(name, { p = page, docs: forDocs = true } = {}) {
  shot += 1;
  const file = `${String(shot).padStart(2, '0')}-${name}`;
  await p.screenshot({ path: join(output, `${file}.png`), fullPage: true });
  // The walk's pictures in docs/app.md: EXAMKIT_DOCS_SCREENSHOTS=docs/images/app-loop makes them
  // again, as small JPEGs.
  const docs = forDocs && process.env.EXAMKIT_DOCS_SCREENSHOTS;
  if (docs) {
    mkdirSync(join(root, docs), { recursive: true });
    await p.screenshot({ path: join(root, docs, `${file}.jpg`), type: 'jpeg', quality: 55, fullPage: true });
  }
}

/**
 * axe-core on the page as it stands (no serious or critical violation), then its screenshot: the
 * walk's page by default, or `p` of the browser context `from` (the walk with script off).
 */
async function audit(name, { p = page, from = context, docs = true } = {}) {
  const html = await p.content();
  const address = new URL(p.url());
  address.hash = '';
  await auditContext.clearCookies();
  await auditContext.addCookies(await from.cookies());
  const view = await auditContext.newPage();
  try {
    let served = false;
    await view.route((url) => !served && url.href === address.href, (route) => {
      served = true;
      return route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html });
    });
    await view.goto(address.href);
    await view.addScriptTag({ content: AXE });
    const violations = await view.evaluate(async () => (await window.axe.run(document)).violations
      .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) })));
    const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepStrictEqual(serious, [], `serious accessibility problems on ${name}`);
  } finally {
    await view.close();
  }
  await screenshot(name, { p, docs });
}

/**
 * A download as a teacher makes it within the rate limits: a walk this quick can spend a
 * minute's writes (each file uploaded is one, a class's returned scripts five), and the answer is
 * then 429 with `Retry-After`; waiting as told, the download is made.
 */
// Waits out a 429's Retry-After (checked to be a sane number of seconds).
async function waitOut(refused) {
  const wait = Number(refused.headers()['retry-after']);
  assert.ok(Number.isFinite(wait) && wait >= 0 && wait <= 60, `Retry-After ${refused.headers()['retry-after']}`);
  await new Promise((resolve) => setTimeout(resolve, (wait + 1) * 1000));
}

async function withinLimits(request) {
  const first = await request();
  if (first.status() !== 429) return first;
  await waitOut(first);
  return request();
}

// Sends a form with `send` (which fills it and clicks): the class's downloads just before weigh
// seven writes, so on a fast run the next form can meet the per-minute write limit; its 429 is
// waited out and the form sent again from the page it was on.
async function sendWithinLimits(p, send) {
  const from = p.url();
  const [first] = await Promise.all([p.waitForResponse((r) => r.request().method() === 'POST'), send()]);
  if (first.status() !== 429) return;
  await waitOut(first);
  await p.goto(from);
  await send();
}

function takeProblems() {
  const seen = problems.splice(0);
  return seen.filter((p) => !/status of (409|422)/.test(p));
}

async function waitForServer() {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`examkit serve exited: ${serverOutput}`);
    try {
      if ((await fetch(`${baseUrl}/v1/guide.txt`)).ok) return;
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
  dataDir = mkdtempSync(join(tmpdir(), 'examkit-loop-'));
  if (POSTGRES) {
    pgDatabase = `examkit_loop_${Date.now().toString(36)}_${process.pid}`;
    psql(`CREATE DATABASE ${pgDatabase}`);
  }
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  const log = createWriteStream(join(output, 'server.log'));
  server = spawn(EXAMKIT, ['serve', '--listen', `127.0.0.1:${port}`], { env: examkitEnv(), cwd: root });
  server.stdout.on('data', (chunk) => { serverOutput += chunk; });
  server.stdout.pipe(log);
  server.stderr.pipe(log);
  await waitForServer();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
  const size = { viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 };
  context = await browser.newContext({ ...size, acceptDownloads: true });
  auditContext = await browser.newContext({ ...size, bypassCSP: true });
  // A shared machine can be slow: a step waits up to two minutes, never failing on a busy moment.
  for (const c of [context, auditContext]) c.setDefaultTimeout(STEP_LIMIT_MS);
  page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error' && !(m.location()?.url ?? '').endsWith('/favicon.ico')) problems.push(`console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
});

after(async () => {
  await browser?.close();
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((resolve) => {
      const timer = setTimeout(() => { server.kill('SIGKILL'); resolve(); }, 10_000);
      server.once('exit', () => { clearTimeout(timer); resolve(); });
    });
  }
  rmSync(dataDir, { recursive: true, force: true });
  if (pgDatabase) psql(`DROP DATABASE IF EXISTS ${pgDatabase}`);
});

test('the first account is made with the setup token the service printed', async () => {
  const token = /with the setup token ([0-9a-f]{32})/.exec(serverOutput)?.[1];
  assert.ok(token, `the token line: ${serverOutput}`);
  await page.goto(`${baseUrl}/app/`);
  assert.equal(new URL(page.url()).pathname, '/app/setup');
  await audit('first-run');
  await page.fill('#setup-token', token);
  await page.fill('#name', 'Head of Maths');
  await page.fill('#email', EMAIL);
  await page.fill('#password', PASSWORD);
  await page.fill('#password-again', PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL(/\/app\/sessions$/);
  assert.match(await page.textContent('header'), /head\.of\.maths@school\.test/);
  // Once an account exists the offer is gone.
  const again = await context.request.get(`${baseUrl}/app/setup`, { maxRedirects: 0 });
  assert.equal(again.headers().location, '/app/sign-in');
  assert.deepStrictEqual(takeProblems(), []);
});

test('the bank is searched by facet and words, its maths typeset', async () => {
  await page.click('nav >> text=Bank');
  await page.selectOption('#f-level', 'a-level');
  await page.selectOption('#f-subject', 'maths');
  await page.fill('#f-q', QUESTIONS[0].words);
  await page.click('form.search button[type=submit]');
  await page.waitForSelector('#results li.result');
  const html = await page.content();
  assert.ok(html.includes(`value="${QUESTIONS[0].id}:`), 'the question is found');
  assert.ok(await page.locator('#results span.math svg').count() > 0, 'maths as SVG');
  const text = await page.locator('#results').innerText();
  assert.ok(!/\$[^$]+\$/.test(text), `no raw maths in ${text.slice(0, 400)}`);
  await page.locator('#results details.scheme summary').first().click();
  await audit('bank-search');
  assert.deepStrictEqual(takeProblems(), []);
});

test('a paper is built, reordered, saved, then changed and saved again', async () => {
  await page.locator(`li.result:has(input[value^="${QUESTIONS[0].id}:"]) button`).click();
  await page.waitForURL(/\/app\/papers\/[0-9a-f-]{36}$/);
  state.paperPath = new URL(page.url()).pathname;
  await page.click('text=Add questions from the bank');
  await page.fill('#f-q', QUESTIONS[1].words);
  await page.click('form.search button[type=submit]');
  await page.locator(`li.result:has(input[value^="${QUESTIONS[1].id}:"]) button`).click();
  await page.waitForSelector('#results');
  await page.goto(baseUrl + state.paperPath);
  const order = () => page.locator('#questions input[name=pin]').evaluateAll((inputs) => inputs.map((i) => i.value.split(':')[0]));
  assert.deepStrictEqual(await order(), [QUESTIONS[0].id, QUESTIONS[1].id]);
  // Moved in place by the page's script, with the keyboard: focus stays on the moved question
  // (on its Up button, now that it is last and cannot go down).
  await page.locator('#questions li').first().locator('button[value^="down:"]').focus();
  await page.keyboard.press('Enter');
  assert.deepStrictEqual(await order(), [QUESTIONS[1].id, QUESTIONS[0].id]);
  assert.ok(await page.locator('#unsaved').isVisible());
  const focused = () => page.evaluate(() => {
    const button = document.activeElement;
    const row = button?.closest('li.paper-question');
    return row ? { button: button.value, pin: row.querySelector('input[name=pin]').value.split(':')[0] } : null;
  });
  assert.deepStrictEqual(await focused(), { button: 'up:1', pin: QUESTIONS[0].id });
  // Dragged with the mouse: the first question onto the lower half of the second goes after it,
  // the second onto the upper half of the first goes before it; the buttons follow the order.
  const rows = page.locator('#questions li.paper-question');
  const lower = async (row) => ({ x: 40, y: (await row.boundingBox()).height * 0.8 });
  await rows.nth(0).locator('.q-title').dragTo(rows.nth(1), { targetPosition: await lower(rows.nth(1)) });
  assert.deepStrictEqual(await order(), [QUESTIONS[0].id, QUESTIONS[1].id]);
  assert.match(await page.textContent('#unsaved'), /is now question 2/);
  await rows.nth(1).locator('.q-title').dragTo(rows.nth(0), { targetPosition: { x: 40, y: 4 } });
  assert.deepStrictEqual(await order(), [QUESTIONS[1].id, QUESTIONS[0].id]);
  assert.deepStrictEqual(await rows.evaluateAll((lis) => lis.map((li) => [...li.querySelectorAll('button[name=action]')]
    .map((b) => `${b.value}${b.disabled ? ' disabled' : ''}`))), [['up:0 disabled', 'down:0', 'remove:0'], ['up:1', 'down:1 disabled', 'remove:1']]);
  assert.equal(await page.locator('#questions .drop-before, #questions .drop-after, #questions .dragged').count(), 0);
  await page.fill('#title', 'Year 13 mock: functions and numerical methods');
  await audit('paper-builder');
  await page.locator('button[value=save]').first().click();
  await page.waitForURL(/saved=3/);
  assert.match(await page.textContent('#notice'), /Saved as revision 3/);
  assert.deepStrictEqual(await order(), [QUESTIONS[1].id, QUESTIONS[0].id]);
  await page.check('#grade-guide');
  await page.selectOption('#writing-space', '1-page');
  await page.locator('button[value=save]').first().click();
  await page.waitForURL(/saved=4/);
  await audit('paper-saved');
  await page.click('nav >> text=Papers');
  await page.waitForSelector('#papers');
  assert.match(await page.textContent('#papers'), /Year 13 mock/);
  await audit('papers');
  assert.deepStrictEqual(takeProblems(), []);
});

test('a class is printed from a pasted roster: a bad line is named, then fixed', async () => {
  await page.goto(`${baseUrl}${state.paperPath}/revisions/4`);
  await page.fill('#roster', ROSTER_BAD);
  await page.fill('#set-title', '13M mock');
  await page.click('#print button[type=submit]');
  await page.waitForSelector('#print-problems');
  const said = await page.textContent('#print-problems');
  assert.match(said, /Line 4/);
  assert.match(said, /3 columns/);
  await audit('roster-refused');
  await page.fill('#roster', ROSTER);
  await page.click('#print button[type=submit]');
  await page.waitForURL(/\/app\/class-sets\/[0-9a-f-]{36}$/);
  state.setPath = new URL(page.url()).pathname;
  state.setId = state.setPath.split('/').pop();
  assert.match(await page.textContent('h1'), /13M mock/);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('text=Every copy, to print (PDF)')]);
  state.printPdf = join(output, 'print.pdf');
  await download.saveAs(state.printPdf);
  assert.equal(readFileSync(state.printPdf).subarray(0, 5).toString(), '%PDF-');
  await audit('class-set-made');
  assert.deepStrictEqual(takeProblems(), []);
});

test('a stack of scans made from the print is uploaded in one go and read', { timeout: 8 * 60_000 }, async () => {
  // The paper's recorded layout, for the scan maker, through the API with a key of the account.
  const users = run(EXAMKIT, ['users', 'list']);
  const user = users.split('\n').find((line) => line.includes(EMAIL)).split(/\s+/)[0];
  const key = run(EXAMKIT, ['keys', 'create', '--user', user, '--name', 'loop', '--scopes', 'papers:read,papers:write,marking:read', '--expires', '30d']);
  state.key = key;
  const paperId = state.paperPath.split('/').pop();
  const exported = await fetch(`${baseUrl}/v1/papers/${paperId}/revisions/4/exports`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}',
  });
  assert.equal(exported.status, 200);
  const layout = join(output, 'export.json');
  writeFileSync(layout, await exported.text());
  const read = await fetch(`${baseUrl}/v1/class-sets/${state.setId}`, { headers: { authorization: `Bearer ${key}` } });
  const set = JSON.parse(await read.text());
  assert.equal(read.status, 200, JSON.stringify(set));
  const per = set.classSet.pagesPerCopy;
  state.per = per;
  const scans = join(output, 'scans');
  mkdirSync(scans, { recursive: true });
  // What the students wrote: the scan maker's example answers to the paper's two questions.
  const example = JSON.parse(readFileSync(join(root, 'examples', 'scanmaker', 'answers.example.json'), 'utf8'));
  const answers = join(output, 'answers.json');
  writeFileSync(answers, JSON.stringify(Object.fromEntries(QUESTIONS.map((q) => [q.id, example[q.id]]))));
  const make = (out, first, last, extra = []) => run(SCANMAKER, ['--paper', state.printPdf, '--layout', layout,
    '--answers', answers, '--out', join(scans, out), '--pages', `${first}:${last}`, '--font', FONT, ...extra]);
  // Copy 1 whole, skewed; copy 2 as page images, its first turned upside down, its second's code
  // under an ink blot (a page no one can place but a person), without its last page; copy 1's
  // first page again, as a phone photo.
  assert.ok(per >= 3, `${per} pages a copy: the walk needs a page between the cover and the last`);
  make('copy-1.pdf', 1, per, ['--skew', '1.5', '--seed', '3']);
  const pages2 = join(output, 'copy-2');
  run(SCANMAKER, ['--paper', state.printPdf, '--layout', layout, '--answers', answers, '--out', join(pages2, 'copy-2.jpg'),
    '--pages', `${per + 1}:${2 * per}`, '--font', FONT, '--rotate', '1:180', '--blot-code', '2', '--seed', '4']);
  mkdirSync(pages2, { recursive: true });
  for (const name of readdirSync(pages2).sort().slice(0, per - 1)) {
    writeFileSync(join(scans, name), readFileSync(join(pages2, name)));
  }
  const photo = join(output, 'photo');
  run(SCANMAKER, ['--paper', state.printPdf, '--layout', layout, '--answers', answers, '--out', join(photo, 'again.jpg'),
    '--pages', `1:${per}`, '--font', FONT, '--photo', '--seed', '5']);
  writeFileSync(join(scans, 'again-1.jpg'), readFileSync(join(photo, 'again-1.jpg')));
  // A page of another print: the paper's own question paper, not this set's run.
  const other = await fetch(`${baseUrl}/v1/papers/${paperId}/revisions/4/exports/question-paper`, { headers: { authorization: `Bearer ${key}` } });
  writeFileSync(join(output, 'question-paper.pdf'), Buffer.from(await other.arrayBuffer()));
  const stray = join(output, 'stray');
  run(SCANMAKER, ['--paper', join(output, 'question-paper.pdf'), '--layout', layout, '--answers', answers,
    '--out', join(stray, 'stray.jpg'), '--font', FONT]);
  writeFileSync(join(scans, 'stray-1.jpg'), readFileSync(join(stray, 'stray-1.jpg')));
  const names = readdirSync(scans);
  const files = names.map((name) => join(scans, name));
  // Chosen in the form and sent, but for two files dropped on the form after.
  const dropped = ['again-1.jpg', 'stray-1.jpg'];
  const chosen = files.filter((f) => !dropped.some((d) => f.endsWith(d)));

  await page.goto(baseUrl + state.setPath);
  await page.setInputFiles('#files', chosen);
  await page.click('#upload button[type=submit]');
  const sent = (n) => page.waitForFunction((k) => document.querySelectorAll('#upload-progress li[data-outcome]').length === k, n);
  await sent(chosen.length);
  // Files held over the form: it says it takes them (an outline, with no animation for a teacher
  // who asks for less motion), and they are sent when dropped.
  const transfer = await page.evaluateHandle((given) => {
    const data = new DataTransfer();
    for (const { name, base64 } of given) {
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      data.items.add(new File([bytes], name, { type: 'image/jpeg' }));
    }
    return data;
  }, dropped.map((name) => ({ name, base64: readFileSync(join(scans, name)).toString('base64') })));
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.dispatchEvent('#upload', 'dragenter', { dataTransfer: transfer });
  await page.dispatchEvent('#upload', 'dragover', { dataTransfer: transfer });
  const held = await page.$eval('#upload', (form) => {
    const style = getComputedStyle(form);
    return { dropping: form.classList.contains('dropping'), outline: style.outlineStyle, width: style.outlineWidth,
      transition: style.transitionDuration };
  });
  assert.deepStrictEqual(held, { dropping: true, outline: 'solid', width: '3px', transition: '0s' });
  await page.emulateMedia({ reducedMotion: 'no-preference' });
  await screenshot('files-held-over-the-form');
  await page.dispatchEvent('#upload', 'drop', { dataTransfer: transfer });
  assert.equal(await page.$eval('#upload', (form) => form.classList.contains('dropping')), false);
  await sent(files.length);
  const outcomes = await page.locator('#upload-progress li').allInnerTexts();
  assert.equal(outcomes.filter((o) => /added/.test(o)).length, files.length, outcomes.join('\n'));
  for (const name of dropped) assert.ok(outcomes.some((o) => o.startsWith(`${name}: `)), `${name} sent: ${outcomes.join('\n')}`);
  await audit('stack-uploaded');
  // The page follows the reading without a reload.
  await page.waitForFunction(() => /Every page is read/.test(document.getElementById('stack-state')?.textContent ?? ''),
    null, { timeout: 6 * 60_000, polling: 1000 });
  const counts = await page.textContent('#counts');
  assert.match(counts, /\d/);
  // The blotted page is unknown, the page of the other print not of this set.
  const counted = (name) => page.locator(`#counts tr[data-placement="${name}"] td`).textContent();
  assert.equal(await counted('unknown'), '1');
  assert.equal(await counted('foreign'), '1');
  await page.reload();
  assert.ok(await page.locator('#waiting .stack-page, #nothing-waiting').count() > 0);
  await audit('stack-read');
  assert.deepStrictEqual(takeProblems(), []);
});

test('the stack is settled, a name confirmed, the class marked, reviewed and returned', { timeout: 12 * 60_000 }, async () => {
  await page.goto(baseUrl + state.setPath);
  // Two scans of copy 1's first page: the flat scan is kept, the photo set aside.
  const readAgain = () => page.waitForFunction(() => /Every page is read/.test(document.getElementById('stack-state')?.textContent ?? ''),
    null, { timeout: 6 * 60_000, polling: 1000 });
  await page.locator('#waiting .stack-page', { hasText: 'copy-1.pdf' }).locator('button', { hasText: 'Use this scan' }).click();
  await page.waitForURL(/saved=/);
  assert.match(await page.textContent('#saved'), /Saved/);
  // A decision reads the stack again; the page follows it.
  await readAgain();
  // The page whose code is blotted out, placed by hand where it belongs: copy 2's second page.
  const unknown = page.locator('#waiting .stack-page[data-placement="unknown"]', { hasText: 'copy-2-2.jpg' });
  await unknown.locator('input[name=copy]').fill('2');
  await unknown.locator('input[name=copyPage]').fill('2');
  await unknown.locator('button', { hasText: 'Place the page' }).click();
  await page.waitForURL(/saved=/);
  assert.match(await page.textContent('#saved'), /Saved/);
  await readAgain();
  assert.match(await page.locator('.stack-page', { hasText: 'copy-2-2.jpg' }).innerText(), /Placed by hand as copy 0*2 page 2/);
  // Copy 2's last page is still missing, and said to be.
  assert.equal(await page.textContent('tr[data-copy="2"] td[data-state]'), `Incomplete: missing page ${state.per}`);
  // Who wrote copy 1, confirmed in one step.
  await page.selectOption('#student-1', '1');
  await page.locator('tr[data-copy="1"] button', { hasText: 'Set student' }).click();
  await page.waitForURL(/saved=/);
  assert.equal(await page.getAttribute('tr[data-copy="1"] td[data-writer]', 'data-writer'), 'confirmed');
  await audit('stack-settled');
  await page.click('#start-marking');
  await page.waitForURL(/started=/);
  assert.match(await page.textContent('#saved'), /Marking started: 2 scripts made/);
  // The page follows the marking without a reload until every script is marked.
  await page.waitForFunction(() => document.querySelector('#marking')?.dataset.marking === 'marked',
    null, { timeout: 10 * 60_000, polling: 2000 });
  await audit('class-marked');
  await page.click('#results-link a');
  await page.waitForSelector('#marks-table');
  await audit('results');
  for (const [link, type] of [['#downloads a[href$="markbook.csv"]', 'text/csv'], ['#returned a[href$="returned.pdf?draft=true"]', 'application/pdf']]) {
    const href = await page.getAttribute(link, 'href');
    const response = await withinLimits(() => context.request.get(baseUrl + href));
    assert.equal(response.status(), 200, href);
    assert.ok(response.headers()['content-type'].startsWith(type), `${href}: ${response.headers()['content-type']}`);
  }
  // A question across the class, its requirements' maths typeset.
  const paperId = state.paperPath.split('/').pop();
  await page.goto(`${baseUrl}/app/sets/${paperId}/4`);
  await page.locator('a', { hasText: 'Question 1' }).first().click();
  await page.waitForSelector('li.criterion');
  assert.ok(await page.locator('p.requirement span.math svg').count() > 0, 'requirements typeset');
  const requirements = await page.locator('p.requirement').allInnerTexts();
  assert.ok(requirements.every((r) => !/\$[^$]+\$/.test(r)), requirements.join('\n'));
  await audit('review-across-the-class');
  assert.deepStrictEqual(takeProblems(), []);
});

/** Reloads a page without script until `done` holds of it, or fails after `limitMs`. */
async function reloadUntil(p, done, what, limitMs) {
  const started = Date.now();
  for (;;) {
    if (await done()) return;
    assert.ok(Date.now() - started < limitMs, `${what} within ${limitMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await p.reload();
  }
}

test('with script off every step is reached by plain forms', { timeout: 15 * 60_000 }, async () => {
  const plain = await browser.newContext({ viewport: { width: 1280, height: 900 }, javaScriptEnabled: false, acceptDownloads: true });
  plain.setDefaultTimeout(STEP_LIMIT_MS);
  const p = await plain.newPage();
  const check = (name, docs = false) => audit(`no-script-${name}`, { p, from: plain, docs });
  try {
    await p.goto(`${baseUrl}/app/sign-in`);
    await check('sign-in');
    await p.fill('#email', EMAIL);
    await p.fill('#password', PASSWORD);
    await p.click('button[type=submit]');
    await p.waitForURL(/\/app\/sessions$/);
    // The bank by facet and words, in one plain form.
    await p.click('nav >> text=Bank');
    await p.selectOption('#f-level', 'a-level');
    await p.selectOption('#f-subject', 'maths');
    await p.fill('#f-q', QUESTIONS[1].words);
    await p.click('form.search button[type=submit]');
    await p.waitForSelector('#results li.result');
    assert.ok(await p.locator('#results span.math svg').count() > 0, 'maths as SVG without script');
    await check('bank-search');
    await p.locator(`li.result:has(input[value^="${QUESTIONS[1].id}:"]) button`).click();
    await p.waitForURL(/\/app\/papers\/[0-9a-f-]{36}$/);
    const path = new URL(p.url()).pathname;
    const paperId = path.split('/').pop();
    await p.click('text=Add questions from the bank');
    await p.fill('#f-q', QUESTIONS[0].words);
    await p.click('form.search button[type=submit]');
    await p.locator(`li.result:has(input[value^="${QUESTIONS[0].id}:"]) button`).click();
    await p.goto(baseUrl + path);
    // Moving a question is a round trip that shows the draft unsaved.
    await p.locator('#questions li').nth(1).locator('button[value^="up:"]').click();
    await p.waitForSelector('#unsaved');
    const first = await p.locator('#questions input[name=pin]').first().getAttribute('value');
    assert.ok(first.startsWith(QUESTIONS[0].id), first);
    await check('paper-builder');
    await p.locator('button[value=save]').first().click();
    await p.waitForURL(/saved=3/);
    // Changed and saved again (its pages as they were: the scan maker writes on a copy of the
    // paper's own pages, with no blank back).
    await p.fill('#title', 'Year 13 retake: functions and numerical methods');
    await p.check('#grade-guide');
    await p.locator('button[value=save]').first().click();
    await p.waitForURL(/saved=4/);
    assert.match(await p.textContent('#notice'), /Saved as revision 4/);
    await check('paper-saved');

    // A roster with a bad line, named; then right.
    await p.goto(`${baseUrl}${path}/revisions/4`);
    await p.fill('#roster', ROSTER_BAD);
    await p.fill('#set-title', '13R retake');
    await p.click('#print button[type=submit]');
    await p.waitForSelector('#print-problems');
    assert.match(await p.textContent('#print-problems'), /Line 4/);
    await check('roster-refused');
    await p.fill('#roster', ROSTER);
    await p.click('#print button[type=submit]');
    await p.waitForURL(/\/app\/class-sets\/[0-9a-f-]{36}$/);
    const setPath = new URL(p.url()).pathname;
    await check('class-set-made');

    // The print PDF by its link on the set's page; two copies written and scanned from it, the
    // second's second page with its code blotted out.
    const work = join(output, 'plain');
    mkdirSync(work, { recursive: true });
    const [download] = await Promise.all([p.waitForEvent('download'), p.click('text=Every copy, to print (PDF)')]);
    await download.saveAs(join(work, 'print.pdf'));
    assert.equal(readFileSync(join(work, 'print.pdf')).subarray(0, 5).toString(), '%PDF-');
    const exported = await fetch(`${baseUrl}/v1/papers/${paperId}/revisions/4/exports`, {
      method: 'POST', headers: { authorization: `Bearer ${state.key}`, 'content-type': 'application/json' }, body: '{}',
    });
    assert.equal(exported.status, 200);
    writeFileSync(join(work, 'export.json'), await exported.text());
    // A copy's pages in the print (a paper of an odd number of pages ends on a blank back).
    const read = await fetch(`${baseUrl}/v1/class-sets/${setPath.split('/').pop()}`, { headers: { authorization: `Bearer ${state.key}` } });
    assert.equal(read.status, 200);
    const per = JSON.parse(await read.text()).classSet.pagesPerCopy;
    assert.ok(per >= 2, `${per} pages a copy`);
    const scans = [];
    for (const copy of [1, 2]) {
      const out = join(work, `copy-${copy}.pdf`);
      run(SCANMAKER, ['--paper', join(work, 'print.pdf'), '--layout', join(work, 'export.json'),
        '--answers', join(output, 'answers.json'), '--out', out, '--pages', `${(copy - 1) * per + 1}:${copy * per}`,
        '--font', FONT, '--skew', '1', '--seed', String(10 + copy), ...(copy === 2 ? ['--blot-code', '2'] : [])]);
      scans.push(out);
    }
    const notes = join(work, 'notes.txt');
    writeFileSync(notes, 'not a scan');
    // Several files in one plain form: each outcome on a page of its own.
    await p.setInputFiles('#files', [...scans, notes]);
    await p.click('#upload button[type=submit]');
    await p.waitForSelector('#upload-outcomes');
    const said = (await p.locator('#upload-outcomes li').allInnerTexts()).join('\n');
    assert.match(said, /copy-1\.pdf: added/);
    assert.match(said, /copy-2\.pdf: added/);
    assert.match(said, /notes\.txt: refused, not a PDF or image/);
    await check('upload', true);
    await p.goto(baseUrl + setPath);
    await reloadUntil(p, async () => /Every page is read/.test(await p.textContent('#stack-state')), 'the stack read', 6 * 60_000);
    // The page with no readable code, placed by hand; a name confirmed.
    const unknown = p.locator('#waiting .stack-page[data-placement="unknown"]', { hasText: 'copy-2.pdf' });
    await check('stack-read');
    await unknown.locator('input[name=copy]').fill('2');
    await unknown.locator('input[name=copyPage]').fill('2');
    await unknown.locator('button', { hasText: 'Place the page' }).click();
    await p.waitForURL(/saved=/);
    // A decision reads the stack again.
    await reloadUntil(p, async () => /Every page is read/.test(await p.textContent('#stack-state')), 'the stack read again', 6 * 60_000);
    assert.equal(await p.textContent('tr[data-copy="2"] td[data-state]'), 'Complete');
    await p.selectOption('#student-1', '1');
    await p.locator('tr[data-copy="1"] button', { hasText: 'Set student' }).click();
    await p.waitForURL(/saved=/);
    assert.equal(await p.getAttribute('tr[data-copy="1"] td[data-writer]', 'data-writer'), 'confirmed');
    await check('stack-settled');
    await p.click('#start-marking');
    await p.waitForURL(/started=/);
    await reloadUntil(p, async () => (await p.getAttribute('#marking', 'data-marking')) === 'marked', 'every script marked', 8 * 60_000);
    await check('class-marked');
    await p.click('#results-link a');
    await p.waitForSelector('#marks-table');
    await check('results');
    for (const [link, type] of [['#downloads a[href$="markbook.csv"]', 'text/csv'], ['#returned a[href$="returned.pdf?draft=true"]', 'application/pdf']]) {
      const href = await p.getAttribute(link, 'href');
      const response = await withinLimits(() => p.request.get(baseUrl + href));
      assert.equal(response.status(), 200, href);
      assert.ok(response.headers()['content-type'].startsWith(type), `${href}: ${response.headers()['content-type']}`);
    }
    // A decision on a question, by the plain form, its maths typeset without script.
    await p.goto(`${baseUrl}/app/sets/${paperId}/4`);
    await p.locator('a', { hasText: 'Question 1' }).first().click();
    await p.waitForSelector('li.criterion');
    assert.ok(await p.locator('p.requirement span.math svg').count() > 0, 'requirements typeset without script');
    await check('review');
    await sendWithinLimits(p, async () => {
      const criterion = p.locator('li.criterion').first();
      await criterion.locator('input[name=reason]').fill('Checked by hand');
      await criterion.locator('button[value=withhold]').click();
    });
    await p.waitForSelector('#saved');
    assert.match(await p.textContent('#saved'), /Saved/);
    await check('decided', true);
  } finally {
    await plain.close();
  }
});
