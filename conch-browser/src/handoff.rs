//! A handoff: the agent asks the person to take the wheel, and the step waits until it
//! ends (HAND-1 … HAND-5, HAND-9, AMB-20).
//!
//! A handoff that starts at a gate (a visible password or one-time-code field, or a
//! captcha frame) is looked at once a second; conch-policy's [`HandoffWatch`] says when the
//! gate is behind the person (the page moved on and shows no gate, a sign-in popup came and
//! went, a captcha left its token) with two looks in a row and the person's hands off the
//! page for a moment. Any other handoff (a payment, the person's details) ends only when
//! the person presses I'm done. Stop ends either, and so does the conversation going away.
//!
//! Each look is [`page::gate::look`](crate::page::gate::look) on the active tab.
//!
//! Deliberately absent: the notification and the events (conch-tools and the embedder),
//! and the person's input (the live view, through the [`Wheel`]).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use conch_policy::{HandoffState, HandoffWatch};
use tokio::time::Instant;

use crate::error::BrowserError;
use crate::page::gate::look;
use crate::runtime::Conversation;
use crate::wheel::{HandEnd, Wheel};

pub use conch_policy::LOOK_EVERY;

/// How a handoff ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandoffEnd {
    /// The gate is behind the person, so Conch carried on by itself (HAND-3, HAND-6).
    GotThrough,
    /// The person pressed I'm done (HAND-5).
    Done,
    /// The person pressed Stop (HAND-9).
    Stopped,
    /// The agent went away (its MCP client closed or its session ended), so nobody
    /// waits for the handoff any more.
    AgentLeft,
}

impl HandoffEnd {
    /// Whether it ended by itself (`BrowserHandoff.auto`, HAND-6).
    pub fn auto(self) -> bool {
        self == HandoffEnd::GotThrough
    }
}

/// What the step learns from a handoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handed {
    /// How it ended.
    pub end: HandoffEnd,
    /// Whether it started at a gate and so was watched (HAND-2).
    pub gate: bool,
}

/// Tabs seen during a handoff, to tell a sign-in popup that came and went (HAND-3).
#[derive(Debug, Default)]
struct Popups {
    at_start: HashSet<String>,
    seen: HashSet<String>,
}

impl Popups {
    fn came_and_went(&mut self, now: &[String]) -> bool {
        let now: HashSet<&String> = now.iter().collect();
        for tab in &now {
            if !self.at_start.contains(*tab) {
                self.seen.insert((*tab).clone());
            }
        }
        self.seen.iter().any(|tab| !now.contains(tab))
    }
}

/// Hands the conversation's browser to the person for `reason` and waits until the
/// handoff ends (HAND-1): by itself at a gate (looked at every `look_every`, HAND-2), by
/// I'm done, by Stop, or by the agent going away ([`Wheel::agent_left`]); never by
/// a socket of the person's closing. The wheel goes back to the agent when it ends.
///
/// # Errors
/// As [`Conversation::page`] when the conversation has no tab to hand over.
pub async fn hand_off(
    conv: &Conversation,
    reason: &str,
    look_every: Duration,
) -> Result<Handed, BrowserError> {
    let wheel = conv.wheel();
    let page = conv.page().await?;
    let first = look(&page).await.unwrap_or_default();
    let mut watch = HandoffWatch::start(&first);
    let gate = watch.is_some();
    let mut popups = Popups {
        at_start: tab_ids(conv).await.into_iter().collect(),
        seen: HashSet::new(),
    };
    let started = Instant::now();
    let mut changes = wheel.watch();
    wheel.open_handoff(reason);
    let _closed = CloseOnDrop(Arc::clone(&wheel));
    loop {
        if let Some(how) = changes.borrow_and_update().ended {
            return Ok(Handed {
                end: match how {
                    HandEnd::Done => HandoffEnd::Done,
                    HandEnd::Stopped => HandoffEnd::Stopped,
                    HandEnd::AgentLeft => HandoffEnd::AgentLeft,
                },
                gate,
            });
        }
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    return Ok(Handed { end: HandoffEnd::Stopped, gate });
                }
            }
            () = tokio::time::sleep(look_every), if watch.is_some() => {
                let Some(watching) = watch.as_mut() else { continue };
                // A page replacing itself may not answer for a moment: that is not a pass.
                let Ok(page) = conv.page().await else { continue };
                let Ok(mut seen) = look(&page).await else { continue };
                seen.popup_came_and_went = popups.came_and_went(&tab_ids(conv).await);
                let hands_off = wheel
                    .since_person_input()
                    .unwrap_or_else(|| started.elapsed());
                if watching.observe(&seen, hands_off) == HandoffState::Finished {
                    return Ok(Handed { end: HandoffEnd::GotThrough, gate });
                }
            }
        }
    }
}

/// Closes the handoff however the wait ends (its future dropped by a cancelled call
/// included), so the agent's next call never waits on a handoff nobody waits for.
struct CloseOnDrop(Arc<Wheel>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close_handoff();
    }
}

async fn tab_ids(conv: &Conversation) -> Vec<String> {
    conv.tabs()
        .await
        .map(|tabs| tabs.into_iter().map(|t| t.id).collect())
        .unwrap_or_default()
}
