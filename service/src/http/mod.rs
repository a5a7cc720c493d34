//! The HTTP API under `/v1`, on warp.
//!
//! Each resource module returns its warp filters. Every handler goes through [`Ctx::run`], which
//! authenticates the bearer key, admits the request against the rate limits, checks scopes, runs
//! the operation, renders errors in the one error shape, sets `X-Request-Id` and the rate-limit
//! headers, records usage (counts and timings only) and logs one line without keys or bodies.

pub mod allow;
pub mod class_sets;
pub mod docs;
pub mod engine;
pub mod fields;
pub mod health;
pub mod imports;
pub mod marking;
pub mod me;
pub mod papers;
pub mod questions;
pub mod range;
pub mod results;
pub mod sessions;
pub mod upload;

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use serde::Serialize;
use warp::Filter;
use warp::filters::BoxedFilter;
use warp::http::header::{HeaderMap, HeaderName, HeaderValue};
use warp::http::{Method, StatusCode};
use warp::reply::Response;

pub use crate::error::{ApiError, ErrorKind};

use crate::auth::{self, Scope};
use crate::server::state::AppState;
use crate::store::accounts::{ApiKey, User};
use crate::store::idempotency::Claim;
use crate::store::now_ms;
use crate::store::rate::Admission;

/// A request body as a stream of chunks.
pub type Body = Pin<Box<dyn Stream<Item = Result<Bytes, warp::Error>> + Send>>;

/// Who is calling: an active key and its account.
#[derive(Debug, Clone)]
pub struct Principal {
    /// The key used.
    pub key: ApiKey,
    /// The key's account.
    pub user: User,
}

/// What an operation is, for scopes, rate limits and usage records.
#[derive(Debug)]
pub struct Op {
    /// The operation's name in usage records: method and route template.
    pub name: &'static str,
    /// Scopes the key must all hold (empty: any active key).
    pub scopes: &'static [Scope],
}

/// A successful response.
#[derive(Debug)]
pub struct Reply {
    status: StatusCode,
    content_type: String,
    body: Payload,
    headers: Vec<(HeaderName, HeaderValue)>,
}

/// What a reply sends: bytes in memory, or a file streamed from its start.
#[derive(Debug)]
enum Payload {
    Bytes(Vec<u8>),
    File { file: std::fs::File, len: u64 },
}

impl Reply {
    /// A JSON response of a serialisable value.
    pub fn json<T: Serialize>(status: StatusCode, value: &T) -> Result<Reply, ApiError> {
        let body = serde_json::to_vec(value).map_err(|e| {
            tracing::error!(error = %e, "serialising a response failed");
            ApiError::Internal
        })?;
        Ok(Reply::raw_json(status, body))
    }

    /// A JSON response of bytes that already are JSON.
    pub fn raw_json(status: StatusCode, body: Vec<u8>) -> Reply {
        Reply {
            status,
            content_type: "application/json".into(),
            body: Payload::Bytes(body),
            headers: Vec::new(),
        }
    }

    /// A response of raw bytes.
    pub fn bytes(content_type: &str, body: Vec<u8>) -> Reply {
        Reply {
            status: StatusCode::OK,
            content_type: content_type.into(),
            body: Payload::Bytes(body),
            headers: Vec::new(),
        }
    }

    /// A response of a file's `len` bytes from where it is read next, streamed: never held in
    /// memory whole. Not for a route under an idempotency key (there is nothing to keep).
    pub fn file(content_type: &str, file: std::fs::File, len: u64) -> Reply {
        Reply {
            status: StatusCode::OK,
            content_type: content_type.into(),
            body: Payload::File { file, len },
            headers: Vec::new(),
        }
    }

    /// The same reply with another status.
    pub fn with_status(mut self, status: StatusCode) -> Reply {
        self.status = status;
        self
    }

