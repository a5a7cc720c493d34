//! The `examkit` command: validate submissions offline, run the HTTP service, administer accounts.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    allocator::tune();
    let cli = examkit::commands::cli::Cli::parse();
    examkit::commands::cli::run(cli)
}

/// glibc's allocator, set before the program allocates anything.
///
/// By default glibc raises its threshold for giving an allocation its own mapping each time such
/// a mapping is freed, up to 32 MiB. The service reads whole uploaded files (up to 25 MiB) and
/// renders pages of several MiB on many threads: once the threshold has risen, those buffers come
/// from per-thread arenas, which keep the memory when they are freed, and the resident memory rose
/// with the size of the files read and stayed there. A fixed threshold (glibc's own starting value,
/// 128 KiB) keeps large buffers in their own mappings, given back as soon as they are freed.
///
/// glibc takes the setting only at start, from `GLIBC_TUNABLES` (`mallopt` would need unsafe
/// code), so the program runs itself again once with it set, keeping its process id. A
/// `GLIBC_TUNABLES` that already sets `glibc.malloc.mmap_threshold` is left as it is; if running
/// again fails, the program goes on with glibc's defaults.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod allocator {
    const TUNABLE: &str = "glibc.malloc.mmap_threshold";
    const THRESHOLD: u32 = 128 * 1024;

    pub fn tune() {
        use std::os::unix::process::CommandExt;
        let current = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
        if current.contains(TUNABLE) {
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let tunables = if current.is_empty() {
            format!("{TUNABLE}={THRESHOLD}")
        } else {
            format!("{current}:{TUNABLE}={THRESHOLD}")
        };
        let mut args = std::env::args_os();
        let mut command = std::process::Command::new(exe);
        if let Some(name) = args.next() {
            command.arg0(name);
        }
        // `exec` returns only when it failed.
        let _ = command.args(args).env("GLIBC_TUNABLES", tunables).exec();
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod allocator {
    pub fn tune() {}
}
