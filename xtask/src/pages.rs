//! A tiny static server for the fixture pages, so the benchmarks need nothing but std.
//! It serves `fixtures/pages/` on 127.0.0.1 on a free port, one request per connection,
//! with `{{other_origin}}` replaced by its own origin.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;

use crate::cmd;

/// The running server: its origin, `http://127.0.0.1:<port>`.
pub(crate) struct Pages {
    pub(crate) origin: String,
    pub(crate) port: u16,
}

impl Pages {
    /// Starts serving on a free port; the server lives as long as the process.
    pub(crate) fn start() -> Result<Pages, String> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind: {e}"))?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let origin = format!("http://127.0.0.1:{port}");
        let root = cmd::root().join("fixtures/pages");
        let served = origin.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (root, origin) = (root.clone(), served.clone());
                std::thread::spawn(move || serve(stream, &root, &origin));
            }
        });
        Ok(Pages { origin, port })
    }

    /// The address of a page.
    pub(crate) fn url(&self, name: &str) -> String {
        format!("{}/{name}", self.origin)
    }
}

fn serve(mut stream: TcpStream, root: &std::path::Path, origin: &str) {
    let mut reader = BufReader::new(&stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    // Drain the headers.
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
        line.clear();
    }
    let path = request_line.split_whitespace().nth(1).unwrap_or("/");
    let name = path
        .split('?')
        .next()
        .unwrap_or("/")
        .trim_start_matches('/');
    let file: Option<PathBuf> = (!name.is_empty()
        && !name.split('/').any(|p| p == ".." || p.is_empty()))
    .then(|| root.join(name));
    let (status, body, kind) = match file.and_then(|f| std::fs::read(f).ok()) {
        Some(body) if name.ends_with(".html") => (
            "200 OK",
            String::from_utf8_lossy(&body)
                .replace("{{other_origin}}", origin)
                .into_bytes(),
            "text/html; charset=utf-8",
        ),
        Some(body) => ("200 OK", body, "application/octet-stream"),
        None => ("404 Not Found", b"not found".to_vec(), "text/plain"),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
}
