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
}

impl StoreArgs {
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
    /// Where state is kept.
    #[command(flatten)]
    pub store: StoreArgs,
}
