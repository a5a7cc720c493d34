//! The truth about a scan (`--truth PATH`): for every output page, where each written answer's
//! ink and each answer space left blank ended up, in that page's final normalised displayed
//! coordinates (after every geometric effect and the quarter turn), and where they are on the
//! clean page.
//!
//! ```json
//! { "pages": [ { "page": 2, "width": 1240, "height": 1754, "turn": 180,
//!     "skewDegrees": -1.3, "scale": 0.96, "photo": false, "outline": [[x, y], …],
//!     "written": [ { "question": 1, "questionId": "8a83…", "part": "a",
//!                    "bbox": {"x": …, "y": …, "width": …, "height": …},
//!                    "lines": [ {…}, … ], "clean": {…} } ],
//!     "blank": [ { "question": 2, "questionId": "e0f0…", "part": "a",
//!                  "bbox": {…}, "corners": [[x, y], [x, y], [x, y], [x, y]], "clean": {…} } ] } ] }
//! ```
//!
//! `bbox` of writing is the box of the ink of every letter of the part on that page, each
//! letter's box carried through the page's geometry; `lines` is the same per written line, top
//! to bottom. A blank space's `corners` are its clean-page corners (top-left, top-right,
//! bottom-right, bottom-left) carried across, and `bbox` their box. `clean` is the box on the
//! clean page, normalised to it.

use serde::Serialize;

use crate::effects::{Placement, turn_point};

/// A box in normalised coordinates (top-left origin, 0..1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

impl Rect {
    fn around(points: &[(f64, f64)]) -> Rect {
        let (mut x0, mut y0, mut x1, mut y1) = (
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        );
        for &(x, y) in points {
            (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
        }
        let clamp = |v: f64| v.clamp(0.0, 1.0);
        let (x0, y0, x1, y1) = (clamp(x0), clamp(y0), clamp(x1), clamp(y1));
        Rect {
            x: x0,
            y: y0,
            width: (x1 - x0).max(0.0),
            height: (y1 - y0).max(0.0),
        }
    }
}

/// All output pages.
#[derive(Debug, Clone, Serialize)]
pub struct Truth {
    /// One entry per output page, in order.
    pub pages: Vec<PageTruth>,
}

/// One output page.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageTruth {
    /// The page, 1-based.
    pub page: u32,
    /// Width of the output image in pixels.
    pub width: u32,
    /// Height of the output image in pixels.
    pub height: u32,
    /// The quarter turn applied last, degrees clockwise.
    pub turn: u32,
    /// The small turn of the page, degrees clockwise.
    pub skew_degrees: f64,
    /// The page's scale in the image.
    pub scale: f64,
    /// Whether it is a phone photo.
    pub photo: bool,
    /// The page's corners in the image: top-left, top-right, bottom-right, bottom-left of the
    /// clean page.
    pub outline: [[f64; 2]; 4],
    /// The written answers' ink on this page.
    pub written: Vec<Written>,
    /// The answer spaces on this page left blank.
    pub blank: Vec<Blank>,
}

/// A written answer part's ink on one page.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Written {
    /// The question's number on the paper.
    pub question: u32,
    /// The bank question's id.
    pub question_id: String,
    /// The part's id.
    pub part: String,
    /// The box of all the part's ink on this page.
    pub bbox: Rect,
    /// The box of each written line's ink, top to bottom.
    pub lines: Vec<Rect>,
    /// The box of the ink on the clean page.
    pub clean: Rect,
}

/// An answer space left blank, on one page.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Blank {
    /// The question's number on the paper.
    pub question: u32,
    /// The bank question's id.
    pub question_id: String,
    /// The part's id; `None` for the remaining space of a question's shared writing space.
    pub part: Option<String>,
    /// The box of the space's corners on the output page.
    pub bbox: Rect,
    /// The space's corners on the output page: top-left, top-right, bottom-right, bottom-left
    /// of the clean page's rectangle.
    pub corners: [[f64; 2]; 4],
    /// The space on the clean page.
    pub clean: Rect,
}

/// Carries page pixels to an output page's normalised coordinates.
pub struct Carry<'a> {
    /// Where the page lies in the image.
    pub placement: &'a Placement,
    /// The page's size in pixels.
    pub page: (f64, f64),
    /// The quarter turn applied last.
    pub turn: u32,
}

impl Carry<'_> {
    /// A page pixel point on the output page, normalised.
    pub fn point(&self, x: f64, y: f64) -> (f64, f64) {
        let (fx, fy) = self.placement.forward(x, y);
        let (fw, fh) = self.placement.frame();
        turn_point(fx / f64::from(fw), fy / f64::from(fh), self.turn)
    }

    /// The box around the output-page images of boxes `[x0, y0, x1, y1]` (page pixels).
    pub fn boxes(&self, boxes: &[[f64; 4]]) -> Rect {
        let points: Vec<(f64, f64)> = boxes
            .iter()
            .flat_map(|b| [(b[0], b[1]), (b[2], b[1]), (b[2], b[3]), (b[0], b[3])])
            .map(|(x, y)| self.point(x, y))
            .collect();
        Rect::around(&points)
    }

    /// The box around boxes on the clean page, normalised to it.
    pub fn clean(&self, boxes: &[[f64; 4]]) -> Rect {
        let points: Vec<(f64, f64)> = boxes
            .iter()
            .flat_map(|b| [(b[0], b[1]), (b[2], b[3])])
            .map(|(x, y)| (x / self.page.0, y / self.page.1))
            .collect();
        Rect::around(&points)
    }

    /// A rectangle of the page (pixels) as corners on the output page, and their box.
    pub fn corners(&self, b: [f64; 4]) -> ([[f64; 2]; 4], Rect) {
        let pts =
            [(b[0], b[1]), (b[2], b[1]), (b[2], b[3]), (b[0], b[3])].map(|(x, y)| self.point(x, y));
        (pts.map(|(x, y)| [x, y]), Rect::around(&pts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_are_carried_and_turned() {
        let placement = Placement::flat((100, 200), 0.0, 1.0, (0.0, 0.0));
        let carry = Carry {
            placement: &placement,
            page: (100.0, 200.0),
            turn: 90,
        };
        // A box in the top-left quarter ends up in the top-right quarter after a quarter turn.
        let r = carry.boxes(&[[10.0, 20.0, 30.0, 40.0]]);
        assert!(
            (r.x - 0.8).abs() < 1e-9 && (r.y - 0.1).abs() < 1e-9,
            "{r:?}"
        );
        assert!(
            (r.width - 0.1).abs() < 1e-9 && (r.height - 0.2).abs() < 1e-9,
            "{r:?}"
        );
        let c = carry.clean(&[[10.0, 20.0, 30.0, 40.0]]);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(c.x, 0.1) && close(c.y, 0.1) && close(c.width, 0.2) && close(c.height, 0.1));
        let (corners, bbox) = carry.corners([0.0, 0.0, 100.0, 200.0]);
        assert_eq!(corners[0], [1.0, 0.0]);
        assert_eq!(
            (bbox.x, bbox.y, bbox.width, bbox.height),
            (0.0, 0.0, 1.0, 1.0)
        );
    }
}
