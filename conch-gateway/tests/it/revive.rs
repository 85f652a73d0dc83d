//! A main browser that crashes while a person watches comes back at once, and the live
//! socket shows it (LAUNCH-8, PROTO-2, issue 28): `browser.status` says it is being
//! relaunched, then that it is back, and the frames of the live view resume.

use std::path::Path;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

use crate::live::{Socket, join, next_message, opened};

/// The pid of the main browser launched on `home` (its profile as user-data-dir, not one
/// of its helpers, which carry `--type=`).
fn main_browser_pid(home: &Path) -> Option<u32> {
    let want = format!(
        "--user-data-dir={}",
        home.join("browser").join("profile").display()
    );
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let args: Vec<String> = cmdline
                .split(|b| *b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            (args.contains(&want) && !args.iter().any(|a| a.starts_with("--type="))).then_some(pid)
        })
}

/// SIGKILLs the main browser launched on `home`; gives the pid it had.
pub(crate) fn kill_main_browser(home: &Path) -> u32 {
    let pid = main_browser_pid(home).expect("the main browser runs");
    conch_fixtures::browser::kill(pid);
    pid
}

/// Reads the socket until it has been quiet for `quiet` (the frames of a still page stop).
async fn drain(socket: &mut Socket, quiet: Duration) {
    while let Ok(message) = tokio::time::timeout(quiet, socket.next()).await {
        match message {
            Some(Ok(Message::Close(frame))) => panic!("the live socket closed: {frame:?}"),
            Some(Ok(_)) => {}
            other => panic!("the live socket ended: {other:?}"),
        }
    }
}

/// LAUNCH-8, PROTO-2 (issue 28): SIGKILL the main browser while a live socket watches:
/// with no tool call, the socket hears `browser.status` not running (relaunching), then
/// running again, and JPEG frames of the page come again.
#[tokio::test(flavor = "multi_thread")]
async fn launch_8_a_watching_live_socket_sees_the_reconnect_and_then_frames_again() {
    let (_pages, home, watched, _page) = opened("basic.html").await;
    let signed = watched.sign_in().await;
    let mut socket = join(watched.port, &signed, "mcp-stdio").await;
    // The first frames come, then the still page sends none.
    drain(&mut socket, Duration::from_millis(1500)).await;
    let pid = kill_main_browser(home.path());

    let mut statuses: Vec<Value> = Vec::new();
    let mut frames_after_down = 0;
    let heard = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match next_message(&mut socket).await {
                Message::Text(text) => {
                    let event: Value = serde_json::from_str(&text).expect("events are JSON");
                    if event["type"] == "browser.status" {
                        statuses.push(event);
                    }
                }
                Message::Binary(jpeg) if !statuses.is_empty() => {
                    assert!(jpeg.starts_with(&[0xff, 0xd8, 0xff]), "not a JPEG");
                    frames_after_down += 1;
                }
                Message::Close(frame) => panic!("the live socket closed: {frame:?}"),
                _ => {}
            }
            let back = statuses.iter().any(|s| s["running"] == true);
            if back && frames_after_down > 0 {
                return;
            }
        }
    })
    .await;
    assert!(
        heard.is_ok(),
        "no reconnect and frames within 30 s: statuses {statuses:?}, {frames_after_down} frames"
    );
    assert_eq!(statuses[0]["running"], false, "{statuses:?}");
    assert!(
        statuses[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("starting it again")),
        "{statuses:?}"
    );
    let new = main_browser_pid(home.path()).expect("a main browser runs again");
    assert_ne!(new, pid, "a new process");
    watched.client.finish().await;
}

/// LAUNCH-8, PROTO-2 (issue 28), in a real panel: SIGKILL the main browser while the
/// panel watches: the live view says the browser is being started again (the stale frame
/// gone), in a status region a screen reader announces, then shows the page live again,
/// with no tool call; the reconnecting state has no axe-core violations.
#[tokio::test(flavor = "multi_thread")]
async fn launch_8_the_panel_shows_the_reconnect_then_the_live_view_again() {
    let (_pages, session, _page) = crate::panel_browser::Session::watching("basic.html", &[]).await;
    session.wait_for_frame().await;
    // Whatever the view says while the browser is away, as it says it.
    session
        .js(
            "const w = document.getElementById('waiting'); window.__said = []; \
             new MutationObserver(() => { if (!w.hidden) window.__said.push(w.textContent); }) \
             .observe(w, { attributes: true, childList: true, characterData: true, subtree: true });",
        )
        .await;
    let pid = kill_main_browser(session.home.path());

    session
        .wait_until(
            "window.__said.some((t) => t.includes('starting it again'))",
            "the view saying the browser is being started again",
        )
        .await;
    // A screen reader hears it too: the sentence is in a status region (LIVE-10).
    assert_eq!(
        session
            .js("return document.getElementById('waiting').getAttribute('role');")
            .await,
        serde_json::json!("status"),
        "the reconnect is said to a screen reader"
    );
    session.person.assert_accessible("reconnecting").await;
    session.wait_for_frame().await;
    assert_ne!(
        main_browser_pid(session.home.path()),
        Some(pid),
        "a new browser"
    );
    session.finish().await;
}
