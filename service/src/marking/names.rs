//! The name-reading job: the name a student wrote on a named copy's cover, read by the marker
//! (the vision model) from the cover as indexing kept it, and saved beside the stack page. What
//! is read is a prediction, checked against the roster in `crate::class_sets::names`; it never
//! decides who wrote a copy.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use examkit_pdf::Layout;

use super::jobs::{JobContext, JobFailure};
use super::marker::{NameRequest, Rect};
use crate::store::StoreError;
use crate::store::job_kind::ReadName;
use crate::store::jobs::Job;

/// Reads the name on one cover, `payload`. `Ok(false)`: the lease was lost and nothing was
/// saved.
pub async fn run(
    context: &Arc<JobContext>,
    job: &Job,
    payload: &ReadName,
    lost: &Arc<AtomicBool>,
) -> Result<bool, JobFailure> {
    let store = &context.store;
    let page = u32::try_from(payload.page)
        .map_err(|_| JobFailure::permanent("the page number is out of range"))?;
    let image = match store.page_image(&payload.asset_id, page).await? {
        Some(kept) => kept,
        None => render(context, job, &payload.asset_id, page).await?,
    };
    let name_space = match store.class_set_of_stack(&job.session_id).await? {
        Some((_, set)) => store
            .export_layout(&job.user_id, &set.paper_id, set.revision)
            .await?
            .flatten()
            .and_then(|json| serde_json::from_str::<Layout>(&json).ok())
            .and_then(|layout| layout.name_space)
            .map(|r| Rect {
                x: r.x,
                y: r.y,
                width: r.width,
                height: r.height,
            }),
        None => return Err(JobFailure::permanent("the page is of no class set's stack")),
    };
    let request = NameRequest { image, name_space };
    let written = context.marker.read_name(&request).await.map_err(|e| {
        let failure = if e.retry {
            JobFailure::transient(e.message)
        } else {
            JobFailure::permanent(e.message)
        };
        failure.with_code(e.code)
    })?;
    if lost.load(Ordering::SeqCst) {
        return Ok(false);
    }
    Ok(store
        .save_name_read(job, &payload.asset_id, payload.page, Ok(written.as_deref()))
        .await?)
}

/// The cover rendered from its file, when indexing kept no image of it.
async fn render(
    context: &JobContext,
    job: &Job,
    asset_id: &str,
    page: u32,
) -> Result<Vec<u8>, JobFailure> {
    let (asset, bytes) = context
        .store
        .asset_bytes(&job.user_id, asset_id)
        .await?
        .ok_or_else(|| JobFailure::permanent("the asset no longer exists"))?;
    let format = examkit_scan::Format::from_content_type(&asset.content_type).ok_or_else(|| {
        JobFailure::permanent(format!("cannot render {} files", asset.content_type))
    })?;
    let (dpi, edge, encoding) = (
        context.config.dpi,
        context.marker.image_long_edge(),
        context.marker.image_format(),
    );
    let pages = context.config.pages.clone();
    tokio::task::spawn_blocking(move || {
        let image = pages
            .render_page(&bytes, format, page, dpi)
            .map_err(|e| e.to_string())?;
        super::pages::page_image(&image, edge, encoding)
    })
    .await
    .map_err(JobFailure::from)?
    .map_err(|e| JobFailure::permanent(format!("the cover cannot be rendered: {e}")))
}

/// Records that a cover's name could not be read: the copy's name stays unread, and the printed
/// name stands.
pub async fn fail(
    context: &JobContext,
    job: &Job,
    payload: &ReadName,
    message: &str,
) -> Result<(), StoreError> {
    context
        .store
        .save_name_read(job, &payload.asset_id, payload.page, Err(message))
        .await?;
    Ok(())
}
