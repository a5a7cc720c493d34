//! What people do to a saved paper, whoever asks: create it, save a change as a new revision,
//! and prepare a revision's two PDFs. `POST` and `PATCH /v1/papers` and the app's paper builder
//! come here, so a pin is checked against the bank, a paper is typeset to count its pages and a
//! stale revision is refused by one path.
//!
//! - [`create`]: a paper with the client's id; the same id and content again is the same paper,
//!   the same id with other content is `paper_exists`.
//! - [`update`]: a change from the current revision; a stale one is `stale_revision`, a change
//!   that changes nothing saves nothing.
//! - [`ensure_exports`]: a revision's question paper and mark scheme, typeset once and stored.
//! - [`document`]: the typesetter's view of a revision, for the PDFs and class sets' print runs.
//! - [`request`]: a new paper and a change as asked, checked field by field: the `/v1` bodies and
//!   the app's builder read through it, so a change has one set of rules.

pub mod request;

use std::collections::BTreeMap;

use examkit_bank::Status;
use serde::Serialize;

use crate::auth::sha256_hex;
use crate::error::ApiError;
use crate::error::invalid_fields;
use crate::fields::FieldError;
use crate::server::state::AppState;
use crate::store::now_ms;
use crate::store::papers::{
    BankRevision, Created, PaperContent, PaperFigures, Pin, StoredPaper, Updated,
};
use crate::typeset::TypesetError;
use request::{CreatePaper, UpdatePaper};

/// The most pages the question paper, and separately the mark scheme, of a paper may have.
pub const MAX_PAGES: usize = 80;
/// The most papers one account may hold, by default.
pub const DEFAULT_MAX_PAPERS: usize = 1000;
/// What the estimated grade guide says of itself, in the paper and on the mark scheme.
pub const GRADE_GUIDE_NOTE: &str = "An estimated grade guide for practice, not an official grade boundary: each grade needs the given percentage of the paper's total marks, rounded up.";

/// The SHA-256 of a creation's checked content: identical retries compare equal whatever their
/// key order, spacing or id case.
fn create_hash(paper: &CreatePaper) -> String {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Canonical<'a> {
        id: &'a str,
        title: &'a str,
        questions: &'a [Pin],
        writing_space: &'a str,
        grade_guide: bool,
    }
    let canonical = Canonical {
        id: &paper.id,
        title: &paper.content.title,
        questions: &paper.content.questions,
        writing_space: &paper.content.writing_space,
        grade_guide: paper.content.grade_guide,
    };
    sha256_hex(&serde_json::to_vec(&canonical).unwrap_or_default())
}

/// Checks each pin against the bank; `kept` are the pins of the revision being changed, which
/// may have been withdrawn since they were chosen.
pub async fn check_pins(
    state: &AppState,
    pins: &[Pin],
    kept: &[Pin],
) -> Result<Vec<BankRevision>, ApiError> {
    let mut errors = Vec::new();
    let mut found = Vec::with_capacity(pins.len());
    for (i, pin) in pins.iter().enumerate() {
        let at = format!("/questions/{i}");
        let stored = state
            .store
            .bank_revision(&pin.question_id, pin.revision)
            .await?;
        let Some(stored) = stored.filter(|r| r.status != Status::Draft) else {
            errors.push(FieldError::new(
                &at,
                "pin_unknown",
                format!(
                    "the bank has no published revision {} of question {}; copy pins unchanged from search results",
                    pin.revision, pin.question_id
                ),
            ));
            continue;
        };
        if stored.content_version != pin.content_version {
            errors.push(FieldError::new(
                &format!("{at}/contentVersion"),
                "pin_mismatch",
                format!(
                    "this is not the content version of revision {} of question {}; copy pins unchanged from search results",
                    pin.revision, pin.question_id
                ),
            ));
        }
        if stored.scheme_version != pin.scheme_version {
            errors.push(FieldError::new(
                &format!("{at}/schemeVersion"),
                "pin_mismatch",
                format!(
                    "this is not the scheme version of revision {} of question {}; copy pins unchanged from search results",
                    pin.revision, pin.question_id
                ),
            ));
        }
        if stored.status == Status::Withdrawn && !kept.contains(pin) {
            errors.push(FieldError::new(
                &at,
                "pin_withdrawn",
                format!(
                    "revision {} of question {} has been withdrawn and cannot be added to a paper; search for its current revision",
                    pin.revision, pin.question_id
                ),
            ));
        }
        found.push(stored);
    }
    if errors.is_empty() {
        Ok(found)
    } else {
        Err(invalid_fields(errors))
    }
}

