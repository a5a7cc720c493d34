//! The stable codes of a failed question (`error.code` of a question whose status is `failed` or
//! `cancelled`): one table for jobs and markers, published in `schemas/openapi.json` (the
//! question's `error.code`) and `schemas/README.md`, and tested against both.

examkit_engine::code_table! {
    /// Why a question was not marked, in the published order.
    pub enum FailureCode {
        NoStudentWork = "no_student_work", "No selected page is a student's work (every one is the clean paper, a scheme or flagged).";
        NoEvidencePages = "no_evidence_pages", "The marker was given no page that could be evidence.";
        QuestionNotFound = "question_not_found", "No page of the uploaded work shows the question.";
        SchemeRequired = "scheme_required", "The session has no indexed scheme page to cite.";
        SchemeUnreadable = "scheme_unreadable", "The session's structured scheme could not be read.";
        PageNotIndexed = "page_not_indexed", "A selected page was not indexed.";
        MarkerTimeout = "marker_timeout", "The marker did not answer in time, retries included.";
        MarkerUnreachable = "marker_unreachable", "The marker could not be reached, retries included.";
        MarkerHttpStatus = "marker_http_status", "The marker refused the call (400, 401, 403, 404…), or a 429 or 5xx outlasted its retries.";
        MarkerInvalidJson = "marker_invalid_json", "The marker's answer was not JSON of the expected shape, after one repair request.";
        MarkerAnswerInvalid = "marker_answer_invalid", "The marker's answer failed the engine or the answer check; the problems are in error.details.errors.";
        MarkerRubricMismatch = "marker_rubric_mismatch", "The marker's rubric is not the session's scheme.";
        EvidenceNotStudentWork = "evidence_not_student_work", "The marker cited a page that is not the student's work.";
        MarkingAllowanceExhausted = "marking_allowance_exhausted", "The account's daily allowance of marked questions was used.";
        WorkerLost = "worker_lost", "The job's worker stopped before finishing it, attempt after attempt.";
        StorageFailed = "storage_failed", "The database could not be read or written, retries included.";
        JobFailed = "job_failed", "Anything else; the message says what.";
        Cancelled = "cancelled", "The question was cancelled (by its owner, or because automated marking was switched off).";
    }
}

impl PartialEq<&str> for FailureCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::FailureCode;

    fn root(path: &str) -> String {
        let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(path);
        std::fs::read_to_string(full).expect("readable")
    }

    fn ours() -> BTreeSet<&'static str> {
        FailureCode::ALL.iter().map(|c| c.as_str()).collect()
    }

    #[test]
    fn codes_are_unique_snake_case_and_documented() {
        assert_eq!(ours().len(), FailureCode::ALL.len());
        for code in FailureCode::ALL {
            let text = code.as_str();
            assert!(
                text.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{text}"
            );
            assert!(code.meaning().ends_with('.'), "{text}");
            assert_eq!(code.to_string(), text);
            assert!(*code == text);
        }
    }

    #[test]
    fn every_code_is_spelled_as_stored_and_round_trips() {
        let spelled = [
            "no_student_work",
            "no_evidence_pages",
            "question_not_found",
            "scheme_required",
            "scheme_unreadable",
            "page_not_indexed",
            "marker_timeout",
            "marker_unreachable",
            "marker_http_status",
            "marker_invalid_json",
            "marker_answer_invalid",
            "marker_rubric_mismatch",
            "evidence_not_student_work",
            "marking_allowance_exhausted",
            "worker_lost",
            "storage_failed",
            "job_failed",
            "cancelled",
        ];
        let ours: Vec<&str> = FailureCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(ours, spelled);
        for code in FailureCode::ALL {
            let json = serde_json::to_string(code).expect("serialises");
            assert_eq!(json, format!("\"{}\"", code.as_str()));
            assert_eq!(serde_json::from_str::<FailureCode>(&json).ok(), Some(*code));
            assert_eq!(code.as_str().parse::<FailureCode>(), Ok(*code));
        }
        assert!("JobFailed".parse::<FailureCode>().is_err());
        assert!(serde_json::from_str::<FailureCode>("\"job\"").is_err());
    }

    #[test]
    fn the_openapi_document_lists_exactly_these_codes() {
        let doc: serde_json::Value =
            serde_json::from_str(&root("schemas/openapi.json")).expect("JSON");
        let listed: BTreeSet<&str> = doc["components"]["schemas"]["MarkingQuestion"]["properties"]
            ["error"]["properties"]["code"]["enum"]
            .as_array()
            .expect("the question's error.code enum")
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        assert_eq!(listed, ours());
    }

    #[test]
    fn the_schemas_readme_lists_exactly_these_codes() {
        let readme = root("schemas/README.md");
        let start = readme
            .find("A failed question's `error.code` is one of")
            .expect("the published list");
        let end = start
            + readme[start..]
                .find("; a cancelled one's is `cancelled`")
                .expect("its end");
        let mut listed: BTreeSet<&str> = readme[start..end].split('`').skip(3).step_by(2).collect();
        listed.insert("cancelled");
        assert_eq!(listed, ours());
    }
}
