//! Markers: what marks one question of a session, behind one trait.
//!
//! A marker gets a [`MarkRequest`] (the question's label, its scheme, the selected work pages with
//! their indexed words and answer regions, the selected scheme pages) and answers one question in
//! the import contract's shape (`service-marking-import-v1`'s Question: rubric, decisions with
//! located evidence, condition checks). What it answers is never trusted: the caller checks the
//! rubric against the scheme and the evidence against the pages, then runs the engine, exactly as
//! for imported work, and saves nothing unless everything passes.
//!
//! Implementations: [`crate::marking::builtin::BuiltIn`] (structured schemes, no network),
//! [`crate::marking::external::External`] (an HTTP marking pipeline; contract in
//! `schemas/marker-contract.md`) and [`crate::marking::openai::OpenAi`] (a vision-language model
//! over the OpenAI-compatible Chat Completions API, reading the page images the request carries,
//! [`WorkPage::image`]). A marker may check its answer before it returns it, with the same check
//! the caller applies afterwards ([`AnswerCheck`]), to ask for a repair.

use super::failure::FailureCode;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde::Serialize;
use serde_json::Value;

/// A box in normalized displayed-page coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rect {
    /// Left edge, 0..1 of the page width.
    pub x: f64,
    /// Top edge, 0..1 of the page height.
    pub y: f64,
    /// Width, a fraction of the page width.
    pub width: f64,
    /// Height, a fraction of the page height.
    pub height: f64,
}

impl Rect {
    /// Whether the centre of `other` lies inside this box.
    pub fn holds_centre_of(&self, other: &Rect) -> bool {
        let cx = other.x + other.width / 2.0;
        let cy = other.y + other.height / 2.0;
        cx >= self.x && cx <= self.x + self.width && cy >= self.y && cy <= self.y + self.height
    }

    /// The area this box shares with `other`.
    pub fn overlap(&self, other: &Rect) -> f64 {
        let w = (self.x + self.width).min(other.x + other.width) - self.x.max(other.x);
        let h = (self.y + self.height).min(other.y + other.height) - self.y.max(other.y);
        if w > 0.0 && h > 0.0 { w * h } else { 0.0 }
    }

    /// The box this one shares with `other`; `None` when they do not overlap.
    pub fn intersection(&self, other: &Rect) -> Option<Rect> {
        let x0 = self.x.max(other.x);
        let y0 = self.y.max(other.y);
        let x1 = (self.x + self.width).min(other.x + other.width);
        let y1 = (self.y + self.height).min(other.y + other.height);
        (x1 > x0 && y1 > y0).then_some(Rect {
            x: x0,
            y: y0,
            width: x1 - x0,
            height: y1 - y0,
        })
    }

    /// The smallest box holding every box of `boxes`, clamped to the page; `None` for none.
    pub fn union(boxes: impl IntoIterator<Item = Rect>) -> Option<Rect> {
        let mut iter = boxes.into_iter();
        let first = iter.next()?;
        let (mut x0, mut y0, mut x1, mut y1) = (
            first.x,
            first.y,
            first.x + first.width,
            first.y + first.height,
        );
        for b in iter {
            x0 = x0.min(b.x);
            y0 = y0.min(b.y);
            x1 = x1.max(b.x + b.width);
            y1 = y1.max(b.y + b.height);
        }
        let (x0, y0) = (x0.clamp(0.0, 1.0), y0.clamp(0.0, 1.0));
        let (x1, y1) = (x1.clamp(0.0, 1.0), y1.clamp(0.0, 1.0));
        (x1 > x0 && y1 > y0).then_some(Rect {
            x: x0,
            y: y0,
            width: x1 - x0,
            height: y1 - y0,
        })
    }
}

/// A word indexed on a page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PageWord {
    /// The text.
    pub text: String,
    /// Its box.
    pub bbox: Rect,
    /// The reader's confidence, 0..1.
    pub confidence: f32,
}

/// Where the paper's layout puts one part's answer space on a page.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnswerRegion {
    /// The part's id in the scheme.
    pub part_id: String,
    /// The region.
    #[serde(flatten)]
    pub rect: Rect,
}

