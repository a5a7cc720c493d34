//! A set's copies: who wrote each (with the cover's name area and the name read from it), its
//! state in the stack and its script, with the forms that change them.

use super::*;

pub(super) fn writer_text(line: &CopyLine<'_>) -> String {
    match line.writer {
        Writer::Numbered => "numbered copy".to_owned(),
        Writer::Printed(_) => "printed (not confirmed)".to_owned(),
        Writer::Confirmed(s) if i64::from(s) == line.printed.copy => "confirmed".to_owned(),
        Writer::Confirmed(s) => format!("confirmed (printed on copy {})", copy_number(s.into())),
        Writer::NotOnRoster => "not on the roster".to_owned(),
        Writer::Displaced => "displaced: say who wrote it".to_owned(),
    }
}

/// What the student wrote on the cover, and how it matches the roster.
pub(super) fn written_text(check: &NameCheck, copies: &[CopyRow]) -> String {
    let matched = check.matched.map(|m| {
        let name = copies
            .iter()
            .find(|c| c.copy == i64::from(m.student))
            .and_then(|c| c.name.as_deref())
            .unwrap_or("?");
        format!("{name}, {:.0} % alike", m.confidence * 100.0)
    });
    match (&check.reading, check.verdict) {
        (Reading::Reading, _) => "Name on the cover: being read".to_owned(),
        (Reading::Failed(_), _) => "Name on the cover: could not be read".to_owned(),
        (Reading::Read(None), _) => "Name on the cover: blank".to_owned(),
        (Reading::Read(Some(written)), Verdict::Agrees) => format!(
            "Wrote “{written}”: agrees ({})",
            matched.unwrap_or_default()
        ),
        (Reading::Read(Some(written)), Verdict::Disagrees) => format!(
            "Wrote “{written}”: matches another student ({})",
            matched.unwrap_or_default()
        ),
        (Reading::Read(Some(written)), _) => {
            format!("Wrote “{written}”: matches nobody on the roster")
        }
    }
}

pub(super) fn script_state_text(state: ScriptState) -> &'static str {
    match state {
        ScriptState::Preparing => "Preparing",
        ScriptState::Marking => "Marking",
        ScriptState::Marked => "Marked",
        ScriptState::Failed => "Failed",
    }
}

pub(super) fn copies_section(
    signed: &Signed,
    set: &Overview,
    covers: bool,
) -> Result<Markup, AppError> {
    let mut lines = set.copy_lines();
    // Names to check first: a written name that disagrees with the copy's student, or matches
    // nobody, leads the table.
    crate::class_sets::names::flagged_first(&mut lines, |line| {
        line.name.as_ref().is_some_and(|check| check.flagged)
    });
    let rows = lines
        .iter()
        .map(|line| copy_row(signed, set, line, covers))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(html! {
        section #copies aria-labelledby="copies-title" {
            h2 #copies-title { "Copies" }
            div.scroll {
                table #copies-table {
                    caption { "Every copy of the set, who wrote it, and its script" }
                    thead { tr {
                        th scope="col" { "Copy" } th scope="col" { "Student" } th scope="col" { "Candidate number" }
                        th scope="col" { "Written by" } th scope="col" { "State" } th scope="col" { "Script" }
                        th scope="col" { "Change" }
                    } }
                    tbody { @for row in rows { (row) } }
                }
            }
        }
    })
}

