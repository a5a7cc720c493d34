//! Favourites: questions an account has starred, set with `examkit favourites add|remove`.

use uuid::Uuid;

use super::{Durability, Store, StoreError, now_ms};

/// Why a favourite could not be set or cleared.
#[derive(Debug, thiserror::Error)]
pub enum FavouriteError {
    /// No account with this id.
    #[error("no user with id {0}")]
    UnknownUser(String),
    /// No question with this id in the bank.
    #[error("no question with id {0} in the bank")]
    UnknownQuestion(String),
    /// A database error.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for FavouriteError {
    fn from(e: sqlx::Error) -> Self {
        FavouriteError::Store(StoreError::Database(e))
    }
}

impl Store {
    async fn check_favourite_ids(
        &self,
        user_id: &str,
        question_id: &str,
    ) -> Result<String, FavouriteError> {
        let user = sqlx::query("SELECT id FROM users WHERE id = $1")
            .bind(user_id)
            .fetch_optional(self.pool())
            .await?;
        if user.is_none() {
            return Err(FavouriteError::UnknownUser(user_id.to_owned()));
        }
        // Question ids are stored in canonical lowercase form.
        let Ok(id) = Uuid::parse_str(question_id) else {
            return Err(FavouriteError::UnknownQuestion(question_id.to_owned()));
        };
        let id = id.hyphenated().to_string();
        let question = sqlx::query("SELECT id FROM bank_questions WHERE id = $1")
            .bind(&id)
            .fetch_optional(self.pool())
            .await?;
        if question.is_none() {
            return Err(FavouriteError::UnknownQuestion(question_id.to_owned()));
        }
        Ok(id)
    }

    /// Stars a question for an account; `Ok(false)` when it was already a favourite.
    pub async fn add_favourite(
        &self,
        user_id: &str,
        question_id: &str,
    ) -> Result<bool, FavouriteError> {
        let id = self.check_favourite_ids(user_id, question_id).await?;
        let done = self
            .execute_write(
                Durability::Saved,
                sqlx::query(
                    "INSERT INTO favourites (user_id, question_id, created_at) VALUES ($1, $2, $3) \
             ON CONFLICT (user_id, question_id) DO NOTHING",
                )
                .bind(user_id)
                .bind(&id)
                .bind(now_ms()),
            )
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Unstars a question; `Ok(false)` when it was not a favourite.
    pub async fn remove_favourite(
        &self,
        user_id: &str,
        question_id: &str,
    ) -> Result<bool, FavouriteError> {
        let id = self.check_favourite_ids(user_id, question_id).await?;
        let done = self
            .execute_write(
                Durability::Saved,
                sqlx::query("DELETE FROM favourites WHERE user_id = $1 AND question_id = $2")
                    .bind(user_id)
                    .bind(&id),
            )
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// An account's favourite question ids, oldest first.
    pub async fn favourites(&self, user_id: &str) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar::<_, String>(
            "SELECT question_id FROM favourites WHERE user_id = $1 ORDER BY created_at, question_id",
        )
        .bind(user_id)
        .fetch_all(self.pool())
        .await?)
    }
}
