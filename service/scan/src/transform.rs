//! The map from the clean page to a scanned page, as a comparison reports it.
//!
//! [`PageTransform`] is a 3 × 3 matrix acting on **normalised** coordinates: a point `(x, y)` of
//! the clean page (0..1 across its width and height, top-left origin) goes to
//! `((m00 x + m01 y + m02) / w, (m10 x + m11 y + m12) / w)` with `w = m20 x + m21 y + m22`, a
//! point of the work page in its normalised **displayed** coordinates (the coordinates of every
//! [`NormBox`] the crate returns). A quarter turn, skew, scale, shift and, for a photo,
//! perspective are all in it. Boxes are carried across as the bounding box of their four mapped
//! corners ([`PageTransform::to_work`], [`PageTransform::to_clean`]).

use serde::{Deserialize, Serialize};

use crate::geometry::NormBox;
use crate::homography::Homography;

/// How the transform of a comparison was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FitKind {
    /// Stored by the earlier five-parameter alignment (rotation, a scale and a shift per axis),
    /// which recorded no transform. Comparisons stored before the transform was reported read
    /// back as this.
    #[default]
    Legacy,
    /// No transform: the pages could not be aligned (`note` says why).
    None,
    /// The clean page had too little print to align on: the work page's frame was taken as the
    /// page.
    Frame,
    /// Rotation, one scale and a shift, fitted to places of the print (a flatbed scan).
    Similarity,
    /// A general linear map and a shift (a scan with unequal scales or shear).
    Affine,
    /// A full perspective map (a photograph).
    Homography,
}

/// A plane map from clean-page normalised coordinates to work-page normalised displayed
/// coordinates; serialised as its 3 × 3 matrix, row by row (`[[m00, m01, m02], [m10, m11,
/// m12], [m20, m21, m22]]`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PageTransform {
    /// The matrix, row by row.
    pub matrix: [[f64; 3]; 3],
}

impl PageTransform {
    /// The identity: the work page lies exactly on the clean page.
    pub const IDENTITY: PageTransform = PageTransform {
        matrix: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
    };

    pub(crate) fn from_homography(h: &Homography) -> PageTransform {
        let m = h.normalised().0;
        PageTransform {
            matrix: [[m[0], m[1], m[2]], [m[3], m[4], m[5]], [m[6], m[7], m[8]]],
        }
    }

    pub(crate) fn homography(&self) -> Homography {
        let m = &self.matrix;
        Homography([
            m[0][0], m[0][1], m[0][2], m[1][0], m[1][1], m[1][2], m[2][0], m[2][1], m[2][2],
        ])
    }

    /// The map the other way (work page → clean page), if the matrix is invertible.
    pub fn inverse(&self) -> Option<PageTransform> {
        self.homography()
            .inverse()
            .map(|h| PageTransform::from_homography(&h))
    }

    /// Where a point of the clean page lies on the work page (normalised coordinates), or
    /// `None` if the map sends it to infinity.
    pub fn to_work_point(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        self.homography().apply(x, y)
    }

    /// Where a point of the work page lies on the clean page.
    pub fn to_clean_point(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        self.homography().inverse()?.apply(x, y)
    }

    /// A box of the clean page (an answer space, say) on the work page: the bounding box of
    /// its four mapped corners, clamped to the page. `None` if a corner cannot be mapped.
    pub fn to_work(&self, b: &NormBox) -> Option<NormBox> {
        map_box(&self.homography(), b)
    }

    /// A box of the work page (added ink, say) on the clean page: the bounding box of its four
    /// corners mapped back, clamped to the page. `None` if the matrix cannot be inverted or a
    /// corner cannot be mapped.
    pub fn to_clean(&self, b: &NormBox) -> Option<NormBox> {
        map_box(&self.homography().inverse()?, b)
    }
}

