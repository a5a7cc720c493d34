//! The shape of the code, checked so it stays as `docs/architecture.md` draws it: no two modules
//! of a crate import each other, through however many others (a circle), and functions stay short
//! enough to read, none long on a request path.
//!
//! The module graph is read from the source: a node per module file, an edge from a module to
//! each module its code names by path (`crate::…`, `super::…`, `self::…`, in a `use` or inline),
//! comments and string literals skipped. An edge between a module and its own parent or child is
//! not counted: a folder's `mod.rs` and its files are one room.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module's path within its crate (`["marking", "evidence"]`); the crate root is empty.
type ModPath = Vec<String>;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every module file under `src`, by its module path.
fn modules(src: &Path) -> BTreeMap<ModPath, PathBuf> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<ModPath, PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("a source folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(&path, src, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path
                    .strip_prefix(src)
                    .expect("under src")
                    .with_extension("");
                let mut segments: ModPath = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if matches!(
                    segments.last().map(String::as_str),
                    Some("mod" | "lib" | "main")
                ) {
                    segments.pop();
                }
                out.insert(segments, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Ident(String),
    Punct(&'static str),
}

/// The code's identifiers and the punctuation a path or a `use` tree is made of; comments, string
/// and character literals, lifetimes and every other character dropped.
fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('#') || next == Some('"')) && raw_string(&chars, i) {
            // r"…" or r#"…"#: skip to the closing quote and as many hashes.
            let mut j = i + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            j += 1;
            while j < chars.len() {
                if chars[j] == '"' && (1..=hashes).all(|k| chars.get(j + k) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            i = j;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == '\'' {
            // A character literal ('a', '\n', '\u{…}') or a lifetime ('a): both skipped.
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            // `$crate` in a macro names the crate a macro is expanded in, not a module here.
            if start > 0 && chars[start - 1] == '$' {
                continue;
            }
            out.push(Token::Ident(word));
        } else if c == ':' && next == Some(':') {
            out.push(Token::Punct("::"));
            i += 2;
        } else {
            let punct = match c {
                '{' => Some("{"),
                '}' => Some("}"),
                ',' => Some(","),
                ';' => Some(";"),
                '*' => Some("*"),
                '#' => Some("#"),
                '[' => Some("["),
                ']' => Some("]"),
                '(' => Some("("),
                ')' => Some(")"),
                _ => None,
            };
            if let Some(p) = punct {
                out.push(Token::Punct(p));
            }
            i += 1;
        }
    }
    out
}

/// Whether `r` at `i` opens a raw string rather than ending an identifier (`for` … `r"`).
fn raw_string(chars: &[char], i: usize) -> bool {
    let starts_word = i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
    let mut j = i + 1;
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    starts_word && chars.get(j) == Some(&'"')
}

fn ident(token: Option<&Token>) -> Option<&str> {
    match token {
        Some(Token::Ident(word)) => Some(word),
        _ => None,
    }
}

/// The paths of one `use` tree starting at `at`, each with `prefix` before it; returns where the
/// tree ends.
fn use_tree(tokens: &[Token], mut at: usize, prefix: Vec<String>, out: &mut Vec<ModPath>) -> usize {
    let mut path = prefix;
    loop {
        match tokens.get(at) {
            Some(Token::Ident(word)) if word == "as" => {
                out.push(path);
                return at + 2;
            }
            Some(Token::Ident(word)) => {
                if word != "self" || path.is_empty() {
                    path.push(word.clone());
                }
                at += 1;
                if tokens.get(at) == Some(&Token::Punct("::")) {
                    at += 1;
                    continue;
                }
                out.push(path);
                return at;
            }
            Some(Token::Punct("{")) => {
                at += 1;
                loop {
                    match tokens.get(at) {
                        Some(Token::Punct("}")) => return at + 1,
                        Some(Token::Punct(",")) => at += 1,
                        None => return at,
                        _ => {
                            let end = use_tree(tokens, at, path.clone(), out);
                            at = end.max(at + 1);
                        }
                    }
                }
            }
            Some(Token::Punct("*")) => {
                out.push(path);
                return at + 1;
            }
            _ => {
                out.push(path);
                return at;
            }
        }
    }
}

/// Every path the code names that starts at the crate or at a module relative to this one, each
/// resolved to a path from the crate root. `here` is the module of the file; inline modules
/// (`mod tests { use super::*; }`) are followed so that `super` means what it means there.
fn named_paths(tokens: &[Token], here: &ModPath) -> Vec<ModPath> {
    let mut raw: Vec<(ModPath, ModPath)> = Vec::new(); // (the module the path is written in, the path)
    let mut inline: Vec<(String, usize)> = Vec::new(); // inline modules open, with their depth
    let mut depth = 0usize;
    let mut at = 0;
    let current = |inline: &Vec<(String, usize)>| {
        let mut m = here.clone();
        m.extend(inline.iter().map(|(name, _)| name.clone()));
        m
    };
    while at < tokens.len() {
        match &tokens[at] {
            Token::Punct("{") => depth += 1,
            Token::Punct("}") => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            Token::Ident(word) if word == "mod" => {
                if let (Some(name), Some(Token::Punct("{"))) =
                    (ident(tokens.get(at + 1)), tokens.get(at + 2))
                {
                    inline.push((name.to_owned(), depth));
                }
            }
            Token::Ident(word) if word == "use" => {
                let mut paths = Vec::new();
                let end = use_tree(tokens, at + 1, Vec::new(), &mut paths);
                let module = current(&inline);
                raw.extend(paths.into_iter().map(|p| (module.clone(), p)));
                at = end;
                continue;
            }
            Token::Ident(word) if word == "crate" || word == "super" => {
                let previous = at.checked_sub(1).map(|p| &tokens[p]);
                if previous != Some(&Token::Punct("::")) {
                    let mut path = vec![word.clone()];
                    let mut j = at + 1;
                    while tokens.get(j) == Some(&Token::Punct("::")) {
                        match ident(tokens.get(j + 1)) {
                            Some(next) => path.push(next.to_owned()),
                            None => break,
                        }
                        j += 2;
                    }
                    raw.push((current(&inline), path));
                    at = j;
                    continue;
                }
            }
            _ => {}
        }
        at += 1;
    }
    raw.into_iter()
        .filter_map(|(module, path)| {
            let mut resolved = match path.first().map(String::as_str) {
                Some("crate") => Vec::new(),
                Some("super" | "self") => module,
                _ => return None,
            };
            let mut rest = path.iter().skip(usize::from(path[0] == "crate")).peekable();
            while let Some(segment) = rest.peek() {
                match segment.as_str() {
                    "super" => {
                        resolved.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                rest.next();
            }
            resolved.extend(rest.cloned());
            Some(resolved)
        })
        .collect()
}

/// The module graph of the crate whose source is `src`: for each module, the modules it names.
fn module_graph(src: &Path) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let files = modules(src);
    let mut graph = BTreeMap::new();
    for (module, file) in &files {
        let code = std::fs::read_to_string(file).expect("a source file");
        let mut targets = BTreeSet::new();
        for path in named_paths(&tokens(&code), module) {
            // The longest prefix that is a module file: `crate::store::Store` is `store`.
            let Some(target) = (0..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|prefix| files.contains_key(prefix))
            else {
                continue;
            };
            let related = target.starts_with(module) || module.starts_with(&target);
            if !related {
                targets.insert(target);
            }
        }
        graph.insert(module.clone(), targets);
    }
    graph
}

/// The strongly connected sets of more than one module (Tarjan's algorithm).
fn circles(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    struct State<'g> {
        graph: &'g BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'g ModPath, usize>,
        low: BTreeMap<&'g ModPath, usize>,
        stack: Vec<&'g ModPath>,
        on_stack: BTreeSet<&'g ModPath>,
        found: Vec<Vec<ModPath>>,
    }
    fn visit<'g>(state: &mut State<'g>, v: &'g ModPath) {
        let n = state.index.len();
        state.index.insert(v, n);
        state.low.insert(v, n);
        state.stack.push(v);
        state.on_stack.insert(v);
        for w in state.graph.get(v).into_iter().flatten() {
            let Some((w, _)) = state.graph.get_key_value(w) else {
                continue;
            };
            if !state.index.contains_key(w) {
                visit(state, w);
                let low = state.low[v].min(state.low[w]);
                state.low.insert(v, low);
            } else if state.on_stack.contains(w) {
                let low = state.low[v].min(state.index[w]);
                state.low.insert(v, low);
            }
        }
        if state.low[v] == state.index[v] {
            let mut set = Vec::new();
            while let Some(w) = state.stack.pop() {
                state.on_stack.remove(w);
                set.push(w.clone());
                if w == v {
                    break;
                }
            }
            if set.len() > 1 {
                set.sort();
                state.found.push(set);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    state.found
}

fn describe(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>, set: &[ModPath]) -> String {
    let mut lines = Vec::new();
    for from in set {
        for to in graph.get(from).into_iter().flatten() {
            if set.contains(to) {
                lines.push(format!("{} -> {}", from.join("::"), to.join("::")));
            }
        }
    }
    lines.join("\n  ")
}

const CRATES: &[&str] = &[
    "engine/src",
    "service/src",
    "service/bank/src",
    "service/pdf/src",
    "service/scan/src",
    "examples/scanmaker/src",
    "tests/fixtures/src",
    "bindings/python/src",
    "bindings/wasm/src",
];

#[test]
fn no_two_modules_of_a_crate_import_each_other_through_any_path() {
    let mut found = Vec::new();
    for krate in CRATES {
        let graph = module_graph(&workspace().join(krate));
        assert!(
            graph.contains_key(&ModPath::new()),
            "{krate}: its root was not found"
        );
        for set in circles(&graph) {
            found.push(format!("{krate}:\n  {}", describe(&graph, &set)));
        }
    }
    assert!(found.is_empty(), "circles:\n{}", found.join("\n"));
}

#[test]
fn the_checker_sees_a_circle_through_a_use_tree_an_inline_path_and_super() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let src = dir.path();
    std::fs::create_dir_all(src.join("a")).expect("a folder");
    let write = |name: &str, text: &str| std::fs::write(src.join(name), text).expect("a file");
    write("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n");
    write(
        "a/mod.rs",
        "pub mod inner;\nuse crate::{b::{self, Thing as T}};\n",
    );
    write("a/inner.rs", "fn f() { super::super::c::go(); }\n");
    write(
        "b.rs",
        "// use crate::c; a comment names nothing\nconst S: &str = \"crate::a\";\n",
    );
    write(
        "c.rs",
        "mod tests { use super::super::a::Other; }\nfn g() -> crate::b::X { todo!() }\n",
    );
    let graph = module_graph(src);
    let edge = |from: &str, to: &str| {
        let path = |s: &str| s.split("::").map(str::to_owned).collect::<ModPath>();
        graph[&path(from)].contains(&path(to))
    };
    assert!(
        edge("a", "b"),
        "a use tree with self and a rename: {graph:?}"
    );
    assert!(
        edge("a::inner", "c"),
        "an inline path through super: {graph:?}"
    );
    assert!(edge("c", "b"), "an inline path in a signature: {graph:?}");
    assert!(edge("c", "a"), "super inside an inline module: {graph:?}");
    assert!(
        !edge("b", "c") && !edge("b", "a"),
        "comments and strings: {graph:?}"
    );
    assert!(!edge("a::inner", "a"), "a child and its parent: {graph:?}");
    assert!(
        circles(&graph).is_empty(),
        "a -> b, c -> b, c -> a: no circle yet"
    );

    write("b.rs", "use crate::a::inner::Thing;\n");
    let graph = module_graph(src);
    let found = circles(&graph);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].iter().map(|m| m.join("::")).collect::<Vec<_>>(),
        ["a", "a::inner", "b", "c"].map(str::to_owned),
        "a -> b -> a::inner -> c -> a, though a and a::inner are parent and child"
    );
}

/// The functions of `file` (outside its tests) with their length in lines, as rustfmt lays them
/// out: from the `fn` line to the closing brace at the same indentation.
fn function_lengths(file: &Path) -> Vec<(String, usize)> {
    let text = std::fs::read_to_string(file).expect("a source file");
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let mut words = trimmed.split_whitespace().peekable();
        let mut name = None;
        while let Some(word) = words.next() {
            match word {
                w if w.starts_with("pub") => {}
                "async" | "const" | "unsafe" | "extern" | "\"C\"" => {}
                "fn" => {
                    name = words.peek().map(|n| {
                        n.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .next()
                            .unwrap_or_default()
                            .to_owned()
                    });
                    break;
                }
                _ => break,
            }
        }
        let Some(name) = name else { continue };
        // A declaration without a body (a trait's) ends in `;` before any `{`.
        let Some(open) = (i..lines.len()).find(|&j| {
            let l = lines[j].trim_end();
            l.ends_with('{') || l.ends_with(';')
        }) else {
            continue;
        };
        if lines[open].trim_end().ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(end) = (open + 1..lines.len()).find(|&j| lines[j] == close) {
            out.push((name, end - i + 1));
        }
    }
    out
}

