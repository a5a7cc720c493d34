//! A class's scanned stack through the HTTP API: a set printed from a roster, each student's copy
//! written in their own hand (different fonts and slants) and scanned (turned, skewed, noisy),
//! the pages shuffled across three files with one page scanned twice identically, one twice
//! differently, one missing, one from another print run, one whose code is covered, and one
//! student absent. Every page must be accounted for exactly; then a person places the covered
//! page, resolves the conflict and marks a copy absent and present again, each recorded with the
//! key that decided it. Then the set is marked: a script per copy sat, each marked from its own
//! student's pages only, the questions on a page never scanned waiting for a person, and a script
//! made and marked again when a later decision changes it. On SQLite with files in the database,
//! and on PostgreSQL with them in an object store when one is configured (`tests/s3-server.sh`).
//!
//! With a vision model configured, the names students wrote on their covers are read and matched
//! to the roster as a whole: a student in another's seat, a misread name, a blank line and a
//! visitor, each flagged or not, and nothing changed until a person decides.

mod common;

use std::collections::{BTreeMap, HashMap};

use common::marking::{NEAT_HAND, SAMPLE_QUESTIONS, exported_paper, idem, sample_answers, text};
use common::{Db, Server, generous, s3, start_with, start_with_objects};
use examkit::auth::Scope;
use image::RgbImage;
use reqwest::Method;
use serde_json::{Value, json};

on_both!(a_class_stack_is_split_into_scripts);
on_both!(names_written_on_covers_are_matched_to_the_roster);

/// Three students' hands: upright and neat, slanted, and cursive.
const HANDS: [&str; 3] = [
    NEAT_HAND,
    "/usr/share/fonts/opentype/comic-neue/ComicNeue-Italic.otf",
    "/usr/share/fonts/truetype/fifthhorseman/dkg.ttf",
];

/// What a page of the stack is, as the test made it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Truth {
    /// Copy, page: to be placed by its code.
    Page(u32, u32),
    /// The same pixels as an earlier page of copy, page.
    Rescan(u32, u32),
    /// A second, different scan of copy, page.
    Different(u32, u32),
    /// Copy, page with its code covered.
    Covered(u32, u32),
    /// A page of another print run.
    Foreign,
}

/// Pages of one copy scanned with the scan maker: `pages` of the set's PDF (first, last), in the
/// given hand, with extra options.
fn scan_copy(
    set_pdf: &[u8],
    layout: &Value,
    pages: (u32, u32),
    font: &str,
    options: &[&str],
) -> Vec<RgbImage> {
    let dir = tempfile::tempdir().expect("dir");
    let write = |name: &str, bytes: &[u8]| -> String {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        path.to_string_lossy().into_owned()
    };
    let pdf = write("set.pdf", set_pdf);
    let layout = write("layout.json", layout.to_string().as_bytes());
    let answers = write("answers.json", sample_answers().to_string().as_bytes());
    let out = dir.path().join("page.png").to_string_lossy().into_owned();
    let range = format!("{}:{}", pages.0, pages.1);
    let mut args = vec![
        "--paper",
        &pdf,
        "--layout",
        &layout,
        "--answers",
        &answers,
        "--out",
        &out,
        "--font",
        font,
        "--pages",
        &range,
        "--dpi",
        "150",
    ];
    args.extend_from_slice(options);
    examkit_scanmaker::make(&args)
        .expect("the copy is scanned")
        .iter()
        .map(|path| image::open(path).expect("a page image").to_rgb8())
        .collect()
}

/// Covers the top right corner, where the code is, with white paper.
fn cover_code(page: &mut RgbImage) {
    let (w, h) = page.dimensions();
    for y in 0..h / 9 {
        for x in w * 3 / 4..w {
            page.put_pixel(x, y, image::Rgb([255, 255, 255]));
        }
    }
}

async fn make_set(s: &Server, key: &str, paper: &str, roster: &[&str]) -> Value {
    let body = json!({
        "paperId": paper,
        "revision": 1,
        "roster": roster.iter().map(|name| json!({ "name": name })).collect::<Vec<_>>(),
    });
    let made = s
        .post_json(
            "/v1/class-sets",
            key,
            Some(&idem()),
            body.to_string().as_bytes(),
        )
        .await;
    assert_eq!(made.status, 201, "{}", text(&made));
    made.json()["classSet"].clone()
}

async fn upload(s: &Server, key: &str, set: &str, name: &str, bytes: Vec<u8>) -> common::Resp {
    s.send(
        Method::POST,
        &format!("/v1/class-sets/{set}/scans?name={name}"),
        Some(key),
        &[("content-type", "application/pdf")],
        Some(bytes),
    )
    .await
}

async fn decide(s: &Server, key: &str, set: &str, body: Value) -> common::Resp {
    s.post_json(
        &format!("/v1/class-sets/{set}/decisions"),
        key,
        Some(&idem()),
        body.to_string().as_bytes(),
    )
    .await
}

async fn start(s: &Server, key: &str, set: &str) -> common::Resp {
    s.send(
        Method::POST,
        &format!("/v1/class-sets/{set}/start"),
        Some(key),
        &[("idempotency-key", &idem())],
        None,
    )
    .await
}

