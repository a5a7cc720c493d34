//! Lining a scanned or photographed page up with its clean page.
//!
//! Both pages come as pyramids of the same working resolution (level 0, about 150 dpi for A4)
//! halved three times (levels 1 to 3). The result is a [`Homography`] from clean-page pixels to
//! work-page pixels (level 0), found from what both pages share, the printed page itself:
//!
//! 1. **Virtual fiducials.** Places of the clean page with strong gradients in two directions
//!    (corners of text, labels, the QR code, ends of rules), the strongest two of each cell of a
//!    grid over the page, chosen by the smaller eigenvalue of the structure tensor summed over
//!    the patch: on the eighth-size page for the coarse search, on the quarter-size page for the
//!    fine one (matched at half and at full size).
//! 2. **First guesses** of where the page lies on the work image: its own edges when it lies on
//!    a darker scanner bed or a desk (lines fitted to where the bright paper starts, seen from
//!    each side, on the eighth-size image), and the whole frame; each at the quarter turns whose
//!    shape fits.
//! 3. **Matching** each fiducial's patch against the work page sampled through the current guess
//!    into the clean page's frame, by normalised cross-correlation (insensitive to paper tone,
//!    light and contrast) over a search window; the peak, refined to a fraction of a pixel,
//!    gives one point pair. A peak that is not clearly higher than the next one elsewhere in the
//!    window (repeated text, rules) is dropped.
//! 4. **Consensus** (RANSAC, seeded): the largest set of pairs one transform explains. Coarse to
//!    fine: a wide search on the eighth-size pages (each first guess is tried; the one most
//!    pairs agree with wins), then narrow searches at half and full size with more, smaller
//!    patches.
//! 5. **Model choice**: similarity, affine and perspective maps are fitted to the final pairs;
//!    the simplest whose error is within a quarter pixel of the best is used (a flatbed scan
//!    is a similarity; a phone photo needs the perspective).
//! 6. **Checks**, each a reason to refuse rather than guess: too few pairs, or pairs covering
//!    too little of the page; an implausible map (scale, stretch, turn beyond a quarter turn's
//!    skew, mirrored, a page outline that is not convex, too much perspective); too large a
//!    residual.

use image::GrayImage;

use crate::homography::{self, Consensus, Homography, Model};

/// Pyramid levels above the working resolution (each halves the size).
pub(crate) const LEVELS: usize = 3;

/// Fewest pairs a fit may rest on.
const MIN_MATCHES: usize = 8;
/// The pairs must span at least this share of the clean page's width and height.
const MIN_SPREAD: f64 = 0.45;
/// Largest root-mean-square error of the final fit, in clean-page pixels (0.5 mm at 150 dpi).
pub(crate) const MAX_RMS_PX: f64 = 3.0;
/// Page scale (work over clean, at the working resolutions) allowed.
const SCALE_RANGE: (f64, f64) = (0.5, 1.3);
/// Largest ratio of the two axes' scales.
const MAX_STRETCH: f64 = 1.25;
/// Largest turn away from a quarter turn, in degrees.
const MAX_SKEW_DEGREES: f64 = 12.0;
/// Largest distance of a page corner from where the best affine map puts it, as a share of
/// the page diagonal (a camera tilted by 8 degrees moves corners by about 3 %).
const MAX_PERSPECTIVE: f64 = 0.12;

/// A fitted alignment.
#[derive(Debug, Clone)]
pub(crate) struct Alignment {
    /// Clean-page pixels (level 0) to work-page pixels (level 0).
    pub map: Homography,
    /// The kind of map used.
    pub model: Model,
    /// Root-mean-square distance of the agreeing pairs from the map, in clean-page pixels.
    pub rms: f64,
    /// Pairs the map agrees with.
    pub matches: usize,
}

/// Images halved `LEVELS` times: `[0]` is the image itself.
pub(crate) fn pyramid(img: &GrayImage) -> Vec<GrayImage> {
    let mut out = vec![img.clone()];
    for _ in 0..LEVELS {
        let next = crate::pixels::downscale(out.last().unwrap_or(img), 2);
        out.push(next);
    }
    out
}

/// A fiducial: the centre pixel of a patch of the clean page at some level.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Fiducial {
    x: usize,
    y: usize,
}

/// One matched fiducial.
#[derive(Debug, Clone, Copy)]
struct Pair {
    clean: (f64, f64),
    work: (f64, f64),
}

