//! Decoding images and PDFs into displayed-orientation rasters, and refusing bad input.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;
use examkit_scan::{Format, IndexOptions, Indexer, ScanError, TextSource, page_count, render_page};
use image::{GrayImage, ImageFormat, Luma};

/// A 300x200 page, dark square in the top-left corner, grey bar along the bottom.
fn marker_page() -> GrayImage {
    let mut img = GrayImage::from_pixel(300, 200, Luma([255]));
    for y in 10..60 {
        for x in 10..60 {
            img.put_pixel(x, y, Luma([0]));
        }
    }
    for y in 170..190 {
        for x in 0..300 {
            img.put_pixel(x, y, Luma([100]));
        }
    }
    img
}

fn assert_marker(img: &GrayImage) {
    assert_eq!(img.dimensions(), (300, 200));
    assert!(
        dark_in(img, 0.05, 0.07, 0.18, 0.28) > 0.9,
        "marker not at top-left"
    );
    assert!(
        dark_in(img, 0.82, 0.07, 0.95, 0.28) < 0.01,
        "top-right should be blank"
    );
    assert!(
        img.get_pixel(150, 180).0[0].abs_diff(100) < 12,
        "bar not at the bottom"
    );
}

#[test]
fn decodes_png_jpeg_and_webp() {
    let page = marker_page();
    for (fmt, image_format) in [
        (Format::Png, ImageFormat::Png),
        (Format::Jpeg, ImageFormat::Jpeg),
        (Format::Webp, ImageFormat::WebP),
    ] {
        let bytes = encode(&page, image_format);
        assert_eq!(Format::sniff(&bytes), Some(fmt));
        assert_eq!(page_count(&bytes, fmt).unwrap(), 1);
        let img = render_page(&bytes, fmt, 1, 150).unwrap();
        assert_marker(&img);
    }
}

#[test]
fn colour_images_become_gray() {
    let rgb = image::RgbImage::from_fn(40, 30, |x, _| {
        if x < 20 {
            image::Rgb([200, 0, 0])
        } else {
            image::Rgb([255, 255, 255])
        }
    });
    let mut bytes = std::io::Cursor::new(Vec::new());
    rgb.write_to(&mut bytes, ImageFormat::Png).unwrap();
    let img = render_page(bytes.get_ref(), Format::Png, 1, 150).unwrap();
    assert_eq!(img.dimensions(), (40, 30));
    assert!(img.get_pixel(5, 5).0[0] < 100 && img.get_pixel(35, 5).0[0] == 255);
}

#[test]
fn jpeg_exif_orientation_is_applied() {
    let displayed = marker_page();
    // EXIF orientation 6: the stored pixels must be turned 90 degrees clockwise for display,
    // so store the page turned 90 degrees counter-clockwise.
    let stored = image::imageops::rotate270(&displayed);
    let jpeg = with_exif_orientation(&encode(&stored, ImageFormat::Jpeg), 6);
    assert_marker(&render_page(&jpeg, Format::Jpeg, 1, 150).unwrap());
    // Orientation 3: upside down; 8: turned the other way.
    let jpeg = with_exif_orientation(
        &encode(&image::imageops::rotate180(&displayed), ImageFormat::Jpeg),
        3,
    );
    assert_marker(&render_page(&jpeg, Format::Jpeg, 1, 150).unwrap());
    let jpeg = with_exif_orientation(
        &encode(&image::imageops::rotate90(&displayed), ImageFormat::Jpeg),
        8,
    );
    assert_marker(&render_page(&jpeg, Format::Jpeg, 1, 150).unwrap());
}

