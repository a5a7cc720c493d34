//! The paper routes end to end on the sample bank, SQLite and PostgreSQL: creation and its
//! retries, every bad body, frozen revisions and stale changes, pins checked against the bank,
//! the page and paper limits, scopes, and both PDFs of each revision (read back with poppler);
//! and class sets printed from a revision (every copy's codes, lines and names read back).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Db, Resp, Server, generous, start_with};
use examkit::auth::Scope;
use reqwest::Method;
use serde_json::{Value, json};

const PAPER: &str = "3f2a9c1e-5b7d-4e8a-9c0f-1d2e3f4a5b6c";
const OTHER: &str = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a";

/// A server with the sample bank, an account and a key holding every scope.
async fn setup_with(
    db: Db,
    adjust: impl FnOnce(&mut examkit::server::AppState),
) -> (Server, String, String) {
    let s = start_with(db, generous(), adjust).await;
    s.store
        .import_sample_bank()
        .await
        .expect("import the sample bank");
    let user = s.user("Paper builder").await;
    let key = s.key(&user, Scope::ALL).await;
    (s, user, key)
}

async fn setup(db: Db) -> (Server, String, String) {
    setup_with(db, |_| {}).await
}

/// The pins of the first `n` search results (question id order), as search returns them.
async fn pins(s: &Server, key: &str, n: usize) -> Vec<Value> {
    let resp = s.get(&format!("/v1/questions?limit={n}"), key).await;
    assert_eq!(resp.status, 200);
    let items = resp.json()["items"].as_array().expect("items").clone();
    assert_eq!(items.len(), n);
    items.into_iter().map(|i| i["pin"].clone()).collect()
}

fn create_body(id: &str, title: &str, pins: &[Value], space: &str, guide: bool) -> Value {
    json!({ "id": id, "title": title, "questions": pins, "writingSpace": space, "gradeGuide": guide })
}

async fn send_json(s: &Server, method: Method, path: &str, key: &str, body: &Value) -> Resp {
    s.send(
        method,
        path,
        Some(key),
        &[("content-type", "application/json")],
        Some(serde_json::to_vec(body).expect("json")),
    )
    .await
}

async fn create(s: &Server, key: &str, body: &Value) -> Resp {
    send_json(s, Method::POST, "/v1/papers", key, body).await
}

async fn patch(s: &Server, key: &str, id: &str, body: &Value) -> Resp {
    send_json(s, Method::PATCH, &format!("/v1/papers/{id}"), key, body).await
}

async fn prepare(s: &Server, key: &str, id: &str, revision: i64) -> Resp {
    send_json(
        s,
        Method::POST,
        &format!("/v1/papers/{id}/revisions/{revision}/exports"),
        key,
        &json!({}),
    )
    .await
}

/// The error details' `(path, code)` pairs.
fn field_codes(body: &Value) -> Vec<(String, String)> {
    body["error"]["details"]["errors"]
        .as_array()
        .expect("details.errors")
        .iter()
        .map(|e| {
            (
                e["path"].as_str().expect("path").to_owned(),
                e["code"].as_str().expect("code").to_owned(),
            )
        })
        .collect()
}

fn pair(path: &str, code: &str) -> (String, String) {
    (path.to_owned(), code.to_owned())
}

/// Sample-bank facts: a question with a withdrawn revision (and its published successor), and a
/// question whose last revision is a draft.
struct SampleFacts {
    withdrawn: (String, i64),
    draft: (String, i64),
}

fn sample_facts() -> SampleFacts {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("bank/sample");
    let mut withdrawn = None;
    let mut draft = None;
    for entry in std::fs::read_dir(&dir).expect("sample folder") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let file: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        for q in file["questions"].as_array().into_iter().flatten() {
            let id = q["id"].as_str().expect("id").to_owned();
            for r in q["revisions"].as_array().expect("revisions") {
                let n = r["revision"].as_i64().expect("revision");
                match r["status"].as_str() {
                    Some("withdrawn") => withdrawn = Some((id.clone(), n)),
                    Some("draft") => draft = Some((id.clone(), n)),
                    _ => {}
                }
            }
        }
    }
    SampleFacts {
        withdrawn: withdrawn.expect("the sample bank has a withdrawn revision"),
        draft: draft.expect("the sample bank has a draft revision"),
    }
}

/// The pin of a served revision, from its revision read.
async fn pin_of(s: &Server, key: &str, question: &str, revision: i64) -> Value {
    let resp = s
        .get(
            &format!("/v1/questions/{question}/revisions/{revision}"),
            key,
        )
        .await;
    assert_eq!(resp.status, 200, "{question} r{revision}");
    resp.json()["question"]["pin"].clone()
}

/// A folder for this test's kept page images and PDFs.
fn artifacts() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let dir = target.join("examkit-paper-artifacts");
    std::fs::create_dir_all(&dir).expect("artifact folder");
    dir
}

/// The text of a PDF, by `pdftotext -layout`.
fn pdf_text(pdf: &[u8], name: &str) -> String {
    let path = artifacts().join(name);
    std::fs::write(&path, pdf).expect("write the PDF");
    let out = Command::new("pdftotext")
        .arg("-layout")
        .arg(&path)
        .arg("-")
        .output()
        .expect("pdftotext runs (poppler-utils)");
    assert!(out.status.success(), "pdftotext failed on {name}");
    String::from_utf8(out.stdout).expect("utf-8 text")
}

/// Renders page 1 of a PDF to a PNG kept with the artifacts; returns its size in bytes.
fn first_page_png(pdf_name: &str) -> u64 {
    let pdf = artifacts().join(pdf_name);
    let stem = artifacts().join(pdf_name.trim_end_matches(".pdf"));
    let status = Command::new("pdftoppm")
        .args(["-png", "-r", "50", "-f", "1", "-l", "1", "-singlefile"])
        .arg(&pdf)
        .arg(&stem)
        .status()
        .expect("pdftoppm runs (poppler-utils)");
    assert!(status.success());
    std::fs::metadata(stem.with_extension("png"))
        .expect("the page image")
        .len()
}