/// Chooses up to `per_cell` fiducials in each cell of a `cols` × `rows` grid: the pixels whose
/// `(2 half + 1)²` patch has the largest smaller eigenvalue of the structure tensor, at least
/// `2 half` apart, kept `margin` pixels from the image edges.
fn fiducials(
    img: &GrayImage,
    half: usize,
    margin: usize,
    cols: usize,
    rows: usize,
    per_cell: usize,
) -> Vec<Fiducial> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let edge = half + margin + 1;
    if w <= 2 * edge || h <= 2 * edge {
        return Vec::new();
    }
    let px = img.as_raw();
    let mut gxx = vec![0f32; w * h];
    let mut gyy = vec![0f32; w * h];
    let mut gxy = vec![0f32; w * h];
    // Gradient products (central differences), then their sums over each patch.
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let i = y * w + x;
            let gx = f32::from(px[i + 1]) - f32::from(px[i - 1]);
            let gy = f32::from(px[i + w]) - f32::from(px[i - w]);
            gxx[i] = gx * gx;
            gyy[i] = gy * gy;
            gxy[i] = gx * gy;
        }
    }
    let gxx = box_sums(&gxx, w, h, half);
    let gyy = box_sums(&gyy, w, h, half);
    let gxy = box_sums(&gxy, w, h, half);
    let area = ((2 * half + 1) * (2 * half + 1)) as f32;
    // A patch needs, on average, this much of the weaker gradient direction per pixel.
    let floor = 40.0 * area;
    // The smaller eigenvalue of each patch's tensor, where a patch fits.
    let mut score = vec![0f32; w * h];
    for y in edge..h - edge {
        for x in edge..w - edge {
            let i = y * w + x;
            let (a, c, b) = (gxx[i], gyy[i], gxy[i]);
            score[i] = (a + c) / 2.0 - (((a - c) / 2.0).powi(2) + b * b).sqrt();
        }
    }
    let mut out = Vec::new();
    let (span_w, span_h) = (w - 2 * edge, h - 2 * edge);
    for r in 0..rows {
        for c in 0..cols {
            let (x0, x1) = (edge + c * span_w / cols, edge + (c + 1) * span_w / cols);
            let (y0, y1) = (edge + r * span_h / rows, edge + (r + 1) * span_h / rows);
            let mut taken: Vec<Fiducial> = Vec::new();
            for _ in 0..per_cell {
                let mut best: Option<(f32, usize, usize)> = None;
                for y in y0..y1 {
                    for x in x0..x1 {
                        let s = score[y * w + x];
                        if s <= floor || best.is_some_and(|b| s <= b.0) {
                            continue;
                        }
                        let far = taken
                            .iter()
                            .all(|f| f.x.abs_diff(x) >= 2 * half || f.y.abs_diff(y) >= 2 * half);
                        if far {
                            best = Some((s, x, y));
                        }
                    }
                }
                let Some((_, x, y)) = best else { break };
                taken.push(Fiducial { x, y });
            }
            out.extend(taken);
        }
    }
    out
}

/// Sums of `v` (a `w` × `h` image) over the `(2 r + 1)²` square round each pixel, counting
/// nothing outside the image: running sums of whole rows down the image, then prefix sums along
/// each row.
/// The same places one pyramid level down (twice the size): the centre of each pixel's 2 x 2
/// block.
fn one_level_up(places: &[Fiducial]) -> Vec<Fiducial> {
    places
        .iter()
        .map(|f| Fiducial {
            x: f.x * 2 + 1,
            y: f.y * 2 + 1,
        })
        .collect()
}

fn box_sums(v: &[f32], w: usize, h: usize, r: usize) -> Vec<f32> {
    let mut vertical = vec![0f32; w * h];
    let mut acc = vec![0f32; w];
    for y in 0..h + r {
        if y < h {
            acc.iter_mut()
                .zip(&v[y * w..(y + 1) * w])
                .for_each(|(a, b)| *a += b);
        }
        if y > 2 * r && y - 2 * r - 1 < h {
            let old = y - 2 * r - 1;
            acc.iter_mut()
                .zip(&v[old * w..(old + 1) * w])
                .for_each(|(a, b)| *a -= b);
        }
        if y >= r {
            vertical[(y - r) * w..(y - r + 1) * w].copy_from_slice(&acc);
        }
    }
    let mut out = vec![0f32; w * h];
    let mut prefix = vec![0f64; w + 1];
    for y in 0..h {
        let row = &vertical[y * w..(y + 1) * w];
        for x in 0..w {
            prefix[x + 1] = prefix[x] + f64::from(row[x]);
        }
        for (x, o) in out[y * w..(y + 1) * w].iter_mut().enumerate() {
            *o = (prefix[(x + r + 1).min(w)] - prefix[x.saturating_sub(r)]) as f32;
        }
    }
    out
}

/// Bilinear sample at a continuous point (pixel `i` covers `[i, i + 1)`), `None` outside.
#[inline]
fn sample(img: &GrayImage, x: f64, y: f64) -> Option<f32> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let (fx, fy) = (x - 0.5, y - 0.5);
    if !(fx >= 0.0 && fy >= 0.0 && fx <= (w - 1) as f64 && fy <= (h - 1) as f64) {
        return None;
    }
    let (x0, y0) = (fx.floor() as usize, fy.floor() as usize);
    let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
    let (tx, ty) = ((fx - x0 as f64) as f32, (fy - y0 as f64) as f32);
    let px = img.as_raw();
    let p = |x: usize, y: usize| f32::from(px[y * w + x]);
    let top = p(x0, y0) * (1.0 - tx) + p(x1, y0) * tx;
    let bottom = p(x0, y1) * (1.0 - tx) + p(x1, y1) * tx;
    Some(top * (1.0 - ty) + bottom * ty)
}

/// The map `level0` expressed in the pixels of pyramid `level`.
fn at_level(level0: &Homography, level: usize) -> Homography {
    let s = f64::from(1u32 << level);
    Homography::scaling(1.0 / s, 1.0 / s)
        .after(level0)
        .after(&Homography::scaling(s, s))
}

/// How fiducials are matched: patches of `(2 half + 1)²` pixels, searched `radius` pixels
/// round where the guess puts them, kept when their correlation reaches `min_score`.
#[derive(Debug, Clone, Copy)]
struct Search {
    half: usize,
    radius: usize,
    min_score: f32,
}

