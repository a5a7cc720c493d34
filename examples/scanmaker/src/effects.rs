//! What a scanner or a phone camera does to a page.
//!
//! Geometry ([`Placement`]): where each point of the page lands in the output image. A scanner
//! turns the page a little, may show it smaller than the glass (a page printed at 97 %, or a
//! scanner that reduces) and off centre, on the lid or a grey bed; a phone camera sees the page
//! from above with its axis tilted (perspective), the page at 84–90 % of the frame, perhaps with
//! one edge curled up towards the lens. The map is explicit from page to image
//! ([`Placement::forward`], so the truth about where the ink went is exact) and inverted
//! numerically on a grid for drawing.
//!
//! Ink: a blot over the page code in the top right corner ([`blot_code`]).
//!
//! Light and paper: grey and uneven paper, the shadow a page's edge casts on a scanner bed, a
//! photo's light falling off to one side with a vignette and a warm tint, optical blur, sensor
//! noise and dust specks; and last a quarter or half turn of the whole image.

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

/// Where a normalised point of an image goes when the image is turned clockwise by `degrees`
/// (a multiple of 90).
pub fn turn_point(u: f64, v: f64, degrees: u32) -> (f64, f64) {
    match degrees % 360 {
        90 => (1.0 - v, u),
        180 => (1.0 - u, 1.0 - v),
        270 => (v, 1.0 - u),
        _ => (u, v),
    }
}

/// A page's edge lifted towards the camera.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Curl {
    /// Which edge: 0 top, 1 right, 2 bottom, 3 left.
    pub side: u8,
    /// Height of the lift at the edge, as a share of the page's height.
    pub lift: f64,
    /// How far into the page the curl reaches, as a share of the page across that edge.
    pub reach: f64,
}

/// How the page is seen.
#[derive(Debug, Clone, Copy, PartialEq)]
enum View {
    /// Flat on a scanner's glass.
    Flat,
    /// Through a camera at `distance` (page pixels) whose axis is tilted by `tilt` radians about
    /// the page's axis at angle `axis`, the edge maybe curled.
    Camera {
        distance: f64,
        tilt: f64,
        axis: f64,
        curl: Option<Curl>,
    },
}

/// Where the page lies in the output image.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// Page size in pixels.
    page: (f64, f64),
    /// Output image size in pixels.
    frame: (u32, u32),
    /// Turn in the image, radians clockwise.
    angle: f64,
    /// Scale of the page in the image.
    scale: f64,
    /// Offset of the page's centre from the image's centre, in pixels.
    shift: (f64, f64),
    view: View,
}

impl Placement {
    /// A scanner: the page turned by `degrees` about its centre, scaled by `scale`, its centre
    /// moved by `shift` pixels from the image's centre; the image is the page's size.
    pub fn flat(page: (u32, u32), degrees: f64, scale: f64, shift: (f64, f64)) -> Placement {
        Placement {
            page: (f64::from(page.0), f64::from(page.1)),
            frame: page,
            angle: degrees.to_radians(),
            scale,
            shift,
            view: View::Flat,
        }
    }

    /// A phone camera: as [`Placement::flat`], seen through a camera tilted by `tilt_degrees`
    /// about the page axis at `axis` radians, from 1.5 page lengths away, the edge maybe curled.
    pub fn camera(
        page: (u32, u32),
        degrees: f64,
        scale: f64,
        shift: (f64, f64),
        tilt_degrees: f64,
        axis: f64,
        curl: Option<Curl>,
    ) -> Placement {
        let long = f64::from(page.0.max(page.1));
        Placement {
            view: View::Camera {
                distance: 1.5 * long,
                tilt: tilt_degrees.to_radians(),
                axis,
                curl,
            },
            ..Placement::flat(page, degrees, scale, shift)
        }
    }

    /// The output image's size.
    pub fn frame(&self) -> (u32, u32) {
        self.frame
    }

    /// Whether every page pixel stays where it is.
    pub fn is_identity(&self) -> bool {
        self.view == View::Flat
            && self.angle == 0.0
            && self.scale == 1.0
            && self.shift == (0.0, 0.0)
            && (f64::from(self.frame.0), f64::from(self.frame.1)) == self.page
    }

