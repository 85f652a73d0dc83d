//! The live socket's commands and events (PROTO-8, PROTO-9).
//!
//! [`Command::parse`] reads one text message. Anything it cannot read (an unknown type,
//! malformed JSON, more than [`MAX_COMMAND_BYTES`], binary junk) is a [`CommandError`],
//! never a panic, and every one is answered with the same [`Event::invalid_command`].
//! Errors never quote the message: it may carry the person's typing (SEC-7).

use serde::{Deserialize, Serialize};

/// The largest command accepted, in bytes.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// One command from the panel. Its `Debug` never shows what the person typed or
/// answered (SEC-7): keys, text, a prompt's answer and find's words print as `…`.
#[derive(Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum Command {
    /// The panel's size in CSS pixels and its device pixel ratio.
    Size {
        /// Width.
        width: u32,
        /// Height.
        height: u32,
        /// Device pixel ratio.
        #[serde(default = "one")]
        dpr: f64,
    },
    /// The person takes over.
    Takeover,
    /// The person hands the browser back.
    Handback,
    /// A pointer event at a panel position.
    #[serde(rename_all = "camelCase")]
    Pointer {
        /// `down`, `up`, `move` or `wheel`.
        action: String,
        /// Panel x.
        x: f64,
        /// Panel y.
        y: f64,
        /// The button, if any.
        #[serde(default)]
        button: Option<String>,
        /// Wheel delta x.
        #[serde(default)]
        delta_x: f64,
        /// Wheel delta y.
        #[serde(default)]
        delta_y: f64,
    },
    /// A key going down or up.
    Key {
        /// `down` or `up`.
        action: String,
        /// The DOM key.
        key: String,
        /// The DOM code.
        #[serde(default)]
        code: String,
        /// Modifier bits.
        #[serde(default)]
        modifiers: u32,
    },
    /// Text inserted whole (IME, paste, "é日本").
    Text {
        /// The text.
        text: String,
    },
    /// Make a tab the conversation's active tab (TAB-10).
    Tab {
        /// Its id (`t2`).
        tab: String,
    },
    /// Answer the page's dialog.
    Dialog {
        /// Accept or dismiss.
        accept: bool,
        /// A prompt's answer.
        #[serde(default)]
        text: Option<String>,
    },
    /// Find in the page (LIVE-11); empty text clears.
    Find {
        /// What to find.
        text: String,
        /// Which way from the current match.
        #[serde(default)]
        direction: Direction,
    },
    /// Stop the agent.
    Stop,
    /// A command about the conversation's own browser (LIVE-16): `own: true` gives a
    /// chat a browser of its own, `own: false` takes it back. Its fields are kept as
    /// sent, so a field it doesn't know is no error (PROTO-8).
    Session(serde_json::Map<String, serde_json::Value>),
}

/// Which way find goes (LIVE-11).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Direction {
    /// The next match, wrapping to the first.
    #[default]
    Next,
    /// The match before, wrapping to the last.
    Previous,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const HIDDEN: &str = "…";
        match self {
            Self::Size { width, height, dpr } => f
                .debug_struct("Size")
                .field("width", width)
                .field("height", height)
                .field("dpr", dpr)
                .finish(),
            Self::Takeover => f.write_str("Takeover"),
            Self::Handback => f.write_str("Handback"),
            Self::Pointer { action, .. } => f
                .debug_struct("Pointer")
                .field("action", action)
                .finish_non_exhaustive(),
            Self::Key { action, .. } => f
                .debug_struct("Key")
                .field("action", action)
                .field("key", &HIDDEN)
                .finish_non_exhaustive(),
            Self::Text { .. } => f.debug_struct("Text").field("text", &HIDDEN).finish(),
            Self::Tab { tab } => f.debug_struct("Tab").field("tab", tab).finish(),
            Self::Dialog { accept, .. } => f
                .debug_struct("Dialog")
                .field("accept", accept)
                .field("text", &HIDDEN)
                .finish(),
            Self::Find { direction, .. } => f
                .debug_struct("Find")
                .field("text", &HIDDEN)
                .field("direction", direction)
                .finish(),
            Self::Stop => f.write_str("Stop"),
            Self::Session(_) => f.write_str("Session"),
        }
    }
}

fn one() -> f64 {
    1.0
}

/// Why a message from the panel is not a command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// The message is longer than [`MAX_COMMAND_BYTES`].
    #[error("The command is longer than 64 KiB; send a shorter one.")]
    TooLong,
    /// The message is binary, not UTF-8 text.
    #[error("The command is not text; send JSON text.")]
    NotText,
    /// The message is not a known command.
    #[error("Invalid command")]
    Invalid,
}

impl Command {
    /// Reads one text message from the panel.
    pub fn parse(message: &str) -> Result<Self, CommandError> {
        Self::parse_bytes(message.as_bytes())
    }

