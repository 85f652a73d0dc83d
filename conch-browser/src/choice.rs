//! Which backend drives the browser, as a name and as what it can do (BE-1): [`Backend`]
//! is the person's choice as `browser.json` keeps it, [`Abilities`] what a backend allows.
//! A leaf of the crate: the home, the store and the backend seam import it, it imports
//! none of them (issue 29: no circle between the home, the backends and the errors).
//!
//! Deliberately absent: reaching a backend ([`crate::backend`]).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::guard::GuardMode;

/// What a backend can do (BE-1). The runtime asks these, not which backend runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Abilities {
    /// How its pages are contained: the guard's proxy (a browser Conch launches) or the
    /// CDP rules alone (a browser no proxy can be put in front of).
    pub guard: GuardMode,
    /// Whether Conch may make new browser contexts in it (errands; your own Chrome may
    /// not, ERR-6).
    pub new_contexts: bool,
    /// Whether its downloads land on this machine's disk; where not, they are refused
    /// with a sentence (DL-5).
    pub downloads_to_disk: bool,
    /// Whether Conch may auto-attach and discover its targets. In the person's own Chrome
    /// it may not: only the pages Conch made are attached, by name (BE-13, NET-9).
    pub discovers_targets: bool,
    /// Whether Conch's tabs carry the visible badge "Conch is using this tab" (BE-14).
    pub badge: bool,
}

impl Abilities {
    /// Conch's own local browser: the proxy, every ability.
    pub const LOCAL: Abilities = Abilities {
        guard: GuardMode::Proxy,
        new_contexts: true,
        downloads_to_disk: true,
        discovers_targets: true,
        badge: false,
    };
}

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

    /// Issue 29: the home, the errors and the backends import one another in one
    /// direction only (choice, home, error, backend, lowest first): no circle.
    #[test]
    fn arch_home_backend_and_error_import_one_direction() {
        const ORDER: &[&str] = &["choice", "home", "error", "backend"];
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut wrong = Vec::new();
        for (layer, name) in ORDER.iter().enumerate() {
            let source = std::fs::read_to_string(src.join(format!("{name}.rs")))
                .expect("a source file is readable");
            let code = source.split("#[cfg(test)]").next().unwrap_or_default();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for (above, other) in ORDER.iter().enumerate().skip(layer + 1) {
                    if line.contains(&format!("crate::{other}::")) {
                        wrong.push(format!("{name}.rs imports {other} (layer {above})"));
                    }
                }
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }
}
