//! `conch-gateway serve`: MCP over streamable HTTP, behind the token and the Origin check
//! (TOOL-3, AMB-2).

use std::time::Duration;

use conch_fixtures::FixtureServer;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::support::gateway;

/// One HTTP/1.1 POST to `/mcp`; gives (status, headers, body).
async fn post(port: u16, headers: &[(&str, &str)], body: &Value) -> (u16, String, String) {
    post_raw(port, headers, &body.to_string()).await
}

/// One HTTP/1.1 POST to `/mcp` with `body` as it is; gives (status, lowercased head,
/// body).
async fn post_raw(port: u16, headers: &[(&str, &str)], body: &str) -> (u16, String, String) {
    post_to(port, "/mcp", headers, body).await
}

/// One HTTP/1.1 POST to `path` with `body` as it is; gives (status, lowercased head, body).
pub(crate) async fn post_to(
    port: u16,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("the gateway listens");
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    // The gateway may answer (413) before the whole body is sent, and close.
    let _ = stream.write_all(request.as_bytes()).await;
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_lowercase(), body.to_owned())
}

/// A running `conch-gateway serve`: the child, its port and its token.
pub(crate) struct Served {
    child: tokio::process::Child,
    pub(crate) port: u16,
    token: String,
}

impl Served {
    /// Starts `serve` on a free port with `args`, and reads the port and the token.
    pub(crate) async fn start(home: &std::path::Path, args: &[&str]) -> Served {
        let mut all = vec!["serve", "--port", "0"];
        all.extend_from_slice(args);
        let mut child = gateway(home, &all).spawn().expect("the gateway starts");
        let stderr = child.stderr.take().expect("stderr is piped");
        let mut lines = BufReader::new(stderr).lines();
        let port = loop {
            let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                .await
                .expect("the gateway starts within 30 s")
                .expect("stderr is readable")
                .expect("the gateway prints its address");
            if let Some(port) = line
                .split("http://127.0.0.1:")
                .nth(1)
                .and_then(|rest| rest.split('/').next())
                .and_then(|p| p.parse().ok())
            {
                break port;
            }
        };
        // Keep reading standard error so the gateway never blocks on it.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let token = std::fs::read_to_string(home.join("gateway.token")).expect("the token file");
        Served { child, port, token }
    }

    pub(crate) fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }

    /// Opens a session at protocol `version`; gives its id.
    async fn initialize(&self, version: &str) -> String {
        self.initialize_at("/mcp", version).await
    }

    /// Opens a session at `path` (`/mcp`, or `/mcp/task` for a task) at protocol
    /// `version`; gives its id.
    async fn initialize_at(&self, path: &str, version: &str) -> String {
        let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": version, "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } });
        let (status, head, body) = post_to(
            self.port,
            path,
            &[("Authorization", &self.bearer())],
            &init.to_string(),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        header(&head, "mcp-session-id")
            .expect("a session id")
            .to_owned()
    }

    /// Posts `message` in `session` with the token and `extra` headers.
    async fn send(
        &self,
        session: &str,
        extra: &[(&str, &str)],
        message: &Value,
    ) -> (u16, String, String) {
        let bearer = self.bearer();
        let mut headers = vec![
            ("Authorization", bearer.as_str()),
            ("Mcp-Session-Id", session),
        ];
        headers.extend_from_slice(extra);
        post(self.port, &headers, message).await
    }
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines()
        .find_map(|line| line.strip_prefix(&format!("{name}: ")))
        .map(str::trim)
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_over_http_needs_the_token_and_refuses_pages() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let served = Served::start(home.path(), &["--unattended", "--allow-localhost"]).await;
    let port = served.port;
    let mut child = served.child;
    let bearer = format!("Bearer {}", served.token);
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } });
    let call = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "browser_open", "arguments": { "url": server.url("basic.html") } } });

    // No token: refused, and nothing is opened.
    let (status, _, _) = post(port, &[], &call).await;
    assert_eq!(status, 401);
    let (status, _, _) = post(port, &[("Authorization", "Bearer wrong")], &init).await;
    assert_eq!(status, 401);
    // A page's Origin: refused even with the token.
    let (status, _, _) = post(
        port,
        &[
            ("Authorization", &bearer),
            ("Origin", server.url("").trim_end_matches('/')),
        ],
        &init,
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(server.requests("/basic.html"), 0);

    // With the token: a session, the catalogue, and a call.
    let (status, head, body) = post(port, &[("Authorization", &bearer)], &init).await;
    assert_eq!(status, 200, "{body}");
    let session = header(&head, "mcp-session-id")
        .expect("a session id")
        .to_owned();
    let list = json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/list" });
    let (status, _, body) = post(
        port,
        &[("Authorization", &bearer), ("Mcp-Session-Id", &session)],
        &list,
    )
    .await;
    assert_eq!(status, 200);
    let list: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 15);
    let (status, _, body) = post(
        port,
        &[("Authorization", &bearer), ("Mcp-Session-Id", &session)],
        &call,
    )
    .await;
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_str(&body).unwrap();
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("Hello from the fixtures"), "{answer}");
    // Ctrl-C: the gateway closes its browser and stops.
    let pid = child.id().expect("a pid").to_string();
    std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
}

