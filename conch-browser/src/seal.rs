//! Sealing at rest (DATA-6, DATA-12, BE-3, SEC-8): backend keys and addresses are kept in
//! `browser.secrets.json` sealed with AES-256-GCM under a device key.
//!
//! The device key lives in the OS keychain wherever one answers ([`KeyPlace::Keychain`]:
//! [`Sealer::open_device`] asks the platform's own through `keyring-core`, with a time
//! limit), else in a key file readable by its owner only (`<home>/device.key`, mode 0600:
//! headless Linux, CI), and status and health say which ([`Sealer::key_place`],
//! [`last_key_place`]). Moving between the two keeps every sealed file readable (the rules
//! are in `keychain.rs`). Each seal draws a fresh 96-bit nonce and binds the file's
//! name as associated data, so a sealed blob moved into another file does not open.
//!
//! [`SecretsFile`] holds the secrets by name; its [`inventory`](SecretsFile::inventory)
//! lists each by name, kind and host only. A file that does not open (a flipped byte, the
//! wrong key) is set aside with a timestamp and reported, never silently replaced; values
//! are never in a `Debug` output, an error, a log or an event.
//!
//! Deliberately absent: key rotation.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use aes_gcm::aead::{Aead, Generate, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use keyring_core::{CredentialStore, Entry};
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::clock::Clock;
use crate::home::Home;
use crate::page::base64;
use crate::store::{StoreError, set_aside, write_atomic};

mod keychain;

use keychain::KEYCHAIN_SERVICE;
pub use keychain::{KEYCHAIN_WAIT, StoreMaker, entry_user, platform_store};

/// The sealed file's format.
const FORMAT: u64 = 1;

/// Nonce length of AES-GCM, in bytes.
const NONCE: usize = 12;

/// Where the device key is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPlace {
    /// The OS keychain.
    Keychain,
    /// A key file readable by its owner only.
    KeyFile(PathBuf),
}

impl fmt::Display for KeyPlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyPlace::Keychain => f.write_str("the system keychain"),
            KeyPlace::KeyFile(path) => write!(
                f,
                "a key file only you can read ({}), as this system has no keychain",
                path.display()
            ),
        }
    }
}

/// Why sealing or opening failed. No variant carries a secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SealError {
    /// The keychain could not give or keep the device key.
    #[error("the system keychain could not keep Conch's device key: {0}")]
    Keychain(#[source] keyring_core::Error),
    /// The key file could not be read or written, or holds no key.
    #[error("Conch's device key file {} could not be used: {source}", path.display())]
    KeyFile {
        /// The key file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The key file can be read by others, so the key is not trusted.
    #[error("Conch's device key file {} can be read by other users, so it was not used: run `chmod 600 {}` and try again.", path.display(), path.display())]
    KeyFileOpen {
        /// The key file.
        path: PathBuf,
    },
    /// No device key could be had, and sealed files are present: no new key was made, so
    /// they open again once the keychain that holds their key answers.
    #[error(
        "Conch's device key is neither in its key file nor in a system keychain that answers ({why}), and sealed files are present ({files}). Conch made no new key, so they stay readable: unlock or start the system keychain (the Secret Service on Linux) and try again; if their key is truly lost, move those files away and set your keys again"
    )]
    KeyUnreachable {
        /// The sealed files present.
        files: String,
        /// Why the keychain gave no key.
        why: String,
    },
    /// The keychain and the key file hold different device keys, and neither opens every
    /// sealed file: neither was chosen.
    #[error(
        "the system keychain and Conch's key file {} hold different device keys, and neither opens all of Conch's sealed files; Conch used neither and changed nothing. Move away the sealed files that no longer open, or the key file, and try again", path.display()
    )]
    TwoKeys {
        /// The key file.
        path: PathBuf,
    },
    /// The keychain's entry holds something that is not a device key; it is left as is.
    #[error(
        "the system keychain's entry for Conch's device key holds something that is not a key; Conch left it as it is and made no new key"
    )]
    KeychainDamaged,
    /// The sealed data did not open: a changed byte, or another device's key.
    #[error(
        "Conch's sealed file {} did not open (it was changed, or sealed on another device); it was set aside as {}. Set your keys again.",
        path.display(), moved_to.display()
    )]
    Tampered {
        /// The file.
        path: PathBuf,
        /// Where it was moved.
        moved_to: PathBuf,
    },
    /// Reading, writing or setting aside the file failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Seals and opens bytes under the device key.
