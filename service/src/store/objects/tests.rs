//! The object store: its URLs, object names, a directory store's reads and writes, and the
//! binding of a prefix.

use bytes::Bytes;

use super::moving::MOVABLE;
use super::*;

#[test]
fn asset_store_urls_are_read() {
    assert_eq!(
        AssetStoreUrl::parse("database"),
        Ok(AssetStoreUrl::Database)
    );
    assert_eq!(
        AssetStoreUrl::parse("file:///var/lib/examkit/assets/"),
        Ok(AssetStoreUrl::File("/var/lib/examkit/assets".into()))
    );
    assert_eq!(
        AssetStoreUrl::parse("s3://exam-files/prod/scans/"),
        Ok(AssetStoreUrl::S3 {
            bucket: "exam-files".into(),
            prefix: "prod/scans".into()
        })
    );
    assert_eq!(
        AssetStoreUrl::parse("s3://exam-files"),
        Ok(AssetStoreUrl::S3 {
            bucket: "exam-files".into(),
            prefix: String::new()
        })
    );
    assert_eq!(
        AssetStoreUrl::parse("s3://exam-files/a/b").map(|u| u.to_string()),
        Ok("s3://exam-files/a/b".to_owned())
    );
}

#[test]
fn bad_asset_store_urls_are_refused_with_a_reason() {
    for (url, says) in [
        ("", "must be database"),
        ("db", "must be database"),
        ("file://relative/dir", "absolute directory"),
        ("file:///", "root directory"),
        ("s3://", "not an S3 bucket name"),
        ("s3://Upper", "not an S3 bucket name"),
        ("s3://ab", "not an S3 bucket name"),
        ("s3://-bucket", "not an S3 bucket name"),
        ("s3://bucket/a/../b", "not a usable key prefix"),
        ("s3://bucket/a//b", "not a usable key prefix"),
        ("gs://bucket", "must be database"),
    ] {
        let error = AssetStoreUrl::parse(url).expect_err(url);
        assert!(error.contains(says), "{url}: {error}");
    }
}

#[test]
fn objects_are_named_by_their_digest() {
    assert_eq!(
        hex_sha256(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert!(is_sha256(&hex_sha256(b"")));
    assert!(!is_sha256(
        "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"
    ));
    assert!(!is_sha256("abc"));
}

#[test]
fn the_sweep_checks_every_column_that_names_objects() {
    let sql = unreferenced("s");
    for (table, column) in OBJECT_COLUMNS {
        assert!(sql.contains(&format!("FROM {table} r WHERE r.{column} = s.sha256")));
    }
    for (table, object, _) in MOVABLE {
        assert!(OBJECT_COLUMNS.contains(&(table, object)));
    }
}

#[tokio::test]
async fn a_directory_store_writes_reads_ranges_lists_and_deletes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = AssetStoreUrl::File(dir.path().join("objects"));
    let objects = Objects::open(&url).expect("open").expect("a store");
    let bytes = b"%PDF-1.7 not really".to_vec();
    let sha = hex_sha256(&bytes);
    objects
        .put(&sha, Bytes::from(bytes.clone()))
        .await
        .expect("put");
    assert_eq!(objects.get(&sha).await.expect("get"), bytes);
    assert_eq!(objects.get_range(&sha, 1..4).await.expect("range"), b"PDF");
    assert_eq!(objects.size(&sha).await.expect("head"), Some(19));
    let listed = objects.list().await.expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].sha256, sha);
    assert!(
        dir.path()
            .join("objects/sha256")
            .join(&sha[..2])
            .join(&sha)
            .is_file()
    );
    objects.delete(&sha).await.expect("delete");
    objects.delete(&sha).await.expect("deleting twice");
    assert!(matches!(
        objects.get(&sha).await,
        Err(StoreError::MissingObject(s)) if s == sha
    ));
    assert_eq!(objects.size(&sha).await.expect("head"), None);
    objects.check().await.expect("answers");
}

#[tokio::test]
async fn a_prefix_is_bound_once_and_its_binding_read_as_plain_text() {
    let dir = tempfile::tempdir().expect("temp dir");
    let objects = Objects::open(&AssetStoreUrl::File(dir.path().join("shared")))
        .expect("open")
        .expect("a store");
    assert_eq!(objects.bound_to().await.expect("read"), None);
    objects.bind("first").await.expect("bound");
    objects
        .bind("second")
        .await
        .expect("already bound: left alone");
    assert_eq!(
        objects.bound_to().await.expect("read"),
        Some("first".to_owned())
    );
    assert!(
        objects.list().await.expect("list").is_empty(),
        "not an object"
    );
    // What another writer left there is read as text without control characters, shortened.
    let binding = dir.path().join("shared").join(BINDING);
    std::fs::write(&binding, format!("\u{1b}[31mred\n{}", "x".repeat(500))).expect("written");
    let read = objects.bound_to().await.expect("read").expect("bound");
    assert!(read.starts_with("[31mredxxx"), "{read}");
    assert_eq!(read.chars().count(), 100);
}

#[tokio::test]
async fn an_object_whose_bytes_changed_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let objects = Objects::open(&AssetStoreUrl::File(dir.path().to_path_buf()))
        .expect("open")
        .expect("a store");
    let sha = hex_sha256(b"one");
    objects
        .put(&sha, Bytes::from_static(b"two"))
        .await
        .expect("put");
    assert!(matches!(
        objects.get(&sha).await,
        Err(StoreError::Corrupt(_))
    ));
}
