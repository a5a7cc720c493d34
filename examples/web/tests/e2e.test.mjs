// End-to-end test of the pre-check page in Debian's Chromium, driven by playwright-core: the page is
// assembled (sources + the examkit browser package + pdf.js), served from 127.0.0.1 on a random port,
// and used as a person would: choose a submission and scans, read the outcome, follow errors into
// the document, and see the evidence boxes on the pages, including a page with /Rotate 90.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

import { assemble } from '../assemble.mjs';
import { serve } from '../serve.mjs';
import { makePdf } from './pdf.mjs';
import { makePng } from './png.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const webDir = join(here, '..');
const output = join(webDir, 'test-output');
const fixtures = join(here, 'fixtures');
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

const valid = JSON.parse(readFileSync(join(fixtures, 'valid.json'), 'utf8'));
const assets = JSON.parse(readFileSync(join(fixtures, 'assets.json'), 'utf8'));
const [WORK, SCHEME] = assets.map((a) => a.id);

/** Evidence boxes of the valid fixture on each work page. */
function boxesOnPage(page) {
  const boxes = [];
  for (const decision of valid.questions[0].decisions) {
    const all = [...decision.evidence, ...decision.conditionChecks.flatMap((c) => c.evidence ?? [])];
    for (const evidence of all) if (evidence.pageId === `${WORK}:p${page}`) boxes.push(evidence.box);
  }
  return boxes;
}

let server;
let baseUrl;
let browser;
let files;

before(async () => {
  mkdirSync(output, { recursive: true });
  const site = assemble(join(output, 'site'));
  ({ server, url: baseUrl } = await serve(site));
  // The scans: a two-page work PDF (page 2 rotated 90°, landscape as displayed) with dark marks
  // under every evidence box, and a one-page scheme PDF.
  const workPdf = join(output, `${WORK}.pdf`); // named by its asset: matched by name
  writeFileSync(workPdf, makePdf([
    { width: 612, height: 792, rotate: 0, boxes: boxesOnPage(1) },
    { width: 612, height: 792, rotate: 90, boxes: boxesOnPage(2) },
  ]));
  const schemePdf = join(output, 'mark-scheme.pdf'); // matched by order
  writeFileSync(schemePdf, makePdf([{ width: 595, height: 842, rotate: 0, boxes: [] }]));
  const schemePng = join(output, 'mark-scheme.png'); // an image is one page
  writeFileSync(schemePng, makePng(420, 594, [250, 250, 245]));
  files = { workPdf, schemePdf, schemePng };
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
});

after(async () => {
  await browser?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve()));
});

