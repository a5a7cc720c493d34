//! Splitting added ink into lines of writing.
//!
//! The ink's points are taken in the clean page's frame, where the page is upright and its
//! ruled lines horizontal, whatever way the work page was scanned. Handwriting slopes a little,
//! so the slope is found first: the shear within ±3.4 degrees whose row profile is sharpest (the
//! largest sum of squared row counts). Along that slope the profile has a hump per line of
//! writing. Humps are the runs above 2 % of the highest; a run holding two lines whose
//! ascenders and descenders touch is split at a valley deeper than a third of the lower of the
//! two humps beside it; a low run (under 40 % of the median run's height: the dot of an i, an
//! accent), a nearly empty one (under 3 % of the largest run's ink: a stray mark) or a minor one
//! close to another (under 20 % of the ink, nearer than 35 % of the median height: tails of
//! letters cut off below a ruled line, whose print explains the ink over it) joins the nearest
//! line. A short line of writing keeps a line's height and its distance, so it stays a line. Each point then belongs to the line whose run holds it, or to the
//! nearest one.

/// Height of a profile bin, in pixels of the clean page.
const BIN_PX: f64 = 2.0;
/// Rows below this share of the highest bin are gaps between lines (a short line of writing
/// under long ones still rises above it).
const GAP_LEVEL: f64 = 0.02;
/// A valley this deep (relative to the lower hump beside it) splits a run.
const VALLEY: f64 = 0.35;
/// A line needs at least this many bins of height.
const MIN_LINE_BINS: usize = 4;
/// Runs lower than this share of the median run's height join a neighbour (dots, accents)...
const LOW_RUN: f64 = 0.4;
/// ...and so do runs holding less than this share of the largest run's ink (a stray mark; a
/// short line of writing, `x = 5`, holds much more)...
const SMALL_RUN: f64 = 0.03;
/// ...and runs holding less than this share of the largest run's ink that lie close to another
/// run (the tails of letters cut off below a ruled line, which explains the ink over it)...
const MINOR_RUN: f64 = 0.2;
/// ...closer than this share of the median run's height.
const NEAR_RUN: f64 = 0.35;

