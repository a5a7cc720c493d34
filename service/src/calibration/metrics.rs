//! The figures calibration reports, computed from pairs of decisions: what the trusted marker
//! decided and what the configured marker decided, criterion by criterion. Pure: no I/O.
//!
//! A decision counts as an award when its *effective* outcome (after the engine applied the
//! criterion's dependencies) is `awarded`; `withheld` and `uncertain` both count as not awarded,
//! since neither gives a mark without a teacher.

use std::collections::BTreeMap;

use serde::Serialize;

/// One criterion of one reference script, as both markers decided it.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// Which script, question and criterion: `<script>/<question label>/<criterion id>`.
    pub script: String,
    /// The question's label.
    pub question: String,
    /// The criterion's id.
    pub criterion: String,
    /// The criterion's code (`M1`, `dA1`, `B1ft`…).
    pub code: String,
    /// The paper the script answers: criteria are grouped across the scripts of one paper.
    pub paper: String,
    /// Whether the trusted decision awards the mark.
    pub trusted_awarded: bool,
    /// What the marker decided; `None` when its question failed.
    pub marked: Option<Marked>,
}

/// The marker's decision on one criterion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Marked {
    /// Whether the effective outcome is `awarded`.
    pub awarded: bool,
    /// Whether the submitted outcome is `uncertain` (left to a teacher).
    pub uncertain: bool,
    /// For an award: whether its evidence box meets a box of the trusted decision on the same
    /// page; `None` when not an award.
    pub box_hits: Option<bool>,
    /// For an award: whether its evidence cites a page indexed as clean paper, a blank page of the
    /// script or a mark scheme (never the student's writing).
    pub on_non_work_page: bool,
}

/// The code family of a criterion code: `M`, `A` or `B` (a `d` prefix and `ft`/`*` suffixes set
/// aside); `other` for anything else.
pub fn family(code: &str) -> &'static str {
    match code.strip_prefix('d').unwrap_or(code).chars().next() {
        Some('M') => "M",
        Some('A') => "A",
        Some('B') => "B",
        _ => "other",
    }
}

/// Agreement figures over a set of pairs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    /// How many criteria.
    pub criteria: usize,
    /// Share on which both markers award, or both do not.
    pub agreement: f64,
    /// Cohen's kappa, awarded against not awarded; `None` when chance agreement is total (both
    /// markers gave one answer throughout), where kappa is undefined.
    pub kappa: Option<f64>,
    /// Awards by the marker where the trusted decision does not award.
    pub false_awards: usize,
    /// Trusted awards the marker did not make.
    pub missed_awards: usize,
    /// Share the marker left `uncertain` (a failed question's criteria count as uncertain).
    pub uncertain: f64,
    /// The marker's awards.
    pub awards: usize,
    /// Share of the marker's awards whose box misses every box of the trusted decision; `None`
    /// with no award.
    pub box_misses: Option<f64>,
}

impl Figures {
    /// The figures of `pairs`; `None` for no pairs.
    pub fn of<'a>(pairs: impl IntoIterator<Item = &'a Pair>) -> Option<Figures> {
        let (mut n, mut agree, mut model_yes, mut trusted_yes) = (0usize, 0usize, 0usize, 0usize);
        let (mut false_awards, mut missed, mut uncertain, mut misses) = (0, 0, 0, 0usize);
        for pair in pairs {
            n += 1;
            let awarded = pair.marked.is_some_and(|m| m.awarded);
            let left = pair.marked.is_none_or(|m| m.uncertain);
            if awarded == pair.trusted_awarded {
                agree += 1;
            }
            model_yes += usize::from(awarded);
            trusted_yes += usize::from(pair.trusted_awarded);
            false_awards += usize::from(awarded && !pair.trusted_awarded);
            missed += usize::from(!awarded && pair.trusted_awarded);
            uncertain += usize::from(left);
            misses += usize::from(pair.marked.and_then(|m| m.box_hits) == Some(false));
        }
        if n == 0 {
            return None;
        }
        let total = n as f64;
        let observed = agree as f64 / total;
        let (pm, pt) = (model_yes as f64 / total, trusted_yes as f64 / total);
        let chance = pm * pt + (1.0 - pm) * (1.0 - pt);
        let kappa = (chance < 1.0 - 1e-12).then(|| (observed - chance) / (1.0 - chance));
        Some(Figures {
            criteria: n,
            agreement: observed,
            kappa,
            false_awards,
            missed_awards: missed,
            uncertain: uncertain as f64 / total,
            awards: model_yes,
            box_misses: (model_yes > 0).then(|| misses as f64 / model_yes as f64),
        })
    }
}

