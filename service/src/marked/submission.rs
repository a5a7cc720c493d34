//! A marked question written back in the import contract's shape, as the engine scores it.

use serde_json::{Value, json};

use super::{MarkedCriterion, MarkedQuestion};

impl MarkedQuestion {
    /// The question as the contract has it: label, page selections, rubric, the decisions in the
    /// order they are stored, and the marker's claims. `None` for a question not marked.
    pub fn contract_question(&self) -> Option<Value> {
        let selections = self.sources.page_selections.as_ref()?;
        let decisions: Vec<Value> = self
            .decision_order
            .iter()
            .filter_map(|&k| self.criteria.get(k))
            .map(MarkedCriterion::contract_decision)
            .collect();
        let mut question = json!({
            "label": self.label,
            "pageSelections": selections,
            "rubric": {
                "parts": self.rubric_parts,
                "criteria": self.criteria.iter().map(criterion).collect::<Vec<_>>(),
            },
            "decisions": decisions,
        });
        if let Some(awarded) = &self.claims.reported_awarded {
            question["reportedScore"] = json!({ "awarded": awarded });
        }
        if let Some(complete) = self.claims.complete {
            question["complete"] = json!(complete);
        }
        Some(question)
    }

    /// Where the decision on criterion `id` stands among the stored decisions.
    pub fn decision_position(&self, id: &str) -> Option<usize> {
        self.decision_order
            .iter()
            .position(|&k| self.criteria.get(k).is_some_and(|c| c.id == id))
    }
}

fn criterion(c: &MarkedCriterion) -> Value {
    let mut criterion = json!({
        "id": c.id,
        "partId": c.part_id,
        "code": c.code,
        "requirement": c.requirement,
        "conditions": c.conditions,
        "dependsOn": c.depends_on,
        "maxMarks": c.max_marks,
        "sourcePageIds": c.source_page_ids,
    });
    if let Some(mode) = c.condition_mode {
        criterion["conditionMode"] = json!(mode);
    }
    criterion
}

impl MarkedCriterion {
    /// The decision on the criterion as the contract has it.
    pub fn contract_decision(&self) -> Value {
        json!({
            "criterionId": self.id,
            "outcome": self.decision.outcome,
            "reason": self.decision.reason,
            "evidence": self.decision.evidence,
            "conditionChecks": self.decision.condition_checks,
        })
    }
}
