//! The class sets' pages: the account's sets, and one set's page with its copies, its stack
//! report (every page waiting for a person shown with its image and a form to settle it), its
//! marking and the decisions made so far.
//!
//! Every form is a plain POST that redirects back to the set's page with what was saved. A
//! decision goes through [`crate::class_sets::actions::decide`] and starting marking through
//! [`crate::class_sets::actions::start`], the path of `POST /v1/class-sets/{id}/decisions` and
//! `/start`: the form's fields are read as that route's JSON body is, into the same typed
//! decision, and checked by the same rules.
//! A refused form shows the set's page again with the reasons, and saves nothing.
//!
//! Each form carries a token of its own, claimed in the idempotency records as an API request's
//! `Idempotency-Key` is (under the browser session's name for itself): a form sent twice, by a
//! double click or a resend, is saved once.
//!
//! The rooms of the set's page: [`copies`] (who wrote each copy, its state and script),
//! [`stack`] (the scanned stack, the pages waiting for a person, the upload form) and
//! [`decisions`] (what people decided); this file holds the list, the page, and its forms.

mod copies;
mod decisions;
mod stack;

use copies::*;
use decisions::*;
use stack::*;

use std::time::{Duration, Instant};

use maud::{Markup, html};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use warp::http::StatusCode;
use warp::reply::Response;

use super::layout::{Section, csrf, page, score, when};
use super::{AppError, Form, Signed, html, see_other};
use crate::class_sets::actions::{self, Actor, DecideError, StartError, Unprepared};
use crate::class_sets::decision::{self, Fields, MAX_QUESTION_CHARS, Sent};
use crate::class_sets::names::{NameCheck, Reading, Verdict};
use crate::class_sets::overview::{
    self, CopyLine, LoadError, MarkingState, Overview, ScriptState, StackState,
};
use crate::class_sets::stack::{CopyState, Placement, StackPage};
use crate::class_sets::students::Writer;
use crate::error::ApiError;
use crate::store::accounts::ApiKey;
use crate::store::class_sets::stacks::DecisionRow;
use crate::store::class_sets::{CopyRow, SetRow};
use crate::store::idempotency::Claim;
use crate::store::now_ms;

/// The form field holding a form's own token.
pub const TOKEN_FIELD: &str = "token";

/// How long a form waits for the same form, sent a moment earlier, to be saved.
const SAME_FORM_WAIT: Duration = Duration::from_secs(10);

fn not_found() -> AppError {
    AppError::NotFound("class set")
}

fn load_failed(e: LoadError) -> AppError {
    match e {
        LoadError::Store(e) => e.into(),
        LoadError::Corrupt(set) => {
            tracing::error!(class_set = %set, "a class set's stored values are out of range");
            AppError::Api(ApiError::Internal)
        }
    }
}

/// The account's set `id`, as it stands; 404 for an id that is not one (another account's
/// sets included).
pub async fn load_overview(signed: &Signed, id: &str) -> Result<Overview, AppError> {
    load(signed, id).await
}

/// Where the paper's layout puts the name on the cover, when it is recorded.
pub async fn name_space(
    signed: &Signed,
    paper_id: &str,
    revision: i64,
) -> Result<Option<examkit_pdf::Region>, AppError> {
    Ok(signed
        .visit
        .state
        .store
        .export_layout(&signed.user.id, paper_id, revision)
        .await?
        .flatten()
        .and_then(|json| serde_json::from_str::<examkit_pdf::Layout>(&json).ok())
        .and_then(|layout| layout.name_space))
}

async fn load(signed: &Signed, id: &str) -> Result<Overview, AppError> {
    let id = crate::http::parse_id(id, "class set").map_err(|_| not_found())?;
    overview::load(&signed.visit.state.store, &signed.user.id, &id)
        .await
        .map_err(load_failed)?
        .ok_or_else(not_found)
}

