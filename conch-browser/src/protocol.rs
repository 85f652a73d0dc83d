//! The protocol: the events conch-browser sends to the embedder's [`EventSink`] and over the
//! gateway (PROTO-2), at [`PROTOCOL_VERSION`] 5 (PROTO-1), with camelCase field names
//! (PROTO-12). A reader of a log drops steps whose action kind it does not know (PROTO-4).

use serde::{Deserialize, Serialize};

/// The protocol version; additions are additive and do not change it (PROTO-1).
pub const PROTOCOL_VERSION: u32 = 5;

/// What kind of action a step was (PROTO-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum BrowserActionKind {
    /// Opened an address.
    Navigate,
    /// Clicked something.
    Click,
    /// Typed into a field.
    Type,
    /// Chose an option.
    Select,
    /// Pressed a key.
    Press,
    /// Scrolled the page.
    Scroll,
    /// Read the page.
    Read,
    /// Took a picture of the page.
    Screenshot,
    /// Waited for the page.
    Wait,
    /// Went back or forward.
    History,
    /// Hovered over something.
    Hover,
    /// Dragged something.
    Drag,
    /// Uploaded a file.
    Upload,
    /// Opened, switched or closed a tab.
    Tab,
    /// Filled a form.
    Form,
}

/// One step the agent took, shown in the chat log (`browser.step`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserStep {
    /// What kind of action it was.
    pub kind: BrowserActionKind,
    /// One line a person reads.
    pub caption: String,
    /// The tab it happened in.
    pub tab: String,
    /// Where the thumbnail was saved, if one was.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub thumbnail: Option<String>,
    /// What changed on the page, if anything.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub change_summary: Option<String>,
    /// The conversation's first browsing: the panel opens by itself (LIVE-7).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub open_panel: bool,
}

/// The browser passed between agent and person (`browser.handoff`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserHandoff {
    /// Why the person was asked to take over.
    pub reason: String,
    /// Whether Conch asked on its own (a sign-in, a captcha) rather than the agent.
    pub auto: bool,
    /// How it ended, once it has.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub outcome: Option<String>,
}

/// Whether the browser runs and on what (`browser.status`, PROTO-7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserStatus {
    /// Whether the browser runs.
    pub running: bool,
    /// The backend it runs on.
    pub backend: String,
    /// One sentence for the person.
    pub message: String,
    /// The conversation's first browsing: the panel opens by itself (LIVE-7).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub open_panel: bool,
    /// While Chromium downloads (LAUNCH-4): bytes done and the archive's size when known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub download: Option<BrowserDownload>,
}

/// How far Chromium's download has come (LAUNCH-4), in `browser.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserDownload {
    /// Bytes downloaded so far.
    pub done: u64,
    /// The archive's size, when known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub total: Option<u64>,
}

/// What a permission question is about (PROTO-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PermissionKind {
    /// Acting on a site.
    Site,
    /// A high-stakes action (paying, sending, deleting).
    HighStakes,
    /// Uploading a file.
    Upload,
    /// Acting in the person's own Chrome.
    OwnChrome,
}

/// A question to the person before the agent acts (`permission.requested.browser`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserPermission {
    /// What the question is about.
    pub kind: PermissionKind,
    /// The site it concerns.
    pub site: String,
    /// Whether allowing lends another site's sign-in to an errand (ERR-4).
    pub lends_sign_in: bool,
}

/// A dialog the page opened (alert, confirm, prompt, beforeunload).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserPageDialog {
    /// Which kind of dialog.
    pub kind: String,
    /// Its text (the page's words: the panel draws them under the site's name, DLG-15).
    pub message: String,
    /// The site of the frame that raised it (DLG-9).
    #[serde(default)]
    pub site: String,
    /// A prompt's default text.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub default_text: Option<String>,
}

/// Why a person's session is open, and on which sites (PROTO-6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserSession {
    /// Why.
    pub reason: String,
    /// The sites it covers.
    pub sites: Vec<String>,
}

/// One tab as the panel shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserTabSummary {
    /// The tab's id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its address.
    pub url: String,
    /// Whether it is the active tab.
    pub active: bool,
}

/// A conversation's browser as the panel shows it (PROTO-6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BrowserTab {
    /// The conversation's tabs.
    pub tabs: Vec<BrowserTabSummary>,
    /// The backend it runs on.
    pub backend: String,
    /// The dialog the active page shows, if any.
    pub dialog: Option<BrowserPageDialog>,
    /// The person's session, if one is open.
    pub session: Option<BrowserSession>,
}

