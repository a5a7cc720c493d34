//! Shared by the scan maker's tests: a sample paper rendered with examkit-pdf, scratch folders.
#![allow(dead_code, missing_docs)]

use std::path::{Path, PathBuf};

use examkit_bank::{BankFile, Status};
use examkit_pdf::{Layout, PaperDocument, PaperQuestion, Renderer, WritingSpace};
use uuid::Uuid;

/// The questions of `answers.example.json`, and one left blank, in paper order.
pub const QUESTIONS: [&str; 4] = [
    "8a834eff-5ac7-5e3d-902e-0c7342b819d4",
    "e0f05287-7bb6-5b32-adfc-c29b8c9bfe27",
    "6c2fd79f-8d1f-50f9-87cb-aa6638109d53",
    "24edba06-39ce-5306-9e48-2c6afec357a4",
];

pub const DPI: u32 = 150;

pub fn example_answers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("answers.example.json")
}

/// The latest servable revision of a sample-bank question, with its assets.
pub fn sample_question(id: &str) -> PaperQuestion {
    let id = Uuid::parse_str(id).expect("uuid");
    for (name, text) in examkit_bank::sample::FILES {
        if name == "facets.json" {
            continue;
        }
        let bank: BankFile = serde_json::from_str(text).expect("bank file");
        let Some(question) = bank.questions.into_iter().find(|q| q.id == id) else {
            continue;
        };
        let revision = question
            .revisions
            .into_iter()
            .filter(|r| matches!(r.status, Status::Published | Status::Withdrawn))
            .max_by_key(|r| r.revision)
            .expect("a servable revision");
        let assets = revision
            .assets
            .iter()
            .map(|a| {
                let bytes = examkit_bank::sample::ASSETS
                    .iter()
                    .find(|(path, _)| *path == a.file)
                    .map(|(_, bytes)| bytes.to_vec())
                    .expect("asset file");
                (a.id, bytes)
            })
            .collect();
        return PaperQuestion {
            question_id: id,
            revision,
            assets,
        };
    }
    panic!("question {id} is not in the sample bank");
}

pub fn paper(ids: &[&str]) -> PaperDocument {
    PaperDocument {
        paper_id: Uuid::parse_str("7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6").expect("uuid"),
        revision: 1,
        title: "Scan practice".to_owned(),
        writing_space: WritingSpace::Smart,
        grade_guide: false,
        questions: ids.iter().map(|id| sample_question(id)).collect(),
    }
}

/// A fresh folder for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("examkit-scanmaker")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// Renders the paper; writes `question-paper.pdf` and `layout.json` in `dir`.
pub fn render(paper: &PaperDocument, dir: &Path) -> (PathBuf, PathBuf, Layout) {
    let rendered = Renderer::new().question_paper(paper).expect("renders");
    let layout = rendered.layout.expect("layout");
    let pdf = dir.join("question-paper.pdf");
    std::fs::write(&pdf, &rendered.pdf).expect("write paper");
    let json = dir.join("layout.json");
    std::fs::write(&json, serde_json::to_string(&layout).expect("json")).expect("write layout");
    (pdf, json, layout)
}
