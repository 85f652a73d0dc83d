//! Streaming the archive to a file (LAUNCH-4): progress as it comes, its SHA-256 computed on
//! the way, a stall timeout on every wait, and a size limit.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use sha2::{Digest, Sha256};
use url::Url;

use super::disk::Files;
use super::error::{ArchiveProblem, FetchError, FetchErrorKind};
use super::pin::Progress;

/// Progress is reported at least this often (and at the start and the end).
pub(crate) const PROGRESS_STEP: u64 = 256 * 1024;

/// No Chromium archive comes near this (they are about 170 MB); a server sending more is
/// not sending Chromium, and is not allowed to fill the disk.
pub(crate) const MAX_ARCHIVE_BYTES: u64 = 1 << 30;

/// A finished download.
#[derive(Debug)]
pub(crate) struct Downloaded {
    /// The archive's SHA-256.
    pub(crate) sha256: [u8; 32],
}

/// The HTTP client for one fetch: rustls with the ring provider, connect and read timeouts,
/// Conch's user agent.
pub(crate) fn client(
    connect_timeout: Duration,
    stall_timeout: Duration,
) -> Result<reqwest::Client, FetchError> {
    // reqwest is built without a crypto provider of its own (aws-lc-sys costs a minute of
    // every clean build); use rustls' ring provider unless the program installed one.
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // An error means another thread installed one first, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .read_timeout(stall_timeout)
        .user_agent(concat!("conch/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|error| FetchError::with_source(FetchErrorKind::Offline, error))
}

/// Downloads `url` into a new file at `dest`, written through `files`, calling
/// `on_progress` at the start, every [`PROGRESS_STEP`] bytes and at the end.
pub(crate) async fn download(
    client: &reqwest::Client,
    url: &Url,
    dest: &Path,
    files: &dyn Files,
    stall_timeout: Duration,
    on_progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<Downloaded, FetchError> {
    let request = client.get(url.clone()).send();
    // The connect timeout is reqwest's; this one covers a server that accepts and then
    // never answers.
    let mut response = match tokio::time::timeout(stall_timeout.saturating_mul(2), request).await {
        Ok(Ok(response)) => response,
        Ok(Err(error)) => return Err(request_error(error).for_url(url)),
        Err(elapsed) => {
            return Err(FetchError::with_source(FetchErrorKind::Interrupted, elapsed).for_url(url));
        }
    };
    let status = response.status();
    if !status.is_success() {
        return Err(FetchError::new(FetchErrorKind::HttpStatus {
            status: status.as_u16(),
        })
        .for_url(url));
    }
    let total = response.content_length();
    if total.is_some_and(|total| total > MAX_ARCHIVE_BYTES) {
        return Err(too_large());
    }

    let mut file = files
        .create(dest)
        .map_err(|error| FetchError::local(dest, error))?;
    let mut hasher = Sha256::new();
    let mut done: u64 = 0;
    let mut reported = Progress { done: 0, total };
    on_progress(reported);
    loop {
        let chunk = match tokio::time::timeout(stall_timeout, response.chunk()).await {
            Ok(Ok(Some(chunk))) => chunk,
            Ok(Ok(None)) => break,
            Ok(Err(error)) => {
                return Err(
                    FetchError::with_source(FetchErrorKind::Interrupted, error).for_url(url)
                );
            }
            Err(elapsed) => {
                return Err(
                    FetchError::with_source(FetchErrorKind::Interrupted, elapsed).for_url(url),
                );
            }
        };
        // A chunk can hold several steps' worth: cut it at each step, so no two reports
        // are more than PROGRESS_STEP apart.
        let mut rest: &[u8] = &chunk;
        while !rest.is_empty() {
            let room = PROGRESS_STEP - (done - reported.done);
            let room = usize::try_from(room).unwrap_or(usize::MAX).min(rest.len());
            let (piece, tail) = rest.split_at(room);
            rest = tail;
            done = done.saturating_add(piece.len() as u64);
            if done > MAX_ARCHIVE_BYTES {
                return Err(too_large());
            }
            hasher.update(piece);
            // A plain blocking write: pieces are small and land in the page cache.
            file.write_all(piece)
                .map_err(|error| FetchError::local(dest, error))?;
            if done - reported.done >= PROGRESS_STEP {
                reported = Progress { done, total };
                on_progress(reported);
            }
        }
    }
    file.flush()
        .map_err(|error| FetchError::local(dest, error))?;
    drop(file);
    if total.is_some_and(|total| total != done) {
        // hyper refuses a short body already; this is the belt to its braces.
        return Err(FetchError::new(FetchErrorKind::Interrupted).for_url(url));
    }
    let last = Progress {
        done,
        total: Some(done),
    };
    if last != reported {
        on_progress(last);
    }
    Ok(Downloaded {
        sha256: hasher.finalize().into(),
    })
}

/// The kind of a failed request: can't reach the server, or it broke off.
fn request_error(error: reqwest::Error) -> FetchError {
    let kind = if error.is_builder() {
        FetchErrorKind::BadAddress
    } else if error.is_connect() {
        FetchErrorKind::Offline
    } else {
        FetchErrorKind::Interrupted
    };
    FetchError::with_source(kind, error)
}

fn too_large() -> FetchError {
    FetchError::archive(ArchiveProblem::TooLarge {
        limit: MAX_ARCHIVE_BYTES,
    })
}
