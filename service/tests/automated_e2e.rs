//! The whole flow of automated marking through the HTTP API on SQLite and PostgreSQL, with a scan
//! the test makes as a student's would look: a paper from the sample bank, the student's answers
//! written by hand (a handwriting font) into its answer spaces (some right, one wrong, some blank),
//! rasterised, one page turned upside down, skewed and noisy; a session from the paper, the scan
//! uploaded, one `start`, polled until every question is terminal; then the located results are
//! checked against the engine, and one decision is reviewed.

mod common;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use common::{Db, Resp, Server, generous, start_with};
use examkit::auth::Scope;
use examkit::marking::MarkingConfig;
use reqwest::Method;
use serde_json::{Value, json};

fn text(resp: &Resp) -> String {
    String::from_utf8_lossy(&resp.body).into_owned()
}

fn idem() -> String {
    format!("idem-{}", uuid::Uuid::new_v4().simple())
}

/// The sample questions the student answers, and what they write (by part).
fn answers() -> Value {
    json!({
        // f(x) = … : (a) right, (b) left blank, (c) wrong final answer.
        "8a834eff-5ac7-5e3d-902e-0c7342b819d4": {
            "a": "g(3) = 4/(3 - 1) = 2\nfg(3) = 2(2) + 3 = 7",
            "c": "x^2 - 4x - 5 = 0\nx = 9"
        },
        // The root of a cubic: (a) a sign change, (b) Newton-Raphson.
        "24edba06-39ce-5306-9e48-2c6afec357a4": {
            "a": "f(1) = -5 < 0\nf(2) = 3 > 0\nsign change so there is a root",
            "b": "x1 = 1.7692\nx2 = 1.7397"
        },
        // The third question is left blank.
    })
}

/// A neat student's hand: Debian's `fonts-comic-neue`, hand lettering Tesseract can read. (The
/// cursive `fonts-dkg-handwriting` hand, the scan maker's default, is mostly misread by OCR, so
/// the built-in marker leaves such answers uncertain for a person: see the README.)
const NEAT_HAND: &str = "/usr/share/fonts/opentype/comic-neue/ComicNeue-Regular.otf";

const QUESTIONS: [&str; 3] = [
    "8a834eff-5ac7-5e3d-902e-0c7342b819d4",
    "24edba06-39ce-5306-9e48-2c6afec357a4",
    "6c2fd79f-8d1f-50f9-87cb-aa6638109d53",
];

async fn json_post(s: &Server, key: &str, path: &str, body: &Value) -> Resp {
    s.send(
        Method::POST,
        path,
        Some(key),
        &[("content-type", "application/json")],
        Some(body.to_string().into_bytes()),
    )
    .await
}

/// Contains: is the box `inner` (centre) inside `outer`?
fn holds(outer: &Value, inner: &Value) -> bool {
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let cx = f(inner, "x") + f(inner, "width") / 2.0;
    let cy = f(inner, "y") + f(inner, "height") / 2.0;
    cx >= f(outer, "x") - 1e-6
        && cx <= f(outer, "x") + f(outer, "width") + 1e-6
        && cy >= f(outer, "y") - 1e-6
        && cy <= f(outer, "y") + f(outer, "height") + 1e-6
}

/// A box of the upright page as displayed on a page turned `degrees` clockwise.
fn turn(r: &Value, degrees: u64) -> Value {
    let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
    let (x, y, w, h) = (f("x"), f("y"), f("width"), f("height"));
    match degrees {
        90 => json!({ "x": 1.0 - y - h, "y": x, "width": h, "height": w }),
        180 => json!({ "x": 1.0 - x - w, "y": 1.0 - y - h, "width": w, "height": h }),
        270 => json!({ "x": y, "y": 1.0 - x - w, "width": h, "height": w }),
        _ => r.clone(),
    }
}

