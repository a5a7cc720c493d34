//! The search index over the question bank, and the queries of `GET /v1/questions` and
//! `GET /v1/questions/facets`.
//!
//! The index holds one row per question that has a published revision (its latest published one):
//! `search_questions` (the result item, ready to serve, the order key, the marks and a fixed
//! pseudo-random position), `search_terms` (one row per exact-match attribute value) and the full
//! text (SQLite: the FTS5 table `search_text`; PostgreSQL: `tsvector`s of the title, of the title and
//! summary, and of everything, each with a GIN index).
//! Filters, ordering, text matching and pagination all run in the database.
//!
//! Text search: `q` is split into words (runs of letters and digits), lowercased; English stop words
//! (PostgreSQL's list, applied on both backends) are dropped, as PostgreSQL's index leaves them out.
//! A `q` with no other word searches as if it were absent. Every remaining word must match
//! (AND); each is stemmed (Porter on SQLite, Snowball English on PostgreSQL) and matched as a prefix
//! of an indexed word, so `integ` finds "integration" and `circles` finds "circle". Results are
//! ordered by relevance tier ([`Tier`]: every word in the title, then every word in the title or
//! the summary, then the rest), and within a tier by the index's key (SQLite: the order the
//! questions entered the index, which is question id order within one import; PostgreSQL: the
//! question id). Matches are never scored: a page reads each tier in key order and stops at the
//! page's end (SQLite's FTS5 index is in key order; on PostgreSQL a bounded walk of the key, then
//! the GIN index for a tier the walk finds sparse). PostgreSQL first looks the words up in
//! `search_vocabulary`, the words of each tier's vector with their question counts, kept exact by
//! the indexer: a tier whose vector lacks a word is skipped unread (a word only in metadata, a
//! word in no question).

use std::collections::{BTreeSet, HashMap};

use examkit_bank::Revision;
use serde::Serialize;
use sqlx::any::{AnyArguments, AnyRow};
use sqlx::{Any, FromRow};
use uuid::Uuid;

use super::{Backend, Store, StoreError, WriteTx, now_ms};

/// How long a search cursor stays usable.
pub const CURSOR_LIFETIME_MS: i64 = 24 * 60 * 60 * 1000;

/// How many questions, in question id order, a PostgreSQL text search walks in the first relevance
/// tier (a fifth of it in the later ones) before it turns to the tier's full-text index for the
/// rest of the tier. Walking finds a page of a common word's matches in a few hundred rows (about
/// a microsecond and a half a row); the index finds a rare word's matches without reading the
/// others. The walk is bounded because a tier can be empty while the words are common (a word
/// found only in the metadata), and an unbounded walk would then read the whole table.
pub const TEXT_WALK: i64 = 2500;

/// Questions indexed per batch of statements.
const BATCH: usize = 200;

/// From this many questions indexed at once, the index's statistics are refreshed and PostgreSQL's
/// word counts are made afresh once, rather than adjusted batch by batch.
pub const BULK: usize = 1000;

/// The exact-match attribute kinds of `search_terms`.
pub mod kind {
    /// A course id (`<level>-<subject>`), one per source.
    pub const COURSE: &str = "course";
    /// A source's level.
    pub const LEVEL: &str = "level";
    /// A source's subject.
    pub const SUBJECT: &str = "subject";
    /// A source's board.
    pub const BOARD: &str = "board";
    /// A source's year.
    pub const YEAR: &str = "year";
    /// An eligible module profile (every source's module is one).
    pub const MODULE: &str = "module";
    /// A tag.
    pub const TAG: &str = "tag";
    /// The topic.
    pub const TOPIC: &str = "topic";
    /// The subtopic.
    pub const SUBTOPIC: &str = "subtopic";
    /// The difficulty, 1 to 5.
    pub const DIFFICULTY: &str = "difficulty";
    /// The frequency.
    pub const FREQUENCY: &str = "frequency";
}

/// The facet kinds `GET /v1/questions/facets` returns, in response order.
pub const FACET_KINDS: [&str; 5] = ["course", "board", "module", "topic", "subtopic"];

/// English stop words (PostgreSQL's `english` list), dropped from `q` on both backends.
const STOP_WORDS: &[&str] = &[
    "i",
    "me",
    "my",
    "myself",
    "we",
    "our",
    "ours",
    "ourselves",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
    "he",
    "him",
    "his",
    "himself",
    "she",
    "her",
    "hers",
    "herself",
    "it",
    "its",
    "itself",
    "they",
    "them",
    "their",
    "theirs",
    "themselves",
    "what",
    "which",
    "who",
    "whom",
    "this",
    "that",
    "these",
    "those",
    "am",
    "is",
    "are",
    "was",
    "were",
    "be",
    "been",
    "being",
    "have",
    "has",
    "had",
    "having",
    "do",
    "does",
    "did",
    "doing",
    "a",
    "an",
    "the",
    "and",
    "but",
    "if",
    "or",
    "because",
    "as",
    "until",
    "while",
    "of",
    "at",
    "by",
    "for",
    "with",
    "about",
    "against",
    "between",
    "into",
    "through",
    "during",
    "before",
    "after",
    "above",
    "below",
    "to",
    "from",
    "up",
    "down",
    "in",
    "out",
    "on",
    "off",
    "over",
    "under",
    "again",
    "further",
    "then",
    "once",
    "here",
    "there",
    "when",
    "where",
    "why",
    "how",
    "all",
    "any",
    "both",
    "each",
    "few",
    "more",
    "most",
    "other",
    "some",
    "such",
    "no",
    "nor",
    "not",
    "only",
    "own",
    "same",
    "so",
    "than",
    "too",
    "very",
    "s",
    "t",
    "can",
    "will",
    "just",
    "don",
    "should",
    "now",
];

