//! Sessions for automated marking through the HTTP API on SQLite and PostgreSQL: creation from
//! a title and from a saved paper, uploads, `start` with its prerequisites, idempotency and
//! allowance, the switch that turns the feature off, and indexing by real workers (page codes,
//! clean-paper and scheme-as-work detection, words with boxes).

use crate::common;

use std::time::{Duration, Instant};

use common::marking::{fast, idem, text};
use common::{Db, Resp, Server, generous, start_with};
use examkit::auth::Scope;
use examkit::marking::MarkingConfig;
use examkit::server::AppState;
use examkit::store::words::JobState;
use reqwest::Method;
use serde_json::{Value, json};

const PAPER: &str = "6b1e0c4a-2d3f-4a5b-9c8d-7e6f5a4b3c2d";

fn example_pdf(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/curl")
        .join(name);
    std::fs::read(path).expect("example PDF readable")
}

async fn setup_with(db: Db, adjust: impl FnOnce(&mut AppState)) -> (Server, String, String) {
    let s = start_with(db, generous(), |state| {
        fast(&mut state.marking);
        adjust(state)
    })
    .await;
    s.store
        .import_sample_bank()
        .await
        .expect("import the sample bank");
    let user = s.user("Automated marking").await;
    let key = s.key(&user, Scope::ALL).await;
    (s, user, key)
}

async fn upload(
    s: &Server,
    key: &str,
    session: &str,
    kind: &str,
    name: &str,
    bytes: Vec<u8>,
) -> Resp {
    let content_type = if bytes.starts_with(b"%PDF") {
        "application/pdf"
    } else {
        "image/png"
    };
    s.send(
        Method::POST,
        &format!("/v1/marking/sessions/{session}/assets?kind={kind}&name={name}"),
        Some(key),
        &[("content-type", content_type)],
        Some(bytes),
    )
    .await
}

async fn start(s: &Server, key: &str, session: &str, idem: &str) -> Resp {
    s.send(
        Method::POST,
        &format!("/v1/marking/sessions/{session}/start"),
        Some(key),
        &[("idempotency-key", idem)],
        None,
    )
    .await
}

async fn jobs(s: &Server, session: &str) -> usize {
    s.store.session_jobs(session).await.expect("jobs").len()
}

