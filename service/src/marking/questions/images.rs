//! The page images a marker that reads images is shown, in displayed orientation and scaled to
//! its long edge, each file read from the store once.

use crate::marking::jobs::JobFailure;
use crate::marking::marker::MarkRequest;
use crate::marking::pages::page_image;
use crate::store::Store;
use std::collections::BTreeMap;
use std::collections::HashMap;

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
pub(super) async fn attach_images(
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
