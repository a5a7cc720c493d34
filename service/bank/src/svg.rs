//! The safe-SVG check applied to every asset file.
//!
//! SVGs are served to browsers and embedded in PDFs, so they must be self-contained and inert:
//! UTF-8, well-formed XML with an `<svg>` root in the SVG namespace, at most [`MAX_ASSET_BYTES`],
//! no DOCTYPE, entity declarations or processing instructions, none of the elements in
//! [`FORBIDDEN_ELEMENTS`], no `on…` event attributes, and no references outside the file: `href`
//! (in any namespace) and every `url(…)` in attributes and `<style>` text point at `#fragments`
//! only, and `<style>` has no `@import`.

/// The SVG namespace.
pub const SVG_NS: &str = "http://www.w3.org/2000/svg";

/// The largest accepted asset file, in bytes (1 MiB).
pub const MAX_ASSET_BYTES: usize = 1024 * 1024;

/// Elements that can run code or pull in other content (compared case-insensitively).
pub const FORBIDDEN_ELEMENTS: [&str; 6] = [
    "script",
    "foreignObject",
    "iframe",
    "embed",
    "object",
    "image",
];

/// Checks `bytes` as a safe SVG; returns the first problem found.
pub fn check(bytes: &[u8]) -> Result<(), String> {
    if bytes.len() > MAX_ASSET_BYTES {
        return Err(format!("larger than {MAX_ASSET_BYTES} bytes"));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.contains("<!DOCTYPE") || text.contains("<!ENTITY") || text.contains("<!doctype") {
        return Err("must not contain a DOCTYPE or entity declarations".to_owned());
    }
    let options = roxmltree::ParsingOptions {
        allow_dtd: false,
        ..roxmltree::ParsingOptions::default()
    };
    let document = roxmltree::Document::parse_with_options(text, options)
        .map_err(|e| format!("not well-formed XML: {e}"))?;
    let root = document.root_element();
    if root.tag_name().namespace() != Some(SVG_NS) || root.tag_name().name() != "svg" {
        return Err("root element is not an SVG <svg> element".to_owned());
    }
    for node in document.root().descendants() {
        if node.is_pi() {
            return Err("must not contain processing instructions".to_owned());
        }
        if !node.is_element() {
            continue;
        }
        let local = node.tag_name().name();
        if let Some(bad) = FORBIDDEN_ELEMENTS
            .iter()
            .find(|f| f.eq_ignore_ascii_case(local))
        {
            return Err(format!("must not contain <{bad}>"));
        }
        for attribute in node.attributes() {
            let name = attribute.name();
            let value = attribute.value();
            if name.len() >= 2 && name[..2].eq_ignore_ascii_case("on") {
                return Err(format!("must not carry event attribute {name}"));
            }
            if name.eq_ignore_ascii_case("href") && !value.trim_start().starts_with('#') {
                return Err(format!("must not reference external content ({value})"));
            }
            if !urls_are_fragments(value) {
                return Err("must not reference external content through url()".to_owned());
            }
        }
        if local.eq_ignore_ascii_case("style") {
            let css: String = node
                .descendants()
                .filter_map(|n| n.text())
                .collect::<Vec<_>>()
                .concat();
            if css.to_ascii_lowercase().contains("@import") || !urls_are_fragments(&css) {
                return Err("style must not import or reference external content".to_owned());
            }
        }
    }
    Ok(())
}

/// Whether every `url(` in `text` (any case) is followed by an optional quote and a `#`.
fn urls_are_fragments(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let mut rest = lower.as_str();
    while let Some(at) = rest.find("url(") {
        let after = rest[at + 4..].trim_start();
        let after = after
            .strip_prefix('"')
            .or_else(|| after.strip_prefix('\''))
            .unwrap_or(after)
            .trim_start();
        if !after.starts_with('#') {
            return false;
        }
        rest = &rest[at + 4..];
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svg(inner: &str) -> String {
        format!(r#"<svg xmlns="{SVG_NS}" xmlns:xlink="http://www.w3.org/1999/xlink">{inner}</svg>"#)
    }

    #[test]
    fn inert_svg_passes() {
        let ok = svg(
            r##"<defs><marker id="m"/></defs><path d="M0 0" marker-end="url(#m)" style="fill: url( '#g' )"/><use href="#m"/><style>.a { fill: url(#m) }</style>"##,
        );
        assert_eq!(check(ok.as_bytes()), Ok(()));
    }

    #[test]
    fn unsafe_svg_is_refused() {
        let cases = [
            (
                svg("<script>alert(1)</script>"),
                "must not contain <script>",
            ),
            (svg("<foreignobject/>"), "must not contain <foreignObject>"),
            (svg(r#"<image href="x.png"/>"#), "must not contain <image>"),
            (
                svg(r#"<rect onclick="x()"/>"#),
                "must not carry event attribute onclick",
            ),
            (
                svg(r#"<a xlink:href="https://x"/>"#),
                "must not reference external content (https://x)",
            ),
            (
                svg(r#"<rect fill="url(https://x/#a)"/>"#),
                "must not reference external content through url()",
            ),
            (
                svg("<style>@import 'x.css';</style>"),
                "style must not import or reference external content",
            ),
            (
                svg("<style>.a { fill: url(x.svg#a) }</style>"),
                "style must not import or reference external content",
            ),
            (
                "<svg/>".to_owned(),
                "root element is not an SVG <svg> element",
            ),
            (
                format!(r#"<g xmlns="{SVG_NS}"/>"#),
                "root element is not an SVG <svg> element",
            ),
            (
                svg("<?xml-stylesheet href=\"x.css\"?>"),
                "must not contain processing instructions",
            ),
            (
                format!("<!DOCTYPE svg [<!ENTITY a \"b\">]>{}", svg("")),
                "must not contain a DOCTYPE or entity declarations",
            ),
        ];
        for (text, message) in cases {
            assert_eq!(check(text.as_bytes()), Err(message.to_owned()), "{text}");
        }
        assert!(check(b"<svg").is_err_and(|e| e.starts_with("not well-formed XML")));
        assert!(check(&[0xff, 0xfe]).is_err_and(|e| e.starts_with("not UTF-8")));
        let big = svg(&" ".repeat(MAX_ASSET_BYTES));
        assert_eq!(
            check(big.as_bytes()),
            Err(format!("larger than {MAX_ASSET_BYTES} bytes"))
        );
    }
}
