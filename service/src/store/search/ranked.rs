//! A page of a text search: its matches by relevance tier, each tier read in the index's key
//! order through SQLite's FTS5 table, or on PostgreSQL by a bounded walk of the question ids and
//! then the GIN index, after the word counts of `search_vocabulary` have ruled out the tiers the
//! words cannot reach.

use super::cursor::RankedKey;
use super::sql::Sql;
use super::text::{VOCABULARY_FIELDS, fts5_query, tier_columns, tsquery_match};
use super::{CursorPosition, SearchFilters, SearchPage, Tier};
use crate::store::{Backend, Store, StoreError};

impl Store {
    /// A page of a text search: results by relevance tier (see [`Tier`]), within a tier in the
    /// index's key order (SQLite: the document row id; PostgreSQL: the question id), after the
    /// cursor's tier and key.
    ///
    /// Each tier is read in key order and the read stops at the page's end, so a page costs
    /// about the same for a word in ten questions as for a word in ten thousand: no match is
    /// scored. Later tiers are read only when earlier ones run out.
    pub(super) async fn ranked_page(
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

    /// Where a walk of `walk` questions in id order after `after` stops: the last of the
    /// questions it reads, or `None` when it reads to the end of the table.
    async fn walk_end(&self, after: Option<&str>, walk: i64) -> Result<Option<String>, StoreError> {
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
        Ok(if walked < walk { None } else { last })
    }

    /// Up to `limit` (item, key) rows of one tier's matches after `after` (a question id), in
    /// question id order.
    ///
    /// A GIN index yields matches in no order, so a page is found in up to two steps chosen here,
    /// not by the planner. First the next [`TEXT_WALK`](super::TEXT_WALK) questions (a fifth as
    /// many in a later tier) are walked in id order and tested, stopping at the page's end: a
    /// common word fills a page within a few hundred rows. If the walk ends with the page still
    /// short, the rest of the tier comes from the tier's GIN index, sorted: a rare word's matches
    /// are few. The planner's estimates for these conditions are guesses (prefix matches, and
    /// negations such as "in the title or summary, not all in the title"): trusted, they walked the
    /// whole table for a word found only in the metadata, and sorted thousands of index matches for
    /// a common one.
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
                walked_to = self.walk_end(after, walk).await?;
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
}
