//! DevTools discovery over plain HTTP: `GET /json/version`, read `webSocketDebuggerUrl`.
//!
//! A minimal HTTP/1.1 client on a tokio `TcpStream` (one request, `Connection: close`,
//! `Content-Length`, chunked or read-to-end bodies, at most 1 MiB), so conch-cdp needs no
//! HTTP client crate. `https://` discovery is not supported: pass the `wss://` address.

use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use url::{Host, Url};

use crate::error::{Error, ErrorKind, Reason};
use crate::redact;

/// The most an answer may hold.
const MAX_RESPONSE: u64 = 1 << 20;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Version {
    web_socket_debugger_url: String,
}

/// The browser-level WebSocket address named by `url`'s `/json/version`.
pub(crate) async fn discover(url: &Url) -> Result<String, Error> {
    let shown = redact::url(url.as_str());
    let failed = |what: String| {
        Error::with_source(
            ErrorKind::Transport,
            Reason(format!("discovering the websocket of {shown}: {what}")),
        )
    };
    let port = url.port_or_known_default().unwrap_or(80);
    let stream = match url.host() {
        Some(Host::Domain(domain)) => TcpStream::connect((domain, port)).await,
        Some(Host::Ipv4(ip)) => TcpStream::connect((ip, port)).await,
        Some(Host::Ipv6(ip)) => TcpStream::connect((ip, port)).await,
        None => {
            return Err(Error::with_source(
                ErrorKind::InvalidUrl,
                Reason(format!("{shown} has no host")),
            ));
        }
    };
    let mut stream = stream.map_err(|error| failed(error.to_string()))?;
    let host = match url.port() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_owned(),
    };
    let path = format!("{}/json/version", url.path().trim_end_matches('/'));
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|error| failed(error.to_string()))?;
    let response = read_response(&mut stream)
        .await
        .map_err(|error| failed(error.to_string()))?;
    let body = parse_response(&response).map_err(failed)?;
    let version: Version = serde_json::from_slice(&body)
        .map_err(|error| Error::decode(error).for_method("/json/version"))?;
    Ok(version.web_socket_debugger_url)
}

/// Reads one answer: up to the end of its body when its length is known (the browser may
/// keep the connection open despite `Connection: close`), else to end of file.
async fn read_response(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut response = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        if response.len() as u64 > MAX_RESPONSE {
            return Err(std::io::Error::other("the answer is larger than 1 MiB"));
        }
        if is_complete(&response) {
            return Ok(response);
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(response);
        }
        response.extend_from_slice(&chunk[..n]);
    }
}

/// Whether `response` holds a whole answer whose length is known.
fn is_complete(response: &[u8]) -> bool {
    let Some(split) = response.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&response[..split]).to_ascii_lowercase();
    let body = &response[split + 4..];
    if head.contains("transfer-encoding: chunked") {
        return dechunk(body).is_ok();
    }
    head.lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse::<usize>().ok())
        .is_some_and(|length| body.len() >= length)
}

/// The body of a 200 answer, or why there is none.
fn parse_response(response: &[u8]) -> Result<Vec<u8>, String> {
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("the answer has no end of headers")?;
    let head = std::str::from_utf8(&response[..split]).map_err(|_| "the headers are not text")?;
    let body = &response[split + 4..];
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap_or_default();
    let code = status.split_whitespace().nth(1).unwrap_or_default();
    if code != "200" {
        return Err(format!(
            "the answer's status is {}",
            status.chars().take(64).collect::<String>()
        ));
    }
    let mut chunked = false;
    let mut length = None;
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            let value = value.trim();
            if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.eq_ignore_ascii_case("chunked");
            } else if name.eq_ignore_ascii_case("content-length") {
                length = value.parse::<usize>().ok();
            }
        }
    }
    if chunked {
        return dechunk(body);
    }
    match length {
        Some(length) if length <= body.len() => Ok(body[..length].to_vec()),
        Some(_) => Err("the answer is shorter than its content-length".to_owned()),
        None => Ok(body.to_vec()),
    }
}

fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("a chunk has no size line")?;
        let size_text = std::str::from_utf8(&body[..line_end]).map_err(|_| "bad chunk size")?;
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| "bad chunk size")?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        let chunk = body.get(..size).ok_or("a chunk is cut short")?;
        out.extend_from_slice(chunk);
        body = body.get(size + 2..).ok_or("a chunk is cut short")?;
    }
}
