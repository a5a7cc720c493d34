//! `examkit serve`: open the store (applying migrations), settle the settings, start the
//! workers, build the server and serve until SIGTERM or Ctrl-C; and `examkit worker`, the workers
//! alone on the same database.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use metrics_exporter_prometheus::PrometheusHandle;
use tracing_subscriber::EnvFilter;

use crate::config::{
    AppConfig, LogFormat, PdfExport, RateLimits, SampleBank, ServeArgs, SetupToken, WorkerArgs,
};
use crate::marking::worker::Workers;
use crate::papers::DEFAULT_MAX_PAPERS;
use crate::server::state::Readiness;
use crate::server::{self, AppState};
use crate::store::rate::Limits;
use crate::typeset::Typesetter;

fn init_logging(format: LogFormat) {
    let filter = EnvFilter::try_from_env("EXAMKIT_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi);
    let _ = match format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// Writes a line to standard output for whoever started the process. Callers (supervisors,
/// scripts) often read up to the line they wait for and close the pipe: a line no one reads any
/// more is dropped, never a panic that stops the service.
fn say(line: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    let _ = out
        .write_fmt(line)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
}

/// The first-run token when the database has no account yet (see [`crate::app::setup`]).
async fn first_run_token(store: &crate::store::Store) -> Result<Option<SetupToken>, String> {
    if store
        .has_accounts()
        .await
        .map_err(|e| format!("cannot read the accounts: {e}"))?
    {
        return Ok(None);
    }
    SetupToken::random().map(Some)
}

/// Warns when OCR would run with more than one thread per engine: Tesseract's OpenMP reads its
/// limit only at process start, so it is set in the environment (`OMP_THREAD_LIMIT=1`).
fn check_ocr_threads(config: &crate::marking::MarkingConfig) {
    if config.enabled
        && config.ocr
        && config.workers > 0
        && examkit_scan::openmp_thread_limit() != Some(1)
    {
        tracing::warn!(
            "OMP_THREAD_LIMIT is not 1: each OCR engine may use every core, which makes workers slower; start examkit with OMP_THREAD_LIMIT=1"
        );
    }
}

/// Says once, at start, that the app's cookies are not `Secure` (so a browser sends them over
/// plain HTTP), and how to change that.
fn warn_plain_cookies(app: &AppConfig, public: Option<&crate::config::PublicUrl>) {
    if app.secure_cookies {
        return;
    }
    match public {
        Some(url) => tracing::warn!(
            public_url = %url,
            "the app's cookies are not Secure: the public URL is http://; behind a TLS proxy give --public-url https://…"
        ),
        None => tracing::warn!(
            "the app's cookies are not Secure (listening on loopback without --public-url, for development); behind a TLS proxy start examkit with --public-url https://… (EXAMKIT_PUBLIC_URL)"
        ),
    }
}

/// Why `serve` or `worker` stopped before serving: the message for standard error and the exit
/// status (2 for a configuration the flags make impossible, 1 for anything else).
struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    /// A configuration the flags make impossible: exit status 2.
    fn usage(message: impl Into<String>) -> Failure {
        Failure {
            code: 2,
            message: message.into(),
        }
    }

    /// Anything else that stops the service from starting: exit status 1.
    fn failed(message: impl Into<String>) -> Failure {
        Failure {
            code: 1,
            message: message.into(),
        }
    }

    /// Says why on standard error, after `examkit <command>: `, and gives the exit status.
    fn report(self, command: &str) -> ExitCode {
        eprintln!("examkit {command}: {}", self.message);
        ExitCode::from(self.code)
    }
}

/// Runs the service: opens the store, settles the settings, starts the workers, builds the
/// server and serves until SIGTERM or Ctrl-C, then stops everything in order.
pub async fn run(args: ServeArgs) -> ExitCode {
    init_logging(args.log_format);
    match serve(&args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report("serve"),
    }
}

async fn serve(args: &ServeArgs) -> Result<(), Failure> {
    let store = open_store(args).await?;
    let mut settings = Settings::of(args)?;
    let metrics = settings.metrics.take();
    let workers = start_workers(&store, &settings.marking).await?;
    let state = build_state(args, &store, settings, &workers).await?;
    let setup_token = state.app.setup_token.clone();
    let running = start_serving(args, state, metrics).await?;
    announce(args, running.addr, setup_token.as_ref());
    running.server.await;
    running.pruner.abort();
    // Usage recorded since the last flush is written before the process ends.
    if let Err(e) = store.flush_usage().await {
        tracing::warn!(error = %e, "usage records not written at shutdown");
    }
    if let Some(metrics_server) = running.metrics {
        metrics_server.abort();
    }
    workers.shutdown().await;
    tracing::info!("examkit stopped");
    Ok(())
}

/// Opens the store (applying migrations) and loads the sample bank on first start unless told
/// not to.
async fn open_store(args: &ServeArgs) -> Result<crate::store::Store, Failure> {
    let store = args
        .store
        .open()
        .await
        .map_err(|e| Failure::failed(e.to_string()))?;
    if args.sample_bank == SampleBank::On && !args.no_sample_bank {
        match store.load_sample_bank_if_empty().await {
            Ok(Some(summary)) => tracing::info!(%summary, "loaded the sample bank"),
            Ok(None) => {}
            Err(e) => {
                return Err(Failure::failed(format!("cannot load the sample bank: {e}")));
            }
        }
    }
    Ok(store)
}

/// What the flags settle before anything runs: the rate limits, PDF export, automated marking,
/// the password checks and the metrics recorder.
struct Settings {
    limits: Limits,
    export: bool,
    marking: crate::marking::MarkingConfig,
    /// Where metrics are served, with the recorder already installed.
    metrics: Option<(std::net::SocketAddr, PrometheusHandle)>,
}

impl Settings {
    fn of(args: &ServeArgs) -> Result<Settings, Failure> {
        let limits = match args.rate_limits {
            RateLimits::On => Limits::default(),
            RateLimits::Off => Limits::unlimited(),
        };
        let export = args.pdf_export == PdfExport::On;
        if !export {
            tracing::warn!("PDF export is off: preparing paper PDFs is refused with 503");
        }
        let marking = args.marking.config().map_err(Failure::usage)?;
        check_ocr_threads(&marking);
        let password_checks = args
            .password_check_concurrency
            .map_or_else(crate::password::checks::default_permits, usize::from);
        crate::password::checks::configure(
            password_checks,
            std::time::Duration::from_millis(args.password_check_wait_ms),
        )
        .map_err(Failure::usage)?;
        // The recorder goes in before anything is measured.
        let metrics = match args.metrics_listen {
            None => None,
            Some(addr) => Some((addr, crate::telemetry::install().map_err(Failure::failed)?)),
        };
        Ok(Settings {
            limits,
            export,
            marking,
            metrics,
        })
    }
}

/// Starts the marking workers; with automated marking off, cancels the questions still queued
/// and starts none.
async fn start_workers(
    store: &crate::store::Store,
    marking: &crate::marking::MarkingConfig,
) -> Result<Workers, Failure> {
    let workers = if marking.enabled {
        crate::marking::launch::spawn(store.clone(), marking.clone())
    } else {
        tracing::warn!("automated marking is off: its routes answer 503");
        match store
            .cancel_queued_questions(
                "automated marking was switched off before the question was marked",
            )
            .await
        {
            Ok(0) => {}
            Ok(n) => tracing::warn!(questions = n, "queued questions cancelled"),
            Err(e) => tracing::warn!(error = %e, "cancelling queued questions failed"),
        }
        crate::marking::launch::spawn(
            store.clone(),
            crate::marking::MarkingConfig {
                workers: 0,
                ..marking.clone()
            },
        )
    };
    workers.map_err(Failure::usage)
}

/// The state the server shares: the settings, the app's configuration (with the first-run
/// token when there is no account yet) and what readiness checks of the workers.
async fn build_state(
    args: &ServeArgs,
    store: &crate::store::Store,
    settings: Settings,
    workers: &Workers,
) -> Result<Arc<AppState>, Failure> {
    let app = AppConfig::for_service(args.listen, args.public_url.as_ref());
    warn_plain_cookies(&app, args.public_url.as_ref());
    let setup_token = first_run_token(store).await.map_err(Failure::failed)?;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let marking = settings.marking;
    let readiness = Readiness {
        pulse: (!workers.is_empty()).then(|| workers.pulse()),
        // Workers beat at every pass of their loop and every job heartbeat (a third of the
        // lease); a lease's length without one means none is running.
        max_silence_ms: marking.lease_ms().max(30_000),
    };
    let state = Arc::new(AppState {
        store: store.clone(),
        limits: settings.limits,
        typesetter: Typesetter::new(settings.export, args.typeset_concurrency.unwrap_or(cores)),
        max_papers: DEFAULT_MAX_PAPERS,
        marking,
        app: AppConfig {
            trusted_proxies: args.trusted_proxies.clone(),
            setup_token,
            ..app
        },
        readiness,
        builds: Default::default(),
        maths: Default::default(),
    });
    if args.rate_limits == RateLimits::Off {
        tracing::warn!("rate limits are off: no request is refused for its rate");
    }
    Ok(state)
}
/// What runs while the service serves: the server (until the shutdown signal), the metrics
/// listener and the pruner.
struct Running {
    addr: std::net::SocketAddr,
    server: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
    metrics: Option<tokio::task::JoinHandle<()>>,
    pruner: tokio::task::JoinHandle<()>,
}

/// Binds the server on `--listen` (until SIGTERM or Ctrl-C) and the metrics listener, and starts
/// pruning.
async fn start_serving(
    args: &ServeArgs,
    state: Arc<AppState>,
    metrics: Option<(std::net::SocketAddr, PrometheusHandle)>,
) -> Result<Running, Failure> {
    let store = state.store.clone();
    let (addr, server) = server::bind(state, args.listen, shutdown_signal())
        .await
        .map_err(|e| Failure::failed(format!("cannot listen on {}: {e}", args.listen)))?;
    let metrics = match metrics {
        None => None,
        Some((addr, handle)) => {
            let (bound, server) =
                server::metrics::serve(handle, store.clone(), addr, std::future::pending())
                    .await
                    .map_err(|e| {
                        Failure::failed(format!("cannot listen for metrics on {addr}: {e}"))
                    })?;
            tracing::info!(%bound, "metrics listening");
            say(format_args!("metrics on http://{bound}/metrics"));
            Some(tokio::spawn(server))
        }
    };
    // Expired rate counters, idempotency records and usage rows are pruned in the background.
    let pruner = crate::retention::spawn(store);
    Ok(Running {
        addr,
        server: Box::pin(server),
        metrics,
        pruner,
    })
}

/// Logs and prints where the service listens, the proxies it trusts, and the first-run token
/// when there is no account yet.
fn announce(args: &ServeArgs, addr: std::net::SocketAddr, setup_token: Option<&SetupToken>) {
    tracing::info!(%addr, backend = ?state_backend(args), "examkit listening");
    if !args.trusted_proxies.is_empty() {
        let proxies: Vec<String> = args
            .trusted_proxies
            .iter()
            .map(ToString::to_string)
            .collect();
        tracing::info!(
            proxies = %proxies.join(", "),
            "X-Forwarded-For names the client when the peer is one of these proxies"
        );
    }
    say(format_args!("listening on http://{addr}"));
    if let Some(token) = setup_token {
        let base = args
            .public_url
            .as_ref()
            .map_or_else(|| format!("http://{addr}"), |url| url.origin.clone());
        tracing::warn!("no account yet: make the first in the app with the setup token");
        say(format_args!(
            "no account yet: make the first at {base}/app/setup with the setup token {}",
            token.reveal()
        ));
    }
}

fn state_backend(args: &ServeArgs) -> &'static str {
    if args.store.resolved_url().starts_with("sqlite:") {
        "sqlite"
    } else {
        "postgres"
    }
}

