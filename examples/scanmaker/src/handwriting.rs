//! Writing answers by hand: text in a handwriting font laid on the ruled lines of an answer
//! space, with a wobbling baseline, uneven size and spacing, and pen ink.

use ab_glyph::{Font, FontVec, GlyphId, PxScale, ScaleFont, point};
use image::RgbImage;

use crate::effects::Rng;
use crate::paper::Region;

/// The distance between two ruled answer lines on examkit papers, in millimetres.
const LINE_PITCH_MM: f64 = 8.0;
/// How far above a ruled line the writing sits, in millimetres.
const BASELINE_LIFT_MM: f64 = 1.3;
/// The font size of the writing (its em), in millimetres.
const WRITING_EM_MM: f64 = 7.0;

/// A pen: a handwriting font, an ink and the page resolution.
pub struct Pen {
    font: FontVec,
    ink: [f64; 3],
    px_per_mm: f64,
}

/// A line of writing as drawn: its page and the pixel box `[x0, y0, x1, y1]` of each letter's
/// ink (page pixels, pixel `i` covering `[i, i + 1)`).
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenLine {
    /// The page, 1-based.
    pub page: u32,
    /// The slot (ruled line) it was written on, as an index into the slots given to
    /// [`Pen::write`].
    pub slot: usize,
    /// The box of each letter's ink.
    pub glyphs: Vec<[f64; 4]>,
}

/// Where the next line of writing goes: a ruled line of an answer space.
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    /// The page, 1-based.
    pub page: u32,
    /// The left and right ends of the line, in pixels.
    pub left: f64,
    /// See `left`.
    pub right: f64,
    /// The baseline of the writing, in pixels.
    pub baseline: f64,
}

impl Pen {
    /// A pen writing with the font file's bytes at `dpi`, in dark blue or black ink chosen by
    /// `rng`.
    pub fn new(font: Vec<u8>, dpi: u32, rng: &mut Rng) -> Result<Pen, String> {
        let font = FontVec::try_from_vec(font).map_err(|e| format!("not a usable font: {e}"))?;
        let ink = if rng.unit() < 0.6 {
            // Blue-black ball-point.
            [
                rng.range(15.0, 35.0),
                rng.range(25.0, 45.0),
                rng.range(95.0, 130.0),
            ]
        } else {
            [rng.range(20.0, 35.0); 3]
        };
        Ok(Pen {
            font,
            ink,
            px_per_mm: f64::from(dpi) / 25.4,
        })
    }

    /// The ruled lines of answer-space regions, in order: one slot per 8 mm of each region's
    /// height, the writing just above each line. `pages` gives each page's size in pixels.
    pub fn slots(&self, regions: &[Region], pages: &[(u32, u32)]) -> Vec<Slot> {
        let pitch = LINE_PITCH_MM * self.px_per_mm;
        let mut out = Vec::new();
        for r in regions {
            let Some(&(w, h)) = pages.get((r.page as usize).wrapping_sub(1)) else {
                continue;
            };
            let (w, h) = (f64::from(w), f64::from(h));
            let (top, height) = (r.y * h, r.height * h);
            let lines = (height / pitch + 0.25).floor() as usize;
            for k in 0..lines {
                out.push(Slot {
                    page: r.page,
                    left: r.x * w + 2.0 * self.px_per_mm,
                    right: (r.x + r.width) * w - 3.0 * self.px_per_mm,
                    baseline: top + (k as f64 + 1.0) * pitch - BASELINE_LIFT_MM * self.px_per_mm,
                });
            }
        }
        out
    }

