//! What a scanned work page adds to the clean rendered page of the same paper page.
//!
//! Both pages are brought to a working resolution (the clean page's long side at 1754 pixels,
//! 150 dpi on A4; the work page scaled by the same rule, keeping its shape). Then:
//!
//! 1. **Alignment** (module `align`): a map from the clean page to the work page, fitted to
//!    places of the print found on both (virtual fiducials matched by normalised
//!    cross-correlation, coarse to fine, with a seeded RANSAC consensus), as a similarity
//!    (flatbed scans), an affine map or a full perspective map (photos), whichever is simplest
//!    within a quarter pixel of the best. A fit that cannot hold (too few or too clustered
//!    matches, implausible scale, stretch or turn, a folded outline, too much perspective, a
//!    residual over 3 px) is refused: `aligned` is false and `note` says why. A clean page with
//!    almost no print is aligned by the page frame (`fit: frame`).
//! 2. **Flattening**: the work page divided by its own background (the brightest level within
//!    about 56 px, from the eighth-size image, interpolated back, never below 55 % of the paper
//!    level so that a large dark area stays ink), so grey or uneven paper, uneven light and a
//!    scanner's shading become white and ink keeps its contrast.
//! 3. **Ink on the work page**: flattened pixels darker than 200 of 255 are dark ink, darker
//!    than 215 light ink; on a grainy page both levels drop to stay 5.5 and 4 standard
//!    deviations of the paper's grain below the paper. A mark needs at least 4 dark pixels, so
//!    faint pencil counts and noise of σ 10 never does.
//! 4. **Explained by print**: a work ink pixel whose place on the clean page lies within a
//!    tolerance of the clean page's ink (any shade below 230, from a distance transform) is
//!    print; the tolerance is 2 px plus twice the fit's residual, at least 3 px (0.5 mm).
//!    Everything outside the page's outline on the work image, and a band of 1.5 % of the page
//!    along its edges, is ignored (scanner bed, desk, shadows, the lid's edge).
//! 5. **Writing size**: specks under 6 px, hairlines (at most 2 px thick, at least 12 px long)
//!    and shadows of print (marks with fewer than a quarter of their pixels more than 3 px beyond
//!    the tolerance from print: an edge of print the fit missed by a little, on a curled page)
//!    are dropped; strokes closer than 1.2 % of the page's long side merge into regions; regions
//!    under 25 px are dropped.
//! 6. **Checks after the fit**: if less than 75 % of the clean page's dark ink lands within the
//!    tolerance of work ink, the pages differ (another page, a damaged scan); if added ink covers
//!    more than 25 % of the page, the fit is wrong. Either way `aligned` is false.
//!
//! Regions are reported in the work page's displayed coordinates, where a person sees the
//! writing. The map is reported as a [`PageTransform`] between normalised coordinates, so
//! callers can carry answer spaces and other boxes of the clean page onto the work page
//! ([`Comparison::to_work`]) and back ([`Comparison::to_clean`]). [`added_ink`] recomputes the
//! added ink from a stored comparison without aligning again, and [`AddedInk::lines`] splits it
//! into lines of writing.

use image::GrayImage;
use serde::{Deserialize, Serialize};

use crate::align::{self, LEVELS};
use crate::geometry::NormBox;
use crate::homography::{Homography, Model};
use crate::orientation::Orientation;
use crate::pixels::Mask;
use crate::transform::{FitKind, PageTransform};

/// What a scanned page adds to its clean reference page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// Whether the work page could be aligned with the reference. When false, the other
    /// figures are empty and `note` says why.
    pub aligned: bool,
    /// How the work page's content is turned relative to the reference (clockwise).
    pub rotation: Orientation,
    /// Residual rotation of the work page after the quarter turn, in degrees clockwise (at the
    /// page's centre, for a perspective map).
    pub skew_degrees: f32,
    /// Scale of the work page relative to the reference (1 = same size), mean of both axes.
    pub scale: f32,
    /// Share of the reference's dark ink that the alignment puts on work ink (0..1).
    pub coverage: f32,
    /// Added ink as a fraction of the page area.
    pub added_fraction: f32,
    /// Regions of added ink, in the work page's normalized displayed coordinates.
    pub added_regions: Vec<NormBox>,
    /// What was done, and why alignment failed when it did.
    pub note: String,
    /// How the transform was found: `none` when no fit could be made, `legacy` in comparisons
    /// stored before it was reported. A fit refused by the checks after it (coverage, added ink)
    /// keeps its kind, without a transform.
    #[serde(default)]
    pub fit: FitKind,
    /// Root-mean-square distance between where the transform puts the matched places of the
    /// print and where they were found, in pixels of the clean page at the working resolution
    /// (long side 1754 px, 150 dpi on A4). 0 when unknown.
    #[serde(default)]
    pub residual_px: f32,
    /// The same residual as a share of the clean page's long side.
    #[serde(default)]
    pub residual: f32,
    /// How many places of the print the transform rests on.
    #[serde(default)]
    pub matches: u32,
    /// The map from clean-page normalised coordinates to work-page normalised displayed
    /// coordinates; `None` when the pages were not aligned, and in comparisons stored before it
    /// was reported.
    #[serde(default)]
    pub transform: Option<PageTransform>,
}

