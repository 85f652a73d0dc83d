//! The browser dies mid-call (LAUNCH-17): every pending call fails with `Closed` at once,
//! later calls fail at once, event streams end, nothing hangs.

use std::time::{Duration, Instant};

use conch_cdp::ErrorKind;
use conch_cdp::protocol::{browser, page, runtime};
use futures_util::StreamExt;

use crate::support::{launch, new_page, within};

/// LAUNCH-17: SIGKILL the browser while five calls wait on promises that never settle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_browser_fails_pending_calls_and_ends_streams_launch_17() {
    let mut browser = launch().await;
    let page = new_page(&browser.connection).await;
    page.call(&page::Enable {}).await.expect("Page.enable");
    let mut loads = page.subscribe::<page::LoadEventFired>();
    let mut browser_events = browser.connection.browser().events("Target.targetCreated");
    let mut calls = Vec::new();
    for _ in 0..5 {
        let page = page.clone();
        calls.push(tokio::spawn(async move {
            let never = runtime::Evaluate::value("new Promise(() => {})");
            page.call(&never).await
        }));
    }
    // Let the calls reach the browser.
    within(10, "the calls to be pending", async {
        while browser.connection.pending_calls() < 5 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;

    browser.child.start_kill().expect("SIGKILL the browser");
    let killed = Instant::now();
    for call in calls {
        let outcome = within(2, "a pending call to fail", call)
            .await
            .expect("task");
        let error = outcome.expect_err("a call answered by a dead browser");
        assert_eq!(error.kind(), &ErrorKind::Closed, "{error}");
        assert_eq!(error.method(), Some("Runtime.evaluate"));
    }
    assert!(
        killed.elapsed() < Duration::from_secs(1),
        "pending calls took {:?} to fail",
        killed.elapsed()
    );
    assert!(
        within(1, "the load stream to end", loads.next())
            .await
            .is_none()
    );
    assert!(
        within(1, "the browser stream to end", browser_events.next())
            .await
            .is_none()
    );
    within(1, "closed()", browser.connection.closed()).await;
    assert!(browser.connection.is_closed());

    let later = Instant::now();
    let error = browser
        .connection
        .call(&browser::GetVersion {})
        .await
        .expect_err("a call after the browser died");
    assert!(error.is_closed(), "{error}");
    assert!(
        later.elapsed() < Duration::from_millis(100),
        "a later call waited"
    );
    // Subscribing after the close gives a stream that has already ended.
    assert!(page.events("Page.frameNavigated").next().await.is_none());
    let _ = browser.child.wait().await;
}
