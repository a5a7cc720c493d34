//! Importing and exporting the question bank, and favourites, on SQLite and PostgreSQL.

use std::collections::BTreeMap;

use examkit::store::bank::ImportError;
use examkit::store::favourites::FavouriteError;
use examkit::store::{Backend, Store};
use examkit_bank::load::{MemoryBank, load_memory};
use examkit_bank::{Bank, Facets, sample};
use serde_json::Value;
use sqlx::Row;

use crate::common;
use common::{Db, fresh_database};

const CIRCLE: &str = "Circle: centre, radius and tangent at a point";
const COSH: &str = "Solving an equation in cosh and sinh";

async fn store(db: Db) -> (Store, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = fresh_database(db, dir.path()).await;
    let store = Store::open(&url).await.expect("open the store");
    (store, url, dir)
}

/// The sample bank's files as JSON, to be edited by a test and loaded back.
fn sample_files() -> BTreeMap<String, Value> {
    sample::FILES
        .iter()
        .map(|(name, text)| {
            (
                (*name).to_owned(),
                serde_json::from_str(text).expect("json"),
            )
        })
        .collect()
}

fn bank_of(files: &BTreeMap<String, Value>) -> Bank {
    let mut memory: MemoryBank = sample::memory();
    memory.files = files
        .iter()
        .map(|(name, value)| (name.clone(), serde_json::to_vec(value).expect("serialise")))
        .collect();
    load_memory(&memory, &Facets::default()).unwrap_or_else(|errors| {
        panic!(
            "{}",
            errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        )
    })
}

/// The file, index and JSON of the question whose first revision has this title.
fn find<'a>(files: &'a mut BTreeMap<String, Value>, title: &str) -> (String, usize, &'a mut Value) {
    for (name, doc) in files.iter_mut() {
        let questions = doc["questions"].as_array_mut().expect("questions");
        if let Some(i) = questions
            .iter()
            .position(|q| q["revisions"][0]["title"] == title)
        {
            return (name.clone(), i, &mut questions[i]);
        }
    }
    panic!("no question titled {title}");
}

/// Every row of the bank tables, as text, to compare before and after.
async fn snapshot(store: &Store) -> Vec<String> {
    let mut out = Vec::new();
    for (table, columns, order) in [
        (
            "bank_facets",
            "kind, id, label, position, topic, level, subject",
            "kind, id",
        ),
        ("bank_questions", "id, latest_published", "id"),
        (
            "bank_revisions",
            "question_id, revision, status, digest, content_version, scheme_version, title, marks, body, imported_at",
            "question_id, revision",
        ),
        ("bank_assets", "id, question_id, media_type, sha256", "id"),
        (
            "bank_revision_assets",
            "question_id, revision, asset_id",
            "question_id, revision, asset_id",
        ),
        ("favourites", "user_id, question_id", "user_id, question_id"),
    ] {
        let sql = format!("SELECT {columns} FROM {table} ORDER BY {order}");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(store.pool())
            .await
            .expect("select");
        for row in rows {
            let mut line = format!("{table}:");
            for i in 0..columns.split(", ").count() {
                let cell = row
                    .try_get::<Option<String>, _>(i)
                    .map(|v| format!("{v:?}"))
                    .or_else(|_| row.try_get::<Option<i64>, _>(i).map(|v| format!("{v:?}")))
                    .expect("text or integer");
                line.push_str(&format!(" {cell}"));
            }
            out.push(line);
        }
    }
    out
}

async fn count(store: &Store, sql: &str) -> i64 {
    sqlx::query(sqlx::AssertSqlSafe(sql.to_owned()))
        .fetch_one(store.pool())
        .await
        .expect("count")
        .try_get::<i64, _>(0)
        .expect("integer")
}

