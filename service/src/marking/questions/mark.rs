//! Marking one question ([`mark`]): the marker's standing, the request assembled from the stored
//! pages, the marker's call, the checks and guards, the engine's score, and the save.

use super::QuestionRequest;
use super::check::{answer_check, assets_json, check_answer, document_for, source_for};
use super::images::attach_images;
use super::records::{
    answer_regions, code_of, comparison_of, layout_of, session_of, structured_scheme, words_of,
};
use crate::marked::engine::EngineError;
use crate::marked::engine::question_status;
use crate::marked::engine::run_engine;
use crate::marking::evidence;
use crate::marking::failure::FailureCode;
use crate::marking::flags::MarkerFlag;
use crate::marking::jobs::JobContext;
use crate::marking::jobs::JobFailure;
use crate::marking::marker::MarkRequest;
use crate::marking::marker::SchemePage;
use crate::marking::marker::WorkPage;
use crate::marking::qualification::Standing;
use crate::store::StoreError;
use crate::store::automated::PageRecord;
use crate::store::automated::questions::error_json;
use crate::store::job_kind::MarkQuestion;
use crate::store::jobs::Job;
use crate::store::marking::AssetRow;
use crate::store::marking::QuestionData;
use crate::store::marking::SessionRow;
use crate::store::words::AssetKind;
use crate::store::words::{PageRole, PageState};
use examkit_engine::Outcome;
use examkit_pdf::DocumentKind;
use examkit_pdf::Layout;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

