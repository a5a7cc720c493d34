//! Scoring, exactly as the import contract's section 3: effective outcomes in dependency order,
//! review flags, and score ranges per part, per question and in total. It runs on valid documents
//! only, so every field it reads is present.

use crate::error::FlagCode;
use crate::hash::HashMap;
use crate::outcome::{
    CriterionReport, Decision, PartReport, QuestionReport, Report, ReviewFlag, Score, Status,
};
use crate::pointer::{Seg, pointer};
use crate::rules::{CheckResult, ConditionMode};
use crate::submission::{Check, Criterion, DecisionRecord, Part, Question, Submission};

/// Scores a valid submission; `orders` holds each question's criteria in dependency order.
pub(crate) fn score(
    submission: Submission<'_>,
    orders: &[Vec<usize>],
    assets_checked: bool,
) -> Report {
    let reports = submission
        .questions()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(q, node)| {
            score_question(
                q,
                Question::new(node),
                orders.get(q).map_or(&[][..], Vec::as_slice),
            )
        })
        .collect();
    Report::new(assets_checked, reports)
}

/// A flag raised while scoring one criterion.
struct Raised {
    code: FlagCode,
    path: String,
    message: String,
}

fn score_question(q: usize, question: Question<'_>, order: &[usize]) -> QuestionReport {
    // A valid document has at most 100 criteria per question: plain lists are fine here.
    let criteria: Vec<Criterion<'_>> = question
        .criteria()
        .into_iter()
        .flatten()
        .map(Criterion::new)
        .collect();
    let decisions: Vec<DecisionRecord<'_>> = question
        .decisions()
        .into_iter()
        .flatten()
        .map(DecisionRecord::new)
        .collect();
    let mut index_of: HashMap<&str, usize> =
        HashMap::with_capacity_and_hasher(criteria.len(), Default::default());
    for (c, criterion) in criteria.iter().enumerate() {
        if let Some(id) = criterion.id() {
            index_of.entry(id.value).or_insert(c);
        }
    }
    let mut decision_of: Vec<Option<(usize, DecisionRecord<'_>)>> = vec![None; criteria.len()];
    for (d, decision) in decisions.iter().enumerate() {
        if let Some(&c) = decision
            .criterion_id()
            .and_then(|id| index_of.get(id.value))
        {
            decision_of[c].get_or_insert((d, *decision));
        }
    }

    let mut effective: Vec<Decision> = vec![Decision::Uncertain; criteria.len()];
    let mut raised: Vec<Vec<Raised>> = (0..criteria.len()).map(|_| Vec::new()).collect();
    for &c in order {
        let Some((d, decision)) = decision_of[c] else {
            continue;
        };
        let submitted = decision.outcome().unwrap_or(Decision::Uncertain);
        let (outcome, flags) = effective_outcome(
            q,
            c,
            criteria[c],
            d,
            decision,
            submitted,
            &index_of,
            &effective,
        );
        effective[c] = outcome;
        raised[c] = flags;
    }

    let mut score = Score {
        awarded: 0,
        possible: 0,
        max: 0,
    };
    let mut part_scores: HashMap<&str, Score> = HashMap::default();
    let mut reports = Vec::with_capacity(criteria.len());
    let mut review_flags = Vec::new();
    for (c, criterion) in criteria.iter().enumerate() {
        let id = criterion.id().map_or("", |id| id.value);
        let outcome = effective[c];
        let add = |s: &mut Score| {
            s.max += 1;
            s.awarded += u32::from(outcome == Decision::Awarded);
            s.possible += u32::from(outcome != Decision::Withheld);
        };
        add(&mut score);
        if let Some(part) = criterion.part_id() {
            add(part_scores.entry(part.value).or_default());
        }
        let submitted = decision_of[c]
            .and_then(|(_, d)| d.outcome())
            .unwrap_or(Decision::Uncertain);
        reports.push(CriterionReport {
            id: id.to_owned(),
            code: criterion.code().unwrap_or_default().to_owned(),
            submitted,
            effective: outcome,
            flags: raised[c].iter().map(|r| r.code).collect(),
        });
        for flag in std::mem::take(&mut raised[c]) {
            review_flags.push(ReviewFlag {
                code: flag.code,
                criterion_id: Some(id.to_owned()),
                path: flag.path,
                message: flag.message,
            });
        }
    }

    if let Some(reported) = question.reported_awarded() {
        if reported != f64::from(score.awarded) {
            review_flags.push(ReviewFlag {
                code: FlagCode::ReportedScoreMismatch,
                criterion_id: None,
                path: pointer(&[Seg::Key("questions"), Seg::Index(q), Seg::Key("reportedScore"), Seg::Key("awarded")]),
                message: format!(
                    "reportedScore.awarded is {reported} but the computed awarded score is {}; the computed score is what counts",
                    score.awarded
                ),
            });
        }
    }
    if question.complete() == Some(true) && !review_flags.is_empty() {
        review_flags.push(ReviewFlag {
            code: FlagCode::CompletionClaimOverridden,
            criterion_id: None,
            path: pointer(&[Seg::Key("questions"), Seg::Index(q), Seg::Key("complete")]),
            message: format!(
                "the submission marks the question complete, but it has {} review flag{}; its status is needs_review",
                review_flags.len(),
                if review_flags.len() == 1 { "" } else { "s" }
            ),
        });
    }

    let parts = question
        .parts()
        .into_iter()
        .flatten()
        .filter_map(|part| Part::new(part).id())
        .map(|id| PartReport {
            id: id.value.to_owned(),
            score: part_scores.get(id.value).copied().unwrap_or_default(),
        })
        .collect();
    QuestionReport {
        label: question.label().map_or("", |l| l.value).to_owned(),
        status: if review_flags.is_empty() {
            Status::Completed
        } else {
            Status::NeedsReview
        },
        score,
        parts,
        criteria: reports,
        review_flags,
    }
}

/// Steps 1–4 of the contract for one criterion, given its dependencies' effective outcomes.
#[allow(clippy::too_many_arguments)]
fn effective_outcome(
    q: usize,
    c: usize,
    criterion: Criterion<'_>,
    d: usize,
    decision: DecisionRecord<'_>,
    submitted: Decision,
    index_of: &HashMap<&str, usize>,
    effective: &[Decision],
) -> (Decision, Vec<Raised>) {
    let mut flags = Vec::new();
    let decision_path = |last: &'static str| {
        pointer(&[
            Seg::Key("questions"),
            Seg::Index(q),
            Seg::Key("decisions"),
            Seg::Index(d),
            Seg::Key(last),
        ])
    };
    // 1. The submitted outcome.
    let mut outcome = submitted;
    // 2. Conditions.
    if let (Some(count), Some(checks)) = (criterion.conditions(), decision.checks()) {
        if count > 0 {
            let results = checks.value.filter_map(|check| Check::new(check).result());
            let mode = criterion.condition_mode().unwrap_or(ConditionMode::All);
            let verdict = verdict(mode, results);
            let mode_name = if mode == ConditionMode::All {
                "all"
            } else {
                "any"
            };
            let change = match (submitted, verdict) {
                (Decision::Awarded, CheckResult::NotMet) => Some((
                    FlagCode::ConditionConflict,
                    format!(
                        "awarded, but its conditions ({mode_name}) are not met; the mark becomes uncertain"
                    ),
                )),
                (Decision::Awarded, CheckResult::Uncertain) => Some((
                    FlagCode::ConditionUncertain,
                    format!(
                        "awarded, but whether its conditions ({mode_name}) are met is uncertain; the mark becomes uncertain"
                    ),
                )),
                (Decision::Withheld, CheckResult::Met) => Some((
                    FlagCode::ConditionConflict,
                    format!(
                        "withheld, but its conditions ({mode_name}) are met; the mark becomes uncertain"
                    ),
                )),
                _ => None,
            };
            if let Some((code, message)) = change {
                outcome = Decision::Uncertain;
                flags.push(Raised {
                    code,
                    path: decision_path("conditionChecks"),
                    message,
                });
            }
        }
    }
    // 3. Dependencies.
    let mut withheld = Vec::new();
    let mut uncertain = Vec::new();
    for (_, dependency) in criterion.depends_on() {
        let Some(&target) = index_of.get(dependency.value) else {
            continue;
        };
        match effective[target] {
            Decision::Withheld => withheld.push(format!("{:?}", dependency.value)),
            Decision::Uncertain => uncertain.push(format!("{:?}", dependency.value)),
            Decision::Awarded => {}
        }
    }
    let deps_path = || {
        pointer(&[
            Seg::Key("questions"),
            Seg::Index(q),
            Seg::Key("rubric"),
            Seg::Key("criteria"),
            Seg::Index(c),
            Seg::Key("dependsOn"),
        ])
    };
    if !withheld.is_empty() {
        if outcome != Decision::Withheld {
            flags.push(Raised {
                code: FlagCode::DependencyWithheld,
                path: deps_path(),
                message: format!(
                    "depends on {}, effectively withheld; the mark is withheld",
                    withheld.join(" and ")
                ),
            });
        }
        outcome = Decision::Withheld;
    } else if !uncertain.is_empty() && outcome == Decision::Awarded {
        outcome = Decision::Uncertain;
        flags.push(Raised {
            code: FlagCode::DependencyUncertain,
            path: deps_path(),
            message: format!(
                "depends on {}, effectively uncertain; the mark becomes uncertain",
                uncertain.join(" and ")
            ),
        });
    }
    // 4. A submitted uncertain stays visible.
    if submitted == Decision::Uncertain {
        flags.push(Raised {
            code: FlagCode::UncertainDecision,
            path: decision_path("outcome"),
            message: String::from(
                "the marker was not sure: the decision was submitted as uncertain",
            ),
        });
    }
    (outcome, flags)
}

