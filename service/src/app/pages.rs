//! Page images for the review page: one page of one of the account's assets, as displayed (the
//! basis evidence boxes are drawn on), in JPEG. Pages indexing kept an image of are sent as they
//! are; others (imports, markers that take no images) are rendered from the file. Images are
//! `Cache-Control: no-store`, like every signed-in page: a student's work stays in no browser
//! cache after sign-out.

use warp::http::StatusCode;
use warp::reply::Response;

use super::{AppError, Signed};

/// Rendering resolution of pages without a kept image.
const DPI: u32 = 110;
/// The longest edge of a rendered page, pixels.
const LONG_EDGE: u32 = 1600;

/// `GET /app/pages/{asset}/{page}`.
pub async fn page(signed: Signed, asset: &str, page: &str) -> Result<Response, AppError> {
    let not_found = || AppError::NotFound("page");
    let asset_id = crate::http::parse_id(asset, "asset").map_err(|_| not_found())?;
    let number: u32 = page.parse().map_err(|_| not_found())?;
    let store = &signed.visit.state.store;
    let row = store
        .asset(&signed.user.id, &asset_id)
        .await?
        .ok_or_else(not_found)?;
    if number == 0 || i64::from(number) > row.page_count {
        return Err(not_found());
    }
    // A view (a class-set script's work file) shows only the pages it holds, never the other
    // pages of the stack file it views.
    if store.is_view(&asset_id).await? && !store.page_indexed(&asset_id, number).await? {
        return Err(not_found());
    }
    let body = match store.page_image(&asset_id, number).await? {
        Some(kept) => kept,
        None => {
            let (asset, bytes) = store
                .asset_bytes(&signed.user.id, &asset_id)
                .await?
                .ok_or_else(not_found)?;
            let format = examkit_scan::Format::from_content_type(&asset.content_type)
                .ok_or_else(not_found)?;
            tokio::task::spawn_blocking(move || {
                examkit_scan::render_page(&bytes, format, number, DPI)
                    .map_err(|e| e.to_string())
                    .and_then(|raster| {
                        crate::marking::questions::page_image(
                            &raster,
                            Some(LONG_EDGE),
                            image::ImageFormat::Jpeg,
                        )
                    })
            })
            .await
            .map_err(|_| AppError::Api(crate::http::ApiError::Internal))?
            .map_err(|e| {
                tracing::warn!(error = %e, "a page could not be rendered for review");
                AppError::Api(crate::http::ApiError::Internal)
            })?
        }
    };
    let mut response = Response::new(body.into());
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        warp::http::header::CONTENT_TYPE,
        warp::http::HeaderValue::from_static("image/jpeg"),
    );
    headers.insert(
        warp::http::header::CACHE_CONTROL,
        warp::http::HeaderValue::from_static("no-store"),
    );
    Ok(response)
}