/// One copy's row: its student, who wrote it, its state, its script and the forms that change it.
fn copy_row(
    signed: &Signed,
    set: &Overview,
    line: &CopyLine<'_>,
    covers: bool,
) -> Result<Markup, AppError> {
    let action = format!("/app/class-sets/{}/decide", set.set.id);
    let copy = line.printed.copy;
    Ok(html! {
        tr data-copy=(copy) {
            th scope="row" { (copy_number(copy)) }
            td.student {
                @match (line.student, line.writer) {
                    (Some(s), _) => { (s.name.as_deref().unwrap_or_default()) }
                    (None, Writer::NotOnRoster) => { em { "not on the roster" } }
                    (None, Writer::Displaced) => { em { "nobody yet" } }
                    (None, _) => { "—" }
                }
            }
            td.candidate { (line.student.and_then(|s| s.candidate_number.as_deref()).unwrap_or("—")) }
            td data-writer=(line.writer.name()) {
                @if covers && u32::try_from(copy).ok().and_then(|c| set.now.stack.report.copies.get(&c)).is_some_and(|(_, pages)| pages.contains_key(&1)) {
                    img.cover-name src={ "/app/class-sets/" (set.set.id) "/covers/" (copy) }
                        alt={ "The name written on the cover of copy " (copy_number(copy)) } loading="lazy";
                    br;
                }
                (writer_text(line))
                @if let Some(check) = &line.name {
                    br;
                    span.hint data-verdict=(check.verdict.name()) {
                        (written_text(check, &set.copies))
                    }
                    @if check.flagged { " " strong.flag { "check" } }
                }
            }
            @match line.state {
                CopyState::Complete => { td data-state="complete" { "Complete" } }
                CopyState::Incomplete { missing } => {
                    td data-state="incomplete" { "Incomplete: missing " @if missing.len() == 1 { "page " } @else { "pages " } (pages_text(missing)) }
                }
                CopyState::Absent => {
                    td data-state="absent" { "Absent" @if line.absent_by_person { " (said by a person)" } }
                }
            }
            td.script {
                @if let Some(script) = line.script {
                    span data-script=(script.state.name()) { (script_state_text(script.state)) }
                    " · " (score(script.awarded, script.possible, script.max))
                    " · " a href={ "/app/sessions/" (script.session_id) } { "Review" span.visually-hidden { " copy " (copy) } }
                    @if !script.current { " · " strong { "out of date" } }
                } @else {
                    "—"
                }
                @if !line.extras.is_empty() {
                    br; span.hint { (line.extras.len()) " extra " @if line.extras.len() == 1 { "sheet" } @else { "sheets" } }
                }
            }
            td.actions { (absent_form(signed, &action, line)?) (student_form(signed, &action, set, line)?) }
        }
    })
}

/// The form that marks a copy absent, or present again when a person said it was absent.
fn absent_form(signed: &Signed, action: &str, line: &CopyLine<'_>) -> Result<Markup, AppError> {
    let copy = line.printed.copy;
    Ok(html! {
        form.inline method="post" action=(action) {
            (form_fields(signed)?)
            input type="hidden" name="copy" value=(copy);
            @if line.absent_by_person {
                button type="submit" name="kind" value="present" { "Mark present" span.visually-hidden { " copy " (copy) } }
            } @else {
                button type="submit" name="kind" value="absent" { "Mark absent" span.visually-hidden { " copy " (copy) } }
            }
        }
    })
}

/// The form that says which student of the roster wrote a copy; nothing for numbered copies.
fn student_form(
    signed: &Signed,
    action: &str,
    set: &Overview,
    line: &CopyLine<'_>,
) -> Result<Markup, AppError> {
    if !set.named() {
        return Ok(html! {});
    }
    let copy = line.printed.copy;
    let held = line.writer.student().map(i64::from);
    let chosen_none = matches!(line.writer, Writer::NotOnRoster);
    Ok(html! {
        form.inline method="post" action=(action) {
            (form_fields(signed)?)
            input type="hidden" name="kind" value="student";
            input type="hidden" name="copy" value=(copy);
            label.visually-hidden for={ "student-" (copy) } { "Who wrote copy " (copy) }
            select id={ "student-" (copy) } name="student" {
                @if held.is_none() && !chosen_none { option value="" selected { "Choose…" } }
                @for c in set.copies.iter().filter(|c| c.name.is_some()) {
                    option value=(c.copy) selected[held == Some(c.copy)] {
                        (c.name.as_deref().unwrap_or_default())
                        @if let Some(n) = &c.candidate_number { " (" (n) ")" }
                    }
                }
                option value="none" selected[chosen_none] { "Not on the roster" }
            }
            button type="submit" { "Set student" }
        }
    })
}
