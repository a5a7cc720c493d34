//! Plane transforms and how they are fitted to point correspondences.
//!
//! A [`Homography`] is a 3 × 3 matrix acting on homogeneous points: `(x, y)` goes to
//! `((h0 x + h1 y + h2) / w, (h3 x + h4 y + h5) / w)` with `w = h6 x + h7 y + h8`. Similarity
//! and affine maps are homographies whose last row is `(0, 0, 1)`.
//!
//! Fitting ([`fit`]) is least squares over all the given pairs:
//! - similarity (rotation, one scale, shift): closed form (the Procrustes solution without
//!   reflection);
//! - affine: the normal equations of each output coordinate, 3 × 3;
//! - homography: the normalised direct linear transform (Hartley and Zisserman, *Multiple View
//!   Geometry*, algorithm 4.2): both point sets are moved to centroid 0 and mean distance √2,
//!   the matrix is the eigenvector of the smallest eigenvalue of `AᵀA` (9 × 9, nalgebra's
//!   symmetric eigendecomposition), and the normalisations are undone. Exactly four pairs
//!   (RANSAC's samples) determine it: the 8 × 8 system is solved directly instead (LU).
//!
//! [`ransac`] finds the largest set of pairs that one transform explains within a threshold from
//! minimal samples drawn by a seeded generator (so results are reproducible), rejecting
//! implausible candidates with a caller's test, and refits on the inliers.

use nalgebra::{Matrix3, SMatrix, SVector, SymmetricEigen, Vector3};

/// A projective map of the plane, row-major.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Homography(pub [f64; 9]);

/// The kinds of transform that can be fitted, simplest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Model {
    /// Rotation, one scale and a shift (4 parameters; 2 pairs determine it).
    Similarity,
    /// Any linear map and a shift (6 parameters; 3 pairs).
    Affine,
    /// A full perspective map (8 parameters; 4 pairs).
    Homography,
}

impl Model {
    /// Pairs needed to determine the model.
    pub fn minimal(self) -> usize {
        match self {
            Model::Similarity => 2,
            Model::Affine => 3,
            Model::Homography => 4,
        }
    }
}