#[test]
fn pdf_rotate_90_is_displayed_landscape_with_text_layer_boxes() {
    let pdf = pdf_with_text(&[
        (
            0,
            vec![(72.0, 700.0, 24.0, "Find the gradient of the line")],
        ),
        (
            90,
            vec![(72.0, 700.0, 24.0, "Find the gradient of the line")],
        ),
    ]);
    assert_eq!(page_count(&pdf, Format::Pdf).unwrap(), 2);
    let upright = render_page(&pdf, Format::Pdf, 1, 72).unwrap();
    assert_eq!(upright.dimensions(), (595, 842));
    assert_eq!(
        render_page(&pdf, Format::Pdf, 1, 150).unwrap().dimensions(),
        (1240, 1754)
    );
    let turned = render_page(&pdf, Format::Pdf, 2, 72).unwrap();
    assert_eq!(turned.dimensions(), (842, 595));
    // The text starts at user point (72, 700): on the unrotated page that is (72, 142) from the
    // top-left; turned 90 degrees clockwise it is (842 - 142, 72) = (700, 72) and runs down.
    assert!(
        dark_in(
            &turned,
            680.0 / 842.0,
            75.0 / 595.0,
            705.0 / 842.0,
            300.0 / 595.0
        ) > 0.02
    );
    assert!(dark_in(&turned, 0.0, 0.0, 0.5, 1.0) < 0.001);

    let mut indexer = Indexer::new(&IndexOptions {
        ocr: false,
        ..IndexOptions::default()
    })
    .unwrap();
    let index = indexer.index_page(&pdf, Format::Pdf, 2).unwrap();
    assert_eq!(index.text_source, TextSource::TextLayer);
    assert_eq!(index.orientation, examkit_scan::Orientation::Right);
    assert_eq!((index.width_px, index.height_px), (1754, 1240));
    let word = index
        .words
        .iter()
        .find(|w| w.text == "gradient")
        .expect("word from the text layer");
    assert_eq!(word.confidence, 1.0);
    // A tall, narrow box near the right edge, below the start of the line.
    assert!(word.bbox.height > word.bbox.width * 2.0, "{:?}", word.bbox);
    assert!(
        word.bbox.x > 0.78 && word.bbox.right() < 0.86,
        "{:?}",
        word.bbox
    );
    // It must cover the ink of the word on the rendered page.
    let img = render_page(&pdf, Format::Pdf, 2, 150).unwrap();
    let b = word.bbox;
    assert!(dark_in(&img, b.x, b.y, b.right(), b.bottom()) > 0.05);
    let words: Vec<&str> = index.words.iter().map(|w| w.text.as_str()).collect();
    assert_eq!(words, ["Find", "the", "gradient", "of", "the", "line"]);

    let first = indexer.index_page(&pdf, Format::Pdf, 1).unwrap();
    assert_eq!(first.orientation, examkit_scan::Orientation::Up);
    let w = first.words.iter().find(|w| w.text == "gradient").unwrap();
    assert!(
        w.bbox.width > w.bbox.height && (w.bbox.y - 0.16).abs() < 0.03,
        "{:?}",
        w.bbox
    );
}

#[test]
fn scanned_pdf_without_text_is_ocred() {
    let page = typeset_page();
    let pdf = pdf_with_image(&page.image);
    let mut indexer = Indexer::new(&IndexOptions::default()).unwrap();
    let index = indexer.index_page(&pdf, Format::Pdf, 1).unwrap();
    assert_eq!(index.text_source, TextSource::Ocr);
    assert!(index.words.iter().any(|w| w.text == "gradient"));
}

#[test]
fn curl_example_pdfs_render() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/curl");
    for name in ["student-script.pdf", "mark-scheme.pdf"] {
        let Ok(bytes) = std::fs::read(dir.join(name)) else {
            continue;
        };
        let n = page_count(&bytes, Format::Pdf).unwrap();
        assert!(n >= 1);
        let img = render_page(&bytes, Format::Pdf, 1, 100).unwrap();
        assert!(img.width() > 100 && img.height() > 100);
        assert!(matches!(
            render_page(&bytes, Format::Pdf, n + 1, 100),
            Err(ScanError::PageOutOfRange { .. })
        ));
    }
}

