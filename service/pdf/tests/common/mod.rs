//! Loading papers from the sample bank (`service/bank/sample`), shared by the tests, the example
//! and the benchmark.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use examkit_bank::{BankFile, Revision, Status};
use examkit_pdf::{PaperDocument, PaperQuestion, WritingSpace};
use uuid::Uuid;

/// The sample bank folder.
pub fn sample_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../bank/sample")
}

/// Every servable (published or withdrawn) revision of the sample bank, with its asset files, in
/// file-name then bank order.
pub fn sample_revisions() -> Vec<PaperQuestion> {
    let dir = sample_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("sample folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("json"))
        .filter(|p| p.file_name().and_then(|n| n.to_str()) != Some("facets.json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("read bank file");
        let bank: BankFile = serde_json::from_str(&text).expect("bank file");
        for q in bank.questions {
            for rev in q.revisions {
                if matches!(rev.status, Status::Published | Status::Withdrawn) {
                    out.push(paper_question(q.id, rev, &dir));
                }
            }
        }
    }
    out
}

fn paper_question(question_id: Uuid, revision: Revision, dir: &Path) -> PaperQuestion {
    let assets: BTreeMap<Uuid, Vec<u8>> = revision
        .assets
        .iter()
        .map(|a| (a.id, std::fs::read(dir.join(&a.file)).expect("asset file")))
        .collect();
    PaperQuestion {
        question_id,
        revision,
        assets,
    }
}

/// The latest servable revision of each sample question, in bank order.
pub fn latest_sample_questions() -> Vec<PaperQuestion> {
    let mut out: Vec<PaperQuestion> = Vec::new();
    for q in sample_revisions() {
        match out.iter_mut().find(|p| p.question_id == q.question_id) {
            Some(existing) if existing.revision.revision < q.revision.revision => *existing = q,
            Some(_) => {}
            None => out.push(q),
        }
    }
    out
}

/// A paper of the first `count` latest sample questions.
pub fn sample_paper(count: usize, writing_space: WritingSpace) -> PaperDocument {
    let questions: Vec<PaperQuestion> = latest_sample_questions().into_iter().take(count).collect();
    assert_eq!(
        questions.len(),
        count,
        "the sample bank has fewer than {count} questions"
    );
    PaperDocument {
        paper_id: Uuid::parse_str("3f2a9c1e-5b7d-4e8a-9c0f-1d2e3f4a5b6c").expect("uuid"),
        revision: 2,
        title: "Pure Mathematics Practice Paper".to_owned(),
        writing_space,
        grade_guide: true,
        questions,
    }
}

/// A paper of the latest sample questions at the given indices (bank order).
pub fn paper_of(indices: &[usize], writing_space: WritingSpace) -> PaperDocument {
    let all = latest_sample_questions();
    let questions = indices.iter().map(|&i| all[i].clone()).collect();
    PaperDocument {
        paper_id: Uuid::parse_str("0b7c2d4e-6f80-4a1b-8c3d-5e6f7a8b9c0d").expect("uuid"),
        revision: 3,
        title: "Mixed Practice Paper".to_owned(),
        writing_space,
        grade_guide: true,
        questions,
    }
}

/// Where tests keep the page images they make: `$CARGO_TARGET_DIR/examkit-pdf-artifacts`.
pub fn artifacts_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            // The test binary lives in <target>/<profile>/deps.
            let exe = std::env::current_exe().expect("test binary path");
            exe.ancestors().nth(3).expect("target folder").to_path_buf()
        });
    let dir = target.join("examkit-pdf-artifacts");
    std::fs::create_dir_all(&dir).expect("artifacts folder");
    dir
}

/// A fresh scratch folder for one test, under the artifacts folder (replaced on each run, so
/// nothing piles up and the files of a failed run can be inspected).
pub fn scratch(name: &str) -> PathBuf {
    let dir = artifacts_dir().join("scratch").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

fn run(cmd: &mut std::process::Command) -> Vec<u8> {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run {cmd:?}: {e} (install poppler-utils: apt-get install -y poppler-utils)")
    });
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The text of a PDF, as `pdftotext -layout` extracts it.
pub fn pdf_text(pdf: &[u8], dir: &Path, name: &str) -> String {
    let path = dir.join(format!("{name}.pdf"));
    std::fs::write(&path, pdf).expect("write pdf");
    let out = run(std::process::Command::new("pdftotext")
        .arg("-layout")
        .arg(&path)
        .arg("-"));
    String::from_utf8(out).expect("utf-8 text")
}

