//! Helpers for the automated-marking tests: saved and exported papers, scans made with the
//! bundled scan maker, sessions from a paper, uploads, `start`, polling, and box geometry.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use examkit::marking::MarkingConfig;
use reqwest::Method;
use serde_json::{Value, json};

use super::{Resp, Server};

/// The response body as text, for assertion messages.
pub fn text(resp: &Resp) -> String {
    String::from_utf8_lossy(&resp.body).into_owned()
}

/// A fresh idempotency key.
pub fn idem() -> String {
    format!("idem-{}", uuid::Uuid::new_v4().simple())
}

/// Short polls, leases and backoffs, so tests do not wait on production timings.
pub fn fast(config: &mut MarkingConfig) {
    config.poll = Duration::from_millis(100);
    config.backoff = Duration::from_millis(100);
    config.lease = Duration::from_secs(10);
}

/// Workers over the server's store with fast timings, adjusted by `adjust`.
pub fn workers(
    s: &Server,
    adjust: impl FnOnce(&mut MarkingConfig),
) -> examkit::marking::worker::Workers {
    let mut config = MarkingConfig {
        pages: super::pages(),
        ..MarkingConfig::default()
    };
    fast(&mut config);
    adjust(&mut config);
    examkit::marking::launch::spawn(s.store.clone(), config).expect("workers start")
}

/// A JSON POST without an idempotency key.
pub async fn json_post(s: &Server, key: &str, path: &str, body: &Value) -> Resp {
    s.send(
        Method::POST,
        path,
        Some(key),
        &[("content-type", "application/json")],
        Some(body.to_string().into_bytes()),
    )
    .await
}

/// An exported paper: its id, the layout its export recorded, and both PDFs.
pub struct Exported {
    /// The paper's id.
    pub id: String,
    /// The layout of revision 1's question paper.
    pub layout: Value,
    /// The question-paper PDF.
    pub question_paper: Vec<u8>,
    /// The mark-scheme PDF.
    pub mark_scheme: Vec<u8>,
}

/// Saves a paper of the given sample-bank questions (revision 1 of each), exports it and fetches
/// both PDFs.
pub async fn exported_paper(s: &Server, key: &str, questions: &[&str]) -> Exported {
    exported_paper_with_id(s, key, questions, &uuid::Uuid::new_v4().to_string()).await
}

/// [`exported_paper`] under a chosen id. The id is printed in every page's QR code, so a test
/// whose outcome rests on OCR of a scan fixes it: the same pixels every run.
pub async fn exported_paper_with_id(
    s: &Server,
    key: &str,
    questions: &[&str],
    id: &str,
) -> Exported {
    let id = id.to_owned();
    let mut pins = Vec::new();
    for q in questions {
        let resp = s.get(&format!("/v1/questions/{q}/revisions/1"), key).await;
        assert_eq!(resp.status, 200, "{}", text(&resp));
        pins.push(resp.json()["question"]["pin"].clone());
    }
    let body = json!({ "id": id, "title": "Mock paper", "questions": pins, "writingSpace": "smart", "gradeGuide": false });
    let resp = json_post(s, key, "/v1/papers", &body).await;
    assert_eq!(resp.status, 201, "{}", text(&resp));
    let resp = json_post(
        s,
        key,
        &format!("/v1/papers/{id}/revisions/1/exports"),
        &json!({}),
    )
    .await;
    assert_eq!(resp.status, 200, "{}", text(&resp));
    let layout = resp.json()["layout"].clone();
    let pdf = |kind: &'static str| {
        let path = format!("/v1/papers/{id}/revisions/1/exports/{kind}");
        async move {
            let resp = s.get(&path, key).await;
            assert_eq!(resp.status, 200, "{}", text(&resp));
            resp.body
        }
    };
    let question_paper = pdf("question-paper").await;
    let mark_scheme = pdf("mark-scheme").await;
    Exported {
        id,
        layout,
        question_paper,
        mark_scheme,
    }
}