impl Homography {
    #[cfg(test)]
    pub const IDENTITY: Homography = Homography([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);

    /// Scaling by `sx`, `sy` about the origin.
    pub fn scaling(sx: f64, sy: f64) -> Homography {
        Homography([sx, 0.0, 0.0, 0.0, sy, 0.0, 0.0, 0.0, 1.0])
    }

    /// Rotation by `angle` radians (clockwise on a page, where y points down) and scaling by
    /// `scale` about `(cx, cy)`, then a shift so that `(cx, cy)` lands on `(tx, ty)`.
    pub fn similarity(angle: f64, scale: f64, cx: f64, cy: f64, tx: f64, ty: f64) -> Homography {
        let (s, c) = angle.sin_cos();
        let (a, b, d, e) = (scale * c, -scale * s, scale * s, scale * c);
        Homography([
            a,
            b,
            tx - a * cx - b * cy,
            d,
            e,
            ty - d * cx - e * cy,
            0.0,
            0.0,
            1.0,
        ])
    }

    /// The image of a point, or `None` where the map sends it to infinity (or behind the
    /// camera, for a perspective map fitted to a page in front of it).
    #[inline]
    pub fn apply(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let m = &self.0;
        let w = m[6] * x + m[7] * y + m[8];
        if w.is_nan() || w <= 1e-9 {
            return None;
        }
        let (u, v) = (
            (m[0] * x + m[1] * y + m[2]) / w,
            (m[3] * x + m[4] * y + m[5]) / w,
        );
        (u.is_finite() && v.is_finite()).then_some((u, v))
    }

    /// `self` after `first`: `p -> self(first(p))`.
    pub fn after(&self, first: &Homography) -> Homography {
        let (a, b) = (&self.0, &first.0);
        let mut out = [0.0; 9];
        for r in 0..3 {
            for c in 0..3 {
                out[r * 3 + c] = (0..3).map(|k| a[r * 3 + k] * b[k * 3 + c]).sum();
            }
        }
        Homography(out).normalised()
    }

    /// The inverse map, if the matrix is invertible.
    pub fn inverse(&self) -> Option<Homography> {
        let m = &self.0;
        let cof = [
            m[4] * m[8] - m[5] * m[7],
            m[2] * m[7] - m[1] * m[8],
            m[1] * m[5] - m[2] * m[4],
            m[5] * m[6] - m[3] * m[8],
            m[0] * m[8] - m[2] * m[6],
            m[2] * m[3] - m[0] * m[5],
            m[3] * m[7] - m[4] * m[6],
            m[1] * m[6] - m[0] * m[7],
            m[0] * m[4] - m[1] * m[3],
        ];
        let det = m[0] * cof[0] + m[1] * cof[3] + m[2] * cof[6];
        let scale = m.iter().map(|v| v.abs()).fold(0.0, f64::max).powi(3);
        if !det.is_finite() || det.abs() <= 1e-14 * scale.max(1e-300) {
            return None;
        }
        Some(Homography(cof.map(|v| v / det)).normalised())
    }

    /// The same map with the matrix scaled so that its last entry is 1 (when it is not 0).
    pub fn normalised(self) -> Homography {
        let k = self.0[8];
        if k.abs() > 1e-12 && k.is_finite() {
            Homography(self.0.map(|v| v / k))
        } else {
            self
        }
    }

    /// The linear part of the map at a point (its Jacobian), `[[du/dx, du/dy], [dv/dx, dv/dy]]`.
    pub fn jacobian(&self, x: f64, y: f64) -> Option<[[f64; 2]; 2]> {
        let m = &self.0;
        let w = m[6] * x + m[7] * y + m[8];
        if w.is_nan() || w.abs() <= 1e-12 {
            return None;
        }
        let (u, v) = self.apply(x, y)?;
        Some([
            [(m[0] - u * m[6]) / w, (m[1] - u * m[7]) / w],
            [(m[3] - v * m[6]) / w, (m[4] - v * m[7]) / w],
        ])
    }

    /// Whether the last row is `(0, 0, 1)` (an affine map).
    pub fn is_affine(&self) -> bool {
        self.0[6].abs() < 1e-15 && self.0[7].abs() < 1e-15
    }
}

/// Least-squares fit of `model` taking each `src` point to its `dst` point; `None` when the
/// points do not determine it (too few, or all on a line).
pub(crate) fn fit(model: Model, src: &[(f64, f64)], dst: &[(f64, f64)]) -> Option<Homography> {
    if src.len() != dst.len() || src.len() < model.minimal() {
        return None;
    }
    let h = match model {
        Model::Similarity => fit_similarity(src, dst),
        Model::Affine => fit_affine(src, dst),
        Model::Homography => fit_homography(src, dst),
    }?;
    h.0.iter().all(|v| v.is_finite()).then_some(h)
}

/// Moves points to centroid 0 and mean distance √2 from it: the map doing so and the points.
fn normalise(points: &[(f64, f64)]) -> Option<(Homography, Vec<(f64, f64)>)> {
    let n = points.len() as f64;
    let (cx, cy) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), p| (a + p.0 / n, b + p.1 / n));
    let mean = points
        .iter()
        .map(|p| ((p.0 - cx).powi(2) + (p.1 - cy).powi(2)).sqrt())
        .sum::<f64>()
        / n;
    if mean.is_nan() || mean <= 1e-9 {
        return None;
    }
    let s = std::f64::consts::SQRT_2 / mean;
    let t = Homography([s, 0.0, -s * cx, 0.0, s, -s * cy, 0.0, 0.0, 1.0]);
    let moved = points
        .iter()
        .map(|p| (s * (p.0 - cx), s * (p.1 - cy)))
        .collect();
    Some((t, moved))
}

fn fit_similarity(src: &[(f64, f64)], dst: &[(f64, f64)]) -> Option<Homography> {
    let n = src.len() as f64;
    let mean = |p: &[(f64, f64)]| {
        p.iter()
            .fold((0.0, 0.0), |(a, b), q| (a + q.0 / n, b + q.1 / n))
    };
    let (sx, sy) = mean(src);
    let (dx, dy) = mean(dst);
    // u = a x - b y + c, v = b x + a y + d on centred points.
    let (mut num_a, mut num_b, mut den) = (0.0, 0.0, 0.0);
    for (p, q) in src.iter().zip(dst) {
        let (x, y) = (p.0 - sx, p.1 - sy);
        let (u, v) = (q.0 - dx, q.1 - dy);
        num_a += x * u + y * v;
        num_b += x * v - y * u;
        den += x * x + y * y;
    }
    if den.is_nan() || den <= 1e-12 {
        return None;
    }
    let (a, b) = (num_a / den, num_b / den);
    Some(Homography([
        a,
        -b,
        dx - a * sx + b * sy,
        b,
        a,
        dy - b * sx - a * sy,
        0.0,
        0.0,
        1.0,
    ]))
}

