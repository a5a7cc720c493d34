//! The importer's rules 1–10 (`service/bank/README.md`, "Rules the importer enforces"): everything
//! across a bank's files that its schema cannot express. `check.py` checks the same rules with the
//! same pointers and messages.

use std::collections::{BTreeMap, HashMap, HashSet};

use uuid::Uuid;

use crate::error::BankError;
use crate::loaded::{AssetData, AssetReader, LoadedFile, asset_data};
use crate::model::{
    Block, CourseOption, FacetOption, Facets, Level, Revision, Status, Subject, SubtopicOption,
};

/// Facet options merged across the bank (and any already stored), by kind and id.
#[derive(Default)]
struct Declared<'a> {
    course: HashMap<&'a str, &'a CourseOption>,
    board: HashMap<&'a str, &'a FacetOption>,
    module: HashMap<&'a str, &'a FacetOption>,
    topic: HashMap<&'a str, &'a FacetOption>,
    subtopic: HashMap<&'a str, &'a SubtopicOption>,
    courses: HashSet<(Level, Subject)>,
}

/// Checks rules 1–10 over files already valid against the schema. Asset files are read through
/// `assets`; the bytes of every asset that passes are put in `asset_out`.
pub(crate) fn check(
    files: &[LoadedFile],
    known: &Facets,
    assets: &dyn AssetReader,
    asset_out: &mut BTreeMap<Uuid, AssetData>,
    errors: &mut Vec<BankError>,
) {
    let mut declared = Declared::default();
    for option in &known.course {
        declared.course.insert(&option.id, option);
        declared.courses.insert((option.level, option.subject));
    }
    for option in &known.board {
        declared.board.insert(&option.id, option);
    }
    for option in &known.module {
        declared.module.insert(&option.id, option);
    }
    for option in &known.topic {
        declared.topic.insert(&option.id, option);
    }
    for option in &known.subtopic {
        declared.subtopic.insert(&option.id, option);
    }
    // Rule 1: facets merged across files; a repeat must be identical. Options already stored may
    // be relabelled by the bank, so the bank's declaration replaces them.
    let mut bank_declared: HashSet<(&str, &str)> = HashSet::new();
    for f in files {
        let Some(facets) = &f.file.facets else {
            continue;
        };
        declare(
            &f.name,
            "course",
            &facets.course,
            |o| &o.id,
            &mut declared.course,
            &mut bank_declared,
            errors,
        );
        declare(
            &f.name,
            "board",
            &facets.board,
            |o| &o.id,
            &mut declared.board,
            &mut bank_declared,
            errors,
        );
        declare(
            &f.name,
            "module",
            &facets.module,
            |o| &o.id,
            &mut declared.module,
            &mut bank_declared,
            errors,
        );
        declare(
            &f.name,
            "topic",
            &facets.topic,
            |o| &o.id,
            &mut declared.topic,
            &mut bank_declared,
            errors,
        );
        declare(
            &f.name,
            "subtopic",
            &facets.subtopic,
            |o| &o.id,
            &mut declared.subtopic,
            &mut bank_declared,
            errors,
        );
    }
    for f in files {
        let Some(facets) = &f.file.facets else {
            continue;
        };
        for (i, option) in facets.course.iter().enumerate() {
            let expected = format!("{}-{}", option.level.as_str(), option.subject.as_str());
            if option.id != expected {
                errors.push(BankError::new(
                    &f.name,
                    format!("/facets/course/{i}/id"),
                    format!("course id must be {expected:?}"),
                ));
            }
            declared.courses.insert((option.level, option.subject));
        }
        for (i, option) in facets.subtopic.iter().enumerate() {
            if !declared.topic.contains_key(option.topic.as_str()) {
                errors.push(BankError::new(
                    &f.name,
                    format!("/facets/subtopic/{i}/topic"),
                    format!("unknown topic {:?}", option.topic),
                ));
            }
        }
    }

    // Rules 2–10, question by question.
    let mut question_ids: HashMap<Uuid, &str> = HashMap::new();
    let mut asset_owner: HashMap<Uuid, (Uuid, String)> = HashMap::new();
    for f in files {
        for (qi, question) in f.file.questions.iter().enumerate() {
            let qptr = format!("/questions/{qi}");
            if let Some(other) = question_ids.get(&question.id) {
                errors.push(BankError::new(
                    &f.name,
                    format!("{qptr}/id"),
                    format!("question id repeats one in {other}"),
                ));
            } else {
                question_ids.insert(question.id, &f.name);
            }
            let count = question.revisions.len();
            for (ri, revision) in question.revisions.iter().enumerate() {
                let rptr = format!("{qptr}/revisions/{ri}");
                if usize::try_from(revision.revision).ok() != Some(ri + 1) {
                    errors.push(BankError::new(
                        &f.name,
                        format!("{rptr}/revision"),
                        format!("expected revision {}", ri + 1),
                    ));
                }
                if revision.status == Status::Draft && ri + 1 != count {
                    errors.push(BankError::new(
                        &f.name,
                        format!("{rptr}/status"),
                        "only the last revision may be a draft",
                    ));
                }
                let mut check = RevisionCheck {
                    file: &f.name,
                    rptr: &rptr,
                    errors: &mut *errors,
                };
                check.facets(revision, &declared);
                check.parts_and_criteria(revision);
                check.maths(revision);
                check.assets(question.id, revision, assets, &mut asset_owner, asset_out);
            }
        }
    }
}