    /// Where a point of the page (pixels, pixel `i` covering `[i, i + 1)`) lands in the image.
    pub fn forward(&self, x: f64, y: f64) -> (f64, f64) {
        let (pw, ph) = self.page;
        let (mut u, mut v) = (x - pw / 2.0, y - ph / 2.0);
        if let View::Camera {
            distance,
            tilt,
            axis,
            curl,
        } = self.view
        {
            let z = curl.map_or(0.0, |c| lift(&c, x, y, self.page));
            // Turn the point about the tilt axis (Rodrigues), then project from the camera.
            let (ax, ay) = (axis.cos(), axis.sin());
            let (s, c) = tilt.sin_cos();
            let dot = ax * u + ay * v;
            // k × p for k = (ax, ay, 0), p = (u, v, z).
            let cross = (ay * z, -ax * z, ax * v - ay * u);
            let px = u * c + cross.0 * s + ax * dot * (1.0 - c);
            let py = v * c + cross.1 * s + ay * dot * (1.0 - c);
            let pz = z * c + cross.2 * s;
            let k = distance / (distance - pz);
            u = px * k;
            v = py * k;
        }
        let (s, c) = self.angle.sin_cos();
        let (fw, fh) = (f64::from(self.frame.0), f64::from(self.frame.1));
        (
            fw / 2.0 + self.shift.0 + self.scale * (c * u - s * v),
            fh / 2.0 + self.shift.1 + self.scale * (s * u + c * v),
        )
    }

    /// The page point that lands on the image point `(fx, fy)`, by Newton's method from
    /// `start`; `None` if it does not converge.
    fn inverse_from(&self, fx: f64, fy: f64, start: (f64, f64)) -> Option<(f64, f64)> {
        let (mut x, mut y) = start;
        for _ in 0..12 {
            let (u, v) = self.forward(x, y);
            let (ex, ey) = (u - fx, v - fy);
            if ex.abs() < 1e-4 && ey.abs() < 1e-4 {
                return Some((x, y));
            }
            let h = 0.5;
            let (ux, vx) = self.forward(x + h, y);
            let (uy, vy) = self.forward(x, y + h);
            let (a, b, c, d) = ((ux - u) / h, (uy - u) / h, (vx - v) / h, (vy - v) / h);
            let det = a * d - b * c;
            if !det.is_finite() || det.abs() < 1e-9 {
                return None;
            }
            x -= (d * ex - b * ey) / det;
            y -= (-c * ex + a * ey) / det;
            if !(x.is_finite() && y.is_finite()) {
                return None;
            }
        }
        let (u, v) = self.forward(x, y);
        ((u - fx).abs() < 0.01 && (v - fy).abs() < 0.01).then_some((x, y))
    }

    /// The page points of a grid over the image, `step` pixels apart (`(cols, rows)` nodes).
    fn inverse_grid(&self, step: usize) -> (Vec<Option<(f64, f64)>>, usize, usize) {
        let (w, h) = (self.frame.0 as usize, self.frame.1 as usize);
        let (cols, rows) = (w / step + 2, h / step + 2);
        let mut grid = vec![None; cols * rows];
        let centre = (self.page.0 / 2.0, self.page.1 / 2.0);
        for j in 0..rows {
            let mut last = None;
            for i in 0..cols {
                let (fx, fy) = ((i * step) as f64, (j * step) as f64);
                let start = last
                    .or_else(|| j.checked_sub(1).and_then(|jj| grid[jj * cols + i]))
                    .unwrap_or(centre);
                let p = self
                    .inverse_from(fx, fy, start)
                    .or_else(|| self.inverse_from(fx, fy, centre));
                grid[j * cols + i] = p;
                last = p;
            }
        }
        (grid, cols, rows)
    }

