//! Configuration from flags and the environment.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

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
        value_parser = crate::calibration::share
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

impl MarkingArgs {
    /// The marking configuration these flags describe; an error for an external marker without
    /// a URL.
    pub fn config(&self) -> Result<crate::marking::MarkingConfig, String> {
        let defaults = crate::marking::MarkingConfig::default();
        let marker = match self.marker {
            MarkerKind::Builtin => crate::marking::MarkerChoice::BuiltIn,
            MarkerKind::External => crate::marking::MarkerChoice::External {
                url: self
                    .marker_url
                    .clone()
                    .ok_or("--marker external needs --marker-url (or EXAMKIT_MARKER_URL)")?,
                token: self.marker_token.clone(),
                timeout: std::time::Duration::from_secs(self.marker_timeout_seconds.max(1)),
            },
            MarkerKind::Openai => {
                use crate::marking::openai::{OpenAiConfig, StructuredOutput};
                let mut first = OpenAiConfig {
                    base_url: self.marker_url.clone().ok_or(
                        "--marker openai needs --marker-url, the API base (or EXAMKIT_MARKER_URL)",
                    )?,
                    model: self.marker_model.clone().ok_or(
                        "--marker openai needs --marker-model, the model's name (or EXAMKIT_MARKER_MODEL)",
                    )?,
                    token: self.marker_token.clone(),
                    timeout: std::time::Duration::from_secs(self.marker_timeout_seconds.max(1)),
                    image_long_edge: self.marker_image_size,
                    structured_output: match self.marker_structured_output {
                        StructuredOutputArg::JsonSchema => StructuredOutput::JsonSchema,
                        StructuredOutputArg::JsonObject => StructuredOutput::JsonObject,
                        StructuredOutputArg::None => StructuredOutput::None,
                    },
                    allow_http: self.marker_allow_http,
                    strictness: crate::marking::openai::question::Strictness {
                        require_quote: self.marker_require_quote,
                    },
                    ..OpenAiConfig::default()
                };
                first.second = self.second_opinion(&first)?.map(Box::new);
                crate::marking::MarkerChoice::OpenAi(first)
            }
        };
        Ok(crate::marking::MarkingConfig {
            marker,
            enabled: self.automated_marking == Switch::On,
            workers: self.workers,
            allowance: crate::store::automated::Allowance {
                pages_per_day: self.marking_pages_per_day.max(0),
                questions_per_day: self.marking_questions_per_day.max(0),
            },
            lease: std::time::Duration::from_secs(self.job_lease_seconds.max(1)),
            max_attempts: self.job_attempts.max(1),
            backoff: std::time::Duration::from_millis(self.job_backoff_ms),
            ocr: self.ocr == Switch::On,
            marker_concurrency: usize::from(self.marker_concurrency),
            pages: self.pages()?,
            qualify: self.marker_qualify,
            seeds: self.seeds()?,
            ..defaults
        })
    }

    /// The seeded reference questions the flags ask for: the reference set read and checked now,
    /// so that a wrong folder is refused at start.
    fn seeds(&self) -> Result<Option<crate::marking::qualification::SeedsConfig>, String> {
        let (every, dir) = match (self.marker_seed_every, &self.marker_seeds) {
            (None, None) => return Ok(None),
            (Some(_), None) => {
                return Err("--marker-seed-every needs --marker-seeds DIR, the reference set the seeds are drawn from (or EXAMKIT_MARKER_SEEDS)".into());
            }
            (None, Some(_)) => {
                return Err("--marker-seeds needs --marker-seed-every N, how many live questions are marked between seeds (or EXAMKIT_MARKER_SEED_EVERY)".into());
            }
            (Some(every), Some(dir)) => (every, dir),
        };
        if self.marker_qualify.is_none() {
            return Err("--marker-seed-every needs --marker-qualify MIN_AGREEMENT, the bar the seeds are held to".into());
        }
        let reference = crate::calibration::reference::load(dir)
            .map_err(|e| format!("--marker-seeds {}: {e}", dir.display()))?;
        Ok(Some(crate::marking::qualification::SeedsConfig {
            every,
            reference: std::sync::Arc::new(reference),
        }))
    }

