//! Administration commands: `examkit users …` and `examkit keys …`.
//!
//! Keys are managed here, outside the API: an API key can never manage keys.

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::auth::{self, parse_scopes};
use crate::config::{Expiry, StoreArgs};
use crate::store::accounts::{CreateKeyError, normalise_email};
use crate::store::{Store, now_ms, rfc3339};

/// `examkit users …`
#[derive(Debug, Subcommand)]
pub enum UsersCommand {
    /// Create an account; prints its id. With `--email` and `--password-stdin` it can sign in to
    /// the app at `/app/`.
    Create {
        /// The account's display name (defaults to the email).
        #[arg(long, required_unless_present = "email")]
        name: Option<String>,
        /// The email the account signs in to the app with.
        #[arg(long, requires = "password_stdin")]
        email: Option<String>,
        /// Read the app password from the first line of standard input.
        #[arg(long, requires = "email")]
        password_stdin: bool,
        /// Create the account unverified (its keys get 401 until it is verified).
        #[arg(long)]
        unverified: bool,
        /// Create the account restricted (its keys get 403).
        #[arg(long)]
        restricted: bool,
        /// Where state is kept.
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Change an account's verified or restricted flag.
    Update {
        /// The account id.
        #[arg(long)]
        user: String,
        /// Set whether the account is verified.
        #[arg(long)]
        verified: Option<bool>,
        /// Set whether the account is restricted.
        #[arg(long)]
        restricted: Option<bool>,
        /// Where state is kept.
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Set an account's app password (read from standard input) and end its browser sessions.
    /// With `--user`, also gives an existing account the email it signs in with.
    SetPassword {
        /// The email the account signs in with.
        #[arg(long)]
        email: String,
        /// The account id, to give an account without an email one.
        #[arg(long)]
        user: Option<String>,
        /// Read the password from the first line of standard input (required: a password is
        /// never an argument, which other users of the machine could read).
        #[arg(long, required = true)]
        password_stdin: bool,
        /// Where state is kept.
        #[command(flatten)]
        store: StoreArgs,
    },
    /// List accounts.
    List {
        /// Where state is kept.
        #[command(flatten)]
        store: StoreArgs,
    },
}

/// Arguments of `examkit keys create`.
#[derive(Debug, Args)]
pub struct CreateKeyArgs {
    /// The owning account id.
    #[arg(long)]
    pub user: String,
    /// A name for the key.
    #[arg(long)]
    pub name: String,
    /// Comma-separated scopes, e.g. `marking:read,marking:import`.
    #[arg(long)]
    pub scopes: String,
    /// Lifetime: 30d, 90d or 1y.
    #[arg(long, value_enum)]
    pub expires: Expiry,
    /// Where state is kept.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// `examkit keys …`
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Create a key; prints the secret once on standard output (it cannot be shown again).
    Create(CreateKeyArgs),
    /// List keys (never their secrets).
    List {
        /// Only this account's keys.
        #[arg(long)]
        user: Option<String>,
        /// Where state is kept.
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Revoke a key; requests with it stop at once.
    Revoke {
        /// The key id.
        #[arg(long)]
        key: String,
        /// Where state is kept.
        #[command(flatten)]
        store: StoreArgs,
    },
    /// A key's usage over the last 30 UTC days, by date, operation and status.
    Usage {
        /// The key id.
        #[arg(long)]
        key: String,
        /// Where state is kept.
        #[command(flatten)]
        store: StoreArgs,
    },
}

async fn open(store: &StoreArgs) -> Result<Store, String> {
    store.open().await.map_err(|e| e.to_string())
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// Runs a `users` command.
pub async fn users(command: UsersCommand) -> ExitCode {
    report(users_inner(command).await)
}

/// Runs a `keys` command.
pub async fn keys(command: KeysCommand) -> ExitCode {
    report(keys_inner(command).await)
}

fn report(result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("examkit: {message}");
            ExitCode::from(1)
        }
    }
}

fn print(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| e.to_string())
}

/// The password on the first line of standard input, checked against the password rules.
fn read_password(from_stdin: bool) -> Result<String, String> {
    if !from_stdin {
        return Err("the password is read from standard input: pass --password-stdin".into());
    }
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| format!("reading the password from standard input failed: {e}"))?;
    let password = line.strip_suffix('\n').unwrap_or(&line);
    let password = password.strip_suffix('\r').unwrap_or(password);
    crate::password::check(password)?;
    Ok(password.to_owned())
}

