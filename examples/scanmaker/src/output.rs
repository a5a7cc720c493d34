//! Writing the finished page images: a PDF with one JPEG (DCTDecode) image per page and no text
//! layer, or one PNG or JPEG file per page.

use std::path::{Path, PathBuf};

use image::RgbImage;
use image::codecs::jpeg::JpegEncoder;
use lopdf::{Document, Object, Stream, dictionary};

use crate::Error;

/// The kind of output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One PDF of page images.
    Pdf,
    /// One PNG file per page.
    Png,
    /// One JPEG file per page.
    Jpeg,
}

impl Format {
    /// `pdf`, `png`, `jpeg` or `jpg` (any case).
    pub fn parse(text: &str) -> Option<Format> {
        match text.to_ascii_lowercase().as_str() {
            "pdf" => Some(Format::Pdf),
            "png" => Some(Format::Png),
            "jpeg" | "jpg" => Some(Format::Jpeg),
            _ => None,
        }
    }
}

fn jpeg(image: &RgbImage, quality: u8) -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::new();
    JpegEncoder::new_with_quality(&mut bytes, quality)
        .encode_image(image)
        .map_err(|e| Error::Output(format!("JPEG encoding failed: {e}")))?;
    Ok(bytes)
}

/// Writes the pages (making `out`'s folder if needed); returns the files written. For images,
/// `out`'s extension is dropped and `-1.png`, `-2.png`… (or `.jpg`) appended.
pub fn write(
    pages: &[RgbImage],
    format: Format,
    out: &Path,
    dpi: u32,
    quality: u8,
) -> Result<Vec<PathBuf>, Error> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::Output(format!("cannot make {}: {e}", parent.display())))?;
    }
    let save = |path: &Path, bytes: &[u8]| {
        std::fs::write(path, bytes)
            .map_err(|e| Error::Output(format!("cannot write {}: {e}", path.display())))
    };
    match format {
        Format::Pdf => {
            let bytes = pdf_of_images(pages, dpi, quality)?;
            save(out, &bytes)?;
            Ok(vec![out.to_path_buf()])
        }
        Format::Png | Format::Jpeg => {
            let stem = out.with_extension("");
            let ext = if format == Format::Png { "png" } else { "jpg" };
            let mut files = Vec::with_capacity(pages.len());
            for (i, page) in pages.iter().enumerate() {
                let path = PathBuf::from(format!("{}-{}.{ext}", stem.display(), i + 1));
                let bytes = if format == Format::Png {
                    let mut bytes = Vec::new();
                    page.write_to(
                        &mut std::io::Cursor::new(&mut bytes),
                        image::ImageFormat::Png,
                    )
                    .map_err(|e| Error::Output(format!("PNG encoding failed: {e}")))?;
                    bytes
                } else {
                    jpeg(page, quality)?
                };
                save(&path, &bytes)?;
                files.push(path);
            }
            Ok(files)
        }
    }
}

/// A PDF with each page one JPEG image filling a page of the image's size at `dpi` (a scanned
/// stack of pages, in the order given).
pub fn pdf_of_images(pages: &[RgbImage], dpi: u32, quality: u8) -> Result<Vec<u8>, Error> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let mut kids = Vec::with_capacity(pages.len());
    for page in pages {
        let (w, h) = page.dimensions();
        let to_pt = |px: u32| f64::from(px) * 72.0 / f64::from(dpi);
        let (w_pt, h_pt) = (to_pt(w), to_pt(h));
        let image = Stream::new(
            dictionary! {
                "Type" => "XObject",
                "Subtype" => "Image",
                "Width" => i64::from(w),
                "Height" => i64::from(h),
                "ColorSpace" => "DeviceRGB",
                "BitsPerComponent" => 8,
                "Filter" => "DCTDecode",
            },
            jpeg(page, quality)?,
        )
        .with_compression(false);
        let image_id = doc.add_object(image);
        let content = format!("q {w_pt:.3} 0 0 {h_pt:.3} 0 0 cm /Im0 Do Q");
        let content_id = doc.add_object(Stream::new(dictionary! {}, content.into_bytes()));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "MediaBox" => vec![0.into(), 0.into(), Object::Real(w_pt as f32), Object::Real(h_pt as f32)],
            "Contents" => content_id,
            "Resources" => dictionary! { "XObject" => dictionary! { "Im0" => image_id } },
        });
        kids.push(Object::Reference(page_id));
    }
    let count = i64::try_from(kids.len()).unwrap_or(i64::MAX);
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes)
        .map_err(|e| Error::Output(format!("the PDF could not be written: {e}")))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_read_in_any_case() {
        assert_eq!(Format::parse("PDF"), Some(Format::Pdf));
        assert_eq!(Format::parse("jpg"), Some(Format::Jpeg));
        assert_eq!(Format::parse("tiff"), None);
    }

    #[test]
    fn a_pdf_of_images_has_one_page_per_image() {
        let pages = vec![
            RgbImage::from_pixel(30, 40, image::Rgb([250, 250, 250])),
            RgbImage::from_pixel(40, 30, image::Rgb([10, 10, 10])),
        ];
        let bytes = pdf_of_images(&pages, 150, 80).expect("pdf");
        assert!(bytes.starts_with(b"%PDF-1.5"));
        let doc = Document::load_mem(&bytes).expect("readable");
        assert_eq!(doc.get_pages().len(), 2);
        assert_eq!(
            pdf_of_images(&pages, 150, 80).expect("pdf"),
            bytes,
            "deterministic"
        );
    }
}
