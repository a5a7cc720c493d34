//! The references stage: labels, ids, parts, decisions, condition checks, pages, assets, roles and
//! coverage. Each rule runs only on values that passed the structure stage, so one defect is
//! reported once.
//!
//! Every lookup is a hash lookup, so the stage stays linear however long the lists are; the maps
//! are keyed (`hash`) because their keys come from the document.

use std::cell::OnceCell;

use uuid::Uuid;

use crate::assets::{Asset, AssetKind};
use crate::collect::Errors;
use crate::error::ErrorCode;
use crate::hash::{HashMap, HashSet};
use crate::json::Items;
use crate::pointer::{Seg, pointer};
use crate::rules::text;
use crate::submission::{
    Check, Citation, Criterion, DecisionRecord, PageRef, Part, Question, Selection, Submission,
};

/// Runs every reference check.
pub(crate) fn check(submission: Submission<'_>, assets: Option<&[Asset]>, errors: &mut Errors) {
    let Some(questions) = submission.questions() else {
        return;
    };
    let assets: Option<HashMap<Uuid, &Asset>> =
        assets.map(|list| list.iter().map(|a| (a.id, a)).collect());
    labels(questions, errors);
    criterion_ids(questions, errors);
    for (q, node) in questions.enumerate() {
        // Each check below reports only within its question, and later questions stand later.
        if errors.closed_from(node.start()) {
            break;
        }
        let question = Question::new(node);
        parts(q, question, errors);
        decisions(q, question, errors);
        pages(q, question, assets.as_ref(), errors);
    }
    coverage(submission, questions, errors);
}

use Seg::{Index, Key};

