//! Words read from a PDF page's own text layer (no OCR).
//!
//! The page is interpreted with `hayro-interpret` into a device that ignores drawing and keeps
//! every glyph it is asked to show (visible or invisible, as in OCR'd scans) together with its
//! Unicode text and its transform. Glyph boxes are the glyph's advance width by the font's
//! em box (0.2 em below the baseline to 0.8 em above it), mapped to displayed page space.
//! Glyphs are joined into words on whitespace and on gaps along the baseline.

use std::panic::{AssertUnwindSafe, catch_unwind};

use hayro::hayro_interpret::TransformExt;
use hayro::hayro_interpret::font::Glyph;
use hayro::hayro_interpret::{
    BlendMode, ClipPath, Context, Device, GlyphDrawMode, Image, InterpreterCache,
    InterpreterSettings, Paint, PathDrawMode, SoftMask, interpret_page,
};
use hayro::hayro_syntax::page::Page;
use kurbo::{Affine, BezPath, Point, Rect, Vec2};

use crate::geometry::NormBox;
use crate::orientation::Orientation;

/// Text found in a page's text layer.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextLayer {
    /// Words with boxes in normalized displayed-page coordinates.
    pub words: Vec<(String, NormBox)>,
    /// Fraction of the page area covered by drawn images (a scan embedded in a PDF covers ~1).
    pub image_coverage: f64,
    /// The dominant text direction, when there is text.
    pub orientation: Option<Orientation>,
}

#[derive(Debug, Clone)]
struct RawGlyph {
    text: String,
    bbox: Rect,
    origin: Point,
    /// Unit vector of the baseline direction in displayed space.
    dir: Vec2,
    /// Font size (length of one em) in displayed points.
    em: f64,
    /// Advance along the baseline, in displayed points.
    advance: f64,
}

#[derive(Default)]
struct Collector {
    glyphs: Vec<RawGlyph>,
    image_area: f64,
}

