// The package's API beyond the vectors: constants, code lists, argument checking, assets handling and
// the text-to-bytes conversion.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { examkit, repoRoot, vectorsDir } from './helpers.mjs';

const baseVector = JSON.parse(readFileSync(join(vectorsDir, 'valid-base-with-assets.json'), 'utf8'));
const baseText = JSON.stringify(baseVector.submission);
const baseAssets = baseVector.assets;
const [workAsset, schemeAsset] = baseAssets;

test('SCHEMA_VERSION is the engine constant', () => {
  assert.equal(examkit.SCHEMA_VERSION, 'service-marking-import-v1');
  assert.equal(examkit.schemaVersion(), examkit.SCHEMA_VERSION);
  assert.equal(examkit.validate(baseText).schemaVersion, examkit.SCHEMA_VERSION);
});

test('errorCodes and flagCodes are the published lists', () => {
  const published = JSON.parse(readFileSync(join(repoRoot, 'schemas', 'error-codes.json'), 'utf8'));
  assert.deepStrictEqual(examkit.errorCodes(), published.errors);
  assert.deepStrictEqual(examkit.flagCodes(), published.reviewFlags);
});

test('every package export is documented in the declarations', () => {
  const declarations = readFileSync(join(repoRoot, 'bindings', 'wasm', 'pkg', 'examkit_wasm.d.ts'), 'utf8');
  for (const name of ['validate', 'validateJson', 'validateBytes', 'validateBytesJson', 'explain', 'errorCodes', 'flagCodes', 'schemaVersion']) {
    assert.equal(typeof examkit[name], 'function', `${name} is not exported`);
    assert.match(declarations, new RegExp(`export function ${name}\\(`));
  }
  // Real types, not `any`.
  assert.match(declarations, /export function validate\(document: string, assets\?: Asset\[\] \| null\): Outcome;/);
  assert.match(declarations, /export type Outcome = ValidOutcome \| InvalidOutcome;/);
  assert.doesNotMatch(declarations, /: any\b/);
});

test('assets: null and undefined skip the asset checks; a list applies them', () => {
  for (const none of [undefined, null]) {
    const outcome = examkit.validate(baseText, none);
    assert.equal(outcome.valid, true);
    assert.equal(outcome.assetsChecked, false);
  }
  assert.equal(examkit.validate(baseText).assetsChecked, false);
  const checked = examkit.validate(baseText, baseAssets);
  assert.equal(checked.valid, true);
  assert.equal(checked.assetsChecked, true);

  // An empty list is a list: every selected asset is then unknown.
  const empty = examkit.validate(baseText, []);
  assert.equal(empty.valid, false);
  assert.ok(empty.errors.length > 0);
  assert.ok(empty.errors.every((e) => e.code === 'unknown_asset'), JSON.stringify(empty.errors));

  // Too few pages in the work asset: the selection of page 2 is out of range.
  const short = examkit.validate(baseText, [{ ...workAsset, pageCount: 1 }, schemeAsset]);
  assert.equal(short.valid, false);
  assert.ok(short.errors.some((e) => e.code === 'page_out_of_range'), JSON.stringify(short.errors));
});

test('a document that is not a string is a TypeError', () => {
  for (const fn of ['validate', 'validateJson', 'explain']) {
    for (const bad of [undefined, null, 42, true, {}, [baseText], new TextEncoder().encode(baseText), Symbol('x')]) {
      assert.throws(
        () => examkit[fn](bad),
        (error) => error instanceof TypeError && /document must be a string/.test(error.message),
        `${fn}(${typeof bad}) did not throw a TypeError`,
      );
    }
    // A String object is not a primitive string either.
    assert.throws(() => examkit[fn](new String(baseText)), TypeError);
  }
});

test('validateBytes takes a Uint8Array (or Buffer) only', () => {
  const bytes = new TextEncoder().encode(baseText);
  assert.equal(examkit.validateBytes(bytes).valid, true);
  assert.equal(examkit.validateBytes(Buffer.from(baseText)).valid, true);
  for (const fn of ['validateBytes', 'validateBytesJson']) {
    for (const bad of [baseText, undefined, null, [1, 2, 3], bytes.buffer, new Uint16Array(4)]) {
      assert.throws(
        () => examkit[fn](bad),
        (error) => error instanceof TypeError && /document must be a Uint8Array/.test(error.message),
        `${fn} accepted ${Object.prototype.toString.call(bad)}`,
      );
    }
  }
});

