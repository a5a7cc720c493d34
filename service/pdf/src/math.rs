//! Inline maths for web pages: one fragment of typst maths (the text between two `$` of a
//! question) typeset exactly as the papers set it (New Computer Modern Math at 11 pt) and drawn
//! as an SVG that can be put inline, many times, into one HTML page.
//!
//! The fragment is checked by the papers' own rule first (parsed alone, one equation, no `#`
//! code, no comments), and must not name `std`, the one way maths reaches the standard library
//! (`std.eval`, `std.link`…): what is left is the maths functions and symbols, with no loops, so
//! typesetting is bounded by the fragment's length ([`MAX_MATH_CHARS`]) and nesting
//! ([`MAX_MATH_DEPTH`], which keeps typst's recursion well within a thread's stack).
//!
//! The SVG is rebuilt from typst's output through an allow-list: only the elements and
//! attributes typst uses for glyphs, rules and clips (`svg`, `g`, `defs`, `symbol`, `use`,
//! `path`, `clipPath`), with values of plain characters only, and no `style` element or
//! attribute, script, link, image or text; anything else refuses the fragment. It is therefore
//! safe under a Content-Security-Policy without `'unsafe-inline'` styles. Every `id` and every
//! reference to one (`href="#…"`, `xlink:href="#…"`, `url(#…)`) is prefixed with a short hash
//! of the maths, so the definitions of different fragments on one page never collide. Black is
//! drawn as `currentColor`, so the maths takes the colour of the text around it.
//!
//! The root `<svg>` has `class="math dN"`, `aria-hidden="true"` (the element around it carries the maths as its accessible name), its `viewBox` in points and its width
//! and height in `em` (points / 11, so the maths scales with the page's text). `N` is how far
//! the drawing reaches below the baseline, in twentieths of an em (0 to [`MAX_DESCENT_STEP`]):
//! with `.math.dN { vertical-align: -N×0.05em }` the baselines of maths and text line up.

use std::fmt::Write as _;

use typst::diag::Warned;
use typst::foundations::{Label, Selector};
use typst::introspection::Introspector as _;
use typst::utils::PicoStr;
use typst_layout::PagedDocument;

use crate::source::{self, Segment};
use crate::{RenderError, Renderer, describe, world};

/// The longest maths fragment [`Renderer::math_svg`] typesets, in characters.
pub const MAX_MATH_CHARS: usize = 400;

pub use crate::source::MAX_MATH_DEPTH;

/// The largest SVG [`Renderer::math_svg`] returns, in bytes: a few large stretched glyphs
/// nested (`binom(1, binom(1, …))`) draw hundreds of kilobytes; real maths draws a few.
pub const MAX_SVG_BYTES: usize = 256 * 1024;

/// The size the maths is set at, in points: the papers' text size. One em of the web page is
/// this many points of the drawing.
pub const MATH_SIZE_PT: f64 = 11.0;

/// The largest descent class `dN` (`N` twentieths of an em below the baseline); deeper maths is
/// given this class.
pub const MAX_DESCENT_STEP: u32 = 40;

/// The label of the equation in the generated document, read back for its baseline.
const EQUATION_LABEL: &str = "examkit-math";

/// A piece of text with inline maths, as [`pieces`] splits it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Plain text, with every `\$` turned into `$`.
    Text(String),
    /// The maths between two dollars, as written (not trimmed, not checked).
    Math(&'a str),
}

/// Splits text on unescaped `$` into plain text and maths, as the papers do: `\$` outside maths
/// is a literal dollar sign, and a `$` that opens maths never closed is an error (its message
/// says so).
pub fn pieces(text: &str) -> Result<Vec<Piece<'_>>, String> {
    Ok(source::segments(text)?
        .into_iter()
        .map(|segment| match segment {
            Segment::Text(t) => Piece::Text(t),
            Segment::Math(m) => Piece::Math(m),
        })
        .collect())
}

