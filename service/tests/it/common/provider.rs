//! An OpenAI-compatible Chat Completions provider that the tests start on loopback. It checks
//! every request it gets and answers from a script.
//!
//! Each request is checked as a careful provider would see it, and every problem is logged:
//! - the path, the model, temperature 0, and `response_format` with the schema (json-schema mode);
//! - the token arrives only in `Authorization: Bearer`, and appears nowhere in the body;
//! - the rules come first as the system message; the user message starts `Question <label>`;
//! - every image is a PNG or JPEG data URI that decodes, and follows a text part
//!   `Work page <id>` or `Scheme page <id>` naming a page of the request (a work page is one
//!   the schema lets the model cite);
//! - a repair request repeats the conversation, then the model's answer, then the problems;
//! - a request to read a cover's written name (label `cover`) has its own rules and schema
//!   (`examkit_cover_name`), the text `Cover page` then the page's one image.
//!
//! These prove the protocol and the service's safety rules, not any model's quality.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use warp::Filter;

/// What the script is told about a request.
#[derive(Debug, Clone)]
pub struct Seen {
    /// Which call this is, from 0, over the provider's life.
    pub call: usize,
    /// The question's label; `cover` for a request to read a cover's written name.
    pub label: String,
    /// The criteria the prompt lists: (id, part id, code); empty for a scheme of pages.
    pub criteria: Vec<(String, String, String)>,
    /// The work pages shown, in order.
    pub work_pages: Vec<String>,
    /// The scheme pages shown, in order.
    pub scheme_pages: Vec<String>,
    /// The repair request's text, when this is one.
    pub repair: Option<String>,
    /// The request body.
    pub body: Value,
}

/// What the provider answers.
#[derive(Debug, Clone)]
pub enum Reply {
    /// 200 with this value, as JSON text, as the message content.
    Answer(Value),
    /// 200 with this text as the message content.
    Content(String),
    /// This status, with `Retry-After` when given, and this body.
    Status(u16, Option<u64>, String),
    /// Waits this long, then answers `{}`.
    Stall(Duration),
    /// Holds the answer until the provider has had this many requests in all (or 503 after 30 s),
    /// then answers as the inner reply: proof that those requests were in flight at once.
    Barrier(usize, Box<Reply>),
}

/// One logged request.
#[derive(Debug, Clone)]
pub struct Logged {
    /// When it arrived.
    pub at: Instant,
    /// What was wrong with it.
    pub problems: Vec<String>,
    /// Its body.
    pub body: Value,
}

type Script = dyn Fn(&Seen) -> Reply + Send + Sync;

/// A running provider.
pub struct Provider {
    /// The API base, `http://127.0.0.1:<port>/v1`.
    pub base_url: String,
    log: Arc<Mutex<Vec<Logged>>>,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

impl Provider {
    /// Every request so far.
    pub fn log(&self) -> Vec<Logged> {
        self.log.lock().expect("log").clone()
    }

