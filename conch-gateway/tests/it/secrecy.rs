//! SEC-7 and LIVE-13 from the outside: what the person types, composes, answers and
//! searches through the live socket reaches the page and nothing else. The real gateway
//! runs with `RUST_LOG=trace`; afterwards every log, every event the socket carried, every
//! line the agent got and every file under the home is searched for each canary and for
//! the key codes of the person's keys.

use std::path::Path;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::live::{Socket, Watched, join};

/// Typed letter by letter, as key events with Shift held.
const KEYS: &str = "QZXJ";
/// Inserted whole, as an input method or a paste sends it.
const COMPOSED: &str = "composed-5c7e91";
/// The person's answer to the page's prompt().
const PROMPTED: &str = "prompted-a83f20";
/// What the person searches for.
const FOUND: &str = "searched-0b6d44";

/// Every text message the socket carried, as it came.
#[derive(Default)]
struct Heard(String);

impl Heard {
    /// Reads the socket until a text event satisfies `wanted` (within 30 s), keeping every
    /// text message on the way; gives that event.
    async fn until(
        &mut self,
        socket: &mut Socket,
        what: &str,
        wanted: impl Fn(&Value) -> bool,
    ) -> Value {
        tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                match socket.next().await {
                    Some(Ok(Message::Text(text))) => {
                        self.0.push_str(&text);
                        self.0.push('\n');
                        let event: Value = serde_json::from_str(&text).expect("events are JSON");
                        if wanted(&event) {
                            return event;
                        }
                    }
                    Some(Ok(Message::Close(frame))) => panic!("the live socket closed: {frame:?}"),
                    Some(Ok(_)) => {}
                    other => panic!("the live socket ended: {other:?}"),
                }
            }
        })
        .await
        .unwrap_or_else(|_| panic!("no {what} within 30 s; heard:\n{}", self.0))
    }

    /// Keeps what else arrives within `wait`.
    async fn drain(&mut self, socket: &mut Socket, wait: Duration) {
        let _ = tokio::time::timeout(wait, async {
            while let Some(Ok(message)) = socket.next().await {
                if let Message::Text(text) = message {
                    self.0.push_str(&text);
                    self.0.push('\n');
                }
            }
        })
        .await;
    }
}

async fn send(socket: &mut Socket, command: Value) {
    socket
        .send(Message::Text(command.to_string().into()))
        .await
        .expect("the live socket takes a message");
}

/// A key pressed and released.
async fn press(socket: &mut Socket, key: &str, modifiers: u32) {
    for action in ["down", "up"] {
        send(
            socket,
            json!({ "type": "key", "action": action, "key": key, "code": format!("Key{key}"), "modifiers": modifiers }),
        )
        .await;
    }
}

/// What must appear nowhere: the canaries, and each of the person's keys as DevTools or
/// the live protocol would name it (`KeyQ`, `"windowsVirtualKeyCode":81`, `"key":"Q"`).
fn needles() -> Vec<String> {
    let mut needles = vec![COMPOSED.to_owned(), PROMPTED.to_owned(), FOUND.to_owned()];
    for letter in KEYS.chars() {
        let code = u32::from(letter);
        needles.extend([
            format!("Key{letter}"),
            format!("\"windowsVirtualKeyCode\":{code}"),
            format!("\"nativeVirtualKeyCode\":{code}"),
            format!("\"key\":\"{letter}\""),
            format!("\"text\":\"{letter}\""),
            format!("\"unmodifiedText\":\"{letter}\""),
        ]);
    }
    needles
}

/// Where in `text` (named `place`) each needle shows, as lines for the failure message.
fn found_in(place: &str, text: &[u8], needles: &[String], out: &mut Vec<String>) {
    let wide = |s: &str| -> Vec<u8> { s.encode_utf16().flat_map(u16::to_le_bytes).collect() };
    for needle in needles {
        let hit = text
            .windows(needle.len())
            .position(|w| w == needle.as_bytes());
        let hit_wide = {
            let w = wide(needle);
            text.windows(w.len()).any(|x| x == w.as_slice())
        };
        if let Some(at) = hit {
            let from = at.saturating_sub(120);
            let to = (at + needle.len() + 120).min(text.len());
            out.push(format!(
                "{needle} in {place}: …{}…",
                String::from_utf8_lossy(&text[from..to])
            ));
        } else if hit_wide {
            out.push(format!("{needle} (UTF-16) in {place}"));
        }
    }
}

/// Every file under `dir`, recursively.
fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => files(&path, out),
            Ok(kind) if kind.is_file() => out.push(path),
            _ => {}
        }
    }
}

