//! Trusted input through CDP `Input.*`: the key table that turns a chord (`Control+Shift+K`,
//! `Enter`, `a`) into `Input.dispatchKeyEvent` calls, and the mouse sequences of a click,
//! double click, right click, hover, wheel and press-move-release.
//!
//! Deliberately absent: synthetic DOM events. Everything here is input the browser itself
//! delivers, with `isTrusted` true, as a person's would be.

use std::time::Duration;

use conch_cdp::Session;
use conch_cdp::protocol::input::{
    DispatchKeyEvent, DispatchMouseEvent, InsertText, KeyEventType, MouseButton, MouseEventType,
};
use conch_policy::{Chord, Modifiers};

/// How long one input call may wait for the page before it counts as held up (by a
/// dialog the input raised, DLG-13).
pub const INPUT_CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// One key of the table: its DOM `key`, its DOM `code`, its Windows virtual key code, and
/// the text it types (none for named keys that type nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyDef {
    /// The DOM `key` value.
    pub key: String,
    /// The DOM `code` value (the physical key).
    pub code: String,
    /// The Windows virtual key code Chromium reports as `keyCode`.
    pub key_code: i64,
    /// The text the key types, if any.
    pub text: Option<String>,
}

/// Named keys: DOM key, DOM code, virtual key code, text.
const NAMED: &[(&str, &str, i64, Option<&str>)] = &[
    ("Enter", "Enter", 13, Some("\r")),
    ("Tab", "Tab", 9, None),
    ("Escape", "Escape", 27, None),
    ("Backspace", "Backspace", 8, None),
    ("Delete", "Delete", 46, None),
    ("Insert", "Insert", 45, None),
    (" ", "Space", 32, Some(" ")),
    ("ArrowUp", "ArrowUp", 38, None),
    ("ArrowDown", "ArrowDown", 40, None),
    ("ArrowLeft", "ArrowLeft", 37, None),
    ("ArrowRight", "ArrowRight", 39, None),
    ("Home", "Home", 36, None),
    ("End", "End", 35, None),
    ("PageUp", "PageUp", 33, None),
    ("PageDown", "PageDown", 34, None),
    ("Shift", "ShiftLeft", 16, None),
    ("Control", "ControlLeft", 17, None),
    ("Alt", "AltLeft", 18, None),
    ("Meta", "MetaLeft", 91, None),
    ("CapsLock", "CapsLock", 20, None),
    ("ContextMenu", "ContextMenu", 93, None),
];

/// Punctuation: unshifted character, shifted character, DOM code, virtual key code.
const PUNCTUATION: &[(char, char, &str, i64)] = &[
    (';', ':', "Semicolon", 186),
    ('=', '+', "Equal", 187),
    (',', '<', "Comma", 188),
    ('-', '_', "Minus", 189),
    ('.', '>', "Period", 190),
    ('/', '?', "Slash", 191),
    ('`', '~', "Backquote", 192),
    ('[', '{', "BracketLeft", 219),
    ('\\', '|', "Backslash", 220),
    (']', '}', "BracketRight", 221),
    ('\'', '"', "Quote", 222),
];

/// Digits' shifted characters on a US layout, `0` to `9`.
const SHIFTED_DIGITS: [char; 10] = [')', '!', '@', '#', '$', '%', '^', '&', '*', '('];

/// Looks `key` up (a DOM key name, or one character) for a press with `shift` held.
/// Letters pressed with Shift type their capital, as on a keyboard. `None` for a name the
/// table does not know.
pub fn key_def(key: &str, shift: bool) -> Option<KeyDef> {
    if let Some(&(k, code, vk, text)) = NAMED.iter().find(|(k, ..)| *k == key) {
        return Some(KeyDef {
            key: k.to_owned(),
            code: code.to_owned(),
            key_code: vk,
            text: text.map(str::to_owned),
        });
    }
    if let Some(n) = key.strip_prefix('F').and_then(|n| n.parse::<i64>().ok())
        && (1..=24).contains(&n)
    {
        return Some(KeyDef {
            key: key.to_owned(),
            code: key.to_owned(),
            key_code: 111 + n,
            text: None,
        });
    }
    let mut chars = key.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return None;
    };
    Some(char_def(c, shift))
}

