//! The typed model of one bank file, as written in `examkit-question-bank-v1`.
//!
//! Field names follow the JSON (camelCase); every object rejects unknown fields, as the schema does.
//! Deserialising checks shapes and enums only: the schema's patterns and limits and the cross-file
//! rules are checked by the loader.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The value of `bankVersion` this model reads.
pub const BANK_VERSION: &str = "examkit-question-bank-v1";

/// One bank file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BankFile {
    /// Editors' schema reference; ignored.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Always [`BANK_VERSION`].
    pub bank_version: String,
    /// Free text, not imported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Facet options declared by this file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facets: Option<Facets>,
    /// The questions of this file.
    pub questions: Vec<Question>,
}

/// Facet options, each kind in display order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Facets {
    /// Courses: one per level and subject.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub course: Vec<CourseOption>,
    /// Exam boards.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub board: Vec<FacetOption>,
    /// Modules (module profiles).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub module: Vec<FacetOption>,
    /// Topics.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topic: Vec<FacetOption>,
    /// Subtopics, each belonging to one topic.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subtopic: Vec<SubtopicOption>,
}

/// A facet option: a stable id and a display label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FacetOption {
    /// Stable id used in search filters.
    pub id: String,
    /// Display label.
    pub label: String,
}

/// A course option: the combination of a level and a subject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CourseOption {
    /// `<level>-<subject>`.
    pub id: String,
    /// Display label.
    pub label: String,
    /// The level.
    pub level: Level,
    /// The subject.
    pub subject: Subject,
}

/// A subtopic option.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubtopicOption {
    /// Stable id, unique across topics.
    pub id: String,
    /// Display label.
    pub label: String,
    /// The topic it belongs to.
    pub topic: String,
}

/// A question: an id and its revisions, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Question {
    /// Canonical lowercase UUID, never reused.
    pub id: Uuid,
    /// Revisions numbered 1, 2, 3… in order.
    pub revisions: Vec<Revision>,
}

/// Whether a revision is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Not served, may still change.
    Draft,
    /// Served and pinnable.
    Published,
    /// Not offered by search; still readable by its pin.
    Withdrawn,
}

impl Status {
    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Draft => "draft",
            Status::Published => "published",
            Status::Withdrawn => "withdrawn",
        }
    }
}

/// A qualification level (the search enum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// AS level.
    AsLevel,
    /// A level.
    ALevel,
    /// International AS level.
    InternationalAsLevel,
    /// International A level.
    InternationalALevel,
}

impl Level {
    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::AsLevel => "as-level",
            Level::ALevel => "a-level",
            Level::InternationalAsLevel => "international-as-level",
            Level::InternationalALevel => "international-a-level",
        }
    }
}

/// A subject (the search enum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Subject {
    /// Mathematics.
    Maths,
    /// Further mathematics.
    FurtherMaths,
}

impl Subject {
    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Subject::Maths => "maths",
            Subject::FurtherMaths => "further-maths",
        }
    }
}

/// How often questions of this kind are set (the search enum).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Frequency {
    /// Set in most series.
    Frequent,
    /// Set now and then.
    Occasional,
    /// Seldom set.
    Rare,
}

impl Frequency {
    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Frequency::Frequent => "frequent",
            Frequency::Occasional => "occasional",
            Frequency::Rare => "rare",
        }
    }
}

/// One complete revision of a question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Revision {
    /// 1, 2, 3… in order.
    pub revision: u32,
    /// Whether it is served.
    pub status: Status,
    /// What changed since the previous revision (required from revision 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_note: Option<String>,
    /// Short plain-text title.
    pub title: String,
    /// One plain-text sentence shown in search results.
    pub summary: String,
    /// Where questions of this kind are set.
    pub sources: Vec<Source>,
    /// Topic facet id.
    pub topic: String,
    /// Subtopic facet id (of the topic).
    pub subtopic: String,
    /// Search tags.
    pub tags: Vec<String>,
    /// 1 (routine) to 5 (hardest).
    pub difficulty: u8,
    /// How often set.
    pub frequency: Frequency,
    /// Total marks: the number of criteria.
    pub marks: u32,
    /// Eligible module profiles (module facet ids).
    pub module_profiles: Vec<String>,
    /// What the candidate reads.
    pub content: Content,
    /// The complete mark scheme.
    pub scheme: Scheme,
    /// Diagram files used by the content.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assets: Vec<AssetRef>,
}

