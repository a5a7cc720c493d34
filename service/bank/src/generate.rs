//! Large synthetic banks for benchmarks: deterministic for a seed, valid by construction.
//!
//! Each generated question copies the content and scheme of a sample question (so marks, parts
//! and criteria stay consistent) and draws everything searchable afresh from the sample facets:
//! title and summary wording, tags, topic and subtopic, sources (board, course, module, session,
//! year, question number), eligible module profiles, difficulty and frequency. About one question
//! in fifty has a diagram (with its own asset id, pointing at one of the sample's SVG files), one
//! in twenty has a second revision, and one in a hundred ends with a draft.

use std::collections::BTreeMap;

use uuid::Uuid;

use crate::load::MemoryBank;
use crate::model::{BANK_VERSION, BankFile, Facets, Frequency, Question, Revision, Source, Status};
use crate::sample;

/// Questions per generated file.
pub const QUESTIONS_PER_FILE: usize = 5_000;

/// SplitMix64: a small, well-distributed deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % (n.max(1) as u64)).unwrap_or(0)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn uuid(&mut self) -> Uuid {
        let bytes = (u128::from(self.next()) << 64 | u128::from(self.next())).to_be_bytes();
        uuid::Builder::from_random_bytes(bytes).into_uuid()
    }
}

const CONTEXTS: [&str; 12] = [
    "warm-up",
    "standard",
    "extended",
    "exam-style",
    "revision",
    "challenge",
    "structured",
    "short",
    "multi-step",
    "applied",
    "review",
    "practice",
];
const SESSIONS: [&str; 5] = ["January", "March", "June", "October", "November"];
const EXTRA_TAGS: [&str; 16] = [
    "calculator",
    "non-calculator",
    "show-that",
    "proof",
    "graph",
    "table",
    "context",
    "modelling",
    "exact-values",
    "estimate",
    "interpret",
    "sketch",
    "hence",
    "unstructured",
    "formula",
    "units",
];

fn clip(text: &str, max: usize) -> String {
    text.chars()
        .take(max)
        .collect::<String>()
        .trim_end()
        .to_owned()
}

