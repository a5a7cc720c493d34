// How fast the WASM package validates in Node, next to the native engine on the same files.
//
//   node bindings/wasm/bench/bench.mjs [fixtures dir]
//
// The fixtures are the typical and maximum documents of `cargo run -p examkit-fixtures -- <dir>`
// (<name>.json and <name>.assets.json); without a directory the script generates them into a
// temporary one. Each measurement is the time per call over timed batches after a warm-up, as the
// median and the minimum (the figure least disturbed by other work on a busy machine). The native
// baseline comes from `cargo run --release -p examkit-wasm --example native_bench` (bench/native.rs),
// which times the engine the same way; set EXAMKIT_BENCH_NATIVE=0 to skip it.
//
// The target is the WASM package within 2x native: `validate` (text in, object out) against native
// `validate` + `to_json` (the same work every surface does: validate, then serialise the outcome),
// judged on the minimum, since medians on a shared machine mostly measure the other work on it.
// This is a benchmark, not a test: it reports, and exits non-zero only if it cannot run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { examkit, pkgDir, repoRoot } from '../tests/helpers.mjs';

const TARGET_RATIO = 2;
const FIXTURES = ['typical', 'maximum'];
/** Time spent calling the package before anything is measured. */
const WARM_UP_MS = Number(process.env.EXAMKIT_BENCH_WARM_UP_MS ?? 3000);
/** Warm-up calls, timed samples and calls per sample (as in bench/native.rs). */
const rounds = (name) => (name === 'maximum' ? [3, 21, 1] : [200, 3001, 1]);

const cargoEnv = {
  ...process.env,
  CARGO_TARGET_DIR: process.env.EXAMKIT_BENCH_TARGET_DIR ?? join(process.env.HOME ?? tmpdir(), '.cache', 'examkit', 'target-bench'),
};

function cargo(args) {
  const run = spawnSync('cargo', args, { cwd: repoRoot, env: cargoEnv, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error(`cargo ${args.join(' ')} failed:\n${run.stderr}`);
  return run.stdout;
}

/**
 * The median and the minimum time per call of `f`, in nanoseconds, over `samples` batches of `batch`
 * calls. The minimum is the least disturbed by other work on a busy machine.
 */
function timeNs(warmUp, samples, batch, f) {
  for (let i = 0; i < warmUp; i++) f();
  const times = new Float64Array(samples);
  for (let i = 0; i < samples; i++) {
    const start = process.hrtime.bigint();
    for (let j = 0; j < batch; j++) f();
    times[i] = Number(process.hrtime.bigint() - start) / batch;
  }
  times.sort();
  return { medianNs: times[samples >> 1], minNs: times[0] };
}

const format = (ns) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : `${(ns / 1e3).toFixed(1)} µs`);

function main() {
  let dir = process.argv[2] ? resolve(process.argv[2]) : null;
  let cleanup = null;
  if (!dir) {
    dir = mkdtempSync(join(tmpdir(), 'examkit-fixtures-'));
    cleanup = dir;
    process.stderr.write(`generating fixtures into ${dir}\n`);
    cargo(['run', '--release', '-q', '-p', 'examkit-fixtures', '--', dir]);
  }
  try {
    const results = [];
    // V8 runs new wasm code in its baseline tier and optimises hot functions in the background; on
    // a busy machine that takes a while, so every call is exercised for a few seconds first, lest
    // the first call measured be timed on baseline code.
    const warmUntil = Date.now() + WARM_UP_MS;
    const warmText = readFileSync(join(dir, 'typical.json'), 'utf8');
    const warmAssets = JSON.parse(readFileSync(join(dir, 'typical.assets.json'), 'utf8'));
    const warmBytes = new TextEncoder().encode(warmText);
    while (Date.now() < warmUntil) {
      examkit.validate(warmText, warmAssets);
      examkit.validateJson(warmText, warmAssets);
      examkit.validateBytes(warmBytes, warmAssets);
    }
    for (const name of FIXTURES) {
      const text = readFileSync(join(dir, `${name}.json`), 'utf8');
      const bytes = new Uint8Array(readFileSync(join(dir, `${name}.json`)));
      const assets = JSON.parse(readFileSync(join(dir, `${name}.assets.json`), 'utf8'));
      const outcome = examkit.validate(text, assets);
      if (!outcome.valid) {
        throw new Error(`${name}.json is not valid: ${JSON.stringify(outcome.errors.slice(0, 3))}`);
      }
      const [warmUp, samples, batch] = rounds(name);
      for (const [what, f] of [
        ['validate', () => examkit.validate(text, assets)],
        ['validateJson', () => examkit.validateJson(text, assets)],
        ['validateBytes', () => examkit.validateBytes(bytes, assets)],
      ]) {
        results.push({ fixture: name, surface: 'wasm', what, bytes: bytes.length, ...timeNs(warmUp, samples, batch, f) });
      }
    }

    if (process.env.EXAMKIT_BENCH_NATIVE !== '0') {
      process.stderr.write('timing the native engine (cargo run --release --example native_bench)\n');
      const out = cargo(['run', '--release', '-q', '-p', 'examkit-wasm', '--example', 'native_bench', '--', dir, ...FIXTURES]);
      for (const line of out.split('\n').filter(Boolean)) {
        results.push({ surface: 'native', ...JSON.parse(line) });
      }
    }

    console.log(`examkit-wasm benchmark (Node ${process.version}, package ${pkgDir})`);
    console.log('time per call after warm-up: median and minimum over timed batches\n');
    console.log(`${'fixture'.padEnd(9)} ${'surface'.padEnd(7)} ${'call'.padEnd(17)} ${'median'.padStart(10)} ${'min'.padStart(10)}`);
    for (const r of results) {
      console.log(`${r.fixture.padEnd(9)} ${r.surface.padEnd(7)} ${r.what.padEnd(17)} ${format(r.medianNs).padStart(10)} ${format(r.minNs).padStart(10)}`);
    }
    const find = (fixture, surface, what) => results.find((r) => r.fixture === fixture && r.surface === surface && r.what === what);
    if (results.some((r) => r.surface === 'native')) {
      console.log('');
      for (const name of FIXTURES) {
        const native = find(name, 'native', 'validate+to_json');
        const engine = find(name, 'native', 'validate');
        for (const what of ['validate', 'validateJson']) {
          const wasm = find(name, 'wasm', what);
          const median = wasm.medianNs / native.medianNs;
          const min = wasm.minNs / native.minNs;
          console.log(
            `${name}: wasm ${what} / native validate+to_json = ${median.toFixed(2)}x median, ${min.toFixed(2)}x min ` +
              `(minimum ${min <= TARGET_RATIO ? 'within' : 'OVER'} the ${TARGET_RATIO}x target); ` +
              `/ native validate alone = ${(wasm.medianNs / engine.medianNs).toFixed(2)}x median`,
          );
        }
      }
    }
    console.log(`\nJSON: ${JSON.stringify(results)}`);
  } finally {
    if (cleanup) rmSync(cleanup, { recursive: true, force: true });
  }
}

main();