/// The searchable words of a text query: runs of letters and digits, lowercased, stop words
/// dropped, repeats removed, in order of first appearance. Empty when no word is left: the search
/// then has no text condition.
pub fn query_words(q: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in q.split(|c: char| !c.is_alphanumeric()) {
        if word.is_empty() {
            continue;
        }
        let word = word.to_lowercase();
        if STOP_WORDS.contains(&word.as_str()) || words.contains(&word) {
            continue;
        }
        words.push(word);
    }
    words
}

/// Normalised search filters (every `GET /v1/questions` parameter except `cursor`, `limit` and
/// `random`). Serialised, they are the part of a cursor's digest that must not change between pages.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchFilters {
    /// The searchable words of `q` (see [`query_words`]); empty without `q`.
    pub words: Vec<String>,
    /// An eligible module profile.
    pub module: Option<String>,
    /// A source's level.
    pub level: Option<String>,
    /// A source's subject.
    pub subject: Option<String>,
    /// A source's board.
    pub board: Option<String>,
    /// A source's year.
    pub year: Option<i64>,
    /// A tag.
    pub tag: Option<String>,
    /// The topic.
    pub topic: Option<String>,
    /// The subtopic.
    pub subtopic: Option<String>,
    /// The difficulty.
    pub difficulty: Option<i64>,
    /// The least marks.
    pub min_marks: Option<i64>,
    /// The most marks.
    pub max_marks: Option<i64>,
    /// The frequency.
    pub frequency: Option<String>,
    /// Question ids left out, canonical, sorted, without repeats.
    pub exclude_ids: Vec<String>,
    /// Only the caller's favourites.
    pub favourites_only: bool,
}

impl SearchFilters {
    /// The digest a cursor records: SHA-256 over the account and the normalised filters.
    pub fn digest(&self, user_id: &str) -> String {
        let filters = serde_json::to_string(self).unwrap_or_default();
        examkit_bank::digest::sha256_hex(format!("{user_id}\n{filters}").as_bytes())
    }

    fn term_filters(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let text = [
            (kind::MODULE, &self.module),
            (kind::LEVEL, &self.level),
            (kind::SUBJECT, &self.subject),
            (kind::BOARD, &self.board),
            (kind::TAG, &self.tag),
            (kind::TOPIC, &self.topic),
            (kind::SUBTOPIC, &self.subtopic),
            (kind::FREQUENCY, &self.frequency),
        ];
        for (kind, value) in text {
            if let Some(value) = value {
                out.push((kind, value.clone()));
            }
        }
        if let Some(year) = self.year {
            out.push((kind::YEAR, year.to_string()));
        }
        if let Some(difficulty) = self.difficulty {
            out.push((kind::DIFFICULTY, difficulty.to_string()));
        }
        out
    }
}

/// Which page of results to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageRequest {
    /// The first page.
    First,
    /// The page after a cursor's position.
    After(CursorPosition),
    /// A random sample of matching questions, with no cursor.
    Random,
}

/// Where a cursor's next page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CursorPosition {
    /// The keyset position: without a text query the last question id served; with one, the
    /// last result's relevance tier and index key (`<tier digit>:<key>`).
    pub after_key: String,
    /// How many results were served before this position.
    pub position: i64,
}

/// How well a question matches a text query, best first. Every word of the query matches
/// somewhere in a result; the tier says where.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    /// Every word is in the title.
    Title,
    /// Every word is in the title or the summary, not all in the title.
    Summary,
    /// Some word is only in the indexed metadata (topic, subtopic, module, board and course
    /// labels, tags).
    Metadata,
}

impl Tier {
    /// The tiers in result order.
    pub const ALL: [Tier; 3] = [Tier::Title, Tier::Summary, Tier::Metadata];

    fn digit(self) -> char {
        match self {
            Tier::Title => '0',
            Tier::Summary => '1',
            Tier::Metadata => '2',
        }
    }
}

/// Where a text search's next page starts: after `key` in `tier`. A cursor records it as
/// `<tier digit>:<key>`, the key being an FTS5 row id on SQLite and a question id on PostgreSQL.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RankedKey {
    tier: Tier,
    key: Option<String>,
}

impl RankedKey {
    /// The position a cursor's `after_key` records, when it is one for `backend`.
    fn parse(text: &str, backend: Backend) -> Option<RankedKey> {
        let (digit, key) = text.split_once(':')?;
        let tier = match digit {
            "0" => Tier::Title,
            "1" => Tier::Summary,
            "2" => Tier::Metadata,
            _ => return None,
        };
        let fits = match backend {
            Backend::Sqlite => key.parse::<i64>().is_ok(),
            Backend::Postgres => !key.is_empty(),
        };
        fits.then(|| RankedKey {
            tier,
            key: Some(key.to_owned()),
        })
    }
}

