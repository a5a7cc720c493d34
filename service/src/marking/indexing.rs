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

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;

use examkit_pdf::{CopyCode, DocumentKind, Layout, PageCode};
use examkit_scan::{Comparison, Format, IndexOptions, Indexer, PageIndex, Word};

use super::jobs::{JobContext, JobFailure};
use super::pages::WRITING_MIN_EXTENT;
use super::placement::{self, FoundLabel};
use crate::store::automated::PageRecord;
use crate::store::class_sets::SetRow;
use crate::store::class_sets::stacks::{STACK_ORIGIN, StackRead};
use crate::store::jobs::Job;
use crate::store::papers::ExportKind;
use crate::store::{StoreError, now_ms};

/// A page whose text holds at least this many mark codes (`M1`, `A1`…) reads as a mark scheme.
pub const SCHEME_MARK_CODES: usize = 6;

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Payload {
    asset_id: String,
    page: i64,
    /// Where a person placed a stack page whose code could not be read: the page is read again
    /// as that copy's page, lined up with its clean print like a page found by its code.
    #[serde(default)]
    placed_as: Option<PlacedAs>,
}

/// A copy's page, as a person placed a stack page there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlacedAs {
    /// The copy.
    pub copy: u32,
    /// Its page, from 1.
    pub page: u32,
}

/// The payload of the job that reads stack page `page` of `asset_id` again as the copy's page a
/// person placed it as.
pub fn reread_payload(asset_id: &str, page: i64, placed_as: PlacedAs) -> String {
    json!({ "assetId": asset_id, "page": page, "placedAs": placed_as }).to_string()
}

/// The session's paper, when it was made from one: the clean pages as printed and its layout.
struct Reference {
    paper_id: uuid::Uuid,
    revision: u32,
    /// The PDF the clean pages are rendered from: the question paper, or a class set's copies.
    printed: Vec<u8>,
    /// How a page's codes name a page of `printed`.
    source: Source,
    layout: Option<Layout>,
}

/// What the clean pages were printed as.
enum Source {
    /// The paper's question paper, its pages named by page codes.
    QuestionPaper,
    /// A class set's copies, named by copy codes of the set's print run.
    ClassSet {
        /// The set: the print run.
        run_id: uuid::Uuid,
        /// Each copy's place in print order, from 0.
        order: std::collections::HashMap<u32, usize>,
        /// The question paper's pages.
        paper_pages: u32,
        /// The pages each copy takes.
        pages_per_copy: u32,
    },
}

impl Reference {
    /// The paper page a page's codes name, as the paper's page code, and the page of `printed`
    /// that is its clean print; `None` when they name no page of this paper as printed (a
    /// copy's blank back names no page of the paper).
    fn locate(&self, payloads: &[String]) -> Option<(PageCode, u32)> {
        match &self.source {
            Source::QuestionPaper => payloads.iter().find_map(|p| {
                PageCode::parse(p)
                    .filter(|c| {
                        c.kind == DocumentKind::QuestionPaper
                            && c.paper_id == self.paper_id
                            && c.revision == self.revision
                    })
                    .map(|c| (c, c.page))
            }),
            Source::ClassSet { run_id, .. } => payloads.iter().find_map(|p| {
                let code = CopyCode::parse(p).filter(|c| c.run_id == *run_id)?;
                self.copy_page(code.copy, code.page)
            }),
        }
    }

    /// The paper page of page `page` of class-set copy `copy`, and the page of `printed` that is
    /// its clean print; `None` for a question paper, a copy not printed, or a page past the
    /// paper's (an extra sheet).
    fn copy_page(&self, copy: u32, page: u32) -> Option<(PageCode, u32)> {
        let Source::ClassSet {
            order,
            paper_pages,
            pages_per_copy,
            ..
        } = &self.source
        else {
            return None;
        };
        let index = u32::try_from(*order.get(&copy)?).ok()?;
        (page >= 1 && page <= *paper_pages).then(|| {
            (
                PageCode {
                    kind: DocumentKind::QuestionPaper,
                    paper_id: self.paper_id,
                    revision: self.revision,
                    page,
                },
                index * pages_per_copy + page,
            )
        })
    }
}

