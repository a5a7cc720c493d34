//! Buckets on the S3-compatible server the suite starts (`tests/s3-server.sh`, which exports
//! `EXAMKIT_TEST_S3`, `AWS_ENDPOINT_URL` and test credentials). The object-store tests are
//! compiled as ignored without it (see `build.rs`), with [`NOT_CONFIGURED`] as the reason.

use examkit::store::objects::AssetStoreUrl;

/// Why an object-store test is ignored.
pub const NOT_CONFIGURED: &str = "no S3 server: run the tests through tests/s3-server.sh";

/// A new, empty bucket for one test, and the asset store under its prefix `objects`.
pub async fn bucket() -> AssetStoreUrl {
    let endpoint = std::env::var("AWS_ENDPOINT_URL").unwrap_or_else(|_| {
        panic!("{NOT_CONFIGURED} (AWS_ENDPOINT_URL is not set)");
    });
    let name = format!(
        "examkit-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..16]
    );
    // The test server takes an unsigned CreateBucket.
    let made = examkit::tls::client()
        .put(format!("{}/{name}", endpoint.trim_end_matches('/')))
        .send()
        .await
        .expect("the S3 server answers");
    assert!(
        made.status().is_success(),
        "create bucket: {}",
        made.status()
    );
    AssetStoreUrl::S3 {
        bucket: name,
        prefix: "objects".into(),
    }
}
