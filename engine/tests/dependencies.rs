//! The engine stays light: its normal (non-dev, non-build) dependency tree holds serde, serde_json,
//! thiserror, petgraph, uuid and their own small dependencies, and nothing of an async runtime, a
//! database driver, a language binding, an HTTP stack or a typesetter. The engine ships inside a
//! Python wheel and a WASM package, so every crate it pulls in is paid for on every surface.
//!
//! Two views of the tree are checked, because cargo resolves features in two ways:
//!
//! - The engine built on its own (as the Python and WASM packages build it), for every target:
//!   `cargo tree -p examkit-engine -e normal --target all`, which resolves features for the engine
//!   alone.
//! - The engine inside the whole workspace on this host (as the service and `cargo test` build
//!   it): the resolve graph of `cargo metadata`, walked over normal edges. Its features are unified
//!   across every workspace member (the service turns on uuid's `v4`, for instance), so for other
//!   targets it would list crates no build of the engine contains, such as uuid's wasm32-only
//!   `wasm-bindgen` edge; it is therefore filtered to the host platform.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

/// The engine's only direct normal dependencies.
const ALLOWED_DIRECT: &[&str] = &["serde", "serde_json", "thiserror", "petgraph", "uuid"];

/// Crates that must never be reachable from the engine over normal dependency edges.
const FORBIDDEN: &[&str] = &[
    "tokio",
    "sqlx",
    "pyo3",
    "wasm-bindgen",
    "js-sys",
    "warp",
    "hyper",
    "reqwest",
    "typst",
];

/// A ceiling on the engine's own tree over every target (the engine included). The allowed crates
/// and their dependencies (serde's and thiserror's derive macros, petgraph's hash maps) come to
/// about twenty; a jump past this means something heavy slipped in.
const MAX_OWN_TREE: usize = 30;

const ENGINE: &str = "examkit-engine";

fn workspace_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| String::from("cargo"))
}

/// Runs a cargo subcommand in the workspace, offline first (the lockfile and package cache are
/// normally present), then online when the offline attempt cannot resolve.
fn run_cargo(args: &[&str]) -> Vec<u8> {
    let mut attempts = Vec::new();
    for offline in [true, false] {
        let mut command = Command::new(cargo());
        command.current_dir(workspace_dir()).args(args);
        if offline {
            command.arg("--offline");
        }
        match command.output() {
            Ok(Output { status, stdout, .. }) if status.success() => return stdout,
            Ok(output) => attempts.push(format!(
                "cargo {}{} exited with {}: {}",
                args.join(" "),
                if offline { " --offline" } else { "" },
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            )),
            Err(e) => attempts.push(format!("cannot run {}: {e}", cargo())),
        }
    }
    panic!("cargo failed:\n{}", attempts.join("\n"));
}

/// The host's target triple, from `rustc -vV`.
fn host_triple() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| String::from("rustc"));
    let output = Command::new(&rustc)
        .arg("-vV")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {rustc} -vV: {e}"));
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("{rustc} -vV names no host:\n{text}"))
}

fn metadata(extra: &[&str]) -> Value {
    let mut args = vec!["metadata", "--format-version", "1"];
    args.extend_from_slice(extra);
    serde_json::from_slice(&run_cargo(&args))
        .unwrap_or_else(|e| panic!("cargo metadata printed something that is not JSON: {e}"))
}

/// The engine's package entry in `cargo metadata`.
fn engine_package(metadata: &Value) -> &Value {
    let matches: Vec<&Value> = metadata["packages"]
        .as_array()
        .expect("cargo metadata has packages")
        .iter()
        .filter(|p| p["name"] == ENGINE)
        .collect();
    assert_eq!(matches.len(), 1, "expected one {ENGINE} package");
    matches[0]
}

fn forbidden_among<'a>(names: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    names
        .into_iter()
        .filter(|name| FORBIDDEN.contains(&name.as_str()))
        .cloned()
        .collect()
}

#[test]
fn engine_declares_only_the_allowed_normal_dependencies() {
    let metadata = metadata(&["--no-deps"]);
    let declared: BTreeSet<String> = engine_package(&metadata)["dependencies"]
        .as_array()
        .expect("package dependencies")
        .iter()
        .filter(|dep| dep["kind"].is_null())
        .map(|dep| dep["name"].as_str().expect("dependency name").to_owned())
        .collect();
    let allowed: BTreeSet<String> = ALLOWED_DIRECT.iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(declared, allowed, "{ENGINE}'s normal dependencies changed");
}

