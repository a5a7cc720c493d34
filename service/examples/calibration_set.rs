//! Makes a calibration reference set from its recipe, `<DIR>/make.json`: each paper is saved and
//! exported from the bank by a private examkit, each script's answers are written on it in a
//! handwriting font by the scan maker (turned, skewed, noisy pages), and its trusted decisions
//! are written from the recipe's truth as a service-marking-import-v1 document, with each
//! decision's evidence on the part's answer space as the scan displays it.
//!
//! ```sh
//! cargo run -p examkit --example calibration_set -- examples/calibration
//! ```
//!
//! The recipe (`make.json`): `bank`, `papers` (as in `reference.json`), and `scripts`, each with
//! `name`, `paper`, `assetIds` (one per file: one for a PDF, one per page for images),
//! `schemeAssetId`, `format` (`pdf`, `png` or `jpeg`), `font` (a file), `scan` (more scan-maker
//! options), `answers` (`{question id: {part id: text}}`) and `truth` (`{question id: {part id:
//! "all" | [awarded criterion ids]}}`; every criterion not named is withheld).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use examkit::calibration::local::Local;
use examkit::calibration::reference::SCHEMA_VERSION;
use examkit::marking::MarkingConfig;
use serde::Deserialize;
use serde_json::{Value, json};
use uuid::Uuid;

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Recipe {
    bank: String,
    papers: BTreeMap<String, Value>,
    scripts: Vec<ScriptRecipe>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ScriptRecipe {
    name: String,
    paper: String,
    asset_ids: Vec<Uuid>,
    scheme_asset_id: Uuid,
    format: String,
    font: String,
    scan: Vec<String>,
    answers: BTreeMap<String, BTreeMap<String, String>>,
    truth: BTreeMap<String, BTreeMap<String, Value>>,
}

type Failure = Box<dyn std::error::Error>;

fn field<'a>(v: &'a Value, key: &str) -> Result<&'a Value, Failure> {
    v.get(key)
        .ok_or_else(|| format!("missing {key} in {v}").into())
}

/// A box of the upright page as displayed on a page turned `degrees` clockwise.
fn turn(r: [f64; 4], degrees: u32) -> [f64; 4] {
    let [x, y, w, h] = r;
    match degrees {
        90 => [1.0 - y - h, x, h, w],
        180 => [1.0 - x - w, 1.0 - y - h, w, h],
        270 => [y, 1.0 - x - w, h, w],
        _ => r,
    }
}

/// `--rotate 2:180,3:90` as page → degrees.
fn rotations(options: &[String]) -> HashMap<u32, u32> {
    options
        .windows(2)
        .filter(|w| w[0] == "--rotate")
        .flat_map(|w| w[1].split(','))
        .filter_map(|pair| {
            let (page, degrees) = pair.split_once(':')?;
            Some((page.parse().ok()?, degrees.parse().ok()?))
        })
        .collect()
}

/// The page id of printed page `page` in the script's files.
fn page_id(script: &ScriptRecipe, page: u32) -> String {
    if script.format == "pdf" {
        format!("{}:p{page}", script.asset_ids[0])
    } else {
        format!("{}:p1", script.asset_ids[page as usize - 1])
    }
}

fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(text)
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or("usage: calibration_set DIR")?,
    );
    let recipe: Recipe = serde_json::from_slice(&std::fs::read(dir.join("make.json"))?)?;
    let local = Local::start(
        MarkingConfig {
            ocr: false,
            ..MarkingConfig::default()
        },
        None,
    )
    .await?;
    let mut exported = HashMap::new();
    let mut schemes = HashMap::new();
    for (name, paper) in &recipe.papers {
        let id: Uuid = serde_json::from_value(field(paper, "id")?.clone())?;
        let questions: Vec<(Uuid, u32)> = field(paper, "questions")?
            .as_array()
            .ok_or("questions")?
            .iter()
            .map(|q| {
                Ok((
                    serde_json::from_value(field(q, "questionId")?.clone())?,
                    u32::try_from(field(q, "revision")?.as_u64().ok_or("revision")?)?,
                ))
            })
            .collect::<Result<_, Failure>>()?;
        let title = field(paper, "title")?.as_str().ok_or("title")?;
        let space = field(paper, "writingSpace")?
            .as_str()
            .ok_or("writingSpace")?;
        let made = local.paper(id, title, space, &questions).await?;
        let pages = examkit::inspect::page_count(
            &examkit::untrusted::Pages::InProcess,
            examkit::inspect::FileType::Pdf,
            &made.mark_scheme,
            150,
        )?;
        schemes.insert(name.clone(), pages);
        let mut banked = Vec::new();
        for (question, revision) in &questions {
            banked.push((*question, local.bank_question(*question, *revision).await?));
        }
        exported.insert(name.clone(), (made, banked));
    }
    local.shutdown().await;

    let mut scripts = Vec::new();
    for script in &recipe.scripts {
        let (paper, banked) = exported.get(&script.paper).ok_or("unknown paper")?;
        let folder = dir.join(&script.name);
        std::fs::create_dir_all(&folder)?;
        let work = tempfile::tempdir()?;
        let write = |name: &str, bytes: &[u8]| -> Result<String, Failure> {
            let path = work.path().join(name);
            std::fs::write(&path, bytes)?;
            Ok(path.to_string_lossy().into_owned())
        };
        let paper_pdf = write("paper.pdf", &paper.question_paper)?;
        let layout = write("layout.json", paper.layout.to_string().as_bytes())?;
        let answers = write(
            "answers.json",
            serde_json::to_vec(&script.answers)?.as_slice(),
        )?;
        let out = folder
            .join(format!(
                "scan.{}",
                if script.format == "jpeg" {
                    "jpg"
                } else {
                    &script.format
                }
            ))
            .to_string_lossy()
            .into_owned();
        let mut args: Vec<&str> = vec![
            "--paper",
            &paper_pdf,
            "--layout",
            &layout,
            "--answers",
            &answers,
            "--out",
            &out,
            "--font",
            &script.font,
            "--format",
            &script.format,
        ];
        args.extend(script.scan.iter().map(String::as_str));
        let files =
            examkit_scanmaker::make(&args).map_err(|e| format!("{}: {e:?}", script.name))?;
        if files.len() != script.asset_ids.len() {
            return Err(format!(
                "{}: {} files made, {} asset ids given",
                script.name,
                files.len(),
                script.asset_ids.len()
            )
            .into());
        }
        let trusted = trusted(script, &paper.layout, banked, schemes[&script.paper])?;
        let trusted_name = format!("{}/trusted.json", script.name);
        std::fs::write(
            dir.join(&trusted_name),
            serde_json::to_string_pretty(&trusted)? + "\n",
        )?;
        let relative = |p: &Path| -> Result<String, Failure> {
            Ok(p.strip_prefix(&dir)?.to_string_lossy().into_owned())
        };
        let files: Vec<Value> = files
            .iter()
            .zip(&script.asset_ids)
            .map(|(path, id)| Ok(json!({ "path": relative(path)?, "assetId": id })))
            .collect::<Result<_, Failure>>()?;
        scripts.push(json!({
            "name": script.name,
            "paper": script.paper,
            "files": files,
            "schemeAssetId": script.scheme_asset_id,
            "trusted": trusted_name,
        }));
        println!(
            "{}: {} file(s), trusted decisions written",
            script.name,
            script.asset_ids.len()
        );
    }
    let manifest = json!({
        "schemaVersion": SCHEMA_VERSION,
        "bank": recipe.bank,
        "papers": recipe.papers,
        "scripts": scripts,
    });
    std::fs::write(
        dir.join("reference.json"),
        serde_json::to_string_pretty(&manifest)? + "\n",
    )?;
    Ok(())
}

