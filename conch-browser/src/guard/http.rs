//! Just enough HTTP/1.1 for a forward proxy: reading a bounded request head, telling
//! `CONNECT host:port` from an absolute-form `GET http://host/path`, and writing the
//! origin-form request the server gets.
//!
//! Every input is untrusted (a page can make the browser send odd requests, and any local
//! program can connect to the proxy): parsing never panics, and anything unexpected is an
//! error answered with 400.
//!
//! Deliberately absent: chunked decoding, trailers, keep-alive and pipelining (each
//! connection carries one request and is then closed), `https://` in absolute form (the
//! browser sends `CONNECT` for TLS), and TLS interception of any kind.

/// The most a request head may take, request line and headers together.
pub(crate) const MAX_HEAD: usize = 16 * 1024;

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// `CONNECT host:port`: a tunnel (https, wss, ws).
    Connect { host: String, port: u16 },
    /// `METHOD http://host[:port]/path`: a plain-HTTP request to forward.
    Http {
        host: String,
        port: u16,
        /// Origin-form: the path and query, `/` when absent.
        path: String,
    },
}

impl Target {
    pub(crate) fn host(&self) -> &str {
        match self {
            Target::Connect { host, .. } | Target::Http { host, .. } => host,
        }
    }

    pub(crate) fn port(&self) -> u16 {
        match self {
            Target::Connect { port, .. } | Target::Http { port, .. } => *port,
        }
    }
}

/// A parsed request head.
#[derive(Debug, Clone)]
pub(crate) struct Head {
    pub(crate) method: String,
    pub(crate) target: Target,
    /// Header lines as sent (name, value), in order.
    pub(crate) headers: Vec<(String, String)>,
}

impl Head {
    /// The first value of header `name` (case-insensitive).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The head the origin server gets: origin-form request line, the client's headers
    /// without hop-by-hop and proxy ones, and `Connection: close`.
    pub(crate) fn origin_form(&self) -> Vec<u8> {
        let Target::Http { path, .. } = &self.target else {
            return Vec::new();
        };
        let mut out = format!("{} {} HTTP/1.1\r\n", self.method, path);
        for (name, value) in &self.headers {
            let hop = [
                "connection",
                "proxy-connection",
                "proxy-authorization",
                "keep-alive",
                "te",
                "upgrade",
            ]
            .iter()
            .any(|h| name.eq_ignore_ascii_case(h));
            if !hop {
                out.push_str(name);
                out.push_str(": ");
                out.push_str(value);
                out.push_str("\r\n");
            }
        }
        out.push_str("Connection: close\r\n\r\n");
        out.into_bytes()
    }
}

/// Why a head was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bad {
    /// Not valid HTTP, or a form this proxy does not speak.
    Malformed,
    /// Longer than [`MAX_HEAD`].
    TooLarge,
}

