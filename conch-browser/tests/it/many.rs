//! Many conversations on one browser at once (issue 18): every conversation's active tab
//! takes trusted input, is read, settles and is photographed at the same time as every
//! other's (TOOL-11 across conversations, SNAP-12, AMB-11).

use std::time::{Duration, Instant};

use conch_browser::page::act::{self, ActError, How};
use conch_browser::page::{Reader, screenshot_for_model};
use conch_browser::{Browser, BrowserConfig, Conversation, Home};
use conch_fixtures::FixtureServer;

use crate::act::{css, quick};

fn browser(dir: &tempfile::TempDir) -> Browser {
    let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
    // Never reach for the real download server from a test.
    config.download = None;
    // The fixtures are served on loopback, which the guard refuses; containment has its
    // own tests (tests/it/guard.rs).
    config.guard = None;
    Browser::new(config)
}

/// One conversation's round: click Add, type a note, press Enter; `rounds` times. Gives
/// the page's click count and its notes.
async fn journey(chat: Conversation, url: String, rounds: usize) -> (String, Vec<String>) {
    chat.open(&url).await.expect("the page opens");
    let page = chat.page().await.expect("a page");
    let o = quick();
    for i in 0..rounds {
        act::click(&css(&page, "#add").await, How::Click, &o)
            .await
            .expect("the click lands");
        let note = css(&page, "#note").await;
        act::type_text(&note, &format!("{} note {i}", chat.id()), &o)
            .await
            .expect("the text is typed");
        act::press(&page, "Enter", Some(&note), &o)
            .await
            .expect("the key is pressed");
    }
    let clicks = chat
        .evaluate("document.getElementById('clicks').textContent")
        .await
        .expect("evaluate");
    let notes = chat
        .evaluate("[...document.querySelectorAll('#notes li')].map(li => li.textContent)")
        .await
        .expect("evaluate");
    (
        clicks.as_str().unwrap_or_default().to_owned(),
        serde_json::from_value(notes).expect("a list"),
    )
}

async fn all_at_once(conversations: usize) {
    let server = FixtureServer::start().await.expect("fixture server");
    let dir = tempfile::tempdir().expect("temp dir");
    let browser = browser(&dir);
    let rounds = 5;
    let tasks: Vec<_> = (0..conversations)
        .map(|n| {
            let chat = browser.conversation(&format!("c{n}"));
            tokio::spawn(journey(chat, server.url("many.html"), rounds))
        })
        .collect();
    for (n, task) in tasks.into_iter().enumerate() {
        let (clicks, notes) = task.await.expect("the conversation's task");
        assert_eq!(clicks, rounds.to_string(), "conversation c{n}'s clicks");
        let wanted: Vec<String> = (0..rounds).map(|i| format!("c{n} note {i}")).collect();
        assert_eq!(notes, wanted, "conversation c{n}'s notes");
    }
}

/// Issue 18: two conversations click, type and press keys at the same moment on their own
/// pages; every act lands on the right page.
#[tokio::test(flavor = "multi_thread")]
async fn tool_11_two_conversations_act_at_once() {
    all_at_once(2).await;
}

/// Issue 18: four conversations at once. Before every tab had a window of its own, all but
/// one were background tabs that took no trusted input: their clicks timed out.
#[tokio::test(flavor = "multi_thread")]
async fn tool_11_four_conversations_act_at_once() {
    all_at_once(4).await;
}

