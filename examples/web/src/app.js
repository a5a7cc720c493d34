// Pre-checks a service-marking-import-v1 submission in the browser with the examkit WebAssembly
// package: errors with their place in the document, scores and flags per question, and the evidence
// boxes drawn on the chosen scans. No file leaves the page.
import init, { validateBytes, SCHEMA_VERSION } from './vendor/examkit/index.js';
import { parentPointer, renderJson, resolvePointer } from './json-view.js';
import { closeScan, drawBox, openScan, renderPage } from './pages.js';

/** Values rendered in the document view before it switches to showing the selected part only. */
const DOCUMENT_VIEW_LIMIT = 50_000;
/** Width of a rendered page, in CSS pixels. */
const PAGE_WIDTH = 560;
const PAGE_ID = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}):p([1-9][0-9]{0,4})$/;

const $ = (id) => document.getElementById(id);
const el = (tag, props = {}, ...children) => {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === 'className') element.className = value;
    else if (key === 'dataset') Object.assign(element.dataset, value);
    else if (key === 'text') element.textContent = value;
    else element.setAttribute(key, value);
  }
  element.append(...children.filter((c) => c != null));
  return element;
};

const state = {
  /** The submission's bytes, exactly as chosen. */
  bytes: null,
  /** The submission parsed by the browser (null when it is not JSON the browser reads). */
  doc: null,
  /** The submission as text, for showing it. */
  text: '',
  /** Opened scans, in the order chosen. */
  scans: [],
  /** Asset uuid → { kind, scanIndex (-1: none) }, in order of first appearance. */
  mapping: new Map(),
  /** Pointer → element of the document view. */
  view: { elements: new Map(), cut: false },
  /** Increases with each refresh, so that a slower earlier run stops drawing. */
  generation: 0,
};

function setStatus(text) {
  $('status').textContent = text;
}

function showProblem(text) {
  $('problem').textContent = text;
  $('problem').hidden = !text;
}

function setBusy(busy) {
  const app = $('app');
  app.dataset.state = busy ? 'busy' : 'ready';
  app.setAttribute('aria-busy', String(busy));
}

// --- what the document refers to -------------------------------------------------------------

const list = (value) => (Array.isArray(value) ? value : []);
const object = (value) => (value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {});

/** Assets named in pageSelections, in order of first appearance, with the role the document implies. */
function documentAssets(doc) {
  const assets = new Map();
  const note = (id, role) => {
    if (!assets.has(id)) assets.set(id, { work: false, scheme: false, pages: new Set() });
    if (role) assets.get(id)[role] = true;
  };
  for (const question of list(doc?.questions)) {
    for (const [id, pages] of Object.entries(object(question?.pageSelections))) {
      note(id);
      for (const page of list(pages)) if (Number.isInteger(page) && page >= 1) assets.get(id).pages.add(page);
    }
    const cite = (pageId, role) => {
      const match = typeof pageId === 'string' ? PAGE_ID.exec(pageId) : null;
      if (match && assets.has(match[1])) note(match[1], role);
    };
    for (const criterion of list(object(question?.rubric).criteria)) {
      for (const pageId of list(criterion?.sourcePageIds)) cite(pageId, 'scheme');
    }
    for (const item of evidenceOf(question, 0)) cite(item.pageId, 'work');
  }
  return assets;
}

/** Every evidence item of a question: decisions' and condition checks'. */
function evidenceOf(question, questionIndex) {
  const items = [];
  list(question?.decisions).forEach((decision, d) => {
    const base = { criterionId: decision?.criterionId, submitted: decision?.outcome };
    list(decision?.evidence).forEach((evidence, e) => {
      items.push({ ...base, ...object(evidence), path: `/questions/${questionIndex}/decisions/${d}/evidence/${e}` });
    });
    list(decision?.conditionChecks).forEach((check, c) => {
      list(check?.evidence).forEach((evidence, e) => {
        items.push({
          ...base,
          ...object(evidence),
          condition: { index: check?.index, result: check?.result },
          path: `/questions/${questionIndex}/decisions/${d}/conditionChecks/${c}/evidence/${e}`,
        });
      });
    });
  });
  return items;
}

// --- asset ↔ file mapping --------------------------------------------------------------------

