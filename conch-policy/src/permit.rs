//! The permission rule: mode × act × what this conversation and the person already
//! allowed → [`Decision`] (PERM-1, PERM-2, PERM-3, PERM-8, PERM-9, PERM-11, PERM-16,
//! GES-3, BE-12, HS-1, HS-8, SEC-2, SEC-5, UP-9, UP-11, DLG-6, DLG-7, DLG-8, ERR-4, ERR-5).
//!
//! Gates, in order; the first that refuses or asks decides:
//! 1. Reading (open, read, scroll, screenshot, wait, tabs, back, hover) and handoff never
//!    ask, in any mode, Plan only included.
//! 2. Plan only refuses every act.
//! 3. Secrets: the agent's text never goes into a secret field; on a secret field only
//!    navigation keys may be pressed.
//! 4. The site question, unless the site is already allowed: Full trust skips it; Auto
//!    skips it unless the embedder's `AutoPolicy` said ask; an upload's own question
//!    stands in for it. With the person's own Chrome it is asked once per conversation in
//!    every mode, and Always is neither offered nor honoured.
//! 5. High stakes: an act that activates a control with significant words (or Enter or
//!    Space on one, or ticking one in a form, or a page confirm that asks for one) asks
//!    every time, in every mode, unless the person already said yes in this step.
//! 6. The upload question, every time, in every mode.
//!
//! A [`Decision::Ask`] is one question. When the person answers, the caller records the
//! answer in the facts ([`PermitFacts::allowance`], [`PermitFacts::vouched`]) and asks
//! [`decide`] again, so the next gate can speak.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::error::{Error, ErrorKind};
use crate::keys::{Chord, key_verdict_on_secret};
use crate::site::Site;
use crate::upload::UploadItem;
use crate::verdict::{Decision, Question, Refusal, RefusalCode, Verdict};

/// A conversation's mode, supplied by the embedder (PERM-1, AMB-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Mode {
    /// Asks once per site per conversation.
    #[default]
    Ask,
    /// The embedder's `AutoPolicy` decides about ordinary sites.
    Auto,
    /// Skips the site question (except in the person's own Chrome).
    FullTrust,
    /// Reads, never acts. "Read only" is the same mode.
    PlanOnly,
}

impl Mode {
    /// The mode's name as people read it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ask => "Ask",
            Self::Auto => "Auto",
            Self::FullTrust => "Full trust",
            Self::PlanOnly => "Plan only",
        }
    }
}

impl FromStr for Mode {
    type Err = Error;

