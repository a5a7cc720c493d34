//! A plain-text report of an outcome for people: per question, each criterion's submitted and
//! effective outcome and why they differ, the score ranges, and every flag or error.

use std::fmt::Write;

use crate::outcome::{Outcome, Rejection, Report, ReviewFlag, Score, Status};

/// Renders `outcome` as a human-readable report.
pub fn explain(outcome: &Outcome) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = match outcome {
        Outcome::Invalid(rejection) => explain_invalid(&mut out, rejection),
        Outcome::Valid(report) => explain_valid(&mut out, report),
    };
    out
}

fn explain_invalid(out: &mut String, rejection: &Rejection) -> std::fmt::Result {
    let n = rejection.errors.len();
    writeln!(
        out,
        "Invalid submission: {n} error{}{}.",
        if n == 1 { "" } else { "s" },
        if rejection.truncated {
            " shown (more were found and left out)"
        } else {
            ""
        }
    )?;
    for error in &rejection.errors {
        let path = if error.path.is_empty() {
            "(document)"
        } else {
            &error.path
        };
        writeln!(out, "  {} at {path}\n      {}", error.code, error.message)?;
    }
    Ok(())
}

fn explain_valid(out: &mut String, report: &Report) -> std::fmt::Result {
    writeln!(
        out,
        "Valid submission: {}; score {} ({}).",
        status(report.status),
        range(report.score),
        if report.assets_checked {
            "pages checked against the import's assets"
        } else {
            "pages not checked against assets: none were given"
        }
    )?;
    for question in &report.questions {
        writeln!(
            out,
            "\nQuestion {}: {}; score {}",
            question.label,
            status(question.status),
            range(question.score)
        )?;
        let parts: Vec<String> = question
            .parts
            .iter()
            .map(|p| format!("{} {}", p.id, range(p.score)))
            .collect();
        writeln!(out, "  Parts: {}", parts.join("; "))?;
        let width = question
            .criteria
            .iter()
            .map(|c| c.id.chars().count())
            .max()
            .unwrap_or(0);
        for criterion in &question.criteria {
            let change = if criterion.submitted == criterion.effective {
                criterion.effective.as_str().to_owned()
            } else {
                format!(
                    "{} -> {}",
                    criterion.submitted.as_str(),
                    criterion.effective.as_str()
                )
            };
            writeln!(
                out,
                "  {:<width$}  {:<5}  {change}",
                criterion.id, criterion.code
            )?;
            let own = |f: &&ReviewFlag| f.criterion_id.as_deref() == Some(criterion.id.as_str());
            for flag in question.review_flags.iter().filter(own) {
                writeln!(out, "  {:<width$}    {}: {}", "", flag.code, flag.message)?;
            }
        }
        for flag in question
            .review_flags
            .iter()
            .filter(|f| f.criterion_id.is_none())
        {
            writeln!(out, "  {}: {}", flag.code, flag.message)?;
        }
    }
    Ok(())
}

fn status(status: Status) -> &'static str {
    match status {
        Status::Completed => "completed",
        Status::NeedsReview => "needs review",
    }
}

/// `4–6 of 8`: awarded to possible, out of max.
fn range(score: Score) -> String {
    if score.awarded == score.possible {
        format!("{} of {}", score.awarded, score.max)
    } else {
        format!("{}–{} of {}", score.awarded, score.possible, score.max)
    }
}
