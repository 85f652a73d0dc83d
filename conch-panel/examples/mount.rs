//! The panel in a tiny axum app of its own (issue 28): the person's door mounted with
//! one call, beside a route of the app's. Run with
//! `cargo run -p conch-panel --example mount -- [CONCH_HOME]`, then open the sign-in link
//! it prints.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use conch_browser::{Browser, BrowserConfig, Home};
use conch_panel::Panel;
use conch_panel::cards::{Board, PanelAsker};
use conch_panel::live::Live;
use conch_tools::{Tools, ToolsConfig};

/// The embedder's app with the panel mounted for the browser of `home`, listening on
/// `port` of 127.0.0.1; gives the app and the panel (for its sign-in link).
fn app(home: Home, port: u16) -> (Router, Panel) {
    let board = Board::new(Duration::from_secs(300));
    let asker = Arc::new(PanelAsker {
        board: board.clone(),
        link: format!("http://127.0.0.1:{port}/"),
    });
    let browser = Browser::new(BrowserConfig::new(home));
    let tools = Tools::new(browser.clone(), ToolsConfig::new(asker));
    let panel = Panel::new(port, Live::new(browser, board));
    panel.set_tools(tools);
    let own = Router::new().route("/hello", get(|| async { "the embedder's own route\n" }));
    (conch_panel::mount(own, &panel), panel)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let home = match std::env::args_os().nth(1) {
        Some(dir) => Home::new(dir),
        None => Home::new(std::env::temp_dir().join("conch-panel-example")),
    };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let port = listener.local_addr()?.port();
    let (app, panel) = app(home, port);
    if let Some(link) = panel.signin_link() {
        eprintln!("sign in to the panel at {link}");
    }
    axum::serve(listener, app).await
}
