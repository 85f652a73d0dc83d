//! The network verdict: may a Conch page reach this address? (NET-1, NET-3, NET-5, NET-6,
//! NET-7, AMB-14, and `allowHosts` from "Decisions that differ".)
//!
//! Three callers, three entry points, one rule:
//! - the guard proxy knows the host asked for, the port and the IP it is about to connect
//!   to: [`verdict_for_connection`];
//! - a layer that knows a URL and the addresses its host resolved to:
//!   [`verdict_for_resolved_url`];
//! - a CDP layer that knows only a URL (own Chrome, cloud, DevTools address):
//!   [`verdict_for_url`], which decides IP literals and the names that need no DNS
//!   (`localhost`, metadata names, private-only suffixes) and lets other names pass,
//!   because it cannot know where they resolve.
//!
//! The rule, in order:
//! 1. The gateway's own port on a loopback, unspecified or listed gateway address, or on
//!    a loopback name, is refused under every setting ([`RefusalCode::GatewayOrigin`]).
//! 2. Metadata names and private-only names are refused by name.
//! 3. Every address is classified ([`classify`]): IPv4-mapped, IPv4-compatible, NAT64
//!    and 6to4 addresses are judged by the IPv4 address inside them.
//! 4. Loopback is allowed only with `allowLocalhost` for a host that is itself loopback (a
//!    loopback IP literal in any spelling, `localhost` or `*.localhost`; a public name
//!    that resolves to loopback is rebinding and stays refused), or by an `allowHosts`
//!    entry whose host and port are the ones asked for, when the address connected to is
//!    loopback.
//! 5. Every other non-public class is refused; public addresses are allowed.
//!
//! Schemes: the agent may open only http, https and `about:blank`; a page may also go to
//! `about:srcdoc` ([`navigation_verdict`]).
//!
//! Deliberately absent: no DNS here. Callers resolve, then ask.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use ipnet::{Ipv4Net, Ipv6Net};
use serde::{Serialize, Serializer};
use url::Url;

use crate::error::{Error, ErrorKind};
use crate::site::{HostName, ip_literal, parse_host};
use crate::verdict::{Refusal, RefusalCode, Verdict};

/// What kind of address an IP is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AddressClass {
    /// A public unicast address.
    Public,
    /// Documentation ranges (TEST-NET-1/2/3, 2001:db8::/32, 3fff::/20). Not routed on the
    /// internet, and the test fixtures pretend their names resolve to TEST-NET-3 (AMB-3),
    /// so they are treated as public.
    Documentation,
    /// 198.18.0.0/15. Allowed: fake-IP DNS proxies (Clash, sing-box, Surge) hand out
    /// these addresses for every public name, and no LAN service lives there.
    Benchmarking,
    /// 127.0.0.0/8, ::1.
    Loopback,
    /// 10/8, 172.16/12, 192.168/16, and fec0::/10 (deprecated site-local).
    Private,
    /// fc00::/7.
    UniqueLocal,
    /// 169.254/16, fe80::/10.
    LinkLocal,
    /// 100.64/10: carrier-grade NAT and Tailscale.
    SharedCgnat,
    /// Cloud metadata: 169.254.169.254, 169.254.170.2, 100.100.100.200, 168.63.129.16,
    /// fd00:ec2::254.
    Metadata,
    /// 0.0.0.0/8 and ::. On Linux and macOS 0.0.0.0 reaches this computer.
    Unspecified,
    /// 224/4, ff00::/8.
    Multicast,
    /// 255.255.255.255.
    Broadcast,
    /// Everything else that is not public: 240/4, 192.0.0/24, 192.88.99/24, 100::/64,
    /// 2001::/23 (Teredo included), and IPv6 outside 2000::/3.
    Reserved,
}

impl AddressClass {
    /// Whether a Conch page may reach this class without any setting.
    pub fn is_public(self) -> bool {
        matches!(
            self,
            Self::Public | Self::Documentation | Self::Benchmarking
        )
    }