/// The key for one character; characters off the US layout get no code and key code 0,
/// and type themselves.
fn char_def(c: char, shift: bool) -> KeyDef {
    let def = |key: char, code: String, vk: i64| KeyDef {
        key: key.to_string(),
        code,
        key_code: vk,
        text: Some(key.to_string()),
    };
    if c.is_ascii_alphabetic() {
        let upper = c.to_ascii_uppercase();
        let key = if shift || c.is_ascii_uppercase() {
            upper
        } else {
            c
        };
        return def(key, format!("Key{upper}"), i64::from(u32::from(upper)));
    }
    if let Some(d) = c.to_digit(10) {
        let key = if shift { SHIFTED_DIGITS[d as usize] } else { c };
        return def(key, format!("Digit{d}"), 48 + i64::from(d));
    }
    if let Some(i) = SHIFTED_DIGITS.iter().position(|s| *s == c) {
        return def(c, format!("Digit{i}"), 48 + i as i64);
    }
    if let Some(&(_, shifted, code, vk)) = PUNCTUATION.iter().find(|(p, s, ..)| *p == c || *s == c)
    {
        let key = if shift { shifted } else { c };
        return def(key, code.to_owned(), vk);
    }
    if c == ' ' {
        return def(' ', "Space".to_owned(), 32);
    }
    def(c, String::new(), 0)
}

/// The CDP modifier bit field: Alt=1, Ctrl=2, Meta=4, Shift=8.
pub fn modifier_bits(m: Modifiers) -> i64 {
    i64::from(m.alt) | i64::from(m.control) << 1 | i64::from(m.meta) << 2 | i64::from(m.shift) << 3
}

/// The modifier keys of `m`, in the order they go down.
fn modifier_keys(m: Modifiers) -> Vec<(&'static str, Modifiers)> {
    let mut held = Modifiers::default();
    let mut keys = Vec::new();
    if m.control {
        held.control = true;
        keys.push(("Control", held));
    }
    if m.alt {
        held.alt = true;
        keys.push(("Alt", held));
    }
    if m.meta {
        held.meta = true;
        keys.push(("Meta", held));
    }
    if m.shift {
        held.shift = true;
        keys.push(("Shift", held));
    }
    keys
}

fn key_event(kind: KeyEventType, def: &KeyDef, modifiers: i64, text: bool) -> DispatchKeyEvent {
    let mut event = DispatchKeyEvent::new(kind);
    event.key = Some(def.key.clone());
    event.code = (!def.code.is_empty()).then(|| def.code.clone());
    event.windows_virtual_key_code = Some(def.key_code);
    event.native_virtual_key_code = Some(def.key_code);
    event.modifiers = (modifiers != 0).then_some(modifiers);
    if text {
        event.text.clone_from(&def.text);
        event.unmodified_text.clone_from(&def.text);
    }
    event
}

/// Presses `chord` on whatever has focus: modifiers down, the key down and up, modifiers
/// up. A key that types (a character, Enter, Space) types it only without Control, Alt or
/// Meta, as a keyboard does.
///
/// # Errors
/// [`InputError::UnknownKey`] for a key name the table lacks, or a DevTools failure.
pub async fn press_chord(page: &Session, chord: &Chord) -> Result<(), InputError> {
    let m = chord.modifiers();
    let def = key_def(chord.key(), m.shift).ok_or_else(|| UnknownKey(chord.key().to_owned()))?;
    let bits = modifier_bits(m);
    let types = def.text.is_some() && !m.control && !m.alt && !m.meta;
    let mut held = Held::new(page);
    for (name, now) in modifier_keys(m) {
        if let Some(d) = key_def(name, false) {
            held.key_down(
                key_event(KeyEventType::RawKeyDown, &d, modifier_bits(now), false),
                &d,
            )
            .await?;
        }
    }
    let down = if types {
        KeyEventType::KeyDown
    } else {
        KeyEventType::RawKeyDown
    };
    held.key_down(key_event(down, &def, bits, types), &def)
        .await?;
    held.key_up(key_event(KeyEventType::KeyUp, &def, bits, false), &def)
        .await?;
    let mut now = m;
    for (name, _) in modifier_keys(m).into_iter().rev() {
        match name {
            "Control" => now.control = false,
            "Alt" => now.alt = false,
            "Meta" => now.meta = false,
            _ => now.shift = false,
        }
        if let Some(d) = key_def(name, false) {
            held.key_up(
                key_event(KeyEventType::KeyUp, &d, modifier_bits(now), false),
                &d,
            )
            .await?;
        }
    }
    Ok(())
}

