//! The first run: a deployment with no account yet offers, in place of signing in, to make the
//! first teacher's account. The form asks for the one-time setup token that `serve` printed in its
//! log when it started with no account (as Jupyter prints its token), so the first person to find
//! the address is not the one who owns it. Once any account exists the page is never offered
//! again (the sign-in page returns, and `/app/setup` sends a browser to it), and the check and the
//! insert are one transaction ([`crate::store::Store::create_first_account`]). `examkit users
//! create` stays for scripted set-ups.

use maud::html;
use warp::http::StatusCode;
use warp::reply::Response;

use super::session::{self, CSRF_FIELD};
use super::{AppError, Form, Visit, see_other, setup_offered, sign_in};
use crate::error::ApiError;
use crate::password::checks::{self, CheckError};
use crate::store::accounts::normalise_email;
use crate::store::now_ms;

#[derive(Default)]
struct Entered<'a> {
    name: &'a str,
    email: &'a str,
}

fn render(
    visit: &Visit,
    status: StatusCode,
    csrf: &str,
    entered: &Entered<'_>,
    message: Option<&str>,
) -> Response {
    let body = html! {
        div.narrow {
            h1 { "Welcome to examkit" }
            p { "This examkit has no account yet. Make the first teacher's account here; more are made with "
                code { "examkit users create" } "." }
            @if let Some(message) = message {
                p.error role="alert" #setup-error { (message) }
            }
            form method="post" action="/app/setup" {
                input type="hidden" name=(CSRF_FIELD) value=(csrf);
                p {
                    label for="setup-token" { "Setup token" }
                    input #setup-token type="text" name="setup_token" autocomplete="off" required
                        aria-describedby="setup-token-hint";
                    span.hint #setup-token-hint { "Printed in the log of " code { "examkit serve" } " when it started." }
                }
                p {
                    label for="name" { "Your name" }
                    input #name type="text" name="name" autocomplete="name" required maxlength="200" value=(entered.name);
                }
                p {
                    label for="email" { "Email" }
                    input #email type="email" name="email" autocomplete="username" required value=(entered.email);
                }
                p {
                    label for="password" { "Password" }
                    input #password type="password" name="password" autocomplete="new-password" required
                        minlength=(crate::password::MIN_CHARS) aria-describedby="password-hint";
                    span.hint #password-hint { "At least " (crate::password::MIN_CHARS) " characters." }
                }
                p {
                    label for="password-again" { "Password again" }
                    input #password-again type="password" name="password_again" autocomplete="new-password" required;
                }
                p { button type="submit" { "Make the account" } }
            }
        }
    };
    sign_in::form_page(visit, status, "First run", body, csrf)
}

/// `GET /app/setup`: the form while it is offered; the sign-in page afterwards.
pub async fn form(visit: Visit) -> Result<Response, AppError> {
    if !setup_offered(&visit).await? {
        return Ok(see_other("/app/sign-in"));
    }
    let csrf = session::random_token()?;
    Ok(render(
        &visit,
        StatusCode::OK,
        &csrf,
        &Entered::default(),
        None,
    ))
}

/// `POST /app/setup`: makes the first account and signs it in.
pub async fn submit(visit: Visit, form: Form) -> Result<Response, AppError> {
    let cookie = visit.cookie(session::sign_in_cookie_name(&visit));
    let sent = form.get(CSRF_FIELD).unwrap_or_default();
    match cookie {
        Some(cookie) if !sent.is_empty() && session::same(&cookie, sent) => {}
        _ => return Err(AppError::Csrf),
    }
    if !setup_offered(&visit).await? {
        return Ok(see_other("/app/sign-in"));
    }
    let entered = Entered {
        name: form.get("name").unwrap_or_default().trim(),
        email: form.get("email").unwrap_or_default().trim(),
    };
    let csrf = session::random_token()?;
    let refuse = |status, message: &str| render(&visit, status, &csrf, &entered, Some(message));
    let token_ok = visit
        .state
        .app
        .setup_token
        .as_ref()
        .is_some_and(|t| t.matches(form.get("setup_token").unwrap_or_default()));
    if !token_ok {
        tracing::warn!("a first-run form was sent with a wrong setup token");
        return Ok(refuse(
            StatusCode::FORBIDDEN,
            "That is not the setup token. Copy it from the log of examkit serve.",
        ));
    }
    if entered.name.is_empty() || entered.name.chars().count() > 200 {
        return Ok(refuse(
            StatusCode::BAD_REQUEST,
            "Enter your name (at most 200 characters).",
        ));
    }
    let Some(email) = normalise_email(entered.email) else {
        return Ok(refuse(
            StatusCode::BAD_REQUEST,
            "Enter the email address you will sign in with.",
        ));
    };
    let password = form.get("password").unwrap_or_default();
    if let Err(why) = crate::password::check(password) {
        return Ok(refuse(
            StatusCode::BAD_REQUEST,
            &format!("Choose another password: {why}."),
        ));
    }
    if form.get("password_again") != Some(password) {
        return Ok(refuse(
            StatusCode::BAD_REQUEST,
            "The two passwords are not the same.",
        ));
    }
    let hash = match checks::hash(password.to_owned()).await {
        Ok(hash) => hash,
        Err(CheckError::Busy { .. }) => {
            return Ok(refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                "examkit is busy at this moment. Send the form again in a few seconds.",
            ));
        }
        Err(CheckError::Failed(_)) => return Err(AppError::Api(ApiError::Internal)),
    };
    let Some(user) = visit
        .state
        .store
        .create_first_account(entered.name, &email, &hash)
        .await?
    else {
        return Ok(see_other("/app/sign-in"));
    };
    tracing::info!(user = %user.id, "the first account was made in the app");
    sign_in::start_session(&visit, &user, "/app/", now_ms()).await
}