/// How a work page was lined up with its clean page: the kind of fit (`similarity`, `affine`,
/// `homography`, `frame`) and its root-mean-square residual in pixels at 150 dpi.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fit {
    /// The kind of fit.
    pub kind: String,
    /// Its residual, in pixels at 150 dpi.
    pub residual_px: f64,
}

/// A selected work page.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkPage {
    /// `<asset uuid>:p<n>`.
    pub page_id: String,
    /// The asset.
    pub asset_id: String,
    /// The page, from 1.
    pub page: u32,
    /// Raster size as displayed.
    pub width_px: u32,
    /// Raster size as displayed.
    pub height_px: u32,
    /// Degrees the content is turned clockwise.
    pub orientation: u32,
    /// Whether indexing found it usable as evidence of an answer (a student's page, not the clean
    /// question paper or a mark scheme).
    pub evidence: bool,
    /// A page of the student's script to which nothing was added (the rest of the script has
    /// writing): it locates blank answers, and never supports an award.
    pub blank: bool,
    /// Why not, when it is not.
    pub flagged: Option<String>,
    /// The page's words.
    pub words: Vec<PageWord>,
    /// Where ink was added to the clean question-paper page (regions large enough to be
    /// writing, in displayed coordinates), when the page could be compared with it; `None` when
    /// it could not, so that an answer space without words cannot be told blank.
    pub ink: Option<Vec<Rect>>,
    /// The added ink split into lines of writing, in the order the clean page reads (empty when
    /// the page was not lined up, or its lines were not recorded).
    pub ink_lines: Vec<Rect>,
    /// How the page was lined up with its clean page, when it was.
    pub fit: Option<Fit>,
    /// Why the page could not be lined up with its clean page, when it has one (a page of the
    /// session's paper) and alignment failed or found a fit that cannot be right; `ink` is then
    /// `None`, and nothing on the page is verified as the student's writing. `None` when it was
    /// lined up, and on a foreign page, which has no clean page to line up with.
    pub unaligned: Option<String>,
    /// Whether the page is a page of the session's paper with a recorded layout, so that
    /// `answer_regions` lists every answer space of this question on it: a part with none is not
    /// on the page. False on a foreign page, whose answer spaces are unknown.
    pub laid_out: bool,
    /// The answer regions of this question's parts on this page (from the paper's layout).
    pub answer_regions: Vec<AnswerRegion>,
    /// The page as a PNG, for markers that read images (filled on request).
    pub image: Option<Vec<u8>>,
}

/// A selected scheme page.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemePage {
    /// `<asset uuid>:p<n>`.
    pub page_id: String,
    /// The asset.
    pub asset_id: String,
    /// The page, from 1.
    pub page: u32,
    /// Raster size as displayed.
    pub width_px: u32,
    /// Raster size as displayed.
    pub height_px: u32,
    /// The page as a PNG, for markers that read images (filled on request).
    pub image: Option<Vec<u8>>,
}

/// The scheme a question is marked against.
#[derive(Debug, Clone, PartialEq)]
pub enum Scheme {
    /// Parts and criteria, as the bank holds them (`parts`, `criteria` with `answers` and
    /// `notes`), JSON; criteria already carry `sourcePageIds`.
    Structured {
        /// The parts: `[{id, label?, maxMarks}]`.
        parts: Value,
        /// The criteria.
        criteria: Value,
    },
    /// Only scheme pages that could not be read as a structured scheme.
    Pages,
}

/// One question to mark.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkRequest {
    /// The marking question's id.
    pub question_id: String,
    /// The session's id.
    pub session_id: String,
    /// The question's label.
    pub label: String,
    /// Its scheme.
    pub scheme: Scheme,
    /// The selected work pages, in selection order.
    pub work_pages: Vec<WorkPage>,
    /// The selected scheme pages.
    pub scheme_pages: Vec<SchemePage>,
    /// The selection: asset id → page numbers.
    pub page_selections: serde_json::Map<String, Value>,
    /// The session's assets: `[{id, kind, pageCount}]`.
    pub assets: Value,
}

