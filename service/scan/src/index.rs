//! The page index: everything the marking pipeline needs to know about one page.

use image::GrayImage;
use serde::{Deserialize, Serialize};

use crate::codes::{Code, decode_codes};
use crate::error::ScanError;
use crate::geometry::{NormBox, rotate_box_clockwise, rotate_quarter_turns};
use crate::ocr::{OcrEngine, OcrWord};
use crate::orientation::{Orientation, OrientationEstimate, estimate_orientation};
use crate::pixels::{dark_fraction, downscale, factor_for};
use crate::raster::{self, DEFAULT_MAX_PIXELS, Format};
use crate::text_layer;

/// Where the words of a page came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TextSource {
    /// The PDF's own text layer (exact text, confidence 1).
    TextLayer,
    /// Tesseract OCR of the rendered page.
    Ocr,
    /// No text was extracted (OCR disabled, or nothing readable).
    None,
}

/// How the page orientation was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OrientationSource {
    /// From the direction of the PDF text layer's glyphs.
    TextLayer,
    /// From the corner geometry of the QR code(s) on the page.
    Code,
    /// From line structure and ascender/descender balance of the ink.
    Layout,
    /// From comparing OCR results at the candidate rotations.
    Ocr,
    /// Nothing to go on (blank or nearly blank page); assumed upright.
    Default,
}

/// A word with its box on the displayed page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Word {
    /// The word's text.
    pub text: String,
    /// Box in normalized displayed-page coordinates.
    pub bbox: NormBox,
    /// Recognition confidence, 0..1 (1.0 for a PDF text layer).
    pub confidence: f32,
}

/// Everything found on one page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageIndex {
    /// One-based page number.
    pub page: u32,
    /// Width in pixels of the displayed page raster (PDF: at the indexing dpi; image: as decoded).
    pub width_px: u32,
    /// Height in pixels of the displayed page raster.
    pub height_px: u32,
    /// How the content is turned on the displayed page.
    pub orientation: Orientation,
    /// How [`PageIndex::orientation`] was decided.
    pub orientation_source: OrientationSource,
    /// Skew of the text lines in degrees (positive = clockwise), as measured on the pixels.
    pub skew_degrees: f32,
    /// Where the words came from.
    pub text_source: TextSource,
    /// Words in reading order, boxes in normalized displayed-page coordinates.
    pub words: Vec<Word>,
    /// Decoded QR codes.
    pub codes: Vec<Code>,
    /// Fraction of the page's pixels that are dark (luminance below 128).
    pub ink: f32,
}

/// Settings of an [`Indexer`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct IndexOptions {
    /// Resolution for rendering PDF pages (default 150).
    pub dpi: u32,
    /// Whether to OCR pages without a text layer (default true).
    pub ocr: bool,
    /// Largest page raster accepted, in pixels (default [`DEFAULT_MAX_PIXELS`]).
    pub max_pixels: u64,
    /// Tesseract language (default `eng`).
    pub language: String,
}

impl Default for IndexOptions {
    fn default() -> Self {
        Self {
            dpi: 150,
            ocr: true,
            max_pixels: DEFAULT_MAX_PIXELS,
            language: "eng".to_string(),
        }
    }
}

/// Indexes pages. Holds one Tesseract engine: create one per worker thread and reuse it.
#[derive(Debug)]
pub struct Indexer {
    options: IndexOptions,
    ocr: Option<OcrEngine>,
}

/// A file's bytes as the caller has them.
#[derive(Clone, Copy)]
enum Bytes<'a> {
    Borrowed(&'a [u8]),
    Shared(&'a std::sync::Arc<Vec<u8>>),
}

impl Bytes<'_> {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Borrowed(bytes) => bytes,
            Bytes::Shared(bytes) => bytes.as_slice(),
        }
    }
}

/// A page drawn for indexing: its displayed raster and, for a PDF page, the words of its own
/// text layer.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedPage {
    /// The page as displayed, 8-bit grayscale.
    pub raster: GrayImage,
    /// The PDF page's text layer (`None` for an image).
    pub layer: Option<text_layer::TextLayer>,
}

