//! A text search's cursor position ([`RankedKey`]: a relevance tier and an index key), and a
//! search cursor as stored.

use sqlx::FromRow;

use super::Tier;
use crate::store::Backend;

/// Where a text search's next page starts: after `key` in `tier`. A cursor records it as
/// `<tier digit>:<key>`, the key being an FTS5 row id on SQLite and a question id on PostgreSQL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RankedKey {
    pub(super) tier: Tier,
    pub(super) key: Option<String>,
}

impl RankedKey {
    /// The position a cursor's `after_key` records, when it is one for `backend`.
    pub(super) fn parse(text: &str, backend: Backend) -> Option<RankedKey> {
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

/// A stored search cursor.
#[derive(Debug, Clone, FromRow)]
pub(super) struct CursorRow {
    pub(super) digest: String,
    pub(super) after_key: String,
    pub(super) position: i64,
    pub(super) expires_at: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
