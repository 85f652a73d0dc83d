//! `browser.json` and `browser/tabs.json`: round trips, forward compatibility, corrupt files
//! set aside, and atomic writes (DATA-5, DATA-9, TAB-2).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use conch_browser::store::{
    Backend, BrowserSettings, ConversationTabs, CorruptReason, SavedTab, StoreOp, TabsFile,
};
use conch_browser::{Home, ManualClock};
use serde_json::Value;

/// 2026-11-29 23:05:01 UTC.
const NOW: u64 = 1_795_993_501;
const STAMP: &str = "20261129T230501Z";

fn temp_home() -> (tempfile::TempDir, Home) {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = Home::new(dir.path());
    home.ensure().expect("ensure");
    (dir, home)
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json")
}

fn some_settings() -> BrowserSettings {
    let mut settings = BrowserSettings {
        backend: Backend::Steel,
        decline_cookie_banners: false,
        allow_localhost: true,
        allow_hosts: vec!["127.0.0.1:8080".to_owned(), "localhost:3000".to_owned()],
        search_url: "https://search.example/?q=%s".to_owned(),
        ..BrowserSettings::default()
    };
    settings.allow_site("booking.com");
    settings.allow_site("alice.github.io");
    settings.user_agents.insert(
        "Chromium 156".to_owned(),
        "Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/156.0.0.0".to_owned(),
    );
    settings
}

fn some_tabs() -> TabsFile {
    let mut file = TabsFile::default();
    let conv = file.conversation_mut("conv-a");
    let first = conv.allocate_id();
    let second = conv.allocate_id();
    conv.tabs.push(SavedTab {
        id: first.clone(),
        url: "http://127.0.0.1:9/basic.html".to_owned(),
        title: "Basic".to_owned(),
        opener: None,
        last_used: 3,
    });
    conv.tabs.push(SavedTab {
        id: second.clone(),
        url: "http://127.0.0.1:9/tabs-a.html".to_owned(),
        title: "Tabs A".to_owned(),
        opener: Some(first),
        last_used: 4,
    });
    conv.active = Some(second);
    file.conversation_mut("conv-b").allocate_id();
    file
}

/// DATA-5: a fresh home reads as the defaults: local, banners declined, no localhost.
#[test]
fn data_5_missing_file_gives_defaults() {
    let (_dir, home) = temp_home();
    let clock = ManualClock::at_unix(NOW);
    let loaded = BrowserSettings::load(&home, &clock).expect("load");
    assert_eq!(loaded.set_aside, None);
    let settings = loaded.value;
    assert_eq!(settings, BrowserSettings::default());
    assert_eq!(settings.backend, Backend::Local);
    assert!(settings.decline_cookie_banners);
    assert!(!settings.allow_localhost);
    assert_eq!(settings.search_url, "https://duckduckgo.com/?q=%s");
    assert!(!home.settings_file().exists(), "loading writes nothing");
}

/// DATA-5: save then load gives back the same settings, as versioned camelCase JSON.
#[test]
fn data_5_settings_round_trip() {
    let (_dir, home) = temp_home();
    let clock = ManualClock::at_unix(NOW);
    let settings = some_settings();
    settings.save(&home).expect("save");
    let loaded = BrowserSettings::load(&home, &clock).expect("load");
    assert_eq!(loaded.set_aside, None);
    assert_eq!(loaded.value, settings);

    let on_disk = json(&home.settings_file());
    assert_eq!(on_disk["format"], 1);
    assert_eq!(on_disk["backend"], "steel");
    assert_eq!(on_disk["declineCookieBanners"], false);
    assert_eq!(on_disk["allowLocalhost"], true);
    assert_eq!(
        on_disk["allowHosts"],
        serde_json::json!(["127.0.0.1:8080", "localhost:3000"])
    );
    assert_eq!(on_disk["searchUrl"], "https://search.example/?q=%s");
    assert_eq!(
        on_disk["sites"],
        serde_json::json!(["alice.github.io", "booking.com"])
    );
    assert!(on_disk["userAgents"]["Chromium 156"].is_string());
}

