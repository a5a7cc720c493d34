//! A class's scanned stack split into scripts, timed as a client sees it: a paper of the sample
//! bank's questions is printed as a class set of numbered copies, every copy is written in a
//! handwriting font and scanned by the bundled scan maker, the pages are shuffled into a few PDF
//! files and uploaded to the set, and the set is polled until every page of the stack is read and
//! placed.
//!
//! ```text
//! OMP_THREAD_LIMIT=1 cargo run --release -p examkit --example class_stack_bench -- \
//!     [DATABASE_URL] [--copies 30] [--questions 6] [--files 3] [--workers 2] [--dpi 150] \
//!     [--ocr on|off] [--font PATH]
//! ```
//!
//! Without a URL it uses a fresh SQLite file in a temporary directory. It prints the stack's
//! size, the time from the last upload to the last page read and placed (pages per second), and
//! the service process's resident memory before the uploads and at its highest while the stack
//! was read (sampled every 50 ms), to compare between numbers of copies.

#[path = "support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use examkit::marking::MarkingConfig;
use image::RgbImage;
use serde_json::{Value, json};
use support::{Bench, Error};

struct Options {
    url: Option<String>,
    copies: u32,
    questions: usize,
    files: usize,
    workers: usize,
    dpi: u32,
    ocr: bool,
    font: String,
}

fn options() -> Result<Options, Error> {
    let mut o = Options {
        url: None,
        copies: 30,
        questions: 6,
        files: 3,
        workers: 2,
        dpi: 150,
        ocr: true,
        font: "/usr/share/fonts/opentype/comic-neue/ComicNeue-Regular.otf".into(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--copies" => o.copies = value()?.parse()?,
            "--questions" => o.questions = value()?.parse()?,
            "--files" => o.files = value()?.parse()?,
            "--workers" => o.workers = value()?.parse()?,
            "--dpi" => o.dpi = value()?.parse()?,
            "--ocr" => o.ocr = value()? != "off",
            "--font" => o.font = value()?,
            other if !other.starts_with("--") => o.url = Some(other.to_owned()),
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    if o.files == 0 || o.copies == 0 {
        return Err("--files and --copies are at least 1".into());
    }
    Ok(o)
}

/// This process's resident memory now, in KiB (Linux).
fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kib| kib.parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let o = options()?;
    let bench = Bench::start(o.url.clone()).await?;
    let (client, store) = (&bench.client, bench.store.clone());
    let dir = tempfile::tempdir()?;
    // The paper, its export, and the class set.
    let listed = client
        .get(&format!("/v1/questions?limit={}", o.questions))
        .await?;
    let pins: Vec<Value> = listed["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|item| item["pin"].clone())
        .collect();
    let paper = uuid::Uuid::new_v4().to_string();
    client
        .post(
            "/v1/papers",
            &json!({ "id": paper, "title": "Benchmark paper", "questions": pins, "writingSpace": "smart", "gradeGuide": false }),
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
    let set = client
        .post(
            "/v1/class-sets",
            &json!({ "paperId": paper, "revision": 1, "copies": o.copies }),
            true,
        )
        .await?["classSet"]
        .clone();
    let set_id = set["id"].as_str().unwrap_or_default().to_owned();
    let paper_pages = set["paperPages"].as_u64().unwrap_or(0) as u32;
    let per_copy = set["pagesPerCopy"].as_u64().unwrap_or(0) as u32;
    let pdf = client
        .bytes(&format!("/v1/class-sets/{set_id}/export"))
        .await?;

    // Every copy written (blank answers: the scan maker writes nothing without answers) and
    // scanned, then shuffled into files.
    let write = |name: &str, bytes: &[u8]| -> Result<String, Error> {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes)?;
        Ok(path.to_string_lossy().into_owned())
    };
    let set_pdf = write("set.pdf", &pdf)?;
    let layout = write("layout.json", export["layout"].to_string().as_bytes())?;
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
            "--paper", &set_pdf, "--layout", &layout, "--out", &out, "--pages", &range, "--skew",
            "0.3:1.5", "--noise", "0.02", "--seed", &seed, "--dpi", &dpi, "--font", &o.font,
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
    eprintln!(
        "stack made in {:.1} s: {total_pages} pages in {} files ({} KiB)",
        made.elapsed().as_secs_f64(),
        stack.len(),
        stack.iter().map(Vec::len).sum::<usize>() / 1024
    );

    // Workers first (as a running service has them), then the uploads; timed from the last.
    let config = MarkingConfig {
        workers: o.workers,
        ocr: o.ocr,
        dpi: o.dpi,
        poll: Duration::from_millis(50),
        ..MarkingConfig::default()
    };
    let workers = examkit::marking::worker::spawn(store.clone(), config)?;
    let before = resident_kib();
    let mut peak = before;
    for (i, file) in stack.into_iter().enumerate() {
        client
            .send(
                reqwest::Method::POST,
                &format!("/v1/class-sets/{set_id}/scans?name=stack-{}.pdf", i + 1),
                Some(("application/pdf", file)),
                false,
            )
            .await?;
        peak = peak.max(resident_kib());
    }
    let uploaded = Instant::now();
    let view = loop {
        peak = peak.max(resident_kib());
        let view =
            client.get(&format!("/v1/class-sets/{set_id}")).await?["classSet"]["stack"].clone();
        if view["state"] == "read" {
            break view;
        }
        if uploaded.elapsed() > Duration::from_secs(3600) {
            return Err("the stack was not read within an hour".into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let read = uploaded.elapsed();
    workers.shutdown().await;
    let database = bench.database();
    bench.stop();

    let complete = view["copies"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["state"] == "complete")
        .count();
    println!(
        "{} copies x {paper_pages} pages = {total_pages} pages in {} files at {} dpi, OCR {}, {} workers, {}",
        o.copies,
        o.files,
        o.dpi,
        if o.ocr { "on" } else { "off" },
        o.workers,
        database
    );
    println!(
        "last upload to every page read and placed: {:.1} s ({:.2} pages/s)",
        read.as_secs_f64(),
        total_pages as f64 / read.as_secs_f64()
    );
    println!(
        "placed {} of {total_pages} pages; {complete} of {} copies complete",
        view["counts"]["placed"], o.copies
    );
    println!(
        "resident memory: {} MiB before the uploads, {} MiB at most while reading",
        before / 1024,
        peak / 1024
    );
    Ok(())
}
