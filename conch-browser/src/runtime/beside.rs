//! Where errands run beside a browser Conch did not launch (ERR-6, ERR-21): in a new
//! context of that same browser when it gives one, over the main browser's own
//! connection (a cloud session is one browser: a second session would be another one);
//! otherwise in Conch's own local browser, which Health says once.
//!
//! [`Beside`] is the errands' browser's driver for a DevTools address, Browserbase or
//! Steel: connecting reaches the main browser, asks whether it makes a context
//! (`Target.createBrowserContext`, disposed at once) and borrows its connection.
//! [`Borrowed`] lets go of only the errands' pages and contexts, never the connection,
//! which stays the main browser's. The main browser's target watcher leaves the targets of
//! the errands' contexts to the errands' watcher, which rules them as the main one rules
//! its own: the CDP-only guard (ERR-22).
//!
//! Deliberately absent: your own Chrome, whose contexts Conch never makes and from which
//! nothing is copied (ERR-6): there errands run in Conch's own local browser.

use std::sync::atomic::Ordering;
use std::time::Duration;

use conch_cdp::protocol::target::CreateBrowserContext;
use futures_util::future::BoxFuture;

use super::*;
use crate::backend::{Backend, ConnectError, Connected, Facts};

/// What Health says while tasks run in Conch's own browser beside the person's own
/// Chrome (ERR-6).
pub const ERRANDS_BESIDE_OWN_CHROME: &str = "Tasks run in Conch's own browser on this computer, signed in nowhere: nothing is copied out of your own Chrome.";

/// What Health says while tasks run in Conch's own browser beside a remote one that
/// gives no separate contexts (ERR-21): `shown` names it.
pub fn errands_run_here(why: &str) -> String {
    format!("Tasks run in Conch's own browser on this computer: {why}.")
}

/// The errands' driver beside a remote browser that may give contexts (ERR-21).
#[derive(Debug)]
pub(super) struct Beside {
    /// The main browser, whose connection the errands borrow.
    main: Weak<Inner>,
    /// What the main backend is, and what the person reads about it.
    backend: Backend,
    shown: String,
    /// The errands' contexts in it.
    borrowed: BorrowedContexts,
}

impl Driver for Beside {
    fn backend(&self) -> Backend {
        self.backend
    }
    fn shown(&self) -> String {
        self.shown.clone()
    }
    fn abilities(&self) -> Abilities {
        // The main remote browser's: no proxy can stand in front of it (ERR-22).
        Abilities::REMOTE
    }
    fn on_main(&self) -> bool {
        true
    }
    fn connect(&self) -> BoxFuture<'_, Result<Connected, ConnectError>> {
        Box::pin(self.borrow())
    }
}

impl Beside {
    /// Reaches the main browser and borrows its connection when it makes contexts; else
    /// says why in a phrase, and the errands run in Conch's own local browser.
    async fn borrow(&self) -> Result<Connected, ConnectError> {
        let Some(main) = self.main.upgrade() else {
            return Err(ConnectError::Unreachable(format!(
                "{} is no longer in use",
                self.shown
            )));
        };
        let main = Browser { inner: main };
        main.ensure_running().await?;
        if lock(&main.inner.backend.stand_in).is_some() {
            return Err(ConnectError::Unreachable(format!(
                "{} can't be reached",
                self.shown
            )));
        }
        let abilities = main.abilities();
        let connection = {
            let state = main.inner.state.lock().await;
            state.running.as_ref().map(|r| r.connection.clone())
        };
        let Some(connection) = connection else {
            return Err(ConnectError::Browser(BrowserError::NotRunning));
        };
        if !abilities.new_contexts || !makes_contexts(&connection).await {
            return Err(ConnectError::Unreachable(format!(
                "{} offers no separate contexts",
                self.shown
            )));
        }
        let status = lock(&main.inner.backend.status).clone();
        Ok(Connected {
            connection,
            facts: Facts {
                browser: status.browser.unwrap_or_else(|| self.shown.clone()),
                version: status.version.unwrap_or_default(),
                executable: None,
                user_agent: status.user_agent.unwrap_or_default(),
                why: None,
            },
            held: Box::new(Borrowed {
                borrowed: Arc::clone(&self.borrowed),
            }),
        })
    }
}

