//! Quotes on the student's words: which words count as the student's, where a specific quote
//! ([`specific`]) runs on a page, and the model's transcription of each part ([`Transcript`]).

use super::implausible_fit;
use super::spaces::on_added_ink;
use crate::marking::answers;
use crate::marking::marker::Rect;
use crate::marking::marker::WorkPage;

/// A comparable form of text for finding a quote among words: [`answers::normalise`], lower
/// case, without spaces.
pub(super) fn comparable(text: &str) -> String {
    answers::normalise(text)
        .to_lowercase()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// Whether a quote is specific enough to locate evidence among a page's words: in its comparable
/// form (maths normalised, spaces removed), at least 3 characters of which at least 2 are letters
/// or digits (`x = 3`, `7cm`, `0.2`, `yes`), or a whole number of at least 2 digits (`12`). A lone
/// digit, letter or sign (`3`, `x`, `=`, `-1`, `(b)`) is on almost every page, in the question's
/// numbering and the other parts' answers, so finding it proves nothing.
pub fn specific(quote: &str) -> bool {
    let text = comparable(quote);
    let chars = text.chars().count();
    let alphanumeric = text.chars().filter(|c| c.is_alphanumeric()).count();
    (chars >= 3 && alphanumeric >= 2) || (chars >= 2 && text.chars().all(|c| c.is_ascii_digit()))
}

/// What the service can vouch for about the ink on a page.
pub(super) enum Basis<'a> {
    /// Lined up with its clean page: the regions of ink added to it.
    Added(&'a [Rect]),
    /// It has a clean page but could not be lined up with it, for this reason.
    Unaligned(String),
    /// No clean page exists (a foreign page): only dark marks of writing's size.
    Dark,
}

pub(super) fn basis(page: &WorkPage) -> Basis<'_> {
    if let Some(why) = &page.unaligned {
        return Basis::Unaligned(why.clone());
    }
    match &page.ink {
        Some(ink) => match implausible_fit(None, ink) {
            Some(why) => Basis::Unaligned(why),
            None => Basis::Added(ink),
        },
        None => Basis::Dark,
    }
}

/// Whether the page's answer spaces are known: a page of the session's paper with a recorded
/// layout (or one that lists some), on which a part without a region is not on the page.
pub(super) fn spaces_known(page: &WorkPage) -> bool {
    page.laid_out || !page.answer_regions.is_empty()
}

/// The words of `page` that may be the student's, in the order indexing read them: on a page
/// lined up with its clean page, those on added ink; elsewhere every word (printed text too).
pub fn student_words(page: &WorkPage) -> impl Iterator<Item = &crate::marking::marker::PageWord> {
    let ink = match basis(page) {
        Basis::Added(ink) => Some(ink),
        Basis::Unaligned(_) | Basis::Dark => None,
    };
    page.words
        .iter()
        .filter(move |w| ink.is_none_or(|ink| on_added_ink(ink, &w.bbox)))
}

/// Runs of consecutive words whose text, taken together, is the quote: each as the union of
/// their boxes.
pub(super) fn quote_runs(page: &WorkPage, quote: &str) -> Vec<Rect> {
    let wanted = comparable(quote);
    if wanted.is_empty() {
        return Vec::new();
    }
    let texts: Vec<String> = page.words.iter().map(|w| comparable(&w.text)).collect();
    let mut runs = Vec::new();
    for start in 0..texts.len() {
        let mut joined = String::new();
        for (end, text) in texts.iter().enumerate().skip(start) {
            joined.push_str(text);
            if joined.len() >= wanted.len() {
                if (joined == wanted || (end == start && joined.contains(&wanted)))
                    && let Some(rect) = Rect::union(page.words[start..=end].iter().map(|w| w.bbox))
                {
                    runs.push(rect);
                }
                break;
            }
            if !wanted.starts_with(&joined) {
                break;
            }
        }
    }
    runs
}

/// The model's transcription of a question, line by line, for finding which line of a part's
/// writing a quote is on when the page's words cannot be read, and whether it holds a quote.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    /// Each written line, in order.
    lines: Vec<Line>,
}

/// A line of a transcription.
#[derive(Debug, Clone)]
pub(super) struct Line {
    /// The part it is labelled with (`(a)`, `a)`, `a.` at its start), if any.
    label: Option<String>,
    /// Its text in comparable form, label removed.
    text: String,
    /// Its text as written, label removed.
    raw: String,
}