pub struct Sealer {
    cipher: Aes256Gcm,
    place: KeyPlace,
}

impl fmt::Debug for Sealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sealer")
            .field("place", &self.place)
            .finish_non_exhaustive()
    }
}

impl Sealer {
    /// The sealer of `home` with its key's place given: the device key from `keychain`
    /// when given (made there on first use), else from `<home>/device.key` (made 0600 on
    /// first use). Conch itself opens with [`Sealer::open_device`]; this form is for tests
    /// and tools that must name the place.
    ///
    /// # Errors
    /// [`SealError::Keychain`], [`SealError::KeyFile`] or [`SealError::KeyFileOpen`].
    pub fn open(home: &Home, keychain: Option<&Arc<CredentialStore>>) -> Result<Sealer, SealError> {
        let (key, place) = match keychain {
            Some(store) => (from_keychain(home, store)?, KeyPlace::Keychain),
            None => {
                let path = home.device_key_file();
                (from_key_file(&path)?, KeyPlace::KeyFile(path))
            }
        };
        Ok(Sealer {
            cipher: Aes256Gcm::new(&Key::<Aes256Gcm>::from(*key)),
            place,
        })
    }

    /// The sealer of `home` as Conch runs it: the device key in the platform's keychain
    /// wherever one answers within [`KEYCHAIN_WAIT`], else in `<home>/device.key`; a key
    /// file found while a keychain answers is moved into it (see `keychain.rs`). Where the
    /// key is, or why none could be had, is kept for [`last_key_place`].
    ///
    /// # Errors
    /// [`SealError::KeyUnreachable`] (no key, and sealed files present: no new key is
    /// made), [`SealError::TwoKeys`], [`SealError::KeychainDamaged`], or a key file error.
    pub fn open_device(home: &Home) -> Result<Sealer, SealError> {
        Sealer::open_preferring(home, platform_store, KEYCHAIN_WAIT)
    }

    /// As [`Sealer::open_device`], with the keychain `make` gives and `wait` for each of
    /// its answers (tests give a mock or a silent one).
    ///
    /// # Errors
    /// As [`Sealer::open_device`].
    pub fn open_preferring(
        home: &Home,
        make: StoreMaker,
        wait: std::time::Duration,
    ) -> Result<Sealer, SealError> {
        let opened = keychain::device_key(home, make, wait);
        let said = match &opened {
            Ok((_, place)) => Ok(place.clone()),
            Err(e) => Err(e.to_string()),
        };
        LAST_PLACES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(home.root().to_owned(), said);
        let (key, place) = opened?;
        Ok(Sealer {
            cipher: Aes256Gcm::new(&Key::<Aes256Gcm>::from(*key)),
            place,
        })
    }

    /// Where the device key is kept (for status).
    pub fn key_place(&self) -> &KeyPlace {
        &self.place
    }

    /// Seals `plain`, bound to `context` (the file's name): nonce, then ciphertext.
    pub fn seal(&self, plain: &[u8], context: &[u8]) -> Vec<u8> {
        let nonce = Nonce::try_generate().expect("the system gives random bytes");
        let mut out = nonce.to_vec();
        // Encrypting into a Vec cannot fail for inputs under 64 GiB.
        out.extend(
            self.cipher
                .encrypt(
                    &nonce,
                    Payload {
                        msg: plain,
                        aad: context,
                    },
                )
                .expect("AES-GCM encrypts any input of this size"),
        );
        out
    }

    /// Opens what [`Sealer::seal`] sealed with the same `context`; `None` when it does not
    /// open (changed, truncated, another key or another context).
    pub fn unseal(&self, sealed: &[u8], context: &[u8]) -> Option<Zeroizing<Vec<u8>>> {
        if sealed.len() < NONCE {
            return None;
        }
        let (nonce, body) = sealed.split_at(NONCE);
        let nonce = Nonce::try_from(nonce).ok()?;
        self.cipher
            .decrypt(
                &nonce,
                Payload {
                    msg: body,
                    aad: context,
                },
            )
            .ok()
            .map(Zeroizing::new)
    }
}

/// Where [`Sealer::open_device`] last found `home`'s device key in this process, or why
/// it found none; `None` before it was first opened.
static LAST_PLACES: std::sync::Mutex<BTreeMap<PathBuf, Result<KeyPlace, String>>> =
    std::sync::Mutex::new(BTreeMap::new());

/// Where the device key of `home` was last found (for status and health), or why it could
/// not be had; `None` when nothing sealed was opened in this process yet.
pub fn last_key_place(home: &Home) -> Option<Result<KeyPlace, String>> {
    LAST_PLACES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(home.root())
        .cloned()
}

