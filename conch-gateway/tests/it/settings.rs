//! The settings and health API (PROTO-10, AMB-23) against the built gateway: every
//! endpoint, the forged cross-origin request refused (AMB-2), the backend only through
//! PUT (BE-2), revoking a site (PERM-7), repair step by step (LAUNCH-14), sign-out with
//! confirmation (DATA-4), status (LAUNCH-13, PROTO-11), browser.json honoured at start
//! (DATA-5), and no key in any response (BE-3).

use std::path::Path;

use conch_fixtures::FixtureServer;
use serde_json::{Value, json};

use crate::live::{Signed, TOKEN, Watched};
use crate::support::door_request;

/// A signed-in person on the panel of a running gateway.
struct Person {
    port: u16,
    signed: Signed,
    /// Every body and head the gateway sent, for the key-canary scan.
    seen: Vec<String>,
}

impl Person {
    async fn of(watched: &Watched) -> Person {
        Person {
            port: watched.port,
            signed: watched.sign_in().await,
            seen: Vec::new(),
        }
    }

    /// A request from the panel's own page: the session (cookie and token) and the
    /// gateway's Origin.
    async fn call(&mut self, method: &str, path: &str, body: Value) -> (u16, Value) {
        let origin = format!("http://127.0.0.1:{}", self.port);
        let body = if body.is_null() {
            String::new()
        } else {
            body.to_string()
        };
        let (status, head, text) = door_request(
            self.port,
            method,
            path,
            &[
                ("Cookie", &self.signed.cookie),
                (TOKEN, &self.signed.token),
                ("Origin", &origin),
            ],
            &body,
        )
        .await;
        self.seen.push(format!("{head}\n{text}"));
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, value)
    }
}

/// Writes browser.json into `home` with `fields` (format 1).
fn seed(home: &Path, mut fields: Value) {
    fields["format"] = json!(1);
    std::fs::write(home.join("browser.json"), fields.to_string()).expect("browser.json");
}

/// A marker in the browser's profile: present until the profile is wiped.
fn mark_profile(home: &Path) -> std::path::PathBuf {
    let profile = home.join("browser").join("profile");
    std::fs::create_dir_all(&profile).expect("profile");
    let marker = profile.join("conch-test-marker");
    std::fs::write(&marker, b"signed in somewhere").expect("marker");
    marker
}

