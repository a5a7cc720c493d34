//! Throughput figures for page indexing on one thread (prints, does not assert).
//!
//! Run with OpenMP limited to one thread, in release mode:
//!
//! ```text
//! OMP_THREAD_LIMIT=1 cargo run --release -p examkit-scan --example index_bench
//! ```
#![allow(clippy::unwrap_used, missing_docs)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use common::*;
use examkit_scan::{Format, IndexOptions, Indexer, compare, openmp_thread_limit, render_page};

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3);
    println!("OMP_THREAD_LIMIT = {:?}", openmp_thread_limit());

    // A question-paper page with its code, scanned (noise, 1 degree skew), as PNG and JPEG.
    let mut paper = typeset_page().image;
    paste(
        &mut paper,
        &qr_image("EXK1:qp:7f1c2a9e-3b4d-4e5f-8a6b-0c1d2e3f4a5b:3:7", 4),
        PAGE_W - 170,
        30,
    );
    let mut answered = paper.clone();
    write_answer(
        &mut answered,
        200.0,
        1150.0,
        &["m = (13 - 5) / (6 - 2)", "   = 8 / 4 = 2", "so y = 2x + 1"],
    );
    let scan = scan_noise(&rotate_small(&answered, 1.0), 5, 6.0);
    let upside_down = image::imageops::rotate180(&scan_noise(
        &rotate_small(&handwriting_page(), -1.0),
        6,
        6.0,
    ));
    let pdf = pdf_with_text(&[(
        0,
        vec![
            (
                72.0,
                760.0,
                12.0,
                "1 The line L passes through A(2, 5) and B(6, 13).",
            ),
            (72.0, 740.0, 12.0, "(a) Find the gradient of L."),
        ],
    )]);
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/question-paper.pdf");
    let question_paper = std::fs::read(fixture).unwrap();
    let inputs: Vec<(&str, Vec<u8>, Format)> = vec![
        (
            "typst question paper PDF, page 1",
            question_paper,
            Format::Pdf,
        ),
        (
            "scanned question page, PNG 150 dpi",
            encode(&scan, image::ImageFormat::Png),
            Format::Png,
        ),
        (
            "scanned question page, JPEG 150 dpi",
            encode(&scan, image::ImageFormat::Jpeg),
            Format::Jpeg,
        ),
        (
            "handwriting page upside down, PNG",
            encode(&upside_down, image::ImageFormat::Png),
            Format::Png,
        ),
        ("PDF page with a text layer", pdf, Format::Pdf),
    ];

    for ocr in [false, true] {
        let mut indexer = Indexer::new(&IndexOptions {
            ocr,
            ..IndexOptions::default()
        })
        .unwrap();
        println!("\nindexing, ocr = {ocr}, dpi = 150, one thread");
        let mut total_pages = 0usize;
        let mut total_secs = 0.0f64;
        for (name, bytes, format) in &inputs {
            // Warm up once, then time.
            let first = indexer.index_page(bytes, *format, 1).unwrap();
            let start = Instant::now();
            for _ in 0..rounds {
                indexer.index_page(bytes, *format, 1).unwrap();
            }
            let secs = start.elapsed().as_secs_f64();
            total_pages += rounds;
            total_secs += secs;
            println!(
                "  {name:<40} {:>7.1} ms/page  {:>6.2} pages/s  (orientation {}, {} words, {} codes)",
                secs * 1000.0 / rounds as f64,
                rounds as f64 / secs,
                first.orientation.degrees(),
                first.words.len(),
                first.codes.len()
            );
        }
        println!(
            "  all inputs: {:.2} pages/s",
            total_pages as f64 / total_secs
        );
    }

    let reference = render_page(
        &encode(&paper, image::ImageFormat::Png),
        Format::Png,
        1,
        150,
    )
    .unwrap();
    let start = Instant::now();
    let mut last = None;
    for _ in 0..rounds {
        last = Some(compare(&scan, &reference));
    }
    let secs = start.elapsed().as_secs_f64();
    let c = last.unwrap();
    println!(
        "\ncompare (A4, 150 dpi): {:.1} ms/page, {} regions, added {:.4}",
        secs * 1000.0 / rounds as f64,
        c.added_regions.len(),
        c.added_fraction
    );
}
