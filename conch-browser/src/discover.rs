//! Finding a browser on this computer (LAUNCH-1, LAUNCH-3).
//!
//! The order is fixed: the `CONCH_BROWSER` variable when set, then Chrome, Edge, Brave and
//! Chromium at the current OS's usual places, then the newest Chromium in Playwright's
//! usual cache. Everything this module looks at goes through [`Probe`], so a test can hand
//! it a fake file table and environment; [`SystemProbe`] is the real one.
//!
//! Deliberately absent: downloading. When nothing is found the caller decides what next.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The browsers Conch knows how to drive, in the order they are preferred.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BrowserKind {
    /// Google Chrome.
    Chrome,
    /// Microsoft Edge.
    Edge,
    /// Brave.
    Brave,
    /// Chromium, installed by the system.
    Chromium,
    /// Chromium from Playwright's cache.
    PlaywrightChromium,
    /// Whatever `CONCH_BROWSER` names.
    Configured,
    /// Chromium that Conch downloaded because nothing else was found.
    Downloaded,
}

impl BrowserKind {
    /// The name a person knows the browser by.
    pub fn name(self) -> &'static str {
        match self {
            BrowserKind::Chrome => "Chrome",
            BrowserKind::Edge => "Edge",
            BrowserKind::Brave => "Brave",
            BrowserKind::Chromium => "Chromium",
            BrowserKind::PlaywrightChromium => "Chromium (Playwright's cache)",
            BrowserKind::Configured => "the browser CONCH_BROWSER names",
            BrowserKind::Downloaded => "Chromium (downloaded by Conch)",
        }
    }
}

/// The operating systems whose install locations this module knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux and other Unix desktops.
    Linux,
    /// macOS.
    MacOs,
    /// Windows.
    Windows,
}

impl Os {
    /// The OS this program was built for.
    pub fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }
}

/// A browser found on this computer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Which browser it is.
    pub kind: BrowserKind,
    /// Its executable.
    pub path: PathBuf,
}

/// What discovery may look at: the environment and the file system. A seam for tests.
pub trait Probe: std::fmt::Debug {
    /// The OS whose locations apply.
    fn os(&self) -> Os;
    /// An environment variable.
    fn var(&self, name: &str) -> Option<OsString>;
    /// Whether `path` is an existing file.
    fn is_file(&self, path: &Path) -> bool;
    /// The names of the entries of directory `path` (empty when it cannot be read).
    fn list_dir(&self, path: &Path) -> Vec<String>;
    /// The text of the small file `path` (a browser's `DevToolsActivePort`), `None` when
    /// it cannot be read. Reads the real file unless a probe says otherwise.
    fn read_text(&self, path: &Path) -> Option<String> {
        use std::io::Read as _;
        let mut text = String::new();
        std::fs::File::open(path)
            .ok()?
            .take(64 * 1024)
            .read_to_string(&mut text)
            .ok()?;
        Some(text)
    }
}

/// The real computer: this process's environment and file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemProbe;

