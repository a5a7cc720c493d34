//! Which way up the content sits on the displayed page, and how to detect it from pixels.
//!
//! Convention: [`Orientation`] says how the page's content is turned on the displayed page.
//! `Up` is upright; `Right` means the content is turned 90 degrees clockwise (text lines run
//! top to bottom, the tops of the letters face right); `Down` is upside down; `Left` means
//! turned 270 degrees clockwise (90 counter-clockwise). To read the page, turn the displayed
//! image back by the same angle counter-clockwise. It serializes as the integer number of
//! degrees clockwise: `0`, `90`, `180` or `270`.
//!
//! Detection from pixels works without OCR and on typeset text as well as handwriting:
//! 1. Axis: text lines make the row profile of ink (counted in narrow vertical strips) swing
//!    between full lines and empty gaps much more than the column profile. Whichever axis swings
//!    more is the direction of the lines.
//! 2. Direction: after turning the lines horizontal and removing small skew, each text line's
//!    profile has a dense core (the x-height band). Latin letters, digits and capitals put
//!    clearly more ink above that core (ascenders) than below it (descenders), so the side with
//!    more ink outside the core is the top.
//!
//! Each step reports a confidence so callers can confirm uncertain cases another way (QR code
//! geometry, or OCR confidence at the two candidate rotations, as the indexer does).

use image::GrayImage;
use serde::{Deserialize, Serialize};

use crate::pixels::{Mask, downscale, factor_for, ink_mask};

/// How the page's content is turned on the displayed page (clockwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(into = "u16", try_from = "u16")]
pub enum Orientation {
    /// Upright (0 degrees).
    #[default]
    Up,
    /// Turned 90 degrees clockwise.
    Right,
    /// Upside down (180 degrees).
    Down,
    /// Turned 270 degrees clockwise (90 degrees counter-clockwise).
    Left,
}

impl Orientation {
    /// All four orientations, in clockwise order from upright.
    pub const ALL: [Orientation; 4] = [
        Orientation::Up,
        Orientation::Right,
        Orientation::Down,
        Orientation::Left,
    ];

    /// Degrees clockwise: 0, 90, 180 or 270.
    pub fn degrees(self) -> u16 {
        match self {
            Orientation::Up => 0,
            Orientation::Right => 90,
            Orientation::Down => 180,
            Orientation::Left => 270,
        }
    }

    /// The orientation for a whole number of degrees clockwise that is a multiple of 90
    /// (negative and larger values are reduced modulo 360).
    pub fn from_degrees(degrees: i64) -> Option<Orientation> {
        let d = degrees.rem_euclid(360);
        if d % 90 != 0 {
            return None;
        }
        Some(Self::from_quarter_turns((d / 90) as u32))
    }

    /// Number of 90-degree clockwise turns (0..=3).
    pub fn quarter_turns(self) -> u32 {
        u32::from(self.degrees() / 90)
    }

    /// The orientation of `turns` quarter turns clockwise (modulo 4).
    pub fn from_quarter_turns(turns: u32) -> Orientation {
        Self::ALL[(turns % 4) as usize]
    }

    /// Clockwise quarter turns to apply to the displayed page to make its content upright.
    pub fn upright_turns(self) -> u32 {
        (4 - self.quarter_turns()) % 4
    }
}

impl From<Orientation> for u16 {
    fn from(o: Orientation) -> u16 {
        o.degrees()
    }
}

impl TryFrom<u16> for Orientation {
    type Error = String;

    fn try_from(value: u16) -> Result<Self, Self::Error> {
        match value {
            0 => Ok(Orientation::Up),
            90 => Ok(Orientation::Right),
            180 => Ok(Orientation::Down),
            270 => Ok(Orientation::Left),
            other => Err(format!(
                "orientation must be 0, 90, 180 or 270 degrees, got {other}"
            )),
        }
    }
}

/// The result of pixel-based orientation detection.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrientationEstimate {
    /// The most likely orientation.
    pub orientation: Orientation,
    /// The runner-up: the same axis turned 180 degrees.
    pub alternative: Orientation,
    /// How clearly the text lines run along the chosen axis (0 = no idea, 1 = certain).
    pub axis_confidence: f32,
    /// How clearly the chosen side is the top (0 = no idea, 1 = certain).
    pub direction_confidence: f32,
    /// Detected skew of the text lines in degrees (positive = clockwise), within +-5.
    pub skew_degrees: f32,
    /// Whether there was enough ink in line structure to judge at all.
    pub has_text_lines: bool,
}

