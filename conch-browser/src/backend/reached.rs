//! The backends Conch reaches instead of launching (BE-1): your own Chrome (BE-10), a
//! Browserbase session (BE-6), a Steel session (BE-7) and any DevTools address (BE-8).
//! Each connects through [`crate::remote::open`], checks that a browser answers, and lets
//! go by closing only Conch's tabs, disconnecting and releasing the cloud session (BE-5,
//! BE-15). None can have the guard's proxy in front of it, so all get the CDP-only guard;
//! none downloads to this disk (DL-5).
//!
//! Deliberately absent: the providers' API shapes and the `DevToolsActivePort` reading,
//! which are [`crate::remote`]'s and [`crate::own_chrome`]'s.

use std::sync::Arc;

use conch_cdp::Connection;
use conch_cdp::protocol::TargetId;
use conch_cdp::protocol::browser::GetVersion;
use futures_util::future::BoxFuture;

use super::{Abilities, Backend, ConnectError, Connected, Driver, Facts, Held};
use crate::discover::Probe;
use crate::remote::{self, CloudSession, Remote};

/// The driver for `remote`.
pub(crate) fn driver_for(remote: &Remote, probe: Arc<dyn Probe + Send + Sync>) -> Arc<dyn Driver> {
    let reach = Reach {
        remote: remote.clone(),
        probe,
        carry: std::sync::Mutex::default(),
    };
    match remote {
        Remote::Chrome(_) => Arc::new(OwnChromeDriver(reach)),
        Remote::Browserbase { .. } => Arc::new(ReachedDriver(Backend::Browserbase, reach)),
        Remote::Steel { .. } => Arc::new(ReachedDriver(Backend::Steel, reach)),
        Remote::Cdp(_) => Arc::new(ReachedDriver(Backend::Cdp, reach)),
        Remote::Pool { .. } => Arc::new(ReachedDriver(Backend::Pool, reach)),
    }
}

/// What reaching a remote browser needs.
#[derive(Debug)]
struct Reach {
    remote: Remote,
    probe: Arc<dyn Probe + Send + Sync>,
    /// Cookies the next session starts with (a renewed Steel session, BE-7).
    carry: std::sync::Mutex<Vec<serde_json::Value>>,
}

impl Reach {
    /// The cookies to carry into the next session, taken once.
    fn take_carried(&self) -> Vec<serde_json::Value> {
        std::mem::take(
            &mut self
                .carry
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Opens the remote browser and asks its version: an answer that is not a browser's
    /// lets the session go again.
    async fn connect(&self) -> Result<Connected, ConnectError> {
        let remote::Opened {
            connection,
            session,
        } = remote::open(&self.remote, self.probe.as_ref(), &self.take_carried())
            .await
            .map_err(|e| ConnectError::Unreachable(e.to_string()))?;
        match connection.browser().call(&GetVersion {}).await {
            Ok(version) => Ok(Connected {
                connection,
                facts: Facts {
                    browser: self.remote.shown(),
                    version: version.product,
                    executable: None,
                    user_agent: version.user_agent,
                    why: None,
                },
                held: Box::new(NotOurs { cloud: session }),
            }),
            Err(e) => {
                connection.close();
                if let Some(session) = &session {
                    remote::release(session).await;
                }
                Err(ConnectError::Unreachable(format!(
                    "it did not answer as a browser ({e})"
                )))
            }
        }
    }
}

/// The person's own Chrome (BE-10 … BE-15): one connection, made once, that waits for the
/// person's Allow; only Conch's pages are attached, and they carry the badge; no new
/// contexts (errands run locally, ERR-6).
#[derive(Debug)]
struct OwnChromeDriver(Reach);

impl Driver for OwnChromeDriver {
    fn backend(&self) -> Backend {
        Backend::Chrome
    }
    fn shown(&self) -> String {
        self.0.remote.shown()
    }
    fn abilities(&self) -> Abilities {
        Backend::Chrome.abilities()
    }
    fn waiting(&self) -> Option<&'static str> {
        // Chrome asks the person; the one connection waits for the answer (BE-10).
        Some(crate::own_chrome::WAITING_SENTENCE)
    }
    fn connect(&self) -> BoxFuture<'_, Result<Connected, ConnectError>> {
        Box::pin(self.0.connect())
    }
}

/// A Browserbase session (BE-6), a Steel session, cloud or self-hosted (BE-7), or any
/// browser at a DevTools address (BE-8): they differ only in how they are reached, which
/// is [`crate::remote`]'s, and in the session released on letting go (BE-5).
#[derive(Debug)]
struct ReachedDriver(Backend, Reach);

impl Driver for ReachedDriver {
    fn backend(&self) -> Backend {
        self.0
    }
    fn shown(&self) -> String {
        self.1.remote.shown()
    }
    fn abilities(&self) -> Abilities {
        self.0.abilities()
    }
    fn connect(&self) -> BoxFuture<'_, Result<Connected, ConnectError>> {
        Box::pin(self.1.connect())
    }
    fn carry_cookies(&self, cookies: Vec<serde_json::Value>) {
        *self
            .1
            .carry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = cookies;
    }
}

/// A browser Conch did not launch: not Conch's to close, only its own tabs go; then the
/// provider's session, if any, is released (BE-5).
#[derive(Debug)]
struct NotOurs {
    cloud: Option<CloudSession>,
}

impl Held for NotOurs {
    fn lifetime(&self) -> Option<std::time::Duration> {
        self.cloud.as_ref().and_then(CloudSession::lifetime)
    }
    fn let_go(
        self: Box<Self>,
        connection: Connection,
        ours: Vec<TargetId>,
    ) -> BoxFuture<'static, ()> {
        Box::pin(async move {
            crate::backend::close_ours(&connection, ours).await;
            connection.close();
            if let Some(session) = self.cloud {
                remote::release(&session).await;
            }
        })
    }
}
