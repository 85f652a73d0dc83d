//! Test support: spawning the built gateway, and a line-by-line JSON-RPC client.

use std::path::PathBuf;
use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The gateway binary with `args`, on a temp home, using the test Chromium.
pub(crate) fn gateway(home: &std::path::Path, args: &[&str]) -> Command {
    let browser: PathBuf = conch_fixtures::browser::executable().expect("test set-up");
    let mut command = Command::new(env!("CARGO_BIN_EXE_conch-gateway"));
    command
        .args(args)
        .arg("--home")
        .arg(home)
        .arg("--browser")
        .arg(browser)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// An MCP client over the child's stdin and stdout.
pub(crate) struct StdioClient {
    pub(crate) child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: i64,
    /// Every line the gateway wrote to standard output: results, requests, notifications.
    pub(crate) transcript: String,
}

impl StdioClient {
    /// Spawns `command` and initializes the session.
    pub(crate) async fn start(command: Command) -> StdioClient {
        StdioClient::start_with(command, json!({})).await
    }

    /// Spawns `command` with no `initialize`: a new-era (2026-07-28) client.
    pub(crate) async fn start_bare(mut command: Command) -> StdioClient {
        let mut child = command.spawn().expect("the gateway starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        StdioClient {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
            next_id: 1,
            transcript: String::new(),
        }
    }

    /// Spawns `command` and initializes the session with the client's `capabilities`.
    pub(crate) async fn start_with(command: Command, capabilities: Value) -> StdioClient {
        StdioClient::start_at(command, "2025-06-18", capabilities).await
    }

    /// Spawns `command` and initializes the session at protocol `version` with the
    /// client's `capabilities`.
    pub(crate) async fn start_at(
        mut command: Command,
        version: &str,
        capabilities: Value,
    ) -> StdioClient {
        let mut child = command.spawn().expect("the gateway starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let mut client = StdioClient {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
            next_id: 1,
            transcript: String::new(),
        };
        let init = client
            .request(
                "initialize",
                json!({ "protocolVersion": version, "capabilities": capabilities, "clientInfo": { "name": "test", "version": "1" } }),
            )
            .await;
        assert_eq!(
            init["result"]["serverInfo"]["name"], "conch_browser",
            "{init}"
        );
        client
            .send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await;
        client
    }

    /// Writes one message.
    pub(crate) async fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .await
            .expect("the gateway reads stdin");
        self.stdin.flush().await.expect("flush");
    }

    /// Sends a request and waits for the response with its id.
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Value {
        self.request_answering(method, params, |_| None).await
    }

    /// The agent opens `url` (`browser_open`), which must succeed; gives the page's
    /// first look.
    pub(crate) async fn open(&mut self, url: &str) -> String {
        self.call_ok("browser_open", json!({ "url": url })).await
    }

    /// Calls the tool `name`, which must succeed; gives its text.
    pub(crate) async fn call_ok(&mut self, name: &str, arguments: Value) -> String {
        let (text, error) = self.call(name, arguments).await;
        assert!(!error, "{text}");
        text
    }

    /// Starts a `browser_wait` for words no page has: a turn that runs for `seconds`.
    /// Gives the call's request id.
    pub(crate) async fn start_waiting(&mut self, seconds: u64) -> i64 {
        self.send_request(
            "tools/call",
            json!({ "name": "browser_wait", "arguments": { "text": "never on this page", "seconds": seconds } }),
        )
        .await
    }

    /// Sends a request without waiting for its response; gives its id.
    pub(crate) async fn send_request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        id
    }

    /// Sends a request and waits for its response, answering the server's own requests
    /// on the way with `answer` (the `result`, or `None` for an error).
    pub(crate) async fn request_answering(
        &mut self,
        method: &str,
        params: Value,
        mut answer: impl FnMut(&Value) -> Option<Value>,
    ) -> Value {
        let id = self.send_request(method, params).await;
        loop {
            let message = self.next_message().await;
            if message.get("method").is_some() && message.get("id").is_some() {
                let reply = match answer(&message) {
                    Some(result) => {
                        json!({ "jsonrpc": "2.0", "id": message["id"], "result": result })
                    }
                    None => {
                        json!({ "jsonrpc": "2.0", "id": message["id"], "error": { "code": -1, "message": "no" } })
                    }
                };
                self.send(&reply).await;
                continue;
            }
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// The next message the gateway writes, within a minute.
    pub(crate) async fn next_message(&mut self) -> Value {
        let line = tokio::time::timeout(std::time::Duration::from_secs(60), self.lines.next_line())
            .await
            .expect("the gateway answers within a minute")
            .expect("stdout is readable")
            .expect("the gateway is still running");
        self.transcript.push_str(&line);
        self.transcript.push('\n');
        serde_json::from_str(&line).expect("stdout carries only JSON-RPC")
    }

    /// Calls a tool; gives (text, isError).
    pub(crate) async fn call(&mut self, name: &str, arguments: Value) -> (String, bool) {
        let answer = self
            .request(
                "tools/call",
                json!({ "name": name, "arguments": arguments }),
            )
            .await;
        let result = &answer["result"];
        let text = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        (text, result["isError"] == json!(true))
    }

    /// Closes stdin; gives whether the gateway stopped within `limit`.
    pub(crate) async fn finish_within(mut self, limit: std::time::Duration) -> bool {
        drop(self.stdin);
        let stopped = tokio::time::timeout(limit, self.child.wait()).await.is_ok();
        if !stopped {
            let _ = self.child.kill().await;
        }
        stopped
    }

    /// Closes stdin and waits for the gateway to stop.
    pub(crate) async fn finish(mut self) {
        drop(self.stdin);
        let status = tokio::time::timeout(std::time::Duration::from_secs(30), self.child.wait())
            .await
            .expect("the gateway stops when stdin closes")
            .expect("wait");
        assert!(status.success(), "{status}");
    }
}

/// The ref on the first line holding `needle` and a ref.
pub(crate) fn ref_of(snapshot: &str, needle: &str) -> String {
    let line = snapshot
        .lines()
        .find(|line| line.contains(needle) && line.contains("[ref="))
        .unwrap_or_else(|| panic!("no line with {needle:?} and a ref in:\n{snapshot}"));
    let start = line.find("[ref=").expect("a ref") + "[ref=".len();
    let end = line[start..].find(']').expect("a bracket") + start;
    line[start..end].to_owned()
}

/// One HTTP/1.1 request to the person's door; gives (status, lowercased head, body).
/// `Host` is 127.0.0.1:PORT and a body's `Content-Type` is JSON unless given.
pub(crate) async fn door_request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("the person's door listens");
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty()
        && !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
    {
        request.push_str("Content-Type: application/json\r\n");
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(120),
        stream.read_to_end(&mut answer),
    )
    .await
    .expect("an answer within 120 s")
    .expect("read");
    let text = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_lowercase(), body.to_owned())
}
