//! Comparing normalised texts: numbers by exact rational value or rounded as the notes allow,
//! piece by piece, and lists in another order ([`Accepted`]).

use super::MatchKind;
use super::figures::awrt;
use super::lex::scan_decimal;
use super::normalise::normalise;
use super::numbers::{Ratio, gcd, signed_decimal, significant};

/// How a number is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// Digits only.
    Integer,
    /// Digits with a decimal point, and its decimal places.
    Decimal(u32),
    /// `a/b` of two integers, standing alone.
    Fraction,
}

/// A number in normalised text.
#[derive(Debug, Clone, PartialEq)]
struct Number {
    text: String,
    value: Option<Ratio>,
    form: Form,
    /// Whether it stands alone as a value (so an `awrt` figure may govern it).
    standalone: bool,
}

/// A piece of normalised text: a number or any other character.
#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(char),
    Num(Number),
}

/// Characters before a fraction that leave `a/b` one number (`2*3/4` is `2*(3/4)`).
const FRACTION_BEFORE: &str = "=,([{<>≤≥≠≈+-±∓:;* ";

/// Characters after a fraction that leave `a/b` one number.
const FRACTION_AFTER: &str = "=,)]}<>≤≥≠≈+-±∓:;*/ °%";

/// Characters before a number that let it stand alone as a value.
const VALUE_BEFORE: &str = "=,([{<>≤≥≠≈+-±∓:; ";

/// Characters after a number that stop it standing alone as a value.
const VALUE_NOT_AFTER: &str = ".^_/(√![";

/// Splits normalised text into numbers and other characters.
fn pieces(s: &str) -> Vec<Piece> {
    let c: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let leading_point = c[i] == '.'
            && c.get(i + 1).is_some_and(char::is_ascii_digit)
            && !(i > 0 && c[i - 1].is_ascii_digit());
        if !c[i].is_ascii_digit() && !leading_point {
            out.push(Piece::Text(c[i]));
            i += 1;
            continue;
        }
        let start = i;
        let end = scan_decimal(&c, i);
        let text: String = c[start..end].iter().collect();
        let before = start.checked_sub(1).map(|p| c[p]);
        let radical_index = start >= 2 && c[start - 1] == '[' && c[start - 2] == '√';
        if !text.contains('.')
            && c.get(end) == Some(&'/')
            && c.get(end + 1).is_some_and(char::is_ascii_digit)
        {
            let dend = scan_decimal(&c, end + 1);
            let den: String = c[end + 1..dend].iter().collect();
            let before_ok = !radical_index && before.is_none_or(|p| FRACTION_BEFORE.contains(p));
            let after_ok = c.get(dend).is_none_or(|&n| FRACTION_AFTER.contains(n));
            if !den.contains('.') && before_ok && after_ok {
                let value = match (Ratio::decimal(&text), Ratio::decimal(&den)) {
                    (Some((n, _)), Some((d, _))) if d.num != 0 => n
                        .num
                        .checked_mul(d.den)
                        .zip(n.den.checked_mul(d.num))
                        .and_then(|(num, den)| Ratio::new(num, den)),
                    _ => None,
                };
                out.push(Piece::Num(Number {
                    text: c[start..dend].iter().collect(),
                    value,
                    form: Form::Fraction,
                    standalone: true,
                }));
                i = dend;
                continue;
            }
        }
        let parsed = Ratio::decimal(&text);
        let form = match parsed {
            Some((_, places)) if text.contains('.') => Form::Decimal(places),
            _ => Form::Integer,
        };
        let standalone = !radical_index
            && before.is_none_or(|p| VALUE_BEFORE.contains(p))
            && c.get(end).is_none_or(|&n| {
                !VALUE_NOT_AFTER.contains(n)
                    && !n.is_ascii_digit()
                    && (!n.is_alphabetic() || unit_tail(&c[end..]))
            });
        out.push(Piece::Num(Number {
            text,
            value: parsed.map(|(r, _)| r),
            form,
            standalone,
        }));
        i = end;
    }
    out
}

