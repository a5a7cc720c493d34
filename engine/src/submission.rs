//! The typed submission the later stages read: views over the parsed document that give a field
//! only when it passed its own check in the structure stage, `None` (or nothing, for a list)
//! otherwise; that check has already reported the error, so later stages skip whatever depends on
//! it. When the document has no error at all, every field is present.
//!
//! Nothing is copied out of the document: a view is a handle on a value, and each field is looked
//! up when it is asked for. Memory therefore grows with the document, never with what a huge list
//! of tiny values would cost as typed records.

use uuid::Uuid;

use crate::json::{Items, Members, Node};
use crate::limits::MAX_LABEL_CHARS;
use crate::outcome::Decision;
use crate::pages::{PageId, canonical_uuid};
use crate::pointer::{Seg, pointer};
use crate::repeats::{PageSet, Seen};
use crate::rules::{
    CHECK_RESULTS, CONDITION_MODES, CheckResult, ConditionMode, DECISIONS, choice, integer,
    is_criterion_id, is_mark_code, page_id, page_number, text,
};

/// A value and the byte offset where it stands (for document order).
#[derive(Debug, Clone, Copy)]
pub(crate) struct At<T> {
    pub value: T,
    pub at: u32,
}

/// The whole submission.
#[derive(Clone, Copy)]
pub(crate) struct Submission<'d> {
    members: Option<Members<'d>>,
}

impl<'d> Submission<'d> {
    #[inline]
    pub(crate) fn new(root: Node<'d>) -> Self {
        Submission {
            members: root.as_object(),
        }
    }

    #[inline]
    fn coverage(self) -> Option<Members<'d>> {
        self.members?.get("coverage")?.as_object()
    }

    /// The questions; `None` when `questions` is absent or not an array.
    #[inline]
    pub(crate) fn questions(self) -> Option<Items<'d>> {
        self.members?.get("questions")?.as_array()
    }

    /// `coverage.questionLabels`, when every item is a non-empty string.
    #[inline]
    pub(crate) fn coverage_labels(self) -> Option<At<Items<'d>>> {
        let node = self.coverage()?.get("questionLabels")?;
        let items = node.as_array()?;
        items
            .into_iter()
            .all(|item| text(item).is_some())
            .then_some(At {
                value: items,
                at: node.start(),
            })
    }

    /// `coverage.totalMarks`, when it is an integer ≥ 0.
    #[inline]
    pub(crate) fn coverage_total(self) -> Option<At<f64>> {
        let node = self.coverage()?.get("totalMarks")?;
        integer(node, 0.0).map(|value| At {
            value,
            at: node.start(),
        })
    }
}

/// A question.
#[derive(Clone, Copy)]
pub(crate) struct Question<'d> {
    members: Option<Members<'d>>,
}

impl<'d> Question<'d> {
    #[inline]
    pub(crate) fn new(node: Node<'d>) -> Self {
        Question {
            members: node.as_object(),
        }
    }

    #[inline]
    fn get(self, name: &str) -> Option<Node<'d>> {
        self.members?.get(name)
    }

    #[inline]
    fn rubric(self) -> Option<Members<'d>> {
        self.get("rubric")?.as_object()
    }

    #[inline]
    pub(crate) fn label(self) -> Option<At<&'d str>> {
        let node = self.get("label")?;
        let label = text(node)?;
        (label.chars().count() <= MAX_LABEL_CHARS).then_some(At {
            value: label,
            at: node.start(),
        })
    }

    /// The `pageSelections` entries; `None` when it is absent or not an object.
    #[inline]
    pub(crate) fn selections(self) -> Option<At<Members<'d>>> {
        let node = self.get("pageSelections")?;
        node.as_object().map(|members| At {
            value: members,
            at: node.start(),
        })
    }

    /// `None` when the list (or the rubric) is absent or not an array.
    #[inline]
    pub(crate) fn parts(self) -> Option<Items<'d>> {
        self.rubric()?.get("parts")?.as_array()
    }

    #[inline]
    pub(crate) fn criteria(self) -> Option<Items<'d>> {
        self.rubric()?.get("criteria")?.as_array()
    }

    #[inline]
    pub(crate) fn decisions(self) -> Option<Items<'d>> {
        self.get("decisions")?.as_array()
    }

    #[inline]
    pub(crate) fn reported_awarded(self) -> Option<f64> {
        integer(self.get("reportedScore")?.as_object()?.get("awarded")?, 0.0)
    }

    #[inline]
    pub(crate) fn complete(self) -> Option<bool> {
        self.get("complete")?.as_bool()
    }
}

/// One `pageSelections` entry.
#[derive(Clone, Copy)]
pub(crate) struct Selection<'d> {
    pub key: &'d str,
    /// `None` when the key is not a canonical UUID.
    pub asset: Option<Uuid>,
    pub at: u32,
    list: Option<Items<'d>>,
}