/// Types `text` key by key (keydown, keypress, input, keyup for each character), for
/// targets that are not text fields, such as a canvas (GES-14).
///
/// # Errors
/// A DevTools failure.
pub async fn type_keys(page: &Session, text: &str) -> Result<(), InputError> {
    for c in text.chars() {
        let c = if c == '\n' { '\r' } else { c };
        let def = if c == '\r' {
            key_def("Enter", false).unwrap_or_else(|| char_def(c, false))
        } else {
            let mut def = char_def(c, false);
            def.key = c.to_string();
            def.text = Some(c.to_string());
            def
        };
        let mut held = Held::new(page);
        held.key_down(key_event(KeyEventType::KeyDown, &def, 0, true), &def)
            .await?;
        held.key_up(key_event(KeyEventType::KeyUp, &def, 0, false), &def)
            .await?;
    }
    Ok(())
}

/// Selects everything in the focused field (the editor's own select-all command) and
/// types `text` over it as one input, as an IME would; an empty `text` deletes the
/// selection.
///
/// # Errors
/// A DevTools failure.
pub async fn replace_focused_text(page: &Session, text: &str) -> Result<(), InputError> {
    select_all_focused(page).await?;
    insert_over_selection(page, text).await
}

/// Selects everything in the focused field (the editor's own select-all command).
///
/// # Errors
/// A DevTools failure.
pub async fn select_all_focused(page: &Session) -> Result<(), InputError> {
    let a = char_def('a', false);
    let mut down = key_event(KeyEventType::RawKeyDown, &a, 0, false);
    down.commands = Some(vec!["selectAll".to_owned()]);
    let mut held = Held::new(page);
    held.key_down(down, &a).await?;
    held.key_up(key_event(KeyEventType::KeyUp, &a, 0, false), &a)
        .await
}

/// Types `text` over the focused field's selection as one input, as an IME would; an
/// empty `text` deletes the selection.
///
/// # Errors
/// A DevTools failure.
pub async fn insert_over_selection(page: &Session, text: &str) -> Result<(), InputError> {
    if text.is_empty() {
        let delete = key_def("Delete", false).unwrap_or_else(|| char_def('\u{7f}', false));
        let mut held = Held::new(page);
        held.key_down(
            key_event(KeyEventType::RawKeyDown, &delete, 0, false),
            &delete,
        )
        .await?;
        held.key_up(key_event(KeyEventType::KeyUp, &delete, 0, false), &delete)
            .await?;
    } else {
        page.call_with_timeout(
            &InsertText {
                text: text.to_owned(),
            },
            INPUT_CALL_TIMEOUT,
        )
        .await?;
    }
    Ok(())
}

async fn send_key(page: &Session, event: DispatchKeyEvent) -> Result<(), InputError> {
    page.call_with_timeout(&event, INPUT_CALL_TIMEOUT).await?;
    Ok(())
}

/// A mouse button gesture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Press {
    /// One left click.
    Left,
    /// A left double click.
    Double,
    /// One right click (the context menu).
    Right,
}

async fn mouse(page: &Session, event: DispatchMouseEvent) -> Result<(), InputError> {
    page.call_with_timeout(&event, INPUT_CALL_TIMEOUT).await?;
    Ok(())
}

fn mouse_event(
    kind: MouseEventType,
    (x, y): (f64, f64),
    button: MouseButton,
    buttons: i64,
    clicks: i64,
) -> DispatchMouseEvent {
    let mut event = DispatchMouseEvent::new(kind, x, y);
    event.button = Some(button);
    event.buttons = Some(buttons);
    if clicks > 0 {
        event.click_count = Some(clicks);
    }
    event
}

