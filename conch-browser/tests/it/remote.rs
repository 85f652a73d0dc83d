//! A browser at a DevTools address, the `cdp` backend (BE-8, BE-4): a real Chromium that
//! Conch did not launch (`--remote-debugging-port=0` on a profile of its own, its address
//! read from its `DevToolsActivePort`), reached in both address forms; an address nobody
//! answers at falls back to the local browser and says so; and the CDP-only guard keeps
//! its pages off other local apps, from the attacker's side.

use conch_browser::discover::FolderProbe;
use conch_browser::guard::GuardConfig;
use conch_browser::page::act::{self, ActOptions, How};
use conch_browser::remote::{Remote, socket_address};
use conch_browser::seal::SecretText;
use conch_browser::{Browser, BrowserConfig, HealthCheck, HealthItem, HealthState, Home};
use conch_fixtures::FixtureServer;
use conch_fixtures::browser::Standalone;
use conch_fixtures::cloud::{Flavour, PretendCloud};
use conch_policy::{AllowedHost, NetSettings};

use crate::act::css;
use crate::guard::{Listener, no_request_reached};

/// A runtime on `remote` whose own local browser can't start (no browser in its folder,
/// no download), so a page that opens (a conversation's or an errand's) proves the remote
/// browser served it.
pub(crate) fn remote_only(dir: &tempfile::TempDir, remote: Remote) -> BrowserConfig {
    let empty = dir.path().join("no-browsers");
    std::fs::create_dir_all(&empty).expect("test set-up");
    let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
    config.probe = std::sync::Arc::new(FolderProbe { dir: empty });
    config.download = None;
    config.guard = None;
    config.remote = Some(remote);
    config
}

/// The guard of a test where only `server`'s app may be reached and `gateway` stands for
/// the gateway's own port.
pub(crate) fn only_the_app(server: &FixtureServer, gateway: &Listener) -> GuardConfig {
    let mut net = NetSettings::for_gateway_port(gateway.port());
    net.allow_hosts = vec![
        AllowedHost::parse(&format!("127.0.0.1:{}", server.port())).expect("a loopback entry"),
    ];
    GuardConfig::new(net)
}

