//! Errands: each task browses in a browser context of its own, in a second Chromium that
//! starts when the first errand needs it, behind the same guard (ADR 0141; ERR-1, ERR-2,
//! ERR-10, ERR-20, ERR-22).
//!
//! The fixture site is served as `shop.test` through the guard's injected resolver, so
//! cookies are set on one site name by every conversation, as on a real shop.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use conch_browser::guard::{GuardConfig, MapResolver};
use conch_browser::{Browser, BrowserConfig, ConversationKind, Home, TaskState};
use conch_fixtures::FixtureServer;
use conch_policy::NetSettings;

use crate::guard::Listener;

/// A public TEST-NET-3 address the policy is told `shop.test` resolves to (AMB-3).
const SHOP: IpAddr = IpAddr::V4(Ipv4Addr::new(203, 0, 113, 10));
/// Another site, never always allowed in these tests.
const BANK: IpAddr = IpAddr::V4(Ipv4Addr::new(203, 0, 113, 12));

/// A browser behind the guard, with the fixtures as `shop.test` and a stand-in gateway.
pub(crate) struct Env {
    pub(crate) dir: tempfile::TempDir,
    server: FixtureServer,
    gateway: Listener,
    pub(crate) browser: Browser,
}

impl Env {
    pub(crate) async fn start() -> Env {
        Env::start_with(|_| {}).await
    }

    pub(crate) async fn start_with(tune: impl FnOnce(&mut BrowserConfig)) -> Env {
        let server = FixtureServer::start().await.expect("test set-up");
        let gateway = Listener::start("Gateway").await;
        let fixtures = SocketAddr::new(Ipv4Addr::LOCALHOST.into(), server.port());
        let resolver =
            MapResolver::new()
                .with("shop.test", SHOP, fixtures)
                .with("bank.test", BANK, fixtures);
        let dir = tempfile::tempdir().expect("test set-up");
        let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
        config.download = None;
        let net = NetSettings::for_gateway_port(gateway.port());
        config.guard = Some(GuardConfig::new(net).with_resolver(resolver));
        tune(&mut config);
        Env {
            dir,
            server,
            gateway,
            browser: Browser::new(config),
        }
    }

    fn home(&self) -> Home {
        Home::new(self.dir.path().join("home"))
    }

    /// Conversation `id` as a task (ERR-1).
    fn task(&self, id: &str) -> conch_browser::Conversation {
        self.browser.set_kind(id, ConversationKind::Task);
        self.browser.conversation(id)
    }
}

/// The cookies the active tab's page sees, sorted.
pub(crate) async fn cookies(conv: &conch_browser::Conversation) -> Vec<String> {
    let jar = conv.evaluate("document.cookie").await.expect("cookies");
    let mut all: Vec<String> = jar
        .as_str()
        .unwrap_or_default()
        .split("; ")
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .collect();
    all.sort();
    all
}

/// ERR-1, ERR-2: two tasks set different cookies on the same site and each sees only its
/// own; neither sees the chat's, and the chat (and another chat) sees only the main
/// profile's. A task's tabs are not another conversation's either.
#[tokio::test(flavor = "multi_thread")]
async fn err_1_err_2_tasks_keep_their_cookies_apart_and_chats_share_the_main_profile() {
    let env = Env::start().await;
    let chat = env.browser.conversation("chat");
    chat.open("http://shop.test/basic.html").await.unwrap();
    chat.evaluate("document.cookie = 'who=main; path=/'; 1")
        .await
        .unwrap();

    let a = env.task("task-a");
    let b = env.task("task-b");
    a.open("http://shop.test/basic.html").await.unwrap();
    b.open("http://shop.test/basic.html").await.unwrap();
    assert!(
        cookies(&a).await.is_empty(),
        "a new errand starts signed out"
    );
    a.evaluate("document.cookie = 'who=a; path=/'; 1")
        .await
        .unwrap();
    b.evaluate("document.cookie = 'who=b; path=/'; 1")
        .await
        .unwrap();

    assert_eq!(cookies(&a).await, ["who=a"]);
    assert_eq!(cookies(&b).await, ["who=b"]);
    assert_eq!(cookies(&chat).await, ["who=main"]);
    // Another chat is in the main context: it sees the main profile's cookie (ERR-2).
    let other_chat = env.browser.conversation("chat-2");
    other_chat
        .open("http://shop.test/basic.html")
        .await
        .unwrap();
    assert_eq!(cookies(&other_chat).await, ["who=main"]);

    // Each conversation's tabs are its own; the kinds are the embedder's.
    assert_eq!(a.tabs().await.unwrap().len(), 1);
    assert_eq!(b.tabs().await.unwrap().len(), 1);
    assert_eq!(env.browser.kind("task-a"), ConversationKind::Task);
    assert_eq!(env.browser.kind("chat"), ConversationKind::Chat);
    // Saying "chat" of a task does not take it out of its errand.
    env.browser.set_kind("task-a", ConversationKind::Chat);
    assert_eq!(env.browser.kind("task-a"), ConversationKind::Task);
    assert_eq!(
        cookies(&env.browser.conversation("task-a")).await,
        ["who=a"]
    );
    assert_eq!(env.browser.errands_open().await, 2);
    env.browser.shutdown().await;
}

