//! How fast the engine validates, next to what a caller would otherwise pay.
//!
//! For the typical and the maximum fixture (from `examkit-fixtures`), three measurements run side
//! by side, each as a criterion group with byte throughput:
//!
//! - `parse`: `serde_json::from_slice::<serde_json::Value>` alone, the floor for any validator
//!   that reads JSON;
//! - `parse+jsonschema`: the same parse plus the `jsonschema` crate checking the published JSON
//!   Schema (`schemas/service-marking-import-v1.schema.json`, compiled once, outside the timing),
//!   which covers structure only: no references, pages, dependencies or scoring;
//! - `engine`: `examkit_engine::validate(bytes, Some(&assets))`, the full validation and scoring.
//!
//! After criterion has run, a summary prints the three medians and the ratios the product
//! targets: the maximum document within 1.5× of parse alone and faster than parse + JSON Schema,
//! and the typical document under 100 µs. The targets are judged on the medians; the fastest
//! sample of each benchmark is printed beneath them, as the figure least disturbed by other work
//! on a shared machine.
//!
//! ```text
//! cargo bench -p examkit-engine --bench validate              # full run, about two minutes
//! cargo bench -p examkit-engine --bench validate -- --quick   # smoke run, a few seconds
//! ```
//!
//! Set `EXAMKIT_BENCH_ENFORCE=1` to exit with status 1 when a target is missed.
//!
//! Wall-clock figures need a quiet machine. For counts that do not depend on load, set
//! `EXAMKIT_BENCH_PROFILE=<document>/<bench>[:<runs>]` (for example `maximum/engine:5`): the
//! binary then runs that one operation the given number of times (default 5), without criterion,
//! for a profiler such as `valgrind --tool=callgrind`:
//!
//! ```text
//! cargo bench -p examkit-engine --bench validate --no-run   # prints the binary's path
//! EXAMKIT_BENCH_PROFILE=maximum/parse:5 valgrind --tool=callgrind <binary>
//! ```

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use criterion::{Criterion, Throughput};
use examkit_engine::{Asset, Outcome, assets_from_json, validate};
use examkit_fixtures::Fixture;
use serde_json::Value;

/// The benchmarks of each group, in the order they run and print.
const PARSE: &str = "parse";
const SCHEMA: &str = "parse+jsonschema";
const ENGINE: &str = "engine";
const BENCHES: [&str; 3] = [PARSE, SCHEMA, ENGINE];

/// Targets the product must meet.
const MAX_ENGINE_OVER_PARSE: f64 = 1.5;
const TYPICAL_ENGINE_LIMIT_NS: f64 = 100_000.0;

fn schema_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/service-marking-import-v1.schema.json")
}

/// Compiles the published submission schema, or says plainly why it cannot.
fn load_schema() -> Result<jsonschema::Validator, String> {
    let path = schema_path();
    let text = std::fs::read(&path).map_err(|e| {
        format!(
            "cannot read the submission schema at {}: {e}\n\
             the parse+jsonschema comparison needs schemas/service-marking-import-v1.schema.json",
            path.display()
        )
    })?;
    let schema: Value = serde_json::from_slice(&text)
        .map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
    jsonschema::validator_for(&schema)
        .map_err(|e| format!("{} is not a usable JSON Schema: {e}", path.display()))
}

/// Where criterion keeps its results: the same rule criterion applies (`CRITERION_HOME`, then
/// `$CARGO_TARGET_DIR/criterion`), falling back to the target directory this binary was built
/// in. The directory is also handed to criterion so that both always agree.
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    // <target>/<profile>/deps/validate-<hash>
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            exe.ancestors()
                .nth(3)
                .map(|target| target.join("criterion"))
        })
        .unwrap_or_else(|| PathBuf::from("target/criterion"))
}

/// One document under test, checked before anything is timed.
struct Case {
    fixture: Fixture,
    assets: Vec<Asset>,
    /// Problems that make this document's figures meaningless, found before timing.
    warnings: Vec<String>,
}

impl Case {
    /// Reads the fixture's assets and, when `check` is set, checks the document with the schema
    /// and the engine (a profiler run skips the checks so that they do not count).
    fn new(fixture: Fixture, schema: &jsonschema::Validator, check: bool) -> Result<Self, String> {
        let assets = assets_from_json(fixture.assets_json.as_bytes())
            .map_err(|e| format!("the {} fixture's assets are rejected: {e}", fixture.name))?;
        let mut warnings = Vec::new();
        if !check {
            return Ok(Case {
                fixture,
                assets,
                warnings,
            });
        }
        let bytes = fixture.document.as_bytes();
        match serde_json::from_slice::<Value>(bytes) {
            Ok(value) => {
                let errors: Vec<String> = schema
                    .iter_errors(&value)
                    .take(3)
                    .map(|e| format!("{} at {}", e, e.instance_path()))
                    .collect();
                if !errors.is_empty() {
                    warnings.push(format!(
                        "the JSON Schema rejects the {} fixture ({}); its parse+jsonschema time \
                         stops at the first error",
                        fixture.name,
                        errors.join("; ")
                    ));
                }
            }
            Err(e) => return Err(format!("the {} fixture is not JSON: {e}", fixture.name)),
        }
        match validate(bytes, Some(&assets)) {
            Outcome::Valid(report) => {
                let criteria: usize = report.questions.iter().map(|q| q.criteria.len()).sum();
                if report.score.max as usize != criteria || criteria == 0 {
                    warnings.push(format!(
                        "the engine's report of the {} fixture scores {} of {criteria} criteria; \
                         it does not look complete yet",
                        fixture.name, report.score.max
                    ));
                }
            }
            Outcome::Invalid(rejection) => {
                let first: Vec<String> = rejection
                    .errors
                    .iter()
                    .take(3)
                    .map(|e| e.to_string())
                    .collect();
                warnings.push(format!(
                    "the engine rejects the {} fixture with {} errors ({}); its engine time is \
                     not a validation of a valid document",
                    fixture.name,
                    rejection.errors.len(),
                    first.join("; ")
                ));
            }
        }
        Ok(Case {
            fixture,
            assets,
            warnings,
        })
    }
}

