//! The structure stage: every field, type, constant, enum, pattern, format and limit of the schema,
//! checked over the parsed document. The later stages read the same document through the views of
//! [`crate::submission`], which give a field only when it passed its check here.
//!
//! A value that fails its own check is reported once and nothing inside it is checked further.

use crate::SCHEMA_VERSION;
use crate::collect::Errors;
use crate::error::ErrorCode;
use crate::formats::is_date_time;
use crate::geometry::{self, BoxDefect};
use crate::json::{Items, Node};
use crate::limits::{
    MAX_CRITERIA, MAX_CRITERION_ID_CHARS, MAX_LABEL_CHARS, MAX_PAGE_NUMBER, MAX_QUESTIONS,
};
use crate::pages::{canonical_uuid, parse_page_id};
use crate::pointer::Path;
use crate::repeats::{PageSet, Seen};
use crate::rules::{CHECK_RESULTS, CONDITION_MODES, DECISIONS, is_criterion_id, is_mark_code};

/// Checks the document, reporting every structural defect.
pub(crate) fn check(root: Node<'_>, errors: &mut Errors) {
    let mut reader = Reader { errors };
    reader.submission(root);
}

struct Reader<'e> {
    errors: &'e mut Errors,
}

/// The members of an object, looked up by the schema's field names.
struct Fields<'d, const N: usize> {
    values: [Option<Node<'d>>; N],
    /// Offset of the closing brace, where a missing field is placed in document order.
    end: u32,
}

impl<'d, const N: usize> Fields<'d, N> {
    fn get(&self, i: usize) -> Option<Node<'d>> {
        self.values[i]
    }
}