/// AMB-2, PROTO-10: a request that changes something is refused with 403 from anyone but
/// the panel's own signed-in page: another origin with the person's cookie, no cookie,
/// or a rebound Host; and nothing changes.
#[tokio::test(flavor = "multi_thread")]
async fn amb_2_a_forged_cross_origin_request_is_refused() {
    let home = tempfile::tempdir().expect("temp home");
    seed(home.path(), json!({ "sites": ["shop.example"] }));
    let marker = mark_profile(home.path());
    let watched = Watched::start(home.path(), &["--unattended"]).await;
    let person = Person::of(&watched).await;
    let port = watched.port;
    let before = std::fs::read(home.path().join("browser.json")).expect("settings");
    let own_host = format!("127.0.0.1:{port}");
    let own_origin = format!("http://127.0.0.1:{port}");
    let attacks: [(&str, &str, &str); 7] = [
        ("POST", "/api/browser/sign-in-again", ""),
        (
            "PATCH",
            "/api/browser/settings",
            r#"{"allowLocalhost":true}"#,
        ),
        ("PUT", "/api/browser/backend", r#"{"backend":"local"}"#),
        ("POST", "/api/browser/repair", r#"{"wipeProfile":true}"#),
        ("DELETE", "/api/browser/sites/shop.example", ""),
        ("POST", "/api/browser/sign-out", r#"{"confirm":true}"#),
        ("GET", "/api/browser/settings", ""),
    ];
    for (method, path, body) in attacks {
        // The attacker's page, with the person's cookie riding along (and even the
        // token, which no other origin can read).
        let forged: Vec<(&str, &str)> = vec![
            ("Cookie", &person.signed.cookie),
            (TOKEN, &person.signed.token),
            ("Origin", "http://evil.example"),
        ];
        // No cookie at all, from the gateway's own origin.
        let anonymous: Vec<(&str, &str)> = vec![("Origin", &own_origin)];
        // A name rebound to 127.0.0.1.
        let rebound: Vec<(&str, &str)> = vec![
            ("Host", "evil.example"),
            ("Cookie", &person.signed.cookie),
            (TOKEN, &person.signed.token),
            ("Origin", "http://evil.example"),
        ];
        for headers in [&forged, &anonymous, &rebound] {
            if method == "GET" && headers == &forged {
                // A GET changes nothing, and another origin can't read its answer.
                continue;
            }
            let (status, _, text) = door_request(port, method, path, headers, body).await;
            let (code, says) = if headers == &anonymous {
                (401, "Unauthorized: ")
            } else {
                (403, "Forbidden: ")
            };
            assert_eq!(status, code, "{method} {path} with {headers:?}: {text}");
            assert!(text.starts_with(says), "{text}");
        }
    }
    assert_eq!(
        std::fs::read(home.path().join("browser.json")).expect("settings"),
        before
    );
    assert!(marker.exists(), "nothing was wiped");
    // The same request from the panel's own page goes through.
    let (status, _, _) = door_request(
        port,
        "GET",
        "/api/browser/settings",
        &[
            ("Cookie", &person.signed.cookie),
            (TOKEN, &person.signed.token),
            ("Host", &own_host),
        ],
        "",
    )
    .await;
    assert_eq!(status, 200);
    watched.client.finish().await;
}

/// BE-2, PROTO-10: a PATCH that names the backend or the sites gets 400 with a sentence
/// and changes nothing; one of the changeable fields is saved and read back.
#[tokio::test(flavor = "multi_thread")]
async fn be_2_patch_cannot_change_the_backend_or_the_sites() {
    let home = tempfile::tempdir().expect("temp home");
    seed(home.path(), json!({ "sites": ["shop.example"] }));
    let watched = Watched::start(home.path(), &["--unattended"]).await;
    let mut person = Person::of(&watched).await;
    let file = home.path().join("browser.json");
    let before = std::fs::read(&file).expect("settings");
    for body in [
        json!({ "backend": "chrome" }),
        json!({ "sites": [] }),
        json!({ "allowLocalhost": true, "sites": ["evil.example"] }),
        json!({ "allowHosts": ["10.0.0.1:80"] }),
        json!({ "trust": "full" }),
    ] {
        let (status, answer) = person
            .call("PATCH", "/api/browser/settings", body.clone())
            .await;
        assert_eq!(status, 400, "{body}: {answer}");
        let sentence = answer["error"].as_str().expect("a sentence");
        assert!(sentence.ends_with("nothing was changed."), "{sentence}");
        assert_eq!(std::fs::read(&file).expect("settings"), before, "{body}");
    }
    let (status, answer) = person
        .call(
            "PATCH",
            "/api/browser/settings",
            json!({ "backend": "chrome" }),
        )
        .await;
    assert_eq!(status, 400);
    assert!(
        answer["error"]
            .as_str()
            .is_some_and(|s| s.contains("PUT /api/browser/backend")),
        "{answer}"
    );
    let (status, answer) = person
        .call(
            "PATCH",
            "/api/browser/settings",
            json!({ "allowLocalhost": true, "allowHosts": ["localhost:3000"], "searchUrl": "https://search.example/?q=%s" }),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let (status, read) = person
        .call("GET", "/api/browser/settings", Value::Null)
        .await;
    assert_eq!(status, 200);
    assert_eq!(read["allowLocalhost"], true, "{read}");
    assert_eq!(read["allowHosts"], json!(["localhost:3000"]));
    assert_eq!(read["searchUrl"], "https://search.example/?q=%s");
    assert_eq!(read["sites"], json!(["shop.example"]));
    assert_eq!(read["backend"]["kind"], "local");
    watched.client.finish().await;
}

/// BE-17, NET-12, HS-9: the settings carry the residual risk of your own Chrome, the
/// hardening statement and the residual risks in words; a fresh home's backend is local.
#[tokio::test(flavor = "multi_thread")]
async fn be_17_net_12_hs_9_the_settings_state_the_risks() {
    let home = tempfile::tempdir().expect("temp home");
    let watched = Watched::start(home.path(), &["--unattended"]).await;
    let mut person = Person::of(&watched).await;
    let (status, read) = person
        .call("GET", "/api/browser/settings", Value::Null)
        .await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["backend"]["kind"], "local");
    let statements = &read["statements"];
    assert!(
        statements["ownChrome"]
            .as_str()
            .is_some_and(|s| s.contains("steer the agent within that site")),
        "{statements}"
    );
    assert!(
        statements["hardening"]
            .as_str()
            .is_some_and(|s| s.contains("hardened, not sandboxed")),
        "{statements}"
    );
    let risks = statements["residualRisks"].as_array().expect("a list");
    assert_eq!(risks.len(), 5, "{risks:?}");
    watched.client.finish().await;
}

/// AMB-1, NET-3, NET-5 (issue 29): the settings page names exactly what the guard cannot
/// hold where no guard proxy stands in front (own Chrome, cloud, a DevTools address): the
/// browser's own second look-up of a name Conch resolved, and bare preconnects
/// (WebSockets and names are judged there now).
#[tokio::test(flavor = "multi_thread")]
async fn amb_1_the_settings_name_what_goes_unchecked_without_a_proxy() {
    let home = tempfile::tempdir().expect("temp home");
    let watched = Watched::start(home.path(), &["--unattended"]).await;
    let mut person = Person::of(&watched).await;
    let (status, read) = person
        .call("GET", "/api/browser/settings", Value::Null)
        .await;
    assert_eq!(status, 200, "{read}");
    let risks = read["statements"]["residualRisks"]
        .as_array()
        .expect("a list");
    let no_proxy: Vec<&str> = risks
        .iter()
        .filter_map(Value::as_str)
        .filter(|risk| risk.contains("proxy cannot stand in front"))
        .collect();
    assert_eq!(no_proxy.len(), 1, "{risks:?}");
    for named in [
        "your own Chrome",
        "a cloud browser",
        "a DevTools address",
        "each request and WebSocket",
        "a name whose answer changes before the browser looks it up itself",
        "the cloud browser's own network answers differently",
        "a bare connection, with nothing sent over it",
        "WebRTC may offer and reach addresses",
    ] {
        assert!(no_proxy[0].contains(named), "{named}: {}", no_proxy[0]);
    }
    watched.client.finish().await;
}

/// PROTO-10, BE-3, DATA-5: the backend is chosen with PUT; a key and a full address
/// saved that way never come back in any response, browser.json or the log: the
/// settings show the host and "key saved" only.
#[tokio::test(flavor = "multi_thread")]
async fn proto_10_be_3_no_response_carries_the_key() {
    const CANARY: &str = "CANARYk3y7a9z";
    let home = tempfile::tempdir().expect("temp home");
    seed(home.path(), json!({ "sites": ["shop.example"] }));
    let watched = Watched::start(home.path(), &["--unattended"]).await;
    let mut person = Person::of(&watched).await;
    // Nothing answers on port 1: the gateway falls back to its own browser.
    let address = format!("ws://me:{CANARY}@127.0.0.1:1/devtools/browser/{CANARY}?token={CANARY}");
    let (status, answer) = person
        .call(
            "PUT",
            "/api/browser/backend",
            json!({ "backend": "cdp", "url": address }),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["backend"]["kind"], "cdp");
    assert_eq!(answer["backend"]["host"], "127.0.0.1:1");
    let (status, answer) = person
        .call(
            "PUT",
            "/api/browser/backend",
            json!({ "backend": "steel", "url": "http://127.0.0.1:1", "key": CANARY }),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["backend"]["keySaved"], true, "{answer}");
    assert_eq!(answer["backend"]["host"], "127.0.0.1:1");
    // A bad choice says why without echoing what was given.
    let (status, answer) = person
        .call(
            "PUT",
            "/api/browser/backend",
            json!({ "backend": "cdp", "url": format!("ftp://{CANARY}@127.0.0.1/") }),
        )
        .await;
    assert_eq!(status, 400, "{answer}");
    person
        .call("GET", "/api/browser/settings", Value::Null)
        .await;
    person
        .call(
            "PATCH",
            "/api/browser/settings",
            json!({ "allowLocalhost": true }),
        )
        .await;
    person
        .call(
            "PATCH",
            "/api/browser/settings",
            json!({ "backend": CANARY }),
        )
        .await;
    let (status, repaired) = person.call("POST", "/api/browser/repair", json!({})).await;
    assert_eq!(status, 200, "{repaired}");
    let (status, health) = person.call("GET", "/api/browser/status", Value::Null).await;
    assert_eq!(status, 200, "{health}");
    assert_eq!(health["chosen"], "steel", "{health}");
    assert_eq!(health["backend"], "local", "the stand-in: {health}");
    // The fallen-back state says why, in the status and as a health note (LAUNCH-13,
    // PROTO-11).
    let why = health["why"].as_str().expect("why");
    assert!(why.contains("uses its own local browser"), "{health}");
    // Beside it, only where the device key is (BE-3): here, with no keychain, a key file.
    let notes = health["notes"].as_array().expect("notes");
    assert_eq!(notes[0], json!(why), "{health}");
    assert!(
        notes[1..].iter().all(|n| n
            .as_str()
            .is_some_and(|n| n.starts_with("Keys are protected"))),
        "{health}"
    );
    assert_eq!(health["health"][0]["ok"], false, "{health}");
    let steps = repaired["steps"].as_array().expect("steps");
    assert_eq!(steps[3]["id"], "reconnect-backend");
    assert_eq!(
        steps[3]["outcome"], "failed",
        "nothing answers on port 1: {repaired}"
    );
    let flagged: Vec<&str> = health["flagged"]
        .as_array()
        .expect("flagged items")
        .iter()
        .filter_map(|i| i["id"].as_str())
        .collect();
    assert!(flagged.contains(&"browser-backend"), "{health}");
    person
        .call("DELETE", "/api/browser/sites/shop.example", Value::Null)
        .await;
    person
        .call("POST", "/api/browser/sign-out", json!({}))
        .await;
    let (status, answer) = person
        .call("PUT", "/api/browser/backend", json!({ "backend": "local" }))
        .await;
    assert_eq!(status, 200, "{answer}");
    for seen in &person.seen {
        assert!(!seen.contains(CANARY), "a response carries the key: {seen}");
    }
    let settings = std::fs::read_to_string(home.path().join("browser.json")).expect("settings");
    assert!(!settings.contains(CANARY), "{settings}");
    watched.client.finish().await;
    let log = std::fs::read_to_string(home.path().join("gateway.log")).unwrap_or_default();
    assert!(!log.contains(CANARY), "the log carries the key");
}

/// PERM-7: an always-allowed site acts without a question; once it is revoked, the next
/// click on it asks again (unattended: the question is answered No at once, and says so).
#[tokio::test(flavor = "multi_thread")]
async fn perm_7_a_revoked_site_asks_again() {
    let pages = FixtureServer::start().await.expect("fixture server");
    let home = tempfile::tempdir().expect("temp home");
    seed(home.path(), json!({ "sites": ["127.0.0.1"] }));
    let mut watched = Watched::start(home.path(), &["--unattended"]).await;
    let mut person = Person::of(&watched).await;
    let (page, error) = watched
        .client
        .call("browser_open", json!({ "url": pages.url("counter.html") }))
        .await;
    assert!(!error, "{page}");
    let add = crate::support::ref_of(&page, "button \"Add\"");
    let (clicked, error) = watched
        .client
        .call("browser_click", json!({ "ref": add }))
        .await;
    assert!(
        !error,
        "an always-allowed site needs no question: {clicked}"
    );
    let (status, answer) = person
        .call("DELETE", "/api/browser/sites/127.0.0.1", Value::Null)
        .await;
    assert_eq!(status, 200, "{answer}");
    let (clicked, error) = watched
        .client
        .call("browser_click", json!({ "ref": add }))
        .await;
    assert!(error, "{clicked}");
    assert!(clicked.contains("answered No at once"), "{clicked}");
    let (status, read) = person
        .call("GET", "/api/browser/settings", Value::Null)
        .await;
    assert_eq!(status, 200);
    assert_eq!(read["sites"], json!([]));
    let (status, answer) = person
        .call("DELETE", "/api/browser/sites/127.0.0.1", Value::Null)
        .await;
    assert_eq!(status, 404, "{answer}");
    // A host names its site: www.shop.example is shop.example.
    seed(home.path(), json!({ "sites": ["shop.example"] }));
    let (status, answer) = person
        .call("DELETE", "/api/browser/sites/WWW.Shop.Example", Value::Null)
        .await;
    assert_eq!(status, 200, "{answer}");
    watched.client.finish().await;
}

/// The ids and outcomes of a repair's steps.
fn steps(answer: &Value) -> Vec<(String, String)> {
    answer["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            (
                s["id"].as_str().expect("id").to_owned(),
                s["outcome"].as_str().expect("outcome").to_owned(),
            )
        })
        .collect()
}

/// LAUNCH-14: repair runs every fix in turn and reports each; with No the profile is
/// left, with Yes it is wiped as the last step, and the browser comes back after.
#[tokio::test(flavor = "multi_thread")]
async fn launch_14_repair_wipes_the_profile_last_and_only_on_yes() {
    let pages = FixtureServer::start().await.expect("fixture server");
    let home = tempfile::tempdir().expect("temp home");
    let mut watched = Watched::start(home.path(), &["--unattended"]).await;
    let mut person = Person::of(&watched).await;
    let (page, error) = watched
        .client
        .call("browser_open", json!({ "url": pages.url("basic.html") }))
        .await;
    assert!(!error, "{page}");
    let marker = mark_profile(home.path());
    let order = [
        "end-stale",
        "relaunch",
        "fallback-or-download",
        "reconnect-backend",
        "wipe-profile",
    ];
    let (status, no) = person
        .call(
            "POST",
            "/api/browser/repair",
            json!({ "wipeProfile": false }),
        )
        .await;
    assert_eq!(status, 200, "{no}");
    let said = steps(&no);
    assert_eq!(
        said.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
        order
    );
    assert_eq!(said[1].1, "done", "the browser relaunched: {no}");
    assert_eq!(said[4].1, "skipped", "{no}");
    assert!(marker.exists(), "No leaves the profile");
    let (status, yes) = person
        .call(
            "POST",
            "/api/browser/repair",
            json!({ "wipeProfile": true }),
        )
        .await;
    assert_eq!(status, 200, "{yes}");
    let said = steps(&yes);
    assert_eq!(
        said.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
        order
    );
    assert_eq!(said[4].1, "done", "{yes}");
    assert!(!marker.exists(), "Yes wipes the profile");
    let (status, bad) = person
        .call(
            "POST",
            "/api/browser/repair",
            json!({ "wipeProfile": "yes" }),
        )
        .await;
    assert_eq!(status, 400, "{bad}");
    // The agent's next call brings the browser back.
    let (page, error) = watched
        .client
        .call("browser_open", json!({ "url": pages.url("basic.html") }))
        .await;
    assert!(!error, "{page}");
    watched.client.finish().await;
}

/// DATA-4, PROTO-10: signing out of everything wipes the profile only with the person's
/// confirmation; without it nothing is wiped.
#[tokio::test(flavor = "multi_thread")]
async fn proto_10_sign_out_wipes_only_when_confirmed() {
    let home = tempfile::tempdir().expect("temp home");
    let watched = Watched::start(home.path(), &["--unattended"]).await;
    let mut person = Person::of(&watched).await;
    let marker = mark_profile(home.path());
    for body in [Value::Null, json!({}), json!({ "confirm": "yes" })] {
        let (status, answer) = person.call("POST", "/api/browser/sign-out", body).await;
        assert_eq!(status, 400, "{answer}");
        assert!(
            answer["error"]
                .as_str()
                .is_some_and(|s| s.ends_with("nothing was wiped.")),
            "{answer}"
        );
        assert!(marker.exists());
    }
    let (status, answer) = person
        .call("POST", "/api/browser/sign-out", json!({ "confirm": true }))
        .await;
    assert_eq!(status, 200, "{answer}");
    assert!(!marker.exists());
    watched.client.finish().await;
}

/// LAUNCH-13, PROTO-11, NET-5, DATA-11: the status says what runs and why, idle then
/// running, with the flagged items of local access and the backup manifest.
#[tokio::test(flavor = "multi_thread")]
async fn launch_13_proto_11_status_says_what_runs() {
    let pages = FixtureServer::start().await.expect("fixture server");
    let home = tempfile::tempdir().expect("temp home");
    let mut watched = Watched::start(
        home.path(),
        &["--unattended", "--allow-host", "localhost:3000"],
    )
    .await;
    let mut person = Person::of(&watched).await;
    let (status, idle) = person.call("GET", "/api/browser/status", Value::Null).await;
    assert_eq!(status, 200, "{idle}");
    assert_eq!(idle["state"], "idle", "{idle}");
    assert_eq!(idle["backend"], "local");
    assert_eq!(idle["running"], false);
    let flagged: Vec<(String, String)> = idle["flagged"]
        .as_array()
        .expect("flagged")
        .iter()
        .map(|i| {
            (
                i["id"].as_str().expect("id").to_owned(),
                i["said"].as_str().expect("said").to_owned(),
            )
        })
        .collect();
    assert_eq!(flagged[0].0, "browser-allow-localhost", "{idle}");
    assert_eq!(flagged[1].0, "browser-allow-host", "{idle}");
    assert!(flagged[1].1.contains("localhost:3000"), "{idle}");
    let classes: Vec<(String, String)> = idle["backup"]["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            (
                f["file"].as_str().expect("file").to_owned(),
                f["class"].as_str().expect("class").to_owned(),
            )
        })
        .collect();
    assert!(
        classes.contains(&("browser.secrets.json".to_owned(), "secret".to_owned())),
        "{classes:?}"
    );
    assert!(
        classes.contains(&("browser.json".to_owned(), "ordinary".to_owned())),
        "{classes:?}"
    );
    assert_eq!(idle["backup"]["powers"], json!([]));
    // Where the device key is (BE-3): said in the status and as a health item. The test's
    // gateway has no session bus of its own, so no keychain answers: the key file.
    let device_key = &idle["deviceKey"];
    let key_file = home.path().join("device.key");
    let key_item = idle["health"]
        .as_array()
        .expect("health")
        .iter()
        .find(|i| i["id"] == "browser-device-key")
        .unwrap_or_else(|| panic!("no device key item: {idle}"));
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
        assert_eq!(device_key["place"], "file", "{idle}");
        let said = device_key["said"].as_str().expect("said");
        assert!(said.contains(&key_file.display().to_string()), "{idle}");
        assert!(
            key_item["said"]
                .as_str()
                .expect("said")
                .starts_with("Keys are protected by file permissions only"),
            "{idle}"
        );
        assert!(key_file.exists(), "{idle}");
    } else {
        assert!(
            ["file", "keychain"].contains(&device_key["place"].as_str().expect("place")),
            "{idle}"
        );
    }
    let (page, error) = watched
        .client
        .call("browser_open", json!({ "url": pages.url("basic.html") }))
        .await;
    assert!(!error, "{page}");
    let (status, running) = person.call("GET", "/api/browser/status", Value::Null).await;
    assert_eq!(status, 200);
    assert_eq!(running["state"], "running", "{running}");
    assert!(running["version"].as_str().is_some(), "{running}");
    assert!(running["executable"].as_str().is_some(), "{running}");
    assert_eq!(running["health"][0]["id"], "browser-backend");
    assert_eq!(running["health"][0]["ok"], true);
    assert!(running["gateway"]["version"].as_str().is_some());
    // The user agent seen is recorded per browser in browser.json (DATA-5).
    let (_, read) = person
        .call("GET", "/api/browser/settings", Value::Null)
        .await;
    let agents = read["userAgents"].as_object().expect("user agents");
    assert_eq!(agents.len(), 1, "{read}");
    watched.client.finish().await;
}

