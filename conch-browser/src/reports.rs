//! What conch-browser reports to the embedder (PROTO-11): the security checkup's flagged
//! items, the health check, the health notes and the backup manifest with its powers,
//! behind one trait, [`HostReports`], that [`Browser`] implements and any embedder's
//! settings page or checkup reads.
//!
//! The checkup flags each loosening the person made: `browser-backend` when the browser
//! is not Conch's own, `browser-allow-localhost` (NET-5), one `browser-allow-host` per
//! local app allowed (AMB-3), and `browser-own-chrome` with its one-press fix
//! `browser-own-chrome-off`, back to local (BE-16), whose sentence states the residual
//! risk of driving your own Chrome (BE-17). A backend with no guard proxy carries
//! [`NO_PROXY_RISK`]: what its guard cannot hold (AMB-1). `browser-device-key` is flagged
//! when no keychain holds the device key, as health notes it: the key, the files it seals
//! and the gateway's token are then kept from others by owner-only file permissions alone
//! (DATA-6).
//!
//! Deliberately absent: any key or full address (BE-3): items name a backend and a host
//! at most, and the backup manifest names files, never their contents (DATA-12).

use conch_policy::NetSettings;

use crate::backend::Backend;
use crate::home::Manifest;
use crate::runtime::{Browser, HealthItem};
use crate::seal::KeyPlace;
use crate::store::BrowserSettings;

/// The residual risk of driving the person's own Chrome (BE-17), for the settings page and
/// the checkup.
pub const OWN_CHROME_RISK: &str = "A site you allow in your own Chrome can still steer the agent within that site, with your real account; Conch's own local browser is the safer default.";

/// What the guard cannot hold where no guard proxy stands in front of the browser (your
/// own Chrome, a cloud browser, a DevTools address; AMB-1, NET-3): the DevTools rules judge
/// every request and every WebSocket (through a guarded constructor that asks them first)
/// by its address, a name by what this computer's resolver answers for it; what the
/// browser then connects to is its own look-up, a bare connection it opens ahead of a
/// request is not seen, and WebRTC is held back by launch flags only (NET-13), which Conch
/// cannot set on a browser it did not launch. For the settings page's residual risks and
/// the checkup.
pub const NO_PROXY_RISK: &str = "In your own Chrome, a cloud browser or a browser at a DevTools address, Conch's proxy cannot stand in front, so Conch judges each request and WebSocket by the address this computer finds for its site name, and three things go unchecked there: a name whose answer changes before the browser looks it up itself, or that the cloud browser's own network answers differently, can still lead to an address on that computer or network; the browser may open a bare connection, with nothing sent over it, to an address Conch then refuses; and WebRTC may offer and reach addresses on that computer's network, which Conch holds back only in a browser it launches itself.";

/// The fix that puts the backend back to Conch's own local browser (BE-16).
pub const OWN_CHROME_FIX: &str = "browser-own-chrome-off";

/// One flagged item of the security checkup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckupItem {
    /// The item's stable id (`browser-backend`, `browser-allow-localhost`,
    /// `browser-allow-host`, `browser-own-chrome`, `browser-device-key`).
    pub id: &'static str,
    /// What is loosened, in a sentence the person reads.
    pub sentence: String,
    /// The one-press fix's id, when there is one (`browser-own-chrome-off`).
    pub fix: Option<&'static str>,
}