/// One question's marks by both markers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionMarks {
    /// `<script>/<label>`.
    pub question: String,
    /// Marks the trusted decisions give.
    pub trusted: u32,
    /// Marks the marker gives (0 for a failed question).
    pub marked: u32,
    /// Whether the marker's question failed.
    pub failed: bool,
    /// Why, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// An award that should never have been made, named for a person to look at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Named {
    /// The script.
    pub script: String,
    /// The question's label.
    pub question: String,
    /// The criterion's id.
    pub criterion: String,
    /// Its code.
    pub code: String,
}

impl Named {
    fn of(pair: &Pair) -> Named {
        Named {
            script: pair.script.clone(),
            question: pair.question.clone(),
            criterion: pair.criterion.clone(),
            code: pair.code.clone(),
        }
    }
}

/// Everything calibration reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Over every criterion.
    pub overall: Option<Figures>,
    /// By code family: `M`, `A`, `B` (and `other` if a code is none of them).
    pub families: BTreeMap<String, Figures>,
    /// By script: how the marker fared on each kind of scan (its box misses above all).
    pub by_script: BTreeMap<String, Figures>,
    /// By criterion of each paper, across the scripts answering it: key `<paper>/<label>/<id>`.
    pub criteria: BTreeMap<String, Figures>,
    /// Questions compared.
    pub questions: usize,
    /// Questions the marker failed to mark.
    pub failed_questions: usize,
    /// Mean absolute difference between the two markers' marks per question; `None` with no
    /// question.
    pub mean_absolute_mark_difference: Option<f64>,
    /// Each question's marks.
    pub question_marks: Vec<QuestionMarks>,
    /// The marker's awards where the trusted decision does not award.
    pub false_awards: Vec<Named>,
    /// The marker's awards citing a page that is not the student's writing: must be none.
    pub non_work_page_awards: Vec<Named>,
}

impl Report {
    /// The report over `pairs` and the questions' marks.
    pub fn new(pairs: &[Pair], question_marks: Vec<QuestionMarks>) -> Report {
        let mut families: BTreeMap<&str, Vec<&Pair>> = BTreeMap::new();
        let mut scripts: BTreeMap<String, Vec<&Pair>> = BTreeMap::new();
        let mut criteria: BTreeMap<String, Vec<&Pair>> = BTreeMap::new();
        for pair in pairs {
            families.entry(family(&pair.code)).or_default().push(pair);
            scripts.entry(pair.script.clone()).or_default().push(pair);
            criteria
                .entry(format!(
                    "{}/{}/{}",
                    pair.paper, pair.question, pair.criterion
                ))
                .or_default()
                .push(pair);
        }
        let grouped = |groups: BTreeMap<String, Vec<&Pair>>| {
            groups
                .into_iter()
                .filter_map(|(key, pairs)| Figures::of(pairs).map(|f| (key, f)))
                .collect::<BTreeMap<_, _>>()
        };
        let differences: Vec<f64> = question_marks
            .iter()
            .map(|q| f64::from(q.trusted.abs_diff(q.marked)))
            .collect();
        let awarded = |p: &&Pair| p.marked.is_some_and(|m| m.awarded);
        Report {
            overall: Figures::of(pairs),
            families: grouped(
                families
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect(),
            ),
            by_script: grouped(scripts),
            criteria: grouped(criteria),
            questions: question_marks.len(),
            failed_questions: question_marks.iter().filter(|q| q.failed).count(),
            mean_absolute_mark_difference: (!differences.is_empty())
                .then(|| differences.iter().sum::<f64>() / differences.len() as f64),
            question_marks,
            false_awards: pairs
                .iter()
                .filter(|p| awarded(p) && !p.trusted_awarded)
                .map(Named::of)
                .collect(),
            non_work_page_awards: pairs
                .iter()
                .filter(|p| awarded(p) && p.marked.is_some_and(|m| m.on_non_work_page))
                .map(Named::of)
                .collect(),
        }
    }

