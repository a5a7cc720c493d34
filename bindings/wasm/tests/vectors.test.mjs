// Runs every shared vector (tests/vectors/*.json) through the WASM package and checks the outcome
// against the vector's expected outcome; every API path must agree with the others.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { examkit, loadVectors, stripMessages, vectorDocument } from './helpers.mjs';

const vectors = loadVectors();

test('the shared vectors are there', () => {
  assert.ok(vectors.length >= 100, `only ${vectors.length} vectors found`);
});

for (const vector of vectors) {
  test(`vector ${vector.name}`, () => {
    assert.equal(`${vector.name}.json`, vector.file);
    const { text, bytes } = vectorDocument(vector);
    const assets = vector.assets;

    // The bytes API takes every document, whatever its encoding.
    const fromBytes = examkit.validateBytes(bytes, assets);
    assert.deepStrictEqual(stripMessages(fromBytes), vector.expected);
    const bytesJson = examkit.validateBytesJson(bytes, assets);
    assert.equal(JSON.stringify(fromBytes), bytesJson, 'validateBytes and validateBytesJson disagree');

    if (text === null) return; // not UTF-8: no JavaScript string holds these bytes

    // The string API gives the same outcome, object and canonical JSON alike.
    const fromText = examkit.validate(text, assets);
    assert.deepStrictEqual(stripMessages(fromText), vector.expected);
    const json = examkit.validateJson(text, assets);
    assert.equal(json, bytesJson, 'validateJson differs from validateBytesJson');
    // Key order and numbers of the object are exactly the canonical JSON's.
    assert.equal(JSON.stringify(fromText), json);

    const report = examkit.explain(text, assets);
    assert.equal(typeof report, 'string');
    assert.ok(report.length > 0, 'explain returned an empty report');
  });
}
