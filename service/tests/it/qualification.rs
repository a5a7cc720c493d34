//! A marker qualifies before it marks live: the vision-model marker against the test provider
//! under `--marker-qualify`, on SQLite and PostgreSQL.
//!
//! - Without a saved calibration, and with one that made a false award, the marker marks
//!   nothing: every question is saved `needs_review`, unmarked, with `marker_unqualified`, and the
//!   provider gets no call; a calibration at the bar lets it mark, and `/readyz` follows.
//! - With seeds (`--marker-seed-every 1`, one reference script of three questions), a model that
//!   answers the first seed as the trusted marker did and the later ones wrongly is found drifting
//!   once the seeds hold enough criteria: the live questions after that are saved unmarked with
//!   `marker_drifted`; `/metrics` shows the marker drifted with its seeds counted, the app's
//!   marked-work page says marking is held back, and a newer calibration lifts both.

use crate::calibration::{TrustedQuestion, answer_with, one_script_set, trusted_questions};
use crate::common;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::marking::{
    SAMPLE_QUESTIONS, all_terminal, exported_paper, poll_until, sample_answers, scan,
    session_from_paper, start, upload, workers,
};
use common::provider::{self, Reply, Seen};
use common::{Db, Server, generous, start_with};
use examkit::auth::Scope;
use examkit::marking::MarkerChoice;
use examkit::marking::openai::OpenAiConfig;
use examkit::store::qualifications::NewQualification;
use serde_json::Value;

const MODEL: &str = "test-vision-model";
const TOKEN: &str = "sk-qualify-0123456789";
const BAR: f64 = 0.8;

on_both!(
    an_unqualified_marker_marks_nothing_live,
    a_marker_drifting_on_the_seeds_stops_marking_live,
);

fn choice(provider: &provider::Provider) -> MarkerChoice {
    MarkerChoice::OpenAi(OpenAiConfig {
        base_url: provider.base_url.clone(),
        model: MODEL.into(),
        token: Some(TOKEN.into()),
        timeout: Duration::from_secs(60),
        backoff: Duration::from_millis(20),
        ..OpenAiConfig::default()
    })
}

/// A calibration of the test model: `agreed` of 100 criteria, with `false_awards`.
fn calibration(agreed: i64, false_awards: i64) -> NewQualification {
    NewQualification {
        marker: "openai".into(),
        model: Some(MODEL.into()),
        criteria: 100,
        agreed,
        kappa: Some(0.7),
        false_awards,
        non_work_page_awards: 0,
        scripts: 5,
        reference_digest: "sha256:test".into(),
        min_agreement: 0.5,
        passed: true,
    }
}

/// The process's metrics recorder, served on a listener of its own: its `/metrics` address.
async fn metrics_listener(s: &Server) -> String {
    let handle = examkit::telemetry::install().expect("recorder");
    let (addr, server) = examkit::server::metrics::serve(
        handle,
        s.store.clone(),
        "127.0.0.1:0".parse().expect("addr"),
        std::future::pending(),
    )
    .await
    .expect("metrics listener");
    tokio::spawn(server);
    format!("http://{addr}/metrics")
}

/// Each sample of a `/metrics` scrape by its name and labels as written
/// (`examkit_marker_drifted{marker="openai"}`), to its value.
async fn scrape(url: &str) -> std::collections::HashMap<String, f64> {
    let text = examkit::tls::client()
        .get(url)
        .send()
        .await
        .expect("scraped")
        .text()
        .await
        .expect("text");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (sample, value) = l.rsplit_once(' ')?;
            Some((sample.to_owned(), value.parse().ok()?))
        })
        .collect()
}

async fn readiness(s: &Server) -> Value {
    let response = s
        .client
        .get(format!("{}/readyz", s.base))
        .send()
        .await
        .expect("sent");
    assert_eq!(
        response.status().as_u16(),
        200,
        "the marker never makes it unready"
    );
    response.json().await.expect("json")
}

/// A session of the sample paper with the sample answers scanned: its id and the scan's asset.
async fn session(s: &Server, key: &str, paper: &common::marking::Exported) -> (String, String) {
    let session = session_from_paper(s, key, &paper.id).await;
    let (name, bytes) = scan(paper, &sample_answers(), &["--seed", "3"])
        .into_iter()
        .next()
        .expect("the scan");
    let asset = upload(s, key, &session, "work", &name, bytes).await;
    (session, asset)
}

async fn marked(s: &Server, key: &str, session: &str) -> Vec<Value> {
    start(s, key, session).await;
    let view = poll_until(s, key, session, 600, |v| all_terminal(v, 3)).await;
    view["questions"].as_array().expect("questions").clone()
}

