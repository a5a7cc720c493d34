//! Which questions are on a page: exactly from the page code of an exported paper and the layout
//! recorded at export, or else from question labels found in the page's text.

use serde::Serialize;

use examkit_pdf::Layout;
use examkit_scan::Word;

/// How a question label was found on a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Found {
    /// The page's code names a page of the session's paper, whose recorded layout places the
    /// question there.
    PageCode,
    /// The page's text shows the question's number where questions are numbered.
    Text,
    /// A person said the page answers the question (an extra answer sheet of a class set).
    Assigned,
}

/// A question found on a page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FoundLabel {
    /// The question's label in the session: its number in the paper (`"1"`, `"2"`…).
    pub label: String,
    /// How it was found.
    pub how: Found,
}

/// The questions the recorded layout places on paper page `page` (1-based): those that start on
/// it or whose text or answer space (a part's, or the question's writing pages) lies on it, in
/// paper order.
pub fn from_layout(layout: &Layout, page: u32) -> Vec<FoundLabel> {
    layout
        .questions
        .iter()
        .filter(|q| {
            q.label_page == page
                || q.answer_space.iter().any(|r| r.page == page)
                || q.parts.iter().any(|part| {
                    part.prompt
                        .iter()
                        .chain(part.answer_space.iter())
                        .any(|r| r.page == page)
                })
        })
        .map(|q| FoundLabel {
            label: q.number.to_string(),
            how: Found::PageCode,
        })
        .collect()
}

/// The widest left margin, as a fraction of the page width, in which a bare number is read as a
/// question number.
const MARGIN: f64 = 0.2;
/// The highest question number a paper has.
const MAX_QUESTION: u32 = 24;

/// Question numbers found in a page's words, in reading order, without repeats:
/// - a number 1–24 standing alone in the left margin (how papers number their questions), with or
///   without a trailing `.` or `)`, or written `Q3`;
/// - the number after the words `Question` or `Total for Question` anywhere on the page (answer
///   space headings and question totals).
pub fn from_text(words: &[Word]) -> Vec<FoundLabel> {
    let mut found: Vec<u32> = Vec::new();
    let mut ordered: Vec<&Word> = words.iter().collect();
    ordered.sort_by(|a, b| {
        (a.bbox.y, a.bbox.x)
            .partial_cmp(&(b.bbox.y, b.bbox.x))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    for (i, word) in ordered.iter().enumerate() {
        let text = word.text.trim();
        let after_question = i > 0 && ordered[i - 1].text.trim().eq_ignore_ascii_case("question");
        let number = if after_question {
            question_number(text)
        } else if word.bbox.x < MARGIN {
            margin_number(text)
        } else {
            None
        };
        if let Some(n) = number
            && !found.contains(&n)
        {
            found.push(n);
        }
    }
    found
        .into_iter()
        .map(|n| FoundLabel {
            label: n.to_string(),
            how: Found::Text,
        })
        .collect()
}

/// `3`, `3.`, `3)`, `Q3`, `Q3.` → 3, within 1–24.
fn margin_number(text: &str) -> Option<u32> {
    let text = text
        .strip_prefix('Q')
        .or_else(|| text.strip_prefix('q'))
        .unwrap_or(text);
    let text = text.trim_end_matches(['.', ')', ':']);
    question_number(text)
}

/// A question number: digits only, no leading zero, within 1–24.
fn question_number(text: &str) -> Option<u32> {
    let text = text.trim_end_matches(['.', ')', ':', ',']);
    if text.is_empty() || text.starts_with('0') || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u32>()
        .ok()
        .filter(|n| (1..=MAX_QUESTION).contains(n))
}

/// The mark codes of a scheme (`M1`, `dM1`, `A1`, `A1ft`, `B1`, `A1*`) among a page's words.
pub fn mark_codes(words: &[Word]) -> usize {
    words
        .iter()
        .filter(|w| {
            let t = w.text.trim().trim_end_matches([',', '.', ';']);
            let t = t.strip_prefix('d').unwrap_or(t);
            let t = t
                .strip_suffix("ft")
                .or_else(|| t.strip_suffix('*'))
                .unwrap_or(t);
            matches!(t, "M1" | "A1" | "B1")
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use examkit_scan::NormBox;

    fn word(text: &str, x: f64, y: f64) -> Word {
        Word {
            text: text.into(),
            bbox: NormBox {
                x,
                y,
                width: 0.02,
                height: 0.01,
            },
            confidence: 0.9,
        }
    }

    fn labels(found: &[FoundLabel]) -> Vec<&str> {
        found.iter().map(|f| f.label.as_str()).collect()
    }

    #[test]
    fn margin_numbers_are_question_labels() {
        let words = [
            word("2", 0.08, 0.5),
            word("Find", 0.12, 0.5),
            word("1.", 0.08, 0.1),
            word("3", 0.5, 0.3), // not in the margin
            word("Q4", 0.09, 0.8),
        ];
        assert_eq!(labels(&from_text(&words)), ["1", "2", "4"]);
    }

    #[test]
    fn headings_and_totals_name_questions_anywhere() {
        let words = [
            word("Answer", 0.4, 0.05),
            word("space", 0.45, 0.05),
            word("for", 0.5, 0.05),
            word("Question", 0.55, 0.05),
            word("7", 0.62, 0.05),
            word("(Total", 0.5, 0.9),
            word("for", 0.55, 0.9),
            word("Question", 0.6, 0.9),
            word("7", 0.66, 0.9),
        ];
        assert_eq!(labels(&from_text(&words)), ["7"]);
    }

    #[test]
    fn other_numbers_are_not_labels() {
        for text in ["0", "25", "07", "3.5", "x", "", "Q", "Q0", "100"] {
            assert!(from_text(&[word(text, 0.05, 0.1)]).is_empty(), "{text:?}");
        }
    }

    #[test]
    fn mark_codes_are_counted() {
        let words = [
            word("M1", 0.8, 0.1),
            word("dM1", 0.8, 0.2),
            word("A1ft", 0.8, 0.3),
            word("A1*", 0.8, 0.4),
            word("B1,", 0.8, 0.5),
            word("M2", 0.8, 0.6),
            word("Mark", 0.1, 0.1),
        ];
        assert_eq!(mark_codes(&words), 5);
    }
}
