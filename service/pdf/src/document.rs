//! Typesetting a typst document its caller generated (a marked script returned to its student,
//! for one), with the same fonts and the same closed world as the papers: the source and the
//! files it reads (page images) are held in memory, and any other path is refused.
//!
//! Text from people must reach the source only as string literals: [`typst_string`] writes one.

use typst::diag::Warned;
use typst::foundations::Smart;
use typst_layout::PagedDocument;

use crate::{RenderError, Rendered, Renderer, describe, source, world};

/// A typst document to typeset: its source and the files it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceDocument {
    /// The typst source. Text from people is in it only as string literals ([`typst_string`]).
    pub source: String,
    /// The files the source reads, by absolute virtual path (`/pages/1.jpg`).
    pub files: Vec<(String, Vec<u8>)>,
    /// A stable identifier of the document, from which the PDF's identifier is derived.
    pub ident: String,
    /// Whether the PDF is tagged for accessibility. A PDF whose pages are later copied into
    /// another (where its structure tree would not follow) is better made untagged.
    pub tagged: bool,
}

/// A typst string literal holding `text` exactly: every character prints as itself.
pub fn typst_string(text: &str) -> String {
    source::lit(text)
}

impl Renderer {
    /// Typesets `document` to PDF. Typst's errors are [`RenderError::Typeset`]; its warnings are
    /// dropped. [`Rendered::layout`] is `None`.
    pub fn typeset_source(&self, document: SourceDocument) -> Result<Rendered, RenderError> {
        let SourceDocument {
            source,
            files,
            ident,
            tagged,
        } = document;
        let world = world::PaperWorld::new(&self.shared, source, files, world::Codes::None);
        let Warned { output, .. } = typst::compile::<PagedDocument>(&world);
        // Keep typst's memoisation caches bounded in a long-running service.
        typst::comemo::evict(10);
        drop(world);
        let paged = output.map_err(|errors| RenderError::Typeset(describe(&errors)))?;
        let options = typst_pdf::PdfOptions {
            ident: Smart::Custom(ident),
            creator: Smart::Custom(Some("examkit".to_owned())),
            timestamp: None,
            tagged,
            ..Default::default()
        };
        let pdf = typst_pdf::pdf(&paged, &options)
            .map_err(|errors| RenderError::Export(describe(&errors)))?;
        Ok(Rendered {
            pdf,
            pages: paged.pages().len(),
            layout: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_document_reads_only_its_own_files() {
        let renderer = Renderer::new();
        let svg = br#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>"#;
        let rendered = renderer
            .typeset_source(SourceDocument {
                source: format!(
                    "#set document(date: none)\n#text({})\n#image(\"/img/a.svg\", width: 1cm)\n",
                    typst_string("a \"quoted\" #line")
                ),
                files: vec![("/img/a.svg".to_owned(), svg.to_vec())],
                ident: "test/generated".to_owned(),
                tagged: true,
            })
            .expect("typeset");
        assert_eq!(rendered.pages, 1);
        assert!(rendered.pdf.starts_with(b"%PDF-"));
        let refused = renderer.typeset_source(SourceDocument {
            source: "#image(\"/etc/passwd\")".to_owned(),
            files: Vec::new(),
            ident: "test/refused".to_owned(),
            tagged: false,
        });
        assert!(
            matches!(refused, Err(RenderError::Typeset(_))),
            "{refused:?}"
        );
    }
}
