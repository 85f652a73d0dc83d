//! Conch's home directory and every browser path under it (DATA-1).
//!
//! [`Home`] is the one place a browser path is made: `browser.json`, `browser/profile/`,
//! `browser/tabs.json`, `browser/shots/`, the browser process's own temp, runtime and home
//! directories (`browser/tmp/`, `browser/run/`, `browser/home/`, LAUNCH-15) and the two
//! sealed files. It also says which paths the embedder's file tools must protect
//! ([`Home::protected_paths`], DATA-10), how each file is treated by backups
//! ([`Home::manifest`], DATA-11), and wipes the profile for "Sign out of everything"
//! ([`Home::wipe_profile`], DATA-4). One process owns a home at a time: [`Home::lock`]
//! holds an advisory lock on `<home>/conch.lock` (issue 12), so a second gateway on the same
//! folder neither kills the first one's browser nor writes over its tabs.
//!
//! Deliberately absent: reading or writing the files themselves (see [`crate::store`]), and
//! any path outside the home. Conch never touches the person's own browser profiles
//! (DATA-3).

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use crate::choice::Backend;

/// The variable that moves Conch's home away from `~/.conch`.
pub const HOME_VAR: &str = "CONCH_HOME";

/// Conch's home directory (`~/.conch` by default), the root of every browser path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    /// A home at `root`, made absolute against the current directory when it is relative
    /// (a browser must get an absolute `--user-data-dir`).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let root = std::path::absolute(&root).unwrap_or(root);
        Home { root }
    }

    /// The home this process should use: `CONCH_HOME` when set, else `.conch` in the
    /// person's home folder (`HOME`; on Windows `USERPROFILE` too).
    ///
    /// # Errors
    /// When none of those variables is set.
    pub fn from_env() -> Result<Self, HomeError> {
        Self::from_vars(|name| std::env::var_os(name))
    }

    /// As [`Home::from_env`], reading variables through `var` (for tests).
    ///
    /// # Errors
    /// When none of the variables is set.
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Result<Self, HomeError> {
        let set = |name: &str| var(name).filter(|value| !value.is_empty());
        if let Some(root) = set(HOME_VAR) {
            return Ok(Home::new(root));
        }
        let person = set("HOME").or_else(|| {
            if cfg!(windows) {
                set("USERPROFILE")
            } else {
                None
            }
        });
        person
            .map(|dir| Home::new(PathBuf::from(dir).join(".conch")))
            .ok_or(HomeError::NoHome)
    }

    /// The home directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<home>/browser.json`: the browser settings (DATA-5).
    pub fn settings_file(&self) -> PathBuf {
        self.root.join("browser.json")
    }

    /// `<home>/browser.secrets.json`: backend keys and addresses, sealed (DATA-6).
    pub fn secrets_file(&self) -> PathBuf {
        self.root.join("browser.secrets.json")
    }

    /// `<home>/device.key`: the device key that seals the secrets, when no keychain holds
    /// it (BE-3).
    pub fn device_key_file(&self) -> PathBuf {
        self.root.join("device.key")
    }

    /// `<home>/browser.errands.secrets.json`: set-aside errand sessions, sealed (DATA-7).
    pub fn errand_secrets_file(&self) -> PathBuf {
        self.root.join("browser.errands.secrets.json")
    }

    /// `<home>/passwords.secrets.json`: the person's saved passwords, sealed; the
    /// gateway's default secret filler reads it (issue 16).
    pub fn passwords_file(&self) -> PathBuf {
        self.root.join("passwords.secrets.json")
    }

    /// `<home>/conch.lock`: the lock that makes one process the home's owner (issue 12).
    pub fn lock_file(&self) -> PathBuf {
        self.root.join("conch.lock")
    }

    /// Makes this process the home's one owner, for as long as the returned [`HomeLock`]
    /// (or a clone) lives: an advisory lock (`flock` on Unix) on `<home>/conch.lock`, which
    /// also records this process's id. Within one process every caller shares the one
    /// lock; another process gets [`HomeError::Busy`]. The home is created if missing.
    ///
    /// # Errors
    /// [`HomeError::Busy`] when another process owns the home; [`HomeError::Create`] or
    /// [`HomeError::Lock`] when the folder or the lock file cannot be made or locked.
    pub fn lock(&self) -> Result<HomeLock, HomeError> {
        static HELD: Mutex<Option<HashMap<PathBuf, Weak<LockFile>>>> = Mutex::new(None);
        let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
        let held = held.get_or_insert_with(HashMap::new);
        let path = self.lock_file();
        if let Some(shared) = held.get(&path).and_then(Weak::upgrade) {
            return Ok(HomeLock { _shared: shared });
        }
        create_private_dir(&self.root)?;
        let lock_error = |source| HomeError::Lock {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(lock_error)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut recorded = String::new();
                let pid = file
                    .read_to_string(&mut recorded)
                    .ok()
                    .and_then(|_| recorded.trim().parse().ok());
                return Err(HomeError::Busy {
                    home: self.root.clone(),
                    pid,
                });
            }
            Err(TryLockError::Error(e)) => return Err(lock_error(e)),
        }
        // The owner's id, for the sentence another process shows.
        let recorded = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| writeln!(file, "{}", std::process::id()));
        if let Err(e) = recorded {
            tracing::debug!(target: "conch_browser", error = %e, "the owner's id was not recorded in conch.lock");
        }
        let shared = Arc::new(LockFile { _file: file });
        held.retain(|_, weak| weak.strong_count() > 0);
        held.insert(path, Arc::downgrade(&shared));
        Ok(HomeLock { _shared: shared })
    }

    /// `<home>/browser/`: the folder for everything else the browser keeps.
    pub fn browser_dir(&self) -> PathBuf {
        self.root.join("browser")
    }

    /// `<home>/browser/profile/`: the main profile, Chromium's own store (DATA-2).
    pub fn profile_dir(&self) -> PathBuf {
        self.browser_dir().join("profile")
    }

    /// `<home>/browser/tabs.json`: each conversation's tabs (DATA-9).
    pub fn tabs_file(&self) -> PathBuf {
        self.browser_dir().join("tabs.json")
    }

    /// `<home>/browser/shots/`: screenshots and action thumbnails (DATA-8).
    pub fn shots_dir(&self) -> PathBuf {
        self.browser_dir().join("shots")
    }

    /// `<home>/browser/tmp/`: the browser process's `TMPDIR` (LAUNCH-15).
    pub fn tmp_dir(&self) -> PathBuf {
        self.browser_dir().join("tmp")
    }

    /// `<home>/browser/run/`: the browser process's `XDG_RUNTIME_DIR` (LAUNCH-15).
    pub fn run_dir(&self) -> PathBuf {
        self.browser_dir().join("run")
    }

    /// `<home>/browser/home/`: the browser process's own `HOME` (LAUNCH-15, AMB-24).
    pub fn browser_home_dir(&self) -> PathBuf {
        self.browser_dir().join("home")
    }

    /// Creates the home and the browser's folders, private to this user (0700 on Unix).
    /// The browser's own folders are made private even when they already exist; the home
    /// itself is made private only when this call creates it.
    ///
    /// # Errors
    /// When a folder cannot be created or made private.
    pub fn ensure(&self) -> Result<(), HomeError> {
        // A new home is created 0700; an existing one (perhaps the person's choice through
        // CONCH_HOME) keeps its permissions.
        create_private_dir(&self.root)?;
        for dir in [
            self.browser_dir(),
            self.profile_dir(),
            self.shots_dir(),
            self.tmp_dir(),
            self.run_dir(),
            self.browser_home_dir(),
        ] {
            create_private_dir(&dir)?;
            make_private(&dir)?;
        }
        Ok(())
    }

    /// The paths the embedder's file tools must refuse, and Conch's own upload checks
    /// refuse too (DATA-10, UP-7, BE-3): the device key file, the sealed files and the
    /// profile. Their set-aside `.corrupt-*` copies and any other `*.secrets.json` are
    /// refused by name too (`conch_policy::is_sealed_secret_name`).
    pub fn protected_paths(&self) -> Vec<PathBuf> {
        vec![
            self.device_key_file(),
            self.secrets_file(),
            self.errand_secrets_file(),
            self.passwords_file(),
            self.profile_dir(),
        ]
    }

    /// How backups treat Conch's browser files, and the powers a backup carries (DATA-11,
    /// BE-16): the sealed keys are secret, the sealed errand sessions are derived (copies
    /// of sign-ins, never carried to another computer), the settings are ordinary; with
    /// backend `chrome` the backup has the power `browser-own-chrome`.
    pub fn manifest(&self, backend: Backend) -> Manifest {
        let powers = if backend.abilities().persons_browser {
            vec![BackupPower::OwnChrome]
        } else {
            Vec::new()
        };
        Manifest {
            files: vec![
                BackupFile {
                    path: self.settings_file(),
                    class: BackupClass::Ordinary,
                },
                BackupFile {
                    path: self.secrets_file(),
                    class: BackupClass::Secret,
                },
                BackupFile {
                    path: self.errand_secrets_file(),
                    class: BackupClass::Derived,
                },
                BackupFile {
                    path: self.passwords_file(),
                    class: BackupClass::Secret,
                },
            ],
            powers,
        }
    }

    /// Deletes everything inside the profile, for "Sign out of everything" (DATA-4), and
    /// leaves the profile folder itself, empty and private. The caller closes the browser
    /// first. Symbolic links are removed, never followed.
    ///
    /// # Errors
    /// When an entry cannot be removed; whatever was removed before stays removed.
    pub fn wipe_profile(&self) -> Result<(), HomeError> {
        let profile = self.profile_dir();
        let wipe_error = |path: &Path, source| HomeError::Wipe {
            path: path.to_owned(),
            source,
        };
        let entries = match std::fs::read_dir(&profile) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                create_private_dir(&profile)?;
                return make_private(&profile);
            }
            Err(e) => return Err(wipe_error(&profile, e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| wipe_error(&profile, e))?;
            let path = entry.path();
            let is_dir = std::fs::symlink_metadata(&path)
                .map_err(|e| wipe_error(&path, e))?
                .is_dir();
            let removed = if is_dir {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.map_err(|e| wipe_error(&path, e))?;
        }
        make_private(&profile)
    }
}