/// On PostgreSQL, checks that the search index's word counts (`search_vocabulary`) equal a count
/// made afresh from the indexed rows' text vectors, and that there are some.
async fn assert_vocabulary_exact(store: &Store) {
    if store.backend() != Backend::Postgres {
        return;
    }
    let fresh = "SELECT 'title_words' AS field, u.lexeme AS word, count(*) AS questions \
                 FROM search_questions s, unnest(s.title_words) u GROUP BY u.lexeme \
                 UNION ALL SELECT 'lead_words', u.lexeme, count(*) \
                 FROM search_questions s, unnest(s.lead_words) u GROUP BY u.lexeme \
                 UNION ALL SELECT 'document', u.lexeme, count(*) \
                 FROM search_questions s, unnest(s.document) u GROUP BY u.lexeme";
    let kept = "SELECT field, word, questions FROM search_vocabulary";
    let differ = count(
        store,
        &format!(
            "SELECT count(*) FROM ((SELECT * FROM ({kept}) k EXCEPT SELECT * FROM ({fresh}) f) \
             UNION ALL (SELECT * FROM ({fresh}) f EXCEPT SELECT * FROM ({kept}) k)) d"
        ),
    )
    .await;
    assert_eq!(differ, 0, "the kept word counts differ from a fresh count");
    assert!(count(store, "SELECT count(*) FROM search_vocabulary").await > 100);
}

async fn latest(store: &Store, id: &str) -> Option<i64> {
    sqlx::query("SELECT latest_published FROM bank_questions WHERE id = $1")
        .bind(id)
        .fetch_one(store.pool())
        .await
        .expect("question")
        .try_get::<Option<i64>, _>(0)
        .expect("latest")
}

fn invalid(result: Result<examkit::store::bank::ImportSummary, ImportError>) -> Vec<String> {
    match result {
        Err(ImportError::Invalid(errors)) => errors.iter().map(ToString::to_string).collect(),
        other => panic!("expected the import to be refused, got {other:?}"),
    }
}

