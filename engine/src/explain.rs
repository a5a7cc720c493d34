//! A plain-text report of an outcome for people: per question, each criterion's submitted and
//! effective outcome and why they differ, what the criterion asks for and what the marker saw,
//! the score ranges, and every flag or error.

use std::fmt::Write;

use uuid::Uuid;

use crate::hash::HashMap;
use crate::outcome::{Outcome, QuestionReport, Rejection, Report, ReviewFlag, Score, Status};
use crate::rules::CheckResult;
use crate::submission::{Check, Criterion, DecisionRecord, Question, Submission};

/// The most characters of submitted text (a requirement, a reason, a condition, a note, a quote)
/// shown on one line of the report. Longer text is cut to one character less and ends with `…`.
pub const EXPLAIN_TEXT_CHARS: usize = 100;

/// Renders the outcome of validating `document` as a report for people.
///
/// `outcome` is what [`crate::validate`] returned for these bytes. An invalid outcome is reported
/// as its errors. For a valid one the report lists, per question, each criterion's submitted and
/// effective outcome, and beneath it, read from the document: the criterion's requirement, the
/// marker's reason, each condition whose check is `not_met` or `uncertain` (with the check's note),
/// the evidence quotes with their pages, then the criterion's review flags. Each of those texts is
/// put on one line: runs of whitespace and control characters become one space, and text longer
/// than [`EXPLAIN_TEXT_CHARS`] characters is cut and ends with `…`. Details that cannot be read
/// from `document` (bytes that are not the validated document) are left out.
pub fn explain(document: &[u8], outcome: &Outcome) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = match outcome {
        Outcome::Invalid(rejection) => explain_invalid(&mut out, rejection),
        Outcome::Valid(report) => match crate::json::parse(document) {
            Ok(parsed) => explain_valid(&mut out, report, Some(Submission::new(parsed.root()))),
            Err(_) => explain_valid(&mut out, report, None),
        },
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

fn explain_valid(
    out: &mut String,
    report: &Report,
    submission: Option<Submission<'_>>,
) -> std::fmt::Result {
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
    let mut questions = submission.and_then(Submission::questions);
    for question in &report.questions {
        let details = questions
            .as_mut()
            .and_then(Iterator::next)
            .map(|node| Details::new(Question::new(node)));
        explain_question(out, question, details.as_ref())?;
    }
    Ok(())
}

fn explain_question(
    out: &mut String,
    question: &QuestionReport,
    details: Option<&Details<'_>>,
) -> std::fmt::Result {
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
        let indent = " ".repeat(width + 6);
        if let Some(details) = details {
            details.write(out, &indent, &criterion.id)?;
        }
        let own = |f: &&ReviewFlag| f.criterion_id.as_deref() == Some(criterion.id.as_str());
        for flag in question.review_flags.iter().filter(own) {
            writeln!(out, "{indent}{}: {}", flag.code, flag.message)?;
        }
    }
    for flag in question
        .review_flags
        .iter()
        .filter(|f| f.criterion_id.is_none())
    {
        writeln!(out, "  {}: {}", flag.code, flag.message)?;
    }
    Ok(())
}

/// What the document says about one question's criteria and decisions.
struct Details<'d> {
    criteria: HashMap<&'d str, Criterion<'d>>,
    decisions: HashMap<&'d str, DecisionRecord<'d>>,
    /// Whether the decisions' evidence cites more than one asset: pages then name their asset.
    several_assets: bool,
}

impl<'d> Details<'d> {
    fn new(question: Question<'d>) -> Self {
        let mut criteria = HashMap::default();
        for node in question.criteria().into_iter().flatten() {
            let criterion = Criterion::new(node);
            if let Some(id) = criterion.id() {
                criteria.entry(id.value).or_insert(criterion);
            }
        }
        let mut decisions = HashMap::default();
        let mut first_asset: Option<Uuid> = None;
        let mut several_assets = false;
        for node in question.decisions().into_iter().flatten() {
            let decision = DecisionRecord::new(node);
            if let Some(id) = decision.criterion_id() {
                decisions.entry(id.value).or_insert(decision);
            }
            for page in decision.quotes().filter_map(|(page, _)| page) {
                match first_asset {
                    None => first_asset = Some(page.asset),
                    Some(asset) => several_assets |= asset != page.asset,
                }
            }
        }
        Details {
            criteria,
            decisions,
            several_assets,
        }
    }