/// This process's ownership of a home ([`Home::lock`]): while any clone lives, no other
/// process can own it. Dropping the last clone lets the lock go.
#[derive(Debug, Clone)]
pub struct HomeLock {
    _shared: Arc<LockFile>,
}

/// The open, locked `conch.lock`; closing it releases the lock.
#[derive(Debug)]
struct LockFile {
    _file: File,
}

/// Whether this process owns the home, as the runtime keeps it: the lock, or why it could
/// not be had.
#[derive(Debug, Clone)]
pub(crate) struct Ownership(Result<HomeLock, Arc<HomeError>>);

impl Ownership {
    /// Takes the home's lock ([`Home::lock`]) and keeps the outcome.
    pub(crate) fn take(home: &Home) -> Self {
        Ownership(home.lock().map_err(Arc::new))
    }

    /// Nothing when this process owns the home; else why not, as the lock said it
    /// (the runtime's error turns it into the sentence with the way out).
    pub(crate) fn check(&self) -> Result<(), Arc<HomeError>> {
        match &self.0 {
            Ok(_) => Ok(()),
            Err(e) => Err(Arc::clone(e)),
        }
    }
}

/// How a backup treats a file (DATA-11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BackupClass {
    /// Backed up and restored like any file.
    Ordinary,
    /// Holds keys: backed up only under the backup's own protection.
    Secret,
    /// Copies of sign-ins made on this computer: never carried to another one.
    Derived,
}