/// Matches fiducials of `clean` (pyramid level `level`) on `work` (same level) around where
/// `guess` (level 0 pixels) puts them; pairs are in level 0 pixels.
fn match_fiducials(
    clean: &GrayImage,
    work: &GrayImage,
    level: usize,
    guess: &Homography,
    fids: &[Fiducial],
    search: Search,
) -> Vec<Pair> {
    let map = at_level(guess, level);
    let s = f64::from(1u32 << level);
    let mut scratch = Scratch::new(search);
    let mut out = Vec::new();
    for f in fids {
        let Some(patch) = scratch.take_patch(clean, f) else {
            continue;
        };
        // The work page sampled into the clean frame around the patch.
        let (cx, cy) = (f.x as f64 + 0.5, f.y as f64 + 0.5);
        if !scratch.sample_window(work, &map, (cx, cy)) {
            continue;
        }
        let Some((ox, oy)) = scratch.correlate(patch) else {
            continue;
        };
        let Some((u, v)) = map.apply(cx + ox, cy + oy) else {
            continue;
        };
        out.push(Pair {
            clean: (cx * s, cy * s),
            work: (u * s, v * s),
        });
    }
    out
}

/// The sums of a fiducial's patch that its correlations need.
#[derive(Debug, Clone, Copy)]
struct PatchSums {
    sum: i64,
    variance: f64,
}

/// The buffers of one search, allocated once for all its fiducials.
struct Scratch {
    search: Search,
    /// Side of a patch, `2 half + 1`.
    size: usize,
    /// Side of the searched window, `2 (half + radius) + 1`.
    win: usize,
    /// Shifts tried on each axis, `2 radius + 1`.
    shifts: usize,
    /// Gray levels as integers, so the window's sums and sums of squares are exact.
    window: Vec<i32>,
    valid: Vec<bool>,
    patch: Vec<i32>,
    /// The correlation sums in floating point: exact enough, and they vectorise on any x86-64.
    patch_f: Vec<f32>,
    window_f: Vec<f32>,
    cross: Vec<f32>,
    /// The correlation at each shift, row by row.
    ncc: Vec<f32>,
}

impl Scratch {
    fn new(search: Search) -> Scratch {
        let size = 2 * search.half + 1;
        let win = 2 * (search.half + search.radius) + 1;
        let shifts = 2 * search.radius + 1;
        Scratch {
            search,
            size,
            win,
            shifts,
            window: vec![0; win * win],
            valid: vec![true; win * win],
            patch: vec![0; size * size],
            patch_f: vec![0.0; size * size],
            window_f: vec![0.0; win * win],
            cross: vec![0.0; shifts],
            ncc: vec![f32::NEG_INFINITY; shifts * shifts],
        }
    }

    /// Pixels in a patch.
    fn n(&self) -> f64 {
        (self.size * self.size) as f64
    }

    /// Copies the clean page's patch round `f`; `None` at the page's edge or where the patch is
    /// flat (nothing to match).
    fn take_patch(&mut self, clean: &GrayImage, f: &Fiducial) -> Option<PatchSums> {
        let (half, size) = (self.search.half, self.size);
        let cw = clean.width() as usize;
        if f.x < half || f.y < half || f.x + half >= cw || f.y + half >= clean.height() as usize {
            return None;
        }
        let cpx = clean.as_raw();
        for j in 0..size {
            let row = (f.y + j - half) * cw + f.x - half;
            for (p, &v) in self.patch[j * size..(j + 1) * size]
                .iter_mut()
                .zip(&cpx[row..row + size])
            {
                *p = i32::from(v);
            }
        }
        let sum: i64 = self.patch.iter().map(|&v| i64::from(v)).sum();
        let squares: i64 = self
            .patch
            .iter()
            .map(|&v| i64::from(v) * i64::from(v))
            .sum();
        let variance = squares as f64 - (sum as f64).powi(2) / self.n();
        if variance < 1.0 {
            return None;
        }
        self.patch_f
            .iter_mut()
            .zip(&self.patch)
            .for_each(|(f, &p)| *f = p as f32);
        Some(PatchSums { sum, variance })
    }

    /// Samples the work page through `map` into the window round `centre` (clean pixels); a
    /// pixel the work page lacks takes the mean of the rest. `false` when more than a quarter is
    /// missing.
    fn sample_window(&mut self, work: &GrayImage, map: &Homography, centre: (f64, f64)) -> bool {
        let win = self.win;
        let reach = (self.search.half + self.search.radius) as f64;
        let (mut missing, mut sum, mut count) = (0usize, 0i64, 0i64);
        for j in 0..win {
            for i in 0..win {
                let (x, y) = (centre.0 - reach + i as f64, centre.1 - reach + j as f64);
                let v = map.apply(x, y).and_then(|(u, v)| sample(work, u, v));
                let k = j * win + i;
                self.valid[k] = v.is_some();
                self.window[k] = v.map_or(0, |v| v.round() as i32);
                if v.is_some() {
                    sum += i64::from(self.window[k]);
                    count += 1;
                } else {
                    missing += 1;
                }
            }
        }
        if missing * 4 > win * win {
            return false;
        }
        if missing > 0 {
            let fill = (sum / count.max(1)) as i32;
            for (v, ok) in self.window.iter_mut().zip(&self.valid) {
                if !ok {
                    *v = fill;
                }
            }
        }
        self.window_f
            .iter_mut()
            .zip(&self.window)
            .for_each(|(f, &v)| *f = v as f32);
        true
    }

    /// The normalised correlation of the patch with the window at every shift; the shift of a
    /// clear peak (at least `min_score`, and no other shift more than two away within 0.03 of it),
    /// refined below the pixel, in clean pixels from the patch's centre.
    fn correlate(&mut self, patch: PatchSums) -> Option<(f64, f64)> {
        let best = self.correlation_map(patch);
        let (peak, bx, by) = best;
        if peak < self.search.min_score || !self.peak_is_clear(best) {
            return None;
        }
        let (dx, dy) = self.sub_pixel(best);
        let radius = self.search.radius as f64;
        Some((bx as f64 - radius + dx, by as f64 - radius + dy))
    }