    /// Reads one message from the panel as it came off the socket.
    pub fn parse_bytes(message: &[u8]) -> Result<Self, CommandError> {
        if message.len() > MAX_COMMAND_BYTES {
            return Err(CommandError::TooLong);
        }
        let text = std::str::from_utf8(message).map_err(|_| CommandError::NotText)?;
        serde_json::from_str(text).map_err(|_| CommandError::Invalid)
    }
}

/// One event to the panel; frames travel as binary JPEG messages instead.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Event {
    /// Who drives, and the handoff that waits for the person, if one does.
    Status {
        /// `agent` or `person`.
        driver: String,
        /// The agent's reason for a handoff that waits for the person.
        #[serde(skip_serializing_if = "Option::is_none")]
        handoff: Option<String>,
        /// Whether the conversation's turn runs: an agent's call is in flight or a handoff
        /// waits. The panel shows Stop only then (LIVE-14, issue 28).
        running: bool,
    },
    /// The agent's pointer acted at a point of the viewport (LIVE-5).
    Cursor {
        /// Viewport x, CSS pixels.
        x: f64,
        /// Viewport y, CSS pixels.
        y: f64,
        /// What the pointer did: `click`, `hover`, `drag`, `type`, `select`.
        kind: String,
        /// What the agent is doing ("Typing in “Search”").
        caption: String,
    },
    /// An agent's step.
    Step(conch_browser::protocol::BrowserStep),
    /// A handoff.
    Handoff(conch_browser::protocol::BrowserHandoff),
    /// Find's result.
    Found {
        /// Matches in the page.
        count: u32,
        /// The current one, 1-based; 0 when none.
        index: u32,
    },
    /// The page's dialog, or none.
    Dialog {
        /// The dialog.
        dialog: Option<conch_browser::protocol::BrowserPageDialog>,
    },
    /// The conversation's tabs.
    Tabs(conch_browser::protocol::BrowserTab),
    /// Something went wrong.
    Error {
        /// One sentence.
        message: String,
    },
    /// The agent went away (its MCP client closed, or its session ended or was deleted):
    /// a handoff or question that waited is over and nothing more will come. Sent once,
    /// after the status that hands the wheel back.
    AgentLeft,
}

