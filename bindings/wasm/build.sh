#!/usr/bin/env bash
# Builds the examkit WebAssembly package:
#   bindings/wasm/pkg/      Node (CommonJS) package: require('.../pkg') or import from pkg/index.cjs
#   bindings/wasm/pkg-web/  browser package (ES module): import init, { validate } from '.../pkg-web/index.js'
#
# The wasm32 standard library cannot be downloaded through rustup on our build machines, so the
# module is built with Debian's Rust toolchain (rustc-web, with its library source) and
# `-Z build-std`. Everything needed is installed when missing: the apt packages and the
# wasm-bindgen CLI at exactly the version pinned in Cargo.toml.
#
# Environment:
#   EXAMKIT_WASM_TARGET_DIR  where the wasm build goes; else CARGO_TARGET_DIR; else
#                            $HOME/.cache/examkit/target-wasm. Keep it apart from native builds so
#                            the two toolchains never share artifacts.
#   MAX_GZIP_BYTES           size budget of the gzipped .wasm (default 256000 = 250 KiB).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
max_gzip_bytes="${MAX_GZIP_BYTES:-$((250 * 1024))}"
export CARGO_TARGET_DIR="${EXAMKIT_WASM_TARGET_DIR:-${CARGO_TARGET_DIR:-$HOME/.cache/examkit/target-wasm}}"

log() { printf '[wasm build] %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# --- toolchain -------------------------------------------------------------------------------
apt_packages=(rustc-web cargo-web rust-web-src lld binaryen)
missing=()
for package in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing ${missing[*]} from apt"
  as_root apt-get update
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y --no-install-recommends "${missing[@]}"
fi

# The CLI must match the wasm-bindgen crate version exactly; read it from the pin in Cargo.toml.
bindgen_version="$(sed -n 's/^wasm-bindgen = { version = "=\([0-9.]*\)".*/\1/p' "$here/Cargo.toml")"
if [ -z "$bindgen_version" ]; then
  log "cannot read the pinned wasm-bindgen version from $here/Cargo.toml"
  exit 1
fi
export PATH="$HOME/.cargo/bin:$PATH"
if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$bindgen_version" ]; then
  log "installing wasm-bindgen-cli $bindgen_version (a few minutes, once)"
  # Any cargo builds the CLI; prefer the one already on PATH, else Debian's.
  cargo_bin="$(command -v cargo || echo /usr/bin/cargo)"
  "$cargo_bin" install wasm-bindgen-cli --version "$bindgen_version" --locked
fi

# --- build -----------------------------------------------------------------------------------
log "cargo build (Debian toolchain, build-std) into $CARGO_TARGET_DIR"
(
  cd "$root"
  # Release settings for this build only (the workspace profile serves native code): no debug
  # info, one codegen unit with LTO, abort on panic.
  # The module is built for the first WebAssembly release (target-cpu=mvp), whatever features the
  # Debian rustc of the day turns on by default (1.87 and later add bulk memory and non-trapping
  # float conversions; 1.82 added reference types). Debian's wasm-opt (binaryen 108) validates with
  # none of them enabled, and with reference types it re-points the exported externref table at the
  # function table when it optimises a module with two tables, so the module fails to load. Without
  # them wasm-bindgen keeps JS objects in a JS-side slab. std is rebuilt with the same flags.
  PATH="/usr/bin:$PATH" RUSTC_BOOTSTRAP=1 RUSTFLAGS="-C linker=wasm-ld -C target-cpu=mvp -C target-feature=-reference-types" \
    CARGO_PROFILE_RELEASE_DEBUG=false \
    CARGO_PROFILE_RELEASE_LTO=true \
    CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 \
    CARGO_PROFILE_RELEASE_PANIC=abort \
    CARGO_PROFILE_RELEASE_OPT_LEVEL="${WASM_OPT_LEVEL:-3}" \
    /usr/bin/cargo build --release --target wasm32-unknown-unknown \
      -Z build-std=std,panic_abort -p examkit-wasm
)
module="$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/examkit_wasm.wasm"

schema_version="$(sed -n 's/^pub const SCHEMA_VERSION: &str = "\(.*\)";/\1/p' "$root/engine/src/lib.rs")"
crate_version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)"

# generate <target> <out dir> : wasm-bindgen, wasm-opt, then the package's entry files.
generate() {
  local target="$1" out="$2"
  rm -rf "$out"
  wasm-bindgen --target "$target" --out-dir "$out" --out-name examkit_wasm "$module"
  wasm-opt -Oz --strip-debug --strip-producers "$out/examkit_wasm_bg.wasm" -o "$out/examkit_wasm_bg.wasm"
  cp "$here/README.md" "$out/README.md"
}

log "wasm-bindgen + wasm-opt -Oz"
generate nodejs "$here/pkg"
generate web "$here/pkg-web"

# Entry points: everything wasm-bindgen generated, plus SCHEMA_VERSION as a constant.
# Node resolves index.cjs, so its declarations are index.d.cts; the browser entry also re-exports init.
sed "s/@SCHEMA_VERSION@/$schema_version/g" "$here/js/index.d.ts" >"$here/pkg/index.d.cts"
{
  echo 'export { default } from "./examkit_wasm.js";'
  sed "s/@SCHEMA_VERSION@/$schema_version/g" "$here/js/index.d.ts"
} >"$here/pkg-web/index.d.ts"
sed "s/@SCHEMA_VERSION@/$schema_version/g" "$here/js/index.cjs" >"$here/pkg/index.cjs"
sed "s/@SCHEMA_VERSION@/$schema_version/g" "$here/js/index.web.js" >"$here/pkg-web/index.js"

cat >"$here/pkg/package.json" <<EOF
{
  "name": "examkit-wasm",
  "version": "$crate_version",
  "description": "Validates and scores service-marking-import-v1 submissions (Node).",
  "license": "Apache-2.0",
  "main": "index.cjs",
  "types": "index.d.cts",
  "files": ["index.cjs", "index.d.cts", "examkit_wasm.js", "examkit_wasm.d.ts", "examkit_wasm_bg.wasm", "README.md"]
}
EOF
cat >"$here/pkg-web/package.json" <<EOF
{
  "name": "examkit-wasm-web",
  "version": "$crate_version",
  "description": "Validates and scores service-marking-import-v1 submissions (browsers, ES module).",
  "license": "Apache-2.0",
  "type": "module",
  "module": "index.js",
  "main": "index.js",
  "types": "index.d.ts",
  "files": ["index.js", "index.d.ts", "examkit_wasm.js", "examkit_wasm.d.ts", "examkit_wasm_bg.wasm", "README.md"]
}
EOF

# --- size budget -----------------------------------------------------------------------------
raw_bytes="$(wc -c <"$here/pkg-web/examkit_wasm_bg.wasm")"
gzip_bytes="$(gzip -9 -c "$here/pkg-web/examkit_wasm_bg.wasm" | wc -c)"
awk -v raw="$raw_bytes" -v gz="$gzip_bytes" -v max="$max_gzip_bytes" 'BEGIN {
  printf "examkit_wasm_bg.wasm: %d bytes, %d bytes gzipped (%.1f KiB; budget %.1f KiB)\n", raw, gz, gz / 1024, max / 1024
}'
if [ "$gzip_bytes" -gt "$max_gzip_bytes" ]; then
  log "the gzipped module is over budget"
  exit 1
fi
