//! Both transports against a real headless Chromium: the pipe (LAUNCH-20, AMB-7) and a
//! WebSocket found through HTTP discovery or given directly.

use std::time::Duration;

use conch_cdp::Connection;
use conch_cdp::protocol::browser;
use conch_fixtures::{FixtureServer, TempProfile};

use crate::support::{eval, launch, navigate, new_page, within};

/// LAUNCH-20: over the pipe, a page loads and scripts run; the browser was started with
/// `--remote-debugging-pipe`, with no debugging port, and listens on no TCP socket.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipe_launch_runs_a_page_without_any_tcp_port_launch_20() {
    let server = FixtureServer::start().await.expect("fixture server");
    let browser = launch().await;
    let version = browser
        .connection
        .call(&browser::GetVersion {})
        .await
        .expect("Browser.getVersion");
    assert!(version.product.contains("Chrome"), "{version:?}");
    assert!(!version.protocol_version.is_empty());
    // An error answer is a typed `Protocol` error with the browser's code.
    let error = browser
        .connection
        .browser()
        .call_raw("No.suchMethod", serde_json::Value::Null)
        .await
        .expect_err("an unknown method");
    assert!(
        matches!(
            error.kind(),
            conch_cdp::ErrorKind::Protocol { code: -32601, .. }
        ),
        "{error}"
    );
    assert_eq!(error.method(), Some("No.suchMethod"));

    let page = new_page(&browser.connection).await;
    navigate(&page, &server.url("basic.html")).await;
    assert_eq!(eval(&page, "document.title").await, "Basic page");
    assert_eq!(
        eval(&page, "document.querySelector('h1').textContent").await,
        "Hello from the fixtures"
    );

    let pid = browser.child.id().expect("browser pid");
    let argv = std::fs::read(format!("/proc/{pid}/cmdline")).expect("argv");
    let argv: Vec<String> = argv
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    assert!(
        argv.iter().any(|a| a == "--remote-debugging-pipe"),
        "{argv:?}"
    );
    assert!(
        !argv
            .iter()
            .any(|a| a.starts_with("--remote-debugging-port")),
        "{argv:?}"
    );
    // The check can see a listener (this test's own) and cannot pass blind: a process
    // whose descriptors cannot be read is an error.
    let me = std::process::id();
    let before = listening_tcp_sockets_of(me).expect("our own sockets");
    let ours = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a listener");
    let after = listening_tcp_sockets_of(me).expect("our own sockets");
    assert_eq!(
        after.len(),
        before.len() + 1,
        "a new listener was not seen: {after:?}"
    );
    drop(ours);
    assert!(listening_tcp_sockets_of(u32::MAX).is_err());
    let listening = listening_tcp_sockets_of(pid).expect("the browser's sockets are readable");
    assert!(
        listening.is_empty(),
        "the browser listens on TCP: {listening:?}"
    );

    browser.close().await;
}

/// A WebSocket to a browser started with `--remote-debugging-port=0`: connected through
/// `http://127.0.0.1:PORT` (discovery with `/json/version`) and through the `ws://` address
/// in `DevToolsActivePort`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_connects_by_http_discovery_and_by_ws_address() {
    let server = FixtureServer::start().await.expect("fixture server");
    let profile = TempProfile::new().expect("temp profile");
    let mut command = conch_fixtures::browser::command(profile.path()).expect("a test browser");
    command
        .arg("--remote-debugging-port=0")
        .stderr(std::process::Stdio::null());
    let mut child = tokio::process::Command::from(command)
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the browser");
    let active_port = profile.path().join("DevToolsActivePort");
    let contents = within(20, "DevToolsActivePort", async {
        loop {
            if let Ok(text) = std::fs::read_to_string(&active_port)
                && text.lines().count() >= 2
            {
                return text;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    let mut lines = contents.lines();
    let port = lines.next().expect("port line").trim().to_owned();
    let path = lines.next().expect("path line").trim().to_owned();

    let by_http = Connection::connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("connect through /json/version");
    let version = by_http
        .call(&browser::GetVersion {})
        .await
        .expect("Browser.getVersion");
    assert!(version.product.contains("Chrome"), "{version:?}");
    let page = new_page(&by_http).await;
    navigate(&page, &server.url("basic.html")).await;
    assert_eq!(eval(&page, "document.title").await, "Basic page");

    let by_ws = Connection::connect(&format!("ws://127.0.0.1:{port}{path}"))
        .await
        .expect("connect to the ws address");
    by_ws
        .call(&browser::GetVersion {})
        .await
        .expect("Browser.getVersion on the second connection");

    let _ = by_http.call(&browser::Close {}).await;
    let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    let _ = child.kill().await;
}

/// The TCP sockets in LISTEN state held by `pid` (from /proc), as `inode` strings. A
/// process whose file descriptors or socket tables cannot be read is an error, never "no
/// socket": a check that cannot look must not pass.
fn listening_tcp_sockets_of(pid: u32) -> Result<Vec<String>, String> {
    let fd_dir = format!("/proc/{pid}/fd");
    let entries = std::fs::read_dir(&fd_dir).map_err(|e| format!("{fd_dir}: {e}"))?;
    let mut inodes = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{fd_dir}: {e}"))?;
        // A descriptor closed since the listing has no link left: it holds no socket.
        if let Ok(target) = std::fs::read_link(entry.path()) {
            let target = target.to_string_lossy().into_owned();
            if let Some(inode) = target
                .strip_prefix("socket:[")
                .and_then(|t| t.strip_suffix(']'))
            {
                inodes.push(inode.to_owned());
            }
        }
    }
    let mut listening = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).map_err(|e| format!("{table}: {e}"))?;
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // fields[3] is the state (0A = LISTEN), fields[9] the inode.
            if fields.len() > 9 && fields[3] == "0A" && inodes.iter().any(|i| i == fields[9]) {
                listening.push(fields[9].to_owned());
            }
        }
    }
    Ok(listening)
}

