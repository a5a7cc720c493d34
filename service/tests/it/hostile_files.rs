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
    let Some(s) = start(db, generous()).await else {
        return;
    };
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

on_both!(an_amplified_pdf_is_refused_on_every_upload_route);
