//! The person's door (PROTO-13): the sign-in link, the live socket's checks (LIVE-18,
//! AMB-2), and handoffs that tell the person and wait for them (HAND-1, HAND-7).

use std::path::Path;
use std::time::Duration;

use conch_fixtures::FixtureServer;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::support::{StdioClient, gateway};

/// A running `conch-gateway mcp` with its person's door.
pub(crate) struct Watched {
    pub(crate) client: StdioClient,
    /// The person's port.
    pub(crate) port: u16,
    /// The one-time sign-in code printed at start.
    code: String,
    /// The rest of standard error, line by line.
    pub(crate) stderr: mpsc::UnboundedReceiver<String>,
}

impl Watched {
    /// Starts `mcp --panel-port 0 --allow-localhost` with `args`, and reads the sign-in
    /// link from standard error.
    pub(crate) async fn start(home: &Path, args: &[&str]) -> Watched {
        let mut all = vec!["--allow-localhost"];
        all.extend_from_slice(args);
        Watched::start_bare(home, &all).await
    }

    /// Starts `mcp --panel-port 0` with `args` only, and reads the sign-in link from
    /// standard error.
    pub(crate) async fn start_bare(home: &Path, args: &[&str]) -> Watched {
        Watched::start_with(home, args, &[]).await
    }

    /// As [`Watched::start_bare`], with `env` set for the gateway.
    pub(crate) async fn start_with(home: &Path, args: &[&str], env: &[(&str, &Path)]) -> Watched {
        let mut all = vec!["mcp", "--panel-port", "0"];
        all.extend_from_slice(args);
        let mut command = gateway(home, &all);
        command.envs(env.iter().copied());
        let mut client = StdioClient::start(command).await;
        let pipe = client.child.stderr.take().expect("stderr is piped");
        let (tx, mut stderr) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = BufReader::new(pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if tx.send(line).is_err() {
                    // Nobody reads any more; keep draining so the gateway never blocks.
                    while let Ok(Some(_)) = lines.next_line().await {}
                    return;
                }
            }
        });
        let link = wait_for_line(&mut stderr, "watch and take over at ").await;
        let link = link
            .split("watch and take over at ")
            .nth(1)
            .expect("the link follows")
            .to_owned();
        let rest = link
            .strip_prefix("http://127.0.0.1:")
            .unwrap_or_else(|| panic!("a loopback link: {link}"));
        let (port, query) = rest
            .split_once("/signin?code=")
            .unwrap_or_else(|| panic!("a sign-in link: {link}"));
        Watched {
            client,
            port: port.parse().expect("a port"),
            code: query.to_owned(),
            stderr,
        }
    }

    /// Signs in; gives the session's two factors.
    pub(crate) async fn sign_in(&self) -> Signed {
        signed_in(self.port, &self.code).await
    }
}

/// A session's two factors (LIVE-18): the `Cookie` header's value and the token the
/// panel's page keeps in its own storage.
pub(crate) struct Signed {
    pub(crate) cookie: String,
    pub(crate) token: String,
}

/// The header that carries the session's token.
pub(crate) const TOKEN: &str = "X-Conch-Session";

impl Signed {
    /// The headers of an API call from the panel: the cookie and the token.
    pub(crate) fn headers(&self) -> [(&str, &str); 2] {
        [("Cookie", &self.cookie), (TOKEN, &self.token)]
    }

    /// The live socket's subprotocols, as the panel offers them.
    pub(crate) fn protocols(&self) -> String {
        format!("conch, conch.session.{}", self.token)
    }
}

/// Signs in with `code` on `port`: the 303's cookie, and the token in its `Location`'s
/// fragment.
pub(crate) async fn signed_in(port: u16, code: &str) -> Signed {
    let (status, head, _) = get(port, &format!("/signin?code={code}"), &[]).await;
    assert_eq!(status, 303, "{head}");
    let cookie = header(&head, "set-cookie").expect("a cookie");
    let cookie = cookie.split(';').next().expect("a pair").to_owned();
    let token = header(&head, "location")
        .and_then(|l| l.strip_prefix("/#session="))
        .unwrap_or_else(|| panic!("the token in the fragment: {head}"))
        .to_owned();
    Signed { cookie, token }
}

/// A fixture server, a temp home, a gateway in `mcp` whose agent opened `file`, and the
/// page's first look.
pub(crate) async fn opened(file: &str) -> (FixtureServer, tempfile::TempDir, Watched, String) {
    let pages = FixtureServer::start().await.expect("fixture server");
    let home = tempfile::tempdir().expect("temp home");
    let mut watched = Watched::start(home.path(), &[]).await;
    let (page, error) = watched
        .client
        .call("browser_open", json!({ "url": pages.url(file) }))
        .await;
    assert!(!error, "{page}");
    (pages, home, watched, page)
}

