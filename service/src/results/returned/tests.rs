//! Returned scripts made by hand (questions read from stored rows, page images made here) and
//! read back with poppler: `pdftotext` for the text of each page, `pdftoppm` for where the marks
//! are drawn. `service/test.sh` installs poppler-utils when they are missing.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use image::{Rgb, RgbImage};
use serde_json::{Value, json};

use super::draw::{Mm, box_on_page, image_area, upright_box};
use super::*;
use crate::marked::{EvidenceBox, MarkedQuestion};
use crate::store::marking::QuestionRow;
use crate::store::words::{AssetKind, Origin, QuestionStatus};

/// The work file every page id of these scripts names.
const ASSET: &str = "0b7c1f0e-5d2a-4c1e-9a57-3c0d8e1f2a4b";

/// The resolution pages are rendered at to find the marks.
const DPI: f64 = 50.0;

/// The colour of a tick (awarded) and of a cross (withheld), as drawn.
fn is_tick(p: Rgb<u8>) -> bool {
    let [r, g, b] = p.0;
    g > 100 && r < 90 && b < 110 && g > r + 50
}

fn is_cross(p: Rgb<u8>) -> bool {
    let [r, g, b] = p.0;
    r > 150 && g < 90 && b < 90
}

/// The yellow of the work the evidence is on, in the page images made here.
const WORK: Rgb<u8> = Rgb([255, 236, 120]);

fn is_work(p: Rgb<u8>) -> bool {
    let [r, g, b] = p.0;
    r > 220 && g > 200 && b < 170 && b > 60
}

/// One criterion of a question made here: its code, outcome and the box of its evidence on a
/// page, when it has one.
struct Made<'a> {
    code: &'a str,
    outcome: &'a str,
    evidence: Option<(u32, [f64; 4])>,
}

fn made<'a>(code: &'a str, outcome: &'a str, page: u32, region: [f64; 4]) -> Made<'a> {
    Made {
        code,
        outcome,
        evidence: Some((page, region)),
    }
}