    /// Fills `ncc` with the correlation at every shift; the best (score, x shift, y shift).
    fn correlation_map(&mut self, patch: PatchSums) -> (f32, usize, usize) {
        let (size, win, shifts, n) = (self.size, self.win, self.shifts, self.n());
        let (sum1, sum2) = self.integral_images();
        let iw = win + 1;
        let rect = |t: &[i64], x0: usize, y0: usize| {
            t[(y0 + size) * iw + x0 + size] - t[y0 * iw + x0 + size] - t[(y0 + size) * iw + x0]
                + t[y0 * iw + x0]
        };
        let mut best = (f32::NEG_INFINITY, 0usize, 0usize);
        for sy in 0..shifts {
            // The cross products of every shift along this row at once: each patch value
            // multiplies a run of the window (vectorises).
            self.cross.iter_mut().for_each(|c| *c = 0.0);
            for j in 0..size {
                let wrow = &self.window_f[(sy + j) * win..(sy + j + 1) * win];
                for (i, &p) in self.patch_f[j * size..(j + 1) * size].iter().enumerate() {
                    for (c, &v) in self.cross.iter_mut().zip(&wrow[i..i + shifts]) {
                        *c += p * v;
                    }
                }
            }
            for sx in 0..shifts {
                let s1 = rect(&sum1, sx, sy) as f64;
                let s2 = rect(&sum2, sx, sy) as f64;
                let var = s2 - s1 * s1 / n;
                let centred = f64::from(self.cross[sx]) - patch.sum as f64 * s1 / n;
                let score = if var > 1.0 {
                    (centred / (patch.variance * var).sqrt()) as f32
                } else {
                    0.0
                };
                self.ncc[sy * shifts + sx] = score;
                if score > best.0 {
                    best = (score, sx, sy);
                }
            }
        }
        best
    }

    /// Integral images of the window and of its square, `(win + 1)²` each.
    fn integral_images(&self) -> (Vec<i64>, Vec<i64>) {
        let win = self.win;
        let iw = win + 1;
        let mut sum1 = vec![0i64; iw * iw];
        let mut sum2 = vec![0i64; iw * iw];
        for j in 0..win {
            let (mut r1, mut r2) = (0i64, 0i64);
            for i in 0..win {
                let v = i64::from(self.window[j * win + i]);
                r1 += v;
                r2 += v * v;
                sum1[(j + 1) * iw + i + 1] = sum1[j * iw + i + 1] + r1;
                sum2[(j + 1) * iw + i + 1] = sum2[j * iw + i + 1] + r2;
            }
        }
        (sum1, sum2)
    }

    /// Whether the best score away from the peak is well below it: repeated structure (ruled
    /// lines, a grid) makes it close.
    fn peak_is_clear(&self, (peak, bx, by): (f32, usize, usize)) -> bool {
        let shifts = self.shifts;
        let mut second = f32::NEG_INFINITY;
        for sy in 0..shifts {
            for sx in 0..shifts {
                if sx.abs_diff(bx) > 2 || sy.abs_diff(by) > 2 {
                    second = second.max(self.ncc[sy * shifts + sx]);
                }
            }
        }
        second <= peak - 0.03
    }

    /// The peak below the pixel: a parabola through it and its neighbours on each axis.
    fn sub_pixel(&self, (peak, bx, by): (f32, usize, usize)) -> (f64, f64) {
        let shifts = self.shifts;
        let refine = |a: Option<f32>, b: f32, c: Option<f32>| -> f64 {
            match (a, c) {
                (Some(a), Some(c)) => {
                    let d = a - 2.0 * b + c;
                    if d < -1e-6 {
                        f64::from((0.5 * (a - c) / d).clamp(-0.5, 0.5))
                    } else {
                        0.0
                    }
                }
                _ => 0.0,
            }
        };
        let at = |x: usize, y: usize| self.ncc[y * shifts + x];
        let dx = refine(
            bx.checked_sub(1).map(|x| at(x, by)),
            peak,
            (bx + 1 < shifts).then(|| at(bx + 1, by)),
        );
        let dy = refine(
            by.checked_sub(1).map(|y| at(bx, y)),
            peak,
            (by + 1 < shifts).then(|| at(bx, by + 1)),
        );
        (dx, dy)
    }
}

/// Where the page lies on the work image, as first guesses of the map (level 0 pixels).
fn first_guesses(clean: (f64, f64), work: &[GrayImage]) -> Vec<Homography> {
    let (cw, ch) = clean;
    let (ww, wh) = (f64::from(work[0].width()), f64::from(work[0].height()));
    let clean_corners = [(0.0, 0.0), (cw, 0.0), (cw, ch), (0.0, ch)];
    let aspect = (ch / cw).ln();
    let mut out = Vec::new();
    if let Some(quad) = page_quad(&work[LEVELS], f64::from(1u32 << LEVELS)) {
        for q in 0..4 {
            // A quarter turn clockwise puts the clean page's corner i on the quad's corner i + q.
            let dst: Vec<(f64, f64)> = (0..4).map(|i| quad[(i + q) % 4]).collect();
            let side =
                |a: (f64, f64), b: (f64, f64)| ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt();
            // The clean page's height over its width, as the quad shows them.
            let tall = (side(dst[1], dst[2]) + side(dst[3], dst[0])) / 2.0;
            let wide = (side(dst[0], dst[1]) + side(dst[2], dst[3])) / 2.0;
            if wide <= 0.0 || ((tall / wide).ln() - aspect).abs() > 0.3 {
                continue;
            }
            if let Some(h) = homography::fit(Model::Homography, &clean_corners, &dst) {
                out.push(h);
            }
        }
    }
    for q in 0..4u32 {
        let (tw, th) = if q % 2 == 0 { (cw, ch) } else { (ch, cw) };
        if ((wh / ww).ln() - (th / tw).ln()).abs() > 0.3 {
            continue;
        }
        let scale = (ww / tw).min(wh / th);
        let angle = f64::from(q) * std::f64::consts::FRAC_PI_2;
        out.push(Homography::similarity(
            angle,
            scale,
            cw / 2.0,
            ch / 2.0,
            ww / 2.0,
            wh / 2.0,
        ));
    }
    out
}

