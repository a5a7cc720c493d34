//! OCR words with boxes in displayed-page coordinates.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;
use examkit_scan::{Format, IndexOptions, Indexer, NormBox, Orientation, TextSource};

fn expected_box(b: PxBox) -> NormBox {
    NormBox::from_pixels(
        b.0 as f64,
        b.1 as f64,
        b.2 as f64,
        b.3 as f64,
        PAGE_W as f64,
        PAGE_H as f64,
    )
}

/// The drawn box of "gradient", as it lies after turning the page.
fn turned_box(b: &NormBox, o: Orientation) -> NormBox {
    match o {
        Orientation::Up => *b,
        Orientation::Right => NormBox::from_corners(1.0 - b.bottom(), b.x, 1.0 - b.y, b.right()),
        Orientation::Down => {
            NormBox::from_corners(1.0 - b.right(), 1.0 - b.bottom(), 1.0 - b.x, 1.0 - b.y)
        }
        Orientation::Left => NormBox::from_corners(b.y, 1.0 - b.right(), b.bottom(), 1.0 - b.x),
    }
}

#[test]
fn gradient_word_box_covers_where_it_was_drawn() {
    let page = typeset_page();
    let drawn = expected_box(page.gradient);
    let mut indexer = Indexer::new(&IndexOptions::default()).unwrap();
    for o in [Orientation::Up, Orientation::Right, Orientation::Down] {
        let img = match o {
            Orientation::Up => page.image.clone(),
            Orientation::Right => image::imageops::rotate90(&page.image),
            _ => image::imageops::rotate180(&page.image),
        };
        let png = encode(&scan_noise(&img, 21, 5.0), image::ImageFormat::Png);
        let index = indexer.index_page(&png, Format::Png, 1).unwrap();
        assert_eq!(index.text_source, TextSource::Ocr);
        assert_eq!(index.orientation, o);
        let expect = turned_box(&drawn, o);
        let word = index
            .words
            .iter()
            .find(|w| w.text == "gradient")
            .unwrap_or_else(|| {
                panic!(
                    "no word 'gradient' in {:?}",
                    index.words.iter().map(|w| &w.text).collect::<Vec<_>>()
                )
            });
        assert!(word.confidence > 0.8, "{word:?}");
        // The OCR box contains the drawn glyphs (a pixel or two of slack) and is not much bigger.
        assert!(
            word.bbox.contains_box(&expect, 0.004),
            "{o:?}: ocr {:?} drawn {expect:?}",
            word.bbox
        );
        assert!(
            word.bbox.area() < expect.area() * 1.6,
            "{o:?}: ocr {:?} drawn {expect:?}",
            word.bbox
        );
    }
}

#[test]
fn blank_page_has_no_words() {
    let mut indexer = Indexer::new(&IndexOptions::default()).unwrap();
    let png = encode(&scan_noise(&blank_page(), 1, 4.0), image::ImageFormat::Png);
    let index = indexer.index_page(&png, Format::Png, 1).unwrap();
    assert!(index.words.len() <= 1, "{:?}", index.words);
    assert!(index.ink < 0.001);
    assert_eq!(index.orientation, Orientation::Up);
}

#[test]
fn without_ocr_no_words_are_read() {
    let mut indexer = Indexer::new(&IndexOptions {
        ocr: false,
        ..IndexOptions::default()
    })
    .unwrap();
    let png = encode(&typeset_page().image, image::ImageFormat::Png);
    let index = indexer.index_page(&png, Format::Png, 1).unwrap();
    assert_eq!(index.text_source, TextSource::None);
    assert!(index.words.is_empty());
    assert!(index.ink > 0.005 && index.ink < 0.2, "{}", index.ink);
    let json = serde_json::to_value(&index).unwrap();
    assert_eq!(json["textSource"], "none");
    assert_eq!(json["orientation"], 0);
    assert!(json.get("widthPx").is_some());
}

#[test]
fn missing_language_data_is_a_clear_error() {
    let err = Indexer::new(&IndexOptions {
        language: "xx_nonexistent".into(),
        ..IndexOptions::default()
    })
    .unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(err, examkit_scan::ScanError::OcrUnavailable(_)),
        "{err:?}"
    );
    assert!(text.contains("tesseract-ocr-xx_nonexistent"), "{text}");
}
