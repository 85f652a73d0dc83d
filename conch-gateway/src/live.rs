//! The bridge from the person's live socket to conch-live (LIVE-1).
//!
//! Deliberately absent, for now: the screencast and the commands themselves, which
//! conch-live serves; until its hub lands, a live socket is closed with one sentence.

use axum::extract::ws::{CloseFrame, Message, WebSocket};

/// The live view the person's sockets are bridged to.
#[derive(Debug, Clone, Default)]
pub(crate) struct Live;

impl Live {
    /// Serves one watcher of `conversation` until either side ends.
    pub(crate) async fn watch(&self, mut socket: WebSocket, conversation: &str) {
        tracing::info!(conversation, "a live socket opened");
        let _ = socket
            .send(Message::Close(Some(CloseFrame {
                code: 1011,
                reason: "The live view is not available in this version.".into(),
            })))
            .await;
    }
}
