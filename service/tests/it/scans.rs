//! Scans as students hand them in, indexed through the HTTP API on SQLite and PostgreSQL: one
//! image a page (PNG and JPEG), pages turned 90° and 270°, skewed and noisy, and phone photos.
//! Each page's code, orientation and questions are checked, and the words the student wrote are
//! read back with boxes inside the answer space they were written in.

use crate::common;

use std::collections::HashMap;

use common::marking::{
    Exported, SAMPLE_QUESTIONS, exported_paper, fast, poll_until, regions, sample_answers, scan,
    session_from_paper, start, text, turn, upload, within, workers,
};
use common::{Db, Server, generous, start_with};
use examkit::auth::Scope;
use serde_json::Value;

async fn setup(db: Db) -> (Server, String, Exported) {
    let s = start_with(db, generous(), |state| fast(&mut state.marking)).await;
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Scans").await;
    let key = s.key(&user, Scope::ALL).await;
    let paper = exported_paper(&s, &key, &SAMPLE_QUESTIONS).await;
    (s, key, paper)
}

/// Uploads each scanned page as a work asset of a new session from the paper, indexes them, and
/// returns the session's view with the asset id of each page of the paper (by page number).
async fn indexed(
    s: &Server,
    key: &str,
    paper: &Exported,
    pages: Vec<(String, Vec<u8>)>,
) -> (Value, HashMap<u64, String>) {
    let session = session_from_paper(s, key, &paper.id).await;
    let mut assets = HashMap::new();
    for (i, (name, bytes)) in pages.into_iter().enumerate() {
        let id = upload(s, key, &session, "work", &name, bytes).await;
        assets.insert(i as u64 + 1, id);
    }
    let indexing = workers(s, |_| {});
    start(s, key, &session).await;
    let view = poll_until(s, key, &session, 600, |v| v["indexingFinished"] == true).await;
    indexing.shutdown().await;
    (view, assets)
}

/// The indexing result of the work asset's only page.
fn page_of<'a>(view: &'a Value, asset: &str) -> &'a Value {
    view["indexing"]["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .find(|p| p["assetId"] == asset)
        .expect("the asset's page is indexed")
}

/// Checks each page's code, orientation and questions, found by code.
fn check_pages(view: &Value, assets: &HashMap<u64, String>, paper: &str, turns: &[(u64, u64)]) {
    assert_eq!(view["indexing"]["state"], "completed", "{view}");
    for (number, asset) in assets {
        let page = page_of(view, asset);
        assert_eq!(page["state"], "ok", "{page}");
        assert_eq!(page["page"], 1, "an image is one page: {page}");
        assert_eq!(page["textSource"], "ocr", "{page}");
        assert_eq!(page["pageCode"]["paperId"], paper, "{page}");
        assert_eq!(page["pageCode"]["kind"], "question-paper", "{page}");
        assert_eq!(page["pageCode"]["page"], *number, "{page}");
        let expected = turns
            .iter()
            .find(|(p, _)| p == number)
            .map_or(0, |(_, d)| *d);
        assert_eq!(page["orientation"], expected, "page {number}: {page}");
        for found in page["questions"].as_array().expect("questions") {
            assert_eq!(found["how"], "pageCode", "{page}");
        }
    }
}

/// The words read on an asset's only page, through the page route.
async fn words(s: &Server, key: &str, asset: &str) -> Vec<Value> {
    let resp = s
        .get(&format!("/v1/marking/assets/{asset}/pages/1"), key)
        .await;
    assert_eq!(resp.status, 200, "{}", text(&resp));
    resp.json()["page"]["words"]
        .as_array()
        .expect("words")
        .clone()
}

