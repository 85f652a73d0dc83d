//! What the person's panel sends, and what it does (LIVE-4, LIVE-8 … LIVE-12, LIVE-14,
//! LIVE-16, TAB-10, DLG-9, DLG-10, HAND-5, HAND-9, PROTO-8, PROTO-9, SEC-7).
//!
//! [`Control::command`] reads one message and answers with the events only its sender
//! needs (`found`, an `error`); what every watcher needs (status, tabs, dialogs) goes
//! through the view. The person's pointer, keys and text become [`Input`]s delivered in
//! order by one task per view ([`deliver`]): an input that raises a dialog of the page
//! waits there, and the inputs after it wait behind it until the person answers the dialog
//! (DLG-9). The first input takes over (LIVE-8).
//!
//! The person's input passes through here only on its way to the page: it is never logged,
//! stored, put in an event or shown to the model (SEC-7); [`Input`]'s `Debug` hides it.

use conch_browser::sync::lock;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use conch_browser::page::{call_in_world, dialog, input::key_def};
use conch_browser::{BrowserError, Conversation, OwnBrowser};
use conch_cdp::Session;
use conch_policy::{Point, Size, panel_to_viewport};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::command::{Command, Direction, Event};
use crate::hub::{View, browser_tab, shape};

/// How long one of the person's inputs may wait for the page: an input that raised a
/// dialog is answered only once the person answers the dialog.
const INPUT_WAIT: Duration = Duration::from_secs(600);

/// Two presses this close in time and place are a double click.
const DOUBLE_CLICK: Duration = Duration::from_millis(500);

/// What find answers while the agent acts (LIVE-12).
pub const FIND_WHILE_STEPPING: &str =
    "Find waits until Conch's current step is done; try again in a moment.";

/// What the session command answers when it asks a task to leave its own browser: a
/// task always browses in its errand (ERR-1).
pub const SESSION_TASK: &str =
    "A task always browses in a browser of its own; it can't be given the main browser.";

/// What a session command without a true or false `own` answers (PROTO-9).
pub const SESSION_WHICH: &str =
    "Say own: true to give this chat a browser of its own, or own: false to take it back.";

/// How long a plain takeover outlives the last socket that drove it, so a reload
/// resumes it (LIVE-8); then the wheel goes back to the agent, whose next result says so.
pub(crate) const TAKEOVER_GRACE: Duration = Duration::from_secs(3);

/// What the panel sends for a conversation, for one watcher (one socket). Cheap to
/// clone; the last clone dropped is the watcher gone.
#[derive(Clone, Debug)]
pub struct Control {
    view: Arc<View>,
    seat: Arc<Seat>,
}

/// One watcher's own: its id among the view's drivers, and the size of its window, with
/// which its pointer maps (each window its own size, LIVE-9).
#[derive(Debug)]
struct Seat {
    id: u64,
    view: Arc<View>,
    size: std::sync::Mutex<Option<Size>>,
}

impl Drop for Seat {
    fn drop(&mut self) {
        // Its screen no longer sizes the cast's frames.
        self.view
            .screens
            .send_if_modified(|screens| screens.remove(&self.id).is_some());
        let orphaned = {
            let mut drivers = lock(&self.view.drivers);
            drivers.remove(&self.id) && drivers.is_empty()
        };
        // A handoff never ends by a socket going away (HAND-5): only I'm done, its gate,
        // Stop or the agent's call ending it do. A plain takeover whose every driving
        // socket is gone goes back to the agent after a grace, so a reload resumes it.
        if !orphaned || self.view.wheel.state().handoff.is_some() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let view = Arc::clone(&self.view);
        runtime.spawn(async move {
            tokio::time::sleep(TAKEOVER_GRACE).await;
            let state = view.wheel.state();
            if !lock(&view.drivers).is_empty() || !state.person_drives || state.handoff.is_some()
            {
                return;
            }
            tracing::info!(target: "conch_live", conversation = view.conv().id(), "the person's every window left mid-takeover; handing back");
            view.wheel.person_left();
            release(&view).await;
        });
    }
}