    /// The stable name, e.g. `link-local`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Public => "public",
            Self::Documentation => "documentation",
            Self::Benchmarking => "benchmarking",
            Self::Loopback => "loopback",
            Self::Private => "private",
            Self::UniqueLocal => "unique-local",
            Self::LinkLocal => "link-local",
            Self::SharedCgnat => "shared-cgnat",
            Self::Metadata => "metadata",
            Self::Unspecified => "unspecified",
            Self::Multicast => "multicast",
            Self::Broadcast => "broadcast",
            Self::Reserved => "reserved",
        }
    }

    fn refusal_code(self) -> Option<RefusalCode> {
        match self {
            Self::Public | Self::Documentation | Self::Benchmarking => None,
            Self::Loopback => Some(RefusalCode::LocalApp),
            Self::Private | Self::UniqueLocal | Self::SharedCgnat => {
                Some(RefusalCode::PrivateNetwork)
            }
            Self::LinkLocal => Some(RefusalCode::LinkLocal),
            Self::Metadata => Some(RefusalCode::CloudMetadata),
            Self::Unspecified | Self::Multicast | Self::Broadcast | Self::Reserved => {
                Some(RefusalCode::NonPublicAddress)
            }
        }
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

const fn v4(a: u8, b: u8, c: u8, d: u8, len: u8) -> Ipv4Net {
    Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), len)
}

#[expect(
    clippy::too_many_arguments,
    reason = "the eight groups of an IPv6 address"
)]
const fn v6(a: u16, b: u16, c: u16, d: u16, e: u16, f: u16, g: u16, h: u16, len: u8) -> Ipv6Net {
    Ipv6Net::new_assert(Ipv6Addr::new(a, b, c, d, e, f, g, h), len)
}

/// IPv4 special-purpose ranges, most specific first; the first match wins.
const V4_TABLE: &[(Ipv4Net, AddressClass)] = &[
    (v4(169, 254, 169, 254, 32), AddressClass::Metadata),
    (v4(169, 254, 170, 2, 32), AddressClass::Metadata),
    (v4(100, 100, 100, 200, 32), AddressClass::Metadata),
    (v4(168, 63, 129, 16, 32), AddressClass::Metadata),
    (v4(0, 0, 0, 0, 8), AddressClass::Unspecified),
    (v4(10, 0, 0, 0, 8), AddressClass::Private),
    (v4(100, 64, 0, 0, 10), AddressClass::SharedCgnat),
    (v4(127, 0, 0, 0, 8), AddressClass::Loopback),
    (v4(169, 254, 0, 0, 16), AddressClass::LinkLocal),
    (v4(172, 16, 0, 0, 12), AddressClass::Private),
    (v4(192, 0, 0, 0, 24), AddressClass::Reserved),
    (v4(192, 0, 2, 0, 24), AddressClass::Documentation),
    (v4(192, 88, 99, 0, 24), AddressClass::Reserved),
    (v4(192, 168, 0, 0, 16), AddressClass::Private),
    (v4(198, 18, 0, 0, 15), AddressClass::Benchmarking),
    (v4(198, 51, 100, 0, 24), AddressClass::Documentation),
    (v4(203, 0, 113, 0, 24), AddressClass::Documentation),
    (v4(224, 0, 0, 0, 4), AddressClass::Multicast),
    (v4(255, 255, 255, 255, 32), AddressClass::Broadcast),
    (v4(240, 0, 0, 0, 4), AddressClass::Reserved),
];

/// IPv6 ranges judged as themselves, most specific first. Ranges that carry an IPv4
/// address are decoded before this table is read (see [`embedded_ipv4`]).
const V6_TABLE: &[(Ipv6Net, AddressClass)] = &[
    (v6(0, 0, 0, 0, 0, 0, 0, 0, 128), AddressClass::Unspecified),
    (v6(0, 0, 0, 0, 0, 0, 0, 1, 128), AddressClass::Loopback),
    (
        v6(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254, 128),
        AddressClass::Metadata,
    ),
    (v6(0x0100, 0, 0, 0, 0, 0, 0, 0, 64), AddressClass::Reserved),
    (
        v6(0x2001, 0x0db8, 0, 0, 0, 0, 0, 0, 32),
        AddressClass::Documentation,
    ),
    (
        v6(0x3fff, 0, 0, 0, 0, 0, 0, 0, 20),
        AddressClass::Documentation,
    ),
    (v6(0x2001, 0, 0, 0, 0, 0, 0, 0, 23), AddressClass::Reserved),
    (
        v6(0xfc00, 0, 0, 0, 0, 0, 0, 0, 7),
        AddressClass::UniqueLocal,
    ),
    (v6(0xfe80, 0, 0, 0, 0, 0, 0, 0, 10), AddressClass::LinkLocal),
    (v6(0xfec0, 0, 0, 0, 0, 0, 0, 0, 10), AddressClass::Private),
    (v6(0xff00, 0, 0, 0, 0, 0, 0, 0, 8), AddressClass::Multicast),
];