/// The account's set `id` as stored; 404 for an id that is not one.
pub async fn owned_set(signed: &Signed, id: &str) -> Result<SetRow, AppError> {
    let id = crate::http::parse_id(id, "class set").map_err(|_| not_found())?;
    signed
        .visit
        .state
        .store
        .class_set(&signed.user.id, &id)
        .await?
        .ok_or_else(not_found)
}

/// `GET /app/class-sets/{id}/print.pdf` (every copy, to print) or `extra-sheet.pdf`.
pub async fn print_file(signed: Signed, id: &str, file: &str) -> Result<Response, AppError> {
    let set = owned_set(&signed, id).await?;
    let state = &signed.visit.state;
    let (bytes, name) = match file {
        "print.pdf" => (
            state
                .store
                .class_set_pdf(&signed.user.id, &set.id)
                .await?
                .ok_or_else(not_found)?,
            format!("class-set-{}.pdf", set.id),
        ),
        _ => (
            crate::class_sets::printing::extra_sheet(state, &set).await?,
            format!("class-set-{}-extra-sheet.pdf", set.id),
        ),
    };
    Ok(super::results::file_response(
        "application/pdf",
        bytes,
        &name,
    ))
}

fn copy_number(copy: i64) -> String {
    format!("{copy:03}")
}

/// `GET /app/class-sets`: the account's class sets, newest first.
pub async fn list(signed: Signed) -> Result<Response, AppError> {
    let sets = overview::list(&signed.visit.state.store, &signed.user.id).await?;
    let body = html! {
        h1 { "Class sets" }
        p { "A class set prints one copy of a paper per student, each page coded, so that the scanned stack is split into one script per student. Make one from a revision of a " a href="/app/papers" { "paper" } "; upload its scanned stack on its page, settle the pages that need a person and start the marking." }
        @if sets.is_empty() {
            p #no-class-sets { "No class sets yet." }
        } @else {
            div.scroll {
                table #class-sets {
                    caption { "Your class sets, newest first" }
                    thead { tr {
                        th scope="col" { "Title" } th scope="col" { "Paper" } th scope="col" { "Copies" }
                        th scope="col" { "Stack" } th scope="col" { "Marking" } th scope="col" { "Made" }
                    } }
                    tbody {
                        @for s in &sets {
                            tr data-set=(s.set.id) {
                                th scope="row" { a href={ "/app/class-sets/" (s.set.id) } { (s.set.title) } }
                                td { (s.paper_title.as_deref().unwrap_or("(paper no longer saved)")) " · revision " (s.set.revision) }
                                td.num { (s.set.copies) }
                                td data-stack=(s.stack.name()) {
                                    @match s.stack {
                                        StackState::Empty => "No scans yet",
                                        StackState::Reading => { "Reading: " (s.pages_read) " of " (s.pages) " pages" }
                                        StackState::Read => { "Read (" (s.pages) " pages)" }
                                    }
                                }
                                td data-marking=(s.marking.name()) {
                                    @match s.marking {
                                        MarkingState::NotStarted => "Not started",
                                        MarkingState::Marking => { "Marking: " (s.scripts_done) " of " (s.scripts) " scripts done" }
                                        MarkingState::Marked => { "Marked (" (s.scripts) " scripts)" }
                                    }
                                }
                                td { (when(s.set.created_at)) }
                            }
                        }
                    }
                }
            }
        }
    };
    Ok(html(
        StatusCode::OK,
        page("Class sets", Some(&signed), Section::ClassSets, body),
    ))
}

/// What the set's page shows above its sections.
enum Notice {
    None,
    Saved(String),
    Problem { title: String, reasons: Vec<String> },
}

