//! What a page is compared with: the clean pages of the session's paper or of a class set's
//! print, and which clean page a page's codes (or a person's placing) name.

use crate::marking::jobs::JobContext;
use crate::marking::jobs::JobFailure;
use crate::store::class_sets::SetRow;
use crate::store::papers::ExportKind;
use examkit_pdf::CopyCode;
use examkit_pdf::DocumentKind;
use examkit_pdf::Layout;
use examkit_pdf::PageCode;

/// The session's paper, when it was made from one: the clean pages as printed and its layout.
pub(super) struct Reference {
    pub(super) paper_id: uuid::Uuid,
    pub(super) revision: u32,
    /// The PDF the clean pages are rendered from: the question paper, or a class set's copies.
    pub(super) printed: Vec<u8>,
    /// How a page's codes name a page of `printed`.
    pub(super) source: Source,
    pub(super) layout: Option<Layout>,
}

/// What the clean pages were printed as.
pub(super) enum Source {
    /// The paper's question paper, its pages named by page codes.
    QuestionPaper,
    /// A class set's copies, named by copy codes of the set's print run.
    ClassSet {
        /// The set: the print run.
        run_id: uuid::Uuid,
        /// Each copy's place in print order, from 0.
        order: std::collections::HashMap<u32, usize>,
        /// The question paper's pages.
        paper_pages: u32,
        /// The pages each copy takes.
        pages_per_copy: u32,
    },
}

impl Reference {
    /// The paper page a page's codes name, as the paper's page code, and the page of `printed`
    /// that is its clean print; `None` when they name no page of this paper as printed (a
    /// copy's blank back names no page of the paper).
    pub(super) fn locate(&self, payloads: &[String]) -> Option<(PageCode, u32)> {
        match &self.source {
            Source::QuestionPaper => payloads.iter().find_map(|p| {
                PageCode::parse(p)
                    .filter(|c| {
                        c.kind == DocumentKind::QuestionPaper
                            && c.paper_id == self.paper_id
                            && c.revision == self.revision
                    })
                    .map(|c| (c, c.page))
            }),
            Source::ClassSet { run_id, .. } => payloads.iter().find_map(|p| {
                let code = CopyCode::parse(p).filter(|c| c.run_id == *run_id)?;
                self.copy_page(code.copy, code.page)
            }),
        }
    }

    /// The paper page of page `page` of class-set copy `copy`, and the page of `printed` that is
    /// its clean print; `None` for a question paper, a copy not printed, or a page past the
    /// paper's (an extra sheet).
    pub(super) fn copy_page(&self, copy: u32, page: u32) -> Option<(PageCode, u32)> {
        let Source::ClassSet {
            order,
            paper_pages,
            pages_per_copy,
            ..
        } = &self.source
        else {
            return None;
        };
        let index = u32::try_from(*order.get(&copy)?).ok()?;
        (page >= 1 && page <= *paper_pages).then(|| {
            (
                PageCode {
                    kind: DocumentKind::QuestionPaper,
                    paper_id: self.paper_id,
                    revision: self.revision,
                    page,
                },
                index * pages_per_copy + page,
            )
        })
    }
}

/// A class set's copies as printed, for the pages of its stack.
pub(super) async fn stack_reference(
    context: &JobContext,
    user_id: &str,
    set: &SetRow,
) -> Result<Option<Reference>, JobFailure> {
    let store = &context.store;
    let Some(printed) = store.class_set_pdf(user_id, &set.id).await? else {
        return Ok(None);
    };
    let copies = store.class_set_copies(&set.id).await?;
    let layout = store
        .export_layout(user_id, &set.paper_id, set.revision)
        .await?
        .flatten()
        .and_then(|json| serde_json::from_str::<Layout>(&json).ok());
    let (Ok(paper_id), Ok(revision), Ok(run_id), Ok(paper_pages), Ok(pages_per_copy)) = (
        uuid::Uuid::parse_str(&set.paper_id),
        u32::try_from(set.revision),
        uuid::Uuid::parse_str(&set.id),
        u32::try_from(set.paper_pages),
        u32::try_from(set.pages_per_copy),
    ) else {
        return Ok(None);
    };
    let order = copies
        .iter()
        .enumerate()
        .filter_map(|(i, c)| Some((u32::try_from(c.copy).ok()?, i)))
        .collect();
    Ok(Some(Reference {
        paper_id,
        revision,
        printed,
        source: Source::ClassSet {
            run_id,
            order,
            paper_pages,
            pages_per_copy,
        },
        layout,
    }))
}

/// The session's clean question paper and its recorded layout.
pub(super) async fn reference(
    context: &JobContext,
    user_id: &str,
    paper_id: &str,
    revision: i64,
) -> Result<Option<Reference>, JobFailure> {
    let store = &context.store;
    let Some(question_paper) = store
        .paper_export(user_id, paper_id, revision, ExportKind::QuestionPaper)
        .await?
    else {
        return Ok(None);
    };
    let layout = store
        .export_layout(user_id, paper_id, revision)
        .await?
        .flatten()
        .and_then(|json| serde_json::from_str::<Layout>(&json).ok());
    let (Ok(paper_id), Ok(revision)) = (uuid::Uuid::parse_str(paper_id), u32::try_from(revision))
    else {
        return Ok(None);
    };
    Ok(Some(Reference {
        paper_id,
        revision,
        printed: question_paper,
        source: Source::QuestionPaper,
        layout,
    }))
}