/// ERR-20: there is no second browser process until the first errand needs a page; then
/// there is one, other than the main browser, and a second errand shares it.
#[tokio::test(flavor = "multi_thread")]
async fn err_20_the_first_errand_starts_a_second_browser_process() {
    let env = Env::start().await;
    let chat = env.browser.conversation("chat");
    chat.open("http://shop.test/basic.html").await.unwrap();
    let main = env.browser.pid().await.expect("the main browser runs");
    assert_eq!(env.browser.errands_pid().await, None);
    // Saying a conversation is a task starts nothing by itself.
    let a = env.task("task-a");
    assert_eq!(env.browser.errands_pid().await, None);

    a.open("http://shop.test/basic.html").await.unwrap();
    let errands = env
        .browser
        .errands_pid()
        .await
        .expect("the errands' browser runs");
    assert_ne!(errands, main);
    assert!(
        std::path::Path::new(&format!("/proc/{errands}")).exists(),
        "the errands' browser is a live process"
    );
    env.task("task-b")
        .open("http://shop.test/basic.html")
        .await
        .unwrap();
    assert_eq!(env.browser.errands_pid().await, Some(errands));
    assert_eq!(env.browser.pid().await, Some(main));
    env.browser.shutdown().await;
    assert_eq!(env.browser.errands_pid().await, None);
}

/// ERR-22: an errand's page that probes the gateway is refused by the same guard as a
/// chat's, the refusals are told to that errand, and nothing reaches the gateway.
#[tokio::test(flavor = "multi_thread")]
async fn err_22_an_errand_probing_the_gateway_is_blocked() {
    let env = Env::start().await;
    let errand = env.task("task-a");
    errand
        .open("http://shop.test/probe-gateway.html")
        .await
        .unwrap();
    assert_eq!(errand.evaluate("document.title").await.unwrap(), "Probe");
    let g = env.gateway.port();
    let log = env.browser.guard_log();
    for target in [
        format!("http://127.0.0.1:{g}"),
        format!("http://localhost:{g}"),
        format!("http://[::1]:{g}"),
    ] {
        let cursor = errand.blocked_cursor();
        let seen = errand
            .evaluate(&format!("probe({target:?})"))
            .await
            .unwrap();
        assert_eq!(env.gateway.hits(), 0, "{target} was reached: {seen}");
        assert_ne!(seen["websocket"], "ok", "{target}: {seen}");
        let told = errand.blocked_since(cursor).await;
        assert!(
            told.len() >= 5,
            "{target}: the errand was told only {told:?}; the guard logged {:?}",
            log.since(cursor)
        );
    }
    assert_eq!(env.gateway.hits(), 0, "{:?}", env.gateway.lines());
    env.browser.shutdown().await;
}

/// ERR-10: when the task is done its context closes (its cookies are gone) and its tabs
/// and set-aside session are forgotten; the same id later starts afresh, signed out.
#[tokio::test(flavor = "multi_thread")]
async fn err_10_a_done_task_closes_its_errand() {
    let env = Env::start().await;
    let a = env.task("task-a");
    a.open("http://shop.test/basic.html").await.unwrap();
    a.evaluate("document.cookie = 'who=a; path=/'; 1")
        .await
        .unwrap();
    env.browser
        .task_changed("task-a", TaskState::Interrupted)
        .await;
    assert_eq!(env.browser.errands_set_aside().await, ["task-a"]);
    assert_eq!(cookies(&a).await, ["who=a"], "it comes back when used");
    assert_eq!(env.browser.errands_open().await, 1);

    env.browser.task_changed("task-a", TaskState::Done).await;
    assert!(env.browser.errands_set_aside().await.is_empty());
    assert_eq!(env.browser.errands_open().await, 0);
    assert_eq!(env.browser.kind("task-a"), ConversationKind::Chat);
    let again = env.task("task-a");
    assert!(
        again.tabs().await.unwrap().is_empty(),
        "its tabs are forgotten"
    );
    again.open("http://shop.test/basic.html").await.unwrap();
    assert!(cookies(&again).await.is_empty(), "its cookies are gone");

    // A deleted chat that was a task closes its errand too.
    env.browser.chat_deleted("task-a").await;
    assert_eq!(env.browser.errands_open().await, 0);
    env.browser.shutdown().await;
}

/// What the traces of the whole process say: every event at every level, as text.
#[derive(Clone, Default)]
struct Capture {
    lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    next_span: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

struct Line(String);

impl tracing::field::Visit for Line {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!(" {}={value:?}", field.name()));
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut line = Line(String::from("span"));
        span.record(&mut line);
        self.lines.lock().expect("capture").push(line.0);
        let id = self
            .next_span
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::span::Id::from_u64(id + 1)
    }
    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        let mut line = Line(String::from("record"));
        values.record(&mut line);
        self.lines.lock().expect("capture").push(line.0);
    }
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut line = Line(event.metadata().target().to_owned());
        event.record(&mut line);
        self.lines.lock().expect("capture").push(line.0);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// The cookie canary: a sign-in's value that must never be seen outside the browsers.
