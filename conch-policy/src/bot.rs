//! Bot checks, from facts about a page (BOT-1, BOT-2, BOT-3, BOT-4, AMB-21).
//!
//! After browser_open, and after a tab is opened with an address, the caller gathers the
//! page's status, title, visible text, markup (or the script and frame addresses in it)
//! and how many form controls it has. The classifier says whether this is:
//! - a **challenge** by Cloudflare, DDoS-Guard, PerimeterX or DataDome, by the markers in
//!   `bot_markers.txt` (a data file, because vendors change them): a title marker on any
//!   page, a markup or text marker only on a page with under 1,000 characters of visible
//!   text (the vendors' scripts also run on ordinary pages). It is waited out for up to
//!   15 seconds, then the agent is told to call browser_handoff;
//! - a **refusal**: "Access denied" in the title (or in a short page), or an HTTP 403 or
//!   429 with under 300 characters of visible text and no form controls: said plainly,
//!   with "don't retry it over and over";
//! - or an ordinary page.
//!
//! A challenge wins over a refusal status, since Cloudflare serves its challenge with 403.

use std::sync::OnceLock;
use std::time::Duration;

use serde::Serialize;

/// How long a challenge is waited out before the agent is told to hand off (BOT-2).
pub const CHALLENGE_WAIT: Duration = Duration::from_secs(15);

/// Under this many characters of visible text, a 403 or 429 page is "almost nothing"
/// (AMB-21).
pub const NEARLY_EMPTY_CHARS: usize = 300;

/// Markers in the markup or text count only on a page with fewer characters of visible
/// text than this: vendors' scripts also run quietly on ordinary pages, but a challenge
/// page says little beyond "checking your browser".
pub const CHALLENGE_PAGE_CHARS: usize = 1_000;

const MARKERS: &str = include_str!("bot_markers.txt");

/// Facts about a page, gathered by the caller.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PageFacts {
    /// The HTTP status of the main document, if known.
    pub status: Option<u16>,
    /// The document's title.
    pub title: String,
    /// The visible text.
    pub text: String,
    /// The markup, or the parts of it that carry markers: script and frame addresses,
    /// element ids and classes.
    pub markup: String,
    /// How many form controls the page has.
    pub form_controls: usize,
}

/// Who runs a challenge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Vendor {
    /// Cloudflare ("Just a moment…", challenge-platform scripts, Turnstile).
    Cloudflare,
    /// DDoS-Guard.
    DdosGuard,
    /// PerimeterX / HUMAN (px-captcha).
    PerimeterX,
    /// DataDome (captcha-delivery.com).
    DataDome,
}

impl Vendor {
    /// The vendor's name as people write it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Cloudflare => "Cloudflare",
            Self::DdosGuard => "DDoS-Guard",
            Self::PerimeterX => "PerimeterX",
            Self::DataDome => "DataDome",
        }
    }
}

/// What the page is, for the bot-check rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "vendor")]
pub enum BotCheck {
    /// An ordinary page.
    None,
    /// A challenge that may pass by itself.
    Challenge(Vendor),
    /// The site refuses this visit.
    Refusal,
}

impl BotCheck {
    /// The stable code: `none`, `challenge-<vendor>`, `refusal`.
    pub fn code(self) -> String {
        match self {
            Self::None => "none".to_owned(),
            Self::Challenge(vendor) => format!("challenge-{}", vendor_code(vendor)),
            Self::Refusal => "refusal".to_owned(),
        }
    }
}

fn vendor_code(vendor: Vendor) -> &'static str {
    match vendor {
        Vendor::Cloudflare => "cloudflare",
        Vendor::DdosGuard => "ddos-guard",
        Vendor::PerimeterX => "perimeterx",
        Vendor::DataDome => "datadome",
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Where {
    Title,
    Markup,
    Text,
}

#[derive(Debug)]
struct Marker {
    vendor: Vendor,
    place: Where,
    needle: String,
}

fn markers() -> &'static [Marker] {
    static PARSED: OnceLock<Vec<Marker>> = OnceLock::new();
    PARSED.get_or_init(|| parse_markers(MARKERS))
}

