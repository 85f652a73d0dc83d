//! Set-aside errands (ERR-11, ERR-13, ERR-14, DATA-7): an interrupted or failed task's
//! errand is put away with its cookies, its local storage and its tabs' addresses, sealed in
//! `<home>/browser.errands.secrets.json` (AES-256-GCM under the device key, like the
//! backend keys), and comes back when the same conversation browses again, also after a
//! restart.
//!
//! [`AsideFile`] is that file: one [`SetAside`] per conversation. It keeps at most 40,
//! none older than 14 days, the oldest going first (conch-policy's
//! [`conch_policy::set_aside_to_forget`]). The file is a copy of sign-ins: it is protected
//! from the agent's file tools and marked derived in the backup manifest
//! ([`crate::Home::manifest`]), so it is never carried to another computer. A file that
//! does not open (a flipped byte, another key) is set aside and reported, never read.
//!
//! Entries written before local storage was kept have no `storage` and still load (as
//! none).
//!
//! Deliberately absent: session storage and IndexedDB, and any plain copy of a cookie, a
//! stored value or an address on disk.

use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clock::Clock;
use crate::home::Home;
use crate::seal::{SealError, Sealer, SecretText, SecretsFile};

/// The kind the sealed file records for an errand's entry.
const KIND: &str = "errand";

/// A tab of a set-aside errand: where it was. Its `Debug` shows the title only (an
/// address may carry a token).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AsideTab {
    /// Its address.
    pub url: String,
    /// Its title.
    pub title: String,
}

impl std::fmt::Debug for AsideTab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsideTab")
            .field("title", &self.title)
            .finish_non_exhaustive()
    }
}

/// One origin's local storage, as an errand held it (ERR-3, ERR-11). Its `Debug` shows
/// the count of items only (a value may be a token, an origin an address).
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OriginStorage {
    /// The origin (`https://shop.example`).
    pub origin: String,
    /// Its keys and values, as `localStorage` holds them.
    pub items: Vec<(String, String)>,
}

impl std::fmt::Debug for OriginStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OriginStorage")
            .field("items", &self.items.len())
            .finish_non_exhaustive()
    }
}

/// What an errand held when it was set aside. Its `Debug` shows counts only.
#[derive(Clone, Default, Serialize, Deserialize)]
pub struct SetAside {
    /// When it was set aside, in seconds since the Unix epoch.
    pub at: u64,
    /// Its context's cookies, as DevTools gave them (`Storage.getCookies`).
    pub cookies: Vec<Value>,
    /// Its tabs, in order.
    pub tabs: Vec<AsideTab>,
    /// Which tab was active.
    pub active: Option<usize>,
    /// Its local storage, by origin (ERR-11). Absent from entries written before it was
    /// kept, which load with none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub storage: Vec<OriginStorage>,
}

impl std::fmt::Debug for SetAside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetAside")
            .field("at", &self.at)
            .field("cookies", &self.cookies.len())
            .field("tabs", &self.tabs.len())
            .field("storage", &self.storage.len())
            .finish()
    }
}

/// `browser.errands.secrets.json`: the set-aside errands, sealed (DATA-7).
#[derive(Debug)]
pub struct AsideFile {
    file: SecretsFile,
}

impl AsideFile {
    /// Reads and opens the home's set-aside errands; no file is an empty one.
    ///
    /// # Errors
    /// [`SealError::Tampered`] when it does not open (it is set aside first), or
    /// [`SealError::Store`] when it cannot be read.
    pub fn load(home: &Home, sealer: &Sealer, clock: &dyn Clock) -> Result<AsideFile, SealError> {
        Ok(AsideFile {
            file: SecretsFile::load_at(home.errand_secrets_file(), sealer, clock)?,
        })
    }

    /// Keeps `errand` for conversation `name`, then forgets those past the limits at
    /// `clock`'s time (ERR-14). Gives the names forgotten.
    pub fn put(&mut self, name: &str, errand: &SetAside, clock: &dyn Clock) -> Vec<String> {
        // A plain JSON of strings and numbers always encodes.
        let text = serde_json::to_string(errand).unwrap_or_default();
        self.file.set(name, KIND, "", SecretText::new(text));
        self.prune(clock)
    }

    /// The errand set aside for conversation `name`, if any.
    pub fn get(&self, name: &str) -> Option<SetAside> {
        let text = self.file.get(name)?;
        serde_json::from_str(text.expose()).ok()
    }

    /// Forgets conversation `name`'s errand; gives whether it was kept.
    pub fn remove(&mut self, name: &str) -> bool {
        self.file.remove(name)
    }

    /// The conversations with an errand set aside, sorted.
    pub fn names(&self) -> Vec<String> {
        self.file.inventory().into_iter().map(|e| e.name).collect()
    }

    /// Forgets the errands past the limits at `clock`'s time: older than 14 days, then
    /// the oldest past 40 (ERR-14). Gives the names forgotten.
    pub fn prune(&mut self, clock: &dyn Clock) -> Vec<String> {
        let now = unix_secs(clock);
        let kept: Vec<(String, u64)> = self
            .names()
            .into_iter()
            .map(|name| {
                let at = self.get(&name).map_or(0, |e| e.at);
                (name, at)
            })
            .collect();
        let forget = conch_policy::set_aside_to_forget(&kept, now);
        for name in &forget {
            self.file.remove(name);
        }
        forget
    }

