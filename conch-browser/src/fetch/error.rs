//! The fetcher's error: [`FetchError`], a [`FetchErrorKind`] to match on, and the one plain
//! sentence a person is shown ([`FetchError::sentence`], LAUNCH-5).
//!
//! `Display` is for logs: a lowercase fragment that reads after "failed to", with the cause
//! in the source chain. The sentence is for people: it names the cause and what to do.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a Chromium download did not end with a browser in the cache.
///
/// Match on [`FetchError::kind`]; show [`FetchError::sentence`] to the person.
#[derive(Debug)]
pub struct FetchError(Box<Inner>);

#[derive(Debug)]
struct Inner {
    kind: FetchErrorKind,
    /// The local file involved.
    path: Option<PathBuf>,
    /// The address being downloaded.
    url: Option<url::Url>,
    /// The cache folder the browser was going to, for the sentence.
    folder: Option<PathBuf>,
    source: Option<Source>,
}

impl std::error::Error for FetchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|source| source as &(dyn std::error::Error + 'static))
    }
}

/// The kinds of [`FetchError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FetchErrorKind {
    /// The download server could not be reached: no network, the name does not resolve, the
    /// connection was refused or timed out.
    Offline,
    /// The connection broke off, or the server stopped sending for longer than the stall
    /// timeout, before the download was complete.
    Interrupted,
    /// The server answered with an HTTP error status.
    HttpStatus {
        /// The status code, for example 404.
        status: u16,
    },
    /// The download address cannot be made from the configured base address.
    BadAddress,
    /// The mirror is not reached over https, and no checksum is set to check what it
    /// sends: anything on the way could hand over another program.
    InsecureMirror,
    /// The downloaded file is not a usable archive: not a zip, damaged, too large, a
    /// checksum that does not match the pinned one, or entries that would land outside the
    /// destination (absolute or `..` paths, symbolic links pointing out).
    BadArchive,
    /// The disk (or the person's quota) is full.
    DiskFull,
    /// Another error writing to the cache folder (permission denied, read-only disk…).
    Disk,
    /// The archive unpacked, but the browser's executable is not where it belongs.
    ExecutableMissing,
}

impl FetchError {
    pub(crate) fn new(kind: FetchErrorKind) -> Self {
        FetchError(Box::new(Inner {
            kind,
            path: None,
            url: None,
            folder: None,
            source: None,
        }))
    }

    pub(crate) fn with_source(kind: FetchErrorKind, source: impl Into<Source>) -> Self {
        let mut error = FetchError::new(kind);
        error.0.source = Some(source.into());
        error
    }

    /// A bad archive, for `problem`.
    pub(crate) fn archive(problem: ArchiveProblem) -> Self {
        FetchError::with_source(FetchErrorKind::BadArchive, problem)
    }

    /// A local file error at `path`: [`FetchErrorKind::DiskFull`] when the disk or quota is
    /// full (ENOSPC, EDQUOT), [`FetchErrorKind::Disk`] otherwise.
    pub(crate) fn local(path: &Path, error: io::Error) -> Self {
        let kind = match error.kind() {
            io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => FetchErrorKind::DiskFull,
            _ => FetchErrorKind::Disk,
        };
        FetchError::with_source(kind, error).at(path)
    }

    /// The same error, naming the file or address it concerns.
    pub(crate) fn at(mut self, path: &Path) -> Self {
        self.0.path = Some(path.to_owned());
        self
    }

    /// The same error, naming the address it concerns.
    pub(crate) fn for_url(mut self, url: &url::Url) -> Self {
        self.0.url = Some(url.clone());
        self
    }

    /// The same error, naming the cache folder the browser was going to.
    pub(crate) fn in_folder(mut self, folder: &Path) -> Self {
        if self.0.folder.is_none() {
            self.0.folder = Some(folder.to_owned());
        }
        self
    }

    /// The address being downloaded, when the error concerns it.
    pub fn url(&self) -> Option<&url::Url> {
        self.0.url.as_ref()
    }

    /// What kind of error this is.
    pub fn kind(&self) -> FetchErrorKind {
        self.0.kind
    }

    /// The file (or, for [`FetchErrorKind::ExecutableMissing`], the expected executable)
    /// the error concerns, when there is one.
    pub fn path(&self) -> Option<&Path> {
        self.0.path.as_deref()
    }