/// DATA-5, NET-5: browser.json's allowLocalhost lets the agent open another loopback port
/// without the flag, never the gateway's own; its searchUrl is the one searches use.
#[tokio::test(flavor = "multi_thread")]
async fn data_5_browser_json_is_honoured_at_start() {
    let pages = FixtureServer::start().await.expect("fixture server");
    let home = tempfile::tempdir().expect("temp home");
    seed(
        home.path(),
        json!({ "allowLocalhost": true, "searchUrl": pages.url("basic.html?q=%s") }),
    );
    let mut watched = Watched::start_bare(home.path(), &["--unattended"]).await;
    let mut person = Person::of(&watched).await;
    let (page, error) = watched
        .client
        .call("browser_open", json!({ "url": pages.url("basic.html") }))
        .await;
    assert!(!error, "another loopback port opens: {page}");
    let own = format!("http://127.0.0.1:{}/", watched.port);
    let (blocked, error) = watched
        .client
        .call("browser_open", json!({ "url": own }))
        .await;
    assert!(error, "the gateway's own port stays blocked: {blocked}");
    assert!(!blocked.contains(&watched.port.to_string()), "{blocked}");
    let (searched, error) = watched
        .client
        .call(
            "browser_tabs",
            json!({ "action": "open", "search": "sea shells" }),
        )
        .await;
    assert!(!error, "{searched}");
    assert!(searched.contains("basic.html?q=sea"), "{searched}");
    let (_, read) = person
        .call("GET", "/api/browser/settings", Value::Null)
        .await;
    assert_eq!(read["thisRun"]["allowLocalhost"], true, "{read}");
    watched.client.finish().await;
}

