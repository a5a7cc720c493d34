//! Reading a script from the store: one marking session's questions, and its pages as the
//! review page shows them.
//!
//! A class-set script's pages are the paper's pages in order (each the stack page placed there,
//! through the session's view of its stack file, or a placeholder when it was not scanned), then
//! the extra sheets assigned to it. Any other session's pages are its work files' pages in upload
//! order. Each image is the one `GET /app/pages/{asset}/{page}` sends: the image indexing kept,
//! else the page rendered from its file; and each starts upright as the review page turns it.

use std::collections::HashMap;
use std::io::Cursor;
use std::sync::Arc;

use serde::Deserialize;

use super::{ReturnedError, ReturnedScript, ScannedPage, ScriptPage};
use crate::marked::MarkedQuestion;
use crate::store::Store;
use crate::store::class_sets::scripts::ScriptRow;
use crate::store::marking::{AssetRow, SessionRow};
use crate::store::words::AssetKind;

/// Rendering resolution of pages without a kept image (the review page's).
const DPI: u32 = 110;
/// The longest edge of a rendered page, pixels (the review page's).
const LONG_EDGE: u32 = 1600;

/// What the cover says beside the marks: who, which paper, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptHeading {
    /// The student's name.
    pub student: String,
    /// The paper's title.
    pub paper_title: String,
    /// The date, as printed.
    pub date: String,
}

/// A page to show, before its image is read.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Planned {
    Scan {
        asset_id: String,
        page: u32,
        caption: String,
    },
    Missing(u32),
}

