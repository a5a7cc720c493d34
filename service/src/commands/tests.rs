//! The command line as a user types it: `serve`'s and `worker`'s flags parsed, and the marking
//! configuration they make.

use clap::Parser;

use super::cli::{Cli, Command};

fn worker(args: &[&str]) -> Result<crate::marking::MarkingConfig, String> {
    let cli =
        Cli::try_parse_from(["examkit", "worker"].iter().chain(args)).map_err(|e| e.to_string())?;
    match cli.command {
        Command::Worker(w) => w.marking.config(),
        other => Err(format!("parsed as {other:?}")),
    }
}

fn serve(args: &[&str]) -> Result<crate::config::ServeArgs, String> {
    let cli =
        Cli::try_parse_from(["examkit", "serve"].iter().chain(args)).map_err(|e| e.to_string())?;
    match cli.command {
        Command::Serve(s) => Ok(s),
        other => Err(format!("parsed as {other:?}")),
    }
}

#[test]
fn a_public_url_is_an_http_or_https_origin() {
    let public = |flag: &str| serve(&["--public-url", flag]).map(|s| s.public_url);
    assert_eq!(serve(&[]).map(|s| s.public_url), Ok(None));
    for (given, https, origin) in [
        (
            "https://exam.school.example",
            true,
            "https://exam.school.example",
        ),
        (
            "HTTPS://Exam.School.Example/",
            true,
            "https://exam.school.example",
        ),
        (
            "https://exam.school.example:8443",
            true,
            "https://exam.school.example:8443",
        ),
        ("http://127.0.0.1:8080/", false, "http://127.0.0.1:8080"),
        (
            "https://[2001:db8::1]:443",
            true,
            "https://[2001:db8::1]:443",
        ),
    ] {
        let parsed = public(given).expect(given).expect(given);
        assert_eq!(
            (parsed.https, parsed.origin.as_str()),
            (https, origin),
            "{given}"
        );
    }
}

#[test]
fn a_bad_public_url_is_refused_with_its_reason() {
    for (bad, reason) in [
        ("", "not a URL"),
        ("exam.school.example", "absolute"),
        ("/app/", "absolute"),
        ("ftp://exam.school.example", "not ftp://"),
        ("https://exam.school.example/?next=1", "no query"),
        ("https://exam.school.example/#top", "no fragment"),
        ("https://exam.school.example/examkit/", "give no path"),
        ("https://teacher:secret@exam.school.example", "no user name"),
        ("https://exam.school.example:99999", "port"),
        ("https://exam.school.example:0", "port"),
        ("https://exam.school.example:", "port"),
        ("https://exam school.example", "not a URL"),
        ("https://", "not a URL"),
    ] {
        let flag = format!("--public-url={bad}");
        let e = serve(&[flag.as_str()]).expect_err(bad);
        assert!(e.contains("--public-url"), "{bad}: {e}");
        assert!(e.contains(reason), "{bad}: {e}");
    }
}

#[test]
fn a_token_over_plain_http_to_another_machine_needs_marker_allow_http() {
    let built = |extra: &[&str]| {
        let mut args = vec!["--marker", "openai", "--marker-model", "m"];
        args.extend(["--marker-token", "sk-test-1"]);
        args.extend(extra);
        worker(&args)?.marker.build().map(drop)
    };
    let refused = built(&["--marker-url", "http://example.invalid/v1"]).expect_err("refused");
    assert!(refused.contains("--marker-allow-http"), "{refused}");
    let allowed = [
        "--marker-url",
        "http://example.invalid/v1",
        "--marker-allow-http",
    ];
    assert_eq!(built(&allowed), Ok(()));
    assert_eq!(
        built(&["--marker-url", "http://127.0.0.1:11434/v1"]),
        Ok(())
    );
    assert_eq!(
        built(&["--marker-url", "https://example.invalid/v1"]),
        Ok(())
    );
    let e = worker(&["--marker-allow-http=maybe"]).expect_err("not a boolean");
    assert!(e.contains("--marker-allow-http"), "{e}");
}

