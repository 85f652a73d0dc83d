//! Many conversations through the tools: a step on a hung page fails with a sentence and
//! leaves its conversation free, while another conversation's steps go on (TOOL-11,
//! SNAP-12, issue 18).

use std::time::{Duration, Instant};

use conch_fixtures::FixtureServer;
use conch_tools::{Choice, Mode};
use serde_json::json;

use crate::support::{Recorder, ref_of, setup, tools};

#[tokio::test(flavor = "multi_thread")]
async fn tool_11_a_hung_page_fails_its_step_and_frees_its_conversation() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools(&setup, Recorder::answering(Choice::ThisChat, Choice::Yes));
    let stuck = tools.chat("stuck", Mode::FullTrust);
    let busy = tools.chat("busy", Mode::FullTrust);
    let page = json!({ "url": server.url("many.html") });
    let stuck_page = stuck.call("browser_open", &page).await.text();
    let busy_page = busy.call("browser_open", &page).await.text();
    let hang = stuck
        .call(
            "browser_click",
            &json!({ "ref": ref_of(&stuck_page, "\"Hang\"") }),
        )
        .await;
    assert!(!hang.is_error, "{}", hang.text());

    // The hung page's next step fails within its bound, with a sentence saying why.
    let add = ref_of(&stuck_page, "\"Add\"");
    let stuck_step = {
        let stuck = stuck.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            let result = stuck.call("browser_click", &json!({ "ref": add })).await;
            (result, started.elapsed())
        })
    };

    // Meanwhile the other conversation's steps land, each within its own time.
    let add = ref_of(&busy_page, "\"Add\"");
    for clicks in 1..=3 {
        let started = Instant::now();
        let result = busy.call("browser_click", &json!({ "ref": add })).await;
        assert!(!result.is_error, "{}", result.text());
        assert!(
            result.text().contains(&format!("Clicked {clicks} times")),
            "{}",
            result.text()
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "a step of the other conversation waited {:?}",
            started.elapsed()
        );
    }

    let (result, took) = stuck_step.await.expect("the stuck step ends");
    assert!(
        result.is_error,
        "a hung page takes no click: {}",
        result.text()
    );
    assert!(
        result.text().contains("busy"),
        "the sentence says why: {}",
        result.text()
    );
    assert!(took < Duration::from_secs(20), "the step took {took:?}");

    // The failed step left its conversation free: its next call answers at once.
    let started = Instant::now();
    let listed = stuck
        .call("browser_tabs", &json!({ "action": "list" }))
        .await;
    assert!(!listed.is_error, "{}", listed.text());
    assert!(listed.text().contains("t1"), "{}", listed.text());
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the conversation's next call waited {:?}",
        started.elapsed()
    );
}
