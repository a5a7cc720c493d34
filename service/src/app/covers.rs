//! The name area of a copy's cover as an image: the space above the name line the paper's layout
//! records, cut from the cover as scanned (with a margin, since a scan sits a little off where
//! the page was printed), so a teacher reads the student's handwriting beside the printed name
//! and the name a model read. One route, `GET /app/class-sets/{id}/covers/{copy}`.

use warp::http::StatusCode;
use warp::reply::Response;

use super::class_sets;
use super::{AppError, Signed};
use crate::results::returned::{ReturnedError, displayed_page_image};

/// The name area as a fraction of the page, widened by the margin a scan needs: a fifth of the
/// page's width around it is too much, a few hundredths is enough for skew and shift.
pub fn widened(space: &examkit_pdf::Region) -> (f64, f64, f64, f64) {
    let x0 = (space.x - 0.03).max(0.0);
    let y0 = (space.y - space.height * 0.5).max(0.0);
    let x1 = (space.x + space.width + 0.03).min(1.0);
    let y1 = (space.y + space.height * 1.6).min(1.0);
    (x0, y0, (x1 - x0).max(0.0), (y1 - y0).max(0.0))
}

/// Cuts `area` (fractions of the upright page) from a page image turned `quarter_turns`
/// clockwise to stand upright, as JPEG.
fn cut(image: &[u8], quarter_turns: u8, area: (f64, f64, f64, f64)) -> Result<Vec<u8>, String> {
    let page = image::load_from_memory(image).map_err(|e| e.to_string())?;
    let page = match quarter_turns % 4 {
        1 => page.rotate90(),
        2 => page.rotate180(),
        3 => page.rotate270(),
        _ => page,
    };
    let (w, h) = (f64::from(page.width()), f64::from(page.height()));
    let to_px = |f: f64, size: f64| (f * size).round().clamp(0.0, size) as u32;
    let (x, y) = (to_px(area.0, w), to_px(area.1, h));
    let width = to_px(area.2, w).min(page.width().saturating_sub(x)).max(1);
    let height = to_px(area.3, h).min(page.height().saturating_sub(y)).max(1);
    let part = page.crop_imm(x, y, width, height).to_rgb8();
    let mut out = std::io::Cursor::new(Vec::new());
    part.write_to(&mut out, image::ImageFormat::Jpeg)
        .map_err(|e| e.to_string())?;
    Ok(out.into_inner())
}

/// `GET /app/class-sets/{id}/covers/{copy}`: the name area of the copy's cover, when its cover is
/// in the stack and the layout records where the name goes.
pub async fn cover(signed: Signed, id: &str, copy: &str) -> Result<Response, AppError> {
    let not_found = || AppError::NotFound("cover");
    let copy: u32 = copy.parse().map_err(|_| not_found())?;
    let set = class_sets::load_overview(&signed, id).await?;
    let cover = set
        .now
        .stack
        .report
        .copies
        .get(&copy)
        .and_then(|(_, pages)| pages.get(&1))
        .cloned()
        .ok_or_else(not_found)?;
    let space = class_sets::name_space(&signed, &set.set.paper_id, set.set.revision)
        .await?
        .ok_or_else(not_found)?;
    let state = &signed.visit.state;
    let image = match displayed_page_image(
        &state.store,
        &state.marking.pages,
        &signed.user.id,
        &cover.file,
        cover.page,
    )
    .await
    {
        Ok(Some(image)) => image,
        Ok(None) => return Err(not_found()),
        Err(ReturnedError::Store(e)) => return Err(e.into()),
        Err(e) => {
            tracing::warn!(error = %e, "a cover could not be drawn");
            return Err(not_found());
        }
    };
    // A cover scanned turned is cut as it stands upright, as the review page shows it.
    let orientation = match &set.set.stack_session_id {
        Some(session) => state
            .store
            .session_pages(session)
            .await?
            .into_iter()
            .find(|p| p.asset_id == cover.file && p.page == i64::from(cover.page))
            .map_or(0, |p| p.orientation),
        None => 0,
    };
    let turns = crate::results::returned::upright(orientation);
    let area = widened(&space);
    let bytes = tokio::task::spawn_blocking(move || cut(&image, turns, area))
        .await
        .map_err(|_| AppError::Api(crate::error::ApiError::Internal))?
        .map_err(|e| {
            tracing::warn!(error = %e, "a cover's name area could not be cut");
            not_found()
        })?;
    let mut response = Response::new(bytes.into());
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(
        warp::http::header::CONTENT_TYPE,
        warp::http::HeaderValue::from_static("image/jpeg"),
    );
    response.headers_mut().insert(
        warp::http::header::CACHE_CONTROL,
        warp::http::HeaderValue::from_static("no-store"),
    );
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(x: f64, y: f64, width: f64, height: f64) -> examkit_pdf::Region {
        examkit_pdf::Region {
            page: 1,
            x,
            y,
            width,
            height,
        }
    }

    #[test]
    fn the_area_is_widened_within_the_page() {
        let (x, y, w, h) = widened(&region(0.1, 0.2, 0.5, 0.04));
        assert!((x - 0.07).abs() < 1e-9 && (y - 0.18).abs() < 1e-9);
        assert!((w - 0.56).abs() < 1e-9 && (h - 0.084).abs() < 1e-9);
        let (x, y, w, h) = widened(&region(0.0, 0.0, 1.0, 0.1));
        assert_eq!((x, y), (0.0, 0.0));
        assert!(x + w <= 1.0 && y + h <= 1.0);
    }

    #[test]
    fn a_cut_is_the_part_asked_for_and_a_bad_image_is_an_error() {
        let page = image::RgbImage::from_fn(200, 100, |x, _| {
            if x < 100 {
                image::Rgb([0, 0, 0])
            } else {
                image::Rgb([255, 255, 255])
            }
        });
        let mut png = std::io::Cursor::new(Vec::new());
        page.write_to(&mut png, image::ImageFormat::Png)
            .expect("png");
        let cut = cut(png.get_ref(), 0, (0.5, 0.0, 0.5, 0.5)).expect("cut");
        let part = image::load_from_memory(&cut).expect("jpeg").to_luma8();
        assert_eq!((part.width(), part.height()), (100, 50));
        assert!(part.pixels().all(|p| p.0[0] > 200), "the white half");
        assert!(super::cut(b"not an image", 0, (0.0, 0.0, 1.0, 1.0)).is_err());
        // An area past the edge is cut at the edge, never out of the image.
        assert!(super::cut(png.get_ref(), 0, (0.9, 0.9, 0.5, 0.5)).is_ok());
        // A page scanned upside down is turned upright first: its right half was its left.
        let turned = super::cut(png.get_ref(), 2, (0.5, 0.0, 0.5, 0.5)).expect("cut");
        let part = image::load_from_memory(&turned).expect("jpeg").to_luma8();
        assert!(part.pixels().all(|p| p.0[0] < 60), "the black half, turned");
    }
}