impl std::fmt::Display for RankedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}",
            self.tier.digit(),
            self.key.as_deref().unwrap_or("")
        )
    }
}

/// One page of search results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchPage {
    /// The result items, each a JSON object.
    pub items: Vec<String>,
    /// Where the next page starts, or `None` at the end (and for random samples).
    pub next: Option<CursorPosition>,
}

/// Why a cursor cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorProblem {
    /// No such cursor for this account.
    Unknown,
    /// The cursor has expired.
    Expired,
    /// The cursor was made for other filters.
    Mismatch,
}

/// A facet option with its number of published questions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FacetOptionView {
    /// The stable id to filter with.
    pub value: String,
    /// The display label.
    pub label: String,
    /// Published questions in the index having this option.
    pub count: i64,
    /// A subtopic's topic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// A course's level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
    /// A course's subject.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

/// The facets response: options per kind, in display order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FacetsView {
    /// Courses (a level and a subject).
    pub course: Vec<FacetOptionView>,
    /// Exam boards.
    pub board: Vec<FacetOptionView>,
    /// Module profiles.
    pub module: Vec<FacetOptionView>,
    /// Topics.
    pub topic: Vec<FacetOptionView>,
    /// Subtopics.
    pub subtopic: Vec<FacetOptionView>,
}

/// A bound parameter of a dynamically built query.
enum Param {
    Text(String),
    Int(i64),
}

/// Builds SQL with `$n` placeholders and the values to bind.
#[derive(Default)]
struct Sql {
    text: String,
    params: Vec<Param>,
}

impl Sql {
    fn push(&mut self, text: &str) {
        self.text.push_str(text);
    }

    fn text(&mut self, value: impl Into<String>) {
        self.params.push(Param::Text(value.into()));
        self.text.push_str(&format!("${}", self.params.len()));
    }

    /// `(<p1>, <p2>, …)`: each value a text parameter.
    fn text_list(&mut self, values: &[String]) {
        self.push("(");
        for (i, value) in values.iter().enumerate() {
            if i > 0 {
                self.push(", ");
            }
            self.text(value.as_str());
        }
        self.push(")");
    }

    fn int(&mut self, value: i64) {
        self.params.push(Param::Int(value));
        self.text.push_str(&format!("${}", self.params.len()));
    }

    /// The statement, for a query returning no rows to read.
    fn query(&self) -> sqlx::query::Query<'_, Any, AnyArguments> {
        let mut query = sqlx::query(sqlx::AssertSqlSafe(self.text.as_str()));
        for param in &self.params {
            query = match param {
                Param::Text(v) => query.bind(v.as_str()),
                Param::Int(v) => query.bind(*v),
            };
        }
        query
    }

    /// The statement, its rows read as `T`.
    fn query_as<T>(&self) -> sqlx::query::QueryAs<'_, Any, T, AnyArguments>
    where
        T: for<'r> FromRow<'r, AnyRow>,
    {
        let mut query = sqlx::query_as(sqlx::AssertSqlSafe(self.text.as_str()));
        for param in &self.params {
            query = match param {
                Param::Text(v) => query.bind(v.as_str()),
                Param::Int(v) => query.bind(*v),
            };
        }
        query
    }
}

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

/// A facet option's published question count.
#[derive(Debug, Clone, FromRow)]
struct FacetCount {
    kind: String,
    value: String,
    count: i64,
}

/// A facet option of `bank_facets`, in display order.
#[derive(Debug, Clone, FromRow)]
struct FacetOption {
    kind: String,
    id: String,
    label: String,
    topic: Option<String>,
    level: Option<String>,
    subject: Option<String>,
}

/// A stored search cursor.
#[derive(Debug, Clone, FromRow)]
struct CursorRow {
    digest: String,
    after_key: String,
    position: i64,
    expires_at: i64,
}

/// A search result: the question and its item, the JSON object served.
#[derive(Debug, Clone, FromRow)]
struct ResultRow {
    question_id: String,
    item: String,
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

/// The text vectors of a PostgreSQL search index row, each with its words counted in
/// `search_vocabulary`.
const VOCABULARY_FIELDS: [&str; 3] = ["title_words", "lead_words", "document"];

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

impl Store {
    /// The facet options of the bank in display order, with their published question counts.
    pub async fn facets(&self) -> Result<FacetsView, StoreError> {
        let mut counts = HashMap::new();
        for row in
            sqlx::query_as::<_, FacetCount>("SELECT kind, value, count FROM search_facet_counts")
                .fetch_all(self.searching())
                .await?
        {
            counts.insert((row.kind, row.value), row.count);
        }
        let rows: Vec<FacetOption> = sqlx::query_as(
            "SELECT kind, id, label, topic, level, subject FROM bank_facets \
             ORDER BY kind, position, id",
        )
        .fetch_all(self.searching())
        .await?;
        let mut view = FacetsView::default();
        for row in rows {
            let option = FacetOptionView {
                count: counts
                    .get(&(row.kind.clone(), row.id.clone()))
                    .copied()
                    .unwrap_or(0),
                value: row.id,
                label: row.label,
                topic: row.topic,
                level: row.level,
                subject: row.subject,
            };
            match row.kind.as_str() {
                "course" => view.course.push(option),
                "board" => view.board.push(option),
                "module" => view.module.push(option),
                "topic" => view.topic.push(option),
                "subtopic" => view.subtopic.push(option),
                _ => {}
            }
        }
        Ok(view)
    }

