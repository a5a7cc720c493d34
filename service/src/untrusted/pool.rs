//! The page processes: a few children of the service's own binary (`examkit page-reader`), each
//! answering one request at a time. A request goes to an idle child, or to a new one while there
//! are fewer than the budget allows, or waits for one to come free. A watchdog ends a child that
//! has not answered within the deadline; a child that ends without answering (out of memory,
//! out of processor time, past the deadline, crashed) is reaped and replaced by the next request
//! that needs one, and the request fails with the reason, for good: the same file would do the
//! same again.

use std::ffi::OsString;
use std::io::{BufReader, BufWriter};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use super::Budgets;
use super::wire::{Request, Response, read_frame, write_frame};

/// Why a request to a page process failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The child ended or was ended while on this request: the file's fault.
    Ended(String),
    /// No child could be started, or talked to: the operator's problem, worth a retry later.
    Unavailable(String),
}

/// The pool of page processes.
#[derive(Debug)]
pub struct Pool {
    program: PathBuf,
    args: Vec<OsString>,
    budgets: Budgets,
    state: Mutex<State>,
    freed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    idle: Vec<Reader>,
    live: usize,
}

#[derive(Debug)]
struct Reader {
    child: Arc<Mutex<Child>>,
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
}

impl Pool {
    /// Page processes of `program` (the service's own binary) under `budgets`.
    pub fn new(program: PathBuf, budgets: Budgets) -> Pool {
        let args = vec![
            OsString::from("page-reader"),
            OsString::from("--memory-mib"),
            OsString::from(budgets.memory_mib.to_string()),
            OsString::from("--cpu-seconds"),
            OsString::from(budgets.cpu_seconds.to_string()),
        ];
        Pool::with_command(program, args, budgets)
    }

    /// Page processes started as `program args…`: any program that speaks [`super::wire`].
    pub fn with_command(program: PathBuf, args: Vec<OsString>, budgets: Budgets) -> Pool {
        Pool {
            program,
            args,
            budgets,
            state: Mutex::new(State::default()),
            freed: Condvar::new(),
        }
    }

    /// The budgets the children run under.
    pub fn budgets(&self) -> &Budgets {
        &self.budgets
    }

    /// Children alive now, busy or idle.
    pub fn live(&self) -> usize {
        self.lock().live
    }

    /// Sends `request` with `file` to a child and waits, at most the deadline, for its answer.
    /// Blocks: call it off the async runtime.
    pub fn call(&self, request: &Request, file: &[u8]) -> Result<(Response, Vec<u8>), Failure> {
        let mut reader = self.take()?;
        let timed_out = Arc::new(AtomicBool::new(false));
        let (answered, watch) = mpsc::channel::<()>();
        let watchdog = {
            let child = Arc::clone(&reader.child);
            let timed_out = Arc::clone(&timed_out);
            let deadline = self.budgets.deadline;
            std::thread::spawn(move || {
                if watch.recv_timeout(deadline) == Err(RecvTimeoutError::Timeout) {
                    timed_out.store(true, Ordering::SeqCst);
                    let _ = lock(&child).kill();
                }
            })
        };
        let exchanged = write_frame(&mut reader.input, request, file)
            .and_then(|()| read_frame::<_, Response>(&mut reader.output));
        drop(answered);
        let _ = watchdog.join();
        match exchanged {
            Ok(Some(answer)) if !timed_out.load(Ordering::SeqCst) => {
                self.give(reader);
                Ok(answer)
            }
            Ok(_) | Err(_) => {
                let status = end(&reader.child);
                self.forget();
                Err(Failure::Ended(
                    self.why(status, timed_out.load(Ordering::SeqCst)),
                ))
            }
        }
    }

    /// What a user is told about a child that ended with `status` while on their page.
    fn why(&self, status: Option<ExitStatus>, timed_out: bool) -> String {
        let budgets = &self.budgets;
        if timed_out {
            return format!(
                "the page took longer than {} s to draw",
                budgets.deadline.as_secs_f64()
            );
        }
        match status.and_then(|s| s.signal()) {
            Some(signal) if signal == nix::sys::signal::Signal::SIGXCPU as i32 => format!(
                "the page needed more than {} s of processor time to draw",
                budgets.cpu_seconds
            ),
            Some(signal) if signal == nix::sys::signal::Signal::SIGABRT as i32 => format!(
                "the page needed more than {} MiB of memory to draw",
                budgets.memory_mib
            ),
            Some(signal) => format!("the page's reader was ended by signal {signal}"),
            None => match status.and_then(|s| s.code()) {
                Some(code) => format!("the page's reader stopped (exit code {code})"),
                None => "the page's reader stopped".to_owned(),
            },
        }
    }

    /// An idle child that is still alive, or a new one while under the budget, or the next
    /// one to come free.
    fn take(&self) -> Result<Reader, Failure> {
        let mut state = self.lock();
        loop {
            while let Some(reader) = state.idle.pop() {
                let alive = matches!(lock(&reader.child).try_wait(), Ok(None));
                if alive {
                    return Ok(reader);
                }
                let _ = end(&reader.child);
                state.live -= 1;
            }
            if state.live < self.budgets.processes.max(1) {
                state.live += 1;
                drop(state);
                return self.spawn().inspect_err(|_| self.forget());
            }
            state = self
                .freed
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    fn spawn(&self) -> Result<Reader, Failure> {
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| {
                Failure::Unavailable(format!(
                    "the page reader {} cannot start: {e}",
                    self.program.display()
                ))
            })?;
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Failure::Unavailable(
                "the page reader's pipes are missing".into(),
            ));
        };
        Ok(Reader {
            child: Arc::new(Mutex::new(child)),
            input: BufWriter::new(input),
            output: BufReader::new(output),
        })
    }

    fn give(&self, reader: Reader) {
        self.lock().idle.push(reader);
        self.freed.notify_one();
    }

    fn forget(&self) {
        let mut state = self.lock();
        state.live = state.live.saturating_sub(1);
        drop(state);
        self.freed.notify_one();
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        for reader in state.idle.drain(..) {
            // Closing its stdin ends a child; the kill is for one that does not listen.
            drop(reader.input);
            let _ = end(&reader.child);
        }
    }
}

/// Ends a child and reaps it: its exit status, if it could be read. A child whose pipes have
/// just closed is given a moment to end by itself first, so that its status says why it ended
/// (a signal of its own limits) rather than that it was killed here.
fn end(child: &Mutex<Child>) -> Option<ExitStatus> {
    let mut child = lock(child);
    let started = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if started.elapsed() < GRACE => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) | Err(_) => break,
        }
    }
    let _ = child.kill();
    child.wait().ok()
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// How long a child whose pipes closed is given to end by itself before it is killed.
const GRACE: Duration = Duration::from_millis(500);