/// The trusted decisions of one script: per question, the bank's rubric (criterion ids prefixed
/// by the question's label, so they are unique in the document) and a decision per criterion from
/// the recipe's truth.
fn trusted(
    script: &ScriptRecipe,
    layout: &Value,
    banked: &[(Uuid, Value)],
    scheme_pages: usize,
) -> Result<Value, Failure> {
    let turned = rotations(&script.scan);
    let scheme_ids: Vec<String> = (1..=scheme_pages)
        .map(|p| format!("{}:p{p}", script.scheme_asset_id))
        .collect();
    let mut questions = Vec::new();
    let mut labels = Vec::new();
    let mut total = 0;
    for (n, (question_id, revision)) in banked.iter().enumerate() {
        let label = (n + 1).to_string();
        let number = n as u64 + 1;
        let key = question_id.hyphenated().to_string();
        let answers = script.answers.get(&key).cloned().unwrap_or_default();
        let truth = script.truth.get(&key).cloned().unwrap_or_default();
        let scheme = field(revision, "scheme")?;
        let layout_question = layout["questions"]
            .as_array()
            .and_then(|qs| qs.iter().find(|q| q["number"] == number))
            .ok_or_else(|| format!("question {number} is not in the layout"))?;
        // Each part's first answer-space region: (printed page, box as displayed).
        let mut spaces: HashMap<String, (u32, [f64; 4])> = HashMap::new();
        let mut work_pages: Vec<String> = Vec::new();
        for part in layout_question["parts"].as_array().ok_or("parts")? {
            let id = part["partId"].as_str().ok_or("partId")?.to_owned();
            for r in part["answerSpace"].as_array().ok_or("answerSpace")? {
                let page = u32::try_from(r["page"].as_u64().ok_or("page")?)?;
                let b = [
                    r["x"].as_f64().ok_or("x")?,
                    r["y"].as_f64().ok_or("y")?,
                    r["width"].as_f64().ok_or("width")?,
                    r["height"].as_f64().ok_or("height")?,
                ];
                let pid = page_id(script, page);
                if !work_pages.contains(&pid) {
                    work_pages.push(pid);
                }
                spaces
                    .entry(id.clone())
                    .or_insert((page, turn(b, turned.get(&page).copied().unwrap_or(0))));
            }
        }
        let mut selections = serde_json::Map::new();
        for pid in work_pages.iter().chain(&scheme_ids) {
            let (asset, page) = pid.split_once(":p").ok_or("page id")?;
            let list = selections
                .entry(asset.to_owned())
                .or_insert_with(|| json!([]));
            if let Some(list) = list.as_array_mut() {
                list.push(json!(page.parse::<u32>()?));
            }
        }
        let prefixed = |id: &str| format!("{label}.{id}");
        let mut criteria = Vec::new();
        let mut decisions = Vec::new();
        for c in field(scheme, "criteria")?.as_array().ok_or("criteria")? {
            let id = c["id"].as_str().ok_or("criterion id")?;
            let part = c["partId"].as_str().ok_or("partId")?;
            let conditions = c["conditions"].as_array().cloned().unwrap_or_default();
            let mut criterion = json!({
                "id": prefixed(id),
                "partId": part,
                "code": c["code"],
                "requirement": c["requirement"],
                "conditions": conditions,
                "dependsOn": c["dependsOn"].as_array().ok_or("dependsOn")?
                    .iter().filter_map(Value::as_str).map(prefixed).collect::<Vec<_>>(),
                "maxMarks": 1,
                "sourcePageIds": scheme_ids,
            });
            if !conditions.is_empty() {
                criterion["conditionMode"] =
                    c.get("conditionMode").cloned().unwrap_or(json!("all"));
            }
            let awarded = match truth.get(part) {
                Some(Value::String(all)) if all == "all" => true,
                Some(Value::Array(ids)) => ids.iter().any(|i| i == id),
                Some(other) => return Err(format!("truth for part {part}: {other}").into()),
                None => false,
            };
            let written = answers.get(part).map(|t| last_line(t));
            let (page, b) = spaces
                .get(part)
                .copied()
                .ok_or_else(|| format!("part {part} has no answer space"))?;
            let quote = written.unwrap_or("blank: nothing is written in the answer space");
            let reason = match (awarded, written) {
                (true, _) => format!("awarded: {}", c["requirement"].as_str().unwrap_or("")),
                (false, Some(_)) => "withheld: the work does not meet the requirement".to_owned(),
                (false, None) => "withheld: the answer space is blank".to_owned(),
            };
            let result = if awarded { "met" } else { "not_met" };
            decisions.push(json!({
                "criterionId": prefixed(id),
                "outcome": if awarded { "awarded" } else { "withheld" },
                "reason": reason,
                "evidence": [{ "pageId": page_id(script, page), "quote": quote,
                               "box": { "x": b[0], "y": b[1], "width": b[2], "height": b[3] } }],
                "conditionChecks": (0..conditions.len())
                    .map(|i| json!({ "index": i, "result": result }))
                    .collect::<Vec<_>>(),
            }));
            criteria.push(criterion);
        }
        total += criteria.len();
        labels.push(label.clone());
        questions.push(json!({
            "label": label,
            "pageSelections": selections,
            "rubric": { "parts": scheme["parts"], "criteria": criteria },
            "decisions": decisions,
        }));
    }
    Ok(json!({
        "schemaVersion": examkit_engine::SCHEMA_VERSION,
        "coordinateSystem": "normalized-top-left",
        "pageBasis": "displayed-page",
        "source": { "kind": "human", "name": "examkit reference set: answers written to be right, wrong or blank",
                    "markedAt": "2026-11-26T00:00:00Z" },
        "coverage": { "kind": "whole-paper", "questionLabels": labels, "totalMarks": total },
        "questions": questions,
    }))
}
