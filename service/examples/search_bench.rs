//! Search benchmark: fills a database with a large generated bank, indexes it, serves it on
//! loopback and measures `GET /v1/questions` latencies (p50, p99) for a text query, a filtered
//! query and a random sample. Run by `service/bench/search.sh`.
//!
//! ```text
//! search_bench <database-url> [--questions N] [--requests N] [--concurrency N] [--bank DIR]
//! ```
//!
//! With `--bank DIR` the bank is imported from DIR (`examkit bank generate` output) by
//! `examkit bank import` beforehand and only measured here; without it, questions are generated
//! from the sample bank's published revisions (varied ids, titles, sources and attributes) and
//! written straight into the bank tables, then indexed in one transaction as an import does.

use std::sync::Arc;
use std::time::{Duration, Instant};

use examkit::auth::{Scope, generate_key};
use examkit::http::{self, AppState};
use examkit::store::Store;
use examkit::store::rate::Limits;
use examkit_bank::{Level, Revision, Status, Subject};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const WORDS: &[&str] = &[
    "exact",
    "values",
    "gradient",
    "tangent",
    "normal",
    "stationary",
    "points",
    "region",
    "area",
    "volume",
    "rate",
    "change",
    "modelling",
    "proof",
    "inequality",
    "roots",
    "sequence",
    "limit",
    "estimate",
    "error",
    "interval",
    "parameter",
    "curve",
    "line",
    "circle",
    "triangle",
    "vector",
    "matrix",
    "probability",
    "sample",
    "mean",
    "variance",
    "particle",
    "force",
    "speed",
    "energy",
];

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

