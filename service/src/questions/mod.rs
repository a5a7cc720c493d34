//! The question bank as a teacher searches it, whoever asks: a page of results for checked
//! filters, with the cursor of the next page saved for the account. `GET /v1/questions` and the
//! app's bank page both come here, so paging works alike on both.
//!
//! Its rooms: [`params`] (the search query read and checked, the same rules for both callers);
//! this file holds the page of results and its cursor. The routes are in `http::questions`.

use crate::error::ApiError;
use crate::error::invalid_parameters;
use crate::fields::FieldError;
use crate::store::Store;
use crate::store::search::{CursorProblem, PageRequest};

pub mod params;

pub use params::{
    DEFAULT_LIMIT, MAX_EXCLUDE_IDS, MAX_ID_CHARS, MAX_LIMIT, MAX_Q_CHARS, SearchParams,
    parse_search,
};

/// One page of search results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Each result as the JSON object `GET /v1/questions` lists (a pin, title, summary, marks…).
    pub items: Vec<String>,
    /// The cursor of the next page, when there is one.
    pub next_cursor: Option<String>,
}

/// One result of a page, read back from its JSON for pages that show it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    /// The pin to add the question to a paper with.
    pub pin: crate::store::papers::Pin,
    /// The title.
    pub title: String,
    /// A sentence on what the question asks.
    pub summary: String,
    /// Its marks.
    pub marks: i64,
    /// 1 (easiest) to 5.
    pub difficulty: i64,
    /// The topic's id.
    pub topic: String,
}

/// The page `params` asks for, for the account `user_id`.
pub async fn search(store: &Store, user_id: &str, params: &SearchParams) -> Result<Page, ApiError> {
    let digest = params.filters.digest(user_id);
    let page = if params.random {
        PageRequest::Random
    } else if let Some(cursor) = &params.cursor {
        match store
            .search_cursor(cursor, user_id, &params.filters)
            .await?
        {
            Ok(position) => PageRequest::After(position),
            Err(problem) => {
                let (code, message) = match problem {
                    CursorProblem::Unknown => (
                        "cursor_unknown",
                        "no such cursor for this account; start again without cursor",
                    ),
                    CursorProblem::Expired => (
                        "cursor_expired",
                        "the cursor has expired; start again without cursor",
                    ),
                    CursorProblem::Mismatch => (
                        "cursor_mismatch",
                        "the cursor was made for other filters; send the same filters as the first page, or start again without cursor",
                    ),
                };
                return Err(invalid_parameters(vec![FieldError::new(
                    "cursor", code, message,
                )]));
            }
        }
    } else {
        PageRequest::First
    };
    let found = store
        .search(&params.filters, user_id, &page, params.limit)
        .await?;
    let next_cursor = match &found.next {
        Some(position) => Some(store.save_search_cursor(user_id, &digest, position).await?),
        None => None,
    };
    Ok(Page {
        items: found.items,
        next_cursor,
    })
}

impl Page {
    /// The body of `GET /v1/questions`: the items as stored, then the next cursor.
    pub fn to_json(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(64 + self.items.iter().map(String::len).sum::<usize>());
        body.extend_from_slice(b"{\"items\":[");
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                body.push(b',');
            }
            body.extend_from_slice(item.as_bytes());
        }
        body.extend_from_slice(b"],\"nextCursor\":");
        match &self.next_cursor {
            Some(id) => {
                body.push(b'"');
                body.extend_from_slice(id.as_bytes());
                body.push(b'"');
            }
            None => body.extend_from_slice(b"null"),
        }
        body.push(b'}');
        body
    }

    /// The items read back, in order; one that cannot be read is left out and logged.
    pub fn read_items(&self) -> Vec<Item> {
        self.items
            .iter()
            .filter_map(|item| match serde_json::from_str(item) {
                Ok(item) => Some(item),
                Err(e) => {
                    tracing::error!(error = %e, "a search item is not a question summary");
                    None
                }
            })
            .collect()
    }
}
