//! The question bank's page: search by the facets `GET /v1/questions` offers (level, subject,
//! paper, board, topic, difficulty, year, marks) and by text, paged
//! as the API pages (the same query rules, [`crate::questions::parse_search`], and the same
//! cursors, [`crate::questions::search`]). Each result shows its content with its diagrams and
//! maths, its marks, and its mark scheme on request; a result adds to the paper being built
//! (`?paper=`) or starts a new paper.

use maud::{Markup, html};
use warp::http::StatusCode;
use warp::reply::Response;

use super::layout::{Section, csrf, page};
use super::papers::pins::{diagram_href, pin_fields};
use super::{AppError, Signed, content, html};
use crate::fields::FieldError;
use crate::questions::parse_search;
use crate::store::search::FacetsView;

/// The search form's fields, in the order of the query string `GET /v1/questions` reads.
const FIELDS: &[&str] = &[
    "q",
    "level",
    "subject",
    "module",
    "board",
    "topic",
    "year",
    "difficulty",
    "minMarks",
    "maxMarks",
];

const LEVELS: &[(&str, &str)] = &[
    ("as-level", "AS level"),
    ("a-level", "A level"),
    ("international-as-level", "International AS level"),
    ("international-a-level", "International A level"),
];
const SUBJECTS: &[(&str, &str)] = &[("maths", "Maths"), ("further-maths", "Further maths")];

/// The search as the page was asked for it: its filled fields, the page's cursor, the paper
/// being built.
struct Asked {
    fields: Vec<(String, String)>,
    cursor: Option<String>,
    paper: Option<String>,
}

impl Asked {
    fn read(pairs: Vec<(String, String)>) -> Asked {
        let mut asked = Asked {
            fields: Vec::new(),
            cursor: None,
            paper: None,
        };
        for (name, value) in pairs {
            let value = value.trim().to_owned();
            if value.is_empty() {
                continue;
            }
            match name.as_str() {
                "cursor" => asked.cursor = Some(value),
                "paper" => asked.paper = Some(value),
                n if FIELDS.contains(&n) => asked.fields.push((name, value)),
                _ => {}
            }
        }
        asked
    }

    fn value(&self, name: &str) -> &str {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.as_str())
    }

    /// The query string of `GET /v1/questions` for this search.
    fn api_query(&self) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        for (name, value) in &self.fields {
            query.append_pair(name, value);
        }
        query.append_pair("limit", "10");
        if let Some(cursor) = &self.cursor {
            query.append_pair("cursor", cursor);
        }
        query.finish()
    }

    /// This page's address with another cursor (or none).
    fn href(&self, cursor: Option<&str>) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        for (name, value) in &self.fields {
            query.append_pair(name, value);
        }
        if let Some(paper) = &self.paper {
            query.append_pair("paper", paper);
        }
        if let Some(cursor) = cursor {
            query.append_pair("cursor", cursor);
        }
        format!("/app/bank?{}", query.finish())
    }
}

fn select(name: &str, label: &str, current: &str, options: &[(String, String)]) -> Markup {
    html! {
        p {
            label for={ "f-" (name) } { (label) }
            select id={ "f-" (name) } name=(name) {
                option value="" { "Any" }
                @for (value, text) in options {
                    option value=(value) selected[current == value] { (text) }
                }
            }
        }
    }
}

fn owned(options: &[(&str, &str)]) -> Vec<(String, String)> {
    options
        .iter()
        .map(|(v, t)| ((*v).to_owned(), (*t).to_owned()))
        .collect()
}

