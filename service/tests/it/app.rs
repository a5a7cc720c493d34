//! The teachers' app at `/app/` over real HTTP, on SQLite and PostgreSQL: sign-in, cookies,
//! CSRF, sign-in limits, keys and usage, the review page saving through the review path, class
//! sets' pages deciding through the API's path, stepping through the answers that lost a mark,
//! owner isolation, escaping, and the separation of
//! browser sessions from API keys.

use crate::common;

use std::collections::HashMap;

use common::{Db, Server, generous, start, start_with};
use examkit::auth::Scope;
use examkit::store::rate::Limits;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

on_both!(
    sign_in_sets_a_fresh_hardened_session,
    state_changing_requests_need_the_csrf_token,
    failed_sign_ins_are_limited_per_account_and_address,
    unverified_and_restricted_accounts_are_told_why,
    browser_sessions_and_api_keys_never_cross,
    keys_are_made_listed_revoked_and_their_usage_shown,
    the_key_form_refuses_its_bad_forms,
    decisions_are_saved_through_the_review_path,
    user_text_renders_inert,
    other_accounts_ids_are_not_found,
    sessions_end_at_sign_out_expiry_and_password_change,
    every_response_carries_the_security_headers,
    sessions_and_revocations_are_shared_between_servers,
    making_a_key_asks_for_the_password_after_ten_minutes,
    sign_out_everywhere_is_a_button_on_the_keys_page,
    page_images_and_signed_in_pages_are_never_stored,
    the_saved_message_comes_from_the_question_not_the_address,
    class_sets_are_settled_on_their_pages,
    a_question_that_cannot_be_read_is_an_error_on_its_page,
    the_answers_that_lost_a_mark_are_stepped_through,
    the_app_counts_against_the_rate_limits_downloads_heavier,
    a_page_that_cannot_be_drawn_in_time_is_a_placeholder,
    teachers_are_told_while_an_unqualified_marker_is_held_back,
);

/// Under `--marker-qualify`, the marked-work page says marking is held back while the configured
/// marker (here the built-in one) has no qualifying calibration, and says nothing once it has.
async fn teachers_are_told_while_an_unqualified_marker_is_held_back(db: Db) {
    let s = start_with(db, generous(), |state| state.marking.qualify = Some(0.9)).await;
    let (mut b, _) = signed_in(&s, "held@school.test").await;
    let page = b.get("/app/sessions").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("id=\"marker-held\""), "{}", page.body);
    assert!(
        page.body
            .contains("the builtin marker has not qualified on this service&#39;s reference set")
            || page
                .body
                .contains("the builtin marker has not qualified on this service's reference set"),
        "{}",
        page.body
    );
    s.store
        .save_qualification(&examkit::store::qualifications::NewQualification {
            marker: "builtin".into(),
            model: None,
            criteria: 20,
            agreed: 19,
            kappa: None,
            false_awards: 0,
            non_work_page_awards: 0,
            scripts: 2,
            reference_digest: "sha256:test".into(),
            min_agreement: 0.9,
            passed: true,
        })
        .await
        .expect("saved");
    let page = b.get("/app/sessions").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(!page.body.contains("marker-held"), "{}", page.body);
}

pub(crate) const PASSWORD: &str = "correct horse battery";

/// A browser: keeps cookies, never follows redirects.
pub(crate) struct Browser {
    base: String,
    client: reqwest::Client,
    cookies: HashMap<String, String>,
}

pub(crate) struct Page {
    pub(crate) status: u16,
    headers: HeaderMap,
    pub(crate) body: String,
}

impl Page {
    fn location(&self) -> &str {
        self.headers
            .get("location")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }

    fn set_cookies(&self) -> Vec<String> {
        self.headers
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect()
    }

    /// The CSRF token of the page's first form.
    fn csrf(&self) -> String {
        let at = self
            .body
            .find("name=\"csrf\" value=\"")
            .unwrap_or_else(|| panic!("no CSRF field in {}", self.body));
        let rest = &self.body[at + "name=\"csrf\" value=\"".len()..];
        rest[..rest.find('"').expect("closing quote")].to_owned()
    }
}

impl Browser {
    pub(crate) fn new(server: &Server) -> Browser {
        Browser::at(&server.base)
    }

    /// A browser of the service at `base`.
    fn at(base: &str) -> Browser {
        Browser {
            base: base.to_owned(),
            // A fresh connection a request: a kept one can be closed by the server's idle
            // timeout while a slow step (typesetting on a loaded machine) runs, and the next
            // request would meet it closing.
            client: examkit::tls::client_builder()
                .redirect(reqwest::redirect::Policy::none())
                .pool_max_idle_per_host(0)
                .build()
                .expect("client"),
            cookies: HashMap::new(),
        }
    }

    fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    async fn send(&mut self, request: reqwest::RequestBuilder) -> Page {
        let request = if self.cookies.is_empty() {
            request
        } else {
            request.header("cookie", self.cookie_header())
        };
        let response = request.send().await.expect("request sent");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.text().await.expect("body");
        let page = Page {
            status,
            headers,
            body,
        };
        for cookie in page.set_cookies() {
            let first = cookie.split(';').next().unwrap_or_default();
            if let Some((name, value)) = first.split_once('=') {
                if cookie.contains("Max-Age=0") {
                    self.cookies.remove(name);
                } else {
                    self.cookies.insert(name.to_owned(), value.to_owned());
                }
            }
        }
        page
    }

    pub(crate) async fn get(&mut self, path: &str) -> Page {
        let request = self.client.get(format!("{}{path}", self.base));
        self.send(request).await
    }

    async fn post(&mut self, path: &str, form: &[(&str, &str)]) -> Page {
        let body: String = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        self.send(request).await
    }

    async fn submit_sign_in(&mut self, token: &str, email: &str, password: &str) -> Page {
        self.post(
            "/app/sign-in",
            &[("csrf", token), ("email", email), ("password", password)],
        )
        .await
    }

    pub(crate) async fn sign_in_as(&mut self, email: &str, password: &str) -> Page {
        let form = self.get("/app/sign-in").await;
        assert_eq!(form.status, 200, "{}", form.body);
        let token = form.csrf();
        self.post(
            "/app/sign-in",
            &[
                ("csrf", &token),
                ("email", email),
                ("password", password),
                ("next", "/app/keys"),
            ],
        )
        .await
    }

    /// The value of the session cookie (secure name on a default server).
    fn session(&self) -> Option<String> {
        self.cookies
            .get("__Host-examkit_session")
            .or_else(|| self.cookies.get("examkit_session"))
            .cloned()
    }
}

/// An account that signs in with `email` and [`PASSWORD`].
pub(crate) async fn teacher(s: &Server, email: &str) -> String {
    let user = s.user(email).await;
    let hash = examkit::password::hash(PASSWORD).expect("hash");
    s.store
        .set_login(Some(&user), email, &hash)
        .await
        .expect("login set");
    user
}

async fn signed_in(s: &Server, email: &str) -> (Browser, String) {
    let user = teacher(s, email).await;
    let mut b = Browser::new(s);
    let page = b.sign_in_as(email, PASSWORD).await;
    assert_eq!(page.status, 303, "{}", page.body);
    (b, user)
}

/// An account's completed import of the example paper: (session id, questions by label).
async fn marked_import(
    s: &Server,
    user: &str,
    title: Option<&str>,
) -> (String, HashMap<String, Value>, String) {
    let key = s.key(user, Scope::ALL).await;
    let (import, submission, work, _) = s.import_with_example(&key).await;
    if let Some(title) = title {
        // As a title a user typed would arrive.
        s.store
            .execute_write(
                examkit::store::Durability::Saved,
                sqlx::query("UPDATE marking_sessions SET title = $1 WHERE id = $2")
                    .bind(title)
                    .bind(&import),
            )
            .await
            .expect("renamed");
    }
    let resp = s
        .post_json(
            &format!("/v1/marking/imports/{import}/complete"),
            &key,
            Some(&format!("complete-{import}")),
            submission.as_bytes(),
        )
        .await;
    assert_eq!(resp.status, 200, "{}", String::from_utf8_lossy(&resp.body));
    let questions = resp.json()["session"]["questions"]
        .as_array()
        .expect("questions")
        .iter()
        .map(|q| (q["label"].as_str().expect("label").to_owned(), q.clone()))
        .collect();
    (import, questions, work)
}

async fn sign_in_sets_a_fresh_hardened_session(db: Db) {
    let s = start(db, generous()).await;
    teacher(&s, "ann@school.test").await;
    let mut b = Browser::new(&s);
    // `/` and `/app/` lead a browser to sign in.
    let root = b.get("/").await;
    assert_eq!((root.status, root.location()), (303, "/app/"));
    let app = b.get("/app/").await;
    assert_eq!((app.status, app.location()), (303, "/app/sign-in"));
    let keys = b.get("/app/keys").await;
    assert_eq!(keys.location(), "/app/sign-in?next=%2Fapp%2Fkeys");

    let page = b.sign_in_as("Ann@School.TEST ", PASSWORD).await;
    assert_eq!(
        (page.status, page.location()),
        (303, "/app/keys"),
        "{}",
        page.body
    );
    let cookie = page
        .set_cookies()
        .into_iter()
        .find(|c| c.starts_with("__Host-examkit_session="))
        .expect("a session cookie");
    for flag in ["HttpOnly", "SameSite=Strict", "Secure", "Path=/"] {
        assert!(cookie.contains(flag), "{flag} in {cookie}");
    }
    assert!(!cookie.contains("Domain="), "{cookie}");
    let first = b.session().expect("session");
    // Only the hash of the secret is stored.
    let stored: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM app_sessions WHERE id_hash = $1")
        .bind(&first)
        .fetch_one(s.store.pool())
        .await
        .expect("count");
    assert_eq!(stored, 0, "the cookie's secret is never stored as it is");
    let page = b.get("/app/keys").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("ann@school.test"));

    // Signing in again makes a new session and ends the one sent with it.
    let old = b.cookies.clone();
    // (A signed-in browser is sent on from the form; the form comes from another tab's visit.)
    let mut tab = Browser::new(&s);
    let token = tab.get("/app/sign-in").await.csrf();
    b.cookies.extend(tab.cookies);
    let again = b.submit_sign_in(&token, "ann@school.test", PASSWORD).await;
    assert_eq!(again.status, 303);
    let second = b.session().expect("session");
    assert_ne!(first, second, "a fresh session id at sign-in");
    let mut stale = Browser::new(&s);
    stale.cookies = old;
    let page = stale.get("/app/keys").await;
    assert_eq!(page.status, 303, "the session before sign-in has ended");
}

async fn state_changing_requests_need_the_csrf_token(db: Db) {
    let s = start(db, generous()).await;
    teacher(&s, "ann@school.test").await;
    let mut b = Browser::new(&s);
    // Sign-in: the form's token must match its cookie.
    let form = b.get("/app/sign-in").await;
    let token = form.csrf();
    for bad in ["", "not-the-token"] {
        let page = b.submit_sign_in(bad, "ann@school.test", PASSWORD).await;
        assert_eq!(page.status, 403, "{bad:?}");
        assert!(page.body.contains("could not be accepted"));
    }
    let mut cookieless = Browser::new(&s);
    let page = cookieless
        .submit_sign_in(&token, "ann@school.test", PASSWORD)
        .await;
    assert_eq!(page.status, 403, "a token without its cookie");
    assert_eq!(
        b.submit_sign_in(&token, "ann@school.test", PASSWORD)
            .await
            .status,
        303
    );

    // Signed in: every form needs the session's token.
    let good = b.get("/app/keys").await.csrf();
    let make = |token: &'static str| {
        vec![
            ("csrf", token),
            ("name", "pipeline"),
            ("scope", "marking:read"),
            ("expires", "30d"),
        ]
    };
    let missing: Vec<(&str, &str)> = make("").into_iter().filter(|(k, _)| *k != "csrf").collect();
    assert_eq!(b.post("/app/keys", &missing).await.status, 403);
    assert_eq!(b.post("/app/keys", &make("wrong")).await.status, 403);
    assert!(
        s.store.keys(None).await.expect("keys").is_empty(),
        "nothing was made"
    );
    assert_eq!(
        b.post("/app/sign-out", &[("csrf", "wrong")]).await.status,
        403
    );
    assert_eq!(b.get("/app/keys").await.status, 200, "still signed in");
    let mut form = make("");
    form[0].1 = &good;
    assert_eq!(b.post("/app/keys", &form).await.status, 201);
    // The page's script sends the token in a header instead.
    let request = b
        .client
        .post(format!("{}/app/sign-out", s.base))
        .header("x-csrf-token", good.as_str())
        .header("content-type", "application/x-www-form-urlencoded");
    let page = b.send(request).await;
    assert_eq!(page.status, 303);
    assert_eq!(b.get("/app/keys").await.status, 303, "signed out");
}

