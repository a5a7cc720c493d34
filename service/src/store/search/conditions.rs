//! The filter conditions of a search's SQL: every term filter as a key probe of `search_terms`
//! (but the one driving the query), the marks, favourites and excluded ids; and which term
//! filter is the narrowest, to drive a query without a text search.

use super::sql::Sql;
use super::{SearchFilters, kind};
use crate::store::Store;

impl Store {
    /// `AND …` for every filter but the text query and the driving term (the term filter at
    /// index `driver`, already the query's source). Each other term is a key probe of
    /// `search_terms` for the row at hand, never a materialised list of ids.
    pub(super) fn conditions(
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
}

/// The index of the term filter expected to match fewest questions, by kind: a subtopic before a
/// tag, a module, a topic, a year, a board, a difficulty, a frequency, a subject and a level.
pub(super) fn most_selective(terms: &[(&'static str, String)]) -> Option<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