/// A greyscale page image.
pub struct Page {
    /// File of the rendering of this page (PNG; PGM from `gray_pages`).
    pub png: PathBuf,
    pub width: usize,
    pub height: usize,
    pub pixels: Vec<u8>,
}

impl Page {
    /// Pixels darker than mid grey.
    pub fn dark_pixels(&self) -> usize {
        self.pixels.iter().filter(|&&p| p < 128).count()
    }
}

/// Renders every page with `pdftoppm -r 60`: PNG files (kept in `dir`) and greyscale pixels.
pub fn pdf_pages(pdf: &[u8], dir: &Path, name: &str) -> Vec<Page> {
    let path = dir.join(format!("{name}.pdf"));
    std::fs::write(&path, pdf).expect("write pdf");
    let prefix = dir.join(name);
    run(std::process::Command::new("pdftoppm")
        .args(["-r", "60", "-png"])
        .arg(&path)
        .arg(&prefix));
    run(std::process::Command::new("pdftoppm")
        .args(["-r", "60", "-gray"])
        .arg(&path)
        .arg(&prefix));
    let mut pages = Vec::new();
    for n in 1.. {
        // pdftoppm pads page numbers to the width of the page count.
        let found = (1..=3).find_map(|w| {
            let stem = format!("{}-{:0w$}", prefix.display(), n, w = w);
            let pgm = PathBuf::from(format!("{stem}.pgm"));
            pgm.exists()
                .then(|| (PathBuf::from(format!("{stem}.png")), pgm))
        });
        let Some((png, pgm)) = found else { break };
        let (width, height, pixels) = read_pgm(&std::fs::read(&pgm).expect("read pgm"));
        pages.push(Page {
            png,
            width,
            height,
            pixels,
        });
    }
    pages
}

/// Renders every page with `pdftoppm -gray` at `dpi` (greyscale pixels only; the PGM files are
/// kept in `dir`).
pub fn gray_pages(pdf: &[u8], dir: &Path, name: &str, dpi: u32) -> Vec<Page> {
    let path = dir.join(format!("{name}.pdf"));
    std::fs::write(&path, pdf).expect("write pdf");
    let prefix = dir.join(name);
    run(std::process::Command::new("pdftoppm")
        .args(["-r", &dpi.to_string(), "-gray"])
        .arg(&path)
        .arg(&prefix));
    let mut pages = Vec::new();
    for n in 1.. {
        let found = (1..=3).find_map(|w| {
            let pgm = PathBuf::from(format!("{}-{:0w$}.pgm", prefix.display(), n, w = w));
            pgm.exists().then_some(pgm)
        });
        let Some(pgm) = found else { break };
        let (width, height, pixels) = read_pgm(&std::fs::read(&pgm).expect("read pgm"));
        pages.push(Page {
            png: pgm,
            width,
            height,
            pixels,
        });
    }
    pages
}

/// Parses a binary PGM (P5, 8-bit) file.
fn read_pgm(data: &[u8]) -> (usize, usize, Vec<u8>) {
    let mut fields = Vec::new();
    let mut i = 0;
    while fields.len() < 4 {
        while data[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while !data[i].is_ascii_whitespace() {
            i += 1;
        }
        fields.push(
            std::str::from_utf8(&data[start..i])
                .expect("header")
                .to_owned(),
        );
    }
    assert_eq!(fields[0], "P5", "binary greyscale PGM");
    assert_eq!(fields[3], "255", "8-bit PGM");
    let width: usize = fields[1].parse().expect("width");
    let height: usize = fields[2].parse().expect("height");
    let pixels = data[i + 1..].to_vec();
    assert_eq!(pixels.len(), width * height, "PGM size");
    (width, height, pixels)
}

/// A QR code found on a page image: its payload and its centre as fractions of the page.
pub struct Found {
    pub payload: String,
    pub centre: (f64, f64),
}

pub fn decode_codes(page: &Page) -> Vec<Found> {
    let mut image = rqrr::PreparedImage::prepare_from_greyscale(page.width, page.height, |x, y| {
        page.pixels[y * page.width + x]
    });
    image
        .detect_grids()
        .into_iter()
        .filter_map(|grid| {
            let (_, payload) = grid.decode().ok()?;
            let (sx, sy) = grid
                .bounds
                .iter()
                .fold((0.0, 0.0), |(sx, sy), p| (sx + p.x as f64, sy + p.y as f64));
            Some(Found {
                payload,
                centre: (sx / 4.0 / page.width as f64, sy / 4.0 / page.height as f64),
            })
        })
        .collect()
}
