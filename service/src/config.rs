//! Configuration from flags and the environment: each command's flags, the values they take, and
//! the settings the layers above share ([`AppConfig`] for the teachers' app, with [`Cidr`] for its
//! trusted proxies and [`SetupToken`] for its first run). Flags and settings only: turning flags
//! into a domain's configuration is the command's work (see `crate::commands::marking_flags`).

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

mod app;
mod cidr;

pub use app::{AppConfig, HSTS, SetupToken};
pub use cidr::Cidr;

/// A share from 0 to 1, as flags give it; the error says what is wrong.
pub fn share(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{text} is not between 0 and 1"))
    }
}

/// Where the service keeps its state.
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// Directory for the service's files; the default SQLite database lives here.
    #[arg(
        long,
        env = "EXAMKIT_DATA_DIR",
        default_value = "./data",
        value_name = "DIR"
    )]
    pub data_dir: PathBuf,
    /// Database URL: `sqlite://PATH` or `postgres://USER:PASSWORD@HOST/DB`. Defaults to
    /// `examkit.db` in the data directory.
    #[arg(
        long = "database",
        env = "DATABASE_URL",
        value_name = "URL",
        hide_env_values = true
    )]
    pub database_url: Option<String>,
    /// Where uploads, page images and exported PDFs are kept: `database` (beside their rows, the
    /// default), `file:///DIRECTORY` (one machine) or `s3://BUCKET/PREFIX` (an S3-compatible
    /// store; endpoint, region and credentials from `AWS_ENDPOINT_URL`, `AWS_REGION`,
    /// `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`). Move existing files with
    /// `examkit assets migrate --to URL` before changing it.
    #[arg(
        long,
        env = "EXAMKIT_ASSET_STORE",
        default_value = "database",
        value_name = "URL",
        value_parser = crate::store::objects::AssetStoreUrl::parse
    )]
    pub asset_store: crate::store::objects::AssetStoreUrl,
}

impl StoreArgs {
    /// Opens the database (applying migrations) with the configured asset store, bound to this
    /// database (an error when another database's, or when it cannot be read: see
    /// [`crate::store::deployment`]).
    pub async fn open(&self) -> Result<crate::store::Store, crate::store::StoreError> {
        let objects = crate::store::objects::Objects::open(&self.asset_store)?;
        let store = crate::store::Store::open(&self.resolved_url())
            .await?
            .with_objects(objects);
        store.bind_configured_objects().await?;
        Ok(store)
    }

    /// The database URL to open: the one given, or a SQLite file in the data directory.
    pub fn resolved_url(&self) -> String {
        match &self.database_url {
            Some(url) => url.clone(),
            None => {
                let path = self.data_dir.join("examkit.db");
                format!("sqlite://{}?mode=rwc", path.display())
            }
        }
    }
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Whether the service enforces its rate limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RateLimits {
    /// The specification's limits (the default).
    On,
    /// Nothing is refused; counters are still kept and reported. For benchmarks and load tests
    /// on a private instance only.
    Off,
}

/// Whether `examkit serve` loads the sample bank embedded in the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SampleBank {
    /// Load it on first start, when the bank holds no question (the default).
    On,
    /// Never load it.
    Off,
}

/// Whether `examkit serve` prepares paper PDFs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PdfExport {
    /// Papers' PDFs are prepared on request (the default).
    On,
    /// Preparing PDFs is refused with 503 `pdf_export_disabled`; PDFs prepared earlier are still
    /// served.
    Off,
}

/// A feature switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Switch {
    /// On (the default).
    On,
    /// Off.
    Off,
}

/// Key lifetimes offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Expiry {
    /// 30 days.
    #[value(name = "30d")]
    Days30,
    /// 90 days.
    #[value(name = "90d")]
    Days90,
    /// One year (365 days).
    #[value(name = "1y")]
    Year,
}

impl Expiry {
    /// The lifetime in milliseconds.
    pub fn millis(self) -> i64 {
        let days = match self {
            Expiry::Days30 => 30,
            Expiry::Days90 => 90,
            Expiry::Year => 365,
        };
        days * 86_400_000
    }
}

