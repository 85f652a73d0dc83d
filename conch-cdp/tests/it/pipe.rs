//! The pipe transport's framing and failure paths, with a shell script standing in for a
//! browser on fds 3 and 4 (no real browser sends garbage on demand).

use std::process::Command;
use std::time::{Duration, Instant};

use conch_cdp::{Config, Connection, ErrorKind};
use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::support::within;

/// A command running `script` under `sh`; the launcher's `--remote-debugging-pipe` lands
/// in `$0`.
fn sh(script: &str) -> Command {
    let mut command = Command::new("sh");
    command.arg("-c").arg(script);
    command
}

/// LAUNCH-17 over the pipe: garbage, a truncated message and an oversized message each
/// give a typed error, the reply after them still answers the call, and when the "browser"
/// exits the connection closes.
#[tokio::test]
async fn pipe_framing_survives_bad_messages_launch_17() {
    // Wait for the first command, then answer with bad messages and finally id 1.
    let script = r#"
        dd bs=1 count=1 <&3 >/dev/null 2>&1
        printf 'garbage\000' >&4
        printf '{"id":1,"result":{"trunc\000' >&4
        head -c 5000 /dev/zero | tr '\000' x >&4
        printf '\000' >&4
        printf '{"id":1,"result":{"ok":true}}\000' >&4
        sleep 2
    "#;
    let config = Config::default().with_max_message_size(1024);
    let (connection, mut child) = Connection::launch(sh(script), config)
        .await
        .expect("launch sh");
    let mut errors = connection.errors();
    let answer = connection
        .browser()
        .call_raw("Test.first", Value::Null)
        .await
        .expect("the good reply answers");
    assert_eq!(answer, json!({ "ok": true }));
    let mut kinds = Vec::new();
    for _ in 0..3 {
        kinds.push(
            within(5, "an error report", errors.next())
                .await
                .expect("errors")
                .kind()
                .clone(),
        );
    }
    assert_eq!(
        kinds,
        vec![
            ErrorKind::Decode,
            ErrorKind::Decode,
            ErrorKind::MessageTooLarge {
                size: 5000,
                limit: 1024
            }
        ]
    );
    // The script exits after its sleep: end of file closes the connection.
    within(5, "the connection to close", connection.closed()).await;
    let error = connection
        .browser()
        .call_raw("Test.after", Value::Null)
        .await
        .expect_err("closed");
    assert!(error.is_closed());
    let _ = child.wait().await;
}

/// A "browser" that exits at once: the connection closes and a call fails with `Closed`,
/// without waiting for its timeout.
#[tokio::test]
async fn a_browser_that_exits_closes_the_connection() {
    let (connection, mut child) = Connection::launch(sh("exit 3"), Config::default())
        .await
        .expect("launch sh");
    let started = Instant::now();
    let error = connection
        .browser()
        .call_raw("Browser.getVersion", Value::Null)
        .await
        .expect_err("nobody answers");
    assert!(error.is_closed(), "{error}");
    assert!(started.elapsed() < Duration::from_secs(2));
    let status = child.wait().await.expect("exit status");
    assert_eq!(status.code(), Some(3));
}

/// A program that cannot be started is a `Launch` error.
#[tokio::test]
async fn a_missing_program_is_a_launch_error() {
    let error = Connection::launch(Command::new("/nonexistent/chromium"), Config::default())
        .await
        .expect_err("no such program");
    assert_eq!(error.kind(), &ErrorKind::Launch);
    assert!(
        error.to_string().contains("/nonexistent/chromium"),
        "{error}"
    );
}

/// The child really gets the pipe on fds 3 and 4, even when the parent has something else
/// there (fds 3 and 4 are in use in this test process).
#[tokio::test]
async fn the_child_reads_fd_3_and_writes_fd_4() {
    // Echo back the first message, whatever its id, by reading it whole.
    let script = r#"
        msg=$(dd bs=1 count=26 <&3 2>/dev/null)
        printf '{"id":1,"result":{"got":"%s"}}\000' "$(printf '%s' "$msg" | tr -d '"{}:,')" >&4
        sleep 1
    "#;
    let (connection, mut child) = Connection::launch(sh(script), Config::default())
        .await
        .expect("launch sh");
    let answer = connection
        .browser()
        .call_raw("Test.x", Value::Null)
        .await
        .expect("answer");
    // The first 26 bytes of {"id":1,"method":"Test.x","params":{}}.
    assert_eq!(answer, json!({ "got": "id1methodTest.x" }));
    let _ = child.wait().await;
}
