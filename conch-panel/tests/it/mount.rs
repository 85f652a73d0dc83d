//! An embedder's own axum app with the panel mounted (issue 28, LIVE-18): the sign-in
//! page for anyone on the panel's host, and no API without a session.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use conch_browser::{Browser, BrowserConfig, Home};
use conch_panel::Panel;
use conch_panel::cards::{Board, PanelAsker};
use conch_panel::live::Live;
use conch_tools::{Tools, ToolsConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// `GET path` on 127.0.0.1:`port` with `Host: host`; the status and the body.
async fn get_text(port: u16, host: &str, path: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("the app answers");
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("the request is sent");
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .await
        .expect("the answer is read");
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// Issue 28, LIVE-18: an app of the embedder's, with a route of its own, mounts the
/// person's door with one call (`conch_panel::mount`): a browser without a session gets
/// the sign-in page, the API answers 401 without a session and 403 on another host, and
/// the app's own route still answers.
#[tokio::test(flavor = "multi_thread")]
async fn live_18_an_embedder_mounts_the_panel_with_one_call() {
    let dir = tempfile::tempdir().expect("a temp home");
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("a port");
    let port = listener.local_addr().expect("its port").port();

    let board = Board::new(Duration::from_secs(5));
    let asker = Arc::new(PanelAsker {
        board: board.clone(),
        link: format!("http://127.0.0.1:{port}/"),
    });
    let browser = Browser::new(BrowserConfig::new(Home::new(dir.path())));
    let tools = Tools::new(browser.clone(), ToolsConfig::new(asker));
    let panel = Panel::new(port, Live::new(browser, board));
    panel.set_tools(tools);
    let own = Router::new().route("/hello", get(|| async { "the embedder's own route" }));
    let app = conch_panel::mount(own, &panel);
    let served = tokio::spawn(async move { axum::serve(listener, app).await });

    let host = format!("127.0.0.1:{port}");
    let (status, page) = get_text(port, &host, "/").await;
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("/panel/signin.js"),
        "not the sign-in page: {page}"
    );

    let (status, said) = get_text(port, &host, "/api/browser/conversations").await;
    assert_eq!(status, 401, "{said}");
    assert!(said.starts_with("Unauthorized"), "{said}");
    let (status, said) = get_text(port, &host, "/api/browser/settings").await;
    assert_eq!(status, 401, "{said}");
    let (status, _) = get_text(port, "rebound.test", "/api/browser/conversations").await;
    assert_eq!(status, 403, "a foreign Host");

    let (status, said) = get_text(port, &host, "/hello").await;
    assert_eq!((status, said.as_str()), (200, "the embedder's own route"));
    assert!(panel.signin_link().is_some(), "a sign-in link to print");
    served.abort();
}
