//! What a scanner or a phone camera does to a page: a small skew, a quarter or half turn, noise
//! and specks, and for a photo a perspective warp, uneven lighting and a dark border.

use image::{Rgb, RgbImage};

/// A small deterministic random number generator (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform number in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniform number in `[low, high)`.
    pub fn range(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.unit()
    }

    /// A roughly normal number with mean 0 and standard deviation 1 (sum of uniforms).
    pub fn gauss(&mut self) -> f64 {
        (self.unit() + self.unit() + self.unit() + self.unit() - 2.0) * 3f64.sqrt()
    }
}

/// Turns an image clockwise by a multiple of 90 degrees.
pub fn quarter_turn(image: RgbImage, degrees: u32) -> RgbImage {
    match degrees % 360 {
        90 => image::imageops::rotate90(&image),
        180 => image::imageops::rotate180(&image),
        270 => image::imageops::rotate270(&image),
        _ => image,
    }
}

/// A projective map of the plane, as a 3 × 3 matrix in row order.
#[derive(Debug, Clone, Copy)]
struct Homography([f64; 9]);

impl Homography {
    fn apply(&self, x: f64, y: f64) -> (f64, f64) {
        let m = &self.0;
        let w = m[6] * x + m[7] * y + m[8];
        (
            (m[0] * x + m[1] * y + m[2]) / w,
            (m[3] * x + m[4] * y + m[5]) / w,
        )
    }

    /// The map taking each `from` point to its `to` point.
    fn from_points(from: [(f64, f64); 4], to: [(f64, f64); 4]) -> Option<Homography> {
        // Unknowns h0..h7 (h8 = 1): two equations per point.
        let mut a = [[0.0f64; 9]; 8];
        for (i, ((x, y), (u, v))) in from.iter().zip(to.iter()).enumerate() {
            a[2 * i] = [*x, *y, 1.0, 0.0, 0.0, 0.0, -u * x, -u * y, *u];
            a[2 * i + 1] = [0.0, 0.0, 0.0, *x, *y, 1.0, -v * x, -v * y, *v];
        }
        // Gaussian elimination with partial pivoting.
        for col in 0..8 {
            let pivot = (col..8).max_by(|&r, &s| a[r][col].abs().total_cmp(&a[s][col].abs()))?;
            if a[pivot][col].abs() < 1e-12 {
                return None;
            }
            a.swap(col, pivot);
            let pivot_row = a[col];
            for (r, row) in a.iter_mut().enumerate() {
                if r != col {
                    let f = row[col] / pivot_row[col];
                    for (v, p) in row.iter_mut().zip(pivot_row).skip(col) {
                        *v -= f * p;
                    }
                }
            }
        }
        let mut h = [0.0; 9];
        for (i, slot) in h.iter_mut().take(8).enumerate() {
            *slot = a[i][8] / a[i][i];
        }
        h[8] = 1.0;
        Some(Homography(h))
    }
}

/// The colour at a point of `image` (bilinear), or `None` outside it.
fn sample(image: &RgbImage, x: f64, y: f64) -> Option<[f64; 3]> {
    let (w, h) = (f64::from(image.width()), f64::from(image.height()));
    if !(x >= 0.0 && y >= 0.0 && x <= w - 1.0 && y <= h - 1.0) {
        return None;
    }
    let (x0, y0) = (x.floor(), y.floor());
    let (fx, fy) = (x - x0, y - y0);
    let (x0, y0) = (x0 as u32, y0 as u32);
    let (x1, y1) = (
        (x0 + 1).min(image.width() - 1),
        (y0 + 1).min(image.height() - 1),
    );
    let p = |x, y| image.get_pixel(x, y).0;
    let (a, b, c, d) = (p(x0, y0), p(x1, y0), p(x0, y1), p(x1, y1));
    let mut out = [0.0; 3];
    for (i, slot) in out.iter_mut().enumerate() {
        let top = f64::from(a[i]) * (1.0 - fx) + f64::from(b[i]) * fx;
        let bottom = f64::from(c[i]) * (1.0 - fx) + f64::from(d[i]) * fx;
        *slot = top * (1.0 - fy) + bottom * fy;
    }
    Some(out)
}

fn to_pixel(c: [f64; 3]) -> Rgb<u8> {
    Rgb(c.map(|v| v.round().clamp(0.0, 255.0) as u8))
}

/// Turns the page by `degrees` (a small skew) about its centre, as a flatbed scanner does with
/// a page laid slightly askew; uncovered corners show the scanner's white lid.
pub fn skew(image: &RgbImage, degrees: f64) -> RgbImage {
    if degrees == 0.0 {
        return image.clone();
    }
    let (w, h) = (f64::from(image.width()), f64::from(image.height()));
    let (cx, cy) = (w / 2.0, h / 2.0);
    let (sin, cos) = degrees.to_radians().sin_cos();
    RgbImage::from_fn(image.width(), image.height(), |x, y| {
        let (dx, dy) = (f64::from(x) - cx, f64::from(y) - cy);
        // The inverse rotation finds where each output pixel comes from.
        let (sx, sy) = (cos * dx + sin * dy + cx, -sin * dx + cos * dy + cy);
        to_pixel(sample(image, sx, sy).unwrap_or([250.0, 250.0, 248.0]))
    })
}