impl BackupClass {
    /// The class's name for the embedder (`ordinary`, `secret`, `derived`).
    pub fn as_str(self) -> &'static str {
        match self {
            BackupClass::Ordinary => "ordinary",
            BackupClass::Secret => "secret",
            BackupClass::Derived => "derived",
        }
    }

    /// Whether a restore on another computer may bring the file along.
    pub fn carried_to_another_computer(self) -> bool {
        !matches!(self, BackupClass::Derived)
    }
}

/// A power a backup carries, said before it is restored (BE-16).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BackupPower {
    /// The backup turns on the person's own Chrome as the backend.
    OwnChrome,
}

impl BackupPower {
    /// The power's stable code: `browser-own-chrome`.
    pub fn code(self) -> &'static str {
        match self {
            BackupPower::OwnChrome => "browser-own-chrome",
        }
    }
}

/// One file in the backup manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupFile {
    /// The file's path.
    pub path: PathBuf,
    /// How backups treat it.
    pub class: BackupClass,
}

/// The backup classification of Conch's browser files (DATA-11).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// Each file and its class.
    pub files: Vec<BackupFile>,
    /// The powers a backup of this state carries.
    pub powers: Vec<BackupPower>,
}

/// A problem with Conch's home directory. Reads after "failed to".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HomeError {
    /// Neither `CONCH_HOME` nor the person's home folder is known.
    #[error("find Conch's home: neither CONCH_HOME nor HOME is set")]
    NoHome,
    /// A folder could not be created or made private.
    #[error("create the private folder {}", path.display())]
    Create {
        /// The folder.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// Another process owns the home (it holds `<home>/conch.lock`).
    #[error("use {}: another Conch{} is using it", home.display(), pid.map(|p| format!(" (process {p})")).unwrap_or_default())]
    Busy {
        /// The home.
        home: PathBuf,
        /// The owner's process id, as it recorded it.
        pid: Option<u32>,
    },
    /// The lock file could not be opened or locked.
    #[error("lock {}", path.display())]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The profile could not be emptied.
    #[error("wipe {} from the profile", path.display())]
    Wipe {
        /// The entry that would not go.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

/// Creates `dir` and its missing parents (0700 on Unix).
fn create_private_dir(dir: &Path) -> Result<(), HomeError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|source| HomeError::Create {
        path: dir.to_owned(),
        source,
    })
}