    /// The position a cursor records, when it belongs to this account, is unexpired and was made for
    /// these filters. A cursor whose position is not one these filters' pages record (a text
    /// search's position is a tier and a key) is unknown.
    pub async fn search_cursor(
        &self,
        id: &str,
        user_id: &str,
        filters: &SearchFilters,
    ) -> Result<Result<CursorPosition, CursorProblem>, StoreError> {
        let digest = filters.digest(user_id);
        let row: Option<CursorRow> = sqlx::query_as(
            "SELECT digest, after_key, position, expires_at FROM search_cursors \
             WHERE id = $1 AND user_id = $2",
        )
        .bind(id)
        .bind(user_id)
        .fetch_optional(self.searching())
        .await?;
        let Some(row) = row else {
            return Ok(Err(CursorProblem::Unknown));
        };
        if row.expires_at <= now_ms() {
            return Ok(Err(CursorProblem::Expired));
        }
        if row.digest != digest {
            return Ok(Err(CursorProblem::Mismatch));
        }
        if !filters.words.is_empty() && RankedKey::parse(&row.after_key, self.backend()).is_none() {
            return Ok(Err(CursorProblem::Unknown));
        }
        Ok(Ok(CursorPosition {
            after_key: row.after_key,
            position: row.position,
        }))
    }

    /// A cursor for `position` under this account and filter digest: an unexpired one already
    /// recorded for the same page is reused (so repeating a search writes nothing), else a new one
    /// is recorded. Expired cursors are deleted on the way.
    pub async fn save_search_cursor(
        &self,
        user_id: &str,
        digest: &str,
        position: &CursorPosition,
    ) -> Result<String, StoreError> {
        let now = now_ms();
        let find = "SELECT id FROM search_cursors WHERE user_id = $1 AND digest = $2 \
                    AND position = $3 AND after_key = $4 AND expires_at > $5";
        let existing: Option<String> = sqlx::query_scalar(find)
            .bind(user_id)
            .bind(digest)
            .bind(position.position)
            .bind(position.after_key.as_str())
            .bind(now + CURSOR_LIFETIME_MS / 2)
            .fetch_optional(self.searching())
            .await?;
        if let Some(id) = existing {
            return Ok(id);
        }
        let mut tx = self.begin_bookkeeping().await?;
        sqlx::query("DELETE FROM search_cursors WHERE expires_at <= $1")
            .bind(now)
            .execute(&mut *tx)
            .await?;
        let id = Uuid::new_v4().hyphenated().to_string();
        sqlx::query(
            "INSERT INTO search_cursors (id, user_id, digest, after_key, position, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (user_id, digest, position, after_key) \
             DO UPDATE SET expires_at = excluded.expires_at",
        )
        .bind(id.as_str())
        .bind(user_id)
        .bind(digest)
        .bind(position.after_key.as_str())
        .bind(position.position)
        .bind(now + CURSOR_LIFETIME_MS)
        .execute(&mut *tx)
        .await?;
        let saved: String = sqlx::query_scalar(
            "SELECT id FROM search_cursors WHERE user_id = $1 AND digest = $2 \
             AND position = $3 AND after_key = $4",
        )
        .bind(user_id)
        .bind(digest)
        .bind(position.position)
        .bind(position.after_key.as_str())
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(saved)
    }

    /// One page of the published questions matching `filters`.
    pub async fn search(
        &self,
        filters: &SearchFilters,
        user_id: &str,
        page: &PageRequest,
        limit: i64,
    ) -> Result<SearchPage, StoreError> {
        match page {
            PageRequest::Random => self.random_sample(filters, user_id, limit).await,
            PageRequest::First | PageRequest::After(_) => {
                let after = match page {
                    PageRequest::After(position) => Some(position),
                    _ => None,
                };
                if filters.words.is_empty() {
                    self.ordered_page(filters, user_id, after, limit).await
                } else {
                    self.ranked_page(filters, user_id, after, limit).await
                }
            }
        }
    }

