//! The files Conch keeps about the browser: [`BrowserSettings`] in `browser.json` (DATA-5)
//! and [`TabsFile`] in `browser/tabs.json` (DATA-9).
//!
//! Each file is camelCase JSON carrying `"format": 1`. Fields this build does not know are
//! ignored when reading (a newer build may add some) and are not written back. Loading
//! never fails on a file's contents: a missing file gives the defaults, and a corrupt one
//! (not JSON, the wrong shape, no format, or a format newer than this build knows) is moved
//! aside as `<name>.corrupt-<UTC stamp>` and reported in [`Loaded::set_aside`] along with
//! the defaults, so nothing is silently lost. Writes go to a temporary file in the same
//! directory, are flushed to disk, then renamed over the old file: a reader sees the old
//! file or the new one, never half of either.
//!
//! Deliberately absent: backend keys and addresses. They live sealed in
//! `browser.secrets.json` (DATA-6), which this module does not touch, and
//! [`BrowserSettings`] has no field that could hold one. No `flatten` or `untagged`
//! either: they make poor errors for files a person may edit.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::choice::Backend;
use crate::clock::{Clock, utc_stamp};
use crate::home::Home;

/// The format version this build reads and writes.
pub const FORMAT: u32 = 1;

/// The address `browser_tabs open` with `search` uses when none is set (AMB-6).
pub const DEFAULT_SEARCH_URL: &str = "https://duckduckgo.com/?q=%s";

/// The browser settings in `<home>/browser.json` (DATA-5). Never holds backend keys or
/// addresses: those are sealed in `browser.secrets.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BrowserSettings {
    /// Which browser Conch drives.
    pub backend: Backend,
    /// Whether Conch declines cookie banners by itself.
    pub decline_cookie_banners: bool,
    /// Whether pages may reach loopback (all but the gateway's own port).
    pub allow_localhost: bool,
    /// Local origins the person allows, each `host:port` (AMB-3).
    pub allow_hosts: Vec<String>,
    /// The search address, with `%s` where the words go (AMB-6, TAB-8).
    pub search_url: String,
    /// The sites (registrable domains) the person always allows: sorted, without repeats.
    pub sites: BTreeSet<String>,
    /// The user agent seen per browser, for status only (AMB-16, BOT-5): Conch never
    /// rewrites the user agent.
    pub user_agents: BTreeMap<String, String>,
}

impl Default for BrowserSettings {
    fn default() -> Self {
        BrowserSettings {
            backend: Backend::Local,
            decline_cookie_banners: true,
            allow_localhost: false,
            allow_hosts: Vec::new(),
            search_url: DEFAULT_SEARCH_URL.to_owned(),
            sites: BTreeSet::new(),
            user_agents: BTreeMap::new(),
        }
    }
}

impl BrowserSettings {
    /// Reads `<home>/browser.json` (see [`BrowserSettings::load_from`]).
    ///
    /// # Errors
    /// Only when the file exists but cannot be read or set aside.
    pub fn load(home: &Home, clock: &dyn Clock) -> Result<Loaded<Self>, StoreError> {
        Self::load_from(&home.settings_file(), clock)
    }

    /// Reads the settings at `path`: the defaults when the file is missing, and the defaults
    /// plus a [`SetAside`] report when it is corrupt.
    ///
    /// # Errors
    /// Only when the file exists but cannot be read or set aside.
    pub fn load_from(path: &Path, clock: &dyn Clock) -> Result<Loaded<Self>, StoreError> {
        load(path, clock, |_: &mut Self| {})
    }

    /// Writes `<home>/browser.json` atomically.
    ///
    /// # Errors
    /// When the file cannot be written; the old file is then left as it was.
    pub fn save(&self, home: &Home) -> Result<(), StoreError> {
        self.save_to(&home.settings_file())
    }