/// Draws page `page` (one-based) of a file as [`Indexer`] draws it at `dpi` within
/// `max_pixels`, with the PDF page's text layer: the part of indexing that interprets the file,
/// so that it can run where a hostile file can do no harm. The PDF is parsed once for both.
pub fn render_for_index(
    bytes: &[u8],
    format: Format,
    page: u32,
    dpi: u32,
    max_pixels: u64,
) -> Result<RenderedPage, ScanError> {
    draw(Bytes::Borrowed(bytes), format, page, dpi, max_pixels)
}

fn draw(
    bytes: Bytes<'_>,
    format: Format,
    page: u32,
    dpi: u32,
    max_pixels: u64,
) -> Result<RenderedPage, ScanError> {
    match format {
        Format::Pdf => {
            let pdf = match bytes {
                Bytes::Borrowed(bytes) => raster::load_pdf(bytes)?,
                Bytes::Shared(bytes) => raster::load_shared(std::sync::Arc::clone(bytes))?,
            };
            let pdf_page = raster::pdf_page(&pdf, page)?;
            // Check the size first so a huge page is refused before any work.
            raster::pdf_raster_size(pdf_page, dpi, max_pixels)?;
            raster::check_embedded_images(&pdf, max_pixels)?;
            let layer = text_layer::extract(pdf_page);
            let raster = raster::render_pdf_page(pdf_page, dpi, max_pixels)?;
            Ok(RenderedPage {
                raster,
                layer: Some(layer),
            })
        }
        _ => Ok(RenderedPage {
            raster: raster::render_page_limited(bytes.as_slice(), format, page, dpi, max_pixels)?,
            layer: None,
        }),
    }
}

/// Minimum OCR result quality (mean word confidence) that needs no second opinion.
const GOOD_OCR_CONFIDENCE: f32 = 0.75;

impl Indexer {
    /// Creates an indexer. Fails with [`ScanError::OcrUnavailable`] when OCR is enabled but
    /// Tesseract's language data cannot be loaded.
    pub fn new(options: &IndexOptions) -> Result<Indexer, ScanError> {
        if options.dpi == 0 || options.dpi > raster::MAX_DPI {
            return Err(ScanError::InvalidArgument(format!(
                "dpi must be within 1..={}, got {}",
                raster::MAX_DPI,
                options.dpi
            )));
        }
        let ocr = if options.ocr {
            Some(OcrEngine::new(&options.language)?)
        } else {
            None
        };
        Ok(Indexer {
            options: options.clone(),
            ocr,
        })
    }

    /// The options this indexer was created with.
    pub fn options(&self) -> &IndexOptions {
        &self.options
    }

    /// Indexes one page (one-based) of a PDF or image.
    pub fn index_page(
        &mut self,
        bytes: &[u8],
        format: Format,
        page: u32,
    ) -> Result<PageIndex, ScanError> {
        self.index_page_with_raster(bytes, format, page)
            .map(|(index, _)| index)
    }

    /// [`Indexer::index_page`], also giving back the displayed-page raster it read (the same
    /// pixels [`crate::render_page`] gives at the indexer's dpi), so a caller need not render the
    /// page again.
    pub fn index_page_with_raster(
        &mut self,
        bytes: &[u8],
        format: Format,
        page: u32,
    ) -> Result<(PageIndex, GrayImage), ScanError> {
        let (raster, layer) = self.render(Bytes::Borrowed(bytes), format, page)?;
        let index = self.index_raster(page, &raster, layer, format, false)?;
        Ok((index, raster))
    }

    /// [`Indexer::index_page_with_raster`], except that a page whose codes settle how it is
    /// turned is not read by OCR: its words are left empty for the caller to read with
    /// [`Indexer::read_words`], from the whole page or from only some of it (the writing a
    /// student added to a printed page, say). The flag says whether the words are still to be
    /// read; when it is false the index is complete (a text layer, OCR off, or a page whose
    /// turn only OCR could settle). The file's bytes are shared, not copied: a PDF is read where
    /// they are.
    pub fn index_page_words_later(
        &mut self,
        bytes: &std::sync::Arc<Vec<u8>>,
        format: Format,
        page: u32,
    ) -> Result<(PageIndex, GrayImage, bool), ScanError> {
        let (raster, layer) = self.render(Bytes::Shared(bytes), format, page)?;
        self.index_rendered_words_later(page, RenderedPage { raster, layer }, format)
    }