/// A PDF's page count, by `pdfinfo`.
fn page_count(pdf: &[u8], name: &str) -> usize {
    let path = artifacts().join(name);
    std::fs::write(&path, pdf).expect("write the PDF");
    let out = Command::new("pdfinfo")
        .arg(&path)
        .output()
        .expect("pdfinfo runs (poppler-utils)");
    assert!(out.status.success(), "pdfinfo failed on {name}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("Pages:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("a page count")
}

on_both!(
    class_sets_print_named_and_numbered_copies,
    class_set_bodies_scopes_and_other_accounts,
    create_read_list_and_retry,
    bad_bodies_are_each_reported,
    changes_make_frozen_revisions,
    concurrent_saves,
    withdrawn_questions_stay_in_saved_papers,
    long_papers_are_refused,
    exports_of_each_revision,
    export_can_be_disabled,
    paper_count_is_limited,
    scopes_are_required,
);

async fn create_read_list_and_retry(db: Db) {
    let (s, _, key) = setup(db).await;
    let chosen = pins(&s, &key, 3).await;
    let body = create_body(PAPER, "Pure mock, set A", &chosen, "smart", true);
    let resp = create(&s, &key, &body).await;
    assert_eq!(resp.status, 201, "{}", String::from_utf8_lossy(&resp.body));
    let paper = resp.json()["paper"].clone();
    assert_eq!(paper["id"], PAPER);
    assert_eq!(paper["revision"], 1);
    assert_eq!(paper["latestRevision"], 1);
    assert_eq!(paper["title"], "Pure mock, set A");
    assert_eq!(paper["questions"], json!(chosen));
    assert_eq!(paper["writingSpace"], "smart");
    assert_eq!(paper["gradeGuide"], true);
    assert_eq!(paper["questionCount"], 3);
    assert_eq!(paper["exports"]["ready"], false);
    assert!(paper["pages"]["questionPaper"].as_i64().expect("pages") >= 2);
    assert!(paper["pages"]["markScheme"].as_i64().expect("pages") >= 2);
    // The total is the pinned revisions' marks, and the grade guide says it is an estimate.
    let mut total = 0;
    for pin in &chosen {
        let r = s
            .get(
                &format!(
                    "/v1/questions/{}/revisions/{}",
                    pin["questionId"].as_str().expect("id"),
                    pin["revision"]
                ),
                &key,
            )
            .await;
        total += r.json()["question"]["marks"].as_i64().expect("marks");
    }
    assert_eq!(paper["totalMarks"], total);
    let guide = &paper["estimatedGradeGuide"];
    assert_eq!(guide["estimate"], true);
    assert!(
        guide["note"]
            .as_str()
            .expect("note")
            .contains("not an official grade boundary")
    );
    let a_star = &guide["grades"][0];
    assert_eq!(a_star["grade"], "A*");
    assert_eq!(a_star["marks"], (total * 80 + 99) / 100);

    // Reads: latest, revision 1, the list.
    let latest = s.get(&format!("/v1/papers/{PAPER}"), &key).await;
    assert_eq!(latest.status, 200);
    assert_eq!(latest.json()["paper"], paper);
    let first = s
        .get(&format!("/v1/papers/{PAPER}/revisions/1"), &key)
        .await;
    assert_eq!(first.json()["paper"], paper);
    let list = s.get("/v1/papers", &key).await;
    assert_eq!(list.status, 200);
    let summaries = list.json()["papers"].as_array().expect("papers").clone();
    assert_eq!(summaries.len(), 1);
    assert_eq!(summaries[0]["id"], PAPER);
    assert_eq!(summaries[0]["revision"], 1);
    assert_eq!(summaries[0]["questionCount"], 3);
    assert_eq!(summaries[0]["totalMarks"], total);
    assert!(
        summaries[0].get("questions").is_none(),
        "summaries are light"
    );

    // The identical creation again, spelt differently (id case, key order, spacing): the same
    // paper, 201, nothing new saved.
    let respelt = format!(
        "{{\"gradeGuide\": true, \"writingSpace\": \"smart\",\n \"questions\": {}, \"title\": \"Pure mock, set A\", \"id\": \"{}\"}}",
        serde_json::to_string(&chosen).expect("json"),
        PAPER.to_uppercase()
    );
    let again = s
        .send(
            Method::POST,
            "/v1/papers",
            Some(&key),
            &[("content-type", "application/json")],
            Some(respelt.into_bytes()),
        )
        .await;
    assert_eq!(again.status, 201);
    assert_eq!(again.json()["paper"], paper);
    // The same id with other content is a conflict, and changes nothing.
    let mut changed = body.clone();
    changed["title"] = json!("Another title");
    create(&s, &key, &changed)
        .await
        .assert_error(409, "paper_exists");
    let mut reordered = body.clone();
    reordered["questions"] = json!([chosen[1], chosen[0], chosen[2]]);
    create(&s, &key, &reordered)
        .await
        .assert_error(409, "paper_exists");
    assert_eq!(
        s.get(&format!("/v1/papers/{PAPER}"), &key).await.json()["paper"],
        paper
    );

    // Another account sees nothing of it, and may use the same id for its own paper.
    let other_user = s.user("Someone else").await;
    let other = s.key(&other_user, Scope::ALL).await;
    s.get(&format!("/v1/papers/{PAPER}"), &other)
        .await
        .assert_error(404, "not_found");
    s.get(&format!("/v1/papers/{PAPER}/revisions/1"), &other)
        .await
        .assert_error(404, "not_found");
    assert_eq!(
        s.get("/v1/papers", &other).await.json()["papers"],
        json!([])
    );
    let theirs = create(
        &s,
        &other,
        &create_body(PAPER, "Theirs", &chosen[..1], "none", false),
    )
    .await;
    assert_eq!(theirs.status, 201);
    assert_eq!(theirs.json()["paper"]["title"], "Theirs");
    assert_eq!(
        s.get(&format!("/v1/papers/{PAPER}"), &key).await.json()["paper"]["title"],
        "Pure mock, set A"
    );
}

async fn bad_bodies_are_each_reported(db: Db) {
    let (s, _, key) = setup(db).await;
    let chosen = pins(&s, &key, 2).await;
    let facts = sample_facts();
    let good = create_body(PAPER, "Mock", &chosen, "smart", false);
    // Transport: content type, JSON, size.
    s.send(
        Method::POST,
        "/v1/papers",
        Some(&key),
        &[("content-type", "text/plain")],
        Some(serde_json::to_vec(&good).expect("json")),
    )
    .await
    .assert_error(415, "unsupported_media_type");
    s.send(
        Method::POST,
        "/v1/papers",
        Some(&key),
        &[("content-type", "application/json")],
        Some(b"{\"id\": ".to_vec()),
    )
    .await
    .assert_error(400, "invalid_json");
    s.send(
        Method::POST,
        "/v1/papers",
        Some(&key),
        &[("content-type", "application/json")],
        None,
    )
    .await
    .assert_error(400, "invalid_json");
    let mut huge = good.clone();
    huge["title"] = json!("x".repeat(70 * 1024));
    let body = create(&s, &key, &huge)
        .await
        .assert_error(413, "payload_too_large");
    assert!(
        body["error"]["message"]
            .as_str()
            .expect("message")
            .contains("65536")
    );

    // Shapes: every problem at its pointer.
    let bad = json!({
        "id": "paper-1",
        "title": "",
        "questions": [chosen[0], {"questionId": "nope", "revision": 0, "contentVersion": "x", "schemeVersion": null}],
        "writingSpace": "4-pages",
        "gradeGuide": "no",
        "colour": "blue",
    });
    let body = create(&s, &key, &bad)
        .await
        .assert_error(422, "invalid_fields");
    assert_eq!(
        field_codes(&body),
        [
            pair("/colour", "unknown_field"),
            pair("/id", "format"),
            pair("/title", "min_length"),
            pair("/questions/1/questionId", "format"),
            pair("/questions/1/revision", "minimum"),
            pair("/questions/1/contentVersion", "format"),
            pair("/questions/1/schemeVersion", "type"),
            pair("/writingSpace", "enum"),
            pair("/gradeGuide", "type"),
        ]
    );
    let body = create(&s, &key, &json!({}))
        .await
        .assert_error(422, "invalid_fields");
    assert_eq!(field_codes(&body).len(), 5, "each required field");
    let body = create(&s, &key, &json!([good]))
        .await
        .assert_error(422, "invalid_fields");
    assert_eq!(field_codes(&body), [pair("", "type")]);
    for (field, value, path, code) in [
        ("title", json!("a\u{7}b"), "/title", "control_character"),
        ("title", json!(" \u{a0} "), "/title", "blank"),
        ("title", json!("x".repeat(201)), "/title", "max_length"),
        ("questions", json!([]), "/questions", "min_items"),
        (
            "questions",
            json!([chosen[0], chosen[1], chosen[0]]),
            "/questions/2/questionId",
            "duplicate_question",
        ),
        ("writingSpace", json!(2), "/writingSpace", "type"),
    ] {
        let mut body = good.clone();
        body[field] = value;
        let err = create(&s, &key, &body)
            .await
            .assert_error(422, "invalid_fields");
        assert_eq!(field_codes(&err), [pair(path, code)], "{field}");
    }
    let mut many = Vec::new();
    for i in 0..25 {
        let mut pin = chosen[0].clone();
        pin["questionId"] = json!(format!("00000000-0000-4000-8000-{i:012}"));
        many.push(pin);
    }
    let mut body = good.clone();
    body["questions"] = json!(many);
    let err = create(&s, &key, &body)
        .await
        .assert_error(422, "invalid_fields");
    assert_eq!(field_codes(&err), [pair("/questions", "max_items")]);

    // Pins against the bank: unknown question or revision, a draft, a tampered version, a
    // withdrawn revision.
    let mut unknown = chosen[0].clone();
    unknown["questionId"] = json!("00000000-0000-4000-8000-000000000001");
    let mut no_revision = chosen[0].clone();
    no_revision["revision"] = json!(99);
    let mut draft = chosen[0].clone();
    draft["questionId"] = json!(facts.draft.0);
    draft["revision"] = json!(facts.draft.1);
    let mut tampered = chosen[1].clone();
    tampered["contentVersion"] = json!("0".repeat(64));
    tampered["schemeVersion"] = json!("f".repeat(64));
    let withdrawn = pin_of(&s, &key, &facts.withdrawn.0, facts.withdrawn.1).await;
    let mut body = good.clone();
    body["questions"] = json!([unknown, no_revision, draft, withdrawn]);
    let err = create(&s, &key, &body)
        .await
        .assert_error(422, "invalid_fields");
    assert_eq!(
        field_codes(&err),
        [
            pair("/questions/0", "pin_unknown"),
            pair("/questions/1", "pin_unknown"),
            pair("/questions/2", "pin_unknown"),
            pair("/questions/3", "pin_withdrawn"),
        ]
    );
    body["questions"] = json!([tampered]);
    let err = create(&s, &key, &body)
        .await
        .assert_error(422, "invalid_fields");
    assert_eq!(
        field_codes(&err),
        [
            pair("/questions/0/contentVersion", "pin_mismatch"),
            pair("/questions/0/schemeVersion", "pin_mismatch"),
        ]
    );
    // Nothing was saved by any of them.
    assert_eq!(s.get("/v1/papers", &key).await.json()["papers"], json!([]));
    s.get(&format!("/v1/papers/{PAPER}"), &key)
        .await
        .assert_error(404, "not_found");
    // And the good body still works.
    assert_eq!(create(&s, &key, &good).await.status, 201);
}

async fn changes_make_frozen_revisions(db: Db) {
    let (s, _, key) = setup(db).await;
    let chosen = pins(&s, &key, 3).await;
    let first = create(
        &s,
        &key,
        &create_body(PAPER, "Version one", &chosen[..2], "smart", false),
    )
    .await
    .json()["paper"]
        .clone();

    let second = patch(
        &s,
        &key,
        PAPER,
        &json!({"revision": 1, "title": "Version two"}),
    )
    .await;
    assert_eq!(
        second.status,
        200,
        "{}",
        String::from_utf8_lossy(&second.body)
    );
    let second = second.json()["paper"].clone();
    assert_eq!(second["revision"], 2);
    assert_eq!(second["latestRevision"], 2);
    assert_eq!(second["title"], "Version two");
    assert_eq!(
        second["questions"], first["questions"],
        "fields not sent are kept"
    );
    assert_eq!(second["createdAt"], first["createdAt"]);

    let third = patch(
        &s,
        &key,
        PAPER,
        &json!({"revision": 2, "questions": [chosen[2], chosen[0]], "writingSpace": "1-page", "gradeGuide": true}),
    )
    .await;
    assert_eq!(third.status, 200);
    let third = third.json()["paper"].clone();
    assert_eq!(third["revision"], 3);
    assert_eq!(third["questions"], json!([chosen[2], chosen[0]]));
    assert_eq!(third["writingSpace"], "1-page");
    assert!(third["estimatedGradeGuide"].is_object());

    // Every revision stays readable exactly as saved.
    let mut frozen_first = first.clone();
    frozen_first["latestRevision"] = json!(3);
    assert_eq!(
        s.get(&format!("/v1/papers/{PAPER}/revisions/1"), &key)
            .await
            .json()["paper"],
        frozen_first
    );
    assert_eq!(
        s.get(&format!("/v1/papers/{PAPER}/revisions/2"), &key)
            .await
            .json()["paper"]["title"],
        "Version two"
    );
    assert_eq!(
        s.get(&format!("/v1/papers/{PAPER}"), &key).await.json()["paper"],
        third
    );
    let listed = s.get("/v1/papers", &key).await.json()["papers"][0].clone();
    assert_eq!(listed["revision"], 3);
    assert_eq!(listed["title"], "Version two");

    // A stale revision changes nothing and says which is current.
    let stale = patch(&s, &key, PAPER, &json!({"revision": 2, "title": "Lost"}))
        .await
        .assert_error(409, "stale_revision");
    assert!(
        stale["error"]["message"]
            .as_str()
            .expect("message")
            .contains("current revision is 3")
    );
    patch(&s, &key, PAPER, &json!({"revision": 7, "title": "Lost"}))
        .await
        .assert_error(409, "stale_revision");
    // A change that changes nothing saves nothing.
    let same = patch(
        &s,
        &key,
        PAPER,
        &json!({"revision": 3, "title": "Version two"}),
    )
    .await;
    assert_eq!(same.status, 200);
    assert_eq!(same.json()["paper"], third);
    // Bad bodies and paths.
    let err = patch(&s, &key, PAPER, &json!({"revision": 3}))
        .await
        .assert_error(422, "invalid_fields");
    assert_eq!(field_codes(&err), [pair("", "no_changes")]);
    let err = patch(&s, &key, PAPER, &json!({"title": "x"}))
        .await
        .assert_error(422, "invalid_fields");
    assert_eq!(field_codes(&err), [pair("/revision", "required")]);
    let err = patch(
        &s,
        &key,
        PAPER,
        &json!({"revision": 3, "id": OTHER, "questions": []}),
    )
    .await
    .assert_error(422, "invalid_fields");
    assert_eq!(
        field_codes(&err),
        [
            pair("/id", "unknown_field"),
            pair("/questions", "min_items")
        ]
    );
    let mut tampered = chosen[1].clone();
    tampered["schemeVersion"] = json!("1".repeat(64));
    let err = patch(
        &s,
        &key,
        PAPER,
        &json!({"revision": 3, "questions": [chosen[0], tampered]}),
    )
    .await
    .assert_error(422, "invalid_fields");
    assert_eq!(
        field_codes(&err),
        [pair("/questions/1/schemeVersion", "pin_mismatch")]
    );
    patch(&s, &key, OTHER, &json!({"revision": 1, "title": "x"}))
        .await
        .assert_error(404, "not_found");
    let err = patch(
        &s,
        &key,
        "not-a-uuid",
        &json!({"revision": 1, "title": "x"}),
    )
    .await
    .assert_error(422, "invalid_parameters");
    assert_eq!(field_codes(&err), [pair("id", "format")]);
    s.send(
        Method::PATCH,
        &format!("/v1/papers/{PAPER}"),
        Some(&key),
        &[("content-type", "application/json")],
        Some(b"nope".to_vec()),
    )
    .await
    .assert_error(400, "invalid_json");
    for (path, code) in [
        (format!("/v1/papers/{PAPER}/revisions/0"), "minimum"),
        (format!("/v1/papers/{PAPER}/revisions/x"), "type"),
        (
            format!("/v1/papers/{PAPER}/revisions/99999999999"),
            "maximum",
        ),
    ] {
        let err = s
            .get(&path, &key)
            .await
            .assert_error(422, "invalid_parameters");
        assert_eq!(field_codes(&err), [pair("revision", code)], "{path}");
    }
    s.get(&format!("/v1/papers/{PAPER}/revisions/4"), &key)
        .await
        .assert_error(404, "not_found");
    // Still three revisions, the latest unchanged.
    assert_eq!(
        s.get(&format!("/v1/papers/{PAPER}"), &key).await.json()["paper"],
        third
    );
}

async fn concurrent_saves(db: Db) {
    let (s, user, key) = setup(db).await;
    let chosen = pins(&s, &key, 2).await;
    let body = create_body(PAPER, "Raced", &chosen, "none", false);
    // Eight identical creations at once: every one gets the same paper, one is saved.
    let creations = (0..8).map(|_| create(&s, &key, &body));
    let results = futures_util::future::join_all(creations).await;
    let first = results[0].json()["paper"].clone();
    for r in &results {
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
        assert_eq!(r.json()["paper"], first);
    }
    // Eight changes from revision 1 at once: exactly one wins, the rest are stale.
    let changes = (0..8).map(|i| {
        let body = json!({"revision": 1, "title": format!("Change {i}")});
        let s = &s;
        let key = &key;
        async move { patch(s, key, PAPER, &body).await }
    });
    let results = futures_util::future::join_all(changes).await;
    let won: Vec<&Resp> = results.iter().filter(|r| r.status == 200).collect();
    assert_eq!(won.len(), 1);
    for r in results.iter().filter(|r| r.status != 200) {
        r.assert_error(409, "stale_revision");
    }
    let latest = s.get(&format!("/v1/papers/{PAPER}"), &key).await.json()["paper"].clone();
    assert_eq!(latest["revision"], 2);
    assert_eq!(latest["title"], won[0].json()["paper"]["title"]);
    let revisions: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM paper_revisions WHERE user_id = $1 AND paper_id = $2",
    )
    .bind(&user)
    .bind(PAPER)
    .fetch_one(s.store.pool())
    .await
    .expect("count");
    assert_eq!(revisions, 2);
}

