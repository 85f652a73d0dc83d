//! The site of a host: its registrable domain by the Public Suffix List, private section
//! included (PERM-4). Permissions are asked per site, and errands borrow sign-ins per site
//! (ERR-3), through this one function.
//!
//! Normalisation happens before the list is consulted, because `psl` is case-sensitive
//! and keeps trailing dots: the host goes through the WHATWG host parser (`url::Host`),
//! which percent-decodes, maps IDNs to their `xn--` form, lowercases and reads every IPv4
//! spelling a browser accepts; then one trailing dot is dropped. A leading dot (cookie
//! domains, `.shop.example`) is dropped too.
//!
//! - An IP literal is its own site (`127.0.0.1`, `[::1]`).
//! - A single-label host is its own site (`localhost`, `intranet`).
//! - A host that is itself a public suffix (`github.io`, `co.uk`) is its own site, so it
//!   never merges with the sites under it: `alice.github.io` is not `github.io`.

use std::fmt;
use std::net::IpAddr;

use serde::Serialize;
use url::{Host, Url};

use crate::error::{Error, ErrorKind};

/// A registrable domain (`booking.com`, `alice.github.io`), or an IP literal or
/// single-label host standing for itself. Always lowercase ASCII, without trailing dot.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Site(String);

impl Site {
    /// The site of a host name or IP literal, as a URL or a cookie gives it.
    ///
    /// `WWW.Booking.COM.` → `booking.com`; `.shop.example` → `shop.example`;
    /// `bücher.example` → `xn--bcher-kva.example`; `[::1]` → `[::1]`.
    pub fn of_host(host: &str) -> Result<Site, Error> {
        match parse_host(host)? {
            HostName::Ip(ip) => Ok(Site(ip_literal(ip))),
            HostName::Name(name) => Ok(Site(registrable(&name))),
        }
    }

    /// Where a saved password belongs for a page at `url` (SEC-2, issue 16): its site,
    /// except that a local app or an IP address is the exact `host:port`, since another
    /// port is another app. Only `http` and `https` pages have one. A look-alike host is
    /// another site, so it never gets another site's password.
    ///
    /// `https://login.example.com/` → `example.com`; `http://127.0.0.1:8080/` →
    /// `127.0.0.1:8080`; `http://localhost:3000/` → `localhost:3000`.
    pub fn for_password(url: &Url) -> Option<String> {
        if !matches!(url.scheme(), "http" | "https") {
            return None;
        }
        let site = Site::of_url(url).ok()?;
        let local = match url.host()? {
            Host::Ipv4(_) | Host::Ipv6(_) => true,
            Host::Domain(name) => name == "localhost" || name.ends_with(".localhost"),
        };
        if !local {
            return Some(site.0);
        }
        let host = match url.host()? {
            Host::Domain(name) => name.to_owned(),
            _ => site.0,
        };
        Some(match url.port_or_known_default() {
            Some(port) => format!("{host}:{port}"),
            None => host,
        })
    }

    /// The site of a URL's host. Addresses without a host (`about:blank`, `data:`) have
    /// no site.
    pub fn of_url(url: &Url) -> Result<Site, Error> {
        match url.host() {
            Some(Host::Ipv4(ip)) => Ok(Site(ip.to_string())),
            Some(Host::Ipv6(ip)) => Ok(Site(ip_literal(IpAddr::V6(ip)))),
            Some(Host::Domain(domain)) => Site::of_host(domain),
            None => Err(Error::new(ErrorKind::NoHost, url.as_str())),
        }
    }

    /// The site as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<Site> for String {
    fn from(site: Site) -> String {
        site.0
    }
}

/// A host read the way a browser reads it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum HostName {
    /// An IP literal in any spelling, decoded.
    Ip(IpAddr),
    /// A domain: lowercase ASCII (`xn--` for IDNs), no trailing dot, no leading dot.
    Name(String),
}

