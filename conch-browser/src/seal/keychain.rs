//! Where the device key lives (BE-3, DATA-6): in the OS keychain wherever one answers,
//! else in the owner-only key file `<home>/device.key`, the declared fallback.
//!
//! The platform's keychain is compiled in by target: the Secret Service over D-Bus on
//! Linux (gnome-keyring, KWallet, KeePassXC), the login Keychain on macOS, the Credential
//! Manager on Windows. Every call to it runs on a thread of its own and is given up after
//! [`KEYCHAIN_WAIT`], so a locked keychain waiting on a prompt nobody sees, or a session
//! bus that never answers, cannot hang the gateway. The key's entry is per home (service
//! `conch`, user `device-key:<the home's full path>`), so two homes never share a key.
//!
//! Moving between the two keeps every sealed file readable:
//! - a key file found while a keychain answers is moved into it: written, read back and
//!   compared, and only then is the file removed; a move cut short leaves the file, and a
//!   later open that finds the same key in both places finishes it;
//! - Conch never makes a new key while a sealed file is in the home: a keychain that holds
//!   the key and stops answering (locked, no bus, a headless session) gives
//!   [`SealError::KeyUnreachable`], so the files open again once it answers, instead of a
//!   fresh key file that would orphan them;
//! - two different keys (one in the keychain, one in the file) are settled by the sealed
//!   files: the key that opens every one of them is kept in the keychain and the other
//!   dropped; when neither does, [`SealError::TwoKeys`] and nothing changes.
//!
//! Deliberately absent: moving the key back out of a keychain that answers (a keychain
//! that answers is always preferred; the way back is the person's own keychain tool).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use keyring_core::{CredentialStore, Entry};
use zeroize::Zeroizing;

use super::{KeyPlace, SealError, from_key_file, new_key, opens_with};
use crate::home::Home;

/// How long Conch waits for each answer of the keychain.
pub const KEYCHAIN_WAIT: Duration = Duration::from_secs(5);

/// The keychain entry's service.
pub(super) const KEYCHAIN_SERVICE: &str = "conch";

/// Makes the platform's keychain store, or says why there is none.
pub type StoreMaker = fn() -> Result<Arc<CredentialStore>, keyring_core::Error>;

/// The platform's keychain store: Secret Service, Keychain or Credential Manager.
pub fn platform_store() -> Result<Arc<CredentialStore>, keyring_core::Error> {
    #[cfg(target_os = "linux")]
    {
        let store: Arc<CredentialStore> = zbus_secret_service_keyring_store::Store::new()?;
        Ok(store)
    }
    #[cfg(target_os = "macos")]
    {
        let store: Arc<CredentialStore> = apple_native_keyring_store::keychain::Store::new()?;
        Ok(store)
    }
    #[cfg(windows)]
    {
        let store: Arc<CredentialStore> = windows_native_keyring_store::Store::new()?;
        Ok(store)
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
    {
        Err(keyring_core::Error::NoDefaultStore)
    }
}

/// The keychain entry's user name for `home`: `device-key:<the home's full path>`.
pub fn entry_user(home: &Home) -> String {
    let root = std::fs::canonicalize(home.root()).unwrap_or_else(|_| home.root().to_owned());
    format!("device-key:{}", root.display())
}

/// Runs `work` on a thread of its own; `None` when it gives no answer within `wait` (the
/// thread is left to finish or hang alone).
fn within<T: Send + 'static>(
    wait: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (tx, rx) = mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("conch-keychain".to_owned())
        .spawn(move || {
            let _ = tx.send(work());
        });
    spawned.ok()?;
    rx.recv_timeout(wait).ok()
}

/// Why the keychain gave no usable answer, in words (never a secret: a keychain error's
/// `Display` carries none).
fn silent(why: impl std::fmt::Display) -> String {
    why.to_string()
}

/// What the keychain said of the device key.
enum Asked {
    /// It holds a key.
    Holds(Entry, Zeroizing<Vec<u8>>),
    /// It answers and holds none.
    Empty(Entry),
    /// It did not answer, or could not be used; why.
    Silent(String),
}

fn ask(make: StoreMaker, user: String, wait: Duration) -> Asked {
    let asked = within(wait, move || {
        let store = make()?;
        let entry = Entry::new_in_store(&store, KEYCHAIN_SERVICE, &user)?;
        let got = entry.get_secret().map(Zeroizing::new);
        Ok::<_, keyring_core::Error>((entry, got))
    });
    match asked {
        None => Asked::Silent(format!("it gave no answer within {} s", wait.as_secs_f32())),
        Some(Err(e)) => Asked::Silent(silent(e)),
        Some(Ok((entry, Ok(key)))) => Asked::Holds(entry, key),
        Some(Ok((entry, Err(keyring_core::Error::NoEntry)))) => Asked::Empty(entry),
        Some(Ok((_, Err(e)))) => Asked::Silent(silent(e)),
    }
}

