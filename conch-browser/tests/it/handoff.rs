//! Handoffs against a real headless Chromium (HAND-2 … HAND-5, HAND-9, AMB-20): a gate is
//! seen for what it is, a sign-in handoff ends by itself once the person is through and
//! their hands are off the page, a payment waits for I'm done, Stop ends any.

use std::time::Duration;

use conch_browser::handoff::{HandoffEnd, LOOK_EVERY, hand_off};
use conch_browser::page::gate::look;
use conch_browser::{Browser, BrowserConfig, Conversation, Home};
use conch_fixtures::FixtureServer;

struct Lab {
    _dir: tempfile::TempDir,
    _server: FixtureServer,
    base: String,
    browser: Browser,
}

async fn lab() -> Lab {
    let server = FixtureServer::start().await.expect("fixture server");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
    config.download = None;
    // The fixtures are served on loopback, which the guard refuses; containment has its
    // own tests (tests/it/guard.rs).
    config.guard = None;
    Lab {
        base: server.url(""),
        _server: server,
        _dir: dir,
        browser: Browser::new(config),
    }
}

impl Lab {
    async fn open(&self, page: &str) -> Conversation {
        let chat = self.browser.conversation("c1");
        chat.open(&format!("{}{page}", self.base))
            .await
            .expect("the page opens");
        chat
    }
}

/// The person moves the page on, as their click on the form's button would.
async fn person_goes_to(chat: &Conversation, page: &str) {
    chat.wheel().person_input();
    let _ = chat
        .evaluate(&format!("location.href = {page:?}; true"))
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn hand_2_sign_in_and_code_pages_are_gates_an_account_or_payment_page_is_not() {
    let lab = lab().await;
    let chat = lab.open("signin-gate.html").await;
    let seen = look(&chat.page().await.unwrap()).await.expect("a look");
    assert!(seen.password_visible && seen.is_gate(), "{seen:?}");
    for (page, gate) in [
        ("2fa-gate.html", true),
        ("account.html", false),
        ("payment.html", false),
    ] {
        let chat = lab.open(page).await;
        let seen = look(&chat.page().await.unwrap()).await.expect("a look");
        assert_eq!(seen.is_gate(), gate, "{page}: {seen:?}");
    }
    let chat = lab.open("captcha-gate.html").await;
    let page = chat.page().await.unwrap();
    assert!(!look(&page).await.unwrap().captcha_token);
    chat.evaluate("document.querySelector('textarea').value = 'solved-token'; true")
        .await
        .unwrap();
    let seen = look(&page).await.unwrap();
    assert!(seen.captcha_token, "{seen:?}");
    assert!(
        !format!("{seen:?}").contains("solved-token"),
        "the token's value left the page"
    );
    lab.browser.shutdown().await;
}

/// HAND-3, HAND-4: a sign-in, then a code page (still a gate), then the account page; the
/// handoff waits while the person types there and ends once their hands are off.
#[tokio::test(flavor = "multi_thread")]
async fn hand_3_a_sign_in_handoff_ends_by_itself_only_when_the_person_is_through() {
    let lab = lab().await;
    let chat = lab.open("signin-gate.html").await;
    let waiting = tokio::spawn({
        let chat = chat.clone();
        async move { hand_off(&chat, "Sign in to Harbour Mail", LOOK_EVERY).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let wheel = chat.wheel();
    assert!(wheel.state().handoff.is_some(), "the handoff is open");
    wheel.take_over();
    person_goes_to(&chat, "2fa-gate.html").await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(!waiting.is_finished(), "a code page is still a gate");
    person_goes_to(&chat, "account.html").await;
    // HAND-4: typing every 300 ms on the next page keeps it open.
    for _ in 0..12 {
        wheel.person_input();
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert!(
        !waiting.is_finished(),
        "the wheel was taken back mid-typing"
    );
    let handed = tokio::time::timeout(Duration::from_secs(8), waiting)
        .await
        .expect("the handoff ends once the hands are off")
        .unwrap()
        .expect("the handoff ran");
    assert_eq!(handed.end, HandoffEnd::GotThrough);
    assert!(handed.gate && handed.end.auto());
    let state = wheel.state();
    assert!(state.handoff.is_none() && !state.person_drives, "{state:?}");
    assert!(!wheel.agents_turn().await, "the agent's turn is back");
    lab.browser.shutdown().await;
}

/// HAND-3: a captcha that leaves its token in the page is behind the person.
#[tokio::test(flavor = "multi_thread")]
async fn hand_3_a_captcha_token_ends_the_handoff() {
    let lab = lab().await;
    let chat = lab.open("captcha-gate.html").await;
    let waiting = tokio::spawn({
        let chat = chat.clone();
        async move { hand_off(&chat, "Solve the check", LOOK_EVERY).await }
    });
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(!waiting.is_finished(), "nothing was solved yet");
    chat.evaluate("document.querySelector('textarea').value = 'token'; true")
        .await
        .unwrap();
    let handed = tokio::time::timeout(Duration::from_secs(6), waiting)
        .await
        .expect("the token ends the handoff")
        .unwrap()
        .unwrap();
    assert_eq!(handed.end, HandoffEnd::GotThrough);
    lab.browser.shutdown().await;
}

/// HAND-5: a payment is no gate: it still waits after 10 s, and I'm done ends it.
#[tokio::test(flavor = "multi_thread")]
async fn hand_5_a_payment_handoff_waits_for_im_done() {
    let lab = lab().await;
    let chat = lab.open("payment.html").await;
    let waiting = tokio::spawn({
        let chat = chat.clone();
        async move { hand_off(&chat, "Pay for the order", LOOK_EVERY).await }
    });
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(!waiting.is_finished(), "a payment handoff ended by itself");
    chat.wheel().hand_back();
    let handed = tokio::time::timeout(Duration::from_secs(2), waiting)
        .await
        .expect("I'm done ends it")
        .unwrap()
        .unwrap();
    assert_eq!(handed.end, HandoffEnd::Done);
    assert!(!handed.gate && !handed.end.auto());
    lab.browser.shutdown().await;
}

/// HAND-9: Stop ends a waiting handoff, and so does the conversation going away.
#[tokio::test(flavor = "multi_thread")]
async fn hand_9_stop_ends_a_waiting_handoff() {
    let lab = lab().await;
    let chat = lab.open("signin-gate.html").await;
    let waiting = tokio::spawn({
        let chat = chat.clone();
        async move { hand_off(&chat, "Sign in", LOOK_EVERY).await }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    chat.wheel().stop();
    let handed = tokio::time::timeout(Duration::from_secs(2), waiting)
        .await
        .expect("Stop ends it")
        .unwrap()
        .unwrap();
    assert_eq!(handed.end, HandoffEnd::Stopped);

    let waiting = tokio::spawn({
        let chat = chat.clone();
        async move { hand_off(&chat, "Sign in", LOOK_EVERY).await }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    lab.browser.end_conversation("c1").await;
    let handed = tokio::time::timeout(Duration::from_secs(2), waiting)
        .await
        .expect("an ended conversation ends it")
        .unwrap()
        .unwrap();
    assert_eq!(handed.end, HandoffEnd::Stopped);
    lab.browser.shutdown().await;
}