/// What the person held goes: their keys and buttons go up, after their inputs still
/// waiting, which are delivered (what they typed just before I'm done is not lost); input
/// held behind a dialog is dropped (DLG-10); a dialog still waiting for them gets Cancel
/// and the agent's next result says so (DLG-10).
async fn release(view: &View) {
    lock(&view.drivers).clear();
    let pages = view.conv().pages_now().await;
    let behind_a_dialog = pages
        .iter()
        .any(|page| dialog::existing(page).is_some_and(|watch| watch.pending().is_some()));
    if behind_a_dialog {
        view.drop_held();
    }
    if view
        .inputs
        .try_send((view.held_epoch(), Input::LetGo))
        .is_err()
    {
        tracing::debug!(target: "conch_live", "the person's held keys could not be released: too much input waits");
    }
    for page in pages {
        if let Some(watch) = dialog::existing(&page) {
            watch.set_person_driving(false).await;
        }
    }
}

/// One of the person's inputs on its way to the page. Its `Debug` never shows what was
/// typed or where (SEC-7).
#[derive(Clone, PartialEq)]
pub(crate) enum Input {
    /// A pointer event at a viewport point.
    Pointer {
        action: PointerAction,
        at: (f64, f64),
        button: &'static str,
        delta: (f64, f64),
    },
    /// A key going down or up.
    Key {
        down: bool,
        key: String,
        code: String,
        key_code: i64,
        text: Option<String>,
        modifiers: u32,
    },
    /// Text inserted whole.
    Text(String),
    /// The person's hands are off the page (hand back, or their panel went away): every
    /// button and key of theirs still down goes up.
    LetGo,
}

impl fmt::Debug for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Input::Pointer { action, .. } => write!(f, "Pointer({action:?}, …)"),
            Input::Key { down, .. } => write!(f, "Key({}, …)", if *down { "down" } else { "up" }),
            Input::Text(_) => f.write_str("Text(…)"),
            Input::LetGo => f.write_str("LetGo"),
        }
    }
}

/// What the person's pointer did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PointerAction {
    Down,
    Up,
    Move,
    Wheel,
}

/// Modifier bits of the live protocol's `key` and DevTools' `Input.*` (the same):
/// Alt 1, Ctrl 2, Meta 4, Shift 8.
const ALT_CTRL_META: u32 = 1 | 2 | 4;
const SHIFT: u32 = 8;

impl Control {
    pub(crate) fn new(view: Arc<View>) -> Control {
        let id = view.next_seat();
        // A socket that joins a takeover nobody drives any more (a reload) resumes it.
        {
            let mut drivers = lock(&view.drivers);
            if drivers.is_empty() && view.wheel.state().person_drives {
                drivers.insert(id);
            }
        }
        let seat = Arc::new(Seat {
            id,
            view: Arc::clone(&view),
            size: std::sync::Mutex::new(None),
        });
        Control { view, seat }
    }

