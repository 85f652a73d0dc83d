//! Just enough HTTP/1.1 for a forward proxy: reading a bounded request head, telling
//! `CONNECT host:port` from an absolute-form `GET http://host/path`, writing the
//! origin-form request the server gets, finding where the request's body ends
//! ([`BodyEnd`]: `Content-Length` or chunked), and rewriting the server's response head so
//! the client connection closes after it ([`response_head`]).
//!
//! Every input is untrusted (a page can make the browser send odd requests, any local
//! program can connect to the proxy, and any server can answer anything): parsing never
//! panics, and anything unexpected is an error answered with 400 (or 502 for a server).
//!
//! Deliberately absent: keep-alive and pipelining (each client connection carries one
//! request; bytes after its body are never forwarded, and the response tells the client
//! to close), decoding of bodies (they pass through as sent), `https://` in absolute form
//! (the browser sends `CONNECT` for TLS), and TLS interception of any kind.

/// The most a request (or response) head may take, request line and headers together:
/// enough for sites with heavy cookies. Beyond it the client gets a 431.
pub(crate) const MAX_HEAD: usize = 256 * 1024;

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

    /// The head the origin server gets: origin-form request line, `Host:` naming the
    /// authority the proxy judged (whatever `Host:` the client sent), the client's other
    /// headers without the hop-by-hop ones and those its `Connection:` names, and
    /// `Connection: close`.
    pub(crate) fn origin_form(&self) -> Vec<u8> {
        let Target::Http { host, port, path } = &self.target else {
            return Vec::new();
        };
        let host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.clone()
        };
        let authority = match port {
            80 => host,
            port => format!("{host}:{port}"),
        };
        let mut out = format!("{} {path} HTTP/1.1\r\nHost: {authority}\r\n", self.method);
        let connection = self
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("connection"))
            .map(|(_, v)| v.as_str());
        let drop = dropped(connection);
        for (name, value) in &self.headers {
            let name_lower = name.to_ascii_lowercase();
            if name_lower != "host" && !drop.contains(&name_lower) {
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

/// Headers that concern one connection only: never forwarded either way, nor the headers
/// a `Connection:` header names (RFC 9110, 7.6.1).
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "proxy-connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
    "proxy-authorization",
    "proxy-authenticate",
];

/// Headers that frame the message: kept even when `Connection:` names them, or the server
/// would read the body as a request of its own.
const FRAMING: &[&str] = &["content-length", "transfer-encoding"];

/// The header names to drop from a message whose `Connection:` values are `connection`.
fn dropped<'a>(connection: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut names: Vec<String> = HOP_BY_HOP.iter().map(|h| (*h).to_owned()).collect();
    for value in connection {
        names.extend(
            value
                .split(',')
                .map(|token| token.trim().to_ascii_lowercase())
                .filter(|token| !token.is_empty() && !FRAMING.contains(&token.as_str())),
        );
    }
    names
}

/// Where a request's body ends: fed the bytes after the head, it says how many of them
/// belong to the body. Whatever follows is never forwarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyEnd {
    /// This many bytes remain (`Content-Length`, or 0 without a body).
    Length(u64),
    /// A chunked body, this far in.
    Chunked(Chunk),
}

/// How far a chunked body has been read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chunk {
    /// In a chunk's size line: the size so far, its digit count, and the extension's length.
    Size {
        size: u64,
        digits: u8,
        ext: usize,
    },
    /// After the size line's CR.
    SizeLf {
        size: u64,
    },
    /// This many data bytes remain in the chunk.
    Data(u64),
    /// After a chunk's data: its CR, then its LF.
    DataCr,
    DataLf,
    /// In a trailer line (after the last chunk) of this length.
    Trailer(usize),
    /// After a trailer line's CR; `empty` when the line was the blank one that ends it all.
    TrailerLf {
        empty: bool,
    },
}

/// What [`BodyEnd::feed`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fed {
    /// Every byte fed is body, and more is to come.
    More,
    /// The body ends after this many of the bytes fed.
    Done(usize),
}

/// The longest chunk size line or trailer line read.
const MAX_LINE: usize = 8 * 1024;

