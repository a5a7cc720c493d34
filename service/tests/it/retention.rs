//! Pruning on SQLite and PostgreSQL, driven through the store with a chosen `now`: idempotency
//! records older than their retention go (a request still running keeps its claim, and a recent
//! key still replays), usage rows before the window the usage view shows go (what it shows stays
//! the same), expired rate-limit counters go, each in batches, and nothing else is touched. Also
//! here, as it is the same bookkeeping: a usage flush that fails midway loses and repeats nothing,
//! and an admission whose transaction fails counts nothing and leaves the next one decided.

use crate::common;

use common::Db;
use examkit::auth::generate_key;
use examkit::store::idempotency::{Claim, RETENTION_MS};
use examkit::store::rate::Limits;
use examkit::store::{PRUNE_BATCH, Store};
use sqlx::Row;

/// 2026-01-01T13:00:00Z: a fixed "now", so day boundaries fall where the tests expect.
const NOW: i64 = 1_767_272_400_000;
const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;

on_both!(
    idempotency_records_expire_after_their_retention,
    usage_outside_the_shown_window_is_pruned,
    expired_rate_counters_are_pruned,
    one_pass_prunes_every_table,
    a_usage_flush_that_fails_midway_loses_and_repeats_nothing,
    an_admission_group_that_fails_counts_nothing,
);

/// A store on a fresh database with one account and one key; returns the store, the key id and
/// the account id.
async fn fixture(db: Db) -> (Store, String, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = common::fresh_database(db, dir.path()).await;
    let store = Store::open(&url).await.expect("open");
    let user = store
        .create_user("retention", true, false)
        .await
        .expect("user")
        .id;
    let new = generate_key().expect("randomness");
    let key = store
        .create_key(
            &user,
            "retention",
            &new.prefix,
            &new.fingerprint,
            examkit::auth::Scope::ALL,
            NOW + 30 * DAY,
        )
        .await
        .expect("key")
        .id;
    (store, key, user, dir)
}

async fn strings(store: &Store, sql: &'static str) -> Vec<String> {
    sqlx::query(sql)
        .fetch_all(store.pool())
        .await
        .expect("read")
        .iter()
        .map(|row| row.try_get::<String, _>(0).expect("text"))
        .collect()
}