/// Combines condition check results: `all` needs every check met, `any` needs one.
fn verdict(mode: ConditionMode, results: impl Iterator<Item = CheckResult>) -> CheckResult {
    let (mut met, mut not_met, mut uncertain) = (false, false, false);
    for result in results {
        match result {
            CheckResult::Met => met = true,
            CheckResult::NotMet => not_met = true,
            CheckResult::Uncertain => uncertain = true,
        }
    }
    match mode {
        ConditionMode::All if not_met => CheckResult::NotMet,
        ConditionMode::All if uncertain => CheckResult::Uncertain,
        ConditionMode::All => CheckResult::Met,
        ConditionMode::Any if met => CheckResult::Met,
        ConditionMode::Any if uncertain => CheckResult::Uncertain,
        ConditionMode::Any => CheckResult::NotMet,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use CheckResult::{Met, NotMet, Uncertain};

    #[test]
    fn verdicts() {
        let all = |r: &[CheckResult]| verdict(ConditionMode::All, r.iter().copied());
        let any = |r: &[CheckResult]| verdict(ConditionMode::Any, r.iter().copied());
        assert_eq!(all(&[Met, Met]), Met);
        assert_eq!(all(&[Met, Uncertain]), Uncertain);
        assert_eq!(all(&[Uncertain, NotMet]), NotMet);
        assert_eq!(any(&[NotMet, Met]), Met);
        assert_eq!(any(&[NotMet, Uncertain]), Uncertain);
        assert_eq!(any(&[NotMet, NotMet]), NotMet);
    }
}