#[test]
fn corrupt_input_is_an_error_not_a_panic() {
    let garbage = b"this is not an image at all, just some bytes".to_vec();
    for fmt in [Format::Pdf, Format::Png, Format::Jpeg, Format::Webp] {
        assert!(
            matches!(page_count(&garbage, fmt), Err(ScanError::Unreadable(_))),
            "{fmt:?}"
        );
        assert!(
            matches!(
                render_page(&garbage, fmt, 1, 150),
                Err(ScanError::Unreadable(_))
            ),
            "{fmt:?}"
        );
    }
    // Truncated files.
    let png = encode(&marker_page(), ImageFormat::Png);
    assert!(matches!(
        render_page(&png[..png.len() / 2], Format::Png, 1, 150),
        Err(ScanError::Unreadable(_))
    ));
    let jpeg = encode(&marker_page(), ImageFormat::Jpeg);
    let cut = render_page(&jpeg[..jpeg.len() / 3], Format::Jpeg, 1, 150);
    assert!(matches!(cut, Err(ScanError::Unreadable(_)) | Ok(_)));
    let pdf = pdf_with_text(&[(0, vec![(72.0, 700.0, 24.0, "hello")])]);
    assert!(render_page(&pdf[..pdf.len() / 2], Format::Pdf, 1, 150).is_err());
    let mut broken = pdf.clone();
    for b in broken.iter_mut().skip(20).step_by(7) {
        *b = b'#';
    }
    assert!(
        render_page(&broken, Format::Pdf, 1, 150).is_err()
            || page_count(&broken, Format::Pdf).is_ok()
    );
    // Wrong page numbers.
    assert!(matches!(
        render_page(&png, Format::Png, 2, 150),
        Err(ScanError::PageOutOfRange { page: 2, pages: 1 })
    ));
    assert!(matches!(
        render_page(&pdf, Format::Pdf, 0, 150),
        Err(ScanError::PageOutOfRange { .. })
    ));
    assert!(matches!(
        render_page(&pdf, Format::Pdf, 1, 0),
        Err(ScanError::InvalidArgument(_))
    ));
    let mut indexer = Indexer::new(&IndexOptions {
        ocr: false,
        ..IndexOptions::default()
    })
    .unwrap();
    assert!(indexer.index_page(&garbage, Format::Png, 1).is_err());
}

/// A PNG whose header claims 100000 x 100000 pixels (10 gigapixels) followed by a tiny body.
fn png_bomb() -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut crc_input = kind.to_vec();
        crc_input.extend_from_slice(data);
        out.extend_from_slice(&crc_input);
        out.extend_from_slice(&crc32(&crc_input).to_be_bytes());
    }
    let mut out = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&100_000u32.to_be_bytes());
    ihdr.extend_from_slice(&100_000u32.to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]); // 8-bit gray
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(
        &mut out,
        b"IDAT",
        &[0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01],
    );
    chunk(&mut out, b"IEND", &[]);
    out
}

