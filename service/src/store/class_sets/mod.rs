//! Class sets and their copies (see `crate::class_sets`). A set's PDF is kept like a revision's
//! exports: in the database, or in the object store with the row naming it.
//!
//! - this file holds the sets and their copies;
//! - [`app`] reads what the app's list of class sets shows of every set at once;
//! - [`stacks`] holds a set's scanned stack: its files, what indexing read on each page, and what
//!   people decided about it;
//! - [`names`] holds the names students wrote on their covers, as the vision-model marker read
//!   them;
//! - [`scripts`] holds the scripts: one automated-marking session per copy with pages, made from
//!   the stack.

pub mod app;
pub mod names;
pub mod scripts;
pub mod stacks;

use crate::store::words::StoredFlag;
use crate::store::{Store, StoreError};

/// A class set to save.
#[derive(Debug, Clone)]
pub struct NewSetRow<'a> {
    /// The set's id (the print run of its copy codes).
    pub id: &'a str,
    /// The account.
    pub user_id: &'a str,
    /// The paper and the revision printed.
    pub paper_id: &'a str,
    /// The revision.
    pub revision: i64,
    /// The set's title.
    pub title: &'a str,
    /// Whether the copies were made from a roster.
    pub named: bool,
    /// The question paper's pages.
    pub paper_pages: i64,
    /// The pages each copy takes in the PDF.
    pub pages_per_copy: i64,
    /// The copies in print order.
    pub copies: &'a [CopyRow],
    /// When it was made (Unix milliseconds).
    pub created_at: i64,
}

/// One copy of a set.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct CopyRow {
    /// The copy number, 1 to 300.
    pub copy: i64,
    /// The student it was printed for, on a named copy.
    pub name: Option<String>,
    /// That student's candidate number.
    pub candidate_number: Option<String>,
}

/// A saved class set, read from [`SET_COLUMNS`].
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SetRow {
    /// The set's id.
    pub id: String,
    /// The paper printed.
    pub paper_id: String,
    /// Its revision.
    pub revision: i64,
    /// The set's title.
    pub title: String,
    /// How many copies.
    pub copies: i64,
    /// Whether the copies were made from a roster (stored as 1 or 0).
    #[sqlx(try_from = "StoredFlag")]
    pub named: bool,
    /// The question paper's pages.
    pub paper_pages: i64,
    /// The pages each copy takes in the PDF.
    pub pages_per_copy: i64,
    /// The PDF's size in bytes.
    pub pdf_size: i64,
    /// When it was made (Unix milliseconds).
    pub created_at: i64,
    /// The session holding its scanned stack, once a file of it was uploaded.
    pub stack_session_id: Option<String>,
}

pub(super) const SET_COLUMNS: &str = "id, paper_id, revision, title, copies, named, paper_pages, \
                           pages_per_copy, pdf_size, created_at, stack_session_id";

/// The most class sets one list shows, newest first.
pub const LIST_LIMIT: i64 = 200;

