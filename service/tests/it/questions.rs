//! The question routes end to end on the sample bank, SQLite and PostgreSQL: facets, search
//! (every parameter, filters, text, pagination, cursors, random samples), revision reads and
//! diagram downloads. Expectations are computed from the sample bank's JSON files.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::{Db, Server, generous, start};
use examkit::auth::Scope;
use examkit::store::Store;
use examkit::store::search::{PageRequest, SearchFilters, query_words};
use serde_json::Value;

const SAMPLE_FILES: [&str; 5] = [
    "a-level-maths.json",
    "as-maths.json",
    "facets.json",
    "further-maths.json",
    "international.json",
];

fn sample_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bank/sample")
}

/// The sample bank as written: facets and, per question, all its revisions.
struct Sample {
    facets: Value,
    questions: Vec<Value>,
}

impl Sample {
    fn read() -> Sample {
        let mut facets = serde_json::json!({});
        let mut questions = Vec::new();
        for name in SAMPLE_FILES {
            let text = std::fs::read_to_string(sample_dir().join(name)).expect("sample file");
            let file: Value = serde_json::from_str(&text).expect("json");
            if let Some(f) = file.get("facets").and_then(Value::as_object) {
                for (kind, options) in f {
                    let list = facets
                        .as_object_mut()
                        .expect("object")
                        .entry(kind.clone())
                        .or_insert_with(|| Value::Array(Vec::new()));
                    for option in options.as_array().expect("options") {
                        let list = list.as_array_mut().expect("array");
                        if !list.iter().any(|o| o["id"] == option["id"]) {
                            list.push(option.clone());
                        }
                    }
                }
            }
            questions.extend(file["questions"].as_array().expect("questions").clone());
        }
        Sample { facets, questions }
    }

    /// Each question's latest published revision, by question id.
    fn served(&self) -> BTreeMap<String, Value> {
        self.questions
            .iter()
            .filter_map(|q| {
                let latest = q["revisions"]
                    .as_array()
                    .expect("revisions")
                    .iter()
                    .rev()
                    .find(|r| r["status"] == "published")?;
                Some((q["id"].as_str().expect("id").to_owned(), latest.clone()))
            })
            .collect()
    }

    /// Ids of served questions whose latest published revision satisfies `f`.
    fn ids(&self, f: impl Fn(&Value) -> bool) -> BTreeSet<String> {
        self.served()
            .into_iter()
            .filter(|(_, r)| f(r))
            .map(|(id, _)| id)
            .collect()
    }
}

fn sources(r: &Value) -> &Vec<Value> {
    r["sources"].as_array().expect("sources")
}

fn has(list: &Value, value: &str) -> bool {
    list.as_array()
        .expect("array")
        .iter()
        .any(|v| v.as_str() == Some(value))
}

/// Loads the sample bank with the bank importer, which indexes what it writes.
async fn load_sample(s: &Server) {
    s.store
        .import_sample_bank()
        .await
        .expect("import the sample bank");
    assert_eq!(s.store.bank_question_count().await.expect("count"), 68);
}

/// A server with the sample bank and a key holding every scope.
async fn setup(db: Db) -> (Server, String, String) {
    let s = start(db, generous()).await;
    load_sample(&s).await;
    let user = s.user("Searcher").await;
    let key = s.key(&user, Scope::ALL).await;
    (s, user, key)
}

/// Every question id of a search, following cursors to the end; asserts no id repeats.
async fn all_ids(s: &Server, key: &str, query: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..200 {
        let mut path = format!("/v1/questions?limit=100&{query}");
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let resp = s.get(&path, key).await;
        assert_eq!(
            resp.status,
            200,
            "{path}: {}",
            String::from_utf8_lossy(&resp.body)
        );
        let body = resp.json();
        for item in body["items"].as_array().expect("items") {
            ids.push(item["pin"]["questionId"].as_str().expect("id").to_owned());
        }
        match body["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => {
                let unique: BTreeSet<_> = ids.iter().collect();
                assert_eq!(unique.len(), ids.len(), "no repeats: {query}");
                return ids;
            }
        }
    }
    panic!("no end of results for {query}");
}

async fn id_set(s: &Server, key: &str, query: &str) -> BTreeSet<String> {
    all_ids(s, key, query).await.into_iter().collect()
}

on_both!(
    facets_list_the_bank_options_with_counts,
    bad_parameters_are_each_reported,
    filters_filter,
    text_search_finds_titles_and_metadata,
    text_results_come_title_matches_first,
    words_that_are_not_indexed_are_dropped,
    a_short_walk_finds_the_same_pages,
    pages_walk_every_result_once,
    cursors_are_bound_to_filters_accounts_and_time,
    random_samples,
    exclusions_and_favourites,
    only_latest_published_revisions_are_searched,
    revisions_are_read_by_pin,
    diagrams_download,
    scopes_are_required,
);

async fn facets_list_the_bank_options_with_counts(db: Db) {
    let (s, _, key) = setup(db).await;
    let sample = Sample::read();
    let served = sample.served();
    let resp = s.get("/v1/questions/facets", &key).await;
    assert_eq!(resp.status, 200);
    let body = resp.json();
    for kind in ["course", "board", "module", "topic", "subtopic"] {
        let declared = sample.facets[kind].as_array().expect("declared");
        let listed = body[kind].as_array().expect("listed");
        assert_eq!(listed.len(), declared.len(), "{kind}");
        for (option, declared) in listed.iter().zip(declared) {
            assert_eq!(option["value"], declared["id"], "{kind} in display order");
            assert_eq!(option["label"], declared["label"]);
            let id = declared["id"].as_str().expect("id");
            let expected = served
                .values()
                .filter(|r| match kind {
                    "course" => sources(r).iter().any(|s| {
                        format!(
                            "{}-{}",
                            s["level"].as_str().expect("level"),
                            s["subject"].as_str().expect("subject")
                        ) == id
                    }),
                    "board" => sources(r).iter().any(|s| s["board"] == id),
                    "module" => has(&r["moduleProfiles"], id),
                    _ => r[kind] == id,
                })
                .count();
            assert_eq!(option["count"], expected, "{kind} {id}");
            match kind {
                "subtopic" => assert_eq!(option["topic"], declared["topic"]),
                "course" => {
                    assert_eq!(option["level"], declared["level"]);
                    assert_eq!(option["subject"], declared["subject"]);
                }
                _ => assert!(option.get("topic").is_none() && option.get("level").is_none()),
            }
        }
    }
}