/** The asset a file name declares (`<uuid>.pdf`, `<uuid>.png`, …), if any. */
const uuidOfName = (name) => /^([0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})\.[a-z0-9]+$/i.exec(name)?.[1]?.toLowerCase();

/** Matches files to assets: by file name first, then the remaining files in order. */
function defaultMapping(assets, scans) {
  const mapping = new Map();
  const used = new Set();
  for (const [id, info] of assets) {
    const byName = scans.findIndex((scan) => uuidOfName(scan.file.name) === id);
    if (byName >= 0) used.add(byName);
    mapping.set(id, { kind: info.scheme && !info.work ? 'scheme' : 'work', scanIndex: byName });
  }
  for (const entry of mapping.values()) {
    if (entry.scanIndex >= 0) continue;
    const next = scans.findIndex((scan, index) => !used.has(index) && !uuidOfName(scan.file.name));
    if (next < 0) break;
    used.add(next);
    entry.scanIndex = next;
  }
  return mapping;
}

function renderMapping(assets) {
  const rows = $('mapping-rows');
  rows.replaceChildren();
  $('mapping').hidden = assets.size === 0 || state.scans.length === 0;
  let index = 0;
  for (const [id, info] of assets) {
    const entry = state.mapping.get(id);
    const fileSelect = el('select', { id: `file-${index}`, dataset: { asset: id } });
    fileSelect.append(el('option', { value: '-1', text: '(no file)' }));
    state.scans.forEach((scan, i) => {
      const pages = scan.pageCount === 1 ? '1 page' : `${scan.pageCount} pages`;
      fileSelect.append(el('option', { value: String(i), text: `${scan.file.name} (${pages})` }));
    });
    fileSelect.value = String(entry.scanIndex);
    fileSelect.addEventListener('change', () => {
      entry.scanIndex = Number(fileSelect.value);
      updateMappingStatus();
      refresh();
    });
    const kindSelect = el('select', { id: `kind-${index}`, dataset: { asset: id } },
      el('option', { value: 'work', text: 'work (student scan)' }),
      el('option', { value: 'scheme', text: 'scheme (mark scheme)' }));
    kindSelect.value = entry.kind;
    kindSelect.addEventListener('change', () => {
      entry.kind = kindSelect.value;
      refresh();
    });
    const implied = info.work && info.scheme ? 'cited as both work and scheme' : info.work ? 'cited as work evidence' : info.scheme ? 'cited as a scheme source' : 'not cited';
    rows.append(el('tr', {},
      el('th', { scope: 'row' }, el('label', { for: `file-${index}` }, el('code', { text: id }))),
      el('td', {}, el('label', { for: `kind-${index}`, className: 'visually-hidden', text: `Role of asset ${id}` }), kindSelect,
        el('span', { className: 'help', text: ` ${implied}` })),
      el('td', {}, fileSelect)));
    index += 1;
  }
}

/** The assets list for the engine, when every asset of the document has a file; else null. */
function engineAssets() {
  if (state.mapping.size === 0) return null;
  const assets = [];
  for (const [id, entry] of state.mapping) {
    if (entry.scanIndex < 0) return null;
    assets.push({ id, kind: entry.kind, pageCount: state.scans[entry.scanIndex].pageCount });
  }
  return assets;
}

// --- outcome ---------------------------------------------------------------------------------

const describePath = (path) => (path === '' ? '(the whole document)' : path);

function scoreText(score) {
  const range = score.awarded === score.possible ? `${score.awarded}` : `${score.awarded}–${score.possible}`;
  return `${range} of ${score.max}`;
}

function pointerButton(path, ...content) {
  const button = el('button', { type: 'button', className: 'pointer', dataset: { path } }, ...content);
  button.addEventListener('click', () => {
    for (const other of document.querySelectorAll('button.pointer[aria-current]')) other.removeAttribute('aria-current');
    button.setAttribute('aria-current', 'true');
    showPointer(path);
  });
  return button;
}