async fn withdrawn_questions_stay_in_saved_papers(db: Db) {
    let (s, _, key) = setup(db).await;
    let chosen = pins(&s, &key, 3).await;
    let created = create(
        &s,
        &key,
        &create_body(PAPER, "Keeps its questions", &chosen[..2], "smart", false),
    )
    .await;
    assert_eq!(created.status, 201);
    // The bank withdraws the first pinned revision after the paper was saved.
    let mut tx = s.store.begin_write().await.expect("begin");
    let first = &chosen[0];
    sqlx::query(
        "UPDATE bank_revisions SET status = 'withdrawn' WHERE question_id = $1 AND revision = $2",
    )
    .bind(first["questionId"].as_str().expect("id"))
    .bind(first["revision"].as_i64().expect("revision"))
    .execute(&mut *tx)
    .await
    .expect("withdraw");
    tx.commit().await.expect("commit");
    // The paper still reads, changes and exports with it…
    let changed = patch(
        &s,
        &key,
        PAPER,
        &json!({"revision": 1, "title": "Still here"}),
    )
    .await;
    assert_eq!(
        changed.status,
        200,
        "{}",
        String::from_utf8_lossy(&changed.body)
    );
    assert_eq!(changed.json()["paper"]["questions"][0], *first);
    let reordered = patch(
        &s,
        &key,
        PAPER,
        &json!({"revision": 2, "questions": [chosen[1], chosen[0], chosen[2]]}),
    )
    .await;
    assert_eq!(reordered.status, 200);
    assert_eq!(prepare(&s, &key, PAPER, 1).await.status, 200);
    // …but no paper may newly add it.
    let err = create(
        &s,
        &key,
        &create_body(OTHER, "New", &chosen[..1], "smart", false),
    )
    .await
    .assert_error(422, "invalid_fields");
    assert_eq!(field_codes(&err), [pair("/questions/0", "pin_withdrawn")]);
}

