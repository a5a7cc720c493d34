//! One marked question's page: its scan pages with every evidence box, what a vision model read
//! of the answer (its transcription, part by part), one row per criterion with its requirement,
//! the scheme's accepted answers (a question marked from a paper), the marker's decision, reason
//! and quoted words, the form that decides, and the keys. Every text that may hold maths is
//! typeset ([`prepare_maths`]) before the page is drawn.

use super::scheme::SessionScheme;
use super::*;
use crate::marked::Transcription;
use crate::marking::flags::MarkerFlagCode;

/// One criterion as the review page shows it.
pub(super) struct Row {
    pub(super) id: String,
    pub(super) code: String,
    pub(super) requirement: String,
    /// The scheme's accepted answers, for a question marked from a paper.
    pub(super) answers: Vec<String>,
    pub(super) submitted: Outcome,
    pub(super) effective: Outcome,
    pub(super) flags: Vec<String>,
    pub(super) reason: String,
    pub(super) evidence: Vec<EvidenceRow>,
    pub(super) depends_on: Vec<String>,
    pub(super) by: String,
}

/// One piece of evidence: its page, quote, box and how the box was placed, where recorded.
pub(super) struct EvidenceRow {
    pub(super) page_id: String,
    pub(super) quote: String,
    pub(super) box_: (f64, f64, f64, f64),
    pub(super) placement: Option<&'static str>,
}

pub(super) fn outcome_text(outcome: Outcome) -> (&'static str, &'static str) {
    match outcome {
        Outcome::Awarded => ("✓", "Awarded"),
        Outcome::Withheld => ("✗", "Withheld"),
        Outcome::Uncertain => ("?", "Uncertain"),
    }
}

pub(super) fn placement_text(rule: PlacementRule) -> &'static str {
    match rule {
        PlacementRule::Words => "placed on the quoted words found on the page",
        PlacementRule::Ink => "placed on the student's ink in the answer space",
        PlacementRule::Line => "placed on the line of the student's writing the quote is on",
        PlacementRule::Hint => "placed on the marker's box",
        PlacementRule::AnswerSpace => "not located: boxed on the answer space",
    }
}

/// `text` with its first letter in capitals.
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

pub(super) fn flag_text(flag: &str) -> String {
    match flag {
        "uncertain_decision" => "the marker was not sure".into(),
        "condition_conflict" => "the decision contradicts its condition checks".into(),
        "condition_uncertain" => "a condition check is uncertain".into(),
        "dependency_withheld" => "a criterion it depends on is withheld".into(),
        "dependency_uncertain" => "a criterion it depends on is uncertain".into(),
        "instructions_on_page" => "text addressed to the marker is written on a page".into(),
        "model_rubric" => "the rubric is the model's".into(),
        "markers_disagree" => "the two markers disagree".into(),
        "marker_unqualified" => "the marker has not qualified".into(),
        "marker_drifted" => "the marker drifted on the seeded questions".into(),
        other => other.replace('_', " "),
    }
}