    /// One plain sentence for the person: what went wrong and what to do about it. The
    /// Asker shows it with a "Try again" button, and the agent's step fails with it
    /// (LAUNCH-5).
    pub fn sentence(&self) -> String {
        const PREFIX: &str = "Conch couldn't download Chromium";
        match self.0.kind {
            FetchErrorKind::Offline => format!(
                "{PREFIX}: the download server can't be reached. Check the connection and try again."
            ),
            FetchErrorKind::Interrupted => format!(
                "{PREFIX}: the connection to the download server broke off. Check the connection and try again."
            ),
            FetchErrorKind::HttpStatus { status } => {
                let reason = reqwest::StatusCode::from_u16(status)
                    .ok()
                    .and_then(|code| code.canonical_reason())
                    .map(|reason| format!(" ({reason})"))
                    .unwrap_or_default();
                format!(
                    "{PREFIX}: the download server answered with error {status}{reason}. Try again later."
                )
            }
            FetchErrorKind::BadAddress => {
                format!("{PREFIX}: its download address isn't a valid web address.")
            }
            FetchErrorKind::InsecureMirror => format!(
                "{PREFIX}: its download mirror isn't an https address and no checksum is set, so nothing it sent could be trusted. Use an https mirror, or set the archive's SHA-256."
            ),
            FetchErrorKind::BadArchive => format!(
                "{PREFIX}: the downloaded file is damaged or unsafe, so it wasn't used. Try again."
            ),
            FetchErrorKind::DiskFull => format!(
                "{PREFIX}: there isn't enough free disk space. Free up some space and try again."
            ),
            FetchErrorKind::Disk => {
                let why = match self.io_kind() {
                    Some(io::ErrorKind::PermissionDenied) => "it isn't allowed to write there",
                    Some(io::ErrorKind::ReadOnlyFilesystem) => "the disk is read-only",
                    _ => "writing there failed",
                };
                match &self.0.folder {
                    Some(folder) => format!("{PREFIX} into {}: {why}.", folder.display()),
                    None => format!("{PREFIX} into its folder: {why}."),
                }
            }
            FetchErrorKind::ExecutableMissing => {
                format!("{PREFIX}: the download didn't contain the browser program. Try again.")
            }
        }
    }

    fn io_kind(&self) -> Option<io::ErrorKind> {
        self.0
            .source
            .as_deref()
            .and_then(|source| source.downcast_ref::<io::Error>())
            .map(io::Error::kind)
    }
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = match (&self.0.path, &self.0.url) {
            (Some(path), _) => path.display().to_string(),
            (None, Some(url)) => url.to_string(),
            (None, None) => "Chromium".to_owned(),
        };
        match self.0.kind {
            FetchErrorKind::Offline => write!(f, "download {path}: the server can't be reached"),
            FetchErrorKind::Interrupted => write!(f, "download {path}: the download broke off"),
            FetchErrorKind::HttpStatus { status } => {
                write!(f, "download {path}: the server answered HTTP {status}")
            }
            FetchErrorKind::BadAddress => f.write_str("make the download address"),
            FetchErrorKind::InsecureMirror => {
                f.write_str("trust a mirror that is neither https nor checked by a checksum")
            }
            FetchErrorKind::BadArchive => f.write_str("unpack the downloaded archive"),
            FetchErrorKind::DiskFull => write!(f, "write {path}: the disk is full"),
            FetchErrorKind::Disk => write!(f, "write {path}"),
            FetchErrorKind::ExecutableMissing => {
                write!(f, "find the browser at {path} after unpacking")
            }
        }
    }
}

/// What is wrong with a downloaded archive: the source of a [`FetchErrorKind::BadArchive`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum ArchiveProblem {
    #[error("the file is not a readable zip archive")]
    NotAZip(#[source] zip::result::ZipError),
    #[error("entry {index} is damaged")]
    Damaged {
        index: usize,
        #[source]
        source: Source,
    },
    #[error("unpacking stopped unexpectedly")]
    Unpacker(#[source] tokio::task::JoinError),
    #[error("its SHA-256 is {actual}, not the pinned {expected}")]
    ChecksumMismatch { expected: String, actual: String },
    #[error("the entry {name:?} would land outside the destination")]
    UnsafePath { name: String },
    #[error("the link {name:?} points to {target:?}, which may be outside the destination")]
    UnsafeLink { name: String, target: String },
    #[error("the entry {name:?} lies inside the link {link:?}")]
    ThroughLink { name: String, link: String },
    #[error("the entry {name:?} appears twice")]
    Duplicate { name: String },
    #[error("it is larger than {limit} bytes, more than any Chromium build")]
    TooLarge { limit: u64 },
}

/// Lowercase hex, for checksums in messages.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
