//! Healing a profile left locked (LAUNCH-6): the processes still holding it are found by
//! their command line and ended, then the stale lock files are removed.
//!
//! Everything this module learns about running processes goes through [`ProcessTable`], so
//! tests hand it a fake table; [`SystemProcessTable`] is the real one (sysinfo, command
//! lines only). [`heal_profile`] matches a process when one of its `--user-data-dir`
//! arguments names the profile as a path (canonicalised when possible): a profile that
//! merely shares a prefix (`/p/profile2` against `/p/profile`) never matches.
//! [`profile_dirs_in`] lists the user data directories a command line names (LAUNCH-2,
//! DATA-3 checks).
//!
//! Deliberately absent: reading a browser's error text or exit code. Healing decides only
//! from the processes it finds, since a second Chrome on Windows hands over and quits
//! without saying why. Launching and retrying (LAUNCH-7) belong to the launcher.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sysinfo::{Pid, ProcessRefreshKind, ProcessStatus, ProcessesToUpdate, Signal, System};

/// The lock files a Chromium-family browser leaves in its profile: three symbolic links on
/// Linux and macOS (possibly dangling), `lockfile` on Windows.
pub const LOCK_FILES: &[&str] = &[
    "SingletonLock",
    "SingletonSocket",
    "SingletonCookie",
    "lockfile",
];

/// A running process: its id and its command line (lossily made UTF-8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    /// The process id.
    pub pid: u32,
    /// The program and its arguments.
    pub cmd: Vec<String>,
}

/// What healing may know and do about running processes. A seam for tests.
pub trait ProcessTable: Send + Sync + std::fmt::Debug {
    /// Every running process this user can see, with its command line.
    ///
    /// # Errors
    /// When the table cannot be read.
    fn processes(&self) -> Result<Vec<ProcessInfo>, ProcessError>;

    /// Ends process `pid`: asks it to stop, waits briefly, then kills it, and returns once
    /// it is gone (a zombie counts as gone). A process already gone is `Ok`. May block for
    /// a few seconds.
    ///
    /// # Errors
    /// When it cannot be signalled or is still running after the kill.
    fn end(&self, pid: u32) -> Result<(), ProcessError>;
}

/// A process could not be listed or ended. Reads after "failed to".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProcessError {
    /// The process table could not be read.
    #[error("list the running processes")]
    List {
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The process would not take the signal (another user's, say).
    #[error("signal process {pid}")]
    Signal {
        /// The process.
        pid: u32,
    },
    /// The process was still there after being killed.
    #[error("end process {pid}: it was still running after being killed")]
    StillRunning {
        /// The process.
        pid: u32,
    },
}

/// The real process table, read through sysinfo (command lines only, no threads).
#[derive(Debug, Clone, Copy)]
pub struct SystemProcessTable {
    /// How long [`ProcessTable::end`] waits after asking a process to stop.
    pub term_wait: Duration,
    /// How long it waits after killing it.
    pub kill_wait: Duration,
}

impl Default for SystemProcessTable {
    fn default() -> Self {
        SystemProcessTable {
            term_wait: Duration::from_secs(3),
            kill_wait: Duration::from_secs(3),
        }
    }
}

/// How often [`SystemProcessTable::end`] looks whether the process is gone.
const POLL: Duration = Duration::from_millis(50);

/// How many times [`heal_profile`] reads the table and ends what names the profile before
/// it gives up on a profile whose holders keep coming back.
const HEAL_ROUNDS: usize = 4;

fn new_system() -> Result<System, ProcessError> {
    System::new().map_err(|e| ProcessError::List {
        source: io::Error::other(e),
    })
}

/// The process `pid` as far as ending it goes: `None` when gone or a zombie, else its
/// start time (to tell it from a later process given the same id).
fn alive(system: &mut System, pid: Pid) -> Option<u64> {
    system.refresh_processes_specifics(
        ProcessesToUpdate::Some(&[pid]),
        true,
        ProcessRefreshKind::nothing().without_tasks(),
    );
    let process = system.process(pid)?;
    match process.status() {
        ProcessStatus::Zombie | ProcessStatus::Dead => None,
        _ => Some(process.start_time()),
    }
}

/// Waits up to `limit` for `pid` (started at `started`) to be gone.
fn gone_within(system: &mut System, pid: Pid, started: u64, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if alive(system, pid) != Some(started) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(POLL);
    }
}