impl Event {
    /// The answer to any message that is not a command (PROTO-9).
    pub fn invalid_command() -> Self {
        Self::Error {
            message: "Invalid command".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// PROTO-8, LIVE-5, PROTO-12: the live events as golden JSON.
    /// HAND-8 (issue 28): the agent leaving is one additive event with only its type.
    #[test]
    fn hand_8_the_agent_leaving_is_one_event_of_its_own() {
        let json = serde_json::to_value(Event::AgentLeft).expect("JSON");
        assert_eq!(json, json!({ "type": "agentLeft" }));
    }

    #[test]
    fn proto_8_live_events_golden_json() {
        let events = vec![
            Event::Status {
                driver: "person".into(),
                handoff: Some("Sign in to Harbour Mail.".into()),
                running: true,
            },
            Event::Cursor {
                x: 192.0,
                y: 96.5,
                kind: "type".into(),
                caption: "Typing in “Search”".into(),
            },
            Event::Found { count: 3, index: 2 },
            Event::Dialog { dialog: None },
            Event::invalid_command(),
        ];
        insta::assert_json_snapshot!("live_events", events);
    }

    /// Every event variant, each a position in [`every_event`]: a new variant breaks
    /// this match, so it can't ship without an example and a snapshot below.
    fn event_index(event: &Event) -> usize {
        match event {
            Event::Status { .. } => 0,
            Event::Cursor { .. } => 1,
            Event::Step(_) => 2,
            Event::Handoff(_) => 3,
            Event::Found { .. } => 4,
            Event::Dialog { .. } => 5,
            Event::Tabs(_) => 6,
            Event::Error { .. } => 7,
            Event::AgentLeft => 8,
        }
    }

    /// How many arms [`event_index`] has.
    const EVENT_VARIANTS: usize = 9;

    /// One example of every event, in [`event_index`]'s order, with its snapshot's name.
    fn every_event() -> Vec<(&'static str, Event)> {
        use conch_browser::protocol::{
            BrowserActionKind, BrowserHandoff, BrowserPageDialog, BrowserSession, BrowserStep,
            BrowserTab, BrowserTabSummary,
        };
        let dialog = BrowserPageDialog {
            kind: "prompt".into(),
            message: "Your name?".into(),
            site: "shop.test".into(),
            default_text: Some("Ada".into()),
        };
        vec![
            (
                "live_event_status",
                Event::Status {
                    driver: "person".into(),
                    handoff: Some("Sign in to Harbour Mail.".into()),
                    running: true,
                },
            ),
            (
                "live_event_cursor",
                Event::Cursor {
                    x: 192.0,
                    y: 96.5,
                    kind: "click".into(),
                    caption: "Clicking “Checkout”".into(),
                },
            ),
            (
                "live_event_step",
                Event::Step(BrowserStep {
                    kind: BrowserActionKind::Click,
                    caption: "Clicked “Checkout”".into(),
                    tab: "t1".into(),
                    thumbnail: Some("data:image/jpeg;base64,AQID".into()),
                    change_summary: Some("The cart opened.".into()),
                    open_panel: true,
                }),
            ),
            (
                "live_event_handoff",
                Event::Handoff(BrowserHandoff {
                    reason: "Enter the card's security code.".into(),
                    auto: false,
                    outcome: Some("done".into()),
                }),
            ),
            ("live_event_found", Event::Found { count: 3, index: 2 }),
            (
                "live_event_dialog",
                Event::Dialog {
                    dialog: Some(dialog.clone()),
                },
            ),
            (
                "live_event_tabs",
                Event::Tabs(BrowserTab {
                    tabs: vec![
                        BrowserTabSummary {
                            id: "t1".into(),
                            title: "Shop".into(),
                            url: "https://shop.test/".into(),
                            active: false,
                        },
                        BrowserTabSummary {
                            id: "t2".into(),
                            title: "Cart".into(),
                            url: "https://shop.test/cart".into(),
                            active: true,
                        },
                    ],
                    backend: "local".into(),
                    dialog: Some(dialog),
                    session: Some(BrowserSession {
                        reason: "This chat has a browser of its own.".into(),
                        sites: vec!["shop.test".into()],
                    }),
                }),
            ),
            ("live_event_error", Event::invalid_command()),
            ("live_event_agent_left", Event::AgentLeft),
        ]
    }

    /// PROTO-8: every live event, each with its own golden JSON; one missing from
    /// [`every_event`] fails here, and a new variant doesn't compile until it is added.
    #[test]
    fn proto_8_live_every_event_has_a_golden_snapshot() {
        let events = every_event();
        let covered: Vec<usize> = events.iter().map(|(_, e)| event_index(e)).collect();
        assert_eq!(
            covered,
            (0..EVENT_VARIANTS).collect::<Vec<_>>(),
            "every event variant needs one example, in order"
        );
        for (name, event) in events {
            insta::assert_json_snapshot!(name, event);
        }
    }

    /// Every command variant, each a position in the examples below: a new variant breaks
    /// this match, so it can't ship without an example.
    fn command_index(command: &Command) -> usize {
        match command {
            Command::Size { .. } => 0,
            Command::Takeover => 1,
            Command::Handback => 2,
            Command::Pointer { .. } => 3,
            Command::Key { .. } => 4,
            Command::Text { .. } => 5,
            Command::Tab { .. } => 6,
            Command::Dialog { .. } => 7,
            Command::Find { .. } => 8,
            Command::Stop => 9,
            Command::Session(_) => 10,
        }
    }

    /// PROTO-8: one example of every command, as docs/live-protocol.md shows it, parses
    /// to its variant; one missing fails here.
    #[test]
    fn proto_8_live_every_command_has_an_example() {
        let examples = [
            r#"{"type":"size","width":1280,"height":800,"dpr":2}"#,
            r#"{"type":"takeover"}"#,
            r#"{"type":"handback"}"#,
            r#"{"type":"pointer","action":"wheel","x":640,"y":400,"deltaX":0,"deltaY":120}"#,
            r#"{"type":"key","action":"down","key":"Enter","code":"Enter","modifiers":0}"#,
            r#"{"type":"text","text":"é日本"}"#,
            r#"{"type":"tab","tab":"t2"}"#,
            r#"{"type":"dialog","accept":true,"text":"Ada"}"#,
            r#"{"type":"find","text":"apple","direction":"previous"}"#,
            r#"{"type":"stop"}"#,
            r#"{"type":"session","own":true}"#,
        ];
        let covered: Vec<usize> = examples
            .iter()
            .map(|text| command_index(&Command::parse(text).expect(text)))
            .collect();
        assert_eq!(covered, (0..11).collect::<Vec<_>>());
    }

    #[test]
    fn proto_9_unknown_command_gets_invalid_command() {
        assert_eq!(
            Command::parse(r#"{"type":"nope"}"#),
            Err(CommandError::Invalid)
        );
        assert_eq!(
            serde_json::to_value(Event::invalid_command()).unwrap(),
            json!({"type": "error", "message": "Invalid command"})
        );
    }

    #[test]
    fn proto_9_malformed_oversized_and_binary_are_errors_not_panics() {
        assert_eq!(Command::parse("{\"type\":"), Err(CommandError::Invalid));
        assert_eq!(Command::parse("[]"), Err(CommandError::Invalid));
        assert_eq!(
            Command::parse(r#"{"type":"size","width":-1,"height":2}"#),
            Err(CommandError::Invalid)
        );
        let long = format!(
            r#"{{"type":"text","text":"{}"}}"#,
            "a".repeat(MAX_COMMAND_BYTES)
        );
        assert_eq!(Command::parse(&long), Err(CommandError::TooLong));
        assert_eq!(
            Command::parse_bytes(&[0xff, 0xfe, 0x00, 0x80]),
            Err(CommandError::NotText)
        );
    }

    #[test]
    fn proto_8_each_command_parses() {
        let cases = [
            (
                r#"{"type":"size","width":800,"height":600,"dpr":2}"#,
                Command::Size {
                    width: 800,
                    height: 600,
                    dpr: 2.0,
                },
            ),
            (r#"{"type":"takeover"}"#, Command::Takeover),
            (r#"{"type":"handback"}"#, Command::Handback),
            (
                r#"{"type":"text","text":"é日本"}"#,
                Command::Text {
                    text: "é日本".into(),
                },
            ),
            (
                r#"{"type":"tab","tab":"t2"}"#,
                Command::Tab { tab: "t2".into() },
            ),
            (
                r#"{"type":"dialog","accept":true}"#,
                Command::Dialog {
                    accept: true,
                    text: None,
                },
            ),
            (
                r#"{"type":"find","text":"apple"}"#,
                Command::Find {
                    text: "apple".into(),
                    direction: Direction::Next,
                },
            ),
            (
                r#"{"type":"find","text":"apple","direction":"previous"}"#,
                Command::Find {
                    text: "apple".into(),
                    direction: Direction::Previous,
                },
            ),
            (r#"{"type":"stop"}"#, Command::Stop),
            (
                r#"{"type":"session"}"#,
                Command::Session(serde_json::Map::new()),
            ),
        ];
        for (text, command) in cases {
            assert_eq!(Command::parse(text), Ok(command), "{text}");
        }
        assert!(matches!(
            Command::parse(r#"{"type":"pointer","action":"down","x":100,"y":100,"button":"left"}"#),
            Ok(Command::Pointer {
                x: 100.0,
                y: 100.0,
                ..
            })
        ));
        assert!(matches!(
            Command::parse(r#"{"type":"key","action":"down","key":"Enter"}"#),
            Ok(Command::Key { modifiers: 0, .. })
        ));
    }

    #[test]
    fn proto_8_found_event_golden_json() {
        assert_eq!(
            serde_json::to_value(Event::Found { count: 3, index: 1 }).unwrap(),
            json!({"type": "found", "count": 3, "index": 1})
        );
    }

    /// PROTO-8: a session command is read whatever it carries (`own`, and fields a newer
    /// panel may add), never "Invalid command".
    #[test]
    fn proto_8_a_session_command_with_fields_is_a_session() {
        assert!(matches!(
            Command::parse(r#"{"type":"session","own":true,"task":"t-1"}"#),
            Ok(Command::Session(fields)) if fields.len() == 2
        ));
    }

    /// TAB-10 and LIVE-11 name the fields `tab`, `text` and `direction`: the old names are
    /// not commands.
    #[test]
    fn tab_10_and_live_11_use_the_requirements_field_names() {
        for old in [
            r#"{"type":"tab","id":"t2"}"#,
            r#"{"type":"find","query":"apple"}"#,
            r#"{"type":"find","text":"apple","direction":"sideways"}"#,
        ] {
            assert_eq!(Command::parse(old), Err(CommandError::Invalid), "{old}");
        }
    }

    /// SEC-7: what the person typed never shows when a command is printed for a log.
    #[test]
    fn sec_7_a_printed_command_hides_the_persons_input() {
        let canary = "CANARY-9b2e";
        for message in [
            format!(r#"{{"type":"text","text":"{canary}"}}"#),
            format!(r#"{{"type":"key","action":"down","key":"{canary}","code":"{canary}"}}"#),
            format!(r#"{{"type":"dialog","accept":true,"text":"{canary}"}}"#),
            format!(r#"{{"type":"find","text":"{canary}"}}"#),
        ] {
            let command = Command::parse(&message).expect("a command");
            let printed = format!("{command:?}");
            assert!(!printed.contains(canary), "{printed}");
        }
    }

    #[test]
    fn sec_7_errors_never_quote_the_message() {
        let canary = "CANARY-7f3a";
        let error =
            Command::parse(&format!(r#"{{"type":"text","text":"{canary}","x":1}}"#)).unwrap_err();
        assert!(!error.to_string().contains(canary));
    }
}
