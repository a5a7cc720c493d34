//! Optical character recognition with Tesseract (through `leptess`).
//!
//! One engine is created per worker and reused for every page; it recognises the `eng`
//! language data in automatic page segmentation mode and reports one row per word with its
//! pixel box and confidence (Tesseract's TSV output, level 5).
//!
//! Threads: Debian's Tesseract is built with OpenMP and would start several threads per page.
//! OpenMP reads its limit only from the environment when the process starts, so workers should
//! be started with `OMP_THREAD_LIMIT=1` (see [`openmp_thread_limit`]).

use std::ffi::CStr;

use image::GrayImage;
use leptess::tesseract::TessApi;

use crate::error::ScanError;

/// One word recognised by Tesseract, in pixels of the image it was given.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OcrWord {
    pub text: String,
    pub left: u32,
    pub top: u32,
    pub width: u32,
    pub height: u32,
    /// 0..1
    pub confidence: f32,
}

/// A Tesseract engine with the English language data loaded.
pub(crate) struct OcrEngine {
    api: TessApi,
}

impl std::fmt::Debug for OcrEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OcrEngine").finish_non_exhaustive()
    }
}

/// The value of `OMP_THREAD_LIMIT` this process was started with, if any.
///
/// Tesseract runs single-threaded per engine only when this is `Some(1)`.
pub fn openmp_thread_limit() -> Option<u32> {
    std::env::var("OMP_THREAD_LIMIT")
        .ok()
        .and_then(|v| v.trim().parse().ok())
}

impl OcrEngine {
    pub fn new(language: &str) -> Result<Self, ScanError> {
        if language.is_empty() || language.contains('\0') || language.contains('/') {
            return Err(ScanError::InvalidArgument(format!(
                "bad OCR language name {language:?}"
            )));
        }
        let mut api = TessApi::new(None, language).map_err(|_| {
            ScanError::OcrUnavailable(format!(
                "Tesseract could not load the '{language}' language data; install the \
                 tesseract-ocr-{language} package (or set TESSDATA_PREFIX to the directory \
                 holding {language}.traineddata)"
            ))
        })?;
        let settings: [(&CStr, &CStr); 3] = [
            // Automatic page segmentation without orientation detection (the page is turned
            // upright before recognition).
            (c"tessedit_pageseg_mode", c"3"),
            // Scanned exam pages have no white-on-black text; skipping the inverted pass
            // saves about a third of the time.
            (c"tessedit_do_invert", c"0"),
            (c"debug_file", c"/dev/null"),
        ];
        for (name, value) in settings {
            api.raw.set_variable(name, value).map_err(|_| {
                ScanError::OcrUnavailable(format!(
                    "Tesseract rejected the setting {}",
                    name.to_string_lossy()
                ))
            })?;
        }
        Ok(Self { api })
    }

    /// Recognises the words of an upright grayscale page rendered at `dpi`.
    pub fn recognize(&mut self, img: &GrayImage, dpi: u32) -> Result<Vec<OcrWord>, ScanError> {
        let (w, h) = (img.width(), img.height());
        if w < 8 || h < 8 {
            return Ok(Vec::new());
        }
        let wi = i32::try_from(w).map_err(|_| ScanError::Ocr("image too wide".into()))?;
        let hi = i32::try_from(h).map_err(|_| ScanError::Ocr("image too tall".into()))?;
        self.api
            .raw
            .set_image(img.as_raw(), wi, hi, 1, wi)
            .map_err(|e| ScanError::Ocr(format!("Tesseract refused the image: {e:?}")))?;
        self.api
            .raw
            .set_source_resolution(i32::try_from(dpi).unwrap_or(300).clamp(70, 2400));
        self.api
            .raw
            .recognize()
            .map_err(|_| ScanError::Ocr("Tesseract recognition failed".into()))?;
        let tsv = self
            .api
            .raw
            .get_tsv_text(0)
            .map_err(|_| ScanError::Ocr("Tesseract returned no result".into()))?;
        let text: &CStr = tsv.as_ref();
        Ok(parse_tsv(&text.to_string_lossy()))
    }
}

/// Word rows (level 5) of Tesseract's TSV output.
pub(crate) fn parse_tsv(tsv: &str) -> Vec<OcrWord> {
    let mut words = Vec::new();
    for line in tsv.lines() {
        let cols: Vec<&str> = line.splitn(12, '\t').collect();
        if cols.len() < 12 || cols[0] != "5" {
            continue;
        }
        let num = |i: usize| cols[i].trim().parse::<u32>().ok();
        let (Some(left), Some(top), Some(width), Some(height)) = (num(6), num(7), num(8), num(9))
        else {
            continue;
        };
        let conf = cols[10].trim().parse::<f32>().unwrap_or(-1.0);
        let text = cols[11].trim();
        if text.is_empty() || conf < 0.0 || width == 0 || height == 0 {
            continue;
        }
        words.push(OcrWord {
            text: text.to_string(),
            left,
            top,
            width,
            height,
            confidence: (conf / 100.0).clamp(0.0, 1.0),
        });
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsv_rows_become_words() {
        let tsv = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n\
                   4\t1\t1\t1\t1\t0\t10\t10\t200\t30\t-1\t\n\
                   5\t1\t1\t1\t1\t1\t10\t12\t80\t28\t91.5\tgradient\n\
                   5\t1\t1\t1\t1\t2\t95\t12\t20\t28\t-1\t \n";
        let words = parse_tsv(tsv);
        assert_eq!(words.len(), 1);
        assert_eq!(words[0].text, "gradient");
        assert_eq!(
            (words[0].left, words[0].top, words[0].width, words[0].height),
            (10, 12, 80, 28)
        );
        assert!((words[0].confidence - 0.915).abs() < 1e-6);
    }
}
