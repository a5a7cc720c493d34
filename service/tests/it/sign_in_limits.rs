//! The app's sign-in under a flood, over real HTTP on SQLite and PostgreSQL: attempts sent at once
//! are counted before any password is checked, on one server or two sharing a database; the client
//! address a trusted proxy names is the one the address limit counts (an IPv6 client per /64); and
//! password checks are bounded in the process, with late sign-ins answered 503 and the server's
//! memory held, measured on `examkit serve` run as a process of its own; a flood of failures at a
//! known email pauses it only where the flood comes from, and never for a browser that signed in
//! to it before.

use crate::common;

use std::io::{BufRead, BufReader};

use common::{Db, Server, generous, start, start_with};
use examkit::store::app_sessions::Window;

const PASSWORD: &str = "correct horse battery";
const WRONG: &str = "not the password!";
/// The sign-in form's CSRF cookie (`__Host-` prefixed when cookies are secure, as on the test
/// servers, not on `examkit serve` listening on loopback).
const SIGN_IN_COOKIE: &str = "examkit_sign_in";
/// The most memory one password check holds (Argon2id at m=19456 KiB).
const CHECK_MIB: u64 = 19;

on_both!(
    wrong_passwords_sent_at_once_are_checked_at_most_the_account_limit,
    two_servers_on_one_database_check_at_most_the_limit_between_them,
    the_address_limit_counts_the_client_a_trusted_proxy_names,
    a_flood_of_sign_ins_waits_for_a_bounded_number_of_password_checks,
    right_passwords_take_their_attempts_back,
    attempts_are_counted_in_order_and_taken_back,
    a_known_email_cannot_keep_its_teacher_out,
);

/// One sign-in form: the double-submit cookie and its token, which any client can fetch once and
/// send with every attempt.
#[derive(Clone)]
struct FormPair {
    name: String,
    cookie: String,
    token: String,
}

/// An answer to a sign-in: its status, `Retry-After` and page.
struct Answer {
    status: u16,
    retry_after: Option<String>,
    body: String,
}

fn client() -> reqwest::Client {
    examkit::tls::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

async fn form_pair(base: &str) -> FormPair {
    let response = client()
        .get(format!("{base}/app/sign-in"))
        .send()
        .await
        .expect("form fetched");
    let (name, cookie) = response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok()?.split(';').next()?.split_once('='))
        .find(|(name, _)| name.ends_with(SIGN_IN_COOKIE))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .expect("the sign-in cookie");
    let body = response.text().await.expect("body");
    let at = body.find("name=\"csrf\" value=\"").expect("a CSRF field") + 19;
    let token = body[at..at + body[at..].find('"').expect("quote")].to_owned();
    assert_eq!(cookie, token, "the form's token is its cookie's");
    FormPair {
        name,
        cookie,
        token,
    }
}

