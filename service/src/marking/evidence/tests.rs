//! Placing evidence: words, ink, hints and answer spaces, and the test pages they share.

#![allow(clippy::unwrap_used)]

use super::boxes::hint_rect;
use super::codes::Guard;
use super::guard::{dark_box, guard};
use super::place::place;
use super::quotes::{Transcript, part_label};
use super::spaces::part_lines;
use super::{Claim, PageInk, Placement};
use crate::marking::marker::Rect;
use crate::marking::marker::WorkPage;

use super::*;
use crate::marking::marker::{AnswerRegion, PageWord};

/// No raster: pages without a comparison have no ink anywhere but in `Some` boxes.
pub(super) struct Ink(pub(super) Option<Rect>);
impl PageInk for Ink {
    fn ink_within(&self, _page: &WorkPage, rect: Rect) -> Option<Rect> {
        let ink = self.0?;
        (ink.overlap(&rect) > 0.0).then_some(ink)
    }
}

pub(super) fn r(x: f64, y: f64, width: f64, height: f64) -> Rect {
    Rect {
        x,
        y,
        width,
        height,
    }
}

pub(super) fn word(text: &str, bbox: Rect) -> PageWord {
    PageWord {
        text: text.into(),
        bbox,
        confidence: 0.9,
    }
}

/// A page with part a's answer space in the middle, the printed question above it, the
/// student's "x = 3" written in the space, and ink added where it is written.
pub(super) fn page() -> WorkPage {
    WorkPage {
        page_id: "w:p1".into(),
        asset_id: "w".into(),
        page: 1,
        width_px: 1000,
        height_px: 1400,
        orientation: 0,
        evidence: true,
        blank: false,
        flagged: None,
        words: vec![
            // Printed: "Show that x = 3" above the answer space.
            word("Show", r(0.1, 0.2, 0.05, 0.02)),
            word("that", r(0.16, 0.2, 0.04, 0.02)),
            word("x", r(0.21, 0.2, 0.01, 0.02)),
            word("=", r(0.23, 0.2, 0.01, 0.02)),
            word("3", r(0.25, 0.2, 0.01, 0.02)),
            // Written by the student.
            word("x=", r(0.2, 0.5, 0.04, 0.03)),
            word("3", r(0.25, 0.5, 0.02, 0.03)),
        ],
        ink: Some(vec![r(0.19, 0.49, 0.09, 0.05), r(0.6, 0.7, 0.1, 0.04)]),
        ink_lines: Vec::new(),
        fit: None,
        unaligned: None,
        laid_out: true,
        answer_regions: vec![AnswerRegion {
            part_id: "a".into(),
            rect: r(0.05, 0.4, 0.9, 0.4),
        }],
        image: None,
    }
}

pub(super) fn claim_for_guard() -> Claim<'static> {
    claim("x = 3", None)
}

pub(super) fn claim<'a>(quote: &'a str, hint: Option<Rect>) -> Claim<'a> {
    Claim {
        part_id: "a",
        quote,
        hint,
        awarded: true,
        line: None,
    }
}

pub(super) fn close(a: Rect, b: Rect) -> bool {
    (a.x - b.x).abs() < 1e-9
        && (a.y - b.y).abs() < 1e-9
        && (a.width - b.width).abs() < 1e-9
        && (a.height - b.height).abs() < 1e-9
}

#[test]
fn hints_are_read_in_thousandths_and_empty_ones_dropped() {
    assert!(close(
        hint_rect([100, 200, 300, 250]).unwrap(),
        r(0.1, 0.2, 0.2, 0.05)
    ));
    // Corners given the wrong way round are still a box.
    assert!(close(
        hint_rect([300, 250, 100, 200]).unwrap(),
        r(0.1, 0.2, 0.2, 0.05)
    ));
    assert_eq!(hint_rect([100, 200, 100, 900]), None);
    assert!(close(
        hint_rect([0, 0, 5000, 1000]).unwrap(),
        r(0.0, 0.0, 1.0, 1.0)
    ));
}

