//! What indexing stored of a page, read back for a question: its labels and page code, its
//! words, its comparison with the clean page, the answer spaces the layout puts on it, and the
//! session's structured scheme. A corrupt record fails the question rather than reading as empty.

use crate::marking::evidence;
use crate::marking::failure::FailureCode;
use crate::marking::jobs::{JobContext, JobFailure};
use crate::marking::marker::AnswerRegion;
use crate::marking::marker::Fit;
use crate::marking::marker::PageWord;
use crate::marking::marker::Rect;
use crate::marking::marker::Scheme;
use crate::marking::pages::turned;
use crate::store::automated::PageRecord;
use crate::store::jobs::Job;
use crate::store::marking::SessionRow;
use crate::store::{Store, StoreError};
use examkit_pdf::DocumentKind;
use examkit_pdf::Layout;
use examkit_scan::PageTransform;
use serde_json::Value;
use serde_json::json;

/// The question labels indexing found on a page; an error when they cannot be read.
pub(super) fn labels_of(page: &PageRecord) -> Result<Vec<String>, JobFailure> {
    let found: Vec<Value> =
        serde_json::from_str(&page.labels_json).map_err(|e| corrupt(page, "labels", &e))?;
    Ok(found
        .iter()
        .filter_map(|l| l["label"].as_str().map(str::to_owned))
        .collect())
}

pub(super) fn code_of(page: &PageRecord) -> Option<(DocumentKind, String, u32, u32)> {
    let code: Value = serde_json::from_str(page.code_json.as_deref()?).ok()?;
    let kind = match code["kind"].as_str()? {
        "question-paper" => DocumentKind::QuestionPaper,
        "mark-scheme" => DocumentKind::MarkScheme,
        _ => return None,
    };
    Some((
        kind,
        code["paperId"].as_str()?.to_owned(),
        u32::try_from(code["revision"].as_u64()?).ok()?,
        u32::try_from(code["page"].as_u64()?).ok()?,
    ))
}

/// Where the layout puts the answer spaces of question `label` on paper page `page`, on the
/// scan of it: carried through the transform that lined the scan up with its clean page when
/// there is one (skew, scale, shift, a photo's perspective and the quarter turn are all in it),
/// else turned by the page's quarter turn `degrees` clockwise alone.
pub(super) fn answer_regions(
    layout: &Layout,
    label: &str,
    page: u32,
    degrees: u32,
    fit: Option<&PageTransform>,
) -> Vec<AnswerRegion> {
    let Some(question) = layout
        .questions
        .iter()
        .find(|q| q.number.to_string() == label)
    else {
        return Vec::new();
    };
    let mut regions = Vec::new();
    for part in &question.parts {
        for r in part.answer_space.iter().filter(|r| r.page == page) {
            let upright = Rect {
                x: r.x,
                y: r.y,
                width: r.width,
                height: r.height,
            };
            let rect = fit
                .and_then(|t| {
                    t.to_work(&examkit_scan::NormBox {
                        x: r.x,
                        y: r.y,
                        width: r.width,
                        height: r.height,
                    })
                })
                .map(|b| Rect {
                    x: b.x,
                    y: b.y,
                    width: b.width,
                    height: b.height,
                })
                .unwrap_or_else(|| turned(upright, degrees));
            regions.push(AnswerRegion {
                part_id: part.part_id.clone(),
                rect,
            });
        }
    }
    regions
}

/// A page's stored index could not be read: the question cannot be marked from it.
pub(super) fn corrupt(record: &PageRecord, what: &str, e: &serde_json::Error) -> JobFailure {
    tracing::error!(asset = %record.asset_id, page = record.page, error = %e, "a stored page index is corrupt");
    JobFailure::permanent(format!(
        "the stored {what} of page {} of asset {} cannot be read",
        record.page, record.asset_id
    ))
    .with_code(FailureCode::PageNotIndexed)
}

/// What the comparison with the clean page says of a page.
#[derive(Debug, Default)]
pub(super) struct Compared {
    /// The regions of writing added to it, when it was lined up with its clean page; `None` when
    /// it was not.
    pub(super) ink: Option<Vec<Rect>>,
    /// Why it could not be lined up, when it has a clean page; `None` on a foreign page, which
    /// has none, and on a page that was lined up.
    pub(super) unaligned: Option<String>,
    /// The map from the clean page to the scan that lined them up, when one was recorded.
    pub(super) fit: Option<PageTransform>,
    /// The added ink's lines of writing, in the order the clean page reads (none recorded
    /// before lines were).
    pub(super) lines: Vec<Rect>,
    /// The kind of fit and its residual, when the page was lined up and they were recorded.
    pub(super) kind: Option<Fit>,
}

