//! A page of a search without a text query, in question id order driven by its narrowest term
//! filter, and a random sample of a search's matches (with or without a text query).

use sqlx::FromRow;

use super::conditions::most_selective;
use super::sql::Sql;
use super::text::{fts5_match, tsquery_match};
use super::{CursorPosition, SearchFilters, SearchPage};
use crate::store::{Backend, Store, StoreError};

/// A search result: the question and its item, the JSON object served.
#[derive(Debug, Clone, FromRow)]
struct ResultRow {
    question_id: String,
    item: String,
}

impl Store {
    /// A page of a search without a text query: results in question id order, after the cursor's
    /// question id. The most selective term's ids, read in that order from the `search_terms`
    /// key, drive the query.
    pub(super) async fn ordered_page(
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

    /// Up to `limit` matching questions from a random point of the fixed pseudo-random order
    /// (wrapping round at the end), shuffled.
    pub(super) async fn random_sample(
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

fn random_u32() -> u32 {
    let mut bytes = [0u8; 4];
    // Without an entropy source the sample starts at the beginning of the order: still valid.
    let _ = getrandom::fill(&mut bytes);
    u32::from_le_bytes(bytes)
}
