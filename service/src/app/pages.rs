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
    let pages = &signed.visit.state.marking.pages;
    let (body, content_type) =
        match displayed_page_image(store, pages, &signed.user.id, &asset_id, number).await {
            Ok(Some(image)) => (image, "image/jpeg"),
            Ok(None) => return Err(not_found()),
            Err(ReturnedError::Store(e)) => return Err(e.into()),
            // A page that cannot be drawn (over its budget, say) is shown as a page that says
            // so, in the place of the scan.
            Err(ReturnedError::PageImage { reason, .. }) => {
                tracing::warn!(error = %reason, "a page could not be drawn for review");
                (placeholder(number, &reason).into_bytes(), "image/svg+xml")
            }
            Err(e) => {
                tracing::warn!(error = %e, "a page could not be rendered for review");
                return Err(AppError::Api(crate::error::ApiError::Internal));
            }
        };
    let mut response = Response::new(body.into());
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(
        warp::http::header::CONTENT_TYPE,
        warp::http::HeaderValue::from_static(content_type),
    );
    headers.insert(
        warp::http::header::CACHE_CONTROL,
        warp::http::HeaderValue::from_static("no-store"),
    );
    Ok(response)
}

/// An A4-shaped image saying that page `number` cannot be shown, and why.
pub fn placeholder(number: u32, reason: &str) -> String {
    let reason: String = reason.chars().take(160).collect();
    let escape = |text: &str| {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"595\" height=\"842\" viewBox=\"0 0 595 842\">\
         <rect width=\"595\" height=\"842\" fill=\"#f4f4f4\" stroke=\"#999\"/>\
         <text x=\"297\" y=\"400\" font-family=\"sans-serif\" font-size=\"20\" text-anchor=\"middle\">Page {number} cannot be shown</text>\
         <text x=\"297\" y=\"440\" font-family=\"sans-serif\" font-size=\"12\" text-anchor=\"middle\">{}</text></svg>",
        escape(&reason)
    )
}

#[cfg(test)]
mod tests {
    use super::placeholder;

    #[test]
    fn a_placeholder_says_why_and_escapes_the_reason() {
        let svg = placeholder(3, "the page took longer than 20 s to draw <script>");
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("Page 3 cannot be shown"), "{svg}");
        assert!(
            svg.contains("longer than 20 s to draw &lt;script&gt;"),
            "{svg}"
        );
        assert!(!svg.contains("<script>"), "{svg}");
    }
}