function renderOutcome(outcome, assets) {
  const summary = $('summary');
  const checked = assets
    ? 'Page references, page numbers and roles were checked against your files.'
    : 'Page numbers and roles were not checked against files (match every asset to a file to check them).';
  $('errors-block').hidden = outcome.valid;
  $('questions').replaceChildren();
  $('errors').replaceChildren();
  if (!outcome.valid) {
    const count = outcome.errors.length;
    summary.replaceChildren(
      el('p', { className: 'verdict invalid', dataset: { valid: 'false' } },
        el('strong', { text: 'Invalid' }), ` · ${count} ${count === 1 ? 'error' : 'errors'}${outcome.truncated ? ' (list truncated)' : ''}`),
      el('p', { className: 'help', text: checked }));
    $('truncated').hidden = !outcome.truncated;
    for (const error of outcome.errors) {
      $('errors').append(el('li', { dataset: { code: error.code, path: error.path } },
        pointerButton(error.path,
          el('span', { className: 'code', text: error.code }),
          el('code', { className: 'path', text: describePath(error.path) }),
          el('span', { className: 'message', text: error.message }))));
    }
    return;
  }
  summary.replaceChildren(
    el('p', { className: `verdict ${outcome.status}`, dataset: { valid: 'true', status: outcome.status } },
      el('strong', { text: 'Valid' }), ` · ${outcome.status === 'completed' ? 'completed' : 'needs review'}`),
    el('p', { className: 'total', dataset: { awarded: outcome.score.awarded, possible: outcome.score.possible, max: outcome.score.max } },
      `Score: ${scoreText(outcome.score)} marks (awarded–possible of maximum; “possible” counts uncertain marks and is never a confirmed score)`),
    el('p', { className: 'help', text: checked }));

  outcome.questions.forEach((question, q) => {
    const section = el('section', {
      className: 'question',
      'aria-labelledby': `question-${q}`,
      dataset: { label: question.label, status: question.status, awarded: question.score.awarded, possible: question.score.possible, max: question.score.max },
    });
    section.append(
      el('h3', { id: `question-${q}` }, `Question ${question.label} `,
        el('span', { className: `badge ${question.status}`, text: question.status === 'completed' ? 'completed' : 'needs review' })),
      el('p', { className: 'score', text: `Score ${scoreText(question.score)}` + (question.parts.length > 1 ? ` · parts: ${question.parts.map((p) => `${p.id} ${scoreText(p.score)}`).join(', ')}` : '') }));

    const rows = question.criteria.map((criterion) => el('tr', { dataset: { criterion: criterion.id, effective: criterion.effective } },
      el('th', { scope: 'row' }, el('code', { text: criterion.id })),
      el('td', { text: criterion.code }),
      el('td', {}, el('span', { className: `outcome ${criterion.submitted}`, text: criterion.submitted })),
      el('td', {}, el('span', { className: `outcome ${criterion.effective}`, text: criterion.effective })),
      el('td', { text: criterion.flags.join(', ') || '—' })));
    section.append(el('table', { className: 'criteria' },
      el('caption', { className: 'visually-hidden', text: `Criteria of question ${question.label}` }),
      el('thead', {}, el('tr', {}, ...['Criterion', 'Code', 'Submitted', 'Effective', 'Flags'].map((h) => el('th', { scope: 'col', text: h })))),
      el('tbody', {}, ...rows)));

    if (question.reviewFlags.length > 0) {
      section.append(el('h4', { text: 'Review flags' }), el('ul', { className: 'flags' },
        ...question.reviewFlags.map((flag) => el('li', { dataset: { code: flag.code, path: flag.path } },
          pointerButton(flag.path,
            el('span', { className: 'code', text: flag.code }),
            el('code', { className: 'path', text: describePath(flag.path) }),
            el('span', { className: 'message', text: flag.message }))))));
    }
    $('questions').append(section);
  });
}

// --- document view ---------------------------------------------------------------------------

function renderDocument() {
  const view = $('document');
  if (state.doc === undefined) {
    view.textContent = state.text;
    state.view = { elements: new Map(), cut: false };
    $('pointer-status').textContent = 'The document is not JSON the browser can read, so it is shown as plain text.';
    return;
  }
  state.view = renderJson(view, state.doc, { limit: DOCUMENT_VIEW_LIMIT });
  $('pointer-status').textContent = state.view.cut
    ? 'The document is large: the first part is shown; selecting an error shows the part around it.'
    : 'Select an error or a review flag to highlight it here.';
}