/// Whether text after a number is only a unit up to the end of its item: letters with optional
/// integer powers (`m`, `ms^-2`, `cm^2`, `N`, `radians`), ended by the end of the text, `,`, `;`,
/// `.` or a closing bracket. `ln5` or `x+1` after a number is not a unit: the number is then a
/// coefficient, not a value.
fn unit_tail(rest: &[char]) -> bool {
    let mut i = 0;
    let mut letters = 0;
    while let Some(&c) = rest.get(i) {
        if c.is_alphabetic() || c == '°' {
            letters += 1;
            i += 1;
        } else if c == '^' && letters > 0 {
            i += 1;
            if rest.get(i) == Some(&'-') {
                i += 1;
            }
            let digits = i;
            while rest.get(i).is_some_and(char::is_ascii_digit) {
                i += 1;
            }
            if i == digits {
                return false;
            }
        } else {
            return letters > 0 && matches!(c, ',' | ';' | '.' | ')' | ']' | '}');
        }
    }
    letters > 0
}

/// What the notes allow, prepared for comparing.
#[derive(Debug, Clone, Default)]
pub(super) struct Allowance {
    /// Stated `awrt` figures: magnitude times 10^places, and places.
    figures: Vec<(i128, u32)>,
    every_decimal: bool,
    significant_figures: Option<u32>,
    /// A `cao` note: fractions and decimals do not stand for each other.
    cao: bool,
}

impl Allowance {
    pub(super) fn from_notes(notes: &[String]) -> Allowance {
        let rounding = awrt(notes).unwrap_or_default();
        let figures = rounding
            .figures
            .iter()
            .filter_map(|f| {
                let (_, r) = signed_decimal(&f.text)?;
                Some((r.round_to(f.places)?, f.places))
            })
            .collect();
        let cao = notes.iter().any(|n| {
            n.to_lowercase()
                .split(|c: char| !c.is_alphanumeric())
                .any(|w| w == "cao")
        });
        Allowance {
            figures,
            every_decimal: rounding.every_decimal,
            significant_figures: rounding.significant_figures,
            cao,
        }
    }
}

/// Decimal places a number shows (a fraction shows its exact value: unlimited).
fn places_of(form: Form) -> u32 {
    match form {
        Form::Integer => 0,
        Form::Decimal(p) => p,
        Form::Fraction => u32::MAX,
    }
}

/// Compares an accepted number with a written one.
fn compare_numbers(a: &Number, w: &Number, allow: &Allowance) -> Option<MatchKind> {
    if a.text == w.text {
        return Some(MatchKind::Exact);
    }
    let (av, wv) = (a.value?, w.value?);
    if av == wv && equivalence_allowed(a, w, allow) {
        return Some(MatchKind::Equivalent);
    }
    if a.standalone && a.form != Form::Fraction && rounds_to(a, av, w, wv, allow) {
        return Some(MatchKind::Rounded);
    }
    None
}

/// Whether equal values written differently count as the same answer.
fn equivalence_allowed(a: &Number, w: &Number, allow: &Allowance) -> bool {
    if w.form == Form::Fraction {
        let lowest = w.text.split_once('/').is_some_and(|(n, d)| {
            match (n.parse::<i128>(), d.parse::<i128>()) {
                (Ok(n), Ok(d)) => d > 1 && gcd(n, d) == 1,
                _ => false,
            }
        });
        if !lowest {
            return false;
        }
    }
    if let Form::Decimal(pa) = a.form
        && places_of(w.form) < pa
    {
        return false;
    }
    !(allow.cao && ((a.form == Form::Fraction) != (w.form == Form::Fraction)))
}

/// Whether a written number rounds to an accepted one as the notes allow.
fn rounds_to(a: &Number, av: Ratio, w: &Number, wv: Ratio, allow: &Allowance) -> bool {
    let pw = match w.form {
        Form::Integer => 0,
        Form::Decimal(p) => p,
        Form::Fraction => return false,
    };
    for &(figure, places) in &allow.figures {
        if av.round_to(places) == Some(figure)
            && pw >= places
            && wv.round_to(places) == Some(figure)
        {
            return true;
        }
    }
    if allow.every_decimal
        && let Form::Decimal(pa) = a.form
        && pa >= 1
        && pw >= pa
        && wv.round_to(pa).is_some()
        && wv.round_to(pa) == av.round_to(pa)
    {
        return true;
    }
    if let Some(n) = allow.significant_figures {
        let pa = places_of(a.form);
        if pw < pa
            && significant(&w.text) >= n
            && wv.round_to(pw).is_some()
            && av.round_to(pw) == wv.round_to(pw)
        {
            return true;
        }
    }
    false
}