const CANARY: &str = "canary-s3cr3t-5d1e0b";

/// ERR-3, ERR-7, ERR-9, ERR-23: a new errand gets a copy of the main context's cookies of
/// the always-allowed site (shop.test) and not of another (bank.test), and its session
/// names that site; what the errand signs in to never reaches the main context; with
/// every trace captured, the cookie canary appears in none of them.
#[tokio::test(flavor = "multi_thread")]
async fn err_3_err_7_err_9_err_23_an_errand_is_seeded_with_the_always_allowed_sites_only() {
    let capture = Capture::default();
    tracing::subscriber::set_global_default(capture.clone()).expect("one subscriber");
    let env = Env::start().await;
    // The sign-ins come from the sites themselves (Set-Cookie), never from a script, so
    // no DevTools call of the test names the canary.
    env.server.route(
        "/signin-shop",
        conch_fixtures::Response {
            headers: vec![
                ("Content-Type".into(), "text/html".into()),
                (
                    "Set-Cookie".into(),
                    format!("sid={CANARY}; Path=/; Max-Age=3600"),
                ),
            ],
            ..conch_fixtures::Response::html("<title>Signed in</title>")
        },
    );
    env.server.route(
        "/signin-bank",
        conch_fixtures::Response {
            headers: vec![
                ("Content-Type".into(), "text/html".into()),
                (
                    "Set-Cookie".into(),
                    format!("bank={CANARY}; Path=/; Max-Age=3600"),
                ),
            ],
            ..conch_fixtures::Response::html("<title>Signed in</title>")
        },
    );
    let mut settings = conch_browser::store::BrowserSettings::default();
    settings.allow_site("shop.test");
    settings.save(&env.home()).expect("browser.json");

    let chat = env.browser.conversation("chat");
    chat.open("http://shop.test/signin-shop").await.unwrap();
    chat.evaluate("document.cookie = 'plain=main; path=/'; 1")
        .await
        .unwrap();
    chat.open("http://bank.test/signin-bank").await.unwrap();

    let errand = env.task("task-a");
    errand
        .open("http://shop.test/cookie-jar.html")
        .await
        .unwrap();
    // Read by name only, so the canary stays out of every reply too.
    let seen = errand
        .evaluate("document.cookie.split('; ').map(c => c.split('=')[0]).sort().join(',')")
        .await
        .unwrap();
    assert_eq!(seen, "plain,sid", "shop.test's cookies are copied");
    // Its window says it is a task's own browser, lent shop.test (ERR-23).
    let session = errand.session().expect("a task's own browser");
    assert_eq!(session.reason, "task");
    assert_eq!(session.sites, ["shop.test"]);
    assert!(chat.session().is_none(), "a chat is in the main context");
    let names = |conv: conch_browser::Conversation, url: &'static str| async move {
        conv.open(url).await.unwrap();
        conv.evaluate("document.cookie.split('; ').map(c => c.split('=')[0]).sort().join(',')")
            .await
            .unwrap()
    };
    errand
        .open("http://bank.test/cookie-jar.html")
        .await
        .unwrap();
    assert_eq!(
        errand.evaluate("document.cookie").await.unwrap(),
        "",
        "bank.test is not always allowed: nothing of it is copied"
    );

    // The errand signs in on shop.test itself: that stays in the errand (ERR-7).
    errand
        .open("http://shop.test/cookie-jar.html?set=errand")
        .await
        .unwrap();
    assert_eq!(
        names(
            env.browser.conversation("chat"),
            "http://shop.test/cookie-jar.html"
        )
        .await,
        "plain,sid",
        "the errand's sign-in never reaches the main context"
    );
    assert_eq!(
        names(errand.clone(), "http://shop.test/cookie-jar.html").await,
        "plain,sid,who"
    );
    env.browser.shutdown().await;

    let lines = capture.lines.lock().expect("capture").clone();
    assert!(
        lines.iter().any(|l| l.contains("Storage.setCookies")),
        "the seeding call was traced (redacted): {} lines",
        lines.len()
    );
    for line in &lines {
        assert!(!line.contains(CANARY), "a trace shows the canary: {line}");
    }
}

