//! A set's scanned stack: its reading, where its pages went, the pages waiting for a person with
//! their images and forms, and the form that uploads more scans.

use super::*;

pub(super) fn pages_text(pages: &[u32]) -> String {
    pages
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn placement_words(name: &str) -> &'static str {
    match name {
        "placed" => "Placed in a copy",
        "blankBack" => "Blank backs set aside",
        "rescan" => "Identical rescans set aside",
        "conflict" => "Different scans of one page (choose one)",
        "notChosen" => "Scans not chosen",
        "extra" => "Extra answer sheets",
        "unknown" => "Unknown (no readable code)",
        "foreign" => "Not of this set",
        _ => "Other",
    }
}

/// What a page of the stack is, in words.
pub(super) fn placement_text(placement: &Placement) -> String {
    match placement {
        Placement::Unknown { reason } => format!("Unknown: {reason}"),
        Placement::Extra { assigned: None } => "An extra answer sheet, not assigned".to_owned(),
        Placement::Extra {
            assigned: Some((copy, question)),
        } => format!(
            "An extra answer sheet of copy {}, question {question}",
            copy_number((*copy).into())
        ),
        Placement::Placed {
            by_hand: true,
            copy,
            page,
        } => format!(
            "Placed by hand as copy {} page {page}",
            copy_number((*copy).into())
        ),
        other => {
            let mut text = crate::class_sets::decision::describe(other);
            if let Some(first) = text.get(..1) {
                text = first.to_uppercase() + text.get(1..).unwrap_or_default();
            }
            text
        }
    }
}

pub(super) fn stack_page(
    signed: &Signed,
    set: &Overview,
    at: &StackPage,
    placement: &Placement,
) -> Result<Markup, AppError> {
    let action = format!("/app/class-sets/{}/decide", set.set.id);
    let name = set.now.file_name(&at.file);
    let image = format!("/app/pages/{}/{}", at.file, at.page);
    let field = |what: &str| format!("{what}-{}-{}", at.file, at.page);
    let hidden = html! {
        input type="hidden" name="file" value=(at.file);
        input type="hidden" name="page" value=(at.page);
    };
    let forms = match placement {
        Placement::Unknown { .. } | Placement::Placed { by_hand: true, .. } => html! {
            form.settle method="post" action=(action) {
                (form_fields(signed)?)
                input type="hidden" name="kind" value="place";
                (hidden)
                span.field {
                    label for=(field("copy")) { "Copy" }
                    input.number type="number" id=(field("copy")) name="copy" min="1" max=(set.set.copies) required;
                }
                span.field {
                    label for=(field("copy-page")) { "Page of the copy" }
                    input.number type="number" id=(field("copy-page")) name="copyPage" min="1" max=(set.set.paper_pages) required;
                }
                button type="submit" { "Place the page" }
            }
        },
        Placement::Conflict { .. } | Placement::NotChosen { .. } | Placement::Placed { .. } => {
            html! {
                form.settle method="post" action=(action) {
                    (form_fields(signed)?)
                    input type="hidden" name="kind" value="choose";
                    (hidden)
                    @if matches!(placement, Placement::Placed { .. }) {
                        span.hint { "This scan stands." }
                    } @else {
                        button type="submit" { "Use this scan" }
                    }
                }
            }
        }
        Placement::Extra { assigned } => html! {
            form.settle method="post" action=(action) {
                (form_fields(signed)?)
                input type="hidden" name="kind" value="extra";
                (hidden)
                span.field {
                    label for=(field("extra-copy")) { "Copy" }
                    input.number type="number" id=(field("extra-copy")) name="copy" min="1" max=(set.set.copies) required
                        value=[assigned.as_ref().map(|(copy, _)| *copy)];
                }
                span.field {
                    label for=(field("question")) { "Question" }
                    input.short type="text" id=(field("question")) name="question" maxlength=(MAX_QUESTION_CHARS) required
                        value=[assigned.as_ref().map(|(_, question)| question.as_str())];
                }
                button type="submit" { "Assign the sheet" }
            }
        },
        _ => html! {},
    };
    Ok(html! {
        figure.stack-page id=(field("page")) data-placement=(overview::placement_name(placement)) {
            a href=(image) { img src=(image) alt={ "Page " (at.page) " of " (name) }; }
            figcaption {
                strong { "Page " (at.page) " of " (name) }
                br;
                (placement_text(placement))
            }
            (forms)
        }
    })
}

pub(super) fn stack_section(signed: &Signed, set: &Overview) -> Result<Markup, AppError> {
    let now = &set.now;
    let total: i64 = now.files.iter().map(|f| f.page_count).sum();
    let read = now.stack.report.pages.len();
    let waiting = set.waiting();
    let decided = set.decided_pages();
    let mut waiting_pages = Vec::with_capacity(waiting.len());
    for (at, placement) in &waiting {
        waiting_pages.push(stack_page(signed, set, at, placement)?);
    }
    let mut decided_pages = Vec::with_capacity(decided.len());
    for (at, placement) in &decided {
        decided_pages.push(stack_page(signed, set, at, placement)?);
    }
    Ok(html! {
        section #stack aria-labelledby="stack-title" data-stack=(now.state().name()) {
            h2 #stack-title { "Scanned stack" }
            @match now.state() {
                StackState::Empty => {
                    p #stack-state { "No page is uploaded yet." }
                }
                StackState::Reading => {
                    p #stack-state data-progress="reading" { (read) " of " (total) " pages are read; the page updates as they are (reload it without script)." }
                }
                StackState::Read => {
                    p #stack-state { "Every page is read: " (total) " pages in " (now.files.len()) @if now.files.len() == 1 { " file." } @else { " files." } }
                }
            }
            (upload_form(signed, set)?)
            div #stack-report {
                @if now.state() != StackState::Empty {
                    table #counts {
                        caption { "Where the pages went" }
                        thead { tr { th scope="col" { "Pages" } th scope="col" { "How many" } } }
                        tbody {
                            @for (name, n) in set.counts() {
                                tr data-placement=(name) { th scope="row" { (placement_words(name)) } td.num { (n) } }
                            }
                        }
                    }
                }
                h3 #waiting-title { "Pages waiting for a person (" (waiting.len()) ")" }
                @if waiting.is_empty() {
                    p #nothing-waiting { "No page is waiting for a person." }
                } @else {
                    div.stack-pages #waiting { @for p in waiting_pages { (p) } }
                }
                @if !decided.is_empty() {
                    h3 #decided-title { "Pages a person decided (" (decided.len()) ")" }
                    p.hint { "A later decision changes an earlier one." }
                    div.stack-pages #decided { @for p in decided_pages { (p) } }
                }
            }
        }
    })
}

/// The form that uploads scans to the stack: several files at once, at any time.
pub(super) fn upload_form(signed: &Signed, set: &Overview) -> Result<Markup, AppError> {
    Ok(html! {
        form.upload #upload method="post" enctype="multipart/form-data"
            action={ "/app/class-sets/" (set.set.id) "/scans" } {
            input type="hidden" name=(crate::app::session::CSRF_FIELD) value=(signed.session.csrf_token);
            p {
                label for="files" { "Upload scans (PDF, PNG, JPEG or WebP; several at once; pages found later join the same stack)" }
                input #files type="file" name="files" multiple accept="application/pdf,image/png,image/jpeg,image/webp,.pdf,.png,.jpg,.jpeg,.webp";
            }
            p { button type="submit" { "Upload" } }
            ul.upload-progress #upload-progress aria-live="polite" {}
        }
    })
}