async fn long_papers_are_refused(db: Db) {
    let (s, _, key) = setup(db).await;
    let chosen = pins(&s, &key, 24).await;
    // 24 questions, each followed by three blank pages: over 80 pages.
    let err = create(
        &s,
        &key,
        &create_body(PAPER, "Too long", &chosen, "3-pages", false),
    )
    .await
    .assert_error(422, "paper_too_long");
    assert!(
        err["error"]["message"]
            .as_str()
            .expect("message")
            .contains("at most 80 pages")
    );
    assert_eq!(s.get("/v1/papers", &key).await.json()["papers"], json!([]));
    // The same questions with ruled lines fit.
    let fits = create(
        &s,
        &key,
        &create_body(PAPER, "Fits", &chosen, "smart", false),
    )
    .await;
    assert_eq!(fits.status, 201);
    let paper = fits.json()["paper"].clone();
    assert_eq!(paper["questionCount"], 24);
    assert!(paper["pages"]["questionPaper"].as_i64().expect("pages") <= 80);
    // A change that would make it too long is refused and leaves it as it was.
    patch(
        &s,
        &key,
        PAPER,
        &json!({"revision": 1, "writingSpace": "3-pages"}),
    )
    .await
    .assert_error(422, "paper_too_long");
    assert_eq!(
        s.get(&format!("/v1/papers/{PAPER}"), &key).await.json()["paper"],
        paper
    );
}

