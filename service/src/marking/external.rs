//! The external marker: an HTTP marking pipeline (an AI marker, for example) that examkit calls
//! for each question. The contract is `schemas/marker-contract.md`, with the JSON Schemas
//! `schemas/marker-request-v1.schema.json` and `schemas/marker-response-v1.schema.json`.
//!
//! Each call has a timeout; timeouts, connection failures, 429 and 5xx answers may succeed on another
//! attempt (the job queue retries them with backoff); 4xx answers and answers that are not the
//! contract's JSON fail the question at once. The answer is checked by the caller as every
//! marker's is, and nothing partial is ever saved.
//!
//! The answer is read up to [`MAX_ANSWER_BYTES`] (a longer one is refused without being held
//! whole). Of an error answer, at most 300 characters are kept with the failed question, with the
//! token removed ([`super::remote::scrubbed`]): a marker that echoes the request's
//! `Authorization` header never puts the token in front of the session's reader.

use super::failure::FailureCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use super::marker::{AnswerCheck, MarkFuture, MarkRequest, Marked, Marker, MarkerError, Scheme};
use super::remote::{read_limited, scrubbed};

/// The schema version of requests to an external marker.
pub const REQUEST_VERSION: &str = "examkit-marker-request-v1";
/// The largest answer read from a marker.
pub const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// An external marker at a URL.
#[derive(Debug, Clone)]
pub struct External {
    url: String,
    token: Option<String>,
    client: reqwest::Client,
}

impl External {
    /// A marker at `url` (http), called with `Authorization: Bearer <token>` when a token is
    /// given, each call limited to `timeout`.
    pub fn new(url: &str, token: Option<String>, timeout: Duration) -> Result<External, String> {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!(
                "the marker URL must be http:// or https://, not {url:?}"
            ));
        }
        let client = crate::tls::client_builder()
            .timeout(timeout)
            .build()
            .map_err(|e| format!("the marker's HTTP client cannot be built: {e}"))?;
        Ok(External {
            url: url.to_owned(),
            token,
            client,
        })
    }
}

fn image(png: &Option<Vec<u8>>) -> Value {
    match png {
        Some(bytes) => json!({
            "mediaType": "image/png",
            "data": base64::engine::general_purpose::STANDARD.encode(bytes),
        }),
        None => Value::Null,
    }
}

/// The request body of the contract.
pub fn request_body(request: &MarkRequest) -> Value {
    let scheme = match &request.scheme {
        Scheme::Structured { parts, criteria } => {
            json!({ "kind": "structured", "parts": parts, "criteria": criteria })
        }
        Scheme::Pages => json!({ "kind": "pages" }),
    };
    let work: Vec<Value> = request
        .work_pages
        .iter()
        .filter(|p| p.evidence || p.blank)
        .map(|p| {
            json!({
                "pageId": p.page_id,
                "blank": p.blank,
                "assetId": p.asset_id,
                "page": p.page,
                "widthPx": p.width_px,
                "heightPx": p.height_px,
                "orientation": p.orientation,
                "image": image(&p.image),
                "words": p.words,
                "answerRegions": p.answer_regions,
            })
        })
        .collect();
    let scheme_pages: Vec<Value> = request
        .scheme_pages
        .iter()
        .map(|p| {
            json!({
                "pageId": p.page_id,
                "assetId": p.asset_id,
                "page": p.page,
                "widthPx": p.width_px,
                "heightPx": p.height_px,
                "image": image(&p.image),
            })
        })
        .collect();
    json!({
        "schemaVersion": REQUEST_VERSION,
        "questionId": request.question_id,
        "sessionId": request.session_id,
        "label": request.label,
        "coordinateSystem": "normalized-top-left",
        "pageBasis": "displayed-page",
        "scheme": scheme,
        "workPages": work,
        "schemePages": scheme_pages,
        "pageSelections": request.page_selections,
        "assets": request.assets,
    })
}

fn failure(code: FailureCode, message: String, retry: bool) -> MarkerError {
    MarkerError::new(code, message, retry)
}

impl Marker for External {
    fn name(&self) -> &'static str {
        "external"
    }

    fn needs_images(&self) -> bool {
        true
    }

    fn mark<'a>(
        &'a self,
        request: &'a MarkRequest,
        _check: AnswerCheck<'a>,
        _cancelled: Arc<AtomicBool>,
    ) -> MarkFuture<'a> {
        Box::pin(async move {
            let mut call = self.client.post(&self.url).json(&request_body(request));
            if let Some(token) = &self.token {
                call = call.bearer_auth(token);
            }
            let response = call.send().await.map_err(|e| {
                // The client's words can carry the marker's address: logged, not sent.
                let timed_out = e.is_timeout();
                tracing::warn!(error = %e.without_url(), "calling the external marker failed");
                if timed_out {
                    failure(
                        FailureCode::MarkerTimeout,
                        "the marker did not answer in time".to_owned(),
                        true,
                    )
                } else {
                    failure(
                        FailureCode::MarkerUnreachable,
                        "the marker could not be reached".to_owned(),
                        true,
                    )
                }
            })?;
            let status = response.status();
            let body = read_limited(response, MAX_ANSWER_BYTES).await.map_err(|e| {
                let timed_out = e.is_timeout();
                tracing::warn!(error = %e.without_url(), "reading the external marker's answer failed");
                if timed_out {
                    failure(
                        FailureCode::MarkerTimeout,
                        "the marker's answer did not arrive in time".to_owned(),
                        true,
                    )
                } else {
                    failure(
                        FailureCode::MarkerUnreachable,
                        "the marker's answer could not be read".to_owned(),
                        true,
                    )
                }
            })?;
            if !status.is_success() {
                let shown = scrubbed(&String::from_utf8_lossy(&body), self.token.as_deref());
                return Err(failure(
                    FailureCode::MarkerHttpStatus,
                    format!("the marker answered HTTP {}: {shown}", status.as_u16()),
                    status.is_server_error() || status.as_u16() == 429,
                ));
            }
            if body.len() > MAX_ANSWER_BYTES {
                return Err(failure(
                    FailureCode::MarkerInvalidJson,
                    format!("the marker's answer is over {MAX_ANSWER_BYTES} bytes"),
                    false,
                ));
            }
            let answer: Value = serde_json::from_slice(&body).map_err(|e| {
                failure(
                    FailureCode::MarkerInvalidJson,
                    format!("the marker's answer is not JSON: {e}"),
                    false,
                )
            })?;
            let Some(question) = answer.get("question").filter(|q| q.is_object()) else {
                return Err(failure(
                    FailureCode::MarkerInvalidJson,
                    "the marker's answer has no question object".into(),
                    false,
                ));
            };
            let text = |key: &str| answer.get(key).and_then(Value::as_str).map(str::to_owned);
            Ok(Marked {
                question: question.clone(),
                name: text("name").unwrap_or_else(|| "external marker".into()),
                model: text("model"),
                run: None,
                flags: Vec::new(),
            })
        })
    }
}
