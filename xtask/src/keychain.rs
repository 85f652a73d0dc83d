//! Making sure a real keychain can run for conch-browser's keychain test (BE-3): on
//! Linux, Debian's `gnome-keyring` (its `gnome-keyring-daemon` serves the Secret Service)
//! and `dbus` (`dbus-run-session` gives the test a session bus of its own). The test
//! starts both itself, so nothing else is set up here.

/// On Linux, finds `dbus-run-session` and `gnome-keyring-daemon`; when one is missing and
/// this runs as root on Debian, installs Debian's `dbus` and `gnome-keyring` and says so;
/// otherwise stops with one sentence saying what to install. Elsewhere the platform's own
/// keychain is there already.
pub(crate) fn ensure() -> Result<(), String> {
    if !cfg!(target_os = "linux") || present() {
        return Ok(());
    }
    let why = "the keychain test needs a Secret Service";
    if !crate::browser::apt_install(&["dbus", "gnome-keyring"], why)? {
        return Err("the keychain test needs a Secret Service: install dbus-run-session and gnome-keyring-daemon (on Debian: apt-get install dbus gnome-keyring).".to_owned());
    }
    if present() {
        Ok(())
    } else {
        Err("apt-get installed dbus and gnome-keyring, yet dbus-run-session or gnome-keyring-daemon is not on PATH.".to_owned())
    }
}

fn present() -> bool {
    ["dbus-run-session", "gnome-keyring-daemon"]
        .iter()
        .all(|name| crate::axe::find_on_path(name).is_some())
}