async fn sample_import_and_reimport(db: Db) {
    let (store, _, _dir) = store(db).await;
    let first = store.import_sample_bank().await.expect("import");
    assert_eq!(
        (
            first.questions,
            first.questions_added,
            first.revisions_added,
            first.assets_added
        ),
        (68, 68, 72, 5)
    );
    assert_eq!(
        (
            first.questions_changed,
            first.revisions_changed,
            first.facets_relabelled
        ),
        (0, 0, 0)
    );
    assert_eq!(first.facets_added, 8 + 7 + 14 + 28 + 65);
    assert_eq!(
        count(&store, "SELECT COUNT(*) FROM bank_questions").await,
        68
    );
    assert_eq!(
        count(
            &store,
            "SELECT COUNT(*) FROM bank_revisions WHERE status = 'published'"
        )
        .await,
        70
    );
    assert_eq!(
        count(
            &store,
            "SELECT COUNT(*) FROM bank_revisions WHERE status = 'draft'"
        )
        .await,
        1
    );
    assert_eq!(
        count(
            &store,
            "SELECT COUNT(*) FROM bank_questions WHERE latest_published IS NULL"
        )
        .await,
        0
    );
    // The circle question's revision 1 is withdrawn, 2 published; the cosh question's 2 is a draft.
    let mut files = sample_files();
    let circle = find(&mut files, CIRCLE).2["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let cosh = find(&mut files, COSH).2["id"]
        .as_str()
        .expect("id")
        .to_owned();
    assert_eq!(latest(&store, &circle).await, Some(2));
    assert_eq!(latest(&store, &cosh).await, Some(1));
    // Stored versions are the crate's digests.
    let bank = sample::load().expect("sample");
    let (_, _, q) = bank
        .questions()
        .find(|(_, _, q)| q.id.to_string() == circle)
        .expect("circle");
    let d = examkit_bank::digest::digests(&q.revisions[1], &bank.assets).expect("digests");
    let row = sqlx::query("SELECT content_version, scheme_version, digest FROM bank_revisions WHERE question_id = $1 AND revision = 2")
        .bind(&circle)
        .fetch_one(store.pool())
        .await
        .expect("row");
    assert_eq!(row.try_get::<String, _>(0).expect("cv"), d.content_version);
    assert_eq!(row.try_get::<String, _>(1).expect("sv"), d.scheme_version);
    assert_eq!(
        row.try_get::<String, _>(2).expect("digest"),
        d.revision_digest
    );

    let before = snapshot(&store).await;
    let again = store.import_sample_bank().await.expect("re-import");
    assert!(again.is_unchanged(), "{again}");
    assert_eq!(
        snapshot(&store).await,
        before,
        "a re-import changes nothing"
    );
    assert_eq!(store.load_sample_bank_if_empty().await.expect("load"), None);
}

async fn published_content_is_immutable(db: Db) {
    let (store, _, _dir) = store(db).await;
    store.import_sample_bank().await.expect("import");
    let before = snapshot(&store).await;
    let mut files = sample_files();
    let (file, qi, question) = find(&mut files, CIRCLE);
    question["revisions"][1]["scheme"]["criteria"][0]["notes"] = serde_json::json!(["oe"]);
    let errors = invalid(store.import_bank(&bank_of(&files)).await);
    assert_eq!(
        errors,
        [format!(
            "{file}:/questions/{qi}/revisions/1: revision 2 is published in the store and its content cannot change; add the new content as revision 3"
        )]
    );
    // A withdrawn revision is just as fixed; a change to a valid bank elsewhere is not written either.
    let mut files = sample_files();
    let (file, qi, question) = find(&mut files, CIRCLE);
    question["revisions"][0]["summary"] = Value::String("Changed.".into());
    let (_, _, other) = find(&mut files, COSH);
    other["revisions"][1]["status"] = Value::String("published".into());
    let errors = invalid(store.import_bank(&bank_of(&files)).await);
    assert_eq!(
        errors,
        [format!(
            "{file}:/questions/{qi}/revisions/0: revision 1 is withdrawn in the store and its content cannot change; add the new content as revision 3"
        )]
    );
    assert_eq!(
        snapshot(&store).await,
        before,
        "a refused import leaves the store unchanged"
    );
}

async fn new_revisions_and_status_moves(db: Db) {
    let (store, _, _dir) = store(db).await;
    store.import_sample_bank().await.expect("import");
    let mut files = sample_files();
    let (_, _, question) = find(&mut files, CIRCLE);
    let id = question["id"].as_str().expect("id").to_owned();
    let mut third = question["revisions"][1].clone();
    third["revision"] = 3.into();
    third["changeNote"] = "Clearer wording of part (a).".into();
    third["summary"] = "Find a circle's centre and radius, then the tangent at a point.".into();
    question["revisions"]
        .as_array_mut()
        .expect("revisions")
        .push(third);
    let summary = store
        .import_bank(&bank_of(&files))
        .await
        .expect("a new revision is accepted");
    assert_eq!(
        (
            summary.revisions_added,
            summary.questions_changed,
            summary.revisions_changed
        ),
        (1, 1, 0)
    );
    assert_eq!(latest(&store, &id).await, Some(3));
    assert_vocabulary_exact(&store).await;

    // published -> withdrawn moves the served revision back; withdrawn -> published returns it.
    let (_, _, question) = find(&mut files, CIRCLE);
    question["revisions"][2]["status"] = "withdrawn".into();
    let summary = store
        .import_bank(&bank_of(&files))
        .await
        .expect("withdrawing is accepted");
    assert_eq!((summary.revisions_added, summary.revisions_changed), (0, 1));
    assert_eq!(latest(&store, &id).await, Some(2));
    assert_vocabulary_exact(&store).await;
    let (_, _, question) = find(&mut files, CIRCLE);
    question["revisions"][1]["status"] = "withdrawn".into();
    store
        .import_bank(&bank_of(&files))
        .await
        .expect("withdrawing all");
    assert_eq!(latest(&store, &id).await, None);
    assert_vocabulary_exact(&store).await;
    let (_, _, question) = find(&mut files, CIRCLE);
    question["revisions"][0]["status"] = "published".into();
    store
        .import_bank(&bank_of(&files))
        .await
        .expect("republishing");
    assert_eq!(latest(&store, &id).await, Some(1));

    // A draft may change freely, then be published; nothing goes back to draft.
    let (file, qi, question) = find(&mut files, COSH);
    let cosh = question["id"].as_str().expect("id").to_owned();
    question["revisions"][1]["title"] = "Solving cosh and sinh equations".into();
    let summary = store
        .import_bank(&bank_of(&files))
        .await
        .expect("a draft changes");
    assert_eq!(summary.revisions_changed, 1);
    let (_, _, question) = find(&mut files, COSH);
    question["revisions"][1]["status"] = "published".into();
    store
        .import_bank(&bank_of(&files))
        .await
        .expect("publishing the draft");
    assert_eq!(latest(&store, &cosh).await, Some(2));
    assert_vocabulary_exact(&store).await;
    let before = snapshot(&store).await;
    let (_, _, question) = find(&mut files, COSH);
    question["revisions"][1]["status"] = "draft".into();
    let errors = invalid(store.import_bank(&bank_of(&files)).await);
    assert_eq!(
        errors,
        [format!(
            "{file}:/questions/{qi}/revisions/1/status: revision 2 is published in the store and cannot go back to draft"
        )]
    );
    assert_eq!(snapshot(&store).await, before);
}

async fn stored_revisions_cannot_be_dropped(db: Db) {
    let (store, _, _dir) = store(db).await;
    store.import_sample_bank().await.expect("import");
    let before = snapshot(&store).await;
    let mut files = sample_files();
    let (file, qi, question) = find(&mut files, CIRCLE);
    question["revisions"]
        .as_array_mut()
        .expect("revisions")
        .pop();
    let errors = invalid(store.import_bank(&bank_of(&files)).await);
    assert_eq!(
        errors,
        [format!(
            "{file}:/questions/{qi}/revisions: revision 2 of this question is stored; list every stored revision (withdraw a revision instead of deleting it)"
        )]
    );
    assert_eq!(snapshot(&store).await, before);
    // Questions absent from an import are left alone: one file imports on its own.
    let mut only = BTreeMap::new();
    let files = sample_files();
    only.insert("facets.json".to_owned(), files["facets.json"].clone());
    let summary = store
        .import_bank(&bank_of(&only))
        .await
        .expect("facets alone");
    assert!(summary.is_unchanged());
    assert_eq!(
        count(&store, "SELECT COUNT(*) FROM bank_questions").await,
        68
    );
}

async fn facets_are_relabelled_and_kept(db: Db) {
    let (store, _, dir) = store(db).await;
    // A question file alone cannot be imported into an empty store (its facets are unknown)...
    let sample_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bank/sample");
    let errors = invalid(
        store
            .import_bank_path(&sample_dir.join("as-maths.json"))
            .await,
    );
    assert!(
        errors
            .iter()
            .all(|e| e.starts_with("as-maths.json:/questions/")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.ends_with("unknown board \"aqa\"")),
        "{errors:?}"
    );
    // ...but can once the facets are stored.
    store
        .import_bank_path(&sample_dir.join("facets.json"))
        .await
        .expect("facets");
    let summary = store
        .import_bank_path(&sample_dir.join("as-maths.json"))
        .await
        .expect("as-maths");
    assert_eq!(summary.questions_added, 14);
    // Labels change; ids stay even when a later bank no longer declares them.
    let mut files = BTreeMap::new();
    let mut facets = sample_files()["facets.json"].clone();
    facets["facets"]["board"][0]["label"] = "Assessment and Qualifications Alliance".into();
    facets["facets"]["topic"]
        .as_array_mut()
        .expect("topics")
        .truncate(1);
    facets["facets"]
        .as_object_mut()
        .expect("facets")
        .remove("subtopic");
    let first_topic = facets["facets"]["topic"][0]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    files.insert("facets.json".to_owned(), facets);
    let path = dir.path().join("relabel.json");
    std::fs::write(
        &path,
        serde_json::to_vec(&files["facets.json"]).expect("json"),
    )
    .expect("write");
    let summary = store.import_bank_path(&path).await.expect("relabel");
    assert_eq!((summary.facets_added, summary.facets_relabelled), (0, 1));
    let stored = store.stored_facets().await.expect("facets");
    assert_eq!(stored.topic.len(), 28);
    assert_eq!(stored.topic[0].id, first_topic);
    assert_eq!(
        stored.board[0].label,
        "Assessment and Qualifications Alliance"
    );
}

async fn concurrent_imports_load_one_copy(db: Db) {
    let (store, url, _dir) = store(db).await;
    let other = Store::open(&url).await.expect("second store");
    let (a, b) = tokio::join!(
        store.load_sample_bank_if_empty(),
        other.load_sample_bank_if_empty()
    );
    let results = [a.expect("first"), b.expect("second")];
    let added: usize = results.iter().flatten().map(|s| s.questions_added).sum();
    assert_eq!(added, 68, "{results:?}");
    assert_eq!(
        count(&store, "SELECT COUNT(*) FROM bank_questions").await,
        68
    );
    assert_eq!(
        count(&store, "SELECT COUNT(*) FROM bank_revisions").await,
        72
    );
}

async fn export_round_trip(db: Db) {
    let (store, _, dir) = store(db).await;
    store.import_sample_bank().await.expect("import");
    let mut files = sample_files();
    let (_, _, question) = find(&mut files, COSH);
    question["revisions"][1]["status"] = "published".into();
    store.import_bank(&bank_of(&files)).await.expect("publish");
    let before = snapshot(&store).await;
    let out = dir.path().join("export");
    let exported = store.export_bank(&out).await.expect("export");
    assert_eq!(
        (exported.questions, exported.revisions, exported.assets),
        (68, 72, 5)
    );
    assert!(matches!(
        store.export_bank(&out).await,
        Err(examkit::store::bank::ExportError::NotEmpty(_))
    ));
    // The export is a valid bank, and importing it back changes nothing.
    let bank = examkit_bank::load(&out).expect("the export is a valid bank");
    assert_eq!(bank.question_count(), 68);
    let summary = store.import_bank_path(&out).await.expect("re-import");
    assert!(summary.is_unchanged(), "{summary}");
    assert_eq!(snapshot(&store).await, before);
    // Into a fresh store it gives the same revisions and versions.
    let (fresh, _, _dir2) = self::store(db).await;
    fresh
        .import_bank_path(&out)
        .await
        .expect("import the export");
    let strip = |rows: Vec<String>| -> Vec<String> {
        rows.into_iter()
            .filter(|r| r.starts_with("bank_revisions:"))
            .map(|r| r.split(" Some(\"{").next().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(strip(snapshot(&fresh).await), strip(before));
}

async fn favourites(db: Db) {
    let (store, _, _dir) = store(db).await;
    store.import_sample_bank().await.expect("import");
    let user = store
        .create_user("Teacher", true, false)
        .await
        .expect("user")
        .id;
    let mut files = sample_files();
    let question = find(&mut files, CIRCLE).2["id"]
        .as_str()
        .expect("id")
        .to_owned();
    assert!(store.add_favourite(&user, &question).await.expect("add"));
    assert!(
        !store
            .add_favourite(&user, &question)
            .await
            .expect("add again")
    );
    assert!(
        !store
            .add_favourite(&user, &question.to_uppercase())
            .await
            .expect("same id, upper case")
    );
    assert_eq!(
        store.favourites(&user).await.expect("list"),
        std::slice::from_ref(&question)
    );
    assert!(
        store
            .remove_favourite(&user, &question)
            .await
            .expect("remove")
    );
    assert!(
        !store
            .remove_favourite(&user, &question)
            .await
            .expect("remove again")
    );
    assert!(store.favourites(&user).await.expect("list").is_empty());
    assert!(matches!(
        store.add_favourite("no-such-user", &question).await,
        Err(FavouriteError::UnknownUser(_))
    ));
    for bad in ["00000000-0000-4000-8000-000000000000", "not-a-uuid", ""] {
        assert!(matches!(
            store.add_favourite(&user, bad).await,
            Err(FavouriteError::UnknownQuestion(_))
        ));
        assert!(matches!(
            store.remove_favourite(&user, bad).await,
            Err(FavouriteError::UnknownQuestion(_))
        ));
    }
}

/// An import of at least `search::BULK` questions takes the bulk path (statistics refreshed, the
/// word counts made afresh at the end); a small import after it adjusts those counts.
async fn a_large_import_indexes_in_bulk(db: Db) {
    let (store, _, _dir) = store(db).await;
    let memory = examkit_bank::generate::generate(examkit::store::search::BULK, 7)
        .expect("a generated bank");
    let bank = load_memory(&memory, &Facets::default()).expect("the generated bank loads");
    let summary = store.import_bank(&bank).await.expect("a large import");
    assert_eq!(summary.questions_added, examkit::store::search::BULK);
    assert_eq!(
        count(&store, "SELECT count(*) FROM search_questions").await,
        examkit::store::search::BULK as i64
    );
    assert_vocabulary_exact(&store).await;
    store
        .import_sample_bank()
        .await
        .expect("a small import after it");
    assert_vocabulary_exact(&store).await;
}

on_both!(
    a_large_import_indexes_in_bulk,
    sample_import_and_reimport,
    published_content_is_immutable,
    new_revisions_and_status_moves,
    stored_revisions_cannot_be_dropped,
    facets_are_relabelled_and_kept,
    concurrent_imports_load_one_copy,
    export_round_trip,
    favourites,
);