const GLOBAL_UNICAST: Ipv6Net = v6(0x2000, 0, 0, 0, 0, 0, 0, 0, 3);
const MAPPED: Ipv6Net = v6(0, 0, 0, 0, 0, 0xffff, 0, 0, 96);
const COMPATIBLE: Ipv6Net = v6(0, 0, 0, 0, 0, 0, 0, 0, 96);
const NAT64: Ipv6Net = v6(0x0064, 0xff9b, 0, 0, 0, 0, 0, 0, 96);
const NAT64_LOCAL: Ipv6Net = v6(0x0064, 0xff9b, 0x0001, 0, 0, 0, 0, 0, 48);
const SIX_TO_FOUR: Ipv6Net = v6(0x2002, 0, 0, 0, 0, 0, 0, 0, 16);

/// The special-purpose table as text, for review and snapshots: each range with its
/// class, or with how it is judged.
pub fn special_ranges() -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = V4_TABLE
        .iter()
        .map(|(net, class)| (net.to_string(), class.as_str().to_owned()))
        .collect();
    for net in [MAPPED, COMPATIBLE, NAT64, NAT64_LOCAL, SIX_TO_FOUR] {
        let range = if net == COMPATIBLE {
            format!("{net} but :: and ::1")
        } else {
            net.to_string()
        };
        rows.push((range, "the class of the IPv4 address inside".to_owned()));
    }
    rows.extend(
        V6_TABLE
            .iter()
            .map(|(net, class)| (net.to_string(), class.as_str().to_owned())),
    );
    rows.push((
        format!("outside {GLOBAL_UNICAST}"),
        AddressClass::Reserved.as_str().to_owned(),
    ));
    rows.push((
        "everything else".to_owned(),
        AddressClass::Public.as_str().to_owned(),
    ));
    rows
}

/// The IPv4 address carried inside an IPv6 one: IPv4-mapped (`::ffff:a.b.c.d`),
/// IPv4-compatible (`::a.b.c.d`, but not `::` or `::1`), NAT64 (`64:ff9b::/96`,
/// `64:ff9b:1::/48`) or 6to4 (`2002:AABB:CCDD::/48`).
pub fn embedded_ipv4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let bits = u128::from(ip);
    let last32 = Ipv4Addr::from((bits & 0xffff_ffff) as u32);
    if MAPPED.contains(&ip) || NAT64.contains(&ip) || NAT64_LOCAL.contains(&ip) {
        return Some(last32);
    }
    if COMPATIBLE.contains(&ip) {
        return (bits > 1).then_some(last32);
    }
    if SIX_TO_FOUR.contains(&ip) {
        return Some(Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32));
    }
    None
}

/// The class of an address. IPv6 addresses that carry an IPv4 address take its class.
pub fn classify(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(inner) = embedded_ipv4(v6) {
                return classify_v4(inner);
            }
            if let Some((_, class)) = V6_TABLE.iter().find(|(net, _)| net.contains(&v6)) {
                return *class;
            }
            if GLOBAL_UNICAST.contains(&v6) {
                AddressClass::Public
            } else {
                AddressClass::Reserved
            }
        }
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    V4_TABLE
        .iter()
        .find(|(net, _)| net.contains(&ip))
        .map_or(AddressClass::Public, |(_, class)| *class)
}

/// The address as it is compared: an IPv4-mapped IPv6 address becomes IPv4.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(v6),
        },
        IpAddr::V4(_) => ip,
    }
}

/// What a host name says about where it leads, before any DNS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NameClass {
    /// A name DNS must answer for.
    Ordinary,
    /// `localhost` and `*.localhost`: loopback without DNS, as Chrome maps them itself.
    Loopback,
    /// A cloud metadata name: `metadata.google.internal`, `metadata.goog`, `metadata`,
    /// `instance-data`, `instance-data.ec2.internal`.
    Metadata,
    /// A single-label name or a suffix that exists only on private networks: `.local`,
    /// `.internal`, `.home.arpa`, `.lan`, `.localdomain`, `.intranet`, `.corp`, `.home`.
    PrivateOnly,
}

const METADATA_NAMES: &[&str] = &[
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
];

const PRIVATE_SUFFIXES: &[&str] = &[
    "local",
    "internal",
    "home.arpa",
    "lan",
    "localdomain",
    "intranet",
    "corp",
    "home",
];