/// Why a marker gave no answer.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkerError {
    /// A stable code.
    pub code: FailureCode,
    /// What happened, in words fit for the session's reader (no addresses, no secrets).
    pub message: String,
    /// Whether another attempt may succeed (timeouts, connection errors, 5xx).
    pub retry: bool,
    /// Structured details (the problems of an answer that could not be repaired).
    pub details: Option<Value>,
}

impl MarkerError {
    /// An error without details.
    pub fn new(code: FailureCode, message: impl Into<String>, retry: bool) -> MarkerError {
        MarkerError {
            code,
            message: message.into(),
            retry,
            details: None,
        }
    }
}

/// What is wrong with a marker's answer: serialised as its stable code, which a repair request
/// and a failed question's `error.details.errors` show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProblemCode {
    /// `invalid_json`: the answer is not JSON.
    InvalidJson,
    /// `schema`: the answer does not have the shape its schema asks for.
    Schema,
    /// A check of the answer against the session failed (`marker_rubric_mismatch`…).
    Check(FailureCode),
    /// The engine refused the question built from the answer (`required`, `unknown_part`…).
    Engine(examkit_engine::ErrorCode),
}

impl ProblemCode {
    /// The stable code.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProblemCode::InvalidJson => "invalid_json",
            ProblemCode::Schema => "schema",
            ProblemCode::Check(code) => code.as_str(),
            ProblemCode::Engine(code) => code.as_str(),
        }
    }
}

impl std::fmt::Display for ProblemCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ProblemCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A problem found in a marker's answer: a stable code, where, and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// What is wrong.
    pub code: ProblemCode,
    /// A JSON pointer into the answer (or into the import question built from it).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// The check every answer passes before it is saved (the rubric against the scheme, evidence
/// only on the student's pages, then the engine), offered to markers so that they can ask for a
/// repair; the caller applies it again to whatever the marker returns.
pub type AnswerCheck<'a> = &'a (dyn Fn(&Value) -> Result<(), Vec<Problem>> + Send + Sync);

/// What a marker answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Marked {
    /// The question, in the import contract's shape.
    pub question: Value,
    /// The marker's name, for the submission's `source.name`.
    pub name: String,
    /// The model, when the marker names one (`source.model`).
    pub model: Option<String>,
    /// What the marker records of its run, saved with the question (`markerRun`): for a vision
    /// model, the provider's latency and tokens, repair rounds and how each piece of evidence was
    /// placed.
    pub run: Option<Value>,
    /// Why a person must look at the question whatever its decisions say (instructions on a
    /// page, a rubric the model wrote, markers that disagree): review flags added to the engine's
    /// report before it is saved.
    pub flags: Vec<super::flags::MarkerFlag>,
}

/// A boxed future, so markers can be chosen at run time.
pub type MarkFuture<'a> = Pin<Box<dyn Future<Output = Result<Marked, MarkerError>> + Send + 'a>>;

/// A boxed future of a name read from a cover: the name as written, or `None` when nothing is
/// written there.
pub type NameFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Option<String>, MarkerError>> + Send + 'a>>;

/// What a name reader is shown: a copy's cover as displayed, and where its name line is.
#[derive(Debug, Clone, PartialEq)]
pub struct NameRequest {
    /// The cover page, in the marker's image format at its size.
    pub image: Vec<u8>,
    /// The space above the name line, from the paper's layout, when it is recorded.
    pub name_space: Option<Rect>,
}

/// A marker.
pub trait Marker: Send + Sync + std::fmt::Debug {
    /// Its name in configuration and in saved results (`builtin`, `external`).
    fn name(&self) -> &'static str;

    /// Whether it needs page images in the request.
    fn needs_images(&self) -> bool;

    /// The longest edge, in pixels, of the page images it wants (`None`: as rendered).
    fn image_long_edge(&self) -> Option<u32> {
        None
    }

    /// How its page images are encoded: PNG (lossless, the external contract's) unless it says
    /// otherwise.
    fn image_format(&self) -> image::ImageFormat {
        image::ImageFormat::Png
    }