impl Comparison {
    /// A box of the clean page (an answer space, a model answer's place) where it lies on the
    /// work page: the bounding box of its mapped corners. `None` when the pages were not aligned
    /// or no transform was recorded.
    pub fn to_work(&self, clean: &NormBox) -> Option<NormBox> {
        self.transform
            .filter(|_| self.aligned)
            .and_then(|t| t.to_work(clean))
    }

    /// A box of the work page (a region of added ink) where it lies on the clean page.
    pub fn to_clean(&self, work: &NormBox) -> Option<NormBox> {
        self.transform
            .filter(|_| self.aligned)
            .and_then(|t| t.to_clean(work))
    }

    fn failed(note: String) -> Comparison {
        Comparison {
            aligned: false,
            rotation: Orientation::Up,
            skew_degrees: 0.0,
            scale: 1.0,
            coverage: 0.0,
            added_fraction: 0.0,
            added_regions: Vec::new(),
            note,
            fit: FitKind::None,
            residual_px: 0.0,
            residual: 0.0,
            matches: 0,
            transform: None,
        }
    }
}

/// Long side of the working rasters.
const WORK_LONG_SIDE: u32 = 1754;
/// The background (paper in shade, uneven light) is taken to be at least this share of the
/// page's paper level.
const DARKEST_BACKGROUND: f32 = 0.55;
/// Flattened work pixels darker than this (or less, on a noisy page) are ink.
const INK_LEVEL: u8 = 200;
/// Flattened work pixels darker than this (or less, on a noisy page) are ink when they touch
/// ink darker than the ink level (the light edges of strokes, faint pencil).
const WEAK_LEVEL: u8 = 215;
/// A mark needs this many pixels darker than the ink level.
const MIN_STRONG_PX: usize = 4;
/// Flattened work pixels darker than this count as ink when checking the fit's coverage.
const COVER_LEVEL: u8 = 200;
/// Clean-page pixels darker than this are print that explains work ink.
const PRINT_LEVEL: u8 = 230;
/// Clean-page pixels darker than this are the print whose coverage is checked.
const DARK_LEVEL: u8 = 128;
/// Least tolerance around print, in clean-page pixels (about 0.5 mm on A4).
const MIN_TOLERANCE_PX: f64 = 3.0;
/// Band along the page's edges that is ignored, as a share of its long side.
const EDGE_BAND: f64 = 0.015;
/// Added components smaller than this (working pixels) are scan noise.
const MIN_SPECK_PX: usize = 6;
/// Side of the blocks on which strokes are merged into regions, in working pixels.
const REGION_BLOCK: usize = 4;
/// Regions with fewer added pixels than this are dropped.
const MIN_REGION_PX: usize = 25;
/// Below this coverage of the reference's dark ink, the pages do not match.
const MIN_COVERAGE: f64 = 0.75;
/// Above this share of the page added, the fit is wrong.
const MAX_ADDED: f64 = 0.25;
/// A clean page with fewer dark pixels than this is aligned by its frame.
const BLANK_PAGE_PX: usize = 200;

/// Aligns `work` (a scanned page, displayed orientation) with `reference` (the clean rendered
/// page) and reports the ink the work adds.
pub fn compare(work: &GrayImage, reference: &GrayImage) -> Comparison {
    compare_with_ink(work, reference).0
}

/// [`compare`], also giving the added ink itself when the pages aligned (to split it into
/// lines with [`AddedInk::lines`], or to measure it in a box with [`AddedInk::share_in`]).
pub fn compare_with_ink(work: &GrayImage, reference: &GrayImage) -> (Comparison, Option<AddedInk>) {
    compare_with_ink_except(work, reference, &[])
}

