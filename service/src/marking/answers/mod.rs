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
//!
//! # Files
//!
//! - `lex.rs`: unicode variants folded and the text lexed into tokens.
//! - `normalise.rs`: the comparable form of a text ([`normalise`]): typst maths markup parsed
//!   and rendered as plain text.
//! - `numbers.rs`: exact rational numbers as written.
//! - `figures.rs`: rounding the notes allow ([`awrt`]).
//! - `compare.rs`: numbers, pieces and lists compared ([`Accepted`]).
//! - `reading.rs`: reading order, specks and where an answer may stand ([`find`], [`is_blank`]).
//! - `tests.rs`: finding answers in written lines, end to end.

mod compare;
mod figures;
mod lex;
mod normalise;
mod numbers;
mod reading;

pub use figures::{Awrt, Figure, awrt};
pub use normalise::normalise;
pub use reading::{find, is_blank};
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

#[cfg(test)]
mod tests;
