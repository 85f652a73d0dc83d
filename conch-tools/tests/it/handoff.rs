//! browser_handoff and the wheel through the tools, against a real browser (HAND-1,
//! HAND-6, HAND-7, HAND-8): the person is notified with the link, a sign-in handoff ends
//! by itself and says so, and the agent's call waits while the person drives.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use conch_fixtures::FixtureServer;
use conch_tools::{Choice, Mode, Notification, Notifier, Tools, ToolsConfig};
use serde_json::json;

use crate::support::{Recorder, setup};

/// Keeps every notification.
#[derive(Debug, Default)]
struct Told(Mutex<Vec<Notification>>);

impl Notifier for Told {
    fn notify(&self, notification: &Notification) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(notification.clone());
    }
}

fn tools_with(setup: &crate::support::Setup, told: Arc<Told>) -> Tools {
    let mut config = ToolsConfig::new(Recorder::answering(Choice::No, Choice::No));
    config.net.allow_localhost = true;
    config.notifier = Some(told);
    config.panel_link = Some("http://127.0.0.1:7391/chat".to_owned());
    Tools::new(conch_browser::Browser::new(setup.config.clone()), config)
}

/// HAND-1, HAND-6, HAND-7: the person is told, with the link and the Take over action;
/// a sign-in ends by itself once they are through and the agent reads that and the page.
#[tokio::test(flavor = "multi_thread")]
async fn hand_1_a_handoff_notifies_waits_and_ends_by_itself_at_a_gate() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let told = Arc::new(Told::default());
    let tools = tools_with(&setup, Arc::clone(&told));
    let chat = tools.chat("signin", Mode::Ask);
    chat.call(
        "browser_open",
        &json!({ "url": server.url("signin-gate.html") }),
    )
    .await;
    let waiting = tokio::spawn({
        let chat = chat.clone();
        async move {
            chat.call(
                "browser_handoff",
                &json!({ "reason": "Sign in to Harbour Mail." }),
            )
            .await
        }
    });
    tokio::time::sleep(Duration::from_millis(800)).await;
    let notes = told
        .0
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    assert_eq!(notes.len(), 1, "{notes:?}");
    let note = &notes[0];
    assert!(note.gate, "{note:?}");
    assert_eq!(note.action, "Take over");
    assert_eq!(
        note.link.as_deref(),
        Some("http://127.0.0.1:7391/chat?browser=1&conversation=signin")
    );
    assert!(note.body.contains("carries on by itself"), "{note:?}");
    assert!(
        !waiting.is_finished(),
        "the step did not wait for the person"
    );
    // The person signs in (the live view's input would do this).
    let browser = tools.browser();
    let wheel = browser.wheel("signin");
    wheel.take_over();
    wheel.person_input();
    let page = browser.conversation("signin");
    let _ = page
        .evaluate(&format!(
            "location.href = {:?}; true",
            server.url("account.html")
        ))
        .await;
    let result = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("the handoff ends by itself")
        .unwrap();
    let text = result.text();
    assert!(!result.is_error, "{text}");
    assert!(
        text.contains("You got through, so Conch carried on"),
        "{text}"
    );
    assert!(
        text.contains("Welcome back"),
        "the page as the person left it: {text}"
    );
    tools.browser().shutdown().await;
}

/// HAND-8: while the person drives, the agent's next call waits for hand back, and its
/// result says the person used the browser.
#[tokio::test(flavor = "multi_thread")]
async fn hand_8_an_agent_call_during_takeover_returns_after_hand_back() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools_with(&setup, Arc::new(Told::default()));
    let chat = tools.chat("drive", Mode::Ask);
    chat.call("browser_open", &json!({ "url": server.url("basic.html") }))
        .await;
    let wheel = tools.browser().wheel("drive");
    wheel.take_over();
    let reading = tokio::spawn({
        let chat = chat.clone();
        async move { chat.call("browser_read", &json!({})).await }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        !reading.is_finished(),
        "the read went on while the person drove"
    );
    wheel.hand_back();
    let read = tokio::time::timeout(Duration::from_secs(5), reading)
        .await
        .expect("the read returns after hand back")
        .unwrap();
    assert!(
        read.text().contains("The person used the browser"),
        "{}",
        read.text()
    );
    tools.browser().shutdown().await;
}

/// HAND-9: Stop during a handoff ends the step, which says so.
#[tokio::test(flavor = "multi_thread")]
async fn hand_9_stop_during_a_handoff_returns_stopped() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools_with(&setup, Arc::new(Told::default()));
    let chat = tools.chat("pay", Mode::Ask);
    chat.call(
        "browser_open",
        &json!({ "url": server.url("payment.html") }),
    )
    .await;
    let waiting = tokio::spawn({
        let chat = chat.clone();
        async move {
            chat.call(
                "browser_handoff",
                &json!({ "reason": "Pay for the order." }),
            )
            .await
        }
    });
    tokio::time::sleep(Duration::from_millis(800)).await;
    tools.browser().wheel("pay").stop();
    let result = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("Stop ends the handoff")
        .unwrap();
    assert!(result.text().starts_with("Stopped"), "{}", result.text());
    tools.browser().shutdown().await;
}