/// The class of a normalised host name (lowercase, no trailing dot).
pub fn classify_name(name: &str) -> NameClass {
    let has_suffix = |suffix: &str| {
        name == suffix
            || name
                .strip_suffix(suffix)
                .is_some_and(|rest| rest.ends_with('.'))
    };
    if has_suffix("localhost") {
        NameClass::Loopback
    } else if METADATA_NAMES.contains(&name) {
        NameClass::Metadata
    } else if !name.contains('.') || PRIVATE_SUFFIXES.iter().any(|suffix| has_suffix(suffix)) {
        NameClass::PrivateOnly
    } else {
        NameClass::Ordinary
    }
}

/// The gateway's own listening place: never reachable from a Conch page (NET-1).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Gateway {
    /// The port it listens on.
    pub port: u16,
    /// The addresses it listens on beyond loopback: the machine's LAN and public
    /// addresses when it binds every interface. Loopback and unspecified addresses are
    /// always counted, on the gateway's port.
    pub addresses: Vec<IpAddr>,
}

impl Gateway {
    /// A gateway on loopback only.
    pub fn on_port(port: u16) -> Self {
        Self {
            port,
            addresses: Vec::new(),
        }
    }

    fn is_gateway(&self, ip: IpAddr, port: u16) -> bool {
        if port != self.port {
            return false;
        }
        let ip = canonical(ip);
        matches!(
            classify(ip),
            AddressClass::Loopback | AddressClass::Unspecified
        ) || self.addresses.iter().any(|listed| canonical(*listed) == ip)
    }
}

/// The network settings the verdict depends on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NetSettings {
    /// "Let it open local apps": all of loopback but the gateway (NET-5), for hosts that
    /// are loopback themselves (literals and `localhost`), never a name that resolves there.
    pub allow_localhost: bool,
    /// Explicit local origins the person allows (`--allow-host HOST:PORT`).
    pub allow_hosts: Vec<AllowedHost>,
    /// The gateway's own address and port.
    pub gateway: Gateway,
}

impl NetSettings {
    /// Settings with everything local refused, for a gateway on `port`.
    pub fn for_gateway_port(port: u16) -> Self {
        Self {
            gateway: Gateway::on_port(port),
            ..Self::default()
        }
    }
}

/// An `allowHosts` entry: a host and port the person allows, which must lead to loopback.
///
/// It covers requests addressed to exactly that host and port, and only while the address
/// actually connected to is loopback: a public name that rebinds to 127.0.0.1 is not
/// covered, and neither is the gateway's port, ever.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AllowedHost {
    host: HostName,
    port: u16,
}

impl AllowedHost {
    /// Reads `host:port` (`localhost:3000`, `127.0.0.1:8080`, `[::1]:5173`,
    /// `myapp.test:8443`). An IP literal must be loopback; metadata and private-only names
    /// are refused.
    pub fn parse(entry: &str) -> Result<Self, Error> {
        let bad = || Error::new(ErrorKind::AllowedHost, entry);
        let (host, port) = entry.trim().rsplit_once(':').ok_or_else(bad)?;
        let port: u16 = port.parse().map_err(|_| bad())?;
        if port == 0 || host.is_empty() || (host.contains(':') && !host.starts_with('[')) {
            return Err(bad());
        }
        let host = parse_host(host).map_err(|_| bad())?;
        let loopback = match &host {
            HostName::Ip(ip) => classify(*ip) == AddressClass::Loopback,
            HostName::Name(name) => {
                matches!(
                    classify_name(name),
                    NameClass::Ordinary | NameClass::Loopback
                )
            }
        };
        if !loopback {
            return Err(Error::new(ErrorKind::AllowedHostNotLoopback, entry));
        }
        let host = match host {
            HostName::Ip(ip) => HostName::Ip(canonical(ip)),
            name => name,
        };
        Ok(Self { host, port })
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    fn covers(&self, host: &HostName, port: u16) -> bool {
        let host = match host {
            HostName::Ip(ip) => HostName::Ip(canonical(*ip)),
            name => name.clone(),
        };
        self.port == port && self.host == host
    }
}

impl fmt::Display for AllowedHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            HostName::Ip(ip) => write!(f, "{}:{}", ip_literal(*ip), self.port),
            HostName::Name(name) => write!(f, "{name}:{}", self.port),
        }
    }
}

impl FromStr for AllowedHost {
    type Err = Error;

