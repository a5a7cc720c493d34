//! Hostile documents of just under 4 MiB, built by small generators, and an allocator that counts
//! the bytes a call holds at its peak. Shared by `tests/memory.rs` (which asserts the bound) and
//! `examples/hostile.rs` (which prints peak bytes and times).
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use examkit_engine::{Asset, Outcome};

/// The engine's body limit.
pub const LIMIT: usize = examkit_engine::limits::MAX_DOCUMENT_BYTES;

/// The bound every call must stay within: 64 MiB allocated at its peak.
pub const PEAK_BOUND: usize = 64 * 1024 * 1024;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting the bytes currently allocated and their peak.
///
/// A `realloc` is counted as holding the old and the new block at once (as a copying reallocation
/// does), so the peak is never under-reported.
pub struct Counting;

fn grew(bytes: usize) {
    let now = CURRENT.fetch_add(bytes, Ordering::SeqCst) + bytes;
    PEAK.fetch_max(now, Ordering::SeqCst);
}

fn shrank(bytes: usize) {
    CURRENT.fetch_sub(bytes, Ordering::SeqCst);
}

#[allow(unsafe_code)]
// SAFETY: every method forwards to `System` with the caller's own arguments and only adds
// bookkeeping on atomics, so `System`'s guarantees carry over unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is; the caller upholds `alloc`'s contract.
        let block = unsafe { System.alloc(layout) };
        if !block.is_null() {
            grew(layout.size());
        }
        block
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is; the caller upholds `alloc_zeroed`'s contract.
        let block = unsafe { System.alloc_zeroed(layout) };
        if !block.is_null() {
            grew(layout.size());
        }
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is; the caller upholds `dealloc`'s contract.
        unsafe { System.dealloc(block, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        grew(new_size);
        // SAFETY: forwarded as is; the caller upholds `realloc`'s contract.
        let moved = unsafe { System.realloc(block, layout, new_size) };
        if moved.is_null() {
            shrank(new_size);
        } else {
            shrank(layout.size());
        }
        moved
    }
}

/// Runs `f` and returns its result with the most bytes allocated at any moment during the call,
/// beyond what was allocated when it started. Calls must not overlap (run them on one thread).
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = CURRENT.load(Ordering::SeqCst);
    PEAK.store(start, Ordering::SeqCst);
    let result = f();
    let peak = PEAK.load(Ordering::SeqCst);
    (result, peak.saturating_sub(start))
}

/// A hostile document and what its outcome must show.
pub struct Shape {
    /// A short name.
    pub name: &'static str,
    /// The document.
    pub document: Vec<u8>,
    /// The import's assets, if the shape needs them.
    pub assets: Option<Vec<Asset>>,
    /// An error code the outcome must hold, or `"valid"`.
    pub expect: &'static str,
}

/// Builds one shape's document.
pub type Generator = fn() -> Shape;

