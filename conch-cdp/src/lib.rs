//! conch-cdp: a raw, async Chrome DevTools Protocol client.
//!
//! # Brief overview
//!
//! - [`Connection`]: one transport to one browser. [`Connection::connect`] takes a
//!   DevTools address (`ws://…`, `wss://…` with the `tls` feature, or `http://host:port`,
//!   resolved through `/json/version`); [`Connection::launch`] starts a browser from a
//!   caller-built [`std::process::Command`] with `--remote-debugging-pipe`, so no TCP port
//!   is opened. An actor task owns the transport; the handles are cheap clones.
//! - [`Session`]: the browser's own session ([`Connection::browser`]) or a flat session
//!   ([`Connection::attach`]). [`Session::call`] sends a typed [`Command`];
//!   [`Session::call_raw`] sends any method as JSON. Every call has a timeout
//!   ([`Config::call_timeout`] or [`Session::call_with_timeout`]).
//! - Events: [`Session::subscribe`] gives an [`EventStream`] of a typed [`Event`],
//!   [`Session::events`] a [`RawEvents`] of any method. Subscribe before sending the command
//!   that triggers the event. Events are routed by (session, method) with their params left
//!   raw, so an event nobody subscribed to is never parsed.
//! - Auto-attach: [`Session::attached_targets`] (or [`Connection::attached_targets`])
//!   yields each new child session as an [`AttachedTarget`], held before it runs when
//!   `Target.setAutoAttach` asked for it ([`protocol::target::SetAutoAttach::held`]); the
//!   caller installs its handlers, then calls [`AttachedTarget::resume`].
//! - [`protocol`]: the typed commands and events the project uses.
//! - [`Error`] with its [`ErrorKind`]: the one error type. When the browser goes away,
//!   every pending and later call fails with [`ErrorKind::Closed`] at once and every stream
//!   ends; a malformed incoming message is reported on [`Connection::errors`] and dropped,
//!   and the connection goes on.
//! - [`redact`]: what the traces hide. Every message is traced at TRACE level on the target
//!   `conch_cdp::wire`, with typed text, cookies and credentials in addresses redacted
//!   (SEC-8, LAUNCH-18).
//!
//! Deliberately absent: any knowledge of Conch's policy, tools or vocabulary; discovery of
//! targets the caller did not ask for; a generated catalogue of the whole protocol.

mod actor;
mod config;
mod connection;
mod error;
mod events;
pub mod protocol;
pub mod redact;
mod transport;
#[cfg(unix)]
mod unix;

pub use config::Config;
pub use connection::{Connection, Session};
pub use error::{Error, ErrorKind, Result};
pub use events::{AttachedTarget, AttachedTargets, Errors, EventStream, RawEvent, RawEvents};
pub use protocol::{BrowserContextId, Command, Event, FrameId, SessionId, TargetId};