    /// Adds a header.
    pub fn with_header(mut self, name: &'static str, value: &str) -> Reply {
        if let Ok(value) = HeaderValue::from_str(value) {
            self.headers.push((HeaderName::from_static(name), value));
        }
        self
    }
}

/// A response streaming `len` bytes of `file` from where it is read next, in chunks read on the
/// blocking pool, with its length.
pub fn streamed_file(
    status: StatusCode,
    content_type: &str,
    file: std::fs::File,
    len: u64,
) -> Response {
    use std::io::Read;
    const CHUNK: u64 = 256 * 1024;
    let chunks = futures_util::stream::try_unfold((file, len), |(mut file, left)| async move {
        if left == 0 {
            return Ok(None);
        }
        let (file, chunk) = tokio::task::spawn_blocking(move || {
            let mut chunk = Vec::new();
            let read = (&mut file).take(left.min(CHUNK)).read_to_end(&mut chunk);
            (file, read.map(|_| chunk))
        })
        .await
        .map_err(std::io::Error::other)?;
        let chunk = chunk?;
        if chunk.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the file ended before its length",
            ));
        }
        let left = left - chunk.len() as u64;
        Ok(Some((Bytes::from(chunk), (file, left))))
    });
    let mut response = warp::reply::Reply::into_response(warp::reply::stream(chunks));
    *response.status_mut() = status;
    if let Ok(value) = HeaderValue::from_str(content_type) {
        response
            .headers_mut()
            .insert(warp::http::header::CONTENT_TYPE, value);
    }
    response
        .headers_mut()
        .insert(warp::http::header::CONTENT_LENGTH, HeaderValue::from(len));
    response
}

fn build(status: StatusCode, content_type: &str, body: Vec<u8>) -> Response {
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    if let Ok(value) = HeaderValue::from_str(content_type) {
        response
            .headers_mut()
            .insert(warp::http::header::CONTENT_TYPE, value);
    }
    response
}

fn set_header(response: &mut Response, name: &'static str, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        response
            .headers_mut()
            .insert(HeaderName::from_static(name), value);
    }
}

/// The context of one request.
#[derive(Clone)]
pub struct Ctx {
    /// The service state.
    pub state: Arc<AppState>,
    /// This request's id, sent back in `X-Request-Id` and error bodies.
    pub request_id: String,
    /// When handling started.
    pub started: Instant,
    /// The method.
    pub method: Method,
    /// The request path.
    pub path: String,
    /// The request headers.
    pub headers: HeaderMap,
}

fn new_request_id() -> String {
    format!("req_{}", uuid::Uuid::new_v4().simple())
}

/// A filter extracting the request context.
pub fn ctx(state: Arc<AppState>) -> impl Filter<Extract = (Ctx,), Error = Infallible> + Clone {
    warp::any()
        .map(move || state.clone())
        .and(warp::method())
        .and(warp::path::full())
        .and(warp::header::headers_cloned())
        .map(|state, method, path: warp::path::FullPath, headers| Ctx {
            state,
            request_id: new_request_id(),
            started: Instant::now(),
            method,
            path: path.as_str().to_owned(),
            headers,
        })
}

/// A filter extracting the request body as a stream, for handlers that enforce their own limit.
pub fn body() -> impl Filter<Extract = (Body,), Error = warp::Rejection> + Clone {
    warp::body::stream().map(boxed_body)
}

fn boxed_body<S, B>(stream: S) -> Body
where
    S: Stream<Item = Result<B, warp::Error>> + Send + 'static,
    B: warp::Buf,
{
    Box::pin(stream.map(|chunk| chunk.map(|mut buf| buf.copy_to_bytes(buf.remaining()))))
}