    /// Writes the settings to `path` atomically.
    ///
    /// # Errors
    /// When the file cannot be written; the old file is then left as it was.
    pub fn save_to(&self, path: &Path) -> Result<(), StoreError> {
        save(path, self)
    }

    /// Reads `<home>/browser.json`, lets `change` change the settings, and writes them
    /// back when it says so (`Ok(true)`), all under one lock this process holds for every
    /// such change: two changes (an Always answer, a revoke, the settings page) never
    /// write over each other. Gives the settings as they now are, or `change`'s error
    /// with nothing written.
    ///
    /// # Errors
    /// [`UpdateError::Store`] when the file can't be read or written;
    /// [`UpdateError::Refused`] with `change`'s own error.
    pub fn update<E>(
        home: &Home,
        clock: &dyn Clock,
        change: impl FnOnce(&mut Self) -> Result<bool, E>,
    ) -> Result<Self, UpdateError<E>> {
        static CHANGES: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one_at_a_time = CHANGES
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut settings = Self::load(home, clock)?.value;
        if change(&mut settings).map_err(UpdateError::Refused)? {
            settings.save(home)?;
        }
        Ok(settings)
    }

    /// Adds `site` to the always-allowed sites. Returns whether it was new.
    pub fn allow_site(&mut self, site: &str) -> bool {
        self.sites.insert(site.to_owned())
    }

    /// Removes `site` from the always-allowed sites. Returns whether it was there.
    pub fn revoke_site(&mut self, site: &str) -> bool {
        self.sites.remove(site)
    }

    /// Whether `site` is always allowed.
    pub fn is_site_allowed(&self, site: &str) -> bool {
        self.sites.contains(site)
    }
}

/// Why [`BrowserSettings::update`] changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum UpdateError<E> {
    /// browser.json could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The change itself refused.
    #[error("the change was refused")]
    Refused(E),
}

/// Every conversation's tabs, in `<home>/browser/tabs.json` (DATA-9), rewritten on each tab
/// change so tabs can be reopened after a crash, a restart or a Resume (LAUNCH-8).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TabsFile {
    /// The tabs of each conversation, by conversation id (TAB-9: never mixed).
    pub conversations: BTreeMap<String, ConversationTabs>,
    /// The file on disk could not be read: these tabs are never written over it.
    #[serde(skip)]
    unreadable: bool,
}

impl TabsFile {
    /// Reads `<home>/browser/tabs.json` (see [`TabsFile::load_from`]).
    ///
    /// # Errors
    /// Only when the file exists but cannot be read or set aside.
    pub fn load(home: &Home, clock: &dyn Clock) -> Result<Loaded<Self>, StoreError> {
        Self::load_from(&home.tabs_file(), clock)
    }

    /// Reads the tabs at `path`: empty when the file is missing, and empty plus a
    /// [`SetAside`] report when it is corrupt. Each conversation's next tab number is raised
    /// past every id in the file, so an id is never handed out twice (TAB-2).
    ///
    /// # Errors
    /// Only when the file exists but cannot be read or set aside.
    pub fn load_from(path: &Path, clock: &dyn Clock) -> Result<Loaded<Self>, StoreError> {
        load(path, clock, |file: &mut Self| {
            for tabs in file.conversations.values_mut() {
                tabs.repair_next_tab();
            }
        })
    }

    /// Writes `<home>/browser/tabs.json` atomically.
    ///
    /// # Errors
    /// When the file cannot be written; the old file is then left as it was.
    pub fn save(&self, home: &Home) -> Result<(), StoreError> {
        self.save_to(&home.tabs_file())
    }

    /// Writes the tabs to `path` atomically.
    ///
    /// # Errors
    /// When the file cannot be written, or these tabs stand in for a file that could not be
    /// read ([`TabsFile::unreadable`]); the old file is then left as it was.
    pub fn save_to(&self, path: &Path) -> Result<(), StoreError> {
        if self.unreadable {
            return Err(StoreError::new(
                StoreOp::Write,
                path,
                io::Error::other(
                    "the saved tabs could not be read when Conch started, so the file is left as it was",
                ),
            ));
        }
        save(path, self)
    }