/// ERR-11, ERR-12: an interrupted task's errand is set aside (its context closes, its
/// cookies and tabs sealed away); the same conversation browsing again gets its tabs and
/// cookie back. Shutting the browser down sets every open errand aside, and a new runtime
/// on the same home (a restart) brings it back on the next call. Done forgets it.
#[tokio::test(flavor = "multi_thread")]
async fn err_11_err_12_set_aside_and_resume_also_across_a_restart() {
    let env = Env::start().await;
    let a = env.task("task-a");
    a.open("http://shop.test/cookie-jar.html?set=a")
        .await
        .unwrap();
    // Moved on, so reopening the tab can't set the cookie again.
    a.open("http://shop.test/cookie-jar.html?seen")
        .await
        .unwrap();
    a.new_tab("http://shop.test/basic.html").await.unwrap();
    env.browser
        .task_changed("task-a", TaskState::Interrupted)
        .await;
    assert_eq!(env.browser.errands_open().await, 0, "its context closed");
    assert_eq!(env.browser.errands_set_aside().await, ["task-a"]);

    // Resume: the same conversation browses again.
    let a = env.browser.conversation("task-a");
    let tabs = a.tabs().await.unwrap();
    let urls: Vec<&str> = tabs.iter().map(|t| t.url.as_str()).collect();
    assert_eq!(
        urls,
        [
            "http://shop.test/cookie-jar.html?seen",
            "http://shop.test/basic.html"
        ]
    );
    assert!(tabs[1].active, "the active tab is active again");
    a.open("http://shop.test/cookie-jar.html").await.unwrap();
    assert_eq!(cookies(&a).await, ["who=a"]);

    // Repair sets it aside too (ERR-12), and it comes back when next used.
    env.browser.repair().await.unwrap();
    assert_eq!(env.browser.errands_open().await, 0);
    assert_eq!(cookies(&a).await, ["who=a"]);

    // Shutdown sets it aside (ERR-12); a new runtime on the same home brings it back.
    a.open("http://shop.test/basic.html?after-resume")
        .await
        .unwrap();
    env.browser.shutdown().await;
    let mut config = env.browser.config().clone();
    config.guard = env.browser.config().guard.clone();
    drop(a);
    let Env {
        dir,
        server,
        gateway,
        browser,
    } = env;
    drop(browser);
    let restarted = Env {
        dir,
        server,
        gateway,
        browser: Browser::new(config),
    };
    assert_eq!(restarted.browser.errands_set_aside().await, ["task-a"]);
    let a = restarted.task("task-a");
    let tabs = a.tabs().await.unwrap();
    assert_eq!(tabs.len(), 2);
    assert_eq!(tabs[1].url, "http://shop.test/basic.html?after-resume");
    a.open("http://shop.test/cookie-jar.html").await.unwrap();
    assert_eq!(cookies(&a).await, ["who=a"]);

    // Done forgets the set-aside session too (ERR-10).
    restarted
        .browser
        .task_changed("task-a", TaskState::Done)
        .await;
    assert!(restarted.browser.errands_set_aside().await.is_empty());
    restarted.browser.shutdown().await;
}

/// ERR-16, ERR-17 with the limit forced to 2: a third errand sets the one used least
/// recently aside, which comes back intact (its cookie and its tab) when next used; when
/// every open errand is driven by the person, a new one fails with "wait a minute and try
/// again".
#[tokio::test(flavor = "multi_thread")]
async fn err_16_err_17_at_the_cap_the_least_recently_used_errand_is_set_aside() {
    let env = Env::start_with(|config| config.errand_limit = 2).await;
    let a = env.task("task-a");
    let b = env.task("task-b");
    let c = env.task("task-c");
    a.open("http://shop.test/cookie-jar.html?set=a")
        .await
        .unwrap();
    a.open("http://shop.test/cookie-jar.html?seen")
        .await
        .unwrap();
    b.open("http://shop.test/cookie-jar.html?set=b")
        .await
        .unwrap();
    b.open("http://shop.test/cookie-jar.html?seen")
        .await
        .unwrap();
    assert_eq!(env.browser.errands_open().await, 2);
    // b was used last: a makes room for c.
    c.open("http://shop.test/cookie-jar.html?set=c")
        .await
        .unwrap();
    assert_eq!(env.browser.errands_open().await, 2);
    assert_eq!(env.browser.errands_set_aside().await, ["task-a"]);

    // a comes back as it was; b, now used least recently, makes room.
    let tabs = a.tabs().await.unwrap();
    assert_eq!(tabs.len(), 1);
    assert_eq!(tabs[0].url, "http://shop.test/cookie-jar.html?seen");
    assert_eq!(cookies(&a).await, ["who=a"]);
    assert_eq!(env.browser.errands_open().await, 2);
    assert!(
        env.browser
            .errands_set_aside()
            .await
            .contains(&"task-b".to_owned())
    );
    assert_eq!(cookies(&c).await, ["who=c"]);

    // The person drives both open errands: nothing can be set aside.
    a.wheel().take_over();
    c.wheel().take_over();
    let refused = b.open("http://shop.test/basic.html").await.unwrap_err();
    assert!(
        refused.to_string().contains("wait a minute and try again"),
        "{refused}"
    );
    assert_eq!(env.browser.errands_open().await, 2);
    c.wheel().hand_back();
    b.open("http://shop.test/cookie-jar.html").await.unwrap();
    assert_eq!(cookies(&b).await, ["who=b"], "b comes back intact");
    a.wheel().hand_back();
    env.browser.shutdown().await;
}

/// Sets a cookie from shop.test and one from bank.test in the errand.
async fn set_shop_and_bank_cookies(errand: &conch_browser::Conversation) {
    errand
        .open("http://shop.test/cookie-jar.html?set=shop")
        .await
        .expect("shop.test sets its cookie");
    errand
        .open("http://bank.test/cookie-jar.html?set=bank")
        .await
        .expect("bank.test sets its cookie");
}