/// Estimates the orientation of a displayed page from its pixels alone.
pub fn estimate_orientation(page: &GrayImage) -> OrientationEstimate {
    let k = factor_for(page.width(), page.height(), 2000);
    let small = downscale(page, k);
    let mask = ink_mask(&small);
    estimate_from_mask(&mask)
}

pub(crate) fn estimate_from_mask(mask: &Mask) -> OrientationEstimate {
    let horizontal = line_structure(mask);
    let vertical = line_structure(&mask.rotate_quarter_turns(1));
    let (base, strong, weak) = if horizontal >= vertical {
        (0, horizontal, vertical)
    } else {
        (1, vertical, horizontal)
    };
    let axis_confidence = if strong > 0.0 {
        ((strong - weak) / strong) as f32
    } else {
        0.0
    };
    let lines = mask.rotate_quarter_turns(base);
    let skew = estimate_skew(&lines);
    let (above, below) = ascender_balance(&lines, skew);
    let total = above + below;
    let has_text_lines = total > 50.0;
    let direction_confidence = if total > 0.0 {
        ((above - below).abs() / total) as f32
    } else {
        0.0
    };
    // `turns` rotates the displayed page to upright; the content orientation is its inverse.
    let turns = if above >= below { base } else { base + 2 };
    let orientation = Orientation::from_quarter_turns((4 - turns % 4) % 4);
    let alternative = Orientation::from_quarter_turns(orientation.quarter_turns() + 2);
    // Turning the page by quarter turns does not change the sense of a small rotation, so the
    // skew measured on the turned mask is the skew on the displayed page.
    let skew_degrees = ((skew.atan().to_degrees() * 100.0).round() / 100.0) as f32;
    OrientationEstimate {
        orientation,
        alternative,
        axis_confidence: axis_confidence.clamp(0.0, 1.0),
        direction_confidence: direction_confidence.clamp(0.0, 1.0),
        skew_degrees,
        has_text_lines,
    }
}

/// How strongly the ink is organised in horizontal lines: the ink-weighted normalized variance
/// of row profiles taken in narrow vertical strips.
fn line_structure(mask: &Mask) -> f64 {
    let (w, h) = (mask.width, mask.height);
    if w == 0 || h == 0 {
        return 0.0;
    }
    let strips = 8usize.min(w);
    let mut weighted = 0.0;
    let mut weights = 0.0;
    for s in 0..strips {
        let x0 = s * w / strips;
        let x1 = (s + 1) * w / strips;
        let profile: Vec<f64> = (0..h)
            .map(|y| {
                let row = &mask.data[y * w + x0..y * w + x1];
                row.iter().map(|&v| f64::from(v)).sum::<f64>()
            })
            .collect();
        let profile = smooth(&profile, 1);
        // Only the span between the first and last inked rows counts (margins are not lines).
        let Some(first) = profile.iter().position(|&v| v > 0.0) else {
            continue;
        };
        let last = profile.iter().rposition(|&v| v > 0.0).unwrap_or(first);
        let span = &profile[first..=last];
        let n = span.len() as f64;
        let mean = span.iter().sum::<f64>() / n;
        if mean <= 0.0 {
            continue;
        }
        let var = span.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
        let ink = span.iter().sum::<f64>();
        weighted += ink * var / (mean * mean);
        weights += ink;
    }
    if weights > 0.0 {
        weighted / weights
    } else {
        0.0
    }
}

fn smooth(p: &[f64], radius: usize) -> Vec<f64> {
    let n = p.len();
    (0..n)
        .map(|i| {
            let a = i.saturating_sub(radius);
            let b = (i + radius + 1).min(n);
            p[a..b].iter().sum::<f64>() / (b - a) as f64
        })
        .collect()
}

/// Ink pixel coordinates, subsampled to at most `limit` points.
fn ink_points(mask: &Mask, limit: usize) -> Vec<(f64, f64)> {
    let total = mask.count();
    let step = total.div_ceil(limit.max(1)).max(1);
    let mut pts = Vec::with_capacity(total / step + 1);
    let mut i = 0usize;
    for y in 0..mask.height {
        for x in 0..mask.width {
            if mask.get(x, y) != 0 {
                if i % step == 0 {
                    pts.push((x as f64, y as f64));
                }
                i += 1;
            }
        }
    }
    pts
}

