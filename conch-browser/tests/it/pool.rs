//! The pool backend (issue 32): a list of DevTools addresses, each conversation (chat or
//! task) in a context of its own over a connection of its own on the least-loaded one, a
//! cap per address and a first-come queue past it, an address that dies taken out with
//! its conversations reopened elsewhere, and a place let go when its conversation ends or
//! sits idle.
//!
//! The endpoints are plain headless Chromiums with DevTools ports ([`endpoint`]); the same
//! tests run on real browserless servers by changing that one function.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use conch_browser::protocol::{BrowserEvent, EventSink};
use conch_browser::remote::Remote;
use conch_browser::{Browser, BrowserConfig, ConversationKind, HealthCheck, HealthState};
use conch_fixtures::FixtureServer;
use conch_fixtures::browser::Standalone;
use serde_json::json;

use crate::errands::cookies;
use crate::remote::{cloud_only, core_scenario};

/// One endpoint of the pool, started for the test and ended when dropped.
pub(crate) struct Endpoint {
    browser: Option<Standalone>,
    address: String,
    port: u16,
}

impl Endpoint {
    /// The DevTools address the pool is given.
    fn address(&self) -> String {
        self.address.clone()
    }

    /// Kills it, as a machine of the fleet that dies.
    fn kill(&mut self) {
        self.browser = None;
    }
}

/// Starts one endpoint: a plain Chromium with a DevTools port on 127.0.0.1.
async fn endpoint() -> Endpoint {
    let standalone = Standalone::start().expect("a standalone Chromium");
    Endpoint {
        address: standalone.http(),
        port: standalone.port(),
        browser: Some(standalone),
    }
}

/// A runtime on a pool of `endpoints`, one conversation on each, waiting up to a minute
/// for a place, with what it tells the person heard.
fn heard_on_pool(dir: &tempfile::TempDir, endpoints: &[&Endpoint]) -> (Browser, Arc<Heard>) {
    let (mut config, _) = on_pool(dir, endpoints, 1, Duration::from_secs(60));
    let heard = Arc::new(Heard::default());
    config.events = Some(heard.clone());
    (Browser::new(config), heard)
}

/// A runtime on a pool of `endpoints`, at most `per_endpoint` conversations on each,
/// waiting at most `wait` for a place; its local browser can't start, so every page is
/// the pool's. Gives the clock too.
fn on_pool(
    dir: &tempfile::TempDir,
    endpoints: &[&Endpoint],
    per_endpoint: usize,
    wait: Duration,
) -> (BrowserConfig, Arc<conch_browser::ManualClock>) {
    let (mut config, clock) = cloud_only(
        dir,
        Remote::Pool {
            endpoints: endpoints.iter().map(|e| e.address()).collect(),
            per_endpoint,
        },
    );
    config.pool_wait = wait;
    (config, clock)
}

