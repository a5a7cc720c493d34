//! The vision-model marker: one Chat Completions call per question to an OpenAI-compatible
//! provider (a hosted API, or vLLM, Ollama, llama.cpp or LM Studio serving a model locally), with
//! the question's scheme and its page images, at temperature 0.
//!
//! The data path:
//!
//! ```text
//! MarkRequest ─► messages (rules; `Question <label>`; the scheme as text, or each scheme page
//!   image after `Scheme page <id>`; each work page image after `Work page <id>`)
//!   ─► provider (retries on timeouts, 429 and 5xx, honouring Retry-After)
//!   ─► model answer (schemas/model-answer-v1.schema.json, narrowed to the question)
//!   ─► evidence placed on the student's ink, guards ([`crate::marking::evidence`])
//!   ─► import question ─► the caller's check (rubric, pages, engine)
//!   ─► on a problem, one repair request in the same conversation ─► Marked
//! ```
//!
//! The token is sent only as `Authorization: Bearer`; it is never logged, never put in a prompt,
//! and removed from any provider message that reaches a client. Messages saved with a failed
//! question are plain sentences: transport errors are logged, not sent. It never crosses a network
//! in the clear: with a token, a plain `http://` base is refused unless its host is this machine
//! (a loopback address or `localhost`) or [`OpenAiConfig::allow_http`] says the network is
//! trusted.
//!
//! # Files
//!
//! - `mod.rs`: the configuration ([`OpenAiConfig`]), the marker ([`OpenAi`]) and its
//!   [`Marker`](super::marker::Marker) side.
//! - `prompt.rs`: the messages and the request's body.
//! - `provider.rs`: one call to the provider, with its retries.
//! - `names.rs`: reading a cover's name.
//! - `question.rs`: the model's answer made an import question, its evidence placed and guarded.

mod names;
mod prompt;
mod provider;

use super::evidence;
use super::failure::FailureCode;
use super::marker::AnswerCheck;
use super::marker::MarkFuture;
use super::marker::MarkRequest;
use super::marker::Marked;
use super::marker::Marker;
use super::marker::MarkerError;
use super::marker::NameFuture;
use super::marker::NameRequest;
use super::marker::ProblemCode;
use super::model_answer;
pub use names::{
    MAX_NAME_CHARS, NAME_PROMPT, NAME_SCHEMA_NAME, name_from, name_messages, name_schema,
};
pub use prompt::{SYSTEM_PROMPT, messages, repair_message, request_body};
use prompt::{narrowing, shown_pages};
use provider::Usage;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub mod question;

/// The largest provider answer read.
pub const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// How the provider is asked for JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StructuredOutput {
    /// `response_format: {"type": "json_schema", …, "strict": true}` with the question's schema.
    JsonSchema,
    /// `response_format: {"type": "json_object"}`, the schema given in the prompt.
    JsonObject,
    /// No `response_format`; the schema given in the prompt.
    None,
}

/// The vision-model marker's settings. Its `Debug` form never shows the token.
#[derive(Clone, PartialEq, Eq)]
pub struct OpenAiConfig {
    /// The API base, such as `http://127.0.0.1:11434/v1`; requests go to
    /// `<base>/chat/completions`.
    pub base_url: String,
    /// The model's name at the provider.
    pub model: String,
    /// The bearer token, if the provider needs one.
    pub token: Option<String>,
    /// Each call's time limit.
    pub timeout: Duration,
    /// The longest edge of each page image sent, in pixels.
    pub image_long_edge: u32,
    /// How JSON is asked for.
    pub structured_output: StructuredOutput,
    /// Calls per request before a timeout, 429 or 5xx is given up to the job queue's retries.
    pub attempts: u32,
    /// The first retry's wait when the provider gives no `Retry-After`; each further one doubles.
    pub backoff: Duration,
    /// The longest `Retry-After` waited for in the call; a longer one is left to the job queue.
    pub max_retry_wait: Duration,
    /// Whether the token may go over plain `http://` to a host that is not this machine
    /// (`--marker-allow-http`, for a trusted private network).
    pub allow_http: bool,
    /// What every award must have beyond the guards (`--marker-require-quote`).
    pub strictness: question::Strictness,
    /// A second model that marks every question too (`--marker-second-model`): only what both
    /// award on the same writing is awarded (see [`crate::marking::second_opinion`]).
    pub second: Option<Box<OpenAiConfig>>,
}