#[test]
fn a_quote_is_placed_on_the_students_words_not_the_printed_ones() {
    let page = page();
    // The hint is in the wrong place (top-left corner); the words decide.
    let placed = place(
        &page,
        &claim("X = 3", hint_rect([0, 0, 50, 50])),
        &Ink(None),
    );
    assert_eq!(placed.placement, Placement::Words);
    assert!(placed.located);
    assert!(
        close(placed.rect, r(0.2, 0.5, 0.07, 0.03)),
        "{:?}",
        placed.rect
    );
    assert_eq!(
        guard(&page, &claim_for_guard(), &placed, &Ink(None)),
        Guard::Stands
    );
}

#[test]
fn maths_typed_differently_still_matches() {
    let mut page = page();
    page.words = vec![
        word("x²", r(0.2, 0.5, 0.03, 0.03)),
        word("−", r(0.24, 0.5, 0.01, 0.03)),
        word("4", r(0.26, 0.5, 0.02, 0.03)),
    ];
    let placed = place(&page, &claim("x^2 - 4", None), &Ink(None));
    assert_eq!(placed.placement, Placement::Words, "{placed:?}");
}

#[test]
fn without_readable_words_the_ink_near_the_hint_is_evidence() {
    let mut page = page();
    page.words.truncate(5);
    let placed = place(
        &page,
        &claim("x = 3", hint_rect([150, 450, 300, 560])),
        &Ink(None),
    );
    assert_eq!(placed.placement, Placement::Ink);
    assert!(
        close(placed.rect, r(0.19, 0.49, 0.09, 0.05)),
        "{:?}",
        placed.rect
    );
    // A hint far from any ink takes the nearest line of ink.
    let placed = place(
        &page,
        &claim("x = 3", hint_rect([300, 420, 350, 440])),
        &Ink(None),
    );
    assert_eq!(placed.placement, Placement::Ink);
    assert!(
        close(placed.rect, r(0.19, 0.49, 0.09, 0.05)),
        "{:?}",
        placed.rect
    );
}

#[test]
fn a_quote_is_found_on_its_line_of_the_transcription() {
    // Unlabelled: the part's last quoted line is its last line of ink.
    let t = Transcript::new("3t^2 - 12t + 9 = 0\n\n3(t - 1)(t - 3) = 0\nt = 1 and t = 3\n");
    let quotes = ["3(t - 1)(t - 3) = 0", "t = 1 and t = 3"];
    assert_eq!(t.line_of("a", quotes[0], &quotes, 3), Some(1));
    assert_eq!(t.line_of("a", quotes[1], &quotes, 3), Some(2));
    // Two lines of ink: the answer on the last, the working on the one before.
    assert_eq!(t.line_of("a", quotes[0], &quotes, 2), Some(0));
    assert_eq!(t.line_of("a", quotes[1], &quotes, 2), Some(1));
    // One line of ink, or a quote the transcription does not hold: nothing to choose.
    assert_eq!(t.line_of("a", quotes[0], &quotes, 1), None);
    assert_eq!(t.line_of("a", "x = 9", &quotes, 3), None);
    // Maths typed differently still matches.
    assert_eq!(t.line_of("a", "3(t-1)(t-3)=0", &quotes, 3), Some(1));
    // Labelled: the part's own lines, matched in order or in proportion.
    let t =
        Transcript::new("(a) g(3) = 2\nfg(3) = 7\n(b) x = 4\n2x = 8\nx = 4 or 5\nx = 4\n(c) k = 2");
    assert_eq!(t.line_of("a", "fg(3) = 7", &[], 2), Some(1));
    assert_eq!(t.line_of("a", "g(3) = 2", &[], 2), Some(0));
    assert_eq!(t.line_of("b", "2x = 8", &[], 4), Some(1));
    assert_eq!(t.line_of("b", "x = 4 or 5", &[], 4), Some(2));
    // Four transcribed lines over two lines of ink: in proportion.
    assert_eq!(t.line_of("b", "x = 4 or 5", &[], 2), Some(1));
    assert_eq!(t.line_of("b", "2x = 8", &[], 2), Some(0));
    // A part the labelled transcription does not name, or a quote only another part holds.
    assert_eq!(t.line_of("d", "k = 2", &[], 2), None);
    assert_eq!(t.line_of("a", "k = 2", &[], 2), None);
    // Labels: brackets, a closing bracket, a full stop, roman numerals; not words.
    assert_eq!(part_label("(a) x"), Some(("a".into(), " x")));
    assert_eq!(part_label("b) x"), Some(("b".into(), " x")));
    assert_eq!(part_label("c."), Some(("c".into(), "")));
    assert_eq!(part_label("(ii) x"), Some(("ii".into(), " x")));
    assert_eq!(part_label("so. x"), None);
    assert_eq!(part_label("f(x) = 2"), None);
    assert_eq!(part_label("x)y"), None);
}