/// Three sample-bank questions making a 4-page paper: answered by [`sample_answers`] in part.
pub const SAMPLE_QUESTIONS: [&str; 3] = [
    "8a834eff-5ac7-5e3d-902e-0c7342b819d4",
    "24edba06-39ce-5306-9e48-2c6afec357a4",
    "6c2fd79f-8d1f-50f9-87cb-aa6638109d53",
];

/// What a student writes on the paper of [`SAMPLE_QUESTIONS`], by question and part: in the
/// first question (a) right, (b) left blank, (c) a wrong final answer; in the second, a sign
/// change and Newton-Raphson iterations; the third question is left blank.
pub fn sample_answers() -> Value {
    json!({
        "8a834eff-5ac7-5e3d-902e-0c7342b819d4": {
            "a": "g(3) = 4/(3 - 1) = 2\nfg(3) = 2(2) + 3 = 7",
            "c": "x^2 - 4x - 5 = 0\nx = 9"
        },
        "24edba06-39ce-5306-9e48-2c6afec357a4": {
            "a": "f(1) = -5 < 0\nf(2) = 3 > 0\nsign change so there is a root",
            "b": "x1 = 1.7692\nx2 = 1.7397"
        },
    })
}

/// A neat student's hand: Debian's `fonts-comic-neue`, hand lettering Tesseract can read. (The
/// cursive `fonts-dkg-handwriting` hand, the scan maker's default, is mostly misread by OCR.)
pub const NEAT_HAND: &str = "/usr/share/fonts/opentype/comic-neue/ComicNeue-Regular.otf";

/// Makes a completed scan of `paper` with the bundled scan maker: `answers` written into its
/// answer spaces, then `options` (format, rotations, skew, noise, …). Returns each file written,
/// by name, in page order (one PDF, or one image per page).
pub fn scan(paper: &Exported, answers: &Value, options: &[&str]) -> Vec<(String, Vec<u8>)> {
    let dir = tempfile::tempdir().expect("dir");
    let write = |name: &str, bytes: &[u8]| -> String {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        path.to_string_lossy().into_owned()
    };
    let paper_pdf = write("paper.pdf", &paper.question_paper);
    let layout = write("layout.json", paper.layout.to_string().as_bytes());
    let answers = write("answers.json", answers.to_string().as_bytes());
    let format = options
        .windows(2)
        .find(|w| w[0] == "--format")
        .map_or("pdf", |w| w[1]);
    let out = dir
        .path()
        .join(format!("scan.{format}"))
        .to_string_lossy()
        .into_owned();
    let font = std::env::var("EXAMKIT_TEST_FONT").unwrap_or_else(|_| NEAT_HAND.to_owned());
    let mut args = vec![
        "--paper",
        &paper_pdf,
        "--layout",
        &layout,
        "--answers",
        &answers,
        "--out",
        &out,
        "--font",
        &font,
    ];
    args.extend_from_slice(options);
    let files: Vec<PathBuf> = examkit_scanmaker::make(&args).expect("the scan is made");
    files
        .into_iter()
        .map(|path| {
            let name = path
                .file_name()
                .expect("file name")
                .to_string_lossy()
                .into_owned();
            (name, std::fs::read(&path).expect("scan readable"))
        })
        .collect()
}

/// `POST /v1/marking/sessions/from-builder` for revision 1 of `paper`: the new session's id.
pub async fn session_from_paper(s: &Server, key: &str, paper: &str) -> String {
    let resp = s
        .post_json(
            "/v1/marking/sessions/from-builder",
            key,
            Some(&idem()),
            json!({ "paperId": paper, "revision": 1 })
                .to_string()
                .as_bytes(),
        )
        .await;
    assert_eq!(resp.status, 201, "{}", text(&resp));
    resp.json()["session"]["id"]
        .as_str()
        .expect("id")
        .to_owned()
}

