//! Shared builders for realistic test pages: typeset and handwritten text, QR codes, scan
//! noise and skew, JPEGs with an EXIF orientation, small PDFs.
#![allow(dead_code, clippy::unwrap_used, missing_docs)]

use ab_glyph::{Font, FontVec, PxScale, ScaleFont, point};
use image::{GrayImage, Luma};

/// A4 at 150 dpi.
pub const PAGE_W: u32 = 1240;
pub const PAGE_H: u32 = 1754;

pub const DEJAVU: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
pub const DEJAVU_SERIF: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf";
/// The handwriting font of the Debian package `fonts-dkg-handwriting`.
pub const HANDWRITING: &str = "/usr/share/fonts/truetype/fifthhorseman/dkg.ttf";

pub fn load_font(path: &str, package: &str) -> FontVec {
    let bytes = std::fs::read(path).unwrap_or_else(|e| {
        panic!("test font {path} is missing ({e}); install it with `apt-get install -y {package}`")
    });
    FontVec::try_from_vec(bytes).unwrap_or_else(|e| panic!("font {path} cannot be parsed: {e}"))
}

pub fn typeset_font() -> FontVec {
    load_font(DEJAVU, "fonts-dejavu-core")
}

pub fn serif_font() -> FontVec {
    load_font(DEJAVU_SERIF, "fonts-dejavu-core")
}

pub fn handwriting_font() -> FontVec {
    load_font(HANDWRITING, "fonts-dkg-handwriting")
}

pub fn blank_page() -> GrayImage {
    GrayImage::from_pixel(PAGE_W, PAGE_H, Luma([255]))
}

/// Pixel box `(x0, y0, x1, y1)`.
pub type PxBox = (f32, f32, f32, f32);

/// Draws `text` with its baseline starting at `(x, baseline)`; returns the inked box.
pub fn draw_text(
    img: &mut GrayImage,
    font: &FontVec,
    size: f32,
    x: f32,
    baseline: f32,
    text: &str,
) -> PxBox {
    draw_text_with(img, font, size, x, baseline, text, 0)
}

/// Like [`draw_text`] with an ink level (0 = black).
pub fn draw_text_with(
    img: &mut GrayImage,
    font: &FontVec,
    size: f32,
    x: f32,
    baseline: f32,
    text: &str,
    ink: u8,
) -> PxBox {
    let scale = PxScale::from(size);
    let scaled = font.as_scaled(scale);
    let mut caret = x;
    let mut bbox = (f32::MAX, f32::MAX, f32::MIN, f32::MIN);
    let mut prev = None;
    for c in text.chars() {
        let id = font.glyph_id(c);
        if let Some(p) = prev {
            caret += scaled.kern(p, id);
        }
        let glyph = id.with_scale_and_position(scale, point(caret, baseline));
        caret += scaled.h_advance(id);
        prev = Some(id);
        if let Some(outlined) = font.outline_glyph(glyph) {
            let b = outlined.px_bounds();
            bbox = (
                bbox.0.min(b.min.x),
                bbox.1.min(b.min.y),
                bbox.2.max(b.max.x),
                bbox.3.max(b.max.y),
            );
            outlined.draw(|gx, gy, cov| {
                let px = b.min.x as i32 + gx as i32;
                let py = b.min.y as i32 + gy as i32;
                if px >= 0 && py >= 0 && (px as u32) < img.width() && (py as u32) < img.height() {
                    let old = img.get_pixel(px as u32, py as u32).0[0] as f32;
                    let new = 255.0 - cov.clamp(0.0, 1.0) * (255.0 - ink as f32);
                    img.put_pixel(px as u32, py as u32, Luma([old.min(new) as u8]));
                }
            });
        }
    }
    bbox
}

