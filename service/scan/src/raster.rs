//! Turning PDF pages and images into grayscale rasters in displayed orientation.
//!
//! PDF pages are rendered with `hayro` (pure Rust) honouring `/Rotate`, `/CropBox` and
//! `/MediaBox`; PNG, JPEG and WebP files are decoded with the `image` crate, honouring the
//! EXIF orientation tag. An image is always a single page.

use std::io::Cursor;
use std::panic::{AssertUnwindSafe, catch_unwind};

use hayro::hayro_interpret::InterpreterSettings;
use hayro::hayro_syntax::Pdf;
use hayro::hayro_syntax::object::{Name, Object};
use hayro::hayro_syntax::page::Page;
use hayro::vello_cpu::color::palette::css::WHITE;
use hayro::{RenderCache, RenderSettings};
use image::{DynamicImage, GrayImage, ImageDecoder, ImageFormat, ImageReader};
use serde::{Deserialize, Serialize};

use crate::error::ScanError;

/// Largest raster (in pixels) the crate will allocate for one page: 40 megapixels, about an
/// A4 page at 600 dpi. Larger pages are refused with [`ScanError::TooLarge`].
pub const DEFAULT_MAX_PIXELS: u64 = 40_000_000;

/// Highest resolution accepted when rendering PDF pages.
pub const MAX_DPI: u32 = 1200;

/// The container format of an uploaded file, as sniffed from its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Format {
    /// A PDF document (one or more pages).
    Pdf,
    /// A PNG image (one page).
    Png,
    /// A JPEG image (one page).
    Jpeg,
    /// A WebP image (one page).
    Webp,
}

impl Format {
    /// The format for a MIME content type such as `application/pdf` or `image/jpeg`.
    pub fn from_content_type(content_type: &str) -> Option<Format> {
        let essence = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match essence.as_str() {
            "application/pdf" => Some(Format::Pdf),
            "image/png" => Some(Format::Png),
            "image/jpeg" | "image/jpg" => Some(Format::Jpeg),
            "image/webp" => Some(Format::Webp),
            _ => None,
        }
    }

    /// The format recognised from the first bytes of a file (magic numbers).
    pub fn sniff(bytes: &[u8]) -> Option<Format> {
        if bytes.starts_with(b"%PDF-") {
            Some(Format::Pdf)
        } else if bytes.starts_with(&[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A]) {
            Some(Format::Png)
        } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
            Some(Format::Jpeg)
        } else if bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
            Some(Format::Webp)
        } else {
            None
        }
    }

    /// The MIME content type of the format.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Pdf => "application/pdf",
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Webp => "image/webp",
        }
    }

    fn image_format(self) -> Option<ImageFormat> {
        match self {
            Format::Pdf => None,
            Format::Png => Some(ImageFormat::Png),
            Format::Jpeg => Some(ImageFormat::Jpeg),
            Format::Webp => Some(ImageFormat::WebP),
        }
    }
}

/// How many pages the file has (always 1 for an image; the image header is checked).
pub fn page_count(bytes: &[u8], format: Format) -> Result<u32, ScanError> {
    match format {
        Format::Pdf => {
            let pdf = load_pdf(bytes)?;
            let n = pdf.pages().len();
            if n == 0 {
                return Err(ScanError::Unreadable("the PDF has no pages".into()));
            }
            u32::try_from(n).map_err(|_| ScanError::Unreadable("absurd page count".into()))
        }
        _ => {
            image_dimensions(bytes, format)?;
            Ok(1)
        }
    }
}