/// A page whose part `a` holds `n` lines of writing, each its own line of ink, no words read.
fn lined(n: usize) -> (WorkPage, Vec<Rect>) {
    let mut page = page();
    page.words.truncate(5);
    let lines: Vec<Rect> = (0..n)
        .map(|i| r(0.1, 0.42 + 0.06 * i as f64, 0.3 + 0.05 * i as f64, 0.04))
        .collect();
    page.ink = Rect::union(lines.clone()).map(|all| vec![all]);
    page.ink_lines = lines.clone();
    (page, lines)
}

#[test]
fn each_mark_lands_on_its_own_line_of_writing() {
    for n in 2..=5 {
        let (page, lines) = lined(n);
        let written: Vec<String> = (0..n)
            .map(|i| format!("step {i}: y = {}", i + 10))
            .collect();
        let transcription = written.join("\n");
        let transcript = Transcript::new(&transcription);
        let quotes: Vec<&str> = written.iter().map(String::as_str).collect();
        for (i, quote) in quotes.iter().enumerate() {
            // The model's box on the last line, as careless models put every box.
            let hint = hint_rect([100, 700, 400, 800]);
            let line = transcript.line_of("a", quote, &quotes, part_lines(&page, "a").len());
            assert_eq!(line, Some(i), "{n} lines, quote {i}");
            let claim = Claim {
                line,
                ..claim(quote, hint)
            };
            let (placed, verdict) = placed_and_guarded(&page, &claim);
            assert_eq!(placed.placement, Placement::Line, "{n} lines, quote {i}");
            assert!(
                close(placed.rect, lines[i]),
                "{n} lines, quote {i}: {placed:?}"
            );
            assert_eq!(verdict, Guard::Stands, "{n} lines, quote {i}");
        }
    }
    // A line another part's space holds is not this part's; without lines, the ink nearest
    // the box is taken as before.
    let (mut page, _) = lined(3);
    page.answer_regions[0].rect = r(0.05, 0.4, 0.9, 0.085);
    assert_eq!(part_lines(&page, "a").len(), 1);
    page.ink_lines.clear();
    let claim = Claim {
        line: Some(1),
        ..claim("x = 3", hint_rect([100, 420, 400, 460]))
    };
    assert_eq!(place(&page, &claim, &Ink(None)).placement, Placement::Ink);
}

