//! A class set's review: the sessions made from one paper revision, question by question, and
//! the stepping through every student's answer to a question (or those that lost a criterion).

use super::*;

/// Labels of a set in paper order (the order of their first appearance).
pub(super) fn labels_of(set: &[SetQuestion]) -> Vec<String> {
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
pub(super) fn stepping_order<'a>(set: &'a [SetQuestion], label: &str) -> Vec<&'a SetQuestion> {
    let mut order: Vec<&SetQuestion> = set
        .iter()
        .filter(|q| q.label == label && q.status == QuestionStatus::NeedsReview)
        .collect();
    order.extend(
        set.iter()
            .filter(|q| q.label == label && q.status != QuestionStatus::NeedsReview),
    );
    order
}

pub(super) async fn load_set(
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
                    @let waiting = set.iter().filter(|q| q.label == label && q.status == QuestionStatus::NeedsReview).count();
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
pub(crate) fn question_href(id: &str, lost: Option<&str>) -> String {
    match lost {
        Some(criterion) => format!("/app/questions/{id}?lost={}", encoded(criterion)),
        None => format!("/app/questions/{id}"),
    }
}

/// `text` as a query string's value.
pub(super) fn encoded(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// The answers to one question of a set that lost one of its criteria.
pub(super) struct LostFilter {
    /// The criterion id.
    pub(super) criterion: String,
    /// Its name as the markbook writes it (`Q3a M1`).
    pub(super) code: String,
    /// The answers that lost it, in the set's order.
    pub(super) answers: Vec<String>,
}

/// Reads every answer to `label` of the set and keeps those that lost `criterion` (as the item
/// analysis counts them: marked, and withheld after conditions and dependencies). A criterion
/// that none of the answers has is not found; an answer whose marking cannot be read is logged
/// and left out.
pub(super) async fn lost_filter(
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
pub(super) struct SetNav {
    pub(super) paper: String,
    pub(super) revision: i64,
    /// The current answer's place in the stepping order (`None`: it is not in the filtered
    /// order, having lost the criterion no longer).
    pub(super) position: Option<usize>,
    pub(super) count: usize,
    pub(super) previous: Option<String>,
    pub(super) next: Option<String>,
    pub(super) next_review: Option<(String, String)>,
    /// The filter on the stepping, when it goes through the answers that lost a criterion.
    pub(super) lost: Option<LostFilter>,
}

pub(super) fn set_nav(
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
        .find(|q| q.status == QuestionStatus::NeedsReview)
        .copied()
        .or_else(|| {
            labels.iter().skip(here + 1).find_map(|label| {
                set.iter()
                    .find(|q| &q.label == label && q.status == QuestionStatus::NeedsReview)
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
