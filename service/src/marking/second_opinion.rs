//! A second opinion: every question marked by two vision models at once, and an award only where
//! both award on the same writing.
//!
//! `--marker-second-model NAME` (on the first model's provider, or `--marker-second-url` for
//! another) makes the marker a [`Pair`]. Each model marks the question as it would alone (its own
//! repair round, evidence placement and guards); then, criterion by criterion ([`agree`]):
//! - both award it, with evidence on the same page whose boxes overlap (the same ink: the
//!   service placed both boxes on the student's writing) → awarded;
//! - both withhold it → withheld;
//! - both leave it `uncertain` → uncertain, for the first model's reason;
//! - anything else (one awards and the other does not, or awards on other writing, or one is
//!   uncertain) → `uncertain`, the reason giving both models' decisions, and the question carries
//!   the review flag `markers_disagree` naming the criteria.
//!
//! Each model's flags are kept once by code; where both found text addressed to a marker, on other
//! pages, the one flag names what each found.
//!
//! Both runs are recorded on the question (`markerRun.runs`: model, calls, latency, tokens and
//! each decision), with the totals. A failure of either model fails the question's attempt, as a
//! failure of one model would.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde_json::{Value, json};

use super::flags::{MarkerFlag, MarkerFlagCode};
use super::marker::{
    AnswerCheck, MarkFuture, MarkRequest, Marked, Marker, NameFuture, NameRequest, Rect,
};
use super::openai::OpenAi;

/// Two vision-model markers whose answers are merged by agreement.
#[derive(Debug)]
pub struct Pair {
    first: OpenAi,
    second: OpenAi,
}

impl Pair {
    /// The pair of two markers.
    pub fn new(first: OpenAi, second: OpenAi) -> Pair {
        Pair { first, second }
    }
}

/// One decision as the merge reads it.
#[derive(Debug, Clone, PartialEq)]
struct Decided<'a> {
    outcome: &'a str,
    page: Option<&'a str>,
    rect: Option<Rect>,
    reason: &'a str,
}

fn decided(decision: &Value) -> Decided<'_> {
    let evidence = &decision["evidence"][0];
    let b = &evidence["box"];
    let rect = (|| {
        Some(Rect {
            x: b["x"].as_f64()?,
            y: b["y"].as_f64()?,
            width: b["width"].as_f64()?,
            height: b["height"].as_f64()?,
        })
    })();
    Decided {
        outcome: decision["outcome"].as_str().unwrap_or(""),
        page: evidence["pageId"].as_str(),
        rect,
        reason: decision["reason"].as_str().unwrap_or(""),
    }
}

/// Whether two decisions on one criterion agree: both award it on the same writing (the same
/// page, overlapping boxes), or both withhold it.
fn agree(a: &Decided<'_>, b: &Decided<'_>) -> bool {
    match (a.outcome, b.outcome) {
        ("withheld", "withheld") => true,
        ("awarded", "awarded") => {
            a.page.is_some()
                && a.page == b.page
                && matches!((a.rect, b.rect), (Some(x), Some(y)) if x.overlap(&y) > 0.0)
        }
        _ => false,
    }
}

/// The first model's question with each decision the two do not agree on made `uncertain`, and
/// the criteria they disagree on, in the question's order.
fn merged(first: &Value, second: &Value, models: (&str, &str)) -> (Value, Vec<String>) {
    let mut question = first.clone();
    let mut disagreed = Vec::new();
    let theirs: Vec<&Value> = second["decisions"]
        .as_array()
        .map(|d| d.iter().collect())
        .unwrap_or_default();
    let Some(decisions) = question["decisions"].as_array_mut() else {
        return (question, disagreed);
    };
    for decision in decisions.iter_mut() {
        let id = decision["criterionId"].as_str().unwrap_or("").to_owned();
        let other = theirs.iter().find(|d| d["criterionId"] == id.as_str());
        let ours = decided(decision);
        let verdict = other.map(|o| decided(o));
        if verdict.as_ref().is_some_and(|v| agree(&ours, v)) {
            continue;
        }
        // Both doubt it: uncertain already, for the first model's reason; no disagreement.
        if ours.outcome == "uncertain" && verdict.as_ref().is_some_and(|v| v.outcome == "uncertain")
        {
            continue;
        }
        let (their_outcome, their_reason) = verdict
            .as_ref()
            .map_or(("no decision", ""), |v| (v.outcome, v.reason));
        let reason = format!(
            "the two markers disagree: {} {} ({}); {} {} ({}); a person checks it",
            models.0, ours.outcome, ours.reason, models.1, their_outcome, their_reason
        );
        // Evidence of the award, where only the second model awarded.
        if ours.outcome != "awarded"
            && let Some(other) = other.filter(|o| o["outcome"] == "awarded")
        {
            decision["evidence"] = other["evidence"].clone();
        }
        decision["outcome"] = json!("uncertain");
        decision["reason"] = json!(reason);
        disagreed.push(id);
    }
    (question, disagreed)
}

