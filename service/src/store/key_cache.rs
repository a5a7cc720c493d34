//! The keys a server has authenticated, kept in memory with the authentication epoch they were
//! read at.
//!
//! The epoch (table `auth_epoch`, migration 0015) is bumped by triggers on every change to a key
//! or an account that could change what the key authenticates as, whoever makes it. A cached key
//! is only a first answer: each request's admission reads the epoch in the same transaction as
//! its rate counters, and when it differs from the epoch the key was read at, the key is read
//! again before the request goes further ([`crate::http`]). So a revocation committed before a
//! request arrives is seen by that request on every server, with no time-to-live. Expiry needs
//! no epoch: it is checked against the clock on every request.

use std::collections::HashMap;
use std::sync::Mutex;

use super::accounts::{ApiKey, User};
use super::{Store, StoreError};

/// Cached keys at most; the cache is emptied when it is full (keys in use are read again once).
const MAX_KEYS: usize = 50_000;

/// A key and its account as read from the database at `epoch`.
#[derive(Debug, Clone)]
pub struct KnownKey {
    /// The key.
    pub key: ApiKey,
    /// Its account.
    pub user: User,
    /// The authentication epoch read before the key was.
    pub epoch: i64,
}

/// Keys by fingerprint.
#[derive(Debug, Default)]
pub(crate) struct KeyCache {
    keys: Mutex<HashMap<String, KnownKey>>,
}

impl KeyCache {
    fn get(&self, fingerprint: &str) -> Option<KnownKey> {
        self.keys
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(fingerprint)
            .cloned()
    }

    fn put(&self, fingerprint: &str, known: KnownKey) {
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        if keys.len() >= MAX_KEYS && !keys.contains_key(fingerprint) {
            keys.clear();
        }
        keys.insert(fingerprint.to_owned(), known);
    }

    fn forget(&self, fingerprint: &str) {
        self.keys
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(fingerprint);
    }
}

impl Store {
    /// The authentication epoch now.
    pub async fn auth_epoch(&self) -> Result<i64, StoreError> {
        Ok(
            sqlx::query_scalar::<_, i64>("SELECT epoch FROM auth_epoch WHERE id = 1")
                .fetch_one(self.pool())
                .await?,
        )
    }

    /// The key with this fingerprint and its account: from memory when this server has read it
    /// before (check [`KnownKey::epoch`] against the admission's), otherwise from the database.
    pub async fn known_key(&self, fingerprint: &str) -> Result<Option<KnownKey>, StoreError> {
        match self.key_cache.get(fingerprint) {
            Some(known) => Ok(Some(known)),
            None => self.read_key(fingerprint).await,
        }
    }

    /// The key with this fingerprint and its account, read from the database (and kept).
    pub async fn read_key(&self, fingerprint: &str) -> Result<Option<KnownKey>, StoreError> {
        // The epoch first: a change committed after it is read shows as a later epoch.
        let epoch = self.auth_epoch().await?;
        match self.key_by_fingerprint(fingerprint).await? {
            Some((key, user)) => {
                let known = KnownKey { key, user, epoch };
                self.key_cache.put(fingerprint, known.clone());
                Ok(Some(known))
            }
            None => {
                self.key_cache.forget(fingerprint);
                Ok(None)
            }
        }
    }
}