/// Functions of 100 lines or more are few (at most 12 in the service) and none answers a
/// request: the HTTP adapters, the app's pages and the server's assembly are made of steps.
#[test]
fn long_functions_are_few_and_none_is_on_a_request_path() {
    let src = workspace().join("service/src");
    let mut long = Vec::new();
    for (module, file) in modules(&src) {
        if module.last().is_some_and(|m| m == "tests") {
            continue;
        }
        for (name, length) in function_lengths(&file) {
            if length >= 100 {
                long.push((module.join("::"), name, length));
            }
        }
    }
    let on_request_path: Vec<_> = long
        .iter()
        .filter(|(module, _, _)| {
            module.starts_with("http") || module.starts_with("app") || module == "server"
        })
        .collect();
    assert!(
        on_request_path.is_empty(),
        "on a request path: {on_request_path:?}"
    );
    assert!(
        long.len() <= 12,
        "{} functions of 100+ lines: {long:?}",
        long.len()
    );
}

#[test]
fn a_function_is_measured_from_its_fn_line_to_its_closing_brace() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("m.rs");
    let body = "        let x = 1;\n".repeat(5);
    let text = format!(
        "pub(crate) async fn first(\n    a: u8,\n) -> u8 {{\n{body}    a\n}}\n\n\
         trait T {{\n    fn declared(&self);\n}}\n\n\
         impl S {{\n    const fn second() {{\n    }}\n}}\n\n\
         #[cfg(test)]\nmod tests {{\n    fn not_counted() {{\n    }}\n}}\n"
    );
    std::fs::write(&file, text).expect("a file");
    assert_eq!(
        function_lengths(&file),
        [("first".to_owned(), 10), ("second".to_owned(), 2)]
    );
}
