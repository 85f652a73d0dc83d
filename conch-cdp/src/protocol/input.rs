//! The `Input` domain: trusted keyboard and mouse events.
//!
//! The `Debug` output of the keyboard types hides what is typed, as the traces do (SEC-8).

use std::fmt;

use serde::Serialize;

use super::{Empty, command, string_enum};
use crate::redact::REDACTED;

/// `Input.insertText`: types text as if by an IME.
#[derive(Clone, Default, Serialize)]
pub struct InsertText {
    /// The text (never traced).
    pub text: String,
}
command!(InsertText, "Input.insertText", Empty);

impl fmt::Debug for InsertText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InsertText")
            .field("text", &REDACTED)
            .finish()
    }
}

string_enum! {
    /// The type of a [`DispatchKeyEvent`].
    pub enum KeyEventType {
        /// A key press that also produces text.
        KeyDown = "keyDown",
        /// A key release.
        KeyUp = "keyUp",
        /// A key press without text.
        RawKeyDown = "rawKeyDown",
        /// A character.
        Char = "char",
    }
}

/// `Input.dispatchKeyEvent`.
#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DispatchKeyEvent {
    /// The event type.
    #[serde(rename = "type")]
    pub event_type: KeyEventType,
    /// Modifiers: Alt=1, Ctrl=2, Meta=4, Shift=8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modifiers: Option<i64>,
    /// The text the key produces (never traced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The text without modifiers (never traced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unmodified_text: Option<String>,
    /// The DOM `code` (never traced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The DOM `key` (never traced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The Windows virtual key code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub windows_virtual_key_code: Option<i64>,
    /// The native virtual key code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_virtual_key_code: Option<i64>,
    /// Whether the event comes from auto-repeat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto_repeat: Option<bool>,
    /// Whether the key is on the keypad.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_keypad: Option<bool>,
    /// Editing commands to run (`"selectAll"`...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commands: Option<Vec<String>>,
}
command!(DispatchKeyEvent, "Input.dispatchKeyEvent", Empty);

impl DispatchKeyEvent {
    /// An event of `event_type` with nothing else set.
    pub fn new(event_type: KeyEventType) -> Self {
        DispatchKeyEvent {
            event_type,
            modifiers: None,
            text: None,
            unmodified_text: None,
            code: None,
            key: None,
            windows_virtual_key_code: None,
            native_virtual_key_code: None,
            auto_repeat: None,
            is_keypad: None,
            commands: None,
        }
    }
}

impl fmt::Debug for DispatchKeyEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hidden = |v: &Option<String>| v.as_ref().map(|_| REDACTED);
        f.debug_struct("DispatchKeyEvent")
            .field("event_type", &self.event_type)
            .field("modifiers", &self.modifiers)
            .field("text", &hidden(&self.text))
            .field("unmodified_text", &hidden(&self.unmodified_text))
            .field("code", &hidden(&self.code))
            .field("key", &hidden(&self.key))
            .field("commands", &self.commands)
            .finish_non_exhaustive()
    }
}

string_enum! {
    /// The type of a [`DispatchMouseEvent`].
    pub enum MouseEventType {
        /// A button press.
        MousePressed = "mousePressed",
        /// A button release.
        MouseReleased = "mouseReleased",
        /// A move.
        MouseMoved = "mouseMoved",
        /// A wheel turn.
        MouseWheel = "mouseWheel",
    }
}

string_enum! {
    /// A mouse button.
    pub enum MouseButton {
        /// No button.
        None = "none",
        /// The left button.
        Left = "left",
        /// The middle button.
        Middle = "middle",
        /// The right button.
        Right = "right",
        /// The back button.
        Back = "back",
        /// The forward button.
        Forward = "forward",
    }
}

/// `Input.dispatchMouseEvent`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DispatchMouseEvent {
    /// The event type.
    #[serde(rename = "type")]
    pub event_type: MouseEventType,
    /// X in CSS pixels of the viewport.
    pub x: f64,
    /// Y in CSS pixels of the viewport.
    pub y: f64,
    /// Modifiers: Alt=1, Ctrl=2, Meta=4, Shift=8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modifiers: Option<i64>,
    /// The button.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub button: Option<MouseButton>,
    /// The buttons held, as a bit field.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buttons: Option<i64>,
    /// The click count (1 for a click, 2 for a double click).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub click_count: Option<i64>,
    /// Wheel delta X.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta_x: Option<f64>,
    /// Wheel delta Y.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta_y: Option<f64>,
}
command!(DispatchMouseEvent, "Input.dispatchMouseEvent", Empty);

impl DispatchMouseEvent {
    /// An event of `event_type` at (`x`, `y`) with nothing else set.
    pub fn new(event_type: MouseEventType, x: f64, y: f64) -> Self {
        DispatchMouseEvent {
            event_type,
            x,
            y,
            modifiers: None,
            button: None,
            buttons: None,
            click_count: None,
            delta_x: None,
            delta_y: None,
        }
    }
}