/// Whether the browser behind `connection` makes a new context: one is made and disposed
/// at once. Some clouds keep one context per session and refuse.
async fn makes_contexts(connection: &Connection) -> bool {
    let browser = connection.browser();
    let made = browser
        .call(&CreateBrowserContext {
            dispose_on_detach: Some(true),
            ..CreateBrowserContext::default()
        })
        .await;
    match made {
        Ok(made) => {
            let _ = browser
                .call(&DisposeBrowserContext {
                    browser_context_id: made.browser_context_id,
                })
                .await;
            true
        }
        Err(e) => {
            tracing::info!(target: "conch_browser", error = %e, "the remote browser makes no context for errands");
            false
        }
    }
}

/// The errands' share of the main remote browser: letting go closes their pages and their
/// contexts, and leaves the connection, the main browser's, open.
#[derive(Debug)]
struct Borrowed {
    borrowed: BorrowedContexts,
}

impl Held for Borrowed {
    fn let_go(
        self: Box<Self>,
        connection: Connection,
        ours: Vec<TargetId>,
    ) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            crate::backend::close_ours(&connection, ours).await;
            let browser = connection.browser();
            let contexts: Vec<BrowserContextId> = lock(&self.borrowed).drain().collect();
            for browser_context_id in contexts {
                // Already disposed ones answer with an error, which changes nothing.
                let _ = tokio::time::timeout(
                    Duration::from_secs(5),
                    browser.call(&DisposeBrowserContext { browser_context_id }),
                )
                .await;
            }
        })
    }
}

impl Browser {
    /// Points the errands' browser `errands` at where errands run beside this (main)
    /// browser's chosen backend (ERR-6, ERR-21): a remote browser that may give contexts
    /// is borrowed; your own Chrome, or a backend that gives none, leaves them in Conch's
    /// own local browser, and Health says why.
    pub(super) fn aim_errands(&self, errands: &Browser) {
        let chosen = Arc::clone(&lock(&self.inner.backend.chosen));
        let abilities = chosen.abilities();
        let (driver, why): (Arc<dyn Driver>, Option<String>) = match chosen.backend() {
            Backend::Local => (Arc::clone(&errands.inner.backend.local), None),
            _ if abilities.persons_browser => (
                Arc::clone(&errands.inner.backend.local),
                Some(ERRANDS_BESIDE_OWN_CHROME.to_owned()),
            ),
            backend if abilities.new_contexts => (
                Arc::new(Beside {
                    main: Arc::downgrade(&self.inner),
                    backend,
                    shown: chosen.shown(),
                    borrowed: Arc::clone(&self.inner.errand.borrowed),
                }),
                None,
            ),
            _ => (
                Arc::clone(&errands.inner.backend.local),
                Some(errands_run_here(&format!(
                    "{} offers no separate contexts",
                    chosen.shown()
                ))),
            ),
        };
        *lock(&errands.inner.backend.chosen) = driver;
        *lock(&errands.inner.backend.stand_in) = None;
        *lock(&errands.inner.errand.runs_here) = why;
    }

    /// Whether this (errands') browser has a context open in the main browser, which is
    /// then not let go for idleness (ERR-21).
    pub(super) fn errands_in_main(&self) -> bool {
        if !self.inner.errand.on_main.load(Ordering::SeqCst) {
            return false;
        }
        // Busy (an errand's browser being reached): counted as in use, never waited for.
        self.inner
            .state
            .try_lock()
            .map_or(true, |state| !state.contexts.is_empty())
    }
}
