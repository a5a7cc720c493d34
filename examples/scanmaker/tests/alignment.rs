//! End to end: a sample paper answered by hand, scanned and photographed by the scan maker in
//! every way it can (clean; a greyscale scanner with skew, a smaller page on a grey bed, noise,
//! blur, grey uneven paper and JPEG; a phone photo with perspective, uneven light and a curled
//! edge; pages turned 0, 90, 180 and 270 degrees), each page compared with its clean page by
//! `examkit_scan::compare`, and the result checked against the scan maker's truth (`--truth`):
//!
//! - every page aligns;
//! - every written answer is found: an added region overlaps the true box of its ink by at
//!   least half of the smaller of the two boxes;
//! - no added region lies in an answer space left blank, or away from all writing (noise,
//!   print, the page's edge or the scanner bed are never writing);
//! - the writing's lines are found as many as were written (clean and scanner pages);
//! - a different page and a blank sheet are refused, with a note.
//!
//! Placement success per kind is printed (`cargo test -p examkit-scanmaker --test alignment --
//! --nocapture`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use examkit_scan::{Comparison, Format, NormBox, compare, compare_with_ink, render_page};
use image::GrayImage;
use serde_json::Value;

mod common;

use common::{DPI, QUESTIONS, example_answers, paper, render, scratch};

/// The rendered paper and its clean pages, shared by the tests.
struct Paper {
    pdf: PathBuf,
    layout: PathBuf,
    clean: Vec<GrayImage>,
}

fn sample_paper() -> &'static Paper {
    static PAPER: OnceLock<Paper> = OnceLock::new();
    PAPER.get_or_init(|| {
        let dir = scratch("alignment-paper");
        let (pdf, layout, _) = render(&paper(&QUESTIONS), &dir);
        let bytes = std::fs::read(&pdf).expect("paper");
        let pages = examkit_scan::page_count(&bytes, Format::Pdf).expect("pages");
        let clean = (1..=pages)
            .map(|p| render_page(&bytes, Format::Pdf, p, DPI).expect("clean page"))
            .collect();
        Paper { pdf, layout, clean }
    })
}

fn rect(v: &Value) -> NormBox {
    let f = |k: &str| v[k].as_f64().expect("number");
    NormBox {
        x: f("x"),
        y: f("y"),
        width: f("width"),
        height: f("height"),
    }
}

fn quad(v: &Value) -> Vec<(f64, f64)> {
    v.as_array()
        .expect("corners")
        .iter()
        .map(|p| (p[0].as_f64().expect("x"), p[1].as_f64().expect("y")))
        .collect()
}

/// Whether a point lies inside a convex quadrilateral (either winding).
fn inside(q: &[(f64, f64)], p: (f64, f64)) -> bool {
    let side = |a: (f64, f64), b: (f64, f64)| (b.0 - a.0) * (p.1 - a.1) - (b.1 - a.1) * (p.0 - a.0);
    let s: Vec<f64> = (0..4).map(|i| side(q[i], q[(i + 1) % 4])).collect();
    s.iter().all(|v| *v >= 0.0) || s.iter().all(|v| *v <= 0.0)
}

/// The quadrilateral moved towards its centre by `by` of the way.
fn shrink(q: &[(f64, f64)], by: f64) -> Vec<(f64, f64)> {
    let c = q
        .iter()
        .fold((0.0, 0.0), |a, p| (a.0 + p.0 / 4.0, a.1 + p.1 / 4.0));
    q.iter()
        .map(|p| (p.0 + (c.0 - p.0) * by, p.1 + (c.1 - p.1) * by))
        .collect()
}

/// What one kind of page scored.
#[derive(Default, Debug)]
struct Score {
    pages: usize,
    aligned: usize,
    written: usize,
    found: usize,
    blank: usize,
    blank_clean: usize,
    stray: usize,
    edge: usize,
    lines: usize,
    lines_right: usize,
    residual_max: f64,
    failures: Vec<String>,
}

impl Score {
    fn rate(&self) -> f64 {
        self.found as f64 / self.written.max(1) as f64 * 100.0
    }

    fn print(&self, kind: &str) {
        println!(
            "{kind:8} pages aligned {}/{}, written answers found {}/{} ({:.0}%), blank spaces clean {}/{}, stray regions {}, regions at the page's edge {}, lines counted right {}/{}, largest residual {:.2} px",
            self.aligned,
            self.pages,
            self.found,
            self.written,
            self.rate(),
            self.blank_clean,
            self.blank,
            self.stray,
            self.edge,
            self.lines_right,
            self.lines,
            self.residual_max
        );
        for f in &self.failures {
            println!("  {f}");
        }
    }
}

