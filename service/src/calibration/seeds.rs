//! Seeded reference questions (`--marker-seed-every N`, `--marker-seeds DIR`): every N live
//! questions, the live marker first marks one question of a reference set, and its decisions are
//! compared with the trusted ones as calibration compares them ([`super::metrics`]). Each seed is
//! saved against the qualification in force ([`crate::store::qualifications`]); when the seeds
//! drift ([`crate::marking::qualification::drift`]) the qualification is spent and live marking
//! stops until the marker is calibrated and saved again.
//!
//! The reference set's questions are prepared once per process, when the first seed falls due:
//! its scripts go through a private examkit ([`super::local`]) exactly as calibration sends them
//! (the paper saved and exported, the scan uploaded, indexed and placed), and what the live
//! marker would be asked of each question (the request, with the page images it wants) is kept.
//! A seed is then one call of the live marker on a kept request, its answer checked, guarded and
//! scored by the engine as a live answer is. While the set is being prepared the live questions
//! whose seed is due wait for it; a set that cannot be prepared fails them (to be retried), so
//! the marker never marks live unwatched.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::local::Local;
use super::metrics::{Figures, Marked, Pair};
use super::reference::Reference;
use crate::marking::evidence;
use crate::marking::jobs::{JobContext, JobFailure, LiveSeeds};
use crate::marking::marker::{AnswerCheck, MarkFuture, MarkRequest, Marker, MarkerError};
use crate::marking::qualification::{SEED_WINDOW, SeedsConfig, Standing, Tally, drift};
use crate::marking::questions;
use crate::store::qualifications::NewSeed;

/// How long the preparation waits for one reference script to be indexed and placed.
const PREPARE_LIMIT: Duration = Duration::from_secs(30 * 60);

/// One seed: a reference question as the live marker is asked it, and its trusted decisions.
#[derive(Debug, Clone)]
pub struct Seed {
    /// `<script>/<label>`.
    pub name: String,
    /// The reference script.
    pub script: String,
    /// The script's paper.
    pub paper: String,
    /// What the marker is asked.
    pub request: MarkRequest,
    /// The assets its answer is checked against.
    pub assets: Vec<examkit_engine::Asset>,
    /// The scheme's criteria in order: id, code and whether the trusted decisions award it.
    pub trusted: Vec<(String, String, bool)>,
}

/// The seeds of one process: the count of live questions, which seed is next, and the prepared
/// set.
#[derive(Debug)]
pub struct Seeds {
    config: SeedsConfig,
    live: AtomicU64,
    next: AtomicUsize,
    prepared: tokio::sync::Mutex<Option<Arc<Vec<Seed>>>>,
}

/// How one seed went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Criteria compared.
    pub criteria: i64,
    /// Criteria agreed on.
    pub agreed: i64,
    /// False awards.
    pub false_awards: i64,
    /// Whether the marker failed to mark it.
    pub failed: bool,
}

impl Seeds {
    /// The seeds `config` describes, prepared when the first falls due.
    pub fn new(config: SeedsConfig) -> Seeds {
        Seeds {
            config,
            live: AtomicU64::new(0),
            next: AtomicUsize::new(0),
            prepared: tokio::sync::Mutex::new(None),
        }
    }

