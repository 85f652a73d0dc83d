//! The guard's log of refusals: what was blocked, when, and why (NET-10).
//!
//! Every refusal by the proxy or by a CDP rule is one [`Blocked`] entry with a sequence
//! number, so a caller can ask for what was blocked since its last look
//! ([`GuardLog::since`]). Entries carry the host as the page asked for it and the port;
//! they are for the embedder's logs and for tests. What the agent reads is
//! [`BLOCKED_SENTENCE`], which names no address and no port.
//!
//! Each entry says whose request it was ([`Blocked::by`]): the DevTools session of the
//! target whose CDP rule refused it, or, for the proxy (which cannot know which tab a
//! connection is for), the sessions whose own request to that host and port came back
//! refused ([`GuardLog::claim`], from the page's `Network` events). A conversation is told
//! only of entries one of its own tabs' sessions made (issue 12); an entry nobody claimed
//! is told to nobody.
//!
//! Deliberately absent: the addresses a name resolved to (they may be the gateway's).

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use conch_cdp::protocol::SessionId;

/// What the agent is told about a blocked request (NET-10). It never names the address.
pub const BLOCKED_SENTENCE: &str = "Conch blocked a request to a private address.";

/// What the agent is told when the page it opened was itself blocked (NET-10).
pub const BLOCKED_PAGE_SENTENCE: &str = "Conch blocked a request to a private address, so this page did not open. Carry on with a public address.";

/// How many entries the log keeps; older ones are dropped.
const KEEP: usize = 1000;

/// How old a proxy refusal may be when a page's refused request claims it: the proxy logs
/// it just before it answers, so the page hears of it well within this.
const CLAIM_WINDOW: Duration = Duration::from_secs(10);

/// Which layer refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layer {
    /// The forward proxy, on the address it was about to connect to.
    Proxy,
    /// A CDP rule: a scheme, or an address judged without resolving it.
    Cdp,
}

/// One refused request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    /// Its place in the log: strictly increasing, starting at 1.
    pub seq: u64,
    /// When.
    pub at: SystemTime,
    /// The host as the page asked for it (a name or an IP literal), or the scheme (`file:`)
    /// for a refused navigation.
    pub host: String,
    /// The port asked for (0 for a scheme refusal).
    pub port: u16,
    /// The reason: conch-policy's refusal code (`"local-app"`, `"private-network"`,
    /// `"gateway-origin"`, `"page-scheme-cancelled"`…) or `"service-worker"`.
    pub code: &'static str,
    /// The layer that refused.
    pub layer: Layer,
    /// Whose request it was: the sessions (pages, frames, workers) that made it. Empty
    /// for a proxy refusal no page has claimed (yet).
    pub by: Vec<SessionId>,
}

/// The log. Shared by the proxy and the CDP rules.
#[derive(Debug, Default)]
pub struct GuardLog {
    inner: Mutex<Inner>,
    /// Woken at every claim.
    claimed: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    entries: VecDeque<Blocked>,
}

impl GuardLog {
    /// Records a refusal nobody has claimed yet (the proxy's) and gives its sequence
    /// number.
    pub fn record(&self, host: &str, port: u16, code: &'static str, layer: Layer) -> u64 {
        self.push(host, port, code, layer, Vec::new())
    }

    /// Records a refusal of a request made by `session` (a CDP rule knows whose it is).
    pub fn record_for(
        &self,
        session: Option<&SessionId>,
        host: &str,
        port: u16,
        code: &'static str,
    ) -> u64 {
        self.push(
            host,
            port,
            code,
            Layer::Cdp,
            session.cloned().into_iter().collect(),
        )
    }

    fn push(
        &self,
        host: &str,
        port: u16,
        code: &'static str,
        layer: Layer,
        by: Vec<SessionId>,
    ) -> u64 {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.next += 1;
        let seq = inner.next;
        if inner.entries.len() >= KEEP {
            inner.entries.pop_front();
        }
        inner.entries.push_back(Blocked {
            seq,
            at: SystemTime::now(),
            host: host.to_owned(),
            port,
            code,
            layer,
            by,
        });
        tracing::info!(target: "conch_browser::guard", seq, host, port, code, ?layer, "request blocked");
        seq
    }

    /// The cursor for "from now on": the last sequence number given.
    pub fn cursor(&self) -> u64 {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .next
    }

    /// Entries recorded after `cursor` (see [`GuardLog::cursor`]), oldest first.
    pub fn since(&self, cursor: u64) -> Vec<Blocked> {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entries
            .iter()
            .filter(|b| b.seq > cursor)
            .cloned()
            .collect()
    }

    /// `session` saw its own request to `host`:`port` come back refused by the proxy: the
    /// newest such proxy refusal of the last moments that nobody claimed becomes its
    /// (else the newest one at all, when the browser shared one refused connection between
    /// pages). Gives whether one was found.
    pub fn claim(&self, session: &SessionId, host: &str, port: u16) -> bool {
        let host = canonical(host);
        let now = SystemTime::now();
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let matching = |b: &Blocked| {
            b.layer == Layer::Proxy
                && b.port == port
                && canonical(&b.host) == host
                && now.duration_since(b.at).unwrap_or(Duration::ZERO) <= CLAIM_WINDOW
        };
        let unclaimed = inner
            .entries
            .iter()
            .rposition(|b| b.by.is_empty() && matching(b));
        let Some(at) = unclaimed.or_else(|| inner.entries.iter().rposition(matching)) else {
            return false;
        };
        let Some(entry) = inner.entries.get_mut(at) else {
            return false;
        };
        if !entry.by.contains(session) {
            entry.by.push(session.clone());
        }
        drop(inner);
        self.claimed.notify_waiters();
        true
    }

    /// Waits, at most `within`, until every proxy refusal after `cursor` was claimed by
    /// some page: the page hears of its refusal a moment after the proxy logs it. (A
    /// refusal no page claims, such as the browser's own favicon request, waits it out.)
    pub async fn claims_settled(&self, cursor: u64, within: Duration) {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let notified = self.claimed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let waiting = self
                .inner
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entries
                .iter()
                .any(|b| b.seq > cursor && b.layer == Layer::Proxy && b.by.is_empty());
            if !waiting || tokio::time::timeout_at(deadline, notified).await.is_err() {
                return;
            }
        }
    }
}

/// A host as both the proxy and the page's events may spell it: no IPv6 brackets, no
/// trailing dot, lower case.
pub(crate) fn canonical(host: &str) -> String {
    host.trim_matches(['[', ']'])
        .trim_end_matches('.')
        .to_ascii_lowercase()
}
