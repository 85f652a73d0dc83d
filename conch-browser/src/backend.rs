//! Which browser Conch drives, and the one seam every backend sits behind (BE-1).
//!
//! [`Backend`] names the choice, as `browser.json` keeps it, and [`Abilities`] what each
//! can do: both live in [`crate::choice`], below the home and the errors, so that the home
//! (whose backup manifest depends on it, DATA-11), the store and this seam all use them
//! and no two of these modules import each other.
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

pub(crate) use crate::choice::{Abilities, Backend};
use crate::error::BrowserError;

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
    /// Sentences connecting left for conversations' next results, by conversation (a
    /// pool's placement: a wait for a free browser, a move off one that died). Taken once.
    fn notes(&self) -> Vec<(String, String)> {
        Vec::new()
    }
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
    /// Whether, when this browser goes away, connecting again tells the conversations on
    /// it where their tabs were reopened (a pool's placement, issue 32): then ERR-19's
    /// "Reopened a task's browser as it was." is not said besides, so one reopening is
    /// told once.
    fn tells_reopening(&self) -> bool {
        false
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
