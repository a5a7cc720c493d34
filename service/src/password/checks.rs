//! The process's bound on password work.
//!
//! One Argon2 check or hash holds 19 MiB for tens of milliseconds, and the runtime's blocking pool
//! grows to 512 threads: unbounded, a flood of sign-ins (unknown emails from many
//! addresses meet no sign-in limit) takes gigabytes. So every password check and hash of the
//! process (the app's sign-in, `examkit users create` and `users set-password`) goes through
//! [`verify`] or [`hash`] here, which take one of a fixed number of permits before the work starts
//! (by default one per core; `examkit serve --password-check-concurrency`). A caller waits for a
//! permit at most the configured wait (by default [`DEFAULT_WAIT`];
//! `--password-check-wait-ms`) and is then refused with [`CheckError::Busy`] (the app answers
//! `503` with `Retry-After`), so nothing queues without bound.
//!
//! The work runs on threads of the bound's own, one per permit. The permit goes with the work onto
//! its thread and is given back when the work ends, not when its caller stops waiting: a client
//! that disconnects mid-check frees nothing while its check still runs, so checks in flight never
//! exceed the permits. Each thread keeps one check's Argon2 memory and uses it again for the next
//! ([`super::Memory`]), so the process holds about permits × 19 MiB for checks, however many are
//! made.
//!
//! What is measured (read by `/metrics` at each scrape, see [`crate::telemetry`]): the checks in
//! flight, their most at once since the process started, the permits, and the refusals.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::Duration;

use tokio::sync::Semaphore;

/// How long a caller waits for a permit unless configured otherwise.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(2);

/// The most permits that may be configured (each is 19 MiB while in use).
pub const MAX_PERMITS: usize = 1024;

/// Why password work was not done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckError {
    /// No permit came free within the wait; worth trying again after `retry_after`.
    Busy {
        /// The wait, at least one second: when a retry may find a permit.
        retry_after: Duration,
    },
    /// The work itself failed (a hash could not be made, or its thread stopped); the text is for
    /// the operator.
    Failed(String),
}

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckError::Busy { retry_after } => write!(
                f,
                "too many passwords are being checked at once; try again in {} s",
                retry_after.as_secs()
            ),
            CheckError::Failed(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for CheckError {}

/// A piece of password work for one of the bound's threads, done in the thread's Argon2 memory.
type Job = Box<dyn FnOnce(&mut super::Memory) + Send>;

/// The permits, the wait, and the threads the work runs on.
#[derive(Debug)]
struct Bound {
    semaphore: Arc<Semaphore>,
    permits: usize,
    wait: Duration,
    /// To the bound's threads; `None` when none could be started.
    jobs: Option<mpsc::Sender<Job>>,
}

static BOUND: OnceLock<Bound> = OnceLock::new();
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
static MOST_IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// One permit per core.
pub fn default_permits() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

fn bound() -> &'static Bound {
    BOUND.get_or_init(|| Bound::new(default_permits(), DEFAULT_WAIT))
}

impl Bound {
    /// The bound, with one thread per permit, each keeping one check's Argon2 memory
    /// ([`super::Memory`]). The work runs on these threads, not on the runtime's blocking pool:
    /// that pool starts a new thread whenever none is idle at the moment work is handed over, and
    /// each thread would keep memory of its own.
    fn new(permits: usize, wait: Duration) -> Bound {
        let permits = permits.clamp(1, MAX_PERMITS);
        let (sender, receiver) = mpsc::channel::<Job>();
        let receiver = Arc::new(Mutex::new(receiver));
        let mut started = 0;
        for n in 0..permits {
            let receiver = Arc::clone(&receiver);
            let thread = std::thread::Builder::new()
                .name(format!("examkit-password-{n}"))
                .spawn(move || {
                    let mut memory = super::Memory::new();
                    loop {
                        // The lock is held only while waiting for the next job.
                        let job = match receiver.lock() {
                            Ok(receiver) => receiver.recv(),
                            Err(_) => return,
                        };
                        match job {
                            // A panic ends the job (its caller sees it), not the thread.
                            Ok(job) => {
                                let _ =
                                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                        job(&mut memory)
                                    }));
                            }
                            Err(_) => return,
                        }
                    }
                });
            match thread {
                Ok(_) => started += 1,
                Err(e) => tracing::error!(error = %e, "cannot start a password check thread"),
            }
        }
        Bound {
            semaphore: Arc::new(Semaphore::new(permits)),
            permits,
            wait,
            jobs: (started > 0).then_some(sender),
        }
    }
}

/// Sets the process's permits (1 to [`MAX_PERMITS`]) and wait, once, before any password work;
/// an error when the bound is already in force.
pub fn configure(permits: usize, wait: Duration) -> Result<(), String> {
    if !(1..=MAX_PERMITS).contains(&permits) {
        return Err(format!(
            "password checks at once must be from 1 to {MAX_PERMITS}, not {permits}"
        ));
    }
    BOUND
        .set(Bound::new(permits, wait))
        .map_err(|_| "the bound on password checks is already in force".to_owned())
}

