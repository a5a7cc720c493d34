//! The page skeleton every app page shares, and small helpers for what pages show.

use maud::{DOCTYPE, Markup, html};
use warp::http::StatusCode;
use warp::reply::Response;

use super::Signed;
use super::session::CSRF_FIELD;

/// Which section of the app a page belongs to, for the navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The question bank.
    Bank,
    /// Papers being built and their revisions.
    Papers,
    /// Marked work.
    Review,
    /// Class sets: their stacks and marking.
    ClassSets,
    /// API keys and usage.
    Keys,
    /// Signing in (no navigation).
    None,
}

/// A whole page: `title`, the signed-in account's navigation when there is one, and `body`.
pub fn page(title: &str, signed: Option<&Signed>, section: Section, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · examkit" }
                link rel="stylesheet" href=(super::assets::href("app.css"));
                script src=(super::assets::href("app.js")) defer {}
            }
            body {
                a.skip href="#main" { "Skip to the content" }
                header.top {
                    span.brand { "examkit" }
                    @if let Some(signed) = signed {
                        nav aria-label="Sections" {
                            ul {
                                li { a href="/app/bank" aria-current=[(section == Section::Bank).then_some("page")] { "Bank" } }
                                li { a href="/app/papers" aria-current=[(section == Section::Papers).then_some("page")] { "Papers" } }
                                li { a href="/app/sessions" aria-current=[(section == Section::Review).then_some("page")] { "Marked work" } }
                                li { a href="/app/class-sets" aria-current=[(section == Section::ClassSets).then_some("page")] { "Class sets" } }
                                li { a href="/app/keys" aria-current=[(section == Section::Keys).then_some("page")] { "API keys" } }
                            }
                        }
                        div.account {
                            span { "Signed in as " strong { (display_name(signed)) } }
                            form method="post" action="/app/sign-out" {
                                (csrf(signed))
                                button type="submit" { "Sign out" }
                            }
                        }
                    }
                }
                main #main { (body) }
            }
        }
    }
}

/// The name an account is shown by: its email, else its name.
pub fn display_name(signed: &Signed) -> &str {
    signed.user.email.as_deref().unwrap_or(&signed.user.name)
}

/// The hidden field holding the session's CSRF token.
pub fn csrf(signed: &Signed) -> Markup {
    html! { input type="hidden" name=(CSRF_FIELD) value=(signed.session.csrf_token); }
}

/// A page explaining an error.
pub fn error_page(status: StatusCode, title: &str, message: &str) -> Response {
    super::html(
        status,
        page(
            title,
            None,
            Section::None,
            html! {
                h1 { (title) }
                p.error role="alert" { (message) }
                p { a href="/app/" { "Back to examkit" } }
            },
        ),
    )
}

/// A time as `YYYY-MM-DD HH:MM UTC`.
pub fn when(ms: i64) -> String {
    let text = crate::store::rfc3339(ms);
    // `2026-11-26T06:28:50.352Z` → `2026-11-26 06:28 UTC`
    match (text.get(0..10), text.get(11..16)) {
        (Some(date), Some(time)) => format!("{date} {time} UTC"),
        _ => text,
    }
}

/// A score range: `3 of 5` when settled, `2–4 of 5` while decisions are uncertain.
pub fn score(awarded: i64, possible: i64, max: i64) -> String {
    if awarded == possible {
        format!("{awarded} of {max}")
    } else {
        format!("{awarded}–{possible} of {max}")
    }
}

/// A question or session status, in words.
pub fn status_text(status: &str) -> &str {
    match status {
        "needs_review" => "Needs review",
        "completed" => "Marked",
        "queued" => "Queued",
        "running" => "Marking",
        "failed" => "Failed",
        "cancelled" => "Cancelled",
        "draft" => "Draft",
        other => other,
    }
}
