//! Class sets: every copy of a print run in one PDF. Checked on page images made by `pdftoppm`
//! and text from `pdftotext`: each page's copy code decodes to its copy and page, each page prints
//! the line a person can type and, on a named copy, the student's name; every copy starts on an
//! odd page; and a copy's pages are the question paper's pages exactly, outside the band at the
//! top where the code and name go.

mod common;

use common::{decode_codes, gray_pages, paper_of, pdf_text, scratch};
use examkit_pdf::{
    ClassSetDocument, CopyCode, CopyLabel, ExtraSheetCode, MAX_COPIES, PaperDocument, RenderError,
    Renderer, WritingSpace, pages_per_copy,
};
use uuid::Uuid;

const DPI: u32 = 100;

fn run_id() -> Uuid {
    Uuid::parse_str("9b1c0d2e-3f4a-4b5c-8d6e-7f8091a2b3c4").expect("uuid")
}

fn label(copy: u32, name: Option<&str>, candidate: Option<&str>) -> CopyLabel {
    CopyLabel {
        copy,
        name: name.map(str::to_owned),
        candidate_number: candidate.map(str::to_owned),
    }
}

/// A sample paper whose question paper has an odd number of pages, so copies end on a blank
/// back, and its page count.
fn odd_paper(renderer: &Renderer) -> (PaperDocument, u32) {
    for indices in [
        &[0usize][..],
        &[0, 1],
        &[0, 1, 2],
        &[1],
        &[2],
        &[0, 2],
        &[1, 2, 3],
    ] {
        let paper = paper_of(indices, WritingSpace::Smart);
        let pages = renderer.question_paper_pages(&paper).expect("pages");
        if pages % 2 == 1 {
            return (paper, u32::try_from(pages).expect("pages"));
        }
    }
    panic!("no sample paper with an odd number of pages");
}

#[test]
fn every_copy_page_carries_its_code_line_and_name_and_copies_start_on_odd_pages() {
    let renderer = Renderer::new();
    let (paper, paper_pages) = odd_paper(&renderer);
    let names = [
        Some("Ada Lovelace"),
        Some("Zoë O'Brien-Ng \"Z\" \\ #strong[x] $a$"),
        None,
    ];
    let set = ClassSetDocument {
        run_id: run_id(),
        copies: vec![
            label(1, names[0], Some("0417")),
            label(2, names[1], None),
            label(17, names[2], None),
        ],
    };
    let rendered = renderer.class_set(&paper, &set).expect("renders");
    let per_copy = pages_per_copy(paper_pages);
    assert_eq!(per_copy, paper_pages + 1, "an odd paper gains a blank back");
    assert_eq!(rendered.paper_pages, paper_pages);
    assert_eq!(rendered.pages_per_copy, per_copy);
    assert_eq!(rendered.pages, 3 * per_copy as usize);

    let dir = scratch("class-set");
    let images = gray_pages(&rendered.pdf, &dir, "set", DPI);
    assert_eq!(images.len(), rendered.pages);
    let text = pdf_text(&rendered.pdf, &dir, "set");
    let page_texts: Vec<&str> = text.split('\u{c}').collect();
    for (index, copy) in set.copies.iter().enumerate() {
        for page in 1..=per_copy {
            let at = rendered.pdf_page(index, page).expect("page of the copy");
            if page == 1 {
                assert_eq!(at % 2, 1, "copy {} starts on page {at}", copy.copy);
            }
            let expected = CopyCode {
                run_id: run_id(),
                copy: copy.copy,
                page,
            };
            let found = decode_codes(&images[at - 1]);
            assert_eq!(found.len(), 1, "page {at}: one code");
            assert_eq!(CopyCode::parse(&found[0].payload), Some(expected));
            let (x, y) = found[0].centre;
            assert!(
                x > 0.8 && y < 0.1,
                "page {at}: the code is in the top right"
            );
            let page_text = page_texts[at - 1];
            let line = expected.caption(paper_pages);
            assert!(
                page_text.contains(&line),
                "page {at}: {line:?} in {page_text}"
            );
            if let Some(name) = &copy.name {
                assert!(
                    page_text.contains(name.as_str()),
                    "page {at}: {name:?} printed"
                );
            }
            if let Some(number) = &copy.candidate_number {
                assert!(page_text.contains(&format!("Candidate {number}")));
            }
            assert_eq!(
                page_text.contains("intentionally blank"),
                page > paper_pages,
                "page {at}: only the blank back is blank"
            );
        }
    }
    assert!(rendered.pdf_page(0, per_copy + 1).is_none());
    assert!(rendered.pdf_page(0, 0).is_none());
}

