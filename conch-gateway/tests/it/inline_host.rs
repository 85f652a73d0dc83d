//! The live view inline in the chat in a real browser (issue 31, LIVE-8, LIVE-10, PERM-3):
//! a host page on 127.0.0.1 built on the official MCP Apps host bridge
//! (`@modelcontextprotocol/ext-apps`' `AppBridge`, pinned; `cargo xtask test` installs it
//! and names its `node_modules` in `CONCH_EXT_APPS`) embeds `ui://conch/live` from a real
//! gateway's `resources/read` in a sandboxed iframe and carries the view's tool calls to
//! the gateway over stdio, as a chat client's backend would. The person, through
//! WebDriver, signs in, answers the site question's card, watches frames of a fixture
//! page, takes over, types, and hands back; axe-core finds nothing in the view.

use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Path as UrlPath, State};
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use conch_fixtures::FixtureServer;
use fantoccini::Locator;
use fantoccini::actions::{
    InputSource, KeyAction, KeyActions, MOUSE_BUTTON_LEFT, MouseActions, PointerAction,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::Mutex;

use crate::support::{StdioClient, gateway};
use crate::webdriver::Person;

/// The host page: the bridge from ext-apps' own build, its dependencies by an import map.
const HOST: &str = r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>A chat host</title>
<script type="importmap">
{ "imports": {
  "@modelcontextprotocol/client": "/m/@modelcontextprotocol/client/dist/index.mjs",
  "@modelcontextprotocol/client/_shims": "/m/@modelcontextprotocol/client/dist/shimsBrowser.mjs",
  "@modelcontextprotocol/core": "/m/@modelcontextprotocol/core/dist/index.mjs",
  "@modelcontextprotocol/core/internal": "/m/@modelcontextprotocol/core/dist/internal.mjs",
  "zod/v4": "/m/zod/v4/index.js",
  "zod/v4/core": "/m/zod/v4/core/index.js",
  "eventsource": "/m/eventsource/dist/index.js",
  "eventsource-parser": "/m/eventsource-parser/dist/index.js",
  "eventsource-parser/stream": "/m/eventsource-parser/dist/stream.js",
  "pkce-challenge": "/m/pkce-challenge/dist/index.browser.js"
} }
</script>
</head>
<body>
<main><h1>A chat</h1><div id="slot"></div></main>
<script type="module">
  import { AppBridge, PostMessageTransport } from '/m/@modelcontextprotocol/ext-apps/dist/src/app-bridge.js';
  window.hostLog = [];
  window.hostHandles = [];
  const rpc = async (method, params) => {
    const answer = await fetch('/rpc', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ method, params }) });
    const message = await answer.json();
    if (message.error) throw new Error(message.error.message);
    return message.result;
  };
  try {
    const read = await rpc('resources/read', { uri: 'ui://conch/live' });
    const iframe = document.createElement('iframe');
    iframe.setAttribute('sandbox', 'allow-scripts allow-forms');
    iframe.title = 'Conch live view';
    iframe.style.width = '900px';
    iframe.style.height = '1100px';
    document.getElementById('slot').append(iframe);
    const bridge = new AppBridge(null, { name: 'Test host', version: '1' },
      { serverTools: {}, openLinks: {} },
      { hostContext: { theme: 'light', displayMode: 'inline', platform: 'web' } });
    bridge.oncalltool = async (params) => {
      window.hostLog.push(params.name);
      window.hostHandles.push((params.arguments && params.arguments.conversation) || null);
      return rpc('tools/call', params);
    };
    bridge.onopenlink = async () => ({});
    bridge.oninitialized = async () => {
      // As a chat host does: the view gets the result of the call that opened it.
      const opened = await (await fetch('/opened')).json();
      if (opened) await bridge.sendToolResult(opened);
      window.appInitialized = true;
    };
    await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
    window.bridge = bridge;
    iframe.srcdoc = read.contents[0].text;
  } catch (e) {
    window.hostError = String(e && e.stack || e);
  }
</script>
</body>
</html>
"#;