    /// A page of a search without a text query: results in question id order, after the cursor's
    /// question id. The most selective term's ids, read in that order from the `search_terms`
    /// key, drive the query.
    async fn ordered_page(
        &self,
        filters: &SearchFilters,
        user_id: &str,
        after: Option<&CursorPosition>,
        limit: i64,
    ) -> Result<SearchPage, StoreError> {
        let mut sql = Sql::default();
        let terms = filters.term_filters();
        let driver = most_selective(&terms);
        let order_column = if driver.is_some() {
            "d.question_id"
        } else {
            "s.question_id"
        };
        if let Some(i) = driver {
            sql.push(
                "SELECT s.question_id, s.item FROM search_terms d \
                 JOIN search_questions s ON s.question_id = d.question_id \
                 WHERE d.kind = '",
            );
            sql.push(terms[i].0);
            sql.push("' AND d.value = ");
            sql.text(terms[i].1.as_str());
        } else {
            sql.push("SELECT s.question_id, s.item FROM search_questions s WHERE 1 = 1");
        }
        self.conditions(&mut sql, filters, user_id, driver);
        if let Some(after) = after {
            sql.push(" AND ");
            sql.push(order_column);
            sql.push(" > ");
            sql.text(after.after_key.as_str());
        }
        sql.push(" ORDER BY ");
        sql.push(order_column);
        sql.push(" LIMIT ");
        sql.int(limit + 1);
        let rows = sql
            .query_as::<ResultRow>()
            .fetch_all(self.searching())
            .await?;
        let more = rows.len() as i64 > limit;
        let mut items = Vec::with_capacity(rows.len());
        let mut last = String::new();
        for row in rows.into_iter().take(usize::try_from(limit).unwrap_or(0)) {
            last = row.question_id;
            items.push(row.item);
        }
        let served = items.len() as i64;
        let next = more.then(|| CursorPosition {
            after_key: last,
            position: after.map_or(0, |a| a.position) + served,
        });
        Ok(SearchPage { items, next })
    }

    /// A page of a text search: results by relevance tier (see [`Tier`]), within a tier in the
    /// index's key order (SQLite: the document row id; PostgreSQL: the question id), after the
    /// cursor's tier and key.
    ///
    /// Each tier is read in key order and the read stops at the page's end, so a page costs
    /// about the same for a word in ten questions as for a word in ten thousand: no match is
    /// scored. Later tiers are read only when earlier ones run out.
    async fn ranked_page(
        &self,
        filters: &SearchFilters,
        user_id: &str,
        after: Option<&CursorPosition>,
        limit: i64,
    ) -> Result<SearchPage, StoreError> {
        let backend = self.backend();
        let start = match after {
            Some(position) => RankedKey::parse(&position.after_key, backend).ok_or_else(|| {
                StoreError::Corrupt(format!(
                    "search cursor position {:?} is not a text search position",
                    position.after_key
                ))
            })?,
            None => RankedKey {
                tier: Tier::Title,
                key: None,
            },
        };
        let wanted = usize::try_from(limit + 1).unwrap_or(1);
        let empty = match backend {
            Backend::Sqlite => [false; 3],
            Backend::Postgres => self.postgres_empty_tiers(&filters.words).await?,
        };
        // (item, tier, key) of the rows read, in result order.
        let mut rows: Vec<(String, Tier, String)> = Vec::with_capacity(wanted);
        for tier in Tier::ALL.into_iter().filter(|t| *t >= start.tier) {
            let need = wanted - rows.len();
            if need == 0 {
                break;
            }
            if empty[tier as usize] {
                continue;
            }
            let after_key = if tier == start.tier {
                start.key.as_deref()
            } else {
                None
            };
            let found = match backend {
                Backend::Sqlite => {
                    self.sqlite_tier(filters, user_id, tier, after_key, need as i64)
                        .await?
                }
                Backend::Postgres => {
                    self.postgres_tier(filters, user_id, tier, after_key, need as i64)
                        .await?
                }
            };
            rows.extend(found.into_iter().map(|(item, key)| (item, tier, key)));
        }
        let more = rows.len() == wanted;
        rows.truncate(wanted - 1);
        let next = match (more, rows.last()) {
            (true, Some((_, tier, key))) => Some(CursorPosition {
                after_key: RankedKey {
                    tier: *tier,
                    key: Some(key.clone()),
                }
                .to_string(),
                position: after.map_or(0, |a| a.position) + rows.len() as i64,
            }),
            _ => None,
        };
        Ok(SearchPage {
            items: rows.into_iter().map(|(item, _, _)| item).collect(),
            next,
        })
    }

    /// Up to `limit` (item, key) rows of one tier's matches after `after` (a row id), in row id
    /// order. FTS5 reads its matches in row id order, so this walk stops at the page's end
    /// whether the words are rare or common.
    async fn sqlite_tier(
        &self,
        filters: &SearchFilters,
        user_id: &str,
        tier: Tier,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let mut sql = Sql::default();
        sql.push(
            "SELECT s.item, t.rowid FROM search_text t \
             JOIN search_questions s ON s.doc = t.rowid \
             WHERE t.search_text MATCH ",
        );
        sql.text(fts5_query(&filters.words, tier));
        if let Some(key) = after {
            sql.push(" AND t.rowid > ");
            sql.int(key.parse().unwrap_or(i64::MAX));
        }
        self.conditions(&mut sql, filters, user_id, None);
        sql.push(" ORDER BY t.rowid LIMIT ");
        sql.int(limit);
        // `t.rowid` is read by position: the name SQLite gives the column is not settled.
        let rows = sql
            .query_as::<(String, i64)>()
            .fetch_all(self.searching())
            .await?;
        Ok(rows
            .into_iter()
            .map(|(item, rowid)| (item, rowid.to_string()))
            .collect())
    }