/// Polls the session until its indexing has finished, as a client would.
async fn indexed(s: &Server, key: &str, session: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        let resp = s.get(&format!("/v1/marking/sessions/{session}"), key).await;
        assert_eq!(resp.status, 200, "{}", text(&resp));
        let session = resp.json()["session"].clone();
        if session["indexingFinished"] == true {
            return session;
        }
        assert!(
            Instant::now() < deadline,
            "indexing did not finish: {session}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn routes_refuse_bad_requests(db: Db) {
    let (s, user, key) = setup_with(db, |_| {}).await;
    // Bodies of the wrong JSON type, and bad fields.
    for body in [
        "[\"My title\"]",
        "\"My title\"",
        "42",
        "null",
        "{}",
        "{\"title\": \"\"}",
        "{\"title\": \"   \"}",
        "{\"title\": 5}",
        "{\"title\": \"ok\", \"extra\": 1}",
        &format!("{{\"title\": \"{}\"}}", "x".repeat(201)),
    ] {
        let resp = s
            .post_json("/v1/marking/sessions", &key, Some(&idem()), body.as_bytes())
            .await;
        assert_eq!(resp.status, 400, "{body}: {}", text(&resp));
        assert_eq!(resp.json()["error"]["code"], "invalid_body", "{body}");
    }
    let resp = s
        .post_json("/v1/marking/sessions", &key, Some(&idem()), b"{nope")
        .await;
    resp.assert_error(400, "invalid_json");
    let resp = s
        .post_json("/v1/marking/sessions", &key, None, br#"{"title":"t"}"#)
        .await;
    resp.assert_error(400, "idempotency_key_required");
    // Scopes: submit for creation, submit and papers:read for from-builder, read for reads.
    let reader = s.key(&user, &[Scope::MarkingRead, Scope::PapersRead]).await;
    let resp = s
        .post_json(
            "/v1/marking/sessions",
            &reader,
            Some(&idem()),
            br#"{"title":"t"}"#,
        )
        .await;
    assert_eq!(
        resp.assert_error(403, "insufficient_scope")["error"]["requiredScopes"],
        json!(["marking:submit"])
    );
    let submitter = s.key(&user, &[Scope::MarkingSubmit]).await;
    let body = json!({ "paperId": PAPER, "revision": 1 }).to_string();
    let resp = s
        .post_json(
            "/v1/marking/sessions/from-builder",
            &submitter,
            Some(&idem()),
            body.as_bytes(),
        )
        .await;
    assert_eq!(
        resp.assert_error(403, "insufficient_scope")["error"]["requiredScopes"],
        json!(["marking:submit", "papers:read"])
    );
    // from-builder: unknown paper 404; bad fields 400.
    let resp = s
        .post_json(
            "/v1/marking/sessions/from-builder",
            &key,
            Some(&idem()),
            body.as_bytes(),
        )
        .await;
    resp.assert_error(404, "not_found");
    for bad in [
        json!({ "paperId": "nope", "revision": 1 }),
        json!({ "paperId": PAPER, "revision": 0 }),
        json!({ "paperId": PAPER }),
        json!([PAPER, 1]),
        json!({ "paperId": PAPER, "revision": 1, "x": 1 }),
    ] {
        let resp = s
            .post_json(
                "/v1/marking/sessions/from-builder",
                &key,
                Some(&idem()),
                bad.to_string().as_bytes(),
            )
            .await;
        resp.assert_error(400, "invalid_body");
    }
    // Another account's session is not found, for every route.
    let session = s.automated_session(&key, "mine").await;
    let other_user = s.user("Other").await;
    let other = s.key(&other_user, Scope::ALL).await;
    upload(
        &s,
        &other,
        &session,
        "work",
        "a.pdf",
        example_pdf("student-script.pdf"),
    )
    .await
    .assert_error(404, "not_found");
    start(&s, &other, &session, &idem())
        .await
        .assert_error(404, "not_found");
    s.get(&format!("/v1/marking/sessions/{session}"), &other)
        .await
        .assert_error(404, "not_found");
    // An import is not an automated session, and the reverse.
    let import = s.import(&key, "an import").await;
    start(&s, &key, &import, &idem())
        .await
        .assert_error(404, "not_found");
    upload(
        &s,
        &key,
        &import,
        "work",
        "a.pdf",
        example_pdf("student-script.pdf"),
    )
    .await
    .assert_error(404, "not_found");
    // Upload rules are those of imports.
    upload(
        &s,
        &key,
        &session,
        "homework",
        "a.pdf",
        example_pdf("student-script.pdf"),
    )
    .await
    .assert_error(400, "invalid_query");
    upload(&s, &key, &session, "work", "a.pdf", b"not a pdf".to_vec())
        .await
        .assert_error(415, "content_type_mismatch");
    // The page index of an asset that is not indexed, or of a page that is not a number.
    let asset = upload(
        &s,
        &key,
        &session,
        "work",
        "a.pdf",
        example_pdf("student-script.pdf"),
    )
    .await;
    assert_eq!(asset.status, 201, "{}", text(&asset));
    let asset = asset.json()["asset"]["id"].as_str().expect("id").to_owned();
    s.get(&format!("/v1/marking/assets/{asset}/pages/1"), &key)
        .await
        .assert_error(404, "not_found");
    for page in ["0", "01", "x", "-1"] {
        s.get(&format!("/v1/marking/assets/{asset}/pages/{page}"), &key)
            .await
            .assert_error(404, "not_found");
    }
}

async fn start_needs_work_and_a_scheme_and_is_idempotent(db: Db) {
    let (s, _user, key) = setup_with(db, |state| state.marking.workers = 0).await;
    let session = s.automated_session(&key, "Mock paper").await;
    let first = idem();
    start(&s, &key, &session, &first)
        .await
        .assert_error(422, "work_required");
    let work = upload(
        &s,
        &key,
        &session,
        "work",
        "script.pdf",
        example_pdf("student-script.pdf"),
    )
    .await;
    assert_eq!(work.status, 201);
    start(&s, &key, &session, &idem())
        .await
        .assert_error(422, "scheme_required");
    assert_eq!(
        jobs(&s, &session).await,
        0,
        "a refused start enqueues nothing"
    );
    let scheme = upload(
        &s,
        &key,
        &session,
        "scheme",
        "scheme.pdf",
        example_pdf("mark-scheme.pdf"),
    )
    .await;
    assert_eq!(scheme.status, 201);
    let pages = work.json()["asset"]["pageCount"].as_i64().expect("pages")
        + scheme.json()["asset"]["pageCount"].as_i64().expect("pages");
    let key_one = idem();
    let resp = start(&s, &key, &session, &key_one).await;
    assert_eq!(resp.status, 202, "{}", text(&resp));
    let indexing = resp.json()["indexing"].clone();
    assert_eq!(indexing["state"], "queued");
    assert_eq!(indexing["pagesTotal"], pages);
    assert_eq!(indexing["pagesDone"], 0);
    assert_eq!(indexing["finished"], false);
    assert_eq!(jobs(&s, &session).await as i64, pages);
    // The same key is the same answer; a new key is a conflict; nothing more is enqueued.
    let again = start(&s, &key, &session, &key_one).await;
    assert_eq!(again.status, 202);
    assert_eq!(again.body, resp.body);
    start(&s, &key, &session, &idem())
        .await
        .assert_error(409, "session_started");
    upload(
        &s,
        &key,
        &session,
        "work",
        "late.pdf",
        example_pdf("student-script.pdf"),
    )
    .await
    .assert_error(409, "session_started");
    assert_eq!(jobs(&s, &session).await as i64, pages);
    let read = s
        .get(&format!("/v1/marking/sessions/{session}"), &key)
        .await
        .json();
    assert_eq!(read["session"]["kind"], "automated");
    assert_eq!(read["session"]["status"], "started");
    assert_eq!(read["session"]["indexingFinished"], false);
    let list = s.get("/v1/marking/sessions", &key).await.json();
    assert_eq!(list["enabled"], true);
    assert_eq!(list["sessions"][0]["id"], session.as_str());
    assert!(
        list["sessions"][0].get("indexing").is_none(),
        "lists are lightweight"
    );
}

async fn the_allowance_refuses_and_enqueues_nothing(db: Db) {
    let (s, user, key) = setup_with(db, |state| {
        state.marking.workers = 0;
        state.marking.allowance.pages_per_day = 8;
    })
    .await;
    let session = s.automated_session(&key, "Too many pages").await;
    // 6 work pages and 4 scheme pages: 10 > 8.
    upload(
        &s,
        &key,
        &session,
        "work",
        "script.pdf",
        example_pdf("student-script.pdf"),
    )
    .await;
    upload(
        &s,
        &key,
        &session,
        "scheme",
        "scheme.pdf",
        example_pdf("mark-scheme.pdf"),
    )
    .await;
    let resp = start(&s, &key, &session, &idem()).await;
    resp.assert_error(429, "marking_allowance_exhausted");
    let retry: i64 = resp
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("integer");
    assert!((1..=86_400).contains(&retry), "{retry}");
    assert_eq!(jobs(&s, &session).await, 0);
    assert_eq!(
        s.store
            .allowance_used(&user, examkit::store::now_ms())
            .await
            .expect("used"),
        (0, 0)
    );
    let read = s
        .get(&format!("/v1/marking/sessions/{session}"), &key)
        .await
        .json();
    assert_eq!(read["session"]["status"], "draft");
    assert_eq!(read["session"]["indexing"], Value::Null);
}

async fn automated_marking_can_be_switched_off(db: Db) {
    let (s, _user, key) = setup_with(db, |state| state.marking.enabled = false).await;
    let list = s.get("/v1/marking/sessions", &key).await;
    assert_eq!(list.status, 200);
    assert_eq!(list.json()["enabled"], false);
    s.post_json(
        "/v1/marking/sessions",
        &key,
        Some(&idem()),
        br#"{"title":"t"}"#,
    )
    .await
    .assert_error(503, "automated_marking_disabled");
    let body = json!({ "paperId": PAPER, "revision": 1 }).to_string();
    s.post_json(
        "/v1/marking/sessions/from-builder",
        &key,
        Some(&idem()),
        body.as_bytes(),
    )
    .await
    .assert_error(503, "automated_marking_disabled");
    let session = uuid::Uuid::new_v4();
    start(&s, &key, &session.to_string(), &idem())
        .await
        .assert_error(503, "automated_marking_disabled");
    // Imports still work.
    s.import(&key, "still importing").await;
}

/// Saves a paper of the sample bank's first `n` search results, prepares its PDFs and returns
/// its id with both PDFs.
async fn exported_paper(
    s: &Server,
    key: &str,
    n: usize,
    space: &str,
) -> (String, Vec<u8>, Vec<u8>) {
    let resp = s.get(&format!("/v1/questions?limit={n}"), key).await;
    assert_eq!(resp.status, 200, "{}", text(&resp));
    let pins: Vec<Value> = resp.json()["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["pin"].clone())
        .collect();
    let id = uuid::Uuid::new_v4().to_string();
    let body = json!({ "id": id, "title": "Mock paper", "questions": pins, "writingSpace": space, "gradeGuide": false });
    let resp = s
        .send(
            Method::POST,
            "/v1/papers",
            Some(key),
            &[("content-type", "application/json")],
            Some(body.to_string().into_bytes()),
        )
        .await;
    assert_eq!(resp.status, 201, "{}", text(&resp));
    let resp = s
        .send(
            Method::POST,
            &format!("/v1/papers/{id}/revisions/1/exports"),
            Some(key),
            &[("content-type", "application/json")],
            Some(b"{}".to_vec()),
        )
        .await;
    assert_eq!(resp.status, 200, "{}", text(&resp));
    let qp = s
        .get(
            &format!("/v1/papers/{id}/revisions/1/exports/question-paper"),
            key,
        )
        .await;
    let ms = s
        .get(
            &format!("/v1/papers/{id}/revisions/1/exports/mark-scheme"),
            key,
        )
        .await;
    assert_eq!((qp.status, ms.status), (200, 200));
    (id, qp.body, ms.body)
}

fn spawn_workers(s: &Server) -> examkit::marking::worker::Workers {
    let mut config = MarkingConfig::default();
    fast(&mut config);
    examkit::marking::launch::spawn(s.store.clone(), config).expect("workers start")
}

fn boxes_inside_the_page(words: &[Value]) {
    for word in words {
        let b = &word["bbox"];
        let (x, y, w, h) = (
            b["x"].as_f64().expect("x"),
            b["y"].as_f64().expect("y"),
            b["width"].as_f64().expect("w"),
            b["height"].as_f64().expect("h"),
        );
        assert!(
            x >= 0.0
                && y >= 0.0
                && w > 0.0
                && h > 0.0
                && x + w <= 1.0 + 1e-9
                && y + h <= 1.0 + 1e-9,
            "{word}"
        );
    }
}

async fn workers_index_uploaded_pages(db: Db) {
    let (s, _user, key) = setup_with(db, |_| {}).await;
    let (paper, qp, ms) = exported_paper(&s, &key, 3, "smart").await;
    let workers = spawn_workers(&s);
    // A session made without the paper: its printed question paper is work like any other.
    let session = s.automated_session(&key, "Typeset pages").await;
    let work = upload(&s, &key, &session, "work", "paper.pdf", qp).await;
    assert_eq!(work.status, 201, "{}", text(&work));
    let work = work.json()["asset"]["id"].as_str().expect("id").to_owned();
    upload(&s, &key, &session, "scheme", "scheme.pdf", ms).await;
    let resp = start(&s, &key, &session, &idem()).await;
    assert_eq!(resp.status, 202, "{}", text(&resp));
    let session_view = indexed(&s, &key, &session).await;
    workers.shutdown().await;
    let indexing = &session_view["indexing"];
    assert_eq!(indexing["state"], "completed", "{indexing}");
    assert_eq!(indexing["pagesDone"], indexing["pagesTotal"]);
    let pages = indexing["pages"].as_array().expect("pages");
    assert_eq!(
        pages.len() as i64,
        indexing["pagesTotal"].as_i64().expect("total")
    );
    let mut labels = Vec::new();
    for page in pages {
        assert_eq!(page["state"], "ok", "{page}");
        assert_eq!(page["orientation"], 0, "{page}");
        assert_eq!(page["textSource"], "textLayer", "{page}");
        assert_eq!(page["pageCode"]["paperId"], paper.as_str(), "{page}");
        if page["kind"] == "work" {
            assert_eq!(page["pageCode"]["kind"], "question-paper");
            assert_eq!(page["role"], "work", "{page}");
            assert_eq!(page["evidence"], true);
            assert_eq!(
                page["comparison"]["available"], false,
                "no paper to compare with"
            );
            for found in page["questions"].as_array().expect("questions") {
                assert_eq!(found["how"], "text", "{page}");
                labels.push(found["label"].as_str().expect("label").to_owned());
            }
        } else {
            assert_eq!(page["pageCode"]["kind"], "mark-scheme");
            assert_eq!(page["role"], "scheme");
            assert_eq!(page["evidence"], false);
        }
    }
    for label in ["1", "2", "3"] {
        assert!(
            labels.iter().any(|l| l == label),
            "question {label} found by its number: {labels:?}"
        );
    }
    // Each job was done once.
    let jobs = s.store.session_jobs(&session).await.expect("jobs");
    assert!(
        jobs.iter()
            .all(|j| j.state == JobState::Done && j.attempts == 1),
        "{jobs:?}"
    );
    // A page's words, with boxes inside the page; the paper's title is among them.
    let page = s
        .get(&format!("/v1/marking/assets/{work}/pages/1"), &key)
        .await;
    assert_eq!(page.status, 200, "{}", text(&page));
    let page = page.json()["page"].clone();
    let words = page["words"].as_array().expect("words");
    assert!(words.iter().any(|w| w["text"] == "Mock"), "{page}");
    boxes_inside_the_page(words);
}

async fn clean_papers_and_schemes_are_never_evidence(db: Db) {
    let (s, _user, key) = setup_with(db, |_| {}).await;
    let (paper, qp, ms) = exported_paper(&s, &key, 2, "smart").await;
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
    let created = resp.json()["session"].clone();
    assert_eq!(created["paper"]["id"], paper.as_str());
    assert_eq!(created["paper"]["revision"], 1);
    let attached = created["assets"].as_array().expect("assets");
    assert_eq!(attached.len(), 1, "the mark scheme is attached");
    assert_eq!(attached[0]["kind"], "scheme");
    let session = created["id"].as_str().expect("id").to_owned();
    // The clean question paper and the mark scheme, uploaded as the student's work.
    upload(&s, &key, &session, "work", "clean.pdf", qp).await;
    upload(&s, &key, &session, "work", "scheme-as-work.pdf", ms).await;
    let workers = spawn_workers(&s);
    let resp = start(&s, &key, &session, &idem()).await;
    assert_eq!(resp.status, 202, "{}", text(&resp));
    indexed(&s, &key, &session).await;
    // Indexing places the paper's questions and marks each: none can have an award.
    let deadline = Instant::now() + Duration::from_secs(120);
    let view = loop {
        let view = s
            .get(&format!("/v1/marking/sessions/{session}"), &key)
            .await
            .json()["session"]
            .clone();
        let questions = view["questions"].as_array().expect("questions");
        if questions.len() == 2
            && questions
                .iter()
                .all(|q| q["status"] != "queued" && q["status"] != "running")
        {
            break view;
        }
        assert!(
            Instant::now() < deadline,
            "questions did not finish: {view}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    workers.shutdown().await;
    let pages = view["indexing"]["pages"].as_array().expect("pages");
    let names: std::collections::HashMap<String, String> = view["assets"]
        .as_array()
        .expect("assets")
        .iter()
        .map(|a| {
            (
                a["id"].as_str().expect("id").to_owned(),
                a["name"].as_str().expect("name").to_owned(),
            )
        })
        .collect();
    for page in pages.iter().filter(|p| p["kind"] == "work") {
        assert_eq!(page["evidence"], false, "{page}");
        match names[page["assetId"].as_str().expect("asset")].as_str() {
            "clean.pdf" => {
                assert_eq!(page["role"], "clean_paper", "{page}");
                assert!(
                    page["reason"]
                        .as_str()
                        .expect("reason")
                        .contains("nothing was added"),
                    "{page}"
                );
                assert_eq!(page["comparison"]["available"], true);
                for found in page["questions"].as_array().expect("questions") {
                    assert_eq!(found["how"], "pageCode");
                }
            }
            _ => {
                assert_eq!(page["role"], "scheme_as_work", "{page}");
                assert!(
                    page["reason"]
                        .as_str()
                        .expect("reason")
                        .contains("mark scheme"),
                    "{page}"
                );
            }
        }
    }
    for question in view["questions"].as_array().expect("questions") {
        assert_eq!(question["status"], "failed", "{question}");
        assert_eq!(question["error"]["code"], "no_student_work", "{question}");
        assert_eq!(question["score"]["awarded"], 0);
    }
}

/// A PNG whose header declares 100000 x 100000 pixels: indexing refuses to decode it.
fn png_bomb() -> Vec<u8> {
    let chunk = common::png_chunk;
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = 100_000u32.to_be_bytes().repeat(2);
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(
        &mut out,
        b"IDAT",
        &[0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01],
    );
    chunk(&mut out, b"IEND", &[]);
    out
}

/// A page indexing cannot read (stored before uploads were checked page by page) is a failed
/// page, listed with its error; the session's other pages are indexed and indexing completes.
async fn an_unreadable_page_fails_alone(db: Db) {
    let (s, user, key) = setup_with(db, |_| {}).await;
    let (_paper, qp, ms) = exported_paper(&s, &key, 2, "smart").await;
    let session = s.automated_session(&key, "One bad page").await;
    assert_eq!(
        upload(&s, &key, &session, "work", "paper.pdf", qp)
            .await
            .status,
        201
    );
    assert_eq!(
        upload(&s, &key, &session, "scheme", "scheme.pdf", ms)
            .await
            .status,
        201
    );
    // The upload route refuses the bomb; the store is given it directly.
    let bomb = png_bomb();
    let refused = upload(&s, &key, &session, "work", "bomb.png", bomb.clone()).await;
    assert_eq!(refused.status, 422, "{}", text(&refused));
    let stored = s
        .store
        .add_asset(
            &user,
            &session,
            examkit::store::automated::ORIGIN,
            examkit::store::words::AssetKind::Work,
            "bomb.png",
            "image/png",
            1,
            &"0".repeat(64),
            &bomb,
        )
        .await
        .map_err(|_| "add_asset failed")
        .expect("the bomb is stored");
    let workers = spawn_workers(&s);
    let resp = start(&s, &key, &session, &idem()).await;
    assert_eq!(resp.status, 202, "{}", text(&resp));
    let view = indexed(&s, &key, &session).await;
    workers.shutdown().await;
    let indexing = &view["indexing"];
    assert_eq!(indexing["state"], "completed", "{indexing}");
    assert_eq!(indexing["pagesFailed"], 1, "{indexing}");
    let pages = indexing["pages"].as_array().expect("pages");
    let failed: Vec<&Value> = pages.iter().filter(|p| p["state"] == "failed").collect();
    assert_eq!(failed.len(), 1, "{indexing}");
    assert_eq!(failed[0]["assetId"], stored.id.as_str());
    assert_eq!(failed[0]["evidence"], false);
    assert!(
        failed[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("pixels")),
        "{}",
        failed[0]
    );
    let ok = pages.iter().filter(|p| p["state"] == "ok").count();
    assert_eq!(
        ok as i64 + 1,
        indexing["pagesTotal"].as_i64().expect("total")
    );
}

on_both!(
    an_unreadable_page_fails_alone,
    routes_refuse_bad_requests,
    start_needs_work_and_a_scheme_and_is_idempotent,
    the_allowance_refuses_and_enqueues_nothing,
    automated_marking_can_be_switched_off,
    workers_index_uploaded_pages,
    clean_papers_and_schemes_are_never_evidence,
);
