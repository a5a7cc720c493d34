//! The review pages: marked sessions, class sets (the sessions made from one paper revision,
//! marked question by question), and one question with its pages, evidence and decisions.
//!
//! Decisions are saved through [`crate::review::review`], the path of
//! `PATCH /v1/marking/questions/{id}`: the same checks, engine and revision rule.

use std::collections::HashMap;

use maud::{Markup, html};
use warp::http::StatusCode;
use warp::reply::Response;

use super::layout::{Section, csrf, page, score, status_text, when};
use super::{AppError, Form, Signed, html, see_other};
use crate::http::ApiError;
use crate::marked::{
    CheckResult, Decision, MarkedCriterion, MarkedError, MarkedQuestion, MarkerSource, Outcome,
    PlacementRule,
};
use crate::review::ReviewError;
use crate::store::marking::{QuestionRow, Reviewer, ReviewerKind, SessionRow, SetQuestion};

/// Sessions listed on the first page.
const LISTED_SESSIONS: i64 = 50;
/// The longest reason a teacher may give.
pub const MAX_REASON_CHARS: usize = 2000;

fn parse_id(raw: &str, what: &'static str) -> Result<String, AppError> {
    crate::http::parse_id(raw, what).map_err(|_| AppError::NotFound(what))
}

fn kind_text(session: &SessionRow) -> &'static str {
    if session.origin == crate::store::automated::ORIGIN {
        "Automated marking"
    } else {
        "Imported marking"
    }
}

fn status_badge(status: &str) -> Markup {
    html! { span class={ "badge status-" (status) } { (status_text(status)) } }
}

/// `GET /app/sessions`: sessions newest first with each question's status and score range;
/// `?review=1` keeps only questions that need review.
pub async fn sessions(signed: Signed) -> Result<Response, AppError> {
    let store = &signed.visit.state.store;
    let only_review = signed.visit.query_param("review").as_deref() == Some("1");
    let rows = store
        .recent_sessions(&signed.user.id, LISTED_SESSIONS)
        .await?;
    let mut listed = Vec::new();
    for row in rows {
        let questions = store.session_questions(&row.session.id).await?;
        let questions: Vec<QuestionRow> = questions
            .into_iter()
            .filter(|q| !only_review || q.status == "needs_review")
            .collect();
        if only_review && questions.is_empty() {
            continue;
        }
        listed.push((row, questions));
    }
    let body = html! {
        h1 { "Marked work" }
        nav.filter aria-label="Filter" {
            @if only_review {
                a href="/app/sessions" { "Show every question" }
                " · " strong { "Showing questions that need review" }
            } @else {
                strong { "Showing every question" }
                " · " a href="/app/sessions?review=1" #filter-review { "Only questions that need review" }
            }
        }
        @if listed.is_empty() {
            p #no-sessions {
                @if only_review { "No question needs review." } @else { "No marked work yet. Marking sessions made through the API appear here." }
            }
        }
        @for (row, questions) in &listed {
            @let s = &row.session;
            section.session aria-labelledby={ "s-" (s.id) } {
                h2 #{ "s-" (s.id) } { a href={ "/app/sessions/" (s.id) } { (s.title) } }
                p.meta {
                    (kind_text(s)) " · " (when(s.created_at)) " · score "
                    strong { (score(row.score.0, row.score.1, row.score.2)) }
                    @if let Some((paper, revision)) = &s.paper {
                        " · " a href={ "/app/sets/" (paper) "/" (revision) } { "Mark the class set by question" }
                    }
                }
                @if questions.is_empty() {
                    p.hint { "No questions marked yet." }
                } @else {
                    ul.questions {
                        @for q in questions {
                            li {
                                a href={ "/app/questions/" (q.id) } { "Question " (q.label) }
                                " " (status_badge(&q.status)) " "
                                span.score { (score(q.awarded, q.possible, q.max_marks)) }
                            }
                        }
                    }
                }
            }
        }
    };
    Ok(html(
        StatusCode::OK,
        page("Marked work", Some(&signed), Section::Review, body),
    ))
}

/// `GET /app/sessions/{id}`.
pub async fn session(signed: Signed, id: &str) -> Result<Response, AppError> {
    let id = parse_id(id, "marking session")?;
    let store = &signed.visit.state.store;
    let s = store
        .session(&signed.user.id, &id)
        .await?
        .ok_or(AppError::NotFound("marking session"))?;
    let questions = store.session_questions(&s.id).await?;
    let total = |f: fn(&QuestionRow) -> i64| questions.iter().map(f).sum::<i64>();
    let body = html! {
        p { a href="/app/sessions" { "← Marked work" } }
        h1 { (s.title) }
        p.meta {
            (kind_text(&s)) " · made " (when(s.created_at)) " · score "
            strong { (score(total(|q| q.awarded), total(|q| q.possible), total(|q| q.max_marks))) }
        }
        @if let Some((paper, revision)) = &s.paper {
            p { a href={ "/app/sets/" (paper) "/" (revision) } { "Mark every student's script of this paper, question by question" } }
        }
        @if questions.is_empty() {
            p { "No questions marked yet." }
        } @else {
            table #questions {
                caption { "Questions" }
                thead { tr { th scope="col" { "Question" } th scope="col" { "Status" } th scope="col" { "Score" } th scope="col" { "Revision" } } }
                tbody {
                    @for q in &questions {
                        tr {
                            th scope="row" { a href={ "/app/questions/" (q.id) } { "Question " (q.label) } }
                            td { (status_badge(&q.status)) }
                            td { (score(q.awarded, q.possible, q.max_marks)) }
                            td.num { (q.revision) }
                        }
                    }
                }
            }
        }
    };
    Ok(html(
        StatusCode::OK,
        page(&s.title, Some(&signed), Section::Review, body),
    ))
}

