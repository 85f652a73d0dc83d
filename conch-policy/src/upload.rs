//! Uploads: which files may go into a page (UP-2 … UP-8, UP-13, AMB-10).
//!
//! The caller gathers the facts (where each file came from, the path as the agent named
//! it, the path after every link, each link met on the way, its size) and the places
//! (the work folder, Conch's home, the places where keys live). This module only reads
//! them: paths are plain data here, and nothing touches the filesystem.
//!
//! For the whole call, first: at most ten files, at most 50 MB (50,000,000 bytes) in
//! total (UP-8). Then, for each file, the first rule that refuses names itself (UP-13):
//! 1. it must come from the chat: attached, made in it, or in its work folder (UP-2);
//!    and, whatever its origin, it must not be one of Conch's sealed secrets by name
//!    (`device.key`, `*.secrets.json` and their set-aside `.corrupt-*` copies), as asked
//!    for, as reached, or as a link met on the way (BE-3, DATA-10; a hard link under
//!    another name is the caller's to find, by file identity);
//! 2. a work-folder file must stay inside the work folder: no `..` in the path asked
//!    for, and neither the resolved path nor any link on the way may leave it (UP-3);
//! 3. nothing where keys live: the embedder's protectedPaths and secretPlaces and the
//!    browser profile, even when the work folder is the whole home folder (UP-7);
//! 4. nothing under Conch's own home, unless the work folder itself is inside it; then
//!    only the work folder's subtree (UP-6);
//! 5. nothing hidden, and nothing inside a hidden folder (below the work folder, so the
//!    default work folder `~/.conch/work` still works) (UP-4);
//! 6. nothing key-shaped (UP-5).
//!
//! Rules 3, 5 and 6 hold for chat attachments and files made in the chat too; rules 2
//! and 4 only for the work folder, since the embedder may keep attachments in Conch's
//! home.
//!
//! Comparisons: "inside the work folder" compares path components exactly; "inside a
//! forbidden place" compares them ignoring ASCII case, so `~/.SSH` on a case-insensitive
//! disk is still `~/.ssh`.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::verdict::{Refusal, RefusalCode, Verdict};

/// At most this many files in one upload (UP-8).
pub const MAX_FILES: usize = 10;

/// At most this many bytes in one upload, all files together (UP-8, AMB-10).
pub const MAX_TOTAL_BYTES: u64 = 50_000_000;

/// Where a file comes from (UP-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum FileOrigin {
    /// The person attached it in this chat.
    AttachedInChat,
    /// Conch made it in this chat.
    MadeInChat,
    /// It is in the chat's work folder.
    WorkFolder,
    /// Anywhere else.
    Elsewhere,
}

impl FileOrigin {
    /// Where it comes from, in the upload question's words.
    pub fn words(self) -> &'static str {
        match self {
            Self::AttachedInChat => "attached in this chat",
            Self::MadeInChat => "made in this chat",
            Self::WorkFolder => "from the work folder",
            Self::Elsewhere => "from elsewhere",
        }
    }
}

/// A file as the upload question names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UploadItem {
    /// The file's name.
    pub name: String,
    /// Where it comes from.
    pub origin: FileOrigin,
}

/// The facts about one file, gathered by the caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileFacts {
    /// Where it comes from.
    pub origin: FileOrigin,
    /// The path as the agent named it: relative to the work folder, or absolute.
    pub requested: PathBuf,
    /// The absolute path after every link is followed.
    pub resolved: PathBuf,
    /// Each link met on the way, as the absolute path it points to.
    pub links: Vec<PathBuf>,
    /// Its size in bytes.
    pub size: u64,
}

impl FileFacts {
    /// The item the upload question names.
    pub fn item(&self) -> UploadItem {
        UploadItem {
            name: display_name(self),
            origin: self.origin,
        }
    }
}

/// The places the rules compare against.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UploadPlaces {
    /// The chat's work folder, absolute and resolved.
    pub work_folder: PathBuf,
    /// Conch's home (`~/.conch` by default), absolute and resolved.
    pub conch_home: PathBuf,
    /// Where keys live: the embedder's protectedPaths and secretPlaces, and the browser
    /// profile (`<home>/browser/profile`) and sealed files.
    pub protected: Vec<PathBuf>,
}

/// Judges a whole upload: the count and total size first, then each file in order.
pub fn check_upload(files: &[FileFacts], places: &UploadPlaces) -> Verdict {
    if files.len() > MAX_FILES {
        return Verdict::refuse(RefusalCode::UploadTooMany);
    }
    let total = files
        .iter()
        .fold(0u64, |sum, file| sum.saturating_add(file.size));
    if total > MAX_TOTAL_BYTES {
        return Verdict::refuse(RefusalCode::UploadTooLarge);
    }
    for file in files {
        let verdict = check_file(file, places);
        if !verdict.is_allowed() {
            return verdict;
        }
    }
    Verdict::Allow
}