/// Checks that every page of a file can be indexed, without rendering any page or decoding the
/// pixels of an image larger than `max_pixels`, and returns the page count.
///
/// A PDF must parse, have at least one page, carry no embedded image over twice the limit (see
/// [`render_page_limited`]), and each page must have a usable size within `max_pixels` at `dpi`
/// and a content stream that decodes (a page without one is blank, which is fine). An image's
/// header must decode with a size within the limit, and then its pixels must decode too: a file
/// that starts like a JPEG and goes on as noise is refused here, not when indexing reaches it.
/// Errors name the page. A PDF of more than `max_pages` pages is counted and not checked further:
/// the caller refuses it by its count.
pub fn check_pages(
    bytes: &[u8],
    format: Format,
    dpi: u32,
    max_pixels: u64,
    max_pages: u32,
) -> Result<u32, ScanError> {
    match format {
        Format::Pdf => {
            let pdf = load_pdf(bytes)?;
            let pages = pdf.pages();
            if pages.is_empty() {
                return Err(ScanError::Unreadable("the PDF has no pages".into()));
            }
            let count = u32::try_from(pages.len())
                .map_err(|_| ScanError::Unreadable("absurd page count".into()))?;
            if count > max_pages {
                return Ok(count);
            }
            check_embedded_images(&pdf, max_pixels)?;
            for (i, page) in pages.iter().enumerate() {
                let number = i + 1;
                let at_page = |e: ScanError| match e {
                    ScanError::Unreadable(m) => {
                        ScanError::Unreadable(format!("page {number}: {m}"))
                    }
                    other => other,
                };
                pdf_raster_size(page, dpi, max_pixels).map_err(at_page)?;
                check_page_contents(page).map_err(at_page)?;
                check_form_fanout(page).map_err(at_page)?;
                let has_contents = page.raw().contains_key(b"Contents");
                let decoded = catch_unwind(AssertUnwindSafe(|| page.page_stream().is_some()))
                    .unwrap_or(false);
                if has_contents && !decoded {
                    return Err(ScanError::Unreadable(format!(
                        "page {number}: its content stream cannot be decoded"
                    )));
                }
            }
            Ok(count)
        }
        _ => {
            let reader = image_reader(bytes, format, max_pixels)?;
            let decoder = catch_unwind(AssertUnwindSafe(|| reader.into_decoder()))
                .map_err(|_| ScanError::Unreadable("the image header could not be read".into()))?
                .map_err(|e| map_image_error(e, max_pixels))?;
            let (w, h) = decoder.dimensions();
            check_dimensions(w, h, max_pixels)?;
            drop(decoder);
            decode_image(bytes, format, max_pixels)?;
            Ok(1)
        }
    }
}

/// Renders one page (one-based) as an 8-bit grayscale image in displayed orientation.
///
/// PDF pages are rendered at `dpi` (1..=1200) on a white background. Images are returned at
/// their own resolution (the scan's), rotated or mirrored as their EXIF orientation says;
/// `dpi` is then ignored. Pages whose raster would exceed [`DEFAULT_MAX_PIXELS`] are refused.
pub fn render_page(
    bytes: &[u8],
    format: Format,
    page: u32,
    dpi: u32,
) -> Result<GrayImage, ScanError> {
    render_page_limited(bytes, format, page, dpi, DEFAULT_MAX_PIXELS)
}

/// [`render_page`] with an explicit pixel limit.
pub fn render_page_limited(
    bytes: &[u8],
    format: Format,
    page: u32,
    dpi: u32,
    max_pixels: u64,
) -> Result<GrayImage, ScanError> {
    match format {
        Format::Pdf => {
            let pdf = load_pdf(bytes)?;
            let pdf_page = pdf_page(&pdf, page)?;
            pdf_raster_size(pdf_page, dpi, max_pixels)?;
            check_embedded_images(&pdf, max_pixels)?;
            render_pdf_page(pdf_page, dpi, max_pixels)
        }
        _ => {
            if page != 1 {
                return Err(ScanError::PageOutOfRange { page, pages: 1 });
            }
            decode_image(bytes, format, max_pixels)
        }
    }
}

pub(crate) fn load_pdf(bytes: &[u8]) -> Result<Pdf, ScanError> {
    check_header(bytes)?;
    load_shared(std::sync::Arc::new(bytes.to_vec()))
}