impl Store {
    /// Saves a class set, its copies and its PDF in one transaction.
    pub async fn create_class_set(
        &self,
        set: &NewSetRow<'_>,
        pdf: Vec<u8>,
    ) -> Result<(), StoreError> {
        let size = i64::try_from(pdf.len()).unwrap_or(i64::MAX);
        let kept = self.keep(pdf).await?;
        let mut tx = self.begin_write().await?;
        Store::hold_object(&mut tx, &kept).await?;
        sqlx::query(
            "INSERT INTO class_sets (id, user_id, paper_id, revision, title, copies, named, \
             paper_pages, pages_per_copy, pdf, pdf_object, pdf_size, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        )
        .bind(set.id)
        .bind(set.user_id)
        .bind(set.paper_id)
        .bind(set.revision)
        .bind(set.title)
        .bind(i64::try_from(set.copies.len()).unwrap_or(i64::MAX))
        .bind(i64::from(set.named))
        .bind(set.paper_pages)
        .bind(set.pages_per_copy)
        .bind(kept.inline())
        .bind(kept.object())
        .bind(size)
        .bind(set.created_at)
        .execute(&mut *tx)
        .await?;
        for copy in set.copies {
            sqlx::query(
                "INSERT INTO class_set_copies (class_set_id, copy, name, candidate_number) \
                 VALUES ($1, $2, $3, $4)",
            )
            .bind(set.id)
            .bind(copy.copy)
            .bind(copy.name.as_deref())
            .bind(copy.candidate_number.as_deref())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// A class set of this account; `None` when it does not exist or is another account's.
    pub async fn class_set(&self, user_id: &str, id: &str) -> Result<Option<SetRow>, StoreError> {
        Ok(sqlx::query_as::<_, SetRow>(sqlx::AssertSqlSafe(format!(
            "SELECT {SET_COLUMNS} FROM class_sets WHERE user_id = $1 AND id = $2"
        )))
        .bind(user_id)
        .bind(id)
        .fetch_optional(self.pool())
        .await?)
    }

    /// The account's class sets, newest first, at most [`LIST_LIMIT`].
    pub async fn class_sets(&self, user_id: &str) -> Result<Vec<SetRow>, StoreError> {
        Ok(sqlx::query_as::<_, SetRow>(sqlx::AssertSqlSafe(format!(
            "SELECT {SET_COLUMNS} FROM class_sets WHERE user_id = $1 \
             ORDER BY created_at DESC, id LIMIT $2"
        )))
        .bind(user_id)
        .bind(LIST_LIMIT)
        .fetch_all(self.pool())
        .await?)
    }

    /// The copies of a set, in copy order.
    pub async fn class_set_copies(&self, set_id: &str) -> Result<Vec<CopyRow>, StoreError> {
        Ok(sqlx::query_as::<_, CopyRow>(
            "SELECT copy, name, candidate_number FROM class_set_copies \
             WHERE class_set_id = $1 ORDER BY copy",
        )
        .bind(set_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// A set's PDF, whole; `None` when the set is not this account's.
    pub async fn class_set_pdf(
        &self,
        user_id: &str,
        id: &str,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let row =
            sqlx::query("SELECT pdf, pdf_object FROM class_sets WHERE user_id = $1 AND id = $2")
                .bind(user_id)
                .bind(id)
                .fetch_optional(self.pool())
                .await?;
        self.read_kept(row.as_ref(), "pdf", "pdf_object").await
    }

    /// Bytes `range` of a set's PDF (within its size), read without loading the rest.
    pub async fn class_set_pdf_range(
        &self,
        user_id: &str,
        id: &str,
        range: std::ops::Range<u64>,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let start = i64::try_from(range.start).unwrap_or(i64::MAX);
        let length = i64::try_from(range.end.saturating_sub(range.start)).unwrap_or(i64::MAX);
        let row = sqlx::query(
            "SELECT substr(pdf, CAST($3 AS INTEGER), CAST($4 AS INTEGER)) AS part, pdf_object AS object \
             FROM class_sets WHERE user_id = $1 AND id = $2",
        )
        .bind(user_id)
        .bind(id)
        .bind(start.saturating_add(1))
        .bind(length)
        .fetch_optional(self.pool())
        .await?;
        self.kept_range(row.as_ref(), range).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A set's row reads by its column names, `named` from the integer stored.
    #[tokio::test]
    async fn a_set_reads_from_its_columns() {
        let pool = crate::store::memory_pool().await;
        let read = |named: i64, session: Option<&'static str>| {
            sqlx::query_as::<_, SetRow>(
                "SELECT 'set-1' AS id, 'paper-1' AS paper_id, 3 AS revision, 'Year 9' AS title, \
                 30 AS copies, $1 AS named, 4 AS paper_pages, 6 AS pages_per_copy, \
                 1024 AS pdf_size, 1700000000000 AS created_at, $2 AS stack_session_id",
            )
            .bind(named)
            .bind(session)
            .fetch_one(&pool)
        };
        let set = read(1, Some("stack-1")).await.expect("a set");
        assert_eq!(
            set,
            SetRow {
                id: "set-1".to_owned(),
                paper_id: "paper-1".to_owned(),
                revision: 3,
                title: "Year 9".to_owned(),
                copies: 30,
                named: true,
                paper_pages: 4,
                pages_per_copy: 6,
                pdf_size: 1024,
                created_at: 1_700_000_000_000,
                stack_session_id: Some("stack-1".to_owned()),
            }
        );
        let unnamed = read(0, None).await.expect("a set");
        assert!(!unnamed.named);
        assert_eq!(unnamed.stack_session_id, None);
        assert!(read(2, None).await.expect("a set").named);
    }

    /// `named` holding text is a decode error, not a guess.
    #[tokio::test]
    async fn a_flag_of_text_is_refused() {
        let pool = crate::store::memory_pool().await;
        let refused = sqlx::query_scalar::<_, StoredFlag>("SELECT 'yes'")
            .fetch_one(&pool)
            .await;
        assert!(refused.is_err(), "{refused:?}");
        let flag: StoredFlag = sqlx::query_scalar("SELECT 1")
            .fetch_one(&pool)
            .await
            .expect("a flag");
        assert!(bool::from(flag));
    }
}
