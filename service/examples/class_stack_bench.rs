//! A class set read from its scanned stack and marked, timed as a client sees it, with the
//! service's memory: a paper of the sample bank's questions is printed as a class set of numbered
//! copies, every copy is written in a handwriting font and scanned by the bundled scan maker, the
//! pages are shuffled into a few PDF files and uploaded to the set, the set is polled until every
//! page of the stack is read and placed, then the set is marked with the vision-model marker
//! against a stub OpenAI-compatible provider that this program starts and that answers every
//! question after a fixed delay.
//!
//! ```text
//! OMP_THREAD_LIMIT=1 cargo run --release -p examkit --example class_stack_bench -- \
//!     [DATABASE_URL] [--copies 30] [--pages 8 | --questions N] [--files 3] [--workers 2] \
//!     [--concurrency 4] [--delay-ms 2000] [--mark on|off] [--dpi 150] [--ocr on|off] \
//!     [--font PATH] [--examkit PATH]
//! ```
//!
//! The service is the `examkit` binary, run as a child process so that its memory is its own
//! (the scans this program makes stay in this process): `examkit serve` with `--workers`,
//! `--marker openai` at the stub and `--marker-concurrency`. Under `cargo run` the binary of
//! this program's target directory is built first (with this program, so only the binary is
//! linked); `--examkit PATH` runs another. Without a URL the service uses a fresh SQLite file in
//! a temporary directory.
//!
//! The paper takes sample-bank questions, one more at a time, until it has `--pages` pages
//! (`--questions N` takes N questions instead). The scans are made at `--dpi`; the service reads
//! pages at its own 150 dpi.
//!
//! It prints the stack's size; the time from the last upload to the last page read and placed;
//! the time from the start request to every script marked, beside the ideal for the configured
//! concurrency (see [`Prep`]) and their ratio; and the service process's resident memory
//! (`VmRSS`) before the uploads, after reading and after marking, with its highest (`VmHWM`,
//! reset with `/proc/<pid>/clear_refs` at the start of each phase) while uploading, while
//! reading and while marking. Once marked, it asks for the class's marked scripts (as drafts:
//! the stub leaves marks to review), the PDF then the zip, and prints each one's time, size and
//! the service's highest memory while making it.

mod support;

use std::io::BufRead;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use examkit::auth::{Scope, generate_key};
use examkit::store::Store;
use image::RgbImage;
use serde_json::{Value, json};
use support::{Client, stub_answer};
use warp::Filter;

type Error = Box<dyn std::error::Error>;

struct Options {
    url: Option<String>,
    copies: u32,
    pages: usize,
    questions: Option<usize>,
    files: usize,
    workers: usize,
    concurrency: usize,
    delay_ms: u64,
    mark: bool,
    dpi: u32,
    ocr: bool,
    font: String,
    examkit: Option<PathBuf>,
}

