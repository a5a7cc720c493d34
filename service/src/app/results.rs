//! A class set's results in the app (`/app/class-sets/{id}/results`): the marks as the markbook
//! has them, what the class got and lost (a table per question, a chart of each criterion's
//! share awarded drawn here as SVG, and the criteria most often lost, each with its requirement
//! typeset as the papers set it and the answers that lost it, each linked to its review page,
//! stepping through those answers), the markbook's downloads
//! (`/app/class-sets/{id}/markbook.csv`, `.xlsx`, `criteria.csv`) and the marked scripts to hand
//! back (`returned.pdf`, `returned.zip`, `?draft=true`), written by [`crate::results`] as the
//! API's are.

use maud::{Markup, html};
use warp::http::StatusCode;
use warp::reply::Response;

use std::collections::HashMap;

use super::layout::{Section, page};
use super::math::Maths;
use super::review::question_href;
use super::review::scheme::SessionScheme;
use super::{AppError, Signed, header, html};
use crate::error::ApiError;
use crate::results::analysis::{self, CriterionStats, ItemAnalysis};
use crate::results::class::{self, ClassResults, ResultsError};
use crate::results::download::Download;
use crate::results::markbook::{self, Cell};
use crate::results::returned::ReturnedError;
use crate::results::returned::builds::{self, BuildError, BuildKey, Kind};
use crate::store::{now_ms, utc_date};

/// How many of the criteria most often lost the page lists.
const MOST_LOST: usize = 5;

fn not_found() -> AppError {
    AppError::NotFound("class set")
}

async fn load(signed: &Signed, id: &str) -> Result<(String, ClassResults), AppError> {
    let id = crate::http::parse_id(id, "class set").map_err(|_| not_found())?;
    match class::of_class_set(&signed.visit.state.store, &signed.user.id, &id).await {
        Ok(results) => Ok((id, results)),
        Err(ResultsError::NotFound(_)) => Err(not_found()),
        Err(ResultsError::Store(e)) => Err(e.into()),
        Err(e) => {
            tracing::error!(error = %e, class_set = %id, "a class's results cannot be read");
            Err(AppError::Api(ApiError::Internal))
        }
    }
}

/// The links to the markbook's files and the marked scripts to hand back.
pub fn downloads(set_id: &str) -> Markup {
    html! {
        ul.downloads #downloads {
            li { a href={ "/app/class-sets/" (set_id) "/markbook.xlsx" } download { "Markbook (XLSX: marks, criteria, analysis)" } }
            li { a href={ "/app/class-sets/" (set_id) "/markbook.csv" } download { "Markbook (CSV: marks)" } }
            li { a href={ "/app/class-sets/" (set_id) "/criteria.csv" } download { "Every criterion decision (CSV)" } }
        }
        ul.downloads #returned {
            li { a href={ "/app/class-sets/" (set_id) "/returned.pdf" } { "Marked scripts to hand back (one PDF, in roster order)" } }
            li { a href={ "/app/class-sets/" (set_id) "/returned.zip" } { "Marked scripts (a PDF per student, zipped)" } }
            li { a href={ "/app/class-sets/" (set_id) "/returned.pdf?draft=true" } { "Drafts, before every question is reviewed" } }
        }
    }
}

pub(super) fn file_response(content_type: &str, bytes: Vec<u8>, name: &str) -> Response {
    let mut response = Response::new(bytes.into());
    *response.status_mut() = StatusCode::OK;
    header(&mut response, "content-type", content_type);
    as_download(response, name)
}

/// `response` sent as a download named `name`, never stored.
fn as_download(mut response: Response, name: &str) -> Response {
    header(
        &mut response,
        "content-disposition",
        &format!("attachment; filename=\"{name}\""),
    );
    header(&mut response, "cache-control", "private, no-store");
    response
}