pub const QUESTION_LINES: &[&str] = &[
    "1   The line L passes through the points A(2, 5) and B(6, 13).",
    "     (a) Find the gradient of the line L.                               [2]",
    "     (b) Find an equation for L in the form y = mx + c.            [3]",
    "     The line M is perpendicular to L and passes through the",
    "     point C(4, 1). Show that M has equation x + 2y = 6.             [4]",
    "2   A curve has equation y = x^3 - 6x^2 + 9x + 2.",
    "     (a) Find dy/dx and hence the coordinates of the stationary",
    "     points of the curve. Justify your answer fully.                   [5]",
    "     (b) Determine the nature of each stationary point.               [3]",
    "3   Solve the equation 2 sin(2x) = 1 for 0 < x < 360 degrees,",
    "     giving all your answers to one decimal place.                     [4]",
];

/// Where the word "gradient" of line 2 was drawn on a typeset page.
pub struct TypesetPage {
    pub image: GrayImage,
    pub gradient: PxBox,
}

/// A question-paper page: a header, questions, answer space, a footer.
pub fn typeset_page() -> TypesetPage {
    let font = typeset_font();
    let mut img = blank_page();
    draw_text(
        &mut img,
        &font,
        30.0,
        110.0,
        120.0,
        "Pure Mathematics   Paper 1   Specimen",
    );
    let mut gradient = (0.0, 0.0, 0.0, 0.0);
    let mut y = 220.0;
    for (i, line) in QUESTION_LINES.iter().enumerate() {
        if i == 1 {
            // Draw the line in pieces so the exact box of "gradient" is known.
            let before = "     (a) Find the ";
            let b0 = draw_text(&mut img, &font, 30.0, 110.0, y, before);
            let x = text_width(&font, 30.0, before) + 110.0;
            gradient = draw_text(&mut img, &font, 30.0, x, y, "gradient");
            let _ = b0;
            let rest_x = x + text_width(&font, 30.0, "gradient ");
            draw_text(
                &mut img,
                &font,
                30.0,
                rest_x,
                y,
                "of the line L.                               [2]",
            );
        } else {
            draw_text(&mut img, &font, 30.0, 110.0, y, line);
        }
        y += if i == 4 || i == 8 { 150.0 } else { 52.0 };
    }
    draw_text(
        &mut img,
        &font,
        24.0,
        110.0,
        1690.0,
        "Turn over          P12345A0124          Page 3 of 24",
    );
    TypesetPage {
        image: img,
        gradient,
    }
}

pub fn text_width(font: &FontVec, size: f32, text: &str) -> f32 {
    let scaled = font.as_scaled(PxScale::from(size));
    let mut w = 0.0;
    let mut prev = None;
    for c in text.chars() {
        let id = font.glyph_id(c);
        if let Some(p) = prev {
            w += scaled.kern(p, id);
        }
        w += scaled.h_advance(id);
        prev = Some(id);
    }
    w
}

pub const HANDWRITTEN_LINES: &[&str] = &[
    "gradient = (13 - 5) / (6 - 2) = 8/4 = 2",
    "so the line is y - 5 = 2(x - 2)",
    "which gives y = 2x + 1 as required",
    "for the perpendicular line the gradient is -1/2",
    "y - 1 = -1/2 (x - 4) so 2y - 2 = -x + 4",
    "hence x + 2y = 6 which is the answer",
    "dy/dx = 3x^2 - 12x + 9 = 3(x - 1)(x - 3)",
    "stationary points at x = 1 and x = 3",
    "when x = 1 y = 6 and when x = 3 y = 2",
];

/// A page of handwriting only (a student's extra answer sheet).
pub fn handwriting_page() -> GrayImage {
    let font = handwriting_font();
    let mut img = blank_page();
    let mut y = 200.0;
    for (i, line) in HANDWRITTEN_LINES.iter().enumerate() {
        // Uneven left margin and size, like real writing.
        let x = 120.0 + ((i * 37) % 50) as f32;
        let size = 44.0 + ((i * 13) % 7) as f32;
        draw_text_with(&mut img, &font, size, x, y, line, 40);
        y += 120.0 + ((i * 29) % 30) as f32;
    }
    img
}

