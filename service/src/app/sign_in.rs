//! Signing in and out.
//!
//! Sign-in attempts are counted per account and per client address ([`client::subject`]: an IPv6
//! client per /64) in the database (so every instance counts the same ones), in fixed windows,
//! before any password is checked; past the limit, sign-in is refused until the window ends,
//! whatever the password. An attempt that succeeds, or whose password is never checked, takes its
//! count back, so the limits are on failed sign-ins (see [`submit`]). An unknown email costs the
//! time of a password check, and gets the same answer as a wrong password.

use maud::html;
use sha2::{Digest, Sha256};
use warp::http::StatusCode;
use warp::http::header::{HeaderValue, RETRY_AFTER};
use warp::reply::Response;

use super::layout::{Section, page};
use super::session::{self, CSRF_FIELD};
use super::{AppError, Form, Signed, Visit, client, html, see_other, set_cookie};
use crate::error::ApiError;
use crate::password::checks::{self, CheckError};
use crate::store::accounts::{User, normalise_email};
use crate::store::app_sessions::{Window, window_end};
use crate::store::now_ms;

/// Where to go after signing in: a path of the app, never another site.
fn next_path(raw: Option<&str>) -> String {
    match raw {
        Some(path)
            if path.starts_with("/app/")
                && !path.starts_with("/app//")
                && !path.contains('\\')
                && !path.contains("/app/sign-") =>
        {
            path.to_owned()
        }
        _ => "/app/sessions".to_owned(),
    }
}

fn render(
    visit: &Visit,
    status: StatusCode,
    token: &str,
    email: &str,
    next: &str,
    message: Option<&str>,
) -> Response {
    let body = html! {
        div.narrow {
            h1 { "Sign in to examkit" }
            @if let Some(message) = message {
                p.error role="alert" #sign-in-error { (message) }
            }
            form method="post" action="/app/sign-in" {
                input type="hidden" name=(CSRF_FIELD) value=(token);
                input type="hidden" name="next" value=(next);
                p {
                    label for="email" { "Email" }
                    input #email type="email" name="email" autocomplete="username" required value=(email);
                }
                p {
                    label for="password" { "Password" }
                    input #password type="password" name="password" autocomplete="current-password" required;
                }
                p { button type="submit" { "Sign in" } }
            }
            p.hint { "Accounts are made by the person who runs examkit (" code { "examkit users create" } ")." }
        }
    };
    form_page(visit, status, "Sign in", body, token)
}

/// A page with a form sent before signing in (sign-in, first run): its double-submit CSRF
/// cookie holds `token`, for an hour.
pub(super) fn form_page(
    visit: &Visit,
    status: StatusCode,
    title: &str,
    body: maud::Markup,
    token: &str,
) -> Response {
    let mut response = html(status, page(title, None, Section::None, body));
    set_cookie(
        &mut response,
        &session::cookie(visit, session::sign_in_cookie_name(visit), token, 3600),
    );
    response
}

/// `GET /app/sign-in`: the form, with a fresh CSRF cookie.
pub async fn form(visit: Visit) -> Result<Response, AppError> {
    if session::signed_in(&visit).await?.is_some() {
        return Ok(see_other(&next_path(visit.query_param("next").as_deref())));
    }
    if super::setup_offered(&visit).await? {
        return Ok(see_other("/app/setup"));
    }
    let token = session::random_token()?;
    let next = next_path(visit.query_param("next").as_deref());
    Ok(render(&visit, StatusCode::OK, &token, "", &next, None))
}

fn account_subject(email: &str) -> String {
    let digest = Sha256::digest(email.as_bytes());
    let hex: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    format!("account:{hex}")
}

/// Until when a window's limit holds, as the page says it.
fn limited(window: Window, now: i64) -> String {
    format!(
        "Too many failed sign-ins. Try again after {}.",
        super::layout::when(window_end(window, now))
    )
}

fn account_paused(window: Window, now: i64) -> String {
    format!(
        "{} Sign-in to this account is paused for a while to protect it.",
        limited(window, now)
    )
}

