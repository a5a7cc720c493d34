//! Marking questions of automated sessions through the HTTP API on SQLite and PostgreSQL:
//! `POST /v1/marking/sessions/{id}/questions` and its rules, the built-in marker on a scheme it
//! cannot read, external markers that time out, answer invalid JSON, fail, or answer what the
//! engine rejects (the question fails with the reason, nothing partial saved), cancellation while
//! queued and while running, and reviews of automated results.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::marking::{idem, text};
use common::{Db, Resp, Server, generous, start_with};
use examkit::auth::Scope;
use examkit::marking::{MarkerChoice, MarkingConfig};
use examkit::server::AppState;
use reqwest::Method;
use serde_json::{Value, json};

/// Short timings, and two attempts per job so a failing marker ends its question quickly.
fn fast(config: &mut MarkingConfig) {
    common::marking::fast(config);
    config.max_attempts = 2;
}

/// Workers with [`fast`] timings, adjusted by `adjust`.
fn workers(
    s: &Server,
    adjust: impl FnOnce(&mut MarkingConfig),
) -> examkit::marking::worker::Workers {
    common::marking::workers(s, |config| {
        config.max_attempts = 2;
        adjust(config)
    })
}

async fn setup_with(db: Db, adjust: impl FnOnce(&mut AppState)) -> (Server, String) {
    let s = start_with(db, generous(), |state| {
        fast(&mut state.marking);
        adjust(state)
    })
    .await;
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Marking questions").await;
    let key = s.key(&user, Scope::ALL).await;
    (s, key)
}

