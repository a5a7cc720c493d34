//! The structure stage: every field, type, constant, enum, pattern, format and limit of the schema,
//! checked while the JSON tree is read into the typed [`Submission`].
//!
//! A value that fails its own check is reported once and nothing inside it is checked further.

use crate::SCHEMA_VERSION;
use crate::error::{ErrorCode, ValidationError};
use crate::formats::is_date_time;
use crate::geometry::{self, BoxDefect};
use crate::json::{Node, Value};
use crate::limits::{
    MAX_CRITERIA, MAX_CRITERION_ID_CHARS, MAX_LABEL_CHARS, MAX_PAGE_NUMBER, MAX_QUESTIONS,
};
use crate::outcome::Decision;
use crate::pages::{canonical_uuid, parse_page_id};
use crate::pointer::Path;
use crate::submission::{
    At, Check, CheckResult, Citation, ConditionMode, Criterion, DecisionRecord, PageRef, Part,
    Question, SelectedPage, Selection, Submission,
};

/// Reads the document into a [`Submission`], reporting every structural defect.
pub(crate) fn read<'n>(root: &'n Node<'_>, errors: &mut Vec<ValidationError>) -> Submission<'n> {
    let mut reader = Reader { errors };
    reader.submission(root)
}

struct Reader<'e> {
    errors: &'e mut Vec<ValidationError>,
}

/// The members of an object, looked up by the schema's field names.
struct Fields<'n, 'a, const N: usize> {
    values: [Option<&'n Node<'a>>; N],
    /// Offset of the closing brace, where a missing field is placed in document order.
    end: u32,
}

impl<'n, 'a, const N: usize> Fields<'n, 'a, N> {
    fn get(&self, i: usize) -> Option<&'n Node<'a>> {
        self.values[i]
    }
}