/// What a class-set script was made from, as stored with it.
#[derive(Deserialize)]
struct Made {
    pages: Vec<MadePage>,
    #[serde(default)]
    extras: Vec<MadeExtra>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MadePage {
    copy_page: u32,
    file: String,
    page: u32,
}

#[derive(Deserialize)]
struct MadeExtra {
    question: String,
    file: String,
    page: u32,
}

/// The script marked by session `session_id` of account `user_id`, headed by `heading`: its
/// questions in paper order, read through [`MarkedQuestion::from_row`], and its pages with their
/// images. Only this script's images are held.
pub async fn load_script(
    store: &Store,
    pages: &crate::untrusted::Pages,
    user_id: &str,
    session_id: &str,
    heading: ScriptHeading,
) -> Result<ReturnedScript, ReturnedError> {
    let session = store
        .session(user_id, session_id)
        .await?
        .ok_or(ReturnedError::NotFound)?;
    script_of(store, pages, user_id, &session, heading).await
}

/// The script of one marking session returned on its own, dated `date`: headed by the
/// session's title as the student and its paper revision's title (else the session's).
pub async fn load_session_script(
    store: &Store,
    pages: &crate::untrusted::Pages,
    user_id: &str,
    session_id: &str,
    date: String,
) -> Result<ReturnedScript, ReturnedError> {
    let session = store
        .session(user_id, session_id)
        .await?
        .ok_or(ReturnedError::NotFound)?;
    let paper_title = match &session.paper {
        Some((paper, revision)) => store
            .paper_revision_title(user_id, paper, *revision)
            .await?
            .unwrap_or_else(|| session.title.clone()),
        None => session.title.clone(),
    };
    let heading = ScriptHeading {
        student: session.title.clone(),
        paper_title,
        date,
    };
    script_of(store, pages, user_id, &session, heading).await
}

async fn script_of(
    store: &Store,
    pages: &crate::untrusted::Pages,
    user_id: &str,
    session: &SessionRow,
    heading: ScriptHeading,
) -> Result<ReturnedScript, ReturnedError> {
    let assets = store.session_assets(&session.id).await?;
    let kinds = crate::marking::questions::asset_kinds(&assets);
    let questions = store
        .session_questions(&session.id)
        .await?
        .iter()
        .map(|row| {
            MarkedQuestion::from_row(row, &kinds).map_err(|source| {
                ReturnedError::UnreadableQuestion {
                    label: row.label.clone(),
                    source,
                }
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let plan = match store.script_of_session(&session.id).await? {
        Some(script) => class_set_plan(&script, &store.view_sources(&session.id).await?)?,
        None => session_plan(&assets),
    };
    // Pages indexing found turned start upright, as on the review page.
    let turns: HashMap<(String, u32), u8> = if session.origin == crate::store::automated::ORIGIN {
        store
            .session_pages(&session.id)
            .await?
            .into_iter()
            .filter_map(|p| {
                Some((
                    (p.asset_id, u32::try_from(p.page).ok()?),
                    upright(p.orientation),
                ))
            })
            .collect()
    } else {
        HashMap::new()
    };
    let mut file: Option<(String, Arc<Vec<u8>>, examkit_scan::Format)> = None;
    let mut shown = Vec::with_capacity(plan.len());
    for planned in plan {
        let (asset_id, page, caption) = match planned {
            Planned::Missing(paper_page) => {
                shown.push(ScriptPage::NotScanned { paper_page });
                continue;
            }
            Planned::Scan {
                asset_id,
                page,
                caption,
            } => (asset_id, page, caption),
        };
        let image = displayed_image(store, pages, user_id, &asset_id, page, &mut file).await?;
        let page_id = format!("{asset_id}:p{page}");
        let (width_px, height_px) =
            dimensions(&image).map_err(|reason| ReturnedError::PageImage {
                page_id: page_id.clone(),
                reason,
            })?;
        shown.push(ScriptPage::Scanned(ScannedPage {
            quarter_turns: turns.get(&(asset_id, page)).copied().unwrap_or(0),
            page_id,
            caption,
            image,
            width_px,
            height_px,
        }));
    }
    Ok(ReturnedScript {
        student: heading.student,
        paper_title: heading.paper_title,
        date: heading.date,
        questions,
        pages: shown,
    })
}

/// Quarter turns clockwise that show upright a page whose content is turned `orientation`
/// degrees clockwise (as the review page computes them).
pub fn upright(orientation: i64) -> u8 {
    // 0 to 3 by construction.
    ((360 - orientation.rem_euclid(360)) % 360 / 90) as u8
}

/// A class-set script's pages: the paper's pages in order, scanned (through the session's view
/// of the stack file) or missing, then its extra sheets.
fn class_set_plan(
    script: &ScriptRow,
    views: &[(String, String)],
) -> Result<Vec<Planned>, ReturnedError> {
    let made: Made = serde_json::from_str(&script.pages_json)
        .map_err(|e| ReturnedError::UnreadableScript(format!("its pages: {e}")))?;
    let missing: Vec<u32> = serde_json::from_str(&script.missing_json)
        .map_err(|e| ReturnedError::UnreadableScript(format!("its missing pages: {e}")))?;
    let view_of = |file: &str| {
        views
            .iter()
            .find(|(_, source)| source == file)
            .map(|(view, _)| view.clone())
            .ok_or_else(|| {
                ReturnedError::UnreadableScript(format!("the session has no view of file {file}"))
            })
    };
    let mut paper: Vec<(u32, Planned)> = Vec::with_capacity(made.pages.len() + missing.len());
    for p in &made.pages {
        paper.push((
            p.copy_page,
            Planned::Scan {
                asset_id: view_of(&p.file)?,
                page: p.page,
                caption: format!("Page {}", p.copy_page),
            },
        ));
    }
    paper.extend(missing.into_iter().map(|n| (n, Planned::Missing(n))));
    paper.sort_by_key(|(n, _)| *n);
    let mut plan: Vec<Planned> = paper.into_iter().map(|(_, p)| p).collect();
    for extra in &made.extras {
        plan.push(Planned::Scan {
            asset_id: view_of(&extra.file)?,
            page: extra.page,
            caption: format!("Extra sheet · question {}", extra.question),
        });
    }
    Ok(plan)
}

/// Any other session's pages: every page of its work files, in upload order.
fn session_plan(assets: &[AssetRow]) -> Vec<Planned> {
    let work: Vec<&AssetRow> = assets
        .iter()
        .filter(|a| a.kind == AssetKind::Work)
        .collect();
    let named = work.len() > 1;
    work.iter()
        .flat_map(|asset| {
            let pages = u32::try_from(asset.page_count.max(0)).unwrap_or(0);
            (1..=pages).map(move |page| Planned::Scan {
                asset_id: asset.id.clone(),
                page,
                caption: if named {
                    format!("{} · page {page}", asset.name)
                } else {
                    format!("Page {page}")
                },
            })
        })
        .collect()
}

/// The width and height of an image, from its header.
fn dimensions(image: &[u8]) -> Result<(u32, u32), String> {
    image::ImageReader::new(Cursor::new(image))
        .with_guessed_format()
        .map_err(|e| e.to_string())?
        .into_dimensions()
        .map_err(|e| e.to_string())
}

/// The displayed image of page `page` of asset `asset_id` of account `user_id`, as the review
/// page sends it (`GET /app/pages/{asset}/{page}`): the image indexing kept, else the page
/// rendered from its file in JPEG (at the review page's resolution: evidence boxes are fractions
/// of the page, whatever its resolution). `None` when the account has no such asset or the
/// asset no such page.
pub async fn displayed_page_image(
    store: &Store,
    pages: &crate::untrusted::Pages,
    user_id: &str,
    asset_id: &str,
    page: u32,
) -> Result<Option<Vec<u8>>, ReturnedError> {
    let Some(asset) = store.asset(user_id, asset_id).await? else {
        return Ok(None);
    };
    if page == 0 || i64::from(page) > asset.page_count {
        return Ok(None);
    }
    let mut file = None;
    match displayed_image(store, pages, user_id, asset_id, page, &mut file).await {
        Ok(image) => Ok(Some(image)),
        Err(ReturnedError::NotFound) => Ok(None),
        Err(e) => Err(e),
    }
}

/// [`displayed_page_image`], keeping the last file read in `file` for the next page of it.
async fn displayed_image(
    store: &Store,
    pages: &crate::untrusted::Pages,
    user_id: &str,
    asset_id: &str,
    page: u32,
    file: &mut Option<(String, Arc<Vec<u8>>, examkit_scan::Format)>,
) -> Result<Vec<u8>, ReturnedError> {
    if let Some(kept) = store.page_image(asset_id, page).await? {
        return Ok(kept);
    }
    let page_id = format!("{asset_id}:p{page}");
    let drawn_key = (user_id.to_owned(), asset_id.to_owned(), page);
    if let Some(drawn) = drawn::get(&drawn_key) {
        return drawn.map_err(|reason| ReturnedError::PageImage { page_id, reason });
    }
    let cached = file.as_ref().filter(|(id, _, _)| id == asset_id);
    let (bytes, format) =
        match cached {
            Some((_, bytes, format)) => (bytes.clone(), *format),
            None => {
                let (asset, bytes) = store
                    .asset_bytes(user_id, asset_id)
                    .await?
                    .ok_or(ReturnedError::NotFound)?;
                let format = examkit_scan::Format::from_content_type(&asset.content_type)
                    .ok_or_else(|| ReturnedError::PageImage {
                        page_id: page_id.clone(),
                        reason: format!("a file of type {} has no pages", asset.content_type),
                    })?;
                let bytes = Arc::new(bytes);
                *file = Some((asset_id.to_owned(), bytes.clone(), format));
                (bytes, format)
            }
        };
    let pages = pages.clone();
    let (drawn, lasting) = tokio::task::spawn_blocking(move || {
        match pages.render_page(&bytes, format, page, DPI) {
            Ok(raster) => {
                let image = crate::marking::pages::page_image(
                    &raster,
                    Some(LONG_EDGE),
                    image::ImageFormat::Jpeg,
                );
                (image, true)
            }
            // The file's fault lasts; a reader that could not run may run next time.
            Err(e) => {
                let lasting = matches!(e, crate::untrusted::PageError::File(_));
                (Err(e.to_string()), lasting)
            }
        }
    })
    .await
    .map_err(|e| ReturnedError::Task(e.to_string()))?;
    if lasting {
        drawn::keep(drawn_key, &drawn);
    }
    drawn.map_err(|reason| ReturnedError::PageImage { page_id, reason })
}

/// Pages drawn from their files lately, by account, file and page, with the reason of those
/// that could not be drawn: a page is drawn once for the review page, the returned script and
/// every look again, and a page over its budget is not tried again each time it is shown.
mod drawn {
    use std::collections::VecDeque;
    use std::sync::Mutex;

    /// Account, file, page.
    pub(super) type Key = (String, String, u32);

    /// The images kept at most (a few hundred kilobytes each).
    const KEPT: usize = 48;

    /// A page's image, or why it could not be drawn.
    type Drawn = Result<Vec<u8>, String>;

    static DRAWN: Mutex<VecDeque<(Key, Drawn)>> = Mutex::new(VecDeque::new());

    pub(super) fn get(key: &Key) -> Option<Drawn> {
        DRAWN
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, drawn)| drawn.clone())
    }

    pub(super) fn keep(key: Key, drawn: &Drawn) {
        let mut kept = DRAWN.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|(k, _)| *k != key);
        if kept.len() >= KEPT {
            kept.pop_front();
        }
        kept.push_back((key, drawn.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(pages_json: &str, missing_json: &str) -> ScriptRow {
        ScriptRow {
            copy: 3,
            session_id: "s".into(),
            pages_json: pages_json.into(),
            missing_json: missing_json.into(),
            created_at: 0,
            superseded_at: None,
        }
    }

    #[test]
    fn a_class_set_scripts_pages_are_the_papers_in_order_then_its_extra_sheets() {
        let made = r#"{"pages":[{"copyPage":3,"file":"f2","page":1},{"copyPage":1,"file":"f1","page":5}],
            "extras":[{"question":"4","file":"f2","page":9}]}"#;
        let views = vec![
            ("v1".to_owned(), "f1".to_owned()),
            ("v2".to_owned(), "f2".to_owned()),
        ];
        let plan = class_set_plan(&script(made, "[2,4]"), &views).expect("a plan");
        let scan = |asset_id: &str, page: u32, caption: &str| Planned::Scan {
            asset_id: asset_id.into(),
            page,
            caption: caption.into(),
        };
        assert_eq!(
            plan,
            vec![
                scan("v1", 5, "Page 1"),
                Planned::Missing(2),
                scan("v2", 1, "Page 3"),
                Planned::Missing(4),
                scan("v2", 9, "Extra sheet · question 4"),
            ]
        );
        let unviewed = class_set_plan(&script(made, "[]"), &views[..1]).expect_err("refused");
        assert_eq!(unviewed.code(), "unreadable_script");
        let unreadable = class_set_plan(&script("{", "[]"), &views).expect_err("refused");
        assert_eq!(unreadable.code(), "unreadable_script");
    }

    #[test]
    fn a_page_turned_by_indexing_starts_upright() {
        assert_eq!(upright(0), 0);
        assert_eq!(upright(90), 3);
        assert_eq!(upright(180), 2);
        assert_eq!(upright(270), 1);
        assert_eq!(upright(-90), 1);
    }
}
