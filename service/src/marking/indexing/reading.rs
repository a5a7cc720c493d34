//! Reading one page on a blocking thread: drawn where a hostile file can do no harm, its codes
//! and words read, compared with its clean page, and its image kept for a marker that is shown
//! images.

use super::reference::{Reference, Source};
use crate::marking::jobs::JobFailure;
use crate::store::job_kind::PlacedAs;
use examkit_pdf::PageCode;
use examkit_scan::Comparison;
use examkit_scan::Format;
use examkit_scan::Indexer;
use examkit_scan::PageIndex;
use examkit_scan::Word;
use std::sync::Arc;

/// What the blocking part found.
pub(super) struct Found {
    pub(super) index: PageIndex,
    pub(super) code: Option<PageCode>,
    /// A digest of the page's pixels as rendered (equal for an identical rescan).
    pub(super) fingerprint: String,
    pub(super) comparison: Option<Comparison>,
    /// The added ink's lines of writing, in the order the clean page reads.
    pub(super) lines: Vec<examkit_scan::NormBox>,
    pub(super) compare_note: Option<String>,
    /// The page renders to exactly the clean page's pixels.
    pub(super) identical: bool,
    /// The page was found by a class set's copy code: it is that student's page.
    pub(super) by_copy: bool,
    /// The displayed page as the marker will be shown it, when it takes images (JPEG).
    pub(super) image: Option<Vec<u8>>,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn index_blocking(
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
            crate::marking::pages::page_image(&raster, Some(edge), image::ImageFormat::Jpeg)
                .map_err(|e| {
                    JobFailure::permanent(format!("page {page} cannot be encoded: {e}"))
                })?,
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
pub(super) fn fingerprint(raster: &image::GrayImage) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(raster.width().to_be_bytes());
    hasher.update(raster.height().to_be_bytes());
    hasher.update(raster.as_raw());
    crate::auth::hex(&hasher.finalize())
}
