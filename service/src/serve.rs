//! `examkit serve`: open the store, apply migrations, serve HTTP until interrupted.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use tracing_subscriber::EnvFilter;

use crate::config::{LogFormat, PdfExport, RateLimits, SampleBank, ServeArgs, WorkerArgs};
use crate::http::{self, AppState};
use crate::papers::DEFAULT_MAX_PAPERS;
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
async fn first_run_token(
    store: &crate::store::Store,
) -> Result<Option<crate::app::setup::SetupToken>, String> {
    if store
        .has_accounts()
        .await
        .map_err(|e| format!("cannot read the accounts: {e}"))?
    {
        return Ok(None);
    }
    crate::app::setup::SetupToken::random().map(Some)
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
fn warn_plain_cookies(app: &crate::app::AppConfig, public: Option<&crate::config::PublicUrl>) {
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

/// Runs the service.
pub async fn run(args: ServeArgs) -> ExitCode {
    init_logging(args.log_format);
    let store = match args.store.open().await {
        Ok(store) => store,
        Err(e) => {
            eprintln!("examkit serve: {e}");
            return ExitCode::from(1);
        }
    };
    if args.sample_bank == SampleBank::On && !args.no_sample_bank {
        match store.load_sample_bank_if_empty().await {
            Ok(Some(summary)) => tracing::info!(%summary, "loaded the sample bank"),
            Ok(None) => {}
            Err(e) => {
                eprintln!("examkit serve: cannot load the sample bank: {e}");
                return ExitCode::from(1);
            }
        }
    }
    let limits = match args.rate_limits {
        RateLimits::On => Limits::default(),
        RateLimits::Off => Limits::unlimited(),
    };
    let export = args.pdf_export == PdfExport::On;
    if !export {
        tracing::warn!("PDF export is off: preparing paper PDFs is refused with 503");
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let marking = match args.marking.config() {
        Ok(config) => config,
        Err(e) => {
            eprintln!("examkit serve: {e}");
            return ExitCode::from(2);
        }
    };
    check_ocr_threads(&marking);
    let password_checks = args
        .password_check_concurrency
        .map_or_else(crate::password::checks::default_permits, usize::from);
    if let Err(e) = crate::password::checks::configure(
        password_checks,
        std::time::Duration::from_millis(args.password_check_wait_ms),
    ) {
        eprintln!("examkit serve: {e}");
        return ExitCode::from(2);
    }
    // The recorder goes in before anything is measured.
    let metrics = match args
        .metrics_listen
        .map(|addr| (addr, crate::telemetry::install()))
    {
        None => None,
        Some((addr, Ok(handle))) => Some((addr, handle)),
        Some((_, Err(e))) => {
            eprintln!("examkit serve: {e}");
            return ExitCode::from(1);
        }
    };
    let workers = if marking.enabled {
        crate::marking::worker::spawn(store.clone(), marking.clone())
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
        crate::marking::worker::spawn(
            store.clone(),
            crate::marking::MarkingConfig {
                workers: 0,
                ..marking.clone()
            },
        )
    };
    let workers = match workers {
        Ok(workers) => workers,
        Err(e) => {
            eprintln!("examkit serve: {e}");
            return ExitCode::from(2);
        }
    };
    let app = crate::app::AppConfig::for_service(args.listen, args.public_url.as_ref());
    warn_plain_cookies(&app, args.public_url.as_ref());
    let setup_token = match first_run_token(&store).await {
        Ok(token) => token,
        Err(e) => {
            eprintln!("examkit serve: {e}");
            return ExitCode::from(1);
        }
    };
    let state = Arc::new(AppState {
        store: store.clone(),
        limits,
        typesetter: Typesetter::new(export, args.typeset_concurrency.unwrap_or(cores)),
        max_papers: DEFAULT_MAX_PAPERS,
        marking: marking.clone(),
        app: crate::app::AppConfig {
            trusted_proxies: args.trusted_proxies.clone(),
            setup_token: setup_token.clone(),
            ..app
        },
        readiness: crate::http::health::Readiness {
            pulse: (!workers.is_empty()).then(|| workers.pulse()),
            // Workers beat at every pass of their loop and every job heartbeat (a third of the
            // lease); a lease's length without one means none is running.
            max_silence_ms: marking.lease_ms().max(30_000),
        },
        builds: Default::default(),
        maths: Default::default(),
    });
    if args.rate_limits == RateLimits::Off {
        tracing::warn!("rate limits are off: no request is refused for its rate");
    }
    let (addr, server) = match http::bind(state, args.listen, shutdown_signal()).await {
        Ok(bound) => bound,
        Err(e) => {
            eprintln!("examkit serve: cannot listen on {}: {e}", args.listen);
            return ExitCode::from(1);
        }
    };
    let metrics_server = match metrics {
        None => None,
        Some((addr, handle)) => {
            match crate::telemetry::serve(handle, store.clone(), addr, std::future::pending()).await
            {
                Ok((bound, server)) => {
                    tracing::info!(%bound, "metrics listening");
                    say(format_args!("metrics on http://{bound}/metrics"));
                    Some(tokio::spawn(server))
                }
                Err(e) => {
                    eprintln!("examkit serve: cannot listen for metrics on {addr}: {e}");
                    return ExitCode::from(1);
                }
            }
        }
    };
    // Expired rate counters, idempotency records and usage rows are pruned in the background.
    let pruner = crate::retention::spawn(store.clone());
    tracing::info!(%addr, backend = ?state_backend(&args), "examkit listening");
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
    if let Some(token) = &setup_token {
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
    server.await;
    pruner.abort();
    // Usage recorded since the last flush is written before the process ends.
    if let Err(e) = store.flush_usage().await {
        tracing::warn!(error = %e, "usage records not written at shutdown");
    }
    if let Some(metrics_server) = metrics_server {
        metrics_server.abort();
    }
    workers.shutdown().await;
    tracing::info!("examkit stopped");
    ExitCode::SUCCESS
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
                    crate::telemetry::serve(handle, store.clone(), addr, std::future::pending())
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
    let workers = match crate::marking::worker::spawn(
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