/// Moves the pointer to `at` (viewport CSS pixels) without pressing anything.
///
/// # Errors
/// A DevTools failure.
pub async fn move_to(page: &Session, at: (f64, f64)) -> Result<(), InputError> {
    mouse(
        page,
        mouse_event(MouseEventType::MouseMoved, at, MouseButton::None, 0, 0),
    )
    .await
}

/// Moves to `at` and clicks there as `press` says.
///
/// # Errors
/// A DevTools failure.
pub async fn click(page: &Session, at: (f64, f64), press: Press) -> Result<(), InputError> {
    move_to(page, at).await?;
    press_at(page, at, press).await
}

/// Clicks at `at` as `press` says, the pointer already there (moved by [`move_to`]).
///
/// # Errors
/// A DevTools failure.
pub async fn press_at(page: &Session, at: (f64, f64), press: Press) -> Result<(), InputError> {
    let (button, bits) = match press {
        Press::Right => (MouseButton::Right, 2),
        Press::Left | Press::Double => (MouseButton::Left, 1),
    };
    let rounds = if press == Press::Double { 2 } else { 1 };
    let mut held = Held::new(page);
    for count in 1..=rounds {
        held.press(mouse_event(
            MouseEventType::MousePressed,
            at,
            button.clone(),
            bits,
            count,
        ))
        .await?;
        held.release(mouse_event(
            MouseEventType::MouseReleased,
            at,
            button.clone(),
            0,
            count,
        ))
        .await?;
    }
    Ok(())
}

/// Presses the left button at `at`.
///
/// # Errors
/// A DevTools failure.
pub async fn left_down(page: &Session, at: (f64, f64)) -> Result<(), InputError> {
    move_to(page, at).await?;
    mouse(
        page,
        mouse_event(MouseEventType::MousePressed, at, MouseButton::Left, 1, 1),
    )
    .await
}

/// Moves with the left button held.
///
/// # Errors
/// A DevTools failure.
pub async fn drag_move(page: &Session, at: (f64, f64)) -> Result<(), InputError> {
    mouse(
        page,
        mouse_event(MouseEventType::MouseMoved, at, MouseButton::Left, 1, 0),
    )
    .await
}

/// Releases the left button at `at`.
///
/// # Errors
/// A DevTools failure.
pub async fn left_up(page: &Session, at: (f64, f64)) -> Result<(), InputError> {
    mouse(
        page,
        mouse_event(MouseEventType::MouseReleased, at, MouseButton::Left, 0, 1),
    )
    .await
}

/// What one gesture holds down in a page: the keys whose down went without their up yet,
/// and the mouse button pressed and not released. However the gesture ends (done, failed,
/// or its future dropped because the call was cancelled, the person pressed Stop or the
/// client hung up), dropping it sends the up of everything still held, so no key or
/// button stays down in the page after the call (GES-1, GES-5, LIVE-14).
///
/// A down counts as held from the moment it is sent (its answer may never come), and an
/// up counts as sent from the moment it is sent (the browser delivers it even when its
/// answer is held up behind a dialog).
#[derive(Debug)]
pub struct Held {
    page: Session,
    keys: Vec<KeyDef>,
    button: Option<(MouseButton, (f64, f64))>,
}

impl Held {
    /// Nothing held yet, in `page`.
    pub fn new(page: &Session) -> Held {
        Held {
            page: page.clone(),
            keys: Vec::new(),
            button: None,
        }
    }

    /// Sends a key's down (`keyDown` or `rawKeyDown`) for `def`.
    async fn key_down(&mut self, event: DispatchKeyEvent, def: &KeyDef) -> Result<(), InputError> {
        self.keys.push(def.clone());
        send_key(&self.page, event).await
    }

    /// Sends a key's up for `def`.
    async fn key_up(&mut self, event: DispatchKeyEvent, def: &KeyDef) -> Result<(), InputError> {
        if let Some(at) = self.keys.iter().rposition(|k| k == def) {
            self.keys.remove(at);
        }
        send_key(&self.page, event).await
    }

    /// Sends a button's press.
    async fn press(&mut self, event: DispatchMouseEvent) -> Result<(), InputError> {
        let button = event.button.clone().unwrap_or(MouseButton::Left);
        self.button = Some((button, (event.x, event.y)));
        mouse(&self.page, event).await
    }