/// Labels of a set in paper order (the order of their first appearance).
fn labels_of(set: &[SetQuestion]) -> Vec<String> {
    let mut labels: Vec<(i64, String)> = Vec::new();
    for q in set {
        if !labels.iter().any(|(_, l)| l == &q.label) {
            labels.push((q.position, q.label.clone()));
        }
    }
    labels.sort_by_key(|(position, _)| *position);
    labels.into_iter().map(|(_, l)| l).collect()
}

/// One label's questions in stepping order: those needing review first, then the rest, each in
/// session order.
fn stepping_order<'a>(set: &'a [SetQuestion], label: &str) -> Vec<&'a SetQuestion> {
    let mut order: Vec<&SetQuestion> = set
        .iter()
        .filter(|q| q.label == label && q.status == "needs_review")
        .collect();
    order.extend(
        set.iter()
            .filter(|q| q.label == label && q.status != "needs_review"),
    );
    order
}

async fn load_set(
    signed: &Signed,
    paper: &str,
    revision: &str,
) -> Result<(String, i64, Vec<SetQuestion>), AppError> {
    let paper = parse_id(paper, "class set")?;
    let revision: i64 = revision
        .parse()
        .ok()
        .filter(|r| *r >= 1)
        .ok_or(AppError::NotFound("class set"))?;
    let set = signed
        .visit
        .state
        .store
        .paper_set(&signed.user.id, &paper, revision)
        .await?;
    if set.is_empty() {
        return Err(AppError::NotFound("class set"));
    }
    Ok((paper, revision, set))
}

/// `GET /app/sets/{paper}/{revision}`: the questions of a class set.
pub async fn set(signed: Signed, paper: &str, revision: &str) -> Result<Response, AppError> {
    let (paper, revision, set) = load_set(&signed, paper, revision).await?;
    let scripts = {
        let mut ids: Vec<&str> = set.iter().map(|q| q.session_id.as_str()).collect();
        ids.dedup();
        ids.len()
    };
    let body = html! {
        p { a href="/app/sessions" { "← Marked work" } }
        h1 { "Class set: paper revision " (revision) }
        p { (scripts) " scripts made from this paper revision. Open a question to step through every student's answer to it, those needing review first." }
        table #set {
            caption { "Questions of the paper" }
            thead { tr { th scope="col" { "Question" } th scope="col" { "Answers" } th scope="col" { "Need review" } } }
            tbody {
                @for label in labels_of(&set) {
                    @let answers = set.iter().filter(|q| q.label == label).count();
                    @let waiting = set.iter().filter(|q| q.label == label && q.status == "needs_review").count();
                    tr {
                        th scope="row" { a href={ "/app/sets/" (paper) "/" (revision) "/questions/" (label) } { "Question " (label) } }
                        td.num { (answers) }
                        td.num { (waiting) }
                    }
                }
            }
        }
    };
    Ok(html(
        StatusCode::OK,
        page("Class set", Some(&signed), Section::Review, body),
    ))
}

/// `GET /app/sets/{paper}/{revision}/questions/{label}`: the first answer to step to; with
/// `?lost={criterion}`, the first answer that lost that criterion, the stepping filtered to them.
pub async fn set_question(
    signed: Signed,
    paper: &str,
    revision: &str,
    label: &str,
) -> Result<Response, AppError> {
    let (paper, revision, set) = load_set(&signed, paper, revision).await?;
    if let Some(criterion) = signed.visit.query_param("lost") {
        let filter = lost_filter(&signed, &paper, revision, &set, label, &criterion).await?;
        return match filter.answers.first() {
            Some(first) => Ok(see_other(&question_href(first, Some(&filter.criterion)))),
            None => {
                let body = html! {
                    p { a href={ "/app/sets/" (paper) "/" (revision) } { "← Class set" } }
                    h1 { "Question " (label) ": " (filter.code) }
                    p #no-lost-answers { "No marked answer to question " (label) " lost " (filter.code) "." }
                };
                Ok(html(
                    StatusCode::OK,
                    page("Class set", Some(&signed), Section::Review, body),
                ))
            }
        };
    }
    let first = stepping_order(&set, label)
        .first()
        .map(|q| q.id.clone())
        .ok_or(AppError::NotFound("question of this set"))?;
    Ok(see_other(&format!("/app/questions/{first}")))
}

/// The address of a question's review page, stepping through the answers that lost `lost`
/// when given.
pub(super) fn question_href(id: &str, lost: Option<&str>) -> String {
    match lost {
        Some(criterion) => format!("/app/questions/{id}?lost={}", encoded(criterion)),
        None => format!("/app/questions/{id}"),
    }
}