/// What the blocking part found.
struct Found {
    index: PageIndex,
    code: Option<PageCode>,
    /// A digest of the page's pixels as rendered (equal for an identical rescan).
    fingerprint: String,
    comparison: Option<Comparison>,
    /// The added ink's lines of writing, in the order the clean page reads.
    lines: Vec<examkit_scan::NormBox>,
    compare_note: Option<String>,
    /// The page renders to exactly the clean page's pixels.
    identical: bool,
    /// The page was found by a class set's copy code: it is that student's page.
    by_copy: bool,
    /// The displayed page as the marker will be shown it, when it takes images (JPEG).
    image: Option<Vec<u8>>,
}

fn format_of(content_type: &str) -> Option<Format> {
    match content_type {
        "application/pdf" => Some(Format::Pdf),
        "image/png" => Some(Format::Png),
        "image/jpeg" => Some(Format::Jpeg),
        "image/webp" => Some(Format::Webp),
        _ => None,
    }
}

/// Runs one indexing job.
pub async fn run(
    context: &Arc<JobContext>,
    job: &Job,
    lost: &Arc<AtomicBool>,
) -> Result<bool, JobFailure> {
    let store = &context.store;
    let payload: Payload = serde_json::from_str(&job.payload)
        .map_err(|e| JobFailure::permanent(format!("malformed job: {e}")))?;
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
    if asset.kind == "scheme"
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
    let work = asset.kind == "work";
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
        &asset.kind,
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

/// A class set's copies as printed, for the pages of its stack.
async fn stack_reference(
    context: &JobContext,
    user_id: &str,
    set: &SetRow,
) -> Result<Option<Reference>, JobFailure> {
    let store = &context.store;
    let Some(printed) = store.class_set_pdf(user_id, &set.id).await? else {
        return Ok(None);
    };
    let copies = store.class_set_copies(&set.id).await?;
    let layout = store
        .export_layout(user_id, &set.paper_id, set.revision)
        .await?
        .flatten()
        .and_then(|json| serde_json::from_str::<Layout>(&json).ok());
    let (Ok(paper_id), Ok(revision), Ok(run_id), Ok(paper_pages), Ok(pages_per_copy)) = (
        uuid::Uuid::parse_str(&set.paper_id),
        u32::try_from(set.revision),
        uuid::Uuid::parse_str(&set.id),
        u32::try_from(set.paper_pages),
        u32::try_from(set.pages_per_copy),
    ) else {
        return Ok(None);
    };
    let order = copies
        .iter()
        .enumerate()
        .filter_map(|(i, c)| Some((u32::try_from(c.copy).ok()?, i)))
        .collect();
    Ok(Some(Reference {
        paper_id,
        revision,
        printed,
        source: Source::ClassSet {
            run_id,
            order,
            paper_pages,
            pages_per_copy,
        },
        layout,
    }))
}

/// The session's clean question paper and its recorded layout.
async fn reference(
    context: &JobContext,
    user_id: &str,
    paper_id: &str,
    revision: i64,
) -> Result<Option<Reference>, JobFailure> {
    let store = &context.store;
    let Some(question_paper) = store
        .paper_export(user_id, paper_id, revision, ExportKind::QuestionPaper)
        .await?
    else {
        return Ok(None);
    };
    let layout = store
        .export_layout(user_id, paper_id, revision)
        .await?
        .flatten()
        .and_then(|json| serde_json::from_str::<Layout>(&json).ok());
    let (Ok(paper_id), Ok(revision)) = (uuid::Uuid::parse_str(paper_id), u32::try_from(revision))
    else {
        return Ok(None);
    };
    Ok(Some(Reference {
        paper_id,
        revision,
        printed: question_paper,
        source: Source::QuestionPaper,
        layout,
    }))
}

#[allow(clippy::too_many_arguments)]
fn index_blocking(
    pages: &crate::untrusted::Pages,
    indexer: &mut Indexer,
    bytes: &Arc<Vec<u8>>,
    format: Format,
    page: u32,
    work: bool,
    reference: Option<&Reference>,
    placed_as: Option<PlacedAs>,
    image_edge: Option<u32>,
) -> Result<Found, JobFailure> {
    let dpi = indexer.options().dpi;
    let max_pixels = indexer.options().max_pixels;
    // The file is drawn where a hostile one can do no harm; the pixels are read here.
    let rendered = pages
        .render_for_index(bytes, format, page, dpi, max_pixels)
        .map_err(|e| match e {
            crate::untrusted::PageError::File(e) => {
                JobFailure::permanent(format!("page {page} cannot be read: {e}"))
            }
            crate::untrusted::PageError::Reader(e) => JobFailure::transient(e),
        })?;
    let (mut index, raster, words_later) = indexer
        .index_rendered_words_later(page, rendered, format)
        .map_err(|e| JobFailure::permanent(format!("page {page} cannot be read: {e}")))?;
    let image = match image_edge {
        Some(edge) => Some(
            super::pages::page_image(&raster, Some(edge), image::ImageFormat::Jpeg).map_err(
                |e| JobFailure::permanent(format!("page {page} cannot be encoded: {e}")),
            )?,
        ),
        None => None,
    };
    let payloads: Vec<String> = index.codes.iter().map(|c| c.payload.clone()).collect();
    // A page a person placed is that copy's page, whatever its codes say (its code was covered
    // or torn off); any other is where its codes put it.
    let located = reference.and_then(|r| match placed_as {
        Some(at) => r.copy_page(at.copy, at.page),
        None => r.locate(&payloads),
    });
    let code = match &located {
        Some((code, _)) => Some(*code),
        None => payloads.iter().find_map(|p| PageCode::parse(p)),
    };
    let by_copy =
        located.is_some() && reference.is_some_and(|r| matches!(r.source, Source::ClassSet { .. }));
    let fingerprint = fingerprint(&raster);
    let Clean {
        comparison,
        lines,
        note: compare_note,
        identical,
        printed,
    } = if work {
        clean_comparison(
            reference,
            located.as_ref(),
            payloads.is_empty(),
            &raster,
            dpi,
        )?
    } else {
        Clean::default()
    };
    if words_later {
        index.words = read_words(indexer, &raster, format, &index, printed, &lines)
            .map_err(|e| JobFailure::permanent(format!("page {page} cannot be read: {e}")))?;
        index.text_source = examkit_scan::TextSource::Ocr;
    }
    Ok(Found {
        index,
        code,
        fingerprint,
        comparison,
        lines,
        compare_note,
        identical,
        by_copy,
        image,
    })
}

/// A work page compared with its clean page: the comparison and the lines of added writing,
/// or why there is none; whether it is the clean page's very pixels; and the words the clean
/// page prints, where they lie on the scan.
#[derive(Default)]
struct Clean {
    comparison: Option<Comparison>,
    lines: Vec<examkit_scan::NormBox>,
    note: Option<String>,
    identical: bool,
    printed: Option<Vec<Word>>,
}

/// Compares the scan `raster` (rendered at `dpi`) with the clean page its code `located` in the
/// `reference`; with none, says why (`no_codes`: the page carries no page code).
fn clean_comparison(
    reference: Option<&Reference>,
    located: Option<&(PageCode, u32)>,
    no_codes: bool,
    raster: &image::GrayImage,
    dpi: u32,
) -> Result<Clean, JobFailure> {
    let mut out = Clean::default();
    match (reference, located) {
        (None, _) => {
            out.note = Some(
                "the session was not made from a paper: there is no clean page to compare with"
                    .to_owned(),
            );
        }
        (Some(_), None) if no_codes => {
            out.note =
                Some("the page carries no page code: it cannot be matched to a clean page".into());
        }
        (Some(r), Some((_, printed_page))) => {
            let (clean, clean_words) = examkit_scan::printed_page(&r.printed, *printed_page, dpi)
                .map_err(|e| {
                JobFailure::transient(format!("the clean page cannot be rendered: {e}"))
            })?;
            // The raster indexing read is the page rendered at the same dpi.
            let scanned = raster;
            // The same pixels are the clean page, whatever alignment makes of them (a page
            // with too little ink to align, say).
            out.identical =
                scanned.dimensions() == clean.dimensions() && scanned.as_raw() == clean.as_raw();
            let (compared, ink) =
                examkit_scan::compare_with_ink_except(scanned, &clean, &copy_marks(&clean));
            if let Some(ink) = &ink {
                out.lines = ink.lines_of(&compared);
                out.printed = Some(on_the_scan(&compared, clean_words));
            }
            out.comparison = Some(compared);
        }
        (Some(_), None) => {
            out.note = Some(
                "the page code names another document: there is no clean page to compare with"
                    .to_owned(),
            );
        }
    }
    Ok(out)
}

/// Where the clean page carries its code and the code's caption: they name the copy and the
/// page, not the paper's print, and a sticker or a tear over them is no reason to think the scan
/// another page. The caption runs leftwards from the code's foot, on the code's rows.
fn copy_marks(clean: &image::GrayImage) -> Vec<examkit_scan::NormBox> {
    examkit_scan::decode_codes(clean)
        .into_iter()
        .map(|c| {
            let b = c.bbox;
            let (pad_x, pad_y) = (b.width * 0.15, b.height * 0.15);
            let x = (b.x - 4.0 * b.width).max(0.0);
            let y = (b.y - pad_y).max(0.0);
            examkit_scan::NormBox {
                x,
                y,
                width: (b.x + b.width + pad_x).min(1.0) - x,
                height: (b.y + b.height + pad_y).min(1.0) - y,
            }
        })
        .collect()
}

/// The clean page's printed words where the comparison puts them on the scanned page.
fn on_the_scan(comparison: &Comparison, words: Vec<Word>) -> Vec<Word> {
    words
        .into_iter()
        .filter_map(|w| {
            Some(Word {
                bbox: comparison.to_work(&w.bbox)?,
                ..w
            })
        })
        .collect()
}

/// The words of a page whose codes settled its turn. When it lines up with its clean page, the
/// print is read from the clean page's text layer (exactly, with no OCR) and only the lines of
/// writing the student added are read by OCR, the rest of the page blanked: most of a page is
/// print, and OCR costs by the text it reads. Otherwise the whole page is read by OCR.
fn read_words(
    indexer: &mut Indexer,
    raster: &image::GrayImage,
    format: Format,
    index: &PageIndex,
    printed: Option<Vec<Word>>,
    lines: &[examkit_scan::NormBox],
) -> Result<Vec<Word>, examkit_scan::ScanError> {
    let Some(mut words) = printed else {
        return indexer.read_words(raster, format, index.orientation);
    };
    if lines.is_empty() {
        return Ok(words);
    }
    // A little white around each line, and the strokes' faint edges.
    let pad = (raster.width().max(raster.height()) / 300).max(2);
    let written = indexer.read_words(
        &examkit_scan::only_within(raster, lines, pad),
        format,
        index.orientation,
    )?;
    // Print beside the writing, inside a line's box, is already read from the text layer.
    let beside_print = |w: &Word| {
        let (x, y) = w.bbox.center();
        words.iter().any(|p| p.bbox.contains_point(x, y))
    };
    let written: Vec<Word> = written.into_iter().filter(|w| !beside_print(w)).collect();
    words.extend(written);
    Ok(words)
}

/// A digest of a raster's size and pixels: two scans are the same scan when it is equal.
fn fingerprint(raster: &image::GrayImage) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(raster.width().to_be_bytes());
    hasher.update(raster.height().to_be_bytes());
    hasher.update(raster.as_raw());
    crate::auth::hex(&hasher.finalize())
}

