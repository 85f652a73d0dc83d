//! How the toolbox is set up: [`ToolsConfig`], the embedder's traits and the settings the
//! rules read, with the defaults an embedder starts from.
//!
//! Deliberately absent: any state. A configuration is read by the tools and the permit
//! flow, never changed by them.

use std::path::PathBuf;
use std::sync::Arc;

use conch_browser::protocol::EventSink;
use conch_policy::{NetSettings, StakesWords};

use crate::embedder::{
    Asker, AutoAllows, AutoPolicy, ChatFiles, ImageDescriber, Notifier, SecretFiller, TaintGuard,
    WorkFolder,
};

/// The default search address: `%s` becomes the words (AMB-6).
pub const DEFAULT_SEARCH_URL: &str = "https://duckduckgo.com/?q=%s";

/// How the toolbox is set up: the embedder's traits and the settings the rules read.
#[derive(Debug, Clone)]
pub struct ToolsConfig {
    /// Carries questions to the person.
    pub asker: Arc<dyn Asker>,
    /// Fills secret fields from the person's vault; `None` hands them over (SEC-2).
    pub secret_filler: Option<Arc<dyn SecretFiller>>,
    /// The files uploads may draw from (UP-2).
    pub chat_files: Arc<dyn ChatFiles>,
    /// Auto mode's policy (PERM-10).
    pub auto_policy: Arc<dyn AutoPolicy>,
    /// Says whether the conversation read untrusted content; its note goes on the cards
    /// (PERM-13, UP-10). `None`: never tainted.
    pub taint_guard: Option<Arc<dyn TaintGuard>>,
    /// Describes screenshots for conversations whose engine can't see (TOOL-18).
    pub image_describer: Option<Arc<dyn ImageDescriber>>,
    /// The network settings navigation is judged under (NET-5, NET-6).
    pub net: NetSettings,
    /// The significant words (HS-1).
    pub stakes: StakesWords,
    /// The search address for browser_tabs open with `search` (TAB-8).
    pub search_url: String,
    /// Where downloads the person keeps go (the workspace's `Downloads`); `None` leaves
    /// downloads to the browser's default and asks nothing (DL-1 needs it set).
    pub downloads: Option<PathBuf>,
    /// Tells the person about a handoff; `None` when nobody can take over (no live view
    /// and no visible window), so browser_handoff says so instead of waiting (HAND-1).
    pub notifier: Option<Arc<dyn Notifier>>,
    /// Receives the protocol's events of every conversation: steps with their thumbnails
    /// and handoffs (PROTO-2). `None`: only the live view hears of them.
    pub events: Option<Arc<dyn EventSink>>,
    /// The address that opens the chat with the browser in front; a handoff's link adds
    /// `browser=1` and the conversation to it (HAND-7).
    pub panel_link: Option<String>,
    /// Every conversation's budget in characters of results, until the person sets its
    /// own ([`crate::Tools::set_budget`]); `None`: no budget (issue 31). The agent never
    /// reaches it.
    pub budget_chars: Option<u64>,
}

impl ToolsConfig {
    /// The address that opens `conversation` with the browser in front (HAND-7), when
    /// the embedder has a panel.
    pub fn panel_link_for(&self, conversation: &str) -> Option<String> {
        let base = self.panel_link.as_ref()?;
        let join = if base.contains('?') { '&' } else { '?' };
        Some(format!("{base}{join}browser=1&conversation={conversation}"))
    }

    /// Defaults around `asker`: no secret filler, no chat files, Auto without the site
    /// question, nothing local allowed, the built-in words, DuckDuckGo for searches.
    pub fn new(asker: Arc<dyn Asker>) -> Self {
        ToolsConfig {
            asker,
            secret_filler: None,
            chat_files: Arc::new(WorkFolder::default()),
            auto_policy: Arc::new(AutoAllows),
            taint_guard: None,
            image_describer: None,
            net: NetSettings::default(),
            stakes: StakesWords::default(),
            search_url: DEFAULT_SEARCH_URL.to_owned(),
            downloads: None,
            notifier: None,
            events: None,
            panel_link: None,
            budget_chars: None,
        }
    }
}