/// The sample bank's first two questions as an exported paper: both PDFs.
async fn paper_pdfs(s: &Server, key: &str) -> (Vec<u8>, Vec<u8>) {
    let resp = s.get("/v1/questions?limit=2", key).await;
    let pins: Vec<Value> = resp.json()["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["pin"].clone())
        .collect();
    let id = uuid::Uuid::new_v4().to_string();
    let body = json!({ "id": id, "title": "Mock", "questions": pins, "writingSpace": "smart", "gradeGuide": false });
    let json_headers = [("content-type", "application/json")];
    let resp = s
        .send(
            Method::POST,
            "/v1/papers",
            Some(key),
            &json_headers,
            Some(body.to_string().into_bytes()),
        )
        .await;
    assert_eq!(resp.status, 201, "{}", text(&resp));
    let resp = s
        .send(
            Method::POST,
            &format!("/v1/papers/{id}/revisions/1/exports"),
            Some(key),
            &json_headers,
            Some(b"{}".to_vec()),
        )
        .await;
    assert_eq!(resp.status, 200, "{}", text(&resp));
    let qp = s
        .get(
            &format!("/v1/papers/{id}/revisions/1/exports/question-paper"),
            key,
        )
        .await
        .body;
    let ms = s
        .get(
            &format!("/v1/papers/{id}/revisions/1/exports/mark-scheme"),
            key,
        )
        .await
        .body;
    (qp, ms)
}

struct Indexed {
    session: String,
    work: String,
    scheme: String,
}

/// A session (not made from the paper) with the typeset question paper as work and the mark
/// scheme as scheme, indexed by workers that are stopped again.
async fn indexed_session(s: &Server, key: &str) -> Indexed {
    let (qp, ms) = paper_pdfs(s, key).await;
    let resp = s
        .post_json(
            "/v1/marking/sessions",
            key,
            Some(&idem()),
            br#"{"title":"Typeset"}"#,
        )
        .await;
    let session = resp.json()["session"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let mut ids = Vec::new();
    for (kind, bytes) in [("work", qp), ("scheme", ms)] {
        let resp = s
            .send(
                Method::POST,
                &format!("/v1/marking/sessions/{session}/assets?kind={kind}&name={kind}.pdf"),
                Some(key),
                &[("content-type", "application/pdf")],
                Some(bytes),
            )
            .await;
        assert_eq!(resp.status, 201, "{}", text(&resp));
        ids.push(resp.json()["asset"]["id"].as_str().expect("id").to_owned());
    }
    let indexing = workers(s, |_| {});
    let resp = s
        .send(
            Method::POST,
            &format!("/v1/marking/sessions/{session}/start"),
            Some(key),
            &[("idempotency-key", &idem())],
            None,
        )
        .await;
    assert_eq!(resp.status, 202, "{}", text(&resp));
    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        let view = s
            .get(&format!("/v1/marking/sessions/{session}"), key)
            .await
            .json();
        if view["session"]["indexingFinished"] == true {
            break;
        }
        assert!(Instant::now() < deadline, "indexing did not finish");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    indexing.shutdown().await;
    Indexed {
        session,
        work: ids[0].clone(),
        scheme: ids[1].clone(),
    }
}

fn question_body(label: &str, ix: &Indexed) -> Value {
    json!({
        "label": label,
        "workAssetIds": [ix.work],
        "schemeAssetIds": [ix.scheme],
        "pageSelections": { ix.work.as_str(): [1, 2], ix.scheme.as_str(): [1] },
    })
}

async fn ask(s: &Server, key: &str, session: &str, body: &Value) -> Resp {
    s.post_json(
        &format!("/v1/marking/sessions/{session}/questions"),
        key,
        Some(&idem()),
        body.to_string().as_bytes(),
    )
    .await
}

/// Polls the question until its status is terminal.
async fn terminal(s: &Server, key: &str, session: &str, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let view = s
            .get(&format!("/v1/marking/sessions/{session}"), key)
            .await
            .json();
        let question = view["session"]["questions"]
            .as_array()
            .expect("questions")
            .iter()
            .find(|q| q["id"] == id)
            .cloned()
            .expect("the question is listed");
        if !matches!(question["status"].as_str(), Some("queued" | "running")) {
            return question;
        }
        assert!(
            Instant::now() < deadline,
            "the question did not finish: {question}"
        );
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
}

fn field_codes(resp: &Resp) -> Vec<(String, String)> {
    resp.json()["error"]["details"]["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| {
            (
                e["path"].as_str().expect("path").to_owned(),
                e["code"].as_str().expect("code").to_owned(),
            )
        })
        .collect()
}

async fn question_requests_are_checked(db: Db) {
    let (s, key) = setup_with(db, |state| state.marking.allowance.questions_per_day = 3).await;
    // Before indexing finished: a conflict.
    let draft = s
        .post_json(
            "/v1/marking/sessions",
            &key,
            Some(&idem()),
            br#"{"title":"draft"}"#,
        )
        .await
        .json()["session"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    ask(&s, &key, &draft, &json!({}))
        .await
        .assert_error(409, "indexing_not_finished");
    let ix = indexed_session(&s, &key).await;
    let (w, m) = (ix.work.as_str(), ix.scheme.as_str());
    let other = uuid::Uuid::new_v4().to_string();
    let cases: Vec<(Value, Vec<(&str, &str)>)> = vec![
        (
            json!({}),
            vec![
                ("/label", "required"),
                ("/workAssetIds", "required"),
                ("/schemeAssetIds", "required"),
                ("/pageSelections", "required"),
            ],
        ),
        (
            json!({ "label": "", "workAssetIds": [w], "schemeAssetIds": [m], "pageSelections": { w: [1], m: [1] } }),
            vec![("/label", "min_length")],
        ),
        (
            json!({ "label": "x".repeat(41), "workAssetIds": [w], "schemeAssetIds": [m], "pageSelections": { w: [1], m: [1] } }),
            vec![("/label", "max_length")],
        ),
        (
            json!({ "label": 1, "workAssetIds": [w], "schemeAssetIds": [m], "pageSelections": { w: [1], m: [1] }, "extra": true }),
            vec![("/extra", "unknown_field"), ("/label", "type")],
        ),
        (
            json!({ "label": "1", "workAssetIds": [m], "schemeAssetIds": [w], "pageSelections": { w: [1], m: [1] } }),
            vec![
                ("/workAssetIds/0", "asset_role_mismatch"),
                ("/schemeAssetIds/0", "asset_role_mismatch"),
            ],
        ),
        (
            json!({ "label": "1", "workAssetIds": [other], "schemeAssetIds": [], "pageSelections": { w: [1] } }),
            vec![
                ("/workAssetIds/0", "unknown_asset"),
                ("/schemeAssetIds", "min_items"),
            ],
        ),
        (
            json!({ "label": "1", "workAssetIds": [w, w], "schemeAssetIds": [m], "pageSelections": { w: [1], m: [1] } }),
            vec![("/workAssetIds/1", "unique_items")],
        ),
        (
            json!({ "label": "1", "workAssetIds": [w], "schemeAssetIds": [m], "pageSelections": { w: [1] } }),
            vec![("/pageSelections", "missing_selection")],
        ),
        (
            json!({ "label": "1", "workAssetIds": [w], "schemeAssetIds": [m], "pageSelections": [[1], [1]] }),
            vec![("/pageSelections", "type")],
        ),
        (
            json!({ "label": "1", "workAssetIds": [w], "schemeAssetIds": [m], "pageSelections": null }),
            vec![("/pageSelections", "type")],
        ),
        (
            json!({ "label": "1", "workAssetIds": [w], "schemeAssetIds": [m], "pageSelections": [] }),
            vec![("/pageSelections", "type")],
        ),
    ];
    for (body, expected) in &cases {
        let resp = ask(&s, &key, &ix.session, body).await;
        assert_eq!(resp.status, 422, "{body}: {}", text(&resp));
        assert_eq!(resp.json()["error"]["code"], "invalid_fields");
        let codes = field_codes(&resp);
        for (path, code) in expected {
            assert!(
                codes.contains(&(path.to_string(), code.to_string())),
                "{body}: {codes:?}"
            );
        }
    }
    // Page numbers: out of range, zero, repeated.
    let resp = ask(&s, &key, &ix.session, &json!({ "label": "1", "workAssetIds": [w], "schemeAssetIds": [m], "pageSelections": { w: [0, 1, 1, 999], m: [1] } })).await;
    let codes = field_codes(&resp);
    assert!(
        codes.contains(&(format!("/pageSelections/{w}/0"), "page_out_of_range".into())),
        "{codes:?}"
    );
    assert!(
        codes.contains(&(format!("/pageSelections/{w}/2"), "unique_items".into())),
        "{codes:?}"
    );
    assert!(
        codes.contains(&(format!("/pageSelections/{w}/3"), "page_out_of_range".into())),
        "{codes:?}"
    );
    // Bodies of the wrong JSON type.
    for body in ["[]", "\"q\"", "3", "null"] {
        let resp = s
            .post_json(
                &format!("/v1/marking/sessions/{}/questions", ix.session),
                &key,
                Some(&idem()),
                body.as_bytes(),
            )
            .await;
        resp.assert_error(400, "invalid_body");
    }
    // A good request is queued; the same label again is refused while it is live.
    let resp = ask(&s, &key, &ix.session, &question_body("1", &ix)).await;
    assert_eq!(resp.status, 202, "{}", text(&resp));
    assert_eq!(resp.json()["question"]["status"], "queued");
    let resp = ask(&s, &key, &ix.session, &question_body("1", &ix)).await;
    assert_eq!(
        field_codes(&resp),
        vec![("/label".to_owned(), "duplicate_label".to_owned())]
    );
    // The allowance: 3 questions a day; the fourth is refused and nothing is enqueued.
    for label in ["2", "3"] {
        assert_eq!(
            ask(&s, &key, &ix.session, &question_body(label, &ix))
                .await
                .status,
            202
        );
    }
    let jobs_before = s.store.session_jobs(&ix.session).await.expect("jobs").len();
    let resp = ask(&s, &key, &ix.session, &question_body("4", &ix)).await;
    resp.assert_error(429, "marking_allowance_exhausted");
    assert!(resp.header("retry-after").is_some());
    assert_eq!(
        s.store.session_jobs(&ix.session).await.expect("jobs").len(),
        jobs_before
    );
    // Another account sees nothing.
    let stranger = s.user("Stranger").await;
    let stranger = s.key(&stranger, Scope::ALL).await;
    ask(&s, &stranger, &ix.session, &question_body("9", &ix))
        .await
        .assert_error(404, "not_found");
    let read_only = s.user("Reader").await;
    let read_only = s.key(&read_only, &[Scope::MarkingRead]).await;
    ask(&s, &read_only, &ix.session, &question_body("9", &ix))
        .await
        .assert_error(403, "insufficient_scope");
}

async fn an_unreadable_scheme_is_said_and_the_question_reviewed(db: Db) {
    let (s, key) = setup_with(db, |_| {}).await;
    let ix = indexed_session(&s, &key).await;
    let running = workers(&s, |_| {});
    let resp = ask(&s, &key, &ix.session, &question_body("1", &ix)).await;
    assert_eq!(resp.status, 202, "{}", text(&resp));
    let id = resp.json()["question"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let question = terminal(&s, &key, &ix.session, &id).await;
    running.shutdown().await;
    // An uploaded scheme that is not a structured one: one uncertain allocation, the reason said.
    assert_eq!(question["status"], "needs_review", "{question}");
    let allocations = question["allocations"].as_array().expect("allocations");
    assert_eq!(allocations.len(), 1);
    assert_eq!(allocations[0]["decision"], "uncertain");
    assert!(
        allocations[0]["explanation"]
            .as_str()
            .expect("reason")
            .contains("could not be read"),
        "{question}"
    );
    assert_eq!(
        question["score"],
        json!({ "awarded": 0, "possible": 1, "max": 1 })
    );
    assert_eq!(question["markedBy"]["kind"], "ai");
    // A review decides it, recomputed through the engine.
    let review = json!({ "revision": 1, "decisions": [{
        "criterionId": "whole-question", "outcome": "awarded", "reason": "checked by a teacher",
        "evidence": [{ "pageId": format!("{}:p1", ix.work), "quote": "the student's answer", "box": { "x": 0.1, "y": 0.1, "width": 0.5, "height": 0.2 } }],
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
    let reviewed = resp.json()["question"].clone();
    assert_eq!(reviewed["status"], "completed");
    assert_eq!(reviewed["revision"], 2);
    assert_eq!(
        reviewed["score"],
        json!({ "awarded": 1, "possible": 1, "max": 1 })
    );
}

/// A stand-in external marker on loopback: each request gets the answer `behave` gives for the
/// request number (from 0).
async fn fake_marker(
    behave: fn(usize, &Value) -> (u16, String, Duration),
) -> (String, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                break;
            };
            let n = seen.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut data = Vec::new();
                let mut buf = [0u8; 65536];
                let body = loop {
                    let Ok(read) = stream.read(&mut buf).await else {
                        return;
                    };
                    if read == 0 {
                        return;
                    }
                    data.extend_from_slice(&buf[..read]);
                    let text = String::from_utf8_lossy(&data).into_owned();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if data.len() >= end + 4 + length {
                            break data[end + 4..end + 4 + length].to_vec();
                        }
                    }
                };
                let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let (status, answer, delay) = behave(n, &request);
                tokio::time::sleep(delay).await;
                let response = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                    answer.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    (format!("http://{addr}/mark"), calls)
}

/// A question the engine accepts for the request: one uncertain criterion on its first page.
fn valid_answer(request: &Value) -> String {
    let work = request["workPages"][0]["pageId"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    let scheme = request["schemePages"][0]["pageId"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    json!({ "name": "fake", "model": "fake-1", "question": {
        "label": request["label"], "pageSelections": request["pageSelections"],
        "rubric": { "parts": [{ "id": "whole", "maxMarks": 1 }], "criteria": [{ "id": "q-B1", "partId": "whole", "code": "B1",
            "requirement": "the answer", "conditions": [], "dependsOn": [], "maxMarks": 1, "sourcePageIds": [scheme] }] },
        "decisions": [{ "criterionId": "q-B1", "outcome": "awarded", "reason": "seen", "conditionChecks": [],
            "evidence": [{ "pageId": work, "quote": "x = 3", "box": { "x": 0.2, "y": 0.3, "width": 0.1, "height": 0.05 } }] }] } })
    .to_string()
}

async fn external_markers_that_misbehave_fail_the_question(db: Db) {
    let (s, key) = setup_with(db, |_| {}).await;
    let ix = indexed_session(&s, &key).await;
    struct Case {
        label: &'static str,
        behave: fn(usize, &Value) -> (u16, String, Duration),
        code: &'static str,
        calls: usize,
    }
    let cases = [
        Case {
            label: "slow",
            behave: |_, _| (200, "{}".into(), Duration::from_secs(5)),
            code: "marker_timeout",
            calls: 2,
        },
        Case {
            label: "garbage",
            behave: |_, _| (200, "this is not json".into(), Duration::ZERO),
            code: "marker_invalid_json",
            calls: 1,
        },
        Case {
            label: "broken",
            behave: |_, _| (500, "{\"error\":\"down\"}".into(), Duration::ZERO),
            code: "marker_http_status",
            calls: 2,
        },
        Case {
            label: "refused",
            behave: |_, _| (422, "{\"error\":\"no\"}".into(), Duration::ZERO),
            code: "marker_http_status",
            calls: 1,
        },
        Case {
            // A marker that echoes the request's headers in its error: the token never reaches
            // the question's error.
            label: "echoing",
            behave: |_, _| {
                let echoed = "token secret; Authorization: Bearer secret. ".repeat(20);
                (401, format!("{{\"error\":\"{echoed}\"}}"), Duration::ZERO)
            },
            code: "marker_http_status",
            calls: 1,
        },
        Case {
            label: "huge",
            behave: |_, _| (200, "x".repeat(5 * 1024 * 1024), Duration::ZERO),
            code: "marker_invalid_json",
            calls: 1,
        },
        Case {
            label: "invalid",
            behave: |_, request| {
                let mut answer: Value =
                    serde_json::from_str(&valid_answer(request)).unwrap_or(Value::Null);
                answer["question"]["decisions"][0]["evidence"][0]["box"]["width"] = json!(2.0);
                (200, answer.to_string(), Duration::ZERO)
            },
            code: "marker_answer_invalid",
            calls: 1,
        },
        Case {
            label: "fine",
            behave: |_, request| (200, valid_answer(request), Duration::ZERO),
            code: "",
            calls: 1,
        },
    ];
    for case in cases {
        let (url, calls) = fake_marker(case.behave).await;
        let running = workers(&s, |config| {
            config.marker = MarkerChoice::External {
                url,
                token: Some("secret".into()),
                timeout: Duration::from_secs(1),
            };
        });
        let resp = ask(&s, &key, &ix.session, &question_body(case.label, &ix)).await;
        assert_eq!(resp.status, 202, "{}", text(&resp));
        let id = resp.json()["question"]["id"]
            .as_str()
            .expect("id")
            .to_owned();
        let question = terminal(&s, &key, &ix.session, &id).await;
        running.shutdown().await;
        if case.code.is_empty() {
            assert_eq!(question["status"], "completed", "{question}");
            assert_eq!(question["score"]["awarded"], 1);
            assert_eq!(question["markedBy"]["name"], "fake");
        } else {
            assert_eq!(question["status"], "failed", "{}: {question}", case.label);
            assert_eq!(
                question["error"]["code"], case.code,
                "{}: {question}",
                case.label
            );
            let message = question["error"]["message"].as_str().expect("a message");
            assert!(!message.contains("secret"), "{}: {message}", case.label);
            assert!(message.chars().count() <= 400, "{}: {message}", case.label);
            assert!(
                question["allocations"]
                    .as_array()
                    .expect("allocations")
                    .is_empty(),
                "nothing partial: {question}"
            );
            assert_eq!(
                question["score"],
                json!({ "awarded": 0, "possible": 0, "max": 0 })
            );
        }
        if case.code == "marker_answer_invalid" {
            let errors = question["error"]["details"]["errors"]
                .as_array()
                .expect("the engine's errors");
            assert!(
                errors.iter().any(|e| e["code"] == "box_out_of_bounds"),
                "{question}"
            );
        }
        assert_eq!(
            calls.load(Ordering::SeqCst),
            case.calls,
            "{}: attempts",
            case.label
        );
    }
    // The guards hold for an external marker too: an award on a box over most of the page is
    // saved, but uncertain, the question reviewed and the guard recorded.
    let (url, _) = fake_marker(|_, request| {
        let mut answer: Value = serde_json::from_str(&valid_answer(request)).unwrap_or(Value::Null);
        answer["question"]["decisions"][0]["evidence"][0]["box"] =
            json!({ "x": 0.05, "y": 0.05, "width": 0.9, "height": 0.9 });
        (200, answer.to_string(), Duration::ZERO)
    })
    .await;
    let running = workers(&s, |config| {
        config.marker = MarkerChoice::External {
            url,
            token: None,
            timeout: Duration::from_secs(5),
        };
    });
    let resp = ask(&s, &key, &ix.session, &question_body("giant", &ix)).await;
    assert_eq!(resp.status, 202, "{}", text(&resp));
    let id = resp.json()["question"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let question = terminal(&s, &key, &ix.session, &id).await;
    running.shutdown().await;
    assert_eq!(question["status"], "needs_review", "{question}");
    assert_eq!(question["score"]["awarded"], 0, "{question}");
    let allocation = &question["allocations"][0];
    assert_eq!(allocation["submitted"], "uncertain", "{allocation}");
    let explanation = allocation["explanation"].as_str().expect("explanation");
    assert!(
        explanation.contains("covers 81 %") && explanation.ends_with("The marker said: seen"),
        "{explanation}"
    );
    let guards = &question["markerRun"]["guards"];
    assert_eq!(guards[0]["criterionId"], "q-B1", "{question}");
    assert_eq!(guards[0]["guardCode"], "box_too_large", "{question}");
}

async fn questions_can_be_cancelled_queued_or_running(db: Db) {
    let (s, key) = setup_with(db, |_| {}).await;
    let ix = indexed_session(&s, &key).await;
    // Queued: no worker runs; the cancel is at once and the job never runs.
    let resp = ask(&s, &key, &ix.session, &question_body("queued", &ix)).await;
    let id = resp.json()["question"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let resp = s
        .send(
            Method::POST,
            &format!("/v1/marking/questions/{id}/cancel"),
            Some(&key),
            &[],
            None,
        )
        .await;
    assert_eq!(resp.status, 200, "{}", text(&resp));
    assert_eq!(resp.json()["question"]["status"], "cancelled");
    assert_eq!(resp.json()["question"]["error"]["code"], "cancelled");
    let again = s
        .send(
            Method::POST,
            &format!("/v1/marking/questions/{id}/cancel"),
            Some(&key),
            &[],
            None,
        )
        .await;
    again.assert_error(409, "question_finished");
    // Running: the marker takes 3 seconds; the question is cancelled meanwhile, and the marker's
    // answer, when it comes, is not saved.
    let (url, calls) =
        fake_marker(|_, request| (200, valid_answer(request), Duration::from_secs(3))).await;
    let running = workers(&s, |config| {
        config.marker = MarkerChoice::External {
            url,
            token: None,
            timeout: Duration::from_secs(30),
        };
    });
    let resp = ask(&s, &key, &ix.session, &question_body("running", &ix)).await;
    let id = resp.json()["question"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(60);
    while calls.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "the marker was not called");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let resp = s
        .send(
            Method::POST,
            &format!("/v1/marking/questions/{id}/cancel"),
            Some(&key),
            &[],
            None,
        )
        .await;
    assert_eq!(resp.status, 200, "{}", text(&resp));
    tokio::time::sleep(Duration::from_secs(5)).await;
    running.shutdown().await;
    let question = terminal(&s, &key, &ix.session, &id).await;
    assert_eq!(question["status"], "cancelled", "{question}");
    assert!(
        question["allocations"]
            .as_array()
            .expect("allocations")
            .is_empty()
    );
    // The queued question's job never ran, and the cancelled one ran once.
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // Unknown and foreign questions.
    let unknown = uuid::Uuid::new_v4();
    s.send(
        Method::POST,
        &format!("/v1/marking/questions/{unknown}/cancel"),
        Some(&key),
        &[],
        None,
    )
    .await
    .assert_error(404, "not_found");
    let stranger = s.user("Stranger").await;
    let stranger = s.key(&stranger, Scope::ALL).await;
    s.send(
        Method::POST,
        &format!("/v1/marking/questions/{id}/cancel"),
        Some(&stranger),
        &[],
        None,
    )
    .await
    .assert_error(404, "not_found");
}

on_both!(
    question_requests_are_checked,
    an_unreadable_scheme_is_said_and_the_question_reviewed,
    external_markers_that_misbehave_fail_the_question,
    questions_can_be_cancelled_queued_or_running,
);