/// Issue 12 (AMB-2): a 401 names the scheme it wants in `WWW-Authenticate`, and the
/// scheme is matched in any case (`bearer`, `BEARER`), the token never.
#[tokio::test(flavor = "multi_thread")]
async fn amb_2_bearer_scheme_is_named_and_matched_in_any_case() {
    let home = tempfile::tempdir().unwrap();
    let served = Served::start(home.path(), &[]).await;
    let ping = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } });
    let (status, head, _) = post(served.port, &[], &ping).await;
    assert_eq!(status, 401);
    let challenge = header(&head, "www-authenticate").expect("a WWW-Authenticate header");
    assert!(challenge.starts_with("bearer"), "{challenge}");
    for scheme in ["bearer", "BEARER", "Bearer"] {
        let value = format!("{scheme} {}", served.token);
        let (status, _, body) = post(served.port, &[("Authorization", &value)], &ping).await;
        assert_eq!(status, 200, "{scheme}: {body}");
    }
    let upper = format!("Bearer {}", served.token.to_uppercase());
    let (status, _, _) = post(served.port, &[("Authorization", &upper)], &ping).await;
    assert_eq!(status, 401);
}

/// Issue 12: after initialize, `MCP-Protocol-Version` is checked: a version this server
/// does not speak is a 400; a known one, or none (taken as 2025-03-26), is served.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_protocol_version_header_is_checked() {
    let home = tempfile::tempdir().unwrap();
    let served = Served::start(home.path(), &[]).await;
    let session = served.initialize("2025-06-18").await;
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" });
    let (status, _, body) = served
        .send(&session, &[("MCP-Protocol-Version", "1999-01-01")], &list)
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("1999-01-01"), "{body}");
    let (status, _, _) = served
        .send(&session, &[("MCP-Protocol-Version", "2025-06-18")], &list)
        .await;
    assert_eq!(status, 200);
    let (status, _, _) = served.send(&session, &[], &list).await;
    assert_eq!(status, 200);
}

/// Issue 12: a session unused for `--session-idle` is closed: its id then gets 404, and
/// a new initialize works.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_http_sessions_expire_after_idle() {
    let home = tempfile::tempdir().unwrap();
    let served = Served::start(home.path(), &["--session-idle", "1"]).await;
    let session = served.initialize("2025-06-18").await;
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" });
    let (status, _, _) = served.send(&session, &[], &list).await;
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let (status, _, body) = served.send(&session, &[], &list).await;
    assert_eq!(status, 404, "{body}");
    let again = served.initialize("2025-06-18").await;
    assert_ne!(again, session);
}

/// Issue 12: a body past a megabyte gets 413 and is not parsed (axum's own limit was
/// 2 MB); a body without the token is refused before it is read.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_http_body_size_is_limited() {
    let home = tempfile::tempdir().unwrap();
    let served = Served::start(home.path(), &[]).await;
    let session = served.initialize("2025-06-18").await;
    let padding = "x".repeat(1_500_000);
    let big = json!({ "jsonrpc": "2.0", "id": 2, "method": "ping", "params": { "_meta": { "pad": padding } } }).to_string();
    let bearer = served.bearer();
    let (status, _, body) = post_raw(
        served.port,
        &[("Authorization", &bearer), ("Mcp-Session-Id", &session)],
        &big,
    )
    .await;
    assert_eq!(status, 413, "{body}");
    let (status, _, _) = post_raw(served.port, &[("Mcp-Session-Id", &session)], &big).await;
    assert_eq!(status, 401);
    let small = json!({ "jsonrpc": "2.0", "id": 3, "method": "ping" });
    let (status, _, _) = served.send(&session, &[], &small).await;
    assert_eq!(status, 200);
}

/// Issue 12: a token file left readable by others is made owner-only (0600) when the
/// gateway writes its token into it.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_http_token_file_is_made_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("gateway.token");
    std::fs::write(&file, "an old token").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let served = Served::start(home.path(), &[]).await;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    assert_ne!(served.token, "an old token");
}

