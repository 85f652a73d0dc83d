//! Which browser Conch drives, and the one seam every backend sits behind (BE-1).
//!
//! [`Backend`] names the choice, as `browser.json` keeps it: its own module so that both
//! the home (whose backup manifest depends on it, DATA-11) and the store (which reads and
//! writes it) can use it, while the store alone depends on the home.
//!
//! [`Driver`] is the seam: connect (giving the [`Connection`] and the [`Facts`] the status
//! shows), what the backend can do ([`Abilities`]: the proxy guard or the CDP-only guard,
//! new browser contexts, downloads on this disk, discovering targets), and, through the
//! [`Held`] that connecting gave, letting go. Its implementations are [`local::Local`]
//! (Conch's own browser, launched), and in [`reached`] your own Chrome, Browserbase, Steel
//! and any DevTools address. The runtime asks the seam, never which backend it is.
//!
//! Deliberately absent: a backend's keys and addresses, which are sealed (DATA-6).

pub(crate) mod local;
pub(crate) mod reached;

use std::fmt;
use std::path::PathBuf;

use conch_cdp::Connection;
use conch_cdp::protocol::TargetId;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};

use crate::error::BrowserError;
use crate::guard::GuardMode;

/// What a backend can do (BE-1). The runtime asks these, not which backend runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Abilities {
    /// How its pages are contained: the guard's proxy (a browser Conch launches) or the
    /// CDP rules alone (a browser no proxy can be put in front of).
    pub guard: GuardMode,
    /// Whether Conch may make new browser contexts in it (errands; your own Chrome may
    /// not, ERR-6).
    pub new_contexts: bool,
    /// Whether its downloads land on this machine's disk; where not, they are refused
    /// with a sentence (DL-5).
    pub downloads_to_disk: bool,
    /// Whether Conch may auto-attach and discover its targets. In the person's own Chrome
    /// it may not: only the pages Conch made are attached, by name (BE-13, NET-9).
    pub discovers_targets: bool,
    /// Whether Conch's tabs carry the visible badge "Conch is using this tab" (BE-14).
    pub badge: bool,
}

impl Abilities {
    /// Conch's own local browser: the proxy, every ability.
    pub const LOCAL: Abilities = Abilities {
        guard: GuardMode::Proxy,
        new_contexts: true,
        downloads_to_disk: true,
        discovers_targets: true,
        badge: false,
    };
}

/// What connecting found, for the status.
#[derive(Debug, Clone)]
pub(crate) struct Facts {
    /// The browser's name ("Chromium") or what the person reads about a remote one.
    pub(crate) browser: String,
    /// Product and version ("HeadlessChrome/156.0.8078.73").
    pub(crate) version: String,
    /// The executable, for a browser Conch launched.
    pub(crate) executable: Option<PathBuf>,
    /// The user agent the browser reports.
    pub(crate) user_agent: String,
    /// Why this browser and not the first one found, in a sentence.
    pub(crate) why: Option<String>,
}

/// A browser connected through a [`Driver`].
#[derive(Debug)]
pub(crate) struct Connected {
    pub(crate) connection: Connection,
    pub(crate) facts: Facts,
    /// What to let go of when Conch is done with it.
    pub(crate) held: Box<dyn Held>,
}

/// Why a backend could not be connected.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectError {
    /// The chosen browser could not be reached; a phrase for "Conch couldn't reach … (…)".
    /// The runtime falls back to the local browser (BE-4).
    #[error("{0}")]
    Unreachable(String),
    /// The local browser could not be had.
    #[error(transparent)]
    Browser(#[from] BrowserError),
}

/// One backend (BE-1): local, your own Chrome, Browserbase, Steel or a DevTools address.
pub(crate) trait Driver: Send + Sync + fmt::Debug {
    /// Which backend it is, for the status.
    fn backend(&self) -> Backend;
    /// What the person reads about it: never a key, a path or a query.
    fn shown(&self) -> String;
    /// What it can do.
    fn abilities(&self) -> Abilities;
    /// What the status says while connecting waits on the person, if anything.
    fn waiting(&self) -> Option<&'static str> {
        None
    }
    /// Whether connecting borrows the main browser's own connection (errands in a context
    /// of the main remote browser, ERR-21): its targets are already auto-attached there,
    /// and letting go leaves the connection open.
    fn on_main(&self) -> bool {
        false
    }
    /// Connects: launches the local browser, or makes the provider's session and
    /// reaches its socket.
    fn connect(&self) -> BoxFuture<'_, Result<Connected, ConnectError>>;
    /// Cookies (CDP `Network.Cookie`s) the next session this driver makes starts with,
    /// where the provider takes them at creation (Steel's `sessionContext`): a renewed
    /// session keeps its sign-ins (BE-7). Others ignore them.
    fn carry_cookies(&self, _cookies: Vec<serde_json::Value>) {}
}

