//! The builder's page: a paper being built with its totals, the moves and removals shown unsaved,
//! the draft saved as the next revision (or the conflict with a revision saved since), and a bank
//! question added at the end.

use maud::{Markup, html};
use warp::http::StatusCode;
use warp::reply::Response;

use super::draft::{Draft, changes};
use super::pins::{diagram_href, pin_fields, read_pin};
use super::rows::{Row, rows};
use super::{latest, not_found, space_text};
use crate::app::layout::{Section, csrf, page, when};
use crate::app::{AppError, Form, Signed, content, html, see_other};
use crate::error::ApiError;
use crate::papers::request::{MAX_QUESTIONS, UpdatePaper, WRITING_SPACES};
use crate::store::papers::{Pin, StoredPaper};

/// What the builder shows above the draft.
#[derive(Default)]
struct Said {
    notice: Option<String>,
    unsaved: bool,
    problems: Vec<String>,
    /// Since the draft's base: the latest revision and what changed in it.
    stale: Option<(i64, Vec<String>)>,
}

/// The builder's page: what is said above the draft, the draft's form with its questions, and
/// the paper's revisions.
async fn builder(
    signed: &Signed,
    paper: &StoredPaper,
    draft: &Draft,
    said: Said,
    status: StatusCode,
) -> Result<Response, AppError> {
    let rows = rows(signed, &draft.content.questions).await?;
    let id = &paper.id;
    let body = html! {
        p.crumbs { a href="/app/papers" { "Papers" } " › " (paper.content.title) }
        h1 { "Paper: " (draft.content.title) }
        p { "Latest revision " (paper.revision) ", saved " (when(paper.saved_at)) ". "
            a href={ "/app/papers/" (id) "/revisions/" (paper.revision) } { "Its PDFs and printing" } }
        (said_above(paper, draft, &said))
        (draft_form(signed, paper, draft, &said, &rows))
        @if rows.len() < MAX_QUESTIONS {
            p { a href={ "/app/bank?paper=" (id) } { "Add questions from the bank" } }
        }
        section aria-labelledby="revisions-title" {
            h2 #revisions-title { "Revisions" }
            ul #revisions {
                @for r in (1..=paper.revision).rev() {
                    li { a href={ "/app/papers/" (id) "/revisions/" (r) } { "Revision " (r) } }
                }
            }
        }
    };
    Ok(html(
        status,
        page(
            &format!("Paper: {}", draft.content.title),
            Some(signed),
            Section::Papers,
            body,
        ),
    ))
}

/// The notice, the draft's state, its problems, and what changed since its base when a revision
/// was saved meanwhile.
fn said_above(paper: &StoredPaper, draft: &Draft, said: &Said) -> Markup {
    let id = &paper.id;
    html! {
        @if let Some(notice) = &said.notice { p.notice role="status" #notice { (notice) } }
        @if said.unsaved { p.notice role="status" #unsaved { "Changed, not saved yet: save to make revision " (paper.revision + 1) "." } }
        @if !said.problems.is_empty() {
            div.error role="alert" #problems {
                p { "The paper was not saved:" }
                ul { @for p in &said.problems { li { (p) } } }
            }
        }
        @if let Some((latest, changed)) = &said.stale {
            div.error role="alert" #stale {
                p { "This paper was saved as revision " (latest) " since you began these changes from revision " (draft.base) ". Nothing of yours was saved. What changed in it:" }
                ul { @for c in changed { li { (c) } } }
                p { "Your changes are below. Save them on top of revision " (latest) ", or "
                    a href={ "/app/papers/" (id) } { "open revision " (latest) } " and make them again." }
            }
        }
    }
}

