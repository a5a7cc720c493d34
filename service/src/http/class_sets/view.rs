//! Class sets' stacks and scripts as the API shows them (the JSON of `GET /v1/class-sets/{id}`'s
//! `stack` and `marking`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::class_sets::names::{NameCheck, Reading};
use crate::class_sets::overview::StackNow;
use crate::class_sets::scans::Stack;
use crate::class_sets::scripts::NotReady;
use crate::class_sets::stack::{CopyState, Placement};
use crate::class_sets::students::Writer;
use crate::store::class_sets::CopyRow;
use crate::store::class_sets::scripts::ScriptProgress;
use crate::store::class_sets::stacks::DecisionRow;
use crate::store::marking::AssetRow;
use crate::store::rfc3339;

/// A file of the stack.
pub fn file(asset: &AssetRow) -> Value {
    json!({
        "id": asset.id,
        "name": asset.name,
        "contentType": asset.content_type,
        "sizeBytes": asset.size_bytes,
        "pages": asset.page_count,
        "sha256": asset.sha256,
        "uploadedAt": rfc3339(asset.created_at),
    })
}

/// A recorded decision.
pub fn decision(row: &DecisionRow) -> Value {
    let mut view = json!({
        "seq": row.seq,
        "kind": row.kind,
        "madeBy": { "keyId": row.made_by_key, "userId": row.made_by_user },
        "madeAt": rfc3339(row.made_at),
    });
    let fields = [
        ("file", row.asset_id.as_ref().map(|v| json!(v))),
        ("page", row.page.map(|v| json!(v))),
        ("copy", row.copy.map(|v| json!(v))),
        ("copyPage", row.copy_page.map(|v| json!(v))),
        ("question", row.question.as_ref().map(|v| json!(v))),
    ];
    for (name, value) in fields {
        if let Some(value) = value {
            view[name] = value;
        }
    }
    if row.kind == "student" {
        view["student"] = json!(row.student);
    }
    view
}

/// The name of a placement in the API.
fn placement_name(placement: &Placement) -> &'static str {
    match placement {
        Placement::Placed { .. } => "placed",
        Placement::BlankBack { .. } => "blankBack",
        Placement::Rescan { .. } => "rescan",
        Placement::Conflict { .. } => "conflict",
        Placement::NotChosen { .. } => "notChosen",
        Placement::Extra { .. } => "extra",
        Placement::Unknown { .. } => "unknown",
        Placement::Foreign { .. } => "foreign",
    }
}

/// One page of the stack and where it went.
fn page(file: &str, page: u32, placement: Option<&Placement>) -> Value {
    let mut view = json!({ "file": file, "page": page });
    let Some(placement) = placement else {
        view["placement"] = json!("reading");
        return view;
    };
    view["placement"] = json!(placement_name(placement));
    match placement {
        Placement::Placed {
            copy,
            page,
            by_hand,
        } => {
            view["copy"] = json!(copy);
            view["copyPage"] = json!(page);
            view["byHand"] = json!(by_hand);
        }
        Placement::BlankBack { copy } => view["copy"] = json!(copy),
        Placement::Rescan { copy, page }
        | Placement::Conflict { copy, page }
        | Placement::NotChosen { copy, page } => {
            view["copy"] = json!(copy);
            view["copyPage"] = json!(page);
        }
        Placement::Extra { assigned } => {
            if let Some((copy, question)) = assigned {
                view["copy"] = json!(copy);
                view["question"] = json!(question);
            }
        }
        Placement::Unknown { reason } | Placement::Foreign { reason } => {
            view["reason"] = json!(reason);
        }
    }
    view
}