/// Issue 12: a batch over HTTP is answered as the session's agreed version says.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_batches_over_http_follow_the_agreed_version() {
    let home = tempfile::tempdir().unwrap();
    let served = Served::start(home.path(), &[]).await;
    let batch = json!([
        { "jsonrpc": "2.0", "id": "a", "method": "ping" },
        { "jsonrpc": "2.0", "id": "b", "method": "tools/list" },
    ]);
    let old = served.initialize("2025-03-26").await;
    let (status, _, body) = served.send(&old, &[], &batch).await;
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    let answers = answer.as_array().unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[1]["result"]["tools"].as_array().unwrap().len(), 15);
    let new = served.initialize("2025-06-18").await;
    let (_, _, body) = served
        .send(&new, &[("MCP-Protocol-Version", "2025-06-18")], &batch)
        .await;
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
}

/// Issue 12: over HTTP too, `notifications/cancelled` stops the call with that id (its
/// POST ends with no JSON-RPC answer) and the session's next call runs at once.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_cancelled_call_frees_the_conversation_over_http() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let served = Served::start(home.path(), &["--unattended", "--allow-localhost"]).await;
    let session = served.initialize("2025-06-18").await;
    let open = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "browser_open", "arguments": { "url": server.url("basic.html") } } });
    let (status, _, body) = served.send(&session, &[], &open).await;
    assert_eq!(status, 200, "{body}");
    let wait = json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "browser_wait", "arguments": { "text": "a text this page never shows", "seconds": 30 } } });
    let (port, bearer, id) = (served.port, served.bearer(), session.clone());
    let waiting = tokio::spawn(async move {
        post(
            port,
            &[("Authorization", &bearer), ("Mcp-Session-Id", &id)],
            &wait,
        )
        .await
    });
    tokio::time::sleep(Duration::from_millis(700)).await;
    let cancel = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 3 } });
    let (status, _, _) = served.send(&session, &[], &cancel).await;
    assert_eq!(status, 202);
    let started = std::time::Instant::now();
    let read = json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": { "name": "browser_read", "arguments": {} } });
    let (status, _, body) = served.send(&session, &[], &read).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the next call waited {:?} for the cancelled one",
        started.elapsed()
    );
    assert!(body.contains("Hello from the fixtures"), "{body}");
    let (status, _, body) = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("the cancelled call's POST ends")
        .unwrap();
    assert_eq!(status, 202, "{body}");
    assert!(body.trim().is_empty(), "{body}");
}

/// Opens the session's event stream (GET `/mcp`); gives the status and a channel of the
/// JSON-RPC messages it carries.
async fn open_stream(
    served: &Served,
    session: &str,
) -> (u16, tokio::sync::mpsc::UnboundedReceiver<Value>) {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", served.port))
        .await
        .expect("the gateway listens");
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: text/event-stream\r\nAuthorization: {}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n",
        served.port,
        served.bearer()
    );
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).await.expect("read");
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        // Chunk-size lines and comments are skipped; each event's data is one line.
        let mut line = String::new();
        while reader.read_line(&mut line).await.is_ok_and(|n| n > 0) {
            if let Some(data) = line.trim_end().strip_prefix("data: ")
                && let Ok(message) = serde_json::from_str::<Value>(data)
                && tx.send(message).is_err()
            {
                return;
            }
            line.clear();
        }
    });
    (status, rx)
}

/// Issue 12 (AMB-5): over HTTP the session's GET event stream carries what the server
/// sends on its own: with --ask-via-mcp the site question comes as an elicitation
/// request (answered by a POST of the response), and while the question waits the call
/// that asked for progress gets `notifications/progress` on the stream.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_over_http_event_stream_carries_elicitation_and_progress() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let served = Served::start(home.path(), &["--ask-via-mcp", "--allow-localhost"]).await;
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": { "elicitation": {} }, "clientInfo": { "name": "t", "version": "1" } } });
    let (status, head, body) =
        post(served.port, &[("Authorization", &served.bearer())], &init).await;
    assert_eq!(status, 200, "{body}");
    let session = header(&head, "mcp-session-id").unwrap().to_owned();
    let (status, mut events) = open_stream(&served, &session).await;
    assert_eq!(status, 200);
    let open = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "browser_open", "arguments": { "url": server.url("tools-shop.html") } } });
    let (_, _, body) = served.send(&session, &[], &open).await;
    let answer: Value = serde_json::from_str(&body).unwrap();
    let page = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let add = crate::support::ref_of(&page, "Add to cart");
    let click = json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "browser_click", "arguments": { "ref": add }, "_meta": { "progressToken": 77 } } });
    let (port, bearer, id) = (served.port, served.bearer(), session.clone());
    let clicking = tokio::spawn(async move {
        post(
            port,
            &[("Authorization", &bearer), ("Mcp-Session-Id", &id)],
            &click,
        )
        .await
    });
    let question = tokio::time::timeout(Duration::from_secs(30), events.recv())
        .await
        .expect("the question comes on the stream")
        .unwrap();
    assert_eq!(question["method"], "elicitation/create", "{question}");
    assert_eq!(
        question["params"]["requestedSchema"]["properties"]["answer"]["enum"],
        json!(["This chat", "No"])
    );
    // The person takes a while: progress comes meanwhile.
    let progress = tokio::time::timeout(Duration::from_secs(10), events.recv())
        .await
        .expect("progress comes while the question waits")
        .unwrap();
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    assert_eq!(progress["params"]["progressToken"], 77);
    let reply = json!({ "jsonrpc": "2.0", "id": question["id"], "result": { "action": "accept", "content": { "answer": "This chat" } } });
    let (status, _, _) = served.send(&session, &[], &reply).await;
    assert_eq!(status, 202);
    let (status, _, body) = tokio::time::timeout(Duration::from_secs(30), clicking)
        .await
        .expect("the click ends once answered")
        .unwrap();
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
}