/// A new hash of `password`, made under the process's bound on password work (as the service's
/// checks are: [`crate::password::checks`]).
async fn hash_password(password: String) -> Result<String, String> {
    crate::password::checks::hash(password)
        .await
        .map_err(|e| e.to_string())
}

async fn users_inner(command: UsersCommand) -> Result<(), String> {
    match command {
        UsersCommand::Create {
            name,
            email,
            password_stdin,
            unverified,
            restricted,
            store,
        } => {
            let login = match email {
                Some(email) => {
                    let email = normalise_email(&email)
                        .ok_or_else(|| format!("--email {email:?} is not an email address"))?;
                    let password = read_password(password_stdin)?;
                    Some((email, hash_password(password).await?))
                }
                None => None,
            };
            let name = name
                .or_else(|| login.as_ref().map(|(email, _)| email.clone()))
                .unwrap_or_default();
            let name = name.trim();
            if name.is_empty() {
                return Err("--name must not be empty".into());
            }
            let store = open(&store).await?;
            if let Some((email, _)) = &login
                && store
                    .user_by_email(email)
                    .await
                    .map_err(|e| e.to_string())?
                    .is_some()
            {
                return Err(format!("another account already signs in with {email}"));
            }
            let user = store
                .create_user(name, !unverified, restricted)
                .await
                .map_err(|e| e.to_string())?;
            if let Some((email, hash)) = login {
                store
                    .set_login(Some(&user.id), &email, &hash)
                    .await
                    .map_err(|e| e.to_string())?;
            }
            print(&format!("{}\n", user.id))
        }
        UsersCommand::SetPassword {
            email,
            user,
            password_stdin,
            store,
        } => {
            let email = normalise_email(&email)
                .ok_or_else(|| format!("--email {email:?} is not an email address"))?;
            let password = read_password(password_stdin)?;
            let hash = hash_password(password).await?;
            let store = open(&store).await?;
            let user = store
                .set_login(user.as_deref(), &email, &hash)
                .await
                .map_err(|e| e.to_string())?;
            eprintln!(
                "set the app password of {} ({email}); its browser sessions ended",
                user.id
            );
            Ok(())
        }
        UsersCommand::Update {
            user,
            verified,
            restricted,
            store,
        } => {
            let store = open(&store).await?;
            if store
                .update_user(&user, verified, restricted)
                .await
                .map_err(|e| e.to_string())?
            {
                Ok(())
            } else {
                Err(format!("no user with id {user}"))
            }
        }
        UsersCommand::List { store } => {
            let store = open(&store).await?;
            let users = store.users().await.map_err(|e| e.to_string())?;
            let keys = store.keys(None).await.map_err(|e| e.to_string())?;
            let now = now_ms();
            let mut text = format!(
                "{:<36}  {:<8}  {:<10}  {:<11}  {:<24}  {:<32}  NAME\n",
                "ID", "VERIFIED", "RESTRICTED", "ACTIVE KEYS", "CREATED", "EMAIL"
            );
            for u in users {
                let active = keys
                    .iter()
                    .filter(|k| k.user_id == u.id && k.is_active(now))
                    .count();
                text.push_str(&format!(
                    "{:<36}  {:<8}  {:<10}  {:<11}  {:<24}  {:<32}  {}\n",
                    u.id,
                    yes_no(u.verified),
                    yes_no(u.restricted),
                    active,
                    rfc3339(u.created_at),
                    u.email.as_deref().unwrap_or("-"),
                    u.name
                ));
            }
            print(&text)
        }
    }
}