async fn exports_of_each_revision(db: Db) {
    let (s, _, key) = setup(db).await;
    let chosen = pins(&s, &key, 4).await;
    let title = "Exported mock paper";
    let body = create_body(PAPER, title, &chosen, "smart", true);
    let paper = create(&s, &key, &body).await.json()["paper"].clone();
    let base = format!("/v1/papers/{PAPER}/revisions/1/exports");

    // Before preparation: 409 for both downloads.
    for kind in ["question-paper", "mark-scheme"] {
        s.get(&format!("{base}/{kind}"), &key)
            .await
            .assert_error(409, "exports_not_ready");
    }
    // Bad preparation requests.
    let err = send_json(&s, Method::POST, &base, &key, &json!({"format": "pdf"}))
        .await
        .assert_error(422, "invalid_fields");
    assert_eq!(field_codes(&err), [pair("/format", "unknown_field")]);
    send_json(&s, Method::POST, &base, &key, &json!([]))
        .await
        .assert_error(422, "invalid_fields");
    s.send(
        Method::POST,
        &base,
        Some(&key),
        &[("content-type", "application/json")],
        None,
    )
    .await
    .assert_error(400, "invalid_json");
    s.send(Method::POST, &base, Some(&key), &[], Some(b"{}".to_vec()))
        .await
        .assert_error(415, "unsupported_media_type");
    prepare(&s, &key, PAPER, 2)
        .await
        .assert_error(404, "not_found");
    prepare(&s, &key, OTHER, 1)
        .await
        .assert_error(404, "not_found");
    let err = s
        .get(&format!("{base}/answers"), &key)
        .await
        .assert_error(422, "invalid_parameters");
    assert_eq!(field_codes(&err), [pair("kind", "enum")]);

    // Preparation, and again (safe to retry).
    for _ in 0..2 {
        let ready = prepare(&s, &key, PAPER, 1).await;
        assert_eq!(
            ready.status,
            200,
            "{}",
            String::from_utf8_lossy(&ready.body)
        );
        let mut body = ready.json();
        let layout = body
            .as_object_mut()
            .and_then(|b| b.remove("layout"))
            .expect("the layout is returned");
        assert_eq!(
            body,
            json!({"ready": true, "paperId": PAPER, "revision": 1})
        );
        assert_eq!(layout["paperId"], PAPER);
        assert_eq!(layout["revision"], 1);
        assert!(
            !layout["questions"]
                .as_array()
                .expect("questions")
                .is_empty()
        );
    }
    assert_eq!(
        s.get(&format!("/v1/papers/{PAPER}"), &key).await.json()["paper"]["exports"]["ready"],
        true
    );
    let qp = s.get(&format!("{base}/question-paper"), &key).await;
    assert_eq!(qp.status, 200);
    assert_eq!(qp.header("content-type"), Some("application/pdf"));
    assert!(
        qp.header("content-disposition")
            .is_some_and(|d| d.contains("question-paper.pdf"))
    );
    assert!(qp.body.starts_with(b"%PDF-"));
    let ms = s.get(&format!("{base}/mark-scheme"), &key).await;
    assert_eq!(ms.status, 200);
    assert!(ms.body.starts_with(b"%PDF-"));
    let tag = match db {
        Db::Sqlite => "sqlite",
        Db::Postgres => "postgres",
    };
    assert_eq!(
        page_count(&qp.body, &format!("{tag}-r1-question-paper.pdf")),
        usize::try_from(paper["pages"]["questionPaper"].as_i64().expect("pages")).expect("pages")
    );
    assert_eq!(
        page_count(&ms.body, &format!("{tag}-r1-mark-scheme.pdf")),
        usize::try_from(paper["pages"]["markScheme"].as_i64().expect("pages")).expect("pages")
    );
    let qp_text = pdf_text(&qp.body, &format!("{tag}-r1-question-paper.pdf"));
    let ms_text = pdf_text(&ms.body, &format!("{tag}-r1-mark-scheme.pdf"));
    assert!(first_page_png(&format!("{tag}-r1-question-paper.pdf")) > 1000);
    assert!(first_page_png(&format!("{tag}-r1-mark-scheme.pdf")) > 1000);
    let total = paper["totalMarks"].as_i64().expect("total");
    for text in [&qp_text, &ms_text] {
        assert!(text.contains(title), "the title on both");
        assert!(
            text.contains(&format!("Paper {PAPER}")),
            "the paper id on both"
        );
        assert!(text.contains("Revision 1"), "the revision on both");
        for n in 1..=4 {
            assert!(
                text.contains(&format!("Total for Question {n}")),
                "question {n} on both"
            );
        }
    }
    assert!(qp_text.contains(&format!("TOTAL FOR PAPER IS {total} MARKS")));
    assert!(
        ms_text.contains("M1") || ms_text.contains("B1"),
        "mark codes"
    );
    assert!(
        ms_text.to_lowercase().contains("estimate"),
        "the grade guide says it is an estimate"
    );

    // A new revision has its own exports; revision 1's stay as they were.
    let changed = patch(
        &s,
        &key,
        PAPER,
        &json!({"revision": 1, "title": "Second version"}),
    )
    .await;
    assert_eq!(changed.status, 200);
    assert_eq!(changed.json()["paper"]["exports"]["ready"], false);
    s.get(
        &format!("/v1/papers/{PAPER}/revisions/2/exports/question-paper"),
        &key,
    )
    .await
    .assert_error(409, "exports_not_ready");
    assert_eq!(prepare(&s, &key, PAPER, 2).await.status, 200);
    let qp2 = s
        .get(
            &format!("/v1/papers/{PAPER}/revisions/2/exports/question-paper"),
            &key,
        )
        .await;
    assert_eq!(qp2.status, 200);
    assert_ne!(qp2.body, qp.body);
    assert!(
        pdf_text(&qp2.body, &format!("{tag}-r2-question-paper.pdf")).contains("Second version")
    );
    assert_eq!(
        s.get(&format!("{base}/question-paper"), &key).await.body,
        qp.body
    );

    // The same revision typeset again elsewhere gives the same bytes.
    let (fresh, _, fresh_key) = setup(db).await;
    assert_eq!(create(&fresh, &fresh_key, &body).await.status, 201);
    assert_eq!(prepare(&fresh, &fresh_key, PAPER, 1).await.status, 200);
    assert_eq!(
        fresh
            .get(&format!("{base}/question-paper"), &fresh_key)
            .await
            .body,
        qp.body
    );
    assert_eq!(
        fresh
            .get(&format!("{base}/mark-scheme"), &fresh_key)
            .await
            .body,
        ms.body
    );
    // Another account cannot download them.
    let other_user = s.user("Other").await;
    let other = s.key(&other_user, Scope::ALL).await;
    s.get(&format!("{base}/question-paper"), &other)
        .await
        .assert_error(404, "not_found");
}

