// Shared helpers of the Node tests: where the package and the shared vectors are, and how a vector's
// document bytes are built (tests/vectors/README.md, "Building the document bytes").
import { createRequire } from 'node:module';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** The repository root (bindings/wasm/tests → ../../..). */
export const repoRoot = resolve(here, '..', '..', '..');

/** The built Node package: EXAMKIT_WASM_PKG, else bindings/wasm/pkg. */
export const pkgDir = process.env.EXAMKIT_WASM_PKG
  ? resolve(process.env.EXAMKIT_WASM_PKG)
  : resolve(here, '..', 'pkg');

/** The Node package, loaded through its entry point. */
export const examkit = createRequire(import.meta.url)(join(pkgDir, 'index.cjs'));

/** The shared vectors directory. */
export const vectorsDir = join(repoRoot, 'tests', 'vectors');

/** Every vector, parsed, with its file name, in name order. */
export function loadVectors() {
  return readdirSync(vectorsDir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((file) => ({ file, ...JSON.parse(readFileSync(join(vectorsDir, file), 'utf8')) }));
}

/**
 * The vector's document, as the string the JS API takes (`text`, null for a document that is not
 * UTF-8) and as bytes (`bytes`, always).
 */
export function vectorDocument(vector) {
  const sources = ['submission', 'submissionText', 'submissionBase64'].filter((k) => k in vector);
  if (sources.length !== 1) {
    throw new Error(`${vector.file}: expected exactly one document member, found ${sources.join(', ')}`);
  }
  let bytes;
  let text = null;
  if ('submission' in vector) {
    // JSON.stringify keeps the file's key order; no vector uses an integer-like key.
    text = JSON.stringify(vector.submission);
    bytes = Buffer.from(text, 'utf8');
  } else if ('submissionText' in vector) {
    text = vector.submissionText;
    bytes = Buffer.from(text, 'utf8');
  } else {
    bytes = Buffer.from(vector.submissionBase64, 'base64');
    const decoded = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    try {
      text = decoded.decode(bytes);
    } catch {
      text = null; // not UTF-8: only the bytes API can carry it
    }
  }
  if (vector.padToBytes != null) {
    if (bytes.length > vector.padToBytes) {
      throw new Error(`${vector.file}: document is ${bytes.length} bytes, over padToBytes`);
    }
    const padding = ' '.repeat(vector.padToBytes - bytes.length);
    bytes = Buffer.concat([bytes, Buffer.from(padding, 'ascii')]);
    if (text !== null) text += padding;
  }
  return { text, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) };
}

/**
 * The outcome with every `message` removed (after checking each is a non-empty string), as the
 * vectors' `expected` members are written.
 */
export function stripMessages(outcome) {
  const copy = structuredClone(outcome);
  const strip = (item, where) => {
    if (typeof item.message !== 'string' || item.message.length === 0) {
      throw new Error(`${where}: message is not a non-empty string: ${JSON.stringify(item.message)}`);
    }
    delete item.message;
  };
  if (copy.valid === false) {
    copy.errors.forEach((e, i) => strip(e, `errors[${i}]`));
  } else {
    copy.questions.forEach((q, i) =>
      q.reviewFlags.forEach((f, j) => strip(f, `questions[${i}].reviewFlags[${j}]`)),
    );
  }
  return copy;
}