/// Issue 18, SNAP-12: a conversation whose page runs `for(;;){}` does not delay another
/// conversation's steps or the tab list, and its own act fails within its timeout with a
/// sentence saying why, leaving no call pending.
#[tokio::test(flavor = "multi_thread")]
async fn snap_12_a_hung_page_does_not_hold_up_other_conversations() {
    let server = FixtureServer::start().await.expect("fixture server");
    let dir = tempfile::tempdir().expect("temp dir");
    let browser = browser(&dir);
    let stuck = browser.conversation("stuck");
    let busy = browser.conversation("busy");
    stuck.open(&server.url("many.html")).await.expect("opens");
    busy.open(&server.url("many.html")).await.expect("opens");
    let stuck_page = stuck.page().await.expect("a page");
    let stuck_button = css(&stuck_page, "#add").await;
    act::click(&css(&stuck_page, "#hang").await, How::Click, &quick())
        .await
        .expect("the hang button is clicked");

    // The hung page's next click fails with the input sentence, within its timeout.
    let stuck_add = tokio::spawn(async move {
        let started = Instant::now();
        let outcome = act::click(&stuck_button, How::Click, &quick()).await;
        (outcome, started.elapsed())
    });

    let busy_page = busy.page().await.expect("a page");
    for _ in 0..5 {
        let started = Instant::now();
        act::click(&css(&busy_page, "#add").await, How::Click, &quick())
            .await
            .expect("the other conversation's click lands");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "a step of the other conversation waited {:?}",
            started.elapsed()
        );
    }
    let started = Instant::now();
    let tabs = stuck.tabs().await.expect("the tab list answers");
    assert_eq!(tabs.len(), 1);
    assert!(started.elapsed() < Duration::from_secs(2));
    let clicks = busy
        .evaluate("document.getElementById('clicks').textContent")
        .await
        .expect("evaluate");
    assert_eq!(clicks, "5");

    let (outcome, took) = stuck_add.await.expect("the task");
    let error = outcome.expect_err("a hung page takes no click");
    assert!(took < Duration::from_secs(15), "the act took {took:?}");
    assert!(
        matches!(
            error,
            ActError::Cdp(_) | ActError::Script(_) | ActError::Ref(_)
        ),
        "{error:?}"
    );
    let sentence = error.to_string();
    assert!(
        sentence.contains("busy"),
        "the sentence says why: {sentence}"
    );
    // The gauge is the actor's last count: give it a moment to see the cancelled calls go.
    let mut pending = usize::MAX;
    for _ in 0..30 {
        pending = busy_page.connection().pending_calls();
        if pending == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(pending, 0, "no call left behind");
}

/// Issue 18: screenshots of two conversations taken at the same moment both show their own
/// page, at the desktop viewport (AMB-11).
#[tokio::test(flavor = "multi_thread")]
async fn amb_11_two_screenshots_at_once_show_their_own_page() {
    let server = FixtureServer::start().await.expect("fixture server");
    let dir = tempfile::tempdir().expect("temp dir");
    let browser = browser(&dir);
    let red = browser.conversation("red");
    let blue = browser.conversation("blue");
    red.open(&server.url("many.html?colour=rgb(255,0,0)"))
        .await
        .expect("opens");
    blue.open(&server.url("many.html?colour=rgb(0,0,255)"))
        .await
        .expect("opens");
    let (red_page, blue_page) = (red.page().await.unwrap(), blue.page().await.unwrap());
    let (a, b) = tokio::join!(
        async { screenshot_for_model(&red_page, &mut Reader::new()).await },
        async { screenshot_for_model(&blue_page, &mut Reader::new()).await },
    );
    for (png, wanted) in [(a, [255, 0, 0]), (b, [0, 0, 255])] {
        let image = image::load_from_memory(&png.expect("a screenshot"))
            .expect("a PNG")
            .into_rgb8();
        assert_eq!((image.width(), image.height()), (1280, 800));
        let pixel = image.get_pixel(1200, 700).0;
        assert_eq!(pixel, wanted);
    }
}

/// Issue 18, TAB-3: a popup in one conversation does not take input from another, and its
/// own conversation can go back to the opener and act on it.
#[tokio::test(flavor = "multi_thread")]
async fn tab_3_a_popup_does_not_steal_input_from_another_conversation() {
    let server = FixtureServer::start().await.expect("fixture server");
    let dir = tempfile::tempdir().expect("temp dir");
    let browser = browser(&dir);
    let popper = browser.conversation("popper");
    let other = browser.conversation("other");
    popper.open(&server.url("many.html")).await.expect("opens");
    other.open(&server.url("many.html")).await.expect("opens");
    let popper_page = popper.page().await.expect("a page");
    let other_page = other.page().await.expect("a page");
    let link = css(&popper_page, "#pop").await;
    let o = quick();
    let (popped, others) = tokio::join!(act::click(&link, How::Click, &o), async {
        for _ in 0..3 {
            act::click(&css(&other_page, "#add").await, How::Click, &quick())
                .await
                .expect("the other conversation's click lands");
        }
    });
    popped.expect("the link is clicked");
    let () = others;
    let tabs = popper.tabs().await.expect("tabs");
    assert_eq!(tabs.len(), 2, "the new tab is the popper's: {tabs:?}");
    assert_eq!(other.tabs().await.expect("tabs").len(), 1);

    // Back to the opener, which the new tab covered in its window: it takes input again.
    popper.switch("t1").await.expect("switch");
    let opener = popper.page().await.expect("a page");
    act::click(&css(&opener, "#add").await, How::Click, &quick())
        .await
        .expect("the opener takes the click");
    let clicks = popper
        .evaluate("document.getElementById('clicks').textContent")
        .await
        .expect("evaluate");
    assert_eq!(clicks, "1");
    let clicks = other
        .evaluate("document.getElementById('clicks').textContent")
        .await
        .expect("evaluate");
    assert_eq!(clicks, "3");
}

