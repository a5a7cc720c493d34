//! The page codes and the recorded answer-space layout, checked on page images made by
//! `pdftoppm`: every page's QR code decodes to its payload, the recorded regions are valid and do
//! not overlap, and the ruled answer lines are exactly inside the recorded answer spaces.

mod common;

use common::{Page, decode_codes, gray_pages, paper_of, pdf_text, sample_paper, scratch};
use examkit_pdf::{
    DocumentKind, LINES_PER_MARK, Layout, MAX_CODED_PAGES, PageCode, PaperDocument, Region,
    Renderer, WritingSpace,
};

/// Sample questions: labelled parts, an undivided question, a diagram, a withdrawn first
/// revision, and enough text that answer lines break across pages.
const MIXED: [usize; 6] = [0, 1, 13, 20, 2, 3];

const SPACES: [WritingSpace; 5] = [
    WritingSpace::Smart,
    WritingSpace::None,
    WritingSpace::Pages(1),
    WritingSpace::Pages(2),
    WritingSpace::Pages(3),
];

/// The resolution of the page images of these tests.
const DPI: u32 = 100;

#[test]
fn every_page_of_both_documents_carries_its_decodable_page_code() {
    let renderer = Renderer::new();
    let dir = scratch("page-codes");
    for space in [WritingSpace::Smart, WritingSpace::Pages(1)] {
        let paper = paper_of(&MIXED, space);
        for (kind, rendered) in [
            (
                DocumentKind::QuestionPaper,
                renderer.question_paper(&paper).expect("renders"),
            ),
            (
                DocumentKind::MarkScheme,
                renderer.mark_scheme(&paper).expect("renders"),
            ),
        ] {
            let name = format!("{}-{space}", kind.code());
            let pages = gray_pages(&rendered.pdf, &dir, &name, 150);
            assert_eq!(pages.len(), rendered.pages, "{name}: page count");
            let text = pdf_text(&rendered.pdf, &dir, &name);
            for (i, page) in pages.iter().enumerate() {
                let expected = PageCode {
                    kind,
                    paper_id: paper.paper_id,
                    revision: paper.revision,
                    page: u32::try_from(i + 1).expect("page"),
                };
                let found = decode_codes(page);
                assert_eq!(found.len(), 1, "{name} page {}: one code", i + 1);
                assert_eq!(found[0].payload, expected.to_payload(), "{name}");
                assert_eq!(PageCode::parse(&found[0].payload), Some(expected));
                // In the top right corner, above the text.
                let (x, y) = found[0].centre;
                assert!(x > 0.8 && x < 0.92 && y < 0.08, "{name}: code at {x}, {y}");
                assert!(
                    text.contains(&expected.caption()),
                    "{name}: caption {:?}",
                    expected.caption()
                );
            }
        }
    }
}

#[test]
fn papers_over_the_page_limit_still_lay_out_without_codes_on_later_pages() {
    let renderer = Renderer::new();
    let paper = sample_paper(24, WritingSpace::Pages(3));
    let pages = renderer.question_paper_pages(&paper).expect("lays out");
    assert!(pages > MAX_CODED_PAGES as usize, "{pages} pages");
    let layout = renderer.question_paper_layout(&paper).expect("lays out");
    assert_eq!(layout.pages.len(), pages);
}

