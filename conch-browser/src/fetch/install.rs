//! One fetch from start to end: download beside the destination, check, unpack, check the
//! executable, rename into place.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::disk::Files;
use super::download::{self, download};
use super::error::{ArchiveProblem, FetchError, FetchErrorKind, hex};
use super::extract::{ensure_executable, extract};
use super::pin::{FetchConfig, Pin, Progress};

/// Downloads and unpacks the build `config` pins into `config.cache_dir`, and gives the
/// executable's path (LAUNCH-4). When the build is already there, gives it at once.
///
/// `on_progress` hears the download's [`Progress`]: at the start, at least every 256 KiB,
/// and at the end (`done == total`), never decreasing. Everything happens in a temporary
/// folder inside the cache; only a build whose executable is in place is renamed to
/// `chromium-<build>`, and on any failure the temporary folder is removed, so a half-done
/// download never looks like a browser.
///
/// # Errors
/// A [`FetchError`] whose [`FetchError::sentence`] is what to tell the person (LAUNCH-5):
/// offline, broken off, an HTTP error, a bad archive (not a zip, damaged, checksum
/// mismatch, unsafe paths or links), a full disk, another disk error, or no executable.
pub async fn fetch(
    config: &FetchConfig,
    mut on_progress: impl FnMut(Progress) + Send,
) -> Result<PathBuf, FetchError> {
    fetch_inner(config, &mut on_progress)
        .await
        .map_err(|error| error.in_folder(&config.cache_dir))
}

async fn fetch_inner(
    config: &FetchConfig,
    on_progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<PathBuf, FetchError> {
    let executable = config.executable();
    if executable.is_file() {
        return Ok(executable);
    }
    let url = config
        .pin
        .archive_url(&config.base_url)
        .ok_or_else(|| FetchError::new(FetchErrorKind::BadAddress))?;
    if !mirror_is_trusted(&url, config.expected_sha256.is_some()) {
        return Err(FetchError::new(FetchErrorKind::InsecureMirror));
    }
    let cache = &config.cache_dir;
    fs::create_dir_all(cache).map_err(|error| FetchError::local(cache, error))?;
    // Beside the destination, so the final rename stays on one file system; removed when
    // dropped, whatever happens.
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{}-download-", config.pin.folder_name()))
        .tempdir_in(cache)
        .map_err(|error| FetchError::local(cache, error))?;

    let client = download::client(config.connect_timeout, config.stall_timeout)?;
    let archive = staging.path().join(config.pin.archive_name());
    let downloaded = download(
        &client,
        &url,
        &archive,
        config.files.as_ref(),
        config.stall_timeout,
        on_progress,
    )
    .await?;
    if let Some(expected) = config.expected_sha256
        && downloaded.sha256 != expected
    {
        return Err(FetchError::archive(ArchiveProblem::ChecksumMismatch {
            expected: hex(&expected),
            actual: hex(&downloaded.sha256),
        }));
    }

    // Unpacking is seconds of CPU and many small writes: off the async threads.
    let files = Arc::clone(&config.files);
    let pin = config.pin.clone();
    let cache = cache.clone();
    tokio::task::spawn_blocking(move || {
        let result = unpack_and_place(&archive, staging.path(), &cache, &pin, files.as_ref());
        drop(staging);
        result
    })
    .await
    // Only a panic in the zip reader ends the task early: treat it as a bad archive.
    .map_err(|error| FetchError::archive(ArchiveProblem::Unpacker(error)))?
}

/// Unpacks `archive` into `staging/root`, checks the executable, and renames the root to
/// `<cache>/chromium-<build>`.
fn unpack_and_place(
    archive: &Path,
    staging: &Path,
    cache: &Path,
    pin: &Pin,
    files: &dyn Files,
) -> Result<PathBuf, FetchError> {
    let root = staging.join("root");
    extract(archive, &root, files)?;
    // The archive is no longer needed; free its space before the rename.
    let _ = fs::remove_file(archive);

    let relative: PathBuf = pin.relative_executable().iter().collect();
    let unpacked = root.join(&relative);
    if !unpacked.is_file() {
        return Err(
            FetchError::new(FetchErrorKind::ExecutableMissing).at(&pin.executable_in(cache))
        );
    }
    ensure_executable(&unpacked)?;

    let dest = cache.join(pin.folder_name());
    if fs::symlink_metadata(&dest).is_ok() {
        // A broken earlier build (its executable is missing, or fetch would not have run):
        // set aside into the staging folder, which is removed afterwards.
        let aside = staging.join("replaced");
        fs::rename(&dest, &aside).map_err(|error| FetchError::local(&dest, error))?;
    }
    let executable = dest.join(&relative);
    if let Err(error) = fs::rename(&root, &dest) {
        // Another Conch may have finished the same download first.
        if !executable.is_file() {
            return Err(FetchError::local(&dest, error));
        }
    }
    Ok(executable)
}

/// Whether a download from `url` can be trusted before its bytes are seen (issue 12):
/// over https, or checked against a recorded checksum, or from this machine itself (a
/// mirror on loopback, which nothing off the machine sits between).
fn mirror_is_trusted(url: &url::Url, has_checksum: bool) -> bool {
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    url.scheme() == "https" || has_checksum || loopback
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch::Platform;

    /// The runtime spawns the fetch on its own task (LAUNCH-4): the future must be `Send`.
    #[test]
    fn the_fetch_future_is_send() {
        fn send<T: Send>(_: T) {}
        let config = FetchConfig::new(PathBuf::from("/nowhere"), Pin::pinned(Platform::Linux64));
        send(fetch(&config, |_| {}));
    }

    /// Issue 12: a mirror that is not https, with no checksum to check what it sends, is
    /// refused before anything is asked of it; https, a checksum or a loopback mirror pass.
    #[tokio::test]
    async fn a_plain_http_mirror_without_a_checksum_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut config = FetchConfig::new(dir.path().join("cache"), Pin::pinned(Platform::Linux64));
        config.base_url = "http://mirror.invalid/cft".parse().expect("url");
        let error = fetch(&config, |_| {}).await.expect_err("refused");
        assert_eq!(error.kind(), FetchErrorKind::InsecureMirror);
        assert!(error.to_string().contains("https"), "{error}");

        let plain: url::Url = "http://mirror.invalid/x.zip".parse().expect("url");
        assert!(!mirror_is_trusted(&plain, false));
        assert!(mirror_is_trusted(&plain, true));
        for trusted in [
            "https://mirror.invalid/x.zip",
            "http://127.0.0.1:9/x.zip",
            "http://[::1]:9/x.zip",
            "http://localhost:9/x.zip",
        ] {
            let url: url::Url = trusted.parse().expect("url");
            assert!(mirror_is_trusted(&url, false), "{trusted}");
        }
    }
}
