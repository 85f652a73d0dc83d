//! The bridge from the person's live socket to conch-live's [`Hub`] (LIVE-1, LIVE-14,
//! PROTO-9).
//!
//! A watcher joins its conversation's view: frames go out as binary messages (one JPEG
//! each), events as text (JSON), and each text or binary message that comes in is a
//! command whose answers go back to that watcher as text. The feed and the commands run
//! side by side, so a long command never holds up the frames. A message conch-live can't
//! read (unknown, malformed, over 64 KiB, up to [`crate::panel::LIVE_MESSAGE_LIMIT`]) is
//! answered `{type:"error", message:"Invalid command"}` and never closes the socket, nor
//! anyone else's. Leaving drops the feed, so the screencast stops after the last watcher
//! (LIVE-2).
//!
//! [`GatewayTurn`] is the gateway's [`TurnControl`]: the gateway has no chat turn of its
//! own (its agent is the MCP client), so Stop ends the conversation's call in flight
//! through its wheel, which answers "the person pressed Stop" (LIVE-14).
//!
//! The socket also carries the conversation's question cards ([`crate::cards`]): the
//! cards still open when a watcher joins, then each new one and each closing, and the
//! person's `{type:'answer', id, choice}` goes to the board, not to conch-live. A socket
//! closing never ends a handoff (HAND-5); a plain takeover whose every driving socket
//! closed goes back to the agent after a short grace, so a reload resumes it (issue 28).
//!
//! Deliberately absent: the commands' effects and the screencast (conch-live's).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::ws::{Message, WebSocket};
use conch_browser::Browser;
use conch_live::{Event, Hub, Outgoing, TurnControl};
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::Mutex;

use crate::cards::Board;

/// What ends when an agent goes away (its MCP client closed stdin, or its HTTP session
/// ended or was deleted): the conversation's waiting handoff and takeover (so its call
/// returns at once and the panel is told `agentLeft`) and its questions (No). Cheap to
/// clone.
#[derive(Debug, Clone)]
pub struct Leaving {
    browser: Browser,
    board: Board,
}

impl Leaving {
    /// What ends in `browser` and on `board` when an agent goes away.
    pub fn new(browser: Browser, board: Board) -> Leaving {
        Leaving { browser, board }
    }

    /// The agent of `conversation` went away.
    pub fn left(&self, conversation: &str) {
        tracing::info!(conversation, "the agent went away; what waited for it ends");
        self.browser.wheel(conversation).agent_left();
        self.board.withdraw_for(conversation);
    }
}

/// The gateway's Stop: the conversation's call in flight ends (LIVE-14).
#[derive(Debug)]
pub(crate) struct GatewayTurn {
    browser: Browser,
}

impl TurnControl for GatewayTurn {
    fn interrupt(&self, conversation: &str) {
        tracing::info!(conversation, "the person pressed Stop");
        self.browser.wheel(conversation).interrupt();
    }
}

/// The live view the person's sockets are bridged to, and the question cards. Cheap to
/// clone.
#[derive(Debug, Clone)]
pub struct Live {
    hub: Hub,
    board: Board,
}

/// The person's answer to a card.
#[derive(Deserialize)]
struct CardAnswer {
    #[serde(rename = "type")]
    kind: String,
    id: String,
    choice: String,
}

/// A card event or a reply to an answer as a text message.
fn value_text(value: &impl serde::Serialize) -> Message {
    Message::Text(serde_json::to_string(value).unwrap_or_default().into())
}

/// An event as a text message; `None` (and a warning) if it can't be written as JSON.
fn text(event: &Event) -> Option<Message> {
    match serde_json::to_string(event) {
        Ok(json) => Some(Message::Text(json.into())),
        Err(e) => {
            tracing::warn!("a live event can't be sent ({e})");
            None
        }
    }
}

impl Live {
    /// The live views of `browser`'s conversations, with the gateway's Stop, and the
    /// cards of `board`.
    pub fn new(browser: Browser, board: Board) -> Live {
        let turn = Arc::new(GatewayTurn {
            browser: browser.clone(),
        });
        let hub = Hub::new(browser, turn);
        // A question waits while a panel watches its conversation (issue 28).
        let watching = hub.clone();
        board.set_watchers(move |conversation| watching.watchers(conversation));
        Live { hub, board }
    }

    /// The question cards.
    pub(crate) fn board(&self) -> &Board {
        &self.board
    }

    /// How many watch `conversation`.
    pub(crate) fn watchers(&self, conversation: &str) -> usize {
        self.hub.watchers(conversation)
    }

    /// Serves one watcher of `conversation` until either side ends.
    pub(crate) async fn watch(&self, socket: WebSocket, conversation: &str) {
        tracing::info!(conversation, "a live watcher joined");
        // Subscribed before the open cards are read, so none falls between.
        let mut cards = self.board.subscribe();
        let open = self.board.open_for(conversation);
        let (mut feed, control) = self.hub.join(conversation);
        let (sink, mut stream) = socket.split();
        let sink = Mutex::new(sink);
        // The conversation's cards: those open now, then each new one and each closing.
        let questions = async {
            for card in &open {
                if sink.lock().await.send(value_text(card)).await.is_err() {
                    return;
                }
            }
            loop {
                match cards.recv().await {
                    // The browser's own status (`""`) is every conversation's (PROTO-2).
                    Ok((whose, card)) if whose == conversation || whose.is_empty() => {
                        if sink.lock().await.send(value_text(&card)).await.is_err() {
                            return;
                        }
                    }
                    Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        };
        // What the view sends: frames and events, in the feed's order.
        let forward = async {
            while let Some(out) = feed.next().await {
                let message = match out {
                    Outgoing::Frame(jpeg) => Message::Binary(jpeg.into()),
                    Outgoing::Event(event) => match text(&event) {
                        Some(message) => message,
                        None => continue,
                    },
                };
                if sink.lock().await.send(message).await.is_err() {
                    return;
                }
            }
        };
        // What the person sends: one command at a time, answered to this watcher only.
        let commands = async {
            while let Some(Ok(message)) = stream.next().await {
                let bytes = match message {
                    Message::Text(text) => Bytes::from(text),
                    Message::Binary(bytes) => bytes,
                    Message::Close(_) => return,
                    // Pings are answered by the socket itself.
                    Message::Ping(_) | Message::Pong(_) => continue,
                };
                if let Ok(answer) = serde_json::from_slice::<CardAnswer>(&bytes)
                    && answer.kind == "answer"
                {
                    let reply = match self.board.answer(conversation, &answer.id, &answer.choice) {
                        Ok(_) => {
                            json!({ "type": "answered", "id": answer.id, "choice": answer.choice })
                        }
                        Err(e) => {
                            json!({ "type": "error", "id": answer.id, "message": e.to_string() })
                        }
                    };
                    if sink.lock().await.send(value_text(&reply)).await.is_err() {
                        return;
                    }
                    continue;
                }
                for event in control.command(&bytes).await {
                    let Some(message) = text(&event) else {
                        continue;
                    };
                    if sink.lock().await.send(message).await.is_err() {
                        return;
                    }
                }
            }
        };
        tokio::select! {
            () = forward => {}
            () = commands => {}
            () = questions => {}
        }
        let _ = sink.into_inner().close().await;
        // Dropping the feed leaves the view (LIVE-2); dropping the control leaves the
        // takeover: a handoff waits on (HAND-5), a plain takeover nobody drives any more
        // goes back to the agent after a grace (conch-live's).
        drop(feed);
        drop(control);
        tracing::info!(conversation, "a live watcher left");
    }
}
