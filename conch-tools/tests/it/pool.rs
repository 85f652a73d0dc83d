//! The agent's side of a conversation placed on a pool of remote browsers (issue 32)
//! where it meets the person: a question card waiting for the person keeps the
//! conversation's place through the idle let-go (BE-5), and the call goes on in the same
//! tab once answered.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use conch_browser::remote::Remote;
use conch_browser::{Browser, ManualClock};
use conch_fixtures::FixtureServer;
use conch_fixtures::browser::Standalone;
use conch_tools::{Answer, AskRequest, Asker, BoxFuture, Choice, Mode, Tools, ToolsConfig};
use serde_json::json;

use crate::support::{ref_of, setup};

/// A person who answers "This chat" only when the test lets them, as a card left open
/// for a while.
#[derive(Debug)]
struct Slow {
    asked: AtomicUsize,
    answer: tokio::sync::Semaphore,
}

impl Asker for Slow {
    fn ask<'a>(&'a self, _: &'a AskRequest) -> BoxFuture<'a, Answer> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            match self.answer.acquire().await {
                Ok(permit) => permit.forget(),
                Err(_) => return Answer::Person(Choice::No),
            }
            Answer::Person(Choice::ThisChat)
        })
    }
}

/// Issue 32 (BE-5, PERM-1, LAUNCH-12): on a pool, a question card waits for the person
/// through ten idle minutes and the conversation keeps its place; once answered, the
/// click lands in the same tab.
#[tokio::test(flavor = "multi_thread")]
async fn be_5_on_a_pool_a_waiting_question_keeps_the_place() {
    let server = FixtureServer::start().await.expect("fixture server");
    let a = Standalone::start().expect("a standalone Chromium");
    let mut setup = setup();
    setup.config.remote = Some(Remote::Pool {
        endpoints: vec![a.http()],
        per_endpoint: 4,
    });
    let clock = Arc::new(ManualClock::new(
        std::time::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
    ));
    setup.config.clock = clock.clone();
    let person = Arc::new(Slow {
        asked: AtomicUsize::new(0),
        answer: tokio::sync::Semaphore::new(0),
    });
    let mut config = ToolsConfig::new(Arc::clone(&person) as Arc<dyn Asker>);
    config.net.allow_localhost = true;
    let tools = Tools::new(Browser::new(setup.config.clone()), config);
    let chat = tools.chat("q", Mode::Ask);
    let page = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("tools-shop.html") }),
        )
        .await;
    assert!(!page.is_error, "{}", page.text());
    assert_eq!(tools.browser().pid().await, None, "not on the pool");
    let add = ref_of(&page.text(), "Add to cart");
    let tabs = chat.conversation().tabs_now().await;
    let clicking = tokio::spawn({
        let chat = chat.clone();
        async move { chat.call("browser_click", &json!({ "ref": add })).await }
    });
    let mut waited = 0;
    while person.asked.load(Ordering::SeqCst) == 0 && waited < 100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += 1;
    }
    assert_eq!(person.asked.load(Ordering::SeqCst), 1, "no question came");

    clock.advance(Duration::from_secs(11 * 60));
    tools.browser().tick().await;
    assert!(
        !chat.conversation().pages_now().await.is_empty(),
        "let go while a question waited for the person"
    );
    person.answer.add_permits(1);
    let clicked = tokio::time::timeout(Duration::from_secs(30), clicking)
        .await
        .expect("the click ends once answered")
        .expect("joined");
    assert!(!clicked.is_error, "{}", clicked.text());
    assert_eq!(chat.conversation().tabs_now().await, tabs);
    tools.browser().shutdown().await;
}