/// Where the head ends in `buf`: the index just past the blank line.
pub(crate) fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// Parses a complete head (up to and including the blank line).
pub(crate) fn parse(head: &[u8]) -> Result<Head, Bad> {
    if head.len() > MAX_HEAD {
        return Err(Bad::TooLarge);
    }
    let text = std::str::from_utf8(head).map_err(|_| Bad::Malformed)?;
    let mut lines = text.split("\r\n");
    let request_line = lines.next().ok_or(Bad::Malformed)?;
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Bad::Malformed);
    };
    if method.is_empty()
        || !method.bytes().all(|b| b.is_ascii_uppercase())
        || !matches!(version, "HTTP/1.1" | "HTTP/1.0")
    {
        return Err(Bad::Malformed);
    }
    let mut headers = Vec::new();
    for line in lines {
        if line.is_empty() {
            continue;
        }
        let (name, value) = line.split_once(':').ok_or(Bad::Malformed)?;
        if name.is_empty()
            || !name.bytes().all(|b| b.is_ascii_graphic())
            || value.bytes().any(|b| b.is_ascii_control() && b != b'\t')
        {
            return Err(Bad::Malformed);
        }
        headers.push((name.to_owned(), value.trim().to_owned()));
    }
    let target = if method == "CONNECT" {
        let (host, port) = authority(target, None)?;
        Target::Connect { host, port }
    } else {
        let rest = strip_prefix_ignore_case(target, "http://").ok_or(Bad::Malformed)?;
        let split = rest.find(['/', '?']).unwrap_or(rest.len());
        let (auth, path) = rest.split_at(split);
        let (host, port) = authority(auth, Some(80))?;
        let path = match path {
            "" => "/".to_owned(),
            p if p.starts_with('?') => format!("/{p}"),
            p => p.to_owned(),
        };
        if path.bytes().any(|b| !b.is_ascii_graphic()) {
            return Err(Bad::Malformed);
        }
        Target::Http { host, port, path }
    };
    Ok(Head {
        method: method.to_owned(),
        target,
        headers,
    })
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// `host:port`, `[v6]:port`, or (with a default port) `host`. The host comes back
/// lowercase, without brackets. User info (`user@host`) is refused.
fn authority(text: &str, default_port: Option<u16>) -> Result<(String, u16), Bad> {
    if text.is_empty() || text.contains('@') {
        return Err(Bad::Malformed);
    }
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or(Bad::Malformed)?;
        match after {
            "" => (host, None),
            p => (host, Some(p.strip_prefix(':').ok_or(Bad::Malformed)?)),
        }
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) if !host.contains(':') => (host, Some(port)),
            Some(_) => return Err(Bad::Malformed),
            None => (text, None),
        }
    };
    let port = match port {
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or(Bad::Malformed)?,
        None => default_port.ok_or(Bad::Malformed)?,
    };
    let valid = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':');
    if host.is_empty() || !host.bytes().all(valid) {
        return Err(Bad::Malformed);
    }
    Ok((host.to_ascii_lowercase(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_and_absolute_forms() {
        let h = parse(b"CONNECT Evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n").unwrap();
        assert_eq!(
            h.target,
            Target::Connect {
                host: "evil.test".into(),
                port: 443
            }
        );
        let h = parse(b"GET http://[::1]:8080?x=1 HTTP/1.1\r\nHost: [::1]:8080\r\nProxy-Connection: keep-alive\r\n\r\n").unwrap();
        assert_eq!(
            h.target,
            Target::Http {
                host: "::1".into(),
                port: 8080,
                path: "/?x=1".into()
            }
        );
        let out = String::from_utf8(h.origin_form()).unwrap();
        assert_eq!(
            out,
            "GET /?x=1 HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: close\r\n\r\n"
        );
        let h = parse(b"POST http://a.test/p HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(h.target.port(), 80);
    }

    #[test]
    fn garbage_is_refused_without_panicking() {
        for bad in [
            &b""[..],
            b"\r\n\r\n",
            b"GET / HTTP/1.1\r\n\r\n",
            b"GET https://a.test/ HTTP/1.1\r\n\r\n",
            b"CONNECT a.test HTTP/1.1\r\n\r\n",
            b"CONNECT a.test:0 HTTP/1.1\r\n\r\n",
            b"CONNECT a.test:99999 HTTP/1.1\r\n\r\n",
            b"GET http://user@a.test/ HTTP/1.1\r\n\r\n",
            b"GET http://a b/ HTTP/1.1\r\n\r\n",
            b"get http://a.test/ HTTP/1.1\r\n\r\n",
            b"GET http://a.test/ HTTP/2\r\n\r\n",
            b"GET http://[::1/ HTTP/1.1\r\n\r\n",
            b"GET http://::1/ HTTP/1.1\r\n\r\n",
            b"GET http://a.test/ HTTP/1.1\r\nNoColon\r\n\r\n",
            b"GET http://a.test/ HTTP/1.1\r\nX: a\x00b\r\n\r\n",
            b"\xff\xfe GET",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(parse(&vec![b'a'; MAX_HEAD + 1]).unwrap_err(), Bad::TooLarge);
    }
}
