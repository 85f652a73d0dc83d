//! What the embedder says about a conversation when its turn builds its tools
//! ([`ToolContext`]: a chat or a task, ERR-1), and how it reports a task's course
//! ([`TaskEvents`]: `task_changed` and `chat_deleted`, ERR-10).
//!
//! A task browses in an errand: a browser context of its own, whose cookies, storage and
//! tabs no other conversation sees (ERR-1); a chat keeps the main context (ERR-2). Only
//! the embedder decides which: no tool takes an argument that could choose it or leave it.
//!
//! Deliberately absent: any dependency on a task scheduler beyond these two calls (ERR-24).

use std::future::Future;

pub use conch_browser::{ConversationKind, TaskState};
use conch_policy::Mode;

/// One conversation as the embedder builds its tools: its id, its mode, and whether it is
/// a chat or a task (ERR-1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolContext {
    /// The conversation's id.
    pub conversation: String,
    /// Its mode (PERM-1).
    pub mode: Mode,
    /// A chat (the main context) or a task (an errand of its own).
    pub kind: ConversationKind,
}

impl ToolContext {
    /// An ordinary chat in `mode`: it browses in the main context (ERR-2).
    pub fn chat(conversation: impl Into<String>, mode: Mode) -> ToolContext {
        ToolContext {
            conversation: conversation.into(),
            mode,
            kind: ConversationKind::Chat,
        }
    }

    /// A task or a helper in `mode`: it browses in an errand of its own (ERR-1).
    pub fn task(conversation: impl Into<String>, mode: Mode) -> ToolContext {
        ToolContext {
            conversation: conversation.into(),
            mode,
            kind: ConversationKind::Task,
        }
    }
}

/// How the embedder reports a task's course to the browser (ERR-10, ERR-24). [`Tools`]
/// implements it.
///
/// [`Tools`]: crate::Tools
pub trait TaskEvents {
    /// Task `conversation` now stands at `state`. Done, unverified or stopped closes its
    /// errand and forgets its tabs (ERR-10); interrupted or failed keeps it for a Resume
    /// in the same conversation.
    fn task_changed(&self, conversation: &str, state: TaskState)
    -> impl Future<Output = ()> + Send;

    /// Chat `conversation` was deleted: its tabs close and are forgotten, and a task's
    /// errand closes with them (ERR-10).
    fn chat_deleted(&self, conversation: &str) -> impl Future<Output = ()> + Send;
}
