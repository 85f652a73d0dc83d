//! The guard's forward proxy on loopback (AMB-1, NET-1, NET-3, NET-4, NET-5).
//!
//! The browser Conch launches sends every request through it, loopback included
//! (`--proxy-bypass-list=<-loopback>`). For each request the proxy resolves the host itself
//! (through [`Resolve`]), asks conch-policy for the verdict on every address it got
//! (`verdict_for_connection`), and only then connects to an address it judged. So a
//! redirect hop, a subresource, a WebSocket, a worker's fetch and a name that rebinds to a
//! private address are all judged on the address actually connected to.
//!
//! `CONNECT` is tunnelled as bytes (no TLS interception); plain-HTTP absolute-form
//! requests are forwarded in origin form with `Connection: close`. A client connection
//! carries exactly one judged request: the server gets its head and exactly the body its
//! framing declares (`Content-Length` or chunked; ambiguous framing is refused with 400),
//! nothing the client sends after that is forwarded, and the server's answer is rewritten
//! to say `Connection: close` and `Proxy-Connection: close`, so the browser never reuses
//! the connection for a request nobody judged (issue 12). A refusal answers 403 with a
//! short page carrying [`BLOCKED_SENTENCE`] and is recorded in the [`GuardLog`]. The
//! proxy's own port and the gateway's are refused under every setting.
//!
//! The server gets `Host:` naming the judged authority and no hop-by-hop header. Heads may
//! take 256 KiB ([`http::MAX_HEAD`]), connecting has one total time for all addresses, and
//! the proxy carries at most [`MAX_CONNECTIONS`] connections, each closed after
//! [`IDLE_TIMEOUT`] of silence.
//!
//! Deliberately absent: keep-alive, caching, authentication, HTTP/2, and any TLS.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use conch_policy::{
    AddressClass, NetSettings, RefusalCode, classify, verdict_for_connection,
    verdict_for_resolved_url,
};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use super::http::{self, Bad, BodyEnd, Fed, Target};
use super::log::{BLOCKED_SENTENCE, GuardLog, Layer};
use super::resolve::{Resolve, Resolved};

/// How long a client has to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a name may take to resolve.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long connecting to the server may take, all its addresses together.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How many client connections the proxy carries at once; one more is answered 503. The
/// browser keeps far fewer (32 per proxy for requests), so only a page or a local program
/// that hoards connections meets it.
const MAX_CONNECTIONS: usize = 256;
/// How long a tunnel, or a request waiting for its answer, may stay silent both ways
/// before the proxy closes it.
const IDLE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The proxy's bounds: [`MAX_CONNECTIONS`], [`IDLE_TIMEOUT`] and [`CONNECT_TIMEOUT`] in
/// the product; tests shrink them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) max_connections: usize,
    pub(crate) idle: Duration,
    pub(crate) connect: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: MAX_CONNECTIONS,
            idle: IDLE_TIMEOUT,
            connect: CONNECT_TIMEOUT,
        }
    }
}

/// What every connection of the proxy shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) net: NetSettings,
    pub(crate) resolver: Arc<dyn Resolve>,
    pub(crate) log: Arc<GuardLog>,
    pub(crate) limits: Limits,
}

/// A running proxy. It stops, with every connection it carries, when dropped.
#[derive(Debug)]
pub(crate) struct Proxy {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Proxy {
    /// Binds a free port on 127.0.0.1 and starts serving.
    pub(crate) async fn start(shared: Shared) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(shared);
        let task = tokio::spawn(accept_loop(listener, addr, shared));
        Ok(Proxy { addr, task })
    }