async fn bad_parameters_are_each_reported(db: Db) {
    let (s, _, key) = setup(db).await;
    let long = |n: usize| "a".repeat(n);
    let mut too_many = String::new();
    for i in 0..1001 {
        too_many.push_str(&format!("&excludeIds=00000000-0000-4000-8000-{i:012}"));
    }
    let cases: Vec<(String, &str, &str)> = vec![
        ("q=".into(), "q", "min_length"),
        (format!("q={}", long(161)), "q", "max_length"),
        ("q=a&q=b".into(), "q", "repeated_parameter"),
        ("module=".into(), "module", "min_length"),
        (format!("module={}", long(121)), "module", "max_length"),
        ("board=".into(), "board", "min_length"),
        (format!("board={}", long(121)), "board", "max_length"),
        ("tag=".into(), "tag", "min_length"),
        (format!("tag={}", long(121)), "tag", "max_length"),
        ("topic=".into(), "topic", "min_length"),
        (format!("topic={}", long(121)), "topic", "max_length"),
        ("subtopic=".into(), "subtopic", "min_length"),
        (format!("subtopic={}", long(121)), "subtopic", "max_length"),
        ("level=gcse".into(), "level", "enum"),
        ("level=A-LEVEL".into(), "level", "enum"),
        ("subject=physics".into(), "subject", "enum"),
        ("frequency=often".into(), "frequency", "enum"),
        ("year=1899".into(), "year", "minimum"),
        ("year=2101".into(), "year", "maximum"),
        ("year=twenty".into(), "year", "type"),
        ("year=2019.5".into(), "year", "type"),
        ("difficulty=0".into(), "difficulty", "minimum"),
        ("difficulty=6".into(), "difficulty", "maximum"),
        ("difficulty=".into(), "difficulty", "type"),
        ("minMarks=-1".into(), "minMarks", "minimum"),
        ("minMarks=101".into(), "minMarks", "maximum"),
        ("maxMarks=-1".into(), "maxMarks", "minimum"),
        ("maxMarks=101".into(), "maxMarks", "maximum"),
        ("maxMarks=x".into(), "maxMarks", "type"),
        ("minMarks=8&maxMarks=7".into(), "minMarks", "range"),
        ("excludeIds=42".into(), "excludeIds", "format"),
        (too_many, "excludeIds", "max_items"),
        ("random=1".into(), "random", "type"),
        ("random=TRUE".into(), "random", "type"),
        ("favouritesOnly=yes".into(), "favouritesOnly", "type"),
        ("favouritesOnly=".into(), "favouritesOnly", "type"),
        ("cursor=abc".into(), "cursor", "format"),
        (
            "cursor=6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f".into(),
            "cursor",
            "cursor_unknown",
        ),
        (
            "random=true&cursor=6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f".into(),
            "cursor",
            "conflict",
        ),
        ("limit=0".into(), "limit", "minimum"),
        ("limit=101".into(), "limit", "maximum"),
        ("limit=ten".into(), "limit", "type"),
        ("limit=5&limit=5".into(), "limit", "repeated_parameter"),
        ("board=aqa&board=ocr".into(), "board", "repeated_parameter"),
        ("colour=blue".into(), "colour", "unknown_parameter"),
        ("Limit=5".into(), "Limit", "unknown_parameter"),
    ];
    for (query, field, code) in cases {
        let resp = s.get(&format!("/v1/questions?{query}"), &key).await;
        let body = resp.assert_error(422, "invalid_parameters");
        let errors = body["error"]["details"]["errors"]
            .as_array()
            .expect("details.errors");
        assert!(
            errors
                .iter()
                .any(|e| e["path"] == field && e["code"] == code && e["message"].is_string()),
            "{query}: expected {field} {code}, got {errors:?}"
        );
    }
    // Several problems at once are all reported.
    let body = s
        .get("/v1/questions?limit=0&year=3000&shape=round", &key)
        .await
        .assert_error(422, "invalid_parameters");
    let paths: BTreeSet<&str> = body["error"]["details"]["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| e["path"].as_str().expect("path"))
        .collect();
    assert_eq!(paths, BTreeSet::from(["limit", "year", "shape"]));
    // The longest accepted values are accepted.
    let ok = s
        .get(
            &format!(
                "/v1/questions?q={}&board={}&limit=100",
                "x".repeat(160),
                long(120)
            ),
            &key,
        )
        .await;
    assert_eq!(ok.status, 200);
    assert_eq!(ok.json()["items"], serde_json::json!([]));
}

async fn filters_filter(db: Db) {
    let (s, _, key) = setup(db).await;
    let sample = Sample::read();
    let served = sample.served();
    assert_eq!(id_set(&s, &key, "").await, sample.ids(|_| true));
    assert_eq!(served.len(), 68);
    // One value of each attribute from the bank itself; the most common, so the filter matters.
    let common = |values: Vec<String>| -> String {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for v in values {
            *counts.entry(v).or_default() += 1;
        }
        counts
            .into_iter()
            .max_by_key(|(_, n)| *n)
            .map(|(v, _)| v)
            .expect("a value")
    };
    let strings = |f: &dyn Fn(&Value) -> Vec<String>| -> Vec<String> {
        served.values().flat_map(f).collect()
    };
    let board = common(strings(&|r| {
        sources(r)
            .iter()
            .map(|s| s["board"].as_str().expect("b").to_owned())
            .collect()
    }));
    let module = common(strings(&|r| {
        r["moduleProfiles"]
            .as_array()
            .expect("m")
            .iter()
            .map(|m| m.as_str().expect("m").to_owned())
            .collect()
    }));
    let tag = common(strings(&|r| {
        r["tags"]
            .as_array()
            .expect("t")
            .iter()
            .map(|m| m.as_str().expect("t").to_owned())
            .collect()
    }));
    let topic = common(strings(&|r| {
        vec![r["topic"].as_str().expect("t").to_owned()]
    }));
    let subtopic = common(strings(&|r| {
        vec![r["subtopic"].as_str().expect("s").to_owned()]
    }));
    let year = common(strings(&|r| {
        sources(r).iter().map(|s| s["year"].to_string()).collect()
    }));
    let cases: Vec<(String, BTreeSet<String>)> = vec![
        (
            format!("board={board}"),
            sample.ids(|r| sources(r).iter().any(|s| s["board"] == board.as_str())),
        ),
        (
            format!("module={module}"),
            sample.ids(|r| has(&r["moduleProfiles"], &module)),
        ),
        (format!("tag={tag}"), sample.ids(|r| has(&r["tags"], &tag))),
        (
            format!("topic={topic}"),
            sample.ids(|r| r["topic"] == topic.as_str()),
        ),
        (
            format!("subtopic={subtopic}"),
            sample.ids(|r| r["subtopic"] == subtopic.as_str()),
        ),
        (
            format!("year={year}"),
            sample.ids(|r| {
                sources(r)
                    .iter()
                    .any(|s| s["year"].as_i64() == year.parse::<i64>().ok())
            }),
        ),
        (
            "level=international-a-level".into(),
            sample.ids(|r| {
                sources(r)
                    .iter()
                    .any(|s| s["level"] == "international-a-level")
            }),
        ),
        (
            "subject=further-maths".into(),
            sample.ids(|r| sources(r).iter().any(|s| s["subject"] == "further-maths")),
        ),
        ("difficulty=2".into(), sample.ids(|r| r["difficulty"] == 2)),
        (
            "frequency=occasional".into(),
            sample.ids(|r| r["frequency"] == "occasional"),
        ),
        (
            "minMarks=7".into(),
            sample.ids(|r| r["marks"].as_i64().expect("marks") >= 7),
        ),
        (
            "maxMarks=5".into(),
            sample.ids(|r| r["marks"].as_i64().expect("marks") <= 5),
        ),
        (
            "minMarks=6&maxMarks=6".into(),
            sample.ids(|r| r["marks"] == 6),
        ),
        (
            format!("board={board}&subject=maths&minMarks=6"),
            sample.ids(|r| {
                sources(r).iter().any(|s| s["board"] == board.as_str())
                    && sources(r).iter().any(|s| s["subject"] == "maths")
                    && r["marks"].as_i64().expect("marks") >= 6
            }),
        ),
        ("board=no-such-board".into(), BTreeSet::new()),
        ("year=1900".into(), BTreeSet::new()),
    ];
    for (query, expected) in cases {
        let found = id_set(&s, &key, &query).await;
        assert_eq!(found, expected, "{query}");
        if !query.contains("no-such") && !query.contains("1900") {
            assert!(
                !found.is_empty() && found.len() < served.len(),
                "{query} narrows the bank: {}",
                found.len()
            );
        }
    }
    // Items carry the pin, the summary, the sources and the module profiles of the revision.
    let body = s
        .get(&format!("/v1/questions?tag={tag}&limit=1"), &key)
        .await
        .json();
    let item = &body["items"][0];
    let id = item["pin"]["questionId"].as_str().expect("id");
    let r = &served[id];
    for field in [
        "title",
        "summary",
        "marks",
        "difficulty",
        "frequency",
        "topic",
        "subtopic",
        "tags",
        "sources",
        "moduleProfiles",
    ] {
        assert_eq!(item[field], r[field], "{field}");
    }
    assert_eq!(item["pin"]["revision"], r["revision"]);
    for version in ["contentVersion", "schemeVersion"] {
        let v = item["pin"][version].as_str().expect("version");
        assert!(
            v.len() == 64
                && v.bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
    }
}

async fn text_search_finds_titles_and_metadata(db: Db) {
    let (s, _, key) = setup(db).await;
    let sample = Sample::read();
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    // A distinctive title word: the title's longest word.
    let newton = sample
        .ids(|r| r["title"].as_str().expect("t").contains("Newton-Raphson"))
        .into_iter()
        .next()
        .expect("the Newton-Raphson question");
    let found = all_ids(&s, &key, "q=newton").await;
    assert!(found.contains(&newton), "title word");
    let found = all_ids(&s, &key, "q=Newton%20Raphson").await;
    assert_eq!(
        found.first(),
        Some(&newton),
        "both title words rank it first"
    );
    // Prefixes and stems: "newt" (a prefix), "iteration" and "iterating" (other forms of the
    // title's "iterations") all find it.
    for q in ["newt", "iteration", "iterating", "NEWTON"] {
        assert!(
            all_ids(&s, &key, &format!("q={q}")).await.contains(&newton),
            "{q}"
        );
    }
    // Every match contains each word (stemmed prefix) in its title, summary or metadata, and
    // every question whose title holds the word is found.
    let circle_titles =
        sample.ids(|r| words(r["title"].as_str().expect("t")).contains(&"circle".into()));
    assert!(!circle_titles.is_empty());
    let found: BTreeSet<String> = all_ids(&s, &key, "q=circle").await.into_iter().collect();
    assert!(
        circle_titles.is_subset(&found),
        "{circle_titles:?} within {found:?}"
    );
    // Metadata: a subtopic label, and a tag, that no title or summary uses.
    let facets = s.get("/v1/questions/facets", &key).await.json();
    let served = sample.served();
    let mut checked = 0;
    for option in facets["subtopic"].as_array().expect("subtopics") {
        let label = option["label"].as_str().expect("label");
        let label_words = words(label);
        let Some(word) = label_words.iter().find(|w| {
            w.len() >= 6
                && served.values().all(|r| {
                    let text = format!(
                        "{} {}",
                        r["title"].as_str().expect("t"),
                        r["summary"].as_str().expect("s")
                    );
                    !text.to_lowercase().contains(w.as_str())
                })
        }) else {
            continue;
        };
        let value = option["value"].as_str().expect("value");
        let expected = sample.ids(|r| r["subtopic"] == value);
        let found = id_set(&s, &key, &format!("q={word}")).await;
        assert!(
            expected.is_subset(&found),
            "metadata word {word:?} of {value} finds its questions"
        );
        checked += 1;
    }
    assert!(
        checked > 0,
        "some subtopic label word is not in any title or summary"
    );
    let (tag, tagged) = served
        .values()
        .flat_map(|r| r["tags"].as_array().expect("tags").clone())
        .map(|t| t.as_str().expect("tag").to_owned())
        .find_map(|t| {
            let w = t.split('-').max_by_key(|w| w.len())?.to_owned();
            let absent = served.values().all(|r| {
                !format!("{} {}", r["title"], r["summary"])
                    .to_lowercase()
                    .contains(&w)
            });
            (absent && w.len() >= 5).then_some((w, t))
        })
        .expect("a tag word absent from titles and summaries");
    let expected = sample.ids(|r| has(&r["tags"], &tagged));
    assert!(expected.is_subset(&id_set(&s, &key, &format!("q={tag}")).await));
    // Text combines with filters, and a word nowhere in the bank finds nothing.
    let with_filter = id_set(&s, &key, "q=circle&subject=further-maths").await;
    assert!(with_filter.is_subset(&found));
    assert!(all_ids(&s, &key, "q=zyxwvutsrq").await.is_empty());
}

/// Words the index leaves out (common words such as "above", "the" and "a") are dropped from
/// `q`: a `q` of only such words searches as if it were absent, and with other words only those
/// are searched. A valid `q` is never refused.
async fn words_that_are_not_indexed_are_dropped(db: Db) {
    let (s, _, key) = setup(db).await;
    let everything = all_ids(&s, &key, "").await;
    assert_eq!(everything.len(), 68);
    for q in [
        "above",
        "the",
        "a",
        "A",
        "the%20of%20and",
        "above,%20below!",
    ] {
        let resp = s.get(&format!("/v1/questions?q={q}&limit=5"), &key).await;
        assert_eq!(
            resp.status,
            200,
            "q={q}: {}",
            String::from_utf8_lossy(&resp.body)
        );
        assert_eq!(
            all_ids(&s, &key, &format!("q={q}")).await,
            everything,
            "q={q} is the search without q"
        );
    }
    // The remaining filters still apply.
    assert_eq!(
        all_ids(&s, &key, "q=above&subject=further-maths").await,
        all_ids(&s, &key, "subject=further-maths").await
    );
    // The common word is ignored and the other word used, in the same relevance order.
    let integration = all_ids(&s, &key, "q=integration").await;
    assert!(!integration.is_empty() && integration.len() < everything.len());
    assert_eq!(
        all_ids(&s, &key, "q=above%20integration").await,
        integration
    );
    assert_eq!(
        all_ids(&s, &key, "q=integration%20the%20above").await,
        integration
    );
    // A random sample of a common word is a sample of everything.
    let sample = s
        .get("/v1/questions?q=the&random=true&limit=10", &key)
        .await;
    assert_eq!(sample.status, 200);
    assert_eq!(sample.json()["items"].as_array().expect("items").len(), 10);
}

/// The relevance tier of a result for query words given as stem prefixes: 0 when every word
/// starts a word of the title, 1 when every word starts a word of the title or the summary, else 2.
fn tier(item: &Value, prefixes: &[&str]) -> u8 {
    let words = |field: &str| -> Vec<String> {
        item[field]
            .as_str()
            .expect("text")
            .split(|c: char| !c.is_alphanumeric())
            .map(str::to_lowercase)
            .collect()
    };
    let title = words("title");
    let mut both = title.clone();
    both.extend(words("summary"));
    let all_in = |text: &[String]| {
        prefixes
            .iter()
            .all(|p| text.iter().any(|w| w.starts_with(p)))
    };
    if all_in(&title) {
        0
    } else if all_in(&both) {
        1
    } else {
        2
    }
}

async fn text_results_come_title_matches_first(db: Db) {
    let (s, _, key) = setup(db).await;
    for (query, prefixes) in [
        ("q=equation", &["equat"][..]),
        ("q=integration", &["integr"][..]),
        ("q=functions", &["function"][..]),
        ("q=equation&subject=maths", &["equat"][..]),
    ] {
        // Small pages, so the cursors cross from one tier to the next.
        let mut tiers = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut path = format!("/v1/questions?{query}&limit=3");
            if let Some(c) = &cursor {
                path.push_str(&format!("&cursor={c}"));
            }
            let body = s.get(&path, &key).await.json();
            for item in body["items"].as_array().expect("items") {
                tiers.push(tier(item, prefixes));
            }
            match body["nextCursor"].as_str() {
                Some(c) => cursor = Some(c.to_owned()),
                None => break,
            }
        }
        assert!(
            tiers.windows(2).all(|w| w[0] <= w[1]),
            "{query}: title matches, then title-or-summary, then the rest: {tiers:?}"
        );
        let distinct: BTreeSet<u8> = tiers.iter().copied().collect();
        assert!(distinct.len() >= 2, "{query} spans tiers: {tiers:?}");
        if !query.contains('&') {
            assert_eq!(
                distinct.len(),
                3,
                "{query} spans all three tiers: {tiers:?}"
            );
        }
    }
}

/// Every page of a text search read straight from the store, following its positions.
async fn store_pages(store: &Store, filters: &SearchFilters, user: &str) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut page = PageRequest::First;
    loop {
        let found = store.search(filters, user, &page, 4).await.expect("search");
        pages.push(found.items);
        match found.next {
            Some(position) => page = PageRequest::After(position),
            None => return pages,
        }
    }
}

