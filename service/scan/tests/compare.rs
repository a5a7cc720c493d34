//! Comparing scanned work pages with the clean reference page.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;
use examkit_scan::{NormBox, Orientation, compare};
use image::GrayImage;

const ANSWER: &[&str] = &["m = (13 - 5) / (6 - 2)", "   = 8 / 4 = 2", "so y = 2x + 1"];

/// The clean page, and the same page with a handwritten answer in the empty lower half.
fn pages() -> (GrayImage, GrayImage, PxBox) {
    let reference = typeset_page().image;
    let mut work = reference.clone();
    let written = write_answer(&mut work, 200.0, 1150.0, ANSWER);
    (reference, work, written)
}

/// A pixel box on the upright page, as a normalized box after `rotate_small(degrees)` and a
/// turn by `o`.
fn moved_box(b: PxBox, degrees: f64, o: Orientation) -> NormBox {
    let (w, h) = (PAGE_W as f64, PAGE_H as f64);
    let corners = [(b.0, b.1), (b.2, b.1), (b.2, b.3), (b.0, b.3)]
        .map(|(x, y)| rotate_point(x as f64, y as f64, w, h, degrees));
    let xs = corners.map(|c| c.0);
    let ys = corners.map(|c| c.1);
    let nb = NormBox::from_pixels(
        xs.iter().cloned().fold(f64::MAX, f64::min),
        ys.iter().cloned().fold(f64::MAX, f64::min),
        xs.iter().cloned().fold(f64::MIN, f64::max),
        ys.iter().cloned().fold(f64::MIN, f64::max),
        w,
        h,
    );
    match o {
        Orientation::Up => nb,
        Orientation::Right => {
            NormBox::from_corners(1.0 - nb.bottom(), nb.x, 1.0 - nb.y, nb.right())
        }
        Orientation::Down => {
            NormBox::from_corners(1.0 - nb.right(), 1.0 - nb.bottom(), 1.0 - nb.x, 1.0 - nb.y)
        }
        Orientation::Left => NormBox::from_corners(nb.y, 1.0 - nb.right(), nb.bottom(), 1.0 - nb.x),
    }
}

fn turn(img: &GrayImage, o: Orientation) -> GrayImage {
    match o {
        Orientation::Up => img.clone(),
        Orientation::Right => image::imageops::rotate90(img),
        Orientation::Down => image::imageops::rotate180(img),
        Orientation::Left => image::imageops::rotate270(img),
    }
}

#[test]
fn clean_scan_adds_nothing() {
    let (reference, _, _) = pages();
    let scan = scan_noise(&rotate_small(&reference, 1.5), 17, 8.0);
    let c = compare(&scan, &reference);
    println!("{c:?}");
    assert!(c.aligned, "{}", c.note);
    assert_eq!(c.rotation, Orientation::Up);
    assert!((c.skew_degrees - 1.5).abs() < 0.3, "{c:?}");
    assert!(c.added_fraction < 0.0003, "{c:?}");
    let area: f64 = c.added_regions.iter().map(|r| r.area()).sum();
    assert!(area < 0.002, "{c:?}");
}

#[test]
fn clean_scan_upside_down_and_smaller_adds_nothing() {
    let (reference, _, _) = pages();
    // Scanned upside down, slightly reduced (printed at 97%) and offset on the glass.
    let small = image::imageops::resize(
        &reference,
        1203,
        1701,
        image::imageops::FilterType::Triangle,
    );
    let mut placed = blank_page();
    paste(&mut placed, &small, 25, 30);
    let scan = scan_noise(
        &turn(&rotate_small(&placed, -1.0), Orientation::Down),
        23,
        8.0,
    );
    let c = compare(&scan, &reference);
    println!("{c:?}");
    assert!(c.aligned, "{}", c.note);
    assert_eq!(c.rotation, Orientation::Down);
    assert!((c.scale - 0.97).abs() < 0.01, "{c:?}");
    assert!(c.added_fraction < 0.0003, "{c:?}");
}

fn check_handwriting_found(o: Orientation, degrees: f64) {
    let (reference, work, written) = pages();
    let scan = scan_noise(&turn(&rotate_small(&work, degrees), o), 29, 8.0);
    let c = compare(&scan, &reference);
    println!("{o:?} {degrees}: {c:?}");
    assert!(c.aligned, "{}", c.note);
    assert_eq!(c.rotation, o);
    let expected = moved_box(written, degrees, o);
    // The regions (one per written line) together span the handwriting...
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
    let covered = span.intersection_area(&expected);
    assert!(
        covered > 0.85 * expected.area(),
        "span {span:?} of {expected:?}: {c:?}"
    );
    assert!(
        span.area() < 1.3 * expected.area(),
        "span {span:?} of {expected:?}: {c:?}"
    );
    // ...and nothing else of note.
    for r in &c.added_regions {
        assert!(
            r.intersects(&expected) || r.area() < 0.0005,
            "stray region {r:?}: {c:?}"
        );
    }
    assert!(
        c.added_fraction > 0.0005 && c.added_fraction < 0.01,
        "{c:?}"
    );
}

#[test]
fn handwriting_is_found_upright() {
    check_handwriting_found(Orientation::Up, 1.5);
}

#[test]
fn handwriting_is_found_on_a_turned_scan() {
    check_handwriting_found(Orientation::Right, -1.0);
    check_handwriting_found(Orientation::Down, 2.0);
}

#[test]
fn faint_pencil_is_found() {
    let (reference, mut work, _) = pages();
    let font = handwriting_font();
    let b = draw_text_with(&mut work, &font, 48.0, 650.0, 1400.0, "x = 3, y = 2", 150);
    let scan = scan_noise(&rotate_small(&work, 0.7), 31, 7.0);
    let c = compare(&scan, &reference);
    println!("{c:?}");
    assert!(c.aligned, "{}", c.note);
    let pencil = moved_box(b, 0.7, Orientation::Up);
    assert!(
        c.added_regions
            .iter()
            .any(|r| r.intersection_area(&pencil) > 0.5 * pencil.area()),
        "{pencil:?}: {c:?}"
    );
}

#[test]
fn a_different_page_does_not_align() {
    let (reference, _, _) = pages();
    let other = scan_noise(&handwriting_page(), 3, 6.0);
    let c = compare(&other, &reference);
    println!("{c:?}");
    assert!(!c.aligned, "{c:?}");
    assert!(c.added_regions.is_empty());
    assert!(c.note.contains("alignment failed"));
}

#[test]
fn tiny_or_odd_inputs_do_not_panic() {
    let (reference, _, _) = pages();
    let tiny = GrayImage::new(3, 3);
    assert!(!compare(&tiny, &reference).aligned);
    assert!(!compare(&reference, &tiny).aligned);
    let landscape = GrayImage::from_pixel(3000, 400, image::Luma([255]));
    assert!(!compare(&landscape, &reference).aligned);
    // A blank reference: everything on the work page is added.
    let blank = blank_page();
    let c = compare(&pages().1, &blank);
    assert!(c.aligned && c.added_fraction > 0.01, "{c:?}");
}