/// BE-16, PROTO-11: with your own Chrome chosen, the status flags `browser-own-chrome`
/// with its one-press fix back to local and the backup power; the fix (PUT local) needs
/// no recent sign-in, and afterwards nothing is flagged.
#[tokio::test(flavor = "multi_thread")]
async fn be_16_own_chrome_is_flagged_with_its_fix_back_to_local() {
    let home = tempfile::tempdir().expect("temp home");
    // Nothing of the person's own Chrome is here: reaching it fails, and Conch falls back.
    let chrome = tempfile::tempdir().expect("an empty Chrome folder");
    seed(home.path(), json!({ "backend": "chrome" }));
    let watched = Watched::start_with(
        home.path(),
        &["--unattended"],
        &[("CONCH_CHROME_PROFILE", chrome.path())],
    )
    .await;
    let mut person = Person::of(&watched).await;
    let (status, health) = person.call("GET", "/api/browser/status", Value::Null).await;
    assert_eq!(status, 200, "{health}");
    let own = health["flagged"]
        .as_array()
        .expect("flagged")
        .iter()
        .find(|i| i["id"] == "browser-own-chrome")
        .unwrap_or_else(|| panic!("no browser-own-chrome item: {health}"))
        .clone();
    assert_eq!(own["fix"], "browser-own-chrome-off");
    assert!(
        own["said"]
            .as_str()
            .is_some_and(|s| s.contains("with your real account")),
        "{own}"
    );
    assert_eq!(health["backup"]["powers"], json!(["browser-own-chrome"]));
    let (status, answer) = person
        .call("PUT", "/api/browser/backend", json!({ "backend": "local" }))
        .await;
    assert_eq!(status, 200, "{answer}");
    let (_, health) = person.call("GET", "/api/browser/status", Value::Null).await;
    // Only the key file is left flagged (DATA-6: this machine has no keychain).
    let flagged: Vec<&Value> = health["flagged"]
        .as_array()
        .expect("flagged")
        .iter()
        .filter(|i| i["id"] != "browser-device-key")
        .collect();
    assert!(flagged.is_empty(), "{health}");
    assert_eq!(health["backup"]["powers"], json!([]));
    assert_eq!(health["chosen"], "local");
    watched.client.finish().await;
}

