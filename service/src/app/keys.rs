//! API keys: the list, making a key (its secret shown once), revoking one, and a key's usage;
//! and the button that ends every browser session of the account.
//!
//! Making a key asks for the password again when the session's sign-in is older than
//! [`super::AppConfig::reauth_ms`] (10 minutes): a session cookie taken from an unattended
//! browser does not mint a key that outlives it. A missing or wrong password is refused with
//! `401` and the form shown again; nothing is made.

use maud::{Markup, html};
use warp::http::StatusCode;
use warp::reply::Response;

use super::layout::{Section, csrf, page, when};
use super::sign_in::Confirmed;
use super::{AppError, Form, Signed, html, see_other};
use crate::auth::{self, Scope};
use crate::config::Expiry;
use crate::store::accounts::{ApiKey, CreateKeyError, MAX_ACTIVE_KEYS};
use crate::store::now_ms;
use crate::store::usage::{SHOWN_DAYS, UsageRow};

/// The longest key name.
pub const MAX_NAME_CHARS: usize = 100;

/// What a scope lets a key do, as the key form explains it.
pub fn meaning(scope: Scope) -> &'static str {
    match scope {
        Scope::QuestionsRead => {
            "Search published questions; read their content, schemes and diagrams."
        }
        Scope::PapersRead => "Read saved papers and their prepared PDFs.",
        Scope::PapersWrite => "Create and change papers; prepare PDFs.",
        Scope::MarkingRead => "Read uploaded scans, marking sessions and results.",
        Scope::MarkingSubmit => "Upload students' work and ask for automated marking.",
        Scope::MarkingImport => "Upload and submit work marked elsewhere.",
        Scope::MarkingReview => "Change existing mark decisions and annotations.",
    }
}

const EXPIRIES: &[(&str, &str, Expiry)] = &[
    ("30d", "30 days", Expiry::Days30),
    ("90d", "90 days", Expiry::Days90),
    ("1y", "One year", Expiry::Year),
];

/// The key's owner's key `id`, or 404 (another account's key included).
async fn own_key(signed: &Signed, id: &str) -> Result<ApiKey, AppError> {
    let id = crate::http::parse_id(id, "API key").map_err(|_| AppError::NotFound("API key"))?;
    match signed.visit.state.store.key(&id).await? {
        Some(key) if key.user_id == signed.user.id => Ok(key),
        _ => Err(AppError::NotFound("API key")),
    }
}

/// A key's fingerprint as shown: the first 16 hexadecimal digits of its SHA-256.
fn short_fingerprint(key: &ApiKey) -> String {
    format!(
        "sha256:{}",
        key.fingerprint.get(..16).unwrap_or(&key.fingerprint)
    )
}

/// Whether making a key needs the password again: the session's sign-in is too old.
fn reauth_needed(signed: &Signed) -> bool {
    now_ms() - signed.session.created_at >= signed.visit.state.app.reauth_ms
}

/// Why the key form is shown again: the status, the message and what was sent.
pub struct Refused<'a> {
    /// `422` for a form that is not right, `401` for a missing or wrong password.
    pub status: StatusCode,
    /// What to change.
    pub message: &'a str,
    /// The name sent.
    pub name: &'a str,
    /// The scopes chosen.
    pub chosen: Vec<&'a str>,
}