/// The ids of the running browsers (not their helper processes) whose command line holds
/// `needle`.
pub(crate) fn processes_with(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(needle) && !cmdline.contains("--type=") {
            found.push(pid);
        }
    }
    found
}

/// What `browser_open` of `url` in `session` shows of the cookie jar fixture.
async fn jar(served: &Served, session: &str, url: &str) -> String {
    let call = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "browser_open", "arguments": { "url": url } } });
    let (status, _, body) = served.send(session, &[], &call).await;
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).expect("JSON");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    text.split("jar: [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .unwrap_or_else(|| panic!("no jar in {text}"))
        .to_owned()
}

/// ERR-1, ERR-2, ERR-20 over HTTP MCP: two sessions at `/mcp/task` set different cookies
/// on the same site and each sees only its own; a session at `/mcp` is a chat in the main
/// profile and sees neither. The errands' browser is a second process that starts with
/// the first task's first page.
#[tokio::test(flavor = "multi_thread")]
async fn err_1_err_20_task_sessions_over_http_each_have_their_own_browser() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let served = Served::start(home.path(), &["--unattended", "--allow-localhost"]).await;
    let errands_profile = home.path().join("browser/errands/browser/profile");
    let errands_profile = errands_profile.to_string_lossy().into_owned();
    let page = |set: &str| server.url(&format!("cookie-jar.html?set={set}"));
    let plain = server.url("cookie-jar.html");

    let chat = served.initialize_at("/mcp", "2025-06-18").await;
    assert_eq!(jar(&served, &chat, &page("main")).await, "who=main");
    let a = served.initialize_at("/mcp/task", "2025-06-18").await;
    let b = served.initialize_at("/mcp/task", "2025-06-18").await;
    assert!(
        processes_with(&errands_profile).is_empty(),
        "no errands' browser before a task browses"
    );
    assert_eq!(jar(&served, &a, &page("a")).await, "who=a");
    assert_eq!(
        processes_with(&errands_profile).len(),
        1,
        "one errands' browser"
    );
    assert_eq!(jar(&served, &b, &page("b")).await, "who=b");
    assert_eq!(jar(&served, &a, &plain).await, "who=a");
    assert_eq!(jar(&served, &chat, &plain).await, "who=main");
    assert_eq!(jar(&served, &b, &plain).await, "who=b");
    drop(served);
}

/// ERR-1: with `--errands` every session at `/mcp` is a task: two sessions keep their
/// cookies apart.
#[tokio::test(flavor = "multi_thread")]
async fn err_1_a_gateway_with_errands_makes_every_session_a_task() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let served = Served::start(
        home.path(),
        &["--unattended", "--allow-localhost", "--errands"],
    )
    .await;
    let a = served.initialize("2025-06-18").await;
    let b = served.initialize("2025-06-18").await;
    let set_a = server.url("cookie-jar.html?set=a");
    assert_eq!(jar(&served, &a, &set_a).await, "who=a");
    assert_eq!(jar(&served, &b, &server.url("cookie-jar.html")).await, "");
    drop(served);
}