fn search_form(asked: &Asked, facets: &FacetsView) -> Markup {
    let facet = |options: &[crate::store::search::FacetOptionView]| -> Vec<(String, String)> {
        options
            .iter()
            .map(|o| (o.value.clone(), format!("{} ({})", o.label, o.count)))
            .collect()
    };
    let numbers = |range: std::ops::RangeInclusive<i64>| -> Vec<(String, String)> {
        range.map(|n| (n.to_string(), n.to_string())).collect()
    };
    html! {
        form.search method="get" action="/app/bank" role="search" {
            @if let Some(paper) = &asked.paper { input type="hidden" name="paper" value=(paper); }
            p.wide {
                label for="f-q" { "Words" }
                input #f-q type="search" name="q" value=(asked.value("q")) maxlength="160";
            }
            (select("level", "Level", asked.value("level"), &owned(LEVELS)))
            (select("subject", "Subject", asked.value("subject"), &owned(SUBJECTS)))
            (select("module", "Paper", asked.value("module"), &facet(&facets.module)))
            (select("board", "Board", asked.value("board"), &facet(&facets.board)))
            (select("topic", "Topic", asked.value("topic"), &facet(&facets.topic)))
            (select("difficulty", "Difficulty", asked.value("difficulty"), &numbers(1..=5)))
            p {
                label for="f-year" { "Year" }
                input #f-year type="number" name="year" min="1900" max="2100" value=(asked.value("year"));
            }
            p {
                label for="f-minMarks" { "Marks from" }
                input #f-minMarks type="number" name="minMarks" min="0" max="100" value=(asked.value("minMarks"));
            }
            p {
                label for="f-maxMarks" { "to" }
                input #f-maxMarks type="number" name="maxMarks" min="0" max="100" value=(asked.value("maxMarks"));
            }
            p { button type="submit" { "Search" } }
        }
    }
}

/// `GET /app/bank`: the search form and a page of results.
pub async fn search(signed: Signed) -> Result<Response, AppError> {
    let state = &signed.visit.state;
    let asked = Asked::read(signed.visit.query_pairs());
    let paper = match &asked.paper {
        Some(id) => Some(
            super::papers::latest(&signed, id)
                .await?
                .ok_or(AppError::NotFound("paper"))?,
        ),
        None => None,
    };
    let facets = state.store.facets().await?;
    let (found, problems) = found_page(&signed, &asked).await?;
    let results = match &found {
        Some(found) => readable_results(&signed, found).await?,
        None => Vec::new(),
    };
    state
        .maths
        .prepare(results.iter().flat_map(|(_, r)| content::texts(r)))
        .await;
    let adding = paper.as_ref().map(|paper| Adding {
        paper,
        in_paper: paper
            .content
            .questions
            .iter()
            .map(|q| q.question_id.as_str())
            .collect(),
        back: asked.href(asked.cursor.as_deref()),
    });
    let body = html! {
        h1 { "Question bank" }
        @if let Some(paper) = &paper {
            p.notice {
                "Adding to " a href={ "/app/papers/" (paper.id) } { (paper.content.title) }
                " (revision " (paper.revision) ", " (paper.content.questions.len()) " questions, "
                (paper.figures.total_marks) " marks)."
            }
        }
        (search_form(&asked, &facets))
        @if !problems.is_empty() {
            div.error role="alert" #search-problems {
                p { "The search cannot be made:" }
                ul { @for p in &problems { li { (p.message) } } }
            }
        }
        @if let Some(found) = &found {
            @if results.is_empty() {
                p #no-results { "No question matches. Remove a filter or change the words." }
            }
            ol.results #results {
                @for (item, revision) in &results {
                    (result_item(&signed, adding.as_ref(), item, revision))
                }
            }
            @if let Some(next) = &found.next_cursor {
                p { a rel="next" href=(asked.href(Some(next))) { "Next page" } }
            }
        }
    };
    Ok(html(
        StatusCode::OK,
        page("Question bank", Some(&signed), Section::Bank, body),
    ))
}

/// The page of results the search asks for, or the problems that keep it from being made.
async fn found_page(
    signed: &Signed,
    asked: &Asked,
) -> Result<(Option<crate::questions::Page>, Vec<FieldError>), AppError> {
    let store = &signed.visit.state.store;
    Ok(match parse_search(&asked.api_query()) {
        Ok(params) => match crate::questions::search(store, &signed.user.id, &params).await {
            Ok(page) => (Some(page), Vec::new()),
            Err(e) => match super::problems::listed(&e) {
                Some(listed) => (None, listed),
                None => return Err(e.into()),
            },
        },
        Err(errors) => (None, errors),
    })
}

/// Each result of the page with its revision's content, leaving out one the bank cannot read.
async fn readable_results(
    signed: &Signed,
    found: &crate::questions::Page,
) -> Result<Vec<(crate::questions::Item, examkit_bank::Revision)>, AppError> {
    let store = &signed.visit.state.store;
    let mut results = Vec::new();
    for item in found.read_items() {
        let stored = store
            .bank_revision(&item.pin.question_id, item.pin.revision)
            .await?;
        if let Some(revision) = stored.and_then(|s| content::read(&s.body, &item.pin.question_id)) {
            results.push((item, revision));
        }
    }
    Ok(results)
}