/// Adds handwriting into a region of a page; returns the inked box.
pub fn write_answer(img: &mut GrayImage, x: f32, baseline: f32, lines: &[&str]) -> PxBox {
    let font = handwriting_font();
    let mut bbox = (f32::MAX, f32::MAX, f32::MIN, f32::MIN);
    for (i, line) in lines.iter().enumerate() {
        let b = draw_text_with(img, &font, 48.0, x, baseline + 70.0 * i as f32, line, 30);
        bbox = (
            bbox.0.min(b.0),
            bbox.1.min(b.1),
            bbox.2.max(b.2),
            bbox.3.max(b.3),
        );
    }
    bbox
}

/// A QR code image with `module` pixels per module and a 4-module quiet zone.
pub fn qr_image(payload: &str, module: u32) -> GrayImage {
    let code = qrcode::QrCode::new(payload.as_bytes()).unwrap();
    code.render::<Luma<u8>>()
        .module_dimensions(module, module)
        .quiet_zone(true)
        .build()
}

pub fn paste(dst: &mut GrayImage, src: &GrayImage, x: u32, y: u32) {
    image::imageops::replace(dst, src, i64::from(x), i64::from(y));
}

/// Rotates about the centre by `degrees` clockwise, keeping the canvas (white fill).
pub fn rotate_small(img: &GrayImage, degrees: f64) -> GrayImage {
    let (w, h) = (img.width() as f64, img.height() as f64);
    let (cx, cy) = (w / 2.0, h / 2.0);
    let (s, c) = degrees.to_radians().sin_cos();
    let mut out = GrayImage::from_pixel(img.width(), img.height(), Luma([255]));
    for y in 0..img.height() {
        for x in 0..img.width() {
            // Inverse map: rotate the output point back counter-clockwise.
            let (dx, dy) = (x as f64 + 0.5 - cx, y as f64 + 0.5 - cy);
            let sx = c * dx + s * dy + cx - 0.5;
            let sy = -s * dx + c * dy + cy - 0.5;
            let (x0, y0) = (sx.floor(), sy.floor());
            let (tx, ty) = (sx - x0, sy - y0);
            let get = |xx: f64, yy: f64| -> f64 {
                if xx < 0.0 || yy < 0.0 || xx >= w || yy >= h {
                    255.0
                } else {
                    img.get_pixel(xx as u32, yy as u32).0[0] as f64
                }
            };
            let v = get(x0, y0) * (1.0 - tx) * (1.0 - ty)
                + get(x0 + 1.0, y0) * tx * (1.0 - ty)
                + get(x0, y0 + 1.0) * (1.0 - tx) * ty
                + get(x0 + 1.0, y0 + 1.0) * tx * ty;
            out.put_pixel(x, y, Luma([v.round() as u8]));
        }
    }
    out
}

/// Maps a pixel point through [`rotate_small`].
pub fn rotate_point(x: f64, y: f64, w: f64, h: f64, degrees: f64) -> (f64, f64) {
    let (cx, cy) = (w / 2.0, h / 2.0);
    let (s, c) = degrees.to_radians().sin_cos();
    let (dx, dy) = (x - cx, y - cy);
    (c * dx - s * dy + cx, s * dx + c * dy + cy)
}

/// Simulates a scan: paper tone, blur, and deterministic noise.
pub fn scan_noise(img: &GrayImage, seed: u64, sigma: f32) -> GrayImage {
    let (w, h) = img.dimensions();
    let mut out = GrayImage::new(w, h);
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407)
        | 1;
    let mut rand = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    for y in 0..h {
        for x in 0..w {
            // 3x3 box blur.
            let mut sum = 0.0;
            let mut n = 0.0;
            for dy in -1i32..=1 {
                for dx in -1i32..=1 {
                    let (xx, yy) = (x as i32 + dx, y as i32 + dy);
                    if xx >= 0 && yy >= 0 && (xx as u32) < w && (yy as u32) < h {
                        sum += img.get_pixel(xx as u32, yy as u32).0[0] as f32;
                        n += 1.0;
                    }
                }
            }
            let v = sum / n;
            // Paper is not white: map 255 -> 238, keep black near black.
            let toned = 12.0 + v * (238.0 - 12.0) / 255.0;
            let noise = (rand() + rand() + rand() - 1.5) * 2.0 * sigma;
            out.put_pixel(
                x,
                y,
                Luma([(toned + noise).round().clamp(0.0, 255.0) as u8]),
            );
        }
    }
    out
}