    /// PostgreSQL: which relevance tiers, in [`Tier::ALL`] order, `words` leave empty whatever
    /// the filters, by `search_vocabulary`: a tier is empty when one of the words begins no word
    /// of its vector (the title's; the title's and summary's; the whole document's for the last
    /// tier, which makes every tier empty). A tier not shown empty may still be.
    ///
    /// The words are reduced to lexemes the way the document was (`to_tsvector('english', …)`,
    /// which `to_tsquery` applies to a query word too); a word reduced to nothing adds nothing.
    async fn postgres_empty_tiers(&self, words: &[String]) -> Result<[bool; 3], StoreError> {
        let mut sql = Sql::default();
        sql.push("SELECT ");
        for (i, field) in VOCABULARY_FIELDS.into_iter().enumerate() {
            if i > 0 {
                sql.push(", ");
            }
            // Every word beginning with the lexeme sorts between it and it followed by the
            // greatest code point (the column compares bytes).
            sql.push("bool_and(EXISTS (SELECT 1 FROM search_vocabulary v WHERE v.field = '");
            sql.push(field);
            sql.push(
                "' AND v.word >= l.lexeme AND v.word < l.lexeme || chr(1114111) \
                 AND starts_with(v.word, l.lexeme)))",
            );
        }
        sql.push(
            " FROM (SELECT unnest(tsvector_to_array(to_tsvector('english', w.word))) \
             COLLATE \"C\" AS lexeme FROM (VALUES ",
        );
        for (i, word) in words.iter().enumerate() {
            sql.push(if i > 0 { ", (" } else { "(" });
            sql.text(word.as_str());
            sql.push(")");
        }
        sql.push(") w(word)) l");
        // One unnamed column per field of VOCABULARY_FIELDS, NULL when no word has a lexeme:
        // nothing is known.
        let (title, lead, document) = sql
            .query_as::<(Option<bool>, Option<bool>, Option<bool>)>()
            .fetch_one(self.searching())
            .await?;
        let mut empty = [title, lead, document].map(|found| found == Some(false));
        if empty[2] {
            empty = [true; 3];
        }
        Ok(empty)
    }

    /// Up to `limit` (item, key) rows of one tier's matches after `after` (a question id), in
    /// question id order.
    ///
    /// A GIN index yields matches in no order, so a page is found in up to two steps chosen
    /// here, not by the planner. First the next [`TEXT_WALK`] questions (a fifth as many in a
    /// later tier) are walked in id order and tested, stopping at the page's end: a common word
    /// fills a page within a few hundred rows. If the walk ends with the page still short, the
    /// rest of the tier comes from the tier's GIN index, sorted: a rare word's matches are few. The planner's estimates for
    /// these conditions are guesses (prefix matches, and negations such as "in the title or
    /// summary, not all in the title"): trusted, they walked the whole table for a word found
    /// only in the metadata, and sorted thousands of index matches for a common one.
    async fn postgres_tier(
        &self,
        filters: &SearchFilters,
        user_id: &str,
        tier: Tier,
        after: Option<&str>,
        limit: i64,
    ) -> Result<Vec<(String, String)>, StoreError> {
        let (column, before) = tier_columns(tier);
        // A later tier is mostly reached when the earlier ones ran short, often because the
        // words are not in titles at all; its walk is shorter, so an empty tier costs little.
        let walk = if before.is_none() {
            self.text_walk()
        } else {
            (self.text_walk() / 5).max(1)
        };
        let mut out: Vec<(String, String)> = Vec::new();
        let mut walked_to: Option<String> = None;
        for indexed in [false, true] {
            let wanted = limit - out.len() as i64;
            if wanted <= 0 {
                break;
            }
            if indexed {
                // Where the walk stopped: the last of the questions it read, unless it read to
                // the end of the table.
                let mut window = Sql::default();
                window.push(
                    "SELECT max(w.question_id), count(*) FROM \
                     (SELECT question_id FROM search_questions",
                );
                if let Some(key) = after {
                    window.push(" WHERE question_id > ");
                    window.text(key);
                }
                window.push(" ORDER BY question_id LIMIT ");
                window.int(walk);
                window.push(") w");
                // Two unnamed columns: the last question walked, and how many were.
                let (last, walked) = window
                    .query_as::<(Option<String>, i64)>()
                    .fetch_one(self.searching())
                    .await?;
                if walked < walk {
                    break;
                }
                walked_to = last;
                if walked_to.is_none() {
                    break;
                }
            }
            let mut sql = Sql::default();
            if indexed {
                sql.push("SELECT s.item, s.question_id FROM search_questions s");
            } else {
                // A subquery with a limit is not merged into the outer query: the walk is
                // this key-ordered read, stopped by the outer limit or after TEXT_WALK rows. It
                // carries what the tests need; the page's items are joined on afterwards.
                sql.push(
                    "SELECT i.item, s.question_id FROM (SELECT question_id, marks, \
                     title_words, lead_words, document FROM search_questions",
                );
                if let Some(key) = after {
                    sql.push(" WHERE question_id > ");
                    sql.text(key);
                }
                sql.push(" ORDER BY question_id LIMIT ");
                sql.int(walk);
                sql.push(") s JOIN search_questions i ON i.question_id = s.question_id");
            }
            sql.push(", to_tsquery('english', ");
            sql.text(tsquery_match(&filters.words));
            sql.push(") query WHERE ");
            sql.push(column);
            sql.push(" @@ query");
            if let Some(before) = before {
                sql.push(" AND NOT ");
                sql.push(before);
                sql.push(" @@ query");
            }
            if let Some(last) = &walked_to {
                sql.push(" AND s.question_id > ");
                sql.text(last.as_str());
            }
            self.conditions(&mut sql, filters, user_id, None);
            // The index route orders by an expression the primary key cannot supply, so it
            // sorts the index's matches instead of walking the key.
            sql.push(if indexed {
                " ORDER BY (s.question_id || '') COLLATE \"C\" LIMIT "
            } else {
                " ORDER BY s.question_id LIMIT "
            });
            sql.int(wanted);
            out.extend(
                sql.query_as::<(String, String)>()
                    .fetch_all(self.searching())
                    .await?,
            );
        }
        Ok(out)
    }