#[test]
fn writing_that_runs_over_a_small_space_is_still_its_parts() {
    // A one-line space for part b under part a's; the student's line runs below it, its
    // centre outside the space, and nothing else is near.
    let mut page = page();
    page.words.truncate(5);
    page.answer_regions.push(AnswerRegion {
        part_id: "b".into(),
        rect: r(0.05, 0.85, 0.9, 0.03),
    });
    page.ink = Some(vec![r(0.2, 0.86, 0.3, 0.035)]);
    let claim_b = Claim {
        part_id: "b",
        ..claim("x = 3", hint_rect([50, 850, 950, 880]))
    };
    let (placed, verdict) = placed_and_guarded(&page, &claim_b);
    assert_eq!(placed.placement, Placement::Ink);
    assert!(close(placed.rect, r(0.2, 0.86, 0.3, 0.035)), "{placed:?}");
    assert_eq!(verdict, Guard::Stands, "{placed:?}");
    // Part a's space shares none of it: it is not part a's writing.
    let (placed, verdict) = placed_and_guarded(&page, &claim_for_guard());
    assert!(!placed.located, "{placed:?}");
    assert_eq!(code_of(&verdict), Some(GuardCode::NotLocated));
    // Ink only grazing part b's space (a tenth of it inside) is not part b's writing.
    page.ink = Some(vec![r(0.2, 0.875, 0.3, 0.05)]);
    let unhinted = Claim {
        part_id: "b",
        ..claim("x = 3", None)
    };
    let (placed, verdict) = placed_and_guarded(&page, &unhinted);
    assert!(!placed.located, "{placed:?}");
    assert_eq!(code_of(&verdict), Some(GuardCode::NotLocated));
}

#[test]
fn with_no_ink_the_hint_inside_the_space_places_it_and_the_guard_refuses_the_award() {
    let mut page = page();
    page.words.truncate(5);
    page.ink = Some(Vec::new());
    let placed = place(
        &page,
        &claim("x = 3", hint_rect([200, 500, 300, 530])),
        &Ink(None),
    );
    assert_eq!(placed.placement, Placement::Hint);
    assert!(placed.located);
    match guard(&page, &claim_for_guard(), &placed, &Ink(None)) {
        Guard::Uncertain(code, why) => {
            assert_eq!(code, GuardCode::NoInk);
            assert!(why.contains("no ink was added"), "{why}");
        }
        Guard::Stands => panic!("an award on no ink stood"),
    }
}

#[test]
fn a_hint_outside_the_space_is_not_located() {
    let mut page = page();
    page.words.truncate(5);
    page.ink = Some(Vec::new());
    let placed = place(
        &page,
        &claim("x = 3", hint_rect([0, 0, 50, 50])),
        &Ink(None),
    );
    assert_eq!(placed.placement, Placement::AnswerSpace);
    assert!(!placed.located);
    assert!(close(placed.rect, r(0.05, 0.4, 0.9, 0.4)));
    match guard(&page, &claim_for_guard(), &placed, &Ink(None)) {
        Guard::Uncertain(code, why) => {
            assert_eq!(code, GuardCode::NotLocated);
            assert!(why.contains("could not be located"), "{why}");
        }
        Guard::Stands => panic!("an unlocated award stood"),
    }
}

#[test]
fn a_blank_answer_is_placed_on_its_answer_space() {
    let page = page();
    let mut blank = claim("", hint_rect([0, 0, 10, 10]));
    blank.awarded = false;
    let placed = place(&page, &blank, &Ink(None));
    assert_eq!(placed.placement, Placement::AnswerSpace);
    assert!(placed.located);
    assert!(close(placed.rect, r(0.05, 0.4, 0.9, 0.4)));
}

#[test]
fn on_a_foreign_page_the_hint_is_shrunk_to_the_ink_it_covers() {
    let mut page = page();
    page.answer_regions.clear();
    page.laid_out = false;
    page.ink = None;
    page.words.clear();
    let ink = Ink(Some(r(0.3, 0.3, 0.1, 0.02)));
    let placed = place(
        &page,
        &claim("x = 3", hint_rect([250, 250, 500, 400])),
        &ink,
    );
    assert_eq!(placed.placement, Placement::Hint);
    assert!(close(placed.rect, r(0.3, 0.3, 0.1, 0.02)));
    assert_eq!(
        guard(&page, &claim_for_guard(), &placed, &ink),
        Guard::Stands
    );
    // The same hint over a clean part of the page is not located.
    let placed = place(
        &page,
        &claim("x = 3", hint_rect([600, 600, 700, 700])),
        &ink,
    );
    assert!(!placed.located);
}