/// AMB-11, issue 11: every tab, new or a popup (even one that asks for a small window), is
/// 1280×800 at scale 1, so responsive sites show their desktop layout.
#[tokio::test(flavor = "multi_thread")]
async fn amb_11_every_tab_and_popup_is_desktop_sized() {
    let server = FixtureServer::start().await.expect("fixture server");
    let dir = tempfile::tempdir().expect("temp dir");
    let browser = browser(&dir);
    let chat = browser.conversation("sizes");
    const SHAPE: &str =
        "[innerWidth, innerHeight, devicePixelRatio, matchMedia('(min-width: 1200px)').matches]";
    let desktop = serde_json::json!([1280, 800, 1, true]);
    chat.open(&server.url("tabs.html")).await.expect("opens");
    assert_eq!(chat.evaluate(SHAPE).await.expect("evaluate"), desktop);
    chat.new_tab(&server.url("basic.html"))
        .await
        .expect("a new tab");
    assert_eq!(chat.evaluate(SHAPE).await.expect("evaluate"), desktop);
    chat.switch("t1").await.expect("switch");
    // A popup that asks for a 400×300 window.
    let page = chat.page().await.expect("a page");
    act::click(&css(&page, "#popup").await, How::Click, &quick())
        .await
        .expect("the popup opens");
    let tabs = chat.tabs().await.expect("tabs");
    assert_eq!(tabs.len(), 3, "{tabs:?}");
    let mut shape = serde_json::Value::Null;
    for _ in 0..50 {
        shape = chat.evaluate(SHAPE).await.expect("evaluate");
        if shape == desktop {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(shape, desktop, "the popup's viewport");
}

/// Issue 18 (memory flat across many sessions): an ended conversation leaves nothing
/// behind: its tabs are closed in the browser and gone from the saved tabs, and the same id
/// starts afresh at t1.
#[tokio::test(flavor = "multi_thread")]
async fn tab_9_an_ended_conversation_leaves_no_tabs_behind() {
    let server = FixtureServer::start().await.expect("fixture server");
    let dir = tempfile::tempdir().expect("temp dir");
    let browser = browser(&dir);
    let chat = browser.conversation("short");
    let stays = browser.conversation("stays");
    chat.open(&server.url("basic.html")).await.expect("opens");
    chat.new_tab(&server.url("counter.html"))
        .await
        .expect("opens");
    stays.open(&server.url("many.html")).await.expect("opens");
    let page = chat.page().await.expect("a page");
    browser.end_conversation("short").await;
    // The page is closed: its session answers no more.
    let closed = page
        .call_raw("Runtime.evaluate", serde_json::json!({ "expression": "1" }))
        .await;
    assert!(closed.is_err(), "the tab still runs: {closed:?}");
    browser.flush_saves().await;
    let saved =
        std::fs::read_to_string(dir.path().join("home/browser/tabs.json")).expect("tabs.json");
    assert!(!saved.contains("\"short\""), "{saved}");
    assert!(saved.contains("\"stays\""), "{saved}");
    let again = browser.conversation("short");
    assert!(again.tabs().await.expect("tabs").is_empty());
    let tab = again.open(&server.url("basic.html")).await.expect("opens");
    assert_eq!(tab.id, "t1");
    assert_eq!(stays.tabs().await.expect("tabs").len(), 1);
}

/// Issue 12 (unbounded growth): the runtime's per-conversation locks shrink as
/// conversations end, with a tab or without one, so a gateway that serves many short
/// sessions holds only those still going.
#[tokio::test(flavor = "multi_thread")]
async fn issue_12_the_conversation_locks_shrink_when_conversations_end() {
    let server = FixtureServer::start().await.expect("fixture server");
    let dir = tempfile::tempdir().expect("temp dir");
    let browser = browser(&dir);
    let stays = browser.conversation("stays");
    stays.open(&server.url("basic.html")).await.expect("opens");
    let before = browser.conversations_held();
    for round in 0..20 {
        let id = format!("short-{round}");
        let chat = browser.conversation(&id);
        if round % 5 == 0 {
            chat.open(&server.url("basic.html")).await.expect("opens");
        }
        browser.end_conversation(&id).await;
    }
    assert_eq!(browser.conversations_held(), before);
    assert_eq!(stays.tabs().await.expect("tabs").len(), 1);
    browser.end_conversation("stays").await;
    assert_eq!(browser.conversations_held(), before - 1);
    browser.shutdown().await;
}
