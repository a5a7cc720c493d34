//! QR codes: decoded whichever way up and slightly skewed, at 150 dpi.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;
use examkit_scan::{Format, IndexOptions, Indexer, Orientation, OrientationSource, decode_codes};
use image::GrayImage;

const PAYLOAD: &str = "EXK1:qp:7f1c2a9e-3b4d-4e5f-8a6b-0c1d2e3f4a5b:3:7";

/// The typeset page with a small code (about 19 mm wide at 150 dpi) near the top-right corner.
fn page_with_code() -> (GrayImage, (f64, f64)) {
    let mut page = typeset_page().image;
    let code = qr_image(PAYLOAD, 3);
    let (x, y) = (PAGE_W - code.width() - 40, 30);
    paste(&mut page, &code, x, y);
    let centre = (
        (f64::from(x) + f64::from(code.width()) / 2.0) / f64::from(PAGE_W),
        (f64::from(y) + f64::from(code.height()) / 2.0) / f64::from(PAGE_H),
    );
    (page, centre)
}

#[test]
fn decodes_code_on_upright_page() {
    let (page, (cx, cy)) = page_with_code();
    let codes = decode_codes(&page);
    assert_eq!(codes.len(), 1, "{codes:?}");
    assert_eq!(codes[0].payload, PAYLOAD);
    assert_eq!(codes[0].orientation, Orientation::Up);
    assert!(codes[0].bbox.contains_point(cx, cy), "{:?}", codes[0].bbox);
    assert!(codes[0].bbox.width < 0.1);
}

#[test]
fn decodes_code_turned_90_and_180() {
    let (page, (cx, cy)) = page_with_code();
    let right = image::imageops::rotate90(&page);
    let codes = decode_codes(&right);
    assert_eq!(codes.len(), 1);
    assert_eq!(codes[0].payload, PAYLOAD);
    assert_eq!(codes[0].orientation, Orientation::Right);
    // (u, v) -> (1 - v, u) for a clockwise quarter turn.
    assert!(
        codes[0].bbox.contains_point(1.0 - cy, cx),
        "{:?}",
        codes[0].bbox
    );

    let down = image::imageops::rotate180(&page);
    let codes = decode_codes(&down);
    assert_eq!(codes.len(), 1);
    assert_eq!(codes[0].payload, PAYLOAD);
    assert_eq!(codes[0].orientation, Orientation::Down);
    assert!(codes[0].bbox.contains_point(1.0 - cx, 1.0 - cy));

    let left = image::imageops::rotate270(&page);
    assert_eq!(decode_codes(&left)[0].orientation, Orientation::Left);
}

#[test]
fn decodes_code_on_skewed_noisy_scan() {
    let (page, _) = page_with_code();
    for (seed, degrees) in [(9, 2.0), (10, -2.0), (11, 1.0), (12, 2.0)] {
        let scan = scan_noise(&rotate_small(&page, degrees), seed, 6.0);
        let codes = decode_codes(&scan);
        assert_eq!(codes.len(), 1, "skew {degrees}");
        assert_eq!(codes[0].payload, PAYLOAD);
        assert_eq!(codes[0].orientation, Orientation::Up);
    }
    let scan = scan_noise(
        &rotate_small(&image::imageops::rotate180(&page), 2.0),
        4,
        6.0,
    );
    let codes = decode_codes(&scan);
    assert_eq!(codes.len(), 1);
    assert_eq!(codes[0].orientation, Orientation::Down);
}

#[test]
fn several_codes_and_none() {
    let mut page = blank_page();
    paste(&mut page, &qr_image("EXK1:qp:a:1:1", 3), 100, 100);
    paste(&mut page, &qr_image("EXK1:qp:a:1:2", 4), 700, 1200);
    let mut payloads: Vec<String> = decode_codes(&page).into_iter().map(|c| c.payload).collect();
    payloads.sort();
    assert_eq!(payloads, ["EXK1:qp:a:1:1", "EXK1:qp:a:1:2"]);
    assert!(decode_codes(&typeset_page().image).is_empty());
}

#[test]
fn code_decides_orientation_in_index() {
    let (page, _) = page_with_code();
    let mut indexer = Indexer::new(&IndexOptions {
        ocr: false,
        ..IndexOptions::default()
    })
    .unwrap();
    let png = encode(&image::imageops::rotate270(&page), image::ImageFormat::Png);
    let index = indexer.index_page(&png, Format::Png, 1).unwrap();
    assert_eq!(index.orientation, Orientation::Left);
    assert_eq!(index.orientation_source, OrientationSource::Code);
    assert_eq!(index.codes.len(), 1);
}