    /// Reads a mode, ignoring case, spaces, dashes and underscores: `ask`, `auto`,
    /// `full trust`, `fullTrust`, `plan only`, `plan-only`, and `read only` for Plan only.
    fn from_str(text: &str) -> Result<Self, Error> {
        let squashed: String = text
            .chars()
            .filter(|c| !matches!(c, ' ' | '-' | '_'))
            .flat_map(char::to_lowercase)
            .collect();
        match squashed.as_str() {
            "ask" => Ok(Self::Ask),
            "auto" => Ok(Self::Auto),
            "fulltrust" => Ok(Self::FullTrust),
            "planonly" | "readonly" => Ok(Self::PlanOnly),
            _ => Err(Error::new(ErrorKind::Mode, text)),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every way a tool call touches a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ActKind {
    /// browser_open.
    Open,
    /// browser_read.
    Read,
    /// browser_scroll.
    Scroll,
    /// browser_screenshot.
    Screenshot,
    /// browser_wait.
    Wait,
    /// browser_tabs.
    Tabs,
    /// browser_back (reading, per AMB-6).
    Back,
    /// browser_click with how=hover (GES-3).
    Hover,
    /// browser_click.
    Click,
    /// browser_click with how=double.
    DoubleClick,
    /// browser_click with how=right.
    RightClick,
    /// browser_click with how=drag (both ends' words are checked, HS-4).
    Drag,
    /// browser_press.
    Press,
    /// browser_select.
    Select,
    /// browser_type.
    Type,
    /// browser_form.
    Form,
    /// browser_click_at.
    ClickAt,
    /// browser_upload.
    Upload,
    /// Answering a page's confirm during the agent's step (DLG-6).
    PageConfirm,
    /// browser_handoff: neither reading nor acting.
    Handoff,
}

/// Whether a call reads or acts (TOOL-5), for permissions, the taint guard, skills'
/// needs and the MCP door's `readOnlyHint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ActClass {
    /// Changes nothing on the page: never asks.
    Reading,
    /// Sends input to the page.
    Acting,
    /// browser_handoff: the person acts, not the agent.
    Neither,
}

impl ActKind {
    /// Every act kind, for tables.
    pub const ALL: &'static [ActKind] = &[
        Self::Open,
        Self::Read,
        Self::Scroll,
        Self::Screenshot,
        Self::Wait,
        Self::Tabs,
        Self::Back,
        Self::Hover,
        Self::Click,
        Self::DoubleClick,
        Self::RightClick,
        Self::Drag,
        Self::Press,
        Self::Select,
        Self::Type,
        Self::Form,
        Self::ClickAt,
        Self::Upload,
        Self::PageConfirm,
        Self::Handoff,
    ];

    /// Reading, acting or neither (TOOL-5, PERM-2, PERM-9, GES-3).
    pub fn class(self) -> ActClass {
        match self {
            Self::Open
            | Self::Read
            | Self::Scroll
            | Self::Screenshot
            | Self::Wait
            | Self::Tabs
            | Self::Back
            | Self::Hover => ActClass::Reading,
            Self::Handoff => ActClass::Neither,
            Self::Click
            | Self::DoubleClick
            | Self::RightClick
            | Self::Drag
            | Self::Press
            | Self::Select
            | Self::Type
            | Self::Form
            | Self::ClickAt
            | Self::Upload
            | Self::PageConfirm => ActClass::Acting,
        }
    }

    /// The stable name, e.g. `click-at`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Read => "read",
            Self::Scroll => "scroll",
            Self::Screenshot => "screenshot",
            Self::Wait => "wait",
            Self::Tabs => "tabs",
            Self::Back => "back",
            Self::Hover => "hover",
            Self::Click => "click",
            Self::DoubleClick => "double-click",
            Self::RightClick => "right-click",
            Self::Drag => "drag",
            Self::Press => "press",
            Self::Select => "select",
            Self::Type => "type",
            Self::Form => "form",
            Self::ClickAt => "click-at",
            Self::Upload => "upload",
            Self::PageConfirm => "page-confirm",
            Self::Handoff => "handoff",
        }
    }

    /// The act in words, for the high-stakes question ("Let Conch click “Place order”…").
    fn doing(self) -> &'static str {
        match self {
            Self::Press => "press a key on",
            Self::Form => "tick",
            Self::Select => "choose",
            Self::Drag => "drag",
            Self::PageConfirm => "answer yes to",
            Self::DoubleClick => "double-click",
            Self::RightClick => "right-click",
            _ => "click",
        }
    }
}

/// Which browser the act happens in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum BrowserKind {
    /// Conch's own browser: local, cloud or a DevTools address; errands too.
    #[default]
    Conch,
    /// The person's own Chrome (BE-12).
    OwnChrome,
}

/// What the person already said about the top-level site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SiteAllowance {
    /// Nothing yet in this conversation, and not always allowed.
    #[default]
    NotYet,
    /// This chat, in this conversation (PERM-3, PERM-5).
    ThisChat,
    /// Always: in browser.json sites (PERM-6). Not honoured in the person's own Chrome.
    Always,
}

/// The embedder's `AutoPolicy` answer for an ordinary-site act in Auto mode (PERM-10).
/// Ask [`PermitFacts::needs_auto_policy`] first; when it is false the answer is unused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum AutoAnswer {
    /// Go ahead without the site question: Auto's default ("Decisions that differ").
    #[default]
    Allow,
    /// Ask the site question.
    Ask,
}

/// A value is long, and so `carries`, past this many characters (AMB-27).
pub const CARRIES_CHARS: usize = 200;

/// Whether a type or form request `carries` (PERM-11, AMB-27): any one value longer than
/// 200 characters or containing a line break. One rule for browser_type and browser_form,
/// so Auto asks about one form no more often than about the same values typed one by one.
pub fn carries<S: AsRef<str>>(values: &[S]) -> bool {
    values.iter().any(|value| {
        let value = value.as_ref();
        value.chars().count() > CARRIES_CHARS || value.contains(['\n', '\r'])
    })
}

/// The facts of one act, as conch-tools gathers them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermitFacts {
    /// The conversation's mode.
    pub mode: Mode,
    /// What the call does.
    pub act: ActKind,
    /// The browser it happens in.
    pub browser: BrowserKind,
    /// The top-level page's site: the one asked about (PERM-16).
    pub site: Site,
    /// The site of the frame the act lands in, when it is inside a frame.
    pub frame_site: Option<Site>,
    /// What the person already said about `site`.
    pub allowance: SiteAllowance,
    /// The `AutoPolicy` answer, in Auto mode.
    pub auto: AutoAnswer,
    /// The significant words of the control acted on (and, for a drag, of either end; for
    /// a form, of a box being ticked; for a page confirm, of its sentence), as found by
    /// [`StakesWords`](crate::StakesWords).
    pub significant_words: Option<String>,
    /// The person already said yes in this step, to a high-stakes or upload question; it
    /// covers the site's follow-up "Are you sure?" (DLG-7).
    pub vouched: bool,
    /// The field the act's text or keys go to is secret
    /// ([`classify_field`](crate::classify_field)): the field typed into, pressed on or
    /// chosen in, or, for click_at with text, the field focused after the click (SEC-6).
    pub secret_target: bool,
    /// The keys of a press.
    pub keys: Option<Chord>,
    /// The files of an upload, already past [`check_upload`](crate::check_upload).
    pub uploads: Vec<UploadItem>,
    /// The conversation is an errand that borrows the main context's sign-ins: false for
    /// ordinary chats, and for errands beside the person's own Chrome (ERR-6).
    pub errand_lends: bool,
}

