//! Time taken to align and compare one A4 page at 150 dpi, per kind of page, on one thread
//! (prints figures, asserts nothing).
//!
//! ```text
//! cargo run --release -p examkit-scan --example align_bench -- 5
//! ```
//!
//! The pages are page 2 of `tests/fixtures/question-paper.pdf` (a typst question paper with its
//! page code and ruled answer lines) with a handwritten answer: as is; scanned (1.8 degrees
//! askew at 96 % on a grey bed, grey paper, noise of σ 10, blur, JPEG at 60), also turned a
//! quarter; photographed (perspective, a dark table, light falling off, JPEG at 75), also
//! upside down. The figure is the time of `compare` alone (decoding excluded): the least and
//! the median of the rounds.
//!
//! Then indexing throughput with and without the comparison, in one run: each page as uploaded
//! (JPEG) indexed as the service indexes it (OCR on, one thread: run with `OMP_THREAD_LIMIT=1`),
//! alone, and with the clean page rendered from the PDF, the comparison and the split into
//! lines that indexing adds; the ratio of the two throughputs.
#![allow(clippy::unwrap_used, missing_docs)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use common::*;
use examkit_scan::{Format, IndexOptions, Indexer, compare, compare_with_ink, render_page};
use image::GrayImage;

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5)
        .max(1);
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/question-paper.pdf");
    let pdf = std::fs::read(fixture).unwrap();
    let clean = render_page(&pdf, Format::Pdf, 2, 150).unwrap();
    let mut work = clean.clone();
    write_answer(&mut work, 180.0, 425.0, &["fg(3) = f(4/2)", "= f(2) = 7"]);
    write_answer(
        &mut work,
        200.0,
        1050.0,
        &["y = 4/(x - 1)", "x = (y + 4)/y"],
    );

    let grey = GrayImage::from_fn(work.width(), work.height(), |x, y| {
        let k = 0.92 + 0.02 * ((x as f64 / 300.0).sin() * (y as f64 / 410.0).cos());
        image::Luma([(f64::from(work.get_pixel(x, y).0[0]) * k) as u8])
    });
    let scanner = jpeg_round_trip(
        &scan_noise(&on_bed(&grey, 1.8, 0.96, -14.0, 9.0, 150), 5, 10.0),
        60,
    );
    let corners = [
        (150.0, 130.0),
        (1100.0, 160.0),
        (1150.0, 1640.0),
        (95.0, 1610.0),
    ];
    let photo = jpeg_round_trip(
        &scan_noise(&photograph(&work, corners, 70, 0.2), 9, 5.0),
        75,
    );
    let pages: Vec<(&str, GrayImage)> = vec![
        ("clean page with writing", work.clone()),
        ("scanner: skew, bed, noise, JPEG 60", scanner.clone()),
        (
            "scanner, turned 90 degrees",
            image::imageops::rotate90(&scanner),
        ),
        ("photo: perspective, table, light", photo.clone()),
        ("photo, upside down", image::imageops::rotate180(&photo)),
    ];
    println!("{rounds} rounds per page; compare() of a 1240 x 1754 page against its clean page");
    for (name, page) in &pages {
        let mut times = Vec::with_capacity(rounds);
        let mut last = None;
        for _ in 0..rounds {
            let t = Instant::now();
            let c = compare(page, &clean);
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            last = Some(c);
        }
        times.sort_by(f64::total_cmp);
        let c = last.unwrap();
        println!(
            "{name:38} min {:6.1} ms, median {:6.1} ms; aligned {}, {} regions; {}",
            times[0],
            times[times.len() / 2],
            c.aligned,
            c.added_regions.len(),
            c.note
        );
    }

    let mut indexer = Indexer::new(&IndexOptions {
        ocr: true,
        ..IndexOptions::default()
    })
    .unwrap();
    println!("\nindexing with OCR, one thread, {rounds} rounds per page (JPEG as uploaded)");
    let (mut alone, mut with) = (0.0f64, 0.0f64);
    for (name, page) in &pages {
        let bytes = jpeg_bytes(page, 85);
        indexer.index_page(&bytes, Format::Jpeg, 1).unwrap();
        let t = Instant::now();
        for _ in 0..rounds {
            indexer.index_page(&bytes, Format::Jpeg, 1).unwrap();
        }
        let a = t.elapsed().as_secs_f64() / rounds as f64;
        let t = Instant::now();
        for _ in 0..rounds {
            let (_, raster) = indexer
                .index_page_with_raster(&bytes, Format::Jpeg, 1)
                .unwrap();
            let reference = render_page(&pdf, Format::Pdf, 2, 150).unwrap();
            let (c, ink) = compare_with_ink(&raster, &reference);
            if let Some(ink) = ink {
                std::hint::black_box(ink.lines_of(&c));
            }
        }
        let w = t.elapsed().as_secs_f64() / rounds as f64;
        alone += a;
        with += w;
        println!(
            "{name:38} alone {:6.1} ms, with comparison {:6.1} ms: {:.2}x the throughput",
            a * 1000.0,
            w * 1000.0,
            a / w
        );
    }
    println!(
        "{:38} alone {:6.2} pages/s, with comparison {:6.2} pages/s: {:.2}x the throughput",
        "every page",
        pages.len() as f64 / alone,
        pages.len() as f64 / with,
        alone / with
    );
}

fn jpeg_bytes(page: &GrayImage, quality: u8) -> Vec<u8> {
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(page)
        .unwrap();
    out
}
