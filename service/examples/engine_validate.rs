//! Times `examkit_engine::validate` in process on one document, for comparison with the HTTP
//! `validate` route (`service/bench/http.sh`).
//!
//! ```text
//! cargo run --release -p examkit --example engine_validate -- DOCUMENT ASSETS [SECONDS]
//! ```
//!
//! Prints one line: `engine_validate calls=N p50_us=… p99_us=… valid=true|false`.

use std::process::ExitCode;
use std::time::{Duration, Instant};

fn run() -> Result<String, String> {
    let mut args = std::env::args().skip(1);
    let (Some(document), Some(assets)) = (args.next(), args.next()) else {
        return Err("usage: engine_validate DOCUMENT ASSETS [SECONDS]".to_owned());
    };
    let seconds: f64 = match args.next() {
        Some(s) => s
            .parse()
            .map_err(|_| format!("not a number of seconds: {s}"))?,
        None => 5.0,
    };
    let document = std::fs::read(&document).map_err(|e| format!("{document}: {e}"))?;
    let assets_bytes = std::fs::read(&assets).map_err(|e| format!("{assets}: {e}"))?;
    let assets =
        examkit_engine::assets_from_json(&assets_bytes).map_err(|e| format!("{assets}: {e}"))?;
    // Warm up caches and the allocator.
    let warm_until = Instant::now() + Duration::from_secs_f64(seconds / 5.0);
    let mut valid = false;
    while Instant::now() < warm_until {
        valid = examkit_engine::validate(&document, Some(&assets)).is_valid();
    }
    let mut times = Vec::new();
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    while Instant::now() < until {
        let start = Instant::now();
        let outcome = examkit_engine::validate(&document, Some(&assets));
        // The HTTP route serialises the outcome too; so does this.
        let json = outcome.to_json();
        times.push(start.elapsed());
        std::hint::black_box(json);
    }
    times.sort();
    let at = |q: f64| {
        let i = ((times.len() as f64 - 1.0) * q).round() as usize;
        times.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e6)
    };
    Ok(format!(
        "engine_validate calls={} p50_us={:.1} p99_us={:.1} valid={valid}",
        times.len(),
        at(0.5),
        at(0.99)
    ))
}

fn main() -> ExitCode {
    match run() {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}
