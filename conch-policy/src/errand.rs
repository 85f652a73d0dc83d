//! Errands: the cap on open errand contexts (ERR-15, AMB-26), which one makes room
//! (ERR-16, ERR-17), which sign-ins a new errand is lent (ERR-3), and which set-aside
//! sessions are forgotten (ERR-14).

use serde::Serialize;
use url::Url;

use crate::site::Site;
use crate::verdict::{RefusalCode, Verdict};

/// One gigabyte as the cap counts it: 10^9 bytes, so a machine sold as 8 GB, which
/// reports a little under 8 GiB, still counts as 8.
const GB: u64 = 1_000_000_000;

/// errandLimit() = clamp(floor(total memory in GB ÷ 2), 2, 6) open errand contexts, from
/// total physical memory in bytes: 2 GB → 2, 8 GB → 4, 16 GB → 6.
pub fn errand_limit(total_memory_bytes: u64) -> usize {
    let half_gb = total_memory_bytes / GB / 2;
    usize::try_from(half_gb.clamp(2, 6)).unwrap_or(2)
}

/// An open errand as the cap sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenErrand {
    /// Its conversation.
    pub id: String,
    /// When it was last used (last agent step or person input), as a growing value.
    pub last_used: u64,
    /// Someone drives it or watches it now.
    pub busy: bool,
}

/// What to do before a new errand context opens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "room", content = "errand")]
pub enum Room {
    /// There is room.
    Free,
    /// Set this errand aside first; it comes back as it was when next used (ERR-16).
    SetAside(String),
    /// Every open errand is busy: the step fails with "wait a minute and try again"
    /// (ERR-17).
    Busy(Verdict),
}

/// Makes room for one more errand under `limit`: the open errand used least recently
/// that nobody drives or watches is set aside.
pub fn make_room(open: &[OpenErrand], limit: usize) -> Room {
    if open.len() < limit {
        return Room::Free;
    }
    open.iter()
        .filter(|errand| !errand.busy)
        .reduce(|oldest, errand| {
            if errand.last_used < oldest.last_used {
                errand
            } else {
                oldest
            }
        })
        .map_or_else(
            || Room::Busy(Verdict::refuse(RefusalCode::ErrandsBusy)),
            |errand| Room::SetAside(errand.id.clone()),
        )
}

/// Whether a cookie of the main context goes into a new errand (ERR-3): its domain's site
/// is one of the lent sites, by the same site function as permissions (`.shop.example` →
/// `shop.example`; `alice.github.io` is not `github.io`). An unreadable domain lends
/// nothing.
pub fn lends_cookie(cookie_domain: &str, lent: &[Site]) -> bool {
    Site::of_host(cookie_domain).is_ok_and(|site| lent.contains(&site))
}

/// Whether an origin's local storage goes into a new errand (ERR-3), by its site.
pub fn lends_origin(origin: &Url, lent: &[Site]) -> bool {
    Site::of_url(origin).is_ok_and(|site| lent.contains(&site))
}

/// The most set-aside errand sessions kept (ERR-14).
pub const MAX_SET_ASIDE: usize = 40;

/// How long a set-aside errand session is kept, in seconds: 14 days (ERR-14).
pub const SET_ASIDE_FOR_SECS: u64 = 14 * 24 * 60 * 60;

/// Which set-aside sessions to forget (ERR-14), given each one's name and when it was set
/// aside (seconds since the Unix epoch), at `now`: every one older than 14 days, then the
/// oldest until at most 40 remain. The oldest go first.
pub fn set_aside_to_forget(kept: &[(String, u64)], now: u64) -> Vec<String> {
    let mut by_age: Vec<&(String, u64)> = kept.iter().collect();
    // Oldest first; the name breaks ties so the answer never depends on the input's order.
    by_age.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    let expired = by_age
        .iter()
        .take_while(|(_, at)| now.saturating_sub(*at) > SET_ASIDE_FOR_SECS)
        .count();
    let over = by_age.len().saturating_sub(MAX_SET_ASIDE);
    by_age
        .into_iter()
        .take(expired.max(over))
        .map(|(name, _)| name.clone())
        .collect()
}
