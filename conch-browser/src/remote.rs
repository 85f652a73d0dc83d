//! A browser at a DevTools address, the `cdp` backend (BE-8): `http://host:port` is asked
//! for its `/json/version` and the WebSocket it names is used, with the host and port
//! Chrome reports replaced by the ones actually reached (Chrome answers `127.0.0.1` or
//! `0.0.0.0` behind a forwarded port); `ws://` and `wss://` addresses are used as given.
//!
//! Conch never launches, closes or restarts such a browser: it opens its own tabs in it and
//! closes only those when it lets go. It cannot put its proxy in front of a browser it did
//! not launch, so the guard runs in CDP-only mode there (see the containment model).
//!
//! Deliberately absent: `https://` DevTools addresses (no provider serves one; a `wss://`
//! address is taken as given), and the cloud providers' session APIs (their own modules).

use std::time::Duration;

use conch_cdp::{Config as CdpConfig, Connection};
use serde::Deserialize;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use url::Url;

/// The most `/json/version` may say, in bytes.
const MAX_VERSION_ANSWER: u64 = 64 * 1024;

/// How long reaching the address may take, all told.
pub(crate) const REACH_WITHIN: Duration = Duration::from_secs(10);

/// Why a DevTools address could not be used. Each is a phrase for "Conch couldn't reach
/// the browser at … (phrase)".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// Not an `http://`, `ws://` or `wss://` address with a host.
    #[error("{0} is not a DevTools address: use http://host:port, ws://… or wss://…")]
    NotAnAddress(String),
    /// Nothing answered, or the answer was not Chrome's.
    #[error("{0}")]
    Unreachable(String),
    /// The WebSocket did not open.
    #[error("its DevTools socket did not open: {0}")]
    Socket(#[source] conch_cdp::Error),
}

#[derive(Deserialize)]
struct Version {
    #[serde(rename = "webSocketDebuggerUrl")]
    socket: String,
}

/// The address as a person may show it: scheme, host and port, never a path or a query
/// (a provider's key can ride in the query).
pub fn shown(address: &str) -> String {
    match Url::parse(address) {
        Ok(url) => match (url.host_str(), url.port_or_known_default()) {
            (Some(host), Some(port)) => format!("{}://{host}:{port}", url.scheme()),
            (Some(host), None) => format!("{}://{host}", url.scheme()),
            _ => "that address".to_owned(),
        },
        Err(_) => "that address".to_owned(),
    }
}

/// The WebSocket address behind `address` (BE-8).
///
/// # Errors
/// [`RemoteError::NotAnAddress`] or [`RemoteError::Unreachable`].
pub async fn socket_address(address: &str) -> Result<String, RemoteError> {
    let not_one = || RemoteError::NotAnAddress(shown(address));
    let url = Url::parse(address).map_err(|_| not_one())?;
    let host = url.host_str().ok_or_else(not_one)?.to_owned();
    match url.scheme() {
        "ws" | "wss" => return Ok(address.to_owned()),
        "http" => {}
        _ => return Err(not_one()),
    }
    let port = url.port_or_known_default().ok_or_else(not_one)?;
    let body = get(&host, port, "/json/version").await?;
    let version: Version = serde_json::from_slice(&body).map_err(|_| {
        RemoteError::Unreachable("what answered there is not a browser's DevTools".to_owned())
    })?;
    let mut socket = Url::parse(&version.socket).map_err(|_| {
        RemoteError::Unreachable("the browser named no usable DevTools socket".to_owned())
    })?;
    // The browser names itself as it sees itself; the address that reached it is the one
    // that works from here.
    socket
        .set_host(Some(&host))
        .and_then(|()| {
            socket
                .set_port(Some(port))
                .map_err(|()| url::ParseError::InvalidPort)
        })
        .map_err(|_| not_one())?;
    Ok(socket.into())
}

/// Connects to the browser at `address` (BE-8).
///
/// # Errors
/// As [`socket_address`], or [`RemoteError::Socket`].
pub(crate) async fn connect(address: &str) -> Result<Connection, RemoteError> {
    let socket = socket_address(address).await?;
    let mut config = CdpConfig::default();
    config.connect_timeout = REACH_WITHIN;
    Connection::connect_with(&socket, config)
        .await
        .map_err(RemoteError::Socket)
}

/// Whether `answer` holds a whole HTTP answer: its head and as many body bytes as its
/// Content-Length says.
fn complete(answer: &[u8]) -> bool {
    let Some(split) = answer.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&answer[..split]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok());
    length.is_some_and(|length| answer.len() >= split + 4 + length)
}

/// A plain HTTP/1.1 GET of `path` on `host:port`, its body.
async fn get(host: &str, port: u16, path: &str) -> Result<Vec<u8>, RemoteError> {
    let failed = |e: std::io::Error| RemoteError::Unreachable(format!("nothing answered ({e})"));
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect((host, port))
            .await
            .map_err(failed)?;
        let authority = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.map_err(failed)?;
        // Chrome's DevTools server keeps the connection open whatever the request says:
        // the answer ends where its Content-Length says.
        let mut answer = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            let n = stream.read(&mut chunk).await.map_err(failed)?;
            answer.extend_from_slice(&chunk[..n]);
            if n == 0 || complete(&answer) || answer.len() as u64 > MAX_VERSION_ANSWER {
                break;
            }
        }
        Ok(answer)
    };
    let answer = tokio::time::timeout(REACH_WITHIN, exchange)
        .await
        .map_err(|_| {
            RemoteError::Unreachable(format!(
                "nothing answered within {} s",
                REACH_WITHIN.as_secs()
            ))
        })??;
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| RemoteError::Unreachable("the answer was not HTTP".to_owned()))?;
    let head = String::from_utf8_lossy(&answer[..split]);
    if !head.starts_with("HTTP/1.1 200") && !head.starts_with("HTTP/1.0 200") {
        let status = head.lines().next().unwrap_or_default().to_owned();
        return Err(RemoteError::Unreachable(format!(
            "it answered {}",
            status.trim()
        )));
    }
    Ok(answer[split + 4..].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn be_8_an_address_is_shown_without_its_path_or_query() {
        assert_eq!(
            shown("wss://connect.example.com/?apiKey=SECRET&sessionId=1"),
            "wss://connect.example.com:443"
        );
        assert_eq!(shown("http://127.0.0.1:9222"), "http://127.0.0.1:9222");
        assert_eq!(shown("not an address"), "that address");
    }

    #[tokio::test]
    async fn be_8_only_devtools_schemes_are_taken() {
        for bad in ["file:///tmp/x", "ftp://host:21", "nonsense"] {
            let e = socket_address(bad).await.expect_err(bad);
            assert!(matches!(e, RemoteError::NotAnAddress(_)), "{bad}: {e}");
        }
        assert_eq!(
            socket_address("ws://127.0.0.1:9/devtools/browser/x")
                .await
                .expect("taken as given"),
            "ws://127.0.0.1:9/devtools/browser/x"
        );
    }
}