/// Whether the visit's browser carries the device cookie of a browser that signed in to the
/// account of `email` before.
async fn known_device(visit: &Visit, email: &str, now: i64) -> Result<bool, AppError> {
    let Some(secret) = visit
        .cookie(session::device_cookie_name(visit))
        .filter(|s| !s.is_empty() && s.len() <= 128)
    else {
        return Ok(false);
    };
    let store = &visit.state.store;
    let Some((user, _)) = store.user_by_email(email).await? else {
        return Ok(false);
    };
    Ok(store
        .knows_device(&session::hash(&secret), &user.id, now)
        .await?)
}

/// What a sign-in attempt is counted against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Counted {
    /// The account, from this client address: the exact limit of guesses.
    AccountHere,
    /// The account, from every address: a much higher ceiling, which a browser that signed in
    /// to the account before is not counted against.
    Account,
    /// The client address, over every account.
    Address,
}

/// One sign-in attempt, counted against its account from its address, its account (unless the
/// browser signed in to it before) and its client address before any password is checked
/// ([`crate::store::Store::count_sign_in_attempt`]). Anyone can guess at a known email from
/// anywhere: counting the account's failures per address keeps that from locking its teacher
/// out everywhere, and the account-wide ceiling still bounds guesses spread over many addresses
/// without holding the teacher's own browser.
struct Attempt {
    subjects: Vec<(Counted, String, Window)>,
    /// The counts the attempt got, in the order of `subjects` (shorter when a count refused it).
    counts: Vec<i64>,
    /// When it was counted, which names its windows.
    now: i64,
}

impl Attempt {
    /// Counts an attempt to sign in as `email` from the visit's client.
    async fn counted(visit: &Visit, email: &str) -> Result<Attempt, AppError> {
        let config = &visit.state.app;
        let now = now_ms();
        let account = account_subject(email);
        let address = client::subject(visit.client);
        let mut subjects = vec![(
            Counted::AccountHere,
            format!("{account}@{address}"),
            config.account_failures,
        )];
        if !known_device(visit, email, now).await? {
            subjects.push((Counted::Account, account, config.account_ceiling));
        }
        subjects.push((Counted::Address, address, config.address_failures));
        let mut attempt = Attempt {
            subjects,
            counts: Vec::new(),
            now,
        };
        attempt.counts = visit
            .state
            .store
            .count_sign_in_attempt(&attempt.windows(), now)
            .await?;
        Ok(attempt)
    }

    fn windows(&self) -> Vec<(&str, Window)> {
        self.subjects
            .iter()
            .map(|(_, subject, window)| (subject.as_str(), *window))
            .collect()
    }

    /// The count against the account from this address.
    fn here(&self) -> i64 {
        self.counts.first().copied().unwrap_or(0)
    }

    /// The page's message when a count is over its limit.
    fn over_limit(&self, config: &super::AppConfig) -> Option<String> {
        let over = self
            .subjects
            .iter()
            .zip(&self.counts)
            .find(|((_, _, window), count)| **count > window.limit)?;
        Some(match over.0.0 {
            Counted::AccountHere => account_paused(config.account_failures, self.now),
            Counted::Account => account_paused(config.account_ceiling, self.now),
            Counted::Address => format!(
                "{} Sign-in from your network is paused for a while.",
                limited(config.address_failures, self.now)
            ),
        })
    }

    /// Takes the attempt back: its password was right, or never checked.
    async fn take_back(&self, visit: &Visit) -> Result<(), AppError> {
        visit
            .state
            .store
            .take_back_sign_in_attempt(&self.windows(), self.now)
            .await?;
        Ok(())
    }
}

/// What asking a signed-in account for its password again found.
pub enum Confirmed {
    /// The password is the account's.
    Yes,
    /// It is not: the page's message.
    No(String),
    /// The account's (or the address's) sign-in is paused; it was not checked: the page's
    /// message, saying until when.
    Paused(String),
    /// No permit for the check came free in time: try again after this wait.
    Busy(std::time::Duration),
}