impl OpenAiConfig {
    /// The model's name as results record it: `first + second` with a second opinion.
    pub fn marker_model(&self) -> String {
        match &self.second {
            Some(second) => format!("{} + {}", self.model, second.model),
            None => self.model.clone(),
        }
    }
}

impl std::fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("token", &self.token.as_ref().map(|_| "[redacted]"))
            .field("timeout", &self.timeout)
            .field("image_long_edge", &self.image_long_edge)
            .field("structured_output", &self.structured_output)
            .field("attempts", &self.attempts)
            .field("backoff", &self.backoff)
            .field("max_retry_wait", &self.max_retry_wait)
            .field("allow_http", &self.allow_http)
            .field("strictness", &self.strictness)
            .field("second", &self.second)
            .finish()
    }
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        OpenAiConfig {
            base_url: String::new(),
            model: String::new(),
            token: None,
            timeout: Duration::from_secs(120),
            image_long_edge: 1600,
            structured_output: StructuredOutput::JsonSchema,
            attempts: 3,
            backoff: Duration::from_secs(1),
            max_retry_wait: Duration::from_secs(60),
            allow_http: false,
            strictness: question::Strictness::default(),
            second: None,
        }
    }
}

/// The vision-model marker.
#[derive(Debug, Clone)]
pub struct OpenAi {
    config: OpenAiConfig,
    endpoint: String,
    client: reqwest::Client,
}

impl OpenAi {
    /// A marker with these settings: an error for an unusable URL or model.
    pub fn new(config: OpenAiConfig) -> Result<OpenAi, String> {
        let base = config.base_url.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(format!(
                "--marker-url must be an http:// or https:// API base, such as http://127.0.0.1:11434/v1, not {base:?}"
            ));
        }
        if base.starts_with("http://")
            && config.token.is_some()
            && !config.allow_http
            && !is_this_machine(base)
        {
            return Err(format!(
                "--marker-url {base} is plain http:// to another machine: the token \
                 (--marker-token) would cross the network unencrypted. Use https://, or pass \
                 --marker-allow-http (EXAMKIT_MARKER_ALLOW_HTTP=true) for a trusted network"
            ));
        }
        if config.model.trim().is_empty() {
            return Err(
                "--marker openai needs --marker-model (the model's name at the provider)".into(),
            );
        }
        if !(256..=4096).contains(&config.image_long_edge) {
            return Err("--marker-image-size must be from 256 to 4096 pixels".into());
        }
        let client = crate::tls::client_builder()
            .timeout(config.timeout)
            .build()
            .map_err(|e| format!("the marker's HTTP client cannot be built: {e}"))?;
        Ok(OpenAi {
            endpoint: format!("{base}/chat/completions"),
            config,
            client,
        })
    }
}

