//! What the runtime's own unit tests share: a browser config on a temp home, and killing
//! the browser under the runtime until it notices.

use std::time::Duration;

use super::{Browser, BrowserConfig, Home, RunState};

/// A config on `dir` with no download and no guard: the fixtures are on loopback, and
/// containment has its own tests.
pub(crate) fn config(dir: &tempfile::TempDir) -> BrowserConfig {
    let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
    config.download = None;
    config.guard = None;
    config
}

/// Kills `browser`'s process with SIGKILL and waits (up to 5 s) until the runtime sees it
/// is no longer running; panics if it never does.
pub(crate) async fn kill_and_wait(browser: &Browser) {
    let pid = browser.pid().await.expect("a running browser");
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    for _ in 0..100 {
        if browser.status().await.state != RunState::Running {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the runtime never noticed the browser died");
}