impl PermitFacts {
    /// Facts for an act on `site`, with nothing allowed yet and nothing special about the
    /// target.
    pub fn new(mode: Mode, act: ActKind, site: Site) -> Self {
        Self {
            mode,
            act,
            browser: BrowserKind::Conch,
            site,
            frame_site: None,
            allowance: SiteAllowance::NotYet,
            auto: AutoAnswer::Allow,
            significant_words: None,
            vouched: false,
            secret_target: false,
            keys: None,
            uploads: Vec::new(),
            errand_lends: false,
        }
    }

    /// Whether the embedder's `AutoPolicy` must be consulted before [`decide`]: Auto mode,
    /// an act that would otherwise meet the site question, in Conch's own browser.
    pub fn needs_auto_policy(&self) -> bool {
        self.mode == Mode::Auto
            && self.act.class() == ActClass::Acting
            && self.act != ActKind::Upload
            && self.browser == BrowserKind::Conch
            && self.allowance == SiteAllowance::NotYet
    }

    fn site_allowed(&self) -> bool {
        match self.browser {
            BrowserKind::OwnChrome => self.allowance == SiteAllowance::ThisChat,
            BrowserKind::Conch => self.allowance != SiteAllowance::NotYet,
        }
    }

    /// Whether this act activates the control it lands on, so its words can make it high
    /// stakes: every act but typing, uploading, and presses other than Enter and Space.
    fn activates(&self) -> bool {
        match self.act {
            ActKind::Type | ActKind::Upload => false,
            ActKind::Press => self.keys.as_ref().is_none_or(Chord::activates),
            _ => self.act.class() == ActClass::Acting,
        }
    }
}

/// Decides one act. See the module docs for the order of the gates.
pub fn decide(facts: &PermitFacts) -> Decision {
    // 1. Reading and handoff never ask.
    if facts.act.class() != ActClass::Acting {
        return Decision::Allow;
    }
    // 2. Plan only refuses every act.
    if facts.mode == Mode::PlanOnly {
        return Decision::Refuse(Refusal::new(RefusalCode::PlanOnly));
    }
    // 3. Secrets.
    if facts.secret_target {
        match (facts.act, &facts.keys) {
            (ActKind::Type | ActKind::Select | ActKind::ClickAt, _) => {
                return Decision::Refuse(Refusal::new(RefusalCode::SecretField));
            }
            (ActKind::Press, Some(chord)) => {
                if let Verdict::Refuse(refusal) = key_verdict_on_secret(chord) {
                    return Decision::Refuse(refusal);
                }
            }
            (ActKind::Press, None) => {
                return Decision::Refuse(Refusal::new(RefusalCode::SecretKey));
            }
            _ => {}
        }
    }
    // 4. The site question.
    if facts.act != ActKind::Upload && !facts.site_allowed() {
        let frame = facts.frame_site.as_ref();
        match (facts.browser, facts.mode, facts.auto) {
            (BrowserKind::OwnChrome, _, _) => {
                return Decision::Ask(Question::own_chrome(&facts.site, frame));
            }
            (BrowserKind::Conch, Mode::Ask, _) => {
                return Decision::Ask(Question::for_site(&facts.site, frame, facts.errand_lends));
            }
            (BrowserKind::Conch, Mode::Auto, AutoAnswer::Ask) => {
                // An answer in Auto never lends a sign-in (ERR-5).
                return Decision::Ask(Question::for_site(&facts.site, frame, false));
            }
            _ => {}
        }
    }
    // 5. High stakes, every time, in every mode.
    if !facts.vouched
        && facts.activates()
        && let Some(words) = &facts.significant_words
    {
        return Decision::Ask(Question::high_stakes(&facts.site, facts.act.doing(), words));
    }
    // 6. The upload question, every time.
    if facts.act == ActKind::Upload && !facts.vouched {
        return Decision::Ask(Question::upload(&facts.site, &facts.uploads));
    }
    Decision::Allow
}
