//! The signed-in app for teachers, at `/app/`: sign in, API keys and their usage, the review
//! page for marked work, and class sets' stacks and marking.
//!
//! Pages are rendered on the server with `maud` (escaped by default, checked at compile time, no
//! template files to keep in step) and work without JavaScript; one small script adds the review
//! page's keyboard, selection, zoom and in-place saving. Styles and scripts are inside the binary.
//!
//! The app reads and writes through the same store functions as `/v1` (and saves decisions
//! through [`crate::review`], the path of `PATCH /v1/marking/questions/{id}`), so no rule is
//! written twice. It authenticates only by its own browser session ([`session`]); `/v1`
//! authenticates only by API key, so neither credential opens the other.

pub mod assets;
pub mod bank;
pub mod class_sets;
pub mod client;
pub mod content;
pub mod covers;
pub mod keys;
pub mod layout;
pub mod limits;
pub mod math;
pub mod pages;
pub mod papers;
pub mod problems;
pub mod results;
pub mod review;
pub mod session;
pub mod setup;
pub mod sign_in;
pub mod uploads;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;

use bytes::Bytes;
use maud::Markup;
use warp::Filter;
use warp::filters::BoxedFilter;
use warp::http::header::{HeaderMap, HeaderName, HeaderValue};
use warp::http::{Method, StatusCode};
use warp::reply::Response;

use crate::config::AppConfig;
use crate::error::ApiError;
use crate::server::state::AppState;
use crate::store::StoreError;
use crate::store::accounts::User;
use crate::store::app_sessions::AppSession;

/// Whether the first-run page ([`setup`]) is offered: the service has a setup token and no
/// account exists. The sign-in page and `/` send a browser to it while it is.
pub async fn setup_offered(visit: &Visit) -> Result<bool, AppError> {
    if visit.state.app.setup_token.is_none() {
        return Ok(false);
    }
    Ok(!visit.state.store.has_accounts().await?)
}

/// Whether a request says it reached a proxy over HTTPS (`X-Forwarded-Proto: https`, the first
/// proxy's value when several are listed) while this service's cookies are not `Secure`: a
/// deployment behind a TLS proxy that has not been given `--public-url https://…`.
pub fn forwarded_https_without_secure_cookies(config: &AppConfig, headers: &HeaderMap) -> bool {
    !config.secure_cookies
        && headers
            .get_all("x-forwarded-proto")
            .iter()
            .next()
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .is_some_and(|proto| proto.trim().eq_ignore_ascii_case("https"))
}

/// Logs, once per process, that a request came through an HTTPS proxy while cookies are not
/// `Secure`, naming the flag that fixes it.
fn warn_forwarded_https(config: &AppConfig, headers: &HeaderMap) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if forwarded_https_without_secure_cookies(config, headers) && !WARNED.swap(true, Relaxed) {
        tracing::warn!(
            "a request arrived with X-Forwarded-Proto: https, but the app's cookies are not Secure: \
             start examkit with --public-url https://… (EXAMKIT_PUBLIC_URL); logged once"
        );
    }
}

/// Why an app request failed; each renders as a page with its status.
#[derive(Debug)]
pub enum AppError {
    /// No signed-in session: pages redirect to sign-in, other requests get 401.
    SignInRequired,
    /// A state-changing request without this session's CSRF token.
    Csrf,
    /// Nothing of this account has this id (other accounts' ids included).
    NotFound(&'static str),
    /// A form that cannot be read.
    BadForm(String),
    /// An error of the shared registry (the review path's, the store's).
    Api(ApiError),
}

impl From<ApiError> for AppError {
    fn from(e: ApiError) -> Self {
        match e {
            ApiError::NotFound(what) => AppError::NotFound(what),
            other => AppError::Api(other),
        }
    }
}

impl From<StoreError> for AppError {
    fn from(e: StoreError) -> Self {
        AppError::Api(ApiError::from(e))
    }
}

/// One request to the app.
#[derive(Clone)]
pub struct Visit {
    /// The service state.
    pub state: Arc<AppState>,
    /// The method.
    pub method: Method,
    /// The path.
    pub path: String,
    /// The query string, if any.
    pub query: String,
    /// The request headers.
    pub headers: HeaderMap,
    /// The TCP peer's address.
    pub remote: Option<SocketAddr>,
    /// The client's address: the peer, or the client trusted proxies name ([`client::resolve`]).
    pub client: Option<IpAddr>,
}

/// A signed-in visit: the session and its account.
#[derive(Clone)]
pub struct Signed {
    /// The request.
    pub visit: Visit,
    /// The session.
    pub session: AppSession,
    /// The account.
    pub user: User,
}

impl Visit {
    /// The value of cookie `name`, if sent.
    pub fn cookie(&self, name: &str) -> Option<String> {
        self.headers
            .get_all(warp::http::header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_owned())
    }