/// Compares piece lists: other characters equal, numbers as [`compare_numbers`]; the weakest
/// kind of the numbers' matches.
fn compare_pieces(a: &[Piece], w: &[Piece], allow: &Allowance) -> Option<MatchKind> {
    if a.len() != w.len() {
        return None;
    }
    let mut kind = MatchKind::Exact;
    for (x, y) in a.iter().zip(w) {
        let k = match (x, y) {
            (Piece::Text(p), Piece::Text(q)) if p == q => MatchKind::Exact,
            (Piece::Num(p), Piece::Num(q)) => compare_numbers(p, q, allow)?,
            _ => return None,
        };
        kind = kind.max(k);
    }
    Some(kind)
}

/// Splits normalised text at top-level occurrences of `sep`.
fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (k, c) in s.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ if c == sep && depth == 0 => {
                out.push(&s[start..k]);
                start = k + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// The position of the first top-level relation in normalised text.
fn first_relation(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (k, c) in s.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ if depth == 0 && RELATIONS.contains(&c) => return Some(k),
            _ => {}
        }
    }
    None
}

/// Relations that make the text before them a label.
pub(super) const RELATIONS: [char; 10] = ['=', '<', '>', '≤', '≥', '≠', '≈', '∈', '∉', '≡'];

/// An accepted answer, prepared for comparing.
#[derive(Debug, Clone)]
pub(super) struct Accepted {
    canon: String,
    pieces: Vec<Piece>,
    /// Labels: the text before the first top-level relation of each comma-separated item.
    pub(super) labels: Vec<String>,
    /// The most written words that can make it.
    pub(super) max_words: usize,
}

impl Accepted {
    pub(super) fn new(text: &str) -> Option<Accepted> {
        let canon = normalise(text);
        if canon.is_empty() {
            return None;
        }
        let mut labels: Vec<String> = Vec::new();
        for item in split_top(&canon, ',') {
            if let Some(p) = first_relation(item)
                && p > 0
                && !labels.iter().any(|l| l == &item[..p])
            {
                labels.push(item[..p].to_string());
            }
        }
        Some(Accepted {
            pieces: pieces(&canon),
            max_words: canon.chars().count() + 2,
            labels,
            canon,
        })
    }

    /// Compares written normalised text with this answer.
    pub(super) fn compare(&self, written: &str, allow: &Allowance) -> Option<MatchKind> {
        if self.canon == written {
            return Some(MatchKind::Exact);
        }
        if let Some(kind) = compare_pieces(&self.pieces, &pieces(written), allow) {
            return Some(kind.max(MatchKind::Equivalent));
        }
        self.compare_reordered(written, allow)
    }

    /// Lists of equations, or of single numbers, in another order.
    pub(super) fn compare_reordered(&self, written: &str, allow: &Allowance) -> Option<MatchKind> {
        if self.canon.contains(['<', '>', '≤', '≥']) {
            return None;
        }
        let ours: Vec<Vec<Piece>> = split_top(&self.canon, ',')
            .into_iter()
            .map(pieces)
            .collect();
        let theirs: Vec<Vec<Piece>> = split_top(written, ',').into_iter().map(pieces).collect();
        if ours.len() < 2 || ours.len() != theirs.len() {
            return None;
        }
        let equations = split_top(&self.canon, ',')
            .iter()
            .all(|item| first_relation(item).is_some_and(|p| p > 0) && !item.contains("or"));
        let numbers = ours.iter().all(|p| matches!(p.as_slice(), [Piece::Num(_)]));
        if !equations && !numbers {
            return None;
        }
        let mut used = vec![false; ours.len()];
        let mut kind = MatchKind::Equivalent;
        for item in &theirs {
            let found = ours.iter().enumerate().find_map(|(j, o)| {
                if used[j] {
                    return None;
                }
                compare_pieces(o, item, allow).map(|k| (j, k))
            });
            let (j, k) = found?;
            used[j] = true;
            kind = kind.max(k);
        }
        Some(kind)
    }

    pub(super) fn labelled(&self) -> bool {
        !self.labels.is_empty()
    }
}