async fn a_short_walk_finds_the_same_pages(db: Db) {
    let (s, user, _) = setup(db).await;
    // However few questions a text search walks before it turns to the full-text index, it
    // serves the same pages in the same order.
    for (q, subject) in [
        ("equation", None),
        ("integration", None),
        ("functions", None),
        ("find", None),
        ("line", None),
        ("equation", Some("maths")),
        ("zyxwvutsrq", None),
    ] {
        let filters = SearchFilters {
            words: query_words(q),
            subject: subject.map(str::to_owned),
            ..SearchFilters::default()
        };
        let whole = store_pages(&s.store, &filters, &user).await;
        assert_eq!(
            whole.len() > 1,
            q != "zyxwvutsrq",
            "{q}: several pages of 4, or none"
        );
        for walk in [1, 3, 10] {
            let short = s.store.clone().with_text_walk(walk);
            assert_eq!(
                store_pages(&short, &filters, &user).await,
                whole,
                "{q} {subject:?}, walking {walk}"
            );
        }
    }
}

async fn pages_walk_every_result_once(db: Db) {
    let (s, _, key) = setup(db).await;
    let sample = Sample::read();
    for (query, page) in [
        ("", 7),
        ("subject=maths", 5),
        ("q=find", 4),
        ("q=find&subject=maths", 3),
    ] {
        let mut ids = Vec::new();
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let mut path = format!("/v1/questions?{query}&limit={page}");
            if let Some(c) = &cursor {
                path.push_str(&format!("&cursor={c}"));
            }
            let body = s.get(&path, &key).await.json();
            let items = body["items"].as_array().expect("items");
            assert!(items.len() <= page);
            pages += 1;
            ids.extend(
                items
                    .iter()
                    .map(|i| i["pin"]["questionId"].as_str().expect("id").to_owned()),
            );
            match body["nextCursor"].as_str() {
                Some(c) => {
                    assert_eq!(items.len(), page, "only the last page is short");
                    cursor = Some(c.to_owned());
                }
                None => break,
            }
        }
        let whole = all_ids(&s, &key, query).await;
        assert_eq!(
            ids, whole,
            "{query}: pages in the same order as one big page"
        );
        assert!(pages > 1, "{query} needs several pages");
        if query.is_empty() {
            let mut sorted = ids.clone();
            sorted.sort();
            assert_eq!(ids, sorted, "without q, in question id order");
            assert_eq!(
                ids.iter().cloned().collect::<BTreeSet<_>>(),
                sample.ids(|_| true)
            );
        }
    }
    // Default page size 30; the last page's nextCursor is null.
    let body = s.get("/v1/questions", &key).await.json();
    assert_eq!(body["items"].as_array().expect("items").len(), 30);
    assert!(body["nextCursor"].is_string());
    let body = s.get("/v1/questions?limit=100", &key).await.json();
    assert_eq!(body["items"].as_array().expect("items").len(), 68);
    assert!(body["nextCursor"].is_null());
}

