//! The gateway's [`EventSink`] (PROTO-2): the protocol's events reach the person's panel.
//!
//! Steps and handoffs reach the live view through the conversation's wheel already
//! (conch-tools publishes them there); with a sink set, conch-tools records every step
//! with its thumbnail even while nobody watches, so a panel opened mid-task shows the
//! steps so far (issue 28). `browser.status` and `permission.requested.browser` go to
//! every live socket of their conversation as they are, JSON with their protocol `type`.
//!
//! Deliberately absent: a transcript file (the MCP client keeps the conversation).

use conch_browser::protocol::{BrowserEvent, EventSink};

use crate::cards::Board;

/// Sends the protocol's events to the panel's live sockets, through the board's feed.
#[derive(Debug)]
pub(crate) struct PanelEvents {
    /// Whose feed carries the events to each conversation's sockets.
    pub(crate) board: Board,
}

impl EventSink for PanelEvents {
    fn send(&self, conversation: &str, event: BrowserEvent) {
        if matches!(event, BrowserEvent::Step(_) | BrowserEvent::Handoff(_)) {
            return;
        }
        match serde_json::to_value(&event) {
            Ok(value) => self.board.tell(conversation, value),
            Err(e) => tracing::warn!("a protocol event can't be sent ({e})"),
        }
    }
}