impl Probe for SystemProbe {
    fn os(&self) -> Os {
        Os::current()
    }
    fn var(&self, name: &str) -> Option<OsString> {
        std::env::var_os(name)
    }
    fn is_file(&self, path: &Path) -> bool {
        path.is_file()
    }
    fn list_dir(&self, path: &Path) -> Vec<String> {
        std::fs::read_dir(path)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter_map(|entry| entry.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A computer whose browsers are exactly the executables in one folder, looked up as if
/// that folder were the whole `PATH` of a Linux desktop (so `chromium` there is Chromium,
/// `google-chrome` Chrome). For tests, and for embedders that keep their own browser in
/// a folder of their program.
#[derive(Debug, Clone)]
pub struct FolderProbe {
    /// The folder.
    pub dir: PathBuf,
}

impl Probe for FolderProbe {
    fn os(&self) -> Os {
        Os::Linux
    }
    fn var(&self, name: &str) -> Option<OsString> {
        (name == "PATH").then(|| self.dir.clone().into_os_string())
    }
    fn is_file(&self, path: &Path) -> bool {
        path.starts_with(&self.dir) && path.is_file()
    }
    fn list_dir(&self, _: &Path) -> Vec<String> {
        Vec::new()
    }
}

/// Every place a browser may be, in the order it is preferred, for the probe's OS.
/// `CONCH_BROWSER` and Playwright's cache are not in this list (see [`find`]).
pub fn candidates(probe: &dyn Probe) -> Vec<Found> {
    let mut out = Vec::new();
    let mut push = |kind, path: PathBuf| out.push(Found { kind, path });
    match probe.os() {
        Os::Linux => {
            let path_dirs: Vec<PathBuf> = probe
                .var("PATH")
                .map(|p| std::env::split_paths(&p).collect())
                .unwrap_or_default();
            let table: [(BrowserKind, &[&str], &[&str]); 4] = [
                (
                    BrowserKind::Chrome,
                    &["google-chrome-stable", "google-chrome"],
                    &["/opt/google/chrome/chrome"],
                ),
                (
                    BrowserKind::Edge,
                    &["microsoft-edge-stable", "microsoft-edge"],
                    &["/opt/microsoft/msedge/msedge"],
                ),
                (
                    BrowserKind::Brave,
                    &["brave-browser", "brave-browser-stable", "brave"],
                    &["/opt/brave.com/brave/brave"],
                ),
                (
                    BrowserKind::Chromium,
                    &["chromium", "chromium-browser"],
                    &["/opt/chromium/chromium", "/usr/lib/chromium/chromium"],
                ),
            ];
            for (kind, names, opt_paths) in table {
                for name in names {
                    for dir in &path_dirs {
                        push(kind, dir.join(name));
                    }
                }
                for path in opt_paths {
                    push(kind, PathBuf::from(path));
                }
            }
        }
        Os::MacOs => {
            let apps = [
                (BrowserKind::Chrome, "Google Chrome"),
                (BrowserKind::Edge, "Microsoft Edge"),
                (BrowserKind::Brave, "Brave Browser"),
                (BrowserKind::Chromium, "Chromium"),
            ];
            let home = probe.var("HOME").map(PathBuf::from);
            for (kind, app) in apps {
                let inside = format!("{app}.app/Contents/MacOS/{app}");
                push(kind, Path::new("/Applications").join(&inside));
                if let Some(home) = &home {
                    push(kind, home.join("Applications").join(&inside));
                }
            }
        }
        Os::Windows => {
            let roots: Vec<PathBuf> = ["PROGRAMFILES", "PROGRAMFILES(X86)", "LOCALAPPDATA"]
                .into_iter()
                .filter_map(|var| probe.var(var).map(PathBuf::from))
                .collect();
            let table = [
                (BrowserKind::Chrome, r"Google\Chrome\Application\chrome.exe"),
                (BrowserKind::Edge, r"Microsoft\Edge\Application\msedge.exe"),
                (
                    BrowserKind::Brave,
                    r"BraveSoftware\Brave-Browser\Application\brave.exe",
                ),
                (BrowserKind::Chromium, r"Chromium\Application\chrome.exe"),
            ];
            for (kind, inside) in table {
                for root in &roots {
                    push(kind, root.join(inside));
                }
            }
        }
    }
    out
}

/// Playwright's usual browser cache for the probe's OS: `PLAYWRIGHT_BROWSERS_PATH` when
/// set, else `~/.cache/ms-playwright`, `~/Library/Caches/ms-playwright` or
/// `%LOCALAPPDATA%\ms-playwright`.
pub fn playwright_cache(probe: &dyn Probe) -> Option<PathBuf> {
    if let Some(dir) = probe
        .var("PLAYWRIGHT_BROWSERS_PATH")
        .filter(|v| !v.is_empty())
    {
        return Some(PathBuf::from(dir));
    }
    match probe.os() {
        Os::Linux => probe
            .var("HOME")
            .map(|home| PathBuf::from(home).join(".cache/ms-playwright")),
        Os::MacOs => probe
            .var("HOME")
            .map(|home| PathBuf::from(home).join("Library/Caches/ms-playwright")),
        Os::Windows => probe
            .var("LOCALAPPDATA")
            .map(|dir| PathBuf::from(dir).join("ms-playwright")),
    }
}

/// The newest Chromium in Playwright's cache (`chromium-NNNN`, highest NNNN first).
fn playwright_chromium(probe: &dyn Probe) -> Option<Found> {
    let cache = playwright_cache(probe)?;
    let mut builds: Vec<(u64, String)> = probe
        .list_dir(&cache)
        .into_iter()
        .filter_map(|name| {
            let number = name.strip_prefix("chromium-")?.parse().ok()?;
            Some((number, name))
        })
        .collect();
    builds.sort_by_key(|(number, _)| std::cmp::Reverse(*number));
    let inside: &[&str] = match probe.os() {
        Os::Linux => &["chrome-linux64/chrome", "chrome-linux/chrome"],
        Os::MacOs => &[
            "chrome-mac-arm64/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
            "chrome-mac-x64/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
            "chrome-mac-arm64/Chromium.app/Contents/MacOS/Chromium",
            "chrome-mac/Chromium.app/Contents/MacOS/Chromium",
        ],
        Os::Windows => &[r"chrome-win64\chrome.exe", r"chrome-win\chrome.exe"],
    };
    builds.iter().find_map(|(_, build)| {
        inside
            .iter()
            .map(|rest| cache.join(build).join(rest))
            .find(|path| probe.is_file(path))
            .map(|path| Found {
                kind: BrowserKind::PlaywrightChromium,
                path,
            })
    })
}

/// Every browser present, in the order they should be tried: `CONCH_BROWSER` first when
/// it names a file, then the installed browsers, then Playwright's cache. A launcher tries
/// them in turn and falls back to the next when one will not start (LAUNCH-9).
pub fn find_all(probe: &dyn Probe) -> Vec<Found> {
    let mut found: Vec<Found> = Vec::new();
    if let Some(path) = probe.var("CONCH_BROWSER").map(PathBuf::from)
        && probe.is_file(&path)
    {
        found.push(Found {
            kind: BrowserKind::Configured,
            path,
        });
    }
    for candidate in candidates(probe) {
        if probe.is_file(&candidate.path) && !found.iter().any(|f| f.path == candidate.path) {
            found.push(candidate);
        }
    }
    found.extend(playwright_chromium(probe));
    found
}

/// The first browser [`find_all`] would try.
pub fn find(probe: &dyn Probe) -> Option<Found> {
    find_all(probe).into_iter().next()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    /// A fake computer: an OS, some variables, some files.
    #[derive(Debug)]
    struct FakeProbe {
        os: Os,
        vars: HashMap<&'static str, &'static str>,
        files: HashSet<PathBuf>,
    }

    impl Probe for FakeProbe {
        fn os(&self) -> Os {
            self.os
        }
        fn var(&self, name: &str) -> Option<OsString> {
            self.vars.get(name).map(OsString::from)
        }
        fn is_file(&self, path: &Path) -> bool {
            self.files.contains(path)
        }
        fn list_dir(&self, path: &Path) -> Vec<String> {
            let mut names: Vec<String> = self
                .files
                .iter()
                .filter_map(|f| f.strip_prefix(path).ok())
                .filter_map(|rest| rest.components().next())
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names.dedup();
            names
        }
    }

    fn fake(os: Os, vars: &[(&'static str, &'static str)], files: &[&str]) -> FakeProbe {
        FakeProbe {
            os,
            vars: vars.iter().copied().collect(),
            files: files.iter().map(PathBuf::from).collect(),
        }
    }

    /// LAUNCH-1: on Linux, Chrome beats Edge beats Brave beats Chromium, on PATH or in /opt.
    #[test]
    fn launch_1_linux_order() {
        let probe = fake(
            Os::Linux,
            &[("PATH", "/usr/local/bin:/usr/bin")],
            &[
                "/usr/bin/chromium",
                "/usr/bin/brave-browser",
                "/opt/microsoft/msedge/msedge",
            ],
        );
        let all = find_all(&probe);
        let kinds: Vec<_> = all.iter().map(|f| f.kind).collect();
        assert_eq!(
            kinds,
            [BrowserKind::Edge, BrowserKind::Brave, BrowserKind::Chromium]
        );
        assert_eq!(all[0].path, PathBuf::from("/opt/microsoft/msedge/msedge"));
    }

    /// LAUNCH-1: `CONCH_BROWSER` comes first when it names a file, and is ignored otherwise.
    #[test]
    fn launch_1_configured_first() {
        let files = ["/usr/bin/google-chrome", "/tmp/my-chrome"];
        let set = fake(
            Os::Linux,
            &[("PATH", "/usr/bin"), ("CONCH_BROWSER", "/tmp/my-chrome")],
            &files,
        );
        assert_eq!(find(&set).map(|f| f.kind), Some(BrowserKind::Configured));
        let missing = fake(
            Os::Linux,
            &[("PATH", "/usr/bin"), ("CONCH_BROWSER", "/nope")],
            &files,
        );
        assert_eq!(find(&missing).map(|f| f.kind), Some(BrowserKind::Chrome));
    }

    /// LAUNCH-1: macOS application bundles and Windows install roots.
    #[test]
    fn launch_1_macos_and_windows() {
        let mac = fake(
            Os::MacOs,
            &[("HOME", "/Users/ana")],
            &["/Users/ana/Applications/Brave Browser.app/Contents/MacOS/Brave Browser"],
        );
        assert_eq!(find(&mac).map(|f| f.kind), Some(BrowserKind::Brave));
        let win = fake(
            Os::Windows,
            &[("LOCALAPPDATA", r"C:\Users\ana\AppData\Local")],
            &[r"C:\Users\ana\AppData\Local/Microsoft\Edge\Application\msedge.exe"],
        );
        assert_eq!(find(&win).map(|f| f.kind), Some(BrowserKind::Edge));
    }

    /// LAUNCH-3: Playwright's cache comes after installed browsers; its newest build wins.
    #[test]
    fn launch_3_playwright_cache() {
        let probe = fake(
            Os::Linux,
            &[("HOME", "/home/ana"), ("PATH", "/usr/bin")],
            &[
                "/home/ana/.cache/ms-playwright/chromium-1100/chrome-linux/chrome",
                "/home/ana/.cache/ms-playwright/chromium-1200/chrome-linux64/chrome",
            ],
        );
        let found = find(&probe).expect("the cache's browser");
        assert_eq!(found.kind, BrowserKind::PlaywrightChromium);
        assert!(found.path.ends_with("chromium-1200/chrome-linux64/chrome"));

        let with_installed = fake(
            Os::Linux,
            &[("PLAYWRIGHT_BROWSERS_PATH", "/pw"), ("PATH", "/usr/bin")],
            &["/pw/chromium-1/chrome-linux/chrome", "/usr/bin/chromium"],
        );
        let kinds: Vec<_> = find_all(&with_installed).iter().map(|f| f.kind).collect();
        assert_eq!(
            kinds,
            [BrowserKind::Chromium, BrowserKind::PlaywrightChromium]
        );
    }

    /// Nothing installed, nothing cached: nothing found (the caller downloads or says so).
    #[test]
    fn nothing_found() {
        let probe = fake(Os::Linux, &[("PATH", "/usr/bin"), ("HOME", "/h")], &[]);
        assert_eq!(find(&probe), None);
    }
}