/// The refusal of a fragment, in the error type the renderer reports. `question` is 0: the
/// fragment does not come from a paper.
fn refuse(math: &str, reason: impl Into<String>) -> RenderError {
    RenderError::InvalidMath {
        question: 0,
        math: math.to_owned(),
        reason: reason.into(),
    }
}

impl Renderer {
    /// Typesets one fragment of inline maths (the text between two `$`, without them) as an SVG
    /// to put inline in an HTML page (see the [module documentation](self) for what it holds).
    ///
    /// A fragment that is empty, longer than [`MAX_MATH_CHARS`] characters, nested deeper than
    /// [`MAX_MATH_DEPTH`], that the papers' rule refuses (code, comments, not exactly one
    /// equation) or that names `std`, or whose drawing is larger than [`MAX_SVG_BYTES`], is a
    /// [`RenderError::InvalidMath`] with question 0; typst's errors are
    /// [`RenderError::Typeset`].
    pub fn math_svg(&self, math: &str) -> Result<String, RenderError> {
        let length = math.chars().count();
        if length > MAX_MATH_CHARS {
            return Err(refuse(
                math,
                format!(
                    "the maths is {length} characters long, more than the {MAX_MATH_CHARS} allowed"
                ),
            ));
        }
        let trimmed = math.trim();
        if trimmed.is_empty() {
            return Err(refuse(math, "the maths is empty"));
        }
        let wrapped = format!("${trimmed}$");
        source::check_equation(&wrapped).map_err(|reason| refuse(math, reason))?;
        source::check_bounded(&wrapped).map_err(|reason| refuse(math, reason))?;

        // The papers' fonts and size; the page is exactly the maths' ink (text edges at its
        // bounds), with no background.
        let text = format!(
            "#set page(width: auto, height: auto, margin: 0pt, fill: none)\n\
             #set text(font: \"New Computer Modern\", size: {MATH_SIZE_PT}pt, lang: \"en\", \
             region: \"gb\", fill: black, top-edge: \"bounds\", bottom-edge: \"bounds\")\n\
             #show math.equation: set text(font: \"New Computer Modern Math\")\n\
             {wrapped}<{EQUATION_LABEL}>\n"
        );
        let world = world::PaperWorld::new(&self.shared, text, Vec::new(), world::Codes::None);
        let Warned { output, .. } = typst::compile::<PagedDocument>(&world);
        // Keep typst's memoisation caches bounded in a long-running service.
        typst::comemo::evict(10);
        drop(world);
        let document = output.map_err(|errors| RenderError::Typeset(describe(&errors)))?;
        let [page] = document.pages() else {
            return Err(RenderError::Typeset(format!(
                "the maths made {} pages, not one",
                document.pages().len()
            )));
        };
        let baseline = baseline(&document)
            .ok_or_else(|| RenderError::Typeset("the maths has no baseline".to_owned()))?;
        let size = page.frame.size();
        let drawn = typst_svg::svg(page, &typst_svg::SvgOptions::default());
        if drawn.len() > MAX_SVG_BYTES {
            return Err(refuse(
                math,
                format!(
                    "the maths draws {} KiB, more than the {} KiB allowed",
                    drawn.len().div_ceil(1024),
                    MAX_SVG_BYTES / 1024
                ),
            ));
        }
        let geometry = Geometry {
            width: size.x.to_pt(),
            height: size.y.to_pt(),
            baseline,
        };
        inline_svg(&drawn, &id_prefix(trimmed), geometry)
            .map_err(|reason| RenderError::Typeset(format!("the maths cannot be drawn: {reason}")))
    }
}

/// The baseline of the labelled equation: its distance from the top of the page, in points
/// (an inline element's start is recorded on its line's baseline).
fn baseline(document: &PagedDocument) -> Option<f64> {
    let introspector = document.introspector();
    let label = Label::new(PicoStr::intern(EQUATION_LABEL))?;
    let equation = introspector
        .query(&Selector::Label(label))
        .into_iter()
        .next()?;
    let position = introspector.position(equation.location()?)?;
    Some(position.point.y.to_pt())
}

