//! Errands: a browser of its own for every task (ADR 0141; ERR-1, ERR-2, ERR-10, ERR-20,
//! ERR-22).
//!
//! The embedder says what each conversation is ([`ConversationKind`], through
//! [`crate::Browser::set_kind`]) when its turn builds its tools; no tool argument can. A
//! chat keeps the main context, signed in wherever the person signed in (ERR-2). A task
//! browses in a browser context of its own (`Target.createBrowserContext`) in a second,
//! non-persistent Chromium that starts when the first errand needs it (ERR-20): its
//! cookies, storage and tabs no other conversation sees (ERR-1). That second browser runs
//! behind the same guard as the main one (its proxy and its CDP rules, ERR-22), and each
//! errand's context is also given the guard's proxy by name.
//!
//! The embedder reports how a task goes ([`TaskState`], through
//! [`crate::Browser::task_changed`]); when it is done, unverified or stopped, or its chat
//! is deleted ([`crate::Browser::chat_deleted`]), the errand's context closes and its tabs
//! are forgotten (ERR-10).
//!
//! Deliberately absent: any dependency on a task scheduler beyond those two calls (ERR-24).

/// What a conversation is, as the embedder decides it (ERR-1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ConversationKind {
    /// An ordinary chat: it browses in the main context, with the person's sign-ins
    /// (ERR-2). The default.
    #[default]
    Chat,
    /// A task or a helper: it browses in an errand, a browser context of its own (ERR-1).
    Task,
}

/// How a task stands, as the embedder reports it (`task_changed`, ERR-10, ERR-11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskState {
    /// It runs.
    Running,
    /// It finished.
    Done,
    /// It finished, but its result could not be checked.
    Unverified,
    /// The person stopped it.
    Stopped,
    /// It was cut off (its client went away) and may be resumed.
    Interrupted,
    /// It failed and may be resumed.
    Failed,
}

impl TaskState {
    /// Whether the task is over for good: done, unverified or stopped. Its errand then
    /// closes and is forgotten (ERR-10).
    pub fn is_over(self) -> bool {
        matches!(
            self,
            TaskState::Done | TaskState::Unverified | TaskState::Stopped
        )
    }
}

/// What revoking a site could not finish (ERR-8): the open errands whose browser did not
/// answer while their copy of the site's sign-in was being taken back. Set-aside errands
/// and every other open errand are done all the same.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Revoked {
    /// The conversations whose open errand still may hold the site's cookies or local
    /// storage, in their order of opening.
    pub unreached: Vec<String>,
}

impl Revoked {
    /// Whether every errand gave the site back.
    pub fn is_complete(&self) -> bool {
        self.unreached.is_empty()
    }
}