    /// Marks one question. `check` is the check its answer will pass; `cancelled` turns true
    /// when the job's lease is lost or the question is cancelled; a marker may stop early then
    /// (its answer would not be saved anyway).
    fn mark<'a>(
        &'a self,
        request: &'a MarkRequest,
        check: AnswerCheck<'a>,
        cancelled: Arc<AtomicBool>,
    ) -> MarkFuture<'a>;

    /// Whether it reads the names students write on their covers (a vision model does).
    fn reads_names(&self) -> bool {
        false
    }

    /// Reads the name written on a cover. Only called when [`Marker::reads_names`] is true.
    fn read_name<'a>(&'a self, _request: &'a NameRequest) -> NameFuture<'a> {
        Box::pin(async {
            Err(MarkerError::new(
                FailureCode::JobFailed,
                "this marker does not read handwritten names",
                false,
            ))
        })
    }
}

/// The import contract's rubric for a structured scheme: its parts (`id`, `label` when it has
/// one, `maxMarks`) and criteria (one mark each, citing the scheme pages they carry), the bank's
/// own fields (`answers`, `notes`) left out.
pub fn structured_rubric(parts: &Value, criteria: &Value) -> Result<Value, MarkerError> {
    let unreadable = |what: &str| {
        MarkerError::new(
            FailureCode::SchemeUnreadable,
            format!("the structured scheme is malformed: {what}"),
            false,
        )
    };
    let parts = parts
        .as_array()
        .ok_or_else(|| unreadable("parts is not a list"))?;
    let criteria = criteria
        .as_array()
        .ok_or_else(|| unreadable("criteria is not a list"))?;
    let criteria: Vec<Value> = criteria
        .iter()
        .map(|criterion| {
            let mut entry = serde_json::json!({
                "id": criterion["id"],
                "partId": criterion["partId"],
                "code": criterion["code"],
                "requirement": criterion["requirement"],
                "conditions": criterion["conditions"],
                "dependsOn": criterion["dependsOn"],
                "maxMarks": 1,
                "sourcePageIds": criterion["sourcePageIds"],
            });
            if let Some(mode) = criterion.get("conditionMode") {
                entry["conditionMode"] = mode.clone();
            }
            entry
        })
        .collect();
    let parts: Vec<Value> = parts
        .iter()
        .map(|p| {
            let mut part = serde_json::json!({ "id": p["id"], "maxMarks": p["maxMarks"] });
            if let Some(label) = p.get("label").filter(|l| l.is_string()) {
                part["label"] = label.clone();
            }
            part
        })
        .collect();
    Ok(serde_json::json!({ "parts": parts, "criteria": criteria }))
}

#[cfg(test)]
mod tests {
    use super::{FailureCode, Problem, ProblemCode};
    use examkit_engine::ErrorCode;

    #[test]
    fn problem_codes_serialise_as_their_stable_text() {
        let spelled = [
            (ProblemCode::InvalidJson, "invalid_json"),
            (ProblemCode::Schema, "schema"),
            (
                ProblemCode::Check(FailureCode::MarkerRubricMismatch),
                "marker_rubric_mismatch",
            ),
            (
                ProblemCode::Check(FailureCode::EvidenceNotStudentWork),
                "evidence_not_student_work",
            ),
            (ProblemCode::Engine(ErrorCode::UnknownPart), "unknown_part"),
            (ProblemCode::Engine(ErrorCode::Required), "required"),
        ];
        for (code, text) in spelled {
            assert_eq!(code.as_str(), text);
            assert_eq!(code.to_string(), text);
            assert_eq!(
                serde_json::to_string(&code).expect("serialises"),
                format!("\"{text}\"")
            );
        }
        let problem = Problem {
            code: ProblemCode::Engine(ErrorCode::Required),
            path: "/decisions".into(),
            message: "decisions is required".into(),
        };
        assert_eq!(
            serde_json::to_string(&problem).expect("serialises"),
            r#"{"code":"required","path":"/decisions","message":"decisions is required"}"#
        );
    }
}