fn flag_codes(question: &Value) -> Vec<String> {
    question["reviewFlags"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter_map(|f| f["code"].as_str().map(str::to_owned))
        .collect()
}

/// Every question is unmarked with `code` alone: needs review, nothing awarded, every mark
/// possible, no allocation, and a message naming the model, the bar and the remedy.
fn all_unmarked(questions: &[Value], code: &str) {
    assert_eq!(questions.len(), 3);
    for q in questions {
        assert_eq!(q["status"], "needs_review", "{q}");
        assert_eq!(flag_codes(q), [code], "{q}");
        let message = q["reviewFlags"][0]["message"].as_str().expect("message");
        for needle in [MODEL, "0.800", "examkit marker calibrate --save"] {
            assert!(message.contains(needle), "{message}");
        }
        assert_eq!(q["score"]["awarded"], 0, "{q}");
        assert!(q["score"]["max"].as_i64() > Some(0), "{q}");
        assert_eq!(q["score"]["possible"], q["score"]["max"], "{q}");
        assert_eq!(q["allocations"].as_array().map(Vec::len), Some(0), "{q}");
        assert!(q["markedBy"].is_null(), "nobody marked it: {q}");
        let run = &q["markerRun"];
        assert_eq!(run["marker"], "openai", "{q}");
        assert!(run["calls"].is_null(), "no call was made: {run}");
        assert_eq!(run["qualification"]["required"], BAR, "{run}");
    }
}

/// Marked by the model: no qualification flag, a call made, the standing recorded.
fn all_marked(questions: &[Value]) {
    for q in questions {
        assert!(
            matches!(q["status"].as_str(), Some("completed" | "needs_review")),
            "{q}"
        );
        let codes = flag_codes(q);
        assert!(
            !codes.iter().any(|c| c.starts_with("marker_")),
            "{codes:?}: {q}"
        );
        assert_eq!(q["markedBy"]["model"], MODEL, "{q}");
        assert!(q["markerRun"]["calls"].as_u64() >= Some(1), "{q}");
        assert_eq!(q["markerRun"]["qualification"]["qualified"], true, "{q}");
    }
}

async fn an_unqualified_marker_marks_nothing_live(db: Db) {
    let provider = provider::start(MODEL, Some(TOKEN), true, live_answer).await;
    let choice = choice(&provider);
    let s = start_with(db, generous(), |state| {
        state.marking.marker = choice.clone();
        state.marking.qualify = Some(BAR);
    })
    .await;
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Teacher").await;
    let key = s.key(&user, Scope::ALL).await;
    let paper = exported_paper(&s, &key, &SAMPLE_QUESTIONS).await;
    let marking = workers(&s, |config| {
        config.marker = choice.clone();
        config.qualify = Some(BAR);
        config.max_attempts = 1;
    });

    // No calibration saved.
    let ready = readiness(&s).await;
    assert_eq!(ready["checks"]["marker"], "not qualified", "{ready}");
    assert_eq!(ready["marker"]["required"], BAR, "{ready}");
    assert!(ready["marker"]["agreement"].is_null(), "{ready}");
    let (first, _) = session(&s, &key, &paper).await;
    let questions = marked(&s, &key, &first).await;
    all_unmarked(&questions, "marker_unqualified");
    assert!(
        questions[0]["reviewFlags"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("none is saved")),
        "{}",
        questions[0]
    );
    assert_eq!(provider.log().len(), 0, "the model was never asked");

    // A calibration above the bar with a false award does not qualify.
    s.store
        .save_qualification(&calibration(95, 1))
        .await
        .expect("saved");
    assert_eq!(readiness(&s).await["checks"]["marker"], "not qualified");
    let (second, _) = session(&s, &key, &paper).await;
    let questions = marked(&s, &key, &second).await;
    all_unmarked(&questions, "marker_unqualified");
    assert_eq!(
        questions[0]["markerRun"]["qualification"]["calibration"]["falseAwards"],
        1
    );
    assert_eq!(provider.log().len(), 0, "the model was never asked");

    // One at the bar without false awards, saved while the workers run, counts at once.
    let good = s
        .store
        .save_qualification(&calibration(80, 0))
        .await
        .expect("saved");
    let ready = readiness(&s).await;
    assert_eq!(ready["checks"]["marker"], "qualified", "{ready}");
    assert_eq!(ready["marker"]["agreement"], 0.8, "{ready}");
    assert_eq!(ready["marker"]["falseAwards"], 0, "{ready}");
    assert!(
        !ready.to_string().contains(MODEL),
        "the public answer names no model: {ready}"
    );
    let (third, _) = session(&s, &key, &paper).await;
    let questions = marked(&s, &key, &third).await;
    marking.shutdown().await;
    all_marked(&questions);
    assert_eq!(
        questions[0]["markerRun"]["qualification"]["calibration"]["id"],
        good.id.as_str()
    );
    assert_eq!(provider.log().len(), 3, "one call per question");
    provider.assert_clean();
}

/// What the student wrote in the sample paper's parts (see `common::marking::sample_answers`).
fn written(label: &str, part: &str) -> Option<&'static str> {
    match (label, part) {
        ("1", "a") => Some("fg(3) = 2(2) + 3 = 7"),
        ("1", "c") => Some("x = 9"),
        ("2", "a") => Some("sign change so there is a root"),
        ("2", "b") => Some("x2 = 1.7397"),
        _ => None,
    }
}