async fn keys_inner(command: KeysCommand) -> Result<(), String> {
    match command {
        KeysCommand::Create(args) => {
            let scopes = parse_scopes(&args.scopes)?;
            if scopes.is_empty() {
                return Err("--scopes needs at least one scope".into());
            }
            let name = args.name.trim();
            if name.is_empty() {
                return Err("--name must not be empty".into());
            }
            let store = open(&args.store).await?;
            let new = auth::generate_key().map_err(|e| format!("no randomness available: {e}"))?;
            let expires_at = now_ms() + args.expires.millis();
            let key = store
                .create_key(
                    &args.user,
                    name,
                    &new.prefix,
                    &new.fingerprint,
                    &scopes,
                    expires_at,
                )
                .await
                .map_err(|e| match e {
                    CreateKeyError::Store(e) => e.to_string(),
                    other => other.to_string(),
                })?;
            eprintln!(
                "created key {} for user {} (scopes {}, expires {}); store the secret now: it cannot be shown again",
                key.id,
                key.user_id,
                auth::join_scopes(&key.scopes),
                rfc3339(key.expires_at)
            );
            print(&format!("{}\n", new.secret))
        }
        KeysCommand::List { user, store } => {
            let store = open(&store).await?;
            let keys = store
                .keys(user.as_deref())
                .await
                .map_err(|e| e.to_string())?;
            let now = now_ms();
            let mut text = format!(
                "{:<36}  {:<36}  {:<14}  {:<7}  {:<24}  {:<24}  {:>8}  {:>6}  {:<24}  NAME  SCOPES\n",
                "ID",
                "USER",
                "PREFIX",
                "STATE",
                "CREATED",
                "EXPIRES",
                "REQUESTS",
                "ERRORS",
                "LAST USED"
            );
            for k in keys {
                text.push_str(&format!(
                    "{:<36}  {:<36}  {:<14}  {:<7}  {:<24}  {:<24}  {:>8}  {:>6}  {:<24}  {}  {}\n",
                    k.id,
                    k.user_id,
                    format!("{}…", k.prefix),
                    k.state(now),
                    rfc3339(k.created_at),
                    rfc3339(k.expires_at),
                    k.request_count,
                    k.error_count,
                    k.last_used_at
                        .map(rfc3339)
                        .unwrap_or_else(|| "never".into()),
                    k.name,
                    auth::join_scopes(&k.scopes)
                ));
            }
            print(&text)
        }
        KeysCommand::Revoke { key, store } => {
            let store = open(&store).await?;
            if store.revoke_key(&key).await.map_err(|e| e.to_string())? {
                eprintln!("revoked key {key}");
                Ok(())
            } else {
                Err(format!("no active key with id {key}"))
            }
        }
        KeysCommand::Usage { key, store } => {
            let store = open(&store).await?;
            if store.key(&key).await.map_err(|e| e.to_string())?.is_none() {
                return Err(format!("no key with id {key}"));
            }
            let rows = store
                .usage(&key, now_ms())
                .await
                .map_err(|e| e.to_string())?;
            let mut text = format!(
                "{:<10}  {:<45}  {:>6}  {:>8}  {:>8}  {:>8}\n",
                "DATE (UTC)", "OPERATION", "STATUS", "REQUESTS", "AVG MS", "MAX MS"
            );
            for r in rows {
                let avg = if r.requests > 0 {
                    r.total_ms / r.requests
                } else {
                    0
                };
                text.push_str(&format!(
                    "{:<10}  {:<45}  {:>6}  {:>8}  {:>8}  {:>8}\n",
                    r.day, r.operation, r.status, r.requests, avg, r.max_ms
                ));
            }
            print(&text)
        }
    }
}
