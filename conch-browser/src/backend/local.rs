//! The `local` backend: Conch's own browser, launched headless on its own profile behind
//! the guard's proxy. Connecting tries every browser found, in order, then a download,
//! and says why when it had to fall back (LAUNCH-1, LAUNCH-3, LAUNCH-4, LAUNCH-9);
//! letting go closes the browser and ends its process.
//!
//! Deliberately absent: healing the profile and the command line, which are
//! [`crate::launch`]'s.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use conch_cdp::Connection;
use conch_cdp::protocol::TargetId;
use conch_cdp::protocol::browser::Close as CloseBrowser;
use futures_util::future::BoxFuture;
use tokio::sync::Mutex;

use super::{Abilities, Backend, ConnectError, Connected, Driver, Facts, Held};
use crate::discover::{BrowserKind, Found, Probe, find_all};
use crate::error::BrowserError;
use crate::fetch::{FetchConfig, Progress, fetch};
use crate::guard::{self, GuardConfig, GuardLog};
use crate::home::Home;
use crate::launch::{LaunchSpec, Launched, start};
use crate::process::ProcessTable;

/// Hears how a download of Chromium goes: `None` when it starts, then its progress.
pub(crate) type DownloadSink = Arc<dyn Fn(Option<Progress>) + Send + Sync>;

/// Conch's own local browser.
pub(crate) struct Local {
    pub(crate) home: Home,
    pub(crate) probe: Arc<dyn Probe + Send + Sync>,
    pub(crate) processes: Arc<dyn ProcessTable + Send + Sync>,
    pub(crate) extra_args: Vec<String>,
    pub(crate) share_home: bool,
    pub(crate) headless: bool,
    pub(crate) download: Option<FetchConfig>,
    pub(crate) guard_config: Option<GuardConfig>,
    /// The guard's proxy, started before the first launch and kept across relaunches.
    pub(crate) guard: Arc<Mutex<Option<guard::Running>>>,
    pub(crate) guard_log: Arc<GuardLog>,
    pub(crate) on_download: DownloadSink,
    /// Empties the profile before every launch: the errands' browser keeps nothing on
    /// disk from one launch to the next (ERR-20).
    pub(crate) fresh_profile: bool,
}

impl fmt::Debug for Local {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Local")
            .field("home", &self.home)
            .field("headless", &self.headless)
            .finish_non_exhaustive()
    }
}

impl Driver for Local {
    fn backend(&self) -> Backend {
        Backend::Local
    }

    fn shown(&self) -> String {
        "Conch's own local browser".to_owned()
    }

    fn abilities(&self) -> Abilities {
        Abilities::LOCAL
    }

    fn connect(&self) -> BoxFuture<'_, Result<Connected, ConnectError>> {
        Box::pin(async move { Ok(self.launch().await?) })
    }
}

impl Local {
    /// Tries every browser found, in order, then a download.
    async fn launch(&self) -> Result<Connected, BrowserError> {
        if self.fresh_profile
            && let Err(e) = self.home.wipe_profile()
        {
            tracing::warn!(target: "conch_browser", error = %e, "the errands' browser's profile could not be emptied");
        }
        let extra_args = self.guard_flags().await?;
        let spec = LaunchSpec {
            home: &self.home,
            processes: &self.processes,
            extra_args: &extra_args,
            share_home: self.share_home,
            headless: self.headless,
        };
        let mut failures: Vec<(Found, String)> = Vec::new();
        for found in find_all(self.probe.as_ref()) {
            match start(&spec, &found).await {
                Ok(launched) => return Ok(launched_here(launched, &found, &failures)),
                Err(failure) => {
                    tracing::warn!(
                        target: "conch_browser",
                        browser = found.kind.name(),
                        detail = failure.detail(),
                        "browser did not start; trying the next one"
                    );
                    failures.push((found, failure.detail().to_owned()));
                }
            }
        }
        let sentence = match self.fetch().await {
            Some(Ok(found)) => match start(&spec, &found).await {
                Ok(launched) => return Ok(launched_here(launched, &found, &failures)),
                Err(failure) => format!(
                    "The browser is unavailable: the Chromium Conch downloaded didn't start ({}).",
                    failure.detail()
                ),
            },
            Some(Err(sentence)) => return Err(BrowserError::DownloadFailed(sentence)),
            None => match failures.first() {
                None => "The browser is unavailable: no Chrome, Edge, Brave or Chromium was found on this computer; install one (on Debian: apt-get install chromium).".to_owned(),
                Some((found, detail)) => format!(
                    "The browser is unavailable: {} didn't start ({detail}), and no other browser was found.",
                    found.kind.name()
                ),
            },
        };
        Err(BrowserError::Unavailable(sentence))
    }

