//! conch-gateway's integration tests: a real MCP client speaks to the built binary over
//! stdio and over HTTP, against fixture pages in a real headless Chromium.

mod backend;
mod cost;
mod http;
mod inline_app;
mod inline_host;
mod inline_seams;
mod live;
mod panel_browser;
mod panel_cards;
mod panel_handoff;
mod panel_page;
mod panel_restart;
mod panel_session;
mod panel_settings;
mod panel_windows;
mod passwords;
mod presence;
mod revive;
mod secrecy;
mod settings;
mod stdio;
mod support;
mod webdriver;
