//! Which browser Conch drives: [`Backend`] (BE-1), as `browser.json` names it. Its own
//! module so that both the home (whose backup manifest depends on it, DATA-11) and the
//! store (which reads and writes it) can use it, while the store alone depends on the home.
//!
//! Deliberately absent: a backend's keys and addresses, which are sealed (DATA-6).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Which browser Conch drives (BE-1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// Conch's own local browser, launched headless on its own profile. The default.
    #[default]
    Local,
    /// The person's own Chrome, through its consented remote-debugging door.
    Chrome,
    /// A Browserbase cloud session.
    Browserbase,
    /// A Steel cloud session.
    Steel,
    /// Any browser at a DevTools address.
    Cdp,
}

impl Backend {
    /// The name used in `browser.json` and the settings API.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Local => "local",
            Backend::Chrome => "chrome",
            Backend::Browserbase => "browserbase",
            Backend::Steel => "steel",
            Backend::Cdp => "cdp",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