    /// [`Indexer::index_page_words_later`] of a page drawn already, by [`render_for_index`] at
    /// this indexer's dpi (in another process, say): the same index from the same pixels.
    pub fn index_rendered_words_later(
        &mut self,
        page: u32,
        rendered: RenderedPage,
        format: Format,
    ) -> Result<(PageIndex, GrayImage, bool), ScanError> {
        let RenderedPage { raster, layer } = rendered;
        let index = self.index_raster(page, &raster, layer, format, true)?;
        let later = index.text_source == TextSource::None
            && index.orientation_source == OrientationSource::Code
            && self.ocr.is_some();
        Ok((index, raster, later))
    }

    /// Reads by OCR the words of `displayed`, a page as displayed (the raster indexing gave, or
    /// a copy with parts of it blanked), turned upright by `orientation`, with boxes in
    /// normalized displayed-page coordinates. `format` is the page's source format, which says
    /// how the page's resolution is judged. Empty when OCR is off.
    pub fn read_words(
        &mut self,
        displayed: &GrayImage,
        format: Format,
        orientation: Orientation,
    ) -> Result<Vec<Word>, ScanError> {
        let (work, approx_dpi) = self.analysed(displayed, format);
        let Some(engine) = self.ocr.as_mut() else {
            return Ok(Vec::new());
        };
        Ok(ocr_at(engine, &work, orientation, approx_dpi)?.words)
    }

    /// The page's raster at the indexer's dpi, and its text layer when it is a PDF page.
    fn render(
        &self,
        bytes: Bytes<'_>,
        format: Format,
        page: u32,
    ) -> Result<(GrayImage, Option<text_layer::TextLayer>), ScanError> {
        let drawn = draw(
            bytes,
            format,
            page,
            self.options.dpi,
            self.options.max_pixels,
        )?;
        Ok((drawn.raster, drawn.layer))
    }

    /// The raster pages are analysed at (scans far above the working resolution are reduced;
    /// all boxes are normalized, so nothing downstream sees the difference), and the resolution
    /// Tesseract should expect of it.
    fn analysed<'a>(
        &self,
        raster: &'a GrayImage,
        format: Format,
    ) -> (std::borrow::Cow<'a, GrayImage>, u32) {
        let work_dpi = self.options.dpi.max(150);
        let target_long_side = (11.7 * f64::from(work_dpi) * 2.0) as u32;
        let factor = if format == Format::Pdf {
            1
        } else {
            factor_for(raster.width(), raster.height(), target_long_side)
        };
        let work = if factor > 1 {
            std::borrow::Cow::Owned(downscale(raster, factor))
        } else {
            std::borrow::Cow::Borrowed(raster)
        };
        // Assume an A4-ish long side to estimate the resolution Tesseract should expect.
        let approx_dpi = if format == Format::Pdf {
            self.options.dpi
        } else {
            ((f64::from(work.width().max(work.height())) / 11.7).round() as u32).clamp(70, 1200)
        };
        (work, approx_dpi)
    }

    /// Indexes an already rendered displayed page (no text layer).
    pub fn index_image(&mut self, page: u32, image: &GrayImage) -> Result<PageIndex, ScanError> {
        self.index_raster(page, image, None, Format::Png, false)
    }

    fn index_raster(
        &mut self,
        page: u32,
        raster: &GrayImage,
        layer: Option<text_layer::TextLayer>,
        format: Format,
        words_later: bool,
    ) -> Result<PageIndex, ScanError> {
        let ink = dark_fraction(raster);
        let (work, approx_dpi) = self.analysed(raster, format);
        let codes = decode_codes(&work);
        let estimate = estimate_orientation(&work);
        let mut index = PageIndex {
            page,
            width_px: raster.width(),
            height_px: raster.height(),
            orientation: Orientation::Up,
            orientation_source: OrientationSource::Default,
            skew_degrees: estimate.skew_degrees,
            text_source: TextSource::None,
            words: Vec::new(),
            codes,
            ink,
        };

        if let Some(layer) =
            layer.filter(|l| !l.words.is_empty() && (l.image_coverage < 0.5 || l.words.len() >= 20))
        {
            index.text_source = TextSource::TextLayer;
            let orientation = layer.orientation;
            index.words = exact_words(layer);
            let (o, src) = match orientation {
                Some(o) => (o, OrientationSource::TextLayer),
                None => self.pixel_orientation(&index.codes, &estimate),
            };
            index.orientation = o;
            index.orientation_source = src;
            return Ok(index);
        }

        let (first, source) = self.pixel_orientation(&index.codes, &estimate);
        index.orientation = first;
        index.orientation_source = source;
        let Some(engine) = self.ocr.as_mut() else {
            return Ok(index);
        };
        if words_later && source == OrientationSource::Code {
            return Ok(index);
        }

        let mut best = (first, ocr_at(engine, &work, first, approx_dpi)?);
        let settled = source == OrientationSource::Code
            || (estimate.axis_confidence >= 0.3
                && estimate.direction_confidence >= 0.15
                && best.1.mean_confidence >= GOOD_OCR_CONFIDENCE
                && best.1.words.len() >= 8);
        if !settled && estimate.has_text_lines {
            let mut candidates = vec![Orientation::from_quarter_turns(first.quarter_turns() + 2)];
            if estimate.axis_confidence < 0.3 {
                candidates.push(Orientation::from_quarter_turns(first.quarter_turns() + 1));
                candidates.push(Orientation::from_quarter_turns(first.quarter_turns() + 3));
            }
            let first_score = best.1.score;
            for o in candidates {
                let attempt = ocr_at(engine, &work, o, approx_dpi)?;
                // The layout estimate wins ties; another rotation must read clearly better.
                if attempt.score > best.1.score.max(first_score * 1.25) {
                    best = (o, attempt);
                }
            }
            if best.0 != first {
                index.orientation_source = OrientationSource::Ocr;
            }
        }
        index.orientation = best.0;
        index.text_source = TextSource::Ocr;
        index.words = best.1.words;
        Ok(index)
    }

    fn pixel_orientation(
        &self,
        codes: &[Code],
        estimate: &OrientationEstimate,
    ) -> (Orientation, OrientationSource) {
        if let Some(o) = majority(codes.iter().map(|c| c.orientation)) {
            return (o, OrientationSource::Code);
        }
        if estimate.has_text_lines {
            (estimate.orientation, OrientationSource::Layout)
        } else {
            (Orientation::Up, OrientationSource::Default)
        }
    }
}