    /// Runs one message from the panel and gives the events for its sender. Anything that
    /// is not a command gets `{type:'error', message:'Invalid command'}` (PROTO-9); nothing
    /// here panics or ends the socket.
    pub async fn command(&self, message: &[u8]) -> Vec<Event> {
        let Ok(command) = Command::parse_bytes(message) else {
            return vec![Event::invalid_command()];
        };
        tracing::debug!(target: "conch_live", conversation = self.view.conv().id(), command = ?command, "live command");
        match command {
            Command::Size { width, height, dpr } => self.size(width, height, dpr).await,
            Command::Takeover => {
                self.take_over().await;
                Vec::new()
            }
            Command::Handback => {
                self.hand_back().await;
                Vec::new()
            }
            Command::Pointer {
                action,
                x,
                y,
                button,
                delta_x,
                delta_y,
            } => {
                let action = match action.as_str() {
                    "down" => PointerAction::Down,
                    "up" => PointerAction::Up,
                    "move" => PointerAction::Move,
                    "wheel" => PointerAction::Wheel,
                    _ => return vec![Event::invalid_command()],
                };
                let button = match button.as_deref() {
                    None | Some("left") => "left",
                    Some("right") => "right",
                    Some("middle") => "middle",
                    Some(_) => return vec![Event::invalid_command()],
                };
                // Each window's pointer maps with its own size (LIVE-9).
                let panel = (*lock(&self.seat.size)).or_else(|| self.view.wheel.panel());
                let at = panel_to_viewport(Point { x, y }, panel, self.view.wheel.viewport());
                self.input(Input::Pointer {
                    action,
                    at: (at.x, at.y),
                    button,
                    delta: (finite(delta_x), finite(delta_y)),
                })
                .await
            }
            Command::Key {
                action,
                key,
                modifiers,
                ..
            } => {
                let down = match action.as_str() {
                    "down" => true,
                    "up" => false,
                    _ => return vec![Event::invalid_command()],
                };
                // Keys an input method reports while composing type nothing themselves:
                // the composed text comes as `text`.
                let Some(def) = key_def(&key, modifiers & SHIFT != 0) else {
                    return Vec::new();
                };
                let text = def.text.filter(|_| down && modifiers & ALT_CTRL_META == 0);
                self.input(Input::Key {
                    down,
                    key: def.key,
                    code: def.code,
                    key_code: def.key_code,
                    text,
                    modifiers,
                })
                .await
            }
            Command::Text { text } => {
                if text.is_empty() {
                    return Vec::new();
                }
                self.input(Input::Text(text)).await
            }
            Command::Tab { tab } => self.tab(&tab).await,
            Command::Dialog { accept, text } => self.dialog(accept, text).await,
            Command::Find { text, direction } => self.find(&text, direction).await,
            Command::Stop => {
                // A waiting handoff ends "stopped" (HAND-9); the embedder interrupts the
                // turn, its call in flight included (LIVE-14).
                self.view.wheel.stop();
                self.view.turn.interrupt(self.view.conv().id());
                Vec::new()
            }
            Command::Session(fields) => self.session(&fields).await,
        }
    }

    /// `{type:'session', own}` (LIVE-16): gives the chat a browser of its own, or returns
    /// it to the main context; answered with its tabs and session as they are now
    /// (ERR-23). Only the person's panel sends this; no tool can (ERR-1).
    async fn session(&self, fields: &serde_json::Map<String, Value>) -> Vec<Event> {
        let Some(own) = fields.get("own").and_then(Value::as_bool) else {
            return vec![Event::Error {
                message: SESSION_WHICH.to_owned(),
            }];
        };
        let id = self.view.conv().id().to_owned();
        let now = self.view.browser.set_own_browser(&id, own).await;
        if now == OwnBrowser::Task && !own {
            return vec![Event::Error {
                message: SESSION_TASK.to_owned(),
            }];
        }
        // The other watchers see the switch with the view's next look at the tabs.
        vec![Event::Tabs(browser_tab(&self.view).await)]
    }

    /// `{type:'size', width, height, dpr}` (LIVE-4): the most recent size wins the
    /// viewport (AMB-11); this window's pointer maps with its own (LIVE-9), and its screen
    /// in device pixels sizes the cast's frames (issue 30).
    async fn size(&self, width: u32, height: u32, dpr: f64) -> Vec<Event> {
        if width == 0 || height == 0 || !dpr.is_finite() || dpr <= 0.0 {
            return vec![Event::invalid_command()];
        }
        *lock(&self.seat.size) = Some(Size::new(width, height));
        self.view.wheel.set_panel(Size::new(width, height));
        for page in self.view.conv().pages_now().await {
            shape(&self.view, &page).await;
        }
        let screen = conch_policy::panel_in_device_px(Size::new(width, height), dpr);
        // Told even when this screen is the same: the viewport, which bounds the frames,
        // may have changed with it.
        self.view.screens.send_modify(|screens| {
            screens.insert(self.seat.id, screen);
        });
        Vec::new()
    }