/// `GET /app/class-sets/{id}`, with `?saved={seq}` after a decision and
/// `?started={token}` after starting (the start form's token, whose saved result is shown).
pub async fn show(signed: Signed, id: &str) -> Result<Response, AppError> {
    let set = load(&signed, id).await?;
    // The message is the set's, never the address's: a number that names no decision shows
    // nothing.
    let notice = if let Some(seq) = signed
        .visit
        .query_param("saved")
        .and_then(|v| v.parse::<i64>().ok())
    {
        set.now
            .decisions
            .iter()
            .find(|d| d.seq == seq)
            .map_or(Notice::None, |d| {
                Notice::Saved(format!("Saved: {}.", describe(&set, d)))
            })
    } else if let Some(token) = signed.visit.query_param("started") {
        // The form's token names the start this session made; what it did is read from what
        // was saved then, so an address can claim nothing.
        let saved = signed
            .visit
            .state
            .store
            .idempotent_body(&super::session::key_name(&signed), &token)
            .await?
            .and_then(|body| serde_json::from_slice::<SavedStart>(&body).ok())
            .filter(|saved| saved.class_set == set.set.id);
        match saved {
            Some(saved) => {
                let (made, aside) = (saved.made, saved.set_aside);
                Notice::Saved(if made == 0 && aside == 0 {
                    "Nothing changed since marking last started: every script is current."
                        .to_owned()
                } else {
                    format!(
                        "Marking started: {made} {} made, {aside} set aside.",
                        if made == 1 { "script" } else { "scripts" }
                    )
                })
            }
            None => Notice::None,
        }
    } else {
        Notice::None
    };
    render(&signed, &set, &notice, StatusCode::OK).await
}

async fn render(
    signed: &Signed,
    set: &Overview,
    notice: &Notice,
    status: StatusCode,
) -> Result<Response, AppError> {
    let keys = signed.visit.state.store.keys(Some(&signed.user.id)).await?;
    let held = super::marker_held(signed).await;
    // Covers' name areas are shown when the layout records where the name goes.
    let covers = set.named()
        && name_space(signed, &set.set.paper_id, set.set.revision)
            .await?
            .is_some();
    let body = html! {
        p.crumbs { a href="/app/class-sets" { "Class sets" } " › " (set.set.title) }
        h1 { (set.set.title) }
        p.meta {
            (set.paper_title.as_deref().unwrap_or("(paper no longer saved)")) ", revision " (set.set.revision)
            " · " (set.set.copies) @if set.named() { " copies printed from a roster" } @else { " numbered copies" }
            " · " (set.set.paper_pages) " pages a copy · made " (when(set.set.created_at))
        }
        @match notice {
            Notice::Saved(message) => { p.notice #saved role="status" { (message) } }
            Notice::Problem { title, reasons } => {
                div.error #problem role="alert" {
                    p { (title) }
                    @if !reasons.is_empty() {
                        ul { @for reason in reasons { li { (reason) } } }
                    }
                }
            }
            Notice::None => {}
        }
        ul.downloads #set-downloads {
            li { a href={ "/app/class-sets/" (set.set.id) "/print.pdf" } download { "Every copy, to print (PDF)" } }
            li { a href={ "/app/class-sets/" (set.set.id) "/extra-sheet.pdf" } download { "Extra answer sheet (PDF)" } }
            li { a href={ "/app/papers/" (set.set.paper_id) "/revisions/" (set.set.revision) "/mark-scheme.pdf" } download { "Mark scheme (PDF)" } }
        }
        (copies_section(signed, set, covers)?)
        (stack_section(signed, set)?)
        (marking_section(signed, set, held.as_deref())?)
        (decisions_section(set, &keys))
    };
    Ok(html(
        status,
        page(&set.set.title, Some(signed), Section::ClassSets, body),
    ))
}

/// The hidden fields every form of the page carries: the session's CSRF token and a token of
/// the form's own.
fn form_fields(signed: &Signed) -> Result<Markup, AppError> {
    let token = super::session::random_token()?;
    Ok(html! {
        (csrf(signed))
        input type="hidden" name=(TOKEN_FIELD) value=(token);
    })
}

