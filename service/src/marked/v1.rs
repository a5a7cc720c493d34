//! The question as `/v1` sends it (`MarkingQuestion` in `schemas/openapi.json`).

use serde_json::{Value, json};

use super::{MarkedCriterion, MarkedQuestion};
use crate::store::rfc3339;

impl MarkedQuestion {
    /// The question's `/v1` form: its score range, allocations with decisions, explanations and
    /// evidence, and review flags.
    pub fn to_v1(&self) -> Value {
        let s = &self.sources;
        json!({
            "id": self.id,
            "sessionId": self.session_id,
            "label": self.label,
            "status": self.status.as_str(),
            "revision": self.revision,
            "error": self.error,
            "markedBy": self.marked_by,
            "markerRun": self.marker_run.as_ref().map(|run| &run.record),
            "score": self.score,
            "sourceDocuments": {
                "workAssetIds": s.work_asset_ids,
                "schemeAssetIds": s.scheme_asset_ids,
                "pageSelections": s.page_selections,
            },
            "parts": self.parts,
            "allocations": self.criteria.iter().map(allocation).collect::<Vec<_>>(),
            "reviewFlags": self.review_flags,
            "createdAt": rfc3339(self.created_at),
            "updatedAt": rfc3339(self.updated_at),
        })
    }
}

/// One criterion as an allocation of one mark.
fn allocation(c: &MarkedCriterion) -> Value {
    let mut allocation = json!({
        "criterionId": c.id,
        "partId": c.part_id,
        "code": c.code,
        "requirement": c.requirement,
        "maxMarks": 1,
        "conditions": c.conditions,
        "dependsOn": c.depends_on,
        "sourcePageIds": c.source_page_ids,
        "submitted": c.submitted,
        "decision": c.effective,
        "flags": c.flags,
        "explanation": c.decision.reason,
        "evidence": c.decision.evidence,
        "conditionChecks": c.decision.condition_checks,
    });
    if let Some(mode) = c.condition_mode {
        allocation["conditionMode"] = json!(mode);
    }
    allocation
}