    /// Where it listens.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn accept_loop(listener: TcpListener, own: SocketAddr, shared: Arc<Shared>) {
    // Connections live in the set, so aborting this task ends them all.
    let mut connections = tokio::task::JoinSet::new();
    let slots = Arc::new(tokio::sync::Semaphore::new(shared.limits.max_connections));
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                match accepted {
                    Ok((stream, _)) => {
                        let _ = stream.set_nodelay(true);
                        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
                            // Full: say so at once, without reading or waiting.
                            let _ = stream.try_write(TOO_MANY);
                            continue;
                        };
                        let shared = Arc::clone(&shared);
                        connections.spawn(async move {
                            serve(stream, own, shared).await;
                            drop(slot);
                        });
                    }
                    // Out of file descriptors, say: wait a moment rather than spin.
                    Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// The answer to a connection over [`MAX_CONNECTIONS`].
const TOO_MANY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\nProxy-Connection: close\r\n\r\n";

/// Reads into `buf`, failing after `idle` without a byte.
async fn read_idle(
    from: &mut (impl AsyncRead + Unpin),
    buf: &mut [u8],
    idle: Duration,
) -> std::io::Result<usize> {
    tokio::time::timeout(idle, from.read(buf))
        .await
        .map_err(|_| std::io::ErrorKind::TimedOut)?
}

/// Writes all of `data`, failing after `idle` without progress.
async fn write_idle(
    to: &mut (impl AsyncWrite + Unpin),
    data: &[u8],
    idle: Duration,
) -> std::io::Result<()> {
    tokio::time::timeout(idle, to.write_all(data))
        .await
        .map_err(|_| std::io::ErrorKind::TimedOut)?
}

/// Carries bytes both ways until both sides are done, or until neither said anything
/// for `idle`.
async fn relay(client: &mut TcpStream, server: &mut TcpStream, idle: Duration) {
    let (mut client_in, mut client_out) = client.split();
    let (mut server_in, mut server_out) = server.split();
    let (mut up, mut down) = (vec![0u8; 16 * 1024], vec![0u8; 16 * 1024]);
    let (mut up_open, mut down_open) = (true, true);
    while up_open || down_open {
        tokio::select! {
            read = client_in.read(&mut up), if up_open => match read {
                Ok(n @ 1..) => {
                    if write_idle(&mut server_out, &up[..n], idle).await.is_err() {
                        return;
                    }
                }
                _ => {
                    up_open = false;
                    let _ = server_out.shutdown().await;
                }
            },
            read = server_in.read(&mut down), if down_open => match read {
                Ok(n @ 1..) => {
                    if write_idle(&mut client_out, &down[..n], idle).await.is_err() {
                        return;
                    }
                }
                _ => {
                    down_open = false;
                    let _ = client_out.shutdown().await;
                }
            },
            () = tokio::time::sleep(idle) => return,
        }
    }
}

/// Reads a message head into `buf`; gives where it ends. Bytes after it stay in `buf`.
async fn read_head(from: &mut (impl AsyncRead + Unpin), buf: &mut Vec<u8>) -> Result<usize, Bad> {
    let mut chunk = [0u8; 8192];
    // Where to look for the blank line from: only new bytes (and the three before them).
    let mut searched = 0;
    loop {
        if let Some(end) = http::head_end(&buf[searched..]) {
            if searched + end > http::MAX_HEAD {
                return Err(Bad::TooLarge);
            }
            return Ok(searched + end);
        }
        searched = buf.len().saturating_sub(3);
        if buf.len() > http::MAX_HEAD {
            return Err(Bad::TooLarge);
        }
        match from.read(&mut chunk).await {
            Ok(0) | Err(_) => return Err(Bad::Malformed),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

async fn respond(
    client: &mut (impl AsyncWrite + Unpin),
    status: u16,
    reason: &str,
    code: Option<&str>,
    text: &str,
) {
    let body =
        format!("<!doctype html><meta charset=\"utf-8\"><title>{reason}</title><p>{text}</p>\n");
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\nProxy-Connection: close\r\n",
        body.len()
    );
    if let Some(code) = code {
        head.push_str(&format!("X-Conch-Blocked: {code}\r\n"));
    }
    head.push_str("\r\n");
    let _ = client.write_all(head.as_bytes()).await;
    let _ = client.write_all(body.as_bytes()).await;
    let _ = client.shutdown().await;
}

async fn refuse(
    client: &mut TcpStream,
    shared: &Shared,
    host: &str,
    port: u16,
    code: &'static str,
) {
    shared.log.record(host, port, code, Layer::Proxy);
    respond(
        client,
        403,
        super::claims::REASON,
        Some(code),
        BLOCKED_SENTENCE,
    )
    .await;
}

/// The host as the resolver should see it: IP literals in their one canonical spelling
/// (`0x7f.1` is 127.0.0.1), names as given.
fn canonical_host(host: &str) -> String {
    if host.contains(':') {
        return host
            .parse::<Ipv6Addr>()
            .map_or_else(|_| host.to_owned(), |ip| ip.to_string());
    }
    match url::Host::parse(host) {
        Ok(url::Host::Ipv4(ip)) => ip.to_string(),
        Ok(url::Host::Ipv6(ip)) => ip.to_string(),
        _ => host.trim_end_matches('.').to_owned(),
    }
}

/// The verdict on a host by its name alone (no address): `Some(code)` when refused.
fn judge_name(host: &str, port: u16, net: &NetSettings) -> Option<&'static str> {
    let literal = if host.contains(':') {
        format!("http://[{host}]:{port}/")
    } else {
        format!("http://{host}:{port}/")
    };
    let Ok(url) = url::Url::parse(&literal) else {
        return Some(RefusalCode::UnreadableAddress.as_str());
    };
    verdict_for_resolved_url(&url, &[], net)
        .refusal()
        .map(|r| r.code().as_str())
        .filter(|code| *code != RefusalCode::NoAddress.as_str())
}

/// Whether `resolved` is the proxy itself (a request through the proxy to the proxy), in
/// any spelling of a local address: IPv4-mapped IPv6 (`::ffff:127.0.0.1`), NAT64 and the
/// rest are judged by the IPv4 address inside, as conch-policy classifies them.
fn is_own(resolved: &Resolved, port: u16, own: SocketAddr) -> bool {
    let local = |ip: IpAddr| {
        matches!(
            classify(ip),
            AddressClass::Loopback | AddressClass::Unspecified
        )
    };
    let dials_own = resolved.dial.port() == own.port()
        && (resolved.dial.ip() == own.ip() || local(resolved.dial.ip()));
    dials_own || (port == own.port() && local(resolved.checked))
}

async fn serve(mut client: TcpStream, own: SocketAddr, shared: Arc<Shared>) {
    let mut buf = Vec::with_capacity(2048);
    let end = match tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client, &mut buf)).await {
        Ok(Ok(end)) => end,
        Ok(Err(Bad::TooLarge)) => {
            let text = "The request's headers were larger than 256 KiB.";
            respond(
                &mut client,
                431,
                "Request Header Fields Too Large",
                None,
                text,
            )
            .await;
            // Read on a moment, so the rest of the head does not reset the connection
            // before the client reads the answer.
            let mut sink = [0u8; 16 * 1024];
            let mut left = 4 * http::MAX_HEAD;
            while let Ok(n @ 1..) = read_idle(&mut client, &mut sink, Duration::from_secs(1)).await
            {
                left = left.saturating_sub(n);
                if left == 0 {
                    break;
                }
            }
            return;
        }
        Ok(Err(Bad::Malformed)) | Err(_) => return,
    };
    let Ok(head) = http::parse(&buf[..end]) else {
        let text = "Conch's proxy could not read that request.";
        return respond(&mut client, 400, "Bad Request", None, text).await;
    };
    let leftover = buf.split_off(end);
    let (host, port) = (head.target.host().to_owned(), head.target.port());
    // How the body is framed, known before any connection: a head the proxy could read
    // otherwise than the server is refused.
    let body = match head.target {
        Target::Connect { .. } => None,
        Target::Http { .. } => match BodyEnd::of(&head) {
            Ok(body) => Some(body),
            Err(_) => {
                let text = "Conch's proxy could not tell where that request's body ends.";
                return respond(&mut client, 400, "Bad Request", None, text).await;
            }
        },
    };