async fn export_can_be_disabled(db: Db) {
    let (s, _, key) = setup_with(db, |state| {
        state.typesetter = examkit::typeset::Typesetter::new(false, 1);
    })
    .await;
    let chosen = pins(&s, &key, 1).await;
    // Papers are still saved (pages are still counted)…
    assert_eq!(
        create(
            &s,
            &key,
            &create_body(PAPER, "No PDFs here", &chosen, "smart", false)
        )
        .await
        .status,
        201
    );
    // …but not exported.
    prepare(&s, &key, PAPER, 1)
        .await
        .assert_error(503, "pdf_export_disabled");
    s.get(
        &format!("/v1/papers/{PAPER}/revisions/1/exports/mark-scheme"),
        &key,
    )
    .await
    .assert_error(503, "pdf_export_disabled");
    // A missing paper is still 404 first.
    prepare(&s, &key, OTHER, 1)
        .await
        .assert_error(404, "not_found");
}

async fn paper_count_is_limited(db: Db) {
    let (s, _, key) = setup_with(db, |state| state.max_papers = 2).await;
    let chosen = pins(&s, &key, 1).await;
    let ids = [PAPER, OTHER, "11111111-2222-4333-8444-555555555555"];
    for id in &ids[..2] {
        let body = create_body(id, "One of two", &chosen, "none", false);
        assert_eq!(create(&s, &key, &body).await.status, 201);
    }
    let third = create_body(ids[2], "One too many", &chosen, "none", false);
    let err = create(&s, &key, &third)
        .await
        .assert_error(422, "too_many_papers");
    assert!(
        err["error"]["message"]
            .as_str()
            .expect("message")
            .contains('2')
    );
    // A retry of an existing creation still answers.
    let retry = create_body(PAPER, "One of two", &chosen, "none", false);
    assert_eq!(create(&s, &key, &retry).await.status, 201);
    // Changing a paper is not creating one.
    assert_eq!(
        patch(&s, &key, PAPER, &json!({"revision": 1, "gradeGuide": true}))
            .await
            .status,
        200
    );
    assert_eq!(
        s.get("/v1/papers", &key).await.json()["papers"]
            .as_array()
            .expect("papers")
            .len(),
        2
    );
}

async fn scopes_are_required(db: Db) {
    let (s, user, key) = setup(db).await;
    let chosen = pins(&s, &key, 1).await;
    let body = create_body(PAPER, "Scoped", &chosen, "none", false);
    assert_eq!(create(&s, &key, &body).await.status, 201);
    assert_eq!(prepare(&s, &key, PAPER, 1).await.status, 200);
    let reader = s.key(&user, &[Scope::PapersRead]).await;
    let writer = s.key(&user, &[Scope::PapersWrite]).await;
    let neither: Vec<Scope> = Scope::ALL
        .iter()
        .copied()
        .filter(|s| !matches!(s, Scope::PapersRead | Scope::PapersWrite))
        .collect();
    let neither = s.key(&user, &neither).await;
    let reads = [
        "/v1/papers".to_owned(),
        format!("/v1/papers/{PAPER}"),
        format!("/v1/papers/{PAPER}/revisions/1"),
        format!("/v1/papers/{PAPER}/revisions/1/exports/question-paper"),
        format!("/v1/papers/{PAPER}/revisions/1/exports/mark-scheme"),
    ];
    for path in &reads {
        assert_eq!(s.get(path, &reader).await.status, 200, "{path}");
        for key in [&writer, &neither] {
            let err = s
                .get(path, key)
                .await
                .assert_error(403, "insufficient_scope");
            assert_eq!(
                err["error"]["requiredScopes"],
                json!(["papers:read"]),
                "{path}"
            );
        }
    }
    let mut other = body.clone();
    other["id"] = json!(OTHER);
    for key in [&reader, &neither] {
        for resp in [
            create(&s, key, &other).await,
            patch(&s, key, PAPER, &json!({"revision": 1, "title": "x"})).await,
            prepare(&s, key, PAPER, 1).await,
        ] {
            let err = resp.assert_error(403, "insufficient_scope");
            assert_eq!(err["error"]["requiredScopes"], json!(["papers:write"]));
        }
    }
    assert_eq!(create(&s, &writer, &other).await.status, 201);
    assert_eq!(prepare(&s, &writer, OTHER, 1).await.status, 200);
    s.send(Method::GET, "/v1/papers", None, &[], None)
        .await
        .assert_error(401, "missing_api_key");
    // Nothing a refused key sent was saved.
    assert_eq!(
        s.get(&format!("/v1/papers/{PAPER}"), &reader).await.json()["paper"]["revision"],
        1
    );
}

/// A saved two-question paper of the account, and its id.
async fn saved_paper(s: &Server, key: &str, id: &str) -> Value {
    let pins = pins(s, key, 2).await;
    let resp = create(
        s,
        key,
        &create_body(id, "Year 12 mock", &pins, "smart", false),
    )
    .await;
    assert_eq!(resp.status, 201, "{}", String::from_utf8_lossy(&resp.body));
    resp.json()["paper"].clone()
}

async fn class_set(s: &Server, key: &str, idem: &str, body: &Value) -> Resp {
    s.post_json(
        "/v1/class-sets",
        key,
        Some(idem),
        &serde_json::to_vec(body).expect("json"),
    )
    .await
}

/// The copy code on page `page` (1-based) of a PDF, read as a scan would be.
fn copy_code_on(pdf: &[u8], page: u32) -> examkit_pdf::CopyCode {
    let image = examkit_scan::render_page(pdf, examkit_scan::Format::Pdf, page, 150)
        .expect("the page renders");
    let codes = examkit_scan::decode_codes(&image);
    codes
        .iter()
        .find_map(|c| examkit_pdf::CopyCode::parse(&c.payload))
        .unwrap_or_else(|| panic!("page {page} carries a copy code: {codes:?}"))
}