#[test]
fn a_copy_page_is_the_question_paper_page_below_the_code_band() {
    let renderer = Renderer::new();
    let paper = paper_of(&[0, 1], WritingSpace::Smart);
    let set = ClassSetDocument {
        run_id: run_id(),
        copies: vec![label(5, Some("Grace Hopper"), Some("9001"))],
    };
    let rendered = renderer.class_set(&paper, &set).expect("renders");
    let qp = renderer.question_paper(&paper).expect("renders");
    let dir = scratch("class-set-base");
    let copy_pages = gray_pages(&rendered.pdf, &dir, "copy", DPI);
    let paper_pages = gray_pages(&qp.pdf, &dir, "paper", DPI);
    // The code, its line and the name sit in the top 26 mm; the text area starts at 28 mm.
    for (i, paper_page) in paper_pages.iter().enumerate() {
        let copy_page = &copy_pages[i];
        assert_eq!(
            (copy_page.width, copy_page.height),
            (paper_page.width, paper_page.height)
        );
        let band = (26.0 / 297.0 * paper_page.height as f64).ceil() as usize;
        let w = paper_page.width;
        // The base is placed as a form, so a thin rule's anti-aliased edge may round to another
        // pixel (a rule drawn on one row on the paper may be spread over two on the copy); a
        // difference must be at ink printed on both pages, never ink on one alone.
        let near_ink = |pixels: &[u8], i: usize| {
            let (y, x) = (i / w, i % w);
            (y.saturating_sub(1)..=(y + 1).min(paper_page.height - 1)).any(|yy| {
                (x.saturating_sub(1)..=(x + 1).min(w - 1)).any(|xx| pixels[yy * w + xx] < 245)
            })
        };
        let mut differing = 0;
        for k in band * w..paper_page.pixels.len() {
            if copy_page.pixels[k].abs_diff(paper_page.pixels[k]) > 40 {
                differing += 1;
                assert!(
                    near_ink(&copy_page.pixels, k) && near_ink(&paper_page.pixels, k),
                    "page {}: pixel ({}, {}) is ink on one page only",
                    i + 1,
                    k % w,
                    k / w
                );
            }
        }
        let total = paper_page.pixels.len() - band * w;
        assert!(
            differing * 100 < total,
            "page {}: {differing} of {total} pixels differ below the code band",
            i + 1
        );
        let dark_above = copy_page.pixels[..band * w]
            .iter()
            .filter(|p| **p < 128)
            .count();
        assert!(dark_above > 0, "page {}: the code band is printed", i + 1);
    }
}

#[test]
fn class_sets_are_deterministic() {
    let renderer = Renderer::new();
    let paper = paper_of(&[0], WritingSpace::Smart);
    let set = ClassSetDocument {
        run_id: run_id(),
        copies: (1..=4).map(|c| label(c, None, None)).collect(),
    };
    let a = renderer.class_set(&paper, &set).expect("renders");
    let b = Renderer::new().class_set(&paper, &set).expect("renders");
    assert_eq!(a, b);
}

#[test]
fn sets_that_cannot_be_printed_are_refused_with_a_reason() {
    let renderer = Renderer::new();
    let paper = paper_of(&[0], WritingSpace::Smart);
    let cases = [
        (vec![], "1 to 300 copies"),
        (vec![label(0, None, None)], "copy number 0"),
        (vec![label(MAX_COPIES + 1, None, None)], "copy number 301"),
        (vec![label(2, None, None), label(2, None, None)], "repeated"),
        (vec![label(1, Some("Tab\there"), None)], "control character"),
        (vec![label(1, None, Some("12\u{7}"))], "control character"),
        (
            (1..=MAX_COPIES + 1).map(|c| label(c, None, None)).collect(),
            "not 301",
        ),
    ];
    for (copies, reason) in cases {
        let set = ClassSetDocument {
            run_id: run_id(),
            copies,
        };
        match renderer.class_set(&paper, &set) {
            Err(RenderError::InvalidClassSet(message)) => {
                assert!(message.contains(reason), "{message:?} says {reason:?}")
            }
            other => panic!("expected a refusal ({reason}), got {other:?}"),
        }
    }
}

#[test]
fn the_extra_answer_sheet_carries_the_run_code_and_boxes_on_one_page() {
    let renderer = Renderer::new();
    let pdf = renderer
        .extra_sheet("Year 12 \"mock\" #1", run_id())
        .expect("renders");
    assert_eq!(
        pdf,
        renderer
            .extra_sheet("Year 12 \"mock\" #1", run_id())
            .expect("renders")
    );
    let dir = scratch("extra-sheet");
    let pages = gray_pages(&pdf, &dir, "extra", DPI);
    assert_eq!(pages.len(), 1);
    let found = decode_codes(&pages[0]);
    assert_eq!(found.len(), 1);
    assert_eq!(
        ExtraSheetCode::parse(&found[0].payload),
        Some(ExtraSheetCode { run_id: run_id() })
    );
    let text = pdf_text(&pdf, &dir, "extra");
    for words in [
        "Extra answer sheet · 9b1c0d2e",
        "Year 12 \"mock\" #1",
        "Copy number",
        "Question",
        "Name",
    ] {
        assert!(text.contains(words), "{words:?} printed in {text}");
    }
}
