//! Request bodies of the wrong JSON type, on every route that takes a JSON body: an array, a
//! string, a number or `null` where an object is expected, at the top and in nested objects, is
//! refused with the documented error (`invalid_body`, or `invalid_parameters` with field errors)
//! in the error shape, and creates or changes nothing.
//! (serde's derived structs read a JSON array as a struct field by field, so `["My title"]` once
//! created an import.)

use crate::common;

use common::marking::{idem, text};
use common::{Db, Resp, Server, generous, start_with};
use examkit::auth::Scope;
use reqwest::Method;
use serde_json::{Value, json};

/// The wrong top-level values.
const NOT_OBJECTS: [&str; 6] = [
    r#"["My title"]"#,
    "[]",
    r#""My title""#,
    "42",
    "null",
    "true",
];

/// The wrong values for a nested object.
fn not_objects() -> Vec<Value> {
    vec![json!(["x"]), json!([]), json!("x"), json!(7), Value::Null]
}

async fn send(s: &Server, key: &str, method: Method, path: &str, body: &str) -> Resp {
    let idem = idem();
    s.send(
        method,
        path,
        Some(key),
        &[
            ("content-type", "application/json"),
            ("idempotency-key", &idem),
        ],
        Some(body.as_bytes().to_vec()),
    )
    .await
}

/// Asserts the refusal with the error shape: `invalid_body` (400) for bodies read into a request
/// type; `invalid_fields` or `invalid_parameters` (422, with field errors) for bodies checked
/// field by field; `validation_failed` (422, with the engine's errors) for a reviewed question.
fn refused(resp: &Resp, what: &str) {
    let body = resp.json();
    let code = body["error"]["code"].as_str().unwrap_or_default();
    match code {
        "invalid_body" => assert_eq!(resp.status, 400, "{what}: {body}"),
        "invalid_fields" => assert_eq!(resp.status, 422, "{what}: {body}"),
        "invalid_parameters" | "validation_failed" => {
            assert_eq!(resp.status, 422, "{what}: {body}");
            assert!(
                body["error"]["details"]["errors"]
                    .as_array()
                    .is_some_and(|e| !e.is_empty()),
                "{what}: {body}"
            );
        }
        _ => panic!("{what}: {} {body}", resp.status),
    }
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{what}: {body}"
    );
    assert!(body["requestId"].is_string(), "{what}: {body}");
}

async fn counts(s: &Server) -> (i64, i64) {
    let sessions: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM marking_sessions")
        .fetch_one(s.store.pool())
        .await
        .expect("count sessions");
    let papers: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM papers")
        .fetch_one(s.store.pool())
        .await
        .expect("count papers");
    (sessions, papers)
}

