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
//!
//! This module holds the search's public forms (filters, page requests, cursor positions, tiers,
//! pages, facets) and the store's entry points: the facets, a page of results, and cursors read
//! and saved. The rest:
//!
//! - [`text`] turns `q` into its searchable words and those into the FTS5 and `to_tsquery` texts
//!   of each tier, and names the PostgreSQL text vectors each tier reads;
//! - [`index`] builds a question's index rows from its latest published revision and rebuilds
//!   the rows of the questions an import touched ([`index_questions`]), with PostgreSQL's word
//!   counts and the facet counts;
//! - [`pages`] reads a page without a text query, in question id order, and a random sample;
//! - [`ranked`] reads a page of a text search tier by tier, each tier on SQLite through FTS5 and
//!   on PostgreSQL by a bounded walk of the ids, then the GIN index;
//! - [`conditions`] appends the filters to a query and picks the term that drives it;
//! - [`cursor`] holds a text search's position (a tier and a key) and a stored cursor's row;
//! - [`sql`] builds a statement's text with its bound values.

use std::collections::HashMap;

use serde::Serialize;
use sqlx::FromRow;
use uuid::Uuid;

use super::{Store, StoreError, now_ms};

mod conditions;
mod cursor;
mod index;
mod pages;
mod ranked;
mod sql;
mod text;

use cursor::{CursorRow, RankedKey};
pub use index::index_questions;
pub use text::query_words;

/// How long a search cursor stays usable.
pub const CURSOR_LIFETIME_MS: i64 = 24 * 60 * 60 * 1000;

/// How many questions, in question id order, a PostgreSQL text search walks in the first relevance
/// tier (a fifth of it in the later ones) before it turns to the tier's full-text index for the
/// rest of the tier. Walking finds a page of a common word's matches in a few hundred rows (about
/// a microsecond and a half a row); the index finds a rare word's matches without reading the
/// others. The walk is bounded because a tier can be empty while the words are common (a word
/// found only in the metadata), and an unbounded walk would then read the whole table.
pub const TEXT_WALK: i64 = 2500;

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
}
