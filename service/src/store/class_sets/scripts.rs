//! The scripts of a class set: one automated-marking session per copy with pages, made from the
//! stack (see `crate::class_sets::scripts`).
//!
//! A script's session is an ordinary session made from the set's paper revision, so review,
//! revisions and the app's marking by question read it as any other. Its work is the stack's own
//! pages: a work asset per stack file the script draws on, a view of that file (its bytes are the
//! file's, through `assets.source_asset_id`), holding a copy of the index of the script's pages
//! only. Its mark scheme is the revision's, stored once per start and viewed by every script.
//! Only the scheme's pages are indexed, and the questions are placed when they are, as for a
//! session made from a paper.

use crate::class_sets::rules;
use crate::store::automated::PaperBinding;
use crate::store::automated::allowance::Allowance;
use crate::store::automated::questions::error_json;
use crate::store::job_kind::{IndexPage, JobKind};
use crate::store::objects::Kept;
use crate::store::words::{IndexingState, QuestionStatus};
use crate::store::{Store, StoreError, WriteTx, now_ms};

/// A script as stored, read from [`SCRIPT_COLUMNS`].
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ScriptRow {
    /// The copy.
    pub copy: i64,
    /// Its marking session.
    pub session_id: String,
    /// The stack pages it was made from, JSON (see `crate::class_sets::scripts`).
    pub pages_json: String,
    /// The paper pages that were not scanned, JSON array.
    pub missing_json: String,
    /// When it was made (Unix milliseconds).
    pub created_at: i64,
    /// When a later script of the copy replaced it, or the copy was said absent.
    pub superseded_at: Option<i64>,
}

/// A script with its session's progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptProgress {
    /// The script.
    pub script: ScriptRow,
    /// The session's indexing state (its scheme pages are indexed before questions are placed).
    pub indexing_state: Option<String>,
    /// The session's jobs still queued or running (indexing, placing, marking).
    pub pending_jobs: i64,
    /// The session's questions by status: status, count, and the sums of awarded, possible and
    /// maximum marks.
    pub questions: Vec<(String, i64, i64, i64, i64)>,
}

/// One stack page of a new script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptPageRef {
    /// The stack file.
    pub asset_id: String,
    /// Its page.
    pub page: i64,
    /// The questions the page answers when a person said so (an extra sheet), as indexing's
    /// labels JSON; `None` keeps what indexing found.
    pub labels_json: Option<String>,
}

/// A script to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewScript {
    /// The copy.
    pub copy: i64,
    /// Its session's title.
    pub title: String,
    /// Its pages, in script order.
    pub pages: Vec<ScriptPageRef>,
    /// What it was made from, JSON.
    pub pages_json: String,
    /// The paper pages not scanned, JSON array.
    pub missing_json: String,
    /// Made again even where the copy's current script has the same pages (its marker was held
    /// back from it).
    pub again: bool,
}

/// The revision's mark scheme, as every script cites it.
#[derive(Debug, Clone)]
pub struct SchemeFile<'a> {
    /// Its file name.
    pub name: &'a str,
    /// The PDF.
    pub bytes: &'a [u8],
    /// Its pages.
    pub page_count: i64,
}

/// What starting scripts did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartScripts {
    /// The scripts are made and their scheme pages queued.
    Started,
    /// Indexing their scheme pages would exceed today's page allowance.
    AllowanceExceeded {
        /// Pages used today.
        used: i64,
        /// Pages these scripts need.
        needed: i64,
        /// Seconds until the allowance renews.
        retry_after: i64,
    },
}

/// What every script of one start is made with.
#[derive(Clone, Copy)]
struct Made<'a> {
    user_id: &'a str,
    set_id: &'a str,
    paper: &'a PaperBinding,
    scheme: &'a SchemeFile<'a>,
    kept: &'a Kept,
    /// The scheme's SHA-256, hex, and its size in bytes.
    sha256: &'a str,
    size: i64,
    max_attempts: i64,
    now: i64,
}

const SCRIPT_COLUMNS: &str =
    "copy, session_id, pages_json, missing_json, created_at, superseded_at";

