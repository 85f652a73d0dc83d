//! The person's own Chrome, the `chrome` backend (BE-10 … BE-15, NET-9).
//!
//! Chrome 144+ serves remote debugging, once the person turns it on at
//! `chrome://inspect/#remote-debugging`, on a WebSocket only: no `/json/*` endpoints. It
//! writes where in `DevToolsActivePort` in its own profile folder (the port, then the
//! browser socket's path), and asks the person "Allow remote debugging?" for each
//! connection. So Conch reads that file (from the folder of Chrome, Edge, Brave or
//! Chromium for this OS, or a configured one), connects to `ws://127.0.0.1:<port><path>`
//! and nowhere else, once, eagerly, with a long wait for the person's answer, and keeps
//! that one socket: it never retries in a loop that would stack dialogs.
//!
//! There Conch touches only the tabs it opened: it never auto-attaches to the browser's
//! targets, never turns target discovery on and never lists targets, so the person's tabs
//! are never attached, read, ruled or closed. Its own pages carry a visible badge, "Conch
//! is using this tab", in a closed shadow root (which the snapshot's walker cannot enter)
//! and hidden around screenshots for the model.
//!
//! Deliberately absent: launching Chrome with switches, working around Chrome 136's
//! block on debugging the default profile, copying the profile, reading cookies, any
//! extension (BE-11); following popups of Conch's pages (seeing them would need target
//! discovery, which reports the person's tabs too).

use std::path::{Path, PathBuf};
use std::time::Duration;

use conch_cdp::Session;
use serde_json::json;
use url::Url;

use crate::discover::{Os, Probe};
use crate::page::script;

/// The status sentence while Chrome asks the person (BE-10).
pub const WAITING_SENTENCE: &str = "Waiting for you to allow Conch in Chrome";

/// What the badge on Conch's pages says (BE-14).
pub const BADGE_TEXT: &str = "Conch is using this tab";

/// The badge's background colour (RGB), for tests that look for it in a frame.
pub const BADGE_COLOUR: [u8; 3] = [0x6d, 0x28, 0xd9];

/// The file Chrome writes when its remote debugging is on.
pub const ACTIVE_PORT_FILE: &str = "DevToolsActivePort";

/// The most of `DevToolsActivePort` that is read, in bytes.
const MAX_FILE: usize = 4096;

/// How to reach the person's own Chrome.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OwnChrome {
    /// The profile folder whose `DevToolsActivePort` names the door; `None` looks in the
    /// usual folders of Chrome, Edge, Brave and Chromium ([`profile_folders`]), after the
    /// folder `CONCH_CHROME_PROFILE` names.
    pub folder: Option<PathBuf>,
    /// How long the one connection waits for the person to press Allow.
    pub allow_within: Duration,
}

impl Default for OwnChrome {
    fn default() -> Self {
        OwnChrome {
            folder: None,
            allow_within: Duration::from_secs(120),
        }
    }
}

impl OwnChrome {
    /// The person's Chrome found in `folder`, waiting `allow_within` for Allow.
    pub fn in_folder(folder: PathBuf, allow_within: Duration) -> Self {
        OwnChrome {
            folder: Some(folder),
            allow_within,
        }
    }
}

/// Why the person's Chrome can't be reached. Each is a phrase for "Conch couldn't reach
/// your Chrome (…)".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OwnChromeError {
    /// No profile folder holds a `DevToolsActivePort`.
    #[error(
        "no Chrome, Edge, Brave or Chromium has its remote debugging on: open chrome://inspect/#remote-debugging in it and turn on “Allow remote debugging for this browser instance”"
    )]
    NotOn,
    /// The configured folder holds no `DevToolsActivePort`.
    #[error(
        "{0} holds no DevToolsActivePort: is the browser running with remote debugging on (chrome://inspect/#remote-debugging)?"
    )]
    NotInFolder(String),
    /// The file is not one Chrome writes.
    #[error(
        "its DevToolsActivePort is not one Chrome writes (a port line, then a /devtools/browser/… line), so Conch did not use it"
    )]
    Junk,
    /// The file names somewhere other than this computer's loopback.
    #[error(
        "its DevToolsActivePort names an address other than 127.0.0.1, and Conch connects to your Chrome only on this computer's loopback"
    )]
    OtherHost,
}