/// The page's outline on a darker background (scanner bed, desk), from an image scaled by
/// `1 / scale`: corners top-left, top-right, bottom-right, bottom-left in level 0 pixels. Sides
/// where the page runs off the image are taken as the image's edge. `None` when no side shows.
fn page_quad(img: &GrayImage, scale: f64) -> Option<[(f64, f64); 4]> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    if w < 16 || h < 16 {
        return None;
    }
    let px = img.as_raw();
    let t = otsu(px);
    // The paper must be clearly brighter than the background around it.
    let bright = |v: u8| v > t;
    let run = 3usize;
    // For each scan line, the first pixel of a bright run of `run` pixels, coming from outside.
    let first_bright = |get: &dyn Fn(usize) -> u8, len: usize| -> Option<usize> {
        let mut i = 0;
        while i + run <= len {
            if (0..run).all(|k| bright(get(i + k))) {
                return if i == 0 { None } else { Some(i) };
            }
            i += 1;
        }
        None
    };
    let mut left = Vec::new();
    let mut right = Vec::new();
    for y in 0..h {
        if let Some(x) = first_bright(&|i| px[y * w + i], w) {
            left.push((y as f64 + 0.5, x as f64));
        }
        if let Some(x) = first_bright(&|i| px[y * w + w - 1 - i], w) {
            right.push((y as f64 + 0.5, (w - x) as f64));
        }
    }
    let mut top = Vec::new();
    let mut bottom = Vec::new();
    for x in 0..w {
        if let Some(y) = first_bright(&|i| px[i * w + x], h) {
            top.push((x as f64 + 0.5, y as f64));
        }
        if let Some(y) = first_bright(&|i| px[(h - 1 - i) * w + x], h) {
            bottom.push((x as f64 + 0.5, (h - y) as f64));
        }
    }
    // Lines as `other = a * along + b`.
    let l = fit_edge(&left, h);
    let r = fit_edge(&right, h);
    let t_ = fit_edge(&top, w);
    let b = fit_edge(&bottom, w);
    if l.is_none() && r.is_none() && t_.is_none() && b.is_none() {
        return None;
    }
    let (wf, hf) = (w as f64, h as f64);
    let l = l.unwrap_or((0.0, 0.0));
    let r = r.unwrap_or((0.0, wf));
    let t_ = t_.unwrap_or((0.0, 0.0));
    let b = b.unwrap_or((0.0, hf));
    // Intersect x = a1 y + b1 with y = a2 x + b2.
    let meet = |v: (f64, f64), hz: (f64, f64)| -> Option<(f64, f64)> {
        let d = 1.0 - v.0 * hz.0;
        if d.abs() < 1e-6 {
            return None;
        }
        let x = (v.0 * hz.1 + v.1) / d;
        let y = hz.0 * x + hz.1;
        Some((x * scale, y * scale))
    };
    let quad = [meet(l, t_)?, meet(r, t_)?, meet(r, b)?, meet(l, b)?];
    // A convex outline covering a good part of the image.
    let area = polygon_area(&quad);
    let frame = wf * hf * scale * scale;
    (convex(&quad) && area > 0.25 * frame && area < 1.2 * frame).then_some(quad)
}

/// A straight page edge through points `(along, across)`: `across = a along + b`, if enough of
/// the side (`len` scan lines) shows it.
fn fit_edge(points: &[(f64, f64)], len: usize) -> Option<(f64, f64)> {
    if points.len() < (len / 4).max(8) {
        return None;
    }
    // Robust: the line through two points that most others lie near, then least squares.
    let near = 1.5;
    let mut best: Option<(usize, (f64, f64))> = None;
    let step = (points.len() / 24).max(1);
    for i in (0..points.len()).step_by(step) {
        for j in (i + 1..points.len()).step_by(step) {
            let (p, q) = (points[i], points[j]);
            if (q.0 - p.0).abs() < len as f64 * 0.2 {
                continue;
            }
            let a = (q.1 - p.1) / (q.0 - p.0);
            let b = p.1 - a * p.0;
            let count = points
                .iter()
                .filter(|r| (r.1 - a * r.0 - b).abs() <= near)
                .count();
            if best.is_none_or(|bb| count > bb.0) {
                best = Some((count, (a, b)));
            }
        }
    }
    let (count, (a, b)) = best?;
    if count < (len / 4).max(8) || a.abs() > 0.3 {
        return None;
    }
    let inl: Vec<&(f64, f64)> = points
        .iter()
        .filter(|r| (r.1 - a * r.0 - b).abs() <= near)
        .collect();
    let n = inl.len() as f64;
    let (sx, sy) = inl
        .iter()
        .fold((0.0, 0.0), |acc, p| (acc.0 + p.0, acc.1 + p.1));
    let (mx, my) = (sx / n, sy / n);
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for p in &inl {
        sxx += (p.0 - mx) * (p.0 - mx);
        sxy += (p.0 - mx) * (p.1 - my);
    }
    if sxx <= 0.0 {
        return Some((a, b));
    }
    let a = sxy / sxx;
    Some((a, my - a * mx))
}