/// Loads the bank revisions of pins already saved in a paper (no status check: a saved paper
/// keeps its question versions).
pub async fn saved_revisions(
    state: &AppState,
    pins: &[Pin],
) -> Result<Vec<BankRevision>, ApiError> {
    let mut found = Vec::with_capacity(pins.len());
    for pin in pins {
        let stored = state
            .store
            .bank_revision(&pin.question_id, pin.revision)
            .await?
            .ok_or_else(|| {
                ApiError::RevisionNotExportable(format!(
                    "revision {} of question {} is no longer in the bank",
                    pin.revision, pin.question_id
                ))
            })?;
        found.push(stored);
    }
    Ok(found)
}

/// The typesetter's view of a paper revision: its pinned bank revisions and their diagram files.
pub async fn document(
    state: &AppState,
    id: &str,
    revision: i64,
    content: &PaperContent,
    bank: &[BankRevision],
) -> Result<examkit_pdf::PaperDocument, ApiError> {
    let corrupt = |what: String| {
        tracing::error!(paper = %id, revision, "{what}");
        ApiError::Internal
    };
    let mut questions = Vec::with_capacity(bank.len());
    for (pin, stored) in content.questions.iter().zip(bank) {
        let revision: examkit_bank::Revision = serde_json::from_str(&stored.body).map_err(|e| {
            corrupt(format!(
                "stored question {} is not a revision: {e}",
                pin.question_id
            ))
        })?;
        let mut assets = BTreeMap::new();
        for (asset_id, bytes) in state
            .store
            .bank_revision_files(&pin.question_id, pin.revision)
            .await?
        {
            let asset_id = uuid::Uuid::parse_str(&asset_id)
                .map_err(|e| corrupt(format!("stored asset id {asset_id}: {e}")))?;
            assets.insert(asset_id, bytes);
        }
        questions.push(examkit_pdf::PaperQuestion {
            question_id: uuid::Uuid::parse_str(&pin.question_id)
                .map_err(|e| corrupt(format!("pinned question id: {e}")))?,
            revision,
            assets,
        });
    }
    Ok(examkit_pdf::PaperDocument {
        paper_id: uuid::Uuid::parse_str(id).map_err(|e| corrupt(format!("paper id: {e}")))?,
        revision: u32::try_from(revision).map_err(|e| corrupt(format!("revision: {e}")))?,
        title: content.title.clone(),
        writing_space: content
            .writing_space
            .parse()
            .map_err(|e| corrupt(format!("writing space: {e}")))?,
        grade_guide: content.grade_guide,
        questions,
    })
}

/// Typesets a paper about to be saved: its marks and pages, within [`MAX_PAGES`].
async fn measure(
    state: &AppState,
    id: &str,
    revision: i64,
    content: &PaperContent,
    bank: &[BankRevision],
) -> Result<PaperFigures, ApiError> {
    let doc = document(state, id, revision, content, bank).await?;
    let pages = state
        .typesetter
        .page_counts(doc)
        .await
        .map_err(|e| match e {
            TypesetError::Render(e) => ApiError::PaperNotTypesettable(e.to_string()),
            TypesetError::Timeout(_) => {
                ApiError::ServiceUnavailable("typesetting is busy; retry the save shortly".into())
            }
            TypesetError::Task(e) => {
                tracing::error!(error = %e, "typesetting task failed");
                ApiError::Internal
            }
        })?;
    if pages.question_paper > MAX_PAGES || pages.mark_scheme > MAX_PAGES {
        return Err(ApiError::PaperTooLong {
            question_paper: pages.question_paper,
            mark_scheme: pages.mark_scheme,
            limit: MAX_PAGES,
        });
    }
    let as_i64 = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    Ok(PaperFigures {
        total_marks: bank.iter().map(|r| r.marks).sum(),
        paper_pages: as_i64(pages.question_paper),
        scheme_pages: as_i64(pages.mark_scheme),
    })
}

/// The account's paper `id` at `revision` (its latest without one), or 404.
pub async fn stored(
    state: &AppState,
    user_id: &str,
    id: &str,
    revision: Option<i64>,
) -> Result<StoredPaper, ApiError> {
    state
        .store
        .paper(user_id, id, revision)
        .await?
        .ok_or(ApiError::NotFound(if revision.is_some() {
            "paper revision"
        } else {
            "paper"
        }))
}

/// Revision 1 of the paper a creation names, when it is the same creation again.
async fn existing(
    state: &AppState,
    user_id: &str,
    paper: &CreatePaper,
    stored_hash: &str,
    hash: &str,
) -> Result<StoredPaper, ApiError> {
    if stored_hash != hash {
        return Err(ApiError::PaperExists);
    }
    stored(state, user_id, &paper.id, Some(1)).await
}