/// The usual profile folders of Chrome, Edge, Brave and Chromium on the probe's OS, in
/// that order (Chrome's stable, beta and dev channels first).
pub fn profile_folders(probe: &dyn Probe) -> Vec<PathBuf> {
    let var = |name: &str| probe.var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    match probe.os() {
        Os::Linux => {
            let Some(config) = var("CHROME_CONFIG_HOME")
                .or_else(|| var("XDG_CONFIG_HOME"))
                .or_else(|| var("HOME").map(|h| h.join(".config")))
            else {
                return Vec::new();
            };
            [
                "google-chrome",
                "google-chrome-beta",
                "google-chrome-unstable",
                "microsoft-edge",
                "BraveSoftware/Brave-Browser",
                "chromium",
            ]
            .iter()
            .map(|inside| config.join(inside))
            .collect()
        }
        Os::MacOs => {
            let Some(home) = var("HOME") else {
                return Vec::new();
            };
            let support = home.join("Library/Application Support");
            [
                "Google/Chrome",
                "Google/Chrome Beta",
                "Google/Chrome Dev",
                "Microsoft Edge",
                "BraveSoftware/Brave-Browser",
                "Chromium",
            ]
            .iter()
            .map(|inside| support.join(inside))
            .collect()
        }
        Os::Windows => {
            let Some(local) = var("LOCALAPPDATA") else {
                return Vec::new();
            };
            [
                r"Google\Chrome\User Data",
                r"Google\Chrome Beta\User Data",
                r"Google\Chrome Dev\User Data",
                r"Microsoft\Edge\User Data",
                r"BraveSoftware\Brave-Browser\User Data",
                r"Chromium\User Data",
            ]
            .iter()
            .map(|inside| local.join(inside))
            .collect()
        }
    }
}

/// The socket `DevToolsActivePort`'s text names: `ws://127.0.0.1:<port><path>`, or why
/// not (BE-10).
///
/// # Errors
/// [`OwnChromeError::OtherHost`] when it names any other host, [`OwnChromeError::Junk`]
/// when it is not what Chrome writes.
pub fn socket_from(text: &str) -> Result<String, OwnChromeError> {
    let mut lines = text.lines().map(str::trim);
    let (port, path) = (lines.next().unwrap_or(""), lines.next().unwrap_or(""));
    let names_a_host = |s: &str| s.contains("://") || s.contains('@') || s.contains(':');
    if names_a_host(port) || names_a_host(path) || path.starts_with("//") {
        return Err(OwnChromeError::OtherHost);
    }
    if port.is_empty() || !port.chars().all(|c| c.is_ascii_digit()) {
        return Err(OwnChromeError::Junk);
    }
    let port: u16 = match port.parse() {
        Ok(port) if port > 0 => port,
        _ => return Err(OwnChromeError::Junk),
    };
    let id = path
        .strip_prefix("/devtools/browser/")
        .ok_or(OwnChromeError::Junk)?;
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(OwnChromeError::Junk);
    }
    let socket = format!("ws://127.0.0.1:{port}{path}");
    // Built, then checked as a parser sees it: nothing in it may move the host.
    let parsed = Url::parse(&socket).map_err(|_| OwnChromeError::Junk)?;
    if parsed.host_str() != Some("127.0.0.1")
        || parsed.port() != Some(port)
        || !parsed.username().is_empty()
    {
        return Err(OwnChromeError::OtherHost);
    }
    Ok(socket)
}