async fn class_sets_print_named_and_numbered_copies(db: Db) {
    let (s, _, key) = setup(db).await;
    let paper = saved_paper(&s, &key, PAPER).await;
    let roster = json!({
        "paperId": PAPER.to_uppercase(),
        "revision": 1,
        "title": " 12B mock ",
        "roster": [
            {"name": "Ada Lovelace", "candidateNumber": "0417"},
            {"name": "=HYPERLINK(\"http://x\")"},
            {"name": "  Zoë O'Brien  ", "candidateNumber": null}
        ]
    });
    let missing_key = s
        .post_json(
            "/v1/class-sets",
            &key,
            None,
            &serde_json::to_vec(&roster).expect("json"),
        )
        .await;
    missing_key.assert_error(400, "idempotency_key_required");
    let made = class_set(&s, &key, "class-set-roster-1", &roster).await;
    assert_eq!(made.status, 201, "{}", String::from_utf8_lossy(&made.body));
    let view = made.json()["classSet"].clone();
    let id = view["id"].as_str().expect("id").to_owned();
    let paper_pages = view["paperPages"].as_i64().expect("paperPages");
    let per_copy = view["pagesPerCopy"].as_i64().expect("pagesPerCopy");
    assert_eq!(Some(paper_pages), paper["pages"]["questionPaper"].as_i64());
    assert_eq!(per_copy, paper_pages + paper_pages % 2);
    assert_eq!(view["paperId"], PAPER);
    assert_eq!(view["revision"], 1);
    assert_eq!(view["title"], "12B mock");
    assert_eq!(view["copies"], 3);
    assert_eq!(view["named"], true);
    assert_eq!(view["pdfPages"], 3 * per_copy);
    assert_eq!(
        view["copyList"],
        json!([
            {"copy": 1, "name": "Ada Lovelace", "candidateNumber": "0417"},
            {"copy": 2, "name": "=HYPERLINK(\"http://x\")", "candidateNumber": null},
            {"copy": 3, "name": "Zoë O'Brien", "candidateNumber": null}
        ])
    );

    // A retry with the same key is the same set, not a second one.
    let again = class_set(&s, &key, "class-set-roster-1", &roster).await;
    assert_eq!(again.status, 201);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(again.json(), made.json());

    let read = s
        .get(&format!("/v1/class-sets/{}", id.to_uppercase()), &key)
        .await;
    assert_eq!(read.status, 200);
    // A read adds the stack and the marking: nothing scanned, nothing started yet.
    let mut read = read.json();
    let stack = read["classSet"]
        .as_object_mut()
        .and_then(|set| set.remove("stack"))
        .expect("a stack");
    assert_eq!(stack["state"], "empty");
    assert_eq!(stack["pages"], json!([]));
    let marking = read["classSet"]
        .as_object_mut()
        .and_then(|set| set.remove("marking"))
        .expect("the marking");
    assert_eq!(
        marking,
        json!({"state": "notStarted", "scriptsMarked": 0, "outOfDate": [], "scripts": []})
    );
    assert_eq!(read, made.json());

    let pdf = s.get(&format!("/v1/class-sets/{id}/export"), &key).await;
    assert_eq!(pdf.status, 200);
    assert_eq!(pdf.header("content-type"), Some("application/pdf"));
    assert_eq!(pdf.header("accept-ranges"), Some("bytes"));
    assert_eq!(
        pdf.header("content-disposition").map(str::to_owned),
        Some(format!("attachment; filename=\"class-set-{id}.pdf\""))
    );
    assert_eq!(
        pdf.body.len() as i64,
        view["pdfBytes"].as_i64().expect("pdfBytes")
    );
    let name = format!("class-set-{}.pdf", db_name(db));
    assert_eq!(page_count(&pdf.body, &name) as i64, 3 * per_copy);
    let text = pdf_text(&pdf.body, &name);
    let pages: Vec<&str> = text.split('\u{c}').collect();
    let short = &id[..8];
    let run = uuid::Uuid::parse_str(&id).expect("uuid");
    for (index, student) in [
        "Ada Lovelace · Candidate 0417",
        "=HYPERLINK(\"http://x\")",
        "Zoë O'Brien",
    ]
    .iter()
    .enumerate()
    {
        let copy = index as i64 + 1;
        let first = index as i64 * per_copy + 1;
        assert_eq!(first % 2, 1, "copy {copy} starts on an odd page");
        for page in 1..=per_copy {
            let at = (first + page - 1) as usize;
            let page_text = pages[at - 1];
            assert!(page_text.contains(student), "page {at} names {student}");
            let line = if page > paper_pages {
                format!("Copy {copy:03} · blank page · {short}")
            } else {
                format!("Copy {copy:03} · page {page} of {paper_pages} · {short}")
            };
            assert!(page_text.contains(&line), "page {at} prints {line:?}");
        }
        // The code is read back from the page as a scan is.
        assert_eq!(
            copy_code_on(&pdf.body, first as u32 + 1),
            examkit_pdf::CopyCode {
                run_id: run,
                copy: copy as u32,
                page: 2
            }
        );
    }

    let part = s
        .send(
            Method::GET,
            &format!("/v1/class-sets/{id}/export"),
            Some(&key),
            &[("range", "bytes=0-99")],
            None,
        )
        .await;
    assert_eq!(part.status, 206);
    assert_eq!(part.body, pdf.body[..100]);
    assert_eq!(
        part.header("content-range").map(str::to_owned),
        Some(format!("bytes 0-99/{}", pdf.body.len()))
    );
    let past = s
        .send(
            Method::GET,
            &format!("/v1/class-sets/{id}/export"),
            Some(&key),
            &[("range", &format!("bytes={}-", pdf.body.len()))],
            None,
        )
        .await;
    past.assert_error(416, "range_not_satisfiable");

    // The set's extra answer sheet carries the run's extra-sheet code.
    let extra = s
        .get(&format!("/v1/class-sets/{id}/extra-sheet"), &key)
        .await;
    assert_eq!(extra.status, 200);
    assert_eq!(extra.header("content-type"), Some("application/pdf"));
    assert_eq!(
        page_count(&extra.body, &format!("extra-{}.pdf", db_name(db))),
        1
    );
    let image = examkit_scan::render_page(&extra.body, examkit_scan::Format::Pdf, 1, 150)
        .expect("the sheet renders");
    let codes: Vec<_> = examkit_scan::decode_codes(&image)
        .iter()
        .filter_map(|c| examkit_pdf::ExtraSheetCode::parse(&c.payload))
        .collect();
    assert_eq!(codes, [examkit_pdf::ExtraSheetCode { run_id: run }]);
    assert!(pdf_text(&extra.body, &format!("extra-{}.pdf", db_name(db))).contains("12B mock"));

    let numbered = class_set(
        &s,
        &key,
        "class-set-numbered-1",
        &json!({"paperId": PAPER, "revision": 1, "copies": 2}),
    )
    .await;
    assert_eq!(numbered.status, 201);
    let numbered = numbered.json()["classSet"].clone();
    assert_eq!(numbered["named"], false);
    assert_eq!(
        numbered["title"], "Year 12 mock",
        "the paper's title by default"
    );
    assert_eq!(
        numbered["copyList"],
        json!([
            {"copy": 1, "name": null, "candidateNumber": null},
            {"copy": 2, "name": null, "candidateNumber": null}
        ])
    );
    let list = s.get("/v1/class-sets", &key).await;
    assert_eq!(list.status, 200);
    let ids: Vec<&str> = list.json()["classSets"]
        .as_array()
        .expect("classSets")
        .iter()
        .map(|v| v["id"].as_str().expect("id"))
        .collect::<Vec<_>>()
        .into_iter()
        .map(|s| if s == id { "roster" } else { "numbered" })
        .collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.contains(&"roster") && ids.contains(&"numbered"));
}

