//! conch-live: the person's side of Conch's browser. A person watches a conversation's
//! browser live, takes over and hands back, finds on the page, answers the page's
//! dialogs and presses Stop; the agent meanwhile waits (HAND-8) and is told afterwards
//! what the person did.
//!
//! # Brief overview
//!
//! - [`Hub`]: the live views of one browser's conversations. [`Hub::join`] gives a
//!   watcher its [`Feed`] (JPEG frames of the conversation's active tab from CDP
//!   `Page.startScreencast`, latest-frame-wins, and [`Event`]s) and its [`Control`]
//!   (the panel's [`Command`]s). The screencast runs only while someone watches (LIVE-1 …
//!   LIVE-3, LIVE-15).
//! - [`TurnControl`]: the embedder's Stop (LIVE-14).
//! - [`command`]: the commands a panel sends, parsed with a typed [`CommandError`] whose
//!   reply is always `{type:"error", message:"Invalid command"}` (PROTO-9), and the events
//!   the socket sends back. The protocol types are conch-browser's, re-exported here
//!   (AMB-29).
//!
//! conch-live and conch-tools never import each other: they meet in conch-browser's
//! per-conversation [`Wheel`](conch_browser::Wheel) (who drives, what the agent did, Stop)
//! and through the traits the gateway wires.
//!
//! Deliberately absent: the socket and the sign-in (the gateway's), and anything that
//! keeps the person's input (SEC-7).

pub mod command;
mod control;
mod hub;

pub use command::{Command, CommandError, Direction, Event, MAX_COMMAND_BYTES};
pub use conch_browser::protocol;
pub use control::{Control, FIND_WHILE_STEPPING, SESSION_TASK, SESSION_WHICH};
pub use hub::{Feed, Hub, Outgoing, TurnControl};
