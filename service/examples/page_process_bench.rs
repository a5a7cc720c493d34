//! What reading pages in page processes costs, against reading them in the service's own
//! process: the scanned scripts of `examples/calibration` (PDFs of scanned pages, as a class
//! stack is) are drawn for indexing both ways, page by page and turn about, then each page is
//! indexed in process (OCR included) to put the cost beside a page's whole reading.
//!
//! ```text
//! OMP_THREAD_LIMIT=1 cargo run --release -p examkit --example page_process_bench -- \
//!     [--rounds 5] [--dpi 150] [--examkit PATH]
//! ```
//!
//! It prints, for each file, the median time to draw a page in process and through a page
//! process (the file sent down a pipe, drawn there, the pixels sent back), their ratio, and the
//! difference as a share of the median time to index a page in process; then the same over
//! every page. The page processes are those of the `examkit` binary beside this program in its
//! target directory (built first under `cargo run`), or `--examkit PATH`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use examkit::untrusted::{Budgets, Pages};
use examkit_scan::{Format, IndexOptions, Indexer};
use support::Error;

mod support;

fn main() -> Result<(), Error> {
    let mut rounds = 5usize;
    let mut dpi = 150u32;
    let mut given: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--rounds" => rounds = value()?.parse()?,
            "--dpi" => dpi = value()?.parse()?,
            "--examkit" => given = Some(value()?.into()),
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    let examkit = support::examkit_binary(given.as_ref(), "page_process_bench")?;
    if !examkit.exists() {
        return Err(format!(
            "no examkit binary at {}: give --examkit PATH",
            examkit.display()
        )
        .into());
    }
    let isolated = Pages::isolated(examkit.clone(), Budgets::default());
    let in_process = Pages::InProcess;
    let root = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/calibration"
    ));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)?
        .filter_map(|entry| entry.ok().map(|e| e.path().join("scan.pdf")))
        .filter(|path| path.exists())
        .collect();
    files.sort();
    let mut indexer = Indexer::new(&IndexOptions {
        dpi,
        ..IndexOptions::default()
    })?;
    println!(
        "page processes of {} against this process, {rounds} rounds, {dpi} dpi",
        examkit.display()
    );
    println!(
        "{:<28} {:>5} {:>11} {:>11} {:>7} {:>11} {:>13}",
        "file", "pages", "in process", "processes", "ratio", "index page", "of a reading"
    );
    let (mut all_in, mut all_out, mut all_index) = (Vec::new(), Vec::new(), Vec::new());
    for file in &files {
        let bytes = std::fs::read(file)?;
        let pages = examkit_scan::page_count(&bytes, Format::Pdf)?;
        let (mut times_in, mut times_out, mut times_index) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            for page in 1..=pages {
                let max_pixels = examkit_scan::DEFAULT_MAX_PIXELS;
                let started = Instant::now();
                let here =
                    in_process.render_for_index(&bytes, Format::Pdf, page, dpi, max_pixels)?;
                times_in.push(started.elapsed());
                let started = Instant::now();
                let there =
                    isolated.render_for_index(&bytes, Format::Pdf, page, dpi, max_pixels)?;
                times_out.push(started.elapsed());
                if here != there {
                    return Err(format!("page {page} of {} differs", file.display()).into());
                }
                let started = Instant::now();
                let (index, raster, later) =
                    indexer.index_rendered_words_later(page, here, Format::Pdf)?;
                if later {
                    indexer.read_words(&raster, Format::Pdf, index.orientation)?;
                }
                let drawn = times_in.last().copied().unwrap_or_default();
                times_index.push(started.elapsed() + drawn);
            }
        }
        let name = file
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        row(&name, pages, &times_in, &times_out, &times_index);
        all_in.extend(times_in);
        all_out.extend(times_out);
        all_index.extend(times_index);
    }
    let pages = u32::try_from(all_in.len() / rounds.max(1))?;
    row("every page", pages, &all_in, &all_out, &all_index);
    Ok(())
}

fn row(name: &str, pages: u32, here: &[Duration], there: &[Duration], index: &[Duration]) {
    let (here, there, index) = (median(here), median(there), median(index));
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{name:<28} {pages:>5} {:>8.1} ms {:>8.1} ms {:>7.3} {:>8.1} ms {:>12.1}%",
        ms(here),
        ms(there),
        ms(there) / ms(here),
        ms(index),
        (ms(there) - ms(here)) / ms(index) * 100.0
    );
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}