/// A phone photo of the page lying on a table: the page smaller in the frame, turned by
/// `degrees`, its corners pulled a little (perspective), a darker textured border around it, light
/// falling off across the frame, and a warm tint.
pub fn photo(image: &RgbImage, degrees: f64, rng: &mut Rng) -> RgbImage {
    let (w, h) = (f64::from(image.width()), f64::from(image.height()));
    let (cx, cy) = (w / 2.0, h / 2.0);
    let scale = rng.range(0.84, 0.9);
    let (sin, cos) = degrees.to_radians().sin_cos();
    let source = [(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)];
    // The page's corners in the photo: scaled about the centre, turned, then each pulled by up
    // to 2.5 % of the frame (a camera not quite square to the page).
    let mut target = [(0.0, 0.0); 4];
    for (slot, (x, y)) in target.iter_mut().zip(source) {
        let (dx, dy) = ((x - cx) * scale, (y - cy) * scale);
        *slot = (
            cx + cos * dx - sin * dy + rng.range(-0.025, 0.025) * w,
            cy + sin * dx + cos * dy + rng.range(-0.025, 0.025) * h,
        );
    }
    let Some(map) = Homography::from_points(target, source) else {
        return image.clone();
    };
    let table = [
        rng.range(55.0, 85.0),
        rng.range(50.0, 75.0),
        rng.range(45.0, 65.0),
    ];
    // Light falls off from a random side, with a vignette.
    let angle = rng.range(0.0, std::f64::consts::TAU);
    let (lx, ly) = (angle.cos(), angle.sin());
    let fall = rng.range(0.12, 0.25);
    let grain = rng.next_u64();
    RgbImage::from_fn(image.width(), image.height(), |x, y| {
        let (fx, fy) = (f64::from(x), f64::from(y));
        let (sx, sy) = map.apply(fx, fy);
        let colour = sample(image, sx, sy).unwrap_or_else(|| {
            // A wood-like table: slow stripes and fine grain.
            let stripe = (fy / h * 40.0 + (fx / w * 3.0).sin() * 2.0).sin() * 6.0;
            let fine = ((u64::from(x) * 31 + u64::from(y) * 17 + grain) % 13) as f64 - 6.0;
            table.map(|c| c + stripe + fine)
        });
        let (nx, ny) = (fx / w - 0.5, fy / h - 0.5);
        let light = 1.0 - fall * (0.5 + nx * lx + ny * ly) - 0.18 * (nx * nx + ny * ny);
        let tint = [1.0, 0.975, 0.93];
        to_pixel([0, 1, 2].map(|i| colour[i] * light * tint[i]))
    })
}

/// Sensor or scanner noise of standard deviation `amount` × 255, and small dark specks (dust):
/// one per 600 / `amount` pixels (about 70 on a 150 dpi A4 page at 0.02).
pub fn noise(image: &mut RgbImage, amount: f64, rng: &mut Rng) {
    if amount <= 0.0 {
        return;
    }
    let sigma = amount * 255.0;
    for pixel in image.pixels_mut() {
        let luma = rng.gauss() * sigma;
        for c in pixel.0.iter_mut() {
            let chroma = rng.gauss() * sigma * 0.25;
            *c = (f64::from(*c) + luma + chroma).round().clamp(0.0, 255.0) as u8;
        }
    }
    let (w, h) = (image.width(), image.height());
    let specks = (f64::from(w) * f64::from(h) * amount / 600.0) as u64;
    for _ in 0..specks {
        let (x, y) = (rng.range(0.0, f64::from(w)), rng.range(0.0, f64::from(h)));
        let radius = rng.range(0.4, 1.4);
        let shade = rng.range(40.0, 140.0);
        let r = radius.ceil() as i64;
        for dy in -r..=r {
            for dx in -r..=r {
                let (px, py) = (x as i64 + dx, y as i64 + dy);
                if px < 0 || py < 0 || px >= i64::from(w) || py >= i64::from(h) {
                    continue;
                }
                if ((dx * dx + dy * dy) as f64).sqrt() > radius {
                    continue;
                }
                let p = image.get_pixel_mut(px as u32, py as u32);
                for c in p.0.iter_mut() {
                    *c = (*c).min(shade as u8);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_deterministic_and_in_range() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..1000 {
            let v = a.unit();
            assert_eq!(v, b.unit());
            assert!((0.0..1.0).contains(&v));
        }
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
    }

    #[test]
    fn a_homography_maps_its_points() {
        let from = [(0.0, 0.0), (10.0, 0.0), (10.0, 20.0), (0.0, 20.0)];
        let to = [(1.0, 2.0), (12.0, 1.0), (11.0, 22.0), (0.0, 21.0)];
        let h = Homography::from_points(from, to).expect("solvable");
        for (f, t) in from.iter().zip(to) {
            let (x, y) = h.apply(f.0, f.1);
            assert!((x - t.0).abs() < 1e-9 && (y - t.1).abs() < 1e-9);
        }
    }

    #[test]
    fn quarter_turns_swap_the_sides() {
        let mut image = RgbImage::from_pixel(4, 2, Rgb([255, 255, 255]));
        image.put_pixel(3, 0, Rgb([0, 0, 0]));
        let turned = quarter_turn(image.clone(), 90);
        assert_eq!(turned.dimensions(), (2, 4));
        assert_eq!(turned.get_pixel(1, 3).0, [0, 0, 0]);
        let half = quarter_turn(image, 180);
        assert_eq!(half.get_pixel(0, 1).0, [0, 0, 0]);
    }
}