#[test]
fn a_second_model_is_on_the_first_provider_unless_named_and_never_the_same_model() {
    let marker = |extra: &[&str]| {
        let mut args = vec!["--marker", "openai", "--marker-model", "m"];
        args.extend([
            "--marker-url",
            "http://127.0.0.1:11434/v1",
            "--marker-token",
            "t1",
        ]);
        args.extend(extra);
        worker(&args).map(|w| w.marker)
    };
    let second = |extra: &[&str]| match marker(extra) {
        Ok(crate::marking::MarkerChoice::OpenAi(c)) => Ok(c.second.map(|s| *s)),
        Ok(other) => panic!("{other:?}"),
        Err(e) => Err(e),
    };
    assert_eq!(second(&[]), Ok(None));
    let same = second(&["--marker-second-model", "n"])
        .expect("ok")
        .expect("second");
    assert_eq!(
        (
            same.model.as_str(),
            same.base_url.as_str(),
            same.token.as_deref()
        ),
        ("n", "http://127.0.0.1:11434/v1", Some("t1"))
    );
    let other = second(&[
        "--marker-second-model",
        "m",
        "--marker-second-url",
        "https://models.example/v1",
        "--marker-second-token",
        "t2",
    ])
    .expect("ok")
    .expect("second");
    assert_eq!(
        (other.base_url.as_str(), other.token.as_deref()),
        ("https://models.example/v1", Some("t2"))
    );
    match marker(&["--marker-second-model", "n"]) {
        Ok(choice) => {
            let built = choice.build().expect("a pair");
            assert_eq!(built.name(), "openai");
        }
        Err(e) => panic!("{e}"),
    }
    for (bad, says) in [
        (
            &["--marker-second-url", "https://models.example/v1"][..],
            "need --marker-second-model",
        ),
        (
            &["--marker-second-model", "n", "--marker-second-token", "t2"][..],
            "needs --marker-second-url",
        ),
        (&["--marker-second-model", "m"][..], "another model"),
        (&["--marker-second-model", " "][..], "second model's name"),
    ] {
        let e = second(bad).expect_err("refused");
        assert!(e.contains(says), "{bad:?}: {e}");
    }
}

