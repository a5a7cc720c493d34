//! Writing what an import planned, inside its transaction: new rows in multi-row `INSERT`s of a
//! bounded number of parameters, then the stored rows that changed.

use examkit_bank::Revision;
use examkit_bank::digest::Digests;

use crate::store::{StoreError, WriteTx};

/// One value bound into a batched insert.
pub(super) enum Arg {
    Text(String),
    Int(i64),
    Bytes(Vec<u8>),
    NullText,
}

/// Inserts `rows` into `table` with multi-row `INSERT`s of a bounded number of parameters.
async fn insert_rows(
    tx: &mut WriteTx,
    table: &str,
    columns: &[&str],
    rows: Vec<Vec<Arg>>,
) -> Result<(), sqlx::Error> {
    const MAX_PARAMETERS: usize = 8_000;
    let per_statement = (MAX_PARAMETERS / columns.len()).max(1);
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<Vec<Arg>> = rows.by_ref().take(per_statement).collect();
        let mut sql = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
        let mut n = 0;
        for (i, _) in chunk.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            sql.push('(');
            for c in 0..columns.len() {
                if c > 0 {
                    sql.push_str(", ");
                }
                n += 1;
                sql.push_str(&format!("${n}"));
            }
            sql.push(')');
        }
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for row in chunk {
            for arg in row {
                query = match arg {
                    Arg::Text(s) => query.bind(s),
                    Arg::Int(i) => query.bind(i),
                    Arg::Bytes(b) => query.bind(b),
                    Arg::NullText => query.bind(None::<String>),
                };
            }
        }
        query.execute(&mut **tx).await?;
    }
    Ok(())
}

/// Inserts new facet options and relabels changed ones.
pub(super) async fn write_facets(
    tx: &mut WriteTx,
    facet_inserts: Vec<Vec<Arg>>,
    relabels: Vec<(&'static str, String, String)>,
) -> Result<(), StoreError> {
    insert_rows(
        tx,
        "bank_facets",
        &[
            "kind", "id", "label", "position", "topic", "level", "subject",
        ],
        facet_inserts,
    )
    .await?;
    for (kind, id, label) in relabels {
        sqlx::query("UPDATE bank_facets SET label = $1 WHERE kind = $2 AND id = $3")
            .bind(label)
            .bind(kind)
            .bind(id)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Inserts new questions, assets, revisions and the revisions' assets.
pub(super) async fn write_inserts(
    tx: &mut WriteTx,
    question_inserts: Vec<Vec<Arg>>,
    asset_inserts: Vec<Vec<Arg>>,
    revision_inserts: Vec<Vec<Arg>>,
    link_inserts: Vec<Vec<Arg>>,
) -> Result<(), StoreError> {
    // NULL latest_published binds as text; PostgreSQL needs the column's own type.
    let question_inserts: Vec<Vec<Arg>> = question_inserts;
    let (with_latest, without_latest): (Vec<_>, Vec<_>) = question_inserts
        .into_iter()
        .partition(|row| matches!(row.get(1), Some(Arg::Int(_))));
    insert_rows(
        tx,
        "bank_questions",
        &["id", "latest_published"],
        with_latest,
    )
    .await?;
    let without_latest: Vec<Vec<Arg>> = without_latest
        .into_iter()
        .map(|mut row| {
            row.truncate(1);
            row
        })
        .collect();
    insert_rows(tx, "bank_questions", &["id"], without_latest).await?;
    insert_rows(
        tx,
        "bank_assets",
        &["id", "question_id", "media_type", "sha256", "bytes"],
        asset_inserts,
    )
    .await?;
    insert_rows(
        tx,
        "bank_revisions",
        &[
            "question_id",
            "revision",
            "status",
            "digest",
            "content_version",
            "scheme_version",
            "title",
            "marks",
            "body",
            "imported_at",
        ],
        revision_inserts,
    )
    .await?;
    insert_rows(
        tx,
        "bank_revision_assets",
        &["question_id", "revision", "asset_id"],
        link_inserts,
    )
    .await?;
    Ok(())
}

/// Rewrites stored drafts and moved statuses, with their revisions' assets.
pub(super) async fn write_revision_updates(
    tx: &mut WriteTx,
    revision_updates: Vec<(String, i64, &Revision, &Digests)>,
    now: i64,
) -> Result<(), StoreError> {
    for (qid, number, revision, d) in revision_updates {
        let body = serde_json::to_string(revision)
            .map_err(|e| StoreError::Corrupt(format!("cannot serialise a revision: {e}")))?;
        sqlx::query(
            "UPDATE bank_revisions SET status = $1, digest = $2, content_version = $3, \
             scheme_version = $4, title = $5, marks = $6, body = $7, imported_at = $8 \
             WHERE question_id = $9 AND revision = $10",
        )
        .bind(revision.status.as_str())
        .bind(&d.revision_digest)
        .bind(&d.content_version)
        .bind(&d.scheme_version)
        .bind(&revision.title)
        .bind(i64::from(revision.marks))
        .bind(body)
        .bind(now)
        .bind(&qid)
        .bind(number)
        .execute(&mut **tx)
        .await?;
        sqlx::query("DELETE FROM bank_revision_assets WHERE question_id = $1 AND revision = $2")
            .bind(&qid)
            .bind(number)
            .execute(&mut **tx)
            .await?;
        let links: Vec<Vec<Arg>> = revision
            .assets
            .iter()
            .map(|a| {
                vec![
                    Arg::Text(qid.clone()),
                    Arg::Int(number),
                    Arg::Text(a.id.hyphenated().to_string()),
                ]
            })
            .collect();
        insert_rows(
            tx,
            "bank_revision_assets",
            &["question_id", "revision", "asset_id"],
            links,
        )
        .await?;
    }
    Ok(())
}

/// Moves the stored questions' latest published revisions.
pub(super) async fn write_latest(
    tx: &mut WriteTx,
    latest_updates: Vec<(String, Option<i64>)>,
) -> Result<(), StoreError> {
    for (qid, latest) in latest_updates {
        match latest {
            Some(n) => {
                sqlx::query("UPDATE bank_questions SET latest_published = $1 WHERE id = $2")
                    .bind(n)
                    .bind(qid)
                    .execute(&mut **tx)
                    .await?
            }
            None => {
                sqlx::query("UPDATE bank_questions SET latest_published = NULL WHERE id = $1")
                    .bind(qid)
                    .execute(&mut **tx)
                    .await?
            }
        };
    }
    Ok(())
}
