//! The fixed words some text columns hold, as enums: a session's status, origin and indexing
//! state, an asset's kind, an indexed page's state and role, a job's state, the state of a
//! name's reading, a question's status, a reviewer's kind.
//!
//! Each is read from its column once, when a row is decoded (a word outside its set is a decode
//! error, so a [`super::StoreError`], never a panic), and written back with `as_str()`, the exact
//! text stored before these enums existed. `/v1` spells the same words from `as_str()`.
//!
//! Beside them, [`StoredFlag`]: how a yes-or-no column stored as 0 or 1 is read, in one place.

use sqlx::any::{AnyTypeInfo, AnyValueRef};
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::{Any, Decode, Encode, Type};

/// A stored word outside its column's set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {text:?}")]
pub struct UnknownWord {
    /// What the column holds (`session status`, `asset kind`, …).
    pub what: &'static str,
    /// The stored text.
    pub text: String,
}

/// An enum of stored words: its `as_str`, `parse`, `ALL`, `TryFrom<String>` and the `Any`
/// driver's text decode and encode.
macro_rules! stored_words {
    (
        $(#[$meta:meta])*
        $name:ident, $what:literal {
            $($(#[$vmeta:meta])* $variant:ident => $text:literal,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The stored text.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// The value stored as `text`.
            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl TryFrom<String> for $name {
            type Error = UnknownWord;

            fn try_from(text: String) -> Result<Self, UnknownWord> {
                $name::parse(&text).ok_or(UnknownWord { what: $what, text })
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = String::deserialize(deserializer)?;
                $name::try_from(text).map_err(serde::de::Error::custom)
            }
        }

        impl Type<Any> for $name {
            fn type_info() -> AnyTypeInfo {
                <str as Type<Any>>::type_info()
            }

            fn compatible(ty: &AnyTypeInfo) -> bool {
                <str as Type<Any>>::compatible(ty)
            }
        }

        impl<'r> Decode<'r, Any> for $name {
            fn decode(value: AnyValueRef<'r>) -> Result<Self, BoxDynError> {
                let text = <&str as Decode<'r, Any>>::decode(value)?;
                Ok($name::parse(text).ok_or_else(|| UnknownWord {
                    what: $what,
                    text: text.to_owned(),
                })?)
            }
        }

        impl Encode<'_, Any> for $name {
            fn encode_by_ref(
                &self,
                buf: &mut <Any as sqlx::Database>::ArgumentBuffer,
            ) -> Result<IsNull, BoxDynError> {
                <&str as Encode<'_, Any>>::encode(self.as_str(), buf)
            }
        }
    };
}

/// For words of a column kept by its own store module; the module brings `UnknownWord` and the
/// `sqlx` names used above into scope.
pub(super) use stored_words;

stored_words! {
    /// Where a marking session stands.
    SessionStatus, "session status" {
        /// Taking files (an import before completion, a session before marking starts).
        Draft => "draft",
        /// Automated marking was started.
        Started => "started",
        /// An import completed with its submission.
        Completed => "completed",
    }
}

stored_words! {
    /// How a marking session was made.
    Origin, "session origin" {
        /// Imported work with the client's own results (`/v1/imports`).
        Import => "import",
        /// A session for automated marking (`/v1/marking/sessions`).
        Automated => "automated",
        /// A class set's scanned stack.
        ClassSet => "class_set",
    }
}

stored_words! {
    /// How far a session's page indexing went.
    IndexingState, "indexing state" {
        /// Waiting for a worker.
        Queued => "queued",
        /// Pages are being indexed.
        Running => "running",
        /// Every page was indexed (successfully or not).
        Completed => "completed",
        /// Indexing gave up.
        Failed => "failed",
    }
}

impl IndexingState {
    /// Whether indexing ended, one way or the other.
    pub fn is_finished(self) -> bool {
        matches!(self, IndexingState::Completed | IndexingState::Failed)
    }
}

stored_words! {
    /// What an uploaded file is.
    AssetKind, "asset kind" {
        /// A student's work.
        Work => "work",
        /// A mark scheme.
        Scheme => "scheme",
    }
}

stored_words! {
    /// How far indexing got with one page of an asset (`asset_pages.state`).
    PageState, "page state" {
        /// Read: its role, labels and words are known.
        Ok => "ok",
        /// Not read: see the page's error.
        Failed => "failed",
        /// Being read again, after a person placed it (what was known of it before is stale).
        Reading => "reading",
    }
}

stored_words! {
    /// What a page of an asset is (`asset_pages.role`), as indexing found it: whether it can be
    /// evidence of a student's answer.
    PageRole, "page role" {
        /// A student's work: evidence.
        Work => "work",
        /// A page of an asset uploaded as a mark scheme.
        Scheme => "scheme",
        /// A mark scheme's page uploaded as work: never evidence.
        SchemeAsWork => "scheme_as_work",
        /// A page of the clean question paper, nothing added: never evidence.
        CleanPaper => "clean_paper",
    }
}

impl From<AssetKind> for PageRole {
    /// The role a page of an asset of this kind has when nothing more is known of it (a page
    /// that could not be read).
    fn from(kind: AssetKind) -> PageRole {
        match kind {
            AssetKind::Work => PageRole::Work,
            AssetKind::Scheme => PageRole::Scheme,
        }
    }
}

stored_words! {
    /// Where a job of the durable queue stands (`marking_jobs.state`).
    JobState, "job state" {
        /// Waiting for a worker (again, after a retry or a worker's release).
        Queued => "queued",
        /// Leased to a worker.
        Running => "running",
        /// Finished.
        Done => "done",
        /// Failed for good.
        Failed => "failed",
        /// Cancelled with its question.
        Cancelled => "cancelled",
    }
}

stored_words! {
    /// Where the reading of the name written on a cover page stands (`class_set_names.state`).
    NameState, "name state" {
        /// Queued or being read.
        Reading => "reading",
        /// Read: the written name, or a blank line.
        Read => "read",
        /// Could not be read; the row's error says why.
        Failed => "failed",
    }
}

stored_words! {
    /// A marking question's status.
    QuestionStatus, "question status" {
        /// Waiting for a worker.
        Queued => "queued",
        /// A worker is marking it.
        Running => "running",
        /// Marked, with no review flag.
        Completed => "completed",
        /// Marked, with at least one review flag.
        NeedsReview => "needs_review",
        /// Not marked: see the question's error.
        Failed => "failed",
        /// Cancelled before it was marked.
        Cancelled => "cancelled",
    }
}

impl QuestionStatus {
    /// Whether the question has a result a person can review.
    pub fn is_marked(self) -> bool {
        matches!(
            self,
            QuestionStatus::Completed | QuestionStatus::NeedsReview
        )
    }
}

stored_words! {
    /// How a reviewer reached the review path.
    ReviewerKind, "reviewer kind" {
        /// A teacher signed in to the app.
        Teacher => "teacher",
        /// A client of `PATCH /v1/marking/questions/{id}`, by its API key.
        ApiKey => "api_key",
    }
}

/// A yes-or-no column stored as an integer: 0 is no, anything else yes. Read into a `bool`
/// field with `#[sqlx(try_from = "StoredFlag")]`; written with `i64::from(flag)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredFlag(i64);

impl Type<Any> for StoredFlag {
    fn type_info() -> AnyTypeInfo {
        <i64 as Type<Any>>::type_info()
    }

    fn compatible(ty: &AnyTypeInfo) -> bool {
        <i64 as Type<Any>>::compatible(ty)
    }
}

impl<'r> Decode<'r, Any> for StoredFlag {
    fn decode(value: AnyValueRef<'r>) -> Result<Self, BoxDynError> {
        Ok(StoredFlag(<i64 as Decode<'r, Any>>::decode(value)?))
    }
}

impl From<StoredFlag> for bool {
    fn from(flag: StoredFlag) -> bool {
        flag.0 != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every stored spelling reads back as its value, and `TryFrom<String>` agrees with `parse`.
    fn round_trips<T>(all: &[T], as_str: fn(T) -> &'static str, spelled: &[&str])
    where
        T: Copy + PartialEq + std::fmt::Debug + TryFrom<String, Error = UnknownWord>,
    {
        let texts: Vec<&str> = all.iter().map(|v| as_str(*v)).collect();
        assert_eq!(texts, spelled);
        for value in all {
            assert_eq!(T::try_from(as_str(*value).to_owned()), Ok(*value));
        }
        for unknown in ["", "Draft", " draft", "unknown", "COMPLETED"] {
            let refused = T::try_from(unknown.to_owned()).expect_err(unknown);
            assert_eq!(refused.text, unknown);
        }
    }

    #[test]
    fn session_statuses() {
        round_trips(
            SessionStatus::ALL,
            SessionStatus::as_str,
            &["draft", "started", "completed"],
        );
    }

    #[test]
    fn origins() {
        round_trips(
            Origin::ALL,
            Origin::as_str,
            &["import", "automated", "class_set"],
        );
    }

    #[test]
    fn indexing_states() {
        round_trips(
            IndexingState::ALL,
            IndexingState::as_str,
            &["queued", "running", "completed", "failed"],
        );
        let finished: Vec<_> = IndexingState::ALL
            .iter()
            .filter(|s| s.is_finished())
            .collect();
        assert_eq!(
            finished,
            [&IndexingState::Completed, &IndexingState::Failed]
        );
    }

    #[test]
    fn asset_kinds() {
        round_trips(AssetKind::ALL, AssetKind::as_str, &["work", "scheme"]);
    }

    #[test]
    fn job_states() {
        round_trips(
            JobState::ALL,
            JobState::as_str,
            &["queued", "running", "done", "failed", "cancelled"],
        );
        assert_eq!(JobState::parse("deleting"), None);
    }

    #[test]
    fn name_states() {
        round_trips(
            NameState::ALL,
            NameState::as_str,
            &["reading", "read", "failed"],
        );
        assert_eq!(NameState::parse("Read"), None);
    }

    #[test]
    fn page_roles() {
        round_trips(
            PageRole::ALL,
            PageRole::as_str,
            &["work", "scheme", "scheme_as_work", "clean_paper"],
        );
        assert_eq!(PageRole::parse("blank"), None);
        assert_eq!(PageRole::from(AssetKind::Work), PageRole::Work);
        assert_eq!(PageRole::from(AssetKind::Scheme), PageRole::Scheme);
    }

    #[test]
    fn page_states() {
        round_trips(
            PageState::ALL,
            PageState::as_str,
            &["ok", "failed", "reading"],
        );
        assert_eq!(PageState::parse("OK"), None);
        // `/v1` page views spell the state with serde, as the stored text.
        assert_eq!(
            serde_json::json!({ "state": PageState::Reading }).to_string(),
            r#"{"state":"reading"}"#
        );
    }

    #[test]
    fn question_statuses() {
        round_trips(
            QuestionStatus::ALL,
            QuestionStatus::as_str,
            &[
                "queued",
                "running",
                "completed",
                "needs_review",
                "failed",
                "cancelled",
            ],
        );
    }

    #[test]
    fn reviewer_kinds() {
        round_trips(
            ReviewerKind::ALL,
            ReviewerKind::as_str,
            &["teacher", "api_key"],
        );
    }

    /// In JSON each value is its stored text, and an unknown word is refused.
    #[test]
    fn json_spells_the_stored_text() {
        let values = serde_json::json!({
            "status": SessionStatus::Completed,
            "origin": Origin::ClassSet,
            "indexing": [Some(IndexingState::Running), None::<IndexingState>],
            "kind": AssetKind::Scheme,
            "question": QuestionStatus::NeedsReview,
            "reviewer": ReviewerKind::ApiKey,
        });
        assert_eq!(
            values.to_string(),
            r#"{"indexing":["running",null],"kind":"scheme","origin":"class_set","question":"needs_review","reviewer":"api_key","status":"completed"}"#
        );
        for status in QuestionStatus::ALL {
            let json = serde_json::to_string(status).expect("serialises");
            assert_eq!(json, format!("\"{}\"", status.as_str()));
            let back: QuestionStatus = serde_json::from_str(&json).expect("reads back");
            assert_eq!(back, *status);
        }
        let refused = serde_json::from_str::<AssetKind>(r#""sheet""#).expect_err("unknown");
        assert!(
            refused.to_string().contains("unknown asset kind"),
            "{refused}"
        );
        assert!(serde_json::from_str::<Origin>("1").is_err());
    }

    #[test]
    fn an_unknown_word_names_its_column() {
        let refused = AssetKind::try_from("sheet".to_owned()).expect_err("unknown");
        assert_eq!(refused.to_string(), "unknown asset kind \"sheet\"");
    }

    /// A row holding a word outside the set is refused when read, as a store error.
    #[tokio::test]
    async fn a_row_with_an_unknown_word_is_refused() {
        let pool = crate::store::memory_pool().await;
        let known: SessionStatus = sqlx::query_scalar("SELECT 'started'")
            .fetch_one(&pool)
            .await
            .expect("a known word");
        assert_eq!(known, SessionStatus::Started);
        let missing: Option<IndexingState> =
            sqlx::query_scalar::<_, Option<IndexingState>>("SELECT NULL")
                .fetch_one(&pool)
                .await
                .expect("no word");
        assert_eq!(missing, None);
        let refused = sqlx::query_scalar::<_, SessionStatus>("SELECT 'archived'")
            .fetch_one(&pool)
            .await
            .map_err(super::super::StoreError::from)
            .expect_err("an unknown word");
        assert!(
            refused
                .to_string()
                .contains("unknown session status \"archived\""),
            "{refused}"
        );
        let written: String = sqlx::query_scalar("SELECT $1")
            .bind(QuestionStatus::NeedsReview)
            .fetch_one(&pool)
            .await
            .expect("a written word");
        assert_eq!(written, "needs_review");
    }
}