/// A page number of a selection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SelectedPage {
    pub number: u32,
    pub index: usize,
    pub at: u32,
}

impl<'d> Selection<'d> {
    #[inline]
    pub(crate) fn new(key: &'d str, value: Node<'d>) -> Self {
        Selection {
            key,
            asset: canonical_uuid(key),
            at: value.start(),
            list: value.as_array(),
        }
    }

    /// The valid page numbers, each the first time it is listed, with its index in the list.
    #[inline]
    pub(crate) fn pages(self) -> impl Iterator<Item = SelectedPage> {
        let mut seen = PageSet::new();
        self.list
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(move |(index, item)| {
                let number = page_number(item)?;
                seen.insert(number).then_some(SelectedPage {
                    number,
                    index,
                    at: item.start(),
                })
            })
    }

    /// Whether the list is an array of valid page numbers (repeats aside).
    #[inline]
    pub(crate) fn all_pages_valid(self) -> bool {
        self.list
            .is_some_and(|items| items.into_iter().all(|item| page_number(item).is_some()))
    }
}

/// A rubric part.
#[derive(Clone, Copy)]
pub(crate) struct Part<'d> {
    members: Option<Members<'d>>,
}

impl<'d> Part<'d> {
    #[inline]
    pub(crate) fn new(node: Node<'d>) -> Self {
        Part {
            members: node.as_object(),
        }
    }

    #[inline]
    pub(crate) fn id(self) -> Option<At<&'d str>> {
        let node = self.members?.get("id")?;
        text(node).map(|id| At {
            value: id,
            at: node.start(),
        })
    }

    #[inline]
    pub(crate) fn max_marks(self) -> Option<At<f64>> {
        let node = self.members?.get("maxMarks")?;
        integer(node, 1.0).map(|max| At {
            value: max,
            at: node.start(),
        })
    }
}

/// A one-mark criterion.
#[derive(Clone, Copy)]
pub(crate) struct Criterion<'d> {
    pub at: u32,
    members: Option<Members<'d>>,
}

impl<'d> Criterion<'d> {
    #[inline]
    pub(crate) fn new(node: Node<'d>) -> Self {
        Criterion {
            at: node.start(),
            members: node.as_object(),
        }
    }

    #[inline]
    fn get(self, name: &str) -> Option<Node<'d>> {
        self.members?.get(name)
    }

    /// The id, when it matches its pattern.
    #[inline]
    pub(crate) fn id(self) -> Option<At<&'d str>> {
        let node = self.get("id")?;
        text(node).filter(|id| is_criterion_id(id)).map(|id| At {
            value: id,
            at: node.start(),
        })
    }

    /// The id as written when it is a string, even one that failed its pattern: references to it
    /// are then not reported again.
    #[inline]
    pub(crate) fn written_id(self) -> Option<&'d str> {
        text(self.get("id")?)
    }

    #[inline]
    pub(crate) fn part_id(self) -> Option<At<&'d str>> {
        let node = self.get("partId")?;
        text(node).map(|id| At {
            value: id,
            at: node.start(),
        })
    }

    #[inline]
    pub(crate) fn code(self) -> Option<&'d str> {
        text(self.get("code")?).filter(|code| is_mark_code(code))
    }

    /// The number of conditions, when `conditions` is an array.
    #[inline]
    pub(crate) fn conditions(self) -> Option<usize> {
        Some(self.get("conditions")?.as_array()?.len())
    }

    /// What the criterion rewards, as the scheme states it.
    pub(crate) fn requirement(self) -> Option<&'d str> {
        text(self.get("requirement")?)
    }

    /// The text of condition `index`, when `conditions` is an array holding it as a string.
    pub(crate) fn condition(self, index: usize) -> Option<&'d str> {
        text(self.get("conditions")?.as_array()?.nth(index)?)
    }

    #[inline]
    pub(crate) fn condition_mode(self) -> Option<ConditionMode> {
        choice(self.get("conditionMode")?, &CONDITION_MODES)
    }

    /// Every valid `dependsOn` entry (repeats included), with its index in the list.
    pub(crate) fn depends_on_entries(self) -> impl Iterator<Item = (usize, At<&'d str>)> {
        let items = self.get("dependsOn").and_then(Node::as_array);
        items
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(|(i, item)| {
                text(item).map(|id| {
                    (
                        i,
                        At {
                            value: id,
                            at: item.start(),
                        },
                    )
                })
            })
    }

    /// The valid `dependsOn` entries, each the first time it is listed, with its index in the list.
    #[inline]
    pub(crate) fn depends_on(self) -> impl Iterator<Item = (usize, At<&'d str>)> {
        let items = self.get("dependsOn").and_then(Node::as_array);
        let mut seen = Seen::new(items.unwrap_or_default());
        items
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(move |(i, item)| {
                let id = text(item)?;
                (!seen.repeat(i, id)).then_some((
                    i,
                    At {
                        value: id,
                        at: item.start(),
                    },
                ))
            })
    }

    /// The well-formed `sourcePageIds` of criterion `c` of question `q`.
    #[inline]
    pub(crate) fn source_pages(self, q: usize, c: usize) -> impl Iterator<Item = PageRef> {
        let items = self.get("sourcePageIds").and_then(Node::as_array);
        items
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(move |(item, node)| {
                page_id(node).map(|page| PageRef {
                    page,
                    at: node.start(),
                    citation: Citation::Source {
                        question: q,
                        criterion: c,
                        item,
                    },
                })
            })
    }
}

