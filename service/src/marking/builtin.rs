//! The built-in marker: for structured schemes, it reads each part's answer space on the
//! student's pages and compares what is written there with the criterion's accepted answers.
//!
//! For each criterion, in the scheme's order:
//! - an accepted answer found in the part's answer space (see [`crate::marking::answers`]) is
//!   `awarded`, the evidence box on the found words and the quote their text;
//! - a blank answer space is `withheld`, the evidence box on the empty answer space, quoted as
//!   blank: on a page compared with its clean page, a space is blank when no ink was added in it,
//!   whatever printed words a skewed or photographed space takes in;
//! - only words lying on added ink are read as the student's answer and quoted: the printed
//!   page's own words never are;
//! - anything else is `uncertain` with its reason (a method mark it cannot judge, an answer it
//!   cannot prove equivalent, an answer space it cannot find), so the question needs review.
//!
//! It never invents an award: conditions are checked `uncertain` (it cannot judge them), so an
//! award that depends on a condition or on an uncertain method mark is reviewed by a person
//! (the engine applies the contract's scoring rules). With a scheme it cannot read as structured
//! criteria it says so: one uncertain allocation for the whole question, its reason stated. Its
//! awards then pass the evidence guards like any marker's ([`crate::marking::evidence`]): none
//! stands on a page that could not be lined up with its clean page, for one.

use super::failure::FailureCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde_json::{Value, json};

use super::answers::{self, MatchKind, WordBox};
use super::evidence::grown;
use super::marker::{
    AnswerCheck, MarkFuture, MarkRequest, Marked, Marker, MarkerError, PageWord, Rect, Scheme,
    WorkPage, structured_rubric,
};
use super::pages::turned;

/// The built-in marker.
#[derive(Debug, Default, Clone, Copy)]
pub struct BuiltIn;

/// The quote of writing in an answer space that could not be read.
pub const UNREAD_QUOTE: &str = "unread: writing the reader could not read";

/// The quote of a blank answer space.
pub const BLANK_QUOTE: &str = "blank: nothing is written in the answer space";

impl Marker for BuiltIn {
    fn name(&self) -> &'static str {
        "builtin"
    }

    fn needs_images(&self) -> bool {
        false
    }

    fn mark<'a>(
        &'a self,
        request: &'a MarkRequest,
        _check: AnswerCheck<'a>,
        _cancelled: Arc<AtomicBool>,
    ) -> MarkFuture<'a> {
        Box::pin(async move { mark(request) })
    }
}

/// Where a part's answer is looked for: one region of one evidence page.
struct Place<'a> {
    page: &'a WorkPage,
    rect: Rect,
}

fn mark(request: &MarkRequest) -> Result<Marked, MarkerError> {
    // The student's pages: those with writing, and blank pages of the script (where a blank
    // answer is located; nothing found there can be awarded).
    let evidence_pages: Vec<&WorkPage> = request
        .work_pages
        .iter()
        .filter(|p| p.evidence || p.blank)
        .collect();
    let Some(first_page) = evidence_pages.first() else {
        return Err(MarkerError::new(
            FailureCode::NoEvidencePages,
            "no selected work page can be evidence of the student's answer",
            false,
        ));
    };
    let question = match &request.scheme {
        Scheme::Structured { parts, criteria } => {
            structured(request, parts, criteria, &evidence_pages)?
        }
        Scheme::Pages => unstructured(request, first_page),
    };
    Ok(Marked {
        question,
        name: "examkit built-in marker".into(),
        model: None,
        run: None,
        flags: Vec::new(),
    })
}

fn whole_page() -> Rect {
    Rect {
        x: 0.0,
        y: 0.0,
        width: 1.0,
        height: 1.0,
    }
}

fn evidence(page: &WorkPage, rect: Rect, quote: &str) -> Value {
    json!({
        "pageId": page.page_id,
        "quote": quote,
        "box": { "x": rect.x, "y": rect.y, "width": rect.width, "height": rect.height },
    })
}

fn words_in<'a>(page: &'a WorkPage, rect: &Rect) -> Vec<&'a PageWord> {
    page.words
        .iter()
        .filter(|w| rect.holds_centre_of(&w.bbox))
        .collect()
}

/// The words as the answer matcher reads them: in the upright page's coordinates, so that lines
/// run left to right and top to bottom on a page scanned sideways or upside down too.
fn word_boxes<'a>(words: &[&'a PageWord], orientation: u32) -> Vec<WordBox<'a>> {
    let back = (360 - orientation % 360) % 360;
    words
        .iter()
        .map(|w| {
            let b = turned(w.bbox, back);
            WordBox {
                text: &w.text,
                x: b.x,
                y: b.y,
                width: b.width,
                height: b.height,
            }
        })
        .collect()
}

