//! What a scanned work page adds to the clean rendered page of the same paper page.
//!
//! Steps (all at a working resolution of about 150 dpi for an A4 page):
//! 1. Quarter turn: the work page is tried at the quarter turns whose aspect ratio matches the
//!    reference; the one whose coarse ink map correlates best with the reference wins.
//! 2. Alignment: the relative skew comes from the text-line skew of both pages (projection
//!    profiles); scale and shift per axis from matching the row and column ink profiles; then a
//!    local search refines rotation, scales and shifts to maximise how much of the reference's
//!    ink lands on work ink. Ink the student added does not lower that score, so it does not
//!    pull the alignment.
//! 3. Added ink: work ink with no reference ink within a small tolerance (about 0.5 mm, for
//!    anti-aliasing, toner spread and scan blur) is added; specks of scan noise are dropped and
//!    the rest is merged into regions (strokes closer than about 1.2% of the page join).
//!
//! A band of 1% along the edges of the work page is ignored (scanner shadows and lid edges).

use image::GrayImage;
use serde::{Deserialize, Serialize};

use crate::geometry::{NormBox, rotate_box_clockwise, rotate_quarter_turns};
use crate::orientation::{Orientation, estimate_skew};
use crate::pixels::{Affine2, Mask, components, ink_mask, ink_mask_at};

/// What a scanned page adds to its clean reference page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// Whether the work page could be aligned with the reference. When false, the other
    /// figures are empty and `note` says why.
    pub aligned: bool,
    /// How the work page's content is turned relative to the reference (clockwise).
    pub rotation: Orientation,
    /// Residual rotation of the work page after the quarter turn, in degrees clockwise.
    pub skew_degrees: f32,
    /// Scale of the work page relative to the reference (1 = same size), mean of both axes.
    pub scale: f32,
    /// Share of the reference's ink that the alignment puts on work ink (0..1).
    pub coverage: f32,
    /// Added ink as a fraction of the page area.
    pub added_fraction: f32,
    /// Regions of added ink, in the work page's normalized displayed coordinates.
    pub added_regions: Vec<NormBox>,
    /// What was done, and why alignment failed when it did.
    pub note: String,
}

/// Long side of the working rasters.
const WORK_LONG_SIDE: u32 = 1754;
/// Tolerance around reference ink, in working pixels (about 0.5 mm on A4).
const TOLERANCE_PX: usize = 3;
/// Added components smaller than this (working pixels) are scan noise.
const MIN_SPECK_PX: usize = 6;
/// Regions with fewer added pixels than this are dropped.
const MIN_REGION_PX: usize = 25;
/// Below this coverage of the reference's ink, the pages do not match.
const MIN_COVERAGE: f64 = 0.6;