    /// Seals and writes the file atomically (owner-only on Unix).
    ///
    /// # Errors
    /// [`SealError::Store`] when it cannot be written.
    pub fn save(&self, sealer: &Sealer) -> Result<(), SealError> {
        self.file.save(sealer)
    }
}

/// `clock`'s time in seconds since the Unix epoch.
pub(crate) fn unix_secs(clock: &dyn Clock) -> u64 {
    clock
        .now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::backend::Backend;
    use crate::clock::ManualClock;
    use crate::home::BackupClass;

    const CANARY: &str = "errand-cookie-CANARY-91c3";
    const STORED: &str = "errand-storage-CANARY-44d0";

    fn errand(at: u64) -> SetAside {
        SetAside {
            at,
            cookies: vec![
                json!({ "name": "sid", "value": CANARY, "domain": "shop.test", "path": "/" }),
            ],
            tabs: vec![AsideTab {
                url: format!("http://shop.test/cart?token={CANARY}"),
                title: "Cart".to_owned(),
            }],
            active: Some(0),
            storage: vec![OriginStorage {
                origin: "http://shop.test".to_owned(),
                items: vec![("token".to_owned(), STORED.to_owned())],
            }],
        }
    }

    /// ERR-13, DATA-7: the sealed file holds the errand and gives it back, its bytes lack
    /// the cookie canary (and the address), a flipped byte makes it fail closed (set
    /// aside, never read as empty), and the backup manifest says derived.
    #[test]
    fn err_13_data_7_set_aside_errands_are_sealed_and_derived() {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = Home::new(dir.path().join("home"));
        let clock = ManualClock::at_unix(1_796_000_000);
        let sealer = Sealer::open(&home, None).expect("sealer");
        let mut file = AsideFile::load(&home, &sealer, &clock).expect("no file is empty");
        assert!(
            file.put("task-a", &errand(1_796_000_000), &clock)
                .is_empty()
        );
        file.save(&sealer).expect("saved");

        let bytes = std::fs::read(home.errand_secrets_file()).expect("the file");
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(CANARY), "the canary is in the file");
        assert!(!text.contains(STORED), "a stored value is in the file");
        assert!(!text.contains("shop.test"), "an address is in the file");
        let again = AsideFile::load(&home, &sealer, &clock).expect("opens");
        let back = again.get("task-a").expect("kept");
        assert_eq!(back.cookies[0]["value"], CANARY);
        assert_eq!(back.tabs[0].title, "Cart");
        assert_eq!(back.storage[0].items[0].1, STORED);
        assert!(
            !format!("{back:?}").contains(CANARY) && !format!("{back:?}").contains(STORED),
            "Debug shows a cookie or a stored value"
        );

        let class = home
            .manifest(Backend::Local)
            .files
            .into_iter()
            .find(|f| f.path == home.errand_secrets_file())
            .expect("in the manifest")
            .class;
        assert_eq!(class, BackupClass::Derived);
        assert!(!class.carried_to_another_computer());
        assert!(home.protected_paths().contains(&home.errand_secrets_file()));

        // One flipped byte in the sealed part: it fails closed.
        let mut flipped = bytes.clone();
        let at = text.find("\"sealed\"").expect("sealed field") + 20;
        flipped[at] = if flipped[at] == b'A' { b'B' } else { b'A' };
        std::fs::write(home.errand_secrets_file(), &flipped).expect("written");
        assert!(matches!(
            AsideFile::load(&home, &sealer, &clock),
            Err(SealError::Tampered { .. })
        ));
    }

    /// ERR-11: an entry written before local storage was kept (no `storage`) still loads,
    /// with none; an entry without local storage is written as before.
    #[test]
    fn err_11_an_entry_without_local_storage_still_loads() {
        let old = r#"{"at":1796000000,"cookies":[{"name":"sid","value":"v","domain":"shop.test"}],"tabs":[{"url":"http://shop.test/","title":"Shop"}],"active":0}"#;
        let errand: SetAside = serde_json::from_str(old).expect("an old entry loads");
        assert_eq!(errand.cookies.len(), 1);
        assert_eq!(errand.tabs[0].title, "Shop");
        assert!(errand.storage.is_empty());
        let again = serde_json::to_string(&errand).expect("encodes");
        assert!(!again.contains("storage"), "{again}");
    }

    /// ERR-14 (clock): the 41st set-aside errand makes the oldest go, and on day 15 the
    /// old ones are purged.
    #[test]
    fn err_14_the_41st_evicts_the_oldest_and_day_15_purges() {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = Home::new(dir.path().join("home"));
        let start = 1_796_000_000;
        let clock = ManualClock::at_unix(start);
        let sealer = Sealer::open(&home, None).expect("sealer");
        let mut file = AsideFile::load(&home, &sealer, &clock).expect("empty");
        for n in 0..40u64 {
            clock.advance(Duration::from_secs(60));
            let forgotten = file.put(
                &format!("task-{n:02}"),
                &errand(start + (n + 1) * 60),
                &clock,
            );
            assert!(forgotten.is_empty(), "{forgotten:?}");
        }
        clock.advance(Duration::from_secs(60));
        let forgotten = file.put("task-40", &errand(start + 41 * 60), &clock);
        assert_eq!(forgotten, ["task-00"]);
        assert_eq!(file.names().len(), 40);
        file.save(&sealer).expect("saved");

        clock.advance(Duration::from_secs(15 * 24 * 60 * 60));
        let mut file = AsideFile::load(&home, &sealer, &clock).expect("opens");
        assert_eq!(file.prune(&clock).len(), 40);
        assert!(file.names().is_empty());
    }
}
