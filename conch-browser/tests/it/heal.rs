//! Healing a profile left locked (LAUNCH-6): with a fake process table, and with real
//! Chromium processes.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use conch_browser::process::{
    HealProblem, ProcessError, ProcessInfo, ProcessTable, heal_profile, profile_dirs_in,
};

/// A process table made up by the test: it records which pids were ended.
#[derive(Debug, Default)]
struct FakeTable {
    processes: Vec<ProcessInfo>,
    ended: Mutex<Vec<u32>>,
    refuses: Option<u32>,
    unreadable: bool,
    /// Ended processes stay in the table (a holder that keeps coming back).
    immortal: bool,
}

impl FakeTable {
    fn new(processes: &[(u32, &[&str])]) -> Self {
        FakeTable {
            processes: processes
                .iter()
                .map(|(pid, cmd)| ProcessInfo {
                    pid: *pid,
                    cmd: cmd.iter().map(|a| (*a).to_owned()).collect(),
                })
                .collect(),
            ..FakeTable::default()
        }
    }

    fn ended(&self) -> Vec<u32> {
        self.ended.lock().expect("not poisoned").clone()
    }
}

impl ProcessTable for FakeTable {
    fn processes(&self) -> Result<Vec<ProcessInfo>, ProcessError> {
        if self.unreadable {
            return Err(ProcessError::List {
                source: std::io::Error::other("no /proc"),
            });
        }
        let ended = self.ended();
        Ok(self
            .processes
            .iter()
            .filter(|p| self.immortal || !ended.contains(&p.pid))
            .cloned()
            .collect())
    }

    fn end(&self, pid: u32) -> Result<(), ProcessError> {
        if self.refuses == Some(pid) {
            return Err(ProcessError::Signal { pid });
        }
        self.ended.lock().expect("not poisoned").push(pid);
        Ok(())
    }
}

fn arg(profile: &Path) -> String {
    format!("--user-data-dir={}", profile.display())
}

/// Chromium's lock files as a crash leaves them: dangling symbolic links (Unix) and
/// Windows' `lockfile`.
fn plant_locks(profile: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        symlink("vm-4242", profile.join("SingletonLock")).expect("lock");
        symlink(
            "/tmp/org.chromium.Chromium.gone/SingletonSocket",
            profile.join("SingletonSocket"),
        )
        .expect("socket");
        symlink("17471208974822944304", profile.join("SingletonCookie")).expect("cookie");
    }
    std::fs::write(profile.join("lockfile"), b"").expect("lockfile");
}

fn lock_names(profile: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(profile)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("Singleton") || n == "lockfile")
        .collect();
    names.sort();
    names
}

struct Profiles {
    _dir: tempfile::TempDir,
    profile: PathBuf,
    other: PathBuf,
    prefixed: PathBuf,
}

fn profiles() -> Profiles {
    let dir = tempfile::tempdir().expect("temp dir");
    let profile = dir.path().join("profile");
    let other = dir.path().join("other");
    let prefixed = dir.path().join("profile2");
    for p in [&profile, &other, &prefixed] {
        std::fs::create_dir(p).expect("profile dir");
    }
    Profiles {
        _dir: dir,
        profile,
        other,
        prefixed,
    }
}

/// LAUNCH-6: exactly the stand-in holding our profile is ended; decoys on another profile,
/// on a profile sharing our prefix, and without a profile are left; the locks go.
#[test]
fn launch_6_ends_the_holder_leaves_decoys_and_clears_locks() {
    let p = profiles();
    plant_locks(&p.profile);
    plant_locks(&p.other);
    std::fs::write(p.profile.join("Local State"), b"{}").expect("profile data");
    let table = FakeTable::new(&[
        (101, &["/stand-in/chrome", "--headless", &arg(&p.profile)]),
        (202, &["/stand-in/chrome", "--headless", &arg(&p.other)]),
        (203, &["/stand-in/chrome", &arg(&p.prefixed)]),
        (204, &["/usr/bin/vim", "profile"]),
    ]);

    let report = heal_profile(&p.profile, &table);

    assert!(report.is_healed(), "{:?}", report.problems);
    assert_eq!(table.ended(), [101]);
    assert_eq!(report.ended, [101]);
    assert!(
        lock_names(&p.profile).is_empty(),
        "{:?}",
        lock_names(&p.profile)
    );
    let expected_removed = if cfg!(unix) { 4 } else { 1 };
    assert_eq!(report.removed.len(), expected_removed);
    assert!(report.removed.iter().all(|r| r.starts_with(&p.profile)));
    assert!(
        p.profile.join("Local State").exists(),
        "only locks are removed"
    );
    assert_eq!(
        lock_names(&p.other).len(),
        expected_removed,
        "the decoy's locks stay"
    );
}