/// Aligns `work` (a scanned page, displayed orientation) with `reference` (the clean rendered
/// page) and reports the ink the work adds.
pub fn compare(work: &GrayImage, reference: &GrayImage) -> Comparison {
    let failed = |note: String| Comparison {
        aligned: false,
        rotation: Orientation::Up,
        skew_degrees: 0.0,
        scale: 1.0,
        coverage: 0.0,
        added_fraction: 0.0,
        added_regions: Vec::new(),
        note,
    };
    if work.width() < 16 || work.height() < 16 || reference.width() < 16 || reference.height() < 16
    {
        return failed("page too small to compare".into());
    }
    // Working size: the reference scaled so its long side is WORK_LONG_SIDE.
    let k = f64::from(WORK_LONG_SIDE) / f64::from(reference.width().max(reference.height()));
    let rw = ((f64::from(reference.width()) * k).round() as u32).max(16);
    let rh = ((f64::from(reference.height()) * k).round() as u32).max(16);
    let ref_small = resize(reference, rw, rh);
    // Alignment uses only the reference's dark ink: light features (pale ruled lines, grey
    // fills) often vanish in scans. Every shade of reference ink explains work ink, though.
    let ref_mask = ink_mask_at(&ref_small, 0.5);
    let ref_any = ink_mask_at(&ref_small, 0.9);

    // 1. Quarter turn.
    let ref_aspect = f64::from(rw) / f64::from(rh);
    let mut best: Option<(u32, f64, GrayImage)> = None;
    for q in 0..4u32 {
        let (ww, wh) = if q % 2 == 0 {
            (work.width(), work.height())
        } else {
            (work.height(), work.width())
        };
        let aspect = f64::from(ww) / f64::from(wh);
        if (aspect / ref_aspect).ln().abs() > 0.25 {
            continue;
        }
        let turned = resize(&rotate_quarter_turns(work, q), rw, rh);
        let score = coarse_similarity(&ink_mask(&turned), &ref_mask);
        if best.as_ref().is_none_or(|b| score > b.1) {
            best = Some((q, score, turned));
        }
    }
    let Some((q, _, work_small)) = best else {
        return failed(
            "the pages' shapes differ (portrait against landscape of another size)".into(),
        );
    };
    let rotation = Orientation::from_quarter_turns((4 - q) % 4);
    let work_mask = ink_mask(&work_small);
    // Thin or light strokes (pencil, fine pens) count as added ink even where they are too
    // faint for the alignment mask.
    let faint_mask = ink_mask_at(&work_small, 0.85);

    // 2. Alignment: a map from reference pixels to (turned, resized) work pixels.
    let ref_ink = ref_mask.count();
    let mut note = String::new();
    let map = if ref_ink < 200 {
        note.push_str("reference page is nearly blank; aligned by the page frame. ");
        Affine2::similarity(0.0, 1.0, 0.0, 0.0, 0.0, 0.0)
    } else {
        align(&ref_mask, &work_mask)
    };
    let coverage = if ref_ink < 200 {
        1.0
    } else {
        coverage_of(&ref_mask, &faint_mask, &map)
    };
    let angle = map.d.atan2(map.a).to_degrees();
    let scale =
        ((map.a * map.a + map.d * map.d).sqrt() + (map.b * map.b + map.e * map.e).sqrt()) / 2.0;
    if coverage < MIN_COVERAGE {
        let mut c = failed(format!(
            "alignment failed: only {:.0}% of the reference's ink matches the work page (different page, or heavily damaged scan)",
            coverage * 100.0
        ));
        c.rotation = rotation;
        c.coverage = coverage as f32;
        return c;
    }
    let Some(inverse) = map.inverse() else {
        return failed("alignment failed: degenerate transform".into());
    };

    // 3. Added ink, in the turned work frame.
    let ref_near = ref_any.dilate(TOLERANCE_PX);
    let (w, h) = (work_mask.width, work_mask.height);
    let border_x = (w as f64 * 0.01).ceil() as usize;
    let border_y = (h as f64 * 0.01).ceil() as usize;
    let mut added = Mask::new(w, h);
    for y in border_y..h.saturating_sub(border_y) {
        for x in border_x..w.saturating_sub(border_x) {
            if faint_mask.get(x, y) == 0 {
                continue;
            }
            let (rx, ry) = inverse.apply(x as f64 + 0.5, y as f64 + 0.5);
            let (ix, iy) = (rx.floor(), ry.floor());
            let near_ref = ix >= 0.0
                && iy >= 0.0
                && (ix as usize) < ref_near.width
                && (iy as usize) < ref_near.height
                && ref_near.get(ix as usize, iy as usize) != 0;
            if !near_ref {
                added.data[y * w + x] = 1;
            }
        }
    }
    // Drop specks.
    let specks = components(&added);
    for c in specks.iter().filter(|c| c.pixels < MIN_SPECK_PX) {
        for y in c.y0..c.y1 {
            for x in c.x0..c.x1 {
                added.data[y * w + x] = 0;
            }
        }
    }
    let added_px = added.count();
    let merge = ((w.max(h) as f64) * 0.012).round() as usize;
    let grouped = added.dilate(merge);
    let mut regions = Vec::new();
    for c in components(&grouped) {
        // Shrink back to the added pixels inside the merged component.
        let (mut x0, mut y0, mut x1, mut y1, mut n) = (usize::MAX, usize::MAX, 0, 0, 0usize);
        for y in c.y0..c.y1 {
            for x in c.x0..c.x1 {
                if added.data[y * w + x] != 0 {
                    x0 = x0.min(x);
                    y0 = y0.min(y);
                    x1 = x1.max(x + 1);
                    y1 = y1.max(y + 1);
                    n += 1;
                }
            }
        }
        if n < MIN_REGION_PX {
            continue;
        }
        let b = NormBox::from_pixels(
            x0 as f64, y0 as f64, x1 as f64, y1 as f64, w as f64, h as f64,
        );
        regions.push(rotate_box_clockwise(&b, (4 - q) % 4));
    }
    regions.sort_by(|a, b| a.y.total_cmp(&b.y).then(a.x.total_cmp(&b.x)));
    note.push_str(&format!(
        "turned {} degrees, skew {:.2} degrees, scale {:.3}, {:.0}% of reference ink matched",
        rotation.degrees(),
        angle,
        scale,
        coverage * 100.0
    ));
    Comparison {
        aligned: true,
        rotation,
        skew_degrees: angle as f32,
        scale: scale as f32,
        coverage: coverage as f32,
        added_fraction: (added_px as f64 / (w * h).max(1) as f64) as f32,
        added_regions: regions,
        note,
    }
}