/// Uploads `bytes` as an asset of `kind`, typed by the name's extension; returns its id.
pub async fn upload(
    s: &Server,
    key: &str,
    session: &str,
    kind: &str,
    name: &str,
    bytes: Vec<u8>,
) -> String {
    let content_type = match name.rsplit('.').next() {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("webp") => "image/webp",
        _ => "application/pdf",
    };
    let resp = s
        .send(
            Method::POST,
            &format!("/v1/marking/sessions/{session}/assets?kind={kind}&name={name}"),
            Some(key),
            &[("content-type", content_type)],
            Some(bytes),
        )
        .await;
    assert_eq!(resp.status, 201, "{}", text(&resp));
    resp.json()["asset"]["id"].as_str().expect("id").to_owned()
}

/// `POST /v1/marking/sessions/{session}/start` with a fresh key; asserts 202.
pub async fn start(s: &Server, key: &str, session: &str) {
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
}

/// Polls the session until `done` holds for its view, at most `seconds`; returns the view.
pub async fn poll_until(
    s: &Server,
    key: &str,
    session: &str,
    seconds: u64,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        let resp = s.get(&format!("/v1/marking/sessions/{session}"), key).await;
        assert_eq!(resp.status, 200, "{}", text(&resp));
        let view = resp.json()["session"].clone();
        if done(&view) {
            return view;
        }
        assert!(
            Instant::now() < deadline,
            "the session did not finish: {view}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Whether indexing is finished and `questions` questions are listed, none queued or running.
pub fn all_terminal(view: &Value, questions: usize) -> bool {
    let listed = view["questions"].as_array().cloned().unwrap_or_default();
    view["indexingFinished"] == true
        && listed.len() == questions
        && listed
            .iter()
            .all(|q| !matches!(q["status"].as_str(), Some("queued" | "running")))
}

fn field(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or(f64::NAN)
}

/// Is the centre of the box `inner` inside `outer`?
pub fn holds(outer: &Value, inner: &Value) -> bool {
    let cx = field(inner, "x") + field(inner, "width") / 2.0;
    let cy = field(inner, "y") + field(inner, "height") / 2.0;
    cx >= field(outer, "x") - 1e-6
        && cx <= field(outer, "x") + field(outer, "width") + 1e-6
        && cy >= field(outer, "y") - 1e-6
        && cy <= field(outer, "y") + field(outer, "height") + 1e-6
}

/// Is all of the box `inner` inside `outer`, give or take `slack` of the page?
pub fn within(outer: &Value, inner: &Value, slack: f64) -> bool {
    field(inner, "x") >= field(outer, "x") - slack
        && field(inner, "y") >= field(outer, "y") - slack
        && field(inner, "x") + field(inner, "width")
            <= field(outer, "x") + field(outer, "width") + slack
        && field(inner, "y") + field(inner, "height")
            <= field(outer, "y") + field(outer, "height") + slack
}

/// A box of the upright page as displayed on a page turned `degrees` clockwise.
pub fn turn(r: &Value, degrees: u64) -> Value {
    let (x, y, w, h) = (
        field(r, "x"),
        field(r, "y"),
        field(r, "width"),
        field(r, "height"),
    );
    match degrees {
        90 => json!({ "x": 1.0 - y - h, "y": x, "width": h, "height": w }),
        180 => json!({ "x": 1.0 - x - w, "y": 1.0 - y - h, "width": w, "height": h }),
        270 => json!({ "x": y, "y": 1.0 - x - w, "width": h, "height": w }),
        _ => r.clone(),
    }
}

/// The answer-space regions the layout records for a part of question `number`.
pub fn regions(layout: &Value, number: u64, part: &str) -> Vec<Value> {
    layout["questions"]
        .as_array()
        .expect("questions")
        .iter()
        .filter(|q| q["number"] == number)
        .flat_map(|q| q["parts"].as_array().cloned().unwrap_or_default())
        .filter(|p| p["partId"] == part)
        .flat_map(|p| p["answerSpace"].as_array().cloned().unwrap_or_default())
        .collect()
}
