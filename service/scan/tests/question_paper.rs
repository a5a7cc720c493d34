//! End to end on a real question paper PDF (`tests/fixtures/question-paper.pdf`, typeset with
//! typst by examkit-pdf: text layer, one QR page code per page, ruled answer space).
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;
use examkit_scan::{
    Format, IndexOptions, Indexer, NormBox, Orientation, OrientationSource, TextSource, compare,
    page_count, render_page,
};

fn paper() -> Vec<u8> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/question-paper.pdf");
    std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {} missing: {e}", path.display()))
}

#[test]
fn text_layer_and_page_code_of_the_pdf() {
    let pdf = paper();
    assert_eq!(page_count(&pdf, Format::Pdf).unwrap(), 7);
    let mut indexer = Indexer::new(&IndexOptions {
        ocr: false,
        ..IndexOptions::default()
    })
    .unwrap();
    let index = indexer.index_page(&pdf, Format::Pdf, 2).unwrap();
    assert_eq!(index.text_source, TextSource::TextLayer);
    assert_eq!(index.orientation, Orientation::Up);
    assert_eq!((index.width_px, index.height_px), (1240, 1754));
    assert_eq!(index.codes.len(), 1);
    let code = &index.codes[0];
    assert!(
        code.payload.starts_with("EXK1:qp:") && code.payload.ends_with(":3:2"),
        "{}",
        code.payload
    );
    assert!(code.bbox.x > 0.75 && code.bbox.y < 0.1, "{:?}", code.bbox);
    let word = index.words.iter().find(|w| w.text == "functions").unwrap();
    // pdftotext -bbox puts it at x 103.5..147.4, y 78.4..89.4 (points on 595 x 842).
    let expect = NormBox::from_pixels(103.5, 78.4, 147.4, 89.4, 595.0, 842.0);
    assert!(
        word.bbox.intersection_area(&expect) > 0.7 * expect.area(),
        "{:?} vs {expect:?}",
        word.bbox
    );
}

/// A normalized box after `rotate_small(.., 1.0)` of a `w` x `h` page.
fn moved(b: &NormBox, w: f64, h: f64) -> NormBox {
    let corners = [
        (b.x, b.y),
        (b.right(), b.y),
        (b.right(), b.bottom()),
        (b.x, b.bottom()),
    ]
    .map(|(x, y)| rotate_point(x * w, y * h, w, h, 1.0));
    NormBox::from_pixels(
        corners.iter().map(|c| c.0).fold(f64::MAX, f64::min),
        corners.iter().map(|c| c.1).fold(f64::MAX, f64::min),
        corners.iter().map(|c| c.0).fold(f64::MIN, f64::max),
        corners.iter().map(|c| c.1).fold(f64::MIN, f64::max),
        w,
        h,
    )
}

#[test]
fn sideways_scan_with_an_answer() {
    let pdf = paper();
    let reference = render_page(&pdf, Format::Pdf, 2, 150).unwrap();
    let mut work = reference.clone();
    let written = write_answer(&mut work, 180.0, 425.0, &["fg(3) = f(4/2)", "= f(2) = 7"]);
    // Fed into the scanner sideways: content turned 90 degrees clockwise, 1 degree skew.
    let scan = scan_noise(
        &image::imageops::rotate90(&rotate_small(&work, 1.0)),
        41,
        7.0,
    );

    let c = compare(&scan, &reference);
    println!("{c:?}");
    assert!(c.aligned, "{}", c.note);
    assert_eq!(c.rotation, Orientation::Right);
    let (w, h) = (f64::from(work.width()), f64::from(work.height()));
    let written = NormBox::from_pixels(
        f64::from(written.0),
        f64::from(written.1),
        f64::from(written.2),
        f64::from(written.3),
        w,
        h,
    );
    let upright = moved(&written, w, h);
    // Turned 90 degrees clockwise: (u, v) -> (1 - v, u).
    let expected = NormBox::from_corners(
        1.0 - upright.bottom(),
        upright.x,
        1.0 - upright.y,
        upright.right(),
    );
    let on_answer: Vec<&NormBox> = c
        .added_regions
        .iter()
        .filter(|r| r.intersects(&expected))
        .collect();
    assert!(!on_answer.is_empty(), "{c:?}");
    let span = on_answer
        .iter()
        .skip(1)
        .fold(*on_answer[0], |acc, r| acc.union(r));
    assert!(
        span.intersection_area(&expected) > 0.8 * expected.area(),
        "{span:?} vs {expected:?}"
    );
    for r in &c.added_regions {
        assert!(
            r.intersects(&expected) || r.area() < 0.0005,
            "stray region {r:?}"
        );
    }

    let mut indexer = Indexer::new(&IndexOptions::default()).unwrap();
    let png = encode(&scan, image::ImageFormat::Png);
    let index = indexer.index_page(&png, Format::Png, 1).unwrap();
    assert_eq!(index.orientation, Orientation::Right);
    assert_eq!(index.orientation_source, OrientationSource::Code);
    assert!(index.codes[0].payload.ends_with(":3:2"));
    assert_eq!(index.text_source, TextSource::Ocr);
    let word = index
        .words
        .iter()
        .find(|w| w.text == "functions")
        .unwrap_or_else(|| {
            panic!(
                "{:?}",
                index.words.iter().map(|w| &w.text).collect::<Vec<_>>()
            )
        });
    // Where the text layer puts it, skewed and turned with the scan.
    let layer = NormBox::from_pixels(103.5, 78.4, 147.4, 89.4, 595.0, 842.0);
    let skewed = moved(&layer, w, h);
    let turned = NormBox::from_corners(
        1.0 - skewed.bottom(),
        skewed.x,
        1.0 - skewed.y,
        skewed.right(),
    );
    assert!(word.bbox.height > word.bbox.width, "{:?}", word.bbox);
    assert!(
        word.bbox.intersection_area(&turned) > 0.7 * turned.area(),
        "{:?} vs {turned:?}",
        word.bbox
    );
}