async fn failed_sign_ins_are_limited_per_account_and_address(db: Db) {
    let s = start(db, generous()).await;
    teacher(&s, "ann@school.test").await;
    let mut b = Browser::new(&s);
    for attempt in 1..=5 {
        let page = b.sign_in_as("ann@school.test", "wrong password!").await;
        assert_eq!(page.status, 401, "attempt {attempt}");
        assert!(page.body.contains("The email or password is not right."));
        if attempt == 5 {
            assert!(
                page.body.contains("Too many failed sign-ins"),
                "{}",
                page.body
            );
        }
    }
    // The limit holds even for the right password, and says until when.
    let page = b.sign_in_as("ann@school.test", PASSWORD).await;
    assert_eq!(page.status, 429);
    assert!(
        page.body
            .contains("Too many failed sign-ins. Try again after")
    );
    assert!(b.session().is_none());
    // Another account from the same address is not yet limited…
    teacher(&s, "bob@school.test").await;
    let page = b.sign_in_as("bob@school.test", PASSWORD).await;
    assert_eq!(page.status, 303);
    // …until the address has failed 20 times in the window, over any accounts.
    let mut other = Browser::new(&s);
    for i in 0..15 {
        let page = other
            .sign_in_as(&format!("nobody{i}@school.test"), "wrong password!")
            .await;
        assert_eq!(page.status, 401, "unknown emails answer as wrong passwords");
    }
    let page = other.sign_in_as("bob@school.test", PASSWORD).await;
    assert_eq!(page.status, 429);
    assert!(page.body.contains("from your network"), "{}", page.body);
}

async fn unverified_and_restricted_accounts_are_told_why(db: Db) {
    let s = start(db, generous()).await;
    let user = teacher(&s, "ann@school.test").await;
    s.store
        .update_user(&user, Some(false), None)
        .await
        .expect("updated");
    let mut b = Browser::new(&s);
    let page = b.sign_in_as("ann@school.test", PASSWORD).await;
    assert_eq!(page.status, 403);
    assert!(page.body.contains("not verified yet"), "{}", page.body);
    assert!(b.session().is_none());
    s.store
        .update_user(&user, Some(true), Some(true))
        .await
        .expect("updated");
    let page = b.sign_in_as("ann@school.test", PASSWORD).await;
    assert_eq!(page.status, 403);
    assert!(page.body.contains("restricted"), "{}", page.body);
    // A session of an account restricted later ends at its next request.
    s.store
        .update_user(&user, None, Some(false))
        .await
        .expect("updated");
    assert_eq!(b.sign_in_as("ann@school.test", PASSWORD).await.status, 303);
    s.store
        .update_user(&user, None, Some(true))
        .await
        .expect("updated");
    assert_eq!(b.get("/app/keys").await.status, 303);
}

async fn browser_sessions_and_api_keys_never_cross(db: Db) {
    let s = start(db, generous()).await;
    let (mut b, user) = signed_in(&s, "ann@school.test").await;
    // A session cookie on /v1 is 401.
    let page = b.get("/v1/me").await;
    assert_eq!(page.status, 401);
    let body: Value = serde_json::from_str(&page.body).expect("json");
    assert_eq!(body["error"]["code"], "missing_api_key");
    // A key on the app is not a session: pages redirect to sign-in, forms are refused.
    let key = s.key(&user, Scope::ALL).await;
    let keyed = examkit::tls::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let page = keyed
        .get(format!("{}/app/keys", s.base))
        .bearer_auth(&key)
        .send()
        .await
        .expect("sent");
    assert_eq!(page.status().as_u16(), 303);
    let page = keyed
        .post(format!("{}/app/keys", s.base))
        .bearer_auth(&key)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("name=x&scope=marking:read&expires=30d")
        .send()
        .await
        .expect("sent");
    assert_eq!(page.status().as_u16(), 401);
    assert_eq!(s.store.keys(Some(&user)).await.expect("keys").len(), 1);
}

async fn keys_are_made_listed_revoked_and_their_usage_shown(db: Db) {
    let s = start(db, generous()).await;
    let (mut b, _) = signed_in(&s, "ann@school.test").await;
    let list = b.get("/app/keys").await;
    assert!(list.body.contains("No keys yet."));
    for scope in Scope::ALL {
        assert!(
            list.body.contains(&format!("value=\"{}\"", scope.as_str())),
            "{scope:?}"
        );
    }
    let token = list.csrf();
    let created = b
        .post(
            "/app/keys",
            &[
                ("csrf", &token),
                ("name", "marking pipeline"),
                ("scope", "marking:read"),
                ("scope", "questions:read"),
                ("expires", "90d"),
            ],
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        created
            .headers
            .get("cache-control")
            .and_then(|v| v.to_str().ok()),
        Some("no-store")
    );
    let at = created.body.find("ek_live_").expect("the secret is shown");
    let secret: String = created.body[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    assert!(examkit::auth::is_well_formed(&secret), "{secret}");
    // The secret works on /v1 with exactly its scopes.
    let me = s.get("/v1/me", &secret).await;
    assert_eq!(me.status, 200);
    assert_eq!(
        me.json()["key"]["scopes"],
        json!(["questions:read", "marking:read"])
    );
    assert_eq!(s.get("/v1/papers", &secret).await.status, 403);
    // …and is never shown again.
    let list = b.get("/app/keys").await;
    assert!(!list.body.contains(&secret));
    let key = s.store.keys(None).await.expect("keys").remove(0);
    assert!(list.body.contains("marking pipeline"));
    assert!(list.body.contains(&key.fingerprint[..16]));
    let days = (key.expires_at - key.created_at) / 86_400_000;
    assert_eq!(days, 90);

    // Usage: the requests just made, by operation and status.
    let usage = b.get(&format!("/app/keys/{}", key.id)).await;
    assert_eq!(usage.status, 200);
    assert!(usage.body.contains("<svg"), "a chart drawn by the server");
    assert!(usage.body.contains("GET /v1/me"));
    assert!(usage.body.contains("GET /v1/papers"));
    assert!(usage.body.contains(">403<"));
    assert!(
        usage.body.contains("id=\"usage-total\">2<"),
        "{}",
        usage.body
    );

    // Revoking asks first, then stops the very next request.
    let confirm = b.get(&format!("/app/keys/{}/revoke", key.id)).await;
    assert_eq!(confirm.status, 200);
    assert!(confirm.body.contains("Revoke the key"));
    assert_eq!(
        s.get("/v1/me", &secret).await.status,
        200,
        "asking revokes nothing"
    );
    let done = b
        .post(
            &format!("/app/keys/{}/revoke", key.id),
            &[("csrf", &confirm.csrf())],
        )
        .await;
    assert_eq!((done.status, done.location()), (303, "/app/keys"));
    s.get("/v1/me", &secret)
        .await
        .assert_error(401, "revoked_api_key");
    let list = b.get("/app/keys").await;
    assert!(list.body.contains("revoked"));
    assert!(!list.body.contains(&format!("/app/keys/{}/revoke", key.id)));
}

async fn the_key_form_refuses_its_bad_forms(db: Db) {
    let s = start(db, generous()).await;
    let (mut b, user) = signed_in(&s, "ann@school.test").await;
    let token = b.get("/app/keys").await.csrf();
    let long = "n".repeat(101);
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (
            vec![("name", " "), ("scope", "marking:read"), ("expires", "30d")],
            "Give the key a name.",
        ),
        (
            vec![
                ("name", &long),
                ("scope", "marking:read"),
                ("expires", "30d"),
            ],
            "at most 100 characters",
        ),
        (
            vec![
                ("name", "a\u{7}b"),
                ("scope", "marking:read"),
                ("expires", "30d"),
            ],
            "control characters",
        ),
        (
            vec![("name", "k"), ("expires", "30d")],
            "Choose at least one scope.",
        ),
        (
            vec![("name", "k"), ("scope", "admin:all"), ("expires", "30d")],
            "not one examkit knows",
        ),
        (
            vec![("name", "k"), ("scope", "marking:read")],
            "Choose when the key expires",
        ),
        (
            vec![("name", "k"), ("scope", "marking:read"), ("expires", "10y")],
            "Choose when the key expires",
        ),
    ];
    for (fields, message) in cases {
        let mut form = vec![("csrf", token.as_str())];
        form.extend(fields);
        let page = b.post("/app/keys", &form).await;
        assert_eq!(page.status, 422, "{message}");
        assert!(page.body.contains(message), "{message}: {}", page.body);
    }
    assert!(s.store.keys(None).await.expect("keys").is_empty());
    // The twenty-first active key is refused with the limit named; a revoked key frees a place.
    for _ in 0..20 {
        s.key(&user, &[Scope::MarkingRead]).await;
    }
    let form = [
        ("csrf", token.as_str()),
        ("name", "one more"),
        ("scope", "marking:read"),
        ("expires", "30d"),
    ];
    let page = b.post("/app/keys", &form).await;
    assert_eq!(page.status, 422);
    assert!(page.body.contains("20 active keys"), "{}", page.body);
    let first = s.store.keys(Some(&user)).await.expect("keys").remove(0);
    s.store.revoke_key(&first.id).await.expect("revoked");
    assert_eq!(b.post("/app/keys", &form).await.status, 201);
}

/// A question's current revision, as stored.
async fn revision_of(s: &Server, user: &str, question: &str) -> i64 {
    s.store
        .question(user, question)
        .await
        .expect("read")
        .expect("the question")
        .revision
}

/// A review through `PATCH /v1/marking/questions/{id}`, which must succeed.
async fn api_review(s: &Server, key: &str, question: &str, revision: i64, decision: Value) {
    let patched = s
        .send(
            reqwest::Method::PATCH,
            &format!("/v1/marking/questions/{question}"),
            Some(key),
            &[("content-type", "application/json")],
            Some(
                json!({ "revision": revision, "decisions": [decision] })
                    .to_string()
                    .into_bytes(),
            ),
        )
        .await;
    let body = String::from_utf8_lossy(&patched.body);
    assert_eq!(patched.status, 200, "{body}");
}

async fn post_form(b: &mut Browser, path: &str, form: Vec<(String, String)>) -> Page {
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    b.post(path, &pairs).await
}

fn outcome_of(page: &str, criterion: &str) -> String {
    let marker = format!("data-criterion=\"{criterion}\" data-outcome=\"");
    let at = page
        .find(&marker)
        .unwrap_or_else(|| panic!("no row {criterion}"));
    let rest = &page[at + marker.len()..];
    rest[..rest.find('"').expect("quote")].to_owned()
}