/// Interrupts the task `id`, which sets its errand aside, and checks it is the only one
/// set aside.
async fn set_aside(env: &Env, id: &str) {
    env.browser.task_changed(id, TaskState::Interrupted).await;
    assert_eq!(env.browser.errands_set_aside().await, [id]);
}

/// ERR-8: revoking shop.test takes its cookies back from an open errand and from a
/// set-aside one; another site's cookies stay. Signing out of every site wipes both.
#[tokio::test(flavor = "multi_thread")]
async fn err_8_revoking_a_site_takes_its_cookies_back_from_every_errand() {
    let env = Env::start().await;
    let open = env.task("task-open");
    let aside = env.task("task-aside");
    for errand in [&open, &aside] {
        set_shop_and_bank_cookies(errand).await;
    }
    set_aside(&env, "task-aside").await;

    assert!(env.browser.revoke_site("shop.test").await.is_complete());

    for errand in [&open, &aside] {
        errand
            .open("http://shop.test/cookie-jar.html")
            .await
            .unwrap();
        assert!(cookies(errand).await.is_empty(), "{}", errand.id());
        errand
            .open("http://bank.test/cookie-jar.html")
            .await
            .unwrap();
        assert_eq!(cookies(errand).await, ["who=bank"], "{}", errand.id());
    }

    // "Sign out of every site" wipes every errand, open or set aside.
    env.browser
        .task_changed("task-aside", TaskState::Interrupted)
        .await;
    env.browser.sign_out_everywhere().await.unwrap();
    for errand in [&open, &aside] {
        errand
            .open("http://bank.test/cookie-jar.html")
            .await
            .unwrap();
        assert!(cookies(errand).await.is_empty(), "{}", errand.id());
    }
    env.browser.shutdown().await;
}

/// ERR-18 (clock): the idle sweep sets an errand nobody used for the idle time aside, and
/// leaves one used since; the set-aside one comes back when next used.
#[tokio::test(flavor = "multi_thread")]
async fn err_18_the_idle_sweep_sets_idle_errands_aside() {
    let clock = std::sync::Arc::new(conch_browser::ManualClock::at_unix(1_796_000_000));
    let ticking = std::sync::Arc::clone(&clock);
    let env = Env::start_with(move |config| config.clock = ticking).await;
    let idle = env.task("task-idle");
    let busy = env.task("task-busy");
    idle.open("http://shop.test/cookie-jar.html?set=idle")
        .await
        .unwrap();
    idle.open("http://shop.test/cookie-jar.html?seen")
        .await
        .unwrap();
    clock.advance(std::time::Duration::from_secs(6 * 60));
    busy.open("http://shop.test/cookie-jar.html?set=busy")
        .await
        .unwrap();
    clock.advance(std::time::Duration::from_secs(5 * 60));
    env.browser.tick().await;
    assert_eq!(env.browser.errands_set_aside().await, ["task-idle"]);
    assert_eq!(env.browser.errands_open().await, 1);
    assert_eq!(
        cookies(&idle).await,
        ["who=idle"],
        "it comes back as it was"
    );
    env.browser.shutdown().await;
}

/// ERR-19: a few seconds after a page loads, the errand's cookies are snapshotted; when
/// the errands' browser is killed, the next call reopens the errand's tabs with its
/// cookie, and its result's notes say the task's browser was reopened as it was.
#[tokio::test(flavor = "multi_thread")]
async fn err_19_a_crashed_errands_browser_comes_back_as_it_was() {
    let env = Env::start().await;
    let a = env.task("task-a");
    a.open("http://shop.test/cookie-jar.html?set=a")
        .await
        .unwrap();
    a.open("http://shop.test/cookie-jar.html?seen")
        .await
        .unwrap();
    a.new_tab("http://shop.test/basic.html").await.unwrap();
    // The snapshot is taken 3 s after the last load.
    tokio::time::sleep(std::time::Duration::from_millis(4000)).await;
    let pid = env.browser.errands_pid().await.expect("running");
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;

    let tabs = a.tabs().await.unwrap();
    let urls: Vec<&str> = tabs.iter().map(|t| t.url.as_str()).collect();
    assert_eq!(
        urls,
        [
            "http://shop.test/cookie-jar.html?seen",
            "http://shop.test/basic.html"
        ]
    );
    assert_ne!(env.browser.errands_pid().await, Some(pid), "a new process");
    assert!(
        a.take_notes()
            .await
            .contains(&conch_browser::REOPENED.to_owned()),
        "the note says it was reopened"
    );
    a.open("http://shop.test/cookie-jar.html").await.unwrap();
    assert_eq!(cookies(&a).await, ["who=a"]);
    env.browser.shutdown().await;
}

