//! Renders papers of the sample bank and checks the PDFs through poppler (`pdftotext`,
//! `pdftoppm`): cover, numbering, marks, footers, mark scheme rows, page images, determinism,
//! escaping, diagrams and the errors of bad input.

mod common;

use std::collections::BTreeMap;

use common::{artifacts_dir, paper_of, pdf_pages, pdf_text, sample_revisions, scratch};
use examkit_bank::{Block, Revision};
use examkit_pdf::{
    GRADE_GUIDE, PaperDocument, PaperQuestion, RenderError, Renderer, WritingSpace,
    time_guide_minutes,
};
use uuid::Uuid;

/// Sample questions used by most tests: labelled parts, an undivided question, a diagram, and a
/// question whose first revision was withdrawn.
const MIXED: [usize; 4] = [0, 1, 13, 20];

const SPACES: [WritingSpace; 5] = [
    WritingSpace::Smart,
    WritingSpace::None,
    WritingSpace::Pages(1),
    WritingSpace::Pages(2),
    WritingSpace::Pages(3),
];

fn label_of(rev: &Revision, part_id: &str, number: usize) -> String {
    let part = rev
        .content
        .parts
        .iter()
        .find(|p| p.id == part_id)
        .expect("part");
    part.label.clone().unwrap_or_else(|| number.to_string())
}

fn marks_word(m: u32) -> &'static str {
    if m == 1 { "mark" } else { "marks" }
}

