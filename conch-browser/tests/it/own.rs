//! A browser of its own for a chat (LIVE-16), and a chat that becomes a task leaving the
//! main context (ERR-1): cookies apart both ways, seeding like a task's, the tabs of the
//! context left behind closed, and the agent told.
//!
//! The fixture site is served as `shop.test` (always allowed) and `bank.test` (not)
//! through the guard's injected resolver, as in the errands' tests.

use std::time::Duration;

use conch_browser::store::{BrowserSettings, TabsFile};
use conch_browser::{ConversationKind, Home, MOVED_APART, MOVED_BACK, OwnBrowser, SystemClock};

use crate::errands::{Env, cookies};

/// The errand tests' browser, with `shop.test` always allowed (`bank.test` never is).
async fn start() -> Env {
    Env::start_with(|config| {
        let mut settings = BrowserSettings::default();
        settings.allow_site("shop.test");
        settings.save(&config.home).expect("browser.json");
    })
    .await
}

/// The conversations tabs.json holds, once every change is written.
async fn saved(env: &Env) -> Vec<String> {
    env.browser.flush_saves().await;
    let home = Home::new(env.dir.path().join("home"));
    TabsFile::load(&home, &SystemClock)
        .expect("tabs.json")
        .value
        .conversations
        .into_iter()
        .filter(|(_, tabs)| !tabs.tabs.is_empty())
        .map(|(id, _)| id)
        .collect()
}

/// Whether `page` stops answering within 10 s (its tab was closed).
async fn closes(page: &conch_cdp::Session) -> bool {
    for _ in 0..100 {
        let answer = page
            .call_raw("Runtime.evaluate", serde_json::json!({ "expression": "1" }))
            .await;
        if answer.is_err() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// LIVE-16, ERR-3: `own: true` gives the chat an isolated context in the errands'
/// browser, seeded with the always-allowed site's cookies (shop.test, not bank.test); a
/// cookie set there is invisible to the main context and one set in the main context
/// later is invisible there. Its main tab closes and its next result says so. `own:
/// false` returns it to the main context's cookies, closes its own browser (what it set
/// there is gone) and says so too. A task can't be given the main browser, and deleting
/// a chat closes its own browser.
#[tokio::test(flavor = "multi_thread")]
async fn live_16_own_true_gives_the_chat_an_isolated_context_and_false_returns_it() {
    let env = start().await;
    let chat = env.browser.conversation("chat");
    chat.open("http://shop.test/basic.html").await.unwrap();
    chat.evaluate("document.cookie = 'who=main; path=/'; 1")
        .await
        .unwrap();
    chat.open("http://bank.test/basic.html").await.unwrap();
    chat.evaluate("document.cookie = 'bank=main; path=/'; 1")
        .await
        .unwrap();
    let main_page = chat.page().await.unwrap();

    assert_eq!(
        env.browser.set_own_browser("chat", true).await,
        OwnBrowser::Own
    );
    assert!(closes(&main_page).await, "its main tab closed");
    assert!(chat.moved(), "the old view knows the chat moved");
    let own = env.browser.conversation("chat");
    assert!(!own.moved());
    assert!(
        own.tabs().await.unwrap().is_empty(),
        "it starts with no tab"
    );
    assert_eq!(own.take_notes().await, [MOVED_APART]);
    own.open("http://shop.test/basic.html").await.unwrap();
    assert_eq!(
        cookies(&own).await,
        ["who=main"],
        "seeded with the always-allowed site"
    );
    assert_eq!(env.browser.errands_open().await, 1, "an errand context");
    let session = own.session().expect("its own browser");
    assert_eq!(session.reason, "own");
    assert_eq!(session.sites, ["shop.test"]);
    own.evaluate("document.cookie = 'who=own; path=/'; 1")
        .await
        .unwrap();
    own.open("http://bank.test/basic.html").await.unwrap();
    assert!(cookies(&own).await.is_empty(), "bank.test is not lent");

    // Another chat in the main context: it never sees the own browser's cookie, and
    // what it sets there now is never seen in the own browser.
    let other = env.browser.conversation("other");
    other.open("http://shop.test/basic.html").await.unwrap();
    assert_eq!(cookies(&other).await, ["who=main"]);
    other
        .evaluate("document.cookie = 'late=main; path=/'; 1")
        .await
        .unwrap();
    own.open("http://shop.test/basic.html").await.unwrap();
    assert_eq!(cookies(&own).await, ["who=own"]);

    assert_eq!(
        env.browser.set_own_browser("chat", false).await,
        OwnBrowser::Main
    );
    assert_eq!(
        env.browser.errands_open().await,
        0,
        "its own browser closed"
    );
    let back = env.browser.conversation("chat");
    assert!(back.tabs().await.unwrap().is_empty());
    assert_eq!(back.take_notes().await, [MOVED_BACK]);
    back.open("http://shop.test/basic.html").await.unwrap();
    assert_eq!(cookies(&back).await, ["late=main", "who=main"]);
    assert!(back.session().is_none());

    env.browser.set_kind("task", ConversationKind::Task);
    assert_eq!(
        env.browser.set_own_browser("task", false).await,
        OwnBrowser::Task
    );

    // A deleted chat with a browser of its own closes it (ERR-10).
    env.browser.set_own_browser("chat", true).await;
    let own = env.browser.conversation("chat");
    own.open("http://shop.test/basic.html").await.unwrap();
    assert_eq!(env.browser.errands_open().await, 1);
    env.browser.chat_deleted("chat").await;
    assert_eq!(env.browser.errands_open().await, 0);
    assert!(!env.browser.has_own_browser("chat"));
    env.browser.shutdown().await;
}

/// ERR-1: a chat that browsed in the main context and then becomes a task, even with a
/// call of it in flight there, leaves no tab in the main context: its page there closes
/// and tabs.json forgets it; the task starts in its errand with no tab, and its first
/// result says why.
#[tokio::test(flavor = "multi_thread")]
async fn err_1_a_chat_that_becomes_a_task_leaves_no_tab_in_the_main_browser() {
    let env = start().await;
    let chat = env.browser.conversation("job");
    chat.open("http://shop.test/basic.html").await.unwrap();
    let first = chat.page().await.unwrap();
    assert_eq!(saved(&env).await, ["job"]);
    // A call of the chat in flight in the main context when it becomes a task.
    let in_flight = tokio::spawn({
        let chat = chat.clone();
        async move {
            chat.new_tab("http://shop.test/delay/800/basic.html")
                .await
                .map(|t| t.id)
        }
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    env.browser.set_kind("job", ConversationKind::Task);
    let opened = in_flight.await.expect("the call ends");
    assert!(opened.is_ok(), "the call in flight finishes: {opened:?}");
    assert!(closes(&first).await, "its first main tab closed");

    let task = env.browser.conversation("job");
    let mut gone = false;
    for _ in 0..100 {
        if saved(&env).await.is_empty() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gone, "tabs.json still holds the task's main tabs");
    assert!(task.tabs().await.unwrap().is_empty());
    assert_eq!(task.take_notes().await, [MOVED_APART]);
    assert_eq!(task.session().map(|s| s.reason).as_deref(), Some("task"));
    // A chat that only ever browsed in the main context is untouched.
    let other = env.browser.conversation("other");
    other.open("http://shop.test/basic.html").await.unwrap();
    assert_eq!(saved(&env).await, ["other"]);
    env.browser.shutdown().await;
}
