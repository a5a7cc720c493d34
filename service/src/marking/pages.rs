//! Pages as markers and readers see them, for indexing, the question jobs, the markers and the
//! evidence guards alike: how a box turns with its page ([`turned`]), a page's image as a marker
//! is shown it ([`page_image`]), and how large added ink must be to count as writing
//! ([`WRITING_MIN_EXTENT`]).

use super::marker::Rect;

/// The smallest height and width, as fractions of the page, of a region of added ink that counts
/// as writing: thinner differences are the printed page's own lines and edges, shifted by a pixel
/// or blurred in scanning.
pub const WRITING_MIN_EXTENT: f64 = 0.004;

/// A box of the upright page as it is displayed when the page's content is turned `degrees`
/// clockwise (a page scanned sideways or upside down).
pub fn turned(r: Rect, degrees: u32) -> Rect {
    match degrees {
        90 => Rect {
            x: 1.0 - r.y - r.height,
            y: r.x,
            width: r.height,
            height: r.width,
        },
        180 => Rect {
            x: 1.0 - r.x - r.width,
            y: 1.0 - r.y - r.height,
            width: r.width,
            height: r.height,
        },
        270 => Rect {
            x: r.y,
            y: 1.0 - r.x - r.width,
            width: r.height,
            height: r.width,
        },
        _ => r,
    }
}

/// A displayed page as a marker is shown it: no longer than `long_edge` on its long side, encoded
/// as `encoding` (JPEG at quality 85, or PNG).
pub fn page_image(
    image: &image::GrayImage,
    long_edge: Option<u32>,
    encoding: image::ImageFormat,
) -> Result<Vec<u8>, String> {
    let (w, h) = image.dimensions();
    let resized;
    let image = match long_edge {
        Some(edge) if w.max(h) > edge => {
            let scale = f64::from(edge) / f64::from(w.max(h));
            let (nw, nh) = (
                ((f64::from(w) * scale).round() as u32).max(1),
                ((f64::from(h) * scale).round() as u32).max(1),
            );
            resized = image::imageops::resize(image, nw, nh, image::imageops::FilterType::Triangle);
            &resized
        }
        _ => image,
    };
    let mut out = std::io::Cursor::new(Vec::new());
    if encoding == image::ImageFormat::Jpeg {
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85)
            .encode_image(image)
            .map_err(|e| e.to_string())?;
    } else {
        image
            .write_to(&mut out, encoding)
            .map_err(|e| e.to_string())?;
    }
    Ok(out.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Rect, b: Rect) -> bool {
        (a.x - b.x).abs() < 1e-12
            && (a.y - b.y).abs() < 1e-12
            && (a.width - b.width).abs() < 1e-12
            && (a.height - b.height).abs() < 1e-12
    }

    #[test]
    fn boxes_turn_with_the_page() {
        // A box in the top-left corner of the upright page.
        let r = Rect {
            x: 0.1,
            y: 0.2,
            width: 0.3,
            height: 0.1,
        };
        assert!(close(turned(r, 0), r));
        // Turned clockwise, the top-left corner goes to the top right.
        assert!(close(
            turned(r, 90),
            Rect {
                x: 0.7,
                y: 0.1,
                width: 0.1,
                height: 0.3
            }
        ));
        assert!(close(
            turned(r, 180),
            Rect {
                x: 0.6,
                y: 0.7,
                width: 0.3,
                height: 0.1
            }
        ));
        assert!(close(
            turned(r, 270),
            Rect {
                x: 0.2,
                y: 0.6,
                width: 0.1,
                height: 0.3
            }
        ));
        // Four quarter turns are none.
        assert!(close(turned(turned(turned(turned(r, 90), 90), 90), 90), r));
        assert!(close(turned(turned(r, 90), 270), r));
    }
}
