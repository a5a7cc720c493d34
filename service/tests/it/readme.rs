//! The curl walkthroughs of `docs/walkthroughs.md`, "Import a marked paper with curl", "Search
//! the bank and build a paper with curl" and "Mark a completed scan with curl", and the
//! walkthrough `docs/marking-a-class.md` ("Marking a class with curl"), each run as written; and
//! every link of the README and of `docs/` leads somewhere.
//!
//! A section's `sh` code blocks are extracted from `../docs/walkthroughs.md` and run, in order, as one bash
//! script with `set -euo pipefail`: the import section from the repository root (it reads the
//! example files), the paper section from a temporary directory (it writes PDFs where it runs).
//! Only the environment differs from a reader's shell, and only in documented ways:
//!
//! - the directory of the `examkit` binary built for this test comes first on `PATH`, so the
//!   commands' `examkit` is this build;
//! - `EXAMKIT_LISTEN` and `EXAMKIT_URL` name a free port on 127.0.0.1 instead of 8080, and
//!   `EXAMKIT_DATA_DIR` a temporary directory instead of `./data`;
//! - `DATABASE_URL` is removed, and background jobs are killed when the script exits;
//! - the marking section's `cargo install --path examples/scanmaker` line is left out: the
//!   `examkit-scanmaker` built beside this test's `examkit` is on `PATH` instead (build it with
//!   `cargo build -p examkit-scanmaker`; `cargo test` of the workspace does).
//!
//! `EXAMKIT_README` points the test at another file (to check a draft of the section).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const IMPORT: &str = "## Import a marked paper with curl";
const PAPERS: &str = "## Search the bank and build a paper with curl";
const MARKING: &str = "## Mark a completed scan with curl";
const CLASS: &str = "## Marking a class with curl";
const INSTALL_SCANMAKER: &str = "cargo install --path examples/scanmaker --locked";

/// The `sh` code blocks of the section under `heading`, up to the next `## ` heading.
fn section_blocks(readme: &str, heading: &str) -> Result<Vec<String>, String> {
    let mut lines = readme.lines();
    if !lines.any(|l| l.trim_end() == heading) {
        return Err(format!("README.md has no '{heading}' section"));
    }
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in lines {
        match &mut current {
            None if line.starts_with("## ") => break,
            None if line.trim_end() == "```sh" => current = Some(Vec::new()),
            None => {}
            Some(block) if line.trim_end() == "```" => {
                blocks.push(block.join("\n"));
                current = None;
            }
            Some(block) => block.push(line),
        }
    }
    if current.is_some() {
        return Err(format!("an sh block in '{heading}' is not closed"));
    }
    if blocks.is_empty() {
        return Err(format!("the '{heading}' section has no ```sh code block"));
    }
    Ok(blocks)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

#[test]
fn extraction_finds_only_the_sections_sh_blocks() {
    let readme = "# x\n```sh\nbefore\n```\n## Import a marked paper with curl\ntext\n```sh\none\ntwo\n```\n```json\n{}\n```\n```sh\nthree\n```\n## Next\n```sh\nafter\n```\n";
    assert_eq!(
        section_blocks(readme, IMPORT).expect("blocks"),
        ["one\ntwo", "three"]
    );
    assert_eq!(
        section_blocks("# nothing\n", IMPORT).expect_err("no section"),
        "README.md has no '## Import a marked paper with curl' section"
    );
}

/// Runs the `sh` blocks of the README section under `heading` as one script in `cwd`; panics
/// with the script and its output when it fails. Returns what it printed.
fn run_section(heading: &str, cwd: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme_path = std::env::var_os("EXAMKIT_README")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("docs/walkthroughs.md"));
    run_section_of(&readme_path, heading, cwd)
}

