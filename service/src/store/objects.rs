//! Stored files outside the database: uploads, automated marking's page images and exported PDFs
//! in a directory or an S3-compatible bucket, named by the SHA-256 of their bytes.
//!
//! The database stays the default place for them (`--asset-store database`), so the embedded
//! service needs nothing else. With an object store configured:
//!
//! 1. a writer first claims the object's row in `stored_objects` (its own short transaction),
//! 2. then writes the object (a whole-object PUT, or a file renamed into place: never partial),
//! 3. then, in the transaction that saves the row naming it, touches the claim again.
//!
//! So a row never names an object that is not there, and an interrupted write leaves at most an
//! object nothing names. The sweep ([`Store::sweep_objects`]) deletes those after a grace period:
//! it marks the claim `deleting` in one statement that also checks that no row names the object
//! and that nobody touched it within the grace period, then deletes the object, then the claim. A
//! writer that finds a claim `deleting` waits for the sweep to finish and writes the object again.
//! Objects the database has no claim for at all (for example after restoring an older backup) are
//! found by listing the store and deleted the same way.
//!
//! A row says only *which* content it holds; the configured store says *where* content lives. That
//! is what lets `examkit assets migrate` copy every object to another store before the service is
//! switched over to it.
//!
//! A prefix belongs to one database: the sweep deletes what *its* database does not name, so two
//! deployments sharing a prefix would delete each other's files. The first database to use a
//! prefix binds it (the object `<prefix>/.examkit-deployment` names the database's deployment id,
//! see [`super::deployment`]); a database pointed at a prefix bound to another refuses to use it.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutPayload};
use sha2::{Digest, Sha256};
use sqlx::Row;

use super::{Durability, Store, StoreError, WriteTx, now_ms};

/// Where stored files live, as given to `--asset-store`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssetStoreUrl {
    /// In the database, beside the rows that name them (the default).
    Database,
    /// Files under a local directory (one machine).
    File(std::path::PathBuf),
    /// Objects under a prefix of an S3-compatible bucket (endpoint, region and credentials from
    /// the usual `AWS_*` variables).
    S3 {
        /// The bucket.
        bucket: String,
        /// The key prefix, without leading or trailing slashes (may be empty).
        prefix: String,
    },
}

impl AssetStoreUrl {
    /// Reads `database`, `file:///absolute/directory` or `s3://bucket[/prefix]`.
    pub fn parse(text: &str) -> Result<AssetStoreUrl, String> {
        let text = text.trim();
        if text == "database" {
            return Ok(AssetStoreUrl::Database);
        }
        if let Some(path) = text.strip_prefix("file://") {
            if !path.starts_with('/') {
                return Err(format!(
                    "a file store needs an absolute directory, as in file:///var/lib/examkit/assets, not {text:?}"
                ));
            }
            let path = path.trim_end_matches('/');
            if path.is_empty() {
                return Err("a file store cannot be the root directory".into());
            }
            return Ok(AssetStoreUrl::File(std::path::PathBuf::from(path)));
        }
        if let Some(rest) = text.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if !valid_bucket(bucket) {
                return Err(format!(
                    "{bucket:?} is not an S3 bucket name (3 to 63 lower-case letters, digits, dots and hyphens)"
                ));
            }
            let prefix = prefix.trim_matches('/');
            if prefix
                .split('/')
                .any(|part| part == "." || part == ".." || (part.is_empty() && !prefix.is_empty()))
                || prefix.chars().any(|c| c.is_control() || c == '\\')
            {
                return Err(format!("{prefix:?} is not a usable key prefix"));
            }
            return Ok(AssetStoreUrl::S3 {
                bucket: bucket.to_owned(),
                prefix: prefix.to_owned(),
            });
        }
        Err(format!(
            "the asset store must be database, file:///directory or s3://bucket/prefix, not {text:?}"
        ))
    }
}

impl std::fmt::Display for AssetStoreUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AssetStoreUrl::Database => f.write_str("database"),
            AssetStoreUrl::File(path) => write!(f, "file://{}", path.display()),
            AssetStoreUrl::S3 { bucket, prefix } if prefix.is_empty() => write!(f, "s3://{bucket}"),
            AssetStoreUrl::S3 { bucket, prefix } => write!(f, "s3://{bucket}/{prefix}"),
        }
    }
}

