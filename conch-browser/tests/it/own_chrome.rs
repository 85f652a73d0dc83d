//! The person's own Chrome, the `chrome` backend (BE-10 … BE-15, NET-9), against a
//! stand-in: a Chromium Conch did not launch, started with `--remote-debugging-port=0` on
//! a temporary profile, which writes its `DevToolsActivePort` there; Conch is told to look
//! in that folder. A tab of "the person's" (a canary) is open before Conch connects.
//!
//! What a stand-in cannot show: Chrome 144+'s "Allow remote debugging?" dialog (the
//! stand-in lets every connection in at once); the wait for it is shown against a socket
//! that never answers its handshake.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use conch_browser::discover::FolderProbe;
use conch_browser::guard::GuardConfig;
use conch_browser::own_chrome::{BADGE_COLOUR, BADGE_TEXT, OwnChrome, WAITING_SENTENCE};
use conch_browser::page::{Reader, read, screenshot_for_model};
use conch_browser::remote::Remote;
use conch_browser::{Browser, BrowserConfig, Home};
use conch_fixtures::FixtureServer;
use conch_fixtures::browser::Standalone;
use conch_policy::{AllowedHost, NetSettings};

use crate::guard::Listener;

const CANARY: &str = "CANARY-7731";

/// A runtime on the person's Chrome whose profile folder is `folder`; its local browser
/// can't start (no browser in its folder, no download), so a page that opens proves the
/// person's Chrome served it.
fn own_only(dir: &tempfile::TempDir, folder: &std::path::Path) -> BrowserConfig {
    let empty = dir.path().join("no-browsers");
    std::fs::create_dir_all(&empty).expect("test set-up");
    let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
    config.probe = Arc::new(FolderProbe { dir: empty });
    config.download = None;
    config.guard = None;
    config.remote = Some(Remote::Chrome(OwnChrome::in_folder(
        folder.to_path_buf(),
        Duration::from_secs(30),
    )));
    config
}