/** A fresh page at laptop size that records console errors, page errors and every request. */
async function openPage() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const problems = [];
  const requests = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()}`));
  page.on('request', (request) => requests.push(request.url()));
  await page.goto(baseUrl);
  await page.waitForSelector('#app[data-state="ready"]');
  return { page, context, problems, requests };
}

/** Waits until the page has finished validating and drawing. */
async function settled(page) {
  await page.waitForFunction(() => document.getElementById('app').dataset.state === 'ready' && !document.getElementById('results').hidden);
}

/** Checks the rendered canvas under each drawn box: dark at the box centre, white in a far corner. */
async function pixelsUnderBoxes(page, asset, pageNumber) {
  return page.evaluate(({ asset, pageNumber }) => {
    const figure = document.querySelector(`.page[data-asset="${asset}"][data-page="${pageNumber}"]`);
    const canvas = figure.querySelector('canvas');
    const context = canvas.getContext('2d');
    const luminance = (fx, fy) => {
      const [r, g, b] = context.getImageData(Math.floor(fx * canvas.width), Math.floor(fy * canvas.height), 1, 1).data;
      return (r + g + b) / 3;
    };
    const centres = [...figure.querySelectorAll('.evidence-box')].map((box) => {
      const x = parseFloat(box.style.left) / 100 + parseFloat(box.style.width) / 200;
      const y = parseFloat(box.style.top) / 100 + parseFloat(box.style.height) / 200;
      return luminance(x, y);
    });
    return { width: canvas.width, height: canvas.height, centres, corner: luminance(0.03, 0.97) };
  }, { asset, pageNumber });
}

test('a valid submission with its scans: scores, flags and every evidence box on its page', async () => {
  const { page, context, problems, requests } = await openPage();
  try {
    await page.setInputFiles('#submission', join(fixtures, 'valid.json'));
    await page.setInputFiles('#scans', [files.workPdf, files.schemePdf]);
    await settled(page);
    await page.waitForFunction(() => document.querySelectorAll('#pages .page').length === 3);

    // Files matched: the work PDF by its name, the scheme PDF by order; so assets are checked.
    assert.equal(await page.inputValue(`select[data-asset="${WORK}"]:not([id^="kind"])`), '0');
    assert.equal(await page.inputValue(`select[data-asset="${SCHEME}"]:not([id^="kind"])`), '1');
    assert.equal(await page.inputValue(`#kind-1`), 'scheme');
    assert.match(await page.textContent('#summary'), /checked against your files/);

    // The outcome.
    const verdict = await page.$eval('#summary .verdict', (e) => ({ ...e.dataset, text: e.textContent }));
    assert.deepStrictEqual({ valid: verdict.valid, status: verdict.status }, { valid: 'true', status: 'needs_review' });
    assert.deepStrictEqual(await page.$eval('#summary .total', (e) => ({ ...e.dataset })), { awarded: '3', possible: '4', max: '4' });
    assert.match(await page.textContent('#summary .total'), /Score: 3–4 of 4/);
    assert.equal(await page.isHidden('#errors-block'), true);

    const question = await page.$eval('.question[data-label="1"]', (e) => ({ ...e.dataset, score: e.querySelector('.score').textContent }));
    assert.deepStrictEqual(question, { label: '1', status: 'needs_review', awarded: '3', possible: '4', max: '4', score: 'Score 3–4 of 4 · parts: a 2 of 2, b 1–2 of 2' });
    const criteria = await page.$$eval('.question[data-label="1"] tbody tr', (rows) =>
      rows.map((r) => [...r.children].map((c) => c.textContent)));
    assert.deepStrictEqual(criteria, [
      ['q1a-M1', 'M1', 'awarded', 'awarded', '—'],
      ['q1a-A1', 'A1', 'awarded', 'awarded', '—'],
      ['q1b-M1', 'M1', 'awarded', 'awarded', '—'],
      ['q1b-A1', 'A1', 'uncertain', 'uncertain', 'uncertain_decision'],
    ]);
    const flags = await page.$$eval('.flags li', (items) => items.map((i) => [i.dataset.code, i.dataset.path]));
    assert.deepStrictEqual(flags, [['uncertain_decision', '/questions/0/decisions/3/outcome']]);

    // A review flag leads to its place in the document.
    await page.click('.flags li button');
    assert.equal(await page.$eval('#document .highlight', (e) => e.dataset.pointer), '/questions/0/decisions/3/outcome');
    assert.equal(await page.$eval('#document .highlight', (e) => e.textContent), '"uncertain"');

    // Pages: work p1 (2 boxes), work p2 rotated 90° (3 boxes), scheme p1 (none).
    const pages = await page.$$eval('#pages .page', (figures) => figures.map((f) => ({ ...f.dataset, drawn: f.querySelectorAll('.evidence-box').length })));
    assert.deepStrictEqual(pages, [
      { asset: WORK, page: '1', rotation: '0', boxes: '2', drawn: 2 },
      { asset: WORK, page: '2', rotation: '90', boxes: '3', drawn: 3 },
      { asset: SCHEME, page: '1', rotation: '0', boxes: '0', drawn: 0 },
    ]);
    assert.equal(await page.locator('.evidence-box').count(), 5);
    const labels = await page.$$eval('.evidence-box .evidence-label', (e) => e.map((l) => l.textContent));
    assert.deepStrictEqual(labels, ['q1a-M1 · awarded', 'q1a-A1 · awarded', 'q1b-M1 · awarded', 'q1b-M1 · awarded', 'q1b-A1 · uncertain']);

    // Rotation honoured: page 2 is displayed landscape, and under every box the PDF's mark is dark.
    const first = await pixelsUnderBoxes(page, WORK, 1);
    assert.ok(first.height > first.width, `page 1 should be portrait: ${first.width}×${first.height}`);
    const rotated = await pixelsUnderBoxes(page, WORK, 2);
    assert.ok(rotated.width > rotated.height, `page 2 should be displayed landscape: ${rotated.width}×${rotated.height}`);
    for (const { centres, corner } of [first, rotated]) {
      assert.ok(centres.every((l) => l < 80), `a box is not over its mark: luminance ${centres}`);
      assert.ok(corner > 240, `the page corner should be white: ${corner}`);
    }

    // Readable at laptop width: nothing wider than the window.
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), true);
    await page.screenshot({ path: join(output, 'valid.png'), fullPage: true });

    assert.deepStrictEqual(problems, []);
    assert.deepStrictEqual(requests.filter((url) => !url.startsWith(baseUrl)), [], 'a request left the page origin');
  } finally {
    await context.close();
  }
});

