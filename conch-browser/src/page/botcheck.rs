//! Bot checks after a navigation (BOT-1 … BOT-5): the page's facts go to conch-policy's
//! `classify_page`; a challenge that passes by itself within the wait (15 s) is waited out,
//! one that stays ends the wait with the handoff advice, and a refusal says not to retry.
//!
//! [`gate_look`] is one look at a gate (password, code, captcha) for a handoff that
//! finishes by itself (AMB-20).
//!
//! Deliberately absent: anything that makes the browser look less like a bot (BOT-5): no
//! user-agent change, no fingerprint patch, no captcha solving. Reading the facts runs one
//! expression and leaves nothing in the page.

use std::time::Duration;

use super::world::evaluate_in_world;
use conch_cdp::Session;
use conch_policy::{
    BotCheck, CHALLENGE_WAIT, ChallengeWait, GateLook, PageFacts, bot_note, challenge_wait,
    classify_page, is_captcha_frame, is_captcha_token,
};
use serde::Deserialize;
use tokio::time::Instant;

use super::act::ActError;
use crate::page::script;

/// How long to wait for a challenge, and how often to look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BotWait {
    /// The longest wait for a challenge to pass by itself (BOT-2: 15 s).
    pub limit: Duration,
    /// How often to look again.
    pub every: Duration,
}

impl Default for BotWait {
    fn default() -> Self {
        BotWait {
            limit: CHALLENGE_WAIT,
            every: Duration::from_millis(500),
        }
    }
}

/// What the look found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotOutcome {
    /// The check first seen (`BotCheck::None` for an ordinary page).
    pub check: BotCheck,
    /// How the wait ended.
    pub wait: ChallengeWait,
    /// The sentence for the agent, if any.
    pub note: Option<String>,
    /// How long Conch waited.
    pub waited: Duration,
}

/// The page's facts for `classify_page`. Markup and text markers count only on a page
/// with little visible text (conch-policy's `CHALLENGE_PAGE_CHARS`), so a page with much
/// more text than that sends the start of its text only and no markup. The markup sent
/// is the parts that carry markers (`PageFacts::markup`): every attribute's value
/// (addresses, ids, classes) and the start of each inline script; serialising a whole
/// large document (a 2.7 MB wiki) and sending 300,000 characters of it cost every open
/// tens of milliseconds.
const FACTS: &str = script::body(include_str!("botcheck/facts.js"));

/// Twice the characters a page needs to be more than a challenge page, in UTF-16 units
/// (a character may take two): its trimmed text still counts as plenty in Rust's `chars`.
const PLENTY: usize = 2 * conch_policy::CHALLENGE_PAGE_CHARS;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Facts {
    status: Option<u16>,
    #[serde(default)]
    title: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    markup: String,
    #[serde(default)]
    form_controls: usize,
}

/// The facts of the page now; `status` overrides the one the page's navigation entry
/// reports.
///
/// # Errors
/// A DevTools failure, or a script failure while the page is being replaced.
pub async fn page_facts(page: &Session, status: Option<u16>) -> Result<PageFacts, ActError> {
    // In Conch's isolated world: the page cannot redefine the getters the look reads.
    static SCRIPT: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| FACTS.replace("__PLENTY__", &PLENTY.to_string()));
    let value = evaluate_in_world(page, &SCRIPT).await?;
    let facts: Facts = serde_json::from_value(value)
        .map_err(|_| ActError::Script("the page is being replaced".to_owned()))?;
    Ok(PageFacts {
        status: status.or(facts.status),
        title: facts.title,
        text: facts.text,
        markup: facts.markup,
        form_controls: facts.form_controls,
    })
}

/// Looks for a bot check on the page just opened, waiting a challenge out (BOT-1 …
/// BOT-4). `status` is the navigation's HTTP status when the caller knows it.
///
/// # Errors
/// A DevTools failure on the first look.
pub async fn after_navigation(
    page: &Session,
    status: Option<u16>,
    wait: BotWait,
) -> Result<BotOutcome, ActError> {
    let start = Instant::now();
    let check = classify_page(&page_facts(page, status).await?);
    let BotCheck::Challenge(_) = check else {
        return Ok(BotOutcome {
            check,
            wait: ChallengeWait::Passed,
            note: bot_note(check, ChallengeWait::Passed),
            waited: Duration::ZERO,
        });
    };
    loop {
        tokio::time::sleep(wait.every).await;
        // A page replacing itself may not answer for a moment: that is still showing.
        let still = match page_facts(page, None).await {
            Ok(facts) => matches!(classify_page(&facts), BotCheck::Challenge(_)),
            Err(_) => true,
        };
        // The policy's clock runs in real seconds; a shorter injected limit maps onto it.
        let waited = start.elapsed();
        let policy_waited = if waited >= wait.limit {
            CHALLENGE_WAIT
        } else {
            Duration::ZERO
        };
        match challenge_wait(policy_waited, still) {
            ChallengeWait::KeepWaiting => {}
            outcome => {
                return Ok(BotOutcome {
                    check,
                    wait: outcome,
                    note: bot_note(check, outcome),
                    waited,
                });
            }
        }
    }
}

const GATE: &str = script::body(include_str!("botcheck/gate.js"));

#[derive(Deserialize)]
struct Gate {
    #[serde(default)]
    document: String,
    #[serde(default)]
    password: bool,
    #[serde(default)]
    code: bool,
    #[serde(default)]
    frames: Vec<String>,
    #[serde(default)]
    widgets: bool,
    #[serde(default)]
    tokens: Vec<(String, String)>,
}

/// One look at a page for a handoff waiting on a gate (HAND-3, AMB-20): which document it
/// is, whether a password or code box or a captcha shows, and whether a captcha's token
/// has landed. conch-policy's `HandoffWatch` judges the looks; `popup_came_and_went` is the
/// runtime's to set.
///
/// # Errors
/// A DevTools failure, or a script failure while the page is being replaced.
pub async fn gate_look(page: &Session) -> Result<GateLook, ActError> {
    // In Conch's isolated world: the page cannot redefine the getters the look reads.
    let value = evaluate_in_world(page, GATE).await?;
    let gate: Gate = serde_json::from_value(value)
        .map_err(|_| ActError::Script("the page is being replaced".to_owned()))?;
    let captcha_frame = gate
        .frames
        .iter()
        .filter_map(|src| url::Url::parse(src).ok())
        .any(|url| is_captcha_frame(&url));
    Ok(GateLook {
        document: gate.document,
        password_visible: gate.password,
        code_visible: gate.code,
        captcha_visible: gate.widgets || captcha_frame,
        captcha_token: gate
            .tokens
            .iter()
            .any(|(name, value)| is_captcha_token(name, value)),
        popup_came_and_went: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::script::well_formed;

    /// The facts script with its bound filled in, and the gate's look, are whole
    /// expressions (issue 30).
    #[test]
    fn issue_30_botcheck_scripts_are_whole_expressions() {
        let facts = FACTS.replace("__PLENTY__", &PLENTY.to_string());
        well_formed(&facts).unwrap_or_else(|e| panic!("{e}:\n{facts}"));
        assert!(facts.starts_with("(() =>") && facts.ends_with(")()"));
        well_formed(GATE).unwrap_or_else(|e| panic!("{e}:\n{GATE}"));
    }
}