fn options() -> Result<Options, Error> {
    let mut o = Options {
        url: None,
        copies: 30,
        pages: 8,
        questions: None,
        files: 3,
        workers: 2,
        concurrency: 4,
        delay_ms: 2000,
        mark: true,
        dpi: 150,
        ocr: true,
        font: "/usr/share/fonts/opentype/comic-neue/ComicNeue-Regular.otf".into(),
        examkit: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--copies" => o.copies = value()?.parse()?,
            "--pages" => o.pages = value()?.parse()?,
            "--questions" => o.questions = Some(value()?.parse()?),
            "--files" => o.files = value()?.parse()?,
            "--workers" => o.workers = value()?.parse()?,
            "--concurrency" => o.concurrency = value()?.parse()?,
            "--delay-ms" => o.delay_ms = value()?.parse()?,
            "--mark" => o.mark = value()? != "off",
            "--dpi" => o.dpi = value()?.parse()?,
            "--ocr" => o.ocr = value()? != "off",
            "--font" => o.font = value()?,
            "--examkit" => o.examkit = Some(value()?.into()),
            other if !other.starts_with("--") => o.url = Some(other.to_owned()),
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    if o.files == 0 || o.copies == 0 || o.workers == 0 || o.concurrency == 0 {
        return Err("--files, --copies, --workers and --concurrency are at least 1".into());
    }
    Ok(o)
}

// ---- The stub provider (its answers are `support::stub_answer`) ----

/// What the stub has seen: calls answered, and the most in flight at once.
#[derive(Default)]
struct StubCounts {
    calls: AtomicU64,
    in_flight: AtomicI64,
    most: AtomicI64,
}

/// Starts the stub on loopback, answering after `delay`; its API base.
async fn stub(delay: Duration, counts: Arc<StubCounts>) -> Result<String, Error> {
    let route = warp::post()
        .and(warp::path!("v1" / "chat" / "completions"))
        .and(warp::body::json())
        .then(move |body: Value| {
            let counts = counts.clone();
            async move {
                let now = counts.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                counts.most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(delay).await;
                counts.in_flight.fetch_sub(1, Ordering::SeqCst);
                counts.calls.fetch_add(1, Ordering::SeqCst);
                warp::reply::json(&stub_answer(&body))
            }
        });
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let addr = listener.local_addr()?;
    tokio::spawn(warp::serve(route).incoming(listener).run());
    Ok(format!("http://{addr}/v1"))
}

// ---- The service, a child process ----

/// `examkit serve` of the binary at `given`, or else of the `examkit` binary of this program's
/// target directory, which is built first (with this program, so only the binary is linked)
/// when this program runs under `cargo run`.
fn service_command(given: Option<&PathBuf>) -> Result<std::process::Command, Error> {
    let path = support::examkit_binary(given, "class_stack_bench")?;
    if !path.exists() {
        return Err(format!(
            "no examkit binary at {}: give --examkit PATH",
            path.display()
        )
        .into());
    }
    let mut command = std::process::Command::new(path);
    command.arg("serve");
    Ok(command)
}

/// `examkit serve`, killed when dropped.
struct Service {
    child: std::process::Child,
    /// Its API.
    base: String,
    /// Its Prometheus metrics.
    metrics: String,
}

impl Service {
    fn start(mut command: std::process::Command, args: &[String]) -> Result<Service, Error> {
        command
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit());
        if std::env::var_os("EXAMKIT_LOG").is_none() {
            command.env("EXAMKIT_LOG", "warn");
        }
        let mut child = command.spawn()?;
        let stdout = child.stdout.take().ok_or("the service's output")?;
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        std::thread::spawn(move || {
            // Read to the end, so that the service never blocks on a full pipe.
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(line);
            }
        });
        let mut service = Service {
            child,
            base: String::new(),
            metrics: String::new(),
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        while service.base.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx
                .recv_timeout(left)
                .map_err(|_| "the service did not say where it listens")?;
            if let Some(url) = line.strip_prefix("listening on ") {
                service.base = url.trim().to_owned();
            } else if let Some(url) = line.strip_prefix("metrics on ") {
                service.metrics = url.trim().to_owned();
            }
        }
        Ok(service)
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A field of `/proc/<pid>/status`, in KiB.
    fn status_kib(&self, field: &str) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .ok()
            .and_then(|status| {
                status
                    .lines()
                    .find(|l| l.starts_with(field))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|kib| kib.parse().ok())
            })
            .unwrap_or(0)
    }

    /// Resident memory now, KiB.
    fn resident(&self) -> u64 {
        self.status_kib("VmRSS:")
    }

    /// The highest resident memory since the last [`Service::reset_peak`], KiB.
    fn peak(&self) -> u64 {
        self.status_kib("VmHWM:")
    }

    /// Starts the highest resident memory again from now; false when the kernel refused.
    fn reset_peak(&self) -> bool {
        std::fs::write(format!("/proc/{}/clear_refs", self.pid()), "5").is_ok()
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The database with the sample bank, one account and a key to it; the key's secret.
async fn prepare(url: &str) -> Result<String, Error> {
    let store = Store::open(url).await?;
    store.import_sample_bank().await?;
    let user = store.create_user("bench", true, false).await?.id;
    let new = generate_key().map_err(|e| format!("no randomness: {e}"))?;
    store
        .create_key(
            &user,
            "bench",
            &new.prefix,
            &new.fingerprint,
            Scope::ALL,
            examkit::store::now_ms() + 86_400_000,
        )
        .await?;
    store.close().await;
    Ok(new.secret)
}

/// The sum over the series of a Prometheus metric whose labels hold `label`.
fn metric(text: &str, name: &str, label: &str) -> f64 {
    text.lines()
        .filter(|l| {
            l.strip_prefix(name)
                .is_some_and(|rest| rest.starts_with('{') && rest.contains(label))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// The part of marking a set that comes before its questions can be marked: every script's
/// scheme pages are queued at the start, before any question exists, and the queue is taken in
/// order, so they are all read, and then every script's questions placed, before the last
/// questions are queued. From the service's own metrics (`examkit_job_duration_seconds`): the
/// jobs' summed time, shared by the workers.
struct Prep {
    scheme_pages: f64,
    scheme_seconds: f64,
    plans: f64,
    plan_seconds: f64,
}

impl Prep {
    fn between(before: &str, after: &str) -> Prep {
        let delta = |name: &str, kind: &str| {
            let label = format!("kind=\"{kind}\"");
            metric(after, name, &label) - metric(before, name, &label)
        };
        Prep {
            scheme_pages: delta("examkit_job_duration_seconds_count", "index_page"),
            scheme_seconds: delta("examkit_job_duration_seconds_sum", "index_page"),
            plans: delta("examkit_job_duration_seconds_count", "plan_questions"),
            plan_seconds: delta("examkit_job_duration_seconds_sum", "plan_questions"),
        }
    }
}

/// What every copy's student writes: for each part on the paper, the sample bank's first
/// accepted answer to it (or a line of working where it has none).
fn answers_for(layout: &Value) -> Result<Value, Error> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bank/sample");
    let mut accepted = std::collections::HashMap::<(String, String), String>::new();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "json") || path.ends_with("facets.json") {
            continue;
        }
        let bank: Value = serde_json::from_slice(&std::fs::read(&path)?)?;
        for q in bank["questions"].as_array().into_iter().flatten() {
            let id = q["id"].as_str().unwrap_or_default().to_ascii_lowercase();
            for c in q["revisions"][0]["scheme"]["criteria"]
                .as_array()
                .into_iter()
                .flatten()
            {
                if let (Some(part), Some(answer)) = (c["partId"].as_str(), c["answers"][0].as_str())
                {
                    accepted
                        .entry((id.clone(), part.to_owned()))
                        .or_insert_with(|| answer.replace('$', ""));
                }
            }
        }
    }
    let mut answers = serde_json::Map::new();
    for q in layout["questions"].as_array().into_iter().flatten() {
        let id = q["questionId"]
            .as_str()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let parts: serde_json::Map<String, Value> = q["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["partId"].as_str())
            .map(|part| {
                let text = accepted
                    .get(&(id.clone(), part.to_owned()))
                    .cloned()
                    .unwrap_or_else(|| "working shown above".to_owned());
                (part.to_owned(), Value::String(text))
            })
            .collect();
        answers.insert(id, Value::Object(parts));
    }
    Ok(Value::Object(answers))
}

fn mib(kib: u64) -> String {
    format!("{} MiB", kib / 1024)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let o = options()?;
    let command = service_command(o.examkit.as_ref())?;
    let dir = tempfile::tempdir()?;
    let url = o
        .url
        .clone()
        .unwrap_or_else(|| format!("sqlite://{}/bench.db?mode=rwc", dir.path().display()));
    let database = if url.starts_with("postgres") {
        "PostgreSQL"
    } else {
        "SQLite"
    };
    let key = prepare(&url).await?;
    let counts = Arc::new(StubCounts::default());
    let stub_url = stub(Duration::from_millis(o.delay_ms), counts.clone()).await?;
    let plenty = "1000000".to_owned();
    let args: Vec<String> = [
        "--listen",
        "127.0.0.1:0",
        "--metrics-listen",
        "127.0.0.1:0",
        "--database",
        &url,
        "--data-dir",
        &dir.path().to_string_lossy(),
        "--sample-bank",
        "off",
        "--rate-limits",
        "off",
        "--marking-pages-per-day",
        &plenty,
        "--marking-questions-per-day",
        &plenty,
        "--workers",
        &o.workers.to_string(),
        "--ocr",
        if o.ocr { "on" } else { "off" },
        "--marker",
        "openai",
        "--marker-url",
        &stub_url,
        "--marker-model",
        "bench",
        "--marker-concurrency",
        &o.concurrency.to_string(),
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let service = Service::start(command, &args)?;
    let client = Client::new(service.base.clone(), key);
    let metrics = |http: reqwest::Client, url: String| async move {
        if url.is_empty() {
            return Ok::<String, Error>(String::new());
        }
        Ok(http.get(url).send().await?.text().await?)
    };

    // The paper: sample-bank questions, one more at a time, until it has the pages asked for.
    let listed = client.get("/v1/questions?limit=100").await?;
    let pins: Vec<Value> = listed["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| item["pin"].clone())
        .collect();
    let mut n = o.questions.unwrap_or(1);
    let (paper, export, paper_pages) = loop {
        let take = pins
            .get(..n)
            .ok_or("the sample bank has too few questions")?;
        let paper = uuid::Uuid::new_v4().to_string();
        client
            .post(
                "/v1/papers",
                &json!({ "id": paper, "title": "Benchmark paper", "questions": take, "writingSpace": "smart", "gradeGuide": false }),
                false,
            )
            .await?;
        let export = client
            .post(
                &format!("/v1/papers/{paper}/revisions/1/exports"),
                &json!({}),
                false,
            )
            .await?;
        let pages = export["layout"]["pages"].as_array().map_or(0, Vec::len);
        if o.questions.is_some() || pages >= o.pages {
            break (paper, export, pages);
        }
        n += 1;
    };
    let set = client
        .post(
            "/v1/class-sets",
            &json!({ "paperId": paper, "revision": 1, "copies": o.copies }),
            true,
        )
        .await?["classSet"]
        .clone();
    let set_id = set["id"].as_str().unwrap_or_default().to_owned();
    let per_copy = set["pagesPerCopy"].as_u64().unwrap_or(0) as u32;
    let paper_pages = u32::try_from(paper_pages)?;
    let pdf = client
        .send(
            reqwest::Method::GET,
            &format!("/v1/class-sets/{set_id}/export"),
            None,
            false,
        )
        .await?;

    // Every copy written by hand (the bank's accepted answers) and scanned, then shuffled into
    // files.
    let write = |name: &str, bytes: &[u8]| -> Result<String, Error> {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes)?;
        Ok(path.to_string_lossy().into_owned())
    };
    let set_pdf = write("set.pdf", &pdf)?;
    let layout = write("layout.json", export["layout"].to_string().as_bytes())?;
    let answers = write(
        "answers.json",
        answers_for(&export["layout"])?.to_string().as_bytes(),
    )?;
    let made = Instant::now();
    let mut pages: Vec<RgbImage> = Vec::new();
    let dpi = o.dpi.to_string();
    for copy in 1..=o.copies {
        let first = (copy - 1) * per_copy + 1;
        let range = format!("{first}:{}", first + paper_pages - 1);
        let out = dir.path().join(format!("copy-{copy}.png"));
        let out = out.to_string_lossy();
        let seed = copy.to_string();
        let files = examkit_scanmaker::make(&[
            "--paper",
            &set_pdf,
            "--layout",
            &layout,
            "--answers",
            &answers,
            "--out",
            &out,
            "--pages",
            &range,
            "--skew",
            "0.3:1.5",
            "--noise",
            "0.02",
            "--seed",
            &seed,
            "--dpi",
            &dpi,
            "--font",
            &o.font,
        ])
        .map_err(|e| e.to_string())?;
        for file in files {
            pages.push(image::open(&file)?.to_rgb8());
            std::fs::remove_file(&file)?;
        }
    }
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    for i in (1..pages.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        pages.swap(i, (state % (i as u64 + 1)) as usize);
    }
    let per_file = pages.len().div_ceil(o.files);
    let stack: Vec<Vec<u8>> = pages
        .chunks(per_file)
        .map(|chunk| examkit_scanmaker::pdf_of_images(chunk, o.dpi, 80))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let total_pages = pages.len();
    drop(pages);
    let largest = stack.iter().map(Vec::len).max().unwrap_or(0);
    eprintln!(
        "stack made in {:.1} s: {total_pages} pages in {} files ({} KiB)",
        made.elapsed().as_secs_f64(),
        stack.len(),
        stack.iter().map(Vec::len).sum::<usize>() / 1024
    );

    // The uploads, then the reading, timed from the last upload.
    let before = service.resident();
    let reset = service.reset_peak();
    for (i, file) in stack.into_iter().enumerate() {
        client
            .send(
                reqwest::Method::POST,
                &format!("/v1/class-sets/{set_id}/scans?name=stack-{}.pdf", i + 1),
                Some(("application/pdf", file)),
                false,
            )
            .await?;
    }
    let uploading_peak = service.peak();
    service.reset_peak();
    let uploaded = Instant::now();
    let view = loop {
        let view =
            client.get(&format!("/v1/class-sets/{set_id}")).await?["classSet"]["stack"].clone();
        if view["state"] == "read" {
            break view;
        }
        if uploaded.elapsed() > Duration::from_secs(3600) {
            return Err("the stack was not read within an hour".into());
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let read = uploaded.elapsed();
    let reading_peak = service.peak();
    let after_reading = service.resident();
    let complete = view["copies"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["state"] == "complete")
        .count();
    println!(
        "{} copies x {paper_pages} pages ({n} questions) = {total_pages} pages in {} files (largest {:.1} MB) at {} dpi, OCR {}, {} workers, {database}",
        o.copies,
        o.files,
        largest as f64 / 1e6,
        o.dpi,
        if o.ocr { "on" } else { "off" },
        o.workers,
    );
    println!(
        "last upload to every page read and placed: {:.1} s ({:.2} pages/s)",
        read.as_secs_f64(),
        total_pages as f64 / read.as_secs_f64()
    );
    println!(
        "placed {} of {total_pages} pages ({}); {complete} of {} copies complete",
        view["counts"]["placed"], view["counts"], o.copies
    );

    // Marking: one request, then every script marked.
    let mut marking = None;
    if o.mark {
        let before_metrics = metrics(client.http.clone(), service.metrics.clone()).await?;
        service.reset_peak();
        let started = Instant::now();
        client
            .send(
                reqwest::Method::POST,
                &format!("/v1/class-sets/{set_id}/start"),
                None,
                true,
            )
            .await?;
        let view = loop {
            let view =
                client.get(&format!("/v1/class-sets/{set_id}")).await?["classSet"]["marking"]
                    .clone();
            if view["state"] == "marked" {
                break view;
            }
            if started.elapsed() > Duration::from_secs(3600) {
                return Err("the set was not marked within an hour".into());
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        };
        let elapsed = started.elapsed().as_secs_f64();
        let peak = service.peak();
        let after = service.resident();
        let after_metrics = metrics(client.http.clone(), service.metrics.clone()).await?;
        marking = Some((view, elapsed, peak, after, before_metrics, after_metrics));
    }
    if let Some((view, elapsed, peak, after, before_metrics, after_metrics)) = &marking {
        let scripts = view["scripts"].as_array().cloned().unwrap_or_default();
        let sum = |field: &str| -> u64 {
            scripts
                .iter()
                .map(|s| s["questions"][field].as_u64().unwrap_or(0))
                .sum()
        };
        let questions = sum("total");
        let marked = scripts.iter().filter(|s| s["state"] == "marked").count();
        println!(
            "marked {marked} of {} scripts: {questions} questions ({} completed, {} needs review, {} failed, {} cancelled); the stub answered {} calls, at most {} at once",
            scripts.len(),
            sum("completed"),
            sum("needsReview"),
            sum("failed"),
            sum("cancelled"),
            counts.calls.load(Ordering::SeqCst),
            counts.most.load(Ordering::SeqCst),
        );
        let prep = Prep::between(before_metrics, after_metrics);
        let workers = o.workers as f64;
        let rounds = (questions as usize).div_ceil(o.workers * o.concurrency);
        let delay = o.delay_ms as f64 / 1000.0;
        let ideal =
            prep.scheme_seconds / workers + prep.plan_seconds / workers + rounds as f64 * delay;
        println!(
            "start to every script marked: {elapsed:.1} s; ideal {ideal:.1} s = {:.0} scheme pages read ({:.1} s of jobs / {} workers = {:.1} s) + {:.0} scripts placed ({:.1} s / {} = {:.1} s) + ceil({questions} questions / ({} workers x {} at once)) = {rounds} rounds x {delay:.1} s; ratio {:.2}",
            prep.scheme_pages,
            prep.scheme_seconds,
            o.workers,
            prep.scheme_seconds / workers,
            prep.plans,
            prep.plan_seconds,
            o.workers,
            prep.plan_seconds / workers,
            o.workers,
            o.concurrency,
            elapsed / ideal,
        );
        println!(
            "service memory: {} before the uploads; highest {} while uploading, {} while reading ({} after), {} while marking ({} after)",
            mib(before),
            mib(uploading_peak),
            mib(reading_peak),
            mib(after_reading),
            mib(*peak),
            mib(*after),
        );
    } else {
        println!(
            "service memory: {} before the uploads; highest {} while uploading, {} while reading ({} after)",
            mib(before),
            mib(uploading_peak),
            mib(reading_peak),
            mib(after_reading),
        );
    }
    if marking.is_some() {
        // The marked scripts handed back: the class's PDF (drafts: the stub leaves marks to
        // review), the first returned scripts this service typesets, then the zip.
        for (what, path) in [
            (
                "class PDF",
                format!("/v1/class-sets/{set_id}/returned.pdf?draft=true"),
            ),
            (
                "class zip",
                format!("/v1/class-sets/{set_id}/returned.zip?draft=true"),
            ),
        ] {
            service.reset_peak();
            let before = service.resident();
            let started = Instant::now();
            let bytes = client
                .send(reqwest::Method::GET, &path, None, false)
                .await?;
            let elapsed = started.elapsed().as_secs_f64();
            let pages = if what == "class PDF" {
                format!(
                    ", {} pages",
                    lopdf::Document::load_mem(&bytes)?.get_pages().len()
                )
            } else {
                String::new()
            };
            println!(
                "{what} of {} scripts: {elapsed:.1} s, {:.1} MB{pages}; service memory {} before, highest {} while making it",
                o.copies,
                bytes.len() as f64 / 1e6,
                mib(before),
                mib(service.peak()),
            );
        }
    }
    if !reset {
        println!(
            "(the highest figures are since the service started: its peak could not be reset)"
        );
    }
    drop(service);
    Ok(())
}
