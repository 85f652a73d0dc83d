//! The home directory: every path under it, its private folders, the protected paths, the
//! backup manifest and the profile wipe (DATA-1, DATA-4, DATA-10, DATA-11).

use std::path::{Path, PathBuf};

use conch_browser::home::{BackupClass, BackupPower, Home};
use conch_browser::store::Backend;

fn temp_home() -> (tempfile::TempDir, Home) {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = Home::new(dir.path().join("conch-home"));
    (dir, home)
}

/// DATA-1: every browser path derives from the configured home, at the documented place.
#[test]
fn data_1_every_path_derives_from_the_home() {
    let home = Home::new("/srv/someone/.conch");
    let root = Path::new("/srv/someone/.conch");
    let expected: [(PathBuf, &str); 11] = [
        (home.settings_file(), "browser.json"),
        (home.secrets_file(), "browser.secrets.json"),
        (home.errand_secrets_file(), "browser.errands.secrets.json"),
        (home.browser_dir(), "browser"),
        (home.profile_dir(), "browser/profile"),
        (home.tabs_file(), "browser/tabs.json"),
        (home.shots_dir(), "browser/shots"),
        (home.tmp_dir(), "browser/tmp"),
        (home.run_dir(), "browser/run"),
        (home.browser_home_dir(), "browser/home"),
        (home.root().to_owned(), ""),
    ];
    for (path, relative) in expected {
        assert_eq!(path, root.join(relative), "{relative}");
    }
    let other = Home::new("/elsewhere");
    assert!(other.profile_dir().starts_with("/elsewhere"));
    assert!(
        other
            .protected_paths()
            .iter()
            .all(|p| p.starts_with("/elsewhere"))
    );
    assert!(
        other
            .manifest(Backend::Chrome)
            .files
            .iter()
            .all(|f| f.path.starts_with("/elsewhere"))
    );
}

/// DATA-1: `ensure` makes the home and the browser's folders, private to this user.
#[test]
fn data_1_ensure_makes_private_folders() {
    let (_dir, home) = temp_home();
    home.ensure().expect("ensure");
    home.ensure().expect("ensure is repeatable");
    for dir in [
        home.root().to_owned(),
        home.browser_dir(),
        home.profile_dir(),
        home.shots_dir(),
        home.tmp_dir(),
        home.run_dir(),
        home.browser_home_dir(),
    ] {
        assert!(dir.is_dir(), "{} is a folder", dir.display());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&dir).expect("stat").permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "{} is 0700", dir.display());
        }
    }
}

/// DATA-1: an existing browser folder left open to others is made private again.
#[cfg(unix)]
#[test]
fn data_1_ensure_tightens_existing_folders() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, home) = temp_home();
    std::fs::create_dir_all(home.run_dir()).expect("pre-existing");
    std::fs::set_permissions(home.run_dir(), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    home.ensure().expect("ensure");
    let mode = std::fs::metadata(home.run_dir())
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
}

/// DATA-10, BE-3: the embedder's file tools protect the device key, the sealed files and
/// the profile.
#[test]
fn data_10_protected_paths() {
    let home = Home::new("/h/.conch");
    assert_eq!(
        home.protected_paths(),
        [
            PathBuf::from("/h/.conch/device.key"),
            PathBuf::from("/h/.conch/browser.secrets.json"),
            PathBuf::from("/h/.conch/browser.errands.secrets.json"),
            PathBuf::from("/h/.conch/passwords.secrets.json"),
            PathBuf::from("/h/.conch/browser/profile"),
        ]
    );
}

/// DATA-11, BE-16: secrets are secret, errand sessions derived (never carried to another
/// computer), settings ordinary; `browser-own-chrome` only with backend `chrome`.
#[test]
fn data_11_manifest_for_each_backend() {
    let home = Home::new("/h/.conch");
    for backend in [
        Backend::Local,
        Backend::Chrome,
        Backend::Browserbase,
        Backend::Steel,
        Backend::Cdp,
    ] {
        let manifest = home.manifest(backend);
        let classes: Vec<(PathBuf, BackupClass)> = manifest
            .files
            .iter()
            .map(|f| (f.path.clone(), f.class))
            .collect();
        assert_eq!(
            classes,
            [
                (home.settings_file(), BackupClass::Ordinary),
                (home.secrets_file(), BackupClass::Secret),
                (home.errand_secrets_file(), BackupClass::Derived),
                (home.passwords_file(), BackupClass::Secret),
            ],
            "{backend}"
        );
        let powers: Vec<&str> = manifest.powers.iter().map(|p| p.code()).collect();
        if backend == Backend::Chrome {
            assert_eq!(powers, ["browser-own-chrome"]);
            assert_eq!(manifest.powers, [BackupPower::OwnChrome]);
        } else {
            assert!(powers.is_empty(), "{backend} has no power");
        }
    }
    assert!(!BackupClass::Derived.carried_to_another_computer());
    assert!(BackupClass::Secret.carried_to_another_computer());
    assert_eq!(BackupClass::Derived.as_str(), "derived");
}

/// DATA-4: the wipe empties the profile, keeps the folder, and never follows a link out.
#[test]
fn data_4_wipe_profile_empties_it() {
    let (dir, home) = temp_home();
    home.ensure().expect("ensure");
    let profile = home.profile_dir();
    std::fs::create_dir_all(profile.join("Default/Network")).expect("nested");
    std::fs::write(profile.join("Default/Network/Cookies"), b"session=canary").expect("cookie");
    std::fs::write(profile.join("Local State"), b"{}").expect("state");
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).expect("outside");
    std::fs::write(outside.join("keep.txt"), b"keep").expect("keep");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, profile.join("link-out")).expect("dir link");
        std::os::unix::fs::symlink("/nonexistent/target", profile.join("SingletonLock"))
            .expect("dangling link");
    }

    home.wipe_profile().expect("wipe");

    assert!(profile.is_dir());
    let left: Vec<_> = std::fs::read_dir(&profile).expect("list").collect();
    assert!(left.is_empty(), "profile left: {left:?}");
    assert_eq!(
        std::fs::read(outside.join("keep.txt")).expect("outside kept"),
        b"keep"
    );
}

/// DATA-4: wiping a profile that was never created leaves an empty one.
#[test]
fn data_4_wipe_without_a_profile() {
    let (_dir, home) = temp_home();
    home.wipe_profile().expect("wipe");
    assert!(home.profile_dir().is_dir());
}