/// Asserts that the student's `written` answer to `part` of question `number` is read, and that
/// the box of the word that says it lies inside that part's answer space as displayed on the
/// scanned page (turned `degrees`).
async fn written_word_is_located(
    s: &Server,
    key: &str,
    paper: &Exported,
    assets: &HashMap<u64, String>,
    (number, part, written): (u64, &str, &[&str]),
    degrees: u64,
) {
    let spaces = regions(&paper.layout, number, part);
    assert!(
        !spaces.is_empty(),
        "question {number}{part} has an answer space"
    );
    let page = spaces[0]["page"].as_u64().expect("page");
    let read = words(s, key, &assets[&page]).await;
    // Letters and digits only: OCR of handwriting drops a decimal point now and then, and may
    // read `x = 9` as one word, `X=9`: what follows its last `=` is then the number.
    let plain = |t: &str| -> String { t.chars().filter(|c| c.is_alphanumeric()).collect() };
    let reads = |t: &str, x: &str| {
        plain(t) == plain(x)
            || t.rsplit_once('=')
                .is_some_and(|(_, after)| plain(after) == plain(x))
    };
    let found: Vec<&Value> = read
        .iter()
        .filter(|w| {
            w["text"]
                .as_str()
                .is_some_and(|t| written.iter().any(|x| reads(t, x)))
        })
        .collect();
    let all: Vec<&str> = read.iter().filter_map(|w| w["text"].as_str()).collect();
    assert!(
        !found.is_empty(),
        "{written:?} is read on page {page}: {all:?}"
    );
    for word in found {
        assert!(
            spaces.iter().filter(|r| r["page"] == page).any(|r| within(
                &turn(r, degrees),
                &word["bbox"],
                0.01
            )),
            "{written:?} lies in the answer space of {number}{part} on page {page} turned {degrees}: {word} {spaces:?}"
        );
    }
}

async fn page_images_turned_sideways_are_indexed(db: Db) {
    let (s, key, paper) = setup(db).await;
    // Page 2 fed sideways one way, page 3 the other; odd pages as PNG, even pages as JPEG.
    let turns = [(2, 90), (3, 270)];
    let common = ["--rotate", "2:90,3:270", "--skew", "0.7", "--noise", "0.02"];
    let png = scan(
        &paper,
        &sample_answers(),
        &[
            &common[..],
            &["--format", "png", "--seed", "5", "--dpi", "200"],
        ]
        .concat(),
    );
    let jpeg = scan(
        &paper,
        &sample_answers(),
        &[
            &common[..],
            &["--format", "jpeg", "--seed", "6", "--dpi", "200"],
        ]
        .concat(),
    );
    assert_eq!(png.len(), jpeg.len());
    assert!(png.len() >= 3, "the paper has at least three pages");
    let pages: Vec<(String, Vec<u8>)> = png
        .into_iter()
        .zip(jpeg)
        .enumerate()
        .map(|(i, (png, jpeg))| if i % 2 == 0 { png } else { jpeg })
        .collect();
    let (view, assets) = indexed(&s, &key, &paper, pages).await;
    check_pages(&view, &assets, &paper.id, &turns);
    let turned = |page: u64| turns.iter().find(|(p, _)| *p == page).map_or(0, |t| t.1);
    // A number the student wrote in each part, inside the answer space it was written in.
    for written in [(2, "b", &["1.7397", "1.7692"][..]), (1, "c", &["9"][..])] {
        let page = regions(&paper.layout, written.0, written.1)[0]["page"]
            .as_u64()
            .expect("page");
        written_word_is_located(&s, &key, &paper, &assets, written, turned(page)).await;
    }
}

async fn phone_photos_are_indexed(db: Db) {
    let (s, key, paper) = setup(db).await;
    let turns = [(1, 180)];
    let pages = scan(
        &paper,
        &sample_answers(),
        &[
            "--photo", "--format", "jpeg", "--rotate", "1:180", "--seed", "7", "--dpi", "200",
        ],
    );
    let (view, assets) = indexed(&s, &key, &paper, pages).await;
    check_pages(&view, &assets, &paper.id, &turns);
}

on_both!(
    page_images_turned_sideways_are_indexed,
    phone_photos_are_indexed
);