/// Checks `password` against the signed-in account's, under the same rules as signing in: the
/// attempt counts against the account's (and the client address's) failed sign-ins before the
/// password is checked, a paused account is refused unchecked, the check waits for one of the
/// process's permits, and only a wrong password stays counted. So a stolen session cannot be
/// used to guess the password faster than the sign-in form allows.
pub async fn confirm_password(signed: &Signed, password: &str) -> Result<Confirmed, AppError> {
    let visit = &signed.visit;
    let Some(email) = signed.user.email.as_deref().and_then(normalise_email) else {
        return Ok(Confirmed::No("The password is not right.".into()));
    };
    let store = &visit.state.store;
    let attempt = Attempt::counted(visit, &email).await?;
    if let Some(message) = attempt.over_limit(&visit.state.app) {
        return Ok(Confirmed::Paused(message));
    }
    let stored = match store.user_by_email(&email).await? {
        Some((user, hash)) if user.id == signed.user.id => hash,
        _ => None,
    };
    match checks::verify(password.to_owned(), stored).await {
        Ok(true) => {
            attempt.take_back(visit).await?;
            Ok(Confirmed::Yes)
        }
        Ok(false) => Ok(Confirmed::No("The password is not right.".into())),
        Err(CheckError::Busy { retry_after }) => {
            attempt.take_back(visit).await?;
            Ok(Confirmed::Busy(retry_after))
        }
        Err(CheckError::Failed(_)) => Err(AppError::Api(ApiError::Internal)),
    }
}

/// `POST /app/sign-in`.
///
/// The attempt is counted against its account and its client address before anything else
/// ([`crate::store::Store::count_sign_in_attempt`]), and the password is checked only when both
/// counts are within their limits, so no more than a limit's passwords are checked per window
/// however many attempts arrive at once. An attempt whose password was right, or was never
/// checked (no permit came free: `503` with `Retry-After`), takes its count back, so the counts
/// hold failed attempts (and those being checked or refused at the limit). The check itself waits
/// for one of the process's permits ([`crate::password::checks`]).
pub async fn submit(visit: Visit, form: Form) -> Result<Response, AppError> {
    let cookie = visit.cookie(session::sign_in_cookie_name(&visit));
    let sent = form.get(CSRF_FIELD).unwrap_or_default();
    match cookie {
        Some(cookie) if !sent.is_empty() && session::same(&cookie, sent) => {}
        _ => return Err(AppError::Csrf),
    }
    let next = next_path(form.get("next"));
    let raw_email = form.get("email").unwrap_or_default().trim().to_owned();
    let password = form.get("password").unwrap_or_default().to_owned();
    let token = session::random_token()?;
    let refuse =
        |status, message: &str| render(&visit, status, &token, &raw_email, &next, Some(message));
    let Some(email) = normalise_email(&raw_email) else {
        return Ok(refuse(
            StatusCode::BAD_REQUEST,
            "Enter the email address your account signs in with.",
        ));
    };
    if password.is_empty() {
        return Ok(refuse(StatusCode::BAD_REQUEST, "Enter your password."));
    }
    let config = &visit.state.app;
    let store = &visit.state.store;
    let attempt = Attempt::counted(&visit, &email).await?;
    let now = attempt.now;
    if let Some(message) = attempt.over_limit(config) {
        return Ok(refuse(StatusCode::TOO_MANY_REQUESTS, &message));
    }

    let found = store.user_by_email(&email).await?;
    let stored = found.as_ref().and_then(|(_, hash)| hash.clone());
    let checked = match checks::verify(password, stored).await {
        Ok(checked) => checked,
        Err(CheckError::Busy { retry_after }) => {
            attempt.take_back(&visit).await?;
            let mut response = refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                "Many people are signing in at this moment. Try again in a few seconds.",
            );
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(retry_after.as_secs()));
            return Ok(response);
        }
        Err(CheckError::Failed(_)) => return Err(AppError::Api(ApiError::Internal)),
    };
    let user = match found {
        Some((user, _)) if checked => user,
        _ => {
            let left = config.account_failures.limit - attempt.here();
            let message = if left <= 0 {
                format!(
                    "The email or password is not right. {}",
                    account_paused(config.account_failures, now)
                )
            } else {
                "The email or password is not right.".to_owned()
            };
            return Ok(refuse(StatusCode::UNAUTHORIZED, &message));
        }
    };
    // The right password: not a failed guess.
    attempt.take_back(&visit).await?;
    if !user.verified {
        return Ok(refuse(
            StatusCode::FORBIDDEN,
            "This account is not verified yet, so it cannot sign in. Ask the person who runs examkit to verify it.",
        ));
    }
    if user.restricted {
        return Ok(refuse(
            StatusCode::FORBIDDEN,
            "This account is restricted, so it cannot sign in or use its keys. Ask the person who runs examkit why.",
        ));
    }
    start_session(&visit, &user, &next, now).await
}