/// A current script joined with its session's indexing state and unfinished jobs.
#[derive(Debug, Clone, sqlx::FromRow)]
struct ScriptSessionColumns {
    #[sqlx(flatten)]
    script: ScriptRow,
    indexing_state: Option<IndexingState>,
    pending_jobs: i64,
}

/// The questions of one status in one script's session, with the sums of their marks.
#[derive(Debug, Clone, sqlx::FromRow)]
struct QuestionCountColumns {
    session_id: String,
    status: QuestionStatus,
    n: i64,
    awarded: i64,
    possible: i64,
    max_marks: i64,
}

impl QuestionCountColumns {
    /// The count as [`ScriptProgress::questions`] holds it.
    fn entry(&self) -> (String, i64, i64, i64, i64) {
        (
            self.status.as_str().to_owned(),
            self.n,
            self.awarded,
            self.possible,
            self.max_marks,
        )
    }
}

impl Store {
    /// Makes those of `scripts` of the set `set_id` that are not its current scripts already
    /// (same copy, same pages), and supersedes the scripts they replace and those of the copies
    /// in `gone` (as [`rules::start`] decides), in one transaction that holds the set's row, so
    /// concurrent starts make each script once. A new script is a started session of origin
    /// `automated` made from `paper`, with views of its stack files, the index of its pages, and
    /// the mark scheme, whose pages are queued for indexing within today's allowance. A
    /// superseded script's session has its unfinished jobs and questions cancelled. A refused
    /// start changes nothing.
    #[allow(clippy::too_many_arguments)]
    pub async fn start_scripts(
        &self,
        user_id: &str,
        set_id: &str,
        paper: &PaperBinding,
        scheme: &SchemeFile<'_>,
        scripts: &[NewScript],
        gone: &[i64],
        allowance: &Allowance,
        max_attempts: i64,
    ) -> Result<StartScripts, StoreError> {
        // The scheme is stored only when a script may name it.
        let kept = match scripts.is_empty() {
            true => Kept::Inline(Vec::new()),
            false => self.keep(scheme.bytes.to_vec()).await?,
        };
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        // Holds the set's row (PostgreSQL) until commit: a concurrent start waits, then sees
        // what this one made.
        sqlx::query("UPDATE class_sets SET stack_session_id = stack_session_id WHERE id = $1")
            .bind(set_id)
            .execute(&mut *tx)
            .await?;
        let current = sqlx::query_as::<_, ScriptRow>(sqlx::AssertSqlSafe(format!(
            "SELECT {SCRIPT_COLUMNS} FROM class_set_scripts \
             WHERE class_set_id = $1 AND superseded_at IS NULL"
        )))
        .bind(set_id)
        .fetch_all(&mut *tx)
        .await?;
        let asked: Vec<rules::Asked<'_>> = scripts
            .iter()
            .map(|s| rules::Asked {
                script: rules::ScriptKey {
                    copy: s.copy,
                    pages_json: &s.pages_json,
                },
                again: s.again,
            })
            .collect();
        let keys: Vec<rules::ScriptKey<'_>> = current
            .iter()
            .map(|c| rules::ScriptKey {
                copy: c.copy,
                pages_json: &c.pages_json,
            })
            .collect();
        let start = rules::start(&keys, &asked, gone, scheme.page_count);
        let needed = start.pages_needed;
        if let Some((used, retry_after)) =
            Store::reserve_pages(&mut tx, user_id, needed, allowance, now).await?
        {
            tx.rollback().await?;
            return Ok(StartScripts::AllowanceExceeded {
                used,
                needed,
                retry_after,
            });
        }
        for &old in &start.supersede {
            Store::supersede(&mut tx, &current[old].session_id, now).await?;
        }
        let made = Made {
            user_id,
            set_id,
            paper,
            scheme,
            kept: &kept,
            sha256: &crate::auth::sha256_hex(scheme.bytes),
            size: i64::try_from(scheme.bytes.len()).unwrap_or(i64::MAX),
            max_attempts,
            now,
        };
        let mut scheme_source: Option<String> = None;
        for &i in &start.make {
            Store::make_script(&mut tx, &made, &scripts[i], &mut scheme_source).await?;
        }
        tx.commit().await?;
        Ok(StartScripts::Started)
    }