    /// Whether the page's script sent this request (it wants a fragment back, not a redirect).
    pub fn from_script(&self) -> bool {
        self.headers
            .get("x-requested-with")
            .is_some_and(|v| v.as_bytes() == b"fetch")
    }

    /// The query's parameters.
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        form_urlencoded::parse(self.query.as_bytes())
            .into_owned()
            .collect()
    }

    /// One query parameter.
    pub fn query_param(&self, name: &str) -> Option<String> {
        self.query_pairs()
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }
}

/// A submitted form's fields, in order (a checkbox list repeats its name).
#[derive(Debug, Default)]
pub struct Form(pub Vec<(String, String)>);

impl Form {
    /// Parses an `application/x-www-form-urlencoded` body.
    pub fn parse(body: &[u8]) -> Form {
        Form(form_urlencoded::parse(body).into_owned().collect())
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `name`.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// The most bytes a form body may have.
pub const MAX_FORM_BYTES: u64 = 64 * 1024;

/// The Content-Security-Policy of every app response: scripts, styles, images and requests only
/// from this origin, no inline script or style, never framed.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
     connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

fn header(response: &mut Response, name: &'static str, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        response
            .headers_mut()
            .insert(HeaderName::from_static(name), value);
    }
}

/// Adds the headers every app response carries.
fn secure(mut response: Response) -> Response {
    header(&mut response, "content-security-policy", CSP);
    header(&mut response, "x-frame-options", "DENY");
    header(&mut response, "x-content-type-options", "nosniff");
    header(&mut response, "referrer-policy", "same-origin");
    header(&mut response, "cross-origin-opener-policy", "same-origin");
    if !response.headers().contains_key("cache-control") {
        header(&mut response, "cache-control", "no-store");
    }
    response
}

/// What the app tells teachers while automated marking is held back because the marker has not
/// qualified or has drifted (see [`crate::marking::qualification`]); `None` while it marks, when
/// automated marking is off, or when the standing cannot be read.
pub async fn marker_held(signed: &Signed) -> Option<String> {
    let state = &signed.visit.state;
    if !state.marking.enabled || state.marking.qualify.is_none() {
        return None;
    }
    match crate::marking::qualification::standing(&state.store, &state.marking).await {
        Ok(standing) => standing.notice(),
        Err(e) => {
            tracing::warn!(error = %e, "the marker's qualification cannot be read");
            None
        }
    }
}

/// A page of HTML.
pub fn html(status: StatusCode, markup: Markup) -> Response {
    let mut response = Response::new(markup.into_string().into());
    *response.status_mut() = status;
    header(&mut response, "content-type", "text/html; charset=utf-8");
    response
}

/// A `303 See Other` to `location`.
pub fn see_other(location: &str) -> Response {
    let mut response = Response::new(Vec::new().into());
    *response.status_mut() = StatusCode::SEE_OTHER;
    header(&mut response, "location", location);
    response
}

/// Adds a `Set-Cookie` header.
pub fn set_cookie(response: &mut Response, cookie: &str) {
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response
            .headers_mut()
            .append(warp::http::header::SET_COOKIE, value);
    }
}

impl AppError {
    fn render(self, visit: &Visit) -> Response {
        match self {
            AppError::SignInRequired => {
                if visit.method == Method::GET && !visit.from_script() {
                    let next: String =
                        form_urlencoded::byte_serialize(visit.path.as_bytes()).collect();
                    see_other(&format!("/app/sign-in?next={next}"))
                } else {
                    layout::error_page(
                        StatusCode::UNAUTHORIZED,
                        "Sign in needed",
                        "Your session has ended. Sign in again, then repeat what you were doing.",
                    )
                }
            }
            AppError::Csrf => layout::error_page(
                StatusCode::FORBIDDEN,
                "The form could not be accepted",
                "The form was not sent from this page of examkit, or it is too old. Go back, reload the page and try again.",
            ),
            AppError::NotFound(what) => layout::error_page(
                StatusCode::NOT_FOUND,
                "Not found",
                &format!("There is no {what} with this address in your account."),
            ),
            AppError::BadForm(message) => {
                layout::error_page(StatusCode::BAD_REQUEST, "The form is not right", &message)
            }
            AppError::Api(e) => {
                if matches!(e, ApiError::Internal) {
                    tracing::error!(path = %visit.path, "an app request failed");
                }
                let (title, message) = match e.retry_after() {
                    Some(seconds) if e.status() == StatusCode::TOO_MANY_REQUESTS => (
                        "Too many requests",
                        format!(
                            "This account has asked for too much at once. Try again in {seconds} seconds."
                        ),
                    ),
                    Some(seconds) => (
                        "Busy",
                        format!(
                            "{}. Try again in {seconds} seconds.",
                            capitalised(&e.message())
                        ),
                    ),
                    None => ("Something went wrong", e.message()),
                };
                let mut response = layout::error_page(e.status(), title, &message);
                if let Some(seconds) = e.retry_after() {
                    response.headers_mut().insert(
                        warp::http::header::RETRY_AFTER,
                        warp::http::HeaderValue::from(seconds.max(1)),
                    );
                }
                response
            }
        }
    }
}

