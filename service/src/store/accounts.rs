//! Users and API keys.

use super::words::StoredFlag;
use super::{Durability, Store, StoreError, now_ms};
use crate::auth::{Scope, join_scopes, parse_scopes};

/// At most this many active (unrevoked, unexpired) keys per account.
pub const MAX_ACTIVE_KEYS: i64 = 20;

/// An account.
#[derive(Debug, Clone)]
pub struct User {
    /// The account id (UUID).
    pub id: String,
    /// The display name.
    pub name: String,
    /// Whether the account is verified; unverified accounts' keys get 401.
    pub verified: bool,
    /// Whether the account is restricted; its keys get 403.
    pub restricted: bool,
    /// Creation time, Unix milliseconds.
    pub created_at: i64,
    /// The email the account signs in to the app with (trimmed, lower-case), when it has one.
    pub email: Option<String>,
}

/// An API key as stored (never the secret).
#[derive(Debug, Clone)]
pub struct ApiKey {
    /// The key id (UUID).
    pub id: String,
    /// The owning account.
    pub user_id: String,
    /// The key's name.
    pub name: String,
    /// The first characters of the secret, for recognition.
    pub prefix: String,
    /// SHA-256 fingerprint of the secret.
    pub fingerprint: String,
    /// The key's permissions.
    pub scopes: Vec<Scope>,
    /// Creation time, Unix milliseconds.
    pub created_at: i64,
    /// Expiry time, Unix milliseconds.
    pub expires_at: i64,
    /// Revocation time, when revoked.
    pub revoked_at: Option<i64>,
    /// Last time the key was used.
    pub last_used_at: Option<i64>,
    /// Lifetime request count.
    pub request_count: i64,
    /// Lifetime count of error responses (status ≥ 400).
    pub error_count: i64,
}

impl ApiKey {
    /// Whether the key is neither revoked nor expired at `now`.
    pub fn is_active(&self, now: i64) -> bool {
        self.revoked_at.is_none() && self.expires_at > now
    }

    /// `active`, `revoked` or `expired`.
    pub fn state(&self, now: i64) -> &'static str {
        if self.revoked_at.is_some() {
            "revoked"
        } else if self.expires_at <= now {
            "expired"
        } else {
            "active"
        }
    }
}

/// Why a key could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateKeyError {
    /// No such account.
    #[error("no user with id {0}")]
    UnknownUser(String),
    /// The account already has the maximum number of active keys.
    #[error("user {0} already has {MAX_ACTIVE_KEYS} active keys; revoke one first")]
    TooManyKeys(String),
    /// A storage failure.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why an account's sign-in could not be set.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// No such account.
    #[error("no user with id {0}")]
    UnknownUser(String),
    /// No account signs in with this email.
    #[error("no user with email {0}")]
    UnknownEmail(String),
    /// Another account already signs in with this email.
    #[error("another account already signs in with {0}")]
    EmailTaken(String),
    /// A storage failure.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// An email as accounts store it: trimmed and lower-case. `None` when it is not a plausible
/// address (one `@` with text on both sides, no spaces or control characters, at most 254 bytes).
pub fn normalise_email(email: &str) -> Option<String> {
    let email = email.trim().to_lowercase();
    let (local, domain) = email.split_once('@')?;
    let plausible = !local.is_empty()
        && !domain.is_empty()
        && !domain.contains('@')
        && email.len() <= 254
        && !email.chars().any(|c| c.is_whitespace() || c.is_control());
    plausible.then_some(email)
}

const USER_COLUMNS: &str = "id, name, verified, restricted, created_at, email";

const KEY_COLUMNS: &str = "id, user_id, name, prefix, fingerprint, scopes, created_at, expires_at, \
     revoked_at, last_used_at, request_count, error_count";

/// An account's row (its flags stored as 0 and 1).
#[derive(Debug, Clone, sqlx::FromRow)]
struct UserRow {
    id: String,
    name: String,
    #[sqlx(try_from = "StoredFlag")]
    verified: bool,
    #[sqlx(try_from = "StoredFlag")]
    restricted: bool,
    created_at: i64,
    email: Option<String>,
}

impl From<UserRow> for User {
    fn from(row: UserRow) -> Self {
        User {
            id: row.id,
            name: row.name,
            verified: row.verified,
            restricted: row.restricted,
            created_at: row.created_at,
            email: row.email,
        }
    }
}