/** Highlights the value a pointer names; a missing member highlights the object it is missing from. */
function showPointer(path) {
  const view = $('document');
  if (state.doc === undefined) {
    $('pointer-status').textContent = `${describePath(path)}: the document is not JSON the browser can read, so this place cannot be shown.`;
    return;
  }
  let target = path;
  while (resolvePointer(state.doc, target) === undefined && target !== '') target = parentPointer(target);
  let element = state.view.elements.get(target);
  if (!element) {
    // Outside the rendered part of a large document: show the container around it.
    const base = target === '' ? '' : parentPointer(target);
    state.view = renderJson(view, resolvePointer(state.doc, base), { base, limit: DOCUMENT_VIEW_LIMIT });
    element = state.view.elements.get(target);
  }
  for (const old of view.querySelectorAll('.highlight')) old.classList.remove('highlight', 'missing');
  if (!element) return;
  element.classList.add('highlight');
  if (target !== path) element.classList.add('missing');
  element.scrollIntoView({ block: 'center', inline: 'nearest' });
  $('pointer-status').textContent = target === path
    ? `Showing ${describePath(path)}.`
    : `${path} is missing; showing the ${target === '' ? 'document' : `value at ${target}`} it is missing from.`;
}

// --- pages -----------------------------------------------------------------------------------

/** Evidence label outcome: the effective outcome of a valid document, else the submitted one. */
function outcomeLookup(outcome) {
  const effective = new Map();
  if (outcome.valid) {
    for (const question of outcome.questions) {
      for (const criterion of question.criteria) effective.set(criterion.id, criterion.effective);
    }
  }
  return (item) => effective.get(item.criterionId) ?? (['awarded', 'withheld', 'uncertain'].includes(item.submitted) ? item.submitted : 'unknown');
}

async function renderPages(outcome, generation) {
  const container = $('pages');
  container.replaceChildren();
  const assets = documentAssets(state.doc);
  const mapped = [...state.mapping].filter(([, entry]) => entry.scanIndex >= 0);
  $('pages-block').hidden = mapped.length === 0;
  if (mapped.length === 0) return { boxes: 0, unplaced: 0 };

  const outcomeOf = outcomeLookup(outcome);
  const evidence = list(state.doc?.questions).flatMap((question, q) => evidenceOf(question, q));
  let boxes = 0;
  let unplaced = 0;
  const placed = new Set();

  for (const [id, entry] of mapped) {
    const scan = state.scans[entry.scanIndex];
    const cited = evidence.filter((item) => typeof item.pageId === 'string' && item.pageId.startsWith(`${id}:p`));
    const pages = new Set(assets.get(id)?.pages ?? []);
    for (const item of cited) pages.add(Number(PAGE_ID.exec(item.pageId)?.[2]));
    const numbers = [...pages].filter((n) => Number.isInteger(n) && n >= 1 && n <= scan.pageCount).sort((a, b) => a - b);

    for (const number of numbers) {
      const { media, rotation } = await renderPage(scan, number, PAGE_WIDTH);
      if (generation !== state.generation) return null;
      const overlay = el('div', { className: 'overlay' });
      const onPage = cited.filter((item) => item.pageId === `${id}:p${number}`);
      const items = [];
      for (const item of onPage) {
        const box = object(item.box);
        if (![box.x, box.y, box.width, box.height].every(Number.isFinite)) continue;
        const outcomeName = outcomeOf(item);
        const condition = item.condition ? ` (condition ${Number(item.condition.index) + 1}: ${item.condition.result})` : '';
        const label = `${item.criterionId} · ${outcomeName}`;
        drawBox(overlay, { box, label, outcome: outcomeName, detail: `${label}${condition}: “${item.quote ?? ''}”` });
        placed.add(item.path);
        boxes += 1;
        items.push(el('li', {}, pointerButton(item.path,
          el('span', { className: `outcome ${outcomeName}`, text: label }),
          el('span', { className: 'message', text: `${condition} “${item.quote ?? ''}”` }))));
      }
      const rotated = rotation ? `, shown rotated ${rotation}° as the PDF displays it` : '';
      container.append(el('figure', { className: 'page', dataset: { asset: id, page: number, rotation, boxes: onPage.length } },
        el('div', { className: 'sheet' }, media, overlay),
        el('figcaption', {},
          el('strong', { text: `${entry.kind === 'scheme' ? 'Scheme' : 'Work'} · ${scan.file.name} · page ${number} of ${scan.pageCount}` }),
          el('span', { className: 'help', text: ` (asset ${id}${rotated}; ${onPage.length} evidence ${onPage.length === 1 ? 'box' : 'boxes'})` }),
          items.length ? el('ul', { className: 'evidence-list' }, ...items) : null)));
    }
  }
  unplaced = evidence.filter((item) => !placed.has(item.path) && mapped.some(([id]) => typeof item.pageId === 'string' && item.pageId.startsWith(`${id}:p`))).length;
  if (unplaced > 0) {
    container.prepend(el('p', { className: 'problem', text: `${unplaced} evidence ${unplaced === 1 ? 'item points' : 'items point'} to a page that is not in its file or has a box that is not four numbers; ${unplaced === 1 ? 'it is' : 'they are'} not drawn.` }));
  }
  return { boxes, unplaced };
}