    /// Called as a live question is about to be marked by a marker in good `standing`: counts it
    /// and, every `every` questions, marks the next seed, compares it and saves it. `true` when a
    /// seed was counted (the standing may have changed: the caller reads it again).
    pub async fn before_live(
        &self,
        context: &Arc<JobContext>,
        standing: &Standing,
        lost: &Arc<AtomicBool>,
    ) -> Result<bool, JobFailure> {
        let Some(qualification) = &standing.latest else {
            return Ok(false);
        };
        let bar = standing.bar.unwrap_or(qualification.saved.min_agreement);
        let n = self.live.fetch_add(1, Ordering::SeqCst) + 1;
        if !n.is_multiple_of(u64::from(self.config.every.max(1))) {
            return Ok(false);
        }
        let seeds = match self.prepared(context).await {
            Ok(seeds) => seeds,
            Err(e) => {
                // The seed is still due at the next attempt.
                self.live.fetch_sub(1, Ordering::SeqCst);
                tracing::error!(error = %e, "the seeded reference questions cannot be prepared");
                return Err(JobFailure::transient(format!(
                    "the seeded reference questions (--marker-seeds) cannot be prepared, so nothing is marked live: {e}"
                )));
            }
        };
        let seed = &seeds[self.next.fetch_add(1, Ordering::SeqCst) % seeds.len()];
        let Some(outcome) = mark(context, seed, lost).await? else {
            return Ok(false);
        };
        let store = &context.store;
        let window = store
            .recent_seeds(&qualification.id, SEED_WINDOW - 1)
            .await?;
        let earlier = Tally::of(&window);
        let tally = Tally {
            criteria: earlier.criteria + outcome.criteria,
            agreed: earlier.agreed + outcome.agreed,
            false_awards: earlier.false_awards + outcome.false_awards,
        };
        let why = drift(tally, outcome.false_awards, bar);
        store
            .save_seed(&NewSeed {
                qualification_id: qualification.id.clone(),
                seed: seed.name.clone(),
                criteria: outcome.criteria,
                agreed: outcome.agreed,
                false_awards: outcome.false_awards,
                failed: outcome.failed,
                drifted: why.is_some(),
            })
            .await?;
        crate::telemetry::marker_seed(
            standing.marker,
            outcome.agreed == outcome.criteria && outcome.false_awards == 0,
            tally.agreement(),
        );
        match why {
            Some(why) => tracing::warn!(
                seed = %seed.name, %why,
                "the marker drifted on the seeded reference questions: live marking stops until it is calibrated and saved again"
            ),
            None => tracing::info!(
                seed = %seed.name, agreed = outcome.agreed, criteria = outcome.criteria,
                "a seeded reference question was marked"
            ),
        }
        Ok(true)
    }

    /// The prepared seeds, preparing them first if no call has yet.
    async fn prepared(&self, context: &JobContext) -> Result<Arc<Vec<Seed>>, String> {
        let mut prepared = self.prepared.lock().await;
        if let Some(seeds) = prepared.as_ref() {
            return Ok(seeds.clone());
        }
        tracing::info!(
            reference = %self.config.reference.dir.display(),
            "preparing the seeded reference questions"
        );
        let seeds = prepare(context, &self.config.reference).await?;
        if seeds.is_empty() {
            return Err("the reference set has no question to seed".into());
        }
        let seeds = Arc::new(seeds);
        *prepared = Some(seeds.clone());
        Ok(seeds)
    }
}

impl LiveSeeds for Seeds {
    fn before_live<'a>(
        &'a self,
        context: &'a Arc<JobContext>,
        standing: &'a Standing,
        lost: &'a Arc<AtomicBool>,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<bool, JobFailure>> + Send + 'a>> {
        Box::pin(Seeds::before_live(self, context, standing, lost))
    }
}

/// Marks one seed with the live marker and compares it; `None` when it cannot be counted (a
/// failure worth retrying, such as a provider that did not answer, or the job's lease lost).
async fn mark(
    context: &Arc<JobContext>,
    seed: &Seed,
    lost: &Arc<AtomicBool>,
) -> Result<Option<Outcome>, JobFailure> {
    let marker = context.marker.name();
    let answered = questions::call_marker(context, &seed.request, &seed.assets, lost).await;
    let results = match answered {
        Err(failure) if !failure.permanent => {
            tracing::warn!(seed = %seed.name, error = %failure.message, "a seed could not be marked; it is not counted");
            return Ok(None);
        }
        Err(failure) => {
            tracing::warn!(seed = %seed.name, error = %failure.message, "the marker failed a seed");
            None
        }
        Ok(mut marked) => {
            if let Err(failure) = questions::check_answer(&seed.request, &marked.question) {
                tracing::warn!(seed = %seed.name, error = %failure.message, "the marker's answer to a seed was refused");
                None
            } else {
                evidence::guard_answer(
                    &seed.request,
                    &mut marked.question,
                    &evidence::RasterInk::default(),
                );
                let source = questions::source_for(marker, &marked.name, marked.model.as_deref());
                let document =
                    questions::document_for(&seed.request.label, &marked.question, source);
                match questions::score(&document, seed.assets.clone()).await {
                    Ok(data) => Some(decisions(&data.result_json)),
                    Err(failure) if !failure.permanent => return Err(failure),
                    Err(failure) => {
                        tracing::warn!(seed = %seed.name, error = %failure.message, "the engine refused the marker's answer to a seed");
                        None
                    }
                }
            }
        }
    };
    if lost.load(Ordering::SeqCst) {
        return Ok(None);
    }
    Ok(Some(compare(seed, results.as_ref())))
}