    // A service worker's script never loads (NET-2); only visible on plain HTTP.
    if head
        .header("service-worker")
        .is_some_and(|v| v.eq_ignore_ascii_case("script"))
    {
        return refuse(&mut client, &shared, &host, port, "service-worker").await;
    }

    let lookup = canonical_host(&host);
    let resolved =
        match tokio::time::timeout(RESOLVE_TIMEOUT, shared.resolver.resolve(&lookup, port)).await {
            Ok(Ok(found)) if !found.is_empty() => found,
            _ => {
                // Names that need no DNS to judge (localhost, metadata and private-only
                // names) are refused as such, and logged, even when they do not resolve.
                if let Some(code) = judge_name(&host, port, &shared.net) {
                    return refuse(&mut client, &shared, &host, port, code).await;
                }
                let text = "That name didn't resolve to any address.";
                return respond(&mut client, 502, "Bad Gateway", None, text).await;
            }
        };

    // Every address must pass: a name that answers one public and one private address is
    // refused whole, so rebinding between answers cannot help.
    for answer in &resolved {
        if is_own(answer, port, own) {
            let code = RefusalCode::GatewayOrigin.as_str();
            return refuse(&mut client, &shared, &host, port, code).await;
        }
        if let Some(refusal) =
            verdict_for_connection(&host, port, answer.checked, &shared.net).refusal()
        {
            let code = refusal.code().as_str();
            return refuse(&mut client, &shared, &host, port, code).await;
        }
    }

    let Some(mut upstream) = connect(&resolved, shared.limits.connect).await else {
        let text = "The server did not answer.";
        return respond(&mut client, 502, "Bad Gateway", None, text).await;
    };
    let _ = upstream.set_nodelay(true);

    match body {
        None => {
            if client
                .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                .await
                .is_err()
            {
                return;
            }
            if !leftover.is_empty() && upstream.write_all(&leftover).await.is_err() {
                return;
            }
            relay(&mut client, &mut upstream, shared.limits.idle).await;
        }
        Some(body) => forward(client, upstream, &head, body, leftover, shared.limits.idle).await,
    }
}