async fn decisions_are_saved_through_the_review_path(db: Db) {
    let s = start(db, generous()).await;
    let (mut b, user) = signed_in(&s, "ann@school.test").await;
    let (_, questions, work) = marked_import(&s, &user, None).await;
    let q3 = questions["3"]["id"].as_str().expect("id").to_owned();
    let path = format!("/app/questions/{q3}");

    // The list can show only what needs review.
    let listed = b.get("/app/sessions?review=1").await;
    assert!(listed.body.contains(&path));
    assert!(
        !listed
            .body
            .contains(questions["1"]["id"].as_str().expect("id"))
    );

    let page = b.get(&path).await;
    assert_eq!(page.status, 200);
    assert_eq!(outcome_of(&page.body, "q3b-b1"), "uncertain");
    // Uncertain rows first; evidence boxes drawn on the work page with the criterion's id.
    // Uncertain rows come first.
    let rows: Vec<String> = page
        .body
        .match_indices("<li class=\"criterion\" id=\"c-")
        .map(|(at, m)| {
            let rest = &page.body[at + m.len()..];
            rest[..rest.find('"').expect("quote")].to_owned()
        })
        .collect();
    assert_eq!(rows.len(), 4);
    let uncertain: Vec<bool> = rows
        .iter()
        .map(|id| outcome_of(&page.body, id) == "uncertain")
        .collect();
    assert_eq!(uncertain, [true, true, false, false], "{rows:?}");
    assert!(page.body.contains(&format!("src=\"/app/pages/{work}/4\"")));
    assert!(
        page.body
            .contains("rect class=\"box uncertain\" data-criterion=\"q3b-b1\"")
    );
    assert!(
        page.body
            .contains("Decided by Marker “Department marking pipeline” (imported)")
    );
    let score = &questions["3"]["score"];
    assert_eq!(
        (score["awarded"].as_i64(), score["possible"].as_i64()),
        (Some(2), Some(4))
    );
    assert!(page.body.contains("id=\"score\">2–4 of 4<"));
    let token = page.csrf();
    let decide = |criterion: &str, action: &str, reason: &str, revision: &str| {
        vec![
            ("csrf".to_owned(), token.clone()),
            ("criterion".to_owned(), criterion.to_owned()),
            ("action".to_owned(), action.to_owned()),
            ("reason".to_owned(), reason.to_owned()),
            ("revision".to_owned(), revision.to_owned()),
        ]
    };
    let decide_path = format!("{path}/decide");
    // Bad forms, each with its reason, nothing saved.
    for (form, status, message) in [
        (
            decide("q3b-b1", "accept", "", "1"),
            422,
            "cannot be accepted",
        ),
        (decide("q3b-b1", "award", "  ", "1"), 422, "Give a reason"),
        (
            decide("q3b-b1", "promote", "x", "1"),
            422,
            "accept, award or withhold",
        ),
        (
            decide("nope", "award", "x", "1"),
            400,
            "not one of this question",
        ),
        (decide("q3b-b1", "award", "x", "one"), 400, "no revision"),
    ] {
        let page = post_form(&mut b, &decide_path, form).await;
        assert_eq!(page.status, status, "{message}: {}", page.body);
        assert!(page.body.contains(message), "{message}");
    }
    assert_eq!(revision_of(&s, &user, &q3).await, 1);

    // An award saves revision 2 through the engine; the log says who.
    let page = post_form(
        &mut b,
        &decide_path,
        decide(
            "q3b-b1",
            "award",
            "Convergence shown on closer reading.",
            "1",
        ),
    )
    .await;
    assert_eq!(page.status, 303, "{}", page.body);
    assert!(
        page.location()
            .starts_with(&format!("{path}?saved=B1#c-q3b-b1")),
        "{}",
        page.location()
    );
    let saved = s.store.question(&user, &q3).await.expect("q").expect("q");
    assert_eq!((saved.revision, saved.status.as_str()), (2, "needs_review"));
    let log = s.store.review_log(&q3).await.expect("log");
    assert_eq!(log["q3b-b1"].reviewer.name, "ann@school.test");
    assert_eq!(log["q3b-b1"].outcome, "awarded");
    let page = b.get(&path).await;
    assert_eq!(outcome_of(&page.body, "q3b-b1"), "awarded");
    assert!(page.body.contains("Decided by Teacher ann@school.test"));
    // The API reads the same revision.
    let key = s.key(&user, Scope::ALL).await;
    let read = s
        .get(&format!("/v1/marking/sessions/{}", saved.session_id), &key)
        .await;
    assert_eq!(read.json()["session"]["questions"][2]["revision"], 2);

    // A stale save shows both versions and lets the teacher apply theirs to the current one.
    let mut api_decision = questions["3"]["allocations"][0].clone();
    api_decision = json!({
        "criterionId": "q3a-b1", "outcome": "withheld", "reason": "Checked by the API client.",
        "evidence": api_decision["evidence"], "conditionChecks": []
    });
    api_review(&s, &key, &q3, 2, api_decision).await;
    let conflict = post_form(
        &mut b,
        &decide_path,
        decide("q3b-m1", "withhold", "No method shown.", "2"),
    )
    .await;
    assert_eq!(conflict.status, 409);
    assert!(conflict.body.contains("id=\"conflict\""));
    assert!(conflict.body.contains("Your decision"));
    assert!(conflict.body.contains("Apply mine to revision 3"));
    let log = s.store.review_log(&q3).await.expect("log");
    assert_eq!(log["q3a-b1"].reviewer.name, "test", "the API key's name");
    let page = post_form(
        &mut b,
        &decide_path,
        decide("q3b-m1", "withhold", "No method shown.", "3"),
    )
    .await;
    assert_eq!(page.status, 303);
    assert_eq!(revision_of(&s, &user, &q3).await, 4);
    // Dependents follow the engine: withholding q3b-m1 withholds the A1 that depends on it.
    let page = b.get(&path).await;
    assert_eq!(outcome_of(&page.body, "q3b-m1"), "withheld");
    assert_eq!(outcome_of(&page.body, "q3b-a1"), "withheld");
    assert!(
        page.body.contains("Submitted as awarded; the engine"),
        "{}",
        page.body
    );

    // The script's save gets the page back with the new score at once.
    let request = b
        .client
        .post(format!("{}{path}/decide", s.base))
        .header("x-requested-with", "fetch")
        .header("x-csrf-token", token.as_str())
        .header("content-type", "application/x-www-form-urlencoded")
        .body("criterion=q3b-m1&action=award&reason=Method+seen+after+all.&revision=4");
    let page = b.send(request).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Saved the decision on M1."));
    assert!(page.body.contains("id=\"revision\">5<"));
}

/// A stored question that cannot be read (here, a criterion without an id) is never shown as a
/// blank or defaulted page: the app says it cannot be read, deciding on it saves nothing, and the
/// API answers 500; the session's other questions are untouched.
async fn a_question_that_cannot_be_read_is_an_error_on_its_page(db: Db) {
    let s = start(db, generous()).await;
    let (mut b, user) = signed_in(&s, "ann@school.test").await;
    let (import, questions, _) = marked_import(&s, &user, None).await;
    let q1 = questions["1"]["id"].as_str().expect("id").to_owned();
    let q3 = questions["3"]["id"].as_str().expect("id").to_owned();
    let stored = s
        .store
        .question(&user, &q3)
        .await
        .expect("read")
        .expect("q3");
    let mut question: Value = serde_json::from_str(&stored.question_json).expect("JSON");
    question["rubric"]["criteria"][0]
        .as_object_mut()
        .expect("a criterion")
        .remove("id");
    s.store
        .execute_write(
            examkit::store::Durability::Saved,
            sqlx::query("UPDATE marking_questions SET question_json = $1 WHERE id = $2")
                .bind(question.to_string())
                .bind(&q3),
        )
        .await
        .expect("corrupted");

    let page = b.get(&format!("/app/questions/{q3}")).await;
    assert_eq!(page.status, 500, "{}", page.body);
    assert!(page.body.contains("id=\"unreadable\""), "{}", page.body);
    assert!(page.body.contains("cannot read"), "{}", page.body);
    assert!(page.body.contains("unreadable_document"), "{}", page.body);
    assert!(page.body.contains("Question 3"), "{}", page.body);
    assert!(!page.body.contains("class=\"criterion\""), "{}", page.body);

    // Deciding on it shows the same page and saves nothing.
    let fine = b.get(&format!("/app/questions/{q1}")).await;
    assert_eq!(fine.status, 200, "{}", fine.body);
    let form = vec![
        ("csrf".to_owned(), fine.csrf()),
        ("criterion".to_owned(), "q3b-b1".to_owned()),
        ("action".to_owned(), "award".to_owned()),
        ("reason".to_owned(), "Seen.".to_owned()),
        ("revision".to_owned(), "1".to_owned()),
    ];
    let page = post_form(&mut b, &format!("/app/questions/{q3}/decide"), form).await;
    assert_eq!(page.status, 500, "{}", page.body);
    assert!(page.body.contains("id=\"unreadable\""), "{}", page.body);
    assert_eq!(revision_of(&s, &user, &q3).await, 1);

    // The API does not send a defaulted question either.
    let key = s.key(&user, Scope::ALL).await;
    let read = s.get(&format!("/v1/marking/sessions/{import}"), &key).await;
    assert_eq!(read.status, 500);
    assert_eq!(read.json()["error"]["code"], "internal_error");
}

async fn user_text_renders_inert(db: Db) {
    let s = start(db, generous()).await;
    let (mut b, user) = signed_in(&s, "ann@school.test").await;
    let hostile = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>";
    let (session, questions, _) = marked_import(&s, &user, Some(hostile)).await;
    let key = s.key(&user, Scope::ALL).await;
    // A reason holding markup, saved through the API.
    let q3 = questions["3"]["id"].as_str().expect("id");
    let decision = json!({
        "criterionId": "q3b-b1", "outcome": "withheld", "reason": hostile,
        "evidence": questions["3"]["allocations"][3]["evidence"], "conditionChecks": []
    });
    api_review(&s, &key, q3, 1, decision).await;
    for path in [
        "/app/sessions".to_owned(),
        format!("/app/sessions/{session}"),
        format!("/app/questions/{q3}"),
    ] {
        let page = b.get(&path).await;
        assert_eq!(page.status, 200, "{path}");
        assert!(!page.body.contains("<script>alert"), "{path}");
        assert!(!page.body.contains("<img src=x"), "{path}");
        assert!(
            page.body.contains(
                "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"
            ),
            "{path}"
        );
    }
    // A key's name too.
    let token = b.get("/app/keys").await.csrf();
    let made = b
        .post(
            "/app/keys",
            &[
                ("csrf", &token),
                ("name", hostile),
                ("scope", "marking:read"),
                ("expires", "30d"),
            ],
        )
        .await;
    assert_eq!(made.status, 201);
    let list = b.get("/app/keys").await;
    assert!(!list.body.contains("<script>alert"));
    assert!(list.body.contains("&lt;script&gt;"));
}