/// A source: the specification and session a question is written to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Source {
    /// Board facet id.
    pub board: String,
    /// Level.
    pub level: Level,
    /// Subject.
    pub subject: Subject,
    /// Module facet id.
    pub module: String,
    /// Paper name.
    pub paper: String,
    /// Month name.
    pub session: String,
    /// Year, 1900–2100.
    pub year: u16,
    /// Question number, 1–99.
    pub question_number: u8,
}

/// Question content: a stem and at least one part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Content {
    /// Printed before the parts; may be empty.
    pub stem: Vec<Block>,
    /// The parts.
    pub parts: Vec<ContentPart>,
}

/// One part of a question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContentPart {
    /// Part id (`a`, `b-i`).
    pub id: String,
    /// Printed label (`(a)`); omitted for an undivided question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Marks of the part.
    pub marks: u32,
    /// The part's text.
    pub body: Vec<Block>,
}

/// A content block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum Block {
    /// A paragraph of plain text with inline maths between `$` signs.
    Text {
        /// The text.
        text: String,
    },
    /// A displayed equation in typst math syntax (no `$`).
    Math {
        /// The maths.
        math: String,
    },
    /// A diagram.
    Diagram {
        /// The asset's id.
        asset: Uuid,
        /// What the picture shows.
        alt: String,
        /// Fraction (0, 1] of the text width.
        width: f64,
    },
    /// A bulleted list; each item is text with inline maths.
    List {
        /// The items.
        items: Vec<String>,
    },
}

/// The mark scheme.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scheme {
    /// The content's parts with their maximum marks.
    pub parts: Vec<SchemePart>,
    /// One-mark criteria.
    pub criteria: Vec<Criterion>,
}

/// A part of the scheme.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SchemePart {
    /// The content part's id.
    pub id: String,
    /// Its number of criteria.
    pub max_marks: u32,
}

/// Whether all or any of a criterion's conditions must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConditionMode {
    /// Every condition.
    All,
    /// At least one condition.
    Any,
}

/// A one-mark criterion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Criterion {
    /// Unique within the revision.
    pub id: String,
    /// The part it belongs to.
    pub part_id: String,
    /// `M1`, `A1`, `B1`, with `d` prefix and `ft` or `*` suffix.
    pub code: String,
    /// What earns the mark (text with inline maths).
    pub requirement: String,
    /// Criteria of the same revision this one depends on.
    pub depends_on: Vec<String>,
    /// Checks the marker makes.
    pub conditions: Vec<String>,
    /// Required when there are conditions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition_mode: Option<ConditionMode>,
    /// Accepted answers.
    pub answers: Vec<String>,
    /// Marking notes (`oe`, `cao`, `awrt 2.35`…).
    pub notes: Vec<String>,
}

/// A diagram file of a revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AssetRef {
    /// Asset id, one file across the bank.
    pub id: Uuid,
    /// Path relative to the bank file's folder.
    pub file: String,
    /// `image/svg+xml`.
    pub media_type: String,
    /// Plain-text description.
    pub description: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sample_file_reads_into_the_model() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample");
        let mut questions = 0;
        let mut files = 0;
        for entry in std::fs::read_dir(&dir).expect("sample folder") {
            let path = entry.expect("entry").path();
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("read");
            let file: BankFile =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(file.bank_version, BANK_VERSION);
            questions += file.questions.len();
            files += 1;
            // Serialising back gives the same JSON value: the model loses nothing.
            let original: serde_json::Value = serde_json::from_str(&text).expect("json");
            let round = serde_json::to_value(&file).expect("to value");
            assert_eq!(original, round, "{} does not round-trip", path.display());
        }
        assert_eq!(files, 5);
        assert_eq!(questions, 68);
    }
}