/// Whether a line of added writing, at least [`WRITING_MIN_EXTENT`] high and wide, lies in an
/// answer space of paper page `page`: `lines` are on the scan, `spaces` on the clean page, and
/// `to_clean` carries a box of the scan onto the clean page. A page with no answer space (or a
/// paper without a layout) is written on when any such line lies anywhere on it.
pub fn writes_in_answer_space(
    lines: &[examkit_scan::NormBox],
    spaces: &[examkit_scan::NormBox],
    to_clean: impl Fn(&examkit_scan::NormBox) -> Option<examkit_scan::NormBox>,
) -> bool {
    let mut writing = lines
        .iter()
        .filter(|l| l.height >= WRITING_MIN_EXTENT && l.width >= WRITING_MIN_EXTENT);
    if spaces.is_empty() {
        return writing.next().is_some();
    }
    writing.any(|line| {
        let on_clean = to_clean(line).unwrap_or(*line);
        spaces.iter().any(|space| space.intersects(&on_clean))
    })
}

/// The answer spaces a layout records on paper page `page`, on the clean page.
fn answer_spaces(layout: Option<&Layout>, page: u32) -> Vec<examkit_scan::NormBox> {
    let Some(layout) = layout else {
        return Vec::new();
    };
    layout
        .questions
        .iter()
        .flat_map(|q| {
            q.answer_space
                .iter()
                .chain(q.parts.iter().flat_map(|p| p.answer_space.iter()))
        })
        .filter(|r| r.page == page)
        .map(|r| examkit_scan::NormBox {
            x: r.x,
            y: r.y,
            width: r.width,
            height: r.height,
        })
        .collect()
}