/// A clean PDF page (a printed paper, not a scan) rendered at `dpi` as [`crate::render_page`]
/// renders it, with the words of its text layer (boxes in normalized displayed-page
/// coordinates, confidence 1): what was printed, read exactly, from one parse of the PDF.
pub fn printed_page(
    bytes: &[u8],
    page: u32,
    dpi: u32,
) -> Result<(GrayImage, Vec<Word>), ScanError> {
    let pdf = raster::load_pdf(bytes)?;
    let pdf_page = raster::pdf_page(&pdf, page)?;
    raster::pdf_raster_size(pdf_page, dpi, DEFAULT_MAX_PIXELS)?;
    raster::check_embedded_images(&pdf, DEFAULT_MAX_PIXELS)?;
    let words = exact_words(text_layer::extract(pdf_page));
    let raster = raster::render_pdf_page(pdf_page, dpi, DEFAULT_MAX_PIXELS)?;
    Ok((raster, words))
}

/// A text layer's words, read exactly (confidence 1).
fn exact_words(layer: text_layer::TextLayer) -> Vec<Word> {
    layer
        .words
        .into_iter()
        .map(|(text, bbox)| Word {
            text,
            bbox,
            confidence: 1.0,
        })
        .collect()
}

/// A copy of `page` that is white (255) everywhere but inside `boxes` (normalized
/// displayed-page coordinates), each widened by `pad_px` pixels on every side: what OCR should
/// read of a page when only those parts hold anything new.
pub fn only_within(page: &GrayImage, boxes: &[NormBox], pad_px: u32) -> GrayImage {
    let (w, h) = page.dimensions();
    let mut out = GrayImage::from_pixel(w, h, image::Luma([255]));
    let pad = f64::from(pad_px);
    for b in boxes {
        let x0 = (b.x * f64::from(w) - pad).floor().clamp(0.0, f64::from(w)) as u32;
        let y0 = (b.y * f64::from(h) - pad).floor().clamp(0.0, f64::from(h)) as u32;
        let x1 = (b.right() * f64::from(w) + pad)
            .ceil()
            .clamp(0.0, f64::from(w)) as u32;
        let y1 = (b.bottom() * f64::from(h) + pad)
            .ceil()
            .clamp(0.0, f64::from(h)) as u32;
        if x1 <= x0 || y1 <= y0 {
            continue;
        }
        let (row, width) = (w as usize, (x1 - x0) as usize);
        for y in y0..y1 {
            let start = y as usize * row + x0 as usize;
            out.as_mut()[start..start + width]
                .copy_from_slice(&page.as_raw()[start..start + width]);
        }
    }
    out
}

