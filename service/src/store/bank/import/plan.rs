//! Checking a bank against the stored bank and planning what the import writes: a stored facet
//! id keeps its meaning; a stored revision is listed, keeps its content unless a draft and never
//! goes back to draft; an asset id keeps its question and its bytes.

use std::collections::{BTreeMap, HashMap};

use examkit_bank::digest::Digests;
use examkit_bank::{Bank, BankError, Level, Question, Revision, Status, Subject};
use uuid::Uuid;

use super::write::Arg;
use super::{ImportSummary, Stored, StoredFacet, StoredRevision};
use crate::store::StoreError;

/// A facet option to store: kind, id, label, a subtopic's topic, a course's level and subject.
type FacetRow<'a> = (
    &'static str,
    &'a str,
    &'a str,
    Option<&'a str>,
    Option<(Level, Subject)>,
);

/// What an import writes, once every check has passed.
#[derive(Default)]
pub(super) struct Writes<'a> {
    /// Facet options to insert: kind, id, label, position, topic, level, subject.
    pub(super) facet_inserts: Vec<Vec<Arg>>,
    /// Facet options to relabel: kind, id, label.
    pub(super) relabels: Vec<(&'static str, String, String)>,
    /// Questions to insert: id and latest published revision.
    pub(super) question_inserts: Vec<Vec<Arg>>,
    /// Revisions to insert (see [`revision_row`]).
    pub(super) revision_inserts: Vec<Vec<Arg>>,
    /// The assets of inserted revisions: question id, revision, asset id.
    pub(super) link_inserts: Vec<Vec<Arg>>,
    /// Assets to insert: id, question id, media type, SHA-256, bytes.
    pub(super) asset_inserts: Vec<Vec<Arg>>,
    /// Stored drafts rewritten or whose status moved: question id, revision, content, digests.
    pub(super) revision_updates: Vec<(String, i64, &'a Revision, &'a Digests)>,
    /// Stored questions whose latest published revision moved.
    pub(super) latest_updates: Vec<(String, Option<i64>)>,
    /// Questions added or changed, for the search index.
    pub(super) touched: Vec<Uuid>,
}

/// Checks the bank's facet options against the stored ones: labels may change; ids are never
/// removed; a subtopic keeps its topic. New options go at the end of their kind.
pub(super) fn plan_facets(
    bank: &Bank,
    stored_facets: &HashMap<(String, String), StoredFacet>,
    writes: &mut Writes<'_>,
    errors: &mut Vec<BankError>,
) {
    let mut next_position: HashMap<&str, i64> = HashMap::new();
    for ((kind, _), f) in stored_facets {
        let next = next_position.entry(kind_static(kind)).or_insert(0);
        *next = (*next).max(f.position + 1);
    }
    let merged = bank.facets();
    let mut options: Vec<FacetRow<'_>> = Vec::new();
    options.extend(merged.course.iter().map(|o| {
        (
            "course",
            o.id.as_str(),
            o.label.as_str(),
            None,
            Some((o.level, o.subject)),
        )
    }));
    options.extend(
        merged
            .board
            .iter()
            .map(|o| ("board", o.id.as_str(), o.label.as_str(), None, None)),
    );
    options.extend(
        merged
            .module
            .iter()
            .map(|o| ("module", o.id.as_str(), o.label.as_str(), None, None)),
    );
    options.extend(
        merged
            .topic
            .iter()
            .map(|o| ("topic", o.id.as_str(), o.label.as_str(), None, None)),
    );
    options.extend(merged.subtopic.iter().map(|o| {
        (
            "subtopic",
            o.id.as_str(),
            o.label.as_str(),
            Some(o.topic.as_str()),
            None,
        )
    }));
    for (kind, id, label, topic, course) in options {
        match stored_facets.get(&(kind.to_owned(), id.to_owned())) {
            Some(stored) => {
                if kind == "subtopic" && stored.topic.as_deref() != topic {
                    let (file, pointer) = facet_location(bank, kind, id);
                    errors.push(BankError::new(
                        file,
                        pointer,
                        format!(
                            "subtopic {id:?} is stored under topic {:?}; a stored facet id keeps its meaning",
                            stored.topic.as_deref().unwrap_or_default()
                        ),
                    ));
                } else if stored.label != label {
                    writes
                        .relabels
                        .push((kind, id.to_owned(), label.to_owned()));
                }
            }
            None => {
                let next = next_position.entry(kind).or_insert(0);
                let position = *next;
                *next += 1;
                writes.facet_inserts.push(vec![
                    Arg::Text(kind.to_owned()),
                    Arg::Text(id.to_owned()),
                    Arg::Text(label.to_owned()),
                    Arg::Int(position),
                    topic.map_or(Arg::NullText, |t| Arg::Text(t.to_owned())),
                    course.map_or(Arg::NullText, |(l, _)| Arg::Text(l.as_str().to_owned())),
                    course.map_or(Arg::NullText, |(_, s)| Arg::Text(s.as_str().to_owned())),
                ]);
            }
        }
    }
}