/// The live paper's answers: what was written awarded, the rest withheld.
fn live_answer(seen: &Seen) -> Reply {
    let page = seen.work_pages.first().cloned().unwrap_or_default();
    let decisions: Vec<Value> = seen
        .criteria
        .iter()
        .map(|(id, part, _code)| {
            let (outcome, quote) = match written(&seen.label, part) {
                Some(quote) => ("awarded", quote),
                None => ("withheld", ""),
            };
            let mut d = provider::decision(id, outcome, quote, &page, [0, 0, 40, 40]);
            d["conditionChecks"] = serde_json::json!(provider::checks_for(seen, id));
            d
        })
        .collect();
    Reply::Answer(
        serde_json::json!({ "transcription": "", "rubric": null, "decisions": decisions }),
    )
}

/// Whether a request is a seed's: none of its work pages is of a live upload.
fn is_seed(seen: &Seen, live: &Mutex<HashSet<String>>) -> bool {
    let live = live.lock().expect("live assets");
    !seen
        .work_pages
        .iter()
        .any(|page| page.split(':').next().is_some_and(|a| live.contains(a)))
}

/// The first seed answered as the trusted marker did; every later one with every mark withheld.
fn drifting_model(
    seen: &Seen,
    trusted: &[TrustedQuestion],
    live: &Mutex<HashSet<String>>,
    seeds: &Mutex<usize>,
) -> Reply {
    if !is_seed(seen, live) {
        return live_answer(seen);
    }
    let n = {
        let mut seeds = seeds.lock().expect("seeds");
        *seeds += 1;
        *seeds
    };
    if n == 1 {
        answer_with(seen, trusted, |_, _, _| None)
    } else {
        answer_with(seen, trusted, |_, _, _| Some("withheld"))
    }
}