/// Criterion `c` (and so on) of a list, at its index: `u32` is enough for anything in 4 MiB.
fn index(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

fn labels(questions: Items<'_>, errors: &mut Errors) {
    let mut seen: HashMap<&str, u32> = HashMap::default();
    for (q, node) in questions.enumerate() {
        // A repeat is reported at the later label: past this question, nothing can be.
        if errors.closed_from(node.start()) {
            break;
        }
        let Some(label) = Question::new(node).label() else {
            continue;
        };
        if let Some(&first) = seen.get(label.value) {
            errors.push(
                ErrorCode::DuplicateLabel,
                label.at,
                || pointer(&[Key("questions"), Index(q), Key("label")]),
                || {
                    format!(
                        "the label {:?} is already used by question {first}",
                        label.value
                    )
                },
            );
        } else {
            seen.insert(label.value, index(q));
        }
    }
}

fn criterion_ids(questions: Items<'_>, errors: &mut Errors) {
    let mut seen: HashMap<&str, (u32, u32)> = HashMap::default();
    for (q, node) in questions.enumerate() {
        // A repeat is reported at the later id: past this question, nothing can be.
        if errors.closed_from(node.start()) {
            break;
        }
        let criteria = Question::new(node).criteria();
        for (c, node) in criteria.into_iter().flatten().enumerate() {
            if errors.closed_from(node.start()) {
                break;
            }
            let Some(id) = Criterion::new(node).id() else {
                continue;
            };
            match seen.get(id.value) {
                Some(&(fq, fc)) => errors.push(
                    ErrorCode::DuplicateCriterionId,
                    id.at,
                    || pointer(&[Key("questions"), Index(q), Key("rubric"), Key("criteria"), Index(c), Key("id")]),
                    || format!(
                        "the criterion id {:?} is already used by /questions/{fq}/rubric/criteria/{fc}; criterion ids are unique in the whole submission",
                        id.value
                    ),
                ),
                None => {
                    seen.insert(id.value, (index(q), index(c)));
                }
            }
        }
    }
}

fn parts(q: usize, question: Question<'_>, errors: &mut Errors) {
    let Some(parts) = question.parts() else {
        return;
    };
    let mut known: HashMap<&str, u32> = HashMap::default();
    for (p, node) in parts.enumerate() {
        let Some(id) = Part::new(node).id() else {
            continue;
        };
        if known.contains_key(id.value) {
            errors.push(
                ErrorCode::DuplicatePartId,
                id.at,
                || {
                    pointer(&[
                        Key("questions"),
                        Index(q),
                        Key("rubric"),
                        Key("parts"),
                        Index(p),
                        Key("id"),
                    ])
                },
                || {
                    format!(
                        "the part id {:?} is already used in this question",
                        id.value
                    )
                },
            );
        } else {
            known.insert(id.value, index(p));
        }
    }
    let Some(criteria) = question.criteria() else {
        return;
    };
    // The question's part ids, listed in every unknown_part message: written once, when needed.
    let names = OnceCell::new();
    let names = || {
        names
            .get_or_init(|| {
                let mut names: Vec<String> = known.keys().map(|k| format!("{k:?}")).collect();
                names.sort();
                names.join(", ")
            })
            .clone()
    };
    let mut counts: HashMap<&str, u32> = HashMap::default();
    let mut all_known = true;
    for (c, node) in criteria.enumerate() {
        // Once a part is unknown the counts are not used: only this loop's own errors remain,
        // each within its criterion.
        if !all_known && errors.closed_from(node.start()) {
            break;
        }
        let Some(part_id) = Criterion::new(node).part_id() else {
            all_known = false;
            continue;
        };
        if known.contains_key(part_id.value) {
            *counts.entry(part_id.value).or_default() += 1;
        } else {
            all_known = false;
            errors.push(
                ErrorCode::UnknownPart,
                part_id.at,
                || {
                    pointer(&[
                        Key("questions"),
                        Index(q),
                        Key("rubric"),
                        Key("criteria"),
                        Index(c),
                        Key("partId"),
                    ])
                },
                || {
                    format!(
                        "the question has no part {:?}; its parts are {}",
                        part_id.value,
                        names()
                    )
                },
            );
        }
    }
    // A criterion without a known part could belong to any part: counting would be guesswork.
    if !all_known || parts.into_iter().any(|p| Part::new(p).id().is_none()) {
        return;
    }
    for (p, node) in parts.enumerate() {
        let part = Part::new(node);
        let (Some(id), Some(max)) = (part.id(), part.max_marks()) else {
            continue;
        };
        if known.get(id.value) != Some(&index(p)) {
            continue;
        }
        let count = counts.get(id.value).copied().unwrap_or(0);
        if f64::from(count) != max.value {
            errors.push(
                ErrorCode::PartMaxMismatch,
                max.at,
                || {
                    pointer(&[
                        Key("questions"),
                        Index(q),
                        Key("rubric"),
                        Key("parts"),
                        Index(p),
                        Key("maxMarks"),
                    ])
                },
                || {
                    format!(
                        "part {:?} has maxMarks {} but {count} one-mark criteria; they must be equal",
                        id.value, max.value
                    )
                },
            );
        }
    }
}

fn decisions(q: usize, question: Question<'_>, errors: &mut Errors) {
    let (Some(criteria), Some(decisions)) = (question.criteria(), question.decisions()) else {
        return;
    };
    // Without decisions only missing_decision remains, each within its criterion.
    let none_decided = decisions.is_empty();
    // The first criterion of each id in this question; repeats are reported as duplicate ids.
    let mut by_id: HashMap<&str, u32> = HashMap::default();
    for (c, node) in criteria.enumerate() {
        if none_decided && errors.closed_from(node.start()) {
            break;
        }
        if let Some(id) = Criterion::new(node).id() {
            by_id.entry(id.value).or_insert(index(c));
        }
    }
    // For each decided criterion, its first decision: the index and the value.
    let mut decided: HashMap<u32, (u32, u32)> = HashMap::default();
    // Whether some decision's criterionId is unreadable (the decision is not an object, or its
    // criterionId is missing, not a string or empty: each already reported where it is written).
    // Such a decision may be the one any undecided criterion was meant to have, so no criterion of
    // this question is then reported as missing_decision.
    let mut decisions_unreadable = false;
    if !none_decided {
        // A decision naming a criterion whose id was rejected (or unreadable) is not reported
        // again.
        let mut ids_unreadable = false;
        let mut rejected: HashSet<&str> = HashSet::default();
        for node in criteria {
            let criterion = Criterion::new(node);
            match (criterion.written_id(), criterion.id()) {
                (None, _) => {
                    ids_unreadable = true;
                    break;
                }
                (Some(written), None) => {
                    rejected.insert(written);
                }
                (Some(_), Some(_)) => {}
            }
        }
        let rejected = |name: &str| ids_unreadable || rejected.contains(name);
        for (d, node) in decisions.enumerate() {
            let Some(id) = DecisionRecord::new(node).criterion_id() else {
                decisions_unreadable = true;
                continue;
            };
            let path = || {
                pointer(&[
                    Key("questions"),
                    Index(q),
                    Key("decisions"),
                    Index(d),
                    Key("criterionId"),
                ])
            };
            match by_id.get(id.value) {
                None if rejected(id.value) => {}
                None => errors.push(ErrorCode::UnknownCriterion, id.at, path, || {
                    format!("this question has no criterion {:?}", id.value)
                }),
                Some(&c) => match decided.get(&c) {
                    None => {
                        decided.insert(c, (index(d), node.handle()));
                    }
                    Some(&(first, _)) => errors.push(
                        ErrorCode::DuplicateDecision,
                        id.at,
                        path,
                        || format!(
                            "criterion {:?} already has a decision (/questions/{q}/decisions/{first}); each criterion has exactly one",
                            id.value
                        ),
                    ),
                },
            }
        }
    }
    for (c, node) in criteria.enumerate() {
        if none_decided && errors.closed_from(node.start()) {
            break;
        }
        let criterion = Criterion::new(node);
        let Some(id) = criterion.id() else { continue };
        if by_id.get(id.value) != Some(&index(c)) {
            continue;
        }
        let Some(&(d, decision)) = decided.get(&index(c)) else {
            if decisions_unreadable {
                continue;
            }
            errors.push(
                ErrorCode::MissingDecision,
                criterion.at,
                || {
                    pointer(&[
                        Key("questions"),
                        Index(q),
                        Key("rubric"),
                        Key("criteria"),
                        Index(c),
                    ])
                },
                || format!("criterion {:?} has no decision", id.value),
            );
            continue;
        };
        let decision = DecisionRecord::new(node.at_handle(decision));
        let (Some(count), Some(checks)) = (criterion.conditions(), decision.checks()) else {
            continue;
        };
        let Some(seen) = condition_checks(q, d as usize, id.value, count, checks.value, errors)
        else {
            continue;
        };
        for (i, _) in seen.iter().enumerate().filter(|(_, s)| !**s) {
            errors.push(
                ErrorCode::ConditionCheckMissing,
                checks.at,
                || {
                    pointer(&[
                        Key("questions"),
                        Index(q),
                        Key("decisions"),
                        Index(d as usize),
                        Key("conditionChecks"),
                    ])
                },
                || format!("condition {i} of criterion {:?} has no check", id.value),
            );
        }
    }
}

/// The checks of decision `d` on a criterion with `count` conditions: every index names one,
/// once. Returns which conditions are checked, when every check's index is readable.
fn condition_checks(
    q: usize,
    d: usize,
    id: &str,
    count: usize,
    checks: Items<'_>,
    errors: &mut Errors,
) -> Option<Vec<bool>> {
    let mut seen = vec![false; count];
    let mut all_indices_valid = true;
    for (m, check) in checks.enumerate() {
        let Some(index) = Check::new(check).index() else {
            all_indices_valid = false;
            continue;
        };
        let path = || {
            pointer(&[
                Key("questions"),
                Index(q),
                Key("decisions"),
                Index(d),
                Key("conditionChecks"),
                Index(m),
                Key("index"),
            ])
        };
        // `index` is a non-negative integer; anything not below `count` is out of range.
        if index.value >= count as f64 {
            errors.push(ErrorCode::ConditionIndexOutOfRange, index.at, path, || {
                format!(
                    "criterion {id:?} has {count} condition{}, so index {} names none (indices start at 0)",
                    if count == 1 { "" } else { "s" },
                    index.value
                )
            });
            continue;
        }
        let slot = index.value as usize;
        if seen[slot] {
            errors.push(ErrorCode::ConditionCheckDuplicate, index.at, path, || {
                format!("condition {slot} is already checked in this decision")
            });
        } else {
            seen[slot] = true;
        }
    }
    all_indices_valid.then_some(seen)
}

/// A selection's valid page numbers (sorted), and whether every item was one.
struct Selected {
    all_pages_valid: bool,
    pages: Vec<u16>,
}

fn pages(
    q: usize,
    question: Question<'_>,
    assets: Option<&HashMap<Uuid, &Asset>>,
    errors: &mut Errors,
) {
    let Some(selections) = question.selections() else {
        return;
    };
    let selections_at = selections.at;
    let selections = || {
        selections
            .value
            .map(|(key, value)| Selection::new(key, value))
    };
    let selection_path = |selection: Selection<'_>| {
        pointer(&[
            Key("questions"),
            Index(q),
            Key("pageSelections"),
            Key(selection.key),
        ])
    };
    let mut all_keys_known = true;
    if let Some(assets) = assets {
        let mut roles = [false; 2];
        for selection in selections() {
            let Some(id) = selection.asset else {
                all_keys_known = false;
                continue;
            };
            let Some(asset) = assets.get(&id) else {
                all_keys_known = false;
                errors.push(
                    ErrorCode::UnknownAsset,
                    selection.at,
                    || selection_path(selection),
                    || format!("asset {id} is not one of this import's assets"),
                );
                continue;
            };
            roles[usize::from(asset.kind == AssetKind::Scheme)] = true;
            for page in selection.pages() {
                if page.number > asset.page_count {
                    errors.push(
                        ErrorCode::PageOutOfRange,
                        page.at,
                        || {
                            pointer(&[
                                Key("questions"),
                                Index(q),
                                Key("pageSelections"),
                                Key(selection.key),
                                Index(page.index),
                            ])
                        },
                        || {
                            format!(
                                "asset {id} has {} page{}; page {} does not exist",
                                asset.page_count,
                                if asset.page_count == 1 { "" } else { "s" },
                                page.number
                            )
                        },
                    );
                }
            }
        }
        // A selection with an unknown or malformed key may be the missing role: not guessed.
        if all_keys_known {
            for (kind, present) in [(AssetKind::Work, roles[0]), (AssetKind::Scheme, roles[1])] {
                if !present {
                    errors.push(
                        ErrorCode::MissingPageRole,
                        selections_at,
                        || pointer(&[Key("questions"), Index(q), Key("pageSelections")]),
                        || format!("the question selects no page of a {} asset", kind.as_str()),
                    );
                }
            }
        }
    }
    // Keys are unique and a canonical key names one asset, so each asset has one selection.
    let by_asset: HashMap<Uuid, Selected> = selections()
        .filter_map(|s| {
            s.asset.map(|id| {
                // Page numbers are at most 10,000.
                let mut pages: Vec<u16> = s
                    .pages()
                    .filter_map(|page| u16::try_from(page.number).ok())
                    .collect();
                pages.sort_unstable();
                let selected = Selected {
                    all_pages_valid: s.all_pages_valid(),
                    pages,
                };
                (id, selected)
            })
        })
        .collect();
    let any_malformed_key = selections().any(|s| s.asset.is_none());
    let cite = |reference, role, errors: &mut Errors| {
        cited_page(
            reference,
            role,
            &by_asset,
            any_malformed_key,
            assets,
            errors,
        );
    };
    // Each citation is reported where it stands, within its criterion or decision.
    for (c, node) in question.criteria().into_iter().flatten().enumerate() {
        if errors.closed_from(node.start()) {
            break;
        }
        for reference in Criterion::new(node).source_pages(q, c) {
            cite(reference, AssetKind::Scheme, errors);
        }
    }
    for (d, node) in question.decisions().into_iter().flatten().enumerate() {
        if errors.closed_from(node.start()) {
            break;
        }
        for reference in DecisionRecord::new(node).evidence(q, d) {
            cite(reference, AssetKind::Work, errors);
        }
    }
}