async fn cursors_are_bound_to_filters_accounts_and_time(db: Db) {
    let (s, _, key) = setup(db).await;
    let first = s
        .get("/v1/questions?subject=maths&limit=5", &key)
        .await
        .json();
    let cursor = first["nextCursor"].as_str().expect("a cursor").to_owned();
    let ok = s
        .get(
            &format!("/v1/questions?subject=maths&limit=5&cursor={cursor}"),
            &key,
        )
        .await;
    assert_eq!(ok.status, 200);
    // The page size may change between pages; the filters may not.
    assert_eq!(
        s.get(
            &format!("/v1/questions?subject=maths&limit=9&cursor={cursor}"),
            &key
        )
        .await
        .status,
        200
    );
    let field_error = |body: Value, code: &str| {
        let errors = body["error"]["details"]["errors"]
            .as_array()
            .expect("errors")
            .clone();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0]["path"], "cursor");
        assert_eq!(errors[0]["code"], code);
    };
    for changed in [
        "subject=further-maths",
        "",
        "subject=maths&board=aqa",
        "subject=maths&q=find",
        "subject=maths&favouritesOnly=true",
        "subject=maths&excludeIds=6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f",
    ] {
        let body = s
            .get(&format!("/v1/questions?{changed}&cursor={cursor}"), &key)
            .await
            .assert_error(422, "invalid_parameters");
        field_error(body, "cursor_mismatch");
    }
    // Another account cannot use it.
    let other = s.user("Other").await;
    let other_key = s.key(&other, Scope::ALL).await;
    let body = s
        .get(
            &format!("/v1/questions?subject=maths&cursor={cursor}"),
            &other_key,
        )
        .await
        .assert_error(422, "invalid_parameters");
    field_error(body, "cursor_unknown");
    // Another key of the same account can.
    let user = s.get("/v1/me", &key).await.json()["user"]["id"]
        .as_str()
        .expect("user id")
        .to_owned();
    let second_key = s.key(&user, &[Scope::QuestionsRead]).await;
    assert_eq!(
        s.get(
            &format!("/v1/questions?subject=maths&cursor={cursor}"),
            &second_key
        )
        .await
        .status,
        200
    );
    // An expired cursor.
    let mut tx = s.store.begin_write().await.expect("begin");
    sqlx::query("UPDATE search_cursors SET expires_at = 1 WHERE id = $1")
        .bind(&cursor)
        .execute(&mut *tx)
        .await
        .expect("expire");
    tx.commit().await.expect("commit");
    let body = s
        .get(
            &format!("/v1/questions?subject=maths&cursor={cursor}"),
            &key,
        )
        .await
        .assert_error(422, "invalid_parameters");
    field_error(body, "cursor_expired");
    // A text search's cursor records a relevance tier and a key; one recording anything else
    // (a damaged row) is refused as unknown, not served from a guessed position.
    let first = s.get("/v1/questions?q=find&limit=3", &key).await.json();
    let text_cursor = first["nextCursor"]
        .as_str()
        .expect("a text cursor")
        .to_owned();
    let mut tx = s.store.begin_write().await.expect("begin");
    sqlx::query("UPDATE search_cursors SET after_key = 'not-a-position' WHERE id = $1")
        .bind(&text_cursor)
        .execute(&mut *tx)
        .await
        .expect("damage");
    tx.commit().await.expect("commit");
    let body = s
        .get(
            &format!("/v1/questions?q=find&limit=3&cursor={text_cursor}"),
            &key,
        )
        .await
        .assert_error(422, "invalid_parameters");
    field_error(body, "cursor_unknown");
    // Asking for the same first page again gives a working cursor.
    let again = s
        .get("/v1/questions?subject=maths&limit=5", &key)
        .await
        .json();
    let fresh = again["nextCursor"].as_str().expect("cursor");
    assert_eq!(
        s.get(
            &format!("/v1/questions?subject=maths&limit=5&cursor={fresh}"),
            &key
        )
        .await
        .json()["items"],
        ok.json()["items"]
    );
}

