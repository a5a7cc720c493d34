//! Calibration's report: a table for people, JSON for scripts.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::metrics::{Figures, Named, Report};

/// What was calibrated.
#[derive(Debug, Clone)]
pub struct Header<'a> {
    /// `builtin`, `external` or `openai`.
    pub marker: &'a str,
    /// The model, for `openai`.
    pub model: Option<&'a str>,
    /// Scripts in the reference set.
    pub scripts: usize,
    /// The bar set with `--min-agreement`.
    pub min_agreement: f64,
}

/// The report as one JSON document: `marker`, `model`, `scripts`, `minAgreement`, `passed`,
/// `failures` and the figures (`overall`, `families`, `criteria`, `questions`…).
pub fn json(header: &Header<'_>, report: &Report, failures: &[String]) -> Value {
    let mut out = json!({
        "marker": header.marker,
        "model": header.model,
        "scripts": header.scripts,
        "minAgreement": header.min_agreement,
        "passed": failures.is_empty(),
        "failures": failures,
    });
    if let (Some(object), Ok(Value::Object(figures))) =
        (out.as_object_mut(), serde_json::to_value(report))
    {
        object.extend(figures);
    }
    out
}

fn count(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

fn share(value: f64) -> String {
    format!("{:.1}%", value * 100.0)
}

fn row(out: &mut String, name: &str, f: &Figures) {
    let kappa = f
        .kappa
        .map_or_else(|| "–".to_owned(), |k| format!("{k:.3}"));
    let misses = f.box_misses.map_or_else(|| "–".to_owned(), share);
    let _ = writeln!(
        out,
        "{name:<28} {:>8} {:>9.3} {kappa:>6} {:>12} {:>7} {:>9} {:>10}",
        f.criteria,
        f.agreement,
        f.false_awards,
        f.missed_awards,
        share(f.uncertain),
        misses
    );
}

fn heading(out: &mut String, first: &str) {
    let _ = writeln!(
        out,
        "{first:<28} {:>8} {:>9} {:>6} {:>12} {:>7} {:>9} {:>10}",
        "criteria", "agreement", "kappa", "false awards", "missed", "uncertain", "box misses"
    );
}

fn named(list: &[Named]) -> String {
    if list.is_empty() {
        return "none".to_owned();
    }
    list.iter()
        .map(|n| {
            format!(
                "{} question {} {} ({})",
                n.script, n.question, n.criterion, n.code
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The report as a table.
pub fn table(header: &Header<'_>, report: &Report, failures: &[String]) -> String {
    let mut out = String::new();
    let marker = match header.model {
        Some(model) => format!("{} marker (model {model})", header.marker),
        None => format!("{} marker", header.marker),
    };
    let criteria = report.overall.as_ref().map_or(0, |f| f.criteria);
    let _ = writeln!(
        out,
        "Calibration of the {marker}: {}, {}, {}\n",
        count(header.scripts, "script"),
        count(report.questions, "question"),
        if criteria == 1 {
            "1 criterion".to_owned()
        } else {
            format!("{criteria} criteria")
        }
    );
    heading(&mut out, "");
    if let Some(overall) = &report.overall {
        row(&mut out, "all", overall);
    }
    for (family, figures) in &report.families {
        row(&mut out, family, figures);
    }
    if report.by_script.len() > 1 {
        let _ = writeln!(out);
        heading(&mut out, "by script");
        for (script, figures) in &report.by_script {
            row(&mut out, script, figures);
        }
    }
    let mad = report
        .mean_absolute_mark_difference
        .map_or_else(|| "–".to_owned(), |d| format!("{d:.2}"));
    let _ = writeln!(
        out,
        "\nQuestion marks: mean absolute difference {mad} ({}, {} failed)",
        count(report.questions, "question"),
        report.failed_questions
    );
    for failed in report.question_marks.iter().filter(|q| q.failed) {
        let _ = writeln!(
            out,
            "Failed question {}: {}",
            failed.question,
            failed.error.as_deref().unwrap_or("no reason given")
        );
    }
    let _ = writeln!(out, "False awards: {}", named(&report.false_awards));
    let _ = writeln!(
        out,
        "Awards on clean, blank or mark-scheme pages: {}\n",
        named(&report.non_work_page_awards)
    );
    heading(&mut out, "by criterion");
    for (key, figures) in &report.criteria {
        row(&mut out, key, figures);
    }
    let _ = writeln!(out);
    if failures.is_empty() {
        let _ = writeln!(out, "Passed (least agreement {:.3}).", header.min_agreement);
    } else {
        for failure in failures {
            let _ = writeln!(out, "Failed: {failure}.");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::metrics::{Marked, Pair, QuestionMarks};
    use super::*;

    fn report() -> Report {
        let award = Some(Marked {
            awarded: true,
            uncertain: false,
            box_hits: Some(true),
            on_non_work_page: false,
        });
        let pair = |criterion: &str, code: &str, trusted: bool| Pair {
            script: "pure-a".into(),
            question: "1".into(),
            criterion: criterion.into(),
            code: code.into(),
            paper: "pure".into(),
            trusted_awarded: trusted,
            marked: award,
        };
        Report::new(
            &[pair("a1", "M1", true), pair("a2", "A1", false)],
            vec![QuestionMarks {
                question: "pure-a/1".into(),
                trusted: 1,
                marked: 2,
                failed: false,
                error: None,
            }],
        )
    }

    fn header() -> Header<'static> {
        Header {
            marker: "openai",
            model: Some("m"),
            scripts: 1,
            min_agreement: 0.9,
        }
    }

    #[test]
    fn the_table_names_the_false_award_and_the_failure() {
        let report = report();
        let failures = report.failures(0.9);
        let table = table(&header(), &report, &failures);
        insta::assert_snapshot!(table);
    }

    #[test]
    fn with_several_scripts_the_table_shows_each() {
        let pair = |script: &str, criterion: &str, hits: bool| Pair {
            script: script.into(),
            question: "1".into(),
            criterion: criterion.into(),
            code: "M1".into(),
            paper: "pure".into(),
            trusted_awarded: true,
            marked: Some(Marked {
                awarded: true,
                uncertain: false,
                box_hits: Some(hits),
                on_non_work_page: false,
            }),
        };
        let report = Report::new(
            &[
                pair("flatbed", "a1", true),
                pair("flatbed", "a2", true),
                pair("photo", "a1", true),
                pair("photo", "a2", false),
            ],
            Vec::new(),
        );
        let table = table(
            &Header {
                scripts: 2,
                ..header()
            },
            &report,
            &[],
        );
        insta::assert_snapshot!(table);
        assert_eq!(report.by_script["photo"].box_misses, Some(0.5));
        assert_eq!(report.by_script["flatbed"].box_misses, Some(0.0));
    }

    #[test]
    fn the_json_holds_the_figures_and_the_verdict() {
        let report = report();
        let failures = report.failures(0.9);
        let value = json(&header(), &report, &failures);
        assert_eq!(value["passed"], false);
        assert_eq!(value["marker"], "openai");
        assert_eq!(value["overall"]["criteria"], 2);
        assert_eq!(value["overall"]["falseAwards"], 1);
        assert_eq!(value["families"]["A"]["agreement"], 0.0);
        assert_eq!(value["byScript"]["pure-a"]["criteria"], 2);
        assert_eq!(value["byScript"]["pure-a"]["boxMisses"], 0.0);
        assert_eq!(value["falseAwards"][0]["criterion"], "a2");
        assert_eq!(value["meanAbsoluteMarkDifference"], 1.0);
        assert_eq!(value["failures"].as_array().map(Vec::len), Some(1));
    }
}