/// Where the person's Chrome listens, from the `DevToolsActivePort` of the configured
/// folder, else of `CONCH_CHROME_PROFILE`'s, else of the first usual folder that has one.
///
/// # Errors
/// [`OwnChromeError`]: no file, or one Conch won't use.
pub fn find_socket(own: &OwnChrome, probe: &dyn Probe) -> Result<String, OwnChromeError> {
    let configured = own.folder.clone().or_else(|| {
        probe
            .var("CONCH_CHROME_PROFILE")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    });
    if let Some(folder) = configured {
        let text = read(probe, &folder)
            .ok_or_else(|| OwnChromeError::NotInFolder(folder.display().to_string()))?;
        return socket_from(&text);
    }
    let text = profile_folders(probe)
        .iter()
        .find_map(|folder| read(probe, folder))
        .ok_or(OwnChromeError::NotOn)?;
    socket_from(&text)
}

fn read(probe: &dyn Probe, folder: &Path) -> Option<String> {
    let text = probe.read_text(&folder.join(ACTIVE_PORT_FILE))?;
    (text.len() <= MAX_FILE).then_some(text)
}

/// The badge, installed in an isolated world of its own on every document of the top
/// frame: a host element whose closed shadow root holds the words.
const BADGE_SCRIPT: &str = script::body(include_str!("own_chrome/badge.js"));

/// Puts the badge on Conch's page `session`, now and on every later document (BE-14).
pub(crate) async fn show_badge(session: &Session) {
    let added = session
        .call_raw(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": BADGE_SCRIPT, "worldName": "conch-badge", "runImmediately": true }),
        )
        .await;
    if let Err(e) = added {
        tracing::debug!(target: "conch_browser", error = %e, "the badge could not be installed");
    }
}

/// Hides the badge for a screenshot the model sees, if the page has one, from an
/// isolated world (the page's own script never sees Conch look); gives that world's
/// context when it did, for [`unhide_badge`] after the capture.
pub(crate) async fn hide_badge(page: &Session) -> Option<i64> {
    const HIDE: &str = script::body(include_str!("own_chrome/hide_badge.js"));
    let tree = page.call_raw("Page.getFrameTree", json!({})).await.ok()?;
    let frame = tree["frameTree"]["frame"]["id"].as_str()?.to_owned();
    let world = page
        .call_raw(
            "Page.createIsolatedWorld",
            json!({ "frameId": frame, "worldName": "conch-badge-shot" }),
        )
        .await
        .ok()?;
    let context = world["executionContextId"].as_i64()?;
    let answer = page
        .call_raw(
            "Runtime.evaluate",
            json!({ "expression": HIDE, "contextId": context, "awaitPromise": true, "returnByValue": true }),
        )
        .await
        .ok()?;
    (answer["result"]["value"] == json!(true)).then_some(context)
}