pub fn encode(img: &GrayImage, format: image::ImageFormat) -> Vec<u8> {
    let mut bytes = std::io::Cursor::new(Vec::new());
    match format {
        image::ImageFormat::Jpeg => {
            let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, 90);
            img.write_with_encoder(enc).unwrap();
        }
        other => img.write_to(&mut bytes, other).unwrap(),
    }
    bytes.into_inner()
}

/// Inserts an EXIF APP1 segment with the given orientation tag right after the JPEG SOI.
pub fn with_exif_orientation(jpeg: &[u8], orientation: u16) -> Vec<u8> {
    assert_eq!(&jpeg[..2], &[0xFF, 0xD8]);
    let mut tiff = Vec::new();
    tiff.extend_from_slice(b"MM\0\x2A\0\0\0\x08"); // big-endian TIFF header, IFD at 8
    tiff.extend_from_slice(&1u16.to_be_bytes()); // one entry
    tiff.extend_from_slice(&0x0112u16.to_be_bytes()); // Orientation
    tiff.extend_from_slice(&3u16.to_be_bytes()); // SHORT
    tiff.extend_from_slice(&1u32.to_be_bytes()); // count
    tiff.extend_from_slice(&orientation.to_be_bytes());
    tiff.extend_from_slice(&[0, 0]);
    tiff.extend_from_slice(&0u32.to_be_bytes()); // no next IFD
    let mut payload = b"Exif\0\0".to_vec();
    payload.extend_from_slice(&tiff);
    let len = (payload.len() + 2) as u16;
    let mut out = vec![0xFF, 0xD8, 0xFF, 0xE1];
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&payload);
    out.extend_from_slice(&jpeg[2..]);
    out
}

/// A PDF with one A4 page per entry: (`/Rotate`, lines of Helvetica text as (x, y, size, text)).
pub type TextRun<'a> = (f32, f32, f32, &'a str);

pub fn pdf_with_text(pages: &[(i64, Vec<TextRun<'_>>)]) -> Vec<u8> {
    pdf_with_text_sized(pages, 595, 842)
}

/// Like [`pdf_with_text`] with a media box of `width` x `height` points.
pub fn pdf_with_text_sized(pages: &[(i64, Vec<TextRun<'_>>)], width: i64, height: i64) -> Vec<u8> {
    use lopdf::content::{Content, Operation};
    use lopdf::{Document, Object, Stream, dictionary};
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let resources_id = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => font_id },
    });
    let mut kids = Vec::new();
    for (rotate, lines) in pages {
        let mut ops = Vec::new();
        for (x, y, size, text) in lines {
            ops.push(Operation::new("BT", vec![]));
            ops.push(Operation::new("Tf", vec!["F1".into(), (*size).into()]));
            ops.push(Operation::new("Td", vec![(*x).into(), (*y).into()]));
            ops.push(Operation::new("Tj", vec![Object::string_literal(*text)]));
            ops.push(Operation::new("ET", vec![]));
        }
        let content = Content { operations: ops };
        let content_id = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => content_id,
            "Rotate" => *rotate,
        });
        kids.push(page_id.into());
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => kids,
            "Count" => count,
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), width.into(), height.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

