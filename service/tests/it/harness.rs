//! The PostgreSQL variants of `on_both!` cases are never skipped silently: without
//! `EXAMKIT_TEST_POSTGRES_URL` (and without `EXAMKIT_REQUIRE_POSTGRES`) each is reported as
//! ignored, with its reason, in the harness's "N ignored" count; with either set, none is ignored.
//! The test binary lists this suite's own tests to check it.

use crate::common;

use common::Db;

on_both!(the_store_opens);

async fn the_store_opens(db: Db) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = common::fresh_database(db, dir.path()).await;
    let store = examkit::store::Store::open(&url)
        .await
        .expect("open the store");
    let backend = match db {
        Db::Sqlite => examkit::store::Backend::Sqlite,
        Db::Postgres => examkit::store::Backend::Postgres,
    };
    assert_eq!(store.backend(), backend);
    store.close().await;
}

/// The names of this suite's tests the binary's harness lists, with `--ignored` only the ignored
/// ones.
fn listed(ignored: bool) -> Vec<String> {
    let mut command = std::process::Command::new(std::env::current_exe().expect("test binary"));
    command.args(["--list", "--format", "terse", "harness::"]);
    if ignored {
        command.arg("--ignored");
    }
    let output = command.output().expect("list the tests");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn postgres_variants_are_ignored_exactly_when_postgres_is_not_configured() {
    let all = listed(false);
    let postgres: Vec<&String> = all.iter().filter(|t| t.ends_with("::postgres")).collect();
    assert!(
        postgres
            .iter()
            .any(|t| t.as_str() == "harness::the_store_opens::postgres"),
        "{all:?}"
    );
    let ignored = listed(true);
    let configured = std::env::var_os("EXAMKIT_TEST_POSTGRES_URL").is_some()
        || std::env::var_os("EXAMKIT_REQUIRE_POSTGRES").is_some();
    if configured {
        assert!(
            ignored.is_empty(),
            "PostgreSQL is configured, yet these are ignored: {ignored:?} \
             (a binary built without EXAMKIT_TEST_POSTGRES_URL; build it again with it set)"
        );
    } else {
        let expected: Vec<String> = postgres.into_iter().cloned().collect();
        assert_eq!(
            ignored, expected,
            "without EXAMKIT_TEST_POSTGRES_URL every PostgreSQL variant, and only those, is ignored"
        );
    }
}
