//! The guard's log of refusals: what was blocked, when, and why (NET-10).
//!
//! Every refusal by the proxy or by a CDP rule is one [`Blocked`] entry with a sequence
//! number, so a caller can ask for what was blocked since its last look
//! ([`GuardLog::since`]). Entries carry the host as the page asked for it and the port;
//! they are for the embedder's logs and for tests. What the agent reads is
//! [`BLOCKED_SENTENCE`], which names no address and no port.
//!
//! Deliberately absent: the addresses a name resolved to (they may be the gateway's), and
//! anything about the page that asked (the proxy cannot know which tab a request is for).

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

/// What the agent is told about a blocked request (NET-10). It never names the address.
pub const BLOCKED_SENTENCE: &str = "Conch blocked a request to a private address.";

/// What the agent is told when the page it opened was itself blocked (NET-10).
pub const BLOCKED_PAGE_SENTENCE: &str = "Conch blocked a request to a private address, so this page did not open. Carry on with a public address.";

/// How many entries the log keeps; older ones are dropped.
const KEEP: usize = 1000;

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
}

/// The log. Shared by the proxy and the CDP rules.
#[derive(Debug, Default)]
pub struct GuardLog {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    next: u64,
    entries: VecDeque<Blocked>,
}

impl GuardLog {
    /// Records a refusal and gives its sequence number.
    pub fn record(&self, host: &str, port: u16, code: &'static str, layer: Layer) -> u64 {
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
}
