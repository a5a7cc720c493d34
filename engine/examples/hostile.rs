//! Peak memory and time of `validate` on hostile documents just under the 4 MiB limit (the shapes of
//! `tests/hostile`), one row per shape:
//!
//! ```text
//! cargo run --release -p examkit-engine --example hostile                  # every shape, 5 runs
//! cargo run --release -p examkit-engine --example hostile -- --runs 3 long-key empty-objects
//! ```
//!
//! Peak bytes are counted by a counting allocator during the first run; the time is the median of
//! the runs (the counting adds a little to it). Wall-clock times on a shared machine are noisy:
//! read them as orders of magnitude, and the peaks as exact.

#[path = "../tests/hostile/mod.rs"]
mod hostile;

use std::time::{Duration, Instant};

use hostile::{Counting, PEAK_BOUND, peak_during, shapes, shows_expected};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn mib(bytes: usize) -> String {
    if bytes < 1024 * 1024 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    }
}

fn main() {
    let mut runs = 5usize;
    let mut wanted = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--runs" {
            runs = args
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(runs)
                .max(1);
        } else {
            wanted.push(arg);
        }
    }
    println!("| shape | bytes | peak | median time | outcome |");
    println!("| --- | --- | --- | --- | --- |");
    let mut over = 0;
    for (name, generate) in shapes() {
        if !wanted.is_empty() && !wanted.iter().any(|w| w == name) {
            continue;
        }
        let shape = generate();
        let assets = shape.assets.as_deref();
        let (outcome, peak) = peak_during(|| examkit_engine::validate(&shape.document, assets));
        let summary = if outcome.is_valid() {
            String::from("valid")
        } else {
            let errors = outcome.errors();
            let truncated = matches!(&outcome, examkit_engine::Outcome::Invalid(r) if r.truncated);
            format!(
                "{} errors{}, first `{}`",
                errors.len(),
                if truncated { " (truncated)" } else { "" },
                errors.first().map_or("", |e| e.code().as_str())
            )
        };
        let expected = if shows_expected(&shape, &outcome) {
            ""
        } else {
            " — UNEXPECTED"
        };
        drop(outcome);
        let mut times: Vec<Duration> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                let outcome = examkit_engine::validate(&shape.document, assets);
                let elapsed = start.elapsed();
                drop(outcome);
                elapsed
            })
            .collect();
        times.sort();
        let median = times[times.len() / 2];
        over += usize::from(peak > PEAK_BOUND);
        println!(
            "| {name} | {} | {} | {:.2} ms | {summary}{expected} |",
            shape.document.len(),
            mib(peak),
            median.as_secs_f64() * 1e3
        );
    }
    if over > 0 {
        println!("\n{over} shape(s) over the {} bound", mib(PEAK_BOUND));
    }
}