/// The stand-in's own list of pages (the test may look; Conch never does).
async fn pages_of(standalone: &Standalone) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let port = standalone.port();
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("the DevTools port answers");
    stream
        .write_all(format!("GET /json/list HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").as_bytes())
        .await
        .expect("sent");
    let mut body = Vec::new();
    let mut chunk = [0u8; 8192];
    while let Ok(Ok(n)) =
        tokio::time::timeout(Duration::from_millis(500), stream.read(&mut chunk)).await
    {
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// BE-10, BE-1, BE-11: the stand-in's DevToolsActivePort is read from its profile folder,
/// Conch connects there (no browser of its own launched) and the core scenario passes;
/// the status names the backend actually driving.
#[tokio::test(flavor = "multi_thread")]
async fn be_10_own_chrome_is_reached_through_its_devtools_active_port() {
    let server = FixtureServer::start().await.expect("fixture server");
    let mut standalone = Standalone::start().expect("a stand-in Chrome");
    let dir = tempfile::tempdir().expect("temp dir");
    let browser = Browser::new(own_only(&dir, standalone.profile()));
    crate::remote::core_scenario(&browser, &server, "own chrome").await;
    let status = browser.status().await;
    assert_eq!(status.backend, "chrome", "{status:?}");
    assert_eq!(status.browser.as_deref(), Some("your Chrome"), "{status:?}");
    assert_eq!(status.why, None, "{status:?}");
    assert_eq!(browser.pid().await, None, "Conch launched a browser");
    browser.shutdown().await;
    assert!(standalone.alive(), "letting go closed the person's Chrome");
}

/// BE-13, BE-15: a tab of the person's, open before Conch connects, never appears in
/// Conch's tabs, snapshots, notes or status, is never closed, and letting go closes only
/// Conch's tabs.
#[tokio::test(flavor = "multi_thread")]
async fn be_13_the_persons_tabs_never_appear_and_letting_go_closes_only_conchs() {
    let server = FixtureServer::start().await.expect("fixture server");
    let mut standalone =
        Standalone::start_on(&server.url("person-tab.html")).expect("a stand-in Chrome");
    // The person's tab is open and loaded before Conch comes.
    for _ in 0..100 {
        if pages_of(&standalone).await.contains(CANARY) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(pages_of(&standalone).await.contains(CANARY));
    let dir = tempfile::tempdir().expect("temp dir");
    let browser = Browser::new(own_only(&dir, standalone.profile()));
    let chat = browser.conversation("c1");
    chat.open(&server.url("many.html")).await.expect("open");
    chat.new_tab(&server.url("basic.html"))
        .await
        .expect("new tab");
    let tabs = chat.tabs().await.expect("tabs");
    assert_eq!(tabs.len(), 2, "{tabs:?}");
    let mut seen = format!("{tabs:?}");
    let page = chat.page().await.expect("a page");
    let mut reader = Reader::new();
    seen.push_str(&read(&page, &mut reader).await.expect("read").text);
    seen.push_str(&format!("{:?}", chat.take_notes().await));
    seen.push_str(&format!("{:?}", browser.status().await));
    assert!(!seen.contains(CANARY), "the person's tab showed: {seen}");
    // Seen from the browser's side (a connection of the test's own): Conch is attached to
    // its own pages and never to the person's.
    let socket = conch_fixtures::browser::devtools_socket(standalone.port())
        .await
        .expect("the stand-in's socket");
    let spy = conch_cdp::Connection::connect(&socket)
        .await
        .expect("a spy");
    let targets = spy
        .browser()
        .call(&conch_cdp::protocol::target::GetTargets {})
        .await
        .expect("targets");
    let person: Vec<_> = targets
        .target_infos
        .iter()
        .filter(|t| t.title.contains(CANARY))
        .collect();
    assert_eq!(person.len(), 1, "{targets:?}");
    assert!(!person[0].attached, "Conch attached to the person's tab");
    spy.close();
    // Letting go: Conch's two tabs go, the person's stays, and so does the browser.
    browser.shutdown().await;
    let mut left = String::new();
    for _ in 0..50 {
        left = pages_of(&standalone).await;
        if !left.contains("many.html") && !left.contains("basic.html") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(left.contains(CANARY), "the person's tab was closed: {left}");
    assert!(
        !left.contains("many.html") && !left.contains("basic.html"),
        "Conch's tabs stayed: {left}"
    );
    assert!(standalone.alive(), "letting go closed the person's Chrome");
}

/// BE-14: Conch's pages in the person's Chrome carry the badge where the person sees the
/// page (the browser's own frame), and the agent never reads it: not in the snapshot, not
/// in the screenshot for the model.
#[tokio::test(flavor = "multi_thread")]
async fn be_14_conchs_pages_carry_a_badge_the_agent_never_reads() {
    let server = FixtureServer::start().await.expect("fixture server");
    let standalone = Standalone::start().expect("a stand-in Chrome");
    let dir = tempfile::tempdir().expect("temp dir");
    let browser = Browser::new(own_only(&dir, standalone.profile()));
    let chat = browser.conversation("c1");
    chat.open(&server.url("basic.html")).await.expect("open");
    let page = chat.page().await.expect("a page");
    let badged = |png: &[u8]| {
        let image = image::load_from_memory(png).expect("a png").into_rgba8();
        image.pixels().filter(|p| p.0[..3] == BADGE_COLOUR).count()
    };
    // What the person sees: the browser's own frame of the page.
    let mut shown = 0;
    for _ in 0..50 {
        let frame = page
            .call_raw(
                "Page.captureScreenshot",
                serde_json::json!({ "format": "png" }),
            )
            .await
            .expect("a frame");
        let data = frame["data"].as_str().expect("image data");
        let png = conch_browser::page::base64::decode(data).expect("base64");
        shown = badged(&png);
        if shown > 100 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(shown > 100, "no badge on Conch's page ({shown} pixels)");
    let mut reader = Reader::new();
    let snapshot = read(&page, &mut reader).await.expect("read");
    assert!(
        !snapshot.text.contains(BADGE_TEXT) && !snapshot.text.contains("Conch"),
        "{}",
        snapshot.text
    );
    let for_model = screenshot_for_model(&page, &mut reader)
        .await
        .expect("a screenshot");
    assert_eq!(
        badged(&for_model),
        0,
        "the badge is in the model's screenshot"
    );
    // And it is back for the person afterwards.
    let visible = chat
        .evaluate("getComputedStyle(document.querySelector('conch-badge')).visibility")
        .await
        .expect("evaluate");
    assert_eq!(visible, "visible");
    browser.shutdown().await;
}

/// NET-9: the guard is on Conch's pages only. The person's tab goes on reaching a local
/// app, unblocked and unobserved (nothing in the guard's log); Conch's page is kept off
/// the same app.
#[tokio::test(flavor = "multi_thread")]
async fn net_9_the_guard_is_on_conchs_pages_only() {
    let server = FixtureServer::start().await.expect("fixture server");
    let trap = Listener::start("Local app").await;
    let gateway = Listener::start("Gateway").await;
    let standalone = Standalone::start_on(&format!(
        "{}?trap={}",
        server.url("person-tab.html"),
        trap.port()
    ))
    .expect("a stand-in Chrome");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = own_only(&dir, standalone.profile());
    let mut net = NetSettings::for_gateway_port(gateway.port());
    net.allow_hosts = vec![
        AllowedHost::parse(&format!("127.0.0.1:{}", server.port())).expect("a loopback entry"),
    ];
    config.guard = Some(GuardConfig::new(net));
    let browser = Browser::new(config);
    let chat = browser.conversation("c1");
    chat.open(&server.url("probe-gateway.html"))
        .await
        .expect("the allowed app opens");
    let person = |lines: &[String]| lines.iter().filter(|l| l.contains("/person")).count();
    let before = person(&trap.lines());
    let seen = chat
        .evaluate(&format!(
            "probe({:?}, ['websocket'])",
            format!("http://127.0.0.1:{}", trap.port())
        ))
        .await
        .expect("the probe runs");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let lines = trap.lines();
    assert!(
        person(&lines) > before,
        "the person's tab was blocked: {lines:?}"
    );
    assert!(
        lines.iter().all(|l| l.is_empty() || l.contains("/person")),
        "Conch's page reached the local app: {seen} {lines:?}"
    );
    let log = format!("{:?}", browser.guard_log().since(0));
    assert!(!log.contains("/person") && !log.contains(CANARY), "{log}");
    assert!(
        !browser.guard_log().since(0).is_empty(),
        "the guard logged nothing"
    );
    browser.shutdown().await;
}

/// BE-10: Chrome asks the person for each connection, so Conch connects once, waits
/// patiently and says so in the status, and never retries in a loop that would stack
/// dialogs. Against a socket that never answers its handshake, as Chrome's door does
/// while its dialog is open.
#[tokio::test(flavor = "multi_thread")]
async fn be_10_conch_connects_once_and_waits_for_the_person_to_allow_it() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let port = listener.local_addr().expect("addr").port();
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&connections);
    let door = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            held.push(stream); // never answered: the person has not pressed Allow
        }
    });
    let profile = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        profile.path().join("DevToolsActivePort"),
        format!("{port}\n/devtools/browser/0b4d6a1e-waiting\n"),
    )
    .expect("write");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = own_only(&dir, profile.path());
    config.remote = Some(Remote::Chrome(OwnChrome::in_folder(
        profile.path().to_path_buf(),
        Duration::from_secs(3),
    )));
    let browser = Browser::new(config);
    let starting = {
        let browser = browser.clone();
        tokio::spawn(async move { browser.ensure_running().await })
    };
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let status = browser.status().await;
    assert_eq!(status.why.as_deref(), Some(WAITING_SENTENCE), "{status:?}");
    let outcome = starting.await.expect("joined");
    assert!(outcome.is_err(), "no browser should run");
    assert_eq!(
        connections.load(Ordering::SeqCst),
        1,
        "more than one dialog"
    );
    let why = browser.status().await.why.unwrap_or_default();
    assert!(
        why.starts_with("Conch couldn't reach your Chrome (Chrome did not let Conch in within 3 s"),
        "{why}"
    );
    assert_eq!(browser.status().await.backend, "local");
    door.abort();
}

