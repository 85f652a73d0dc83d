//! `conch-gateway serve`: MCP over streamable HTTP, behind the token and the Origin check
//! (TOOL-3, AMB-2).

use std::time::Duration;

use conch_fixtures::FixtureServer;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::support::gateway;

/// One HTTP/1.1 POST to `/mcp`; gives (status, headers, body).
async fn post(port: u16, headers: &[(&str, &str)], body: &Value) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("the gateway listens");
    let body = body.to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.expect("read");
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_lowercase(), body.to_owned())
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
    let mut child = gateway(
        home.path(),
        &["serve", "--port", "0", "--unattended", "--allow-localhost"],
    )
    .spawn()
    .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let port: u16 = line
        .split("http://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line}"));
    let token = std::fs::read_to_string(home.path().join("gateway.token")).unwrap();
    let bearer = format!("Bearer {token}");
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