fn resize(img: &GrayImage, w: u32, h: u32) -> GrayImage {
    if img.dimensions() == (w, h) {
        return img.clone();
    }
    // Shrink by a whole factor with a box filter first (fast), then resample the rest.
    let factor = (img.width() / w.max(1)).min(img.height() / h.max(1)).max(1);
    let pre = crate::pixels::downscale(img, factor);
    if pre.dimensions() == (w, h) {
        return pre;
    }
    image::imageops::resize(&pre, w, h, image::imageops::FilterType::Triangle)
}

/// Ink density on a coarse grid of `cells` along the long side.
fn coarse_map(mask: &Mask, cells: usize) -> (Vec<f64>, usize, usize) {
    let long = mask.width.max(mask.height).max(1);
    let cell = long.div_ceil(cells).max(1);
    let (gw, gh) = (mask.width.div_ceil(cell), mask.height.div_ceil(cell));
    let mut grid = vec![0f64; gw * gh];
    for y in 0..mask.height {
        for x in 0..mask.width {
            if mask.get(x, y) != 0 {
                grid[(y / cell) * gw + x / cell] += 1.0;
            }
        }
    }
    (grid, gw, gh)
}

/// Best correlation of coarse ink maps over small shifts.
fn coarse_similarity(a: &Mask, b: &Mask) -> f64 {
    let (ga, gw, gh) = coarse_map(a, 48);
    let (gb, gw2, gh2) = coarse_map(b, 48);
    let (w, h) = (gw.min(gw2), gh.min(gh2));
    let mut best = f64::NEG_INFINITY;
    for dy in -3i64..=3 {
        for dx in -3i64..=3 {
            let (mut sa, mut sb, mut saa, mut sbb, mut sab, mut n) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
            for y in 0..h as i64 {
                for x in 0..w as i64 {
                    let (xb, yb) = (x + dx, y + dy);
                    if xb < 0 || yb < 0 || xb >= w as i64 || yb >= h as i64 {
                        continue;
                    }
                    let va = ga[y as usize * gw + x as usize];
                    let vb = gb[yb as usize * gw2 + xb as usize];
                    sa += va;
                    sb += vb;
                    saa += va * va;
                    sbb += vb * vb;
                    sab += va * vb;
                    n += 1.0;
                }
            }
            if n < 1.0 {
                continue;
            }
            let cov = sab / n - (sa / n) * (sb / n);
            let va = saa / n - (sa / n) * (sa / n);
            let vb = sbb / n - (sb / n) * (sb / n);
            let r = if va > 0.0 && vb > 0.0 {
                cov / (va * vb).sqrt()
            } else {
                0.0
            };
            best = best.max(r);
        }
    }
    best
}

/// Row (or column) ink counts, high-passed so that line structure dominates.
fn profile(mask: &Mask, rows: bool) -> Vec<f64> {
    let n = if rows { mask.height } else { mask.width };
    let mut p = vec![0f64; n];
    for y in 0..mask.height {
        for x in 0..mask.width {
            if mask.get(x, y) != 0 {
                p[if rows { y } else { x }] += 1.0;
            }
        }
    }
    let r = 15usize;
    (0..n)
        .map(|i| {
            let a = i.saturating_sub(r);
            let b = (i + r + 1).min(n);
            p[i] - p[a..b].iter().sum::<f64>() / (b - a) as f64
        })
        .collect()
}

