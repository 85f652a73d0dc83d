//! Bot checks after a navigation (BOT-1 … BOT-5) and cookie banners (LAUNCH-11), on the
//! look-alike fixture pages, with short injected waits so the tests stay fast.

use std::time::Duration;

use conch_browser::page::botcheck::{self, BotWait};
use conch_browser::page::consent;
use conch_fixtures::Response;
use conch_policy::{BotCheck, ChallengeWait, Vendor};
use serde_json::json;

use crate::act::{lab, quick};

fn short() -> BotWait {
    BotWait {
        limit: Duration::from_millis(1500),
        every: Duration::from_millis(100),
    }
}

/// BOT-1: each vendor's look-alike page is recognised; an ordinary page is not.
#[tokio::test(flavor = "multi_thread")]
async fn bot_1_vendors_recognised() {
    let lab = lab().await;
    let wait = BotWait {
        limit: Duration::from_millis(200),
        every: Duration::from_millis(100),
    };
    for (page, vendor) in [
        ("bot-stay.html", Vendor::Cloudflare),
        ("bot-ddosguard.html", Vendor::DdosGuard),
        ("bot-perimeterx.html", Vendor::PerimeterX),
        ("bot-datadome.html", Vendor::DataDome),
    ] {
        let session = lab.open(page).await;
        let outcome = botcheck::after_navigation(&session, None, wait)
            .await
            .unwrap();
        assert_eq!(outcome.check, BotCheck::Challenge(vendor), "{page}");
    }
    let session = lab.open("basic.html").await;
    let outcome = botcheck::after_navigation(&session, None, wait)
        .await
        .unwrap();
    assert_eq!((outcome.check, outcome.note), (BotCheck::None, None));
    lab.browser.shutdown().await;
}

/// BOT-2: a check that passes by itself within the wait is waited out, and the note says
/// it passed; BOT-3: one that stays ends the wait with the handoff advice.
#[tokio::test(flavor = "multi_thread")]
async fn bot_2_pass_is_waited_out_and_stay_hands_off() {
    let lab = lab().await;
    let session = lab.open("bot-pass.html?after=400").await;
    // A check that passes after 400 ms is waited out however slow the machine: the wait
    // may last up to 10 s, and ends as soon as the page has moved on.
    let patient = BotWait {
        limit: Duration::from_secs(10),
        every: Duration::from_millis(100),
    };
    let outcome = botcheck::after_navigation(&session, None, patient)
        .await
        .unwrap();
    assert_eq!(outcome.wait, ChallengeWait::Passed);
    assert!(outcome.note.unwrap().contains("passed by itself"));
    assert_eq!(lab.eval("document.title").await, json!("Basic page"));

    let session = lab.open("bot-stay.html").await;
    let outcome = botcheck::after_navigation(&session, None, short())
        .await
        .unwrap();
    assert_eq!(outcome.wait, ChallengeWait::HandOff);
    assert!(outcome.waited >= Duration::from_millis(1500));
    assert!(outcome.note.unwrap().contains("call browser_handoff"));
    lab.browser.shutdown().await;
}

/// BOT-4: "Access denied", a 403 with a 40-byte body and a 429 are refusals, said with
/// "don't retry it over and over".
#[tokio::test(flavor = "multi_thread")]
async fn bot_4_refusals() {
    let lab = lab().await;
    let denied = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/pages/access-denied.html"),
    )
    .unwrap();
    let mut page = Response::html(&denied);
    page.status = 403;
    lab.server.route("/denied", page);
    let mut small = Response::html("<p>Forbidden, go away, we said so.</p>");
    small.status = 403;
    lab.server.route("/forbidden", small);
    let mut many = Response::html("<p>Too many requests.</p>");
    many.status = 429;
    lab.server.route("/slow-down", many);
    for path in ["denied", "forbidden", "slow-down"] {
        let session = lab.open(path).await;
        let outcome = botcheck::after_navigation(&session, None, short())
            .await
            .unwrap();
        assert_eq!(outcome.check, BotCheck::Refusal, "{path}");
        assert!(
            outcome
                .note
                .unwrap()
                .contains("Don't retry it over and over")
        );
    }
    lab.browser.shutdown().await;
}

/// BOT-5: looking changes nothing about the browser: `navigator.webdriver` is as Chrome
/// set it, and the user agent is Chrome's own.
#[tokio::test(flavor = "multi_thread")]
async fn bot_5_no_stealth() {
    let lab = lab().await;
    let session = lab.open("bot-stay.html").await;
    let before = lab.eval("[navigator.webdriver, navigator.userAgent]").await;
    botcheck::after_navigation(&session, None, short())
        .await
        .unwrap();
    let after = lab.eval("[navigator.webdriver, navigator.userAgent]").await;
    assert_eq!(before, after);
    assert_eq!(after[0], json!(true));
    lab.browser.shutdown().await;
}