/// Reads at most `limit` bytes of a body; more is `too_large(size)`. A larger body is drained up to
/// a bound so the client sees the response rather than a reset connection.
pub async fn read_body(
    ctx: &Ctx,
    mut body: Body,
    limit: usize,
    too_large: fn(usize) -> ApiError,
) -> Result<Vec<u8>, ApiError> {
    const DRAIN_LIMIT: usize = 64 * 1024 * 1024;
    let declared = ctx
        .headers
        .get(warp::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let mut data = Vec::with_capacity(declared.unwrap_or(0).min(limit + 1));
    let mut seen = 0usize;
    let mut over = declared.is_some_and(|n| n > limit);
    while let Some(chunk) = body.next().await {
        let chunk =
            chunk.map_err(|e| ApiError::InvalidBody(format!("the body could not be read: {e}")))?;
        seen = seen.saturating_add(chunk.len());
        if seen > limit {
            over = true;
        }
        if over {
            data = Vec::new();
            if seen > limit.saturating_add(DRAIN_LIMIT) {
                break;
            }
        } else {
            data.extend_from_slice(&chunk);
        }
    }
    if over {
        return Err(too_large(declared.unwrap_or(seen).max(seen)));
    }
    Ok(data)
}

/// The 413 of a submission body over the engine's 4 MiB document limit.
pub fn document_too_large(size: usize) -> ApiError {
    ApiError::PayloadTooLarge {
        size,
        limit: examkit_engine::limits::MAX_DOCUMENT_BYTES,
    }
}

/// Requires `Content-Type: application/json` (parameters such as charset allowed).
pub fn require_json(ctx: &Ctx) -> Result<(), ApiError> {
    let content_type = ctx
        .headers
        .get(warp::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(ApiError::UnsupportedMediaType(format!(
            "this route takes Content-Type: application/json, not {:?}",
            if content_type.is_empty() {
                "(none)"
            } else {
                content_type
            }
        )))
    }
}

/// Parses a UUID path parameter; anything else is a resource that does not exist.
pub fn parse_id(raw: &str, what: &'static str) -> Result<String, ApiError> {
    match uuid::Uuid::parse_str(raw) {
        Ok(id) => Ok(id.hyphenated().to_string()),
        Err(_) => Err(ApiError::NotFound(what)),
    }
}

/// Whether `key` (of account `user`) may make a request now.
fn check(key: &ApiKey, user: &User, fingerprint: &str) -> Result<(), ApiError> {
    if !auth::fingerprints_match(&key.fingerprint, fingerprint) {
        Err(ApiError::InvalidApiKey)
    } else if key.revoked_at.is_some() {
        Err(ApiError::RevokedApiKey)
    } else if key.expires_at <= now_ms() {
        Err(ApiError::ExpiredApiKey)
    } else if !user.verified {
        Err(ApiError::AccountUnverified)
    } else if user.restricted {
        Err(ApiError::AccountRestricted)
    } else {
        Ok(())
    }
}

impl Ctx {
    /// Runs an operation: authentication, rate limits, scopes, the handler, rendering, usage.
    pub async fn run<F, Fut>(self, op: &'static Op, handler: F) -> Response
    where
        F: FnOnce(Ctx, Principal) -> Fut,
        Fut: Future<Output = Result<Reply, ApiError>>,
    {
        let principal = match self.authenticate(false).await {
            Ok(principal) => principal,
            Err((error, key)) => return self.refuse(op, error, key).await,
        };
        let write = !matches!(self.method, Method::GET | Method::HEAD);
        let limits = &self.state.limits;
        let store = &self.state.store;
        let (mut principal, epoch) = principal;
        let authenticated = Instant::now();
        crate::telemetry::phase("authenticate", authenticated - self.started);
        let admission = store
            .admit(
                &principal.key.id,
                &principal.user.id,
                write,
                now_ms(),
                limits,
            )
            .await;
        // The key was read at another authentication epoch: it or its account may have changed
        // since (revoked, restricted, new scopes). Read it again; a request that no longer
        // authenticates is not counted.
        if let Ok(a) = &admission
            && a.epoch != epoch
        {
            match self.authenticate(true).await {
                Ok((fresh, _)) => principal = fresh,
                Err((error, key)) => {
                    if let Err(e) = store
                        .unadmit(&principal.key.id, &principal.user.id, a, limits)
                        .await
                    {
                        tracing::warn!(request_id = %self.request_id, error = %e, "admission not taken back");
                    }
                    return self.refuse(op, error, key).await;
                }
            }
        }
        let admitted = Instant::now();
        crate::telemetry::phase("admit", admitted - authenticated);
        let (result, admission) = match admission {
            Err(e) => (Err(ApiError::from(e)), None),
            Ok(a) if !a.admitted => {
                crate::telemetry::rate_limited();
                (
                    Err(ApiError::RateLimited {
                        retry_after: a.retry_after,
                    }),
                    Some(a),
                )
            }
            Ok(a) => {
                let missing = op.scopes.iter().any(|s| !principal.key.scopes.contains(s));
                let result = if missing {
                    Err(ApiError::InsufficientScope(op.scopes))
                } else {
                    handler(self.clone(), principal.clone()).await
                };
                (result, Some(a))
            }
        };
        let handled = Instant::now();
        crate::telemetry::phase("handle", handled - admitted);
        let response = self.render(result, admission);
        let response = self.finish(op, response, Some(&principal.key)).await;
        crate::telemetry::phase("finish", handled.elapsed());
        response
    }

    /// Answers a request refused before admission.
    async fn refuse(&self, op: &'static Op, error: ApiError, key: Option<ApiKey>) -> Response {
        crate::telemetry::auth_failure(error.code());
        let response = self.render(Err(error), None);
        self.finish(op, response, key.as_ref()).await
    }

    /// The caller and the authentication epoch its key was read at. Keys come from the store's
    /// cache unless `fresh`; a cached key that would be refused is read again first, so a
    /// refusal is never the cache's.
    async fn authenticate(
        &self,
        fresh: bool,
    ) -> Result<(Principal, i64), (ApiError, Option<ApiKey>)> {
        let header = self
            .headers
            .get(warp::http::header::AUTHORIZATION)
            .ok_or((ApiError::MissingApiKey, None))?;
        let header = header
            .to_str()
            .map_err(|_| (ApiError::InvalidAuthorization, None))?;
        let (scheme, token) = header
            .split_once(' ')
            .ok_or((ApiError::InvalidAuthorization, None))?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err((ApiError::InvalidAuthorization, None));
        }
        let token = token.trim();
        if !auth::is_well_formed(token) {
            return Err((ApiError::InvalidApiKey, None));
        }
        let fingerprint = auth::fingerprint(token);
        let store = &self.state.store;
        let found = if fresh {
            store.read_key(&fingerprint).await
        } else {
            store.known_key(&fingerprint).await
        };
        let mut known = found.map_err(|e| (ApiError::from(e), None))?;
        if !fresh
            && let Some(k) = &known
            && check(&k.key, &k.user, &fingerprint).is_err()
        {
            known = store
                .read_key(&fingerprint)
                .await
                .map_err(|e| (ApiError::from(e), None))?;
        }
        let Some(known) = known else {
            return Err((ApiError::InvalidApiKey, None));
        };
        if let Err(error) = check(&known.key, &known.user, &fingerprint) {
            // A restricted account's requests are still its key's usage.
            let key = matches!(error, ApiError::AccountRestricted).then_some(known.key);
            return Err((error, key));
        }
        Ok((
            Principal {
                key: known.key,
                user: known.user,
            },
            known.epoch,
        ))
    }

    fn render(&self, result: Result<Reply, ApiError>, admission: Option<Admission>) -> Response {
        let mut response = match result {
            Ok(reply) => {
                let mut response = match reply.body {
                    Payload::Bytes(body) => build(reply.status, &reply.content_type, body),
                    Payload::File { file, len } => {
                        streamed_file(reply.status, &reply.content_type, file, len)
                    }
                };
                for (name, value) in reply.headers {
                    response.headers_mut().insert(name, value);
                }
                response
            }
            Err(error) => {
                if matches!(error, ApiError::Internal) {
                    tracing::error!(request_id = %self.request_id, "request failed");
                }
                let mut response = build(
                    error.status(),
                    "application/json",
                    error.body(&self.request_id),
                );
                if let Some(retry_after) = error.retry_after() {
                    set_header(&mut response, "retry-after", &retry_after.to_string());
                }
                if let Some(size) = error.unsatisfied_range() {
                    set_header(&mut response, "content-range", &format!("bytes */{size}"));
                }
                response
            }
        };
        if let Some(a) = admission {
            set_header(
                &mut response,
                "x-ratelimit-remaining",
                &a.remaining.to_string(),
            );
            set_header(
                &mut response,
                "x-ratelimit-daily-remaining",
                &a.daily_remaining.to_string(),
            );
        }
        set_header(&mut response, "x-request-id", &self.request_id);
        response
    }

    async fn finish(
        &self,
        op: &'static Op,
        mut response: Response,
        key: Option<&ApiKey>,
    ) -> Response {
        // The route template labels the request's metrics (`GET /v1/papers/{id}` → `/v1/papers/{id}`).
        let route = op.name.split_once(' ').map_or(op.name, |(_, route)| route);
        response
            .extensions_mut()
            .insert(crate::telemetry::Route(route));
        let status = response.status().as_u16();
        let elapsed = i64::try_from(self.started.elapsed().as_millis()).unwrap_or(i64::MAX);
        if let Some(key) = key
            && let Err(e) = self
                .state
                .store
                .record_usage(&key.id, op.name, status, elapsed, now_ms())
                .await
        {
            tracing::warn!(request_id = %self.request_id, error = %e, "usage not recorded");
        }
        tracing::info!(
            request_id = %self.request_id,
            method = %self.method,
            operation = op.name,
            status,
            elapsed_ms = elapsed,
            key_id = key.map(|k| k.id.as_str()).unwrap_or("-"),
            "request"
        );
        response
    }

    /// Runs `operation` at most once per Idempotency-Key of this API key: a retry of the same
    /// request gets the stored response, a different request with the same key gets 409, and a
    /// retry while the first is running waits for it.
    pub async fn idempotent<F, Fut>(
        &self,
        principal: &Principal,
        op: &'static Op,
        body: &[u8],
        operation: F,
    ) -> Result<Reply, ApiError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Reply, ApiError>>,
    {
        let key = self
            .headers
            .get("idempotency-key")
            .ok_or(ApiError::IdempotencyKeyRequired)?
            .to_str()
            .map_err(|_| ApiError::InvalidIdempotencyKey)?;
        if !(8..=128).contains(&key.len())
            || !key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b))
        {
            return Err(ApiError::InvalidIdempotencyKey);
        }
        let mut hashed = Vec::with_capacity(body.len() + 128);
        hashed.extend_from_slice(op.name.as_bytes());
        hashed.push(b'\n');
        hashed.extend_from_slice(self.path.as_bytes());
        hashed.push(b'\n');
        hashed.extend_from_slice(body);
        let request_hash = auth::sha256_hex(&hashed);
        let store = &self.state.store;
        let key_id = &principal.key.id;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match store
                .claim_idempotency(key_id, key, &request_hash, now_ms())
                .await?
            {
                Claim::Fresh => break,
                Claim::Replay { status, body } => return Ok(self.replay(status, body)),
                Claim::Mismatch => return Err(ApiError::IdempotencyKeyReused),
                Claim::InProgress => {
                    if Instant::now() >= deadline {
                        return Err(ApiError::IdempotencyRequestInProgress);
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
        let result = operation().await;
        let stored = match &result {
            Ok(Reply {
                status,
                body: Payload::Bytes(body),
                ..
            }) => Some((status.as_u16(), body.clone())),
            // A file is not kept: the operation runs again on a retry.
            Ok(Reply {
                body: Payload::File { .. },
                ..
            }) => None,
            // A 429 is not an answer to keep: the same request may succeed once the limit renews.
            Err(e) if e.status().is_client_error() && e.retry_after().is_none() => {
                Some((e.status().as_u16(), e.body("")))
            }
            Err(_) => None,
        };
        match stored {
            Some((status, body)) => store.finish_idempotency(key_id, key, status, &body).await?,
            None => store.release_idempotency(key_id, key).await?,
        }
        result
    }

    fn replay(&self, status: u16, body: Vec<u8>) -> Reply {
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = if status.is_client_error() {
            // Stored error bodies get this request's id.
            match serde_json::from_slice::<serde_json::Value>(&body) {
                Ok(mut value) => {
                    value["requestId"] = serde_json::Value::String(self.request_id.clone());
                    serde_json::to_vec(&value).unwrap_or(body)
                }
                Err(_) => body,
            }
        } else {
            body
        };
        Reply::raw_json(status, body).with_header("idempotent-replayed", "true")
    }
}

/// Renders warp's own rejections (unknown routes, wrong methods) in the one error shape.
pub async fn recover(rejection: warp::Rejection) -> Result<Response, Infallible> {
    let error = if rejection.is_not_found() {
        ApiError::RouteNotFound
    } else if rejection.find::<warp::reject::MethodNotAllowed>().is_some() {
        ApiError::MethodNotAllowed
    } else if rejection.find::<warp::reject::PayloadTooLarge>().is_some() {
        ApiError::PayloadTooLarge {
            size: 0,
            limit: examkit_engine::limits::MAX_DOCUMENT_BYTES,
        }
    } else if rejection
        .find::<warp::reject::UnsupportedMediaType>()
        .is_some()
    {
        ApiError::UnsupportedMediaType("unsupported content type".into())
    } else if rejection.find::<warp::reject::InvalidQuery>().is_some() {
        ApiError::InvalidQuery("the query string is invalid".into())
    } else if rejection.find::<warp::reject::InvalidHeader>().is_some()
        || rejection.find::<warp::reject::MissingHeader>().is_some()
    {
        ApiError::InvalidBody("a header is missing or invalid".into())
    } else {
        tracing::warn!(?rejection, "unhandled rejection");
        ApiError::Internal
    };
    let request_id = new_request_id();
    let mut response = build(error.status(), "application/json", error.body(&request_id));
    set_header(&mut response, "x-request-id", &request_id);
    tracing::info!(request_id = %request_id, status = error.status().as_u16(), code = error.code(), "request rejected");
    Ok(response)
}

fn into_response<R: warp::Reply>(reply: R) -> Response {
    reply.into_response()
}

/// Every route of the API, with errors rendered by [`recover`].
pub fn routes(state: Arc<AppState>) -> BoxedFilter<(Response,)> {
    let api = me::routes(state.clone())
        .or(imports::routes(state.clone()))
        .unify()
        .or(marking::routes(state.clone()))
        .unify()
        .or(sessions::routes(state.clone()))
        .unify()
        .or(questions::routes(state.clone()))
        .unify()
        .or(papers::routes(state.clone()))
        .unify()
        .or(class_sets::routes(state.clone()))
        .unify()
        .or(results::routes(state.clone()))
        .unify()
        .or(docs::routes())
        .unify()
        .or(health::routes(state.clone()))
        .unify()
        .recover(recover)
        .map(into_response);
    // Every 405 says which methods the path accepts.
    warp::path::full()
        .and(api)
        .map(|path: warp::path::FullPath, mut response: Response| {
            if response.status() == StatusCode::METHOD_NOT_ALLOWED
                && let Some(methods) = allow::allowed(path.as_str())
            {
                set_header(&mut response, "allow", &methods);
            }
            response
        })
        .boxed()
}
