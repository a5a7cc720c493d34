//! Where an answer may stand: words in reading order, specks of scan noise left out, stacked
//! fractions kept whole, and the runs of words that end a line or follow a label or `=`
//! ([`find`]); whether an answer space holds anything at all ([`is_blank`]).

use super::compare::{Accepted, Allowance, RELATIONS};
use super::normalise::normalise;
use super::{Found, MatchKind, WordBox};

/// Whether an answer space holds no meaningful written content: every word is empty, a single
/// character that is neither a letter nor a digit (`.`, `-`, `'`), or a run of marks such as
/// `....`, `__` or `--` that OCR reads from scan noise, dotted answer lines or strokes.
pub fn is_blank(words: &[WordBox<'_>]) -> bool {
    words.iter().all(|w| {
        let t = w.text.trim();
        let mut chars = t.chars();
        match (chars.next(), chars.next()) {
            (None, _) => true,
            (Some(c), None) => !c.is_alphanumeric(),
            _ => t
                .chars()
                .all(|c| SPECK.contains(&c) || STROKES.contains(&c)),
        }
    })
}

/// Marks that, in runs, are strokes rather than writing.
const STROKES: &[char] = &['-', '—', '–', '−', ',', ':', ';', '|'];

/// Marks that OCR invents from scan noise, and the dots and rules of printed answer lines.
const SPECK: &[char] = &[
    '.', '\'', '`', '‘', '’', '"', '“', '”', '~', '_', '•', '¸', '˙', '…', '‚', '„',
];

/// Whether a word is made only of speck marks.
fn is_speck(text: &str) -> bool {
    let t = text.trim();
    !t.is_empty() && t.chars().all(|c| SPECK.contains(&c))
}

/// Boxes lower than this are treated as this high when grouping lines.
const MIN_HEIGHT: f64 = 0.005;

/// A word joins a line when its centre is within this many line heights of the line's.
const LINE_TOLERANCE: f64 = 0.6;

/// Words in reading order: lines by vertical centre, each left to right (empty words left out).
fn reading_lines(words: &[WordBox<'_>]) -> Vec<Vec<usize>> {
    let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
    let height = |i: usize| finite(words[i].height).max(MIN_HEIGHT);
    let centre = |i: usize| finite(words[i].y) + height(i) / 2.0;
    let left = |i: usize| finite(words[i].x);
    let mut order: Vec<usize> = (0..words.len())
        .filter(|&i| !words[i].text.trim().is_empty())
        .collect();
    order.sort_by(|&a, &b| {
        centre(a)
            .total_cmp(&centre(b))
            .then(left(a).total_cmp(&left(b)))
    });
    // Each line: its members, and the sums of their centres and heights.
    let mut lines: Vec<(Vec<usize>, f64, f64)> = Vec::new();
    for i in order {
        let (c, h) = (centre(i), height(i));
        let nearest = lines
            .iter_mut()
            .map(|line| {
                let n = line.0.len() as f64;
                let distance = (c - line.1 / n).abs();
                let reach = LINE_TOLERANCE * (line.2 / n).max(h);
                (distance, reach, line)
            })
            .filter(|(distance, reach, _)| distance <= reach)
            .min_by(|a, b| a.0.total_cmp(&b.0));
        match nearest {
            Some((_, _, (members, centres, heights))) => {
                members.push(i);
                *centres += c;
                *heights += h;
            }
            None => lines.push((vec![i], c, h)),
        }
    }
    lines.sort_by(|a, b| (a.1 / a.0.len() as f64).total_cmp(&(b.1 / b.0.len() as f64)));
    lines
        .into_iter()
        .map(|(mut members, _, _)| {
            members.sort_by(|&a, &b| left(a).total_cmp(&left(b)).then(a.cmp(&b)));
            members
        })
        .collect()
}

/// Vertical gap, in the lower box's height, under which a short word above or below another is
/// read as part of one stacked expression.
const STACK_GAP: f64 = 0.5;

/// At most four characters, some of them letters or digits.
fn short(text: &str) -> bool {
    let t = text.trim();
    t.chars().count() <= 4 && t.chars().any(char::is_alphanumeric)
}

/// Whether `b` lies just above or below `a`, across most of the narrower one's width, and is
/// short itself or a bar (a run of `-`, `_` or dashes) not much wider than `a`.
fn one_over_other(a: &WordBox<'_>, b: &WordBox<'_>) -> bool {
    let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
    let (ax, ay, aw, ah) = (
        finite(a.x),
        finite(a.y),
        finite(a.width).max(0.0),
        finite(a.height).max(MIN_HEIGHT),
    );
    let (bx, by, bw, bh) = (
        finite(b.x),
        finite(b.y),
        finite(b.width).max(0.0),
        finite(b.height).max(MIN_HEIGHT),
    );
    let t = b.text.trim();
    let bar = !t.is_empty() && t.chars().all(|c| "-_—–−".contains(c)) && bw <= 3.0 * aw;
    if !bar && !short(t) {
        return false;
    }
    let overlap = (ax + aw).min(bx + bw) - ax.max(bx);
    let needed = if bar { 0.5 * aw } else { 0.5 * aw.min(bw) };
    if overlap <= 0.0 || overlap < needed {
        return false;
    }
    let apart = ((ay + ah / 2.0) - (by + bh / 2.0)).abs() >= 0.5 * ah.max(bh);
    let gap = (by - (ay + ah)).max(ay - (by + bh));
    apart && gap < STACK_GAP * ah.min(bh)
}

/// A meaningful word in reading order.
#[derive(Debug, Clone, Copy)]
struct Pos {
    word: usize,
    line: usize,
}

/// Words that lead in to an answer on the same line.
const LEAD_WORDS: &[&str] = &[
    "so",
    "hence",
    "therefore",
    "thus",
    "then",
    "giving",
    "gives",
    "give",
    "get",
    "gets",
    "answer",
    "answers",
    "ans",
    "is",
    "are",
    "equals",
    "ie",
    "i.e",
    "final",
    "∴",
    "⇒",
    "=>",
    "→",
    "->",
];

/// Characters that lead in to an answer.
const LEAD_CHARS: [char; 6] = ['=', ':', '⇒', '→', '∴', '≈'];

/// Whether a word leads in to what follows it on its line.
fn is_lead_in(raw: &str) -> bool {
    let lower = raw.trim().to_lowercase();
    let bare = lower.trim_end_matches([',', '.']);
    LEAD_WORDS.contains(&bare) || is_part_label(raw) || normalise(raw).ends_with(LEAD_CHARS)
}

/// A question part's label as students write it before an answer: `(a)`, `b)`, `(ii)`, `(c).`
fn is_part_label(raw: &str) -> bool {
    let t = raw.trim().trim_end_matches(['.', ':']);
    let Some(inner) = t.strip_suffix(')') else {
        return false;
    };
    let inner = inner.strip_prefix('(').unwrap_or(inner);
    matches!(
        inner,
        "a" | "b"
            | "c"
            | "d"
            | "e"
            | "f"
            | "g"
            | "h"
            | "i"
            | "ii"
            | "iii"
            | "iv"
            | "v"
            | "vi"
            | "vii"
            | "viii"
    )
}

/// Whether a word leaves its statement open: a list or an expression goes on after it.
fn ends_open(raw: &str) -> bool {
    let lower = raw.trim().to_lowercase();
    if matches!(lower.as_str(), "or" | "and" | "&") {
        return true;
    }
    let canon = normalise(raw);
    if canon.ends_with([
        ',', ';', '+', '-', '*', '/', '^', '_', '(', '[', '{', '<', '>', '≤', '≥', '≠', '±', '∓',
        '√', '∪', '∩', '∈',
    ]) {
        return true;
    }
    canon
        .strip_suffix("or")
        .is_some_and(|rest| rest.is_empty() || !rest.ends_with(|c: char| c.is_alphabetic()))
}

/// Whether a word, starting a line, carries on the statement of the line before.
fn continues(raw: &str) -> bool {
    let lower = raw.trim().to_lowercase();
    if matches!(lower.as_str(), "or" | "and" | "&") {
        return true;
    }
    normalise(raw).starts_with([
        '+', '-', '*', '/', '^', '=', ')', ']', '}', ',', ';', '…', '≤', '≥', '<', '>',
    ])
}

/// Whether a word starts with something that cannot start a statement: an operator that needs
/// something before it (not a sign), a closing bracket, a separator, `or`, `and`.
fn leads_with_operator(raw: &str) -> bool {
    let lower = raw.trim().to_lowercase();
    matches!(lower.as_str(), "or" | "and" | "&")
        || normalise(raw).starts_with(['*', '/', '^', ')', ']', '}', ',', ';', '…'])
}

/// The part of a word after its last top-level `=` or `≈`, when the part before holds no list.
fn after_equals(raw: &str) -> Option<&str> {
    let text = raw.trim();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut depth = 0i32;
    let mut found = None;
    for (k, &(at, c)) in chars.iter().enumerate() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            '=' | '≈' if depth == 0 => {
                let prev = k.checked_sub(1).map(|p| chars[p].1);
                let next = chars.get(k + 1).map(|&(_, n)| n);
                let compound = c == '='
                    && (matches!(prev, Some('<' | '>' | '!' | '='))
                        || matches!(next, Some('>' | '=')));
                if !compound {
                    found = Some(at);
                }
            }
            _ => {}
        }
    }
    let at = found?;
    let (before, after) = (&text[..at], &text[at..]);
    let after = after.char_indices().nth(1).map_or("", |(p, _)| &after[p..]);
    let before_canon = normalise(before);
    if after.trim().is_empty()
        || before_canon.is_empty()
        || before_canon.contains([',', ';'])
        || before_canon.contains("or")
    {
        return None;
    }
    Some(after)
}