/// Each criterion's `(effective, submitted)` outcome in the engine's result.
fn decisions(result_json: &str) -> BTreeMap<String, (String, String)> {
    let result: Value = serde_json::from_str(result_json).unwrap_or(Value::Null);
    result["criteria"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter_map(|c| {
            Some((
                c["id"].as_str()?.to_owned(),
                (
                    c["effective"].as_str()?.to_owned(),
                    c["submitted"].as_str()?.to_owned(),
                ),
            ))
        })
        .collect()
}

/// The seed's figures against the marker's outcomes (`None`: it failed, and nothing counts as
/// awarded), as calibration compares them.
pub fn compare(seed: &Seed, marked: Option<&BTreeMap<String, (String, String)>>) -> Outcome {
    let pairs: Vec<Pair> = seed
        .trusted
        .iter()
        .map(|(id, code, trusted)| Pair {
            script: seed.script.clone(),
            question: seed.request.label.clone(),
            criterion: id.clone(),
            code: code.clone(),
            paper: seed.paper.clone(),
            trusted_awarded: *trusted,
            marked: marked.map(|m| {
                let (effective, submitted) = m.get(id).map_or(("", ""), |(e, s)| (e, s));
                Marked {
                    awarded: effective == "awarded",
                    uncertain: submitted == "uncertain" || effective.is_empty(),
                    box_hits: None,
                    on_non_work_page: false,
                }
            }),
        })
        .collect();
    let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    match Figures::of(&pairs) {
        Some(f) => Outcome {
            criteria: count(f.criteria),
            agreed: count((f.agreement * f.criteria as f64).round() as usize),
            false_awards: count(f.false_awards),
            failed: marked.is_none(),
        },
        None => Outcome {
            criteria: 0,
            agreed: 0,
            false_awards: 0,
            failed: marked.is_none(),
        },
    }
}

/// A marker that marks nothing: it keeps each request it is asked (the live marker's settings
/// decide which page images come with it) and fails the question.
#[derive(Debug)]
struct Recorder {
    inner: Arc<dyn Marker>,
    asked: Mutex<Vec<MarkRequest>>,
}

impl Recorder {
    fn take(&self, session: &str, label: &str) -> Option<MarkRequest> {
        let mut asked = self.asked.lock().ok()?;
        let at = asked
            .iter()
            .position(|r| r.session_id == session && r.label == label)?;
        Some(asked.swap_remove(at))
    }
}

impl Marker for Recorder {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn needs_images(&self) -> bool {
        self.inner.needs_images()
    }

    fn image_long_edge(&self) -> Option<u32> {
        self.inner.image_long_edge()
    }

    fn image_format(&self) -> image::ImageFormat {
        self.inner.image_format()
    }

    fn mark<'a>(
        &'a self,
        request: &'a MarkRequest,
        _check: AnswerCheck<'a>,
        _cancelled: Arc<AtomicBool>,
    ) -> MarkFuture<'a> {
        Box::pin(async move {
            if let Ok(mut asked) = self.asked.lock() {
                asked.push(request.clone());
            }
            Err(MarkerError::new(
                crate::marking::failure::FailureCode::JobFailed,
                "kept as a seed",
                false,
            ))
        })
    }
}

/// Prepares every question of the reference set as a seed, in a private examkit with the live
/// marking settings.
async fn prepare(context: &JobContext, set: &Reference) -> Result<Vec<Seed>, String> {
    let recorder = Arc::new(Recorder {
        inner: context.marker.clone(),
        asked: Mutex::new(Vec::new()),
    });
    let mut marking = context.config.clone();
    marking.max_attempts = 1;
    let bank = set.bank_dir().map_err(|e| e.to_string())?;
    let local = Local::start_with(marking, bank.as_deref(), Some(recorder.clone())).await?;
    let prepared = prepare_in(&local, set, &recorder).await;
    local.shutdown().await;
    prepared
}

