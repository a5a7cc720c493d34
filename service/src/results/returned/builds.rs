//! A class's returned scripts are made once for everyone who asks at once, and kept until a
//! script changes.
//!
//! Making a class's `returned.pdf` or `returned.zip` takes seconds to minutes of typesetting. Ten
//! requests for the same set at once get one build: the first makes it, the others wait for it
//! (at most [`BuildBudget::wait`], then they are told to retry), and the file is kept, by the
//! account, the set, the kind and whether it is drafts, with the version of the class's results
//! it was made from ([`version`]), until the results change or room is needed. An account makes
//! at most [`BuildBudget::per_account`] files at once; a build waits at most `wait` for a
//! typesetter slot and is abandoned past [`BuildBudget::deadline`]. A request that goes away
//! while its build runs ends the build; one waiting for it then makes it.

use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::class::{ClassFile, ClassScript};
use super::{ReturnedError, load_class_pdf, load_class_zip};
use crate::store::Store;

/// Which file of a class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Every script in one PDF.
    Pdf,
    /// One PDF per student in a zip archive.
    Zip,
}

/// How builds are bounded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildBudget {
    /// The longest a request waits for another's build of the same file, or for a typesetter.
    pub wait: Duration,
    /// The longest one build may take.
    pub deadline: Duration,
    /// Builds one account may run at once (each writes a temporary file).
    pub per_account: usize,
    /// Built files kept for the next request.
    pub kept: usize,
}

impl Default for BuildBudget {
    fn default() -> Self {
        BuildBudget {
            wait: Duration::from_secs(30),
            deadline: Duration::from_secs(600),
            per_account: 2,
            kept: 16,
        }
    }
}

/// Which file: whose, of which set, which kind, drafts or final.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BuildKey {
    /// The account.
    pub user_id: String,
    /// The class set.
    pub set_id: String,
    /// PDF or zip.
    pub kind: Kind,
    /// Drafts.
    pub draft: bool,
}

/// Why no file was given.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The scripts cannot be returned (not final, not found, a page that cannot be drawn…).
    #[error(transparent)]
    Returned(#[from] ReturnedError),
    /// The service is busy with it or with like work: retry after `retry_after` seconds.
    #[error("{message}")]
    Busy {
        /// What it is busy with.
        message: String,
        /// Seconds to wait.
        retry_after: u64,
    },
}

/// The builds running and the files kept.
#[derive(Debug, Default)]
pub struct ClassBuilds {
    budget: BuildBudget,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<BuildKey, Entry>,
    /// Kept files, oldest first.
    kept: VecDeque<BuildKey>,
    /// Builds running, by account.
    running: HashMap<String, usize>,
}

#[derive(Debug)]
enum Entry {
    Building { done: watch::Receiver<()> },
    Built { version: u64, file: Arc<ClassFile> },
}

enum Claim {
    Kept(Arc<ClassFile>),
    Wait(watch::Receiver<()>),
    Build(watch::Sender<()>),
}

impl ClassBuilds {
    /// Builds bounded by `budget`.
    pub fn new(budget: BuildBudget) -> ClassBuilds {
        ClassBuilds {
            budget,
            state: Mutex::default(),
        }
    }

    /// The bounds in force.
    pub fn budget(&self) -> &BuildBudget {
        &self.budget
    }

    /// Builds running now, of every account.
    pub fn running(&self) -> usize {
        self.lock().running.values().sum()
    }

    /// The file `key` names at `version`: the one kept, the one being made (waited for), or a
    /// new one made by `build`.
    pub async fn get<F, Fut>(
        &self,
        key: BuildKey,
        version: u64,
        build: F,
    ) -> Result<ClassFile, BuildError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<ClassFile, BuildError>>,
    {
        let waited_until = Instant::now() + self.budget.wait;
        let done = loop {
            match self.claim(&key, version)? {
                Claim::Kept(file) => return reopened(&file),
                Claim::Build(done) => break done,
                Claim::Wait(mut done) => {
                    let left = waited_until.saturating_duration_since(Instant::now());
                    // Finished or abandoned, the entry is looked at again.
                    if tokio::time::timeout(left, done.changed()).await.is_err() {
                        return Err(BuildError::Busy {
                            message: "the class's returned scripts are being made".into(),
                            retry_after: 10,
                        });
                    }
                }
            }
        };
        let mut running = Running {
            builds: self,
            key: &key,
            kept: false,
            _done: done,
        };
        let made = tokio::time::timeout(self.budget.deadline, build())
            .await
            .map_err(|_| BuildError::Busy {
                message: format!(
                    "the class's returned scripts took longer than {} s to make",
                    self.budget.deadline.as_secs()
                ),
                retry_after: 60,
            })??;
        let file = Arc::new(made);
        running.keep(version, Arc::clone(&file));
        reopened(&file)
    }