fn fit_affine(src: &[(f64, f64)], dst: &[(f64, f64)]) -> Option<Homography> {
    let (ts, s) = normalise(src)?;
    let (td, d) = normalise(dst)?;
    // Normal equations M [a b c]ᵀ = r for each output coordinate, M = Σ [x y 1]ᵀ[x y 1].
    let mut m = [[0.0f64; 3]; 3];
    let (mut ru, mut rv) = ([0.0f64; 3], [0.0f64; 3]);
    for (p, q) in s.iter().zip(&d) {
        let row = [p.0, p.1, 1.0];
        for i in 0..3 {
            for j in 0..3 {
                m[i][j] += row[i] * row[j];
            }
            ru[i] += row[i] * q.0;
            rv[i] += row[i] * q.1;
        }
    }
    let u = solve3(m, ru)?;
    let v = solve3(m, rv)?;
    let normalised = Homography([u[0], u[1], u[2], v[0], v[1], v[2], 0.0, 0.0, 1.0]);
    Some(td.inverse()?.after(&normalised).after(&ts))
}

/// Solves a 3 × 3 system (LU with partial pivoting); `None` when it is (nearly) singular: its
/// determinant within 10⁻¹⁰ of the cube of its largest entry.
fn solve3(m: [[f64; 3]; 3], r: [f64; 3]) -> Option<[f64; 3]> {
    let a = Matrix3::from_fn(|i, j| m[i][j]);
    let det = a.determinant();
    if det.is_nan() || det.abs() <= 1e-10 * a.amax().powi(3) {
        return None;
    }
    let x = a.lu().solve(&Vector3::from(r))?;
    Some([x[0], x[1], x[2]])
}

fn fit_homography(src: &[(f64, f64)], dst: &[(f64, f64)]) -> Option<Homography> {
    let (ts, s) = normalise(src)?;
    let (td, d) = normalise(dst)?;
    if s.len() == 4 {
        // Four pairs determine the map: solve for it directly (RANSAC's samples).
        let h = solve_four(&s, &d)?;
        let out = td.inverse()?.after(&h).after(&ts);
        return src
            .iter()
            .all(|p| out.apply(p.0, p.1).is_some())
            .then_some(out);
    }
    let mut ata = [[0.0f64; 9]; 9];
    for (p, q) in s.iter().zip(&d) {
        let (x, y, u, v) = (p.0, p.1, q.0, q.1);
        let rows = [
            [x, y, 1.0, 0.0, 0.0, 0.0, -u * x, -u * y, -u],
            [0.0, 0.0, 0.0, x, y, 1.0, -v * x, -v * y, -v],
        ];
        for row in &rows {
            for i in 0..9 {
                if row[i] == 0.0 {
                    continue;
                }
                for j in 0..9 {
                    ata[i][j] += row[i] * row[j];
                }
            }
        }
    }
    // A symmetric 9 × 9 matrix: its eigenvectors are real and orthogonal. The iteration is
    // bounded so that a matrix of NaNs ends rather than spins.
    let eigen = SymmetricEigen::try_new(
        SMatrix::<f64, 9, 9>::from_fn(|i, j| ata[i][j]),
        f64::EPSILON,
        1_000,
    )?;
    let values: [f64; 9] = std::array::from_fn(|i| eigen.eigenvalues[i]);
    let smallest = (0..9).min_by(|&a, &b| values[a].total_cmp(&values[b]))?;
    // With at least 4 pairs in general position, only one eigenvalue is (near) zero.
    let mut sorted = values;
    sorted.sort_by(f64::total_cmp);
    if sorted[1].is_nan() || sorted[1] <= 1e-10 * sorted[8].max(1e-300) {
        return None;
    }
    let h: [f64; 9] = std::array::from_fn(|i| eigen.eigenvectors[(i, smallest)]);
    let normalised = Homography(h);
    let out = td.inverse()?.after(&normalised).after(&ts);
    // The points must stay in front of the map's horizon.
    src.iter()
        .all(|p| out.apply(p.0, p.1).is_some())
        .then_some(out)
        .or_else(|| {
            let flipped = Homography(out.0.map(|v| -v));
            src.iter()
                .all(|p| flipped.apply(p.0, p.1).is_some())
                .then_some(flipped)
        })
}

