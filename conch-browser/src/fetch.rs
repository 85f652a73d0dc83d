//! Downloading Chromium when no browser is found (LAUNCH-4, LAUNCH-5).
//!
//! [`fetch`] downloads a pinned Chrome for Testing build ([`Pin`], from
//! `<base>/<version>/<platform>/chrome-<platform>.zip`) into Playwright's usual cache as
//! `<cache>/chromium-<build>/chrome-<platform>/…`, where [`crate::discover`] finds it the
//! next time (LAUNCH-3), and gives the executable's path. Along the way it reports
//! [`Progress`] (bytes done and total) for `browser.status` (LAUNCH-13), checks the
//! archive's SHA-256 when one is pinned, and unpacks with its own loop that refuses paths
//! and links leading outside the destination. A failure is a [`FetchError`] whose
//! [`FetchError::sentence`] is the one plain sentence the person sees.
//!
//! The settings are a [`FetchConfig`]; file contents are written through the [`Files`]
//! seam, so tests can simulate a full disk. Nothing here asks the person anything: the
//! runtime does that with the sentence.
//!
//! Not yet: Chrome for Testing publishes no checksums, so the pinned build has none (see
//! [`FetchConfig::expected_sha256`]).

mod disk;
mod download;
mod error;
mod extract;
mod install;
mod pin;

pub use disk::{Files, RealFiles};
pub use error::{FetchError, FetchErrorKind};
pub use install::fetch;
pub use pin::{DEFAULT_BASE_URL, FetchConfig, Pin, Platform, Progress};
