//! The object store outside the database: a local directory (`file://`) or a prefix of an
//! S3-compatible bucket (`s3://`), each object at `<prefix>/sha256/<first two hex digits>/<hex>`,
//! and the binding of the prefix to one database.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutPayload};

use super::*;
use crate::store::StoreError;

/// An object store holding stored files, each at `<prefix>/sha256/<first two hex digits>/<hex>`.
#[derive(Debug, Clone)]
pub struct Objects {
    pub(super) inner: Arc<dyn ObjectStore>,
    pub(super) prefix: ObjectPath,
    pub(super) url: AssetStoreUrl,
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

    pub(super) fn root(&self) -> ObjectPath {
        self.prefix.clone().join("sha256")
    }

    pub(super) fn location(&self, sha256: &str) -> ObjectPath {
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

    pub(super) fn binding(&self) -> ObjectPath {
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