/// Runs the `sh` blocks of the section under `heading` of the Markdown file `readme_path`, as
/// [`run_section`] does the README's.
fn run_section_of(readme_path: &Path, heading: &str, cwd: &Path) -> String {
    let readme = std::fs::read_to_string(readme_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", readme_path.display()));
    let blocks = section_blocks(&readme, heading).unwrap_or_else(|message| panic!("{message}"));
    let commands: Vec<&str> = blocks
        .iter()
        .flat_map(|b| b.lines())
        .filter(|l| !l.trim_start().starts_with(INSTALL_SCANMAKER))
        .collect();
    let script = format!(
        "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n{}\n",
        commands.join("\n")
    );

    let binary = PathBuf::from(env!("CARGO_BIN_EXE_examkit"));
    let bin_dir = binary.parent().expect("the binary's directory");
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("PATH");
    let data = tempfile::tempdir().expect("temp dir");
    let port = free_port();

    let started = Instant::now();
    let run = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(cwd)
        .env("PATH", path)
        .env("EXAMKIT_LISTEN", format!("127.0.0.1:{port}"))
        .env("EXAMKIT_URL", format!("http://127.0.0.1:{port}"))
        .env("EXAMKIT_DATA_DIR", data.path())
        .env_remove("DATABASE_URL")
        .env_remove("EXAMKIT_KEY")
        .output()
        .expect("bash runs the README's commands");
    let out = String::from_utf8_lossy(&run.stdout).into_owned();
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "the README sequence failed ({})\nscript:\n{script}\nstdout:\n{out}\nstderr:\n{err}",
        run.status
    );
    assert!(started.elapsed() < Duration::from_secs(600));
    // It ran against this build, on the test's port and data directory.
    assert!(
        out.contains(&format!("listening on http://127.0.0.1:{port}")),
        "{out}"
    );
    assert!(
        data.path().join("examkit.db").exists(),
        "data in EXAMKIT_DATA_DIR"
    );
    out
}

#[test]
fn readme_import_section_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = run_section(IMPORT, &root);
    assert!(
        out.contains("\"name\":\"Example School\""),
        "GET /v1/me: {out}"
    );
    assert!(
        out.contains("\"valid\":true"),
        "validate and complete: {out}"
    );
    assert!(
        out.contains("\"status\":\"completed\""),
        "the session is completed: {out}"
    );
}

#[test]
fn readme_papers_section_runs_as_written() {
    let cwd = tempfile::tempdir().expect("temp dir");
    let out = run_section(PAPERS, cwd.path());
    assert!(out.contains("\"subtopic\""), "the facets: {out}");
    assert!(out.contains("\"nextCursor\""), "a search: {out}");
    assert!(out.contains("\"revision\":1"), "the paper saved: {out}");
    assert!(out.contains("\"revision\":2"), "the paper changed: {out}");
    assert_eq!(
        out.matches("\"ready\":true").count(),
        2,
        "both revisions prepared: {out}"
    );
    for revision in [1, 2] {
        for kind in ["question-paper", "mark-scheme"] {
            let pdf = cwd.path().join(format!("paper-r{revision}-{kind}.pdf"));
            let bytes = std::fs::read(&pdf)
                .unwrap_or_else(|e| panic!("{} was not written: {e}", pdf.display()));
            assert!(bytes.starts_with(b"%PDF-"), "{} is a PDF", pdf.display());
        }
    }
}

