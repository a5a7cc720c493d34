//! The native baseline for `bench/bench.mjs`: times the engine on the same fixture files, with the
//! same method (warm-up, then timed batches of calls; median and minimum per call), and prints one
//! JSON line per measurement so the Node benchmark can compare.
//!
//! ```text
//! cargo run --release -p examkit-wasm --example native_bench -- <fixtures dir> [typical|maximum ...]
//! ```

use std::hint::black_box;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// Warm-up calls, timed samples and calls per sample for a fixture: many single calls of the small
/// document (so that the minimum finds calls no other process interrupted), fewer of the 4 MiB one.
fn rounds(name: &str) -> (usize, usize, usize) {
    if name == "maximum" {
        (3, 21, 1)
    } else {
        (200, 3001, 1)
    }
}

/// The median and the minimum time per call of `f`, in nanoseconds, over `samples` batches of
/// `batch` calls. The minimum is the least disturbed by other work on a busy machine.
fn time_ns(warm_up: usize, samples: usize, batch: usize, mut f: impl FnMut()) -> (f64, f64) {
    for _ in 0..warm_up {
        f();
    }
    let mut times: Vec<f64> = (0..samples)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..batch {
                f();
            }
            start.elapsed().as_nanos() as f64 / batch as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], times[0])
}

fn run(dir: &Path, names: &[String]) -> Result<(), String> {
    for name in names {
        let read = |file: String| {
            let path = dir.join(&file);
            std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
        };
        let document = read(format!("{name}.json"))?;
        let assets = examkit_engine::assets_from_json(&read(format!("{name}.assets.json"))?)
            .map_err(|e| format!("{name}.assets.json: {e}"))?;
        let (warm_up, samples, batch) = rounds(name);
        let engine = time_ns(warm_up, samples, batch, || {
            black_box(examkit_engine::validate(
                black_box(&document),
                Some(&assets),
            ));
        });
        let with_json = time_ns(warm_up, samples, batch, || {
            let outcome = examkit_engine::validate(black_box(&document), Some(&assets));
            black_box(outcome.to_json());
        });
        for (what, (median, min)) in [("validate", engine), ("validate+to_json", with_json)] {
            println!(
                "{{\"fixture\":\"{name}\",\"what\":\"{what}\",\"bytes\":{},\"medianNs\":{median},\"minNs\":{min}}}",
                document.len()
            );
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((dir, names)) = args.split_first() else {
        eprintln!("usage: native_bench <fixtures dir> [typical|maximum ...]");
        return ExitCode::from(2);
    };
    let names = if names.is_empty() {
        vec![String::from("typical"), String::from("maximum")]
    } else {
        names.to_vec()
    };
    match run(Path::new(dir), &names) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("native_bench: {message}");
            ExitCode::FAILURE
        }
    }
}