#[test]
fn trusted_proxies_are_none_by_default_repeatable_and_comma_separated() {
    let proxies = |args: &[&str]| {
        serve(args).map(|s| {
            s.trusted_proxies
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(proxies(&[]), Ok(vec![]));
    assert_eq!(
        proxies(&[
            "--trusted-proxy",
            "127.0.0.1",
            "--trusted-proxy",
            "10.0.0.0/8"
        ]),
        Ok(vec!["127.0.0.1/32".to_owned(), "10.0.0.0/8".to_owned()])
    );
    // The form the environment variable takes.
    assert_eq!(
        proxies(&["--trusted-proxy", "10.0.0.0/8,fd00::/8"]),
        Ok(vec!["10.0.0.0/8".to_owned(), "fd00::/8".to_owned()])
    );
    for bad in [
        "proxy.internal",
        "10.0.0.0/33",
        "10.0.0.1/8",
        "10.0.0.0/8,nope",
        "",
    ] {
        let flag = format!("--trusted-proxy={bad}");
        let e = serve(&[flag.as_str()]).expect_err(bad);
        assert!(e.contains("--trusted-proxy"), "{bad}: {e}");
    }
    let e = serve(&["--trusted-proxy", "10.0.0.1/8"]).expect_err("host bits");
    assert!(e.contains("10.0.0.0/8"), "{e}");
}

#[test]
fn password_check_bounds_default_to_the_cores_and_two_seconds() {
    let s = serve(&[]).expect("defaults");
    assert_eq!(s.password_check_concurrency, None);
    assert_eq!(s.password_check_wait_ms, 2000);
    let s = serve(&[
        "--password-check-concurrency",
        "3",
        "--password-check-wait-ms",
        "0",
    ])
    .expect("set");
    assert_eq!(s.password_check_concurrency, Some(3));
    assert_eq!(s.password_check_wait_ms, 0);
    for (flag, bad) in [
        ("--password-check-concurrency", "0"),
        ("--password-check-concurrency", "1025"),
        ("--password-check-concurrency", "many"),
        ("--password-check-wait-ms", "60001"),
        ("--password-check-wait-ms", "-1"),
        ("--password-check-wait-ms", "2s"),
    ] {
        let arg = format!("{flag}={bad}");
        let e = serve(&[arg.as_str()]).expect_err(bad);
        assert!(e.contains(flag), "{bad}: {e}");
    }
}

#[test]
fn marker_qualify_is_a_share_and_seeds_need_a_set_and_the_bar() {
    assert_eq!(
        worker(&[]).map(|c| (c.qualify, c.seeds.is_none())),
        Ok((None, true))
    );
    assert_eq!(
        worker(&["--marker-qualify", "0.9"]).map(|c| c.qualify),
        Ok(Some(0.9))
    );
    assert_eq!(
        worker(&["--marker-qualify", "1"]).map(|c| c.qualify),
        Ok(Some(1.0))
    );
    for bad in ["1.5", "-0.1", "NaN", "most", ""] {
        let flag = format!("--marker-qualify={bad}");
        let e = worker(&[flag.as_str()]).expect_err(bad);
        assert!(e.contains("--marker-qualify"), "{bad}: {e}");
    }
    let e = worker(&["--marker-qualify", "2"]).expect_err("above 1");
    assert!(e.contains("2 is not between 0 and 1"), "{e}");
    let set = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/calibration");
    let set = set.to_string_lossy().into_owned();
    let seeded = worker(&[
        "--marker-qualify",
        "0.9",
        "--marker-seed-every",
        "25",
        "--marker-seeds",
        &set,
    ])
    .expect("seeds");
    let seeds = seeded.seeds.expect("seeds");
    assert_eq!(seeds.every, 25);
    assert_eq!(seeds.reference.scripts.len(), 5);
    for (args, said) in [
        (&["--marker-seed-every", "25"][..], "needs --marker-seeds"),
        (
            &["--marker-seeds", set.as_str()][..],
            "needs --marker-seed-every",
        ),
        (
            &["--marker-seed-every", "25", "--marker-seeds", set.as_str()][..],
            "needs --marker-qualify",
        ),
        (
            &[
                "--marker-qualify",
                "0.9",
                "--marker-seed-every",
                "25",
                "--marker-seeds",
                "/nonexistent",
            ][..],
            "--marker-seeds /nonexistent: reference.json: cannot read",
        ),
        (&["--marker-seed-every", "0"][..], "--marker-seed-every"),
    ] {
        let e = worker(args).expect_err(said);
        assert!(e.contains(said), "{args:?}: {e}");
    }
}

#[test]
fn marker_concurrency_is_one_by_default_and_taken_from_1_to_64() {
    assert_eq!(worker(&[]).map(|c| c.marker_concurrency), Ok(1));
    assert_eq!(
        worker(&["--marker-concurrency", "64"]).map(|c| c.marker_concurrency),
        Ok(64)
    );
    for bad in ["0", "65", "-1", "many", ""] {
        let flag = format!("--marker-concurrency={bad}");
        let e = worker(&[flag.as_str()]).expect_err(bad);
        assert!(e.contains("--marker-concurrency"), "{bad}: {e}");
    }
}

#[test]
fn marker_require_quote_reaches_both_models_strictness() {
    let strictness = |extra: &[&str]| {
        let mut args = vec!["--marker", "openai", "--marker-model", "m"];
        args.extend(["--marker-url", "http://127.0.0.1:11434/v1"]);
        args.extend(["--marker-second-model", "n"]);
        args.extend(extra);
        match worker(&args).map(|w| w.marker) {
            Ok(crate::marking::MarkerChoice::OpenAi(c)) => {
                let second = c.second.as_ref().expect("second").strictness;
                Ok((c.strictness.require_quote, second.require_quote))
            }
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e),
        }
    };
    assert_eq!(strictness(&[]), Ok((false, false)));
    assert_eq!(strictness(&["--marker-require-quote"]), Ok((true, true)));
    let e = strictness(&["--marker-require-quote=maybe"]).expect_err("not a boolean");
    assert!(e.contains("--marker-require-quote"), "{e}");
}