fn declare<'a, T: PartialEq>(
    file: &str,
    kind: &'static str,
    options: &'a [T],
    id: impl Fn(&'a T) -> &'a str,
    into: &mut HashMap<&'a str, &'a T>,
    bank_declared: &mut HashSet<(&'static str, &'a str)>,
    errors: &mut Vec<BankError>,
) {
    let mut local = HashSet::new();
    for (i, option) in options.iter().enumerate() {
        let fid = id(option);
        let pointer = format!("/facets/{kind}/{i}/id");
        if !local.insert(fid) {
            errors.push(BankError::new(
                file,
                pointer,
                format!("{kind} id {fid:?} declared twice in this file"),
            ));
            continue;
        }
        if bank_declared.contains(&(kind, fid)) {
            if into.get(fid).is_some_and(|earlier| *earlier != option) {
                errors.push(BankError::new(
                    file,
                    pointer,
                    format!("{kind} id {fid:?} declared differently in another file"),
                ));
            }
        } else {
            bank_declared.insert((kind, fid));
            into.insert(fid, option);
        }
    }
}

struct RevisionCheck<'a> {
    file: &'a str,
    rptr: &'a str,
    errors: &'a mut Vec<BankError>,
}

impl RevisionCheck<'_> {
    fn error(&mut self, pointer: impl AsRef<str>, message: impl Into<String>) {
        self.errors.push(BankError::new(
            self.file,
            format!("{}{}", self.rptr, pointer.as_ref()),
            message,
        ));
    }

    /// Rule 2: facet references.
    fn facets(&mut self, rev: &Revision, declared: &Declared<'_>) {
        if !declared.topic.contains_key(rev.topic.as_str()) {
            self.error("/topic", format!("unknown topic {:?}", rev.topic));
        }
        match declared.subtopic.get(rev.subtopic.as_str()) {
            None => self.error("/subtopic", format!("unknown subtopic {:?}", rev.subtopic)),
            Some(sub) if sub.topic != rev.topic => self.error(
                "/subtopic",
                format!(
                    "subtopic {:?} belongs to topic {:?}",
                    rev.subtopic, sub.topic
                ),
            ),
            Some(_) => {}
        }
        for (i, module) in rev.module_profiles.iter().enumerate() {
            if !declared.module.contains_key(module.as_str()) {
                self.error(
                    format!("/moduleProfiles/{i}"),
                    format!("unknown module {module:?}"),
                );
            }
        }
        for (i, source) in rev.sources.iter().enumerate() {
            let sptr = format!("/sources/{i}");
            if !declared.board.contains_key(source.board.as_str()) {
                self.error(
                    format!("{sptr}/board"),
                    format!("unknown board {:?}", source.board),
                );
            }
            if !declared.module.contains_key(source.module.as_str()) {
                self.error(
                    format!("{sptr}/module"),
                    format!("unknown module {:?}", source.module),
                );
            }
            if !declared.courses.contains(&(source.level, source.subject)) {
                self.error(
                    &sptr,
                    format!(
                        "no course declared for {} {}",
                        source.level.as_str(),
                        source.subject.as_str()
                    ),
                );
            }
            if !rev.module_profiles.contains(&source.module) {
                self.error(
                    format!("{sptr}/module"),
                    "a source's module must be one of moduleProfiles",
                );
            }
        }
    }

    /// Rules 5–8: parts, marks, criteria and dependencies.
    fn parts_and_criteria(&mut self, rev: &Revision) {
        let cparts = &rev.content.parts;
        let cids: Vec<&str> = cparts.iter().map(|p| p.id.as_str()).collect();
        for (i, pid) in cids.iter().enumerate() {
            if cids[..i].contains(pid) {
                self.error(
                    format!("/content/parts/{i}/id"),
                    format!("part id {pid:?} repeats"),
                );
            }
        }
        if cparts.len() > 1 {
            for (i, part) in cparts.iter().enumerate() {
                if part.label.is_none() {
                    self.error(
                        format!("/content/parts/{i}"),
                        "label required when there are several parts",
                    );
                }
            }
        }
        let sparts = &rev.scheme.parts;
        let sids: Vec<&str> = sparts.iter().map(|p| p.id.as_str()).collect();
        if sids != cids {
            self.error(
                "/scheme/parts",
                format!("scheme parts {sids:?} must be the content parts {cids:?} in order"),
            );
        }
        let criteria = &rev.scheme.criteria;
        let mut per_part: HashMap<&str, u32> = HashMap::new();
        for c in criteria {
            *per_part.entry(c.part_id.as_str()).or_default() += 1;
        }
        let cmarks: HashMap<&str, u32> = cparts.iter().map(|p| (p.id.as_str(), p.marks)).collect();
        for (i, part) in sparts.iter().enumerate() {
            let pointer = format!("/scheme/parts/{i}/maxMarks");
            let count = per_part.get(part.id.as_str()).copied().unwrap_or(0);
            if part.max_marks != count {
                self.error(
                    &pointer,
                    format!(
                        "maxMarks {} but the part has {count} criteria",
                        part.max_marks
                    ),
                );
            }
            if let Some(&marks) = cmarks.get(part.id.as_str()) {
                if marks != part.max_marks {
                    self.error(
                        &pointer,
                        format!(
                            "maxMarks {} but the content part shows {marks} marks",
                            part.max_marks
                        ),
                    );
                }
            }
        }
        if usize::try_from(rev.marks).ok() != Some(criteria.len()) {
            self.error(
                "/marks",
                format!(
                    "marks {} but the scheme has {} criteria",
                    rev.marks,
                    criteria.len()
                ),
            );
        }
        let mut ids: HashMap<&str, usize> = HashMap::new();
        for (i, c) in criteria.iter().enumerate() {
            if ids.contains_key(c.id.as_str()) {
                self.error(
                    format!("/scheme/criteria/{i}/id"),
                    format!("criterion id {:?} repeats", c.id),
                );
            } else {
                ids.insert(&c.id, i);
            }
            if !sids.contains(&c.part_id.as_str()) {
                self.error(
                    format!("/scheme/criteria/{i}/partId"),
                    format!("unknown part {:?}", c.part_id),
                );
            }
            if is_accuracy_code(&c.code)
                && c.answers.is_empty()
                && !c.notes.iter().any(|n| says_why_no_answers(n))
            {
                self.error(format!("/scheme/criteria/{i}/answers"), NO_ANSWERS_MESSAGE);
            }
        }
        let mut graph: Vec<(&str, Vec<&str>)> = Vec::new();
        for (i, c) in criteria.iter().enumerate() {
            for (j, d) in c.depends_on.iter().enumerate() {
                let pointer = format!("/scheme/criteria/{i}/dependsOn/{j}");
                if d == &c.id {
                    self.error(pointer, "a criterion cannot depend on itself");
                } else if !ids.contains_key(d.as_str()) {
                    self.error(pointer, format!("unknown criterion {d:?}"));
                } else {
                    match graph.iter_mut().find(|(n, _)| *n == c.id) {
                        Some((_, targets)) => targets.push(d),
                        None => graph.push((&c.id, vec![d.as_str()])),
                    }
                }
            }
        }
        for member in cycle_members(&graph) {
            if let Some(i) = ids.get(member) {
                self.error(
                    format!("/scheme/criteria/{i}/dependsOn"),
                    format!("criterion {member:?} lies on a dependency cycle"),
                );
            }
        }
    }

    /// Rule 9: maths in text.
    fn maths(&mut self, rev: &Revision) {
        for field in ["title", "summary"] {
            let value = if field == "title" {
                &rev.title
            } else {
                &rev.summary
            };
            if value.contains('$') {
                self.error(format!("/{field}"), "plain text: no maths or $ signs");
            }
        }
        let mut blocks: Vec<(String, &Block)> = rev
            .content
            .stem
            .iter()
            .enumerate()
            .map(|(i, b)| (format!("/content/stem/{i}"), b))
            .collect();
        for (pi, part) in rev.content.parts.iter().enumerate() {
            blocks.extend(
                part.body
                    .iter()
                    .enumerate()
                    .map(|(i, b)| (format!("/content/parts/{pi}/body/{i}"), b)),
            );
        }
        for (bptr, block) in blocks {
            match block {
                Block::Text { text } => self.text(text, format!("{bptr}/text")),
                Block::Math { math } => {
                    if let Some(problem) = maths_problem(math) {
                        self.error(format!("{bptr}/math"), problem);
                    }
                }
                Block::List { items } => {
                    for (k, item) in items.iter().enumerate() {
                        self.text(item, format!("{bptr}/items/{k}"));
                    }
                }
                Block::Diagram { alt, .. } => {
                    if alt.contains('$') {
                        self.error(format!("{bptr}/alt"), "plain text: no maths or $ signs");
                    }
                }
            }
        }
        for (i, c) in rev.scheme.criteria.iter().enumerate() {
            let cptr = format!("/scheme/criteria/{i}");
            self.text(&c.requirement, format!("{cptr}/requirement"));
            for (key, values) in [
                ("conditions", &c.conditions),
                ("answers", &c.answers),
                ("notes", &c.notes),
            ] {
                for (k, v) in values.iter().enumerate() {
                    self.text(v, format!("{cptr}/{key}/{k}"));
                }
            }
        }
    }

    fn text(&mut self, value: &str, pointer: String) {
        let (segments, problem) = inline_maths(value);
        if let Some(problem) = problem {
            self.error(&pointer, problem);
        }
        for segment in segments {
            if let Some(problem) = maths_problem(segment) {
                self.error(&pointer, problem);
            }
        }
    }

    /// Rule 10: assets.
    fn assets(
        &mut self,
        question: Uuid,
        rev: &Revision,
        reader: &dyn AssetReader,
        owner: &mut HashMap<Uuid, (Uuid, String)>,
        out: &mut BTreeMap<Uuid, AssetData>,
    ) {
        let mut declared: HashMap<Uuid, usize> = HashMap::new();
        for (i, asset) in rev.assets.iter().enumerate() {
            let aptr = format!("/assets/{i}");
            if declared.contains_key(&asset.id) {
                self.error(format!("{aptr}/id"), "asset id repeats within the revision");
                continue;
            }
            declared.insert(asset.id, i);
            match owner.get(&asset.id) {
                None => {
                    owner.insert(asset.id, (question, asset.file.clone()));
                }
                Some((q, _)) if *q != question => {
                    self.error(
                        format!("{aptr}/id"),
                        "asset id already used by another question",
                    );
                    continue;
                }
                Some((_, file)) if *file != asset.file => {
                    self.error(
                        format!("{aptr}/file"),
                        "asset id already names another file",
                    );
                    continue;
                }
                Some(_) => {}
            }
            if out.contains_key(&asset.id) {
                continue;
            }
            match reader.read(&asset.file) {
                Err(problem) => self.error(format!("{aptr}/file"), problem),
                Ok(bytes) => match crate::svg::check(&bytes) {
                    Err(problem) => self.error(
                        format!("{aptr}/file"),
                        format!("SVG {:?}: {problem}", asset.file),
                    ),
                    Ok(()) => {
                        out.insert(asset.id, asset_data(&asset.media_type, bytes));
                    }
                },
            }
        }
        let mut used = HashSet::new();
        let mut blocks: Vec<(String, &Block)> = rev
            .content
            .stem
            .iter()
            .enumerate()
            .map(|(i, b)| (format!("/content/stem/{i}"), b))
            .collect();
        for (pi, part) in rev.content.parts.iter().enumerate() {
            blocks.extend(
                part.body
                    .iter()
                    .enumerate()
                    .map(|(i, b)| (format!("/content/parts/{pi}/body/{i}"), b)),
            );
        }
        for (bptr, block) in blocks {
            if let Block::Diagram { asset, .. } = block {
                used.insert(*asset);
                if !declared.contains_key(asset) {
                    self.error(
                        format!("{bptr}/asset"),
                        "diagram refers to an asset not declared in this revision",
                    );
                }
            }
        }
        for (i, asset) in rev.assets.iter().enumerate() {
            if !used.contains(&asset.id) && declared.get(&asset.id) == Some(&i) {
                self.error(format!("/assets/{i}"), "asset is not used by any diagram");
            }
        }
    }
}