    /// `AND …` for every filter but the text query and the driving term (the term filter at
    /// index `driver`, already the query's source). Each other term is a key probe of
    /// `search_terms` for the row at hand, never a materialised list of ids.
    fn conditions(
        &self,
        sql: &mut Sql,
        filters: &SearchFilters,
        user_id: &str,
        driver: Option<usize>,
    ) {
        for (i, (kind, value)) in filters.term_filters().into_iter().enumerate() {
            if Some(i) == driver {
                continue;
            }
            sql.push(" AND EXISTS (SELECT 1 FROM search_terms e WHERE e.kind = '");
            sql.push(kind);
            sql.push("' AND e.value = ");
            sql.text(value);
            sql.push(" AND e.question_id = s.question_id)");
        }
        if let Some(min) = filters.min_marks {
            sql.push(" AND s.marks >= ");
            sql.int(min);
        }
        if let Some(max) = filters.max_marks {
            sql.push(" AND s.marks <= ");
            sql.int(max);
        }
        if filters.favourites_only {
            sql.push(" AND s.question_id IN (SELECT question_id FROM favourites WHERE user_id = ");
            sql.text(user_id);
            sql.push(")");
        }
        if !filters.exclude_ids.is_empty() {
            sql.push(" AND s.question_id NOT IN ");
            sql.text_list(&filters.exclude_ids);
        }
    }

