//! Evidence-box geometry in the `normalized-top-left` coordinate system of the displayed page.

use crate::limits::BOX_TOLERANCE;

/// What is wrong with a box; `field` indexes `[x, y, width, height]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum BoxDefect {
    /// `x` or `y` below 0 or above 1.
    Outside { field: usize },
    /// `width` or `height` not above 0.
    NotPositive { field: usize },
    /// `origin + extent` past the far edge (reported at the extent, `field`).
    PastEdge {
        field: usize,
        origin: usize,
        extent: f64,
    },
}

/// Checks a box `[x, y, width, height]`; `None` marks a number that already failed its type check.
/// Sums are only checked when both of their numbers passed their own checks.
pub(crate) fn check_box(values: [Option<f64>; 4]) -> Vec<BoxDefect> {
    let mut defects = Vec::new();
    let mut ok = [false; 4];
    for (field, value) in values.iter().enumerate() {
        let Some(v) = *value else { continue };
        if field < 2 {
            if (0.0..=1.0).contains(&v) {
                ok[field] = true;
            } else {
                defects.push(BoxDefect::Outside { field });
            }
        } else if v > 0.0 {
            ok[field] = true;
        } else {
            defects.push(BoxDefect::NotPositive { field });
        }
    }
    for (origin, field) in [(0, 2), (1, 3)] {
        if let (true, true, Some(o), Some(e)) =
            (ok[origin], ok[field], values[origin], values[field])
        {
            let extent = o + e;
            if extent > 1.0 + BOX_TOLERANCE {
                defects.push(BoxDefect::PastEdge {
                    field,
                    origin,
                    extent,
                });
            }
        }
    }
    defects.sort_by_key(|d| match d {
        BoxDefect::Outside { field }
        | BoxDefect::NotPositive { field }
        | BoxDefect::PastEdge { field, .. } => *field,
    });
    defects
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(x: f64, y: f64, w: f64, h: f64) -> Vec<BoxDefect> {
        check_box([Some(x), Some(y), Some(w), Some(h)])
    }

    #[test]
    fn exact_edges_and_float_sums_fit() {
        assert!(check(0.0, 0.0, 1.0, 1.0).is_empty());
        assert!(check(0.7, 0.1, 0.3, 0.9).is_empty());
        assert!(check(0.1 + 0.2, 0.0, 0.7, 0.5).is_empty());
        assert!(check(1.0 - 1e-10, 0.0, 1e-9, 0.5).is_empty());
    }

    #[test]
    fn reports_each_defect_at_its_number() {
        assert_eq!(
            check(-0.1, 0.0, 0.5, 0.5),
            vec![BoxDefect::Outside { field: 0 }]
        );
        assert_eq!(
            check(0.0, 0.0, 0.0, -1.0),
            vec![
                BoxDefect::NotPositive { field: 2 },
                BoxDefect::NotPositive { field: 3 }
            ]
        );
        assert_eq!(check(0.5, 0.0, 0.5000001, 0.5).len(), 1);
        assert!(matches!(
            check(0.5, 0.0, 0.5000001, 0.5)[0],
            BoxDefect::PastEdge {
                field: 2,
                origin: 0,
                ..
            }
        ));
        // An origin that is already outside is not also summed.
        assert_eq!(
            check(1.5, 0.0, 0.5, 0.5),
            vec![BoxDefect::Outside { field: 0 }]
        );
        assert!(check_box([None, Some(0.0), Some(2.0), Some(0.1)]).is_empty());
    }
}