/// The stack: its files, every page and where it went, every copy's script, the decisions.
pub fn stack(files: &[AssetRow], stack: &Stack, decisions: &[DecisionRow]) -> Value {
    let report = &stack.report;
    let mut counts = serde_json::Map::new();
    for name in [
        "placed",
        "blankBack",
        "rescan",
        "conflict",
        "notChosen",
        "extra",
        "unknown",
        "foreign",
    ] {
        counts.insert(name.to_owned(), json!(0));
    }
    for (_, placement) in &report.pages {
        let name = placement_name(placement);
        let count = counts.get(name).and_then(Value::as_u64).unwrap_or(0);
        counts.insert(name.to_owned(), json!(count + 1));
    }
    // Stack order: files in upload order, pages in file order; read and unread pages together.
    let mut pages: Vec<(&str, u32, Option<&Placement>)> = report
        .pages
        .iter()
        .map(|(at, placement)| (at.file.as_str(), at.page, Some(placement)))
        .chain(
            stack
                .reading
                .iter()
                .map(|at| (at.file.as_str(), at.page, None)),
        )
        .collect();
    let position = |file: &str| files.iter().position(|f| f.id == file);
    pages.sort_by_key(|(file, page, _)| (position(file), *page));
    let copies: Vec<Value> = report
        .copies
        .iter()
        .map(|(copy, (state, placed))| {
            let (name, missing) = match state {
                CopyState::Complete => ("complete", Vec::new()),
                CopyState::Incomplete { missing } => ("incomplete", missing.clone()),
                CopyState::Absent => ("absent", Vec::new()),
            };
            let extras: Vec<Value> = report
                .extras
                .get(copy)
                .map(|sheets| {
                    sheets
                        .iter()
                        .map(|(question, at)| {
                            json!({ "question": question, "file": at.file, "page": at.page })
                        })
                        .collect()
                })
                .unwrap_or_default();
            json!({
                "copy": copy,
                "state": name,
                "missingPages": missing,
                "pages": placed
                    .iter()
                    .map(|(copy_page, at)| json!({ "copyPage": copy_page, "file": at.file, "page": at.page }))
                    .collect::<Vec<_>>(),
                "extras": extras,
            })
        })
        .collect();
    let total: i64 = files.iter().map(|f| f.page_count).sum();
    json!({
        "state": if files.is_empty() { "empty" } else if stack.reading.is_empty() { "read" } else { "reading" },
        "files": files.iter().map(file).collect::<Vec<_>>(),
        "pagesTotal": total,
        "pagesRead": report.pages.len(),
        "counts": counts,
        "pages": pages.iter().map(|(file, p, placement)| page(file, *p, *placement)).collect::<Vec<_>>(),
        "copies": copies,
        "decisions": decisions.iter().map(decision).collect::<Vec<_>>(),
    })
}

/// The stack as it stands, with who wrote each copy and the name written on its cover when it
/// was read, and the copies whose written name a person must look at.
pub fn stack_now(now: &StackNow, copies: &[CopyRow]) -> Value {
    let mut view = stack(&now.files, &now.stack, &now.decisions);
    let writers = now.writers(copies);
    let checks = now.name_checks(copies);
    if let Some(listed) = view["copies"].as_array_mut() {
        for entry in listed {
            let Some(copy) = entry["copy"].as_u64().and_then(|c| u32::try_from(c).ok()) else {
                continue;
            };
            let writer = writers.get(&copy).copied().unwrap_or(Writer::Numbered);
            entry["writer"] = json!(writer.name());
            entry["handwrittenName"] = checks
                .get(&copy)
                .map_or(Value::Null, |check| handwritten(check, copies));
        }
    }
    view["namesToCheck"] = json!(
        checks
            .iter()
            .filter(|(_, check)| check.flagged)
            .map(|(copy, _)| copy)
            .collect::<Vec<_>>()
    );
    view
}

/// A copy's written name, checked.
fn handwritten(check: &NameCheck, copies: &[CopyRow]) -> Value {
    let (state, written, error) = match &check.reading {
        Reading::Reading => ("reading", None, None),
        Reading::Read(written) => ("read", written.as_deref(), None),
        Reading::Failed(error) => ("failed", None, Some(error.as_str())),
    };
    let matched = check.matched.map_or(Value::Null, |m| {
        let name = copies
            .iter()
            .find(|c| c.copy == i64::from(m.student))
            .and_then(|c| c.name.as_deref());
        json!({ "student": m.student, "name": name, "confidence": m.confidence })
    });
    let mut view = json!({
        "state": state,
        "written": written,
        "match": matched,
        "verdict": check.verdict.name(),
        "flagged": check.flagged,
    });
    if let Some(error) = error {
        view["error"] = json!(error);
    }
    view
}