/// Scale and shift `(s, t)` such that `work[s * i + t]` best matches `reference[i]`.
fn fit_axis(reference: &[f64], work: &[f64]) -> (f64, f64) {
    let n = reference.len();
    let m = work.len();
    if n < 8 || m < 8 {
        return (1.0, 0.0);
    }
    let sample = |x: f64| -> Option<f64> {
        if x < 0.0 {
            return None;
        }
        let i = x.floor() as usize;
        if i + 1 >= m {
            return None;
        }
        let t = x - i as f64;
        Some(work[i] * (1.0 - t) + work[i + 1] * t)
    };
    let max_shift = (n as f64 * 0.12).round() as i64;
    let mut best = (f64::NEG_INFINITY, 1.0, 0.0);
    let mut s = 0.9;
    while s <= 1.1 + 1e-9 {
        // Scale about the centre, so a scale change does not also move the middle.
        let c = n as f64 / 2.0;
        for t in -max_shift..=max_shift {
            let (mut num, mut rr, mut ww) = (0.0, 0.0, 0.0);
            for (i, &r) in reference.iter().enumerate() {
                if let Some(v) = sample(s * (i as f64 - c) + c * (m as f64 / n as f64) + t as f64) {
                    num += r * v;
                    rr += r * r;
                    ww += v * v;
                }
            }
            if rr > 0.0 && ww > 0.0 {
                let score = num / (rr * ww).sqrt();
                if score > best.0 {
                    best = (score, s, t as f64);
                }
            }
        }
        s += 0.005;
    }
    let c = n as f64 / 2.0;
    // work coordinate = s * i + (c * (m / n) - s * c + t)
    (best.1, c * (m as f64 / n as f64) - best.1 * c + best.2)
}

/// Work ink blurred into a smooth 0..1 field, so small misalignments still score.
fn soft_field(mask: &Mask, radius: usize) -> Vec<f32> {
    let (w, h) = (mask.width, mask.height);
    let mut tmp = vec![0f32; w * h];
    for y in 0..h {
        let mut acc = 0f32;
        for x in 0..w + radius {
            if x < w {
                acc += f32::from(mask.data[y * w + x]);
            }
            if x > 2 * radius && x - 2 * radius - 1 < w {
                acc -= f32::from(mask.data[y * w + x - 2 * radius - 1]);
            }
            if x >= radius && x - radius < w {
                tmp[y * w + x - radius] = acc;
            }
        }
    }
    let mut out = vec![0f32; w * h];
    let norm = ((2 * radius + 1) * (2 * radius + 1)) as f32;
    for x in 0..w {
        let mut acc = 0f32;
        for y in 0..h + radius {
            if y < h {
                acc += tmp[y * w + x];
            }
            if y > 2 * radius && y - 2 * radius - 1 < h {
                acc -= tmp[(y - 2 * radius - 1) * w + x];
            }
            if y >= radius && y - radius < h {
                out[(y - radius) * w + x] = (acc / norm * 3.0).min(1.0);
            }
        }
    }
    out
}

fn ink_points(mask: &Mask, limit: usize) -> Vec<(f64, f64)> {
    let total = mask.count().max(1);
    let step = total.div_ceil(limit).max(1);
    let mut pts = Vec::new();
    let mut i = 0usize;
    for y in 0..mask.height {
        for x in 0..mask.width {
            if mask.get(x, y) != 0 {
                if i % step == 0 {
                    pts.push((x as f64 + 0.5, y as f64 + 0.5));
                }
                i += 1;
            }
        }
    }
    pts
}

#[derive(Clone, Copy, Debug)]
struct Params {
    angle: f64,
    sx: f64,
    sy: f64,
    tx: f64,
    ty: f64,
}

