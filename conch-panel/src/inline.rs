//! The live view inline in the chat (MCP Apps, issue 31): the app's document and the
//! [`InlineDoor`], the [`conch_tools::AppDoor`] behind its app-only tools.
//!
//! The app (`conch-panel/app/`: one HTML document with its style and script put inside,
//! since a host's sandboxed iframe loads nothing else) speaks the MCP Apps view protocol
//! with its host and reaches the gateway only through the host's `tools/call`. The door
//! signs the person in with the panel's own one-time codes ([`Panel`]'s sign-in), and
//! bridges the tools to what the panel's live socket reaches: the conversation's view on
//! conch-live's hub (frames, cursor, caption, status; takeover, input, hand back), the
//! browser's own `browser.status` while it is away (a pool's address died and the tabs
//! reopen elsewhere, BE-4; a relaunch, LAUNCH-8), told as the panel's socket is told, and
//! the question cards of the board. A conversation's inline view is one watcher of the hub
//! while the app looks at it; when no look came for [`IDLE`], it leaves, so the
//! screencast stops after the last watcher (LIVE-2) and a plain takeover goes back to the
//! agent after conch-live's grace (LIVE-8).
//!
//! Each inline sign-in is a sign-in of the panel's ([`Panel`]'s sessions): it ends by the
//! panel's idle rule, and with any sign-out of the panel. When the last sign-in of a
//! conversation's inline view ends, the view leaves at once, as a signed-out panel's
//! live socket closes: a plain takeover it held goes back to the agent after conch-live's
//! grace, and a handoff waits on for I'm done (HAND-5).
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
use tokio::sync::{broadcast, watch};

use crate::Panel;
use crate::cards::CardEvent;

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
    /// The browser's newest `browser.status` that said it is away (an address of the
    /// pool died and the tabs reopen elsewhere, BE-4; the browser relaunches, LAUNCH-8),
    /// as the panel's live socket hears it, with the frame number it came at while it is
    /// away (`None` once a status says it runs again). Kept after: the tabs may be back
    /// in a moment, between two looks, and the view must still hear why.
    browser: Option<(Value, Option<u64>)>,
    /// How many `browser.status` said the browser is away: a look waiting for a frame
    /// returns at a new one.
    told: u64,
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
        let panel = self.panel.clone();
        let mut endings = panel.endings();
        // The browser's own events beside the cards (PROTO-2), as the panel's socket
        // hears them: subscribed at join, as a socket is.
        let mut browser_events = Some(panel.inner.live.board().subscribe());
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
                    changed = endings.changed() => {
                        // A sign-in ended: the view leaves when none of its own holds.
                        if changed.is_err() || !panel.inline_signed_in(&conversation) {
                            break;
                        }
                        continue;
                    }
                    event = next_browser_event(&mut browser_events) => {
                        match event {
                            Some((whose, value)) if whose == conversation || whose.is_empty() => {
                                tell.send_modify(|seen| {
                                    if value["running"] == true {
                                        if let Some((_, at)) = &mut seen.browser {
                                            *at = None;
                                        }
                                    } else {
                                        seen.told += 1;
                                        seen.browser = Some((value, Some(seen.seq)));
                                    }
                                });
                            }
                            _ => {}
                        }
                        continue;
                    }
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
            // watcher (LIVE-2), and a takeover nobody else drives goes back to the agent
            // after conch-live's grace.
            {
                let mut watches = lock(&watches);
                if watches
                    .get(&conversation)
                    .is_some_and(|w| Arc::ptr_eq(&w.used, &used))
                {
                    watches.remove(&conversation);
                }
            }
            drop(feed);
            tracing::info!(conversation, "an inline live view left");
        });
        made
    }
}

/// The next `browser.status` of the board's feed (`None` for its other events, a lag, or
/// a feed that ended, which is never read again), with the conversation it is for.
async fn next_browser_event(
    events: &mut Option<broadcast::Receiver<(String, CardEvent)>>,
) -> Option<(String, Value)> {
    let Some(feed) = events else {
        return std::future::pending().await;
    };
    match feed.recv().await {
        Ok((whose, CardEvent::Browser(value))) if value["type"] == "browser.status" => {
            Some((whose, value))
        }
        Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => None,
        Err(broadcast::error::RecvError::Closed) => {
            *events = None;
            None
        }
    }
}