/// [`compare_with_ink`], with parts of the reference (normalized clean-page boxes) left out of
/// the share of its ink the work page must carry: a page's code differs from copy to copy and is
/// what a sticker or a tear takes away, and on a page with little print it holds much of the ink.
/// The boxes still take part in the alignment.
pub fn compare_with_ink_except(
    work: &GrayImage,
    reference: &GrayImage,
    except: &[NormBox],
) -> (Comparison, Option<AddedInk>) {
    if work.width() < 16 || work.height() < 16 || reference.width() < 16 || reference.height() < 16
    {
        return (Comparison::failed("page too small to compare".into()), None);
    }
    let clean = working(reference);
    let page = working(work);
    let clean_size = (f64::from(clean.width()), f64::from(clean.height()));
    let work_size = (f64::from(page.width()), f64::from(page.height()));
    let clean_pyramid = align::pyramid(&clean);
    let work_pyramid = align::pyramid(&page);
    let dark = clean.as_raw().iter().filter(|&&v| v < DARK_LEVEL).count();

    let mut note = String::new();
    let (map, fit, rms, matches) = if dark < BLANK_PAGE_PX {
        note.push_str("reference page is nearly blank; aligned by the page frame. ");
        let frame = Homography::scaling(work_size.0 / clean_size.0, work_size.1 / clean_size.1);
        (frame, FitKind::Frame, 0.0, 0)
    } else {
        match align::align(&clean_pyramid, &work_pyramid) {
            Ok(a) => {
                let fit = match a.model {
                    Model::Similarity => FitKind::Similarity,
                    Model::Affine => FitKind::Affine,
                    Model::Homography => FitKind::Homography,
                };
                (a.map, fit, a.rms, a.matches)
            }
            Err(why) => {
                return (Comparison::failed(format!("alignment failed: {why}")), None);
            }
        }
    };
    let (angle, sx, sy) = align::pose(&map, clean_size).unwrap_or((0.0, 1.0, 1.0));
    let turns = (angle / 90.0).round();
    let rotation = Orientation::from_quarter_turns((turns as i64).rem_euclid(4) as u32);
    let skew = angle - turns * 90.0;
    let scale = (sx * sy).sqrt();
    let transform = PageTransform::from_homography(
        &Homography::scaling(1.0 / work_size.0, 1.0 / work_size.1)
            .after(&map)
            .after(&Homography::scaling(clean_size.0, clean_size.1)),
    );
    let mut result = Comparison {
        aligned: false,
        rotation,
        skew_degrees: skew as f32,
        scale: scale as f32,
        coverage: 0.0,
        added_fraction: 0.0,
        added_regions: Vec::new(),
        note: String::new(),
        fit,
        residual_px: rms as f32,
        residual: (rms / clean_size.0.max(clean_size.1)) as f32,
        matches: u32::try_from(matches).unwrap_or(u32::MAX),
        transform: Some(transform),
    };
    let Some(to_clean) = map.inverse() else {
        result.transform = None;
        result.note = "alignment failed: degenerate transform".into();
        return (result, None);
    };

    let flat = flatten(&work_pyramid[0], &work_pyramid[LEVELS]);
    let tolerance = tolerance_for(rms);
    let coverage = if fit == FitKind::Frame {
        1.0
    } else {
        coverage_of(&clean, &flat, &map, tolerance, except)
    };
    result.coverage = coverage as f32;
    if coverage < MIN_COVERAGE {
        result.note = format!(
            "alignment failed: only {:.0}% of the reference's ink matches the work page (different page, or heavily damaged scan)",
            coverage * 100.0
        );
        result.transform = None;
        return (result, None);
    }
    let ink = AddedInk::find(&flat, &clean, to_clean, tolerance);
    let page_area = quad_area(&map, clean_size).max(1.0);
    let added_fraction = ink.mask.count() as f64 / page_area;
    if added_fraction > MAX_ADDED {
        result.note = format!(
            "alignment failed: {:.0}% of the page would be added ink, so the fit cannot be right",
            added_fraction * 100.0
        );
        result.transform = None;
        return (result, None);
    }
    result.aligned = true;
    result.added_fraction = added_fraction as f32;
    result.added_regions = ink.regions();
    note.push_str(&format!(
        "{} fit on {matches} places of the print, residual {rms:.2} px; turned {} degrees, skew {skew:.2} degrees, scale {scale:.3}, {:.0}% of reference ink matched",
        match fit {
            FitKind::Frame => "frame",
            FitKind::Similarity => "similarity",
            FitKind::Affine => "affine",
            FitKind::Homography => "perspective",
            FitKind::Legacy | FitKind::None => "no",
        },
        rotation.degrees(),
        coverage * 100.0
    ));
    result.note = note;
    (result, Some(ink))
}

/// The added ink of a stored comparison, found again from the two pages with its transform
/// (no new alignment): `None` when the comparison was not aligned or recorded no transform.
pub fn added_ink(
    work: &GrayImage,
    reference: &GrayImage,
    comparison: &Comparison,
) -> Option<AddedInk> {
    let transform = comparison.transform.filter(|_| comparison.aligned)?;
    if work.width() < 16 || work.height() < 16 || reference.width() < 16 || reference.height() < 16
    {
        return None;
    }
    let clean = working(reference);
    let page = working(work);
    let clean_size = (f64::from(clean.width()), f64::from(clean.height()));
    let work_size = (f64::from(page.width()), f64::from(page.height()));
    let map = Homography::scaling(work_size.0, work_size.1)
        .after(&transform.homography())
        .after(&Homography::scaling(1.0 / clean_size.0, 1.0 / clean_size.1));
    let to_clean = map.inverse()?;
    let small = align::pyramid(&page).pop()?;
    let flat = flatten(&page, &small);
    Some(AddedInk::find(
        &flat,
        &clean,
        to_clean,
        tolerance_for(f64::from(comparison.residual_px)),
    ))
}

/// The ink a student added to a page, in the work page's pixels at the working resolution.
#[derive(Debug, Clone)]
pub struct AddedInk {
    mask: Mask,
    /// Work-page pixels to clean-page pixels (working resolutions).
    to_clean: Homography,
}