impl Reader<'_> {
    fn error(&mut self, code: ErrorCode, path: &Path<'_>, at: u32, message: impl Into<String>) {
        self.errors
            .push(ValidationError::new(code, path.render(), at, message));
    }

    fn type_error(&mut self, node: &Node<'_>, path: &Path<'_>, expected: &str) {
        let message = format!("expected {expected}, found {}", node.value.type_name());
        self.error(ErrorCode::Type, path, node.start, message);
    }

    fn object<'n, 'a, const N: usize>(
        &mut self,
        node: &'n Node<'a>,
        path: &Path<'_>,
        names: [&'static str; N],
    ) -> Option<Fields<'n, 'a, N>> {
        let Value::Object(members) = &node.value else {
            self.type_error(node, path, "an object");
            return None;
        };
        let mut values = [None; N];
        for (key, value) in members {
            match names.iter().position(|name| name == key) {
                Some(i) => values[i] = Some(value),
                None => {
                    let message = format!(
                        "unknown field {:?}; expected one of: {}",
                        key.as_ref(),
                        names.join(", ")
                    );
                    self.error(
                        ErrorCode::UnknownField,
                        &path.key(key),
                        value.start,
                        message,
                    );
                }
            }
        }
        Some(Fields {
            values,
            end: node.end.saturating_sub(1),
        })
    }

    fn required<'n, 'a, const N: usize>(
        &mut self,
        fields: &Fields<'n, 'a, N>,
        i: usize,
        path: &Path<'_>,
        name: &str,
    ) -> Option<&'n Node<'a>> {
        let node = fields.get(i);
        if node.is_none() {
            self.error(
                ErrorCode::Required,
                &path.key(name),
                fields.end,
                format!("{name} is required"),
            );
        }
        node
    }

    /// A non-empty string.
    fn string<'n>(&mut self, node: &'n Node<'_>, path: &Path<'_>) -> Option<&'n str> {
        let Value::String(text) = &node.value else {
            self.type_error(node, path, "a string");
            return None;
        };
        if text.is_empty() {
            self.error(ErrorCode::MinLength, path, node.start, "must not be empty");
            return None;
        }
        Some(text)
    }

    fn number(&mut self, node: &Node<'_>, path: &Path<'_>) -> Option<f64> {
        match node.value {
            Value::Number(n) => Some(n),
            _ => {
                self.type_error(node, path, "a number");
                None
            }
        }
    }

    /// An integer: a number with no fractional part (`10` and `10.0`).
    fn integer(&mut self, node: &Node<'_>, path: &Path<'_>, minimum: f64) -> Option<f64> {
        let n = match node.value {
            Value::Number(n) if n.fract() == 0.0 => n,
            _ => {
                self.type_error(node, path, "an integer");
                return None;
            }
        };
        if n < minimum {
            self.error(
                ErrorCode::Minimum,
                path,
                node.start,
                format!("must be at least {minimum}"),
            );
            return None;
        }
        Some(n)
    }

    fn boolean(&mut self, node: &Node<'_>, path: &Path<'_>) -> Option<bool> {
        match node.value {
            Value::Bool(b) => Some(b),
            _ => {
                self.type_error(node, path, "a boolean");
                None
            }
        }
    }

    fn constant(&mut self, node: &Node<'_>, path: &Path<'_>, expected: &str) {
        match &node.value {
            Value::String(text) if text == expected => {}
            Value::String(text) => {
                let message = format!("must be {expected:?}, found {:?}", text.as_ref());
                self.error(ErrorCode::Const, path, node.start, message);
            }
            _ => self.type_error(node, path, "a string"),
        }
    }

    fn choice<T: Copy>(
        &mut self,
        node: &Node<'_>,
        path: &Path<'_>,
        options: &[(&str, T)],
    ) -> Option<T> {
        let Value::String(text) = &node.value else {
            self.type_error(node, path, "a string");
            return None;
        };
        if let Some((_, value)) = options.iter().find(|(name, _)| name == text) {
            return Some(*value);
        }
        let names: Vec<String> = options
            .iter()
            .map(|(name, _)| format!("{name:?}"))
            .collect();
        let message = format!(
            "must be one of {}, found {:?}",
            names.join(", "),
            text.as_ref()
        );
        self.error(ErrorCode::Enum, path, node.start, message);
        None
    }

    /// An array; a count outside `min..=max` is reported but the items are still returned.
    fn array<'n, 'a>(
        &mut self,
        node: &'n Node<'a>,
        path: &Path<'_>,
        min: usize,
        max: usize,
    ) -> Option<&'n [Node<'a>]> {
        let Value::Array(items) = &node.value else {
            self.type_error(node, path, "an array");
            return None;
        };
        if items.len() < min {
            let message = format!(
                "must hold at least {min} item{}",
                if min == 1 { "" } else { "s" }
            );
            self.error(ErrorCode::MinItems, path, node.start, message);
        } else if items.len() > max {
            let message = format!("holds {} items; at most {max} are allowed", items.len());
            self.error(ErrorCode::MaxItems, path, node.start, message);
        }
        Some(items)
    }

    fn submission<'n>(&mut self, root: &'n Node<'_>) -> Submission<'n> {
        let path = Path::Root;
        let mut submission = Submission::default();
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
            return submission;
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
            self.coverage(node, &path.key("coverage"), &mut submission);
        }
        if let Some(node) = self.required(&f, 5, &path, "questions") {
            let path = path.key("questions");
            if let Some(items) = self.array(node, &path, 1, MAX_QUESTIONS) {
                let questions = items
                    .iter()
                    .enumerate()
                    .map(|(i, q)| self.question(q, &path.index(i), i))
                    .collect();
                submission.questions = Some(questions);
            }
        }
        submission
    }

    fn source(&mut self, node: &Node<'_>, path: &Path<'_>) {
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
                    let message = format!(
                        "{text:?} is not an RFC 3339 date-time with a time-zone offset, such as 2026-06-11T09:30:00Z"
                    );
                    self.error(ErrorCode::Format, &path, n.start, message);
                }
            }
        }
        match f.get(3) {
            Some(n) => {
                self.string(n, &path.key("model"));
            }
            None if kind == Some(true) => self.error(
                ErrorCode::ModelRequired,
                &path.key("model"),
                f.end,
                "model is required when source.kind is \"ai\": name the model that marked the work",
            ),
            None => {}
        }
    }

    fn coverage<'n>(&mut self, node: &'n Node<'_>, path: &Path<'_>, out: &mut Submission<'n>) {
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
                let labels: Vec<Option<&'n str>> = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.string(item, &path.index(i)))
                    .collect();
                if let Some(labels) = labels.into_iter().collect::<Option<Vec<_>>>() {
                    out.coverage_labels = Some(At {
                        value: labels,
                        at: n.start,
                    });
                }
            }
        }
        if let Some(n) = self.required(&f, 2, path, "totalMarks") {
            if let Some(total) = self.integer(n, &path.key("totalMarks"), 0.0) {
                out.coverage_total = Some(At {
                    value: total,
                    at: n.start,
                });
            }
        }
    }

    fn question<'n>(&mut self, node: &'n Node<'_>, path: &Path<'_>, q: usize) -> Question<'n> {
        let mut question = Question::default();
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
            return question;
        };
        if let Some(n) = self.required(&f, 0, path, "label") {
            let label_path = path.key("label");
            if let Some(label) = self.string(n, &label_path) {
                let chars = label.chars().count();
                if chars > MAX_LABEL_CHARS {
                    let message = format!(
                        "is {chars} characters long; at most {MAX_LABEL_CHARS} are allowed"
                    );
                    self.error(ErrorCode::MaxLength, &label_path, n.start, message);
                } else {
                    question.label = Some(At {
                        value: label,
                        at: n.start,
                    });
                }
            }
        }
        if let Some(n) = self.required(&f, 1, path, "pageSelections") {
            question.selections = self.selections(n, &path.key("pageSelections"));
        }
        if let Some(n) = self.required(&f, 2, path, "rubric") {
            self.rubric(n, &path.key("rubric"), q, &mut question);
        }
        if let Some(n) = self.required(&f, 3, path, "decisions") {
            let path = path.key("decisions");
            if let Some(items) = self.array(n, &path, 0, usize::MAX) {
                let decisions = items
                    .iter()
                    .enumerate()
                    .map(|(d, item)| self.decision(item, &path.index(d), q, d));
                question.decisions = Some(decisions.collect());
            }
        }
        if let Some(n) = f.get(4) {
            let path = path.key("reportedScore");
            if let Some(score) = self.object(n, &path, ["awarded"]) {
                if let Some(awarded) = self.required(&score, 0, &path, "awarded") {
                    question.reported_awarded = self.integer(awarded, &path.key("awarded"), 0.0);
                }
            }
        }
        if let Some(n) = f.get(5) {
            question.complete = self.boolean(n, &path.key("complete"));
        }
        question
    }

    fn selections<'n>(
        &mut self,
        node: &'n Node<'_>,
        path: &Path<'_>,
    ) -> Option<At<Vec<Selection<'n>>>> {
        let Value::Object(members) = &node.value else {
            self.type_error(node, path, "an object mapping asset ids to page numbers");
            return None;
        };
        let mut selections = Vec::with_capacity(members.len());
        for (key, value) in members {
            let path = path.key(key);
            let asset = canonical_uuid(key);
            if asset.is_none() {
                let message = format!(
                    "{:?} is not a canonical lowercase asset UUID, such as 0f8fad5b-d9cb-469f-a165-70867728950e",
                    key.as_ref()
                );
                self.error(ErrorCode::Format, &path, value.start, message);
            }
            let mut pages = Vec::new();
            let mut all_pages_valid = false;
            if let Some(items) = self.array(value, &path, 1, usize::MAX) {
                all_pages_valid = true;
                for (index, item) in items.iter().enumerate() {
                    let path = path.index(index);
                    let Some(number) = self.integer(item, &path, 1.0) else {
                        all_pages_valid = false;
                        continue;
                    };
                    if number > f64::from(MAX_PAGE_NUMBER) {
                        let message = format!(
                            "page {number} is above the highest page number, {MAX_PAGE_NUMBER}"
                        );
                        self.error(ErrorCode::Maximum, &path, item.start, message);
                        all_pages_valid = false;
                        continue;
                    }
                    // In range 1..=10,000, so the conversion is exact.
                    let number = number as u32;
                    if pages.iter().any(|p: &SelectedPage| p.number == number) {
                        let message = format!("page {number} is selected twice");
                        self.error(ErrorCode::UniqueItems, &path, item.start, message);
                        continue;
                    }
                    pages.push(SelectedPage {
                        number,
                        index,
                        at: item.start,
                    });
                }
            }
            selections.push(Selection {
                key,
                asset,
                at: value.start,
                pages,
                all_pages_valid,
            });
        }
        Some(At {
            value: selections,
            at: node.start,
        })
    }

    fn rubric<'n>(
        &mut self,
        node: &'n Node<'_>,
        path: &Path<'_>,
        q: usize,
        question: &mut Question<'n>,
    ) {
        let Some(f) = self.object(node, path, ["parts", "criteria"]) else {
            return;
        };
        if let Some(n) = self.required(&f, 0, path, "parts") {
            let path = path.key("parts");
            if let Some(items) = self.array(n, &path, 1, usize::MAX) {
                let parts = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.part(item, &path.index(i)));
                question.parts = Some(parts.collect());
            }
        }
        if let Some(n) = self.required(&f, 1, path, "criteria") {
            let path = path.key("criteria");
            if let Some(items) = self.array(n, &path, 1, MAX_CRITERIA) {
                let criteria = items
                    .iter()
                    .enumerate()
                    .map(|(c, item)| self.criterion(item, &path.index(c), q, c));
                question.criteria = Some(criteria.collect());
            }
        }
    }

    fn part<'n>(&mut self, node: &'n Node<'_>, path: &Path<'_>) -> Part<'n> {
        let mut part = Part {
            id: None,
            max_marks: None,
        };
        let Some(f) = self.object(node, path, ["id", "label", "maxMarks"]) else {
            return part;
        };
        if let Some(n) = self.required(&f, 0, path, "id") {
            part.id = self.string(n, &path.key("id")).map(|id| At {
                value: id,
                at: n.start,
            });
        }
        if let Some(n) = f.get(1) {
            self.string(n, &path.key("label"));
        }
        if let Some(n) = self.required(&f, 2, path, "maxMarks") {
            part.max_marks = self.integer(n, &path.key("maxMarks"), 1.0).map(|m| At {
                value: m,
                at: n.start,
            });
        }
        part
    }

    fn criterion<'n>(
        &mut self,
        node: &'n Node<'_>,
        path: &Path<'_>,
        q: usize,
        c: usize,
    ) -> Criterion<'n> {
        let mut criterion = Criterion {
            at: node.start,
            id: None,
            written_id: None,
            part_id: None,
            code: None,
            conditions: None,
            condition_mode: None,
            depends_on: Vec::new(),
            depends_on_present: false,
            source_pages: Vec::new(),
        };
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
            return criterion;
        };
        if let Some(n) = self.required(&f, 0, path, "id") {
            let path = path.key("id");
            if let Some(id) = self.string(n, &path) {
                criterion.written_id = Some(id);
                if is_criterion_id(id) {
                    criterion.id = Some(At {
                        value: id,
                        at: n.start,
                    });
                } else {
                    let message = format!(
                        "{id:?} does not match ^[A-Za-z0-9._:-]{{1,{MAX_CRITERION_ID_CHARS}}}$"
                    );
                    self.error(ErrorCode::Pattern, &path, n.start, message);
                }
            }
        }
        if let Some(n) = self.required(&f, 1, path, "partId") {
            criterion.part_id = self.string(n, &path.key("partId")).map(|id| At {
                value: id,
                at: n.start,
            });
        }
        if let Some(n) = self.required(&f, 2, path, "code") {
            let path = path.key("code");
            if let Some(code) = self.string(n, &path) {
                if is_mark_code(code) {
                    criterion.code = Some(code);
                } else {
                    let message = format!(
                        "{code:?} is not a mark code: M1, A1 or B1, optionally with a d prefix and an ft or * suffix (^d?[MAB]1(ft|\\*)?$)"
                    );
                    self.error(ErrorCode::Pattern, &path, n.start, message);
                }
            }
        }
        if let Some(n) = self.required(&f, 3, path, "requirement") {
            self.string(n, &path.key("requirement"));
        }
        if let Some(n) = self.required(&f, 4, path, "conditions") {
            let path = path.key("conditions");
            if let Some(items) = self.array(n, &path, 0, usize::MAX) {
                for (i, item) in items.iter().enumerate() {
                    self.string(item, &path.index(i));
                }
                criterion.conditions = Some(items.len());
            }
        }
        match f.get(5) {
            Some(n) => {
                criterion.condition_mode = self.choice(
                    n,
                    &path.key("conditionMode"),
                    &[("all", ConditionMode::All), ("any", ConditionMode::Any)],
                );
            }
            None if criterion.conditions.is_some_and(|count| count > 0) => self.error(
                ErrorCode::ConditionModeRequired,
                path,
                node.start,
                "conditionMode (\"all\" or \"any\") is required when conditions is not empty",
            ),
            None => {}
        }
        if let Some(n) = self.required(&f, 6, path, "dependsOn") {
            let deps_path = path.key("dependsOn");
            if let Some(items) = self.array(n, &deps_path, 0, usize::MAX) {
                criterion.depends_on_present = true;
                for (i, item) in items.iter().enumerate() {
                    let item_path = deps_path.index(i);
                    let Some(id) = self.string(item, &item_path) else {
                        continue;
                    };
                    if criterion.depends_on.iter().any(|(_, d)| d.value == id) {
                        let message = format!("{id:?} is listed twice");
                        self.error(ErrorCode::UniqueItems, &item_path, item.start, message);
                        continue;
                    }
                    criterion.depends_on.push((
                        i,
                        At {
                            value: id,
                            at: item.start,
                        },
                    ));
                }
                if items.is_empty() && criterion.code.is_some_and(|code| code.starts_with('d')) {
                    let message = format!(
                        "the dependent code {} must list the criteria it depends on; dependencies are never inferred from a code",
                        criterion.code.unwrap_or_default()
                    );
                    self.error(
                        ErrorCode::DependentCodeWithoutDependencies,
                        &deps_path,
                        n.start,
                        message,
                    );
                }
            }
        }
        if let Some(n) = self.required(&f, 7, path, "maxMarks") {
            let path = path.key("maxMarks");
            if let Some(max) = self.number(n, &path) {
                if max != 1.0 {
                    let message = format!(
                        "must be 1: every criterion is worth one mark (a withheld mark keeps maxMarks 1; the decision carries the zero), found {max}"
                    );
                    self.error(ErrorCode::Const, &path, n.start, message);
                }
            }
        }
        if let Some(n) = self.required(&f, 8, path, "sourcePageIds") {
            let path = path.key("sourcePageIds");
            if let Some(items) = self.array(n, &path, 1, usize::MAX) {
                for (item, page_node) in items.iter().enumerate() {
                    let citation = Citation::Source {
                        question: q,
                        criterion: c,
                        item,
                    };
                    if let Some(page) = self.page_id(page_node, &path.index(item), citation) {
                        criterion.source_pages.push(page);
                    }
                }
            }
        }
        criterion
    }

    fn page_id(&mut self, node: &Node<'_>, path: &Path<'_>, citation: Citation) -> Option<PageRef> {
        let text = self.string(node, path)?;
        match parse_page_id(text) {
            Some(page) => Some(PageRef {
                page,
                at: node.start,
                citation,
            }),
            None => {
                let message = format!(
                    "{text:?} is not a page id <asset uuid>:p<n> (canonical lowercase UUID, n from 1 to {MAX_PAGE_NUMBER} without leading zeros)"
                );
                self.error(ErrorCode::InvalidPageId, path, node.start, message);
                None
            }
        }
    }

    fn decision<'n>(
        &mut self,
        node: &'n Node<'_>,
        path: &Path<'_>,
        q: usize,
        d: usize,
    ) -> DecisionRecord<'n> {
        let mut decision = DecisionRecord {
            criterion_id: None,
            outcome: None,
            evidence: Vec::new(),
            checks: None,
        };
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
            return decision;
        };
        if let Some(n) = self.required(&f, 0, path, "criterionId") {
            decision.criterion_id = self.string(n, &path.key("criterionId")).map(|id| At {
                value: id,
                at: n.start,
            });
        }
        if let Some(n) = self.required(&f, 1, path, "outcome") {
            decision.outcome = self.choice(
                n,
                &path.key("outcome"),
                &[
                    ("awarded", Decision::Awarded),
                    ("withheld", Decision::Withheld),
                    ("uncertain", Decision::Uncertain),
                ],
            );
        }
        if let Some(n) = self.required(&f, 2, path, "reason") {
            self.string(n, &path.key("reason"));
        }
        if let Some(n) = self.required(&f, 3, path, "evidence") {
            let path = path.key("evidence");
            if let Some(items) = self.array(n, &path, 1, usize::MAX) {
                for (item, evidence) in items.iter().enumerate() {
                    let citation = Citation::Evidence {
                        question: q,
                        decision: d,
                        item,
                    };
                    if let Some(page) = self.evidence(evidence, &path.index(item), citation) {
                        decision.evidence.push(page);
                    }
                }
            }
        }
        if let Some(n) = self.required(&f, 4, path, "conditionChecks") {
            let path = path.key("conditionChecks");
            if let Some(items) = self.array(n, &path, 0, usize::MAX) {
                let mut checks = Vec::with_capacity(items.len());
                for (c, item) in items.iter().enumerate() {
                    checks.push(self.check(item, &path.index(c), q, d, c, &mut decision.evidence));
                }
                decision.checks = Some(At {
                    value: checks,
                    at: n.start,
                });
            }
        }
        decision
    }

    fn check(
        &mut self,
        node: &Node<'_>,
        path: &Path<'_>,
        q: usize,
        d: usize,
        c: usize,
        evidence: &mut Vec<PageRef>,
    ) -> Check {
        let mut check = Check {
            index: None,
            result: None,
        };
        let Some(f) = self.object(node, path, ["index", "result", "note", "evidence"]) else {
            return check;
        };
        if let Some(n) = self.required(&f, 0, path, "index") {
            check.index = self.integer(n, &path.key("index"), 0.0).map(|i| At {
                value: i,
                at: n.start,
            });
        }
        if let Some(n) = self.required(&f, 1, path, "result") {
            check.result = self.choice(
                n,
                &path.key("result"),
                &[
                    ("met", CheckResult::Met),
                    ("not_met", CheckResult::NotMet),
                    ("uncertain", CheckResult::Uncertain),
                ],
            );
        }
        if let Some(n) = f.get(2) {
            self.string(n, &path.key("note"));
        }
        if let Some(n) = f.get(3) {
            let path = path.key("evidence");
            if let Some(items) = self.array(n, &path, 1, usize::MAX) {
                for (item, node) in items.iter().enumerate() {
                    let citation = Citation::CheckEvidence {
                        question: q,
                        decision: d,
                        check: c,
                        item,
                    };
                    if let Some(page) = self.evidence(node, &path.index(item), citation) {
                        evidence.push(page);
                    }
                }
            }
        }
        check
    }

    fn evidence(
        &mut self,
        node: &Node<'_>,
        path: &Path<'_>,
        citation: Citation,
    ) -> Option<PageRef> {
        let f = self.object(node, path, ["pageId", "quote", "box"])?;
        let page = self
            .required(&f, 0, path, "pageId")
            .and_then(|n| self.page_id(n, &path.key("pageId"), citation));
        if let Some(n) = self.required(&f, 1, path, "quote") {
            self.string(n, &path.key("quote"));
        }
        if let Some(n) = self.required(&f, 2, path, "box") {
            self.evidence_box(n, &path.key("box"));
        }
        page
    }

    fn evidence_box(&mut self, node: &Node<'_>, path: &Path<'_>) {
        const NAMES: [&str; 4] = ["x", "y", "width", "height"];
        let Some(f) = self.object(node, path, NAMES) else {
            return;
        };
        let mut values = [None; 4];
        for (i, name) in NAMES.iter().enumerate() {
            if let Some(n) = self.required(&f, i, path, name) {
                values[i] = self.number(n, &path.key(name)).map(|v| (v, n.start));
            }
        }
        for defect in geometry::check_box(values.map(|v| v.map(|(value, _)| value))) {
            let (code, field, message) = match defect {
                BoxDefect::Outside { field } => (
                    ErrorCode::BoxOutOfBounds,
                    field,
                    format!("{} must lie within the page, from 0 to 1", NAMES[field]),
                ),
                BoxDefect::NotPositive { field } => (
                    ErrorCode::BoxNotPositive,
                    field,
                    format!(
                        "{} must be greater than 0: an evidence box has a positive area",
                        NAMES[field]
                    ),
                ),
                BoxDefect::PastEdge {
                    field,
                    origin,
                    extent,
                } => (
                    ErrorCode::BoxOutOfBounds,
                    field,
                    format!(
                        "{} + {} = {} is past the page edge at 1",
                        NAMES[origin], NAMES[field], extent
                    ),
                ),
            };
            let at = values[field].map_or(node.start, |(_, at)| at);
            self.error(code, &path.key(NAMES[field]), at, message);
        }
    }
}