/// Checks what holds for every writing space: pages, bounds, order and overlaps.
fn check_regions(layout: &Layout, paper: &PaperDocument, pages: usize) {
    let space = paper.writing_space;
    assert_eq!(layout.paper_id, paper.paper_id);
    assert_eq!(layout.revision, paper.revision);
    assert_eq!(layout.writing_space, space.as_str());
    assert_eq!(layout.pages.len(), pages, "{space}: pages");
    for g in &layout.pages {
        assert!((g.width_pt - 595.28).abs() < 0.1 && (g.height_pt - 841.89).abs() < 0.1);
    }
    assert_eq!(layout.questions.len(), paper.questions.len());
    let valid = |r: &Region, what: &str| {
        assert!(
            r.page >= 1 && r.page as usize <= pages,
            "{space}: {what} page {}",
            r.page
        );
        for v in [r.x, r.y, r.width, r.height, r.x + r.width, r.y + r.height] {
            assert!(
                (0.0..=1.0).contains(&v),
                "{space}: {what} {r:?} out of the page"
            );
        }
        assert!(
            r.width > 0.3 && r.height > 0.005,
            "{space}: {what} {r:?} too small"
        );
    };
    // The cover's name space: on page 1, a strip above the name line, clear of every question.
    let name_space = layout
        .name_space
        .expect("the cover's name space is recorded");
    valid(&name_space, "name space");
    assert_eq!(name_space.page, 1);
    assert!(
        (0.025..0.05).contains(&name_space.height),
        "{space}: name space {name_space:?}"
    );
    let mut previous_page = 1;
    let mut answer_spaces: Vec<(String, Region)> = Vec::new();
    for (i, (q, pq)) in layout.questions.iter().zip(&paper.questions).enumerate() {
        assert_eq!(q.number as usize, i + 1);
        assert_eq!(q.question_id, pq.question_id);
        assert!(
            q.label_page >= previous_page,
            "{space}: questions in page order"
        );
        previous_page = q.label_page;
        assert_eq!(q.parts.len(), pq.revision.content.parts.len());
        for r in &q.answer_space {
            valid(r, "question answer space");
        }
        match space {
            WritingSpace::Pages(k) => {
                assert_eq!(
                    q.answer_space.len(),
                    usize::from(k),
                    "{space}: one per page"
                );
                // The writing pages follow the question, each on a page of its own.
                let first_prompt = q.parts[0].prompt[0].page;
                for (j, r) in q.answer_space.iter().enumerate() {
                    assert!(r.page > first_prompt);
                    assert!(r.height > 0.6, "{space}: a whole page of lines: {r:?}");
                    if j > 0 {
                        assert_eq!(r.page, q.answer_space[j - 1].page + 1);
                    }
                }
            }
            _ => assert!(q.answer_space.is_empty()),
        }
        for (part, pp) in q.parts.iter().zip(&pq.revision.content.parts) {
            let name = format!("Q{} part {}", q.number, part.part_id);
            assert_eq!(part.part_id, pp.id);
            assert_eq!(part.label, pp.label);
            assert!(!part.prompt.is_empty(), "{space}: {name} prompt");
            assert!(part.prompt[0].page >= q.label_page, "{space}: {name}");
            for r in &part.prompt {
                valid(r, &format!("{name} prompt"));
                assert!(
                    !r.overlaps(&name_space, 0.0),
                    "{space}: {name} under the name"
                );
            }
            for r in &part.answer_space {
                valid(r, &format!("{name} answer space"));
            }
            match space {
                WritingSpace::Smart => {
                    assert!(!part.answer_space.is_empty(), "{space}: {name}");
                    // The lines follow the text.
                    let last_prompt = part.prompt[part.prompt.len() - 1];
                    let first_answer = part.answer_space[0];
                    assert!(
                        first_answer.page > last_prompt.page
                            || first_answer.y >= last_prompt.y + last_prompt.height - 0.0005,
                        "{space}: {name}: lines after the text"
                    );
                    for r in &part.answer_space {
                        for p in &part.prompt {
                            assert!(!r.overlaps(p, 0.0005), "{space}: {name}: text and lines");
                        }
                        answer_spaces.push((name.clone(), *r));
                    }
                }
                WritingSpace::Pages(_) => assert_eq!(part.answer_space, q.answer_space),
                WritingSpace::None => assert!(part.answer_space.is_empty()),
            }
        }
    }
    // No two parts' answer spaces overlap.
    for (i, (a_name, a)) in answer_spaces.iter().enumerate() {
        for (b_name, b) in &answer_spaces[i + 1..] {
            if a_name != b_name {
                assert!(
                    !a.overlaps(b, 0.001),
                    "{space}: {a_name} {a:?} overlaps {b_name} {b:?}"
                );
            }
        }
    }
}

/// Horizontal rules on a page image: rows where almost every pixel across the middle of the
/// text column is darker than the paper, grouped into runs. Each rule is given as its centre
/// `y` (a fraction of the page height) and whether it is black (a separator) rather than grey.
fn rules(page: &Page) -> Vec<(f64, bool)> {
    let (x0, x1) = (page.width * 30 / 100, page.width * 80 / 100);
    let mut out = Vec::new();
    let mut run: Option<(usize, usize, u8)> = None;
    for y in 0..page.height {
        let row = &page.pixels[y * page.width + x0..y * page.width + x1];
        let inked = row.iter().filter(|&&p| p < 240).count();
        let darkest = row.iter().copied().min().unwrap_or(255);
        if inked * 100 >= row.len() * 95 {
            run = Some(match run {
                Some((start, _, d)) => (start, y, d.min(darkest)),
                None => (y, y, darkest),
            });
        } else if let Some((start, end, d)) = run.take() {
            out.push(((start + end) as f64 / 2.0 / page.height as f64, d < 90));
        }
    }
    out
}

fn inside(r: &Region, page: usize, y: f64, tolerance: f64) -> bool {
    r.page as usize == page
        && r.x < 0.3
        && r.x + r.width > 0.8
        && y >= r.y - tolerance
        && y <= r.y + r.height + tolerance
}

