//! Matching what a student wrote in an answer space against a mark-scheme criterion's accepted
//! answers.
//!
//! Accepted answers come from the question bank in its notation: text with inline maths between
//! `$…$` in typst math syntax (`"$k < 1$ or $k > 4$"`, `"$5/root(4, 3)$"`). Written text comes
//! from OCR of handwriting or from a PDF text layer, as words with boxes. [`normalise`] brings
//! both to one comparable form; [`find`] looks for an accepted answer among the words of an
//! answer space; [`is_blank`] tells whether an answer space holds anything at all.
//!
//! The rules are conservative: a wrong award is far worse than a missed one, so a match is
//! reported only when the written words show an accepted answer as a statement the student ended
//! on. Anything else is left to a human marker.
//!
//! # The comparable form ([`normalise`])
//!
//! - `$` is removed; inside and outside maths the same rules apply.
//! - Typst maths: `sqrt(x)` → `√x`; `root(n, x)` → `√[n]x` (`∛`, `∜` and a superscript index
//!   before `√` give the same); `root(x)` → `√x`; a radicand keeps its brackets unless it is
//!   one number or letter (`sqrt(x + 1)` → `√(x+1)`); `abs(x)` → `|x|`; `frac(a, b)` → `a/b`;
//!   `bold`, `upright`, `lr`, `op` and other styles are dropped; `"Var"` → `Var`; `dif` → `d`;
//!   `^(…)` and `_(…)` keep their brackets unless they hold one number or letter, negated or
//!   not (`^(-2)` → `^-2`, `e^(2x)` stays); unicode superscripts and subscripts are spelt the
//!   same way (`s⁻²` → `s^-2`, `x₁` → `x_1`).
//! - Named symbols: Greek letters (`theta` → `θ`), `pi` → `π`, `infinity` → `∞`, `union` → `∪`,
//!   `inter` → `∩`, `in` → `∈`, `degree` → `°`, `plus.minus` → `±`, `approx` → `≈`, `RR` → `ℝ`;
//!   `<=`, `≤` and `⩽` → `≤`; `>=` → `≥`; `!=` → `≠`; `=>` → `⇒`; `->` → `→`.
//! - A bracketed numerator that is a plain product loses its brackets when nothing before it
//!   binds tighter (`(5 pi)/6` → `5π/6`, but `2(5π)/6` stays), and `(dif y)` always does
//!   (`3x (dif y)/(dif x)` → `3xdy/dx`); a denominator keeps its brackets unless it is one
//!   number or letter or `dif x` (`1/(2x)` is not `1/2x`).
//! - Unicode minus and dashes → `-`; `×`, `·`, `⋅`, `times` → `*`; `x` or `X` between two
//!   numbers → `*` (`3x4` → `3*4`); `÷` → `/`; `º`, `˚` → `°`; curly quotes → `'`.
//! - `U` or `u` between a closing bracket and an opening one → `∪` (a handwritten union).
//! - `and`, `&` and `∧` → `,` unless the text holds an inequality, where `and` stays `and`;
//!   `or` stays `or` (so `k<1 or k>4` and `k<1 and k>4` differ); `Or`, `AND` are lowered.
//! - Spacing is removed, except one space between two numbers, so that separate numbers never
//!   merge (`2 3` is not `23`). Case is kept: variables are case-sensitive.
//!
//! # Comparing
//!
//! Two normalised texts match **exactly** when they are equal. Otherwise they are compared
//! piece by piece, a piece being a number or any other character: the other characters must be
//! equal, and each pair of numbers must be
//! - **equivalent**: equal by exact rational value (`3/4`, `0.75`, `.75`, `0.750`; `3` and
//!   `3.0`). A fraction `a/b` counts as one number only when it stands alone (not after `^`,
//!   `/`, `√` or a letter, not before a letter, a bracket or `^`: `3/4x` is compared as
//!   written). A written fraction must be in lowest terms (`6/8` does not match `3/4`); a
//!   written decimal must show at least the accepted decimal's places (`3.8` does not match
//!   `3.80`); under a `cao` note a fraction never matches a decimal;
//! - or **rounded**, as the notes allow ([`awrt`]). Under `awrt 2.35` an accepted number that
//!   stands alone and rounds to 2.35 matches a written decimal with at least 2 decimal places
//!   that rounds, half away from zero, to 2.35: `2.349` and `2.35` match, `2.36` and `2.3` do
//!   not. A bare `awrt` note makes every decimal of the accepted answers such a figure. An
//!   `accept 3 s.f.` note accepts the accepted number rounded to fewer decimal places if at
//!   least 3 significant figures remain. A number stands alone when it is not a power, an
//!   index, a denominator or part of a longer number, and what follows it up to the next `,`
//!   is at most a unit (`1.96ms^-2`, `126N`; not the `2` of `2ln5`).
//!
//! Lists separated by top-level commas (after `and` became `,`) whose items are all equations
//! (`a = 11, d = 3`) or all single numbers (`1, 4`) also match in another order. No algebra is
//! done: `(x+1)^2` does not match `x^2+2x+1` (an `oe` judgement is a human's).
//!
//! # Where an answer may stand ([`find`])
//!
//! Words are put in reading order: each word joins the line whose mean box centre is nearest to
//! its own centre, within 0.6 of a box height, or starts a new line; lines run top to bottom,
//! words left to right. Specks (words made only of `.`, `'`, `_`, `~` and such marks, as OCR
//! reads scan noise or dotted answer lines) are ignored. A candidate is a run of consecutive
//! words that
//! - **ends a line**, and the next line does not carry it on (does not start with `+`, `-`,
//!   `*`, `/`, `^`, `=`, `<`, `>`, `≤`, `≥`, a closing bracket, `,`, `;`, `…`, `or` or `and`);
//!   a final `.` is ignored;
//! - does not start with `*`, `/`, `^`, a closing bracket, `,`, `;`, `or` or `and`; and
//!   **starts a line** (the line before not ending open, with `,`, `;`, `or`, `and`, an
//!   operator, an opening bracket, `<`, `>`, `√` or `∈`), or follows on its line a **lead-in**:
//!   `=`, `:`, `⇒`, `∴`, `≈`, a word ending in one of them (`fg(3)=`, `Answer:`), one of the
//!   words `so`, `hence`, `therefore`, `thus`, `then`, `giving`, `gives`, `get`, `answer`,
//!   `ans`, `is`, `are`, `equals`, `ie`, `final`, or a part label (`(a)`, `b)`, `(ii)`). A
//!   lead-in glued to the run's first word counts too (`=7`, `⇒x=5`), and so does the part of
//!   the first word after its last `=` (`fg(3)=2(3)+1=7` offers `7`) when the part before it
//!   holds no list (`,`, `;`, `or`);
//! - has no word with a short word (at most 4 characters) or a short bar just above or below
//!   it, closer than half a box height and across at least half the narrower width: the run
//!   could be a piece of a stacked fraction (`x = 3` over `4`).
//!
//! Where the run may stand depends on the accepted answer:
//! - one with a **label** (the text before a top-level relation: `x` in `x = 3`, `k` in
//!   `k < 1 or k > 4`, `P(X≤4)` in `P(X ≤ 4) = 0.238`) may match at the end of any line, unless
//!   a later statement of one of its labels (`x = -1` after `x = 5`) matches none of the
//!   accepted answers: the student's last word on a label is what counts;
//! - any other (a bare value such as `3`, `2π`, `(3, -2)`, `-256x`) must be the **last thing
//!   written** in the answer space.
//!
//! So a bare `3` never matches inside `13`, `x^3` or `3x + 4`, nor `5` in `x = 5 or x = -1`.
//! Candidates are tried in reading order of their first word (then the shorter first); the
//! first that matches some accepted answer and passes these rules is returned, with the
//! accepted answer it matches best (exact before equivalent before rounded, then the first in
//! the list).

use serde::Serialize;

/// A word read on a page, with its box in normalized page coordinates (0..1, top-left origin).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WordBox<'a> {
    /// The word as read.
    pub text: &'a str,
    /// The box's left edge.
    pub x: f64,
    /// The box's top edge.
    pub y: f64,
    /// The box's width.
    pub width: f64,
    /// The box's height.
    pub height: f64,
}

/// How written words matched an accepted answer; later kinds are weaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum MatchKind {
    /// The normalised forms are equal.
    Exact,
    /// Equal apart from numbers of equal value written differently (`3/4` and `0.75`, `0.750`
    /// and `0.75`, `3.0` and `3`) or list items in another order.
    Equivalent,
    /// Some number only rounds to the accepted figure, as an `awrt` or `accept N s.f.` note
    /// allows.
    Rounded,
}

/// An accepted answer found in an answer space.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Found {
    /// Which accepted answer matched (an index into the accepted answers).
    pub answer: usize,
    /// The words that make it, as indices into the words given, in reading order.
    pub words: Vec<usize>,
    /// Those words' text, joined by single spaces, as written.
    pub quote: String,
    /// How they matched.
    pub how: MatchKind,
}

/// A figure stated by an `awrt` note: `awrt 2.35` → `2.35`, to 2 decimal places.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Figure {
    /// The figure as the note writes it, with an ASCII minus if negative (`2.35`, `-0.927`).
    pub text: String,
    /// Its decimal places.
    pub places: u32,
}

impl Figure {
    /// The figure's value.
    pub fn value(&self) -> f64 {
        self.text.parse().unwrap_or(f64::NAN)
    }

    /// Half a unit in the figure's last place: a value within this of the figure (the upper end
    /// excluded, as rounding half away from zero goes) rounds to it (`2.35` → 0.005).
    pub fn tolerance(&self) -> f64 {
        0.5 / 10f64.powi(i32::try_from(self.places).unwrap_or(i32::MAX))
    }

    /// Whether a written number rounds to this figure: a decimal (or integer) with at least the
    /// figure's decimal places, of the same sign, whose value rounds to it half away from zero.
    pub fn admits(&self, written: &str) -> bool {
        let (Some((fneg, fig)), Some((wneg, value, places))) =
            (signed_decimal(&self.text), signed_decimal_places(written))
        else {
            return false;
        };
        fneg == wneg
            && places >= self.places
            && fig.round_to(self.places).is_some()
            && value.round_to(self.places) == fig.round_to(self.places)
    }
}