/// What the run record keeps of one model's run: its model, counts and each decision.
fn run_of(marked: &Marked) -> Value {
    let run = marked.run.clone().unwrap_or(Value::Null);
    let decisions: Vec<Value> = marked.question["decisions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| json!({ "criterionId": d["criterionId"], "outcome": d["outcome"] }))
        .collect();
    json!({
        "model": marked.model,
        "calls": run["calls"],
        "latencyMs": run["latencyMs"],
        "promptTokens": run["promptTokens"],
        "completionTokens": run["completionTokens"],
        "repairRounds": run["repairRounds"],
        "decisions": decisions,
    })
}

/// Both models' flags, each code once. Where both found text addressed to a marker but on other
/// pages (or other words), the one flag names what each found, so no page either saw is lost;
/// other codes keep the first model's flag.
fn merged_flags(
    first: &[MarkerFlag],
    second: &[MarkerFlag],
    models: (&str, &str),
) -> Vec<MarkerFlag> {
    let mut flags = first.to_vec();
    for flag in second {
        match flags.iter_mut().find(|f| f.code == flag.code) {
            None => flags.push(flag.clone()),
            Some(ours)
                if ours.code == MarkerFlagCode::InstructionsOnPage
                    && ours.message != flag.message =>
            {
                ours.message = format!(
                    "{}: {}; {}: {}",
                    models.0, ours.message, models.1, flag.message
                );
            }
            Some(_) => {}
        }
    }
    flags
}

/// The two answers merged: the question, the record of both runs and the flags.
fn combine(first: Marked, second: Marked) -> Marked {
    let models = (
        first.model.clone().unwrap_or_default(),
        second.model.clone().unwrap_or_default(),
    );
    let (question, disagreed) = merged(&first.question, &second.question, (&models.0, &models.1));
    let mut flags = merged_flags(&first.flags, &second.flags, (&models.0, &models.1));
    if !disagreed.is_empty() {
        flags.push(MarkerFlag::new(
            MarkerFlagCode::MarkersDisagree,
            format!(
                "the markers {} and {} disagree on {}: {}; each is uncertain",
                models.0,
                models.1,
                if disagreed.len() == 1 {
                    "one criterion".to_owned()
                } else {
                    format!("{} criteria", disagreed.len())
                },
                disagreed.join(", ")
            ),
        ));
    }
    let runs = [run_of(&first), run_of(&second)];
    let sum = |key: &str| -> u64 { runs.iter().filter_map(|r| r[key].as_u64()).sum() };
    let mut run = first.run.clone().unwrap_or_else(|| json!({}));
    if let Some(object) = run.as_object_mut() {
        object.insert(
            "model".into(),
            json!(format!("{} + {}", models.0, models.1)),
        );
        for key in ["calls", "promptTokens", "completionTokens", "repairRounds"] {
            object.insert(key.into(), json!(sum(key)));
        }
        // The two ran at once: the question waited for the slower.
        let latency = runs.iter().filter_map(|r| r["latencyMs"].as_u64()).max();
        object.insert("latencyMs".into(), json!(latency.unwrap_or(0)));
        object.insert("disagreed".into(), json!(disagreed));
        object.insert("runs".into(), json!(runs));
    }
    Marked {
        question,
        name: first.name,
        model: Some(format!("{} + {}", models.0, models.1)),
        run: Some(run),
        flags,
    }
}

impl Marker for Pair {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn needs_images(&self) -> bool {
        true
    }

    fn image_long_edge(&self) -> Option<u32> {
        self.first.image_long_edge()
    }

    fn image_format(&self) -> image::ImageFormat {
        self.first.image_format()
    }

    fn reads_names(&self) -> bool {
        true
    }

    /// A name is read by the first model alone: a person confirms every name read anyway.
    fn read_name<'a>(&'a self, request: &'a NameRequest) -> NameFuture<'a> {
        self.first.read_name(request)
    }

    fn mark<'a>(
        &'a self,
        request: &'a MarkRequest,
        check: AnswerCheck<'a>,
        cancelled: Arc<AtomicBool>,
    ) -> MarkFuture<'a> {
        Box::pin(async move {
            let (first, second) = tokio::join!(
                self.first.mark(request, check, cancelled.clone()),
                self.second.mark(request, check, cancelled),
            );
            Ok(combine(first?, second?))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(id: &str, outcome: &str, page: &str, x: f64) -> Value {
        json!({
            "criterionId": id, "outcome": outcome, "reason": format!("{outcome} it"),
            "evidence": [{ "pageId": page, "quote": "x = 3",
                           "box": { "x": x, "y": 0.5, "width": 0.1, "height": 0.03 } }],
            "conditionChecks": [],
        })
    }

    fn marked(model: &str, decisions: Vec<Value>) -> Marked {
        Marked {
            question: json!({ "label": "1", "decisions": decisions }),
            name: "examkit vision-model marker".into(),
            model: Some(model.into()),
            run: Some(json!({ "marker": "openai", "calls": 1, "latencyMs": 30,
                              "promptTokens": 100, "completionTokens": 10, "repairRounds": 0 })),
            flags: Vec::new(),
        }
    }

    fn outcomes(m: &Marked) -> Vec<&str> {
        m.question["decisions"]
            .as_array()
            .expect("decisions")
            .iter()
            .map(|d| d["outcome"].as_str().unwrap_or(""))
            .collect()
    }

    #[test]
    fn only_what_both_award_on_the_same_writing_is_awarded() {
        let first = marked(
            "a",
            vec![
                decision("c1", "awarded", "w:p1", 0.2),
                decision("c2", "awarded", "w:p1", 0.2),
                decision("c3", "awarded", "w:p1", 0.2),
                decision("c4", "withheld", "w:p1", 0.2),
                decision("c5", "withheld", "w:p1", 0.2),
                decision("c6", "uncertain", "w:p1", 0.2),
            ],
        );
        let second = marked(
            "b",
            vec![
                // The same ink, a box a little to the side.
                decision("c1", "awarded", "w:p1", 0.25),
                // Other writing on the page.
                decision("c2", "awarded", "w:p1", 0.6),
                decision("c3", "withheld", "w:p1", 0.2),
                decision("c4", "withheld", "w:p1", 0.2),
                decision("c5", "awarded", "w:p2", 0.2),
                decision("c6", "uncertain", "w:p1", 0.2),
            ],
        );
        let pair = combine(first, second);
        assert_eq!(
            outcomes(&pair),
            [
                "awarded",
                "uncertain",
                "uncertain",
                "withheld",
                "uncertain",
                "uncertain"
            ]
        );
        let flag = pair
            .flags
            .iter()
            .find(|f| f.code == MarkerFlagCode::MarkersDisagree)
            .expect("flag");
        assert!(
            flag.message.contains("3 criteria: c2, c3, c5;"),
            "{}",
            flag.message
        );
        // Where only the second awarded, its evidence is kept for the person.
        assert_eq!(
            pair.question["decisions"][4]["evidence"][0]["pageId"],
            "w:p2"
        );
        let reason = pair.question["decisions"][2]["reason"]
            .as_str()
            .unwrap_or("");
        assert!(
            reason.contains("a awarded") && reason.contains("b withheld"),
            "{reason}"
        );
        let run = pair.run.expect("run");
        assert_eq!(run["model"], "a + b");
        assert_eq!(run["calls"], 2);
        assert_eq!(run["promptTokens"], 200);
        assert_eq!(run["runs"][1]["model"], "b");
        assert_eq!(run["runs"][1]["decisions"][2]["outcome"], "withheld");
        assert_eq!(run["disagreed"], json!(["c2", "c3", "c5"]));
        assert_eq!(pair.model.as_deref(), Some("a + b"));
    }

    #[test]
    fn two_that_agree_raise_no_flag() {
        let decisions = vec![
            decision("c1", "awarded", "w:p1", 0.2),
            decision("c2", "withheld", "w:p1", 0.2),
        ];
        let pair = combine(marked("a", decisions.clone()), marked("b", decisions));
        assert_eq!(outcomes(&pair), ["awarded", "withheld"]);
        assert!(pair.flags.is_empty());
    }

    #[test]
    fn a_criterion_only_one_model_decided_is_uncertain() {
        let pair = combine(
            marked("a", vec![decision("c1", "awarded", "w:p1", 0.2)]),
            marked("b", vec![]),
        );
        assert_eq!(outcomes(&pair), ["uncertain"]);
        let reason = pair.question["decisions"][0]["reason"]
            .as_str()
            .unwrap_or("");
        assert!(reason.contains("b no decision"), "{reason}");
    }

    #[test]
    fn each_models_flags_are_kept_once() {
        let flag = MarkerFlag::new(MarkerFlagCode::InstructionsOnPage, "written");
        let mut a = marked("a", vec![]);
        a.flags.push(flag.clone());
        let mut b = marked("b", vec![]);
        b.flags.push(flag);
        assert_eq!(combine(a, b).flags.len(), 1);
    }

    #[test]
    fn instructions_each_model_found_on_other_pages_are_all_named() {
        let on = |page: &str| {
            MarkerFlag::new(
                MarkerFlagCode::InstructionsOnPage,
                format!("text addressed to a marker is written on page {page} (\"award\")"),
            )
        };
        let mut a = marked("a", vec![]);
        a.flags.push(on("w:p1"));
        let mut b = marked("b", vec![]);
        b.flags.push(on("w:p3"));
        b.flags
            .push(MarkerFlag::new(MarkerFlagCode::ModelRubric, "b's rubric"));
        let flags = combine(a, b).flags;
        let codes: Vec<_> = flags.iter().map(|f| f.code).collect();
        assert_eq!(
            codes,
            [
                MarkerFlagCode::InstructionsOnPage,
                MarkerFlagCode::ModelRubric
            ]
        );
        let message = &flags[0].message;
        assert!(
            message.contains("a: text addressed to a marker is written on page w:p1")
                && message.contains("b: text addressed to a marker is written on page w:p3"),
            "{message}"
        );
    }
}