    /// Makes one script of a start: its session, its mark scheme (stored with the first script
    /// of the start, `scheme_source`, and viewed by the others), its stack pages, the indexing
    /// of its scheme's pages, and its row.
    async fn make_script(
        tx: &mut WriteTx,
        made: &Made<'_>,
        script: &NewScript,
        scheme_source: &mut Option<String>,
    ) -> Result<(), StoreError> {
        let Made {
            user_id,
            set_id,
            paper,
            scheme,
            kept,
            sha256,
            size,
            max_attempts,
            now,
        } = *made;
        let session_id = uuid::Uuid::new_v4().to_string();
        sqlx::query(
            "INSERT INTO marking_sessions (id, user_id, title, origin, status, created_at, \
             updated_at, indexing_state, pages_total, pages_done, started_at, paper_id, \
             paper_revision, scheme_json) \
             VALUES ($1, $2, $3, $4, 'started', $5, $5, 'queued', $6, 0, $5, $7, $8, $9)",
        )
        .bind(&session_id)
        .bind(user_id)
        .bind(&script.title)
        .bind(crate::store::automated::ORIGIN.as_str())
        .bind(now)
        .bind(scheme.page_count)
        .bind(&paper.paper_id)
        .bind(paper.revision)
        .bind(&paper.scheme_json)
        .execute(&mut **tx)
        .await?;
        // The mark scheme: stored with the first script, viewed by the others.
        let scheme_id = uuid::Uuid::new_v4().to_string();
        sqlx::query(
            "INSERT INTO assets (id, session_id, user_id, kind, name, content_type, \
             size_bytes, page_count, sha256, created_at, source_asset_id) \
             VALUES ($1, $2, $3, 'scheme', $4, 'application/pdf', $5, $6, $7, $8, $9)",
        )
        .bind(&scheme_id)
        .bind(&session_id)
        .bind(user_id)
        .bind(scheme.name)
        .bind(size)
        .bind(scheme.page_count)
        .bind(sha256)
        .bind(now)
        .bind(&*scheme_source)
        .execute(&mut **tx)
        .await?;
        if scheme_source.is_none() {
            Store::hold_object(tx, kept).await?;
            sqlx::query("INSERT INTO asset_blobs (asset_id, bytes, object) VALUES ($1, $2, $3)")
                .bind(&scheme_id)
                .bind(kept.inline())
                .bind(kept.object())
                .execute(&mut **tx)
                .await?;
            *scheme_source = Some(scheme_id.clone());
        }
        Store::copy_script_pages(tx, user_id, &session_id, &script.pages, now).await?;
        let jobs: Vec<JobKind> = (1..=scheme.page_count)
            .map(|page| {
                JobKind::IndexPage(IndexPage {
                    asset_id: scheme_id.clone(),
                    page,
                    placed_as: None,
                })
            })
            .collect();
        Store::enqueue_jobs(tx, &session_id, user_id, &jobs, max_attempts, now).await?;
        sqlx::query(
            "INSERT INTO class_set_scripts (class_set_id, copy, session_id, pages_json, \
             missing_json, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(set_id)
        .bind(script.copy)
        .bind(&session_id)
        .bind(&script.pages_json)
        .bind(&script.missing_json)
        .bind(now)
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// Gives a script's session `session_id` a view of each stack file its `pages` draw on, in
    /// the order of its pages, holding a copy of the index of those pages only.
    async fn copy_script_pages(
        tx: &mut WriteTx,
        user_id: &str,
        session_id: &str,
        pages: &[ScriptPageRef],
        now: i64,
    ) -> Result<(), StoreError> {
        let mut views: Vec<(String, String)> = Vec::new();
        for page in pages {
            let view = match views.iter().find(|(source, _)| source == &page.asset_id) {
                Some((_, view)) => view.clone(),
                None => {
                    let view = uuid::Uuid::new_v4().to_string();
                    let made = sqlx::query(
                        "INSERT INTO assets (id, session_id, user_id, kind, name, \
                         content_type, size_bytes, page_count, sha256, created_at, \
                         source_asset_id) \
                         SELECT $1, $2, user_id, 'work', name, content_type, size_bytes, \
                         page_count, sha256, $3, id FROM assets WHERE id = $4 AND user_id = $5",
                    )
                    .bind(&view)
                    .bind(session_id)
                    .bind(now)
                    .bind(&page.asset_id)
                    .bind(user_id)
                    .execute(&mut **tx)
                    .await?;
                    if made.rows_affected() != 1 {
                        return Err(StoreError::Corrupt(format!(
                            "stack file {} is not stored",
                            page.asset_id
                        )));
                    }
                    views.push((page.asset_id.clone(), view.clone()));
                    view
                }
            };
            let copied = sqlx::query(
                "INSERT INTO asset_pages (asset_id, page, session_id, state, error, \
                 orientation, text_source, width_px, height_px, role, role_reason, code_json, \
                 labels_json, words_json, compare_json, indexed_at, image, image_object) \
                 SELECT $1, page, $2, state, error, orientation, text_source, width_px, \
                 height_px, role, role_reason, code_json, COALESCE($3, labels_json), \
                 words_json, compare_json, indexed_at, image, image_object \
                 FROM asset_pages WHERE asset_id = $4 AND page = $5",
            )
            .bind(&view)
            .bind(session_id)
            .bind(&page.labels_json)
            .bind(&page.asset_id)
            .bind(page.page)
            .execute(&mut **tx)
            .await?;
            if copied.rows_affected() != 1 {
                return Err(StoreError::Corrupt(format!(
                    "page {} of stack file {} is not indexed",
                    page.page, page.asset_id
                )));
            }
        }
        Ok(())
    }

    /// Supersedes the script marked by `session_id`: its session's queued and running jobs and
    /// questions are cancelled (a worker holding one loses its lease, and saves nothing).
    async fn supersede(tx: &mut WriteTx, session_id: &str, now: i64) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE marking_questions SET status = 'cancelled', cancel_requested = 1, \
             error_json = $1, updated_at = $2 \
             WHERE session_id = $3 AND status IN ('queued', 'running')",
        )
        .bind(error_json(
            crate::marking::failure::FailureCode::Cancelled.as_str(),
            "the script was made again from the class set's stack, or its copy said absent",
            None,
        ))
        .bind(now)
        .bind(session_id)
        .execute(&mut **tx)
        .await?;
        sqlx::query(
            "UPDATE marking_jobs SET state = 'cancelled', lease_token = NULL, \
             lease_expires = NULL, updated_at = $1, finished_at = $1 \
             WHERE session_id = $2 AND state IN ('queued', 'running')",
        )
        .bind(now)
        .bind(session_id)
        .execute(&mut **tx)
        .await?;
        sqlx::query("UPDATE class_set_scripts SET superseded_at = $1 WHERE session_id = $2")
            .bind(now)
            .bind(session_id)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    /// Gives the current scripts of a set new titles (copy, title): after a person says who
    /// wrote a copy, its script's session is named for its student. A copy with no current
    /// script is left alone.
    pub async fn retitle_scripts(
        &self,
        set_id: &str,
        titles: &[(i64, String)],
    ) -> Result<(), StoreError> {
        if titles.is_empty() {
            return Ok(());
        }
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        for (copy, title) in titles {
            sqlx::query(
                "UPDATE marking_sessions SET title = $1, updated_at = $2                  WHERE title <> $1 AND id IN (SELECT session_id FROM class_set_scripts                      WHERE class_set_id = $3 AND copy = $4 AND superseded_at IS NULL)",
            )
            .bind(title)
            .bind(now)
            .bind(set_id)
            .bind(copy)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Whether an asset is a view of another (a script's work file, a view of a stack file).
    pub async fn is_view(&self, asset_id: &str) -> Result<bool, StoreError> {
        let source: Option<Option<String>> =
            sqlx::query_scalar("SELECT source_asset_id FROM assets WHERE id = $1")
                .bind(asset_id)
                .fetch_optional(self.pool())
                .await?;
        Ok(source.flatten().is_some())
    }

    /// Whether a page of an asset has an index: of a view, exactly the pages it holds.
    pub async fn page_indexed(&self, asset_id: &str, page: u32) -> Result<bool, StoreError> {
        let found: Option<i64> =
            sqlx::query_scalar("SELECT page FROM asset_pages WHERE asset_id = $1 AND page = $2")
                .bind(asset_id)
                .bind(i64::from(page))
                .fetch_optional(self.pool())
                .await?;
        Ok(found.is_some())
    }

    /// The current scripts of a set, in copy order.
    pub async fn class_set_scripts(&self, set_id: &str) -> Result<Vec<ScriptRow>, StoreError> {
        Ok(sqlx::query_as::<_, ScriptRow>(sqlx::AssertSqlSafe(format!(
            "SELECT {SCRIPT_COLUMNS} FROM class_set_scripts \
             WHERE class_set_id = $1 AND superseded_at IS NULL ORDER BY copy"
        )))
        .bind(set_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// The script a session marks, if it marks one (current or superseded).
    pub async fn script_of_session(
        &self,
        session_id: &str,
    ) -> Result<Option<ScriptRow>, StoreError> {
        Ok(sqlx::query_as::<_, ScriptRow>(sqlx::AssertSqlSafe(format!(
            "SELECT {SCRIPT_COLUMNS} FROM class_set_scripts WHERE session_id = $1"
        )))
        .bind(session_id)
        .fetch_optional(self.pool())
        .await?)
    }

    /// The current scripts of a set with their sessions' progress, in copy order.
    pub async fn script_progress(&self, set_id: &str) -> Result<Vec<ScriptProgress>, StoreError> {
        let rows = sqlx::query_as::<_, ScriptSessionColumns>(
            "SELECT c.copy AS copy, c.session_id AS session_id, c.pages_json AS pages_json, \
             c.missing_json AS missing_json, c.created_at AS created_at, \
             c.superseded_at AS superseded_at, s.indexing_state AS indexing_state, \
             (SELECT COUNT(*) FROM marking_jobs j WHERE j.session_id = c.session_id \
                 AND j.state IN ('queued', 'running')) AS pending_jobs \
             FROM class_set_scripts c JOIN marking_sessions s ON s.id = c.session_id \
             WHERE c.class_set_id = $1 AND c.superseded_at IS NULL ORDER BY c.copy",
        )
        .bind(set_id)
        .fetch_all(self.pool())
        .await?;
        let counts = sqlx::query_as::<_, QuestionCountColumns>(
            "SELECT q.session_id AS session_id, q.status AS status, COUNT(*) AS n, \
             CAST(COALESCE(SUM(q.awarded), 0) AS BIGINT) AS awarded, \
             CAST(COALESCE(SUM(q.possible), 0) AS BIGINT) AS possible, \
             CAST(COALESCE(SUM(q.max_marks), 0) AS BIGINT) AS max_marks \
             FROM marking_questions q JOIN class_set_scripts c ON c.session_id = q.session_id \
             WHERE c.class_set_id = $1 AND c.superseded_at IS NULL \
             GROUP BY q.session_id, q.status ORDER BY q.status",
        )
        .bind(set_id)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| ScriptProgress {
                questions: counts
                    .iter()
                    .filter(|count| count.session_id == row.script.session_id)
                    .map(QuestionCountColumns::entry)
                    .collect(),
                indexing_state: row.indexing_state.map(|state| state.as_str().to_owned()),
                pending_jobs: row.pending_jobs,
                script: row.script,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A question count keeps its stored status text, and a status outside the set is refused.
    #[tokio::test]
    async fn a_question_count_reads_its_status() {
        let pool = crate::store::memory_pool().await;
        let count = sqlx::query_as::<_, QuestionCountColumns>(
            "SELECT 's-1' AS session_id, 'needs_review' AS status, 2 AS n, 3 AS awarded, \
             4 AS possible, 5 AS max_marks",
        )
        .fetch_one(&pool)
        .await
        .expect("a count");
        assert_eq!(count.entry(), ("needs_review".to_owned(), 2, 3, 4, 5));
        let refused = sqlx::query_as::<_, QuestionCountColumns>(
            "SELECT 's-1' AS session_id, 'archived' AS status, 1 AS n, 0 AS awarded, \
             0 AS possible, 0 AS max_marks",
        )
        .fetch_one(&pool)
        .await;
        assert!(refused.is_err(), "{refused:?}");
    }
}