/// The page `conv` shows (`probe-gateway.html`) aims at another local app (`trap`) and at
/// the gateway, WebSockets included: no request may reach either.
pub(crate) async fn probes_reach_nothing(
    conv: &conch_browser::Conversation,
    trap: &Listener,
    gateway: &Listener,
) {
    for target in [
        format!("http://127.0.0.1:{}", trap.port()),
        format!("http://localhost:{}", gateway.port()),
    ] {
        let seen = conv
            .evaluate(&format!("probe({target:?}, [])"))
            .await
            .expect("the probe runs");
        // WebSockets are asked about by the guarded constructor first; the browser may
        // still open a bare connection before a request is paused, a recorded residual
        // risk with no proxy (docs/containment.md). No request may arrive.
        no_request_reached(trap, &seen).await;
        no_request_reached(gateway, &seen).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn be_8_a_browser_at_a_devtools_address_in_both_forms_runs_the_core_steps() {
    let server = FixtureServer::start().await.expect("fixture server");
    let mut standalone = Standalone::start().expect("a standalone Chromium");
    let socket = socket_address(&standalone.http())
        .await
        .expect("/json/version names the socket");
    assert!(
        socket.starts_with(&format!(
            "ws://127.0.0.1:{}/devtools/browser/",
            standalone.port()
        )),
        "{socket}"
    );
    for address in [standalone.http(), socket] {
        let dir = tempfile::tempdir().expect("temp dir");
        let browser = Browser::new(remote_only(&dir, Remote::Cdp(address.clone())));
        assert_eq!(
            open_and_click(&browser, &server).await,
            "1",
            "the click did not land on the remote page"
        );
        let chat = browser.conversation("c1");
        let tabs = chat.tabs().await.expect("tabs");
        assert_eq!(tabs.len(), 1, "{tabs:?}");
        let status = browser.status().await;
        assert!(
            status
                .browser
                .as_deref()
                .is_some_and(|b| b.starts_with("the browser at http://127.0.0.1:")
                    || b.starts_with("the browser at ws://127.0.0.1:")),
            "{status:?}"
        );
        assert_eq!(
            browser.pid().await,
            None,
            "Conch launched a browser of its own"
        );
        browser.shutdown().await;
        assert!(
            standalone.alive(),
            "letting go closed a browser Conch did not launch"
        );
    }
}

/// BE-4: an address nobody answers at gives the local browser, with one sentence why.
#[tokio::test(flavor = "multi_thread")]
async fn be_4_an_unreachable_address_falls_back_to_the_local_browser_and_says_why() {
    let server = FixtureServer::start().await.expect("fixture server");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
    config.download = None;
    config.guard = None;
    config.remote = Some(Remote::Cdp(format!(
        "http://127.0.0.1:{port}/?token=SECRET"
    )));
    let browser = Browser::new(config);
    let chat = browser.conversation("c1");
    chat.open(&server.url("basic.html"))
        .await
        .expect("the local browser opens it");
    let why = browser.status().await.why.unwrap_or_default();
    assert!(
        why.starts_with(&format!(
            "Conch couldn't reach the browser at http://127.0.0.1:{port} ("
        )) && why.ends_with("so it uses its own local browser."),
        "{why}"
    );
    assert!(!why.contains("SECRET"), "the address's query leaked: {why}");
    // The status names the backend actually driving: the local one it fell back to.
    assert_eq!(browser.status().await.backend, "local");
    assert!(browser.pid().await.is_some(), "no local browser runs");
    browser.shutdown().await;
}

/// BE-4: with the chosen DevTools address dead, the local browser stands in and the
/// health check `browser-backend` says why in one sentence; once a browser answers at
/// that address, repair connects to it, ends the stand-in, and health is ok.
#[tokio::test(flavor = "multi_thread")]
async fn be_4_a_dead_backend_falls_back_then_repair_reconnects() {
    let server = FixtureServer::start().await.expect("fixture server");
    let reserved = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = reserved.local_addr().expect("addr").port();
    drop(reserved);
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
    config.download = None;
    config.guard = None;
    config.remote = Some(Remote::Cdp(format!("http://127.0.0.1:{port}")));
    let browser = Browser::new(config);
    assert_eq!(
        browser.health(),
        [HealthItem {
            check: HealthCheck::BrowserBackend,
            state: HealthState::Ok
        }],
        "nothing was tried yet"
    );
    let chat = browser.conversation("c1");
    chat.open(&server.url("basic.html"))
        .await
        .expect("the local browser opens it");
    assert_eq!(browser.status().await.backend, "local");
    let stand_in = browser.pid().await.expect("a local browser stands in");
    let health = browser.health();
    assert_eq!(health.len(), 1, "{health:?}");
    assert_eq!(health[0].check.id(), "browser-backend");
    let HealthState::Failing(why) = &health[0].state else {
        panic!("a dead backend is healthy: {health:?}");
    };
    assert!(
        why.starts_with(&format!(
            "Conch couldn't reach the browser at http://127.0.0.1:{port} ("
        )) && why.ends_with("so it uses its own local browser."),
        "{why}"
    );
    assert_eq!(browser.status().await.why.as_deref(), Some(why.as_str()));

    // Repair while it is still dead: the stand-in stays, and health still says why.
    let still = browser.repair().await.expect("repair");
    assert!(
        matches!(&still[0].state, HealthState::Failing(w) if w.starts_with("Conch couldn't reach")),
        "{still:?}"
    );
    assert_eq!(
        browser.pid().await,
        Some(stand_in),
        "the stand-in was ended"
    );

    let mut standalone = Standalone::start_at(port).expect("a Chromium on the reserved port");
    let repaired = browser.repair().await.expect("repair");
    assert_eq!(
        repaired,
        [HealthItem {
            check: HealthCheck::BrowserBackend,
            state: HealthState::Ok
        }]
    );
    let status = browser.status().await;
    assert_eq!(status.backend, "cdp", "{status:?}");
    assert_eq!(status.why, None, "{status:?}");
    assert!(
        status
            .browser
            .as_deref()
            .is_some_and(|b| b == format!("the browser at http://127.0.0.1:{port}")),
        "{status:?}"
    );
    assert_eq!(browser.pid().await, None, "a local browser still drives");
    let mut ended = false;
    for _ in 0..100 {
        if !std::path::Path::new(&format!("/proc/{stand_in}")).exists()
            || std::fs::read_to_string(format!("/proc/{stand_in}/stat"))
                .is_ok_and(|s| s.contains(") Z "))
        {
            ended = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(ended, "the stand-in local browser still runs");
    // The conversation's tab comes back on the chosen browser.
    let tabs = chat.tabs().await.expect("tabs");
    assert_eq!(tabs.len(), 1, "{tabs:?}");
    assert!(tabs[0].url.ends_with("basic.html"), "{tabs:?}");
    assert_eq!(browser.pid().await, None);
    browser.shutdown().await;
    assert!(
        standalone.alive(),
        "letting go closed a browser Conch did not launch"
    );
}

/// BE-8 with the guard: no proxy can stand in front of a browser Conch did not launch, so
/// the CDP-only guard judges every request there. A page of the allowed app aims at another
/// local app and at the gateway: neither is reached.
#[tokio::test(flavor = "multi_thread")]
async fn be_8_the_cdp_only_guard_keeps_a_remote_browsers_pages_off_local_apps() {
    let server = FixtureServer::start().await.expect("fixture server");
    let trap = Listener::start("Trap").await;
    let gateway = Listener::start("Gateway").await;
    let standalone = Standalone::start().expect("a standalone Chromium");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = remote_only(&dir, Remote::Cdp(standalone.http()));
    config.guard = Some(only_the_app(&server, &gateway));
    let browser = Browser::new(config);
    let chat = browser.conversation("c1");
    chat.open(&server.url("probe-gateway.html"))
        .await
        .expect("the allowed app opens");
    probes_reach_nothing(&chat, &trap, &gateway).await;
    assert!(
        !browser.guard_log().since(0).is_empty(),
        "the guard logged no refusal"
    );
    browser.shutdown().await;
}

/// A runtime on `remote` whose local browser can't start, on a manual clock.
pub(crate) fn cloud_only(
    dir: &tempfile::TempDir,
    remote: Remote,
) -> (BrowserConfig, std::sync::Arc<conch_browser::ManualClock>) {
    let mut config = remote_only(dir, Remote::Cdp("http://unused".to_owned()));
    config.remote = Some(remote);
    let clock = std::sync::Arc::new(conch_browser::ManualClock::new(
        std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_800_000_000),
    ));
    config.clock = clock.clone();
    (config, clock)
}

/// Opens the many-page in `browser` (remote or cloud) and clicks Add once; gives the
/// click count.
async fn open_and_click(browser: &Browser, server: &FixtureServer) -> serde_json::Value {
    let chat = browser.conversation("c1");
    chat.open(&server.url("many.html"))
        .await
        .expect("the remote browser opens the page");
    let page = chat.page().await.expect("a page");
    act::click(
        &css(&page, "#add").await,
        How::Click,
        &ActOptions::default(),
    )
    .await
    .expect("the click lands");
    chat.evaluate("document.getElementById('clicks').textContent")
        .await
        .expect("evaluate")
}

/// BE-6, BE-5: a Browserbase session is made with the key header and the desktop
/// viewport, driven over its connectUrl, and released when Conch lets go after 10 idle
/// minutes.
#[tokio::test(flavor = "multi_thread")]
async fn be_6_a_browserbase_session_is_made_driven_and_released_when_idle() {
    let server = FixtureServer::start().await.expect("fixture server");
    let standalone = Standalone::start().expect("a standalone Chromium");
    let cloud = PretendCloud::start(Flavour::Browserbase("bb-key".to_owned()), standalone.port())
        .await
        .expect("the pretend provider");
    let dir = tempfile::tempdir().expect("temp dir");
    let (config, clock) = cloud_only(
        &dir,
        Remote::Browserbase {
            base: cloud.base(),
            key: SecretText::new("bb-key".to_owned()),
            project: Some("proj-1".to_owned()),
        },
    );
    let browser = Browser::new(config);
    assert_eq!(open_and_click(&browser, &server).await, "1");
    assert_eq!(
        browser.status().await.browser.as_deref(),
        Some("Browserbase")
    );
    let created = cloud.created();
    assert_eq!(created.len(), 1, "{created:?}");
    assert_eq!(created[0]["projectId"], "proj-1");
    assert_eq!(created[0]["browserSettings"]["viewport"]["width"], 1280);
    assert_eq!(cloud.sockets(), 1);
    assert!(cloud.released().is_empty(), "released while in use");
    // BE-5: ten idle minutes let the session go.
    clock.advance(std::time::Duration::from_secs(10 * 60 + 1));
    assert!(browser.tick().await, "the idle cloud browser was kept");
    for _ in 0..100 {
        if !cloud.released().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(cloud.released(), ["sess-1"]);
    assert_eq!(cloud.refused(), 0);
}

/// BE-6: a wrong key is refused by the provider, and the sentence says to set it again
/// without showing it.
#[tokio::test(flavor = "multi_thread")]
async fn be_6_a_refused_key_says_so_and_never_shows_the_key() {
    let standalone = Standalone::start().expect("a standalone Chromium");
    let cloud = PretendCloud::start(Flavour::Browserbase("right".to_owned()), standalone.port())
        .await
        .expect("the pretend provider");
    let dir = tempfile::tempdir().expect("temp dir");
    let (config, _) = cloud_only(
        &dir,
        Remote::Browserbase {
            base: cloud.base(),
            key: SecretText::new("WRONG-KEY-CANARY".to_owned()),
            project: None,
        },
    );
    let browser = Browser::new(config);
    let error = browser.ensure_running().await.expect_err("no browser");
    let why = browser.status().await.why.unwrap_or_default();
    assert!(why.contains("refused the saved key"), "{why}");
    assert!(!why.contains("WRONG-KEY-CANARY") && !error.to_string().contains("WRONG-KEY-CANARY"));
    assert_eq!(cloud.refused(), 1);
}

/// BE-7: Steel's cloud gets its key as a header, the socket gets it in its query, and
/// letting go releases the session; a self-hosted steel-browser needs no key and its
/// `ws://0.0.0.0:…` is reached at the address the API was.
#[tokio::test(flavor = "multi_thread")]
async fn be_7_steel_cloud_and_self_hosted_sessions() {
    let server = FixtureServer::start().await.expect("fixture server");
    let standalone = Standalone::start().expect("a standalone Chromium");
    for (flavour, key) in [
        (Flavour::SteelCloud("st-key".to_owned()), Some("st-key")),
        (Flavour::SteelSelfHosted, None),
    ] {
        let cloud = PretendCloud::start(flavour.clone(), standalone.port())
            .await
            .expect("the pretend provider");
        let dir = tempfile::tempdir().expect("temp dir");
        let (config, _) = cloud_only(
            &dir,
            Remote::Steel {
                base: cloud.base(),
                key: key.map(|k| SecretText::new(k.to_owned())),
                connect: None,
            },
        );
        let browser = Browser::new(config);
        assert_eq!(open_and_click(&browser, &server).await, "1", "{flavour:?}");
        assert_eq!(cloud.created()[0]["dimensions"]["width"], 1280);
        // The cloud gets a lifetime in ms; a self-hosted steel-browser has none.
        let timeout = &cloud.created()[0]["timeout"];
        match key {
            Some(_) => assert_eq!(*timeout, 30 * 60 * 1000, "{flavour:?}"),
            None => assert!(timeout.is_null(), "{flavour:?}: {timeout}"),
        }
        assert_eq!(cloud.refused(), 0, "{flavour:?}");
        browser.shutdown().await;
        assert_eq!(cloud.released(), ["sess-1"], "{flavour:?}");
    }
}

/// The core scenario every backend passes (BE-1): open, read, click, type, form and tabs,
/// in conversation `c1` of `browser`.
pub(crate) async fn core_scenario(browser: &Browser, server: &FixtureServer, label: &str) {
    use conch_browser::page::{Reader, form, read};
    let chat = browser.conversation("c1");
    // Open.
    let opened = chat
        .open(&server.url("many.html"))
        .await
        .unwrap_or_else(|e| panic!("{label}: open: {e}"));
    assert_eq!(opened.title, "Many", "{label}");
    // Read.
    let page = chat.page().await.expect("a page");
    let mut reader = Reader::new();
    let snap = read(&page, &mut reader).await.expect("read");
    assert!(snap.text.contains("Notes"), "{label}: {}", snap.text);
    // Click, by the ref the reading gave.
    let add = crate::act::ref_of(&snap.text, "button \"Add\"");
    let add = act::element(&page, &add).await.expect("the ref resolves");
    act::click(&add, How::Click, &ActOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{label}: click: {e}"));
    let clicks = chat
        .evaluate("document.getElementById('clicks').textContent")
        .await
        .expect("evaluate");
    assert_eq!(clicks, "1", "{label}: the click did not land");
    // Type.
    let note = crate::act::ref_of(&snap.text, "textbox \"Note\"");
    let field = act::element(&page, &note).await.expect("the ref resolves");
    act::type_text(&field, "milk", &ActOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{label}: type: {e}"));
    let typed = chat
        .evaluate("document.getElementById('note').value")
        .await
        .expect("evaluate");
    assert_eq!(typed, "milk", "{label}: the typing did not land");
    // Form.
    let snap = read(&page, &mut reader).await.expect("read");
    let note = crate::act::ref_of(&snap.text, "textbox \"Note\"");
    let outcome = form::fill_refs(&page, &[(note, "eggs".to_owned())], &ActOptions::default())
        .await
        .unwrap_or_else(|e| panic!("{label}: form: {e}"));
    assert_eq!(outcome.filled.len(), 1, "{label}: {:?}", outcome.skipped);
    let filled = chat
        .evaluate("document.getElementById('note').value")
        .await
        .expect("evaluate");
    assert_eq!(filled, "eggs", "{label}: the form was not filled");
    // Tabs.
    let second = chat
        .new_tab(&server.url("basic.html"))
        .await
        .unwrap_or_else(|e| panic!("{label}: new tab: {e}"));
    let tabs = chat.tabs().await.expect("tabs");
    assert_eq!(
        tabs.iter().map(|t| t.title.as_str()).collect::<Vec<_>>(),
        ["Many", "Basic page"],
        "{label}: {tabs:?}"
    );
    chat.close(&second.id).await.expect("close");
    let tabs = chat.tabs().await.expect("tabs");
    assert_eq!(tabs.len(), 1, "{label}: {tabs:?}");
    assert!(tabs[0].active, "{label}: {tabs:?}");
}

/// BE-7: when Steel's answer names no `websocketUrl`, Conch connects at Steel's connect
/// address with `?apiKey=…&sessionId=…` (here the pretend server's, configured as the
/// API base is; the real default, wss://connect.steel.dev, is checked without dialling it
/// in the unit tests of `steel_socket`).
#[tokio::test(flavor = "multi_thread")]
async fn be_7_steel_cloud_without_a_websocket_url_is_reached_at_its_connect_address() {
    let server = FixtureServer::start().await.expect("fixture server");
    let standalone = Standalone::start().expect("a standalone Chromium");
    let cloud = PretendCloud::start(
        Flavour::SteelCloudBare("st-key".to_owned()),
        standalone.port(),
    )
    .await
    .expect("the pretend provider");
    let dir = tempfile::tempdir().expect("temp dir");
    let (config, _) = cloud_only(
        &dir,
        Remote::Steel {
            base: cloud.base(),
            key: Some(SecretText::new("st-key".to_owned())),
            connect: Some(cloud.socket_base()),
        },
    );
    let browser = Browser::new(config);
    assert_eq!(open_and_click(&browser, &server).await, "1");
    assert_eq!(cloud.created()[0]["timeout"], 30 * 60 * 1000);
    assert_eq!(cloud.sockets(), 1);
    assert_eq!(
        cloud.refused(),
        0,
        "the socket lacked the key or the session"
    );
    browser.shutdown().await;
    assert_eq!(cloud.released(), ["sess-1"]);
}

/// BE-5: a Steel session is released after 10 idle minutes on the injected clock, and
/// not before.
#[tokio::test(flavor = "multi_thread")]
async fn be_5_a_steel_session_is_released_after_ten_idle_minutes() {
    let server = FixtureServer::start().await.expect("fixture server");
    let standalone = Standalone::start().expect("a standalone Chromium");
    let cloud = PretendCloud::start(Flavour::SteelCloud("st-key".to_owned()), standalone.port())
        .await
        .expect("the pretend provider");
    let dir = tempfile::tempdir().expect("temp dir");
    let (config, clock) = cloud_only(
        &dir,
        Remote::Steel {
            base: cloud.base(),
            key: Some(SecretText::new("st-key".to_owned())),
            connect: None,
        },
    );
    let browser = Browser::new(config);
    assert_eq!(open_and_click(&browser, &server).await, "1");
    clock.advance(std::time::Duration::from_secs(9 * 60));
    assert!(!browser.tick().await, "released before 10 idle minutes");
    assert!(cloud.released().is_empty());
    clock.advance(std::time::Duration::from_secs(60 + 1));
    assert!(browser.tick().await, "the idle Steel session was kept");
    for _ in 0..100 {
        if !cloud.released().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(cloud.released(), ["sess-1"]);
    assert_eq!(browser.status().await.state, conch_browser::RunState::Idle);
}

/// BE-1: the same core scenario (open, read, click, type, form, tabs) passes on cdp, on
/// the pretend Browserbase and on the pretend Steel, and the status names the backend
/// actually driving each time (not "local").
#[tokio::test(flavor = "multi_thread")]
async fn be_1_the_core_scenario_passes_on_cdp_browserbase_and_steel_and_status_names_each() {
    let server = FixtureServer::start().await.expect("fixture server");
    let standalone = Standalone::start().expect("a standalone Chromium");
    let bb = PretendCloud::start(Flavour::Browserbase("bb-key".to_owned()), standalone.port())
        .await
        .expect("the pretend Browserbase");
    let steel = PretendCloud::start(Flavour::SteelCloud("st-key".to_owned()), standalone.port())
        .await
        .expect("the pretend Steel");
    let backends = [
        ("cdp", Remote::Cdp(standalone.http())),
        (
            "browserbase",
            Remote::Browserbase {
                base: bb.base(),
                key: SecretText::new("bb-key".to_owned()),
                project: None,
            },
        ),
        (
            "steel",
            Remote::Steel {
                base: steel.base(),
                key: Some(SecretText::new("st-key".to_owned())),
                connect: None,
            },
        ),
    ];
    for (name, remote) in backends {
        let dir = tempfile::tempdir().expect("temp dir");
        let (config, _) = cloud_only(&dir, remote);
        let browser = Browser::new(config);
        core_scenario(&browser, &server, name).await;
        let status = browser.status().await;
        assert_eq!(status.backend, name, "{status:?}");
        assert_eq!(
            browser.pid().await,
            None,
            "{name}: Conch launched a browser"
        );
        browser.shutdown().await;
    }
}

/// BE-7, BE-5: one tab of a session of the pretend `flavour` provider (reached as the
/// Remote `remote` makes of its base address) is kept in use on the injected clock: for
/// 24 minutes nothing is renewed (Conch renews 5 minutes before the 30-minute end); at
/// 26 a successor is made with the old one's cookies (as `carried` reads them from the
/// provider), the old one is released, and the tab comes back in the successor. The
/// provider, for what else a test asks of it.
async fn renewed_while_in_use(
    flavour: Flavour,
    remote: impl FnOnce(String) -> Remote,
    carried: fn(&PretendCloud) -> Vec<serde_json::Value>,
) -> PretendCloud {
    let server = FixtureServer::start().await.expect("fixture server");
    let standalone = Standalone::start().expect("a standalone Chromium");
    let cloud = PretendCloud::start(flavour, standalone.port())
        .await
        .expect("the pretend provider");
    let dir = tempfile::tempdir().expect("temp dir");
    let (config, clock) = cloud_only(&dir, remote(cloud.base()));
    let browser = Browser::new(config);
    let chat = browser.conversation("c1");
    chat.open(&server.url("cookie-jar.html?set=kept"))
        .await
        .expect("the page opens");
    // In use for 24 minutes: nothing to renew yet (Conch renews 5 minutes before the end).
    for _ in 0..3 {
        clock.advance(std::time::Duration::from_secs(8 * 60));
        chat.evaluate("1").await.expect("in use");
        assert!(!browser.tick().await, "let go while in use");
    }
    assert_eq!(cloud.created().len(), 1);
    assert!(cloud.released().is_empty());
    // 26 minutes: renewed.
    clock.advance(std::time::Duration::from_secs(2 * 60));
    chat.evaluate("1").await.expect("in use");
    assert!(!browser.tick().await, "let go while in use");
    assert_eq!(cloud.created().len(), 2, "no successor session was made");
    assert_eq!(cloud.released(), ["sess-1"]);
    let carried = carried(&cloud);
    assert!(
        carried
            .iter()
            .any(|c| c["name"] == "who" && c["value"] == "kept"),
        "the successor was not given the cookies: {carried:?}"
    );
    let tabs = chat.tabs().await.expect("the tab comes back");
    assert_eq!(tabs.len(), 1, "{tabs:?}");
    assert!(tabs[0].url.contains("cookie-jar.html"), "{tabs:?}");
    browser.shutdown().await;
    assert_eq!(cloud.released(), ["sess-1", "sess-2"]);
    cloud
}

/// BE-7, BE-5, issue 29: Browserbase, too, ends a session at its `timeout` (asked for on
/// create: 30 minutes) and has no call to extend it; a session in use is renewed a few
/// minutes before: a successor is made, given the old one's cookies over DevTools
/// (Browserbase's create takes none), the old one is released, and the tab comes back.
#[tokio::test(flavor = "multi_thread")]
async fn be_7_a_browserbase_session_in_use_is_renewed_before_its_timeout_with_its_cookies() {
    let cloud = renewed_while_in_use(
        Flavour::Browserbase("bb-key".to_owned()),
        |base| Remote::Browserbase {
            base,
            key: SecretText::new("bb-key".to_owned()),
            project: None,
        },
        PretendCloud::cookies_set,
    )
    .await;
    assert_eq!(
        cloud.created()[0]["timeout"],
        conch_browser::remote::BROWSERBASE_TIMEOUT_S,
        "the session's lifetime is asked for"
    );
}

/// BE-7, BE-5: Steel's cloud ends a session 30 minutes after it started whatever its
/// client does, and has no call to extend it; a session in use is renewed a few minutes
/// before, on the injected clock: a successor starts with the old one's cookies (Steel's
/// `sessionContext`), the old one is released, and the tab comes back in the successor.
#[tokio::test(flavor = "multi_thread")]
async fn be_7_a_steel_session_in_use_is_renewed_before_its_lifetime_ends_with_its_cookies() {
    renewed_while_in_use(
        Flavour::SteelCloud("st-key".to_owned()),
        |base| Remote::Steel {
            base,
            key: Some(SecretText::new("st-key".to_owned())),
            connect: None,
        },
        |cloud| {
            cloud.created()[1]["sessionContext"]["cookies"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        },
    )
    .await;
}

/// BE-8 (issue 32): the `cdp` backend on a real browserless server (the npm package
/// `@browserless.io/browserless`, pinned, on 127.0.0.1 behind a token, running this
/// machine's Chromium): the core scenario (open, read, click, type, form, tabs) passes on
/// the browser browserless starts for Conch's connection, the status names the address
/// without its token, Conch launches no browser of its own, and letting go leaves the
/// server running.
#[tokio::test(flavor = "multi_thread")]
async fn be_8_a_browserless_server_runs_the_core_scenario() {
    let server = FixtureServer::start().await.expect("fixture server");
    let mut browserless =
        conch_fixtures::browserless::Browserless::start().expect("a browserless server");
    let token = browserless.token().to_owned();
    let dir = tempfile::tempdir().expect("temp dir");
    let (config, _) = cloud_only(&dir, Remote::Cdp(browserless.ws_url()));
    let browser = Browser::new(config);
    core_scenario(&browser, &server, "browserless").await;
    let status = browser.status().await;
    assert_eq!(status.backend, "cdp", "{status:?}");
    let named = status.browser.clone().unwrap_or_default();
    assert!(
        named.starts_with(&format!(
            "the browser at ws://127.0.0.1:{}",
            browserless.port()
        )),
        "{status:?}"
    );
    assert!(
        !format!("{status:?}").contains(&token),
        "the status shows browserless's token: {status:?}"
    );
    assert_eq!(browser.pid().await, None, "Conch launched a browser");
    browser.shutdown().await;
    assert!(
        browserless.alive(),
        "letting go stopped the browserless server"
    );
}
