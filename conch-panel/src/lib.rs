//! conch-panel: the person's door, as a library (issue 28). Any axum app that drives a
//! [`conch_browser::Browser`] through [`conch_tools::Tools`] mounts the web panel with
//! one call: the sign-in, the panel's pages and files, the live view's WebSocket, the
//! question cards, and the Settings and Passwords pages with their APIs. conch-gateway is
//! one such app; it adds only argument parsing, wiring and the two MCP doors.
//!
//! # Brief overview
//!
//! - [`Panel`]: the door's state (its port, the one-time sign-in codes, the signed-in
//!   sessions, the live view). [`router`] gives its routes; [`mount`] merges them into
//!   an app's router.
//! - [`cards`]: questions as cards on the panel: [`cards::PanelAsker`] is the
//!   [`conch_tools::Asker`] that puts them there; [`events::PanelEvents`] brings the
//!   browser's and the tools' events to the live socket.
//! - [`live`]: the live socket, bridged to conch-live's hub; [`live::Leaving`] ends what
//!   waits for an MCP client that left.
//! - The pages' routes share one module for the sessions, the own `Host` and `Origin`
//!   checks and the answers; [`panel`], [`settings`] and [`passwords`] never import
//!   each other.
//! - [`settings`]: the settings and health API; the embedder says how the person's choice
//!   of browser is kept with a [`BackendChoice`].
//! - [`passwords`]: the person's saved passwords and [`passwords::Vault`], the
//!   [`conch_tools::SecretFiller`] that fills them in.
//! - [`inline`]: the live view inline in the chat (MCP Apps): the app's document and
//!   the door behind its app-only tools, signed in as the panel is.
//! - [`notify`]: the desktop notification of a handoff; [`secret`]: the constant-time
//!   comparison and the random codes the doors use.
//!
//! conch-live and conch-tools never import each other: they meet here and in the
//! embedder's wiring.
//!
//! # Mounting the panel
//!
//! ```ignore
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! let board = conch_panel::cards::Board::new(Duration::from_secs(300));
//! let asker = Arc::new(conch_panel::cards::PanelAsker {
//!     board: board.clone(),
//!     link: format!("http://127.0.0.1:{port}/"),
//! });
//! let browser = conch_browser::Browser::new(conch_browser::BrowserConfig::new(home));
//! let tools = conch_tools::Tools::new(browser.clone(), conch_tools::ToolsConfig::new(asker));
//! let panel = conch_panel::Panel::new(port, conch_panel::live::Live::new(browser, board));
//! panel.set_tools(tools);
//! let app = conch_panel::mount(axum::Router::new(), &panel);
//! axum::serve(listener, app).await?;
//! ```
//!
//! `examples/mount.rs` is the same, compiled; the crate's test
//! `live_18_an_embedder_mounts_the_panel_with_one_call` runs it.
//!
//! Deliberately absent: the MCP doors, the command line and the files only a command
//! reads (the embedder's).

pub mod cards;
mod door;
pub mod events;
pub mod inline;
pub mod live;
pub mod notify;
pub mod panel;
pub mod passwords;
pub mod secret;
pub mod settings;

mod assets;

pub use door::{Clock, DEFAULT_PANEL_IDLE, Panel};
pub use settings::{BackendChoice, ChoiceError};

/// The person's door's routes, with `panel`'s state: the panel page's
/// ([`panel`]), the Passwords page's ([`passwords`]) and the Settings page's
/// ([`settings`]). The app that serves them must listen on 127.0.0.1 at the panel's port.
pub fn router(panel: &Panel) -> axum::Router {
    let settings = settings::router(settings::Settings::new(panel.clone()));
    panel::routes()
        // The Passwords page and its API (issue 16).
        .merge(passwords::routes())
        .with_state(panel.clone())
        .merge(settings)
}

/// Mounts the person's door on `app`: `app` with the door's routes merged in (the one
/// call an embedder makes).
pub fn mount(app: axum::Router, panel: &Panel) -> axum::Router {
    app.merge(router(panel))
}
