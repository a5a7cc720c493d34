//! Small raster operations on grayscale pages and binary ink masks.

use image::GrayImage;

/// A binary mask (1 = ink) with the same layout as an image: row-major, `width * height`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mask {
    pub width: usize,
    pub height: usize,
    pub data: Vec<u8>,
}

impl Mask {
    pub fn new(width: usize, height: usize) -> Self {
        Self {
            width,
            height,
            data: vec![0; width * height],
        }
    }

    #[inline]
    pub fn get(&self, x: usize, y: usize) -> u8 {
        self.data[y * self.width + x]
    }

    pub fn count(&self) -> usize {
        self.data.iter().map(|&v| usize::from(v)).sum()
    }

    /// The mask rotated by `quarter_turns` x 90 degrees clockwise.
    pub fn rotate_quarter_turns(&self, quarter_turns: u32) -> Mask {
        let (w, h) = (self.width, self.height);
        match quarter_turns % 4 {
            1 => {
                let mut out = Mask::new(h, w);
                for y in 0..h {
                    for x in 0..w {
                        // (x, y) -> (h - 1 - y, x)
                        out.data[x * h + (h - 1 - y)] = self.data[y * w + x];
                    }
                }
                out
            }
            2 => {
                let mut out = self.clone();
                out.data.reverse();
                out
            }
            3 => {
                let mut out = Mask::new(h, w);
                for y in 0..h {
                    for x in 0..w {
                        // (x, y) -> (y, w - 1 - x)
                        out.data[(w - 1 - x) * h + y] = self.data[y * w + x];
                    }
                }
                out
            }
            _ => self.clone(),
        }
    }

    /// Square dilation with the given radius (a (2r+1)^2 structuring element).
    pub fn dilate(&self, radius: usize) -> Mask {
        if radius == 0 {
            return self.clone();
        }
        let (w, h) = (self.width, self.height);
        let mut tmp = Mask::new(w, h);
        for y in 0..h {
            let row = &self.data[y * w..(y + 1) * w];
            let out = &mut tmp.data[y * w..(y + 1) * w];
            running_max(row, out, radius);
        }
        let mut res = Mask::new(w, h);
        let mut col = vec![0u8; h];
        let mut col_out = vec![0u8; h];
        for x in 0..w {
            for (y, v) in col.iter_mut().enumerate() {
                *v = tmp.data[y * w + x];
            }
            running_max(&col, &mut col_out, radius);
            for (y, v) in col_out.iter().enumerate() {
                res.data[y * w + x] = *v;
            }
        }
        res
    }
}

/// out[i] = max(input[i - r ..= i + r]) for a 0/1 signal.
fn running_max(input: &[u8], out: &mut [u8], radius: usize) {
    let n = input.len();
    // Count of ones in the window, slid along.
    let mut count: usize = input
        .iter()
        .take(radius.min(n))
        .map(|&v| usize::from(v))
        .sum();
    for i in 0..n {
        if i + radius < n {
            count += usize::from(input[i + radius]);
        }
        if i > radius {
            count -= usize::from(input[i - radius - 1]);
        }
        out[i] = u8::from(count > 0);
    }
}

/// Luminance of the paper: a high percentile of the histogram (robust to ink and noise).
pub(crate) fn background_level(img: &GrayImage) -> u8 {
    let mut hist = [0usize; 256];
    for p in img.as_raw() {
        hist[usize::from(*p)] += 1;
    }
    let total: usize = hist.iter().sum();
    let target = total * 9 / 10;
    let mut acc = 0;
    for (v, n) in hist.iter().enumerate() {
        acc += n;
        if acc > target {
            return v as u8;
        }
    }
    255
}

/// Binarizes a page: 1 where the pixel is darker than the page's ink threshold.
pub(crate) fn ink_mask(img: &GrayImage) -> Mask {
    ink_mask_at(img, 0.72)
}

/// Binarizes a page: 1 where the pixel is darker than `cut` x the paper level.
pub(crate) fn ink_mask_at(img: &GrayImage, cut: f32) -> Mask {
    let bg = f32::from(background_level(img)).max(96.0);
    let t = (bg * cut) as u8;
    Mask {
        width: img.width() as usize,
        height: img.height() as usize,
        data: img.as_raw().iter().map(|&p| u8::from(p < t)).collect(),
    }
}

/// Fraction of pixels darker than mid-gray.
pub(crate) fn dark_fraction(img: &GrayImage) -> f32 {
    let n = img.as_raw().len().max(1);
    let dark = img.as_raw().iter().filter(|&&p| p < 128).count();
    dark as f32 / n as f32
}

