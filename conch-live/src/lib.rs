//! conch-live: the live view of one conversation's browser.
//!
//! So far it holds [`command`]: the commands a panel sends over the live socket, parsed
//! from JSON text into [`Command`] with a typed [`CommandError`] whose reply is always
//! `{type:"error", message:"Invalid command"}` (PROTO-9), and the [`Event`]s the live
//! socket sends back. The protocol types are conch-browser's, re-exported here (AMB-29).

pub mod command;

pub use command::{Command, CommandError, Direction, Event, MAX_COMMAND_BYTES};
pub use conch_browser::protocol;
