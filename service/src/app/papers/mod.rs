//! The paper builder: the account's papers with their revisions, a paper being built (add from
//! the bank, remove, reorder, title, writing space, grade guide, with its totals as it changes),
//! each revision with its two PDFs, and the form that prints a class from a revision.
//!
//! A paper's changes are a draft held by the page's form (each question a hidden pin, in order):
//! moving or removing a question sends the draft back and shows it changed, unsaved; "Save"
//! saves it as the next revision through [`crate::papers::update`], the path of
//! `PATCH /v1/papers/{id}`. A save from a revision that is no longer the latest saves nothing: the
//! page shows what changed since, keeps the draft, and offers to save it on top. Adding from the
//! bank saves at once (a revision with the question at the end). Every form works without script;
//! the page's script moves rows in place.

use maud::{Markup, html};
use warp::http::StatusCode;
use warp::reply::Response;

use super::bank::{pin_fields, read_pin};
use super::layout::{Section, csrf, page, when};
use super::{AppError, Form, Signed, content, html, see_other};
use crate::http::ApiError;
use crate::http::paper_body::{CreatePaper, MAX_QUESTIONS, UpdatePaper, WRITING_SPACES};
use crate::store::papers::{ExportKind, PaperContent, Pin, StoredPaper};

/// A paper's latest revision, `None` when the account has no such paper.
pub async fn latest(signed: &Signed, id: &str) -> Result<Option<StoredPaper>, AppError> {
    let Some(id) = paper_id(id) else {
        return Ok(None);
    };
    Ok(signed
        .visit
        .state
        .store
        .paper(&signed.user.id, &id, None)
        .await?)
}

fn paper_id(raw: &str) -> Option<String> {
    uuid::Uuid::try_parse(raw)
        .ok()
        .map(|id| id.hyphenated().to_string())
}

fn not_found() -> AppError {
    AppError::NotFound("paper")
}

const SPACE_TEXT: [(&str, &str); 5] = [
    ("smart", "As the marks need"),
    ("none", "None"),
    ("1-page", "One page a question"),
    ("2-pages", "Two pages a question"),
    ("3-pages", "Three pages a question"),
];

fn space_text(space: &str) -> &str {
    SPACE_TEXT
        .iter()
        .find(|(v, _)| *v == space)
        .map_or(space, |(_, t)| t)
}