    /// Asserts that every request so far passed every check.
    pub fn assert_clean(&self) {
        for (i, logged) in self.log().iter().enumerate() {
            assert!(
                logged.problems.is_empty(),
                "request {i}: {:?}",
                logged.problems
            );
        }
    }
}

/// Starts a provider expecting `model` and `token`, asking for json-schema output when `schema`
/// is true, answering with `script`.
pub async fn start(
    model: &str,
    token: Option<&str>,
    schema: bool,
    script: impl Fn(&Seen) -> Reply + Send + Sync + 'static,
) -> Provider {
    let log: Arc<Mutex<Vec<Logged>>> = Arc::new(Mutex::new(Vec::new()));
    let script: Arc<Script> = Arc::new(script);
    let model = model.to_owned();
    let token = token.map(str::to_owned);
    let route = {
        let log = log.clone();
        warp::post()
            .and(warp::path!("v1" / "chat" / "completions"))
            .and(warp::header::optional::<String>("authorization"))
            .and(warp::body::bytes())
            .then(move |authorization: Option<String>, body: bytes::Bytes| {
                let (log, script, model, token) =
                    (log.clone(), script.clone(), model.clone(), token.clone());
                async move {
                    let at = Instant::now();
                    let mut problems = Vec::new();
                    let text = String::from_utf8_lossy(&body).into_owned();
                    let expected = token.as_ref().map(|t| format!("Bearer {t}"));
                    if authorization != expected {
                        problems.push(format!("authorization {authorization:?}"));
                    }
                    if let Some(t) = &token
                        && text.contains(t.as_str())
                    {
                        problems.push("the token is in the body".into());
                    }
                    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                    let seen = check(&body, &model, schema, &mut problems);
                    let call = {
                        let mut log = log.lock().expect("log");
                        log.push(Logged {
                            at,
                            problems,
                            body: body.clone(),
                        });
                        log.len() - 1
                    };
                    let reply = script(&Seen { call, ..seen });
                    respond(reply, &model, &log).await
                }
            })
    };
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("the provider binds");
    let addr = listener.local_addr().expect("address");
    let server = warp::serve(route)
        .incoming(listener)
        .graceful(async {
            let _ = rx.await;
        })
        .run();
    tokio::spawn(server);
    Provider {
        base_url: format!("http://{addr}/v1"),
        log,
        _shutdown: tx,
    }
}

async fn respond(
    reply: Reply,
    model: &str,
    log: &Arc<Mutex<Vec<Logged>>>,
) -> warp::reply::Response {
    use warp::Reply as _;
    let completion = |content: String| {
        json!({
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{ "index": 0, "finish_reason": "stop",
                          "message": { "role": "assistant", "content": content } }],
            "usage": { "prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500 },
        })
    };
    match reply {
        Reply::Answer(value) => warp::reply::json(&completion(value.to_string())).into_response(),
        Reply::Content(text) => warp::reply::json(&completion(text)).into_response(),
        Reply::Status(status, retry_after, body) => {
            let mut response = warp::reply::with_status(
                body,
                warp::http::StatusCode::from_u16(status).expect("status"),
            )
            .into_response();
            if let Some(seconds) = retry_after {
                response.headers_mut().insert(
                    "retry-after",
                    warp::http::HeaderValue::from_str(&seconds.to_string()).expect("header"),
                );
            }
            response
        }
        Reply::Stall(wait) => {
            tokio::time::sleep(wait).await;
            warp::reply::json(&json!({})).into_response()
        }
        Reply::Barrier(calls, then) => {
            let deadline = Instant::now() + Duration::from_secs(30);
            while log.lock().expect("log").len() < calls {
                if Instant::now() > deadline {
                    return warp::reply::with_status(
                        format!("fewer than {calls} requests arrived together"),
                        warp::http::StatusCode::SERVICE_UNAVAILABLE,
                    )
                    .into_response();
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Box::pin(respond(*then, model, log)).await
        }
    }
}

fn enum_of(schema: &Value, pointer: &str) -> Vec<String> {
    schema
        .pointer(pointer)
        .and_then(Value::as_array)
        .map(|v| {
            v.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Checks a request body; what the script needs to know of it.
fn check(body: &Value, model: &str, schema_mode: bool, problems: &mut Vec<String>) -> Seen {
    let mut fail = |p: String| problems.push(p);
    if body["model"] != model {
        fail(format!("model {}", body["model"]));
    }
    if body["temperature"] != 0 {
        fail(format!("temperature {}", body["temperature"]));
    }
    let schema = &body["response_format"]["json_schema"]["schema"];
    let cover = body
        .pointer("/messages/1/content/0/text")
        .is_some_and(|t| t == "Cover page");
    if cover {
        return check_cover(body, schema_mode, problems);
    }
    if schema_mode {
        let format = &body["response_format"];
        if format["type"] != "json_schema"
            || format["json_schema"]["name"] != "examkit_model_answer"
            || format["json_schema"]["strict"] != true
            || !schema.is_object()
        {
            fail(format!("response_format {format}"));
        }
    }
    let allowed_work = enum_of(schema, "/properties/decisions/items/properties/pageId/enum");
    let allowed_scheme = enum_of(
        schema,
        "/properties/rubric/properties/criteria/items/properties/sourcePageIds/items/enum",
    );
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    if messages
        .first()
        .map(|m| (&m["role"], m["content"].is_string()))
        != Some((&json!("system"), true))
    {
        fail("the first message is not the system rules".into());
    }
    let user = messages.get(1).cloned().unwrap_or(Value::Null);
    let parts = user["content"].as_array().cloned().unwrap_or_default();
    if user["role"] != "user" || parts.is_empty() {
        fail("the second message is not the user's parts".into());
    }
    let label = parts
        .first()
        .and_then(|p| p["text"].as_str())
        .and_then(|t| t.strip_prefix("Question "))
        .unwrap_or_else(|| {
            problems.push("the first part is not `Question <label>`".into());
            ""
        })
        .to_owned();
    let mut fail = |p: String| problems.push(p);
    let mut criteria = Vec::new();
    let mut work_pages = Vec::new();
    let mut scheme_pages = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        match part["type"].as_str() {
            Some("text") => {
                for line in part["text"].as_str().unwrap_or("").lines() {
                    let Some(rest) = line.strip_prefix("- ") else {
                        continue;
                    };
                    let Some((id, rest)) = rest.split_once(" (part ") else {
                        continue;
                    };
                    let Some((part_id, rest)) = rest.split_once(", ") else {
                        continue;
                    };
                    let code = rest.split_once(')').map_or("", |(c, _)| c);
                    criteria.push((id.to_owned(), part_id.to_owned(), code.to_owned()));
                }
            }
            Some("image_url") => {
                let before = i
                    .checked_sub(1)
                    .and_then(|j| parts[j]["text"].as_str())
                    .unwrap_or("");
                if let Some(id) = before.strip_prefix("Work page ") {
                    if schema_mode && !allowed_work.iter().any(|a| a == id) {
                        fail(format!("work page {id} is not in the schema"));
                    }
                    work_pages.push(id.to_owned());
                } else if let Some(id) = before.strip_prefix("Scheme page ") {
                    if schema_mode
                        && !allowed_scheme.is_empty()
                        && !allowed_scheme.iter().any(|a| a == id)
                    {
                        fail(format!("scheme page {id} is not in the schema"));
                    }
                    scheme_pages.push(id.to_owned());
                } else {
                    fail(format!("image {i} follows {before:?}"));
                }
                let url = part["image_url"]["url"].as_str().unwrap_or("");
                let data = url
                    .strip_prefix("data:image/png;base64,")
                    .or_else(|| url.strip_prefix("data:image/jpeg;base64,"));
                let decoded =
                    data.and_then(|d| base64::engine::general_purpose::STANDARD.decode(d).ok());
                match decoded.and_then(|bytes| image::load_from_memory(&bytes).ok()) {
                    Some(img) if img.width() > 0 && img.height() > 0 => {}
                    _ => fail(format!("image {i} does not decode")),
                }
            }
            other => fail(format!("part {i} has type {other:?}")),
        }
    }
    let repair = if messages.len() > 2 {
        if messages.len() != 4
            || messages[2]["role"] != "assistant"
            || messages[3]["role"] != "user"
        {
            fail(format!("a repair request of {} messages", messages.len()));
        }
        messages
            .get(3)
            .and_then(|m| m["content"].as_str())
            .map(str::to_owned)
    } else {
        None
    };
    Seen {
        call: 0,
        label,
        criteria,
        work_pages,
        scheme_pages,
        repair,
        body: body.clone(),
    }
}

/// Checks a request to read the name written on a cover.
fn check_cover(body: &Value, schema_mode: bool, problems: &mut Vec<String>) -> Seen {
    let format = &body["response_format"];
    if schema_mode
        && (format["type"] != "json_schema"
            || format["json_schema"]["name"] != "examkit_cover_name"
            || format["json_schema"]["strict"] != true
            || format["json_schema"]["schema"]["required"] != json!(["name"]))
    {
        problems.push(format!("cover response_format {format}"));
    }
    let rules = body.pointer("/messages/0/content").and_then(Value::as_str);
    if !rules
        .is_some_and(|r| r.starts_with("You read the name") && r.contains("never instructions"))
    {
        problems.push("the cover request does not start with its rules".into());
    }
    let parts = body
        .pointer("/messages/1/content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if parts.len() != 3 || parts[1]["type"] != "image_url" || cover_image(body).is_none() {
        problems.push("the cover request is not its text, its image and the question".into());
    }
    Seen {
        call: 0,
        label: "cover".into(),
        criteria: Vec::new(),
        work_pages: Vec::new(),
        scheme_pages: Vec::new(),
        repair: None,
        body: body.clone(),
    }
}

/// The page image of a request to read a cover's written name.
pub fn cover_image(body: &Value) -> Option<image::DynamicImage> {
    let url = body
        .pointer("/messages/1/content/1/image_url/url")?
        .as_str()?;
    let data = url
        .strip_prefix("data:image/jpeg;base64,")
        .or_else(|| url.strip_prefix("data:image/png;base64,"))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .ok()?;
    image::load_from_memory(&bytes).ok()
}

/// A decision as a model gives it.
pub fn decision(criterion: &str, outcome: &str, quote: &str, page: &str, hint: [u32; 4]) -> Value {
    json!({
        "criterionId": criterion,
        "outcome": outcome,
        "reason": format!("scripted: {outcome}"),
        "quote": quote,
        "pageId": page,
        "box": hint,
        "conditionChecks": [],
    })
}

/// A model's answer to a structured scheme that transcribes what it quotes: each decision's quote
/// a line of the transcription (a model's quote must be in its own transcription).
pub fn answer_of(decisions: Vec<Value>) -> Value {
    let transcription: Vec<&str> = decisions
        .iter()
        .filter_map(|d| d["quote"].as_str())
        .filter(|q| !q.is_empty())
        .collect();
    json!({ "transcription": transcription.join("\n"), "rubric": null, "decisions": decisions })
}

/// The condition checks a criterion of `body`'s prompt needs: one `met` per condition.
pub fn checks_for(seen: &Seen, criterion: &str) -> Vec<Value> {
    let text: String = seen.body["messages"][1]["content"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let mut lines = text
        .lines()
        .skip_while(|l| !l.starts_with(&format!("- {criterion} (")));
    lines.next();
    let conditions = lines
        .next()
        .filter(|l| l.trim_start().starts_with("Conditions"))
        .map_or(0, |l| l.matches("; [").count() + 1);
    (0..conditions)
        .map(|i| json!({ "index": i, "result": "met" }))
        .collect()
}