impl<'a> Device<'a> for Collector {
    fn set_soft_mask(&mut self, _: Option<SoftMask<'a>>) {}
    fn set_blend_mode(&mut self, _: BlendMode) {}
    fn draw_path(&mut self, _: &BezPath, _: Affine, _: &Paint<'a>, _: &PathDrawMode) {}
    fn push_clip_path(&mut self, _: &ClipPath) {}
    fn push_transparency_group(&mut self, _: f32, _: Option<SoftMask<'a>>, _: BlendMode) {}
    fn draw_glyph(
        &mut self,
        glyph: &Glyph<'a>,
        transform: Affine,
        glyph_transform: Affine,
        _: &Paint<'a>,
        _: &GlyphDrawMode,
    ) {
        let text = match glyph.as_unicode() {
            Some(hayro::hayro_interpret::hayro_cmap::BfString::Char(c)) => c.to_string(),
            Some(hayro::hayro_interpret::hayro_cmap::BfString::String(s)) => s,
            None => return,
        };
        let advance_units = match glyph {
            Glyph::Outline(g) => f64::from(g.advance_width().unwrap_or(500.0)),
            Glyph::Type3(_) => 500.0,
        };
        let advance_units = if advance_units.is_finite() && advance_units > 0.0 {
            advance_units
        } else {
            500.0
        };
        let m = transform * glyph_transform;
        let corners = [
            m * Point::new(0.0, -200.0),
            m * Point::new(advance_units, -200.0),
            m * Point::new(advance_units, 800.0),
            m * Point::new(0.0, 800.0),
        ];
        let mut bbox = Rect::from_points(corners[0], corners[2]);
        for c in corners {
            bbox = bbox.union_pt(c);
        }
        let along = m * Point::new(advance_units, 0.0) - m * Point::ORIGIN;
        let up = m * Point::new(0.0, 1000.0) - m * Point::ORIGIN;
        let advance = along.hypot();
        let em = up.hypot();
        if !(bbox.area().is_finite() && advance.is_finite() && em.is_finite()) || em <= 0.0 {
            return;
        }
        let dir = if advance > 0.0 {
            along / advance
        } else {
            Vec2::new(1.0, 0.0)
        };
        self.glyphs.push(RawGlyph {
            text,
            bbox,
            origin: m * Point::ORIGIN,
            dir,
            em,
            advance,
        });
    }
    fn draw_image(&mut self, _: Image<'a, '_>, transform: Affine) {
        let unit = Rect::new(0.0, 0.0, 1.0, 1.0);
        let area = transform.transform_rect_bbox(unit).area();
        if area.is_finite() {
            self.image_area += area;
        }
    }
    fn pop_clip_path(&mut self) {}
    fn pop_transparency_group(&mut self) {}
}

/// Reads the text layer of a PDF page. Returns an empty layer when interpretation fails.
pub(crate) fn extract(page: &Page<'_>) -> TextLayer {
    let (width, height) = page.render_dimensions();
    let (width, height) = (f64::from(width), f64::from(height));
    let result = catch_unwind(AssertUnwindSafe(|| {
        let cache = InterpreterCache::new();
        let settings = InterpreterSettings {
            render_annotations: false,
            ..InterpreterSettings::default()
        };
        let mut ctx = Context::new(
            page.initial_transform(true).to_kurbo(),
            Rect::new(0.0, 0.0, width, height),
            &cache,
            page.xref(),
            settings,
        );
        let mut collector = Collector::default();
        interpret_page(page, &mut ctx, &mut collector);
        collector
    }));
    let Ok(collector) = result else {
        return TextLayer::default();
    };
    let page_area = (width * height).max(1.0);
    TextLayer {
        orientation: dominant_orientation(&collector.glyphs),
        words: group_words(&collector.glyphs, width, height),
        image_coverage: (collector.image_area / page_area).min(1.0),
    }
}

fn direction_orientation(dir: Vec2) -> Orientation {
    // Displayed space has y pointing down: a baseline running down the page means the
    // content is turned 90 degrees clockwise.
    if dir.x.abs() >= dir.y.abs() {
        if dir.x >= 0.0 {
            Orientation::Up
        } else {
            Orientation::Down
        }
    } else if dir.y > 0.0 {
        Orientation::Right
    } else {
        Orientation::Left
    }
}

fn dominant_orientation(glyphs: &[RawGlyph]) -> Option<Orientation> {
    let mut votes = [0usize; 4];
    for g in glyphs.iter().filter(|g| !g.text.trim().is_empty()) {
        votes[direction_orientation(g.dir).quarter_turns() as usize] += 1;
    }
    let (best, count) = votes.iter().enumerate().max_by_key(|(_, c)| **c)?;
    if *count == 0 {
        return None;
    }
    Some(Orientation::from_quarter_turns(best as u32))
}

fn group_words(glyphs: &[RawGlyph], width: f64, height: f64) -> Vec<(String, NormBox)> {
    let mut words = Vec::new();
    let mut text = String::new();
    let mut bbox: Option<Rect> = None;
    let mut prev: Option<&RawGlyph> = None;
    let mut flush = |text: &mut String, bbox: &mut Option<Rect>| {
        if let Some(b) = bbox.take() {
            let t = text.trim();
            if !t.is_empty() {
                words.push((
                    t.to_string(),
                    NormBox::from_pixels(b.x0, b.y0, b.x1, b.y1, width, height),
                ));
            }
        }
        text.clear();
    };
    for g in glyphs {
        if g.text.chars().all(char::is_whitespace) {
            flush(&mut text, &mut bbox);
            prev = None;
            continue;
        }
        if let Some(p) = prev {
            let same_dir = p.dir.dot(g.dir) > 0.99;
            let expected = p.origin + p.dir * p.advance;
            let offset = g.origin - expected;
            let along = offset.dot(p.dir);
            let across = offset.cross(p.dir).abs();
            let em = p.em.max(g.em);
            let adjacent = same_dir && along > -0.35 * em && along < 0.15 * em && across < 0.3 * em;
            if !adjacent {
                flush(&mut text, &mut bbox);
            }
        }
        text.push_str(&g.text);
        bbox = Some(match bbox {
            Some(b) => b.union(g.bbox),
            None => g.bbox,
        });
        prev = Some(g);
    }
    flush(&mut text, &mut bbox);
    words
}
