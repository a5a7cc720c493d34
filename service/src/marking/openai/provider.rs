//! The provider's side: one Chat Completions call with its retries on timeouts, 429 and 5xx
//! (honouring Retry-After), the answer's usage, and provider messages scrubbed of the token.

use super::{MAX_ANSWER_BYTES, OpenAi};
use crate::marking::failure::FailureCode;
use crate::marking::marker::MarkerError;
use crate::marking::remote::read_limited;
use crate::marking::remote::scrubbed;
use serde_json::Value;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

/// One completed call.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Completion {
    pub(super) content: String,
    pub(super) prompt_tokens: u64,
    pub(super) completion_tokens: u64,
}

/// Totals over a question's calls.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Usage {
    pub(super) calls: u32,
    pub(super) latency: Duration,
    pub(super) prompt_tokens: u64,
    pub(super) completion_tokens: u64,
}

/// `Retry-After` in seconds (the HTTP-date form is treated as absent).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// The provider's own message from an error body (`{"error": {"message"}}` or text).
pub(super) fn provider_message(body: &[u8]) -> String {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let from_json = parsed.as_ref().and_then(|v| {
        v["error"]["message"]
            .as_str()
            .or_else(|| v["error"].as_str())
            .or_else(|| v["message"].as_str())
            .map(str::to_owned)
    });
    // Whole: [`scrubbed`] removes the token before it shortens, so no cut can split a token.
    from_json.unwrap_or_else(|| String::from_utf8_lossy(body).into_owned())
}

impl OpenAi {
    /// The wait before attempt `attempt + 1` when the provider said nothing of when to retry.
    fn backoff(&self, attempt: u32) -> Duration {
        self.config
            .backoff
            .saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1)))
            .min(self.config.max_retry_wait)
    }

    /// Why a call that did not arrive failed: the time limit, or the provider out of reach.
    fn unreachable(&self, timed_out: bool) -> MarkerError {
        if timed_out {
            MarkerError::new(
                FailureCode::MarkerTimeout,
                format!(
                    "the model provider did not answer within {} s",
                    self.config.timeout.as_secs()
                ),
                true,
            )
        } else {
            MarkerError::new(
                FailureCode::MarkerUnreachable,
                "the model provider could not be reached",
                true,
            )
        }
    }

    /// One chat completion, with retries on timeouts, connection failures, 429 and 5xx.
    pub(super) async fn complete(
        &self,
        body: &Value,
        usage: &mut Usage,
        cancelled: &AtomicBool,
    ) -> Result<Completion, MarkerError> {
        let token = self.config.token.as_deref();
        let attempts = self.config.attempts.max(1);
        let mut last = MarkerError::new(
            FailureCode::MarkerUnreachable,
            "the provider was not called",
            true,
        );
        for attempt in 1..=attempts {
            if cancelled.load(Ordering::SeqCst) {
                return Err(MarkerError::new(
                    FailureCode::Cancelled,
                    "marking was cancelled",
                    false,
                ));
            }
            let mut call = self.client.post(&self.endpoint).json(body);
            if let Some(token) = token {
                call = call.bearer_auth(token);
            }
            let started = Instant::now();
            let sent = call.send().await;
            let response = match sent {
                Ok(response) => response,
                Err(e) => {
                    usage.latency += started.elapsed();
                    usage.calls += 1;
                    let timed_out = e.is_timeout();
                    tracing::warn!(error = %e.without_url(), attempt, "the vision-model provider could not be called");
                    last = self.unreachable(timed_out);
                    if attempt < attempts {
                        tokio::time::sleep(self.backoff(attempt)).await;
                    }
                    continue;
                }
            };
            let status = response.status();
            let wait = retry_after(response.headers());
            let read = read_limited(response, MAX_ANSWER_BYTES).await;
            usage.latency += started.elapsed();
            usage.calls += 1;
            let bytes = match read {
                Ok(bytes) => bytes,
                Err(e) => {
                    let timed_out = e.is_timeout();
                    tracing::warn!(error = %e.without_url(), attempt, "the vision-model provider's answer could not be read");
                    last = MarkerError::new(
                        if timed_out {
                            FailureCode::MarkerTimeout
                        } else {
                            FailureCode::MarkerUnreachable
                        },
                        "the model provider's answer did not arrive whole",
                        true,
                    );
                    if attempt < attempts {
                        tokio::time::sleep(self.backoff(attempt)).await;
                    }
                    continue;
                }
            };
            if status.as_u16() == 429 || status.is_server_error() {
                last = MarkerError::new(
                    FailureCode::MarkerHttpStatus,
                    format!(
                        "the model provider answered HTTP {}: {}",
                        status.as_u16(),
                        scrubbed(&provider_message(&bytes), token)
                    ),
                    true,
                );
                let wait = wait.unwrap_or_else(|| self.backoff(attempt));
                if attempt == attempts || wait > self.config.max_retry_wait {
                    return Err(last);
                }
                tokio::time::sleep(wait).await;
                continue;
            }
            return completion_of(status, &bytes, token);
        }
        Err(last)
    }
}

/// The completion in a provider's answer `bytes` with `status` (not 429 nor a server error): an
/// error naming the status for any other failure, or when the answer is too long, not JSON or
/// has no message content.
fn completion_of(
    status: reqwest::StatusCode,
    bytes: &[u8],
    token: Option<&str>,
) -> Result<Completion, MarkerError> {
    if !status.is_success() {
        return Err(MarkerError::new(
            FailureCode::MarkerHttpStatus,
            format!(
                "the model provider refused the request with HTTP {}: {}",
                status.as_u16(),
                scrubbed(&provider_message(bytes), token)
            ),
            false,
        ));
    }
    if bytes.len() > MAX_ANSWER_BYTES {
        return Err(MarkerError::new(
            FailureCode::MarkerInvalidJson,
            format!("the model provider's answer is over {MAX_ANSWER_BYTES} bytes"),
            false,
        ));
    }
    let answer: Value = serde_json::from_slice(bytes).map_err(|_| {
        MarkerError::new(
            FailureCode::MarkerInvalidJson,
            "the model provider's answer is not a chat completion (not JSON)",
            false,
        )
    })?;
    let content = answer["choices"][0]["message"]["content"]
        .as_str()
        .ok_or_else(|| {
            MarkerError::new(
                FailureCode::MarkerInvalidJson,
                "the model provider's answer has no message content",
                false,
            )
        })?;
    let count = |key: &str| answer["usage"][key].as_u64().unwrap_or(0);
    Ok(Completion {
        content: content.to_owned(),
        prompt_tokens: count("prompt_tokens"),
        completion_tokens: count("completion_tokens"),
    })
}
