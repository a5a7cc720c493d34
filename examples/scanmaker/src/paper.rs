//! The inputs read from files: the recorded layout of the question paper (as `examkit-pdf`
//! serialises it, alone or inside an object's `layout` field) and the student's answers.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::Error;

/// The parts of the recorded layout that the scan maker uses (other fields are ignored).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Layout {
    /// The size of each page, in points (may be absent in hand-written layouts).
    #[serde(default)]
    pub pages: Vec<PageGeometry>,
    /// Every question, in paper order.
    pub questions: Vec<QuestionLayout>,
    /// The space above the cover's name line, when the layout records it.
    #[serde(default)]
    pub name_space: Option<Region>,
}

/// A page's size in points.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageGeometry {
    /// Width in points.
    pub width_pt: f64,
    /// Height in points.
    pub height_pt: f64,
}

/// Where one question's answers go.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionLayout {
    /// The question's number in the paper.
    pub number: u32,
    /// The bank question's id (a uuid, as text).
    pub question_id: String,
    /// The writing pages shared by all the parts of the question, if any.
    #[serde(default)]
    pub answer_space: Vec<Region>,
    /// The parts, in order.
    pub parts: Vec<PartLayout>,
}

/// Where one part's answer goes.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartLayout {
    /// The part's id.
    pub part_id: String,
    /// The printed label, such as `(a)`.
    #[serde(default)]
    pub label: Option<String>,
    /// The part's answer space, one region per page.
    #[serde(default)]
    pub answer_space: Vec<Region>,
}

/// A rectangle on a page, normalised to the page (top-left origin).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct Region {
    /// The page, 1-based.
    pub page: u32,
    /// Left edge as a fraction of the page width.
    pub x: f64,
    /// Top edge as a fraction of the page height.
    pub y: f64,
    /// Width as a fraction of the page width.
    pub width: f64,
    /// Height as a fraction of the page height.
    pub height: f64,
}

/// The student's answers: question id → part id → what was written.
pub type Answers = BTreeMap<String, BTreeMap<String, String>>;

/// Reads a layout: the `Layout` JSON itself, or an object with it in a `layout` field (as an
/// object or as a string of JSON, as the service stores it).
pub fn read_layout(text: &str) -> Result<Layout, Error> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| Error::Input(format!("the layout is not JSON: {e}")))?;
    let value = match value.get("layout") {
        Some(serde_json::Value::String(inner)) => serde_json::from_str(inner)
            .map_err(|e| Error::Input(format!("the layout field is not JSON: {e}")))?,
        Some(inner) if value.get("questions").is_none() => inner.clone(),
        _ => value,
    };
    let layout: Layout = serde_json::from_value(value)
        .map_err(|e| Error::Input(format!("the layout is not an examkit layout: {e}")))?;
    for q in &layout.questions {
        for r in q
            .answer_space
            .iter()
            .chain(q.parts.iter().flat_map(|p| &p.answer_space))
        {
            let finite = [r.x, r.y, r.width, r.height].iter().all(|v| v.is_finite());
            if !finite || r.page == 0 || r.width < 0.0 || r.height < 0.0 {
                return Err(Error::Input(format!(
                    "question {}: a region is not a box on a page: {r:?}",
                    q.number
                )));
            }
        }
    }
    Ok(layout)
}

/// Reads the answers and checks that every question and part they name is on the paper.
pub fn read_answers(text: &str, layout: &Layout) -> Result<Answers, Error> {
    let answers: Answers = serde_json::from_str(text).map_err(|e| {
        Error::Input(format!(
            "the answers must be {{\"<question id>\": {{\"<part id>\": \"text\"}}}}: {e}"
        ))
    })?;
    for (question, parts) in &answers {
        let Some(q) = layout
            .questions
            .iter()
            .find(|q| q.question_id.eq_ignore_ascii_case(question))
        else {
            return Err(Error::Input(format!(
                "the answers name question {question}, which is not on this paper"
            )));
        };
        for part in parts.keys() {
            if !q.parts.iter().any(|p| &p.part_id == part) {
                return Err(Error::Input(format!(
                    "the answers name part {part:?} of question {}, which has no such part",
                    q.number
                )));
            }
        }
    }
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAYOUT: &str = r#"{"paperId":"00000000-0000-0000-0000-000000000000","revision":1,
      "writingSpace":"smart","pages":[{"widthPt":595.28,"heightPt":841.89}],
      "questions":[{"number":1,"questionId":"8a834eff-5ac7-5e3d-902e-0c7342b819d4","labelPage":1,
        "answerSpace":[],"parts":[{"partId":"a","label":"(a)","prompt":[],
        "answerSpace":[{"page":1,"x":0.2,"y":0.3,"width":0.7,"height":0.1}]}]}]}"#;

    #[test]
    fn layouts_are_read_alone_or_wrapped() {
        let plain = read_layout(LAYOUT).expect("plain");
        assert_eq!(plain.questions[0].parts[0].answer_space[0].page, 1);
        let wrapped = format!("{{\"layout\": {LAYOUT}}}");
        assert_eq!(read_layout(&wrapped).expect("wrapped").questions.len(), 1);
        let as_string = serde_json::json!({ "layout": LAYOUT }).to_string();
        assert_eq!(read_layout(&as_string).expect("string").pages.len(), 1);
        assert!(read_layout("{").is_err());
        assert!(read_layout("{\"questions\": 3}").is_err());
    }

    #[test]
    fn answers_must_name_questions_and_parts_of_the_paper() {
        let layout = read_layout(LAYOUT).expect("layout");
        let ok = r#"{"8a834eff-5ac7-5e3d-902e-0c7342b819d4": {"a": "7"}}"#;
        assert_eq!(read_answers(ok, &layout).expect("ok").len(), 1);
        let other = r#"{"00000000-0000-0000-0000-000000000001": {"a": "7"}}"#;
        assert!(read_answers(other, &layout).is_err());
        let part = r#"{"8a834eff-5ac7-5e3d-902e-0c7342b819d4": {"z": "7"}}"#;
        assert!(read_answers(part, &layout).is_err());
        assert!(read_answers("[]", &layout).is_err());
    }
}