fn marking_section(
    signed: &Signed,
    set: &Overview,
    held: Option<&str>,
) -> Result<Markup, AppError> {
    let marking = set.marking();
    let done = set
        .scripts
        .iter()
        .filter(|s| matches!(s.state, ScriptState::Marked | ScriptState::Failed))
        .count();
    let enabled = signed.visit.state.marking.enabled;
    Ok(html! {
        section #marking aria-labelledby="marking-title" data-marking=(marking.name()) data-progress=[(marking == MarkingState::Marking).then_some("marking")] {
            h2 #marking-title { "Marking" }
            p #marking-state {
                @match marking {
                    MarkingState::NotStarted => "Marking has not started.",
                    MarkingState::Marking => { (done) " of " (set.scripts.len()) " scripts are marked; reload the page to follow them." }
                    MarkingState::Marked => { "Every script is marked (" (set.scripts.len()) ")." }
                }
            }
            @if marking != MarkingState::NotStarted {
                p #results-link { a href={ "/app/class-sets/" (set.set.id) "/results" } { "Results: the marks and what the class got wrong" } }
                (super::results::downloads(&set.set.id))
            }
            @if marking != MarkingState::NotStarted && !set.out_of_date.is_empty() {
                p #out-of-date {
                    "Decisions since marking started changed the scripts of "
                    @if set.out_of_date.len() == 1 { "copy " } @else { "copies " }
                    (set.out_of_date.iter().map(|c| copy_number(*c)).collect::<Vec<_>>().join(", "))
                    ": start marking again to mark them as they stand."
                }
            }
            @if let Some(held) = held {
                p.notice #marker-held role="status" { (held) }
            }
            @if !enabled {
                p.hint { "Automated marking is turned off in this service's configuration." }
            } @else if set.now.state() == StackState::Read {
                form method="post" action={ "/app/class-sets/" (set.set.id) "/start" } {
                    (form_fields(signed)?)
                    p.hint { "Makes a script of each copy that was sat, from its own pages, and marks it; a script already made from the same pages is left as it is." }
                    button #start-marking type="submit" {
                        @if marking == MarkingState::NotStarted { "Start marking" } @else { "Start marking again" }
                    }
                }
            } @else {
                p.hint { "Marking can start once every page of the stack is read." }
            }
        }
    })
}

/// A form's fields as a decision's [`Fields`], read as the decisions route reads its JSON body:
/// a whole number as a number (other text is left as text, for the rules to refuse), a blank
/// field as a missing one, `student=none` as `null` (not on the roster), a field sent twice as
/// its first value; the CSRF and form tokens are no part of it.
fn decision_fields<'a>(form: &'a Form) -> Fields<'a> {
    let number = |text: &'a str| text.parse::<i64>().map_or(Sent::Text(text), Sent::Integer);
    let mut fields = Fields::new();
    for (key, value) in &form.0 {
        let key = key.as_str();
        if key == super::session::CSRF_FIELD || key == TOKEN_FIELD || fields.contains_key(key) {
            continue;
        }
        let value = value.trim();
        if value.is_empty() {
            continue;
        }
        let sent = match key {
            "page" | "copy" | "copyPage" => number(value),
            "student" if value == "none" => Sent::Null,
            "student" => number(value),
            _ => Sent::Text(value),
        };
        fields.insert(key, sent);
    }
    fields
}

/// A form field's name as the page labels it.
fn field_label(path: &str) -> &'static str {
    match path {
        "/kind" => "The form",
        "/file" => "The file",
        "/page" => "The page",
        "/copy" => "Copy",
        "/copyPage" => "Page of the copy",
        "/question" => "Question",
        "/student" => "Student",
        _ => "The form",
    }
}

/// A form's claim on its token: saved before (its stored answer), or to be run now.
enum Once {
    Run,
    Done(Value),
}

/// What a decision form saves under its token, so the same form sent again goes where the first
/// went: the decision's number and kind.
#[derive(Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct SavedDecision {
    kind: String,
    seq: i64,
}

/// What a start saves under its form's token, read back for the page's notice: which set, and
/// the scripts it made and set aside.
#[derive(Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SavedStart {
    class_set: String,
    #[serde(default)]
    made: usize,
    #[serde(default)]
    set_aside: usize,
}

