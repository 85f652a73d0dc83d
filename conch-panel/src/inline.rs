//! The live view inline in the chat (MCP Apps, issue 31): the app's document and the
//! [`InlineDoor`], the [`conch_tools::AppDoor`] behind its app-only tools.
//!
//! The app (`conch-panel/app/`: one HTML document with its style and script put inside,
//! since a host's sandboxed iframe loads nothing else) speaks the MCP Apps view protocol
//! with its host and reaches the gateway only through the host's `tools/call`. The door
//! signs the person in with the panel's own one-time codes ([`Panel`]'s sign-in), and
//! bridges the tools to what the panel's live socket reaches: the conversation's view on
//! conch-live's hub (frames, cursor, caption, status; takeover, input, hand back) and the
//! question cards of the board. A conversation's inline view is one watcher of the hub
//! while the app looks at it; when no look came for [`IDLE`], it leaves, so the
//! screencast stops after the last watcher (LIVE-2) and a plain takeover goes back to the
//! agent after conch-live's grace (LIVE-8).
//!
//! Deliberately absent: any check of who calls (conch-tools' grant does that), find,
//! tabs, the page's dialogs and Stop (the full panel's).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use conch_browser::page::base64;
use conch_browser::sync::lock;
use conch_live::{Control, Event, Outgoing};
use conch_tools::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::Panel;

/// How long a conversation's inline view stays a watcher with no look from its app.
pub const IDLE: Duration = Duration::from_secs(20);

/// How long a look waits for a frame newer than the one the app has.
const LOOK_WAIT: Duration = Duration::from_millis(1500);

/// The app's document, `ui://conch/live`'s text: the view with its style and script
/// inside; `panel` is the full panel's address (`http://127.0.0.1:PORT/`), which the
/// view offers to open with the host's `ui/open-link`.
pub fn app_html(panel: &str) -> String {
    include_str!("../app/live.html")
        .replace("/*{{STYLE}}*/", include_str!("../app/live.css"))
        .replace("//{{SCRIPT}}", include_str!("../app/live.js"))
        .replace("{{PANEL}}", &format!("{panel}?browser=1"))
}

/// What the inline view of one conversation saw last.
#[derive(Debug, Clone, Default)]
struct Seen {
    /// The frame's number, counting from 1.
    seq: u64,
    frame: Option<Arc<Vec<u8>>>,
    cursor: Option<Value>,
    caption: Option<String>,
    status: Option<Value>,
}

/// One conversation's inline view: a watcher of its live view.
struct Watch {
    control: Control,
    seen: watch::Receiver<Seen>,
    used: Arc<Mutex<Instant>>,
}

/// The [`conch_tools::AppDoor`] of the panel: its sign-in, live view and cards. Cheap to
/// clone.
#[derive(Clone)]
pub struct InlineDoor {
    panel: Panel,
    watches: Arc<Mutex<HashMap<String, Arc<Watch>>>>,
}

impl std::fmt::Debug for InlineDoor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InlineDoor").finish_non_exhaustive()
    }
}

impl InlineDoor {
    /// The inline view's door onto `panel`.
    pub fn new(panel: Panel) -> InlineDoor {
        InlineDoor {
            panel,
            watches: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// `conversation`'s inline watcher, joining its live view if it has none.
    fn watch(&self, conversation: &str) -> Arc<Watch> {
        let mut watches = lock(&self.watches);
        if let Some(watch) = watches.get(conversation) {
            *lock(&watch.used) = Instant::now();
            return Arc::clone(watch);
        }
        let (mut feed, control) = self.panel.inner.live.hub().join(conversation);
        let (tell, seen) = watch::channel(Seen::default());
        let used = Arc::new(Mutex::new(Instant::now()));
        let made = Arc::new(Watch {
            control,
            seen,
            used: Arc::clone(&used),
        });
        watches.insert(conversation.to_owned(), Arc::clone(&made));
        let watches = Arc::clone(&self.watches);
        let conversation = conversation.to_owned();
        tokio::spawn(async move {
            tracing::info!(conversation, "an inline live view joined");
            loop {
                let idle = IDLE.saturating_sub(lock(&used).elapsed());
                if idle.is_zero() {
                    break;
                }
                let out = tokio::select! {
                    out = feed.next() => out,
                    () = tokio::time::sleep(idle) => continue,
                };
                let Some(out) = out else { break };
                tell.send_modify(|seen| match out {
                    Outgoing::Frame(jpeg) => {
                        seen.seq += 1;
                        seen.frame = Some(Arc::new(jpeg));
                    }
                    Outgoing::Event(event) => match &event {
                        Event::Cursor { caption, .. } => {
                            seen.caption = Some(caption.clone());
                            seen.cursor = serde_json::to_value(&event).ok();
                        }
                        Event::Step(step) => {
                            seen.caption = Some(step.caption.clone());
                        }
                        Event::Status { .. } => {
                            seen.status = serde_json::to_value(&event).ok();
                        }
                        _ => {}
                    },
                });
            }
            // Leaving: the feed and the seat go, so the cast stops after the last
            // watcher (LIVE-2).
            lock(&watches).remove(&conversation);
            drop(feed);
            tracing::info!(conversation, "an inline live view left");
        });
        made
    }
}

impl conch_tools::AppDoor for InlineDoor {
    fn sign_in(&self, code: &str) -> bool {
        self.panel.sign_in(code).is_some()
    }

    fn look<'a>(&'a self, conversation: &'a str, after: u64) -> BoxFuture<'a, Value> {
        Box::pin(async move {
            let watch = self.watch(conversation);
            let mut seen = watch.seen.clone();
            let _ = tokio::time::timeout(LOOK_WAIT, seen.wait_for(|s| s.seq > after)).await;
            let now = seen.borrow().clone();
            let cards = self.panel.inner.live.board().open_for(conversation);
            json!({
                "seq": now.seq,
                // Only a frame the app doesn't have yet: the same one again is no news.
                "frame": now.frame.filter(|_| now.seq > after).map(|jpeg| base64::encode(&jpeg)),
                "cursor": now.cursor,
                "caption": now.caption,
                "status": now.status,
                "cards": cards,
            })
        })
    }

    fn command<'a>(&'a self, conversation: &'a str, command: Value) -> BoxFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let watch = self.watch(conversation);
            let bytes = serde_json::to_vec(&command).unwrap_or_default();
            watch
                .control
                .command(&bytes)
                .await
                .iter()
                .filter_map(|event| serde_json::to_value(event).ok())
                .collect()
        })
    }

    fn person_drives(&self, conversation: &str) -> bool {
        self.panel
            .tools()
            .is_some_and(|tools| tools.browser().wheel(conversation).state().person_drives)
    }

    fn answer(&self, conversation: &str, id: &str, choice: &str) -> Result<(), String> {
        self.panel
            .inner
            .live
            .board()
            .answer(conversation, id, choice)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}