impl ProcessTable for SystemProcessTable {
    fn processes(&self) -> Result<Vec<ProcessInfo>, ProcessError> {
        let mut system = new_system()?;
        system.refresh_processes_specifics(
            ProcessesToUpdate::All,
            true,
            ProcessRefreshKind::nothing()
                .without_tasks()
                .with_cmd(sysinfo::UpdateKind::Always),
        );
        let mut out: Vec<ProcessInfo> = system
            .processes()
            .values()
            .filter(|p| p.thread_kind().is_none())
            .filter(|p| !matches!(p.status(), ProcessStatus::Zombie | ProcessStatus::Dead))
            .map(|p| ProcessInfo {
                pid: p.pid().as_u32(),
                cmd: p
                    .cmd()
                    .iter()
                    .map(|arg| arg.to_string_lossy().into_owned())
                    .collect(),
            })
            .collect();
        out.sort_by_key(|p| p.pid);
        Ok(out)
    }

    fn end(&self, pid: u32) -> Result<(), ProcessError> {
        let mut system = new_system()?;
        let target = Pid::from_u32(pid);
        let Some(started) = alive(&mut system, target) else {
            return Ok(());
        };
        let Some(process) = system.process(target) else {
            return Ok(());
        };
        match process.kill_with(Signal::Term) {
            Some(true) if gone_within(&mut system, target, started, self.term_wait) => {
                return Ok(());
            }
            // Not delivered: either it just went, or it is not ours to signal.
            Some(false) => {
                return if alive(&mut system, target) == Some(started) {
                    Err(ProcessError::Signal { pid })
                } else {
                    Ok(())
                };
            }
            // Still running after the wait, or Windows, which has no SIGTERM: kill it.
            Some(true) | None => {}
        }
        let Some(process) = system.process(target) else {
            return Ok(());
        };
        if !process.kill() && alive(&mut system, target) == Some(started) {
            return Err(ProcessError::Signal { pid });
        }
        if gone_within(&mut system, target, started, self.kill_wait) {
            Ok(())
        } else {
            Err(ProcessError::StillRunning { pid })
        }
    }
}

