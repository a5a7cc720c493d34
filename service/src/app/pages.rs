//! Page images for the review page: one page of one of the account's assets, as displayed (the
//! basis evidence boxes are drawn on), in JPEG. Pages indexing kept an image of are sent as they
//! are; others (imports, markers that take no images) are rendered from the file. Images are
//! `Cache-Control: no-store`, like every signed-in page: a student's work stays in no browser
//! cache after sign-out.

use warp::http::StatusCode;
use warp::reply::Response;

use super::{AppError, Signed};
use crate::results::returned::{ReturnedError, displayed_page_image};

/// `GET /app/pages/{asset}/{page}`: the image
/// [`crate::results::returned::displayed_page_image`] gives, as the returned scripts show it.
pub async fn page(signed: Signed, asset: &str, page: &str) -> Result<Response, AppError> {
    let not_found = || AppError::NotFound("page");
    let asset_id = crate::http::parse_id(asset, "asset").map_err(|_| not_found())?;
    let number: u32 = page.parse().map_err(|_| not_found())?;
    let store = &signed.visit.state.store;
    // A view (a class-set script's work file) shows only the pages it holds, never the other
    // pages of the stack file it views.
    if store.is_view(&asset_id).await? && !store.page_indexed(&asset_id, number).await? {
        return Err(not_found());
    }
    let body = match displayed_page_image(store, &signed.user.id, &asset_id, number).await {
        Ok(Some(image)) => image,
        Ok(None) => return Err(not_found()),
        Err(ReturnedError::Store(e)) => return Err(e.into()),
        Err(e) => {
            tracing::warn!(error = %e, "a page could not be rendered for review");
            return Err(AppError::Api(crate::http::ApiError::Internal));
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