async fn bodies_of_the_wrong_json_type_are_refused(db: Db) {
    let s = start_with(db, generous(), |_| {}).await;
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Bodies").await;
    let key = s.key(&user, Scope::ALL).await;

    // What the routes need: a saved paper, a completed import with a question, an automated
    // session with a work and a scheme asset.
    let resp = s.get("/v1/questions?limit=1", &key).await;
    let pin = resp.json()["items"][0]["pin"].clone();
    let paper = uuid::Uuid::new_v4().to_string();
    let create_paper = json!({ "id": paper, "title": "Paper", "questions": [pin], "writingSpace": "smart", "gradeGuide": false });
    let resp = send(
        &s,
        &key,
        Method::POST,
        "/v1/papers",
        &create_paper.to_string(),
    )
    .await;
    assert_eq!(resp.status, 201, "{}", text(&resp));
    let (import, submission, _, _) = s.import_with_example(&key).await;
    let resp = send(
        &s,
        &key,
        Method::POST,
        &format!("/v1/marking/imports/{import}/complete"),
        &submission,
    )
    .await;
    assert_eq!(resp.status, 200, "{}", text(&resp));
    let question = resp.json()["session"]["questions"][0].clone();
    let question_id = question["id"].as_str().expect("question id").to_owned();
    let resp = send(
        &s,
        &key,
        Method::POST,
        "/v1/marking/sessions",
        r#"{"title":"Auto"}"#,
    )
    .await;
    assert_eq!(resp.status, 201, "{}", text(&resp));
    let session = resp.json()["session"]["id"]
        .as_str()
        .expect("id")
        .to_owned();

    // Every JSON-body route, refusing every top-level value that is not an object.
    let routes: Vec<(Method, String)> = vec![
        (Method::POST, "/v1/marking/imports".into()),
        (Method::POST, "/v1/marking/sessions".into()),
        (Method::POST, "/v1/marking/sessions/from-builder".into()),
        (
            Method::POST,
            format!("/v1/marking/sessions/{session}/questions"),
        ),
        (
            Method::PATCH,
            format!("/v1/marking/questions/{question_id}"),
        ),
        (Method::POST, "/v1/papers".into()),
        (Method::PATCH, format!("/v1/papers/{paper}")),
        (
            Method::POST,
            format!("/v1/papers/{paper}/revisions/1/exports"),
        ),
    ];
    let before = counts(&s).await;
    for (method, path) in &routes {
        for body in NOT_OBJECTS {
            let resp = send(&s, &key, method.clone(), path, body).await;
            refused(&resp, &format!("{method} {path} {body}"));
        }
    }

    // Nested objects of the wrong type.
    let revision = question["revision"].as_i64().expect("revision");
    let criterion = question["allocations"][0]["criterionId"].clone();
    for wrong in not_objects() {
        let nested: Vec<(Method, String, Value)> = vec![
            (
                Method::PATCH,
                format!("/v1/marking/questions/{question_id}"),
                json!({ "revision": revision, "decisions": [wrong.clone()] }),
            ),
            (
                Method::PATCH,
                format!("/v1/marking/questions/{question_id}"),
                json!({ "revision": revision, "decisions": [{
                    "criterionId": criterion, "outcome": "withheld", "reason": "checked",
                    "evidence": [wrong.clone()], "conditionChecks": [] }] }),
            ),
            (
                Method::PATCH,
                format!("/v1/marking/questions/{question_id}"),
                json!({ "revision": revision, "decisions": [{
                    "criterionId": criterion, "outcome": "withheld", "reason": "checked",
                    "evidence": [{ "pageId": "x", "quote": "q", "box": wrong.clone() }],
                    "conditionChecks": [] }] }),
            ),
            (
                Method::POST,
                "/v1/papers".into(),
                json!({ "id": uuid::Uuid::new_v4(), "title": "Paper", "questions": [wrong.clone()], "writingSpace": "smart", "gradeGuide": false }),
            ),
            (
                Method::PATCH,
                format!("/v1/papers/{paper}"),
                json!({ "revision": 1, "questions": [wrong.clone()] }),
            ),
        ];
        for (method, path, body) in nested {
            let resp = send(&s, &key, method.clone(), &path, &body.to_string()).await;
            refused(&resp, &format!("{method} {path} {body}"));
        }
    }
    assert_eq!(counts(&s).await, before, "nothing was created");
    // The question is unchanged.
    let resp = s.get(&format!("/v1/marking/sessions/{import}"), &key).await;
    let now = resp.json()["session"]["questions"][0].clone();
    assert_eq!(now["revision"], revision, "{now}");
}

/// JSON Schema reads `1.0` as the integer 1, and so does the service; titles with control
/// characters, or of only spaces, are refused on every route that takes one.
async fn integers_and_titles_read_as_the_schemas_say(db: Db) {
    let s = start_with(db, generous(), |_| {}).await;
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Integers").await;
    let key = s.key(&user, Scope::ALL).await;
    let resp = s.get("/v1/questions?limit=1", &key).await;
    let pin = resp.json()["items"][0]["pin"].clone();
    let paper = uuid::Uuid::new_v4().to_string();
    let body = json!({ "id": paper, "title": "Paper", "questions": [pin], "writingSpace": "smart", "gradeGuide": false });
    let resp = send(&s, &key, Method::POST, "/v1/papers", &body.to_string()).await;
    assert_eq!(resp.status, 201, "{}", text(&resp));
    let resp = send(
        &s,
        &key,
        Method::POST,
        "/v1/marking/sessions/from-builder",
        &format!(r#"{{"paperId":"{paper}","revision":1.0}}"#),
    )
    .await;
    assert_eq!(resp.status, 201, "{}", text(&resp));
    let resp = send(
        &s,
        &key,
        Method::POST,
        "/v1/marking/sessions/from-builder",
        &format!(r#"{{"paperId":"{paper}","revision":1.5}}"#),
    )
    .await;
    refused(&resp, "a revision of 1.5");
    for path in ["/v1/marking/imports", "/v1/marking/sessions"] {
        for title in [r"a\u0005b", r"\n", "   ", "", &"x".repeat(201)] {
            let resp = send(
                &s,
                &key,
                Method::POST,
                path,
                &format!(r#"{{"title":"{title}"}}"#),
            )
            .await;
            refused(&resp, &format!("{path} {title:?}"));
        }
        let resp = send(
            &s,
            &key,
            Method::POST,
            path,
            r#"{"title":"  Mock paper  "}"#,
        )
        .await;
        assert_eq!(resp.status, 201, "{}", text(&resp));
        assert_eq!(resp.json()["session"]["title"], "Mock paper");
    }
    // GET on the POST-only route is 405 with Allow, not a session looked up.
    let resp = s.get("/v1/marking/sessions/from-builder", &key).await;
    resp.assert_error(405, "method_not_allowed");
    assert_eq!(resp.header("allow"), Some("POST"));
}

on_both!(
    bodies_of_the_wrong_json_type_are_refused,
    integers_and_titles_read_as_the_schemas_say
);