    /// The second model's settings (`--marker-second-model`): the first's, on its provider with
    /// its token, or on `--marker-second-url` with `--marker-second-token`. An error for a second
    /// URL or token without a second model, or the same model named twice on one provider.
    fn second_opinion(
        &self,
        first: &crate::marking::openai::OpenAiConfig,
    ) -> Result<Option<crate::marking::openai::OpenAiConfig>, String> {
        let Some(model) = self.marker_second_model.clone() else {
            if self.marker_second_url.is_some() || self.marker_second_token.is_some() {
                return Err(
                    "--marker-second-url and --marker-second-token need --marker-second-model"
                        .into(),
                );
            }
            return Ok(None);
        };
        if model.trim().is_empty() {
            return Err("--marker-second-model needs the second model's name".into());
        }
        let (base_url, token) = match &self.marker_second_url {
            Some(url) => (url.clone(), self.marker_second_token.clone()),
            None => {
                if self.marker_second_token.is_some() {
                    return Err("--marker-second-token needs --marker-second-url: on the first model's provider its token is used".into());
                }
                (first.base_url.clone(), first.token.clone())
            }
        };
        if model == first.model
            && base_url.trim_end_matches('/') == first.base_url.trim_end_matches('/')
        {
            return Err(format!(
                "--marker-second-model {model} is the first model on the same provider: a second opinion needs another model (or another provider)"
            ));
        }
        Ok(Some(crate::marking::openai::OpenAiConfig {
            base_url,
            model,
            token,
            ..first.clone()
        }))
    }