/// Every shape's name with its generator; documents are built one at a time.
pub fn shapes() -> Vec<(&'static str, Generator)> {
    vec![
        ("empty-objects", empty_objects),
        ("empty-arrays", empty_arrays),
        ("one-char-strings", one_char_strings),
        ("tiny-numbers", tiny_numbers),
        ("escaped-strings", escaped_strings),
        ("unknown-fields", unknown_fields),
        ("escaped-unknown-fields", escaped_unknown_fields),
        ("duplicate-key-last", duplicate_key_last),
        ("deep-arrays", deep_arrays),
        ("deep-objects", deep_objects),
        ("deep-arrays-at-limit", deep_arrays_at_limit),
        ("deep-objects-at-limit", deep_objects_at_limit),
        ("deep-boxes-at-limit", deep_boxes_at_limit),
        ("empty-criteria", empty_criteria),
        ("empty-decisions", empty_decisions),
        ("wrong-types", wrong_types),
        ("empty-strings", empty_strings),
        ("bad-patterns", bad_patterns),
        ("bad-enums", bad_enums),
        ("bad-formats", bad_formats),
        ("repeated-depends", repeated_depends),
        ("page-zero", page_zero),
        ("page-too-high", page_too_high),
        ("pages-repeated", pages_repeated),
        ("long-key", long_key),
        ("long-key-many-pages", long_key_many_pages),
        ("missing-decisions", missing_decisions),
        ("unknown-parts", unknown_parts),
        ("long-part-ids", long_part_ids),
        ("unknown-criteria", unknown_criteria),
        ("rejected-ids", rejected_ids),
        ("duplicate-decisions", duplicate_decisions),
        ("distinct-depends", distinct_depends),
        ("long-cycle", long_cycle),
        ("many-cycles", many_cycles),
        ("self-dependencies", self_dependencies),
        ("cross-question", cross_question),
        ("unselected-pages", unselected_pages),
        ("unknown-assets", unknown_assets),
        ("pages-out-of-range", pages_out_of_range),
        ("duplicate-labels", duplicate_labels),
        ("duplicate-criterion-ids", duplicate_criterion_ids),
        ("duplicate-part-ids", duplicate_part_ids),
        ("bad-boxes", bad_boxes),
        ("condition-index-out-of-range", condition_index_out_of_range),
        ("condition-checks-missing", condition_checks_missing),
        ("coverage-labels", coverage_labels),
        ("example-a-level", example_a_level),
        ("example-a-level-invalid", example_a_level_invalid),
        ("example-further-maths", example_further_maths),
    ]
}

/// Whether the outcome shows what the shape is built to produce.
pub fn shows_expected(shape: &Shape, outcome: &Outcome) -> bool {
    match shape.expect {
        "valid" => outcome.is_valid(),
        code => outcome.errors().iter().any(|e| e.code().as_str() == code),
    }
}

const WORK: &str = "5b0f6a2e-8c1d-4e7a-9b3f-2d4c6e8f0a11";
const SCHEME: &str = "c7e2d9b4-1a3f-4c5e-8d7b-9f0e1a2b3c44";

/// The top-level members before `questions`, all valid.
const HEAD: &str = r#"{"schemaVersion":"service-marking-import-v1","coordinateSystem":"normalized-top-left","pageBasis":"displayed-page","source":{"kind":"human","name":"n","markedAt":"2025-06-14T16:42:05Z"},"coverage":{"kind":"partial","questionLabels":["1"],"totalMarks":1},"questions":["#;

/// Appends `item(0)`, `item(1)`, … separated by commas while the text stays within `end` bytes
/// with `reserve` bytes left over; returns how many were written.
fn fill(
    out: &mut String,
    end: usize,
    reserve: usize,
    mut item: impl FnMut(usize) -> String,
) -> usize {
    let mut i = 0;
    loop {
        let next = item(i);
        let comma = usize::from(i > 0);
        if out.len() + comma + next.len() + reserve > end {
            return i;
        }
        if i > 0 {
            out.push(',');
        }
        out.push_str(&next);
        i += 1;
    }
}

/// `head`, then items up to the limit, then `tail`.
fn repeated(head: &str, tail: &str, item: impl FnMut(usize) -> String) -> Vec<u8> {
    let mut out = String::with_capacity(LIMIT);
    out.push_str(head);
    fill(&mut out, LIMIT, tail.len(), item);
    out.push_str(tail);
    out.into_bytes()
}

/// A short distinct name for `i`: base 36.
fn name(i: usize) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut n = i;
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[n % 36]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

fn assets() -> Option<Vec<Asset>> {
    let json = format!(
        r#"[{{"id":"{WORK}","kind":"work","pageCount":3}},{{"id":"{SCHEME}","kind":"scheme","pageCount":3}}]"#
    );
    examkit_engine::assets_from_json(json.as_bytes()).ok()
}

fn shape(name: &'static str, document: Vec<u8>, expect: &'static str) -> Shape {
    Shape {
        name,
        document,
        assets: None,
        expect,
    }
}