/// Shows the badge again after [`hide_badge`], in the same world.
pub(crate) async fn unhide_badge(page: &Session, context: i64) {
    const SHOW: &str = script::body(include_str!("own_chrome/unhide_badge.js"));
    let _ = page
        .call_raw(
            "Runtime.evaluate",
            json!({ "expression": SHOW, "contextId": context }),
        )
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::ffi::OsString;

    #[derive(Debug)]
    struct Fake {
        os: Os,
        vars: HashMap<&'static str, &'static str>,
        files: HashMap<PathBuf, &'static str>,
    }

    impl Probe for Fake {
        fn os(&self) -> Os {
            self.os
        }
        fn var(&self, name: &str) -> Option<OsString> {
            self.vars.get(name).map(OsString::from)
        }
        fn is_file(&self, path: &Path) -> bool {
            self.files.contains_key(path)
        }
        fn list_dir(&self, _: &Path) -> Vec<String> {
            Vec::new()
        }
        fn read_text(&self, path: &Path) -> Option<String> {
            self.files.get(path).map(|t| (*t).to_owned())
        }
    }

    const GOOD: &str = "9333\n/devtools/browser/4b1c-aa\n";

    fn fake(os: Os, vars: &[(&'static str, &'static str)], files: &[&'static str]) -> Fake {
        Fake {
            os,
            vars: vars.iter().copied().collect(),
            files: files
                .iter()
                .map(|f| (PathBuf::from(f).join(ACTIVE_PORT_FILE), GOOD))
                .collect(),
        }
    }

    #[test]
    fn be_10_devtools_active_port_gives_only_a_loopback_socket() {
        assert_eq!(
            socket_from(GOOD).as_deref(),
            Ok("ws://127.0.0.1:9333/devtools/browser/4b1c-aa")
        );
        for other in [
            "9333\nws://evil.example:9222/devtools/browser/x",
            "evil.example:9333\n/devtools/browser/x",
            "9333\n@evil.example/devtools/browser/x",
            "9333\n//evil.example/devtools/browser/x",
            "192.168.1.2:9333\n/devtools/browser/x",
        ] {
            assert_eq!(
                socket_from(other),
                Err(OwnChromeError::OtherHost),
                "{other}"
            );
        }
        for junk in [
            "",
            "not a port\n/devtools/browser/x",
            "0\n/devtools/browser/x",
            "70000\n/devtools/browser/x",
            "9333",
            "9333\n/devtools/page/x",
            "9333\n/devtools/browser/",
            "9333\n/devtools/browser/x?y=1",
            "+9333\n/devtools/browser/x",
        ] {
            assert_eq!(socket_from(junk), Err(OwnChromeError::Junk), "{junk:?}");
        }
        let sentence = OwnChromeError::OtherHost.to_string();
        assert!(
            sentence.contains("only on this computer's loopback"),
            "{sentence}"
        );
    }

    #[test]
    fn be_10_the_profile_folder_is_found_per_os_and_browser() {
        let linux = fake(
            Os::Linux,
            &[("HOME", "/home/ana")],
            &["/home/ana/.config/BraveSoftware/Brave-Browser"],
        );
        assert!(find_socket(&OwnChrome::default(), &linux).is_ok());
        let folders = profile_folders(&linux);
        for inside in [
            "google-chrome",
            "chromium",
            "microsoft-edge",
            "BraveSoftware/Brave-Browser",
        ] {
            assert!(
                folders.contains(&PathBuf::from("/home/ana/.config").join(inside)),
                "{inside}: {folders:?}"
            );
        }
        let xdg = fake(Os::Linux, &[("HOME", "/h"), ("XDG_CONFIG_HOME", "/x")], &[]);
        assert_eq!(profile_folders(&xdg)[0], PathBuf::from("/x/google-chrome"));
        let mac = fake(Os::MacOs, &[("HOME", "/Users/ana")], &[]);
        assert!(profile_folders(&mac).contains(&PathBuf::from(
            "/Users/ana/Library/Application Support/Google/Chrome"
        )));
        let win = fake(Os::Windows, &[("LOCALAPPDATA", r"C:\L")], &[]);
        assert!(
            profile_folders(&win)
                .contains(&PathBuf::from(r"C:\L").join(r"Google\Chrome\User Data"))
        );
        assert!(
            profile_folders(&win)
                .contains(&PathBuf::from(r"C:\L").join(r"Microsoft\Edge\User Data"))
        );
        // Nothing on: one sentence that says where to turn it on.
        let off = fake(Os::Linux, &[("HOME", "/home/ana")], &[]);
        let e = find_socket(&OwnChrome::default(), &off).expect_err("none on");
        assert_eq!(e, OwnChromeError::NotOn);
        assert!(e.to_string().contains("chrome://inspect/#remote-debugging"));
        // A configured folder wins, and CONCH_CHROME_PROFILE names one too.
        let configured = fake(Os::Linux, &[("HOME", "/home/ana")], &["/tmp/p"]);
        let own = OwnChrome::in_folder(PathBuf::from("/tmp/p"), Duration::from_secs(1));
        assert!(find_socket(&own, &configured).is_ok());
        let elsewhere = OwnChrome::in_folder(PathBuf::from("/tmp/q"), Duration::from_secs(1));
        assert!(matches!(
            find_socket(&elsewhere, &configured),
            Err(OwnChromeError::NotInFolder(_))
        ));
        let by_env = fake(
            Os::Linux,
            &[("HOME", "/home/ana"), ("CONCH_CHROME_PROFILE", "/tmp/p")],
            &["/tmp/p"],
        );
        assert!(find_socket(&OwnChrome::default(), &by_env).is_ok());
    }
}