/// ERR-11, ERR-12 over HTTP MCP: a task's session named by `Conch-Task` browses and sets a
/// cookie; the gateway stops (Ctrl-C sets every open errand aside, sealed) and starts
/// again; a new session with the same name resumes the errand: its tab's address and its
/// cookie are back. A second session with a running name is refused.
#[tokio::test(flavor = "multi_thread")]
async fn err_11_a_named_task_resumes_after_a_gateway_restart() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let args = ["--unattended", "--allow-localhost"];
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } }).to_string();
    let named = |served: &Served| {
        let bearer = served.bearer();
        let port = served.port;
        let init = init.clone();
        async move {
            let (status, head, body) = post_to(
                port,
                "/mcp/task",
                &[("Authorization", &bearer), ("Conch-Task", "nightly-prices")],
                &init,
            )
            .await;
            (
                status,
                header(&head, "mcp-session-id").map(str::to_owned),
                body,
            )
        }
    };

    let mut served = Served::start(home.path(), &args).await;
    let (status, session, body) = named(&served).await;
    assert_eq!(status, 200, "{body}");
    let session = session.expect("a session id");
    let cart = server.url("cookie-jar.html?set=basket-42");
    assert_eq!(jar(&served, &session, &cart).await, "who=basket-42");
    // Moved on, so reopening the tab can't set the cookie again.
    let seen = server.url("cookie-jar.html?seen-basket");
    assert_eq!(jar(&served, &session, &seen).await, "who=basket-42");
    let (status, _, body) = named(&served).await;
    assert_eq!(status, 409, "a second session with a running name: {body}");
    assert!(body.contains("is running already"), "{body}");

    // Ctrl-C: the gateway sets the errand aside and exits.
    let pid = served.child.id().expect("running");
    let stopped = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(stopped.success());
    tokio::time::timeout(Duration::from_secs(30), served.child.wait())
        .await
        .expect("the gateway stops within 30 s")
        .expect("it exits");
    let sealed = std::fs::read(home.path().join("browser.errands.secrets.json"))
        .expect("the set-aside errand is sealed on disk");
    assert!(!String::from_utf8_lossy(&sealed).contains("basket-42"));

    served = Served::start(home.path(), &args).await;
    let (status, session, body) = named(&served).await;
    assert_eq!(status, 200, "{body}");
    let session = session.expect("a session id");
    let tabs = json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "browser_tabs", "arguments": { "action": "list" } } });
    let (_, _, body) = served.send(&session, &[], &tabs).await;
    assert!(body.contains("cookie-jar.html?seen-basket"), "{body}");
    assert_eq!(
        jar(&served, &session, &server.url("cookie-jar.html")).await,
        "who=basket-42"
    );
    // An unnamed task is another errand: signed out.
    let other = served.initialize_at("/mcp/task", "2025-06-18").await;
    assert_eq!(
        jar(&served, &other, &server.url("cookie-jar.html")).await,
        ""
    );
    drop(served);
}

/// BE-5, ERR-12: SIGTERM stops `serve` as Ctrl-C does, promptly even while a client holds
/// its event stream open: the pretend Steel session the call made is released and the
/// gateway exits with success.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn be_5_sigterm_stops_serve_and_releases_its_steel_session_with_a_stream_open() {
    use conch_fixtures::browser::Standalone;
    use conch_fixtures::cloud::{Flavour, PretendCloud};
    let server = FixtureServer::start().await.unwrap();
    let standalone = Standalone::start().expect("a standalone Chromium");
    let cloud = PretendCloud::start(
        Flavour::SteelCloud("st-key-1".to_owned()),
        standalone.port(),
    )
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let (ok, out, err) = crate::backend::backend(
        home.path(),
        &[
            "set",
            "steel",
            "--url",
            &cloud.base(),
            "--key-env",
            "ST_KEY",
        ],
        &[("ST_KEY", "st-key-1")],
    )
    .await;
    assert!(ok, "{out} {err}");
    let mut served = Served::start(home.path(), &["--unattended", "--allow-localhost"]).await;
    let session = served.initialize("2025-06-18").await;
    let (status, _events) = open_stream(&served, &session).await;
    assert_eq!(status, 200);
    let open = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "browser_open", "arguments": { "url": server.url("basic.html") } } });
    let (_, _, body) = served.send(&session, &[], &open).await;
    assert!(body.contains("Hello from the fixtures"), "{body}");
    assert_eq!(cloud.created().len(), 1);
    assert!(cloud.released().is_empty());
    crate::backend::send_signal(&served.child, libc::SIGTERM);
    let status = tokio::time::timeout(Duration::from_secs(15), served.child.wait())
        .await
        .expect("the gateway stops promptly on SIGTERM")
        .expect("wait");
    assert!(status.success(), "{status}");
    assert_eq!(cloud.released(), ["sess-1"]);
}