fn create_form(signed: &Signed, error: Option<&str>, name: &str, chosen: &[&str]) -> Markup {
    let minutes = signed.visit.state.app.reauth_ms / 60_000;
    html! {
        section aria-labelledby="new-key" {
            h2 #new-key { "Make a key" }
            @if let Some(error) = error {
                p.error role="alert" #key-error { (error) }
            }
            form method="post" action="/app/keys" {
                (csrf(signed))
                p {
                    label for="key-name" { "Name" }
                    input #key-name name="name" required maxlength=(MAX_NAME_CHARS) value=(name)
                        aria-describedby="key-name-hint";
                    span.hint #key-name-hint { "What uses the key, such as “marking pipeline”." }
                }
                fieldset {
                    legend { "Scopes (what the key may do)" }
                    @for scope in Scope::ALL {
                        div.choice {
                            input type="checkbox" name="scope" value=(scope.as_str())
                                id={ "scope-" (scope.as_str().replace(':', "-")) }
                                checked[chosen.contains(&scope.as_str())];
                            label for={ "scope-" (scope.as_str().replace(':', "-")) } {
                                code { (scope.as_str()) } " — " (meaning(*scope))
                            }
                        }
                    }
                }
                fieldset {
                    legend { "Expires after" }
                    @for (value, label, _) in EXPIRIES {
                        div.choice {
                            input type="radio" name="expires" value=(value) id={ "expires-" (value) }
                                checked[*value == "90d"];
                            label for={ "expires-" (value) } { (label) }
                        }
                    }
                }
                @if reauth_needed(signed) {
                    p {
                        label for="key-password" { "Your password" }
                        input #key-password type="password" name="password"
                            autocomplete="current-password" required
                            aria-describedby="key-password-hint";
                        span.hint #key-password-hint {
                            "You signed in more than " (minutes) " minutes ago: enter your password to make a key."
                        }
                    }
                }
                p { button type="submit" { "Make key" } }
            }
        }
    }
}

/// The button that ends every session of the account, this one included.
fn sign_out_everywhere(signed: &Signed) -> Markup {
    html! {
        section aria-labelledby="everywhere" {
            h2 #everywhere { "Sign out everywhere" }
            p #everywhere-hint {
                "Signed in on a computer you no longer use, or on a shared one? End every browser session of your account, this one included. Your API keys keep working."
            }
            form method="post" action="/app/sign-out-everywhere" {
                (csrf(signed))
                button.danger #sign-out-everywhere type="submit" aria-describedby="everywhere-hint" {
                    "End every session"
                }
            }
        }
    }
}