/// Each flag once, with how many times it was raised, in the order first raised.
pub(super) fn counted(flags: &[String]) -> Vec<(&str, usize)> {
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
pub(super) fn marker_text(
    marked: &MarkedQuestion,
    session: &SessionRow,
) -> Result<String, MarkedError> {
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

pub(super) fn rows_of(
    marked: &MarkedQuestion,
    logged: &HashMap<String, crate::store::marking::LoggedDecision>,
    machine: &str,
    scheme: Option<&SessionScheme>,
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
                answers: scheme
                    .and_then(|s| s.criterion(&marked.label, &c.id))
                    .map(|sc| sc.answers.clone())
                    .unwrap_or_default(),
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
pub(super) async fn load_question(
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

pub(super) fn page_label(page_id: &str) -> String {
    page_id
        .rsplit_once(":p")
        .map(|(_, n)| format!("page {n}"))
        .unwrap_or_else(|| page_id.to_owned())
}

/// The page of a question whose stored marking cannot be read: the error is logged, and the page
/// says so instead of showing a question it cannot.
pub(super) fn unreadable_page(
    signed: &Signed,
    q: &QuestionRow,
    s: &SessionRow,
    e: &MarkedError,
) -> Response {
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

/// `GET /app/questions/{id}`.
pub async fn question(signed: Signed, id: &str) -> Result<Response, AppError> {
    let notice = signed
        .visit
        .query_param("saved")
        .map_or(Notice::None, Notice::SavedCode);
    render_question(&signed, id, notice, StatusCode::OK).await
}

pub(super) async fn render_question(
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
    let scheme = match s.paper {
        Some(_) => SessionScheme::of_session(store, &s.id).await?,
        None => None,
    };
    let rows = rows_of(&marked, &logged, &machine, scheme.as_ref());
    let transcription = match marked.marker_run.as_ref().map(|run| run.transcription()) {
        Some(Ok(transcription)) => transcription,
        Some(Err(e)) => return Ok(unreadable_page(signed, &q, &s, &e)),
        None => None,
    };
    let maths = &signed.visit.state.maths;
    prepare_maths(maths, &marked, &rows, transcription.as_ref()).await;
    let notice = saved_notice(notice, &rows);
    let pages = marked.sources.work_pages();
    let turns = page_turns(store, &s).await?;
    let nav = class_set_nav(signed, &q, &s, &marked).await?;
    let lost = nav
        .as_ref()
        .and_then(|n| n.lost.as_ref())
        .map(|f| f.criterion.as_str());
    let can_review = marked.status.is_marked();
    let body = html! {
        p.crumbs {
            a href="/app/sessions" { "Marked work" } " › "
            a href={ "/app/sessions/" (s.id) } { (s.title) } " › "
            "Question " (marked.label)
        }
        h1 { "Question " (marked.label) " · " (s.title) }
        @if let Some(nav) = &nav {
            (set_nav_line(nav, &marked, lost))
        }
        (status_line(&marked, &notice))
        (marker_flags_section(maths, &marked))
        @if let Notice::Conflict(conflict) = &notice {
            (conflict_panel(signed, &marked, &rows, conflict, lost))
        }
        @if !can_review {
            p { "This question has no result to review yet (" (status_text(marked.status.as_str())) ")." }
        }
        div.review #review data-question=(marked.id) data-revision=(marked.revision) {
            (pages_section(&pages, &turns, &rows))
            (criteria_section(signed, maths, &marked, &rows, transcription.as_ref(), lost))
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

/// Typesets before the page is drawn the maths the requirements, their accepted answers, the
/// marker's reasons, the words it quoted, its transcription and its flags' messages may hold.
async fn prepare_maths(
    maths: &crate::app::math::Maths,
    marked: &MarkedQuestion,
    rows: &[Row],
    transcription: Option<&Transcription>,
) {
    let texts: Vec<&str> = rows
        .iter()
        .flat_map(|row| {
            [row.requirement.as_str(), row.reason.as_str()]
                .into_iter()
                .chain(row.answers.iter().map(String::as_str))
                .chain(row.evidence.iter().map(|e| e.quote.as_str()))
        })
        .chain(transcription.into_iter().flat_map(Transcription::lines))
        .chain(
            marked
                .review_flags
                .iter()
                .flatten()
                .map(|f| f.message.as_str()),
        )
        .collect();
    maths.prepare(texts).await;
}

/// The notice with a saved code read: the message is the question's, never the address's, so a
/// code that is none of its criteria's shows nothing.
fn saved_notice(notice: Notice, rows: &[Row]) -> Notice {
    match notice {
        Notice::SavedCode(code) => rows
            .iter()
            .find(|r| !r.code.is_empty() && r.code == code)
            .map_or(Notice::None, |r| {
                Notice::Saved(format!("Saved the decision on {}.", r.code))
            }),
        other => other,
    }
}

/// Quarter turns that stand each page upright: pages indexing found turned are shown upright; the
/// teacher can turn them on.
async fn page_turns(
    store: &crate::store::Store,
    s: &SessionRow,
) -> Result<HashMap<(String, i64), i64>, AppError> {
    Ok(if s.origin == crate::store::automated::ORIGIN {
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
    })
}

/// The stepping through the class set the question's session belongs to, if any, filtered to
/// the answers that lost the criterion the address names.
async fn class_set_nav(
    signed: &Signed,
    q: &QuestionRow,
    s: &SessionRow,
    marked: &MarkedQuestion,
) -> Result<Option<SetNav>, AppError> {
    let Some((paper, revision)) = &s.paper else {
        return Ok(None);
    };
    let store = &signed.visit.state.store;
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
    Ok(Some(set_nav(&set, q, paper, *revision, lost)))
}

/// Where the answer stands in its class set, and the links to the answers around it.
fn set_nav_line(nav: &SetNav, marked: &MarkedQuestion, lost: Option<&str>) -> Markup {
    html! {
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
}

/// The question's status, score and flags, with the notice of what was saved or refused.
fn status_line(marked: &MarkedQuestion, notice: &Notice) -> Markup {
    let flags: Vec<String> = marked
        .review_flags
        .iter()
        .flatten()
        .map(|f| f.code.clone())
        .collect();
    html! {
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
    }
}

/// The marker's own reasons for a person to look (its flags of the whole question).
fn marker_flags_section(maths: &crate::app::math::Maths, marked: &MarkedQuestion) -> Markup {
    let marker_flags: Vec<_> = marked
        .review_flags
        .iter()
        .flatten()
        .filter(|f| f.code.parse::<MarkerFlagCode>().is_ok())
        .collect();
    html! {
        @if !marker_flags.is_empty() {
            section #marker-flags aria-labelledby="marker-flags-title" {
                h2 #marker-flags-title { "Why the marker's answer needs a person" }
                ul {
                    @for f in &marker_flags {
                        li data-flag=(f.code) { strong { (capitalised(&flag_text(&f.code))) "." } " " (maths.rich(&f.message)) }
                    }
                }
                @if marker_flags.iter().any(|f| f.code == MarkerFlagCode::ModelRubric.as_str()) {
                    p #model-rubric {
                        "The criteria below are the model's reading of the mark scheme's pages, not a scheme a person wrote, and none of their marks counts yet. "
                        "Check each against the scheme: saving your decisions accepts the rubric; withhold any criterion that does not belong."
                    }
                }
            }
        }
    }
}

/// The student's work pages, each with its tools and every evidence box on it.
fn pages_section(
    pages: &[(String, u32)],
    turns: &HashMap<(String, i64), i64>,
    rows: &[Row],
) -> Markup {
    html! {
        section.pages aria-label="Scan pages" {
            @if pages.is_empty() { p { "No pages of the student's work are selected for this question." } }
            @for (asset, n) in pages {
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
                                    @for row in rows {
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
    }
}

/// What the vision model read of the student's writing, part by part, its maths typeset.
fn transcription_section(maths: &crate::app::math::Maths, transcription: &Transcription) -> Markup {
    html! {
        section #transcription aria-labelledby="transcription-title" {
            h2 #transcription-title { "What the marker read" }
            @if transcription.is_empty() {
                p { "The marker read nothing written for this question." }
            } @else {
                p.hint { "The vision model's transcription of the student's writing: check it against the pages." }
                @for part in &transcription.parts {
                    div.transcribed data-part=[part.label.as_deref()] {
                        @if let Some(label) = &part.label { h3 { "Part (" (label) ")" } }
                        @for line in &part.lines { p { (maths.rich(line)) } }
                    }
                }
            }
        }
    }
}

/// The criteria in order, uncertain ones first, after what the marker read of the answer.
fn criteria_section(
    signed: &Signed,
    maths: &crate::app::math::Maths,
    marked: &MarkedQuestion,
    rows: &[Row],
    transcription: Option<&Transcription>,
    lost: Option<&str>,
) -> Markup {
    html! {
        section.criteria aria-labelledby="criteria-title" {
            @if let Some(transcription) = transcription {
                (transcription_section(maths, transcription))
            }
            h2 #criteria-title { "Criteria" }
            p.hint {
                "Uncertain decisions come first. "
                button #show-shortcuts type="button" { "Keyboard shortcuts" }
                " (or press " kbd { "?" } ")"
            }
            ol #criteria {
                @for row in rows {
                    (criterion(signed, maths, marked, row, lost))
                }
            }
        }
    }
}

/// One criterion: the decision, requirement, reason and evidence, who decided, and the form that
/// changes it when the question has a result to review.
fn criterion(
    signed: &Signed,
    maths: &crate::app::math::Maths,
    marked: &MarkedQuestion,
    row: &Row,
    lost: Option<&str>,
) -> Markup {
    let can_review = marked.status.is_marked();
    html! {
        @let (icon, word) = outcome_text(row.effective);
        li.criterion id={ "c-" (row.id) } data-criterion=(row.id) data-outcome=(row.effective.as_str()) tabindex="-1" {
            h3 {
                span.code { (row.code) } " "
                span class={ "decision " (row.effective.as_str()) } { span aria-hidden="true" { (icon) } " " (word) }
            }
            p.requirement { (maths.rich(&row.requirement)) }
            @if !row.answers.is_empty() {
                div.answers {
                    span.label { "Accepted answers:" }
                    ul aria-label="Accepted answers" {
                        @for answer in &row.answers { li { (maths.rich(answer)) } }
                    }
                }
            }
            @if row.submitted != row.effective {
                p.effective { "Submitted as " (outcome_text(row.submitted).1.to_lowercase()) "; the engine's outcome is " (word.to_lowercase())
                    @if !row.depends_on.is_empty() { " (it depends on " (row.depends_on.join(", ")) ")" } "." }
            }
            @if !row.flags.is_empty() {
                p.flags { "Flags: " (row.flags.iter().map(|f| flag_text(f)).collect::<Vec<_>>().join("; ")) }
            }
            @if !row.reason.is_empty() { p.reason { span.label { "Reason: " } (maths.rich(&row.reason)) } }
            ul.evidence aria-label="Evidence" {
                @for e in &row.evidence {
                    li {
                        button.show type="button" data-criterion=(row.id) data-page=(e.page_id) { "Show" }
                        " " (page_label(&e.page_id)) ": "
                        @if e.quote.is_empty() { em { "no words quoted" } } @else { q.quote { (maths.rich(&e.quote)) } }
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

pub(super) fn shortcuts_dialog() -> Markup {
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