/// The set's marking once every script is marked.
async fn wait_marked(s: &Server, key: &str, set: &str) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    loop {
        let read = s.get(&format!("/v1/class-sets/{set}"), key).await;
        let marking = read.json()["classSet"]["marking"].clone();
        if marking["state"] == "marked" {
            return marking;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the scripts are still being marked: {marking}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
}

/// The labels of the questions the layout puts on paper page `page` (a label, a prompt or an
/// answer space there).
fn questions_on_page(layout: &Value, page: u32) -> Vec<String> {
    fn pages(value: &Value, found: &mut Vec<u64>) {
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    if key == "page" || key == "labelPage" {
                        found.extend(v.as_u64());
                    } else {
                        pages(v, found);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| pages(v, found)),
            _ => {}
        }
    }
    layout["questions"]
        .as_array()
        .expect("questions")
        .iter()
        .filter(|q| {
            let mut found = Vec::new();
            pages(q, &mut found);
            found.contains(&u64::from(page))
        })
        .map(|q| q["number"].to_string())
        .collect()
}

async fn read_stack(s: &Server, key: &str, set: &str) -> Value {
    let read = s.get(&format!("/v1/class-sets/{set}"), key).await;
    assert_eq!(read.status, 200, "{}", text(&read));
    read.json()["classSet"]["stack"].clone()
}

fn copy_view(stack: &Value, copy: u32) -> Value {
    stack["copies"]
        .as_array()
        .expect("copies")
        .iter()
        .find(|c| c["copy"] == copy)
        .cloned()
        .unwrap_or_else(|| panic!("copy {copy} in {stack}"))
}