async fn a_handwritten_scan_is_marked_end_to_end(db: Db) {
    let Some(s) = start_with(db, generous(), |state| {
        state.marking.poll = Duration::from_millis(100);
    })
    .await
    else {
        return;
    };
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Teacher").await;
    let key = s.key(&user, Scope::ALL).await;
    // The paper, saved and exported; its layout comes with the export.
    let mut pins = Vec::new();
    for q in QUESTIONS {
        let resp = s.get(&format!("/v1/questions/{q}/revisions/1"), &key).await;
        assert_eq!(resp.status, 200, "{}", text(&resp));
        pins.push(resp.json()["question"]["pin"].clone());
    }
    let paper = uuid::Uuid::new_v4().to_string();
    let resp = json_post(&s, &key, "/v1/papers", &json!({ "id": paper, "title": "Mock paper", "questions": pins, "writingSpace": "smart", "gradeGuide": false })).await;
    assert_eq!(resp.status, 201, "{}", text(&resp));
    let resp = json_post(
        &s,
        &key,
        &format!("/v1/papers/{paper}/revisions/1/exports"),
        &json!({}),
    )
    .await;
    assert_eq!(resp.status, 200, "{}", text(&resp));
    let layout = resp.json()["layout"].clone();
    let qp = s
        .get(
            &format!("/v1/papers/{paper}/revisions/1/exports/question-paper"),
            &key,
        )
        .await
        .body;
    // The completed scan: page 2 fed upside down.
    let dir = tempfile::tempdir().expect("dir");
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        path.to_string_lossy().into_owned()
    };
    let paper_pdf = write("paper.pdf", &qp);
    let layout_json = write("layout.json", layout.to_string().as_bytes());
    let answers_json = write("answers.json", answers().to_string().as_bytes());
    let scan = dir.path().join("scan.pdf").to_string_lossy().into_owned();
    examkit_scanmaker::make(&[
        "--paper",
        &paper_pdf,
        "--layout",
        &layout_json,
        "--answers",
        &answers_json,
        "--out",
        &scan,
        "--rotate",
        "2:180",
        "--skew",
        "0.8",
        "--noise",
        "0.02",
        "--seed",
        "11",
        "--dpi",
        "200",
        "--font",
        &std::env::var("EXAMKIT_TEST_FONT").unwrap_or_else(|_| NEAT_HAND.to_owned()),
    ])
    .expect("the scan is made");
    let scan = std::fs::read(&scan).expect("scan");
    // A session from the paper; the scan uploaded; one start.
    let resp = s
        .post_json(
            "/v1/marking/sessions/from-builder",
            &key,
            Some(&idem()),
            json!({ "paperId": paper, "revision": 1 })
                .to_string()
                .as_bytes(),
        )
        .await;
    assert_eq!(resp.status, 201, "{}", text(&resp));
    let session = resp.json()["session"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let resp = s
        .send(
            Method::POST,
            &format!("/v1/marking/sessions/{session}/assets?kind=work&name=scan.pdf"),
            Some(&key),
            &[("content-type", "application/pdf")],
            Some(scan),
        )
        .await;
    assert_eq!(resp.status, 201, "{}", text(&resp));
    let work = resp.json()["asset"]["id"].as_str().expect("id").to_owned();
    let config = MarkingConfig {
        poll: Duration::from_millis(100),
        ..MarkingConfig::default()
    };
    let workers = examkit::marking::worker::spawn(s.store.clone(), config).expect("workers");
    let started = Instant::now();
    let resp = s
        .send(
            Method::POST,
            &format!("/v1/marking/sessions/{session}/start"),
            Some(&key),
            &[("idempotency-key", &idem())],
            None,
        )
        .await;
    assert_eq!(resp.status, 202, "{}", text(&resp));
    let deadline = Instant::now() + Duration::from_secs(600);
    let view = loop {
        let view = s
            .get(&format!("/v1/marking/sessions/{session}"), &key)
            .await
            .json()["session"]
            .clone();
        let questions = view["questions"].as_array().cloned().unwrap_or_default();
        if view["indexingFinished"] == true
            && questions.len() == 3
            && questions
                .iter()
                .all(|q| !matches!(q["status"].as_str(), Some("queued" | "running")))
        {
            break view;
        }
        assert!(Instant::now() < deadline, "marking did not finish: {view}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    eprintln!(
        "start to last terminal status: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    workers.shutdown().await;

    // Indexing: every page is the student's, placed by its page code; page 2 upside down.
    let pages = view["indexing"]["pages"].as_array().expect("pages");
    let work_pages: Vec<&Value> = pages
        .iter()
        .filter(|p| p["assetId"] == work.as_str())
        .collect();
    assert!(!work_pages.is_empty());
    let answered: Vec<u64> = vec![1, 2];
    for page in &work_pages {
        // A page with the student's writing is work; a page they left untouched (the cover, the
        // blank third question) is a blank page of their script: never evidence of an award.
        let labels: Vec<u64> = page["questions"]
            .as_array()
            .expect("questions")
            .iter()
            .filter_map(|q| q["label"].as_str()?.parse().ok())
            .collect();
        if labels.iter().any(|l| answered.contains(l)) {
            assert_eq!(page["role"], "work", "{page}");
            assert_eq!(page["evidence"], true);
        } else {
            assert_eq!(page["role"], "blank", "{page}");
            assert_eq!(page["evidence"], false);
        }
        assert_eq!(page["pageCode"]["paperId"], paper.as_str(), "{page}");
        let expected = if page["page"] == 2 { 180 } else { 0 };
        assert_eq!(page["orientation"], expected, "{page}");
        for found in page["questions"].as_array().expect("questions") {
            assert_eq!(found["how"], "pageCode");
        }
    }

    let orientation: HashMap<String, u64> = work_pages
        .iter()
        .map(|p| {
            (
                p["pageId"].as_str().expect("id").to_owned(),
                p["orientation"].as_u64().expect("degrees"),
            )
        })
        .collect();
    // Results: each question's saved decisions give the engine's score range, and every
    // allocation is located on a selected work page.
    let questions: HashMap<String, Value> = view["questions"]
        .as_array()
        .expect("questions")
        .iter()
        .map(|q| (q["label"].as_str().expect("label").to_owned(), q.clone()))
        .collect();
    let regions = |number: u64, part: &str| -> Vec<Value> {
        layout["questions"]
            .as_array()
            .expect("questions")
            .iter()
            .filter(|q| q["number"] == number)
            .flat_map(|q| q["parts"].as_array().cloned().unwrap_or_default())
            .filter(|p| p["partId"] == part)
            .flat_map(|p| p["answerSpace"].as_array().cloned().unwrap_or_default())
            .collect()
    };
    for (label, question) in &questions {
        assert!(
            matches!(
                question["status"].as_str(),
                Some("completed" | "needs_review")
            ),
            "{label}: {question}"
        );
        let allocations = question["allocations"].as_array().expect("allocations");
        assert!(!allocations.is_empty(), "{question}");
        let awarded = allocations
            .iter()
            .filter(|a| a["decision"] == "awarded")
            .count() as i64;
        let uncertain = allocations
            .iter()
            .filter(|a| a["decision"] == "uncertain")
            .count() as i64;
        assert_eq!(question["score"]["awarded"], awarded, "{question}");
        assert_eq!(
            question["score"]["possible"],
            awarded + uncertain,
            "{question}"
        );
        assert_eq!(question["score"]["max"], allocations.len() as i64);
        for a in allocations {
            for e in a["evidence"].as_array().expect("evidence") {
                assert!(
                    e["pageId"].as_str().expect("page").starts_with(&work),
                    "{a}"
                );
            }
        }
    }
    // Question 3 is blank: every allocation withheld, located on its part's answer space, quoted
    // as blank.
    let blank = &questions["3"];
    for a in blank["allocations"].as_array().expect("allocations") {
        assert_eq!(a["submitted"], "withheld", "{a}");
        let evidence = &a["evidence"][0];
        assert!(
            evidence["quote"]
                .as_str()
                .expect("quote")
                .starts_with("blank"),
            "{a}"
        );
        let part = a["partId"].as_str().expect("part");
        let degrees = orientation[evidence["pageId"].as_str().expect("page")];
        assert!(
            regions(3, part)
                .iter()
                .any(|r| holds(&turn(r, degrees), &evidence["box"])),
            "{a}"
        );
    }
    assert_eq!(blank["score"]["awarded"], 0);
    // Question 1 (b) is blank: withheld on its answer space.
    let first = &questions["1"];
    let b_allocations: Vec<&Value> = first["allocations"]
        .as_array()
        .expect("allocations")
        .iter()
        .filter(|a| a["partId"] == "b")
        .collect();
    assert!(!b_allocations.is_empty());
    for a in b_allocations {
        assert_eq!(a["submitted"], "withheld", "{a}");
    }
    // Nothing is awarded that the student did not write: the wrong final answer of 1 (c) is
    // not awarded, and method marks are left to a person.
    for a in first["allocations"].as_array().expect("allocations") {
        if a["partId"] == "c" {
            assert_ne!(a["submitted"], "awarded", "{a}");
        }
        if a["code"]
            .as_str()
            .expect("code")
            .trim_start_matches('d')
            .starts_with('M')
            && a["submitted"] != "withheld"
        {
            assert_eq!(a["submitted"], "uncertain", "{a}");
        }
    }
    // Every award's evidence box lies in its part's answer space, and its quote is what was read.
    let mut awards = 0;
    for (label, question) in &questions {
        let number: u64 = label.parse().expect("number");
        for a in question["allocations"].as_array().expect("allocations") {
            if a["submitted"] != "awarded" {
                continue;
            }
            awards += 1;
            let evidence = &a["evidence"][0];
            let part = a["partId"].as_str().expect("part");
            let degrees = orientation[evidence["pageId"].as_str().expect("page")];
            assert!(
                regions(number, part)
                    .iter()
                    .any(|r| holds(&turn(r, degrees), &evidence["box"])),
                "{a}"
            );
            assert!(!evidence["quote"].as_str().expect("quote").is_empty());
        }
    }
    eprintln!("awards made by the built-in marker: {awards}");
    assert!(
        awards >= 1,
        "the neat hand's final answers are read and awarded"
    );
    assert!(
        awards >= 1,
        "the neat hand's final answers are read and awarded"
    );
    for q in questions.values() {
        for a in q["allocations"].as_array().expect("allocations") {
            eprintln!(
                "Q{} {} {} {}: {}",
                q["label"], a["criterionId"], a["code"], a["submitted"], a["evidence"][0]["quote"]
            );
        }
    }

    // A review decides one uncertain allocation, recomputed through the engine.
    let (id, criterion, revision, page) = questions
        .values()
        .find_map(|q| {
            q["allocations"]
                .as_array()?
                .iter()
                .find(|a| {
                    a["decision"] == "uncertain"
                        && a["conditions"].as_array().is_some_and(Vec::is_empty)
                        && a["dependsOn"].as_array().is_some_and(Vec::is_empty)
                })
                .map(|a| {
                    (
                        q["id"].as_str().unwrap_or("").to_owned(),
                        a["criterionId"].as_str().unwrap_or("").to_owned(),
                        q["revision"].as_i64().unwrap_or(0),
                        a["evidence"][0]["pageId"].as_str().unwrap_or("").to_owned(),
                    )
                })
        })
        .expect("an uncertain allocation without conditions or dependencies");
    let before = questions
        .values()
        .find(|q| q["id"] == id.as_str())
        .expect("question")
        .clone();
    let review = json!({ "revision": revision, "decisions": [{
        "criterionId": criterion, "outcome": "withheld", "reason": "checked by the teacher: not shown",
        "evidence": [{ "pageId": page, "quote": "the student's working", "box": { "x": 0.1, "y": 0.2, "width": 0.5, "height": 0.1 } }],
        "conditionChecks": [] }] });
    let resp = s
        .send(
            Method::PATCH,
            &format!("/v1/marking/questions/{id}"),
            Some(&key),
            &[("content-type", "application/json")],
            Some(review.to_string().into_bytes()),
        )
        .await;
    assert_eq!(resp.status, 200, "{}", text(&resp));
    let after = resp.json()["question"].clone();
    assert_eq!(after["revision"], revision + 1);
    // Withholding it lowers what is possible (by more when other marks depend on it).
    assert!(
        after["score"]["possible"].as_i64() < before["score"]["possible"].as_i64(),
        "{before} {after}"
    );
    assert!(after["score"]["awarded"].as_i64() <= before["score"]["awarded"].as_i64());
    let reviewed = after["allocations"]
        .as_array()
        .expect("allocations")
        .iter()
        .find(|a| a["criterionId"] == criterion.as_str())
        .expect("criterion")
        .clone();
    assert_eq!(reviewed["decision"], "withheld");
}

/// Without OCR no words are read, yet the answer spaces the student wrote in are not blank: the
/// ink added to the clean paper says so, and those marks are left uncertain for a person, while the
/// part left empty is withheld as blank.
async fn unread_writing_is_uncertain_never_blank(db: Db) {
    use common::marking::{
        all_terminal, exported_paper, poll_until, scan, session_from_paper, start, upload, workers,
    };
    let Some(s) = start_with(db, generous(), |_| {}).await else {
        return;
    };
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Unread").await;
    let key = s.key(&user, Scope::ALL).await;
    let question = QUESTIONS[0];
    let paper = exported_paper(&s, &key, &[question]).await;
    let answers = json!({ question: { "a": "fg(3) = 7", "c": "x = 5" } });
    let session = session_from_paper(&s, &key, &paper.id).await;
    for (name, bytes) in scan(&paper, &answers, &["--dpi", "150", "--seed", "4"]) {
        upload(&s, &key, &session, "work", &name, bytes).await;
    }
    let marking = workers(&s, |config| config.ocr = false);
    start(&s, &key, &session).await;
    let view = poll_until(&s, &key, &session, 300, |v| all_terminal(v, 1)).await;
    marking.shutdown().await;
    let question = &view["questions"][0];
    assert_eq!(question["status"], "needs_review", "{question}");
    for a in question["allocations"].as_array().expect("allocations") {
        let part = a["partId"].as_str().expect("part");
        let quote = a["evidence"][0]["quote"].as_str().expect("quote");
        match part {
            "b" => {
                assert_eq!(a["submitted"], "withheld", "{a}");
                assert!(quote.starts_with("blank"), "{a}");
            }
            _ => {
                assert_eq!(a["submitted"], "uncertain", "{a}");
                if a["code"].as_str().is_some_and(|c| c.starts_with('A')) {
                    assert!(quote.starts_with("unread"), "{a}");
                    assert!(
                        a["explanation"]
                            .as_str()
                            .is_some_and(|r| r.contains("no words could be read")),
                        "{a}"
                    );
                }
            }
        }
    }
    assert_eq!(question["score"]["awarded"], 0);
}

on_both!(
    a_handwritten_scan_is_marked_end_to_end,
    unread_writing_is_uncertain_never_blank
);