async fn other_accounts_ids_are_not_found(db: Db) {
    let s = start(db, generous()).await;
    let owner = s.user("Owner").await;
    let (session, questions, work) = marked_import(&s, &owner, None).await;
    let owners_key = s.key(&owner, &[Scope::MarkingRead]).await;
    let key_id = s.store.keys(Some(&owner)).await.expect("keys")[0]
        .id
        .clone();
    let q = questions["3"]["id"].as_str().expect("id").to_owned();
    let (mut b, _) = signed_in(&s, "eve@school.test").await;
    for path in [
        format!("/app/sessions/{session}"),
        format!("/app/questions/{q}"),
        format!("/app/keys/{key_id}"),
        format!("/app/keys/{key_id}/revoke"),
        format!("/app/pages/{work}/1"),
        format!("/app/sets/{session}/1"),
        "/app/questions/not-a-uuid".to_owned(),
        "/app/pages/not-a-uuid/1".to_owned(),
        "/app/no-such-page".to_owned(),
    ] {
        let page = b.get(&path).await;
        assert_eq!(page.status, 404, "{path}");
        assert!(
            page.headers["content-type"]
                .to_str()
                .expect("type")
                .starts_with("text/html")
        );
    }
    let token = b.get("/app/keys").await.csrf();
    let page = b
        .post(&format!("/app/keys/{key_id}/revoke"), &[("csrf", &token)])
        .await;
    assert_eq!(page.status, 404);
    assert_eq!(
        s.get("/v1/me", &owners_key).await.status,
        200,
        "the key still works"
    );
    let page = b
        .post(
            &format!("/app/questions/{q}/decide"),
            &[
                ("csrf", &token),
                ("criterion", "q3b-b1"),
                ("action", "award"),
                ("reason", "x"),
                ("revision", "1"),
            ],
        )
        .await;
    assert_eq!(page.status, 404);
    assert_eq!(revision_of(&s, &owner, &q).await, 1);
    // The owner sees the page image (rendered from the PDF); pages beyond the file are 404.
    let owner_email = "owner@school.test";
    let hash = examkit::password::hash(PASSWORD).expect("hash");
    s.store
        .set_login(Some(&owner), owner_email, &hash)
        .await
        .expect("login");
    let mut mine = Browser::new(&s);
    assert_eq!(mine.sign_in_as(owner_email, PASSWORD).await.status, 303);
    let image = mine.get(&format!("/app/pages/{work}/1")).await;
    assert_eq!(image.status, 200);
    assert_eq!(image.headers["content-type"], "image/jpeg");
    for bad in ["0", "7", "x", "-1"] {
        assert_eq!(
            mine.get(&format!("/app/pages/{work}/{bad}")).await.status,
            404,
            "{bad}"
        );
    }
}

async fn sessions_end_at_sign_out_expiry_and_password_change(db: Db) {
    let s = start_with(db, generous(), |state| {
        state.app.idle_ms = 1_500;
    })
    .await;
    let (mut b, user) = signed_in(&s, "ann@school.test").await;
    let mut other = Browser::new(&s);
    assert_eq!(
        other.sign_in_as("ann@school.test", PASSWORD).await.status,
        303
    );
    // Sign-out ends this session only.
    let token = b.get("/app/keys").await.csrf();
    let out = b.post("/app/sign-out", &[("csrf", &token)]).await;
    assert_eq!((out.status, out.location()), (303, "/app/sign-in"));
    assert!(out.set_cookies().iter().any(|c| c.contains("Max-Age=0")));
    assert_eq!(b.get("/app/keys").await.status, 303);
    assert_eq!(other.get("/app/keys").await.status, 200);
    // Sign-out everywhere ends every session of the account.
    let mut third = Browser::new(&s);
    assert_eq!(
        third.sign_in_as("ann@school.test", PASSWORD).await.status,
        303
    );
    let token = other.get("/app/keys").await.csrf();
    assert_eq!(
        other
            .post("/app/sign-out-everywhere", &[("csrf", &token)])
            .await
            .status,
        303
    );
    assert_eq!(third.get("/app/keys").await.status, 303);
    // A new password ends the sessions made with the old one.
    assert_eq!(
        third.sign_in_as("ann@school.test", PASSWORD).await.status,
        303
    );
    let hash = examkit::password::hash("a new password!").expect("hash");
    s.store
        .set_login(Some(&user), "ann@school.test", &hash)
        .await
        .expect("set");
    assert_eq!(third.get("/app/keys").await.status, 303);
    assert_eq!(
        third.sign_in_as("ann@school.test", PASSWORD).await.status,
        401
    );
    // Idle expiry.
    assert_eq!(
        third
            .sign_in_as("ann@school.test", "a new password!")
            .await
            .status,
        303
    );
    assert_eq!(third.get("/app/keys").await.status, 200);
    tokio::time::sleep(std::time::Duration::from_millis(1_700)).await;
    assert_eq!(third.get("/app/keys").await.status, 303, "idle too long");
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM app_sessions")
        .fetch_one(s.store.pool())
        .await
        .expect("count");
    assert_eq!(left, 0, "ended sessions are deleted");
}

async fn every_response_carries_the_security_headers(db: Db) {
    let s = start(db, generous()).await;
    let (mut b, _) = signed_in(&s, "ann@school.test").await;
    for path in [
        "/app/sign-in",
        "/app/keys",
        "/app/sessions",
        "/app/nope",
        "/",
    ] {
        let page = b.get(path).await;
        let csp = page.headers["content-security-policy"]
            .to_str()
            .expect("csp");
        assert!(csp.contains("script-src 'self'"), "{path}");
        assert!(!csp.contains("unsafe-inline"), "{path}");
        assert!(csp.contains("frame-ancestors 'none'"), "{path}");
        assert_eq!(page.headers["x-frame-options"], "DENY", "{path}");
        assert_eq!(page.headers["x-content-type-options"], "nosniff", "{path}");
    }
    // Pages hold no inline script or style.
    let page = b.get("/app/keys").await;
    assert!(!page.body.contains("<script>"));
    assert!(!page.body.contains("style="));
    // Scripts and styles come from the binary at hashed addresses, cached for good.
    let src = {
        let at = page.body.find("src=\"/app/static/").expect("script") + 5;
        page.body[at..at + page.body[at..].find('"').expect("quote")].to_owned()
    };
    let script = b.get(&src).await;
    assert_eq!(script.status, 200);
    assert!(
        script.headers["cache-control"]
            .to_str()
            .expect("cc")
            .contains("immutable")
    );
    assert!(script.body.contains("single-keys") || script.body.contains("singleKeys"));
    assert_eq!(b.get("/app/static/app.0000.js").await.status, 404);
}

async fn sessions_and_revocations_are_shared_between_servers(db: Db) {
    let first = start(db, generous()).await;
    let second = common::start_on(&first.database_url, generous()).await;
    let (mut b, user) = signed_in(&first, "ann@school.test").await;
    let key = first.key(&user, Scope::ALL).await;
    let key_id = first.store.keys(Some(&user)).await.expect("keys")[0]
        .id
        .clone();
    // The session made on the first server works on the second.
    let mut there = Browser::new(&second);
    there.cookies = b.cookies.clone();
    let page = there.get("/app/keys").await;
    assert_eq!(page.status, 200);
    // Revoking on the second stops the key on the first at once.
    assert_eq!(first.get("/v1/me", &key).await.status, 200);
    let token = page.csrf();
    assert_eq!(
        there
            .post(&format!("/app/keys/{key_id}/revoke"), &[("csrf", &token)])
            .await
            .status,
        303
    );
    first
        .get("/v1/me", &key)
        .await
        .assert_error(401, "revoked_api_key");
    // Signing out on the second ends the session on the first.
    assert_eq!(
        there
            .post("/app/sign-out", &[("csrf", &token)])
            .await
            .status,
        303
    );
    assert_eq!(b.get("/app/keys").await.status, 303);
}

/// Moves the sign-in of every session of `user` back by `minutes`, as if made that long ago.
async fn signed_in_ago(s: &Server, user: &str, minutes: i64) {
    s.store
        .execute_write(
            examkit::store::Durability::Saved,
            sqlx::query("UPDATE app_sessions SET created_at = created_at - $1 WHERE user_id = $2")
                .bind(minutes * 60_000)
                .bind(user),
        )
        .await
        .expect("sessions aged");
}

async fn making_a_key_asks_for_the_password_after_ten_minutes(db: Db) {
    let s = start(db, generous()).await;
    let (mut b, user) = signed_in(&s, "ann@school.test").await;
    let key_form = |token: &str, password: Option<&str>| {
        let mut form = vec![
            ("csrf".to_owned(), token.to_owned()),
            ("name".to_owned(), "pipeline".to_owned()),
            ("scope".to_owned(), "marking:read".to_owned()),
            ("expires".to_owned(), "30d".to_owned()),
        ];
        if let Some(password) = password {
            form.push(("password".to_owned(), password.to_owned()));
        }
        form
    };
    let keys = |s: &Server| {
        let store = s.store.clone();
        let user = user.clone();
        async move { store.keys(Some(&user)).await.expect("keys").len() }
    };
    // A fresh sign-in makes a key without the password.
    let list = b.get("/app/keys").await;
    assert!(!list.body.contains("name=\"password\""), "{}", list.body);
    let token = list.csrf();
    let made = post_form(&mut b, "/app/keys", key_form(&token, None)).await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(keys(&s).await, 1);

    // Nine minutes after signing in, still not.
    signed_in_ago(&s, &user, 9).await;
    let list = b.get("/app/keys").await;
    assert!(!list.body.contains("id=\"key-password\""));

    // Past ten minutes the form asks for it, and a key needs it.
    signed_in_ago(&s, &user, 2).await;
    let list = b.get("/app/keys").await;
    assert!(
        list.body
            .contains("id=\"key-password\" type=\"password\" name=\"password\""),
        "{}",
        list.body
    );
    assert!(list.body.contains("more than 10 minutes ago"));
    for (password, message) in [
        (None, "Enter your password to make a key."),
        (Some(""), "Enter your password to make a key."),
        (Some("not the password"), "The password is not right."),
        (Some("correct horse batter"), "The password is not right."),
        (Some(&*"x".repeat(2000)), "The password is not right."),
    ] {
        let page = post_form(&mut b, "/app/keys", key_form(&token, password)).await;
        assert_eq!(page.status, 401, "{password:?}: {}", page.body);
        assert!(page.body.contains(message), "{password:?}: {}", page.body);
        assert!(!page.body.contains("id=\"secret\""), "no secret shown");
        // The form comes back with what was sent, and still asks for the password.
        assert!(page.body.contains("value=\"pipeline\""));
        assert!(page.body.contains("id=\"key-password\""));
        assert_eq!(keys(&s).await, 1, "{password:?}: no key made");
    }
    // A refused password does not end the session; the wrong ones count as failed sign-ins of
    // the account (three so far), so a stolen session guesses no faster than the sign-in form.
    assert_eq!(b.get("/app/keys").await.status, 200);
    let mut other = Browser::new(&s);
    assert_eq!(
        other.sign_in_as("ann@school.test", PASSWORD).await.status,
        303
    );
    // A form that is not right is refused for that first, the password unchecked.
    let mut bad = key_form(&token, Some(PASSWORD));
    bad[1].1 = " ".to_owned();
    let page = post_form(&mut b, "/app/keys", bad).await;
    assert_eq!(page.status, 422);
    assert!(page.body.contains("Give the key a name."));
    assert_eq!(keys(&s).await, 1);
    // The right password makes the key.
    let made = post_form(&mut b, "/app/keys", key_form(&token, Some(PASSWORD))).await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert!(made.body.contains("id=\"secret\""));
    assert_eq!(keys(&s).await, 2);
    // The other browser's fresh sign-in needs none.
    let token = other.get("/app/keys").await.csrf();
    assert_eq!(
        post_form(&mut other, "/app/keys", key_form(&token, None))
            .await
            .status,
        201
    );
    // Two more wrong passwords make five failures: the account is paused, and even the right
    // password is then refused unchecked, on the key form as at sign-in.
    signed_in_ago(&s, &user, 11).await;
    let token = b.get("/app/keys").await.csrf();
    for _ in 0..2 {
        let page = post_form(&mut b, "/app/keys", key_form(&token, Some("wrong guess 1"))).await;
        assert_eq!(page.status, 401, "{}", page.body);
    }
    let made = keys(&s).await;
    let page = post_form(&mut b, "/app/keys", key_form(&token, Some(PASSWORD))).await;
    assert_eq!(page.status, 429, "{}", page.body);
    assert!(page.body.contains("paused"), "{}", page.body);
    assert_eq!(keys(&s).await, made, "no key made while paused");
    assert_eq!(
        Browser::new(&s)
            .sign_in_as("ann@school.test", PASSWORD)
            .await
            .status,
        429
    );
}