/// `GET /app/class-sets/{id}/returned.pdf` or `.zip` (`?draft=true` for drafts): the class's
/// marked scripts; scripts not marked finally are named on a page of their own (409).
async fn returned(signed: Signed, id: &str, zip: bool) -> Result<Response, AppError> {
    let draft = signed.visit.query_param("draft").as_deref() == Some("true");
    let (id, results) = load(&signed, id).await?;
    let scripts = results.scripts_to_return(&utc_date(now_ms()));
    let key = BuildKey {
        user_id: signed.user.id.clone(),
        set_id: id.clone(),
        kind: if zip { Kind::Zip } else { Kind::Pdf },
        draft,
    };
    let sources = signed.visit.state.returned_sources();
    let made = match builds::class_file(sources, key, &results, &scripts).await {
        Ok(made) => Ok(made),
        Err(BuildError::Returned(e)) => Err(e),
        Err(BuildError::Busy {
            message,
            retry_after,
        }) => {
            return Err(AppError::Api(ApiError::Busy {
                message,
                retry_after: i64::try_from(retry_after).unwrap_or(i64::MAX),
            }));
        }
    };
    let made = match made {
        Ok(made) => made,
        Err(ReturnedError::ClassNotFinal { scripts }) => {
            let body = html! {
                p.crumbs { a href={ "/app/class-sets/" (id) "/results" } { "← Results: " (results.title) } }
                h1 { "Not every script is marked finally" }
                p #not-final { "These scripts have questions waiting, being marked or needing review. Review them, or hand back drafts marked “Draft” on every page." }
                ul {
                    @for s in &scripts {
                        li { (s.student) ": " @if s.questions.is_empty() { "nothing is marked yet" } @else { "questions " (s.questions.join(", ")) } }
                    }
                }
                p { a #drafts href={ "/app/class-sets/" (id) "/returned." (if zip { "zip" } else { "pdf" }) "?draft=true" } { "Download the drafts" } }
            };
            return Ok(html(
                StatusCode::CONFLICT,
                page(
                    "Not every script is marked finally",
                    Some(&signed),
                    Section::ClassSets,
                    body,
                ),
            ));
        }
        Err(ReturnedError::Store(e)) => return Err(e.into()),
        Err(e) => {
            tracing::error!(error = %e, code = e.code(), "returning marked scripts failed");
            return Err(AppError::Api(ApiError::Internal));
        }
    };
    let (content_type, name) = if zip {
        ("application/zip", "returned.zip")
    } else {
        ("application/pdf", "returned.pdf")
    };
    Ok(as_download(
        crate::http::streamed_file(StatusCode::OK, content_type, made.file, made.len),
        &format!("class-set-{id}-{name}"),
    ))
}

/// `GET /app/class-sets/{id}/{file}`: a file of the markbook, or the marked scripts.
pub async fn download(signed: Signed, id: &str, name: &str) -> Result<Response, AppError> {
    match name {
        "returned.pdf" => return returned(signed, id, false).await,
        "returned.zip" => return returned(signed, id, true).await,
        _ => {}
    }
    let which = Download::named(name).ok_or(AppError::NotFound("page"))?;
    let (id, results) = load(&signed, id).await?;
    let file = which.write(&results).map_err(|e| {
        tracing::error!(error = %e, "writing a class's results failed");
        AppError::Api(ApiError::Internal)
    })?;
    Ok(file_response(
        file.content_type,
        file.bytes,
        &format!("class-set-{id}-{}", which.file_name()),
    ))
}

/// `GET /app/class-sets/{id}/results`.
pub async fn show(signed: Signed, id: &str) -> Result<Response, AppError> {
    let (id, results) = load(&signed, id).await?;
    let marks = markbook::marks(&results);
    let analysis = analysis::analyse(&results);
    let lost = analysis.most_lost(MOST_LOST);
    let requirements = requirements(&signed, &lost).await?;
    let maths = &signed.visit.state.maths;
    maths.prepare(requirements.values()).await;
    let body = html! {
        p.crumbs {
            a href="/app/class-sets" { "Class sets" } " › "
            a href={ "/app/class-sets/" (id) } { (results.title) } " › Results"
        }
        h1 { "Results: " (results.title) }
        (downloads(&id))
        section #marks aria-labelledby="marks-title" {
            h2 #marks-title { "Marks" }
            p.hint { "A range is a question still needing review; “not scanned” a question whose page is not in the stack; ABS an absent student; an empty cell a question not marked yet." }
            div.scroll {
                table #marks-table {
                    thead { tr { @for title in &marks.header { th scope="col" { (title) } } } }
                    tbody {
                        @for row in &marks.rows {
                            tr { @for cell in row { td { (cell_text(cell)) } } }
                        }
                    }
                }
            }
        }
        (analysis_section(maths, &analysis, &lost, &requirements))
    };
    Ok(html(
        StatusCode::OK,
        page(
            &format!("Results: {}", results.title),
            Some(&signed),
            Section::ClassSets,
            body,
        ),
    ))
}

/// The requirement of each criterion in `lost`, by question label and criterion id, as the
/// scheme its answers were marked against has it (read from the session of the first answer
/// that lost it).
async fn requirements(
    signed: &Signed,
    lost: &[&CriterionStats],
) -> Result<HashMap<(String, String), String>, AppError> {
    let store = &signed.visit.state.store;
    let mut schemes: HashMap<String, Option<SessionScheme>> = HashMap::new();
    let mut requirements = HashMap::new();
    for c in lost {
        let Some(first) = c.lost_by.first() else {
            continue;
        };
        if !schemes.contains_key(&first.session_id) {
            let scheme = SessionScheme::of_session(store, &first.session_id).await?;
            schemes.insert(first.session_id.clone(), scheme);
        }
        let requirement = schemes
            .get(&first.session_id)
            .and_then(Option::as_ref)
            .and_then(|s| s.criterion(&c.question, &c.id));
        if let Some(r) = requirement.filter(|r| !r.requirement.is_empty()) {
            requirements.insert((c.question.clone(), c.id.clone()), r.requirement.clone());
        }
    }
    Ok(requirements)
}

