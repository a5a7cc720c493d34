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
        let dpi = self.options.dpi;
        let max_pixels = self.options.max_pixels;
        let (raster, layer) = match format {
            Format::Pdf => {
                let pdf = raster::load_pdf(bytes)?;
                let pdf_page = raster::pdf_page(&pdf, page)?;
                // Check the size first so a huge page is refused before any work.
                raster::pdf_raster_size(pdf_page, dpi, max_pixels)?;
                let layer = text_layer::extract(pdf_page);
                drop(pdf);
                (
                    raster::render_page_limited(bytes, format, page, dpi, max_pixels)?,
                    Some(layer),
                )
            }
            _ => (
                raster::render_page_limited(bytes, format, page, dpi, max_pixels)?,
                None,
            ),
        };
        let index = self.index_raster(page, &raster, layer, format)?;
        Ok((index, raster))
    }

    /// Indexes an already rendered displayed page (no text layer).
    pub fn index_image(&mut self, page: u32, image: &GrayImage) -> Result<PageIndex, ScanError> {
        self.index_raster(page, image, None, Format::Png)
    }

    fn index_raster(
        &mut self,
        page: u32,
        raster: &GrayImage,
        layer: Option<text_layer::TextLayer>,
        format: Format,
    ) -> Result<PageIndex, ScanError> {
        let ink = dark_fraction(raster);
        // Scans far above the working resolution are analysed at a reduced size; all boxes are
        // normalized, so nothing downstream sees the difference.
        let work_dpi = self.options.dpi.max(150);
        let target_long_side = (11.7 * f64::from(work_dpi) * 2.0) as u32;
        let factor = if format == Format::Pdf {
            1
        } else {
            factor_for(raster.width(), raster.height(), target_long_side)
        };
        let work = if factor > 1 {
            downscale(raster, factor)
        } else {
            raster.clone()
        };
        // Assume an A4-ish long side to estimate the resolution Tesseract should expect.
        let approx_dpi = if format == Format::Pdf {
            self.options.dpi
        } else {
            ((f64::from(work.width().max(work.height())) / 11.7).round() as u32).clamp(70, 1200)
        };

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
            index.words = layer
                .words
                .into_iter()
                .map(|(text, bbox)| Word {
                    text,
                    bbox,
                    confidence: 1.0,
                })
                .collect();
            let (o, src) = match layer.orientation {
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
