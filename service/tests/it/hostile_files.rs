//! Files an attacker would send, on every upload route (an import's assets, an automated
//! session's assets, a class set's stack): refused at upload with `422 unreadable_file` naming
//! the reason, cheaply, nothing stored.

use crate::common;

use std::io::Write as _;

use common::marking::{SAMPLE_QUESTIONS, exported_paper, idem};
use common::{Db, generous, start};
use examkit::auth::Scope;
use reqwest::Method;
use serde_json::json;

/// A one-page PDF whose page's `/Contents` names one deflated stream of `stream_bytes` spaces
/// `references` times: a few kilobytes that decode to `references × stream_bytes` bytes.
fn amplified_pdf(references: usize, stream_bytes: usize) -> Vec<u8> {
    let mut deflated = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    deflated
        .write_all(&vec![b' '; stream_bytes])
        .expect("deflated");
    let stream = deflated.finish().expect("deflated");
    let contents: Vec<&str> = std::iter::repeat_n("4 0 R", references).collect();
    pdf_of(vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents [{}] >>",
            contents.join(" ")
        )
        .into_bytes(),
        stream_object("/Filter /FlateDecode", &stream),
    ])
}

/// A one-page PDF whose page draws a form `fan` times, that form drawing the next `fan` times,
/// `depth` forms deep, the last a small square: `fan^depth` squares from a file of a few hundred
/// bytes.
fn fanned_out_pdf(fan: usize, depth: usize) -> Vec<u8> {
    let draws = "/F Do ".repeat(fan).into_bytes();
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /XObject << /F 5 0 R >> >> /Contents 4 0 R >>".to_vec(),
        stream_object("", &draws),
    ];
    for level in 0..depth {
        let number = 5 + level;
        let (resources, content) = if level + 1 == depth {
            (String::new(), b"0 0 1 1 re f".to_vec())
        } else {
            (
                format!("/Resources << /XObject << /F {} 0 R >> >>", number + 1),
                draws.clone(),
            )
        };
        objects.push(stream_object(
            &format!("/Type /XObject /Subtype /Form /BBox [0 0 10 10] {resources}"),
            &content,
        ));
    }
    pdf_of(objects)
}

/// A stream object with `dict` entries besides its length.
fn stream_object(dict: &str, data: &[u8]) -> Vec<u8> {
    [
        format!("<< /Length {} {dict} >>\nstream\n", data.len()).into_bytes(),
        data.to_vec(),
        b"\nendstream".to_vec(),
    ]
    .concat()
}

/// A PDF file of `objects`, numbered from 1, the first its catalog.
fn pdf_of(objects: Vec<Vec<u8>>) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(object);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// `pdf` uploaded to `route`.
async fn post_pdf(s: &common::Server, route: &str, key: &str, pdf: Vec<u8>) -> common::Resp {
    s.send(
        Method::POST,
        route,
        Some(key),
        &[("content-type", "application/pdf")],
        Some(pdf),
    )
    .await
}

/// This process's peak resident memory (`VmHWM`), in KiB.
fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .expect("the status")
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
        .expect("VmHWM in kB")
}