/// HAND-8 (issue 28): the HTTP session deleted while its payment handoff waits ends the
/// wait at once, and so does a deleted session's site question waiting on the panel: the
/// call in flight returns within a few seconds instead of waiting for a person nobody
/// waits for.
#[tokio::test(flavor = "multi_thread")]
async fn hand_8_a_deleted_session_ends_its_waiting_handoff_and_question_at_once() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let served = Served::start(home.path(), &["--allow-localhost"]).await;
    for (file, waits) in [("payment.html", "handoff"), ("counter.html", "question")] {
        let session = served.initialize("2025-06-18").await;
        let open = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "browser_open", "arguments": { "url": server.url(file) } } });
        let (status, _, body) = served.send(&session, &[], &open).await;
        assert_eq!(status, 200, "{body}");
        let call = if waits == "handoff" {
            json!({ "name": "browser_handoff", "arguments": { "reason": "Please pay for the order." } })
        } else {
            let answer: Value = serde_json::from_str(&body).expect("JSON");
            let page = answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default();
            let add = crate::support::ref_of(page, "button \"Add\"");
            json!({ "name": "browser_click", "arguments": { "ref": add } })
        };
        let call = json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call });
        let (port, bearer, id) = (served.port, served.bearer(), session.clone());
        let waiting = tokio::spawn(async move {
            let headers = [
                ("Authorization", bearer.as_str()),
                ("Mcp-Session-Id", id.as_str()),
            ];
            post(port, &headers, &call).await
        });
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(!waiting.is_finished(), "the {waits} did not wait");
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", served.port))
            .await
            .expect("the gateway listens");
        let request = format!(
            "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: {}\r\nMcp-Session-Id: {session}\r\nConnection: close\r\n\r\n",
            served.port,
            served.bearer()
        );
        stream.write_all(request.as_bytes()).await.expect("write");
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer).await;
        let answer = String::from_utf8_lossy(&answer);
        assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
        let ended = tokio::time::timeout(Duration::from_secs(5), waiting).await;
        assert!(
            ended.is_ok(),
            "the {waits} still waits 5 s after its session was deleted"
        );
    }
}