/// Writes `key` into `entry` and reads it back; `Err(why)` unless the read-back matches.
fn keep(entry: Entry, key: &Zeroizing<[u8; 32]>, wait: Duration) -> Result<(), String> {
    let key = key.clone();
    let done = within(wait, move || {
        entry.set_secret(&key[..]).map_err(silent)?;
        let back = Zeroizing::new(entry.get_secret().map_err(silent)?);
        if back[..] == key[..] {
            Ok(())
        } else {
            Err("it gave back another key than the one written".to_owned())
        }
    });
    done.unwrap_or_else(|| Err(format!("it gave no answer within {} s", wait.as_secs_f32())))
}

/// The sealed files present in `home`.
fn sealed_files(home: &Home) -> Vec<PathBuf> {
    [
        home.secrets_file(),
        home.errand_secrets_file(),
        home.passwords_file(),
    ]
    .into_iter()
    .filter(|p| std::fs::symlink_metadata(p).is_ok())
    .collect()
}

fn names(files: &[PathBuf]) -> String {
    files
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn as_key(bytes: &[u8]) -> Option<Zeroizing<[u8; 32]>> {
    let mut key = Zeroizing::new([0u8; 32]);
    (bytes.len() == 32).then(|| {
        key.copy_from_slice(bytes);
        key
    })
}

/// The device key of `home` and where it is kept: the keychain `make` gives when it
/// answers, else the key file (see the module's rules).
pub(super) fn device_key(
    home: &Home,
    make: StoreMaker,
    wait: Duration,
) -> Result<(Zeroizing<[u8; 32]>, KeyPlace), SealError> {
    let file = home.device_key_file();
    // The entry is named by the home's full path, so the home must exist first.
    if let Err(source) = std::fs::create_dir_all(home.root()) {
        return Err(SealError::KeyFile { path: file, source });
    }
    let has_file = std::fs::symlink_metadata(&file).is_ok();
    match ask(make, entry_user(home), wait) {
        Asked::Holds(entry, bytes) => {
            let Some(key) = as_key(&bytes) else {
                return Err(SealError::KeychainDamaged);
            };
            if !has_file {
                return Ok((key, KeyPlace::Keychain));
            }
            let from_file = from_key_file(&file)?;
            if from_file[..] == key[..] {
                // A move cut short: the keychain holds the same key; the file goes now.
                remove_key_file(&file)?;
                tracing::info!(target: "conch_browser", "the device key is in the system keychain; its key file was removed");
                return Ok((key, KeyPlace::Keychain));
            }
            // Two keys: the one that opens every sealed file wins (a key file is made
            // while the keychain was silent only when no sealed file existed, so the
            // keychain's key may seal nothing here). Any doubt: neither, nothing changed.
            let files = sealed_files(home);
            let opens_all = |k: &[u8; 32]| files.iter().all(|f| opens_with(k, f));
            if files.is_empty() || opens_all(&key) {
                remove_key_file(&file)?;
                tracing::info!(target: "conch_browser", "the key file sealed nothing here; the system keychain's device key is used");
                Ok((key, KeyPlace::Keychain))
            } else if opens_all(&from_file) {
                keep(entry, &from_file, wait)
                    .map_err(|_| SealError::TwoKeys { path: file.clone() })?;
                remove_key_file(&file)?;
                tracing::info!(target: "conch_browser", "the key file sealed this home's files; it was moved into the system keychain");
                Ok((from_file, KeyPlace::Keychain))
            } else {
                Err(SealError::TwoKeys { path: file })
            }
        }
        Asked::Empty(entry) => {
            if has_file {
                let key = from_key_file(&file)?;
                match keep(entry, &key, wait) {
                    Ok(()) => {
                        remove_key_file(&file)?;
                        tracing::info!(target: "conch_browser", "the device key was moved from its key file into the system keychain");
                        Ok((key, KeyPlace::Keychain))
                    }
                    Err(why) => {
                        tracing::warn!(target: "conch_browser", why = %why, "the device key could not be moved into the system keychain; its key file stays");
                        Ok((key, KeyPlace::KeyFile(file)))
                    }
                }
            } else {
                refuse_new_key_over_sealed_files(home, "the system keychain holds none")?;
                let key = new_key();
                match keep(entry, &key, wait) {
                    Ok(()) => Ok((key, KeyPlace::Keychain)),
                    Err(why) => {
                        tracing::warn!(target: "conch_browser", why = %why, "the system keychain could not keep a new device key; a key file holds it");
                        Ok((from_key_file(&file)?, KeyPlace::KeyFile(file)))
                    }
                }
            }
        }
        Asked::Silent(why) => {
            if !has_file {
                refuse_new_key_over_sealed_files(home, &why)?;
            }
            tracing::debug!(target: "conch_browser", why = %why, "no system keychain answered; the device key is in its key file");
            Ok((from_key_file(&file)?, KeyPlace::KeyFile(file)))
        }
    }
}

/// Fails with [`SealError::KeyUnreachable`] when sealed files are present: a new key
/// would orphan them.
fn refuse_new_key_over_sealed_files(home: &Home, why: &str) -> Result<(), SealError> {
    let files = sealed_files(home);
    if files.is_empty() {
        Ok(())
    } else {
        Err(SealError::KeyUnreachable {
            files: names(&files),
            why: why.to_owned(),
        })
    }
}

fn remove_key_file(path: &Path) -> Result<(), SealError> {
    std::fs::remove_file(path).map_err(|source| SealError::KeyFile {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;
    use std::time::Instant;

    use super::*;
    use crate::clock::ManualClock;
    use crate::seal::tests::{CANARY, home as new_home, kept};
    use crate::seal::{Sealer, SecretText, SecretsFile};

    const WAIT: Duration = Duration::from_millis(500);

    /// One mock keychain for the process, as the OS has one.
    fn mock() -> Result<Arc<CredentialStore>, keyring_core::Error> {
        static STORE: OnceLock<Arc<CredentialStore>> = OnceLock::new();
        Ok(Arc::clone(STORE.get_or_init(|| {
            keyring_core::mock::Store::new().expect("mock store")
        })))
    }

    /// A keychain that is locked or has no bus: it answers with an error.
    fn locked() -> Result<Arc<CredentialStore>, keyring_core::Error> {
        Err(keyring_core::Error::NoStorageAccess(
            "the collection is locked".into(),
        ))
    }

    /// A keychain that never answers (a prompt nobody sees, a bus that hangs).
    fn hangs() -> Result<Arc<CredentialStore>, keyring_core::Error> {
        std::thread::sleep(Duration::from_secs(600));
        Err(keyring_core::Error::NoDefaultStore)
    }

    /// Seals the canary in `home` with `sealer`, as the seal tests do.
    fn seal_canary(home: &Home, sealer: &Sealer) {
        kept(home, sealer);
    }

    fn reads_canary(home: &Home, sealer: &Sealer) {
        let clock = ManualClock::at_unix(1_796_000_001);
        let file = SecretsFile::load(home, sealer, &clock).expect("the sealed file opens");
        assert_eq!(
            file.get("browserbase").map(SecretText::expose),
            Some(CANARY)
        );
    }

    fn key_file(home: &Home) -> PathBuf {
        home.root().join("device.key")
    }

    /// BE-3, DATA-6: a key file found while a keychain answers moves into it; the file is
    /// removed only after the read-back matched, and the sealed file stays readable.
    #[test]
    fn be_3_a_key_file_moves_into_the_keychain_and_sealed_files_stay_readable() {
        let (_dir, home) = new_home();
        let before = Sealer::open(&home, None).expect("a key file");
        seal_canary(&home, &before);
        let sealed = std::fs::read(home.secrets_file()).expect("sealed");

        let sealer = Sealer::open_preferring(&home, mock, WAIT).expect("moved");
        assert_eq!(sealer.key_place(), &KeyPlace::Keychain);
        assert!(
            !key_file(&home).exists(),
            "the key file stayed after the move"
        );
        reads_canary(&home, &sealer);
        assert_eq!(std::fs::read(home.secrets_file()).expect("kept"), sealed);
        assert_eq!(last_place(&home), Some(Ok(KeyPlace::Keychain)));
        // And again, from the keychain alone.
        let again = Sealer::open_preferring(&home, mock, WAIT).expect("the keychain");
        reads_canary(&home, &again);
    }

    /// BE-3: a keychain that holds the key and stops answering never gets a new key made
    /// beside it: a clear error, nothing written, and the files open once it answers.
    #[test]
    fn be_3_a_keychain_that_stops_answering_is_said_and_no_new_key_orphans_the_files() {
        let (_dir, home) = new_home();
        let sealer = Sealer::open_preferring(&home, mock, WAIT).expect("the keychain");
        assert_eq!(sealer.key_place(), &KeyPlace::Keychain);
        seal_canary(&home, &sealer);
        let sealed = std::fs::read(home.secrets_file()).expect("sealed");

        for silent in [locked as StoreMaker, hangs] {
            let error = Sealer::open_preferring(&home, silent, WAIT).expect_err("no key");
            assert!(matches!(error, SealError::KeyUnreachable { .. }), "{error}");
            let said = error.to_string();
            assert!(said.contains("made no new key"), "{said}");
            assert!(said.contains("browser.secrets.json"), "{said}");
            assert!(!key_file(&home).exists(), "a new key file was made");
            assert_eq!(std::fs::read(home.secrets_file()).expect("kept"), sealed);
            assert!(matches!(last_place(&home), Some(Err(_))));
        }
        let back = Sealer::open_preferring(&home, mock, WAIT).expect("it answers again");
        reads_canary(&home, &back);
    }

    /// BE-3: a keychain that never answers is given up after the wait; with no sealed
    /// file yet, the key file is the declared fallback, and status says so.
    #[test]
    fn be_3_a_keychain_that_never_answers_is_given_up_in_time_for_the_key_file() {
        let (_dir, home) = new_home();
        let started = Instant::now();
        let sealer = Sealer::open_preferring(&home, hangs, WAIT).expect("the key file");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(sealer.key_place(), &KeyPlace::KeyFile(key_file(&home)));
        assert!(sealer.key_place().to_string().contains("no keychain"));
        seal_canary(&home, &sealer);
        let locked_again = Sealer::open_preferring(&home, locked, WAIT).expect("the key file");
        reads_canary(&home, &locked_again);
    }

    /// BE-3: the keychain and the key file holding different keys are settled by the
    /// sealed files: the key that opens them all stays (in the keychain), whichever place
    /// held it; when neither opens them, neither is chosen and nothing changes.
    #[test]
    fn be_3_two_device_keys_are_settled_by_the_sealed_files_or_not_at_all() {
        // The keychain's key seals the files; a stray key file is dropped.
        let (_dir, home) = new_home();
        let in_keychain = Sealer::open_preferring(&home, mock, WAIT).expect("the keychain");
        seal_canary(&home, &in_keychain);
        Sealer::open(&home, None).expect("a second key, in a file");
        let sealer = Sealer::open_preferring(&home, mock, WAIT).expect("settled");
        assert_eq!(sealer.key_place(), &KeyPlace::Keychain);
        assert!(!key_file(&home).exists(), "the stray key file stayed");
        reads_canary(&home, &sealer);

        // The keychain was silent while nothing was sealed: a key file was made and sealed
        // the files since. When the keychain answers again, that key moves into it.
        let (_dir, home) = new_home();
        Sealer::open_preferring(&home, mock, WAIT).expect("a key in the keychain");
        let from_file = Sealer::open_preferring(&home, locked, WAIT).expect("a key file");
        assert_eq!(from_file.key_place(), &KeyPlace::KeyFile(key_file(&home)));
        seal_canary(&home, &from_file);
        let sealer = Sealer::open_preferring(&home, mock, WAIT).expect("settled");
        assert_eq!(sealer.key_place(), &KeyPlace::Keychain);
        assert!(!key_file(&home).exists(), "the moved key file stayed");
        reads_canary(&home, &sealer);
        let again = Sealer::open_preferring(&home, mock, WAIT).expect("the keychain");
        reads_canary(&home, &again);

        // A file sealed under a third key: neither is chosen, nothing is removed.
        let (_dir, home) = new_home();
        Sealer::open_preferring(&home, mock, WAIT).expect("a key in the keychain");
        let (_other_dir, other) = new_home();
        let stranger = Sealer::open(&other, None).expect("another home's key");
        seal_canary(&other, &stranger);
        std::fs::copy(other.secrets_file(), home.secrets_file()).expect("copied");
        Sealer::open(&home, None).expect("a key file");
        let error = Sealer::open_preferring(&home, mock, WAIT).expect_err("two keys");
        assert!(matches!(error, SealError::TwoKeys { .. }), "{error}");
        assert!(key_file(&home).exists(), "the key file was removed");
        assert!(home.secrets_file().exists(), "the sealed file was moved");
    }

    fn last_place(home: &Home) -> Option<Result<KeyPlace, String>> {
        crate::seal::last_key_place(home)
    }
}
