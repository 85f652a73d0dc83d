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

fn kill(pid: u32) {
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
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

    kill(pid);

    // Only looks that start nothing, for up to 20 s.
    let mut back = false;
    for _ in 0..200 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = browser.pid().await;
        if now.is_some()
            && now != Some(pid)
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

    kill(pid);
    tokio::time::sleep(Duration::from_secs(3)).await;

    assert_eq!(browser.status().await.state, RunState::Idle);
    assert_eq!(browser.pid().await, None, "nothing relaunched it");
    assert!(heard.statuses().is_empty(), "{:?}", heard.statuses());
    assert_eq!(chat.tabs().await.expect("the next call heals").len(), 1);
    assert_ne!(browser.pid().await, Some(pid));
    browser.shutdown().await;
}