/// AMB-2, BE-2: a signed-in person asks for a new sign-in link; it is printed on standard
/// error, never sent back, and opening it signs in (recently) without a restart.
#[tokio::test(flavor = "multi_thread")]
async fn amb_2_a_new_sign_in_link_is_printed_not_sent() {
    let home = tempfile::tempdir().expect("temp home");
    let mut watched = Watched::start(home.path(), &["--unattended"]).await;
    let mut person = Person::of(&watched).await;
    let (status, answer) = person
        .call("POST", "/api/browser/sign-in-again", Value::Null)
        .await;
    assert_eq!(status, 200, "{answer}");
    assert!(!answer.to_string().contains("code="), "{answer}");
    let line = crate::live::wait_for_line(&mut watched.stderr, "sign in again at ").await;
    let link = line.split("sign in again at ").nth(1).expect("a link");
    let path = link
        .strip_prefix(&format!("http://127.0.0.1:{}", watched.port))
        .unwrap_or_else(|| panic!("a link to the door: {link}"));
    let (status, head, _) = door_request(watched.port, "GET", path, &[], "").await;
    assert_eq!(status, 303, "{head}");
    assert!(head.contains("set-cookie: conch_session_"), "{head}");
    // The link is one-time, and the first session still works.
    let (status, _, _) = door_request(watched.port, "GET", path, &[], "").await;
    assert_eq!(status, 403);
    let (status, _) = person.call("GET", "/api/browser/status", Value::Null).await;
    assert_eq!(status, 200);
    watched.client.finish().await;
}