/// Checks the bank's questions against the stored ones and plans their writes: a stored
/// revision is listed, keeps its content unless a draft, and never goes back to draft; an asset
/// id keeps its question and its bytes.
#[allow(clippy::too_many_arguments)]
pub(super) fn plan_questions<'a>(
    bank: &'a Bank,
    digests: &'a HashMap<(Uuid, u32), Digests>,
    held: &Stored,
    now: i64,
    writes: &mut Writes<'a>,
    summary: &mut ImportSummary,
    errors: &mut Vec<BankError>,
) -> Result<(), StoreError> {
    let mut asset_seen: HashMap<Uuid, ()> = HashMap::new();
    for (file, qi, question) in bank.questions() {
        let qid = question.id.hyphenated().to_string();
        let qptr = format!("/questions/{qi}");
        let stored = held.revisions.get(&qid);
        let mut changed = false;
        let is_new = !held.questions.contains_key(&qid);
        if let Some(stored) = stored
            && let Some((&highest, _)) = stored.iter().next_back()
            && usize::try_from(highest).unwrap_or(usize::MAX) > question.revisions.len()
        {
            errors.push(BankError::new(
                        &file.name,
                        format!("{qptr}/revisions"),
                        format!(
                            "revision {highest} of this question is stored; list every stored revision (withdraw a revision instead of deleting it)"
                        ),
                    ));
        }
        for (ri, revision) in question.revisions.iter().enumerate() {
            let rptr = format!("{qptr}/revisions/{ri}");
            let Some(d) = digests.get(&(question.id, revision.revision)) else {
                continue;
            };
            plan_assets(
                bank,
                held,
                &file.name,
                &rptr,
                &qid,
                revision,
                &mut asset_seen,
                writes,
                errors,
            );
            changed |= plan_revision(
                RevisionAt {
                    file: &file.name,
                    rptr: &rptr,
                    qid: &qid,
                    question,
                    revision,
                    digests: d,
                },
                stored,
                now,
                writes,
                summary,
                errors,
            )?;
        }
        let latest = question
            .revisions
            .iter()
            .filter(|r| r.status == Status::Published)
            .map(|r| i64::from(r.revision))
            .max();
        if is_new {
            writes.question_inserts.push(vec![
                Arg::Text(qid.clone()),
                latest.map_or(Arg::NullText, Arg::Int),
            ]);
            summary.questions_added += 1;
            writes.touched.push(question.id);
        } else {
            if held.questions.get(&qid) != Some(&latest) {
                writes.latest_updates.push((qid.clone(), latest));
                changed = true;
            }
            if changed {
                summary.questions_changed += 1;
                writes.touched.push(question.id);
            }
        }
    }
    Ok(())
}

/// Where a revision of the bank is, and what it is.
struct RevisionAt<'p, 'a> {
    /// The bank file declaring it.
    file: &'p str,
    /// Its JSON pointer in that file.
    rptr: &'p str,
    /// Its question's id.
    qid: &'p str,
    /// Its question.
    question: &'a Question,
    /// The revision.
    revision: &'a Revision,
    /// Its digests.
    digests: &'a Digests,
}