#[test]
fn pages_that_are_not_the_students_work_support_no_award() {
    let mut clean = page();
    clean.evidence = false;
    clean.flagged = Some("it is the clean question paper".into());
    let placed = place(&clean, &claim("X = 3", None), &Ink(None));
    match guard(&clean, &claim_for_guard(), &placed, &Ink(None)) {
        Guard::Uncertain(code, why) => {
            assert_eq!(code, GuardCode::NotStudentWork);
            assert!(why.contains("clean question paper"), "{why}");
        }
        Guard::Stands => panic!("an award on a clean page stood"),
    }
}

#[test]
fn an_award_quoting_nothing_does_not_stand() {
    let page = page();
    let empty = claim("", hint_rect([0, 0, 1000, 1000]));
    let placed = place(&page, &empty, &Ink(None));
    match guard(&page, &empty, &placed, &Ink(None)) {
        Guard::Uncertain(code, why) => {
            assert_eq!(code, GuardCode::NoQuote);
            assert!(why.contains("without quoting"), "{why}");
        }
        Guard::Stands => panic!("an award quoting nothing stood"),
    }
    // A blank answer on a page without its answer space is not located.
    let mut elsewhere = page.clone();
    elsewhere.answer_regions.clear();
    let mut blank = claim("", None);
    blank.awarded = false;
    assert!(!place(&elsewhere, &blank, &Ink(None)).located);
}

#[test]
fn a_hint_centred_in_the_space_is_clipped_to_it() {
    let mut page = page();
    page.words.clear();
    page.ink = Some(vec![r(0.19, 0.2, 0.09, 0.05)]);
    // Nearly the whole page, centred inside part a's space: only the space is kept, and the
    // ink outside it (the printed question's area) does not make the award stand.
    let whole = claim("x = 3", hint_rect([0, 100, 1000, 1000]));
    let placed = place(&page, &whole, &Ink(None));
    assert_eq!(placed.placement, Placement::Hint);
    assert!(
        close(placed.rect, r(0.05, 0.4, 0.9, 0.4)),
        "{:?}",
        placed.rect
    );
    assert!(matches!(
        guard(&page, &whole, &placed, &Ink(None)),
        Guard::Uncertain(GuardCode::BoxTooLarge, _)
    ));
}

#[test]
fn dark_pixels_are_found_inside_a_box_only() {
    let mut img = image::GrayImage::from_pixel(100, 100, image::Luma([255]));
    for y in 40..45 {
        for x in 20..60 {
            img.put_pixel(x, y, image::Luma([10]));
        }
    }
    let found = dark_box(&img, r(0.0, 0.0, 1.0, 1.0), 128, 20).unwrap();
    assert!(close(found, r(0.2, 0.4, 0.4, 0.05)), "{found:?}");
    assert_eq!(dark_box(&img, r(0.0, 0.6, 1.0, 0.4), 128, 20), None);
    assert_eq!(dark_box(&img, r(0.2, 0.4, 0.01, 0.01), 128, 20), None);
}

/// The guard's code, or `None` when the award stands.
pub(super) fn code_of(verdict: &Guard) -> Option<GuardCode> {
    match verdict {
        Guard::Stands => None,
        Guard::Uncertain(code, _) => Some(*code),
    }
}

pub(super) fn why_of(verdict: &Guard) -> &str {
    match verdict {
        Guard::Stands => "",
        Guard::Uncertain(_, why) => why,
    }
}

/// Places `claim` on `page` and guards the award.
pub(super) fn placed_and_guarded(page: &WorkPage, claim: &Claim<'_>) -> (Placed, Guard) {
    let placed = place(page, claim, &Ink(None));
    let verdict = guard(page, claim, &placed, &Ink(None));
    (placed, verdict)
}