/// The notes that say why an accuracy criterion lists no answers (rule 7). A note is one of them
/// alone, or one of them followed by `:` and more words (`answer given: a conclusion is needed`).
pub const NO_ANSWER_REASONS: [&str; 5] = [
    "no single final answer",
    "answer given",
    "proof",
    "sketch",
    "explanation",
];

/// The error for an accuracy criterion with empty `answers` and no note saying why.
pub const NO_ANSWERS_MESSAGE: &str = "an accuracy mark with no answers needs a note saying why: \
    \"no single final answer\", \"answer given\", \"proof\", \"sketch\" or \"explanation\"";

/// Whether a mark code is an accuracy mark: `A1`, `dA1`, `A1ft`, `A1*`, `dA1ft`...
pub fn is_accuracy_code(code: &str) -> bool {
    code.strip_prefix('d').unwrap_or(code).starts_with('A')
}

/// Whether a note says why a criterion lists no answers (see [`NO_ANSWER_REASONS`]).
pub fn says_why_no_answers(note: &str) -> bool {
    NO_ANSWER_REASONS.iter().any(|reason| {
        note.strip_prefix(reason)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(':'))
    })
}

/// Splits text into its inline maths segments (between unescaped `$` signs); the second value
/// is the problem when a `$` is left open.
pub fn inline_maths(text: &str) -> (Vec<&str>, Option<String>) {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut segments = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        if c == '\\' && chars.get(i + 1).is_some_and(|n| n.1 == '$') {
            i += 2;
            continue;
        }
        if c == '$' {
            let mut j = i + 1;
            while j < chars.len() && chars[j].1 != '$' {
                j += if chars[j].1 == '\\' && j + 1 < chars.len() {
                    2
                } else {
                    1
                };
            }
            if j >= chars.len() {
                return (segments, Some(format!("unclosed $ at character {}", i + 1)));
            }
            segments.push(&text[chars[i].0 + 1..chars[j].0]);
            i = j + 1;
            continue;
        }
        i += 1;
    }
    (segments, None)
}

