//! Minimal HTTP and WebSocket clients over loopback, std only, for the benches that speak
//! to the person's door as the panel does (`bench live`, the stand-in person of `bench
//! real`): one GET, and a WebSocket with masked sends that answers pings.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One GET; gives the status, the head and the body (read to its `Content-Length`, as
/// Chromium keeps the connection open).
pub(crate) fn http_get(port: u16, path: &str) -> Result<(u16, String, String), String> {
    let mut stream =
        TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| format!("send: {e}"))?;
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        let n = reader
            .read_line(&mut line)
            .map_err(|e| format!("GET {path}: {e}"))?;
        if n == 0 || line.trim().is_empty() {
            break;
        }
        head.push_str(&line);
    }
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let length = head.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse::<usize>().ok())?
    });
    let mut body = Vec::new();
    match length {
        Some(length) => {
            body.resize(length, 0);
            reader
                .read_exact(&mut body)
                .map_err(|e| format!("GET {path}: {e}"))?;
        }
        None if status == 200 => {
            reader
                .read_to_end(&mut body)
                .map_err(|e| format!("GET {path}: {e}"))?;
        }
        None => {}
    }
    Ok((status, head, String::from_utf8_lossy(&body).into_owned()))
}

/// The write half of a WebSocket: masked client frames.
#[derive(Clone)]
pub(crate) struct WsWriter(Arc<Mutex<TcpStream>>);

impl WsWriter {
    pub(crate) fn send(&self, opcode: u8, payload: &[u8]) -> std::io::Result<()> {
        let mask = [0x3a, 0x91, 0x5c, 0xe7];
        let mut frame = Vec::with_capacity(payload.len() + 14);
        frame.push(0x80 | opcode);
        match payload.len() {
            n if n < 126 => frame.push(0x80 | n as u8),
            n if n <= 0xffff => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        lock(&self.0).write_all(&frame)
    }

    pub(crate) fn text(&self, text: &str) -> std::io::Result<()> {
        self.send(0x1, text.as_bytes())
    }

    pub(crate) fn shutdown(&self) {
        let stream = lock(&self.0);
        let _ = stream.shutdown(Shutdown::Both);
    }
}

/// The read half of a WebSocket.
pub(crate) struct WsReader {
    pub(crate) reader: BufReader<TcpStream>,
    pub(crate) writer: WsWriter,
}

impl WsReader {
    /// The next text (opcode 1) or binary (2) message, whole; pings are answered.
    pub(crate) fn next(&mut self) -> std::io::Result<(u8, Vec<u8>)> {
        let mut message = Vec::new();
        let mut kind = 0;
        loop {
            let mut head = [0u8; 2];
            self.reader.read_exact(&mut head)?;
            let (fin, opcode) = (head[0] & 0x80 != 0, head[0] & 0x0f);
            let masked = head[1] & 0x80 != 0;
            let len = match head[1] & 0x7f {
                126 => {
                    let mut b = [0u8; 2];
                    self.reader.read_exact(&mut b)?;
                    u64::from(u16::from_be_bytes(b))
                }
                127 => {
                    let mut b = [0u8; 8];
                    self.reader.read_exact(&mut b)?;
                    u64::from_be_bytes(b)
                }
                n => u64::from(n),
            };
            let mut mask = [0u8; 4];
            if masked {
                self.reader.read_exact(&mut mask)?;
            }
            let len = usize::try_from(len).map_err(std::io::Error::other)?;
            let mut payload = vec![0u8; len];
            self.reader.read_exact(&mut payload)?;
            if masked {
                for (i, b) in payload.iter_mut().enumerate() {
                    *b ^= mask[i % 4];
                }
            }
            match opcode {
                0x8 => return Err(std::io::Error::other("the socket closed")),
                0x9 => {
                    self.writer.send(0xa, &payload)?;
                    continue;
                }
                0xa => continue,
                0x0 => {}
                other => kind = other,
            }
            message.extend_from_slice(&payload);
            if fin {
                return Ok((kind, message));
            }
        }
    }
}

/// Opens a WebSocket at `port` and `path` with `headers`.
pub(crate) fn ws_connect(
    port: u16,
    path: &str,
    headers: &[(&str, &str)],
) -> Result<WsReader, String> {
    let mut stream =
        TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let mut request = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("send: {e}"))?;
    let writer = WsWriter(Arc::new(Mutex::new(
        stream.try_clone().map_err(|e| e.to_string())?,
    )));
    let mut reader = BufReader::with_capacity(256 * 1024, stream);
    let mut status = String::new();
    reader
        .read_line(&mut status)
        .map_err(|e| format!("read: {e}"))?;
    loop {
        let mut line = String::new();
        reader
            .read_line(&mut line)
            .map_err(|e| format!("read: {e}"))?;
        if line.trim().is_empty() {
            break;
        }
    }
    if status.split_whitespace().nth(1) != Some("101") {
        return Err(format!("{path} did not upgrade: {}", status.trim()));
    }
    Ok(WsReader { reader, writer })
}
