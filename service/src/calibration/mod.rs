//! `examkit marker calibrate`: how far the configured marker agrees with trusted decisions.
//!
//! Each reference script (see [`reference`]) is marked by the configured marker in a private
//! examkit ([`local`]): its paper is saved and exported from the bank, a session is made from
//! it, the scan is uploaded, and indexing, planning, the marker, evidence placement, the guards
//! and the engine run exactly as for an API client. The marker's decisions are then compared
//! with the trusted ones, criterion by criterion ([`metrics`]), and reported as a table for
//! people or JSON for scripts ([`report`]).

pub mod local;
pub mod metrics;
pub mod naming;
pub mod reference;
pub mod report;
pub mod seeds;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use serde_json::Value;
use uuid::Uuid;

use crate::config::{MarkingArgs, StoreArgs, share};
use crate::marking::MarkerChoice;
use crate::store::qualifications::NewQualification;
use local::Local;
use metrics::{Marked, Pair, QuestionMarks, Report};
use reference::{LoadedScript, Reference};

pub use naming::{described, marker_name};

/// `examkit marker …`.
#[derive(Debug, Subcommand)]
pub enum MarkerCommand {
    /// Marks a reference set of scanned scripts with the configured marker, compares its decisions
    /// with the trusted ones, and reports agreement, Cohen's kappa, false awards, mark differences,
    /// uncertain decisions and misplaced evidence, per criterion and per code family (M, A, B).
    ///
    /// Exit status: 0 when the marker meets the bar, 1 when agreement is below --min-agreement or
    /// any award cites a clean, blank or mark-scheme page, 2 for usage, reference-set or service
    /// errors.
    Calibrate(CalibrateArgs),
}