/// DATA-5: browser.json has no place for a backend key or address. A canary written into
/// it by hand (or by a buggy build) is ignored when read and gone after the next save, and
/// the file's keys are exactly the settings.
#[test]
fn data_5_no_backend_key_ever_lands_in_browser_json() {
    let (_dir, home) = temp_home();
    let clock = ManualClock::at_unix(NOW);
    std::fs::write(
        home.settings_file(),
        br#"{"format": 1, "backend": "browserbase", "apiKey": "CANARY-KEY-5be1",
            "cdpUrl": "ws://10.9.8.7:9222/CANARY-ADDRESS", "futureSetting": {"x": 1}}"#,
    )
    .expect("seed");
    let loaded = BrowserSettings::load(&home, &clock).expect("load");
    assert_eq!(loaded.set_aside, None, "unknown fields are not corruption");
    assert_eq!(loaded.value.backend, Backend::Browserbase);
    loaded.value.save(&home).expect("save");

    let text = std::fs::read_to_string(home.settings_file()).expect("read");
    assert!(!text.contains("CANARY"), "{text}");
    let Value::Object(fields) = json(&home.settings_file()) else {
        panic!("browser.json is an object");
    };
    let keys: Vec<&str> = fields.keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "allowHosts",
            "allowLocalhost",
            "backend",
            "declineCookieBanners",
            "format",
            "searchUrl",
            "sites",
            "userAgents"
        ]
    );
}

/// DATA-5: always-allowed sites are kept sorted and without repeats.
#[test]
fn data_5_sites_are_sorted_and_deduplicated() {
    let (_dir, home) = temp_home();
    let clock = ManualClock::at_unix(NOW);
    std::fs::write(
        home.settings_file(),
        br#"{"format": 1, "sites": ["zeta.com", "booking.com", "zeta.com"]}"#,
    )
    .expect("seed");
    let mut settings = BrowserSettings::load(&home, &clock).expect("load").value;
    assert!(!settings.allow_site("booking.com"));
    assert!(settings.allow_site("alpha.org"));
    assert!(settings.revoke_site("zeta.com"));
    assert!(settings.is_site_allowed("alpha.org"));
    settings.save(&home).expect("save");
    assert_eq!(
        json(&home.settings_file())["sites"],
        serde_json::json!(["alpha.org", "booking.com"])
    );
}

/// DATA-9: every conversation's tabs (id, URL, title, opener, last-used order, active tab
/// and next number) survive a save and a load.
#[test]
fn data_9_tabs_round_trip() {
    let (_dir, home) = temp_home();
    let clock = ManualClock::at_unix(NOW);
    assert_eq!(
        TabsFile::load(&home, &clock).expect("empty").value,
        TabsFile::default()
    );
    let tabs = some_tabs();
    tabs.save(&home).expect("save");
    let loaded = TabsFile::load(&home, &clock).expect("load");
    assert_eq!(loaded.set_aside, None);
    assert_eq!(loaded.value, tabs);

    let on_disk = json(&home.tabs_file());
    assert_eq!(on_disk["format"], 1);
    let conv = &on_disk["conversations"]["conv-a"];
    assert_eq!(conv["active"], "t2");
    assert_eq!(conv["nextTab"], 3);
    assert_eq!(conv["tabs"][1]["opener"], "t1");
    assert_eq!(conv["tabs"][1]["lastUsed"], 4);
    assert_eq!(conv["tabs"][0]["url"], "http://127.0.0.1:9/basic.html");

    // Closing a tab and rewriting removes it from the file.
    let mut tabs = loaded.value;
    tabs.conversation_mut("conv-a")
        .tabs
        .retain(|t| t.id != "t1");
    tabs.save(&home).expect("save");
    let again = TabsFile::load(&home, &clock).expect("load").value;
    let ids: Vec<&str> = again
        .conversation("conv-a")
        .expect("conv-a")
        .tabs
        .iter()
        .map(|t| t.id.as_str())
        .collect();
    assert_eq!(ids, ["t2"]);
    assert!(again.conversation("conv-b").is_some());
}