    /// The person takes the wheel (LIVE-8): the agent's next call waits (HAND-8) and the
    /// page's dialogs wait for the person (DLG-9).
    async fn take_over(&self) {
        lock(&self.view.drivers).insert(self.seat.id);
        if !self.view.wheel.state().person_drives {
            self.view.wheel.take_over();
        }
        if let Some((_, page)) = self.view.conv().active_page().await
            && let Some(watch) = dialog::existing(&page)
        {
            watch.set_person_driving(true).await;
        }
    }

    /// The person hands back: a dialog still waiting for them gets Cancel and the agent's
    /// next result says so (DLG-10); a handoff ends "I'm done" (HAND-5).
    async fn hand_back(&self) {
        self.view.wheel.hand_back();
        release(&self.view).await;
    }

    async fn input(&self, input: Input) -> Vec<Event> {
        self.take_over().await;
        // Only the moment is kept (HAND-4), never the input (SEC-7).
        self.view.wheel.person_input();
        if self
            .view
            .inputs
            .try_send((self.view.held_epoch(), input))
            .is_err()
        {
            return vec![Event::Error {
                message: "The page is not taking input right now (too much is waiting); answer its dialog or wait a moment.".to_owned(),
            }];
        }
        Vec::new()
    }

    async fn tab(&self, tab: &str) -> Vec<Event> {
        match self.view.conv().switch(tab).await {
            Ok(_) => {
                self.view.wheel.person_switched_tab(tab);
                vec![Event::Tabs(browser_tab(&self.view).await)]
            }
            Err(BrowserError::NoSuchTab(_)) => vec![Event::Error {
                message: format!("There is no tab {tab} in this conversation."),
            }],
            Err(e) => vec![Event::Error {
                message: e.to_string(),
            }],
        }
    }

    async fn dialog(&self, accept: bool, text: Option<String>) -> Vec<Event> {
        let Some((_, page)) = self.view.conv().active_page().await else {
            return vec![no_dialog()];
        };
        let Some(watch) = dialog::existing(&page) else {
            return vec![no_dialog()];
        };
        if !accept && watch.pending().is_some() {
            // What waited behind the dialog is dropped with it (DLG-10).
            self.view.drop_held();
        }
        match watch.answer(accept, text).await {
            Ok(true) => vec![Event::Dialog { dialog: None }],
            Ok(false) => vec![no_dialog()],
            Err(e) => vec![Event::Error {
                message: format!("The dialog could not be answered ({e})."),
            }],
        }
    }

    async fn find(&self, text: &str, direction: Direction) -> Vec<Event> {
        if self.view.wheel.agent_busy() {
            return vec![Event::Error {
                message: FIND_WHILE_STEPPING.to_owned(),
            }];
        }
        let Some((_, page)) = self.view.conv().active_page().await else {
            return vec![Event::Error {
                message: "No page is open to find in.".to_owned(),
            }];
        };
        match find_on(&page, text, direction == Direction::Previous).await {
            Some((count, index)) => {
                if !text.is_empty() {
                    // Finding scrolls the page: the agent's next result says so (LIVE-13).
                    self.view.wheel.person_used_find();
                }
                vec![Event::Found { count, index }]
            }
            None => vec![Event::Error {
                message: "The page did not answer the find; try again.".to_owned(),
            }],
        }
    }
}

fn no_dialog() -> Event {
    Event::Error {
        message: "No dialog of the page is waiting.".to_owned(),
    }
}

fn finite(v: f64) -> f64 {
    if v.is_finite() { v } else { 0.0 }
}

