//! The one error vocabulary of the engine: stable codes, messages and JSON Pointer paths.

use serde::Serialize;

macro_rules! codes {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident { $( $(#[$vmeta:meta])* $variant:ident = $code:literal : $meaning:literal ),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name { $( $(#[$vmeta])* $variant ),+ }

        impl $name {
            /// Every value, in the order they are documented.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stable identifier, as it appears in outcomes and in `schemas/error-codes.json`.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $code),+ }
            }

            /// A one-line meaning, as published in `schemas/error-codes.json`.
            pub const fn meaning(self) -> &'static str {
                match self { $($name::$variant => $meaning),+ }
            }

            /// Looks a code up by its stable identifier.
            pub fn from_code(code: &str) -> Option<Self> {
                match code { $($code => Some($name::$variant),)+ _ => None }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }
    };
}

codes! {
    /// Why a submission is invalid. Each variant has a stable snake_case code.
    pub enum ErrorCode {
        /// The bytes are not one well-formed JSON value.
        InvalidJson = "invalid_json": "The document is not well-formed UTF-8 JSON (syntax error, duplicate object key, lone surrogate, byte order mark, number out of range or empty input).",
        /// Containers nest deeper than a document may (128 levels).
        NestingTooDeep = "nesting_too_deep": "Arrays and objects nest deeper than 128 levels; the document is not parsed further.",
        /// The document is larger than 4 MiB.
        PayloadTooLarge = "payload_too_large": "The document is larger than 4 MiB (4,194,304 bytes); it is rejected without being parsed.",
        /// An object has a field the schema does not define.
        UnknownField = "unknown_field": "An object has a field the schema does not define.",
        /// A required field is absent.
        Required = "required": "A required field is absent.",
        /// A value has the wrong JSON type (including null, and a fractional number where an integer is required).
        Type = "type": "A value has the wrong JSON type (null is never accepted; an integer must have no fractional part).",
        /// A value differs from the only allowed constant.
        Const = "const": "A value differs from the only value allowed (schemaVersion, coordinateSystem, pageBasis, criterion maxMarks).",
        /// A string is not one of the allowed values.
        Enum = "enum": "A string is not one of the allowed values.",
        /// A string does not match the required pattern.
        Pattern = "pattern": "A string does not match its pattern (criterion id, criterion code).",
        /// A string is not in the required format.
        Format = "format": "A string is not in its format (RFC 3339 date-time with offset; canonical lowercase UUID as a pageSelections key).",
        /// A string is shorter than allowed (empty).
        MinLength = "min_length": "A string is shorter than allowed: strings must be non-empty.",
        /// A string is longer than allowed.
        MaxLength = "max_length": "A string is longer than allowed (a question label over 40 characters).",
        /// An array has fewer items than allowed.
        MinItems = "min_items": "An array has fewer items than allowed.",
        /// An array has more items than allowed.
        MaxItems = "max_items": "An array has more items than allowed (24 questions, 100 criteria per question).",
        /// An array that must hold unique items holds a repeat.
        UniqueItems = "unique_items": "An array that must hold unique items repeats one (page numbers of a selection, dependsOn entries); reported at the repeat.",
        /// A number is below its minimum.
        Minimum = "minimum": "A number is below its minimum.",
        /// A number is above its maximum.
        Maximum = "maximum": "A number is above its maximum.",
        /// Two questions share a label.
        DuplicateLabel = "duplicate_label": "Two questions share a label; reported at the later one.",
        /// Two parts of one question share an id.
        DuplicatePartId = "duplicate_part_id": "Two parts of one question share an id; reported at the later one.",
        /// Two criteria of the submission share an id.
        DuplicateCriterionId = "duplicate_criterion_id": "Two criteria share an id anywhere in the submission; reported at the later one.",
        /// A criterion names a part its question does not have.
        UnknownPart = "unknown_part": "A criterion's partId names no part of its question.",
        /// A part's maxMarks differs from its number of criteria.
        PartMaxMismatch = "part_max_mismatch": "A part's maxMarks differs from the number of criteria in it.",
        /// A dependsOn entry names no criterion.
        UnknownDependency = "unknown_dependency": "A dependsOn entry names no criterion of the submission.",
        /// A criterion depends on itself.
        SelfDependency = "self_dependency": "A criterion lists itself in dependsOn.",
        /// A criterion depends on a criterion of another question.
        CrossQuestionDependency = "cross_question_dependency": "A dependsOn entry names a criterion of another question.",
        /// The dependencies of a question form a cycle.
        DependencyCycle = "dependency_cycle": "dependsOn entries form a cycle; reported at each entry on the cycle, naming every member.",
        /// A `d` code lists no dependencies.
        DependentCodeWithoutDependencies = "dependent_code_without_dependencies": "A dependent (d-prefixed) code has an empty dependsOn; dependencies are never inferred from the code.",
        /// A criterion with conditions has no conditionMode.
        ConditionModeRequired = "condition_mode_required": "A criterion with conditions has no conditionMode.",
        /// A criterion has no decision.
        MissingDecision = "missing_decision": "A criterion has no decision.",
        /// A criterion has more than one decision.
        DuplicateDecision = "duplicate_decision": "A second decision names the same criterion; reported at the later one.",
        /// A decision names no criterion of its question.
        UnknownCriterion = "unknown_criterion": "A decision's criterionId names no criterion of its question.",
        /// A condition has no check.
        ConditionCheckMissing = "condition_check_missing": "A decision has no check for one of its criterion's conditions.",
        /// A condition is checked twice.
        ConditionCheckDuplicate = "condition_check_duplicate": "A decision checks the same condition index twice; reported at the later one.",
        /// A check's index names no condition.
        ConditionIndexOutOfRange = "condition_index_out_of_range": "A condition check's index is not below the criterion's number of conditions.",
        /// A page id is not `<asset uuid>:p<n>`.
        InvalidPageId = "invalid_page_id": "A page id is not <canonical lowercase asset uuid>:p<n> with 1 <= n <= 10000 and no leading zeros.",
        /// A cited page is not selected for the question.
        PageNotSelected = "page_not_selected": "A cited page is not among the question's pageSelections.",
        /// A selected asset is not one of the import's assets.
        UnknownAsset = "unknown_asset": "A pageSelections key is not one of the import's assets (checked only when assets are given).",
        /// A selected page does not exist in its asset.
        PageOutOfRange = "page_out_of_range": "A selected page number is above its asset's page count (checked only when assets are given).",
        /// A page of the wrong role is cited.
        AssetRoleMismatch = "asset_role_mismatch": "Evidence cites a scheme page, or sourcePageIds cites a work page (checked only when assets are given).",
        /// A question selects no work page or no scheme page.
        MissingPageRole = "missing_page_role": "A question selects no work page, or no scheme page (checked only when assets are given).",
        /// An evidence box reaches outside the page.
        BoxOutOfBounds = "box_out_of_bounds": "An evidence box reaches outside the page: x or y outside 0 to 1, or x + width or y + height above 1 (+1e-9).",
        /// An evidence box has no area.
        BoxNotPositive = "box_not_positive": "An evidence box has a width or height that is not above 0.",
        /// An AI source does not name its model.
        ModelRequired = "model_required": "source.kind is \"ai\" but source.model is absent.",
        /// Coverage disagrees with the questions.
        CoverageMismatch = "coverage_mismatch": "coverage.questionLabels differs from the question labels in order, or coverage.totalMarks from the number of criteria.",
    }
}

codes! {
    /// Why a valid submission's question needs a person's review.
    pub enum FlagCode {
        /// The marker was not sure.
        UncertainDecision = "uncertain_decision": "The submitted outcome is uncertain.",
        /// The decision contradicts its condition checks.
        ConditionConflict = "condition_conflict": "An awarded mark with conditions not met, or a withheld mark with conditions met; the effective outcome becomes uncertain.",
        /// An awarded mark rests on uncertain conditions.
        ConditionUncertain = "condition_uncertain": "An awarded mark whose conditions are uncertain; the effective outcome becomes uncertain.",
        /// A dependency is withheld.
        DependencyWithheld = "dependency_withheld": "A mark that was awarded or uncertain depends on an effectively withheld mark; it becomes withheld.",
        /// A dependency is uncertain.
        DependencyUncertain = "dependency_uncertain": "An awarded mark depends on an effectively uncertain mark; it becomes uncertain.",
        /// The reported score differs from the computed one.
        ReportedScoreMismatch = "reported_score_mismatch": "reportedScore.awarded differs from the computed awarded score (which is what counts).",
        /// The submission claimed completion of a question that needs review.
        CompletionClaimOverridden = "completion_claim_overridden": "complete: true on a question that has review flags; the computed status is needs_review.",
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
