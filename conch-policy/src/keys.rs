//! Key chords as browser_press takes them (`Enter`, `Control+Shift+K`), and the two rules
//! that read them: which keys may be pressed on a secret field (SEC-5, AMB-13), and which
//! presses count as clicking the control they land on (HS-8, AMB-12).

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::error::{Error, ErrorKind};
use crate::verdict::{Refusal, RefusalCode, Verdict};

/// Modifier keys held during a press.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct Modifiers {
    /// Control (also `Ctrl`, and Playwright's `ControlOrMeta`).
    pub control: bool,
    /// Shift.
    pub shift: bool,
    /// Alt (also `Option`).
    pub alt: bool,
    /// Meta (also `Cmd`, `Command`, `Super`, `Win`).
    pub meta: bool,
}

impl Modifiers {
    /// Whether no modifier is held.
    pub fn none(self) -> bool {
        self == Self::default()
    }
}

/// One key press with its modifiers. Named keys are in their DOM spelling (`Enter`,
/// `ArrowLeft`, `Escape`); one-character keys are kept as given.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Chord {
    modifiers: Modifiers,
    key: String,
}

/// Navigation keys, which type nothing: allowed on a secret field (AMB-13).
const NAVIGATION_KEYS: &[&str] = &[
    "Tab",
    "Enter",
    "Escape",
    "ArrowUp",
    "ArrowDown",
    "ArrowLeft",
    "ArrowRight",
    "Home",
    "End",
    "PageUp",
    "PageDown",
];

/// Spellings a model may use, and the DOM name they stand for.
const ALIASES: &[(&str, &str)] = &[
    ("esc", "Escape"),
    ("return", "Enter"),
    ("up", "ArrowUp"),
    ("down", "ArrowDown"),
    ("left", "ArrowLeft"),
    ("right", "ArrowRight"),
    ("pgup", "PageUp"),
    ("pgdn", "PageDown"),
    ("pagedown", "PageDown"),
    ("pageup", "PageUp"),
    ("spacebar", " "),
    ("space", " "),
    ("del", "Delete"),
];

impl Chord {
    /// Reads `Key`, `Mod+Key` or `Mod+Mod+Key`; `Control++` is Control and the plus key.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let bad = || Error::new(ErrorKind::Keys, text);
        let (mods, key) = if text == "+" {
            ("", "+")
        } else if let Some(mods) = text.strip_suffix("++") {
            (mods, "+")
        } else {
            match text.rsplit_once('+') {
                Some((mods, key)) => (mods, key),
                None => ("", text),
            }
        };
        if key.is_empty() {
            return Err(bad());
        }
        let mut modifiers = Modifiers::default();
        for part in mods
            .split('+')
            .filter(|part| !part.is_empty() || !mods.is_empty())
        {
            match part.trim().to_ascii_lowercase().as_str() {
                "control" | "ctrl" | "controlormeta" => modifiers.control = true,
                "shift" => modifiers.shift = true,
                "alt" | "option" | "opt" => modifiers.alt = true,
                "meta" | "cmd" | "command" | "super" | "win" | "os" => modifiers.meta = true,
                _ => return Err(bad()),
            }
        }
        Ok(Self {
            modifiers,
            key: normalise_key(key),
        })
    }

    /// The modifiers held.
    pub fn modifiers(&self) -> Modifiers {
        self.modifiers
    }

    /// The key, in its DOM spelling for named keys.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Whether this press activates the control it lands on, as a click does: Enter or
    /// Space, whatever the modifiers (HS-8).
    pub fn activates(&self) -> bool {
        self.key == "Enter" || self.key == " "
    }
}

fn normalise_key(key: &str) -> String {
    if key.chars().count() == 1 {
        return key.to_owned();
    }
    let lower = key.to_ascii_lowercase();
    if let Some((_, name)) = ALIASES.iter().find(|(alias, _)| *alias == lower) {
        return (*name).to_owned();
    }
    if let Some(name) = NAVIGATION_KEYS
        .iter()
        .find(|name| name.eq_ignore_ascii_case(key))
    {
        return (*name).to_owned();
    }
    key.to_owned()
}

impl FromStr for Chord {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        Self::parse(text)
    }
}

impl fmt::Display for Chord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.modifiers;
        for (held, name) in [
            (m.control, "Control"),
            (m.alt, "Alt"),
            (m.meta, "Meta"),
            (m.shift, "Shift"),
        ] {
            if held {
                write!(f, "{name}+")?;
            }
        }
        match self.key.as_str() {
            " " => f.write_str("Space"),
            key => f.write_str(key),
        }
    }
}

/// Whether a press may go to a secret field (SEC-5, AMB-13). Allowed: Tab, Shift+Tab,
/// Enter, Escape, the arrows, Home, End, PageUp and PageDown, without other modifiers.
/// Refused: every key that types (letters, digits, Space, punctuation), every chord with
/// Control, Alt or Meta (Control+V pastes, and pasting is typing), and editing keys
/// (Backspace, Delete), which change the secret: that is the person's to do.
pub fn key_verdict_on_secret(chord: &Chord) -> Verdict {
    let m = chord.modifiers();
    let navigation = NAVIGATION_KEYS.contains(&chord.key());
    let allowed =
        navigation && !m.control && !m.alt && !m.meta && (!m.shift || chord.key() == "Tab");
    if allowed {
        Verdict::Allow
    } else {
        Verdict::Refuse(Refusal::about(RefusalCode::SecretKey, chord.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ges_5_chords_parse() {
        let chord = Chord::parse("Control+Shift+K").unwrap();
        assert!(chord.modifiers().control && chord.modifiers().shift);
        assert_eq!(chord.key(), "K");
        assert_eq!(Chord::parse("Control++").unwrap().key(), "+");
        assert_eq!(Chord::parse("+").unwrap().key(), "+");
        assert_eq!(Chord::parse("esc").unwrap().key(), "Escape");
        assert!(Chord::parse("").is_err());
        assert!(Chord::parse("Hyper+K").is_err());
        assert!(Chord::parse("Control+").is_err());
    }
}