/// Arguments of `examkit marker calibrate`.
#[derive(Debug, Clone, Args)]
pub struct CalibrateArgs {
    /// The reference set's folder (holding `reference.json`).
    #[arg(long, value_name = "DIR")]
    pub reference: PathBuf,
    /// The least agreement over every criterion (0 to 1) for a zero exit status.
    #[arg(long, value_name = "F", default_value_t = 0.0, value_parser = share)]
    pub min_agreement: f64,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// How long to wait for one script's marking, in minutes.
    #[arg(long, value_name = "M", default_value_t = 60)]
    pub wait_minutes: u64,
    /// Save the result (marker, model, agreement, kappa, false awards, the reference set's
    /// digest, the bar and the date) in the deployment's database, the one `examkit serve` uses
    /// (`--database`, `DATABASE_URL` or the data directory), where `--marker-qualify` reads the
    /// latest for the marker and model. Every save is kept.
    #[arg(long)]
    pub save: bool,
    /// The marker and automated marking's settings, as for `examkit serve`.
    #[command(flatten)]
    pub marking: MarkingArgs,
    /// The deployment's database, for `--save`.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Runs `examkit marker …`.
pub async fn run(command: MarkerCommand) -> ExitCode {
    match command {
        MarkerCommand::Calibrate(args) => calibrate(args).await,
    }
}

/// The markers one calibration measures: the configured one; with a second opinion, each model
/// alone first, then the pair (the configured marker, which the exit status and the report's
/// top level are about).
fn measured(marker: &MarkerChoice) -> Vec<MarkerChoice> {
    match marker {
        MarkerChoice::OpenAi(config) => match &config.second {
            Some(second) => vec![
                MarkerChoice::OpenAi(crate::marking::openai::OpenAiConfig {
                    second: None,
                    ..config.clone()
                }),
                MarkerChoice::OpenAi((**second).clone()),
                marker.clone(),
            ],
            None => vec![marker.clone()],
        },
        other => vec![other.clone()],
    }
}

/// One marker's measure: its name, model, report and the report's failures against the bar.
type Run = (&'static str, Option<String>, Report, Vec<String>);

/// One marker's report on the reference set: marked on a private examkit of its own.
async fn measure(
    marking: &crate::marking::MarkingConfig,
    marker: MarkerChoice,
    set: &Reference,
    bank: Option<&std::path::Path>,
    limit: Duration,
    progress: bool,
) -> Result<Report, String> {
    let config = crate::marking::MarkingConfig {
        marker,
        ..marking.clone()
    };
    let local = Local::start(config, bank).await?;
    let compared = compare_all(&local, set, limit, progress).await;
    local.shutdown().await;
    let (pairs, marks) = compared?;
    Ok(Report::new(&pairs, marks))
}

async fn calibrate(args: CalibrateArgs) -> ExitCode {
    let fail = |message: String| {
        eprintln!("examkit marker calibrate: {message}");
        ExitCode::from(2)
    };
    let marking = match args.marking.config() {
        Ok(config) => config,
        Err(e) => return fail(e),
    };
    let set = match reference::load(&args.reference) {
        Ok(set) => set,
        Err(e) => return fail(e.to_string()),
    };
    let bank = match set.bank_dir() {
        Ok(bank) => bank,
        Err(e) => return fail(e.to_string()),
    };
    // The deployment's database is opened first, so that a run is not wasted on a database that
    // cannot be reached.
    let deployment = if args.save {
        match args.store.open().await {
            Ok(store) => Some(store),
            Err(e) => return fail(format!("cannot open the deployment's database: {e}")),
        }
    } else {
        None
    };
    let limit = Duration::from_secs(args.wait_minutes.max(1) * 60);
    let mut runs: Vec<Run> = Vec::new();
    for marker in measured(&marking.marker) {
        let (name, model) = marker_name(&marker);
        let report = match measure(&marking, marker, &set, bank.as_deref(), limit, !args.json).await
        {
            Ok(report) => report,
            Err(e) => return fail(e),
        };
        let failures = report.failures(args.min_agreement);
        runs.push((name, model, report, failures));
    }
    let scripts = set.scripts.len();
    let min_agreement = args.min_agreement;
    fn header(run: &Run, scripts: usize, min_agreement: f64) -> report::Header<'_> {
        report::Header {
            marker: run.0,
            model: run.1.as_deref(),
            scripts,
            min_agreement,
        }
    }
    let header = |run| header(run, scripts, min_agreement);
    // The configured marker is measured last; each model of a pair alone before it.
    let Some((configured, alone)) = runs.split_last() else {
        return fail("no marker to calibrate".into());
    };
    if args.json {
        let mut out = report::json(&header(configured), &configured.2, &configured.3);
        if !alone.is_empty() {
            out["alone"] = Value::Array(
                alone
                    .iter()
                    .map(|run| report::json(&header(run), &run.2, &run.3))
                    .collect(),
            );
        }
        println!("{out}");
    } else {
        for run in alone.iter().chain([configured]) {
            print!("{}", report::table(&header(run), &run.2, &run.3));
        }
    }
    if let Some(store) = deployment {
        for run in &runs {
            let new = qualification(&header(run), &run.2, &set.digest, run.3.is_empty());
            let saved = store.save_qualification(&new).await;
            match saved {
                Ok(saved) => eprintln!(
                    "examkit marker calibrate: saved as calibration {} of the {} in the deployment's database",
                    saved.id,
                    described(run.0, run.1.as_deref())
                ),
                Err(e) => {
                    store.close().await;
                    return fail(format!("cannot save the result: {e}"));
                }
            }
        }
        store.close().await;
    }
    if configured.3.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// What `--save` records of a report.
pub fn qualification(
    header: &report::Header<'_>,
    report: &Report,
    digest: &str,
    passed: bool,
) -> NewQualification {
    let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    let overall = report.overall.as_ref();
    let criteria = overall.map_or(0, |f| f.criteria);
    NewQualification {
        marker: header.marker.to_owned(),
        model: header.model.map(str::to_owned),
        criteria: count(criteria),
        agreed: overall.map_or(0, |f| {
            count((f.agreement * criteria as f64).round() as usize)
        }),
        kappa: overall.and_then(|f| f.kappa),
        false_awards: overall.map_or(0, |f| count(f.false_awards)),
        non_work_page_awards: count(report.non_work_page_awards.len()),
        scripts: count(header.scripts),
        reference_digest: digest.to_owned(),
        min_agreement: header.min_agreement,
        passed,
    }
}

/// Saves every paper the scripts answer, then marks and compares each script in order.
async fn compare_all(
    local: &Local,
    set: &Reference,
    limit: Duration,
    progress: bool,
) -> Result<(Vec<Pair>, Vec<QuestionMarks>), String> {
    save_papers(local, set).await?;
    let mut pairs = Vec::new();
    let mut marks = Vec::new();
    for script in &set.scripts {
        let name = &script.script.name;
        let (p, m) = compare_script(local, set, script, limit, progress)
            .await
            .map_err(|e| format!("script {name}: {e}"))?;
        pairs.extend(p);
        marks.extend(m);
    }
    Ok((pairs, marks))
}

/// Saves (and exports) every paper the set's scripts answer in the private service.
pub(crate) async fn save_papers(local: &Local, set: &Reference) -> Result<(), String> {
    for (name, paper) in &set.manifest.papers {
        if !set.scripts.iter().any(|s| &s.script.paper == name) {
            continue;
        }
        let questions: Vec<(Uuid, u32)> = paper
            .questions
            .iter()
            .map(|q| (q.question_id, q.revision))
            .collect();
        local
            .paper(paper.id, &paper.title, &paper.writing_space, &questions)
            .await
            .map_err(|e| format!("paper {name}: {e}"))?;
    }
    Ok(())
}

/// A page id cited by the trusted document, in the session's terms.
fn mapped_page(page_id: &str, assets: &HashMap<String, String>) -> Option<String> {
    let (asset, page) = page_id.split_once(':')?;
    Some(format!("{}:{page}", assets.get(asset)?))
}

/// `(pageId, [x, y, width, height])` of each evidence item.
fn boxes(evidence: &Value) -> Vec<(String, [f64; 4])> {
    evidence
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter_map(|e| {
            let b = &e["box"];
            Some((
                e["pageId"].as_str()?.to_owned(),
                [
                    b["x"].as_f64()?,
                    b["y"].as_f64()?,
                    b["width"].as_f64()?,
                    b["height"].as_f64()?,
                ],
            ))
        })
        .collect()
}

fn overlap(a: &[f64; 4], b: &[f64; 4]) -> bool {
    let w = (a[0] + a[2]).min(b[0] + b[2]) - a[0].max(b[0]);
    let h = (a[1] + a[3]).min(b[1] + b[3]) - a[1].max(b[1]);
    w > 1e-9 && h > 1e-9
}

/// A reference script uploaded to a session of the private service, with its trusted decisions.
pub(crate) struct Uploaded {
    /// The session's id.
    pub session_id: String,
    /// The reference asset ids (as the trusted document cites them) to the session's.
    pub assets: HashMap<String, String>,
    /// The session's assets, as the engine checks a marker's answer against them.
    pub session_assets: Vec<examkit_engine::Asset>,
    /// The trusted decisions.
    pub trusted: Trusted,
    /// How many questions the script's paper has.
    pub questions: usize,
}

/// Makes a session of the script's paper and uploads its scan (marking not started).
pub(crate) async fn upload_script(
    local: &Local,
    set: &Reference,
    script: &LoadedScript,
) -> Result<Uploaded, String> {
    let paper = set
        .manifest
        .papers
        .get(&script.script.paper)
        .ok_or("its paper is not in the manifest")?;
    let session = local.session(paper.id).await?;
    let session_id = session["id"].as_str().ok_or("the session has no id")?;
    let scheme = session["assets"]
        .as_array()
        .and_then(|a| a.iter().find(|a| a["kind"] == "scheme"))
        .ok_or("the session has no mark scheme")?;
    let scheme_id = scheme["id"].as_str().ok_or("the mark scheme has no id")?;
    // Reference asset ids (as the trusted document cites them) to the session's.
    let mut assets: HashMap<String, String> = HashMap::new();
    assets.insert(
        script.script.scheme_asset_id.hyphenated().to_string(),
        scheme_id.to_owned(),
    );
    let mut engine_assets = vec![examkit_engine::Asset {
        id: script.script.scheme_asset_id,
        kind: examkit_engine::AssetKind::Scheme,
        page_count: page_count(scheme)?,
    }];
    for file in &script.files {
        let asset = local
            .upload(
                session_id,
                &file.name,
                file.content_type,
                file.bytes.clone(),
            )
            .await?;
        let id = asset["id"].as_str().ok_or("an uploaded file has no id")?;
        assets.insert(file.asset_id.hyphenated().to_string(), id.to_owned());
        engine_assets.push(examkit_engine::Asset {
            id: file.asset_id,
            kind: examkit_engine::AssetKind::Work,
            page_count: page_count(&asset)?,
        });
    }
    let trusted = trusted_outcome(script, &engine_assets)?;
    let session_assets = engine_assets
        .iter()
        .map(|a| {
            let reference = a.id.hyphenated().to_string();
            let id = assets
                .get(&reference)
                .and_then(|id| Uuid::parse_str(id).ok())
                .ok_or("the session's asset ids are not UUIDs")?;
            Ok(examkit_engine::Asset { id, ..a.clone() })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Uploaded {
        session_id: session_id.to_owned(),
        assets,
        session_assets,
        trusted,
        questions: paper.questions.len(),
    })
}

async fn compare_script(
    local: &Local,
    set: &Reference,
    script: &LoadedScript,
    limit: Duration,
    progress: bool,
) -> Result<(Vec<Pair>, Vec<QuestionMarks>), String> {
    let name = &script.script.name;
    let uploaded = upload_script(local, set, script).await?;
    let session_id = uploaded.session_id.as_str();
    local.start_marking(session_id).await?;
    let mut last = String::new();
    let view = local
        .wait(session_id, uploaded.questions, limit, |view| {
            if progress {
                let line = progress_line(name, view);
                if line != last {
                    eprintln!("{line}");
                    last = line;
                }
            }
        })
        .await?;
    compare(
        name,
        &script.script.paper,
        &uploaded.trusted,
        &uploaded.assets,
        &view,
    )
}

fn page_count(asset: &Value) -> Result<u32, String> {
    asset["pageCount"]
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| "an asset has no page count".to_owned())
}

/// What a person watching is told: `<script>: indexed 3/4 pages, marked 1/3 questions`.
fn progress_line(name: &str, view: &Value) -> String {
    let indexed = view["indexing"]["pagesDone"].as_u64().unwrap_or(0);
    let pages = view["indexing"]["pagesTotal"].as_u64().unwrap_or(0);
    let questions = view["questions"].as_array().map_or(&[][..], Vec::as_slice);
    let marked = questions
        .iter()
        .filter(|q| !matches!(q["status"].as_str(), Some("queued" | "running")))
        .count();
    format!(
        "{name}: indexed {indexed}/{pages} pages, marked {marked}/{} questions",
        questions.len()
    )
}

/// The trusted decisions, as the engine computes them.
pub(crate) struct Trusted {
    /// The trusted document.
    pub document: Value,
    /// The engine's report on it.
    pub report: examkit_engine::Report,
}

fn trusted_outcome(
    script: &LoadedScript,
    assets: &[examkit_engine::Asset],
) -> Result<Trusted, String> {
    let shown = &script.script.trusted;
    let document: Value =
        serde_json::from_slice(&script.trusted).map_err(|e| format!("{shown}: not JSON: {e}"))?;
    match examkit_engine::validate(&script.trusted, Some(assets)) {
        examkit_engine::Outcome::Valid(report) => Ok(Trusted { document, report }),
        examkit_engine::Outcome::Invalid(rejection) => {
            let errors: Vec<String> = rejection
                .errors
                .iter()
                .take(5)
                .map(|e| format!("{} at {:?}: {}", e.code.as_str(), e.path, e.message))
                .collect();
            Err(format!(
                "{shown}: the trusted decisions are not a valid service-marking-import-v1 document for this scan: {}",
                errors.join("; ")
            ))
        }
    }
}

fn compare(
    script: &str,
    paper: &str,
    trusted: &Trusted,
    assets: &HashMap<String, String>,
    view: &Value,
) -> Result<(Vec<Pair>, Vec<QuestionMarks>), String> {
    let empty = Vec::new();
    let evidence_pages: HashMap<&str, bool> = view["indexing"]["pages"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter_map(|p| Some((p["pageId"].as_str()?, p["evidence"] == true)))
        .collect();
    let marked: HashMap<&str, &Value> = view["questions"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter_map(|q| Some((q["label"].as_str()?, q)))
        .collect();
    let documents: HashMap<&str, &Value> = trusted.document["questions"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter_map(|q| Some((q["label"].as_str()?, q)))
        .collect();
    let mut pairs = Vec::new();
    let mut marks = Vec::new();
    for question in &trusted.report.questions {
        let label = question.label.as_str();
        let model = marked
            .get(label)
            .ok_or_else(|| format!("the paper has no question {label}"))?;
        let failed = matches!(model["status"].as_str(), Some("failed" | "cancelled"));
        let allocations: BTreeMap<&str, &Value> = model["allocations"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter_map(|a| Some((a["criterionId"].as_str()?, a)))
            .collect();
        let decisions = documents
            .get(label)
            .and_then(|q| q["decisions"].as_array())
            .unwrap_or(&empty);
        let prefix = format!("{label}.");
        for criterion in &question.criteria {
            // Criterion ids are unique in a whole import document, so a trusted document may
            // prefix the scheme's ids with the question's label and a dot.
            let id = criterion.id.strip_prefix(&prefix).unwrap_or(&criterion.id);
            let trusted_boxes: Vec<(String, [f64; 4])> = decisions
                .iter()
                .find(|d| d["criterionId"] == criterion.id.as_str())
                .map(|d| boxes(&d["evidence"]))
                .unwrap_or_default()
                .into_iter()
                .filter_map(|(page, b)| Some((mapped_page(&page, assets)?, b)))
                .collect();
            let decision = if failed {
                None
            } else {
                let a = allocations.get(id).ok_or_else(|| {
                    format!(
                        "question {label}: the trusted decisions name criterion {id:?}, which the paper's scheme does not have"
                    )
                })?;
                let awarded = a["decision"] == "awarded";
                let cited = boxes(&a["evidence"]);
                Some(Marked {
                    awarded,
                    uncertain: a["submitted"] == "uncertain",
                    box_hits: awarded.then(|| {
                        cited.iter().any(|(page, b)| {
                            trusted_boxes
                                .iter()
                                .any(|(p, t)| p == page && overlap(b, t))
                        })
                    }),
                    on_non_work_page: awarded
                        && cited.iter().any(|(page, _)| {
                            !evidence_pages.get(page.as_str()).copied().unwrap_or(false)
                        }),
                })
            };
            pairs.push(Pair {
                script: script.to_owned(),
                question: label.to_owned(),
                criterion: id.to_owned(),
                code: criterion.code.clone(),
                paper: paper.to_owned(),
                trusted_awarded: criterion.effective == examkit_engine::Decision::Awarded,
                marked: decision,
            });
        }
        let awarded = model["score"]["awarded"].as_u64().unwrap_or(0);
        marks.push(QuestionMarks {
            question: format!("{script}/{label}"),
            trusted: question.score.awarded,
            marked: if failed {
                0
            } else {
                u32::try_from(awarded).unwrap_or(u32::MAX)
            },
            failed,
            error: failed.then(|| {
                let error = &model["error"];
                match (error["code"].as_str(), error["message"].as_str()) {
                    (Some(code), Some(message)) => format!("{code}: {message}"),
                    _ => format!(
                        "the question was {}",
                        model["status"].as_str().unwrap_or("?")
                    ),
                }
            }),
        });
    }
    Ok((pairs, marks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_overlap_only_with_area() {
        let a = [0.1, 0.1, 0.2, 0.2];
        assert!(overlap(&a, &[0.2, 0.2, 0.2, 0.2]));
        assert!(!overlap(&a, &[0.3, 0.1, 0.2, 0.2]), "touching edges");
        assert!(!overlap(&a, &[0.5, 0.5, 0.1, 0.1]));
    }

    #[test]
    fn trusted_pages_map_to_the_sessions_assets() {
        let assets = HashMap::from([("ref".to_owned(), "live".to_owned())]);
        assert_eq!(mapped_page("ref:p2", &assets), Some("live:p2".into()));
        assert_eq!(mapped_page("other:p2", &assets), None);
        assert_eq!(mapped_page("garbage", &assets), None);
    }
}
