//! Export timings of a 24-question paper of the sample bank: cold (new renderer with font
//! loading, first render in the process), warm (later renders) and the page count alone; then a
//! class set of 30 copies of a 12-page paper (named copies, as from a roster) from a cold start.
//!
//! ```text
//! cargo bench -p examkit-pdf --bench render
//! ```

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use examkit_pdf::{ClassSetDocument, CopyLabel, Renderer, WritingSpace};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    let paper = common::sample_paper(24, WritingSpace::Smart);
    const WARM_RUNS: u32 = 5;

    let start = Instant::now();
    let renderer = Renderer::new();
    let fonts = start.elapsed();
    let qp = renderer.question_paper(&paper).expect("question paper");
    let cold_qp = start.elapsed();
    let ms_doc = renderer.mark_scheme(&paper).expect("mark scheme");
    let cold_both = start.elapsed();
    println!(
        "24 questions, writing space smart: question paper {} pages ({} KiB), mark scheme {} pages ({} KiB)",
        qp.pages,
        qp.pdf.len() / 1024,
        ms_doc.pages,
        ms_doc.pdf.len() / 1024
    );
    println!(
        "cold: Renderer::new {:.1} ms; + question paper {:.0} ms; + mark scheme {:.0} ms (total)",
        ms(fonts),
        ms(cold_qp),
        ms(cold_both)
    );

    let mut qp_total = Duration::ZERO;
    let mut ms_total = Duration::ZERO;
    let mut pages_total = Duration::ZERO;
    for _ in 0..WARM_RUNS {
        let t = Instant::now();
        let out = renderer.question_paper(&paper).expect("question paper");
        qp_total += t.elapsed();
        assert_eq!(out, qp);
        let t = Instant::now();
        renderer.mark_scheme(&paper).expect("mark scheme");
        ms_total += t.elapsed();
        let t = Instant::now();
        let pages = renderer.question_paper_pages(&paper).expect("pages");
        pages_total += t.elapsed();
        assert_eq!(pages, qp.pages);
    }
    println!(
        "warm (mean of {WARM_RUNS}): question paper {:.0} ms, mark scheme {:.0} ms, both {:.0} ms, question_paper_pages {:.0} ms",
        ms(qp_total / WARM_RUNS),
        ms(ms_total / WARM_RUNS),
        ms((qp_total + ms_total) / WARM_RUNS),
        ms(pages_total / WARM_RUNS)
    );

    // A changed paper (different title) misses the layout caches: what a new paper costs.
    let mut changed = paper.clone();
    let mut changed_total = Duration::ZERO;
    for i in 0..WARM_RUNS {
        changed.title = format!("Practice paper {i}");
        let t = Instant::now();
        renderer.question_paper(&changed).expect("question paper");
        renderer.mark_scheme(&changed).expect("mark scheme");
        changed_total += t.elapsed();
    }
    println!(
        "new paper on a warm renderer (mean of {WARM_RUNS}): question paper + mark scheme {:.0} ms",
        ms(changed_total / WARM_RUNS)
    );
    class_set();
}

/// 30 named copies of the sample paper closest to 12 pages, typeset on a new renderer after the
/// caches are emptied: what printing a class costs after a restart.
fn class_set() {
    let renderer = Renderer::new();
    let paper = (4..=24)
        .map(|count| common::sample_paper(count, WritingSpace::Smart))
        .min_by_key(|paper| {
            let pages = renderer.question_paper_pages(paper).expect("pages");
            pages.abs_diff(12)
        })
        .expect("a paper");
    let set = ClassSetDocument {
        run_id: uuid::Uuid::from_u128(0x9b1c_0d2e_3f4a_4b5c_8d6e_7f80_91a2_b3c4),
        copies: (1..=30)
            .map(|copy| CopyLabel {
                copy,
                name: Some(format!("Student number {copy}")),
                candidate_number: Some(format!("{:04}", 1000 + copy)),
            })
            .collect(),
    };
    examkit_pdf::evict_caches();
    let renderer = Renderer::new();
    let start = Instant::now();
    let single = renderer.question_paper(&paper).expect("question paper");
    let one_paper = start.elapsed();
    examkit_pdf::evict_caches();
    let renderer = Renderer::new();
    let start = Instant::now();
    let rendered = renderer.class_set(&paper, &set).expect("class set");
    let whole = start.elapsed();
    println!(
        "class set, cold: 30 named copies of a {}-page paper ({} pages, {} KiB) in {:.0} ms; one question paper alone {:.0} ms ({:.1}x)",
        rendered.paper_pages,
        rendered.pages,
        rendered.pdf.len() / 1024,
        ms(whole),
        ms(one_paper),
        whole.as_secs_f64() / one_paper.as_secs_f64()
    );
    assert_eq!(single.pages as u32, rendered.paper_pages);
}