/// The draft's form: its settings, totals, and questions with their moves.
fn draft_form(
    signed: &Signed,
    paper: &StoredPaper,
    draft: &Draft,
    said: &Said,
    rows: &[Row],
) -> Markup {
    let total: i64 = rows.iter().map(|r| r.marks).sum();
    let minutes = examkit_pdf::time_guide_minutes(u32::try_from(total).unwrap_or(0));
    let count = rows.len();
    html! {
        form.builder #builder method="post" action={ "/app/papers/" (paper.id) } {
            (csrf(signed))
            input type="hidden" name="base" value=(said.stale.as_ref().map_or(draft.base, |(latest, _)| *latest));
            p {
                label for="title" { "Title" }
                input #title type="text" name="title" value=(draft.content.title) required maxlength="200";
            }
            p {
                label for="writing-space" { "Writing space" }
                select #writing-space name="writing_space" {
                    @for space in WRITING_SPACES {
                        option value=(space) selected[draft.content.writing_space == space] { (space_text(space)) }
                    }
                }
            }
            p.check {
                input #grade-guide type="checkbox" name="grade_guide" checked[draft.content.grade_guide];
                label for="grade-guide" { "Add the estimated grade guide to the mark scheme" }
            }
            p #totals role="status" { (count) " questions · " (total) " marks · about " (minutes) " minutes" }
            p { button type="submit" name="action" value="save" { "Save as revision " (paper.revision + 1) } }
            (question_list(signed, rows))
            p { button type="submit" name="action" value="save" { "Save as revision " (paper.revision + 1) } }
        }
    }
}

/// The draft's questions in order, each with its pin, its moves, and its content on request.
fn question_list(signed: &Signed, rows: &[Row]) -> Markup {
    let state = &signed.visit.state;
    let count = rows.len();
    html! {
        ol.paper-questions #questions {
            @for (i, row) in rows.iter().enumerate() {
                li.paper-question data-marks=(row.marks) {
                    (pin_fields(&row.pin))
                    span.q-title { (row.title) }
                    " "
                    span.q-marks { "(" (row.marks) " marks)" }
                    span.q-actions {
                        button type="submit" name="action" value={ "up:" (i) } disabled[i == 0] aria-label={ "Move “" (row.title) "” up" } { "Up" }
                        button type="submit" name="action" value={ "down:" (i) } disabled[i + 1 == count] aria-label={ "Move “" (row.title) "” down" } { "Down" }
                        button type="submit" name="action" value={ "remove:" (i) } disabled[count == 1] aria-label={ "Remove “" (row.title) "”" } { "Remove" }
                    }
                    @if let Some(revision) = &row.revision {
                        details {
                            summary { "The question" }
                            (content::question(&state.maths, revision, &|asset| diagram_href(&row.pin, asset)))
                            (content::scheme(&state.maths, revision))
                        }
                    }
                }
            }
        }
    }
}

/// `GET /app/papers/{id}`: the paper's latest revision, ready to change.
pub async fn show(signed: Signed, id: &str) -> Result<Response, AppError> {
    let paper = latest(&signed, id).await?.ok_or_else(not_found)?;
    let draft = Draft::of(&paper);
    let notice = signed
        .visit
        .query_param("saved")
        .map(|r| format!("Saved as revision {r}."));
    builder(
        &signed,
        &paper,
        &draft,
        Said {
            notice,
            ..Said::default()
        },
        StatusCode::OK,
    )
    .await
}

/// `POST /app/papers/{id}`: a move or removal shown unsaved, or the draft saved.
pub async fn change(signed: Signed, id: &str, form: Form) -> Result<Response, AppError> {
    let paper = latest(&signed, id).await?.ok_or_else(not_found)?;
    let draft = Draft::read(&form)?;
    let action = form.get("action").unwrap_or("save");
    if action != "save" {
        let moved = draft.clone().apply(action).ok_or_else(|| {
            AppError::BadForm(format!("{action:?} is not a change of this paper"))
        })?;
        let said = Said {
            unsaved: true,
            ..Said::default()
        };
        return builder(&signed, &paper, &moved, said, StatusCode::OK).await;
    }
    save(&signed, &paper, draft).await
}