/// `text` as a query string's value.
fn encoded(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// The answers to one question of a set that lost one of its criteria.
struct LostFilter {
    /// The criterion id.
    criterion: String,
    /// Its name as the markbook writes it (`Q3a M1`).
    code: String,
    /// The answers that lost it, in the set's order.
    answers: Vec<String>,
}

/// Reads every answer to `label` of the set and keeps those that lost `criterion` (as the item
/// analysis counts them: marked, and withheld after conditions and dependencies). A criterion
/// that none of the answers has is not found; an answer whose marking cannot be read is logged
/// and left out.
async fn lost_filter(
    signed: &Signed,
    paper: &str,
    revision: i64,
    set: &[SetQuestion],
    label: &str,
    criterion: &str,
) -> Result<LostFilter, AppError> {
    let rows = signed
        .visit
        .state
        .store
        .paper_set_answers(&signed.user.id, paper, revision, label)
        .await?;
    let mut code = None;
    let mut lost: Vec<String> = Vec::new();
    for row in &rows {
        // Only the criteria are read here: the sources' asset kinds are not needed.
        match MarkedQuestion::from_row(row, &HashMap::new()) {
            Ok(marked) => {
                if let Some(c) = marked.criterion(criterion) {
                    code.get_or_insert_with(|| format!("Q{} {}", marked.label, c.code));
                }
                if marked.lost(criterion) {
                    lost.push(marked.id);
                }
            }
            Err(e) => {
                tracing::error!(question = %row.id, error = %e, code = e.code(), "a marking question cannot be read for review");
            }
        }
    }
    let code = code.ok_or(AppError::NotFound("criterion of this question"))?;
    let answers = set
        .iter()
        .filter(|q| q.label == label && lost.contains(&q.id))
        .map(|q| q.id.clone())
        .collect();
    Ok(LostFilter {
        criterion: criterion.to_owned(),
        code,
        answers,
    })
}

/// Where the set's navigation leads from one question.
struct SetNav {
    paper: String,
    revision: i64,
    /// The current answer's place in the stepping order (`None`: it is not in the filtered
    /// order, having lost the criterion no longer).
    position: Option<usize>,
    count: usize,
    previous: Option<String>,
    next: Option<String>,
    next_review: Option<(String, String)>,
    /// The filter on the stepping, when it goes through the answers that lost a criterion.
    lost: Option<LostFilter>,
}

fn set_nav(
    set: &[SetQuestion],
    current: &QuestionRow,
    paper: &str,
    revision: i64,
    lost: Option<LostFilter>,
) -> SetNav {
    let (position, count, previous, next) = match &lost {
        None => {
            let order = stepping_order(set, &current.label);
            let position = order.iter().position(|q| q.id == current.id).unwrap_or(0);
            (
                Some(position),
                order.len(),
                position
                    .checked_sub(1)
                    .and_then(|p| order.get(p))
                    .map(|q| q.id.clone()),
                order.get(position + 1).map(|q| q.id.clone()),
            )
        }
        // The answers that lost the criterion, in the set's order; from an answer that is not
        // among them, the nearest before and after it.
        Some(filter) => {
            let index = |id: &str| set.iter().position(|q| q.id == id);
            let here = index(&current.id);
            let before = |id: &&String| index(id) < here;
            let after = |id: &&String| index(id) > here;
            (
                filter.answers.iter().position(|id| *id == current.id),
                filter.answers.len(),
                filter.answers.iter().rev().find(before).cloned(),
                filter.answers.iter().find(after).cloned(),
            )
        }
    };
    // The next answer needing review: of this question first (after this script, then before
    // it), then of the questions after it in paper order.
    let labels = labels_of(set);
    let here = labels.iter().position(|l| l == &current.label).unwrap_or(0);
    let same: Vec<&SetQuestion> = set.iter().filter(|q| q.label == current.label).collect();
    let me = same.iter().position(|q| q.id == current.id).unwrap_or(0);
    let next_review = same
        .iter()
        .skip(me + 1)
        .chain(same.iter().take(me))
        .find(|q| q.status == "needs_review")
        .copied()
        .or_else(|| {
            labels.iter().skip(here + 1).find_map(|label| {
                set.iter()
                    .find(|q| &q.label == label && q.status == "needs_review")
            })
        })
        .map(|q| (q.id.clone(), q.label.clone()));
    SetNav {
        paper: paper.to_owned(),
        revision,
        position,
        count,
        previous,
        next,
        next_review,
        lost,
    }
}

/// One criterion as the review page shows it.
struct Row {
    id: String,
    code: String,
    requirement: String,
    submitted: Outcome,
    effective: Outcome,
    flags: Vec<String>,
    reason: String,
    evidence: Vec<EvidenceRow>,
    depends_on: Vec<String>,
    by: String,
}

/// One piece of evidence: its page, quote, box and how the box was placed, where recorded.
struct EvidenceRow {
    page_id: String,
    quote: String,
    box_: (f64, f64, f64, f64),
    placement: Option<&'static str>,
}

fn outcome_text(outcome: Outcome) -> (&'static str, &'static str) {
    match outcome {
        Outcome::Awarded => ("✓", "Awarded"),
        Outcome::Withheld => ("✗", "Withheld"),
        Outcome::Uncertain => ("?", "Uncertain"),
    }
}

fn placement_text(rule: PlacementRule) -> &'static str {
    match rule {
        PlacementRule::Words => "placed on the quoted words found on the page",
        PlacementRule::Ink => "placed on the student's ink in the answer space",
        PlacementRule::Line => "placed on the line of the student's writing the quote is on",
        PlacementRule::Hint => "placed on the marker's box",
        PlacementRule::AnswerSpace => "not located: boxed on the answer space",
    }
}