/// Signs `user` in on this browser (after its password was checked, or its account made): a
/// fresh session (one sent with the request ends), the sign-in cookie cleared, and the browser
/// remembered for the account; then on to `next`.
pub(super) async fn start_session(
    visit: &Visit,
    user: &User,
    next: &str,
    now: i64,
) -> Result<Response, AppError> {
    let store = &visit.state.store;
    // A fresh session at every sign-in; one sent with the request ends.
    if let Some(old) = visit.cookie(session::cookie_name(visit)) {
        store.end_app_session(&session::hash(&old)).await?;
    }
    let (secret, created) = session::create(visit, &user.id).await?;
    let mut response = see_other(next);
    let max_age = (created.expires_at - created.created_at) / 1000;
    set_cookie(
        &mut response,
        &session::cookie(visit, session::cookie_name(visit), &secret, max_age),
    );
    set_cookie(
        &mut response,
        &session::cookie(visit, session::sign_in_cookie_name(visit), "", 0),
    );
    // This browser is remembered for the account: a flood of failures elsewhere never holds it.
    let device = session::random_token()?;
    store
        .remember_device(
            &session::hash(&device),
            &user.id,
            now,
            now + session::DEVICE_MS,
        )
        .await?;
    set_cookie(
        &mut response,
        &session::cookie(
            visit,
            session::device_cookie_name(visit),
            &device,
            session::DEVICE_MS / 1000,
        ),
    );
    tracing::info!(user = %user.id, "signed in to the app");
    Ok(response)
}

/// `POST /app/sign-out`: ends this session (in the database, so on every instance).
pub async fn sign_out(visit: Visit, form: Form) -> Result<Response, AppError> {
    let signed = session::require(&visit).await?;
    session::check_csrf(&signed, &form)?;
    visit
        .state
        .store
        .end_app_session(&signed.session.id_hash)
        .await?;
    Ok(signed_out(&visit))
}

/// `POST /app/sign-out-everywhere`: ends every session of the account.
pub async fn sign_out_everywhere(signed: Signed) -> Result<Response, AppError> {
    signed
        .visit
        .state
        .store
        .end_app_sessions_of(&signed.user.id)
        .await?;
    Ok(signed_out(&signed.visit))
}

fn signed_out(visit: &Visit) -> Response {
    let mut response = see_other("/app/sign-in");
    set_cookie(
        &mut response,
        &session::cookie(visit, session::cookie_name(visit), "", 0),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::next_path;

    #[test]
    fn only_app_paths_are_followed_after_sign_in() {
        assert_eq!(next_path(Some("/app/keys")), "/app/keys");
        for bad in [
            "https://evil.test/",
            "//evil.test/app/",
            "/app//evil.test",
            "/v1/me",
            "/app/\\evil",
            "/app/sign-in",
            "",
        ] {
            assert_eq!(next_path(Some(bad)), "/app/sessions", "{bad}");
        }
        assert_eq!(next_path(None), "/app/sessions");
    }
}