impl conch_tools::AppDoor for InlineDoor {
    fn sign_in(&self, conversation: &str, code: &str) -> Option<String> {
        self.panel.sign_in_inline(code, conversation)
    }

    fn still_signed_in(&self, id: &str) -> bool {
        self.panel.use_inline(id)
    }

    fn look<'a>(&'a self, conversation: &'a str, after: u64) -> BoxFuture<'a, Value> {
        Box::pin(async move {
            let watch = self.watch(conversation);
            let mut seen = watch.seen.clone();
            // A newer frame, or the browser's news (it went away, or came back).
            let told = seen.borrow().told;
            let news = seen.wait_for(|s| s.seq > after || s.told != told);
            let _ = tokio::time::timeout(LOOK_WAIT, news).await;
            let now = seen.borrow().clone();
            let cards = self.panel.inner.live.board().open_for(conversation);
            json!({
                "seq": now.seq,
                // Only a frame the app doesn't have yet: the same one again is no news.
                "frame": now.frame.filter(|_| now.seq > after).map(|jpeg| base64::encode(&jpeg)),
                "cursor": now.cursor,
                "caption": now.caption,
                "status": now.status,
                "browser": now.browser.map(|(mut status, at)| {
                    // Its number, so the view says each once; and whether the frame is
                    // still the stale one from before it.
                    status["told"] = json!(now.told);
                    status["away"] = json!(at == Some(now.seq));
                    status
                }),
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

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use axum::http::{HeaderMap, HeaderValue, header};
    use conch_tools::app::{ANSWER, REFUSED_SIGNED_OUT, SIGN_IN};
    use conch_tools::{APP_MIME, APPS_EXTENSION, McpApp, McpServer, McpSession, Mode};
    use serde_json::{Value, json};

    use super::InlineDoor;
    use crate::Panel;
    use crate::live::Live;

    /// The panel's idle time in these tests.
    const IDLE: Duration = Duration::from_secs(60 * 60);

    /// A panel on a clock the test moves, its inline view's MCP server, and the clock.
    fn panel() -> (Panel, McpServer, Arc<Mutex<Instant>>, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let mut config = conch_browser::BrowserConfig::new(conch_browser::Home::new(dir.path()));
        config.download = None;
        let browser = conch_browser::Browser::new(config);
        let board = crate::cards::Board::new(Duration::from_secs(60));
        let now = Arc::new(Mutex::new(Instant::now()));
        let clock = {
            let now = Arc::clone(&now);
            Arc::new(move || *now.lock().unwrap())
        };
        let panel = Panel::with_clock(1, Live::new(browser.clone(), board), IDLE, clock);
        let tools = conch_tools::Tools::new(
            browser,
            conch_tools::ToolsConfig::new(Arc::new(conch_tools::NoOneToAsk)),
        );
        let server = McpServer::new(tools, Mode::Ask)
            .with_app(McpApp {
                html: "<!doctype html><title>Conch</title>".to_owned(),
                connect_domains: Vec::new(),
            })
            .with_app_door(Arc::new(InlineDoor::new(panel.clone())));
        (panel, server, now, dir)
    }

    /// A session of `conversation` whose client declares MCP Apps.
    async fn view(server: &McpServer, conversation: &str) -> McpSession {
        let session = server.session(conversation);
        session
            .handle(
                &json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": { "extensions": { APPS_EXTENSION: { "mimeTypes": [APP_MIME] } } },
                "clientInfo": { "name": "t", "version": "1" } } }),
            )
            .await
            .unwrap();
        session
    }

    /// The result of the tool call `name` with `arguments`.
    async fn call(session: &McpSession, name: &str, arguments: Value) -> Value {
        let answer = session
            .handle(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": { "name": name, "arguments": arguments } }))
            .await
            .unwrap();
        answer["result"].clone()
    }

    fn text(result: &Value) -> &str {
        result["content"][0]["text"].as_str().unwrap_or_default()
    }

    /// Signs `session` in with a fresh code of `panel`: the grant.
    async fn sign_in(panel: &Panel, session: &McpSession) -> String {
        let link = panel.renew_signin();
        let signed = call(session, SIGN_IN, json!({ "code": link })).await;
        assert_eq!(signed["isError"], false, "{signed}");
        signed["structuredContent"]["grant"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// A browser's panel session: its headers (both factors, on the door's own host).
    fn browser(panel: &Panel) -> HeaderMap {
        let link = panel.renew_signin();
        let code = link.split("code=").nth(1).unwrap();
        let signed = panel.sign_in(code).unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("127.0.0.1:1"));
        let cookie = format!("{}={}", panel.cookie_name(), signed.cookie);
        headers.insert(header::COOKIE, HeaderValue::from_str(&cookie).unwrap());
        headers.insert(
            crate::door::SESSION_HEADER,
            HeaderValue::from_str(&signed.token).unwrap(),
        );
        headers
    }

    /// A call the grant lets through: a card that isn't there (the board's own refusal,
    /// not the sign-in's).
    async fn used(session: &McpSession, grant: &str) -> Value {
        call(
            session,
            ANSWER,
            json!({ "grant": grant, "id": "no-such-card", "choice": "no" }),
        )
        .await
    }

    /// LIVE-18, issue 31: an inline grant ends by the panel's own idle rule, on the
    /// panel's clock: each use counts from then, and unused for the panel's idle time it
    /// is refused with a sentence, as a panel browser's session used at the same moments
    /// ends at the same moment.
    #[tokio::test]
    async fn live_18_an_inline_grant_ends_after_the_panels_idle_time() {
        let (panel, server, now, _dir) = panel();
        let session = view(&server, "c1").await;
        let grant = sign_in(&panel, &session).await;
        let window = browser(&panel);
        let almost = IDLE - Duration::from_secs(1);
        for _ in 0..2 {
            *now.lock().unwrap() += almost;
            let answer = used(&session, &grant).await;
            assert_ne!(
                text(&answer),
                REFUSED_SIGNED_OUT,
                "used within the idle time"
            );
            assert!(panel.signed_in(&window), "the panel's session too");
        }
        *now.lock().unwrap() += IDLE;
        let answer = used(&session, &grant).await;
        assert_eq!(answer["isError"], true, "{answer}");
        assert_eq!(text(&answer), REFUSED_SIGNED_OUT, "{answer}");
        assert_eq!(answer["structuredContent"]["signedOut"], true, "{answer}");
        assert!(!panel.signed_in(&window), "the panel's session ended alike");
        // A new code signs the view in again.
        let again = sign_in(&panel, &session).await;
        let answer = used(&session, &again).await;
        assert_ne!(text(&answer), REFUSED_SIGNED_OUT, "{answer}");
    }

    /// LIVE-18, issue 31: signing out of the panel in any browser ends every inline
    /// grant, in every conversation, at once (an inline view's sign-in is never the
    /// browser's own); the panel's other browser stays signed in.
    #[tokio::test]
    async fn live_18_a_panel_sign_out_ends_every_inline_grant() {
        let (panel, server, _now, _dir) = panel();
        let one = view(&server, "c1").await;
        let two = view(&server, "c2").await;
        let first = sign_in(&panel, &one).await;
        let second = sign_in(&panel, &two).await;
        let leaving = browser(&panel);
        let staying = browser(&panel);
        assert!(panel.inline_signed_in("c1") && panel.inline_signed_in("c2"));
        let endings = panel.endings();
        assert!(panel.sign_out(&leaving));
        assert!(endings.has_changed().unwrap(), "the live views are told");
        for (session, grant) in [(&one, &first), (&two, &second)] {
            let answer = used(session, grant).await;
            assert_eq!(text(&answer), REFUSED_SIGNED_OUT, "{answer}");
        }
        assert!(!panel.inline_signed_in("c1") && !panel.inline_signed_in("c2"));
        assert!(panel.signed_in(&staying), "the other browser stays");
        // An inline sign-in's id is never a panel session.
        let link = panel.renew_signin();
        let code = link.split("code=").nth(1).unwrap();
        let id = panel.sign_in_inline(code, "c1").unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("127.0.0.1:1"));
        headers.insert(
            crate::door::SESSION_HEADER,
            HeaderValue::from_str(&id).unwrap(),
        );
        assert!(!panel.signed_in(&headers));
        assert!(!panel.alive(&id));
    }
}