/// The marking of a set (`GET /v1/class-sets/{id}`'s `marking`): every script with its
/// session's progress, and the copies whose script is not the stack as it stands (start again to
/// mark them).
pub fn marking(
    progress: &[ScriptProgress],
    copies: &[CopyRow],
    writers: &BTreeMap<u32, Writer>,
    stack: &Stack,
) -> Value {
    // While pages are being read, what the scripts will be is not known yet: nothing is judged
    // out of date until the stack is read.
    let current = match crate::class_sets::scripts::scripts(stack) {
        Ok(scripts) => Some(scripts),
        Err(NotReady::Reading { .. }) => None,
        Err(_) => Some(Vec::new()),
    };
    let scripts: Vec<Value> = progress
        .iter()
        .map(|p| script(p, copies, writers, current.as_deref()))
        .collect();
    let reading = current.is_none();
    let current = current.unwrap_or_default();
    let mut out_of_date: Vec<i64> = Vec::new();
    for s in current.iter().filter(|_| !reading) {
        let copy = i64::from(s.copy);
        let made = progress
            .iter()
            .find(|p| p.script.copy == copy)
            .is_some_and(|p| p.script.pages_json == s.pages_json());
        if !made {
            out_of_date.push(copy);
        }
    }
    for p in progress.iter().filter(|_| !reading) {
        if !current.iter().any(|s| i64::from(s.copy) == p.script.copy) {
            out_of_date.push(p.script.copy);
        }
    }
    out_of_date.sort_unstable();
    let marked = scripts.iter().filter(|s| s["state"] == "marked").count();
    let failed = scripts.iter().filter(|s| s["state"] == "failed").count();
    json!({
        "state": if progress.is_empty() {
            "notStarted"
        } else if marked + failed == scripts.len() {
            "marked"
        } else {
            "marking"
        },
        "scriptsMarked": marked,
        "outOfDate": out_of_date,
        "scripts": scripts,
    })
}

/// One script: its copy and student, its session, the pages it lacks, and its questions.
fn script(
    progress: &ScriptProgress,
    copies: &[CopyRow],
    writers: &BTreeMap<u32, Writer>,
    current: Option<&[crate::class_sets::scripts::Script]>,
) -> Value {
    let row = &progress.script;
    let count = |status: &str| {
        progress
            .questions
            .iter()
            .filter(|q| q.0 == status)
            .map(|q| q.1)
            .sum::<i64>()
    };
    let total: i64 = progress.questions.iter().map(|q| q.1).sum();
    let waiting = count("queued") + count("running");
    // Questions are placed once the scheme's pages are read; with nothing placed and nothing
    // left to do (the scheme unreadable, placing failed), the script failed.
    let state = if total == 0 && progress.pending_jobs == 0 {
        "failed"
    } else if total == 0 {
        "preparing"
    } else if waiting > 0 {
        "marking"
    } else {
        "marked"
    };
    let marked = |q: &&(String, i64, i64, i64, i64)| q.0 == "completed" || q.0 == "needs_review";
    let awarded: i64 = progress.questions.iter().filter(marked).map(|q| q.2).sum();
    let possible: i64 = progress.questions.iter().filter(marked).map(|q| q.3).sum();
    let max: i64 = progress.questions.iter().map(|q| q.4).sum();
    let missing: Vec<i64> = serde_json::from_str(&row.missing_json).unwrap_or_default();
    let writer = u32::try_from(row.copy)
        .ok()
        .and_then(|copy| writers.get(&copy).copied())
        .unwrap_or(Writer::Numbered);
    let confirmed = matches!(writer, Writer::Confirmed(_));
    let student = writer
        .student()
        .and_then(|s| copies.iter().find(|c| c.copy == i64::from(s)))
        .and_then(|c| {
            c.name.as_ref().map(|name| {
                json!({
                    "name": name,
                    "candidateNumber": c.candidate_number,
                    "printedOnCopy": c.copy,
                    "source": if confirmed { "person" } else { "printed" },
                    "confirmed": confirmed,
                })
            })
        });
    json!({
        "copy": row.copy,
        "student": student,
        "writer": writer.name(),
        "sessionId": row.session_id,
        "state": state,
        // While the stack is being read, a script is taken as current.
        "current": current.is_none_or(|current| {
            current
                .iter()
                .any(|s| i64::from(s.copy) == row.copy && s.pages_json() == row.pages_json)
        }),
        "missingPages": missing,
        "questions": {
            "total": total,
            "queued": count("queued"),
            "running": count("running"),
            "completed": count("completed"),
            "needsReview": count("needs_review"),
            "failed": count("failed"),
            "cancelled": count("cancelled"),
        },
        "score": { "awarded": awarded, "possible": possible, "max": max },
        "madeAt": rfc3339(row.created_at),
    })
}