    /// Up to `limit` matching questions from a random point of the fixed pseudo-random order
    /// (wrapping round at the end), shuffled.
    async fn random_sample(
        &self,
        filters: &SearchFilters,
        user_id: &str,
        limit: i64,
    ) -> Result<SearchPage, StoreError> {
        let start = i64::from(random_u32() >> 1);
        let mut items: Vec<String> = Vec::new();
        for wrapped in [false, true] {
            let wanted = limit - items.len() as i64;
            if wanted <= 0 {
                break;
            }
            let mut sql = Sql::default();
            // The walk reads ids from the shuffle key; only the chosen rows' items are read.
            sql.push(
                "SELECT s2.question_id, s2.item FROM (SELECT s.question_id AS k \
                 FROM search_questions s WHERE ",
            );
            sql.push(if wrapped {
                "s.shuffle < "
            } else {
                "s.shuffle >= "
            });
            sql.int(start);
            if !filters.words.is_empty() {
                match self.backend() {
                    Backend::Sqlite => {
                        sql.push(
                            " AND s.doc IN (SELECT rowid FROM search_text WHERE search_text MATCH ",
                        );
                        sql.text(fts5_match(&filters.words));
                        sql.push(")");
                    }
                    Backend::Postgres => {
                        sql.push(" AND s.document @@ to_tsquery('english', ");
                        sql.text(tsquery_match(&filters.words));
                        sql.push(")");
                    }
                }
            }
            self.conditions(&mut sql, filters, user_id, None);
            sql.push(" ORDER BY s.shuffle, s.question_id LIMIT ");
            sql.int(wanted);
            sql.push(") p JOIN search_questions s2 ON s2.question_id = p.k");
            let rows = sql
                .query_as::<ResultRow>()
                .fetch_all(self.searching())
                .await?;
            items.extend(rows.into_iter().map(|row| row.item));
        }
        // Fisher-Yates, so a small result set comes back in a different order each time.
        for i in (1..items.len()).rev() {
            let j = random_u32() as usize % (i + 1);
            items.swap(i, j);
        }
        Ok(SearchPage { items, next: None })
    }
}

/// The index of the term filter expected to match fewest questions, by kind: a subtopic before a
/// tag, a module, a topic, a year, a board, a difficulty, a frequency, a subject and a level.
fn most_selective(terms: &[(&'static str, String)]) -> Option<usize> {
    const ORDER: [&str; 10] = [
        kind::SUBTOPIC,
        kind::TAG,
        kind::MODULE,
        kind::TOPIC,
        kind::YEAR,
        kind::BOARD,
        kind::DIFFICULTY,
        kind::FREQUENCY,
        kind::SUBJECT,
        kind::LEVEL,
    ];
    terms
        .iter()
        .enumerate()
        .min_by_key(|(_, (kind, _))| ORDER.iter().position(|k| k == kind).unwrap_or(ORDER.len()))
        .map(|(i, _)| i)
}

fn random_u32() -> u32 {
    let mut bytes = [0u8; 4];
    // Without an entropy source the sample starts at the beginning of the order: still valid.
    let _ = getrandom::fill(&mut bytes);
    u32::from_le_bytes(bytes)
}

/// An FTS5 query: every word, quoted, as a prefix, all required, in any column.
fn fts5_match(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("\"{}\"*", w.replace('"', "")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The FTS5 query of one relevance tier's matches.
fn fts5_query(words: &[String], tier: Tier) -> String {
    let all = fts5_match(words);
    match tier {
        Tier::Title => format!("{{title}} : ({all})"),
        Tier::Summary => format!("{{title summary}} : ({all}) NOT {{title}} : ({all})"),
        Tier::Metadata => format!("({all}) NOT {{title summary}} : ({all})"),
    }
}

/// A PostgreSQL `to_tsquery` text: every word as a prefix, all required.
fn tsquery_match(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            format!(
                "{}:*",
                w.replace(['\'', '\\', ':', '&', '|', '!', '(', ')', '<', '>'], "")
            )
        })
        .collect::<Vec<_>>()
        .join(" & ")
}

/// The PostgreSQL condition of one relevance tier's matches, for `search_questions s`: the
/// column whose GIN index finds the tier's candidates (every word in it), and the column whose
/// matches belong to the tiers before (none for the first).
fn tier_columns(tier: Tier) -> (&'static str, Option<&'static str>) {
    match tier {
        Tier::Title => ("s.title_words", None),
        Tier::Summary => ("s.lead_words", Some("s.title_words")),
        Tier::Metadata => ("s.document", Some("s.lead_words")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_words_drop_stop_words_and_punctuation() {
        assert_eq!(
            query_words("The Area under a CURVE, area-under!"),
            ["area", "curve"]
        );
        assert!(query_words("the of and").is_empty());
        assert!(query_words("!!! ---").is_empty());
        assert_eq!(query_words("Mécanique 2019"), ["mécanique", "2019"]);
    }

    #[test]
    fn text_queries_are_prefix_conjunctions() {
        let words = vec!["area".to_owned(), "curve".to_owned()];
        assert_eq!(fts5_match(&words), "\"area\"* \"curve\"*");
        assert_eq!(tsquery_match(&words), "area:* & curve:*");
    }

    #[test]
    fn tiers_split_the_matches_by_where_every_word_is() {
        let words = vec!["area".to_owned(), "curve".to_owned()];
        let q = "\"area\"* \"curve\"*";
        assert_eq!(
            fts5_query(&words, Tier::Title),
            format!("{{title}} : ({q})")
        );
        assert_eq!(
            fts5_query(&words, Tier::Summary),
            format!("{{title summary}} : ({q}) NOT {{title}} : ({q})")
        );
        assert_eq!(
            fts5_query(&words, Tier::Metadata),
            format!("({q}) NOT {{title summary}} : ({q})")
        );
        assert_eq!(tier_columns(Tier::Title), ("s.title_words", None));
        assert_eq!(
            tier_columns(Tier::Summary),
            ("s.lead_words", Some("s.title_words"))
        );
        assert_eq!(
            tier_columns(Tier::Metadata),
            ("s.document", Some("s.lead_words"))
        );
        // A quote cannot end an FTS5 string early, and tsquery operators cannot join a word
        // (`query_words` passes only letters and digits; these guard the query text anyway).
        let odd = vec!["a\"b".to_owned(), "c&!d:|(e)".to_owned()];
        assert_eq!(fts5_match(&odd), "\"ab\"* \"c&!d:|(e)\"*");
        assert_eq!(tsquery_match(&odd[1..]), "cde:*");
    }

    #[test]
    fn ranked_positions_round_trip_and_refuse_other_forms() {
        for backend in [Backend::Sqlite, Backend::Postgres] {
            for tier in Tier::ALL {
                let key = RankedKey {
                    tier,
                    key: Some("42".to_owned()),
                };
                assert_eq!(RankedKey::parse(&key.to_string(), backend), Some(key));
            }
            for bad in ["", "42", "3:42", "x:42", "0:", ":42", "-1:42"] {
                assert_eq!(RankedKey::parse(bad, backend), None, "{bad:?}");
            }
        }
        let id = "0:6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f";
        assert!(RankedKey::parse(id, Backend::Postgres).is_some());
        assert_eq!(
            RankedKey::parse(id, Backend::Sqlite),
            None,
            "a row id is a number"
        );
    }

    #[test]
    fn the_narrowest_kind_of_term_drives_a_filtered_query() {
        let terms = |kinds: &[&'static str]| -> Vec<(&'static str, String)> {
            kinds.iter().map(|k| (*k, "x".to_owned())).collect()
        };
        assert_eq!(most_selective(&[]), None);
        assert_eq!(
            most_selective(&terms(&[kind::LEVEL, kind::BOARD, kind::TOPIC])),
            Some(2)
        );
        assert_eq!(
            most_selective(&terms(&[kind::SUBJECT, kind::LEVEL])),
            Some(0)
        );
        assert_eq!(
            most_selective(&terms(&[kind::MODULE, kind::SUBTOPIC, kind::TAG])),
            Some(1)
        );
    }

    #[test]
    fn shuffle_positions_are_stable_and_in_range() {
        let a = shuffle_of("6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f");
        assert_eq!(a, shuffle_of("6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f"));
        assert!((0..1 << 31).contains(&a));
        assert_ne!(a, shuffle_of("00000000-0000-4000-8000-000000000000"));
    }
}