    /// Where pages are read: page processes of this very binary under the budgets the flags
    /// give, or this process with `--page-processes 0`.
    fn pages(&self) -> Result<crate::untrusted::Pages, String> {
        if self.page_processes == 0 {
            return Ok(crate::untrusted::Pages::InProcess);
        }
        let program = std::env::current_exe()
            .map_err(|e| format!("the page processes cannot find this program: {e}"))?;
        Ok(crate::untrusted::Pages::isolated(
            program,
            crate::untrusted::Budgets {
                processes: self.page_processes,
                memory_mib: self.page_memory_mib,
                cpu_seconds: self.page_cpu_seconds,
                deadline: std::time::Duration::from_secs(self.page_seconds),
            },
        ))
    }
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
        value_parser = crate::app::client::Cidr::parse
    )]
    pub trusted_proxies: Vec<crate::app::client::Cidr>,
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
    use clap::Parser;

    use crate::cli::{Cli, Command};

    fn worker(args: &[&str]) -> Result<crate::marking::MarkingConfig, String> {
        let cli = Cli::try_parse_from(["examkit", "worker"].iter().chain(args))
            .map_err(|e| e.to_string())?;
        match cli.command {
            Command::Worker(w) => w.marking.config(),
            other => Err(format!("parsed as {other:?}")),
        }
    }

    fn serve(args: &[&str]) -> Result<super::ServeArgs, String> {
        let cli = Cli::try_parse_from(["examkit", "serve"].iter().chain(args))
            .map_err(|e| e.to_string())?;
        match cli.command {
            Command::Serve(s) => Ok(s),
            other => Err(format!("parsed as {other:?}")),
        }
    }

    #[test]
    fn a_public_url_is_an_http_or_https_origin() {
        let public = |flag: &str| serve(&["--public-url", flag]).map(|s| s.public_url);
        assert_eq!(serve(&[]).map(|s| s.public_url), Ok(None));
        for (given, https, origin) in [
            (
                "https://exam.school.example",
                true,
                "https://exam.school.example",
            ),
            (
                "HTTPS://Exam.School.Example/",
                true,
                "https://exam.school.example",
            ),
            (
                "https://exam.school.example:8443",
                true,
                "https://exam.school.example:8443",
            ),
            ("http://127.0.0.1:8080/", false, "http://127.0.0.1:8080"),
            (
                "https://[2001:db8::1]:443",
                true,
                "https://[2001:db8::1]:443",
            ),
        ] {
            let parsed = public(given).expect(given).expect(given);
            assert_eq!(
                (parsed.https, parsed.origin.as_str()),
                (https, origin),
                "{given}"
            );
        }
    }

    #[test]
    fn a_bad_public_url_is_refused_with_its_reason() {
        for (bad, reason) in [
            ("", "not a URL"),
            ("exam.school.example", "absolute"),
            ("/app/", "absolute"),
            ("ftp://exam.school.example", "not ftp://"),
            ("https://exam.school.example/?next=1", "no query"),
            ("https://exam.school.example/#top", "no fragment"),
            ("https://exam.school.example/examkit/", "give no path"),
            ("https://teacher:secret@exam.school.example", "no user name"),
            ("https://exam.school.example:99999", "port"),
            ("https://exam.school.example:0", "port"),
            ("https://exam.school.example:", "port"),
            ("https://exam school.example", "not a URL"),
            ("https://", "not a URL"),
        ] {
            let flag = format!("--public-url={bad}");
            let e = serve(&[flag.as_str()]).expect_err(bad);
            assert!(e.contains("--public-url"), "{bad}: {e}");
            assert!(e.contains(reason), "{bad}: {e}");
        }
    }

    #[test]
    fn a_token_over_plain_http_to_another_machine_needs_marker_allow_http() {
        let built = |extra: &[&str]| {
            let mut args = vec!["--marker", "openai", "--marker-model", "m"];
            args.extend(["--marker-token", "sk-test-1"]);
            args.extend(extra);
            worker(&args)?.marker.build().map(drop)
        };
        let refused = built(&["--marker-url", "http://example.invalid/v1"]).expect_err("refused");
        assert!(refused.contains("--marker-allow-http"), "{refused}");
        let allowed = [
            "--marker-url",
            "http://example.invalid/v1",
            "--marker-allow-http",
        ];
        assert_eq!(built(&allowed), Ok(()));
        assert_eq!(
            built(&["--marker-url", "http://127.0.0.1:11434/v1"]),
            Ok(())
        );
        assert_eq!(
            built(&["--marker-url", "https://example.invalid/v1"]),
            Ok(())
        );
        let e = worker(&["--marker-allow-http=maybe"]).expect_err("not a boolean");
        assert!(e.contains("--marker-allow-http"), "{e}");
    }

    #[test]
    fn a_second_model_is_on_the_first_provider_unless_named_and_never_the_same_model() {
        let marker = |extra: &[&str]| {
            let mut args = vec!["--marker", "openai", "--marker-model", "m"];
            args.extend([
                "--marker-url",
                "http://127.0.0.1:11434/v1",
                "--marker-token",
                "t1",
            ]);
            args.extend(extra);
            worker(&args).map(|w| w.marker)
        };
        let second = |extra: &[&str]| match marker(extra) {
            Ok(crate::marking::MarkerChoice::OpenAi(c)) => Ok(c.second.map(|s| *s)),
            Ok(other) => panic!("{other:?}"),
            Err(e) => Err(e),
        };
        assert_eq!(second(&[]), Ok(None));
        let same = second(&["--marker-second-model", "n"])
            .expect("ok")
            .expect("second");
        assert_eq!(
            (
                same.model.as_str(),
                same.base_url.as_str(),
                same.token.as_deref()
            ),
            ("n", "http://127.0.0.1:11434/v1", Some("t1"))
        );
        let other = second(&[
            "--marker-second-model",
            "m",
            "--marker-second-url",
            "https://models.example/v1",
            "--marker-second-token",
            "t2",
        ])
        .expect("ok")
        .expect("second");
        assert_eq!(
            (other.base_url.as_str(), other.token.as_deref()),
            ("https://models.example/v1", Some("t2"))
        );
        match marker(&["--marker-second-model", "n"]) {
            Ok(choice) => {
                let built = choice.build().expect("a pair");
                assert_eq!(built.name(), "openai");
            }
            Err(e) => panic!("{e}"),
        }
        for (bad, says) in [
            (
                &["--marker-second-url", "https://models.example/v1"][..],
                "need --marker-second-model",
            ),
            (
                &["--marker-second-model", "n", "--marker-second-token", "t2"][..],
                "needs --marker-second-url",
            ),
            (&["--marker-second-model", "m"][..], "another model"),
            (&["--marker-second-model", " "][..], "second model's name"),
        ] {
            let e = second(bad).expect_err("refused");
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }

    #[test]
    fn trusted_proxies_are_none_by_default_repeatable_and_comma_separated() {
        let proxies = |args: &[&str]| {
            serve(args).map(|s| {
                s.trusted_proxies
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(proxies(&[]), Ok(vec![]));
        assert_eq!(
            proxies(&[
                "--trusted-proxy",
                "127.0.0.1",
                "--trusted-proxy",
                "10.0.0.0/8"
            ]),
            Ok(vec!["127.0.0.1/32".to_owned(), "10.0.0.0/8".to_owned()])
        );
        // The form the environment variable takes.
        assert_eq!(
            proxies(&["--trusted-proxy", "10.0.0.0/8,fd00::/8"]),
            Ok(vec!["10.0.0.0/8".to_owned(), "fd00::/8".to_owned()])
        );
        for bad in [
            "proxy.internal",
            "10.0.0.0/33",
            "10.0.0.1/8",
            "10.0.0.0/8,nope",
            "",
        ] {
            let flag = format!("--trusted-proxy={bad}");
            let e = serve(&[flag.as_str()]).expect_err(bad);
            assert!(e.contains("--trusted-proxy"), "{bad}: {e}");
        }
        let e = serve(&["--trusted-proxy", "10.0.0.1/8"]).expect_err("host bits");
        assert!(e.contains("10.0.0.0/8"), "{e}");
    }

    #[test]
    fn password_check_bounds_default_to_the_cores_and_two_seconds() {
        let s = serve(&[]).expect("defaults");
        assert_eq!(s.password_check_concurrency, None);
        assert_eq!(s.password_check_wait_ms, 2000);
        let s = serve(&[
            "--password-check-concurrency",
            "3",
            "--password-check-wait-ms",
            "0",
        ])
        .expect("set");
        assert_eq!(s.password_check_concurrency, Some(3));
        assert_eq!(s.password_check_wait_ms, 0);
        for (flag, bad) in [
            ("--password-check-concurrency", "0"),
            ("--password-check-concurrency", "1025"),
            ("--password-check-concurrency", "many"),
            ("--password-check-wait-ms", "60001"),
            ("--password-check-wait-ms", "-1"),
            ("--password-check-wait-ms", "2s"),
        ] {
            let arg = format!("{flag}={bad}");
            let e = serve(&[arg.as_str()]).expect_err(bad);
            assert!(e.contains(flag), "{bad}: {e}");
        }
    }

    #[test]
    fn marker_qualify_is_a_share_and_seeds_need_a_set_and_the_bar() {
        assert_eq!(
            worker(&[]).map(|c| (c.qualify, c.seeds.is_none())),
            Ok((None, true))
        );
        assert_eq!(
            worker(&["--marker-qualify", "0.9"]).map(|c| c.qualify),
            Ok(Some(0.9))
        );
        assert_eq!(
            worker(&["--marker-qualify", "1"]).map(|c| c.qualify),
            Ok(Some(1.0))
        );
        for bad in ["1.5", "-0.1", "NaN", "most", ""] {
            let flag = format!("--marker-qualify={bad}");
            let e = worker(&[flag.as_str()]).expect_err(bad);
            assert!(e.contains("--marker-qualify"), "{bad}: {e}");
        }
        let e = worker(&["--marker-qualify", "2"]).expect_err("above 1");
        assert!(e.contains("2 is not between 0 and 1"), "{e}");
        let set = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/calibration");
        let set = set.to_string_lossy().into_owned();
        let seeded = worker(&[
            "--marker-qualify",
            "0.9",
            "--marker-seed-every",
            "25",
            "--marker-seeds",
            &set,
        ])
        .expect("seeds");
        let seeds = seeded.seeds.expect("seeds");
        assert_eq!(seeds.every, 25);
        assert_eq!(seeds.reference.scripts.len(), 5);
        for (args, said) in [
            (&["--marker-seed-every", "25"][..], "needs --marker-seeds"),
            (
                &["--marker-seeds", set.as_str()][..],
                "needs --marker-seed-every",
            ),
            (
                &["--marker-seed-every", "25", "--marker-seeds", set.as_str()][..],
                "needs --marker-qualify",
            ),
            (
                &[
                    "--marker-qualify",
                    "0.9",
                    "--marker-seed-every",
                    "25",
                    "--marker-seeds",
                    "/nonexistent",
                ][..],
                "--marker-seeds /nonexistent: reference.json: cannot read",
            ),
            (&["--marker-seed-every", "0"][..], "--marker-seed-every"),
        ] {
            let e = worker(args).expect_err(said);
            assert!(e.contains(said), "{args:?}: {e}");
        }
    }

    #[test]
    fn marker_concurrency_is_one_by_default_and_taken_from_1_to_64() {
        assert_eq!(worker(&[]).map(|c| c.marker_concurrency), Ok(1));
        assert_eq!(
            worker(&["--marker-concurrency", "64"]).map(|c| c.marker_concurrency),
            Ok(64)
        );
        for bad in ["0", "65", "-1", "many", ""] {
            let flag = format!("--marker-concurrency={bad}");
            let e = worker(&[flag.as_str()]).expect_err(bad);
            assert!(e.contains("--marker-concurrency"), "{bad}: {e}");
        }
    }
}