async fn count(store: &Store, table: &str) -> i64 {
    sqlx::query(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
        .fetch_one(store.pool())
        .await
        .expect("count")
        .try_get::<i64, _>(0)
        .expect("count")
}

/// Runs `statements` in one bookkeeping transaction (a test's setup of refusals).
async fn in_bookkeeping<S: AsRef<str>>(store: &Store, statements: &[S], what: &str) {
    let mut tx = store.begin_bookkeeping().await.expect("tx");
    for sql in statements {
        sqlx::query(sqlx::AssertSqlSafe(sql.as_ref().to_owned()))
            .execute(&mut *tx)
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
    }
    tx.commit().await.expect("commit");
}

/// Claims `idem` at `at` and, unless `pending`, stores a response for it.
async fn record(store: &Store, key: &str, idem: &str, at: i64, pending: bool) {
    let claim = store
        .claim_idempotency(key, idem, "request-hash", at)
        .await
        .expect("claim");
    assert_eq!(claim, Claim::Fresh, "{idem}");
    if !pending {
        store
            .finish_idempotency(
                key,
                idem,
                201,
                format!("{{\"idem\":\"{idem}\"}}").as_bytes(),
            )
            .await
            .expect("finish");
    }
}

async fn idempotency_records_expire_after_their_retention(db: Db) {
    let (store, key, _, _dir) = fixture(db).await;
    const { assert!(RETENTION_MS >= 24 * HOUR) };
    record(&store, &key, "old-done", NOW - RETENTION_MS - 1, false).await;
    record(&store, &key, "fresh-done", NOW - RETENTION_MS + HOUR, false).await;
    record(&store, &key, "edge-done", NOW - RETENTION_MS, false).await;
    record(&store, &key, "running", NOW - 60_000, true).await;
    record(&store, &key, "abandoned", NOW - 2 * HOUR, true).await;
    record(
        &store,
        &key,
        "old-abandoned",
        NOW - RETENTION_MS - DAY,
        true,
    )
    .await;
    // More old records than one batch holds, with response bodies.
    let bulk = 2 * PRUNE_BATCH + 3;
    let mut tx = store.begin_write().await.expect("tx");
    for i in 0..bulk {
        sqlx::query(
            "INSERT INTO idempotency_keys (key_id, idem_key, request_hash, state, status, body, \
             created_at) VALUES ($1, $2, 'h', 'done', 200, $3, $4)",
        )
        .bind(key.as_str())
        .bind(format!("bulk-{i:05}"))
        .bind(vec![b'x'; 2048])
        .bind(NOW - RETENTION_MS - 1 - i)
        .execute(&mut *tx)
        .await
        .expect("insert");
    }
    tx.commit().await.expect("commit");

    let removed = store.prune_idempotency(NOW).await.expect("prune");
    assert_eq!(removed, u64::try_from(bulk).expect("count") + 2);
    assert_eq!(
        strings(
            &store,
            "SELECT idem_key FROM idempotency_keys ORDER BY idem_key"
        )
        .await,
        ["abandoned", "edge-done", "fresh-done", "running"]
    );
    assert_eq!(store.prune_idempotency(NOW).await.expect("prune"), 0);

    // A kept key replays its response; a request still running is still running; a pruned key
    // is new again.
    assert_eq!(
        store
            .claim_idempotency(&key, "fresh-done", "request-hash", NOW)
            .await
            .expect("claim"),
        Claim::Replay {
            status: 201,
            body: br#"{"idem":"fresh-done"}"#.to_vec()
        }
    );
    assert_eq!(
        store
            .claim_idempotency(&key, "running", "request-hash", NOW)
            .await
            .expect("claim"),
        Claim::InProgress
    );
    assert_eq!(
        store
            .claim_idempotency(&key, "old-done", "request-hash", NOW)
            .await
            .expect("claim"),
        Claim::Fresh
    );
}

async fn usage_outside_the_shown_window_is_pruned(db: Db) {
    let (store, key, _, _dir) = fixture(db).await;
    for days_ago in [0, 1, 29, 30, 31, 32, 45, 400] {
        for status in [200, 404] {
            store
                .record_usage(&key, "GET /v1/me", status, 7, NOW - days_ago * DAY)
                .await
                .expect("record");
        }
    }
    // Old rows of many operations: more than one batch.
    let bulk = PRUNE_BATCH + 5;
    let mut tx = store.begin_bookkeeping().await.expect("tx");
    for i in 0..bulk {
        sqlx::query(
            "INSERT INTO usage_daily (key_id, day, operation, status, requests, total_ms, max_ms) \
             VALUES ($1, '2025-06-01', $2, 200, 1, 1, 1)",
        )
        .bind(key.as_str())
        .bind(format!("GET /v1/op{i}"))
        .execute(&mut *tx)
        .await
        .expect("insert");
    }
    tx.commit().await.expect("commit");
    let shown = store.usage(&key, NOW).await.expect("usage");
    assert_eq!(shown.len(), 2 * 3, "days 0, 1 and 29 are shown");

    let removed = store.prune_usage(NOW).await.expect("prune");
    assert_eq!(removed, u64::try_from(bulk).expect("count") + 2 * 4);
    assert_eq!(store.usage(&key, NOW).await.expect("usage"), shown);
    // The day before the window is kept too (a server whose clock is a little behind still
    // shows it); everything older is gone.
    assert_eq!(
        strings(&store, "SELECT DISTINCT day FROM usage_daily ORDER BY day").await,
        ["2025-12-02", "2025-12-03", "2025-12-31", "2026-01-01"]
    );
    assert_eq!(store.prune_usage(NOW).await.expect("prune"), 0);
    // Lifetime counters are the key's own and stay.
    let key_row = sqlx::query("SELECT request_count FROM api_keys WHERE id = $1")
        .bind(key.as_str())
        .fetch_one(store.pool())
        .await
        .expect("key");
    assert_eq!(key_row.try_get::<i64, _>(0).expect("count"), 16);
}

async fn expired_rate_counters_are_pruned(db: Db) {
    let (store, key, user, _dir) = fixture(db).await;
    let limits = Limits::default();
    // A read two days ago (4 counters: key and account, minute and day), then a write now (6).
    let old = store
        .admit(&key, &user, false, NOW - 2 * DAY, &limits)
        .await
        .expect("admit");
    assert!(old.admitted);
    let new = store
        .admit(&key, &user, true, NOW, &limits)
        .await
        .expect("admit");
    assert!(new.admitted);
    assert_eq!(count(&store, "rate_counters").await, 10);
    assert_eq!(store.prune_rate_counters(NOW).await.expect("prune"), 4);
    assert_eq!(count(&store, "rate_counters").await, 6);
    // The minute's counters are still counted.
    let again = store
        .admit(&key, &user, true, NOW, &limits)
        .await
        .expect("admit");
    assert_eq!(again.remaining, new.remaining - 1);
}

async fn one_pass_prunes_every_table(db: Db) {
    let (store, key, user, _dir) = fixture(db).await;
    record(&store, &key, "old", NOW - RETENTION_MS - HOUR, false).await;
    record(&store, &key, "new", NOW - HOUR, false).await;
    store
        .record_usage(&key, "GET /v1/me", 200, 1, NOW - 90 * DAY)
        .await
        .expect("usage");
    store
        .record_usage(&key, "GET /v1/me", 200, 1, NOW)
        .await
        .expect("usage");
    store
        .admit(&key, &user, false, NOW - DAY, &Limits::default())
        .await
        .expect("admit");
    for (id, expires_at) in [("expired", NOW - 1), ("live", NOW + HOUR)] {
        let session = examkit::store::app_sessions::AppSession {
            id_hash: id.to_owned(),
            user_id: user.clone(),
            csrf_token: "t".into(),
            created_at: NOW - DAY,
            last_seen_at: NOW - DAY,
            expires_at,
        };
        store.create_app_session(&session).await.expect("session");
    }
    let pruned = examkit::retention::prune(&store, NOW, true).await;
    assert_eq!(pruned.idempotency_records, Some(1));
    assert_eq!(pruned.usage_rows, Some(1));
    assert_eq!(pruned.app_sessions, Some(1));
    assert!(store.app_session("live").await.expect("read").is_some());
    assert_eq!(pruned.rate_counters, Some(4));
    // Counters only: the hourly tables are left for their own pass.
    record(&store, &key, "old-2", NOW - RETENTION_MS - HOUR, false).await;
    let pruned = examkit::retention::prune(&store, NOW, false).await;
    assert_eq!(pruned.idempotency_records, None);
    assert_eq!(count(&store, "idempotency_keys").await, 2);
}

/// A flush is written in short transactions: when one fails, what was committed before it stays
/// written and the rest stays pending, so the next flush completes every count exactly once.
async fn a_usage_flush_that_fails_midway_loses_and_repeats_nothing(db: Db) {
    let (store, key, _, _dir) = fixture(db).await;
    let mut operations: Vec<String> = (0..250).map(|i| format!("GET /v1/op{i}")).collect();
    // Refuse one row well after the first transaction's worth (rows go in name order).
    operations.sort();
    let refused = operations[150].clone();
    let (install, remove): (Vec<String>, &str) = match db {
        Db::Sqlite => (
            vec![format!(
                "CREATE TRIGGER refuse BEFORE INSERT ON usage_daily WHEN NEW.operation = '{refused}' \
                 BEGIN SELECT RAISE(ABORT, 'refused'); END"
            )],
            "DROP TRIGGER refuse",
        ),
        Db::Postgres => (
            vec![
                format!(
                    "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
                     IF NEW.operation = '{refused}' THEN RAISE EXCEPTION 'refused'; END IF; \
                     RETURN NEW; END $$"
                ),
                "CREATE TRIGGER refuse BEFORE INSERT ON usage_daily FOR EACH ROW EXECUTE FUNCTION refuse()"
                    .to_owned(),
            ],
            "DROP TRIGGER refuse ON usage_daily",
        ),
    };
    in_bookkeeping(&store, &install, "install the refusal").await;
    // Recorded once the refusal is in place: the flusher in the background fails on it too.
    for operation in &operations {
        store
            .record_usage(&key, operation, 200, 3, NOW)
            .await
            .expect("record");
    }
    assert!(
        store.flush_usage().await.is_err(),
        "the refused row fails its flush"
    );
    let written: i64 = sqlx::query("SELECT COUNT(*) FROM usage_daily WHERE key_id = $1")
        .bind(key.as_str())
        .fetch_one(store.pool())
        .await
        .expect("count")
        .try_get(0)
        .expect("count");
    assert!(
        written > 0 && written < 250,
        "the transactions before the failed one stay written ({written} rows)"
    );

    in_bookkeeping(&store, &[remove], "remove the refusal").await;
    store.flush_usage().await.expect("the next flush");
    let rows = sqlx::query(
        "SELECT operation, requests, total_ms FROM usage_daily WHERE key_id = $1 ORDER BY operation",
    )
    .bind(key.as_str())
    .fetch_all(store.pool())
    .await
    .expect("rows");
    let mut counted: Vec<(String, i64, i64)> = rows
        .iter()
        .map(|row| {
            (
                row.try_get("operation").expect("operation"),
                row.try_get("requests").expect("requests"),
                row.try_get("total_ms").expect("total_ms"),
            )
        })
        .collect();
    counted.sort();
    let expected: Vec<(String, i64, i64)> =
        operations.iter().map(|op| (op.clone(), 1, 3)).collect();
    assert_eq!(counted, expected, "every request counted once");
    let requests: i64 = sqlx::query("SELECT request_count FROM api_keys WHERE id = $1")
        .bind(key.as_str())
        .fetch_one(store.pool())
        .await
        .expect("key")
        .try_get(0)
        .expect("count");
    assert_eq!(requests, 250);
}

/// An admission whose group transaction fails is an error, not a decision, and none of its
/// counters is written (the day's as little as the minute's); the worker goes on, and the next
/// admission counts from zero.
async fn an_admission_group_that_fails_counts_nothing(db: Db) {
    let (store, key, user, _dir) = fixture(db).await;
    let (install, remove): (Vec<&str>, &str) = match db {
        Db::Sqlite => (
            vec![
                "CREATE TRIGGER refuse BEFORE INSERT ON rate_counters WHEN NEW.bucket LIKE 'k:%:m:%' \
                 BEGIN SELECT RAISE(ABORT, 'refused'); END",
            ],
            "DROP TRIGGER refuse",
        ),
        Db::Postgres => (
            vec![
                "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
                 IF NEW.bucket LIKE 'k:%:m:%' THEN RAISE EXCEPTION 'refused'; END IF; \
                 RETURN NEW; END $$",
                "CREATE TRIGGER refuse BEFORE INSERT ON rate_counters FOR EACH ROW EXECUTE FUNCTION refuse()",
            ],
            "DROP TRIGGER refuse ON rate_counters",
        ),
    };
    in_bookkeeping(&store, &install, "install the refusal").await;
    let limits = Limits::default();
    let failed = store.admit(&key, &user, false, NOW, &limits).await;
    assert!(
        failed.is_err(),
        "a failed transaction decides nothing: {failed:?}"
    );
    assert_eq!(
        count(&store, "rate_counters").await,
        0,
        "nothing was counted"
    );

    in_bookkeeping(&store, &[remove], "remove the refusal").await;
    let admitted = store
        .admit(&key, &user, false, NOW, &limits)
        .await
        .expect("the next admission");
    assert!(admitted.admitted);
    assert_eq!(
        (admitted.remaining, admitted.daily_remaining),
        (limits.key_per_minute - 1, limits.key_per_day - 1),
        "counted once, from zero"
    );
    assert_eq!(count(&store, "rate_counters").await, 4);
}