/// The typed commands the project uses, each against the real browser: contexts, targets,
/// interception (a request failed by the client), the viewport, trusted input and
/// screenshots.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_commands_work_against_the_browser() {
    use conch_cdp::protocol::{emulation, fetch, input, network, page, target};
    use futures_util::StreamExt;

    let server = FixtureServer::start().await.expect("fixture server");
    let browser = launch().await;
    let connection = &browser.connection;
    let context = connection
        .call(&target::CreateBrowserContext::default())
        .await
        .expect("Target.createBrowserContext");
    let created = connection
        .call(&target::CreateTarget {
            url: "about:blank".into(),
            browser_context_id: Some(context.browser_context_id.clone()),
            ..target::CreateTarget::default()
        })
        .await
        .expect("Target.createTarget in the context");
    let page = connection
        .attach(created.target_id.clone())
        .await
        .expect("attach");
    page.call(&network::SetBypassServiceWorker { bypass: true })
        .await
        .expect("Network.setBypassServiceWorker");
    page.call(&emulation::SetDeviceMetricsOverride {
        width: 800,
        height: 600,
        device_scale_factor: 1.0,
        mobile: false,
    })
    .await
    .expect("Emulation.setDeviceMetricsOverride");

    // Interception: requests whose address contains "blocked" fail, the rest go on.
    let mut paused = page.subscribe::<fetch::RequestPaused>();
    page.call(&fetch::Enable {
        patterns: Some(vec![fetch::RequestPattern {
            url_pattern: Some("*".into()),
            ..fetch::RequestPattern::default()
        }]),
        handle_auth_requests: None,
    })
    .await
    .expect("Fetch.enable");
    let guard_page = page.clone();
    let guard = tokio::spawn(async move {
        let mut decisions = Vec::new();
        while let Some(Ok(request)) = paused.next().await {
            let blocked = request.request.url.contains("blocked");
            decisions.push((request.request.url.clone(), blocked));
            if blocked {
                let fail = fetch::FailRequest {
                    request_id: request.request_id,
                    error_reason: fetch::ErrorReason::BlockedByClient,
                };
                let _ = guard_page.call(&fail).await;
            } else {
                let _ = guard_page
                    .call(&fetch::ContinueRequest::new(request.request_id))
                    .await;
            }
        }
        decisions
    });
    let refused = page
        .call(&page::Navigate::new(server.url("basic.html?blocked")))
        .await
        .expect("Page.navigate");
    assert_eq!(
        refused.error_text.as_deref(),
        Some("net::ERR_BLOCKED_BY_CLIENT")
    );
    navigate(&page, &server.url("basic.html")).await;
    assert_eq!(eval(&page, "innerWidth").await, 800);

    // Trusted input: a click on the button, then keys into a field.
    let center = eval(
        &page,
        "(() => { const r = document.getElementById('go').getBoundingClientRect(); \
         return [r.x + r.width / 2, r.y + r.height / 2]; })()",
    )
    .await;
    let (x, y) = (
        center[0].as_f64().expect("x"),
        center[1].as_f64().expect("y"),
    );
    for kind in [
        input::MouseEventType::MousePressed,
        input::MouseEventType::MouseReleased,
    ] {
        let mut click = input::DispatchMouseEvent::new(kind, x, y);
        click.button = Some(input::MouseButton::Left);
        click.click_count = Some(1);
        page.call(&click).await.expect("Input.dispatchMouseEvent");
    }
    assert_eq!(eval(&page, "document.title").await, "Clicked");
    eval(&page, "(() => { const i = document.createElement('input'); document.body.append(i); i.focus(); return true; })()").await;
    let mut key = input::DispatchKeyEvent::new(input::KeyEventType::KeyDown);
    key.text = Some("q".into());
    key.key = Some("q".into());
    page.call(&key).await.expect("Input.dispatchKeyEvent");
    page.call(&input::DispatchKeyEvent::new(input::KeyEventType::KeyUp))
        .await
        .expect("key up");
    assert_eq!(
        eval(&page, "document.querySelector('input').value").await,
        "q"
    );

    let shot = page
        .call(&page::CaptureScreenshot {
            format: Some(page::ScreenshotFormat::Png),
            ..page::CaptureScreenshot::default()
        })
        .await
        .expect("Page.captureScreenshot");
    assert!(shot.data.starts_with("iVBORw0KGgo"), "not a PNG");

    connection
        .call(&target::CloseTarget {
            target_id: created.target_id,
        })
        .await
        .expect("Target.closeTarget");
    connection
        .call(&target::DisposeBrowserContext {
            browser_context_id: context.browser_context_id,
        })
        .await
        .expect("Target.disposeBrowserContext");
    let decisions = within(5, "the guard's stream to end", guard)
        .await
        .expect("guard");
    assert!(
        decisions
            .iter()
            .any(|(url, blocked)| url.contains("?blocked") && *blocked),
        "{decisions:?}"
    );
    browser.close().await;
}