/// TAB-2: after a restart, ids go on from the file, never reusing one; a hand-edited file
/// whose next number lags behind its ids is corrected.
#[test]
fn tab_2_ids_continue_after_a_reload() {
    let (_dir, home) = temp_home();
    let clock = ManualClock::at_unix(NOW);
    std::fs::write(
        home.tabs_file(),
        br#"{"format": 1, "conversations": {"c": {"tabs": [
            {"id": "t5", "url": "about:blank"}], "active": "t5", "nextTab": 2}}}"#,
    )
    .expect("seed");
    let mut file = TabsFile::load(&home, &clock).expect("load").value;
    let conv: &mut ConversationTabs = file.conversation_mut("c");
    assert_eq!(conv.tab("t5").map(|t| t.title.as_str()), Some(""));
    assert_eq!(conv.allocate_id(), "t6");
    assert_eq!(file.forget("c").map(|c| c.next_tab), Some(7));
}

/// The corrupt-file rule for one file: garbage is set aside under the clock's stamp with
/// its bytes intact, reported, and replaced by the defaults.
fn check_set_aside<T: PartialEq + Default + std::fmt::Debug>(
    path: &Path,
    bytes: &[u8],
    load: impl Fn(&ManualClock) -> conch_browser::store::Loaded<T>,
) -> CorruptReason {
    std::fs::write(path, bytes).expect("seed");
    let clock = ManualClock::at_unix(NOW);
    let loaded = load(&clock);
    assert_eq!(loaded.value, T::default());
    let report = loaded.set_aside.expect("a set-aside report");
    assert_eq!(report.original, path);
    let mut expected = path.as_os_str().to_owned();
    expected.push(format!(".corrupt-{STAMP}"));
    assert_eq!(report.moved_to.as_os_str(), expected);
    assert_eq!(
        std::fs::read(&report.moved_to).expect("the bytes survive"),
        bytes
    );
    assert!(
        !path.exists(),
        "the corrupt file no longer stands in the way"
    );
    let said = report.to_string();
    assert!(said.contains(&*report.moved_to.to_string_lossy()), "{said}");
    report.reason
}

/// DATA-5: a browser.json of garbage bytes is set aside and reported; defaults are used.
#[test]
fn data_5_corrupt_settings_are_set_aside() {
    let (_dir, home) = temp_home();
    let path = home.settings_file();
    let load = |clock: &ManualClock| BrowserSettings::load(&home, clock).expect("load");
    let reason = check_set_aside(&path, b"\x00\xffnot json{{", load);
    assert!(
        matches!(reason, CorruptReason::NotJson { line: 1, .. }),
        "{reason:?}"
    );
    std::fs::remove_file(path.with_file_name(format!("browser.json.corrupt-{STAMP}")))
        .expect("clear");
    let reason = check_set_aside(&path, br#"{"format": 1, "backend": 7}"#, load);
    assert!(
        matches!(reason, CorruptReason::WrongShape { .. }),
        "{reason:?}"
    );
}

/// DATA-5, DATA-9: a file from a newer Conch (a format this build does not know) is set
/// aside rather than misread.
#[test]
fn data_9_future_format_is_set_aside() {
    let (_dir, home) = temp_home();
    let bytes = br#"{"format": 2, "conversations": {}, "somethingNew": true}"#;
    let reason = check_set_aside(&home.tabs_file(), bytes, |clock| {
        TabsFile::load(&home, clock).expect("load")
    });
    assert_eq!(reason, CorruptReason::NewerFormat { found: 2, known: 1 });
    let reason = check_set_aside(&home.settings_file(), br#"{"format": 99}"#, |clock| {
        BrowserSettings::load(&home, clock).expect("load")
    });
    assert_eq!(
        reason,
        CorruptReason::NewerFormat {
            found: 99,
            known: 1
        }
    );
}

