//! Automated marking: the configuration, the workers that run the job queue, and the jobs:
//! indexing of uploaded pages ([`indexing`]), placing a paper's questions and marking each
//! question ([`questions`]) with a [`marker::Marker`].
//!
//! The data path: an upload is stored with its session; `start` reserves the account's allowance
//! and enqueues one indexing job per page (`crate::store::automated`); workers claim jobs from the
//! database ([`crate::store::jobs`]), index each page with `examkit-scan` (raster, orientation,
//! words with boxes, page codes, comparison with the clean question paper) and save the page's
//! record in the transaction that finishes the job. The HTTP layer (`crate::http::sessions`) only
//! parses requests and calls the store and this module. A deployment's workers start from
//! [`launch`] (its marker and seeds); their loop is [`worker`], the jobs' shared ground [`jobs`].

pub mod answers;
pub mod builtin;
pub mod evidence;
pub mod external;
pub mod failure;
pub mod flags;
pub mod indexing;
pub mod instructions;
pub mod jobs;
pub mod launch;
pub mod marker;
pub mod model_answer;
pub mod names;
pub mod openai;
pub mod pages;
pub mod paper_scheme;
pub mod placement;
pub mod qualification;
pub mod questions;
pub mod remote;
pub mod second_opinion;
pub mod worker;

use std::sync::Arc;
use std::time::Duration;

use crate::store::automated::Allowance;

/// Which marker marks questions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MarkerChoice {
    /// The built-in marker (structured schemes; no network).
    BuiltIn,
    /// An HTTP marking pipeline.
    External {
        /// Where to POST each question.
        url: String,
        /// The bearer token sent with each call.
        token: Option<String>,
        /// Each call's time limit.
        timeout: Duration,
    },
    /// A vision-language model over the OpenAI-compatible Chat Completions API.
    OpenAi(openai::OpenAiConfig),
}

impl MarkerChoice {
    /// Whether the marker this choice names reads the names students write on their covers
    /// (as [`marker::Marker::reads_names`] of the marker built from it says).
    pub fn reads_names(&self) -> bool {
        matches!(self, MarkerChoice::OpenAi(_))
    }

    /// The marker this choice names.
    pub fn build(&self) -> Result<Arc<dyn marker::Marker>, String> {
        Ok(match self {
            MarkerChoice::BuiltIn => Arc::new(builtin::BuiltIn),
            MarkerChoice::External {
                url,
                token,
                timeout,
            } => Arc::new(external::External::new(url, token.clone(), *timeout)?),
            MarkerChoice::OpenAi(config) => match &config.second {
                Some(second) => {
                    let first = openai::OpenAiConfig {
                        second: None,
                        ..config.clone()
                    };
                    Arc::new(second_opinion::Pair::new(
                        openai::OpenAi::new(first)?,
                        openai::OpenAi::new((**second).clone())?,
                    ))
                }
                None => Arc::new(openai::OpenAi::new(config.clone())?),
            },
        })
    }
}

/// How automated marking runs in this process.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkingConfig {
    /// Whether automated marking is offered: off, its routes answer 503
    /// `automated_marking_disabled` and `GET /v1/marking/sessions` says `enabled: false`.
    pub enabled: bool,
    /// Workers this process runs (0: this instance only serves HTTP and enqueues).
    pub workers: usize,
    /// Each account's daily allowance.
    pub allowance: Allowance,
    /// A claimed job's lease; heartbeats renew it every third of it.
    pub lease: Duration,
    /// Attempts per job before it fails.
    pub max_attempts: i64,
    /// The first retry's delay; each further retry doubles it.
    pub backoff: Duration,
    /// How long an idle worker waits before looking for due jobs again.
    pub poll: Duration,
    /// Dots per inch at which pages are rasterised for indexing.
    pub dpi: u32,
    /// Whether pages without a text layer are read with OCR (Tesseract).
    pub ocr: bool,
    /// The marker.
    pub marker: MarkerChoice,
    /// Questions each worker marks at once (marker calls in flight); at least 1.
    pub marker_concurrency: usize,
    /// Where the pages of files from outside are read (page processes, for `serve` and
    /// `worker`).
    pub pages: crate::untrusted::Pages,
    /// The least agreement of the marker's latest saved calibration, with no false award, for
    /// it to mark live (`--marker-qualify`); `None`: every marker marks (see [`qualification`]).
    pub qualify: Option<f64>,
    /// Seeded reference questions marked between live ones (`--marker-seed-every`).
    pub seeds: Option<qualification::SeedsConfig>,
}

impl Default for MarkingConfig {
    fn default() -> Self {
        MarkingConfig {
            enabled: true,
            workers: 1,
            allowance: Allowance::default(),
            lease: Duration::from_secs(30),
            max_attempts: 3,
            backoff: Duration::from_secs(5),
            poll: Duration::from_millis(500),
            dpi: 150,
            ocr: true,
            marker: MarkerChoice::BuiltIn,
            marker_concurrency: 1,
            pages: crate::untrusted::Pages::InProcess,
            qualify: None,
            seeds: None,
        }
    }
}

impl MarkingConfig {
    /// The lease in milliseconds.
    pub fn lease_ms(&self) -> i64 {
        i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX)
    }

    /// The first retry's delay in milliseconds.
    pub fn backoff_ms(&self) -> i64 {
        i64::try_from(self.backoff.as_millis()).unwrap_or(i64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_choice_says_what_its_marker_does_of_names() {
        let choices = [
            MarkerChoice::BuiltIn,
            MarkerChoice::External {
                url: "http://127.0.0.1:9/mark".into(),
                token: None,
                timeout: Duration::from_secs(5),
            },
            MarkerChoice::OpenAi(openai::OpenAiConfig {
                base_url: "http://127.0.0.1:9/v1".into(),
                model: "reader".into(),
                ..openai::OpenAiConfig::default()
            }),
        ];
        for choice in choices {
            let built = choice.build().expect("a marker");
            assert_eq!(choice.reads_names(), built.reads_names(), "{choice:?}");
        }
    }
}