/// A decision on one criterion.
#[derive(Clone, Copy)]
pub(crate) struct DecisionRecord<'d> {
    members: Option<Members<'d>>,
}

impl<'d> DecisionRecord<'d> {
    #[inline]
    pub(crate) fn new(node: Node<'d>) -> Self {
        DecisionRecord {
            members: node.as_object(),
        }
    }

    #[inline]
    fn get(self, name: &str) -> Option<Node<'d>> {
        self.members?.get(name)
    }

    #[inline]
    pub(crate) fn criterion_id(self) -> Option<At<&'d str>> {
        let node = self.get("criterionId")?;
        text(node).map(|id| At {
            value: id,
            at: node.start(),
        })
    }

    #[inline]
    pub(crate) fn outcome(self) -> Option<Decision> {
        choice(self.get("outcome")?, &DECISIONS)
    }

    /// The marker's reason for the outcome.
    pub(crate) fn reason(self) -> Option<&'d str> {
        text(self.get("reason")?)
    }

    /// The decision's own evidence items, in order: each one's page (when its `pageId` is
    /// well-formed) and quote.
    pub(crate) fn quotes(self) -> impl Iterator<Item = (Option<PageId>, Option<&'d str>)> {
        self.get("evidence")
            .and_then(Node::as_array)
            .into_iter()
            .flatten()
            .map(|node| {
                let members = node.as_object();
                let page = members.and_then(|m| m.get("pageId")).and_then(page_id);
                let quote = members.and_then(|m| m.get("quote")).and_then(text);
                (page, quote)
            })
    }

    /// `conditionChecks`; `None` when it is absent or not an array.
    #[inline]
    pub(crate) fn checks(self) -> Option<At<Items<'d>>> {
        let node = self.get("conditionChecks")?;
        node.as_array().map(|items| At {
            value: items,
            at: node.start(),
        })
    }

    /// Every well-formed evidence page id of decision `d` of question `q`: the decision's own,
    /// then those of its condition checks.
    #[inline]
    pub(crate) fn evidence(self, q: usize, d: usize) -> impl Iterator<Item = PageRef> {
        let own = self
            .get("evidence")
            .and_then(Node::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(move |(item, node)| {
                evidence_page(node).map(|(page, at)| PageRef {
                    page,
                    at,
                    citation: Citation::Evidence {
                        question: q,
                        decision: d,
                        item,
                    },
                })
            });
        let checks = self
            .checks()
            .map(|checks| checks.value)
            .into_iter()
            .flatten()
            .enumerate()
            .flat_map(move |(check, node)| {
                let items = node
                    .as_object()
                    .and_then(|members| members.get("evidence"))
                    .and_then(Node::as_array);
                items
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .filter_map(move |(item, node)| {
                        evidence_page(node).map(|(page, at)| PageRef {
                            page,
                            at,
                            citation: Citation::CheckEvidence {
                                question: q,
                                decision: d,
                                check,
                                item,
                            },
                        })
                    })
            });
        own.chain(checks)
    }
}

/// The page id of an evidence item and where it stands, when the item is an object with a
/// well-formed `pageId`.
fn evidence_page(node: Node<'_>) -> Option<(PageId, u32)> {
    let page = node.as_object()?.get("pageId")?;
    page_id(page).map(|id| (id, page.start()))
}

/// A condition check.
#[derive(Clone, Copy)]
pub(crate) struct Check<'d> {
    members: Option<Members<'d>>,
}

impl<'d> Check<'d> {
    #[inline]
    pub(crate) fn new(node: Node<'d>) -> Self {
        Check {
            members: node.as_object(),
        }
    }

    #[inline]
    pub(crate) fn index(self) -> Option<At<f64>> {
        let node = self.members?.get("index")?;
        integer(node, 0.0).map(|index| At {
            value: index,
            at: node.start(),
        })
    }

    #[inline]
    pub(crate) fn result(self) -> Option<CheckResult> {
        choice(self.members?.get("result")?, &CHECK_RESULTS)
    }

    /// The marker's note on the check, when there is one.
    pub(crate) fn note(self) -> Option<&'d str> {
        text(self.members?.get("note")?)
    }
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
    #[inline]
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