/// Otsu's threshold of a set of gray levels.
fn otsu(px: &[u8]) -> u8 {
    let mut hist = [0f64; 256];
    for &p in px {
        hist[usize::from(p)] += 1.0;
    }
    let total: f64 = hist.iter().sum();
    let sum_all: f64 = hist.iter().enumerate().map(|(i, n)| i as f64 * n).sum();
    let (mut w0, mut sum0, mut best, mut t) = (0.0, 0.0, -1.0, 128u8);
    for (i, n) in hist.iter().enumerate() {
        w0 += n;
        sum0 += i as f64 * n;
        let w1 = total - w0;
        if w0 == 0.0 || w1 == 0.0 {
            continue;
        }
        let (m0, m1) = (sum0 / w0, (sum_all - sum0) / w1);
        let between = w0 * w1 * (m0 - m1).powi(2);
        if between > best {
            best = between;
            t = i as u8;
        }
    }
    t
}

fn polygon_area(p: &[(f64, f64); 4]) -> f64 {
    let mut a = 0.0;
    for i in 0..4 {
        let (x0, y0) = p[i];
        let (x1, y1) = p[(i + 1) % 4];
        a += x0 * y1 - x1 * y0;
    }
    a / 2.0
}

/// Whether the quadrilateral is convex and its corners run clockwise on the page (y down),
/// as the page's own corners do: a mirrored or folded outline is not.
pub(crate) fn convex(p: &[(f64, f64); 4]) -> bool {
    (0..4).all(|i| {
        let (a, b, c) = (p[i], p[(i + 1) % 4], p[(i + 2) % 4]);
        (b.0 - a.0) * (c.1 - b.1) - (b.1 - a.1) * (c.0 - b.0) > 0.0
    })
}

/// Turn of a map at the clean page's centre, in degrees clockwise, and its two axis scales.
pub(crate) fn pose(map: &Homography, clean: (f64, f64)) -> Option<(f64, f64, f64)> {
    let j = map.jacobian(clean.0 / 2.0, clean.1 / 2.0)?;
    let angle = (j[1][0] - j[0][1]).atan2(j[0][0] + j[1][1]).to_degrees();
    let sx = (j[0][0].powi(2) + j[1][0].powi(2)).sqrt();
    let sy = (j[0][1].powi(2) + j[1][1].powi(2)).sqrt();
    Some((angle, sx, sy))
}

/// Why a map cannot be the page's, or `None` when it can.
fn implausible(map: &Homography, clean: (f64, f64)) -> Option<String> {
    let (cw, ch) = clean;
    let corners = [(0.0, 0.0), (cw, 0.0), (cw, ch), (0.0, ch)];
    let mapped: Vec<(f64, f64)> = corners.iter().filter_map(|c| map.apply(c.0, c.1)).collect();
    let Ok(quad) = <[(f64, f64); 4]>::try_from(mapped) else {
        return Some("the page's corners cannot be placed".into());
    };
    if !convex(&quad) {
        return Some("the page's outline would be folded or mirrored".into());
    }
    let Some((angle, sx, sy)) = pose(map, clean) else {
        return Some("degenerate map".into());
    };
    let scale = (sx * sy).sqrt();
    if !(SCALE_RANGE.0..=SCALE_RANGE.1).contains(&scale) {
        return Some(format!("a scale of {scale:.2} is not a page's"));
    }
    if sx.max(sy) / sx.min(sy) > MAX_STRETCH {
        return Some(format!(
            "the page would be stretched {:.2} times more one way",
            sx.max(sy) / sx.min(sy)
        ));
    }
    let skew = angle - (angle / 90.0).round() * 90.0;
    if skew.abs() > MAX_SKEW_DEGREES {
        return Some(format!("a turn of {skew:.1} degrees past a quarter turn"));
    }
    if !map.is_affine() {
        // How far the corners are from the affine map through three of them.
        let Some(affine) = homography::fit(Model::Affine, &corners, &quad) else {
            return Some("the page's corners cannot be placed".into());
        };
        let diag = (cw * cw + ch * ch).sqrt() * scale;
        let off = corners
            .iter()
            .zip(&quad)
            .map(|(c, q)| homography::error(&affine, *c, *q))
            .fold(0.0, f64::max);
        if off > MAX_PERSPECTIVE * diag {
            return Some(format!(
                "{:.0}% perspective is more than a photo of a page shows",
                off / diag * 100.0
            ));
        }
    }
    None
}

/// Consensus of `model` over pairs within `threshold` (level 0 pixels) among plausible maps.
fn consensus(model: Model, pairs: &[Pair], threshold: f64, clean: (f64, f64)) -> Option<Consensus> {
    let src: Vec<_> = pairs.iter().map(|p| p.clean).collect();
    let dst: Vec<_> = pairs.iter().map(|p| p.work).collect();
    let plausible = |h: &Homography| implausible(h, clean).is_none();
    homography::ransac(model, &src, &dst, threshold, 400, 0x5ca1_ab1e, &plausible)
}

