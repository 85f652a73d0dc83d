//! The panel when the gateway fails under it (issue 28), in a real browser: the list of
//! conversations keeps refreshing after a failed fetch, and after a gateway restart (the
//! panel's session no longer known) the panel stops retrying, says so, and offers the new
//! sign-in, which leads back to the conversation it showed.

use std::time::Duration;

use serde_json::json;

use crate::live::wait_for_line;
use crate::panel_browser::{Session, launch};

/// The text of the list's entry for the stdio conversation.
const LISTED_TITLE: &str =
    "document.querySelector('#conversations .conversation-title')?.textContent";

/// LIVE-10 (issue 28): one failed fetch of the list of conversations no longer stops it:
/// the panel says the list may be out of date, keeps the last list, and the next fetch
/// shows the page the agent opened since. No axe-core violation meanwhile.
#[tokio::test(flavor = "multi_thread")]
async fn live_10_the_list_of_conversations_keeps_refreshing_after_a_failed_fetch() {
    let (pages, mut session, _page) = Session::watching("basic.html", &[]).await;
    session
        .wait_until(
            &format!("{LISTED_TITLE} === 'Basic page'"),
            "the list to show the agent's page",
        )
        .await;
    // The next fetch of the list fails, as when the network drops for a moment.
    session
        .js(
            "const real = window.fetch; let failing = 1; \
             window.fetch = (what, options) => String(what).includes('/api/browser/conversations') && failing-- > 0 \
               ? Promise.reject(new TypeError('Failed to fetch')) : real(what, options); \
             return true;",
        )
        .await;
    session
        .wait_until(
            "!document.getElementById('conversations-stale').hidden",
            "the panel to say the list may be out of date",
        )
        .await;
    let listed = session.js(&format!("return {LISTED_TITLE}")).await;
    assert_eq!(listed, json!("Basic page"), "the last list stays");
    session
        .person
        .assert_accessible("with the list out of date")
        .await;
    session.agent.open(&pages.url("live.html")).await;
    session
        .wait_until(
            &format!(
                "{LISTED_TITLE} === 'Live' && document.getElementById('conversations-stale').hidden"
            ),
            "the list to refresh after the failed fetches",
        )
        .await;
    session.finish().await;
}

/// LIVE-18, AMB-2 (issue 28): the gateway under a panel window stops and starts again on
/// the same port. While it is down the panel keeps trying and says the gateway is not
/// answering; once it is back (knowing nothing of the old session) the panel stops
/// retrying and shows the sign-in page, which says the sign-in ended and offers a new
/// link (no axe-core violation); that link, printed by the new gateway, leads back to the
/// conversation, watched again.
#[tokio::test(flavor = "multi_thread")]
async fn live_18_after_a_gateway_restart_the_panel_says_so_and_offers_the_new_sign_in() {
    let port = std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
        .to_string();
    let (_pages, session, _page) = Session::watching("basic.html", &["--panel-port", &port]).await;
    let Session {
        agent,
        person,
        door,
        home,
        ..
    } = session;
    assert!(
        agent.finish_within(Duration::from_secs(30)).await,
        "the gateway stops when its agent's stdin closes"
    );

    // Down: the panel keeps its page and keeps trying.
    let watch = Watch { person: &person };
    watch
        .until(
            "location.pathname === '/' && document.getElementById('connection').textContent.includes('not answering') \
             && !document.getElementById('conversations-stale').hidden",
            "the panel to say the gateway is not answering",
        )
        .await;

    // Back, on the same port and home, with no memory of the old session.
    let (agent, _link, mut stderr) = launch(home.path(), &["--panel-port", &port], &[]).await;
    watch
        .until(
            "location.pathname === '/signin' && document.body.dataset.ready === '1' \
             && !document.getElementById('session-ended').hidden",
            "the sign-in page saying the sign-in ended",
        )
        .await;
    let text = watch.text().await;
    assert!(text.contains("sign-in has ended"), "{text}");
    assert!(text.contains("Print a new sign-in link"), "{text}");
    person
        .assert_accessible("on the sign-in page after a restart")
        .await;

    // The new sign-in: asked for from the page, printed by the new gateway.
    person
        .client
        .find(fantoccini::Locator::Id("print-link"))
        .await
        .expect("the sign-in page's button")
        .click()
        .await
        .expect("the button can be clicked");
    let line = wait_for_line(&mut stderr, "sign in at ").await;
    let link = line
        .split("sign in at ")
        .nth(1)
        .expect("the new link")
        .trim()
        .to_owned();
    assert!(link.starts_with(&door), "{link}");
    person.client.goto(&link).await.expect("the link opens");
    watch
        .until(
            "location.search === '?conversation=mcp-stdio' && document.getElementById('connection').textContent.startsWith('Watching')",
            "the panel back on the conversation, watching",
        )
        .await;
    person.finish().await;
    agent.finish().await;
}

/// Waits on the person's browser without a [`Session`] (its gateway restarts).
struct Watch<'a> {
    person: &'a crate::webdriver::Person,
}

impl Watch<'_> {
    /// Waits up to 30 s until `condition` is truthy in the page.
    async fn until(&self, condition: &str, what: &str) {
        let script = format!("return Boolean({condition});");
        let started = std::time::Instant::now();
        loop {
            // A page that is navigating may refuse the script for a moment.
            if let Ok(value) = self.person.client.execute(&script, vec![]).await
                && value == json!(true)
            {
                return;
            }
            if started.elapsed() > Duration::from_secs(30) {
                let text = self.text().await;
                panic!("waited 30 s for {what} ({condition}); the page says:\n{text}");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The text of the page's body.
    async fn text(&self) -> String {
        self.person
            .client
            .execute("return document.body.innerText", vec![])
            .await
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    }
}