impl AddedInk {
    fn find(flat: &GrayImage, clean: &GrayImage, to_clean: Homography, tolerance: f64) -> AddedInk {
        let (w, h) = (flat.width() as usize, flat.height() as usize);
        let (cw, ch) = (clean.width() as usize, clean.height() as usize);
        let distance = distance_to_print(clean);
        let margin = EDGE_BAND * cw.max(ch) as f64;
        let (lo_x, hi_x) = (margin, cw as f64 - margin);
        let (lo_y, hi_y) = (margin, ch as f64 - margin);
        // Distances are in thirds of a pixel.
        let limit = (tolerance * 3.0).round() as i16;
        let px = flat.as_raw();
        let (weak, strong) = ink_levels(px);
        let mut mask = Mask::new(w, h);
        for y in 0..h {
            for x in 0..w {
                let level = px[y * w + x];
                if level >= weak {
                    continue;
                }
                let Some((u, v)) = to_clean.apply(x as f64 + 0.5, y as f64 + 0.5) else {
                    continue;
                };
                if !(u >= lo_x && u < hi_x && v >= lo_y && v < hi_y) {
                    continue;
                }
                let d = distance[v as usize * cw + u as usize];
                if d > limit {
                    let mut mark = INK;
                    if level < strong {
                        mark |= DARK;
                    }
                    if d > limit + SHADOW_PX * 3 {
                        mark |= CLEAR;
                    }
                    mask.data[y * w + x] = mark;
                }
            }
        }
        keep_marks(&mut mask);
        AddedInk { mask, to_clean }
    }

    /// Share of the page's pixels (at the working resolution) that are added ink.
    pub fn fraction(&self) -> f64 {
        self.mask.count() as f64 / (self.mask.width * self.mask.height).max(1) as f64
    }

    /// Share of a box of the work page (normalised displayed coordinates) that is added ink.
    pub fn share_in(&self, region: &NormBox) -> f64 {
        let (x0, y0, x1, y1) = self.pixel_rect(region);
        let area = (x1 - x0) * (y1 - y0);
        if area == 0 {
            return 0.0;
        }
        let mut n = 0usize;
        for y in y0..y1 {
            n += self.mask.data[y * self.mask.width + x0..y * self.mask.width + x1]
                .iter()
                .filter(|&&v| v != 0)
                .count();
        }
        n as f64 / area as f64
    }

    /// The added ink of every region of `comparison` split into lines of writing
    /// ([`AddedInk::lines`]), all of them in the order the clean page reads: by the height of
    /// their middles on the clean page, then from the left.
    pub fn lines_of(&self, comparison: &Comparison) -> Vec<NormBox> {
        let mut lines: Vec<((f64, f64), NormBox)> = comparison
            .added_regions
            .iter()
            .flat_map(|region| self.lines(region))
            .map(|line| {
                let at = comparison.to_clean(&line).unwrap_or(line);
                ((at.y + at.height / 2.0, at.x), line)
            })
            .collect();
        lines.sort_by(|a, b| a.0.0.total_cmp(&b.0.0).then(a.0.1.total_cmp(&b.0.1)));
        lines.into_iter().map(|(_, line)| line).collect()
    }

    /// The added ink inside `region` (the work page's normalised displayed coordinates) split
    /// into lines of writing: one box per line, in the work page's normalised displayed
    /// coordinates, from the first line to the last as the page reads (top to bottom on the
    /// clean page, whichever way the work page was turned). Lines are found on the page lined
    /// up with the clean page, and may slope a little (up to about 3 degrees). Empty when there
    /// is no added ink in the region.
    pub fn lines(&self, region: &NormBox) -> Vec<NormBox> {
        let (x0, y0, x1, y1) = self.pixel_rect(region);
        let w = self.mask.width;
        let mut work = Vec::new();
        let mut clean = Vec::new();
        for y in y0..y1 {
            for x in x0..x1 {
                if self.mask.data[y * w + x] == 0 {
                    continue;
                }
                if let Some(p) = self.to_clean.apply(x as f64 + 0.5, y as f64 + 0.5) {
                    work.push((x, y));
                    clean.push(p);
                }
            }
        }
        let (fw, fh) = (w as f64, self.mask.height as f64);
        crate::lines::split_lines(&clean)
            .into_iter()
            .map(|line| {
                let (mut lx, mut ly, mut hx, mut hy) = (usize::MAX, usize::MAX, 0, 0);
                for i in line {
                    let (x, y) = work[i];
                    lx = lx.min(x);
                    ly = ly.min(y);
                    hx = hx.max(x + 1);
                    hy = hy.max(y + 1);
                }
                NormBox::from_pixels(lx as f64, ly as f64, hx as f64, hy as f64, fw, fh)
            })
            .collect()
    }