/// The prefix of a fragment's ids: `m` and 12 hex digits of a hash of its maths (typst's stable
/// 128-bit hash), then `-`.
fn id_prefix(math: &str) -> String {
    let hash = typst::utils::hash128(&math);
    format!("m{:012x}-", hash & 0xffff_ffff_ffff)
}

/// The size of the typeset page and where its baseline is, in points from its top.
#[derive(Debug, Clone, Copy)]
struct Geometry {
    width: f64,
    height: f64,
    baseline: f64,
}

/// The elements typst draws maths with; any other refuses the fragment.
const ELEMENTS: &[&str] = &["g", "defs", "symbol", "use", "path", "clipPath"];

/// The attributes kept (presentation attributes and geometry); any other refuses the fragment.
const ATTRIBUTES: &[&str] = &[
    "id",
    "href",
    "xlink:href",
    "transform",
    "x",
    "y",
    "d",
    "fill",
    "fill-rule",
    "stroke",
    "stroke-width",
    "stroke-linecap",
    "stroke-linejoin",
    "stroke-miterlimit",
    "stroke-dasharray",
    "stroke-dashoffset",
    "clip-path",
    "overflow",
    "shape-rendering",
];

/// Whether an attribute value is made only of characters that need no escaping and cannot end
/// the attribute or the tag.
fn plain_value(value: &str) -> bool {
    value.chars().all(|c| {
        c.is_ascii_alphanumeric() || matches!(c, ' ' | '.' | ',' | '-' | '+' | '#' | '(' | ')')
    })
}

/// A number for an SVG attribute: at most four decimals, no trailing zeros.
fn number(value: f64) -> String {
    let text = format!("{value:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    match text {
        "" | "-0" => "0".to_owned(),
        t => t.to_owned(),
    }
}