    /// No tabs, standing in for a tabs file that exists but could not be read or set aside:
    /// saving them is refused, so the file is never started over empty (issue 12).
    pub fn unreadable() -> Self {
        TabsFile {
            unreadable: true,
            ..TabsFile::default()
        }
    }

    /// One conversation's tabs, if it has any record.
    pub fn conversation(&self, conversation: &str) -> Option<&ConversationTabs> {
        self.conversations.get(conversation)
    }

    /// One conversation's tabs, made empty if it had no record.
    pub fn conversation_mut(&mut self, conversation: &str) -> &mut ConversationTabs {
        self.conversations
            .entry(conversation.to_owned())
            .or_default()
    }

    /// Drops a conversation's record (its chat was deleted, AMB-28). Returns it.
    pub fn forget(&mut self, conversation: &str) -> Option<ConversationTabs> {
        self.conversations.remove(conversation)
    }
}

/// One conversation's tabs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ConversationTabs {
    /// The tabs, in the order they were opened.
    pub tabs: Vec<SavedTab>,
    /// The id of the active tab.
    pub active: Option<String>,
    /// The number the next tab's id gets: ids are never reused in a conversation (TAB-2).
    pub next_tab: u32,
}

impl Default for ConversationTabs {
    fn default() -> Self {
        ConversationTabs {
            tabs: Vec::new(),
            active: None,
            next_tab: 1,
        }
    }
}

impl ConversationTabs {
    /// Hands out the next tab id (`t1`, `t2`, …), never one given before (TAB-2).
    pub fn allocate_id(&mut self) -> String {
        self.repair_next_tab();
        let id = format!("t{}", self.next_tab);
        self.next_tab = self.next_tab.saturating_add(1);
        id
    }

    /// The tab with id `id`.
    pub fn tab(&self, id: &str) -> Option<&SavedTab> {
        self.tabs.iter().find(|tab| tab.id == id)
    }

    /// The tab with id `id`, to change.
    pub fn tab_mut(&mut self, id: &str) -> Option<&mut SavedTab> {
        self.tabs.iter_mut().find(|tab| tab.id == id)
    }

    /// Raises `next_tab` past every `tN` id present (a hand-edited or older file).
    fn repair_next_tab(&mut self) {
        let past_ids = self
            .tabs
            .iter()
            .filter_map(|tab| tab.id.strip_prefix('t')?.parse::<u32>().ok())
            .max()
            .map_or(1, |n| n.saturating_add(1));
        self.next_tab = self.next_tab.max(past_ids).max(1);
    }
}

/// One tab as recorded in `tabs.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedTab {
    /// The tab's id in its conversation: `t1`, `t2`, …
    pub id: String,
    /// The address it showed last.
    pub url: String,
    /// Its title.
    #[serde(default)]
    pub title: String,
    /// The id of the tab that opened it (a popup or a new-tab link, TAB-6).
    #[serde(default)]
    pub opener: Option<String>,
    /// When it was last used, as an order: a higher number was used more recently (TAB-5).
    #[serde(default)]
    pub last_used: u64,
}

/// What loading a file gave: its value, and whether a corrupt file was set aside first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded<T> {
    /// The file's contents, or the defaults when it was missing or set aside.
    pub value: T,
    /// The report to show the person when a corrupt file was moved aside.
    pub set_aside: Option<SetAside>,
}

/// A corrupt file moved aside so defaults could be used. The caller shows it to the person:
/// the file's contents are kept, never silently lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAside {
    /// Where the file was.
    pub original: PathBuf,
    /// Where it is now: `<original>.corrupt-<UTC stamp>`.
    pub moved_to: PathBuf,
    /// What was wrong with it.
    pub reason: CorruptReason,
}