    /// Draws `page` where it lies; elsewhere `background(x, y, outside)` gives the colour at
    /// image pixel `(x, y)`, `outside` being how far (page pixels) that point is off the page.
    pub fn draw(
        &self,
        page: &RgbImage,
        background: &dyn Fn(u32, u32, f64) -> [f64; 3],
    ) -> RgbImage {
        if self.is_identity() {
            return page.clone();
        }
        let step = 8usize;
        let (grid, cols, _) = self.inverse_grid(step);
        let (pw, ph) = self.page;
        RgbImage::from_fn(self.frame.0, self.frame.1, |x, y| {
            let (fx, fy) = (f64::from(x) + 0.5, f64::from(y) + 0.5);
            let (i, j) = ((fx as usize) / step, (fy as usize) / step);
            let (tx, ty) = (
                (fx - (i * step) as f64) / step as f64,
                (fy - (j * step) as f64) / step as f64,
            );
            let corners = [
                grid[j * cols + i],
                grid[j * cols + i + 1],
                grid[(j + 1) * cols + i],
                grid[(j + 1) * cols + i + 1],
            ];
            let point = match corners {
                [Some(a), Some(b), Some(c), Some(d)] => {
                    let top = (a.0 + (b.0 - a.0) * tx, a.1 + (b.1 - a.1) * tx);
                    let bottom = (c.0 + (d.0 - c.0) * tx, c.1 + (d.1 - c.1) * tx);
                    Some((
                        top.0 + (bottom.0 - top.0) * ty,
                        top.1 + (bottom.1 - top.1) * ty,
                    ))
                }
                _ => None,
            };
            let colour = point.and_then(|(px, py)| sample(page, px - 0.5, py - 0.5));
            match (colour, point) {
                (Some(c), _) => to_pixel(c),
                (None, Some((px, py))) => {
                    let off = (-px).max(px - pw).max(-py).max(py - ph).max(0.0);
                    to_pixel(background(x, y, off))
                }
                (None, None) => to_pixel(background(x, y, f64::INFINITY)),
            }
        })
    }
}

/// How far the curled edge lifts the page point `(x, y)` towards the camera, in pixels.
fn lift(c: &Curl, x: f64, y: f64, page: (f64, f64)) -> f64 {
    let (pw, ph) = page;
    let (d, across) = match c.side % 4 {
        0 => (y, ph),
        1 => (pw - x, pw),
        2 => (ph - y, ph),
        _ => (x, pw),
    };
    let t = (1.0 - d / (c.reach * across).max(1.0)).max(0.0);
    c.lift * ph * t * t
}