impl Reader<'_> {
    /// Reports an error; the path and message are built only if it can still be reported.
    fn error(
        &mut self,
        code: ErrorCode,
        path: &Path<'_>,
        at: u32,
        message: impl FnOnce() -> String,
    ) {
        self.errors.push(code, at, || path.render(), message);
    }

    /// Whether the checks of a list item (or a later one) can be skipped: every error an item
    /// raises stands within it, and none from `node` on can still be reported.
    fn past_reporting(&self, node: Node<'_>) -> bool {
        self.errors.closed_from(node.start())
    }

    fn type_error(&mut self, node: Node<'_>, path: &Path<'_>, expected: &str) {
        self.error(ErrorCode::Type, path, node.start(), || {
            format!("expected {expected}, found {}", node.type_name())
        });
    }

    fn object<'d, const N: usize>(
        &mut self,
        node: Node<'d>,
        path: &Path<'_>,
        names: [&'static str; N],
    ) -> Option<Fields<'d, N>> {
        let Some(members) = node.as_object() else {
            self.type_error(node, path, "an object");
            return None;
        };
        let mut values = [None; N];
        for (key, value) in members {
            match names.iter().position(|name| *name == key) {
                Some(i) => values[i] = Some(value),
                None => {
                    self.error(
                        ErrorCode::UnknownField,
                        &path.key(key),
                        value.start(),
                        || {
                            format!(
                                "unknown field {key:?}; expected one of: {}",
                                names.join(", ")
                            )
                        },
                    );
                }
            }
        }
        Some(Fields {
            values,
            end: node.end().saturating_sub(1),
        })
    }

    fn required<'d, const N: usize>(
        &mut self,
        fields: &Fields<'d, N>,
        i: usize,
        path: &Path<'_>,
        name: &str,
    ) -> Option<Node<'d>> {
        let node = fields.get(i);
        if node.is_none() {
            self.error(ErrorCode::Required, &path.key(name), fields.end, || {
                format!("{name} is required")
            });
        }
        node
    }

    /// A non-empty string.
    fn string<'d>(&mut self, node: Node<'d>, path: &Path<'_>) -> Option<&'d str> {
        let Some(text) = node.as_str() else {
            self.type_error(node, path, "a string");
            return None;
        };
        if text.is_empty() {
            self.error(ErrorCode::MinLength, path, node.start(), || {
                String::from("must not be empty")
            });
            return None;
        }
        Some(text)
    }

    fn number(&mut self, node: Node<'_>, path: &Path<'_>) -> Option<f64> {
        let number = node.as_number();
        if number.is_none() {
            self.type_error(node, path, "a number");
        }
        number
    }

    /// An integer: a number with no fractional part (`10` and `10.0`).
    fn integer(&mut self, node: Node<'_>, path: &Path<'_>, minimum: f64) -> Option<f64> {
        let Some(n) = node.as_number().filter(|n| n.fract() == 0.0) else {
            self.type_error(node, path, "an integer");
            return None;
        };
        if n < minimum {
            self.error(ErrorCode::Minimum, path, node.start(), || {
                format!("must be at least {minimum}")
            });
            return None;
        }
        Some(n)
    }

    fn boolean(&mut self, node: Node<'_>, path: &Path<'_>) {
        if node.as_bool().is_none() {
            self.type_error(node, path, "a boolean");
        }
    }

    fn constant(&mut self, node: Node<'_>, path: &Path<'_>, expected: &str) {
        match node.as_str() {
            Some(text) if text == expected => {}
            Some(text) => self.error(ErrorCode::Const, path, node.start(), || {
                format!("must be {expected:?}, found {text:?}")
            }),
            None => self.type_error(node, path, "a string"),
        }
    }

    fn choice<T: Copy>(
        &mut self,
        node: Node<'_>,
        path: &Path<'_>,
        options: &[(&str, T)],
    ) -> Option<T> {
        let Some(text) = node.as_str() else {
            self.type_error(node, path, "a string");
            return None;
        };
        if let Some((_, value)) = options.iter().find(|(name, _)| *name == text) {
            return Some(*value);
        }
        self.error(ErrorCode::Enum, path, node.start(), || {
            let names: Vec<String> = options
                .iter()
                .map(|(name, _)| format!("{name:?}"))
                .collect();
            format!("must be one of {}, found {text:?}", names.join(", "))
        });
        None
    }

    /// An array; a count outside `min..=max` is reported but the items are still returned.
    fn array<'d>(
        &mut self,
        node: Node<'d>,
        path: &Path<'_>,
        min: usize,
        max: usize,
    ) -> Option<Items<'d>> {
        let Some(items) = node.as_array() else {
            self.type_error(node, path, "an array");
            return None;
        };
        // Counting walks the list, so only as far as the limits need.
        let limit = if max == usize::MAX { min } else { max + 1 };
        let counted = items.take(limit).count();
        if counted < min {
            self.error(ErrorCode::MinItems, path, node.start(), || {
                format!(
                    "must hold at least {min} item{}",
                    if min == 1 { "" } else { "s" }
                )
            });
        } else if counted > max {
            self.error(ErrorCode::MaxItems, path, node.start(), || {
                format!("holds {} items; at most {max} are allowed", items.len())
            });
        }
        Some(items)
    }

    fn submission(&mut self, root: Node<'_>) {
        let path = Path::Root;
        let Some(f) = self.object(
            root,
            &path,
            [
                "schemaVersion",
                "coordinateSystem",
                "pageBasis",
                "source",
                "coverage",
                "questions",
            ],
        ) else {
            return;
        };
        let constants = [SCHEMA_VERSION, "normalized-top-left", "displayed-page"];
        for (i, (name, expected)) in ["schemaVersion", "coordinateSystem", "pageBasis"]
            .iter()
            .zip(constants)
            .enumerate()
        {
            if let Some(node) = self.required(&f, i, &path, name) {
                self.constant(node, &path.key(name), expected);
            }
        }
        if let Some(node) = self.required(&f, 3, &path, "source") {
            self.source(node, &path.key("source"));
        }
        if let Some(node) = self.required(&f, 4, &path, "coverage") {
            self.coverage(node, &path.key("coverage"));
        }
        if let Some(node) = self.required(&f, 5, &path, "questions") {
            let path = path.key("questions");
            if let Some(items) = self.array(node, &path, 1, MAX_QUESTIONS) {
                for (i, q) in items.enumerate() {
                    if self.past_reporting(q) {
                        break;
                    }
                    self.question(q, &path.index(i));
                }
            }
        }
    }

    fn source(&mut self, node: Node<'_>, path: &Path<'_>) {
        let Some(f) = self.object(node, path, ["kind", "name", "markedAt", "model"]) else {
            return;
        };
        let kind = self
            .required(&f, 0, path, "kind")
            .and_then(|n| self.choice(n, &path.key("kind"), &[("human", false), ("ai", true)]));
        if let Some(n) = self.required(&f, 1, path, "name") {
            self.string(n, &path.key("name"));
        }
        if let Some(n) = self.required(&f, 2, path, "markedAt") {
            let path = path.key("markedAt");
            if let Some(text) = self.string(n, &path) {
                if !is_date_time(text) {
                    self.error(ErrorCode::Format, &path, n.start(), || {
                        format!(
                            "{text:?} is not an RFC 3339 date-time with a time-zone offset, such as 2026-06-11T09:30:00Z"
                        )
                    });
                }
            }
        }
        match f.get(3) {
            Some(n) => {
                self.string(n, &path.key("model"));
            }
            None if kind == Some(true) => {
                self.error(ErrorCode::ModelRequired, &path.key("model"), f.end, || {
                    String::from(
                        "model is required when source.kind is \"ai\": name the model that marked the work",
                    )
                })
            }
            None => {}
        }
    }

    fn coverage(&mut self, node: Node<'_>, path: &Path<'_>) {
        let Some(f) = self.object(node, path, ["kind", "questionLabels", "totalMarks"]) else {
            return;
        };
        if let Some(n) = self.required(&f, 0, path, "kind") {
            self.choice(
                n,
                &path.key("kind"),
                &[("whole-paper", ()), ("partial", ())],
            );
        }
        if let Some(n) = self.required(&f, 1, path, "questionLabels") {
            let path = path.key("questionLabels");
            if let Some(items) = self.array(n, &path, 0, usize::MAX) {
                for (i, item) in items.enumerate() {
                    if self.past_reporting(item) {
                        break;
                    }
                    self.string(item, &path.index(i));
                }
            }
        }
        if let Some(n) = self.required(&f, 2, path, "totalMarks") {
            self.integer(n, &path.key("totalMarks"), 0.0);
        }
    }

    fn question(&mut self, node: Node<'_>, path: &Path<'_>) {
        let Some(f) = self.object(
            node,
            path,
            [
                "label",
                "pageSelections",
                "rubric",
                "decisions",
                "reportedScore",
                "complete",
            ],
        ) else {
            return;
        };
        if let Some(n) = self.required(&f, 0, path, "label") {
            let label_path = path.key("label");
            if let Some(label) = self.string(n, &label_path) {
                let chars = label.chars().count();
                if chars > MAX_LABEL_CHARS {
                    self.error(ErrorCode::MaxLength, &label_path, n.start(), || {
                        format!("is {chars} characters long; at most {MAX_LABEL_CHARS} are allowed")
                    });
                }
            }
        }
        if let Some(n) = self.required(&f, 1, path, "pageSelections") {
            self.selections(n, &path.key("pageSelections"));
        }
        if let Some(n) = self.required(&f, 2, path, "rubric") {
            self.rubric(n, &path.key("rubric"));
        }
        if let Some(n) = self.required(&f, 3, path, "decisions") {
            let path = path.key("decisions");
            if let Some(items) = self.array(n, &path, 0, usize::MAX) {
                for (d, item) in items.enumerate() {
                    if self.past_reporting(item) {
                        break;
                    }
                    self.decision(item, &path.index(d));
                }
            }
        }
        if let Some(n) = f.get(4) {
            let path = path.key("reportedScore");
            if let Some(score) = self.object(n, &path, ["awarded"]) {
                if let Some(awarded) = self.required(&score, 0, &path, "awarded") {
                    self.integer(awarded, &path.key("awarded"), 0.0);
                }
            }
        }
        if let Some(n) = f.get(5) {
            self.boolean(n, &path.key("complete"));
        }
    }

    fn selections(&mut self, node: Node<'_>, path: &Path<'_>) {
        let Some(members) = node.as_object() else {
            self.type_error(node, path, "an object mapping asset ids to page numbers");
            return;
        };
        for (key, value) in members {
            if self.past_reporting(value) {
                break;
            }
            let path = path.key(key);
            if canonical_uuid(key).is_none() {
                self.error(ErrorCode::Format, &path, value.start(), || {
                    format!(
                        "{key:?} is not a canonical lowercase asset UUID, such as 0f8fad5b-d9cb-469f-a165-70867728950e"
                    )
                });
            }
            let Some(items) = self.array(value, &path, 1, usize::MAX) else {
                continue;
            };
            let mut pages = PageSet::new();
            for (index, item) in items.enumerate() {
                if self.past_reporting(item) {
                    break;
                }
                let path = path.index(index);
                let Some(number) = self.integer(item, &path, 1.0) else {
                    continue;
                };
                if number > f64::from(MAX_PAGE_NUMBER) {
                    self.error(ErrorCode::Maximum, &path, item.start(), || {
                        format!("page {number} is above the highest page number, {MAX_PAGE_NUMBER}")
                    });
                    continue;
                }
                // In range 1..=10,000, so the conversion is exact.
                let number = number as u32;
                if !pages.insert(number) {
                    self.error(ErrorCode::UniqueItems, &path, item.start(), || {
                        format!("page {number} is selected twice")
                    });
                }
            }
        }
    }

    fn rubric(&mut self, node: Node<'_>, path: &Path<'_>) {
        let Some(f) = self.object(node, path, ["parts", "criteria"]) else {
            return;
        };
        if let Some(n) = self.required(&f, 0, path, "parts") {
            let path = path.key("parts");
            if let Some(items) = self.array(n, &path, 1, usize::MAX) {
                for (i, item) in items.enumerate() {
                    if self.past_reporting(item) {
                        break;
                    }
                    self.part(item, &path.index(i));
                }
            }
        }
        if let Some(n) = self.required(&f, 1, path, "criteria") {
            let path = path.key("criteria");
            if let Some(items) = self.array(n, &path, 1, MAX_CRITERIA) {
                for (c, item) in items.enumerate() {
                    if self.past_reporting(item) {
                        break;
                    }
                    self.criterion(item, &path.index(c));
                }
            }
        }
    }

    fn part(&mut self, node: Node<'_>, path: &Path<'_>) {
        let Some(f) = self.object(node, path, ["id", "label", "maxMarks"]) else {
            return;
        };
        if let Some(n) = self.required(&f, 0, path, "id") {
            self.string(n, &path.key("id"));
        }
        if let Some(n) = f.get(1) {
            self.string(n, &path.key("label"));
        }
        if let Some(n) = self.required(&f, 2, path, "maxMarks") {
            self.integer(n, &path.key("maxMarks"), 1.0);
        }
    }

    fn criterion(&mut self, node: Node<'_>, path: &Path<'_>) {
        let Some(f) = self.object(
            node,
            path,
            [
                "id",
                "partId",
                "code",
                "requirement",
                "conditions",
                "conditionMode",
                "dependsOn",
                "maxMarks",
                "sourcePageIds",
            ],
        ) else {
            return;
        };
        if let Some(n) = self.required(&f, 0, path, "id") {
            let path = path.key("id");
            if let Some(id) = self.string(n, &path) {
                if !is_criterion_id(id) {
                    self.error(ErrorCode::Pattern, &path, n.start(), || {
                        format!(
                            "{id:?} does not match ^[A-Za-z0-9._:-]{{1,{MAX_CRITERION_ID_CHARS}}}$"
                        )
                    });
                }
            }
        }
        if let Some(n) = self.required(&f, 1, path, "partId") {
            self.string(n, &path.key("partId"));
        }
        let mut code = None;
        if let Some(n) = self.required(&f, 2, path, "code") {
            let path = path.key("code");
            if let Some(text) = self.string(n, &path) {
                if is_mark_code(text) {
                    code = Some(text);
                } else {
                    self.error(ErrorCode::Pattern, &path, n.start(), || {
                        format!(
                            "{text:?} is not a mark code: M1, A1 or B1, optionally with a d prefix and an ft or * suffix (^d?[MAB]1(ft|\\*)?$)"
                        )
                    });
                }
            }
        }
        if let Some(n) = self.required(&f, 3, path, "requirement") {
            self.string(n, &path.key("requirement"));
        }
        let mut conditions = None;
        if let Some(n) = self.required(&f, 4, path, "conditions") {
            let path = path.key("conditions");
            if let Some(items) = self.array(n, &path, 0, usize::MAX) {
                for (i, item) in items.enumerate() {
                    if self.past_reporting(item) {
                        break;
                    }
                    self.string(item, &path.index(i));
                }
                conditions = Some(!items.is_empty());
            }
        }
        match f.get(5) {
            Some(n) => {
                self.choice(n, &path.key("conditionMode"), &CONDITION_MODES);
            }
            None if conditions == Some(true) => {
                self.error(ErrorCode::ConditionModeRequired, path, node.start(), || {
                    String::from(
                        "conditionMode (\"all\" or \"any\") is required when conditions is not empty",
                    )
                })
            }
            None => {}
        }
        if let Some(n) = self.required(&f, 6, path, "dependsOn") {
            let deps_path = path.key("dependsOn");
            if let Some(items) = self.array(n, &deps_path, 0, usize::MAX) {
                let mut seen = Seen::new(items);
                for (i, item) in items.enumerate() {
                    if self.past_reporting(item) {
                        break;
                    }
                    let item_path = deps_path.index(i);
                    let Some(id) = self.string(item, &item_path) else {
                        continue;
                    };
                    if seen.repeat(i, id) {
                        self.error(ErrorCode::UniqueItems, &item_path, item.start(), || {
                            format!("{id:?} is listed twice")
                        });
                    }
                }
                if let Some(code) = code.filter(|code| items.is_empty() && code.starts_with('d')) {
                    self.error(
                        ErrorCode::DependentCodeWithoutDependencies,
                        &deps_path,
                        n.start(),
                        || {
                            format!(
                                "the dependent code {code} must list the criteria it depends on; dependencies are never inferred from a code"
                            )
                        },
                    );
                }
            }
        }
        if let Some(n) = self.required(&f, 7, path, "maxMarks") {
            let path = path.key("maxMarks");
            if let Some(max) = self.number(n, &path) {
                if max != 1.0 {
                    self.error(ErrorCode::Const, &path, n.start(), || {
                        format!(
                            "must be 1: every criterion is worth one mark (a withheld mark keeps maxMarks 1; the decision carries the zero), found {max}"
                        )
                    });
                }
            }
        }
        if let Some(n) = self.required(&f, 8, path, "sourcePageIds") {
            let path = path.key("sourcePageIds");
            if let Some(items) = self.array(n, &path, 1, usize::MAX) {
                for (item, page_node) in items.enumerate() {
                    if self.past_reporting(page_node) {
                        break;
                    }
                    self.page_id(page_node, &path.index(item));
                }
            }
        }
    }

    fn page_id(&mut self, node: Node<'_>, path: &Path<'_>) {
        let Some(text) = self.string(node, path) else {
            return;
        };
        if parse_page_id(text).is_none() {
            self.error(ErrorCode::InvalidPageId, path, node.start(), || {
                format!(
                    "{text:?} is not a page id <asset uuid>:p<n> (canonical lowercase UUID, n from 1 to {MAX_PAGE_NUMBER} without leading zeros)"
                )
            });
        }
    }

    fn decision(&mut self, node: Node<'_>, path: &Path<'_>) {
        let Some(f) = self.object(
            node,
            path,
            [
                "criterionId",
                "outcome",
                "reason",
                "evidence",
                "conditionChecks",
            ],
        ) else {
            return;
        };
        if let Some(n) = self.required(&f, 0, path, "criterionId") {
            self.string(n, &path.key("criterionId"));
        }
        if let Some(n) = self.required(&f, 1, path, "outcome") {
            self.choice(n, &path.key("outcome"), &DECISIONS);
        }
        if let Some(n) = self.required(&f, 2, path, "reason") {
            self.string(n, &path.key("reason"));
        }
        if let Some(n) = self.required(&f, 3, path, "evidence") {
            let path = path.key("evidence");
            if let Some(items) = self.array(n, &path, 1, usize::MAX) {
                for (item, evidence) in items.enumerate() {
                    if self.past_reporting(evidence) {
                        break;
                    }
                    self.evidence(evidence, &path.index(item));
                }
            }
        }
        if let Some(n) = self.required(&f, 4, path, "conditionChecks") {
            let path = path.key("conditionChecks");
            if let Some(items) = self.array(n, &path, 0, usize::MAX) {
                for (c, item) in items.enumerate() {
                    if self.past_reporting(item) {
                        break;
                    }
                    self.check(item, &path.index(c));
                }
            }
        }
    }

    fn check(&mut self, node: Node<'_>, path: &Path<'_>) {
        let Some(f) = self.object(node, path, ["index", "result", "note", "evidence"]) else {
            return;
        };
        if let Some(n) = self.required(&f, 0, path, "index") {
            self.integer(n, &path.key("index"), 0.0);
        }
        if let Some(n) = self.required(&f, 1, path, "result") {
            self.choice(n, &path.key("result"), &CHECK_RESULTS);
        }
        if let Some(n) = f.get(2) {
            self.string(n, &path.key("note"));
        }
        if let Some(n) = f.get(3) {
            let path = path.key("evidence");
            if let Some(items) = self.array(n, &path, 1, usize::MAX) {
                for (item, node) in items.enumerate() {
                    if self.past_reporting(node) {
                        break;
                    }
                    self.evidence(node, &path.index(item));
                }
            }
        }
    }

    fn evidence(&mut self, node: Node<'_>, path: &Path<'_>) {
        let Some(f) = self.object(node, path, ["pageId", "quote", "box"]) else {
            return;
        };
        if let Some(n) = self.required(&f, 0, path, "pageId") {
            self.page_id(n, &path.key("pageId"));
        }
        if let Some(n) = self.required(&f, 1, path, "quote") {
            self.string(n, &path.key("quote"));
        }
        if let Some(n) = self.required(&f, 2, path, "box") {
            self.evidence_box(n, &path.key("box"));
        }
    }

    fn evidence_box(&mut self, node: Node<'_>, path: &Path<'_>) {
        const NAMES: [&str; 4] = ["x", "y", "width", "height"];
        let Some(f) = self.object(node, path, NAMES) else {
            return;
        };
        let mut values = [None; 4];
        for (i, name) in NAMES.iter().enumerate() {
            if let Some(n) = self.required(&f, i, path, name) {
                values[i] = self.number(n, &path.key(name)).map(|v| (v, n.start()));
            }
        }
        for defect in geometry::check_box(values.map(|v| v.map(|(value, _)| value))) {
            let (code, field) = match defect {
                BoxDefect::Outside { field } | BoxDefect::PastEdge { field, .. } => {
                    (ErrorCode::BoxOutOfBounds, field)
                }
                BoxDefect::NotPositive { field } => (ErrorCode::BoxNotPositive, field),
            };
            let message = move || match defect {
                BoxDefect::Outside { field } => {
                    format!("{} must lie within the page, from 0 to 1", NAMES[field])
                }
                BoxDefect::NotPositive { field } => format!(
                    "{} must be greater than 0: an evidence box has a positive area",
                    NAMES[field]
                ),
                BoxDefect::PastEdge {
                    field,
                    origin,
                    extent,
                } => format!(
                    "{} + {} = {} is past the page edge at 1",
                    NAMES[origin], NAMES[field], extent
                ),
            };
            let at = values[field].map_or(node.start(), |(_, at)| at);
            self.error(code, &path.key(NAMES[field]), at, message);
        }
    }
}
