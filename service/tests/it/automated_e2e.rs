//! The whole flow of automated marking through the HTTP API on SQLite and PostgreSQL, with a scan
//! the test makes as a student's would look: a paper from the sample bank, the student's answers
//! written by hand (a handwriting font) into its answer spaces (some right, one wrong, some blank),
//! rasterised, one page turned upside down, skewed and noisy; a session from the paper, the scan
//! uploaded, one `start`, polled until every question is terminal; then the located results are
//! checked against the engine, and one decision is reviewed.

use crate::common;

use std::collections::HashMap;
use std::time::Instant;

use common::marking::{
    SAMPLE_QUESTIONS, all_terminal, exported_paper, exported_paper_with_id, holds, poll_until,
    regions, sample_answers, scan, session_from_paper, start, text, turn, upload, workers,
};
use common::{Db, generous, start_with};
use examkit::auth::Scope;
use reqwest::Method;
use serde_json::{Value, json};

async fn a_handwritten_scan_is_marked_end_to_end(db: Db) {
    let s = start_with(db, generous(), |_| {}).await;
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Teacher").await;
    let key = s.key(&user, Scope::ALL).await;
    // The paper, saved and exported; its layout comes with the export.
    let exported = exported_paper_with_id(
        &s,
        &key,
        &SAMPLE_QUESTIONS,
        "4d51bccf-e097-4b5f-9dda-1962c7c4446b",
    )
    .await;
    let (paper, layout) = (exported.id.clone(), exported.layout.clone());
    // The completed scan: page 2 fed upside down.
    let files = scan(
        &exported,
        &sample_answers(),
        &[
            "--rotate", "2:180", "--skew", "0.8", "--noise", "0.02", "--seed", "11", "--dpi", "200",
        ],
    );
    // A session from the paper; the scan uploaded; one start.
    let session = session_from_paper(&s, &key, &paper).await;
    let (name, bytes) = files.into_iter().next().expect("the scan");
    let work = upload(&s, &key, &session, "work", &name, bytes).await;
    let marking = workers(&s, |_| {});
    let started = Instant::now();
    start(&s, &key, &session).await;
    let view = poll_until(&s, &key, &session, 600, |v| all_terminal(v, 3)).await;
    eprintln!(
        "start to last terminal status: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    marking.shutdown().await;

    // Indexing: every page is the student's, placed by its page code; page 2 upside down.
    let pages = view["indexing"]["pages"].as_array().expect("pages");
    let work_pages: Vec<&Value> = pages
        .iter()
        .filter(|p| p["assetId"] == work.as_str())
        .collect();
    assert!(!work_pages.is_empty());
    let answered: Vec<u64> = vec![1, 2];
    for page in &work_pages {
        // A page with the student's writing is work; a page they left untouched (the cover, the
        // blank third question) is a blank page of their script: never evidence of an award.
        let labels: Vec<u64> = page["questions"]
            .as_array()
            .expect("questions")
            .iter()
            .filter_map(|q| q["label"].as_str()?.parse().ok())
            .collect();
        if labels.iter().any(|l| answered.contains(l)) {
            assert_eq!(page["role"], "work", "{page}");
            assert_eq!(page["evidence"], true);
        } else {
            assert_eq!(page["role"], "blank", "{page}");
            assert_eq!(page["evidence"], false);
        }
        assert_eq!(page["pageCode"]["paperId"], paper.as_str(), "{page}");
        let expected = if page["page"] == 2 { 180 } else { 0 };
        assert_eq!(page["orientation"], expected, "{page}");
        for found in page["questions"].as_array().expect("questions") {
            assert_eq!(found["how"], "pageCode");
        }
    }

    let orientation: HashMap<String, u64> = work_pages
        .iter()
        .map(|p| {
            (
                p["pageId"].as_str().expect("id").to_owned(),
                p["orientation"].as_u64().expect("degrees"),
            )
        })
        .collect();
    // Results: each question's saved decisions give the engine's score range, and every
    // allocation is located on a selected work page.
    let questions: HashMap<String, Value> = view["questions"]
        .as_array()
        .expect("questions")
        .iter()
        .map(|q| (q["label"].as_str().expect("label").to_owned(), q.clone()))
        .collect();
    for (label, question) in &questions {
        assert!(
            matches!(
                question["status"].as_str(),
                Some("completed" | "needs_review")
            ),
            "{label}: {question}"
        );
        let allocations = question["allocations"].as_array().expect("allocations");
        assert!(!allocations.is_empty(), "{question}");
        let awarded = allocations
            .iter()
            .filter(|a| a["decision"] == "awarded")
            .count() as i64;
        let uncertain = allocations
            .iter()
            .filter(|a| a["decision"] == "uncertain")
            .count() as i64;
        assert_eq!(question["score"]["awarded"], awarded, "{question}");
        assert_eq!(
            question["score"]["possible"],
            awarded + uncertain,
            "{question}"
        );
        assert_eq!(question["score"]["max"], allocations.len() as i64);
        for a in allocations {
            for e in a["evidence"].as_array().expect("evidence") {
                assert!(
                    e["pageId"].as_str().expect("page").starts_with(&work),
                    "{a}"
                );
            }
        }
    }
    // Question 3 is blank: every allocation withheld, located on its part's answer space, quoted
    // as blank.
    let blank = &questions["3"];
    for a in blank["allocations"].as_array().expect("allocations") {
        assert_eq!(a["submitted"], "withheld", "{a}");
        let evidence = &a["evidence"][0];
        assert!(
            evidence["quote"]
                .as_str()
                .expect("quote")
                .starts_with("blank"),
            "{a}"
        );
        let part = a["partId"].as_str().expect("part");
        let degrees = orientation[evidence["pageId"].as_str().expect("page")];
        assert!(
            regions(&layout, 3, part)
                .iter()
                .any(|r| holds(&turn(r, degrees), &evidence["box"])),
            "{a}"
        );
    }
    assert_eq!(blank["score"]["awarded"], 0);
    // Question 1 (b) is blank: withheld on its answer space.
    let first = &questions["1"];
    let b_allocations: Vec<&Value> = first["allocations"]
        .as_array()
        .expect("allocations")
        .iter()
        .filter(|a| a["partId"] == "b")
        .collect();
    assert!(!b_allocations.is_empty());
    for a in b_allocations {
        assert_eq!(a["submitted"], "withheld", "{a}");
    }
    // Nothing is awarded that the student did not write: the wrong final answer of 1 (c) is
    // not awarded, and method marks are left to a person.
    for a in first["allocations"].as_array().expect("allocations") {
        if a["partId"] == "c" {
            assert_ne!(a["submitted"], "awarded", "{a}");
        }
        if a["code"]
            .as_str()
            .expect("code")
            .trim_start_matches('d')
            .starts_with('M')
            && a["submitted"] != "withheld"
        {
            assert_eq!(a["submitted"], "uncertain", "{a}");
        }
    }
    // Every award's evidence box lies in its part's answer space, and its quote is what was read.
    let mut awards = 0;
    for (label, question) in &questions {
        let number: u64 = label.parse().expect("number");
        for a in question["allocations"].as_array().expect("allocations") {
            if a["submitted"] != "awarded" {
                continue;
            }
            awards += 1;
            let evidence = &a["evidence"][0];
            let part = a["partId"].as_str().expect("part");
            let degrees = orientation[evidence["pageId"].as_str().expect("page")];
            assert!(
                regions(&layout, number, part)
                    .iter()
                    .any(|r| holds(&turn(r, degrees), &evidence["box"])),
                "{a}"
            );
            assert!(!evidence["quote"].as_str().expect("quote").is_empty());
        }
    }
    eprintln!("awards made by the built-in marker: {awards}");
    assert!(
        awards >= 1,
        "the neat hand's final answers are read and awarded"
    );
    assert!(
        awards >= 1,
        "the neat hand's final answers are read and awarded"
    );
    for q in questions.values() {
        for a in q["allocations"].as_array().expect("allocations") {
            eprintln!(
                "Q{} {} {} {}: {}",
                q["label"], a["criterionId"], a["code"], a["submitted"], a["evidence"][0]["quote"]
            );
        }
    }

    // A review decides one uncertain allocation, recomputed through the engine.
    let (id, criterion, revision, page) = questions
        .values()
        .find_map(|q| {
            q["allocations"]
                .as_array()?
                .iter()
                .find(|a| {
                    a["decision"] == "uncertain"
                        && a["conditions"].as_array().is_some_and(Vec::is_empty)
                        && a["dependsOn"].as_array().is_some_and(Vec::is_empty)
                })
                .map(|a| {
                    (
                        q["id"].as_str().unwrap_or("").to_owned(),
                        a["criterionId"].as_str().unwrap_or("").to_owned(),
                        q["revision"].as_i64().unwrap_or(0),
                        a["evidence"][0]["pageId"].as_str().unwrap_or("").to_owned(),
                    )
                })
        })
        .expect("an uncertain allocation without conditions or dependencies");
    let before = questions
        .values()
        .find(|q| q["id"] == id.as_str())
        .expect("question")
        .clone();
    let review = json!({ "revision": revision, "decisions": [{
        "criterionId": criterion, "outcome": "withheld", "reason": "checked by the teacher: not shown",
        "evidence": [{ "pageId": page, "quote": "the student's working", "box": { "x": 0.1, "y": 0.2, "width": 0.5, "height": 0.1 } }],
        "conditionChecks": [] }] });
    let resp = s
        .send(
            Method::PATCH,
            &format!("/v1/marking/questions/{id}"),
            Some(&key),
            &[("content-type", "application/json")],
            Some(review.to_string().into_bytes()),
        )
        .await;
    assert_eq!(resp.status, 200, "{}", text(&resp));
    let after = resp.json()["question"].clone();
    assert_eq!(after["revision"], revision + 1);
    // Withholding it lowers what is possible (by more when other marks depend on it).
    assert!(
        after["score"]["possible"].as_i64() < before["score"]["possible"].as_i64(),
        "{before} {after}"
    );
    assert!(after["score"]["awarded"].as_i64() <= before["score"]["awarded"].as_i64());
    let reviewed = after["allocations"]
        .as_array()
        .expect("allocations")
        .iter()
        .find(|a| a["criterionId"] == criterion.as_str())
        .expect("criterion")
        .clone();
    assert_eq!(reviewed["decision"], "withheld");
}

/// Without OCR no words are read, yet the answer spaces the student wrote in are not blank: the
/// ink added to the clean paper says so, and those marks are left uncertain for a person, while the
/// part left empty is withheld as blank.
async fn unread_writing_is_uncertain_never_blank(db: Db) {
    let s = start_with(db, generous(), |_| {}).await;
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Unread").await;
    let key = s.key(&user, Scope::ALL).await;
    let question = SAMPLE_QUESTIONS[0];
    let paper = exported_paper(&s, &key, &[question]).await;
    let answers = json!({ question: { "a": "fg(3) = 7", "c": "x = 5" } });
    let session = session_from_paper(&s, &key, &paper.id).await;
    for (name, bytes) in scan(&paper, &answers, &["--dpi", "150", "--seed", "4"]) {
        upload(&s, &key, &session, "work", &name, bytes).await;
    }
    let marking = workers(&s, |config| config.ocr = false);
    start(&s, &key, &session).await;
    let view = poll_until(&s, &key, &session, 300, |v| all_terminal(v, 1)).await;
    marking.shutdown().await;
    let question = &view["questions"][0];
    assert_eq!(question["status"], "needs_review", "{question}");
    for a in question["allocations"].as_array().expect("allocations") {
        let part = a["partId"].as_str().expect("part");
        let quote = a["evidence"][0]["quote"].as_str().expect("quote");
        match part {
            "b" => {
                assert_eq!(a["submitted"], "withheld", "{a}");
                assert!(quote.starts_with("blank"), "{a}");
            }
            _ => {
                assert_eq!(a["submitted"], "uncertain", "{a}");
                if a["code"].as_str().is_some_and(|c| c.starts_with('A')) {
                    assert!(quote.starts_with("unread"), "{a}");
                    assert!(
                        a["explanation"]
                            .as_str()
                            .is_some_and(|r| r.contains("no words could be read")),
                        "{a}"
                    );
                }
            }
        }
    }
    assert_eq!(question["score"]["awarded"], 0);
}

/// The words of a clean question paper as printed, by `pdftotext` (poppler).
fn printed_words(pdf: &[u8]) -> Vec<String> {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("paper.pdf");
    std::fs::write(&path, pdf).expect("write");
    let out = std::process::Command::new("pdftotext")
        .arg(&path)
        .arg("-")
        .output()
        .expect("pdftotext runs (poppler-utils)");
    assert!(out.status.success(), "pdftotext: {out:?}");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// Whether `quote` is a run of the printed page's words: one printed word that is a part's mark
/// (`(2)`) or a run of two or more printed words in their order.
fn quotes_print(quote: &str, printed: &[String]) -> bool {
    let words: Vec<&str> = quote.split_whitespace().collect();
    match words.as_slice() {
        [] => false,
        [one] => {
            one.starts_with('(')
                && one.ends_with(')')
                && one[1..one.len() - 1].chars().all(|c| c.is_ascii_digit())
                && printed.iter().any(|p| p == one)
        }
        run => printed
            .windows(run.len())
            .any(|w| w.iter().zip(run.iter()).all(|(p, q)| p == q)),
    }
}

/// The built-in marker on scans as scanners and phones make them, skewed and photographed: a
/// part the student left blank has every criterion withheld as blank (no ink was added in its
/// space, whatever printed words the skewed space takes in), and no decision quotes the printed
/// page's words as the student's answer. The marker reads pages the same whatever the
/// database, so this runs on SQLite alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skewed_and_photographed_blank_parts_are_withheld_and_print_never_quoted() {
    let s = start_with(Db::Sqlite, generous(), |_| {}).await;
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Skewed").await;
    let key = s.key(&user, Scope::ALL).await;
    let exported = exported_paper(&s, &key, &SAMPLE_QUESTIONS[..2]).await;
    let printed = printed_words(&exported.question_paper);
    assert!(
        quotes_print("(2)", &printed),
        "the parts' marks are printed"
    );
    let kinds: [(&str, &[&str]); 2] = [
        (
            "skewed",
            &[
                "--skew", "1.8", "--noise", "0.03", "--seed", "21", "--dpi", "200",
            ],
        ),
        (
            "photo",
            &[
                "--photo",
                "--perspective",
                "5",
                "--curl",
                "0.015",
                "--uneven",
                "0.08",
                "--noise",
                "0.02",
                "--quality",
                "75",
                "--seed",
                "22",
                "--dpi",
                "150",
            ],
        ),
    ];
    let marking = workers(&s, |_| {});
    for (kind, options) in kinds {
        let session = session_from_paper(&s, &key, &exported.id).await;
        for (name, bytes) in scan(&exported, &sample_answers(), options) {
            upload(&s, &key, &session, "work", &name, bytes).await;
        }
        start(&s, &key, &session).await;
        let view = poll_until(&s, &key, &session, 600, |v| all_terminal(v, 2)).await;
        let mut blank_criteria = 0;
        for q in view["questions"].as_array().expect("questions") {
            let label = q["label"].as_str().expect("label");
            for a in q["allocations"].as_array().expect("allocations") {
                let part = a["partId"].as_str().expect("part");
                let quote = a["evidence"][0]["quote"].as_str().unwrap_or_default();
                // 1 (b) was left blank (see `sample_answers`).
                if (label, part) == ("1", "b") {
                    assert_eq!(a["submitted"], "withheld", "{kind} Q{label}: {a}");
                    assert!(quote.starts_with("blank"), "{kind} Q{label}: {a}");
                    blank_criteria += 1;
                }
                assert!(
                    !quotes_print(quote, &printed),
                    "{kind} Q{label}: the printed page quoted as the answer: {a}"
                );
            }
        }
        assert!(blank_criteria > 0, "{kind}: 1 (b) has criteria: {view}");
    }
    marking.shutdown().await;
}

on_both!(
    a_handwritten_scan_is_marked_end_to_end,
    unread_writing_is_uncertain_never_blank
);