    /// Regions of added ink: strokes closer than 1.2 % of the page's long side merged, in
    /// normalised displayed coordinates, top to bottom. The merging works on blocks of
    /// [`REGION_BLOCK`] pixels (any added pixel marks its block), dilated and labelled; each
    /// region is the box of the added pixels of its blocks.
    fn regions(&self) -> Vec<NormBox> {
        let (w, h) = (self.mask.width, self.mask.height);
        let b = REGION_BLOCK;
        let (bw, bh) = (w.div_ceil(b), h.div_ceil(b));
        let mut blocks = Mask::new(bw, bh);
        for y in 0..h {
            let row = &self.mask.data[y * w..(y + 1) * w];
            for (x, _) in row.iter().enumerate().filter(|(_, v)| **v != 0) {
                blocks.data[(y / b) * bw + x / b] = 1;
            }
        }
        let merge = ((w.max(h) as f64) * 0.012 / b as f64).round() as usize;
        let grouped = blocks.dilate(merge);
        // Label the merged blocks.
        let mut label = vec![usize::MAX; bw * bh];
        let mut count = 0;
        let mut stack = Vec::new();
        for start in 0..bw * bh {
            if grouped.data[start] == 0 || label[start] != usize::MAX {
                continue;
            }
            label[start] = count;
            stack.push(start);
            while let Some(i) = stack.pop() {
                let (x, y) = (i % bw, i / bw);
                for ny in y.saturating_sub(1)..(y + 2).min(bh) {
                    for nx in x.saturating_sub(1)..(x + 2).min(bw) {
                        let j = ny * bw + nx;
                        if grouped.data[j] != 0 && label[j] == usize::MAX {
                            label[j] = count;
                            stack.push(j);
                        }
                    }
                }
            }
            count += 1;
        }
        // Each region: the box and count of its added pixels.
        let mut boxes = vec![(usize::MAX, usize::MAX, 0usize, 0usize, 0usize); count];
        for y in 0..h {
            let row = &self.mask.data[y * w..(y + 1) * w];
            for (x, _) in row.iter().enumerate().filter(|(_, v)| **v != 0) {
                let l = label[(y / b) * bw + x / b];
                if let Some(r) = boxes.get_mut(l) {
                    *r = (
                        r.0.min(x),
                        r.1.min(y),
                        r.2.max(x + 1),
                        r.3.max(y + 1),
                        r.4 + 1,
                    );
                }
            }
        }
        let mut regions: Vec<NormBox> = boxes
            .into_iter()
            .filter(|r| r.4 >= MIN_REGION_PX)
            .map(|(x0, y0, x1, y1, _)| {
                NormBox::from_pixels(
                    x0 as f64, y0 as f64, x1 as f64, y1 as f64, w as f64, h as f64,
                )
            })
            .collect();
        regions.sort_by(|a, b| a.y.total_cmp(&b.y).then(a.x.total_cmp(&b.x)));
        regions
    }

    /// A normalised box as a pixel rectangle `[x0, x1) × [y0, y1)` clamped to the mask.
    fn pixel_rect(&self, b: &NormBox) -> (usize, usize, usize, usize) {
        let (w, h) = (self.mask.width as f64, self.mask.height as f64);
        let clamp = |v: f64, len: f64| {
            if v.is_finite() {
                v.clamp(0.0, len) as usize
            } else {
                0
            }
        };
        let (x0, x1) = (
            clamp((b.x * w).floor(), w),
            clamp((b.right() * w).ceil(), w),
        );
        let (y0, y1) = (
            clamp((b.y * h).floor(), h),
            clamp((b.bottom() * h).ceil(), h),
        );
        (x0, y0, x1.max(x0), y1.max(y0))
    }
}

/// The weak and strong ink levels of a flattened page: [`WEAK_LEVEL`] and [`INK_LEVEL`], or
/// 4 and 5.5 standard deviations of the paper's grain below the paper when that is lower, so
/// that grain never reaches them.
fn ink_levels(px: &[u8]) -> (u8, u8) {
    // The paper's grain from the lower half of its spread (the upper half is clipped at 255):
    // the median of the paper less its 16th percentile.
    let mut hist = [0usize; 256];
    for &v in px.iter().step_by(3) {
        hist[usize::from(v)] += 1;
    }
    let paper: usize = hist[180..].iter().sum();
    if paper == 0 {
        return (WEAK_LEVEL, INK_LEVEL);
    }
    let at = |share: f64| -> f64 {
        let target = (paper as f64 * share).ceil() as usize;
        let mut acc = 0;
        for (v, n) in hist.iter().enumerate().skip(180) {
            acc += n;
            if acc >= target {
                return v as f64;
            }
        }
        255.0
    };
    let median = at(0.5);
    let sigma = (median - at(0.1587)).max(0.0);
    let weak = (median - 4.0 * sigma).min(f64::from(WEAK_LEVEL)).max(120.0);
    let strong = (median - 5.5 * sigma).min(f64::from(INK_LEVEL)).max(100.0);
    (weak as u8, strong as u8)
}

/// A pixel of added ink in the mask [`keep_marks`] reads.
const INK: u8 = 1;
/// ...darker than the ink level.
const DARK: u8 = 2;
/// ...clear of the print by more than the tolerance and [`SHADOW_PX`].
const CLEAR: u8 = 4;
/// Width of the band beyond the tolerance round print where a mark lying almost wholly in it is
/// the print's edge, misregistered (a curled page, a residual of the fit), in clean-page pixels.
const SHADOW_PX: i16 = 3;