/// Marks one question, `question`.
pub async fn mark(
    context: &Arc<JobContext>,
    job: &Job,
    question: &MarkQuestion,
    lost: &Arc<AtomicBool>,
) -> Result<bool, JobFailure> {
    let started = std::time::Instant::now();
    let store = &context.store;
    let Some(loaded) = load(context, job, &question.question_id).await? else {
        return Err(JobFailure::permanent("the question no longer exists"));
    };
    store.question_running(&loaded.work.id).await?;
    // A marker that has not qualified, or has drifted on the seeds, marks nothing live.
    let mut standing = crate::marking::qualification::standing(store, &context.config).await?;
    if standing.blocks().is_none()
        && let Some(seeds) = &context.seeds
        && seeds.before_live(context, &standing, lost).await?
    {
        standing = crate::marking::qualification::standing(store, &context.config).await?;
    }
    if let Some(flag) = standing.blocks() {
        let work = &loaded.work;
        return save_unmarked(
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
    crate::marking::flags::apply(&mut data, &marked.flags).map_err(JobFailure::permanent)?;
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

/// A question the marker may not mark, as the job is about to: saved `needs_review` and unmarked
/// with `flag`, its `markerRun` naming the marker and its standing; `false` when the lease was
/// lost or the question was cancelled meanwhile.
#[allow(clippy::too_many_arguments)]
pub async fn save_unmarked(
    context: &Arc<JobContext>,
    job: &Job,
    question_id: &str,
    session_id: &str,
    label: &str,
    flag: &MarkerFlag,
    standing: &Standing,
    started: std::time::Instant,
    lost: &Arc<AtomicBool>,
) -> Result<bool, JobFailure> {
    let store = &context.store;
    let scheme = store.session_scheme(session_id).await?;
    let max = crate::marking::qualification::max_marks(scheme.as_deref(), label);
    let result = crate::marking::qualification::unmarked_result(label, max, flag);
    let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let run = json!({
        "marker": standing.marker,
        "model": standing.model,
        "qualification": standing.record(),
        "durationMs": ms,
    });
    tracing::info!(question = %question_id, code = %flag.code, "a question was saved unmarked: the marker may not mark live");
    if lost.load(Ordering::SeqCst) {
        return Ok(false);
    }
    Ok(store
        .save_unmarked_question(job, question_id, &result.to_string(), max, &run.to_string())
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

/// Loads what marking the job's question `question_id` needs; `None` when the question is gone.
async fn load(
    context: &Arc<JobContext>,
    job: &Job,
    question_id: &str,
) -> Result<Option<Loaded>, JobFailure> {
    let store = &context.store;
    let Some(work) = store.question_work(question_id).await? else {
        return Ok(None);
    };
    let session = session_of(context, job).await?;
    let request: QuestionRequest = serde_json::from_str(&work.request_json)
        .map_err(|e| JobFailure::permanent(format!("the question's request is malformed: {e}")))?;
    let assets = store.session_assets(&session.id).await?;
    let layout = layout_of(store, &session).await?;
    let scripts = crate::marking::indexing::scripts(&store.session_pages(&session.id).await?);
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
        ..
    } = loaded;
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
            if asset.kind == AssetKind::Work {
                work_pages.push(work_page(loaded, asset_id, page, &record)?);
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
        return Err(no_student_work(&work_pages));
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

/// Page `page` of work asset `asset_id` as the marker sees it, from its stored `record`: its
/// words, the ink added to its clean page, the answer spaces of the question the paper's layout
/// puts on it, and whether it can be evidence.
fn work_page(
    loaded: &Loaded,
    asset_id: &str,
    page: u32,
    record: &PageRecord,
) -> Result<WorkPage, JobFailure> {
    let compared = comparison_of(record)?;
    let orientation = u32::try_from(record.orientation).unwrap_or(0);
    let (regions, laid_out) = match (&loaded.layout, code_of(record), &loaded.session.paper) {
        (
            Some(layout),
            Some((DocumentKind::QuestionPaper, id, revision, on)),
            Some((paper_id, paper_revision)),
        ) if &id == paper_id && i64::from(revision) == *paper_revision => (
            answer_regions(
                layout,
                &loaded.work.label,
                on,
                orientation,
                compared.fit.as_ref(),
            ),
            true,
        ),
        _ => (Vec::new(), false),
    };
    let evidence = record.state == PageState::Ok && record.role == PageRole::Work;
    let blank = record.state == PageState::Ok
        && record.role == PageRole::CleanPaper
        && loaded.scripts.contains(asset_id);
    Ok(WorkPage {
        page_id: format!("{asset_id}:p{page}"),
        asset_id: asset_id.to_owned(),
        page,
        width_px: u32::try_from(record.width_px).unwrap_or(0),
        height_px: u32::try_from(record.height_px).unwrap_or(0),
        orientation,
        evidence,
        blank,
        flagged: (!evidence).then(|| record.role_reason.clone()),
        words: words_of(record)?,
        ink: compared.ink,
        ink_lines: compared.lines,
        fit: compared.kind,
        unaligned: compared.unaligned,
        laid_out,
        answer_regions: regions,
        image: None,
    })
}

/// The failure of a question none of whose selected pages is a student's work, each page's
/// reason named.
fn no_student_work(work_pages: &[WorkPage]) -> JobFailure {
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
    JobFailure::permanent(format!(
        "no selected page is a student's work, so nothing can support an award ({})",
        reasons.join("; ")
    ))
    .with_code(FailureCode::NoStudentWork)
}

/// The configured marker's answer, passed through [`answer_check`] by the marker itself.
pub(crate) async fn call_marker(
    context: &Arc<JobContext>,
    request: &MarkRequest,
    engine_assets: &[examkit_engine::Asset],
    lost: &Arc<AtomicBool>,
) -> Result<crate::marking::marker::Marked, JobFailure> {
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
        status: question_status(result.status),
        awarded: i64::from(result.score.awarded),
        possible: i64::from(result.score.possible),
        max_marks: i64::from(result.score.max),
        question_json: document["questions"][0].to_string(),
        result_json: serde_json::to_string(result)
            .map_err(|e| JobFailure::permanent(format!("the result cannot be written: {e}")))?,
    })
}

/// Records a question, `question`, whose marking failed for good.
pub async fn fail(
    context: &JobContext,
    job: &Job,
    question: &MarkQuestion,
    failure: &JobFailure,
) -> Result<(), StoreError> {
    let error = error_json(
        failure.code.as_str(),
        &failure.message,
        failure.details.clone(),
    );
    context
        .store
        .fail_marked_question(job, &question.question_id, &error, &failure.message)
        .await?;
    Ok(())
}
