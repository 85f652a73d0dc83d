//! Navigating a tab and waiting for it: the load event, then one retry with a lighter
//! wait (LAUNCH-10, AMB-22), and the guard's note when the page's own document was refused
//! (NET-10).
//!
//! Deliberately absent: reading and acting on the page (`crate::page`).

use std::time::Duration;

use conch_cdp::protocol::page::{DomContentEventFired, LoadEventFired, Navigate};
use conch_cdp::protocol::runtime::Evaluate;
use conch_cdp::{Session, SessionId};
use futures_util::StreamExt;

use super::state::{session_of, touch};
use super::*;
use crate::error::BrowserError;
use crate::guard::{self, BLOCKED_PAGE_SENTENCE};

impl Conversation {
    /// Navigates `tab` and waits for its load event; on a timeout, navigates once more and
    /// waits only for DOMContentLoaded (LAUNCH-10, AMB-22).
    pub(super) async fn navigate_tab(&self, tab: &str, url: &str) -> Result<(), BrowserError> {
        let config = &self.browser.inner.config;
        let session = {
            let mut state = self.browser.inner.state.lock().await;
            touch(&mut state, &self.id, tab);
            session_of(&state, &self.id, tab)
                .ok_or_else(|| BrowserError::NoSuchTab(tab.to_owned()))?
        };
        let cursor = self.browser.inner.backend.guard_log.cursor();
        let first = navigate(&session, url, Wait::Load, config.navigation_timeout).await;
        if self.main_document_blocked(&session, url, cursor).await {
            // The tab shows the guard's page (or the browser's error page for https): say
            // so in words, without the address (NET-10).
            return Ok(());
        }
        if first? {
            return Ok(());
        }
        tracing::info!(target: "conch_browser", "navigation timed out; retrying once with a lighter wait");
        // The first attempt is still loading; stop it, or the retry is aborted by it.
        let _ = session
            .call_raw("Page.stopLoading", serde_json::json!({}))
            .await;
        if navigate(&session, url, Wait::DomContent, config.retry_timeout).await? {
            return Ok(());
        }
        Err(BrowserError::NavigationTimeout {
            seconds: (config.navigation_timeout + config.retry_timeout).as_secs(),
        })
    }

    /// Whether the guard refused the page's own document since `cursor`: the address asked
    /// for, or the one a redirect led to (where the tab now is). If so, the conversation
    /// gets the NET-10 note.
    async fn main_document_blocked(&self, session: &Session, url: &str, cursor: u64) -> bool {
        let inner = &self.browser.inner;
        inner
            .backend
            .guard_log
            .claims_settled(cursor, CLAIMS_WAIT)
            .await;
        let tab: std::collections::HashSet<SessionId> = session.id().cloned().into_iter().collect();
        let since = whose(inner, inner.backend.guard_log.since(cursor), &tab);
        if since.is_empty() {
            return false;
        }
        let mut addresses = vec![url.to_owned()];
        if let Ok(answer) = session.call(&Evaluate::value("location.href")).await
            && let Some(serde_json::Value::String(now)) = answer.result.value
        {
            addresses.push(now);
        }
        let blocked = addresses.iter().any(|address| {
            let Ok(url) = url::Url::parse(address) else {
                return false;
            };
            let Some(host) = url.host_str() else {
                return false;
            };
            let host = guard::canonical_host(host);
            let port = url.port_or_known_default().unwrap_or(0);
            since
                .iter()
                .any(|b| guard::canonical_host(&b.host) == host && b.port == port)
        });
        if blocked {
            self.browser
                .with_state(|state| {
                    let notes = state.notes.entry(self.id.clone()).or_default();
                    if !notes.iter().any(|n| n == BLOCKED_PAGE_SENTENCE) {
                        notes.push(BLOCKED_PAGE_SENTENCE.to_owned());
                    }
                })
                .await;
        }
        blocked
    }
}

/// What a navigation waits for.
#[derive(Debug, Clone, Copy)]
enum Wait {
    /// The load event (everything, images included).
    Load,
    /// DOMContentLoaded (the document, not its subresources).
    DomContent,
}

/// Navigates `session`'s page to `url` and waits for `wait`, all within `within`. Gives
/// whether it arrived in time; a navigation that fails at once is an error.
async fn navigate(
    session: &Session,
    url: &str,
    wait: Wait,
    within: Duration,
) -> Result<bool, BrowserError> {
    let deadline = tokio::time::Instant::now() + within;
    // Subscribed before navigating, so the event cannot slip past.
    let mut loaded = session.subscribe::<LoadEventFired>();
    let mut ready = session.subscribe::<DomContentEventFired>();
    // Page.navigate answers only once the response starts: an address that never answers
    // holds it, so it shares the deadline.
    let started = match tokio::time::timeout_at(
        deadline,
        session.call_with_timeout(&Navigate::new(url), within),
    )
    .await
    {
        Ok(Ok(started)) => started,
        Ok(Err(e)) if matches!(e.kind(), conch_cdp::ErrorKind::Timeout { .. }) => return Ok(false),
        Ok(Err(e)) => return Err(e.into()),
        Err(_) => return Ok(false),
    };
    if let Some(reason) = started.error_text.filter(|t| !t.is_empty()) {
        return Err(BrowserError::Navigation(reason));
    }
    if started.loader_id.is_none() {
        return Ok(true); // a same-document navigation: nothing more will load
    }
    let arrived = match wait {
        Wait::Load => matches!(
            tokio::time::timeout_at(deadline, loaded.next()).await,
            Ok(Some(_))
        ),
        Wait::DomContent => matches!(
            tokio::time::timeout_at(deadline, ready.next()).await,
            Ok(Some(_))
        ),
    };
    Ok(arrived)
}

/// How long a page may stay on its first empty document before it counts as loaded as it
/// is: a popup a script writes into, or a tab restored on about:blank, never leaves it.
const BLANK_GRACE: Duration = Duration::from_secs(1);

/// Waits until `session`'s page has left its first empty document (or stayed on it for
/// [`BLANK_GRACE`]) and finished loading, at most `within`; gives whether it did. (A new
/// target starts on an empty document that is already "complete", so the load event
/// alone cannot tell.) Asked in Conch's isolated world, where the page cannot redefine
/// `readyState`.
pub(super) async fn wait_until_loaded(session: &Session, within: Duration) -> bool {
    const LOADED: &str = "[document.readyState, location.href]";
    const POLL: Duration = Duration::from_millis(25);
    let started = tokio::time::Instant::now();
    let deadline = started + within;
    loop {
        if let Ok(serde_json::Value::Array(state)) =
            crate::page::evaluate_in_world(session, LOADED).await
            && state.first().and_then(serde_json::Value::as_str) == Some("complete")
            && (state.get(1).and_then(serde_json::Value::as_str) != Some("about:blank")
                || started.elapsed() >= BLANK_GRACE)
        {
            return true;
        }
        if tokio::time::Instant::now() + POLL > deadline {
            return false;
        }
        tokio::time::sleep(POLL).await;
    }
}
