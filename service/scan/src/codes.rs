//! QR codes printed on the page (question papers carry one per page).
//!
//! Decoding uses `rqrr`, a pure-Rust port of quirc: it finds the three finder patterns, fits a
//! perspective grid (so codes may be turned any way, skewed or slightly warped) and corrects
//! errors with Reed-Solomon. The corners of the fitted grid also tell which way up the code,
//! and so the page it was printed on, is.

use std::panic::{AssertUnwindSafe, catch_unwind};

use image::GrayImage;
use serde::{Deserialize, Serialize};

use crate::geometry::NormBox;
use crate::orientation::Orientation;

/// A decoded QR code on the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Code {
    /// The decoded text exactly as encoded (not interpreted).
    pub payload: String,
    /// The code's bounding box in normalized displayed-page coordinates.
    pub bbox: NormBox,
    /// How the code (and so, normally, the printed page) is turned on the displayed page.
    pub orientation: Orientation,
}

/// Finds and decodes every QR code on a displayed page.
pub fn decode_codes(page: &GrayImage) -> Vec<Code> {
    if page.width() < 21 || page.height() < 21 {
        return Vec::new();
    }
    let (w, h) = (f64::from(page.width()), f64::from(page.height()));
    // The decoder gets clean black-and-white copies: scan noise on the paper otherwise turns
    // into speckles under its local threshold and breaks up the finder patterns. A blurred scan
    // of a small code (3 pixels per module) can merge or split one-module features when cut at
    // its own resolution; enlarged twice with interpolation first, it cuts cleanly. So when
    // nothing is found at the page's resolution, a page of ordinary size is tried enlarged. A
    // blurred, noisy scan can still lose a finder pattern at one level and keep it at the next,
    // so two more levels are tried before the page is said to carry no code.
    let enlarge = if page.width().max(page.height()) <= 2600 {
        2
    } else {
        1
    };
    let mut found = Vec::new();
    for (scale, cut) in [(1, 0.55), (enlarge, 0.6), (enlarge, 0.5), (enlarge, 0.7)] {
        found = find_codes(page, scale, cut);
        if !found.is_empty() {
            break;
        }
    }
    let mut codes: Vec<Code> = Vec::new();
    for (payload, corners) in found {
        let (x0, x1) = min_max(corners.iter().map(|c| c.0));
        let (y0, y1) = min_max(corners.iter().map(|c| c.1));
        let bbox = NormBox::from_pixels(x0, y0, x1 + 1.0, y1 + 1.0, w, h);
        let orientation = corner_orientation(&corners);
        if codes
            .iter()
            .any(|c| c.payload == payload && c.bbox.intersects(&bbox))
        {
            continue;
        }
        codes.push(Code {
            payload,
            bbox,
            orientation,
        });
    }
    codes
}

/// Decodes the codes on a page enlarged `scale` times and binarized at `cut` x the paper level;
/// corners are returned in the page's pixels.
fn find_codes(page: &GrayImage, scale: u32, cut: f32) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut found = Vec::new();
    let mut failed = Vec::new();
    let s = f64::from(scale.max(1));
    let binary = if scale > 1 {
        binarize(&crate::pixels::upscale(page, scale), cut)
    } else {
        binarize(page, cut)
    };
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut prepared = rqrr::PreparedImage::prepare(binary);
        for grid in prepared.detect_grids() {
            let corners: Vec<(f64, f64)> = grid
                .bounds
                .iter()
                .map(|p| (f64::from(p.x) / s, f64::from(p.y) / s))
                .collect();
            match grid.decode() {
                Ok((_, payload)) => found.push((payload, corners)),
                Err(_) => failed.push(corners),
            }
        }
    }));
    if result.is_err() {
        return Vec::new();
    }
    // Small or blurred codes that were located but not read get another try, enlarged and cut
    // at several levels.
    for corners in failed {
        if let Some(hit) = [0.5, 0.6, 0.7]
            .iter()
            .find_map(|&c| retry_enlarged(page, &corners, c))
        {
            found.push(hit);
        }
    }
    found
}

fn binarize(page: &GrayImage, cut: f32) -> GrayImage {
    let bg = f32::from(crate::pixels::background_level(page)).max(96.0);
    let t = (bg * cut) as u8;
    let mut out = page.clone();
    for p in out.iter_mut() {
        *p = if *p < t { 0 } else { 255 };
    }
    out
}

fn min_max(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    })
}

/// The code's orientation from its top-left -> top-right edge direction.
fn corner_orientation(corners: &[(f64, f64)]) -> Orientation {
    let (Some(tl), Some(tr)) = (corners.first(), corners.get(1)) else {
        return Orientation::Up;
    };
    let (dx, dy) = (tr.0 - tl.0, tr.1 - tl.1);
    if dx.abs() >= dy.abs() {
        if dx >= 0.0 {
            Orientation::Up
        } else {
            Orientation::Down
        }
    } else if dy > 0.0 {
        Orientation::Right
    } else {
        Orientation::Left
    }
}

fn retry_enlarged(
    page: &GrayImage,
    corners: &[(f64, f64)],
    cut: f32,
) -> Option<(String, Vec<(f64, f64)>)> {
    let (x0, x1) = min_max(corners.iter().map(|c| c.0));
    let (y0, y1) = min_max(corners.iter().map(|c| c.1));
    let margin = ((x1 - x0).max(y1 - y0) * 0.25).max(8.0);
    let cx0 = (x0 - margin).max(0.0) as u32;
    let cy0 = (y0 - margin).max(0.0) as u32;
    let cx1 = ((x1 + margin) as u32).min(page.width());
    let cy1 = ((y1 + margin) as u32).min(page.height());
    if cx1 <= cx0 + 8 || cy1 <= cy0 + 8 || (cx1 - cx0) > 2000 || (cy1 - cy0) > 2000 {
        return None;
    }
    let crop = image::imageops::crop_imm(page, cx0, cy0, cx1 - cx0, cy1 - cy0).to_image();
    let big = crate::pixels::upscale(&crop, 2);
    let big = binarize(&big, cut);
    catch_unwind(AssertUnwindSafe(|| {
        let mut prepared = rqrr::PreparedImage::prepare(big);
        prepared.detect_grids().into_iter().find_map(|grid| {
            let (_, payload) = grid.decode().ok()?;
            let corners = grid
                .bounds
                .iter()
                .map(|p| {
                    (
                        f64::from(cx0) + f64::from(p.x) / 2.0,
                        f64::from(cy0) + f64::from(p.y) / 2.0,
                    )
                })
                .collect();
            Some((payload, corners))
        })
    }))
    .ok()
    .flatten()
}