/// LAUNCH-6: every process naming the profile is ended, the main browser before its
/// helpers, whatever their pids; a path spelled differently (trailing slash, `.`, or
/// through a symbolic link) still names it.
#[test]
fn launch_6_ends_every_holder_main_first() {
    let p = profiles();
    let trailing = format!("{}/", arg(&p.profile));
    let dotted = format!(
        "--user-data-dir={}/./profile",
        p.profile.parent().expect("parent").display()
    );
    let mut processes: Vec<(u32, Vec<String>)> = vec![
        (
            50,
            vec!["chrome".into(), "--type=renderer".into(), trailing],
        ),
        (
            60,
            vec!["chrome".into(), "--headless".into(), arg(&p.profile)],
        ),
        (
            70,
            vec!["chrome".into(), "--type=gpu-process".into(), dotted],
        ),
    ];
    #[cfg(unix)]
    {
        let alias = p.other.join("alias");
        std::os::unix::fs::symlink(&p.profile, &alias).expect("alias");
        processes.push((80, vec!["chrome".into(), arg(&alias)]));
    }
    let borrowed: Vec<(u32, Vec<&str>)> = processes
        .iter()
        .map(|(pid, cmd)| (*pid, cmd.iter().map(String::as_str).collect()))
        .collect();
    let rows: Vec<(u32, &[&str])> = borrowed
        .iter()
        .map(|(pid, c)| (*pid, c.as_slice()))
        .collect();
    let table = FakeTable::new(&rows);

    let report = heal_profile(&p.profile, &table);

    let expected: &[u32] = if cfg!(unix) {
        &[60, 80, 50, 70]
    } else {
        &[60, 50, 70]
    };
    assert_eq!(table.ended(), expected);
    assert!(report.is_healed());
}

/// LAUNCH-6: when a holder will not end, the locks stay (removing them under a live browser
/// would let a second one open the profile), and the report says why.
#[test]
fn launch_6_locks_stay_while_a_holder_lives() {
    let p = profiles();
    plant_locks(&p.profile);
    let mut table = FakeTable::new(&[(101, &["chrome", &arg(&p.profile)])]);
    table.refuses = Some(101);

    let report = heal_profile(&p.profile, &table);

    assert!(!report.is_healed());
    assert!(report.removed.is_empty());
    assert!(matches!(
        report.problems.as_slice(),
        [HealProblem::Process(ProcessError::Signal { pid: 101 })]
    ));
    assert_eq!(lock_names(&p.profile).len(), if cfg!(unix) { 4 } else { 1 });
}

/// LAUNCH-6: a holder that is still listed after being ended, round after round, is
/// reported and the locks stay.
#[test]
fn launch_6_holder_that_keeps_coming_back() {
    let p = profiles();
    plant_locks(&p.profile);
    let mut table = FakeTable::new(&[(101, &["chrome", &arg(&p.profile)])]);
    table.immortal = true;

    let report = heal_profile(&p.profile, &table);

    assert!(!report.is_healed());
    assert!(report.removed.is_empty());
    assert!(table.ended().len() > 1, "it was tried more than once");
    assert!(matches!(
        report.problems.as_slice(),
        [HealProblem::Process(ProcessError::StillRunning {
            pid: 101
        })]
    ));
    assert!(!lock_names(&p.profile).is_empty());
}

