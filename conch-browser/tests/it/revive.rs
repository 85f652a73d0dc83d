//! The main browser brought back at once when it dies while someone is there (LAUNCH-8,
//! issue 28), against a real headless Chromium killed with SIGKILL.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use conch_browser::discover::FolderProbe;
use conch_browser::protocol::{BrowserEvent, EventSink};
use conch_browser::{Browser, BrowserConfig, Conversation, Home, RunState};
use conch_fixtures::FixtureServer;

/// Keeps every event the runtime sends.
#[derive(Debug, Default)]
struct Heard(Mutex<Vec<(String, BrowserEvent)>>);

impl EventSink for Heard {
    fn send(&self, conversation: &str, event: BrowserEvent) {
        self.0
            .lock()
            .expect("not poisoned")
            .push((conversation.to_owned(), event));
    }
}

impl Heard {
    /// The `browser.status` events so far: (running, message).
    fn statuses(&self) -> Vec<(bool, String)> {
        self.0
            .lock()
            .expect("not poisoned")
            .iter()
            .filter_map(|(_, e)| match e {
                BrowserEvent::Status(s) => Some((s.running, s.message.clone())),
                _ => None,
            })
            .collect()
    }
}

/// A runtime on a temp home whose probe finds the test browser, with its events heard.
fn browser() -> (tempfile::TempDir, Browser, Arc<Heard>) {
    let dir = tempfile::tempdir().expect("test set-up");
    let bin: PathBuf = dir.path().join("bin");
    std::fs::create_dir(&bin).expect("test set-up");
    let real = conch_fixtures::browser::executable().expect("test set-up");
    std::os::unix::fs::symlink(&real, bin.join("chromium")).expect("test set-up");
    let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
    config.probe = Arc::new(FolderProbe { dir: bin });
    config.download = None;
    // The fixtures are on loopback, which the guard refuses; it has its own tests.
    config.guard = None;
    let heard = Arc::new(Heard::default());
    config.events = Some(heard.clone());
    (dir, Browser::new(config), heard)
}

/// The conversation's tabs as they stand (id, address, active), and how many pages it
/// has in the browser, without starting anything.
async fn standing(conv: &Conversation) -> (Vec<(String, String, bool)>, usize) {
    let tabs = conv
        .tabs_now()
        .await
        .into_iter()
        .map(|t| (t.id, t.url, t.active))
        .collect();
    (tabs, conv.pages_now().await.len())
}

/// LAUNCH-8 (issue 28): with a watcher holding the browser awake, a SIGKILLed main
/// browser is relaunched at once, with no call, and each conversation's tabs are back at
/// their addresses, in order, the active one active; the live side heard "relaunching"
/// then "back".
#[tokio::test(flavor = "multi_thread")]
async fn launch_8_a_killed_main_browser_while_watched_comes_back_with_its_tabs() {
    let server = FixtureServer::start().await.expect("fixture server");
    let (_dir, browser, heard) = browser();
    let chat = browser.conversation("c1");
    chat.open(&server.url("basic.html")).await.expect("open");
    chat.new_tab(&server.url("tabs-a.html")).await.expect("tab");
    let other = browser.conversation("c2");
    other.open(&server.url("tabs-b.html")).await.expect("open");
    let before = (standing(&chat).await, standing(&other).await);
    assert_eq!(before.0.1, 2, "two tabs open");
    let _watcher = browser.hold_awake();
    let pid = browser.pid().await.expect("running");

    conch_fixtures::browser::kill(pid);

    // Only looks that start nothing, for up to 30 s.
    let mut back = false;
    for _ in 0..300 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = browser.pid().await;
        // Told it is back once the tabs are reopened and loaded.
        let told_back = heard.statuses().iter().any(|(running, _)| *running);
        if now.is_some()
            && now != Some(pid)
            && told_back
            && (standing(&chat).await, standing(&other).await) == before
        {
            back = true;
            break;
        }
    }
    assert!(
        back,
        "not relaunched with its tabs without a call: {:?} {:?}",
        standing(&chat).await,
        standing(&other).await
    );
    let (active, page) = chat.active_page().await.expect("an active page");
    assert_eq!(active, "t2");
    let title = page
        .call_raw(
            "Runtime.evaluate",
            serde_json::json!({ "expression": "document.title", "returnByValue": true }),
        )
        .await
        .expect("the page answers");
    assert_eq!(
        title["result"]["value"], "Tab A",
        "the active tab is loaded"
    );
    assert_eq!(browser.status().await.launches, 2);
    let statuses = heard.statuses();
    let relaunching = statuses
        .iter()
        .position(|(running, _)| !running)
        .unwrap_or_else(|| panic!("no relaunching status: {statuses:?}"));
    assert!(
        statuses[relaunching..].iter().any(|(running, _)| *running),
        "no status saying it is back: {statuses:?}"
    );
    browser.shutdown().await;
}