/// `GET /app/papers`: the account's papers, newest first, each with its revisions.
pub async fn list(signed: Signed) -> Result<Response, AppError> {
    let papers = signed.visit.state.store.papers(&signed.user.id).await?;
    let body = html! {
        h1 { "Papers" }
        p { a href="/app/bank" { "Search the bank" } " to start a paper from a question." }
        @if papers.is_empty() {
            p #no-papers { "No paper yet." }
        } @else {
            table #papers {
                thead { tr { th scope="col" { "Paper" } th scope="col" { "Questions" } th scope="col" { "Marks" } th scope="col" { "Saved" } th scope="col" { "Revisions" } } }
                tbody {
                    @for p in &papers {
                        tr {
                            td { a href={ "/app/papers/" (p.id) } { (p.title) } }
                            td { (p.question_count) }
                            td { (p.total_marks) }
                            td { (when(p.updated_at)) }
                            td {
                                @for r in (1..=p.revision).rev() {
                                    a href={ "/app/papers/" (p.id) "/revisions/" (r) } { "r" (r) } " "
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    Ok(html(
        StatusCode::OK,
        page("Papers", Some(&signed), Section::Papers, body),
    ))
}

/// `POST /app/papers`: a new paper with the question sent (from a bank result).
pub async fn create(signed: Signed, form: Form) -> Result<Response, AppError> {
    let pin = form.get("pin").and_then(read_pin).ok_or_else(|| {
        AppError::BadForm("the question to start the paper with is missing".into())
    })?;
    let id = uuid::Uuid::new_v4().hyphenated().to_string();
    let paper = CreatePaper {
        id: id.clone(),
        content: PaperContent {
            title: "New paper".to_owned(),
            writing_space: "smart".to_owned(),
            grade_guide: false,
            questions: vec![pin],
        },
    };
    crate::papers::create(&signed.visit.state, &signed.user.id, &paper).await?;
    Ok(see_other(&format!("/app/papers/{id}")))
}

/// A paper being built, as the form holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Draft {
    /// The revision the draft was made from.
    base: i64,
    content: PaperContent,
}

impl Draft {
    fn of(paper: &StoredPaper) -> Draft {
        Draft {
            base: paper.revision,
            content: paper.content.clone(),
        }
    }

    fn read(form: &Form) -> Result<Draft, AppError> {
        let base = form
            .get("base")
            .and_then(|b| b.parse().ok())
            .ok_or_else(|| {
                AppError::BadForm("the revision the change was made from is missing".into())
            })?;
        let questions = form
            .all("pin")
            .into_iter()
            .map(|p| {
                read_pin(p).ok_or_else(|| AppError::BadForm(format!("{p:?} is not a question pin")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Draft {
            base,
            content: PaperContent {
                title: form.get("title").unwrap_or_default().trim().to_owned(),
                writing_space: form.get("writing_space").unwrap_or("smart").to_owned(),
                grade_guide: form.get("grade_guide") == Some("on"),
                questions,
            },
        })
    }

    /// The draft after a move or removal; `None` for an action that changes nothing.
    fn apply(mut self, action: &str) -> Option<Draft> {
        let (verb, index) = action.split_once(':')?;
        let i: usize = index.parse().ok()?;
        let q = &mut self.content.questions;
        match verb {
            "up" if i > 0 && i < q.len() => q.swap(i - 1, i),
            "down" if i + 1 < q.len() => q.swap(i, i + 1),
            "remove" if i < q.len() => {
                q.remove(i);
            }
            _ => return None,
        }
        Some(self)
    }
}

/// One question of a paper as the builder shows it.
struct Row {
    pin: Pin,
    title: String,
    marks: i64,
    revision: Option<examkit_bank::Revision>,
}

async fn rows(signed: &Signed, pins: &[Pin]) -> Result<Vec<Row>, AppError> {
    let store = &signed.visit.state.store;
    let mut rows = Vec::with_capacity(pins.len());
    for pin in pins {
        let stored = store.bank_revision(&pin.question_id, pin.revision).await?;
        let revision = stored
            .as_ref()
            .and_then(|s| content::read(&s.body, &pin.question_id));
        rows.push(Row {
            pin: pin.clone(),
            title: revision.as_ref().map_or_else(
                || "A question no longer in the bank".to_owned(),
                |r| r.title.clone(),
            ),
            marks: stored.as_ref().map_or(0, |s| s.marks),
            revision,
        });
    }
    // Every piece of maths the rows show, typeset before the page is drawn.
    signed
        .visit
        .state
        .maths
        .prepare(
            rows.iter()
                .filter_map(|r| r.revision.as_ref())
                .flat_map(content::texts),
        )
        .await;
    Ok(rows)
}

/// What the builder shows above the draft.
#[derive(Default)]
struct Said {
    notice: Option<String>,
    unsaved: bool,
    problems: Vec<String>,
    /// Since the draft's base: the latest revision and what changed in it.
    stale: Option<(i64, Vec<String>)>,
}

/// What changed from one revision's content to another's, in words.
fn changes(
    before: &PaperContent,
    after: &PaperContent,
    titles: &dyn Fn(&Pin) -> String,
) -> Vec<String> {
    let mut out = Vec::new();
    if before.title != after.title {
        out.push(format!("The title became “{}”.", after.title));
    }
    if before.writing_space != after.writing_space {
        out.push(format!(
            "The writing space became “{}”.",
            space_text(&after.writing_space)
        ));
    }
    if before.grade_guide != after.grade_guide {
        out.push(if after.grade_guide {
            "The grade guide was added.".to_owned()
        } else {
            "The grade guide was removed.".to_owned()
        });
    }
    for pin in &after.questions {
        if !before
            .questions
            .iter()
            .any(|p| p.question_id == pin.question_id)
        {
            out.push(format!("“{}” was added.", titles(pin)));
        }
    }
    for pin in &before.questions {
        if !after
            .questions
            .iter()
            .any(|p| p.question_id == pin.question_id)
        {
            out.push(format!("“{}” was removed.", titles(pin)));
        }
    }
    let kept = |list: &[Pin], other: &[Pin]| -> Vec<String> {
        list.iter()
            .filter(|p| other.iter().any(|o| o.question_id == p.question_id))
            .map(|p| p.question_id.clone())
            .collect()
    };
    if kept(&before.questions, &after.questions) != kept(&after.questions, &before.questions) {
        out.push("The questions were put in another order.".to_owned());
    }
    out
}

async fn builder(
    signed: &Signed,
    paper: &StoredPaper,
    draft: &Draft,
    said: Said,
    status: StatusCode,
) -> Result<Response, AppError> {
    let state = &signed.visit.state;
    let rows = rows(signed, &draft.content.questions).await?;
    let total: i64 = rows.iter().map(|r| r.marks).sum();
    let minutes = examkit_pdf::time_guide_minutes(u32::try_from(total).unwrap_or(0));
    let id = &paper.id;
    let count = rows.len();
    let body = html! {
        p.crumbs { a href="/app/papers" { "Papers" } " › " (paper.content.title) }
        h1 { "Paper: " (draft.content.title) }
        p { "Latest revision " (paper.revision) ", saved " (when(paper.saved_at)) ". "
            a href={ "/app/papers/" (id) "/revisions/" (paper.revision) } { "Its PDFs and printing" } }
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
        form.builder #builder method="post" action={ "/app/papers/" (id) } {
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
                                (content::question(&state.maths, revision, &|asset| super::bank::diagram_href(&row.pin, asset)))
                                (content::scheme(&state.maths, revision))
                            }
                        }
                    }
                }
            }
            p { button type="submit" name="action" value="save" { "Save as revision " (paper.revision + 1) } }
        }
        @if count < MAX_QUESTIONS {
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
    let change = match crate::http::paper_body::update(&body) {
        Ok(change) => change,
        Err(errors) => {
            let problems = super::problems::from_fields(errors)
                .into_iter()
                .map(|p| p.message)
                .collect();
            let said = Said {
                problems,
                unsaved: true,
                ..Said::default()
            };
            return builder(
                signed,
                paper,
                &draft,
                said,
                StatusCode::UNPROCESSABLE_ENTITY,
            )
            .await;
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
            let latest = crate::papers::stored(state, &signed.user.id, &paper.id, None).await?;
            let before =
                crate::papers::stored(state, &signed.user.id, &paper.id, Some(draft.base)).await?;
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
            builder(signed, &latest, &draft, said, StatusCode::CONFLICT).await
        }
        other => match super::problems::listed(&other) {
            Some(listed) => {
                let problems = listed.into_iter().map(|p| p.message).collect();
                builder(
                    signed,
                    paper,
                    &draft,
                    Said {
                        problems,
                        unsaved: true,
                        ..Said::default()
                    },
                    StatusCode::UNPROCESSABLE_ENTITY,
                )
                .await
            }
            None => match other {
                ApiError::PaperTooLong { .. }
                | ApiError::PaperNotTypesettable(_)
                | ApiError::ServiceUnavailable(_) => {
                    let problems = vec![other.message()];
                    builder(
                        signed,
                        paper,
                        &draft,
                        Said {
                            problems,
                            unsaved: true,
                            ..Said::default()
                        },
                        StatusCode::UNPROCESSABLE_ENTITY,
                    )
                    .await
                }
                other => Err(other.into()),
            },
        },
    }
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

async fn revision_of(signed: &Signed, id: &str, revision: &str) -> Result<StoredPaper, AppError> {
    let id = paper_id(id).ok_or_else(not_found)?;
    let revision: i64 = revision.parse().map_err(|_| not_found())?;
    signed
        .visit
        .state
        .store
        .paper(&signed.user.id, &id, Some(revision))
        .await?
        .ok_or(AppError::NotFound("paper revision"))
}

/// The print form's fields, as sent.
#[derive(Default)]
pub struct PrintForm<'a> {
    /// The roster as pasted.
    pub roster: &'a str,
    /// A number of copies.
    pub copies: &'a str,
    /// The set's title.
    pub title: &'a str,
}

/// `GET /app/papers/{id}/revisions/{revision}`: a revision's questions, its two PDFs, and the
/// form that prints it for a class.
pub async fn revision(signed: Signed, id: &str, revision: &str) -> Result<Response, AppError> {
    let paper = revision_of(&signed, id, revision).await?;
    revision_page(
        &signed,
        &paper,
        &PrintForm::default(),
        &[],
        &[],
        StatusCode::OK,
    )
    .await
}

/// The revision's page, with the print form as sent and its problems.
pub async fn revision_page(
    signed: &Signed,
    paper: &StoredPaper,
    sent: &PrintForm<'_>,
    line_problems: &[crate::class_sets::roster::LineProblem],
    problems: &[String],
    status: StatusCode,
) -> Result<Response, AppError> {
    let state = &signed.visit.state;
    let rows = rows(signed, &paper.content.questions).await?;
    let base = format!("/app/papers/{}/revisions/{}", paper.id, paper.revision);
    let body = html! {
        p.crumbs { a href="/app/papers" { "Papers" } " › " a href={ "/app/papers/" (paper.id) } { (paper.content.title) } " › Revision " (paper.revision) }
        h1 { (paper.content.title) ", revision " (paper.revision) }
        p { (paper.content.questions.len()) " questions · " (paper.figures.total_marks) " marks · "
            (paper.figures.paper_pages) " pages, mark scheme " (paper.figures.scheme_pages) " pages · writing space: " (space_text(&paper.content.writing_space)) }
        ul.downloads #paper-downloads {
            li { a href={ (base) "/question-paper.pdf" } download { "Question paper (PDF)" } }
            li { a href={ (base) "/mark-scheme.pdf" } download { "Mark scheme (PDF)" } }
        }
        (print_form(signed, &base, sent, line_problems, problems))
        section aria-labelledby="questions-title" {
            h2 #questions-title { "Questions" }
            ol {
                @for row in &rows {
                    li {
                        h3 { (row.title) " (" (row.marks) " marks)" }
                        @if let Some(revision) = &row.revision {
                            (content::question(&state.maths, revision, &|asset| super::bank::diagram_href(&row.pin, asset)))
                            (content::scheme(&state.maths, revision))
                        }
                    }
                }
            }
        }
    };
    Ok(html(
        status,
        page(
            &format!("{}, revision {}", paper.content.title, paper.revision),
            Some(signed),
            Section::Papers,
            body,
        ),
    ))
}

fn print_form(
    signed: &Signed,
    base: &str,
    sent: &PrintForm<'_>,
    line_problems: &[crate::class_sets::roster::LineProblem],
    problems: &[String],
) -> Markup {
    html! {
        section aria-labelledby="print-title" {
            h2 #print-title { "Print for a class" }
            @if !line_problems.is_empty() || !problems.is_empty() {
                div.error role="alert" #print-problems {
                    p { "Nothing was made yet. Correct these and make the set again:" }
                    ul {
                        @for p in problems { li { (p) } }
                        @for p in line_problems {
                            li { "Line " (p.line) " (" code { (p.text) } "): " (p.message) }
                        }
                    }
                }
            }
            form #print method="post" action={ (base) "/class-set" } {
                (csrf(signed))
                p {
                    label for="set-title" { "Set title (optional)" }
                    input #set-title type="text" name="title" maxlength="200" value=(sent.title);
                }
                p {
                    label for="roster" { "Roster: one student a line, the name, then the candidate number after a tab or comma if there is one" }
                    textarea #roster name="roster" rows="10" cols="50" { (sent.roster) }
                }
                p {
                    label for="copies" { "Or a number of unnamed copies" }
                    input #copies type="number" name="copies" min="1" max=(crate::class_sets::MAX_COPIES) value=(sent.copies);
                }
                p { button type="submit" { "Make the class set" } }
            }
        }
    }
}

/// `GET /app/papers/{id}/revisions/{revision}/{question-paper|mark-scheme}.pdf`.
pub async fn pdf(
    signed: Signed,
    id: &str,
    revision: &str,
    file: &str,
) -> Result<Response, AppError> {
    let kind = match file {
        "question-paper.pdf" => ExportKind::QuestionPaper,
        "mark-scheme.pdf" => ExportKind::MarkScheme,
        _ => return Err(AppError::NotFound("page")),
    };
    let paper = revision_of(&signed, id, revision).await?;
    let state = &signed.visit.state;
    crate::papers::ensure_exports(state, &signed.user.id, &paper.id, paper.revision).await?;
    let bytes = state
        .store
        .paper_export(&signed.user.id, &paper.id, paper.revision, kind)
        .await?
        .ok_or(AppError::Api(ApiError::ExportsNotReady))?;
    let name = file.trim_end_matches(".pdf");
    Ok(super::results::file_response(
        "application/pdf",
        bytes,
        &format!("paper-{}-r{}-{name}.pdf", paper.id, paper.revision),
    ))
}

/// `POST /app/papers/{id}/revisions/{revision}/class-set`: a class set from the pasted roster or
/// a number of copies; every line that cannot be used is shown and nothing is made until the
/// roster is right.
pub async fn print(
    signed: Signed,
    id: &str,
    revision: &str,
    form: Form,
) -> Result<Response, AppError> {
    use crate::class_sets::roster;
    let paper = revision_of(&signed, id, revision).await?;
    let sent = PrintForm {
        roster: form.get("roster").unwrap_or_default(),
        copies: form.get("copies").unwrap_or_default().trim(),
        title: form.get("title").unwrap_or_default().trim(),
    };
    let pasted = roster::read(sent.roster);
    let mut body = serde_json::json!({ "paperId": paper.id, "revision": paper.revision });
    if !sent.title.is_empty() {
        body["title"] = sent.title.into();
    }
    let has_roster = !pasted.students.is_empty() || !pasted.problems.is_empty();
    match (has_roster, sent.copies.is_empty()) {
        (true, true) => body["roster"] = roster::roster_value(&pasted.students),
        (false, false) => {
            body["copies"] = match sent.copies.parse::<i64>() {
                Ok(n) => n.into(),
                Err(_) => sent.copies.into(),
            }
        }
        (true, false) => {
            let problems = ["Give a roster or a number of copies, not both.".to_owned()];
            return revision_page(
                &signed,
                &paper,
                &sent,
                &[],
                &problems,
                StatusCode::UNPROCESSABLE_ENTITY,
            )
            .await;
        }
        (false, true) => {
            let problems = ["Paste a roster, or give a number of copies.".to_owned()];
            return revision_page(
                &signed,
                &paper,
                &sent,
                &[],
                &problems,
                StatusCode::UNPROCESSABLE_ENTITY,
            )
            .await;
        }
    }
    let request = crate::class_sets::parse_new(&body);
    let (mut line_problems, others) = match &request {
        Ok(_) => (Vec::new(), Vec::new()),
        Err(problems) => roster::at_lines(&pasted.students, sent.roster, problems.clone()),
    };
    line_problems.extend(pasted.problems.iter().cloned());
    line_problems.sort_by_key(|p| p.line);
    let others: Vec<String> = others.into_iter().map(|p| p.message).collect();
    let request = match request {
        Ok(request) if line_problems.is_empty() => request,
        _ => {
            return revision_page(
                &signed,
                &paper,
                &sent,
                &line_problems,
                &others,
                StatusCode::UNPROCESSABLE_ENTITY,
            )
            .await;
        }
    };
    let (set, _) =
        crate::class_sets::printing::create(&signed.visit.state, &signed.user.id, &request).await?;
    Ok(see_other(&format!("/app/class-sets/{}", set.id)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(id: &str) -> Pin {
        Pin {
            question_id: id.to_owned(),
            revision: 1,
            content_version: "c".into(),
            scheme_version: "s".into(),
        }
    }

    fn draft(ids: &[&str]) -> Draft {
        Draft {
            base: 1,
            content: PaperContent {
                title: "T".into(),
                writing_space: "smart".into(),
                grade_guide: false,
                questions: ids.iter().map(|id| pin(id)).collect(),
            },
        }
    }

    fn order(d: &Draft) -> Vec<&str> {
        d.content
            .questions
            .iter()
            .map(|p| p.question_id.as_str())
            .collect()
    }

    #[test]
    fn moves_and_removals_change_the_draft_and_nothing_else() {
        let d = draft(&["a", "b", "c"]);
        assert_eq!(
            order(&d.clone().apply("up:1").expect("up")),
            ["b", "a", "c"]
        );
        assert_eq!(
            order(&d.clone().apply("down:1").expect("down")),
            ["a", "c", "b"]
        );
        assert_eq!(
            order(&d.clone().apply("remove:0").expect("remove")),
            ["b", "c"]
        );
        for bad in ["up:0", "down:2", "remove:3", "up:x", "spin:1", "save", ""] {
            assert_eq!(d.clone().apply(bad), None, "{bad}");
        }
    }

    #[test]
    fn what_changed_is_said_in_words() {
        let before = draft(&["a", "b", "c"]).content;
        let mut after = draft(&["c", "a", "d"]).content;
        after.title = "Mock".into();
        after.grade_guide = true;
        let said = changes(&before, &after, &|p| p.question_id.to_uppercase());
        assert_eq!(
            said,
            [
                "The title became “Mock”.",
                "The grade guide was added.",
                "“D” was added.",
                "“B” was removed.",
                "The questions were put in another order.",
            ]
        );
        assert!(changes(&before, &before, &|p| p.question_id.clone()).is_empty());
    }
}