/// Lines the work page up with the clean page. `clean` and `work` are pyramids from
/// [`pyramid`]. The error says why no map could be trusted.
pub(crate) fn align(clean: &[GrayImage], work: &[GrayImage]) -> Result<Alignment, String> {
    let size = (f64::from(clean[0].width()), f64::from(clean[0].height()));
    // Coarse: eighth size, large patches, a wide search from each first guess.
    let coarse = fiducials(&clean[LEVELS], 6, 2, 4, 6, 2);
    if coarse.len() < MIN_MATCHES {
        return Err(format!(
            "the clean page has too little print to align on ({} places)",
            coarse.len()
        ));
    }
    let mut best: Option<(usize, Homography)> = None;
    for guess in first_guesses(size, work) {
        let mut map = guess;
        let mut count = 0;
        for (radius, model, threshold) in [(12, Model::Affine, 20.0), (5, Model::Homography, 12.0)]
        {
            let search = Search {
                half: 6,
                radius,
                min_score: 0.4,
            };
            let pairs =
                match_fiducials(&clean[LEVELS], &work[LEVELS], LEVELS, &map, &coarse, search);
            let Some(c) = consensus(model, &pairs, threshold, size) else {
                count = 0;
                break;
            };
            map = c.map;
            count = c.count;
        }
        if best.as_ref().is_none_or(|b| count > b.0) {
            best = Some((count, map));
        }
        // Most of the page agrees: no need to try the other guesses.
        if count * 10 >= coarse.len() * 7 {
            break;
        }
    }
    let Some((_, mut map)) = best.filter(|b| b.0 >= MIN_MATCHES.min(coarse.len())) else {
        return Err("no placement of the clean page on the work page agrees with its print".into());
    };
    // Fine: half size, then full size, smaller patches, more of them.
    // Chosen on the quarter-size page (cheaper; any place with structure will do), matched at
    // half and at full size round the same places.
    let fine = one_level_up(&fiducials(&clean[2], 5, 2, 6, 8, 2));
    let half_size = Search {
        half: 10,
        radius: 4,
        min_score: 0.5,
    };
    let mut pairs = match_fiducials(&clean[1], &work[1], 1, &map, &fine, half_size);
    if let Some(c) = consensus(Model::Homography, &pairs, 4.0, size) {
        map = c.map;
    }
    let full = one_level_up(&fine);
    let full_size = Search {
        half: 16,
        radius: 2,
        min_score: 0.5,
    };
    let at_full = match_fiducials(&clean[0], &work[0], 0, &map, &full, full_size);
    if at_full.len() >= MIN_MATCHES {
        pairs = at_full;
    }
    finish(&pairs, size)
}