fn valid_bucket(name: &str) -> bool {
    (3..=63).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
        && name
            .as_bytes()
            .first()
            .is_some_and(u8::is_ascii_alphanumeric)
        && name
            .as_bytes()
            .last()
            .is_some_and(u8::is_ascii_alphanumeric)
}

/// An object store holding stored files, each at `<prefix>/sha256/<first two hex digits>/<hex>`.
#[derive(Debug, Clone)]
pub struct Objects {
    inner: Arc<dyn ObjectStore>,
    prefix: ObjectPath,
    url: AssetStoreUrl,
}

/// One object found by listing the store.
#[derive(Debug, Clone)]
pub struct Listed {
    /// The SHA-256 its name carries.
    pub sha256: String,
    /// When it was last written (Unix milliseconds).
    pub modified_ms: i64,
    /// Its size.
    pub size: u64,
}

impl Objects {
    /// Opens the store a URL names; `None` for `database`. A directory is created when missing.
    pub fn open(url: &AssetStoreUrl) -> Result<Option<Objects>, StoreError> {
        let (inner, prefix): (Arc<dyn ObjectStore>, &str) = match url {
            AssetStoreUrl::Database => return Ok(None),
            AssetStoreUrl::File(dir) => {
                std::fs::create_dir_all(dir).map_err(|source| StoreError::DataDir {
                    path: dir.display().to_string(),
                    source,
                })?;
                let local = object_store::local::LocalFileSystem::new_with_prefix(dir)
                    .map_err(|e| StoreError::Objects(e.to_string()))?
                    .with_automatic_cleanup(true);
                (Arc::new(local), "")
            }
            AssetStoreUrl::S3 { bucket, prefix } => {
                crate::tls::install_provider();
                let mut builder =
                    object_store::aws::AmazonS3Builder::from_env().with_bucket_name(bucket);
                // An explicit plain-http endpoint (a test server, a bucket on the local network)
                // is the operator's choice; AWS itself is reached over TLS.
                let endpoint = std::env::var("AWS_ENDPOINT_URL")
                    .or_else(|_| std::env::var("AWS_ENDPOINT"))
                    .unwrap_or_default();
                if endpoint.starts_with("http://") {
                    builder = builder.with_allow_http(true);
                }
                let s3 = builder
                    .build()
                    .map_err(|e| StoreError::Objects(e.to_string()))?;
                (Arc::new(s3), prefix.as_str())
            }
        };
        Ok(Some(Objects {
            inner,
            prefix: ObjectPath::from(prefix),
            url: url.clone(),
        }))
    }

    /// The URL it was opened from.
    pub fn url(&self) -> &AssetStoreUrl {
        &self.url
    }

    fn root(&self) -> ObjectPath {
        self.prefix.clone().join("sha256")
    }

    fn location(&self, sha256: &str) -> ObjectPath {
        self.root()
            .join(sha256.get(..2).unwrap_or("00"))
            .join(sha256)
    }

    /// Writes an object (whole: a reader never sees part of it).
    pub async fn put(&self, sha256: &str, bytes: Bytes) -> Result<(), StoreError> {
        self.inner
            .put(&self.location(sha256), PutPayload::from_bytes(bytes))
            .await
            .map_err(|e| StoreError::Objects(format!("writing object {sha256}: {e}")))?;
        Ok(())
    }

    /// Reads a whole object and checks its bytes against its name.
    pub async fn get(&self, sha256: &str) -> Result<Vec<u8>, StoreError> {
        let bytes = self
            .inner
            .get(&self.location(sha256))
            .await
            .map_err(|e| missing_or(sha256, e))?
            .bytes()
            .await
            .map_err(|e| missing_or(sha256, e))?;
        if hex_sha256(&bytes) != sha256 {
            return Err(StoreError::Corrupt(format!(
                "object {sha256} does not hold the bytes its name says"
            )));
        }
        Ok(bytes.to_vec())
    }