/// How automated marking runs: shared by `examkit serve` and `examkit worker`.
#[derive(Debug, Clone, Args)]
pub struct MarkingArgs {
    /// `off` turns automated marking off: its routes answer 503 `automated_marking_disabled`,
    /// `GET /v1/marking/sessions` says `enabled: false`, and no worker runs. Imports still work.
    #[arg(
        long,
        env = "EXAMKIT_AUTOMATED_MARKING",
        value_enum,
        default_value = "on"
    )]
    pub automated_marking: Switch,
    /// Workers this process runs on the job queue (`examkit serve`: 0 serves HTTP only).
    #[arg(long, env = "EXAMKIT_WORKERS", default_value_t = 1, value_name = "N")]
    pub workers: usize,
    /// Pages each account may have indexed per UTC day.
    #[arg(
        long,
        env = "EXAMKIT_MARKING_PAGES_PER_DAY",
        default_value_t = 500,
        value_name = "N"
    )]
    pub marking_pages_per_day: i64,
    /// Questions each account may have marked per UTC day.
    #[arg(
        long,
        env = "EXAMKIT_MARKING_QUESTIONS_PER_DAY",
        default_value_t = 200,
        value_name = "N"
    )]
    pub marking_questions_per_day: i64,
    /// A claimed job's lease, in seconds; heartbeats renew it, and a job whose worker died is
    /// taken over once it expires.
    #[arg(
        long,
        env = "EXAMKIT_JOB_LEASE_SECONDS",
        default_value_t = 30,
        value_name = "S"
    )]
    pub job_lease_seconds: u64,
    /// Attempts per job before it fails.
    #[arg(
        long,
        env = "EXAMKIT_JOB_ATTEMPTS",
        default_value_t = 3,
        value_name = "N"
    )]
    pub job_attempts: i64,
    /// The first retry's delay in milliseconds; each further retry doubles it.
    #[arg(
        long,
        env = "EXAMKIT_JOB_BACKOFF_MS",
        default_value_t = 5000,
        value_name = "MS"
    )]
    pub job_backoff_ms: u64,
    /// `off` indexes pages without OCR (text layers and page codes only).
    #[arg(long, env = "EXAMKIT_OCR", value_enum, default_value = "on")]
    pub ocr: Switch,
    /// Which marker marks questions: `builtin` (structured schemes), `external` (an HTTP marking
    /// pipeline at `--marker-url`; contract in schemas/marker-contract.md) or `openai` (a
    /// vision-language model behind an OpenAI-compatible API at `--marker-url`, such as Ollama,
    /// vLLM, llama.cpp or LM Studio, named by `--marker-model`).
    #[arg(long, env = "EXAMKIT_MARKER", value_enum, default_value = "builtin")]
    pub marker: MarkerKind,
    /// The external marker's URL, or for `openai` the API base (such as
    /// http://127.0.0.1:11434/v1; requests go to <base>/chat/completions).
    #[arg(long, env = "EXAMKIT_MARKER_URL", value_name = "URL")]
    pub marker_url: Option<String>,
    /// The model's name at the provider (`--marker openai`).
    #[arg(long, env = "EXAMKIT_MARKER_MODEL", value_name = "NAME")]
    pub marker_model: Option<String>,
    /// The longest edge of each page image sent to the model, in pixels (256 to 4096).
    #[arg(
        long,
        env = "EXAMKIT_MARKER_IMAGE_SIZE",
        default_value_t = 1600,
        value_name = "PX"
    )]
    pub marker_image_size: u32,
    /// How the model is asked for JSON: `json-schema` (the question's schema as
    /// `response_format`, strict), `json-object`, or `none` (for providers that refuse the
    /// others; the schema is then given in the prompt). The engine checks every answer whatever
    /// this says.
    #[arg(
        long,
        env = "EXAMKIT_MARKER_STRUCTURED_OUTPUT",
        value_enum,
        default_value = "json-schema"
    )]
    pub marker_structured_output: StructuredOutputArg,
    /// The bearer token sent to the marker (`Authorization: Bearer` only; never logged).
    #[arg(
        long,
        env = "EXAMKIT_MARKER_TOKEN",
        value_name = "SECRET",
        hide_env_values = true
    )]
    pub marker_token: Option<String>,
    /// Let `--marker openai` send its token over plain `http://` to a host that is not this
    /// machine (a trusted private network). Without it such a URL is refused at start; https://
    /// and loopback addresses need no flag.
    #[arg(long, env = "EXAMKIT_MARKER_ALLOW_HTTP")]
    pub marker_allow_http: bool,
    /// For `--marker openai`: every award whose quote was not found among the words indexed on
    /// its page is `uncertain`, so only what the service itself read on the page is awarded
    /// unseen (handwriting is rarely read, so most awards then go to a person).
    #[arg(long, env = "EXAMKIT_MARKER_REQUIRE_QUOTE")]
    pub marker_require_quote: bool,
    /// For `--marker openai`: a second model that marks every question too, at once; a mark is
    /// awarded only where both award it on the same writing, withheld where both withhold it, and
    /// otherwise uncertain (the question then goes to review). On the first model's provider
    /// unless `--marker-second-url` names another.
    #[arg(long, env = "EXAMKIT_MARKER_SECOND_MODEL", value_name = "NAME")]
    pub marker_second_model: Option<String>,
    /// The second model's API base, when it is not the first's (`--marker-second-model`).
    #[arg(long, env = "EXAMKIT_MARKER_SECOND_URL", value_name = "URL")]
    pub marker_second_url: Option<String>,
    /// The bearer token for `--marker-second-url` (the first model's token is sent only to the
    /// first model's provider).
    #[arg(
        long,
        env = "EXAMKIT_MARKER_SECOND_TOKEN",
        value_name = "SECRET",
        hide_env_values = true
    )]
    pub marker_second_token: Option<String>,
    /// Each call to the marker's time limit, in seconds.
    #[arg(
        long,
        env = "EXAMKIT_MARKER_TIMEOUT_SECONDS",
        default_value_t = 120,
        value_name = "S"
    )]
    pub marker_timeout_seconds: u64,
    /// Questions each worker marks at once (calls to the marker in flight, 1 to 64). Worth raising
    /// for a marker that waits on a remote model; pages are still indexed one at a time per worker.
    #[arg(
        long,
        env = "EXAMKIT_MARKER_CONCURRENCY",
        default_value_t = 1,
        value_name = "N",
        value_parser = clap::value_parser!(u16).range(1..=64)
    )]
    pub marker_concurrency: u16,
    /// Mark live only with a marker that has qualified: its latest calibration saved with
    /// `examkit marker calibrate --save` (for this marker and model) agrees with the trusted
    /// decisions on at least this share of criteria (0 to 1) with no false award, and the seeded
    /// reference questions have not found it drifting since. Any other marker marks nothing: each
    /// question is saved needs_review, unmarked, with the review flag `marker_unqualified` (or
    /// `marker_drifted`). Applies to every marker, the built-in one included.
    #[arg(
        long,
        env = "EXAMKIT_MARKER_QUALIFY",
        value_name = "MIN_AGREEMENT",
        value_parser = share
    )]
    pub marker_qualify: Option<f64>,
    /// Every N live questions, the marker first marks one question of the reference set at
    /// `--marker-seeds` and it is compared with its trusted decisions; when the last seeds' agreement
    /// falls below `--marker-qualify` (or a seed gets a false award) live marking stops until the
    /// marker is calibrated and saved again. Needs `--marker-qualify` and `--marker-seeds`.
    #[arg(
        long,
        env = "EXAMKIT_MARKER_SEED_EVERY",
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub marker_seed_every: Option<u32>,
    /// The reference set the seeds are drawn from (a folder holding `reference.json`, as
    /// `examkit marker calibrate --reference` reads), for `--marker-seed-every`.
    #[arg(long, env = "EXAMKIT_MARKER_SEEDS", value_name = "DIR")]
    pub marker_seeds: Option<PathBuf>,
    /// Processes that read the pages of files from outside (uploads, stacks, scans), each
    /// under the three limits below; a file that breaks one is refused or its page fails, and
    /// the process is replaced. 0 reads pages in this process, with no limits: only for files
    /// you trust.
    #[arg(
        long,
        env = "EXAMKIT_PAGE_PROCESSES",
        default_value_t = 2,
        value_name = "N"
    )]
    pub page_processes: usize,
    /// Memory (address space) of each page process, in MiB.
    #[arg(
        long,
        env = "EXAMKIT_PAGE_MEMORY_MIB",
        default_value_t = 1024,
        value_name = "MIB",
        value_parser = clap::value_parser!(u64).range(256..)
    )]
    pub page_memory_mib: u64,
    /// Processor time one page (or one file's check at upload) may use, in seconds.
    #[arg(
        long,
        env = "EXAMKIT_PAGE_CPU_SECONDS",
        default_value_t = 20,
        value_name = "SECONDS",
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub page_cpu_seconds: u64,
    /// Time from asking for one page (or one file's check) to its answer, in seconds.
    #[arg(
        long,
        env = "EXAMKIT_PAGE_SECONDS",
        default_value_t = 20,
        value_name = "SECONDS",
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub page_seconds: u64,
}