/// The numeric tolerance allowed by a criterion's notes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Awrt {
    /// Figures stated by `awrt` notes (`awrt 2.35`, `awrt 53.13°`).
    pub figures: Vec<Figure>,
    /// Whether a note says `awrt` without a figure: every decimal in the accepted answers is then
    /// a rounded figure to its own decimal places.
    pub every_decimal: bool,
    /// The fewest significant figures an `accept N s.f.` (or `allow N sf`) note accepts.
    pub significant_figures: Option<u32>,
}

/// The numeric tolerance of an `awrt` note (`awrt 2.35` → 0.005 around 2.35: the value rounds to
/// 2.35), if any: see [`Awrt`]. Also reads `accept 3 s.f.` notes. `None` when no note allows
/// rounding.
pub fn awrt(notes: &[String]) -> Option<Awrt> {
    let mut out = Awrt::default();
    let mut any = false;
    for note in notes {
        let lower = note.to_lowercase();
        let chars: Vec<char> = lower.chars().collect();
        let mut i = 0;
        while i + 4 <= chars.len() {
            let word = chars[i..i + 4].iter().collect::<String>() == "awrt"
                && (i == 0 || !chars[i - 1].is_alphanumeric())
                && chars.get(i + 4).is_none_or(|c| !c.is_alphanumeric());
            if !word {
                i += 1;
                continue;
            }
            any = true;
            match figure_after(&chars[i + 4..]) {
                Some(figure) => {
                    if !out.figures.contains(&figure) {
                        out.figures.push(figure);
                    }
                }
                None => out.every_decimal = true,
            }
            i += 4;
        }
        if (lower.contains("accept") || lower.contains("allow"))
            && let Some(n) = significant_figures(&chars)
        {
            any = true;
            out.significant_figures = Some(out.significant_figures.map_or(n, |m| m.min(n)));
        }
    }
    any.then_some(out)
}

/// The number right after `awrt` (spaces, `$` and `=` skipped): `-0.927`, `53.13°` → `53.13`.
fn figure_after(rest: &[char]) -> Option<Figure> {
    let mut i = 0;
    while i < rest.len() && (rest[i].is_whitespace() || rest[i] == '$' || rest[i] == '=') {
        i += 1;
    }
    let mut text = String::new();
    if let Some(&c) = rest.get(i)
        && (c == '-' || c == '\u{2212}' || c == '+')
    {
        if c != '+' {
            text.push('-');
        }
        i += 1;
    }
    let start = text.len();
    let mut places = None;
    while let Some(&c) = rest.get(i) {
        if c.is_ascii_digit() {
            text.push(c);
            places = places.map(|p: u32| p + 1);
        } else if c == '.' && places.is_none() && rest.get(i + 1).is_some_and(char::is_ascii_digit)
        {
            if text.len() == start {
                text.push('0');
            }
            text.push('.');
            places = Some(0);
        } else {
            break;
        }
        i += 1;
    }
    if !text[start..].chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    Some(Figure {
        text,
        places: places.unwrap_or(0),
    })
}

/// `3 s.f.`, `3sf`, `3 s.f`, `3 significant figures` in a note.
fn significant_figures(chars: &[char]) -> Option<u32> {
    let mut best: Option<u32> = None;
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() || (i > 0 && chars[i - 1].is_alphanumeric()) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        let n: Option<u32> = chars[start..i].iter().collect::<String>().parse().ok();
        let mut j = i;
        while j < chars.len() && chars[j] == ' ' {
            j += 1;
        }
        let rest: String = chars[j..].iter().take(12).collect();
        if (rest.starts_with("s.f") || rest.starts_with("sf") || rest.starts_with("significant"))
            && let Some(n) = n.filter(|&n| n > 0)
        {
            best = Some(best.map_or(n, |b| b.min(n)));
        }
    }
    best
}

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

// ---------------------------------------------------------------------------------------------
// Normalising
// ---------------------------------------------------------------------------------------------

/// Stands for `and` while rendering, until it is known whether the text holds an inequality.
const AND_MARK: char = '\u{E000}';

/// The comparable form of an answer or of written text: typst maths markup turned into plain
/// text, unicode variants folded, spacing removed; see the module's documentation for the rules.
/// `"$sqrt(25)$"` → `√25`, `"$k < 1$ or $k > 4$"` → `k<1ork>4`, `"$1$ and $4$"` → `1,4`,
/// `"$5/root(4, 3)$"` → `5/√[4]3`, `"−256x"` → `-256x`, `"3×4"` → `3*4`.
pub fn normalise(text: &str) -> String {
    let folded = fold(text);
    let nodes = parse(lex(&folded));
    finish(&render(&nodes))
}

/// Superscript characters and what they stand for.
fn superscript(c: char) -> Option<char> {
    Some(match c {
        '⁰' => '0',
        '¹' => '1',
        '²' => '2',
        '³' => '3',
        '⁴' => '4',
        '⁵' => '5',
        '⁶' => '6',
        '⁷' => '7',
        '⁸' => '8',
        '⁹' => '9',
        '⁺' => '+',
        '⁻' => '-',
        '⁼' => '=',
        '⁽' => '(',
        '⁾' => ')',
        'ⁿ' => 'n',
        'ⁱ' => 'i',
        'ˣ' => 'x',
        'ʸ' => 'y',
        _ => return None,
    })
}

/// Subscript characters and what they stand for.
fn subscript(c: char) -> Option<char> {
    Some(match c {
        '₀' => '0',
        '₁' => '1',
        '₂' => '2',
        '₃' => '3',
        '₄' => '4',
        '₅' => '5',
        '₆' => '6',
        '₇' => '7',
        '₈' => '8',
        '₉' => '9',
        '₊' => '+',
        '₋' => '-',
        '₌' => '=',
        '₍' => '(',
        '₎' => ')',
        'ₐ' => 'a',
        'ₑ' => 'e',
        'ₒ' => 'o',
        'ₓ' => 'x',
        'ᵢ' => 'i',
        'ⱼ' => 'j',
        'ₖ' => 'k',
        'ₘ' => 'm',
        'ₙ' => 'n',
        'ₚ' => 'p',
        'ₛ' => 's',
        'ₜ' => 't',
        _ => return None,
    })
}

/// Folds unicode variants to one spelling, drops `$` and quotes, and spells out superscripts,
/// subscripts and radicals with an index.
fn fold(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if superscript(c).is_some() {
            let mut run = String::new();
            while let Some(s) = chars.get(i).copied().and_then(superscript) {
                run.push(s);
                i += 1;
            }
            // An index stands before `√` with nothing it could be a power of.
            let index = chars.get(i) == Some(&'√')
                && run.chars().all(|c| c.is_ascii_digit())
                && !out.ends_with(|p: char| p.is_alphanumeric() || matches!(p, ')' | ']' | '}'));
            if index {
                out.push_str(&format!("√[{run}]"));
                i += 1;
            } else {
                out.push_str(&format!("^({run})"));
            }
            continue;
        }
        if subscript(c).is_some() {
            let mut run = String::new();
            while let Some(s) = chars.get(i).copied().and_then(subscript) {
                run.push(s);
                i += 1;
            }
            out.push_str(&format!("_({run})"));
            continue;
        }
        match c {
            '$' | '"' | '“' | '”' | '„' | '\\' | '\u{200B}' | '\u{200C}' | '\u{200D}'
            | '\u{FEFF}' | '\u{00AD}' => {}
            '\u{2212}'
            | '\u{2010}'..='\u{2015}'
            | '\u{FE63}'
            | '\u{FF0D}'
            | '\u{2043}'
            | '\u{2796}' => out.push('-'),
            '×' | '✕' | '✖' | '⨯' | '·' | '⋅' | '∙' | '∗' => out.push('*'),
            '÷' | '∕' | '⁄' | '➗' => out.push('/'),
            '⩽' | '≦' => out.push('≤'),
            '⩾' | '≧' => out.push('≥'),
            '˚' | 'º' => out.push('°'),
            '′' | '’' | '‘' | 'ʼ' | '´' | '`' | 'ʹ' => out.push('\''),
            '″' => out.push_str("''"),
            '∛' => out.push_str("√[3]"),
            '∜' => out.push_str("√[4]"),
            'ϵ' => out.push('ε'),
            'ϕ' => out.push('φ'),
            'ϑ' => out.push('θ'),
            '€' | '∊' => out.push('∈'),
            '∣' => out.push('|'),
            '∶' => out.push(':'),
            '⟹' => out.push('⇒'),
            '⟶' => out.push('→'),
            '∧' => out.push_str(" and "),
            '∨' => out.push_str(" or "),
            'ﬁ' => out.push_str("fi"),
            'ﬂ' => out.push_str("fl"),
            'ﬀ' => out.push_str("ff"),
            '\u{FF01}'..='\u{FF5E}' => {
                out.push(char::from_u32(c as u32 - 0xFEE0).unwrap_or(c));
            }
            c if c.is_whitespace() => out.push(' '),
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// A lexical token of folded text.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// Digits with at most one decimal point (`12`, `0.75`, `.75`).
    Num(String),
    /// A run of ASCII letters, or a dotted typst symbol name (`plus.minus`).
    Word(String),
    /// Any other character.
    Sym(char),
    /// `√`, with its index if it has one (`√[3]`).
    Radical(Option<String>),
    /// Whitespace.
    Space,
}

/// Dotted typst symbol names that are read as one word.
const DOTTED: &[&str] = &[
    "plus.minus",
    "minus.plus",
    "dot.op",
    "dot.c",
    "in.not",
    "lt.eq",
    "gt.eq",
    "lt.eq.slant",
    "gt.eq.slant",
    "eq.not",
    "arrow.r",
    "arrow.r.double",
    "arrow.l.r.double",
    "theta.alt",
    "phi.alt",
    "epsilon.alt",
    "dots.h",
    "dots.c",
    "subset.eq",
];

/// Splits folded text into tokens.
fn lex(text: &str) -> Vec<Tok> {
    let c: Vec<char> = text.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch.is_whitespace() {
            if toks.last() != Some(&Tok::Space) {
                toks.push(Tok::Space);
            }
            i += 1;
            continue;
        }
        let shorthand = [
            ("<=>", '⇔'),
            ("<==>", '⇔'),
            ("==>", '⇒'),
            ("<=", '≤'),
            (">=", '≥'),
            ("!=", '≠'),
            ("=>", '⇒'),
            ("->", '→'),
            ("...", '…'),
        ]
        .into_iter()
        .find(|(s, _)| {
            let n = s.chars().count();
            i + n <= c.len() && c[i..i + n].iter().copied().eq(s.chars())
        });
        if let Some((s, sym)) = shorthand {
            toks.push(Tok::Sym(sym));
            i += s.chars().count();
            continue;
        }
        let leading_point = ch == '.'
            && next.is_some_and(|n| n.is_ascii_digit())
            && !(i > 0 && c[i - 1].is_ascii_digit());
        if ch.is_ascii_digit() || leading_point {
            let end = scan_decimal(&c, i);
            toks.push(Tok::Num(c[i..end].iter().collect()));
            i = end;
            continue;
        }
        if ch.is_ascii_alphabetic() {
            let (word, end) = read_word(&c, i);
            toks.push(Tok::Word(word));
            i = end;
            continue;
        }
        if ch == '√' {
            if next == Some('[')
                && let Some(close) = c[i + 2..].iter().position(|&x| x == ']')
                && close > 0
                && close <= 8
                && c[i + 2..i + 2 + close].iter().all(|x| x.is_alphanumeric())
            {
                toks.push(Tok::Radical(Some(c[i + 2..i + 2 + close].iter().collect())));
                i += close + 3;
            } else {
                toks.push(Tok::Radical(None));
                i += 1;
            }
            continue;
        }
        if ch == '&' {
            toks.push(Tok::Word("and".to_string()));
            i += 1;
            continue;
        }
        toks.push(Tok::Sym(ch));
        i += 1;
    }
    toks
}