/// A part label opening a transcribed line: `(a)`, `a)` or `a.` followed by a space, a
/// bracket or the end, for a label of one letter or a roman numeral; the label and the rest.
pub(crate) fn part_label(line: &str) -> Option<(String, &str)> {
    let line = line.trim_start();
    let (inner, rest) = if let Some(after) = line.strip_prefix('(') {
        let close = after.find(')')?;
        (&after[..close], &after[close + 1..])
    } else {
        let end = line.find([')', '.'])?;
        (&line[..end], &line[end + 1..])
    };
    let letter = inner.len() == 1 && inner.chars().all(|c| c.is_ascii_lowercase());
    let roman =
        (1..=4).contains(&inner.len()) && inner.chars().all(|c| matches!(c, 'i' | 'v' | 'x'));
    let ok = (letter || roman)
        && (rest.is_empty() || rest.starts_with(|c: char| c.is_whitespace() || c == '('));
    ok.then(|| (inner.to_owned(), rest))
}

impl Transcript {
    /// Reads a transcription: its non-empty lines, in order.
    pub fn new(transcription: &str) -> Transcript {
        let lines = transcription
            .lines()
            .filter_map(|line| {
                let (label, raw) = match part_label(line) {
                    Some((label, rest)) => (Some(label), rest),
                    None => (None, line),
                };
                let text = comparable(raw);
                (!text.is_empty()).then(|| Line {
                    label,
                    text,
                    raw: raw.to_owned(),
                })
            })
            .collect();
        Transcript { lines }
    }

    /// The lines of part `part_id`: from its label to the next label; `None` when no line is
    /// labelled with it.
    fn part(&self, part_id: &str) -> Option<&[Line]> {
        let start = self
            .lines
            .iter()
            .position(|l| l.label.as_deref() == Some(part_id))?;
        let end = self.lines[start + 1..]
            .iter()
            .position(|l| l.label.is_some())
            .map_or(self.lines.len(), |n| start + 1 + n);
        Some(&self.lines[start..end])
    }

    /// Whether the transcription of part `part_id` (every line, when it labels no line with the
    /// part) holds `quote`, over a line break too: in lower case without spaces as written, or in
    /// comparable form (maths normalised, which reads a quote alone and the line around it
    /// alike only most of the time). A blank quote is held.
    pub fn holds(&self, part_id: &str, quote: &str) -> bool {
        let bare = |text: &str| -> String {
            text.chars()
                .filter(|c| !c.is_whitespace())
                .flat_map(char::to_lowercase)
                .collect()
        };
        let wanted = comparable(quote);
        if wanted.is_empty() {
            return true;
        }
        let lines = self.part(part_id).unwrap_or(&self.lines);
        let joined: String = lines.iter().map(|l| l.text.as_str()).collect();
        let raw: String = lines.iter().map(|l| bare(&l.raw)).collect();
        joined.contains(&wanted) || raw.contains(&bare(quote))
    }

    /// The index, among `lines`, of the line holding `quote`: the first line that holds it
    /// whole, else (a quote over several lines) the last line it holds whole.
    fn find(lines: &[Line], quote: &str) -> Option<usize> {
        let quote = comparable(quote);
        if quote.is_empty() {
            return None;
        }
        lines
            .iter()
            .position(|l| l.text.contains(&quote))
            .or_else(|| lines.iter().rposition(|l| quote.contains(l.text.as_str())))
    }

    /// Which of `ink_lines` lines of part `part_id`'s writing on a page (counted from its first,
    /// as the page reads) holds `quote`, given the quotes of every decision of the part
    /// (`part_quotes`, this one among them). Where the transcription labels its parts, the part's
    /// own lines are matched to the ink's lines in order (in proportion when there are more or
    /// fewer); where it does not, the part's last quoted line is taken to be its last line of
    /// ink, and the others counted back from it. `None` when the part has fewer than two lines
    /// of ink or the quote is not in the transcription.
    pub fn line_of(
        &self,
        part_id: &str,
        quote: &str,
        part_quotes: &[&str],
        ink_lines: usize,
    ) -> Option<usize> {
        if ink_lines < 2 {
            return None;
        }
        let labelled = self.lines.iter().any(|l| l.label.is_some());
        if labelled {
            let own = self.part(part_id)?;
            let k = Self::find(own, quote)?;
            let m = own.len();
            return Some(if m == ink_lines {
                k
            } else if m == 1 {
                ink_lines - 1
            } else {
                ((k as f64) * (ink_lines - 1) as f64 / (m - 1) as f64).round() as usize
            });
        }
        let k = Self::find(&self.lines, quote)?;
        let last = part_quotes
            .iter()
            .filter_map(|q| Self::find(&self.lines, q))
            .max()
            .unwrap_or(k)
            .max(k);
        Some((ink_lines - 1).saturating_sub(last - k))
    }
}
