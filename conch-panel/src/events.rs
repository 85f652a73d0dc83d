//! The gateway's [`EventSink`] (PROTO-2): the protocol's events reach the person's panel.
//!
//! Steps and handoffs reach the live view through the conversation's wheel already
//! (conch-tools publishes them there); with a sink set, conch-tools records every step
//! with its thumbnail even while nobody watches, so a panel opened mid-task shows the
//! steps so far (issue 28). `browser.status` and `permission.requested.browser` go to
//! every live socket of their conversation as they are, JSON with their protocol `type`;
//! the browser's own status (conversation `""`, e.g. Chromium's download progress,
//! LAUNCH-4) goes to every live socket.
//!
//! Deliberately absent: a transcript file (the MCP client keeps the conversation).

use conch_browser::protocol::{BrowserEvent, EventSink};

use crate::cards::Board;

/// Sends the protocol's events to the panel's live sockets, through the board's feed.
#[derive(Debug)]
pub struct PanelEvents {
    /// Whose feed carries the events to each conversation's sockets.
    pub board: Board,
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use conch_browser::protocol::{BrowserDownload, BrowserStatus, BrowserStep};

    use super::*;

    /// PROTO-2, LAUNCH-4 (issue 28): the browser's status with its download progress goes
    /// to every conversation's sockets (`""`); steps stay with the wheel, not sent twice.
    #[tokio::test]
    async fn proto_2_status_goes_to_every_socket_and_steps_are_not_doubled() {
        let board = Board::new(Duration::from_secs(1));
        let mut feed = board.subscribe();
        let sink = PanelEvents { board };
        sink.send(
            "c1",
            BrowserEvent::Step(BrowserStep {
                kind: conch_browser::protocol::BrowserActionKind::Read,
                caption: "Reading".into(),
                tab: "t1".into(),
                thumbnail: None,
                change_summary: None,
                open_panel: false,
            }),
        );
        sink.send(
            "",
            BrowserEvent::Status(BrowserStatus {
                running: false,
                backend: "local".into(),
                message: "Conch is downloading Chromium (50%).".into(),
                open_panel: false,
                download: Some(BrowserDownload {
                    done: 5,
                    total: Some(10),
                }),
            }),
        );
        let (whose, event) = feed.try_recv().expect("the status");
        let event = serde_json::to_value(&event).expect("JSON");
        assert_eq!(whose, "");
        assert_eq!(event["type"], "browser.status");
        assert_eq!(event["download"]["done"], 5);
        assert_eq!(event["download"]["total"], 10);
        assert!(
            feed.try_recv().is_err(),
            "nothing else: the step is the wheel's"
        );
    }
}