/// The paper the results are added to: the questions already in it, and the search to come back
/// to after adding.
struct Adding<'a> {
    paper: &'a crate::store::papers::StoredPaper,
    in_paper: Vec<&'a str>,
    back: String,
}

/// One result: its title, figures, content and scheme, and the form that adds it to the paper
/// being built or starts a paper with it.
fn result_item(
    signed: &Signed,
    adding: Option<&Adding<'_>>,
    item: &crate::questions::Item,
    revision: &examkit_bank::Revision,
) -> Markup {
    let state = &signed.visit.state;
    html! {
        li.result {
            h2 { (item.title) }
            p.meta { (item.marks) " marks · difficulty " (item.difficulty) " of 5 · " (item.topic.replace('-', " ")) }
            p.summary { (item.summary) }
            (content::question(&state.maths, revision, &|asset| diagram_href(&item.pin, asset)))
            (content::scheme(&state.maths, revision))
            @if let Some(Adding { paper, in_paper, back }) = adding {
                @if in_paper.contains(&item.pin.question_id.as_str()) {
                    p.hint { "In the paper." }
                } @else {
                    form method="post" action={ "/app/papers/" (paper.id) "/add" } {
                        (csrf(signed))
                        (pin_fields(&item.pin))
                        input type="hidden" name="revision" value=(paper.revision);
                        input type="hidden" name="back" value=(back);
                        button type="submit" { "Add to " (paper.content.title) }
                    }
                }
            } @else {
                form method="post" action="/app/papers" {
                    (csrf(signed))
                    (pin_fields(&item.pin))
                    button type="submit" { "Start a paper with this question" }
                }
            }
        }
    }
}

/// `GET /app/bank/{question}/{revision}/diagrams/{asset}`: a diagram's file, as an image of the
/// media type the bank gives it (SVG or PNG; anything else as bytes not to be shown).
pub async fn diagram(
    signed: Signed,
    question: &str,
    revision: &str,
    asset: &str,
) -> Result<Response, AppError> {
    let not_found = || AppError::NotFound("diagram");
    let question = uuid::Uuid::try_parse(question)
        .map_err(|_| not_found())?
        .hyphenated()
        .to_string();
    let asset = uuid::Uuid::try_parse(asset).map_err(|_| not_found())?;
    let revision: i64 = revision.parse().map_err(|_| not_found())?;
    let store = &signed.visit.state.store;
    let stored = store
        .bank_revision(&question, revision)
        .await?
        .ok_or_else(not_found)?;
    let parsed = content::read(&stored.body, &question).ok_or_else(not_found)?;
    let media_type = parsed
        .assets
        .iter()
        .find(|a| a.id == asset)
        .map(|a| a.media_type.as_str())
        .ok_or_else(not_found)?;
    let content_type = match media_type {
        "image/svg+xml" | "image/png" => media_type,
        _ => "application/octet-stream",
    };
    let bytes = store
        .revision_asset(&question, revision, &asset.hyphenated().to_string())
        .await?
        .ok_or_else(not_found)?;
    let mut response = Response::new(bytes.into());
    *response.status_mut() = StatusCode::OK;
    if let Ok(value) = warp::http::HeaderValue::from_str(content_type) {
        response
            .headers_mut()
            .insert(warp::http::header::CONTENT_TYPE, value);
    }
    response.headers_mut().insert(
        warp::http::header::CACHE_CONTROL,
        warp::http::HeaderValue::from_static("private, max-age=3600"),
    );
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_fields_are_not_sent_to_the_search() {
        let asked = Asked::read(vec![
            ("q".into(), "  integration ".into()),
            ("level".into(), String::new()),
            ("colour".into(), "red".into()),
            ("paper".into(), "p1".into()),
        ]);
        assert_eq!(asked.api_query(), "q=integration&limit=10");
        assert_eq!(
            asked.href(Some("c")),
            "/app/bank?q=integration&paper=p1&cursor=c"
        );
    }
}