/// Finds `text` on the page with its own `window.find` (which selects and scrolls to the
/// match), from the current match on, wrapping; counts every match and which one shows.
/// Empty text clears the selection (LIVE-11). Runs in Conch's isolated world, where the
/// page cannot redefine what it uses; the words are its argument, never part of its text,
/// so no trace shows them (SEC-7).
const FIND: &str = r"function (text, backwards) {
  const sel = getSelection();
  if (!text) { sel.removeAllRanges(); return { count: 0, index: 0 }; }
  const found = window.find(text, false, backwards, true, false, true, false);
  const needle = text.toLowerCase();
  const skip = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE']);
  const walker = document.createTreeWalker(document.body || document.documentElement, NodeFilter.SHOW_TEXT);
  const current = found && sel.rangeCount ? sel.getRangeAt(0) : null;
  let count = 0, index = 0;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement && skip.has(node.parentElement.tagName)) continue;
    const hay = node.data.toLowerCase();
    for (let at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + needle.length)) {
      count += 1;
      if (current && current.startContainer === node && current.startOffset === at) index = count;
    }
  }
  return { count, index };
}";

#[derive(Deserialize)]
struct Found {
    count: u32,
    index: u32,
}

async fn find_on(page: &Session, text: &str, backwards: bool) -> Option<(u32, u32)> {
    let value = call_in_world(page, FIND, &[json!(text), json!(backwards)])
        .await
        .ok()?;
    let found: Found = serde_json::from_value(value).ok()?;
    Some((found.count, found.index))
}

/// Delivers the person's inputs to the conversation's active page, one at a time and in
/// order, until the view goes away. While the page's dialog waits for the person, input
/// waits behind it (DLG-9).
pub(crate) async fn deliver(
    conv: Conversation,
    mut queue: mpsc::Receiver<(u64, Input)>,
    held: Arc<AtomicU64>,
) {
    let mut pointer = PointerState::default();
    let mut conv = conv;
    while let Some((epoch, input)) = queue.recv().await {
        // Input that waited behind a dialog the person cancelled, or past the end of
        // their takeover, is dropped, never delivered (DLG-10).
        if epoch != held.load(Ordering::SeqCst) {
            continue;
        }
        // The person's input goes where the conversation browses now (LIVE-16).
        if conv.moved() {
            conv = conv.here();
        }
        let Some((tab, page)) = conv.active_page().await else {
            continue;
        };
        if let Some(watch) = dialog::existing(&page) {
            while watch.pending().is_some() {
                watch.until_answered(Duration::from_secs(1)).await;
                if conv.active_page().await.map(|(t, _)| t).as_deref() != Some(tab.as_str()) {
                    break;
                }
            }
            if epoch != held.load(Ordering::SeqCst) {
                continue;
            }
        }
        if let Err(e) = send(&page, &input, &mut pointer).await {
            // The error names the method, never the input (SEC-7).
            tracing::debug!(target: "conch_live", error = %e, "the person's input did not reach the page");
        }
    }
}

