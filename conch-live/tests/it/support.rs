//! A browser on a temp home with the fixture pages, a [`Hub`] over it with a recording
//! [`TurnControl`], and helpers to read a watcher's feed.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use conch_browser::{Browser, BrowserConfig, Conversation, Home};
use conch_cdp::Session;
use conch_fixtures::FixtureServer;
use conch_live::{Event, Feed, Hub, Outgoing, TurnControl};
use futures_util::StreamExt;

/// Records every interrupt (LIVE-14) and, as the gateway's does, ends the conversation's
/// call in flight through its wheel.
#[derive(Debug)]
pub(crate) struct Turns {
    pub(crate) asked: Mutex<Vec<String>>,
    browser: Browser,
}

impl TurnControl for Turns {
    fn interrupt(&self, conversation: &str) {
        self.asked
            .lock()
            .expect("the record")
            .push(conversation.to_owned());
        self.browser.wheel(conversation).interrupt();
    }
}

pub(crate) struct Lab {
    _dir: tempfile::TempDir,
    _server: FixtureServer,
    pub(crate) base: String,
    pub(crate) browser: Browser,
    pub(crate) hub: Hub,
    pub(crate) turns: Arc<Turns>,
}

pub(crate) async fn lab() -> Lab {
    lab_with(|_| {}).await
}

/// A lab whose browser's configuration `change` adjusts first (a clock, say).
pub(crate) async fn lab_with(change: impl FnOnce(&mut BrowserConfig)) -> Lab {
    let server = FixtureServer::start().await.expect("fixture server");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
    config.download = None;
    // The fixtures are served on loopback, which the guard refuses; containment has its
    // own tests in conch-browser.
    config.guard = None;
    change(&mut config);
    let browser = Browser::new(config);
    let turns = Arc::new(Turns {
        asked: Mutex::new(Vec::new()),
        browser: browser.clone(),
    });
    let hub = Hub::new(browser.clone(), Arc::clone(&turns) as Arc<dyn TurnControl>);
    Lab {
        base: server.url(""),
        _server: server,
        _dir: dir,
        browser,
        hub,
        turns,
    }
}

impl Lab {
    /// Conversation `id` with `page` open.
    pub(crate) async fn open(&self, id: &str, page: &str) -> Conversation {
        let chat = self.browser.conversation(id);
        chat.open(&format!("{}{page}", self.base))
            .await
            .expect("the page opens");
        chat
    }
}

/// The conversation's page session.
pub(crate) async fn page_of(chat: &Conversation) -> Session {
    chat.page().await.expect("a page")
}

/// Evaluates `expression` on the conversation's page.
pub(crate) async fn eval(chat: &Conversation, expression: &str) -> serde_json::Value {
    chat.evaluate(expression).await.expect("the page answers")
}

/// The next frame of `feed` within `within`, skipping events.
pub(crate) async fn next_frame(feed: &mut Feed, within: Duration) -> Option<Vec<u8>> {
    tokio::time::timeout(within, async {
        loop {
            match feed.next().await {
                Some(Outgoing::Frame(jpeg)) => return Some(jpeg),
                Some(Outgoing::Event(_)) => {}
                None => return None,
            }
        }
    })
    .await
    .ok()
    .flatten()
}

/// The next event of `feed` that `pick` accepts, within `within`, skipping frames.
pub(crate) async fn next_event<T>(
    feed: &mut Feed,
    within: Duration,
    mut pick: impl FnMut(&Event) -> Option<T>,
) -> Option<T> {
    tokio::time::timeout(within, async {
        loop {
            match feed.next().await {
                Some(Outgoing::Event(event)) => {
                    if let Some(found) = pick(&event) {
                        return Some(found);
                    }
                }
                Some(Outgoing::Frame(_)) => {}
                None => return None,
            }
        }
    })
    .await
    .ok()
    .flatten()
}

/// Counts the screencast frames `page` sends, and keeps the newest, from now on: a spy on
/// DevTools that sees what the browser sends whoever listens.
pub(crate) struct FrameSpy {
    pub(crate) seen: Arc<Mutex<Vec<Vec<u8>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FrameSpy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FrameSpy {
    pub(crate) fn on(page: &Session) -> FrameSpy {
        let mut events = page.events("Page.screencastFrame");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let task = tokio::spawn({
            let seen = Arc::clone(&seen);
            async move {
                while let Some(event) = events.next().await {
                    if let Ok(frame) = event.parse::<serde_json::Value>()
                        && let Some(data) = frame["data"].as_str()
                        && let Some(jpeg) = conch_browser::page::base64::decode(data)
                    {
                        seen.lock().expect("the spy").push(jpeg);
                    }
                }
            }
        });
        FrameSpy { seen, task }
    }

    /// Whether the spy saw `jpeg` by now.
    pub(crate) fn has_now(&self, jpeg: &[u8]) -> bool {
        self.seen.lock().expect("the spy").iter().any(|f| f == jpeg)
    }

    pub(crate) fn count(&self) -> usize {
        self.seen.lock().expect("the spy").len()
    }

    /// Whether the spy saw `jpeg`; its task may hear of a frame a moment after the
    /// watcher did, so it is given a second.
    pub(crate) async fn has(&self, jpeg: &[u8]) -> bool {
        eventually(Duration::from_secs(1), || async {
            self.seen.lock().expect("the spy").iter().any(|f| f == jpeg)
        })
        .await
    }

    pub(crate) fn newest(&self) -> Option<Vec<u8>> {
        self.seen.lock().expect("the spy").last().cloned()
    }
}

/// A command as JSON text bytes.
pub(crate) fn cmd(json: &serde_json::Value) -> Vec<u8> {
    json.to_string().into_bytes()
}

/// Polls `check` every 50 ms until it holds or `within` passes.
pub(crate) async fn eventually<F, Fut>(within: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if check().await {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