async fn sign_out_everywhere_is_a_button_on_the_keys_page(db: Db) {
    let s = start(db, generous()).await;
    let (mut b, user) = signed_in(&s, "ann@school.test").await;
    let key = s.key(&user, &[Scope::MarkingRead]).await;
    let mut other = Browser::new(&s);
    assert_eq!(
        other.sign_in_as("ann@school.test", PASSWORD).await.status,
        303
    );
    let list = b.get("/app/keys").await;
    let at = list
        .body
        .find("<form method=\"post\" action=\"/app/sign-out-everywhere\">")
        .unwrap_or_else(|| panic!("no button: {}", list.body));
    let form = &list.body[at..at + list.body[at..].find("</form>").expect("form ends")];
    assert!(form.contains("name=\"csrf\""), "{form}");
    assert!(form.contains("<button"), "{form}");
    assert!(form.contains("End every session"), "{form}");
    let token = {
        let start = form.find("value=\"").expect("token") + "value=\"".len();
        form[start..start + form[start..].find('"').expect("quote")].to_owned()
    };
    // Without the token it is refused and nothing ends.
    let refused = b.post("/app/sign-out-everywhere", &[]).await;
    assert_eq!(refused.status, 403);
    assert_eq!(other.get("/app/keys").await.status, 200);
    // The button's form ends both sessions; the API key keeps working.
    let out = b
        .post("/app/sign-out-everywhere", &[("csrf", &token)])
        .await;
    assert_eq!((out.status, out.location()), (303, "/app/sign-in"));
    assert!(out.set_cookies().iter().any(|c| c.contains("Max-Age=0")));
    assert_eq!(b.get("/app/keys").await.status, 303);
    assert_eq!(other.get("/app/keys").await.status, 303);
    assert_eq!(s.get("/v1/me", &key).await.status, 200);
}

