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
    /// Whether it is the person's own browser, whose tabs Conch's sit among (BE-12):
    /// every conversation asks before acting on a site there, tasks browse beside it in
    /// Conch's own browser signed in nowhere (ERR-6), the checkup flags it and a backup
    /// of the settings carries the power to drive it (BE-16).
    pub persons_browser: bool,
    /// Whether an errand may be seeded with its always-allowed sites' sign-ins (ERR-3);
    /// never out of the person's own browser (ERR-6).
    pub may_seed: bool,
    /// Whether an Allow in an errand may lend it this browser's sign-in on that site
    /// (ERR-4); never out of the person's own browser (ERR-6).
    pub may_lend: bool,
    /// Whether Conch's pages share their browser context with the person's own tabs
    /// (Conch makes no context there): download rules set on it would govern the person's
    /// downloads too, so none are set (DL-5).
    pub shares_context_with_person: bool,
}

impl Abilities {
    /// Conch's own local browser: the proxy, every ability.
    pub const LOCAL: Abilities = Abilities {
        guard: GuardMode::Proxy,
        new_contexts: true,
        downloads_to_disk: true,
        discovers_targets: true,
        badge: false,
        persons_browser: false,
        may_seed: true,
        may_lend: true,
        shares_context_with_person: false,
    };

    /// A browser Conch did not launch (a DevTools address, a cloud session): no proxy can
    /// stand in front of it, and its downloads land on another disk.
    pub const REMOTE: Abilities = Abilities {
        guard: GuardMode::CdpOnly,
        downloads_to_disk: false,
        ..Abilities::LOCAL
    };

    /// A pool of remote browsers (issue 32): each conversation browses in a context of its
    /// own on one of them, so there is no shared main context whose sign-ins could be
    /// copied into a task (ERR-3) or lent to it (ERR-4): nothing is seeded or lent.
    pub const POOL: Abilities = Abilities {
        may_seed: false,
        may_lend: false,
        ..Abilities::REMOTE
    };

    /// The person's own Chrome (BE-10 … BE-16): only the pages Conch made are attached,
    /// by name, and carry the badge; no new contexts (errands run in Conch's own browser,
    /// ERR-6); nothing of the person's is copied out or governed.
    pub const PERSONS_CHROME: Abilities = Abilities {
        new_contexts: false,
        discovers_targets: false,
        badge: true,
        persons_browser: true,
        may_seed: false,
        may_lend: false,
        shares_context_with_person: true,
        ..Abilities::REMOTE
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
    /// A pool of DevTools addresses, each conversation in a context of its own on the
    /// least-loaded one (issue 32).
    Pool,
}

impl Backend {
    /// What this backend declares it can do (BE-1): the one place a backend's name meets
    /// its abilities. Everything else asks these, never which backend it is, so a new
    /// backend declares its abilities here rather than being matched by name.
    pub fn abilities(self) -> Abilities {
        match self {
            Backend::Local => Abilities::LOCAL,
            Backend::Chrome => Abilities::PERSONS_CHROME,
            Backend::Browserbase | Backend::Steel | Backend::Cdp => Abilities::REMOTE,
            Backend::Pool => Abilities::POOL,
        }
    }

    /// The name used in `browser.json` and the settings API.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Local => "local",
            Backend::Chrome => "chrome",
            Backend::Browserbase => "browserbase",
            Backend::Steel => "steel",
            Backend::Cdp => "cdp",
            Backend::Pool => "pool",
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
            "pool" => Backend::Pool,
            "browser-use" | "browseruse" | "browser-use-cloud" => {
                return Err(
                    "Browser Use Cloud is not offered as a backend: use local, chrome, browserbase, steel, cdp or pool"
                        .to_owned(),
                );
            }
            other => {
                return Err(format!(
                    "“{other}” is not a backend: use local, chrome, browserbase, steel, cdp or pool"
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
        for name in ["local", "chrome", "browserbase", "steel", "cdp", "pool"] {
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

    /// BE-1, BE-12, ERR-6, DL-5: each backend declares what it can do, and only the
    /// person's own Chrome is the person's browser, gives no sign-ins to copy and shares
    /// its context with the person's tabs.
    #[test]
    fn be_1_each_backend_declares_its_abilities() {
        for backend in [
            Backend::Local,
            Backend::Chrome,
            Backend::Browserbase,
            Backend::Steel,
            Backend::Cdp,
            Backend::Pool,
        ] {
            let a = backend.abilities();
            let persons = backend == Backend::Chrome;
            // A pool has no shared main context to seed from or lend out of (issue 32).
            let lends = !persons && backend != Backend::Pool;
            assert_eq!(a.persons_browser, persons, "{backend}");
            assert_eq!(a.badge, persons, "{backend}");
            assert_eq!(a.may_seed, lends, "{backend}");
            assert_eq!(a.may_lend, lends, "{backend}");
            assert_eq!(a.shares_context_with_person, persons, "{backend}");
            assert_eq!(a.new_contexts, !persons, "{backend}");
            assert_eq!(a.discovers_targets, !persons, "{backend}");
            assert_eq!(a.downloads_to_disk, backend == Backend::Local, "{backend}");
            let proxied = backend == Backend::Local;
            assert_eq!(a.guard == GuardMode::Proxy, proxied, "{backend}");
        }
    }

    /// Issue 29: outside the backends' own modules (and the remote address that names
    /// one), nothing matches `Backend::Chrome` by name: it asks the abilities.
    #[test]
    fn arch_backend_chrome_is_asked_of_abilities_not_matched_by_name() {
        fn walk(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).expect("a source folder is readable") {
                let path = entry.expect("an entry").path();
                if path.is_dir() {
                    walk(&path, found);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    found.push(path);
                }
            }
        }
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        walk(&src, &mut files);
        let allowed = ["choice.rs", "backend.rs", "backend/", "remote.rs"];
        let mut wrong = Vec::new();
        for path in files {
            let rel = path
                .strip_prefix(&src)
                .expect("under src")
                .to_string_lossy()
                .into_owned();
            if allowed
                .iter()
                .any(|a| rel == *a || (a.ends_with('/') && rel.starts_with(a)))
            {
                continue;
            }
            let source = std::fs::read_to_string(&path).expect("a source file is readable");
            let code = source.split("#[cfg(test)]").next().unwrap_or_default();
            for (n, line) in code.lines().enumerate() {
                if !line.trim_start().starts_with("//") && line.contains("Backend::Chrome") {
                    wrong.push(format!("{rel}:{}", n + 1));
                }
            }
        }
        assert!(wrong.is_empty(), "matched by name: {wrong:#?}");
    }
}