/// Makes `dir` readable by this user only (Unix; Windows folders under the person's
/// profile are private already).
fn make_private(dir: &Path) -> Result<(), HomeError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(
            |source| HomeError::Create {
                path: dir.to_owned(),
                source,
            },
        )?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DATA-1: CONCH_HOME wins, then HOME; no home at all is a typed error.
    #[test]
    fn data_1_home_from_variables() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let both = Home::from_vars(vars(&[("CONCH_HOME", "/srv/conch"), ("HOME", "/home/ana")]))
            .expect("a home");
        assert_eq!(both.root(), Path::new("/srv/conch"));
        let home_only =
            Home::from_vars(vars(&[("CONCH_HOME", ""), ("HOME", "/home/ana")])).expect("a home");
        assert_eq!(home_only.root(), Path::new("/home/ana/.conch"));
        let none = Home::from_vars(vars(&[])).expect_err("no home");
        assert!(matches!(none, HomeError::NoHome));
        assert_eq!(
            none.to_string(),
            "find Conch's home: neither CONCH_HOME nor HOME is set"
        );
    }

    /// DATA-1: a relative home is made absolute, so the profile path is too.
    #[test]
    fn data_1_relative_home_becomes_absolute() {
        let home = Home::new("some/relative/dir");
        assert!(home.root().is_absolute());
        assert!(home.profile_dir().is_absolute());
        assert!(home.root().ends_with("some/relative/dir"));
    }
}
