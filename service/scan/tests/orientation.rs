//! Orientation detection at 0/90/180/270 on typeset and handwritten pages.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;
use examkit_scan::{
    Format, IndexOptions, Indexer, Orientation, OrientationSource, TextSource, estimate_orientation,
};
use image::GrayImage;

fn turned(img: &GrayImage, o: Orientation) -> GrayImage {
    match o {
        Orientation::Up => img.clone(),
        Orientation::Right => image::imageops::rotate90(img),
        Orientation::Down => image::imageops::rotate180(img),
        Orientation::Left => image::imageops::rotate270(img),
    }
}

fn check_layout_estimates(name: &str, page: &GrayImage) {
    for o in Orientation::ALL {
        let est = estimate_orientation(&turned(page, o));
        println!("{name} {o:?}: {est:?}");
        assert_eq!(est.orientation, o, "{name} turned {o:?}: {est:?}");
        assert!(est.has_text_lines);
    }
}

#[test]
fn layout_estimate_typeset() {
    check_layout_estimates("typeset", &typeset_page().image);
}

#[test]
fn layout_estimate_typeset_scanned_and_skewed() {
    let page = scan_noise(&rotate_small(&typeset_page().image, 1.5), 7, 8.0);
    check_layout_estimates("typeset scanned", &page);
}

#[test]
fn layout_estimate_handwriting() {
    check_layout_estimates("handwriting", &handwriting_page());
}

#[test]
fn layout_estimate_handwriting_scanned_and_skewed() {
    let page = scan_noise(&rotate_small(&handwriting_page(), -2.0), 11, 8.0);
    check_layout_estimates("handwriting scanned", &page);
}

fn check_indexed(name: &str, page: &GrayImage) {
    let mut indexer = Indexer::new(&IndexOptions::default()).unwrap();
    for o in Orientation::ALL {
        let png = encode(&turned(page, o), image::ImageFormat::Png);
        let index = indexer.index_page(&png, Format::Png, 1).unwrap();
        println!(
            "{name} {o:?}: {:?} via {:?}, {} words: {}",
            index.orientation,
            index.orientation_source,
            index.words.len(),
            index
                .words
                .iter()
                .take(12)
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        );
        assert_eq!(index.orientation, o, "{name} turned {o:?}");
        assert_eq!(index.text_source, TextSource::Ocr);
        assert_ne!(index.orientation_source, OrientationSource::Default);
    }
}

#[test]
fn indexed_orientation_typeset() {
    check_indexed("typeset", &scan_noise(&typeset_page().image, 3, 6.0));
}

#[test]
fn indexed_orientation_handwriting() {
    check_indexed("handwriting", &scan_noise(&handwriting_page(), 5, 6.0));
}
