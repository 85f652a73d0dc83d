//! The fifteen tools, one module each, the way Playwright MCP keeps one file per tool.
//! Each module takes its call's arguments, asks the permit flow through its
//! [`turn::Turn`] when it acts, and acts through the engine module.
//!
//! Deliberately absent: logic shared by several tools, which lives in [`turn`], and the
//! checks every call passes first (Plan only, a running browser), which
//! [`Chat`](crate::Chat) makes before any tool runs.

pub(crate) mod back;
pub(crate) mod click;
pub(crate) mod click_at;
pub(crate) mod form;
pub(crate) mod handoff;
pub(crate) mod open;
pub(crate) mod press;
pub(crate) mod read;
pub(crate) mod screenshot;
pub(crate) mod scroll;
pub(crate) mod select;
pub(crate) mod tabs;
pub(crate) mod turn;
pub(crate) mod type_;
pub(crate) mod upload;
pub(crate) mod vault;
pub(crate) mod wait;