/// The markers `--marker` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MarkerKind {
    /// The built-in marker.
    Builtin,
    /// An external HTTP marker.
    External,
    /// A vision-language model over the OpenAI-compatible Chat Completions API.
    Openai,
}

/// `--marker-structured-output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StructuredOutputArg {
    /// `response_format` of type `json_schema`, strict.
    JsonSchema,
    /// `response_format` of type `json_object`.
    JsonObject,
    /// No `response_format`.
    None,
}

/// Arguments of `examkit worker`.
#[derive(Debug, Clone, Args)]
pub struct WorkerArgs {
    /// Serve Prometheus metrics at `http://ADDR/metrics` (jobs, indexing, markers); off when not
    /// given.
    #[arg(long, env = "EXAMKIT_METRICS_LISTEN", value_name = "ADDR")]
    pub metrics_listen: Option<SocketAddr>,
    /// Log line format.
    #[arg(long, env = "EXAMKIT_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
    /// Automated marking's settings.
    #[command(flatten)]
    pub marking: MarkingArgs,
    /// Where state is kept.
    #[command(flatten)]
    pub store: StoreArgs,
}

/// The address browsers reach the service at (`--public-url`): an absolute `http://` or
/// `https://` URL of an origin (scheme, host and an optional port). It has no user name or
/// password, query or fragment, and no path beyond `/`: the app and the API are served at the root
/// of their origin (`/app/`, `/v1/`), and `__Host-` cookies are bound to `Path=/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrl {
    /// Whether browsers reach the service over HTTPS.
    pub https: bool,
    /// `scheme://host[:port]`, the scheme and host in lower case.
    pub origin: String,
}