fn cited_page(
    reference: PageRef,
    role: AssetKind,
    by_asset: &HashMap<Uuid, Selected>,
    any_malformed_key: bool,
    assets: Option<&HashMap<Uuid, &Asset>>,
    errors: &mut Errors,
) {
    let PageRef { page, at, citation } = reference;
    let selected = match by_asset.get(&page.asset) {
        Some(selection) => {
            let found = u16::try_from(page.page)
                .is_ok_and(|number| selection.pages.binary_search(&number).is_ok());
            if !found && !selection.all_pages_valid {
                return; // The page may be the selection's malformed item, reported already.
            }
            found
        }
        None if any_malformed_key => return, // The asset may be the malformed key, reported already.
        None => false,
    };
    if !selected {
        errors.push(
            ErrorCode::PageNotSelected,
            at,
            || citation.pointer(),
            || {
                format!(
                    "page {} of asset {} is not selected in this question's pageSelections",
                    page.page, page.asset
                )
            },
        );
        return;
    }
    let Some(asset) = assets.and_then(|a| a.get(&page.asset)) else {
        return;
    };
    if asset.kind != role {
        let what = match citation {
            Citation::Source { .. } => "sourcePageIds must cite mark-scheme pages",
            Citation::Evidence { .. } | Citation::CheckEvidence { .. } => {
                "evidence must cite completed student work; a mark scheme is never evidence of an answer"
            }
        };
        errors.push(
            ErrorCode::AssetRoleMismatch,
            at,
            || citation.pointer(),
            || {
                format!(
                    "{what}, but asset {} is a {} asset",
                    page.asset,
                    asset.kind.as_str()
                )
            },
        );
    }
}

