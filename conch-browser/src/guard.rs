//! The network guard: what a page Conch opens can reach, and how that is enforced.
//!
#![doc = include_str!("../docs/containment.md")]

pub(crate) mod claims;
mod http;
mod log;
mod proxy;
mod resolve;
pub(crate) mod rules;

use std::net::SocketAddr;
use std::sync::Arc;

use conch_policy::NetSettings;

pub(crate) use log::canonical as canonical_host;
pub use log::{BLOCKED_PAGE_SENTENCE, BLOCKED_SENTENCE, Blocked, GuardLog, Layer};
pub use resolve::{MapResolver, Resolve, Resolved, Resolving, SystemResolver};

/// Where addresses are judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GuardMode {
    /// A forward proxy on loopback that the browser must use for everything, judging the
    /// address actually connected to; the CDP layer adds the scheme and service-worker
    /// rules. For browsers Conch launches.
    #[default]
    Proxy,
    /// No proxy: the CDP layer pauses every request and judges its address, resolving a
    /// name through the guard's resolver first, and a guarded `WebSocket` asks it before
    /// any handshake. For browsers where no proxy can be imposed; the browser's own second
    /// look-up (rebinding) and its bare preconnects are residual risks there (see the
    /// containment model).
    CdpOnly,
}

/// The guard's settings (NET-5, AMB-3).
#[derive(Debug, Clone)]
pub struct GuardConfig {
    /// `allowLocalhost`, `allowHosts` and the gateway's own addresses and port.
    pub net: NetSettings,
    /// How the proxy resolves names: the system's in the product, a fixed table in tests.
    pub resolver: Arc<dyn Resolve>,
    /// Where addresses are judged.
    pub mode: GuardMode,
    /// Tests: make the browser refuse the CDP rules' `Fetch.enable`.
    #[cfg(test)]
    pub(crate) break_fetch: bool,
}

impl GuardConfig {
    /// The product's guard on `net`: the proxy, resolving through the system.
    pub fn new(net: NetSettings) -> Self {
        GuardConfig {
            net,
            resolver: Arc::new(SystemResolver::default()),
            mode: GuardMode::Proxy,
            #[cfg(test)]
            break_fetch: false,
        }
    }

    /// The same, resolving through `resolver` (tests).
    #[must_use]
    pub fn with_resolver(mut self, resolver: impl Resolve + 'static) -> Self {
        self.resolver = Arc::new(resolver);
        self
    }
}

/// A running guard proxy and the flags that make the browser use it.
#[derive(Debug)]
pub(crate) struct Running {
    proxy: Option<proxy::Proxy>,
}

impl Running {
    /// Starts what `config` needs, logging refusals to `log`.
    pub(crate) async fn start(config: &GuardConfig, log: Arc<GuardLog>) -> std::io::Result<Self> {
        let proxy = match config.mode {
            GuardMode::Proxy => Some(
                proxy::Proxy::start(proxy::Shared {
                    net: config.net.clone(),
                    resolver: Arc::clone(&config.resolver),
                    log,
                    limits: proxy::Limits::default(),
                })
                .await?,
            ),
            GuardMode::CdpOnly => None,
        };
        Ok(Running { proxy })
    }

    /// Where the proxy listens, if one runs.
    pub(crate) fn proxy_addr(&self) -> Option<SocketAddr> {
        self.proxy.as_ref().map(proxy::Proxy::addr)
    }

    /// The browser flags: everything through the proxy, loopback included, and no UDP
    /// around it (NET-13).
    pub(crate) fn browser_flags(&self) -> Vec<String> {
        let mut flags = vec![
            "--force-webrtc-ip-handling-policy=disable_non_proxied_udp".to_owned(),
            "--webrtc-ip-handling-policy=disable_non_proxied_udp".to_owned(),
            "--disable-quic".to_owned(),
        ];
        if let Some(addr) = self.proxy_addr() {
            flags.push(format!("--proxy-server=http://{addr}"));
            flags.push("--proxy-bypass-list=<-loopback>".to_owned());
        }
        flags
    }
}

/// The CDP rules for `config` (or, with no guard configured, the scheme and service-worker
/// rules alone).
pub(crate) fn rules_for(config: Option<&GuardConfig>, log: Arc<GuardLog>) -> rules::Rules {
    rules::Rules {
        check_urls: config
            .filter(|c| c.mode == GuardMode::CdpOnly)
            .map(|c| Arc::new(c.net.clone())),
        resolver: config
            .filter(|c| c.mode == GuardMode::CdpOnly)
            .map(|c| Arc::clone(&c.resolver)),
        names: Arc::default(),
        log,
        blank: Arc::default(),
        #[cfg(test)]
        break_fetch: config.is_some_and(|c| c.break_fetch),
    }
}