/// Keeps the marks of writing size in a mask of added ink (each pixel [`INK`], perhaps with
/// [`DARK`] and [`CLEAR`]), leaving 0 or 1, 8-connected component by component. Cleared:
/// scan specks and grain (fewer than 6 pixels, or fewer than 4 dark ones); hairlines (at most
/// 2 px thick and at least 12 px long); and shadows of print (fewer than a quarter of the pixels
/// clear of the print: the edge of a printed line or letter that the fit missed by a little
/// more than the tolerance). Writing over or next to print keeps most of its pixels clear of it.
fn keep_marks(mask: &mut Mask) {
    let (w, h) = (mask.width, mask.height);
    let mut seen = vec![false; w * h];
    let mut stack = Vec::new();
    let mut members = Vec::new();
    for start in 0..w * h {
        if mask.data[start] == 0 || seen[start] {
            continue;
        }
        seen[start] = true;
        stack.push(start);
        members.clear();
        let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
        let (mut strong, mut clear) = (0usize, 0usize);
        while let Some(i) = stack.pop() {
            members.push(i);
            let (x, y) = (i % w, i / w);
            (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x + 1), y1.max(y + 1));
            strong += usize::from(mask.data[i] & DARK != 0);
            clear += usize::from(mask.data[i] & CLEAR != 0);
            for ny in y.saturating_sub(1)..(y + 2).min(h) {
                for nx in x.saturating_sub(1)..(x + 2).min(w) {
                    let j = ny * w + nx;
                    if mask.data[j] != 0 && !seen[j] {
                        seen[j] = true;
                        stack.push(j);
                    }
                }
            }
        }
        let (bw, bh) = (x1 - x0, y1 - y0);
        let hairline = bw.min(bh) <= 2 && bw.max(bh) >= 12;
        let shadow = clear * 4 < members.len();
        let keep = members.len() >= MIN_SPECK_PX && strong >= MIN_STRONG_PX && !hairline && !shadow;
        for &i in &members {
            mask.data[i] = u8::from(keep);
        }
    }
}

/// Tolerance around print for a fit with the given residual, in clean-page pixels.
fn tolerance_for(rms: f64) -> f64 {
    (2.0 + 2.0 * rms.max(0.0)).clamp(MIN_TOLERANCE_PX, 9.0)
}

/// The image scaled (keeping its shape) so its long side is [`WORK_LONG_SIDE`].
fn working(img: &GrayImage) -> GrayImage {
    let k = f64::from(WORK_LONG_SIDE) / f64::from(img.width().max(img.height()));
    let w = ((f64::from(img.width()) * k).round() as u32).max(16);
    let h = ((f64::from(img.height()) * k).round() as u32).max(16);
    resize(img, w, h)
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

/// The page divided by its background: `255 · I / background`, clamped. The background is the
/// brightest level within 3 pixels of the `small` image (the page shrunk 2^LEVELS times, so
/// about 56 px of the page), interpolated bilinearly, and never darker than
/// [`DARKEST_BACKGROUND`] of the paper (a large dark area is ink, not shade).
fn flatten(img: &GrayImage, small: &GrayImage) -> GrayImage {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let (sw, sh) = (small.width() as usize, small.height() as usize);
    if sw == 0 || sh == 0 {
        return img.clone();
    }
    // The paper: a high percentile of the small image.
    let mut sorted = small.as_raw().clone();
    sorted.sort_unstable();
    let paper = f32::from(sorted[sorted.len() * 19 / 20]);
    let floor = (paper * DARKEST_BACKGROUND).max(24.0);
    // 255 over the background, per small pixel: interpolated, it scales each pixel (the
    // background varies slowly, so this is nearly dividing by the interpolated background).
    let gain: Vec<f32> = max_filter(small.as_raw(), sw, sh, 3)
        .iter()
        .map(|&b| 255.0 / f32::from(b).max(floor))
        .collect();
    let f = f64::from(1u32 << LEVELS);
    let taps = |n: usize, len: usize| -> Vec<(usize, usize, f32)> {
        (0..n)
            .map(|o| {
                let s = ((o as f64 + 0.5) / f - 0.5).clamp(0.0, (len - 1) as f64);
                let i0 = s.floor() as usize;
                let i1 = (i0 + 1).min(len - 1);
                (i0, i1, (s - i0 as f64) as f32)
            })
            .collect()
    };
    let xs = taps(w, sw);
    let ys = taps(h, sh);
    let src = img.as_raw();
    let mut out = vec![0u8; w * h];
    let mut row = vec![0f32; sw];
    for (y, &(y0, y1, ty)) in ys.iter().enumerate() {
        for (x, v) in row.iter_mut().enumerate() {
            *v = gain[y0 * sw + x] * (1.0 - ty) + gain[y1 * sw + x] * ty;
        }
        let line = &src[y * w..(y + 1) * w];
        let dst = &mut out[y * w..(y + 1) * w];
        // One gain per run of 8 pixels (a fraction of a background cell), in 1/256ths.
        for (k, (o, p)) in dst.chunks_mut(8).zip(line.chunks(8)).enumerate() {
            let (x0, x1, tx) = xs[(k * 8 + 4).min(w - 1)];
            let g = ((row[x0] + (row[x1] - row[x0]) * tx) * 256.0).round() as u32;
            for (o, &p) in o.iter_mut().zip(p) {
                *o = ((u32::from(p) * g) >> 8).min(255) as u8;
            }
        }
    }
    GrayImage::from_raw(w as u32, h as u32, out).unwrap_or_else(|| img.clone())
}

/// Largest value within `r` pixels (a square window), separably.
fn max_filter(px: &[u8], w: usize, h: usize, r: usize) -> Vec<u8> {
    let mut tmp = vec![0u8; w * h];
    for y in 0..h {
        for x in 0..w {
            let (a, b) = (x.saturating_sub(r), (x + r + 1).min(w));
            tmp[y * w + x] = px[y * w + a..y * w + b].iter().copied().max().unwrap_or(0);
        }
    }
    let mut out = vec![0u8; w * h];
    for y in 0..h {
        let (a, b) = (y.saturating_sub(r), (y + r + 1).min(h));
        for x in 0..w {
            out[y * w + x] = (a..b).map(|yy| tmp[yy * w + x]).max().unwrap_or(0);
        }
    }
    out
}

/// Chamfer (3-4) distance of every pixel to the nearest print pixel (darker than
/// [`PRINT_LEVEL`]), in thirds of a pixel, capped.
fn distance_to_print(img: &GrayImage) -> Vec<i16> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    const FAR: i16 = 3 * 200;
    let mut d: Vec<i16> = img
        .as_raw()
        .iter()
        .map(|&v| if v < PRINT_LEVEL { 0 } else { FAR })
        .collect();
    if w == 0 || h == 0 {
        return d;
    }
    // Forward: from the row above, then from the left.
    for y in 0..h {
        let (done, rest) = d.split_at_mut(y * w);
        let row = &mut rest[..w];
        if y > 0 {
            take_from(row, &done[(y - 1) * w..y * w]);
        }
        for x in 1..w {
            row[x] = row[x].min(row[x - 1] + 3);
        }
    }
    // Backward: from the row below, then from the right.
    for y in (0..h).rev() {
        let (head, below) = d.split_at_mut((y + 1) * w);
        let row = &mut head[y * w..];
        if y + 1 < h {
            take_from(row, &below[..w]);
        }
        for x in (0..w - 1).rev() {
            row[x] = row[x].min(row[x + 1] + 3);
        }
    }
    d
}