fn flag_text(flag: &str) -> String {
    match flag {
        "uncertain_decision" => "the marker was not sure".into(),
        "condition_conflict" => "the decision contradicts its condition checks".into(),
        "condition_uncertain" => "a condition check is uncertain".into(),
        "dependency_withheld" => "a criterion it depends on is withheld".into(),
        "dependency_uncertain" => "a criterion it depends on is uncertain".into(),
        other => other.replace('_', " "),
    }
}

/// Each flag once, with how many times it was raised, in the order first raised.
fn counted(flags: &[String]) -> Vec<(&str, usize)> {
    let mut counted: Vec<(&str, usize)> = Vec::new();
    for flag in flags {
        match counted.iter_mut().find(|(f, _)| *f == flag.as_str()) {
            Some((_, n)) => *n += 1,
            None => counted.push((flag, 1)),
        }
    }
    counted
}

/// Who made the decisions no person has changed: the automated marker, or the marker an import
/// names.
fn marker_text(marked: &MarkedQuestion, session: &SessionRow) -> Result<String, MarkedError> {
    if let Some(source) = &marked.marked_by {
        return Ok(format!("Marker “{}”", source.name));
    }
    Ok(match session.source_json.as_deref() {
        Some(text) => format!(
            "Marker “{}” (imported)",
            MarkerSource::from_json(text)?.name
        ),
        None => "The marker".into(),
    })
}

fn rows_of(
    marked: &MarkedQuestion,
    logged: &HashMap<String, crate::store::marking::LoggedDecision>,
    machine: &str,
) -> Vec<Row> {
    let mut rows: Vec<Row> = marked
        .criteria
        .iter()
        .map(|c| {
            let evidence = c
                .decision
                .evidence
                .iter()
                .map(|e| EvidenceRow {
                    page_id: e.page_id.clone(),
                    quote: e.quote.clone(),
                    box_: (
                        e.region.x.value(),
                        e.region.y.value(),
                        e.region.width.value(),
                        e.region.height.value(),
                    ),
                    placement: e.placement.as_ref().map(|p| placement_text(p.rule)),
                })
                .collect();
            let by = match logged.get(&c.id) {
                Some(l) => match l.reviewer.kind {
                    ReviewerKind::Teacher => {
                        format!("Teacher {} at {}", l.reviewer.name, when(l.decided_at))
                    }
                    ReviewerKind::ApiKey => {
                        format!("API key “{}” at {}", l.reviewer.name, when(l.decided_at))
                    }
                },
                None => format!("{machine} at {}", when(marked.created_at)),
            };
            Row {
                id: c.id.clone(),
                code: c.code.clone(),
                requirement: c.requirement.clone(),
                submitted: c.submitted,
                effective: c.effective,
                flags: c.flags.clone(),
                reason: c.decision.reason.clone(),
                evidence,
                depends_on: c.depends_on.clone(),
                by,
            }
        })
        .collect();
    // Uncertain decisions first, otherwise in rubric order.
    rows.sort_by_key(|r| r.effective != Outcome::Uncertain);
    rows
}

/// A question, its session, and the question read as a model (or why it cannot be).
async fn load_question(
    signed: &Signed,
    id: &str,
) -> Result<(QuestionRow, SessionRow, Result<MarkedQuestion, MarkedError>), AppError> {
    let id = parse_id(id, "marking question")?;
    let store = &signed.visit.state.store;
    let q = store
        .question(&signed.user.id, &id)
        .await?
        .ok_or(AppError::NotFound("marking question"))?;
    let s = store
        .session(&signed.user.id, &q.session_id)
        .await?
        .ok_or(AppError::NotFound("marking question"))?;
    let kinds = crate::marking::questions::asset_kinds(&store.session_assets(&s.id).await?);
    let marked = MarkedQuestion::from_row(&q, &kinds);
    Ok((q, s, marked))
}

fn page_label(page_id: &str) -> String {
    page_id
        .rsplit_once(":p")
        .map(|(_, n)| format!("page {n}"))
        .unwrap_or_else(|| page_id.to_owned())
}

/// The page of a question whose stored marking cannot be read: the error is logged, and the page
/// says so instead of showing a question it cannot.
fn unreadable_page(signed: &Signed, q: &QuestionRow, s: &SessionRow, e: &MarkedError) -> Response {
    tracing::error!(question = %q.id, error = %e, code = e.code(), "a marking question cannot be read for review");
    let body = html! {
        p.crumbs {
            a href="/app/sessions" { "Marked work" } " › "
            a href={ "/app/sessions/" (s.id) } { (s.title) } " › "
            "Question " (q.label)
        }
        h1 { "Question " (q.label) " · " (s.title) }
        p.error role="alert" #unreadable {
            "This question's marking is stored in a form the service cannot read, so it cannot be shown or reviewed here. "
            "The problem is logged (" code { (e.code()) } "); tell the service's operator."
        }
    };
    html(
        StatusCode::INTERNAL_SERVER_ERROR,
        page(
            &format!("Question {}", q.label),
            Some(signed),
            Section::Review,
            body,
        ),
    )
}

/// What the page shows above the question when a save needs the teacher.
enum Notice {
    None,
    Saved(String),
    /// The code an address's `saved=` names: shown only as one of the question's own criteria.
    SavedCode(String),
    Problem(String),
    Conflict(Box<Conflict>),
}

/// A save refused because someone else saved first: the teacher's decision and the saved one.
struct Conflict {
    criterion: String,
    action: String,
    reason: String,
    sent_revision: i64,
}

/// `GET /app/questions/{id}`.
pub async fn question(signed: Signed, id: &str) -> Result<Response, AppError> {
    let notice = signed
        .visit
        .query_param("saved")
        .map_or(Notice::None, Notice::SavedCode);
    render_question(&signed, id, notice, StatusCode::OK).await
}

