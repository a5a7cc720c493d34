//! Adds accounts and keys to an examkit database for the HTTP benchmark (`service/bench/http.sh`),
//! so that a run under the specification's rate limits spreads its load over enough keys and
//! accounts that no request is refused.
//!
//! ```text
//! cargo run --release -p examkit --example bench_accounts -- DATABASE_URL ACCOUNTS KEYS_PER_ACCOUNT
//! ```
//!
//! The database must already exist (any `examkit` command on it creates it). Rows are written
//! with plain SQL in one transaction, in the columns every schema version has, so the same
//! program fills the database of an older binary. Prints one line per key: `ACCOUNT_ID SECRET`.

use std::process::ExitCode;

use examkit::auth::{Scope, generate_key, join_scopes};
use sqlx::any::{AnyPoolOptions, install_default_drivers};

async fn run() -> Result<String, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, accounts, keys] = args.as_slice() else {
        return Err("usage: bench_accounts DATABASE_URL ACCOUNTS KEYS_PER_ACCOUNT".to_owned());
    };
    let number = |s: &str| {
        s.parse::<usize>()
            .ok()
            .filter(|n| (1..=100_000).contains(n))
            .ok_or_else(|| format!("not a count from 1 to 100000: {s}"))
    };
    let (accounts, keys) = (number(accounts)?, number(keys)?);
    if keys > examkit::store::accounts::MAX_ACTIVE_KEYS as usize {
        return Err(format!(
            "an account holds at most {} active keys",
            examkit::store::accounts::MAX_ACTIVE_KEYS
        ));
    }
    install_default_drivers();
    let pool = AnyPoolOptions::new()
        .max_connections(1)
        .connect(url)
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let now = examkit::store::now_ms();
    let expires = now + 7 * 86_400_000;
    let scopes = join_scopes(&[Scope::MarkingImport, Scope::MarkingRead]);
    let mut out = String::new();
    let mut tx = pool.begin().await.map_err(|e| e.to_string())?;
    for a in 0..accounts {
        let user = uuid::Uuid::new_v4().to_string();
        sqlx::query(
            "INSERT INTO users (id, name, verified, restricted, created_at) VALUES ($1, $2, 1, 0, $3)",
        )
        .bind(&user)
        .bind(format!("Benchmark {a}"))
        .bind(now)
        .execute(&mut *tx)
        .await
        .map_err(|e| format!("users: {e}"))?;
        for k in 0..keys {
            let key = generate_key().map_err(|e| format!("randomness: {e}"))?;
            sqlx::query(
                "INSERT INTO api_keys (id, user_id, name, prefix, fingerprint, scopes, created_at, expires_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(uuid::Uuid::new_v4().to_string())
            .bind(&user)
            .bind(format!("bench {k}"))
            .bind(&key.prefix)
            .bind(&key.fingerprint)
            .bind(&scopes)
            .bind(now)
            .bind(expires)
            .execute(&mut *tx)
            .await
            .map_err(|e| format!("api_keys: {e}"))?;
            out.push_str(&format!("{user} {}\n", key.secret));
        }
    }
    tx.commit().await.map_err(|e| e.to_string())?;
    Ok(out)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match run().await {
        Ok(lines) => {
            print!("{lines}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench_accounts: {e}");
            ExitCode::from(2)
        }
    }
}
