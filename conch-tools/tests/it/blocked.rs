//! Blocked requests told to the right conversation (NET-10, issue 12): two conversations
//! share one browser and one guard, and a refusal is told only to the conversation whose
//! tab made the request, in words that name no address and no port.

use std::time::Duration;

use conch_browser::guard::{BLOCKED_SENTENCE, GuardConfig};
use conch_fixtures::FixtureServer;
use conch_fixtures::Response;
use conch_policy::NetSettings;
use conch_tools::{Choice, Mode};
use serde_json::json;
use tokio::net::TcpListener;

use crate::support::{Recorder, setup, tools};

/// Whether `text` names `port` as a number of its own (not inside a longer number).
fn names_port(text: &str, port: u16) -> bool {
    let port = port.to_string();
    text.match_indices(&port).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + port.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_digit()) && !after.is_some_and(|c| c.is_ascii_digit())
    })
}

/// NET-10 (issue 12): conversation "a" opens a page that asks the gateway's own port for
/// two things (plain http and a tunnel for https) while conversation "b" waits on a
/// page of its own. The guard refuses both; only a's result says a request was blocked,
/// b's says nothing of it, and neither names the address or the port.
#[tokio::test(flavor = "multi_thread")]
async fn net_10_a_blocked_request_is_told_only_to_the_conversation_whose_tab_made_it() {
    let server = FixtureServer::start().await.unwrap();
    // The gateway's stand-in: the guard refuses its port under every setting (NET-1).
    let gateway = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let g = gateway.local_addr().unwrap().port();
    let mut setup = setup();
    setup.config.guard = Some(GuardConfig::new(NetSettings {
        allow_localhost: true,
        ..NetSettings::for_gateway_port(g)
    }));
    server.route(
        "blocker.html",
        Response::html(&format!(
            "<title>Blocker</title><p>Asks the gateway.</p><script>\
             fetch('http://127.0.0.1:{g}/steal').catch(() => {{}});\
             fetch('https://127.0.0.1:{g}/steal').catch(() => {{}});\
             </script>"
        )),
    );
    let asker = Recorder::answering(Choice::No, Choice::No);
    let tools = tools(&setup, asker);
    let a = tools.chat("a", Mode::PlanOnly);
    let b = tools.chat("b", Mode::PlanOnly);
    let opened = b
        .call("browser_open", &json!({ "url": server.url("basic.html") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text());
    assert!(
        !opened.text().contains(BLOCKED_SENTENCE),
        "{}",
        opened.text()
    );

    // b waits while a's page is refused.
    let waiting = tokio::spawn({
        let b = b.clone();
        async move { b.call("browser_wait", &json!({ "seconds": 4 })).await }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let blocked = a
        .call(
            "browser_open",
            &json!({ "url": server.url("blocker.html") }),
        )
        .await;
    // Give the refused requests time to come back to the page, within b's wait.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let waited = waiting.await.unwrap();

    assert!(!blocked.is_error, "{}", blocked.text());
    assert!(
        blocked.text().contains(BLOCKED_SENTENCE),
        "a's own page was refused, and a was not told: {}",
        blocked.text()
    );
    assert!(
        !waited.text().contains(BLOCKED_SENTENCE),
        "b was told of a's refusal: {}",
        waited.text()
    );
    for said in [blocked.text(), waited.text()] {
        assert!(!names_port(&said, g), "a result names the port: {said}");
    }
    // Asked again, a hears nothing new.
    let again = a.call("browser_read", &json!({})).await;
    assert!(!again.text().contains(BLOCKED_SENTENCE), "{}", again.text());
    tools.browser().shutdown().await;
}