/// The security checkup for a backend choice, the network settings a run uses and where
/// the device key is kept (`None`: not known yet): one flagged item per loosening, none
/// for Conch's defaults with the key in a keychain.
pub fn checkup_items(
    backend: Backend,
    net: &NetSettings,
    key: Option<&KeyPlace>,
) -> Vec<CheckupItem> {
    let mut items = Vec::new();
    if backend != Backend::Local {
        items.push(CheckupItem {
            id: "browser-backend",
            sentence: format!(
                "Conch drives a browser that is not its own ({backend}): the guard there is the DevTools rules alone, without Conch's proxy. {NO_PROXY_RISK}"
            ),
            fix: None,
        });
    }
    if backend.abilities().persons_browser {
        items.push(CheckupItem {
            id: "browser-own-chrome",
            sentence: format!("Conch drives your own Chrome. {OWN_CHROME_RISK}"),
            fix: Some(OWN_CHROME_FIX),
        });
    }
    if net.allow_localhost {
        items.push(CheckupItem {
            id: "browser-allow-localhost",
            sentence: "Pages may open the apps on this computer (every loopback port but the gateway's own).".to_owned(),
            fix: None,
        });
    }
    for host in &net.allow_hosts {
        items.push(CheckupItem {
            id: "browser-allow-host",
            sentence: format!("Pages may open the local app at {host}."),
            fix: None,
        });
    }
    if let Some(file @ KeyPlace::KeyFile(_)) = key {
        items.push(CheckupItem {
            id: "browser-device-key",
            sentence: format!(
                "Keys are protected by file permissions only: Conch's device key is in {file}. Whoever can read your files can open the saved keys and passwords it seals, and use the gateway's token."
            ),
            fix: None,
        });
    }
    items
}

/// What conch-browser reports to the embedder (PROTO-11).
pub trait HostReports {
    /// The security checkup's flagged items (NET-5, BE-16, BE-17).
    fn checkup(&self) -> Vec<CheckupItem>;
    /// The health check (`browser-backend`, BE-4; `browser-errands` where tasks browse, ERR-6, ERR-21; `browser-errands-reopened` after a heal, ERR-19).
    fn health(&self) -> Vec<HealthItem>;
    /// Health notes: why Conch fell back to another browser, when it did.
    fn notes(&self) -> Vec<String>;
    /// The backup manifest of Conch's browser files, with the powers a backup carries
    /// (DATA-11, BE-16).
    fn manifest(&self) -> Manifest;
}

impl Browser {
    /// Where the device key is kept: where this process last found it, else the key file
    /// when one is on disk; `None` when neither is known.
    fn key_place(&self) -> Option<KeyPlace> {
        let home = &self.config().home;
        match crate::seal::last_key_place(home) {
            Some(found) => found.ok(),
            None => {
                let file = home.device_key_file();
                file.is_file().then_some(KeyPlace::KeyFile(file))
            }
        }
    }

    /// The backend the person chose, as browser.json says (local when it can't be read).
    fn chosen_backend(&self) -> Backend {
        let config = self.config();
        BrowserSettings::load(&config.home, config.clock.as_ref())
            .map(|loaded| loaded.value.backend)
            .unwrap_or(Backend::Local)
    }
}

impl HostReports for Browser {
    fn checkup(&self) -> Vec<CheckupItem> {
        let net = self
            .config()
            .guard
            .as_ref()
            .map(|g| g.net.clone())
            .unwrap_or_default();
        checkup_items(self.chosen_backend(), &net, self.key_place().as_ref())
    }

    fn health(&self) -> Vec<HealthItem> {
        Browser::health(self)
    }

    fn notes(&self) -> Vec<String> {
        Browser::health(self)
            .into_iter()
            .filter_map(|item| match item.state {
                crate::runtime::HealthState::Failing(why)
                | crate::runtime::HealthState::Note(why) => Some(why),
                crate::runtime::HealthState::Ok => None,
            })
            .collect()
    }

    fn manifest(&self) -> Manifest {
        self.config().home.manifest(self.chosen_backend())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use conch_policy::AllowedHost;

    fn ids(items: &[CheckupItem]) -> Vec<&'static str> {
        items.iter().map(|i| i.id).collect()
    }

    /// PROTO-11: Conch's defaults flag nothing.
    #[test]
    fn proto_11_the_defaults_flag_nothing() {
        assert!(checkup_items(Backend::Local, &NetSettings::default(), None).is_empty());
    }

    /// PROTO-11, NET-5: allowLocalhost and each allowHosts entry are flagged items.
    #[test]
    fn proto_11_net_5_local_access_is_flagged() {
        let net = NetSettings {
            allow_localhost: true,
            allow_hosts: vec![
                AllowedHost::parse("localhost:3000").expect("valid"),
                AllowedHost::parse("127.0.0.1:8080").expect("valid"),
            ],
            ..NetSettings::default()
        };
        let items = checkup_items(Backend::Local, &net, None);
        assert_eq!(
            ids(&items),
            [
                "browser-allow-localhost",
                "browser-allow-host",
                "browser-allow-host"
            ]
        );
        assert!(items[1].sentence.contains("localhost:3000"), "{items:?}");
    }

