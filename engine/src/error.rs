//! The one error vocabulary of the engine: stable codes, messages and JSON Pointer paths.

use serde::Serialize;

crate::code_table! {
    /// Why a submission is invalid. Each variant has a stable snake_case code.
    pub enum ErrorCode {
        InvalidJson = "invalid_json", "The document is not well-formed UTF-8 JSON (syntax error, duplicate object key, lone surrogate, byte order mark, number out of range or empty input).";
        NestingTooDeep = "nesting_too_deep", "Arrays and objects nest deeper than 128 levels; the document is not parsed further.";
        PayloadTooLarge = "payload_too_large", "The document is larger than 4 MiB (4,194,304 bytes); it is rejected without being parsed.";
        UnknownField = "unknown_field", "An object has a field the schema does not define.";
        Required = "required", "A required field is absent.";
        Type = "type", "A value has the wrong JSON type (null is never accepted; an integer must have no fractional part).";
        Const = "const", "A value differs from the only value allowed (schemaVersion, coordinateSystem, pageBasis, criterion maxMarks).";
        Enum = "enum", "A string is not one of the allowed values.";
        Pattern = "pattern", "A string does not match its pattern (criterion id, criterion code).";
        Format = "format", "A string is not in its format (RFC 3339 date-time with offset; canonical lowercase UUID as a pageSelections key).";
        MinLength = "min_length", "A string is shorter than allowed: strings must be non-empty.";
        MaxLength = "max_length", "A string is longer than allowed (a question label over 40 characters).";
        MinItems = "min_items", "An array has fewer items than allowed.";
        MaxItems = "max_items", "An array has more items than allowed (24 questions, 100 criteria per question).";
        UniqueItems = "unique_items", "An array that must hold unique items repeats one (page numbers of a selection, dependsOn entries); reported at the repeat.";
        Minimum = "minimum", "A number is below its minimum.";
        Maximum = "maximum", "A number is above its maximum.";
        DuplicateLabel = "duplicate_label", "Two questions share a label; reported at the later one.";
        DuplicatePartId = "duplicate_part_id", "Two parts of one question share an id; reported at the later one.";
        DuplicateCriterionId = "duplicate_criterion_id", "Two criteria share an id anywhere in the submission; reported at the later one.";
        UnknownPart = "unknown_part", "A criterion's partId names no part of its question.";
        PartMaxMismatch = "part_max_mismatch", "A part's maxMarks differs from the number of criteria in it.";
        UnknownDependency = "unknown_dependency", "A dependsOn entry names no criterion of the submission.";
        SelfDependency = "self_dependency", "A criterion lists itself in dependsOn.";
        CrossQuestionDependency = "cross_question_dependency", "A dependsOn entry names a criterion of another question.";
        DependencyCycle = "dependency_cycle", "dependsOn entries form a cycle; reported at each entry on the cycle, naming every member.";
        DependentCodeWithoutDependencies = "dependent_code_without_dependencies", "A dependent (d-prefixed) code has an empty dependsOn; dependencies are never inferred from the code.";
        ConditionModeRequired = "condition_mode_required", "A criterion with conditions has no conditionMode.";
        MissingDecision = "missing_decision", "A criterion has no decision.";
        DuplicateDecision = "duplicate_decision", "A second decision names the same criterion; reported at the later one.";
        UnknownCriterion = "unknown_criterion", "A decision's criterionId names no criterion of its question.";
        ConditionCheckMissing = "condition_check_missing", "A decision has no check for one of its criterion's conditions.";
        ConditionCheckDuplicate = "condition_check_duplicate", "A decision checks the same condition index twice; reported at the later one.";
        ConditionIndexOutOfRange = "condition_index_out_of_range", "A condition check's index is not below the criterion's number of conditions.";
        InvalidPageId = "invalid_page_id", "A page id is not <canonical lowercase asset uuid>:p<n> with 1 <= n <= 10000 and no leading zeros.";
        PageNotSelected = "page_not_selected", "A cited page is not among the question's pageSelections.";
        UnknownAsset = "unknown_asset", "A pageSelections key is not one of the import's assets (checked only when assets are given).";
        PageOutOfRange = "page_out_of_range", "A selected page number is above its asset's page count (checked only when assets are given).";
        AssetRoleMismatch = "asset_role_mismatch", "Evidence cites a scheme page, or sourcePageIds cites a work page (checked only when assets are given).";
        MissingPageRole = "missing_page_role", "A question selects no work page, or no scheme page (checked only when assets are given).";
        BoxOutOfBounds = "box_out_of_bounds", "An evidence box reaches outside the page: x or y outside 0 to 1, or x + width or y + height above 1 (+1e-9).";
        BoxNotPositive = "box_not_positive", "An evidence box has a width or height that is not above 0.";
        ModelRequired = "model_required", "source.kind is \"ai\" but source.model is absent.";
        CoverageMismatch = "coverage_mismatch", "coverage.questionLabels differs from the question labels in order, or coverage.totalMarks from the number of criteria.";
    }
}