fn check_header(bytes: &[u8]) -> Result<(), ScanError> {
    if !bytes.starts_with(b"%PDF-") && !bytes.windows(5).take(1024).any(|w| w == b"%PDF-") {
        return Err(ScanError::Unreadable(
            "not a PDF file (no %PDF- header)".into(),
        ));
    }
    Ok(())
}

/// [`load_pdf`] of bytes the caller shares: the PDF reads them where they are, not a copy.
pub(crate) fn load_shared(data: std::sync::Arc<Vec<u8>>) -> Result<Pdf, ScanError> {
    check_header(&data)?;
    let loaded = catch_unwind(AssertUnwindSafe(|| Pdf::new(data)))
        .map_err(|_| ScanError::Unreadable("the PDF could not be parsed".into()))?;
    loaded.map_err(|e| match e {
        hayro::hayro_syntax::LoadPdfError::Decryption(_) => {
            ScanError::Unreadable("the PDF is encrypted".into())
        }
        hayro::hayro_syntax::LoadPdfError::Invalid => {
            ScanError::Unreadable("the PDF could not be parsed".into())
        }
    })
}

pub(crate) fn pdf_page<'a>(pdf: &'a Pdf, page: u32) -> Result<&'a Page<'a>, ScanError> {
    let pages = pdf.pages();
    let count = u32::try_from(pages.len()).unwrap_or(u32::MAX);
    if page == 0 || page > count {
        return Err(ScanError::PageOutOfRange { page, pages: count });
    }
    pages
        .get(page as usize - 1)
        .ok_or(ScanError::PageOutOfRange { page, pages: count })
}

/// Pixel size of a PDF page at `dpi`, checked against the limit.
pub(crate) fn pdf_raster_size(
    page: &Page<'_>,
    dpi: u32,
    max_pixels: u64,
) -> Result<(u16, u16), ScanError> {
    if dpi == 0 || dpi > MAX_DPI {
        return Err(ScanError::InvalidArgument(format!(
            "dpi must be within 1..={MAX_DPI}, got {dpi}"
        )));
    }
    let (w_pt, h_pt) = page.render_dimensions();
    let scale = f64::from(dpi) / 72.0;
    let w = (f64::from(w_pt) * scale).round().max(1.0);
    let h = (f64::from(h_pt) * scale).round().max(1.0);
    if !w.is_finite() || !h.is_finite() {
        return Err(ScanError::Unreadable("the page has no usable size".into()));
    }
    let (wu, hu) = (w as u64, h as u64);
    if wu.saturating_mul(hu) > max_pixels || wu > u64::from(u16::MAX) || hu > u64::from(u16::MAX) {
        return Err(ScanError::TooLarge {
            width: wu,
            height: hu,
            limit: max_pixels,
        });
    }
    Ok((wu as u16, hu as u16))
}

/// The most content streams one page's `/Contents` may list. A page as typeset or scanned has one
/// or a few; a list of thousands (the same small stream named again and again) makes a file of a
/// few kilobytes decode to any amount of memory.
pub const MAX_CONTENT_STREAMS: usize = 64;

/// The most bytes a page's content streams may decode to, together (32 MiB): a scanned page's
/// content is a few drawing operators around its image, a typeset page's tens of kilobytes.
pub const MAX_PAGE_CONTENT_BYTES: usize = 32 * 1024 * 1024;