/// The end of the number starting at `i`: digits, then `.` and digits (or `.` and digits).
fn scan_decimal(c: &[char], mut i: usize) -> usize {
    while i < c.len() && c[i].is_ascii_digit() {
        i += 1;
    }
    if i + 1 < c.len() && c[i] == '.' && c[i + 1].is_ascii_digit() {
        i += 1;
        while i < c.len() && c[i].is_ascii_digit() {
            i += 1;
        }
    }
    i
}

/// A run of ASCII letters at `i`, extended over dots when that makes a dotted symbol name.
fn read_word(c: &[char], i: usize) -> (String, usize) {
    let letters_end = |from: usize| {
        let mut j = from;
        while j < c.len() && c[j].is_ascii_alphabetic() {
            j += 1;
        }
        j
    };
    let end = letters_end(i);
    let base: String = c[i..end].iter().collect();
    let mut best = (base.clone(), end);
    let mut current = base;
    let mut k = end;
    while k + 1 < c.len() && c[k] == '.' && c[k + 1].is_ascii_alphabetic() {
        let m = letters_end(k + 1);
        let extended = format!("{current}.{}", c[k + 1..m].iter().collect::<String>());
        let prefix = format!("{extended}.");
        if !DOTTED
            .iter()
            .any(|d| *d == extended || d.starts_with(&prefix))
        {
            break;
        }
        current = extended;
        k = m;
        if DOTTED.contains(&current.as_str()) {
            best = (current.clone(), k);
        }
    }
    best
}

/// A node of parsed text: brackets grouped, calls of typst functions recognised.
#[derive(Debug, Clone, PartialEq)]
enum Node {
    /// A number.
    Num(String),
    /// A word.
    Word(String),
    /// Any other character.
    Sym(char),
    /// `√`, with its index if any.
    Radical(Option<String>),
    /// Whitespace.
    Space,
    /// A bracketed group (`(…)`, `[…)`, `{…}`), with the bracket that closed it if any.
    Group {
        open: char,
        close: Option<char>,
        body: Vec<Node>,
    },
    /// A typst function applied to a bracketed argument list (`sqrt(…)`, `root(…, …)`).
    Call { name: String, body: Vec<Node> },
}

/// Typst functions whose call is rendered specially or kept as a unit.
const CALLS: &[&str] = &[
    "sqrt",
    "root",
    "abs",
    "norm",
    "frac",
    "bb",
    "bold",
    "upright",
    "italic",
    "sans",
    "serif",
    "mono",
    "cal",
    "frak",
    "lr",
    "op",
    "display",
    "inline",
    "script",
    "sscript",
    "arrow",
    "dot",
    "ddot",
    "vec",
    "hat",
    "tilde",
    "overline",
    "underline",
    "bar",
    "binom",
    "mat",
    "cancel",
    "floor",
    "ceil",
];

/// The deepest nesting of brackets parsed as groups (rendering recurses into each).
const MAX_DEPTH: usize = 32;

/// Groups brackets (any closing bracket closes the innermost group, so intervals like `[1, 4)`
/// parse) and turns a known function name followed at once by `(…)` into a call.
fn parse(toks: Vec<Tok>) -> Vec<Node> {
    let mut stack: Vec<(char, Vec<Node>)> = vec![(' ', Vec::new())];
    // Brackets opened beyond the deepest nesting kept, and so left as characters.
    let mut too_deep = 0usize;
    for tok in toks {
        match tok {
            Tok::Sym(open @ ('(' | '[' | '{')) if stack.len() > MAX_DEPTH => {
                too_deep += 1;
                if let Some(top) = stack.last_mut() {
                    top.1.push(Node::Sym(open));
                }
            }
            Tok::Sym(close @ (')' | ']' | '}')) if too_deep > 0 => {
                too_deep -= 1;
                if let Some(top) = stack.last_mut() {
                    top.1.push(Node::Sym(close));
                }
            }
            Tok::Sym(open @ ('(' | '[' | '{')) => stack.push((open, Vec::new())),
            Tok::Sym(close @ (')' | ']' | '}')) => {
                if stack.len() > 1
                    && let Some((open, body)) = stack.pop()
                {
                    attach_group(&mut stack, open, Some(close), body);
                } else if let Some(top) = stack.last_mut() {
                    top.1.push(Node::Sym(close));
                }
            }
            other => {
                let node = match other {
                    Tok::Num(n) => Node::Num(n),
                    Tok::Word(w) => Node::Word(w),
                    Tok::Sym(s) => Node::Sym(s),
                    Tok::Radical(r) => Node::Radical(r),
                    Tok::Space => Node::Space,
                };
                if let Some(top) = stack.last_mut() {
                    top.1.push(node);
                }
            }
        }
    }
    while stack.len() > 1 {
        if let Some((open, body)) = stack.pop() {
            attach_group(&mut stack, open, None, body);
        }
    }
    stack.pop().map(|(_, nodes)| nodes).unwrap_or_default()
}

/// Adds a closed group to the enclosing level, as a call when it follows a function name.
fn attach_group(stack: &mut [(char, Vec<Node>)], open: char, close: Option<char>, body: Vec<Node>) {
    let Some(top) = stack.last_mut() else {
        return;
    };
    let nodes = &mut top.1;
    if open == '('
        && close == Some(')')
        && let Some(Node::Word(name)) = nodes.last()
        && CALLS.contains(&name.as_str())
    {
        let name = name.clone();
        nodes.pop();
        nodes.push(Node::Call { name, body });
        return;
    }
    nodes.push(Node::Group { open, close, body });
}

/// What a typst symbol name (or a common spelling of one) stands for.
fn symbol(word: &str) -> Option<&'static str> {
    Some(match word {
        "alpha" => "α",
        "beta" => "β",
        "gamma" => "γ",
        "Gamma" => "Γ",
        "delta" => "δ",
        "Delta" => "Δ",
        "epsilon" | "epsilon.alt" | "varepsilon" => "ε",
        "zeta" => "ζ",
        "eta" => "η",
        "theta" | "theta.alt" => "θ",
        "Theta" => "Θ",
        "iota" => "ι",
        "kappa" => "κ",
        "lambda" => "λ",
        "Lambda" => "Λ",
        "mu" => "μ",
        "nu" => "ν",
        "xi" => "ξ",
        "Xi" => "Ξ",
        "pi" => "π",
        "Pi" => "Π",
        "rho" => "ρ",
        "sigma" => "σ",
        "Sigma" => "Σ",
        "tau" => "τ",
        "upsilon" => "υ",
        "phi" | "phi.alt" | "varphi" => "φ",
        "Phi" => "Φ",
        "chi" => "χ",
        "psi" => "ψ",
        "Psi" => "Ψ",
        "omega" => "ω",
        "Omega" => "Ω",
        "infinity" | "oo" | "infty" => "∞",
        "union" => "∪",
        "inter" => "∩",
        "in" => "∈",
        "in.not" | "notin" => "∉",
        "subset" => "⊂",
        "subset.eq" => "⊆",
        "emptyset" | "nothing" => "∅",
        "without" | "setminus" => "∖",
        "degree" | "degrees" | "deg" => "°",
        "plus.minus" => "±",
        "minus.plus" => "∓",
        "times" | "dot" | "dot.op" | "dot.c" | "cdot" => "*",
        "div" => "/",
        "approx" => "≈",
        "equiv" => "≡",
        "prop" => "∝",
        "lt" => "<",
        "gt" => ">",
        "eq" => "=",
        "lt.eq" | "lt.eq.slant" | "leq" => "≤",
        "gt.eq" | "gt.eq.slant" | "geq" => "≥",
        "eq.not" | "neq" => "≠",
        "arrow" | "arrow.r" => "→",
        "arrow.r.double" | "implies" => "⇒",
        "arrow.l.r.double" | "iff" => "⇔",
        "therefore" => "∴",
        "dots" | "dots.h" | "dots.c" | "ldots" => "…",
        "prime" => "'",
        "partial" | "diff" => "∂",
        "nabla" => "∇",
        "integral" => "∫",
        "sum" => "∑",
        "product" => "∏",
        "dif" => "d",
        "RR" => "ℝ",
        "ZZ" => "ℤ",
        "NN" => "ℕ",
        "QQ" => "ℚ",
        "CC" => "ℂ",
        "angle" => "∠",
        "percent" => "%",
        "sqrt" => "√",
        "quad" | "wide" => "",
        _ => return None,
    })
}