fn coverage(submission: Submission<'_>, questions: Items<'_>, errors: &mut Errors) {
    let labels = || questions.map(|q| Question::new(q).label().map(|l| l.value));
    if let Some(declared) = submission
        .coverage_labels()
        .filter(|declared| !errors.closed_from(declared.at))
    {
        let declared_labels = || declared.value.map(|item| text(item).unwrap_or_default());
        if labels().all(|label| label.is_some()) && !labels().flatten().eq(declared_labels()) {
            errors.push(
                ErrorCode::CoverageMismatch,
                declared.at,
                || pointer(&[Key("coverage"), Key("questionLabels")]),
                || {
                    format!(
                        "coverage.questionLabels is {} but the questions are labelled {}, in that order",
                        list(declared_labels()),
                        list(labels().flatten())
                    )
                },
            );
        }
    }
    if let Some(total) = submission
        .coverage_total()
        .filter(|total| !errors.closed_from(total.at))
    {
        let counts: Option<usize> = questions
            .map(|q| Question::new(q).criteria().map(Items::len))
            .sum();
        if let Some(criteria) = counts {
            if criteria as f64 != total.value {
                errors.push(
                    ErrorCode::CoverageMismatch,
                    total.at,
                    || pointer(&[Key("coverage"), Key("totalMarks")]),
                    || {
                        format!(
                            "coverage.totalMarks is {} but the questions hold {criteria} one-mark criteria",
                            total.value
                        )
                    },
                );
            }
        }
    }
}