/// A question of status `status` read from a stored row, as the store keeps it; `queued`
/// stores nothing marked.
fn question(label: &str, status: &str, criteria: &[Made<'_>]) -> MarkedQuestion {
    let kinds = HashMap::from([(ASSET.to_owned(), AssetKind::Work)]);
    MarkedQuestion::from_row(&question_row(ASSET, label, status, criteria), &kinds)
        .expect("a question made here reads")
}

/// The stored row of a question on the pages of work file `asset`.
fn question_row(asset: &str, label: &str, status: &str, criteria: &[Made<'_>]) -> QuestionRow {
    let count = |outcome: &str| criteria.iter().filter(|c| c.outcome == outcome).count() as i64;
    let (awarded, uncertain) = (count("awarded"), count("uncertain"));
    let max = criteria.len() as i64;
    let marked = status == "completed" || status == "needs_review";
    let (question_json, result_json) = if marked {
        let id = |i: usize| format!("c{i}");
        let pages: Vec<u32> = {
            let mut pages: Vec<u32> = criteria
                .iter()
                .filter_map(|c| c.evidence.map(|(page, _)| page))
                .collect();
            pages.sort_unstable();
            pages.dedup();
            pages
        };
        let question = json!({
            "label": label,
            "pageSelections": { asset: pages },
            "rubric": {
                "parts": [{ "id": "p", "maxMarks": max }],
                "criteria": criteria.iter().enumerate().map(|(i, c)| json!({
                    "id": id(i), "partId": "p", "code": c.code, "requirement": "as the scheme says",
                    "conditions": [], "dependsOn": [], "maxMarks": 1, "sourcePageIds": [],
                })).collect::<Vec<Value>>(),
            },
            "decisions": criteria.iter().enumerate().map(|(i, c)| json!({
                "criterionId": id(i), "outcome": c.outcome, "reason": "", "conditionChecks": [],
                "evidence": c.evidence.iter().map(|(page, [x, y, w, h])| json!({
                    "pageId": format!("{asset}:p{page}"), "quote": "",
                    "box": { "x": x, "y": y, "width": w, "height": h },
                })).collect::<Vec<Value>>(),
            })).collect::<Vec<Value>>(),
        });
        let score = json!({ "awarded": awarded, "possible": awarded + uncertain, "max": max });
        let result = json!({
            "label": label, "status": status, "score": score,
            "parts": [{ "id": "p", "score": score }],
            "criteria": criteria.iter().enumerate().map(|(i, c)| json!({
                "id": id(i), "code": c.code, "submitted": c.outcome, "effective": c.outcome,
                "flags": [],
            })).collect::<Vec<Value>>(),
            "reviewFlags": [],
        });
        (question.to_string(), result.to_string())
    } else {
        ("{}".to_owned(), "{}".to_owned())
    };
    QuestionRow {
        id: format!("q-{label}"),
        session_id: "s".into(),
        position: 0,
        label: label.into(),
        status: QuestionStatus::parse(status).expect("a question status"),
        revision: 1,
        awarded: if marked { awarded } else { 0 },
        possible: if marked { awarded + uncertain } else { 0 },
        max_marks: max,
        question_json,
        result_json,
        created_at: 0,
        updated_at: 0,
        error_json: None,
        marker_json: None,
        marker_run_json: None,
    }
}

/// A page image `width` × `height` in PNG: white, with lines of grey "writing", and the yellow
/// work at each region (fractions of the image).
fn png(width: u32, height: u32, work: &[[f64; 4]]) -> Vec<u8> {
    let mut image = RgbImage::from_pixel(width, height, Rgb([255, 255, 255]));
    for line in 1..12 {
        let y = height * line / 13;
        for x in width / 10..width * 9 / 10 {
            image.put_pixel(x, y, Rgb([120, 120, 120]));
        }
    }
    for [x, y, w, h] in work {
        let (x0, y0) = (
            (x * f64::from(width)) as u32,
            (y * f64::from(height)) as u32,
        );
        let (x1, y1) = (
            ((x + w) * f64::from(width)) as u32,
            ((y + h) * f64::from(height)) as u32,
        );
        for py in y0..y1.min(height) {
            for px in x0..x1.min(width) {
                image.put_pixel(px, py, WORK);
            }
        }
    }
    let mut out = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("a PNG");
    out.into_inner()
}

fn scanned(page: u32, image: Vec<u8>, width_px: u32, height_px: u32, turns: u8) -> ScriptPage {
    ScriptPage::Scanned(ScannedPage {
        page_id: format!("{ASSET}:p{page}"),
        caption: format!("Page {page}"),
        image,
        width_px,
        height_px,
        quarter_turns: turns,
    })
}

fn script(student: &str, questions: Vec<MarkedQuestion>, pages: Vec<ScriptPage>) -> ReturnedScript {
    ReturnedScript {
        student: student.into(),
        paper_title: "Algebra test 3".into(),
        date: "14 March 2026".into(),
        questions,
        pages,
    }
}

fn tool(name: &str) -> Command {
    // Fails with the tool's name when poppler is missing.
    let found = Command::new(name).arg("-v").output();
    assert!(
        found.is_ok(),
        "{name} is needed (poppler-utils; service/test.sh installs it)"
    );
    Command::new(name)
}

fn write_pdf(dir: &Path, pdf: &[u8]) -> std::path::PathBuf {
    let path = dir.join("script.pdf");
    std::fs::write(&path, pdf).expect("the PDF written");
    path
}

/// The text of page `page` (from 1).
fn page_text(pdf: &[u8], page: usize) -> String {
    let dir = tempfile::tempdir().expect("a directory");
    let path = write_pdf(dir.path(), pdf);
    let out = tool("pdftotext")
        .args(["-f", &page.to_string(), "-l", &page.to_string()])
        .arg(&path)
        .arg("-")
        .output()
        .expect("pdftotext runs");
    assert!(out.status.success(), "pdftotext: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Page `page` (from 1) at [`DPI`].
fn page_image(pdf: &[u8], page: usize) -> RgbImage {
    let dir = tempfile::tempdir().expect("a directory");
    let path = write_pdf(dir.path(), pdf);
    let prefix = dir.path().join("page");
    let out = tool("pdftoppm")
        .args(["-r", &DPI.to_string(), "-png", "-singlefile"])
        .args(["-f", &page.to_string(), "-l", &page.to_string()])
        .arg(&path)
        .arg(&prefix)
        .output()
        .expect("pdftoppm runs");
    assert!(out.status.success(), "pdftoppm: {out:?}");
    image::open(dir.path().join("page.png"))
        .expect("the page image")
        .to_rgb8()
}

/// Checks the file's cross-reference table as a reader that trusts it would: it is where
/// `startxref` says, object 0 is free, every object in use starts where its entry says (`N G
/// obj`), every object of the file is listed once, and the trailer's size is one past the last.
fn cross_references_hold(pdf: &[u8]) {
    let find_last = |needle: &[u8]| pdf.windows(needle.len()).rposition(|w| w == needle);
    let tail = String::from_utf8_lossy(&pdf[find_last(b"startxref").expect("startxref")..]);
    let at: usize = tail
        .lines()
        .nth(1)
        .expect("offset")
        .trim()
        .parse()
        .expect("a number");
    // The table and the trailer are ASCII.
    let table = String::from_utf8_lossy(&pdf[at..]).into_owned();
    assert!(
        table.starts_with("xref\n"),
        "startxref points at {:?}",
        &table[..20]
    );
    let mut rest = &table["xref\n".len()..];
    let mut listed = std::collections::BTreeSet::new();
    let mut last = 0;
    while !rest.starts_with("trailer") {
        let (header, after) = rest.split_once('\n').expect("a subsection header");
        let (first, count) = header.split_once(' ').expect("first and count");
        let (first, count): (u32, u32) =
            (first.parse().expect("first"), count.parse().expect("count"));
        rest = after;
        for id in first..first + count {
            // Each entry is 20 bytes, its line end included.
            let (entry, after) = rest.split_at(20);
            rest = after;
            assert!(
                matches!(&entry[18..], " \n" | " \r" | "\r\n"),
                "entry {id}: {entry:?}"
            );
            let (offset, generation, kind) = (&entry[..10], &entry[11..16], &entry[17..18]);
            if id == 0 {
                assert_eq!((offset, generation, kind), ("0000000000", "65535", "f"));
                continue;
            }
            assert_eq!(kind, "n", "entry {id}: {entry:?}");
            let offset: usize = offset.parse().expect("offset");
            let generation: u16 = generation.parse().expect("generation");
            assert!(
                pdf[offset..].starts_with(format!("{id} {generation} obj").as_bytes()),
                "object {id} is not at {offset}"
            );
            assert!(listed.insert(id), "object {id} listed twice");
            last = last.max(id);
        }
    }
    // Poppler reads it without repairing anything (it says so on standard error when it must).
    let dir = tempfile::tempdir().expect("a directory");
    let out = tool("pdfinfo")
        .arg(write_pdf(dir.path(), pdf))
        .output()
        .expect("pdfinfo runs");
    assert!(out.status.success(), "pdfinfo: {out:?}");
    assert!(
        out.stderr.is_empty(),
        "pdfinfo: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let objects = lopdf::Document::load_mem(pdf).expect("a PDF").objects.len();
    assert_eq!(listed.len(), objects, "every object is listed");
    assert!(
        table.contains(&format!("/Size {}", last + 1)),
        "the trailer's size"
    );
}

fn page_count(pdf: &[u8]) -> usize {
    lopdf::Document::load_mem(pdf)
        .expect("a PDF")
        .get_pages()
        .len()
}

/// The pixels (x0, y0, x1, y1 inclusive) holding every pixel of a colour, and how many.
fn extent(image: &RgbImage, colour: impl Fn(Rgb<u8>) -> bool) -> Option<([u32; 4], usize)> {
    let mut found: Option<[u32; 4]> = None;
    let mut n = 0;
    for (x, y, p) in image.enumerate_pixels() {
        if colour(*p) {
            n += 1;
            found = Some(match found {
                None => [x, y, x, y],
                Some([x0, y0, x1, y1]) => [x0.min(x), y0.min(y), x1.max(x), y1.max(y)],
            });
        }
    }
    found.map(|e| (e, n))
}

/// A box on the page in pixels at [`DPI`]: (x0, y0, x1, y1).
fn pixels(b: Mm) -> [f64; 4] {
    let px = |mm: f64| mm / 25.4 * DPI;
    [px(b.x), px(b.y), px(b.x + b.width), px(b.y + b.height)]
}

fn region(x: f64, y: f64, width: f64, height: f64) -> EvidenceBox {
    serde_json::from_value(json!({ "x": x, "y": y, "width": width, "height": height }))
        .expect("a box")
}

/// Whether `inner` lies in `outer`, give or take `slack` pixels.
fn within(inner: [u32; 4], outer: [f64; 4], slack: f64) -> bool {
    let [x0, y0, x1, y1] = inner.map(f64::from);
    x0 >= outer[0] - slack
        && y0 >= outer[1] - slack
        && x1 <= outer[2] + slack
        && y1 <= outer[3] + slack
}

#[test]
fn a_returned_script_has_its_marks_and_a_tick_or_cross_on_the_work_decided() {
    let (w, h) = (620, 877);
    let m1 = [0.2, 0.3, 0.4, 0.1];
    let a1 = [0.15, 0.55, 0.5, 0.08];
    let b1 = [0.3, 0.1, 0.3, 0.1];
    let questions = vec![
        question(
            "1",
            "completed",
            &[made("M1", "awarded", 1, m1), made("A1", "withheld", 1, a1)],
        ),
        question("2(a)", "completed", &[made("B1", "awarded", 2, b1)]),
    ];
    let pages = vec![
        scanned(1, png(w, h, &[m1, a1]), w, h, 0),
        scanned(2, png(w, h, &[b1]), w, h, 0),
        ScriptPage::NotScanned { paper_page: 3 },
    ];
    let script = script("Ada Lovelace", questions, pages);
    let pdf = typeset(&script, false).expect("typeset");
    assert_eq!(page_count(&pdf), 4, "a cover and three pages");

    let cover = page_text(&pdf, 1);
    for text in [
        "Ada Lovelace",
        "Algebra test 3",
        "14 March 2026",
        "M1",
        "A1",
        "B1",
        "2(a)",
        "Total",
        "67%",
        "✓",
        "✗",
    ] {
        assert!(cover.contains(text), "the cover lacks {text:?}:\n{cover}");
    }
    let first = page_text(&pdf, 2);
    for text in ["M1", "A1", "Question 1", "1/2", "Page 1"] {
        assert!(first.contains(text), "page 1 lacks {text:?}:\n{first}");
    }
    assert!(!first.contains("B1"), "B1 is on page 2:\n{first}");
    let second = page_text(&pdf, 3);
    for text in ["B1", "Question 2(a)", "1/1"] {
        assert!(second.contains(text), "page 2 lacks {text:?}:\n{second}");
    }
    let missing = page_text(&pdf, 4);
    assert!(missing.contains("Page 3 was not scanned"), "{missing}");
    for page in 1..=4 {
        assert!(!page_text(&pdf, page).contains("Draft"), "page {page}");
    }

    // The tick is at M1's box and the cross at A1's, where the work is drawn.
    let ScriptPage::Scanned(scan) = &script.pages[0] else {
        unreachable!("a scanned page");
    };
    let area = image_area(scan);
    let at = |r: [f64; 4]| {
        pixels(box_on_page(
            area,
            upright_box(&region(r[0], r[1], r[2], r[3]), 0),
        ))
    };
    let image = page_image(&pdf, 2);
    let (ticks, n) = extent(&image, is_tick).expect("a tick is drawn");
    assert!(n >= 6, "{n} pixels of the tick");
    assert!(
        within(ticks, at(m1), 1.5),
        "tick at {ticks:?}, M1's box at {:?}",
        at(m1)
    );
    let (crosses, n) = extent(&image, is_cross).expect("a cross is drawn");
    assert!(n >= 6, "{n} pixels of the cross");
    assert!(
        within(crosses, at(a1), 1.5),
        "cross at {crosses:?}, A1's box at {:?}",
        at(a1)
    );
    // The boxes are where the page's work is drawn: the yellow the image holds there.
    let (work, _) = extent(&image, is_work).expect("the work is drawn");
    let both = [
        at(m1)[0].min(at(a1)[0]),
        at(m1)[1],
        at(m1)[2].max(at(a1)[2]),
        at(a1)[3],
    ];
    for (found, expected) in work.iter().zip(both) {
        assert!(
            (f64::from(*found) - expected).abs() <= 2.0,
            "work at {work:?}, boxes at {both:?}"
        );
    }
}

#[test]
fn criteria_decided_on_one_box_stand_side_by_side_in_it() {
    let (w, h) = (620, 877);
    let answer = [0.15, 0.3, 0.7, 0.1];
    let questions = vec![question(
        "1",
        "completed",
        &[
            made("M1", "awarded", 1, answer),
            made("A1", "withheld", 1, answer),
        ],
    )];
    let pages = vec![scanned(1, png(w, h, &[answer]), w, h, 0)];
    let script = script("Ada Lovelace", questions, pages);
    let pdf = typeset(&script, false).expect("typeset");
    let ScriptPage::Scanned(scan) = &script.pages[0] else {
        unreachable!("a scanned page");
    };
    let b = answer;
    let at = pixels(box_on_page(
        image_area(scan),
        upright_box(&region(b[0], b[1], b[2], b[3]), 0),
    ));
    let image = page_image(&pdf, 2);
    let (tick, _) = extent(&image, is_tick).expect("a tick is drawn");
    let (cross, _) = extent(&image, is_cross).expect("a cross is drawn");
    assert!(within(tick, at, 1.5), "tick at {tick:?}, the box at {at:?}");
    assert!(
        within(cross, at, 1.5),
        "cross at {cross:?}, the box at {at:?}"
    );
    assert!(
        cross[2] < tick[0] || tick[2] < cross[0],
        "the tick {tick:?} and the cross {cross:?} do not cover each other"
    );
    let text = page_text(&pdf, 2);
    assert!(text.contains("M1") && text.contains("A1"), "{text}");
}

#[test]
fn a_page_turned_upright_keeps_its_ticks_on_its_work() {
    // The page was scanned sideways: its image is landscape, its content turned a quarter
    // anticlockwise, and it is shown upright turned a quarter clockwise.
    let (w, h) = (877, 620);
    let m1 = [0.55, 0.2, 0.15, 0.3];
    let questions = vec![question("1", "completed", &[made("M1", "awarded", 1, m1)])];
    let pages = vec![scanned(1, png(w, h, &[m1]), w, h, 1)];
    let script = script("Grace Hopper", questions, pages);
    let pdf = typeset(&script, false).expect("typeset");
    let image = page_image(&pdf, 2);
    let (work, _) = extent(&image, is_work).expect("the work is drawn");
    let (ticks, n) = extent(&image, is_tick).expect("a tick is drawn");
    assert!(n >= 6, "{n} pixels of the tick");
    let work_f = work.map(f64::from);
    assert!(
        within(ticks, work_f, 1.5),
        "tick at {ticks:?}, work at {work:?}"
    );
    // Where the review page draws it once turned: the box turned with the page.
    let ScriptPage::Scanned(scan) = &script.pages[0] else {
        unreachable!("a scanned page");
    };
    let expected = pixels(box_on_page(
        image_area(scan),
        upright_box(&region(m1[0], m1[1], m1[2], m1[3]), 1),
    ));
    for (found, expected) in work_f.iter().zip(expected) {
        assert!(
            (found - expected).abs() <= 2.0,
            "work at {work:?}, the turned box at {expected:?}"
        );
    }
}

#[test]
fn a_script_still_to_review_is_returned_only_as_a_draft_saying_so_on_every_page() {
    let (w, h) = (620, 877);
    let m1 = [0.2, 0.3, 0.4, 0.1];
    let questions = vec![
        question("1", "completed", &[made("M1", "awarded", 1, m1)]),
        question(
            "2",
            "needs_review",
            &[made("M1", "uncertain", 1, [0.2, 0.6, 0.3, 0.1])],
        ),
        question("3", "queued", &[]),
    ];
    let pages = vec![
        scanned(1, png(w, h, &[m1]), w, h, 0),
        ScriptPage::NotScanned { paper_page: 2 },
    ];
    let script = script("Ada Lovelace", questions, pages);
    match typeset(&script, false) {
        Err(ReturnedError::NotFinal { questions }) => assert_eq!(questions, ["2", "3"]),
        other => panic!("not refused: {other:?}"),
    }
    assert_eq!(
        typeset(&script, false).expect_err("refused").code(),
        "not_final"
    );
    let pdf = typeset(&script, true).expect("a draft");
    let pages = page_count(&pdf);
    assert_eq!(pages, 3);
    for page in 1..=pages {
        let text = page_text(&pdf, page);
        assert!(text.contains("Draft"), "page {page} of the draft:\n{text}");
    }
    let cover = page_text(&pdf, 1);
    assert!(cover.contains("not marked"), "{cover}");
    assert!(cover.contains("questions 2, 3"), "{cover}");
    // The uncertain mark shows as a range.
    assert!(page_text(&pdf, 2).contains("0–1/1"));

    let empty = self::script("Ada Lovelace", Vec::new(), Vec::new());
    assert_eq!(
        typeset(&empty, false).expect_err("refused").code(),
        "nothing_marked"
    );
}

#[test]
fn a_question_on_a_page_never_scanned_is_not_scanned_on_the_cover_with_no_percentage() {
    let (w, h) = (620, 877);
    let m1 = [0.2, 0.3, 0.4, 0.1];
    let path =
        crate::marked::tests::fixtures().join("needs-review-automated-page-not-scanned.row.json");
    let (row, kinds) = crate::marked::tests::load(&path);
    let unscanned = MarkedQuestion::from_row(&row, &kinds).expect("a marked question");
    assert!(unscanned.not_scanned());
    assert_eq!(
        (
            unscanned.score.awarded,
            unscanned.score.possible,
            unscanned.score.max
        ),
        (0, 6, 6),
        "every mark of a question never scanned is still possible"
    );
    let questions = vec![
        question("1", "completed", &[made("M1", "awarded", 1, m1)]),
        unscanned,
    ];
    let pages = vec![
        scanned(1, png(w, h, &[m1]), w, h, 0),
        ScriptPage::NotScanned { paper_page: 2 },
    ];
    let script = script("Ada Lovelace", questions, pages);
    assert_eq!(
        typeset(&script, false).expect_err("refused").code(),
        "not_final",
        "a script with a question not scanned is not final"
    );
    let pdf = typeset(&script, true).expect("a draft");
    let cover = page_text(&pdf, 1);
    assert!(cover.contains("not scanned"), "{cover}");
    assert!(
        cover.contains("1–7"),
        "the total keeps the unscanned marks possible:\n{cover}"
    );
    assert!(
        !cover.contains('%'),
        "no percentage beside a range:\n{cover}"
    );
    assert!(!cover.contains("0%"), "{cover}");
    let missing = page_text(&pdf, 3);
    assert!(missing.contains("Page 2 was not scanned"), "{missing}");
}

/// A final script of `scans` scanned pages (and `missing` pages not scanned after them).
fn class_script(student: &str, scans: u32, missing: u32) -> ReturnedScript {
    let (w, h) = (310, 438);
    let questions = (1..=scans)
        .map(|page| {
            question(
                &page.to_string(),
                "completed",
                &[made("M1", "awarded", page, [0.2, 0.3, 0.4, 0.1])],
            )
        })
        .collect();
    let mut pages: Vec<ScriptPage> = (1..=scans)
        .map(|page| scanned(page, png(w, h, &[]), w, h, 0))
        .collect();
    pages.extend((1..=missing).map(|n| ScriptPage::NotScanned {
        paper_page: scans + n,
    }));
    script(student, questions, pages)
}

#[test]
fn a_class_pdf_starts_every_script_on_an_odd_page() {
    // Three pages (a cover and two), two, and three (a cover, one scanned, one not).
    let scripts = [
        class_script("Ada Lovelace", 2, 0),
        class_script("Grace Hopper", 1, 0),
        class_script("Katherine Johnson", 1, 1),
    ];
    let mut class = ClassPdf::new(Vec::new()).expect("started");
    for script in scripts.iter().cloned() {
        class.push(script, false).expect("pushed");
    }
    assert_eq!(class.starts(), [1, 5, 7]);
    assert_eq!(class.pages(), 10);
    let pdf = class.finish().expect("joined");
    assert_eq!(page_count(&pdf), 10);
    cross_references_hold(&pdf);
    for (start, student) in [
        (1, "Ada Lovelace"),
        (5, "Grace Hopper"),
        (7, "Katherine Johnson"),
    ] {
        let text = page_text(&pdf, start);
        assert!(
            text.contains("Marked script") && text.contains(student),
            "page {start}:\n{text}"
        );
        // Each script numbers its own pages.
        assert!(text.contains("Page 1 of"), "page {start}:\n{text}");
    }
    for blank in [4, 10] {
        assert!(page_text(&pdf, blank).trim().is_empty(), "page {blank}");
    }
    assert!(page_text(&pdf, 3).contains("M1"));
    assert!(page_text(&pdf, 9).contains("Page 2 was not scanned"));
    // The page images came along.
    assert!(extent(&page_image(&pdf, 6), is_tick).is_some());

    // The same through the whole-class function.
    let again = class_pdf(scripts.iter().cloned(), false).expect("joined");
    assert_eq!(page_count(&again), 10);

    // A script not final stops a final class PDF, naming its student.
    let mut open = class_script("Grace Hopper", 1, 0);
    open.questions.push(question("9", "needs_review", &[]));
    match class_pdf([scripts[0].clone(), open], false) {
        Err(ReturnedError::ClassNotFinal { scripts }) => assert_eq!(
            scripts,
            [Unfinished {
                student: "Grace Hopper".into(),
                questions: vec!["9".into()],
            }]
        ),
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn a_class_zip_has_one_pdf_per_student_named_safely_and_uniquely() {
    let scripts = [
        class_script("Ada Lovelace", 1, 0),
        class_script("ada lovelace", 1, 0),
        class_script("Grace/Hopper: *draft*", 1, 0),
        class_script("../..", 1, 0),
    ];
    let bytes = class_zip(scripts, false).expect("archived");
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip");
    let names: Vec<String> = (0..archive.len())
        .map(|i| {
            let entry = archive.by_index(i).expect("an entry");
            entry.name().expect("a name").into_owned()
        })
        .collect();
    assert_eq!(
        names,
        [
            "Ada Lovelace.pdf",
            "ada lovelace (2).pdf",
            "Grace-Hopper- -draft.pdf",
            "script.pdf",
        ]
    );
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).expect("an entry");
        let mut pdf = Vec::new();
        std::io::Read::read_to_end(&mut entry, &mut pdf).expect("read");
        assert!(pdf.starts_with(b"%PDF-"), "{:?}", entry.name());
        assert_eq!(page_count(&pdf), 2);
    }
}

#[tokio::test]
async fn a_script_is_loaded_from_its_marking_session_with_its_pages_as_the_review_page_shows_them()
{
    use crate::store::Store;
    use crate::store::marking::QuestionData;

    let dir = tempfile::tempdir().expect("a directory");
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("examkit.db").display()
    );
    let store = Store::open(&url).await.expect("a store");
    let teacher = store
        .create_user("teacher", true, false)
        .await
        .expect("an account");
    let session = store
        .create_session(&teacher.id, "Ada Lovelace", Origin::Import)
        .await
        .expect("a session");
    let (w, h) = (620, 877);
    let m1 = [0.2, 0.3, 0.4, 0.1];
    let image = png(w, h, &[m1]);
    let asset = store
        .add_asset(
            &teacher.id,
            &session.id,
            Origin::Import,
            AssetKind::Work,
            "scan.png",
            "image/png",
            1,
            &crate::auth::sha256_hex(&image),
            &image,
        )
        .await
        .expect("an asset");
    let rows = [
        question_row(
            &asset.id,
            "1",
            "completed",
            &[
                made("M1", "awarded", 1, m1),
                made("A1", "withheld", 1, [0.1, 0.6, 0.3, 0.1]),
            ],
        ),
        question_row(
            &asset.id,
            "2",
            "completed",
            &[made("B1", "awarded", 1, [0.5, 0.8, 0.3, 0.1])],
        ),
    ];
    let questions: Vec<QuestionData> = rows
        .iter()
        .map(|r| QuestionData {
            label: r.label.clone(),
            status: r.status,
            awarded: r.awarded,
            possible: r.possible,
            max_marks: r.max_marks,
            question_json: r.question_json.clone(),
            result_json: r.result_json.clone(),
        })
        .collect();
    let source = r#"{"kind":"human","name":"Ms Smith","markedAt":"2026-03-14T09:00:00Z"}"#;
    store
        .complete_import(
            &teacher.id,
            &session.id,
            "sha",
            source,
            "full",
            "{}",
            &questions,
        )
        .await
        .expect("completed");
    let heading = ScriptHeading {
        student: "Ada Lovelace".into(),
        paper_title: "Algebra test 3".into(),
        date: "14 March 2026".into(),
    };

    let script = load_script(
        &store,
        &crate::untrusted::Pages::InProcess,
        &teacher.id,
        &session.id,
        heading.clone(),
    )
    .await
    .expect("loaded");
    let labels: Vec<&str> = script.questions.iter().map(|q| q.label.as_str()).collect();
    assert_eq!(labels, ["1", "2"]);
    assert_eq!(script.pages.len(), 1);
    let ScriptPage::Scanned(page) = &script.pages[0] else {
        panic!("the page is scanned");
    };
    assert_eq!(page.page_id, format!("{}:p1", asset.id));
    assert_eq!(page.caption, "Page 1");
    assert_eq!(
        (page.width_px, page.height_px, page.quarter_turns),
        (w, h, 0)
    );
    // Rendered from the file, as the review page sends it: in JPEG.
    assert!(page.image.starts_with(&[0xFF, 0xD8, 0xFF]));
    let shown = displayed_page_image(
        &store,
        &crate::untrusted::Pages::InProcess,
        &teacher.id,
        &asset.id,
        1,
    )
    .await
    .expect("read")
    .expect("an image");
    assert_eq!(shown, page.image);
    assert_eq!(
        displayed_page_image(
            &store,
            &crate::untrusted::Pages::InProcess,
            &teacher.id,
            &asset.id,
            2
        )
        .await
        .expect("read"),
        None
    );

    let pdf = typeset(&script, false).expect("typeset");
    let text = page_text(&pdf, 2);
    for code in ["M1", "A1", "B1", "1/2", "1/1"] {
        assert!(text.contains(code), "{code}:\n{text}");
    }
    // Every tick pixel is in M1's box or B1's, and each box holds some.
    let at = |r: [f64; 4]| {
        pixels(box_on_page(
            image_area(page),
            upright_box(&region(r[0], r[1], r[2], r[3]), 0),
        ))
    };
    let boxes = [at(m1), at([0.5, 0.8, 0.3, 0.1])];
    let rendered = page_image(&pdf, 2);
    let mut held = [0; 2];
    for (x, y, p) in rendered.enumerate_pixels() {
        if is_tick(*p) {
            let k = boxes
                .iter()
                .position(|b| within([x, y, x, y], *b, 1.5))
                .unwrap_or_else(|| panic!("a tick pixel at ({x}, {y}) is in no box"));
            held[k] += 1;
        }
    }
    assert!(held.iter().all(|n| *n >= 6), "{held:?}");

    // Another account's session is not found.
    let other = store
        .create_user("other", true, false)
        .await
        .expect("an account");
    let refused = load_script(
        &store,
        &crate::untrusted::Pages::InProcess,
        &other.id,
        &session.id,
        heading,
    )
    .await
    .expect_err("not found");
    assert_eq!(refused.code(), "not_found");
    assert_eq!(
        displayed_page_image(
            &store,
            &crate::untrusted::Pages::InProcess,
            &other.id,
            &asset.id,
            1
        )
        .await
        .expect("read"),
        None
    );
}