async fn generate(store: &Store, questions: usize) -> Result<(), Box<dyn std::error::Error>> {
    let bank = examkit_bank::sample::load().map_err(|e| format!("{e:?}"))?;
    let facets = bank.facets();
    let templates: Vec<Revision> = bank
        .questions()
        .filter_map(|(_, _, q)| {
            q.revisions
                .iter()
                .rev()
                .find(|r| r.status == Status::Published)
                .cloned()
        })
        .collect();
    let mut tx = store.begin_write().await?;
    let mut position = 0i64;
    let mut facet = |kind: &'static str,
                     id: String,
                     label: String,
                     topic: Option<String>,
                     level: Option<String>,
                     subject: Option<String>| {
        position += 1;
        (kind, id, label, position, topic, level, subject)
    };
    let mut rows = Vec::new();
    for level in [
        Level::AsLevel,
        Level::ALevel,
        Level::InternationalAsLevel,
        Level::InternationalALevel,
    ] {
        for subject in [Subject::Maths, Subject::FurtherMaths] {
            let id = format!("{}-{}", level.as_str(), subject.as_str());
            let label = facets
                .course
                .iter()
                .find(|c| c.id == id)
                .map_or_else(|| id.clone(), |c| c.label.clone());
            rows.push(facet(
                "course",
                id,
                label,
                None,
                Some(level.as_str().into()),
                Some(subject.as_str().into()),
            ));
        }
    }
    for (kind, list) in [
        ("board", &facets.board),
        ("module", &facets.module),
        ("topic", &facets.topic),
    ] {
        for o in list {
            rows.push(facet(kind, o.id.clone(), o.label.clone(), None, None, None));
        }
    }
    for o in &facets.subtopic {
        rows.push(facet(
            "subtopic",
            o.id.clone(),
            o.label.clone(),
            Some(o.topic.clone()),
            None,
            None,
        ));
    }
    for (kind, id, label, position, topic, level, subject) in rows {
        sqlx::query(
            "INSERT INTO bank_facets (kind, id, label, position, topic, level, subject) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(kind)
        .bind(id)
        .bind(label)
        .bind(position)
        .bind(topic)
        .bind(level)
        .bind(subject)
        .execute(&mut *tx)
        .await?;
    }
    let boards: Vec<String> = facets.board.iter().map(|b| b.id.clone()).collect();
    let levels = [
        Level::AsLevel,
        Level::ALevel,
        Level::InternationalAsLevel,
        Level::InternationalALevel,
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut ids = Vec::with_capacity(questions);
    let started = Instant::now();
    for chunk_start in (0..questions).step_by(500) {
        let end = (chunk_start + 500).min(questions);
        let mut q_sql = String::from("INSERT INTO bank_questions (id, latest_published) VALUES ");
        let mut r_sql = String::from(
            "INSERT INTO bank_revisions (question_id, revision, status, digest, content_version, \
             scheme_version, title, marks, body, imported_at) VALUES ",
        );
        let mut q_binds: Vec<String> = Vec::new();
        let mut r_binds: Vec<(String, String, String, String, i64, String)> = Vec::new();
        for i in chunk_start..end {
            let mut bytes = [0u8; 16];
            for (k, b) in bytes.iter_mut().enumerate() {
                *b = (rng.next() >> (k % 8)) as u8;
            }
            let id = uuid::Builder::from_random_bytes(bytes).into_uuid();
            let mut r = templates[rng.below(templates.len())].clone();
            r.revision = 1;
            r.change_note = None;
            r.assets.clear();
            r.title = format!(
                "{} {} {}",
                r.title,
                WORDS[rng.below(WORDS.len())],
                WORDS[rng.below(WORDS.len())]
            );
            r.title.truncate(120);
            r.difficulty = 1 + rng.below(5) as u8;
            for source in &mut r.sources {
                source.board = boards[rng.below(boards.len())].clone();
                source.level = levels[rng.below(levels.len())];
                source.year = 2010 + rng.below(16) as u16;
            }
            let body = serde_json::to_string(&r)?;
            let content = examkit_bank::digest::sha256_hex(
                examkit_bank::digest::canonical_json(&r.content).as_bytes(),
            );
            let scheme = examkit_bank::digest::scheme_version(&r.scheme);
            let digest = examkit_bank::digest::sha256_hex(body.as_bytes());
            let n = q_binds.len();
            q_sql.push_str(&format!("{}(${}, 1)", if n > 0 { ", " } else { "" }, n + 1));
            q_binds.push(id.hyphenated().to_string());
            let m = r_binds.len() * 7;
            r_sql.push_str(&format!(
                "{}(${}, 1, 'published', ${}, ${}, ${}, ${}, ${}, ${}, 0)",
                if m > 0 { ", " } else { "" },
                m + 1,
                m + 2,
                m + 3,
                m + 4,
                m + 5,
                m + 6,
                m + 7
            ));
            r_binds.push((
                digest,
                content,
                scheme,
                r.title.clone(),
                i64::from(r.marks),
                body,
            ));
            ids.push(id);
            let _ = i;
        }
        let mut query = sqlx::query(sqlx::AssertSqlSafe(q_sql.as_str()));
        for id in &q_binds {
            query = query.bind(id.as_str());
        }
        query.execute(&mut *tx).await?;
        let mut query = sqlx::query(sqlx::AssertSqlSafe(r_sql.as_str()));
        for (id, (digest, content, scheme, title, marks, body)) in q_binds.iter().zip(&r_binds) {
            query = query
                .bind(id.as_str())
                .bind(digest.as_str())
                .bind(content.as_str())
                .bind(scheme.as_str())
                .bind(title.as_str())
                .bind(*marks)
                .bind(body.as_str());
        }
        query.execute(&mut *tx).await?;
    }
    println!(
        "generated {questions} questions into the bank tables in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    examkit::store::search::index_questions(&mut tx, store.backend(), &ids).await?;
    tx.commit().await?;
    println!(
        "indexed them (index_questions, one transaction) in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)].as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let url = args
        .get(1)
        .ok_or("usage: search_bench <database-url> [options]")?;
    let questions = arg(&args, "--questions", 100_000);
    let requests = arg(&args, "--requests", 2000);
    let concurrency = arg(&args, "--concurrency", 4);
    let store = Store::open(url).await?;
    if !args.iter().any(|a| a == "--bank") {
        generate(&store, questions).await?;
    }
    let indexed: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM search_questions")
        .fetch_one(store.pool())
        .await?;
    println!("{indexed} questions in the search index");
    let unlimited = Limits {
        key_per_minute: i64::MAX / 4,
        account_per_minute: i64::MAX / 4,
        key_per_day: i64::MAX / 4,
        account_per_day: i64::MAX / 4,
        key_writes_per_minute: i64::MAX / 4,
        account_writes_per_minute: i64::MAX / 4,
    };
    let user = store.create_user("Benchmark", true, false).await?;
    let new = generate_key().map_err(|e| format!("randomness: {e}"))?;
    store
        .create_key(
            &user.id,
            "bench",
            &new.prefix,
            &new.fingerprint,
            &[Scope::QuestionsRead],
            examkit::store::now_ms() + 86_400_000,
        )
        .await?;
    let state = Arc::new(AppState {
        store: store.clone(),
        limits: unlimited,
    });
    let (addr, server) = http::bind(state, "127.0.0.1:0".parse()?, std::future::pending()).await?;
    tokio::spawn(server);
    let client = reqwest::Client::new();
    let auth = format!("Bearer {}", new.secret);
    let cases = [
        ("text query", "q=tangent%20curve&limit=30"),
        ("text query, one word", "q=probability&limit=30"),
        (
            "filtered query",
            "board=edexcel&level=a-level&topic=integration&limit=30",
        ),
        ("filtered query, broad", "subject=maths&minMarks=6&limit=30"),
        ("random sample", "random=true&limit=30"),
        (
            "random sample, filtered",
            "random=true&subject=further-maths&difficulty=3&limit=30",
        ),
        ("second page (cursor)", "subject=maths&limit=30&cursor="),
    ];
    println!("{requests} requests per case, {concurrency} concurrent, loopback, release build");
    println!(
        "{:<28} {:>9} {:>9} {:>9} {:>7}",
        "case", "p50 ms", "p99 ms", "max ms", "items"
    );
    for (name, query) in cases {
        let mut query = query.to_owned();
        if query.ends_with("cursor=") {
            let first: serde_json::Value = client
                .get(format!("http://{addr}/v1/questions?subject=maths&limit=30"))
                .header("authorization", &auth)
                .send()
                .await?
                .json()
                .await?;
            query.push_str(first["nextCursor"].as_str().ok_or("no cursor")?);
        }
        let url = format!("http://{addr}/v1/questions?{query}");
        // Warm-up.
        let mut items = 0;
        for _ in 0..20 {
            let body: serde_json::Value = client
                .get(&url)
                .header("authorization", &auth)
                .send()
                .await?
                .json()
                .await?;
            items = body["items"].as_array().map_or(0, Vec::len);
        }
        let mut tasks = Vec::new();
        for _ in 0..concurrency {
            let client = client.clone();
            let url = url.clone();
            let auth = auth.clone();
            let per = requests / concurrency;
            tasks.push(tokio::spawn(async move {
                let mut times = Vec::with_capacity(per);
                for _ in 0..per {
                    let started = Instant::now();
                    let resp = client.get(&url).header("authorization", &auth).send().await;
                    let ok = match resp {
                        Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                        Err(_) => false,
                    };
                    if !ok {
                        return Err("a request failed".to_owned());
                    }
                    times.push(started.elapsed());
                }
                Ok(times)
            }));
        }
        let mut times = Vec::new();
        for task in tasks {
            times.extend(task.await??);
        }
        times.sort();
        println!(
            "{:<28} {:>9.2} {:>9.2} {:>9.2} {:>7}",
            name,
            percentile(&times, 0.50),
            percentile(&times, 0.99),
            percentile(&times, 1.0),
            items
        );
    }
    Ok(())
}