fn new_key() -> Zeroizing<[u8; 32]> {
    let mut key = Zeroizing::new([0u8; 32]);
    let fresh = Key::<Aes256Gcm>::try_generate().expect("the system gives random bytes");
    key.copy_from_slice(&fresh);
    key
}

fn from_keychain(
    home: &Home,
    store: &Arc<CredentialStore>,
) -> Result<Zeroizing<[u8; 32]>, SealError> {
    let entry = Entry::new_in_store(store, KEYCHAIN_SERVICE, &entry_user(home))
        .map_err(SealError::Keychain)?;
    match entry.get_secret() {
        Ok(bytes) if bytes.len() == 32 => {
            let bytes = Zeroizing::new(bytes);
            let mut key = Zeroizing::new([0u8; 32]);
            key.copy_from_slice(&bytes);
            Ok(key)
        }
        Ok(_) => Err(SealError::KeychainDamaged),
        Err(keyring_core::Error::NoEntry) => {
            let key = new_key();
            entry.set_secret(&key[..]).map_err(SealError::Keychain)?;
            Ok(key)
        }
        Err(e) => Err(SealError::Keychain(e)),
    }
}

fn from_key_file(path: &Path) -> Result<Zeroizing<[u8; 32]>, SealError> {
    let failed = |source| SealError::KeyFile {
        path: path.to_owned(),
        source,
    };
    match std::fs::read(path) {
        Ok(bytes) => {
            let bytes = Zeroizing::new(bytes);
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt as _;
                let mode = std::fs::metadata(path)
                    .map_err(failed)?
                    .permissions()
                    .mode();
                if mode & 0o077 != 0 {
                    return Err(SealError::KeyFileOpen {
                        path: path.to_owned(),
                    });
                }
            }
            if bytes.len() != 32 {
                return Err(failed(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "it does not hold a key",
                )));
            }
            let mut key = Zeroizing::new([0u8; 32]);
            key.copy_from_slice(&bytes);
            Ok(key)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(failed)?;
            }
            let key = new_key();
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt as _;
                options.mode(0o600);
            }
            let mut file = options.open(path).map_err(failed)?;
            file.write_all(&key[..]).map_err(failed)?;
            file.sync_all().map_err(failed)?;
            Ok(key)
        }
        Err(e) => Err(failed(e)),
    }
}

/// A secret's value: never shown by `Debug`, wiped when dropped.
#[derive(Clone)]
pub struct SecretText(Zeroizing<String>);

impl Serialize for SecretText {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for SecretText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(SecretText::new)
    }
}

impl SecretText {
    /// Wraps `value`.
    pub fn new(value: String) -> Self {
        SecretText(Zeroizing::new(value))
    }

    /// The value, for the one place that sends it (a backend's API).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// A fresh strong password (SEC-2, issue 16): [`PASSWORD_LENGTH`] characters drawn
    /// uniformly from [`PASSWORD_CHARACTERS`] (about 121 bits) with the system's random
    /// source, the one the device key comes from, holding at least one capital, one
    /// small letter, one digit and one symbol, as sites ask. `None` when the system gives
    /// no random bytes.
    pub fn strong_password() -> Option<SecretText> {
        // Bytes under this bound map evenly onto the characters; the rest are drawn again.
        let bound = 256 - 256 % PASSWORD_CHARACTERS.len();
        loop {
            let mut password = Zeroizing::new(String::with_capacity(PASSWORD_LENGTH));
            while password.len() < PASSWORD_LENGTH {
                let mut fresh = Zeroizing::new([0u8; 32]);
                fresh.copy_from_slice(&Key::<Aes256Gcm>::try_generate().ok()?);
                for &byte in fresh.iter() {
                    let byte = usize::from(byte);
                    if byte < bound && password.len() < PASSWORD_LENGTH {
                        let at = byte % PASSWORD_CHARACTERS.len();
                        password.push(char::from(PASSWORD_CHARACTERS[at]));
                    }
                }
            }
            let has = |test: fn(&char) -> bool| password.chars().any(|c| test(&c));
            if has(char::is_ascii_uppercase)
                && has(char::is_ascii_lowercase)
                && has(char::is_ascii_digit)
                && has(char::is_ascii_punctuation)
            {
                return Some(SecretText(password));
            }
        }
    }
}

/// How many characters a generated password has.
pub const PASSWORD_LENGTH: usize = 20;