/// Reads a host as a browser does. Accepts `[v6]` and bare v6, decimal/hex/octal/short
/// IPv4, percent-encoding and IDNs; drops one leading and one trailing dot.
pub(crate) fn parse_host(input: &str) -> Result<HostName, Error> {
    let trimmed = input.trim();
    let trimmed = trimmed.strip_prefix('.').unwrap_or(trimmed);
    if trimmed.is_empty() {
        return Err(Error::new(ErrorKind::Host, input));
    }
    // A bare IPv6 literal (as some proxies and settings give it) gets its brackets.
    let bracketed;
    let candidate = if trimmed.contains(':') && !trimmed.starts_with('[') {
        bracketed = format!("[{trimmed}]");
        bracketed.as_str()
    } else {
        trimmed
    };
    match Host::parse(candidate) {
        Ok(Host::Ipv4(ip)) => Ok(HostName::Ip(IpAddr::V4(ip))),
        Ok(Host::Ipv6(ip)) => Ok(HostName::Ip(IpAddr::V6(ip))),
        Ok(Host::Domain(domain)) => {
            let name = domain.strip_suffix('.').unwrap_or(&domain);
            if name.is_empty()
                || name.starts_with('.')
                || name.ends_with('.')
                || name.contains("..")
            {
                return Err(Error::new(ErrorKind::Host, input));
            }
            // "127.0.0.1." ends in a number once the dot is gone: read it again.
            match Host::parse(name) {
                Ok(Host::Ipv4(ip)) => Ok(HostName::Ip(IpAddr::V4(ip))),
                Ok(_) => Ok(HostName::Name(name.to_owned())),
                Err(source) => Err(Error::with_source(ErrorKind::Host, input, source)),
            }
        }
        Err(source) => Err(Error::with_source(ErrorKind::Host, input, source)),
    }
}

/// How an IP literal is written as a site: IPv6 in brackets, as in a URL.
pub(crate) fn ip_literal(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

/// The registrable domain of a normalised name, or the name itself when it is a single
/// label or a public suffix.
fn registrable(name: &str) -> String {
    if !name.contains('.') {
        return name.to_owned();
    }
    match psl::domain_str(name) {
        Some(domain) => domain.to_owned(),
        None => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SEC-2, issue 16: a registrable domain covers its subdomains; loopback and IP
    /// addresses are exact host:port; a look-alike host is another site.
    #[test]
    fn sec_2_a_saved_password_belongs_to_its_site_or_its_exact_local_app() {
        let of = |address: &str| Site::for_password(&Url::parse(address).unwrap());
        assert_eq!(
            of("https://login.example.com/signin").as_deref(),
            Some("example.com")
        );
        assert_eq!(
            of("https://example.com.evil.test/").as_deref(),
            Some("evil.test")
        );
        assert_eq!(of("https://examp1e.com/").as_deref(), Some("examp1e.com"));
        assert_eq!(
            of("http://127.0.0.1:8080/login").as_deref(),
            Some("127.0.0.1:8080")
        );
        assert_ne!(
            of("http://127.0.0.1:9090/login").as_deref(),
            Some("127.0.0.1:8080"),
            "another port is another app"
        );
        assert_eq!(
            of("http://localhost:8080/").as_deref(),
            Some("localhost:8080")
        );
        assert_eq!(of("http://[::1]:5173/").as_deref(), Some("[::1]:5173"));
        assert_eq!(of("file:///etc/passwd"), None);
        assert_eq!(of("about:blank"), None);
    }

    #[test]
    fn perm_4_trailing_dot_and_case_collapse_to_one_site() {
        let a = Site::of_host("WWW.Example.COM.").unwrap();
        let b = Site::of_host("example.com").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.as_str(), "example.com");
    }

    #[test]
    fn perm_4_empty_and_double_dots_are_errors() {
        assert!(Site::of_host("").is_err());
        assert!(Site::of_host(".").is_err());
        assert!(Site::of_host("a..b").is_err());
    }
}