/// Checks a page's content streams against [`MAX_CONTENT_STREAMS`] and
/// [`MAX_PAGE_CONTENT_BYTES`] before anything decodes them all at once: the list is counted,
/// and each distinct stream is decoded once (one at a time) and counted as often as the list
/// names it, so a stream named a thousand times costs one decoding to refuse.
pub(crate) fn check_page_contents(page: &Page<'_>) -> Result<(), ScanError> {
    use hayro::hayro_syntax::object::{Array, ObjectIdentifier, Stream};
    let Some(list) = page.raw().get::<Array<'_>>(b"Contents") else {
        return Ok(());
    };
    if list.raw_iter().nth(MAX_CONTENT_STREAMS).is_some() {
        return Err(ScanError::Unreadable(format!(
            "its content is split into more than {MAX_CONTENT_STREAMS} streams"
        )));
    }
    let mut sizes: std::collections::HashMap<ObjectIdentifier, usize> =
        std::collections::HashMap::new();
    let mut total = 0usize;
    for stream in list.iter::<Stream<'_>>() {
        let size = match sizes.get(&stream.obj_id()) {
            Some(size) => *size,
            None => {
                let size = catch_unwind(AssertUnwindSafe(|| {
                    stream.decoded().map(|d| d.len()).unwrap_or(0)
                }))
                .unwrap_or(0);
                sizes.insert(stream.obj_id(), size);
                size
            }
        };
        total = total.saturating_add(size);
        if total > MAX_PAGE_CONTENT_BYTES {
            return Err(ScanError::Unreadable(format!(
                "its content streams decode to more than {} MiB",
                MAX_PAGE_CONTENT_BYTES / (1024 * 1024)
            )));
        }
    }
    Ok(())
}

/// The most Form XObjects one page may draw, counting a form each time it is drawn: a form
/// drawing another ten times, nested eight deep, is a 2 KB file that draws a hundred million
/// forms. Typeset and scanned pages draw a handful.
pub const MAX_FORM_DRAWS: usize = 10_000;

/// The deepest a page's forms may nest (a form drawing a form drawing a form ...).
pub const MAX_FORM_DEPTH: usize = 32;

/// The most content bytes drawing one page may interpret, counting a form's content each time
/// the form is drawn (128 MiB).
pub const MAX_PAGE_DRAWN_BYTES: usize = 128 * 1024 * 1024;

/// Counts what drawing a page would draw of its Form XObjects before anything draws it: every
/// path through the forms is walked (a form as often as it is drawn) against
/// [`MAX_FORM_DRAWS`], [`MAX_FORM_DEPTH`] and [`MAX_PAGE_DRAWN_BYTES`], stopping at the first
/// budget passed. Each distinct form is decoded once, its `Do` operators listed once.
pub(crate) fn check_form_fanout(page: &Page<'_>) -> Result<(), ScanError> {
    let names = catch_unwind(AssertUnwindSafe(|| page.page_stream().map(drawn_names)))
        .ok()
        .flatten()
        .unwrap_or_default();
    FormWalk::default().draw(&names, page.resources(), 0)
}

/// A walk through a page's forms: what it has counted, and each form's decoded size and the
/// names it draws, kept once.
#[derive(Default)]
struct FormWalk {
    draws: usize,
    bytes: usize,
    decoded: usize,
    forms: std::collections::HashMap<hayro::hayro_syntax::object::ObjectIdentifier, FormSeen>,
}

/// A form's decoded size and the names it draws.
type FormSeen = (usize, std::rc::Rc<[Vec<u8>]>);