/// Chooses the model, checks the fit and measures its error.
fn finish(pairs: &[Pair], size: (f64, f64)) -> Result<Alignment, String> {
    let full = consensus(Model::Homography, pairs, 3.0, size).ok_or_else(|| {
        format!(
            "only {} places of the clean page were found on the work page",
            pairs.len()
        )
    })?;
    let inl: Vec<Pair> = pairs
        .iter()
        .zip(&full.inliers)
        .filter(|(_, k)| **k)
        .map(|(p, _)| *p)
        .collect();
    if inl.len() < MIN_MATCHES {
        return Err(format!(
            "only {} places of the clean page agree on where it lies (at least {MIN_MATCHES} are needed)",
            inl.len()
        ));
    }
    let (xs, ys): (Vec<f64>, Vec<f64>) = inl.iter().map(|p| p.clean).unzip();
    let spread = |v: &[f64], len: f64| {
        let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        (hi - lo) / len
    };
    let (sx, sy) = (spread(&xs, size.0), spread(&ys, size.1));
    if sx < MIN_SPREAD || sy < MIN_SPREAD {
        return Err(format!(
            "the places that agree cover only {:.0}% of the page's width and {:.0}% of its height",
            sx * 100.0,
            sy * 100.0
        ));
    }
    let src: Vec<_> = inl.iter().map(|p| p.clean).collect();
    let dst: Vec<_> = inl.iter().map(|p| p.work).collect();
    let all = vec![true; inl.len()];
    let mut fits = Vec::new();
    for model in [Model::Similarity, Model::Affine, Model::Homography] {
        if let Some(h) =
            homography::fit(model, &src, &dst).filter(|h| implausible(h, size).is_none())
        {
            fits.push((model, h, homography::rms(&h, &src, &dst, &all)));
        }
    }
    let best_rms = fits.iter().map(|f| f.2).fold(f64::INFINITY, f64::min);
    let Some(&(model, map, rms)) = fits.iter().find(|f| f.2 <= best_rms + 0.25) else {
        let why = implausible(&full.map, size).unwrap_or_else(|| "no map fits".into());
        return Err(format!("the fit cannot be a page's: {why}"));
    };
    if rms > MAX_RMS_PX {
        return Err(format!(
            "the places of the clean page disagree by {rms:.1} px on average (at most {MAX_RMS_PX} px is trusted)"
        ));
    }
    Ok(Alignment {
        map,
        model,
        rms,
        matches: inl.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Luma;

    /// A page of blocks and bars of varied sizes: corners everywhere, nothing periodic.
    fn page() -> GrayImage {
        page_from(12345)
    }

    fn page_from(seed: u64) -> GrayImage {
        let mut img = GrayImage::from_pixel(620, 877, Luma([255]));
        let mut state = seed;
        let mut next = move |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        for _ in 0..260 {
            let (x, y) = (40 + next(520) as u32, 40 + next(780) as u32);
            let (w, h) = (4 + next(30) as u32, 3 + next(12) as u32);
            let shade = next(120) as u8;
            for yy in y..(y + h).min(850) {
                for xx in x..(x + w).min(600) {
                    img.put_pixel(xx, yy, Luma([shade]));
                }
            }
        }
        img
    }

    /// The page drawn through `map` (clean → work) on a background of `bed`.
    fn warp(clean: &GrayImage, map: &Homography, w: u32, h: u32, bed: u8) -> GrayImage {
        let inv = map.inverse().unwrap_or(Homography::IDENTITY);
        GrayImage::from_fn(w, h, |x, y| {
            let v = inv
                .apply(f64::from(x) + 0.5, f64::from(y) + 0.5)
                .and_then(|(u, v)| sample(clean, u, v))
                .unwrap_or(f32::from(bed));
            Luma([v.round() as u8])
        })
    }

    fn max_error(a: &Homography, b: &Homography, size: (f64, f64)) -> f64 {
        let mut worst: f64 = 0.0;
        for i in 0..=4 {
            for j in 0..=4 {
                let p = (size.0 * f64::from(i) / 4.0, size.1 * f64::from(j) / 4.0);
                let q = b.apply(p.0, p.1).unwrap_or((f64::NAN, f64::NAN));
                worst = worst.max(homography::error(a, p, q));
            }
        }
        worst
    }

    fn check(truth: Homography, w: u32, h: u32, bed: u8, model: Model) {
        let clean = page();
        let size = (f64::from(clean.width()), f64::from(clean.height()));
        let work = warp(&clean, &truth, w, h, bed);
        let a = align(&pyramid(&clean), &pyramid(&work));
        let a = a.unwrap_or_else(|e| panic!("{e}"));
        let err = max_error(&a.map, &truth, size);
        assert!(err < 1.0, "error {err:.2} px, {a:?}");
        assert_eq!(a.model, model, "{a:?}");
        assert!(a.rms < 0.5, "{a:?}");
    }

    #[test]
    fn a_similarity_is_recovered_on_a_bed() {
        // 2 degrees, 96 %, shifted, on a grey bed.
        let truth = Homography::similarity(2f64.to_radians(), 0.96, 310.0, 438.0, 318.0, 430.0);
        check(truth, 620, 877, 150, Model::Similarity);
    }

    #[test]
    fn a_quarter_turn_is_recovered() {
        // Turned 90 degrees clockwise onto a landscape frame, with a small skew.
        let truth =
            Homography::similarity((90f64 - 1.2).to_radians(), 0.98, 310.0, 438.0, 438.0, 310.0);
        check(truth, 877, 620, 255, Model::Similarity);
        let half = Homography::similarity(181f64.to_radians(), 1.0, 310.0, 438.0, 310.0, 438.0);
        check(half, 620, 877, 255, Model::Similarity);
    }

    #[test]
    fn a_perspective_photo_is_recovered() {
        let corners = [(0.0, 0.0), (620.0, 0.0), (620.0, 877.0), (0.0, 877.0)];
        let photo = [(60.0, 50.0), (575.0, 75.0), (590.0, 840.0), (35.0, 820.0)];
        let truth =
            homography::fit(Model::Homography, &corners, &photo).unwrap_or(Homography::IDENTITY);
        check(truth, 620, 877, 60, Model::Homography);
    }

    #[test]
    fn another_page_or_a_blank_one_is_refused() {
        let clean = page();
        let blank = GrayImage::from_pixel(620, 877, Luma([240]));
        assert!(align(&pyramid(&clean), &pyramid(&blank)).is_err());
        // Another page: the same kind of blocks in other places.
        let other = page_from(777);
        let r = align(&pyramid(&clean), &pyramid(&other));
        assert!(r.is_err(), "{r:?}");
        // Nothing to align on.
        assert!(align(&pyramid(&blank), &pyramid(&clean)).is_err());
    }

    #[test]
    fn implausible_maps_are_named() {
        let size = (620.0, 877.0);
        assert!(implausible(&Homography::IDENTITY, size).is_none());
        let mirrored = Homography::scaling(-1.0, 1.0);
        assert!(implausible(&mirrored, size).is_some());
        assert!(implausible(&Homography::scaling(0.3, 0.3), size).is_some());
        assert!(implausible(&Homography::scaling(1.0, 1.4), size).is_some());
        let turned = Homography::similarity(30f64.to_radians(), 1.0, 0.0, 0.0, 0.0, 0.0);
        assert!(implausible(&turned, size).is_some());
        let strong = Homography([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0015, 0.0, 1.0]);
        assert!(implausible(&strong, size).is_some());
    }

    #[test]
    fn the_page_outline_is_found_on_a_bed() {
        let mut img = GrayImage::from_pixel(160, 220, Luma([90]));
        for y in 20..200 {
            for x in 15..140 {
                img.put_pixel(x, y, Luma([235]));
            }
        }
        let quad = page_quad(&img, 8.0).unwrap_or([(0.0, 0.0); 4]);
        let expect = [
            (120.0, 160.0),
            (1120.0, 160.0),
            (1120.0, 1600.0),
            (120.0, 1600.0),
        ];
        for (q, e) in quad.iter().zip(expect) {
            assert!(
                (q.0 - e.0).abs() < 10.0 && (q.1 - e.1).abs() < 10.0,
                "{quad:?}"
            );
        }
        // A page filling the frame shows no outline.
        assert!(page_quad(&GrayImage::from_pixel(160, 220, Luma([235])), 8.0).is_none());
    }

    #[test]
    fn fiducials_avoid_blank_paper_and_plain_rules() {
        let mut img = GrayImage::from_pixel(200, 200, Luma([255]));
        // A horizontal rule (one direction only) and a block corner (two directions).
        for x in 10..190 {
            img.put_pixel(x, 50, Luma([0]));
        }
        for y in 120..160 {
            for x in 120..160 {
                img.put_pixel(x, y, Luma([0]));
            }
        }
        let f = fiducials(&img, 6, 2, 2, 2, 2);
        assert!(!f.is_empty());
        for p in &f {
            // Near the block's corners, or the rule's ends: never mid-rule, never blank paper.
            let near_block = p.x + 8 >= 120 && p.x <= 168 && p.y + 8 >= 120 && p.y <= 168;
            let rule_end = p.y.abs_diff(50) <= 8 && (p.x <= 18 || p.x >= 182);
            assert!(near_block || rule_end, "{p:?}");
        }
    }
}
