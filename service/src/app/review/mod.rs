//! The review pages: marked sessions, class sets (the sessions made from one paper revision,
//! marked question by question), and one question with its pages, evidence and decisions.
//!
//! Decisions are saved through [`crate::review::review`], the path of
//! `PATCH /v1/marking/questions/{id}`: the same checks, engine and revision rule.
//!
//! Its rooms: [`sets`] (a class set's questions and the stepping through its answers),
//! [`question`] (one question's page) and [`scheme`] (the scheme a session made from a paper is
//! marked against, read for its requirements and accepted answers); this file holds the session
//! lists and the decision form.

mod question;
pub(crate) mod scheme;
mod sets;

pub use question::question;
use question::*;
pub(crate) use sets::question_href;
use sets::*;
pub use sets::{set, set_question};

use std::collections::HashMap;

use maud::{Markup, html};
use warp::http::StatusCode;
use warp::reply::Response;

use super::layout::{Section, csrf, page, score, status_text, when};
use super::{AppError, Form, Signed, html, see_other};
use crate::error::ApiError;
use crate::marked::{
    CheckResult, Decision, MarkedCriterion, MarkedError, MarkedQuestion, MarkerSource, Outcome,
    PlacementRule, QuestionStatus,
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
            .filter(|q| !only_review || q.status == QuestionStatus::NeedsReview)
            .collect();
        if only_review && questions.is_empty() {
            continue;
        }
        listed.push((row, questions));
    }
    let held = super::marker_held(&signed).await;
    let body = html! {
        h1 { "Marked work" }
        @if let Some(held) = &held {
            p.notice #marker-held role="status" { (held) }
        }
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
                                " " (status_badge(q.status.as_str())) " "
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
                            td { (status_badge(q.status.as_str())) }
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