test('a malformed assets list throws an Error with the engine message', () => {
  const cases = [
    [{}, /assets must be a JSON array/],
    ['work', /assets must be a JSON array/],
    [42, /assets must be a JSON array/],
    [[{ id: workAsset.id, kind: 'work' }], /pageCount/],
    [[{ ...workAsset, extra: 1 }], /unknown field `extra`/],
    [[{ ...workAsset, kind: 'paper' }], /unknown variant `paper`/],
    [[{ ...workAsset, id: 'not-a-uuid' }], /assets must be a JSON array/],
    [[{ ...workAsset, pageCount: -1 }], /assets must be a JSON array/],
    [[{ ...workAsset, pageCount: 1.5 }], /assets must be a JSON array/],
    [[workAsset, workAsset], new RegExp(`asset ${workAsset.id} is listed twice`)],
    [[{ ...workAsset, pageCount: 0 }], new RegExp(`asset ${workAsset.id} has pageCount 0`)],
  ];
  for (const [assets, message] of cases) {
    for (const fn of ['validate', 'validateJson', 'explain']) {
      assert.throws(
        () => examkit[fn](baseText, assets),
        (error) => error instanceof Error && !(error instanceof TypeError) && message.test(error.message),
        `${fn} with assets ${JSON.stringify(assets)}`,
      );
    }
    assert.throws(() => examkit.validateBytes(new TextEncoder().encode(baseText), assets), message);
  }
});

test('assets that JSON cannot express throw an Error too', () => {
  const cyclic = { ...workAsset };
  cyclic.self = cyclic;
  assert.throws(() => examkit.validate(baseText, [cyclic]), /assets could not be serialised/);
  assert.throws(() => examkit.validate(baseText, [{ ...workAsset, pageCount: 2n }]), /assets could not be serialised/);
  assert.throws(() => examkit.validate(baseText, () => baseAssets), /assets must be a JSON array/);
});

test('the module keeps working after a thrown error', () => {
  assert.throws(() => examkit.validate(7));
  assert.throws(() => examkit.validate(baseText, [{}]));
  const json = examkit.validateJson(baseText, baseAssets);
  assert.equal(JSON.parse(json).valid, true);
  assert.equal(json, examkit.validateJson(baseText, baseAssets));
});

test('text is validated as its UTF-8 bytes', () => {
  const withAccents = baseText.replace('R. Okafor', 'Ré Økafor 😀');
  assert.notEqual(withAccents, baseText);
  assert.equal(
    examkit.validateJson(withAccents),
    examkit.validateBytesJson(new TextEncoder().encode(withAccents)),
  );
  assert.equal(examkit.validate(withAccents).valid, true);
  // U+FFFD is an ordinary character.
  assert.equal(examkit.validate(baseText.replace('R. Okafor', 'R. \uFFFD')).valid, true);
});

test('a lone surrogate in a string is invalid_json, like the same WTF-8 bytes from a file', () => {
  for (const unit of [0xd800, 0xdbff, 0xdc00, 0xdfff]) {
    const name = `R. ${String.fromCharCode(unit)}kafor`;
    const text = baseText.replace('R. Okafor', name);
    const outcome = examkit.validate(text);
    assert.equal(outcome.valid, false);
    assert.deepStrictEqual(outcome.errors.map((e) => e.code), ['invalid_json']);
    // The three bytes a WTF-8 encoder writes for the lone surrogate give the same outcome.
    const [before, after] = baseText.split('R. Okafor');
    const wtf8 = Buffer.from([0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]);
    const bytes = Buffer.concat([Buffer.from(`${before}R. `), wtf8, Buffer.from(`kafor${after}`)]);
    assert.equal(examkit.validateJson(text), examkit.validateBytesJson(bytes));
  }
  // A proper surrogate pair is one character and stays valid.
  assert.equal(examkit.validate(baseText.replace('R. Okafor', 'R. \uD83D\uDE00')).valid, true);
});

test('explain gives the engine report for valid and invalid documents', () => {
  const valid = examkit.explain(baseText, baseAssets);
  const invalid = examkit.explain('{}');
  assert.equal(typeof valid, 'string');
  assert.ok(valid.length > 0 && invalid.length > 0);
  assert.notEqual(valid, invalid);
  assert.match(invalid, /required/);
});

test('explain says why under each allocation: requirement, reason and evidence', () => {
  const document = JSON.parse(baseText);
  const decision = document.questions[0].decisions[0];
  decision.reason = 'Differentiated\ncorrectly,\t all three terms ' + 'and more '.repeat(20);
  const report = examkit.explain(JSON.stringify(document), baseAssets);
  const lines = report.split('\n').map((line) => line.trim());
  const reasons = lines.filter((line) => line.startsWith('reason: '));
  assert.equal(reasons.length, document.questions[0].decisions.length);
  assert.ok(reasons[0].startsWith('reason: Differentiated correctly, all three terms and more'), reasons[0]);
  assert.ok(reasons[0].endsWith('\u2026'), reasons[0]);
  assert.equal([...reasons[0]].length, 'reason: '.length + 100);
  assert.ok(lines.some((line) => line.startsWith('requirement: ')), report);
  assert.ok(lines.some((line) => /^evidence, page \d+: "/.test(line)), report);
});

test('validate returns fresh objects that callers may change', () => {
  const first = examkit.validate(baseText);
  first.score.awarded = 99;
  first.questions.length = 0;
  const second = examkit.validate(baseText);
  assert.equal(second.score.awarded, 4);
  assert.equal(second.questions.length, 1);
});
