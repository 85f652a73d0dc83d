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

impl std::str::FromStr for Backend {
    type Err = String;

    /// The backend a person names; anything else is refused with one sentence. Browser
    /// Use Cloud is not offered (BE-9), and says so.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Ok(match name {
            "local" => Backend::Local,
            "chrome" => Backend::Chrome,
            "browserbase" => Backend::Browserbase,
            "steel" => Backend::Steel,
            "cdp" => Backend::Cdp,
            "browser-use" | "browseruse" | "browser-use-cloud" => {
                return Err(
                    "Browser Use Cloud is not offered as a backend: use local, chrome, browserbase, steel or cdp"
                        .to_owned(),
                );
            }
            other => {
                return Err(format!(
                    "“{other}” is not a backend: use local, chrome, browserbase, steel or cdp"
                ));
            }
        })
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BE-9: there is no Browser Use Cloud backend; naming it is refused with a sentence
    /// that says so, in the settings file as on the command line.
    #[test]
    fn be_9_browser_use_is_refused_as_a_backend_with_a_sentence() {
        let e = "browser-use".parse::<Backend>().expect_err("not offered");
        assert!(e.contains("Browser Use Cloud is not offered"), "{e}");
        assert!(serde_json::from_str::<Backend>("\"browser-use\"").is_err());
        for name in ["local", "chrome", "browserbase", "steel", "cdp"] {
            assert_eq!(name.parse::<Backend>().map(Backend::as_str), Ok(name));
        }
        assert!(
            "opera"
                .parse::<Backend>()
                .is_err_and(|e| e.contains("is not a backend"))
        );
    }
}
