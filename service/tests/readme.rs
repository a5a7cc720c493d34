//! The root README's "Import a marked paper with curl" section, run as written.
//!
//! The section's `sh` code blocks are extracted from `../README.md` and run, in order, as one
//! bash script from the repository root with `set -euo pipefail`. Only the environment differs
//! from a reader's shell, and only in documented ways:
//!
//! - the directory of the `examkit` binary built for this test comes first on `PATH`, so the
//!   commands' `examkit` is this build;
//! - `EXAMKIT_LISTEN` and `EXAMKIT_URL` name a free port on 127.0.0.1 instead of 8080, and
//!   `EXAMKIT_DATA_DIR` a temporary directory instead of `./data`;
//! - `DATABASE_URL` is removed, and background jobs are killed when the script exits.
//!
//! `EXAMKIT_README` points the test at another file (to check a draft of the section).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const HEADING: &str = "## Import a marked paper with curl";

/// The `sh` code blocks of the section under `HEADING`, up to the next `## ` heading.
fn section_blocks(readme: &str) -> Result<Vec<String>, String> {
    let mut lines = readme.lines();
    if !lines.any(|l| l.trim_end() == HEADING) {
        return Err(format!("README.md has no '{HEADING}' section"));
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
        return Err(format!("an sh block in '{HEADING}' is not closed"));
    }
    if blocks.is_empty() {
        return Err(format!("the '{HEADING}' section has no ```sh code block"));
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
        section_blocks(readme).expect("blocks"),
        ["one\ntwo", "three"]
    );
    assert_eq!(
        section_blocks("# nothing\n").expect_err("no section"),
        "README.md has no '## Import a marked paper with curl' section"
    );
}

#[test]
fn readme_curl_section_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme_path = std::env::var_os("EXAMKIT_README")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("README.md"));
    let readme = std::fs::read_to_string(&readme_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", readme_path.display()));
    let blocks = section_blocks(&readme).unwrap_or_else(|message| panic!("{message}"));
    let script = format!(
        "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n{}\n",
        blocks.join("\n")
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
        .current_dir(&root)
        .env("PATH", path)
        .env("EXAMKIT_LISTEN", format!("127.0.0.1:{port}"))
        .env("EXAMKIT_URL", format!("http://127.0.0.1:{port}"))
        .env("EXAMKIT_DATA_DIR", data.path())
        .env_remove("DATABASE_URL")
        .env_remove("EXAMKIT_KEY")
        .output()
        .expect("bash runs the README's commands");
    let out = String::from_utf8_lossy(&run.stdout);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "the README sequence failed ({})\nscript:\n{script}\nstdout:\n{out}\nstderr:\n{err}",
        run.status
    );
    assert!(started.elapsed() < Duration::from_secs(120));
    // It ran against this build, on the test's port and data directory.
    assert!(
        out.contains(&format!("listening on http://127.0.0.1:{port}")),
        "{out}"
    );
    assert!(
        data.path().join("examkit.db").exists(),
        "data in EXAMKIT_DATA_DIR"
    );
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
