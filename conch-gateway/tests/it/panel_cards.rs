//! Question cards the gateway's agent can't be made to raise here, drawn and answered in
//! the real panel (issue 28, LAUNCH-5, PERM-13): the browser's download failing (this
//! machine has its Chromium, and a download would leave 127.0.0.1) and a card for
//! untrusted content (the gateway has no taint guard; an embedder gives one). The panel
//! is the real one, signed in to a real gateway; only the socket's `question` and
//! `questionClosed` events, in the board's own wire form (its golden snapshot), and the
//! person's answers to them are stood in for, in the page, before its scripts run. The
//! gateway's side of both cards is proved by cards.rs and conch-tools' tests.

use serde_json::{Value, json};

use crate::panel_browser::Session;

/// Wraps the page's WebSocket: `window.__standIn.deliver(event)` hands the panel's live
/// socket an event as if the gateway sent it, and the person's answer to a card delivered
/// so is kept in `window.__standIn.sent` instead of reaching the gateway (whose board
/// never had that card).
const STAND_IN: &str = r#"(() => {
  const Real = window.WebSocket;
  const sockets = [];
  const ours = new Set();
  const standIn = {
    sent: [],
    deliver(event) {
      ours.add(event.id);
      for (const socket of sockets) {
        socket.dispatchEvent(new MessageEvent('message', { data: JSON.stringify(event) }));
      }
    },
  };
  window.WebSocket = class extends Real {
    constructor(...args) {
      super(...args);
      sockets.push(this);
    }
    send(data) {
      let command = null;
      try { command = JSON.parse(data); } catch { command = null; }
      if (command && command.type === 'answer' && ours.has(command.id)) {
        standIn.sent.push(command);
        return;
      }
      super.send(data);
    }
  };
  window.__standIn = standIn;
})();"#;

/// The panel watching the agent's basic.html, with the stand-in in place.
async fn panel() -> (conch_fixtures::FixtureServer, Session) {
    let (pages, session, _page) = Session::watching("basic.html", &[]).await;
    session.person.before_each_page(STAND_IN).await;
    session.open("conversation=mcp-stdio").await;
    assert_eq!(
        session.js("return typeof window.__standIn").await,
        json!("object")
    );
    (pages, session)
}

/// Delivers `card`, presses `label` on it, and checks the answer that went out and that
/// the card goes once the gateway says it closed; `state` names it for axe-core.
async fn draw_and_answer(session: &Session, card: Value, needle: &str, label: &str, choice: &str) {
    let id = card["id"].as_str().expect("an id").to_owned();
    session
        .js(&format!("window.__standIn.deliver({card}); return true;"))
        .await;
    session
        .wait_until(
            &format!(
                "document.querySelector('#cards section[data-question=\"{id}\"]') !== null && document.getElementById('no-cards').hidden"
            ),
            "the card drawn",
        )
        .await;
    session
        .person
        .assert_accessible(&format!("with the card {needle:?}"))
        .await;
    session.answer_card(needle, label).await;
    session
        .wait_until(
            "window.__standIn.sent.length > 0",
            "the person's answer to go out",
        )
        .await;
    let sent = session.js("return window.__standIn.sent.shift()").await;
    assert_eq!(
        sent,
        json!({ "type": "answer", "id": id, "choice": choice })
    );
    let pressed = session
        .js(&format!(
            "return [...document.querySelectorAll('#cards section[data-question=\"{id}\"] button')].every(b => b.disabled)"
        ))
        .await;
    assert_eq!(
        pressed,
        json!(true),
        "the answered card's buttons are spent"
    );
    let closed = json!({ "how": "answered", "id": id, "type": "questionClosed" });
    session
        .js(&format!("window.__standIn.deliver({closed}); return true;"))
        .await;
    session
        .wait_until(
            "document.querySelectorAll('#cards section').length === 0 && !document.getElementById('no-cards').hidden",
            "the card gone once closed",
        )
        .await;
}

/// LAUNCH-5, LIVE-10 (issue 28): the download-failed card is drawn with the fetcher's
/// sentence, no site, and exactly one button, Try again; pressing it answers `tryAgain`;
/// no axe-core violation.
#[tokio::test(flavor = "multi_thread")]
async fn launch_5_the_download_failed_card_is_drawn_and_answered_in_the_panel() {
    let (_pages, session) = panel().await;
    let sentence = "Conch couldn't download Chromium: the download server can't be reached. Check the connection and try again.";
    let card = json!({
        "choices": [{ "id": "tryAgain", "label": "Try again" }],
        "conversation": "mcp-stdio",
        "id": "q901",
        "kind": "browserDownload",
        "lendsSignIn": false,
        "text": sentence,
        "tool": "browser-download",
        "type": "question",
    });
    let id = "q901";
    let check = async {
        session
            .wait_until(
                &format!(
                    "document.querySelector('#cards section[data-question=\"{id}\"]') !== null"
                ),
                "the card drawn",
            )
            .await;
        let drawn = session
            .js(&format!(
                "const c = document.querySelector('#cards section[data-question=\"{id}\"]'); \
                 return [c.textContent, [...c.querySelectorAll('button')].map(b => b.textContent)];"
            ))
            .await;
        let text = drawn[0].as_str().unwrap_or_default();
        assert!(
            text.contains("The browser could not be downloaded"),
            "{text}"
        );
        assert!(text.contains(sentence), "{text}");
        assert!(!text.contains("Site"), "no site on it: {text}");
        assert_eq!(drawn[1], json!(["Try again"]), "exactly one button");
    };
    // Drawn (and checked as the person sees it) before it is answered.
    session
        .js(&format!("window.__standIn.deliver({card}); return true;"))
        .await;
    check.await;
    draw_and_answer(&session, card, "download Chromium", "Try again", "tryAgain").await;
    session.finish().await;
}

/// PERM-13, LIVE-10 (issue 28): a site question about a page written by someone else
/// carries the taint guard's note, drawn on the card beside the site and its three
/// buttons; No answers `no`; no axe-core violation.
#[tokio::test(flavor = "multi_thread")]
async fn perm_13_a_card_for_untrusted_content_is_drawn_and_answered_in_the_panel() {
    let (_pages, session) = panel().await;
    let note = "This page was written by someone else.";
    let card = json!({
        "choices": [
            { "id": "thisChat", "label": "This chat" },
            { "id": "always", "label": "Always" },
            { "id": "no", "label": "No" },
        ],
        "conversation": "mcp-stdio",
        "id": "q902",
        "kind": "site",
        "lendsSignIn": false,
        "site": "shop.test",
        "taintNote": note,
        "text": "Let Conch use shop.test?",
        "tool": "browser_click",
        "type": "question",
    });
    session
        .js(&format!("window.__standIn.deliver({card}); return true;"))
        .await;
    let drawn = session
        .wait_until(
            "(() => { const c = document.querySelector('#cards section[data-question=\"q902\"]'); \
               return c && [c.querySelector('.taint')?.textContent, c.innerText, [...c.querySelectorAll('button')].map(b => b.textContent)]; })()",
            "the card for untrusted content drawn",
        )
        .await;
    assert_eq!(drawn[0], json!(note), "the note is on the card");
    let text = drawn[1].as_str().unwrap_or_default();
    assert!(text.contains("shop.test"), "{text}");
    assert_eq!(drawn[2], json!(["This chat", "Always", "No"]));
    draw_and_answer(&session, card, "shop.test", "No", "no").await;
    session.finish().await;
}
