//! Errands beside a browser Conch did not launch (ADR 0141 "Where it runs"; ERR-6,
//! ERR-21, ERR-22): a DevTools address gives each errand a context of that same browser;
//! a cloud that keeps one context per session leaves errands in Conch's own local browser,
//! said once in Health; the main remote browser is not let go for idleness while an errand
//! uses it; and beside the person's own Chrome errands run locally, signed in nowhere.
//!
//! The "remote" browser is a second headless Chromium with `--remote-debugging-port`, as
//! in `remote.rs`; the clouds are the pretend providers in front of it.

use std::time::Duration;

use conch_browser::own_chrome::OwnChrome;
use conch_browser::remote::{Remote, socket_address};
use conch_browser::reports::HostReports;
use conch_browser::seal::SecretText;
use conch_browser::{Browser, BrowserConfig, ConversationKind, HealthCheck, HealthState, Home};
use conch_fixtures::FixtureServer;
use conch_fixtures::browser::Standalone;
use conch_fixtures::cloud::{Flavour, PretendCloud};

use serde_json::json;

use crate::errands::cookies;
use crate::guard::Listener;
use crate::remote::{cloud_only, only_the_app, probes_reach_nothing, remote_only};

/// A pretend Steel in front of `standalone`, and the backend setting that reaches it.
async fn pretend_steel(standalone: &Standalone) -> (PretendCloud, Remote) {
    let cloud = PretendCloud::start(Flavour::SteelCloud("st-key".to_owned()), standalone.port())
        .await
        .expect("the pretend Steel");
    let steel = Remote::Steel {
        base: cloud.base(),
        key: Some(SecretText::new("st-key".to_owned())),
        connect: None,
    };
    (cloud, steel)
}

/// Conversation `id` of `browser` as a task (ERR-1).
fn task(browser: &Browser, id: &str) -> conch_browser::Conversation {
    browser.set_kind(id, ConversationKind::Task);
    browser.conversation(id)
}

/// The browser contexts of the pages at `url_end` in the browser at DevTools `port`, seen
/// from a connection of the test's own.
async fn contexts_of_pages(port: u16, url_end: &str) -> Vec<String> {
    let mut contexts: Vec<String> = crate::pool::pages_at(port, url_end)
        .await
        .into_iter()
        .map(|(_, context)| context)
        .filter(|context| !context.is_empty())
        .collect();
    contexts.sort();
    contexts
}

/// The `browser-errands` items of `browser`'s health.
fn errands_health(browser: &Browser) -> Vec<String> {
    browser
        .health()
        .into_iter()
        .filter(|item| item.check == HealthCheck::BrowserErrands)
        .map(|item| match item.state {
            HealthState::Failing(why) | HealthState::Note(why) => why,
            HealthState::Ok => "ok".to_owned(),
        })
        .collect()
}

/// ERR-21, ERR-3: on a DevTools address an errand gets a new context of that same
/// browser: no second local Chromium starts (none could: the local browser can't start
/// here), its page is in the remote browser in a context other than the chat's, it is
/// seeded from the main context there with the always-allowed site's cookie, and what it
/// sets stays apart from the main context.
#[tokio::test(flavor = "multi_thread")]
async fn err_21_an_errand_on_a_cdp_backend_gets_a_context_of_that_browser() {
    let server = FixtureServer::start().await.expect("fixture server");
    let mut standalone = Standalone::start().expect("a standalone Chromium");
    let dir = tempfile::tempdir().expect("temp dir");
    let config = remote_only(&dir, Remote::Cdp(standalone.http()));
    let mut settings = conch_browser::store::BrowserSettings::default();
    settings.allow_site("127.0.0.1");
    settings.save(&config.home).expect("browser.json");
    let browser = Browser::new(config);

    let chat = browser.conversation("chat");
    chat.open(&server.url("basic.html"))
        .await
        .expect("chat opens");
    chat.evaluate("document.cookie = 'seed=main; path=/'; 1")
        .await
        .expect("cookie");

    let errand = task(&browser, "task-a");
    errand
        .open(&server.url("basic.html"))
        .await
        .expect("the errand opens in the remote browser");
    assert_eq!(
        cookies(&errand).await,
        ["seed=main"],
        "seeded from the main context of the same remote browser"
    );
    errand
        .evaluate("document.cookie = 'who=a; path=/'; 1")
        .await
        .expect("cookie");
    assert_eq!(cookies(&errand).await, ["seed=main", "who=a"]);
    assert_eq!(
        cookies(&chat).await,
        ["seed=main"],
        "the errand's cookie reached main"
    );

    // In the remote browser: two pages on basic.html, in two different contexts.
    let contexts = contexts_of_pages(standalone.port(), "basic.html").await;
    assert_eq!(contexts.len(), 2, "{contexts:?}");
    assert_ne!(
        contexts[0], contexts[1],
        "the errand shares the chat's context"
    );
    assert_eq!(
        browser.errands_pid().await,
        None,
        "a local errands' browser was launched"
    );
    assert_eq!(browser.pid().await, None);
    assert_eq!(browser.errands_open().await, 1);
    assert!(
        errands_health(&browser).is_empty(),
        "{:?}",
        browser.health()
    );

    // Done: its context closes in the remote browser, the chat's tab stays.
    browser
        .task_changed("task-a", conch_browser::TaskState::Done)
        .await;
    let contexts = contexts_of_pages(standalone.port(), "basic.html").await;
    assert_eq!(contexts.len(), 1, "{contexts:?}");
    assert_eq!(cookies(&chat).await, ["seed=main"]);
    browser.shutdown().await;
    assert!(
        standalone.alive(),
        "letting go closed a browser Conch did not launch"
    );
}