async fn prepare_in(
    local: &Local,
    set: &Reference,
    recorder: &Recorder,
) -> Result<Vec<Seed>, String> {
    super::save_papers(local, set).await?;
    let mut seeds = Vec::new();
    for script in &set.scripts {
        let name = &script.script.name;
        let uploaded = super::upload_script(local, set, script)
            .await
            .map_err(|e| format!("script {name}: {e}"))?;
        local.start_marking(&uploaded.session_id).await?;
        local
            .wait(
                &uploaded.session_id,
                uploaded.questions,
                PREPARE_LIMIT,
                |_| {},
            )
            .await
            .map_err(|e| format!("script {name}: {e}"))?;
        for question in &uploaded.trusted.report.questions {
            let label = &question.label;
            let request = recorder
                .take(&uploaded.session_id, label)
                .ok_or_else(|| {
                    format!(
                        "script {name}: question {label} was not placed on the scan, so it cannot be seeded"
                    )
                })?;
            let prefix = format!("{label}.");
            let trusted = question
                .criteria
                .iter()
                .map(|c| {
                    (
                        c.id.strip_prefix(&prefix).unwrap_or(&c.id).to_owned(),
                        c.code.clone(),
                        c.effective == examkit_engine::Decision::Awarded,
                    )
                })
                .collect();
            seeds.push(Seed {
                name: format!("{name}/{label}"),
                script: name.clone(),
                paper: script.script.paper.clone(),
                request,
                assets: uploaded.session_assets.clone(),
                trusted,
            });
        }
    }
    Ok(seeds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn seed() -> Seed {
        Seed {
            name: "a/1".into(),
            script: "a".into(),
            paper: "p".into(),
            request: MarkRequest {
                question_id: "q".into(),
                session_id: "s".into(),
                label: "1".into(),
                scheme: crate::marking::marker::Scheme::Pages,
                work_pages: Vec::new(),
                scheme_pages: Vec::new(),
                page_selections: serde_json::Map::new(),
                assets: json!([]),
            },
            assets: Vec::new(),
            trusted: vec![
                ("c1".into(), "M1".into(), true),
                ("c2".into(), "A1".into(), false),
                ("c3".into(), "B1".into(), true),
            ],
        }
    }

    fn outcomes(list: &[(&str, &str, &str)]) -> BTreeMap<String, (String, String)> {
        list.iter()
            .map(|(id, e, s)| ((*id).to_owned(), ((*e).to_owned(), (*s).to_owned())))
            .collect()
    }

    #[test]
    fn a_seed_is_compared_criterion_by_criterion() {
        let all = outcomes(&[
            ("c1", "awarded", "awarded"),
            ("c2", "withheld", "withheld"),
            ("c3", "awarded", "awarded"),
        ]);
        assert_eq!(
            compare(&seed(), Some(&all)),
            Outcome {
                criteria: 3,
                agreed: 3,
                false_awards: 0,
                failed: false
            }
        );
        let wrong = outcomes(&[
            ("c1", "awarded", "awarded"),
            ("c2", "awarded", "awarded"),
            ("c3", "uncertain", "uncertain"),
        ]);
        assert_eq!(
            compare(&seed(), Some(&wrong)),
            Outcome {
                criteria: 3,
                agreed: 1,
                false_awards: 1,
                failed: false
            }
        );
    }

    #[test]
    fn a_failed_seed_awards_nothing_and_a_missing_criterion_is_not_an_award() {
        let failed = compare(&seed(), None);
        assert_eq!(
            failed,
            Outcome {
                criteria: 3,
                agreed: 1,
                false_awards: 0,
                failed: true
            }
        );
        let partial = outcomes(&[("c2", "withheld", "withheld")]);
        assert_eq!(compare(&seed(), Some(&partial)).agreed, 1);
    }

    #[test]
    fn the_engines_result_is_read_for_each_criterion() {
        let result = json!({ "criteria": [
            { "id": "c1", "code": "M1", "submitted": "uncertain", "effective": "uncertain", "flags": [] },
            { "id": "c2", "code": "A1", "submitted": "awarded", "effective": "withheld", "flags": [] },
        ]});
        let read = decisions(&result.to_string());
        assert_eq!(read["c2"], ("withheld".to_owned(), "awarded".to_owned()));
        assert_eq!(read.len(), 2);
        assert!(decisions("not json").is_empty());
    }
}
