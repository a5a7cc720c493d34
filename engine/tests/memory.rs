//! Memory stays bounded on hostile input: for every document of `tests/hostile` (each just under
//! the 4 MiB body limit, built to be as costly as possible for one part of the engine) and for the
//! example submissions, `validate` allocates at most 64 MiB at its peak.
//!
//! Bytes are counted by a counting global allocator, not measured in time, so the check is
//! deterministic. The shapes run one after another in a single test so that each peak belongs to
//! one call. `examples/hostile.rs` prints the same figures with timings.

mod hostile;

use hostile::{Counting, PEAK_BOUND, peak_during, shapes, shows_expected};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn validate_stays_within_64_mib_on_hostile_documents() {
    let mut problems = Vec::new();
    for (name, generate) in shapes() {
        let shape = generate();
        assert!(
            shape.document.len() <= hostile::LIMIT && !shape.document.is_empty(),
            "{name}: the document is {} bytes",
            shape.document.len()
        );
        let (outcome, peak) =
            peak_during(|| examkit_engine::validate(&shape.document, shape.assets.as_deref()));
        // Shown with `--nocapture`.
        eprintln!(
            "{name}: {} bytes of document, peak {peak} bytes",
            shape.document.len()
        );
        if peak > PEAK_BOUND {
            problems.push(format!(
                "{name}: {} bytes of document, peak {peak} bytes (bound {PEAK_BOUND})",
                shape.document.len()
            ));
        }
        if !shows_expected(&shape, &outcome) {
            let first: Vec<&str> = outcome
                .errors()
                .iter()
                .take(3)
                .map(|e| e.code().as_str())
                .collect();
            problems.push(format!(
                "{name}: the outcome does not show {:?} (first errors: {first:?})",
                shape.expect
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