/// The next line of standard error holding `needle`, within 60 s.
pub(crate) async fn wait_for_line(
    stderr: &mut mpsc::UnboundedReceiver<String>,
    needle: &str,
) -> String {
    tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let line = stderr.recv().await.expect("the gateway is still running");
            if line.contains(needle) {
                return line;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no line with {needle:?} on standard error within 60 s"))
}

/// One HTTP/1.1 GET of `path` with `headers` (a `Host` of 127.0.0.1:PORT unless given);
/// gives (status, lowercased head, body). An upgrade's head is read, then the
/// connection is dropped.
pub(crate) async fn get(port: u16, path: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("the person's door listens");
    let mut request = format!("GET {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        let n = tokio::time::timeout(Duration::from_secs(30), stream.read(&mut buf))
            .await
            .expect("an answer within 30 s")
            .expect("read");
        assert!(n > 0, "the connection closed before the head ended");
        answer.extend_from_slice(&buf[..n]);
        if let Some(at) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
    };
    let head = String::from_utf8_lossy(&answer[..head_end]).to_lowercase();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let length: usize = header(&head, "content-length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(0);
    let mut body = answer[head_end + 4..].to_vec();
    while status != 101 && body.len() < length {
        let n = tokio::time::timeout(Duration::from_secs(30), stream.read(&mut buf))
            .await
            .expect("the body within 30 s")
            .expect("read");
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    (status, head, String::from_utf8_lossy(&body).into_owned())
}

/// The value of header `name` in a lowercased head.
pub(crate) fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines()
        .find_map(|line| line.strip_prefix(&format!("{name}: ")))
        .map(str::trim)
}

/// The headers of a WebSocket upgrade.
const UPGRADE: [(&str, &str); 4] = [
    ("Connection", "Upgrade"),
    ("Upgrade", "websocket"),
    ("Sec-WebSocket-Version", "13"),
    ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
];

/// Upgrades to the live socket of `conversation` with `extra` headers; gives (status,
/// body).
async fn upgrade(port: u16, conversation: &str, extra: &[(&str, &str)]) -> (u16, String) {
    let mut headers: Vec<(&str, &str)> = UPGRADE.to_vec();
    headers.extend_from_slice(extra);
    let path = if conversation.is_empty() {
        "/api/browser/live".to_owned()
    } else {
        format!("/api/browser/live?conversation={conversation}")
    };
    let (status, _, body) = get(port, &path, &headers).await;
    (status, body)
}

/// A live socket, as the panel holds it.
pub(crate) type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Joins `conversation`'s live view with the session (cookie and token) and the
/// gateway's own Origin.
pub(crate) async fn join(port: u16, signed: &Signed, conversation: &str) -> Socket {
    let mut request = format!("ws://127.0.0.1:{port}/api/browser/live?conversation={conversation}")
        .into_client_request()
        .expect("a request");
    let headers = request.headers_mut();
    headers.insert(
        "Origin",
        format!("http://127.0.0.1:{port}").parse().expect("a value"),
    );
    headers.insert("Cookie", signed.cookie.parse().expect("a value"));
    headers.insert(
        "Sec-WebSocket-Protocol",
        signed.protocols().parse().expect("a value"),
    );
    let (socket, _) = tokio::time::timeout(
        Duration::from_secs(30),
        tokio_tungstenite::connect_async(request),
    )
    .await
    .expect("the live socket opens within 30 s")
    .expect("the live socket opens");
    socket
}

/// The next text message whose `type` is `kind`, skipping frames and other events,
/// within 30 s.
pub(crate) async fn next_event(socket: &mut Socket, kind: &str) -> Value {
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match next_message(socket).await {
                Message::Text(text) => {
                    let event: Value = serde_json::from_str(&text).expect("events are JSON");
                    if event["type"] == kind {
                        return event;
                    }
                }
                Message::Close(frame) => panic!("the live socket closed: {frame:?}"),
                _ => {}
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {kind:?} event within 30 s"))
}

/// The live socket's next message; the socket must stay open.
pub(crate) async fn next_message(socket: &mut Socket) -> Message {
    socket
        .next()
        .await
        .expect("the live socket stays open")
        .expect("the live socket reads")
}

/// Sends `text` on the live socket.
pub(crate) async fn send(socket: &mut Socket, text: String) {
    socket
        .send(Message::Text(text.into()))
        .await
        .expect("the live socket takes a message");
}

/// LIVE-18 (AMB-2): the live socket upgrades only with the gateway's own Origin, its own
/// Host and the session cookie; each other case gets 403 with a sentence before any
/// upgrade, and a missing conversation gets 400.
#[tokio::test(flavor = "multi_thread")]
async fn live_18_a_foreign_origin_gets_403() {
    let home = tempfile::tempdir().unwrap();
    let watched = Watched::start(home.path(), &[]).await;
    let port = watched.port;
    let signed = watched.sign_in().await;
    let cookie = signed.cookie.clone();
    let protocols = signed.protocols();
    let session = [
        ("Cookie", cookie.as_str()),
        ("Sec-WebSocket-Protocol", protocols.as_str()),
    ];
    let with = |extra: &[(&'static str, &str)]| -> Vec<(&'static str, String)> {
        session
            .iter()
            .chain(extra)
            .map(|(n, v)| (*n, (*v).to_owned()))
            .collect()
    };
    let up = |headers: Vec<(&'static str, String)>| async move {
        let borrowed: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        upgrade(port, "mcp-stdio", &borrowed).await
    };
    let own = format!("http://127.0.0.1:{port}");
    let own_localhost = format!("http://localhost:{port}");

    // A foreign Origin, with the session: 403.
    let (status, body) = up(with(&[("Origin", "http://evil.example")])).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("Forbidden"), "{body}");
    // Another local port is another origin.
    let other_port = format!("http://127.0.0.1:{}", port.wrapping_add(1));
    let (status, _) = up(with(&[("Origin", &other_port)])).await;
    assert_eq!(status, 403);
    // No Origin: 403.
    let (status, _) = up(with(&[])).await;
    assert_eq!(status, 403);
    // No session, a made-up cookie, or the cookie without the token: 401.
    let (status, body) = up(vec![("Origin", own.clone())]).await;
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("sign in"), "{body}");
    let made_up = "conch_session=00ff".to_owned();
    let (status, _) = up(vec![
        ("Origin", own.clone()),
        ("Cookie", made_up),
        ("Sec-WebSocket-Protocol", protocols.clone()),
    ])
    .await;
    assert_eq!(status, 401);
    let (status, _) = up(vec![("Origin", own.clone()), ("Cookie", cookie.clone())]).await;
    assert_eq!(status, 401, "the cookie alone is not a session");
    let (status, _) = up(vec![
        ("Origin", own.clone()),
        ("Sec-WebSocket-Protocol", protocols.clone()),
    ])
    .await;
    assert_eq!(status, 401, "the token alone is not a session");
    // A rebound name (DNS rebinding): 403 even with the session and its own Origin.
    let rebound = format!("evil.example:{port}");
    let (status, body) = up(with(&[("Host", &rebound), ("Origin", &own)])).await;
    assert_eq!(status, 403, "{body}");
    // No conversation: 400.
    let mut none: Vec<(&str, &str)> = session.to_vec();
    none.push(("Origin", &own));
    let (status, _) = upgrade(port, "", &none).await;
    assert_eq!(status, 400);
    // The gateway's own origin, by either name, with the session: 101, speaking `conch`.
    let (status, body) = up(with(&[("Origin", &own)])).await;
    assert_eq!(status, 101, "{body}");
    let localhost = format!("localhost:{port}");
    let (status, body) = up(with(&[("Host", &localhost), ("Origin", &own_localhost)])).await;
    assert_eq!(status, 101, "{body}");
    watched.client.finish().await;
}

/// PROTO-13 (AMB-2): the sign-in code works once, and its cookie is HttpOnly and
/// SameSite=Strict; the home page tells a signed-in person where the live socket is, and
/// anyone else to use the link.
#[tokio::test(flavor = "multi_thread")]
async fn proto_13_the_sign_in_code_works_once() {
    let home = tempfile::tempdir().unwrap();
    let watched = Watched::start(home.path(), &[]).await;
    let port = watched.port;

    let (status, _, body) = get(port, "/", &[]).await;
    assert_eq!(status, 200);
    assert!(body.contains("Print a new sign-in link"), "{body}");
    assert!(
        !body.contains("signin?code="),
        "no link in the page: {body}"
    );

    // A wrong code: 403, and the right one still works after it.
    let (status, _, body) = get(port, "/signin?code=0123", &[]).await;
    assert_eq!(status, 403, "{body}");
    assert!(!body.trim().is_empty());
    assert!(body.contains("Print a new sign-in link"), "{body}");
    let (status, _, body) = get(port, "/signin", &[]).await;
    assert_eq!(status, 200, "no code: the sign-in page");
    assert!(body.contains("Print a new sign-in link"), "{body}");
    // A rebound name can't use the code.
    let (status, _, _) = get(
        port,
        &format!("/signin?code={}", watched.code),
        &[("Host", &format!("evil.example:{port}"))],
    )
    .await;
    assert_eq!(status, 403);

    let (status, head, _) = get(port, &format!("/signin?code={}", watched.code), &[]).await;
    assert_eq!(status, 303, "{head}");
    let token = header(&head, "location")
        .and_then(|l| l.strip_prefix("/#session="))
        .unwrap_or_else(|| panic!("the token in the fragment: {head}"));
    assert_eq!(token.len(), 64, "{head}");
    let cookie = header(&head, "set-cookie").expect("a cookie");
    let attributes: Vec<&str> = cookie.split(';').map(str::trim).collect();
    let value = attributes[0]
        .strip_prefix(&format!("conch_session_{port}="))
        .unwrap_or_else(|| panic!("{cookie}"));
    assert_eq!(value.len(), 64, "{cookie}");
    assert!(attributes.contains(&"httponly"), "{cookie}");
    assert!(attributes.contains(&"samesite=strict"), "{cookie}");
    assert!(attributes.contains(&"path=/"), "{cookie}");

    // Used: 403.
    let (status, _, body) = get(port, &format!("/signin?code={}", watched.code), &[]).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("already used"), "{body}");
    assert!(
        body.contains("Print a new sign-in link"),
        "no dead end: {body}"
    );

    // The home page, signed in.
    let pair = format!("conch_session_{port}={value}");
    let (status, _, body) = get(port, "/", &[("Cookie", &pair)]).await;
    assert_eq!(status, 200);
    assert!(body.contains("/api/browser/live?conversation=ID"), "{body}");
    watched.client.finish().await;
}

/// PROTO-13: in `serve` the person's door shares the `/mcp` port, and prints its sign-in
/// link on that port.
#[tokio::test(flavor = "multi_thread")]
async fn proto_13_serve_has_the_persons_door_on_its_port() {
    let home = tempfile::tempdir().unwrap();
    let mut child = gateway(home.path(), &["serve", "--port", "0"])
        .spawn()
        .expect("the gateway starts");
    let stderr = child.stderr.take().expect("stderr is piped");
    let mut lines = BufReader::new(stderr).lines();
    let mut mcp_port = None;
    let link = loop {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("the gateway starts within 30 s")
            .expect("stderr is readable")
            .expect("the gateway prints its addresses");
        if let Some(rest) = line.split("MCP at http://127.0.0.1:").nth(1) {
            mcp_port = rest.split('/').next().and_then(|p| p.parse::<u16>().ok());
        }
        if let Some(link) = line.split("watch and take over at ").nth(1) {
            break link.to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let port = mcp_port.expect("the MCP line comes first");
    let code = link
        .strip_prefix(&format!("http://127.0.0.1:{port}/signin?code="))
        .unwrap_or_else(|| panic!("the link is on the MCP port: {link}"));
    let (status, head, _) = get(port, &format!("/signin?code={code}"), &[]).await;
    assert_eq!(status, 303, "{head}");
    // /mcp still wants its token.
    let (status, _, _) = get(port, "/mcp", &[("Accept", "text/event-stream")]).await;
    assert_eq!(status, 401);
    child.kill().await.expect("kill");
}

/// HAND-1, HAND-7: with the person's door open, browser_handoff tells the person on
/// standard error, with the link that opens the browser (`?browser=1`), and waits for
/// them instead of answering that nobody can take over.
#[tokio::test(flavor = "multi_thread")]
async fn hand_1_a_handoff_prints_the_link_and_waits_for_the_person() {
    let (_pages, _home, mut watched, _page) = opened("basic.html").await;
    let handoff = watched
        .client
        .send_request(
            "tools/call",
            json!({ "name": "browser_handoff", "arguments": { "reason": "Please sign in." } }),
        )
        .await;
    let line = wait_for_line(&mut watched.stderr, "Take over: ").await;
    let link = format!(
        "Take over: http://127.0.0.1:{}/?browser=1&conversation=mcp-stdio",
        watched.port
    );
    assert!(line.contains(&link), "{line}");
    assert!(line.contains("Please sign in."), "{line}");
    // Nobody hands back: no answer comes.
    let waited = tokio::time::timeout(Duration::from_secs(2), watched.client.next_message()).await;
    assert!(waited.is_err(), "the handoff answered: {waited:?}");
    // The person follows the link, watches, and hands back: the step returns.
    let cookie = watched.sign_in().await;
    let mut socket = join(watched.port, &cookie, "mcp-stdio").await;
    send(&mut socket, json!({ "type": "handback" }).to_string()).await;
    let answer = watched.client.next_message().await;
    assert_eq!(answer["id"], json!(handoff), "{answer}");
    let text: String = answer["result"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect();
    assert!(text.contains("I'm done"), "{answer}");
    watched.client.finish().await;
}

/// HAND-7: `--notify-command` runs the person's command with the title, and the body
/// with the take-over link.
#[tokio::test(flavor = "multi_thread")]
async fn hand_7_the_notify_command_gets_the_title_and_the_link() {
    let pages = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let script = home.path().join("notify.sh");
    let out = home.path().join("notified.txt");
    std::fs::write(
        &script,
        "#!/bin/sh\nout=\"$1\"; shift\nprintf '%s\\n' \"$@\" > \"$out.tmp\" && mv \"$out.tmp\" \"$out\"\n",
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let command = format!("{} {}", script.display(), out.display());
    let mut watched = Watched::start(home.path(), &["--notify-command", &command]).await;
    let (page, error) = watched
        .client
        .call("browser_open", json!({ "url": pages.url("basic.html") }))
        .await;
    assert!(!error, "{page}");
    watched
        .client
        .send_request(
            "tools/call",
            json!({ "name": "browser_handoff", "arguments": { "reason": "Please pay." } }),
        )
        .await;
    let mut written = String::new();
    for _ in 0..100 {
        if let Ok(text) = std::fs::read_to_string(&out) {
            written = text;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len(), 2, "{written:?}");
    assert_eq!(lines[0], "Conch needs you in the browser");
    assert!(lines[1].starts_with("Please pay."), "{written}");
    assert!(
        lines[1].ends_with(&format!(
            " http://127.0.0.1:{}/?browser=1&conversation=mcp-stdio",
            watched.port
        )),
        "{written}"
    );
    drop(watched.client);
}

/// NET-1, PROTO-13: in `mcp` the guard knows the person's port, so a page can't reach the
/// door even with `--allow-localhost`, and the refusal names no port (NET-10).
#[tokio::test(flavor = "multi_thread")]
async fn net_1_a_page_cant_reach_the_persons_door() {
    let home = tempfile::tempdir().unwrap();
    let mut watched = Watched::start(home.path(), &["--unattended"]).await;
    let door = format!("http://127.0.0.1:{}/", watched.port);
    let (text, error) = watched
        .client
        .call("browser_open", json!({ "url": door }))
        .await;
    assert!(error, "{text}");
    assert!(!text.contains(&watched.port.to_string()), "{text}");
    watched.client.finish().await;
}

/// PROTO-9 through the real socket: an unknown command, malformed JSON and a 70 KiB
/// message each get `{type:"error", message:"Invalid command"}` and the socket stays
/// open (a good command after them is still answered), and another watcher's socket is
/// unaffected.
#[tokio::test(flavor = "multi_thread")]
async fn proto_9_bad_live_messages_get_invalid_command_and_the_socket_stays_open() {
    let home = tempfile::tempdir().unwrap();
    let watched = Watched::start(home.path(), &[]).await;
    let cookie = watched.sign_in().await;
    let conversation = "mcp-stdio";
    let mut first = join(watched.port, &cookie, conversation).await;
    let mut second = join(watched.port, &cookie, conversation).await;
    let invalid = json!({ "type": "error", "message": "Invalid command" });

    send(&mut first, json!({ "type": "nope" }).to_string()).await;
    assert_eq!(next_event(&mut first, "error").await, invalid);
    send(&mut first, "{\"type\": \"size\", ".to_owned()).await;
    assert_eq!(next_event(&mut first, "error").await, invalid);
    let long = json!({ "type": "text", "text": "x".repeat(70 * 1024) }).to_string();
    assert!(long.len() > 64 * 1024);
    send(&mut first, long).await;
    assert_eq!(next_event(&mut first, "error").await, invalid);
    first
        .send(Message::Binary(vec![0xff, 0xfe, 0x00].into()))
        .await
        .expect("the live socket takes a message");
    assert_eq!(next_event(&mut first, "error").await, invalid);

    // Still open: a good command is answered (there is no tab t9 here).
    send(
        &mut first,
        json!({ "type": "tab", "tab": "t9" }).to_string(),
    )
    .await;
    let answer = next_event(&mut first, "error").await;
    assert!(
        answer["message"]
            .as_str()
            .unwrap_or_default()
            .contains("t9"),
        "{answer}"
    );
    // The other watcher was never touched, and is answered too.
    send(
        &mut second,
        json!({ "type": "tab", "tab": "t8" }).to_string(),
    )
    .await;
    let answer = next_event(&mut second, "error").await;
    assert!(
        answer["message"]
            .as_str()
            .unwrap_or_default()
            .contains("t8"),
        "{answer}"
    );
    watched.client.finish().await;
}

/// LIVE-1 in `mcp`: a watcher of the stdio conversation gets JPEG frames of the page the
/// agent opened.
#[tokio::test(flavor = "multi_thread")]
async fn live_1_a_watcher_gets_jpeg_frames_of_its_conversation() {
    let (_pages, _home, watched, _page) = opened("basic.html").await;
    let cookie = watched.sign_in().await;
    let mut socket = join(watched.port, &cookie, "mcp-stdio").await;
    let frame = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match socket.next().await {
                Some(Ok(Message::Binary(bytes))) => return bytes,
                Some(Ok(Message::Close(frame))) => panic!("the live socket closed: {frame:?}"),
                Some(Ok(_)) => {}
                other => panic!("the live socket ended: {other:?}"),
            }
        }
    })
    .await
    .expect("a frame within 10 s");
    assert!(frame.starts_with(&[0xff, 0xd8, 0xff]), "not a JPEG");
    watched.client.finish().await;
}

/// LIVE-14 in `mcp`: Stop on the live socket ends the agent's call in flight, which says
/// the person pressed Stop.
#[tokio::test(flavor = "multi_thread")]
async fn live_14_stop_on_the_live_socket_ends_the_call_in_flight() {
    let (_pages, _home, mut watched, _page) = opened("basic.html").await;
    let cookie = watched.sign_in().await;
    let mut socket = join(watched.port, &cookie, "mcp-stdio").await;
    let waiting = watched.client.start_waiting(30).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let started = std::time::Instant::now();
    send(&mut socket, json!({ "type": "stop" }).to_string()).await;
    let answer = watched.client.next_message().await;
    assert_eq!(answer["id"], json!(waiting), "{answer}");
    assert!(answer.to_string().contains("pressed Stop"), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "Stop took {:?}",
        started.elapsed()
    );
    watched.client.finish().await;
}

/// The answer to the tools/call request `id`, skipping notifications.
pub(crate) async fn answer_to(client: &mut StdioClient, id: i64) -> Value {
    tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let message = client.next_message().await;
            if message["id"] == json!(id) {
                return message;
            }
        }
    })
    .await
    .expect("the call is answered within 60 s")
}