/// Whether a URL's host is this machine: `localhost`, or a loopback address (`127.0.0.0/8`,
/// `::1`). A URL that does not parse is not.
fn is_this_machine(url: &str) -> bool {
    let Some(host) = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
    else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

impl Marker for OpenAi {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn needs_images(&self) -> bool {
        true
    }

    fn image_long_edge(&self) -> Option<u32> {
        Some(self.config.image_long_edge)
    }

    /// JPEG: a tenth of a scan's PNG, so the request is smaller and the page faster to encode;
    /// every vision model reads it.
    fn image_format(&self) -> image::ImageFormat {
        image::ImageFormat::Jpeg
    }

    fn reads_names(&self) -> bool {
        true
    }

    fn read_name<'a>(&'a self, request: &'a NameRequest) -> NameFuture<'a> {
        Box::pin(async move {
            let mode = self.config.structured_output;
            let schema = name_schema();
            let mut body = request_body(
                &self.config.model,
                &name_messages(request, mode),
                &schema,
                mode,
            );
            if mode == StructuredOutput::JsonSchema {
                body["response_format"]["json_schema"]["name"] = json!(NAME_SCHEMA_NAME);
            }
            let mut usage = Usage::default();
            let completion = self
                .complete(&body, &mut usage, &AtomicBool::new(false))
                .await?;
            name_from(&completion.content)
        })
    }

    fn mark<'a>(
        &'a self,
        request: &'a MarkRequest,
        check: AnswerCheck<'a>,
        cancelled: Arc<AtomicBool>,
    ) -> MarkFuture<'a> {
        Box::pin(async move {
            if shown_pages(request).is_empty() {
                return Err(MarkerError::new(
                    FailureCode::NoEvidencePages,
                    "no selected work page can be evidence of the student's answer",
                    false,
                ));
            }
            let mode = self.config.structured_output;
            let schema = model_answer::schema_for(&narrowing(request));
            let mut conversation = messages(request, &schema, mode)?;
            let mut usage = Usage::default();
            let mut repairs = 0u32;
            loop {
                let body = request_body(&self.config.model, &conversation, &schema, mode);
                let completion = self.complete(&body, &mut usage, &cancelled).await?;
                usage.prompt_tokens += completion.prompt_tokens;
                usage.completion_tokens += completion.completion_tokens;
                let ink = evidence::RasterInk::default();
                let built = model_answer::read(&completion.content, &schema).and_then(|answer| {
                    question::question_from(request, &answer, &ink, self.config.strictness)
                });
                let problems = match built {
                    Ok(question::Built {
                        question,
                        records,
                        flags,
                        transcription,
                    }) => match check(&question) {
                        Ok(()) => {
                            let run = json!({
                                "marker": "openai",
                                "model": self.config.model,
                                "calls": usage.calls,
                                "latencyMs": u64::try_from(usage.latency.as_millis()).unwrap_or(u64::MAX),
                                "promptTokens": usage.prompt_tokens,
                                "completionTokens": usage.completion_tokens,
                                "repairRounds": repairs,
                                "placements": records,
                                "transcription": transcription,
                            });
                            return Ok(Marked {
                                question,
                                name: "examkit vision-model marker".into(),
                                model: Some(self.config.model.clone()),
                                run: Some(run),
                                flags,
                            });
                        }
                        Err(problems) => problems,
                    },
                    Err(problems) => problems,
                };
                if repairs >= 1 {
                    let invalid_json = problems.iter().all(|p| p.code == ProblemCode::InvalidJson);
                    let mut error = MarkerError::new(
                        if invalid_json {
                            FailureCode::MarkerInvalidJson
                        } else {
                            FailureCode::MarkerAnswerInvalid
                        },
                        format!(
                            "the model's answer was refused twice (after one repair request): {}",
                            problems
                                .iter()
                                .take(5)
                                .map(|p| format!(
                                    "{} at {}",
                                    p.code,
                                    if p.path.is_empty() { "/" } else { &p.path }
                                ))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        false,
                    );
                    error.details = Some(json!({ "errors": problems }));
                    return Err(error);
                }
                repairs += 1;
                conversation.push(json!({ "role": "assistant", "content": completion.content }));
                conversation.push(repair_message(&problems));
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::provider::provider_message;
    use super::*;
    use crate::marking::marker::Rect;
    use crate::marking::model_answer::SCHEMA_NAME;

    #[test]
    fn provider_messages_come_from_their_error_objects() {
        assert_eq!(
            provider_message(br#"{"error": {"message": "model not found"}}"#),
            "model not found"
        );
        assert_eq!(provider_message(br#"{"error": "bad"}"#), "bad");
        assert_eq!(provider_message(b"plain text"), "plain text");
    }

    #[test]
    fn the_body_asks_for_the_schema_in_each_mode() {
        let schema = json!({ "type": "object" });
        let messages = vec![json!({ "role": "user", "content": "hi" })];
        let strict = request_body("m", &messages, &schema, StructuredOutput::JsonSchema);
        assert_eq!(strict["temperature"], 0);
        assert_eq!(strict["response_format"]["type"], "json_schema");
        assert_eq!(strict["response_format"]["json_schema"]["strict"], true);
        assert_eq!(
            strict["response_format"]["json_schema"]["name"],
            SCHEMA_NAME
        );
        assert_eq!(strict["response_format"]["json_schema"]["schema"], schema);
        let object = request_body("m", &messages, &schema, StructuredOutput::JsonObject);
        assert_eq!(object["response_format"], json!({ "type": "json_object" }));
        let none = request_body("m", &messages, &schema, StructuredOutput::None);
        assert!(none.get("response_format").is_none());
    }

    #[test]
    fn settings_are_checked() {
        let good = OpenAiConfig {
            base_url: "http://127.0.0.1:11434/v1/".into(),
            model: "qwen2.5vl".into(),
            ..OpenAiConfig::default()
        };
        let marker = OpenAi::new(good.clone()).map_err(|e| e.to_string());
        assert_eq!(
            marker.map(|m| m.endpoint),
            Ok("http://127.0.0.1:11434/v1/chat/completions".to_owned())
        );
        for bad in [
            OpenAiConfig {
                base_url: "ftp://x".into(),
                ..good.clone()
            },
            OpenAiConfig {
                model: " ".into(),
                ..good.clone()
            },
            OpenAiConfig {
                image_long_edge: 100,
                ..good.clone()
            },
        ] {
            assert!(OpenAi::new(bad).is_err());
        }
    }

    #[test]
    fn the_token_goes_in_the_clear_only_to_this_machine_unless_allowed() {
        let with_token = |base_url: &str, allow_http: bool| OpenAiConfig {
            base_url: base_url.into(),
            model: "qwen2.5vl".into(),
            token: Some("sk-test-123456".into()),
            allow_http,
            ..OpenAiConfig::default()
        };
        for remote in [
            "http://example.invalid/v1",
            "http://10.0.0.5:8000/v1",
            "http://[2001:db8::1]:8000/v1",
            "http://localhost.example.invalid/v1",
            "http://127.0.0.1.example.invalid/v1",
        ] {
            let refused = OpenAi::new(with_token(remote, false))
                .map(|_| ())
                .expect_err(remote);
            assert!(
                refused.contains("--marker-allow-http") && refused.contains("https://"),
                "{remote}: {refused}"
            );
            assert!(!refused.contains("sk-test"), "{refused}");
            assert!(OpenAi::new(with_token(remote, true)).is_ok(), "{remote}");
            // Without a token nothing secret is sent.
            let tokenless = OpenAiConfig {
                token: None,
                ..with_token(remote, false)
            };
            assert!(OpenAi::new(tokenless).is_ok(), "{remote}");
        }
        for local in [
            "http://127.0.0.1:11434/v1",
            "http://127.3.2.1:8000/v1",
            "http://[::1]:8000/v1",
            "http://localhost:11434/v1",
            "http://LOCALHOST/v1",
            "https://api.example.invalid/v1",
        ] {
            assert!(OpenAi::new(with_token(local, false)).is_ok(), "{local}");
        }
    }

    #[test]
    fn a_cover_name_is_read_cleaned_or_refused() {
        let read = |content: &str| name_from(content).map_err(|e| e.code);
        assert_eq!(
            read(r#"{"name": "Alan Turing"}"#),
            Ok(Some("Alan Turing".into()))
        );
        assert_eq!(
            read("```json\n{\"name\": \"  Alan \\t  Turing \"}\n```"),
            Ok(Some("Alan Turing".into()))
        );
        assert_eq!(read(r#"{"name": null}"#), Ok(None));
        assert_eq!(read(r#"{"name": "  "}"#), Ok(None));
        assert_eq!(read(r#"{"name": "A\u0007da"}"#), Ok(Some("Ada".into())));
        let long = format!(r#"{{"name": "{}"}}"#, "x".repeat(500));
        assert_eq!(
            read(&long).map(|n| n.map(|n| n.chars().count())),
            Ok(Some(MAX_NAME_CHARS))
        );
        for bad in [
            "",
            "Alan Turing",
            "[]",
            r#"{"name": 3}"#,
            r#"{"written": "Alan"}"#,
            "{not json}",
        ] {
            assert_eq!(read(bad), Err(FailureCode::MarkerInvalidJson), "{bad:?}");
        }
    }

    #[test]
    fn a_cover_request_shows_the_page_and_the_name_line() {
        let request = NameRequest {
            image: vec![0xFF, 0xD8, 0xFF, 0xE0],
            name_space: Some(Rect {
                x: 0.1,
                y: 0.2,
                width: 0.5,
                height: 0.04,
            }),
        };
        let messages = name_messages(&request, StructuredOutput::JsonSchema);
        assert_eq!(messages[0]["content"], NAME_PROMPT);
        let content = &messages[1]["content"];
        assert_eq!(content[0]["text"], "Cover page");
        assert!(
            content[1]["image_url"]["url"]
                .as_str()
                .is_some_and(|u| u.starts_with("data:image/jpeg;base64,"))
        );
        let closing = content[2]["text"].as_str().expect("text");
        assert!(closing.contains("[100, 200, 600, 240]"), "{closing}");
        assert!(
            !closing.contains("JSON Schema"),
            "the schema goes in response_format"
        );
        let loose = name_messages(&request, StructuredOutput::None);
        assert!(
            loose[1]["content"][2]["text"]
                .as_str()
                .is_some_and(|t| t.contains("JSON Schema"))
        );
    }
}