/// `name version` of every package in the engine's own normal tree, over every target.
fn own_tree() -> BTreeSet<(String, String)> {
    let stdout = run_cargo(&[
        "tree", "-p", ENGINE, "-e", "normal", "--target", "all", "--prefix", "none", "--format",
        "{p}",
    ]);
    String::from_utf8_lossy(&stdout)
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            Some((words.next()?.to_owned(), words.next()?.to_owned()))
        })
        .collect()
}

#[test]
fn engine_own_tree_is_light_on_every_target() {
    let tree = own_tree();
    println!(
        "{} packages in {ENGINE}'s own normal tree (every target):",
        tree.len()
    );
    for (name, version) in &tree {
        println!("  {name} {version}");
    }
    assert!(
        tree.iter().any(|(name, _)| name == ENGINE),
        "cargo tree did not list {ENGINE}"
    );
    for name in ALLOWED_DIRECT {
        assert!(
            tree.iter().any(|(n, _)| n == name),
            "cargo tree did not list {name}"
        );
    }
    let names: BTreeSet<String> = tree.iter().map(|(name, _)| name.clone()).collect();
    let forbidden = forbidden_among(&names);
    assert!(
        forbidden.is_empty(),
        "heavy crates in {ENGINE}'s own tree: {forbidden:?}"
    );
    assert!(
        tree.len() <= MAX_OWN_TREE,
        "{} packages in {ENGINE}'s own tree (ceiling {MAX_OWN_TREE}); see the list above",
        tree.len()
    );
}

#[test]
fn engine_in_the_workspace_reaches_nothing_heavy_on_the_host() {
    let host = host_triple();
    let metadata = metadata(&["--filter-platform", &host]);
    let packages: BTreeMap<&str, (&str, &str)> = metadata["packages"]
        .as_array()
        .expect("cargo metadata has packages")
        .iter()
        .map(|p| {
            let field = |name: &str| p[name].as_str().expect("package field");
            (field("id"), (field("name"), field("version")))
        })
        .collect();
    // Normal edges of the resolve graph: dependencies with a kind-less (normal) entry among their
    // dep_kinds; dev and build edges are not followed.
    let edges: BTreeMap<&str, Vec<&str>> = metadata["resolve"]["nodes"]
        .as_array()
        .expect("cargo metadata has resolve.nodes")
        .iter()
        .map(|node| {
            let deps = node["deps"]
                .as_array()
                .expect("node deps")
                .iter()
                .filter(|dep| {
                    dep["dep_kinds"]
                        .as_array()
                        .expect("dep_kinds")
                        .iter()
                        .any(|k| k["kind"].is_null())
                })
                .map(|dep| dep["pkg"].as_str().expect("dep pkg"))
                .collect();
            (node["id"].as_str().expect("node id"), deps)
        })
        .collect();
    let root = engine_package(&metadata)["id"].as_str().expect("engine id");

    // Breadth-first, remembering how each package was reached so a failure can show the path.
    let mut reached_from: BTreeMap<&str, Option<&str>> = BTreeMap::from([(root, None)]);
    let mut queue = VecDeque::from([root]);
    while let Some(id) = queue.pop_front() {
        for dep in edges.get(id).into_iter().flatten() {
            if !reached_from.contains_key(dep) {
                reached_from.insert(dep, Some(id));
                queue.push_back(dep);
            }
        }
    }
    let name = |id: &str| {
        packages
            .get(id)
            .map_or(id.to_owned(), |(n, _)| (*n).to_owned())
    };
    let mut listing: Vec<String> = reached_from
        .keys()
        .map(|id| {
            packages
                .get(id)
                .map_or((*id).to_owned(), |(n, v)| format!("{n} {v}"))
        })
        .collect();
    listing.sort();
    println!(
        "{} packages reachable from {ENGINE} in the workspace on {host}:",
        listing.len()
    );
    for package in &listing {
        println!("  {package}");
    }

    let paths: Vec<String> = reached_from
        .keys()
        .filter(|id| FORBIDDEN.contains(&name(id).as_str()))
        .map(|id| {
            let mut chain = vec![name(id)];
            let mut at = reached_from.get(id).copied().flatten();
            while let Some(up) = at {
                chain.push(name(up));
                at = reached_from.get(up).copied().flatten();
            }
            chain.reverse();
            chain.join(" -> ")
        })
        .collect();
    assert!(
        paths.is_empty(),
        "heavy crates are reachable from {ENGINE}:\n{}",
        paths.join("\n")
    );
}