impl fmt::Display for SetAside {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} could not be used ({}), so it was moved to {} and the defaults are used instead",
            self.original.display(),
            self.reason,
            self.moved_to.display()
        )
    }
}

/// Why a file was set aside.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CorruptReason {
    /// The bytes are not JSON.
    NotJson {
        /// The line of the first error (1-based).
        line: usize,
        /// The column of the first error (1-based).
        column: usize,
    },
    /// The JSON has no `format` field.
    NoFormat,
    /// A newer build wrote it.
    NewerFormat {
        /// The format the file says it has.
        found: u64,
        /// The newest format this build knows.
        known: u32,
    },
    /// The JSON is not shaped as this file should be.
    WrongShape {
        /// What did not fit, as the JSON reader put it.
        detail: String,
    },
}

impl fmt::Display for CorruptReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CorruptReason::NotJson { line, column } => {
                write!(f, "it is not JSON: line {line}, column {column}")
            }
            CorruptReason::NoFormat => f.write_str("it has no format version"),
            CorruptReason::NewerFormat { found, known } => write!(
                f,
                "a newer Conch wrote it in format {found}; this one knows up to {known}"
            ),
            CorruptReason::WrongShape { detail } => write!(f, "it is not shaped right: {detail}"),
        }
    }
}

/// A file of Conch's could not be read, written or set aside. Reads after "failed to".
#[derive(Debug, thiserror::Error)]
#[error("{op} {}", path.display())]
pub struct StoreError {
    op: StoreOp,
    path: PathBuf,
    #[source]
    source: io::Error,
}

impl StoreError {
    pub(crate) fn new(op: StoreOp, path: &Path, source: io::Error) -> Self {
        StoreError {
            op,
            path: path.to_owned(),
            source,
        }
    }

    /// What was being done.
    pub fn op(&self) -> StoreOp {
        self.op
    }

    /// The file it was done to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The operating system's error.
    pub fn io_error(&self) -> &io::Error {
        &self.source
    }
}

/// What [`StoreError`] was doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreOp {
    /// Reading the file.
    Read,
    /// Writing the file (including encoding it).
    Write,
    /// Moving a corrupt file aside.
    SetAside,
}

impl fmt::Display for StoreOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StoreOp::Read => "read",
            StoreOp::Write => "write",
            StoreOp::SetAside => "set aside",
        })
    }
}

/// Reads a versioned JSON file, setting a corrupt one aside (see the module doc).
fn load<T: DeserializeOwned + Default>(
    path: &Path,
    clock: &dyn Clock,
    repair: impl FnOnce(&mut T),
) -> Result<Loaded<T>, StoreError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Loaded {
                value: T::default(),
                set_aside: None,
            });
        }
        Err(e) => return Err(StoreError::new(StoreOp::Read, path, e)),
    };
    match decode::<T>(&bytes) {
        Ok(mut value) => {
            repair(&mut value);
            Ok(Loaded {
                value,
                set_aside: None,
            })
        }
        Err(reason) => {
            let moved_to = set_aside(path, clock)?;
            Ok(Loaded {
                value: T::default(),
                set_aside: Some(SetAside {
                    original: path.to_owned(),
                    moved_to,
                    reason,
                }),
            })
        }
    }
}

/// Checks the format version, then reads the rest as `T`.
fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CorruptReason> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        if e.is_data() {
            CorruptReason::WrongShape {
                detail: e.to_string(),
            }
        } else {
            CorruptReason::NotJson {
                line: e.line(),
                column: e.column(),
            }
        }
    })?;
    let Value::Object(mut fields) = value else {
        return Err(CorruptReason::WrongShape {
            detail: "the file is not a JSON object".to_owned(),
        });
    };
    let format = fields
        .remove("format")
        .ok_or(CorruptReason::NoFormat)?
        .as_u64()
        .filter(|&n| n >= 1)
        .ok_or_else(|| CorruptReason::WrongShape {
            detail: "`format` is not a positive whole number".to_owned(),
        })?;
    if format > u64::from(FORMAT) {
        return Err(CorruptReason::NewerFormat {
            found: format,
            known: FORMAT,
        });
    }
    serde_json::from_value(Value::Object(fields)).map_err(|e| CorruptReason::WrongShape {
        detail: e.to_string(),
    })
}