    /// The caller's extra flags plus the guard's: its proxy (started here on first need)
    /// and no UDP around it (AMB-1, NET-13).
    async fn guard_flags(&self) -> Result<Vec<String>, BrowserError> {
        let mut args = self.extra_args.clone();
        let Some(guard_config) = self.guard_config.as_ref() else {
            return Ok(args);
        };
        let mut running = self.guard.lock().await;
        if running.is_none() {
            let started = guard::Running::start(guard_config, Arc::clone(&self.guard_log))
                .await
                .map_err(BrowserError::Guard)?;
            *running = Some(started);
        }
        if let Some(running) = running.as_ref() {
            args.extend(running.browser_flags());
        }
        Ok(args)
    }

    /// Downloads Chromium, telling the sink how it goes, without asking anyone
    /// (LAUNCH-4). `None` when downloading is off; the error is the fetcher's sentence.
    async fn fetch(&self) -> Option<Result<Found, String>> {
        let fetch_config = self.download.as_ref()?;
        (self.on_download)(None);
        let sink = Arc::clone(&self.on_download);
        let fetched = fetch(fetch_config, move |progress| sink(Some(progress))).await;
        Some(
            fetched
                .map(|path| Found {
                    kind: BrowserKind::Downloaded,
                    path,
                })
                .map_err(|e| e.sentence()),
        )
    }
}

/// The browser that started, with which it is and why.
fn launched_here(launched: Launched, found: &Found, failures: &[(Found, String)]) -> Connected {
    Connected {
        facts: Facts {
            browser: found.kind.name().to_owned(),
            version: launched.product,
            executable: Some(found.path.clone()),
            user_agent: launched.user_agent,
            why: fallback_sentence(failures, found),
        },
        connection: launched.connection,
        held: Box::new(Process {
            child: launched.child,
        }),
    }
}

fn fallback_sentence(failures: &[(Found, String)], chosen: &Found) -> Option<String> {
    match (failures.first(), chosen.kind) {
        (Some((first, _)), _) => Some(format!(
            "{} didn't start, so Conch uses {}.",
            first.kind.name(),
            chosen.kind.name()
        )),
        (None, BrowserKind::Downloaded) => {
            Some("No browser was found on this computer, so Conch downloaded Chromium.".to_owned())
        }
        (None, _) => None,
    }
}

/// The process Conch launched.
#[derive(Debug)]
struct Process {
    child: Option<tokio::process::Child>,
}

impl Held for Process {
    fn pid(&self) -> Option<u32> {
        self.child.as_ref()?.id()
    }

    fn gone(&mut self) -> bool {
        self.child.as_mut().is_some_and(|child| {
            matches!(child.try_wait(), Ok(Some(_)))
                || child.id().is_some_and(|pid| !process_alive(pid))
        })
    }

    fn let_go(
        self: Box<Self>,
        connection: Connection,
        _ours: Vec<TargetId>,
    ) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            let browser = connection.browser();
            let _ =
                tokio::time::timeout(Duration::from_secs(5), browser.call(&CloseBrowser {})).await;
            connection.close();
            if let Some(mut child) = self.child
                && tokio::time::timeout(Duration::from_secs(5), child.wait())
                    .await
                    .is_err()
            {
                let _ = child.kill().await;
            }
        })
    }
}

/// Whether `pid` still runs. On Linux a killed browser can linger as a zombie whose
/// helpers keep the DevTools pipe open for a moment, so `/proc` is asked directly.
fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            // The state follows the command name, which is in parentheses.
            Ok(stat) => stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .is_some_and(|state| state != "Z" && state != "X"),
            Err(_) => false,
        }
    } else {
        true
    }
}