/// The page's role and the reason for it.
fn role(kind: &str, found: &Found, layout: Option<&Layout>) -> (&'static str, String) {
    if kind != "work" {
        return ("scheme", "uploaded as a mark scheme".into());
    }
    if let Some(code) = &found.code
        && code.kind == DocumentKind::MarkScheme
    {
        return (
            "scheme_as_work",
            format!(
                "this page carries the page code of page {} of a mark scheme: a mark scheme is never evidence of a student's answer",
                code.page
            ),
        );
    }
    let codes = placement::mark_codes(&found.index.words);
    if found.code.is_none() && codes >= SCHEME_MARK_CODES {
        return (
            "scheme_as_work",
            format!(
                "the page's text reads as a mark scheme ({codes} mark codes such as M1 and A1): a mark scheme is never evidence of a student's answer"
            ),
        );
    }
    if let (Some(comparison), Some(code)) = (&found.comparison, &found.code)
        && !found.by_copy
        && (found.identical
            || (comparison.aligned
                && !writes_in_answer_space(
                    &found.lines,
                    &answer_spaces(layout, code.page),
                    |line| comparison.to_clean(line),
                )))
    {
        return (
            "clean_paper",
            format!(
                "nothing was added to page {} of the clean question paper: a clean question paper is never evidence of a student's answer",
                code.page
            ),
        );
    }
    ("work", "student work".into())
}