/// Judges one file by the per-file rules (all but the count and total size).
pub fn check_file(file: &FileFacts, places: &UploadPlaces) -> Verdict {
    let refuse = |code| Verdict::Refuse(Refusal::about(code, display_name(file)));
    let work = &places.work_folder;

    // 1. From the chat.
    if file.origin == FileOrigin::Elsewhere {
        return refuse(RefusalCode::UploadNotFromChat);
    }

    // 1b. Conch's sealed secrets, by any name on the way (BE-3, DATA-10).
    let sealed = std::iter::once(&file.requested)
        .chain(std::iter::once(&file.resolved))
        .chain(file.links.iter())
        .filter_map(|path| path.file_name())
        .any(|name| is_sealed_secret_name(&name.to_string_lossy()));
    if sealed {
        return refuse(RefusalCode::UploadSealedSecret);
    }

    // 2. Inside the work folder.
    if file.origin == FileOrigin::WorkFolder {
        let requested_inside = if file.requested.is_absolute() {
            inside(&file.requested, work)
        } else {
            true
        };
        if has_traversal(&file.requested) || !requested_inside {
            return refuse(RefusalCode::UploadOutsideWorkFolder);
        }
        if file
            .links
            .iter()
            .any(|link| has_traversal(link) || !inside(link, work))
        {
            return refuse(RefusalCode::UploadLinkOut);
        }
        if has_traversal(&file.resolved) || !inside(&file.resolved, work) {
            return refuse(RefusalCode::UploadOutsideWorkFolder);
        }
    }

    // 3. Where keys live.
    let every_path = || std::iter::once(&file.resolved).chain(file.links.iter());
    if places
        .protected
        .iter()
        .any(|place| every_path().any(|path| inside_ignoring_case(path, place)))
    {
        return refuse(RefusalCode::UploadProtectedPlace);
    }

    // 4. Conch's own home.
    if file.origin == FileOrigin::WorkFolder {
        let work_in_home = inside_ignoring_case(work, &places.conch_home);
        let in_home = every_path().any(|path| inside_ignoring_case(path, &places.conch_home));
        let in_work = every_path().all(|path| inside(path, work));
        if in_home && !(work_in_home && in_work) {
            return refuse(RefusalCode::UploadConchFolder);
        }
    }

    // 5. Hidden, and 6. key-shaped: by the names below the work folder, or the file name.
    let mut names: Vec<String> = Vec::new();
    for path in std::iter::once(&file.requested).chain(every_path()) {
        let below = match (file.origin, path.strip_prefix(work)) {
            (FileOrigin::WorkFolder, Ok(rest)) => rest,
            (FileOrigin::WorkFolder, Err(_)) if path.is_relative() => path.as_path(),
            _ => Path::new(path.file_name().unwrap_or_default()),
        };
        names.extend(below.components().filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
            _ => None,
        }));
    }
    if names.iter().any(|name| name.starts_with('.')) {
        return refuse(RefusalCode::UploadHidden);
    }
    let file_names = std::iter::once(&file.requested)
        .chain(every_path())
        .filter_map(|path| path.file_name())
        .map(|name| name.to_string_lossy().into_owned());
    for name in file_names {
        if is_key_shaped(&name) {
            return refuse(RefusalCode::UploadKeyFile);
        }
    }
    Verdict::Allow
}

/// Names of files that hold keys or credentials (UP-5, AMB-10), compared ignoring case.
const KEY_NAMES: &[&str] = &[
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
    "identity",
    "credentials",
    "credentials.json",
    "credentials.csv",
    "kubeconfig",
    ".npmrc",
    ".pypirc",
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".pgpass",
    ".htpasswd",
];

/// Endings of key files: `*_rsa`, `*_dsa`, `*_ecdsa`, `*_ed25519` and key containers.
const KEY_ENDINGS: &[&str] = &[
    "_rsa",
    "_dsa",
    "_ecdsa",
    "_ed25519",
    "_ecdsa_sk",
    "_ed25519_sk",
    ".pem",
    ".key",
    ".p12",
    ".pfx",
    ".p8",
    ".jks",
    ".keystore",
    ".kdbx",
    ".kdb",
    ".ovpn",
    ".ppk",
    ".keychain",
    ".keychain-db",
    ".env",
];

/// Whether a file name looks like a key or credentials file: `id_rsa`, `deploy_ed25519`,
/// `*.pem`, `*.key`, `*.p12`, `*.pfx`, `*.kdbx`, `credentials.json`, `.npmrc`, `.env*`,
/// `kubeconfig` and the rest of the lists above; `id_rsa_work` and other `id_*` variants
/// too. Public keys (`id_rsa.pub`) are not keys.
pub fn is_key_shaped(name: &str) -> bool {
    let lower = name.to_lowercase();
    KEY_NAMES.contains(&lower.as_str())
        || KEY_ENDINGS.iter().any(|ending| lower.ends_with(ending))
        || lower.starts_with(".env")
        || (["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"]
            .iter()
            .any(|id| lower.starts_with(id))
            && !lower.ends_with(".pub"))
}

/// Whether a file name is one of Conch's sealed secrets (BE-3, DATA-10): the device key
/// `device.key`, a sealed file `*.secrets.json`, or a set-aside copy of either
/// (`*.secrets.json.corrupt-…`, `device.key.…`); compared ignoring case. No upload,
/// download or other file tool of Conch's reads or writes one.
pub fn is_sealed_secret_name(name: &str) -> bool {
    let lower = name.to_lowercase();
    lower == "device.key" || lower.starts_with("device.key.") || lower.contains(".secrets.json")
}

fn display_name(file: &FileFacts) -> String {
    file.requested
        .file_name()
        .or_else(|| file.resolved.file_name())
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.requested.to_string_lossy().into_owned())
}

fn has_traversal(path: &Path) -> bool {
    path.components().any(|c| matches!(c, Component::ParentDir))
        || path
            .to_string_lossy()
            .split(['/', '\\'])
            .any(|part| part == "..")
}

/// `path` is `place` or below it, component by component.
fn inside(path: &Path, place: &Path) -> bool {
    !place.as_os_str().is_empty() && path.starts_with(place)
}

/// Like [`inside`], ignoring ASCII case, for forbidden places.
fn inside_ignoring_case(path: &Path, place: &Path) -> bool {
    if place.as_os_str().is_empty() {
        return false;
    }
    let lower = |p: &Path| PathBuf::from(p.to_string_lossy().to_ascii_lowercase());
    lower(path).starts_with(lower(place))
}
