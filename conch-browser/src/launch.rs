//! Launching the local browser: headless, over the pipe, on Conch's own profile, with an
//! allowlisted environment, healing a locked profile first and falling back to the next
//! browser found (LAUNCH-2, LAUNCH-6, LAUNCH-7, LAUNCH-9, LAUNCH-15, LAUNCH-20).
//!
//! Deliberately absent: any `--remote-debugging-port` (the DevTools door is a pipe that no
//! other program can use), and any user data directory but `<home>/browser/profile`.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use conch_cdp::protocol::browser::GetVersion;
use conch_cdp::{Config as CdpConfig, Connection};

use crate::discover::Found;
use crate::env::browser_env;
use crate::home::Home;
use crate::process::{ProcessTable, heal_profile};

/// Flags that keep the browser headless and quiet on a closed network: without the
/// background-networking ones Chromium keeps calling Google's hosts.
const QUIET_FLAGS: &[&str] = &[
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-breakpad",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--metrics-recording-only",
    "--password-store=basic",
    "--use-mock-keychain",
    "--mute-audio",
    // Debian's build carries Chromium's field-trial testing config, which turns on
    // experiments a released Chrome does not have: off, as Playwright has it, the
    // browser is the plain one (issue 11).
    "--disable-field-trial-config",
];

/// Flags that let many conversations act at once (issue 18): every conversation's tab
/// lives in a window of its own, and none of them is slowed because another window is in
/// front or covers it. New windows start desktop-sized (AMB-11); every page also gets the
/// viewport explicitly when it attaches.
const SHARED_FLAGS: &[&str] = &[
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
    "--window-size=1280,800",
];

/// Browser features turned off. The omnibox's popup, drawn as a web page of its own
/// (`WebUIOmniboxPopup`), is built in the first second after launch even with no window
/// to show it: on two cores that took most of a core while the agent's first page
/// loaded (TiddlyWiki's 2.7 MB page loaded in about 610 ms instead of 480 ms, issue 11).
/// Its "AI mode" switches are off too (as Playwright turns `AimEnabled` off), though an
/// AI-mode popup page is still built for every window: no switch tried stops it.
/// A caller's own `--disable-features` list is merged into this one: Chromium reads
/// only the last of several.
const DISABLED_FEATURES: &[&str] = &[
    "WebUIOmniboxPopup",
    "AimEnabled",
    "OmniboxAimPopupWebUIContent",
];

/// How long a starting browser has to answer its first command.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// A browser that started and answered.
#[derive(Debug)]
pub(crate) struct Launched {
    pub(crate) connection: Connection,
    /// The browser's process; `None` for a browser Conch did not launch (BE-8).
    pub(crate) child: Option<tokio::process::Child>,
    /// Product and version, such as `HeadlessChrome/156.0.8078.73`.
    pub(crate) product: String,
    pub(crate) user_agent: String,
}

/// Why one candidate did not start.
#[derive(Debug)]
pub(crate) enum StartFailure {
    /// It exited by itself during start-up, even after the profile was healed and the
    /// launch retried once (LAUNCH-7).
    Exited(String),
    /// It could not be started or did not answer.
    NoAnswer(String),
}

impl StartFailure {
    pub(crate) fn detail(&self) -> &str {
        match self {
            StartFailure::Exited(detail) | StartFailure::NoAnswer(detail) => detail,
        }
    }
}

/// What the launcher needs from the runtime's configuration.
#[derive(Debug)]
pub(crate) struct LaunchSpec<'a> {
    pub(crate) home: &'a Home,
    pub(crate) processes: &'a Arc<dyn ProcessTable + Send + Sync>,
    pub(crate) extra_args: &'a [String],
    pub(crate) share_home: bool,
    pub(crate) headless: bool,
}

