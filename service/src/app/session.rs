//! Browser sessions: the cookie, finding and ending a session, and CSRF tokens.
//!
//! The cookie holds 32 random bytes (base64url); the database holds only their SHA-256, with the
//! session's CSRF token, its idle and absolute expiry. The cookie is `HttpOnly`,
//! `SameSite=Strict`, `Path=/` and, when [`super::AppConfig::secure_cookies`] says so (an
//! `https://` public URL, or no public URL and a listener off loopback), `Secure` with the
//! `__Host-` prefix (which pins it to this host and path). A new session, with a new id, is
//! made at every sign-in; an earlier one sent with the sign-in is ended.

use base64::Engine;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::{AppError, Form, Signed, Visit};
use crate::store::app_sessions::AppSession;
use crate::store::now_ms;

/// The session cookie's name when cookies are `Secure`.
pub const SECURE_COOKIE: &str = "__Host-examkit_session";
/// The session cookie's name when cookies are not `Secure`.
pub const PLAIN_COOKIE: &str = "examkit_session";
/// The sign-in form's CSRF cookie (double submit: the form's field must equal it).
pub const SECURE_SIGN_IN_COOKIE: &str = "__Host-examkit_sign_in";
/// The sign-in form's CSRF cookie when cookies are not `Secure`.
pub const PLAIN_SIGN_IN_COOKIE: &str = "examkit_sign_in";
/// The cookie of a browser that has signed in before (its secret's hash is remembered with the
/// account): its sign-ins are not held by the account-wide count of failed sign-ins.
pub const SECURE_DEVICE_COOKIE: &str = "__Host-examkit_device";
/// The device cookie when cookies are not `Secure`.
pub const PLAIN_DEVICE_COOKIE: &str = "examkit_device";
/// How long a browser is remembered after it signs in, milliseconds (180 days).
pub const DEVICE_MS: i64 = 180 * 24 * 60 * 60 * 1000;
/// The form field holding the CSRF token.
pub const CSRF_FIELD: &str = "csrf";
/// The header the page's script sends the CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// A session is touched (its idle expiry pushed back) at most this often.
const TOUCH_EVERY_MS: i64 = 60_000;

/// 32 random bytes, base64url without padding.
pub fn random_token() -> Result<String, AppError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|_| AppError::Api(crate::error::ApiError::Internal))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// The stored form of a cookie's secret.
pub fn hash(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The session cookie's name for this service.
pub fn cookie_name(visit: &Visit) -> &'static str {
    if visit.state.app.secure_cookies {
        SECURE_COOKIE
    } else {
        PLAIN_COOKIE
    }
}

/// The device cookie's name for this service.
pub fn device_cookie_name(visit: &Visit) -> &'static str {
    if visit.state.app.secure_cookies {
        SECURE_DEVICE_COOKIE
    } else {
        PLAIN_DEVICE_COOKIE
    }
}

/// The sign-in CSRF cookie's name for this service.
pub fn sign_in_cookie_name(visit: &Visit) -> &'static str {
    if visit.state.app.secure_cookies {
        SECURE_SIGN_IN_COOKIE
    } else {
        PLAIN_SIGN_IN_COOKIE
    }
}

/// A `Set-Cookie` value: `HttpOnly`, `SameSite=Strict`, `Path=/`, `Secure` when configured;
/// `max_age` in seconds, 0 to delete.
pub fn cookie(visit: &Visit, name: &str, value: &str, max_age: i64) -> String {
    let secure = if visit.state.app.secure_cookies {
        "; Secure"
    } else {
        ""
    };
    format!("{name}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}")
}

/// Makes a session for `user_id`; returns its cookie's secret and the session.
pub async fn create(visit: &Visit, user_id: &str) -> Result<(String, AppSession), AppError> {
    let secret = random_token()?;
    let now = now_ms();
    let session = AppSession {
        id_hash: hash(&secret),
        user_id: user_id.to_owned(),
        csrf_token: random_token()?,
        created_at: now,
        last_seen_at: now,
        expires_at: now + visit.state.app.absolute_ms,
    };
    visit.state.store.create_app_session(&session).await?;
    Ok((secret, session))
}

/// The live session the request's cookie names, if any. An expired session, or one whose account
/// can no longer use the app, is ended on the way.
pub async fn signed_in(visit: &Visit) -> Result<Option<Signed>, AppError> {
    let Some(secret) = visit.cookie(cookie_name(visit)) else {
        return Ok(None);
    };
    if secret.is_empty() || secret.len() > 128 {
        return Ok(None);
    }
    let id_hash = hash(&secret);
    let store = &visit.state.store;
    let Some((session, user)) = store.app_session(&id_hash).await? else {
        return Ok(None);
    };
    let now = now_ms();
    let idle_end = session.last_seen_at + visit.state.app.idle_ms;
    if now >= session.expires_at || now >= idle_end || !user.verified || user.restricted {
        store.end_app_session(&id_hash).await?;
        return Ok(None);
    }
    if now - session.last_seen_at >= TOUCH_EVERY_MS {
        store.touch_app_session(&id_hash, now).await?;
    }
    Ok(Some(Signed {
        visit: visit.clone(),
        session,
        user,
    }))
}

/// The signed-in session, or [`AppError::SignInRequired`].
pub async fn require(visit: &Visit) -> Result<Signed, AppError> {
    signed_in(visit).await?.ok_or(AppError::SignInRequired)
}

/// Equal strings, compared in constant time.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// Refuses a state-changing request whose form field or header does not hold the session's token.
pub fn check_csrf(signed: &Signed, form: &Form) -> Result<(), AppError> {
    let sent = form.get(CSRF_FIELD).map(str::to_owned).or_else(|| {
        signed
            .visit
            .headers
            .get(CSRF_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    });
    match sent {
        Some(token) if same(&token, &signed.session.csrf_token) => Ok(()),
        _ => Err(AppError::Csrf),
    }
}

/// The name this browser session goes by where a key's name would: in idempotency records (a
/// form's token) and rate counters. The session id's hash is secret-derived; a prefix of it
/// names the session without being usable to sign in.
pub fn key_name(signed: &Signed) -> String {
    let hash = &signed.session.id_hash;
    format!("app:{}", hash.get(..16).unwrap_or(hash))
}
