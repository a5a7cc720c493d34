//! The marker's transcription of a student's answer, part by part: what a vision model read of
//! the writing (its run record's `transcription`), split where a line opens with a part label
//! (`(a)`, `b)`, `ii.`), as the marker's own check of its quotes splits it
//! ([`crate::marking::evidence::part_label`]).

use crate::marking::evidence::part_label;

/// A transcription, split into the parts its lines label.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Transcription {
    /// The parts in the order written; empty when nothing was read.
    pub parts: Vec<TranscribedPart>,
}

/// The lines of one part of a transcription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscribedPart {
    /// The part label opening its first line (`a` for `(a)`); `None` for the lines before any
    /// label, or for a transcription that labels no part.
    pub label: Option<String>,
    /// Its lines as written, trimmed, the label removed; blank lines left out.
    pub lines: Vec<String>,
}

impl Transcription {
    /// Reads a transcription as the marker wrote it.
    pub fn read(text: &str) -> Transcription {
        let mut parts: Vec<TranscribedPart> = Vec::new();
        for line in text.lines() {
            let (label, rest) = match part_label(line) {
                Some((label, rest)) => (Some(label), rest),
                None => (None, line),
            };
            let rest = rest.trim();
            match (label, parts.last_mut()) {
                (Some(label), _) => parts.push(TranscribedPart {
                    label: Some(label),
                    lines: Vec::new(),
                }),
                (None, None) if !rest.is_empty() => parts.push(TranscribedPart {
                    label: None,
                    lines: Vec::new(),
                }),
                _ => {}
            }
            if let Some(part) = parts.last_mut().filter(|_| !rest.is_empty()) {
                part.lines.push(rest.to_owned());
            }
        }
        Transcription { parts }
    }

    /// Whether nothing was read.
    pub fn is_empty(&self) -> bool {
        self.parts.iter().all(|p| p.lines.is_empty())
    }

    /// Every line, for typesetting the maths they hold before a page is drawn.
    pub fn lines(&self) -> impl Iterator<Item = &str> {
        self.parts
            .iter()
            .flat_map(|p| p.lines.iter().map(String::as_str))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(label: Option<&str>, lines: &[&str]) -> TranscribedPart {
        TranscribedPart {
            label: label.map(str::to_owned),
            lines: lines.iter().map(|l| (*l).to_owned()).collect(),
        }
    }

    #[test]
    fn lines_are_split_at_each_part_label() {
        let t = Transcription::read(
            "Working: $x^2 = 9$\n(a) $x = 3$\n\n  so $y = 7$ \nb) $frac(1, 2)$\n(ii) done\n",
        );
        assert_eq!(
            t.parts,
            [
                part(None, &["Working: $x^2 = 9$"]),
                part(Some("a"), &["$x = 3$", "so $y = 7$"]),
                part(Some("b"), &["$frac(1, 2)$"]),
                part(Some("ii"), &["done"]),
            ]
        );
        assert!(!t.is_empty());
        assert_eq!(t.lines().count(), 5);
    }

    #[test]
    fn a_transcription_without_labels_is_one_part() {
        let t = Transcription::read("dy/dx = 6x - 4 ; at x = 2, gradient = 8");
        assert_eq!(
            t.parts,
            [part(None, &["dy/dx = 6x - 4 ; at x = 2, gradient = 8"])]
        );
    }

    #[test]
    fn a_run_record_keeps_its_transcription_as_text() {
        use super::super::MarkerRun;
        let run = MarkerRun::from_json(r#"{"marker":"openai","transcription":"(a) $x = 3$"}"#)
            .expect("a record");
        assert_eq!(
            run.transcription().expect("read"),
            Some(Transcription {
                parts: vec![part(Some("a"), &["$x = 3$"])]
            })
        );
        // Runs recorded before it was kept, and other markers' runs, have none.
        let older = MarkerRun::from_json(r#"{"marker":"openai","calls":1}"#).expect("a record");
        assert_eq!(older.transcription().expect("read"), None);
        let wrong = MarkerRun::from_json(r#"{"transcription":["x"]}"#).expect("a record");
        let e = wrong.transcription().expect_err("not text");
        assert_eq!(e.code(), "unreadable_document");
    }

    #[test]
    fn nothing_read_is_empty() {
        assert!(Transcription::read("").is_empty());
        assert!(Transcription::read("\n  \n").parts.is_empty());
        // A label with nothing after it is a part with no lines.
        let t = Transcription::read("(a)\n");
        assert_eq!(t.parts, [part(Some("a"), &[])]);
        assert!(t.is_empty());
    }
}