    /// Writes the requirement, reason, conditions not met or uncertain, and evidence of
    /// criterion `id`, each line starting with `indent`.
    fn write(&self, out: &mut String, indent: &str, id: &str) -> std::fmt::Result {
        let criterion = self.criteria.get(id).copied();
        if let Some(requirement) = criterion.and_then(Criterion::requirement) {
            writeln!(out, "{indent}requirement: {}", one_line(requirement))?;
        }
        let Some(decision) = self.decisions.get(id).copied() else {
            return Ok(());
        };
        if let Some(reason) = decision.reason() {
            writeln!(out, "{indent}reason: {}", one_line(reason))?;
        }
        if let Some(criterion) = criterion {
            let count = criterion.conditions().unwrap_or(0);
            let mut open: Vec<(usize, &str, Check<'_>)> = decision
                .checks()
                .map(|checks| checks.value)
                .into_iter()
                .flatten()
                .filter_map(|node| {
                    let check = Check::new(node);
                    let verdict = match check.result()? {
                        CheckResult::Met => return None,
                        CheckResult::NotMet => "not met",
                        CheckResult::Uncertain => "uncertain",
                    };
                    // A valid document's indices are below the number of conditions.
                    let index = check.index()?.value as usize;
                    Some((index, verdict, check))
                })
                .collect();
            open.sort_by_key(|&(index, _, _)| index);
            for (index, verdict, check) in open {
                let condition = criterion.condition(index).map(one_line).unwrap_or_default();
                writeln!(
                    out,
                    "{indent}condition {} of {count} {verdict}: {condition}",
                    index + 1
                )?;
                if let Some(note) = check.note() {
                    writeln!(out, "{indent}  note: {}", one_line(note))?;
                }
            }
        }
        for (page, quote) in decision.quotes() {
            let Some(quote) = quote else { continue };
            let at = match page {
                Some(page) if self.several_assets => {
                    let asset = page.asset.hyphenated().to_string();
                    let short = asset.get(..8).unwrap_or(&asset);
                    format!(", page {} of {short}", page.page)
                }
                Some(page) => format!(", page {}", page.page),
                None => String::new(),
            };
            writeln!(out, "{indent}evidence{at}: \"{}\"", one_line(quote))?;
        }
        Ok(())
    }
}

/// `text` on one line: runs of whitespace and control characters (line breaks, tabs, escape
/// codes, bidirectional overrides) become one space, leading and trailing ones are dropped, and
/// text longer than [`EXPLAIN_TEXT_CHARS`] characters keeps one character less and ends with `…`.
fn one_line(text: &str) -> String {
    let mut out = String::new();
    let mut chars = 0usize;
    let words = text.split(is_break).filter(|word| !word.is_empty());
    'words: for word in words {
        if chars > 0 {
            out.push(' ');
            chars += 1;
        }
        for c in word.chars() {
            if chars > EXPLAIN_TEXT_CHARS {
                break 'words;
            }
            out.push(c);
            chars += 1;
        }
    }
    if chars > EXPLAIN_TEXT_CHARS {
        let keep = out
            .char_indices()
            .nth(EXPLAIN_TEXT_CHARS - 1)
            .map_or(out.len(), |(at, _)| at);
        out.truncate(keep);
        out.truncate(out.trim_end().len());
        out.push('…');
    }
    out
}

/// Whitespace, control characters and the invisible characters that reorder or hide text.
fn is_break(c: char) -> bool {
    c.is_whitespace()
        || c.is_control()
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
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

#[cfg(test)]
mod tests {
    use super::{EXPLAIN_TEXT_CHARS, one_line};

    #[test]
    fn text_is_put_on_one_line() {
        assert_eq!(one_line("  a\n\tb\r\n  c  "), "a b c");
        assert_eq!(one_line("x\u{1b}[31my"), "x [31my");
        assert_eq!(one_line("left\u{202E}right"), "left right");
        assert_eq!(one_line("\n \t"), "");
        assert_eq!(one_line("dy/dx = 3x²"), "dy/dx = 3x²");
    }

    #[test]
    fn long_text_is_cut_with_an_ellipsis() {
        let exact = "é".repeat(EXPLAIN_TEXT_CHARS);
        assert_eq!(one_line(&exact), exact);
        let long = "é".repeat(EXPLAIN_TEXT_CHARS + 1);
        let cut = one_line(&long);
        assert_eq!(cut.chars().count(), EXPLAIN_TEXT_CHARS);
        assert!(cut.ends_with("é…"), "{cut}");
        // A cut that falls after a space does not leave the space before the ellipsis.
        let words = format!("{} {}", "a".repeat(EXPLAIN_TEXT_CHARS - 2), "b".repeat(50));
        assert_eq!(
            one_line(&words),
            format!("{}…", "a".repeat(EXPLAIN_TEXT_CHARS - 2))
        );
        let spaced = format!("{}\n\n\n{}", "a".repeat(60), "b".repeat(60));
        let cut = one_line(&spaced);
        assert_eq!(cut.chars().count(), EXPLAIN_TEXT_CHARS);
        assert!(!cut.contains('\n'));
    }
}
