//! How fast `conch-gateway mcp` is ready (issue 31): the installed browser starts while
//! the client's `initialize` is answered, and the first page read uses that browser.

use std::time::{Duration, Instant};

use conch_fixtures::FixtureServer;

use crate::support::{StdioClient, gateway};

/// The processes whose parent is `pid`, from `/proc`.
fn children(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| {
            std::fs::read_to_string(format!("/proc/{child}/stat"))
                .ok()
                .and_then(|stat| {
                    stat.rsplit_once(')')?
                        .1
                        .split_whitespace()
                        .nth(1)?
                        .parse::<u32>()
                        .ok()
                })
                == Some(pid)
        })
        .collect()
}

/// Issue 31: with an installed browser, `conch-gateway mcp` launches it at start, before
/// any tool call, so cold start (spawn to first page read) overlaps the launch with the
/// client's handshake; the first `browser_open` then uses that one browser, no second.
#[tokio::test(flavor = "multi_thread")]
async fn issue_31_the_browser_starts_before_the_first_tool_call() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut client = StdioClient::start(gateway(
        home.path(),
        &[
            "mcp",
            "--unattended",
            "--allow-localhost",
            "--panel-port",
            "0",
        ],
    ))
    .await;
    let pid = client.child.id().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut launched = children(pid);
    while launched.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        launched = children(pid);
    }
    assert!(
        !launched.is_empty(),
        "no browser was started before the first tool call"
    );
    let page = client.open(&server.url("tools-shop.html")).await;
    assert!(page.contains("Add to cart"), "{page}");
    assert_eq!(
        children(pid),
        launched,
        "the first call started another browser"
    );
    client.finish().await;
}
