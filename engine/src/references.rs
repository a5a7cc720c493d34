//! The references stage: labels, ids, parts, decisions, condition checks, pages, assets, roles and
//! coverage. Each rule runs only on values that passed the structure stage, so one defect is
//! reported once.

use crate::fasthash::HashMap;

use uuid::Uuid;

use crate::assets::{Asset, AssetKind};
use crate::error::{ErrorCode, ValidationError};
use crate::pointer::{Seg, pointer};
use crate::submission::{Citation, PageRef, Question, Selection, Submission};

/// Runs every reference check, appending errors.
pub(crate) fn check(
    submission: &Submission<'_>,
    assets: Option<&[Asset]>,
    errors: &mut Vec<ValidationError>,
) {
    let Some(questions) = &submission.questions else {
        return;
    };
    let assets: Option<HashMap<Uuid, &Asset>> =
        assets.map(|list| list.iter().map(|a| (a.id, a)).collect());
    labels(questions, errors);
    criterion_ids(questions, errors);
    for (q, question) in questions.iter().enumerate() {
        parts(q, question, errors);
        decisions(q, question, errors);
        pages(q, question, assets.as_ref(), errors);
    }
    coverage(submission, questions, errors);
}

use Seg::{Index, Key};

fn labels(questions: &[Question<'_>], errors: &mut Vec<ValidationError>) {
    let mut seen: HashMap<&str, usize> = HashMap::default();
    for (q, question) in questions.iter().enumerate() {
        let Some(label) = question.label else {
            continue;
        };
        if let Some(first) = seen.get(label.value) {
            errors.push(ValidationError::new(
                ErrorCode::DuplicateLabel,
                pointer(&[Key("questions"), Index(q), Key("label")]),
                label.at,
                format!(
                    "the label {:?} is already used by question {first}",
                    label.value
                ),
            ));
        } else {
            seen.insert(label.value, q);
        }
    }
}

fn criterion_ids(questions: &[Question<'_>], errors: &mut Vec<ValidationError>) {
    let mut seen: HashMap<&str, (usize, usize)> = HashMap::default();
    for (q, question) in questions.iter().enumerate() {
        for (c, criterion) in question.criteria.iter().flatten().enumerate() {
            let Some(id) = criterion.id else { continue };
            match seen.get(id.value) {
                Some(&(fq, fc)) => errors.push(ValidationError::new(
                    ErrorCode::DuplicateCriterionId,
                    pointer(&[Key("questions"), Index(q), Key("rubric"), Key("criteria"), Index(c), Key("id")]),
                    id.at,
                    format!(
                        "the criterion id {:?} is already used by /questions/{fq}/rubric/criteria/{fc}; criterion ids are unique in the whole submission",
                        id.value
                    ),
                )),
                None => {
                    seen.insert(id.value, (q, c));
                }
            }
        }
    }
}

fn parts(q: usize, question: &Question<'_>, errors: &mut Vec<ValidationError>) {
    let Some(parts) = &question.parts else { return };
    let mut known: HashMap<&str, usize> = HashMap::default();
    for (p, part) in parts.iter().enumerate() {
        let Some(id) = part.id else { continue };
        if known.contains_key(id.value) {
            errors.push(ValidationError::new(
                ErrorCode::DuplicatePartId,
                pointer(&[
                    Key("questions"),
                    Index(q),
                    Key("rubric"),
                    Key("parts"),
                    Index(p),
                    Key("id"),
                ]),
                id.at,
                format!(
                    "the part id {:?} is already used in this question",
                    id.value
                ),
            ));
        } else {
            known.insert(id.value, p);
        }
    }
    let Some(criteria) = &question.criteria else {
        return;
    };
    let mut counts: HashMap<&str, u32> = HashMap::default();
    let mut all_known = true;
    for (c, criterion) in criteria.iter().enumerate() {
        let Some(part_id) = criterion.part_id else {
            all_known = false;
            continue;
        };
        if known.contains_key(part_id.value) {
            *counts.entry(part_id.value).or_default() += 1;
        } else {
            all_known = false;
            let names: Vec<String> = known.keys().map(|k| format!("{k:?}")).collect::<Vec<_>>();
            let mut names = names;
            names.sort();
            errors.push(ValidationError::new(
                ErrorCode::UnknownPart,
                pointer(&[
                    Key("questions"),
                    Index(q),
                    Key("rubric"),
                    Key("criteria"),
                    Index(c),
                    Key("partId"),
                ]),
                part_id.at,
                format!(
                    "the question has no part {:?}; its parts are {}",
                    part_id.value,
                    names.join(", ")
                ),
            ));
        }
    }
    // A criterion without a known part could belong to any part: counting would be guesswork.
    if !all_known || parts.iter().any(|p| p.id.is_none()) {
        return;
    }
    for (p, part) in parts.iter().enumerate() {
        let (Some(id), Some(max)) = (part.id, part.max_marks) else {
            continue;
        };
        if known.get(id.value) != Some(&p) {
            continue;
        }
        let count = counts.get(id.value).copied().unwrap_or(0);
        if f64::from(count) != max.value {
            errors.push(ValidationError::new(
                ErrorCode::PartMaxMismatch,
                pointer(&[
                    Key("questions"),
                    Index(q),
                    Key("rubric"),
                    Key("parts"),
                    Index(p),
                    Key("maxMarks"),
                ]),
                max.at,
                format!(
                    "part {:?} has maxMarks {} but {count} one-mark criteria; they must be equal",
                    id.value, max.value
                ),
            ));
        }
    }
}

fn decisions(q: usize, question: &Question<'_>, errors: &mut Vec<ValidationError>) {
    let (Some(criteria), Some(decisions)) = (&question.criteria, &question.decisions) else {
        return;
    };
    // The first criterion of each id in this question; repeats are reported as duplicate ids.
    let mut by_id: HashMap<&str, usize> = HashMap::default();
    for (c, criterion) in criteria.iter().enumerate() {
        if let Some(id) = criterion.id {
            by_id.entry(id.value).or_insert(c);
        }
    }
    // A decision naming a criterion whose id was rejected (or unreadable) is not reported again.
    let ids_unreadable = criteria.iter().any(|c| c.written_id.is_none());
    let rejected = |name: &str| {
        ids_unreadable
            || criteria
                .iter()
                .any(|c| c.id.is_none() && c.written_id == Some(name))
    };
    let mut decided: Vec<Option<usize>> = vec![None; criteria.len()];
    for (d, decision) in decisions.iter().enumerate() {
        let Some(id) = decision.criterion_id else {
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
            None => errors.push(ValidationError::new(
                ErrorCode::UnknownCriterion,
                path(),
                id.at,
                format!("this question has no criterion {:?}", id.value),
            )),
            Some(&c) => match decided[c] {
                Some(first) => errors.push(ValidationError::new(
                    ErrorCode::DuplicateDecision,
                    path(),
                    id.at,
                    format!(
                        "criterion {:?} already has a decision (/questions/{q}/decisions/{first}); each criterion has exactly one",
                        id.value
                    ),
                )),
                None => decided[c] = Some(d),
            },
        }
    }
    for (c, criterion) in criteria.iter().enumerate() {
        let Some(id) = criterion.id else { continue };
        if by_id.get(id.value) != Some(&c) {
            continue;
        }
        let Some(d) = decided[c] else {
            errors.push(ValidationError::new(
                ErrorCode::MissingDecision,
                pointer(&[
                    Key("questions"),
                    Index(q),
                    Key("rubric"),
                    Key("criteria"),
                    Index(c),
                ]),
                criterion.at,
                format!("criterion {:?} has no decision", id.value),
            ));
            continue;
        };
        let (Some(count), Some(checks)) = (criterion.conditions, &decisions[d].checks) else {
            continue;
        };
        let mut seen = vec![false; count];
        let mut all_indices_valid = true;
        for (m, check) in checks.value.iter().enumerate() {
            let Some(index) = check.index else {
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
            let slot = if index.value < count as f64 {
                Some(index.value as usize)
            } else {
                None
            };
            match slot {
                None => errors.push(ValidationError::new(
                    ErrorCode::ConditionIndexOutOfRange,
                    path(),
                    index.at,
                    format!(
                        "criterion {:?} has {count} condition{}, so index {} names none (indices start at 0)",
                        id.value,
                        if count == 1 { "" } else { "s" },
                        index.value
                    ),
                )),
                Some(i) if seen[i] => errors.push(ValidationError::new(
                    ErrorCode::ConditionCheckDuplicate,
                    path(),
                    index.at,
                    format!("condition {i} is already checked in this decision"),
                )),
                Some(i) => seen[i] = true,
            }
        }
        if !all_indices_valid {
            continue;
        }
        for (i, _) in seen.iter().enumerate().filter(|(_, s)| !**s) {
            errors.push(ValidationError::new(
                ErrorCode::ConditionCheckMissing,
                pointer(&[
                    Key("questions"),
                    Index(q),
                    Key("decisions"),
                    Index(d),
                    Key("conditionChecks"),
                ]),
                checks.at,
                format!("condition {i} of criterion {:?} has no check", id.value),
            ));
        }
    }
}

fn pages(
    q: usize,
    question: &Question<'_>,
    assets: Option<&HashMap<Uuid, &Asset>>,
    errors: &mut Vec<ValidationError>,
) {
    let Some(selections) = &question.selections else {
        return;
    };
    let selection_path = |selection: &Selection<'_>| {
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
        for selection in &selections.value {
            let Some(id) = selection.asset else {
                all_keys_known = false;
                continue;
            };
            let Some(asset) = assets.get(&id) else {
                all_keys_known = false;
                errors.push(ValidationError::new(
                    ErrorCode::UnknownAsset,
                    selection_path(selection),
                    selection.at,
                    format!("asset {id} is not one of this import's assets"),
                ));
                continue;
            };
            roles[usize::from(asset.kind == AssetKind::Scheme)] = true;
            for page in &selection.pages {
                if page.number > asset.page_count {
                    errors.push(ValidationError::new(
                        ErrorCode::PageOutOfRange,
                        pointer(&[
                            Key("questions"),
                            Index(q),
                            Key("pageSelections"),
                            Key(selection.key),
                            Index(page.index),
                        ]),
                        page.at,
                        format!(
                            "asset {id} has {} page{}; page {} does not exist",
                            asset.page_count,
                            if asset.page_count == 1 { "" } else { "s" },
                            page.number
                        ),
                    ));
                }
            }
        }
        // A selection with an unknown or malformed key may be the missing role: not guessed.
        if all_keys_known {
            for (kind, present) in [(AssetKind::Work, roles[0]), (AssetKind::Scheme, roles[1])] {
                if !present {
                    errors.push(ValidationError::new(
                        ErrorCode::MissingPageRole,
                        pointer(&[Key("questions"), Index(q), Key("pageSelections")]),
                        selections.at,
                        format!("the question selects no page of a {} asset", kind.as_str()),
                    ));
                }
            }
        }
    }
    let by_asset: HashMap<Uuid, &Selection<'_>> = selections
        .value
        .iter()
        .filter_map(|s| s.asset.map(|id| (id, s)))
        .collect();
    let any_malformed_key = selections.value.iter().any(|s| s.asset.is_none());
    let references = question
        .criteria
        .iter()
        .flatten()
        .flat_map(|c| c.source_pages.iter())
        .map(|r| (r, AssetKind::Scheme))
        .chain(
            question
                .decisions
                .iter()
                .flatten()
                .flat_map(|d| d.evidence.iter())
                .map(|r| (r, AssetKind::Work)),
        );
    for (reference, role) in references {
        cited_page(
            reference,
            role,
            &by_asset,
            any_malformed_key,
            assets,
            errors,
        );
    }
}

fn cited_page(
    reference: &PageRef,
    role: AssetKind,
    by_asset: &HashMap<Uuid, &Selection<'_>>,
    any_malformed_key: bool,
    assets: Option<&HashMap<Uuid, &Asset>>,
    errors: &mut Vec<ValidationError>,
) {
    let PageRef { page, at, citation } = *reference;
    let selected = match by_asset.get(&page.asset) {
        Some(selection) => {
            let found = selection.pages.iter().any(|p| p.number == page.page);
            if !found && !selection.all_pages_valid {
                return; // The page may be the selection's malformed item, reported already.
            }
            found
        }
        None if any_malformed_key => return, // The asset may be the malformed key, reported already.
        None => false,
    };
    if !selected {
        errors.push(ValidationError::new(
            ErrorCode::PageNotSelected,
            citation.pointer(),
            at,
            format!(
                "page {} of asset {} is not selected in this question's pageSelections",
                page.page, page.asset
            ),
        ));
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
        errors.push(ValidationError::new(
            ErrorCode::AssetRoleMismatch,
            citation.pointer(),
            at,
            format!(
                "{what}, but asset {} is a {} asset",
                page.asset,
                asset.kind.as_str()
            ),
        ));
    }
}

fn coverage(
    submission: &Submission<'_>,
    questions: &[Question<'_>],
    errors: &mut Vec<ValidationError>,
) {
    if let Some(declared) = &submission.coverage_labels {
        let labels: Option<Vec<&str>> =
            questions.iter().map(|q| q.label.map(|l| l.value)).collect();
        if let Some(labels) = labels {
            if labels != declared.value {
                errors.push(ValidationError::new(
                    ErrorCode::CoverageMismatch,
                    pointer(&[Key("coverage"), Key("questionLabels")]),
                    declared.at,
                    format!(
                        "coverage.questionLabels is {} but the questions are labelled {}, in that order",
                        list(&declared.value),
                        list(&labels)
                    ),
                ));
            }
        }
    }
    if let Some(total) = submission.coverage_total {
        let counts: Option<Vec<usize>> = questions
            .iter()
            .map(|q| q.criteria.as_ref().map(Vec::len))
            .collect();
        if let Some(counts) = counts {
            let criteria: usize = counts.iter().sum();
            if criteria as f64 != total.value {
                errors.push(ValidationError::new(
                    ErrorCode::CoverageMismatch,
                    pointer(&[Key("coverage"), Key("totalMarks")]),
                    total.at,
                    format!(
                        "coverage.totalMarks is {} but the questions hold {criteria} one-mark criteria",
                        total.value
                    ),
                ));
            }
        }
    }
}

/// `["1a", "1b"]`, shortened past 12 items.
fn list(labels: &[&str]) -> String {
    let shown: Vec<String> = labels.iter().take(12).map(|l| format!("{l:?}")).collect();
    let more = if labels.len() > 12 {
        format!(", … ({} in all)", labels.len())
    } else {
        String::new()
    };
    format!("[{}{more}]", shown.join(", "))
}