/// How the host's backend reaches the gateway, as a chat client does.
#[derive(Clone)]
enum Backend {
    /// Over stdio, in the old era (one conversation per process).
    Stdio(Arc<Mutex<StdioClient>>),
    /// Over streamable HTTP in the new era (2026-07-28): no session; the view's calls
    /// carry their conversation's handle themselves.
    Http(Arc<crate::http::Served>),
}

impl Backend {
    /// One request to the MCP server: the whole JSON-RPC answer.
    async fn request(&self, method: &str, params: Value) -> Value {
        match self {
            Backend::Stdio(client) => client.lock().await.request(method, params).await,
            Backend::Http(served) => {
                let mut params = params;
                params["_meta"] = json!({
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": apps(),
                });
                let message =
                    json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
                let mut headers = crate::http::modern_headers(served, &message);
                if let Some(uri) = message["params"]["uri"].as_str() {
                    headers.push(("Mcp-Name".to_owned(), uri.to_owned()));
                }
                let (_, _, answer) =
                    crate::http::post_modern(served, "/mcp", &headers, &message).await;
                answer
            }
        }
    }
}

/// The MCP Apps extension in a client's capabilities.
fn apps() -> Value {
    json!({ "extensions": { "io.modelcontextprotocol/ui": { "mimeTypes": ["text/html;profile=mcp-app"] } } })
}

/// The host's backend: the MCP client, the bridge's files, and the result of the
/// agent's call that opened the view (given to the view as its tool result).
#[derive(Clone)]
struct Host {
    backend: Backend,
    modules: PathBuf,
    opened: Value,
}

/// One of the installed packages' files, as the page's module loader wants it.
async fn module(State(host): State<Host>, UrlPath(path): UrlPath<String>) -> Response {
    let relative = Path::new(&path);
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return StatusCode::NOT_FOUND.into_response();
    }
    match tokio::fs::read(host.modules.join(relative)).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, "text/javascript")], bytes).into_response(),
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

/// One request of the host to the MCP server: the whole JSON-RPC answer.
async fn rpc(State(host): State<Host>, body: String) -> Response {
    let Ok(request) = serde_json::from_str::<Value>(&body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let method = request["method"].as_str().unwrap_or_default().to_owned();
    let answer = host
        .backend
        .request(&method, request["params"].clone())
        .await;
    (
        [(header::CONTENT_TYPE, "application/json")],
        answer.to_string(),
    )
        .into_response()
}

/// Serves the host page for `host` on 127.0.0.1; gives its address and the server's task.
async fn serve_host(
    host: Host,
) -> (
    std::net::SocketAddr,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let opened = host.opened.clone();
    let app = Router::new()
        .route("/host.html", get(|| async { Html(HOST) }))
        .route("/m/{*path}", get(module))
        .route("/rpc", post(rpc))
        .route(
            "/opened",
            get(move || async move {
                (
                    [(header::CONTENT_TYPE, "application/json")],
                    opened.to_string(),
                )
            }),
        )
        .with_state(host);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let address = listener.local_addr().expect("an address");
    let served = tokio::spawn(async move { axum::serve(listener, app).await });
    (address, served)
}

/// The person opens the host page at `address` and enters the view's frame once the
/// bridge and the view initialized.
async fn enter_view(person: &Person, address: std::net::SocketAddr) {
    person
        .client
        .goto(&format!("http://{address}/host.html"))
        .await
        .expect("the host page opens");
    wait_for(
        person,
        "window.hostError || (window.appInitialized && 'ok')",
        "the bridge and the view to initialize",
    )
    .await;
    let error = person
        .client
        .execute("return window.hostError || null", vec![])
        .await
        .expect("a script runs");
    assert_eq!(error, Value::Null, "the host failed: {error}");
    person
        .client
        .enter_frame(0)
        .await
        .expect("the view's frame");
}

/// The person signs in to the view with `link`.
async fn sign_in(person: &Person, link: &str) {
    person
        .client
        .find(Locator::Id("code"))
        .await
        .expect("the code's field")
        .send_keys(link)
        .await
        .expect("the link is typed");
    click(person, "//button[normalize-space()='Sign in']").await;
    wait_for(
        person,
        "!document.getElementById('live').hidden",
        "the live view after the sign-in",
    )
    .await;
}

/// The installed ext-apps' `node_modules`: `CONCH_EXT_APPS`, else the copy `cargo xtask
/// test` installs under `target/ext-apps/`.
fn ext_apps() -> PathBuf {
    let modules = std::env::var_os("CONCH_EXT_APPS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/ext-apps/node_modules"),
        PathBuf::from,
    );
    assert!(
        modules
            .join("@modelcontextprotocol/ext-apps/dist/src/app-bridge.js")
            .is_file(),
        "@modelcontextprotocol/ext-apps is missing from {}: run cargo xtask test, which installs it, or set CONCH_EXT_APPS.",
        modules.display()
    );
    modules
}

