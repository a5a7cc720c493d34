//! Placing a paper session's questions on its indexed pages ([`plan`]): the pages each question
//! is on, the questions whose pages were not scanned (saved unmarked), and one marking job per
//! question.

use super::records::{labels_of, layout_of, session_of};
use super::{MAX_SCHEME_PAGES, MAX_WORK_PAGES, QuestionRequest};
use crate::marked::PAGE_NOT_SCANNED;
use crate::marking::failure::FailureCode;
use crate::marking::jobs::JobContext;
use crate::marking::jobs::JobFailure;
use crate::store::Store;
use crate::store::StoreError;
use crate::store::automated::PageRecord;
use crate::store::automated::questions::NewQuestion;
use crate::store::automated::questions::QueueOutcome;
use crate::store::automated::questions::Unmarked;
use crate::store::automated::questions::error_json;
use crate::store::jobs::Job;
use crate::store::marking::SessionRow;
use crate::store::now_ms;
use crate::store::words::PageState;
use examkit_pdf::Layout;
use serde_json::Value;
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

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
        let (request, work_pages) = request_for(label, &pages, &kind_of, &shows);
        questions.push(new_question(label, q, &request, work_pages, &unscanned)?);
    }
    if lost.load(Ordering::SeqCst) {
        return Ok(false);
    }
    queue(context, job, &session.id, questions).await
}

/// What question `label` is asked with: the work pages that show it (at most
/// [`MAX_WORK_PAGES`]), and the scheme pages that show it (at most [`MAX_SCHEME_PAGES`]; the
/// first scheme page when none does). Also the count of work pages selected.
fn request_for(
    label: &str,
    pages: &[PageRecord],
    kind_of: &HashMap<&str, &str>,
    shows: &impl Fn(&PageRecord, &str) -> bool,
) -> (QuestionRequest, usize) {
    let mut request = QuestionRequest {
        work_asset_ids: Vec::new(),
        scheme_asset_ids: Vec::new(),
        page_selections: BTreeMap::new(),
    };
    let mut work_pages = 0;
    for page in pages.iter().filter(|p| p.state == PageState::Ok) {
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
    (request, work_pages)
}

/// Question `label` (`q` of the scheme) as it is queued: unmarked when pages it is on were not
/// scanned, failed when no work page shows it or no scheme page can be cited, else to be marked.
fn new_question(
    label: &str,
    q: &Value,
    request: &QuestionRequest,
    work_pages: usize,
    unscanned: &Unscanned,
) -> Result<NewQuestion, JobFailure> {
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
    Ok(NewQuestion {
        label: label.to_owned(),
        request_json: serde_json::to_string(request)
            .map_err(|e| JobFailure::permanent(format!("the request cannot be stored: {e}")))?,
        failed,
        unmarked,
    })
}

/// Finishes the planning job and queues `questions` in one transaction; past the account's
/// daily allowance every question is saved failed instead. `false` when the lease was lost.
async fn queue(
    context: &Arc<JobContext>,
    job: &Job,
    session_id: &str,
    mut questions: Vec<NewQuestion>,
) -> Result<bool, JobFailure> {
    let store = &context.store;
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
            session_id,
            &questions,
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
                session_id,
                &questions,
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
                Some(layout) => crate::marking::placement::from_layout(layout, page)
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
    crate::marking::flags::unmarked_result(
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
