//! What the class got and lost: per criterion, the share of the class awarded it; per question,
//! the mean, the spread and the share on full marks; and the criteria most often lost, each with
//! the answers that lost it.
//!
//! Only marked questions count (`completed` and `needs_review`), each by what it was awarded: a
//! question needing review counts its awarded marks, its uncertain criteria counted apart. Absent
//! students and questions not marked are left out, and so is a question on a page that was not
//! scanned (nothing of it was marked): each question says how many scripts it left out so.

use serde::Serialize;

use crate::marked::Outcome;

use super::class::ClassResults;
use super::markbook::{Cell, Sheet};

/// The item analysis of a class.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemAnalysis {
    /// The students with a script.
    pub scripts: usize,
    /// Each question, in paper order.
    pub questions: Vec<QuestionStats>,
    /// Each criterion, in paper and scheme order.
    pub criteria: Vec<CriterionStats>,
}

/// What the class made of a question.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionStats {
    /// The question's label.
    pub label: String,
    /// Its marks.
    pub max: i64,
    /// The scripts in which it is marked.
    pub marked: usize,
    /// The scripts left out because the question's page was not scanned for them.
    pub not_scanned: usize,
    /// The mean mark awarded, `None` when none is marked.
    pub mean: Option<f64>,
    /// The standard deviation of the marks awarded (over the marked scripts, not a sample).
    pub spread: Option<f64>,
    /// The lowest and highest marks awarded.
    pub lowest: Option<i64>,
    /// The highest.
    pub highest: Option<i64>,
    /// The scripts awarded full marks.
    pub full_marks: usize,
    /// Their share of the marked scripts, from 0 to 1.
    pub full_marks_share: Option<f64>,
}

/// What the class made of a criterion.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CriterionStats {
    /// Its question's label.
    pub question: String,
    /// The criterion id.
    pub id: String,
    /// Its name (`Q3a M1`).
    pub name: String,
    /// The scripts in which its question is marked.
    pub marked: usize,
    /// Awarded in how many.
    pub awarded: usize,
    /// Withheld in how many.
    pub withheld: usize,
    /// Uncertain in how many.
    pub uncertain: usize,
    /// The share awarded, from 0 to 1; `None` when none is marked.
    pub awarded_share: Option<f64>,
    /// The answers that lost it (withheld), in class order.
    pub lost_by: Vec<LostAnswer>,
}

/// An answer that lost a criterion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LostAnswer {
    /// The marking question.
    pub question_id: String,
    /// Its session.
    pub session_id: String,
    /// The student, when named.
    pub student: Option<String>,
    /// The copy, in a class set.
    pub copy: Option<u32>,
}

impl CriterionStats {
    /// The share withheld, from 0 to 1.
    pub fn lost_share(&self) -> f64 {
        if self.marked == 0 {
            0.0
        } else {
            self.withheld as f64 / self.marked as f64
        }
    }
}

impl ItemAnalysis {
    /// Up to `n` criteria lost by at least one answer, most often lost first (by the share
    /// withheld, then the number, then paper order).
    pub fn most_lost(&self, n: usize) -> Vec<&CriterionStats> {
        let mut lost: Vec<&CriterionStats> =
            self.criteria.iter().filter(|c| c.withheld > 0).collect();
        lost.sort_by(|a, b| {
            b.lost_share()
                .total_cmp(&a.lost_share())
                .then(b.withheld.cmp(&a.withheld))
        });
        lost.truncate(n);
        lost
    }
}

