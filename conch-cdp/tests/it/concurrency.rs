//! Many calls in flight on one connection (LAUNCH-17): each answer reaches its own caller.

use std::sync::Arc;

use conch_cdp::protocol::runtime;

use crate::support::{launch, new_page, within};

/// LAUNCH-17: 200 concurrent `Runtime.evaluate` calls from 200 tasks on one page session
/// each get their own number back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_calls_each_get_their_own_answer_launch_17() {
    let browser = launch().await;
    let page = Arc::new(new_page(&browser.connection).await);
    let mut tasks = Vec::new();
    for i in 0..200u64 {
        let page = page.clone();
        tasks.push(tokio::spawn(async move {
            // A little work per call, so that answers interleave.
            let expression = format!(
                "new Promise(r => setTimeout(() => r({i} * 3 + 1), {}))",
                i % 7
            );
            let answer = page
                .call(&runtime::Evaluate::value(expression))
                .await
                .expect("Runtime.evaluate");
            (i, answer.result.value)
        }));
    }
    for task in tasks {
        let (i, value) = within(30, "a concurrent call", task).await.expect("task");
        assert_eq!(
            value,
            Some(serde_json::json!(i * 3 + 1)),
            "call {i} got another's answer"
        );
    }
    assert_eq!(browser.connection.pending_calls(), 0);
    browser.close().await;
}