/// The characters a generated password is made of: letters and digits without the ones
/// read alike (I, O, l, 0, 1), and symbols sites commonly accept.
pub const PASSWORD_CHARACTERS: &[u8] =
    b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789-_.!@#%+=";

impl fmt::Debug for SecretText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[sealed]")
    }
}

/// One kept secret.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Kept {
    kind: String,
    host: String,
    value: SecretText,
}

/// What the inventory says of a secret: never its value (SEC-8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretEntry {
    /// Its name (`browserbase`, `steel`…).
    pub name: String,
    /// What it is (`api key`, `address`).
    pub kind: String,
    /// The host it is for.
    pub host: String,
}

/// The sealed file on disk.
#[derive(Serialize, Deserialize)]
struct OnDisk {
    format: u64,
    sealed: String,
}

/// `browser.secrets.json`: the backend keys and addresses, sealed (DATA-6).
#[derive(Debug)]
pub struct SecretsFile {
    path: PathBuf,
    kept: BTreeMap<String, Kept>,
}

impl SecretsFile {
    /// Reads and opens the home's secrets file; no file is an empty one.
    ///
    /// # Errors
    /// [`SealError::Tampered`] when it does not open (it is set aside first), or
    /// [`SealError::Store`] when it cannot be read.
    pub fn load(home: &Home, sealer: &Sealer, clock: &dyn Clock) -> Result<Self, SealError> {
        Self::load_at(home.secrets_file(), sealer, clock)
    }

    /// Reads and opens the sealed file at `path` (the passwords file is another one);
    /// no file is an empty one.
    ///
    /// # Errors
    /// As [`SecretsFile::load`].
    pub fn load_at(path: PathBuf, sealer: &Sealer, clock: &dyn Clock) -> Result<Self, SealError> {
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(SecretsFile {
                    path,
                    kept: BTreeMap::new(),
                });
            }
            Err(e) => {
                return Err(StoreError::new(crate::store::StoreOp::Read, &path, e).into());
            }
        };
        let opened = serde_json::from_slice::<OnDisk>(&bytes)
            .ok()
            .filter(|d| d.format == FORMAT)
            .and_then(|d| base64::decode(&d.sealed))
            .and_then(|sealed| sealer.unseal(&sealed, context(&path)))
            .and_then(|plain| serde_json::from_slice::<BTreeMap<String, Kept>>(&plain).ok());
        match opened {
            Some(kept) => Ok(SecretsFile { path, kept }),
            None => {
                let moved_to = set_aside(&path, clock)?;
                tracing::warn!(target: "conch_browser", file = %path.display(), "a sealed file did not open and was set aside");
                Err(SealError::Tampered { path, moved_to })
            }
        }
    }

    /// Keeps `value` under `name`, for `host`, as `kind`.
    pub fn set(&mut self, name: &str, kind: &str, host: &str, value: SecretText) {
        self.kept.insert(
            name.to_owned(),
            Kept {
                kind: kind.to_owned(),
                host: host.to_owned(),
                value,
            },
        );
    }

    /// The value kept under `name`.
    pub fn get(&self, name: &str) -> Option<&SecretText> {
        self.kept.get(name).map(|k| &k.value)
    }

    /// Forgets `name`; gives whether it was kept.
    pub fn remove(&mut self, name: &str) -> bool {
        self.kept.remove(name).is_some()
    }

    /// Every secret by name, kind and host: never a value (SEC-8).
    pub fn inventory(&self) -> Vec<SecretEntry> {
        self.kept
            .iter()
            .map(|(name, k)| SecretEntry {
                name: name.clone(),
                kind: k.kind.clone(),
                host: k.host.clone(),
            })
            .collect()
    }

    /// The kept secrets as JSON, in a buffer made with room enough that the JSON never
    /// outgrows it (each character escaped as `\uXXXX` at worst), so no copy is left
    /// behind by a reallocation; wiped when dropped (issue 29).
    fn plain(&self) -> Zeroizing<Vec<u8>> {
        let room = self
            .kept
            .iter()
            .map(|(name, k)| {
                6 * (name.len() + k.kind.len() + k.host.len() + k.value.expose().len()) + 64
            })
            .sum::<usize>()
            + 2;
        let mut plain = Zeroizing::new(Vec::with_capacity(room));
        serde_json::to_writer(&mut *plain, &self.kept).expect("a map of strings always encodes");
        plain
    }

    /// Seals and writes the file atomically (owner-only on Unix).
    ///
    /// # Errors
    /// [`SealError::Store`] when it cannot be written.
    pub fn save(&self, sealer: &Sealer) -> Result<(), SealError> {
        let plain = self.plain();
        let sealed = sealer.seal(&plain, context(&self.path));
        let disk = OnDisk {
            format: FORMAT,
            sealed: base64::encode(&sealed),
        };
        let mut bytes = serde_json::to_vec_pretty(&disk).expect("two fields always encode");
        bytes.push(b'\n');
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| StoreError::new(crate::store::StoreOp::Write, &self.path, e))?;
        }
        write_atomic(&self.path, |file| file.write_all(&bytes))?;
        Ok(())
    }
}