/// LAUNCH-6: an unreadable process table is a problem, not a licence to clear the locks.
#[test]
fn launch_6_unreadable_table_clears_nothing() {
    let p = profiles();
    plant_locks(&p.profile);
    let table = FakeTable {
        unreadable: true,
        ..FakeTable::default()
    };
    let report = heal_profile(&p.profile, &table);
    assert!(!report.is_healed());
    assert!(report.removed.is_empty());
    assert!(!lock_names(&p.profile).is_empty());
    let said = report
        .problems
        .first()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert_eq!(said, "free the profile");
}

/// LAUNCH-6: with nothing holding the profile, stale locks are simply removed.
#[test]
fn launch_6_no_holder_just_clears_locks() {
    let p = profiles();
    plant_locks(&p.profile);
    let table = FakeTable::new(&[(7, &["chrome", &arg(&p.other)])]);
    let report = heal_profile(&p.profile, &table);
    assert!(report.is_healed());
    assert!(table.ended().is_empty());
    assert!(lock_names(&p.profile).is_empty());
}

/// LAUNCH-2: the argv check a launcher runs on the process it started.
#[test]
fn launch_2_argv_names_only_our_profile() {
    let cmd: Vec<String> = [
        "chromium",
        "--headless",
        "--user-data-dir=/h/browser/profile",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    assert_eq!(profile_dirs_in(&cmd), [PathBuf::from("/h/browser/profile")]);
}

#[cfg(target_os = "linux")]
mod real {
    //! LAUNCH-6 against real headless Chromium processes.

    use std::path::Path;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    use conch_browser::process::{ProcessTable, SystemProcessTable, heal_profile};
    use conch_fixtures::TempProfile;

    /// Kills what the test started, even when an assertion failed first.
    struct Reaper {
        decoy: Option<Child>,
        orphan: Option<u32>,
    }

    impl Drop for Reaper {
        fn drop(&mut self) {
            if let Some(mut child) = self.decoy.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
            if let Some(pid) = self.orphan.take()
                && running(pid)
            {
                let _ = Command::new("kill")
                    .arg("-KILL")
                    .arg(pid.to_string())
                    .status();
            }
        }
    }

    /// Whether `pid` is a live process (not gone, not a zombie waiting for its parent).
    fn running(pid: u32) -> bool {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            return false;
        };
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next());
        !matches!(state, Some('Z' | 'X') | None)
    }

    fn wait_for(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
        let deadline = Instant::now() + limit;
        while !ok() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn browser(profile: &Path) -> Command {
        let mut command = conch_fixtures::browser::command(profile).expect("a test browser");
        command.arg("--remote-debugging-port=0");
        command
    }

    fn singleton_files(profile: &Path) -> Vec<String> {
        std::fs::read_dir(profile)
            .expect("list profile")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("Singleton"))
            .collect()
    }

    /// LAUNCH-6: a process that ignores the request to stop is killed; one already gone
    /// is fine.
    #[test]
    fn launch_6_end_kills_a_process_that_ignores_sigterm() {
        use std::os::unix::process::ExitStatusExt;
        let stubborn = Command::new("sh")
            .arg("-c")
            .arg("trap '' TERM; exec sleep 30")
            .spawn()
            .expect("spawn");
        let pid = stubborn.id();
        let mut reaper = Reaper {
            decoy: Some(stubborn),
            orphan: None,
        };
        std::thread::sleep(Duration::from_millis(200));
        let table = SystemProcessTable {
            term_wait: Duration::from_millis(300),
            kill_wait: Duration::from_secs(5),
        };
        let started = Instant::now();
        table.end(pid).expect("ended");
        assert!(
            started.elapsed() >= Duration::from_millis(300),
            "it was asked first"
        );
        let status = reaper
            .decoy
            .as_mut()
            .expect("the child")
            .wait()
            .expect("reaped");
        assert_eq!(status.signal(), Some(9), "{status:?}");
        table.end(pid).expect("already gone is fine");
    }

    /// Starts an orphaned Chromium holding profile `p` (its parent shell exits at once, as
    /// after a crash of Conch) and a decoy Chromium on `q`; waits for both locks. Gives the
    /// reaper, the holder's pid and the decoy's pid.
    fn holder_and_decoy(p: &Path, q: &Path) -> (Reaper, u32, u32) {
        let mut reaper = Reaper {
            decoy: None,
            orphan: None,
        };
        let holder = browser(p);
        let output = Command::new("sh")
            .arg("-c")
            .arg(r#""$0" "$@" </dev/null >/dev/null 2>&1 & echo $!"#)
            .arg(holder.get_program())
            .args(holder.get_args())
            .output()
            .expect("spawn the holder");
        let pid: u32 = String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse()
            .expect("the holder's pid");
        reaper.orphan = Some(pid);

        let decoy = browser(q)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the decoy");
        let decoy_pid = decoy.id();
        reaper.decoy = Some(decoy);

        wait_for("P's SingletonLock", Duration::from_secs(30), || lock(p));
        wait_for("Q's SingletonLock", Duration::from_secs(30), || lock(q));
        assert!(running(pid), "the holder is up");
        (reaper, pid, decoy_pid)
    }

    fn lock(profile: &Path) -> bool {
        std::fs::symlink_metadata(profile.join("SingletonLock")).is_ok()
    }

    /// LAUNCH-6 (real browser): an orphaned Chromium holding profile P is found by its
    /// command line and ended, P's Singleton files are removed, and a decoy Chromium on
    /// profile Q keeps running.
    #[test]
    fn launch_6_real_chromium_is_ended_and_decoy_left() {
        let p = TempProfile::new().expect("profile P");
        let q = TempProfile::new().expect("profile Q");
        let (mut reaper, pid, decoy_pid) = holder_and_decoy(p.path(), q.path());

        let table = SystemProcessTable::default();
        let report = heal_profile(p.path(), &table);

        assert!(report.is_healed(), "{:?}", report.problems);
        assert_eq!(report.ended.first(), Some(&pid), "the main process first");
        wait_for("the holder to end", Duration::from_secs(5), || {
            !running(pid)
        });
        assert!(
            singleton_files(p.path()).is_empty(),
            "{:?}",
            singleton_files(p.path())
        );

        let still: Vec<u32> = table
            .processes()
            .expect("process table")
            .into_iter()
            .filter(|proc| {
                conch_browser::process::profile_dirs_in(&proc.cmd)
                    .iter()
                    .any(|d| d == p.path())
            })
            .map(|proc| proc.pid)
            .collect();
        assert!(still.is_empty(), "processes still on P: {still:?}");

        let decoy = reaper.decoy.as_mut().expect("decoy");
        assert!(
            decoy.try_wait().expect("decoy status").is_none(),
            "the decoy keeps running"
        );
        assert!(running(decoy_pid));
        assert!(lock(q.path()), "the decoy's lock stays");
    }

    /// LAUNCH-6, through the runtime: a Chromium left holding Conch's own profile is ended
    /// when Conch launches, a decoy on another profile keeps running, and Conch's browser
    /// comes up on the profile.
    #[tokio::test(flavor = "multi_thread")]
    async fn launch_6_conch_launch_frees_its_profile() {
        let home_dir = tempfile::tempdir().expect("home");
        let home = conch_browser::Home::new(home_dir.path());
        home.ensure().expect("home folders");
        let q = TempProfile::new().expect("profile Q");
        let (reaper, pid, decoy_pid) = holder_and_decoy(&home.profile_dir(), q.path());

        let browser = conch_browser::Browser::new(conch_browser::BrowserConfig::new(home));
        browser
            .ensure_running()
            .await
            .expect("Conch's browser comes up");
        assert!(!running(pid), "the stale holder was ended");
        assert!(running(decoy_pid), "the decoy is untouched");
        let ours = browser.pid().await.expect("a pid");
        assert_ne!(ours, pid);
        browser.shutdown().await;
        drop(reaper);
    }
}