/// `text` with its first letter in capitals.
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn visit(
    state: Arc<AppState>,
) -> impl Filter<Extract = (Visit,), Error = std::convert::Infallible> + Clone {
    warp::any()
        .map(move || state.clone())
        .and(warp::method())
        .and(warp::path::full())
        .and(warp::query::raw().or(warp::any().map(String::new)).unify())
        .and(warp::header::headers_cloned())
        .and(warp::addr::remote())
        .map(
            |state: Arc<AppState>,
             method,
             path: warp::path::FullPath,
             query,
             headers: HeaderMap,
             remote: Option<SocketAddr>| {
                let client = client::resolve(remote, &headers, &state.app.trusted_proxies);
                Visit {
                    state,
                    method,
                    path: path.as_str().to_owned(),
                    query,
                    headers,
                    remote,
                    client,
                }
            },
        )
}

/// Runs a handler and finishes its response (errors as pages, the security headers).
async fn finish(visit: Visit, result: Result<Response, AppError>) -> Response {
    warn_forwarded_https(&visit.state.app, &visit.headers);
    let mut response = match result {
        Ok(response) => response,
        Err(e) => e.render(&visit),
    };
    response
        .extensions_mut()
        .insert(crate::telemetry::Route("/app"));
    secure(response)
}

/// Every route of the app, and `/`, which sends a browser to it.
pub fn routes(state: Arc<AppState>) -> BoxedFilter<(Response,)> {
    let root = warp::path::end()
        .and(warp::get().or(warp::head()).unify())
        .map(|| {
            let mut response = secure(see_other("/app/"));
            response
                .extensions_mut()
                .insert(crate::telemetry::Route("/"));
            response
        });
    // Scans come as a form with files, larger than any other form: a route of their own.
    let scans = warp::path!("app" / "class-sets" / String / "scans")
        .and(warp::post())
        .and(visit(state.clone()))
        .and(crate::http::body())
        .then(
            |id: String, visit: Visit, body: crate::http::Body| async move {
                let result = uploads::receive(visit.clone(), id, body).await;
                finish(visit, result).await
            },
        );
    let app = warp::path("app")
        .and(warp::path::tail())
        .and(visit(state))
        .and(
            warp::body::content_length_limit(MAX_FORM_BYTES)
                .and(warp::body::bytes())
                .or(warp::any().map(Bytes::new))
                .unify(),
        )
        .then(
            |tail: warp::path::Tail, visit: Visit, body: Bytes| async move {
                let segments: Vec<String> = tail
                    .as_str()
                    .split('/')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect();
                let result = dispatch(visit.clone(), segments, body).await;
                finish(visit, result).await
            },
        );
    root.or(scans).unify().or(app).unify().boxed()
}

async fn dispatch(visit: Visit, path: Vec<String>, body: Bytes) -> Result<Response, AppError> {
    let segments: Vec<&str> = path.iter().map(String::as_str).collect();
    let get = visit.method == Method::GET || visit.method == Method::HEAD;
    let post = visit.method == Method::POST;
    match (segments.as_slice(), get, post) {
        ([], true, _) => {
            let signed = session::signed_in(&visit).await?;
            Ok(see_other(if signed.is_some() {
                "/app/sessions"
            } else if setup_offered(&visit).await? {
                "/app/setup"
            } else {
                "/app/sign-in"
            }))
        }
        (["static", name], true, _) => assets::serve(name).ok_or(AppError::NotFound("file")),
        (["sign-in"], true, _) => sign_in::form(visit).await,
        (["setup"], true, _) => setup::form(visit).await,
        (["setup"], _, true) => setup::submit(visit, Form::parse(&body)).await,
        (["sign-in"], _, true) => sign_in::submit(visit, Form::parse(&body)).await,
        (["sign-out"], _, true) => sign_in::sign_out(visit, Form::parse(&body)).await,
        _ => {
            let signed = session::require(&visit).await?;
            if post {
                let form = Form::parse(&body);
                session::check_csrf(&signed, &form)?;
                limits::admit(&signed, limits::weight(&segments, true)).await?;
                signed_post(signed, &segments, form).await
            } else if get {
                limits::admit(&signed, limits::weight(&segments, false)).await?;
                signed_get(signed, &segments).await
            } else {
                Err(AppError::NotFound("page"))
            }
        }
    }
}