/// `["1a", "1b"]`, shortened past 12 items.
fn list<'a>(labels: impl Iterator<Item = &'a str>) -> String {
    let mut shown: Vec<String> = Vec::new();
    let mut count = 0usize;
    for label in labels {
        if count < 12 {
            shown.push(format!("{label:?}"));
        }
        count += 1;
    }
    let more = if count > 12 {
        format!(", … ({count} in all)")
    } else {
        String::new()
    };
    format!("[{}{more}]", shown.join(", "))
}

#[cfg(test)]
mod tests {
    /// A valid submission: one question of two criteria, each with its decision.
    fn document(decisions: &str) -> String {
        const WORK: &str = "3f2b8c1e-5a47-4d2e-9b61-0c8e7a5d4f10";
        const SCHEME: &str = "9a1d4e7b-2c3f-4b8a-8e5d-6f7a1b2c3d40";
        let criterion = |id: &str| {
            format!(
                r#"{{"id":"{id}","partId":"a","code":"B1","requirement":"r","conditions":[],"dependsOn":[],"maxMarks":1,"sourcePageIds":["{SCHEME}:p1"]}}"#
            )
        };
        format!(
            r#"{{"schemaVersion":"service-marking-import-v1","coordinateSystem":"normalized-top-left","pageBasis":"displayed-page","source":{{"kind":"human","name":"n","markedAt":"2025-06-14T16:42:05Z"}},"coverage":{{"kind":"whole-paper","questionLabels":["1"],"totalMarks":2}},"questions":[{{"label":"1","pageSelections":{{"{WORK}":[1],"{SCHEME}":[1]}},"rubric":{{"parts":[{{"id":"a","maxMarks":2}}],"criteria":[{},{}]}},"decisions":[{decisions}]}}]}}"#,
            criterion("c1"),
            criterion("c2")
        )
    }