/// What connecting holds on to: the local process, or a remote browser (and its cloud
/// session) of which only Conch's tabs are Conch's.
pub(crate) trait Held: Send + fmt::Debug {
    /// The process's id, for a browser Conch launched.
    fn pid(&self) -> Option<u32> {
        None
    }
    /// Whether the browser's process ended (a remote one says so by its connection).
    fn gone(&mut self) -> bool {
        false
    }
    /// How long the provider lets the session live at most from its start, whatever Conch
    /// does (Steel's `timeout`, fixed at creation): the runtime renews it before then.
    fn lifetime(&self) -> Option<std::time::Duration> {
        None
    }
    /// Lets go: ends the local process, or closes only `ours` (Conch's tabs), disconnects
    /// and releases the cloud session (BE-5, BE-15).
    fn let_go(
        self: Box<Self>,
        connection: Connection,
        ours: Vec<TargetId>,
    ) -> BoxFuture<'static, ()>;
}

/// Closes Conch's own pages `ours` in a browser Conch did not launch, each bounded to
/// 5 s; one that is already gone changes nothing (BE-15).
pub(crate) async fn close_ours(connection: &Connection, ours: Vec<TargetId>) {
    let browser = connection.browser();
    for target_id in ours {
        let _ = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            browser.call(&conch_cdp::protocol::target::CloseTarget { target_id }),
        )
        .await;
    }
}

/// Which browser Conch drives (BE-1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// Conch's own local browser, launched headless on its own profile. The default.
    #[default]
    Local,
    /// The person's own Chrome, through its consented remote-debugging door.
    Chrome,
    /// A Browserbase cloud session.
    Browserbase,
    /// A Steel cloud session.
    Steel,
    /// Any browser at a DevTools address.
    Cdp,
}

impl Backend {
    /// The name used in `browser.json` and the settings API.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Local => "local",
            Backend::Chrome => "chrome",
            Backend::Browserbase => "browserbase",
            Backend::Steel => "steel",
            Backend::Cdp => "cdp",
        }
    }
}

impl std::str::FromStr for Backend {
    type Err = String;

    /// The backend a person names; anything else is refused with one sentence. Browser
    /// Use Cloud is not offered (BE-9), and says so.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Ok(match name {
            "local" => Backend::Local,
            "chrome" => Backend::Chrome,
            "browserbase" => Backend::Browserbase,
            "steel" => Backend::Steel,
            "cdp" => Backend::Cdp,
            "browser-use" | "browseruse" | "browser-use-cloud" => {
                return Err(
                    "Browser Use Cloud is not offered as a backend: use local, chrome, browserbase, steel or cdp"
                        .to_owned(),
                );
            }
            other => {
                return Err(format!(
                    "“{other}” is not a backend: use local, chrome, browserbase, steel or cdp"
                ));
            }
        })
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BE-9: there is no Browser Use Cloud backend; naming it is refused with a sentence
    /// that says so, in the settings file as on the command line.
    #[test]
    fn be_9_browser_use_is_refused_as_a_backend_with_a_sentence() {
        let e = "browser-use".parse::<Backend>().expect_err("not offered");
        assert!(e.contains("Browser Use Cloud is not offered"), "{e}");
        assert!(serde_json::from_str::<Backend>("\"browser-use\"").is_err());
        for name in ["local", "chrome", "browserbase", "steel", "cdp"] {
            assert_eq!(name.parse::<Backend>().map(Backend::as_str), Ok(name));
        }
        assert!(
            "opera"
                .parse::<Backend>()
                .is_err_and(|e| e.contains("is not a backend"))
        );
    }
}
