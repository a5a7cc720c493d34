//! The parts of a marked question: what was marked and how, criterion by criterion.
//!
//! Types whose shape is the import contract's (evidence, condition checks, a source) or the
//! engine's report's (a part's score, a review flag) serialise in that shape.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use super::number::Stored;

pub use crate::store::words::QuestionStatus;

/// A score range: `awarded ≤ possible ≤ max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ScoreRange {
    /// Marks awarded.
    pub awarded: i64,
    /// Marks awarded or uncertain.
    pub possible: i64,
    /// Marks of the question.
    pub max: i64,
}

/// Why a question was not marked (failed or cancelled).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkingFailure {
    /// The stable failure code.
    pub code: String,
    /// A sentence for people.
    pub message: String,
    /// What the failure recorded beside (a marker's problems, the engine's errors), when it did.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub details: Option<Value>,
}

/// Who marked the work: the contract's `source`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MarkerSource {
    /// A person or an automated marker.
    pub kind: MarkerKind,
    /// The marker's name.
    pub name: String,
    /// When it marked, RFC 3339.
    pub marked_at: String,
    /// The model that marked, when one did.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub model: Option<String>,
}

/// Whether a person or an automated marker marked the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkerKind {
    /// A person.
    Human,
    /// An automated marker.
    Ai,
}

/// What the marker recorded of its run on the question, as it recorded it. Each marker records
/// its own fields (a vision model its calls, tokens and placements; any marker the awards its
/// guards turned uncertain); how each piece of evidence was placed is read into the evidence
/// ([`Evidence::placement`]).
#[derive(Debug, Clone, PartialEq)]
pub struct MarkerRun {
    /// The record.
    pub record: Map<String, Value>,
}

/// The documents a question was marked from.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceDocuments {
    /// The work assets (students' scans) of the selected pages, in asset id order.
    pub work_asset_ids: Vec<String>,
    /// The mark-scheme assets of the selected pages, in asset id order.
    pub scheme_asset_ids: Vec<String>,
    /// The selected pages of each asset, by asset id; `None` until the question is marked.
    pub page_selections: Option<BTreeMap<String, Vec<Stored<u32>>>>,
}

impl SourceDocuments {
    /// The selected pages of work assets, in asset and page order.
    pub fn work_pages(&self) -> Vec<(String, u32)> {
        let mut pages: Vec<(String, u32)> = self
            .page_selections
            .iter()
            .flatten()
            .filter(|(asset, _)| self.work_asset_ids.contains(asset))
            .flat_map(|(asset, numbers)| numbers.iter().map(|n| (asset.clone(), n.value())))
            .collect();
        pages.sort();
        pages
    }
}

/// A part of the rubric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RubricPart {
    /// The part id.
    pub id: String,
    /// Its label for display, when it has one.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub label: Option<String>,
    /// Its marks.
    pub max_marks: Stored<u32>,
}

/// A part's score, as the engine computed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartScore {
    /// The part id.
    pub id: String,
    /// Its score range.
    pub score: Score,
}

/// A score range as the engine writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Score {
    /// Marks awarded.
    pub awarded: u32,
    /// Marks awarded or uncertain.
    pub possible: u32,
    /// Marks in all.
    pub max: u32,
}

/// One reason the question needs a person's review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReviewFlag {
    /// The stable flag code (the engine's, or `page_not_scanned`).
    pub code: String,
    /// The criterion concerned; `None` for a flag of the whole question.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub criterion_id: Option<String>,
    /// JSON Pointer to what raised it.
    pub path: String,
    /// A sentence for people.
    pub message: String,
}

/// A one-mark outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The mark is given.
    Awarded,
    /// The mark is not given.
    Withheld,
    /// Not decided.
    Uncertain,
}

impl Outcome {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Awarded => "awarded",
            Outcome::Withheld => "withheld",
            Outcome::Uncertain => "uncertain",
        }
    }
}

/// How a criterion's conditions combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConditionMode {
    /// Every condition must be met.
    All,
    /// One condition is enough.
    Any,
}