/// Groups points (clean-page pixels, y down) into lines of writing: the indices of each line's
/// points, lines from top to bottom.
pub(crate) fn split_lines(points: &[(f64, f64)]) -> Vec<Vec<usize>> {
    if points.is_empty() {
        return Vec::new();
    }
    let n = points.len() as f64;
    let mid = points.iter().map(|p| p.0).sum::<f64>() / n;
    let top = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let bottom = points.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let half_width = points.iter().map(|p| (p.0 - mid).abs()).fold(0.0, f64::max);
    // Sheared rows: y' = y - slope (x - mid), kept inside [origin, origin + bins * BIN_PX).
    let max_slope = 0.06;
    let origin = top - max_slope * half_width - BIN_PX;
    let bins = (((bottom - top) + 2.0 * max_slope * half_width) / BIN_PX).ceil() as usize + 3;
    let profile_at = |slope: f64| -> Vec<f64> {
        let mut p = vec![0f64; bins];
        for &(x, y) in points {
            let b = ((y - slope * (x - mid) - origin) / BIN_PX).floor();
            if b >= 0.0 && (b as usize) < bins {
                p[b as usize] += 1.0;
            }
        }
        p
    };
    let mut best = (0.0f64, f64::NEG_INFINITY);
    for k in -12i32..=12 {
        let slope = f64::from(k) * 0.005;
        let score: f64 = profile_at(slope).iter().map(|v| v * v).sum();
        // Ties go to the smaller slope.
        if score > best.1 * (1.0 + 1e-9) || (score >= best.1 && slope.abs() < best.0.abs()) {
            best = (slope, score);
        }
    }
    let slope = best.0;
    let raw = profile_at(slope);
    let smooth: Vec<f64> = (0..bins)
        .map(|i| {
            let (a, b) = (i.saturating_sub(1), (i + 2).min(bins));
            raw[a..b].iter().sum::<f64>() / (b - a) as f64
        })
        .collect();
    let peak = smooth.iter().cloned().fold(0.0, f64::max);
    if peak <= 0.0 {
        return vec![(0..points.len()).collect()];
    }
    // Runs above the gap level.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < bins {
        if smooth[i] <= GAP_LEVEL * peak {
            i += 1;
            continue;
        }
        let start = i;
        while i < bins && smooth[i] > GAP_LEVEL * peak {
            i += 1;
        }
        runs.push((start, i));
    }
    // Split runs holding more than one line.
    let mut split = Vec::new();
    let mut stack: Vec<(usize, usize)> = runs.into_iter().rev().collect();
    while let Some((a, b)) = stack.pop() {
        match valley(&smooth, a, b) {
            Some(m) => {
                stack.push((m, b));
                stack.push((a, m));
            }
            None => split.push((a, b)),
        }
    }
    // Small runs join the nearest run.
    let mass = |r: &(usize, usize)| raw[r.0..r.1].iter().sum::<f64>();
    loop {
        if split.len() <= 1 {
            break;
        }
        let largest = split.iter().map(mass).fold(0.0, f64::max);
        let mut heights: Vec<usize> = split.iter().map(|r| r.1 - r.0).collect();
        heights.sort_unstable();
        let median = heights[heights.len() / 2] as f64;
        let low = |r: &(usize, usize)| {
            let height = r.1 - r.0;
            height < MIN_LINE_BINS || (height as f64) < LOW_RUN * median
        };
        let gap = |k: usize| {
            let before = k
                .checked_sub(1)
                .map_or(usize::MAX, |j| split[k].0 - split[j].1);
            let after = split.get(k + 1).map_or(usize::MAX, |n| n.0 - split[k].1);
            before.min(after)
        };
        let joins = |k: usize| {
            let m = mass(&split[k]);
            low(&split[k])
                || m < SMALL_RUN * largest
                || (m < MINOR_RUN * largest && (gap(k) as f64) <= (NEAR_RUN * median).max(3.0))
        };
        let Some(k) = (0..split.len())
            .filter(|&k| joins(k))
            .min_by(|&a, &b| mass(&split[a]).total_cmp(&mass(&split[b])))
        else {
            break;
        };
        let gap_before = k.checked_sub(1).map(|j| split[k].0 - split[j].1);
        let gap_after = (k + 1 < split.len()).then(|| split[k + 1].0 - split[k].1);
        let into = match (gap_before, gap_after) {
            (Some(a), Some(b)) => {
                if a <= b {
                    k - 1
                } else {
                    k + 1
                }
            }
            (Some(_), None) => k - 1,
            _ => k + 1,
        };
        let (lo, hi) = (k.min(into), k.max(into));
        split[lo] = (split[lo].0, split[hi].1);
        split.remove(hi);
    }
    // Each point to the run holding its row, or the nearest run.
    let mut lines = vec![Vec::new(); split.len()];
    for (idx, &(x, y)) in points.iter().enumerate() {
        let b = (y - slope * (x - mid) - origin) / BIN_PX;
        let k = (0..split.len())
            .min_by(|&p, &q| {
                let d = |r: (usize, usize)| {
                    if b < r.0 as f64 {
                        r.0 as f64 - b
                    } else if b >= r.1 as f64 {
                        b - r.1 as f64 + 1.0
                    } else {
                        0.0
                    }
                };
                d(split[p]).total_cmp(&d(split[q]))
            })
            .unwrap_or(0);
        lines[k].push(idx);
    }
    lines.retain(|l| !l.is_empty());
    lines
}