    /// Reads part of an object (no check: the part alone cannot be checked).
    pub async fn get_range(&self, sha256: &str, range: Range<u64>) -> Result<Vec<u8>, StoreError> {
        let bytes = self
            .inner
            .get_range(&self.location(sha256), range)
            .await
            .map_err(|e| missing_or(sha256, e))?;
        Ok(bytes.to_vec())
    }

    /// The size of an object; `None` when it is not there.
    pub async fn size(&self, sha256: &str) -> Result<Option<u64>, StoreError> {
        match self.inner.head(&self.location(sha256)).await {
            Ok(meta) => Ok(Some(meta.size)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(StoreError::Objects(format!("reading object {sha256}: {e}"))),
        }
    }

    /// Deletes an object; deleting one that is not there succeeds.
    pub async fn delete(&self, sha256: &str) -> Result<(), StoreError> {
        match self.inner.delete(&self.location(sha256)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(StoreError::Objects(format!(
                "deleting object {sha256}: {e}"
            ))),
        }
    }

    /// Every object under the store's prefix whose name is a SHA-256 (anything else there is
    /// left alone).
    pub async fn list(&self) -> Result<Vec<Listed>, StoreError> {
        let mut found = Vec::new();
        let mut stream = self.inner.list(Some(&self.root()));
        while let Some(meta) = stream.next().await {
            let meta = meta.map_err(|e| StoreError::Objects(format!("listing objects: {e}")))?;
            let Some(name) = meta.location.filename() else {
                continue;
            };
            if is_sha256(name) && self.location(name) == meta.location {
                found.push(Listed {
                    sha256: name.to_owned(),
                    modified_ms: meta.last_modified.timestamp_millis(),
                    size: meta.size,
                });
            }
        }
        Ok(found)
    }

    fn binding(&self) -> ObjectPath {
        self.prefix.clone().join(BINDING)
    }

    /// The deployment id the prefix is bound to (the text of its binding object, trimmed, without
    /// control characters, cut to 100 characters); `None` when it is not bound yet.
    pub async fn bound_to(&self) -> Result<Option<String>, StoreError> {
        let read = match self.inner.get(&self.binding()).await {
            Ok(found) => found.bytes().await,
            Err(e) => Err(e),
        };
        match read {
            Ok(bytes) => Ok(Some(
                String::from_utf8_lossy(&bytes)
                    .trim()
                    .chars()
                    .filter(|c| !c.is_control())
                    .take(100)
                    .collect(),
            )),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(StoreError::Objects(format!(
                "reading the binding {BINDING}: {e}"
            ))),
        }
    }

    /// Binds the prefix to `deployment` unless it is bound already. The write is create-only
    /// where the store supports it (a directory; S3 and most compatible stores), so of two
    /// databases binding one prefix at once exactly one wins; [`Objects::bound_to`] then says
    /// which.
    pub async fn bind(&self, deployment: &str) -> Result<(), StoreError> {
        let text = PutPayload::from(format!("{deployment}\n"));
        match self
            .inner
            .put_opts(&self.binding(), text.clone(), PutMode::Create.into())
            .await
        {
            Ok(_) | Err(object_store::Error::AlreadyExists { .. }) => Ok(()),
            Err(object_store::Error::NotImplemented { .. }) => {
                // A store without conditional writes: the last writer wins, and the caller reads
                // the binding back.
                self.inner
                    .put(&self.binding(), text)
                    .await
                    .map(drop)
                    .map_err(|e| StoreError::Objects(format!("writing the binding {BINDING}: {e}")))
            }
            Err(e) => Err(StoreError::Objects(format!(
                "writing the binding {BINDING}: {e}"
            ))),
        }
    }

    /// The store answers (for the readiness probe): a read of a name that is never written.
    pub async fn check(&self) -> Result<(), String> {
        let probe = self.prefix.clone().join("readiness-probe");
        match self.inner.head(&probe).await {
            Ok(_) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(format!("the asset store {} does not answer: {e}", self.url)),
        }
    }
}

fn missing_or(sha256: &str, e: object_store::Error) -> StoreError {
    match e {
        object_store::Error::NotFound { .. } => StoreError::MissingObject(sha256.to_owned()),
        e => StoreError::Objects(format!("reading object {sha256}: {e}")),
    }
}

/// The lower-case hex SHA-256 of some bytes.
pub fn hex_sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    out
}

