//! Box arithmetic for evidence: a model's hint read from thousandths ([`hint_rect`]), centres,
//! distances, areas and boxes grown by a margin.

use crate::marking::marker::Rect;

/// A box from the model's `[x0, y0, x1, y1]` in thousandths, or `None` when it is empty.
pub fn hint_rect(corners: [u32; 4]) -> Option<Rect> {
    let [x0, y0, x1, y1] = corners.map(|v| f64::from(v.min(1000)) / 1000.0);
    let (left, right) = (x0.min(x1), x0.max(x1));
    let (top, bottom) = (y0.min(y1), y0.max(y1));
    (right > left && bottom > top).then_some(Rect {
        x: left,
        y: top,
        width: right - left,
        height: bottom - top,
    })
}

pub(super) fn centre(r: &Rect) -> (f64, f64) {
    (r.x + r.width / 2.0, r.y + r.height / 2.0)
}

pub(super) fn distance(a: &Rect, b: &Rect) -> f64 {
    let (ax, ay) = centre(a);
    let (bx, by) = centre(b);
    ((ax - bx).powi(2) + (ay - by).powi(2)).sqrt()
}

/// `r` grown by `by` on every side.
pub(crate) fn grown(r: &Rect, by: f64) -> Rect {
    Rect {
        x: r.x - by,
        y: r.y - by,
        width: r.width + 2.0 * by,
        height: r.height + 2.0 * by,
    }
}

pub(super) fn area(r: &Rect) -> f64 {
    r.width.max(0.0) * r.height.max(0.0)
}