fn bench_case(c: &mut Criterion, case: &Case, schema: &jsonschema::Validator) {
    let bytes = case.fixture.document.as_bytes();
    let mut group = c.benchmark_group(case.fixture.name);
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    if bytes.len() > 1024 * 1024 {
        // Milliseconds per iteration: fewer, longer samples keep a full run near two minutes.
        group
            .sample_size(30)
            .measurement_time(Duration::from_secs(10));
    }
    group.bench_function(PARSE, |b| {
        b.iter(|| serde_json::from_slice::<Value>(black_box(bytes)).is_ok())
    });
    group.bench_function(SCHEMA, |b| {
        b.iter(|| match serde_json::from_slice::<Value>(black_box(bytes)) {
            Ok(value) => schema.is_valid(&value),
            Err(_) => false,
        })
    });
    group.bench_function(ENGINE, |b| {
        b.iter(|| validate(black_box(bytes), Some(black_box(&case.assets))).is_valid())
    });
    group.finish();
}

/// The median of one benchmark in nanoseconds, if criterion wrote it during this run.
fn fresh_median_ns(dir: &Path, group: &str, bench: &str, since: SystemTime) -> Option<f64> {
    let path = dir
        .join(group)
        .join(bench)
        .join("new")
        .join("estimates.json");
    let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok()?;
    if modified < since {
        return None;
    }
    let estimates: Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    estimates["median"]["point_estimate"].as_f64()
}

/// The fastest sample of one benchmark in nanoseconds per iteration, if written during this run.
/// On a shared machine the fastest sample is the least disturbed by other work.
fn fresh_fastest_ns(dir: &Path, group: &str, bench: &str, since: SystemTime) -> Option<f64> {
    let path = dir.join(group).join(bench).join("new").join("sample.json");
    let modified = std::fs::metadata(&path).and_then(|m| m.modified()).ok()?;
    if modified < since {
        return None;
    }
    let sample: Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    let iters = sample["iters"].as_array()?;
    let times = sample["times"].as_array()?;
    iters
        .iter()
        .zip(times)
        .filter_map(|(n, t)| Some(t.as_f64()? / n.as_f64()?))
        .filter(|per_iter| per_iter.is_finite())
        .min_by(f64::total_cmp)
}

