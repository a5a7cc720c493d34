//! A paper's revision: its page with its questions and two PDFs, the PDFs themselves, and the
//! form that prints it for a class (a pasted roster or a number of copies).

use maud::{Markup, html};
use warp::http::StatusCode;
use warp::reply::Response;

use super::pins::diagram_href;
use super::rows::rows;
use super::{not_found, paper_id, space_text};
use crate::app::layout::{Section, csrf, page};
use crate::app::{AppError, Form, Signed, content, html, see_other};
use crate::error::ApiError;
use crate::store::papers::{ExportKind, StoredPaper};

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
                            (content::question(&state.maths, revision, &|asset| diagram_href(&row.pin, asset)))
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
    Ok(crate::app::results::file_response(
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