/// One row of a chamfer pass taking distances from the neighbouring row `next` (3 straight
/// down or up, 4 diagonally).
fn take_from(row: &mut [i16], next: &[i16]) {
    let w = row.len().min(next.len());
    if w == 0 {
        return;
    }
    for (v, n) in row.iter_mut().zip(next) {
        *v = (*v).min(n + 3);
    }
    if w > 1 {
        for (v, n) in row[1..].iter_mut().zip(&next[..w - 1]) {
            *v = (*v).min(n + 4);
        }
        for (v, n) in row[..w - 1].iter_mut().zip(&next[1..]) {
            *v = (*v).min(n + 4);
        }
    }
}

/// Share of the clean page's dark ink that `map` puts within `tolerance` of work ink.
fn coverage_of(
    clean: &GrayImage,
    flat: &GrayImage,
    map: &Homography,
    tolerance: f64,
    except: &[NormBox],
) -> f64 {
    let (cw, fw, fh) = (
        clean.width() as usize,
        flat.width() as i64,
        flat.height() as i64,
    );
    let (w, h) = (f64::from(clean.width()), f64::from(clean.height()));
    let left_out = |i: usize| {
        let (x, y) = ((i % cw) as f64 / w, (i / cw) as f64 / h);
        except
            .iter()
            .any(|b| x >= b.x && x < b.x + b.width && y >= b.y && y < b.y + b.height)
    };
    let raw = clean.as_raw();
    let counted = |i: &usize| raw[*i] < DARK_LEVEL && !left_out(*i);
    let mut dark_count = (0..raw.len()).filter(counted).count();
    // Too little print outside the boxes to judge by: the whole page's ink is counted.
    let everything = dark_count < BLANK_PAGE_PX;
    if everything {
        dark_count = raw.iter().filter(|&&v| v < DARK_LEVEL).count();
    }
    if dark_count == 0 {
        return 0.0;
    }
    let step = dark_count.div_ceil(20_000).max(1);
    let dark = (0..raw.len()).filter(|i| raw[*i] < DARK_LEVEL && (everything || !left_out(*i)));
    let r = tolerance.round() as i64;
    let px = flat.as_raw();
    let (mut hits, mut total) = (0usize, 0usize);
    for i in dark.step_by(step) {
        total += 1;
        let (x, y) = ((i % cw) as f64 + 0.5, (i / cw) as f64 + 0.5);
        let Some((u, v)) = map.apply(x, y) else {
            continue;
        };
        let (cx, cy) = (u.floor() as i64, v.floor() as i64);
        let found = (cy - r..=cy + r).any(|yy| {
            yy >= 0
                && yy < fh
                && (cx - r..=cx + r)
                    .any(|xx| xx >= 0 && xx < fw && px[(yy * fw + xx) as usize] < COVER_LEVEL)
        });
        if found {
            hits += 1;
        }
    }
    hits as f64 / total.max(1) as f64
}