fn cell_text(cell: &Cell) -> String {
    match cell {
        Cell::Empty => String::new(),
        Cell::Int(n) => n.to_string(),
        Cell::Decimal(x) => format!("{x}"),
        Cell::Text(t) => t.clone(),
    }
}

fn one_decimal(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format!("{v:.1}"))
}

fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "—".to_owned(), |s| format!("{:.0}%", s * 100.0))
}

fn analysis_section(
    maths: &Maths,
    analysis: &ItemAnalysis,
    lost: &[&CriterionStats],
    requirements: &HashMap<(String, String), String>,
) -> Markup {
    html! {
        section #analysis aria-labelledby="analysis-title" {
            h2 #analysis-title { "What the class got wrong" }
            p.hint { "Counted over the " (analysis.scripts) " scripts, each question where it is marked (a question needing review by the marks awarded so far). A question whose page was not scanned is left out, and counted under Not scanned." }
            table #question-table {
                thead { tr {
                    th scope="col" { "Question" } th scope="col" { "Maximum" } th scope="col" { "Marked" } th scope="col" { "Not scanned" }
                    th scope="col" { "Mean" } th scope="col" { "Spread (SD)" } th scope="col" { "Range" } th scope="col" { "Full marks" }
                } }
                tbody {
                    @for q in &analysis.questions {
                        tr {
                            th scope="row" { "Q" (q.label) }
                            td { (q.max) } td { (q.marked) } td { (q.not_scanned) } td { (one_decimal(q.mean)) } td { (one_decimal(q.spread)) }
                            td { @match (q.lowest, q.highest) { (Some(l), Some(h)) => { (l) "–" (h) } _ => "—" } }
                            td { (percent(q.full_marks_share)) }
                        }
                    }
                }
            }
            (chart(&analysis.criteria))
            h3 #most-lost-title { "The marks most often lost" }
            @if lost.is_empty() {
                p #most-lost { "No mark was withheld in a marked question." }
            } @else {
                ol #most-lost {
                    @for c in lost {
                        li data-criterion=(c.id) {
                            strong { (c.name) }
                            @if let Some(requirement) = requirements.get(&(c.question.clone(), c.id.clone())) {
                                " — " span.requirement { (maths.rich(requirement)) }
                            }
                            ": withheld in " (c.withheld) " of " (c.marked) " (" (percent(Some(c.lost_share()))) "). "
                            @if let Some(first) = c.lost_by.first() {
                                a.step href=(question_href(&first.question_id, Some(&c.id))) { "Review the answers that lost it" }
                                ". "
                            }
                            "Lost by: "
                            @for (n, answer) in c.lost_by.iter().enumerate() {
                                @if n > 0 { ", " }
                                a href=(question_href(&answer.question_id, Some(&c.id))) {
                                    (answer.student.clone().or_else(|| answer.copy.map(|c| format!("copy {c:03}"))).unwrap_or_else(|| "a script".to_owned()))
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A bar per criterion, its share of the class awarded it, drawn as SVG.
fn chart(criteria: &[CriterionStats]) -> Markup {
    let row = 22.0_f64;
    let (label_w, bar_w) = (110.0_f64, 420.0_f64);
    let height = row * criteria.len() as f64 + 24.0;
    html! {
        figure.chart #criteria-chart {
            svg viewBox={ "0 0 600 " (format!("{height:.0}")) } role="img" aria-labelledby="criteria-chart-title" {
                title #criteria-chart-title { "The share of the class awarded each criterion; the table below holds the same figures." }
                @for (i, c) in criteria.iter().enumerate() {
                    @let y = i as f64 * row + 4.0;
                    @let share = c.awarded_share.unwrap_or(0.0);
                    text x="0" y=(format!("{:.1}", y + 14.0)) class="label" { (c.name) }
                    rect.track x=(label_w) y=(format!("{y:.1}")) width=(bar_w) height=(format!("{:.1}", row - 6.0)) {}
                    @if share > 0.0 {
                        rect.ok x=(label_w) y=(format!("{y:.1}")) width=(format!("{:.1}", bar_w * share)) height=(format!("{:.1}", row - 6.0)) {
                            title { (c.name) ": awarded in " (c.awarded) " of " (c.marked) }
                        }
                    }
                    text x=(format!("{:.1}", label_w + bar_w + 8.0)) y=(format!("{:.1}", y + 14.0)) class="label" { (percent(c.awarded_share)) }
                }
            }
            figcaption { "Share of the marked scripts awarded each criterion." }
        }
        table #criteria-table {
            thead { tr {
                th scope="col" { "Criterion" } th scope="col" { "Marked" } th scope="col" { "Awarded" }
                th scope="col" { "Withheld" } th scope="col" { "Uncertain" } th scope="col" { "Share awarded" }
            } }
            tbody {
                @for c in criteria {
                    tr {
                        th scope="row" { (c.name) }
                        td { (c.marked) } td { (c.awarded) } td { (c.withheld) } td { (c.uncertain) } td { (percent(c.awarded_share)) }
                    }
                }
            }
        }
    }
}