/// `^[A-Za-z0-9._:-]{1,64}$`
fn is_criterion_id(id: &str) -> bool {
    (1..=MAX_CRITERION_ID_CHARS).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

/// `^d?[MAB]1(ft|\*)?$`
fn is_mark_code(code: &str) -> bool {
    let rest = code.strip_prefix('d').unwrap_or(code);
    let Some(rest) = rest
        .strip_prefix(['M', 'A', 'B'])
        .and_then(|r| r.strip_prefix('1'))
    else {
        return false;
    };
    matches!(rest, "" | "ft" | "*")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mark_codes() {
        for good in [
            "M1", "A1", "B1", "dM1", "dA1", "A1ft", "dA1ft", "B1*", "dM1*",
        ] {
            assert!(is_mark_code(good), "{good}");
        }
        for bad in [
            "", "M2", "m1", "D1", "dd1", "M1f", "M1ft*", "A1 ", "dM", "B1**", "ftA1",
        ] {
            assert!(!is_mark_code(bad), "{bad}");
        }
    }

    #[test]
    fn criterion_ids() {
        assert!(is_criterion_id("q1.a:M1-2_b"));
        assert!(is_criterion_id(&"x".repeat(64)));
        assert!(!is_criterion_id(&"x".repeat(65)));
        assert!(!is_criterion_id("a b"));
        assert!(!is_criterion_id("é"));
    }
}
