//! What the toolbox keeps between calls: [`Inner`], shared by every conversation (the
//! browser, the configuration), and [`ChatState`], one conversation's own (its consent,
//! its pages, its last screenshot, its download watch).
//!
//! Deliberately absent: behaviour. The tools act on this state through
//! [`Turn`](crate::tool::turn::Turn); the public door is [`Tools`](crate::Tools).

pub(crate) use conch_browser::sync::lock;
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex as StdMutex};

use conch_browser::page::download::DownloadWatch;
use conch_browser::{Browser, Conversation, ConversationKind};
use conch_policy::Size;

use crate::config::ToolsConfig;
use crate::cost::Meter;
use crate::engine::Pages;
use crate::permit::Consent;

/// The toolbox's state, shared by every conversation.
#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) browser: Browser,
    /// Held alone here; the page's hooks keep it weakly.
    pub(crate) config: Arc<ToolsConfig>,
    pub(crate) chats: StdMutex<HashMap<String, Arc<ChatState>>>,
    /// Whether the person is being offered Try again for a failed browser download
    /// (LAUNCH-5): one card at a time, however many calls fail meanwhile.
    pub(crate) offering_retry: std::sync::atomic::AtomicBool,
}

/// One conversation's state in the toolbox.
#[derive(Debug)]
pub(crate) struct ChatState {
    /// Its mode and the person's answers. Held alone here; the dialog hook keeps it
    /// weakly.
    pub(crate) consent: Arc<Consent>,
    /// Calls run one at a time (TOOL-11).
    pub(crate) one_call: tokio::sync::Mutex<()>,
    /// Whether the conversation's engine sees images (TOOL-18).
    pub(crate) vision: AtomicBool,
    /// The size of the last screenshot, for click_at (GES-12).
    pub(crate) screenshot: StdMutex<Option<Size>>,
    /// Each tab's reader and dialog watch.
    pub(crate) pages: Pages,
    /// The runtime's view of the conversation where it browses: read it with
    /// [`ChatState::conversation`], which follows a switch (LIVE-16, ERR-1).
    pub(crate) conversation: StdMutex<Conversation>,
    /// A chat or a task, as the embedder said when the conversation was made (ERR-1).
    pub(crate) kind: ConversationKind,
    /// Its own download watch, on the browser context its pages live in, by that
    /// context and the launch of its browser (DL-1, issue 29). Dropped with the
    /// conversation, which removes what it staged and nobody kept (DL-3).
    pub(crate) downloads: tokio::sync::Mutex<Option<(DownloadKey, DownloadWatch)>>,
    /// The name of the client that opened it (MCP `clientInfo.name`), for the panel's
    /// list (issue 28).
    pub(crate) client: StdMutex<Option<String>>,
    /// The title of its first page with one, for the panel's list (issue 28).
    pub(crate) first_title: StdMutex<Option<String>>,
    /// The commit the person just said Yes to, whose page's own confirmation in the next
    /// act is covered by that Yes (issue 30).
    pub(crate) followup: StdMutex<Option<Followup>>,
    /// What its results cost so far, and its budget (issue 31).
    pub(crate) meter: Meter,
}

/// A commit the person said Yes to (issue 30): on which tab, and the significant word it
/// was asked for. The next act in the conversation takes it: a commit in a dialog that
/// opened after it, on the same tab, for the same word, is covered; any other act just
/// ends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Followup {
    /// The tab it was done on.
    pub(crate) tab: String,
    /// The stem it was asked for (`delete`).
    pub(crate) stem: String,
}

/// What a download watch was set on: its browser's launch count and the browser context.
pub(crate) type DownloadKey = (u32, Option<String>);

impl ChatState {
    /// The runtime's view of the conversation where it browses now, and whether it just
    /// moved there: the person gave the chat a browser of its own or took it back
    /// (LIVE-16), so its tabs closed and its page readers are stale.
    pub(crate) fn conversation(&self) -> (Conversation, bool) {
        let mut conv = lock(&self.conversation);
        let moved = conv.moved();
        if moved {
            *conv = conv.here();
        }
        (conv.clone(), moved)
    }
}