    fn from_str(entry: &str) -> Result<Self, Error> {
        Self::parse(entry)
    }
}

impl Serialize for AllowedHost {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The verdict for one connection, as the guard proxy sees it: the host the browser asked
/// for (a name or any IP spelling, as in `CONNECT host:port`), the port, and the address
/// it is about to connect to. A host no browser would accept is refused.
pub fn verdict_for_connection(
    host: &str,
    port: u16,
    ip: IpAddr,
    settings: &NetSettings,
) -> Verdict {
    match parse_host(host) {
        Ok(host) => judge(&host, port, &[ip], settings),
        Err(_) => Verdict::refuse(RefusalCode::UnreadableAddress),
    }
}

/// The verdict for a URL whose host resolved to `resolved`. Every address must pass: a
/// name that answers with one public and one private address is refused. An empty answer
/// for a name is refused, except for `localhost` names, which need no DNS. Schemes without
/// a network host follow [`verdict_for_url`].
pub fn verdict_for_resolved_url(url: &Url, resolved: &[IpAddr], settings: &NetSettings) -> Verdict {
    let (host, port) = match network_target(url) {
        Target::Network(host, port) => (host, port),
        Target::NoNetwork => return Verdict::Allow,
        Target::Refused(refusal) => return Verdict::Refuse(refusal),
    };
    if resolved.is_empty() && matches!(host, HostName::Name(_)) {
        // localhost needs no DNS; any other name that resolved to nothing is refused.
        let by_name = judge(&host, port, &[], settings);
        let loopback_name =
            matches!(&host, HostName::Name(name) if classify_name(name) == NameClass::Loopback);
        if !by_name.is_allowed() || loopback_name {
            return by_name;
        }
        return Verdict::refuse(RefusalCode::NoAddress);
    }
    judge(&host, port, resolved, settings)
}

/// The verdict for a URL alone, for a layer that cannot resolve names (CDP `Fetch` on the
/// person's own Chrome, cloud and DevTools-address browsers). IP literals in any spelling,
/// loopback names, metadata names and private-only names are decided; other names are
/// allowed here and must be judged again where the connection is made, if anywhere.
///
/// Schemes: http, https, ws and wss are judged as network requests; `data:`, `blob:` and
/// `about:` load nothing from the network and are allowed; every other scheme is refused.
pub fn verdict_for_url(url: &Url, settings: &NetSettings) -> Verdict {
    match network_target(url) {
        Target::Network(host, port) => judge(&host, port, &[], settings),
        Target::NoNetwork => Verdict::Allow,
        Target::Refused(refusal) => Verdict::Refuse(refusal),
    }
}

enum Target {
    Network(HostName, u16),
    NoNetwork,
    Refused(Refusal),
}

fn network_target(url: &Url) -> Target {
    match url.scheme() {
        "http" | "https" | "ws" | "wss" => {}
        "data" | "blob" | "about" => return Target::NoNetwork,
        scheme => {
            let scheme = format!("{scheme}:");
            return Target::Refused(Refusal::about(RefusalCode::UnsupportedScheme, scheme));
        }
    }
    let host = match url.host() {
        Some(url::Host::Ipv4(ip)) => HostName::Ip(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => HostName::Ip(IpAddr::V6(ip)),
        Some(url::Host::Domain(domain)) => match parse_host(domain) {
            Ok(host) => host,
            Err(_) => return Target::Refused(Refusal::new(RefusalCode::UnreadableAddress)),
        },
        None => return Target::Refused(Refusal::new(RefusalCode::UnreadableAddress)),
    };
    match url.port_or_known_default() {
        Some(port) => Target::Network(host, port),
        None => Target::Refused(Refusal::new(RefusalCode::UnreadableAddress)),
    }
}

/// The one rule behind every entry point. `addresses` are the IPs connected to or
/// resolved; an IP literal host is judged as its own address too.
fn judge(host: &HostName, port: u16, addresses: &[IpAddr], settings: &NetSettings) -> Verdict {
    let mut all: Vec<IpAddr> = addresses.iter().copied().map(canonical).collect();
    let name_class = match host {
        HostName::Ip(ip) => {
            all.push(canonical(*ip));
            None
        }
        HostName::Name(name) => Some(classify_name(name)),
    };

    // 1. The gateway, under every setting.
    let loopback_name = name_class == Some(NameClass::Loopback);
    if (loopback_name && port == settings.gateway.port)
        || all.iter().any(|ip| settings.gateway.is_gateway(*ip, port))
    {
        return Verdict::refuse(RefusalCode::GatewayOrigin);
    }

    // 2. Names that need no DNS to judge.
    match name_class {
        Some(NameClass::Metadata) => return Verdict::refuse(RefusalCode::CloudMetadata),
        Some(NameClass::PrivateOnly) => return Verdict::refuse(RefusalCode::PrivateNetwork),
        _ => {}
    }

    // 3 to 5. Every address, and a loopback name as loopback. allowLocalhost covers only
    // hosts that say loopback themselves (a loopback IP literal, `localhost`): a public
    // name that resolves to loopback is DNS rebinding, and is refused (NET-5, AMB-1).
    let says_loopback = match host {
        HostName::Ip(ip) => classify(*ip) == AddressClass::Loopback,
        HostName::Name(_) => loopback_name,
    };
    let loopback_allowed = (settings.allow_localhost && says_loopback)
        || settings
            .allow_hosts
            .iter()
            .any(|entry| entry.covers(host, port));
    let mut classes: Vec<AddressClass> = all.iter().map(|ip| classify(*ip)).collect();
    if loopback_name {
        classes.push(AddressClass::Loopback);
    }
    for class in classes {
        if class == AddressClass::Loopback && loopback_allowed {
            continue;
        }
        if let Some(code) = class.refusal_code() {
            return Verdict::Refuse(Refusal::new(code));
        }
    }
    Verdict::Allow
}

/// Who started a top-level navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum NavigationBy {
    /// browser_open, browser_tabs open, a search address (NET-6).
    Agent,
    /// A link, a form, a script or a redirect on a Conch page (NET-7, AMB-14).
    Page,
}

/// Whether a top-level navigation's scheme is allowed: http, https and `about:blank` for
/// the agent; a page may also reach `about:srcdoc`. `file:`, `chrome:`, `javascript:`,
/// `data:`, `blob:` and every other scheme are refused. The address itself is judged by
/// [`verdict_for_url`] and the guard.
pub fn navigation_verdict(url: &Url, by: NavigationBy) -> Verdict {
    let allowed = match url.scheme() {
        "http" | "https" => true,
        "about" => match (url.path(), by) {
            ("blank", _) => url.query().is_none(),
            ("srcdoc", NavigationBy::Page) => url.query().is_none(),
            _ => false,
        },
        _ => false,
    };
    if allowed {
        return Verdict::Allow;
    }
    let scheme = format!("{}:", url.scheme());
    Verdict::Refuse(match by {
        NavigationBy::Agent => Refusal::about(RefusalCode::UnsupportedScheme, scheme),
        NavigationBy::Page => Refusal::about(RefusalCode::PageSchemeCancelled, scheme),
    })
}

/// Reads an address the agent gave and judges its scheme, for browser_open and
/// browser_tabs open. An unreadable address is an error.
pub fn agent_navigation_verdict(address: &str) -> Result<Verdict, Error> {
    let url = Url::parse(address.trim())
        .map_err(|source| Error::with_source(ErrorKind::Url, address, source))?;
    Ok(navigation_verdict(&url, NavigationBy::Agent))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn net_3_embedded_ipv4_is_decoded() {
        let mapped: Ipv6Addr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(embedded_ipv4(mapped), Some(Ipv4Addr::new(10, 0, 0, 1)));
        let six_to_four: Ipv6Addr = "2002:7f00:1::".parse().unwrap();
        assert_eq!(
            embedded_ipv4(six_to_four),
            Some(Ipv4Addr::new(127, 0, 0, 1))
        );
        assert_eq!(embedded_ipv4(Ipv6Addr::LOCALHOST), None);
        assert_eq!(embedded_ipv4(Ipv6Addr::UNSPECIFIED), None);
    }

    #[test]
    fn amb_14_names_that_need_no_dns() {
        assert_eq!(classify_name("localhost"), NameClass::Loopback);
        assert_eq!(classify_name("app.localhost"), NameClass::Loopback);
        assert_eq!(classify_name("notlocalhost"), NameClass::PrivateOnly);
        assert_eq!(classify_name("evillocalhost.com"), NameClass::Ordinary);
        assert_eq!(
            classify_name("metadata.google.internal"),
            NameClass::Metadata
        );
        assert_eq!(classify_name("printer.local"), NameClass::PrivateOnly);
        assert_eq!(classify_name("shop.test"), NameClass::Ordinary);
    }
}