/// The command line for the local browser (after the executable): `--headless` unless a
/// window is wanted, flags that keep it quiet,
/// `--no-sandbox` only when running as root (Chromium refuses to start otherwise), the
/// one profile, the caller's extra flags, the features turned off ([`DISABLED_FEATURES`]
/// with the caller's), then `about:blank`. The DevTools pipe flag is added by conch-cdp.
pub fn browser_args(profile: &Path, headless: bool, extra: &[String]) -> Vec<String> {
    let mut args: Vec<String> = QUIET_FLAGS
        .iter()
        .chain(SHARED_FLAGS)
        .map(|f| (*f).to_owned())
        .collect();
    if headless {
        args.insert(0, "--headless".to_owned());
    }
    if running_as_root() {
        args.push("--no-sandbox".to_owned());
    }
    args.push(format!("--user-data-dir={}", profile.display()));
    let mut disabled: Vec<&str> = DISABLED_FEATURES.to_vec();
    for arg in extra {
        match arg.strip_prefix(DISABLE_FEATURES) {
            Some(list) => disabled.extend(list.split(',').filter(|f| !f.is_empty())),
            None => args.push(arg.clone()),
        }
    }
    args.push(format!("{DISABLE_FEATURES}{}", disabled.join(",")));
    // The first window is kept (no `--no-startup-window`): with no window left, the
    // browser lets the profile go, and the shared browser's session cookies with it when
    // a chat's last tab moves to a browser of its own (LIVE-16).
    args.push("about:blank".to_owned());
    args
}

/// The switch that turns browser features off, with its `=`.
const DISABLE_FEATURES: &str = "--disable-features=";

fn running_as_root() -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        // /proc/self belongs to the process's effective user.
        std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Starts `found`: heals the profile, launches, and asks its version. A browser that exits
/// during start-up is taken for a profile conflict: the profile is healed again and the
/// launch retried once (LAUNCH-7).
pub(crate) async fn start(spec: &LaunchSpec<'_>, found: &Found) -> Result<Launched, StartFailure> {
    match start_once(spec, found).await {
        Err(StartFailure::Exited(detail)) => {
            tracing::info!(
                target: "conch_browser",
                browser = found.kind.name(),
                %detail,
                "browser exited at start-up; treating it as a profile conflict and retrying once"
            );
            start_once(spec, found).await
        }
        other => other,
    }
}

async fn start_once(spec: &LaunchSpec<'_>, found: &Found) -> Result<Launched, StartFailure> {
    let home = spec.home;
    home.ensure()
        .map_err(|e| StartFailure::NoAnswer(format!("Conch's folder can't be prepared: {e}")))?;
    let profile = home.profile_dir();
    // Ending processes waits on them: off the async threads.
    let processes = Arc::clone(spec.processes);
    let to_heal = profile.clone();
    let healed = tokio::task::spawn_blocking(move || heal_profile(&to_heal, processes.as_ref()))
        .await
        .map_err(|e| StartFailure::NoAnswer(format!("the profile could not be checked ({e})")))?;
    tracing::debug!(target: "conch_browser", ?healed, "profile healed before launch");

    let mut command = std::process::Command::new(&found.path);
    command
        .args(browser_args(&profile, spec.headless, spec.extra_args))
        .env_clear()
        .envs(browser_env(std::env::vars_os(), home, spec.share_home))
        .current_dir(home.browser_dir())
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    // The browser's own complaints go to a log beside the profile, for Repair and status.
    // Kept across launches (the crash that caused a relaunch stays readable), set aside
    // once it grows past its bound.
    match open_browser_log(&home.browser_dir().join("browser.log")) {
        Ok(log) => command.stderr(log),
        Err(_) => command.stderr(Stdio::null()),
    };

    let (connection, mut child) = Connection::launch(command, CdpConfig::default())
        .await
        .map_err(|e| StartFailure::NoAnswer(format!("it could not be started ({e})")))?;
    let answer = tokio::time::timeout(STARTUP_TIMEOUT, connection.call(&GetVersion {})).await;
    match answer {
        Ok(Ok(version)) => Ok(Launched {
            connection,
            child: Some(child),
            product: version.product,
            user_agent: version.user_agent,
        }),
        failed => {
            connection.close();
            // Give a process that is going away a moment to report how it ended.
            let exited = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
            let _ = child.start_kill();
            match exited {
                Ok(Ok(status)) => Err(StartFailure::Exited(format!(
                    "it exited at start-up ({status})"
                ))),
                _ => Err(StartFailure::NoAnswer(match failed {
                    Ok(Err(e)) => format!("it did not answer ({e})"),
                    _ => format!("it did not answer within {} s", STARTUP_TIMEOUT.as_secs()),
                })),
            }
        }
    }
}