fn map_box(h: &Homography, b: &NormBox) -> Option<NormBox> {
    let corners = [
        (b.x, b.y),
        (b.right(), b.y),
        (b.right(), b.bottom()),
        (b.x, b.bottom()),
    ];
    let mut lo = (f64::INFINITY, f64::INFINITY);
    let mut hi = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    for (x, y) in corners {
        let (u, v) = h.apply(x, y)?;
        lo = (lo.0.min(u), lo.1.min(v));
        hi = (hi.0.max(u), hi.1.max(v));
    }
    Some(NormBox::from_corners(lo.0, lo.1, hi.0, hi.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &NormBox, b: &NormBox) -> bool {
        (a.x - b.x).abs() < 1e-9
            && (a.y - b.y).abs() < 1e-9
            && (a.width - b.width).abs() < 1e-9
            && (a.height - b.height).abs() < 1e-9
    }

    #[test]
    fn boxes_follow_a_quarter_turn_both_ways() {
        // Content turned 90 degrees clockwise: (x, y) -> (1 - y, x).
        let t = PageTransform {
            matrix: [[0.0, -1.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]],
        };
        let b = NormBox::from_corners(0.1, 0.2, 0.4, 0.3);
        let on_work = t.to_work(&b).unwrap_or(b);
        assert!(
            close(&on_work, &NormBox::from_corners(0.7, 0.1, 0.8, 0.4)),
            "{on_work:?}"
        );
        let back = t.to_clean(&on_work).unwrap_or(on_work);
        assert!(close(&back, &b), "{back:?}");
        assert_eq!(t.to_work_point(0.0, 0.0), Some((1.0, 0.0)));
        let p = t.to_clean_point(1.0, 0.0).unwrap_or((9.0, 9.0));
        assert!(p.0.abs() < 1e-12 && p.1.abs() < 1e-12);
    }

    #[test]
    fn a_turned_box_maps_to_the_box_of_its_corners() {
        let h = Homography::similarity(0.1, 1.0, 0.5, 0.5, 0.5, 0.5);
        let t = PageTransform::from_homography(&h);
        let b = NormBox::from_corners(0.4, 0.4, 0.6, 0.6);
        let m = t.to_work(&b).unwrap_or(b);
        // A turned square's bounding box is larger than the square.
        assert!(m.width > b.width && m.contains_box(&b, 1e-9), "{m:?}");
        // Boxes are clamped to the page.
        let edge = NormBox::from_corners(0.0, 0.0, 0.1, 0.1);
        let m = t.to_work(&edge).unwrap_or(edge);
        assert!(m.x >= 0.0 && m.y >= 0.0);
    }

    #[test]
    fn singular_or_infinite_maps_give_none() {
        let flat = PageTransform {
            matrix: [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]],
        };
        assert!(flat.inverse().is_none());
        assert!(
            flat.to_clean(&NormBox::from_corners(0.1, 0.1, 0.2, 0.2))
                .is_none()
        );
        // A perspective map whose horizon crosses the box.
        let horizon = PageTransform {
            matrix: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [-2.0, 0.0, 1.0]],
        };
        assert!(
            horizon
                .to_work(&NormBox::from_corners(0.2, 0.2, 0.8, 0.4))
                .is_none()
        );
    }

    #[test]
    fn serialised_as_a_matrix_and_kind_names_are_stable() {
        let json = serde_json::to_string(&PageTransform::IDENTITY).unwrap_or_default();
        assert_eq!(json, "[[1.0,0.0,0.0],[0.0,1.0,0.0],[0.0,0.0,1.0]]");
        let back: Option<PageTransform> = serde_json::from_str(&json).ok();
        assert_eq!(back, Some(PageTransform::IDENTITY));
        let names: Vec<String> = [
            FitKind::Legacy,
            FitKind::None,
            FitKind::Frame,
            FitKind::Similarity,
            FitKind::Affine,
            FitKind::Homography,
        ]
        .iter()
        .map(|k| serde_json::to_string(k).unwrap_or_default())
        .collect();
        assert_eq!(
            names,
            [
                "\"legacy\"",
                "\"none\"",
                "\"frame\"",
                "\"similarity\"",
                "\"affine\"",
                "\"homography\""
            ]
        );
        assert!(serde_json::from_str::<PageTransform>("[[1,0],[0,1]]").is_err());
        assert!(serde_json::from_str::<FitKind>("\"ransac\"").is_err());
    }
}