fn is_sha256(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The object under a store's prefix that names the database the prefix is bound to.
pub const BINDING: &str = ".examkit-deployment";

/// How long a writer waits for a sweep that is deleting the object it wants to write, in all.
const CLAIM_WAIT: Duration = Duration::from_secs(30);

/// The columns that name objects: `(table, column)`.
pub const OBJECT_COLUMNS: [(&str, &str); 5] = [
    ("asset_blobs", "object"),
    ("asset_pages", "image_object"),
    ("paper_exports", "question_paper_object"),
    ("paper_exports", "mark_scheme_object"),
    ("class_sets", "pdf_object"),
];

/// `NOT EXISTS` for every row that could name the object `s.sha256`.
fn unreferenced(alias: &str) -> String {
    OBJECT_COLUMNS
        .iter()
        .map(|(table, column)| {
            format!("NOT EXISTS (SELECT 1 FROM {table} r WHERE r.{column} = {alias}.sha256)")
        })
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// Bytes on their way to a row: kept in the row, or already written as an object.
#[derive(Debug, Clone)]
pub enum Kept {
    /// Saved in the database column itself.
    Inline(Vec<u8>),
    /// Written to the object store under this SHA-256; the row names it.
    Object(String),
}

impl Kept {
    /// The bytes to bind to the database column (`None` when in the object store).
    pub fn inline(&self) -> Option<&[u8]> {
        match self {
            Kept::Inline(bytes) => Some(bytes),
            Kept::Object(_) => None,
        }
    }

    /// The object to bind to the object column (`None` when inline).
    pub fn object(&self) -> Option<&str> {
        match self {
            Kept::Inline(_) => None,
            Kept::Object(sha256) => Some(sha256),
        }
    }
}

/// What a sweep deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Swept {
    /// Objects no row named, claimed and untouched for the grace period.
    pub unreferenced: u64,
    /// Objects in the store the database had no claim for, older than the grace period.
    pub untracked: u64,
    /// Deletions an earlier sweep had begun and not finished.
    pub resumed: u64,
}

impl Store {
    /// This store with its files kept in `objects` (`None`: in the database).
    pub fn with_objects(mut self, objects: Option<Objects>) -> Store {
        self.objects = objects;
        self
    }

    /// The object store files go to, if one is configured.
    pub fn objects(&self) -> Option<&Objects> {
        self.objects.as_ref()
    }

    fn require_objects(&self) -> Result<&Objects, StoreError> {
        self.objects.as_ref().ok_or(StoreError::NoObjectStore)
    }

    /// Prepares bytes for a row: in the database when no object store is configured; else
    /// claimed and written as an object first (see the module's notes). The row that names the
    /// object must be saved with [`Store::hold_object`] in its transaction.
    pub async fn keep(&self, bytes: Vec<u8>) -> Result<Kept, StoreError> {
        let Some(objects) = &self.objects else {
            return Ok(Kept::Inline(bytes));
        };
        let sha256 = hex_sha256(&bytes);
        self.claim_object(&sha256, bytes.len()).await?;
        objects.put(&sha256, Bytes::from(bytes)).await?;
        Ok(Kept::Object(sha256))
    }

    /// Claims an object's row before its object is written, waiting while a sweep deletes it.
    async fn claim_object(&self, sha256: &str, size: usize) -> Result<(), StoreError> {
        let deadline = tokio::time::Instant::now() + CLAIM_WAIT;
        loop {
            let claimed = self
                .execute_write(
                    Durability::Saved,
                    sqlx::query(
                        "INSERT INTO stored_objects (sha256, size_bytes, state, touched_at) \
                         VALUES ($1, $2, 'live', $3) \
                         ON CONFLICT (sha256) DO UPDATE SET touched_at = excluded.touched_at \
                         WHERE stored_objects.state = 'live'",
                    )
                    .bind(sha256)
                    .bind(i64::try_from(size).unwrap_or(i64::MAX))
                    .bind(now_ms()),
                )
                .await?
                .rows_affected();
            if claimed == 1 {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(StoreError::Objects(format!(
                    "object {sha256} is still being deleted by a sweep"
                )));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// In the transaction saving a row that names `kept`'s object: touches its claim, so a sweep
    /// cannot take it. Fails (and the transaction must roll back) when a sweep already has, which
    /// only happens when the write took longer than the sweep's grace period.
    pub async fn hold_object(tx: &mut WriteTx, kept: &Kept) -> Result<(), StoreError> {
        let Some(sha256) = kept.object() else {
            return Ok(());
        };
        let held = sqlx::query(
            "UPDATE stored_objects SET touched_at = $1 WHERE sha256 = $2 AND state = 'live'",
        )
        .bind(now_ms())
        .bind(sha256)
        .execute(&mut **tx)
        .await?
        .rows_affected();
        if held == 1 {
            Ok(())
        } else {
            Err(StoreError::Objects(format!(
                "object {sha256} was swept before the row naming it was saved; write it again"
            )))
        }
    }

    /// The bytes a row holds in its `inline` column, else in the object its `object` column names;
    /// `None` without a row or when both are empty.
    pub async fn read_kept(
        &self,
        row: Option<&sqlx::any::AnyRow>,
        inline: &str,
        object: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(row) = row else { return Ok(None) };
        match (
            row.try_get::<Option<Vec<u8>>, _>(inline)?,
            row.try_get::<Option<String>, _>(object)?,
        ) {
            (Some(bytes), _) => Ok(Some(bytes)),
            (None, Some(sha256)) => Ok(Some(self.require_objects()?.get(&sha256).await?)),
            (None, None) => Ok(None),
        }
    }

    /// Bytes `range` of what a row keeps, from a query that selected `part` (the range of its
    /// inline column, read with `substr`) and `object` (its object column): the part when the
    /// bytes are inline, else the range read from the object store; `None` without a row.
    pub async fn kept_range(
        &self,
        row: Option<&sqlx::any::AnyRow>,
        range: std::ops::Range<u64>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(row) = row else { return Ok(None) };
        if let Some(part) = row.try_get::<Option<Vec<u8>>, _>("part")? {
            return Ok(Some(part));
        }
        let object: Option<String> = row.try_get("object")?;
        match (object, self.objects()) {
            (Some(sha256), Some(objects)) => Ok(Some(objects.get_range(&sha256, range).await?)),
            (Some(_), None) => Err(StoreError::NoObjectStore),
            (None, _) => Ok(None),
        }
    }

    /// Deletes objects nothing names: those claimed, unnamed and untouched since `cutoff` (Unix
    /// milliseconds), those in the store without a claim written before `cutoff`, and deletions a
    /// stopped sweep left unfinished. Without an object store there is nothing to sweep.
    ///
    /// Only a prefix bound to this database is swept (it is bound now if nobody has bound it):
    /// one bound to another is refused with [`StoreError::ForeignObjects`] before anything is
    /// deleted, since the files there are named by that database, not this one.
    pub async fn sweep_objects(&self, cutoff: i64) -> Result<Swept, StoreError> {
        let Some(objects) = &self.objects else {
            return Ok(Swept::default());
        };
        self.bind_objects(objects).await?;
        let mut swept = Swept::default();
        // Deletions begun by a sweep that stopped: the claim says `deleting`, so nobody wrote the
        // object since; finish them. (Another sweep finishing the same one at once is harmless.)
        let stale: Vec<String> = sqlx::query_scalar(
            "SELECT sha256 FROM stored_objects WHERE state = 'deleting' AND touched_at < $1",
        )
        .bind(cutoff)
        .fetch_all(self.pool())
        .await?;
        for sha256 in stale {
            self.finish_deleting(objects, &sha256).await?;
            swept.resumed += 1;
        }
        let candidates = format!(
            "SELECT s.sha256 FROM stored_objects s WHERE s.state = 'live' AND s.touched_at < $1 AND {} \
             ORDER BY s.sha256 LIMIT 500",
            unreferenced("s")
        );
        let mark = format!(
            "UPDATE stored_objects SET state = 'deleting', touched_at = $3 \
             WHERE sha256 = $1 AND state = 'live' AND touched_at < $2 AND {}",
            unreferenced("stored_objects")
        );
        loop {
            let batch: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(candidates.clone()))
                .bind(cutoff)
                .fetch_all(self.pool())
                .await?;
            let mut marked = 0;
            for sha256 in &batch {
                let done = self
                    .execute_write(
                        Durability::Saved,
                        sqlx::query(sqlx::AssertSqlSafe(mark.clone()))
                            .bind(sha256)
                            .bind(cutoff)
                            .bind(now_ms()),
                    )
                    .await?
                    .rows_affected();
                if done == 1 {
                    self.finish_deleting(objects, sha256).await?;
                    swept.unreferenced += 1;
                    marked += 1;
                }
            }
            if batch.len() < 500 || marked == 0 {
                break;
            }
        }
        // Objects without any claim: written by an instance whose database was since restored
        // from an older backup, or left by hand. Each is claimed as `deleting` first, so a writer
        // arriving now waits instead of losing its object.
        for listed in objects.list().await? {
            if listed.modified_ms >= cutoff {
                continue;
            }
            let taken = self
                .execute_write(
                    Durability::Saved,
                    sqlx::query(
                        "INSERT INTO stored_objects (sha256, size_bytes, state, touched_at) \
                         VALUES ($1, $2, 'deleting', $3) ON CONFLICT (sha256) DO NOTHING",
                    )
                    .bind(&listed.sha256)
                    .bind(i64::try_from(listed.size).unwrap_or(i64::MAX))
                    .bind(now_ms()),
                )
                .await?
                .rows_affected();
            if taken == 1 {
                self.finish_deleting(objects, &listed.sha256).await?;
                swept.untracked += 1;
            }
        }
        Ok(swept)
    }

    async fn finish_deleting(&self, objects: &Objects, sha256: &str) -> Result<(), StoreError> {
        objects.delete(sha256).await?;
        self.execute_write(
            Durability::Saved,
            sqlx::query("DELETE FROM stored_objects WHERE sha256 = $1 AND state = 'deleting'")
                .bind(sha256),
        )
        .await?;
        Ok(())
    }

    /// How many stored files are in the database and how many name objects: `(inline, objects)`.
    pub async fn kept_counts(&self) -> Result<(i64, i64), StoreError> {
        let mut inline = 0;
        let mut named = 0;
        for (table, object, bytes) in MOVABLE {
            let row = sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT COUNT({bytes}) AS inline, COUNT({object}) AS named FROM {table}"
            )))
            .fetch_one(self.pool())
            .await?;
            inline += row.try_get::<i64, _>("inline")?;
            named += row.try_get::<i64, _>("named")?;
        }
        Ok((inline, named))
    }

    /// Moves one stored file that is in the database into the object store `to`, if any is left
    /// in `table`: claimed, written, then the row switched to name it in one transaction (which
    /// also checks the row still holds those bytes). `Ok(false)` when none is left.
    pub async fn move_one_out(&self, to: &Objects, column: Movable) -> Result<bool, StoreError> {
        let (table, object, bytes) = column.columns();
        let key = column.key();
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {key}, {bytes} AS bytes FROM {table} WHERE {bytes} IS NOT NULL LIMIT 1"
        )))
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else { return Ok(false) };
        let data: Vec<u8> = row.try_get("bytes")?;
        let sha256 = hex_sha256(&data);
        self.claim_object(&sha256, data.len()).await?;
        to.put(&sha256, Bytes::from(data)).await?;
        let mut tx = self.begin_write().await?;
        Store::hold_object(&mut tx, &Kept::Object(sha256.clone())).await?;
        let mut update = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE {table} SET {object} = $1, {bytes} = NULL WHERE {} AND {bytes} IS NOT NULL",
            column.key_match(2)
        )))
        .bind(&sha256);
        update = column.bind_key(update, &row)?;
        update.execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Moves one stored file that names an object back into the database, reading it from the
    /// configured object store. `Ok(false)` when none is left.
    pub async fn move_one_in(&self, column: Movable) -> Result<bool, StoreError> {
        let objects = self.require_objects()?;
        let (table, object, bytes) = column.columns();
        let key = column.key();
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {key}, {object} AS object FROM {table} WHERE {object} IS NOT NULL LIMIT 1"
        )))
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else { return Ok(false) };
        let sha256: String = row.try_get("object")?;
        let data = objects.get(&sha256).await?;
        let mut tx = self.begin_write().await?;
        let mut update = sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE {table} SET {bytes} = $1, {object} = NULL WHERE {} AND {object} = $2",
            column.key_match(3)
        )))
        .bind(data)
        .bind(&sha256);
        update = column.bind_key(update, &row)?;
        update.execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Every claimed object's SHA-256, in order, after `after` (for copying between stores).
    pub async fn claimed_objects(
        &self,
        after: &str,
        limit: i64,
    ) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT sha256 FROM stored_objects WHERE state = 'live' AND sha256 > $1 ORDER BY sha256 LIMIT $2",
        )
        .bind(after)
        .bind(limit)
        .fetch_all(self.pool())
        .await?)
    }
}