// --- flow ------------------------------------------------------------------------------------

async function refresh() {
  const generation = ++state.generation;
  if (!state.bytes) {
    $('run').disabled = true;
    return;
  }
  setBusy(true);
  showProblem('');
  try {
    const assets = engineAssets();
    const outcome = validateBytes(state.bytes, assets);
    renderOutcome(outcome, assets);
    renderDocument();
    $('results').hidden = false;
    setStatus(outcome.valid ? 'Validated: the submission is valid.' : `Validated: ${outcome.errors.length} ${outcome.errors.length === 1 ? 'error' : 'errors'} found.`);
    const drawn = await renderPages(outcome, generation);
    if (generation !== state.generation) return;
    if (drawn && drawn.boxes > 0) setStatus(`${$('status').textContent} ${drawn.boxes} evidence ${drawn.boxes === 1 ? 'box' : 'boxes'} drawn.`);
  } catch (error) {
    if (generation !== state.generation) return;
    showProblem(error.message);
  } finally {
    if (generation === state.generation) setBusy(false);
  }
}

async function chooseSubmission(file) {
  state.bytes = new Uint8Array(await file.arrayBuffer());
  state.text = new TextDecoder('utf-8').decode(state.bytes);
  try {
    state.doc = JSON.parse(state.text);
  } catch {
    state.doc = undefined;
  }
  $('run').disabled = false;
}

async function chooseScans(files) {
  for (const scan of state.scans) closeScan(scan);
  state.scans = [];
  const problems = [];
  for (const file of files) {
    try {
      state.scans.push(await openScan(file));
    } catch (error) {
      problems.push(error.message);
    }
  }
  return problems;
}

function remap() {
  const assets = state.doc === undefined ? new Map() : documentAssets(state.doc);
  state.mapping = defaultMapping(assets, state.scans);
  renderMapping(assets);
  updateMappingStatus();
}

function updateMappingStatus() {
  const missing = [...state.mapping.values()].filter((entry) => entry.scanIndex < 0).length;
  $('mapping-status').textContent = state.mapping.size === 0
    ? ''
    : missing === 0
      ? 'Every asset has a file: pages and roles are checked.'
      : `${missing} of ${state.mapping.size} assets have no file: pages and roles are not checked.`;
}

async function main() {
  try {
    await init({ module_or_path: new URL('./vendor/examkit/examkit_wasm_bg.wasm', import.meta.url) });
  } catch (error) {
    showProblem(`The validator could not start: ${error.message}`);
    return;
  }
  $('engine-version').textContent = `Engine schema: ${SCHEMA_VERSION}`;

  $('submission').addEventListener('change', async (event) => {
    const [file] = event.target.files;
    if (!file) return;
    setBusy(true);
    await chooseSubmission(file);
    remap();
    await refresh();
  });
  $('scans').addEventListener('change', async (event) => {
    setBusy(true);
    setStatus('Reading files…');
    const problems = await chooseScans([...event.target.files]);
    remap();
    await refresh();
    if (problems.length) showProblem(problems.join(' '));
  });
  $('files').addEventListener('submit', (event) => {
    event.preventDefault();
    refresh();
  });
  setBusy(false);
  setStatus('Choose a submission to check.');
}

main();
