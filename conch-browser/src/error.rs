//! The runtime's error: [`BrowserError`]. Each message is a sentence the agent can act on,
//! and a failure with a typed cause keeps it as its [`source`](std::error::Error::source)
//! (a [`HomeError`], an I/O error, a DevTools error) rather than only its words.
//!
//! Deliberately absent: a catch-all variant. Words alone are carried only where they are
//! the cause: the page's own exception text, the browser's `net::ERR_…` text, and the
//! sentence summing up why no browser could be had.

use crate::home::HomeError;

/// Why a runtime call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BrowserError {
    /// No browser can be had; the sentence says why and what would fix it (LAUNCH-16).
    /// It sums up every browser tried and the download, so it is words, not one cause.
    #[error("{0}")]
    Unavailable(String),
    /// No browser was found and downloading Chromium failed; the fetcher's sentence names
    /// the cause (offline, disk full, a bad archive). The person is offered Try again
    /// (LAUNCH-5); the status is unavailable, as for [`BrowserError::Unavailable`].
    #[error("{0}")]
    DownloadFailed(String),
    /// Conch's network guard could not start, so no browser is launched without it
    /// (NET-5).
    #[error("The browser is unavailable: Conch's network guard could not start ({0}); try again.")]
    Guard(#[source] std::io::Error),
    /// The browser is not running (an internal state a caller normally never sees).
    #[error("The browser is not running; try again.")]
    NotRunning,
    /// A new tab was not attached and ruled in time (the browser is overloaded).
    #[error("The new tab was not ready within {seconds} s; the browser is busy. Try again.")]
    PageNotReady {
        /// How long it was given.
        seconds: u64,
    },
    /// The conversation has no tab with that id.
    #[error("There is no tab {0} in this conversation; list the tabs with browser_tabs.")]
    NoSuchTab(String),
    /// Every open errand is driven or watched, so no new one can open now (ERR-17): the
    /// sentence is conch-policy's refusal.
    #[error("{0}")]
    ErrandsBusy(String),
    /// The conversation has no tab open yet.
    #[error("No page is open yet; open one with browser_open.")]
    NoTab,
    /// The conversation already keeps the most tabs it may (TAB-5).
    #[error(
        "This conversation already has 8 tabs open; close one with browser_tabs before opening another."
    )]
    TabLimit,
    /// The navigation failed at once (`net::ERR_…`).
    #[error("The page could not be opened ({0}).")]
    Navigation(String),
    /// The page did not load, even on the retry with a lighter wait (LAUNCH-10).
    #[error(
        "The page did not finish loading within {seconds} s, even on a second try; try again or open another address."
    )]
    NavigationTimeout {
        /// The total time waited.
        seconds: u64,
    },
    /// The profile could not be wiped when signing out of everything.
    #[error(
        "Conch could not sign out of everything: {0}. Close other browsers using Conch's folder and try again."
    )]
    Wipe(#[source] HomeError),
    /// Another process owns Conch's home (issue 12): one folder serves one Conch at a time.
    #[error(
        "Another Conch{} is already using the folder {}, and one folder serves one Conch at a time: close that one, or start this one with --home set to another folder.",
        pid.map(|p| format!(" (process {p})")).unwrap_or_default(),
        home.display()
    )]
    HomeInUse {
        /// The home.
        home: std::path::PathBuf,
        /// The owner's process id, when it recorded one.
        pid: Option<u32>,
    },
    /// Conch's home could not be locked for this process (issue 12).
    #[error(
        "Conch's folder can't be used: failed to {0}; check that it can be written, or start with --home set to another folder."
    )]
    Home(#[source] std::sync::Arc<HomeError>),
    /// A script threw.
    #[error("The page's script failed: {0}")]
    Script(String),
    /// The browser did not answer as expected.
    #[error("The browser did not answer: {0}; try again.")]
    Cdp(#[from] conch_cdp::Error),
}

impl BrowserError {
    /// Why this process can't use its home: another process owns it (with the way out,
    /// `--home` elsewhere), or the lock itself failed.
    pub(crate) fn of_home(e: std::sync::Arc<HomeError>) -> Self {
        match &*e {
            HomeError::Busy { home, pid } => BrowserError::HomeInUse {
                home: home.clone(),
                pid: *pid,
            },
            _ => BrowserError::Home(e),
        }
    }
}
