//! Typesetting saved papers with `examkit-pdf`: off the async runtime, a bounded number at a time.
//!
//! Typesetting is CPU-bound (about a second for a 24-question paper), so it runs on tokio's
//! blocking pool, at most [`Typesetter::concurrency`] papers at once; further requests wait their
//! turn. The same [`Renderer`] (fonts loaded once) serves every request.

use std::sync::Arc;
use std::time::Duration;

use examkit_pdf::{PageCounts, PaperDocument, RenderError, Renderer};
use tokio::sync::Semaphore;

/// The longest a PDF preparation may take, waiting included (the specification's 120 seconds).
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(120);

/// Both PDFs of one paper revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaperPdfs {
    /// The question paper.
    pub question_paper: Vec<u8>,
    /// The mark scheme.
    pub mark_scheme: Vec<u8>,
    /// The question paper's recorded layout (page sizes, each part's text and answer space), JSON.
    pub layout_json: String,
}

/// Why typesetting produced nothing.
#[derive(Debug, thiserror::Error)]
pub enum TypesetError {
    /// The paper cannot be typeset.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// It did not finish within the time allowed.
    #[error("typesetting did not finish within {0:?}")]
    Timeout(Duration),
    /// The typesetting task failed (a panic in the typesetter).
    #[error("the typesetting task failed: {0}")]
    Task(String),
}

/// The service's typesetter and whether PDF export is enabled.
#[derive(Debug, Clone)]
pub struct Typesetter {
    renderer: Arc<Renderer>,
    permits: Arc<Semaphore>,
    concurrency: usize,
    export_enabled: bool,
}

impl Typesetter {
    /// A typesetter running at most `concurrency` (at least 1) papers at once. With
    /// `export_enabled` false the service refuses to prepare PDFs; pages are still counted when
    /// papers are saved.
    pub fn new(export_enabled: bool, concurrency: usize) -> Typesetter {
        let concurrency = concurrency.max(1);
        Typesetter {
            renderer: Arc::new(Renderer::new()),
            permits: Arc::new(Semaphore::new(concurrency)),
            concurrency,
            export_enabled,
        }
    }

    /// One paper at a time per available core.
    pub fn with_default_concurrency(export_enabled: bool) -> Typesetter {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Typesetter::new(export_enabled, cores)
    }

    /// Whether PDF export is enabled.
    pub fn export_enabled(&self) -> bool {
        self.export_enabled
    }

    /// How many papers are typeset at once.
    pub fn concurrency(&self) -> usize {
        self.concurrency
    }

    /// Lays out both documents and counts their pages.
    pub async fn page_counts(&self, paper: PaperDocument) -> Result<PageCounts, TypesetError> {
        self.run(move |renderer| renderer.page_counts(&paper)).await
    }

    /// Typesets both PDFs.
    pub async fn render(&self, paper: PaperDocument) -> Result<PaperPdfs, TypesetError> {
        self.run(move |renderer| {
            let started = std::time::Instant::now();
            let question_paper = renderer.question_paper(&paper)?;
            let layout = match question_paper.layout {
                Some(layout) => layout,
                None => renderer.question_paper_layout(&paper)?,
            };
            let layout_json = serde_json::to_string(&layout)
                .map_err(|e| RenderError::Export(format!("the layout cannot be recorded: {e}")))?;
            crate::telemetry::typeset("question_paper", started.elapsed());
            let started = std::time::Instant::now();
            let mark_scheme = renderer.mark_scheme(&paper)?.pdf;
            crate::telemetry::typeset("mark_scheme", started.elapsed());
            Ok(PaperPdfs {
                question_paper: question_paper.pdf,
                mark_scheme,
                layout_json,
            })
        })
        .await
    }

    /// Typesets every copy of a class set in one PDF.
    pub async fn render_class_set(
        &self,
        paper: PaperDocument,
        set: examkit_pdf::ClassSetDocument,
    ) -> Result<examkit_pdf::RenderedSet, TypesetError> {
        self.run(move |renderer| {
            let started = std::time::Instant::now();
            let rendered = renderer.class_set(&paper, &set);
            crate::telemetry::typeset("class_set", started.elapsed());
            rendered
        })
        .await
    }

    /// Typesets a class set's extra answer sheet.
    pub async fn render_extra_sheet(
        &self,
        paper_title: String,
        run_id: uuid::Uuid,
    ) -> Result<Vec<u8>, TypesetError> {
        self.run(move |renderer| renderer.extra_sheet(&paper_title, run_id))
            .await
    }

    /// A slot of the typesetter, held while other typesetting (a class's returned scripts) runs,
    /// so that it shares the service's limit with the papers' PDFs.
    pub async fn slot(&self) -> Result<tokio::sync::OwnedSemaphorePermit, TypesetError> {
        self.permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| TypesetError::Task(e.to_string()))
    }

    async fn run<T, F>(&self, work: F) -> Result<T, TypesetError>
    where
        T: Send + 'static,
        F: FnOnce(&Renderer) -> Result<T, RenderError> + Send + 'static,
    {
        let renderer = self.renderer.clone();
        let permits = self.permits.clone();
        let job = async move {
            let permit = permits
                .acquire_owned()
                .await
                .map_err(|e| TypesetError::Task(e.to_string()))?;
            // The permit goes with the work: a request that times out does not free a slot while
            // its typesetting still runs.
            tokio::task::spawn_blocking(move || {
                let _permit = permit;
                work(&renderer)
            })
            .await
            .map_err(|e| TypesetError::Task(e.to_string()))?
            .map_err(TypesetError::from)
        };
        tokio::time::timeout(EXPORT_TIMEOUT, job)
            .await
            .map_err(|_| TypesetError::Timeout(EXPORT_TIMEOUT))?
    }
}