/// ERR-19: with someone watching the errand, its crashed browser is reopened at once,
/// without a call, with its cookie.
#[tokio::test(flavor = "multi_thread")]
async fn err_19_a_watched_errand_heals_without_a_call() {
    let env = Env::start().await;
    let a = env.task("task-a");
    a.open("http://shop.test/cookie-jar.html?set=a")
        .await
        .unwrap();
    a.open("http://shop.test/cookie-jar.html?seen")
        .await
        .unwrap();
    let _watching = a.wheel().activity();
    tokio::time::sleep(std::time::Duration::from_millis(4000)).await;
    let pid = env.browser.errands_pid().await.expect("running");
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill runs");
    let mut healed = false;
    for _ in 0..100 {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let now = env.browser.errands_pid().await;
        if now.is_some() && now != Some(pid) && env.browser.errands_open().await == 1 {
            healed = true;
            break;
        }
    }
    assert!(healed, "the watched errand was not reopened without a call");
    assert_eq!(cookies(&a).await, ["who=a"]);
    env.browser.shutdown().await;
}

/// The local storage canaries: values a site stored that must never be seen outside the
/// browsers and the sealed file.
const STORED_MAIN: &str = "stored-main-CANARY-3f9a";
const STORED_BANK: &str = "stored-bank-CANARY-81c2";
const STORED_ERRAND: &str = "stored-errand-CANARY-d47e";

/// Serves `path` as a page that stores `key` = `value` in its origin's local storage by
/// itself, so no DevTools call of the test names the value.
fn storing_page(env: &Env, path: &str, key: &str, value: &str) {
    env.server.route(
        path,
        conch_fixtures::Response::html(&format!(
            "<title>Stored</title><script>localStorage.setItem('{key}', '{value}')</script>"
        )),
    );
}

/// The keys of the local storage the active tab's page sees, sorted, joined by commas.
async fn stored_keys(conv: &conch_browser::Conversation) -> String {
    conv.evaluate("Object.keys(localStorage).sort().join(',')")
        .await
        .expect("local storage")
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// How long the value stored under `key` is, as the active tab's page sees it (-1 when
/// absent): checks a canary without naming it in a script.
async fn stored_len(conv: &conch_browser::Conversation, key: &str) -> i64 {
    conv.evaluate(&format!(
        "(localStorage.getItem({key:?}) ?? {{ length: -1 }}).length"
    ))
    .await
    .expect("local storage")
    .as_i64()
    .unwrap_or(-2)
}

/// ERR-3, ERR-7, ERR-9, ERR-22: a new errand gets a copy of the main context's local
/// storage of the always-allowed site (shop.test) and not of another (bank.test); what
/// the errand stores never reaches the main context; the blank pages that read and wrote
/// it never reached the site; with every trace captured, the stored values appear in none
/// of them (the copy went through DOMStorage calls, redacted).
#[tokio::test(flavor = "multi_thread")]
async fn err_3_an_errand_is_seeded_with_the_always_allowed_sites_local_storage() {
    let capture = Capture::default();
    tracing::subscriber::set_global_default(capture.clone()).expect("one subscriber");
    let env = Env::start().await;
    storing_page(&env, "/store-shop", "token", STORED_MAIN);
    storing_page(&env, "/store-bank", "bank", STORED_BANK);
    let mut settings = conch_browser::store::BrowserSettings::default();
    settings.allow_site("shop.test");
    settings.save(&env.home()).expect("browser.json");

    let chat = env.browser.conversation("chat");
    chat.open("http://shop.test/store-shop").await.unwrap();
    chat.open("http://bank.test/store-bank").await.unwrap();
    assert_eq!(stored_keys(&chat).await, "bank");

    let errand = env.task("task-a");
    errand.open("http://shop.test/basic.html").await.unwrap();
    assert_eq!(
        stored_keys(&errand).await,
        "token",
        "shop.test's local storage is copied"
    );
    assert_eq!(stored_len(&errand, "token").await, STORED_MAIN.len() as i64);
    errand.open("http://bank.test/basic.html").await.unwrap();
    assert_eq!(
        stored_keys(&errand).await,
        "",
        "bank.test is not always allowed: nothing of it is copied"
    );

    // What the errand stores stays in the errand (ERR-7).
    errand.open("http://shop.test/basic.html").await.unwrap();
    errand
        .evaluate("localStorage.setItem('errand', 'mine'); 1")
        .await
        .unwrap();
    assert_eq!(stored_keys(&errand).await, "errand,token");
    chat.open("http://shop.test/basic.html").await.unwrap();
    assert_eq!(
        stored_keys(&chat).await,
        "token",
        "the errand's storage never reaches the main context"
    );
    // No tab of the main browser or of the errand was left behind by the copy, and the
    // blank pages that stood on the origins never reached the site (ERR-22).
    assert_eq!(chat.tabs().await.unwrap().len(), 1);
    assert_eq!(errand.tabs().await.unwrap().len(), 1);
    assert_eq!(env.server.requests("/"), 0, "a blank page reached the site");
    env.browser.shutdown().await;

    let lines = capture.lines.lock().expect("capture").clone();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("DOMStorage.setDOMStorageItem")),
        "the seeding call was traced (redacted): {} lines",
        lines.len()
    );
    for line in &lines {
        assert!(
            !line.contains(STORED_MAIN) && !line.contains(STORED_BANK),
            "a trace shows a stored value: {line}"
        );
    }
}

