//! Normalized page boxes and the conversions between pixel and normalized coordinates.
//!
//! Every box the crate returns is a [`NormBox`]: `x` and `y` are the left and top edges
//! divided by the displayed page width and height, with the origin at the top-left corner of
//! the page as displayed (after PDF `/Rotate` or image EXIF orientation). `width` and `height`
//! are fractions of the page size, so `x + width <= 1` and `y + height <= 1`.

use serde::{Deserialize, Serialize};

/// A rectangle in normalized displayed-page coordinates (top-left origin, 0..1 on both axes).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NormBox {
    /// Left edge divided by the displayed page width.
    pub x: f64,
    /// Top edge divided by the displayed page height.
    pub y: f64,
    /// Width as a fraction of the displayed page width.
    pub width: f64,
    /// Height as a fraction of the displayed page height.
    pub height: f64,
}

impl NormBox {
    /// The box covering the pixel rectangle `[x0, x1) x [y0, y1)` on a page of
    /// `page_width` x `page_height` pixels, clamped to the page.
    pub fn from_pixels(
        x0: f64,
        y0: f64,
        x1: f64,
        y1: f64,
        page_width: f64,
        page_height: f64,
    ) -> Self {
        let pw = page_width.max(1.0);
        let ph = page_height.max(1.0);
        Self::from_corners(x0 / pw, y0 / ph, x1 / pw, y1 / ph)
    }

    /// The box between two normalized corners (in any order), clamped to the page.
    pub fn from_corners(x0: f64, y0: f64, x1: f64, y1: f64) -> Self {
        let clamp = |v: f64| {
            if v.is_finite() {
                v.clamp(0.0, 1.0)
            } else {
                0.0
            }
        };
        let (left, right) = (clamp(x0.min(x1)), clamp(x0.max(x1)));
        let (top, bottom) = (clamp(y0.min(y1)), clamp(y0.max(y1)));
        Self {
            x: left,
            y: top,
            width: right - left,
            height: bottom - top,
        }
    }

    /// Right edge (`x + width`).
    pub fn right(&self) -> f64 {
        self.x + self.width
    }

    /// Bottom edge (`y + height`).
    pub fn bottom(&self) -> f64 {
        self.y + self.height
    }

    /// Area as a fraction of the page area.
    pub fn area(&self) -> f64 {
        self.width * self.height
    }

    /// Centre point `(x, y)`.
    pub fn center(&self) -> (f64, f64) {
        (self.x + self.width / 2.0, self.y + self.height / 2.0)
    }

    /// Whether the normalized point lies inside the box (edges included).
    pub fn contains_point(&self, x: f64, y: f64) -> bool {
        x >= self.x && x <= self.right() && y >= self.y && y <= self.bottom()
    }

    /// Whether `other` lies entirely inside this box, allowing `slack` on every edge.
    pub fn contains_box(&self, other: &NormBox, slack: f64) -> bool {
        other.x >= self.x - slack
            && other.y >= self.y - slack
            && other.right() <= self.right() + slack
            && other.bottom() <= self.bottom() + slack
    }

    /// Area of the intersection with `other` (0 when they do not overlap).
    pub fn intersection_area(&self, other: &NormBox) -> f64 {
        let w = self.right().min(other.right()) - self.x.max(other.x);
        let h = self.bottom().min(other.bottom()) - self.y.max(other.y);
        if w <= 0.0 || h <= 0.0 { 0.0 } else { w * h }
    }

    /// Whether the two boxes overlap with a positive area.
    pub fn intersects(&self, other: &NormBox) -> bool {
        self.intersection_area(other) > 0.0
    }

    /// The smallest box containing both boxes.
    pub fn union(&self, other: &NormBox) -> NormBox {
        NormBox::from_corners(
            self.x.min(other.x),
            self.y.min(other.y),
            self.right().max(other.right()),
            self.bottom().max(other.bottom()),
        )
    }
}

/// Rotates an image by a multiple of 90 degrees clockwise (`quarter_turns` modulo 4).
pub(crate) fn rotate_quarter_turns(img: &image::GrayImage, quarter_turns: u32) -> image::GrayImage {
    match quarter_turns % 4 {
        1 => image::imageops::rotate90(img),
        2 => image::imageops::rotate180(img),
        3 => image::imageops::rotate270(img),
        _ => img.clone(),
    }
}

/// Maps a normalized box on an image to the same region after the image is rotated by
/// `quarter_turns` x 90 degrees clockwise.
pub(crate) fn rotate_box_clockwise(b: &NormBox, quarter_turns: u32) -> NormBox {
    match quarter_turns % 4 {
        // A point (u, v) goes to (1 - v, u).
        1 => NormBox::from_corners(1.0 - b.bottom(), b.x, 1.0 - b.y, b.right()),
        2 => NormBox::from_corners(1.0 - b.right(), 1.0 - b.bottom(), 1.0 - b.x, 1.0 - b.y),
        // A point (u, v) goes to (v, 1 - u).
        3 => NormBox::from_corners(b.y, 1.0 - b.right(), b.bottom(), 1.0 - b.x),
        _ => *b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quarter_turn_boxes_follow_pixels() {
        // A 4x2 image with one dark pixel at (3, 0); rotating it must move the box with it.
        let mut img = image::GrayImage::from_pixel(4, 2, image::Luma([255]));
        img.put_pixel(3, 0, image::Luma([0]));
        let b = NormBox::from_pixels(3.0, 0.0, 4.0, 1.0, 4.0, 2.0);
        for turns in 0..4 {
            let r = rotate_quarter_turns(&img, turns);
            let rb = rotate_box_clockwise(&b, turns);
            let (cx, cy) = rb.center();
            let px = (cx * f64::from(r.width())).floor() as u32;
            let py = (cy * f64::from(r.height())).floor() as u32;
            assert_eq!(r.get_pixel(px, py).0[0], 0, "turns {turns}");
        }
    }
}