/// ERR-22 beside a DevTools address: the errand's context in the remote browser has the
/// same CDP-only guard as the main one: its page aims at another local app and at the
/// gateway, and neither is reached.
#[tokio::test(flavor = "multi_thread")]
async fn err_22_an_errand_in_a_remote_browser_is_contained_like_the_main_one() {
    let server = FixtureServer::start().await.expect("fixture server");
    let trap = Listener::start("Trap").await;
    let gateway = Listener::start("Gateway").await;
    let standalone = Standalone::start().expect("a standalone Chromium");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = remote_only(&dir, Remote::Cdp(standalone.http()));
    config.guard = Some(only_the_app(&server, &gateway));
    let browser = Browser::new(config);
    let errand = task(&browser, "task-a");
    errand
        .open(&server.url("probe-gateway.html"))
        .await
        .expect("the allowed app opens");
    assert_eq!(browser.errands_pid().await, None, "the errand ran locally");
    let cursor = browser.guard_log().cursor();
    probes_reach_nothing(&errand, &trap, &gateway).await;
    assert!(
        !browser.guard_log().since(cursor).is_empty(),
        "the guard logged no refusal of the errand's"
    );
    browser.shutdown().await;
}

/// ERR-21: a cloud that keeps one context per session (the pretend Steel refuses
/// `Target.createBrowserContext`) leaves errands in Conch's own local browser: a second
/// local process, not a second cloud session; Health says so once however many errands
/// run, and the chat stays in the cloud.
#[tokio::test(flavor = "multi_thread")]
async fn err_21_a_backend_without_contexts_runs_errands_locally_and_health_says_so_once() {
    let server = FixtureServer::start().await.expect("fixture server");
    let standalone = Standalone::start().expect("a standalone Chromium");
    let (cloud, steel) = pretend_steel(&standalone).await;
    cloud.refuse_contexts();
    let dir = tempfile::tempdir().expect("temp dir");
    // The local browser can start here: the errands need it.
    let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
    config.download = None;
    config.guard = None;
    config.remote = Some(steel);
    let browser = Browser::new(config);
    let chat = browser.conversation("chat");
    chat.open(&server.url("basic.html"))
        .await
        .expect("chat opens");
    assert_eq!(browser.status().await.backend, "steel");
    assert!(
        errands_health(&browser).is_empty(),
        "said before any errand"
    );

    let a = task(&browser, "task-a");
    a.open(&server.url("basic.html"))
        .await
        .expect("the errand opens locally");
    let local = browser
        .errands_pid()
        .await
        .expect("the errands run in a local browser");
    assert!(std::path::Path::new(&format!("/proc/{local}")).exists());
    task(&browser, "task-b")
        .open(&server.url("basic.html"))
        .await
        .expect("a second errand opens");
    assert_eq!(browser.errands_pid().await, Some(local));
    assert_eq!(browser.pid().await, None, "the chat left the cloud");
    assert_eq!(cloud.created().len(), 1, "a second cloud session was made");
    assert_eq!(
        cloud.sockets(),
        1,
        "the errands opened a socket of their own"
    );

    let said = errands_health(&browser);
    assert_eq!(
        said,
        [conch_browser::errands_run_here(&format!(
            "Steel at {} offers no separate contexts",
            cloud.base()
        ))],
        "{:?}",
        browser.health()
    );
    assert!(said[0].starts_with("Tasks run in Conch's own browser on this computer: "));
    let notes = HostReports::notes(&browser);
    assert_eq!(
        notes.iter().filter(|n| n.starts_with("Tasks run")).count(),
        1,
        "{notes:?}"
    );
    browser.shutdown().await;
}