/// Makes scans of the sample paper with `args`, one per `(seed, turn offset)`, the pages turned
/// 0, 90, 180 and 270 degrees in turn, and scores every page.
fn score(kind: &str, args: &[&str], runs: &[(u64, usize)]) -> Score {
    let paper = sample_paper();
    let dir = scratch(&format!("alignment-{kind}"));
    let mut s = Score::default();
    for &(seed, offset) in runs {
        let rotate: Vec<String> = (0..paper.clean.len())
            .map(|i| format!("{}:{}", i + 1, ((i + offset) % 4) * 90))
            .collect();
        let out = dir.join(format!("{kind}-{seed}.jpg"));
        let truth_path = dir.join(format!("{kind}-{seed}.json"));
        let seed_text = seed.to_string();
        let rotate_text = rotate.join(",");
        let mut full = vec![
            "--paper",
            paper.pdf.to_str().expect("path"),
            "--layout",
            paper.layout.to_str().expect("path"),
            "--answers",
        ];
        let answers = example_answers();
        full.push(answers.to_str().expect("path"));
        full.extend([
            "--out",
            out.to_str().expect("path"),
            "--rotate",
            &rotate_text,
            "--seed",
            &seed_text,
            "--truth",
            truth_path.to_str().expect("path"),
        ]);
        full.extend(args);
        let files = examkit_scanmaker::make(&full).unwrap_or_else(|e| panic!("{kind}: {e}"));
        let truth: Value =
            serde_json::from_str(&std::fs::read_to_string(&truth_path).expect("truth"))
                .expect("truth json");
        for (i, page_truth) in truth["pages"].as_array().expect("pages").iter().enumerate() {
            let file = files
                .get(i)
                .filter(|f| f.as_path() != truth_path.as_path())
                .expect("page file");
            let work = read_page(file);
            check_page(kind, seed, page_truth, &work, &paper.clean[i], &mut s);
        }
    }
    s
}

fn read_page(file: &Path) -> GrayImage {
    let bytes = std::fs::read(file).expect("page image");
    let format = Format::sniff(&bytes).expect("an image");
    render_page(&bytes, format, 1, DPI).expect("decodes")
}

fn check_page(
    kind: &str,
    seed: u64,
    t: &Value,
    work: &GrayImage,
    clean: &GrayImage,
    s: &mut Score,
) {
    let page = t["page"].as_u64().expect("page");
    let name = format!("{kind} seed {seed} page {page} (turned {})", t["turn"]);
    s.pages += 1;
    let (c, ink) = compare_with_ink(work, clean);
    if !c.aligned {
        s.failures.push(format!("{name}: not aligned: {}", c.note));
        return;
    }
    s.aligned += 1;
    s.residual_max = s.residual_max.max(f64::from(c.residual_px));
    let written: Vec<(String, NormBox, usize)> = t["written"]
        .as_array()
        .expect("written")
        .iter()
        .map(|w| {
            (
                format!("Q{} {}", w["question"], w["part"]),
                rect(&w["bbox"]),
                w["lines"].as_array().map_or(0, Vec::len),
            )
        })
        .collect();
    for (label, truth, lines) in &written {
        s.written += 1;
        let hit = c
            .added_regions
            .iter()
            .any(|r| r.intersection_area(truth) >= 0.5 * r.area().min(truth.area()));
        if hit {
            s.found += 1;
        } else {
            s.failures.push(format!(
                "{name}: {label} not found at {truth:?}: {:?}",
                c.added_regions
            ));
        }
        if let Some(ink) = &ink {
            s.lines += 1;
            let found = ink.lines(truth).len();
            if found == *lines {
                s.lines_right += 1;
            } else {
                s.failures.push(format!(
                    "{name}: {label}: {found} lines found, {lines} written"
                ));
            }
        }
    }
    for b in t["blank"].as_array().expect("blank") {
        s.blank += 1;
        let q = shrink(&quad(&b["corners"]), 0.02);
        let inked: Vec<&NormBox> = c
            .added_regions
            .iter()
            .filter(|r| inside(&q, r.center()))
            .collect();
        if inked.is_empty() {
            s.blank_clean += 1;
        } else {
            s.failures.push(format!(
                "{name}: blank Q{} {} has ink {inked:?}",
                b["question"], b["part"]
            ));
        }
    }
    let outline = shrink(&quad(&t["outline"]), 0.02);
    for r in &c.added_regions {
        if !written.iter().any(|(_, w, _)| w.intersects(r)) {
            s.stray += 1;
            s.failures.push(format!("{name}: stray region {r:?}"));
        }
        let corners = [
            (r.x, r.y),
            (r.right(), r.y),
            (r.right(), r.bottom()),
            (r.x, r.bottom()),
        ];
        if corners.iter().any(|p| !inside(&outline, *p)) {
            s.edge += 1;
            s.failures
                .push(format!("{name}: region at the page's edge {r:?}"));
        }
    }
}