/// A call's result text.
fn result_text(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// PERM-3, issue 14: a site question is a card on the panel; two tabs of the panel both
/// see it; This chat from one lets the agent's call complete, the other is told the card
/// closed, and a second answer gets "already answered".
#[tokio::test(flavor = "multi_thread")]
async fn perm_3_a_site_question_is_a_card_and_the_first_answer_wins() {
    let (_pages, _home, mut watched, page) = opened("counter.html").await;
    let add = crate::support::ref_of(&page, "button \"Add\"");
    let cookie = watched.sign_in().await;
    let mut first = join(watched.port, &cookie, "mcp-stdio").await;
    let mut second = join(watched.port, &cookie, "mcp-stdio").await;
    let call = watched
        .client
        .send_request(
            "tools/call",
            json!({ "name": "browser_click", "arguments": { "ref": add } }),
        )
        .await;
    let card = next_event(&mut first, "question").await;
    assert_eq!(card["kind"], "site", "{card}");
    assert_eq!(card["conversation"], "mcp-stdio");
    assert!(
        card["site"].as_str().unwrap().starts_with("127.0.0.1"),
        "{card}"
    );
    let labels: Vec<&str> = card["choices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["This chat", "Always", "No"]);
    let also = next_event(&mut second, "question").await;
    assert_eq!(also["id"], card["id"], "the second tab sees the same card");
    // The conversations API counts it.
    let (status, _, body) = get(
        watched.port,
        "/api/browser/conversations",
        &cookie.headers(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let list: Value = serde_json::from_str(&body).unwrap();
    let stdio = &list["conversations"][0];
    assert_eq!(stdio["id"], "mcp-stdio", "{list}");
    assert_eq!(stdio["questions"], 1, "{list}");
    assert_eq!(stdio["watchers"], 2, "{list}");
    assert!(
        stdio["tabs"][0]["url"]
            .as_str()
            .unwrap()
            .ends_with("counter.html")
    );

    let id = card["id"].as_str().unwrap();
    send(
        &mut first,
        json!({ "type": "answer", "id": id, "choice": "thisChat" }).to_string(),
    )
    .await;
    let answered = next_event(&mut first, "answered").await;
    assert_eq!(answered["id"], id);
    let closed = next_event(&mut second, "questionClosed").await;
    assert_eq!(closed["id"], id);
    let result = answer_to(&mut watched.client, call).await;
    let text = result_text(&result);
    assert_eq!(result["result"]["isError"], json!(false), "{text}");
    assert!(text.contains("Count: 1"), "{text}");
    send(
        &mut second,
        json!({ "type": "answer", "id": id, "choice": "no" }).to_string(),
    )
    .await;
    let stale = next_event(&mut second, "error").await;
    assert_eq!(stale["message"], "That question was already answered.");
    watched.client.finish().await;
}

/// HS-2, issue 14: a high-stakes card shows the button's own words; No leaves the page
/// untouched and the agent is told the person declined. Without the cookie the
/// conversations API is refused.
#[tokio::test(flavor = "multi_thread")]
async fn hs_2_a_high_stakes_card_shows_place_order_and_no_keeps_the_page() {
    let pages = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut watched = Watched::start(home.path(), &[]).await;
    let (page, error) = watched
        .client
        .call(
            "browser_open",
            json!({ "url": pages.url("basic-form.html") }),
        )
        .await;
    assert!(!error, "{page}");
    let order = crate::support::ref_of(&page, "Place order");
    let (status, _, _) = get(watched.port, "/api/browser/conversations", &[]).await;
    assert_eq!(status, 401, "no session, no list");
    let cookie = watched.sign_in().await;
    let mut socket = join(watched.port, &cookie, "mcp-stdio").await;
    let call = watched
        .client
        .send_request(
            "tools/call",
            json!({ "name": "browser_click", "arguments": { "ref": order } }),
        )
        .await;
    let site = next_event(&mut socket, "question").await;
    assert_eq!(site["kind"], "site", "{site}");
    send(
        &mut socket,
        json!({ "type": "answer", "id": site["id"], "choice": "thisChat" }).to_string(),
    )
    .await;
    let stakes = next_event(&mut socket, "question").await;
    assert_eq!(stakes["kind"], "highStakes", "{stakes}");
    assert!(
        stakes.to_string().contains("Place order"),
        "the card shows the element's own words: {stakes}"
    );
    assert!(
        stakes["thumbnail"]
            .as_str()
            .is_some_and(|t| t.starts_with("data:image/png;base64,")),
        "the card has a picture of the button"
    );
    send(
        &mut socket,
        json!({ "type": "answer", "id": stakes["id"], "choice": "no" }).to_string(),
    )
    .await;
    let result = answer_to(&mut watched.client, call).await;
    let text = result_text(&result);
    assert!(text.contains("declined"), "{text}");
    let (title, _) = watched.client.call("browser_read", json!({})).await;
    assert!(!title.contains("Sent"), "the form was sent: {title}");
    watched.client.finish().await;
}

/// Issue 14: a socket that took over and closes hands the browser back, so the agent's
/// waiting call goes on.
#[tokio::test(flavor = "multi_thread")]
async fn hand_8_a_closed_socket_mid_takeover_gives_the_wheel_back() {
    let (_pages, _home, mut watched, _page) = opened("basic.html").await;
    let cookie = watched.sign_in().await;
    let mut socket = join(watched.port, &cookie, "mcp-stdio").await;
    send(&mut socket, json!({ "type": "takeover" }).to_string()).await;
    let status = loop {
        let status = next_event(&mut socket, "status").await;
        if status["driver"] == "person" {
            break status;
        }
    };
    assert_eq!(status["driver"], "person");
    let call = watched
        .client
        .send_request(
            "tools/call",
            json!({ "name": "browser_read", "arguments": {} }),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    socket.close(None).await.expect("the socket closes");
    drop(socket);
    let result = answer_to(&mut watched.client, call).await;
    let text = result_text(&result);
    assert!(text.contains("The person used the browser"), "{text}");
    // Issue 28: after a short grace, and the result says why.
    assert!(text.contains("live view closed"), "{text}");
    watched.client.finish().await;
}

/// LIVE-6, DATA-8: a watcher hears each agent step with its thumbnail, which the panel
/// fetches signed in; without the cookie, or for anything but a plain shot name, nothing.
#[tokio::test(flavor = "multi_thread")]
async fn live_6_a_step_comes_with_a_thumbnail_the_panel_can_fetch() {
    let (_pages, _home, mut watched, page) = opened("counter.html").await;
    let cookie = watched.sign_in().await;
    let mut socket = join(watched.port, &cookie, "mcp-stdio").await;
    // The site question comes first: This chat.
    let add = crate::support::ref_of(&page, "button \"Add\"");
    let call = watched
        .client
        .send_request(
            "tools/call",
            json!({ "name": "browser_click", "arguments": { "ref": add } }),
        )
        .await;
    let card = next_event(&mut socket, "question").await;
    send(
        &mut socket,
        json!({ "type": "answer", "id": card["id"], "choice": "thisChat" }).to_string(),
    )
    .await;
    // The open's own step may reach a watcher that joined just after it (its thumbnail is
    // shot after the result); the click's comes next.
    let mut step = next_event(&mut socket, "step").await;
    if step["kind"] == "navigate" {
        step = next_event(&mut socket, "step").await;
    }
    assert_eq!(step["kind"], "click", "{step}");
    assert_eq!(step["caption"], "Clicking “Add”", "{step}");
    let name = step["thumbnail"]
        .as_str()
        .and_then(|t| t.strip_prefix("browser/shots/"))
        .unwrap_or_else(|| panic!("a thumbnail: {step}"))
        .to_owned();
    let _ = answer_to(&mut watched.client, call).await;
    let path = format!("/api/browser/shots/{name}");
    let (status, head, body) = get(watched.port, &path, &cookie.headers()).await;
    assert_eq!(status, 200, "{head}");
    assert_eq!(header(&head, "content-type"), Some("image/jpeg"));
    assert!(!body.is_empty());
    let (status, _, _) = get(watched.port, &path, &[]).await;
    assert_eq!(status, 401, "no session, no thumbnail");
    let (status, _, _) = get(watched.port, &path, &[("Cookie", &cookie.cookie)]).await;
    assert_eq!(status, 401, "the cookie alone, no thumbnail");
    for bad in ["..%2Fgateway.token", "gateway.token", "x.png", "..jpg"] {
        let (status, _, _) = get(
            watched.port,
            &format!("/api/browser/shots/{bad}"),
            &cookie.headers(),
        )
        .await;
        assert_eq!(status, 404, "{bad}");
    }
    watched.client.finish().await;
}

/// Runs `conch-gateway signin` with `args`; gives (success, stdout, stderr).
async fn signin_command(args: &[&str]) -> (bool, String, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_conch-gateway"))
        .arg("signin")
        .args(args)
        .output()
        .await
        .expect("the command runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// AMB-2 (LIVE-18): `conch-gateway signin --home DIR` prints a fresh one-time link of
/// the running gateway, found through `<home>/panel.door` (owner-only), without a
/// restart; the door's endpoint wants that file's secret and no page's Origin. With no
/// gateway running, the command says so in one sentence.
#[tokio::test(flavor = "multi_thread")]
async fn amb_2_conch_gateway_signin_prints_a_fresh_link_for_the_running_gateway() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().to_str().expect("a UTF-8 path");
    let (ok, out, err) = signin_command(&["--home", dir]).await;
    assert!(!ok, "no gateway yet: {out}");
    assert!(err.contains("no running gateway"), "{err}");

    let watched = Watched::start(home.path(), &[]).await;
    let door = home.path().join("panel.door");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&door)
            .expect("panel.door")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "owner-only");
    }
    let (ok, out, err) = signin_command(&["--home", dir]).await;
    assert!(ok, "{err}");
    let link = out
        .lines()
        .find(|l| l.starts_with("http://"))
        .unwrap_or_else(|| panic!("a link: {out}"));
    let code = link
        .strip_prefix(&format!("http://127.0.0.1:{}/signin?code=", watched.port))
        .unwrap_or_else(|| panic!("a link to the running door: {link}"));
    assert_ne!(code, watched.code, "a fresh code");
    let signed = signed_in(watched.port, code).await;
    let (status, _, _) = get(
        watched.port,
        "/api/browser/conversations",
        &signed.headers(),
    )
    .await;
    assert_eq!(status, 200);
    // The first link still works: a new one does not undo it.
    signed_in(watched.port, &watched.code).await;

    // Without the file's secret, or from a page, the endpoint gives nothing.
    let secret: Value =
        serde_json::from_str(&std::fs::read_to_string(&door).unwrap()).expect("JSON");
    let bearer = format!("Bearer {}", secret["secret"].as_str().expect("a secret"));
    let own = format!("http://127.0.0.1:{}", watched.port);
    for headers in [
        vec![],
        vec![("Authorization", "Bearer 00ff")],
        vec![("Authorization", bearer.as_str()), ("Origin", own.as_str())],
    ] {
        let (status, _, body) = crate::support::door_request(
            watched.port,
            "POST",
            "/api/browser/signin-code",
            &headers,
            "",
        )
        .await;
        assert_eq!(status, 401, "{headers:?}: {body}");
        assert!(!body.contains("code="), "{body}");
    }
    watched.client.finish().await;
    assert!(!door.exists(), "the gateway removes panel.door as it stops");
    let (ok, _, err) = signin_command(&["--home", dir, "--bogus"]).await;
    assert!(!ok && err.contains("--bogus"), "{err}");
}

/// AMB-2 (LIVE-18): the sign-in page's button asks the gateway for a fresh link: it is
/// printed on standard error, never in the answer; only the gateway's own origin may ask.
#[tokio::test(flavor = "multi_thread")]
async fn amb_2_the_sign_in_page_gets_a_fresh_link_printed_not_sent() {
    let home = tempfile::tempdir().unwrap();
    let mut watched = Watched::start(home.path(), &[]).await;
    let port = watched.port;
    let own = format!("http://127.0.0.1:{port}");
    for origin in [vec![], vec![("Origin", "http://127.0.0.1:1")]] {
        let (status, _, body) =
            crate::support::door_request(port, "POST", "/api/browser/signin-link", &origin, "")
                .await;
        assert_eq!(status, 403, "{origin:?}: {body}");
    }
    let (status, _, body) = crate::support::door_request(
        port,
        "POST",
        "/api/browser/signin-link",
        &[("Origin", &own)],
        "",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("standard error"), "{body}");
    assert!(!body.contains("code="), "{body}");
    let line = wait_for_line(&mut watched.stderr, "sign in at ").await;
    let code = line.split("signin?code=").nth(1).expect("a code").trim();
    assert!(!body.contains(code), "{body}");
    signed_in(port, code).await;
    watched.client.finish().await;
}

/// LIVE-18 (AMB-2): with `--panel-idle 0.001` (3.6 s), a session unused that long ends:
/// the API refuses it and `/` shows the sign-in page again; a session in use stays.
#[tokio::test(flavor = "multi_thread")]
async fn live_18_a_panel_session_ends_after_the_idle_time_of_panel_idle() {
    let home = tempfile::tempdir().unwrap();
    let watched = Watched::start(home.path(), &["--panel-idle", "0.001"]).await;
    let port = watched.port;
    let signed = watched.sign_in().await;
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let (status, _, _) = get(port, "/api/browser/conversations", &signed.headers()).await;
        assert_eq!(status, 200, "in use, so not idle");
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    let (status, _, body) = get(port, "/api/browser/conversations", &signed.headers()).await;
    assert_eq!(status, 401, "idle too long: {body}");
    let (status, _, body) = get(port, "/", &[("Cookie", &signed.cookie)]).await;
    assert_eq!(status, 200);
    assert!(body.contains("Print a new sign-in link"), "{body}");
    watched.client.finish().await;
}

/// LIVE-18 (AMB-2): Sign out (`DELETE /api/browser/session`, from the panel's own origin
/// with both factors) ends that session: its live socket closes at once and its API calls
/// get 401, while another browser's session and socket go on.
#[tokio::test(flavor = "multi_thread")]
async fn live_18_sign_out_closes_that_sessions_live_socket_only() {
    let home = tempfile::tempdir().unwrap();
    let watched = Watched::start(home.path(), &[]).await;
    let port = watched.port;
    let leaving = watched.sign_in().await;
    let staying = signed_in(port, &fresh_code(home.path()).await).await;
    let mut gone = join(port, &leaving, "mcp-stdio").await;
    let mut kept = join(port, &staying, "mcp-stdio").await;
    let own = format!("http://127.0.0.1:{port}");
    let mut headers = leaving.headers().to_vec();
    // From another origin, even with both factors: refused, nothing ends.
    headers.push(("Origin", "http://127.0.0.1:1"));
    let (status, _, _) =
        crate::support::door_request(port, "DELETE", "/api/browser/session", &headers, "").await;
    assert_eq!(status, 403);
    headers.pop();
    headers.push(("Origin", &own));
    let (status, head, body) =
        crate::support::door_request(port, "DELETE", "/api/browser/session", &headers, "").await;
    assert_eq!(status, 200, "{body}");
    assert!(
        head.contains(&format!("set-cookie: conch_session_{port}=;")),
        "{head}"
    );
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match gone.next().await {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                Some(Ok(_)) => {}
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the signed-out socket is still open");
    let (status, _, _) = get(port, "/api/browser/conversations", &leaving.headers()).await;
    assert_eq!(status, 401);
    let (status, _, _) = get(port, "/api/browser/conversations", &staying.headers()).await;
    assert_eq!(status, 200);
    send(
        &mut kept,
        json!({ "type": "size", "width": 800, "height": 600 }).to_string(),
    )
    .await;
    let still = tokio::time::timeout(Duration::from_secs(2), kept.next()).await;
    assert!(
        !matches!(still, Ok(None | Some(Err(_)) | Some(Ok(Message::Close(_))))),
        "the other session's socket closed: {still:?}"
    );
    watched.client.finish().await;
}

/// A fresh sign-in code of the gateway running on `home`, from `conch-gateway signin`.
pub(crate) async fn fresh_code(home: &Path) -> String {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_conch-gateway"))
        .args(["signin", "--home"])
        .arg(home)
        .output()
        .await
        .expect("signin runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.split("code=")
        .nth(1)
        .map(|c| c.trim().to_owned())
        .unwrap_or_else(|| panic!("a link: {text}"))
}

/// HAND-5, HAND-8 (issue 28): the MCP client going away (stdin closed) while a payment
/// handoff waits ends the wait at once: the watcher is told `agentLeft`, and `conch-gateway
/// mcp` exits within a few seconds with its Chromium.
#[tokio::test(flavor = "multi_thread")]
async fn hand_8_a_closed_stdin_ends_a_waiting_handoff_and_the_gateway_exits_with_its_browser() {
    let (_pages, home, mut watched, _page) = opened("payment.html").await;
    let cookie = watched.sign_in().await;
    let mut socket = join(watched.port, &cookie, "mcp-stdio").await;
    watched
        .client
        .send_request(
            "tools/call",
            json!({ "name": "browser_handoff", "arguments": { "reason": "Please pay for the order." } }),
        )
        .await;
    wait_for_line(&mut watched.stderr, "Take over: ").await;
    until_driver(&mut socket, "person").await;
    let profile = home.path().display().to_string();
    assert!(
        !crate::http::processes_with(&profile).is_empty(),
        "the gateway's Chromium runs"
    );
    let stopped = watched.client.finish_within(Duration::from_secs(8)).await;
    assert!(stopped, "the gateway still runs 8 s after stdin closed");
    let left = next_event(&mut socket, "agentLeft").await;
    assert_eq!(left, json!({ "type": "agentLeft" }));
    for _ in 0..50 {
        if crate::http::processes_with(&profile).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the gateway's Chromium outlived it");
}

/// Reads status events until one says `driver` drives.
async fn until_driver(socket: &mut Socket, driver: &str) -> Value {
    loop {
        let status = next_event(socket, "status").await;
        if status["driver"] == driver {
            return status;
        }
    }
}

/// HAND-5, LIVE-8 (issue 28): a payment handoff is not ended by the person's sockets: one
/// takes over (pointer input) and closes, a second connects and drops, well past the
/// takeover grace, and the handoff still waits; only I'm done ends it.
#[tokio::test(flavor = "multi_thread")]
async fn hand_5_a_payment_handoff_outlives_closed_and_dropped_sockets_and_ends_only_on_im_done() {
    let (_pages, _home, mut watched, _page) = opened("payment.html").await;
    let cookie = watched.sign_in().await;
    let handoff = watched
        .client
        .send_request(
            "tools/call",
            json!({ "name": "browser_handoff", "arguments": { "reason": "Please pay for the order." } }),
        )
        .await;
    wait_for_line(&mut watched.stderr, "Take over: ").await;
    // The first window takes over with its pointer, then closes.
    let mut first = join(watched.port, &cookie, "mcp-stdio").await;
    send(
        &mut first,
        json!({ "type": "size", "width": 800, "height": 500 }).to_string(),
    )
    .await;
    send(&mut first, json!({ "type": "takeover" }).to_string()).await;
    send(
        &mut first,
        json!({ "type": "pointer", "action": "move", "x": 10, "y": 10 }).to_string(),
    )
    .await;
    until_driver(&mut first, "person").await;
    first.close(None).await.expect("the socket closes");
    drop(first);
    // A second window connects and drops without a close (a lost network).
    let mut second = join(watched.port, &cookie, "mcp-stdio").await;
    until_driver(&mut second, "person").await;
    drop(second);
    // Well past the takeover grace: the handoff still waits.
    let waited = tokio::time::timeout(Duration::from_secs(6), watched.client.next_message()).await;
    assert!(waited.is_err(), "the handoff ended by itself: {waited:?}");
    let mut third = join(watched.port, &cookie, "mcp-stdio").await;
    let status = until_driver(&mut third, "person").await;
    assert_eq!(status["handoff"], "Please pay for the order.", "{status}");
    send(&mut third, json!({ "type": "handback" }).to_string()).await;
    let answer = answer_to(&mut watched.client, handoff).await;
    assert!(result_text(&answer).contains("I'm done"), "{answer}");
    watched.client.finish().await;
}
