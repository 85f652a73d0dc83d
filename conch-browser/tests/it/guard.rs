//! The network guard, from the attacker's side (NET-1 … NET-8, NET-10, NET-13, AMB-1,
//! AMB-3, LAUNCH-19).
//!
//! Fixture pages are served under `*.test` names that the injected resolver maps to the
//! fixture server on loopback while the policy is told they resolve to TEST-NET-3
//! (203.0.113.x, public). Private and metadata addresses are dialled, should the guard
//! ever let them through, at a loopback "trap" listener instead: no test can send traffic
//! off this machine, and any connection a listener records is a breach, whatever the
//! page shows.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use conch_browser::guard::{
    BLOCKED_PAGE_SENTENCE, BLOCKED_SENTENCE, Blocked, GuardConfig, GuardMode, MapResolver,
};
use conch_browser::{Browser, BrowserConfig, Home};
use conch_fixtures::FixtureServer;
use conch_policy::{AllowedHost, NetSettings};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A loopback listener that counts every connection made to it and answers a tiny page.
pub(crate) struct Listener {
    addr: SocketAddr,
    hits: Arc<AtomicUsize>,
    lines: Arc<std::sync::Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Listener {
    pub(crate) async fn start(title: &str) -> Listener {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("test set-up: bind a listener");
        let addr = listener.local_addr().expect("test set-up");
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&hits);
        let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = Arc::clone(&lines);
        let page = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n<title>{title}</title><p>{title}</p>"
        );
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                let page = page.clone();
                let seen = Arc::clone(&seen);
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let n = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut buf))
                        .await
                        .ok()
                        .and_then(Result::ok)
                        .unwrap_or(0);
                    let text = String::from_utf8_lossy(&buf[..n]);
                    let line = text.lines().next().unwrap_or_default().to_owned();
                    seen.lock().expect("lines").push(line);
                    let _ = stream.write_all(page.as_bytes()).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        Listener {
            addr,
            hits,
            lines,
            task,
        }
    }

    pub(crate) fn port(&self) -> u16 {
        self.addr.port()
    }

    pub(crate) fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// The request lines it received (for failure messages).
    pub(crate) fn lines(&self) -> Vec<String> {
        self.lines.lock().expect("lines").clone()
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Public TEST-NET-3 addresses the policy is told the fixture names resolve to (AMB-3).
const SHOP: IpAddr = IpAddr::V4(Ipv4Addr::new(203, 0, 113, 10));
const OTHER: IpAddr = IpAddr::V4(Ipv4Addr::new(203, 0, 113, 11));

/// Everything a guard test needs: the fixture server, the gateway's stand-in, a trap for
/// private addresses, and a browser behind the guard.
struct Env {
    _dir: tempfile::TempDir,
    server: FixtureServer,
    gateway: Listener,
    trap: Listener,
    browser: Browser,
}

impl Env {
    async fn start(tune: impl FnOnce(&mut NetSettings, &mut BrowserConfig)) -> Env {
        let server = FixtureServer::start().await.expect("test set-up");
        let gateway = Listener::start("Gateway").await;
        let trap = Listener::start("Trap").await;
        let loopback = |port| SocketAddr::new(Ipv4Addr::LOCALHOST.into(), port);
        let resolver = MapResolver::new()
            .with("shop.test", SHOP, loopback(server.port()))
            .with("other.test", OTHER, loopback(server.cross_site_port()))
            .with("sw.test", SHOP, loopback(server.port()))
            // DNS that answers private addresses (NET-3): judged as private, and dialled at
            // the trap should the guard ever let them through.
            .with("rebind.test", "10.0.0.5".parse().expect("ip"), trap.addr)
            .with(
                "meta.test",
                "169.254.169.254".parse().expect("ip"),
                trap.addr,
            )
            .with("gw.test", Ipv4Addr::LOCALHOST.into(), gateway.addr)
            // A public name that rebinds to loopback (NET-5): judged as loopback, and
            // dialled at the trap should the guard ever let it through.
            .with("rebind-local.test", Ipv4Addr::LOCALHOST.into(), trap.addr)
            .with_trap(trap.addr);
        let dir = tempfile::tempdir().expect("test set-up");
        let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
        config.download = None;
        let mut net = NetSettings::for_gateway_port(gateway.port());
        tune(&mut net, &mut config);
        config.guard = Some(GuardConfig::new(net).with_resolver(resolver));
        let browser = Browser::new(config);
        Env {
            _dir: dir,
            server,
            gateway,
            trap,
            browser,
        }
    }

    fn breaches(&self) -> usize {
        self.gateway.hits() + self.trap.hits()
    }
}

fn refused_hosts(blocked: &[Blocked]) -> Vec<String> {
    blocked
        .iter()
        .map(|b| format!("{}:{}", b.host, b.port))
        .collect()
}

/// NET-1, NET-3, NET-4: from an allowed page, every route (fetch, XHR, img, iframe, form
/// POST, WebSocket, EventSource, sendBeacon, a 302 from the allowed origin) aimed at the
/// gateway, at loopback in every spelling, at private and metadata addresses and at names
/// that resolve to them, is refused before any connection, and each refusal is logged.
#[tokio::test(flavor = "multi_thread")]
async fn net_1_net_3_net_4_every_route_to_a_private_address_is_refused() {
    let env = Env::start(|_, _| {}).await;
    let chat = env.browser.conversation("c1");
    chat.open("http://shop.test/probe-gateway.html")
        .await
        .unwrap();
    assert_eq!(chat.evaluate("document.title").await.unwrap(), "Probe");

    let g = env.gateway.port();
    let targets = [
        format!("http://127.0.0.1:{g}"),
        format!("http://localhost:{g}"),
        format!("http://localhost.:{g}"),
        format!("http://app.localhost:{g}"),
        format!("http://[::1]:{g}"),
        format!("http://0.0.0.0:{g}"),
        format!("http://2130706433:{g}"),
        format!("http://0x7f.1:{g}"),
        format!("http://127.1:{g}"),
        format!("http://[::ffff:127.0.0.1]:{g}"),
        format!("http://gw.test:{g}"),
        "http://rebind.test:8080".to_owned(),
        "http://meta.test".to_owned(),
        "http://169.254.169.254".to_owned(),
        "http://10.0.0.5:8080".to_owned(),
        "http://192.168.1.1:8080".to_owned(),
        "http://[fd00:ec2::254]".to_owned(),
        "http://100.100.100.200".to_owned(),
    ];
    let log = env.browser.guard_log();
    for target in &targets {
        let cursor = log.cursor();
        let seen = chat.evaluate(&format!("probe({target:?})")).await.unwrap();
        assert_eq!(env.breaches(), 0, "{target} was reached: {seen}");
        let blocked = log.since(cursor);
        assert!(
            blocked.len() >= 8,
            "{target}: the guard logged only {:?}; the page saw {seen}",
            refused_hosts(&blocked)
        );
        // An HTTP route "succeeds" with the guard's 403 page; what counts is that no
        // listener was reached. A refused tunnel fails the WebSocket outright.
        assert_ne!(seen["websocket"], "ok", "{target}: {seen}");
        // The page's worker ran (held, ruled, resumed) and was answered by the guard.
        assert_ne!(seen["worker"], "pending", "{target}: {seen}");
    }

    // A top-level location change by the page, and the page's own address stays readable.
    let cursor = log.cursor();
    chat.evaluate(&format!("location.href = 'http://127.0.0.1:{g}/'; 1"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        refused_hosts(&log.since(cursor)).contains(&format!("127.0.0.1:{g}")),
        "the location change was not refused"
    );
    assert_eq!(env.breaches(), 0);
    // The allowed origin itself was reached all along.
    assert!(env.server.requests("probe-gateway.html") >= 1);
    env.browser.shutdown().await;
}

/// NET-8, LAUNCH-19: a popup whose very first load is a private address is refused, and a
/// window.open of the gateway too; the popup still becomes a tab.
#[tokio::test(flavor = "multi_thread")]
async fn net_8_a_popups_first_load_is_refused() {
    let env = Env::start(|_, _| {}).await;
    let chat = env.browser.conversation("c1");
    chat.open("http://shop.test/popup-private.html")
        .await
        .unwrap();
    let log = env.browser.guard_log();
    let cursor = log.cursor();
    chat.evaluate("document.getElementById('open').click()")
        .await
        .unwrap();
    for _ in 0..50 {
        if refused_hosts(&log.since(cursor)).contains(&"10.0.0.5:80".to_owned()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        refused_hosts(&log.since(cursor)).contains(&"10.0.0.5:80".to_owned()),
        "{:?}",
        log.since(cursor)
    );
    assert_eq!(chat.tabs().await.unwrap().len(), 2, "the popup is a tab");

    chat.switch("t1").await.unwrap();
    let g = env.gateway.port();
    chat.evaluate(&format!("window.open('http://localhost:{g}/'); 1"))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(refused_hosts(&log.since(cursor)).contains(&format!("localhost:{g}")));
    assert_eq!(env.breaches(), 0);
    env.browser.shutdown().await;
}

/// With allowLocalhost on, a chat opens a local app at its literal loopback address,
/// which answers: the app, the environment and the chat.
async fn a_local_app_opened_with_allow_localhost() -> (Listener, Env, conch_browser::Conversation) {
    let app = Listener::start("Local app").await;
    let env = Env::start(|net, _| net.allow_localhost = true).await;
    let chat = env.browser.conversation("c1");
    chat.open(&format!("http://127.0.0.1:{}/", app.port()))
        .await
        .expect("the local app opens");
    assert_eq!(
        chat.evaluate("document.title").await.expect("its title"),
        "Local app"
    );
    assert!(app.hits() >= 1);
    (app, env, chat)
}

/// NET-5: with allowLocalhost on, another app on loopback opens, and the gateway's port
/// stays refused in every spelling.
#[tokio::test(flavor = "multi_thread")]
async fn net_5_allow_localhost_opens_local_apps_but_never_the_gateway() {
    let (_app, env, chat) = a_local_app_opened_with_allow_localhost().await;

    let g = env.gateway.port();
    for gateway in [
        format!("http://127.0.0.1:{g}/"),
        format!("http://localhost:{g}/"),
        format!("http://gw.test:{g}/"),
        format!("http://0.0.0.0:{g}/"),
    ] {
        chat.open(&gateway).await.unwrap();
        let text = chat.evaluate("document.body.innerText").await.unwrap();
        assert!(
            text.as_str().unwrap_or_default().contains(BLOCKED_SENTENCE),
            "{gateway}: {text}"
        );
    }
    // The proxy's own port is as closed as the gateway's.
    let proxy = env.browser.guard_proxy().await.expect("a proxy runs");
    chat.open(&format!("http://127.0.0.1:{}/", proxy.port()))
        .await
        .unwrap();
    let text = chat.evaluate("document.body.innerText").await.unwrap();
    assert!(text.as_str().unwrap_or_default().contains(BLOCKED_SENTENCE));
    // Private addresses stay refused: allowLocalhost is loopback only.
    chat.open("http://rebind.test:8080/").await.unwrap();
    assert_eq!(env.breaches(), 0);
    env.browser.shutdown().await;
}

/// NET-5, AMB-1 (issue 29): with allowLocalhost on, a literal loopback address reaches a
/// local app, but a public name that resolves to loopback (DNS rebinding) is refused, in
/// a page's request and as the tab's own document, and nothing reaches the loopback
/// listener it resolves to.
#[tokio::test(flavor = "multi_thread")]
async fn net_5_allow_localhost_refuses_a_public_name_that_rebinds_to_loopback() {
    let (app, env, chat) = a_local_app_opened_with_allow_localhost().await;

    let log = env.browser.guard_log();
    let cursor = log.cursor();
    let rebind = format!("rebind-local.test:{}", app.port());
    chat.open(&format!("http://{rebind}/")).await.unwrap();
    let text = chat.evaluate("document.body.innerText").await.unwrap();
    assert!(
        text.as_str().unwrap_or_default().contains(BLOCKED_SENTENCE),
        "{text}"
    );
    chat.open("http://shop.test/probe-gateway.html")
        .await
        .unwrap();
    let seen = chat
        .evaluate(&format!("probe('http://{rebind}')"))
        .await
        .unwrap();
    assert_ne!(seen["websocket"], "ok", "{seen}");
    assert_eq!(env.breaches(), 0, "the rebinding name was reached: {seen}");
    assert!(
        refused_hosts(&log.since(cursor)).contains(&rebind),
        "{:?}",
        log.since(cursor)
    );
    env.browser.shutdown().await;
}

/// NET-1, NET-5 (issue 29): with allowLocalhost on, the gateway's port and the proxy's
/// own port stay refused in every spelling of loopback: IPv4-mapped IPv6
/// (`[::ffff:127.0.0.1]`, `[::ffff:7f00:1]`), decimal, short and hex forms, `[::1]` and
/// `localhost`. Nothing reaches the gateway or the trap, and the proxy never carries a
/// request to itself.
#[tokio::test(flavor = "multi_thread")]
async fn net_5_own_and_gateway_ports_are_refused_in_every_loopback_spelling() {
    let env = Env::start(|net, _| net.allow_localhost = true).await;
    let chat = env.browser.conversation("c1");
    chat.open("http://shop.test/probe-gateway.html")
        .await
        .unwrap();
    let proxy = env.browser.guard_proxy().await.expect("a proxy runs");
    let log = env.browser.guard_log();
    for port in [env.gateway.port(), proxy.port()] {
        for spelling in [
            "127.0.0.1",
            "[::ffff:127.0.0.1]",
            "[::ffff:7f00:1]",
            "2130706433",
            "127.1",
            "0x7f.1",
            "[::1]",
            "localhost",
        ] {
            let target = format!("http://{spelling}:{port}/");
            let cursor = log.cursor();
            chat.open(&target).await.unwrap();
            let text = chat.evaluate("document.body.innerText").await.unwrap();
            assert!(
                text.as_str().unwrap_or_default().contains(BLOCKED_SENTENCE),
                "{target}: {text}"
            );
            let codes: Vec<&str> = log.since(cursor).iter().map(|b| b.code).collect();
            assert!(codes.contains(&"gateway-origin"), "{target}: {codes:?}");
            assert_eq!(env.breaches(), 0, "{target} was reached");
        }
    }
    env.browser.shutdown().await;
}

/// AMB-3 (allowHosts): an entry opens exactly that origin on loopback; another loopback
/// app and the gateway stay refused.
#[tokio::test(flavor = "multi_thread")]
async fn amb_3_allow_hosts_opens_only_that_origin() {
    let allowed = Listener::start("Allowed app").await;
    let other = Listener::start("Other app").await;
    let entry = format!("127.0.0.1:{}", allowed.port());
    let env = Env::start(|net, _| {
        net.allow_hosts = vec![AllowedHost::parse(&entry).expect("a loopback entry")];
    })
    .await;
    let chat = env.browser.conversation("c1");
    chat.open(&format!("http://{entry}/")).await.unwrap();
    assert_eq!(
        chat.evaluate("document.title").await.unwrap(),
        "Allowed app"
    );

    chat.open(&format!("http://127.0.0.1:{}/", other.port()))
        .await
        .unwrap();
    assert_eq!(other.hits(), 0, "another loopback origin was reached");
    // The same port under another name is another origin: not covered.
    let reached = allowed.hits();
    let log = env.browser.guard_log();
    let cursor = log.cursor();
    chat.open(&format!("http://localhost:{}/", allowed.port()))
        .await
        .unwrap();
    assert_eq!(allowed.hits(), reached, "{:?}", allowed.lines());
    assert!(refused_hosts(&log.since(cursor)).contains(&format!("localhost:{}", allowed.port())));
    chat.open(&format!("http://127.0.0.1:{}/", env.gateway.port()))
        .await
        .unwrap();
    assert_eq!(env.breaches(), 0);
    env.browser.shutdown().await;
}

/// NET-10: a page whose main document was refused says so, in words, with no address and
/// no port, both on the page and in the conversation's notes; a redirect to a private
/// address counts as the main document.
#[tokio::test(flavor = "multi_thread")]
async fn net_10_a_blocked_page_says_so_without_a_port() {
    let env = Env::start(|_, _| {}).await;
    let chat = env.browser.conversation("c1");
    let g = env.gateway.port();
    for address in [
        format!("http://127.0.0.1:{g}/"),
        "http://shop.test/redirect?to=http%3A%2F%2F10.0.0.5%3A8080%2Fadmin".to_owned(),
    ] {
        chat.open(&address).await.unwrap();
        let notes = chat.take_notes().await;
        assert!(
            notes.iter().any(|n| n == BLOCKED_PAGE_SENTENCE),
            "{address}: {notes:?}"
        );
        let text = chat.evaluate("document.body.innerText").await.unwrap();
        let text = text.as_str().unwrap_or_default().to_owned();
        assert!(text.contains(BLOCKED_SENTENCE), "{address}: {text}");
        for said in notes.iter().chain(std::iter::once(&text)) {
            assert!(
                !said.contains(&g.to_string()) && !said.contains("8080"),
                "{said}"
            );
            assert!(
                !said.contains("127.0.0.1") && !said.contains("10.0.0.5"),
                "{said}"
            );
        }
    }
    assert_eq!(env.breaches(), 0);
    env.browser.shutdown().await;
}

/// NET-10 (issue 12): every route a page can take to a refused address (each on its own,
/// plain http and a tunnel for https, in the page and in a cross-site frame) is told to
/// the conversation whose tab made it, and never to another conversation working at the
/// same time on a page of its own.
#[tokio::test(flavor = "multi_thread")]
async fn net_10_each_refusal_is_the_conversation_whose_tab_made_it() {
    let env = Env::start(|_, _| {}).await;
    let asker = env.browser.conversation("asker");
    let bystander = env.browser.conversation("bystander");
    asker
        .open("http://shop.test/probe-gateway.html")
        .await
        .unwrap();
    bystander
        .open("http://other.test/basic.html")
        .await
        .unwrap();
    let routes = [
        "fetch",
        "xhr",
        "img",
        "iframe",
        "form",
        "websocket",
        "eventsource",
        "beacon",
        "worker",
        "redirect",
    ];
    let all = routes.join("','");
    let mut cases: Vec<(String, String)> = Vec::new();
    for route in routes {
        let skip = routes
            .iter()
            .filter(|r| **r != route)
            .copied()
            .collect::<Vec<_>>()
            .join("','");
        cases.push((
            format!("probe('http://rebind.test:8080', ['{skip}'])"),
            format!("http {route}"),
        ));
    }
    let https_skip = routes
        .iter()
        .filter(|r| !matches!(**r, "fetch" | "websocket"))
        .copied()
        .collect::<Vec<_>>()
        .join("','");
    cases.push((
        format!("probe('https://rebind.test:8443', ['{https_skip}'])"),
        "https fetch and wss".to_owned(),
    ));
    let frame = format!(
        "http://other.test/probe-gateway.html?auto=http://rebind.test:8080&skip={}",
        all.replace("','", ",").replace("fetch,", "")
    );
    cases.push((
        format!("probeInFrame({frame:?})"),
        "a cross-site frame's fetch".to_owned(),
    ));
    for (script, what) in cases {
        let cursor = asker.blocked_cursor();
        let seen = asker.evaluate(&script).await.unwrap();
        // A beacon goes out after the page is done with it.
        let mut told = asker.blocked_since(cursor).await;
        for _ in 0..30 {
            if !told.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            told = asker.blocked_since(cursor).await;
        }
        assert!(
            !told.is_empty(),
            "{what}: the asker was not told; the page saw {seen}, the guard logged {:?}",
            refused_hosts(&env.browser.guard_log().since(cursor))
        );
        let wrong = bystander.blocked_since(cursor).await;
        assert!(
            wrong.is_empty(),
            "{what}: the bystander was told {:?}",
            refused_hosts(&wrong)
        );
    }
    assert_eq!(env.breaches(), 0);
    env.browser.shutdown().await;
}

/// NET-7: file:, chrome:, data:, javascript:, view-source: and blob: links clicked on a
/// page leave the tab where it was.
#[tokio::test(flavor = "multi_thread")]
async fn net_7_scheme_links_leave_the_tab_where_it_was() {
    let env = Env::start(|_, _| {}).await;
    let chat = env.browser.conversation("c1");
    let page = "http://shop.test/scheme-links.html";
    chat.open(page).await.unwrap();
    for link in [
        "file",
        "chrome",
        "data",
        "javascript",
        "view-source",
        "blob",
    ] {
        chat.evaluate(&format!(
            "setTimeout(() => document.getElementById('{link}').click(), 0); 1"
        ))
        .await
        .unwrap();
        tokio::time::sleep(Duration::from_millis(700)).await;
        let now = chat.evaluate("location.href").await.unwrap();
        assert_eq!(now, page, "the {link}: link moved the tab");
        assert_eq!(
            chat.tabs().await.unwrap().len(),
            1,
            "the {link}: link opened a tab"
        );
    }
    env.browser.shutdown().await;
}

/// NET-2: a service worker never runs: registration fails in the page and from a fresh
/// frame, nothing controls the page, its script is never fetched, and the request it would
/// have answered reaches the server through the guard.
#[tokio::test(flavor = "multi_thread")]
async fn net_2_service_workers_never_run() {
    let env = Env::start(|_, config| {
        // Service workers need a secure context; make the fixture origin count as one.
        config
            .extra_args
            .push("--unsafely-treat-insecure-origin-as-secure=http://sw.test".to_owned());
    })
    .await;
    let chat = env.browser.conversation("c1");
    chat.open("http://sw.test/sw.html").await.unwrap();
    let result = chat.evaluate("window.swResult").await.unwrap();
    assert_ne!(result["page"], "registered", "{result}");
    assert_ne!(result["frame"], "registered", "{result}");
    assert_eq!(result["controller"], false, "{result}");
    assert_ne!(result["probe"], "from-sw", "{result}");
    assert!(
        env.server.requests("sw-probe") >= 1,
        "the fetch did not reach the guard"
    );
    assert_eq!(
        env.server.requests("sw.js"),
        0,
        "the worker's script was fetched"
    );
    env.browser.shutdown().await;
}

/// NET-13: WebRTC gathers no candidate that carries a private (or any local) address.
///
/// The probe must have really gathered: the connection was made, gathering ran to its end
/// (the state went to `complete`, not the probe's timeout), and no candidate at all was
/// found. Without the guard's flag, this
/// Chromium gathers UDP host candidates (mDNS names on every interface), so a broken flag
/// fails here.
#[tokio::test(flavor = "multi_thread")]
async fn net_13_webrtc_candidates_carry_no_private_address() {
    let env = Env::start(|_, _| {}).await;
    let chat = env.browser.conversation("c1");
    chat.open("http://shop.test/webrtc-probe.html")
        .await
        .unwrap();
    let seen = chat.evaluate("window.candidates").await.unwrap();
    assert_eq!(seen["rtc"], true, "no RTCPeerConnection: {seen}");
    assert_eq!(seen["error"], serde_json::Value::Null, "{seen}");
    assert_eq!(seen["timedOut"], false, "gathering never finished: {seen}");
    assert_eq!(
        seen["states"].as_array().and_then(|s| s.last()),
        Some(&serde_json::json!("complete")),
        "{seen}"
    );
    let candidates = seen["candidates"].as_array().expect("a list of candidates");
    for candidate in candidates {
        let line = candidate.as_str().unwrap_or_default();
        for private in [
            " 10.",
            " 192.168.",
            " 172.",
            " 127.",
            " 169.254.",
            " fe80",
            " fd",
            " fc",
            ".local ",
        ] {
            assert!(!line.contains(private), "{line}");
        }
    }
    // Only UDP could leave without the proxy, and it may not: nothing is gathered at all.
    assert!(candidates.is_empty(), "candidates around the proxy: {seen}");
    env.browser.shutdown().await;
}

/// With no proxy in front, Chrome may still open a bare TCP connection ahead of a request
/// (a preconnect) that the CDP layer never sees; a recorded residual risk of that mode.
/// What must never arrive is a request: not one byte may reach `listener`.
pub(crate) async fn no_request_reached(listener: &Listener, seen: &serde_json::Value) {
    // The listener records what a connection sent once it has waited for it.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let lines = listener.lines();
    assert!(lines.iter().all(String::is_empty), "{seen} {lines:?}");
}

/// AMB-1, LAUNCH-19: with no proxy in front (the layer for browsers where none can be
/// imposed), the CDP rules alone refuse a cross-site frame's requests and a page's to the
/// gateway, on every target before its first request.
#[tokio::test(flavor = "multi_thread")]
async fn amb_1_the_cdp_layer_stands_on_its_own() {
    let server = FixtureServer::start().await.expect("test set-up");
    let gateway = Listener::start("Gateway").await;
    let dir = tempfile::tempdir().expect("test set-up");
    let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
    config.download = None;
    let mut net = NetSettings::for_gateway_port(gateway.port());
    net.allow_hosts = vec![
        AllowedHost::parse(&format!("127.0.0.1:{}", server.port())).expect("entry"),
        AllowedHost::parse(&format!("localhost:{}", server.cross_site_port())).expect("entry"),
    ];
    let mut guard = GuardConfig::new(net);
    guard.mode = GuardMode::CdpOnly;
    config.guard = Some(guard);
    let browser = Browser::new(config);
    let chat = browser.conversation("c1");
    chat.open(&server.url("probe-gateway.html")).await.unwrap();
    let bystander = browser.conversation("c2");
    bystander.open(&server.url("basic.html")).await.unwrap();
    let log = browser.guard_log();
    let cursor = log.cursor();
    let g = gateway.port();
    let seen = chat
        .evaluate(&format!("probe('http://127.0.0.1:{g}')"))
        .await
        .unwrap();
    // Fetch cannot pause WebSockets: the guarded constructor asks this layer first.
    for route in [
        "fetch",
        "xhr",
        "img",
        "eventsource",
        "redirect",
        "websocket",
    ] {
        assert_ne!(seen[route], "ok", "{route}: {seen}");
    }
    // A dedicated worker has no Fetch of its own: it runs, and its request is judged on
    // its page's session (issue 12).
    assert_ne!(seen["worker"], "ok", "{seen}");
    assert_ne!(seen["worker"], "pending", "the worker never ran: {seen}");
    let hosts = refused_hosts(&log.since(cursor));
    assert!(hosts.len() >= 6, "{hosts:?}");
    // NET-10 (issue 12): each CDP refusal carries the session that made it, so it is
    // told to this conversation and to no other.
    let told = refused_hosts(&chat.blocked_since(cursor).await);
    assert_eq!(told, hosts);
    assert!(bystander.blocked_since(cursor).await.is_empty());
    no_request_reached(&gateway, &seen).await;

    // A cross-site (out-of-process) frame's own requests are judged on its own session,
    // ruled before it ran (LAUNCH-19).
    let cursor = log.cursor();
    let frame = format!(
        "{}?auto=http://127.0.0.1:{g}&skip=websocket,iframe,form",
        server.cross_site_url("probe-gateway.html")
    );
    let seen = chat
        .evaluate(&format!("probeInFrame({frame:?})"))
        .await
        .unwrap();
    assert!(seen.is_object(), "the frame did not answer: {seen}");
    for route in ["fetch", "xhr", "img", "eventsource", "redirect"] {
        assert_ne!(seen[route], "ok", "frame {route}: {seen}");
    }
    assert!(
        log.since(cursor).len() >= 5,
        "{:?}",
        refused_hosts(&log.since(cursor))
    );
    no_request_reached(&gateway, &seen).await;
    browser.shutdown().await;
}

/// The environment variable that marks the run inside the network namespace.
const IN_NETNS: &str = "CONCH_GUARD_NETNS";

/// NET-3 with the product's own resolver: private and metadata literals are refused before
/// any connection. Runs in a fresh network namespace with only loopback, where 10.0.0.5
/// and 169.254.169.254 are loopback addresses with counting listeners on them: a broken
/// guard would reach them, and could not reach anything else.
#[tokio::test(flavor = "multi_thread")]
async fn net_3_private_literals_are_refused_with_the_system_resolver() {
    const NAME: &str = "guard::net_3_private_literals_are_refused_with_the_system_resolver";
    if std::env::var_os(IN_NETNS).is_none() {
        let exe = std::env::current_exe().expect("the test binary");
        let status = std::process::Command::new("unshare")
            .args([
                "-n",
                "sh",
                "-c",
                "ip link set lo up && ip addr add 10.0.0.5/32 dev lo \
                 && ip addr add 169.254.169.254/32 dev lo && exec \"$0\" \"$@\"",
            ])
            .arg(exe)
            .args(["--exact", NAME, "--test-threads", "1"])
            .env(IN_NETNS, "1")
            .status()
            .expect("unshare runs (the guard's namespace test needs root)");
        assert!(status.success(), "the run in the namespace failed");
        return;
    }
    let private = TcpListener::bind(("10.0.0.5", 8080))
        .await
        .expect("10.0.0.5 is on loopback in the namespace");
    let metadata = TcpListener::bind(("169.254.169.254", 80))
        .await
        .expect("169.254.169.254 is on loopback in the namespace");
    let hits = Arc::new(AtomicUsize::new(0));
    for listener in [private, metadata] {
        let hits = Arc::clone(&hits);
        tokio::spawn(async move {
            while listener.accept().await.is_ok() {
                hits.fetch_add(1, Ordering::SeqCst);
            }
        });
    }
    let server = FixtureServer::start().await.expect("test set-up");
    let gateway = Listener::start("Gateway").await;
    let dir = tempfile::tempdir().expect("test set-up");
    let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
    config.download = None;
    let mut net = NetSettings::for_gateway_port(gateway.port());
    net.allow_hosts =
        vec![AllowedHost::parse(&format!("127.0.0.1:{}", server.port())).expect("entry")];
    config.guard = Some(GuardConfig::new(net));
    let browser = Browser::new(config);
    let chat = browser.conversation("c1");
    chat.open(&server.url("probe-gateway.html")).await.unwrap();
    assert_eq!(chat.evaluate("document.title").await.unwrap(), "Probe");
    let log = browser.guard_log();
    for target in [
        "http://10.0.0.5:8080",
        "http://0xa.0.0.5:8080",
        "http://167772165:8080",
        "http://169.254.169.254",
        "http://[::ffff:169.254.169.254]",
    ] {
        let cursor = log.cursor();
        let seen = chat.evaluate(&format!("probe({target:?})")).await.unwrap();
        assert_eq!(
            hits.load(Ordering::SeqCst),
            0,
            "{target} was reached: {seen}"
        );
        assert!(log.since(cursor).len() >= 8, "{target}: {seen}");
    }
    browser.shutdown().await;
}

/// A local app that answers keep-alive and keeps every connection open, recording each
/// request head it gets: any request on its connections that is not for its own origin
/// was smuggled past the guard.
struct KeepAliveApp {
    addr: SocketAddr,
    heads: Arc<std::sync::Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl KeepAliveApp {
    async fn start() -> KeepAliveApp {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("test set-up: bind a listener");
        let addr = listener.local_addr().expect("test set-up");
        let heads = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = Arc::clone(&heads);
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let seen = Arc::clone(&seen);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    loop {
                        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                            buf.drain(..end + 4);
                            seen.lock().expect("heads").push(head);
                            let body = "<title>Keep-alive app</title><p>Keep-alive app</p>";
                            let answer = format!(
                                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=120\r\n\r\n{body}",
                                body.len()
                            );
                            if stream.write_all(answer.as_bytes()).await.is_err() {
                                return;
                            }
                        }
                        match stream.read(&mut chunk).await {
                            Ok(n @ 1..) => buf.extend_from_slice(&chunk[..n]),
                            _ => return,
                        }
                    }
                });
            }
        });
        KeepAliveApp { addr, heads, task }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().expect("heads").clone()
    }
}

