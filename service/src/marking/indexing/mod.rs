//! The indexing job: one page of one uploaded asset → its record (orientation, words with boxes,
//! page code, the questions on it, and whether it can be evidence of a student's answer).
//!
//! Only a completed student scan is work evidence. A work page is flagged, and can never support
//! an award, when
//! - it carries the page code of a mark scheme, or its text reads as one (`scheme_as_work`);
//! - it is a page of the session's question paper to which nothing was added: the page is
//!   aligned with the same page rendered clean from the export and compared, and no line of
//!   added writing (at least [`WRITING_MIN_EXTENT`] high and wide) lies in an answer space of the
//!   page (`clean_paper`). How much of the page is inked is not the test: a short final answer
//!   ("x = 3") is a line of writing however little ink it takes. A page of a class set's copy,
//!   found by its copy code, is always the student's (`work`): a part with nothing written in its
//!   space is then a blank answer, never "no student work".
//!
//! Where no clean page can be compared (a session made without a paper, or a page without a
//! code), the record says so.
//!
//! # Files
//!
//! - `mod.rs`: the jobs: indexing a page ([`run`]) and failing it ([`fail`]).
//! - `reference.rs`: the clean pages a page is compared with.
//! - `reading.rs`: reading one page on a blocking thread.
//! - `record.rs`: the page's record, its role and whether it is written on.

mod reading;
mod record;
mod reference;

use super::jobs::JobContext;
use super::jobs::JobFailure;
use crate::store::StoreError;
use crate::store::automated::PageRecord;
use crate::store::class_sets::SetRow;
use crate::store::class_sets::stacks::STACK_ORIGIN;
use crate::store::class_sets::stacks::StackRead;
use crate::store::job_kind::{IndexPage, PlacedAs};
use crate::store::jobs::Job;
use crate::store::now_ms;
use crate::store::words::AssetKind;
use crate::store::words::{PageRole, PageState};
use examkit_pdf::CopyCode;
use examkit_scan::Format;
use examkit_scan::IndexOptions;
use reading::{Found, index_blocking};
use record::record;
pub use record::writes_in_answer_space;
use reference::{Reference, reference, stack_reference};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

/// A page whose text holds at least this many mark codes (`M1`, `A1`…) reads as a mark scheme.
pub const SCHEME_MARK_CODES: usize = 6;

fn format_of(content_type: &str) -> Option<Format> {
    match content_type {
        "application/pdf" => Some(Format::Pdf),
        "image/png" => Some(Format::Png),
        "image/jpeg" => Some(Format::Jpeg),
        "image/webp" => Some(Format::Webp),
        _ => None,
    }
}

/// Runs one indexing job, of the page `payload`.
pub async fn run(
    context: &Arc<JobContext>,
    job: &Job,
    payload: &IndexPage,
    lost: &Arc<AtomicBool>,
) -> Result<bool, JobFailure> {
    let store = &context.store;
    store.mark_indexing_running(&job.session_id).await?;
    let session = store
        .session(&job.user_id, &job.session_id)
        .await?
        .ok_or_else(|| JobFailure::permanent("the session no longer exists"))?;
    let (asset, bytes) = store
        .asset_bytes(&job.user_id, &payload.asset_id)
        .await?
        .ok_or_else(|| JobFailure::permanent("the asset no longer exists"))?;
    let format = format_of(&asset.content_type).ok_or_else(|| {
        JobFailure::permanent(format!("cannot index {} files", asset.content_type))
    })?;
    let page = u32::try_from(payload.page)
        .map_err(|_| JobFailure::permanent("the page number is out of range"))?;
    if asset.kind == AssetKind::Scheme
        && let Some(saved) = reuse_scheme_page(context, job, &asset, payload.page).await?
    {
        return Ok(saved);
    }
    let stack_of = if session.origin == STACK_ORIGIN {
        store.class_set_of_stack(&session.id).await?
    } else {
        None
    };
    let reference = match (&session.paper, &stack_of) {
        (_, Some((_, set))) => stack_reference(context, &job.user_id, set).await?,
        (Some((paper_id, revision)), None) => {
            reference(context, &job.user_id, paper_id, *revision).await?
        }
        (None, None) => None,
    };
    let work = asset.kind == AssetKind::Work;
    let started = std::time::Instant::now();
    let (found, reference) = read_page(
        context,
        bytes,
        format,
        page,
        work,
        reference,
        payload.placed_as,
    )
    .await
    .inspect_err(|_| crate::telemetry::page_indexed("failed", "none", started.elapsed()))?;
    if lost.load(Ordering::SeqCst) {
        return Ok(false);
    }
    let record = record(
        &asset.id,
        payload.page,
        asset.kind,
        &found,
        reference.as_ref(),
    )?;
    crate::telemetry::page_indexed("ok", &record.text_source, started.elapsed());
    let codes: Vec<String> = found
        .index
        .codes
        .iter()
        .map(|c| c.payload.clone())
        .collect();
    let stack = match stack_of {
        Some((_, set)) => Some(StackRead {
            read_name: context.marker.reads_names() && named_cover(context, &set, &codes).await?,
            class_set_id: set.id,
            codes,
            fingerprint: found.fingerprint.clone(),
        }),
        None => None,
    };
    Ok(store
        .save_page_index_with(
            job,
            &job.session_id,
            &record,
            None,
            found.image.as_deref(),
            stack.as_ref(),
        )
        .await?)
}