impl FormWalk {
    fn draw(
        &mut self,
        names: &[Vec<u8>],
        resources: &hayro::hayro_syntax::page::Resources<'_>,
        depth: usize,
    ) -> Result<(), ScanError> {
        use hayro::hayro_syntax::object::Dict;
        for name in names {
            let Some(form) = resources.get_x_object(&Name::new_unescaped(name)) else {
                continue;
            };
            let is_form = form
                .dict()
                .get::<Name<'_>>(b"Subtype")
                .is_some_and(|n| n.as_ref() == b"Form");
            if !is_form {
                continue;
            }
            if depth + 1 > MAX_FORM_DEPTH {
                return Err(ScanError::Unreadable(format!(
                    "its forms nest more than {MAX_FORM_DEPTH} deep"
                )));
            }
            self.draws += 1;
            if self.draws > MAX_FORM_DRAWS {
                return Err(ScanError::Unreadable(format!(
                    "drawing it would draw more than {MAX_FORM_DRAWS} forms"
                )));
            }
            let id = form.obj_id();
            if !self.forms.contains_key(&id) {
                let data = catch_unwind(AssertUnwindSafe(|| form.decoded().ok()))
                    .ok()
                    .flatten()
                    .unwrap_or_default();
                self.decoded = self.decoded.saturating_add(data.len());
                if self.decoded > MAX_PAGE_CONTENT_BYTES {
                    return Err(ScanError::Unreadable(format!(
                        "its forms decode to more than {} MiB",
                        MAX_PAGE_CONTENT_BYTES / (1024 * 1024)
                    )));
                }
                self.forms
                    .insert(id, (data.len(), drawn_names(&data).into()));
            }
            // A form drawn again shares its list of names, not a copy of it.
            let Some((size, inner)) = self.forms.get(&id).cloned() else {
                continue;
            };
            self.bytes = self.bytes.saturating_add(size);
            if self.bytes > MAX_PAGE_DRAWN_BYTES {
                return Err(ScanError::Unreadable(format!(
                    "drawing it would interpret more than {} MiB of content",
                    MAX_PAGE_DRAWN_BYTES / (1024 * 1024)
                )));
            }
            if inner.is_empty() {
                continue;
            }
            let own = form
                .dict()
                .get::<Dict<'_>>(b"Resources")
                .unwrap_or_default();
            let inner_resources =
                hayro::hayro_syntax::page::Resources::from_parent(own, resources.clone());
            self.draw(&inner, &inner_resources, depth + 1)?;
        }
        Ok(())
    }
}

/// The names a content stream draws with `Do`, in order.
fn drawn_names(content: &[u8]) -> Vec<Vec<u8>> {
    use hayro::hayro_syntax::content::TypedIter;
    use hayro::hayro_syntax::content::ops::TypedInstruction;
    catch_unwind(AssertUnwindSafe(|| {
        let mut names = Vec::new();
        let mut ops = TypedIter::new(content);
        while let Some(op) = ops.next() {
            if let TypedInstruction::XObject(x) = op {
                names.push(x.0.as_ref().to_vec());
            }
        }
        names
    }))
    .unwrap_or_default()
}

/// Refuses PDFs carrying an image larger than twice the page pixel limit: the renderer would
/// decode it in full whatever the page size (a pixel bomb inside a small page).
pub(crate) fn check_embedded_images(pdf: &Pdf, max_pixels: u64) -> Result<(), ScanError> {
    let limit = max_pixels.saturating_mul(2);
    for object in pdf.objects() {
        let Object::Stream(stream) = object else {
            continue;
        };
        let dict = stream.dict();
        let is_image = dict
            .get::<Name<'_>>(b"Subtype")
            .is_some_and(|n| n.as_ref() == b"Image");
        if !is_image {
            continue;
        }
        let width = u64::try_from(dict.get::<i64>(b"Width").unwrap_or(0)).unwrap_or(0);
        let height = u64::try_from(dict.get::<i64>(b"Height").unwrap_or(0)).unwrap_or(0);
        if width.saturating_mul(height) > limit {
            return Err(ScanError::TooLarge {
                width,
                height,
                limit,
            });
        }
    }
    Ok(())
}