/// The bin at which the run `[a, b)` of `p` is best split in two lines, if it holds two.
fn valley(p: &[f64], a: usize, b: usize) -> Option<usize> {
    if b - a < 2 * MIN_LINE_BINS + 1 {
        return None;
    }
    let mut best: Option<(f64, usize)> = None;
    for m in a + MIN_LINE_BINS..b - MIN_LINE_BINS {
        let left = p[a..m].iter().cloned().fold(0.0, f64::max);
        let right = p[m + 1..b].iter().cloned().fold(0.0, f64::max);
        let lower = left.min(right);
        if lower <= 0.0 {
            continue;
        }
        let ratio = p[m] / lower;
        if ratio < VALLEY && best.is_none_or(|bb| ratio < bb.0) {
            best = Some((ratio, m));
        }
    }
    best.map(|b| b.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points of `lines` lines of writing-like strokes, `pitch` apart, sloping by `slope`:
    /// letters of x-height 12 with ascenders and descenders, and an i's dot now and then.
    fn writing(lines: usize, pitch: f64, slope: f64, seed: u64) -> (Vec<(f64, f64)>, Vec<usize>) {
        let mut state = seed;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % 1000) as f64 / 1000.0
        };
        let mut pts = Vec::new();
        let mut truth = Vec::new();
        for l in 0..lines {
            let baseline = 100.0 + pitch * l as f64;
            let length = 250.0 + 300.0 * next();
            let mut x = 80.0 + 20.0 * next();
            while x < 80.0 + length {
                // A letter: its x-height body, sometimes an ascender or a descender.
                let (mut top, mut bottom) = (baseline - 12.0, baseline);
                let kind = next();
                if kind < 0.3 {
                    top = baseline - 22.0;
                } else if kind < 0.45 {
                    bottom = baseline + 9.0;
                }
                let y_shift = slope * (x - 80.0);
                let mut y = top;
                while y <= bottom {
                    pts.push((x, y + y_shift));
                    pts.push((x + 1.0, y + y_shift));
                    truth.push(l);
                    truth.push(l);
                    y += 1.0;
                }
                if kind > 0.9 {
                    // A dot above the letter.
                    pts.push((x, baseline - 18.0 + y_shift));
                    truth.push(l);
                }
                x += 6.0 + 6.0 * next();
            }
        }
        (pts, truth)
    }

    #[test]
    fn two_to_five_lines_are_told_apart() {
        for lines in 2..=5 {
            for (slope, seed) in [(0.0, 1), (0.02, 2), (-0.025, 3), (0.01, 4)] {
                let (pts, truth) = writing(lines, 47.0, slope, seed + lines as u64);
                let found = split_lines(&pts);
                assert_eq!(found.len(), lines, "{lines} lines, slope {slope}");
                for (k, line) in found.iter().enumerate() {
                    assert!(
                        line.iter().all(|&i| truth[i] == k),
                        "{lines} lines, slope {slope}: line {k}"
                    );
                }
            }
        }
    }

    #[test]
    fn touching_lines_are_split_at_the_valley() {
        // Lines 30 px apart: descenders of one reach the ascenders of the next.
        let (pts, truth) = writing(3, 30.0, 0.0, 9);
        let truth = &truth;
        let found = split_lines(&pts);
        assert_eq!(found.len(), 3);
        let wrong = found
            .iter()
            .enumerate()
            .flat_map(|(k, l)| l.iter().filter(move |&&i| truth[i] != k))
            .count();
        // Descenders reaching below the valley go to the next line: a few percent at most.
        assert!(wrong * 12 < pts.len(), "{wrong} of {} misplaced", pts.len());
    }

    #[test]
    fn a_short_last_line_is_a_line() {
        // Four long lines and a short one (x = 5) under them.
        let (mut pts, mut truth) = writing(4, 47.0, 0.0, 12);
        let baseline = 100.0 + 47.0 * 4.0;
        // An x, an equals sign's bars and a digit as tall as a capital.
        for (x, low, high) in [(85.0, 0, 12), (97.0, 3, 5), (97.0, 7, 9), (109.0, 0, 22)] {
            for y in low..high {
                for dx in 0..3 {
                    pts.push((x + f64::from(dx), baseline - f64::from(y)));
                    truth.push(4);
                }
            }
        }
        let found = split_lines(&pts);
        assert_eq!(found.len(), 5);
        assert!(found[4].iter().all(|&i| truth[i] == 4));
    }

    #[test]
    fn tails_cut_off_below_a_rule_stay_with_their_line() {
        // Two lines; under the first, a ruled line's band (explained by print) cuts the tails
        // of its long tails off: what is left of them, 15 px of it, lies apart below.
        let (mut pts, mut truth): (Vec<_>, Vec<_>) = {
            let (all, t) = writing(2, 60.0, 0.0, 21);
            all.into_iter()
                .zip(t)
                .filter(|(p, _)| !(p.1 > 100.0 && p.1 < 112.0))
                .unzip()
        };
        for k in 0..6 {
            let x = 100.0 + 40.0 * f64::from(k);
            for y in 112..127 {
                pts.push((x, f64::from(y)));
                pts.push((x + 1.0, f64::from(y)));
                truth.push(0);
                truth.push(0);
            }
        }
        let found = split_lines(&pts);
        assert_eq!(found.len(), 2);
        assert!(found[0].iter().all(|&i| truth[i] == 0));
    }

    #[test]
    fn one_line_or_nothing() {
        let (pts, _) = writing(1, 47.0, 0.01, 5);
        assert_eq!(split_lines(&pts).len(), 1);
        assert!(split_lines(&[]).is_empty());
        assert_eq!(split_lines(&[(3.0, 4.0)]), vec![vec![0]]);
    }
}