/// Reads page `page` of the file `bytes` on a blocking thread with a kept reader, lined up with
/// its `reference` when there is one; the reference is given back with what was found.
async fn read_page(
    context: &Arc<JobContext>,
    bytes: Vec<u8>,
    format: Format,
    page: u32,
    work: bool,
    reference: Option<Reference>,
    placed_as: Option<PlacedAs>,
) -> Result<(Found, Option<Reference>), JobFailure> {
    let options = IndexOptions {
        dpi: context.config.dpi,
        ocr: context.config.ocr,
        ..IndexOptions::default()
    };
    // Kept for a marker that is shown pages as JPEG, so marking need not render them again.
    let image_edge = (context.marker.needs_images()
        && context.marker.image_format() == image::ImageFormat::Jpeg)
        .then(|| context.marker.image_long_edge())
        .flatten();
    let readers = Arc::clone(context);
    let bytes = Arc::new(bytes);
    tokio::task::spawn_blocking(move || {
        let mut reader = readers.readers.take(&options)?;
        let found = index_blocking(
            &readers.config.pages,
            &mut reader,
            &bytes,
            format,
            page,
            work,
            reference.as_ref(),
            placed_as,
            image_edge,
        );
        readers.readers.give(reader);
        found.map(|found| (found, reference))
    })
    .await
    .map_err(JobFailure::from)?
}

/// Saves, as page `page` of mark scheme `asset`, the record of the same page of an identical
/// scheme file of the account that was read already, with whether it was saved (false: the job
/// was lost); `None` when there is none (or it has no image and the marker is shown images), and
/// the page is read.
async fn reuse_scheme_page(
    context: &JobContext,
    job: &Job,
    asset: &crate::store::marking::AssetRow,
    page: i64,
) -> Result<Option<bool>, JobFailure> {
    let started = std::time::Instant::now();
    let Some((twin, image)) = context
        .store
        .read_scheme_twin(&job.user_id, &asset.sha256, page, &asset.id)
        .await?
    else {
        return Ok(None);
    };
    if context.marker.needs_images() && image.is_none() {
        return Ok(None);
    }
    let record = PageRecord {
        asset_id: asset.id.clone(),
        page,
        indexed_at: now_ms(),
        ..twin
    };
    crate::telemetry::page_indexed("ok", &record.text_source, started.elapsed());
    Ok(Some(
        context
            .store
            .save_page_index_with(job, &job.session_id, &record, None, image.as_deref(), None)
            .await?,
    ))
}

/// Whether a stack page's codes say, all of them, that it is the cover (page 1) of one copy of
/// the set, printed for a student: the page whose written name is read.
async fn named_cover(
    context: &JobContext,
    set: &SetRow,
    codes: &[String],
) -> Result<bool, JobFailure> {
    let mut copies = codes.iter().map(|payload| {
        CopyCode::parse(payload)
            .filter(|c| c.run_id.as_hyphenated().to_string() == set.id && c.page == 1)
            .map(|c| c.copy)
    });
    let Some(Some(copy)) = copies.next() else {
        return Ok(false);
    };
    if !copies.all(|other| other == Some(copy)) {
        return Ok(false);
    }
    Ok(context
        .store
        .class_set_copies(&set.id)
        .await?
        .iter()
        .any(|c| c.copy == i64::from(copy) && c.name.is_some()))
}

/// The work assets that are a student's script: those with at least one page of student work.
/// On such an asset, a page to which nothing was added is a blank page of the script (it can
/// locate a blank answer, never support an award); an asset with no such page is the clean
/// question paper, and none of its pages is evidence of anything.
pub fn scripts(pages: &[PageRecord]) -> std::collections::HashSet<String> {
    pages
        .iter()
        .filter(|p| p.state == PageState::Ok && p.role == PageRole::Work)
        .map(|p| p.asset_id.clone())
        .collect()
}

/// Records a page whose job failed for good: the page is listed with its error, the session's
/// progress counts it, and indexing ends `failed`.
pub async fn fail(
    context: &JobContext,
    job: &Job,
    payload: &IndexPage,
    error: &str,
) -> Result<(), StoreError> {
    let store = &context.store;
    let IndexPage { asset_id, page, .. } = payload.clone();
    let kind = match store.asset(&job.user_id, &asset_id).await? {
        Some(asset) => asset.kind,
        None => AssetKind::Work,
    };
    let record = PageRecord {
        asset_id,
        page,
        state: PageState::Failed,
        error: Some(error.to_owned()),
        orientation: 0,
        text_source: "none".into(),
        width_px: 0,
        height_px: 0,
        role: kind.into(),
        role_reason: "the page could not be indexed".into(),
        code_json: None,
        labels_json: "[]".into(),
        words_json: "[]".into(),
        compare_json: None,
        indexed_at: now_ms(),
    };
    store
        .save_page_index(job, &job.session_id, &record, Some(error), None)
        .await?;
    Ok(())
}