pub(crate) fn render_pdf_page(
    page: &Page<'_>,
    dpi: u32,
    max_pixels: u64,
) -> Result<GrayImage, ScanError> {
    let (w, h) = pdf_raster_size(page, dpi, max_pixels)?;
    check_page_contents(page)?;
    check_form_fanout(page)?;
    let scale = dpi as f32 / 72.0;
    let settings = RenderSettings {
        x_scale: scale,
        y_scale: scale,
        width: Some(w),
        height: Some(h),
        bg_color: WHITE,
    };
    let pixmap = catch_unwind(AssertUnwindSafe(|| {
        let cache = RenderCache::new();
        hayro::render(page, &cache, &InterpreterSettings::default(), &settings)
    }))
    .map_err(|_| ScanError::Unreadable("the PDF page could not be rendered".into()))?;
    let (pw, ph) = (u32::from(pixmap.width()), u32::from(pixmap.height()));
    let mut gray = Vec::with_capacity(pw as usize * ph as usize);
    for px in pixmap.data() {
        // Composited over white, so alpha is 255 and premultiplied equals straight colour.
        let y = 0.299 * f32::from(px.r) + 0.587 * f32::from(px.g) + 0.114 * f32::from(px.b);
        gray.push(y.round().clamp(0.0, 255.0) as u8);
    }
    GrayImage::from_raw(pw, ph, gray)
        .ok_or_else(|| ScanError::Unreadable("renderer returned a bad buffer".into()))
}

fn image_reader(
    bytes: &[u8],
    format: Format,
    max_pixels: u64,
) -> Result<ImageReader<Cursor<&[u8]>>, ScanError> {
    let fmt = format
        .image_format()
        .ok_or_else(|| ScanError::InvalidArgument("not an image format".into()))?;
    let mut reader = ImageReader::with_format(Cursor::new(bytes), fmt);
    let mut limits = image::Limits::default();
    // Room for a 16-bit RGBA buffer of the largest accepted page plus decoder scratch space.
    limits.max_alloc = Some(max_pixels.saturating_mul(8).saturating_add(64 << 20));
    reader.limits(limits);
    Ok(reader)
}

fn map_image_error(e: image::ImageError, max_pixels: u64) -> ScanError {
    match e {
        image::ImageError::Limits(_) => ScanError::TooLarge {
            width: 0,
            height: 0,
            limit: max_pixels,
        },
        other => ScanError::Unreadable(other.to_string()),
    }
}

fn check_dimensions(w: u32, h: u32, max_pixels: u64) -> Result<(), ScanError> {
    if w == 0 || h == 0 {
        return Err(ScanError::Unreadable("the image has no pixels".into()));
    }
    if u64::from(w) * u64::from(h) > max_pixels {
        return Err(ScanError::TooLarge {
            width: u64::from(w),
            height: u64::from(h),
            limit: max_pixels,
        });
    }
    Ok(())
}

fn image_dimensions(bytes: &[u8], format: Format) -> Result<(u32, u32), ScanError> {
    let reader = image_reader(bytes, format, DEFAULT_MAX_PIXELS)?;
    let decoder = reader
        .into_decoder()
        .map_err(|e| map_image_error(e, DEFAULT_MAX_PIXELS))?;
    let (w, h) = decoder.dimensions();
    check_dimensions(w, h, DEFAULT_MAX_PIXELS)?;
    Ok((w, h))
}

fn decode_image(bytes: &[u8], format: Format, max_pixels: u64) -> Result<GrayImage, ScanError> {
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<GrayImage, ScanError> {
        let reader = image_reader(bytes, format, max_pixels)?;
        let mut decoder = reader
            .into_decoder()
            .map_err(|e| map_image_error(e, max_pixels))?;
        let (w, h) = decoder.dimensions();
        check_dimensions(w, h, max_pixels)?;
        // A broken EXIF block must not make an otherwise good image unreadable.
        let orientation = decoder
            .orientation()
            .unwrap_or(image::metadata::Orientation::NoTransforms);
        let mut img =
            DynamicImage::from_decoder(decoder).map_err(|e| map_image_error(e, max_pixels))?;
        img.apply_orientation(orientation);
        Ok(img.into_luma8())
    }));
    result.unwrap_or_else(|_| {
        Err(ScanError::Unreadable(
            "the image could not be decoded".into(),
        ))
    })
}