/// One mark of the scheme with its decision and the engine's result.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkedCriterion {
    /// The criterion id.
    pub id: String,
    /// The part it belongs to.
    pub part_id: String,
    /// The mark code, such as `dM1`.
    pub code: String,
    /// What the scheme requires.
    pub requirement: String,
    /// The conditions the mark depends on.
    pub conditions: Vec<String>,
    /// How the conditions combine, when the criterion says.
    pub condition_mode: Option<ConditionMode>,
    /// The criteria this one depends on.
    pub depends_on: Vec<String>,
    /// Its marks as stored (always one).
    pub max_marks: Stored<u32>,
    /// The scheme pages it comes from.
    pub source_page_ids: Vec<String>,
    /// The outcome submitted, as the engine read it.
    pub submitted: Outcome,
    /// The outcome after conditions and dependencies.
    pub effective: Outcome,
    /// The criterion's review flags, in the order raised.
    pub flags: Vec<String>,
    /// The decision on it.
    pub decision: Decision,
}

/// A decision on one criterion.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The outcome decided.
    pub outcome: Outcome,
    /// Why.
    pub reason: String,
    /// Where on the student's work.
    pub evidence: Vec<Evidence>,
    /// One check of each condition.
    pub condition_checks: Vec<ConditionCheck>,
}

/// A located region of a student's work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Evidence {
    /// The page, `<asset id>:p<n>`.
    pub page_id: String,
    /// What is visible there.
    pub quote: String,
    /// Where on the page.
    #[serde(rename = "box")]
    pub region: EvidenceBox,
    /// How the marker placed the box, where its run record says.
    #[serde(skip)]
    pub placement: Option<EvidencePlacement>,
}

/// A region as fractions of the displayed page from its top-left corner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceBox {
    /// Left edge.
    pub x: Stored<f64>,
    /// Top edge.
    pub y: Stored<f64>,
    /// Width.
    pub width: Stored<f64>,
    /// Height.
    pub height: Stored<f64>,
}

/// How a piece of evidence was placed on its page, as the marker's run record has it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvidencePlacement {
    /// The rule that placed it.
    #[serde(rename = "placement")]
    pub rule: PlacementRule,
    /// Whether the evidence was located.
    pub located: bool,
    /// Why a guard turned the award uncertain, in words.
    #[serde(default)]
    pub guard: Option<String>,
    /// Why, as a stable code.
    #[serde(default)]
    pub guard_code: Option<String>,
    /// How the page was lined up with its clean page, when it was.
    #[serde(default)]
    pub fit: Option<PageFit>,
}

/// Which rule placed a piece of evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlacementRule {
    /// On the quoted words found on the page.
    Words,
    /// On ink added in the part's answer space.
    Ink,
    /// On the line of writing the quote is on.
    Line,
    /// On the marker's own box.
    Hint,
    /// Not located: on the answer space.
    #[serde(alias = "answerSpace")]
    AnswerSpace,
}

/// How a page was lined up with its clean page.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageFit {
    /// The kind of fit.
    pub kind: String,
    /// Its residual, in pixels at 150 dpi.
    pub residual_px: Stored<f64>,
}

/// The check of one condition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConditionCheck {
    /// The condition's index.
    pub index: Stored<u32>,
    /// Met, not met or uncertain.
    pub result: CheckResult,
    /// A note on the check, when there is one.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub note: Option<String>,
    /// Evidence for the check, when there is some.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub evidence: Option<Vec<Evidence>>,
}

/// The result of a condition check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckResult {
    /// The condition is met.
    Met,
    /// It is not.
    NotMet,
    /// Not known.
    Uncertain,
}

/// What the marker claimed beside its decisions: informational only, never a score.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MarkerClaims {
    /// The marker's own total (`reportedScore.awarded`), as stored.
    pub reported_awarded: Option<Number>,
    /// Whether the marker considered the question complete.
    pub complete: Option<bool>,
}

/// An optional field that, when present, must hold a value: `null` is not one.
pub(super) fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}