fn format_time(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn format_throughput(bytes: usize, ns: f64) -> String {
    format!("{:.0} MiB/s", bytes as f64 / (ns / 1e9) / (1024.0 * 1024.0))
}

/// Prints the medians side by side with the ratios; returns the targets missed.
fn summarise(cases: &[Case], dir: &Path, since: SystemTime) -> Vec<String> {
    let mut missed = Vec::new();
    let mut rows = Vec::new();
    for case in cases {
        let name = case.fixture.name;
        let medians: Vec<Option<f64>> = BENCHES
            .iter()
            .map(|bench| fresh_median_ns(dir, name, bench, since))
            .collect();
        if medians.iter().all(Option::is_none) {
            continue;
        }
        let fastest: Vec<Option<f64>> = BENCHES
            .iter()
            .map(|bench| fresh_fastest_ns(dir, name, bench, since))
            .collect();
        rows.push((case, medians, fastest));
    }
    println!();
    println!(
        "validate: criterion medians, and the fastest sample below each ({})",
        dir.display()
    );
    if rows.is_empty() {
        println!("  no benchmark was measured in this run (test mode, or filtered out)");
        return missed;
    }
    println!(
        "  {:<8} {:>10} {:>22} {:>22} {:>22} {:>13} {:>22}",
        "document", "bytes", PARSE, SCHEMA, ENGINE, "engine/parse", "engine/(parse+schema)"
    );
    for (case, medians, fastest) in &rows {
        let name = case.fixture.name;
        let size = case.fixture.document.len();
        let cell = |m: &Option<f64>| match m {
            Some(ns) => format!("{} ({})", format_time(*ns), format_throughput(size, *ns)),
            None => "-".to_owned(),
        };
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
            _ => "-".to_owned(),
        };
        let (parse, schema, engine) = (medians[0], medians[1], medians[2]);
        println!(
            "  {:<8} {:>10} {:>22} {:>22} {:>22} {:>13} {:>22}",
            name,
            size,
            cell(&parse),
            cell(&schema),
            cell(&engine),
            ratio(engine, parse),
            ratio(engine, schema)
        );
        println!(
            "  {:<8} {:>10} {:>22} {:>22} {:>22} {:>13} {:>22}",
            "",
            "fastest",
            cell(&fastest[0]),
            cell(&fastest[1]),
            cell(&fastest[2]),
            ratio(fastest[2], fastest[0]),
            ratio(fastest[2], fastest[1])
        );
        match (name, parse, schema, engine) {
            ("maximum", Some(parse), Some(schema), Some(engine)) => {
                let over_parse = engine / parse;
                if over_parse > MAX_ENGINE_OVER_PARSE {
                    missed.push(format!(
                        "maximum: engine is {over_parse:.2}× parse alone (target ≤ {MAX_ENGINE_OVER_PARSE}×)"
                    ));
                }
                if engine >= schema {
                    missed.push(format!(
                        "maximum: engine {} is not faster than parse+jsonschema {}",
                        format_time(engine),
                        format_time(schema)
                    ));
                }
            }
            ("typical", _, _, Some(engine)) if engine >= TYPICAL_ENGINE_LIMIT_NS => {
                missed.push(format!(
                    "typical: engine {} (target < 100 µs)",
                    format_time(engine)
                ));
            }
            _ => {}
        }
    }
    println!(
        "  targets: maximum engine ≤ {MAX_ENGINE_OVER_PARSE}× parse and < parse+jsonschema; \
         typical engine < 100 µs"
    );
    if missed.is_empty() {
        println!("  all targets measured in this run are met");
    }
    for miss in &missed {
        println!("  MISSED {miss}");
    }
    for case in cases {
        for warning in &case.warnings {
            println!("  WARNING {warning}");
        }
    }
    missed
}

/// Runs one operation `runs` times for an external profiler, as `EXAMKIT_BENCH_PROFILE` asks.
fn profile(spec: &str, cases: &[Case], schema: &jsonschema::Validator) -> Result<(), String> {
    let (target, runs) = match spec.split_once(':') {
        Some((target, runs)) => (
            target,
            runs.parse::<u32>()
                .map_err(|_| format!("{runs:?} is not a run count"))?,
        ),
        None => (spec, 5),
    };
    let (name, bench) = target
        .split_once('/')
        .ok_or_else(|| format!("{target:?} is not <document>/<bench>"))?;
    let case = cases
        .iter()
        .find(|c| c.fixture.name == name)
        .ok_or_else(|| format!("no document named {name:?} (typical, maximum)"))?;
    let bytes = case.fixture.document.as_bytes();
    let mut ok = 0u32;
    for _ in 0..runs {
        let passed = match bench {
            PARSE => serde_json::from_slice::<Value>(black_box(bytes)).is_ok(),
            SCHEMA => serde_json::from_slice::<Value>(black_box(bytes))
                .is_ok_and(|value| schema.is_valid(&value)),
            ENGINE => validate(black_box(bytes), Some(black_box(&case.assets))).is_valid(),
            _ => {
                return Err(format!(
                    "no benchmark named {bench:?} ({})",
                    BENCHES.join(", ")
                ));
            }
        };
        ok += u32::from(passed);
    }
    println!("{name}/{bench}: {runs} runs, {ok} accepted the document");
    Ok(())
}

fn main() {
    let schema = match load_schema() {
        Ok(schema) => schema,
        Err(message) => {
            eprintln!("error: {message}");
            std::process::exit(2);
        }
    };
    let profile_spec = std::env::var_os("EXAMKIT_BENCH_PROFILE");
    let mut cases = Vec::new();
    for fixture in examkit_fixtures::all() {
        match Case::new(fixture, &schema, profile_spec.is_none()) {
            Ok(case) => cases.push(case),
            Err(message) => {
                eprintln!("error: {message}");
                std::process::exit(2);
            }
        }
    }
    for warning in cases.iter().flat_map(|c| &c.warnings) {
        eprintln!("warning: {warning}");
    }

    if let Some(spec) = profile_spec {
        if let Err(message) = profile(&spec.to_string_lossy(), &cases, &schema) {
            eprintln!("error: EXAMKIT_BENCH_PROFILE: {message}");
            std::process::exit(2);
        }
        return;
    }

    let dir = criterion_dir();
    // File times have coarse resolution on some file systems; a second's slack keeps this run's
    // results without admitting an earlier run's.
    let since = SystemTime::now() - Duration::from_secs(1);
    let mut criterion = Criterion::default()
        .configure_from_args()
        .output_directory(&dir);
    for case in &cases {
        bench_case(&mut criterion, case, &schema);
    }
    criterion.final_summary();

    let missed = summarise(&cases, &dir, since);
    let enforce = std::env::var_os("EXAMKIT_BENCH_ENFORCE").is_some_and(|v| v == "1");
    if enforce && !missed.is_empty() {
        std::process::exit(1);
    }
}