/// BE-10: a DevToolsActivePort naming any host but 127.0.0.1 is refused with a sentence,
/// and nothing is dialled.
#[tokio::test(flavor = "multi_thread")]
async fn be_10_a_devtools_active_port_naming_another_host_is_refused() {
    let profile = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        profile.path().join("DevToolsActivePort"),
        "9222\nws://192.0.2.7:9222/devtools/browser/x\n",
    )
    .expect("write");
    let dir = tempfile::tempdir().expect("temp dir");
    let browser = Browser::new(own_only(&dir, profile.path()));
    assert!(browser.ensure_running().await.is_err());
    let why = browser.status().await.why.unwrap_or_default();
    assert!(
        why.contains("names an address other than 127.0.0.1") && !why.contains("192.0.2.7"),
        "{why}"
    );
}

/// Every log line written from now on, at every level and target (the CDP wire trace
/// included), for the whole test process (nextest runs each test in its own).
fn capture_logs() -> Arc<std::sync::Mutex<Vec<u8>>> {
    #[derive(Clone)]
    struct Lines(Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Lines {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
    let writer = Lines(Arc::clone(&lines));
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::set_global_default(subscriber).expect("the only log capture");
    tracing::info!("log capture on");
    lines
}

/// BE-13, NET-9: Conch reads a page of its own with a same-site and a cross-site
/// (out-of-process) frame in the person's Chrome. Finding the frames' sessions never lists
/// the browser's targets nor attaches to one by name: a tab of the person's, open before
/// Conch connected, appears (by title or address) in no result, note, status, log line,
/// CDP event or file, and is still open afterwards.
#[tokio::test(flavor = "multi_thread")]
async fn be_13_reading_frames_never_lists_or_reads_the_persons_tabs() {
    const ADDRESS_CANARY: &str = "CANARY-ADDR-4417";
    let logs = capture_logs();
    let server = FixtureServer::start().await.expect("fixture server");
    server.route(
        "frames-mixed.html",
        conch_fixtures::Response::html(&format!(
            r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Frames</title></head>
<body><h1>Shop</h1>
<iframe title="Same site" width="400" height="200" src="/frame.html"></iframe>
<iframe title="Other site" width="400" height="200" src="{}"></iframe>
</body></html>"#,
            server.cross_site_url("frame.html")
        )),
    );
    let person = server.url(&format!("person-tab.html?who={ADDRESS_CANARY}"));
    let mut standalone = Standalone::start_on(&person).expect("a stand-in Chrome");
    for _ in 0..100 {
        if pages_of(&standalone).await.contains(CANARY) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(pages_of(&standalone).await.contains(ADDRESS_CANARY));
    let dir = tempfile::tempdir().expect("temp dir");
    let browser = Browser::new(own_only(&dir, standalone.profile()));
    let chat = browser.conversation("c1");
    chat.open(&server.url("frames-mixed.html"))
        .await
        .expect("open");
    let page = chat.page().await.expect("a page");
    let mut reader = Reader::new();
    let mut text = String::new();
    for _ in 0..50 {
        text = read(&page, &mut reader).await.expect("read").text;
        if text.matches("Place order").count() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        text.matches("Place order").count(),
        2,
        "both frames: {text}"
    );
    assert!(
        text.contains("[ref=f"),
        "the cross-site frame was read: {text}"
    );
    let mut seen = text;
    seen.push_str(&format!("{:?}", chat.tabs().await.expect("tabs")));
    seen.push_str(&format!("{:?}", chat.take_notes().await));
    seen.push_str(&format!("{:?}", browser.status().await));
    browser.shutdown().await;
    let logged = String::from_utf8_lossy(&logs.lock().expect("logs")).into_owned();
    assert!(
        logged.contains("log capture on") && logged.contains("Target.createTarget"),
        "the log capture saw nothing"
    );
    for canary in [CANARY, ADDRESS_CANARY] {
        assert!(!seen.contains(canary), "the person's tab showed: {seen}");
        let named = logged.lines().find(|l| l.contains(canary));
        assert!(
            named.is_none(),
            "a log line names the person's tab: {named:?}"
        );
        let mut folders = vec![dir.path().join("home")];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    folders.push(path);
                } else if let Ok(bytes) = std::fs::read(&path) {
                    assert!(
                        !String::from_utf8_lossy(&bytes).contains(canary),
                        "{} names the person's tab",
                        path.display()
                    );
                }
            }
        }
    }
    assert!(
        !logged.contains("Target.getTargets"),
        "the browser's targets were listed"
    );
    assert!(
        pages_of(&standalone).await.contains(CANARY),
        "the person's tab was closed"
    );
    assert!(standalone.alive(), "letting go closed the person's Chrome");
}