/// The user data directories a browser command line names, in order. Chromium reads
/// `--user-data-dir=<dir>` (also with one dash, and `/` on Windows) up to a lone `--`.
pub fn profile_dirs_in(cmd: &[String]) -> Vec<PathBuf> {
    let prefixes: &[&str] = if cfg!(windows) {
        &["--user-data-dir=", "-user-data-dir=", "/user-data-dir="]
    } else {
        &["--user-data-dir=", "-user-data-dir="]
    };
    cmd.iter()
        .skip(1)
        .take_while(|arg| arg.as_str() != "--")
        .filter_map(|arg| prefixes.iter().find_map(|p| arg.strip_prefix(p)))
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// Whether `a` and `b` are the same directory: compared canonicalised when both resolve,
/// else component by component (so `/p/profile/` is `/p/profile`, and `/p/profile2` is
/// not). A relative path never matches: its base is another process's working directory.
fn same_dir(a: &Path, canonical_b: &Path) -> bool {
    if !a.is_absolute() {
        return false;
    }
    match a.canonicalize() {
        Ok(canonical_a) => canonical_a == canonical_b,
        Err(_) => a == canonical_b,
    }
}

/// Whether the process was started with the profile `canonical_profile` as a user data
/// directory.
fn names_profile(cmd: &[String], canonical_profile: &Path) -> bool {
    profile_dirs_in(cmd)
        .iter()
        .any(|dir| same_dir(dir, canonical_profile))
}

/// Whether a Chromium command line is a helper (renderer, GPU, zygote…) rather than the
/// browser's main process.
fn is_helper(cmd: &[String]) -> bool {
    cmd.iter().any(|arg| arg.starts_with("--type="))
}

/// What [`heal_profile`] did.
#[derive(Debug, Default)]
pub struct HealReport {
    /// The processes ended, main browser processes first.
    pub ended: Vec<u32>,
    /// The lock files removed.
    pub removed: Vec<PathBuf>,
    /// What could not be done. When a process could not be listed or ended, the lock files
    /// are left in place: removing them under a live browser would let a second one open
    /// the same profile.
    pub problems: Vec<HealProblem>,
}

impl HealReport {
    /// Whether the profile is free: every holder ended and every lock removed.
    pub fn is_healed(&self) -> bool {
        self.problems.is_empty()
    }
}

/// One thing [`heal_profile`] could not do. Reads after "failed to".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HealProblem {
    /// Listing or ending a process failed.
    #[error("free the profile")]
    Process(#[source] ProcessError),
    /// A lock file would not go.
    #[error("remove the stale lock {}", path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

/// Frees `profile` for a launch (LAUNCH-6): ends every process whose command line names it
/// as `--user-data-dir` (main browser processes first, then any helper still there,
/// reading the table again until none is left), then removes [`LOCK_FILES`] from it.
/// Never ends this process itself. Blocking: may take a few seconds while a process ends,
/// so async callers run it on a blocking thread.
pub fn heal_profile(profile: &Path, table: &dyn ProcessTable) -> HealReport {
    let mut report = HealReport::default();
    let canonical = profile
        .canonicalize()
        .unwrap_or_else(|_| profile.to_owned());
    let me = std::process::id();
    // A browser still starting up may spawn a helper between the listing and its end, so
    // the table is read again until no holder is left (a few rounds at most).
    for round in 0..=HEAL_ROUNDS {
        let mut holders: Vec<ProcessInfo> = match table.processes() {
            Ok(all) => all
                .into_iter()
                .filter(|p| p.pid != me && names_profile(&p.cmd, &canonical))
                .collect(),
            Err(e) => {
                report.problems.push(HealProblem::Process(e));
                return report;
            }
        };
        if holders.is_empty() {
            break;
        }
        if round == HEAL_ROUNDS {
            report.problems.extend(
                holders
                    .iter()
                    .map(|p| HealProblem::Process(ProcessError::StillRunning { pid: p.pid })),
            );
            return report;
        }
        holders.sort_by_key(|p| (is_helper(&p.cmd), p.pid));
        for holder in holders {
            match table.end(holder.pid) {
                Ok(()) => report.ended.push(holder.pid),
                Err(e) => report.problems.push(HealProblem::Process(e)),
            }
        }
        if !report.problems.is_empty() {
            return report;
        }
    }
    for name in LOCK_FILES {
        let path = profile.join(name);
        // The Singleton files are symbolic links, often dangling: look at the link itself.
        if std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        match std::fs::remove_file(&path) {
            Ok(()) => report.removed.push(path),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(source) => report.problems.push(HealProblem::Lock { path, source }),
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(args: &[&str]) -> Vec<String> {
        args.iter().map(|a| (*a).to_owned()).collect()
    }

    /// LAUNCH-2, DATA-3: every user-data-dir of a command line is found, up to `--`.
    #[test]
    fn launch_2_profile_dirs_in_a_command_line() {
        let line = cmd(&[
            "/usr/lib/chromium/chromium",
            "--headless",
            "--user-data-dir=/h/browser/profile",
            "-user-data-dir=/other",
            "--user-data-dir=",
            "--",
            "--user-data-dir=/after/separator",
        ]);
        assert_eq!(
            profile_dirs_in(&line),
            [PathBuf::from("/h/browser/profile"), PathBuf::from("/other")]
        );
        // The program name itself is never read as a switch.
        assert!(profile_dirs_in(&cmd(&["--user-data-dir=/x"])).is_empty());
    }

    /// LAUNCH-6: matching is by path, never by string prefix; relative paths never match.
    #[test]
    fn launch_6_matches_paths_not_prefixes() {
        let profile = Path::new("/nonexistent-conch/p/profile");
        let names = |arg: &str| names_profile(&cmd(&["chrome", arg]), profile);
        assert!(names("--user-data-dir=/nonexistent-conch/p/profile"));
        assert!(names("--user-data-dir=/nonexistent-conch/p/profile/"));
        assert!(names("--user-data-dir=/nonexistent-conch/p/./profile"));
        assert!(!names("--user-data-dir=/nonexistent-conch/p/profile2"));
        assert!(!names(
            "--user-data-dir=/nonexistent-conch/p/profile/Default"
        ));
        assert!(!names("--user-data-dir=/nonexistent-conch/p"));
        assert!(!names("--user-data-dir=p/profile"));
        assert!(!names("--profile-directory=/nonexistent-conch/p/profile"));
    }

    /// Main browser processes are ended before their helpers.
    #[test]
    fn helpers_are_recognised() {
        assert!(is_helper(&cmd(&["chromium", "--type=renderer"])));
        assert!(!is_helper(&cmd(&["chromium", "--headless"])));
    }
}