/// The columns stored files move between: `(table, object column, bytes column)`.
const MOVABLE: [(&str, &str, &str); 5] = [
    ("asset_blobs", "object", "bytes"),
    ("asset_pages", "image_object", "image"),
    ("paper_exports", "question_paper_object", "question_paper"),
    ("paper_exports", "mark_scheme_object", "mark_scheme"),
    ("class_sets", "pdf_object", "pdf"),
];

/// One kind of stored file that can move between the database and an object store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Movable {
    /// Uploaded files.
    Uploads,
    /// Page images kept for a vision-model marker.
    PageImages,
    /// Question papers of prepared exports.
    QuestionPapers,
    /// Mark schemes of prepared exports.
    MarkSchemes,
    /// The PDFs of class sets.
    ClassSets,
}

impl Movable {
    /// Every kind, in the order a migration moves them.
    pub const ALL: [Movable; 5] = [
        Movable::Uploads,
        Movable::PageImages,
        Movable::QuestionPapers,
        Movable::MarkSchemes,
        Movable::ClassSets,
    ];

    /// A name for progress reports.
    pub fn name(self) -> &'static str {
        match self {
            Movable::Uploads => "uploads",
            Movable::PageImages => "page images",
            Movable::QuestionPapers => "question papers",
            Movable::MarkSchemes => "mark schemes",
            Movable::ClassSets => "class sets",
        }
    }

    fn columns(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Movable::Uploads => MOVABLE[0],
            Movable::PageImages => MOVABLE[1],
            Movable::QuestionPapers => MOVABLE[2],
            Movable::MarkSchemes => MOVABLE[3],
            Movable::ClassSets => MOVABLE[4],
        }
    }

    fn key_columns(self) -> &'static [&'static str] {
        match self {
            Movable::Uploads => &["asset_id"],
            Movable::PageImages => &["asset_id", "page"],
            Movable::QuestionPapers | Movable::MarkSchemes => &["user_id", "paper_id", "revision"],
            Movable::ClassSets => &["id"],
        }
    }

    fn key(self) -> String {
        self.key_columns().join(", ")
    }

    /// `k1 = $first AND k2 = $first+1 …`
    fn key_match(self, first: usize) -> String {
        self.key_columns()
            .iter()
            .enumerate()
            .map(|(i, k)| format!("{k} = ${}", first + i))
            .collect::<Vec<_>>()
            .join(" AND ")
    }

    fn bind_key<'q>(
        self,
        mut query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>,
        row: &sqlx::any::AnyRow,
    ) -> Result<sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>, StoreError> {
        for column in self.key_columns() {
            query = match *column {
                "page" | "revision" => query.bind(row.try_get::<i64, _>(*column)?),
                _ => query.bind(row.try_get::<String, _>(*column)?),
            };
        }
        Ok(query)
    }
}

#[cfg(test)]
mod tests {
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
}
