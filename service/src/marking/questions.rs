//! Marking questions: placing a paper's questions on a session's indexed pages, and marking one
//! question with the configured marker, through the engine.
//!
//! A marker's answer is an import question like any other: the rubric must be the scheme's (for a
//! structured scheme), its evidence must cite selected work pages that indexing did not flag as the
//! clean question paper or a mark scheme, the evidence guards ([`super::evidence`]) turn any award
//! they refuse `uncertain`, whatever the marker, and the engine validates it against the session's
//! assets before anything is saved. The question, the engine's result and the job's end are saved
//! in one transaction; a failure saves only the failure.

use super::failure::FailureCode;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Map, Value, json};

use examkit_engine::Outcome;
use examkit_pdf::{DocumentKind, Layout};
use examkit_scan::PageTransform;

use super::evidence;
use super::jobs::{JobContext, JobFailure, MARK_QUESTION};
use super::marker::{
    AnswerRegion, Fit, MarkRequest, PageWord, Problem, Rect, Scheme, SchemePage, WorkPage,
};
use super::pages::{page_image, turned};
use crate::marked::engine::{EngineError, run_engine, status_str};
use crate::store::automated::PageRecord;
use crate::store::automated::questions::{NewQuestion, QueueOutcome, Unmarked, error_json};
use crate::store::jobs::Job;
use crate::store::marking::{AssetRow, QuestionData, SessionRow};
use crate::store::{Store, StoreError, now_ms};

/// Work pages one question may select.
pub const MAX_WORK_PAGES: usize = 12;
/// Scheme pages one question may select.
pub const MAX_SCHEME_PAGES: usize = 12;

/// A question's request as stored: the files and pages it is marked from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionRequest {
    /// The work assets.
    pub work_asset_ids: Vec<String>,
    /// The scheme assets.
    pub scheme_asset_ids: Vec<String>,
    /// Asset id → selected page numbers.
    pub page_selections: BTreeMap<String, Vec<u32>>,
}

/// The question labels indexing found on a page; an error when they cannot be read.
fn labels_of(page: &PageRecord) -> Result<Vec<String>, JobFailure> {
    let found: Vec<Value> =
        serde_json::from_str(&page.labels_json).map_err(|e| corrupt(page, "labels", &e))?;
    Ok(found
        .iter()
        .filter_map(|l| l["label"].as_str().map(str::to_owned))
        .collect())
}