    /// Sends a button's release.
    async fn release(&mut self, event: DispatchMouseEvent) -> Result<(), InputError> {
        self.button = None;
        mouse(&self.page, event).await
    }

    /// Presses the left button at `at`, the pointer moved there first.
    ///
    /// # Errors
    /// A DevTools failure.
    pub async fn left_down(&mut self, at: (f64, f64)) -> Result<(), InputError> {
        move_to(&self.page, at).await?;
        self.press(mouse_event(
            MouseEventType::MousePressed,
            at,
            MouseButton::Left,
            1,
            1,
        ))
        .await
    }

    /// Moves to `at` with the left button held.
    ///
    /// # Errors
    /// A DevTools failure.
    pub async fn drag_move(&mut self, at: (f64, f64)) -> Result<(), InputError> {
        if let Some((_, last)) = self.button.as_mut() {
            *last = at;
        }
        drag_move(&self.page, at).await
    }

    /// Releases the left button at `at`.
    ///
    /// # Errors
    /// A DevTools failure.
    pub async fn left_up(&mut self, at: (f64, f64)) -> Result<(), InputError> {
        self.release(mouse_event(
            MouseEventType::MouseReleased,
            at,
            MouseButton::Left,
            0,
            1,
        ))
        .await
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.keys.is_empty() && self.button.is_none() {
            return;
        }
        // No runtime (a test's teardown): nothing can be sent, and the page goes with it.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let page = self.page.clone();
        let mut keys = std::mem::take(&mut self.keys);
        let button = self.button.take();
        tracing::debug!(target: "conch_browser", keys = keys.len(), button = button.is_some(), "a gesture ended midway: what it held is released");
        runtime.spawn(async move {
            if let Some((button, at)) = button {
                let _ = mouse(
                    &page,
                    mouse_event(MouseEventType::MouseReleased, at, button, 0, 1),
                )
                .await;
            }
            // The last down goes up first, each with the modifiers still held after it.
            while let Some(def) = keys.pop() {
                let mut still = Modifiers::default();
                for k in &keys {
                    match k.key.as_str() {
                        "Control" => still.control = true,
                        "Alt" => still.alt = true,
                        "Meta" => still.meta = true,
                        "Shift" => still.shift = true,
                        _ => {}
                    }
                }
                let up = key_event(KeyEventType::KeyUp, &def, modifier_bits(still), false);
                let _ = send_key(&page, up).await;
            }
        });
    }
}

/// Turns the wheel by (`dx`, `dy`) with the pointer at `at`.
///
/// # Errors
/// A DevTools failure.
pub async fn wheel(page: &Session, at: (f64, f64), dx: f64, dy: f64) -> Result<(), InputError> {
    move_to(page, at).await?;
    let mut event = DispatchMouseEvent::new(MouseEventType::MouseWheel, at.0, at.1);
    event.delta_x = Some(dx);
    event.delta_y = Some(dy);
    mouse(page, event).await
}

/// A key name the table does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKey(pub String);

/// Why input could not be sent.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The key is not in the table.
    #[error(
        "Conch doesn't know the key “{0}”; use a DOM key name such as Enter, Tab, Escape, ArrowDown, F5 or a single character."
    )]
    UnknownKey(String),
    /// The browser did not take the input.
    #[error(transparent)]
    Cdp(#[from] conch_cdp::Error),
}

impl From<UnknownKey> for InputError {
    fn from(key: UnknownKey) -> Self {
        InputError::UnknownKey(key.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ges_5_key_table() {
        let k = key_def("k", true).unwrap();
        assert_eq!(
            (k.key.as_str(), k.code.as_str(), k.key_code),
            ("K", "KeyK", 75)
        );
        let enter = key_def("Enter", false).unwrap();
        assert_eq!(enter.text.as_deref(), Some("\r"));
        assert_eq!(key_def("F5", false).unwrap().key_code, 116);
        assert_eq!(key_def("1", true).unwrap().key, "!");
        assert_eq!(key_def("/", false).unwrap().code, "Slash");
        assert!(key_def("Frobnicate", false).is_none());
        let bits = modifier_bits(Chord::parse("Control+Shift+K").unwrap().modifiers());
        assert_eq!(bits, 2 | 8);
    }
}
