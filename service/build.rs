//! Decides whether the PostgreSQL variants of the tests run. They are compiled as ignored (so the
//! harness counts and names them) unless `EXAMKIT_TEST_POSTGRES_URL` or
//! `EXAMKIT_REQUIRE_POSTGRES` is set when the tests are built; cargo rebuilds them when either
//! changes. See `tests/common/mod.rs` (`on_both!`). The object-store tests likewise run only when
//! `EXAMKIT_TEST_S3` is set (`tests/common/s3.rs`).

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=EXAMKIT_TEST_POSTGRES_URL");
    println!("cargo::rerun-if-env-changed=EXAMKIT_REQUIRE_POSTGRES");
    println!("cargo::rerun-if-env-changed=EXAMKIT_TEST_S3");
    println!("cargo::rustc-check-cfg=cfg(examkit_postgres_tests)");
    println!("cargo::rustc-check-cfg=cfg(examkit_s3_tests)");
    // The object-store tests need the S3-compatible server `tests/s3-server.sh` starts.
    if std::env::var_os("EXAMKIT_TEST_S3").is_some() {
        println!("cargo::rustc-cfg=examkit_s3_tests");
    }
    let configured = ["EXAMKIT_TEST_POSTGRES_URL", "EXAMKIT_REQUIRE_POSTGRES"]
        .iter()
        .any(|name| std::env::var_os(name).is_some());
    if configured {
        println!("cargo::rustc-cfg=examkit_postgres_tests");
    }
}