/// Runs `script` in the current frame until it gives something truthy (within 30 s).
async fn wait_for(person: &Person, script: &str, what: &str) -> Value {
    let started = Instant::now();
    loop {
        let value = person
            .client
            .execute(&format!("return ({script});"), vec![])
            .await
            .unwrap_or(Value::Null);
        if !matches!(&value, Value::Null | Value::Bool(false)) && value != json!("") {
            return value;
        }
        if started.elapsed() > Duration::from_secs(30) {
            let body = person
                .client
                .execute("return document.body.innerText", vec![])
                .await
                .unwrap_or(Value::Null);
            panic!("waited 30 s for {what}; the frame says: {body}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Clicks the element at `xpath` in the current frame.
async fn click(person: &Person, xpath: &str) {
    person
        .client
        .find(Locator::XPath(xpath))
        .await
        .unwrap_or_else(|e| panic!("no {xpath}: {e}"))
        .click()
        .await
        .unwrap_or_else(|e| panic!("{xpath} can't be clicked: {e}"));
}

/// Types `text` on whatever has the focus, key by key, as the person.
async fn type_keys(person: &Person, text: &str) {
    let mut actions = KeyActions::new("keyboard".to_owned());
    for c in text.chars() {
        actions = actions
            .then(KeyAction::Down { value: c })
            .then(KeyAction::Up { value: c });
    }
    person
        .client
        .perform_actions(actions)
        .await
        .expect("the keys are typed");
}

/// The person, holding the wheel in the inline view, types `typed`, waits for the view
/// to have sent it (it sends the person's input in order), and presses I'm done.
async fn types_and_hands_back(person: &Person, typed: &str) {
    type_keys(person, typed).await;
    wait_for(
        person,
        "document.getElementById('status').textContent.includes('wheel')",
        "the person's status",
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    click(person, "//button[normalize-space()=\"I'm done\"]").await;
    wait_for(
        person,
        "!document.getElementById('takeover').hidden",
        "Take over again after I'm done",
    )
    .await;
}

/// Issue 31, LIVE-8, LIVE-9, LIVE-10, PERM-3: the inline live view in a host built on
/// ext-apps' AppBridge, connected to a real gateway; a press on its screen lands on the
/// page where the screen showed it.
#[tokio::test(flavor = "multi_thread")]
async fn live_10_the_inline_view_works_in_an_ext_apps_host() {
    let modules = ext_apps();
    let fixtures = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut client = StdioClient::start_with(
        gateway(
            home.path(),
            &["mcp", "--panel-port", "0", "--allow-localhost"],
        ),
        apps(),
    )
    .await;
    // The person's sign-in link, from standard error.
    let stderr = client.child.stderr.take().unwrap();
    let link = Arc::new(StdMutex::new(None::<String>));
    let reader = tokio::spawn({
        let link = Arc::clone(&link);
        async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some((_, found)) = line.split_once("watch and take over at ") {
                    link.lock().unwrap().get_or_insert(found.trim().to_owned());
                }
            }
        }
    });
    // The agent opens the page and clicks its field: the first act on the site waits
    // on the site question's card (PERM-3).
    let opened = client
        .request(
            "tools/call",
            json!({ "name": "browser_open", "arguments": { "url": fixtures.url("person-typing.html") } }),
        )
        .await;
    let page = opened["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let field = crate::support::ref_of(&page, "Password");
    let open_id = client
        .send_request(
            "tools/call",
            json!({ "name": "browser_click", "arguments": { "ref": field } }),
        )
        .await;
    let client = Arc::new(Mutex::new(client));
    let host = Host {
        backend: Backend::Stdio(Arc::clone(&client)),
        modules,
        opened: opened["result"].clone(),
    };
    let (address, served) = serve_host(host).await;

    let person = Person::start().await;
    enter_view(&person, address).await;
    person.assert_accessible("at the sign-in").await;

    // The person signs in with the link from standard error.
    let link = link.lock().unwrap().clone().expect("a sign-in link");
    sign_in(&person, &link).await;

    // The site question's card: answered in the view.
    wait_for(
        &person,
        "document.querySelector('#cards .card button')",
        "the site question's card",
    )
    .await;
    person.assert_accessible("with a question card").await;
    click(
        &person,
        "//div[@id='cards']//button[normalize-space()='This chat']",
    )
    .await;
    // Frames of the fixture page.
    wait_for(
        &person,
        "document.getElementById('frame').src.startsWith('data:image/jpeg;base64,') && document.getElementById('frame').naturalWidth > 0",
        "a frame of the page",
    )
    .await;
    let started = Instant::now();
    while !client
        .lock()
        .await
        .transcript
        .contains(&format!("\"id\":{open_id},"))
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the agent's click never finished"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // The person takes over, types into the page's focused field and hands back.
    click(&person, "//button[normalize-space()='Take over']").await;
    wait_for(
        &person,
        "!document.getElementById('done').hidden && document.activeElement.id === 'keys'",
        "I'm done, and the keys' field focused",
    )
    .await;
    person.assert_accessible("while the person drives").await;
    let typed = "hello inline";
    types_and_hands_back(&person, typed).await;
    let letters = format!("{} letters typed.", typed.len());
    let started = Instant::now();
    loop {
        let (page, _) = client.lock().await.call("browser_read", json!({})).await;
        if page.contains(&letters) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the person's typing never reached the page: {page}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }

    // LIVE-9: a press on the inline screen takes over and lands on the page where it
    // shows. The agent opens a page that says where it was pressed; the person presses
    // the screen off its centre.
    person
        .client
        .execute(
            "window.frameBefore = document.getElementById('frame').src; return true;",
            vec![],
        )
        .await
        .unwrap();
    client
        .lock()
        .await
        .open(&fixtures.url("pressed-at.html"))
        .await;
    wait_for(
        &person,
        "document.getElementById('frame').src !== window.frameBefore && document.getElementById('frame').naturalWidth > 0",
        "a frame of the new page",
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // Where the press lands in the picture as drawn (whole, centred in the frame's box),
    // as the view itself sees it.
    person
        .client
        .execute(
            "window.pressedAt = null; \
             document.getElementById('screen').addEventListener('pointerdown', (e) => { \
               const f = document.getElementById('frame'); const r = f.getBoundingClientRect(); \
               const s = Math.min(r.width / f.naturalWidth, r.height / f.naturalHeight); \
               const w = f.naturalWidth * s; const h = f.naturalHeight * s; \
               window.pressedAt = [(e.clientX - r.left - (r.width - w) / 2) / w, \
                                   (e.clientY - r.top - (r.height - h) / 2) / h]; \
             }, { capture: true, once: true }); return true;",
            vec![],
        )
        .await
        .unwrap();
    let frame = person.client.find(Locator::Id("frame")).await.unwrap();
    let press = MouseActions::new("mouse".to_owned())
        .then(PointerAction::MoveToElement {
            element: frame,
            duration: None,
            x: 120.0,
            y: 60.0,
        })
        .then(PointerAction::Down {
            button: MOUSE_BUTTON_LEFT,
        })
        .then(PointerAction::Up {
            button: MOUSE_BUTTON_LEFT,
        });
    person.client.perform_actions(press).await.unwrap();
    let pressed = wait_for(&person, "window.pressedAt", "the view's press").await;
    let (fx, fy) = (
        pressed[0].as_f64().unwrap_or(-1.0),
        pressed[1].as_f64().unwrap_or(-1.0),
    );
    assert!(
        (0.05..0.95).contains(&fx) && (0.05..0.95).contains(&fy),
        "{pressed}"
    );
    wait_for(
        &person,
        "!document.getElementById('done').hidden",
        "I'm done after the press took over",
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    click(&person, "//button[normalize-space()=\"I'm done\"]").await;
    let started = Instant::now();
    let (x, y, page_width, page_height) = loop {
        let (page, _) = client.lock().await.call("browser_read", json!({})).await;
        let numbers: Option<Vec<f64>> = page
            .split("Pressed at ")
            .nth(1)
            .and_then(|rest| rest.split('.').next())
            .map(|said| {
                said.split([',', ' ', 'x'])
                    .filter_map(|n| n.parse().ok())
                    .collect()
            });
        if let Some(numbers) = numbers.filter(|n| n.len() == 4) {
            break (numbers[0], numbers[1], numbers[2], numbers[3]);
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the press never reached the page: {page}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let (want_x, want_y) = (fx * page_width, fy * page_height);
    assert!(
        (x - want_x).abs() <= 4.0 && (y - want_y).abs() <= 4.0,
        "pressed at {x},{y} of {page_width}x{page_height}; the screen showed {want_x:.1},{want_y:.1}"
    );
    person.client.enter_parent_frame().await.unwrap();
    let log = person
        .client
        .execute("return window.hostLog", vec![])
        .await
        .unwrap();
    for tool in [
        "live_sign_in",
        "live_look",
        "live_answer",
        "live_take_over",
        "live_input",
        "live_hand_back",
    ] {
        assert!(
            log.as_array().unwrap().iter().any(|t| t == tool),
            "the view never called {tool}: {log}"
        );
    }
    person.finish().await;
    served.abort();
    reader.abort();
}

/// Issue 31, LIVE-8, LIVE-15: the inline view in the same ext-apps host, its backend a
/// new-era (2026-07-28) HTTP client with no protocol session: the view learns its
/// conversation's handle from the tool result the host gives it (the agent's first call,
/// which started the conversation) and passes it with every call, so it signs in,
/// shows frames, takes over, types and hands back in its own conversation, and never
/// in another conversation open on the same page.
#[tokio::test(flavor = "multi_thread")]
async fn issue_31_the_inline_view_works_in_an_ext_apps_host_over_new_era_http() {
    let modules = ext_apps();
    let fixtures = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let served = Arc::new(
        crate::http::Served::start(home.path(), &["--allow-localhost", "--trust", "full"]).await,
    );
    let backend = Backend::Http(Arc::clone(&served));
    let open = json!({ "name": "browser_open", "arguments": { "url": fixtures.url("person-typing.html") } });
    let handle_of = |answer: &Value| -> String {
        answer["result"]["_meta"]["dev.conch/conversation"]
            .as_str()
            .unwrap_or_else(|| panic!("no handle: {answer}"))
            .to_owned()
    };
    // Another conversation on the same page: the view must never act there.
    let other = handle_of(&backend.request("tools/call", open.clone()).await);
    // The agent's own: its first call opens the page, and the view with it.
    let opened = backend.request("tools/call", open).await;
    let mine = handle_of(&opened);
    let page = opened["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let field = crate::support::ref_of(&page, "Password");
    let clicked = backend
        .request(
            "tools/call",
            json!({ "name": "browser_click", "arguments": { "ref": field, "conversation": mine } }),
        )
        .await;
    assert_eq!(clicked["result"]["isError"], false, "{clicked}");
    let host = Host {
        backend: backend.clone(),
        modules,
        opened: opened["result"].clone(),
    };
    let (address, server) = serve_host(host).await;

    let person = Person::start().await;
    enter_view(&person, address).await;
    sign_in(&person, &crate::live::fresh_code(home.path()).await).await;
    wait_for(
        &person,
        "document.getElementById('frame').src.startsWith('data:image/jpeg;base64,') && document.getElementById('frame').naturalWidth > 0",
        "a frame of the page",
    )
    .await;
    click(&person, "//button[normalize-space()='Take over']").await;
    wait_for(
        &person,
        "!document.getElementById('done').hidden && document.activeElement.id === 'keys'",
        "I'm done, and the keys' field focused",
    )
    .await;
    let typed = "hello new era";
    types_and_hands_back(&person, typed).await;
    let read = |conversation: &str| json!({ "name": "browser_read", "arguments": { "conversation": conversation } });
    let letters = format!("{} letters typed.", typed.len());
    let started = Instant::now();
    loop {
        let answer = backend.request("tools/call", read(&mine)).await;
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if text.contains(&letters) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the person's typing never reached the page: {text}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let untouched = backend.request("tools/call", read(&other)).await;
    assert!(
        untouched.to_string().contains("0 letters typed."),
        "the other conversation's page was typed into: {untouched}"
    );
    person.client.enter_parent_frame().await.unwrap();
    let handles = person
        .client
        .execute("return window.hostHandles", vec![])
        .await
        .unwrap();
    let handles = handles.as_array().cloned().unwrap_or_default();
    assert!(handles.len() > 3, "{handles:?}");
    assert!(
        handles.iter().all(|h| h == mine.as_str()),
        "a view call without its handle: {handles:?}"
    );
    person.finish().await;
    server.abort();
}

/// The inline view in an ext-apps host over stdio, beside the panel: the agent opened
/// `page` with `--trust full`; the person signed in to the view, which shows a frame.
/// Gives the fixtures, the home, the agent's client, the panel's port, the person in the
/// view's frame, and the host's and standard error's tasks.
async fn view_beside_the_panel(
    page: &str,
) -> (
    FixtureServer,
    tempfile::TempDir,
    Arc<Mutex<StdioClient>>,
    u16,
    Person,
    Vec<tokio::task::JoinHandle<()>>,
) {
    let modules = ext_apps();
    let fixtures = FixtureServer::start().await.expect("the fixtures serve");
    let home = tempfile::tempdir().expect("a temp home");
    let (mut client, link, _said, reader) =
        crate::inline_app::start_inline(home.path(), &["--trust", "full"]).await;
    let port: u16 = link
        .strip_prefix("http://127.0.0.1:")
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("a loopback link: {link}"));
    let opened = client
        .request(
            "tools/call",
            json!({ "name": "browser_open", "arguments": { "url": fixtures.url(page) } }),
        )
        .await;
    assert_eq!(opened["result"]["isError"], false, "{opened}");
    let client = Arc::new(Mutex::new(client));
    let host = Host {
        backend: Backend::Stdio(Arc::clone(&client)),
        modules,
        opened: opened["result"].clone(),
    };
    let (address, served) = serve_host(host).await;
    let person = Person::start().await;
    enter_view(&person, address).await;
    sign_in(&person, &link).await;
    wait_for(
        &person,
        "document.getElementById('frame').src.startsWith('data:image/jpeg;base64,') && document.getElementById('frame').naturalWidth > 0",
        "a frame of the page",
    )
    .await;
    let served = tokio::spawn(async move {
        let _ = served.await;
    });
    (fixtures, home, client, port, person, vec![served, reader])
}

/// The panel's socket hears who drives, until `driver` (within 30 s).
async fn panel_hears(socket: &mut crate::live::Socket, driver: &str) {
    let heard = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if crate::live::next_event(socket, "status").await["driver"] == driver {
                return;
            }
        }
    })
    .await;
    assert!(heard.is_ok(), "the panel never heard the {driver} drive");
}

/// LIVE-8, LIVE-10, HAND-8 (issue 31), the seam of the inline view and the panel in a
/// real host: with the view open, the person takes over in the panel. The view shows the
/// wheel is theirs (I'm done, no Take over, "You have the wheel") without a takeover of
/// its own, and axe-core finds nothing; the view's I'm done ends the takeover for the
/// panel too, and the agent's waiting read goes on.
#[tokio::test(flavor = "multi_thread")]
async fn live_8_a_takeover_in_the_panel_shows_in_the_inline_view_of_a_host() {
    let (_fixtures, home, client, port, person, tasks) =
        view_beside_the_panel("person-typing.html").await;
    let window = crate::live::signed_in(port, &crate::live::fresh_code(home.path()).await).await;
    let mut socket = crate::live::join(port, &window, "mcp-stdio").await;
    panel_hears(&mut socket, "agent").await;

    // The panel takes over; the agent's read waits.
    crate::live::send(&mut socket, json!({ "type": "takeover" }).to_string()).await;
    panel_hears(&mut socket, "person").await;
    let read = client
        .lock()
        .await
        .send_request(
            "tools/call",
            json!({ "name": "browser_read", "arguments": {} }),
        )
        .await;
    wait_for(
        &person,
        "!document.getElementById('done').hidden && document.getElementById('takeover').hidden \
         && document.getElementById('status').textContent.includes('You have the wheel')",
        "the view showing the person has the wheel",
    )
    .await;
    person.assert_accessible("while the panel drives").await;

    // The view's I'm done ends it for both.
    click(&person, "//button[normalize-space()=\"I'm done\"]").await;
    wait_for(
        &person,
        "!document.getElementById('takeover').hidden && document.getElementById('done').hidden",
        "Take over again after I'm done",
    )
    .await;
    panel_hears(&mut socket, "agent").await;
    let answer = tokio::time::timeout(Duration::from_secs(30), async {
        let mut client = client.lock().await;
        crate::inline_app::answer_of(&mut client, read).await
    })
    .await
    .expect("the agent's read goes on after the view's I'm done");
    assert!(
        crate::inline_app::said_by(&answer["result"]).contains("The person used the browser"),
        "{answer}"
    );
    person.client.enter_parent_frame().await.unwrap();
    let log = person
        .client
        .execute("return window.hostLog", vec![])
        .await
        .unwrap();
    let log = log.as_array().cloned().unwrap_or_default();
    assert!(
        log.iter().any(|t| t == "live_hand_back"),
        "the view never handed back: {log:?}"
    );
    assert!(
        !log.iter().any(|t| t == "live_take_over"),
        "the view took over a second time: {log:?}"
    );
    person.finish().await;
    for task in tasks {
        task.abort();
    }
}

/// LAUNCH-8, PROTO-2, BE-4 (issues 31, 32): the browser dies while the inline view in a
/// host is open: the view says what the panel says ("starting it again", in a status
/// region a screen reader announces, the stale frame gone), and then shows the page live
/// again, with no tool call: a frame the view set after it said so (a picture newer than
/// the browser's death; the reopened still page sends its first one whenever it is back,
/// so the view's pictures are counted as they are set, not looked for after).
#[tokio::test(flavor = "multi_thread")]
async fn launch_8_the_inline_view_of_a_host_says_the_browser_is_away_then_shows_it_again() {
    let (_fixtures, home, _client, _port, person, tasks) =
        view_beside_the_panel("basic.html").await;
    // Each picture the view sets, in order with what it says: one set before (or with)
    // the news that the browser is away is not counted.
    person
        .client
        .execute(
            "window.newFrames = 0; window.awayTold = false; \
             const frame = document.getElementById('frame'); \
             const waiting = document.getElementById('waiting'); \
             const seen = new MutationObserver((records) => { for (const r of records) { \
               if (r.target === frame) { if (window.awayTold) window.newFrames += 1; } \
               else if (waiting.textContent.includes('starting it again')) window.awayTold = true; \
             } }); \
             seen.observe(frame, { attributes: true, attributeFilter: ['src'] }); \
             seen.observe(waiting, { childList: true, characterData: true, subtree: true }); \
             return true;",
            vec![],
        )
        .await
        .unwrap();
    crate::revive::kill_main_browser(home.path());
    wait_for(
        &person,
        "!document.getElementById('waiting').hidden \
         && document.getElementById('waiting').textContent.includes('starting it again') \
         && document.getElementById('waiting').getAttribute('role') === 'status'",
        "the view saying the browser is being started again",
    )
    .await;
    person.assert_accessible("while the browser is away").await;
    // Only a frame newer than the stale one sets the picture again.
    wait_for(
        &person,
        "window.newFrames > 0 && !document.getElementById('frame').hidden \
         && document.getElementById('frame').naturalWidth > 0",
        "a frame of the page again",
    )
    .await;
    person.finish().await;
    for task in tasks {
        task.abort();
    }
}