fn report(kind: &str, s: &Score) {
    s.print(kind);
    assert_eq!(s.aligned, s.pages, "{kind}: every page aligns: {s:#?}");
    assert_eq!(s.edge, 0, "{kind}: nothing at the page's edge: {s:#?}");
    assert_eq!(
        s.blank_clean, s.blank,
        "{kind}: blank spaces stay blank: {s:#?}"
    );
}

#[test]
fn clean_pages_find_every_answer() {
    let s = score(
        "clean",
        &["--skew", "0", "--noise", "0", "--format", "png"],
        &[(1, 0), (2, 2)],
    );
    report("clean", &s);
    assert_eq!(s.found, s.written, "{s:#?}");
    assert_eq!(s.stray, 0, "{s:#?}");
    assert_eq!(s.lines_right, s.lines, "{s:#?}");
}

#[test]
fn scanner_pages_find_every_answer() {
    let args = [
        "--skew",
        "0.5:3",
        "--scale",
        "0.94:1",
        "--shift",
        "0.015",
        "--bed",
        "165",
        "--noise",
        "0.039",
        "--blur",
        "0.6:1",
        "--paper-tone",
        "0.9:0.95",
        "--uneven",
        "0.03",
        "--quality",
        "60",
        "--format",
        "jpeg",
    ];
    let s = score("scanner", &args, &[(3, 1), (4, 3)]);
    report("scanner", &s);
    assert_eq!(s.found, s.written, "{s:#?}");
    assert_eq!(s.stray, 0, "{s:#?}");
}

#[test]
fn photographed_pages_align() {
    let args = [
        "--photo",
        "--perspective",
        "8",
        "--curl",
        "0.01",
        "--skew",
        "3",
        "--noise",
        "0.02",
        "--blur",
        "0.4:0.8",
        "--paper-tone",
        "0.9:1",
        "--quality",
        "75",
        "--format",
        "jpeg",
    ];
    let s = score("photo", &args, &[(5, 0), (6, 1)]);
    report("photo", &s);
}

#[test]
fn a_different_page_or_a_blank_sheet_is_refused() {
    let paper = sample_paper();
    let dir = scratch("alignment-refused");
    let out = dir.join("scan.jpg");
    let files = examkit_scanmaker::make(&[
        "--paper",
        paper.pdf.to_str().expect("path"),
        "--layout",
        paper.layout.to_str().expect("path"),
        "--out",
        out.to_str().expect("path"),
        "--skew",
        "1",
        "--bed",
        "160",
        "--scale",
        "0.97",
        "--noise",
        "0.03",
        "--seed",
        "8",
    ])
    .expect("scan");
    // Page 3 scanned, compared with the clean page 2, and the other way round.
    for (scan, clean) in [(2usize, 1usize), (1, 2), (3, 4)] {
        let c: Comparison = compare(&read_page(&files[scan]), &paper.clean[clean]);
        println!("page {} against page {}: {}", scan + 1, clean + 1, c.note);
        assert!(!c.aligned, "page {} against {}: {c:?}", scan + 1, clean + 1);
        assert!(c.note.starts_with("alignment failed"), "{}", c.note);
        assert!(c.added_regions.is_empty() && c.transform.is_none());
    }
    // A blank sheet, scanned.
    let mut blank = GrayImage::from_pixel(1240, 1754, image::Luma([236]));
    for (i, p) in blank.pixels_mut().enumerate() {
        p.0[0] = p.0[0].wrapping_sub(((i * 7919) % 13) as u8);
    }
    let c = compare(&blank, &paper.clean[1]);
    println!("blank sheet: {}", c.note);
    assert!(
        !c.aligned && c.note.starts_with("alignment failed"),
        "{c:?}"
    );
}
