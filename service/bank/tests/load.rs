//! Loading banks: the sample bank, and one invalid fixture per bad form (`tests/invalid/*/`), each
//! with the exact errors in its `expected.txt`. `check.py` must find the same files invalid, at the
//! same places.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use examkit_bank::{Status, load, sample};

fn here() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_sample_bank_loads_with_68_questions() {
    let bank = load(&here().join("sample")).unwrap_or_else(|errors| {
        panic!(
            "{}",
            errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        )
    });
    assert_eq!(bank.question_count(), 68);
    assert_eq!(bank.files.len(), 5);
    let names: Vec<&str> = bank.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "a-level-maths.json",
            "as-maths.json",
            "facets.json",
            "further-maths.json",
            "international.json"
        ]
    );
    let revisions: Vec<_> = bank
        .questions()
        .flat_map(|(_, _, q)| &q.revisions)
        .collect();
    let count = |s: Status| revisions.iter().filter(|r| r.status == s).count();
    assert_eq!(
        (
            count(Status::Published),
            count(Status::Withdrawn),
            count(Status::Draft)
        ),
        (70, 1, 1)
    );
    assert_eq!(bank.assets.len(), 5);
    assert!(
        bank.assets
            .values()
            .all(|a| a.media_type == "image/svg+xml" && a.sha256.len() == 64)
    );
    let facets = bank.facets();
    assert_eq!(facets.topic.len(), 28);
    assert_eq!(facets.subtopic.len(), 65);
}

#[test]
fn the_embedded_sample_is_the_sample_folder() {
    let folder = load(&here().join("sample")).expect("sample folder loads");
    let embedded = sample::load().expect("embedded sample loads");
    assert_eq!(folder, embedded);
    // Every file of the folder is embedded, so the binary's copy cannot fall behind.
    let mut on_disk: Vec<String> = std::fs::read_dir(here().join("sample"))
        .expect("sample folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    on_disk.sort();
    let embedded_names: Vec<&str> = sample::FILES.iter().map(|(n, _)| *n).collect();
    assert_eq!(on_disk, embedded_names);
    let assets: Vec<String> = std::fs::read_dir(here().join("sample/assets"))
        .expect("assets folder")
        .map(|e| format!("assets/{}", e.expect("entry").file_name().to_string_lossy()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let embedded_assets: Vec<&str> = sample::ASSETS.iter().map(|(n, _)| *n).collect();
    assert_eq!(assets, embedded_assets);
}

fn fixtures() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(here().join("tests/invalid"))
        .expect("fixtures folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn python() -> Option<&'static str> {
    Command::new("python3")
        .arg("--version")
        .output()
        .ok()
        .map(|_| "python3")
}

/// `file:/pointer` of each line `check.py` prints for a failing bank.
fn check_py_locations(dir: &Path) -> Option<BTreeSet<String>> {
    let python = python()?;
    let out = Command::new(python)
        .arg(here().join("check.py"))
        .arg("--quiet")
        .arg(dir)
        .output()
        .expect("check.py runs");
    assert_eq!(
        out.status.code(),
        Some(1),
        "check.py must reject {}",
        dir.display()
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    Some(
        stdout
            .lines()
            .filter(|l| !l.starts_with("FAILED") && !l.starts_with("The rules"))
            .filter_map(|l| l.split_once(": ").map(|(loc, _)| loc.to_owned()))
            .collect(),
    )
}

#[test]
fn every_invalid_fixture_reports_its_exact_errors() {
    let dirs = fixtures();
    assert!(dirs.len() >= 30, "the invalid fixtures are missing");
    let mut failures = Vec::new();
    for dir in &dirs {
        let name = dir
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let expected = std::fs::read_to_string(dir.join("expected.txt")).expect("expected.txt");
        let expected: Vec<&str> = expected.lines().collect();
        let errors = match load(dir) {
            Ok(_) => {
                failures.push(format!("{name}: loaded, but it is invalid"));
                continue;
            }
            Err(errors) => errors,
        };
        let got: Vec<String> = errors.iter().map(ToString::to_string).collect();
        if got != expected {
            failures.push(format!("{name}:\n  expected {expected:#?}\n  got {got:#?}"));
        }
        if let Some(located) = check_py_locations(dir) {
            let ours: BTreeSet<String> = if name.starts_with("parse-") {
                // check.py names the file only for parse errors.
                errors.iter().map(|e| format!("{}:/", e.file)).collect()
            } else {
                errors
                    .iter()
                    .map(|e| {
                        format!(
                            "{}:{}",
                            e.file,
                            if e.pointer.is_empty() {
                                "/"
                            } else {
                                &e.pointer
                            }
                        )
                    })
                    .collect()
            };
            if located != ours {
                failures.push(format!(
                    "{name}: check.py reports {located:?}, the loader {ours:?}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_missing_bank_and_an_empty_folder_are_errors() {
    let errors = load(Path::new("/nonexistent/bank")).expect_err("missing");
    assert_eq!(
        errors[0].to_string(),
        "/nonexistent/bank:/: no such file or folder"
    );
    let dir = tempfile::tempdir().expect("temp dir");
    let errors = load(dir.path()).expect_err("empty");
    assert_eq!(errors[0].message, "no *.json files in the bank folder");
}

#[cfg(unix)]
#[test]
fn an_asset_symlink_leaving_the_bank_folder_is_refused() {
    let outside = tempfile::tempdir().expect("temp dir");
    let svg = outside.path().join("x.svg");
    std::fs::copy(here().join("sample/assets/triangle-abc.svg"), &svg).expect("copy");
    let bank = tempfile::tempdir().expect("temp dir");
    let fixture = here().join("tests/invalid/rule10-missing-file/bank.json");
    let text = std::fs::read_to_string(fixture)
        .expect("fixture")
        .replace("assets/missing.svg", "assets/x.svg");
    std::fs::write(bank.path().join("bank.json"), text).expect("write");
    std::fs::create_dir(bank.path().join("assets")).expect("mkdir");
    std::os::unix::fs::symlink(&svg, bank.path().join("assets/x.svg")).expect("symlink");
    let errors = load(bank.path()).expect_err("escaping symlink");
    assert_eq!(
        errors[0].to_string(),
        "bank.json:/questions/0/revisions/0/assets/0/file: file lies outside the bank folder"
    );
    // A symlink that stays inside the folder is fine.
    std::fs::remove_file(bank.path().join("assets/x.svg")).expect("rm");
    std::fs::copy(&svg, bank.path().join("assets/real.svg")).expect("copy");
    std::os::unix::fs::symlink(
        bank.path().join("assets/real.svg"),
        bank.path().join("assets/x.svg"),
    )
    .expect("symlink");
    assert!(load(bank.path()).is_ok());
}