/// ERR-21, BE-5: the main cloud browser is not let go for idleness while an errand uses a
/// context in it: ten idle minutes of the chat, on the injected clock, release nothing
/// while the errand was used a minute ago; once the errand has idled too (and is set
/// aside), the session is released.
#[tokio::test(flavor = "multi_thread")]
async fn err_21_the_remote_browser_is_not_released_while_an_errand_uses_it() {
    let server = FixtureServer::start().await.expect("fixture server");
    let standalone = Standalone::start().expect("a standalone Chromium");
    let (cloud, steel) = pretend_steel(&standalone).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (config, clock) = cloud_only(&dir, steel);
    let browser = Browser::new(config);
    let chat = browser.conversation("chat");
    chat.open(&server.url("basic.html"))
        .await
        .expect("chat opens");
    let errand = task(&browser, "task-a");
    errand
        .open(&server.url("basic.html"))
        .await
        .expect("the errand opens in the cloud browser");
    assert_eq!(browser.errands_pid().await, None, "the errand ran locally");
    assert_eq!(browser.errands_open().await, 1);

    clock.advance(Duration::from_secs(9 * 60));
    errand
        .open(&server.url("many.html"))
        .await
        .expect("the errand goes on");
    clock.advance(Duration::from_secs(2 * 60));
    // The chat idled 11 minutes; the errand 2.
    assert!(!browser.tick().await, "released while an errand uses it");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(cloud.released().is_empty(), "{:?}", cloud.released());
    assert_eq!(browser.errands_open().await, 1);
    assert_eq!(
        errand
            .evaluate("document.title")
            .await
            .expect("still there"),
        "Many"
    );

    // Once the errand idles too, it is set aside and the session goes.
    clock.advance(Duration::from_secs(11 * 60));
    // The sweep runs again and again in the product; a snapshot of the errand's last load
    // (ERR-19, on the real clock) may still be under way at the first one; the test failed
    // once in a full run on its first sweep.
    let mut released = false;
    for _ in 0..20 {
        released = browser.tick().await;
        if released {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(released, "the idle cloud browser was kept");
    for _ in 0..100 {
        if !cloud.released().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(cloud.released(), ["sess-1"]);
    assert_eq!(browser.errands_open().await, 0);
}

/// ERR-6: beside the person's own Chrome a task's errand runs in a separate local
/// Chromium (not the person's), gets none of the person's cookies although the site is
/// always allowed, and Health, the window's session and the prompt's question
/// (`errand_lends`) say it is Conch's own browser, signed in nowhere.
#[tokio::test(flavor = "multi_thread")]
async fn err_6_beside_your_own_chrome_errands_run_locally_signed_in_nowhere() {
    const CANARY: &str = "OWN-CHROME-CANARY-5521";
    let server = FixtureServer::start().await.expect("fixture server");
    let standalone = Standalone::start().expect("a stand-in Chrome");
    // The person is signed in on the fixture site in their own Chrome.
    let socket = socket_address(&standalone.http())
        .await
        .expect("the stand-in's socket");
    let person = conch_cdp::Connection::connect(&socket)
        .await
        .expect("the test connects");
    person
        .browser()
        .call_raw(
            "Storage.setCookies",
            json!({ "cookies": [{
                "name": "sid", "value": CANARY, "domain": "127.0.0.1", "path": "/",
                "expires": 2_000_000_000,
            }] }),
        )
        .await
        .expect("the person's cookie");
    person.close();

    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
    config.download = None;
    config.guard = None;
    config.remote = Some(Remote::Chrome(OwnChrome::in_folder(
        standalone.profile().to_path_buf(),
        Duration::from_secs(30),
    )));
    // Always allowed: were anything copied out of the person's Chrome, this would be.
    let mut settings = conch_browser::store::BrowserSettings::default();
    settings.allow_site("127.0.0.1");
    settings.backend = conch_browser::store::Backend::Chrome;
    settings.save(&config.home).expect("browser.json");
    let browser = Browser::new(config);

    let chat = browser.conversation("chat");
    chat.open(&server.url("basic.html"))
        .await
        .expect("chat opens");
    assert_eq!(browser.status().await.backend, "chrome");
    assert!(
        cookies(&chat).await.iter().any(|c| c.contains(CANARY)),
        "the stand-in's cookie is not the person's"
    );
    assert_eq!(browser.pid().await, None);

    let errand = task(&browser, "task-a");
    errand
        .open(&server.url("basic.html"))
        .await
        .expect("the errand opens");
    let local = browser
        .errands_pid()
        .await
        .expect("the errand runs in a local Chromium");
    assert!(std::path::Path::new(&format!("/proc/{local}")).exists());
    assert!(
        cookies(&errand).await.is_empty(),
        "the errand is signed in somewhere"
    );
    assert!(
        !browser.errand_lends("task-a"),
        "an Allow would lend the person's sign-in"
    );

    // Health says it once, and so does the window's session.
    assert_eq!(
        errands_health(&browser),
        [conch_browser::ERRANDS_BESIDE_OWN_CHROME],
        "{:?}",
        browser.health()
    );
    assert!(conch_browser::ERRANDS_BESIDE_OWN_CHROME.contains("signed in nowhere"));
    let session = errand.session().expect("a task's own browser");
    assert_eq!(session.reason, "ownChrome");
    assert!(session.sites.is_empty(), "{session:?}");
    assert!(chat.session().is_none());
    let said = format!("{:?}{:?}", browser.health(), errand.take_notes().await);
    assert!(!said.contains(CANARY), "{said}");
    browser.shutdown().await;
}