/// The homography (last entry 1) taking four points to four others, from the 8 × 8 system by LU
/// decomposition with partial pivoting; `None` when three of the points are collinear (a pivot
/// under 10⁻⁹: the points are normalised, so the scale is known).
fn solve_four(src: &[(f64, f64)], dst: &[(f64, f64)]) -> Option<Homography> {
    let mut a = SMatrix::<f64, 8, 8>::zeros();
    let mut b = SVector::<f64, 8>::zeros();
    for (i, ((x, y), (u, v))) in src.iter().zip(dst).enumerate().take(4) {
        let rows = [
            [*x, *y, 1.0, 0.0, 0.0, 0.0, -u * x, -u * y],
            [0.0, 0.0, 0.0, *x, *y, 1.0, -v * x, -v * y],
        ];
        for (k, row) in rows.iter().enumerate() {
            for (j, value) in row.iter().enumerate() {
                a[(2 * i + k, j)] = *value;
            }
        }
        b[2 * i] = *u;
        b[2 * i + 1] = *v;
    }
    let lu = a.lu();
    if lu
        .u()
        .diagonal()
        .iter()
        .any(|pivot| pivot.is_nan() || pivot.abs() < 1e-9)
    {
        return None;
    }
    let x = lu.solve(&b)?;
    Some(Homography(std::array::from_fn(|i| {
        if i < 8 { x[i] } else { 1.0 }
    })))
}

/// Distance from where `h` puts `p` to `q` (infinite where `h` cannot map `p`).
pub(crate) fn error(h: &Homography, p: (f64, f64), q: (f64, f64)) -> f64 {
    h.apply(p.0, p.1).map_or(f64::INFINITY, |(u, v)| {
        ((u - q.0).powi(2) + (v - q.1).powi(2)).sqrt()
    })
}

/// Root mean square of the errors of the pairs selected by `keep`.
pub(crate) fn rms(h: &Homography, src: &[(f64, f64)], dst: &[(f64, f64)], keep: &[bool]) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for ((p, q), k) in src.iter().zip(dst).zip(keep) {
        if *k {
            sum += error(h, *p, *q).powi(2);
            n += 1;
        }
    }
    if n == 0 {
        f64::INFINITY
    } else {
        (sum / n as f64).sqrt()
    }
}

/// Fewest samples a consensus draws, however large the set found early.
const MIN_SAMPLES: usize = 40;

/// A consensus fit: the transform, which pairs it explains, and how many.
#[derive(Debug, Clone)]
pub(crate) struct Consensus {
    pub map: Homography,
    pub inliers: Vec<bool>,
    pub count: usize,
}