/// A valid criterion `id` in part `a`.
fn criterion(id: &str) -> String {
    format!(
        r#"{{"id":"{id}","partId":"a","code":"M1","requirement":"r","conditions":[],"dependsOn":[],"maxMarks":1,"sourcePageIds":["{SCHEME}:p1"]}}"#
    )
}

/// A criterion `id` in part `a` with the given `dependsOn` list (already JSON).
fn criterion_depending(id: &str, depends: &str) -> String {
    format!(
        r#"{{"id":"{id}","partId":"a","code":"M1","requirement":"r","conditions":[],"dependsOn":{depends},"maxMarks":1,"sourcePageIds":["{SCHEME}:p1"]}}"#
    )
}

/// A valid decision on criterion `id`.
fn decision(id: &str) -> String {
    format!(
        r#"{{"criterionId":"{id}","outcome":"awarded","reason":"r","evidence":[{{"pageId":"{WORK}:p1","quote":"q","box":{{"x":0,"y":0,"width":1,"height":1}}}}],"conditionChecks":[]}}"#
    )
}

/// The start of question `label` up to (and including) the opening bracket of `parts`.
fn question_head(label: &str) -> String {
    format!(
        r#"{{"label":"{label}","pageSelections":{{"{WORK}":[1],"{SCHEME}":[1]}},"rubric":{{"parts":["#
    )
}