/// One event of the protocol, tagged by its `type` (PROTO-2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum BrowserEvent {
    /// An agent's step.
    #[serde(rename = "browser.step")]
    Step(BrowserStep),
    /// A handoff.
    #[serde(rename = "browser.handoff")]
    Handoff(BrowserHandoff),
    /// The browser's status.
    #[serde(rename = "browser.status")]
    Status(BrowserStatus),
    /// A question before the agent acts.
    #[serde(rename = "permission.requested.browser")]
    PermissionRequested(BrowserPermission),
}

/// Receives the protocol's events: the chat log and transcript (PROTO-2).
pub trait EventSink: Send + Sync + std::fmt::Debug {
    /// Takes one event of conversation `conversation`; a sink must not block the browser.
    fn send(&self, conversation: &str, event: BrowserEvent);
}

/// A log line that could not be read as an event.
#[derive(Debug, thiserror::Error)]
#[error("Line {line} of the browser log is not a protocol event: {reason}.")]
pub struct ReadError {
    /// The 1-based line number.
    pub line: usize,
    /// What was wrong with it.
    pub reason: String,
}

/// Reads a log of one event per line, dropping steps whose action kind it does not
/// know instead of failing (PROTO-4). Other malformed lines are an error.
pub fn read_events(log: &str) -> Result<Vec<BrowserEvent>, ReadError> {
    let mut events = Vec::new();
    for (index, text) in log
        .lines()
        .enumerate()
        .filter(|(_, text)| !text.trim().is_empty())
    {
        let error = |reason: String| ReadError {
            line: index + 1,
            reason,
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| error(e.to_string()))?;
        let is_step = value.get("type").and_then(serde_json::Value::as_str) == Some("browser.step");
        let kind_known = value
            .get("kind")
            .is_some_and(|kind| serde_json::from_value::<BrowserActionKind>(kind.clone()).is_ok());
        if is_step && !kind_known {
            continue;
        }
        events.push(serde_json::from_value(value).map_err(|e| error(e.to_string()))?);
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn step(kind: BrowserActionKind) -> BrowserEvent {
        BrowserEvent::Step(BrowserStep {
            kind,
            caption: "Clicked Sign in".into(),
            tab: "t1".into(),
            thumbnail: Some("browser/shots/1.jpg".into()),
            change_summary: Some("Opened the sign-in form".into()),
            open_panel: false,
        })
    }

    #[test]
    fn proto_1_protocol_version_is_5() {
        assert_eq!(PROTOCOL_VERSION, 5);
    }

    #[test]
    fn proto_2_step_handoff_and_status_golden_json() {
        assert_eq!(
            serde_json::to_value(step(BrowserActionKind::Click)).unwrap(),
            json!({"type": "browser.step", "kind": "click", "caption": "Clicked Sign in", "tab": "t1",
                   "thumbnail": "browser/shots/1.jpg", "changeSummary": "Opened the sign-in form"})
        );
        let handoff = BrowserEvent::Handoff(BrowserHandoff {
            reason: "Sign in".into(),
            auto: true,
            outcome: Some("handedBack".into()),
        });
        assert_eq!(
            serde_json::to_value(handoff).unwrap(),
            json!({"type": "browser.handoff", "reason": "Sign in", "auto": true, "outcome": "handedBack"})
        );
        let status = BrowserEvent::Status(BrowserStatus {
            running: true,
            backend: "local".into(),
            message: "The browser is running.".into(),
            open_panel: false,
            download: None,
        });
        assert_eq!(
            serde_json::to_value(status).unwrap(),
            json!({"type": "browser.status", "running": true, "backend": "local",
                   "message": "The browser is running."})
        );
    }

    #[test]
    fn live_7_the_first_event_carries_the_open_panel_flag_and_later_ones_do_not() {
        let first = BrowserEvent::Step(BrowserStep {
            open_panel: true,
            ..match step(BrowserActionKind::Navigate) {
                BrowserEvent::Step(step) => step,
                _ => unreachable!("a step"),
            }
        });
        let value = serde_json::to_value(first).unwrap();
        assert_eq!(value["openPanel"], json!(true));
        let later = serde_json::to_value(step(BrowserActionKind::Click)).unwrap();
        assert!(later.get("openPanel").is_none(), "{later}");
        let wheel = crate::Wheel::default();
        assert!(wheel.first_browse(), "the first browse opens the panel");
        assert!(!wheel.first_browse(), "later ones do not");
    }

    /// PROTO-2, PROTO-5, PROTO-6, PROTO-7, PROTO-12: every event and `BrowserTab` as
    /// golden JSON, so a field renamed or dropped shows in review.
    #[test]
    fn proto_2_every_event_golden_json() {
        let events = vec![
            step(BrowserActionKind::Type),
            BrowserEvent::Handoff(BrowserHandoff {
                reason: "Pay the invoice.".into(),
                auto: false,
                outcome: None,
            }),
            BrowserEvent::Status(BrowserStatus {
                running: true,
                backend: "steel".into(),
                message: "The browser is running.".into(),
                open_panel: true,
                download: None,
            }),
            BrowserEvent::PermissionRequested(BrowserPermission {
                kind: PermissionKind::HighStakes,
                site: "shop.test".into(),
                lends_sign_in: false,
            }),
        ];
        insta::assert_json_snapshot!("protocol_events", events);
        let tab = BrowserTab {
            tabs: vec![BrowserTabSummary {
                id: "t2".into(),
                title: "Checkout".into(),
                url: "https://shop.test/checkout".into(),
                active: true,
            }],
            backend: "local".into(),
            dialog: Some(BrowserPageDialog {
                kind: "prompt".into(),
                message: "Your name?".into(),
                site: "shop.test".into(),
                default_text: Some("Ada".into()),
            }),
            session: None,
        };
        insta::assert_json_snapshot!("protocol_browser_tab", tab);
    }

    #[test]
    fn proto_3_action_kinds_include_hover_drag_upload_tab_form() {
        let kinds = [
            (BrowserActionKind::Hover, "hover"),
            (BrowserActionKind::Drag, "drag"),
            (BrowserActionKind::Upload, "upload"),
            (BrowserActionKind::Tab, "tab"),
            (BrowserActionKind::Form, "form"),
        ];
        for (kind, name) in kinds {
            assert_eq!(serde_json::to_value(kind).unwrap(), json!(name));
        }
    }

    #[test]
    fn proto_4_reader_drops_steps_of_unknown_kind() {
        let known = serde_json::to_string(&step(BrowserActionKind::Form)).unwrap();
        let unknown = r#"{"type":"browser.step","kind":"teleport","caption":"x","tab":"t1"}"#;
        let log = format!("{known}\n{unknown}\n{known}\n");
        let events = read_events(&log).unwrap();
        assert_eq!(
            events,
            vec![step(BrowserActionKind::Form), step(BrowserActionKind::Form)]
        );
        let error = read_events("not json").unwrap_err();
        assert_eq!(error.line, 1);
    }

    #[test]
    fn proto_5_permission_golden_json() {
        let permission = BrowserEvent::PermissionRequested(BrowserPermission {
            kind: PermissionKind::OwnChrome,
            site: "bank.test".into(),
            lends_sign_in: true,
        });
        assert_eq!(
            serde_json::to_value(permission).unwrap(),
            json!({"type": "permission.requested.browser", "kind": "ownChrome", "site": "bank.test",
                   "lendsSignIn": true})
        );
        assert_eq!(
            serde_json::to_value(PermissionKind::Upload).unwrap(),
            json!("upload")
        );
    }

    #[test]
    fn proto_6_browser_tab_golden_json() {
        let tab = BrowserTab {
            tabs: vec![BrowserTabSummary {
                id: "t1".into(),
                title: "Shop".into(),
                url: "http://shop.test/".into(),
                active: true,
            }],
            backend: "local".into(),
            dialog: Some(BrowserPageDialog {
                kind: "confirm".into(),
                message: "Leave?".into(),
                site: "shop.test".into(),
                default_text: None,
            }),
            session: Some(BrowserSession {
                reason: "Sign in".into(),
                sites: vec!["shop.test".into()],
            }),
        };
        assert_eq!(
            serde_json::to_value(tab).unwrap(),
            json!({"tabs": [{"id": "t1", "title": "Shop", "url": "http://shop.test/", "active": true}],
                   "backend": "local", "dialog": {"kind": "confirm", "message": "Leave?", "site": "shop.test"},
                   "session": {"reason": "Sign in", "sites": ["shop.test"]}})
        );
    }
}