/// Which buttons are down, and the last press, for double clicks and drags; where the
/// pointer last was, and which keys are down (DOM key, code, key code), to release them
/// when the person lets go.
#[derive(Debug, Default)]
struct PointerState {
    buttons: u32,
    last_press: Option<(Instant, (f64, f64), &'static str)>,
    clicks: u32,
    at: (f64, f64),
    keys: Vec<(String, String, i64)>,
}

/// Sends the up of every button and key the person still holds down on `page`.
async fn let_go(page: &Session, held: &mut PointerState) -> Result<(), conch_cdp::Error> {
    let at = held.at;
    for (bit, button) in [(1, "left"), (2, "right"), (4, "middle")] {
        if held.buttons & bit == 0 {
            continue;
        }
        held.buttons &= !bit;
        let params = json!({
            "type": "mouseReleased", "x": at.0, "y": at.1, "button": button,
            "buttons": held.buttons, "clickCount": held.clicks.max(1),
        });
        page.call_raw_with_timeout("Input.dispatchMouseEvent", params, INPUT_WAIT)
            .await?;
    }
    while let Some((key, code, key_code)) = held.keys.pop() {
        let params = json!({
            "type": "keyUp", "key": key, "code": code,
            "windowsVirtualKeyCode": key_code, "nativeVirtualKeyCode": key_code,
        });
        page.call_raw_with_timeout("Input.dispatchKeyEvent", params, INPUT_WAIT)
            .await?;
    }
    Ok(())
}

fn button_bit(button: &str) -> u32 {
    match button {
        "left" => 1,
        "right" => 2,
        "middle" => 4,
        _ => 0,
    }
}

async fn send(
    page: &Session,
    input: &Input,
    pointer: &mut PointerState,
) -> Result<(), conch_cdp::Error> {
    let (method, params) = match input {
        Input::Pointer {
            action,
            at,
            button,
            delta,
        } => {
            pointer.at = *at;
            let (kind, button, clicks) = match action {
                PointerAction::Down => {
                    let again = pointer.last_press.is_some_and(|(when, where_, b)| {
                        when.elapsed() < DOUBLE_CLICK
                            && b == *button
                            && (where_.0 - at.0).abs() < 5.0
                            && (where_.1 - at.1).abs() < 5.0
                    });
                    pointer.clicks = if again { pointer.clicks + 1 } else { 1 };
                    pointer.last_press = Some((Instant::now(), *at, button));
                    pointer.buttons |= button_bit(button);
                    ("mousePressed", *button, pointer.clicks)
                }
                PointerAction::Up => {
                    pointer.buttons &= !button_bit(button);
                    ("mouseReleased", *button, pointer.clicks.max(1))
                }
                PointerAction::Move => {
                    let held = match pointer.buttons {
                        0 => "none",
                        b if b & 1 != 0 => "left",
                        b if b & 2 != 0 => "right",
                        _ => "middle",
                    };
                    ("mouseMoved", held, 0)
                }
                PointerAction::Wheel => ("mouseWheel", "none", 0),
            };
            let mut params = json!({
                "type": kind,
                "x": at.0,
                "y": at.1,
                "button": button,
                "buttons": pointer.buttons,
                "clickCount": clicks,
            });
            if *action == PointerAction::Wheel {
                params["deltaX"] = json!(delta.0);
                params["deltaY"] = json!(delta.1);
            }
            ("Input.dispatchMouseEvent", params)
        }
        Input::Key {
            down,
            key,
            code,
            key_code,
            text,
            modifiers,
        } => {
            let held = (key.clone(), code.clone(), *key_code);
            if *down {
                if !pointer.keys.contains(&held) {
                    pointer.keys.push(held);
                }
            } else {
                pointer.keys.retain(|k| *k != held);
            }
            let mut params = json!({
                "type": if *down { "keyDown" } else { "keyUp" },
                "key": key,
                "code": code,
                "windowsVirtualKeyCode": key_code,
                "nativeVirtualKeyCode": key_code,
                "modifiers": modifiers,
            });
            if let Some(text) = text {
                params["text"] = json!(text);
                params["unmodifiedText"] = json!(text);
            }
            ("Input.dispatchKeyEvent", params)
        }
        Input::Text(text) => ("Input.insertText", json!({ "text": text })),
        Input::LetGo => return let_go(page, pointer).await,
    };
    page.call_raw_with_timeout(method, params, INPUT_WAIT)
        .await
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sec_7_an_input_never_prints_what_was_typed() {
        let typed = Input::Text("canary-5e1f".to_owned());
        let key = Input::Key {
            down: true,
            key: "q".to_owned(),
            code: "KeyQ".to_owned(),
            key_code: 81,
            text: Some("q".to_owned()),
            modifiers: 0,
        };
        let printed = format!("{typed:?} {key:?}");
        assert!(!printed.contains("canary"), "{printed}");
        assert!(!printed.contains("KeyQ"), "{printed}");
    }
}