/// The pages at `url_end` in the browser at DevTools `port`, each with its context.
pub(crate) async fn pages_at(port: u16, url_end: &str) -> Vec<(String, String)> {
    let socket = conch_fixtures::browser::devtools_socket(port)
        .await
        .expect("the browser's socket");
    let spy = conch_cdp::Connection::connect(&socket)
        .await
        .expect("the test connects");
    let targets = spy
        .browser()
        .call_raw("Target.getTargets", json!({}))
        .await
        .expect("targets");
    spy.close();
    targets["targetInfos"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["type"] == "page" && t["url"].as_str().is_some_and(|u| u.ends_with(url_end)))
        .map(|t| {
            (
                t["url"].as_str().unwrap_or_default().to_owned(),
                t["browserContextId"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect()
}

/// The events a runtime sent, by conversation.
#[derive(Debug, Default)]
struct Heard(Mutex<Vec<(String, String)>>);

impl EventSink for Heard {
    fn send(&self, conversation: &str, event: BrowserEvent) {
        if let BrowserEvent::Status(status) = event {
            self.0
                .lock()
                .expect("heard")
                .push((conversation.to_owned(), status.message));
        }
    }
}

impl Heard {
    fn of(&self, conversation: &str) -> Vec<String> {
        self.0
            .lock()
            .expect("heard")
            .iter()
            .filter(|(c, _)| c == conversation)
            .map(|(_, m)| m.clone())
            .collect()
    }
}

/// Two chats and two tasks open `url` at once on the pool `browser` runs on, each sets a
/// cookie, and each sees only its own; none runs in a browser Conch launched (ERR-1).
pub(crate) async fn four_apart(browser: &Browser, url: &str) {
    browser.set_kind("t1", ConversationKind::Task);
    browser.set_kind("t2", ConversationKind::Task);
    let ids = ["c1", "c2", "t1", "t2"];
    let opened = futures_util::future::join_all(ids.iter().map(|id| {
        let conv = browser.conversation(id);
        async move {
            conv.open(url)
                .await
                .unwrap_or_else(|e| panic!("{}: {e}", conv.id()));
            conv.evaluate(&format!("document.cookie = 'who={}; path=/'; 1", conv.id()))
                .await
                .expect("a cookie");
        }
    }));
    tokio::time::timeout(Duration::from_secs(60), opened)
        .await
        .expect("all four placed without waiting past the cap");
    for id in ids {
        assert_eq!(
            cookies(&browser.conversation(id)).await,
            [format!("who={id}")],
            "{id} sees another conversation's cookie"
        );
    }
    assert_eq!(browser.pid().await, None);
    assert_eq!(browser.errands_pid().await, None, "a task ran locally");
}

/// Opens two tabs in `chat`, lets `kill` end its address in the middle of a step, and
/// checks that the step ends, that the conversation comes back elsewhere with both tabs
/// and still works, and that its next result says so once, in one note, not ERR-19's
/// besides (BE-4). Gives that note.
pub(crate) async fn killed_mid_step(
    chat: &conch_browser::Conversation,
    server: &FixtureServer,
    kill: impl FnOnce(),
) -> String {
    chat.open(&server.url("basic.html")).await.expect("opens");
    chat.new_tab(&server.url("many.html"))
        .await
        .expect("a second tab");
    let _ = chat.take_notes().await;
    let step = {
        let chat = chat.clone();
        tokio::spawn(async move {
            chat.evaluate("new Promise(r => setTimeout(() => r(1), 3000))")
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    kill();
    let _ = tokio::time::timeout(Duration::from_secs(30), step)
        .await
        .expect("the step in flight ends, it does not hang");
    let tabs = chat.tabs().await.expect("the conversation comes back");
    let mut urls: Vec<String> = tabs.iter().map(|t| t.url.clone()).collect();
    urls.sort();
    assert_eq!(
        urls,
        [server.url("basic.html"), server.url("many.html")],
        "{tabs:?}"
    );
    // Told once: the pool's move names where the tabs went, and ERR-19's "Reopened a
    // task's browser as it was." is not said besides.
    let notes = chat.take_notes().await;
    let moved: Vec<&String> = notes
        .iter()
        .filter(|n| n.contains("reopened") || n.contains("Reopened"))
        .collect();
    assert_eq!(moved.len(), 1, "{notes:?}");
    assert!(
        moved[0].contains("so this conversation moved to"),
        "{notes:?}"
    );
    assert!(
        chat.take_notes()
            .await
            .iter()
            .all(|n| !n.contains("reopened") && !n.contains("Reopened")),
        "said more than once"
    );
    assert_eq!(
        chat.evaluate("1 + 1").await.expect("a step on the other"),
        2
    );
    moved[0].clone()
}

/// With both places of `browser`'s pool (one per address, waiting at most 1 s) taken, the
/// next conversation is refused with a sentence, never a hang (ERR-15).
pub(crate) async fn refused_past_the_wait(browser: &Browser, url: &str) {
    for id in ["c1", "c2"] {
        browser.conversation(id).open(url).await.expect("placed");
    }
    let e = tokio::time::timeout(
        Duration::from_secs(20),
        browser.conversation("c3").open(url),
    )
    .await
    .expect("no hang")
    .expect_err("refused");
    assert!(
        e.to_string()
            .starts_with("No browser of the pool came free within 1 s"),
        "{e}"
    );
    browser.shutdown().await;
}

/// Issue 32 (BE-1): the core scenario (open, read, click, type, form, new tab, list,
/// close) passes on a pool of two browsers; Conch launches none of its own, and letting
/// go leaves both running.
#[tokio::test(flavor = "multi_thread")]
async fn be_1_the_core_scenario_passes_on_a_pool() {
    let server = FixtureServer::start().await.expect("fixture server");
    let (mut a, mut b) = (endpoint().await, endpoint().await);
    let dir = tempfile::tempdir().expect("temp dir");
    let (config, _) = on_pool(&dir, &[&a, &b], 4, Duration::from_secs(30));
    let browser = Browser::new(config);
    core_scenario(&browser, &server, "pool").await;
    assert_eq!(browser.pid().await, None, "Conch launched a browser");
    assert_eq!(browser.errands_pid().await, None);
    // The first conversation is on the first address, in a context of its own.
    let pages = pages_at(a.port, "many.html").await;
    assert_eq!(pages.len(), 1, "{pages:?}");
    assert!(!pages[0].1.is_empty(), "{pages:?}");
    browser.shutdown().await;
    assert!(pages_at(a.port, "many.html").await.is_empty());
    assert!(a.browser.as_mut().is_some_and(Standalone::alive));
    assert!(b.browser.as_mut().is_some_and(Standalone::alive));
}

/// Issue 32 (ERR-1, ERR-10): two chats and two tasks at once on a pool of two each browse
/// in a context of their own, spread two and two over both addresses, their cookies
/// apart; a task that ends closes its context there and frees its place.
#[tokio::test(flavor = "multi_thread")]
async fn err_1_two_chats_and_two_tasks_at_once_each_have_a_context_of_their_own_on_the_pool() {
    let server = FixtureServer::start().await.expect("fixture server");
    let (a, b) = (endpoint().await, endpoint().await);
    let dir = tempfile::tempdir().expect("temp dir");
    let (config, _) = on_pool(&dir, &[&a, &b], 4, Duration::from_secs(30));
    let browser = Browser::new(config);
    four_apart(&browser, &server.url("basic.html")).await;
    let (on_a, on_b) = (
        pages_at(a.port, "basic.html").await,
        pages_at(b.port, "basic.html").await,
    );
    assert_eq!((on_a.len(), on_b.len()), (2, 2), "{on_a:?} {on_b:?}");
    let mut contexts: Vec<&String> = on_a.iter().chain(&on_b).map(|(_, c)| c).collect();
    contexts.sort();
    contexts.dedup();
    assert_eq!(contexts.len(), 4, "two conversations share a context");

    // A task that is done lets go of its context and its place (ERR-10).
    browser
        .task_changed("t1", conch_browser::TaskState::Done)
        .await;
    let left =
        pages_at(a.port, "basic.html").await.len() + pages_at(b.port, "basic.html").await.len();
    assert_eq!(left, 3);
    browser.shutdown().await;
}

/// Issue 32 (BE-4): an address killed in the middle of a step is taken out of the pool;
/// the conversation on it comes back on the other with its tabs, and its next result says
/// so once; Health names the address taken out.
#[tokio::test(flavor = "multi_thread")]
async fn be_4_an_address_killed_mid_step_moves_its_conversation_with_its_tabs() {
    let server = FixtureServer::start().await.expect("fixture server");
    let (mut a, b) = (endpoint().await, endpoint().await);
    let dir = tempfile::tempdir().expect("temp dir");
    let (config, _) = on_pool(&dir, &[&a, &b], 4, Duration::from_secs(30));
    let browser = Browser::new(config);
    let chat = browser.conversation("c1");
    let moved = killed_mid_step(&chat, &server, || a.kill()).await;
    assert!(moved.contains(&b.address()), "{moved}");
    assert_eq!(pages_at(b.port, ".html").await.len(), 2, "not on the other");
    // The next conversation goes to the live one too.
    let other = browser.conversation("c2");
    other.open(&server.url("basic.html")).await.expect("placed");
    assert_eq!(pages_at(b.port, "basic.html").await.len(), 2);
    let health: Vec<String> = browser
        .health()
        .into_iter()
        .filter(|h| h.check == HealthCheck::BrowserBackend)
        .filter_map(|h| match h.state {
            HealthState::Failing(why) => Some(why),
            _ => None,
        })
        .collect();
    assert!(
        health.iter().any(|h| h.contains(&a.address())),
        "{health:?}"
    );
    browser.shutdown().await;
}

/// Issue 32 (ERR-15, the cap): with both addresses at their cap, the next conversations
/// wait in line, first come first served, each told how many are ahead; one is served as
/// soon as a place frees and its result says it waited; past the wait, a sentence, never
/// a hang.
#[tokio::test(flavor = "multi_thread")]
async fn err_15_past_the_cap_conversations_wait_in_line_and_are_served_when_one_frees() {
    let server = FixtureServer::start().await.expect("fixture server");
    let (a, b) = (endpoint().await, endpoint().await);
    let dir = tempfile::tempdir().expect("temp dir");
    let (browser, heard) = heard_on_pool(&dir, &[&a, &b]);
    let url = server.url("basic.html");
    for id in ["c1", "c2"] {
        browser.conversation(id).open(&url).await.expect("placed");
    }
    let third = {
        let conv = browser.conversation("c3");
        let url = url.clone();
        tokio::spawn(async move { conv.open(&url).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let fourth = {
        let conv = browser.conversation("c4");
        let url = url.clone();
        tokio::spawn(async move { conv.open(&url).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        heard.of("c3"),
        ["Waiting for a free browser: next in line."]
    );
    assert_eq!(heard.of("c4"), ["Waiting for a free browser: 1 ahead."]);
    assert!(!third.is_finished() && !fourth.is_finished());

    // The first place that frees goes to the first in line.
    browser.chat_deleted("c1").await;
    tokio::time::timeout(Duration::from_secs(20), third)
        .await
        .expect("served once a place freed")
        .expect("joined")
        .expect("opens");
    assert!(!fourth.is_finished(), "served out of turn");
    let notes = browser.conversation("c3").take_notes().await;
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("Waited for a free browser")),
        "{notes:?}"
    );
    browser.chat_deleted("c2").await;
    tokio::time::timeout(Duration::from_secs(20), fourth)
        .await
        .expect("served")
        .expect("joined")
        .expect("opens");
    browser.shutdown().await;

    // Past the wait: a sentence.
    let dir = tempfile::tempdir().expect("temp dir");
    let (config, _) = on_pool(&dir, &[&a, &b], 1, Duration::from_secs(1));
    let browser = Browser::new(config);
    refused_past_the_wait(&browser, &url).await;
}

/// Issue 32 (BE-5, ERR-18): a conversation idle for the idle time lets go of its place
/// (its context set aside, its connection closed), so the next one is placed at once; it
/// comes back with its tab on its next call.
#[tokio::test(flavor = "multi_thread")]
async fn be_5_an_idle_conversation_lets_go_of_its_place_on_the_pool() {
    let server = FixtureServer::start().await.expect("fixture server");
    let a = endpoint().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (config, clock) = on_pool(&dir, &[&a], 1, Duration::from_secs(2));
    let browser = Browser::new(config);
    let url = server.url("basic.html");
    let idle = browser.conversation("c1");
    idle.open(&url).await.expect("placed");
    clock.advance(Duration::from_secs(11 * 60));
    browser.tick().await;
    let next = browser.conversation("c2");
    tokio::time::timeout(Duration::from_secs(20), next.open(&url))
        .await
        .expect("no hang")
        .expect("placed at once: the idle one let go");
    let notes = next.take_notes().await;
    assert!(notes.iter().all(|n| !n.starts_with("Waited")), "{notes:?}");
    assert_eq!(pages_at(a.port, "basic.html").await.len(), 1);
    browser.chat_deleted("c2").await;
    let tabs = idle.tabs().await.expect("comes back");
    assert_eq!(tabs.len(), 1, "{tabs:?}");
    assert_eq!(tabs[0].url, url);
    browser.shutdown().await;
}

/// Issue 32 (ERR-11, ERR-10): a task on the pool that is interrupted is set aside as a
/// local errand is: its context closes there, its cookie is sealed (in no file in plain
/// text), and browsing again brings its tab and cookie back on the pool; done forgets it.
#[tokio::test(flavor = "multi_thread")]
async fn err_11_a_task_on_the_pool_is_set_aside_sealed_and_comes_back() {
    const CANARY: &str = "CANARYp00lc00k1e";
    let server = FixtureServer::start().await.expect("fixture server");
    let a = endpoint().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (config, _) = on_pool(&dir, &[&a], 4, Duration::from_secs(30));
    let browser = Browser::new(config);
    browser.set_kind("t1", ConversationKind::Task);
    let task = browser.conversation("t1");
    task.open(&server.url("basic.html")).await.expect("opens");
    task.evaluate(&format!("document.cookie = 'who={CANARY}; path=/'; 1"))
        .await
        .expect("a cookie");
    browser
        .task_changed("t1", conch_browser::TaskState::Interrupted)
        .await;
    assert!(
        pages_at(a.port, "basic.html").await.is_empty(),
        "its context stayed open"
    );
    for entry in walk(dir.path()) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(CANARY),
            "{} holds the cookie in plain text",
            entry.display()
        );
    }
    let task = browser.conversation("t1");
    let tabs = task.tabs().await.expect("comes back");
    assert_eq!(tabs.len(), 1, "{tabs:?}");
    assert_eq!(cookies(&task).await, [format!("who={CANARY}")]);
    assert_eq!(
        pages_at(a.port, "basic.html").await.len(),
        1,
        "not on the pool"
    );
    assert_eq!(browser.errands_pid().await, None, "a task ran locally");
    browser
        .task_changed("t1", conch_browser::TaskState::Done)
        .await;
    assert!(pages_at(a.port, "basic.html").await.is_empty());
    browser.shutdown().await;
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// Issue 32 (AMB-1, BE-8): no proxy stands in front of a pool's browsers, so the CDP-only
/// guard judges every request there: a page of the allowed app on the pool aims at
/// another local app and at the gateway, and neither is reached.
#[tokio::test(flavor = "multi_thread")]
async fn amb_1_the_cdp_only_guard_keeps_a_pools_pages_off_local_apps() {
    let server = FixtureServer::start().await.expect("fixture server");
    let trap = crate::guard::Listener::start("Trap").await;
    let gateway = crate::guard::Listener::start("Gateway").await;
    let (a, b) = (endpoint().await, endpoint().await);
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut config, _) = on_pool(&dir, &[&a, &b], 4, Duration::from_secs(30));
    config.guard = Some(crate::remote::only_the_app(&server, &gateway));
    let browser = Browser::new(config);
    for id in ["c1", "c2"] {
        let conv = browser.conversation(id);
        conv.open(&server.url("probe-gateway.html"))
            .await
            .expect("the allowed app opens");
        crate::remote::probes_reach_nothing(&conv, &trap, &gateway).await;
    }
    assert_eq!(pages_at(b.port, "probe-gateway.html").await.len(), 1);
    browser.shutdown().await;
}

/// Issue 32 (BE-4): with every address of the pool dead, the next call says so in one
/// sentence that names what was tried, and never hangs.
#[tokio::test(flavor = "multi_thread")]
async fn be_4_with_no_address_left_the_pool_says_why() {
    let server = FixtureServer::start().await.expect("fixture server");
    let (mut a, mut b) = (endpoint().await, endpoint().await);
    let dir = tempfile::tempdir().expect("temp dir");
    let (config, _) = on_pool(&dir, &[&a, &b], 4, Duration::from_secs(30));
    let browser = Browser::new(config);
    let chat = browser.conversation("c1");
    chat.open(&server.url("basic.html")).await.expect("opens");
    assert_eq!(browser.status().await.backend, "pool");
    a.kill();
    b.kill();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let e = tokio::time::timeout(Duration::from_secs(30), chat.tabs())
        .await
        .expect("no hang")
        .expect_err("nothing answers");
    let said = e.to_string();
    assert!(said.contains("no browser of the pool answers"), "{said}");
    assert!(
        said.contains(&a.address()) && said.contains(&b.address()),
        "{said}"
    );
    browser.shutdown().await;
}

/// Issue 32 (ERR-15, LIVE-14): a call that stops waiting in line (the person pressed
/// Stop, or the client cancelled it) leaves the line: the one behind it moves up and is
/// served as soon as a place frees, not left behind a ticket nobody holds.
#[tokio::test(flavor = "multi_thread")]
async fn err_15_a_call_cancelled_while_in_line_leaves_the_line() {
    let server = FixtureServer::start().await.expect("fixture server");
    let a = endpoint().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (browser, heard) = heard_on_pool(&dir, &[&a]);
    let url = server.url("basic.html");
    browser.conversation("c1").open(&url).await.expect("placed");
    let second = {
        let conv = browser.conversation("c2");
        let url = url.clone();
        tokio::spawn(async move { conv.open(&url).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        heard.of("c2"),
        ["Waiting for a free browser: next in line."]
    );
    // Stopped while it waits: its call's future is dropped.
    second.abort();
    let _ = second.await;
    let third = {
        let conv = browser.conversation("c3");
        let url = url.clone();
        tokio::spawn(async move { conv.open(&url).await })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        heard.of("c3"),
        ["Waiting for a free browser: next in line."],
        "the stopped call still holds its place in line"
    );
    browser.chat_deleted("c1").await;
    tokio::time::timeout(Duration::from_secs(20), third)
        .await
        .expect("served once the place freed")
        .expect("joined")
        .expect("opens");
    browser.shutdown().await;
}

/// Waits up to `within` for `check` to hold.
async fn until(within: Duration, check: impl Fn() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    while tokio::time::Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    check()
}

/// Issue 32 (ERR-15, LIVE-14): a call that stops after it took a place, while its
/// connection there opens (the address's browser does not answer yet) or while the
/// browser it reached is being set up, frees the place and closes what it opened: with
/// one place per address, the next conversation takes the place at once instead of
/// waiting in line behind a place nobody holds.
#[tokio::test(flavor = "multi_thread")]
async fn err_15_a_call_cancelled_while_it_connects_frees_its_place() {
    let server = FixtureServer::start().await.expect("fixture server");
    let url = server.url("basic.html");
    // Held while the connection opens, then while the reached browser is set up.
    for held in ["Browser.getVersion", "Target.setAutoAttach"] {
        let fake = conch_fixtures::fake_cdp::FakeCdp::start_holding(held)
            .await
            .expect("a DevTools address that answers slowly");
        let dir = tempfile::tempdir().expect("temp dir");
        let (mut config, _) = cloud_only(
            &dir,
            Remote::Pool {
                endpoints: vec![fake.ws_url()],
                per_endpoint: 1,
            },
        );
        config.pool_wait = Duration::from_secs(60);
        let heard = Arc::new(Heard::default());
        config.events = Some(heard.clone());
        let browser = Browser::new(config);
        let first = {
            let conv = browser.conversation("c1");
            let url = url.clone();
            tokio::spawn(async move { conv.open(&url).await })
        };
        if !until(Duration::from_secs(10), || fake.handshakes() == 1).await {
            let finished = first.is_finished();
            first.abort();
            panic!(
                "{held}: the first call never connected ({} connected, finished {finished}): {:?}",
                fake.handshakes(),
                first.await
            );
        }
        // Its call is held there; then it is stopped: its future is dropped.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!first.is_finished(), "{held}: {:?}", first.await);
        first.abort();
        let _ = first.await;
        let second = {
            let conv = browser.conversation("c2");
            let url = url.clone();
            tokio::spawn(async move { conv.open(&url).await })
        };
        assert!(
            until(Duration::from_secs(5), || fake.handshakes() == 2).await,
            "{held}: the next conversation did not get the place: {:?}",
            heard.of("c2")
        );
        assert!(
            heard.of("c2").iter().all(|m| !m.starts_with("Waiting")),
            "{held}: {:?}",
            heard.of("c2")
        );
        assert!(
            until(Duration::from_secs(5), || fake.connections() == 1).await,
            "{held}: the stopped call's connection stayed open ({} open)",
            fake.connections()
        );
        second.abort();
        let _ = second.await;
        browser.shutdown().await;
    }
}

/// Issue 32 (ERR-15, ERR-10): a conversation that ends while its call waits in line
/// (its chat deleted, or its task stopped) leaves the line at once: ending it does not
/// wait for a place, its call never takes one, and the next conversation is placed as
/// soon as the place frees.
#[tokio::test(flavor = "multi_thread")]
async fn err_15_a_conversation_that_ends_while_in_line_leaves_it_without_a_place() {
    let server = FixtureServer::start().await.expect("fixture server");
    let a = endpoint().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (browser, heard) = heard_on_pool(&dir, &[&a]);
    browser.set_kind("t2", ConversationKind::Task);
    let url = server.url("basic.html");
    browser.conversation("c1").open(&url).await.expect("placed");
    for (id, end) in [("c2", "deleted"), ("t2", "stopped")] {
        let waiting = {
            let conv = browser.conversation(id);
            let url = url.clone();
            tokio::spawn(async move { conv.open(&url).await })
        };
        let queued = until(Duration::from_secs(5), || {
            heard
                .of(id)
                .iter()
                .any(|m| m.starts_with("Waiting for a free browser"))
        })
        .await;
        assert!(queued, "{id}: {:?}", heard.of(id));
        let ended = async {
            if end == "deleted" {
                browser.chat_deleted(id).await;
            } else {
                browser
                    .task_changed(id, conch_browser::TaskState::Stopped)
                    .await;
            }
        };
        tokio::time::timeout(Duration::from_secs(5), ended)
            .await
            .unwrap_or_else(|_| panic!("{id}: ending it waited for a place"));
        let call = tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .unwrap_or_else(|_| panic!("{id}: its call still waits"))
            .expect("joined");
        assert!(call.is_err(), "{id}: {call:?}");
    }
    // The place is still c1's alone: the next conversation is placed once it frees.
    let next = {
        let conv = browser.conversation("c3");
        let url = url.clone();
        tokio::spawn(async move { conv.open(&url).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    browser.chat_deleted("c1").await;
    tokio::time::timeout(Duration::from_secs(20), next)
        .await
        .expect("placed once the place freed")
        .expect("joined")
        .expect("opens");
    assert_eq!(pages_at(a.port, "basic.html").await.len(), 1);
    browser.shutdown().await;
}

/// Issue 32 (ERR-11, ERR-15): a task on the pool that is interrupted is set aside and
/// gives its place back at once: with one place per address, the next conversation is
/// placed without waiting for the task's idle time.
#[tokio::test(flavor = "multi_thread")]
async fn err_15_a_task_set_aside_on_the_pool_gives_its_place_back() {
    let server = FixtureServer::start().await.expect("fixture server");
    let a = endpoint().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (config, _) = on_pool(&dir, &[&a], 1, Duration::from_secs(60));
    let browser = Browser::new(config);
    browser.set_kind("t1", ConversationKind::Task);
    let url = server.url("basic.html");
    browser.conversation("t1").open(&url).await.expect("placed");
    browser
        .task_changed("t1", conch_browser::TaskState::Interrupted)
        .await;
    tokio::time::timeout(
        Duration::from_secs(10),
        browser.conversation("c2").open(&url),
    )
    .await
    .expect("the set-aside task still holds its place")
    .expect("opens");
    browser.shutdown().await;
}

/// Issue 32 (ERR-10, ERR-15, BE-4): a task whose address died while someone watched it
/// reopens at once, and waits in line when the other address is full; stopped then, it
/// gives up at once: stopping it does not wait for a place, it takes none, and the
/// conversation next in line is placed as soon as the place frees.
#[tokio::test(flavor = "multi_thread")]
async fn err_15_a_task_stopped_while_its_browser_reopens_takes_no_place() {
    let server = FixtureServer::start().await.expect("fixture server");
    let (mut a, b) = (endpoint().await, endpoint().await);
    let dir = tempfile::tempdir().expect("temp dir");
    let (browser, heard) = heard_on_pool(&dir, &[&a, &b]);
    browser.set_kind("t1", ConversationKind::Task);
    let url = server.url("basic.html");
    let task = browser.conversation("t1");
    task.open(&url).await.expect("placed on the first address");
    browser.conversation("c2").open(&url).await.expect("placed");
    let _watching = task.wheel().activity();
    a.kill();
    let reopening = until(Duration::from_secs(20), || {
        heard
            .of("t1")
            .iter()
            .any(|m| m.starts_with("Waiting for a free browser"))
    })
    .await;
    assert!(reopening, "{:?}", heard.of("t1"));
    tokio::time::timeout(
        Duration::from_secs(5),
        browser.task_changed("t1", conch_browser::TaskState::Stopped),
    )
    .await
    .expect("stopping the task waited for a place");
    let next = {
        let conv = browser.conversation("c3");
        let url = url.clone();
        tokio::spawn(async move { conv.open(&url).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    browser.chat_deleted("c2").await;
    tokio::time::timeout(Duration::from_secs(20), next)
        .await
        .expect("placed once the place freed")
        .expect("joined")
        .expect("opens");
    assert_eq!(pages_at(b.port, "basic.html").await.len(), 1);
    browser.shutdown().await;
}