fn record(
    asset_id: &str,
    page: i64,
    kind: &str,
    found: &Found,
    reference: Option<&Reference>,
) -> Result<PageRecord, JobFailure> {
    let to_json = |v: &serde_json::Value| v.to_string();
    let labels: Vec<FoundLabel> = match (&found.code, reference.and_then(|r| r.layout.as_ref())) {
        (Some(code), Some(layout))
            if code.kind == DocumentKind::QuestionPaper
                && reference.is_some_and(|r| {
                    r.paper_id == code.paper_id && r.revision == code.revision
                }) =>
        {
            placement::from_layout(layout, code.page)
        }
        _ => placement::from_text(&found.index.words),
    };
    let (role, reason) = role(kind, found, reference.and_then(|r| r.layout.as_ref()));
    let words = serde_json::to_string(&found.index.words)
        .map_err(|e| JobFailure::permanent(format!("the words cannot be stored: {e}")))?;
    let compare = match (&found.comparison, &found.compare_note) {
        (Some(c), _) => Some(to_json(&json!({
            "available": true,
            "aligned": c.aligned,
            "addedFraction": c.added_fraction,
            "addedRegions": c.added_regions,
            // The added ink split into lines of writing, in the order the clean page reads, so
            // that each mark's evidence can be put on its own line.
            "addedLines": found.lines,
            "note": c.note,
            // How the scan was lined up, so that answer spaces are carried onto it (marking)
            // and a person can see which fit was used and how well it held.
            "fit": c.fit,
            "residualPx": c.residual_px,
            "matches": c.matches,
            "transform": c.transform,
        }))),
        (None, Some(note)) => Some(to_json(&json!({ "available": false, "note": note }))),
        (None, None) => None,
    };
    Ok(PageRecord {
        asset_id: asset_id.to_owned(),
        page,
        state: "ok".into(),
        error: None,
        orientation: i64::from(found.index.orientation.degrees()),
        text_source: text_source(&found.index),
        width_px: i64::from(found.index.width_px),
        height_px: i64::from(found.index.height_px),
        role: role.into(),
        role_reason: reason,
        code_json: found.code.as_ref().map(|c| {
            to_json(&json!({
                "kind": match c.kind { DocumentKind::QuestionPaper => "question-paper", DocumentKind::MarkScheme => "mark-scheme" },
                "paperId": c.paper_id,
                "revision": c.revision,
                "page": c.page,
            }))
        }),
        labels_json: serde_json::to_string(&labels)
            .map_err(|e| JobFailure::permanent(format!("the labels cannot be stored: {e}")))?,
        words_json: words,
        compare_json: compare,
        indexed_at: now_ms(),
    })
}