/// Typst functions that only style their argument.
const STYLES: &[&str] = &[
    "bold", "upright", "italic", "sans", "serif", "mono", "cal", "frak", "lr", "op", "display",
    "inline", "script", "sscript",
];

/// Renders nodes to the comparable form (before `and` is settled by [`finish`]).
fn render(nodes: &[Node]) -> String {
    let mut r = Renderer::default();
    r.seq(nodes);
    r.out
}

/// Settles `and` (`,` unless the text holds an inequality) and drops repeated commas.
fn finish(rendered: &str) -> String {
    let inequality = rendered.contains(['<', '>', '≤', '≥']);
    let mut out = String::with_capacity(rendered.len());
    for c in rendered.chars() {
        if c == AND_MARK {
            if inequality {
                out.push_str("and");
            } else if !out.ends_with(',') {
                out.push(',');
            }
        } else if c == ',' && out.ends_with(',') {
            continue;
        } else {
            out.push(c);
        }
    }
    out
}

/// Accumulates rendered text; spaces are dropped except one between two numbers.
#[derive(Default)]
struct Renderer {
    out: String,
    pending_space: bool,
}

/// The index of the next node at or after `i` that is not a space.
fn next_non_space(nodes: &[Node], i: usize) -> Option<usize> {
    (i..nodes.len()).find(|&j| nodes[j] != Node::Space)
}

/// The index of the last node before `i` that is not a space.
fn prev_non_space(nodes: &[Node], i: usize) -> Option<usize> {
    (0..i).rev().find(|&j| nodes[j] != Node::Space)
}

/// Whether text starts with a digit, or with `.` and a digit.
fn starts_numeric(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii_digit() => true,
        Some('.') => chars.next().is_some_and(|c| c.is_ascii_digit()),
        _ => false,
    }
}

impl Renderer {
    fn push(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        if self.pending_space
            && self.out.ends_with(|c: char| c.is_ascii_digit())
            && starts_numeric(s)
        {
            self.out.push(' ');
        }
        self.pending_space = false;
        self.out.push_str(s);
    }

    fn push_char(&mut self, c: char) {
        let mut buf = [0u8; 4];
        self.push(c.encode_utf8(&mut buf));
    }

    /// Pushes an argument: bare if it is one number or letter, else in brackets.
    fn push_wrapped(&mut self, inner: &str) {
        if is_atom(inner) {
            self.push(inner);
        } else {
            self.push(&format!("({inner})"));
        }
    }

    fn seq(&mut self, nodes: &[Node]) {
        let mut i = 0;
        while i < nodes.len() {
            match &nodes[i] {
                Node::Space => self.pending_space = true,
                Node::Num(n) => self.push(n),
                Node::Word(w) => self.word(nodes, i, w),
                Node::Sym(c @ ('^' | '_')) => {
                    if let Some(j) = next_non_space(nodes, i + 1)
                        && let Node::Group {
                            open: '(',
                            close: Some(')'),
                            body,
                        } = &nodes[j]
                    {
                        self.push_char(*c);
                        self.push_wrapped(&render(body));
                        i = j + 1;
                        continue;
                    }
                    self.push_char(*c);
                }
                Node::Sym(c) => self.push_char(*c),
                Node::Radical(index) => {
                    match index {
                        Some(n) => self.push(&format!("√[{n}]")),
                        None => self.push("√"),
                    }
                    if let Some(j) = next_non_space(nodes, i + 1)
                        && let Node::Group {
                            open: '(',
                            close: Some(')'),
                            body,
                        } = &nodes[j]
                    {
                        self.push_wrapped(&render(body));
                        i = j + 1;
                        continue;
                    }
                }
                Node::Group { open, close, body } => {
                    let inner = render(body);
                    let round = *open == '(' && *close == Some(')');
                    let after_slash =
                        prev_non_space(nodes, i).is_some_and(|j| nodes[j] == Node::Sym('/'));
                    let before_slash =
                        next_non_space(nodes, i + 1).is_some_and(|j| nodes[j] == Node::Sym('/'));
                    // A denominator that is one number or letter or `dif x`; a numerator that is
                    // `dif y` or a plain product.
                    let bare = round
                        && if after_slash {
                            is_atom(&inner) || is_differential(&inner)
                        } else {
                            before_slash
                                && (is_differential(&inner)
                                    || (numerator_context(&self.out) && is_simple_product(&inner)))
                        };
                    if bare {
                        self.push(&inner);
                    } else {
                        let mut s = String::new();
                        s.push(*open);
                        s.push_str(&inner);
                        if let Some(c) = close {
                            s.push(*c);
                        }
                        self.push(&s);
                    }
                }
                Node::Call { name, body } => self.call(name, body),
            }
            i += 1;
        }
    }

    fn word(&mut self, nodes: &[Node], i: usize, w: &str) {
        let next = next_non_space(nodes, i + 1).map(|j| &nodes[j]);
        let after_digit = self.out.ends_with(|c: char| c.is_ascii_digit());
        if (w == "x" || w == "X")
            && after_digit
            && matches!(next, Some(Node::Num(n)) if n.starts_with(|c: char| c.is_ascii_digit()))
        {
            self.push("*");
            return;
        }
        if (w == "U" || w == "u")
            && self.out.ends_with([')', ']', '}'])
            && matches!(next, Some(Node::Group { .. }))
        {
            self.push("∪");
            return;
        }
        match w {
            "and" | "And" | "AND" => self.push_char(AND_MARK),
            "or" | "Or" | "OR" => self.push("or"),
            _ => self.push(symbol(w).unwrap_or(w)),
        }
    }

    fn call(&mut self, name: &str, body: &[Node]) {
        let args: Vec<&[Node]> = body.split(|n| *n == Node::Sym(',')).collect();
        match name {
            "sqrt" => {
                self.push("√");
                self.push_wrapped(&render(body));
            }
            "root" => {
                if let [index, radicand @ ..] = args.as_slice()
                    && !radicand.is_empty()
                {
                    let index = render(index);
                    let rest = &body[index_len(body)..];
                    self.push(&format!("√[{index}]"));
                    self.push_wrapped(&render(rest));
                } else {
                    self.push("√");
                    self.push_wrapped(&render(body));
                }
            }
            "abs" => self.push(&format!("|{}|", render(body))),
            "norm" => self.push(&format!("‖{}‖", render(body))),
            "frac" if args.len() == 2 => {
                let (a, b) = (render(args[0]), render(args[1]));
                let numerator = if is_atom(&a)
                    || is_differential(&a)
                    || (numerator_context(&self.out) && is_simple_product(&a))
                {
                    a
                } else {
                    format!("({a})")
                };
                let denominator = if is_atom(&b) || is_differential(&b) {
                    b
                } else {
                    format!("({b})")
                };
                self.push(&format!("{numerator}/{denominator}"));
            }
            "bb" => {
                let inner = render(body);
                let blackboard = match inner.as_str() {
                    "R" => "ℝ",
                    "Z" => "ℤ",
                    "N" => "ℕ",
                    "Q" => "ℚ",
                    "C" => "ℂ",
                    _ => "",
                };
                if blackboard.is_empty() {
                    self.push(&inner);
                } else {
                    self.push(blackboard);
                }
            }
            _ if STYLES.contains(&name) => {
                let inner = render(body);
                self.push(&inner);
            }
            _ => self.push(&format!("{name}({})", render(body))),
        }
    }
}

/// How many nodes of `root(…)`'s body come before the radicand (the index and its comma).
fn index_len(body: &[Node]) -> usize {
    body.iter()
        .position(|n| *n == Node::Sym(','))
        .map_or(body.len(), |p| p + 1)
}

/// One number, one letter (or `∞`), or either negated.
fn is_atom(s: &str) -> bool {
    let body = s.strip_prefix('-').unwrap_or(s);
    if is_number_text(body) {
        return true;
    }
    let mut chars = body.chars();
    matches!((chars.next(), chars.next()), (Some(c), None) if c.is_alphabetic() || c == '∞')
}

/// Digits with at most one decimal point.
fn is_number_text(s: &str) -> bool {
    s.chars().any(|c| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_digit() || c == '.')
        && s.matches('.').count() <= 1
}

/// `d` and one letter: `dx`, `dt`.
fn is_differential(s: &str) -> bool {
    let mut chars = s.chars();
    let (first, second, third) = (chars.next(), chars.next(), chars.next());
    first == Some('d') && third.is_none() && second.is_some_and(char::is_alphabetic)
}

/// Whether a bracketed numerator may lose its brackets after what has been rendered: at the
/// start, or after an operator, relation, separator or opening bracket.
fn numerator_context(out: &str) -> bool {
    match out.chars().last() {
        None => true,
        Some(c) => "+-±∓=<>≤≥≠≈,;:([{*⇒→∴".contains(c) || c == AND_MARK,
    }
}

/// A product of factors: nothing at top level that binds more loosely than `*` and `/`, apart
/// from a leading minus.
fn is_simple_product(s: &str) -> bool {
    if s.is_empty() || s.contains("or") {
        return false;
    }
    let mut depth = 0i32;
    for (k, c) in s.chars().enumerate() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ if depth == 0
                && ("+-±∓=<>≤≥≠≈,;:∈∉∪∩ |…→⇒".contains(c) || c == AND_MARK)
                && !(k == 0 && c == '-') =>
            {
                return false;
            }
            _ => {}
        }
    }
    true
}

// ---------------------------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------------------------