impl Drop for KeepAliveApp {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// NET-4 (issue 12): a site that answers keep-alive cannot collect the browser's later
/// plain-HTTP requests over the connection it was given: each is judged and goes to its
/// own site (Chromium reuses a proxy connection that was answered keep-alive, so before
/// the fix the app got its later requests unjudged, in absolute form), and the one to a
/// private address is refused. Driven through Chromium, then with a raw client on the
/// browser's own proxy sending another site's request on the app's connection.
#[tokio::test(flavor = "multi_thread")]
async fn net_4_a_keep_alive_server_gets_no_other_sites_requests() {
    let app = KeepAliveApp::start().await;
    let origin = format!("127.0.0.1:{}", app.addr.port());
    let env = Env::start(|net, _| {
        net.allow_hosts = vec![AllowedHost::parse(&origin).expect("a loopback entry")];
    })
    .await;
    let chat = env.browser.conversation("c1");
    chat.open(&format!("http://{origin}/")).await.unwrap();
    assert_eq!(
        chat.evaluate("document.title").await.unwrap(),
        "Keep-alive app"
    );
    let log = env.browser.guard_log();
    let cursor = log.cursor();
    // One after another, so each could reuse the connection the last one left open.
    let script = "(async () => { const seen = []; \
        for (const url of ['http://shop.test/probe-gateway.html?ka=1', 'http://rebind.test:8080/ka', \
                           'http://other.test/probe-gateway.html?ka=2', '/again']) { \
          try { const r = await fetch(url, { mode: 'no-cors', credentials: 'include' }); seen.push(r.type); } \
          catch (e) { seen.push('failed'); } } return seen; })()";
    let seen = chat.evaluate(script).await.unwrap();

    // Through the browser's own proxy, as a raw client: a second request on a connection
    // the app answered keep-alive.
    let proxy = env.browser.guard_proxy().await.expect("a proxy runs");
    let mut raw = tokio::net::TcpStream::connect(proxy)
        .await
        .expect("the proxy");
    let first = format!("GET http://{origin}/raw HTTP/1.1\r\nHost: {origin}\r\n\r\n");
    raw.write_all(first.as_bytes()).await.expect("a request");
    let mut answer = Vec::new();
    let mut chunk = [0u8; 4096];
    while !String::from_utf8_lossy(&answer).contains("<p>Keep-alive app</p>") {
        match tokio::time::timeout(Duration::from_secs(5), raw.read(&mut chunk)).await {
            Ok(Ok(n @ 1..)) => answer.extend_from_slice(&chunk[..n]),
            _ => panic!("no answer: {}", String::from_utf8_lossy(&answer)),
        }
    }
    let answer = String::from_utf8_lossy(&answer).to_ascii_lowercase();
    assert!(answer.contains("\r\nconnection: close\r\n"), "{answer}");
    let _ = raw
        .write_all(
            b"GET http://rebind.test:8080/raw-second HTTP/1.1\r\nHost: rebind.test:8080\r\n\r\n",
        )
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;

    let heads = app.heads();
    let host_line = format!("\r\nHost: {origin}");
    for head in &heads {
        // Every request the proxy judged reaches the app in origin form; one in absolute
        // form (`GET http://…`) came over a reused connection, never judged.
        let target = head.split(' ').nth(1).unwrap_or_default();
        assert!(
            target.starts_with('/')
                && head.contains(&host_line)
                && !head.contains("rebind.test")
                && !head.contains("ka=")
                && !head.contains("raw-second"),
            "a request for another site reached the app: {head:?} (all: {heads:?}); the page saw {seen}"
        );
    }
    assert!(
        heads.iter().any(|h| h.starts_with("GET /again ")),
        "{heads:?}"
    );
    assert!(env.server.requests("probe-gateway.html") >= 1, "{seen}");
    assert!(
        refused_hosts(&log.since(cursor)).contains(&"rebind.test:8080".to_owned()),
        "{:?}",
        log.since(cursor)
    );
    assert_eq!(env.breaches(), 0);
    env.browser.shutdown().await;
}

/// A browser with no proxy in front (the CDP layer alone, as on own Chrome, a DevTools
/// address or a cloud) that may reach `server`'s app only; `gateway` stands for the
/// gateway's port. The browser itself resolves `rebind-local.test` to loopback (as a
/// rebinding DNS server would make it), and the guard's resolver says the same.
fn no_proxy(
    dir: &tempfile::TempDir,
    server: &FixtureServer,
    gateway: &Listener,
    trap: &Listener,
) -> Browser {
    let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
    config.download = None;
    config.extra_args = vec!["--host-resolver-rules=MAP rebind-local.test 127.0.0.1".to_owned()];
    let mut net = NetSettings::for_gateway_port(gateway.port());
    net.allow_hosts =
        vec![AllowedHost::parse(&format!("127.0.0.1:{}", server.port())).expect("entry")];
    let resolver =
        MapResolver::new().with("rebind-local.test", Ipv4Addr::LOCALHOST.into(), trap.addr);
    let mut guard = GuardConfig::new(net).with_resolver(resolver);
    guard.mode = GuardMode::CdpOnly;
    config.guard = Some(guard);
    Browser::new(config)
}

/// What a WebSocket to `address` opened by the page (`how`: `page`, `worker` or `frame`,
/// a fresh same-origin frame's own constructor) saw: `threw …`, `error`, `open` or
/// `pending`.
fn open_socket(address: &str, how: &str) -> String {
    let open = format!(
        "new Promise(r => {{ try {{ const s = new WS({address:?}); s.onopen = () => r('open'); \
         s.onerror = () => r('error'); setTimeout(() => r('pending'), 3000); }} \
         catch (e) {{ r('threw ' + e.name); }} }})"
    );
    match how {
        "worker" => format!(
            "new Promise(r => {{ const code = 'const WS = WebSocket; (' + (() => {open}).toString() \
             + ')().then(postMessage)'; const w = new Worker(URL.createObjectURL(new Blob([code], \
             {{ type: 'text/javascript' }}))); w.onmessage = e => r(e.data); \
             setTimeout(() => r('no answer'), 6000); }})"
        ),
        "frame" => format!(
            "(() => {{ const f = document.createElement('iframe'); document.body.appendChild(f); \
             const WS = f.contentWindow.WebSocket; return {open}; }})()"
        ),
        _ => format!("(() => {{ const WS = WebSocket; return {open}; }})()"),
    }
}

/// Opens a WebSocket to each of `addresses` from each of `hows` (see [`open_socket`]):
/// each must fail in the page, and after a second none of `listeners` was reached.
async fn sockets_are_refused(
    chat: &conch_browser::Conversation,
    hows: &[&str],
    addresses: &[String],
    listeners: &[&Listener],
) {
    for how in hows {
        for address in addresses {
            let seen = chat
                .evaluate(&open_socket(address, how))
                .await
                .expect("the socket probe runs");
            let seen = seen.as_str().unwrap_or_default().to_owned();
            assert!(
                seen.starts_with("threw") || seen == "error",
                "{how} {address}: {seen}"
            );
        }
    }
    tokio::time::sleep(Duration::from_millis(1000)).await;
    for listener in listeners {
        assert_eq!(
            listener.hits(),
            0,
            "a local listener was reached: {:?}",
            listener.lines()
        );
    }
}

/// AMB-1, NET-3: with no proxy in front, a page's WebSocket to a local app (loopback,
/// the gateway) is refused before any connection, from the page, a dedicated worker and
/// a fresh frame alike; the page sees an error, the listeners see no connection, and the
/// refusal is logged. A WebSocket to the allowed app still goes out.
#[tokio::test(flavor = "multi_thread")]
async fn amb_1_net_3_a_websocket_to_a_local_app_is_refused_without_a_proxy() {
    let server = FixtureServer::start().await.expect("test set-up");
    let gateway = Listener::start("Gateway").await;
    let trap = Listener::start("Trap").await;
    let dir = tempfile::tempdir().expect("test set-up");
    let browser = no_proxy(&dir, &server, &gateway, &trap);
    let chat = browser.conversation("c1");
    chat.open(&server.url("basic.html")).await.unwrap();
    let log = browser.guard_log();
    let cursor = log.cursor();
    let (t, g) = (trap.port(), gateway.port());
    let addresses = [
        format!("ws://127.0.0.1:{t}/ws"),
        format!("ws://0x7f.1:{t}/ws"),
        format!("wss://localhost:{g}/ws"),
        format!("http://127.0.0.1:{g}/ws"),
    ];
    sockets_are_refused(
        &chat,
        &["page", "worker", "frame"],
        &addresses,
        &[&trap, &gateway],
    )
    .await;
    let hosts = refused_hosts(&log.since(cursor));
    assert!(hosts.contains(&format!("127.0.0.1:{t}")), "{hosts:?}");
    assert!(hosts.contains(&format!("localhost:{g}")), "{hosts:?}");

    // The allowed app's own WebSocket still leaves (the fixture server answers it with a
    // plain page, so it fails, but only after the request reached it).
    let allowed = format!("ws://127.0.0.1:{}/ws-allowed", server.port());
    let seen = chat.evaluate(&open_socket(&allowed, "page")).await.unwrap();
    assert!(
        !seen.as_str().unwrap_or_default().starts_with("threw"),
        "{seen}"
    );
    assert!(server.requests("ws-allowed") >= 1, "{seen}");
    browser.shutdown().await;
}

/// AMB-1, NET-3, NET-5: with no proxy in front, a name that resolves to loopback (here the
/// browser's own resolver maps it there, as a rebinding DNS answer would) is resolved by the
/// guard first and refused, for requests and WebSockets alike: the page sees an error, the
/// local app no WebSocket connection and no request.
#[tokio::test(flavor = "multi_thread")]
async fn amb_1_net_3_a_name_that_resolves_to_loopback_is_refused_without_a_proxy() {
    let server = FixtureServer::start().await.expect("test set-up");
    let gateway = Listener::start("Gateway").await;
    let trap = Listener::start("Trap").await;
    let dir = tempfile::tempdir().expect("test set-up");
    let browser = no_proxy(&dir, &server, &gateway, &trap);
    let chat = browser.conversation("c1");
    chat.open(&server.url("probe-gateway.html")).await.unwrap();
    let log = browser.guard_log();
    let cursor = log.cursor();
    let t = trap.port();
    sockets_are_refused(
        &chat,
        &["page", "worker", "frame"],
        &[format!("ws://rebind-local.test:{t}/ws")],
        &[&trap],
    )
    .await;
    let seen = chat
        .evaluate(&format!(
            "probe('http://rebind-local.test:{t}', ['websocket'])"
        ))
        .await
        .unwrap();
    for route in ["fetch", "xhr", "img", "eventsource", "worker"] {
        assert_ne!(seen[route], "ok", "{route}: {seen}");
    }
    // Chrome may open a bare connection ahead of a navigation it then pauses (a recorded
    // residual risk with no proxy): no request may arrive.
    no_request_reached(&trap, &seen).await;
    let hosts = refused_hosts(&log.since(cursor));
    assert!(
        hosts.contains(&format!("rebind-local.test:{t}")),
        "{hosts:?}"
    );
    browser.shutdown().await;
}

/// AMB-1, NET-3: the same at a real DevTools address (the `cdp` backend, a Chromium Conch
/// did not launch): a page's WebSocket to another local app and to the gateway is refused
/// before any connection, from the page and from its worker, and the page sees an error.
#[tokio::test(flavor = "multi_thread")]
async fn amb_1_net_3_a_websocket_in_a_browser_at_a_devtools_address_is_refused() {
    let server = FixtureServer::start().await.expect("test set-up");
    let gateway = Listener::start("Gateway").await;
    let trap = Listener::start("Trap").await;
    let standalone = conch_fixtures::browser::Standalone::start().expect("a standalone Chromium");
    let dir = tempfile::tempdir().expect("test set-up");
    let mut config =
        crate::remote::remote_only(&dir, conch_browser::remote::Remote::Cdp(standalone.http()));
    config.guard = Some(crate::remote::only_the_app(&server, &gateway));
    let browser = Browser::new(config);
    let chat = browser.conversation("c1");
    chat.open(&server.url("basic.html")).await.unwrap();
    let addresses = [
        format!("ws://127.0.0.1:{}/ws", trap.port()),
        format!("ws://localhost:{}/ws", gateway.port()),
    ];
    sockets_are_refused(&chat, &["page", "worker"], &addresses, &[&trap, &gateway]).await;
    browser.shutdown().await;
}
