//! The device key in a real keychain (BE-3, DATA-6): a Secret Service run by
//! `gnome-keyring-daemon`, unlocked, inside a D-Bus session of its own
//! (`dbus-run-session`), both from Debian's packages (`cargo xtask` installs them).
//!
//! The test starts the session and runs itself again inside it (marked by an environment
//! variable), where [`inside_a_secret_service`] does the work; outside, it fails unless
//! that run passed. Nothing touches the person's own keychain: the session has its own
//! bus, HOME and keyrings in a temporary folder.

use std::process::Command;

use conch_browser::clock::ManualClock;
use conch_browser::home::Home;
use conch_browser::seal::{
    KeyPlace, Sealer, SecretText, SecretsFile, entry_user, last_key_place, platform_store,
};

/// This test's full name in this binary, to run it again inside the session.
const INSIDE: &str =
    "keychain::be_3_the_device_key_lives_in_a_real_secret_service_and_a_key_file_moves_into_it";

/// Set only in the session the outer test starts.
const IN_SESSION: &str = "CONCH_TEST_IN_KEYCHAIN_SESSION";

const CANARY: &str = "bb_live_CANARY_secret_service_51e8";

/// BE-3, DATA-6: where a Secret Service answers, the device key is kept there, never in
/// `device.key`; a key file from before moves into it and every sealed file stays
/// readable.
#[test]
fn be_3_the_device_key_lives_in_a_real_secret_service_and_a_key_file_moves_into_it() {
    if std::env::var_os(IN_SESSION).is_some() {
        inside_a_secret_service();
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let run = dir.path().join("run");
    std::fs::create_dir(&run).expect("runtime dir");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).expect("0700");
    }
    let exe = std::env::current_exe().expect("this test binary");
    // The keyring is unlocked with a throwaway password; the test binary replaces the
    // shell, so the session ends when it does.
    let script = "echo -n conch-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null \
                  && exec \"$0\" \"$1\" --exact --nocapture --test-threads=1";
    let output = Command::new("timeout")
        .args(["120", "dbus-run-session", "--", "sh", "-c", script])
        .arg(&exe)
        .arg(INSIDE)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env("HOME", dir.path())
        .env("XDG_RUNTIME_DIR", &run)
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env(IN_SESSION, "1")
        .output()
        .expect(
            "timeout and dbus-run-session run (Debian: coreutils, dbus; `cargo xtask test` installs them)",
        );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the keychain session failed (are gnome-keyring and dbus installed? `cargo xtask test` installs them): {}\n{stdout}\n{stderr}",
        output.status
    );
    assert!(
        stdout.contains(&format!("test {INSIDE} ... ok")),
        "the test inside the session did not run: {stdout}\n{stderr}"
    );
    for text in [&stdout, &stderr] {
        assert!(!text.contains(CANARY), "the canary was printed");
    }
}

/// The work, inside the session the test above starts.
fn inside_a_secret_service() {
    let dir = tempfile::tempdir().expect("temp dir");
    let clock = ManualClock::at_unix(1_796_000_000);

    // A fresh home: the key is made in the keychain, never in a file.
    let home = Home::new(dir.path().join("fresh"));
    let sealer = Sealer::open_device(&home).expect("the device key");
    assert_eq!(
        sealer.key_place(),
        &KeyPlace::Keychain,
        "the key went into a file although the Secret Service answers"
    );
    assert!(
        !home.root().join("device.key").exists(),
        "device.key was written"
    );
    assert_eq!(last_key_place(&home), Some(Ok(KeyPlace::Keychain)));
    // The Secret Service itself holds it, for this home.
    let store = platform_store().expect("the Secret Service");
    let entry =
        keyring_core::Entry::new_in_store(&store, "conch", &entry_user(&home)).expect("the entry");
    assert_eq!(entry.get_secret().expect("the key is kept there").len(), 32);
    let mut file = SecretsFile::load(&home, &sealer, &clock).expect("empty");
    file.set(
        "browserbase",
        "api key",
        "api.browserbase.com",
        SecretText::new(CANARY.to_owned()),
    );
    file.save(&sealer).expect("saved");
    let on_disk = std::fs::read_to_string(home.secrets_file()).expect("written");
    assert!(!on_disk.contains(CANARY));
    let again = Sealer::open_device(&home).expect("the same key");
    let loaded = SecretsFile::load(&home, &again, &clock).expect("opens");
    assert_eq!(
        loaded.get("browserbase").map(SecretText::expose),
        Some(CANARY)
    );

    // A home from before, its key in device.key: the key moves into the keychain, the
    // file goes, and what it sealed still opens.
    let old = Home::new(dir.path().join("old"));
    let before = Sealer::open(&old, None).expect("a key file");
    assert!(matches!(before.key_place(), KeyPlace::KeyFile(_)));
    let mut file = SecretsFile::load_at(old.passwords_file(), &before, &clock).expect("empty");
    file.set(
        "https://shop.example",
        "password",
        "shop.example",
        SecretText::new(CANARY.to_owned()),
    );
    file.save(&before).expect("saved");
    let moved = Sealer::open_device(&old).expect("moved");
    assert_eq!(moved.key_place(), &KeyPlace::Keychain);
    assert!(
        !old.root().join("device.key").exists(),
        "the key file stayed"
    );
    let loaded = SecretsFile::load_at(old.passwords_file(), &moved, &clock).expect("opens");
    assert_eq!(
        loaded.get("https://shop.example").map(SecretText::expose),
        Some(CANARY)
    );
    // Two homes, two keys.
    let other = keyring_core::Entry::new_in_store(&store, "conch", &entry_user(&old))
        .expect("the entry")
        .get_secret()
        .expect("kept");
    assert_ne!(other, entry.get_secret().expect("kept"));
}