/// Creates a paper (revision 1); the same creation again returns the same paper.
pub async fn create(
    state: &AppState,
    user_id: &str,
    paper: &CreatePaper,
) -> Result<StoredPaper, ApiError> {
    let hash = create_hash(paper);
    let store = &state.store;
    if let Some(stored_hash) = store.paper_create_hash(user_id, &paper.id).await? {
        return existing(state, user_id, paper, &stored_hash, &hash).await;
    }
    let bank = check_pins(state, &paper.content.questions, &[]).await?;
    let figures = measure(state, &paper.id, 1, &paper.content, &bank).await?;
    let created = store
        .create_paper(
            user_id,
            &paper.id,
            &hash,
            &paper.content,
            &figures,
            state.max_papers,
            now_ms(),
        )
        .await?;
    match created {
        Created::New => stored(state, user_id, &paper.id, Some(1)).await,
        Created::Existing { create_hash } => {
            existing(state, user_id, paper, &create_hash, &hash).await
        }
        Created::LimitReached => Err(ApiError::TooManyPapers(state.max_papers)),
    }
}

/// Saves a change to paper `id` as its next revision; a change from a revision that is not the
/// latest is `stale_revision`, and one that changes nothing returns the latest unchanged.
pub async fn update(
    state: &AppState,
    user_id: &str,
    id: &str,
    change: &UpdatePaper,
) -> Result<StoredPaper, ApiError> {
    let current = stored(state, user_id, id, None).await?;
    if change.revision != current.revision {
        return Err(ApiError::StaleRevision(current.revision));
    }
    let content = change.apply(&current.content);
    if content == current.content {
        return Ok(current);
    }
    let next = current.revision + 1;
    let bank = check_pins(state, &content.questions, &current.content.questions).await?;
    let figures = measure(state, id, next, &content, &bank).await?;
    let saved = state
        .store
        .update_paper(user_id, id, change.revision, &content, &figures, now_ms())
        .await?;
    match saved {
        Updated::Saved(revision) => stored(state, user_id, id, Some(revision)).await,
        Updated::Stale(current) => Err(ApiError::StaleRevision(current)),
        Updated::Missing => Err(ApiError::NotFound("paper")),
    }
}

/// Prepares a revision's PDFs when they are not prepared yet (typeset once, stored, with the
/// answer-space layout of the question paper), and returns the revision and its bank revisions.
/// Exports prepared before layouts were recorded get theirs typeset again (the same bytes).
pub async fn ensure_exports(
    state: &AppState,
    user_id: &str,
    id: &str,
    revision: i64,
) -> Result<(StoredPaper, Vec<BankRevision>), ApiError> {
    let paper = stored(state, user_id, id, Some(revision)).await?;
    let bank = saved_revisions(state, &paper.content.questions).await?;
    let layout_missing = paper.exports_ready
        && matches!(
            state.store.export_layout(user_id, id, revision).await?,
            Some(None)
        );
    if paper.exports_ready && !layout_missing {
        return Ok((paper, bank));
    }
    if !state.typesetter.export_enabled() {
        return Err(ApiError::PdfExportDisabled);
    }
    let doc = document(state, id, revision, &paper.content, &bank).await?;
    let pdfs = state
        .typesetter
        .render(doc)
        .await
        .map_err(|e| typeset_failure(e, "the PDFs were not ready"))?;
    if paper.exports_ready {
        state
            .store
            .save_export_layout(user_id, id, revision, &pdfs.layout_json)
            .await?;
    } else {
        state
            .store
            .save_paper_exports(
                user_id,
                id,
                revision,
                &pdfs.question_paper,
                &pdfs.mark_scheme,
                &pdfs.layout_json,
                now_ms(),
            )
            .await?;
    }
    let paper = stored(state, user_id, id, Some(revision)).await?;
    Ok((paper, bank))
}

/// The answer to a typesetting that produced nothing: the revision cannot be typeset (409), it
/// took too long (503: `what` was not ready, retry), or the task failed (500, logged).
pub fn typeset_failure(e: TypesetError, what: &str) -> ApiError {
    match e {
        TypesetError::Render(e) => ApiError::RevisionNotExportable(e.to_string()),
        TypesetError::Timeout(limit) => ApiError::ServiceUnavailable(format!(
            "{what} within {} seconds; retry the same request",
            limit.as_secs()
        )),
        TypesetError::Task(e) => {
            tracing::error!(error = %e, "typesetting task failed");
            ApiError::Internal
        }
    }
}