/// A page naming one small deflated stream 20,000 times (1 MiB of spaces, about 1 KB deflated:
/// 20 GiB once decoded) is refused on every upload route before anything decodes it all, with
/// the server's peak memory barely moving; so is a page whose few streams decode to more than
/// the page's budget, and a page whose forms draw forms past the budget of forms drawn or nest
/// too deep. Nothing is stored.
async fn an_amplified_pdf_is_refused_on_every_upload_route(db: Db) {
    if !common::alone(&format!(
        "hostile_files::an_amplified_pdf_is_refused_on_every_upload_route::{}",
        match db {
            Db::Sqlite => "sqlite",
            Db::Postgres => "postgres",
        }
    )) {
        return;
    }
    let s = start(db, generous()).await;
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Hostile").await;
    let key = s.key(&user, Scope::ALL).await;
    let import = s.import(&key, "Hostile import").await;
    let session = s.automated_session(&key, "Hostile session").await;
    let exported = exported_paper(&s, &key, &SAMPLE_QUESTIONS[..1]).await;
    let made = s
        .post_json(
            "/v1/class-sets",
            &key,
            Some(&idem()),
            json!({ "paperId": exported.id, "revision": 1, "copies": 2 })
                .to_string()
                .as_bytes(),
        )
        .await;
    assert_eq!(made.status, 201, "{}", String::from_utf8_lossy(&made.body));
    let set = made.json()["classSet"]["id"]
        .as_str()
        .expect("the set's id")
        .to_owned();
    let routes = [
        format!("/v1/marking/imports/{import}/assets?kind=work&name=hostile.pdf"),
        format!("/v1/marking/sessions/{session}/assets?kind=work&name=hostile.pdf"),
        format!("/v1/class-sets/{set}/scans?name=hostile.pdf"),
    ];
    let amplified = amplified_pdf(20_000, 1024 * 1024);
    assert!(amplified.len() < 150_000, "{} bytes", amplified.len());
    // Eight references to 5 MiB each: few streams, too much content.
    let heavy = amplified_pdf(8, 5 * 1024 * 1024);
    // Forms drawing forms: 10^8 squares from under 4 KB, and a chain 40 forms deep.
    let fanned = fanned_out_pdf(10, 8);
    assert!(fanned.len() < 4_096, "{} bytes", fanned.len());
    let deep = fanned_out_pdf(1, 40);
    let before = peak_kib();
    for route in &routes {
        for (pdf, says) in [
            (&amplified, "more than 64 streams"),
            (&heavy, "decode to more than 32 MiB"),
            (&fanned, "drawing it would draw more than 10000 forms"),
            (&deep, "its forms nest more than 32 deep"),
        ] {
            let started = std::time::Instant::now();
            let refused = post_pdf(&s, route, &key, pdf.clone()).await;
            let body = refused.assert_error(422, "unreadable_file");
            let message = body["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains(says), "{route}: {message}");
            println!(
                "{route}: {} bytes refused in {:.3} s",
                pdf.len(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    let grew = peak_kib().saturating_sub(before);
    println!("peak memory rose by {} KiB over twelve refusals", grew);
    assert!(grew < 64 * 1024, "peak memory rose by {grew} KiB");
    // Nothing was stored.
    for id in [&import, &session] {
        let read = s
            .get(&format!("/v1/marking/sessions/{id}"), &key)
            .await
            .json();
        assert_eq!(read["session"]["assets"], json!([]), "{read}");
    }
    let read = s.get(&format!("/v1/class-sets/{set}"), &key).await.json();
    assert_eq!(read["classSet"]["stack"]["files"], json!([]), "{read}");
    // Forms within the budgets are drawn as any page: three deep, two at each level.
    let modest = post_pdf(&s, &routes[1], &key, fanned_out_pdf(2, 3)).await;
    assert_eq!(
        modest.status,
        201,
        "{}",
        String::from_utf8_lossy(&modest.body)
    );
}

on_both!(
    an_amplified_pdf_is_refused_on_every_upload_route,
    a_page_past_its_deadline_fails_while_other_accounts_pages_are_read,
);

/// A one-page PDF that fills `paths` shapes of fifty curves each across the whole page: a
/// content stream of a few kilobytes, deflated, that is quick to check and slow to draw (about
/// 4 ms a shape, in a few hundred MiB).
pub(crate) fn slow_pdf(paths: usize) -> Vec<u8> {
    let shape = format!("0 0 m {}f\n", "595 842 0 842 595 0 c ".repeat(50));
    let mut deflated = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    deflated
        .write_all(shape.repeat(paths).as_bytes())
        .expect("deflated");
    let stream = deflated.finish().expect("deflated");
    pdf_of(vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>".to_vec(),
        stream_object("/Filter /FlateDecode", &stream),
    ])
}

/// A page that would take the reader seconds on end: checked at upload in a moment.
pub(crate) const SLOW_SHAPES: usize = 6_000;

/// A one-page PDF whose page is `side` points square, with a line drawn on it.
fn big_page_pdf(side: u32) -> Vec<u8> {
    pdf_of(vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {side} {side}] /Contents 4 0 R >>")
            .into_bytes(),
        stream_object("", b"0 0 m 100 100 l S"),
    ])
}

/// Page processes of the `examkit` binary under `budgets`, and the pool behind them.
pub(crate) fn page_processes(
    budgets: examkit::untrusted::Budgets,
) -> (
    examkit::untrusted::Pages,
    std::sync::Arc<examkit::untrusted::pool::Pool>,
) {
    let pool = std::sync::Arc::new(examkit::untrusted::pool::Pool::new(
        std::path::PathBuf::from(env!("CARGO_BIN_EXE_examkit")),
        budgets,
    ));
    (
        examkit::untrusted::Pages::Isolated(std::sync::Arc::clone(&pool)),
        pool,
    )
}

/// The reason a page failed with, asserting that it failed as the file's fault.
fn failed_because(drawn: Result<image::GrayImage, examkit::untrusted::PageError>) -> String {
    match drawn {
        Err(examkit::untrusted::PageError::File(examkit_scan::ScanError::Unreadable(reason))) => {
            reason
        }
        Err(other) => panic!("failed, but not as the file's fault: {other:?}"),
        Ok(image) => panic!("drawn: {}x{}", image.width(), image.height()),
    }
}

/// After a failure the pool draws the next page in a new process, within its budget.
fn draws_a_blank_page(pages: &examkit::untrusted::Pages, pool: &examkit::untrusted::pool::Pool) {
    let blank = examkit::inspect::blank_pdf(1);
    let drawn = pages
        .render_page(&blank, examkit_scan::Format::Pdf, 1, 72)
        .expect("the next page is drawn");
    assert_eq!(drawn.dimensions(), (595, 842));
    assert!(
        pool.live() <= pool.budgets().processes,
        "{} alive",
        pool.live()
    );
}

/// A page still being drawn at the deadline ends its process: the page fails with the reason,
/// at the deadline rather than when the drawing would have ended, and the next page is drawn.
#[test]
fn a_page_past_its_deadline_fails_and_the_next_is_drawn() {
    let (pages, pool) = page_processes(examkit::untrusted::Budgets {
        processes: 1,
        cpu_seconds: 600,
        deadline: std::time::Duration::from_secs(2),
        ..Default::default()
    });
    let slow = slow_pdf(SLOW_SHAPES);
    assert!(slow.len() < 65_536, "{} bytes", slow.len());
    let started = std::time::Instant::now();
    let reason = failed_because(pages.render_page(&slow, examkit_scan::Format::Pdf, 1, 150));
    let took = started.elapsed();
    assert_eq!(reason, "the page took longer than 2 s to draw");
    println!("the slow page failed after {:.2} s", took.as_secs_f64());
    assert!(took < std::time::Duration::from_secs(30), "{took:?}");
    draws_a_blank_page(&pages, &pool);
}

/// A page that uses up its processor time is ended by the kernel (`SIGXCPU`), and says so.
#[test]
fn a_page_over_its_processor_time_fails_and_the_next_is_drawn() {
    let (pages, pool) = page_processes(examkit::untrusted::Budgets {
        processes: 1,
        cpu_seconds: 1,
        deadline: std::time::Duration::from_secs(600),
        ..Default::default()
    });
    let reason = failed_because(pages.render_page(
        &slow_pdf(SLOW_SHAPES),
        examkit_scan::Format::Pdf,
        1,
        150,
    ));
    assert_eq!(
        reason,
        "the page needed more than 1 s of processor time to draw"
    );
    draws_a_blank_page(&pages, &pool);
}

/// A page whose raster needs more memory than its process may have ends that process (the
/// allocation fails under `RLIMIT_AS`), not the service: the page fails, the next is drawn.
#[test]
fn a_page_over_its_memory_fails_and_the_next_is_drawn() {
    let (pages, pool) = page_processes(examkit::untrusted::Budgets {
        processes: 1,
        memory_mib: 1024,
        ..Default::default()
    });
    // 20,000 points square at 72 dpi: 400 million pixels, 1.6 GB as a colour raster.
    let drawn = pages
        .render_for_index(
            &big_page_pdf(20_000),
            examkit_scan::Format::Pdf,
            1,
            72,
            1_000_000_000,
        )
        .map(|drawn| drawn.raster);
    let reason = failed_because(drawn);
    assert_eq!(
        reason,
        "the page needed more than 1024 MiB of memory to draw"
    );
    draws_a_blank_page(&pages, &pool);
}

/// A page process that crashes on a page (a reader's fault that is not caught, as a panic
/// that aborts) fails that page with the signal, and the pool starts another for the next.
#[test]
fn a_page_whose_process_crashes_fails_and_the_next_is_drawn() {
    let dir = tempfile::tempdir().expect("temp dir");
    let crashed = dir.path().join("crashed");
    // The first process crashes when asked; the ones after it are real page readers.
    let script = format!(
        "if [ -e '{mark}' ]; then exec '{exe}' page-reader; else : > '{mark}'; kill -SEGV $$; fi",
        mark = crashed.display(),
        exe = env!("CARGO_BIN_EXE_examkit"),
    );
    let pool = std::sync::Arc::new(examkit::untrusted::pool::Pool::with_command(
        std::path::PathBuf::from("/bin/sh"),
        vec!["-c".into(), script.into()],
        examkit::untrusted::Budgets {
            processes: 1,
            ..Default::default()
        },
    ));
    let pages = examkit::untrusted::Pages::Isolated(std::sync::Arc::clone(&pool));
    let blank = examkit::inspect::blank_pdf(1);
    let reason = failed_because(pages.render_page(&blank, examkit_scan::Format::Pdf, 1, 72));
    assert_eq!(reason, "the page's reader was ended by signal 11");
    draws_a_blank_page(&pages, &pool);
}

/// A reader that cannot be started is the server's problem, not the file's: a retry may work.
#[test]
fn a_reader_that_cannot_start_is_unavailable_not_unreadable() {
    let pool = examkit::untrusted::pool::Pool::new(
        std::path::PathBuf::from("/nonexistent/examkit"),
        examkit::untrusted::Budgets::default(),
    );
    let pages = examkit::untrusted::Pages::Isolated(std::sync::Arc::new(pool));
    let blank = examkit::inspect::blank_pdf(1);
    match pages.check_pages(&blank, examkit_scan::Format::Pdf, 150, 40_000_000, 80) {
        Err(examkit::untrusted::PageError::Reader(reason)) => {
            assert!(reason.contains("cannot start"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

/// Two callers at once on a pool of one process: the second waits for the first, and both are
/// answered by the same process, never a second.
#[test]
fn callers_beyond_the_budget_wait_for_a_process() {
    let (pages, pool) = page_processes(examkit::untrusted::Budgets {
        processes: 1,
        ..Default::default()
    });
    let blank = examkit::inspect::blank_pdf(3);
    std::thread::scope(|scope| {
        let callers: Vec<_> = (1..=3)
            .map(|page| {
                let (pages, blank) = (&pages, &blank);
                scope.spawn(move || pages.render_page(blank, examkit_scan::Format::Pdf, page, 36))
            })
            .collect();
        for caller in callers {
            let drawn = caller.join().expect("no panic").expect("drawn");
            assert!((297..=298).contains(&drawn.width()), "{}", drawn.width());
        }
    });
    assert_eq!(pool.live(), 1);
}

/// A page that passes the upload check but would take minutes to draw: its page process is ended
/// at the deadline, the page fails with that reason and is not tried again, the worker goes on
/// to the session's next page, another account's session is read meanwhile, and the service
/// answers throughout.
async fn a_page_past_its_deadline_fails_while_other_accounts_pages_are_read(db: Db) {
    let (pages, _pool) = page_processes(examkit::untrusted::Budgets {
        processes: 2,
        cpu_seconds: 600,
        deadline: std::time::Duration::from_secs(3),
        ..Default::default()
    });
    let shared = pages.clone();
    let s = common::start_with(db, generous(), move |state| state.marking.pages = shared).await;
    let session_of = |title: &'static str, work: Vec<u8>| {
        let s = &s;
        async move {
            let user = s.user(title).await;
            let key = s.key(&user, Scope::ALL).await;
            let session = s.automated_session(&key, title).await;
            common::marking::upload(s, &key, &session, "work", "work.pdf", work).await;
            let scheme = examkit::inspect::blank_pdf(1);
            common::marking::upload(s, &key, &session, "scheme", "scheme.pdf", scheme).await;
            (key, session)
        }
    };
    let started = std::time::Instant::now();
    let (slow_key, slow) = session_of("Slow", slow_pdf(SLOW_SHAPES)).await;
    let upload_took = started.elapsed();
    let (quick_key, quick) = session_of("Quick", examkit::inspect::blank_pdf(2)).await;
    let workers = common::marking::workers(&s, |config| {
        config.pages = pages.clone();
        config.workers = 2;
    });
    common::marking::start(&s, &slow_key, &slow).await;
    common::marking::start(&s, &quick_key, &quick).await;
    let mut slowest_health = std::time::Duration::ZERO;
    let indexed = |key: &str, session: &str| {
        let (s, key, session) = (&s, key.to_owned(), session.to_owned());
        async move {
            let view = s
                .get(&format!("/v1/marking/sessions/{session}"), &key)
                .await
                .json();
            let view = view["session"].clone();
            (view["indexingFinished"] == true).then_some(view)
        }
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    let (mut slow_view, mut quick_view) = (None, None);
    while slow_view.is_none() || quick_view.is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "indexing did not finish"
        );
        let asked = std::time::Instant::now();
        let health = s.get("/healthz", "").await;
        slowest_health = slowest_health.max(asked.elapsed());
        assert_eq!(health.status, 200);
        if quick_view.is_none() {
            quick_view = indexed(&quick_key, &quick).await;
        }
        if slow_view.is_none() {
            slow_view = indexed(&slow_key, &slow).await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    workers.shutdown().await;
    println!(
        "the slow file was checked at upload in {:.2} s; /healthz took at most {:.0} ms meanwhile",
        upload_took.as_secs_f64(),
        slowest_health.as_secs_f64() * 1000.0
    );
    assert!(
        slowest_health < std::time::Duration::from_secs(2),
        "/healthz took {slowest_health:?}"
    );
    let (slow_view, quick_view) = (slow_view.expect("slow"), quick_view.expect("quick"));
    let quick_indexing = &quick_view["indexing"];
    assert_eq!(quick_indexing["state"], "completed", "{quick_indexing}");
    assert_eq!(quick_indexing["pagesFailed"], 0, "{quick_indexing}");
    let indexing = &slow_view["indexing"];
    assert_eq!(indexing["pagesFailed"], 1, "{indexing}");
    let pages_read = indexing["pages"].as_array().expect("pages");
    let failed: Vec<&serde_json::Value> = pages_read
        .iter()
        .filter(|p| p["state"] == "failed")
        .collect();
    assert_eq!(failed.len(), 1, "{indexing}");
    assert!(
        failed[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("the page took longer than 3 s to draw")),
        "{}",
        failed[0]
    );
    // The worker went on to the scheme's page.
    assert!(pages_read.iter().any(|p| p["state"] == "ok"), "{indexing}");
}
