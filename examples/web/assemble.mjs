// Assembles the page into a directory a static file server can serve: the sources in src/, the
// examkit browser package (bindings/wasm/pkg-web, built by bindings/wasm/build.sh) and pdf.js from
// node_modules. Build output is never committed; run this after building.
//
//   node examples/web/assemble.mjs [out dir]        (default: examples/web/site)
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Copies everything the page needs into `out` and returns its path. */
export function assemble(out = join(here, 'site')) {
  const pkgWeb = resolve(here, '..', '..', 'bindings', 'wasm', 'pkg-web');
  const pdfjs = join(here, 'node_modules', 'pdfjs-dist');
  for (const [path, hint] of [
    [join(pkgWeb, 'examkit_wasm_bg.wasm'), 'run bindings/wasm/build.sh'],
    [join(pdfjs, 'build', 'pdf.min.mjs'), 'run npm ci in examples/web'],
  ]) {
    if (!existsSync(path)) throw new Error(`${path} is missing: ${hint}`);
  }
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  cpSync(join(here, 'src'), out, { recursive: true });
  const vendor = join(out, 'vendor');
  cpSync(pkgWeb, join(vendor, 'examkit'), { recursive: true });
  for (const file of ['pdf.min.mjs', 'pdf.worker.min.mjs']) {
    cpSync(join(pdfjs, 'build', file), join(vendor, 'pdfjs', file));
  }
  for (const dir of ['cmaps', 'standard_fonts', 'wasm']) {
    cpSync(join(pdfjs, dir), join(vendor, 'pdfjs', dir), { recursive: true });
  }
  cpSync(join(pdfjs, 'LICENSE'), join(vendor, 'pdfjs', 'LICENSE'));
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = assemble(process.argv[2] ? resolve(process.argv[2]) : undefined);
  console.log(`assembled ${out}`);
}
