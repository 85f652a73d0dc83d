//! A stand-in person at the panel, for the benches: signs in with a one-time link exactly
//! as a browser would (the cookie, and the session token the redirect's fragment hands
//! the panel's page), joins a conversation's live socket, and answers every question card
//! Yes, keeping each card it was asked (`bench real`'s `questions` column, issue 30).
//!
//! Deliberately not a panel: it never drives and never looks at the frames it gets; the
//! only commands it sends are the size a panel reports when it opens ([`PANEL`], which
//! shapes the tab and sizes the cast's frames as a real panel's does, LIVE-4) and
//! `answer`.

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use serde_json::{Value, json};

use crate::ws::{WsReader, WsWriter, http_get, ws_connect};

/// A signed-in session at the person's door: what a panel page holds after sign-in.
#[derive(Debug, Clone)]
pub(crate) struct Door {
    pub(crate) port: u16,
    /// The `Cookie` header's value: `conch_session_PORT=…`.
    pub(crate) cookie: String,
    /// The session token the page sends beside the cookie.
    pub(crate) token: String,
}

impl Door {
    /// Signs in at `port` with the one-time `code` of a sign-in link.
    pub(crate) fn sign_in(port: u16, code: &str) -> Result<Door, String> {
        let (status, head, _) = http_get(port, &format!("/signin?code={code}"))?;
        if status != 303 {
            return Err(format!("sign-in answered {status}"));
        }
        let header = |wanted: &str| {
            head.lines().find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case(wanted)
                    .then(|| value.trim().to_owned())
            })
        };
        let cookie = header("set-cookie")
            .and_then(|v| v.split(';').next().map(str::to_owned))
            .ok_or("sign-in set no cookie")?;
        let token = header("location")
            .and_then(|v| v.split_once("#session=").map(|(_, t)| t.to_owned()))
            .ok_or("sign-in's redirect carries no session token")?;
        Ok(Door {
            port,
            cookie,
            token,
        })
    }

    /// Signs in to the gateway running in `home` with a fresh link from
    /// `conch-gateway signin`, as a person who lost the first one would.
    pub(crate) fn sign_in_home(gateway: &Path, home: &Path) -> Result<Door, String> {
        let output = Command::new(gateway)
            .arg("signin")
            .arg("--home")
            .arg(home)
            .output()
            .map_err(|e| format!("could not run conch-gateway signin: {e}"))?;
        let text = String::from_utf8_lossy(&output.stdout);
        let link = text
            .split_whitespace()
            .find(|w| w.starts_with("http://127.0.0.1:"))
            .ok_or_else(|| {
                format!(
                    "conch-gateway signin printed no link: {}",
                    String::from_utf8_lossy(&output.stderr).trim()
                )
            })?;
        let (port, code) = link_parts(link)?;
        Door::sign_in(port, code)
    }

    /// Joins `conversation`'s live socket as the panel does: its own Origin, the cookie,
    /// and the token as the `conch.session.TOKEN` subprotocol.
    pub(crate) fn join(&self, conversation: &str) -> Result<WsReader, String> {
        let origin = format!("http://127.0.0.1:{}", self.port);
        let protocol = format!("conch.session.{}", self.token);
        ws_connect(
            self.port,
            &format!("/api/browser/live?conversation={conversation}"),
            &[
                ("Origin", &origin),
                ("Cookie", &self.cookie),
                ("Sec-WebSocket-Protocol", &protocol),
            ],
        )
    }
}

/// The port and the code of a sign-in link `http://127.0.0.1:PORT/signin?code=CODE`.
pub(crate) fn link_parts(link: &str) -> Result<(u16, &str), String> {
    let rest = link
        .strip_prefix("http://127.0.0.1:")
        .ok_or_else(|| format!("not a loopback link: {link}"))?;
    let (port, code) = rest
        .split_once("/signin?code=")
        .ok_or_else(|| format!("not a sign-in link: {link}"))?;
    let port = port.parse().map_err(|_| format!("no port in {link}"))?;
    Ok((port, code))
}

/// A question card the person was asked: its kind (`high-stakes`, `site`, …) and the
/// words it showed.
#[derive(Debug, Clone)]
pub(crate) struct Asked {
    pub(crate) kind: String,
    pub(crate) words: String,
}

/// The panel the person watches in: CSS pixels and device pixel ratio, a desktop
/// browser's side panel. The tab stays 1280×800 (1.6 × 800), as with no panel, so the
/// apps lay out as they do without the person (at 1120 px MkDocs-Material folds its
/// navigation tabs away); the frames are 800×500.
const PANEL: (u32, u32, f64) = (800, 500, 1.0);

/// The person at one conversation's live socket, answering Yes until dropped.
pub(crate) struct Person {
    asked: Arc<Mutex<Vec<Asked>>>,
    writer: WsWriter,
    reader: Option<JoinHandle<()>>,
}

impl Person {
    /// Joins `conversation` through `door` and starts answering.
    pub(crate) fn answer_yes(door: &Door, conversation: &str) -> Result<Person, String> {
        let mut socket = door.join(conversation)?;
        let writer = socket.writer.clone();
        let (width, height, dpr) = PANEL;
        let size = json!({ "type": "size", "width": width, "height": height, "dpr": dpr });
        writer
            .text(&size.to_string())
            .map_err(|e| format!("the person's panel could not report its size: {e}"))?;
        let asked = Arc::new(Mutex::new(Vec::new()));
        let (answers, seen) = (writer.clone(), Arc::clone(&asked));
        let reader = std::thread::spawn(move || {
            while let Ok((kind, bytes)) = socket.next() {
                if kind != 0x1 {
                    continue;
                }
                let Ok(card) = serde_json::from_slice::<Value>(&bytes) else {
                    continue;
                };
                if card["type"] != "question" {
                    continue;
                }
                let Some(choice) = yes_of(&card) else {
                    continue;
                };
                seen.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(Asked {
                        kind: card["kind"].as_str().unwrap_or_default().to_owned(),
                        words: card["words"]
                            .as_str()
                            .or_else(|| card["text"].as_str())
                            .unwrap_or_default()
                            .to_owned(),
                    });
                let answer = json!({ "type": "answer", "id": card["id"], "choice": choice });
                if answers.text(&answer.to_string()).is_err() {
                    return;
                }
            }
        });
        Ok(Person {
            asked,
            writer,
            reader: Some(reader),
        })
    }

    /// The cards asked so far, in order.
    pub(crate) fn asked(&self) -> Vec<Asked> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for Person {
    fn drop(&mut self) {
        let _ = self.writer.send(0x8, &1000u16.to_be_bytes());
        self.writer.shutdown();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// The card's Yes: `yes` when offered, else the narrowest allowing choice (`thisChat`).
fn yes_of(card: &Value) -> Option<&'static str> {
    let offered = |id: &str| {
        card["choices"]
            .as_array()
            .is_some_and(|choices| choices.iter().any(|c| c["id"] == id))
    };
    ["yes", "thisChat"].into_iter().find(|id| offered(id))
}
