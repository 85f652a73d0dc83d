//! conch-policy: every rule Conch's browser decides, as pure functions of plain data.
//!
//! # Brief overview
//!
//! Each rule takes facts the caller gathered and returns a value: a [`Verdict`] (allow,
//! or a [`Refusal`] with a stable [`RefusalCode`] and a sentence naming the next step), a
//! [`Decision`] (allow, ask a [`Question`], or refuse), or a classification. Only
//! malformed input is an [`Error`].
//!
//! - Sites: [`Site::of_host`], [`Site::of_url`] (PERM-4).
//! - The network: [`verdict_for_connection`] for the guard proxy,
//!   [`verdict_for_resolved_url`] and [`verdict_for_url`] for layers that see URLs,
//!   [`classify`] for an address, [`navigation_verdict`] for schemes, under
//!   [`NetSettings`] with its [`Gateway`] and [`AllowedHost`] entries (NET-*).
//! - Permissions: [`decide`] over [`PermitFacts`] ([`Mode`], [`ActKind`], what the person
//!   already allowed), and [`carries`] (PERM-*, BE-12).
//! - High stakes: [`StakesWords`], [`significant_word`], [`asks_high_stakes`], and the act
//!   that commits: [`commits`], [`StakesWords::on_commit`], [`CommitContext`] (HS-*).
//! - Secrets: [`classify_field`] over [`FieldFacts`], [`key_verdict_on_secret`] for a
//!   [`Chord`], [`typing_verdict`] (SEC-*).
//! - Uploads: [`check_upload`] over [`FileFacts`] and [`UploadPlaces`] (UP-*).
//! - Downloads: [`safe_join`], [`numbered_name`] (DL-2, DL-4).
//! - Pages: [`page_parts`] (SNAP-8, SNAP-10), [`FIRST_LOOK_CHARS`] (SNAP-6),
//!   [`classify_page`] for bot checks (BOT-*), [`HandoffWatch`] for handoffs that finish
//!   by themselves (HAND-*), [`dialog_answer`] for the page's dialogs (DLG-*),
//!   [`wrap_untrusted`] for page text (TOOL-10), [`is_reject_control`] for cookie banners
//!   (LAUNCH-11).
//! - Shapes and limits: [`viewport_for_panel`], [`cast_size`] and [`click_at_point`] (LIVE-4, GES-11),
//!   [`may_open_tab`] and [`tab_to_close_for_popup`] (TAB-5), [`errand_limit`],
//!   [`make_room`] and [`lends_cookie`] (ERR-3, ERR-15, ERR-16).
//!
//! Deliberately absent: no I/O of any kind (no filesystem, sockets, DNS or clock; time
//! and resolved addresses are passed in), no async runtime, no CDP, no MCP. The README
//! beside this crate lists each rule, the threat it answers and the test that proves it.
#![forbid(unsafe_code)]

mod bot;
mod consent;
mod dialog;
mod download;
mod errand;
mod error;
mod handoff;
mod keys;
mod net;
mod parts;
mod permit;
mod secrets;
mod site;
mod stakes;
mod tabs;
mod upload;
mod verdict;
mod viewport;
mod words;
mod wrap;

pub use bot::{
    BotCheck, CHALLENGE_PAGE_CHARS, CHALLENGE_WAIT, ChallengeWait, NEARLY_EMPTY_CHARS, PageFacts,
    Vendor, bot_note, challenge_wait, classify_page,
};
pub use consent::is_reject_control;
pub use dialog::{DialogAnswer, DialogKind, Driver, ON_HAND_BACK, dialog_answer};
pub use download::{FALLBACK_NAME, numbered_name, safe_file_name, safe_join};
pub use errand::{
    MAX_SET_ASIDE, OpenErrand, Room, SET_ASIDE_FOR_SECS, errand_limit, lends_cookie, lends_origin,
    make_room, set_aside_to_forget,
};
pub use error::{Error, ErrorKind};
pub use handoff::{
    CAPTCHA_TOKEN_FIELDS, GateLook, HANDS_OFF, HandoffState, HandoffWatch, LOOK_EVERY,
    LOOKS_IN_A_ROW, is_captcha_frame, is_captcha_token,
};
pub use keys::{Chord, Modifiers, key_verdict_on_secret};
pub use net::{
    AddressClass, AllowedHost, Gateway, NameClass, NavigationBy, NetSettings,
    agent_navigation_verdict, classify, classify_name, embedded_ipv4, navigation_verdict,
    special_ranges, verdict_for_connection, verdict_for_resolved_url, verdict_for_url,
};
pub use parts::{FIRST_LOOK_CHARS, PART_CHARS, page_parts, page_parts_within};
pub use permit::{
    ActClass, ActKind, AutoAnswer, BrowserKind, CARRIES_CHARS, Mode, PermitFacts, SiteAllowance,
    carries, decide,
};
pub use secrets::{
    FieldClass, FieldFacts, SecretKind, SecretWords, classify_field, is_new_password,
    typing_verdict,
};
pub use site::Site;
pub use stakes::{
    CommitContext, CommitStakes, Control, LONG_LINK_WORDS, Significant, StakesWords,
    asks_high_stakes, commits, declines, significant_word,
};
pub use tabs::{MAX_TABS, TabUse, may_open_tab, tab_to_close_for_popup};
pub use upload::{
    FileFacts, FileOrigin, MAX_FILES, MAX_TOTAL_BYTES, UploadItem, UploadPlaces, check_file,
    check_upload, is_key_shaped, is_sealed_secret_name,
};
pub use verdict::{Choice, Decision, Question, QuestionKind, Refusal, RefusalCode, Verdict};
pub use viewport::{
    DEFAULT_VIEWPORT, MAX_DPR, Point, Size, VIEWPORT_WIDTHS, cast_size, click_at_point,
    panel_in_device_px, panel_to_viewport, viewport_for_panel,
};
pub use wrap::{
    BEGIN_MARKER, END_MARKER, REPLACEMENT, UNTRUSTED_NOTE, marker_count, neutralise, wrap_untrusted,
};
