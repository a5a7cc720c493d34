//! Renders a 24-question paper of the sample bank to `question-paper.pdf` and `mark-scheme.pdf`,
//! with the question paper's recorded layout in `layout.json`.
//!
//! ```text
//! cargo run --release -p examkit-pdf --example render_sample -- OUT_DIR [WRITING_SPACE] [COUNT]
//! ```

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::time::Instant;

use examkit_pdf::{Renderer, WritingSpace};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(
        args.next()
            .ok_or("usage: render_sample OUT_DIR [WRITING_SPACE] [COUNT]")?,
    );
    let space: WritingSpace = args.next().as_deref().unwrap_or("smart").parse()?;
    let count: usize = args.next().as_deref().unwrap_or("24").parse()?;
    std::fs::create_dir_all(&out)?;
    let paper = common::sample_paper(count, space);
    let start = Instant::now();
    let renderer = Renderer::new();
    let qp = renderer.question_paper(&paper)?;
    let ms = renderer.mark_scheme(&paper)?;
    let elapsed = start.elapsed();
    std::fs::write(out.join("question-paper.pdf"), &qp.pdf)?;
    std::fs::write(out.join("mark-scheme.pdf"), &ms.pdf)?;
    if let Some(layout) = &qp.layout {
        std::fs::write(
            out.join("layout.json"),
            serde_json::to_string_pretty(layout)?,
        )?;
    }
    println!(
        "{} questions, writing space {space}: question paper {} pages, mark scheme {} pages, {:.0} ms, written to {}",
        paper.questions.len(),
        qp.pages,
        ms.pages,
        elapsed.as_secs_f64() * 1000.0,
        out.display()
    );
    Ok(())
}