/// ERR-11, ERR-13: an errand's local storage is kept when it is set aside, sealed (the
/// file's bytes lack the stored value), and is back when the same conversation browses
/// again, also after a restart, before its pages read it.
#[tokio::test(flavor = "multi_thread")]
async fn err_11_local_storage_survives_set_aside_and_resume() {
    let env = Env::start().await;
    storing_page(&env, "/store-errand", "mine", STORED_ERRAND);
    let a = env.task("task-a");
    a.open("http://shop.test/store-errand").await.unwrap();
    // Moved on, so reopening the tab can't store the value again.
    a.open("http://shop.test/basic.html?seen").await.unwrap();
    assert_eq!(stored_keys(&a).await, "mine");
    env.browser
        .task_changed("task-a", TaskState::Interrupted)
        .await;
    assert_eq!(env.browser.errands_open().await, 0, "its context closed");
    let bytes = std::fs::read(env.home().errand_secrets_file()).expect("the sealed file");
    assert!(
        !String::from_utf8_lossy(&bytes).contains(STORED_ERRAND),
        "the stored value is in the file in plain text"
    );

    // Resume: the tab reopens with the storage already there.
    let a = env.browser.conversation("task-a");
    let tabs = a.tabs().await.unwrap();
    assert_eq!(tabs[0].url, "http://shop.test/basic.html?seen");
    assert_eq!(stored_keys(&a).await, "mine");
    assert_eq!(stored_len(&a, "mine").await, STORED_ERRAND.len() as i64);
    assert_eq!(env.server.requests("/"), 0, "a blank page reached the site");

    // Shutdown sets it aside; a new runtime on the same home brings it back.
    env.browser.shutdown().await;
    let config = env.browser.config().clone();
    drop(a);
    let Env {
        dir,
        server,
        gateway,
        browser,
    } = env;
    drop(browser);
    let restarted = Env {
        dir,
        server,
        gateway,
        browser: Browser::new(config),
    };
    let a = restarted.task("task-a");
    assert_eq!(a.tabs().await.unwrap().len(), 1);
    assert_eq!(stored_keys(&a).await, "mine");
    restarted.browser.shutdown().await;
}

/// ERR-19: a few seconds after a load the errand's local storage is snapshotted; when the
/// errands' browser is killed, the next call reopens the errand with it, and health says
/// "Reopened a task's browser as it was" until ten minutes have passed.
#[tokio::test(flavor = "multi_thread")]
async fn err_19_a_healed_errand_gets_its_local_storage_back_and_health_says_so() {
    let clock = std::sync::Arc::new(conch_browser::ManualClock::at_unix(1_796_000_000));
    let ticking = std::sync::Arc::clone(&clock);
    let env = Env::start_with(move |config| config.clock = ticking).await;
    storing_page(&env, "/store-errand", "mine", STORED_ERRAND);
    let reopened = |browser: &Browser| {
        browser
            .health()
            .into_iter()
            .any(|item| item.check == conch_browser::HealthCheck::ErrandsReopened)
    };
    let a = env.task("task-a");
    a.open("http://shop.test/store-errand").await.unwrap();
    a.open("http://shop.test/basic.html?seen").await.unwrap();
    // The snapshot is taken 3 s after the last load.
    tokio::time::sleep(std::time::Duration::from_millis(4500)).await;
    assert!(!reopened(&env.browser), "nothing was reopened yet");
    let pid = env.browser.errands_pid().await.expect("running");
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;

    let tabs = a.tabs().await.unwrap();
    assert_eq!(tabs[0].url, "http://shop.test/basic.html?seen");
    assert_ne!(env.browser.errands_pid().await, Some(pid), "a new process");
    assert_eq!(stored_keys(&a).await, "mine");
    assert_eq!(stored_len(&a, "mine").await, STORED_ERRAND.len() as i64);
    let health = env.browser.health();
    let item = health
        .iter()
        .find(|item| item.check == conch_browser::HealthCheck::ErrandsReopened)
        .expect("health says a task's browser was reopened");
    assert_eq!(
        item.state,
        conch_browser::HealthState::Note("Reopened a task's browser as it was.".to_owned())
    );
    assert!(reopened(&env.browser), "reading health does not clear it");
    clock.advance(std::time::Duration::from_secs(11 * 60));
    assert!(!reopened(&env.browser), "it clears after ten minutes");
    env.browser.shutdown().await;
}

