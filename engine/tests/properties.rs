//! Property tests: invariants of scoring and validation over random valid rubrics and decisions,
//! and robustness over arbitrary input.

use examkit_engine::{Asset, AssetKind, Decision, Outcome, Report, explain, validate};
use proptest::prelude::*;
use serde_json::{Value, json};

const WORK: &str = "3f0c9a52-8a6e-4c1b-9d2f-0b7e5a1c4d11";
const SCHEME: &str = "8b1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e22";

fn assets() -> Vec<Asset> {
    let asset = |id: &str, kind, page_count| Asset {
        id: id.parse().expect("uuid"),
        kind,
        page_count,
    };
    vec![
        asset(WORK, AssetKind::Work, 6),
        asset(SCHEME, AssetKind::Scheme, 3),
    ]
}

/// One random criterion: its part, the earlier criteria it depends on, its conditions and decision.
#[derive(Debug, Clone)]
struct Spec {
    part: usize,
    depends_on: Vec<usize>,
    conditions: usize,
    any: bool,
    outcome: usize,
    checks: Vec<usize>,
}

const OUTCOMES: [&str; 3] = ["awarded", "withheld", "uncertain"];
const RESULTS: [&str; 3] = ["met", "not_met", "uncertain"];

fn spec(index: usize, parts: usize) -> impl Strategy<Value = Spec> {
    (
        0..parts,
        proptest::collection::btree_set(0..index.max(1), 0..=index.min(3)),
        0usize..=3,
        any::<bool>(),
        0usize..3,
        proptest::collection::vec(0usize..3, 3),
    )
        .prop_map(move |(part, deps, conditions, any, outcome, checks)| Spec {
            part,
            depends_on: if index == 0 {
                Vec::new()
            } else {
                deps.into_iter().collect()
            },
            conditions,
            any,
            outcome,
            checks: checks[..conditions].to_vec(),
        })
}

fn question_specs() -> impl Strategy<Value = (usize, Vec<Spec>)> {
    (1usize..=3, 1usize..=10).prop_flat_map(|(parts, count)| {
        let specs: Vec<_> = (0..count).map(|i| spec(i, parts)).collect();
        (Just(parts), specs)
    })
}

fn build(questions: &[(usize, Vec<Spec>)]) -> Value {
    let mut out = Vec::new();
    for (q, (parts, specs)) in questions.iter().enumerate() {
        let id = |c: usize| format!("q{q}-c{c}");
        let mut counts = vec![0; *parts];
        for s in specs {
            counts[s.part] += 1;
        }
        let parts_json: Vec<Value> = counts
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(p, n)| json!({"id": format!("p{p}"), "maxMarks": n}))
            .collect();
        let evidence = |c: usize| json!([{"pageId": format!("{WORK}:p{}", 1 + c % 6), "quote": "working shown", "box": {"x": 0.1, "y": 0.1, "width": 0.5, "height": 0.2}}]);
        let criteria: Vec<Value> = specs
            .iter()
            .enumerate()
            .map(|(c, s)| {
                let mut criterion = json!({
                    "id": id(c), "partId": format!("p{}", s.part),
                    "code": if s.depends_on.is_empty() { "M1" } else { "dM1" },
                    "requirement": "correct method",
                    "conditions": (0..s.conditions).map(|i| format!("condition {i}")).collect::<Vec<_>>(),
                    "dependsOn": s.depends_on.iter().map(|d| id(*d)).collect::<Vec<_>>(),
                    "maxMarks": 1, "sourcePageIds": [format!("{SCHEME}:p1")]
                });
                if s.conditions > 0 {
                    criterion["conditionMode"] = json!(if s.any { "any" } else { "all" });
                }
                criterion
            })
            .collect();
        let decisions: Vec<Value> = specs
            .iter()
            .enumerate()
            .map(|(c, s)| {
                json!({
                    "criterionId": id(c), "outcome": OUTCOMES[s.outcome], "reason": "as seen",
                    "evidence": evidence(c),
                    "conditionChecks": s.checks.iter().enumerate().map(|(i, r)| json!({"index": i, "result": RESULTS[*r]})).collect::<Vec<_>>()
                })
            })
            .collect();
        out.push(json!({
            "label": format!("{}", q + 1),
            "pageSelections": {WORK: [1, 2, 3, 4, 5, 6], SCHEME: [1]},
            "rubric": {"parts": parts_json, "criteria": criteria},
            "decisions": decisions
        }));
    }
    let total: usize = questions.iter().map(|(_, s)| s.len()).sum();
    json!({
        "schemaVersion": "service-marking-import-v1",
        "coordinateSystem": "normalized-top-left",
        "pageBasis": "displayed-page",
        "source": {"kind": "human", "name": "Examiner", "markedAt": "2026-06-11T09:30:00Z"},
        "coverage": {"kind": "whole-paper", "questionLabels": (1..=questions.len()).map(|i| i.to_string()).collect::<Vec<_>>(), "totalMarks": total},
        "questions": out
    })
}