/// DATA-9: tabs.json of garbage, of the wrong shape, or without a format is set aside.
#[test]
fn data_9_corrupt_tabs_are_set_aside() {
    let (_dir, home) = temp_home();
    let load = |clock: &ManualClock| TabsFile::load(&home, clock).expect("load");
    let path = home.tabs_file();
    assert!(matches!(
        check_set_aside(&path, b"", load),
        CorruptReason::NotJson { .. }
    ));
    std::fs::remove_file(path.with_file_name(format!("tabs.json.corrupt-{STAMP}"))).expect("clear");
    assert!(matches!(
        check_set_aside(
            &path,
            br#"{"format": 1, "conversations": {"c": {"tabs": "t1"}}}"#,
            load
        ),
        CorruptReason::WrongShape { .. }
    ));
    std::fs::remove_file(path.with_file_name(format!("tabs.json.corrupt-{STAMP}"))).expect("clear");
    assert_eq!(
        check_set_aside(&path, br#"{"conversations": {}}"#, load),
        CorruptReason::NoFormat
    );
}

/// Atomic writes: a write that cannot happen (the folder is a file) is a typed error naming
/// the path, and the files already there are untouched, with no debris left.
#[test]
fn failed_write_leaves_the_old_file_intact() {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = Home::new(dir.path());
    let settings = some_settings();
    settings.save(&home).expect("first save");
    let before = std::fs::read(home.settings_file()).expect("read");
    // `browser/` is a file, so `browser/tabs.json` cannot be written.
    std::fs::write(home.browser_dir(), b"not a folder").expect("block");
    let err = some_tabs().save(&home).expect_err("cannot write");
    assert_eq!(err.op(), StoreOp::Write);
    assert_eq!(err.path(), home.tabs_file());
    assert!(err.to_string().starts_with("write "), "{err}");

    // A settings save that fails on encoding-independent grounds: the target is a folder.
    let blocked = dir.path().join("blocked.json");
    std::fs::create_dir(&blocked).expect("folder");
    std::fs::write(blocked.join("inside"), b"x").expect("non-empty");
    let err = settings
        .save_to(&blocked)
        .expect_err("a folder stands there");
    assert_eq!(err.op(), StoreOp::Write);

    assert_eq!(std::fs::read(home.settings_file()).expect("read"), before);
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["blocked.json", "browser", "browser.json"]);
}

/// Atomic writes: a reader racing a stream of saves only ever sees a whole file, the old
/// one or the new one (a truncate-then-write save would show it half-written).
#[test]
fn readers_never_see_a_half_written_file() {
    let (_dir, home) = temp_home();
    let clock = ManualClock::at_unix(NOW);
    let big = |marker: &str| BrowserSettings {
        user_agents: (0..4_000)
            .map(|i| {
                (
                    format!("browser {i:05}"),
                    format!("{marker} {}", "x".repeat(64)),
                )
            })
            .collect::<BTreeMap<_, _>>(),
        ..BrowserSettings::default()
    };
    let (a, b) = (big("A"), big("B"));
    a.save(&home).expect("seed");
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let done = Arc::clone(&done);
        let path = home.settings_file();
        let (a, b) = (a.clone(), b.clone());
        std::thread::spawn(move || {
            let mut reads = 0u32;
            while !done.load(Ordering::Relaxed) || reads < 50 {
                let loaded = BrowserSettings::load_from(&path, &clock).expect("load");
                assert_eq!(loaded.set_aside, None, "read a partial file");
                assert!(loaded.value == a || loaded.value == b);
                reads += 1;
            }
            reads
        })
    };
    for round in 0..40 {
        if round % 2 == 0 { &b } else { &a }
            .save(&home)
            .expect("save");
    }
    done.store(true, Ordering::Relaxed);
    let reads = reader.join().expect("reader saw only whole files");
    assert!(reads >= 50);
}