async fn render_question(
    signed: &Signed,
    id: &str,
    notice: Notice,
    status: StatusCode,
) -> Result<Response, AppError> {
    let (q, s, marked) = load_question(signed, id).await?;
    let (marked, machine) = match marked.and_then(|m| marker_text(&m, &s).map(|t| (m, t))) {
        Ok(read) => read,
        Err(e) => return Ok(unreadable_page(signed, &q, &s, &e)),
    };
    let store = &signed.visit.state.store;
    let logged = store.review_log(&marked.id).await?;
    let rows = rows_of(&marked, &logged, &machine);
    let maths = &signed.visit.state.maths;
    maths
        .prepare(rows.iter().map(|row| row.requirement.as_str()))
        .await;
    // The message is the question's, never the address's: a code that is none of its criteria's
    // shows nothing.
    let notice = match notice {
        Notice::SavedCode(code) => rows
            .iter()
            .find(|r| !r.code.is_empty() && r.code == code)
            .map_or(Notice::None, |r| {
                Notice::Saved(format!("Saved the decision on {}.", r.code))
            }),
        other => other,
    };
    let pages = marked.sources.work_pages();
    // Pages indexing found turned are shown upright; the teacher can turn them on.
    let turns: HashMap<(String, i64), i64> = if s.origin == crate::store::automated::ORIGIN {
        store
            .session_pages(&s.id)
            .await?
            .into_iter()
            .map(|p| {
                (
                    (p.asset_id, p.page),
                    (360 - p.orientation.rem_euclid(360)) % 360 / 90,
                )
            })
            .collect()
    } else {
        HashMap::new()
    };
    let nav = match &s.paper {
        Some((paper, revision)) => {
            let set = store.paper_set(&signed.user.id, paper, *revision).await?;
            let lost = match signed.visit.query_param("lost") {
                Some(criterion) => {
                    if marked.criterion(&criterion).is_none() {
                        return Err(AppError::NotFound("criterion of this question"));
                    }
                    Some(lost_filter(signed, paper, *revision, &set, &q.label, &criterion).await?)
                }
                None => None,
            };
            Some(set_nav(&set, &q, paper, *revision, lost))
        }
        None => None,
    };
    let lost = nav
        .as_ref()
        .and_then(|n| n.lost.as_ref())
        .map(|f| f.criterion.as_str());
    let can_review = marked.status.is_marked();
    let flags: Vec<String> = marked
        .review_flags
        .iter()
        .flatten()
        .map(|f| f.code.clone())
        .collect();
    let body = html! {
        p.crumbs {
            a href="/app/sessions" { "Marked work" } " › "
            a href={ "/app/sessions/" (s.id) } { (s.title) } " › "
            "Question " (marked.label)
        }
        h1 { "Question " (marked.label) " · " (s.title) }
        @if let Some(nav) = &nav {
            nav.set aria-label="Class set" {
                @match (&nav.lost, nav.position) {
                    (None, position) => {
                        "Answer " (position.unwrap_or(0) + 1) " of " (nav.count) " to question " (marked.label) " in the "
                        a href={ "/app/sets/" (nav.paper) "/" (nav.revision) } { "class set" } ". "
                    }
                    (Some(filter), Some(position)) => {
                        span #lost-filter data-criterion=(filter.criterion) {
                            "Answer " (position + 1) " of " (nav.count) " to question " (marked.label) " that lost " (filter.code) " in the "
                            a href={ "/app/sets/" (nav.paper) "/" (nav.revision) } { "class set" } ". "
                        }
                        a #every-answer href={ "/app/questions/" (marked.id) } { "Every answer" } " · "
                    }
                    (Some(filter), None) => {
                        span #lost-filter data-criterion=(filter.criterion) {
                            "This answer no longer loses " (filter.code) "; " (nav.count) " answers to question " (marked.label) " in the "
                            a href={ "/app/sets/" (nav.paper) "/" (nav.revision) } { "class set" } " do. "
                        }
                        a #every-answer href={ "/app/questions/" (marked.id) } { "Every answer" } " · "
                    }
                }
                @if let Some(previous) = &nav.previous { a #previous-answer rel="prev" href=(question_href(previous, lost)) { "Previous answer" } " · " }
                @if let Some(next) = &nav.next { a #next-answer rel="next" href=(question_href(next, lost)) { "Next answer" } " · " }
                @match &nav.next_review {
                    Some((next, label)) => { a #next-review href={ "/app/questions/" (next) } { "Next needing review (question " (label) ")" } }
                    None => { span #next-review-none { "Nothing else in this set needs review." } }
                }
            }
        }
        div #status-line role="status" aria-live="polite" {
            p.summary {
                (status_badge(marked.status.as_str())) " Score " strong #score { (score(marked.score.awarded, marked.score.possible, marked.score.max)) }
                " · revision " span #revision { (marked.revision) }
                @if !flags.is_empty() {
                    " · flags: " @for (i, (f, n)) in counted(&flags).iter().enumerate() {
                        @if i > 0 { ", " } (flag_text(f)) @if *n > 1 { " (" (n) ")" }
                    }
                }
            }
            @match &notice {
                Notice::Saved(message) => { p.notice #saved { (message) } }
                Notice::Problem(message) => { p.error role="alert" #problem { (message) } }
                _ => {}
            }
        }
        @if let Notice::Conflict(conflict) = &notice {
            (conflict_panel(signed, &marked, &rows, conflict, lost))
        }
        @if !can_review {
            p { "This question has no result to review yet (" (status_text(marked.status.as_str())) ")." }
        }
        div.review #review data-question=(marked.id) data-revision=(marked.revision) {
            section.pages aria-label="Scan pages" {
                @if pages.is_empty() { p { "No pages of the student's work are selected for this question." } }
                @for (asset, n) in &pages {
                    @let page_id = format!("{asset}:p{n}");
                    figure.page-view data-page=(page_id) data-turns=(turns.get(&(asset.clone(), i64::from(*n))).copied().unwrap_or(0)) {
                        figcaption {
                            (page_label(&page_id))
                            span.tools {
                                button type="button" data-zoom="out" aria-label={ "Zoom out of " (page_label(&page_id)) } { "Zoom out" }
                                button type="button" data-zoom="fit" { "Fit width" }
                                button type="button" data-zoom="in" aria-label={ "Zoom in to " (page_label(&page_id)) } { "Zoom in" }
                                button type="button" data-rotate="1" aria-label={ "Turn " (page_label(&page_id)) " a quarter turn" } { "⟳ Turn" }
                            }
                        }
                        div.viewport tabindex="0" role="group" aria-label={ "Scan of " (page_label(&page_id)) "; scroll to pan" } {
                            div.stage {
                                div.sheet {
                                    img src={ "/app/pages/" (asset) "/" (n) } alt={ "The student's " (page_label(&page_id)) };
                                    svg.boxes viewBox="0 0 1 1" preserveAspectRatio="none" aria-hidden="true" {
                                        @for row in &rows {
                                            @for e in row.evidence.iter().filter(|e| e.page_id == page_id) {
                                                rect class={ "box " (row.effective.as_str()) } data-criterion=(row.id)
                                                    x=(e.box_.0) y=(e.box_.1) width=(e.box_.2) height=(e.box_.3) {}
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            section.criteria aria-labelledby="criteria-title" {
                h2 #criteria-title { "Criteria" }
                p.hint {
                    "Uncertain decisions come first. "
                    button #show-shortcuts type="button" { "Keyboard shortcuts" }
                    " (or press " kbd { "?" } ")"
                }
                ol #criteria {
                    @for row in &rows {
                        @let (icon, word) = outcome_text(row.effective);
                        li.criterion id={ "c-" (row.id) } data-criterion=(row.id) data-outcome=(row.effective.as_str()) tabindex="-1" {
                            h3 {
                                span.code { (row.code) } " "
                                span class={ "decision " (row.effective.as_str()) } { span aria-hidden="true" { (icon) } " " (word) }
                            }
                            p.requirement { (maths.rich(&row.requirement)) }
                            @if row.submitted != row.effective {
                                p.effective { "Submitted as " (outcome_text(row.submitted).1.to_lowercase()) "; the engine's outcome is " (word.to_lowercase())
                                    @if !row.depends_on.is_empty() { " (it depends on " (row.depends_on.join(", ")) ")" } "." }
                            }
                            @if !row.flags.is_empty() {
                                p.flags { "Flags: " (row.flags.iter().map(|f| flag_text(f)).collect::<Vec<_>>().join("; ")) }
                            }
                            @if !row.reason.is_empty() { p.reason { span.label { "Reason: " } (row.reason) } }
                            ul.evidence aria-label="Evidence" {
                                @for e in &row.evidence {
                                    li {
                                        button.show type="button" data-criterion=(row.id) data-page=(e.page_id) { "Show" }
                                        " " (page_label(&e.page_id)) ": "
                                        @if e.quote.is_empty() { em { "no words quoted" } } @else { q.quote { (e.quote) } }
                                        @if let Some(p) = &e.placement { span.placement { " — " (p) } }
                                    }
                                }
                            }
                            p.by { "Decided by " (row.by) }
                            @if can_review {
                                form.decide method="post" action=(decide_href(&marked.id, lost)) {
                                    (csrf(signed))
                                    input type="hidden" name="revision" value=(marked.revision);
                                    input type="hidden" name="criterion" value=(row.id);
                                    label for={ "reason-" (row.id) } { "Reason for a change" }
                                    input.reason-input id={ "reason-" (row.id) } name="reason" maxlength=(MAX_REASON_CHARS) autocomplete="off";
                                    span.buttons {
                                        @if row.effective != Outcome::Uncertain {
                                            button type="submit" name="action" value="accept" { "Accept" }
                                        }
                                        button type="submit" name="action" value="award" { "Award" }
                                        button type="submit" name="action" value="withhold" { "Withhold" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        (shortcuts_dialog())
    };
    Ok(html(
        status,
        page(
            &format!("Question {}", marked.label),
            Some(signed),
            Section::Review,
            body,
        ),
    ))
}

fn shortcuts_dialog() -> Markup {
    html! {
        dialog #shortcuts aria-labelledby="shortcuts-title" {
            h2 #shortcuts-title { "Keyboard shortcuts" }
            table {
                tbody {
                    tr { th scope="row" { kbd { "j" } " or " kbd { "↓" } } td { "Next criterion" } }
                    tr { th scope="row" { kbd { "k" } " or " kbd { "↑" } } td { "Previous criterion" } }
                    tr { th scope="row" { kbd { "a" } } td { "Award the selected criterion (type a reason, then Enter)" } }
                    tr { th scope="row" { kbd { "w" } } td { "Withhold it (type a reason, then Enter)" } }
                    tr { th scope="row" { kbd { "Enter" } } td { "Accept the marker's decision" } }
                    tr { th scope="row" { kbd { "n" } } td { "Next answer needing review" } }
                    tr { th scope="row" { kbd { "Escape" } } td { "Leave the reason field" } }
                    tr { th scope="row" { kbd { "?" } } td { "This list" } }
                }
            }
            p {
                input #single-keys type="checkbox" checked;
                label for="single-keys" { " Single-key shortcuts on (switch off if they get in the way of speech input or other tools)" }
            }
            form method="dialog" { button { "Close" } }
        }
    }
}

/// Where a decision on a question is sent, the stepping's filter kept.
fn decide_href(id: &str, lost: Option<&str>) -> String {
    match lost {
        Some(criterion) => format!("/app/questions/{id}/decide?lost={}", encoded(criterion)),
        None => format!("/app/questions/{id}/decide"),
    }
}

fn conflict_panel(
    signed: &Signed,
    q: &MarkedQuestion,
    rows: &[Row],
    c: &Conflict,
    lost: Option<&str>,
) -> Markup {
    let saved = rows.iter().find(|r| r.id == c.criterion);
    let yours = match c.action.as_str() {
        "award" => "Award",
        "withhold" => "Withhold",
        _ => "Accept the marker's decision",
    };
    html! {
        section.conflict #conflict role="alert" aria-labelledby="conflict-title" {
            h2 #conflict-title { "Someone saved this question while you were deciding" }
            p { "You decided on revision " (c.sent_revision) "; revision " (q.revision) " is now saved. Choose which to keep." }
            div.versions {
                div {
                    h3 { "Your decision" }
                    p { (yours) " " (saved.map(|r| r.code.as_str()).unwrap_or(&c.criterion)) }
                    @if !c.reason.is_empty() { p { "Reason: " (c.reason) } }
                    form method="post" action=(decide_href(&q.id, lost)) {
                        (csrf(signed))
                        input type="hidden" name="revision" value=(q.revision);
                        input type="hidden" name="criterion" value=(c.criterion);
                        input type="hidden" name="reason" value=(c.reason);
                        button #apply-mine type="submit" name="action" value=(c.action) { "Apply mine to revision " (q.revision) }
                    }
                }
                div {
                    h3 { "Saved now (revision " (q.revision) ")" }
                    @if let Some(r) = saved {
                        p { (r.code) ": " (outcome_text(r.effective).1) }
                        @if !r.reason.is_empty() { p { "Reason: " (r.reason) } }
                        p { "Decided by " (r.by) }
                    }
                    p { a #keep-saved href=(question_href(&q.id, lost)) { "Keep the saved version" } }
                }
            }
        }
    }
}

/// The decision a teacher's action makes of the current one: its outcome and reason, and every
/// condition check set to agree (met for an award, not met for a withholding), so that the
/// teacher's word settles the criterion. Its evidence stays. Accepting takes the outcome the
/// page shows, the engine's (`effective`): a withheld M1's dependent A1, submitted as awarded,
/// is accepted as withheld.
fn decided(
    current: &Decision,
    effective: Outcome,
    action: &str,
    reason: &str,
) -> Result<Decision, String> {
    let mut decision = current.clone();
    let outcome = match action {
        "accept" => match effective {
            o @ (Outcome::Awarded | Outcome::Withheld) => o,
            Outcome::Uncertain => {
                return Err(
                    "An uncertain decision cannot be accepted as it is: award or withhold it."
                        .into(),
                );
            }
        },
        "award" => Outcome::Awarded,
        "withhold" => Outcome::Withheld,
        _ => return Err("Choose accept, award or withhold.".into()),
    };
    if action != "accept" {
        let reason = reason.trim();
        if reason.is_empty() {
            return Err("Give a reason for the change.".into());
        }
        if reason.chars().count() > MAX_REASON_CHARS {
            return Err(format!(
                "A reason has at most {MAX_REASON_CHARS} characters."
            ));
        }
        reason.clone_into(&mut decision.reason);
    }
    decision.outcome = outcome;
    let result = if outcome == Outcome::Awarded {
        CheckResult::Met
    } else {
        CheckResult::NotMet
    };
    for check in &mut decision.condition_checks {
        check.result = result;
        check.note = Some("set by the reviewer's decision".into());
    }
    Ok(decision)
}

/// `POST /app/questions/{id}/decide`: accept, award or withhold one criterion.
pub async fn decide(signed: Signed, id: &str, form: Form) -> Result<Response, AppError> {
    let (q, _, marked) = load_question(&signed, id).await?;
    let criterion = form.get("criterion").unwrap_or_default().to_owned();
    let action = form.get("action").unwrap_or_default().to_owned();
    let reason = form.get("reason").unwrap_or_default().to_owned();
    let revision: i64 = form
        .get("revision")
        .and_then(|r| r.parse().ok())
        .ok_or_else(|| AppError::BadForm("the form has no revision".into()))?;
    // A question that cannot be read is shown as such: nothing of it can be decided.
    let Ok(marked) = marked else {
        return render_question(&signed, &q.id, Notice::None, StatusCode::OK).await;
    };
    let current = marked
        .criterion(&criterion)
        .ok_or_else(|| AppError::BadForm("the criterion is not one of this question's".into()))?;
    let problem = |message: String| async {
        render_question(
            &signed,
            &q.id,
            Notice::Problem(message),
            StatusCode::UNPROCESSABLE_ENTITY,
        )
        .await
    };
    let decision = match decided(&current.decision, current.effective, &action, &reason) {
        Ok(decision) => decision,
        Err(message) => return problem(message).await,
    };
    let reviewed = MarkedCriterion {
        decision,
        ..current.clone()
    }
    .contract_decision();
    let reviewer = Reviewer {
        kind: ReviewerKind::Teacher,
        name: super::layout::display_name(&signed).to_owned(),
    };
    let code = current.code.clone();
    match crate::review::review(
        &signed.visit.state.store,
        &signed.user.id,
        &q.id,
        revision,
        vec![reviewed],
        &reviewer,
    )
    .await
    {
        Ok(saved) => {
            if signed.visit.from_script() {
                render_question(
                    &signed,
                    &saved.id,
                    Notice::Saved(format!("Saved the decision on {code}.")),
                    StatusCode::OK,
                )
                .await
            } else {
                let lost = signed
                    .visit
                    .query_param("lost")
                    .map(|c| format!("&lost={}", encoded(&c)))
                    .unwrap_or_default();
                Ok(see_other(&format!(
                    "/app/questions/{}?saved={}{lost}#c-{criterion}",
                    saved.id,
                    encoded(&code)
                )))
            }
        }
        Err(e) => match &e {
            ReviewError::Stale(_) => {
                let conflict = Conflict {
                    criterion,
                    action,
                    reason,
                    sent_revision: revision,
                };
                render_question(
                    &signed,
                    &q.id,
                    Notice::Conflict(Box::new(conflict)),
                    StatusCode::CONFLICT,
                )
                .await
            }
            ReviewError::Invalid(problems) => {
                let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
                problem(format!("{e}: {}", messages.join("; "))).await
            }
            ReviewError::NotMarked(_) => problem(e.to_string()).await,
            _ => Err(e.into()),
        },
    }
}

impl From<ReviewError> for AppError {
    /// Through the API's errors, so that the app answers with the same statuses.
    fn from(e: ReviewError) -> Self {
        AppError::from(ApiError::from(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision() -> Decision {
        let evidence = serde_json::from_value(serde_json::json!({
            "pageId": "p", "quote": "x", "box": { "x": 0, "y": 0, "width": 1, "height": 1 }
        }))
        .expect("evidence");
        let check =
            serde_json::from_value(serde_json::json!({ "index": 0, "result": "uncertain" }))
                .expect("a check");
        Decision {
            outcome: Outcome::Uncertain,
            reason: "unclear".into(),
            evidence: vec![evidence],
            condition_checks: vec![check],
        }
    }

    #[test]
    fn flags_are_listed_once_with_their_count_in_the_order_raised() {
        let flags: Vec<String> = [
            "uncertain_decision",
            "condition_conflict",
            "uncertain_decision",
        ]
        .iter()
        .map(|f| (*f).to_owned())
        .collect();
        assert_eq!(
            counted(&flags),
            [("uncertain_decision", 2), ("condition_conflict", 1)]
        );
        assert!(counted(&[]).is_empty());
    }

    #[test]
    fn an_award_sets_the_outcome_the_reason_and_agreeing_checks() {
        let d = decided(
            &decision(),
            Outcome::Uncertain,
            "award",
            "  correct on reading  ",
        )
        .expect("decided");
        assert_eq!(d.outcome, Outcome::Awarded);
        assert_eq!(d.reason, "correct on reading");
        assert_eq!(d.condition_checks[0].result, CheckResult::Met);
        assert_eq!(
            d.condition_checks[0].note.as_deref(),
            Some("set by the reviewer's decision")
        );
        assert_eq!(d.evidence, decision().evidence);
        let d =
            decided(&decision(), Outcome::Uncertain, "withhold", "wrong sign").expect("decided");
        assert_eq!(d.outcome, Outcome::Withheld);
        assert_eq!(d.condition_checks[0].result, CheckResult::NotMet);
    }

    #[test]
    fn bad_decisions_are_refused_with_the_reason() {
        assert!(
            decided(&decision(), Outcome::Uncertain, "accept", "")
                .expect_err("refused")
                .contains("uncertain")
        );
        assert!(
            decided(&decision(), Outcome::Uncertain, "award", "   ")
                .expect_err("refused")
                .contains("reason")
        );
        assert!(
            decided(&decision(), Outcome::Uncertain, "promote", "x")
                .expect_err("refused")
                .contains("accept, award or withhold")
        );
        let long = "x".repeat(MAX_REASON_CHARS + 1);
        assert!(
            decided(&decision(), Outcome::Uncertain, "withhold", &long)
                .expect_err("refused")
                .contains("at most")
        );
        let mut awarded = decision();
        awarded.outcome = Outcome::Awarded;
        let d = decided(&awarded, Outcome::Awarded, "accept", "ignored").expect("accepted");
        assert_eq!(d.outcome, Outcome::Awarded);
        assert_eq!(d.reason, "unclear");
        // Accepting takes the engine's outcome: a dependent withheld with its dependency.
        let d = decided(&awarded, Outcome::Withheld, "accept", "").expect("accepted");
        assert_eq!(d.outcome, Outcome::Withheld);
        assert_eq!(d.condition_checks[0].result, CheckResult::NotMet);
        // A submitted award the engine made uncertain is not accepted as it is.
        assert!(decided(&awarded, Outcome::Uncertain, "accept", "").is_err());
    }
}