/// Area of the clean page's outline on the work page, in work pixels.
fn quad_area(map: &Homography, clean: (f64, f64)) -> f64 {
    let corners = [
        (0.0, 0.0),
        (clean.0, 0.0),
        (clean.0, clean.1),
        (0.0, clean.1),
    ];
    let q: Vec<(f64, f64)> = corners.iter().filter_map(|c| map.apply(c.0, c.1)).collect();
    if q.len() < 4 {
        return 0.0;
    }
    let mut a = 0.0;
    for i in 0..4 {
        a += q[i].0 * q[(i + 1) % 4].1 - q[(i + 1) % 4].0 * q[i].1;
    }
    (a / 2.0).abs()
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Luma;

    #[test]
    fn flattening_removes_paper_tone_and_light_but_keeps_ink() {
        // Paper falling from 240 to 150 across the page, with a dark stroke in the dim part.
        let mut img = GrayImage::from_fn(400, 300, |x, _| {
            Luma([(240.0 - f64::from(x) * 0.225) as u8])
        });
        for y in 100..104 {
            for x in 300..340 {
                let paper = f64::from(img.get_pixel(x, y).0[0]);
                img.put_pixel(x, y, Luma([(paper * 0.3) as u8]));
            }
        }
        let small = align::pyramid(&img).pop().unwrap_or_else(|| img.clone());
        let flat = flatten(&img, &small);
        for x in (10..390).step_by(40) {
            assert!(
                flat.get_pixel(x, 50).0[0] >= 245,
                "paper at {x}: {}",
                flat.get_pixel(x, 50).0[0]
            );
        }
        assert!(flat.get_pixel(320, 102).0[0] < 100);
    }

    #[test]
    fn distances_grow_away_from_print() {
        let mut img = GrayImage::from_pixel(30, 20, Luma([255]));
        img.put_pixel(10, 10, Luma([0]));
        let d = distance_to_print(&img);
        assert_eq!(d[10 * 30 + 10], 0);
        assert_eq!(d[10 * 30 + 13], 9);
        assert_eq!(d[13 * 30 + 13], 12);
        // No print at all: everything is far.
        let blank = distance_to_print(&GrayImage::from_pixel(5, 5, Luma([255])));
        assert!(blank.iter().all(|&v| v == 600));
    }

    #[test]
    fn only_marks_of_writing_size_are_kept() {
        let mut m = Mask::new(60, 40);
        let mut set = |x0: usize, y0: usize, x1: usize, y1: usize, v: u8| {
            for y in y0..y1 {
                for x in x0..x1 {
                    m.data[y * 60 + x] = v;
                }
            }
        };
        let (light, dark) = (INK | CLEAR, INK | DARK | CLEAR);
        set(2, 2, 4, 4, dark); // a speck: 4 dark pixels
        set(10, 2, 20, 8, light); // a light smudge: no dark pixel
        set(2, 20, 40, 22, dark); // a hairline: 2 px thick, 38 long
        set(2, 30, 40, 34, INK | DARK); // the shadow of a printed rule: 4 px thick, near print
        set(45, 28, 58, 38, INK | DARK); // a mark near print...
        set(45, 36, 58, 38, dark); // ...but only a sixth of it clear of the print
        set(30, 2, 36, 10, light); // a stroke: light edges...
        set(32, 4, 34, 8, dark); // ...round a dark core
        keep_marks(&mut m);
        let kept: Vec<usize> = (0..m.data.len()).filter(|&i| m.data[i] != 0).collect();
        assert_eq!(kept.len(), 48);
        assert!(
            kept.iter()
                .all(|&i| (30..36).contains(&(i % 60)) && (2..10).contains(&(i / 60)))
        );
    }

    #[test]
    fn ink_levels_stay_clear_of_the_grain() {
        // Clean paper: the fixed levels.
        assert_eq!(ink_levels(&[255u8; 1000]), (WEAK_LEVEL, INK_LEVEL));
        // Paper with grain of about 12 levels: lower, 4 and 5.5 of them below the paper.
        let mut state = 99u64;
        let grainy: Vec<u8> = (0..30_000)
            .map(|_| {
                let mut sum = 0.0;
                for _ in 0..12 {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                    sum += ((state >> 33) % 1000) as f64 / 1000.0;
                }
                (240.0 + (sum - 6.0) * 12.0).clamp(0.0, 255.0) as u8
            })
            .collect();
        let (weak, strong) = ink_levels(&grainy);
        assert!((185..=196).contains(&weak), "{weak}");
        assert!((165..=178).contains(&strong), "{strong}");
        assert!(grainy.iter().filter(|&&v| v < weak).count() < 10);
    }

    #[test]
    fn tolerance_grows_with_the_residual() {
        assert_eq!(tolerance_for(0.0), 3.0);
        assert_eq!(tolerance_for(1.5), 5.0);
        assert_eq!(tolerance_for(50.0), 9.0);
        assert_eq!(tolerance_for(f64::NAN).max(3.0), 3.0);
    }

    #[test]
    fn old_comparisons_read_without_a_transform() {
        let old = r#"{"aligned":true,"rotation":90,"skewDegrees":1.0,"scale":0.97,"coverage":0.9,
            "addedFraction":0.01,"addedRegions":[{"x":0.1,"y":0.2,"width":0.3,"height":0.1}],
            "note":"turned 90 degrees"}"#;
        let c: Comparison = serde_json::from_str(old).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c.fit, FitKind::Legacy);
        assert_eq!((c.residual_px, c.matches), (0.0, 0));
        assert!(c.transform.is_none());
        assert!(
            c.to_work(&NormBox::from_corners(0.1, 0.1, 0.2, 0.2))
                .is_none()
        );
        // A new one round-trips with its transform.
        let mut new = c.clone();
        new.fit = FitKind::Similarity;
        new.transform = Some(PageTransform::IDENTITY);
        let json = serde_json::to_string(&new).unwrap_or_default();
        assert!(json.contains("\"fit\":\"similarity\"") && json.contains("\"residualPx\""));
        let back: Comparison = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, new);
        let b = NormBox::from_corners(0.1, 0.1, 0.2, 0.2);
        assert_eq!(back.to_work(&b), Some(b));
        assert_eq!(back.to_clean(&b), Some(b));
    }
}
