//! How the teachers' app runs ([`AppConfig`]): cookie security, HSTS, session lifetimes,
//! sign-in limits, the trusted proxies and the first-run setup token.

use std::fmt;
use std::net::SocketAddr;

use subtle::ConstantTimeEq;

use super::{Cidr, PublicUrl};
use crate::store::app_sessions::Window;

/// How the app runs: cookie security, session lifetimes, sign-in limits and the proxies trusted to
/// name the client.
#[derive(Debug, Clone)]
pub struct AppConfig {
    /// Whether cookies are `Secure` (and `__Host-` prefixed): set by an `https://` public URL,
    /// off for an `http://` one; without one, off only when the service listens on loopback.
    pub secure_cookies: bool,
    /// Whether every response of the service carries `Strict-Transport-Security: `[`HSTS`]: only
    /// when the public URL is `https://`.
    pub hsts: bool,
    /// A session ends after this long without a request, milliseconds.
    pub idle_ms: i64,
    /// A session ends this long after sign-in whatever happens, milliseconds.
    pub absolute_ms: i64,
    /// Making an API key asks for the password again when the session's sign-in is at least this
    /// old, milliseconds.
    pub reauth_ms: i64,
    /// Failed sign-ins allowed per account from one client address.
    pub account_failures: Window,
    /// Failed sign-ins allowed per account from every address together: a much higher ceiling,
    /// which does not hold a browser that has signed in to the account before.
    pub account_ceiling: Window,
    /// Failed sign-ins allowed per client address.
    pub address_failures: Window,
    /// Proxies whose `X-Forwarded-For` names the client (see [`crate::app::client`]); none by default.
    pub trusted_proxies: Vec<Cidr>,
    /// The one-time token that makes the first account while none exists ([`crate::app::setup`]); `serve`
    /// makes one when it starts with no account.
    pub setup_token: Option<SetupToken>,
}

impl Default for AppConfig {
    fn default() -> Self {
        const MINUTE: i64 = 60_000;
        AppConfig {
            secure_cookies: true,
            hsts: false,
            idle_ms: 2 * 60 * MINUTE,
            absolute_ms: 12 * 60 * MINUTE,
            reauth_ms: 10 * MINUTE,
            account_failures: Window {
                length_ms: 15 * MINUTE,
                limit: 5,
            },
            account_ceiling: Window {
                length_ms: 15 * MINUTE,
                limit: 100,
            },
            address_failures: Window {
                length_ms: 15 * MINUTE,
                limit: 20,
            },
            trusted_proxies: Vec::new(),
            setup_token: None,
        }
    }
}

/// The `Strict-Transport-Security` value of a service whose public URL is `https://`: browsers
/// use only HTTPS for this host for a year. Not `includeSubDomains` (other hosts of the domain are
/// not examkit's to decide) and not `preload`.
pub const HSTS: &str = "max-age=31536000";

impl AppConfig {
    /// The configuration of a service listening on `listen` and reached at `public`: `Secure`
    /// cookies and HSTS when the public URL is `https://`, plain cookies when it is `http://`;
    /// without a public URL, secure cookies unless on loopback (the development default), no HSTS.
    pub fn for_service(listen: SocketAddr, public: Option<&PublicUrl>) -> AppConfig {
        AppConfig {
            secure_cookies: public.map_or(!listen.ip().is_loopback(), |url| url.https),
            hsts: public.is_some_and(|url| url.https),
            ..AppConfig::default()
        }
    }
}

/// The one-time token that makes the first account; never written to a debug print.
#[derive(Clone, PartialEq, Eq)]
pub struct SetupToken(String);

impl SetupToken {
    /// A fresh random token (128 bits, hex).
    pub fn random() -> Result<SetupToken, String> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| format!("no random bytes: {e}"))?;
        Ok(SetupToken(
            bytes.iter().map(|b| format!("{b:02x}")).collect(),
        ))
    }

    /// A token of the caller's choosing (tests, and deployments that set one).
    pub fn new(token: impl Into<String>) -> SetupToken {
        SetupToken(token.into())
    }

    /// The token, to print once in the log.
    pub fn reveal(&self) -> &str {
        &self.0
    }

    /// Whether `sent` is the token (compared in constant time; surrounding spaces ignored).
    pub fn matches(&self, sent: &str) -> bool {
        !sent.is_empty() && bool::from(self.0.as_bytes().ct_eq(sent.trim().as_bytes()))
    }
}

impl fmt::Debug for SetupToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SetupToken(…)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listen(addr: &str) -> SocketAddr {
        addr.parse().expect("address")
    }

    fn public(url: &str) -> PublicUrl {
        PublicUrl::parse(url).expect("public URL")
    }

    #[test]
    fn cookies_and_hsts_follow_the_public_url_then_the_listen_address() {
        let loopback = listen("127.0.0.1:8080");
        let anywhere = listen("0.0.0.0:8080");
        let https = public("https://exam.school.example");
        let http = public("http://exam.school.example");
        let cases = [
            (loopback, Some(&https), (true, true)),
            (anywhere, Some(&https), (true, true)),
            (loopback, Some(&http), (false, false)),
            (anywhere, Some(&http), (false, false)),
            (loopback, None, (false, false)),
            (listen("[::1]:8080"), None, (false, false)),
            (anywhere, None, (true, false)),
        ];
        for (at, url, expected) in cases {
            let config = AppConfig::for_service(at, url);
            assert_eq!(
                (config.secure_cookies, config.hsts),
                expected,
                "{at} {url:?}"
            );
        }
    }
}