fn majority(items: impl Iterator<Item = Orientation>) -> Option<Orientation> {
    let mut votes = [0usize; 4];
    let mut any = false;
    for o in items {
        votes[o.quarter_turns() as usize] += 1;
        any = true;
    }
    if !any {
        return None;
    }
    let (i, _) = votes.iter().enumerate().max_by_key(|(_, v)| **v)?;
    Some(Orientation::from_quarter_turns(i as u32))
}

struct OcrAttempt {
    words: Vec<Word>,
    mean_confidence: f32,
    /// Sum over plausible words of confidence x letters: higher reads better.
    score: f32,
}

/// OCRs the page turned upright assuming `orientation`, with boxes mapped back to the
/// displayed page.
fn ocr_at(
    engine: &mut OcrEngine,
    displayed: &GrayImage,
    orientation: Orientation,
    dpi: u32,
) -> Result<OcrAttempt, ScanError> {
    let upright = rotate_quarter_turns(displayed, orientation.upright_turns());
    let raw = engine.recognize(&upright, dpi)?;
    let (uw, uh) = (f64::from(upright.width()), f64::from(upright.height()));
    let mut score = 0.0f32;
    let mut conf_sum = 0.0f32;
    for w in &raw {
        conf_sum += w.confidence;
        let letters = w.text.chars().filter(|c| c.is_alphanumeric()).count();
        if letters >= 2 {
            score += w.confidence * letters as f32;
        }
    }
    let mean_confidence = if raw.is_empty() {
        0.0
    } else {
        conf_sum / raw.len() as f32
    };
    let words = raw
        .into_iter()
        .map(|w: OcrWord| {
            let b = NormBox::from_pixels(
                f64::from(w.left),
                f64::from(w.top),
                f64::from(w.left + w.width),
                f64::from(w.top + w.height),
                uw,
                uh,
            );
            Word {
                text: w.text,
                bbox: rotate_box_clockwise(&b, orientation.quarter_turns()),
                confidence: w.confidence,
            }
        })
        .collect();
    Ok(OcrAttempt {
        words,
        mean_confidence,
        score,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexer_can_move_to_a_worker_thread() {
        fn assert_send<T: Send>() {}
        assert_send::<Indexer>();
        assert_send::<PageIndex>();
    }

    #[test]
    fn only_the_boxes_are_kept() {
        let page = GrayImage::from_fn(100, 50, |x, y| image::Luma([((x + y) % 200) as u8]));
        let kept = only_within(
            &page,
            &[
                NormBox::from_corners(0.1, 0.2, 0.3, 0.4),
                NormBox::from_corners(0.95, 0.9, 1.2, 1.3),
            ],
            2,
        );
        assert_eq!(kept.dimensions(), page.dimensions());
        for (x, y, p) in kept.enumerate_pixels() {
            let inside = ((8..32).contains(&x) && (8..22).contains(&y))
                || ((93..100).contains(&x) && (43..50).contains(&y));
            let expected = if inside { page.get_pixel(x, y)[0] } else { 255 };
            assert_eq!(p[0], expected, "pixel ({x}, {y})");
        }
        assert!(only_within(&page, &[], 5).pixels().all(|p| p[0] == 255));
    }

    #[test]
    fn options_have_documented_defaults() {
        let o: IndexOptions = serde_json::from_str("{}").unwrap_or_default();
        assert_eq!(
            (o.dpi, o.ocr, o.max_pixels),
            (150, true, DEFAULT_MAX_PIXELS)
        );
        let o: IndexOptions =
            serde_json::from_str(r#"{"dpi": 200, "ocr": false}"#).unwrap_or_default();
        assert_eq!((o.dpi, o.ocr), (200, false));
    }
}
