//! When a handoff finishes by itself (HAND-2, HAND-3, HAND-4, HAND-5, AMB-20).
//!
//! A handoff that starts at a gate (a visible password field, a visible one-time-code
//! field, or a captcha frame) is watched once a second. It ends by itself when the gate
//! is behind the person, meaning one of:
//! - the page moved on (another document) and shows no password, code or captcha (a
//!   two-step code page is still a gate);
//! - a sign-in popup came and went;
//! - the captcha left its token in the page;
//!
//! and only when two looks in a row agree and the person's hands have been off the page
//! for at least 2 seconds, so it never takes the wheel mid-typing. A handoff that starts
//! anywhere else (a payment, the person's details) ends only with "I'm done".
//!
//! Time is passed in; this module has no clock.

use std::time::Duration;

use serde::Serialize;
use url::Url;

/// How often a gate handoff is looked at (HAND-2).
pub const LOOK_EVERY: Duration = Duration::from_secs(1);

/// How long the person's hands must have been off the page (AMB-20).
pub const HANDS_OFF: Duration = Duration::from_secs(2);

/// How many passing looks in a row end the handoff (AMB-20).
pub const LOOKS_IN_A_ROW: u8 = 2;

/// Hosts whose frames are captchas (AMB-20): a frame on one of them, or below it.
const CAPTCHA_HOSTS: &[&str] = &[
    "challenges.cloudflare.com",
    "hcaptcha.com",
    "captcha-delivery.com",
];

/// Fields where a solved captcha leaves its token (AMB-20).
pub const CAPTCHA_TOKEN_FIELDS: &[&str] = &[
    "cf-turnstile-response",
    "g-recaptcha-response",
    "h-captcha-response",
];

/// Whether a frame's address is a captcha (AMB-20): challenges.cloudflare.com,
/// google.com/recaptcha (and recaptcha.net), hcaptcha.com, captcha-delivery.com.
pub fn is_captcha_frame(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_end_matches('.');
    let on = |domain: &str| host == domain || host.ends_with(&format!(".{domain}"));
    CAPTCHA_HOSTS.iter().any(|domain| on(domain))
        || ((on("google.com") || on("recaptcha.net")) && url.path().starts_with("/recaptcha"))
}

/// Whether a field left a captcha token (AMB-20): one of [`CAPTCHA_TOKEN_FIELDS`] with a
/// non-empty value.
pub fn is_captcha_token(field_name: &str, value: &str) -> bool {
    CAPTCHA_TOKEN_FIELDS.contains(&field_name) && !value.trim().is_empty()
}

/// One look at the page during a handoff, gathered by the caller.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GateLook {
    /// Which document shows: its URL plus anything that changes when the page moves on
    /// (the loader id). A change means the page moved on.
    pub document: String,
    /// A password field is visible.
    pub password_visible: bool,
    /// A one-time-code field is visible.
    pub code_visible: bool,
    /// A captcha frame is visible ([`is_captcha_frame`]).
    pub captcha_visible: bool,
    /// A captcha token is in the page ([`is_captcha_token`]).
    pub captcha_token: bool,
    /// A sign-in popup opened during the handoff and has closed since.
    pub popup_came_and_went: bool,
}

impl GateLook {
    /// Whether this look shows a gate (HAND-2).
    pub fn is_gate(&self) -> bool {
        self.password_visible || self.code_visible || self.captcha_visible
    }
}

/// Where a watched handoff stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum HandoffState {
    /// Keep waiting.
    Waiting,
    /// The gate is behind the person: carry on ("You got through, so Conch carried on").
    Finished,
}

/// Watches a handoff that started at a gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandoffWatch {
    start_document: String,
    passes_in_a_row: u8,
}

impl HandoffWatch {
    /// Starts watching, or `None` when the handoff doesn't start at a gate: it then ends
    /// only when the person presses I'm done (HAND-5).
    pub fn start(first: &GateLook) -> Option<Self> {
        first.is_gate().then(|| Self {
            start_document: first.document.clone(),
            passes_in_a_row: 0,
        })
    }

    /// Whether one look shows the gate behind the person (HAND-3).
    pub fn look_passes(&self, look: &GateLook) -> bool {
        let moved_on = look.document != self.start_document && !look.is_gate();
        moved_on || look.popup_came_and_went || look.captcha_token
    }

    /// Takes one look, with how long the person's hands have been off the page, and says
    /// whether the handoff is finished (HAND-3, HAND-4).
    pub fn observe(&mut self, look: &GateLook, hands_off_for: Duration) -> HandoffState {
        if self.look_passes(look) {
            self.passes_in_a_row = self.passes_in_a_row.saturating_add(1);
        } else {
            self.passes_in_a_row = 0;
        }
        if self.passes_in_a_row >= LOOKS_IN_A_ROW && hands_off_for >= HANDS_OFF {
            HandoffState::Finished
        } else {
            HandoffState::Waiting
        }
    }
}