/// Generates a bank of `questions` questions for `seed`: the sample's `facets.json`, question
/// files of [`QUESTIONS_PER_FILE`] questions (`questions-0001.json`, …) and the sample's SVGs.
pub fn generate(questions: usize, seed: u64) -> Result<MemoryBank, String> {
    let sample = sample::load().map_err(|e| format!("the sample bank does not load: {e:?}"))?;
    let facets: Facets = sample.facets();
    let templates: Vec<&Revision> = sample
        .questions()
        .filter_map(|(_, _, q)| {
            q.revisions
                .iter()
                .rev()
                .find(|r| r.status == Status::Published)
        })
        .collect();
    let (with_diagrams, without): (Vec<&Revision>, Vec<&Revision>) =
        templates.into_iter().partition(|r| !r.assets.is_empty());
    let tag_pool: Vec<String> = {
        let mut tags: Vec<String> = sample
            .questions()
            .flat_map(|(_, _, q)| q.revisions.iter().flat_map(|r| r.tags.clone()))
            .chain(EXTRA_TAGS.iter().map(|t| (*t).to_owned()))
            .collect();
        tags.sort();
        tags.dedup();
        tags
    };
    let mut rng = Rng(seed);
    let mut all = Vec::with_capacity(questions);
    for n in 0..questions {
        let diagram = !with_diagrams.is_empty() && rng.below(50) == 0;
        let template = if diagram {
            *rng.pick(&with_diagrams)
        } else {
            *rng.pick(&without)
        };
        let mut first = template.clone();
        first.revision = 1;
        first.status = Status::Published;
        first.change_note = None;
        let context = rng.pick(&CONTEXTS);
        first.title = clip(&format!("{} ({context} {})", template.title, n + 1), 120);
        first.summary = clip(
            &format!(
                "{} Variant {} of the {context} set.",
                template.summary,
                n + 1
            ),
            300,
        );
        let subtopic = rng.pick(&facets.subtopic);
        first.topic = subtopic.topic.clone();
        first.subtopic = subtopic.id.clone();
        let mut tags = Vec::new();
        for _ in 0..1 + rng.below(5) {
            let tag = rng.pick(&tag_pool).clone();
            if !tags.contains(&tag) {
                tags.push(tag);
            }
        }
        first.tags = tags;
        first.difficulty = u8::try_from(1 + rng.below(5)).unwrap_or(3);
        first.frequency = *rng.pick(&[
            Frequency::Frequent,
            Frequency::Frequent,
            Frequency::Occasional,
            Frequency::Rare,
        ]);
        let mut profiles: Vec<String> = Vec::new();
        for _ in 0..1 + rng.below(3) {
            let module = rng.pick(&facets.module).id.clone();
            if !profiles.contains(&module) {
                profiles.push(module);
            }
        }
        let mut sources: Vec<Source> = Vec::new();
        for _ in 0..1 + rng.below(2) {
            let course = rng.pick(&facets.course);
            let source = Source {
                board: rng.pick(&facets.board).id.clone(),
                level: course.level,
                subject: course.subject,
                module: rng.pick(&profiles).clone(),
                paper: format!("Practice paper {}", 1 + rng.below(3)),
                session: (*rng.pick(&SESSIONS)).to_owned(),
                year: u16::try_from(2017 + rng.below(9)).unwrap_or(2020),
                question_number: u8::try_from(1 + rng.below(12)).unwrap_or(1),
            };
            if !sources.contains(&source) {
                sources.push(source);
            }
        }
        first.sources = sources;
        first.module_profiles = profiles;
        // Diagrams get ids of their own: an asset id belongs to one question.
        let renamed: BTreeMap<Uuid, Uuid> =
            first.assets.iter().map(|a| (a.id, rng.uuid())).collect();
        for asset in &mut first.assets {
            if let Some(new) = renamed.get(&asset.id) {
                asset.id = *new;
            }
        }
        for block in first.content.stem.iter_mut().chain(
            first
                .content
                .parts
                .iter_mut()
                .flat_map(|p| p.body.iter_mut()),
        ) {
            if let crate::model::Block::Diagram { asset, .. } = block {
                if let Some(new) = renamed.get(asset) {
                    *asset = *new;
                }
            }
        }
        let mut revisions = vec![first];
        if rng.below(20) == 0 {
            let mut second = revisions[0].clone();
            second.revision = 2;
            second.change_note = Some("Clearer wording of the summary.".to_owned());
            second.summary = clip(&format!("Revised: {}", second.summary), 300);
            if rng.below(2) == 0 {
                revisions[0].status = Status::Withdrawn;
            }
            revisions.push(second);
        }
        if rng.below(100) == 0 {
            let mut draft = revisions[revisions.len() - 1].clone();
            draft.revision += 1;
            draft.status = Status::Draft;
            draft.change_note = Some("Work in progress.".to_owned());
            draft.title = clip(&format!("Draft: {}", draft.title), 120);
            revisions.push(draft);
        }
        all.push(Question {
            id: rng.uuid(),
            revisions,
        });
    }
    let mut bank = MemoryBank::default();
    let facets_file = BankFile {
        schema: None,
        bank_version: BANK_VERSION.to_owned(),
        description: Some(format!(
            "Synthetic bank: {questions} questions, seed {seed}."
        )),
        facets: Some(facets),
        questions: Vec::new(),
    };
    bank.files
        .push(("facets.json".to_owned(), to_json(&facets_file)?));
    for (i, chunk) in all.chunks(QUESTIONS_PER_FILE).enumerate() {
        let file = BankFile {
            schema: None,
            bank_version: BANK_VERSION.to_owned(),
            description: None,
            facets: None,
            questions: chunk.to_vec(),
        };
        bank.files
            .push((format!("questions-{:04}.json", i + 1), to_json(&file)?));
    }
    bank.assets = sample::ASSETS
        .iter()
        .map(|(path, bytes)| ((*path).to_owned(), bytes.to_vec()))
        .collect();
    Ok(bank)
}

fn to_json(file: &BankFile) -> Result<Vec<u8>, String> {
    let mut out = serde_json::to_vec_pretty(file).map_err(|e| e.to_string())?;
    out.push(b'\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_banks_are_valid_and_deterministic() {
        let bank = generate(700, 1).expect("generate");
        let loaded = crate::load::load_memory(&bank, &Facets::default()).unwrap_or_else(|e| {
            panic!(
                "{}",
                e.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        });
        assert_eq!(loaded.question_count(), 700);
        assert_eq!(generate(700, 1).expect("again").files, bank.files);
        assert_ne!(generate(700, 2).expect("other seed").files, bank.files);
        let revisions: Vec<_> = loaded
            .questions()
            .flat_map(|(_, _, q)| &q.revisions)
            .collect();
        assert!(revisions.len() > 700);
        assert!(revisions.iter().any(|r| r.status == Status::Draft));
        assert!(revisions.iter().any(|r| !r.assets.is_empty()));
        let years: std::collections::BTreeSet<u16> = revisions
            .iter()
            .flat_map(|r| r.sources.iter().map(|s| s.year))
            .collect();
        assert!(years.len() > 5);
    }
}
