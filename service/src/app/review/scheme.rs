//! The scheme a session made from a paper is marked against (its stored `scheme_json`, written
//! by [`crate::marking::paper_scheme`]), as the app reads it: each criterion's requirement and
//! accepted answers, by its question's label and its id. The review page shows the answers
//! beside each requirement; the results page names each mark most often lost by its
//! requirement.

use std::collections::HashMap;

use serde::Deserialize;

#[derive(Deserialize)]
struct Stored {
    questions: Vec<StoredQuestion>,
}

#[derive(Deserialize)]
struct StoredQuestion {
    label: String,
    #[serde(default)]
    criteria: Option<Vec<StoredCriterion>>,
}

#[derive(Deserialize)]
struct StoredCriterion {
    id: String,
    #[serde(default)]
    requirement: String,
    #[serde(default)]
    answers: Vec<String>,
}

/// A criterion of the scheme.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemeCriterion {
    /// What earns the mark (text with inline maths).
    pub requirement: String,
    /// The accepted answers (text with inline maths), in the scheme's order.
    pub answers: Vec<String>,
}

/// A session's scheme, by question label and criterion id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionScheme {
    criteria: HashMap<(String, String), SchemeCriterion>,
}

impl SessionScheme {
    /// Reads a stored scheme.
    pub fn read(json: &str) -> Result<SessionScheme, serde_json::Error> {
        let stored: Stored = serde_json::from_str(json)?;
        let criteria = stored
            .questions
            .into_iter()
            .flat_map(|q| {
                let label = q.label;
                q.criteria.into_iter().flatten().map(move |c| {
                    (
                        (label.clone(), c.id),
                        SchemeCriterion {
                            requirement: c.requirement,
                            answers: c.answers,
                        },
                    )
                })
            })
            .collect();
        Ok(SessionScheme { criteria })
    }

    /// Reads the stored scheme of session `session_id` (logged, and read as none, when it cannot
    /// be read): `None` for a session that has none.
    pub async fn of_session(
        store: &crate::store::Store,
        session_id: &str,
    ) -> Result<Option<SessionScheme>, crate::store::StoreError> {
        let Some(json) = store.session_scheme(session_id).await? else {
            return Ok(None);
        };
        Ok(match SessionScheme::read(&json) {
            Ok(scheme) => Some(scheme),
            Err(e) => {
                tracing::error!(session = %session_id, error = %e, "a session's stored scheme cannot be read");
                None
            }
        })
    }

    /// Criterion `id` of question `label`.
    pub fn criterion(&self, label: &str, id: &str) -> Option<&SchemeCriterion> {
        self.criteria.get(&(label.to_owned(), id.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criteria_are_found_by_question_label_and_id() {
        let scheme = SessionScheme::read(
            r#"{ "questions": [
                { "label": "1", "questionId": "x", "revision": 1, "title": "T", "marks": 2,
                  "parts": [], "criteria": [
                    { "id": "c1", "partId": "a", "code": "M1", "requirement": "Uses $x^2$",
                      "answers": ["$x = 3$", "$x = -3$"], "notes": [] },
                    { "id": "c2", "partId": "a", "code": "A1", "requirement": "cao",
                      "answers": [], "notes": [] } ] },
                { "label": "2", "criteria": [
                    { "id": "c1", "requirement": "Another", "answers": ["7"] } ] },
                { "label": "3", "criteria": null } ] }"#,
        )
        .expect("a scheme");
        let c1 = scheme.criterion("1", "c1").expect("c1");
        assert_eq!(c1.requirement, "Uses $x^2$");
        assert_eq!(c1.answers, ["$x = 3$", "$x = -3$"]);
        assert!(scheme.criterion("1", "c2").expect("c2").answers.is_empty());
        assert_eq!(scheme.criterion("2", "c1").expect("q2 c1").answers, ["7"]);
        assert!(scheme.criterion("3", "c1").is_none());
        assert!(scheme.criterion("4", "c1").is_none());
    }

    #[test]
    fn a_scheme_that_is_not_one_is_refused() {
        assert!(SessionScheme::read("{}").is_err());
        assert!(SessionScheme::read("[1]").is_err());
        assert!(SessionScheme::read(r#"{ "questions": [{ "criteria": [] }] }"#).is_err());
    }
}