/// A PDF page that only shows an image of the given page (a scanned PDF without text).
pub fn pdf_with_image(img: &GrayImage) -> Vec<u8> {
    use lopdf::content::{Content, Operation};
    use lopdf::{Document, Object, Stream, dictionary};
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let image_id = doc.add_object(Stream::new(
        dictionary! {
            "Type" => "XObject",
            "Subtype" => "Image",
            "Width" => img.width() as i64,
            "Height" => img.height() as i64,
            "ColorSpace" => "DeviceGray",
            "BitsPerComponent" => 8,
        },
        img.as_raw().clone(),
    ));
    let content = Content {
        operations: vec![
            Operation::new("q", vec![]),
            Operation::new(
                "cm",
                vec![
                    595.into(),
                    0.into(),
                    0.into(),
                    842.into(),
                    0.into(),
                    0.into(),
                ],
            ),
            Operation::new("Do", vec!["Im1".into()]),
            Operation::new("Q", vec![]),
        ],
    };
    let content_id = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
    let page_id = doc.add_object(dictionary! {
        "Type" => "Page",
        "Parent" => pages_id,
        "Contents" => content_id,
        "Resources" => dictionary! { "XObject" => dictionary! { "Im1" => image_id } },
    });
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => vec![page_id.into()],
            "Count" => 1,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

/// Fraction of dark pixels inside a normalized box.
pub fn dark_in(img: &GrayImage, x0: f64, y0: f64, x1: f64, y1: f64) -> f64 {
    let (w, h) = (img.width() as f64, img.height() as f64);
    let (px0, py0, px1, py1) = (
        (x0 * w) as u32,
        (y0 * h) as u32,
        (x1 * w) as u32,
        (y1 * h) as u32,
    );
    let mut dark = 0;
    let mut n = 0;
    for y in py0..py1.min(img.height()) {
        for x in px0..px1.min(img.width()) {
            n += 1;
            if img.get_pixel(x, y).0[0] < 128 {
                dark += 1;
            }
        }
    }
    if n == 0 { 0.0 } else { dark as f64 / n as f64 }
}

/// A flatbed scan of a page lying askew on a gray bed: the page turned by `degrees` clockwise
/// about its centre, scaled by `scale`, its centre moved by `(dx, dy)` pixels, on a canvas of the
/// page's size whose uncovered parts show the bed (gray `bed`) with the page edge's shadow.
pub fn on_bed(img: &GrayImage, degrees: f64, scale: f64, dx: f64, dy: f64, bed: u8) -> GrayImage {
    let (w, h) = (img.width() as f64, img.height() as f64);
    let (s, c) = degrees.to_radians().sin_cos();
    GrayImage::from_fn(img.width(), img.height(), |x, y| {
        // Inverse map: undo the shift, the turn and the scale.
        let (u, v) = (x as f64 + 0.5 - w / 2.0 - dx, y as f64 + 0.5 - h / 2.0 - dy);
        let (px, py) = (
            (c * u + s * v) / scale + w / 2.0,
            (-s * u + c * v) / scale + h / 2.0,
        );
        match bilinear(img, px - 0.5, py - 0.5) {
            Some(v) => Luma([v.round() as u8]),
            None => {
                let off = (-px).max(px - w).max(-py).max(py - h).max(0.0);
                let shade = 1.0 - 0.45 * (-off / 2.5).exp();
                Luma([(f64::from(bed) * shade).round() as u8])
            }
        }
    })
}

/// A phone photo of a page on a table: the page's corners (top-left, top-right, bottom-right,
/// bottom-left) at `corners` of a canvas of the page's size, the table gray `table` around it,
/// the light falling off by `fall` from left to right.
pub fn photograph(img: &GrayImage, corners: [(f64, f64); 4], table: u8, fall: f64) -> GrayImage {
    let (w, h) = (img.width() as f64, img.height() as f64);
    let page = [(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)];
    let map = homography(corners, page);
    GrayImage::from_fn(img.width(), img.height(), |x, y| {
        let (fx, fy) = (x as f64 + 0.5, y as f64 + 0.5);
        let d = map[6] * fx + map[7] * fy + map[8];
        let px = (map[0] * fx + map[1] * fy + map[2]) / d;
        let py = (map[3] * fx + map[4] * fy + map[5]) / d;
        let v = bilinear(img, px - 0.5, py - 0.5).unwrap_or(f64::from(table));
        let light = 1.0 - fall * fx / w;
        Luma([(v * light).round().clamp(0.0, 255.0) as u8])
    })
}

/// The homography taking each `from` point to its `to` point (row-major, last entry 1).
pub fn homography(from: [(f64, f64); 4], to: [(f64, f64); 4]) -> [f64; 9] {
    let mut a = [[0.0f64; 9]; 8];
    for (i, ((x, y), (u, v))) in from.iter().zip(to.iter()).enumerate() {
        a[2 * i] = [*x, *y, 1.0, 0.0, 0.0, 0.0, -u * x, -u * y, *u];
        a[2 * i + 1] = [0.0, 0.0, 0.0, *x, *y, 1.0, -v * x, -v * y, *v];
    }
    for col in 0..8 {
        let pivot = (col..8)
            .max_by(|&r, &s| a[r][col].abs().total_cmp(&a[s][col].abs()))
            .unwrap();
        a.swap(col, pivot);
        let p = a[col];
        for (r, row) in a.iter_mut().enumerate() {
            if r != col {
                let f = row[col] / p[col];
                for (v, q) in row.iter_mut().zip(p).skip(col) {
                    *v -= f * q;
                }
            }
        }
    }
    let mut h = [0.0; 9];
    for (i, slot) in h.iter_mut().take(8).enumerate() {
        *slot = a[i][8] / a[i][i];
    }
    h[8] = 1.0;
    h
}

/// Where `homography(from, to)` puts a point.
pub fn apply_homography(m: &[f64; 9], x: f64, y: f64) -> (f64, f64) {
    let d = m[6] * x + m[7] * y + m[8];
    (
        (m[0] * x + m[1] * y + m[2]) / d,
        (m[3] * x + m[4] * y + m[5]) / d,
    )
}

/// Bilinear sample with pixel centres at whole numbers, `None` outside the image.
fn bilinear(img: &GrayImage, x: f64, y: f64) -> Option<f64> {
    let (w, h) = (img.width() as f64, img.height() as f64);
    if !(x >= -0.5 && y >= -0.5 && x <= w - 0.5 && y <= h - 0.5) {
        return None;
    }
    let (x, y) = (x.clamp(0.0, w - 1.0), y.clamp(0.0, h - 1.0));
    let (x0, y0) = (x.floor() as u32, y.floor() as u32);
    let (x1, y1) = (
        (x0 + 1).min(img.width() - 1),
        (y0 + 1).min(img.height() - 1),
    );
    let (tx, ty) = (x - x0 as f64, y - y0 as f64);
    let p = |x, y| img.get_pixel(x, y).0[0] as f64;
    let top = p(x0, y0) * (1.0 - tx) + p(x1, y0) * tx;
    let bottom = p(x0, y1) * (1.0 - tx) + p(x1, y1) * tx;
    Some(top * (1.0 - ty) + bottom * ty)
}

/// The page through a JPEG of the given quality and back.
pub fn jpeg_round_trip(img: &GrayImage, quality: u8) -> GrayImage {
    let mut bytes = std::io::Cursor::new(Vec::new());
    let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, quality);
    img.write_with_encoder(enc).unwrap();
    image::load_from_memory(&bytes.into_inner())
        .unwrap()
        .to_luma8()
}