fn page_view(stack: &Value, file: &str, page: u32) -> Value {
    stack["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .find(|p| p["file"] == file && p["page"] == page)
        .cloned()
        .unwrap_or_else(|| panic!("page {page} of {file} in the report"))
}

async fn a_class_stack_is_split_into_scripts(db: Db) {
    // On PostgreSQL the stack's files go to the object store when the suite has one.
    let started = if db == Db::Postgres && cfg!(examkit_s3_tests) {
        start_with_objects(db, generous(), &s3::bucket().await, |_| {}).await
    } else {
        start_with(db, generous(), |_| {}).await
    };
    let Some(s) = started else {
        return;
    };
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Teacher").await;
    let key = s.key(&user, Scope::ALL).await;
    let exported = exported_paper(&s, &key, &SAMPLE_QUESTIONS[..2]).await;
    let roster = [
        "Ada Lovelace",
        "Alan Turing",
        "Grace Hopper",
        "Mary Somerville",
    ];
    let set = make_set(&s, &key, &exported.id, &roster).await;
    let id = set["id"].as_str().expect("id").to_owned();
    let paper_pages = u32::try_from(set["paperPages"].as_u64().expect("pages")).expect("small");
    let per_copy = u32::try_from(set["pagesPerCopy"].as_u64().expect("pages")).expect("small");
    assert!(paper_pages >= 2, "the paper has pages to shuffle");
    let pdf = s.get(&format!("/v1/class-sets/{id}/export"), &key).await;
    assert_eq!(pdf.status, 200);
    // Nothing scanned yet.
    let empty = read_stack(&s, &key, &id).await;
    assert_eq!(empty["state"], "empty");
    assert_eq!(empty["pagesTotal"], 0);

    // Another print run of the same paper: one of its pages strays into the stack.
    let other = make_set(&s, &key, &exported.id, &["Someone Else"]).await;
    let other_pdf = s
        .get(
            &format!(
                "/v1/class-sets/{}/export",
                other["id"].as_str().expect("id")
            ),
            &key,
        )
        .await;

    // Copies 1 to 3 written and scanned, each in its own hand; copy 4's student was absent.
    let first = |copy: u32| (copy - 1) * per_copy + 1;
    let mut pages: Vec<(Truth, RgbImage)> = Vec::new();
    for copy in 1..=3u32 {
        let seed = copy.to_string();
        let mut options = vec!["--skew", "0.3:1.5", "--noise", "0.02", "--seed", &seed];
        if copy == 2 {
            options.extend_from_slice(&["--rotate", "2:180"]);
        }
        let scanned = scan_copy(
            &pdf.body,
            &exported.layout,
            (first(copy), first(copy) + paper_pages - 1),
            HANDS[copy as usize - 1],
            &options,
        );
        assert_eq!(scanned.len(), paper_pages as usize);
        for (i, image) in scanned.into_iter().enumerate() {
            pages.push((Truth::Page(copy, i as u32 + 1), image));
        }
    }
    // Copy 1 page 1 fed twice: the same pixels.
    let rescan = pages[0].1.clone();
    pages.push((Truth::Rescan(1, 1), rescan));
    // Copy 2 page 1 scanned again, differently (another skew and noise).
    let again = scan_copy(
        &pdf.body,
        &exported.layout,
        (first(2), first(2) + paper_pages - 1),
        HANDS[1],
        &["--skew", "1.8", "--noise", "0.03", "--seed", "99"],
    );
    pages.push((
        Truth::Different(2, 1),
        again.into_iter().next().expect("a page"),
    ));
    // Copy 3's last page was never scanned.
    pages.retain(|(truth, _)| *truth != Truth::Page(3, paper_pages));
    // Copy 1's last page has its code covered (a sticker, a fold).
    let covered = pages
        .iter_mut()
        .find(|(truth, _)| *truth == Truth::Page(1, paper_pages))
        .expect("copy 1's last page");
    cover_code(&mut covered.1);
    covered.0 = Truth::Covered(1, paper_pages);
    // A page of the other print run.
    let stray = scan_copy(
        &other_pdf.body,
        &exported.layout,
        (1, paper_pages),
        HANDS[0],
        &[],
    );
    pages.push((Truth::Foreign, stray.into_iter().next().expect("a page")));

    // Shuffled (a fixed permutation), then fed as three files.
    let mut order: Vec<usize> = (0..pages.len()).collect();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    for i in (1..order.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        order.swap(i, (state % (i as u64 + 1)) as usize);
    }
    let shuffled: Vec<&(Truth, RgbImage)> = order.iter().map(|&i| &pages[i]).collect();
    let per_file = shuffled.len().div_ceil(3);
    let mut truth: HashMap<(String, u32), Truth> = HashMap::new();
    let mut files = Vec::new();
    for (n, chunk) in shuffled.chunks(per_file).enumerate() {
        let images: Vec<RgbImage> = chunk.iter().map(|(_, image)| image.clone()).collect();
        let bytes = examkit_scanmaker::pdf_of_images(&images, 150, 85).expect("a PDF");
        let name = format!("stack-{}.pdf", n + 1);
        let sent = upload(&s, &key, &id, &name, bytes).await;
        assert_eq!(sent.status, 201, "{}", text(&sent));
        let file = sent.json()["file"].clone();
        assert_eq!(file["name"], name.as_str());
        assert_eq!(file["pages"], chunk.len());
        let file_id = file["id"].as_str().expect("id").to_owned();
        for (i, (t, _)) in chunk.iter().enumerate() {
            truth.insert((file_id.clone(), i as u32 + 1), t.clone());
        }
        files.push(file_id);
    }

    // The stack is not a marking session of its own.
    let sessions = s.get("/v1/marking/sessions", &key).await;
    assert_eq!(
        sessions.json()["sessions"],
        json!([]),
        "{}",
        text(&sessions)
    );

    let marking = common::marking::workers(&s, |_| {});
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(900);
    let stack = loop {
        let stack = read_stack(&s, &key, &id).await;
        if stack["state"] == "read" {
            break stack;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the stack is still being read: {}",
            stack["pagesRead"]
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    };
    marking.shutdown().await;

    // Every page accounted for, exactly as made.
    assert_eq!(stack["pagesTotal"], truth.len());
    assert_eq!(stack["pagesRead"], truth.len());
    let mut standing: BTreeMap<(u32, u32), Vec<String>> = BTreeMap::new();
    let (mut covered_at, mut conflict) = (None, Vec::new());
    for ((file, page), made) in &truth {
        let view = page_view(&stack, file, *page);
        let placement = view["placement"].as_str().expect("placement");
        match made {
            Truth::Page(copy, copy_page) | Truth::Rescan(copy, copy_page) => {
                assert!(
                    matches!(placement, "placed" | "rescan" | "conflict"),
                    "{made:?}: {view}"
                );
                assert_eq!(view["copy"], *copy, "{made:?}: {view}");
                assert_eq!(view["copyPage"], *copy_page, "{made:?}: {view}");
                if placement != "conflict" {
                    standing
                        .entry((*copy, *copy_page))
                        .or_default()
                        .push(placement.to_owned());
                }
                if placement == "conflict" {
                    conflict.push((file.clone(), *page));
                }
            }
            Truth::Different(copy, copy_page) => {
                assert_eq!(placement, "conflict", "{view}");
                assert_eq!(view["copy"], *copy);
                assert_eq!(view["copyPage"], *copy_page);
                conflict.push((file.clone(), *page));
            }
            Truth::Covered(..) => {
                assert_eq!(placement, "unknown", "{view}");
                assert_eq!(view["reason"], "no code could be read");
                covered_at = Some((file.clone(), *page));
            }
            Truth::Foreign => {
                assert_eq!(placement, "foreign", "{view}");
                assert!(
                    view["reason"]
                        .as_str()
                        .is_some_and(|r| r.contains("another print run")),
                    "{view}"
                );
            }
        }
    }
    // Copy 1 page 1: one placed, its identical rescan set aside.
    assert_eq!(
        standing.get(&(1, 1)).map(|p| {
            let mut p = p.clone();
            p.sort();
            p
        }),
        Some(vec!["placed".to_owned(), "rescan".to_owned()])
    );
    // Copy 2 page 1: two different scans, neither placed until a person chooses.
    assert_eq!(conflict.len(), 2, "{conflict:?}");
    assert_eq!(stack["counts"]["conflict"], 2);
    assert_eq!(stack["counts"]["unknown"], 1);
    assert_eq!(stack["counts"]["foreign"], 1);
    assert_eq!(stack["counts"]["rescan"], 1);
    let missing_last: Vec<u32> = vec![paper_pages];
    assert_eq!(copy_view(&stack, 1)["state"], "incomplete");
    assert_eq!(copy_view(&stack, 1)["missingPages"], json!(missing_last));
    assert_eq!(copy_view(&stack, 2)["state"], "incomplete");
    assert_eq!(copy_view(&stack, 2)["missingPages"], json!([1]));
    assert_eq!(copy_view(&stack, 3)["state"], "incomplete");
    assert_eq!(copy_view(&stack, 3)["missingPages"], json!(missing_last));
    assert_eq!(copy_view(&stack, 4)["state"], "absent");
    assert_eq!(copy_view(&stack, 4)["pages"], json!([]));
    // Each placed page of a script is that copy's page, from where the test put it.
    for copy in 1..=3u32 {
        for placed in copy_view(&stack, copy)["pages"].as_array().expect("pages") {
            let at = (
                placed["file"].as_str().expect("file").to_owned(),
                u32::try_from(placed["page"].as_u64().expect("page")).expect("small"),
            );
            let copy_page = u32::try_from(placed["copyPage"].as_u64().expect("p")).expect("small");
            assert_eq!(truth[&at], Truth::Page(copy, copy_page), "{placed}");
        }
    }

    // A person places the covered page by its printed line.
    let (covered_file, covered_page) = covered_at.expect("the covered page");
    let placed = decide(
        &s,
        &key,
        &id,
        json!({"kind": "place", "file": covered_file, "page": covered_page, "copy": 1, "copyPage": paper_pages}),
    )
    .await;
    assert_eq!(placed.status, 201, "{}", text(&placed));
    let body = placed.json();
    assert_eq!(body["decision"]["kind"], "place");
    assert_eq!(body["decision"]["seq"], 1);
    assert!(body["decision"]["madeBy"]["keyId"].is_string());
    assert_eq!(body["decision"]["madeBy"]["userId"], user.as_str());
    let stack = body["stack"].clone();
    let view = page_view(&stack, &covered_file, covered_page);
    assert_eq!(view["placement"], "placed");
    assert_eq!(view["byHand"], true);
    assert_eq!(copy_view(&stack, 1)["state"], "complete");

    // And resolves the conflict: the second scan stands; then changes their mind.
    let (a, b) = (&conflict[0], &conflict[1]);
    let chose = decide(
        &s,
        &key,
        &id,
        json!({"kind": "choose", "file": b.0, "page": b.1}),
    )
    .await;
    assert_eq!(chose.status, 201, "{}", text(&chose));
    let stack = chose.json()["stack"].clone();
    assert_eq!(page_view(&stack, &b.0, b.1)["placement"], "placed");
    assert_eq!(page_view(&stack, &a.0, a.1)["placement"], "notChosen");
    assert_eq!(copy_view(&stack, 2)["state"], "complete");
    let chose = decide(
        &s,
        &key,
        &id,
        json!({"kind": "choose", "file": a.0, "page": a.1}),
    )
    .await;
    assert_eq!(chose.status, 201, "{}", text(&chose));
    let stack = chose.json()["stack"].clone();
    assert_eq!(page_view(&stack, &a.0, a.1)["placement"], "placed");
    assert_eq!(page_view(&stack, &b.0, b.1)["placement"], "notChosen");

    // A copy marked absent, and back.
    let absent = decide(&s, &key, &id, json!({"kind": "absent", "copy": 3})).await;
    assert_eq!(absent.status, 201, "{}", text(&absent));
    assert_eq!(copy_view(&absent.json()["stack"], 3)["state"], "absent");
    let present = decide(&s, &key, &id, json!({"kind": "present", "copy": 3})).await;
    assert_eq!(present.status, 201, "{}", text(&present));
    assert_eq!(
        copy_view(&present.json()["stack"], 3)["state"],
        "incomplete"
    );

    // Decisions that do not fit the stack are refused and change nothing.
    let placed_page = copy_view(&stack, 1)["pages"][0].clone();
    let refused = [
        (
            json!({"kind": "place", "file": placed_page["file"], "page": placed_page["page"], "copy": 2, "copyPage": 1}),
            "/page",
            "not_placeable",
        ),
        (
            json!({"kind": "choose", "file": placed_page["file"], "page": placed_page["page"]}),
            "/page",
            "not_placeable",
        ),
        (
            json!({"kind": "place", "file": covered_file, "page": covered_page, "copy": 9, "copyPage": 1}),
            "/copy",
            "not_in_set",
        ),
        (
            json!({"kind": "place", "file": covered_file, "page": covered_page, "copy": 1, "copyPage": paper_pages + 1}),
            "/copyPage",
            "not_in_set",
        ),
        (
            json!({"kind": "choose", "file": uuid::Uuid::new_v4().to_string(), "page": 1}),
            "/page",
            "not_in_stack",
        ),
        (
            json!({"kind": "extra", "file": covered_file, "page": covered_page, "copy": 1, "question": "2"}),
            "/page",
            "not_placeable",
        ),
        (json!({"kind": "absent", "copy": 0}), "/copy", "minimum"),
        (json!({"kind": "absent", "copy": "3"}), "/copy", "type"),
        (json!({"kind": "absent"}), "/copy", "required"),
        (
            json!({"kind": "absent", "copy": 3, "page": 1}),
            "/page",
            "unknown_field",
        ),
        (json!({"kind": "undo", "copy": 3}), "/kind", "enum"),
        (json!({"copy": 3}), "/kind", "required"),
        (
            json!({"kind": "choose", "file": "not-a-uuid", "page": 1}),
            "/file",
            "format",
        ),
        (
            json!({"kind": "extra", "file": covered_file, "page": 1, "copy": 1, "question": "\u{7}"}),
            "/question",
            "control_character",
        ),
    ];
    for (body, path, code) in refused {
        let resp = decide(&s, &key, &id, body.clone()).await;
        let error = resp.assert_error(422, "invalid_fields");
        let errors = error["error"]["details"]["errors"]
            .as_array()
            .expect("errors");
        assert!(
            errors
                .iter()
                .any(|e| e["path"] == path && e["code"] == code),
            "{body}: {error}"
        );
    }
    let not_json = s
        .post_json(
            &format!("/v1/class-sets/{id}/decisions"),
            &key,
            Some(&idem()),
            b"[1",
        )
        .await;
    not_json.assert_error(400, "invalid_json");
    let no_key = s
        .post_json(
            &format!("/v1/class-sets/{id}/decisions"),
            &key,
            None,
            json!({"kind": "absent", "copy": 3}).to_string().as_bytes(),
        )
        .await;
    no_key.assert_error(400, "idempotency_key_required");
    let stack = read_stack(&s, &key, &id).await;
    let kinds: Vec<&str> = stack["decisions"]
        .as_array()
        .expect("decisions")
        .iter()
        .map(|d| d["kind"].as_str().expect("kind"))
        .collect();
    assert_eq!(kinds, ["place", "choose", "choose", "absent", "present"]);

    // Marking: a set with nothing scanned has nothing to mark.
    let other_id = other["id"].as_str().expect("id").to_owned();
    start(&s, &key, &other_id)
        .await
        .assert_error(409, "stack_not_ready");
    let started = start(&s, &key, &id).await;
    assert_eq!(started.status, 202, "{}", text(&started));
    let marking = started.json()["classSet"]["marking"].clone();
    assert_eq!(marking["state"], "marking", "{marking}");
    assert_eq!(marking["outOfDate"], json!([]));
    let copies_of = |marking: &Value| -> Vec<u64> {
        marking["scripts"]
            .as_array()
            .expect("scripts")
            .iter()
            .map(|s| s["copy"].as_u64().expect("copy"))
            .collect()
    };
    // Copy 4 was absent: it has no script. Each script names its student, as printed.
    assert_eq!(copies_of(&marking), [1, 2, 3]);
    for (n, script) in marking["scripts"]
        .as_array()
        .expect("scripts")
        .iter()
        .enumerate()
    {
        assert_eq!(script["student"]["name"], roster[n]);
        assert_eq!(script["student"]["source"], "printed");
        assert_eq!(script["student"]["confirmed"], false);
        assert_eq!(script["current"], true);
    }
    assert_eq!(marking["scripts"][2]["missingPages"], json!([paper_pages]));
    assert_eq!(marking["scripts"][0]["missingPages"], json!([]));
    let workers = common::marking::workers(&s, |_| {});
    let marked = wait_marked(&s, &key, &id).await;
    // Starting again with nothing changed makes nothing again.
    let again = start(&s, &key, &id).await;
    assert_eq!(again.status, 202, "{}", text(&again));
    let sessions = |marking: &Value| -> Vec<String> {
        marking["scripts"]
            .as_array()
            .expect("scripts")
            .iter()
            .map(|s| s["sessionId"].as_str().expect("session").to_owned())
            .collect()
    };
    assert_eq!(
        sessions(&again.json()["classSet"]["marking"]),
        sessions(&marked)
    );
    // The questions on copy 3's unscanned page score nothing and wait for a person; every other
    // question is marked, from its own student's pages only.
    let names: HashMap<String, String> = read_stack(&s, &key, &id).await["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            (
                f["name"].as_str().expect("name").to_owned(),
                f["id"].as_str().expect("id").to_owned(),
            )
        })
        .collect();
    let on_last_page = questions_on_page(&exported.layout, paper_pages);
    assert!(!on_last_page.is_empty(), "the last page holds a question");
    for (n, script) in marked["scripts"]
        .as_array()
        .expect("scripts")
        .iter()
        .enumerate()
    {
        let copy = n as u32 + 1;
        let session = s
            .get(
                &format!(
                    "/v1/marking/sessions/{}",
                    script["sessionId"].as_str().expect("id")
                ),
                &key,
            )
            .await;
        assert_eq!(session.status, 200, "{}", text(&session));
        let session = session.json()["session"].clone();
        let file_of: HashMap<String, String> = session["assets"]
            .as_array()
            .expect("assets")
            .iter()
            .filter(|a| a["kind"] == "work")
            .map(|a| {
                let name = a["name"].as_str().expect("name");
                (
                    a["id"].as_str().expect("id").to_owned(),
                    names[name].clone(),
                )
            })
            .collect();
        // A work file of the script is a view of a stack file, which holds other students'
        // pages too: it has no bytes to download.
        for asset in file_of.keys() {
            s.get(&format!("/v1/marking/assets/{asset}"), &key)
                .await
                .assert_error(404, "not_found");
        }
        let questions = session["questions"].as_array().expect("questions");
        assert_eq!(questions.len(), 2, "{session}");
        for q in questions {
            let label = q["label"].as_str().expect("label");
            let unscanned = copy == 3 && on_last_page.contains(&label.to_owned());
            let flags: Vec<&str> = q["reviewFlags"]
                .as_array()
                .map(|f| f.iter().filter_map(|f| f["code"].as_str()).collect())
                .unwrap_or_default();
            if unscanned {
                assert_eq!(q["status"], "needs_review", "{q}");
                assert_eq!(flags, ["page_not_scanned"], "{q}");
                assert_eq!(q["score"]["awarded"], 0);
                assert_eq!(q["score"]["possible"], 0);
                continue;
            }
            assert!(
                matches!(q["status"].as_str(), Some("completed" | "needs_review")),
                "copy {copy} question {label}: {q}"
            );
            assert!(!flags.contains(&"page_not_scanned"), "{q}");
            let selections = q["sourceDocuments"]["pageSelections"]
                .as_object()
                .expect("selections");
            let mut work_pages = 0;
            for (asset, pages) in selections {
                let Some(file) = file_of.get(asset) else {
                    continue;
                };
                for page in pages.as_array().expect("pages") {
                    let page = u32::try_from(page.as_u64().expect("page")).expect("small");
                    let made = &truth[&(file.clone(), page)];
                    let of = match made {
                        Truth::Page(c, _)
                        | Truth::Rescan(c, _)
                        | Truth::Different(c, _)
                        | Truth::Covered(c, _) => *c,
                        Truth::Foreign => 0,
                    };
                    assert_eq!(of, copy, "copy {copy} question {label} cites {made:?}");
                    work_pages += 1;
                }
            }
            assert!(work_pages > 0, "copy {copy} question {label}: {q}");
        }
    }
    // A later decision changes a script: it is out of date until marking starts again, and is
    // then made (and marked) again; a copy marked absent loses its script.
    let absent = decide(&s, &key, &id, json!({"kind": "absent", "copy": 2})).await;
    assert_eq!(absent.status, 201, "{}", text(&absent));
    let set_now = s.get(&format!("/v1/class-sets/{id}"), &key).await.json();
    assert_eq!(set_now["classSet"]["marking"]["outOfDate"], json!([2]));
    let restarted = start(&s, &key, &id).await;
    assert_eq!(restarted.status, 202, "{}", text(&restarted));
    let marking = restarted.json()["classSet"]["marking"].clone();
    assert_eq!(copies_of(&marking), [1, 3]);
    assert_eq!(marking["outOfDate"], json!([]));
    let present = decide(&s, &key, &id, json!({"kind": "present", "copy": 2})).await;
    assert_eq!(present.status, 201, "{}", text(&present));
    let restarted = start(&s, &key, &id).await;
    assert_eq!(restarted.status, 202, "{}", text(&restarted));
    let remade = wait_marked(&s, &key, &id).await;
    assert_eq!(copies_of(&remade), [1, 2, 3]);
    let before = sessions(&marked);
    let after = sessions(&remade);
    assert_eq!(after[0], before[0], "copy 1 did not change");
    assert_ne!(after[1], before[1], "copy 2 was made again");
    workers.shutdown().await;

    // Alan sat in Ada's seat: a person says so. Ada's copy is Alan's, and Alan's copy holds
    // nobody until a person says who wrote it; nobody is ever held by two scripts.
    let said = decide(
        &s,
        &key,
        &id,
        json!({"kind": "student", "copy": 1, "student": 2}),
    )
    .await;
    assert_eq!(said.status, 201, "{}", text(&said));
    assert_eq!(said.json()["decision"]["student"], 2);
    let scripts = |set: &Value| set["classSet"]["marking"]["scripts"].clone();
    let set_now = s.get(&format!("/v1/class-sets/{id}"), &key).await.json();
    let now = scripts(&set_now);
    assert_eq!(now[0]["student"]["name"], roster[1], "{now}");
    assert_eq!(now[0]["student"]["confirmed"], true);
    assert_eq!(now[0]["student"]["source"], "person");
    assert_eq!(now[0]["writer"], "confirmed");
    assert_eq!(now[1]["student"], Value::Null, "{now}");
    assert_eq!(now[1]["writer"], "displaced");
    assert_eq!(now[2]["writer"], "printed");
    // The scripts' sessions are named for who wrote them now.
    for (i, who) in [(0, roster[1].to_owned()), (1, "Copy 002".to_owned())] {
        let session = now[i]["sessionId"].as_str().expect("session");
        let read = s
            .get(&format!("/v1/marking/sessions/{session}"), &key)
            .await;
        let title = read.json()["session"]["title"].clone();
        assert!(
            title
                .as_str()
                .is_some_and(|t| t.ends_with(&format!(" · {who}"))),
            "script {i}: {title}"
        );
    }
    let taken = decide(
        &s,
        &key,
        &id,
        json!({"kind": "student", "copy": 3, "student": 2}),
    )
    .await;
    taken.assert_error(422, "invalid_fields");
    assert_eq!(
        taken.json()["error"]["details"]["errors"][0]["code"],
        "student_taken"
    );
    let nobody = decide(
        &s,
        &key,
        &id,
        json!({"kind": "student", "copy": 3, "student": 9}),
    )
    .await;
    nobody.assert_error(422, "invalid_fields");
    assert_eq!(
        nobody.json()["error"]["details"]["errors"][0]["code"],
        "not_in_set"
    );
    let settled = decide(
        &s,
        &key,
        &id,
        json!({"kind": "student", "copy": 2, "student": 1}),
    )
    .await;
    assert_eq!(settled.status, 201, "{}", text(&settled));
    let now = scripts(&s.get(&format!("/v1/class-sets/{id}"), &key).await.json());
    assert_eq!(now[1]["student"]["name"], roster[0], "{now}");
    assert_eq!(now[1]["writer"], "confirmed");

    // Starting needs an Idempotency-Key.
    s.send(
        Method::POST,
        &format!("/v1/class-sets/{id}/start"),
        Some(&key),
        &[],
        None,
    )
    .await
    .assert_error(400, "idempotency_key_required");

    // Another account sees none of it: its real ids are not found.
    let stranger = s.user("Stranger").await;
    let stranger_key = s.key(&stranger, Scope::ALL).await;
    let read = s.get(&format!("/v1/class-sets/{id}"), &stranger_key).await;
    read.assert_error(404, "not_found");
    // A refusal that comes before the body is read leaves the rest of a large body unread, and
    // the connection then closes: the refused uploads send a little, so the next request does
    // not race that close on a reused connection.
    let head = pdf.body[..1024].to_vec();
    let sent = upload(&s, &stranger_key, &id, "x.pdf", head.clone()).await;
    sent.assert_error(404, "not_found");
    let decided = decide(&s, &stranger_key, &id, json!({"kind": "absent", "copy": 1})).await;
    decided.assert_error(404, "not_found");
    start(&s, &stranger_key, &id)
        .await
        .assert_error(404, "not_found");

    // Bad uploads get the upload routes' errors.
    let nameless = s
        .send(
            Method::POST,
            &format!("/v1/class-sets/{id}/scans"),
            Some(&key),
            &[("content-type", "application/pdf")],
            Some(head),
        )
        .await;
    nameless.assert_error(400, "invalid_query");
    let mislabelled = s
        .send(
            Method::POST,
            &format!("/v1/class-sets/{id}/scans?name=x.png"),
            Some(&key),
            &[("content-type", "image/png")],
            Some(pdf.body.clone()),
        )
        .await;
    mislabelled.assert_error(415, "content_type_mismatch");
    let empty = upload(&s, &key, &id, "empty.pdf", Vec::new()).await;
    assert_eq!(empty.status, 400, "{}", text(&empty));
    let after = read_stack(&s, &key, &id).await;
    assert_eq!(after["files"], stack["files"], "nothing was added");
}