/// What the gauges show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gauges {
    /// Checks and hashes running now.
    pub in_flight: usize,
    /// The most that ran at once since the process started.
    pub most_in_flight: usize,
    /// The permits: the most that may run at once.
    pub permits: usize,
}

/// The gauges now. Reading them starts nothing: before the first check (or in a process that
/// checks no password, such as `examkit worker`) the permits are the ones the bound will have.
pub fn gauges() -> Gauges {
    Gauges {
        in_flight: IN_FLIGHT.load(Ordering::SeqCst),
        most_in_flight: MOST_IN_FLIGHT.load(Ordering::SeqCst),
        permits: BOUND
            .get()
            .map_or_else(default_permits, |bound| bound.permits),
    }
}

/// A check running on its thread: counted in flight from its start to its end.
struct Running;

impl Running {
    fn start() -> Running {
        let now = IN_FLIGHT.fetch_add(1, Ordering::SeqCst) + 1;
        MOST_IN_FLIGHT.fetch_max(now, Ordering::SeqCst);
        Running
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Runs `work` on one of the bound's threads once a permit is free, waiting at most the bound's
/// wait.
async fn bounded<T: Send + 'static>(
    work: impl FnOnce(&mut super::Memory) -> T + Send + 'static,
) -> Result<T, CheckError> {
    let bound = bound();
    let permit = match tokio::time::timeout(
        bound.wait,
        Arc::clone(&bound.semaphore).acquire_owned(),
    )
    .await
    {
        Ok(Ok(permit)) => permit,
        // The semaphore is never closed.
        Ok(Err(_)) => return Err(CheckError::Failed("the password permits are closed".into())),
        Err(_) => {
            crate::telemetry::password_check_refused();
            return Err(CheckError::Busy {
                retry_after: bound.wait.max(Duration::from_secs(1)),
            });
        }
    };
    let stopped = || {
        tracing::error!("a password check stopped unexpectedly");
        CheckError::Failed("a password check stopped unexpectedly".into())
    };
    let (answer, answered) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move |memory| {
        // Dropped in reverse order: the check leaves the count before its permit is given back.
        let _permit = permit;
        let _running = Running::start();
        let _ = answer.send(work(memory));
    });
    bound
        .jobs
        .as_ref()
        .ok_or_else(stopped)?
        .send(job)
        .map_err(|_| stopped())?;
    answered.await.map_err(|_| stopped())
}

/// Whether `password` matches the stored PHC string ([`super::verify`]); with no stored string
/// (an unknown email), spends the time of a check and answers `false`
/// ([`super::verify_nothing`]). Checked in the Argon2 memory its thread keeps.
pub async fn verify(password: String, stored: Option<String>) -> Result<bool, CheckError> {
    bounded(move |memory| match stored {
        Some(phc) => super::verify_in(memory, &password, &phc),
        None => {
            super::verify_nothing_in(memory, &password);
            false
        }
    })
    .await
}

/// A new hash of `password` ([`super::hash`]; in memory of its own: hashing is rare).
pub async fn hash(password: String) -> Result<String, CheckError> {
    bounded(move |_| super::hash(&password))
        .await?
        .map_err(CheckError::Failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn checks_in_flight_never_exceed_the_permits_and_late_callers_are_refused() {
        // The process's bound: the default, as in every unit test of this binary.
        let permits = bound().permits;
        let wait = bound().wait;
        let stored = super::super::hash("correct horse battery").expect("hash");
        // Far more callers than permits can serve within the wait: each check holds its permit
        // for a while (a slow stand-in for Argon2), so some are refused.
        let slow = wait / 2;
        let mut calls = Vec::new();
        for _ in 0..(4 * permits + 4) {
            calls.push(tokio::spawn(bounded(move |_| {
                std::thread::sleep(slow);
                true
            })));
        }
        let mut done = 0;
        let mut busy = 0;
        for call in calls {
            match call.await.expect("joined") {
                Ok(true) => done += 1,
                Err(CheckError::Busy { retry_after }) => {
                    assert!(retry_after >= Duration::from_secs(1));
                    busy += 1;
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(done >= permits, "{done} done");
        assert!(busy > 0, "{busy} refused");
        let after = gauges();
        assert!(after.most_in_flight <= permits, "{after:?}");
        assert_eq!(after.permits, permits);
        // The real work goes through the same bound.
        assert_eq!(
            verify("correct horse battery".into(), Some(stored.clone())).await,
            Ok(true)
        );
        assert_eq!(verify("wrong".into(), Some(stored)).await, Ok(false));
        assert_eq!(verify("anything".into(), None).await, Ok(false));
        let made = hash("another password".into()).await.expect("hashed");
        assert!(super::super::verify("another password", &made));
        assert!(gauges().most_in_flight <= permits);
    }

    #[test]
    fn permits_out_of_range_are_refused_and_the_bound_is_set_once() {
        for bad in [0, MAX_PERMITS + 1] {
            let e = configure(bad, DEFAULT_WAIT).expect_err("refused");
            assert!(e.contains("from 1 to 1024"), "{e}");
        }
        let _ = bound();
        assert!(configure(2, DEFAULT_WAIT).is_err(), "already in force");
    }
}