/// Collapses runs of spaces so that assertions do not depend on column alignment.
fn squeeze(text: &str) -> String {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_sample_revision_typesets_without_errors_or_warnings() {
    let renderer = Renderer::new();
    let questions = sample_revisions();
    assert!(
        questions.len() >= 68,
        "only {} servable revisions",
        questions.len()
    );
    let paper = PaperDocument {
        paper_id: Uuid::nil(),
        revision: 1,
        title: "Every sample revision".to_owned(),
        writing_space: WritingSpace::None,
        grade_guide: true,
        questions,
    };
    let warnings = renderer
        .warnings(&paper)
        .expect("every sample revision typesets");
    assert!(warnings.is_empty(), "typst warnings: {warnings:#?}");
}

#[test]
fn question_paper_has_cover_numbering_marks_and_footers_for_every_writing_space() {
    let renderer = Renderer::new();
    let dir = scratch("qp-text");
    for space in SPACES {
        let paper = paper_of(&MIXED, space);
        let rendered = renderer.question_paper(&paper).expect("renders");
        assert!(rendered.pdf.starts_with(b"%PDF-"), "a PDF");
        let text = squeeze(&pdf_text(&rendered.pdf, &dir, space.as_str()));
        let total: u32 = paper.questions.iter().map(|q| q.revision.marks).sum();

        // Cover.
        assert!(text.contains("Mixed Practice Paper"), "{space}: title");
        assert!(text.contains("Question paper"), "{space}: kind");
        assert!(
            text.contains(&format!("Paper {}", paper.paper_id)),
            "{space}: paper id"
        );
        assert!(text.contains("Revision 3"), "{space}: revision");
        assert!(
            text.contains(&format!("Total marks {total}")),
            "{space}: total marks"
        );
        let minutes = time_guide_minutes(total);
        assert!(
            text.contains(&format!("{minutes} minutes")),
            "{space}: time guide {minutes}"
        );
        assert!(
            text.contains("Instructions") && text.contains("Information"),
            "{space}"
        );
        assert!(
            text.contains("not an official grade boundary"),
            "{space}: grade note"
        );

        // Questions in order, each with its parts, marks and total.
        let mut position = 0;
        for (i, q) in paper.questions.iter().enumerate() {
            let n = i + 1;
            for part in &q.revision.content.parts {
                if let Some(label) = &part.label {
                    let at = text[position..]
                        .find(&format!("{label} "))
                        .unwrap_or_else(|| panic!("{space}: Q{n} part {label} in order"));
                    position += at;
                }
                let marks = format!("({})", part.marks);
                let at = text[position..]
                    .find(&marks)
                    .unwrap_or_else(|| panic!("{space}: Q{n} marks {marks} in order"));
                position += at;
            }
            let total_line = format!(
                "(Total for Question {n} is {} {})",
                q.revision.marks,
                marks_word(q.revision.marks)
            );
            let at = text[position..]
                .find(&total_line)
                .unwrap_or_else(|| panic!("{space}: {total_line} in order"));
            position += at;
        }
        assert!(text[position..].contains(&format!("TOTAL FOR PAPER IS {total} MARKS")));
        assert!(text[position..].contains("END OF PAPER"), "{space}: end");

        // Every page has its footer.
        for page in 1..=rendered.pages {
            assert!(
                text.contains(&format!("Page {page} of {}", rendered.pages)),
                "{space}: footer of page {page}"
            );
        }
        let footers = text
            .matches(&format!("Paper {} · Revision 3", paper.paper_id))
            .count();
        assert_eq!(
            footers, rendered.pages,
            "{space}: id and revision in every footer"
        );
        if let WritingSpace::Pages(k) = space {
            let answer_pages = text.matches("Answer space for Question").count();
            assert_eq!(
                answer_pages,
                MIXED.len() * usize::from(k),
                "{space}: writing pages"
            );
        }
    }
}

#[test]
fn mark_scheme_lists_every_criterion_with_its_part_code_and_totals() {
    let renderer = Renderer::new();
    let dir = scratch("ms-text");
    let paper = paper_of(&MIXED, WritingSpace::Smart);
    let rendered = renderer.mark_scheme(&paper).expect("renders");
    let text = squeeze(&pdf_text(&rendered.pdf, &dir, "mark-scheme"));
    assert!(text.contains("Mixed Practice Paper") && text.contains("Mark scheme"));
    assert!(text.contains(&format!("Paper {}", paper.paper_id)) && text.contains("Revision 3"));

    let mut position = 0;
    for (i, q) in paper.questions.iter().enumerate() {
        let n = i + 1;
        let heading = format!("Question {n}");
        position += text[position..]
            .find(&heading)
            .unwrap_or_else(|| panic!("{heading}"));
        for c in &q.revision.scheme.criteria {
            // Each row starts with the part label, and shows the criterion's code.
            let label = label_of(&q.revision, &c.part_id, n);
            let at = text[position..]
                .find(&format!("\n{label} "))
                .unwrap_or_else(|| panic!("Q{n} criterion {} row for part {label}", c.id));
            position += at + 1;
            // Maths with superscripts or fractions spreads a row over a few text lines.
            let line_start = text[..position - 1].rfind('\n').map_or(0, |s| s + 1);
            let row: String = text[line_start..]
                .lines()
                .take(4)
                .collect::<Vec<_>>()
                .join(" / ");
            assert!(
                row.split_whitespace().any(|w| w == c.code),
                "Q{n} criterion {} code {} on its row: {row:?}",
                c.id,
                c.code
            );
        }
        let total = format!("Total for Question {n} {}", q.revision.marks);
        position += text[position..]
            .find(&total)
            .unwrap_or_else(|| panic!("{total}"));
    }
    let total: u32 = paper.questions.iter().map(|q| q.revision.marks).sum();
    assert!(text.contains(&format!("TOTAL FOR PAPER IS {total} MARKS")));

    // The estimated grade guide.
    assert!(text.contains("Estimated grade guide"));
    assert!(text.contains("estimate for practice only, not an official grade boundary"));
    for (grade, percent) in GRADE_GUIDE {
        let marks = (total * percent).div_ceil(100);
        assert!(
            text.contains(&format!("{grade} {percent}% {marks} / {total}")),
            "grade {grade}"
        );
    }
    let without = PaperDocument {
        grade_guide: false,
        ..paper
    };
    let text = pdf_text(
        &renderer.mark_scheme(&without).expect("renders").pdf,
        &dir,
        "no-guide",
    );
    assert!(!text.contains("grade guide"), "no guide when not asked for");
}

#[test]
fn dependencies_are_shown_readably() {
    let renderer = Renderer::new();
    let dir = scratch("deps");
    let paper = PaperDocument {
        questions: vec![escaping_question()],
        ..paper_of(&[], WritingSpace::None)
    };
    let text = squeeze(&pdf_text(
        &renderer.mark_scheme(&paper).expect("renders").pdf,
        &dir,
        "ms",
    ));
    assert!(text.contains("dep. on M1"), "same-part dependency: {text}");
    assert!(text.contains("dep. on M1 in (a)"), "cross-part dependency");
    assert!(text.contains("Any of:"), "condition mode");
    assert!(text.contains("Accept:"), "answers");
}

#[test]
fn pages_render_to_non_blank_images_kept_as_artifacts() {
    let renderer = Renderer::new();
    let dir = scratch("images");
    let artifacts = artifacts_dir();
    let paper = paper_of(&MIXED, WritingSpace::Smart);
    let qp = renderer.question_paper(&paper).expect("renders");
    let ms = renderer.mark_scheme(&paper).expect("renders");
    for (name, rendered) in [("question-paper", &qp), ("mark-scheme", &ms)] {
        let pages = pdf_pages(&rendered.pdf, &dir, name);
        assert_eq!(pages.len(), rendered.pages, "{name}: page count");
        for (i, page) in pages.iter().enumerate() {
            // A4 at 60 dpi is about 496 × 702 pixels.
            assert!(
                (495..=498).contains(&page.width) && (701..=703).contains(&page.height),
                "{name} page {}: {}x{}",
                i + 1,
                page.width,
                page.height
            );
            assert!(page.dark_pixels() > 500, "{name} page {} is blank", i + 1);
        }
        for page in pages.iter().take(3) {
            let file = page.png.file_name().expect("file name");
            std::fs::copy(&page.png, artifacts.join(file)).expect("keep artifact");
        }
    }
    println!("page images kept in {}", artifacts.display());
}

#[test]
fn rendering_is_deterministic_across_calls_and_renderers() {
    let paper = paper_of(&MIXED, WritingSpace::Smart);
    let first = Renderer::new();
    let qp1 = first.question_paper(&paper).expect("renders");
    let qp2 = first.question_paper(&paper).expect("renders");
    let ms1 = first.mark_scheme(&paper).expect("renders");
    let second = Renderer::new();
    let qp3 = second.question_paper(&paper).expect("renders");
    let ms2 = second.mark_scheme(&paper).expect("renders");
    assert_eq!(qp1, qp2, "same renderer, same bytes");
    assert_eq!(qp1, qp3, "new renderer, same bytes");
    assert_eq!(ms1, ms2, "mark scheme bytes");
    assert_ne!(qp1.pdf, ms1.pdf);
    // The identifier follows the paper revision.
    let other = PaperDocument {
        revision: 4,
        ..paper
    };
    assert_ne!(first.question_paper(&other).expect("renders").pdf, qp1.pdf);
}

#[test]
fn page_counts_grow_with_writing_space_and_match_the_pdf() {
    let renderer = Renderer::new();
    let count = |space| {
        let paper = paper_of(&MIXED, space);
        let pages = renderer.question_paper_pages(&paper).expect("lays out");
        assert_eq!(
            pages,
            renderer.question_paper(&paper).expect("renders").pages,
            "{space}"
        );
        let both = renderer.page_counts(&paper).expect("lays out both");
        assert_eq!(both.question_paper, pages, "{space}");
        assert_eq!(
            both.mark_scheme,
            renderer.mark_scheme(&paper).expect("renders").pages,
            "{space}"
        );
        pages
    };
    let none = count(WritingSpace::None);
    let smart = count(WritingSpace::Smart);
    let one = count(WritingSpace::Pages(1));
    let two = count(WritingSpace::Pages(2));
    let three = count(WritingSpace::Pages(3));
    assert!(none < smart, "none {none} < smart {smart}");
    assert!(none < one, "none {none} < 1-page {one}");
    // Each extra writing page per question adds one page per question.
    assert_eq!(two, one + MIXED.len(), "2-pages");
    assert_eq!(three, two + MIXED.len(), "3-pages");
}

fn escaping_question() -> PaperQuestion {
    let text = include_str!("fixtures/escaping.json");
    let revision: Revision = serde_json::from_str(text).expect("fixture revision");
    PaperQuestion {
        question_id: Uuid::parse_str("5c0f3a2b-1d4e-4f6a-8b9c-0d1e2f3a4b5c").expect("uuid"),
        revision,
        assets: BTreeMap::new(),
    }
}

#[test]
fn markup_characters_in_text_print_literally() {
    let renderer = Renderer::new();
    let dir = scratch("escaping");
    let paper = PaperDocument {
        title: "#let t = 1 *b* $5 <l> @r // c".to_owned(),
        questions: vec![escaping_question()],
        ..paper_of(&[], WritingSpace::None)
    };
    assert!(renderer.warnings(&paper).expect("typesets").is_empty());
    let text = pdf_text(
        &renderer.question_paper(&paper).expect("renders").pdf,
        &dir,
        "qp",
    );
    for literal in [
        "#let t = 1 *b* $5 <l> @r // c",
        "#let x = 1",
        "*bold* and _under_",
        "<label> and @ref",
        "// slashes and /* block */",
        "[brackets] and `tick` and ~tilde",
        "-- dashes --- and ... dots",
        "price $5 and back\\slash",
        "= not a heading",
        "- not a list",
        "#set page(width: 1cm)",
        "\"quoted\" and 'single'",
        "Work out #calc and",
        "(b)*",
    ] {
        assert!(
            text.contains(literal),
            "{literal:?} not printed literally in:\n{text}"
        );
    }
    // Inline maths is still typeset as maths (superscript, no dollar signs), and `\$` is a dollar.
    assert!(text.contains("costs $3."), "escaped dollar");
    assert!(!text.contains("$x^2"), "maths is not printed as source");
    let ms = pdf_text(
        &renderer.mark_scheme(&paper).expect("renders").pdf,
        &dir,
        "ms",
    );
    for literal in [
        "Writes #let y = *2*",
        "<ok>",
        "@cond one",
        "_cond two_",
        "eight // words",
        "cao #note",
    ] {
        assert!(
            ms.contains(literal),
            "{literal:?} not printed literally in:\n{ms}"
        );
    }
}

/// Finds the first page whose image differs between two renderings.
fn dark_pixels_per_page(pdf: &[u8], name: &str) -> Vec<usize> {
    let dir = scratch(name);
    pdf_pages(pdf, &dir, name)
        .iter()
        .map(|p| p.dark_pixels())
        .collect()
}

#[test]
fn diagrams_are_drawn_in_place() {
    let renderer = Renderer::new();
    // Question 14 of the bank has a diagram.
    let paper = paper_of(&[13], WritingSpace::None);
    let q = &paper.questions[0];
    assert!(
        q.revision
            .content
            .stem
            .iter()
            .chain(q.revision.content.parts.iter().flat_map(|p| &p.body))
            .any(|b| matches!(b, Block::Diagram { .. })),
        "the chosen question has a diagram"
    );
    let with = dark_pixels_per_page(
        &renderer.question_paper(&paper).expect("renders").pdf,
        "with",
    );
    // The same paper with every diagram replaced by an empty picture of the same size.
    let mut blank = paper.clone();
    for bytes in blank.questions[0].assets.values_mut() {
        *bytes = br#"<svg xmlns="http://www.w3.org/2000/svg" width="400" height="300" viewBox="0 0 400 300"></svg>"#.to_vec();
    }
    let without = dark_pixels_per_page(
        &renderer.question_paper(&blank).expect("renders").pdf,
        "without",
    );
    assert_eq!(with.len(), without.len());
    let extra: usize = with
        .iter()
        .zip(&without)
        .map(|(a, b)| a.saturating_sub(*b))
        .sum();
    assert!(extra > 300, "the diagram adds ink: {with:?} vs {without:?}");
}

fn expect_error(paper: &PaperDocument) -> RenderError {
    let renderer = Renderer::new();
    let qp = renderer
        .question_paper(paper)
        .expect_err("question paper must fail");
    let pages = renderer
        .question_paper_pages(paper)
        .expect_err("page count must fail");
    assert_eq!(qp, pages);
    qp
}

fn with_revision(edit: impl FnOnce(&mut PaperQuestion)) -> PaperDocument {
    let mut q = escaping_question();
    edit(&mut q);
    PaperDocument {
        questions: vec![q],
        ..paper_of(&[], WritingSpace::Smart)
    }
}

fn set_first_text(q: &mut PaperQuestion, text: &str) {
    q.revision.content.parts[0].body = vec![Block::Text {
        text: text.to_owned(),
    }];
}

#[test]
fn unsafe_or_broken_maths_is_rejected_with_a_clear_error() {
    for (text, needle) in [
        ("Find $#read(\"/etc/passwd\")$.", "`#`"),
        ("Find $x // comment$.", "comments"),
        ("Find $x /* c */ y$.", "comments"),
        ("Find $x + 1.", "never closed"),
        ("Find $ $.", "empty"),
        ("Find $\"open$.", "typst reads it as"),
        ("Find $x \\$.", "never closed"),
    ] {
        let err = expect_error(&with_revision(|q| set_first_text(q, text)));
        match &err {
            RenderError::InvalidMath { question, .. } => assert_eq!(*question, 1, "{text}"),
            other => panic!("{text}: unexpected error {other:?}"),
        }
        let message = err.to_string();
        assert!(message.contains(needle), "{text}: {message}");
        assert!(message.starts_with("question 1:"), "{message}");
    }
    let err = expect_error(&with_revision(|q| {
        q.revision.content.parts[1].body = vec![Block::Math {
            math: "x # y".to_owned(),
        }]
    }));
    assert!(matches!(err, RenderError::InvalidMath { .. }), "{err:?}");
    // Maths in the scheme is checked too.
    let renderer = Renderer::new();
    let paper = with_revision(|q| q.revision.scheme.criteria[0].requirement = "$#x$".to_owned());
    let err = renderer
        .mark_scheme(&paper)
        .expect_err("scheme maths checked");
    assert!(matches!(err, RenderError::InvalidMath { .. }), "{err:?}");
}

#[test]
fn bad_diagrams_and_references_are_rejected_with_a_clear_error() {
    let asset = Uuid::parse_str("9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d").expect("uuid");
    let diagram = |width: f64| Block::Diagram {
        asset,
        alt: "A triangle.".to_owned(),
        width,
    };
    let svg = br#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>"#.to_vec();

    let err = expect_error(&with_revision(|q| {
        q.revision.content.stem.push(diagram(0.5))
    }));
    assert_eq!(err, RenderError::MissingAsset { question: 1, asset });
    assert!(err.to_string().contains("is missing"), "{err}");

    for width in [0.0, -0.5, 1.5, f64::NAN] {
        let err = expect_error(&with_revision(|q| {
            q.revision.content.stem.push(diagram(width));
            q.assets.insert(asset, svg.clone());
        }));
        assert!(
            matches!(err, RenderError::InvalidQuestion { .. }),
            "{width}: {err:?}"
        );
        assert!(
            err.to_string().contains("expected a fraction in (0, 1]"),
            "{err}"
        );
    }

    let err = expect_error(&with_revision(|q| {
        q.revision.content.stem.push(diagram(0.5));
        q.assets.insert(asset, b"<svg this is not xml".to_vec());
    }));
    assert!(matches!(err, RenderError::Typeset(_)), "{err:?}");
    assert!(err.to_string().starts_with("typesetting failed:"), "{err}");

    let renderer = Renderer::new();
    let paper = with_revision(|q| q.revision.scheme.criteria[1].depends_on = vec!["zz".to_owned()]);
    let err = renderer
        .mark_scheme(&paper)
        .expect_err("unknown dependency");
    assert!(
        err.to_string().contains("unknown criterion \"zz\""),
        "{err}"
    );
    let paper = with_revision(|q| q.revision.scheme.criteria[1].part_id = "q".to_owned());
    let err = renderer.mark_scheme(&paper).expect_err("unknown part");
    assert!(err.to_string().contains("unknown part \"q\""), "{err}");
    let paper = with_revision(|q| q.revision.content.parts.clear());
    let err = renderer.question_paper(&paper).expect_err("no parts");
    assert!(err.to_string().contains("no parts"), "{err}");
}