fn replace_once(haystack: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let at = haystack
        .windows(from.len())
        .position(|w| w == from)
        .expect("pattern present");
    [&haystack[..at], to, &haystack[at + from.len()..]].concat()
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn pixel_bombs_are_refused() {
    let bomb = png_bomb();
    let err = render_page(&bomb, Format::Png, 1, 150).unwrap_err();
    assert!(matches!(err, ScanError::TooLarge { .. }), "{err:?}");
    assert!(matches!(
        page_count(&bomb, Format::Png),
        Err(ScanError::TooLarge { .. })
    ));
    let mut indexer = Indexer::new(&IndexOptions {
        ocr: false,
        ..IndexOptions::default()
    })
    .unwrap();
    assert!(matches!(
        indexer.index_page(&bomb, Format::Png, 1),
        Err(ScanError::TooLarge { .. })
    ));

    // A PDF page of 200 x 200 inches at 150 dpi would be 900 megapixels.
    let big = pdf_with_text_sized(&[(0, vec![(72.0, 700.0, 24.0, "big")])], 14_400, 14_400);
    assert_eq!(page_count(&big, Format::Pdf).unwrap(), 1);
    let err = render_page(&big, Format::Pdf, 1, 150).unwrap_err();
    assert!(
        matches!(
            err,
            ScanError::TooLarge {
                width: 30_000,
                height: 30_000,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(matches!(
        indexer.index_page(&big, Format::Pdf, 1),
        Err(ScanError::TooLarge { .. })
    ));
    let pdf = pdf_with_text(&[(0, vec![(72.0, 700.0, 24.0, "big")])]);
    // A small page showing a 20000 x 20000 image (400 megapixels, a few hundred kilobytes
    // compressed) is refused before the renderer decodes it.
    let bomb_image = image::GrayImage::from_pixel(20, 20, image::Luma([255]));
    let image_pdf = pdf_with_image(&bomb_image);
    let image_pdf = replace_once(&image_pdf, b"/Width 20", b"/Width 20000");
    let image_pdf = replace_once(&image_pdf, b"/Height 20", b"/Height 20000");
    let err = render_page(&image_pdf, Format::Pdf, 1, 150).unwrap_err();
    assert!(
        matches!(err, ScanError::TooLarge { width: 20_000, .. }),
        "{err:?}"
    );
    // A normal page at an absurd resolution.
    let err =
        examkit_scan::render_page_limited(&pdf, Format::Pdf, 1, 1200, 10_000_000).unwrap_err();
    assert!(matches!(err, ScanError::TooLarge { .. }), "{err:?}");
}

#[test]
fn degenerate_rasters_do_not_panic() {
    let mut indexer = Indexer::new(&IndexOptions::default()).unwrap();
    for (w, h) in [(0, 0), (1, 1), (5, 3000), (3000, 2)] {
        let img = GrayImage::from_pixel(w, h, Luma([0]));
        let index = indexer.index_image(1, &img).unwrap();
        assert!(index.codes.is_empty());
        let _ = examkit_scan::estimate_orientation(&img);
        let _ = examkit_scan::compare(&img, &img);
    }
}

#[test]
fn sniffing_and_content_types() {
    assert_eq!(
        Format::from_content_type("image/jpeg; charset=binary"),
        Some(Format::Jpeg)
    );
    assert_eq!(
        Format::from_content_type("application/pdf"),
        Some(Format::Pdf)
    );
    assert_eq!(Format::from_content_type("text/plain"), None);
    assert_eq!(Format::sniff(b"%PDF-1.7\n"), Some(Format::Pdf));
    assert_eq!(Format::sniff(b"GIF89a"), None);
    assert_eq!(serde_json::to_string(&Format::Webp).unwrap(), "\"webp\"");
}

/// A PDF of A4 pages, one for each entry: `"drawn"` (a line), `"empty"` (no content stream at
/// all) or `"broken"` (a content stream that claims to be a JPEG).
fn pdf_with_contents(pages: &[&str]) -> Vec<u8> {
    use lopdf::{Document, Object, Stream, dictionary};
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let mut kids = Vec::new();
    for &kind in pages {
        let stream = if kind == "broken" {
            let mut s = Stream::new(
                dictionary! { "Filter" => "DCTDecode" },
                b"these bytes are not a JPEG".to_vec(),
            );
            s.allows_compression = false;
            s
        } else {
            Stream::new(dictionary! {}, b"0 0 m 100 100 l S".to_vec())
        };
        let mut page = dictionary! { "Type" => "Page", "Parent" => pages_id };
        if kind != "empty" {
            page.set("Contents", doc.add_object(stream));
        }
        let page_id = doc.add_object(page);
        kids.push(page_id.into());
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => kids,
            "Count" => count,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

/// Bytes that look random (a fixed xorshift sequence).
fn noise(len: usize) -> Vec<u8> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

#[test]
fn check_pages_accepts_what_indexing_reads() {
    use examkit_scan::{DEFAULT_MAX_PIXELS, check_pages};
    let page = marker_page();
    for (fmt, image_format) in [
        (Format::Png, ImageFormat::Png),
        (Format::Jpeg, ImageFormat::Jpeg),
        (Format::Webp, ImageFormat::WebP),
    ] {
        let bytes = encode(&page, image_format);
        assert_eq!(
            check_pages(&bytes, fmt, 150, DEFAULT_MAX_PIXELS, 80).unwrap(),
            1
        );
    }
    let pdf = pdf_with_text(&[
        (0, vec![(72.0, 700.0, 24.0, "one")]),
        (90, vec![(72.0, 700.0, 24.0, "two")]),
        (0, vec![]),
    ]);
    assert_eq!(
        check_pages(&pdf, Format::Pdf, 150, DEFAULT_MAX_PIXELS, 80).unwrap(),
        3
    );
    // A page without any content stream is a blank page, not a broken one.
    let blank = pdf_with_contents(&["empty", "drawn"]);
    assert_eq!(
        check_pages(&blank, Format::Pdf, 150, DEFAULT_MAX_PIXELS, 80).unwrap(),
        2
    );
}

#[test]
fn check_pages_refuses_what_indexing_cannot_read() {
    use examkit_scan::{DEFAULT_MAX_PIXELS, check_pages};
    let check = |bytes: &[u8], fmt| check_pages(bytes, fmt, 150, DEFAULT_MAX_PIXELS, 80);

    // A JPEG signature followed by noise.
    let mut fake_jpeg = vec![0xFF, 0xD8, 0xFF];
    fake_jpeg.extend(noise(20_000));
    let err = check(&fake_jpeg, Format::Jpeg).unwrap_err();
    assert!(matches!(err, ScanError::Unreadable(_)), "{err:?}");
    // A PNG signature followed by noise, and a PNG cut in half.
    let mut fake_png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    fake_png.extend(noise(20_000));
    assert!(matches!(
        check(&fake_png, Format::Png),
        Err(ScanError::Unreadable(_))
    ));
    let png = encode(&marker_page(), ImageFormat::Png);
    assert!(matches!(
        check(&png[..png.len() / 2], Format::Png),
        Err(ScanError::Unreadable(_))
    ));
    // A header that declares 10 gigapixels is refused from the header alone: checking it takes
    // no more memory than the file.
    let started = std::time::Instant::now();
    let err = check(&png_bomb(), Format::Png).unwrap_err();
    assert!(
        matches!(
            err,
            ScanError::TooLarge {
                width: 100_000,
                height: 100_000,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // The pixel limit is the caller's: a 300x200 page is too large for a limit of 50,000.
    assert!(matches!(
        check_pages(&png, Format::Png, 150, 50_000, 80),
        Err(ScanError::TooLarge {
            width: 300,
            height: 200,
            ..
        })
    ));
    // A PDF page too large at the indexing resolution, and one whose embedded image is a bomb.
    let big = pdf_with_text_sized(&[(0, vec![(72.0, 700.0, 24.0, "big")])], 14_400, 14_400);
    assert!(matches!(
        check(&big, Format::Pdf),
        Err(ScanError::TooLarge { .. })
    ));
    let image_pdf = pdf_with_image(&image::GrayImage::from_pixel(20, 20, Luma([255])));
    assert_eq!(check(&image_pdf, Format::Pdf).unwrap(), 1);
    let image_pdf = replace_once(&image_pdf, b"/Width 20", b"/Width 20000");
    let image_pdf = replace_once(&image_pdf, b"/Height 20", b"/Height 20000");
    assert!(matches!(
        check(&image_pdf, Format::Pdf),
        Err(ScanError::TooLarge { width: 20_000, .. })
    ));
    // A PDF whose third page's content cannot be decoded names that page; over the page limit,
    // it is only counted (the caller refuses it by its count).
    let broken = pdf_with_contents(&["drawn", "empty", "broken", "drawn"]);
    assert_eq!(
        check_pages(&broken, Format::Pdf, 150, DEFAULT_MAX_PIXELS, 3).unwrap(),
        4
    );
    match check(&broken, Format::Pdf) {
        Err(ScanError::Unreadable(message)) => assert!(message.starts_with("page 3:"), "{message}"),
        other => panic!("expected page 3 to be unreadable, got {other:?}"),
    }
    // Not a PDF, and a PDF with no pages.
    assert!(matches!(
        check(b"%PDF-1.4\n", Format::Pdf),
        Err(ScanError::Unreadable(_))
    ));
    assert!(matches!(
        check(&noise(1000), Format::Pdf),
        Err(ScanError::Unreadable(_))
    ));
}