async fn page_images_and_signed_in_pages_are_never_stored(db: Db) {
    let s = start(db, generous()).await;
    let (mut b, user) = signed_in(&s, "ann@school.test").await;
    let (session, questions, work) = marked_import(&s, &user, None).await;
    let key = s.key(&user, Scope::ALL).await;
    let key_id = s.store.keys(Some(&user)).await.expect("keys")[0].id.clone();
    let question = questions["3"]["id"].as_str().expect("id");
    let cache = |page: &Page| {
        page.headers
            .get("cache-control")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let image = b.get(&format!("/app/pages/{work}/1")).await;
    assert_eq!(image.status, 200);
    assert_eq!(image.headers["content-type"], "image/jpeg");
    assert_eq!(cache(&image), "no-store", "the page image");
    for path in [
        "/app/sessions".to_owned(),
        "/app/sessions?review=1".to_owned(),
        format!("/app/sessions/{session}"),
        format!("/app/questions/{question}"),
        "/app/keys".to_owned(),
        format!("/app/keys/{key_id}"),
        format!("/app/keys/{key_id}/revoke"),
    ] {
        let page = b.get(&path).await;
        assert_eq!(page.status, 200, "{path}");
        assert_eq!(cache(&page), "no-store", "{path}");
    }
    // The API's only route serving a scan's bytes is not stored either.
    let asset = s.get(&format!("/v1/marking/assets/{work}"), &key).await;
    assert_eq!(asset.status, 200);
    assert_eq!(asset.headers["cache-control"], "private, no-store");
}

async fn the_saved_message_comes_from_the_question_not_the_address(db: Db) {
    let s = start(db, generous()).await;
    let (mut b, user) = signed_in(&s, "ann@school.test").await;
    let (_, questions, _) = marked_import(&s, &user, None).await;
    let q3 = questions["3"]["id"].as_str().expect("id");
    let path = format!("/app/questions/{q3}");
    // A code of this question's criteria names it.
    let page = b.get(&format!("{path}?saved=B1")).await;
    assert!(
        page.body
            .contains("<p class=\"notice\" id=\"saved\">Saved the decision on B1.</p>"),
        "{}",
        page.body
    );
    // Anything else shows nothing: markup, another question's code, words of someone's choosing.
    for sent in [
        "%3Cscript%3Ealert(1)%3C%2Fscript%3E",
        "<script>alert(1)</script>",
        "Z9",
        "B1.+Your+account+is+locked%3A+call+0800+000+000",
        "",
    ] {
        let page = b.get(&format!("{path}?saved={sent}")).await;
        assert_eq!(page.status, 200, "{sent}");
        assert!(!page.body.contains("id=\"saved\""), "{sent}: {}", page.body);
        assert!(!page.body.contains("alert(1)"), "{sent}");
        assert!(!page.body.contains("0800"), "{sent}");
    }
}

/// `examkit serve` as shipped, on a fresh SQLite data directory holding an account that signs in
/// as `ann@school.test`; its log (standard error) is read once it has stopped.
struct Shipped {
    child: std::process::Child,
    base: String,
    log: Option<std::thread::JoinHandle<String>>,
    _dir: tempfile::TempDir,
}

impl Shipped {
    fn examkit(data: &std::path::Path) -> std::process::Command {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_examkit"));
        command
            .env("EXAMKIT_DATA_DIR", data)
            .env("EXAMKIT_LOG", "info")
            .env_remove("DATABASE_URL")
            .env_remove("EXAMKIT_PUBLIC_URL")
            .env_remove("EXAMKIT_LISTEN")
            .env_remove("EXAMKIT_LOG_FORMAT");
        command
    }

    fn start(flags: &[&str], env: &[(&str, &str)]) -> Shipped {
        use std::io::{BufRead, Read, Write};
        use std::process::Stdio;
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().join("data");
        let mut create = Shipped::examkit(&data)
            .args([
                "users",
                "create",
                "--email",
                "ann@school.test",
                "--password-stdin",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("users create runs");
        create
            .stdin
            .take()
            .expect("stdin")
            .write_all(format!("{PASSWORD}\n").as_bytes())
            .expect("password written");
        assert!(create.wait().expect("users create ends").success());
        let mut child = Shipped::examkit(&data)
            .args(["serve", "--listen", "127.0.0.1:0", "--sample-bank", "off"])
            .args(["--workers", "0"])
            .args(flags)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("examkit serve starts");
        let mut stderr = child.stderr.take().expect("stderr");
        let log = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the bound address is printed");
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("no listening line: {line:?}"))
            .to_owned();
        Shipped {
            child,
            base,
            log: Some(log),
            _dir: dir,
        }
    }

    /// Stops the service and returns everything it logged.
    fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.log
            .take()
            .and_then(|log| log.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Shipped {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn hsts(page: &Page) -> Option<&str> {
    page.headers
        .get("strict-transport-security")
        .and_then(|v| v.to_str().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_https_public_url_makes_cookies_secure_and_adds_hsts_on_loopback() {
    let served = Shipped::start(&["--public-url", "https://exam.school.test"], &[]);
    let mut b = Browser::at(&served.base);
    let form = b.get("/app/sign-in").await;
    assert_eq!(hsts(&form), Some("max-age=31536000"));
    let cookie = form
        .set_cookies()
        .into_iter()
        .find(|c| c.starts_with("__Host-examkit_sign_in="))
        .unwrap_or_else(|| panic!("{:?}", form.set_cookies()));
    assert!(cookie.ends_with("; Secure"), "{cookie}");
    let page = b.sign_in_as("ann@school.test", PASSWORD).await;
    assert_eq!(page.status, 303, "{}", page.body);
    let cookie = page
        .set_cookies()
        .into_iter()
        .find(|c| c.starts_with("__Host-examkit_session="))
        .unwrap_or_else(|| panic!("{:?}", page.set_cookies()));
    for flag in ["; Secure", "; HttpOnly", "; SameSite=Strict", "; Path=/;"] {
        assert!(cookie.contains(flag), "{flag} in {cookie}");
    }
    assert!(!cookie.contains("Domain="), "{cookie}");
    // Every response of the service carries it: the app's, the API's, health, unknown routes.
    for path in [
        "/",
        "/app/keys",
        "/app/nope",
        "/v1/me",
        "/v1/nope",
        "/healthz",
        "/nope",
    ] {
        let page = b.get(path).await;
        assert_eq!(hsts(&page), Some("max-age=31536000"), "{path}");
    }
    assert_eq!(b.get("/app/keys").await.status, 200, "signed in");
    // Requests from the proxy are what is expected: nothing to warn about.
    let request = b
        .client
        .get(format!("{}/app/keys", served.base))
        .header("x-forwarded-proto", "https");
    assert_eq!(b.send(request).await.status, 200);
    let log = served.stop();
    assert!(!log.contains("not Secure"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_loopback_without_a_public_url_cookies_are_plain_and_the_log_says_so() {
    let served = Shipped::start(&[], &[]);
    let mut b = Browser::at(&served.base);
    let form = b.get("/app/sign-in").await;
    let cookie = form
        .set_cookies()
        .into_iter()
        .find(|c| c.starts_with("examkit_sign_in="))
        .unwrap_or_else(|| panic!("{:?}", form.set_cookies()));
    assert!(!cookie.contains("Secure"), "{cookie}");
    let page = b.sign_in_as("ann@school.test", PASSWORD).await;
    assert_eq!(page.status, 303, "{}", page.body);
    let cookie = page
        .set_cookies()
        .into_iter()
        .find(|c| c.starts_with("examkit_session="))
        .unwrap_or_else(|| panic!("{:?}", page.set_cookies()));
    assert!(!cookie.contains("Secure"), "{cookie}");
    for path in ["/", "/app/sign-in", "/app/keys", "/v1/me", "/healthz"] {
        assert_eq!(hsts(&b.get(path).await), None, "{path}");
    }
    // Three requests through an HTTPS proxy: one warning, naming the flag.
    for _ in 0..3 {
        let request = b
            .client
            .get(format!("{}/app/keys", served.base))
            .header("x-forwarded-proto", "https");
        assert_eq!(b.send(request).await.status, 200);
    }
    let log = served.stop();
    let started: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("cookies are not Secure (listening on loopback"))
        .collect();
    assert_eq!(started.len(), 1, "{log}");
    assert!(started[0].contains("WARN") && started[0].contains("--public-url"));
    let forwarded: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("X-Forwarded-Proto: https"))
        .collect();
    assert_eq!(forwarded.len(), 1, "{log}");
    assert!(forwarded[0].contains("WARN") && forwarded[0].contains("--public-url https://"));
}

#[test]
fn a_bad_public_url_stops_the_service_at_start() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (how, value, reason) in [
        ("flag", "exam.school.test", "a public URL is absolute"),
        (
            "env",
            "https://exam.school.test/?x",
            "a public URL has no query",
        ),
    ] {
        let mut command = Shipped::examkit(&dir.path().join("data"));
        // A database that cannot be opened: the URL must stop the start before it is tried.
        let database = dir.path().join("missing").join("examkit.db");
        command.args(["serve", "--listen", "127.0.0.1:0", "--database"]);
        command.arg(format!("sqlite://{}", database.display()));
        if how == "flag" {
            command.args(["--public-url", value]);
        } else {
            command.env("EXAMKIT_PUBLIC_URL", value);
        }
        let out = command.output().expect("examkit runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{how}: {stderr}");
        assert!(stderr.contains("--public-url"), "{how}: {stderr}");
        assert!(stderr.contains(reason), "{how}: {stderr}");
        assert!(out.stdout.is_empty(), "{how}: never listened");
    }
}

/// A form's fields, in order.
type Fields = Vec<(String, String)>;

/// The values of every form field `name` of the page (`name="…" value="…"`).
fn field_values(page: &str, name: &str) -> Vec<String> {
    let marker = format!("name=\"{name}\" value=\"");
    page.match_indices(&marker)
        .filter_map(|(at, _)| {
            let rest = &page[at + marker.len()..];
            Some(rest[..rest.find('"')?].to_owned())
        })
        .collect()
}

/// The `data-…` value of copy `copy`'s row of a set's page, for attribute `attr`.
fn copy_attr(page: &str, copy: u32, attr: &str) -> String {
    let row = format!("data-copy=\"{copy}\"");
    let at = page.find(&row).unwrap_or_else(|| panic!("no copy {copy}"));
    let rest = &page[at..];
    let end = rest.find("</tr>").expect("row end");
    let marker = format!("{attr}=\"");
    let found = rest[..end]
        .find(&marker)
        .unwrap_or_else(|| panic!("no {attr} in copy {copy}"));
    let value = &rest[found + marker.len()..end];
    value[..value.find('"').expect("quote")].to_owned()
}

async fn class_sets_are_settled_on_their_pages(db: Db) {
    use common::marking::{NEAT_HAND, SAMPLE_QUESTIONS, exported_paper, idem, sample_answers};

    let s = start(db, generous()).await;
    s.store.import_sample_bank().await.expect("sample bank");
    let (mut b, user) = signed_in(&s, "ann@school.test").await;
    let key = s.key(&user, Scope::ALL).await;
    let exported = exported_paper(&s, &key, &SAMPLE_QUESTIONS[..2]).await;
    let made = s
        .post_json(
            "/v1/class-sets",
            &key,
            Some(&idem()),
            json!({
                "paperId": exported.id, "revision": 1, "title": "Year 9 <b>mock</b>",
                "roster": [
                    {"name": "Ada Lovelace", "candidateNumber": "0001"},
                    {"name": "Alan Turing", "candidateNumber": "0002"}
                ]
            })
            .to_string()
            .as_bytes(),
        )
        .await;
    assert_eq!(made.status, 201, "{}", String::from_utf8_lossy(&made.body));
    let set = made.json()["classSet"].clone();
    let id = set["id"].as_str().expect("id").to_owned();
    let paper_pages = set["paperPages"].as_u64().expect("pages");
    let path = format!("/app/class-sets/{id}");
    let decide_path = format!("{path}/decide");
    let decisions = || async {
        s.store
            .decisions(&id)
            .await
            .expect("decisions")
            .into_iter()
            .map(|d| d.kind)
            .collect::<Vec<_>>()
    };

    // The list links to the set; the title a user typed is text.
    let list = b.get("/app/class-sets").await;
    assert_eq!(list.status, 200, "{}", list.body);
    assert!(
        list.body.contains(&format!("href=\"{path}\"")),
        "{}",
        list.body
    );
    assert!(list.body.contains("Year 9 &lt;b&gt;mock&lt;/b&gt;"));
    assert!(list.body.contains("data-stack=\"empty\""));
    assert!(list.body.contains("href=\"/app/class-sets\""), "a nav link");
    let empty = b.get(&path).await;
    assert_eq!(empty.status, 200);
    assert_eq!(
        empty
            .headers
            .get("cache-control")
            .and_then(|v| v.to_str().ok()),
        Some("no-store")
    );
    assert!(empty.body.contains("No page is uploaded yet"));
    assert!(empty.body.contains("Ada Lovelace") && empty.body.contains("0002"));
    assert_eq!(copy_attr(&empty.body, 1, "data-writer"), "printed");
    assert!(
        !empty.body.contains("id=\"start-marking\""),
        "nothing to mark yet"
    );
    // Starting with nothing scanned is refused with the reason.
    let csrf = empty.csrf();
    let refused = b
        .post(
            &format!("{path}/start"),
            &[("csrf", &csrf), ("token", &idem())],
        )
        .await;
    assert_eq!(refused.status, 409, "{}", refused.body);
    assert!(
        refused
            .body
            .contains("no page of the stack is uploaded yet")
    );

    // Ada's copy written and scanned; its first page with its code covered, and its second,
    // uploaded. Alan's copy has no page.
    let pdf = s.get(&format!("/v1/class-sets/{id}/export"), &key).await;
    assert_eq!(pdf.status, 200);
    let dir = tempfile::tempdir().expect("dir");
    let write = |name: &str, bytes: &[u8]| {
        let at = dir.path().join(name);
        std::fs::write(&at, bytes).expect("written");
        at.to_string_lossy().into_owned()
    };
    let (set_pdf, layout, answers) = (
        write("set.pdf", &pdf.body),
        write("layout.json", exported.layout.to_string().as_bytes()),
        write("answers.json", sample_answers().to_string().as_bytes()),
    );
    let out = write("page.png", b"");
    let range = format!("1:{paper_pages}");
    let made = examkit_scanmaker::make(&[
        "--paper",
        &set_pdf,
        "--layout",
        &layout,
        "--answers",
        &answers,
        "--out",
        &out,
        "--font",
        NEAT_HAND,
        "--pages",
        &range,
        "--dpi",
        "150",
    ])
    .expect("scanned");
    let mut images: Vec<image::RgbImage> = made[..2]
        .iter()
        .map(|path| image::open(path).expect("image").to_rgb8())
        .collect();
    let (w, h) = images[0].dimensions();
    for y in 0..h / 9 {
        for x in w * 3 / 4..w {
            images[0].put_pixel(x, y, image::Rgb([255, 255, 255]));
        }
    }
    let bytes = examkit_scanmaker::pdf_of_images(&images, 150, 85).expect("a PDF");
    let sent = s
        .send(
            reqwest::Method::POST,
            &format!("/v1/class-sets/{id}/scans?name=stack.pdf"),
            Some(&key),
            &[("content-type", "application/pdf")],
            Some(bytes),
        )
        .await;
    assert_eq!(sent.status, 201, "{}", String::from_utf8_lossy(&sent.body));
    let file = sent.json()["file"]["id"].as_str().expect("id").to_owned();
    // The pages' codes are what places them: no text needs reading.
    let workers = common::marking::workers(&s, |config| config.ocr = false);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    let page = loop {
        let page = b.get(&path).await;
        if page.body.contains("data-stack=\"read\"") {
            break page;
        }
        assert!(std::time::Instant::now() < deadline, "still reading");
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    };
    workers.shutdown().await;

    // The covered page waits for a person, shown with its image and a form.
    let image = format!("/app/pages/{file}/1");
    assert!(
        page.body.contains(&format!("src=\"{image}\"")),
        "{}",
        page.body
    );
    assert!(page.body.contains("data-placement=\"unknown\""));
    assert!(page.body.contains("Pages waiting for a person (1)"));
    let shown = b.get(&image).await;
    assert_eq!(shown.status, 200);
    assert_eq!(
        shown
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("image/jpeg")
    );
    assert_eq!(copy_attr(&page.body, 1, "data-state"), "incomplete");
    assert_eq!(copy_attr(&page.body, 2, "data-state"), "absent", "no page");
    assert!(page.body.contains("id=\"start-marking\""));
    let csrf = page.csrf();
    let place = |copy: &str, copy_page: &str, token: &str| {
        vec![
            ("csrf".to_owned(), csrf.clone()),
            ("token".to_owned(), token.to_owned()),
            ("kind".to_owned(), "place".to_owned()),
            ("file".to_owned(), file.clone()),
            ("page".to_owned(), "1".to_owned()),
            ("copy".to_owned(), copy.to_owned()),
            ("copyPage".to_owned(), copy_page.to_owned()),
        ]
    };

    // Bad forms are refused with a message, and save nothing.
    let cases: Vec<(Fields, u16, &str)> = vec![
        (place("9", "1", &idem()), 422, "the set has no copy 9"),
        (place("1", "", &idem()), 422, "copyPage is required"),
        (place("one", "1", &idem()), 422, "copy must be an integer"),
        (
            place("1", &(paper_pages + 1).to_string(), &idem()),
            422,
            "pages of the paper",
        ),
        (
            {
                let mut form = place("1", "1", &idem());
                form[3].1 = uuid::Uuid::new_v4().to_string();
                form
            },
            422,
            "the stack has no page 1",
        ),
        (
            vec![
                ("csrf".to_owned(), csrf.clone()),
                ("token".to_owned(), idem()),
                ("kind".to_owned(), "choose".to_owned()),
                ("file".to_owned(), file.clone()),
                ("page".to_owned(), "2".to_owned()),
            ],
            422,
            "one of the different scans",
        ),
        (
            {
                let mut form = place("1", "1", "");
                form.remove(1);
                form
            },
            400,
            "Reload the page",
        ),
    ];
    for (form, status, message) in cases {
        let refused = post_form(&mut b, &decide_path, form.clone()).await;
        assert_eq!(refused.status, status, "{form:?}: {}", refused.body);
        assert!(
            refused.body.contains(message),
            "{message}: {}",
            refused.body
        );
        if status == 422 {
            assert!(refused.body.contains("The decision was not saved."));
            assert!(
                refused.body.contains("id=\"copies-table\""),
                "the page again"
            );
        }
    }
    let mut forged = place("1", "1", &idem());
    forged[0].1 = "wrong".into();
    assert_eq!(post_form(&mut b, &decide_path, forged).await.status, 403);
    assert!(decisions().await.is_empty(), "nothing was saved");

    // The covered page placed through its form; sending the form again saves nothing more.
    let token = idem();
    let placed = post_form(&mut b, &decide_path, place("1", "1", &token)).await;
    assert_eq!(placed.status, 303, "{}", placed.body);
    assert_eq!(placed.location(), format!("{path}?saved=1#stack"));
    let again = post_form(&mut b, &decide_path, place("1", "1", &token)).await;
    assert_eq!((again.status, again.location()), (303, placed.location()));
    assert_eq!(decisions().await, ["place"]);
    let reused = post_form(&mut b, &decide_path, place("2", "1", &token)).await;
    assert_eq!(reused.status, 400, "another form under a used token");
    let page = b.get(placed.location()).await;
    assert!(
        page.body
            .contains("Saved: page 1 of stack.pdf placed as copy 001 page 1.")
    );
    // The placed page is read again as copy 1's first page before anything is marked from it.
    assert!(
        page.body.contains("data-stack=\"reading\""),
        "{}",
        page.body
    );
    let workers = common::marking::workers(&s, |config| config.ocr = false);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    let page = loop {
        let page = b.get(placed.location()).await;
        if page.body.contains("data-stack=\"read\"") {
            break page;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still reading the placed page"
        );
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    };
    workers.shutdown().await;
    assert!(page.body.contains("Pages waiting for a person (0)"));
    assert_eq!(copy_attr(&page.body, 1, "data-state"), "incomplete");
    assert!(
        page.body
            .contains(&format!("Incomplete: missing page {paper_pages}"))
    );
    let stored = s.store.decisions(&id).await.expect("decisions").remove(0);
    assert!(stored.made_by_key.starts_with("app:"), "{stored:?}");
    assert_eq!(stored.made_by_user, user);

    // Copy 1 said absent, then present again; written by Alan, who then cannot be given to
    // copy 2 as well.
    let copy_form = |kind: &str, copy: &str, extra: Option<&str>| {
        let mut form = vec![
            ("csrf".to_owned(), csrf.clone()),
            ("token".to_owned(), idem()),
            ("kind".to_owned(), kind.to_owned()),
            ("copy".to_owned(), copy.to_owned()),
        ];
        if let Some(student) = extra {
            form.push(("student".to_owned(), student.to_owned()));
        }
        form
    };
    let absent = post_form(&mut b, &decide_path, copy_form("absent", "1", None)).await;
    assert_eq!(absent.location(), format!("{path}?saved=2#copies"));
    let page = b.get(absent.location()).await;
    assert!(page.body.contains("Saved: copy 001 marked absent."));
    assert_eq!(copy_attr(&page.body, 1, "data-state"), "absent");
    assert!(page.body.contains("Absent (said by a person)"));
    assert!(page.body.contains("Mark present"));
    let present = post_form(&mut b, &decide_path, copy_form("present", "1", None)).await;
    assert_eq!(present.location(), format!("{path}?saved=3#copies"));
    let said = post_form(&mut b, &decide_path, copy_form("student", "1", Some("2"))).await;
    assert_eq!(said.status, 303, "{}", said.body);
    let taken = post_form(&mut b, &decide_path, copy_form("student", "2", Some("2"))).await;
    assert_eq!(taken.status, 409, "{}", taken.body);
    assert!(taken.body.contains("already said to be by this student"));
    let nobody = post_form(&mut b, &decide_path, copy_form("student", "2", Some("7"))).await;
    assert_eq!(nobody.status, 422);
    assert!(nobody.body.contains("no copy 7 was printed for a student"));
    assert_eq!(decisions().await, ["place", "absent", "present", "student"]);
    let page = b.get(&path).await;
    assert_eq!(copy_attr(&page.body, 1, "data-state"), "incomplete");
    assert!(!page.body.contains("(said by a person)"));
    assert_eq!(copy_attr(&page.body, 1, "data-writer"), "confirmed");
    assert_eq!(copy_attr(&page.body, 2, "data-writer"), "displaced");
    let row = &page.body[page.body.find("data-copy=\"1\"").expect("row")..];
    let row = &row[..row.find("</tr>").expect("end")];
    assert!(
        row.contains("<td class=\"student\">Alan Turing</td>")
            && row.contains("<td class=\"candidate\">0002</td>"),
        "{row}"
    );
    assert!(page.body.contains("copy 001 written by Alan Turing"));
    assert!(page.body.contains("In the app"));

    // The API sees the same decisions, made by the app's session.
    let read = s.get(&format!("/v1/class-sets/{id}"), &key).await.json();
    let api: Vec<&str> = read["classSet"]["stack"]["decisions"]
        .as_array()
        .expect("decisions")
        .iter()
        .map(|d| d["kind"].as_str().expect("kind"))
        .collect();
    assert_eq!(api, ["place", "absent", "present", "student"]);

    // Another account finds nothing: not the page, not its forms.
    let (mut other, _) = signed_in(&s, "bob@school.test").await;
    assert_eq!(other.get(&path).await.status, 404);
    assert!(!other.get("/app/class-sets").await.body.contains(&id));
    let theirs = other.get("/app/class-sets").await.csrf();
    let mut form = place("1", "1", &idem());
    form[0].1 = theirs.clone();
    assert_eq!(post_form(&mut other, &decide_path, form).await.status, 404);
    let start_form = vec![("csrf".to_owned(), theirs), ("token".to_owned(), idem())];
    assert_eq!(
        post_form(&mut other, &format!("{path}/start"), start_form)
            .await
            .status,
        404
    );
    assert_eq!(decisions().await.len(), 4);

    // Before marking starts, no script is said to be out of date.
    let before = b.get(&path).await;
    assert!(
        before.body.contains("Marking has not started."),
        "{}",
        before.body
    );
    assert!(
        !before.body.contains("id=\"out-of-date\""),
        "{}",
        before.body
    );

    // Marking starts from the page: one script (copy 2 has no page), linked to its review.
    let start_form = || {
        vec![
            ("csrf".to_owned(), csrf.clone()),
            ("token".to_owned(), idem()),
        ]
    };
    let form = start_form();
    let token = form[1].1.clone();
    let started = post_form(&mut b, &format!("{path}/start"), form).await;
    assert_eq!(started.status, 303, "{}", started.body);
    assert_eq!(
        started.location(),
        format!("{path}?started={token}#marking")
    );
    let page = b.get(started.location()).await;
    assert!(
        page.body
            .contains("Marking started: 1 script made, 0 set aside."),
        "{}",
        page.body
    );
    // The message is what the start saved, never what an address says: numbers or another
    // token show nothing.
    for forged in [
        format!("{path}?started=7&aside=3"),
        format!("{path}?started={}", idem()),
    ] {
        let page = b.get(&forged).await;
        assert_eq!(page.status, 200);
        assert!(
            !page.body.contains("Marking started"),
            "{forged}: {}",
            page.body
        );
        assert!(!page.body.contains("Nothing changed since"), "{forged}");
    }
    let scripts = s.store.class_set_scripts(&id).await.expect("scripts");
    assert_eq!(scripts.len(), 1);
    assert!(
        page.body
            .contains(&format!("href=\"/app/sessions/{}\"", scripts[0].session_id)),
        "{}",
        page.body
    );
    assert!(page.body.contains("Start marking again"));
    let form = start_form();
    let token = form[1].1.clone();
    let again = post_form(&mut b, &format!("{path}/start"), form).await;
    assert_eq!(again.location(), format!("{path}?started={token}#marking"));
    let page = b.get(again.location()).await;
    assert!(
        page.body
            .contains("Nothing changed since marking last started"),
        "{}",
        page.body
    );
    assert_eq!(
        s.store.class_set_scripts(&id).await.expect("scripts").len(),
        1
    );
    // Every form carries a token of its own.
    let tokens = field_values(&page.body, "token");
    assert!(tokens.len() > 2, "{tokens:?}");
    let distinct: std::collections::HashSet<&String> = tokens.iter().collect();
    assert_eq!(distinct.len(), tokens.len());

    // Once marked, the set's results: the marks, what the class got wrong (a table and a chart
    // drawn on the server), and the markbook's files, as the API writes them.
    let workers = common::marking::workers(&s, |_| {});
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    while s.get(&format!("/v1/class-sets/{id}"), &key).await.json()["classSet"]["marking"]["state"]
        != "marked"
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the script is still being marked"
        );
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    workers.shutdown().await;
    let page = b.get(&path).await;
    assert!(
        page.body.contains(&format!("href=\"{path}/results\"")),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains(&format!("href=\"{path}/markbook.xlsx\""))
    );
    let results = b.get(&format!("{path}/results")).await;
    assert_eq!(results.status, 200, "{}", results.body);
    assert!(
        results.body.contains("Year 9 &lt;b&gt;mock&lt;/b&gt;"),
        "the title is inert"
    );
    assert!(results.body.contains("id=\"marks-table\""));
    // Alan wrote copy 1; Ada's own copy was given to him, and no copy was said to be hers.
    assert!(
        results
            .body
            .contains("<td>Alan Turing</td><td>0002</td><td>1</td>"),
        "{}",
        results.body
    );
    assert!(
        results.body.contains("<td>Ada Lovelace</td><td>0001</td><td></td><td></td><td></td><td></td><td></td><td>no script</td>"),
        "{}",
        results.body
    );
    assert!(results.body.contains("id=\"criteria-chart\"") && results.body.contains("<svg"));
    assert!(results.body.contains("id=\"question-table\""));
    assert!(results.body.contains("id=\"most-lost\""));
    // Alan left questions blank: the marks he lost are listed, each stepping through the answers
    // that lost it.
    assert!(
        results.body.contains("Review the answers that lost it") && results.body.contains("?lost="),
        "{}",
        results.body
    );
    // Each is named by its requirement, its maths typeset and named in words, never raw.
    let most_lost = results
        .body
        .split("id=\"most-lost\"")
        .nth(1)
        .and_then(|rest| rest.split("</ol>").next())
        .expect("the marks most often lost");
    assert!(
        most_lost.contains("<span class=\"requirement\">")
            && most_lost.contains("<span class=\"math\" role=\"img\" aria-label=")
            && most_lost.contains("<svg"),
        "{most_lost}"
    );
    assert!(!most_lost.contains('$'), "{most_lost}");
    let csv = b.get(&format!("{path}/markbook.csv")).await;
    assert_eq!(csv.status, 200);
    let api_csv = s
        .get(&format!("/v1/class-sets/{id}/markbook.csv"), &key)
        .await;
    assert_eq!(
        csv.body,
        String::from_utf8(api_csv.body).expect("UTF-8"),
        "the app's file is the API's"
    );
    assert!(csv.body.contains("\r\n\"Maximum\","), "{}", csv.body);
    let xlsx = b.get(&format!("{path}/markbook.xlsx")).await;
    assert_eq!(xlsx.status, 200);
    assert_eq!(b.get(&format!("{path}/markbook.pdf")).await.status, 404);
    // Another account: the results and their files are not found.
    assert_eq!(other.get(&format!("{path}/results")).await.status, 404);
    assert_eq!(other.get(&format!("{path}/markbook.csv")).await.status, 404);

    // Ada's cover as scanned: its name area is cut from the page, shown beside her name.
    let page = b.get(&path).await;
    assert!(
        page.body.contains(&format!("src=\"{path}/covers/1\"")),
        "{}",
        page.body
    );
    let cover = b.get(&format!("{path}/covers/1")).await;
    assert_eq!(cover.status, 200, "{}", cover.body);
    assert_eq!(cover.headers["content-type"], "image/jpeg");
    let bytes = b
        .client
        .get(format!("{}{path}/covers/1", b.base))
        .header("cookie", b.cookie_header())
        .send()
        .await
        .expect("sent")
        .bytes()
        .await
        .expect("bytes");
    let area = image::load_from_memory(&bytes).expect("a JPEG");
    let (w, h) = (area.width(), area.height());
    assert!(w > 3 * h, "a strip across the cover, not the page: {w}x{h}");
    // Alan's copy has no page scanned, a copy the set has not and a number that is not one are
    // not found; nor is the cover for another account.
    for copy in ["2", "99", "one"] {
        assert_eq!(
            b.get(&format!("{path}/covers/{copy}")).await.status,
            404,
            "{copy}"
        );
    }
    assert_eq!(other.get(&format!("{path}/covers/1")).await.status, 404);
}

/// The `href` of the link with `id` on a page, when there is one.
fn link(page: &str, id: &str) -> Option<String> {
    let at = page.find(&format!("id=\"{id}\""))?;
    let rest = &page[at..];
    let rest = &rest[rest.find("href=\"")? + "href=\"".len()..];
    Some(rest[..rest.find('"')?].replace("&amp;", "&"))
}

/// From the most-lost list or a set's question, the by-question review steps through only the
/// answers that lost the criterion (marked, withheld), in the set's order; deciding keeps the
/// filter, and an answer awarded the mark drops out of it.
async fn the_answers_that_lost_a_mark_are_stepped_through(db: Db) {
    use common::marking::{
        SAMPLE_QUESTIONS, exported_paper, sample_answers, scan, session_from_paper,
        start as start_marking, upload, workers,
    };

    let s = start(db, generous()).await;
    s.store.import_sample_bank().await.expect("sample bank");
    let (mut b, user) = signed_in(&s, "ann@school.test").await;
    let key = s.key(&user, Scope::ALL).await;
    let paper = exported_paper(&s, &key, &SAMPLE_QUESTIONS[..1]).await;
    // The answers to the first question only, the paper's one.
    let answers = json!({ SAMPLE_QUESTIONS[0]: sample_answers()[SAMPLE_QUESTIONS[0]].clone() });
    let pages = scan(&paper, &answers, &[]);
    let mut sessions = Vec::new();
    for _ in 0..3 {
        let session = session_from_paper(&s, &key, &paper.id).await;
        for (name, bytes) in &pages {
            upload(&s, &key, &session, "work", name, bytes.clone()).await;
        }
        start_marking(&s, &key, &session).await;
        sessions.push(session);
    }
    let marking = workers(&s, |_| {});
    let mut questions = Vec::new();
    let mut question = Value::Null;
    for session in &sessions {
        let view = common::marking::poll_until(&s, &key, session, 600, |v| {
            v["indexingFinished"] == true
                && v["questions"].as_array().is_some_and(|qs| {
                    !qs.is_empty()
                        && qs.iter().all(|q| {
                            matches!(q["status"].as_str(), Some("completed" | "needs_review"))
                        })
                })
        })
        .await;
        questions.push(view["questions"][0]["id"].as_str().expect("id").to_owned());
        question = view["questions"][0].clone();
    }
    marking.shutdown().await;
    let label = question["label"].as_str().expect("label").to_owned();
    let criterion = question["allocations"]
        .as_array()
        .expect("allocations")
        .iter()
        .find(|a| a["dependsOn"].as_array().is_some_and(Vec::is_empty))
        .expect("a criterion depending on none")
        .clone();
    let (c, code) = (
        criterion["criterionId"].as_str().expect("id").to_owned(),
        criterion["code"].as_str().expect("code").to_owned(),
    );
    // The first and third answers lose it, the second is awarded it, all through the app.
    for (q, action) in questions.iter().zip(["withhold", "award", "withhold"]) {
        let done = decide_on(
            &s,
            &mut b,
            &user,
            &c,
            (q.clone(), action, format!("/app/questions/{q}/decide")),
        )
        .await;
        assert_eq!(done.status, 303, "{}", done.body);
    }
    let lost = |q: &str| format!("/app/questions/{q}?lost={c}");
    let from_set = format!("/app/sets/{}/1/questions/{label}?lost={c}", paper.id);

    let first = b.get(&from_set).await;
    assert_eq!(
        (first.status, first.location()),
        (303, lost(&questions[0]).as_str())
    );
    let page = b.get(&lost(&questions[0])).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body.contains(&format!(
            "Answer 1 of 2 to question {label} that lost Q{label} {code} in the "
        )),
        "{}",
        page.body
    );
    assert_eq!(link(&page.body, "next-answer"), Some(lost(&questions[2])));
    assert_eq!(link(&page.body, "previous-answer"), None);
    assert_eq!(
        link(&page.body, "every-answer"),
        Some(format!("/app/questions/{}", questions[0]))
    );
    assert!(
        page.body.contains(&format!(
            "action=\"/app/questions/{}/decide?lost={c}\"",
            questions[0]
        )),
        "a decision keeps the filter"
    );
    let page = b.get(&lost(&questions[2])).await;
    assert!(
        page.body.contains("Answer 2 of 2 to question"),
        "{}",
        page.body
    );
    assert_eq!(
        link(&page.body, "previous-answer"),
        Some(lost(&questions[0]))
    );
    assert_eq!(link(&page.body, "next-answer"), None);
    // The answer awarded it is not among them: the ones before and after it are offered.
    let page = b.get(&lost(&questions[1])).await;
    assert!(
        page.body.contains(&format!(
            "This answer no longer loses Q{label} {code}; 2 answers"
        )),
        "{}",
        page.body
    );
    assert_eq!(
        link(&page.body, "previous-answer"),
        Some(lost(&questions[0]))
    );
    assert_eq!(link(&page.body, "next-answer"), Some(lost(&questions[2])));
    // Unfiltered, the stepping goes through every answer.
    let page = b.get(&format!("/app/questions/{}", questions[0])).await;
    assert!(
        page.body.contains("Answer 1 of 3 to question"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("id=\"lost-filter\""));
    // Each criterion shows the scheme's accepted answers beside its requirement, their maths
    // typeset and named in words; no raw maths reaches the page.
    assert!(
        page.body.contains("aria-label=\"Accepted answers\""),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains("role=\"img\" aria-label=\"(x - 5)(x + 1) = 0\"><svg"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("aria-label=\"f g(3) = 7\"><svg"),
        "{}",
        page.body
    );
    assert!(
        !page.body.contains("id=\"transcription\""),
        "no model, no transcription"
    );
    // A vision model's transcription is shown part by part, its maths typeset.
    s.store
        .execute_write(
            examkit::store::Durability::Saved,
            sqlx::query("UPDATE marking_questions SET marker_run_json = $1 WHERE id = $2")
                .bind(
                    json!({
                        "marker": "openai",
                        "transcription": "(a) $g(3) = 4/(3 - 1) = 2$\n(c) $x^2 - 4x - 5 = 0$ so $x = 9$",
                    })
                    .to_string(),
                )
                .bind(&questions[0]),
        )
        .await
        .expect("a run record");
    let page = b.get(&format!("/app/questions/{}", questions[0])).await;
    assert_eq!(page.status, 200, "{}", page.body);
    let read = page
        .body
        .split("id=\"transcription\"")
        .nth(1)
        .and_then(|rest| rest.split("</section>").next())
        .expect("the transcription");
    assert!(
        read.contains("Part (a)") && read.contains("Part (c)"),
        "{read}"
    );
    assert!(
        read.contains("aria-label=\"g(3) = 4 over (3 - 1) = 2\"><svg"),
        "{read}"
    );
    assert!(read.contains("aria-label=\"x = 9\"><svg"), "{read}");
    assert!(!read.contains('$') && !page.body.contains("$x"), "{read}");

    // Awarding it from the filtered stepping keeps the filter; the answer drops out of it.
    let done = decide_on(
        &s,
        &mut b,
        &user,
        &c,
        (
            questions[0].clone(),
            "award",
            format!("/app/questions/{}/decide?lost={c}", questions[0]),
        ),
    )
    .await;
    assert_eq!(done.status, 303, "{}", done.body);
    assert!(
        done.location().contains(&format!("&lost={c}#")),
        "{}",
        done.location()
    );
    let page = b.get(done.location()).await;
    assert!(page.body.contains("no longer loses"), "{}", page.body);
    assert_eq!(link(&page.body, "next-answer"), Some(lost(&questions[2])));
    let first = b.get(&from_set).await;
    assert_eq!(first.location(), lost(&questions[2]));
    let done = decide_on(
        &s,
        &mut b,
        &user,
        &c,
        (
            questions[2].clone(),
            "award",
            format!("/app/questions/{}/decide", questions[2]),
        ),
    )
    .await;
    assert_eq!(done.status, 303);
    let none = b.get(&from_set).await;
    assert_eq!(none.status, 200, "{}", none.body);
    assert!(
        none.body.contains("id=\"no-lost-answers\""),
        "{}",
        none.body
    );

    // A criterion the question does not have is not found, from the set and on the page; so is
    // another account's set.
    for path in [
        format!(
            "/app/sets/{}/1/questions/{label}?lost=no-such-mark",
            paper.id
        ),
        format!("/app/questions/{}?lost=no-such-mark", questions[0]),
    ] {
        assert_eq!(b.get(&path).await.status, 404, "{path}");
    }
    let (mut other, _) = signed_in(&s, "eve@school.test").await;
    assert_eq!(other.get(&from_set).await.status, 404);
    assert_eq!(other.get(&lost(&questions[0])).await.status, 404);
}

/// Decides criterion `c` of question `q` on its review page with `action`, posting to `path`.
async fn decide_on(
    s: &Server,
    b: &mut Browser,
    user: &str,
    c: &str,
    (q, action, path): (String, &str, String),
) -> Page {
    let page = b.get(&format!("/app/questions/{q}")).await;
    let form = vec![
        ("csrf".to_owned(), page.csrf()),
        ("criterion".to_owned(), c.to_owned()),
        ("action".to_owned(), action.to_owned()),
        ("reason".to_owned(), "Checked by hand.".to_owned()),
        (
            "revision".to_owned(),
            revision_of(s, user, &q).await.to_string(),
        ),
    ];
    post_form(b, &path, form).await
}

/// A browser session is a key of its own to the rate limits, and its account's limits are the
/// account's keys' too. A markbook file weighs two writes and returned scripts five: with ten
/// writes a minute a session gets two class files, then a `429` page that says when to retry,
/// while pages still open; the account's API key is held by the account-wide write limit too.
async fn the_app_counts_against_the_rate_limits_downloads_heavier(db: Db) {
    let limits = Limits {
        key_writes_per_minute: 10,
        account_writes_per_minute: 12,
        ..generous()
    };
    let s = start(db, limits).await;
    let (statuses, page, limited, key_status) = common::within_one_minute(3, |attempt| {
        let s = &s;
        async move {
            let (mut b, user) = signed_in(s, &format!("limits{attempt}@school.test")).await;
            let key = s.key(&user, Scope::ALL).await;
            let set = uuid::Uuid::new_v4();
            let mut statuses = Vec::new();
            // Two returned files (ten writes), then a third file.
            for file in ["returned.zip", "returned.pdf", "markbook.csv"] {
                statuses.push(b.get(&format!("/app/class-sets/{set}/{file}")).await.status);
            }
            let limited = b.get(&format!("/app/class-sets/{set}/returned.zip")).await;
            // Reading a page is not a write: it still opens.
            let page = b.get("/app/class-sets").await.status;
            // The account has had ten writes this minute: two more through its key, then 429.
            let mut key_status = Vec::new();
            for _ in 0..3 {
                let made = s
                    .post_json(
                        "/v1/marking/sessions",
                        &key,
                        Some(&common::marking::idem()),
                        br#"{"title":"Counted"}"#,
                    )
                    .await;
                key_status.push(made.status);
            }
            (statuses, page, limited, key_status)
        }
    })
    .await;
    assert_eq!(
        statuses,
        [404, 404, 429],
        "the set does not exist; the third file is over"
    );
    assert_eq!(limited.status, 429);
    let retry: i64 = limited
        .headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("Retry-After");
    assert!((1..=60).contains(&retry), "retry after {retry}");
    assert!(
        limited.body.contains("Too many requests")
            && limited
                .body
                .contains(&format!("Try again in {retry} seconds")),
        "{}",
        limited.body
    );
    assert_eq!(page, 200);
    assert_eq!(
        key_status,
        [201, 201, 429],
        "the account's writes are shared"
    );
}

/// A page whose drawing outlasts its deadline is shown, at the deadline, as an image saying it
/// cannot be shown and why; asked again, the answer is at once (the failure is kept).
async fn a_page_that_cannot_be_drawn_in_time_is_a_placeholder(db: Db) {
    let (pages, _pool) = crate::hostile_files::page_processes(examkit::untrusted::Budgets {
        processes: 1,
        cpu_seconds: 600,
        deadline: std::time::Duration::from_secs(2),
        ..Default::default()
    });
    let s = start_with(db, generous(), move |state| state.marking.pages = pages).await;
    let (mut b, user) = signed_in(&s, "slow-page@school.test").await;
    let key = s.key(&user, Scope::ALL).await;
    let session = s.automated_session(&key, "A slow page").await;
    let slow = crate::hostile_files::slow_pdf(crate::hostile_files::SLOW_SHAPES);
    let asset = common::marking::upload(&s, &key, &session, "work", "slow.pdf", slow).await;
    for attempt in ["first", "again"] {
        let started = std::time::Instant::now();
        let page = b.get(&format!("/app/pages/{asset}/1")).await;
        let took = started.elapsed();
        println!(
            "{attempt}: the placeholder came after {:.2} s",
            took.as_secs_f64()
        );
        assert_eq!(page.status, 200, "{attempt}: {}", page.body);
        assert_eq!(
            page.headers
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("image/svg+xml"),
            "{attempt}"
        );
        assert!(
            page.body.contains("Page 1 cannot be shown"),
            "{}",
            page.body
        );
        assert!(
            page.body.contains("the page took longer than 2 s to draw"),
            "{}",
            page.body
        );
        assert!(
            took < std::time::Duration::from_secs(30),
            "{attempt}: {took:?}"
        );
    }
}

#[path = "app_loop.rs"]
mod teacher_loop;