/// Claims the form's token under this session, as [`crate::http::Ctx::idempotent`] claims an
/// `Idempotency-Key`: the same form again gets what the first one saved; the token of another
/// form is refused; while the same form is being saved, it is waited for.
async fn claim(signed: &Signed, route: &str, form: &Form) -> Result<(String, Once), AppError> {
    let token = form.get(TOKEN_FIELD).unwrap_or_default();
    if !(8..=128).contains(&token.len())
        || !token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b))
    {
        return Err(AppError::BadForm(
            "The form is incomplete. Reload the page and try again.".into(),
        ));
    }
    let mut fields: Vec<&(String, String)> = form
        .0
        .iter()
        .filter(|(k, _)| k != super::session::CSRF_FIELD && k != TOKEN_FIELD)
        .collect();
    fields.sort();
    let mut hashed = format!("{route}\n");
    for (k, v) in fields {
        hashed.push_str(&format!(
            "{}={}&",
            k.replace(['=', '&'], "%"),
            v.replace(['=', '&'], "%")
        ));
    }
    let request_hash = crate::auth::sha256_hex(hashed.as_bytes());
    let store = &signed.visit.state.store;
    let key = super::session::key_name(signed);
    let deadline = Instant::now() + SAME_FORM_WAIT;
    loop {
        match store
            .claim_idempotency(&key, token, &request_hash, now_ms())
            .await?
        {
            Claim::Fresh => return Ok((token.to_owned(), Once::Run)),
            Claim::Replay { body, .. } => {
                let saved = serde_json::from_slice(&body).unwrap_or(Value::Null);
                return Ok((token.to_owned(), Once::Done(saved)));
            }
            Claim::Mismatch => {
                return Err(AppError::BadForm(
                    "This form was already sent with other values. Reload the page and try again."
                        .into(),
                ));
            }
            Claim::InProgress if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Claim::InProgress => {
                return Err(AppError::BadForm(
                    "This form is still being saved. Reload the page in a moment.".into(),
                ));
            }
        }
    }
}

/// Keeps what a claimed form saved, or frees its token when nothing was saved.
async fn settle(signed: &Signed, token: &str, saved: Option<&Value>) -> Result<(), AppError> {
    let store = &signed.visit.state.store;
    let key = super::session::key_name(signed);
    match saved {
        Some(saved) => {
            store
                .finish_idempotency(&key, token, 200, saved.to_string().as_bytes())
                .await?
        }
        None => store.release_idempotency(&key, token).await?,
    }
    Ok(())
}

/// Where on the page a decision's result is.
fn anchor(kind: &str) -> &'static str {
    match kind {
        "absent" | "present" | "student" => "copies",
        _ => "stack",
    }
}

/// `POST /app/class-sets/{id}/decide`: a decision about a page or a copy of the stack.
pub async fn decide(signed: Signed, id: &str, form: Form) -> Result<Response, AppError> {
    let set = load(&signed, id).await?;
    let route = format!("/app/class-sets/{}/decide", set.set.id);
    let (token, once) = claim(&signed, &route, &form).await?;
    let saved_at = |seq: i64, kind: &str| {
        see_other(&format!(
            "/app/class-sets/{}?saved={seq}#{}",
            set.set.id,
            anchor(kind)
        ))
    };
    if let Once::Done(saved) = once {
        let saved: SavedDecision = serde_json::from_value(saved).unwrap_or_default();
        return Ok(saved_at(saved.seq, &saved.kind));
    }
    let session = super::session::key_name(&signed);
    let by = Actor {
        key_id: &session,
        user_id: &signed.user.id,
    };
    let result = match decision::read(&decision_fields(&form)) {
        Ok(decision) => {
            actions::decide(
                &signed.visit.state.store,
                &signed.visit.state.marking,
                &set.set,
                &decision,
                by,
            )
            .await
        }
        Err(problems) => Err(DecideError::Invalid(problems)),
    };
    match result {
        Ok(decided) => {
            let saved = json!(SavedDecision {
                kind: decided.row.kind.clone(),
                seq: decided.row.seq,
            });
            settle(&signed, &token, Some(&saved)).await?;
            Ok(saved_at(decided.row.seq, &decided.row.kind))
        }
        Err(DecideError::Invalid(problems)) => {
            settle(&signed, &token, None).await?;
            let status = if problems.iter().any(|p| p.code == "student_taken") {
                StatusCode::CONFLICT
            } else {
                StatusCode::UNPROCESSABLE_ENTITY
            };
            let reasons = problems
                .iter()
                .map(|p| format!("{}: {}.", field_label(&p.path), p.message))
                .collect();
            let notice = Notice::Problem {
                title: "The decision was not saved.".to_owned(),
                reasons,
            };
            render(&signed, &set, &notice, status).await
        }
        Err(DecideError::Load(e)) => {
            settle(&signed, &token, None).await?;
            Err(load_failed(e))
        }
    }
}