/// A non-negative rational number in lowest terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ratio {
    num: i128,
    den: i128,
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

impl Ratio {
    fn new(num: i128, den: i128) -> Option<Ratio> {
        if den <= 0 || num < 0 {
            return None;
        }
        let g = gcd(num, den).max(1);
        Some(Ratio {
            num: num / g,
            den: den / g,
        })
    }

    /// `12.340` → 1234/100, with its decimal places (3); `.5` → 1/2 with 1 place.
    fn decimal(text: &str) -> Option<(Ratio, u32)> {
        let (int, frac) = text.split_once('.').unwrap_or((text, ""));
        let digits = format!("{int}{frac}");
        if digits.is_empty() || digits.len() > 30 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let places = u32::try_from(frac.len()).ok()?;
        let num: i128 = digits.parse().ok()?;
        let den = 10i128.checked_pow(places)?;
        Some((Ratio::new(num, den)?, places))
    }

    /// The value times 10^places, rounded half away from zero (the value is non-negative).
    fn round_to(self, places: u32) -> Option<i128> {
        let scaled = self.num.checked_mul(10i128.checked_pow(places)?)?;
        let doubled = scaled.checked_mul(2)?.checked_add(self.den)?;
        Some(doubled / self.den.checked_mul(2)?)
    }
}

/// A decimal with an optional leading minus: (negative, magnitude).
fn signed_decimal(text: &str) -> Option<(bool, Ratio)> {
    signed_decimal_places(text).map(|(neg, r, _)| (neg, r))
}

/// A decimal with an optional leading minus (any spelling): (negative, magnitude, places).
fn signed_decimal_places(text: &str) -> Option<(bool, Ratio, u32)> {
    let canon = normalise(text);
    let (neg, digits) = match canon.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, canon.as_str()),
    };
    if !is_number_text(digits) {
        return None;
    }
    let (r, places) = Ratio::decimal(digits)?;
    Some((neg, r, places))
}

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

/// Significant figures shown by a written number: leading zeros never count, trailing zeros of
/// an integer do not either (`130` → 2, `0.0300` → 3).
fn significant(text: &str) -> u32 {
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_start_matches('0');
    let digits = if text.contains('.') {
        digits
    } else {
        digits.trim_end_matches('0')
    };
    u32::try_from(digits.len()).unwrap_or(u32::MAX)
}

/// What the notes allow, prepared for comparing.
#[derive(Debug, Clone, Default)]
struct Allowance {
    /// Stated `awrt` figures: magnitude times 10^places, and places.
    figures: Vec<(i128, u32)>,
    every_decimal: bool,
    significant_figures: Option<u32>,
    /// A `cao` note: fractions and decimals do not stand for each other.
    cao: bool,
}