/// An account's row with the hash of the password it signs in with.
#[derive(Debug, Clone, sqlx::FromRow)]
struct LoginRow {
    #[sqlx(flatten)]
    user: UserRow,
    password_hash: Option<String>,
}

/// A key's row: its scopes are the stored, comma-separated names.
#[derive(Debug, Clone, sqlx::FromRow)]
struct KeyRow {
    id: String,
    user_id: String,
    name: String,
    prefix: String,
    fingerprint: String,
    scopes: String,
    created_at: i64,
    expires_at: i64,
    revoked_at: Option<i64>,
    last_used_at: Option<i64>,
    request_count: i64,
    error_count: i64,
}

impl TryFrom<KeyRow> for ApiKey {
    type Error = StoreError;

    fn try_from(row: KeyRow) -> Result<Self, StoreError> {
        Ok(ApiKey {
            scopes: parse_scopes(&row.scopes).map_err(StoreError::Corrupt)?,
            id: row.id,
            user_id: row.user_id,
            name: row.name,
            prefix: row.prefix,
            fingerprint: row.fingerprint,
            created_at: row.created_at,
            expires_at: row.expires_at,
            revoked_at: row.revoked_at,
            last_used_at: row.last_used_at,
            request_count: row.request_count,
            error_count: row.error_count,
        })
    }
}

impl Store {
    /// Creates an account.
    pub async fn create_user(
        &self,
        name: &str,
        verified: bool,
        restricted: bool,
    ) -> Result<User, StoreError> {
        let user = User {
            id: uuid::Uuid::new_v4().to_string(),
            name: name.to_owned(),
            verified,
            restricted,
            created_at: now_ms(),
            email: None,
        };
        let statement = sqlx::query(
            "INSERT INTO users (id, name, verified, restricted, created_at) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(&user.id)
        .bind(&user.name)
        .bind(i64::from(verified))
        .bind(i64::from(restricted))
        .bind(user.created_at);
        self.execute_write(Durability::Saved, statement).await?;
        Ok(user)
    }

    /// Whether any account exists.
    pub async fn has_accounts(&self) -> Result<bool, StoreError> {
        let found: Option<String> = sqlx::query_scalar("SELECT id FROM users LIMIT 1")
            .fetch_optional(self.pool())
            .await?;
        Ok(found.is_some())
    }

    /// Makes the deployment's first account, verified, signing in with `email` (normalised) and
    /// `password_hash`, when there is no account yet; `None` once any account exists. Two first
    /// accounts made at once (by two instances) make one: the check and the insert are one
    /// transaction, serialised on PostgreSQL by a transaction lock.
    pub async fn create_first_account(
        &self,
        name: &str,
        email: &str,
        password_hash: &str,
    ) -> Result<Option<User>, StoreError> {
        let mut tx = self.begin_write().await?;
        if self.backend == super::Backend::Postgres {
            sqlx::query("SELECT pg_advisory_xact_lock(7201001)")
                .execute(&mut *tx)
                .await?;
        }
        let existing: Option<String> = sqlx::query_scalar("SELECT id FROM users LIMIT 1")
            .fetch_optional(&mut *tx)
            .await?;
        if existing.is_some() {
            tx.rollback().await?;
            return Ok(None);
        }
        let user = User {
            id: uuid::Uuid::new_v4().to_string(),
            name: name.to_owned(),
            verified: true,
            restricted: false,
            created_at: now_ms(),
            email: Some(email.to_owned()),
        };
        sqlx::query(
            "INSERT INTO users (id, name, verified, restricted, created_at, email, password_hash) \
             VALUES ($1, $2, 1, 0, $3, $4, $5)",
        )
        .bind(&user.id)
        .bind(&user.name)
        .bind(user.created_at)
        .bind(email)
        .bind(password_hash)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Some(user))
    }