    fn claim(&self, key: &BuildKey, version: u64) -> Result<Claim, BuildError> {
        let mut state = self.lock();
        match state.entries.get(key) {
            Some(Entry::Built {
                version: kept,
                file,
            }) if *kept == version => {
                return Ok(Claim::Kept(Arc::clone(file)));
            }
            // A build of this file is running (of this version or an older one): wait for it.
            Some(Entry::Building { done }) => return Ok(Claim::Wait(done.clone())),
            _ => {}
        }
        let running = state.running.get(&key.user_id).copied().unwrap_or(0);
        if running >= self.budget.per_account {
            return Err(BuildError::Busy {
                message: format!(
                    "this account is making {running} files of returned scripts already"
                ),
                retry_after: 10,
            });
        }
        let (done, waiting) = watch::channel(());
        state.forget(key);
        state
            .entries
            .insert(key.clone(), Entry::Building { done: waiting });
        *state.running.entry(key.user_id.clone()).or_default() += 1;
        Ok(Claim::Build(done))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl State {
    fn forget(&mut self, key: &BuildKey) {
        self.entries.remove(key);
        self.kept.retain(|k| k != key);
    }
}

/// A build running: when it ends, kept or not (failed, or its request gone), its entry and its
/// account's count are let go, and whoever waits for it looks again.
struct Running<'a> {
    builds: &'a ClassBuilds,
    key: &'a BuildKey,
    kept: bool,
    _done: watch::Sender<()>,
}

impl Running<'_> {
    fn keep(&mut self, version: u64, file: Arc<ClassFile>) {
        let mut state = self.builds.lock();
        state.forget(self.key);
        state
            .entries
            .insert(self.key.clone(), Entry::Built { version, file });
        state.kept.push_back(self.key.clone());
        while state.kept.len() > self.builds.budget.kept {
            if let Some(oldest) = state.kept.pop_front() {
                state.entries.remove(&oldest);
            }
        }
        self.kept = true;
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut state = self.builds.lock();
        if !self.kept {
            state.forget(self.key);
        }
        if let Some(count) = state.running.get_mut(&self.key.user_id) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                state.running.remove(&self.key.user_id);
            }
        }
    }
}

fn reopened(file: &ClassFile) -> Result<ClassFile, BuildError> {
    file.reopen().map_err(|e| {
        BuildError::Returned(ReturnedError::Output(format!(
            "the made file cannot be read: {e}"
        )))
    })
}

/// The version of a class's returned scripts: a hash of everything they are made from that can
/// change (the results as loaded, the scripts and their headings, drafts or final).
pub fn version(results: &impl std::fmt::Debug, scripts: &[ClassScript], draft: bool) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    format!("{results:?}").hash(&mut hasher);
    format!("{scripts:?}").hash(&mut hasher);
    draft.hash(&mut hasher);
    hasher.finish()
}

/// A typesetter slot, waited for at most `wait`.
pub async fn typesetter_slot(
    typesetter: &crate::typeset::Typesetter,
    wait: Duration,
) -> Result<tokio::sync::OwnedSemaphorePermit, BuildError> {
    match tokio::time::timeout(wait, typesetter.slot()).await {
        Ok(Ok(slot)) => Ok(slot),
        Ok(Err(e)) => Err(BuildError::Returned(ReturnedError::Task(e.to_string()))),
        Err(_) => Err(BuildError::Busy {
            message: "every typesetter is busy".into(),
            retry_after: 15,
        }),
    }
}

/// Where a class's file is made from: the store, the page reader, the typesetter and the
/// builds in progress.
#[derive(Debug, Clone, Copy)]
pub struct Sources<'a> {
    /// The database.
    pub store: &'a Store,
    /// Where scanned pages are drawn.
    pub pages: &'a crate::untrusted::Pages,
    /// The typesetter.
    pub typesetter: &'a crate::typeset::Typesetter,
    /// The builds.
    pub builds: &'a ClassBuilds,
}

