//! A bank question as the app shows it: its content (stem, parts, diagrams, lists) and, on
//! request, its mark scheme, with every piece of maths rendered from the typst source the PDFs
//! use ([`super::math`]). One typed model, `examkit_bank::Revision`, read from the stored
//! revision; never raw `$…$` on a page.

use maud::{Markup, html};

use super::math::Maths;
use examkit_bank::{Block, Revision};

/// Every text of a revision that may hold maths, for [`Maths::prepare`] before a page is drawn.
pub fn texts(revision: &Revision) -> Vec<String> {
    let mut out = Vec::new();
    let mut blocks = |blocks: &[Block]| {
        for block in blocks {
            match block {
                Block::Text { text } => out.push(text.clone()),
                Block::Math { math } => out.push(display(math)),
                Block::List { items } => out.extend(items.iter().cloned()),
                Block::Diagram { .. } => {}
            }
        }
    };
    blocks(&revision.content.stem);
    for part in &revision.content.parts {
        blocks(&part.body);
    }
    for criterion in &revision.scheme.criteria {
        out.push(criterion.requirement.clone());
        out.extend(criterion.answers.iter().cloned());
        out.extend(criterion.notes.iter().cloned());
    }
    out
}

/// A displayed equation as text with maths: the equation between dollars.
fn display(math: &str) -> String {
    format!("${}$", math.trim())
}

/// Reads a stored revision's body; `None` (logged) when it is not one.
pub fn read(body: &str, question_id: &str) -> Option<Revision> {
    match serde_json::from_str(body) {
        Ok(revision) => Some(revision),
        Err(e) => {
            tracing::error!(question = %question_id, error = %e, "a stored revision cannot be read");
            None
        }
    }
}

fn blocks(maths: &Maths, blocks: &[Block], diagram: &dyn Fn(&uuid::Uuid) -> String) -> Markup {
    html! {
        @for block in blocks {
            @match block {
                Block::Text { text } => p { (maths.rich(text)) },
                Block::Math { math } => div.display-math { (maths.rich(&display(math))) },
                Block::List { items } => ul { @for item in items { li { (maths.rich(item)) } } },
                Block::Diagram { asset, alt, .. } => img.diagram src=(diagram(asset)) alt=(alt);
            }
        }
    }
}

/// The question's content: its stem, then each part with its label and marks. `diagram` gives
/// the address of a diagram's file.
pub fn question(
    maths: &Maths,
    revision: &Revision,
    diagram: &dyn Fn(&uuid::Uuid) -> String,
) -> Markup {
    html! {
        div.question-content {
            (blocks(maths, &revision.content.stem, diagram))
            @for part in &revision.content.parts {
                div.part {
                    @if let Some(label) = &part.label { span.part-label { (label) " " } }
                    (blocks(maths, &part.body, diagram))
                    p.part-marks { "[" (part.marks) (if part.marks == 1 { " mark]" } else { " marks]" }) }
                }
            }
        }
    }
}

/// The mark scheme, folded until asked for (a `details` element: no script needed).
pub fn scheme(maths: &Maths, revision: &Revision) -> Markup {
    html! {
        details.scheme {
            summary { "Mark scheme (" (revision.marks) " marks)" }
            table {
                thead { tr { th scope="col" { "Part" } th scope="col" { "Mark" } th scope="col" { "Requirement" } th scope="col" { "Accepted answers" } } }
                tbody {
                    @for c in &revision.scheme.criteria {
                        tr {
                            td { (c.part_id) }
                            td { (c.code) }
                            td {
                                (maths.rich(&c.requirement))
                                @for note in &c.notes { p.hint { (maths.rich(note)) } }
                            }
                            td { @for answer in &c.answers { div { (maths.rich(answer)) } } }
                        }
                    }
                }
            }
        }
    }
}