/// LAUNCH-8 (issue 28): with nobody there, a SIGKILLed main browser is not relaunched by
/// itself; it waits for the next call, as before.
#[tokio::test(flavor = "multi_thread")]
async fn launch_8_a_killed_main_browser_nobody_watches_waits_for_the_next_call() {
    let server = FixtureServer::start().await.expect("fixture server");
    let (_dir, browser, heard) = browser();
    let chat = browser.conversation("c1");
    chat.open(&server.url("basic.html")).await.expect("open");
    let pid = browser.pid().await.expect("running");

    conch_fixtures::browser::kill(pid);
    tokio::time::sleep(Duration::from_secs(3)).await;

    assert_eq!(browser.status().await.state, RunState::Idle);
    assert_eq!(browser.pid().await, None, "nothing relaunched it");
    assert!(heard.statuses().is_empty(), "{:?}", heard.statuses());
    assert_eq!(chat.tabs().await.expect("the next call heals").len(), 1);
    assert_ne!(browser.pid().await, Some(pid));
    browser.shutdown().await;
}

/// Waits (up to 30 s) until a browser other than `old` runs; gives its pid.
async fn relaunched_after(browser: &Browser, old: u32) -> Option<u32> {
    for _ in 0..300 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if let Some(now) = browser.pid().await
            && now != old
        {
            return Some(now);
        }
    }
    None
}

/// LAUNCH-8 (issue 28): a crash loop does not spin: while watched, a browser killed again
/// and again is relaunched three times within the minute, then left for the next call,
/// and the status and the live side say so.
#[tokio::test(flavor = "multi_thread")]
async fn launch_8_a_main_browser_that_keeps_crashing_while_watched_is_left_after_three_relaunches()
{
    let server = FixtureServer::start().await.expect("fixture server");
    let (_dir, browser, heard) = browser();
    let chat = browser.conversation("c1");
    chat.open(&server.url("basic.html")).await.expect("open");
    let _watcher = browser.hold_awake();
    let mut pid = browser.pid().await.expect("running");
    for round in 1..=3 {
        conch_fixtures::browser::kill(pid);
        pid = relaunched_after(&browser, pid)
            .await
            .unwrap_or_else(|| panic!("relaunch {round} did not happen"));
        // Its tab back before the next crash.
        let mut reopened = false;
        for _ in 0..300 {
            if chat.pages_now().await.len() == 1 {
                reopened = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(reopened, "the tab did not come back after relaunch {round}");
    }

    conch_fixtures::browser::kill(pid);
    tokio::time::sleep(Duration::from_secs(5)).await;

    let status = browser.status().await;
    assert_eq!(status.state, RunState::Idle, "not relaunched a fourth time");
    assert_eq!(browser.pid().await, None);
    assert_eq!(status.launches, 4);
    let why = status.why.unwrap_or_default();
    assert!(why.contains("3 times within a minute"), "{why}");
    let said = heard.statuses();
    assert_eq!(
        said.last().map(|(_, m)| m.as_str()),
        Some(why.as_str()),
        "{said:?}"
    );
    // The next call heals it, as ever.
    assert_eq!(chat.tabs().await.expect("the next call heals").len(), 1);
    browser.shutdown().await;
}