    /// The account that signs in with `email` (already normalised) and its password hash.
    pub async fn user_by_email(
        &self,
        email: &str,
    ) -> Result<Option<(User, Option<String>)>, StoreError> {
        let row: Option<LoginRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {USER_COLUMNS}, password_hash FROM users WHERE email = $1"
        )))
        .bind(email)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(|row| (row.user.into(), row.password_hash)))
    }

    /// Gives an account (by id, or by the email it already has) an email and a password hash,
    /// and ends every browser session it has, in one transaction. Returns the account.
    pub async fn set_login(
        &self,
        user: Option<&str>,
        email: &str,
        password_hash: &str,
    ) -> Result<User, LoginError> {
        let mut tx = self.begin_write().await?;
        let holder: Option<String> = sqlx::query_scalar("SELECT id FROM users WHERE email = $1")
            .bind(email)
            .fetch_optional(&mut *tx)
            .await
            .map_err(StoreError::from)?;
        let id = match (user, holder) {
            (Some(id), Some(holder)) if holder != id => {
                return Err(LoginError::EmailTaken(email.to_owned()));
            }
            (Some(id), _) => id.to_owned(),
            (None, Some(holder)) => holder,
            (None, None) => return Err(LoginError::UnknownEmail(email.to_owned())),
        };
        let done = sqlx::query("UPDATE users SET email = $1, password_hash = $2 WHERE id = $3")
            .bind(email)
            .bind(password_hash)
            .bind(&id)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::from)?;
        if done.rows_affected() == 0 {
            return Err(LoginError::UnknownUser(id));
        }
        sqlx::query("DELETE FROM app_sessions WHERE user_id = $1")
            .bind(&id)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::from)?;
        // A browser that knew the old password is not trusted on the new one's account.
        sqlx::query("DELETE FROM app_devices WHERE user_id = $1")
            .bind(&id)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::from)?;
        tx.commit().await.map_err(StoreError::from)?;
        self.user(&id).await?.ok_or(LoginError::UnknownUser(id))
    }

    /// Changes an account's verified and restricted flags; returns whether the account exists.
    pub async fn update_user(
        &self,
        id: &str,
        verified: Option<bool>,
        restricted: Option<bool>,
    ) -> Result<bool, StoreError> {
        let Some(user) = self.user(id).await? else {
            return Ok(false);
        };
        self.execute_write(
            Durability::Saved,
            sqlx::query("UPDATE users SET verified = $1, restricted = $2 WHERE id = $3")
                .bind(i64::from(verified.unwrap_or(user.verified)))
                .bind(i64::from(restricted.unwrap_or(user.restricted)))
                .bind(id),
        )
        .await?;
        Ok(true)
    }

    /// One account.
    pub async fn user(&self, id: &str) -> Result<Option<User>, StoreError> {
        let row: Option<UserRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {USER_COLUMNS} FROM users WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(User::from))
    }

    /// Every account, oldest first.
    pub async fn users(&self) -> Result<Vec<User>, StoreError> {
        let rows: Vec<UserRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {USER_COLUMNS} FROM users ORDER BY created_at, id"
        )))
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().map(User::from).collect())
    }

    /// Stores a new key for `user_id`, enforcing the active-key limit atomically.
    #[allow(clippy::too_many_arguments)]
    pub async fn create_key(
        &self,
        user_id: &str,
        name: &str,
        prefix: &str,
        fingerprint: &str,
        scopes: &[Scope],
        expires_at: i64,
    ) -> Result<ApiKey, CreateKeyError> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        // Lock the account row first so two concurrent creations cannot both pass the limit.
        let touched = sqlx::query("UPDATE users SET name = name WHERE id = $1")
            .bind(user_id)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::from)?;
        if touched.rows_affected() == 0 {
            return Err(CreateKeyError::UnknownUser(user_id.to_owned()));
        }
        let active: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) AS n FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > $2",
        )
        .bind(user_id)
        .bind(now)
        .fetch_one(&mut *tx)
        .await
        .map_err(StoreError::from)?;
        if active >= MAX_ACTIVE_KEYS {
            return Err(CreateKeyError::TooManyKeys(user_id.to_owned()));
        }
        let key = ApiKey {
            id: uuid::Uuid::new_v4().to_string(),
            user_id: user_id.to_owned(),
            name: name.to_owned(),
            prefix: prefix.to_owned(),
            fingerprint: fingerprint.to_owned(),
            scopes: scopes.to_vec(),
            created_at: now,
            expires_at,
            revoked_at: None,
            last_used_at: None,
            request_count: 0,
            error_count: 0,
        };
        sqlx::query(
            "INSERT INTO api_keys (id, user_id, name, prefix, fingerprint, scopes, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&key.id)
        .bind(&key.user_id)
        .bind(&key.name)
        .bind(&key.prefix)
        .bind(&key.fingerprint)
        .bind(join_scopes(scopes))
        .bind(key.created_at)
        .bind(key.expires_at)
        .execute(&mut *tx)
        .await
        .map_err(StoreError::from)?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok(key)
    }

    /// Every key, optionally of one account, oldest first.
    pub async fn keys(&self, user_id: Option<&str>) -> Result<Vec<ApiKey>, StoreError> {
        // Their counters include every request recorded so far.
        self.flush_usage().await?;
        let rows: Vec<KeyRow> =
            match user_id {
                Some(user) => sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {KEY_COLUMNS} FROM api_keys WHERE user_id = $1 ORDER BY created_at, id"
                )))
                .bind(user)
                .fetch_all(self.pool())
                .await?,
                None => {
                    sqlx::query_as(sqlx::AssertSqlSafe(format!(
                        "SELECT {KEY_COLUMNS} FROM api_keys ORDER BY created_at, id"
                    )))
                    .fetch_all(self.pool())
                    .await?
                }
            };
        rows.into_iter().map(ApiKey::try_from).collect()
    }

    /// One key by id.
    pub async fn key(&self, id: &str) -> Result<Option<ApiKey>, StoreError> {
        self.flush_usage().await?;
        let row: Option<KeyRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {KEY_COLUMNS} FROM api_keys WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        row.map(ApiKey::try_from).transpose()
    }

    /// A key and its account, found by fingerprint.
    pub async fn key_by_fingerprint(
        &self,
        fingerprint: &str,
    ) -> Result<Option<(ApiKey, User)>, StoreError> {
        let row: Option<KeyRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {KEY_COLUMNS} FROM api_keys WHERE fingerprint = $1"
        )))
        .bind(fingerprint)
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else { return Ok(None) };
        let key = ApiKey::try_from(row)?;
        let Some(user) = self.user(&key.user_id).await? else {
            return Ok(None);
        };
        Ok(Some((key, user)))
    }

    /// Revokes a key; returns false when there is no such key or it was already revoked.
    pub async fn revoke_key(&self, id: &str) -> Result<bool, StoreError> {
        let done = self
            .execute_write(
                Durability::Saved,
                sqlx::query(
                    "UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL",
                )
                .bind(now_ms())
                .bind(id),
            )
            .await?;
        Ok(done.rows_affected() == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_row(scopes: &str) -> KeyRow {
        KeyRow {
            id: "k".to_owned(),
            user_id: "u".to_owned(),
            name: "ci".to_owned(),
            prefix: "ek_ab".to_owned(),
            fingerprint: "f".to_owned(),
            scopes: scopes.to_owned(),
            created_at: 1,
            expires_at: 2,
            revoked_at: None,
            last_used_at: Some(3),
            request_count: 4,
            error_count: 5,
        }
    }

    async fn user_row(pool: &sqlx::AnyPool, verified: i64, restricted: i64) -> UserRow {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT 'u' AS id, 'Ada' AS name, {verified} AS verified, \
             {restricted} AS restricted, 7 AS created_at, 'ada@example.org' AS email"
        )))
        .fetch_one(pool)
        .await
        .expect("a user row")
    }

    #[tokio::test]
    async fn a_user_row_reads_its_flags_as_zero_or_not() {
        let pool = crate::store::memory_pool().await;
        let user = User::from(user_row(&pool, 1, 0).await);
        assert!(user.verified && !user.restricted);
        assert_eq!(
            (user.id.as_str(), user.name.as_str(), user.created_at),
            ("u", "Ada", 7)
        );
        assert_eq!(user.email.as_deref(), Some("ada@example.org"));
        let user = User::from(user_row(&pool, 0, 2).await);
        assert!(!user.verified && user.restricted);
    }

    #[test]
    fn a_key_row_reads_its_stored_scopes() {
        let key = ApiKey::try_from(key_row("marking:read,papers:read")).expect("known scopes");
        assert_eq!(key.scopes, [Scope::PapersRead, Scope::MarkingRead]);
        assert_eq!(
            (key.id.as_str(), key.user_id.as_str(), key.prefix.as_str()),
            ("k", "u", "ek_ab")
        );
        assert_eq!(
            (key.created_at, key.expires_at, key.revoked_at),
            (1, 2, None)
        );
        assert_eq!(
            (key.last_used_at, key.request_count, key.error_count),
            (Some(3), 4, 5)
        );
        assert!(
            ApiKey::try_from(key_row(""))
                .expect("no scopes")
                .scopes
                .is_empty()
        );
    }

    #[test]
    fn a_key_row_with_an_unknown_scope_is_corrupt() {
        let refused = ApiKey::try_from(key_row("marking:read,admin")).expect_err("unknown");
        assert!(
            matches!(&refused, StoreError::Corrupt(why) if why.contains("\"admin\"")),
            "{refused}"
        );
    }
}