impl BodyEnd {
    /// The framing `head` declares. Both `Content-Length` and `Transfer-Encoding`,
    /// lengths that disagree, and any transfer coding but `chunked` alone are refused: a
    /// server could read them otherwise than the proxy does.
    pub(crate) fn of(head: &Head) -> Result<BodyEnd, Bad> {
        let values = |name: &str| -> Vec<&str> {
            head.headers
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
                .collect()
        };
        let codings = values("transfer-encoding");
        let lengths = values("content-length");
        if !codings.is_empty() {
            let chunked_only = codings.len() == 1 && codings[0].eq_ignore_ascii_case("chunked");
            if !chunked_only || !lengths.is_empty() {
                return Err(Bad::Malformed);
            }
            return Ok(BodyEnd::Chunked(Chunk::Size {
                size: 0,
                digits: 0,
                ext: 0,
            }));
        }
        let mut length = None;
        for value in lengths.iter().flat_map(|v| v.split(',')) {
            let value = value.trim();
            if value.is_empty() || value.len() > 18 || !value.bytes().all(|b| b.is_ascii_digit()) {
                return Err(Bad::Malformed);
            }
            let n: u64 = value.parse().map_err(|_| Bad::Malformed)?;
            if length.is_some_and(|l| l != n) {
                return Err(Bad::Malformed);
            }
            length = Some(n);
        }
        Ok(BodyEnd::Length(length.unwrap_or(0)))
    }

    /// Whether the body is complete before any byte is fed (no body at all).
    pub(crate) fn is_done(&self) -> bool {
        *self == BodyEnd::Length(0)
    }

    /// Reads `data`, the next bytes after what was fed before.
    pub(crate) fn feed(&mut self, data: &[u8]) -> Result<Fed, Bad> {
        match self {
            BodyEnd::Length(left) => {
                let len = u64::try_from(data.len()).unwrap_or(u64::MAX);
                if len >= *left {
                    let done = usize::try_from(*left).map_err(|_| Bad::Malformed)?;
                    *left = 0;
                    Ok(Fed::Done(done))
                } else {
                    *left -= len;
                    Ok(Fed::More)
                }
            }
            BodyEnd::Chunked(state) => feed_chunked(state, data),
        }
    }
}

fn feed_chunked(state: &mut Chunk, data: &[u8]) -> Result<Fed, Bad> {
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        *state = match *state {
            Chunk::Size { size, digits, ext } => match b {
                b'\r' if digits > 0 => Chunk::SizeLf { size },
                _ if ext == 0 && b.is_ascii_hexdigit() => {
                    if digits >= 15 {
                        return Err(Bad::Malformed);
                    }
                    let digit = u64::from(char::from(b).to_digit(16).ok_or(Bad::Malformed)?);
                    Chunk::Size {
                        size: size * 16 + digit,
                        digits: digits + 1,
                        ext,
                    }
                }
                // A chunk extension (`;name=value`), passed through unread.
                b';' | b' ' | b'\t' if digits > 0 || ext > 0 => Chunk::Size {
                    size,
                    digits,
                    ext: ext + 1,
                },
                _ if ext > 0 && ext < MAX_LINE && !b.is_ascii_control() => Chunk::Size {
                    size,
                    digits,
                    ext: ext + 1,
                },
                _ => return Err(Bad::Malformed),
            },
            Chunk::SizeLf { size } => match (b, size) {
                (b'\n', 0) => Chunk::Trailer(0),
                (b'\n', size) => Chunk::Data(size),
                _ => return Err(Bad::Malformed),
            },
            Chunk::Data(left) => {
                let available = u64::try_from(data.len() - i).unwrap_or(u64::MAX);
                let take = left.min(available);
                // `take` is at most what is left of `data`, so it fits in usize.
                i += usize::try_from(take).map_err(|_| Bad::Malformed)?;
                *state = if take == left {
                    Chunk::DataCr
                } else {
                    Chunk::Data(left - take)
                };
                continue;
            }
            Chunk::DataCr if b == b'\r' => Chunk::DataLf,
            Chunk::DataLf if b == b'\n' => Chunk::Size {
                size: 0,
                digits: 0,
                ext: 0,
            },
            Chunk::Trailer(len) => match b {
                b'\r' => Chunk::TrailerLf { empty: len == 0 },
                _ if len < MAX_LINE && (!b.is_ascii_control() || b == b'\t') => {
                    Chunk::Trailer(len + 1)
                }
                _ => return Err(Bad::Malformed),
            },
            Chunk::TrailerLf { empty } if b == b'\n' => {
                if empty {
                    return Ok(Fed::Done(i + 1));
                }
                Chunk::Trailer(0)
            }
            Chunk::DataCr | Chunk::DataLf | Chunk::TrailerLf { .. } => return Err(Bad::Malformed),
        };
        i += 1;
    }
    Ok(Fed::More)
}