/// What the stored comparison says of a page. A comparison reported as aligned whose added ink
/// cannot be writing ([`evidence::implausible_fit`]) is taken as not lined up, and its transform
/// is not used. A stored comparison that cannot be read (its transform included) is an error,
/// never taken for "not compared" (which would change what the guards allow).
pub(super) fn comparison_of(record: &PageRecord) -> Result<Compared, JobFailure> {
    let Some(text) = record.compare_json.as_deref() else {
        return Ok(Compared::default());
    };
    let compared: Value =
        serde_json::from_str(text).map_err(|e| corrupt(record, "comparison", &e))?;
    if compared["available"] != true {
        return Ok(Compared::default());
    }
    if compared["aligned"] != true {
        let note = compared["note"]
            .as_str()
            .filter(|n| !n.trim().is_empty())
            .unwrap_or("alignment failed");
        return Ok(Compared {
            unaligned: Some(note.to_owned()),
            ..Compared::default()
        });
    }
    let Some(regions) = compared["addedRegions"].as_array() else {
        return Ok(Compared::default());
    };
    let boxes = |list: &[Value]| -> Vec<Rect> {
        list.iter()
            .filter_map(|r| {
                Some(Rect {
                    x: r["x"].as_f64()?,
                    y: r["y"].as_f64()?,
                    width: r["width"].as_f64()?,
                    height: r["height"].as_f64()?,
                })
            })
            .collect()
    };
    let added = boxes(regions);
    let lines = compared["addedLines"]
        .as_array()
        .map(|l| boxes(l))
        .unwrap_or_default();
    if let Some(why) = evidence::implausible_fit(compared["addedFraction"].as_f64(), &added) {
        return Ok(Compared {
            unaligned: Some(why),
            ..Compared::default()
        });
    }
    let fit = match compared.get("transform") {
        None | Some(Value::Null) => None,
        Some(t) => Some(
            serde_json::from_value::<PageTransform>(t.clone())
                .map_err(|e| corrupt(record, "comparison", &e))?,
        ),
    };
    let extent = crate::marking::pages::WRITING_MIN_EXTENT;
    Ok(Compared {
        ink: Some(
            added
                .into_iter()
                .filter(|r| r.width >= extent && r.height >= extent)
                .collect(),
        ),
        unaligned: None,
        fit,
        lines,
        kind: compared["fit"]
            .as_str()
            .zip(compared["residualPx"].as_f64())
            .map(|(kind, residual_px)| Fit {
                kind: kind.to_owned(),
                residual_px,
            }),
    })
}

/// The words indexing read on a page; an error when the stored words cannot be read.
pub(super) fn words_of(record: &PageRecord) -> Result<Vec<PageWord>, JobFailure> {
    let words: Vec<Value> =
        serde_json::from_str(&record.words_json).map_err(|e| corrupt(record, "words", &e))?;
    Ok(words
        .iter()
        .filter_map(|w| {
            let b = &w["bbox"];
            Some(PageWord {
                text: w["text"].as_str()?.to_owned(),
                bbox: Rect {
                    x: b["x"].as_f64()?,
                    y: b["y"].as_f64()?,
                    width: b["width"].as_f64()?,
                    height: b["height"].as_f64()?,
                },
                confidence: w["confidence"].as_f64().unwrap_or(0.0) as f32,
            })
        })
        .collect())
}

/// The structured scheme of question `label`, its criteria citing `source_pages`; a scheme of
/// pages when the session has none or does not list the label. A stored scheme that cannot be
/// read is an error, never taken for "no scheme" (which would hand the rubric to the marker).
pub(super) fn structured_scheme(
    scheme_json: Option<&str>,
    label: &str,
    source_pages: &[String],
) -> Result<Scheme, JobFailure> {
    let scheme: Option<Value> = match scheme_json {
        Some(text) => Some(serde_json::from_str(text).map_err(|e| {
            tracing::error!(error = %e, "a session's stored scheme is corrupt");
            JobFailure::permanent("the session's mark scheme cannot be read")
                .with_code(FailureCode::SchemeUnreadable)
        })?),
        None => None,
    };
    let question = scheme.as_ref().and_then(|s| {
        s["questions"]
            .as_array()?
            .iter()
            .find(|q| q["label"].as_str() == Some(label))
            .cloned()
    });
    match question {
        Some(q) if !source_pages.is_empty() => {
            let mut criteria = q["criteria"].clone();
            if let Some(list) = criteria.as_array_mut() {
                for c in list {
                    c["sourcePageIds"] = json!(source_pages);
                }
            }
            Ok(Scheme::Structured {
                parts: q["parts"].clone(),
                criteria,
            })
        }
        _ => Ok(Scheme::Pages),
    }
}

pub(super) async fn session_of(context: &JobContext, job: &Job) -> Result<SessionRow, JobFailure> {
    context
        .store
        .session(&job.user_id, &job.session_id)
        .await?
        .ok_or_else(|| JobFailure::permanent("the session no longer exists"))
}

/// The session's paper layout, when it was made from a paper with a recorded layout.
pub(super) async fn layout_of(
    store: &Store,
    session: &SessionRow,
) -> Result<Option<Layout>, StoreError> {
    let Some((paper_id, revision)) = &session.paper else {
        return Ok(None);
    };
    Ok(store
        .export_layout(&session.user_id, paper_id, *revision)
        .await?
        .flatten()
        .and_then(|json| serde_json::from_str(&json).ok()))
}
