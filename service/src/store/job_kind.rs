//! What a job of automated marking does, with its arguments: [`JobKind`], stored in a
//! `marking_jobs` row as its `kind` text and its `payload` JSON text. The queue (`super::jobs`)
//! stores a kind as [`JobKind::kind`] and [`JobKind::payload`] give it; a worker reads a claimed
//! job back once with [`JobKind::decode`]. What each kind does is in `crate::marking`.
//!
//! The texts are those every job has always been stored with, so that jobs already queued in a
//! database still read:
//!
//! | kind             | payload                                                    |
//! | ---------------- | ---------------------------------------------------------- |
//! | `index_page`     | `{"assetId":…,"page":…}`, `,"placedAs":{"copy":…,"page":…}` when placed by hand |
//! | `plan_questions` | `{}` (not read)                                            |
//! | `mark_question`  | `{"questionId":…}`                                         |
//! | `read_name`      | `{"assetId":…,"page":…}`                                   |

use serde::{Deserialize, Serialize};

/// A job of automated marking and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobKind {
    /// Index one page of one uploaded asset.
    IndexPage(IndexPage),
    /// Place a paper session's questions on its indexed pages and queue one marking job per
    /// question (queued with the last page of indexing).
    PlanQuestions,
    /// Mark one question.
    MarkQuestion(MarkQuestion),
    /// Read the name written on a named copy's cover (queued with the cover's index).
    ReadName(ReadName),
}

/// The page an indexing job reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexPage {
    /// The uploaded asset.
    pub asset_id: String,
    /// Its page, from 1.
    pub page: i64,
    /// Where a person placed a stack page whose code could not be read: the page is read again
    /// as that copy's page, lined up with its clean print like a page found by its code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placed_as: Option<PlacedAs>,
}

/// A copy's page, as a person placed a stack page there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacedAs {
    /// The copy.
    pub copy: u32,
    /// Its page, from 1.
    pub page: u32,
}

/// The question a marking job marks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MarkQuestion {
    /// The question's id.
    pub question_id: String,
}

/// The cover whose written name a job reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadName {
    /// The stack file.
    pub asset_id: String,
    /// Its page, from 1.
    pub page: i64,
}

const INDEX_PAGE: &str = "index_page";
const PLAN_QUESTIONS: &str = "plan_questions";
const MARK_QUESTION: &str = "mark_question";
const READ_NAME: &str = "read_name";

/// Why a stored job cannot be read: no retry can mend it.
#[derive(Debug, thiserror::Error)]
pub enum JobKindError {
    /// No job has this kind.
    #[error("unknown job kind {0:?}")]
    Unknown(String),
    /// The payload is not the kind's arguments.
    #[error("malformed job: {0}")]
    Malformed(#[from] serde_json::Error),
}

impl JobKind {
    /// The kind, as stored.
    pub fn kind(&self) -> &'static str {
        match self {
            JobKind::IndexPage(_) => INDEX_PAGE,
            JobKind::PlanQuestions => PLAN_QUESTIONS,
            JobKind::MarkQuestion(_) => MARK_QUESTION,
            JobKind::ReadName(_) => READ_NAME,
        }
    }

    /// The arguments, as stored: JSON text.
    pub fn payload(&self) -> String {
        let written = match self {
            JobKind::IndexPage(page) => serde_json::to_string(page),
            JobKind::PlanQuestions => return "{}".to_owned(),
            JobKind::MarkQuestion(question) => serde_json::to_string(question),
            JobKind::ReadName(cover) => serde_json::to_string(cover),
        };
        // Strings and integers under string keys: writing them cannot fail.
        written.unwrap_or_else(|_| "{}".to_owned())
    }

    /// Reads a stored job's `kind` and `payload`. Fields a payload has beyond its kind's are
    /// ignored, and a planning job's payload is not read, as they never were.
    pub fn decode(kind: &str, payload: &str) -> Result<JobKind, JobKindError> {
        Ok(match kind {
            INDEX_PAGE => JobKind::IndexPage(serde_json::from_str(payload)?),
            PLAN_QUESTIONS => JobKind::PlanQuestions,
            MARK_QUESTION => JobKind::MarkQuestion(serde_json::from_str(payload)?),
            READ_NAME => JobKind::ReadName(serde_json::from_str(payload)?),
            other => return Err(JobKindError::Unknown(other.to_owned())),
        })
    }
}

impl From<IndexPage> for JobKind {
    fn from(page: IndexPage) -> Self {
        JobKind::IndexPage(page)
    }
}

impl From<MarkQuestion> for JobKind {
    fn from(question: MarkQuestion) -> Self {
        JobKind::MarkQuestion(question)
    }
}