#[test]
fn answer_spaces_are_recorded_for_every_writing_space_and_cover_the_ruled_lines() {
    let renderer = Renderer::new();
    let dir = scratch("layout");
    for space in SPACES {
        let paper = paper_of(&MIXED, space);
        let rendered = renderer.question_paper(&paper).expect("renders");
        let layout = rendered
            .layout
            .clone()
            .expect("a question paper has a layout");
        check_regions(&layout, &paper, rendered.pages);
        assert_eq!(
            renderer.question_paper_layout(&paper).expect("lays out"),
            layout,
            "{space}: the same layout without export"
        );
        let json = serde_json::to_string(&layout).expect("serialises");
        assert_eq!(
            serde_json::from_str::<Layout>(&json).expect("reads"),
            layout
        );

        let images = gray_pages(&rendered.pdf, &dir, space.as_str(), DPI);
        assert_eq!(images.len(), rendered.pages);
        // Half a line pitch of tolerance at the edges of a region.
        let tolerance = 1.0 / 297.0;
        let regions: Vec<(&str, Region)> = layout
            .questions
            .iter()
            .flat_map(|q| {
                q.parts
                    .iter()
                    .flat_map(|p| p.answer_space.iter().map(|r| (p.part_id.as_str(), *r)))
                    .chain(q.answer_space.iter().map(|r| ("question", *r)))
            })
            .collect();
        let content_bottom = 1.0 - 24.0 / 297.0;
        let mut lines_in = vec![0usize; regions.len()];
        for (i, image) in images.iter().enumerate().skip(1) {
            let page = i + 1;
            for (y, black) in rules(image) {
                if black || y > content_bottom {
                    // A separator between questions, or the footer.
                    continue;
                }
                let holders: Vec<usize> = regions
                    .iter()
                    .enumerate()
                    .filter(|(_, (_, r))| inside(r, page, y, tolerance))
                    .map(|(k, _)| k)
                    .collect();
                assert!(
                    !holders.is_empty() || space == WritingSpace::None,
                    "{space}: a ruled line at y {y:.3} of page {page} is in no answer space"
                );
                assert!(
                    space != WritingSpace::None,
                    "{space}: a ruled line at y {y:.3} of page {page}"
                );
                assert!(
                    holders.len() == 1 || matches!(space, WritingSpace::Pages(_)),
                    "{space}: a ruled line in several answer spaces"
                );
                for k in holders {
                    lines_in[k] += 1;
                }
            }
        }
        match space {
            WritingSpace::Smart => {
                // Each part's regions hold exactly its lines.
                let mut k = 0;
                for (q, pq) in layout.questions.iter().zip(&paper.questions) {
                    for (part, pp) in q.parts.iter().zip(&pq.revision.content.parts) {
                        let expected = (pp.marks * LINES_PER_MARK).max(LINES_PER_MARK) as usize;
                        let n = part.answer_space.len();
                        let found: usize = lines_in[k..k + n].iter().sum();
                        assert_eq!(
                            found, expected,
                            "Q{} part {}: ruled lines in its answer space",
                            q.number, part.part_id
                        );
                        k += n;
                    }
                }
            }
            WritingSpace::Pages(_) => {
                for ((_, r), n) in regions.iter().zip(&lines_in) {
                    // A writing page has about 25 lines 8 mm apart.
                    assert!(*n >= 20, "{space}: only {n} lines in {r:?}");
                }
            }
            WritingSpace::None => assert!(regions.is_empty()),
        }
        // The prompts hold the parts' text.
        for q in &layout.questions {
            for part in &q.parts {
                let ink: usize = part
                    .prompt
                    .iter()
                    .map(|r| dark_pixels_in(&images[r.page as usize - 1], r))
                    .sum();
                assert!(
                    ink > 40,
                    "{space}: Q{} part {}: no text in {:?}",
                    q.number,
                    part.part_id,
                    part.prompt
                );
            }
        }
    }
}

fn dark_pixels_in(page: &Page, r: &Region) -> usize {
    let (w, h) = (page.width as f64, page.height as f64);
    let (x0, x1) = ((r.x * w) as usize, ((r.x + r.width) * w) as usize);
    let (y0, y1) = ((r.y * h) as usize, ((r.y + r.height) * h) as usize);
    (y0..y1.min(page.height))
        .map(|y| {
            page.pixels[y * page.width + x0..y * page.width + x1.min(page.width)]
                .iter()
                .filter(|&&p| p < 128)
                .count()
        })
        .sum()
}

#[test]
fn the_mark_scheme_has_no_layout_and_layouts_are_deterministic() {
    let renderer = Renderer::new();
    let paper = paper_of(&MIXED, WritingSpace::Smart);
    assert_eq!(renderer.mark_scheme(&paper).expect("renders").layout, None);
    let a = renderer.question_paper(&paper).expect("renders");
    let b = Renderer::new().question_paper(&paper).expect("renders");
    assert_eq!(a, b);
    assert_eq!(
        serde_json::to_string(&a.layout).expect("json"),
        serde_json::to_string(&b.layout).expect("json")
    );
}