/// The largest set of pairs explained within `threshold` by one `model` transform that
/// `plausible` accepts, refitted on its inliers (twice, growing the set). Deterministic for a
/// given `seed`. At most `iterations` samples are drawn, fewer once the best set is large enough
/// that another sample of inliers only would have been drawn with 99.9 % certainty (but at
/// least [`MIN_SAMPLES`]). `None` when no candidate explains `model.minimal() + 1` pairs or
/// more.
pub(crate) fn ransac(
    model: Model,
    src: &[(f64, f64)],
    dst: &[(f64, f64)],
    threshold: f64,
    iterations: usize,
    seed: u64,
    plausible: &dyn Fn(&Homography) -> bool,
) -> Option<Consensus> {
    let n = src.len().min(dst.len());
    let k = model.minimal();
    if n < k + 1 {
        return None;
    }
    let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as usize
    };
    let classify = |h: &Homography| -> (Vec<bool>, usize, f64) {
        let mut inl = vec![false; n];
        let (mut count, mut cost) = (0, 0.0);
        for i in 0..n {
            let e = error(h, src[i], dst[i]);
            if e <= threshold {
                inl[i] = true;
                count += 1;
                cost += e * e;
            } else {
                cost += threshold * threshold;
            }
        }
        (inl, count, cost)
    };
    let mut best: Option<(Vec<bool>, usize, f64, Homography)> = None;
    let mut sample = vec![0usize; k];
    let (mut s, mut d) = (vec![(0.0, 0.0); k], vec![(0.0, 0.0); k]);
    let mut needed = iterations;
    let mut drawn = 0;
    while drawn < needed.max(MIN_SAMPLES).min(iterations) {
        drawn += 1;
        for j in 0..k {
            loop {
                let c = next() % n;
                if !sample[..j].contains(&c) {
                    sample[j] = c;
                    break;
                }
            }
        }
        for (j, &i) in sample.iter().enumerate() {
            s[j] = src[i];
            d[j] = dst[i];
        }
        let Some(h) = fit(model, &s, &d) else {
            continue;
        };
        if !plausible(&h) {
            continue;
        }
        let (inl, count, cost) = classify(&h);
        let better = best
            .as_ref()
            .is_none_or(|b| count > b.1 || (count == b.1 && cost < b.2));
        if better {
            // Samples needed to draw one of inliers only, given this share of inliers.
            let share = count as f64 / n as f64;
            let miss = 1.0 - share.powi(k as i32);
            needed = if miss <= 1e-12 {
                0
            } else {
                ((0.001f64).ln() / miss.ln()).ceil().min(iterations as f64) as usize
            };
            best = Some((inl, count, cost, h));
        }
    }
    let (mut inliers, mut count, _, mut map) = best?;
    if count < k + 1 {
        return None;
    }
    // Refit on the inliers, then take the pairs the refit explains, twice.
    for _ in 0..2 {
        let (s, d): (Vec<_>, Vec<_>) = (0..n)
            .filter(|&i| inliers[i])
            .map(|i| (src[i], dst[i]))
            .unzip();
        let Some(h) = fit(model, &s, &d).filter(|h| plausible(h)) else {
            break;
        };
        let (inl, c, _) = classify(&h);
        if c < count {
            break;
        }
        map = h;
        inliers = inl;
        count = c;
    }
    Some(Consensus {
        map,
        inliers,
        count,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> Vec<(f64, f64)> {
        let mut pts = Vec::new();
        for i in 0..5 {
            for j in 0..7 {
                pts.push((100.0 + 250.0 * f64::from(i), 80.0 + 240.0 * f64::from(j)));
            }
        }
        pts
    }

    fn close(a: &Homography, b: &Homography, pts: &[(f64, f64)], tol: f64) -> bool {
        pts.iter().all(|p| {
            let (x, y) = a.apply(p.0, p.1).unwrap_or((f64::NAN, f64::NAN));
            let (u, v) = b.apply(p.0, p.1).unwrap_or((f64::NAN, f64::NAN));
            (x - u).abs() < tol && (y - v).abs() < tol
        })
    }

    /// A camera tilted towards a page: the top smaller than the bottom.
    fn perspective() -> Homography {
        Homography([0.93, 0.02, 40.0, -0.015, 0.9, 60.0, 0.00002, 0.00006, 1.0])
    }

    #[test]
    fn exact_fits_recover_each_model() {
        let pts = grid();
        let maps = [
            (
                Model::Similarity,
                Homography::similarity(0.04, 0.96, 600.0, 800.0, 630.0, 790.0),
            ),
            (
                Model::Affine,
                Homography([0.97, 0.03, 12.0, -0.02, 1.01, -7.0, 0.0, 0.0, 1.0]),
            ),
            (Model::Homography, perspective()),
        ];
        for (model, truth) in maps {
            let dst: Vec<_> = pts.iter().filter_map(|p| truth.apply(p.0, p.1)).collect();
            let h = fit(model, &pts, &dst).unwrap_or(Homography::IDENTITY);
            assert!(close(&h, &truth, &pts, 1e-6), "{model:?}: {h:?}");
            let keep = vec![true; pts.len()];
            assert!(rms(&h, &pts, &dst, &keep) < 1e-6);
        }
    }

    #[test]
    fn four_points_determine_a_homography() {
        let src = [(0.0, 0.0), (1240.0, 0.0), (1240.0, 1754.0), (0.0, 1754.0)];
        let dst = [
            (80.0, 60.0),
            (1150.0, 95.0),
            (1190.0, 1700.0),
            (40.0, 1650.0),
        ];
        let h = fit(Model::Homography, &src, &dst).unwrap_or(Homography::IDENTITY);
        for (p, q) in src.iter().zip(dst) {
            assert!(error(&h, *p, q) < 1e-6, "{p:?}");
        }
    }

    #[test]
    fn degenerate_points_give_no_fit() {
        let line: Vec<_> = (0..6)
            .map(|i| (f64::from(i) * 10.0, f64::from(i) * 5.0))
            .collect();
        assert!(fit(Model::Affine, &line, &line).is_none());
        assert!(fit(Model::Homography, &line, &line).is_none());
        let same = vec![(5.0, 5.0); 4];
        assert!(fit(Model::Similarity, &same, &same).is_none());
        assert!(fit(Model::Homography, &line[..3], &line[..3]).is_none());
        assert!(fit(Model::Affine, &line[..3], &line[..2]).is_none());
    }

    #[test]
    fn inverse_and_composition_round_trip() {
        let h = perspective();
        let inv = h.inverse().unwrap_or(Homography::IDENTITY);
        let round = inv.after(&h);
        assert!(close(&round, &Homography::IDENTITY, &grid(), 1e-6));
        assert!(
            Homography([1.0, 2.0, 0.0, 2.0, 4.0, 0.0, 0.0, 0.0, 1.0])
                .inverse()
                .is_none()
        );
    }

    #[test]
    fn jacobian_matches_finite_differences() {
        let h = perspective();
        let (x, y) = (600.0, 900.0);
        let j = h.jacobian(x, y).unwrap_or([[0.0; 2]; 2]);
        let (u0, v0) = h.apply(x, y).unwrap_or((0.0, 0.0));
        let (u1, v1) = h.apply(x + 1e-4, y).unwrap_or((0.0, 0.0));
        let (u2, v2) = h.apply(x, y + 1e-4).unwrap_or((0.0, 0.0));
        assert!((j[0][0] - (u1 - u0) / 1e-4).abs() < 1e-5);
        assert!((j[1][0] - (v1 - v0) / 1e-4).abs() < 1e-5);
        assert!((j[0][1] - (u2 - u0) / 1e-4).abs() < 1e-5);
        assert!((j[1][1] - (v2 - v0) / 1e-4).abs() < 1e-5);
    }

    #[test]
    fn ransac_ignores_outliers_and_is_deterministic() {
        let pts = grid();
        let truth = perspective();
        let mut dst: Vec<_> = pts.iter().filter_map(|p| truth.apply(p.0, p.1)).collect();
        // A third of the matches are wrong (repeated text matched one line off, say).
        let mut wrong = 0;
        for (i, d) in dst.iter_mut().enumerate() {
            if i % 3 == 1 {
                d.1 += 47.0 + (i as f64) * 3.0;
                d.0 -= (i as f64) * 2.0;
                wrong += 1;
            } else {
                // Small measurement noise.
                d.0 += ((i * 7) % 5) as f64 * 0.1 - 0.2;
            }
        }
        let always = |_: &Homography| true;
        let c = ransac(Model::Homography, &pts, &dst, 2.0, 300, 7, &always);
        let c = c.unwrap_or(Consensus {
            map: Homography::IDENTITY,
            inliers: Vec::new(),
            count: 0,
        });
        assert_eq!(c.count, pts.len() - wrong);
        for (i, inl) in c.inliers.iter().enumerate() {
            assert_eq!(*inl, i % 3 != 1, "pair {i}");
        }
        assert!(close(&c.map, &truth, &pts, 0.5));
        let again = ransac(Model::Homography, &pts, &dst, 2.0, 300, 7, &always);
        assert_eq!(again.map(|a| a.map), Some(c.map));
        // A test that accepts nothing leaves nothing.
        let never = |_: &Homography| false;
        assert!(ransac(Model::Affine, &pts, &dst, 2.0, 100, 7, &never).is_none());
        // Too few pairs.
        assert!(
            ransac(
                Model::Homography,
                &pts[..4],
                &dst[..4],
                2.0,
                100,
                7,
                &always
            )
            .is_none()
        );
    }
}