/// Counts the class's results.
pub fn analyse(results: &ClassResults) -> ItemAnalysis {
    let scripts: Vec<_> = results
        .students
        .iter()
        .filter_map(|s| s.standing.script().map(|script| (s, script)))
        .collect();
    let mut questions = Vec::with_capacity(results.questions.len());
    let mut criteria = Vec::new();
    for column in &results.questions {
        let asked: Vec<_> = scripts
            .iter()
            .filter_map(|(student, script)| {
                script
                    .question(&column.label)
                    .filter(|q| q.status.is_marked())
                    .map(|q| (*student, *script, q))
            })
            .collect();
        // A question not scanned, or that a held-back marker did not mark, is not the class's
        // mark: left out of every figure.
        let (unscanned, marked): (Vec<_>, Vec<_>) =
            asked.into_iter().partition(|(_, _, q)| q.unmarked());
        let marks: Vec<i64> = marked.iter().map(|(_, _, q)| q.score.awarded).collect();
        let n = marks.len();
        let mean = (n > 0).then(|| marks.iter().sum::<i64>() as f64 / n as f64);
        let spread = mean.map(|m| {
            (marks.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / n as f64).sqrt()
        });
        let full_marks = marks.iter().filter(|&&m| m >= column.max).count();
        questions.push(QuestionStats {
            label: column.label.clone(),
            max: column.max,
            marked: n,
            not_scanned: unscanned.iter().filter(|(_, _, q)| q.not_scanned()).count(),
            mean,
            spread,
            lowest: marks.iter().copied().min(),
            highest: marks.iter().copied().max(),
            full_marks,
            full_marks_share: (n > 0).then(|| full_marks as f64 / n as f64),
        });
        for criterion in &column.criteria {
            let mut stats = CriterionStats {
                question: column.label.clone(),
                id: criterion.id.clone(),
                name: criterion.name.clone(),
                marked: 0,
                awarded: 0,
                withheld: 0,
                uncertain: 0,
                awarded_share: None,
                lost_by: Vec::new(),
            };
            for (student, script, question) in &marked {
                let Some(decided) = question.criterion(&criterion.id) else {
                    continue;
                };
                stats.marked += 1;
                if question.lost(&criterion.id) {
                    stats.withheld += 1;
                    stats.lost_by.push(LostAnswer {
                        question_id: question.id.clone(),
                        session_id: script.session_id.clone(),
                        student: student.student.clone(),
                        copy: student.copy,
                    });
                } else if decided.effective == Outcome::Awarded {
                    stats.awarded += 1;
                } else {
                    stats.uncertain += 1;
                }
            }
            stats.awarded_share =
                (stats.marked > 0).then(|| stats.awarded as f64 / stats.marked as f64);
            criteria.push(stats);
        }
    }
    ItemAnalysis {
        scripts: scripts.len(),
        questions,
        criteria,
    }
}

fn share(value: Option<f64>) -> Cell {
    value.map_or(Cell::Empty, |v| Cell::Decimal((v * 1000.0).round() / 10.0))
}

fn decimal(value: Option<f64>) -> Cell {
    value.map_or(Cell::Empty, |v| Cell::Decimal((v * 100.0).round() / 100.0))
}

/// The analysis as the markbook's third sheet: a row per question (scripts marked, scripts left
/// out as not scanned, mean, spread, lowest, highest, share on full marks), then, under a header of their own, a row per criterion (the
/// share awarded, the counts). Shares are percentages.
pub fn sheet(analysis: &ItemAnalysis) -> Sheet {
    let header = [
        "Question",
        "Maximum",
        "Scripts marked",
        "Not scanned",
        "Mean",
        "Standard deviation",
        "Lowest",
        "Highest",
        "Full marks (%)",
    ]
    .map(String::from)
    .to_vec();
    let mut rows: Vec<Vec<Cell>> = analysis
        .questions
        .iter()
        .map(|q| {
            vec![
                Cell::Text(format!("Q{}", q.label)),
                Cell::Int(q.max),
                Cell::Int(q.marked as i64),
                Cell::Int(q.not_scanned as i64),
                decimal(q.mean),
                decimal(q.spread),
                q.lowest.map_or(Cell::Empty, Cell::Int),
                q.highest.map_or(Cell::Empty, Cell::Int),
                share(q.full_marks_share),
            ]
        })
        .collect();
    rows.push(vec![Cell::Empty; header.len()]);
    rows.push(
        [
            "Criterion",
            "Question",
            "Scripts marked",
            "Awarded",
            "Withheld",
            "Uncertain",
            "Awarded (%)",
            "",
            "",
        ]
        .map(|h| {
            if h.is_empty() {
                Cell::Empty
            } else {
                Cell::Text(h.into())
            }
        })
        .to_vec(),
    );
    rows.extend(analysis.criteria.iter().map(|c| {
        vec![
            Cell::Text(c.name.clone()),
            Cell::Text(format!("Q{}", c.question)),
            Cell::Int(c.marked as i64),
            Cell::Int(c.awarded as i64),
            Cell::Int(c.withheld as i64),
            Cell::Int(c.uncertain as i64),
            share(c.awarded_share),
            Cell::Empty,
            Cell::Empty,
        ]
    }));
    Sheet {
        name: "Analysis",
        header,
        rows,
    }
}
