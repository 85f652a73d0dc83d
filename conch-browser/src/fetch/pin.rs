//! What to download and where: the [`Platform`], the pinned build ([`Pin`]), the settings of
//! one fetch ([`FetchConfig`]) and the [`Progress`] it reports.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use url::Url;

use super::disk::{Files, RealFiles};
use crate::discover::{self, Probe};

/// Where Chrome for Testing keeps its builds: `<base>/<version>/<platform>/chrome-<platform>.zip`.
pub const DEFAULT_BASE_URL: &str = "https://storage.googleapis.com/chrome-for-testing-public";

/// The platforms Chrome for Testing publishes builds for (and Conch downloads for).
///
/// There is no Linux arm64 build: there, the distribution's Chromium is the way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Platform {
    /// Linux on x86-64.
    Linux64,
    /// macOS on Apple silicon.
    MacArm64,
    /// macOS on Intel.
    MacX64,
    /// Windows on x86-64.
    Win64,
}

impl Platform {
    /// Every platform.
    pub const ALL: [Platform; 4] = [
        Platform::Linux64,
        Platform::MacArm64,
        Platform::MacX64,
        Platform::Win64,
    ];

    /// The platform this program was built for, when Chrome for Testing has builds for it.
    pub fn current() -> Option<Platform> {
        if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
            Some(Platform::Linux64)
        } else if cfg!(all(target_os = "macos", target_arch = "aarch64")) {
            Some(Platform::MacArm64)
        } else if cfg!(all(target_os = "macos", target_arch = "x86_64")) {
            Some(Platform::MacX64)
        } else if cfg!(all(windows, target_arch = "x86_64")) {
            Some(Platform::Win64)
        } else {
            None
        }
    }

    /// Chrome for Testing's name for it: `linux64`, `mac-arm64`, `mac-x64`, `win64`.
    pub fn name(self) -> &'static str {
        match self {
            Platform::Linux64 => "linux64",
            Platform::MacArm64 => "mac-arm64",
            Platform::MacX64 => "mac-x64",
            Platform::Win64 => "win64",
        }
    }

    /// The archive's top folder, `chrome-<platform>`.
    pub fn folder(self) -> &'static str {
        match self {
            Platform::Linux64 => "chrome-linux64",
            Platform::MacArm64 => "chrome-mac-arm64",
            Platform::MacX64 => "chrome-mac-x64",
            Platform::Win64 => "chrome-win64",
        }
    }

    /// The executable's path inside the archive, below [`Platform::folder`].
    pub fn executable(self) -> &'static str {
        match self {
            Platform::Linux64 => "chrome",
            Platform::MacArm64 | Platform::MacX64 => {
                "Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing"
            }
            Platform::Win64 => "chrome.exe",
        }
    }
}

/// One Chromium build: a Chrome for Testing version for one platform, and the number its
/// folder in Playwright's cache is named by (`chromium-<build>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// The Chrome for Testing version, for example `148.0.7778.96`.
    pub version: String,
    /// The cache folder's number: `<cache>/chromium-<build>/`. Playwright numbers its own
    /// Chromium builds this way, and discovery prefers the highest number.
    pub build: u32,
    /// The platform the build is for.
    pub platform: Platform,
}

impl Pin {
    /// The Chrome for Testing version Conch downloads.
    pub const VERSION: &'static str = "148.0.7778.96";
    /// The folder number for [`Pin::VERSION`]: the revision Playwright gives the same Chrome
    /// for Testing build (`chromium-1223`), so both share one cache folder.
    pub const BUILD: u32 = 1223;

    /// The pinned build for `platform`.
    pub fn pinned(platform: Platform) -> Pin {
        Pin {
            version: Pin::VERSION.to_owned(),
            build: Pin::BUILD,
            platform,
        }
    }

    /// The pinned build for this computer, when Chrome for Testing has one.
    pub fn current() -> Option<Pin> {
        Platform::current().map(Pin::pinned)
    }

    /// The build's folder in the cache: `chromium-<build>`.
    pub fn folder_name(&self) -> String {
        format!("chromium-{}", self.build)
    }

    /// The archive's file name: `chrome-<platform>.zip`.
    pub fn archive_name(&self) -> String {
        format!("{}.zip", self.platform.folder())
    }

    /// Where the executable is once the build is unpacked in `cache_dir`:
    /// `<cache>/chromium-<build>/chrome-<platform>/<executable>`.
    pub fn executable_in(&self, cache_dir: &Path) -> PathBuf {
        self.relative_executable()
            .iter()
            .fold(cache_dir.join(self.folder_name()), |path, part| {
                path.join(part)
            })
    }

    /// The executable's path below the build's folder, one component at a time.
    pub(crate) fn relative_executable(&self) -> Vec<&'static str> {
        std::iter::once(self.platform.folder())
            .chain(self.platform.executable().split('/'))
            .collect()
    }

    /// The archive's address below `base`: `<base>/<version>/<platform>/chrome-<platform>.zip`.
    /// `None` when `base` cannot have a path (a `data:` or `mailto:` address).
    pub fn archive_url(&self, base: &Url) -> Option<Url> {
        let mut url = base.clone();
        url.path_segments_mut().ok()?.pop_if_empty().extend([
            self.version.as_str(),
            self.platform.name(),
            &self.archive_name(),
        ]);
        Some(url)
    }
}