/// One question whose criteria are `item(0)`, `item(1)`, … up to the limit, with decisions
/// `decisions` (already JSON, without brackets) and one part `a`.
fn question_of_criteria(decisions: &str, item: impl FnMut(usize) -> String) -> Vec<u8> {
    let head = format!(
        r#"{HEAD}{}{{"id":"a","maxMarks":1}}],"criteria":["#,
        question_head("1")
    );
    let tail = format!(r#"]}},"decisions":[{decisions}]}}]}}"#);
    repeated(&head, &tail, item)
}

/// One question with criteria `criteria` (already JSON) and decisions `item(0)`, … to the limit.
fn question_of_decisions(criteria: &str, item: impl FnMut(usize) -> String) -> Vec<u8> {
    let head = format!(
        r#"{HEAD}{}{{"id":"a","maxMarks":1}}],"criteria":[{criteria}]}},"decisions":["#,
        question_head("1")
    );
    repeated(&head, "]}]}", item)
}

/// One question with one criterion `c` and a decision on it, whose selection of asset `key` lists
/// pages `item(0)`, `item(1)`, … to the limit.
fn question_with_pages(key: &str, item: impl FnMut(usize) -> String) -> Vec<u8> {
    let head = format!(r#"{HEAD}{{"label":"1","pageSelections":{{"{key}":["#);
    let tail = format!(
        r#"],"{SCHEME}":[1]}},"rubric":{{"parts":[{{"id":"a","maxMarks":1}}],"criteria":[{}]}},"decisions":[{}]}}]}}"#,
        criterion("c"),
        decision("c")
    );
    repeated(&head, &tail, item)
}

fn empty_objects() -> Shape {
    shape(
        "empty-objects",
        repeated(r#"{"questions":["#, "]}", |_| "{}".into()),
        "required",
    )
}

fn empty_arrays() -> Shape {
    shape(
        "empty-arrays",
        repeated(r#"{"questions":["#, "]}", |_| "[]".into()),
        "type",
    )
}

fn one_char_strings() -> Shape {
    shape(
        "one-char-strings",
        repeated(r#"{"questions":["#, "]}", |_| r#""a""#.into()),
        "type",
    )
}

fn tiny_numbers() -> Shape {
    shape(
        "tiny-numbers",
        repeated(r#"{"questions":["#, "]}", |_| "0".into()),
        "type",
    )
}

fn escaped_strings() -> Shape {
    shape(
        "escaped-strings",
        repeated(r#"{"questions":["#, "]}", |_| r#""\n""#.into()),
        "type",
    )
}

fn unknown_fields() -> Shape {
    shape(
        "unknown-fields",
        repeated("{", "}", |i| format!(r#""{}":0"#, name(i))),
        "unknown_field",
    )
}

fn escaped_unknown_fields() -> Shape {
    shape(
        "escaped-unknown-fields",
        repeated("{", "}", |i| format!(r#""\t{}":0"#, name(i))),
        "unknown_field",
    )
}

fn duplicate_key_last() -> Shape {
    let mut out = String::from(r#"{"questions":[{"#);
    fill(&mut out, LIMIT, 16, |i| format!(r#""{}":0"#, name(i)));
    out.push_str(r#","0":0}]}"#);
    shape("duplicate-key-last", out.into_bytes(), "invalid_json")
}

fn deep_arrays() -> Shape {
    // The root object and `questions` are two levels; eight more reach the schema's depth of ten.
    let item = format!("{}{}", "[".repeat(8), "]".repeat(8));
    shape(
        "deep-arrays",
        repeated(r#"{"questions":["#, "]}", |_| item.clone()),
        "type",
    )
}

fn deep_objects() -> Shape {
    let item = format!("{}{{}}{}", r#"{"a":"#.repeat(7), "}".repeat(7));
    shape(
        "deep-objects",
        repeated(r#"{"questions":["#, "]}", |_| item.clone()),
        "unknown_field",
    )
}

/// Levels of nesting a document may have (`nesting_too_deep` past them).
const MAX_DEPTH: usize = examkit_engine::limits::MAX_DEPTH;

fn deep_arrays_at_limit() -> Shape {
    // The root object and `questions` are two levels; each item reaches the limit exactly.
    let levels = MAX_DEPTH - 2;
    let item = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
    shape(
        "deep-arrays-at-limit",
        repeated(r#"{"questions":["#, "]}", |_| item.clone()),
        "type",
    )
}

fn deep_objects_at_limit() -> Shape {
    let levels = MAX_DEPTH - 3;
    let item = format!("{}{{}}{}", r#"{"a":"#.repeat(levels), "}".repeat(levels));
    shape(
        "deep-objects-at-limit",
        repeated(r#"{"questions":["#, "]}", |_| item.clone()),
        "unknown_field",
    )
}

/// Decisions whose box width is an array nested to the limit: every one is a `type` error at its
/// width, checked beside the rest of the document.
fn deep_boxes_at_limit() -> Shape {
    // Root › questions › question › decisions › decision › evidence › item › box: eight levels.
    let levels = MAX_DEPTH - 8;
    let width = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
    let decision = decision("c").replace(r#""width":1"#, &format!(r#""width":{width}"#));
    shape(
        "deep-boxes-at-limit",
        question_of_decisions(&criterion("c"), |_| decision.clone()),
        "type",
    )
}

fn empty_criteria() -> Shape {
    shape(
        "empty-criteria",
        question_of_criteria("", |_| "{}".into()),
        "required",
    )
}

fn empty_decisions() -> Shape {
    shape(
        "empty-decisions",
        question_of_decisions(&criterion("c"), |_| "{}".into()),
        "required",
    )
}

fn wrong_types() -> Shape {
    let item = r#"{"id":0,"partId":0,"code":0,"requirement":0,"conditions":0,"conditionMode":0,"dependsOn":0,"maxMarks":"1","sourcePageIds":0}"#;
    shape(
        "wrong-types",
        question_of_criteria("", |_| item.into()),
        "type",
    )
}

fn empty_strings() -> Shape {
    let head = format!(
        r#"{HEAD}{}{{"id":"a","maxMarks":1}}],"criteria":[{{"id":"c","partId":"a","code":"M1","requirement":"r","conditions":[],"maxMarks":1,"sourcePageIds":["{SCHEME}:p1"],"dependsOn":["#,
        question_head("1")
    );
    let tail = format!(r#"]}}]}},"decisions":[{}]}}]}}"#, decision("c"));
    shape(
        "empty-strings",
        repeated(&head, &tail, |_| r#""""#.into()),
        "min_length",
    )
}

fn bad_patterns() -> Shape {
    shape(
        "bad-patterns",
        question_of_criteria("", |i| format!(r#"{{"id":"a b{}","code":"X"}}"#, name(i))),
        "pattern",
    )
}

fn bad_enums() -> Shape {
    shape(
        "bad-enums",
        question_of_decisions(&criterion("c"), |_| r#"{"outcome":"x"}"#.into()),
        "enum",
    )
}

fn bad_formats() -> Shape {
    let head = format!(r#"{HEAD}{{"label":"1","pageSelections":{{"#);
    let tail = format!(
        r#"}},"rubric":{{"parts":[{{"id":"a","maxMarks":1}}],"criteria":[{}]}},"decisions":[{}]}}]}}"#,
        criterion("c"),
        decision("c")
    );
    shape(
        "bad-formats",
        repeated(&head, &tail, |i| format!(r#""{}":[1]"#, name(i))),
        "format",
    )
}

fn repeated_depends() -> Shape {
    let head = format!(
        r#"{HEAD}{}{{"id":"a","maxMarks":1}}],"criteria":[{},{{"id":"c","partId":"a","code":"M1","requirement":"r","conditions":[],"maxMarks":1,"sourcePageIds":["{SCHEME}:p1"],"dependsOn":["#,
        question_head("1"),
        criterion("d")
    );
    let tail = format!(
        r#"]}}]}},"decisions":[{},{}]}}]}}"#,
        decision("c"),
        decision("d")
    );
    shape(
        "repeated-depends",
        repeated(&head, &tail, |_| r#""d""#.into()),
        "unique_items",
    )
}

fn page_zero() -> Shape {
    shape(
        "page-zero",
        question_with_pages(WORK, |_| "0".into()),
        "minimum",
    )
}

fn page_too_high() -> Shape {
    shape(
        "page-too-high",
        question_with_pages(WORK, |_| "10001".into()),
        "maximum",
    )
}

fn pages_repeated() -> Shape {
    shape(
        "pages-repeated",
        question_with_pages(WORK, |i| (i % 10_000 + 1).to_string()),
        "unique_items",
    )
}

/// A `pageSelections` key of about 2 MiB whose list holds a few thousand bad page numbers: every
/// error's path repeats the key.
fn long_key() -> Shape {
    let key = "k".repeat(LIMIT / 2);
    let mut out = format!(r#"{HEAD}{{"label":"1","pageSelections":{{"{key}":["#);
    let tail = format!(
        r#"],"{SCHEME}":[1]}},"rubric":{{"parts":[{{"id":"a","maxMarks":1}}],"criteria":[{}]}},"decisions":[{}]}}]}}"#,
        criterion("c"),
        decision("c")
    );
    let end = out.len() + 10_000;
    fill(&mut out, end, tail.len(), |_| "0".into());
    out.push_str(&tail);
    shape("long-key", out.into_bytes(), "minimum")
}

/// A `pageSelections` key of 64 KiB with as many bad page numbers as fit.
fn long_key_many_pages() -> Shape {
    let key = "/".repeat(64 * 1024);
    shape(
        "long-key-many-pages",
        question_with_pages(&key, |_| "0".into()),
        "minimum",
    )
}

fn missing_decisions() -> Shape {
    shape(
        "missing-decisions",
        question_of_criteria("", |i| criterion(&format!("c{}", name(i)))),
        "missing_decision",
    )
}

/// Half the document parts, half criteria naming a part that does not exist: every message lists
/// the question's parts.
fn unknown_parts() -> Shape {
    let mut out = format!("{HEAD}{}", question_head("1"));
    fill(&mut out, LIMIT / 2, 0, |i| {
        format!(r#"{{"id":"p{}","maxMarks":1}}"#, name(i))
    });
    out.push_str(r#"],"criteria":["#);
    let tail = r#"]},"decisions":[]}]}"#;
    fill(&mut out, LIMIT, tail.len(), |i| {
        format!(r#"{{"id":"c{}","partId":"x"}}"#, name(i))
    });
    out.push_str(tail);
    shape("unknown-parts", out.into_bytes(), "unknown_part")
}

/// Two parts with ids of 1 MiB each, and criteria naming a part that does not exist.
fn long_part_ids() -> Shape {
    let long = "p".repeat(1024 * 1024);
    let mut out = format!(
        r#"{HEAD}{}{{"id":"{long}a","maxMarks":1}},{{"id":"{long}b","maxMarks":1}}],"criteria":["#,
        question_head("1")
    );
    let tail = r#"]},"decisions":[]}]}"#;
    fill(&mut out, LIMIT, tail.len(), |i| {
        format!(r#"{{"id":"c{}","partId":"x"}}"#, name(i))
    });
    out.push_str(tail);
    shape("long-part-ids", out.into_bytes(), "unknown_part")
}

fn unknown_criteria() -> Shape {
    shape(
        "unknown-criteria",
        question_of_decisions(&criterion("c"), |i| {
            format!(r#"{{"criterionId":"x{}"}}"#, name(i))
        }),
        "unknown_criterion",
    )
}

/// Decisions naming ids no criterion has, then (after them in the question) criteria whose ids
/// break the pattern.
fn rejected_ids() -> Shape {
    let mut out = format!(
        r#"{HEAD}{{"label":"1","pageSelections":{{"{WORK}":[1],"{SCHEME}":[1]}},"decisions":["#
    );
    fill(&mut out, LIMIT / 2, 0, |i| {
        format!(r#"{{"criterionId":"x{}"}}"#, name(i))
    });
    out.push_str(r#"],"rubric":{"parts":[{"id":"a","maxMarks":1}],"criteria":["#);
    fill(&mut out, LIMIT, 4, |i| {
        format!(r#"{{"id":"a b{}"}}"#, name(i))
    });
    out.push_str("]}}]}");
    shape("rejected-ids", out.into_bytes(), "unknown_criterion")
}

fn duplicate_decisions() -> Shape {
    shape(
        "duplicate-decisions",
        question_of_decisions(&criterion("c"), |_| r#"{"criterionId":"c"}"#.into()),
        "duplicate_decision",
    )
}

fn distinct_depends() -> Shape {
    let head = format!(
        r#"{HEAD}{}{{"id":"a","maxMarks":1}}],"criteria":[{{"id":"c","partId":"a","code":"M1","requirement":"r","conditions":[],"maxMarks":1,"sourcePageIds":["{SCHEME}:p1"],"dependsOn":["#,
        question_head("1")
    );
    let tail = format!(r#"]}}]}},"decisions":[{}]}}]}}"#, decision("c"));
    shape(
        "distinct-depends",
        repeated(&head, &tail, |i| format!(r#""{}""#, name(i))),
        "unknown_dependency",
    )
}

/// One cycle through every criterion: each depends on the next, the last on the first.
fn long_cycle() -> Shape {
    let mut out = format!(
        r#"{HEAD}{}{{"id":"a","maxMarks":1}}],"criteria":["#,
        question_head("1")
    );
    let tail = r#"]},"decisions":[]}]}"#;
    let item = |i: usize| {
        format!(
            r#"{{"id":"c{}","dependsOn":["c{}"]}}"#,
            name(i),
            name(i + 1)
        )
    };
    // Leave room for the closing criterion, which points back at the first.
    let closing = 64;
    let count = fill(&mut out, LIMIT, tail.len() + closing, item);
    out.push_str(&format!(
        r#",{{"id":"c{}","dependsOn":["c0"]}}"#,
        name(count)
    ));
    out.push_str(tail);
    shape("long-cycle", out.into_bytes(), "dependency_cycle")
}

/// Many cycles of 64 criteria each.
fn many_cycles() -> Shape {
    shape(
        "many-cycles",
        question_of_criteria("", |i| {
            let next = i - i % 64 + (i + 1) % 64;
            format!(r#"{{"id":"c{}","dependsOn":["c{}"]}}"#, name(i), name(next))
        }),
        "dependency_cycle",
    )
}

fn self_dependencies() -> Shape {
    shape(
        "self-dependencies",
        question_of_criteria("", |i| {
            let id = format!("c{}", name(i));
            criterion_depending(&id, &format!(r#"["{id}"]"#))
        }),
        "self_dependency",
    )
}

fn cross_question() -> Shape {
    let head = format!(
        r#"{HEAD}{}{{"id":"a","maxMarks":1}}],"criteria":[{}]}},"decisions":[{}]}},{}{{"id":"a","maxMarks":1}}],"criteria":["#,
        question_head("1"),
        criterion("x"),
        decision("x"),
        question_head("2")
    );
    shape(
        "cross-question",
        repeated(&head, r#"]},"decisions":[]}]}"#, |i| {
            format!(r#"{{"id":"c{}","dependsOn":["x"]}}"#, name(i))
        }),
        "cross_question_dependency",
    )
}

fn unselected_pages() -> Shape {
    let head = format!(
        r#"{HEAD}{}{{"id":"a","maxMarks":1}}],"criteria":[{{"id":"c","partId":"a","code":"M1","requirement":"r","conditions":[],"dependsOn":[],"maxMarks":1,"sourcePageIds":["#,
        question_head("1")
    );
    let tail = format!(r#"]}}]}},"decisions":[{}]}}]}}"#, decision("c"));
    shape(
        "unselected-pages",
        repeated(&head, &tail, |i| {
            format!(r#""{SCHEME}:p{}""#, i % 9_999 + 2)
        }),
        "page_not_selected",
    )
}

fn unknown_assets() -> Shape {
    let head = format!(r#"{HEAD}{{"label":"1","pageSelections":{{"#);
    let tail = format!(
        r#"}},"rubric":{{"parts":[{{"id":"a","maxMarks":1}}],"criteria":[{}]}},"decisions":[{}]}}]}}"#,
        criterion("c"),
        decision("c")
    );
    let mut shape = shape(
        "unknown-assets",
        repeated(&head, &tail, |i| {
            format!(r#""00000000-0000-4000-8000-{i:012x}":[1]"#)
        }),
        "unknown_asset",
    );
    shape.assets = assets();
    shape
}

fn pages_out_of_range() -> Shape {
    let pages: Vec<String> = (1..=10_000).map(|n| n.to_string()).collect();
    let document = format!(
        r#"{HEAD}{{"label":"1","pageSelections":{{"{WORK}":[{}],"{SCHEME}":[1]}},"rubric":{{"parts":[{{"id":"a","maxMarks":1}}],"criteria":[{}]}},"decisions":[{}]}}]}}"#,
        pages.join(","),
        criterion("c"),
        decision("c")
    );
    let mut shape = shape(
        "pages-out-of-range",
        document.into_bytes(),
        "page_out_of_range",
    );
    shape.assets = assets();
    shape
}

fn duplicate_labels() -> Shape {
    shape(
        "duplicate-labels",
        repeated(HEAD, "]}", |_| r#"{"label":"a"}"#.into()),
        "duplicate_label",
    )
}

fn duplicate_criterion_ids() -> Shape {
    shape(
        "duplicate-criterion-ids",
        question_of_criteria("", |_| r#"{"id":"a"}"#.into()),
        "duplicate_criterion_id",
    )
}

fn duplicate_part_ids() -> Shape {
    let head = format!("{HEAD}{}", question_head("1"));
    let tail = format!(
        r#"],"criteria":[{}]}},"decisions":[{}]}}]}}"#,
        criterion("c"),
        decision("c")
    );
    shape(
        "duplicate-part-ids",
        repeated(&head, &tail, |_| r#"{"id":"a","maxMarks":1}"#.into()),
        "duplicate_part_id",
    )
}

fn bad_boxes() -> Shape {
    let head = format!(
        r#"{HEAD}{}{{"id":"a","maxMarks":1}}],"criteria":[{}]}},"decisions":[{{"criterionId":"c","outcome":"awarded","reason":"r","conditionChecks":[],"evidence":["#,
        question_head("1"),
        criterion("c")
    );
    shape(
        "bad-boxes",
        repeated(&head, "]}]}]}", |_| {
            format!(
                r#"{{"pageId":"{WORK}:p1","quote":"q","box":{{"x":2,"y":0.5,"width":0.6,"height":0}}}}"#
            )
        }),
        "box_out_of_bounds",
    )
}

fn condition_index_out_of_range() -> Shape {
    let criterion = format!(
        r#"{{"id":"c","partId":"a","code":"M1","requirement":"r","conditions":["k"],"conditionMode":"all","dependsOn":[],"maxMarks":1,"sourcePageIds":["{SCHEME}:p1"]}}"#
    );
    let head = format!(
        r#"{HEAD}{}{{"id":"a","maxMarks":1}}],"criteria":[{criterion}]}},"decisions":[{{"criterionId":"c","outcome":"awarded","reason":"r","evidence":[{{"pageId":"{WORK}:p1","quote":"q","box":{{"x":0,"y":0,"width":1,"height":1}}}}],"conditionChecks":["#,
        question_head("1")
    );
    shape(
        "condition-index-out-of-range",
        repeated(&head, "]}]}]}", |i| {
            format!(r#"{{"index":{},"result":"met"}}"#, i + 1)
        }),
        "condition_index_out_of_range",
    )
}

/// A criterion with about a million conditions and a decision that checks none: every
/// `condition_check_missing` error stands at the same offset.
fn condition_checks_missing() -> Shape {
    let head = format!(
        r#"{HEAD}{}{{"id":"a","maxMarks":1}}],"criteria":[{{"id":"c","partId":"a","code":"M1","requirement":"r","conditionMode":"all","dependsOn":[],"maxMarks":1,"sourcePageIds":["{SCHEME}:p1"],"conditions":["#,
        question_head("1")
    );
    let tail = format!(
        r#"]}}]}},"decisions":[{{"criterionId":"c","outcome":"awarded","reason":"r","evidence":[{{"pageId":"{WORK}:p1","quote":"q","box":{{"x":0,"y":0,"width":1,"height":1}}}}],"conditionChecks":[]}}]}}]}}"#
    );
    shape(
        "condition-checks-missing",
        repeated(&head, &tail, |_| r#""k""#.into()),
        "condition_check_missing",
    )
}

fn coverage_labels() -> Shape {
    let head = r#"{"schemaVersion":"service-marking-import-v1","coordinateSystem":"normalized-top-left","pageBasis":"displayed-page","source":{"kind":"human","name":"n","markedAt":"2025-06-14T16:42:05Z"},"coverage":{"kind":"partial","totalMarks":1,"questionLabels":["#;
    let tail = format!(
        r#"]}},"questions":[{}{{"id":"a","maxMarks":1}}],"criteria":[{}]}},"decisions":[{}]}}]}}"#,
        question_head("1"),
        criterion("c"),
        decision("c")
    );
    shape(
        "coverage-labels",
        repeated(head, &tail, |_| r#""a""#.into()),
        "coverage_mismatch",
    )
}

fn example(name: &'static str, file: &str, assets: &str, expect: &'static str) -> Shape {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/submissions/");
    let document = std::fs::read(format!("{dir}{file}")).unwrap_or_default();
    let assets = std::fs::read(format!("{dir}{assets}"))
        .ok()
        .and_then(|json| examkit_engine::assets_from_json(&json).ok());
    Shape {
        name,
        document,
        assets,
        expect,
    }
}

fn example_a_level() -> Shape {
    example(
        "example-a-level",
        "a-level-pure-paper.json",
        "a-level-pure-paper.assets.json",
        "valid",
    )
}

fn example_a_level_invalid() -> Shape {
    example(
        "example-a-level-invalid",
        "a-level-pure-paper.invalid.json",
        "a-level-pure-paper.assets.json",
        "format",
    )
}

fn example_further_maths() -> Shape {
    example(
        "example-further-maths",
        "further-maths-paper.json",
        "further-maths-paper.assets.json",
        "valid",
    )
}