/// The class's returned scripts (`scripts`, of the results `results`) as `key` names them:
/// kept, being made, or made now (see the module's description).
pub async fn class_file(
    sources: Sources<'_>,
    key: BuildKey,
    results: &impl std::fmt::Debug,
    scripts: &[ClassScript],
) -> Result<ClassFile, BuildError> {
    let version = version(results, scripts, key.draft);
    let (user_id, kind, draft) = (key.user_id.clone(), key.kind, key.draft);
    sources
        .builds
        .get(key, version, || async move {
            let _slot = typesetter_slot(sources.typesetter, sources.builds.budget.wait).await?;
            let made = match kind {
                Kind::Pdf => {
                    load_class_pdf(sources.store, sources.pages, &user_id, scripts, draft).await
                }
                Kind::Zip => {
                    load_class_zip(sources.store, sources.pages, &user_id, scripts, draft).await
                }
            };
            Ok(made?)
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn key(user: &str, set: &str) -> BuildKey {
        BuildKey {
            user_id: user.into(),
            set_id: set.into(),
            kind: Kind::Zip,
            draft: false,
        }
    }

    fn file_of(text: &str) -> ClassFile {
        let mut written = ClassFile::create().expect("a temporary file");
        written.write_all(text.as_bytes()).expect("written");
        ClassFile::written(written).expect("rewound")
    }

    fn text(mut file: ClassFile) -> String {
        let mut text = String::new();
        file.file.read_to_string(&mut text).expect("read");
        assert_eq!(text.len() as u64, file.len);
        text
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ten_requests_at_once_make_one_file_and_each_reads_it_whole() {
        let builds = Arc::new(ClassBuilds::new(BuildBudget::default()));
        let made = Arc::new(AtomicUsize::new(0));
        let requests: Vec<_> = (0..10)
            .map(|_| {
                let (builds, made) = (Arc::clone(&builds), Arc::clone(&made));
                tokio::spawn(async move {
                    builds
                        .get(key("a", "s"), 1, || async move {
                            made.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_millis(300)).await;
                            Ok(file_of("the class"))
                        })
                        .await
                })
            })
            .collect();
        for request in requests {
            let file = request.await.expect("joined").expect("a file");
            assert_eq!(text(file), "the class");
        }
        assert_eq!(made.load(Ordering::SeqCst), 1, "one build");
        assert_eq!(builds.running(), 0);
        // Kept: the same version is not made again; a new version is.
        let again = builds
            .get(key("a", "s"), 1, || async { panic!("made again") })
            .await
            .expect("kept");
        assert_eq!(text(again), "the class");
        let changed = builds
            .get(key("a", "s"), 2, || async { Ok(file_of("marks changed")) })
            .await
            .expect("made");
        assert_eq!(text(changed), "marks changed");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_waiter_past_its_wait_is_told_to_retry_and_an_account_builds_two_at_once() {
        let builds = Arc::new(ClassBuilds::new(BuildBudget {
            wait: Duration::from_millis(200),
            per_account: 2,
            ..BuildBudget::default()
        }));
        let (release, held) = watch::channel(false);
        let slow = |set: &'static str| {
            let (builds, mut held) = (Arc::clone(&builds), held.clone());
            tokio::spawn(async move {
                builds
                    .get(key("a", set), 1, || async move {
                        let _ = held.wait_for(|go| *go).await;
                        Ok(file_of(set))
                    })
                    .await
            })
        };
        let first = slow("s1");
        let second = slow("s2");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(builds.running(), 2);
        // A third file of the account is refused; another account's is made.
        let third = builds
            .get(key("a", "s3"), 1, || async { Ok(file_of("s3")) })
            .await;
        assert!(
            matches!(&third, Err(BuildError::Busy { message, retry_after: 10 }) if message.contains("making 2 files")),
            "{third:?}"
        );
        let other = builds
            .get(key("b", "s3"), 1, || async { Ok(file_of("b's")) })
            .await
            .expect("another account's file");
        assert_eq!(text(other), "b's");
        // A request for the file being made waits, then is told to retry.
        let waited = builds
            .get(key("a", "s1"), 1, || async { panic!("made twice") })
            .await;
        assert!(matches!(waited, Err(BuildError::Busy { .. })), "{waited:?}");
        release.send(true).expect("released");
        assert_eq!(text(first.await.expect("joined").expect("made")), "s1");
        assert_eq!(text(second.await.expect("joined").expect("made")), "s2");
        assert_eq!(builds.running(), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_or_abandoned_build_is_made_by_the_next_request() {
        let builds = Arc::new(ClassBuilds::new(BuildBudget::default()));
        let failed = builds
            .get(key("a", "s"), 1, || async {
                Err(BuildError::Returned(ReturnedError::NotFound))
            })
            .await;
        assert!(matches!(
            failed,
            Err(BuildError::Returned(ReturnedError::NotFound))
        ));
        // A request that goes away mid-build lets the build go.
        let gone = {
            let builds = Arc::clone(&builds);
            tokio::spawn(async move {
                builds
                    .get(key("a", "s"), 1, || async {
                        tokio::time::sleep(Duration::from_secs(600)).await;
                        Ok(file_of("never"))
                    })
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        gone.abort();
        let _ = gone.await;
        assert_eq!(builds.running(), 0);
        let made = builds
            .get(key("a", "s"), 1, || async { Ok(file_of("made")) })
            .await
            .expect("made");
        assert_eq!(text(made), "made");
    }

    #[test]
    fn the_version_changes_with_the_results_and_with_drafts() {
        let scripts: Vec<ClassScript> = Vec::new();
        let a = version(&("Ada", 3), &scripts, false);
        assert_eq!(a, version(&("Ada", 3), &scripts, false));
        assert_ne!(a, version(&("Ada", 4), &scripts, false));
        assert_ne!(a, version(&("Ada", 3), &scripts, true));
    }
}