/// Connects to the first of `resolved` that answers, all of them within `total`: each
/// address gets an equal share of the time left, so one that never answers cannot use
/// it all, and many cannot add up to more.
async fn connect(resolved: &[Resolved], total: Duration) -> Option<TcpStream> {
    let deadline = tokio::time::Instant::now() + total;
    for (i, answer) in resolved.iter().enumerate() {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let tries_left = u32::try_from(resolved.len() - i).unwrap_or(u32::MAX);
        let share = left / tries_left;
        if share.is_zero() {
            return None;
        }
        if let Ok(Ok(stream)) = tokio::time::timeout(share, TcpStream::connect(answer.dial)).await {
            return Some(stream);
        }
    }
    None
}

/// Forwards one plain-HTTP request and its answer. The server gets the head and exactly
/// the body `body` frames; whatever the client sends after it (a pipelined request, or
/// one on a connection it hoped to reuse) is never forwarded: it was not judged. The
/// client is told to close (`Connection: close`), whatever the server said.
async fn forward(
    mut client: TcpStream,
    mut upstream: TcpStream,
    head: &http::Head,
    body: BodyEnd,
    leftover: Vec<u8>,
    idle: Duration,
) {
    if write_idle(&mut upstream, &head.origin_form(), idle)
        .await
        .is_err()
    {
        return;
    }
    let (mut client_in, mut client_out) = client.split();
    let (mut server_in, mut server_out) = upstream.split();
    let answer = answer(&mut server_in, &mut client_out, idle);
    tokio::pin!(answer);
    tokio::select! {
        () = &mut answer => return,
        sent = send_body(&mut client_in, &mut server_out, body, leftover, idle) => {
            if sent.is_err() {
                return;
            }
        }
    }
    // The request is whole: from here on the client is only read to notice it left, and
    // nothing it sends goes anywhere.
    let mut discard = [0u8; 4096];
    loop {
        tokio::select! {
            () = &mut answer => return,
            read = client_in.read(&mut discard) => {
                if matches!(read, Ok(0) | Err(_)) {
                    return;
                }
            }
        }
    }
}

/// Sends the request body: first what came with the head, then from the client, up to
/// where `body` says it ends. Bytes after it are dropped.
async fn send_body(
    client: &mut (impl AsyncRead + Unpin),
    server: &mut (impl AsyncWrite + Unpin),
    mut body: BodyEnd,
    leftover: Vec<u8>,
    idle: Duration,
) -> Result<(), Bad> {
    if body.is_done() {
        return Ok(());
    }
    let mut chunk = leftover;
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        if !chunk.is_empty() {
            let fed = body.feed(&chunk)?;
            let take = match fed {
                Fed::More => chunk.len(),
                Fed::Done(n) => n,
            };
            write_idle(server, &chunk[..take], idle)
                .await
                .map_err(|_| Bad::Malformed)?;
            if let Fed::Done(_) = fed {
                return Ok(());
            }
        }
        let n = read_idle(client, &mut buf, idle)
            .await
            .map_err(|_| Bad::Malformed)?;
        if n == 0 {
            return Err(Bad::Malformed);
        }
        chunk = buf[..n].to_vec();
    }
}