/// A new-era (2026-07-28) request: its version and capabilities in `_meta`.
fn modern(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

/// The headers a new-era POST carries for `message`, and the token.
pub(crate) fn modern_headers(served: &Served, message: &Value) -> Vec<(String, String)> {
    let mut headers = vec![
        ("Authorization".to_owned(), served.bearer()),
        ("MCP-Protocol-Version".to_owned(), "2026-07-28".to_owned()),
        (
            "Mcp-Method".to_owned(),
            message["method"].as_str().unwrap_or_default().to_owned(),
        ),
    ];
    if let Some(name) = message["params"]["name"].as_str() {
        headers.push(("Mcp-Name".to_owned(), name.to_owned()));
    }
    headers
}

/// Posts a new-era `message` to `path` with `headers`; gives (status, head, the
/// response: the JSON body, or the event stream's message with an id).
pub(crate) async fn post_modern(
    served: &Served,
    path: &str,
    headers: &[(String, String)],
    message: &Value,
) -> (u16, String, Value) {
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let (status, head, body) = post_to(served.port, path, &headers, &message.to_string()).await;
    let answer = if head.contains("content-type: text/event-stream") {
        body.lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .filter_map(|data| serde_json::from_str::<Value>(data).ok())
            .find(|m| m.get("id").is_some())
            .unwrap_or_else(|| panic!("no response on the stream: {body}"))
    } else {
        serde_json::from_str(&body).unwrap_or_else(|_| panic!("not JSON: {body}"))
    };
    (status, head, answer)
}

/// Issue 31: the new era over HTTP needs no `initialize` and opens no session; its
/// headers are checked against the body (`-32020`, 400), a version it does not speak is
/// `-32022` (400) naming the versions, `ping` is gone (404), and the old era's
/// `initialize` still opens a session beside it.
#[tokio::test(flavor = "multi_thread")]
async fn issue_31_new_era_http_checks_its_headers_and_needs_no_session() {
    let home = tempfile::tempdir().unwrap();
    let served = Served::start(home.path(), &[]).await;
    let discover = modern(1, "server/discover", json!({}));
    let headers = modern_headers(&served, &discover);

    let (status, head, answer) = post_modern(&served, "/mcp", &headers, &discover).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["supportedVersions"][0], "2026-07-28");
    assert_eq!(answer["result"]["resultType"], "complete");
    assert!(
        header(&head, "mcp-session-id").is_none(),
        "no session: {head}"
    );

    // Each header missing, or saying other than the body.
    for (drop, replace) in [
        ("MCP-Protocol-Version", None),
        ("Mcp-Method", None),
        ("Mcp-Method", Some("tools/list")),
        ("MCP-Protocol-Version", Some("2025-11-25")),
    ] {
        let mut changed: Vec<(String, String)> =
            headers.iter().filter(|(n, _)| n != drop).cloned().collect();
        if let Some(value) = replace {
            changed.push((drop.to_owned(), value.to_owned()));
        }
        let (status, _, answer) = post_modern(&served, "/mcp", &changed, &discover).await;
        assert_eq!(status, 400, "{drop} {replace:?}: {answer}");
        assert_eq!(answer["error"]["code"], -32020, "{answer}");
        assert_eq!(answer["id"], 1);
    }
    // Mcp-Name must name the body's tool; its Base64 form is read.
    let call = modern(
        2,
        "tools/call",
        json!({ "name": "browser_tabs", "arguments": { "action": "list" } }),
    );
    let mut named = modern_headers(&served, &call);
    named.retain(|(n, _)| n != "Mcp-Name");
    let (status, _, answer) = post_modern(&served, "/mcp", &named, &call).await;
    assert_eq!(
        (status, answer["error"]["code"].clone()),
        (400, json!(-32020))
    );
    named.push(("Mcp-Name".to_owned(), "browser_open".to_owned()));
    let (status, _, answer) = post_modern(&served, "/mcp", &named, &call).await;
    assert_eq!(
        (status, answer["error"]["code"].clone()),
        (400, json!(-32020))
    );
    named.pop();
    // "browser_tabs" in Base64.
    named.push((
        "Mcp-Name".to_owned(),
        "=?base64?YnJvd3Nlcl90YWJz?=".to_owned(),
    ));
    let (status, _, answer) = post_modern(&served, "/mcp", &named, &call).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");

    // A version this server does not speak.
    let mut old = modern(3, "tools/list", json!({}));
    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let mut old_headers = modern_headers(&served, &old);
    old_headers.retain(|(n, _)| n != "MCP-Protocol-Version");
    old_headers.push(("MCP-Protocol-Version".to_owned(), "2099-01-01".to_owned()));
    let (status, _, answer) = post_modern(&served, "/mcp", &old_headers, &old).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["code"], -32022);
    assert_eq!(answer["error"]["data"]["supported"][4], "2024-11-05");

    // The new era has no ping.
    let ping = modern(4, "ping", json!({}));
    let (status, _, answer) =
        post_modern(&served, "/mcp", &modern_headers(&served, &ping), &ping).await;
    assert_eq!(
        (status, answer["error"]["code"].clone()),
        (404, json!(-32601))
    );

    // The lists carry the handle argument, ttlMs and cacheScope.
    let list = modern(5, "tools/list", json!({}));
    let (status, _, answer) =
        post_modern(&served, "/mcp", &modern_headers(&served, &list), &list).await;
    assert_eq!(status, 200);
    assert_eq!(answer["result"]["cacheScope"], "private");
    assert!(answer["result"]["ttlMs"].as_u64().is_some());
    assert_eq!(
        answer["result"]["tools"][0]["inputSchema"]["properties"]["conversation"]["type"],
        "string"
    );

    // The old era beside it, unchanged.
    let session = served.initialize("2025-11-25").await;
    let (status, _, body) = served
        .send(
            &session,
            &[],
            &json!({ "jsonrpc": "2.0", "id": 6, "method": "ping" }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = served
        .send(
            &session,
            &[],
            &json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/list" }),
        )
        .await;
    assert_eq!(status, 200);
    assert!(
        !body.contains("\"conversation\""),
        "no handle in the old era"
    );
}

/// Issue 31, ERR-1: over new-era HTTP a conversation is a handle: a call without one
/// starts a conversation (a task's at `/mcp/task`) and its result names the handle;
/// passing it continues that conversation, whichever path; a forged handle is refused.
#[tokio::test(flavor = "multi_thread")]
async fn issue_31_a_conversation_handle_carries_a_task_across_calls() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let served = Served::start(home.path(), &["--unattended", "--allow-localhost"]).await;
    let open = |id: i64, url: String, handle: Option<&str>| {
        let mut arguments = json!({ "url": url });
        if let Some(handle) = handle {
            arguments["conversation"] = json!(handle);
        }
        modern(
            id,
            "tools/call",
            json!({ "name": "browser_open", "arguments": arguments }),
        )
    };
    let text = |answer: &Value| -> String {
        answer["result"]["content"]
            .as_array()
            .unwrap_or_else(|| panic!("{answer}"))
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect()
    };
    let mut handles = Vec::new();
    let mut firsts = Vec::new();
    // A result's characters as its text is read: its blocks joined by a blank line.
    let joined_chars = |answer: &Value| -> u64 {
        let blocks: Vec<&str> = answer["result"]["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .collect();
        blocks.join("\n\n").chars().count() as u64
    };
    for who in ["a", "b"] {
        let call = open(1, server.url(&format!("cookie-jar.html?set={who}")), None);
        let (status, head, answer) =
            post_modern(&served, "/mcp/task", &modern_headers(&served, &call), &call).await;
        assert_eq!(status, 200, "{answer}");
        assert!(head.contains("text/event-stream"), "{head}");
        assert!(header(&head, "mcp-session-id").is_none());
        assert!(
            text(&answer).contains(&format!("jar: [who={who}]")),
            "{answer}"
        );
        let handle = answer["result"]["_meta"]["dev.conch/conversation"]
            .as_str()
            .unwrap_or_else(|| panic!("no handle: {answer}"))
            .to_owned();
        assert!(text(&answer).contains(&handle));
        // Issue 31: the handle's sentence counts in the result's cost and the total.
        let cost = &answer["result"]["_meta"]["dev.conch/cost"];
        assert_eq!(cost["chars"], joined_chars(&answer), "{answer}");
        assert_eq!(cost["total"]["chars"], cost["chars"], "{answer}");
        firsts.push(cost["chars"].as_u64().unwrap_or_default());
        handles.push(handle);
    }
    assert_ne!(handles[0], handles[1]);
    for (who, handle) in ["a", "b"].iter().zip(&handles) {
        let call = open(2, server.url("cookie-jar.html"), Some(handle));
        let (status, _, answer) =
            post_modern(&served, "/mcp", &modern_headers(&served, &call), &call).await;
        assert_eq!(status, 200, "{answer}");
        let said = text(&answer);
        assert!(said.contains(&format!("jar: [who={who}]")), "{said}");
        assert!(!said.contains("Conversation: cv_"), "named once: {said}");
        let first = firsts[usize::from(*who == "b")];
        let cost = &answer["result"]["_meta"]["dev.conch/cost"];
        assert_eq!(
            cost["total"]["chars"],
            first + joined_chars(&answer),
            "{answer}"
        );
    }
    let mut forged = handles[0].clone();
    let last = forged.pop().unwrap();
    forged.push(if last == 'a' { 'b' } else { 'a' });
    for bad in [forged.as_str(), "cv_guess_guess", "mcp-http-1"] {
        let call = open(3, server.url("cookie-jar.html"), Some(bad));
        let (status, _, answer) =
            post_modern(&served, "/mcp", &modern_headers(&served, &call), &call).await;
        assert_eq!(status, 200);
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        assert!(
            text(&answer).contains("not one this gateway gave"),
            "{answer}"
        );
    }
}

/// Ends MCP session `session` (DELETE `/mcp`); gives the answer's status line.
async fn delete_session(served: &Served, session: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", served.port))
        .await
        .expect("the gateway listens");
    let request = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: {}\r\nMcp-Session-Id: {session}\r\nConnection: close\r\n\r\n",
        served.port,
        served.bearer()
    );
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    String::from_utf8_lossy(&answer)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// Issue 32 (ERR-15, TOOL-11): on a pool at its cap, a call that carries a progressToken
/// hears where it stands in line ("Waiting for a free browser: next in line.") on the MCP
/// progress channel at once, not only a generic note seconds later; once a place frees
/// the call goes on and its result says it waited.
#[tokio::test(flavor = "multi_thread")]
async fn err_15_a_call_waiting_for_a_pool_place_hears_the_waiting_sentence_as_progress() {
    let server = FixtureServer::start().await.unwrap();
    let a = conch_fixtures::browser::Standalone::start().expect("a standalone Chromium");
    let home = tempfile::tempdir().unwrap();
    let address = a.http();
    let set = [
        "set",
        "pool",
        "--endpoint",
        address.as_str(),
        "--per-endpoint",
        "1",
    ];
    let (ok, out, err) = crate::backend::backend(home.path(), &set, &[]).await;
    assert!(ok, "{out} {err}");
    let served = Served::start(home.path(), &["--allow-localhost"]).await;
    let url = server.url("basic.html");
    let first = served.initialize("2025-06-18").await;
    let open = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "browser_open", "arguments": { "url": url } } });
    let (status, _, body) = served.send(&first, &[], &open).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Hello from the fixtures"), "{body}");

    let second = served.initialize("2025-06-18").await;
    let (status, mut events) = open_stream(&served, &second).await;
    assert_eq!(status, 200);
    let call = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "browser_open", "arguments": { "url": url }, "_meta": { "progressToken": "place-1" } } });
    let (port, bearer, id) = (served.port, served.bearer(), second.clone());
    let waiting = tokio::spawn(async move {
        post(
            port,
            &[("Authorization", &bearer), ("Mcp-Session-Id", &id)],
            &call,
        )
        .await
    });
    let progress = tokio::time::timeout(Duration::from_millis(2500), async {
        loop {
            match events.recv().await {
                Some(message) if message["method"] == "notifications/progress" => {
                    return Some(message);
                }
                Some(_) => {}
                None => return None,
            }
        }
    })
    .await
    .ok()
    .flatten();
    let progress = progress.expect("no progress within 2.5 s");
    assert_eq!(progress["params"]["progressToken"], "place-1", "{progress}");
    assert_eq!(
        progress["params"]["message"], "Waiting for a free browser: next in line.",
        "{progress}"
    );
    assert!(!waiting.is_finished(), "it did not wait for a place");

    // The first conversation ends: its place goes to the one in line.
    assert!(delete_session(&served, &first).await.contains("204"));
    let (status, _, body) = tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .expect("served once the place freed")
        .unwrap();
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    let text: String = answer["result"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect();
    assert!(text.contains("Waited for a free browser"), "{text}");
}