impl From<ReadName> for JobKind {
    fn from(cover: ReadName) -> Self {
        JobKind::ReadName(cover)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ASSET: &str = "3f1c2a9e-7b4d-4e8a-9c1f-0a2b3c4d5e6f";

    fn index(page: i64, placed_as: Option<PlacedAs>) -> JobKind {
        JobKind::IndexPage(IndexPage {
            asset_id: ASSET.to_owned(),
            page,
            placed_as,
        })
    }

    /// Every kind with the exact text it is stored as.
    fn stored() -> Vec<(JobKind, &'static str, String)> {
        vec![
            (
                index(3, None),
                "index_page",
                format!(r#"{{"assetId":"{ASSET}","page":3}}"#),
            ),
            (
                index(12, Some(PlacedAs { copy: 7, page: 2 })),
                "index_page",
                format!(r#"{{"assetId":"{ASSET}","page":12,"placedAs":{{"copy":7,"page":2}}}}"#),
            ),
            (JobKind::PlanQuestions, "plan_questions", "{}".to_owned()),
            (
                JobKind::MarkQuestion(MarkQuestion {
                    question_id: "q-1".to_owned(),
                }),
                "mark_question",
                r#"{"questionId":"q-1"}"#.to_owned(),
            ),
            (
                JobKind::ReadName(ReadName {
                    asset_id: ASSET.to_owned(),
                    page: 1,
                }),
                "read_name",
                format!(r#"{{"assetId":"{ASSET}","page":1}}"#),
            ),
        ]
    }

    #[test]
    fn each_kind_is_stored_as_it_always_was() {
        for (job, kind, payload) in stored() {
            assert_eq!(job.kind(), kind, "{job:?}");
            assert_eq!(job.payload(), payload, "{job:?}");
        }
    }

    #[test]
    fn payloads_match_the_json_they_were_built_as_before() {
        // The texts the queue was given before the kinds were typed.
        let placed = serde_json::json!({ "copy": 7, "page": 2 });
        let before = [
            serde_json::json!({ "assetId": ASSET, "page": 3 }).to_string(),
            serde_json::json!({ "assetId": ASSET, "page": 12, "placedAs": placed }).to_string(),
            "{}".to_owned(),
            serde_json::json!({ "questionId": "q-1" }).to_string(),
            serde_json::json!({ "assetId": ASSET, "page": 1 }).to_string(),
        ];
        let now: Vec<String> = stored().iter().map(|(job, ..)| job.payload()).collect();
        assert_eq!(now, before);
    }

    #[test]
    fn each_kind_reads_back_as_written() {
        for (job, kind, payload) in stored() {
            let read = JobKind::decode(kind, &payload).expect("a stored job reads");
            assert_eq!(read, job);
            let again = JobKind::decode(read.kind(), &read.payload()).expect("reads again");
            assert_eq!(again, job);
        }
    }

    #[test]
    fn strings_that_need_escaping_round_trip() {
        let job = JobKind::MarkQuestion(MarkQuestion {
            question_id: "a \"quoted\" \\ id\n".to_owned(),
        });
        assert_eq!(job.payload(), r#"{"questionId":"a \"quoted\" \\ id\n"}"#);
        assert_eq!(
            JobKind::decode(job.kind(), &job.payload()).expect("reads"),
            job
        );
    }

    #[test]
    fn fields_beyond_a_kinds_are_ignored_and_a_plan_reads_no_payload() {
        assert_eq!(
            JobKind::decode(
                "read_name",
                &format!(r#"{{"page":1,"assetId":"{ASSET}","extra":true}}"#)
            )
            .expect("reads"),
            JobKind::ReadName(ReadName {
                asset_id: ASSET.to_owned(),
                page: 1,
            })
        );
        assert_eq!(
            JobKind::decode("plan_questions", "").expect("reads"),
            JobKind::PlanQuestions
        );
    }

    #[test]
    fn an_unknown_kind_is_refused() {
        for kind in ["test", "", "Index_Page", "index-page", "plan_questions "] {
            let refused = JobKind::decode(kind, "{}").expect_err(kind);
            assert!(matches!(&refused, JobKindError::Unknown(k) if k == kind));
            assert_eq!(refused.to_string(), format!("unknown job kind {kind:?}"));
        }
    }

    #[test]
    fn a_malformed_payload_is_refused() {
        let malformed = [
            ("index_page", "not json"),
            ("index_page", "{}"),
            ("index_page", r#"{"assetId":"a"}"#),
            ("index_page", r#"{"assetId":"a","page":"3"}"#),
            (
                "index_page",
                r#"{"assetId":"a","page":3,"placedAs":{"copy":-1,"page":1}}"#,
            ),
            ("mark_question", "{}"),
            ("mark_question", r#"{"questionId":7}"#),
            ("mark_question", "[]"),
            ("read_name", r#"{"assetId":"a"}"#),
            ("read_name", r#"{"assetId":null,"page":1}"#),
        ];
        for (kind, payload) in malformed {
            let refused = JobKind::decode(kind, payload).expect_err(payload);
            assert!(
                matches!(refused, JobKindError::Malformed(_)),
                "{kind} {payload}: {refused:?}"
            );
            assert!(refused.to_string().starts_with("malformed job: "));
        }
    }
}
