//! Name resolution for the guard proxy, behind the [`Resolve`] seam (AMB-3).
//!
//! The proxy resolves every host itself (the browser leaves DNS to its proxy), judges the
//! addresses it got, and connects only to an address it judged. [`SystemResolver`] asks the
//! operating system (`getaddrinfo` through tokio, with a timeout); [`MapResolver`] answers
//! from a fixed table for tests, where a name can be *judged* as one address (a public
//! TEST-NET-3 address, say) while the socket goes to a loopback fixture server.
//!
//! Deliberately absent: caching, DNS over HTTPS, and any way for a page to choose the
//! resolver.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::time::Duration;

/// One answer for a host: the address the policy judges and the socket the proxy dials.
/// They are the same in the product; a test resolver may dial a loopback fixture instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved {
    /// The address conch-policy judges (`verdict_for_connection`).
    pub checked: IpAddr,
    /// Where the proxy connects when the verdict allows.
    pub dial: SocketAddr,
}

impl Resolved {
    /// An answer whose judged address is the one dialled, on `port`.
    pub fn direct(ip: IpAddr, port: u16) -> Self {
        Resolved {
            checked: ip,
            dial: SocketAddr::new(ip, port),
        }
    }
}

/// What a [`Resolve`] call gives back.
pub type Resolving<'a> = Pin<Box<dyn Future<Output = io::Result<Vec<Resolved>>> + Send + 'a>>;

/// Turns a host as the browser asked for it (a name, or an IP literal without brackets)
/// and a port into the addresses to judge and dial.
pub trait Resolve: Send + Sync + fmt::Debug {
    /// Resolves `host` for `port`. An empty answer or an error means "no such host".
    fn resolve<'a>(&'a self, host: &'a str, port: u16) -> Resolving<'a>;
}

/// The operating system's resolver (`tokio::net::lookup_host`), bounded by a timeout. IP
/// literals are answered without DNS.
#[derive(Debug, Clone, Copy)]
pub struct SystemResolver {
    /// How long one lookup may take.
    pub timeout: Duration,
}

impl Default for SystemResolver {
    fn default() -> Self {
        SystemResolver {
            timeout: Duration::from_secs(10),
        }
    }
}

impl Resolve for SystemResolver {
    fn resolve<'a>(&'a self, host: &'a str, port: u16) -> Resolving<'a> {
        Box::pin(async move {
            if let Ok(ip) = host.parse::<IpAddr>() {
                return Ok(vec![Resolved::direct(ip, port)]);
            }
            let found = tokio::time::timeout(self.timeout, tokio::net::lookup_host((host, port)))
                .await
                .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "name lookup timed out"))??;
            Ok(found
                .map(|addr| Resolved::direct(addr.ip(), port))
                .collect())
        })
    }
}

/// A fixed table of names, for tests (AMB-3). Each name is judged as its listed address and
/// dialled at its listed socket, whatever port was asked. IP literals are judged as
/// themselves; a loopback literal is dialled as asked, any other literal is dialled at the
/// `trap` socket when one is set (so a broken guard would hit a loopback listener that
/// counts, never an address off this machine) and is unreachable otherwise. `localhost`
/// and `*.localhost` are loopback; other unknown names do not resolve.
#[derive(Debug, Clone, Default)]
pub struct MapResolver {
    names: HashMap<String, Resolved>,
    trap: Option<SocketAddr>,
}

impl MapResolver {
    /// An empty table.
    pub fn new() -> Self {
        MapResolver::default()
    }

    /// Maps `name` (case-insensitive, trailing dot ignored) to be judged as `checked` and
    /// dialled at `dial`.
    #[must_use]
    pub fn with(mut self, name: &str, checked: IpAddr, dial: SocketAddr) -> Self {
        self.names
            .insert(normalise(name), Resolved { checked, dial });
        self
    }

    /// Dials every non-loopback IP literal at `trap` instead: a loopback listener that
    /// records any breach. (Names are dialled where [`MapResolver::with`] says.)
    #[must_use]
    pub fn with_trap(mut self, trap: SocketAddr) -> Self {
        self.trap = Some(trap);
        self
    }
}

fn normalise(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

impl Resolve for MapResolver {
    fn resolve<'a>(&'a self, host: &'a str, port: u16) -> Resolving<'a> {
        Box::pin(async move {
            if let Ok(ip) = host.parse::<IpAddr>() {
                let dial = match self.trap {
                    Some(trap) if !ip.is_loopback() => trap,
                    _ => SocketAddr::new(ip, port),
                };
                if !ip.is_loopback() && self.trap.is_none() {
                    return Err(io::Error::new(
                        io::ErrorKind::AddrNotAvailable,
                        "test resolver: no trap for a non-loopback address",
                    ));
                }
                return Ok(vec![Resolved { checked: ip, dial }]);
            }
            let name = normalise(host);
            match self.names.get(&name) {
                Some(found) => Ok(vec![*found]),
                // As the system (and Chrome) answer them.
                None if name == "localhost" || name.ends_with(".localhost") => {
                    Ok(vec![Resolved::direct(Ipv4Addr::LOCALHOST.into(), port)])
                }
                None => Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    "test resolver: unknown name",
                )),
            }
        })
    }
}