/// Shrinks an image by an integer factor, averaging each `factor x factor` block.
pub(crate) fn downscale(img: &GrayImage, factor: u32) -> GrayImage {
    if factor <= 1 {
        return img.clone();
    }
    let (w, h) = (img.width() / factor, img.height() / factor);
    let (w, h) = (w.max(1), h.max(1));
    let src = img.as_raw();
    let sw = img.width() as usize;
    if factor == 2 && img.width() >= 2 && img.height() >= 2 {
        // Halving (image pyramids): whole 2 x 2 blocks, the same result as below, faster.
        let mut out = Vec::with_capacity(w as usize * h as usize);
        for oy in 0..h as usize {
            let top = &src[2 * oy * sw..2 * oy * sw + 2 * w as usize];
            let bottom = &src[(2 * oy + 1) * sw..(2 * oy + 1) * sw + 2 * w as usize];
            out.extend(
                top.chunks_exact(2)
                    .zip(bottom.chunks_exact(2))
                    .map(|(a, b)| {
                        ((u16::from(a[0]) + u16::from(a[1]) + u16::from(b[0]) + u16::from(b[1]))
                            / 4) as u8
                    }),
            );
        }
        return GrayImage::from_raw(w, h, out).unwrap_or_else(|| GrayImage::new(1, 1));
    }
    let f = factor as usize;
    let mut out = vec![0u8; w as usize * h as usize];
    for oy in 0..h as usize {
        for ox in 0..w as usize {
            let mut sum = 0u32;
            let mut n = 0u32;
            for y in oy * f..((oy + 1) * f).min(img.height() as usize) {
                let row = &src[y * sw..(y + 1) * sw];
                for &v in row.iter().take(((ox + 1) * f).min(sw)).skip(ox * f) {
                    sum += u32::from(v);
                    n += 1;
                }
            }
            out[oy * w as usize + ox] = (sum / n.max(1)) as u8;
        }
    }
    GrayImage::from_raw(w, h, out).unwrap_or_else(|| GrayImage::new(1, 1))
}

/// Enlarges an image by an integer factor with bilinear interpolation.
pub(crate) fn upscale(img: &GrayImage, factor: u32) -> GrayImage {
    if factor <= 1 {
        return img.clone();
    }
    let (sw, sh) = (img.width() as usize, img.height() as usize);
    let f = factor as usize;
    let (w, h) = (sw * f, sh * f);
    let src = img.as_raw();
    // Source positions and weights per output column, shared by all rows.
    let taps = |n: usize, len: usize| -> Vec<(usize, usize, f32)> {
        (0..n)
            .map(|o| {
                let s = ((o as f32 + 0.5) / f as f32 - 0.5).max(0.0);
                let i0 = (s.floor() as usize).min(len - 1);
                let i1 = (i0 + 1).min(len - 1);
                (i0, i1, s - i0 as f32)
            })
            .collect()
    };
    let xs = taps(w, sw);
    let ys = taps(h, sh);
    let mut out = vec![0u8; w * h];
    let mut row = vec![0f32; w];
    for (oy, &(y0, y1, ty)) in ys.iter().enumerate() {
        let (r0, r1) = (&src[y0 * sw..(y0 + 1) * sw], &src[y1 * sw..(y1 + 1) * sw]);
        for (v, &(x0, x1, tx)) in row.iter_mut().zip(xs.iter()) {
            let top = f32::from(r0[x0]) * (1.0 - tx) + f32::from(r0[x1]) * tx;
            let bottom = f32::from(r1[x0]) * (1.0 - tx) + f32::from(r1[x1]) * tx;
            *v = top * (1.0 - ty) + bottom * ty;
        }
        for (o, v) in out[oy * w..(oy + 1) * w].iter_mut().zip(row.iter()) {
            *o = (v + 0.5) as u8;
        }
    }
    GrayImage::from_raw(w as u32, h as u32, out).unwrap_or_else(|| GrayImage::new(1, 1))
}

/// The integer factor that brings the longer side of an image to at most `max_side`.
pub(crate) fn factor_for(width: u32, height: u32, max_side: u32) -> u32 {
    let long = width.max(height);
    long.div_ceil(max_side.max(1)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dilation_grows_a_point() {
        let mut m = Mask::new(7, 7);
        m.data[3 * 7 + 3] = 1;
        let d = m.dilate(2);
        assert_eq!(d.count(), 25);
        assert_eq!(d.get(1, 1), 1);
        assert_eq!(d.get(0, 0), 0);
    }

    #[test]
    fn halving_averages_whole_blocks() {
        let img = GrayImage::from_fn(5, 3, |x, y| image::Luma([(x * 40 + y * 7) as u8]));
        let half = downscale(&img, 2);
        assert_eq!(half.dimensions(), (2, 1));
        // (0 + 40 + 7 + 47) / 4 and (80 + 120 + 87 + 127) / 4, truncated.
        assert_eq!(half.as_raw(), &vec![23, 103]);
        let thin = downscale(&GrayImage::from_pixel(1, 4, image::Luma([9])), 2);
        assert_eq!(thin.as_raw(), &vec![9, 9]);
    }

    #[test]
    fn mask_rotation_matches_image_rotation() {
        let mut img = GrayImage::from_pixel(5, 3, image::Luma([255]));
        img.put_pixel(4, 0, image::Luma([0]));
        img.put_pixel(1, 2, image::Luma([0]));
        let m = ink_mask(&img);
        for t in 0..4 {
            let a = m.rotate_quarter_turns(t);
            let b = ink_mask(&crate::geometry::rotate_quarter_turns(&img, t));
            assert_eq!(a, b, "turns {t}");
        }
    }
}