/// Issue 32 (BE-2, BE-3, AMB-1): a pool is chosen with PUT (`endpoints`, `perEndpoint`),
/// after a recent sign-in like any remote backend; the settings show each address's host
/// only, never a token, and state word for word what cannot be enforced on a pool.
#[tokio::test(flavor = "multi_thread")]
async fn be_3_a_pool_chosen_with_put_shows_hosts_only_and_its_residual_risk() {
    const CANARY: &str = "CANARYp00l5e1";
    const POOL_RISK: &str = "On a pool of remote browsers, Conch's proxy cannot stand in front of them: Conch judges each request and WebSocket through DevTools alone, and what it cannot enforce there is this: site names are resolved by the remote machines, whose network may answer with an address on their own network; traffic outside what DevTools intercepts (a bare connection opened before Conch refuses it, WebRTC, the browser's own background requests) is not seen; and the machines of the pool, and whoever runs them, see every page each conversation opens.";
    let home = tempfile::tempdir().expect("temp home");
    let watched = Watched::start(home.path(), &["--unattended"]).await;
    let mut person = Person::of(&watched).await;
    let (status, answer) = person
        .call(
            "PUT",
            "/api/browser/backend",
            json!({
                "backend": "pool",
                "endpoints": [format!("ws://127.0.0.1:1/?token={CANARY}"), "http://127.0.0.1:2"],
                "perEndpoint": 2,
            }),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["backend"]["kind"], "pool");
    assert_eq!(
        answer["backend"]["hosts"],
        json!(["127.0.0.1:1", "127.0.0.1:2"]),
        "{answer}"
    );
    assert_eq!(answer["statements"]["pool"], POOL_RISK);
    let (status, read) = person
        .call("GET", "/api/browser/settings", Value::Null)
        .await;
    assert_eq!(status, 200);
    assert_eq!(read["statements"]["pool"], POOL_RISK);
    // No endpoint: a sentence, nothing changed.
    let (status, refused) = person
        .call(
            "PUT",
            "/api/browser/backend",
            json!({ "backend": "pool", "endpoints": [] }),
        )
        .await;
    assert_eq!(status, 400, "{refused}");
    for text in [answer.to_string(), read.to_string(), refused.to_string()] {
        assert!(!text.contains(CANARY), "{text}");
    }
    for (path, bytes) in crate::backend::everything_in(home.path()) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(CANARY),
            "{} holds the token in plain text",
            path.display()
        );
    }
    watched.client.finish().await;
}