fn parse_markers(data: &str) -> Vec<Marker> {
    data.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| {
            let mut fields = line.splitn(3, '|').map(str::trim);
            let vendor = match fields.next()? {
                "cloudflare" => Vendor::Cloudflare,
                "ddos-guard" => Vendor::DdosGuard,
                "perimeterx" => Vendor::PerimeterX,
                "datadome" => Vendor::DataDome,
                _ => return None,
            };
            let place = match fields.next()? {
                "title" => Where::Title,
                "markup" => Where::Markup,
                "text" => Where::Text,
                _ => return None,
            };
            let needle = fields.next()?.to_lowercase();
            (!needle.is_empty()).then_some(Marker {
                vendor,
                place,
                needle,
            })
        })
        .collect()
}

/// Classifies a page (BOT-1, BOT-4).
pub fn classify_page(page: &PageFacts) -> BotCheck {
    let title = page.title.trim().to_lowercase();
    let text = page.text.to_lowercase();
    let markup = page.markup.to_lowercase();
    let refusal_title = title.contains("access denied");
    let visible = page.text.trim().chars().count();
    let small = visible < CHALLENGE_PAGE_CHARS;
    for marker in markers() {
        let hit = match marker.place {
            Where::Title => title.starts_with(&marker.needle),
            Where::Markup => small && markup.contains(&marker.needle),
            Where::Text => small && text.contains(&marker.needle),
        };
        // Cloudflare's own block page ("Access denied | … | Cloudflare") is a refusal.
        if hit && !refusal_title {
            return BotCheck::Challenge(marker.vendor);
        }
    }
    let nearly_empty = visible < NEARLY_EMPTY_CHARS && page.form_controls == 0;
    if refusal_title
        || (nearly_empty && text.contains("access denied"))
        || (nearly_empty && matches!(page.status, Some(403 | 429)))
    {
        return BotCheck::Refusal;
    }
    BotCheck::None
}

/// Where a challenge stands after waiting `waited` (BOT-2, BOT-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ChallengeWait {
    /// It went away: say it passed and show the real page.
    Passed,
    /// Keep looking.
    KeepWaiting,
    /// 15 seconds and still there: tell the agent to call browser_handoff.
    HandOff,
}

/// Judges a challenge after `waited`, given whether it still shows.
pub fn challenge_wait(waited: Duration, still_showing: bool) -> ChallengeWait {
    if !still_showing {
        ChallengeWait::Passed
    } else if waited < CHALLENGE_WAIT {
        ChallengeWait::KeepWaiting
    } else {
        ChallengeWait::HandOff
    }
}

/// The note the agent reads about a bot check.
pub fn bot_note(check: BotCheck, wait: ChallengeWait) -> Option<String> {
    match (check, wait) {
        (BotCheck::None, _) => None,
        (BotCheck::Challenge(vendor), ChallengeWait::Passed) => Some(format!(
            "The site's bot check ({}) passed by itself; this is the real page.",
            vendor.name()
        )),
        (BotCheck::Challenge(vendor), ChallengeWait::KeepWaiting) => Some(format!(
            "The site is running a bot check ({}); Conch is waiting for it to pass.",
            vendor.name()
        )),
        (BotCheck::Challenge(vendor), ChallengeWait::HandOff) => Some(format!(
            "The site's bot check ({}) didn't pass by itself: call browser_handoff so the person can get past it.",
            vendor.name()
        )),
        (BotCheck::Refusal, _) => Some(
            "The site refused this visit (access denied). Don't retry it over and over: try another site for the same thing, or ask the person to open it themselves.".to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amb_21_every_marker_line_parses() {
        let lines = MARKERS
            .lines()
            .filter(|line| !line.trim().is_empty() && !line.trim().starts_with('#'))
            .count();
        assert_eq!(markers().len(), lines);
    }
}