async fn a_marker_drifting_on_the_seeds_stops_marking_live(db: Db) {
    // The metrics recorder is the process's: this test reads its gauges in a process of its own.
    if !common::alone(&format!(
        "qualification::a_marker_drifting_on_the_seeds_stops_marking_live::{}",
        match db {
            Db::Sqlite => "sqlite",
            Db::Postgres => "postgres",
        }
    )) {
        return;
    }
    let trusted = Arc::new(trusted_questions());
    let live: Arc<Mutex<HashSet<String>>> = Arc::default();
    let seeds_asked: Arc<Mutex<usize>> = Arc::default();
    let provider = {
        let (trusted, live, seeds) = (trusted.clone(), live.clone(), seeds_asked.clone());
        provider::start(MODEL, Some(TOKEN), true, move |seen| {
            drifting_model(seen, &trusted, &live, &seeds)
        })
        .await
    };
    let choice = choice(&provider);
    let set = one_script_set("pure-1");
    let seeds = examkit::marking::qualification::SeedsConfig {
        every: 1,
        reference: Arc::new(examkit::calibration::reference::load(set.path()).expect("the set")),
    };
    let s = start_with(db, generous(), |state| {
        state.marking.marker = choice.clone();
        state.marking.qualify = Some(BAR);
    })
    .await;
    let metrics = metrics_listener(&s).await;
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Teacher").await;
    let key = s.key(&user, Scope::ALL).await;
    let paper = exported_paper(&s, &key, &SAMPLE_QUESTIONS).await;
    let qualified = s
        .store
        .save_qualification(&calibration(95, 0))
        .await
        .expect("saved");
    // One question at a time, so that each live question follows its seed.
    let marking = workers(&s, |config| {
        config.marker = choice.clone();
        config.qualify = Some(BAR);
        config.seeds = Some(seeds.clone());
        config.workers = 1;
        config.marker_concurrency = 1;
        config.max_attempts = 1;
    });
    let (first, asset) = session(&s, &key, &paper).await;
    live.lock().expect("live").insert(asset);
    let questions = marked(&s, &key, &first).await;

    // Seeds 1 (8 criteria) and 2 (9) are too few to judge; with seed 3 the window holds 23
    // criteria, agreeing on too few: the third live question is not marked.
    let saved = s
        .store
        .recent_seeds(&qualified.id, 10)
        .await
        .expect("seeds");
    assert_eq!(saved.len(), 3, "{saved:?}");
    let oldest = &saved[2].saved;
    assert_eq!(oldest.seed, "pure-1/1");
    assert_eq!(oldest.criteria, 8);
    assert!(
        oldest.agreed >= 7,
        "answered as the trusted marker: {oldest:?}"
    );
    assert!(!oldest.drifted && !saved[1].saved.drifted);
    assert_eq!(saved[1].saved.seed, "pure-1/2");
    assert_eq!(saved[0].saved.seed, "pure-1/3");
    assert!(saved[0].saved.drifted, "{saved:?}");
    let unmarked: Vec<&Value> = questions
        .iter()
        .filter(|q| flag_codes(q).iter().any(|c| c == "marker_drifted"))
        .collect();
    assert_eq!(unmarked.len(), 1, "{questions:?}");
    let message = unmarked[0]["reviewFlags"][0]["message"]
        .as_str()
        .expect("message");
    assert!(message.contains("seed pure-1/3"), "{message}");
    let others: Vec<Value> = questions
        .iter()
        .filter(|q| !flag_codes(q).iter().any(|c| c == "marker_drifted"))
        .cloned()
        .collect();
    all_marked(&others);
    assert_eq!(
        others[0]["markerRun"]["qualification"]["seeds"]["counted"]
            .as_u64()
            .map(|n| n >= 1),
        Some(true),
        "{}",
        others[0]
    );
    // Three seeds and two live questions were asked.
    assert_eq!(*seeds_asked.lock().expect("seeds"), 3);
    assert_eq!(provider.log().len(), 5);
    let ready = readiness(&s).await;
    assert_eq!(ready["checks"]["marker"], "drifted", "{ready}");
    assert_eq!(ready["marker"]["seeds"]["counted"], 3, "{ready}");
    // Operators see it in the metrics: drifted, one seed agreeing with every trusted decision and
    // two not.
    let scraped = scrape(&metrics).await;
    for (sample, value) in [
        ("examkit_marker_drifted{marker=\"openai\"}", 1.0),
        // Its calibration still meets the bar: the drift is what holds it back.
        ("examkit_marker_qualified{marker=\"openai\"}", 1.0),
        (
            "examkit_marker_seeds_total{marker=\"openai\",agreed=\"true\"}",
            1.0,
        ),
        (
            "examkit_marker_seeds_total{marker=\"openai\",agreed=\"false\"}",
            2.0,
        ),
    ] {
        assert_eq!(scraped.get(sample), Some(&value), "{sample} in {scraped:?}");
    }
    // Teachers see it in the app: the marked-work page says marking is held back, and why.
    let email = "drifted@school.test";
    crate::app::teacher(&s, email).await;
    let mut browser = crate::app::Browser::new(&s);
    assert_eq!(
        browser.sign_in_as(email, crate::app::PASSWORD).await.status,
        303
    );
    let page = browser.get("/app/sessions").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("id=\"marker-held\""), "{}", page.body);
    assert!(
        page.body.contains("drifted from the trusted decisions"),
        "{}",
        page.body
    );

    // Stopped: nothing more is marked, seeds included.
    let (second, asset) = session(&s, &key, &paper).await;
    live.lock().expect("live").insert(asset);
    let questions = marked(&s, &key, &second).await;
    all_unmarked(&questions, "marker_drifted");
    assert_eq!(provider.log().len(), 5, "no call after the drift");

    // A newer calibration lifts it.
    s.store
        .save_qualification(&calibration(95, 0))
        .await
        .expect("saved");
    assert_eq!(readiness(&s).await["checks"]["marker"], "qualified");
    let scraped = scrape(&metrics).await;
    assert_eq!(
        scraped.get("examkit_marker_drifted{marker=\"openai\"}"),
        Some(&0.0),
        "{scraped:?}"
    );
    let page = browser.get("/app/sessions").await;
    assert!(!page.body.contains("marker-held"), "{}", page.body);
    marking.shutdown().await;
    provider.assert_clean();
}