/// Runs automated-marking workers on the database until SIGTERM or Ctrl-C, then stops claiming,
/// lets running jobs finish (or releases them) and exits.
pub async fn worker(args: WorkerArgs) -> ExitCode {
    init_logging(args.log_format);
    let config = match args.marking.config() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("examkit worker: {e}");
            return ExitCode::from(2);
        }
    };
    if !config.enabled {
        eprintln!("examkit worker: automated marking is off (--automated-marking off)");
        return ExitCode::from(2);
    }
    check_ocr_threads(&config);
    let store = match args.store.open().await {
        Ok(store) => store,
        Err(e) => {
            eprintln!("examkit worker: {e}");
            return ExitCode::from(1);
        }
    };
    let count = config.workers.max(1);
    let metrics = match args.metrics_listen {
        None => None,
        Some(addr) => {
            let served = match crate::telemetry::install() {
                Ok(handle) => {
                    server::metrics::serve(handle, store.clone(), addr, std::future::pending())
                        .await
                        .map_err(|e| format!("cannot listen for metrics on {addr}: {e}"))
                }
                Err(e) => Err(e),
            };
            match served {
                Ok((bound, server)) => {
                    say(format_args!("metrics on http://{bound}/metrics"));
                    Some(tokio::spawn(server))
                }
                Err(e) => {
                    eprintln!("examkit worker: {e}");
                    return ExitCode::from(1);
                }
            }
        }
    };
    let workers = match crate::marking::launch::spawn(
        store,
        crate::marking::MarkingConfig {
            workers: count,
            ..config
        },
    ) {
        Ok(workers) => workers,
        Err(e) => {
            eprintln!("examkit worker: {e}");
            return ExitCode::from(2);
        }
    };
    tracing::info!(workers = count, "examkit worker running");
    say(format_args!("{count} worker(s) running"));
    shutdown_signal().await;
    tracing::info!("stopping: no new jobs are claimed");
    workers.shutdown().await;
    if let Some(metrics) = metrics {
        metrics.abort();
    }
    tracing::info!("examkit worker stopped");
    ExitCode::SUCCESS
}