fn text_source(index: &PageIndex) -> String {
    match index.text_source {
        examkit_scan::TextSource::TextLayer => "textLayer",
        examkit_scan::TextSource::Ocr => "ocr",
        examkit_scan::TextSource::None => "none",
    }
    .to_owned()
}

/// The work assets that are a student's script: those with at least one page of student work.
/// On such an asset, a page to which nothing was added is a blank page of the script (it can
/// locate a blank answer, never support an award); an asset with no such page is the clean
/// question paper, and none of its pages is evidence of anything.
pub fn scripts(pages: &[PageRecord]) -> std::collections::HashSet<String> {
    pages
        .iter()
        .filter(|p| p.state == "ok" && p.role == "work")
        .map(|p| p.asset_id.clone())
        .collect()
}

/// Records a page whose job failed for good: the page is listed with its error, the session's
/// progress counts it, and indexing ends `failed`.
pub async fn fail(context: &JobContext, job: &Job, error: &str) -> Result<(), StoreError> {
    let store = &context.store;
    let Ok(Payload { asset_id, page, .. }) = serde_json::from_str(&job.payload) else {
        // A malformed job names no page to record.
        let mut tx = store.begin_write().await?;
        crate::store::Store::fail_job_in(&mut tx, job, error, now_ms()).await?;
        tx.commit().await?;
        return Ok(());
    };
    let kind = match store.asset(&job.user_id, &asset_id).await? {
        Some(asset) => asset.kind,
        None => "work".into(),
    };
    let record = PageRecord {
        asset_id,
        page,
        state: "failed".into(),
        error: Some(error.to_owned()),
        orientation: 0,
        text_source: "none".into(),
        width_px: 0,
        height_px: 0,
        role: if kind == "work" { "work" } else { "scheme" }.into(),
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

#[cfg(test)]
mod tests {
    use examkit_scan::NormBox;
    use proptest::prelude::*;

    use super::writes_in_answer_space;
    use crate::marking::pages::WRITING_MIN_EXTENT;

    fn b(x: f64, y: f64, width: f64, height: f64) -> NormBox {
        NormBox {
            x,
            y,
            width,
            height,
        }
    }

    /// The answer spaces of a page: two parts' spaces, one under the other.
    fn spaces() -> Vec<NormBox> {
        vec![b(0.1, 0.2, 0.8, 0.2), b(0.1, 0.55, 0.8, 0.25)]
    }

    #[test]
    fn a_short_answer_in_an_answer_space_is_writing() {
        // "x = 3": about 0.04 of the width and 0.012 of the height, 0.0005 of the page.
        let answer = [b(0.6, 0.33, 0.04, 0.012)];
        assert!(writes_in_answer_space(&answer, &spaces(), |l| Some(*l)));
        // The same line beside the spaces (a doodle in the margin) is not an answer.
        let margin = [b(0.92, 0.33, 0.04, 0.012)];
        assert!(!writes_in_answer_space(&margin, &spaces(), |l| Some(*l)));
        // Thinner than the writing extent: a printed rule shifted by a pixel in scanning.
        let rule = [b(0.1, 0.3, 0.8, WRITING_MIN_EXTENT / 2.0)];
        assert!(!writes_in_answer_space(&rule, &spaces(), |l| Some(*l)));
        assert!(!writes_in_answer_space(&[], &spaces(), |l| Some(*l)));
    }

    #[test]
    fn lines_are_carried_onto_the_clean_page_before_they_are_judged() {
        // On the scan the line sits in the margin; the transform puts it in the first space.
        let line = [b(0.92, 0.05, 0.04, 0.012)];
        let shift = |l: &NormBox| Some(b(l.x - 0.4, l.y + 0.25, l.width, l.height));
        assert!(writes_in_answer_space(&line, &spaces(), shift));
        assert!(!writes_in_answer_space(&line, &spaces(), |l| Some(*l)));
    }

    #[test]
    fn without_answer_spaces_any_line_of_writing_counts() {
        let line = [b(0.92, 0.05, 0.04, 0.012)];
        assert!(writes_in_answer_space(&line, &[], |l| Some(*l)));
        assert!(!writes_in_answer_space(
            &[b(0.5, 0.5, 0.001, 0.3)],
            &[],
            |l| Some(*l)
        ));
    }

    proptest! {
        /// A line of writing inside an answer space counts however small it is, down to the
        /// writing extent, and whatever else is on the page.
        #[test]
        fn any_line_at_least_the_writing_extent_in_a_space_is_writing(
            space in (0.0f64..0.8, 0.0f64..0.8, 0.05f64..0.2, 0.05f64..0.2),
            at in (0.0f64..1.0, 0.0f64..1.0),
            size in (WRITING_MIN_EXTENT..0.05, WRITING_MIN_EXTENT..0.05),
            others in proptest::collection::vec((0.0f64..1.0, 0.0f64..1.0), 0..5),
        ) {
            let space = b(space.0, space.1, space.2, space.3);
            let line = b(
                space.x + at.0 * (space.width - size.0).max(0.0),
                space.y + at.1 * (space.height - size.1).max(0.0),
                size.0,
                size.1,
            );
            let mut lines: Vec<NormBox> =
                others.iter().map(|&(x, y)| b(x, y, WRITING_MIN_EXTENT / 2.0, 0.01)).collect();
            prop_assert!(!writes_in_answer_space(&lines, &[space], |l| Some(*l)));
            lines.push(line);
            prop_assert!(writes_in_answer_space(&lines, &[space], |l| Some(*l)));
        }
    }
}