/// Whether `key` opens the sealed file at `path` (to tell which of two keys seals a home).
fn opens_with(key: &[u8; 32], path: &Path) -> bool {
    let sealer = Sealer {
        cipher: Aes256Gcm::new(&Key::<Aes256Gcm>::from(*key)),
        place: KeyPlace::Keychain,
    };
    std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<OnDisk>(&bytes).ok())
        .filter(|d| d.format == FORMAT)
        .and_then(|d| base64::decode(&d.sealed))
        .and_then(|sealed| sealer.unseal(&sealed, context(path)))
        .is_some()
}

/// The associated data a file's seal is bound to: its name.
fn context(path: &Path) -> &[u8] {
    path.file_name().map_or(&b""[..], |n| n.as_encoded_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    pub(super) const CANARY: &str = "bb_live_CANARY_4f9e2a";

    /// A fresh home inside a temporary folder (kept alive by the first half).
    pub(super) fn home() -> (tempfile::TempDir, Home) {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = Home::new(dir.path().join("home"));
        (dir, home)
    }

    /// Seals the canary as Browserbase's api key in `home` with `sealer`: the saved file.
    pub(super) fn kept(home: &Home, sealer: &Sealer) -> SecretsFile {
        let clock = ManualClock::at_unix(1_796_000_000);
        let mut file = SecretsFile::load(home, sealer, &clock).expect("no file is empty");
        file.set(
            "browserbase",
            "api key",
            "api.browserbase.com",
            SecretText::new(CANARY.to_owned()),
        );
        file.save(sealer).expect("saved");
        file
    }

    /// Issue 16, SEC-2: a generated password is long, mixed and new each time.
    #[test]
    fn sec_2_a_generated_password_is_strong_and_fresh() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..200 {
            let password = SecretText::strong_password().expect("random bytes");
            let text = password.expose();
            assert_eq!(text.len(), PASSWORD_LENGTH);
            assert!(text.bytes().all(|b| PASSWORD_CHARACTERS.contains(&b)));
            assert!(text.chars().any(|c| c.is_ascii_uppercase()));
            assert!(text.chars().any(|c| c.is_ascii_lowercase()));
            assert!(text.chars().any(|c| c.is_ascii_digit()));
            assert!(text.chars().any(|c| c.is_ascii_punctuation()));
            assert!(seen.insert(text.to_owned()), "a password came twice");
            assert_eq!(format!("{password:?}"), "[sealed]");
        }
    }

    #[test]
    fn data_6_a_sealed_file_round_trips_and_never_holds_the_value_in_plain_text() {
        let (_dir, home) = home();
        let sealer = Sealer::open(&home, None).expect("a key file");
        let file = kept(&home, &sealer);
        let on_disk = std::fs::read_to_string(home.secrets_file()).expect("written");
        assert!(!on_disk.contains(CANARY), "{on_disk}");
        assert!(!format!("{file:?} {sealer:?}").contains(CANARY));
        let inventory = serde_json::to_string(&file.inventory()).expect("encodes");
        assert!(!inventory.contains(CANARY), "{inventory}");
        assert!(inventory.contains("api.browserbase.com"), "{inventory}");
        // A second process with the same key file opens it.
        let again = Sealer::open(&home, None).expect("the same key file");
        let clock = ManualClock::at_unix(1_796_000_001);
        let loaded = SecretsFile::load(&home, &again, &clock).expect("opens");
        assert_eq!(
            loaded.get("browserbase").map(SecretText::expose),
            Some(CANARY)
        );
    }

    #[test]
    fn data_12_a_flipped_byte_fails_clearly_and_the_file_is_set_aside_not_replaced() {
        let (_dir, home) = home();
        let sealer = Sealer::open(&home, None).expect("a key file");
        kept(&home, &sealer);
        let path = home.secrets_file();
        let mut disk: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).expect("written")).expect("json");
        let mut sealed = base64::decode(disk["sealed"].as_str().expect("sealed")).expect("b64");
        let last = sealed.len() - 1;
        sealed[last] ^= 1;
        disk["sealed"] = base64::encode(&sealed).into();
        let tampered = serde_json::to_vec(&disk).expect("json");
        std::fs::write(&path, &tampered).expect("tampered");
        let clock = ManualClock::at_unix(1_796_000_002);
        let error = SecretsFile::load(&home, &sealer, &clock).expect_err("does not open");
        let SealError::Tampered { moved_to, .. } = &error else {
            panic!("{error}");
        };
        assert_eq!(std::fs::read(moved_to).expect("kept aside"), tampered);
        assert!(!path.exists(), "the tampered file stayed in place");
        assert!(error.to_string().contains("set aside"), "{error}");
        assert!(!error.to_string().contains(CANARY));
    }

    /// Issue 29, DATA-6: the plain JSON of the secrets is written into one buffer that
    /// never grows (a reallocation would leave a copy behind, unwiped), even when every
    /// character of a value is escaped.
    #[test]
    fn data_6_the_plain_secrets_leave_no_copy_behind() {
        let (_dir, home) = home();
        let sealer = Sealer::open(&home, None).expect("a key file");
        let mut file = kept(&home, &sealer);
        file.set(
            "escaped",
            "password",
            "ada",
            SecretText::new("\u{1}\"\\".repeat(300)),
        );
        let plain = file.plain();
        let room = plain.capacity();
        let again: BTreeMap<String, Kept> = serde_json::from_slice(&plain).expect("JSON");
        assert_eq!(again.len(), 2);
        assert!(plain.len() <= room);
        let mut more = Zeroizing::new(Vec::with_capacity(room));
        serde_json::to_writer(&mut *more, &file.kept).expect("encodes");
        assert_eq!(more.capacity(), room, "the buffer grew");
    }

    #[test]
    fn data_6_a_seal_is_bound_to_its_file() {
        let (_dir, home) = home();
        let sealer = Sealer::open(&home, None).expect("a key file");
        let sealed = sealer.seal(CANARY.as_bytes(), b"browser.secrets.json");
        assert!(sealer.unseal(&sealed, b"browser.secrets.json").is_some());
        assert!(
            sealer
                .unseal(&sealed, b"browser.errands.secrets.json")
                .is_none()
        );
        assert!(
            sealer
                .unseal(&sealed[..5], b"browser.secrets.json")
                .is_none()
        );
        let other = tempfile::tempdir().expect("temp dir");
        let stranger = Sealer::open(&Home::new(other.path().to_owned()), None).expect("key");
        assert!(stranger.unseal(&sealed, b"browser.secrets.json").is_none());
    }

    #[cfg(unix)]
    #[test]
    fn be_3_the_key_file_is_owner_only_and_a_readable_one_is_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let (_dir, home) = home();
        let sealer = Sealer::open(&home, None).expect("a key file");
        let KeyPlace::KeyFile(path) = sealer.key_place().clone() else {
            panic!("no keychain was given");
        };
        let mode = std::fs::metadata(&path).expect("made").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(sealer.key_place().to_string().contains("no keychain"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let error = Sealer::open(&home, None).expect_err("refused");
        assert!(matches!(error, SealError::KeyFileOpen { .. }), "{error}");
        // Issue 29: the way out keeps the key (and every file sealed with it).
        let said = error.to_string();
        assert!(
            said.contains(&format!("chmod 600 {}", path.display())),
            "{said}"
        );
        assert!(!said.to_lowercase().contains("remove"), "{said}");
    }

    #[test]
    fn be_3_the_device_key_lives_in_the_keychain_when_there_is_one() {
        let (_dir, home) = home();
        let store: Arc<CredentialStore> = keyring_core::mock::Store::new().expect("mock store");
        let sealer = Sealer::open(&home, Some(&store)).expect("the keychain");
        assert_eq!(sealer.key_place(), &KeyPlace::Keychain);
        assert!(
            !home.root().join("device.key").exists(),
            "a key file was written"
        );
        kept(&home, &sealer);
        let again = Sealer::open(&home, Some(&store)).expect("the same key");
        let clock = ManualClock::at_unix(1_796_000_003);
        let loaded = SecretsFile::load(&home, &again, &clock).expect("opens");
        assert_eq!(
            loaded.get("browserbase").map(SecretText::expose),
            Some(CANARY)
        );
    }
}