/// The name each copy's student wrote on the cover, as the test's model reads it (a misreading
/// included); `None`: the line is blank.
fn written_on(copy: u32) -> Option<&'static str> {
    match copy {
        // Alan sat in Ada's seat.
        1 => Some("Alan Turing"),
        // Ada sat in Alan's, and her name is misread.
        2 => Some("Ada Lovelase"),
        3 => Some("Grace Hopper"),
        // Mary left the line blank.
        4 => None,
        // A visitor not on the roster took Emmy's copy.
        _ => Some("Sophie Germain"),
    }
}

/// The copy whose cover a name request shows, read from its copy code as a model would see it.
fn cover_copy(seen: &common::provider::Seen) -> Option<u32> {
    let page = common::provider::cover_image(&seen.body)?.to_luma8();
    examkit_scan::decode_codes(&page)
        .iter()
        .find_map(|code| examkit_pdf::CopyCode::parse(&code.payload))
        .filter(|code| code.page == 1)
        .map(|code| code.copy)
}

fn name_check(stack: &Value, copy: u32) -> Value {
    copy_view(stack, copy)["handwrittenName"].clone()
}

async fn names_written_on_covers_are_matched_to_the_roster(db: Db) {
    use common::provider::{self, Reply};
    use examkit::marking::MarkerChoice;
    use examkit::marking::openai::OpenAiConfig;

    let model = provider::start("reader", None, true, |seen| {
        if seen.label != "cover" {
            return Reply::Status(500, None, "only covers are read here".into());
        }
        match cover_copy(seen) {
            Some(copy) => Reply::Answer(json!({ "name": written_on(copy) })),
            None => Reply::Status(500, None, "no copy code on the cover".into()),
        }
    })
    .await;
    let choice = MarkerChoice::OpenAi(OpenAiConfig {
        base_url: model.base_url.clone(),
        model: "reader".into(),
        timeout: std::time::Duration::from_secs(30),
        backoff: std::time::Duration::from_millis(20),
        ..OpenAiConfig::default()
    });
    let adjust = {
        let choice = choice.clone();
        move |state: &mut examkit::http::AppState| state.marking.marker = choice
    };
    let Some(s) = start_with(db, generous(), adjust).await else {
        return;
    };
    s.store.import_sample_bank().await.expect("sample bank");
    let user = s.user("Teacher").await;
    let key = s.key(&user, Scope::ALL).await;
    let exported = exported_paper(&s, &key, &SAMPLE_QUESTIONS[..2]).await;
    let roster = [
        "Ada Lovelace",
        "Alan Turing",
        "Grace Hopper",
        "Mary Somerville",
        "Emmy Noether",
    ];
    let set = make_set(&s, &key, &exported.id, &roster).await;
    let id = set["id"].as_str().expect("id").to_owned();
    let per_copy = u32::try_from(set["pagesPerCopy"].as_u64().expect("pages")).expect("small");
    let paper_pages = u32::try_from(set["paperPages"].as_u64().expect("pages")).expect("small");
    let pdf = s.get(&format!("/v1/class-sets/{id}/export"), &key).await;
    assert_eq!(pdf.status, 200);

    // Each student's cover, written in their own hand (copy 4's name line left blank).
    let mut covers = Vec::new();
    for copy in 1..=5u32 {
        let first = (copy - 1) * per_copy + 1;
        let seed = (copy + 40).to_string();
        let mut options = vec!["--skew", "0.3:1.2", "--seed", &seed];
        let name = written_on(copy).map(|n| n.replace("Lovelase", "Lovelace"));
        if let Some(name) = &name {
            options.extend_from_slice(&["--name", name]);
        }
        let hand = HANDS[copy as usize % HANDS.len()];
        let pages = (first, first + paper_pages - 1);
        let scanned = scan_copy(&pdf.body, &exported.layout, pages, hand, &options);
        covers.push(scanned.into_iter().next().expect("the cover"));
    }
    covers.reverse();
    let bytes = examkit_scanmaker::pdf_of_images(&covers, 150, 85).expect("a PDF");
    let sent = upload(&s, &key, &id, "covers.pdf", bytes).await;
    assert_eq!(sent.status, 201, "{}", text(&sent));

    let workers = common::marking::workers(&s, |config| config.marker = choice.clone());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
    let stack = loop {
        let stack = read_stack(&s, &key, &id).await;
        let pending = (1..=5).any(|copy| {
            let check = name_check(&stack, copy);
            check.is_null() || check["state"] == "reading"
        });
        if stack["state"] == "read" && !pending {
            break stack;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the covers are still being read: {stack}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    };
    workers.shutdown().await;
    model.assert_clean();
    let asked = model.log().len();
    assert_eq!(asked, 5, "one reading per cover");

    // Alan, in Ada's seat: his name, matched to him, disagrees with the printed Ada.
    let alan = name_check(&stack, 1);
    assert_eq!(alan["state"], "read", "{alan}");
    assert_eq!(alan["written"], "Alan Turing");
    assert_eq!(alan["match"]["student"], 2);
    assert_eq!(alan["match"]["name"], "Alan Turing");
    assert_eq!(alan["match"]["confidence"], 1.0);
    assert_eq!(alan["verdict"], "disagrees");
    assert_eq!(alan["flagged"], true);
    // Ada's misread name still finds her, with less confidence.
    let ada = name_check(&stack, 2);
    assert_eq!(ada["written"], "Ada Lovelase");
    assert_eq!(ada["match"]["student"], 1);
    let confidence = ada["match"]["confidence"].as_f64().expect("a number");
    assert!((0.7..1.0).contains(&confidence), "{ada}");
    assert_eq!(ada["verdict"], "disagrees");
    let grace = name_check(&stack, 3);
    assert_eq!(
        (
            &grace["verdict"],
            &grace["flagged"],
            &grace["match"]["student"]
        ),
        (&json!("agrees"), &json!(false), &json!(3))
    );
    let mary = name_check(&stack, 4);
    assert_eq!(mary["written"], Value::Null);
    assert_eq!(mary["match"], Value::Null);
    assert_eq!(
        (&mary["verdict"], &mary["flagged"]),
        (&json!("blank"), &json!(false))
    );
    let visitor = name_check(&stack, 5);
    assert_eq!(visitor["written"], "Sophie Germain");
    assert_eq!(visitor["match"], Value::Null);
    assert_eq!(
        (&visitor["verdict"], &visitor["flagged"]),
        (&json!("unmatched"), &json!(true))
    );
    assert_eq!(stack["namesToCheck"], json!([1, 2, 5]));
    // Nothing is overridden: every copy is still its printed student's, unconfirmed.
    let writers: Vec<Value> = (1..=5)
        .map(|copy| copy_view(&stack, copy)["writer"].clone())
        .collect();
    assert_eq!(writers, vec![json!("printed"); 5], "{stack}");

    // A person settles each: Alan wrote copy 1, Ada copy 2, copy 5's student is not on the roster.
    for (copy, student) in [(1, json!(2)), (2, json!(1)), (5, Value::Null)] {
        let decided = decide(
            &s,
            &key,
            &id,
            json!({ "kind": "student", "copy": copy, "student": student }),
        )
        .await;
        assert_eq!(decided.status, 201, "{}", text(&decided));
    }
    let stack = read_stack(&s, &key, &id).await;
    for copy in [1, 2] {
        let check = name_check(&stack, copy);
        assert_eq!(
            (&check["verdict"], &check["flagged"]),
            (&json!("agrees"), &json!(false)),
            "{check}"
        );
    }
    assert_eq!(name_check(&stack, 5)["flagged"], false, "a person said who");
    assert_eq!(copy_view(&stack, 1)["writer"], "confirmed");
    assert_eq!(copy_view(&stack, 5)["writer"], "notOnRoster");
    assert_eq!(stack["namesToCheck"], json!([]));
    assert_eq!(model.log().len(), asked, "decisions read nothing again");
}