/// `GET /app/keys`, or the list with the key form shown again when `refused`.
pub async fn list(signed: Signed, refused: Option<Refused<'_>>) -> Result<Response, AppError> {
    let keys = signed.visit.state.store.keys(Some(&signed.user.id)).await?;
    let now = now_ms();
    let active = keys.iter().filter(|k| k.is_active(now)).count();
    let (status, form) = match &refused {
        Some(r) => (
            r.status,
            create_form(&signed, Some(r.message), r.name, &r.chosen),
        ),
        None => (StatusCode::OK, create_form(&signed, None, "", &[])),
    };
    let body = html! {
        h1 { "API keys" }
        p { "Programs use a key to call the examkit API. " (active) " of at most " (MAX_ACTIVE_KEYS) " keys are active." }
        @if keys.is_empty() {
            p #no-keys { "No keys yet." }
        } @else {
            div.scroll {
                table #keys {
                    caption { "Your keys, oldest first" }
                    thead { tr {
                        th scope="col" { "Name" } th scope="col" { "Fingerprint" } th scope="col" { "Scopes" }
                        th scope="col" { "State" } th scope="col" { "Created" } th scope="col" { "Expires" }
                        th scope="col" { "Requests" } th scope="col" { "Errors" } th scope="col" { "Last used" }
                        th scope="col" { span.visually-hidden { "Actions" } }
                    } }
                    tbody {
                        @for key in &keys {
                            tr data-key=(key.id) {
                                th scope="row" { (key.name) }
                                td { code { (key.prefix) "…" } br; code.small { (short_fingerprint(key)) } }
                                td { @for scope in &key.scopes { code { (scope.as_str()) } " " } }
                                td { (key.state(now)) }
                                td { (when(key.created_at)) }
                                td { (when(key.expires_at)) }
                                td.num { (key.request_count) }
                                td.num { (key.error_count) }
                                td { (key.last_used_at.map(when).unwrap_or_else(|| "never".into())) }
                                td {
                                    a href={ "/app/keys/" (key.id) } { "Usage" span.visually-hidden { " of " (key.name) } }
                                    @if key.is_active(now) {
                                        " · "
                                        a href={ "/app/keys/" (key.id) "/revoke" } { "Revoke" span.visually-hidden { " " (key.name) } }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        (form)
        (sign_out_everywhere(&signed))
    };
    Ok(html(
        status,
        page("API keys", Some(&signed), Section::Keys, body),
    ))
}

/// `POST /app/keys`: makes a key and shows its secret, once.
pub async fn create(signed: Signed, form: Form) -> Result<Response, AppError> {
    let name = form.get("name").unwrap_or_default().trim().to_owned();
    let chosen = form.all("scope");
    let expiry = EXPIRIES
        .iter()
        .find(|(value, _, _)| Some(*value) == form.get("expires"))
        .map(|(_, _, e)| *e);
    if let Some(message) = form_problem(&name, &chosen, expiry) {
        let refused = Refused {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            message,
            name: &name,
            chosen,
        };
        return list(signed, Some(refused)).await;
    }
    if reauth_needed(&signed)
        && let Some((status, message, wait)) = password_refusal(&signed, &form).await?
    {
        let refused = Refused {
            status,
            message: &message,
            name: &name,
            chosen,
        };
        let mut response = list(signed, Some(refused)).await?;
        if let Some(wait) = wait {
            response.headers_mut().insert(
                warp::http::header::RETRY_AFTER,
                warp::http::HeaderValue::from(wait.as_secs()),
            );
        }
        return Ok(response);
    }
    let (Some(expiry), Ok(scopes)) = (expiry, auth::parse_scopes(&chosen.join(","))) else {
        return Err(AppError::BadForm("the key form is not right".into()));
    };
    let new = auth::generate_key().map_err(|_| AppError::Api(crate::error::ApiError::Internal))?;
    let store = &signed.visit.state.store;
    let key = match store
        .create_key(
            &signed.user.id,
            &name,
            &new.prefix,
            &new.fingerprint,
            &scopes,
            now_ms() + expiry.millis(),
        )
        .await
    {
        Ok(key) => key,
        Err(CreateKeyError::TooManyKeys(_)) => {
            let message = format!(
                "You already have {MAX_ACTIVE_KEYS} active keys, the most an account may have. Revoke one first."
            );
            let refused = Refused {
                status: StatusCode::UNPROCESSABLE_ENTITY,
                message: &message,
                name: &name,
                chosen,
            };
            return list(signed, Some(refused)).await;
        }
        Err(CreateKeyError::UnknownUser(_)) => return Err(AppError::SignInRequired),
        Err(CreateKeyError::Store(e)) => return Err(e.into()),
    };
    Ok(new_key_page(&signed, &key, &new.secret))
}

/// What is wrong with the key form's name, scopes and expiry, the first thing found; `None` when
/// nothing is.
fn form_problem(name: &str, chosen: &[&str], expiry: Option<Expiry>) -> Option<&'static str> {
    if name.is_empty() {
        Some("Give the key a name.")
    } else if name.chars().count() > MAX_NAME_CHARS {
        Some("A key's name has at most 100 characters.")
    } else if name.chars().any(char::is_control) {
        Some("A key's name cannot hold control characters.")
    } else if chosen.is_empty() {
        Some("Choose at least one scope.")
    } else if chosen.iter().any(|s| Scope::parse(s).is_none()) {
        Some("One of the scopes is not one examkit knows.")
    } else if expiry.is_none() {
        Some("Choose when the key expires: 30 days, 90 days or one year.")
    } else {
        None
    }
}

/// Why the password sent again does not let the key be made (the status, what to say, and how
/// long to wait when the service is busy); `None` when it does.
async fn password_refusal(
    signed: &Signed,
    form: &Form,
) -> Result<Option<(StatusCode, String, Option<std::time::Duration>)>, AppError> {
    Ok(match form.get("password").filter(|p| !p.is_empty()) {
        None => Some((
            StatusCode::UNAUTHORIZED,
            "Enter your password to make a key.".to_owned(),
            None,
        )),
        Some(password) => match super::sign_in::confirm_password(signed, password).await? {
            Confirmed::Yes => None,
            Confirmed::No(message) => Some((StatusCode::UNAUTHORIZED, message, None)),
            Confirmed::Paused(message) => Some((StatusCode::TOO_MANY_REQUESTS, message, None)),
            Confirmed::Busy(wait) => Some((
                StatusCode::SERVICE_UNAVAILABLE,
                "Many people are signing in at this moment. Try again in a few seconds.".to_owned(),
                Some(wait),
            )),
        },
    })
}

/// The new key's page: its secret, shown this once and never stored by the browser.
fn new_key_page(signed: &Signed, key: &ApiKey, secret: &str) -> Response {
    let body = html! {
        h1 { "Your new key" }
        div.notice role="status" {
            p { strong { "Copy the key now. " } "examkit keeps only its fingerprint, so it cannot show it again." }
        }
        p { label for="secret" { "Key “" (key.name) "”" } }
        p.secret {
            input #secret readonly value=(secret) size="48" aria-describedby="secret-hint";
            button type="button" data-copy="secret" { "Copy" }
            span #copy-status role="status" {}
        }
        p.hint #secret-hint { "Send it as " code { "Authorization: Bearer <key>" } ". Expires " (when(key.expires_at)) "." }
        p { "Scopes: " @for scope in &key.scopes { code { (scope.as_str()) } " " } }
        p { a href="/app/keys" { "Back to your keys" } }
    };
    let mut response = html(
        StatusCode::CREATED,
        page("Your new key", Some(signed), Section::Keys, body),
    );
    response.headers_mut().insert(
        warp::http::header::CACHE_CONTROL,
        warp::http::HeaderValue::from_static("no-store"),
    );
    response
}

/// `GET /app/keys/{id}/revoke`: asks first.
pub async fn confirm_revoke(signed: Signed, id: &str) -> Result<Response, AppError> {
    let key = own_key(&signed, id).await?;
    let body = html! {
        h1 { "Revoke “" (key.name) "”?" }
        p { "Programs using this key are refused from their next request. This cannot be undone: a revoked key never works again." }
        form method="post" action={ "/app/keys/" (key.id) "/revoke" } {
            (csrf(&signed))
            button.danger type="submit" { "Revoke the key" }
            " "
            a href="/app/keys" { "Keep it" }
        }
    };
    Ok(html(
        StatusCode::OK,
        page("Revoke a key", Some(&signed), Section::Keys, body),
    ))
}

/// `POST /app/keys/{id}/revoke`.
pub async fn revoke(signed: Signed, id: &str) -> Result<Response, AppError> {
    let key = own_key(&signed, id).await?;
    signed.visit.state.store.revoke_key(&key.id).await?;
    Ok(see_other("/app/keys"))
}

/// Requests per UTC day, for the chart.
fn per_day(rows: &[UsageRow], days: &[String]) -> Vec<(i64, i64)> {
    days.iter()
        .map(|day| {
            rows.iter()
                .filter(|r| &r.day == day)
                .fold((0, 0), |(ok, failed), r| {
                    if r.status >= 400 {
                        (ok, failed + r.requests)
                    } else {
                        (ok + r.requests, failed)
                    }
                })
        })
        .collect()
}

/// The shown days, oldest first.
fn shown_days(now: i64) -> Vec<String> {
    (0..SHOWN_DAYS)
        .rev()
        .map(|back| crate::store::utc_date(now - back * 86_400_000))
        .collect()
}

/// A bar chart of requests per day (successful and refused stacked), drawn here as SVG.
pub fn chart(rows: &[UsageRow], now: i64) -> Markup {
    let days = shown_days(now);
    let counts = per_day(rows, &days);
    let most = counts.iter().map(|(a, b)| a + b).max().unwrap_or(0).max(1);
    let (width, height, bar) = (600.0_f64, 160.0_f64, 600.0 / days.len() as f64);
    let scale = |n: i64| n as f64 / most as f64 * (height - 20.0);
    html! {
        figure.chart {
            svg viewBox="0 0 600 180" role="img" aria-labelledby="chart-title" {
                title #chart-title { "Requests per UTC day over the last 30 days; the table below holds the same figures." }
                line x1="0" y1=(height) x2=(width) y2=(height) class="axis" {}
                @for (i, (ok, failed)) in counts.iter().enumerate() {
                    @let x = i as f64 * bar + 2.0;
                    @let ok_h = scale(*ok);
                    @let failed_h = scale(*failed);
                    @if *ok > 0 {
                        rect.ok x=(format!("{x:.1}")) y=(format!("{:.1}", height - ok_h)) width=(format!("{:.1}", bar - 4.0)) height=(format!("{ok_h:.1}")) {
                            title { (days[i]) ": " (ok) " successful" }
                        }
                    }
                    @if *failed > 0 {
                        rect.failed x=(format!("{x:.1}")) y=(format!("{:.1}", height - ok_h - failed_h)) width=(format!("{:.1}", bar - 4.0)) height=(format!("{failed_h:.1}")) {
                            title { (days[i]) ": " (failed) " refused or failed" }
                        }
                    }
                }
                text x="0" y="176" class="label" { (days.first().cloned().unwrap_or_default()) }
                text x="600" y="176" class="label end" { (days.last().cloned().unwrap_or_default()) }
                text x="0" y="12" class="label" { "most in a day: " (most) }
            }
            figcaption {
                span.key.ok-key { "■" } " successful (status below 400)  "
                span.key.failed-key { "■" } " refused or failed (400 and above)"
            }
        }
    }
}

/// `GET /app/keys/{id}`: a key's usage over the last 30 UTC days.
pub async fn usage(signed: Signed, id: &str) -> Result<Response, AppError> {
    let key = own_key(&signed, id).await?;
    let now = now_ms();
    let rows = signed.visit.state.store.usage(&key.id, now).await?;
    let total: i64 = rows.iter().map(|r| r.requests).sum();
    let body = html! {
        p { a href="/app/keys" { "← API keys" } }
        h1 { "Usage of “" (key.name) "”" }
        p {
            "The last " (SHOWN_DAYS) " UTC days: " strong #usage-total { (total) } " requests. "
            "examkit records only counts and timings per day, operation and status: never keys, bodies or content."
        }
        (chart(&rows, now))
        @if rows.is_empty() {
            p #no-usage { "No requests in the last " (SHOWN_DAYS) " days." }
        } @else {
            div.scroll {
                table #usage {
                    caption { "Requests by UTC date, operation and status" }
                    thead { tr {
                        th scope="col" { "Date (UTC)" } th scope="col" { "Operation" } th scope="col" { "Status" }
                        th scope="col" { "Requests" } th scope="col" { "Average ms" } th scope="col" { "Longest ms" }
                    } }
                    tbody {
                        @for row in &rows {
                            tr {
                                td { (row.day) }
                                td { code { (row.operation) } }
                                td.num { (row.status) }
                                td.num { (row.requests) }
                                td.num { (if row.requests > 0 { row.total_ms / row.requests } else { 0 }) }
                                td.num { (row.max_ms) }
                            }
                        }
                    }
                }
            }
        }
    };
    Ok(html(
        StatusCode::OK,
        page("Key usage", Some(&signed), Section::Keys, body),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_problem_of_the_key_form_is_said() {
        let days = Some(EXPIRIES[0].2);
        assert_eq!(form_problem("CI", &["questions:read"], days), None);
        assert_eq!(form_problem("", &[], None), Some("Give the key a name."));
        assert_eq!(
            form_problem(&"k".repeat(MAX_NAME_CHARS + 1), &["questions:read"], days),
            Some("A key's name has at most 100 characters.")
        );
        assert_eq!(
            form_problem("a\u{7}b", &["questions:read"], days),
            Some("A key's name cannot hold control characters.")
        );
        assert_eq!(
            form_problem("CI", &[], days),
            Some("Choose at least one scope.")
        );
        assert_eq!(
            form_problem("CI", &["questions:read", "everything"], days),
            Some("One of the scopes is not one examkit knows.")
        );
        assert_eq!(
            form_problem("CI", &["questions:read"], None),
            Some("Choose when the key expires: 30 days, 90 days or one year.")
        );
    }
}
