//! Files from outside (uploads, class-set stacks, imported scans) are read here, and only here:
//! checked at upload, drawn for indexing, for the marker, for the app's page images and for the
//! returned scripts. A file is a program for the reader that draws it, so the drawing is done
//! where a hostile one can do no harm.
//!
//! - [`wire`]: the frames a page process reads and writes (pure; property-tested).
//! - [`child`]: the page process, `examkit page-reader`, and [`child::answer`], its whole work.
//! - [`pool`]: the service's side: a few page processes, each under a memory limit, a
//!   processor-time limit per page and a deadline per page, replaced when one is ended.
//!
//! [`Pages`] is what the rest of the service calls: the same questions whether the pages are
//! read in page processes (what `serve` and `worker` do) or in this process (`--page-processes
//! 0`, for a trusted file or a machine without `fork`).

pub mod child;
pub mod pool;
pub mod wire;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use examkit_scan::{Format, RenderedPage, ScanError};
use image::GrayImage;

use wire::{Request, Response};

/// What a page process may use to read one file or draw one page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budgets {
    /// Page processes at most (at least 1).
    pub processes: usize,
    /// Each process's address space, in MiB.
    pub memory_mib: u64,
    /// Processor time a page (or a whole file's check) may use, in seconds.
    pub cpu_seconds: u64,
    /// Time from sending a page to its answer.
    pub deadline: Duration,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            processes: 2,
            memory_mib: 1024,
            cpu_seconds: 20,
            deadline: Duration::from_secs(20),
        }
    }
}

/// Why a file or page could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PageError {
    /// The file cannot be read, or needed more than its budget: ask for another file.
    #[error("{0}")]
    File(ScanError),
    /// No page process could run: an operator's problem, worth trying again later.
    #[error("the page reader is unavailable: {0}")]
    Reader(String),
}

/// Where pages are read: in page processes, or in this process.
#[derive(Debug, Clone, Default)]
pub enum Pages {
    /// In this process, with no limits but the reader's own (tests and trusted files).
    #[default]
    InProcess,
    /// In page processes under budgets.
    Isolated(Arc<pool::Pool>),
}

impl PartialEq for Pages {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Pages::InProcess, Pages::InProcess) => true,
            (Pages::Isolated(a), Pages::Isolated(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Pages {
    /// Page processes of `program` (the service's own binary) under `budgets`.
    pub fn isolated(program: PathBuf, budgets: Budgets) -> Pages {
        Pages::Isolated(Arc::new(pool::Pool::new(program, budgets)))
    }

    /// Checks that every page of `file` can be indexed at `dpi`, and counts them
    /// ([`examkit_scan::check_pages`]). Blocks: call it off the async runtime.
    pub fn check_pages(
        &self,
        file: &[u8],
        format: Format,
        dpi: u32,
        max_pixels: u64,
        max_pages: u32,
    ) -> Result<u32, PageError> {
        let request = Request::Check {
            media_type: format.content_type().to_owned(),
            dpi,
            max_pixels,
            max_pages,
        };
        match self.call(&request, file)? {
            (Response::Checked { pages }, _) => Ok(pages),
            (other, _) => Err(unexpected(&other)),
        }
    }

    /// Draws page `page` (one-based) at `dpi` within the default pixel limit
    /// ([`examkit_scan::render_page`]). Blocks: call it off the async runtime.
    pub fn render_page(
        &self,
        file: &[u8],
        format: Format,
        page: u32,
        dpi: u32,
    ) -> Result<GrayImage, PageError> {
        self.draw(
            file,
            format,
            page,
            dpi,
            examkit_scan::DEFAULT_MAX_PIXELS,
            false,
        )
        .map(|drawn| drawn.raster)
    }

    /// Draws page `page` as indexing reads it, with a PDF page's text layer
    /// ([`examkit_scan::render_for_index`]). Blocks: call it off the async runtime.
    pub fn render_for_index(
        &self,
        file: &[u8],
        format: Format,
        page: u32,
        dpi: u32,
        max_pixels: u64,
    ) -> Result<RenderedPage, PageError> {
        self.draw(file, format, page, dpi, max_pixels, true)
    }

    fn draw(
        &self,
        file: &[u8],
        format: Format,
        page: u32,
        dpi: u32,
        max_pixels: u64,
        text_layer: bool,
    ) -> Result<RenderedPage, PageError> {
        let request = Request::Draw {
            media_type: format.content_type().to_owned(),
            page,
            dpi,
            max_pixels,
            text_layer,
        };
        match self.call(&request, file)? {
            (
                Response::Drawn {
                    width,
                    height,
                    layer,
                },
                pixels,
            ) => {
                let raster = GrayImage::from_raw(width, height, pixels).ok_or_else(|| {
                    PageError::File(ScanError::Unreadable(
                        "the page's reader answered with pixels of the wrong size".into(),
                    ))
                })?;
                Ok(RenderedPage { raster, layer })
            }
            (other, _) => Err(unexpected(&other)),
        }
    }

    fn call(&self, request: &Request, file: &[u8]) -> Result<(Response, Vec<u8>), PageError> {
        let answer = match self {
            Pages::InProcess => child::answer(request, file),
            Pages::Isolated(pool) => pool.call(request, file).map_err(|failure| match failure {
                pool::Failure::Ended(reason) => PageError::File(ScanError::Unreadable(reason)),
                pool::Failure::Unavailable(reason) => PageError::Reader(reason),
            })?,
        };
        match answer {
            (Response::Refused { error }, _) => Err(PageError::File(error)),
            answer => Ok(answer),
        }
    }
}

fn unexpected(answer: &Response) -> PageError {
    let kind = match answer {
        Response::Checked { .. } => "a page count",
        Response::Drawn { .. } => "a drawn page",
        Response::Refused { .. } => "a refusal",
    };
    PageError::File(ScanError::Unreadable(format!(
        "the page's reader answered with {kind}, which was not asked for"
    )))
}