async fn signed_get(signed: Signed, path: &[&str]) -> Result<Response, AppError> {
    match path {
        ["keys"] => keys::list(signed, None).await,
        ["keys", id] => keys::usage(signed, id).await,
        ["keys", id, "revoke"] => keys::confirm_revoke(signed, id).await,
        ["sessions"] => review::sessions(signed).await,
        ["sessions", id] => review::session(signed, id).await,
        ["sets", paper, revision] => review::set(signed, paper, revision).await,
        ["sets", paper, revision, "questions", label] => {
            review::set_question(signed, paper, revision, label).await
        }
        ["questions", id] => review::question(signed, id).await,
        ["pages", asset, page] => pages::page(signed, asset, page).await,
        ["bank"] => bank::search(signed).await,
        ["bank", question, revision, "diagrams", asset] => {
            bank::diagram(signed, question, revision, asset).await
        }
        ["papers"] => papers::list(signed).await,
        ["papers", id] => papers::show(signed, id).await,
        ["papers", id, "revisions", revision] => papers::revision(signed, id, revision).await,
        ["papers", id, "revisions", revision, file] => {
            papers::pdf(signed, id, revision, file).await
        }
        ["class-sets"] => class_sets::list(signed).await,
        ["class-sets", id] => class_sets::show(signed, id).await,
        ["class-sets", id, "results"] => results::show(signed, id).await,
        ["class-sets", id, "covers", copy] => covers::cover(signed, id, copy).await,
        ["class-sets", id, file @ ("print.pdf" | "extra-sheet.pdf")] => {
            class_sets::print_file(signed, id, file).await
        }
        ["class-sets", id, file] => results::download(signed, id, file).await,
        _ => Err(AppError::NotFound("page")),
    }
}

async fn signed_post(signed: Signed, path: &[&str], form: Form) -> Result<Response, AppError> {
    match path {
        ["keys"] => keys::create(signed, form).await,
        ["keys", id, "revoke"] => keys::revoke(signed, id).await,
        ["questions", id, "decide"] => review::decide(signed, id, form).await,
        ["papers"] => papers::create(signed, form).await,
        ["papers", id] => papers::change(signed, id, form).await,
        ["papers", id, "add"] => papers::add(signed, id, form).await,
        ["papers", id, "revisions", revision, "class-set"] => {
            papers::print(signed, id, revision, form).await
        }
        ["class-sets", id, "decide"] => class_sets::decide(signed, id, form).await,
        ["class-sets", id, "start"] => class_sets::start(signed, id, form).await,
        ["sign-out-everywhere"] => sign_in::sign_out_everywhere(signed).await,
        _ => Err(AppError::NotFound("page")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarded_https_is_noticed_only_while_cookies_are_not_secure() {
        let headers = |values: &[&str]| {
            let mut map = HeaderMap::new();
            for v in values {
                map.append(
                    "x-forwarded-proto",
                    HeaderValue::from_str(v).expect("value"),
                );
            }
            map
        };
        let plain = AppConfig {
            secure_cookies: false,
            ..AppConfig::default()
        };
        let secure = AppConfig::default();
        for sent in [
            &["https"][..],
            &["HTTPS"],
            &[" https , http"],
            &["https", "http"],
        ] {
            assert!(
                forwarded_https_without_secure_cookies(&plain, &headers(sent)),
                "{sent:?}"
            );
            assert!(
                !forwarded_https_without_secure_cookies(&secure, &headers(sent)),
                "{sent:?}"
            );
        }
        for sent in [
            &[][..],
            &["http"],
            &["http, https"],
            &[""],
            &["httpsx"],
            &["wss"],
        ] {
            assert!(
                !forwarded_https_without_secure_cookies(&plain, &headers(sent)),
                "{sent:?}"
            );
        }
        // A value that is not text is not HTTPS.
        let mut odd = HeaderMap::new();
        odd.insert(
            "x-forwarded-proto",
            HeaderValue::from_bytes(b"\xffhttps").expect("value"),
        );
        assert!(!forwarded_https_without_secure_cookies(&plain, &odd));
    }
}
