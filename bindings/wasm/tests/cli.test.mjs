// Byte equality with the Rust CLI: for every shared vector, `examkit validate` must print exactly what
// validateJson returns (plus the CLI's final newline), and `--explain` exactly what explain returns.
// Runs when EXAMKIT_BIN names the built `examkit` binary; otherwise the suite reports a skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { examkit, loadVectors, vectorDocument } from './helpers.mjs';

const bin = process.env.EXAMKIT_BIN;
const skip = !bin
  ? 'EXAMKIT_BIN is not set: build the CLI (cargo build --release -p examkit) and set EXAMKIT_BIN=target/release/examkit to compare outputs byte for byte'
  : !existsSync(bin)
    ? `EXAMKIT_BIN=${bin} does not exist`
    : false;

/** Runs the CLI and returns its exit status and stdout bytes. */
function cli(args) {
  const run = spawnSync(bin, args, { maxBuffer: 64 * 1024 * 1024 });
  if (run.error) throw run.error;
  return { status: run.status, stdout: run.stdout, stderr: run.stderr.toString('utf8') };
}

/** The CLI's printed form of a text: the text, ending with one newline. */
const printed = (text) => Buffer.from(text.endsWith('\n') ? text : `${text}\n`, 'utf8');

test('CLI and WASM print the same bytes for every vector', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'examkit-wasm-cli-'));
  try {
    for (const vector of loadVectors()) {
      await t.test(vector.name, () => {
        const { text, bytes } = vectorDocument(vector);
        const documentPath = join(dir, 'submission.json');
        writeFileSync(documentPath, bytes);
        const assetArgs = [];
        if (vector.assets !== null) {
          const assetsPath = join(dir, 'assets.json');
          writeFileSync(assetsPath, JSON.stringify(vector.assets));
          assetArgs.push('--assets', assetsPath);
        }

        const wasmJson = examkit.validateBytesJson(bytes, vector.assets);
        const json = cli(['validate', documentPath, ...assetArgs]);
        assert.equal(json.status, vector.expected.valid ? 0 : 1, json.stderr);
        assert.ok(json.stdout.equals(printed(wasmJson)), `outputs differ:\nCLI:  ${json.stdout}\nWASM: ${wasmJson}`);

        if (text !== null) {
          const report = cli(['validate', documentPath, ...assetArgs, '--explain']);
          assert.equal(report.status, vector.expected.valid ? 0 : 1, report.stderr);
          const wasmReport = examkit.explain(text, vector.assets);
          assert.ok(report.stdout.equals(printed(wasmReport)), `reports differ:\nCLI:  ${report.stdout}\nWASM: ${wasmReport}`);
        }
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a malformed assets list is refused by both the CLI and the package', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'examkit-wasm-cli-'));
  try {
    const assets = [{ id: '3f2b8c1e-5a47-4d2e-9b61-0c8e7a5d4f10', kind: 'work', pageCount: 0 }];
    writeFileSync(join(dir, 'assets.json'), JSON.stringify(assets));
    writeFileSync(join(dir, 'submission.json'), '{}');
    const run = cli(['validate', join(dir, 'submission.json'), '--assets', join(dir, 'assets.json')]);
    assert.equal(run.status, 2);
    assert.throws(() => examkit.validate('{}', assets), (error) => {
      assert.ok(run.stderr.includes(error.message), `CLI said ${run.stderr}, WASM said ${error.message}`);
      return true;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