    /// The one line of writing in the space above a name line (whose bottom is just below the
    /// line): `None` when its page is not among `pages`.
    pub fn name_slot(&self, space: &Region, pages: &[(u32, u32)]) -> Option<Slot> {
        let &(w, h) = pages.get((space.page as usize).wrapping_sub(1))?;
        let (w, h) = (f64::from(w), f64::from(h));
        Some(Slot {
            page: space.page,
            left: space.x * w + 2.0 * self.px_per_mm,
            right: (space.x + space.width) * w - 3.0 * self.px_per_mm,
            // The region ends 1.5 mm below the line.
            baseline: (space.y + space.height) * h - (1.5 + BASELINE_LIFT_MM) * self.px_per_mm,
        })
    }

    /// Writes `text` on the slots from `first` on (wrapping words, starting a new line at each
    /// `\n`), drawing on `pages` (indexed by page − 1), and returns the next free slot. Text that
    /// does not fit is dropped, and the number of dropped words is returned too, with the lines
    /// drawn.
    pub fn write(
        &self,
        pages: &mut [RgbImage],
        slots: &[Slot],
        first: usize,
        text: &str,
        rng: &mut Rng,
    ) -> (usize, usize, Vec<WrittenLine>) {
        let mut slot = first;
        let mut dropped = 0;
        let mut written = Vec::new();
        for paragraph in text.lines() {
            let words: Vec<String> = paragraph.split_whitespace().map(plain).collect();
            if words.is_empty() {
                continue;
            }
            let mut next = 0;
            while next < words.len() {
                let Some(line) = slots.get(slot) else {
                    dropped += words.len() - next;
                    break;
                };
                slot += 1;
                let size = WRITING_EM_MM * self.px_per_mm * rng.range(0.9, 1.08);
                let indent = rng.range(0.0, 2.5) * self.px_per_mm;
                let room = line.right - line.left - indent;
                // As many words as fit (at least one, cut to the room if it alone is too long).
                let space = self.advance(' ', size) * 1.15;
                let mut width = 0.0;
                let mut take = 0;
                for word in &words[next..] {
                    let w = self.word_width(word, size);
                    let extra = if take == 0 { w } else { space + w };
                    if take > 0 && width + extra > room {
                        break;
                    }
                    width += extra;
                    take += 1;
                }
                let Some(page) = pages.get_mut((line.page as usize).wrapping_sub(1)) else {
                    next += take;
                    continue;
                };
                let glyphs = self.draw_line(
                    page,
                    line,
                    indent,
                    &words[next..next + take],
                    size,
                    space,
                    rng,
                );
                if !glyphs.is_empty() {
                    written.push(WrittenLine {
                        page: line.page,
                        slot: slot - 1,
                        glyphs,
                    });
                }
                next += take;
            }
        }
        (slot, dropped, written)
    }

    fn glyph(&self, c: char) -> GlyphId {
        self.font.glyph_id(c)
    }

    fn advance(&self, c: char, size: f64) -> f64 {
        f64::from(
            self.font
                .as_scaled(PxScale::from(size as f32))
                .h_advance(self.glyph(c)),
        )
    }

    fn word_width(&self, word: &str, size: f64) -> f64 {
        word.chars().map(|c| self.advance(c, size)).sum()
    }