/// ERR-15, ERR-16, ERR-17 with the limit forced to 2: three errands starting at the same
/// moment never have more than two contexts open; each either opens (setting an idle one
/// aside) or is told to wait a minute.
#[tokio::test(flavor = "multi_thread")]
async fn err_15_errands_started_at_once_never_pass_the_cap() {
    let env = Env::start_with(|config| config.errand_limit = 2).await;
    let most = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let browser = env.browser.clone();
        let most = std::sync::Arc::clone(&most);
        let done = std::sync::Arc::clone(&done);
        tokio::spawn(async move {
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                let open = browser.errands_open().await;
                most.fetch_max(open, std::sync::atomic::Ordering::SeqCst);
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            }
        })
    };
    let tasks: Vec<_> = ["task-a", "task-b", "task-c"]
        .into_iter()
        .map(|id| {
            let conv = env.task(id);
            tokio::spawn(async move { conv.open("http://shop.test/basic.html").await })
        })
        .collect();
    let mut opened = 0;
    for task in tasks {
        match task.await.expect("the task ran") {
            Ok(_) => opened += 1,
            Err(e) => assert!(e.to_string().contains("wait a minute and try again"), "{e}"),
        }
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    watcher.await.expect("the watcher ran");
    assert!(opened >= 2, "only {opened} errands opened");
    let most = most.load(std::sync::atomic::Ordering::SeqCst);
    assert!(most <= 2, "{most} errand contexts were open at once");
    assert!(env.browser.errands_open().await <= 2);
    env.browser.shutdown().await;
}

/// ERR-8: revoking a site finishes for every set-aside errand even when an open errand's
/// browser fails meanwhile (here its process is frozen, so it answers nothing): the
/// answer names the errand not reached, within seconds, and the set-aside errand loses
/// the site's cookies all the same.
#[tokio::test(flavor = "multi_thread")]
async fn err_8_revoking_finishes_for_set_aside_errands_when_an_open_errands_browser_fails() {
    let env = Env::start().await;
    let open = env.task("task-open");
    let aside = env.task("task-aside");
    for errand in [&aside, &open] {
        set_shop_and_bank_cookies(errand).await;
    }
    set_aside(&env, "task-aside").await;

    let pid = env
        .browser
        .errands_pid()
        .await
        .expect("running")
        .to_string();
    let signal = |which: &str| {
        let sent = std::process::Command::new("kill")
            .args([which, &pid])
            .status()
            .expect("kill runs");
        assert!(sent.success());
    };
    signal("-STOP");
    let started = std::time::Instant::now();
    let revoked = env.browser.revoke_site("shop.test").await;
    let took = started.elapsed();
    signal("-CONT");
    assert_eq!(revoked.unreached, ["task-open"]);
    assert!(took < std::time::Duration::from_secs(15), "took {took:?}");

    aside
        .open("http://bank.test/cookie-jar.html?seen")
        .await
        .unwrap();
    assert_eq!(cookies(&aside).await, ["who=bank"]);
    aside
        .open("http://shop.test/cookie-jar.html?seen")
        .await
        .unwrap();
    assert!(cookies(&aside).await.is_empty());
    env.browser.shutdown().await;
}

/// ERR-8, ERR-19: a revoked site's cookies do not come back to an open errand from the
/// snapshot taken before the revoke when its browser then crashes and heals.
#[tokio::test(flavor = "multi_thread")]
async fn err_8_a_revoked_sites_cookies_do_not_come_back_from_a_crash_snapshot() {
    let env = Env::start().await;
    let open = env.task("task-open");
    set_shop_and_bank_cookies(&open).await;
    // The cookies are snapshotted 3 s after the last load (ERR-19).
    tokio::time::sleep(std::time::Duration::from_millis(4000)).await;
    assert!(env.browser.revoke_site("shop.test").await.is_complete());

    let pid = env.browser.errands_pid().await.expect("running");
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;

    open.open("http://bank.test/cookie-jar.html?seen")
        .await
        .unwrap();
    assert_ne!(env.browser.errands_pid().await, Some(pid), "a new process");
    assert_eq!(cookies(&open).await, ["who=bank"]);
    open.open("http://shop.test/cookie-jar.html?seen")
        .await
        .unwrap();
    assert!(cookies(&open).await.is_empty());
    env.browser.shutdown().await;
}

/// ERR-8: revoking shop.test takes its local storage back from an open errand and from a
/// set-aside one; bank.test's stays.
#[tokio::test(flavor = "multi_thread")]
async fn err_8_revoking_a_site_takes_its_local_storage_back_too() {
    let env = Env::start().await;
    storing_page(&env, "/store-errand", "mine", STORED_ERRAND);
    let open = env.task("task-open");
    let aside = env.task("task-aside");
    for errand in [&open, &aside] {
        errand.open("http://shop.test/store-errand").await.unwrap();
        errand.open("http://bank.test/store-errand").await.unwrap();
        errand
            .open("http://bank.test/basic.html?seen")
            .await
            .unwrap();
    }
    set_aside(&env, "task-aside").await;

    assert!(env.browser.revoke_site("shop.test").await.is_complete());

    for errand in [&open, &aside] {
        errand.open("http://shop.test/basic.html").await.unwrap();
        assert_eq!(stored_keys(errand).await, "", "{}", errand.id());
        errand.open("http://bank.test/basic.html").await.unwrap();
        assert_eq!(stored_keys(errand).await, "mine", "{}", errand.id());
    }
    env.browser.shutdown().await;
}