/// What is wrong with a piece of maths, if anything: empty, typst code (`#`) or a comment.
pub fn maths_problem(math: &str) -> Option<&'static str> {
    if math.trim().is_empty() {
        Some("empty maths")
    } else if math.contains('#') {
        Some("maths must not contain # (typst code)")
    } else if math.contains("//") || math.contains("/*") {
        Some("maths must not contain // or /* (typst comments)")
    } else {
        None
    }
}

/// The nodes lying on a dependency cycle (strongly connected components of more than one node),
/// in first-seen order. Self-references are reported separately.
fn cycle_members<'a>(graph: &[(&'a str, Vec<&'a str>)]) -> Vec<&'a str> {
    let mut nodes: Vec<&str> = graph.iter().map(|(n, _)| *n).collect();
    for (_, targets) in graph {
        for t in targets {
            if !nodes.contains(t) {
                nodes.push(t);
            }
        }
    }
    let index_of: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let edges: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            graph
                .iter()
                .find(|(m, _)| m == n)
                .map(|(_, t)| t.iter().filter_map(|x| index_of.get(x).copied()).collect())
                .unwrap_or_default()
        })
        .collect();
    // Tarjan's algorithm, iteratively.
    let n = nodes.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut counter = 0;
    let mut members = vec![false; n];
    for start in 0..n {
        if index[start] != usize::MAX {
            continue;
        }
        let mut work: Vec<(usize, usize)> = vec![(start, 0)];
        index[start] = counter;
        low[start] = counter;
        counter += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some(&mut (v, ref mut next)) = work.last_mut() {
            if let Some(&w) = edges[v].get(*next) {
                *next += 1;
                if index[w] == usize::MAX {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut component = Vec::new();
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        component.push(w);
                        if w == v {
                            break;
                        }
                    }
                    if component.len() > 1 {
                        for w in component {
                            members[w] = true;
                        }
                    }
                }
            }
        }
    }
    nodes
        .into_iter()
        .enumerate()
        .filter(|(i, _)| members[*i])
        .map(|(_, n)| n)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_maths_splits_and_reports() {
        assert_eq!(
            inline_maths("Solve $x^2 = 1$ for \\$5 and $y$."),
            (vec!["x^2 = 1", "y"], None)
        );
        assert_eq!(
            inline_maths("a $b").1,
            Some("unclosed $ at character 3".to_owned())
        );
        assert_eq!(maths_problem(" "), Some("empty maths"));
        assert_eq!(
            maths_problem("#x"),
            Some("maths must not contain # (typst code)")
        );
        assert_eq!(
            maths_problem("a /* b"),
            Some("maths must not contain // or /* (typst comments)")
        );
    }

    #[test]
    fn accuracy_marks_without_answers_say_why() {
        for code in ["A1", "dA1", "A1ft", "A1*", "dA1ft"] {
            assert!(is_accuracy_code(code), "{code}");
        }
        for code in ["M1", "dM1", "B1", "B1ft", "M1*"] {
            assert!(!is_accuracy_code(code), "{code}");
        }
        for note in NO_ANSWER_REASONS {
            assert!(says_why_no_answers(note), "{note}");
        }
        assert!(says_why_no_answers("answer given: a conclusion is needed"));
        for note in [
            "cso",
            "oe",
            "awrt 2.35",
            "proofs",
            "Proof",
            "no single final answer here",
            "the answer given",
        ] {
            assert!(!says_why_no_answers(note), "{note}");
        }
    }

    #[test]
    fn cycles_are_found() {
        let graph = vec![
            ("a", vec!["b"]),
            ("b", vec!["c"]),
            ("c", vec!["a"]),
            ("d", vec!["a"]),
        ];
        assert_eq!(cycle_members(&graph), vec!["a", "b", "c"]);
        assert!(cycle_members(&[("a", vec!["b"])]).is_empty());
    }
}