/// The shear slope (tan of the skew angle) within +-5 degrees that makes horizontal lines
/// sharpest: maximises the sum of squared row counts of `y - slope * x`.
pub(crate) fn estimate_skew(mask: &Mask) -> f64 {
    let pts = ink_points(mask, 150_000);
    if pts.len() < 50 {
        return 0.0;
    }
    let h = mask.height as f64;
    let w = mask.width as f64;
    let score = |slope: f64| -> f64 {
        let offset = (w * slope.abs()).ceil() + 1.0;
        let n = (h + 2.0 * offset) as usize + 1;
        let mut bins = vec![0f64; n];
        for &(x, y) in &pts {
            let yy = y - slope * (x - w / 2.0) + offset;
            let i = yy.round();
            if i >= 0.0 && (i as usize) < n {
                bins[i as usize] += 1.0;
            }
        }
        bins.iter().map(|v| v * v).sum()
    };
    let mut best = (0.0f64, score(0.0));
    let mut step = 0.5f64.to_radians();
    let mut lo = -5f64.to_radians();
    let mut hi = 5f64.to_radians();
    for _ in 0..3 {
        let mut a = lo;
        while a <= hi + 1e-12 {
            let s = score(a.tan());
            if s > best.1 * (1.0 + 1e-9) {
                best = (a, s);
            }
            a += step;
        }
        lo = best.0 - step;
        hi = best.0 + step;
        step /= 5.0;
    }
    best.0.tan()
}

/// Ink above and below the x-height core of the text lines in a mask whose lines are
/// horizontal, after undoing the shear `slope`.
fn ascender_balance(mask: &Mask, slope: f64) -> (f64, f64) {
    let (w, h) = (mask.width, mask.height);
    if w == 0 || h == 0 {
        return (0.0, 0.0);
    }
    let strips = 4usize.min(w);
    let (mut above, mut below) = (0.0, 0.0);
    for s in 0..strips {
        let x0 = s * w / strips;
        let x1 = (s + 1) * w / strips;
        let mut profile = vec![0f64; h];
        for y in 0..h {
            for x in x0..x1 {
                if mask.data[y * w + x] != 0 {
                    let yy = y as f64 - slope * (x as f64 - w as f64 / 2.0);
                    let i = yy.round();
                    if i >= 0.0 && (i as usize) < h {
                        profile[i as usize] += 1.0;
                    }
                }
            }
        }
        let threshold = ((x1 - x0) as f64 * 0.004).max(1.0);
        let mut y = 0;
        while y < h {
            if profile[y] < threshold {
                y += 1;
                continue;
            }
            let start = y;
            while y < h && profile[y] >= threshold {
                y += 1;
            }
            let run = &profile[start..y];
            if run.len() < 5 {
                continue;
            }
            let peak = run.iter().cloned().fold(0.0, f64::max);
            let core_first = run.iter().position(|&v| v >= 0.5 * peak).unwrap_or(0);
            let core_last = run
                .iter()
                .rposition(|&v| v >= 0.5 * peak)
                .unwrap_or(run.len() - 1);
            let core_height = core_last + 1 - core_first;
            // A run much taller than its core is several touching lines or a drawing; a run
            // with no margin around the core is a rule or a row of dots: neither says much.
            if run.len() > 4 * core_height.max(1) + 8 {
                continue;
            }
            above += run[..core_first].iter().sum::<f64>();
            below += run[core_last + 1..].iter().sum::<f64>();
        }
    }
    (above, below)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degrees_round_trip_through_serde() {
        for o in Orientation::ALL {
            let json = serde_json::to_string(&o).unwrap_or_default();
            assert_eq!(json, o.degrees().to_string());
            let back: Orientation = serde_json::from_str(&json).unwrap_or_default();
            assert_eq!(back, o);
        }
        assert!(serde_json::from_str::<Orientation>("45").is_err());
        assert_eq!(Orientation::from_degrees(-90), Some(Orientation::Left));
        assert_eq!(Orientation::Right.upright_turns(), 3);
    }
}
