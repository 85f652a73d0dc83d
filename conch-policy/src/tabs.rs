//! The tab limit (TAB-5): a conversation keeps at most eight tabs. The agent can't open a
//! ninth; a page popup that would be the ninth closes the tab unused longest.

use serde::Serialize;

use crate::verdict::{RefusalCode, Verdict};

/// At most this many tabs per conversation.
pub const MAX_TABS: usize = 8;

/// A tab as the limit sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TabUse {
    /// The tab's id (`t3`).
    pub id: String,
    /// When it was last used (the last agent step or person input on it), as any value
    /// that grows with time: a step counter or milliseconds.
    pub last_used: u64,
}

/// Whether the agent may open another tab now (browser_tabs open).
pub fn may_open_tab(open_tabs: usize) -> Verdict {
    if open_tabs >= MAX_TABS {
        Verdict::refuse(RefusalCode::TooManyTabs)
    } else {
        Verdict::Allow
    }
}

/// The tab to close so a page popup fits, or `None` when there is room. The tab unused
/// longest goes; on a tie, the one listed first.
pub fn tab_to_close_for_popup(tabs: &[TabUse]) -> Option<&TabUse> {
    if tabs.len() < MAX_TABS {
        return None;
    }
    tabs.iter().reduce(|oldest, tab| {
        if tab.last_used < oldest.last_used {
            tab
        } else {
            oldest
        }
    })
}
