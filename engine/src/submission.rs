//! The typed submission that the structure stage reads out of the JSON tree.
//!
//! A field is `None` (or left out of a list) when it is absent or failed its own check; that check
//! has already reported the error, so later stages skip whatever depends on it. When the document has
//! no error at all, every field is present.

use uuid::Uuid;

use crate::outcome::Decision;
use crate::pages::PageId;
use crate::pointer::{Seg, pointer};

/// A value and the byte offset where it stands (for document order).
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<T> {
    pub value: T,
    pub at: u32,
}

/// The whole submission.
#[derive(Debug, Default)]
pub(crate) struct Submission<'n> {
    pub coverage_labels: Option<At<Vec<&'n str>>>,
    pub coverage_total: Option<At<f64>>,
    /// `None` when `questions` is absent or not an array.
    pub questions: Option<Vec<Question<'n>>>,
}

/// A question.
#[derive(Debug, Default)]
pub(crate) struct Question<'n> {
    pub label: Option<At<&'n str>>,
    /// `None` when `pageSelections` is absent or not an object.
    pub selections: Option<At<Vec<Selection<'n>>>>,
    /// `None` when the list (or the rubric) is absent or not an array.
    pub parts: Option<Vec<Part<'n>>>,
    pub criteria: Option<Vec<Criterion<'n>>>,
    pub decisions: Option<Vec<DecisionRecord<'n>>>,
    pub reported_awarded: Option<f64>,
    pub complete: Option<bool>,
}

/// One `pageSelections` entry.
#[derive(Debug)]
pub(crate) struct Selection<'n> {
    pub key: &'n str,
    /// `None` when the key is not a canonical UUID.
    pub asset: Option<Uuid>,
    pub at: u32,
    /// The valid page numbers, with their index in the list.
    pub pages: Vec<SelectedPage>,
    /// Whether every item of the list was a valid page number.
    pub all_pages_valid: bool,
}

/// A page number of a selection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SelectedPage {
    pub number: u32,
    pub index: usize,
    pub at: u32,
}

/// A rubric part.
#[derive(Debug)]
pub(crate) struct Part<'n> {
    pub id: Option<At<&'n str>>,
    pub max_marks: Option<At<f64>>,
}

/// How conditions combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConditionMode {
    All,
    Any,
}

/// A one-mark criterion.
#[derive(Debug)]
pub(crate) struct Criterion<'n> {
    pub at: u32,
    pub id: Option<At<&'n str>>,
    /// The id as written when it is a string, even one that failed its pattern: references to it
    /// are then not reported again.
    pub written_id: Option<&'n str>,
    pub part_id: Option<At<&'n str>>,
    pub code: Option<&'n str>,
    /// The number of conditions, when `conditions` is an array.
    pub conditions: Option<usize>,
    pub condition_mode: Option<ConditionMode>,
    /// The valid, non-repeated `dependsOn` entries, with their index in the list.
    pub depends_on: Vec<(usize, At<&'n str>)>,
    pub depends_on_present: bool,
    /// The well-formed `sourcePageIds`.
    pub source_pages: Vec<PageRef>,
}

/// A condition check's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CheckResult {
    Met,
    NotMet,
    Uncertain,
}

/// A condition check.
#[derive(Debug)]
pub(crate) struct Check {
    pub index: Option<At<f64>>,
    pub result: Option<CheckResult>,
}

/// A decision on one criterion.
#[derive(Debug)]
pub(crate) struct DecisionRecord<'n> {
    pub criterion_id: Option<At<&'n str>>,
    pub outcome: Option<Decision>,
    /// Every well-formed evidence page id, of the decision and of its condition checks.
    pub evidence: Vec<PageRef>,
    /// `None` when `conditionChecks` is absent or not an array.
    pub checks: Option<At<Vec<Check>>>,
}

/// Where a page id was cited.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Citation {
    /// `/questions/{q}/rubric/criteria/{c}/sourcePageIds/{i}`
    Source {
        question: usize,
        criterion: usize,
        item: usize,
    },
    /// `/questions/{q}/decisions/{d}/evidence/{e}/pageId`
    Evidence {
        question: usize,
        decision: usize,
        item: usize,
    },
    /// `/questions/{q}/decisions/{d}/conditionChecks/{c}/evidence/{e}/pageId`
    CheckEvidence {
        question: usize,
        decision: usize,
        check: usize,
        item: usize,
    },
}

impl Citation {
    /// The JSON Pointer of the page id.
    pub(crate) fn pointer(self) -> String {
        use Seg::{Index, Key};
        match self {
            Citation::Source {
                question,
                criterion,
                item,
            } => pointer(&[
                Key("questions"),
                Index(question),
                Key("rubric"),
                Key("criteria"),
                Index(criterion),
                Key("sourcePageIds"),
                Index(item),
            ]),
            Citation::Evidence {
                question,
                decision,
                item,
            } => pointer(&[
                Key("questions"),
                Index(question),
                Key("decisions"),
                Index(decision),
                Key("evidence"),
                Index(item),
                Key("pageId"),
            ]),
            Citation::CheckEvidence {
                question,
                decision,
                check,
                item,
            } => pointer(&[
                Key("questions"),
                Index(question),
                Key("decisions"),
                Index(decision),
                Key("conditionChecks"),
                Index(check),
                Key("evidence"),
                Index(item),
                Key("pageId"),
            ]),
        }
    }
}

/// A well-formed page id and where it was cited.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PageRef {
    pub page: PageId,
    pub at: u32,
    pub citation: Citation,
}