#[test]
fn readme_marking_section_runs_as_written() {
    let scanmaker = PathBuf::from(env!("CARGO_BIN_EXE_examkit"))
        .with_file_name(format!("examkit-scanmaker{}", std::env::consts::EXE_SUFFIX));
    assert!(
        scanmaker.exists(),
        "{} is missing: build it with `cargo build -p examkit-scanmaker`",
        scanmaker.display()
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = run_section(MARKING, &root);
    // The indexing result shows each page's questions, found by the page code.
    assert!(out.contains("work page 2: work, turned 180"), "{out}");
    assert!(out.contains("found by ['pageCode']"), "{out}");
    // Every question reached a terminal status with located results, and one was reviewed.
    for label in ["1", "2", "3"] {
        assert!(
            out.contains(&format!("question {label}: completed"))
                || out.contains(&format!("question {label}: needs_review")),
            "{out}"
        );
    }
    assert!(
        out.contains("\"revision\":2"),
        "the review saved revision 2: {out}"
    );
}

#[test]
fn class_walkthrough_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = run_section_of(&root.join("docs/marking-a-class.md"), CLASS, &root);
    // The stack: Ada's scan and Alan's photos placed, the second scan of Ada's first page in
    // conflict until a person chose, Grace absent.
    assert!(
        out.contains("ada.pdf page 1: conflict copy 1 page 1"),
        "{out}"
    );
    assert!(
        out.contains("ada-again-1.jpg page 1: conflict copy 1 page 1"),
        "{out}"
    );
    assert!(
        out.contains("alan-2.jpg page 1: placed copy 2 page 2"),
        "{out}"
    );
    assert!(out.contains("copy 1: incomplete [1]"), "{out}");
    assert!(out.contains("copy 2: complete"), "{out}");
    assert!(out.contains("copy 3: absent"), "{out}");
    assert!(out.contains("\"notChosen\": 1"), "the choice: {out}");
    // Two scripts marked, each named as printed; every question ended.
    assert!(
        out.contains("copy 1 Ada Lovelace (printed): marked"),
        "{out}"
    );
    assert!(
        out.contains("copy 2 Alan Turing (printed): marked"),
        "{out}"
    );
    assert!(
        !out.contains("copy 3 "),
        "no script for the absent copy: {out}"
    );
    // The markbook: a row per roster student, Grace absent.
    assert!(
        out.contains(
            r#""Student","Candidate number","Copy","Q1","Q2","Q3","Total","Percentage","Status""#
        ),
        "{out}"
    );
    assert!(out.contains(r#""Maximum",,,"#), "{out}");
    assert!(
        out.contains(r#""Grace Hopper","0003",3,"ABS","ABS","ABS","ABS",,"absent""#),
        "{out}"
    );
    assert!(out.contains(r#""Ada Lovelace","0001",1,"#), "{out}");
    assert!(
        out.contains(r#""Student","Candidate number","Copy","Question","Part","Criterion id""#),
        "{out}"
    );
    assert!(out.contains("question 1: mean "), "{out}");
    // The marked scripts: the final PDF made, or refused naming what needs review; drafts for
    // both students who sat.
    assert!(
        out.contains("final PDF: 200") || out.contains("refused: scripts_not_final: "),
        "{out}"
    );
    assert!(out.contains("in the zip: Ada Lovelace.pdf"), "{out}");
    assert!(out.contains("in the zip: Alan Turing.pdf"), "{out}");
    assert!(
        !out.contains("in the zip: Grace"),
        "no script for the absent: {out}"
    );
    for label in ["1", "2", "3"] {
        assert_eq!(
            out.matches(&format!("question {label}: completed")).count()
                + out
                    .matches(&format!("question {label}: needs_review"))
                    .count(),
            2,
            "question {label} of both scripts: {out}"
        );
    }
}

/// Every path `docs/architecture.md` names in backticks (a file or folder of the repository)
/// exists, so the map stays true as modules move.
#[test]
fn the_architecture_names_only_modules_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(root.join("docs/architecture.md")).expect("the page");
    let named: Vec<&str> = text
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| {
            quoted.contains('/')
                && !quoted.contains(' ')
                && !quoted.starts_with("/v1")
                && (quoted.ends_with('/') || quoted.ends_with(".rs"))
        })
        .collect();
    assert!(
        named.len() > 20,
        "only {} paths named: {named:?}",
        named.len()
    );
    let missing: Vec<&&str> = named.iter().filter(|p| !root.join(p).exists()).collect();
    assert!(missing.is_empty(), "named but missing: {missing:?}");
}

/// The slug GitHub gives a heading: lower case, spaces as hyphens, other punctuation dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every relative link of the README and of `docs/` names a file that exists, and, where it
/// names a heading (`file.md#heading`, or `#heading` in the same file), a heading of that file.
#[test]
fn every_link_of_the_readme_and_the_docs_leads_somewhere() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).expect("docs/") {
        let path = entry.expect("an entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let headings = |path: &Path| -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with('#'))
            .map(|l| slug(l.trim_start_matches('#')))
            .collect()
    };
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).expect("the page");
        let mut rest = text.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = &rest[..end];
            if target.contains("://") || target.starts_with('<') || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let file = if file.is_empty() {
                page.clone()
            } else {
                page.parent().expect("a folder").join(file)
            };
            if !file.exists() {
                broken.push(format!("{}: {target} (no such file)", page.display()));
            } else if !anchor.is_empty() && !headings(&file).iter().any(|h| h == anchor) {
                broken.push(format!("{}: {target} (no such heading)", page.display()));
            }
        }
    }
    assert!(checked > 30, "only {checked} links checked");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
