//! The native baseline for `bench/bench.mjs`: times the engine on the same fixture files, with the
//! same method (warm-up, then the median of single-call timings), and prints one JSON line per
//! measurement so the Node benchmark can compare.
//!
//! ```text
//! cargo run --release -p examkit-wasm --example native_bench -- <fixtures dir> [typical|maximum ...]
//! ```

use std::hint::black_box;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

/// Warm-up calls and timed calls for a fixture: many for the small document, fewer for the 4 MiB one.
fn rounds(name: &str) -> (usize, usize) {
    if name == "maximum" {
        (5, 31)
    } else {
        (200, 2001)
    }
}

/// The median of single-call timings of `f`, in nanoseconds.
fn median_ns(warm_up: usize, samples: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..warm_up {
        f();
    }
    let mut times: Vec<f64> = (0..samples)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_nanos() as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
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
        let (warm_up, samples) = rounds(name);
        let engine = median_ns(warm_up, samples, || {
            black_box(examkit_engine::validate(
                black_box(&document),
                Some(&assets),
            ));
        });
        let with_json = median_ns(warm_up, samples, || {
            let outcome = examkit_engine::validate(black_box(&document), Some(&assets));
            black_box(outcome.to_json());
        });
        for (what, ns) in [("validate", engine), ("validate+to_json", with_json)] {
            println!(
                "{{\"fixture\":\"{name}\",\"what\":\"{what}\",\"bytes\":{},\"medianNs\":{ns}}}",
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