/// The colour at a point of `image` (bilinear, pixel centres at whole numbers), or `None`
/// outside it.
fn sample(image: &RgbImage, x: f64, y: f64) -> Option<[f64; 3]> {
    let (w, h) = (f64::from(image.width()), f64::from(image.height()));
    if !(x >= -0.5 && y >= -0.5 && x <= w - 0.5 && y <= h - 0.5) {
        return None;
    }
    let (x, y) = (x.clamp(0.0, w - 1.0), y.clamp(0.0, h - 1.0));
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

/// A scanner's background: the lid or bed of gray level `tone`, and when `shadow`, the shadow
/// the page's edge casts on it (darkest next to the page, gone within a few pixels).
pub fn bed(tone: f64, shadow: bool) -> impl Fn(u32, u32, f64) -> [f64; 3] {
    move |_, _, off| {
        let shade = if shadow && off.is_finite() {
            1.0 - 0.45 * (-off / 2.5).exp()
        } else {
            1.0
        };
        [tone * shade, tone * shade, (tone - 2.0).max(0.0) * shade]
    }
}

/// A wood-like table under a photographed page: slow stripes and fine grain.
pub fn table(frame: (u32, u32), rng: &mut Rng) -> impl Fn(u32, u32, f64) -> [f64; 3] + use<> {
    let colour = [
        rng.range(55.0, 85.0),
        rng.range(50.0, 75.0),
        rng.range(45.0, 65.0),
    ];
    let grain = rng.next_u64();
    let (w, h) = (f64::from(frame.0), f64::from(frame.1));
    move |x, y, _| {
        let (fx, fy) = (f64::from(x), f64::from(y));
        let stripe = (fy / h * 40.0 + (fx / w * 3.0).sin() * 2.0).sin() * 6.0;
        let fine = ((u64::from(x) * 31 + u64::from(y) * 17 + grain) % 13) as f64 - 6.0;
        colour.map(|c| c + stripe + fine)
    }
}

/// Where examkit prints a page's code, in millimetres: its right edge 20 mm from the page's right
/// edge and its top 6 mm from the top, 18 mm square (`examkit-pdf`'s page and copy codes).
const CODE_RIGHT_MM: f64 = 20.0;
const CODE_TOP_MM: f64 = 6.0;
const CODE_SIZE_MM: f64 = 18.0;

/// An ink blot over the page code in the top right corner (a spill, or a student's scribble), so
/// that no code can be read there: a dark ragged disc covering the code and its quiet zone.
pub fn blot_code(image: &mut RgbImage, dpi: u32, rng: &mut Rng) {
    let mm = f64::from(dpi) / 25.4;
    let (w, h) = (f64::from(image.width()), f64::from(image.height()));
    let cx = w - (CODE_RIGHT_MM + CODE_SIZE_MM / 2.0) * mm;
    let cy = (CODE_TOP_MM + CODE_SIZE_MM / 2.0) * mm;
    // Wide enough that the code's corners (at 0.71 of its side from the centre) stay inside
    // however far the edge wavers in (at most a fifth).
    let radius = 1.05 * CODE_SIZE_MM * mm;
    let waves: Vec<(f64, f64, f64)> = (0..4)
        .map(|k| {
            (
                f64::from(k + 3),
                rng.range(0.02, 0.05),
                rng.range(0.0, std::f64::consts::TAU),
            )
        })
        .collect();
    let ink = [
        rng.range(20.0, 40.0),
        rng.range(25.0, 45.0),
        rng.range(60.0, 90.0),
    ];
    let reach = radius * 1.35;
    let (x0, x1) = ((cx - reach).max(0.0) as u32, (cx + reach).min(w) as u32);
    let (y0, y1) = ((cy - reach).max(0.0) as u32, (cy + reach).min(h) as u32);
    for y in y0..y1 {
        for x in x0..x1 {
            let (dx, dy) = (f64::from(x) - cx, f64::from(y) - cy);
            let angle = dy.atan2(dx);
            let edge = radius
                * (1.0
                    + waves
                        .iter()
                        .map(|(k, a, ph)| a * (k * angle + ph).sin())
                        .sum::<f64>());
            let d = (dx * dx + dy * dy).sqrt();
            if d > edge + 1.5 {
                continue;
            }
            // A soft edge over a pixel and a half; the ink is a little uneven inside.
            let cover = ((edge + 1.5 - d) / 3.0).clamp(0.0, 1.0);
            let p = image.get_pixel_mut(x, y);
            for (c, i) in p.0.iter_mut().zip(ink) {
                let v = f64::from(*c) * (1.0 - cover) + i * cover;
                *c = v.round().clamp(0.0, 255.0) as u8;
            }
        }
    }
}

/// Grey, uneven paper: every pixel scaled by `tone` (1 = white) and by a slow variation of up
/// to ±`uneven` across the page.
pub fn paper(image: &mut RgbImage, tone: f64, uneven: f64, rng: &mut Rng) {
    if tone == 1.0 && uneven == 0.0 {
        return;
    }
    let (w, h) = (f64::from(image.width()), f64::from(image.height()));
    // Three slow waves at random angles and phases.
    let waves: Vec<(f64, f64, f64, f64)> = (0..3)
        .map(|_| {
            let a = rng.range(0.0, std::f64::consts::TAU);
            (
                a.cos(),
                a.sin(),
                rng.range(0.5, 2.0),
                rng.range(0.0, std::f64::consts::TAU),
            )
        })
        .collect();
    for (x, y, p) in image.enumerate_pixels_mut() {
        let (u, v) = (f64::from(x) / w, f64::from(y) / h);
        let field = waves
            .iter()
            .map(|(cx, cy, f, ph)| ((cx * u + cy * v) * f * std::f64::consts::TAU + ph).sin())
            .sum::<f64>()
            / 3.0;
        let k = tone * (1.0 + uneven * field);
        for c in p.0.iter_mut() {
            *c = (f64::from(*c) * k).round().clamp(0.0, 255.0) as u8;
        }
    }
}

/// A photo's light: falling off from a random side by 12–25 %, a vignette, and a warm tint.
pub fn light(image: &mut RgbImage, rng: &mut Rng) {
    let (w, h) = (f64::from(image.width()), f64::from(image.height()));
    let angle = rng.range(0.0, std::f64::consts::TAU);
    let (lx, ly) = (angle.cos(), angle.sin());
    let fall = rng.range(0.12, 0.25);
    let tint = [1.0, 0.975, 0.93];
    for (x, y, p) in image.enumerate_pixels_mut() {
        let (nx, ny) = (f64::from(x) / w - 0.5, f64::from(y) / h - 0.5);
        let light = 1.0 - fall * (0.5 + nx * lx + ny * ly) - 0.18 * (nx * nx + ny * ny);
        for (c, t) in p.0.iter_mut().zip(tint) {
            *c = (f64::from(*c) * light * t).round().clamp(0.0, 255.0) as u8;
        }
    }
}

/// Optical blur: a Gaussian of standard deviation `sigma` pixels.
pub fn blur(image: &mut RgbImage, sigma: f64) {
    if sigma <= 0.0 {
        return;
    }
    let r = (3.0 * sigma).ceil() as i64;
    let kernel: Vec<f64> = (-r..=r)
        .map(|i| (-(i * i) as f64 / (2.0 * sigma * sigma)).exp())
        .collect();
    let total: f64 = kernel.iter().sum();
    let kernel: Vec<f64> = kernel.iter().map(|k| k / total).collect();
    let (w, h) = (i64::from(image.width()), i64::from(image.height()));
    let at = |v: i64, len: i64| v.clamp(0, len - 1) as u32;
    let mut tmp = vec![[0f64; 3]; (w * h) as usize];
    for y in 0..h {
        for x in 0..w {
            let mut acc = [0.0; 3];
            for (k, wgt) in kernel.iter().enumerate() {
                let p = image.get_pixel(at(x + k as i64 - r, w), y as u32).0;
                for c in 0..3 {
                    acc[c] += f64::from(p[c]) * wgt;
                }
            }
            tmp[(y * w + x) as usize] = acc;
        }
    }
    for y in 0..h {
        for x in 0..w {
            let mut acc = [0.0; 3];
            for (k, wgt) in kernel.iter().enumerate() {
                let p = tmp[(i64::from(at(y + k as i64 - r, h)) * w + x) as usize];
                for c in 0..3 {
                    acc[c] += p[c] * wgt;
                }
            }
            image.put_pixel(x as u32, y as u32, to_pixel(acc));
        }
    }
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
    fn a_blot_covers_the_whole_page_code_and_nothing_far_from_it() {
        let dpi = 100;
        let mm = f64::from(dpi) / 25.4;
        let (w, h) = ((210.0 * mm) as u32, (297.0 * mm) as u32);
        for seed in 0..20 {
            let mut image = RgbImage::from_pixel(w, h, Rgb([255, 255, 255]));
            blot_code(&mut image, dpi, &mut Rng::new(seed));
            // Every pixel of the code's square, with a module of quiet zone, is dark.
            let left = f64::from(w) - (CODE_RIGHT_MM + CODE_SIZE_MM + 1.0) * mm;
            let right = f64::from(w) - (CODE_RIGHT_MM - 1.0) * mm;
            let (top, bottom) = (
                (CODE_TOP_MM - 1.0) * mm,
                (CODE_TOP_MM + CODE_SIZE_MM + 1.0) * mm,
            );
            for y in top as u32..bottom as u32 {
                for x in left as u32..right as u32 {
                    assert!(
                        image.get_pixel(x, y).0.iter().all(|&c| c < 100),
                        "seed {seed}: ({x}, {y})"
                    );
                }
            }
            // The page's middle and its left half are untouched.
            assert_eq!(image.get_pixel(w / 2, h / 2).0, [255, 255, 255]);
            assert!((0..h).all(|y| image.get_pixel(w / 3, y).0 == [255, 255, 255]));
        }
    }

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
    fn quarter_turns_swap_the_sides() {
        let mut image = RgbImage::from_pixel(4, 2, Rgb([255, 255, 255]));
        image.put_pixel(3, 0, Rgb([0, 0, 0]));
        let turned = quarter_turn(image.clone(), 90);
        assert_eq!(turned.dimensions(), (2, 4));
        assert_eq!(turned.get_pixel(1, 3).0, [0, 0, 0]);
        let half = quarter_turn(image, 180);
        assert_eq!(half.get_pixel(0, 1).0, [0, 0, 0]);
    }

    #[test]
    fn turned_points_follow_turned_pixels() {
        // The dark pixel (3, 0) of a 4 x 2 image, by its centre, after each turn.
        let mut image = RgbImage::from_pixel(4, 2, Rgb([255, 255, 255]));
        image.put_pixel(3, 0, Rgb([0, 0, 0]));
        for degrees in [0, 90, 180, 270] {
            let turned = quarter_turn(image.clone(), degrees);
            let (u, v) = turn_point(3.5 / 4.0, 0.5 / 2.0, degrees);
            let x = (u * f64::from(turned.width())) as u32;
            let y = (v * f64::from(turned.height())) as u32;
            assert_eq!(turned.get_pixel(x, y).0, [0, 0, 0], "{degrees}");
        }
    }

    /// A page with one dark dot at `(x, y)`.
    fn dotted(w: u32, h: u32, x: u32, y: u32) -> RgbImage {
        let mut page = RgbImage::from_pixel(w, h, Rgb([255, 255, 255]));
        for dy in 0..3 {
            for dx in 0..3 {
                page.put_pixel(x + dx, y + dy, Rgb([0, 0, 0]));
            }
        }
        page
    }

    fn darkest(image: &RgbImage) -> (f64, f64) {
        let (mut sx, mut sy, mut n) = (0.0, 0.0, 0.0);
        for (x, y, p) in image.enumerate_pixels() {
            let d = 255.0 - f64::from(p.0[0]);
            if d > 128.0 {
                sx += (f64::from(x) + 0.5) * d;
                sy += (f64::from(y) + 0.5) * d;
                n += d;
            }
        }
        (sx / n, sy / n)
    }

    #[test]
    fn ink_lands_where_the_forward_map_says() {
        let page = dotted(300, 400, 60, 300);
        let bed = bed(250.0, false);
        let placements = [
            Placement::flat((300, 400), 2.5, 0.95, (6.0, -4.0)),
            Placement::camera((300, 400), -1.0, 0.87, (3.0, 2.0), 8.0, 0.7, None),
            Placement::camera(
                (300, 400),
                1.0,
                0.88,
                (0.0, 0.0),
                6.0,
                2.0,
                Some(Curl {
                    side: 2,
                    lift: 0.03,
                    reach: 0.4,
                }),
            ),
        ];
        for p in placements {
            let drawn = p.draw(&page, &bed);
            let found = darkest(&drawn);
            let expect = p.forward(61.5, 301.5);
            assert!(
                (found.0 - expect.0).abs() < 0.6 && (found.1 - expect.1).abs() < 0.6,
                "{p:?}: {found:?} vs {expect:?}"
            );
        }
    }

    #[test]
    fn no_change_is_the_same_page_and_the_bed_shows_round_a_smaller_one() {
        let page = dotted(100, 140, 10, 10);
        let same = Placement::flat((100, 140), 0.0, 1.0, (0.0, 0.0));
        assert!(same.is_identity());
        assert_eq!(same.draw(&page, &bed(150.0, true)), page);
        let small = Placement::flat((100, 140), 0.0, 0.7, (0.0, 0.0));
        let drawn = small.draw(&page, &bed(150.0, true));
        // The bed in the corner; its shadow next to the page's edge; the page in the middle.
        assert_eq!(drawn.get_pixel(0, 0).0[0], 150);
        assert!(drawn.get_pixel(14, 70).0[0] < 120);
        assert_eq!(drawn.get_pixel(50, 70).0[0], 255);
    }

    #[test]
    fn paper_tone_blur_and_noise_change_pixels_as_asked() {
        let mut rng = Rng::new(3);
        let mut page = RgbImage::from_pixel(64, 64, Rgb([255, 255, 255]));
        paper(&mut page, 0.9, 0.0, &mut rng);
        assert_eq!(page.get_pixel(10, 10).0, [230, 230, 230]);
        let mut edge = dotted(20, 20, 9, 9);
        blur(&mut edge, 1.0);
        let centre = edge.get_pixel(10, 10).0[0];
        assert!(centre > 0 && centre < 200, "{centre}");
        assert!(edge.get_pixel(8, 10).0[0] < 255);
        let mut flat = RgbImage::from_pixel(200, 200, Rgb([200, 200, 200]));
        noise(&mut flat, 0.04, &mut rng);
        let values: Vec<f64> = flat.pixels().map(|p| f64::from(p.0[1])).collect();
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        assert!((mean - 200.0).abs() < 2.0, "{mean}");
    }
}