/// The settings of one fetch.
#[derive(Debug, Clone)]
pub struct FetchConfig {
    /// Where the builds are: [`DEFAULT_BASE_URL`] unless a mirror (or a test server) is set.
    pub base_url: Url,
    /// Playwright's cache folder ([`discover::playwright_cache`]); the build goes to
    /// `<cache_dir>/chromium-<build>/`.
    pub cache_dir: PathBuf,
    /// The build to download.
    pub pin: Pin,
    /// The archive's SHA-256, checked before anything is unpacked. `None` means unchecked:
    /// Chrome for Testing publishes no checksums, so [`Pin::pinned`] has none until one is
    /// recorded from a verified download; HTTPS is then the only protection.
    pub expected_sha256: Option<[u8; 32]>,
    /// How long to wait for the connection to the server.
    pub connect_timeout: Duration,
    /// How long the server may send nothing (no headers, no bytes) before the download is
    /// given up as broken off.
    pub stall_timeout: Duration,
    /// Where file contents are written: [`RealFiles`], or a test's stand-in.
    pub files: Arc<dyn Files>,
}

impl FetchConfig {
    /// Settings for `pin` into `cache_dir`, from Chrome for Testing, without a checksum,
    /// with a 15 s connect timeout and a 30 s stall timeout.
    pub fn new(cache_dir: PathBuf, pin: Pin) -> FetchConfig {
        FetchConfig {
            base_url: default_base_url(),
            cache_dir,
            pin,
            expected_sha256: None,
            connect_timeout: Duration::from_secs(15),
            stall_timeout: Duration::from_secs(30),
            files: Arc::new(RealFiles),
        }
    }

    /// Settings for this computer: the pinned build for its platform, into Playwright's
    /// usual cache as `probe` sees it. `None` when Chrome for Testing has no build for this
    /// platform or there is no cache folder (no home directory).
    pub fn for_this_computer(probe: &dyn Probe) -> Option<FetchConfig> {
        let cache_dir = discover::playwright_cache(probe)?;
        Some(FetchConfig::new(cache_dir, Pin::current()?))
    }

    /// Where the executable is once fetched.
    pub fn executable(&self) -> PathBuf {
        self.pin.executable_in(&self.cache_dir)
    }
}

#[expect(
    clippy::expect_used,
    reason = "a constant that parses; covered by the tests below"
)]
fn default_base_url() -> Url {
    Url::parse(DEFAULT_BASE_URL).expect("DEFAULT_BASE_URL is a valid address")
}

/// Bytes of the archive downloaded so far, and its size when the server said it.
///
/// Reported at the start (done = 0), at least every 256 KiB, and at the end, where
/// `total` is the size downloaded when the server did not say. `done` never decreases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Progress {
    /// Bytes downloaded so far.
    pub done: u64,
    /// The archive's size, when known.
    pub total: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_base_url_parses() {
        assert_eq!(default_base_url().as_str(), DEFAULT_BASE_URL);
    }

    /// LAUNCH-4: the Chrome for Testing address layout.
    #[test]
    fn archive_urls() {
        let base = default_base_url();
        let url = |platform| {
            Pin::pinned(platform)
                .archive_url(&base)
                .map(|url| url.to_string())
        };
        assert_eq!(
            url(Platform::Linux64).as_deref(),
            Some(
                "https://storage.googleapis.com/chrome-for-testing-public/148.0.7778.96/linux64/chrome-linux64.zip"
            )
        );
        assert_eq!(
            url(Platform::MacArm64).as_deref(),
            Some(
                "https://storage.googleapis.com/chrome-for-testing-public/148.0.7778.96/mac-arm64/chrome-mac-arm64.zip"
            )
        );
        let with_slash = Url::parse("http://127.0.0.1:8/mirror/").ok();
        let pin = Pin {
            version: "1/../2".to_owned(),
            build: 7,
            platform: Platform::Win64,
        };
        assert_eq!(
            with_slash
                .and_then(|base| pin.archive_url(&base))
                .map(|url| url.to_string())
                .as_deref(),
            Some("http://127.0.0.1:8/mirror/1%2F..%2F2/win64/chrome-win64.zip")
        );
        let cannot_be_base = Url::parse("mailto:someone@example.com").ok();
        assert_eq!(cannot_be_base.and_then(|base| pin.archive_url(&base)), None);
    }

    /// LAUNCH-3: the executable lands where discovery looks.
    #[test]
    fn executable_paths() {
        let cache = Path::new("/cache");
        assert_eq!(
            Pin::pinned(Platform::Linux64).executable_in(cache),
            Path::new("/cache/chromium-1223/chrome-linux64/chrome")
        );
        assert_eq!(
            Pin::pinned(Platform::MacX64).executable_in(cache),
            Path::new(
                "/cache/chromium-1223/chrome-mac-x64/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing"
            )
        );
    }
}