/// A server's response head, kept as the lines it sent.
#[derive(Debug, Clone)]
pub(crate) struct Response {
    /// The status code.
    pub(crate) status: u16,
    /// The status line and each header line, without their CRLF.
    lines: Vec<Vec<u8>>,
}

impl Response {
    /// An interim answer (`100 Continue`, `103 Early Hints`): the final one follows.
    pub(crate) fn is_interim(&self) -> bool {
        (100..200).contains(&self.status) && self.status != 101
    }

    /// The head the client gets: the server's, without hop-by-hop headers and the ones its
    /// `Connection:` names, and, on a final answer, `Connection: close` and
    /// `Proxy-Connection: close`, so the client never sends a second request on this
    /// connection.
    pub(crate) fn for_client(&self) -> Vec<u8> {
        let name_of = |line: &[u8]| -> String {
            let end = line.iter().position(|b| *b == b':').unwrap_or(0);
            String::from_utf8_lossy(&line[..end]).to_ascii_lowercase()
        };
        let value_of = |line: &[u8]| -> String {
            let start = line.iter().position(|b| *b == b':').map_or(0, |i| i + 1);
            String::from_utf8_lossy(&line[start..]).into_owned()
        };
        let connection: Vec<String> = self.lines[1..]
            .iter()
            .filter(|line| name_of(line) == "connection")
            .map(|line| value_of(line))
            .collect();
        let drop = dropped(connection.iter().map(String::as_str));
        let mut out = Vec::new();
        out.extend_from_slice(&self.lines[0]);
        out.extend_from_slice(b"\r\n");
        for line in &self.lines[1..] {
            if !drop.contains(&name_of(line)) {
                out.extend_from_slice(line);
                out.extend_from_slice(b"\r\n");
            }
        }
        if !self.is_interim() {
            out.extend_from_slice(b"Connection: close\r\nProxy-Connection: close\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out
    }
}

/// Parses a server's complete response head (up to and including the blank line). Header
/// values may be any bytes but controls (servers send Latin-1); folded lines are refused.
pub(crate) fn response_head(head: &[u8]) -> Result<Response, Bad> {
    if head.len() > MAX_HEAD {
        return Err(Bad::TooLarge);
    }
    let body = head.strip_suffix(b"\r\n\r\n").ok_or(Bad::Malformed)?;
    let lines: Vec<&[u8]> = body.split(|b| *b == b'\n').collect();
    let last = lines.len() - 1;
    let mut clean = Vec::with_capacity(lines.len());
    for (i, line) in lines.into_iter().enumerate() {
        // Every line but the last kept its CR: lines end in CRLF, never a bare LF.
        let line = if i < last {
            line.strip_suffix(b"\r").ok_or(Bad::Malformed)?.to_vec()
        } else {
            line.to_vec()
        };
        if line.iter().any(|b| b.is_ascii_control() && *b != b'\t') {
            return Err(Bad::Malformed);
        }
        clean.push(line);
    }
    let status_line = clean.first().ok_or(Bad::Malformed)?;
    let status = status_line
        .strip_prefix(b"HTTP/1.1 ")
        .or_else(|| status_line.strip_prefix(b"HTTP/1.0 "))
        .and_then(|rest| rest.get(..3))
        .filter(|code| code.iter().all(u8::is_ascii_digit))
        .and_then(|code| std::str::from_utf8(code).ok()?.parse::<u16>().ok())
        .filter(|code| (100..600).contains(code))
        .ok_or(Bad::Malformed)?;
    if status_line.get(12).is_some_and(|b| *b != b' ') {
        return Err(Bad::Malformed);
    }
    for line in &clean[1..] {
        let name_end = line.iter().position(|b| *b == b':').ok_or(Bad::Malformed)?;
        if name_end == 0 || !line[..name_end].iter().all(u8::is_ascii_graphic) {
            return Err(Bad::Malformed);
        }
    }
    Ok(Response {
        status,
        lines: clean,
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

    /// Feeds `body` to the framing of `head` in pieces of `step` bytes; gives how many
    /// bytes belong to the body, or `None` if it never ends.
    fn body_len(head: &[u8], body: &[u8], step: usize) -> Result<Option<usize>, Bad> {
        let mut end = BodyEnd::of(&parse(head)?)?;
        if end.is_done() {
            return Ok(Some(0));
        }
        for (i, piece) in body.chunks(step).enumerate() {
            if let Fed::Done(n) = end.feed(piece)? {
                return Ok(Some(i * step + n));
            }
        }
        Ok(None)
    }

    #[test]
    fn net_4_bodies_end_where_their_framing_says() {
        let chunked = b"POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n";
        let body = b"5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\nGET http://b.test/";
        let whole = body.len() - b"GET http://b.test/".len();
        for step in [1, 2, 3, 7, 1000] {
            assert_eq!(
                body_len(chunked, body, step),
                Ok(Some(whole)),
                "step {step}"
            );
        }
        assert_eq!(body_len(chunked, b"0\r\n\r\nX", 1), Ok(Some(5)));
        assert_eq!(body_len(chunked, b"5\r\nhel", 2), Ok(None));
        for bad in [
            &b"5\nhello\r\n0\r\n\r\n"[..],
            b"5\r\nhelloX\r\n",
            b"g\r\n",
            b"\r\n",
            b"10000000000000000\r\n",
            b"0\r\nX: \x01\r\n\r\n",
        ] {
            assert!(
                body_len(chunked, bad, 1).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let length =
            b"POST http://a.test/ HTTP/1.1\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n";
        assert_eq!(body_len(length, b"helloGET", 3), Ok(Some(5)));
        assert_eq!(body_len(length, b"hel", 3), Ok(None));
        let none = b"GET http://a.test/ HTTP/1.1\r\n\r\n";
        assert_eq!(body_len(none, b"GET http://b.test/", 1), Ok(Some(0)));
        for ambiguous in [
            &b"POST http://a.test/ HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
            b"POST http://a.test/ HTTP/1.1\r\nContent-Length: 1, 2\r\n\r\n",
            b"POST http://a.test/ HTTP/1.1\r\nContent-Length: +1\r\n\r\n",
            b"POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: identity\r\n\r\n",
        ] {
            assert_eq!(
                BodyEnd::of(&parse(ambiguous).unwrap()),
                Err(Bad::Malformed),
                "{:?}",
                String::from_utf8_lossy(ambiguous)
            );
        }
    }

    #[test]
    fn net_4_responses_tell_the_client_to_close() {
        let head = b"HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Private\r\nKeep-Alive: timeout=5\r\nX-Private: 1\r\nContent-Type: text/html; charset=\xe9\r\nContent-Length: 2\r\n\r\n";
        let response = response_head(head).unwrap();
        assert!(!response.is_interim());
        assert_eq!(
            response.for_client(),
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=\xe9\r\nContent-Length: 2\r\nConnection: close\r\nProxy-Connection: close\r\n\r\n"
        );
        // `Connection:` cannot make the proxy drop the body's framing.
        let head = b"HTTP/1.1 200 OK\r\nConnection: Content-Length\r\nContent-Length: 2\r\n\r\n";
        let out = response_head(head).unwrap().for_client();
        assert!(out.windows(17).any(|w| w == b"Content-Length: 2"));
        let early = response_head(b"HTTP/1.1 100 Continue\r\n\r\n").unwrap();
        assert!(early.is_interim());
        assert_eq!(early.for_client(), b"HTTP/1.1 100 Continue\r\n\r\n");
        for bad in [
            &b"HTTP/1.1 200 OK\r\n"[..],
            b"HTTP/2 200 OK\r\n\r\n",
            b"HTTP/1.1 20 OK\r\n\r\n",
            b"HTTP/1.1 2000 OK\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nX: 1\n\r\n",
            b"HTTP/1.1 200 OK\r\n folded\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nNoColon\r\n\r\n",
            b"<html>hello</html>\r\n\r\n",
        ] {
            assert!(
                response_head(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
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
