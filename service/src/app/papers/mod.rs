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
//!
//! Its rooms: [`draft`] (the paper as the builder's form holds it, its moves and removals, and
//! what changed between two revisions, in words), [`rows`] (a paper's questions as its pages show
//! them), [`builder`] (the builder's page, its changes and saves, and adding from the bank),
//! [`revisions`] (a revision's page, its PDFs and the form that prints it for a class) and
//! [`pins`] (a pinned question as a form carries it, and its diagrams' address, which the bank's
//! page shares); this file holds the list of papers and the start of a new one.

mod builder;
mod draft;
pub mod pins;
mod revisions;
mod rows;

pub use builder::{add, change, show};
pub use revisions::{PrintForm, pdf, print, revision, revision_page};

use maud::html;
use warp::http::StatusCode;
use warp::reply::Response;

use super::layout::{Section, page, when};
use super::{AppError, Form, Signed, html, see_other};
use crate::papers::request::CreatePaper;
use crate::store::papers::{PaperContent, StoredPaper};
use pins::read_pin;

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