/// Checks one revision against its stored one, if any (a stored revision never goes back to
/// draft, and keeps its content unless a draft), and plans its insert or update; `true` when it
/// changes its question.
fn plan_revision<'a>(
    at: RevisionAt<'_, 'a>,
    stored: Option<&BTreeMap<i64, StoredRevision>>,
    now: i64,
    writes: &mut Writes<'a>,
    summary: &mut ImportSummary,
    errors: &mut Vec<BankError>,
) -> Result<bool, StoreError> {
    let RevisionAt {
        file,
        rptr,
        qid,
        question,
        revision,
        digests: d,
    } = at;
    let number = i64::from(revision.revision);
    match stored.and_then(|s| s.get(&number)) {
        None => {
            writes
                .revision_inserts
                .push(revision_row(qid, revision, d, now)?);
            for asset in &revision.assets {
                writes.link_inserts.push(vec![
                    Arg::Text(qid.to_owned()),
                    Arg::Int(number),
                    Arg::Text(asset.id.hyphenated().to_string()),
                ]);
            }
            summary.revisions_added += 1;
            return Ok(true);
        }
        Some(old) => {
            if old.status != Status::Draft && revision.status == Status::Draft {
                errors.push(BankError::new(
                    file,
                    format!("{rptr}/status"),
                    format!(
                        "revision {number} is {} in the store and cannot go back to draft",
                        old.status.as_str()
                    ),
                ));
            }
            let content_changed = old.digest != d.revision_digest;
            if content_changed && old.status != Status::Draft {
                errors.push(BankError::new(
                    file,
                    rptr,
                    format!(
                        "revision {number} is {} in the store and its content cannot change; add the new content as revision {}",
                        old.status.as_str(),
                        question.revisions.len().max(stored.map_or(0, BTreeMap::len)) + 1
                    ),
                ));
            } else if content_changed || old.status != revision.status {
                writes
                    .revision_updates
                    .push((qid.to_owned(), number, revision, d));
                summary.revisions_changed += 1;
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// Checks a revision's assets against the stored ones (one id, one question, one file) and plans
/// the insert of each new one, once.
#[allow(clippy::too_many_arguments)]
fn plan_assets(
    bank: &Bank,
    stored: &Stored,
    file_name: &str,
    rptr: &str,
    qid: &str,
    revision: &Revision,
    asset_seen: &mut HashMap<Uuid, ()>,
    writes: &mut Writes<'_>,
    errors: &mut Vec<BankError>,
) {
    for (ai, asset) in revision.assets.iter().enumerate() {
        let aid = asset.id.hyphenated().to_string();
        let Some(data) = bank.assets.get(&asset.id) else {
            continue;
        };
        match stored.assets.get(&aid) {
            Some((owner, _)) if owner != qid => errors.push(BankError::new(
                file_name,
                format!("{rptr}/assets/{ai}/id"),
                "asset id is stored for another question",
            )),
            Some((_, sha)) if *sha != data.sha256 => errors.push(BankError::new(
                file_name,
                format!("{rptr}/assets/{ai}/file"),
                "asset id is stored with other file bytes; a changed diagram needs a new asset id",
            )),
            Some(_) => {}
            None => {
                if asset_seen.insert(asset.id, ()).is_none() {
                    writes.asset_inserts.push(vec![
                        Arg::Text(aid.clone()),
                        Arg::Text(qid.to_owned()),
                        Arg::Text(data.media_type.clone()),
                        Arg::Text(data.sha256.clone()),
                        Arg::Bytes(data.bytes.clone()),
                    ]);
                }
            }
        }
    }
}

fn kind_static(kind: &str) -> &'static str {
    match kind {
        "course" => "course",
        "board" => "board",
        "module" => "module",
        "topic" => "topic",
        _ => "subtopic",
    }
}

/// The first file and pointer declaring a facet option.
fn facet_location(bank: &Bank, kind: &str, id: &str) -> (String, String) {
    for f in &bank.files {
        let Some(facets) = &f.file.facets else {
            continue;
        };
        let ids: Vec<&str> = match kind {
            "course" => facets.course.iter().map(|o| o.id.as_str()).collect(),
            "board" => facets.board.iter().map(|o| o.id.as_str()).collect(),
            "module" => facets.module.iter().map(|o| o.id.as_str()).collect(),
            "topic" => facets.topic.iter().map(|o| o.id.as_str()).collect(),
            _ => facets.subtopic.iter().map(|o| o.id.as_str()).collect(),
        };
        if let Some(i) = ids.iter().position(|x| *x == id) {
            return (f.name.clone(), format!("/facets/{kind}/{i}/id"));
        }
    }
    (String::new(), String::new())
}

fn revision_row(
    qid: &str,
    revision: &Revision,
    d: &Digests,
    now: i64,
) -> Result<Vec<Arg>, StoreError> {
    let body = serde_json::to_string(revision)
        .map_err(|e| StoreError::Corrupt(format!("cannot serialise a revision: {e}")))?;
    Ok(vec![
        Arg::Text(qid.to_owned()),
        Arg::Int(i64::from(revision.revision)),
        Arg::Text(revision.status.as_str().to_owned()),
        Arg::Text(d.revision_digest.clone()),
        Arg::Text(d.content_version.clone()),
        Arg::Text(d.scheme_version.clone()),
        Arg::Text(revision.title.clone()),
        Arg::Int(i64::from(revision.marks)),
        Arg::Text(body),
        Arg::Int(now),
    ])
}