impl Allowance {
    fn from_notes(notes: &[String]) -> Allowance {
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
const RELATIONS: [char; 10] = ['=', '<', '>', '≤', '≥', '≠', '≈', '∈', '∉', '≡'];

/// An accepted answer, prepared for comparing.
#[derive(Debug, Clone)]
struct Accepted {
    canon: String,
    pieces: Vec<Piece>,
    /// Labels: the text before the first top-level relation of each comma-separated item.
    labels: Vec<String>,
    /// The most written words that can make it.
    max_words: usize,
}

impl Accepted {
    fn new(text: &str) -> Option<Accepted> {
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
    fn compare(&self, written: &str, allow: &Allowance) -> Option<MatchKind> {
        if self.canon == written {
            return Some(MatchKind::Exact);
        }
        if let Some(kind) = compare_pieces(&self.pieces, &pieces(written), allow) {
            return Some(kind.max(MatchKind::Equivalent));
        }
        self.compare_reordered(written, allow)
    }

    /// Lists of equations, or of single numbers, in another order.
    fn compare_reordered(&self, written: &str, allow: &Allowance) -> Option<MatchKind> {
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

    fn labelled(&self) -> bool {
        !self.labels.is_empty()
    }
}

// ---------------------------------------------------------------------------------------------
// Finding
// ---------------------------------------------------------------------------------------------

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
struct Space<'w, 'a> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Words laid out line by line, split at spaces: line `k` at y = 0.1 + 0.05k, words 0.06
    /// apart.
    fn lines<'a>(text: &[&'a str]) -> Vec<WordBox<'a>> {
        let mut out = Vec::new();
        for (k, line) in text.iter().enumerate() {
            for (j, word) in line.split_whitespace().enumerate() {
                out.push(WordBox {
                    text: word,
                    x: 0.1 + 0.06 * j as f64,
                    y: 0.1 + 0.05 * k as f64,
                    width: 0.05,
                    height: 0.03,
                });
            }
        }
        out
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    /// `find` on lines of text: (answer index, quote, kind).
    fn found(
        text: &[&str],
        accepted: &[&str],
        notes: &[&str],
    ) -> Option<(usize, String, MatchKind)> {
        let words = lines(text);
        find(&words, &strings(accepted), &strings(notes)).map(|f| (f.answer, f.quote, f.how))
    }

    #[test]
    fn normalises_accepted_answers() {
        let cases = [
            ("$k = 1$, $k = 4$", "k=1,k=4"),
            ("$1$ and $4$", "1,4"),
            ("$k < 1$ or $k > 4$", "k<1ork>4"),
            ("${k : k < 1} union {k : k > 4}$", "{k:k<1}∪{k:k>4}"),
            (
                "$k in (-infinity, 1) union (4, infinity)$",
                "k∈(-∞,1)∪(4,∞)",
            ),
            ("$sqrt(25)$", "√25"),
            ("$sqrt(x + 1)$", "√(x+1)"),
            ("$4x + y - 27 = 0$", "4x+y-27=0"),
            ("$-256x$", "-256x"),
            ("$5/root(4, 3)$", "5/√[4]3"),
            ("$root(3, x + 1)$", "√[3](x+1)"),
            ("$2 pi$", "2π"),
            ("$theta = 60 degree$", "θ=60°"),
            ("$x^2 - 5x + 4$", "x^2-5x+4"),
            ("$3/4$", "3/4"),
            ("$0.75$", "0.75"),
            ("$y = 2x - 1$", "y=2x-1"),
            ("$(3, -2)$", "(3,-2)"),
            ("$a = 1.96$ m s$^(-2)$", "a=1.96ms^-2"),
            ("$a = 1.96$ m s⁻²", "a=1.96ms^-2"),
            ("$20 root(3)$", "20√3"),
            ("$e^(2x) - 5e^x + 2 = 0$", "e^(2x)-5e^x+2=0"),
            ("$(10 sqrt(3))/3$", "10√3/3"),
            ("$3x (dif y)/(dif x) + 3y$", "3xdy/dx+3y"),
            ("$sin B = (5 sin 38°)/(4.34)$", "sinB=5sin38°/4.34"),
            (
                "there is a root $alpha$ with $1 < alpha < 2$",
                "thereisarootαwith1<α<2",
            ),
            ("$(5 pi)/6$", "5π/6"),
            ("$x^2 sqrt(3)$", "x^2√3"),
            ("$(x + 4)/x$", "(x+4)/x"),
            ("$1/(6x) + 1/(6(6 - x))$", "1/(6x)+1/(6(6-x))"),
            ("$(dif y)/(dif x) = -8/7$", "dy/dx=-8/7"),
            ("$z = 2 plus.minus 3i$", "z=2±3i"),
            ("$P(X <= 4) = 0.238$", "P(X≤4)=0.238"),
            ("$abs(z) = 5$", "|z|=5"),
            ("$\"Var\"(X) = 0.8$", "Var(X)=0.8"),
            ("$x in RR, x > 0$", "x∈ℝ,x>0"),
            ("$v_A = u$ and $v_B = 3u$", "v_A=u,v_B=3u"),
            ("$x_(1) = 1.7692$", "x_1=1.7692"),
            ("$3 bold(i) + 4 bold(j)$", "3i+4j"),
            ("$frac(1, 2)$", "1/2"),
            ("$a = 11$ and $d = 3$", "a=11,d=3"),
            ("$theta = 12°, 60°$", "θ=12°,60°"),
            ("$2 times 3$", "2*3"),
        ];
        for (text, want) in cases {
            assert_eq!(normalise(text), want, "{text}");
        }
    }

    #[test]
    fn normalises_written_text() {
        let cases = [
            ("k<1 or k>4", "k<1ork>4"),
            ("k < 1 , k > 4", "k<1,k>4"),
            ("k<1 and k>4", "k<1andk>4"),
            ("x = 3", "x=3"),
            ("−256x", "-256x"),
            ("–256x", "-256x"),
            ("3×4", "3*4"),
            ("3x4", "3*4"),
            ("3 X 4", "3*4"),
            ("3·4", "3*4"),
            ("3x + 4", "3x+4"),
            ("√25", "√25"),
            ("√(25)", "√25"),
            ("∜3", "√[4]3"),
            ("⁴√3", "√[4]3"),
            ("x²√3", "x^2√3"),
            ("2 ³√5", "2√[3]5"),
            ("x²-5x+4", "x^2-5x+4"),
            ("ms⁻²", "ms^-2"),
            ("x₁", "x_1"),
            ("k ∈ (−∞, 1) ∪ (4, ∞)", "k∈(-∞,1)∪(4,∞)"),
            ("k∈(-∞,1)U(4,∞)", "k∈(-∞,1)∪(4,∞)"),
            ("{k:k<1} u {k:k>4}", "{k:k<1}∪{k:k>4}"),
            ("60º", "60°"),
            ("x ≤ 3", "x≤3"),
            ("x <= 3", "x≤3"),
            ("k > -1", "k>-1"),
            ("k<-1", "k<-1"),
            ("2 3", "2 3"),
            ("2 .5", "2 .5"),
            ("1 and 4", "1,4"),
            ("1, 2, and 3", "1,2,3"),
            ("dy/dx", "dy/dx"),
            ("(5π)/6", "5π/6"),
            ("2(5π)/6", "2(5π)/6"),
            ("ＡＢ＝７", "AB=7"),
            ("2 pi", "2π"),
            ("2pi", "2π"),
            ("pix", "pix"),
            ("s in x", "s∈x"),
            ("sin x", "sinx"),
            ("Or", "or"),
            ("[1, 4)", "[1,4)"),
        ];
        for (text, want) in cases {
            assert_eq!(normalise(text), want, "{text}");
        }
    }

    #[test]
    fn normalising_twice_changes_nothing() {
        for text in [
            "$5/root(4, 3)$",
            "$(dif y)/(dif x) = -(2x + 3y)/(3x + 2y)$",
            "$k < 1$ or $k > 4$",
            "$1$ and $4$",
            "$a = 1.96$ m s$^(-2)$",
            "$e^(2x) - 5e^x + 2 = 0$",
            "${k : k < 1} union {k : k > 4}$",
            "$(10 sqrt(3))/3$",
        ] {
            let once = normalise(text);
            assert_eq!(normalise(&once), once, "{text}");
        }
    }

    #[test]
    fn reads_awrt_notes() {
        let a = awrt(&strings(&["awrt 2.35"])).expect("awrt");
        assert_eq!(
            a.figures,
            vec![Figure {
                text: "2.35".into(),
                places: 2
            }]
        );
        assert!((a.figures[0].tolerance() - 0.005).abs() < 1e-12);
        assert!((a.figures[0].value() - 2.35).abs() < 1e-12);
        let cases: [(&str, &str, u32); 6] = [
            ("awrt 0.693", "0.693", 3),
            ("awrt −0.927", "-0.927", 3),
            ("awrt 53.13°", "53.13", 2),
            ("awrt 0.238 (0.2375...)", "0.238", 3),
            ("awrt 0.0228 for the probability", "0.0228", 4),
            ("awrt 126", "126", 0),
        ];
        for (note, text, places) in cases {
            let a = awrt(&strings(&[note])).expect(note);
            assert_eq!(a.figures.len(), 1, "{note}");
            assert_eq!(a.figures[0].text, text, "{note}");
            assert_eq!(a.figures[0].places, places, "{note}");
            assert!(!a.every_decimal);
        }
        let bare = awrt(&strings(&["awrt", "extra solutions lose this mark"])).expect("bare");
        assert!(bare.figures.is_empty() && bare.every_decimal);
        let sf = awrt(&strings(&["accept 3 s.f."])).expect("s.f.");
        assert_eq!(sf.significant_figures, Some(3));
        assert_eq!(awrt(&strings(&["cao", "oe", "drawn to scale"])), None);
        assert_eq!(awrt(&strings(&[])), None);
        assert_eq!(awrt(&strings(&["answers to 3 s.f. only"])), None);
    }

    #[test]
    fn figures_admit_values_that_round_to_them() {
        let f = Figure {
            text: "2.35".into(),
            places: 2,
        };
        for (written, ok) in [
            ("2.349", true),
            ("2.35", true),
            ("2.345", true),
            ("2.3549", true),
            ("2.355", false),
            ("2.3449", false),
            ("2.36", false),
            ("2.3", false),
            ("-2.35", false),
        ] {
            assert_eq!(f.admits(written), ok, "{written}");
        }
        let g = Figure {
            text: "-0.927".into(),
            places: 3,
        };
        assert!(g.admits("−0.9273"));
        assert!(!g.admits("0.9273"));
    }

    #[test]
    fn finds_written_forms_of_each_example() {
        let cases: [(&str, &str, MatchKind); 25] = [
            ("$k = 1$, $k = 4$", "k = 1, k = 4", MatchKind::Exact),
            ("$k = 1$, $k = 4$", "k=1 and k=4", MatchKind::Exact),
            ("$1$ and $4$", "1 and 4", MatchKind::Exact),
            ("$1$ and $4$", "1, 4", MatchKind::Exact),
            ("$k < 1$ or $k > 4$", "k<1 or k>4", MatchKind::Exact),
            ("$k < 1$ or $k > 4$", "k < 1 or k > 4", MatchKind::Exact),
            (
                "${k : k < 1} union {k : k > 4}$",
                "{k: k<1} ∪ {k: k>4}",
                MatchKind::Exact,
            ),
            (
                "$k in (-infinity, 1) union (4, infinity)$",
                "k ∈ (−∞, 1) U (4, ∞)",
                MatchKind::Exact,
            ),
            ("$sqrt(25)$", "√25", MatchKind::Exact),
            ("$4x + y - 27 = 0$", "4x + y - 27 = 0", MatchKind::Exact),
            ("$-256x$", "−256x", MatchKind::Exact),
            ("$5/root(4, 3)$", "5/∜3", MatchKind::Exact),
            ("$2 pi$", "2π", MatchKind::Exact),
            ("$theta = 60 degree$", "θ = 60°", MatchKind::Exact),
            ("$x^2 - 5x + 4$", "x² - 5x + 4", MatchKind::Exact),
            ("$3/4$", "3/4", MatchKind::Exact),
            ("$3/4$", "0.75", MatchKind::Equivalent),
            ("$0.75$", ".75", MatchKind::Equivalent),
            ("$0.75$", "3/4", MatchKind::Equivalent),
            ("$y = 2x - 1$", "y=2x-1", MatchKind::Exact),
            ("$(3, -2)$", "(3,-2)", MatchKind::Exact),
            ("$a = 1.96$ m s$^(-2)$", "a = 1.96 m s^-2", MatchKind::Exact),
            ("$a = 1.96$ m s$^(-2)$", "a=1.96ms⁻²", MatchKind::Exact),
            ("$20 root(3)$", "20√3", MatchKind::Exact),
            ("$(10 sqrt(3))/3$", "(10√3)/3", MatchKind::Exact),
        ];
        for (accepted, written, how) in cases {
            let got = found(&[written], &[accepted], &[]);
            assert_eq!(
                got,
                Some((
                    0,
                    written.split_whitespace().collect::<Vec<_>>().join(" "),
                    how
                )),
                "{accepted} vs {written}"
            );
        }
    }

    #[test]
    fn rejects_what_is_not_the_answer() {
        let cases: [(&[&str], &[&str], &[&str]); 23] = [
            (&["13"], &["$3$"], &[]),
            (&["x^3"], &["$3$"], &[]),
            (&["3x + 4"], &["$3$"], &[]),
            (&["3x + 4 = 13"], &["$3$"], &[]),
            (&["k<1 and k>4"], &["$k < 1$ or $k > 4$"], &[]),
            (&["k < 1 , k > 4"], &["$k < 1$ or $k > 4$"], &[]),
            (&["x=3.5"], &["$x = 3$"], &[]),
            (&["x = 3.5"], &["$3$"], &[]),
            (&["-256"], &["$-256x$"], &[]),
            (&["256x"], &["$-256x$"], &[]),
            (&["y = 3"], &["$x = 3$"], &[]),
            (&["2 = 2x - 1"], &["$y = 2x - 1$"], &[]),
            (&["X = 3"], &["$x = 3$"], &[]),
            (&["x = 5 or x = -1"], &["$x = 5$", "$5$"], &["cso"]),
            (&["x = 5", "x = -1"], &["$x = 5$", "$5$"], &["cso"]),
            (&["x = 3 + y"], &["$x = 3$"], &[]),
            (&["(x+1)^2"], &["$x^2 + 2x + 1$"], &["oe"]),
            (&["6/8"], &["$3/4$"], &[]),
            (&["3.8"], &["$3.80$"], &[]),
            (&["3"], &["$3.0$"], &[]),
            (&["2 3"], &["$23$"], &[]),
            (&["1/2x"], &["$0.5 x$"], &[]),
            (&["3/4x"], &["$0.75x$"], &[]),
        ];
        for (written, accepted, notes) in cases {
            assert_eq!(
                found(written, accepted, notes),
                None,
                "{written:?} vs {accepted:?}"
            );
        }
    }

    #[test]
    fn bare_numbers_stand_alone_at_the_end() {
        let three = &["$3$"];
        let cases: [(&[&str], Option<&str>); 14] = [
            (&["3"], Some("3")),
            (&["x = 3"], Some("3")),
            (&["3x + 4 = 13", "3x = 9", "x = 3"], Some("3")),
            (&["3x + 4 = 13", "3x = 9", "x=3"], Some("x=3")),
            (&["Answer: 3"], Some("3")),
            (&["answer 3"], Some("3")),
            (&["so 3"], Some("3")),
            (&["x = 3", "check: 3(3) + 4 = 13"], None),
            (&["x = 3 or 13"], None),
            (&["try 3"], None),
            (&["3 4"], None),
            (&["x = 3 ."], Some("3")),
            (&["(b) 3"], Some("3")),
            (&["(x) 3"], None),
        ];
        for (written, quote) in cases {
            let got = found(written, three, &[]).map(|f| f.1);
            assert_eq!(got.as_deref(), quote, "{written:?}");
        }
    }

    #[test]
    fn labelled_answers_stand_at_a_line_end() {
        type Case<'a> = (&'a [&'a str], &'a [&'a str], Option<(usize, &'a str)>);
        let cases: [Case<'_>; 12] = [
            (&["x=3"], &["$x = 3$"], Some((0, "x=3"))),
            (&["x = 3", "so y = 5"], &["$x = 3$"], Some((0, "x = 3"))),
            (
                &["so k<1 or k>4"],
                &["$k < 1$ or $k > 4$"],
                Some((0, "k<1 or k>4")),
            ),
            (
                &["(k-1)(k-4) > 0", "so k<1 or k>4"],
                &["$k < 1$ or $k > 4$"],
                Some((0, "k<1 or k>4")),
            ),
            (
                &["k < 1 or", "k > 4"],
                &["$k < 1$ or $k > 4$"],
                Some((0, "k < 1 or k > 4")),
            ),
            (&["k < 1 or", "k > 4"], &["$k > 4$"], None),
            (&["0 < k < 1"], &["$k < 1$"], None),
            (
                &["x^2 - 4x - 5 = 0", "x = 5 or x = -1", "x > 0 so x = 5"],
                &["$x = 5$", "$5$"],
                Some((0, "x = 5")),
            ),
            (&["x = 5", "x = 5"], &["$x = 5$", "$5$"], Some((0, "x = 5"))),
            (&["x = 3 (reject)"], &["$x = 3$"], None),
            (
                &["fg(3) = 2(3) + 1 = 7"],
                &["$f g(3) = 7$", "$7$"],
                Some((1, "7")),
            ),
            (
                &["fg(3)=2(3)+1=7"],
                &["$f g(3) = 7$", "$7$"],
                Some((1, "fg(3)=2(3)+1=7")),
            ),
        ];
        for (written, accepted, want) in cases {
            let got = found(written, accepted, &[]).map(|f| (f.0, f.1));
            assert_eq!(
                got,
                want.map(|(i, q)| (i, q.to_string())),
                "{written:?} vs {accepted:?}"
            );
        }
    }

    #[test]
    fn rounds_under_awrt() {
        let cases: [(&str, &str, &str, Option<MatchKind>); 20] = [
            (
                "$a = 1.96$ m s⁻²",
                "a = 1.955 m s^-2",
                "awrt 1.96",
                Some(MatchKind::Rounded),
            ),
            (
                "$R_C = 126$ N",
                "R_C = 125.7 N",
                "awrt 126",
                Some(MatchKind::Rounded),
            ),
            ("$t = 2 ln 5$", "t = 2.4 ln 5", "awrt 2", None),
            ("$x^2$", "x^2.1", "awrt 2", None),
            (
                "$0.3783$, compared with $abs(r) = 0.412$",
                "0.37829, compared with |r| = 0.412",
                "awrt",
                Some(MatchKind::Rounded),
            ),
            ("$1/3$", "0.333", "awrt 0.333", None),
            ("$2.35$", "2.349", "awrt 2.35", Some(MatchKind::Rounded)),
            ("$2.35$", "2.35", "awrt 2.35", Some(MatchKind::Exact)),
            ("$2.35$", "2.3512", "awrt 2.35", Some(MatchKind::Rounded)),
            ("$2.35$", "2.36", "awrt 2.35", None),
            ("$2.35$", "2.3", "awrt 2.35", None),
            ("$2.35$", "2.349", "oe", None),
            ("$0.693$", "0.6931", "awrt 0.693", Some(MatchKind::Rounded)),
            ("$0.693$", "0.69", "awrt 0.693", None),
            ("$0.693$", "0.694", "awrt 0.693", None),
            (
                "$arg z = -0.927$",
                "arg z = −0.9273",
                "awrt -0.927",
                Some(MatchKind::Rounded),
            ),
            ("$arg z = -0.927$", "arg z = 0.9273", "awrt -0.927", None),
            (
                "$alpha = 53.13°$",
                "α = 53.130°",
                "awrt 53.13°",
                Some(MatchKind::Equivalent),
            ),
            (
                "$alpha = 53.13°$",
                "α = 53.1301°",
                "awrt 53.13°",
                Some(MatchKind::Rounded),
            ),
            (
                "$theta = 103.3°$",
                "θ = 103.27°",
                "awrt",
                Some(MatchKind::Rounded),
            ),
        ];
        for (accepted, written, note, want) in cases {
            let got = found(&[written], &[accepted], &[note]).map(|f| f.2);
            assert_eq!(got, want, "{accepted} vs {written} ({note})");
        }
    }

    #[test]
    fn rounds_under_significant_figures() {
        let notes = &["accept 3 s.f."];
        assert_eq!(
            found(&["5.10"], &["$5.0990$"], notes).map(|f| f.2),
            Some(MatchKind::Rounded)
        );
        assert_eq!(
            found(&["5.099"], &["$5.0990$"], notes).map(|f| f.2),
            Some(MatchKind::Rounded)
        );
        assert_eq!(found(&["5.1"], &["$5.0990$"], notes), None);
        assert_eq!(found(&["5.11"], &["$5.0990$"], notes), None);
        assert_eq!(found(&["5.10"], &["$5.0990$"], &[]), None);
    }

    #[test]
    fn numbers_compare_by_value() {
        let cases: [(&str, &str, &[&str], Option<MatchKind>); 14] = [
            ("$0.75$", "0.750", &[], Some(MatchKind::Equivalent)),
            ("$3$", "3.0", &[], Some(MatchKind::Equivalent)),
            ("$x = 3/4$", "x = 0.75", &[], Some(MatchKind::Equivalent)),
            ("$x = 3/4$", "x = .75", &[], Some(MatchKind::Equivalent)),
            ("$x = -3/4$", "x = −0.75", &[], Some(MatchKind::Equivalent)),
            ("$3/4$", "0.75", &["cao"], None),
            ("$0.750$", "0.75", &[], None),
            ("$0.75$", "0.7500", &["cao"], Some(MatchKind::Equivalent)),
            ("$-8/7$", "-8/7", &[], Some(MatchKind::Exact)),
            ("$1/3$", "0.333", &[], None),
            ("$3/4$", "3/4", &["cao"], Some(MatchKind::Exact)),
            ("$(3, -2)$", "(3.0, -2)", &[], Some(MatchKind::Equivalent)),
            ("$k = 1/10$", "k = 0.1", &[], Some(MatchKind::Equivalent)),
            ("$3/4$", "4/1", &[], None),
        ];
        for (accepted, written, notes, want) in cases {
            let got = found(&[written], &[accepted], notes).map(|f| f.2);
            assert_eq!(got, want, "{accepted} vs {written} {notes:?}");
        }
    }

    #[test]
    fn lists_match_in_another_order() {
        assert_eq!(
            found(&["k = 4, k = 1"], &["$k = 1$, $k = 4$"], &[]).map(|f| f.2),
            Some(MatchKind::Equivalent)
        );
        assert_eq!(
            found(&["4 and 1"], &["$1$ and $4$"], &[]).map(|f| f.2),
            Some(MatchKind::Equivalent)
        );
        assert_eq!(
            found(&["d = 3 and a = 11"], &["$a = 11$ and $d = 3$"], &[]).map(|f| f.2),
            Some(MatchKind::Equivalent)
        );
        assert_eq!(found(&["k>4 or k<1"], &["$k < 1$ or $k > 4$"], &[]), None);
        assert_eq!(found(&["(-2, 3)"], &["$(3, -2)$"], &[]), None);
        assert_eq!(found(&["k = 1, k = 1"], &["$k = 1$, $k = 4$"], &[]), None);
    }

    #[test]
    fn ignores_ocr_noise() {
        let words = vec![
            WordBox {
                text: "k<1",
                x: 0.1,
                y: 0.2,
                width: 0.05,
                height: 0.03,
            },
            WordBox {
                text: ".",
                x: 0.16,
                y: 0.21,
                width: 0.005,
                height: 0.005,
            },
            WordBox {
                text: "or",
                x: 0.2,
                y: 0.2,
                width: 0.03,
                height: 0.03,
            },
            WordBox {
                text: "'",
                x: 0.24,
                y: 0.19,
                width: 0.005,
                height: 0.005,
            },
            WordBox {
                text: "k>4",
                x: 0.3,
                y: 0.2,
                width: 0.05,
                height: 0.03,
            },
            WordBox {
                text: "....",
                x: 0.1,
                y: 0.4,
                width: 0.5,
                height: 0.01,
            },
        ];
        let f = find(&words, &strings(&["$k < 1$ or $k > 4$"]), &[]).expect("found");
        assert_eq!(f.words, vec![0, 2, 4]);
        assert_eq!(f.quote, "k<1 or k>4");
        assert_eq!(f.how, MatchKind::Exact);
    }

    #[test]
    fn reads_lines_in_order_whatever_the_word_order() {
        // Given bottom line first and right to left; slight baseline drift within lines.
        let words = vec![
            WordBox {
                text: "5",
                x: 0.4,
                y: 0.301,
                width: 0.02,
                height: 0.03,
            },
            WordBox {
                text: "=",
                x: 0.3,
                y: 0.298,
                width: 0.02,
                height: 0.03,
            },
            WordBox {
                text: "x",
                x: 0.2,
                y: 0.3,
                width: 0.02,
                height: 0.03,
            },
            WordBox {
                text: "-1",
                x: 0.5,
                y: 0.205,
                width: 0.03,
                height: 0.03,
            },
            WordBox {
                text: "=",
                x: 0.4,
                y: 0.2,
                width: 0.02,
                height: 0.03,
            },
            WordBox {
                text: "x",
                x: 0.3,
                y: 0.195,
                width: 0.02,
                height: 0.03,
            },
            WordBox {
                text: "or",
                x: 0.25,
                y: 0.2,
                width: 0.03,
                height: 0.03,
            },
            WordBox {
                text: "x=5",
                x: 0.1,
                y: 0.2,
                width: 0.05,
                height: 0.03,
            },
        ];
        let f = find(&words, &strings(&["$x = 5$", "$5$"]), &strings(&["cso"])).expect("found");
        assert_eq!(f.words, vec![2, 1, 0]);
        assert_eq!(f.quote, "x = 5");
        assert_eq!(f.answer, 0);
        // Top line only: the two values must not be awarded.
        let top: Vec<WordBox<'_>> = words[3..].to_vec();
        assert_eq!(
            find(&top, &strings(&["$x = 5$", "$5$"]), &strings(&["cso"])),
            None
        );
    }

    #[test]
    fn quotes_words_as_written() {
        let words = lines(&["so", "k <1", "or  k>4 ."]);
        let f = find(&words, &strings(&["$k < 1$ or $k > 4$"]), &[]).expect("found");
        assert_eq!(f.quote, "k <1 or k>4");
        assert_eq!(f.words, vec![1, 2, 3, 4]);
    }

    #[test]
    fn later_statements_of_a_label_override() {
        let acc = &["$x = 5$"];
        assert_eq!(found(&["x = 5", "x = -1"], acc, &[]), None);
        assert_eq!(found(&["x = 5", "so x > 0"], acc, &[]), None);
        assert_eq!(
            found(&["x = -1", "x = 5"], acc, &[]).map(|f| f.1),
            Some("x = 5".to_string())
        );
        assert_eq!(
            found(&["x = 5", "y = 2x - 1 = 9"], acc, &[]).map(|f| f.1),
            Some("x = 5".to_string())
        );
        // A continuation line carries the statement on.
        assert_eq!(found(&["y = 2x - 1", "+ 3"], &["$y = 2x - 1$"], &[]), None);
    }

    #[test]
    fn negative_values_may_start_a_line() {
        assert_eq!(
            found(&["expand:", "−256x"], &["$-256x$"], &[]).map(|f| f.1),
            Some("−256x".to_string())
        );
        assert_eq!(
            found(&["2^8 x (-1/4)", "= -256x"], &["$-256x$"], &[]).map(|f| f.1),
            Some("-256x".to_string())
        );
        // An expression left open at a line end carries on.
        assert_eq!(found(&["x^2 + 5x -", "256x"], &["$256x$"], &[]), None);
        // Nor can a run start with an operator that needs something before it.
        assert_eq!(found(&["x^2", "* 4"], &["$* 4$"], &[]), None);
    }

    #[test]
    fn derivatives_and_fractions_of_products() {
        let cases: [(&str, &str); 5] = [
            ("$3x (dif y)/(dif x) + 3y$", "3x dy/dx + 3y"),
            ("$(dif y)/(dif x) = -8/7$", "dy/dx = -8/7"),
            ("$(5 pi)/6$", "5π/6"),
            ("$(1000 sqrt(3))/49$", "1000√3/49"),
            ("$sin B = (5 sin 38°)/(4.34)$", "sin B = 5 sin 38° / 4.34"),
        ];
        for (accepted, written) in cases {
            assert_eq!(
                found(&[written], &[accepted], &[]).map(|f| f.2),
                Some(MatchKind::Exact),
                "{accepted} vs {written}"
            );
        }
        assert_eq!(found(&["1/2x"], &["$1/(2x)$"], &[]), None);
        assert_eq!(found(&["2(5π)/6"], &["$(5 pi)/6$"], &[]), None);
    }

    #[test]
    fn a_full_page_is_searched_quickly() {
        let line = "3x + 4 = 13 so 3x = 9 and then x = 3 is what we get after all";
        let text: Vec<&str> = std::iter::repeat_n(line, 40).collect();
        let words = lines(&text);
        let accepted = strings(&[
            "Reject $H_0$: there is evidence that the mean cycle time has increased",
            "$x = 5$",
            "$(x - 3)^2 + (y + 2)^2 = 25$",
        ]);
        let started = std::time::Instant::now();
        assert_eq!(find(&words, &accepted, &[]), None);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn stacked_fractions_are_not_read_as_lines() {
        let word = |text, x, y| WordBox {
            text,
            x,
            y,
            width: 0.02,
            height: 0.03,
        };
        // `x = 3/4` with the fraction stacked: the numerator and denominator sit apart from the
        // line of `x =`, one of them grouped with it.
        let words = vec![
            word("x", 0.1, 0.2),
            word("=", 0.13, 0.2),
            word("3", 0.16, 0.18),
            word("4", 0.16, 0.215),
        ];
        assert_eq!(find(&words, &strings(&["$x = 4$", "$4$"]), &[]), None);
        assert_eq!(find(&words, &strings(&["$3$"]), &[]), None);
        // With only a bar read under the numerator (the denominator lost).
        let words = vec![
            word("x", 0.1, 0.2),
            word("=", 0.13, 0.2),
            word("3", 0.16, 0.2),
            WordBox {
                text: "__",
                x: 0.155,
                y: 0.232,
                width: 0.03,
                height: 0.004,
            },
        ];
        assert_eq!(find(&words, &strings(&["$x = 3$", "$3$"]), &[]), None);
        // Ordinary lines one under another are not stacked.
        assert_eq!(
            found(&["3x = 9", "x = 3"], &["$x = 3$"], &[]).map(|f| f.1),
            Some("x = 3".to_string())
        );
        // Nor are a long printed rule under the answer.
        let words = vec![
            word("x", 0.1, 0.2),
            word("=", 0.13, 0.2),
            word("3", 0.16, 0.2),
            WordBox {
                text: "________________",
                x: 0.05,
                y: 0.232,
                width: 0.6,
                height: 0.005,
            },
        ];
        assert_eq!(
            find(&words, &strings(&["$x = 3$"]), &[]).map(|f| f.quote),
            Some("x = 3".to_string())
        );
    }

    #[test]
    fn prose_and_units() {
        assert_eq!(
            found(&["angle ABC = 45.2°"], &["angle $A B C = 45.2°$"], &[]).map(|f| f.2),
            Some(MatchKind::Exact)
        );
        assert_eq!(
            found(&["centre (3, -2)"], &["centre $(3, -2)$"], &[]).map(|f| f.2),
            Some(MatchKind::Exact)
        );
        assert_eq!(
            found(&["8 m"], &["$8$ m"], &[]).map(|f| f.2),
            Some(MatchKind::Exact)
        );
        assert_eq!(found(&["8 cm"], &["$8$ m"], &[]), None);
        assert_eq!(found(&["8 m"], &["$8$"], &[]), None);
        assert_eq!(
            found(
                &["H0: p = 0.25, H1: p < 0.25"],
                &["$H_0: p = 0.25$, $H_1: p < 0.25$"],
                &[]
            ),
            None
        );
        assert_eq!(
            found(
                &["H₀: p = 0.25, H₁: p < 0.25"],
                &["$H_0: p = 0.25$, $H_1: p < 0.25$"],
                &[]
            )
            .map(|f| f.2),
            Some(MatchKind::Exact)
        );
    }

    #[test]
    fn multiplication_signs() {
        for written in ["3×4", "3x4", "3 x 4", "3 × 4", "3·4", "3*4"] {
            assert_eq!(
                found(&[written], &["$3 times 4$"], &[]).map(|f| f.2),
                Some(MatchKind::Exact),
                "{written}"
            );
        }
        assert_eq!(found(&["12"], &["$3 times 4$"], &[]), None);
    }

    #[test]
    fn blank_answer_spaces() {
        let blank = |texts: &[&str]| {
            let words: Vec<WordBox<'_>> = texts
                .iter()
                .enumerate()
                .map(|(i, t)| WordBox {
                    text: t,
                    x: 0.1 * i as f64,
                    y: 0.5,
                    width: 0.01,
                    height: 0.01,
                })
                .collect();
            is_blank(&words)
        };
        assert!(blank(&[]));
        assert!(blank(&[".", "-", "'", " ", ""]));
        assert!(blank(&["..........", "____", "~"]));
        assert!(blank(&["|", ",", "="]));
        assert!(blank(&["--", "—", ".,", "|'"]));
        assert!(!blank(&["=="]));
        assert!(!blank(&["x=", "."]));
        assert!(!blank(&[".", "3"]));
        assert!(!blank(&["x"]));
        assert!(!blank(&["-1"]));
        assert!(!blank(&["π"]));
        assert!(!blank(&["<=", "."]));
    }

    #[test]
    fn nothing_to_find() {
        assert_eq!(found(&[], &["$3$"], &[]), None);
        assert_eq!(found(&["3"], &[], &[]), None);
        assert_eq!(found(&["3"], &["", "$$"], &[]), None);
        assert_eq!(found(&[". ' ."], &["$3$"], &[]), None);
    }

    #[test]
    fn prefers_the_strongest_match_of_a_run() {
        let accepted = &["$r = 0.25$ and $r = 0.75$", "$r = 1/4$ and $r = 3/4$"];
        assert_eq!(
            found(&["r = 1/4 and r = 3/4"], accepted, &[]),
            Some((1, "r = 1/4 and r = 3/4".to_string(), MatchKind::Exact))
        );
        assert_eq!(
            found(&["r = 0.250 and r = 0.75"], accepted, &[]),
            Some((
                0,
                "r = 0.250 and r = 0.75".to_string(),
                MatchKind::Equivalent
            ))
        );
    }

    #[test]
    fn prefers_the_first_in_reading_order() {
        let got = found(&["x = 5"], &["$5$", "$x = 5$"], &[]);
        assert_eq!(got, Some((1, "x = 5".to_string(), MatchKind::Exact)));
    }

    #[test]
    fn odd_boxes_do_not_panic() {
        let words = vec![
            WordBox {
                text: "x=3",
                x: f64::NAN,
                y: f64::INFINITY,
                width: -1.0,
                height: 0.0,
            },
            WordBox {
                text: "√",
                x: 0.0,
                y: 0.0,
                width: 0.0,
                height: f64::NAN,
            },
            WordBox {
                text: "((",
                x: 0.5,
                y: 0.5,
                width: 0.1,
                height: 0.1,
            },
            WordBox {
                text: ")]}",
                x: 0.6,
                y: 0.5,
                width: 0.1,
                height: 0.1,
            },
            WordBox {
                text: "99999999999999999999999999999999999999999",
                x: 0.7,
                y: 0.5,
                width: 0.1,
                height: 0.1,
            },
        ];
        let _ = find(
            &words,
            &strings(&["$x = 3$", "$root(, )$", "$a/0$", "$1/0$"]),
            &strings(&["awrt 99999999999999999999999999999999999999"]),
        );
        let _ = normalise("$root(3)$ ^ _ √[ ] $sqrt()$ frac(1) 1/0 0/0 ⁽²⁾ x₍₁₎");
        let deep = format!("{}x{}", "(".repeat(20_000), ")".repeat(20_000));
        assert!(normalise(&deep).contains('x'));
        let deep_sqrt = format!("{}x{}", "sqrt(".repeat(20_000), ")".repeat(20_000));
        assert!(normalise(&deep_sqrt).contains('x'));
        let words = [WordBox {
            text: &deep,
            x: 0.1,
            y: 0.1,
            width: 0.1,
            height: 0.1,
        }];
        assert_eq!(find(&words, &strings(&["$x$"]), &[]), None);
    }
}