/// Posts the sign-in form, with `X-Forwarded-For: forwarded` when given.
async fn sign_in(
    client: &reqwest::Client,
    base: &str,
    pair: &FormPair,
    email: &str,
    password: &str,
    forwarded: Option<&str>,
) -> Answer {
    let body: String = form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("csrf", pair.token.as_str()),
            ("email", email),
            ("password", password),
        ])
        .finish();
    let mut request = client
        .post(format!("{base}/app/sign-in"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("cookie", format!("{}={}", pair.name, pair.cookie))
        .body(body);
    if let Some(forwarded) = forwarded {
        request = request.header("x-forwarded-for", forwarded);
    }
    let response = request.send().await.expect("sign-in sent");
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = response.text().await.expect("body");
    Answer {
        status,
        retry_after,
        body,
    }
}

/// An account that signs in with `email` and [`PASSWORD`].
async fn teacher(s: &Server, email: &str) {
    let user = s.user(email).await;
    let hash = examkit::password::hash(PASSWORD).expect("hash");
    s.store
        .set_login(Some(&user), email, &hash)
        .await
        .expect("login set");
}

/// Sends every `(server, email, password, forwarded)` attempt at once; returns the answers in
/// order.
async fn all_at_once(
    attempts: Vec<(String, String, String, Option<String>)>,
    pair: &FormPair,
) -> Vec<Answer> {
    let client = client();
    let mut sent = Vec::new();
    for (base, email, password, forwarded) in attempts {
        let client = client.clone();
        let pair = pair.clone();
        sent.push(tokio::spawn(async move {
            sign_in(
                &client,
                &base,
                &pair,
                &email,
                &password,
                forwarded.as_deref(),
            )
            .await
        }));
    }
    let mut answers = Vec::new();
    for attempt in sent {
        answers.push(attempt.await.expect("joined"));
    }
    answers
}

fn count(answers: &[Answer], status: u16) -> usize {
    answers.iter().filter(|a| a.status == status).count()
}

fn statuses(answers: &[Answer]) -> Vec<u16> {
    answers.iter().map(|a| a.status).collect()
}

async fn wrong_passwords_sent_at_once_are_checked_at_most_the_account_limit(db: Db) {
    let s = start(db, generous()).await;
    teacher(&s, "ann@school.test").await;
    let pair = form_pair(&s.base).await;
    let attempts = (0..100)
        .map(|_| (s.base.clone(), "ann@school.test".into(), WRONG.into(), None))
        .collect();
    let answers = all_at_once(attempts, &pair).await;
    let checked = count(&answers, 401);
    let limited = count(&answers, 429);
    println!("100 wrong passwords at once: {checked} checked (401), {limited} refused (429)");
    assert_eq!(checked, 5, "{:?}", statuses(&answers));
    assert_eq!(limited, 95, "{:?}", statuses(&answers));
    for answer in answers.iter().filter(|a| a.status == 429) {
        assert!(
            answer
                .body
                .contains("Sign-in to this account is paused for a while"),
            "{}",
            answer.body
        );
    }
    // The right password is refused too until the window ends, and the page says until when.
    let right = sign_in(&client(), &s.base, &pair, "ann@school.test", PASSWORD, None).await;
    assert_eq!(right.status, 429, "{}", right.body);
    assert!(
        right
            .body
            .contains("Too many failed sign-ins. Try again after"),
        "{}",
        right.body
    );
}

async fn two_servers_on_one_database_check_at_most_the_limit_between_them(db: Db) {
    let first = start(db, generous()).await;
    let second = common::start_on(&first.database_url, generous()).await;
    teacher(&first, "ann@school.test").await;
    let pair = form_pair(&first.base).await;
    let attempts = (0..100)
        .map(|i| {
            let base = if i % 2 == 0 {
                &first.base
            } else {
                &second.base
            };
            (base.clone(), "ann@school.test".into(), WRONG.into(), None)
        })
        .collect();
    let answers = all_at_once(attempts, &pair).await;
    let checked = count(&answers, 401);
    println!("100 wrong passwords at once on two servers: {checked} checked (401)");
    assert_eq!(checked, 5, "{:?}", statuses(&answers));
    assert_eq!(count(&answers, 429), 95, "{:?}", statuses(&answers));
    for server in [&first, &second] {
        let right = sign_in(
            &client(),
            &server.base,
            &pair,
            "ann@school.test",
            PASSWORD,
            None,
        )
        .await;
        assert_eq!(right.status, 429, "{}", right.body);
    }
}

/// Fails the address limit (20 unknown emails, one after another) from `forwarded`.
async fn fail_twenty_times(s: &Server, pair: &FormPair, forwarded: &str, tag: &str) {
    let client = client();
    for i in 0..20 {
        let answer = sign_in(
            &client,
            &s.base,
            pair,
            &format!("nobody{i}.{tag}@school.test"),
            WRONG,
            Some(forwarded),
        )
        .await;
        assert_eq!(answer.status, 401, "attempt {i} from {forwarded}");
    }
}

async fn the_address_limit_counts_the_client_a_trusted_proxy_names(db: Db) {
    let trusted = vec![examkit::config::Cidr::parse("127.0.0.1/32").expect("range")];
    let s = start_with(db, generous(), |state| {
        state.app.trusted_proxies = trusted;
    })
    .await;
    teacher(&s, "ann@school.test").await;
    let pair = form_pair(&s.base).await;
    let client = client();
    let right = async |forwarded: &str| {
        sign_in(
            &client,
            &s.base,
            &pair,
            "ann@school.test",
            PASSWORD,
            Some(forwarded),
        )
        .await
    };
    // The client the proxy names is limited…
    fail_twenty_times(&s, &pair, "203.0.113.7", "v4").await;
    let page = right("203.0.113.7").await;
    assert_eq!(page.status, 429, "{}", page.body);
    assert!(page.body.contains("from your network"), "{}", page.body);
    // …as an IPv4-mapped IPv6 address too, and whatever it wrote left of itself.
    assert_eq!(right("::ffff:203.0.113.7").await.status, 429);
    assert_eq!(right("198.51.100.1, 203.0.113.7").await.status, 429);
    // Another client behind the same proxy is not, even one that names the limited address left
    // of itself.
    assert_eq!(right("203.0.113.8").await.status, 303);
    assert_eq!(right("203.0.113.7, 203.0.113.8").await.status, 303);

    // An IPv6 client counts per /64: another address of its /64 is limited with it.
    fail_twenty_times(&s, &pair, "2001:db8:1:2::a", "v6").await;
    assert_eq!(right("[2001:db8:1:2::b]:443").await.status, 429);
    assert_eq!(right("2001:db8:1:2:ffff::1").await.status, 429);
    assert_eq!(right("2001:db8:1:3::a").await.status, 303);

    // Without trusted proxies the header is ignored: every attempt counts against the peer.
    let plain = start(db, generous()).await;
    teacher(&plain, "ann@school.test").await;
    let pair = form_pair(&plain.base).await;
    for i in 0..20 {
        let answer = sign_in(
            &client,
            &plain.base,
            &pair,
            &format!("nobody{i}@school.test"),
            WRONG,
            Some(&format!("198.51.100.{i}")),
        )
        .await;
        assert_eq!(answer.status, 401, "attempt {i}");
    }
    let page = sign_in(
        &client,
        &plain.base,
        &pair,
        "ann@school.test",
        PASSWORD,
        Some("198.51.100.200"),
    )
    .await;
    assert_eq!(page.status, 429, "{}", page.body);
}

/// `examkit serve`, as a process of its own, on `database`; killed when dropped.
struct Served {
    child: std::process::Child,
    base: String,
    metrics: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(database: &str, dir: &std::path::Path, args: &[&str]) -> Served {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_examkit"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(["--metrics-listen", "127.0.0.1:0"])
        .args(["--sample-bank", "off", "--workers", "0"])
        .arg("--database")
        .arg(database)
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env_remove("DATABASE_URL")
        .env("OMP_THREAD_LIMIT", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("examkit runs");
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let (mut base, mut metrics) = (None, None);
    for line in stdout.lines().map_while(Result::ok) {
        if let Some(url) = line.strip_prefix("metrics on ") {
            metrics = Some(url.to_owned());
        }
        if let Some(url) = line.strip_prefix("listening on ") {
            base = Some(url.to_owned());
            break;
        }
    }
    Served {
        base: base.expect("examkit serve printed its address"),
        metrics: metrics.expect("examkit serve printed its metrics address"),
        child,
    }
}

/// The process's peak resident memory (`VmHWM`), in KiB.
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
        .expect("VmHWM in kB")
}

/// A sample's value in a Prometheus scrape (a metric without labels).
fn sample(scrape: &str, name: &str) -> Option<f64> {
    scrape.lines().find_map(|line| {
        let (metric, value) = line.split_once(' ')?;
        (metric == name).then(|| value.trim().parse().ok())?
    })
}

async fn a_flood_of_sign_ins_waits_for_a_bounded_number_of_password_checks(db: Db) {
    const PERMITS: u64 = 2;
    const FLOOD: usize = 200;
    let dir = tempfile::tempdir().expect("dir");
    let database = common::fresh_database(db, dir.path()).await;
    // A deployment with an account, so that the app signs in (a new one offers its first run).
    let made = std::process::Command::new(env!("CARGO_BIN_EXE_examkit"))
        .args([
            "users",
            "create",
            "--name",
            "Teacher",
            "--database",
            &database,
            "--data-dir",
        ])
        .arg(dir.path())
        .env_remove("DATABASE_URL")
        .output()
        .expect("examkit users create runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let server = serve(
        &database,
        dir.path(),
        &[
            "--trusted-proxy",
            "127.0.0.1/32",
            "--password-check-concurrency",
            "2",
            "--password-check-wait-ms",
            "250",
        ],
    );
    let pid = server.child.id();
    let pair = form_pair(&server.base).await;
    // One sign-in first, so the baseline includes what any check needs once (its thread, the
    // decoy hash unknown emails are checked against).
    let first = sign_in(
        &client(),
        &server.base,
        &pair,
        "warm-up@school.test",
        WRONG,
        Some("192.0.2.1"),
    )
    .await;
    assert_eq!(first.status, 401, "{}", first.body);
    let baseline = peak_kib(pid);

    // Unknown emails from addresses of their own: no sign-in limit applies, every attempt wants a
    // password check.
    let attempts = (0..FLOOD)
        .map(|i| {
            let forwarded = if i % 2 == 0 {
                format!("198.51.100.{}", i / 2)
            } else {
                format!("2001:db8:{i:x}::1")
            };
            (
                server.base.clone(),
                format!("nobody{i}@school.test"),
                WRONG.to_owned(),
                Some(forwarded),
            )
        })
        .collect();
    let window = |at: i64| at.div_euclid(ADDRESS_WINDOW.length_ms);
    // The counts are compared in the window the flood is in: a flood that could straddle two
    // windows waits for the next one to begin instead.
    let now = examkit::store::now_ms();
    let left = ADDRESS_WINDOW.length_ms - now.rem_euclid(ADDRESS_WINDOW.length_ms);
    if left < 120_000 {
        tokio::time::sleep(std::time::Duration::from_millis(
            u64::try_from(left).unwrap_or(0) + 100,
        ))
        .await;
    }
    let began = examkit::store::now_ms();
    let answers = all_at_once(attempts, &pair).await;
    let ended = examkit::store::now_ms();
    let peak = peak_kib(pid);
    let checked = count(&answers, 401);
    let busy = count(&answers, 503);
    let bound = baseline + (PERMITS * CHECK_MIB + 200) * 1024;
    println!(
        "{FLOOD} sign-ins at once, {PERMITS} permits: {checked} checked (401), {busy} refused (503); \
         peak memory {} MiB from a baseline of {} MiB (bound {} MiB)",
        peak / 1024,
        baseline / 1024,
        bound / 1024
    );
    assert_eq!(checked + busy, FLOOD, "{:?}", statuses(&answers));
    assert!(checked > 0, "some were checked");
    assert!(busy > 0, "some found no permit within the wait");
    for answer in answers.iter().filter(|a| a.status == 503) {
        assert_eq!(answer.retry_after.as_deref(), Some("1"), "{}", answer.body);
        assert!(
            answer.body.contains("Try again in a few seconds"),
            "{}",
            answer.body
        );
    }

    let scrape = reqwest::get(&server.metrics)
        .await
        .expect("scraped")
        .text()
        .await
        .expect("text");
    let gauge = |name: &str| {
        sample(&scrape, name).unwrap_or_else(|| panic!("{name} in the scrape:\n{scrape}"))
    };
    let most = gauge("examkit_password_checks_in_flight_max");
    println!("most password checks in flight at once: {most}");
    assert!(most >= 1.0 && most <= PERMITS as f64, "{most}");
    assert_eq!(gauge("examkit_password_check_permits"), PERMITS as f64);
    assert_eq!(gauge("examkit_password_checks_in_flight"), 0.0);
    assert_eq!(
        gauge("examkit_password_checks_refused_total"),
        busy as f64,
        "every 503 is counted"
    );
    assert!(peak <= bound, "peak {peak} KiB over the bound {bound} KiB");

    // A sign-in refused for want of a permit took its attempt back; a checked one did not. (Read
    // by counting once more against each IPv4 client, in the window the flood was in.)
    assert_eq!(
        window(began),
        window(ended),
        "the flood took over two minutes and straddled two windows"
    );
    let store = examkit::store::Store::open(&database)
        .await
        .expect("the server's database");
    for (i, answer) in answers.iter().enumerate().filter(|(i, _)| i % 2 == 0) {
        let subject = format!("address:198.51.100.{}", i / 2);
        let counted = store
            .count_sign_in_attempt(&[(subject.as_str(), ADDRESS_WINDOW)], began)
            .await
            .expect("counted");
        let expected = if answer.status == 401 { 2 } else { 1 };
        assert_eq!(counted, [expected], "{subject} answered {}", answer.status);
    }
}

/// The address limit's window (the app's default).
const ADDRESS_WINDOW: Window = Window {
    length_ms: 15 * 60_000,
    limit: 20,
};

async fn right_passwords_take_their_attempts_back(db: Db) {
    let s = start(db, generous()).await;
    teacher(&s, "ann@school.test").await;
    let pair = form_pair(&s.base).await;
    let client = client();
    // More right passwords than the account's limit: none counts as a failure.
    for i in 0..7 {
        let page = sign_in(&client, &s.base, &pair, "ann@school.test", PASSWORD, None).await;
        assert_eq!(page.status, 303, "sign-in {i}: {}", page.body);
    }
    // The five failures the window allows are all still there.
    for attempt in 1..=5 {
        let page = sign_in(&client, &s.base, &pair, "ann@school.test", WRONG, None).await;
        assert_eq!(page.status, 401, "attempt {attempt}");
        assert_eq!(
            page.body.contains("Sign-in to this account is paused"),
            attempt == 5,
            "attempt {attempt}: {}",
            page.body
        );
    }
    let page = sign_in(&client, &s.base, &pair, "ann@school.test", PASSWORD, None).await;
    assert_eq!(page.status, 429, "{}", page.body);
}

async fn attempts_are_counted_in_order_and_taken_back(db: Db) {
    let s = start(db, generous()).await;
    let tight = Window {
        length_ms: 60_000,
        limit: 2,
    };
    let loose = Window {
        length_ms: 60_000,
        limit: 10,
    };
    let now = 1_700_000_000_000;
    let subjects = [("account:a", tight), ("address:192.0.2.1", loose)];
    let store = &s.store;
    let counted = |n| async move {
        store
            .count_sign_in_attempt(&subjects, now + n)
            .await
            .expect("counted")
    };
    assert_eq!(counted(0).await, [1, 1]);
    assert_eq!(counted(1).await, [2, 2]);
    // Over the first subject's limit: the second is not counted.
    assert_eq!(counted(2).await, [3]);
    assert_eq!(counted(3).await, [4]);
    store
        .take_back_sign_in_attempt(&subjects, now)
        .await
        .expect("taken back");
    assert_eq!(counted(4).await, [4]);
    // Refused by a later subject: the earlier ones are not charged.
    let refusing = [("account:b", loose), ("address:192.0.2.2", tight)];
    for expected in [vec![1, 1], vec![2, 2], vec![3, 3], vec![3, 4]] {
        assert_eq!(
            store
                .count_sign_in_attempt(&refusing, now)
                .await
                .expect("counted"),
            expected
        );
    }
    assert_eq!(
        store
            .count_sign_in_attempt(&[("account:b", loose)], now)
            .await
            .expect("counted"),
        [3]
    );
    // Each window counts afresh.
    assert_eq!(
        store
            .count_sign_in_attempt(&subjects, now + 60_000)
            .await
            .expect("counted"),
        [1, 1]
    );
    // A count never goes below zero, and taking back what was never counted changes nothing.
    for _ in 0..5 {
        store
            .take_back_sign_in_attempt(&[("address:192.0.2.1", loose)], now)
            .await
            .expect("taken back");
        store
            .take_back_sign_in_attempt(&[("address:never", loose)], now)
            .await
            .expect("taken back");
    }
    assert_eq!(
        store
            .count_sign_in_attempt(&[("address:192.0.2.1", loose)], now)
            .await
            .expect("counted"),
        [1]
    );
}

/// Signs in as `email` with `password` from `forwarded`, sending `device` (a device cookie,
/// `name=value`) when given; the answer's status and the device cookie it sets, if any.
async fn sign_in_on_device(
    s: &Server,
    email: &str,
    password: &str,
    forwarded: &str,
    device: Option<&str>,
) -> (u16, Option<String>, String) {
    let pair = form_pair(&s.base).await;
    let body: String = form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("csrf", pair.token.as_str()),
            ("email", email),
            ("password", password),
        ])
        .finish();
    let mut cookies = format!("{}={}", pair.name, pair.cookie);
    if let Some(device) = device {
        cookies.push_str("; ");
        cookies.push_str(device);
    }
    let response = client()
        .post(format!("{}/app/sign-in", s.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("cookie", cookies)
        .header("x-forwarded-for", forwarded)
        .body(body)
        .send()
        .await
        .expect("sign-in sent");
    let status = response.status().as_u16();
    let set = response
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok()?.split(';').next())
        .find(|c| c.contains("examkit_device="))
        .map(str::to_owned);
    (status, set, response.text().await.expect("body"))
}

/// Anyone who knows a teacher's email can fail sign-ins at it. Six wrong passwords from one
/// address pause sign-in to the account from that address only: the right password from another
/// address still gets in. Guesses spread over many addresses reach the account-wide ceiling,
/// which then holds a new browser but never the teacher's own, which signed in before.
async fn a_known_email_cannot_keep_its_teacher_out(db: Db) {
    let trusted = vec![examkit::config::Cidr::parse("127.0.0.1/32").expect("range")];
    let s = start_with(db, generous(), |state| {
        state.app.trusted_proxies = trusted;
        state.app.account_ceiling.limit = 12;
    })
    .await;
    teacher(&s, "ann@school.test").await;
    let ann = "ann@school.test";
    // Ann's own browser, at school, signed in before.
    let (status, device, _) = sign_in_on_device(&s, ann, PASSWORD, "192.0.2.10", None).await;
    assert_eq!(status, 303);
    let device = device.expect("a device cookie is set at sign-in");
    // Someone else, from one address: five wrong passwords are checked, the sixth is paused.
    for attempt in 1..=6 {
        let (status, _, body) = sign_in_on_device(&s, ann, WRONG, "203.0.113.9", None).await;
        let expected = if attempt == 6 { 429 } else { 401 };
        assert_eq!(status, expected, "attempt {attempt}: {body}");
    }
    // The right password from another address gets in, with no cookie of this account.
    let (status, _, body) = sign_in_on_device(&s, ann, PASSWORD, "198.51.100.7", None).await;
    assert_eq!(status, 303, "{body}");
    // Guesses from a dozen more addresses, each within its own limit, reach the ceiling.
    for i in 0..12 {
        let from = format!("203.0.113.{}", 20 + i);
        let (status, _, _) = sign_in_on_device(&s, ann, WRONG, &from, None).await;
        assert!(matches!(status, 401 | 429), "{status}");
    }
    let (status, _, body) = sign_in_on_device(&s, ann, PASSWORD, "198.51.100.8", None).await;
    assert_eq!(status, 429, "a new browser is held by the ceiling: {body}");
    assert!(body.contains("Sign-in to this account is paused"), "{body}");
    // Ann's own browser is not, from any address; a made-up device cookie is nobody's.
    let (status, _, body) =
        sign_in_on_device(&s, ann, PASSWORD, "198.51.100.9", Some(&device)).await;
    assert_eq!(status, 303, "{body}");
    let name = device.split('=').next().expect("name");
    let forged = format!("{name}=not-a-device-anyone-was-given");
    let (status, _, _) = sign_in_on_device(&s, ann, PASSWORD, "198.51.100.10", Some(&forged)).await;
    assert_eq!(status, 429);
}