impl PublicUrl {
    /// Reads a `--public-url` value; the error says what is wrong with it.
    pub fn parse(raw: &str) -> Result<PublicUrl, String> {
        const EXAMPLE: &str = "such as https://exam.school.example";
        if raw.contains('#') {
            return Err("a public URL has no fragment (#…)".into());
        }
        if raw.contains('?') {
            return Err("a public URL has no query (?…)".into());
        }
        let uri: http::Uri = raw
            .parse()
            .map_err(|_| format!("{raw:?} is not a URL; give one {EXAMPLE}"))?;
        let https = match uri.scheme_str().map(str::to_ascii_lowercase).as_deref() {
            Some("https") => true,
            Some("http") => false,
            Some(other) => {
                return Err(format!(
                    "a public URL starts with https:// or http://, not {other}://"
                ));
            }
            None => {
                return Err(format!(
                    "a public URL is absolute: give its scheme and host, {EXAMPLE}"
                ));
            }
        };
        let authority = uri
            .authority()
            .ok_or_else(|| format!("a public URL names a host, {EXAMPLE}"))?;
        if authority.as_str().contains('@') {
            return Err("a public URL holds no user name or password".into());
        }
        if authority.host().is_empty() {
            return Err(format!("a public URL names a host, {EXAMPLE}"));
        }
        let port_given = authority
            .as_str()
            .rsplit_once(':')
            .is_some_and(|(_, after)| !after.contains(']'));
        if port_given && authority.port_u16().is_none_or(|port| port == 0) {
            return Err("a public URL's port is a number from 1 to 65535".into());
        }
        if !matches!(uri.path(), "" | "/") {
            return Err(format!(
                "examkit is served at the root of its public URL (/app/, /v1/): give no path, not {:?}",
                uri.path()
            ));
        }
        Ok(PublicUrl {
            https,
            origin: format!(
                "{}://{}",
                if https { "https" } else { "http" },
                authority.as_str().to_ascii_lowercase()
            ),
        })
    }
}

impl std::fmt::Display for PublicUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.origin)
    }
}