    /// PROTO-11, BE-16, BE-17: your own Chrome is flagged with its fix back to local and
    /// the residual risk; another remote backend is flagged without that fix.
    #[test]
    fn proto_11_be_16_own_chrome_has_its_fix_and_its_risk() {
        let items = checkup_items(Backend::Chrome, &NetSettings::default(), None);
        assert_eq!(ids(&items), ["browser-backend", "browser-own-chrome"]);
        assert_eq!(items[1].fix, Some("browser-own-chrome-off"));
        assert!(items[1].sentence.contains(OWN_CHROME_RISK));
        let cdp = checkup_items(Backend::Cdp, &NetSettings::default(), None);
        assert_eq!(ids(&cdp), ["browser-backend"]);
        assert!(cdp[0].sentence.contains(NO_PROXY_RISK), "{cdp:?}");
        assert!(items[0].sentence.contains(NO_PROXY_RISK), "{items:?}");
        assert!(cdp.iter().all(|i| i.fix.is_none()));
    }

    /// PROTO-11, DATA-6: a device key kept in a key file (no keychain answered) is a
    /// flagged item, as health notes it, naming the file; in a keychain it is not.
    #[test]
    fn proto_11_data_6_a_device_key_in_a_key_file_is_flagged() {
        let path = std::path::PathBuf::from("/home/someone/.conch/device.key");
        let items = checkup_items(
            Backend::Local,
            &NetSettings::default(),
            Some(&KeyPlace::KeyFile(path)),
        );
        assert_eq!(ids(&items), ["browser-device-key"]);
        assert!(
            items[0]
                .sentence
                .starts_with("Keys are protected by file permissions only"),
            "{items:?}"
        );
        assert!(
            items[0]
                .sentence
                .contains("/home/someone/.conch/device.key"),
            "{items:?}"
        );
        assert!(
            checkup_items(
                Backend::Local,
                &NetSettings::default(),
                Some(&KeyPlace::Keychain)
            )
            .is_empty()
        );
    }

    /// PROTO-11, DATA-6: the browser's checkup flags the key file its home has, as its
    /// health does once a sealed file is opened.
    #[test]
    fn proto_11_data_6_the_checkup_flags_the_key_file_of_its_home() {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = crate::Home::new(dir.path());
        let browser = Browser::new(crate::BrowserConfig::new(home.clone()));
        assert!(HostReports::checkup(&browser).is_empty());
        std::fs::write(home.device_key_file(), [0u8; 32]).expect("a key file");
        let items = HostReports::checkup(&browser);
        assert_eq!(ids(&items), ["browser-device-key"], "{items:?}");
        assert!(
            items[0]
                .sentence
                .contains(&home.device_key_file().display().to_string()),
            "{items:?}"
        );
    }

    /// PROTO-11, DATA-11: the browser reports the manifest of its home with the power
    /// `browser-own-chrome` only when the backend is chrome.
    #[test]
    fn proto_11_data_11_the_manifest_follows_the_backend() {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = crate::Home::new(dir.path());
        let browser = Browser::new(crate::BrowserConfig::new(home.clone()));
        assert!(HostReports::manifest(&browser).powers.is_empty());
        assert!(HostReports::checkup(&browser).is_empty());
        let settings = BrowserSettings {
            backend: Backend::Chrome,
            ..BrowserSettings::default()
        };
        settings.save(&home).expect("saved");
        let manifest = HostReports::manifest(&browser);
        assert_eq!(
            manifest.powers.iter().map(|p| p.code()).collect::<Vec<_>>(),
            ["browser-own-chrome"]
        );
        assert_eq!(
            ids(&HostReports::checkup(&browser)),
            ["browser-backend", "browser-own-chrome"]
        );
        assert!(HostReports::notes(&browser).is_empty());
    }
}