/// The words of an answer space in reading order, and what is needed to search them.
pub(super) struct Space<'w, 'a> {
    words: &'w [WordBox<'a>],
    seq: Vec<Pos>,
}

impl Space<'_, '_> {
    fn raw(&self, k: usize) -> &str {
        self.words[self.seq[k].word].text.trim()
    }

    fn joined(&self, from: usize, to: usize) -> String {
        (from..=to)
            .map(|k| self.raw(k))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn line_end(&self, k: usize) -> bool {
        self.seq
            .get(k + 1)
            .is_none_or(|next| next.line != self.seq[k].line)
    }

    fn last_of_line(&self, k: usize) -> usize {
        let mut e = k;
        while !self.line_end(e) {
            e += 1;
        }
        e
    }

    /// The standard left boundary: a line start not continuing the line before, or after a
    /// lead-in on the same line.
    fn starts_statement(&self, s: usize) -> bool {
        if leads_with_operator(self.raw(s)) {
            return false;
        }
        let Some(p) = s.checked_sub(1) else {
            return true;
        };
        if self.seq[p].line != self.seq[s].line {
            !ends_open(self.raw(p))
        } else {
            is_lead_in(self.raw(p))
        }
    }

    /// The loose left boundary (for a run that starts with its own lead-in): nothing before it
    /// leaves a statement open.
    fn follows_closed(&self, s: usize) -> bool {
        s.checked_sub(1).is_none_or(|p| !ends_open(self.raw(p)))
    }

    /// Whether the run ending at `e` (a line end) is carried on by the next line.
    fn carried_on(&self, e: usize) -> bool {
        self.seq.get(e + 1).is_some() && continues(self.raw(e + 1))
    }

    /// Whether a word of the run has a short word (or a bar) just above or below it, as a
    /// fraction's numerator and denominator are written: the run may then be only part of a
    /// stacked expression (`x = 3` over `4`).
    fn stacked(&self, s: usize, e: usize) -> bool {
        let run: Vec<usize> = (s..=e).map(|k| self.seq[k].word).collect();
        run.iter().any(|&r| {
            let a = &self.words[r];
            short(a.text)
                && self
                    .words
                    .iter()
                    .enumerate()
                    .any(|(o, b)| !run.contains(&o) && one_over_other(a, b))
        })
    }

    /// Whether a later statement of one of the answer's labels matches none of the accepted
    /// answers.
    fn restated(
        &self,
        answer: &Accepted,
        e: usize,
        accepted: &[(usize, Accepted)],
        allow: &Allowance,
    ) -> bool {
        for w in e + 1..self.seq.len() {
            let tail = normalise(&self.joined(w, self.last_of_line(w)));
            let tail = tail.trim_start_matches(LEAD_CHARS);
            let tail = tail.strip_suffix('.').unwrap_or(tail);
            let states = answer.labels.iter().any(|label| {
                tail.strip_prefix(label.as_str())
                    .is_some_and(|rest| rest.starts_with(RELATIONS))
            });
            if states
                && !accepted
                    .iter()
                    .any(|(_, a)| a.compare(tail, allow).is_some())
            {
                return true;
            }
        }
        false
    }
}

/// Looks for one of `accepted` in the words of an answer space, read in reading order (lines by
/// y, then x). Returns the first match: which accepted answer, which words (indices into `words`)
/// make it, and the quote (their text joined by single spaces, as written). `notes` are the
/// criterion's notes (`awrt 2.35`, `cao`, `accept 3 s.f.`). The rules are in the module's
/// documentation; `None` means nothing was proven and a human should look.
pub fn find(words: &[WordBox<'_>], accepted: &[String], notes: &[String]) -> Option<Found> {
    let mut seq = Vec::new();
    for (line, members) in reading_lines(words).into_iter().enumerate() {
        for word in members {
            if !is_speck(words[word].text) {
                seq.push(Pos { word, line });
            }
        }
    }
    let space = Space { words, seq };
    let answers: Vec<(usize, Accepted)> = accepted
        .iter()
        .enumerate()
        .filter_map(|(i, a)| Accepted::new(a).map(|p| (i, p)))
        .collect();
    let longest = answers.iter().map(|(_, a)| a.max_words).max()?;
    // Runs whose normalised form is longer than this cannot match (numbers may be written
    // longer than accepted, so with room to spare).
    let longest_text = 2 * longest + 20;
    let allow = Allowance::from_notes(notes);
    let n = space.seq.len();
    for s in 0..n {
        let first = space.raw(s);
        let first_canon = normalise(first);
        if first_canon.is_empty() || first_canon.chars().all(|c| LEAD_CHARS.contains(&c)) {
            continue;
        }
        for e in s..n.min(s + longest) {
            if !space.line_end(e) || space.carried_on(e) {
                continue;
            }
            let run = space.joined(s, e);
            let mut variants: Vec<String> = Vec::new();
            let canon = normalise(&run);
            if canon.chars().count() > longest_text {
                break;
            }
            let stripped = canon.trim_start_matches(LEAD_CHARS);
            if stripped.len() != canon.len() {
                if space.follows_closed(s) {
                    variants.push(stripped.to_string());
                }
            } else if space.starts_statement(s) {
                variants.push(canon.clone());
            }
            if space.starts_statement(s)
                && let Some(tail) = after_equals(first)
            {
                let rest = if e > s {
                    space.joined(s + 1, e)
                } else {
                    String::new()
                };
                variants.push(normalise(&format!("{tail} {rest}")));
            }
            for variant in &mut variants {
                if variant.ends_with('.') {
                    variant.pop();
                }
            }
            // The best match of this run: the strongest kind, then the first accepted answer.
            let mut best: Option<(MatchKind, usize)> = None;
            for variant in variants.iter().filter(|v| !v.is_empty()) {
                for (index, answer) in &answers {
                    if e - s + 1 > answer.max_words {
                        continue;
                    }
                    let Some(how) = answer.compare(variant, &allow) else {
                        continue;
                    };
                    if best.is_some_and(|b| b <= (how, *index)) {
                        continue;
                    }
                    let placed = if answer.labelled() {
                        !space.restated(answer, e, &answers, &allow)
                    } else {
                        e + 1 == n
                    };
                    if placed {
                        best = Some((how, *index));
                    }
                }
            }
            if let Some((how, answer)) = best
                && !space.stacked(s, e)
            {
                return Some(Found {
                    answer,
                    words: (s..=e).map(|k| space.seq[k].word).collect(),
                    quote: space.joined(s, e),
                    how,
                });
            }
        }
    }
    None
}