/// SEC-7, LIVE-13: with `RUST_LOG=trace`, the person takes over through the live socket,
/// types a canary letter by letter and another as composed text into a password field,
/// answers the page's prompt() with a third and searches a fourth. The page gets each
/// (it counts them); the agent's next result says only that the person used the browser
/// and find; and no canary, nor any key code of the person's keys, is in standard error,
/// `gateway.log`, the socket's events, anything the agent got, or any file under the home.
#[tokio::test(flavor = "multi_thread")]
async fn sec_7_the_persons_keys_text_answer_and_find_reach_no_log_event_result_or_file() {
    let pages = conch_fixtures::FixtureServer::start()
        .await
        .expect("fixture server");
    let home = tempfile::tempdir().expect("temp home");
    let mut watched = Watched::start_with(
        home.path(),
        &["--allow-localhost"],
        &[("RUST_LOG", Path::new("trace"))],
    )
    .await;
    let (page, error) = watched
        .client
        .call(
            "browser_open",
            json!({ "url": pages.url("person-typing.html") }),
        )
        .await;
    assert!(!error, "{page}");
    let cookie = watched.sign_in().await;
    let mut socket = join(watched.port, &cookie, "mcp-stdio").await;
    let mut heard = Heard::default();

    send(&mut socket, json!({ "type": "takeover" })).await;
    heard
        .until(&mut socket, "the person driving", |e| {
            e["type"] == "status" && e["driver"] == "person"
        })
        .await;
    for letter in KEYS.chars() {
        press(&mut socket, &letter.to_string(), 8).await;
    }
    send(&mut socket, json!({ "type": "text", "text": COMPOSED })).await;
    send(
        &mut socket,
        json!({ "type": "key", "action": "down", "key": "Enter", "code": "Enter" }),
    )
    .await;
    send(
        &mut socket,
        json!({ "type": "key", "action": "up", "key": "Enter", "code": "Enter" }),
    )
    .await;
    let asked = heard
        .until(&mut socket, "the page's prompt", |e| {
            e["type"] == "tabs" && e["dialog"]["kind"] == "prompt"
        })
        .await;
    assert_eq!(asked["dialog"]["message"], "Your name?", "{asked}");
    send(
        &mut socket,
        json!({ "type": "dialog", "accept": true, "text": PROMPTED }),
    )
    .await;
    heard
        .until(&mut socket, "the dialog answered", |e| {
            e["type"] == "dialog" && e["dialog"].is_null()
        })
        .await;
    send(&mut socket, json!({ "type": "find", "text": FOUND })).await;
    let found = heard
        .until(&mut socket, "find's answer", |e| e["type"] == "found")
        .await;
    assert_eq!(found["count"], 0, "{found}");
    send(&mut socket, json!({ "type": "handback" })).await;
    heard
        .until(&mut socket, "the agent driving", |e| {
            e["type"] == "status" && e["driver"] == "agent"
        })
        .await;

    // The page got all of it; the agent hears only that the person typed and searched.
    let (after, error) = watched.client.call("browser_read", json!({})).await;
    assert!(!error, "{after}");
    let typed = KEYS.len() + COMPOSED.len();
    assert!(
        after.contains(&format!("{typed} letters typed.")),
        "the typing never reached the field: {after}"
    );
    assert!(
        after.contains(&format!("Answered with {} letters.", PROMPTED.len())),
        "the answer never reached the page: {after}"
    );
    assert!(
        after.contains("The person used the browser"),
        "the agent is told the person typed: {after}"
    );
    assert!(
        after.contains("The person used find"),
        "the agent is told the person searched: {after}"
    );
    heard.drain(&mut socket, Duration::from_millis(500)).await;
    drop(socket);
    let transcript = watched.client.transcript.clone();
    watched.client.finish().await;

    let mut stderr = String::new();
    // The rest of standard error, up to its end (the gateway has stopped).
    while let Ok(Some(line)) =
        tokio::time::timeout(Duration::from_secs(5), watched.stderr.recv()).await
    {
        stderr.push_str(&line);
        stderr.push('\n');
    }
    let log = std::fs::read_to_string(home.path().join("gateway.log")).expect("gateway.log");
    assert!(
        log.contains("conch_cdp") && log.contains("Input.dispatchKeyEvent"),
        "the trace carries the DevTools traffic, so the search means something"
    );
    let needles = needles();
    let mut leaks = Vec::new();
    found_in("standard error", stderr.as_bytes(), &needles, &mut leaks);
    found_in(
        "the live socket's events",
        heard.0.as_bytes(),
        &needles,
        &mut leaks,
    );
    found_in(
        "what the agent got",
        transcript.as_bytes(),
        &needles,
        &mut leaks,
    );
    let mut all = Vec::new();
    files(home.path(), &mut all);
    for file in all {
        if let Ok(bytes) = std::fs::read(&file) {
            found_in(&file.display().to_string(), &bytes, &needles, &mut leaks);
        }
    }
    assert!(
        leaks.is_empty(),
        "the person's input leaked:\n{}",
        leaks.join("\n")
    );
}