/// A normalized box through [`on_bed`] with the same settings (the box of its moved corners).
pub fn box_on_bed(
    b: PxBox,
    w: f64,
    h: f64,
    degrees: f64,
    scale: f64,
    dx: f64,
    dy: f64,
) -> (f64, f64, f64, f64) {
    let (s, c) = degrees.to_radians().sin_cos();
    let pts = [(b.0, b.1), (b.2, b.1), (b.2, b.3), (b.0, b.3)].map(|(x, y)| {
        let (u, v) = ((x as f64 - w / 2.0) * scale, (y as f64 - h / 2.0) * scale);
        (c * u - s * v + w / 2.0 + dx, s * u + c * v + h / 2.0 + dy)
    });
    corners_box(&pts, w, h)
}

/// The normalized box `(x0, y0, x1, y1)` around pixel points.
pub fn corners_box(pts: &[(f64, f64)], w: f64, h: f64) -> (f64, f64, f64, f64) {
    let x0 = pts.iter().map(|p| p.0).fold(f64::MAX, f64::min);
    let y0 = pts.iter().map(|p| p.1).fold(f64::MAX, f64::min);
    let x1 = pts.iter().map(|p| p.0).fold(f64::MIN, f64::max);
    let y1 = pts.iter().map(|p| p.1).fold(f64::MIN, f64::max);
    (x0 / w, y0 / h, x1 / w, y1 / h)
}