async fn random_samples(db: Db) {
    let (s, _, key) = setup(db).await;
    let sample = Sample::read();
    let all = sample.ids(|_| true);
    let mut seen = BTreeSet::new();
    let mut orders = BTreeSet::new();
    for _ in 0..12 {
        let body = s
            .get("/v1/questions?random=true&limit=10", &key)
            .await
            .json();
        assert!(
            body["nextCursor"].is_null(),
            "a random sample has no cursor"
        );
        let ids: Vec<String> = body["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["pin"]["questionId"].as_str().expect("id").to_owned())
            .collect();
        assert_eq!(ids.len(), 10);
        assert_eq!(ids.iter().collect::<BTreeSet<_>>().len(), 10, "no repeats");
        assert!(ids.iter().all(|id| all.contains(id)));
        seen.extend(ids.iter().cloned());
        orders.insert(ids);
    }
    assert!(orders.len() > 1, "samples vary");
    assert!(seen.len() > 20, "samples cover the bank: {}", seen.len());
    // Filters apply; a sample larger than the matches returns every match.
    let expected = sample.ids(|r| sources(r).iter().any(|s| s["subject"] == "further-maths"));
    let body = s
        .get(
            "/v1/questions?random=true&subject=further-maths&limit=100",
            &key,
        )
        .await
        .json();
    let ids: BTreeSet<String> = body["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["pin"]["questionId"].as_str().expect("id").to_owned())
        .collect();
    assert_eq!(ids, expected);
    let body = s
        .get("/v1/questions?random=true&q=circle&limit=100", &key)
        .await
        .json();
    let texts = id_set(&s, &key, "q=circle").await;
    let ids: BTreeSet<String> = body["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["pin"]["questionId"].as_str().expect("id").to_owned())
        .collect();
    assert_eq!(ids, texts);
    // random=false is an ordinary page; a cursor with random=true is refused.
    let page = s
        .get("/v1/questions?random=false&limit=5", &key)
        .await
        .json();
    let cursor = page["nextCursor"].as_str().expect("cursor");
    let body = s
        .get(&format!("/v1/questions?random=true&cursor={cursor}"), &key)
        .await
        .assert_error(422, "invalid_parameters");
    assert_eq!(body["error"]["details"]["errors"][0]["path"], "cursor");
    assert_eq!(
        s.get(
            &format!("/v1/questions?random=false&limit=5&cursor={cursor}"),
            &key
        )
        .await
        .status,
        200
    );
}

async fn exclusions_and_favourites(db: Db) {
    let (s, user, key) = setup(db).await;
    let sample = Sample::read();
    let all: Vec<String> = sample.ids(|_| true).into_iter().collect();
    let excluded: Vec<&String> = all.iter().step_by(3).collect();
    let query: String = excluded
        .iter()
        .map(|id| format!("excludeIds={}", id.to_uppercase()))
        .collect::<Vec<_>>()
        .join("&");
    let found = id_set(&s, &key, &query).await;
    let expected: BTreeSet<String> = all
        .iter()
        .filter(|id| !excluded.contains(id))
        .cloned()
        .collect();
    assert_eq!(found, expected);
    // Unknown ids are simply not there to exclude.
    assert_eq!(
        id_set(&s, &key, "excludeIds=6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f")
            .await
            .len(),
        all.len()
    );
    // Favourites: none yet, then three of this account's (and one of another account's).
    assert!(id_set(&s, &key, "favouritesOnly=true").await.is_empty());
    let favourites: BTreeSet<String> = all.iter().skip(5).step_by(20).cloned().collect();
    assert_eq!(favourites.len(), 4);
    for id in &favourites {
        assert!(s.store.add_favourite(&user, id).await.expect("favourite"));
    }
    let other = s.user("Other").await;
    s.store
        .add_favourite(&other, &all[0])
        .await
        .expect("favourite");
    assert_eq!(id_set(&s, &key, "favouritesOnly=true").await, favourites);
    assert_eq!(
        id_set(&s, &key, "favouritesOnly=false").await.len(),
        all.len()
    );
    let first = favourites.iter().next().expect("one");
    let rest: BTreeSet<String> = favourites.iter().skip(1).cloned().collect();
    assert_eq!(
        id_set(&s, &key, &format!("favouritesOnly=true&excludeIds={first}")).await,
        rest
    );
}

async fn only_latest_published_revisions_are_searched(db: Db) {
    let (s, _, key) = setup(db).await;
    let sample = Sample::read();
    let body = s.get("/v1/questions?limit=100", &key).await.json();
    let by_id: BTreeMap<String, Value> = body["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| {
            (
                i["pin"]["questionId"].as_str().expect("id").to_owned(),
                i.clone(),
            )
        })
        .collect();
    let mut checked = 0;
    for q in &sample.questions {
        let revisions = q["revisions"].as_array().expect("revisions");
        if revisions.len() < 2 {
            continue;
        }
        let id = q["id"].as_str().expect("id");
        let latest = revisions
            .iter()
            .rev()
            .find(|r| r["status"] == "published")
            .expect("published");
        assert_eq!(by_id[id]["pin"]["revision"], latest["revision"], "{id}");
        assert_eq!(by_id[id]["title"], latest["title"]);
        checked += 1;
    }
    assert!(
        checked >= 3,
        "the sample has questions with several revisions"
    );
    // Withdrawing a question's last published revision takes it out of search at the next index.
    let withdrawn = by_id.keys().next().expect("a question").clone();
    let mut tx = s.store.begin_write().await.expect("tx");
    sqlx::query("UPDATE bank_revisions SET status = 'withdrawn' WHERE question_id = $1")
        .bind(&withdrawn)
        .execute(&mut *tx)
        .await
        .expect("withdraw");
    sqlx::query("UPDATE bank_questions SET latest_published = NULL WHERE id = $1")
        .bind(&withdrawn)
        .execute(&mut *tx)
        .await
        .expect("withdraw");
    let uuid = uuid::Uuid::parse_str(&withdrawn).expect("uuid");
    examkit::store::search::index_questions(&mut tx, s.store.backend(), &[uuid])
        .await
        .expect("reindex");
    tx.commit().await.expect("commit");
    let ids = id_set(&s, &key, "").await;
    assert_eq!(ids.len(), by_id.len() - 1);
    assert!(!ids.contains(&withdrawn));
    let title = by_id[&withdrawn]["title"].as_str().expect("title");
    let word = title
        .split(|c: char| !c.is_alphanumeric())
        .max_by_key(|w| w.len())
        .expect("word");
    assert!(
        !id_set(&s, &key, &format!("q={word}"))
            .await
            .contains(&withdrawn)
    );
    // Its facet counts drop too.
    let facets = s.get("/v1/questions/facets", &key).await.json();
    let topic = by_id[&withdrawn]["topic"].as_str().expect("topic");
    let count = facets["topic"]
        .as_array()
        .expect("topics")
        .iter()
        .find(|o| o["value"] == topic)
        .expect("topic listed")["count"]
        .as_i64()
        .expect("count");
    let expected = by_id
        .iter()
        .filter(|(id, i)| **id != withdrawn && i["topic"] == topic)
        .count() as i64;
    assert_eq!(count, expected);
}

async fn revisions_are_read_by_pin(db: Db) {
    let (s, _, key) = setup(db).await;
    let sample = Sample::read();
    let search = s.get("/v1/questions?limit=100", &key).await.json();
    let mut read = 0;
    for item in search["items"].as_array().expect("items") {
        let pin = &item["pin"];
        let id = pin["questionId"].as_str().expect("id");
        let path = format!("/v1/questions/{id}/revisions/{}", pin["revision"]);
        let resp = s.get(&path, &key).await;
        assert_eq!(resp.status, 200, "{path}");
        let q = &resp.json()["question"];
        assert_eq!(&q["pin"], pin, "the search pin is the revision's pin");
        assert_eq!(q["status"], "published");
        assert_eq!(q["id"], id);
        let written = sample
            .questions
            .iter()
            .find(|x| x["id"] == id)
            .expect("in the sample");
        let r = written["revisions"]
            .as_array()
            .expect("revisions")
            .iter()
            .find(|r| r["revision"] == pin["revision"])
            .expect("revision");
        for field in [
            "title",
            "summary",
            "sources",
            "topic",
            "subtopic",
            "tags",
            "difficulty",
            "frequency",
            "marks",
            "moduleProfiles",
            "content",
            "scheme",
        ] {
            assert_eq!(q[field], r[field], "{id} {field}");
        }
        let declared = r
            .get("assets")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let diagrams = q["diagrams"].as_array().expect("diagrams");
        assert_eq!(diagrams.len(), declared.len());
        for (d, a) in diagrams.iter().zip(&declared) {
            assert_eq!(d["id"], a["id"]);
            assert_eq!(d["mediaType"], a["mediaType"]);
            assert_eq!(d["description"], a["description"]);
            assert_eq!(
                d["href"],
                format!(
                    "/v1/questions/{id}/revisions/{}/assets/{}",
                    pin["revision"],
                    a["id"].as_str().expect("id")
                )
            );
        }
        read += 1;
    }
    assert_eq!(read, 68);
    // Withdrawn revisions stay readable; drafts and unknown revisions are 404.
    let mut withdrawn = 0;
    let mut drafts = 0;
    for q in &sample.questions {
        let id = q["id"].as_str().expect("id");
        for r in q["revisions"].as_array().expect("revisions") {
            let path = format!("/v1/questions/{id}/revisions/{}", r["revision"]);
            let resp = s.get(&path, &key).await;
            match r["status"].as_str().expect("status") {
                "withdrawn" => {
                    assert_eq!(resp.status, 200, "{path}");
                    let body = resp.json();
                    assert_eq!(body["question"]["status"], "withdrawn");
                    assert_eq!(body["question"]["content"], r["content"]);
                    withdrawn += 1;
                }
                "draft" => {
                    resp.assert_error(404, "not_found");
                    drafts += 1;
                }
                _ => assert_eq!(resp.status, 200),
            }
        }
        let next = q["revisions"].as_array().expect("revisions").len() + 1;
        s.get(&format!("/v1/questions/{id}/revisions/{next}"), &key)
            .await
            .assert_error(404, "not_found");
    }
    assert!(withdrawn >= 1 && drafts >= 1);
    s.get(
        "/v1/questions/6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f/revisions/1",
        &key,
    )
    .await
    .assert_error(404, "not_found");
    // Malformed path parameters.
    let id = sample.questions[0]["id"].as_str().expect("id");
    for (path, field) in [
        (
            "/v1/questions/not-a-uuid/revisions/1".to_owned(),
            "questionId",
        ),
        ("/v1/questions/123/revisions/1".to_owned(), "questionId"),
        (format!("/v1/questions/{id}/revisions/0"), "revision"),
        (format!("/v1/questions/{id}/revisions/-1"), "revision"),
        (format!("/v1/questions/{id}/revisions/one"), "revision"),
        (format!("/v1/questions/{id}/revisions/1.0"), "revision"),
        (
            format!("/v1/questions/{id}/revisions/99999999999999999999"),
            "revision",
        ),
        (format!("/v1/questions/{id}/revisions/%00"), "revision"),
    ] {
        let body = s
            .get(&path, &key)
            .await
            .assert_error(422, "invalid_parameters");
        assert_eq!(
            body["error"]["details"]["errors"][0]["path"], field,
            "{path}"
        );
    }
}

async fn diagrams_download(db: Db) {
    let (s, _, key) = setup(db).await;
    let sample = Sample::read();
    let mut downloaded = 0;
    let mut other_revision = None;
    for q in &sample.questions {
        let id = q["id"].as_str().expect("id");
        for r in q["revisions"].as_array().expect("revisions") {
            if r["status"] == "draft" {
                continue;
            }
            for a in r
                .get("assets")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let asset = a["id"].as_str().expect("asset id");
                let path = format!(
                    "/v1/questions/{id}/revisions/{}/assets/{asset}",
                    r["revision"]
                );
                let resp = s.get(&path, &key).await;
                assert_eq!(resp.status, 200, "{path}");
                assert_eq!(
                    resp.header("content-type"),
                    Some("application/octet-stream")
                );
                assert_eq!(resp.header("x-content-type-options"), Some("nosniff"));
                assert!(
                    resp.header("content-disposition")
                        .is_some_and(|d| d.starts_with("attachment"))
                );
                let file = std::fs::read(sample_dir().join(a["file"].as_str().expect("file")))
                    .expect("asset file");
                assert_eq!(resp.body, file, "{path}");
                downloaded += 1;
                other_revision.get_or_insert((id.to_owned(), asset.to_owned()));
            }
        }
    }
    assert!(downloaded >= 5);
    let (id, asset) = other_revision.expect("an asset");
    // The asset through another question, another revision, or an unknown asset id: 404.
    let stranger = sample
        .questions
        .iter()
        .find(|q| q["id"] != id.as_str())
        .expect("another question")["id"]
        .as_str()
        .expect("id");
    for path in [
        format!("/v1/questions/{stranger}/revisions/1/assets/{asset}"),
        format!("/v1/questions/{id}/revisions/7/assets/{asset}"),
        format!("/v1/questions/{id}/revisions/1/assets/6f1c2b0e-1d2a-4c3b-9e8f-0a1b2c3d4e5f"),
    ] {
        s.get(&path, &key).await.assert_error(404, "not_found");
    }
    for (path, field) in [
        (
            format!("/v1/questions/{id}/revisions/1/assets/x"),
            "assetId",
        ),
        (
            format!("/v1/questions/{id}/revisions/0/assets/{asset}"),
            "revision",
        ),
        (
            format!("/v1/questions/x/revisions/1/assets/{asset}"),
            "questionId",
        ),
    ] {
        let body = s
            .get(&path, &key)
            .await
            .assert_error(422, "invalid_parameters");
        assert_eq!(
            body["error"]["details"]["errors"][0]["path"], field,
            "{path}"
        );
    }
}

async fn scopes_are_required(db: Db) {
    let (s, user, _) = setup(db).await;
    let sample = Sample::read();
    let without: Vec<Scope> = Scope::ALL
        .iter()
        .copied()
        .filter(|s| *s != Scope::QuestionsRead)
        .collect();
    let key = s.key(&user, &without).await;
    let reader = s.key(&user, &[Scope::QuestionsRead]).await;
    let (id, asset) = sample
        .served()
        .into_iter()
        .find_map(|(id, r)| {
            let asset = r.get("assets")?.as_array()?.first()?["id"]
                .as_str()?
                .to_owned();
            Some((id, asset))
        })
        .expect("a question with a diagram");
    for path in [
        "/v1/questions/facets".to_owned(),
        "/v1/questions".to_owned(),
        "/v1/questions?limit=0".to_owned(),
        format!("/v1/questions/{id}/revisions/1"),
        format!("/v1/questions/{id}/revisions/1/assets/{asset}"),
    ] {
        let body = s
            .get(&path, &key)
            .await
            .assert_error(403, "insufficient_scope");
        assert_eq!(
            body["error"]["requiredScopes"],
            serde_json::json!(["questions:read"])
        );
        if !path.contains("limit=0") {
            assert_eq!(s.get(&path, &reader).await.status, 200, "{path}");
        }
    }
    s.send(reqwest::Method::GET, "/v1/questions", None, &[], None)
        .await
        .assert_error(401, "missing_api_key");
}