/// Moves `path` to `<path>.corrupt-<stamp>` (with `-2`, `-3`, … if that is taken).
pub(crate) fn set_aside(path: &Path, clock: &dyn Clock) -> Result<PathBuf, StoreError> {
    let stamp = utc_stamp(clock.now());
    let mut base = path.as_os_str().to_owned();
    base.push(format!(".corrupt-{stamp}"));
    let mut moved_to = PathBuf::from(&base);
    let mut n = 1u32;
    while std::fs::symlink_metadata(&moved_to).is_ok() {
        n += 1;
        let mut next = base.clone();
        next.push(format!("-{n}"));
        moved_to = PathBuf::from(next);
    }
    std::fs::rename(path, &moved_to).map_err(|e| StoreError::new(StoreOp::SetAside, path, e))?;
    sync_dir(path).map_err(|e| StoreError::new(StoreOp::SetAside, path, e))?;
    Ok(moved_to)
}

/// Writes `value` with the format version, atomically.
fn save<T: Serialize>(path: &Path, value: &T) -> Result<(), StoreError> {
    let write_error = |e: io::Error| StoreError::new(StoreOp::Write, path, e);
    let mut json = serde_json::to_value(value).map_err(|e| write_error(e.into()))?;
    if let Value::Object(fields) = &mut json {
        fields.insert("format".to_owned(), Value::from(FORMAT));
    }
    let mut bytes = serde_json::to_vec_pretty(&json).map_err(|e| write_error(e.into()))?;
    bytes.push(b'\n');
    write_atomic(path, |file| file.write_all(&bytes))
}

/// Writes a file through a temporary file in the same directory, flushed to disk, then
/// renamed over `path`. When `fill` or anything else fails, the temporary file is removed
/// and `path` is left as it was.
pub(crate) fn write_atomic(
    path: &Path,
    fill: impl FnOnce(&mut File) -> io::Result<()>,
) -> Result<(), StoreError> {
    let write_error = |e: io::Error| StoreError::new(StoreOp::Write, path, e);
    let dir = parent_dir(path);
    // A backend that never launched a local browser never made its folder (issue 13).
    std::fs::create_dir_all(dir).map_err(write_error)?;
    let mut prefix = path.file_name().unwrap_or_default().to_owned();
    prefix.push(".");
    let mut temp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(write_error)?;
    fill(temp.as_file_mut()).map_err(write_error)?;
    temp.as_file().sync_all().map_err(write_error)?;
    temp.persist(path).map_err(|e| write_error(e.error))?;
    sync_dir(path).map_err(write_error)
}