    /// Draws one line of words, its baseline wobbling and sloping a little; returns the box of
    /// each letter's ink.
    #[allow(clippy::too_many_arguments)]
    fn draw_line(
        &self,
        page: &mut RgbImage,
        line: &Slot,
        indent: f64,
        words: &[String],
        size: f64,
        space: f64,
        rng: &mut Rng,
    ) -> Vec<[f64; 4]> {
        let mut glyphs = Vec::new();
        let mm = self.px_per_mm;
        let slope = rng.range(-0.012, 0.012);
        let lift = rng.range(-0.5, 0.6) * mm;
        let wave = (
            rng.range(0.25, 0.5) * mm,
            rng.range(25.0, 60.0) * mm,
            rng.range(0.0, 6.3),
        );
        let x0 = line.left + indent;
        let mut x = x0;
        for (i, word) in words.iter().enumerate() {
            if i > 0 {
                x += space * rng.range(0.85, 1.35);
            }
            for c in word.chars() {
                if x > line.right + 2.0 * mm {
                    return glyphs;
                }
                let glyph_size = size * rng.range(0.96, 1.04);
                let dx = x - x0;
                let y = line.baseline - lift
                    + slope * dx
                    + wave.0 * (dx / wave.1 * std::f64::consts::TAU + wave.2).sin()
                    + rng.range(-0.18, 0.18) * mm;
                let darkness = rng.range(0.82, 1.0);
                // A ball-point line is a little heavier than the font's outline: draw it twice,
                // a pen's width apart.
                let a = self.draw_glyph(page, c, x, y, glyph_size, darkness);
                let b =
                    self.draw_glyph(page, c, x + 0.18 * mm, y + 0.05 * mm, glyph_size, darkness);
                if let Some(g) = match (a, b) {
                    (Some(a), Some(b)) => Some([
                        a[0].min(b[0]),
                        a[1].min(b[1]),
                        a[2].max(b[2]),
                        a[3].max(b[3]),
                    ]),
                    (a, b) => a.or(b),
                } {
                    glyphs.push(g);
                }
                x += self.advance(c, glyph_size) + rng.range(-0.12, 0.15) * mm;
            }
        }
        glyphs
    }

    /// Draws one glyph; returns the box of its ink on the page, if any.
    fn draw_glyph(
        &self,
        page: &mut RgbImage,
        c: char,
        x: f64,
        y: f64,
        size: f64,
        darkness: f64,
    ) -> Option<[f64; 4]> {
        let id = self.glyph(c);
        if id.0 == 0 {
            // The font has no such character: leave a gap rather than a box.
            return None;
        }
        let glyph =
            id.with_scale_and_position(PxScale::from(size as f32), point(x as f32, y as f32));
        let outline = self.font.outline_glyph(glyph)?;
        let bounds = outline.px_bounds();
        let (w, h) = (i64::from(page.width()), i64::from(page.height()));
        let ink = self.ink;
        // The box of the pixels actually inked (coverage above a trace).
        let mut inked = [
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ];
        outline.draw(|gx, gy, coverage| {
            let px = bounds.min.x as i64 + i64::from(gx);
            let py = bounds.min.y as i64 + i64::from(gy);
            if px < 0 || py < 0 || px >= w || py >= h {
                return;
            }
            if coverage > 0.05 {
                inked = [
                    inked[0].min(px as f64),
                    inked[1].min(py as f64),
                    inked[2].max(px as f64 + 1.0),
                    inked[3].max(py as f64 + 1.0),
                ];
            }
            let alpha = (f64::from(coverage) * 1.2).min(1.0) * darkness;
            let pixel = page.get_pixel_mut(px as u32, py as u32);
            for (channel, ink) in pixel.0.iter_mut().zip(ink) {
                let v = f64::from(*channel) * (1.0 - alpha) + ink * alpha;
                *channel = v.round().clamp(0.0, 255.0) as u8;
            }
        });
        (inked[0] < inked[2]).then_some(inked)
    }
}

/// A word with the characters a handwriting font may lack spelt out as a student would.
fn plain(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    for c in word.chars() {
        match c {
            '²' => out.push_str("^2"),
            '³' => out.push_str("^3"),
            '√' => out.push_str("sqrt"),
            'π' => out.push_str("pi"),
            'θ' => out.push_str("theta"),
            'α' => out.push_str("alpha"),
            '≤' => out.push_str("<="),
            '≥' => out.push_str(">="),
            '≠' => out.push_str("!="),
            '×' => out.push('x'),
            '÷' => out.push('/'),
            '−' | '–' => out.push('-'),
            '∞' => out.push_str("inf"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_are_spelt_out() {
        assert_eq!(plain("x²−4≤π"), "x^2-4<=pi");
        assert_eq!(plain("θ=53.13°"), "theta=53.13°");
    }
}
