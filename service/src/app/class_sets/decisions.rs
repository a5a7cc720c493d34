//! The decisions made about a set's stack, in words, with who made them.

use super::*;

/// Who made a decision, in words.
pub(super) fn who(row: &DecisionRow, keys: &[ApiKey]) -> String {
    if row.made_by_key.starts_with("app:") {
        return "In the app".to_owned();
    }
    match keys.iter().find(|k| k.id == row.made_by_key) {
        Some(key) => format!("API key “{}”", key.name),
        None => format!(
            "API key {}",
            row.made_by_key.get(..8).unwrap_or(&row.made_by_key)
        ),
    }
}

/// What a decision said, in words.
pub(super) fn describe(set: &Overview, row: &DecisionRow) -> String {
    let copy = row.copy.map(copy_number).unwrap_or_default();
    let at = match (&row.asset_id, row.page) {
        (Some(file), Some(page)) => format!("page {page} of {}", set.now.file_name(file)),
        _ => String::new(),
    };
    match row.kind.as_str() {
        "place" => format!(
            "{at} placed as copy {copy} page {}",
            row.copy_page.unwrap_or_default()
        ),
        "choose" => format!("{at} chosen among different scans of its page"),
        "extra" => format!(
            "the extra sheet {at} assigned to copy {copy}, question {}",
            row.question.as_deref().unwrap_or_default()
        ),
        "absent" => format!("copy {copy} marked absent"),
        "present" => format!("copy {copy} marked present"),
        "student" => {
            let student = row
                .student
                .and_then(|s| set.copies.iter().find(|c| c.copy == s))
                .and_then(|c| c.name.as_deref());
            match student {
                Some(name) => format!("copy {copy} written by {name}"),
                None => format!("copy {copy} written by a student not on the roster"),
            }
        }
        other => other.to_owned(),
    }
}

pub(super) fn decisions_section(set: &Overview, keys: &[ApiKey]) -> Markup {
    let rows = &set.now.decisions;
    html! {
        section #decisions aria-labelledby="decisions-title" {
            h2 #decisions-title { "Decisions" }
            @if rows.is_empty() {
                p #no-decisions { "No decision yet." }
            } @else {
                div.scroll {
                    table #decisions-table {
                        caption { "Every decision about the stack, in the order made; a later one stands over an earlier one" }
                        thead { tr { th scope="col" { "#" } th scope="col" { "When" } th scope="col" { "Who" } th scope="col" { "What" } } }
                        tbody {
                            @for row in rows {
                                tr data-seq=(row.seq) data-kind=(row.kind) {
                                    td.num { (row.seq) }
                                    td { (when(row.made_at)) }
                                    td { (who(row, keys)) }
                                    td { (describe(set, row)) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
