//! A payment handoff in two real panel windows (issue 28, HAND-5, HAND-8): it outlives
//! everything a person's windows do to their sockets and ends only on "I'm done".

use std::time::Duration;

use serde_json::json;

use crate::panel_browser::Session;

/// Keeps every WebSocket the page opens in `window.__sockets`, so the test can drop one
/// as a lost network would.
const SOCKETS: &str = r#"(() => {
  const Real = window.WebSocket;
  window.__sockets = [];
  window.WebSocket = class extends Real {
    constructor(...args) {
      super(...args);
      window.__sockets.push(this);
    }
  };
})();"#;

/// The handoff's banner is up with its reason.
const BANNER: &str = "!document.getElementById('handoff').hidden && document.getElementById('handoff-reason').textContent === 'Please pay for the order.' && document.getElementById('connection').textContent.startsWith('Watching')";

/// HAND-5, HAND-8, LIVE-10 (issue 28): a payment handoff waits, shown in two panel
/// windows, while the first goes to Passwords and back and reloads, and the second drops
/// its socket, then takes over with a click into the page and closes: well past the
/// takeover's grace the handoff still waits in the first window, and only its "I'm done"
/// ends it, which the agent's result says. No axe-core violation with the banner up.
#[tokio::test(flavor = "multi_thread")]
async fn hand_5_a_payment_handoff_survives_two_panel_windows_and_ends_only_on_im_done() {
    let (_pages, mut session, _page) = Session::watching("basic.html", &[]).await;
    session.person.before_each_page(SOCKETS).await;
    let client = session.person.client.clone();
    let first = client.window().await.expect("a window");
    session.open("conversation=mcp-stdio").await;
    let handoff = session
        .agent
        .send_request(
            "tools/call",
            json!({ "name": "browser_handoff", "arguments": { "reason": "Please pay for the order." } }),
        )
        .await;
    session
        .wait_until(
            &format!("{BANNER} && !document.getElementById('stop').hidden"),
            "the handoff's banner in the first window, with Stop (the turn runs)",
        )
        .await;
    session
        .person
        .assert_accessible("with the handoff's banner")
        .await;

    // The second window watches too.
    let second = session.person.second_window().await;
    // Each window (a DevTools target of its own) gets the script for its pages.
    session.person.before_each_page(SOCKETS).await;
    session.open("conversation=mcp-stdio").await;
    session
        .wait_until(BANNER, "the handoff's banner in the second window")
        .await;

    // The first window goes to Passwords and back, then reloads.
    client
        .switch_to_window(first.clone())
        .await
        .expect("the first window");
    session.click("a[href='/passwords']").await;
    session
        .wait_until(
            "location.pathname === '/passwords' && document.querySelector('h1')?.textContent === 'Passwords'",
            "the Passwords page",
        )
        .await;
    client.back().await.expect("back");
    session
        .wait_until(BANNER, "the banner again after Passwords and back")
        .await;
    client.refresh().await.expect("a reload");
    session
        .wait_until(BANNER, "the banner again after a reload")
        .await;
    // The page is still, yet the reloaded window shows it at once.
    session.wait_for_frame().await;

    // The second window loses its socket, comes back, takes over by clicking into the
    // page, and closes.
    client
        .switch_to_window(second.clone())
        .await
        .expect("the second window");
    session
        .js("window.__sockets.at(-1).close(); return true;")
        .await;
    session
        .wait_until(
            &format!("window.__sockets.length >= 2 && window.__sockets.at(-1).readyState === 1 && {BANNER}"),
            "the second window's socket back, the banner still up",
        )
        .await;
    session.wait_for_frame().await;
    session.click("#live-canvas").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    client
        .close_window()
        .await
        .expect("the second window closes");
    client
        .switch_to_window(first)
        .await
        .expect("the first window");

    // Well past a takeover's grace, the handoff still waits.
    tokio::time::sleep(Duration::from_secs(6)).await;
    session
        .wait_until(BANNER, "the banner still up after the second window closed")
        .await;
    let call = tokio::time::timeout(Duration::from_millis(100), async {
        session.answer_to(handoff).await
    })
    .await;
    assert!(call.is_err(), "the handoff ended by itself: {call:?}");

    session.click("#done").await;
    let answer = session.answer_to(handoff).await;
    assert!(answer.to_string().contains("I'm done"), "{answer}");
    session
        .wait_until(
            "document.getElementById('handoff').hidden && document.getElementById('stop').hidden",
            "the banner and Stop gone after I'm done",
        )
        .await;
    session.person.assert_accessible("after I'm done").await;
    session.finish().await;
}
