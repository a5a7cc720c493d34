// How fast the WASM package validates in Node, next to the native engine on the same files.
//
//   node bindings/wasm/bench/bench.mjs [fixtures dir]
//
// The fixtures are the typical and maximum documents of `cargo run -p examkit-fixtures -- <dir>`
// (<name>.json and <name>.assets.json); without a directory the script generates them into a
// temporary one. Each measurement is the median of single-call timings after a warm-up. The native
// baseline comes from `cargo run --release -p examkit-wasm --example native_bench` (bench/native.rs),
// which times the engine the same way; set EXAMKIT_BENCH_NATIVE=0 to skip it.
//
// The target is the WASM package within 2x native: `validate` (text in, object out) against native
// `validate` + `to_json` (the same work every surface does: validate, then serialise the outcome).
// This is a benchmark, not a test: it reports, and exits non-zero only if it cannot run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { examkit, pkgDir, repoRoot } from '../tests/helpers.mjs';

const TARGET_RATIO = 2;
const FIXTURES = ['typical', 'maximum'];
/** Warm-up calls and timed calls: many for the small document, fewer for the 4 MiB one. */
const rounds = (name) => (name === 'maximum' ? [5, 31] : [200, 2001]);

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

/** The median of single-call timings of `f`, in nanoseconds. */
function medianNs(warmUp, samples, f) {
  for (let i = 0; i < warmUp; i++) f();
  const times = new Float64Array(samples);
  for (let i = 0; i < samples; i++) {
    const start = process.hrtime.bigint();
    f();
    times[i] = Number(process.hrtime.bigint() - start);
  }
  times.sort();
  return times[samples >> 1];
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
    for (const name of FIXTURES) {
      const text = readFileSync(join(dir, `${name}.json`), 'utf8');
      const bytes = new Uint8Array(readFileSync(join(dir, `${name}.json`)));
      const assets = JSON.parse(readFileSync(join(dir, `${name}.assets.json`), 'utf8'));
      const outcome = examkit.validate(text, assets);
      if (!outcome.valid) {
        throw new Error(`${name}.json is not valid: ${JSON.stringify(outcome.errors.slice(0, 3))}`);
      }
      const [warmUp, samples] = rounds(name);
      for (const [what, f] of [
        ['validate', () => examkit.validate(text, assets)],
        ['validateJson', () => examkit.validateJson(text, assets)],
        ['validateBytes', () => examkit.validateBytes(bytes, assets)],
      ]) {
        results.push({ fixture: name, surface: 'wasm', what, bytes: bytes.length, medianNs: medianNs(warmUp, samples, f) });
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
    console.log('median of single calls after warm-up\n');
    console.log(`${'fixture'.padEnd(9)} ${'surface'.padEnd(7)} ${'call'.padEnd(17)} ${'median'.padStart(10)}`);
    for (const r of results) {
      console.log(`${r.fixture.padEnd(9)} ${r.surface.padEnd(7)} ${r.what.padEnd(17)} ${format(r.medianNs).padStart(10)}`);
    }
    const find = (fixture, surface, what) => results.find((r) => r.fixture === fixture && r.surface === surface && r.what === what);
    if (results.some((r) => r.surface === 'native')) {
      console.log('');
      for (const name of FIXTURES) {
        const native = find(name, 'native', 'validate+to_json');
        const engine = find(name, 'native', 'validate');
        for (const what of ['validate', 'validateJson']) {
          const wasm = find(name, 'wasm', what);
          const ratio = wasm.medianNs / native.medianNs;
          console.log(
            `${name}: wasm ${what} / native validate+to_json = ${ratio.toFixed(2)}x ` +
              `(${ratio <= TARGET_RATIO ? 'within' : 'OVER'} the ${TARGET_RATIO}x target); ` +
              `/ native validate alone = ${(wasm.medianNs / engine.medianNs).toFixed(2)}x`,
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