/// How large `browser.log` may grow before it is set aside as `browser.log.1`.
pub(crate) const BROWSER_LOG_LIMIT: u64 = 4 * 1024 * 1024;

/// Opens `path` for appending, first setting it aside as `<path>.1` (replacing an older
/// one) when it is past [`BROWSER_LOG_LIMIT`]: a relaunch never wipes what the last
/// browser said before it died, and the log stays bounded.
///
/// # Errors
/// When the file cannot be opened.
pub(crate) fn open_browser_log(path: &Path) -> std::io::Result<std::fs::File> {
    if std::fs::metadata(path).is_ok_and(|m| m.len() > BROWSER_LOG_LIMIT) {
        let mut old = path.as_os_str().to_owned();
        old.push(".1");
        let _ = std::fs::rename(path, old);
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use std::path::Path;

    use super::{BROWSER_LOG_LIMIT, browser_args, open_browser_log};

    /// Issue 11: the omnibox popup's page is never built, and a caller that turns its
    /// own features off keeps both lists (Chromium reads only the last switch).
    #[test]
    fn the_omnibox_popup_is_off_and_a_callers_disabled_features_are_kept() {
        let profile = Path::new("/tmp/profile");
        let disabled = |args: &[String]| -> Vec<String> {
            args.iter()
                .filter(|a| a.starts_with("--disable-features="))
                .cloned()
                .collect()
        };
        let plain = browser_args(profile, true, &[]);
        assert_eq!(
            disabled(&plain),
            ["--disable-features=WebUIOmniboxPopup,AimEnabled,OmniboxAimPopupWebUIContent"]
        );
        assert_eq!(plain.last().map(String::as_str), Some("about:blank"));

        let extra = [
            "--disable-features=Translate,MediaRouter".to_owned(),
            "--proxy-server=http://127.0.0.1:9".to_owned(),
        ];
        let merged = browser_args(profile, true, &extra);
        assert_eq!(
            disabled(&merged),
            [
                "--disable-features=WebUIOmniboxPopup,AimEnabled,OmniboxAimPopupWebUIContent,Translate,MediaRouter"
            ]
        );
        assert!(merged.contains(&"--proxy-server=http://127.0.0.1:9".to_owned()));
    }

    /// Issue 12: browser.log is kept across launches (appended, not truncated), and set
    /// aside as browser.log.1 once past its bound.
    #[test]
    fn browser_log_is_appended_across_launches_and_rotated() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("browser.log");
        open_browser_log(&path)
            .and_then(|mut f| f.write_all(b"the crash before the relaunch\n"))
            .expect("first launch");
        open_browser_log(&path)
            .and_then(|mut f| f.write_all(b"the relaunch\n"))
            .expect("second launch");
        let text = std::fs::read_to_string(&path).expect("the log");
        assert_eq!(text, "the crash before the relaunch\nthe relaunch\n");

        let big = vec![b'x'; usize::try_from(BROWSER_LOG_LIMIT).expect("fits") + 1];
        std::fs::write(&path, &big).expect("a big log");
        open_browser_log(&path)
            .and_then(|mut f| f.write_all(b"fresh\n"))
            .expect("third launch");
        assert_eq!(std::fs::read_to_string(&path).expect("the log"), "fresh\n");
        let old = std::fs::metadata(dir.path().join("browser.log.1")).expect("set aside");
        assert_eq!(old.len(), BROWSER_LOG_LIMIT + 1);
    }
}