    /// Why this report fails the bar (`min_agreement` over every criterion, and no award on a
    /// page that is not the student's writing): one sentence per reason, empty when it passes.
    pub fn failures(&self, min_agreement: f64) -> Vec<String> {
        let mut failures = Vec::new();
        match &self.overall {
            Some(f) if f.agreement + 1e-12 < min_agreement => failures.push(format!(
                "agreement {:.3} is below the required {min_agreement:.3}",
                f.agreement
            )),
            Some(_) => {}
            None => failures.push("the reference set has no criterion to compare".to_owned()),
        }
        if !self.non_work_page_awards.is_empty() {
            failures.push(format!(
                "{} award(s) cite a clean, blank or mark-scheme page",
                self.non_work_page_awards.len()
            ));
        }
        failures
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pair(code: &str, trusted: bool, marked: Option<Marked>) -> Pair {
        Pair {
            script: "s".into(),
            question: "1".into(),
            criterion: format!("{code}-{trusted}"),
            code: code.into(),
            paper: "p".into(),
            trusted_awarded: trusted,
            marked,
        }
    }

    fn award(hits: bool) -> Option<Marked> {
        Some(Marked {
            awarded: true,
            uncertain: false,
            box_hits: Some(hits),
            on_non_work_page: false,
        })
    }

    fn withhold() -> Option<Marked> {
        Some(Marked {
            awarded: false,
            uncertain: false,
            box_hits: None,
            on_non_work_page: false,
        })
    }

    fn unsure() -> Option<Marked> {
        Some(Marked {
            awarded: false,
            uncertain: true,
            box_hits: None,
            on_non_work_page: false,
        })
    }

    #[test]
    fn families_set_prefixes_and_suffixes_aside() {
        assert_eq!(family("M1"), "M");
        assert_eq!(family("dM1"), "M");
        assert_eq!(family("A1ft"), "A");
        assert_eq!(family("dA1"), "A");
        assert_eq!(family("B1*"), "B");
        assert_eq!(family("E1"), "other");
        assert_eq!(family(""), "other");
    }

    #[test]
    fn figures_by_hand() {
        // 2 agreed awards (one boxed wrong), 1 false award, 1 missed (uncertain), 1 agreed
        // withheld, 1 failed question's criterion that the trusted marker awards.
        let pairs = [
            pair("M1", true, award(true)),
            pair("A1", true, award(false)),
            pair("A1", false, award(true)),
            pair("B1", true, unsure()),
            pair("M1", false, withhold()),
            pair("B1", true, None),
        ];
        let f = Figures::of(&pairs).expect("figures");
        assert_eq!(f.criteria, 6);
        assert!((f.agreement - 3.0 / 6.0).abs() < 1e-12);
        // Marker awards 3/6, trusted 4/6: chance = 0.5·(2/3) + 0.5·(1/3) = 0.5, kappa 0.
        assert!(f.kappa.expect("kappa").abs() < 1e-12);
        assert_eq!(f.false_awards, 1);
        assert_eq!(f.missed_awards, 2);
        assert!((f.uncertain - 2.0 / 6.0).abs() < 1e-12);
        assert_eq!(f.awards, 3);
        assert!((f.box_misses.expect("misses") - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn perfect_agreement_has_kappa_one_and_one_sided_agreement_none() {
        let pairs = [pair("M1", true, award(true)), pair("A1", false, withhold())];
        let f = Figures::of(&pairs).expect("figures");
        assert_eq!(f.agreement, 1.0);
        assert_eq!(f.kappa, Some(1.0));
        let all_awarded = [pair("M1", true, award(true)), pair("A1", true, award(true))];
        let f = Figures::of(&all_awarded).expect("figures");
        assert_eq!(f.agreement, 1.0);
        assert_eq!(
            f.kappa, None,
            "undefined when both give one answer throughout"
        );
        assert_eq!(Figures::of(&[]), None);
    }

    #[test]
    fn the_report_groups_and_names_what_must_be_looked_at() {
        let mut on_scheme = award(true);
        if let Some(m) = on_scheme.as_mut() {
            m.on_non_work_page = true;
        }
        let pairs = [
            pair("M1", true, award(true)),
            pair("dA1", false, award(true)),
            pair("B1", true, on_scheme),
        ];
        let marks = vec![
            QuestionMarks {
                question: "s/1".into(),
                trusted: 2,
                marked: 3,
                failed: false,
                error: None,
            },
            QuestionMarks {
                question: "s/2".into(),
                trusted: 4,
                marked: 0,
                failed: true,
                error: Some("the provider refused the token".into()),
            },
        ];
        let report = Report::new(&pairs, marks);
        assert_eq!(report.families.keys().collect::<Vec<_>>(), ["A", "B", "M"]);
        assert_eq!(report.criteria.len(), 3);
        assert_eq!(report.questions, 2);
        assert_eq!(report.failed_questions, 1);
        assert_eq!(report.mean_absolute_mark_difference, Some(2.5));
        assert_eq!(report.false_awards.len(), 1);
        assert_eq!(report.false_awards[0].code, "dA1");
        assert_eq!(report.non_work_page_awards.len(), 1);
        let failures = report.failures(0.5);
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(failures[0].contains("clean, blank or mark-scheme page"));
        assert_eq!(report.failures(0.9).len(), 2);
    }

    #[test]
    fn a_report_with_nothing_to_compare_fails() {
        let report = Report::new(&[], Vec::new());
        assert_eq!(report.overall, None);
        assert_eq!(report.mean_absolute_mark_difference, None);
        assert_eq!(report.failures(0.0).len(), 1);
    }

    fn any_marked() -> impl Strategy<Value = Option<Marked>> {
        prop_oneof![
            Just(None),
            (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(awarded, uncertain, hits)| {
                Some(Marked {
                    awarded,
                    uncertain: uncertain && !awarded,
                    box_hits: awarded.then_some(hits),
                    on_non_work_page: false,
                })
            }),
        ]
    }

    proptest! {
        #[test]
        fn figures_stay_in_range(
            decisions in proptest::collection::vec((any::<bool>(), any_marked()), 1..60)
        ) {
            let pairs: Vec<Pair> = decisions
                .into_iter()
                .map(|(trusted, marked)| pair("M1", trusted, marked))
                .collect();
            let f = Figures::of(&pairs).expect("figures");
            prop_assert!((0.0..=1.0).contains(&f.agreement));
            prop_assert!((0.0..=1.0).contains(&f.uncertain));
            if let Some(k) = f.kappa {
                prop_assert!((-1.0 - 1e-9..=1.0 + 1e-9).contains(&k));
            }
            if let Some(m) = f.box_misses {
                prop_assert!((0.0..=1.0).contains(&m));
            }
            prop_assert_eq!(
                f.criteria,
                ((f.agreement * f.criteria as f64).round() as usize) + f.false_awards + f.missed_awards
            );
        }
    }
}