fn code_of(page: &PageRecord) -> Option<(DocumentKind, String, u32, u32)> {
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

async fn session_of(context: &JobContext, job: &Job) -> Result<SessionRow, JobFailure> {
    context
        .store
        .session(&job.user_id, &job.session_id)
        .await?
        .ok_or_else(|| JobFailure::permanent("the session no longer exists"))
}

/// The questions of a session made from a paper, placed on its indexed pages: one marking
/// question per question of the paper, selecting the work pages on which indexing found it (at
/// most [`MAX_WORK_PAGES`]) and the scheme pages that name it (else the scheme's first pages). A
/// question found on no page is saved `failed`, saying so.
pub async fn plan(
    context: &Arc<JobContext>,
    job: &Job,
    lost: &Arc<AtomicBool>,
) -> Result<bool, JobFailure> {
    let store = &context.store;
    let session = session_of(context, job).await?;
    let scheme: Value = store
        .session_scheme(&session.id)
        .await?
        .and_then(|s| serde_json::from_str(&s).ok())
        .ok_or_else(|| JobFailure::permanent("the session has no structured scheme"))?;
    let assets = store.session_assets(&session.id).await?;
    let pages = store.session_pages(&session.id).await?;
    let unscanned = Unscanned::of(store, &session).await?;
    let mut labels: HashMap<(&str, i64), Vec<String>> = HashMap::new();
    for page in &pages {
        labels.insert((page.asset_id.as_str(), page.page), labels_of(page)?);
    }
    let shows = |page: &PageRecord, label: &str| {
        labels
            .get(&(page.asset_id.as_str(), page.page))
            .is_some_and(|found| found.iter().any(|l| l == label))
    };
    let kind_of: HashMap<&str, &str> = assets
        .iter()
        .map(|a| (a.id.as_str(), a.kind.as_str()))
        .collect();
    let empty = Vec::new();
    let mut questions = Vec::new();
    for q in scheme["questions"].as_array().unwrap_or(&empty) {
        let Some(label) = q["label"].as_str() else {
            continue;
        };
        let mut request = QuestionRequest {
            work_asset_ids: Vec::new(),
            scheme_asset_ids: Vec::new(),
            page_selections: BTreeMap::new(),
        };
        let mut work_pages = 0;
        for page in pages.iter().filter(|p| p.state == "ok") {
            // Only a page of an asset known to be work is; an unknown kind is nothing.
            let kind = kind_of.get(page.asset_id.as_str()).copied();
            if kind == Some("work") && work_pages < MAX_WORK_PAGES && shows(page, label) {
                select(&mut request, page, "work");
                work_pages += 1;
            }
        }
        let mut scheme_pages: Vec<&PageRecord> = pages
            .iter()
            .filter(|p| kind_of.get(p.asset_id.as_str()) == Some(&"scheme"))
            .filter(|p| shows(p, label))
            .take(MAX_SCHEME_PAGES)
            .collect();
        if scheme_pages.is_empty() {
            scheme_pages = pages
                .iter()
                .filter(|p| kind_of.get(p.asset_id.as_str()) == Some(&"scheme"))
                .take(1)
                .collect();
        }
        for page in scheme_pages {
            select(&mut request, page, "scheme");
        }
        let missing = unscanned.pages_of(label);
        let unmarked = (!missing.is_empty()).then(|| Unmarked {
            result_json: unscanned_result(label, &missing, q).to_string(),
            max_marks: q["criteria"]
                .as_array()
                .map_or(0, |c| i64::try_from(c.len()).unwrap_or(i64::MAX)),
        });
        let failed = if unmarked.is_some() {
            None
        } else if work_pages == 0 {
            Some(error_json(
                FailureCode::QuestionNotFound.as_str(),
                &format!("no page of the uploaded work shows question {label}"),
                None,
            ))
        } else if request.scheme_asset_ids.is_empty() {
            Some(error_json(
                FailureCode::SchemeRequired.as_str(),
                "the session has no indexed scheme page to cite",
                None,
            ))
        } else {
            None
        };
        questions.push(NewQuestion {
            label: label.to_owned(),
            request_json: serde_json::to_string(&request)
                .map_err(|e| JobFailure::permanent(format!("the request cannot be stored: {e}")))?,
            failed,
            unmarked,
        });
    }
    if lost.load(Ordering::SeqCst) {
        return Ok(false);
    }
    let config = &context.config;
    let mut tx = store.begin_write().await?;
    if !Store::finish_job(&mut tx, job, now_ms()).await? {
        tx.rollback().await.map_err(StoreError::from)?;
        return Ok(false);
    }
    let mut outcome = store
        .queue_questions(
            &mut tx,
            &job.user_id,
            &session.id,
            &questions,
            MARK_QUESTION,
            config.allowance.questions_per_day,
            config.max_attempts,
        )
        .await?;
    if let QueueOutcome::AllowanceExceeded { used, .. } = outcome {
        let error = error_json(
            FailureCode::MarkingAllowanceExhausted.as_str(),
            &format!(
                "the account's daily allowance of {} questions is used ({used}); start a new session tomorrow",
                config.allowance.questions_per_day
            ),
            None,
        );
        for q in &mut questions {
            q.failed.get_or_insert_with(|| error.clone());
        }
        outcome = store
            .queue_questions(
                &mut tx,
                &job.user_id,
                &session.id,
                &questions,
                MARK_QUESTION,
                config.allowance.questions_per_day,
                config.max_attempts,
            )
            .await?;
    }
    match outcome {
        QueueOutcome::Queued(_) => {
            tx.commit().await.map_err(StoreError::from)?;
            Ok(true)
        }
        other => {
            tx.rollback().await.map_err(StoreError::from)?;
            Err(JobFailure::permanent(format!(
                "the paper's questions cannot be queued: {other:?}"
            )))
        }
    }
}

/// The paper pages a class-set script lacks, and where the paper's layout puts each question.
struct Unscanned {
    missing: Vec<u32>,
    layout: Option<Layout>,
}

impl Unscanned {
    /// What the session lacks: nothing unless it marks a class-set script with pages missing.
    async fn of(store: &Store, session: &SessionRow) -> Result<Unscanned, StoreError> {
        let missing: Vec<u32> = match store.script_of_session(&session.id).await? {
            Some(script) => serde_json::from_str(&script.missing_json).map_err(|e| {
                StoreError::Corrupt(format!("a script's missing pages are not JSON: {e}"))
            })?,
            None => Vec::new(),
        };
        let layout = if missing.is_empty() {
            None
        } else {
            layout_of(store, session).await?
        };
        Ok(Unscanned { missing, layout })
    }

    /// The missing pages question `label` is on; without a recorded layout, every missing page
    /// (which question a page held cannot be told, so none is marked from what is left).
    fn pages_of(&self, label: &str) -> Vec<u32> {
        self.missing
            .iter()
            .copied()
            .filter(|&page| match &self.layout {
                Some(layout) => super::placement::from_layout(layout, page)
                    .iter()
                    .any(|found| found.label == label),
                None => true,
            })
            .collect()
    }
}

/// The result of a question on a page that was not scanned: nothing awarded and every mark still
/// possible (`0–max`), and the review flag `page_not_scanned` (see `schemas/README.md`).
fn unscanned_result(label: &str, missing: &[u32], question: &Value) -> Value {
    let pages: Vec<String> = missing.iter().map(u32::to_string).collect();
    let max = question["criteria"].as_array().map_or(0, Vec::len);
    super::flags::unmarked_result(
        label,
        i64::try_from(max).unwrap_or(i64::MAX),
        PAGE_NOT_SCANNED,
        "",
        &format!(
            "page {} of the paper was not scanned for this script: question {label} is not \
             marked until a person places the page",
            pages.join(", ")
        ),
    )
}

use crate::marked::PAGE_NOT_SCANNED;

fn select(request: &mut QuestionRequest, page: &PageRecord, kind: &str) {
    let ids = if kind == "work" {
        &mut request.work_asset_ids
    } else {
        &mut request.scheme_asset_ids
    };
    if !ids.contains(&page.asset_id) {
        ids.push(page.asset_id.clone());
    }
    let pages = request
        .page_selections
        .entry(page.asset_id.clone())
        .or_default();
    if let Ok(n) = u32::try_from(page.page)
        && !pages.contains(&n)
    {
        pages.push(n);
    }
}

/// The session's paper layout, when it was made from a paper with a recorded layout.
async fn layout_of(store: &Store, session: &SessionRow) -> Result<Option<Layout>, StoreError> {
    let Some((paper_id, revision)) = &session.paper else {
        return Ok(None);
    };
    Ok(store
        .export_layout(&session.user_id, paper_id, *revision)
        .await?
        .flatten()
        .and_then(|json| serde_json::from_str(&json).ok()))
}

/// Where the layout puts the answer spaces of question `label` on paper page `page`, on the
/// scan of it: carried through the transform that lined the scan up with its clean page when
/// there is one (skew, scale, shift, a photo's perspective and the quarter turn are all in it),
/// else turned by the page's quarter turn `degrees` clockwise alone.
fn answer_regions(
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
fn corrupt(record: &PageRecord, what: &str, e: &serde_json::Error) -> JobFailure {
    tracing::error!(asset = %record.asset_id, page = record.page, error = %e, "a stored page index is corrupt");
    JobFailure::permanent(format!(
        "the stored {what} of page {} of asset {} cannot be read",
        record.page, record.asset_id
    ))
    .with_code(FailureCode::PageNotIndexed)
}

/// What the comparison with the clean page says of a page.
#[derive(Debug, Default)]
struct Compared {
    /// The regions of writing added to it, when it was lined up with its clean page; `None` when
    /// it was not.
    ink: Option<Vec<Rect>>,
    /// Why it could not be lined up, when it has a clean page; `None` on a foreign page, which
    /// has none, and on a page that was lined up.
    unaligned: Option<String>,
    /// The map from the clean page to the scan that lined them up, when one was recorded.
    fit: Option<PageTransform>,
    /// The added ink's lines of writing, in the order the clean page reads (none recorded
    /// before lines were).
    lines: Vec<Rect>,
    /// The kind of fit and its residual, when the page was lined up and they were recorded.
    kind: Option<Fit>,
}

/// What the stored comparison says of a page. A comparison reported as aligned whose added ink
/// cannot be writing ([`evidence::implausible_fit`]) is taken as not lined up, and its transform
/// is not used. A stored comparison that cannot be read (its transform included) is an error,
/// never taken for "not compared" (which would change what the guards allow).
fn comparison_of(record: &PageRecord) -> Result<Compared, JobFailure> {
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
    let extent = super::pages::WRITING_MIN_EXTENT;
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
fn words_of(record: &PageRecord) -> Result<Vec<PageWord>, JobFailure> {
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
fn structured_scheme(
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

fn assets_json(assets: &[AssetRow]) -> Value {
    Value::Array(
        assets
            .iter()
            .map(|a| json!({ "id": a.id, "kind": a.kind, "pageCount": a.page_count }))
            .collect(),
    )
}

/// Marks one question.
pub async fn mark(
    context: &Arc<JobContext>,
    job: &Job,
    lost: &Arc<AtomicBool>,
) -> Result<bool, JobFailure> {
    let started = std::time::Instant::now();
    let store = &context.store;
    let Some(loaded) = load(context, job).await? else {
        return Err(JobFailure::permanent("the question no longer exists"));
    };
    store.question_running(&loaded.work.id).await?;
    // A marker that has not qualified, or has drifted on the seeds, marks nothing live.
    let mut standing = super::qualification::standing(store, &context.config).await?;
    if standing.blocks().is_none()
        && let Some(seeds) = &context.seeds
        && seeds.before_live(context, &standing, lost).await?
    {
        standing = super::qualification::standing(store, &context.config).await?;
    }
    if let Some(flag) = standing.blocks() {
        let work = &loaded.work;
        return super::qualification::save_unmarked(
            context,
            job,
            &work.id,
            &loaded.session.id,
            &work.label,
            &flag,
            &standing,
            started,
            lost,
        )
        .await;
    }
    let mut request = assemble(context, job, &loaded).await?;
    if context.marker.needs_images() {
        attach_images(
            store,
            &context.config.pages,
            &job.user_id,
            &mut request,
            context.config.dpi,
            context.marker.image_long_edge(),
            context.marker.image_format(),
        )
        .await?;
    }
    let engine_assets: Vec<examkit_engine::Asset> = loaded
        .assets
        .iter()
        .filter_map(AssetRow::to_engine)
        .collect();
    let mut marked = call_marker(context, &request, &engine_assets, lost).await?;
    check_answer(&request, &marked.question)?;
    // The guards hold whatever the marker: an award on evidence they refuse is saved uncertain.
    let guarded = evidence::guard_answer(
        &request,
        &mut marked.question,
        &evidence::RasterInk::default(),
    );
    if !guarded.is_empty() {
        let run = marked
            .run
            .get_or_insert_with(|| json!({ "marker": context.marker.name() }));
        if let Some(object) = run.as_object_mut() {
            object.insert("guards".into(), json!(guarded));
        }
    }
    let source = source_for(context.marker.name(), &marked.name, marked.model.as_deref());
    let document = document_for(&loaded.work.label, &marked.question, source);
    let mut data = score(&document, engine_assets).await?;
    super::flags::apply(&mut data, &marked.flags).map_err(JobFailure::permanent)?;
    if lost.load(Ordering::SeqCst) {
        return Ok(false);
    }
    // Every automated question records the marker's standing (`qualification`), and the whole
    // job's time, so that the service's own share (this less the provider's latency) can be read
    // off every question.
    let mut run = marked
        .run
        .unwrap_or_else(|| json!({ "marker": context.marker.name() }));
    if let Some(object) = run.as_object_mut() {
        object.insert("qualification".into(), standing.record());
        let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        object.insert("durationMs".into(), json!(ms));
    }
    let run = Some(run.to_string());
    Ok(store
        .save_marked_question(
            job,
            &loaded.work.id,
            &data,
            &document["source"].to_string(),
            run.as_deref(),
        )
        .await?)
}

/// What marking one question starts from: its row, session, stored request, the session's assets
/// and paper layout, and which assets are students' scripts.
struct Loaded {
    work: crate::store::automated::questions::QuestionWork,
    session: SessionRow,
    request: QuestionRequest,
    assets: Vec<AssetRow>,
    layout: Option<Layout>,
    scripts: HashSet<String>,
}

/// Loads what marking the job's question needs; `None` when the question is gone.
async fn load(context: &Arc<JobContext>, job: &Job) -> Result<Option<Loaded>, JobFailure> {
    let store = &context.store;
    let question_id = serde_json::from_str::<Value>(&job.payload)
        .ok()
        .and_then(|p| p["questionId"].as_str().map(str::to_owned))
        .ok_or_else(|| JobFailure::permanent("malformed job"))?;
    let Some(work) = store.question_work(&question_id).await? else {
        return Ok(None);
    };
    let session = session_of(context, job).await?;
    let request: QuestionRequest = serde_json::from_str(&work.request_json)
        .map_err(|e| JobFailure::permanent(format!("the question's request is malformed: {e}")))?;
    let assets = store.session_assets(&session.id).await?;
    let layout = layout_of(store, &session).await?;
    let scripts = super::indexing::scripts(&store.session_pages(&session.id).await?);
    Ok(Some(Loaded {
        work,
        session,
        request,
        assets,
        layout,
        scripts,
    }))
}

/// The marker's request: each selected page with what indexing found on it (words, ink, role,
/// the part's answer spaces from the paper's layout), and the scheme. An error when no selected
/// page is a student's work.
async fn assemble(
    context: &Arc<JobContext>,
    job: &Job,
    loaded: &Loaded,
) -> Result<MarkRequest, JobFailure> {
    let store = &context.store;
    let Loaded {
        work,
        session,
        request,
        assets,
        layout,
        scripts,
    } = loaded;
    let paper = session.paper.clone();
    let mut work_pages = Vec::new();
    let mut scheme_pages = Vec::new();
    for (asset_id, pages) in &request.page_selections {
        let Some(asset) = assets.iter().find(|a| &a.id == asset_id) else {
            return Err(JobFailure::permanent(format!(
                "asset {asset_id} is no longer in the session"
            )));
        };
        for &page in pages {
            let record = store
                .page_record(&job.user_id, asset_id, i64::from(page))
                .await?
                .ok_or_else(|| {
                    JobFailure::permanent(format!(
                        "page {page} of asset {asset_id} was not indexed"
                    ))
                    .with_code(FailureCode::PageNotIndexed)
                })?;
            let page_id = format!("{asset_id}:p{page}");
            let width_px = u32::try_from(record.width_px).unwrap_or(0);
            let height_px = u32::try_from(record.height_px).unwrap_or(0);
            if asset.kind == "work" {
                let compared = comparison_of(&record)?;
                let (regions, laid_out) = match (layout, code_of(&record), &paper) {
                    (
                        Some(layout),
                        Some((DocumentKind::QuestionPaper, id, revision, on)),
                        Some((paper_id, paper_revision)),
                    ) if &id == paper_id && i64::from(revision) == *paper_revision => (
                        answer_regions(
                            layout,
                            &work.label,
                            on,
                            u32::try_from(record.orientation).unwrap_or(0),
                            compared.fit.as_ref(),
                        ),
                        true,
                    ),
                    _ => (Vec::new(), false),
                };
                let evidence = record.state == "ok" && record.role == "work";
                let blank = record.state == "ok"
                    && record.role == "clean_paper"
                    && scripts.contains(asset_id);
                work_pages.push(WorkPage {
                    page_id,
                    asset_id: asset_id.clone(),
                    page,
                    width_px,
                    height_px,
                    orientation: u32::try_from(record.orientation).unwrap_or(0),
                    evidence,
                    blank,
                    flagged: (!evidence).then(|| record.role_reason.clone()),
                    words: words_of(&record)?,
                    ink: compared.ink,
                    ink_lines: compared.lines,
                    fit: compared.kind,
                    unaligned: compared.unaligned,
                    laid_out,
                    answer_regions: regions,
                    image: None,
                });
            } else {
                scheme_pages.push(SchemePage {
                    page_id,
                    asset_id: asset_id.clone(),
                    page,
                    width_px,
                    height_px,
                    image: None,
                });
            }
        }
    }
    if !work_pages.iter().any(|p| p.evidence || p.blank) {
        let reasons: Vec<String> = work_pages
            .iter()
            .map(|p| {
                format!(
                    "{}: {}",
                    p.page_id,
                    p.flagged.as_deref().unwrap_or("not evidence")
                )
            })
            .collect();
        return Err(JobFailure::permanent(format!(
            "no selected page is a student's work, so nothing can support an award ({})",
            reasons.join("; ")
        ))
        .with_code(FailureCode::NoStudentWork));
    }
    let source_pages: Vec<String> = scheme_pages.iter().map(|p| p.page_id.clone()).collect();
    let scheme_json = store.session_scheme(&session.id).await?;
    let scheme = structured_scheme(scheme_json.as_deref(), &work.label, &source_pages)?;
    let mut selections = Map::new();
    for (asset, pages) in &request.page_selections {
        selections.insert(asset.clone(), json!(pages));
    }
    Ok(MarkRequest {
        question_id: work.id.clone(),
        session_id: session.id.clone(),
        label: work.label.clone(),
        scheme,
        work_pages,
        scheme_pages,
        page_selections: selections,
        assets: assets_json(assets),
    })
}

/// The configured marker's answer, passed through [`answer_check`] by the marker itself.
pub(crate) async fn call_marker(
    context: &Arc<JobContext>,
    request: &MarkRequest,
    engine_assets: &[examkit_engine::Asset],
    lost: &Arc<AtomicBool>,
) -> Result<super::marker::Marked, JobFailure> {
    let check = answer_check(request, engine_assets, context.marker.name());
    let started = std::time::Instant::now();
    let marked = context.marker.mark(request, &check, lost.clone()).await;
    // What the marker recorded of its calls (a vision model's), else one call of this length.
    let run = marked.as_ref().ok().and_then(|m| m.run.as_ref());
    let count = |field: &str| run.and_then(|r| r[field].as_u64());
    crate::telemetry::marker(
        context.marker.name(),
        count("calls").unwrap_or(1),
        count("latencyMs").map_or_else(|| started.elapsed(), std::time::Duration::from_millis),
        count("promptTokens").unwrap_or(0),
        count("completionTokens").unwrap_or(0),
    );
    marked.map_err(|e| {
        let failure = if e.retry {
            JobFailure::transient(e.message)
        } else {
            JobFailure::permanent(e.message)
        };
        let failure = failure.with_code(e.code);
        match e.details {
            Some(details) => failure.with_details(details),
            None => failure,
        }
    })
}

/// The engine's result for the marked question (one-question `document`), ready to save; the
/// engine's refusal is `marker_answer_invalid` with its errors.
pub(crate) async fn score(
    document: &Value,
    engine_assets: Vec<examkit_engine::Asset>,
) -> Result<QuestionData, JobFailure> {
    let bytes = serde_json::to_vec(document).map_err(|e| {
        JobFailure::permanent(format!("the marked question cannot be written: {e}"))
    })?;
    let (_, outcome) = run_engine(bytes, engine_assets)
        .await
        .map_err(|e| match e {
            EngineError::Stopped(e) => JobFailure::from(e),
            e @ EngineError::UnusableAsset(_) => JobFailure::permanent(e.to_string()),
        })?;
    let report = match &outcome {
        Outcome::Valid(report) => report,
        Outcome::Invalid(_) => {
            let errors = serde_json::to_value(outcome.errors()).unwrap_or(Value::Null);
            let codes: Vec<String> = outcome
                .errors()
                .iter()
                .take(5)
                .map(|e| format!("{} at {}", e.code().as_str(), e.path))
                .collect();
            return Err(JobFailure::permanent(format!(
                "the marker's answer is not a valid question: {}",
                codes.join(", ")
            ))
            .with_code(FailureCode::MarkerAnswerInvalid)
            .with_details(json!({ "errors": errors })));
        }
    };
    let result = report
        .questions
        .first()
        .ok_or_else(|| JobFailure::permanent("the engine returned no question"))?;
    Ok(QuestionData {
        label: result.label.clone(),
        status: status_str(result.status).to_owned(),
        awarded: i64::from(result.score.awarded),
        possible: i64::from(result.score.possible),
        max_marks: i64::from(result.score.max),
        question_json: document["questions"][0].to_string(),
        result_json: serde_json::to_string(result)
            .map_err(|e| JobFailure::permanent(format!("the result cannot be written: {e}")))?,
    })
}

/// The check every marker's answer passes before it is saved, as [`super::marker::AnswerCheck`]
/// offers it to markers: [`check_answer`] (label, pages, the rubric against a structured scheme,
/// evidence only on the student's pages), then the engine on a one-question submission with the
/// session's assets. Each problem has a code and a JSON pointer.
pub fn answer_check<'a>(
    request: &'a MarkRequest,
    assets: &'a [examkit_engine::Asset],
    marker: &'a str,
) -> impl Fn(&Value) -> Result<(), Vec<Problem>> + Send + Sync + 'a {
    move |question: &Value| {
        check_answer(request, question).map_err(|f| {
            vec![Problem {
                code: f.code.as_str().to_owned(),
                path: String::new(),
                message: f.message,
            }]
        })?;
        let document = document_for(&request.label, question, source_for(marker, "", None));
        let bytes = serde_json::to_vec(&document).unwrap_or_default();
        let outcome = examkit_engine::validate(&bytes, Some(assets));
        match outcome {
            Outcome::Valid(_) => Ok(()),
            Outcome::Invalid(_) => Err(outcome
                .errors()
                .iter()
                .map(|e| Problem {
                    code: e.code().as_str().to_owned(),
                    path: e.path.clone(),
                    message: e.message.clone(),
                })
                .collect()),
        }
    }
}

/// The submission's `source` for a marker's answer.
pub(crate) fn source_for(marker: &str, name: &str, model: Option<&str>) -> Value {
    let name = if name.is_empty() { marker } else { name };
    let model = if marker == "builtin" {
        "examkit built-in marker (answer matching)"
    } else {
        model.unwrap_or(marker)
    };
    json!({
        "kind": "ai",
        "name": name,
        "markedAt": crate::store::rfc3339(now_ms()),
        "model": model,
    })
}

/// A one-question submission of a marker's answer, as the engine validates it.
pub(crate) fn document_for(label: &str, question: &Value, source: Value) -> Value {
    let max_marks = question["rubric"]["criteria"]
        .as_array()
        .map_or(0, Vec::len);
    json!({
        "schemaVersion": examkit_engine::SCHEMA_VERSION,
        "coordinateSystem": "normalized-top-left",
        "pageBasis": "displayed-page",
        "source": source,
        "coverage": { "kind": "partial", "questionLabels": [label], "totalMarks": max_marks },
        "questions": [question],
    })
}

/// The stored page image when indexing kept one that fits (JPEG, no longer than `long_edge`).
fn fitting(stored: Option<Vec<u8>>, long_edge: Option<u32>) -> Option<Vec<u8>> {
    let image = stored?;
    let (w, h) =
        image::ImageReader::with_format(std::io::Cursor::new(&image), image::ImageFormat::Jpeg)
            .into_dimensions()
            .ok()?;
    long_edge
        .is_none_or(|edge| w.max(h) <= edge)
        .then_some(image)
}

/// Renders each selected page to PNG for markers that read images, in displayed orientation,
/// scaled down to `long_edge` pixels when the marker asks for it. Each file is read from the
/// store once.
async fn attach_images(
    store: &Store,
    reader: &crate::untrusted::Pages,
    user_id: &str,
    request: &mut MarkRequest,
    dpi: u32,
    long_edge: Option<u32>,
    encoding: image::ImageFormat,
) -> Result<(), JobFailure> {
    let mut wanted: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for page in request.work_pages.iter().filter(|p| p.evidence || p.blank) {
        wanted
            .entry(page.asset_id.clone())
            .or_default()
            .push(page.page);
    }
    for page in &request.scheme_pages {
        wanted
            .entry(page.asset_id.clone())
            .or_default()
            .push(page.page);
    }
    let mut images: HashMap<(String, u32), Vec<u8>> = HashMap::new();
    for (asset_id, pages) in wanted {
        // Pages indexing kept an image of are not rendered again.
        let mut missing = Vec::new();
        for page in pages {
            let stored = if encoding == image::ImageFormat::Jpeg {
                fitting(store.page_image(&asset_id, page).await?, long_edge)
            } else {
                None
            };
            match stored {
                Some(image) => {
                    images.insert((asset_id.clone(), page), image);
                }
                None => missing.push(page),
            }
        }
        if missing.is_empty() {
            continue;
        }
        let pages = missing;
        let (asset, bytes) = store
            .asset_bytes(user_id, &asset_id)
            .await?
            .ok_or_else(|| JobFailure::permanent("an asset's file is missing"))?;
        let format =
            examkit_scan::Format::from_content_type(&asset.content_type).ok_or_else(|| {
                JobFailure::permanent(format!("cannot render {} files", asset.content_type))
            })?;
        let reader = reader.clone();
        let rendered =
            tokio::task::spawn_blocking(move || -> Result<Vec<(u32, Vec<u8>)>, String> {
                pages
                    .into_iter()
                    .map(|page| {
                        let image = reader
                            .render_page(&bytes, format, page, dpi)
                            .map_err(|e| e.to_string())?;
                        Ok((page, page_image(&image, long_edge, encoding)?))
                    })
                    .collect()
            })
            .await
            .map_err(JobFailure::from)?
            .map_err(|e| JobFailure::permanent(format!("a page cannot be rendered: {e}")))?;
        for (page, png) in rendered {
            images.insert((asset_id.clone(), page), png);
        }
    }
    for page in &mut request.work_pages {
        page.image = images.remove(&(page.asset_id.clone(), page.page));
    }
    for page in &mut request.scheme_pages {
        page.image = images.remove(&(page.asset_id.clone(), page.page));
    }
    Ok(())
}

/// What the service checks of every marker's answer before the engine sees it: the label, the
/// rubric against a structured scheme, and evidence only on pages that can be evidence.
pub fn check_answer(request: &MarkRequest, question: &Value) -> Result<(), JobFailure> {
    let refuse =
        |code: FailureCode, message: String| Err(JobFailure::permanent(message).with_code(code));
    if question["label"].as_str() != Some(request.label.as_str()) {
        return refuse(
            FailureCode::MarkerAnswerInvalid,
            format!(
                "the marker answered for label {}, not {}",
                question["label"], request.label
            ),
        );
    }
    if question["pageSelections"] != Value::Object(request.page_selections.clone()) {
        return refuse(
            FailureCode::MarkerAnswerInvalid,
            "the marker's pageSelections are not the question's: a marker cites only the pages it was given".into(),
        );
    }
    if let Scheme::Structured { criteria, .. } = &request.scheme {
        let expected: HashSet<String> = criteria
            .as_array()
            .map(|cs| cs.iter().map(criterion_key).collect())
            .unwrap_or_default();
        let answered: HashSet<String> = question["rubric"]["criteria"]
            .as_array()
            .map(|cs| cs.iter().map(criterion_key).collect())
            .unwrap_or_default();
        if expected != answered {
            return refuse(
                FailureCode::MarkerRubricMismatch,
                "the marker's rubric is not the scheme's: its criteria (ids, parts, codes, requirements, conditions and dependencies) must be exactly the scheme's".into(),
            );
        }
    }
    // Pages that can be evidence of nothing, and blank pages that cannot support an award.
    let flagged: HashMap<&str, &str> = request
        .work_pages
        .iter()
        .filter(|p| !p.evidence)
        .map(|p| {
            (
                p.page_id.as_str(),
                p.flagged.as_deref().unwrap_or("not a student's work"),
            )
        })
        .collect();
    let blank: HashSet<&str> = request
        .work_pages
        .iter()
        .filter(|p| p.blank)
        .map(|p| p.page_id.as_str())
        .collect();
    let empty = Vec::new();
    for decision in question["decisions"].as_array().unwrap_or(&empty) {
        let awarded = decision["outcome"] == "awarded";
        let checks = decision["conditionChecks"].as_array().unwrap_or(&empty);
        let cited = decision["evidence"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .chain(
                checks
                    .iter()
                    .flat_map(|c| c["evidence"].as_array().unwrap_or(&empty)),
            );
        for evidence in cited {
            let page = evidence["pageId"].as_str().unwrap_or("");
            if blank.contains(page) && !awarded {
                continue;
            }
            if let Some(reason) = flagged.get(page) {
                return refuse(
                    FailureCode::EvidenceNotStudentWork,
                    format!(
                        "the marker cites page {} as evidence, but {reason}",
                        evidence["pageId"].as_str().unwrap_or("")
                    ),
                );
            }
        }
    }
    Ok(())
}

/// What of a criterion a marker may not change: everything that decides the score (id, part,
/// code, requirement, conditions and how they combine, dependencies), as one comparable string.
/// Accepted answers and notes are guidance, not rubric, and are left out.
fn criterion_key(c: &Value) -> String {
    let conditions = super::builtin::strings(&c["conditions"]);
    let mode = match c["conditionMode"].as_str() {
        Some(mode) => mode,
        None if conditions.is_empty() => "",
        None => "all",
    };
    let mut depends = super::builtin::strings(&c["dependsOn"]);
    depends.sort();
    json!([
        c["id"],
        c["partId"],
        c["code"],
        c["requirement"],
        conditions,
        mode,
        depends
    ])
    .to_string()
}

/// Records a question whose marking failed for good.
pub async fn fail(context: &JobContext, job: &Job, failure: &JobFailure) -> Result<(), StoreError> {
    let question_id = serde_json::from_str::<Value>(&job.payload)
        .ok()
        .and_then(|p| p["questionId"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let error = error_json(
        failure.code.as_str(),
        &failure.message,
        failure.details.clone(),
    );
    context
        .store
        .fail_marked_question(job, &question_id, &error, &failure.message)
        .await?;
    Ok(())
}

/// Which kind of file each asset of a session is.
pub fn asset_kinds(assets: &[AssetRow]) -> HashMap<String, String> {
    assets
        .iter()
        .map(|a| (a.id.clone(), a.kind.clone()))
        .collect()
}

#[cfg(test)]
mod check_tests;
