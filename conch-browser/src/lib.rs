//! conch-browser: Conch's browser runtime.
//!
//! So far it holds [`discover`], which finds a Chromium-family browser the way the product
//! does (Chrome, Edge, Brave, then Chromium in their usual places on Linux, macOS and
//! Windows, then Playwright's cache), behind the [`discover::Probe`] seam so tests give
//! a fake table of paths. Launch, healing, tabs, page reading and the guard build on it.
//!
//! Conch's files and the browser's surroundings: [`home::Home`] derives every path from
//! one home directory; [`store`] reads and writes `browser.json` and `browser/tabs.json`
//! (versioned, atomic, corrupt files set aside); [`process`] frees a profile left locked
//! (behind the [`process::ProcessTable`] seam); [`env`](mod@env) builds the browser's
//! allowlisted environment; [`clock`] is the time seam.
//!
//! The runtime: [`Browser`] is the one local browser every conversation shares, launched
//! on first need over the DevTools pipe, relaunched with every tab restored after a crash,
//! shut down after 10 idle minutes; [`Conversation`] is one conversation's tabs, its calls
//! run one at a time. [`Status`] says what runs and why; [`BrowserError`] is one sentence.
//!
//! Errands ([`errands`], ADR 0141): a conversation the embedder calls a task
//! ([`Browser::set_kind`]) browses in a browser context of its own in a second,
//! non-persistent Chromium, seeded with the always-allowed sites' cookies and local
//! storage, set aside sealed ([`aside`]) when interrupted, capped, and healed after a
//! crash. The person can give a
//! chat a browser of its own too ([`Browser::set_own_browser`], LIVE-16).
//! [`reports`] is what the embedder hears: the checkup, health and backup manifest
//! ([`reports::HostReports`], PROTO-11).
//!
//! [`fetch`] downloads a pinned Chromium into Playwright's cache when no browser is found.

pub mod aside;
mod backend;
mod choice;
pub mod clock;
pub mod discover;
pub mod env;
pub mod errands;
mod error;
pub mod fetch;
pub mod guard;
pub mod handoff;
pub mod home;
mod launch;
pub mod own_chrome;
pub mod page;
pub mod process;
pub mod protocol;
pub mod remote;
pub mod reports;
mod runtime;
mod saver;
pub mod seal;
pub mod store;
pub mod sync;
pub mod wheel;

pub use choice::Abilities;
pub use clock::{Clock, ManualClock, SystemClock};
pub use errands::{ConversationKind, Revoked, TaskState};
pub use error::BrowserError;
pub use home::Home;
pub use launch::browser_args;
pub use runtime::{
    AwakeGuard, Browser, BrowserConfig, Conversation, ERRANDS_BESIDE_OWN_CHROME, HealthCheck,
    HealthItem, HealthState, MAX_TABS, MOVED_APART, MOVED_BACK, OwnBrowser, REOPENED, RepairStep,
    RunState, Status, StepOutcome, TabInfo, errands_run_here, waiting_sentence,
};
pub use wheel::Wheel;