/// Rebuilds typst's SVG of one fragment for inlining (see the module documentation): the root
/// replaced by one sized in `em` with the descent class, the rest checked against the
/// allow-list with ids prefixed by `prefix`. Returns why it cannot, if it cannot.
fn inline_svg(drawn: &str, prefix: &str, geometry: Geometry) -> Result<String, String> {
    let Geometry {
        width,
        height,
        baseline,
    } = geometry;
    if !(width.is_finite() && height.is_finite() && baseline.is_finite()) {
        return Err("its size is not finite".to_owned());
    }
    // The box reaches the baseline even when all the ink is above it (or below it).
    let top = baseline.min(0.0);
    let bottom = baseline.max(height);
    let descent = bottom - baseline;
    let step = (descent / MATH_SIZE_PT * 20.0)
        .round()
        .clamp(0.0, f64::from(MAX_DESCENT_STEP));
    let mut out = String::with_capacity(drawn.len() + 200);
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" \
         class=\"math d{step}\" aria-hidden=\"true\" viewBox=\"0 {} {} {}\" width=\"{}em\" \
         height=\"{}em\" overflow=\"visible\">",
        number(top),
        number(width),
        number(bottom - top),
        number(width / MATH_SIZE_PT),
        number((bottom - top) / MATH_SIZE_PT),
    );

    let mut rest = drawn.trim();
    // The root element: typst's own, replaced by the one written above.
    rest = rest
        .strip_prefix("<svg ")
        .ok_or("it does not start with an <svg> element")?;
    let root_end = rest.find('>').ok_or("its root element is not closed")?;
    let root = &rest[..root_end];
    if root.ends_with('/') || root.contains('<') {
        return Err("its root element is malformed".to_owned());
    }
    rest = &rest[root_end + 1..];

    let mut open: Vec<&str> = vec!["svg"];
    while !open.is_empty() {
        let lead = rest.len() - rest.trim_start().len();
        if rest[..lead].chars().any(|c| !c.is_whitespace()) {
            return Err("it holds text".to_owned());
        }
        rest = &rest[lead..];
        let Some(after) = rest.strip_prefix('<') else {
            return Err(if rest.is_empty() {
                "it ends before its root element is closed".to_owned()
            } else {
                "it holds text".to_owned()
            });
        };
        if let Some(after) = after.strip_prefix('/') {
            let end = after.find('>').ok_or("an end tag is not closed")?;
            let name = after[..end].trim_end();
            if open.pop() != Some(name) {
                return Err(format!("the end tag </{name}> does not match"));
            }
            out.push_str("</");
            out.push_str(name);
            out.push('>');
            rest = &after[end + 1..];
            continue;
        }
        let name_len = after
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(after.len());
        let name = &after[..name_len];
        let Some(&name) = ELEMENTS.iter().find(|&&e| e == name) else {
            return Err(format!(
                "it holds an element <{name}>, which is not allowed"
            ));
        };
        out.push('<');
        out.push_str(name);
        rest = &after[name_len..];
        loop {
            let trimmed = rest.trim_start();
            if let Some(after) = trimmed.strip_prefix("/>") {
                out.push_str("/>");
                rest = after;
                break;
            }
            if let Some(after) = trimmed.strip_prefix('>') {
                out.push('>');
                open.push(name);
                rest = after;
                break;
            }
            if trimmed.len() == rest.len() {
                return Err(format!("an attribute of <{name}> is malformed"));
            }
            let attr_len = trimmed
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == ':'))
                .unwrap_or(trimmed.len());
            let attr = &trimmed[..attr_len];
            let Some(value) = trimmed[attr_len..].strip_prefix("=\"") else {
                return Err(format!("the attribute {attr:?} of <{name}> is malformed"));
            };
            let value_end = value
                .find('"')
                .ok_or_else(|| format!("the attribute {attr:?} of <{name}> is not closed"))?;
            rest = &value[value_end + 1..];
            let value = &value[..value_end];
            if !ATTRIBUTES.contains(&attr) {
                return Err(format!(
                    "it has an attribute {attr:?} on <{name}>, which is not allowed"
                ));
            }
            if !plain_value(value) {
                return Err(format!(
                    "the attribute {attr:?} of <{name}> has a value not allowed"
                ));
            }
            let value = match attr {
                "id" => format!("{prefix}{value}"),
                "href" | "xlink:href" => match value.strip_prefix('#') {
                    Some(id) => format!("#{prefix}{id}"),
                    None => return Err("it links outside itself".to_owned()),
                },
                // Defaults, left out.
                "x" | "y" if value == "0" => continue,
                "fill-rule" if value == "nonzero" => continue,
                "fill" | "stroke" if value == "#000000" => "currentColor".to_owned(),
                _ => value.replace("url(#", &format!("url(#{prefix}")),
            };
            let _ = write!(out, " {attr}=\"{value}\"");
        }
    }
    if !rest.trim().is_empty() {
        return Err("it has content after its root element".to_owned());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use typst::syntax::SyntaxNode;

    /// The values of every `attr="…"` in `svg`.
    fn values<'a>(svg: &'a str, attr: &str) -> Vec<&'a str> {
        let needle = format!(" {attr}=\"");
        svg.match_indices(&needle)
            .filter_map(|(i, _)| {
                let start = i + needle.len();
                let end = svg[start..].find('"')?;
                Some(&svg[start..start + end])
            })
            .collect()
    }

    fn reason(result: Result<String, RenderError>) -> String {
        match result {
            Err(RenderError::InvalidMath { reason, .. }) => reason,
            other => panic!("expected refused maths, got {other:?}"),
        }
    }

    #[test]
    fn a_simple_fragment_renders_as_inline_svg_without_styles_or_scripts() {
        let started = std::time::Instant::now();
        let renderer = Renderer::new();
        let loaded = started.elapsed();
        let started = std::time::Instant::now();
        drop(Renderer::new());
        let reloaded = started.elapsed();
        let started = std::time::Instant::now();
        let svg = renderer.math_svg("z^2").expect("renders");
        let cold = started.elapsed();
        let started = std::time::Instant::now();
        let again = renderer.math_svg("a + b i").expect("renders");
        let warm = started.elapsed();
        println!(
            "Renderer::new {loaded:?} (again: {reloaded:?}); math_svg: first fragment {cold:?}, second {warm:?}"
        );
        for svg in [&svg, &again] {
            assert!(svg.starts_with("<svg "), "{svg}");
            assert!(svg.ends_with("</svg>"), "{svg}");
            for forbidden in [
                "<style",
                "style=",
                "<script",
                "<a ",
                "<image",
                "<foreignObject",
            ] {
                assert!(!svg.contains(forbidden), "{forbidden} in {svg}");
            }
            assert!(svg.contains("class=\"math d"), "{svg}");
            assert!(svg.contains("aria-hidden=\"true\""), "{svg}");
            assert!(svg.contains("viewBox=\"0 "), "{svg}");
            assert!(svg.contains("<use "), "{svg}");
            assert!(svg.contains("fill=\"currentColor\""), "{svg}");
            assert!(!svg.contains("#000000"), "{svg}");
            let width = values(svg, "width");
            assert_eq!(width.len(), 1, "{svg}");
            assert!(width[0].ends_with("em"), "{svg}");
        }
        // z² is about 10.4 pt wide: 0.95 em.
        assert_eq!(values(&svg, "width"), ["0.9493em"], "{svg}");
        // Deterministic.
        assert_eq!(renderer.math_svg("z^2").expect("renders"), svg);
    }

    #[test]
    fn ids_are_prefixed_and_two_fragments_never_share_one() {
        let renderer = Renderer::new();
        let first = renderer.math_svg("x^2 + y").expect("renders");
        let second = renderer.math_svg("sqrt(x) + frac(1, 2)").expect("renders");
        let mut seen = Vec::new();
        for svg in [&first, &second] {
            let ids = values(svg, "id");
            assert!(!ids.is_empty(), "{svg}");
            let prefix = &ids[0][..14];
            assert!(prefix.starts_with('m') && prefix.ends_with('-'), "{prefix}");
            for id in &ids {
                assert!(id.starts_with(prefix), "{id} in {svg}");
            }
            // Every reference names an id of the same fragment.
            for href in values(svg, "xlink:href")
                .into_iter()
                .chain(values(svg, "href"))
            {
                let target = href.strip_prefix('#').expect("local reference");
                assert!(ids.contains(&target), "{href} in {svg}");
            }
            seen.push(ids);
        }
        assert!(
            seen[0].iter().all(|id| !seen[1].contains(id)),
            "{first}\n{second}"
        );
    }

    #[test]
    fn clip_path_references_are_prefixed() {
        let drawn = "<svg viewBox=\"0 0 1 1\" width=\"1pt\" height=\"1pt\"><g clip-path=\"url(#c1)\"><path d=\"M 0 0\"/></g><defs><clipPath id=\"c1\"><path d=\"M 0 0h 1\"/></clipPath></defs></svg>";
        let geometry = Geometry {
            width: 1.0,
            height: 1.0,
            baseline: 1.0,
        };
        let svg = inline_svg(drawn, "mabc-", geometry).expect("allowed");
        assert!(svg.contains("clip-path=\"url(#mabc-c1)\""), "{svg}");
        assert!(svg.contains("<clipPath id=\"mabc-c1\">"), "{svg}");
    }

    #[test]
    fn styles_scripts_links_and_images_are_refused() {
        let geometry = Geometry {
            width: 1.0,
            height: 1.0,
            baseline: 1.0,
        };
        for (drawn, expected) in [
            ("<svg width=\"1pt\"><style>g{}</style></svg>", "<style>"),
            (
                "<svg width=\"1pt\"><g style=\"fill:red\"/></svg>",
                "\"style\"",
            ),
            (
                "<svg width=\"1pt\"><script>alert(1)</script></svg>",
                "<script>",
            ),
            (
                "<svg width=\"1pt\"><a href=\"https://x.example\"/></svg>",
                "<a>",
            ),
            (
                "<svg width=\"1pt\"><use xlink:href=\"https://x.example/#a\"/></svg>",
                "value",
            ),
            (
                "<svg width=\"1pt\"><use href=\"x.svg#a\"/></svg>",
                "outside",
            ),
            (
                "<svg width=\"1pt\"><image href=\"data:image/png;base64,AA\"/></svg>",
                "<image>",
            ),
            (
                "<svg width=\"1pt\"><g onload=\"alert(1)\"/></svg>",
                "\"onload\"",
            ),
            (
                "<svg width=\"1pt\"><g id=\"a\" fill=\"x&quot;\"/></svg>",
                "value",
            ),
            ("<svg width=\"1pt\">text</svg>", "text"),
            ("<svg width=\"1pt\"><g></svg>", "does not match"),
            ("<svg width=\"1pt\"><g/>", "ends before"),
            ("<svg width=\"1pt\"></svg><g/>", "after its root"),
        ] {
            let error = inline_svg(drawn, "m-", geometry).expect_err(drawn);
            assert!(error.contains(expected), "{drawn}: {error}");
        }
    }

    #[test]
    fn descent_below_the_baseline_gives_the_class_and_the_box_reaches_the_baseline() {
        let drawn = "<svg viewBox=\"0 0 11 22\" width=\"11pt\" height=\"22pt\"></svg>";
        // 11 pt below the baseline: 1 em, step 20.
        let svg = inline_svg(
            drawn,
            "m-",
            Geometry {
                width: 11.0,
                height: 22.0,
                baseline: 11.0,
            },
        )
        .expect("allowed");
        assert!(svg.contains("class=\"math d20\""), "{svg}");
        assert!(svg.contains("viewBox=\"0 0 11 22\""), "{svg}");
        assert!(svg.contains("width=\"1em\" height=\"2em\""), "{svg}");
        // All ink above the baseline: the box is extended down to it.
        let svg = inline_svg(
            drawn,
            "m-",
            Geometry {
                width: 11.0,
                height: 5.5,
                baseline: 11.0,
            },
        )
        .expect("allowed");
        assert!(svg.contains("class=\"math d0\""), "{svg}");
        assert!(svg.contains("viewBox=\"0 0 11 11\""), "{svg}");
        // All ink below the baseline: the box is extended up to it.
        let svg = inline_svg(
            drawn,
            "m-",
            Geometry {
                width: 11.0,
                height: 5.5,
                baseline: -5.5,
            },
        )
        .expect("allowed");
        assert!(svg.contains("class=\"math d20\""), "{svg}");
        assert!(svg.contains("viewBox=\"0 -5.5 11 11\""), "{svg}");
    }

    #[test]
    fn real_maths_sits_on_the_baseline() {
        let renderer = Renderer::new();
        // No descender: no descent.
        let x = renderer.math_svg("x").expect("renders");
        assert!(x.contains("class=\"math d0\""), "{x}");
        // A fraction reaches well below the baseline.
        let frac = renderer.math_svg("frac(1, 2)").expect("renders");
        let step: u32 = values(&frac, "class")[0]
            .strip_prefix("math d")
            .and_then(|n| n.parse().ok())
            .expect("descent class");
        assert!((3..=10).contains(&step), "{frac}");
    }

    #[test]
    fn code_comments_std_broken_empty_and_long_maths_are_refused() {
        let renderer = Renderer::new();
        for (math, expected) in [
            ("#read(\"/etc/passwd\")", "`#`"),
            ("x // y", "comments"),
            ("x /* y */", "comments"),
            ("std.eval(\"1 + 2\")", "`std`"),
            ("std.link(\"mailto:a@x.example\", x)", "`std`"),
            ("\"open", "typst reads it as"),
            ("x$ $y", "not a single piece of maths"),
            // A trailing backslash escapes the closing dollar: the maths is never closed.
            ("x\\", "typst reads it as"),
            ("", "empty"),
            ("   ", "empty"),
        ] {
            let reason = reason(renderer.math_svg(math));
            assert!(reason.contains(expected), "{math:?}: {reason}");
        }
        let long = "x + ".repeat(100) + "x";
        let reason = reason(renderer.math_svg(&long));
        assert!(
            reason.contains("401 characters") && reason.contains("400"),
            "{reason}"
        );
        // 400 characters exactly is allowed.
        assert!(renderer.math_svg(&long[..400]).is_ok());
        // An unknown name is typst's error.
        assert!(matches!(
            renderer.math_svg("notafunction(x)"),
            Err(RenderError::Typeset(_))
        ));
    }

    #[test]
    fn deep_nesting_is_refused_and_the_deepest_allowed_fits_a_small_stack() {
        fn depth(node: &SyntaxNode) -> usize {
            1 + node.children().map(depth).max().unwrap_or(0)
        }
        // The deepest of each kind within the limits, typeset on a thread with a third of the
        // stack tokio's blocking threads have.
        let deepest: Vec<String> = [
            ("x^", "x", ""),
            ("1/", "1", ""),
            ("(", "x", ")"),
            ("x^(", "x", ")"),
            ("sqrt(", "x", ")"),
            ("binom(1,", "x", ")"),
        ]
        .into_iter()
        .map(|(open, middle, close)| {
            let build = |n: usize| open.repeat(n) + middle + &close.repeat(n);
            let fits = |n: usize| {
                depth(&typst::syntax::parse(&format!("${}$", build(n)))) <= MAX_MATH_DEPTH
            };
            let n = (1..).find(|&n| !fits(n + 1)).unwrap_or(1);
            build(n)
        })
        .collect();
        let rendered = std::thread::Builder::new()
            .stack_size(700 << 10)
            .spawn(move || {
                let renderer = Renderer::new();
                deepest
                    .iter()
                    .map(|math| (math.clone(), renderer.math_svg(math)))
                    .collect::<Vec<_>>()
            })
            .expect("thread")
            .join()
            .expect("no overflow");
        for (math, result) in rendered {
            match result {
                Ok(svg) => assert!(svg.len() <= MAX_SVG_BYTES, "{math}"),
                // Large stretched glyphs may be too large to draw, and are refused for that.
                Err(e) => assert!(e.to_string().contains("KiB"), "{math}: {e}"),
            }
        }
        let renderer = Renderer::new();
        for math in [
            "x^".repeat(150) + "x",
            "1/".repeat(150) + "1",
            format!("{}x{}", "sqrt(".repeat(30), ")".repeat(30)),
        ] {
            let reason = reason(renderer.math_svg(&math));
            assert!(reason.contains("nested too deeply"), "{math}: {reason}");
        }
    }

    #[test]
    fn huge_drawings_are_refused() {
        let renderer = Renderer::new();
        let math = format!("{}x{}", "binom(1,".repeat(18), ")".repeat(18));
        let reason = reason(renderer.math_svg(&math));
        assert!(reason.contains("KiB"), "{reason}");
    }

    #[test]
    fn pieces_split_text_and_maths_and_unescape_dollars() {
        assert_eq!(
            pieces(r"a $x$ b \$5").expect("valid"),
            [
                Piece::Text("a ".to_owned()),
                Piece::Math("x"),
                Piece::Text(" b $5".to_owned())
            ]
        );
        assert_eq!(pieces("").expect("valid"), []);
        assert_eq!(pieces("$x$").expect("valid"), [Piece::Math("x")]);
        let error = pieces("open $x").expect_err("unclosed");
        assert!(error.contains("never closed"), "{error}");
    }
}