    fn decision(criterion_id: &str) -> String {
        const WORK: &str = "3f2b8c1e-5a47-4d2e-9b61-0c8e7a5d4f10";
        format!(
            r#"{{{criterion_id}"outcome":"awarded","reason":"r","evidence":[{{"pageId":"{WORK}:p1","quote":"q","box":{{"x":0,"y":0,"width":1,"height":1}}}}],"conditionChecks":[]}}"#
        )
    }

    /// The codes and paths of the outcome's errors.
    fn errors(decisions: &str) -> Vec<(String, String)> {
        crate::validate_str(&document(decisions), None)
            .errors()
            .iter()
            .map(|e| (e.code().as_str().to_owned(), e.path.clone()))
            .collect()
    }

    fn error(code: &str, path: &str) -> (String, String) {
        (code.to_owned(), path.to_owned())
    }

    #[test]
    fn the_base_document_is_valid() {
        let both = format!(
            "{},{}",
            decision(r#""criterionId":"c1","#),
            decision(r#""criterionId":"c2","#)
        );
        assert_eq!(errors(&both), []);
    }

    #[test]
    fn a_decision_without_a_readable_criterion_id_is_one_error() {
        let first = decision(r#""criterionId":"c1","#);
        let cases = [
            ("", "required", "/questions/0/decisions/1/criterionId"),
            (
                r#""criterionId":2,"#,
                "type",
                "/questions/0/decisions/1/criterionId",
            ),
            (
                r#""criterionId":null,"#,
                "type",
                "/questions/0/decisions/1/criterionId",
            ),
            (
                r#""criterionId":"","#,
                "min_length",
                "/questions/0/decisions/1/criterionId",
            ),
        ];
        for (field, code, path) in cases {
            let decisions = format!("{first},{}", decision(field));
            assert_eq!(errors(&decisions), [error(code, path)], "{field:?}");
        }
        let not_an_object = format!("{first},\"c2\"");
        assert_eq!(
            errors(&not_an_object),
            [error("type", "/questions/0/decisions/1")]
        );
    }

    #[test]
    fn an_unreadable_decision_covers_every_criterion_of_its_question() {
        let alone = decision("");
        assert_eq!(
            errors(&alone),
            [error("required", "/questions/0/decisions/0/criterionId")]
        );
    }

    #[test]
    fn readable_decisions_still_leave_criteria_missing() {
        let renamed = format!(
            "{},{}",
            decision(r#""criterionId":"c1","#),
            decision(r#""criterionId":"c3","#)
        );
        assert_eq!(
            errors(&renamed),
            [
                error("missing_decision", "/questions/0/rubric/criteria/1"),
                error("unknown_criterion", "/questions/0/decisions/1/criterionId"),
            ]
        );
    }
}