/// LAUNCH-11, AMB-25: a OneTrust and a generic banner are declined with their reject
/// control; an accept-only banner is left alone; nothing is ever accepted.
#[tokio::test(flavor = "multi_thread")]
async fn launch_11_cookie_banners_declined() {
    let lab = lab().await;
    for (page, control) in [
        ("cookie-onetrust.html", "Reject All"),
        ("cookie-generic.html", "Necessary only"),
    ] {
        let session = lab.open(page).await;
        let note = consent::decline_banner(&session, &quick())
            .await
            .unwrap()
            .expect("a banner declined");
        assert_eq!(note.control, control);
        assert!(note.sentence().contains("declined"));
        assert_eq!(
            lab.eval("document.body.dataset.consent").await,
            json!("rejected"),
            "{page}"
        );
    }
    let session = lab.open("cookie-accept-only.html").await;
    assert_eq!(
        consent::decline_banner(&session, &quick()).await.unwrap(),
        None
    );
    assert_eq!(
        lab.eval("document.body.dataset.consent || 'none'").await,
        json!("none")
    );
    // With the setting off, nobody calls it and the banner stays.
    let session = lab.open("cookie-generic.html").await;
    let _ = session;
    assert_eq!(
        lab.eval("!!document.querySelector('.cookie-banner')").await,
        json!(true)
    );
    lab.browser.shutdown().await;
}

/// AMB-20, BOT-3: a handoff on a bot check finishes by itself once the captcha's token
/// lands: two passing looks in a row, hands off for long enough.
#[tokio::test(flavor = "multi_thread")]
async fn amb_20_captcha_token_finishes_the_handoff() {
    use conch_policy::{HANDS_OFF, HandoffState, HandoffWatch};
    let lab = lab().await;
    let session = lab.open("bot-stay.html").await;
    let first = botcheck::gate_look(&session).await.unwrap();
    assert!(first.captcha_visible && !first.captcha_token, "{first:?}");
    let mut watch = HandoffWatch::start(&first).expect("a gate");
    assert_eq!(watch.observe(&first, HANDS_OFF), HandoffState::Waiting);
    lab.eval("document.querySelector('[name=cf-turnstile-response]').value = 'token'; true")
        .await;
    let look = botcheck::gate_look(&session).await.unwrap();
    assert!(look.captcha_token);
    assert_eq!(watch.observe(&look, HANDS_OFF), HandoffState::Waiting);
    assert_eq!(watch.observe(&look, HANDS_OFF), HandoffState::Finished);
    lab.browser.shutdown().await;
}

/// Issue 11 review (LAUNCH-11): the banner probe picks its control in Conch's isolated
/// world. A page whose own `innerText` says its accept button is "Reject all" would get
/// its cookies accepted by a probe run in its realm; Conch presses the true reject.
#[tokio::test(flavor = "multi_thread")]
async fn launch_11_a_banner_that_lies_about_its_buttons_is_still_declined() {
    let lab = lab().await;
    let session = lab.open("lies-banner.html").await;
    let note = consent::decline_banner(&session, &quick())
        .await
        .unwrap()
        .expect("a banner declined");
    assert_eq!(note.control, "Reject All");
    assert_eq!(
        lab.eval("document.body.dataset.consent").await,
        json!("rejected")
    );
    lab.browser.shutdown().await;
}

/// Issue 11 review (BOT-1, HAND-3): the bot-check and gate probes read the page in
/// Conch's isolated world. A page whose realm says its title is a Cloudflare challenge and
/// hides its password box from `querySelectorAll` is neither taken for a bot check nor
/// for a page with no gate.
#[tokio::test(flavor = "multi_thread")]
async fn bot_1_probes_read_the_page_where_it_cannot_lie() {
    let lab = lab().await;
    let session = lab.open("lies-text.html").await;
    assert_eq!(lab.eval("document.title").await, json!("Just a moment..."));
    let facts = botcheck::page_facts(&session, None).await.unwrap();
    assert_eq!(facts.title, "Welcome");
    assert!(!facts.text.contains("Order placed"), "{}", facts.text);
    assert_eq!(conch_policy::classify_page(&facts), BotCheck::None);
    let gate = botcheck::gate_look(&session).await.unwrap();
    assert!(gate.password_visible, "{gate:?}");
    lab.browser.shutdown().await;
}