/// `POST /app/class-sets/{id}/start`: marks every script of the stack as it stands.
pub async fn start(signed: Signed, id: &str, form: Form) -> Result<Response, AppError> {
    let set = load(&signed, id).await?;
    let refused = |status: StatusCode, reason: String| {
        let notice = Notice::Problem {
            title: "Marking did not start.".to_owned(),
            reasons: vec![reason],
        };
        (status, notice)
    };
    let state = &signed.visit.state;
    if !state.marking.enabled {
        let (status, notice) = refused(
            StatusCode::SERVICE_UNAVAILABLE,
            "Automated marking is turned off in this service's configuration.".to_owned(),
        );
        return render(&signed, &set, &notice, status).await;
    }
    let route = format!("/app/class-sets/{}/start", set.set.id);
    let (token, once) = claim(&signed, &route, &form).await?;
    let started_at = || {
        see_other(&format!(
            "/app/class-sets/{}?started={token}#marking",
            set.set.id
        ))
    };
    if let Once::Done(_) = once {
        return Ok(started_at());
    }
    let store = &state.store;
    let paper = actions::prepared_paper(store, &signed.user.id, &set.set);
    let result = actions::start(store, &state.marking, &signed.user.id, &set.set, paper).await;
    let (status, notice) = match result {
        Ok(started) => {
            let saved = json!(SavedStart {
                class_set: set.set.id.clone(),
                made: started.made,
                set_aside: started.set_aside,
            });
            settle(&signed, &token, Some(&saved)).await?;
            return Ok(started_at());
        }
        Err(StartError::NotReady(why)) => refused(
            StatusCode::CONFLICT,
            format!(
                "The stack is not ready: {}.",
                actions::not_ready_message(&why)
            ),
        ),
        Err(StartError::Paper(Unprepared::Store(e))) => {
            settle(&signed, &token, None).await?;
            return Err(e.into());
        }
        Err(StartError::Paper(why)) => refused(StatusCode::CONFLICT, format!("{why}.")),
        Err(StartError::ExportsNotReady) => refused(
            StatusCode::CONFLICT,
            "The paper revision's PDFs are not prepared.".to_owned(),
        ),
        Err(StartError::Allowance { message, .. }) => refused(
            StatusCode::TOO_MANY_REQUESTS,
            format!("Today's marking allowance would be exceeded: {message}. Nothing was started."),
        ),
        Err(StartError::Load(e)) => {
            settle(&signed, &token, None).await?;
            return Err(load_failed(e));
        }
    };
    settle(&signed, &token, None).await?;
    // A refused start changes nothing: the page as it was.
    render(&signed, &set, &notice, status).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::class_sets::names::Match;

    #[test]
    fn a_written_name_is_told_with_its_match() {
        let copies = vec![
            CopyRow {
                copy: 1,
                name: Some("Ada Lovelace".into()),
                candidate_number: None,
            },
            CopyRow {
                copy: 2,
                name: Some("Alan Turing".into()),
                candidate_number: None,
            },
        ];
        let check = |reading: Reading, student: Option<u32>, verdict: Verdict| NameCheck {
            reading,
            matched: student.map(|student| Match {
                student,
                confidence: 0.92,
            }),
            verdict,
            flagged: false,
        };
        let read = |name: &str| Reading::Read(Some(name.to_owned()));
        assert_eq!(
            written_text(
                &check(read("Alan Turing"), Some(2), Verdict::Disagrees),
                &copies
            ),
            "Wrote “Alan Turing”: matches another student (Alan Turing, 92 % alike)"
        );
        assert_eq!(
            written_text(
                &check(read("Ada Lovelase"), Some(1), Verdict::Agrees),
                &copies
            ),
            "Wrote “Ada Lovelase”: agrees (Ada Lovelace, 92 % alike)"
        );
        assert_eq!(
            written_text(&check(read("Sophie"), None, Verdict::Unmatched), &copies),
            "Wrote “Sophie”: matches nobody on the roster"
        );
        assert_eq!(
            written_text(&check(Reading::Read(None), None, Verdict::Blank), &copies),
            "Name on the cover: blank"
        );
        assert_eq!(
            written_text(&check(Reading::Reading, None, Verdict::Pending), &copies),
            "Name on the cover: being read"
        );
    }

    fn form(pairs: &[(&str, &str)]) -> Form {
        Form(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn a_form_is_read_as_the_routes_body() {
        let sent = form(&[
            ("csrf", "x"),
            ("token", "y"),
            ("kind", "place"),
            ("file", " 0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d "),
            ("page", "3"),
            ("copy", "two"),
            ("copyPage", ""),
            ("page", "4"),
        ]);
        let fields = decision_fields(&sent);
        assert_eq!(
            fields,
            Fields::from([
                ("copy", Sent::Text("two")),
                ("file", Sent::Text("0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d")),
                ("kind", Sent::Text("place")),
                ("page", Sent::Integer(3)),
            ])
        );
        let problems = decision::read(&fields).expect_err("refused");
        let codes: Vec<(&str, &str)> = problems.iter().map(|p| (p.path.as_str(), p.code)).collect();
        assert_eq!(codes, [("/copy", "type"), ("/copyPage", "required")]);
        let student = form(&[("kind", "student"), ("copy", "2"), ("student", "none")]);
        assert_eq!(
            decision_fields(&student),
            Fields::from([
                ("copy", Sent::Integer(2)),
                ("kind", Sent::Text("student")),
                ("student", Sent::Null),
            ])
        );
        assert_eq!(
            decision::read(&decision_fields(&student)),
            Ok(crate::class_sets::stack::Decision::Student {
                copy: 2,
                student: None
            })
        );
    }

    #[test]
    fn what_a_form_saves_is_read_back_as_written() {
        let decision = SavedDecision {
            kind: "place".into(),
            seq: 7,
        };
        let written = json!(decision).to_string();
        assert_eq!(written, r#"{"kind":"place","seq":7}"#);
        let read: SavedDecision = serde_json::from_str(&written).expect("read");
        assert_eq!(read, decision);
        let start = SavedStart {
            class_set: "set-1".into(),
            made: 3,
            set_aside: 1,
        };
        let written = json!(start).to_string();
        assert_eq!(written, r#"{"classSet":"set-1","made":3,"setAside":1}"#);
        let read: SavedStart = serde_json::from_str(&written).expect("read");
        assert_eq!(read, start);
        let unreadable: SavedDecision = serde_json::from_value(Value::Null).unwrap_or_default();
        assert_eq!(unreadable, SavedDecision::default());
    }

    #[test]
    fn a_form_and_the_routes_body_are_refused_alike() {
        let sent = form(&[
            ("kind", "extra"),
            ("file", "nope"),
            ("page", "0"),
            ("copy", "99999999999"),
            ("question", "x\u{7}"),
            ("note", "hi"),
        ]);
        let body = json!({
            "kind": "extra", "file": "nope", "page": 0, "copy": 99_999_999_999_i64,
            "question": "x\u{7}", "note": "hi",
        });
        let from_form = decision::read(&decision_fields(&sent)).expect_err("refused");
        assert_eq!(from_form, decision::parse(&body).expect_err("refused"),);
        assert_eq!(from_form.len(), 5);
    }
}