/// Relays the server's answer: each head rewritten for the client ([`http::Response`]),
/// then the rest as it comes, until the server closes. An answer that is not HTTP gets a
/// 502.
async fn answer(
    server: &mut (impl AsyncRead + Unpin),
    client: &mut (impl AsyncWrite + Unpin),
    idle: Duration,
) {
    let mut buf = Vec::with_capacity(4096);
    let mut sent_any = false;
    loop {
        let response = match tokio::time::timeout(idle, read_head(server, &mut buf)).await {
            Ok(Ok(end)) => http::response_head(&buf[..end]).map(|r| (r, end)),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(Bad::Malformed),
        };
        let Ok((response, end)) = response else {
            if !sent_any {
                let text = "The server's answer could not be read.";
                respond(client, 502, "Bad Gateway", None, text).await;
            }
            return;
        };
        if write_idle(client, &response.for_client(), idle)
            .await
            .is_err()
        {
            return;
        }
        sent_any = true;
        buf.drain(..end);
        if !response.is_interim() {
            break;
        }
    }
    if write_idle(client, &buf, idle).await.is_err() {
        return;
    }
    let mut chunk = vec![0u8; 16 * 1024];
    while let Ok(n @ 1..) = read_idle(server, &mut chunk, idle).await {
        if write_idle(client, &chunk[..n], idle).await.is_err() {
            return;
        }
    }
    let _ = client.shutdown().await;
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::Limits;

    use super::*;
    use crate::guard::MapResolver;

    /// A proxy whose `shop.test` leads to a loopback server that answers "hello", with the
    /// gateway on `gateway`.
    async fn proxy(gateway: u16) -> (Proxy, Arc<GuardLog>, u16) {
        let server = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let server_port = server.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = server.accept().await {
                tokio::spawn(async move {
                    let mut buf = [0u8; 1024];
                    let _ = s.read(&mut buf).await;
                    let _ = s
                        .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
                        .await;
                });
            }
        });
        let log = Arc::new(GuardLog::default());
        let resolver = MapResolver::new().with(
            "shop.test",
            "203.0.113.7".parse().unwrap(),
            SocketAddr::new(Ipv4Addr::LOCALHOST.into(), server_port),
        );
        let proxy = Proxy::start(Shared {
            net: NetSettings::for_gateway_port(gateway),
            resolver: Arc::new(resolver),
            log: Arc::clone(&log),
            limits: Limits::default(),
        })
        .await
        .unwrap();
        (proxy, log, server_port)
    }

    async fn exchange(proxy: &Proxy, request: &[u8]) -> String {
        exchange_for(proxy, request, Duration::from_secs(5)).await
    }

    /// Sends `request` and reads what comes for at most `wait`.
    async fn exchange_for(proxy: &Proxy, request: &[u8], wait: Duration) -> String {
        let mut s = TcpStream::connect(proxy.addr()).await.unwrap();
        s.write_all(request).await.unwrap();
        let mut out = Vec::new();
        let _ = tokio::time::timeout(wait, s.read_to_end(&mut out)).await;
        String::from_utf8_lossy(&out).into_owned()
    }

    #[tokio::test]
    async fn forwards_an_allowed_request_and_refuses_the_rest() {
        let (proxy, log, _) = proxy(4321).await;
        let ok = exchange(
            &proxy,
            b"GET http://shop.test/x HTTP/1.1\r\nHost: shop.test\r\n\r\n",
        )
        .await;
        assert!(ok.ends_with("hello"), "{ok}");
        // A tunnel carries bytes both ways, untouched.
        let tunnel = exchange(
            &proxy,
            b"CONNECT shop.test:443 HTTP/1.1\r\n\r\nanything the client sends",
        )
        .await;
        assert!(
            tunnel.starts_with("HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.1 200 OK"),
            "{tunnel}"
        );

        for refused in [
            &b"GET http://127.0.0.1:4321/ HTTP/1.1\r\n\r\n"[..],
            b"CONNECT localhost:4321 HTTP/1.1\r\n\r\n",
            b"GET http://metadata.google.internal/ HTTP/1.1\r\n\r\n",
            b"GET http://printer.local/ HTTP/1.1\r\n\r\n",
            b"GET http://shop.test/sw.js HTTP/1.1\r\nService-Worker: script\r\n\r\n",
        ] {
            let answer = exchange(&proxy, refused).await;
            assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
            assert!(answer.contains(BLOCKED_SENTENCE));
            assert!(!answer.contains("4321"), "{answer}");
        }
        let own = format!(
            "GET http://127.0.0.1:{}/ HTTP/1.1\r\n\r\n",
            proxy.addr().port()
        );
        assert!(
            exchange(&proxy, own.as_bytes())
                .await
                .starts_with("HTTP/1.1 403")
        );
        let codes: Vec<&str> = log.since(0).iter().map(|b| b.code).collect();
        assert_eq!(
            codes,
            [
                "gateway-origin",
                "gateway-origin",
                "cloud-metadata",
                "private-network",
                "service-worker",
                "gateway-origin"
            ]
        );
    }

    /// A server that answers every read with a keep-alive "ok" and never closes, and
    /// records every byte it receives.
    struct KeepAlive {
        addr: SocketAddr,
        received: Arc<std::sync::Mutex<Vec<u8>>>,
        connections: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl KeepAlive {
        async fn start() -> KeepAlive {
            let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
            let addr = listener.local_addr().unwrap();
            let received = Arc::new(std::sync::Mutex::new(Vec::new()));
            let connections = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let (seen, counted) = (Arc::clone(&received), Arc::clone(&connections));
            tokio::spawn(async move {
                while let Ok((mut s, _)) = listener.accept().await {
                    counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let seen = Arc::clone(&seen);
                    tokio::spawn(async move {
                        let mut buf = [0u8; 4096];
                        while let Ok(n @ 1..) = s.read(&mut buf).await {
                            seen.lock().unwrap().extend_from_slice(&buf[..n]);
                            let answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\nKeep-Alive: timeout=60\r\n\r\nok";
                            if s.write_all(answer.as_bytes()).await.is_err() {
                                return;
                            }
                        }
                    });
                }
            });
            KeepAlive {
                addr,
                received,
                connections,
            }
        }

        fn received(&self) -> String {
            String::from_utf8_lossy(&self.received.lock().unwrap()).into_owned()
        }
    }

    /// A proxy whose `shop.test` leads to `shop`, `other.test` to `other`, and private
    /// literals to `other` too (the trap).
    async fn proxy_to(shop: SocketAddr, other: SocketAddr) -> (Proxy, Arc<GuardLog>) {
        let resolver = MapResolver::new()
            .with("shop.test", "203.0.113.7".parse().unwrap(), shop)
            .with("other.test", "203.0.113.8".parse().unwrap(), other)
            .with_trap(other);
        proxy_with(resolver, Limits::default()).await
    }

    async fn proxy_with(
        resolver: impl Resolve + 'static,
        limits: Limits,
    ) -> (Proxy, Arc<GuardLog>) {
        let log = Arc::new(GuardLog::default());
        let proxy = Proxy::start(Shared {
            net: NetSettings::for_gateway_port(4321),
            resolver: Arc::new(resolver),
            log: Arc::clone(&log),
            limits,
        })
        .await
        .unwrap();
        (proxy, log)
    }

    /// Issue 12: the server gets `Host:` naming the authority the proxy judged, whatever
    /// the client wrote there (the gateway's address, another site), and none of the
    /// hop-by-hop headers or those `Connection:` names; `Connection:` cannot strip the
    /// body's framing.
    #[tokio::test]
    async fn host_names_the_judged_authority_and_hop_by_hop_headers_are_dropped() {
        let shop = KeepAlive::start().await;
        let (proxy, _log) = proxy_to(shop.addr, shop.addr).await;
        let mut s = TcpStream::connect(proxy.addr()).await.unwrap();
        s.write_all(
            b"POST http://shop.test:8080/h HTTP/1.1\r\nHost: 127.0.0.1:4321\r\nhost: evil.test\r\n\
              Connection: X-Secret, Content-Length\r\nX-Secret: s3cret\r\nTE: trailers\r\n\
              Trailer: X-T\r\nProxy-Authorization: Basic c2VjcmV0\r\nKeep-Alive: 5\r\n\
              Upgrade: websocket\r\nX-Kept: yes\r\nContent-Length: 5\r\n\r\nhello",
        )
        .await
        .unwrap();
        let answer = read_until(&mut s, "\r\n\r\nok", Duration::from_secs(3)).await;
        assert!(answer.ends_with("ok"), "{answer}");
        let got = shop.received();
        assert!(
            got.starts_with("POST /h HTTP/1.1\r\nHost: shop.test:8080\r\n"),
            "{got}"
        );
        assert!(got.contains("\r\nX-Kept: yes\r\n"), "{got}");
        assert!(
            got.ends_with("\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"),
            "{got}"
        );
        assert_eq!(
            got.matches("Host:").count() + got.matches("host:").count(),
            1,
            "{got}"
        );
        for gone in [
            "4321",
            "evil",
            "s3cret",
            "X-Secret",
            "TE:",
            "Trailer:",
            "Proxy-Authorization",
            "c2VjcmV0",
            "Keep-Alive",
            "Upgrade",
            "websocket",
        ] {
            assert!(!got.contains(gone), "{gone} was forwarded: {got}");
        }
    }

    /// Issue 12: request heads up to 256 KiB (sites with heavy cookies) go through; a
    /// larger one gets a 431 and no connection is made.
    #[tokio::test]
    async fn heads_up_to_256_kib_pass_and_larger_ones_get_431() {
        let shop = KeepAlive::start().await;
        let (proxy, _log) = proxy_to(shop.addr, shop.addr).await;
        let cookie = "c".repeat(200 * 1024);
        let heavy = format!("GET http://shop.test/ HTTP/1.1\r\nCookie: {cookie}\r\n\r\n");
        let answer = exchange_for(&proxy, heavy.as_bytes(), Duration::from_millis(500)).await;
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        assert!(shop.received().contains(&cookie));
        let connections = shop.connections.load(std::sync::atomic::Ordering::SeqCst);

        let cookie = "c".repeat(300 * 1024);
        let huge = format!("GET http://shop.test/ HTTP/1.1\r\nCookie: {cookie}\r\n\r\n");
        let answer = exchange(&proxy, huge.as_bytes()).await;
        assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
        assert!(answer.contains("256 KiB"), "{answer}");
        assert_eq!(
            shop.connections.load(std::sync::atomic::Ordering::SeqCst),
            connections
        );
    }

    /// Issue 12: the proxy carries at most `max_connections` at once (one more gets a
    /// 503 at once), and a tunnel silent both ways for `idle` is closed, freeing its slot;
    /// one that keeps talking stays.
    #[tokio::test]
    async fn connections_are_capped_and_idle_tunnels_closed() {
        let shop = KeepAlive::start().await;
        let resolver =
            MapResolver::new().with("shop.test", "203.0.113.7".parse().unwrap(), shop.addr);
        let limits = Limits {
            max_connections: 2,
            idle: Duration::from_millis(400),
            connect: CONNECT_TIMEOUT,
        };
        let (proxy, _log) = proxy_with(resolver, limits).await;
        let tunnel = || async {
            let mut s = TcpStream::connect(proxy.addr()).await.unwrap();
            s.write_all(b"CONNECT shop.test:443 HTTP/1.1\r\n\r\n")
                .await
                .unwrap();
            let answer = read_until(&mut s, "\r\n\r\n", Duration::from_secs(2)).await;
            (s, answer)
        };
        let (mut quiet, answer) = tunnel().await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        let (mut talking, answer) = tunnel().await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        let (_, answer) = tunnel().await;
        assert!(answer.starts_with("HTTP/1.1 503"), "over the cap: {answer}");

        // The talking tunnel outlives the idle time several times over.
        let started = tokio::time::Instant::now();
        for _ in 0..8 {
            talking.write_all(b"ping").await.unwrap();
            let echo = read_until(&mut talking, "ok", Duration::from_secs(1)).await;
            assert!(
                echo.ends_with("ok"),
                "a talking tunnel was closed: {echo:?}"
            );
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        // The quiet one was closed meanwhile, and its slot is free again.
        let mut rest = Vec::new();
        let closed =
            tokio::time::timeout(Duration::from_millis(100), quiet.read_to_end(&mut rest)).await;
        assert!(
            matches!(closed, Ok(Ok(0))),
            "the idle tunnel is still open: {closed:?}"
        );
        assert!(started.elapsed() > Duration::from_millis(1000));
        let (_, answer) = tunnel().await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }

    /// Answers a fixed list for every name.
    #[derive(Debug)]
    struct Fixed(Vec<Resolved>);

    impl Resolve for Fixed {
        fn resolve<'a>(&'a self, _: &'a str, _: u16) -> crate::guard::Resolving<'a> {
            Box::pin(async move { Ok(self.0.clone()) })
        }
    }

    /// A loopback listener whose accept queue is full: connecting to it hangs.
    async fn stalled() -> (SocketAddr, Vec<TcpStream>) {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind((Ipv4Addr::LOCALHOST, 0).into()).unwrap();
        let listener = socket.listen(0).unwrap();
        let addr = listener.local_addr().unwrap();
        let mut held = Vec::new();
        for _ in 0..4 {
            if let Ok(Ok(s)) =
                tokio::time::timeout(Duration::from_millis(200), TcpStream::connect(addr)).await
            {
                held.push(s);
            }
        }
        let probe =
            tokio::time::timeout(Duration::from_millis(300), TcpStream::connect(addr)).await;
        assert!(probe.is_err(), "test set-up: the listener still accepts");
        // Kept alive (leaked) with the test: it must never accept.
        std::mem::forget(listener);
        (addr, held)
    }

    /// Issue 12: connecting gets one total time for all of a name's addresses, not one
    /// per address; each address gets a share, so a dead first one does not starve a live
    /// second.
    #[tokio::test]
    async fn connecting_takes_one_total_time_across_addresses() {
        let (dead, _held) = stalled().await;
        let shop = KeepAlive::start().await;
        let public: IpAddr = "203.0.113.9".parse().unwrap();
        let limits = Limits {
            connect: Duration::from_millis(800),
            ..Limits::default()
        };
        let answers = vec![
            Resolved {
                checked: public,
                dial: dead
            };
            4
        ];
        let (proxy, _log) = proxy_with(Fixed(answers), limits).await;
        let started = tokio::time::Instant::now();
        let answer = exchange(&proxy, b"GET http://slow.test/ HTTP/1.1\r\n\r\n").await;
        let took = started.elapsed();
        assert!(answer.starts_with("HTTP/1.1 502"), "{answer}");
        assert!(
            took < Duration::from_millis(1500),
            "four dead addresses took {took:?}"
        );

        let answers = vec![
            Resolved {
                checked: public,
                dial: dead,
            },
            Resolved {
                checked: public,
                dial: shop.addr,
            },
        ];
        let (proxy, _log) = proxy_with(Fixed(answers), limits).await;
        let answer = exchange_for(
            &proxy,
            b"GET http://slow.test/ HTTP/1.1\r\n\r\n",
            Duration::from_secs(2),
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    }

    /// Reads from `s` until `text` has arrived (or `wait` passed); gives what arrived.
    async fn read_until(s: &mut TcpStream, text: &str, wait: Duration) -> String {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        let deadline = tokio::time::Instant::now() + wait;
        while !String::from_utf8_lossy(&out).contains(text) {
            match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
                Ok(Ok(n @ 1..)) => out.extend_from_slice(&buf[..n]),
                _ => break,
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// NET-4 (issue 12): a server that answers keep-alive and keeps its connection open
    /// never gets a second request from the client connection: not one sent after the
    /// answer (the browser reusing the proxy connection for another site, cookies and
    /// all), nor one smuggled after a `Content-Length` or chunked body. The client is told
    /// to close, and nothing unjudged reaches the other site or a private address.
    #[tokio::test]
    async fn net_4_keep_alive_cannot_smuggle_a_second_request() {
        let shop = KeepAlive::start().await;
        let other = KeepAlive::start().await;
        let (proxy, _log) = proxy_to(shop.addr, other.addr).await;

        // A second request on the connection after the first answer.
        let mut s = TcpStream::connect(proxy.addr()).await.unwrap();
        s.write_all(b"GET http://shop.test/first HTTP/1.1\r\nHost: shop.test\r\nProxy-Connection: keep-alive\r\n\r\n")
            .await
            .unwrap();
        let first = read_until(&mut s, "\r\n\r\nok", Duration::from_secs(3)).await;
        assert!(first.ends_with("\r\n\r\nok"), "{first}");
        let lower = first.to_ascii_lowercase();
        assert!(lower.contains("\r\nconnection: close\r\n"), "{first}");
        assert!(lower.contains("\r\nproxy-connection: close\r\n"), "{first}");
        assert!(!lower.contains("keep-alive"), "{first}");
        for second in [
            &b"GET http://other.test/second HTTP/1.1\r\nHost: other.test\r\nCookie: other=secret\r\n\r\n"[..],
            b"GET http://10.0.0.5:8080/admin HTTP/1.1\r\nHost: 10.0.0.5:8080\r\n\r\n",
        ] {
            let _ = s.write_all(second).await;
        }
        let more = read_until(&mut s, "\r\n\r\nok", Duration::from_millis(500)).await;
        assert!(!more.contains("ok"), "a second answer came: {more}");

        // Requests smuggled after a body, in the same packet.
        for smuggled in [
            &b"POST http://shop.test/length HTTP/1.1\r\nHost: shop.test\r\nContent-Length: 5\r\n\r\nhelloGET http://other.test/in-body HTTP/1.1\r\nHost: other.test\r\n\r\n"[..],
            b"POST http://shop.test/chunked HTTP/1.1\r\nHost: shop.test\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nX-Trailer: t\r\n\r\nGET http://10.0.0.5:8080/in-body HTTP/1.1\r\n\r\n",
        ] {
            let mut s = TcpStream::connect(proxy.addr()).await.unwrap();
            s.write_all(smuggled).await.unwrap();
            let answer = read_until(&mut s, "\r\n\r\nok", Duration::from_secs(3)).await;
            assert!(answer.ends_with("ok"), "{answer}");
        }
        tokio::time::sleep(Duration::from_millis(300)).await;

        let got = shop.received();
        assert!(got.contains("GET /first "), "{got}");
        assert!(got.contains("\r\n\r\nhello"), "{got}");
        assert!(
            got.contains("5;x=y\r\nhello\r\n0\r\nX-Trailer: t\r\n\r\n"),
            "{got}"
        );
        for unjudged in [
            "second",
            "other=secret",
            "admin",
            "in-body",
            "other.test",
            "10.0.0.5",
        ] {
            assert!(
                !got.contains(unjudged),
                "{unjudged} reached the first server: {got}"
            );
        }
        assert_eq!(
            other.connections.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "{}",
            other.received()
        );
    }

    /// Framing the proxy could read otherwise than the server is refused before any
    /// connection (issue 12).
    #[tokio::test]
    async fn net_4_ambiguous_bodies_are_refused() {
        let shop = KeepAlive::start().await;
        let other = KeepAlive::start().await;
        let (proxy, _log) = proxy_to(shop.addr, other.addr).await;
        for ambiguous in [
            &b"POST http://shop.test/ HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"[..],
            b"POST http://shop.test/ HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
            b"POST http://shop.test/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
            b"POST http://shop.test/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        ] {
            let answer = exchange(&proxy, ambiguous).await;
            assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        }
        assert_eq!(
            shop.connections.load(std::sync::atomic::Ordering::SeqCst),
            0
        );
    }

    #[tokio::test]
    async fn garbage_and_huge_heads_get_an_answer_not_a_panic() {
        let (proxy, log, _) = proxy(4321).await;
        let bad = exchange(&proxy, b"BREW /pot HTCPCP/1.0\r\n\r\n").await;
        assert!(bad.starts_with("HTTP/1.1 400"), "{bad}");
        let mut huge = b"GET http://shop.test/ HTTP/1.1\r\n".to_vec();
        huge.extend(std::iter::repeat_n(b'a', 300 * 1024));
        let answer = exchange(&proxy, &huge).await;
        assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
        // Half a request, then the client goes away: nothing is logged, nothing breaks.
        drop(TcpStream::connect(proxy.addr()).await.unwrap());
        let ok = exchange(&proxy, b"GET http://shop.test/ HTTP/1.1\r\n\r\n").await;
        assert!(ok.ends_with("hello"));
        assert!(log.since(0).is_empty());
    }
}
