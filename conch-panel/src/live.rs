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
//! person's `{type:'answer', id, choice}` goes to the board, not to conch-live. A watcher
//! too slow for the board's events is never left with a lost card or closing: it gets the
//! closings it missed and every card still open again ([`relay_cards`], issue 28). A socket
//! closing never ends a handoff (HAND-5); a plain takeover whose every driving socket
//! closed goes back to the agent after a short grace, so a reload resumes it (issue 28).
//!
//! Deliberately absent: the commands' effects and the screencast (conch-live's).

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::ws::{Message, WebSocket};
use conch_browser::Browser;
use conch_live::{Event, Hub, Outgoing, TurnControl};
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::Mutex;

use crate::cards::{Board, Card, CardEvent};
use tokio::sync::broadcast::{self, error::RecvError};

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

/// Sends `conversation`'s cards with `send` until it fails or the board ends: those
/// `open` when the watcher joined, then each new one and each closing from `cards` (the
/// browser's own events, conversation `""`, too: PROTO-2). A watcher that fell behind
/// (more card events came while it was slow than the board keeps) gets what it missed
/// from [`Board::catch_up`]: the closing of each card it was shown that is gone, and every
/// card still open again, so no card event is lost to it (issue 28).
async fn relay_cards<F, Fut>(
    board: &Board,
    conversation: &str,
    open: Vec<Card>,
    cards: &mut broadcast::Receiver<(String, CardEvent)>,
    mut send: F,
) where
    F: FnMut(Message) -> Fut,
    Fut: Future<Output = bool>,
{
    let mut shown: HashSet<String> = HashSet::new();
    for card in open {
        shown.insert(card.id().to_owned());
        if !send(value_text(&card)).await {
            return;
        }
    }
    loop {
        let events = match cards.recv().await {
            Ok((whose, event)) if whose == conversation || whose.is_empty() => vec![event],
            Ok(_) => continue,
            Err(RecvError::Lagged(missed)) => {
                tracing::debug!(
                    conversation,
                    missed,
                    "a slow panel fell behind on its cards; they are sent again"
                );
                board.catch_up(conversation, &shown)
            }
            Err(RecvError::Closed) => return,
        };
        for event in events {
            match &event {
                CardEvent::Question(card) => {
                    shown.insert(card.id().to_owned());
                }
                CardEvent::Closed(closed) => {
                    shown.remove(closed.id());
                }
                CardEvent::Browser(_) => {}
            }
            if !send(value_text(&event)).await {
                return;
            }
        }
    }
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

    /// The live views (the inline view in the chat joins them too, issue 31).
    pub(crate) fn hub(&self) -> &Hub {
        &self.hub
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
        let questions = relay_cards(&self.board, conversation, open, &mut cards, |message| {
            let sink = &sink;
            async move { sink.lock().await.send(message).await.is_ok() }
        });
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::time::Duration;

    use conch_policy::{Question, Site};
    use conch_tools::{AskRequest, Asker};
    use tokio::sync::{mpsc, watch};

    use super::*;
    use crate::cards::PanelAsker;

    /// A site question for conversation `c1`.
    fn request() -> AskRequest {
        let site = Site::of_host("shop.test").expect("a site");
        AskRequest {
            conversation: "c1".to_owned(),
            question: Question::for_site(&site, None, false),
            tool: "browser_click".to_owned(),
            thumbnail: None,
            taint_note: None,
        }
    }

    /// Puts `n` questions up on `asker`'s board, each waiting in a task of its own.
    fn ask(asker: &PanelAsker, n: usize) {
        for _ in 0..n {
            let asker = asker.clone();
            tokio::spawn(async move { asker.ask(&request()).await });
        }
    }

    /// Waits until `n` cards of `c1` are open.
    async fn open_count(board: &Board, n: usize) {
        tokio::time::timeout(Duration::from_secs(5), async {
            while board.count_for("c1") != n {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("the cards go up");
    }

    /// What a panel shows after `messages`: the ids of its cards.
    fn cards_shown(messages: &[Message], shown: &mut BTreeSet<String>) {
        for message in messages {
            let Message::Text(text) = message else {
                continue;
            };
            let event: serde_json::Value = serde_json::from_str(text).expect("JSON");
            let id = event["id"].as_str().unwrap_or_default().to_owned();
            match event["type"].as_str() {
                Some("question") => {
                    shown.insert(id);
                }
                Some("questionClosed") => {
                    shown.remove(&id);
                }
                _ => {}
            }
        }
    }

    /// LIVE-3, PERM-3 (issue 28): a panel that stops reading while far more card events
    /// come than the board keeps (cards it was shown closing, a hundred new ones, most
    /// of them closing again) is never left with a lost card: once it reads again it
    /// shows exactly the cards still open, none it was shown stays after closing, and the
    /// closings it missed say how the cards came down.
    #[tokio::test(flavor = "multi_thread")]
    async fn live_3_a_slow_panel_gets_every_card_event_it_fell_behind_on() {
        let asker = PanelAsker {
            board: Board::new(Duration::from_secs(60)),
            link: "http://127.0.0.1:7391/".to_owned(),
        };
        let board = asker.board.clone();
        let mut cards = board.subscribe();
        // The panel reads only while `reading` is true; what it read goes to `read`.
        let (reading, gate) = watch::channel(true);
        let (read, mut messages) = mpsc::unbounded_channel();
        let relay = tokio::spawn({
            let board = board.clone();
            async move {
                relay_cards(&board, "c1", Vec::new(), &mut cards, move |message| {
                    let mut gate = gate.clone();
                    let read = read.clone();
                    async move {
                        let _ = gate.wait_for(|open| *open).await;
                        read.send(message).is_ok()
                    }
                })
                .await;
            }
        });

        // Five cards, read in time.
        ask(&asker, 5);
        open_count(&board, 5).await;
        let mut shown = BTreeSet::new();
        let mut got = Vec::new();
        while shown.len() < 5 {
            got.push(
                tokio::time::timeout(Duration::from_secs(5), messages.recv())
                    .await
                    .expect("the five cards within 5 s")
                    .expect("the relay runs"),
            );
            cards_shown(&got, &mut shown);
        }
        let first: Vec<String> = shown.iter().cloned().collect();

        // The panel stops reading; the five are answered, a hundred more go up and all
        // but the last ten are answered: 200 events, more than three times the buffer.
        reading.send_replace(false);
        for id in &first {
            board.answer("c1", id, "no").expect("answered");
        }
        open_count(&board, 0).await;
        ask(&asker, 100);
        open_count(&board, 100).await;
        let mut waiting: Vec<(u64, String)> = board
            .open_for("c1")
            .iter()
            .map(|card| {
                let n = card.id().trim_start_matches('q').parse().expect("q<n>");
                (n, card.id().to_owned())
            })
            .collect();
        waiting.sort();
        for (_, id) in &waiting[..90] {
            board.answer("c1", id, "thisChat").expect("answered");
        }
        open_count(&board, 10).await;
        let still: BTreeSet<String> = waiting[90..].iter().map(|(_, id)| id.clone()).collect();

        // It reads again: in the end it shows exactly the ten cards still open.
        reading.send_replace(true);
        let caught_up = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                let message = messages.recv().await.expect("the relay runs");
                got.push(message);
                shown.clear();
                cards_shown(&got, &mut shown);
                if shown == still {
                    return;
                }
            }
        })
        .await;
        assert!(
            caught_up.is_ok(),
            "the slow panel shows {shown:?}, not the cards still open {still:?}"
        );
        // The closings it missed of the cards it was shown say they were answered.
        let text: Vec<String> = got
            .iter()
            .filter_map(|m| match m {
                Message::Text(t) => Some(t.to_string()),
                _ => None,
            })
            .collect();
        for id in &first {
            assert!(
                text.iter().any(|t| t.contains(&format!(
                    "\"how\":\"answered\",\"id\":\"{id}\",\"type\":\"questionClosed\""
                ))),
                "no closing of {id} in {text:?}"
            );
        }
        relay.abort();
    }
}
