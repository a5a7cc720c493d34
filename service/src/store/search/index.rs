//! Building the search index: one question's rows made from its latest published revision (the
//! item served, its exact-match terms, its text), and [`index_questions`], which rebuilds the rows
//! of the questions a bank import touched, with PostgreSQL's word counts and the facet counts.

use std::collections::{BTreeSet, HashMap};

use examkit_bank::Revision;
use serde::Serialize;
use sqlx::FromRow;
use uuid::Uuid;

use super::sql::Sql;
use super::text::VOCABULARY_FIELDS;
use super::{BULK, kind};
use crate::store::{Backend, StoreError, WriteTx};

/// Questions indexed per batch of statements.
const BATCH: usize = 200;

/// A fixed pseudo-random position in 0..2^31 for a question id.
fn shuffle_of(question_id: &str) -> i64 {
    let hex = examkit_bank::digest::sha256_hex(question_id.as_bytes());
    i64::from_str_radix(hex.get(..8).unwrap_or("0"), 16).unwrap_or(0) >> 1
}

/// A bank facet's display label, by kind and id.
#[derive(Debug, Clone, FromRow)]
struct FacetLabel {
    kind: String,
    id: String,
    label: String,
}

/// A question's latest published revision, as the index is built from it.
#[derive(Debug, Clone, FromRow)]
struct PublishedRevision {
    question_id: String,
    revision: i64,
    content_version: String,
    scheme_version: String,
    /// The revision object of the bank format, as JSON.
    body: String,
}