crate::code_table! {
    /// Why a valid submission's question needs a person's review.
    pub enum FlagCode {
        UncertainDecision = "uncertain_decision", "The submitted outcome is uncertain.";
        ConditionConflict = "condition_conflict", "An awarded mark with conditions not met, or a withheld mark with conditions met; the effective outcome becomes uncertain.";
        ConditionUncertain = "condition_uncertain", "An awarded mark whose conditions are uncertain; the effective outcome becomes uncertain.";
        DependencyWithheld = "dependency_withheld", "A mark that was awarded or uncertain depends on an effectively withheld mark; it becomes withheld.";
        DependencyUncertain = "dependency_uncertain", "An awarded mark depends on an effectively uncertain mark; it becomes uncertain.";
        ReportedScoreMismatch = "reported_score_mismatch", "reportedScore.awarded differs from the computed awarded score (which is what counts).";
        CompletionClaimOverridden = "completion_claim_overridden", "complete: true on a question that has review flags; the computed status is needs_review.";
    }
}

/// One reason a submission is invalid: a stable code, a message for people and where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ValidationError {
    /// RFC 6901 JSON Pointer into the submitted document (`""` is the whole document).
    pub path: String,
    /// The stable code.
    pub code: ErrorCode,
    /// A sentence for people; not stable.
    pub message: String,
    /// Byte offset in the document used to put errors in document order; not serialised.
    #[serde(skip)]
    pub(crate) at: u32,
}

impl ValidationError {
    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    pub(crate) fn new(code: ErrorCode, path: String, at: u32, message: impl Into<String>) -> Self {
        ValidationError {
            path,
            code,
            message: message.into(),
            at,
        }
    }
}

impl std::fmt::Display for ValidationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = if self.path.is_empty() {
            "(document)"
        } else {
            &self.path
        };
        write!(f, "{path}: {} ({})", self.message, self.code)
    }
}

impl std::error::Error for ValidationError {}

#[cfg(test)]
mod tests {
    use super::{ErrorCode, FlagCode};

    /// Every error code, spelled out: they are in outcomes, stored rows and
    /// `schemas/error-codes.json` (which `tests/error_codes.rs` checks against `ALL`).
    const ERRORS: &[&str] = &[
        "invalid_json",
        "nesting_too_deep",
        "payload_too_large",
        "unknown_field",
        "required",
        "type",
        "const",
        "enum",
        "pattern",
        "format",
        "min_length",
        "max_length",
        "min_items",
        "max_items",
        "unique_items",
        "minimum",
        "maximum",
        "duplicate_label",
        "duplicate_part_id",
        "duplicate_criterion_id",
        "unknown_part",
        "part_max_mismatch",
        "unknown_dependency",
        "self_dependency",
        "cross_question_dependency",
        "dependency_cycle",
        "dependent_code_without_dependencies",
        "condition_mode_required",
        "missing_decision",
        "duplicate_decision",
        "unknown_criterion",
        "condition_check_missing",
        "condition_check_duplicate",
        "condition_index_out_of_range",
        "invalid_page_id",
        "page_not_selected",
        "unknown_asset",
        "page_out_of_range",
        "asset_role_mismatch",
        "missing_page_role",
        "box_out_of_bounds",
        "box_not_positive",
        "model_required",
        "coverage_mismatch",
    ];

    /// Every flag code, spelled out.
    const FLAGS: &[&str] = &[
        "uncertain_decision",
        "condition_conflict",
        "condition_uncertain",
        "dependency_withheld",
        "dependency_uncertain",
        "reported_score_mismatch",
        "completion_claim_overridden",
    ];

    #[test]
    fn error_codes_are_spelled_as_published_and_round_trip() {
        let ours: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(ours, ERRORS);
        for code in ErrorCode::ALL {
            let json = serde_json::to_string(code).expect("serialises");
            assert_eq!(json, format!("\"{code}\""));
            assert_eq!(serde_json::from_str::<ErrorCode>(&json).ok(), Some(*code));
            assert_eq!(code.as_str().parse::<ErrorCode>(), Ok(*code));
        }
        assert!("Required".parse::<ErrorCode>().is_err());
        assert!(serde_json::from_str::<ErrorCode>("\"uncertain_decision\"").is_err());
    }

    #[test]
    fn flag_codes_are_spelled_as_published_and_round_trip() {
        let ours: Vec<&str> = FlagCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(ours, FLAGS);
        for code in FlagCode::ALL {
            let json = serde_json::to_string(code).expect("serialises");
            assert_eq!(json, format!("\"{code}\""));
            assert_eq!(serde_json::from_str::<FlagCode>(&json).ok(), Some(*code));
            assert_eq!(code.as_str().parse::<FlagCode>(), Ok(*code));
        }
        assert!(serde_json::from_str::<FlagCode>("\"required\"").is_err());
    }
}
