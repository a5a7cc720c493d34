//! The marking configuration the `--marker…`, `--job…` and `--page…` flags describe
//! ([`MarkingArgs::config`]), for the commands that run or measure markers (`serve`, `worker`,
//! `marker calibrate`): the flags are the configuration layer's, the configuration marking's, and
//! only a command needs both.

use crate::config::{MarkerKind, MarkingArgs, StructuredOutputArg, Switch};

impl MarkingArgs {
    /// The marking configuration these flags describe; an error for an external marker without
    /// a URL.
    pub fn config(&self) -> Result<crate::marking::MarkingConfig, String> {
        let defaults = crate::marking::MarkingConfig::default();
        let marker = match self.marker {
            MarkerKind::Builtin => crate::marking::MarkerChoice::BuiltIn,
            MarkerKind::External => crate::marking::MarkerChoice::External {
                url: self
                    .marker_url
                    .clone()
                    .ok_or("--marker external needs --marker-url (or EXAMKIT_MARKER_URL)")?,
                token: self.marker_token.clone(),
                timeout: std::time::Duration::from_secs(self.marker_timeout_seconds.max(1)),
            },
            MarkerKind::Openai => {
                use crate::marking::openai::{OpenAiConfig, StructuredOutput};
                let mut first = OpenAiConfig {
                    base_url: self.marker_url.clone().ok_or(
                        "--marker openai needs --marker-url, the API base (or EXAMKIT_MARKER_URL)",
                    )?,
                    model: self.marker_model.clone().ok_or(
                        "--marker openai needs --marker-model, the model's name (or EXAMKIT_MARKER_MODEL)",
                    )?,
                    token: self.marker_token.clone(),
                    timeout: std::time::Duration::from_secs(self.marker_timeout_seconds.max(1)),
                    image_long_edge: self.marker_image_size,
                    structured_output: match self.marker_structured_output {
                        StructuredOutputArg::JsonSchema => StructuredOutput::JsonSchema,
                        StructuredOutputArg::JsonObject => StructuredOutput::JsonObject,
                        StructuredOutputArg::None => StructuredOutput::None,
                    },
                    allow_http: self.marker_allow_http,
                    strictness: crate::marking::openai::question::Strictness {
                        require_quote: self.marker_require_quote,
                    },
                    ..OpenAiConfig::default()
                };
                first.second = self.second_opinion(&first)?.map(Box::new);
                crate::marking::MarkerChoice::OpenAi(first)
            }
        };
        Ok(crate::marking::MarkingConfig {
            marker,
            enabled: self.automated_marking == Switch::On,
            workers: self.workers,
            allowance: crate::store::automated::Allowance {
                pages_per_day: self.marking_pages_per_day.max(0),
                questions_per_day: self.marking_questions_per_day.max(0),
            },
            lease: std::time::Duration::from_secs(self.job_lease_seconds.max(1)),
            max_attempts: self.job_attempts.max(1),
            backoff: std::time::Duration::from_millis(self.job_backoff_ms),
            ocr: self.ocr == Switch::On,
            marker_concurrency: usize::from(self.marker_concurrency),
            pages: self.pages()?,
            qualify: self.marker_qualify,
            seeds: self.seeds()?,
            ..defaults
        })
    }

    /// The seeded reference questions the flags ask for: the reference set read and checked now,
    /// so that a wrong folder is refused at start.
    fn seeds(&self) -> Result<Option<crate::marking::qualification::SeedsConfig>, String> {
        let (every, dir) = match (self.marker_seed_every, &self.marker_seeds) {
            (None, None) => return Ok(None),
            (Some(_), None) => {
                return Err("--marker-seed-every needs --marker-seeds DIR, the reference set the seeds are drawn from (or EXAMKIT_MARKER_SEEDS)".into());
            }
            (None, Some(_)) => {
                return Err("--marker-seeds needs --marker-seed-every N, how many live questions are marked between seeds (or EXAMKIT_MARKER_SEED_EVERY)".into());
            }
            (Some(every), Some(dir)) => (every, dir),
        };
        if self.marker_qualify.is_none() {
            return Err("--marker-seed-every needs --marker-qualify MIN_AGREEMENT, the bar the seeds are held to".into());
        }
        let reference = crate::calibration::reference::load(dir)
            .map_err(|e| format!("--marker-seeds {}: {e}", dir.display()))?;
        Ok(Some(crate::marking::qualification::SeedsConfig {
            every,
            reference: std::sync::Arc::new(reference),
        }))
    }

    /// The second model's settings (`--marker-second-model`): the first's, on its provider with
    /// its token, or on `--marker-second-url` with `--marker-second-token`. An error for a second
    /// URL or token without a second model, or the same model named twice on one provider.
    fn second_opinion(
        &self,
        first: &crate::marking::openai::OpenAiConfig,
    ) -> Result<Option<crate::marking::openai::OpenAiConfig>, String> {
        let Some(model) = self.marker_second_model.clone() else {
            if self.marker_second_url.is_some() || self.marker_second_token.is_some() {
                return Err(
                    "--marker-second-url and --marker-second-token need --marker-second-model"
                        .into(),
                );
            }
            return Ok(None);
        };
        if model.trim().is_empty() {
            return Err("--marker-second-model needs the second model's name".into());
        }
        let (base_url, token) = match &self.marker_second_url {
            Some(url) => (url.clone(), self.marker_second_token.clone()),
            None => {
                if self.marker_second_token.is_some() {
                    return Err("--marker-second-token needs --marker-second-url: on the first model's provider its token is used".into());
                }
                (first.base_url.clone(), first.token.clone())
            }
        };
        if model == first.model
            && base_url.trim_end_matches('/') == first.base_url.trim_end_matches('/')
        {
            return Err(format!(
                "--marker-second-model {model} is the first model on the same provider: a second opinion needs another model (or another provider)"
            ));
        }
        Ok(Some(crate::marking::openai::OpenAiConfig {
            base_url,
            model,
            token,
            ..first.clone()
        }))
    }

    /// Where pages are read: page processes of this very binary under the budgets the flags
    /// give, or this process with `--page-processes 0`.
    fn pages(&self) -> Result<crate::untrusted::Pages, String> {
        if self.page_processes == 0 {
            return Ok(crate::untrusted::Pages::InProcess);
        }
        let program = std::env::current_exe()
            .map_err(|e| format!("the page processes cannot find this program: {e}"))?;
        Ok(crate::untrusted::Pages::isolated(
            program,
            crate::untrusted::Budgets {
                processes: self.page_processes,
                memory_mib: self.page_memory_mib,
                cpu_seconds: self.page_cpu_seconds,
                deadline: std::time::Duration::from_secs(self.page_seconds),
            },
        ))
    }
}