fn report(document: &Value) -> Report {
    let bytes = serde_json::to_vec(document).expect("serialise");
    match validate(&bytes, Some(&assets())) {
        Outcome::Valid(report) => report,
        Outcome::Invalid(rejection) => {
            panic!("generated document is invalid: {:?}", rejection.errors)
        }
    }
}

fn submission() -> impl Strategy<Value = Vec<(usize, Vec<Spec>)>> {
    proptest::collection::vec(question_specs(), 1..=4)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn ranges_are_ordered_and_add_up(questions in submission()) {
        let report = report(&build(&questions));
        let s = report.score;
        prop_assert!(s.awarded <= s.possible && s.possible <= s.max);
        prop_assert_eq!(s.max as usize, questions.iter().map(|(_, c)| c.len()).sum::<usize>());
        let mut total = (0, 0, 0);
        for question in &report.questions {
            let q = question.score;
            prop_assert!(q.awarded <= q.possible && q.possible <= q.max);
            let parts = question.parts.iter().fold((0, 0, 0), |a, p| (a.0 + p.score.awarded, a.1 + p.score.possible, a.2 + p.score.max));
            prop_assert_eq!(parts, (q.awarded, q.possible, q.max));
            let awarded = question.criteria.iter().filter(|c| c.effective == Decision::Awarded).count() as u32;
            prop_assert_eq!(awarded, q.awarded);
            prop_assert_eq!(question.status == examkit_engine::Status::Completed, question.review_flags.is_empty());
            total = (total.0 + q.awarded, total.1 + q.possible, total.2 + q.max);
        }
        prop_assert_eq!(total, (s.awarded, s.possible, s.max));
    }

    #[test]
    fn awarding_a_withheld_mark_never_lowers_scores(questions in submission(), pick in any::<prop::sample::Index>()) {
        let withheld: Vec<(usize, usize)> = questions.iter().enumerate()
            .flat_map(|(q, (_, specs))| specs.iter().enumerate().filter(|(_, s)| s.outcome == 1).map(move |(c, _)| (q, c)))
            .collect();
        prop_assume!(!withheld.is_empty());
        let (q, c) = withheld[pick.index(withheld.len())];
        let before = report(&build(&questions));
        let mut changed = questions.clone();
        changed[q].1[c].outcome = 0;
        let after = report(&build(&changed));
        prop_assert!(after.score.awarded >= before.score.awarded);
        prop_assert!(after.score.possible >= before.score.possible);
        prop_assert!(after.questions[q].score.awarded >= before.questions[q].score.awarded);
        prop_assert!(after.questions[q].score.possible >= before.questions[q].score.possible);
    }

    #[test]
    fn order_of_criteria_and_decisions_does_not_matter(questions in submission(), seed in any::<u64>()) {
        let document = build(&questions);
        let mut shuffled = document.clone();
        let mut state = seed | 1;
        let mut next = move |n: usize| { state ^= state << 13; state ^= state >> 7; state ^= state << 17; (state % n as u64) as usize };
        for question in shuffled["questions"].as_array_mut().expect("questions") {
            for key in ["decisions"] {
                let list = question[key].as_array_mut().expect("list");
                for i in (1..list.len()).rev() { let j = next(i + 1); list.swap(i, j); }
            }
            let list = question["rubric"]["criteria"].as_array_mut().expect("criteria");
            for i in (1..list.len()).rev() { let j = next(i + 1); list.swap(i, j); }
        }
        let a = report(&document);
        let b = report(&shuffled);
        prop_assert_eq!(a.score, b.score);
        for (x, y) in a.questions.iter().zip(&b.questions) {
            prop_assert_eq!(x.score, y.score);
            prop_assert_eq!(&x.parts, &y.parts);
            let mut xs: Vec<_> = x.criteria.iter().map(|c| (c.id.clone(), c.effective, c.flags.clone())).collect();
            let mut ys: Vec<_> = y.criteria.iter().map(|c| (c.id.clone(), c.effective, c.flags.clone())).collect();
            xs.sort_by(|a, b| a.0.cmp(&b.0));
            ys.sort_by(|a, b| a.0.cmp(&b.0));
            prop_assert_eq!(xs, ys);
        }
    }

    #[test]
    fn validation_is_deterministic(questions in submission(), flip in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = serde_json::to_vec(&build(&questions)).expect("serialise");
        let i = flip.index(bytes.len());
        bytes[i] = byte;
        let a = validate(&bytes, Some(&assets())).to_json();
        let b = validate(&bytes, Some(&assets())).to_json();
        prop_assert_eq!(a, b);
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_always_explain(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let outcome = validate(&bytes, None);
        prop_assert!(!outcome.is_valid());
        prop_assert!(!outcome.errors().is_empty());
        prop_assert!(explain(&bytes, &outcome).starts_with("Invalid submission: "));
    }

    #[test]
    fn every_criterion_of_a_valid_document_is_explained(questions in submission()) {
        let bytes = serde_json::to_vec(&build(&questions)).expect("serialise");
        let outcome = validate(&bytes, Some(&assets()));
        prop_assert!(outcome.is_valid());
        let report = explain(&bytes, &outcome);
        let criteria: usize = questions.iter().map(|(_, specs)| specs.len()).sum();
        let lines = |prefix: &str| report.lines().filter(|l| l.trim_start().starts_with(prefix)).count();
        prop_assert_eq!(lines("requirement: "), criteria);
        prop_assert_eq!(lines("reason: "), criteria);
    }

    #[test]
    fn arbitrary_json_gets_located_errors(value in arbitrary_json()) {
        let bytes = serde_json::to_vec(&value).expect("serialise");
        let outcome = validate(&bytes, None);
        prop_assert!(!outcome.is_valid());
        for error in outcome.errors() {
            prop_assert!(!error.message.is_empty());
            // Every path points into the document, or at a missing member of an object in it.
            let parent = error.path.rsplit_once('/').map_or("", |(p, _)| p);
            prop_assert!(value.pointer(&error.path).is_some() || value.pointer(parent).is_some_and(Value::is_object),
                "{} does not point into the document", error.path);
        }
    }

    #[test]
    fn mutated_submissions_get_located_errors(questions in submission(), path_pick in any::<prop::sample::Index>(), replacement in arbitrary_json()) {
        let mut document = build(&questions);
        let mut pointers = Vec::new();
        collect_pointers(&document, String::new(), &mut pointers);
        let target = pointers[path_pick.index(pointers.len())].clone();
        if let Some(slot) = document.pointer_mut(&target) { *slot = replacement; }
        let bytes = serde_json::to_vec(&document).expect("serialise");
        let outcome = validate(&bytes, Some(&assets()));
        for error in outcome.errors() {
            let parent = error.path.rsplit_once('/').map_or("", |(p, _)| p);
            prop_assert!(document.pointer(&error.path).is_some() || document.pointer(parent).is_some_and(Value::is_object),
                "{} does not point into the document", error.path);
        }
        let json = outcome.to_json();
        prop_assert_eq!(json, validate(&bytes, Some(&assets())).to_json());
    }
}

fn collect_pointers(value: &Value, here: String, out: &mut Vec<String>) {
    out.push(here.clone());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                collect_pointers(
                    v,
                    format!("{here}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                collect_pointers(v, format!("{here}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1e6f64..1e6).prop_map(|n| json!(n)),
        "[a-zA-Z0-9 :/~.-]{0,12}".prop_map(Value::String),
        Just(json!("service-marking-import-v1")),
    ];
    leaf.prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("questions".to_owned()),
                    Just("source".to_owned()),
                    Just("label".to_owned()),
                    Just("rubric".to_owned()),
                    Just("a/b~c".to_owned()),
                    "[a-z]{1,8}".prop_map(|s| s)
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}