impl Params {
    /// Reference pixel -> work pixel: scale and shift per axis, then rotate about the centre.
    fn map(&self, cx: f64, cy: f64) -> Affine2 {
        let st = Affine2 {
            a: self.sx,
            b: 0.0,
            c: self.tx,
            d: 0.0,
            e: self.sy,
            f: self.ty,
        };
        Affine2::similarity(self.angle, 1.0, cx, cy, 0.0, 0.0).then_after(&st)
    }
}

fn align(ref_mask: &Mask, work_mask: &Mask) -> Affine2 {
    let (cx, cy) = (work_mask.width as f64 / 2.0, work_mask.height as f64 / 2.0);
    // Relative skew from the text lines of both pages.
    let angle =
        (estimate_skew(work_mask).atan() - estimate_skew(ref_mask).atan()).clamp(-0.07, 0.07);
    // Undo it on the work page, then match profiles per axis.
    let unrotate = Affine2::similarity(angle, 1.0, cx, cy, 0.0, 0.0);
    let deskewed = warp_mask(work_mask, &unrotate);
    let (sy, ty) = fit_axis(&profile(ref_mask, true), &profile(&deskewed, true));
    let (sx, tx) = fit_axis(&profile(ref_mask, false), &profile(&deskewed, false));
    let mut p = Params {
        angle,
        sx,
        sy,
        tx,
        ty,
    };

    // Local refinement on how much reference ink lands on work ink.
    let field = soft_field(work_mask, 2);
    let pts = ink_points(ref_mask, 20_000);
    let (w, h) = (work_mask.width, work_mask.height);
    let score = |p: &Params| -> f64 {
        let m = p.map(cx, cy);
        let mut s = 0.0;
        for &(x, y) in &pts {
            let (wx, wy) = m.apply(x, y);
            if wx >= 0.0 && wy >= 0.0 && (wx as usize) < w && (wy as usize) < h {
                s += f64::from(field[wy as usize * w + wx as usize]);
            }
        }
        s
    };
    let mut best = score(&p);
    let mut steps = [0.1f64.to_radians(), 0.002, 0.002, 1.0, 1.0];
    for _ in 0..6 {
        let mut improved = true;
        let mut rounds = 0;
        while improved && rounds < 40 {
            improved = false;
            rounds += 1;
            for (i, step) in steps.iter().enumerate() {
                for sign in [-1.0, 1.0] {
                    let mut c = p;
                    match i {
                        0 => c.angle += sign * step,
                        1 => c.sx += sign * step,
                        2 => c.sy += sign * step,
                        3 => c.tx += sign * step,
                        _ => c.ty += sign * step,
                    }
                    let s = score(&c);
                    if s > best {
                        best = s;
                        p = c;
                        improved = true;
                    }
                }
            }
        }
        for s in steps.iter_mut() {
            *s /= 2.0;
        }
    }
    p.map(cx, cy)
}

/// Nearest-neighbour warp of a mask: output pixel `p` takes `mask[map(p)]`.
fn warp_mask(mask: &Mask, map: &Affine2) -> Mask {
    let (w, h) = (mask.width, mask.height);
    let mut out = Mask::new(w, h);
    for y in 0..h {
        for x in 0..w {
            let (sx, sy) = map.apply(x as f64 + 0.5, y as f64 + 0.5);
            if sx >= 0.0 && sy >= 0.0 && (sx as usize) < w && (sy as usize) < h {
                out.data[y * w + x] = mask.get(sx as usize, sy as usize);
            }
        }
    }
    out
}

/// Share of reference ink that lands within the tolerance of work ink.
fn coverage_of(ref_mask: &Mask, work_mask: &Mask, map: &Affine2) -> f64 {
    let near = work_mask.dilate(TOLERANCE_PX);
    let pts = ink_points(ref_mask, 50_000);
    if pts.is_empty() {
        return 0.0;
    }
    let hits = pts
        .iter()
        .filter(|&&(x, y)| {
            let (wx, wy) = map.apply(x, y);
            wx >= 0.0
                && wy >= 0.0
                && (wx as usize) < near.width
                && (wy as usize) < near.height
                && near.get(wx as usize, wy as usize) != 0
        })
        .count();
    hits as f64 / pts.len() as f64
}
