//! The fonts typst ships, embedded compressed (see `build.rs`) and unpacked once per process into
//! memory every [`crate::Renderer`] shares.

use std::sync::OnceLock;

use typst::foundations::Bytes;

include!(concat!(env!("OUT_DIR"), "/font_index.rs"));

/// The fonts, one brotli stream.
static PACKED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/fonts.br"));

/// Each font file's bytes, unpacked on first use.
pub(crate) fn files() -> &'static [Bytes] {
    static FILES: OnceLock<Vec<Bytes>> = OnceLock::new();
    FILES.get_or_init(|| {
        let total: usize = FONT_LENGTHS.iter().sum();
        let mut all = Vec::with_capacity(total);
        brotli_decompressor::BrotliDecompress(&mut &PACKED[..], &mut all)
            .expect("the fonts compressed at build time unpack");
        assert_eq!(
            all.len(),
            total,
            "the unpacked fonts have the lengths recorded at build time"
        );
        let mut files = Vec::with_capacity(FONT_LENGTHS.len());
        let mut rest = all.as_slice();
        for length in FONT_LENGTHS {
            let (file, tail) = rest.split_at(length);
            files.push(Bytes::new(file.to_vec()));
            rest = tail;
        }
        files
    })
}

#[cfg(test)]
mod tests {
    use typst::text::Font;

    use super::*;

    #[test]
    fn every_font_unpacks_and_parses() {
        let files = files();
        assert_eq!(files.len(), FONT_LENGTHS.len());
        assert!(
            PACKED.len() * 3 < FONT_LENGTHS.iter().sum::<usize>() * 2,
            "packed to under two thirds"
        );
        let mut families: Vec<String> = files
            .iter()
            .flat_map(|file| Font::iter(file.clone()))
            .map(|font| font.info().family.clone())
            .collect();
        families.sort();
        families.dedup();
        assert_eq!(
            families,
            [
                "DejaVu Sans Mono",
                "Libertinus Serif",
                "New Computer Modern",
                "New Computer Modern Math"
            ]
        );
    }
}