/// The directory holding `path` (`.` for a bare file name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Flushes the directory holding `path`, so a rename in it survives a power cut. Windows
/// cannot open a directory this way and flushes renames itself.
fn sync_dir(path: &Path) -> io::Result<()> {
    if cfg!(unix) {
        File::open(parent_dir(path))?.sync_all()
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    /// A write that fails halfway leaves the old file whole and no temporary file behind.
    #[test]
    fn failed_fill_keeps_the_old_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("browser.json");
        std::fs::write(&path, b"old bytes").expect("seed");
        let err = write_atomic(&path, |file| {
            file.write_all(b"half of the new")?;
            Err(io::Error::other("disk full"))
        })
        .expect_err("the fill failed");
        assert_eq!(err.op(), StoreOp::Write);
        assert_eq!(err.path(), path);
        assert_eq!(std::fs::read(&path).expect("old file"), b"old bytes");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["browser.json"]);
    }

    /// DATA-9: tabs.json is saved even when nothing made `<home>/browser/` yet (a remote
    /// backend launches no local browser to make it).
    #[test]
    fn data_9_a_file_is_written_into_a_folder_not_made_yet() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("browser").join("tabs.json");
        write_atomic(&path, |file| file.write_all(b"{}")).expect("written");
        assert_eq!(std::fs::read(&path).expect("the file"), b"{}");
    }

    /// Decoding sorts problems into the reasons a person is shown.
    #[test]
    fn corrupt_reasons() {
        let reason = |bytes: &[u8]| decode::<BrowserSettings>(bytes).expect_err("corrupt");
        assert_eq!(
            reason(b"{\"format\": 1,"),
            CorruptReason::NotJson {
                line: 1,
                column: 13
            }
        );
        assert_eq!(reason(b"{}"), CorruptReason::NoFormat);
        assert_eq!(
            reason(b"{\"format\": 2}"),
            CorruptReason::NewerFormat { found: 2, known: 1 }
        );
        assert!(matches!(reason(b"[1]"), CorruptReason::WrongShape { .. }));
        assert!(matches!(
            reason(b"{\"format\": 0}"),
            CorruptReason::WrongShape { .. }
        ));
        assert!(matches!(
            reason(b"{\"format\": 1, \"backend\": \"netscape\"}"),
            CorruptReason::WrongShape { .. }
        ));
        assert!(matches!(
            reason(b"{\"format\": 1, \"sites\": 3}"),
            CorruptReason::WrongShape { .. }
        ));
    }

    /// Two corruptions in the same second get distinct set-aside names.
    #[test]
    fn set_aside_names_do_not_collide() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("tabs.json");
        let clock = ManualClock::at_unix(1_795_993_501);
        std::fs::write(&path, b"one").expect("seed");
        let first = set_aside(&path, &clock).expect("first");
        std::fs::write(&path, b"two").expect("seed");
        let second = set_aside(&path, &clock).expect("second");
        assert_eq!(first, dir.path().join("tabs.json.corrupt-20261129T230501Z"));
        assert_eq!(
            second,
            dir.path().join("tabs.json.corrupt-20261129T230501Z-2")
        );
        assert_eq!(std::fs::read(&first).expect("first kept"), b"one");
        assert_eq!(std::fs::read(&second).expect("second kept"), b"two");
    }

    /// DATA-5: changes made at the same time (an Always answer, a revoke, the settings
    /// page) all land: none writes over another; a refused change writes nothing.
    #[test]
    fn data_5_changes_at_the_same_time_all_land() {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = Home::new(dir.path());
        let clock = ManualClock::at_unix(1_795_993_501);
        std::thread::scope(|scope| {
            for n in 0..8 {
                let (home, clock) = (&home, &clock);
                scope.spawn(move || {
                    BrowserSettings::update(home, clock, |s| {
                        Ok::<_, ()>(s.allow_site(&format!("site{n}.example")))
                    })
                    .expect("saved");
                });
            }
        });
        let refused = BrowserSettings::update(&home, &clock, |s| {
            s.sites.clear();
            Err::<bool, _>("no")
        });
        assert!(matches!(refused, Err(UpdateError::Refused("no"))));
        let sites = BrowserSettings::load(&home, &clock)
            .expect("read")
            .value
            .sites;
        assert_eq!(sites.len(), 8, "{sites:?}");
    }

    /// TAB-2: ids keep counting past any id already in the file.
    #[test]
    fn tab_2_ids_are_never_reused() {
        let mut tabs = ConversationTabs::default();
        assert_eq!(tabs.allocate_id(), "t1");
        assert_eq!(tabs.allocate_id(), "t2");
        let mut edited = ConversationTabs {
            tabs: vec![SavedTab {
                id: "t7".to_owned(),
                url: "about:blank".to_owned(),
                title: String::new(),
                opener: None,
                last_used: 0,
            }],
            active: None,
            next_tab: 3,
        };
        assert_eq!(edited.allocate_id(), "t8");
    }
}
