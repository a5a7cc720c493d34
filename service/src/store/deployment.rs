//! Which deployment a database is, and the object-store prefix it owns.
//!
//! Every database gets a deployment id once: a random UUID in `database_meta`, written the first
//! time it is asked for and never changed (a backup and its restore carry it, as do `pg_dump` and
//! `pg_restore`). An object store's prefix is bound to the first database that uses it: its
//! binding object ([`super::objects::BINDING`]) names that database's id. Binding is create-only,
//! then read back, so of two databases binding one prefix at once one wins and the other is
//! refused. Binding happens when a command opens the store with `--asset-store`, when
//! `examkit assets migrate --to` writes to a new store, and before every sweep: a database never
//! writes to, moves files into or sweeps a prefix bound to another.

use super::objects::{BINDING, Objects};
use super::{Durability, Store, StoreError};

/// The `database_meta` row holding the deployment id.
const DEPLOYMENT_ID: &str = "deployment_id";

impl Store {
    /// This database's deployment id, made (a random UUID) the first time it is asked for.
    pub async fn deployment_id(&self) -> Result<String, StoreError> {
        if let Some(id) = self.stored_deployment_id().await? {
            return Ok(id);
        }
        // Two processes opening a new database at once: the first insert wins, both read it.
        self.execute_write(
            Durability::Saved,
            sqlx::query(
                "INSERT INTO database_meta (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
            )
            .bind(DEPLOYMENT_ID)
            .bind(uuid::Uuid::new_v4().to_string()),
        )
        .await?;
        self.stored_deployment_id().await?.ok_or_else(|| {
            StoreError::Corrupt("the deployment id was written but cannot be read".into())
        })
    }

    /// Gives this database a new deployment id, for a copy that is to run beside the database it
    /// was copied from (a restore as a new deployment): it binds no object-store prefix the
    /// original has bound. Returns the id it had, if any, and the new one.
    pub async fn renew_deployment_id(&self) -> Result<(Option<String>, String), StoreError> {
        let old = self.stored_deployment_id().await?;
        let new = uuid::Uuid::new_v4().to_string();
        self.execute_write(
            Durability::Saved,
            sqlx::query(
                "INSERT INTO database_meta (name, value) VALUES ($1, $2) \
                 ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            )
            .bind(DEPLOYMENT_ID)
            .bind(&new),
        )
        .await?;
        Ok((old, new))
    }

    async fn stored_deployment_id(&self) -> Result<Option<String>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT value FROM database_meta WHERE name = $1")
                .bind(DEPLOYMENT_ID)
                .fetch_optional(self.pool())
                .await?,
        )
    }

    /// Binds `objects`'s prefix to this database, or checks that it is bound to it already: an
    /// error naming both ids when another database has it ([`StoreError::ForeignObjects`]), and
    /// [`StoreError::Objects`] when the store cannot be read.
    pub async fn bind_objects(&self, objects: &Objects) -> Result<(), StoreError> {
        let ours = self.deployment_id().await?;
        let found = match objects.bound_to().await? {
            Some(found) => found,
            None => {
                objects.bind(&ours).await?;
                objects.bound_to().await?.ok_or_else(|| {
                    StoreError::Objects(format!(
                        "{BINDING} was written to {} but cannot be read back",
                        objects.url()
                    ))
                })?
            }
        };
        if found == ours {
            Ok(())
        } else {
            Err(StoreError::ForeignObjects {
                url: objects.url().to_string(),
                ours,
                theirs: found,
            })
        }
    }

    /// Binds the configured object store, if any (see [`Store::bind_objects`]).
    pub async fn bind_configured_objects(&self) -> Result<(), StoreError> {
        match self.objects() {
            Some(objects) => self.bind_objects(objects).await,
            None => Ok(()),
        }
    }
}