fn written_quote(words: &[&PageWord]) -> String {
    let text: Vec<&str> = words.iter().take(12).map(|w| w.text.as_str()).collect();
    let mut quote = text.join(" ");
    if words.len() > 12 {
        quote.push_str(" …");
    }
    if quote.trim().is_empty() {
        quote = "writing that could not be read".into();
    }
    quote
}

/// The strings of a JSON list (a criterion's `answers`, `notes`…); others are skipped.
pub(crate) fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// How far, as a fraction of the page, a word's centre may lie outside a region of added ink
/// and still be read as written on it: the comparison finds ink at a working resolution, and a
/// word's box is the reader's.
const INK_SLACK: f64 = 0.004;

/// One decision for one criterion.
fn decide(criterion: &Value, places: &[Place<'_>], fallback: &WorkPage) -> Value {
    let part = criterion["partId"].as_str().unwrap_or("");
    let checks = condition_checks(criterion);
    let decision = |(outcome, reason, evidence): (&str, String, Value)| {
        json!({
            "criterionId": criterion["id"],
            "outcome": outcome,
            "reason": reason,
            "evidence": [evidence],
            "conditionChecks": checks,
        })
    };
    let Some(first) = places.first() else {
        return decision((
            "uncertain",
            format!(
                "the answer space of part {part} was not found on the selected pages; a person must find and mark the answer"
            ),
            evidence(
                fallback,
                whole_page(),
                "the answer space of this part was not found on this page",
            ),
        ));
    };
    let read = read_places(places);
    if read.written.is_empty() {
        return decision(nothing_written(part, &read, first));
    }
    decision(judged(criterion, part, &read.written))
}

/// One `uncertain` check per condition of `criterion`: the built-in marker judges none.
fn condition_checks(criterion: &Value) -> Vec<Value> {
    criterion["conditions"]
        .as_array()
        .map(|conditions| {
            (0..conditions.len())
                .map(|index| {
                    json!({
                        "index": index,
                        "result": "uncertain",
                        "note": "the built-in marker does not judge conditions; a person checks them",
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What the places of a part hold: the words written in each place that has any, the writing
/// no words were read on, and the places that cannot be told blank (no comparison, no words).
struct Read<'p, 'a> {
    written: Vec<(&'p Place<'a>, Vec<&'a PageWord>)>,
    unread: Vec<(&'p Place<'a>, Rect)>,
    unknown: Vec<&'p Place<'a>>,
}

/// Every place of the part: is anything written, and is an accepted answer there? Where the
/// page was compared with its clean page, the ink added in the place is the student's writing
/// and nothing else is: a place with none is blank whatever words lie in it (the part's printed
/// mark, the question's own words beside a skewed answer space), and only words on the added ink
/// are read as the answer; ink where no words were read is writing that could not be read. Where
/// no comparison was made, the words read in the place are all there is.
fn read_places<'p, 'a>(places: &'p [Place<'a>]) -> Read<'p, 'a> {
    let mut read = Read {
        written: Vec::new(),
        unread: Vec::new(),
        unknown: Vec::new(),
    };
    for place in places {
        let words = words_in(place.page, &place.rect);
        let Some(ink) = &place.page.ink else {
            if answers::is_blank(&word_boxes(&words, place.page.orientation)) {
                read.unknown.push(place);
            } else {
                read.written.push((place, words));
            }
            continue;
        };
        let inside: Vec<Rect> = ink
            .iter()
            .filter(|r| place.rect.overlap(r) >= 0.5 * r.width * r.height)
            .copied()
            .collect();
        let Some(writing) = Rect::union(inside.iter().copied()) else {
            continue;
        };
        let on_ink: Vec<&PageWord> = words
            .into_iter()
            .filter(|w| {
                inside
                    .iter()
                    .any(|r| grown(r, INK_SLACK).holds_centre_of(&w.bbox))
            })
            .collect();
        if answers::is_blank(&word_boxes(&on_ink, place.page.orientation)) {
            read.unread.push((place, writing));
        } else {
            read.written.push((place, on_ink));
        }
    }
    read
}

/// The decision on a part where no words are written: writing that could not be read, a place
/// that cannot be told blank, or else a blank answer (withheld on the `first` place).
fn nothing_written(
    part: &str,
    read: &Read<'_, '_>,
    first: &Place<'_>,
) -> (&'static str, String, Value) {
    if let Some((place, rect)) = read.unread.first() {
        return (
            "uncertain",
            format!(
                "something is written in the answer space of part {part}, but no words could be read there (illegible, or a diagram); a person reads it"
            ),
            evidence(place.page, *rect, UNREAD_QUOTE),
        );
    }
    if let Some(place) = read.unknown.first() {
        return (
            "uncertain",
            format!(
                "no words were read in the answer space of part {part}, and the page could not be compared with the clean paper to tell whether it is blank; a person checks it"
            ),
            evidence(place.page, place.rect, UNREAD_QUOTE),
        );
    }
    (
        "withheld",
        format!("the answer space of part {part} is blank"),
        evidence(first.page, first.rect, BLANK_QUOTE),
    )
}

/// The decision on what is `written` in the part: awarded where an accepted answer of
/// `criterion` is found on a page that can be evidence, else uncertain (a person reads it).
fn judged(
    criterion: &Value,
    part: &str,
    written: &[(&Place<'_>, Vec<&PageWord>)],
) -> (&'static str, String, Value) {
    let accepted = strings(&criterion["answers"]);
    let notes = strings(&criterion["notes"]);
    let code = criterion["code"].as_str().unwrap_or("");
    if !accepted.is_empty() {
        for (place, words) in written.iter().filter(|(place, _)| place.page.evidence) {
            let boxes = word_boxes(words, place.page.orientation);
            if let Some(found) = answers::find(&boxes, &accepted, &notes) {
                let rect = Rect::union(
                    found
                        .words
                        .iter()
                        .filter_map(|&i| words.get(i).map(|w| w.bbox)),
                )
                .unwrap_or(place.rect);
                let how = match found.how {
                    MatchKind::Exact => "as written in the scheme",
                    MatchKind::Equivalent => "in an equal numerical form",
                    MatchKind::Rounded => "to the accuracy the scheme allows (awrt)",
                };
                let answer = accepted.get(found.answer).map(String::as_str).unwrap_or("");
                return (
                    "awarded",
                    format!(
                        "the accepted answer {answer} is written in the answer space of part {part}, {how}"
                    ),
                    evidence(place.page, rect, &found.quote),
                );
            }
        }
        let (place, words) = &written[0];
        return (
            "uncertain",
            format!(
                "no accepted answer of part {part} was found in what is written; it may be an equivalent form (oe) or need reading by a person"
            ),
            evidence(place.page, place.rect, &written_quote(words)),
        );
    }
    let (place, words) = &written[0];
    let what = if code.trim_start_matches('d').starts_with('M') {
        "a method mark"
    } else {
        "a mark without a single final answer"
    };
    (
        "uncertain",
        format!(
            "{what}: the built-in marker does not judge working; a person checks what is written in part {part}"
        ),
        evidence(place.page, place.rect, &written_quote(words)),
    )
}

fn structured(
    request: &MarkRequest,
    parts: &Value,
    criteria: &Value,
    evidence_pages: &[&WorkPage],
) -> Result<Value, MarkerError> {
    let rubric = structured_rubric(parts, criteria)?;
    let criteria = criteria.as_array().map(Vec::as_slice).unwrap_or_default();
    let fallback = evidence_pages[0];
    let mut decisions = Vec::with_capacity(criteria.len());
    for criterion in criteria {
        let part = criterion["partId"].as_str().unwrap_or("");
        let places: Vec<Place<'_>> = evidence_pages
            .iter()
            .flat_map(|page| {
                page.answer_regions
                    .iter()
                    .filter(|r| r.part_id == part)
                    .map(move |r| Place { page, rect: r.rect })
            })
            .collect();
        decisions.push(decide(criterion, &places, fallback));
    }
    Ok(json!({
        "label": request.label,
        "pageSelections": request.page_selections,
        "rubric": rubric,
        "decisions": decisions,
    }))
}

/// The id of the one criterion of a question marked against a scheme that could not be read.
pub const WHOLE_QUESTION: &str = "whole-question";

fn unstructured(request: &MarkRequest, page: &WorkPage) -> Value {
    let source: Vec<&str> = request
        .scheme_pages
        .first()
        .map(|p| vec![p.page_id.as_str()])
        .unwrap_or_default();
    json!({
        "label": request.label,
        "pageSelections": request.page_selections,
        "rubric": {
            "parts": [{ "id": "whole", "maxMarks": 1 }],
            "criteria": [{
                "id": WHOLE_QUESTION,
                "partId": "whole",
                "code": "B1",
                "requirement": "The whole question, against the uploaded mark scheme",
                "conditions": [],
                "dependsOn": [],
                "maxMarks": 1,
                "sourcePageIds": source,
            }],
        },
        "decisions": [{
            "criterionId": WHOLE_QUESTION,
            "outcome": "uncertain",
            "reason": "the mark scheme could not be read as structured criteria (it is not a mark scheme exported by examkit), so the built-in marker cannot mark against it: a person marks this question",
            "evidence": [evidence(page, whole_page(), "the student's page, not marked automatically")],
            "conditionChecks": [],
        }],
    })
}

#[cfg(test)]
mod tests;
