//! Comparing scanned work pages with the clean reference page.
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use common::*;
use examkit_scan::{Comparison, FitKind, NormBox, Orientation, compare, compare_with_ink_except};
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
fn a_covered_code_is_left_out_of_the_ink_the_scan_must_carry() {
    // A page whose code holds most of its print, scanned with the code under a sticker.
    let (mut reference, _, _) = pages();
    let code = qr_image("EXK1 copy 017 page 3 of 12", 16);
    let x = PAGE_W - code.width() - 40;
    paste(&mut reference, &code, x, 40);
    let mut work = reference.clone();
    for yy in 40..40 + code.height() {
        for xx in x..x + code.width() {
            work.put_pixel(xx, yy, image::Luma([255]));
        }
    }
    let work = scan_noise(&rotate_small(&work, 0.8), 5, 6.0);
    let plain = compare(&work, &reference);
    assert!(!plain.aligned, "the code was most of the ink: {plain:?}");
    assert!(
        plain.note.contains("of the reference's ink matches"),
        "{plain:?}"
    );
    let code_box = NormBox::from_pixels(
        f64::from(x),
        40.0,
        f64::from(x + code.width()),
        f64::from(40 + code.height()),
        f64::from(PAGE_W),
        f64::from(PAGE_H),
    );
    let (left_out, ink) = compare_with_ink_except(&work, &reference, &[code_box]);
    assert!(left_out.aligned, "{left_out:?}");
    assert!(ink.is_some());
    assert!(left_out.coverage > 0.9, "{left_out:?}");
    assert!(
        left_out.added_regions.is_empty(),
        "a sticker adds no ink: {left_out:?}"
    );
    // A different page stays different however much of it is left out.
    let other = scan_noise(&handwriting_page(), 3, 6.0);
    let (different, _) = compare_with_ink_except(&other, &reference, &[code_box]);
    assert!(!different.aligned, "{different:?}");
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

/// A greyscale flatbed scan as schools send them: greyish paper, the page at `scale` of its size
/// askew on a grey bed, blurred, with noise, through JPEG.
fn bed_scan(work: &GrayImage, degrees: f64, scale: f64, seed: u64) -> GrayImage {
    let tone = GrayImage::from_fn(work.width(), work.height(), |x, y| {
        // Paper at 92 % with a slow unevenness of 2 %.
        let k = 0.92 + 0.02 * ((x as f64 / 300.0).sin() * (y as f64 / 410.0).cos());
        image::Luma([(f64::from(work.get_pixel(x, y).0[0]) * k) as u8])
    });
    let placed = on_bed(&tone, degrees, scale, -14.0, 9.0, 150);
    jpeg_round_trip(&scan_noise(&placed, seed, 8.0), 70)
}

#[test]
fn a_grey_scan_on_a_bed_aligns_and_the_bed_is_not_ink() {
    let (reference, work, written) = pages();
    for (degrees, scale, seed) in [(1.5, 0.955, 5), (-1.2, 0.98, 6), (2.0, 0.965, 7)] {
        let scan = bed_scan(&work, degrees, scale, seed);
        let c = compare(&scan, &reference);
        println!("{degrees} {scale}: {c:?}");
        assert!(c.aligned, "{}", c.note);
        assert_eq!(c.fit, FitKind::Similarity, "{c:?}");
        assert!((c.scale - scale as f32).abs() < 0.005, "{c:?}");
        assert!((c.skew_degrees - degrees as f32).abs() < 0.1, "{c:?}");
        assert!(c.residual_px < 1.0, "{c:?}");
        let (x0, y0, x1, y1) = box_on_bed(
            written,
            PAGE_W as f64,
            PAGE_H as f64,
            degrees,
            scale,
            -14.0,
            9.0,
        );
        let expected = NormBox::from_corners(x0, y0, x1, y1);
        // The writing is found, and nothing else: no band along the bed's edge.
        assert!(
            c.added_regions
                .iter()
                .any(|r| r.intersection_area(&expected) > 0.5 * r.area().min(expected.area())),
            "{expected:?}: {c:?}"
        );
        for r in &c.added_regions {
            assert!(r.intersects(&expected), "stray region {r:?}: {c:?}");
        }
    }
}

#[test]
fn a_photo_aligns_with_perspective_and_carries_boxes() {
    let (reference, work, written) = pages();
    let (w, h) = (PAGE_W as f64, PAGE_H as f64);
    // Seen from a camera tilted towards the top of the page, turned a little, on a dark table.
    let corners = [
        (150.0, 130.0),
        (1100.0, 160.0),
        (1150.0, 1640.0),
        (95.0, 1610.0),
    ];
    let photo = jpeg_round_trip(
        &scan_noise(&photograph(&work, corners, 70, 0.2), 9, 5.0),
        80,
    );
    let c = compare(&photo, &reference);
    println!("{c:?}");
    assert!(c.aligned, "{}", c.note);
    assert_eq!(c.fit, FitKind::Homography, "{c:?}");
    assert!(c.residual_px < 1.5, "{c:?}");
    // The answer's box on the clean page, carried to the photo, is where the photo shows it.
    let map = homography([(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)], corners);
    let pts = [
        (written.0, written.1),
        (written.2, written.1),
        (written.2, written.3),
        (written.0, written.3),
    ]
    .map(|(x, y)| apply_homography(&map, x as f64, y as f64));
    let (x0, y0, x1, y1) = corners_box(&pts, w, h);
    let truth = NormBox::from_corners(x0, y0, x1, y1);
    let clean_box = NormBox::from_pixels(
        written.0 as f64,
        written.1 as f64,
        written.2 as f64,
        written.3 as f64,
        w,
        h,
    );
    let carried = c.to_work(&clean_box).unwrap();
    for (a, b) in [
        (carried.x, truth.x),
        (carried.y, truth.y),
        (carried.right(), truth.right()),
        (carried.bottom(), truth.bottom()),
    ] {
        assert!((a - b).abs() < 0.003, "{carried:?} vs {truth:?}");
    }
    let back = c.to_clean(&truth).unwrap();
    assert!(
        back.intersection_area(&clean_box) > 0.9 * clean_box.area(),
        "{back:?}"
    );
    assert!(
        c.added_regions
            .iter()
            .any(|r| r.intersection_area(&truth) > 0.5 * r.area().min(truth.area())),
        "{truth:?}: {c:?}"
    );
    for r in &c.added_regions {
        assert!(r.intersects(&truth), "stray region {r:?}: {c:?}");
    }
}

#[test]
fn a_fit_that_would_add_a_quarter_of_the_page_is_refused() {
    let (reference, mut work, _) = pages();
    // A dark sheet over the lower half of the page (a hand, a folder): the print above still
    // aligns, but a fit that makes a third of the page "added" cannot be trusted.
    for y in 950..1754 {
        for x in 0..PAGE_W {
            work.put_pixel(x, y, image::Luma([40]));
        }
    }
    let c = compare(&scan_noise(&work, 4, 5.0), &reference);
    println!("{c:?}");
    assert!(!c.aligned, "{c:?}");
    assert!(c.note.contains("added ink"), "{}", c.note);
    assert!(c.added_regions.is_empty() && c.transform.is_none());
}

#[test]
fn added_ink_splits_into_the_written_lines() {
    let font = handwriting_font();
    let reference = typeset_page().image;
    let lines = [
        "gradient = 8/4 = 2",
        "y - 5 = 2(x - 2)",
        "so y = 2x + 1",
        "which is the line",
        "as required",
    ];
    for n in 2..=5 {
        let mut work = reference.clone();
        let mut boxes = Vec::new();
        for (i, text) in lines.iter().take(n).enumerate() {
            // Each line a little slanted, as handwriting is: words drawn stepping up.
            let mut x = 200.0;
            let mut b = (f32::MAX, f32::MAX, f32::MIN, f32::MIN);
            for (k, word) in text.split(' ').enumerate() {
                let baseline = 1100.0 + 60.0 * i as f32 - 2.0 * k as f32;
                let wb = draw_text_with(&mut work, &font, 44.0, x, baseline, word, 30);
                b = (b.0.min(wb.0), b.1.min(wb.1), b.2.max(wb.2), b.3.max(wb.3));
                x = wb.2 + 18.0;
            }
            boxes.push(b);
        }
        for o in [Orientation::Up, Orientation::Left] {
            let scan = scan_noise(&turn(&rotate_small(&work, 1.0), o), 40 + n as u64, 6.0);
            let (c, ink) = examkit_scan::compare_with_ink(&scan, &reference);
            assert!(c.aligned, "{}", c.note);
            let ink = ink.unwrap();
            let region = moved_box((150.0, 1000.0, 1100.0, 1450.0), 1.0, o);
            let found = ink.lines(&region);
            assert_eq!(found.len(), n, "{n} lines, {o:?}: {found:?}");
            for (k, (got, b)) in found.iter().zip(&boxes).enumerate() {
                let expected = moved_box(*b, 1.0, o);
                assert!(
                    got.intersection_area(&expected) > 0.6 * expected.area(),
                    "line {k} of {n}, {o:?}: {got:?} vs {expected:?}"
                );
            }
            // The same ink, found again from the stored comparison without aligning.
            let json = serde_json::to_string(&c).unwrap();
            let stored: Comparison = serde_json::from_str(&json).unwrap();
            let again = examkit_scan::added_ink(&scan, &reference, &stored).unwrap();
            assert_eq!(again.lines(&region), found);
            assert!((again.share_in(&region) - ink.share_in(&region)).abs() < 1e-9);
            assert!(ink.share_in(&region) > 0.001);
            // Over the printed heading, away from the writing: nothing.
            let heading = moved_box((62.0, 88.0, 372.0, 175.0), 1.0, o);
            assert!(ink.lines(&heading).is_empty(), "{o:?}");
        }
    }
}

#[test]
fn nothing_stored_nothing_recomputed() {
    let (reference, work, _) = pages();
    let failed = compare(&handwriting_page(), &reference);
    assert!(!failed.aligned);
    assert_eq!(failed.fit, FitKind::None);
    assert!(examkit_scan::added_ink(&work, &reference, &failed).is_none());
    let mut legacy = compare(&work, &reference);
    legacy.transform = None;
    legacy.fit = FitKind::Legacy;
    assert!(examkit_scan::added_ink(&work, &reference, &legacy).is_none());
    assert!(
        examkit_scan::added_ink(
            &GrayImage::new(3, 3),
            &reference,
            &compare(&work, &reference)
        )
        .is_none()
    );
}

#[test]
fn scans_at_other_resolutions_and_photo_frames_align() {
    let (reference, work, written) = pages();
    let scan = bed_scan(&work, 1.2, 0.97, 11);
    let (x0, y0, x1, y1) = box_on_bed(written, PAGE_W as f64, PAGE_H as f64, 1.2, 0.97, -14.0, 9.0);
    let expected = NormBox::from_corners(x0, y0, x1, y1);
    // The same scan at 200 dpi and at 100 dpi.
    for (w, h) in [(1654, 2339), (827, 1169)] {
        let resized = image::imageops::resize(&scan, w, h, image::imageops::FilterType::Triangle);
        let c = compare(&resized, &reference);
        println!("{w} x {h}: {}", c.note);
        assert!(c.aligned, "{}", c.note);
        assert!((c.scale - 0.97).abs() < 0.01, "{c:?}");
        assert!(
            c.added_regions
                .iter()
                .any(|r| r.intersection_area(&expected) > 0.5 * r.area().min(expected.area())),
            "{expected:?}: {c:?}"
        );
        for r in &c.added_regions {
            assert!(r.intersects(&expected), "stray region {r:?}: {c:?}");
        }
    }
    // A photo in a 3:4 frame, larger than the page's raster, the page on a desk in the middle.
    let corners = [
        (150.0, 130.0),
        (1100.0, 160.0),
        (1150.0, 1640.0),
        (95.0, 1610.0),
    ];
    let photo = photograph(&work, corners, 70, 0.2);
    let mut frame = GrayImage::from_pixel(1500, 2000, image::Luma([70]));
    image::imageops::replace(&mut frame, &photo, 130, 123);
    let c = compare(&scan_noise(&frame, 12, 5.0), &reference);
    println!("3:4 photo: {}", c.note);
    assert!(c.aligned, "{}", c.note);
    assert_eq!(c.fit, FitKind::Homography);
    let (w, h) = (PAGE_W as f64, PAGE_H as f64);
    let map = homography([(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)], corners);
    let pts = [
        (written.0, written.1),
        (written.2, written.1),
        (written.2, written.3),
        (written.0, written.3),
    ]
    .map(|(x, y)| {
        let (u, v) = apply_homography(&map, x as f64, y as f64);
        (u + 130.0, v + 123.0)
    });
    let (x0, y0, x1, y1) = corners_box(&pts, 1500.0, 2000.0);
    let truth = NormBox::from_corners(x0, y0, x1, y1);
    assert!(
        c.added_regions
            .iter()
            .any(|r| r.intersection_area(&truth) > 0.5 * r.area().min(truth.area())),
        "{truth:?}: {c:?}"
    );
    for r in &c.added_regions {
        assert!(r.intersects(&truth), "stray region {r:?}: {c:?}");
    }
}
