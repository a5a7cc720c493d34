//! Compresses the fonts typst ships (`typst-assets`) into one brotli stream in `OUT_DIR`, so the
//! binary carries about half their size; `src/fonts.rs` unpacks them once per process. The bytes
//! that come out are the bytes that went in, so the PDFs do not change.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

use brotli::enc::BrotliEncoderParams;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));

    let fonts: Vec<&[u8]> = typst_assets::fonts().collect();
    let all: Vec<u8> = fonts.concat();
    let params = BrotliEncoderParams {
        quality: 11,
        // A 16 MiB window: the fonts share outlines and tables across weights, and one window
        // over all of them finds that.
        lgwin: 24,
        size_hint: all.len(),
        ..BrotliEncoderParams::default()
    };
    let mut packed = Vec::new();
    brotli::BrotliCompress(&mut all.as_slice(), &mut packed, &params)
        .expect("compressing in memory");
    fs::write(out.join("fonts.br"), &packed).expect("writing OUT_DIR/fonts.br");

    let mut index = String::from("/// The length of each font in the unpacked stream, in order.\n");
    let _ = writeln!(index, "const FONT_LENGTHS: [usize; {}] = [", fonts.len());
    for font in &fonts {
        let _ = writeln!(index, "    {},", font.len());
    }
    index.push_str("];\n");
    fs::write(out.join("font_index.rs"), index).expect("writing OUT_DIR/font_index.rs");
}