/// What the index stores for one question.
struct IndexRow {
    question_id: String,
    revision: i64,
    marks: i64,
    item: String,
    terms: BTreeSet<(&'static str, String)>,
    title: String,
    summary: String,
    metadata: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Pin<'a> {
    question_id: &'a str,
    revision: i64,
    content_version: &'a str,
    scheme_version: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Item<'a> {
    pin: Pin<'a>,
    title: &'a str,
    summary: &'a str,
    marks: u32,
    difficulty: u8,
    frequency: &'a str,
    topic: &'a str,
    subtopic: &'a str,
    tags: &'a [String],
    sources: &'a [examkit_bank::Source],
    module_profiles: &'a [String],
}

fn index_row(
    question_id: &str,
    revision: i64,
    content_version: &str,
    scheme_version: &str,
    body: &str,
    labels: &HashMap<(String, String), String>,
) -> Result<IndexRow, StoreError> {
    let r: Revision = serde_json::from_str(body).map_err(|e| {
        StoreError::Corrupt(format!(
            "revision {revision} of question {question_id}: {e}"
        ))
    })?;
    let item = serde_json::to_string(&Item {
        pin: Pin {
            question_id,
            revision,
            content_version,
            scheme_version,
        },
        title: &r.title,
        summary: &r.summary,
        marks: r.marks,
        difficulty: r.difficulty,
        frequency: r.frequency.as_str(),
        topic: &r.topic,
        subtopic: &r.subtopic,
        tags: &r.tags,
        sources: &r.sources,
        module_profiles: &r.module_profiles,
    })
    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let mut terms = BTreeSet::new();
    let mut metadata: Vec<String> = Vec::new();
    let label = |kind: &str, id: &str, metadata: &mut Vec<String>| {
        let text = labels
            .get(&(kind.to_owned(), id.to_owned()))
            .cloned()
            .unwrap_or_else(|| id.replace('-', " "));
        if !metadata.contains(&text) {
            metadata.push(text);
        }
    };
    label("topic", &r.topic, &mut metadata);
    label("subtopic", &r.subtopic, &mut metadata);
    terms.insert((kind::TOPIC, r.topic.clone()));
    terms.insert((kind::SUBTOPIC, r.subtopic.clone()));
    terms.insert((kind::DIFFICULTY, r.difficulty.to_string()));
    terms.insert((kind::FREQUENCY, r.frequency.as_str().to_owned()));
    for module in &r.module_profiles {
        terms.insert((kind::MODULE, module.clone()));
        label("module", module, &mut metadata);
    }
    for source in &r.sources {
        let course = format!("{}-{}", source.level.as_str(), source.subject.as_str());
        label("course", &course, &mut metadata);
        label("board", &source.board, &mut metadata);
        terms.insert((kind::COURSE, course));
        terms.insert((kind::LEVEL, source.level.as_str().to_owned()));
        terms.insert((kind::SUBJECT, source.subject.as_str().to_owned()));
        terms.insert((kind::BOARD, source.board.clone()));
        terms.insert((kind::YEAR, source.year.to_string()));
    }
    for tag in &r.tags {
        terms.insert((kind::TAG, tag.clone()));
        metadata.push(tag.replace('-', " "));
    }
    Ok(IndexRow {
        question_id: question_id.to_owned(),
        revision,
        marks: i64::from(r.marks),
        item,
        terms,
        title: r.title,
        summary: r.summary,
        metadata: metadata.join(". "),
    })
}

/// Brings the search index up to date for `ids`, the questions a bank import has just inserted or
/// changed, inside the import's transaction (so the index never disagrees with the bank): each
/// question's rows are rebuilt from its latest published revision, and a question with none is
/// removed from the index. Facet counts are recomputed.
///
/// The search index is rebuilt here; the bank tables are already written when this is called.
pub async fn index_questions(
    tx: &mut WriteTx,
    backend: Backend,
    ids: &[Uuid],
) -> Result<(), StoreError> {
    if ids.is_empty() {
        return Ok(());
    }
    let mut labels = HashMap::new();
    for facet in sqlx::query_as::<_, FacetLabel>("SELECT kind, id, label FROM bank_facets")
        .fetch_all(&mut **tx)
        .await?
    {
        labels.insert((facet.kind, facet.id), facet.label);
    }
    let ids: Vec<String> = ids
        .iter()
        .map(|id| id.hyphenated().to_string())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // A large import counts the words of the whole index once at the end; a small one adjusts
    // the counts by the questions it touches.
    let recount = backend == Backend::Postgres && ids.len() >= BULK;
    for chunk in ids.chunks(BATCH) {
        remove(tx, backend, chunk, !recount).await?;
        let mut sql = Sql::default();
        sql.push(
            "SELECT r.question_id, r.revision, r.content_version, r.scheme_version, r.body \
             FROM bank_questions q JOIN bank_revisions r \
             ON r.question_id = q.id AND r.revision = q.latest_published \
             WHERE r.status = 'published' AND q.id IN ",
        );
        sql.text_list(chunk);
        // In id order, so SQLite's row ids (a text search's order within a relevance tier)
        // follow the question ids of one import.
        sql.push(" ORDER BY r.question_id");
        let mut rows = Vec::new();
        for published in sql
            .query_as::<PublishedRevision>()
            .fetch_all(&mut **tx)
            .await?
        {
            rows.push(index_row(
                &published.question_id,
                published.revision,
                &published.content_version,
                &published.scheme_version,
                &published.body,
                &labels,
            )?);
        }
        insert(tx, backend, &rows, !recount).await?;
    }
    if recount {
        sqlx::query("DELETE FROM search_vocabulary")
            .execute(&mut **tx)
            .await?;
        let mut sql = Sql::default();
        sql.push("INSERT INTO search_vocabulary (field, word, questions) ");
        vocabulary_counts(&mut sql, None);
        sql.query().execute(&mut **tx).await?;
    } else if backend == Backend::Postgres {
        sqlx::query("DELETE FROM search_vocabulary WHERE questions <= 0")
            .execute(&mut **tx)
            .await?;
    }
    sqlx::query("DELETE FROM search_facet_counts")
        .execute(&mut **tx)
        .await?;
    sqlx::query(
        "INSERT INTO search_facet_counts (kind, value, count) \
         SELECT kind, value, COUNT(*) FROM search_terms \
         WHERE kind IN ('course', 'board', 'module', 'topic', 'subtopic') GROUP BY kind, value",
    )
    .execute(&mut **tx)
    .await?;
    if ids.len() >= BULK {
        // A large import changes the value distributions the query planner relies on.
        sqlx::query("ANALYZE search_questions")
            .execute(&mut **tx)
            .await?;
        sqlx::query("ANALYZE search_terms")
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Removes the index rows of `ids`, and on PostgreSQL (with `count_words`) their words from
/// `search_vocabulary`'s counts.
async fn remove(
    tx: &mut WriteTx,
    backend: Backend,
    ids: &[String],
    count_words: bool,
) -> Result<(), StoreError> {
    match backend {
        Backend::Sqlite => {
            let mut sql = Sql::default();
            sql.push(
                "DELETE FROM search_text WHERE rowid IN \
                 (SELECT doc FROM search_questions WHERE question_id IN ",
            );
            sql.text_list(ids);
            sql.push(")");
            sql.query().execute(&mut **tx).await?;
        }
        Backend::Postgres if count_words => {
            let mut sql = Sql::default();
            sql.push("UPDATE search_vocabulary v SET questions = v.questions - c.n FROM (");
            vocabulary_counts(&mut sql, Some(ids));
            sql.push(") c WHERE v.field = c.field AND v.word = c.word");
            sql.query().execute(&mut **tx).await?;
        }
        Backend::Postgres => {}
    }
    for table in ["search_terms", "search_questions"] {
        let mut sql = Sql::default();
        sql.push(&format!("DELETE FROM {table} WHERE question_id IN "));
        sql.text_list(ids);
        sql.query().execute(&mut **tx).await?;
    }
    Ok(())
}

/// Inserts index rows, and on PostgreSQL (with `count_words`) adds their words to
/// `search_vocabulary`'s counts.
async fn insert(
    tx: &mut WriteTx,
    backend: Backend,
    rows: &[IndexRow],
    count_words: bool,
) -> Result<(), StoreError> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut sql = Sql::default();
    match backend {
        Backend::Sqlite => sql.push(
            "INSERT INTO search_questions (question_id, revision, shuffle, marks, item) VALUES ",
        ),
        Backend::Postgres => sql.push(
            "INSERT INTO search_questions (question_id, revision, shuffle, marks, item, document) \
             VALUES ",
        ),
    }
    for (i, row) in rows.iter().enumerate() {
        sql.push(if i > 0 { ", (" } else { "(" });
        sql.text(row.question_id.as_str());
        sql.push(", ");
        sql.int(row.revision);
        sql.push(", ");
        sql.int(shuffle_of(&row.question_id));
        sql.push(", ");
        sql.int(row.marks);
        sql.push(", ");
        sql.text(row.item.as_str());
        if backend == Backend::Postgres {
            sql.push(", setweight(to_tsvector('english', ");
            sql.text(row.title.as_str());
            sql.push("), 'A') || setweight(to_tsvector('english', ");
            sql.text(row.summary.as_str());
            sql.push("), 'B') || setweight(to_tsvector('english', ");
            sql.text(row.metadata.as_str());
            sql.push("), 'C')");
        }
        sql.push(")");
    }
    sql.query().execute(&mut **tx).await?;
    if backend == Backend::Postgres && count_words {
        let ids: Vec<String> = rows.iter().map(|r| r.question_id.clone()).collect();
        let mut sql = Sql::default();
        sql.push(
            "INSERT INTO search_vocabulary (field, word, questions) SELECT field, word, n FROM (",
        );
        vocabulary_counts(&mut sql, Some(&ids));
        sql.push(
            ") c ON CONFLICT (field, word) \
             DO UPDATE SET questions = search_vocabulary.questions + excluded.questions",
        );
        sql.query().execute(&mut **tx).await?;
    }
    if backend == Backend::Sqlite {
        let mut sql = Sql::default();
        sql.push("INSERT INTO search_text (rowid, title, summary, metadata) VALUES ");
        for (i, row) in rows.iter().enumerate() {
            sql.push(if i > 0 { ", (" } else { "(" });
            sql.push("(SELECT doc FROM search_questions WHERE question_id = ");
            sql.text(row.question_id.as_str());
            sql.push("), ");
            sql.text(row.title.as_str());
            sql.push(", ");
            sql.text(row.summary.as_str());
            sql.push(", ");
            sql.text(row.metadata.as_str());
            sql.push(")");
        }
        sql.query().execute(&mut **tx).await?;
    }
    let terms: Vec<(&str, &str, &str)> = rows
        .iter()
        .flat_map(|r| {
            r.terms
                .iter()
                .map(|(k, v)| (*k, v.as_str(), r.question_id.as_str()))
        })
        .collect();
    for chunk in terms.chunks(2000) {
        let mut sql = Sql::default();
        sql.push("INSERT INTO search_terms (kind, value, question_id) VALUES ");
        for (i, (kind, value, question_id)) in chunk.iter().enumerate() {
            sql.push(if i > 0 { ", (" } else { "(" });
            sql.text(*kind);
            sql.push(", ");
            sql.text(*value);
            sql.push(", ");
            sql.text(*question_id);
            sql.push(")");
        }
        sql.query().execute(&mut **tx).await?;
    }
    Ok(())
}

/// PostgreSQL: a query of `(field, word, n)` rows: for each text vector, each word in the vectors
/// of the indexed questions `ids` (all of them for `None`), and how many of them hold it.
fn vocabulary_counts(sql: &mut Sql, ids: Option<&[String]>) {
    for (i, field) in VOCABULARY_FIELDS.into_iter().enumerate() {
        if i > 0 {
            sql.push(" UNION ALL ");
        }
        sql.push("SELECT '");
        sql.push(field);
        sql.push("' AS field, u.lexeme AS word, count(*) AS n FROM search_questions s, unnest(s.");
        sql.push(field);
        sql.push(") u");
        if let Some(ids) = ids {
            sql.push(" WHERE s.question_id IN ");
            sql.text_list(ids);
        }
        sql.push(" GROUP BY u.lexeme");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_positions_are_stable_and_in_range() {
        let a = shuffle_of("6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f");
        assert_eq!(a, shuffle_of("6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f"));
        assert!((0..1 << 31).contains(&a));
        assert_ne!(a, shuffle_of("00000000-0000-4000-8000-000000000000"));
    }
}
