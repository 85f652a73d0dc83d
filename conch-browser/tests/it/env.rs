//! The browser's allowlisted environment (LAUNCH-15, AMB-24).

use std::ffi::OsString;

use conch_browser::Home;
use conch_browser::env::browser_env;

/// A parent environment as a person's shell might have it, with credentials in it.
fn parent() -> Vec<(OsString, OsString)> {
    [
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ("HOME", "/home/ana"),
        ("LANG", "fr_FR.UTF-8"),
        ("LC_TIME", "de_DE.UTF-8"),
        ("TZ", "Europe/Paris"),
        ("DISPLAY", ":0"),
        ("TMPDIR", "/tmp/ana"),
        ("XDG_RUNTIME_DIR", "/run/user/1000"),
        ("CANARY_API_KEY", "canary-key-6f1d"),
        ("GITHUB_TOKEN", "canary-token-77aa"),
        ("AWS_SECRET_ACCESS_KEY", "canary-aws-0b3c"),
        ("AWS_REGION", "eu-west-3"),
        ("OPENAI_API_KEY", "canary-openai-19"),
        ("SSH_AUTH_SOCK", "/run/user/1000/ssh-agent"),
        ("LD_PRELOAD", "/tmp/evil.so"),
        ("CONCH_HOME", "/home/ana/.conch"),
        ("LC_SECRET_TOKEN", "canary-lc-42"),
    ]
    .iter()
    .map(|(k, v)| (OsString::from(k), OsString::from(v)))
    .collect()
}

/// What a browser may see, whichever OS: the allowlist plus the variables Conch sets.
const ALLOWED: &[&str] = &[
    "PATH",
    "LANG",
    "LANGUAGE",
    "TZ",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "DBUS_SESSION_BUS_ADDRESS",
    "TMPDIR",
    "XDG_RUNTIME_DIR",
    "HOME",
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

fn check(env: &[(String, String)], home: &Home) {
    for (name, value) in env {
        assert!(ALLOWED.contains(&name.as_str()), "{name} passed");
        assert!(!value.contains("canary"), "{name}={value} carries a canary");
    }
    let get = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let browser = home.browser_dir();
    let tmpdir = get("TMPDIR").expect("TMPDIR is set");
    assert!(
        std::path::Path::new(&tmpdir).starts_with(&browser),
        "{tmpdir}"
    );
    assert_eq!(tmpdir, home.tmp_dir().to_string_lossy());
    assert_eq!(
        get("XDG_RUNTIME_DIR"),
        Some(home.run_dir().to_string_lossy().into_owned())
    );
    assert_eq!(
        get("HOME"),
        Some(home.browser_home_dir().to_string_lossy().into_owned())
    );
    assert_eq!(get("PATH").as_deref(), Some("/usr/local/bin:/usr/bin:/bin"));
    assert_eq!(get("LANG").as_deref(), Some("fr_FR.UTF-8"));
    assert_eq!(get("LC_TIME").as_deref(), Some("de_DE.UTF-8"));
    assert_eq!(get("TZ").as_deref(), Some("Europe/Paris"));
    assert_eq!(get("DISPLAY").as_deref(), Some(":0"));
}

fn strings(env: Vec<(OsString, OsString)>) -> Vec<(String, String)> {
    env.into_iter()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .collect()
}

/// LAUNCH-15: only allowlisted keys pass, no canary, and TMPDIR, XDG_RUNTIME_DIR and HOME
/// point under `<home>/browser`.
#[test]
fn launch_15_only_allowlisted_variables() {
    let home = Home::new("/srv/conch-home");
    let env = strings(browser_env(parent(), &home, false));
    check(&env, &home);
}

/// LAUNCH-15 (real spawn): a process started the way the launcher starts the browser
/// (`env_clear().envs(browser_env(..))`) prints only the allowlisted environment.
#[cfg(unix)]
#[test]
fn launch_15_spawned_process_sees_only_the_allowlist() {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = Home::new(dir.path());
    home.ensure().expect("ensure");
    let output = std::process::Command::new("/usr/bin/env")
        .env_clear()
        .envs(browser_env(parent(), &home, false))
        .output()
        .expect("run env");
    assert!(output.status.success());
    let printed: Vec<(String, String)> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    assert!(!printed.is_empty());
    check(&printed, &home);
}

/// LAUNCH-15: this process's own environment, whatever it holds, gives nothing that
/// looks like a credential.
#[test]
fn launch_15_real_environment_has_no_credentials() {
    let home = Home::new("/srv/conch-home");
    for (name, _) in strings(browser_env(std::env::vars_os(), &home, true)) {
        let upper = name.to_ascii_uppercase();
        let credential = ["_KEY", "_TOKEN", "_SECRET", "_PASSWORD"]
            .iter()
            .any(|end| upper.ends_with(end))
            || upper.starts_with("AWS_");
        assert!(!credential, "{name} passed");
        assert!(ALLOWED.contains(&name.as_str()), "{name} passed");
    }
}