async fn save(signed: &Signed, paper: &StoredPaper, draft: Draft) -> Result<Response, AppError> {
    let state = &signed.visit.state;
    // The draft is read as `PATCH /v1/papers/{id}`'s body, by that route's rules.
    let body = serde_json::json!({
        "revision": draft.base,
        "title": draft.content.title,
        "questions": draft.content.questions,
        "writingSpace": draft.content.writing_space,
        "gradeGuide": draft.content.grade_guide,
    });
    let change = match crate::papers::request::update(&body) {
        Ok(change) => change,
        Err(errors) => {
            let problems = errors.into_iter().map(|p| p.message).collect();
            return not_saved(signed, paper, &draft, problems).await;
        }
    };
    let refused = match crate::papers::update(state, &signed.user.id, &paper.id, &change).await {
        Ok(saved) => {
            return Ok(see_other(&format!(
                "/app/papers/{}?saved={}",
                saved.id, saved.revision
            )));
        }
        Err(e) => e,
    };
    match refused {
        ApiError::StaleRevision(latest_revision) => {
            stale(signed, paper, &draft, latest_revision).await
        }
        other => match crate::app::problems::listed(&other) {
            Some(listed) => {
                let problems = listed.into_iter().map(|p| p.message).collect();
                not_saved(signed, paper, &draft, problems).await
            }
            None => match other {
                ApiError::PaperTooLong { .. }
                | ApiError::PaperNotTypesettable(_)
                | ApiError::ServiceUnavailable(_) => {
                    let problems = vec![other.message()];
                    not_saved(signed, paper, &draft, problems).await
                }
                other => Err(other.into()),
            },
        },
    }
}

/// The builder again with the draft unsaved and why it was not saved.
async fn not_saved(
    signed: &Signed,
    paper: &StoredPaper,
    draft: &Draft,
    problems: Vec<String>,
) -> Result<Response, AppError> {
    let said = Said {
        problems,
        unsaved: true,
        ..Said::default()
    };
    builder(signed, paper, draft, said, StatusCode::UNPROCESSABLE_ENTITY).await
}

/// The builder on the latest revision, saved since the draft's base, with what changed in it and
/// the draft kept to save on top.
async fn stale(
    signed: &Signed,
    paper: &StoredPaper,
    draft: &Draft,
    latest_revision: i64,
) -> Result<Response, AppError> {
    let state = &signed.visit.state;
    let latest = crate::papers::stored(state, &signed.user.id, &paper.id, None).await?;
    let before = crate::papers::stored(state, &signed.user.id, &paper.id, Some(draft.base)).await?;
    let all: Vec<Pin> = before
        .content
        .questions
        .iter()
        .chain(&latest.content.questions)
        .cloned()
        .collect();
    let titled = rows(signed, &all).await?;
    let titles = |pin: &Pin| {
        titled
            .iter()
            .find(|r| r.pin.question_id == pin.question_id)
            .map_or_else(|| pin.question_id.clone(), |r| r.title.clone())
    };
    let changed = changes(&before.content, &latest.content, &titles);
    let said = Said {
        stale: Some((latest_revision, changed)),
        unsaved: true,
        ..Said::default()
    };
    builder(signed, &latest, draft, said, StatusCode::CONFLICT).await
}

/// `POST /app/papers/{id}/add`: the bank's question added at the end, saved as a revision, then
/// back to the search.
pub async fn add(signed: Signed, id: &str, form: Form) -> Result<Response, AppError> {
    let paper = latest(&signed, id).await?.ok_or_else(not_found)?;
    let pin = form
        .get("pin")
        .and_then(read_pin)
        .ok_or_else(|| AppError::BadForm("the question to add is missing".into()))?;
    let base: i64 = form
        .get("revision")
        .and_then(|r| r.parse().ok())
        .ok_or_else(|| AppError::BadForm("the paper's revision is missing".into()))?;
    let mut draft = Draft {
        base,
        content: paper.content.clone(),
    };
    if base == paper.revision
        && paper
            .content
            .questions
            .iter()
            .any(|p| p.question_id == pin.question_id)
    {
        return Ok(see_other(&back(&form, id)));
    }
    draft.content.questions.push(pin);
    if base != paper.revision {
        // The paper changed since the search page was drawn: show the conflict with this question
        // added to the latest, for the teacher to save or not.
        draft.base = base;
        return save(&signed, &paper, draft).await;
    }
    let change = UpdatePaper {
        revision: base,
        title: None,
        questions: Some(draft.content.questions.clone()),
        writing_space: None,
        grade_guide: None,
    };
    match crate::papers::update(&signed.visit.state, &signed.user.id, &paper.id, &change).await {
        Ok(_) => Ok(see_other(&back(&form, id))),
        Err(_) => save(&signed, &paper, draft).await,
    }
}

/// Where to go after adding: the search it came from, or the paper.
fn back(form: &Form, id: &str) -> String {
    match form.get("back") {
        Some(back)
            if back.starts_with("/app/bank?") && !back.contains("//") && !back.contains('\\') =>
        {
            back.to_owned()
        }
        _ => format!("/app/papers/{id}"),
    }
}