test('an invalid submission: errors with code, path and message, each leading to its place', async () => {
  const { page, context, problems } = await openPage();
  try {
    // Scans first this time, and the scheme as an image.
    await page.setInputFiles('#scans', [files.workPdf, files.schemePng]);
    await page.setInputFiles('#submission', join(fixtures, 'invalid.json'));
    await settled(page);
    await page.waitForFunction(() => document.querySelectorAll('#pages .page').length === 3);

    assert.equal(await page.$eval('#summary .verdict', (e) => e.dataset.valid), 'false');
    assert.match(await page.textContent('#summary .verdict'), /Invalid · 3 errors/);
    const errors = await page.$$eval('#errors li', (items) => items.map((i) => ({
      code: i.querySelector('.code').textContent,
      path: i.querySelector('.path').textContent,
      message: i.querySelector('.message').textContent.length > 0,
    })));
    assert.deepStrictEqual(errors, [
      { code: 'required', path: '/source/markedAt', message: true },
      { code: 'unknown_dependency', path: '/questions/0/rubric/criteria/3/dependsOn/0', message: true },
      { code: 'box_out_of_bounds', path: '/questions/0/decisions/1/evidence/0/box/width', message: true },
    ]);
    assert.equal(await page.locator('.question').count(), 0);

    // Selecting an error highlights the pointed value…
    await page.click('#errors li[data-code="box_out_of_bounds"] button');
    const highlighted = await page.$eval('#document .highlight', (e) => ({ pointer: e.dataset.pointer, text: e.textContent, missing: e.classList.contains('missing') }));
    assert.deepStrictEqual(highlighted, { pointer: '/questions/0/decisions/1/evidence/0/box/width', text: '0.95', missing: false });
    assert.ok(await page.$eval('#document .highlight', (e) => {
      const view = document.getElementById('document').getBoundingClientRect();
      const box = e.getBoundingClientRect();
      return box.top >= view.top && box.bottom <= view.bottom;
    }), 'the highlighted value is not scrolled into view');
    // …and a missing field highlights the object it is missing from.
    await page.click('#errors li[data-code="required"] button');
    assert.deepStrictEqual(
      await page.$eval('#document .highlight', (e) => ({ pointer: e.dataset.pointer, missing: e.classList.contains('missing') })),
      { pointer: '/source', missing: true },
    );
    assert.match(await page.textContent('#pointer-status'), /\/source\/markedAt is missing/);

    // Boxes are still drawn, labelled with the submitted outcomes; the scheme image is its one page.
    assert.equal(await page.locator('.evidence-box').count(), 5);
    assert.equal(await page.$eval(`.page[data-asset="${SCHEME}"] .sheet`, (e) => e.firstElementChild.tagName), 'IMG');
    assert.match(await page.textContent(`select[data-asset="${SCHEME}"]:not([id^="kind"])`), /mark-scheme\.png \(1 page\)/);
    await page.screenshot({ path: join(output, 'invalid.png'), fullPage: true });
    assert.deepStrictEqual(problems, []);
  } finally {
    await context.close();
  }
});

test('keyboard: every control is reachable and an error can be followed with Enter', async () => {
  const { page, context, problems } = await openPage();
  try {
    await page.setInputFiles('#submission', join(fixtures, 'invalid.json'));
    await settled(page);
    // Without scans, nothing is checked against files and no page is shown.
    assert.equal(await page.isHidden('#pages-block'), true);
    assert.match(await page.textContent('#summary'), /not checked against files/);

    await page.focus('#submission');
    const reached = [];
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      const active = await page.evaluate(() => {
        const e = document.activeElement;
        return { id: e.id, tag: e.tagName, code: e.closest('li')?.dataset.code ?? null, outline: getComputedStyle(e).outlineStyle };
      });
      reached.push(active);
      if (active.code === 'unknown_dependency') break;
    }
    const target = reached.at(-1);
    assert.equal(target.code, 'unknown_dependency', `Tab order: ${JSON.stringify(reached)}`);
    assert.notEqual(target.outline, 'none', 'focus is not visible');
    assert.ok(reached.some((r) => r.id === 'scans'), 'the scans input is not reachable');
    assert.ok(reached.some((r) => r.id === 'run'), 'the Validate button is not reachable');
    await page.keyboard.press('Enter');
    assert.equal(await page.$eval('#document .highlight', (e) => e.dataset.pointer), '/questions/0/rubric/criteria/3/dependsOn/0');

    // Every form control has a label.
    const unlabelled = await page.$$eval('input, select', (controls) => controls.filter((c) => c.labels.length === 0).map((c) => c.id));
    assert.deepStrictEqual(unlabelled, []);
    assert.deepStrictEqual(problems, []);
  } finally {
    await context.close();
  }
});
