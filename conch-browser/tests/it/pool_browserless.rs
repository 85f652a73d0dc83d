//! The pool backend on the real thing (issue 32): two browserless servers
//! (`@browserless.io/browserless`, installed pinned by `cargo xtask test`) on 127.0.0.1,
//! each giving a Chromium of its own to every DevTools connection. The same journeys as
//! `pool.rs` on plain Chromiums, checked from what the conversations see, since a
//! browserless browser can't be spied on from a second connection (each one is another
//! browser).

use std::time::Duration;

use conch_browser::remote::Remote;
use conch_browser::{Browser, BrowserConfig};
use conch_fixtures::FixtureServer;
use conch_fixtures::browserless::Browserless;

use crate::pool::{four_apart, killed_mid_step, refused_past_the_wait};
use crate::remote::{cloud_only, core_scenario};

/// Starts one browserless server, or fails the test with why.
fn server() -> Browserless {
    Browserless::start().unwrap_or_else(|e| panic!("browserless: {e}"))
}

/// A runtime on a pool of the `servers`, at most `per_endpoint` conversations on each,
/// waiting at most `wait` for a place; its local browser can't start.
fn on_fleet(
    dir: &tempfile::TempDir,
    servers: &[&Browserless],
    per_endpoint: usize,
    wait: Duration,
) -> BrowserConfig {
    let (mut config, _) = cloud_only(
        dir,
        Remote::Pool {
            endpoints: servers.iter().map(|s| s.ws_url()).collect(),
            per_endpoint,
        },
    );
    config.pool_wait = wait;
    config
}

/// Issue 32 (BE-1): the core scenario (open, read, click, type, form, new tab, list,
/// close) passes on a pool of two browserless servers, and Conch launches no browser.
#[tokio::test(flavor = "multi_thread")]
async fn be_1_the_core_scenario_passes_on_a_pool_of_browserless_servers() {
    let pages = FixtureServer::start().await.expect("fixture server");
    let (a, b) = (server(), server());
    let dir = tempfile::tempdir().expect("temp dir");
    let browser = Browser::new(on_fleet(&dir, &[&a, &b], 4, Duration::from_secs(30)));
    core_scenario(&browser, &pages, "browserless pool").await;
    assert_eq!(browser.pid().await, None, "Conch launched a browser");
    assert_eq!(browser.errands_pid().await, None);
    browser.shutdown().await;
}

/// Issue 32 (ERR-1): two chats and two tasks at once on two browserless servers with room
/// for two each: all four are placed at once (so two on each), none runs locally, and
/// each sees only its own cookie.
#[tokio::test(flavor = "multi_thread")]
async fn err_1_two_chats_and_two_tasks_on_browserless_keep_their_cookies_apart() {
    let pages = FixtureServer::start().await.expect("fixture server");
    let (a, b) = (server(), server());
    let dir = tempfile::tempdir().expect("temp dir");
    let browser = Browser::new(on_fleet(&dir, &[&a, &b], 2, Duration::from_secs(1)));
    four_apart(&browser, &pages.url("basic.html")).await;
    browser.shutdown().await;
}

/// Issue 32 (BE-4): a browserless server killed in the middle of a step is taken out; the
/// conversation on it comes back on the other with both its tabs, told once.
#[tokio::test(flavor = "multi_thread")]
async fn be_4_a_browserless_server_killed_mid_step_moves_its_conversation_with_its_tabs() {
    let pages = FixtureServer::start().await.expect("fixture server");
    let (mut a, other) = (server(), server());
    let dir = tempfile::tempdir().expect("temp dir");
    let browser = Browser::new(on_fleet(&dir, &[&a, &other], 4, Duration::from_secs(30)));
    let chat = browser.conversation("c1");
    // The first conversation goes to the first address (the least loaded, first listed).
    killed_mid_step(&chat, &pages, || a.kill()).await;
    browser.shutdown().await;
}

/// Issue 32 (ERR-15): with both servers at their cap, the next conversation waits in line
/// with a sentence and is served when a place frees; past the wait, a sentence, no hang.
#[tokio::test(flavor = "multi_thread")]
async fn err_15_on_a_full_browserless_fleet_a_conversation_waits_and_is_served() {
    let pages = FixtureServer::start().await.expect("fixture server");
    let (a, b) = (server(), server());
    let dir = tempfile::tempdir().expect("temp dir");
    let browser = Browser::new(on_fleet(&dir, &[&a, &b], 1, Duration::from_secs(60)));
    let url = pages.url("basic.html");
    for id in ["c1", "c2"] {
        browser.conversation(id).open(&url).await.expect("placed");
    }
    let third = {
        let conv = browser.conversation("c3");
        let url = url.clone();
        tokio::spawn(async move { conv.open(&url).await })
    };
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(!third.is_finished(), "placed past the cap");
    browser.chat_deleted("c1").await;
    tokio::time::timeout(Duration::from_secs(30), third)
        .await
        .expect("served once a place freed")
        .expect("joined")
        .expect("opens");
    let notes = browser.conversation("c3").take_notes().await;
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("Waited for a free browser")),
        "{notes:?}"
    );
    browser.shutdown().await;

    let dir = tempfile::tempdir().expect("temp dir");
    let browser = Browser::new(on_fleet(&dir, &[&a, &b], 1, Duration::from_secs(1)));
    refused_past_the_wait(&browser, &url).await;
}