/// Arguments of `examkit serve`.
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free port; the bound address is logged and printed).
    #[arg(
        long,
        env = "EXAMKIT_LISTEN",
        default_value = "127.0.0.1:8080",
        value_name = "ADDR"
    )]
    pub listen: SocketAddr,
    /// The address browsers reach the service at, such as `https://exam.school.example` when a
    /// TLS proxy forwards to `--listen`. With `https://` the app's cookies are `Secure` with the
    /// `__Host-` prefix and every response carries `Strict-Transport-Security`, whatever the
    /// listen address; with `http://` the cookies are plain. Without it, cookies are `Secure`
    /// unless the service listens on loopback.
    #[arg(
        long,
        env = "EXAMKIT_PUBLIC_URL",
        value_name = "URL",
        value_parser = PublicUrl::parse
    )]
    pub public_url: Option<PublicUrl>,
    /// Serve Prometheus metrics at `http://ADDR/metrics`, on a listener of their own (off when
    /// not given; keep it off the public network).
    #[arg(long, env = "EXAMKIT_METRICS_LISTEN", value_name = "ADDR")]
    pub metrics_listen: Option<SocketAddr>,
    /// Log line format.
    #[arg(long, env = "EXAMKIT_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
    /// `off` admits every request (counters are still kept and reported); for benchmarks only.
    #[arg(long, env = "EXAMKIT_RATE_LIMITS", value_enum, default_value = "on")]
    pub rate_limits: RateLimits,
    /// `off` skips loading the embedded sample bank on first start (when the bank is empty).
    #[arg(long, env = "EXAMKIT_SAMPLE_BANK", value_enum, default_value = "on")]
    pub sample_bank: SampleBank,
    /// Do not load the sample bank (the same as `--sample-bank off`).
    #[arg(long)]
    pub no_sample_bank: bool,
    /// `off` refuses to prepare paper PDFs (503 `pdf_export_disabled`).
    #[arg(long, env = "EXAMKIT_PDF_EXPORT", value_enum, default_value = "on")]
    pub pdf_export: PdfExport,
    /// How many papers are typeset at once (default: one per core); further requests wait.
    #[arg(long, env = "EXAMKIT_TYPESET_CONCURRENCY", value_name = "N")]
    pub typeset_concurrency: Option<usize>,
    /// A proxy (an address or a CIDR range, such as `127.0.0.1/32` or `10.0.0.0/8`; repeat the
    /// flag, or separate them with commas) whose `X-Forwarded-For` names the client for the
    /// sign-in limits. Without one the TCP peer is the client and the header is ignored.
    #[arg(
        long = "trusted-proxy",
        env = "EXAMKIT_TRUSTED_PROXY",
        value_name = "CIDR",
        value_delimiter = ',',
        value_parser = Cidr::parse
    )]
    pub trusted_proxies: Vec<Cidr>,
    /// How many passwords are checked (or hashed) at once, 1 to 1024 (default: one per core);
    /// each holds 19 MiB while it runs.
    #[arg(
        long,
        env = "EXAMKIT_PASSWORD_CHECK_CONCURRENCY",
        value_name = "N",
        value_parser = clap::value_parser!(u16).range(1..=1024)
    )]
    pub password_check_concurrency: Option<u16>,
    /// How long a sign-in waits for a free password check before it is answered 503 with
    /// `Retry-After`, in milliseconds (0 to 60000).
    #[arg(
        long,
        env = "EXAMKIT_PASSWORD_CHECK_WAIT_MS",
        default_value_t = 2000,
        value_name = "MS",
        value_parser = clap::value_parser!(u64).range(0..=60_000)
    )]
    pub password_check_wait_ms: u64,
    /// Automated marking's settings.
    #[command(flatten)]
    pub marking: MarkingArgs,
    /// Where state is kept.
    #[command(flatten)]
    pub store: StoreArgs,
}

#[cfg(test)]
mod tests {
    use super::share;

    #[test]
    fn a_share_is_a_number_from_0_to_1() {
        assert_eq!(share("0.8"), Ok(0.8));
        assert_eq!(share("0"), Ok(0.0));
        assert_eq!(share("1"), Ok(1.0));
        for bad in ["1.5", "-0.1", "NaN", "most", ""] {
            assert!(share(bad).is_err(), "{bad}");
        }
    }
}