fn db_name(db: Db) -> &'static str {
    match db {
        Db::Sqlite => "sqlite",
        Db::Postgres => "postgres",
    }
}

async fn class_set_bodies_scopes_and_other_accounts(db: Db) {
    let (s, _, key) = setup(db).await;
    saved_paper(&s, &key, PAPER).await;
    let cases = [
        (
            json!({}),
            vec![
                pair("/paperId", "required"),
                pair("/revision", "required"),
                pair("/copies", "required"),
            ],
        ),
        (
            json!({"paperId": PAPER, "revision": 1, "copies": 2, "roster": [{"name": "A"}]}),
            vec![pair("/roster", "conflict")],
        ),
        (
            json!({"paperId": PAPER, "revision": 1, "copies": 301}),
            vec![pair("/copies", "maximum")],
        ),
        (
            json!({"paperId": PAPER, "revision": 1, "copies": 0}),
            vec![pair("/copies", "minimum")],
        ),
        (
            json!({"paperId": "x", "revision": 0, "copies": 1, "seat": 1}),
            vec![
                pair("/seat", "unknown_field"),
                pair("/paperId", "format"),
                pair("/revision", "minimum"),
            ],
        ),
        (
            json!({"paperId": PAPER, "revision": 1, "roster": [
                {"name": "x".repeat(121)},
                {"name": "Line\nbreak"},
                {"name": " "},
                {"name": "A", "candidateNumber": "7"},
                {"name": "B", "candidateNumber": "7"}
            ]}),
            vec![
                pair("/roster/0/name", "max_length"),
                pair("/roster/1/name", "control_character"),
                pair("/roster/2/name", "blank"),
                pair("/roster/4/candidateNumber", "duplicate_candidate_number"),
            ],
        ),
    ];
    for (i, (body, expected)) in cases.iter().enumerate() {
        let resp = class_set(&s, &key, &format!("class-set-bad-{i}"), body).await;
        let error = resp.assert_error(422, "invalid_fields");
        assert_eq!(&field_codes(&error), expected, "{body}");
    }
    class_set(&s, &key, "class-set-array", &json!([1]))
        .await
        .assert_error(400, "invalid_body");
    s.post_json("/v1/class-sets", &key, Some("class-set-bad-json"), b"{")
        .await
        .assert_error(400, "invalid_json");
    s.send(
        Method::POST,
        "/v1/class-sets",
        Some(&key),
        &[
            ("content-type", "text/plain"),
            ("idempotency-key", "class-set-text"),
        ],
        Some(b"{}".to_vec()),
    )
    .await
    .assert_error(415, "unsupported_media_type");
    let huge = vec![b' '; 256 * 1024 + 1];
    s.post_json("/v1/class-sets", &key, Some("class-set-huge"), &huge)
        .await
        .assert_error(413, "payload_too_large");
    class_set(
        &s,
        &key,
        "class-set-no-paper",
        &json!({"paperId": OTHER, "revision": 1, "copies": 1}),
    )
    .await
    .assert_error(404, "not_found");
    class_set(
        &s,
        &key,
        "class-set-no-revision",
        &json!({"paperId": PAPER, "revision": 9, "copies": 1}),
    )
    .await
    .assert_error(404, "not_found");
    // Nothing was made by any refused request.
    assert_eq!(
        s.get("/v1/class-sets", &key).await.json()["classSets"],
        json!([])
    );

    let made = class_set(
        &s,
        &key,
        "class-set-good",
        &json!({"paperId": PAPER, "revision": 1, "copies": 1}),
    )
    .await;
    assert_eq!(made.status, 201);
    let id = made.json()["classSet"]["id"]
        .as_str()
        .expect("id")
        .to_owned();

    // Another account's real ids are not found, and its list is its own.
    let other = s.user("Another teacher").await;
    let other_key = s.key(&other, Scope::ALL).await;
    saved_paper(&s, &other_key, OTHER).await;
    s.get(&format!("/v1/class-sets/{id}"), &other_key)
        .await
        .assert_error(404, "not_found");
    s.get(&format!("/v1/class-sets/{id}/export"), &other_key)
        .await
        .assert_error(404, "not_found");
    s.get(&format!("/v1/class-sets/{id}/extra-sheet"), &other_key)
        .await
        .assert_error(404, "not_found");
    assert_eq!(
        s.get("/v1/class-sets", &other_key).await.json()["classSets"],
        json!([])
    );
    class_set(
        &s,
        &other_key,
        "class-set-theirs",
        &json!({"paperId": PAPER, "revision": 1, "copies": 1}),
    )
    .await
    .assert_error(404, "not_found");
    class_set(
        &s,
        &key,
        "class-set-mine",
        &json!({"paperId": OTHER, "revision": 1, "copies": 1}),
    )
    .await
    .assert_error(404, "not_found");
    s.get("/v1/class-sets/not-a-uuid", &key)
        .await
        .assert_error(404, "not_found");

    // Scopes: making needs marking:submit and papers:read; reading needs marking:read.
    let owner = s.user("Scoped teacher").await;
    let reader = s.key(&owner, &[Scope::MarkingRead]).await;
    let maker = s.key(&owner, &[Scope::MarkingSubmit]).await;
    class_set(
        &s,
        &reader,
        "class-set-reader",
        &json!({"paperId": PAPER, "revision": 1, "copies": 1}),
    )
    .await
    .assert_error(403, "insufficient_scope");
    class_set(
        &s,
        &maker,
        "class-set-maker",
        &json!({"paperId": PAPER, "revision": 1, "copies": 1}),
    )
    .await
    .assert_error(403, "insufficient_scope");
    s.get("/v1/class-sets", &maker)
        .await
        .assert_error(403, "insufficient_scope");
    assert_eq!(s.get("/v1/class-sets", &reader).await.status, 200);
}
