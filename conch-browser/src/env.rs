//! The environment a local browser process gets (LAUNCH-15, AMB-24): an allowlist, never a
//! blocklist.
//!
//! [`browser_env`] keeps only what a browser needs to start and render: `PATH`, the locale
//! (`LANG`, `LANGUAGE`, `LC_*`), `TZ`, and the display and session variables (`DISPLAY`,
//! `WAYLAND_DISPLAY`, `XAUTHORITY`, `DBUS_SESSION_BUS_ADDRESS`); on Windows also the
//! system folders (`SYSTEMROOT`, `WINDIR`, `PROGRAMFILES*`, `LOCALAPPDATA`, `APPDATA`,
//! `USERPROFILE`). It then points `TMPDIR` (and `TEMP`/`TMP`) at `<home>/browser/tmp`,
//! `XDG_RUNTIME_DIR` at `<home>/browser/run`, and `HOME` at `<home>/browser/home` unless the
//! person chose to share their own home (for corporate certificates or fonts). The launcher
//! runs the browser with `Command::env_clear().envs(browser_env(..))`.
//!
//! Deliberately absent: any pattern that lets a variable through by looking harmless.
//! Anything not named here is dropped, so keys and tokens (`*_KEY`, `*_TOKEN`, `*_SECRET`,
//! `AWS_*`, …) never reach the browser.

use std::collections::BTreeMap;
use std::ffi::OsString;

use crate::discover::Os;
use crate::home::Home;

/// The variables passed through on every OS.
const COMMON: &[&str] = &[
    "PATH",
    "LANG",
    "LANGUAGE",
    "TZ",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "DBUS_SESSION_BUS_ADDRESS",
];

/// The locale categories (`LC_*`) passed through.
const LOCALE: &[&str] = &[
    "LC_ALL",
    "LC_CTYPE",
    "LC_NUMERIC",
    "LC_TIME",
    "LC_COLLATE",
    "LC_MONETARY",
    "LC_MESSAGES",
    "LC_PAPER",
    "LC_NAME",
    "LC_ADDRESS",
    "LC_TELEPHONE",
    "LC_MEASUREMENT",
    "LC_IDENTIFICATION",
];

/// The system folders passed through on Windows (names compared in upper case).
const WINDOWS: &[&str] = &[
    "SYSTEMROOT",
    "WINDIR",
    "PROGRAMFILES",
    "PROGRAMFILES(X86)",
    "LOCALAPPDATA",
    "APPDATA",
    "USERPROFILE",
];

/// Whether variable `name` passes from the parent to the browser on `os`.
fn passes(os: Os, name: &str) -> bool {
    if os == Os::Windows {
        let upper = name.to_ascii_uppercase();
        COMMON.contains(&upper.as_str()) || WINDOWS.contains(&upper.as_str())
    } else {
        COMMON.contains(&name) || LOCALE.contains(&name)
    }
}

/// The environment for a browser subprocess on this OS, from the `parent`'s (see the
/// module doc). `share_home` passes the parent's `HOME` instead of the browser's own.
pub fn browser_env(
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    home: &Home,
    share_home: bool,
) -> Vec<(OsString, OsString)> {
    browser_env_for(Os::current(), parent, home, share_home)
}

/// As [`browser_env`], for the rules of `os` (so each OS's rules can be tested anywhere).
pub fn browser_env_for(
    os: Os,
    parent: impl IntoIterator<Item = (OsString, OsString)>,
    home: &Home,
    share_home: bool,
) -> Vec<(OsString, OsString)> {
    let mut env: BTreeMap<OsString, OsString> = BTreeMap::new();
    for (name, value) in parent {
        let Some(text) = name.to_str() else {
            continue;
        };
        let shared_home = share_home && text == "HOME";
        if passes(os, text) || shared_home {
            env.insert(name, value);
        }
    }
    let tmp = home.tmp_dir().into_os_string();
    env.insert("TMPDIR".into(), tmp.clone());
    if os == Os::Windows {
        env.retain(|name, _| {
            let upper = name.to_string_lossy().to_ascii_uppercase();
            upper != "TEMP" && upper != "TMP"
        });
        env.insert("TEMP".into(), tmp.clone());
        env.insert("TMP".into(), tmp);
    }
    if os != Os::Windows {
        env.insert("XDG_RUNTIME_DIR".into(), home.run_dir().into_os_string());
    }
    if !share_home {
        env.insert("HOME".into(), home.browser_home_dir().into_os_string());
    }
    env.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    fn names(env: &[(OsString, OsString)]) -> Vec<String> {
        env.iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    }

    /// LAUNCH-15: on Windows the system folders pass (any case), TEMP and TMP are ours.
    #[test]
    fn launch_15_windows_rules() {
        let home = Home::new(r"C:\Users\ana\.conch");
        let parent = vars(&[
            ("SystemRoot", r"C:\Windows"),
            ("ProgramFiles(x86)", r"C:\Program Files (x86)"),
            ("LOCALAPPDATA", r"C:\Users\ana\AppData\Local"),
            ("TEMP", r"C:\Users\ana\AppData\Local\Temp"),
            ("tmp", r"C:\Users\ana\AppData\Local\Temp"),
            ("OPENAI_API_KEY", "sk-canary"),
            ("LC_ALL", "C"),
        ]);
        let env = browser_env_for(Os::Windows, parent, &home, false);
        assert_eq!(
            names(&env),
            [
                "HOME",
                "LOCALAPPDATA",
                "ProgramFiles(x86)",
                "SystemRoot",
                "TEMP",
                "TMP",
                "TMPDIR"
            ]
        );
        let temp = env.iter().find(|(k, _)| k == "TEMP").map(|(_, v)| v);
        assert_eq!(temp, Some(&home.tmp_dir().into_os_string()));
    }

    /// AMB-24: HOME is the browser's own unless the person shares theirs.
    #[test]
    fn amb_24_home_is_dedicated_unless_shared() {
        let home = Home::new("/h/.conch");
        let parent = vars(&[("HOME", "/home/ana"), ("PATH", "/usr/bin")]);
        let get = |env: &[(OsString, OsString)], name: &str| {
            env.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.to_string_lossy().into_owned())
        };
        let own = browser_env_for(Os::Linux, parent.clone(), &home, false);
        assert_eq!(get(&own, "HOME").as_deref(), Some("/h/.conch/browser/home"));
        let shared = browser_env_for(Os::Linux, parent, &home, true);
        assert_eq!(get(&shared, "HOME").as_deref(), Some("/home/ana"));
        assert_eq!(
            get(&shared, "XDG_RUNTIME_DIR").as_deref(),
            Some("/h/.conch/browser/run")
        );
    }
}
