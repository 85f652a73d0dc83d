//! The settings page in a real browser (issue 16): the person, signed in, follows the
//! panel's navigation to Settings, changes a setting, revokes a site and runs Repair;
//! axe-core checks each state (PROTO-10, PERM-7, LAUNCH-14, HS-9, NET-12, BE-17).

use serde_json::{Value, json};

use crate::panel_browser::Session;

/// browser.json in `home`.
fn settings(home: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(home.join("browser.json")).expect("browser.json");
    serde_json::from_str(&text).expect("JSON")
}

/// PROTO-10, PERM-7, LAUNCH-14, HS-9, NET-12, BE-17: the settings page states the risks,
/// saves a change, revokes a site, runs Repair (keeping the profile on No) and signs out
/// of everything only on the person's yes, with no axe-core violation in any state.
#[tokio::test(flavor = "multi_thread")]
async fn proto_10_the_settings_page_changes_revokes_and_repairs() {
    let home = tempfile::tempdir().expect("a temp home");
    std::fs::write(
        home.path().join("browser.json"),
        json!({ "format": 1, "sites": ["news.example", "shop.example"] }).to_string(),
    )
    .expect("browser.json");
    let profile = home.path().join("browser").join("profile");
    std::fs::create_dir_all(&profile).expect("profile");
    let marker = profile.join("conch-test-marker");
    std::fs::write(&marker, b"signed in somewhere").expect("marker");
    let session = Session::start_in(home, &["--unattended"]).await;
    let home = session.home.path().to_owned();
    session.sign_in().await;
    session.click("a[href='/panel/settings.html']").await;
    session
        .wait_until(
            "document.body.dataset.ready === '1'",
            "the settings and status to load",
        )
        .await;
    let text = session.body_text().await;
    for words in [
        "hardened, not sandboxed",
        "A site you approved can still steer the agent within that site.",
        "with your real account",
        "shop.example",
        "Conch drives Conch's own browser.",
    ] {
        assert!(
            text.contains(words),
            "{words:?} is not on the page:\n{text}"
        );
    }
    session
        .person
        .assert_accessible("on the settings page")
        .await;

    // Change a setting.
    session.click("#allow-localhost").await;
    session.click("#local-form button[type='submit']").await;
    session
        .wait_until(
            "document.getElementById('outcome').textContent.startsWith('Saved.')",
            "the change to be saved",
        )
        .await;
    assert_eq!(settings(&home)["allowLocalhost"], true);

    // Revoke a site.
    session
        .click("button[aria-label='Revoke shop.example']")
        .await;
    session
        .wait_until(
            "document.getElementById('outcome').textContent.includes('no longer always allowed')",
            "the site to be revoked",
        )
        .await;
    assert_eq!(settings(&home)["sites"], json!(["news.example"]));
    session
        .wait_until(
            "!document.querySelector(\"button[aria-label='Revoke shop.example']\")",
            "the site to leave the list",
        )
        .await;
    session
        .person
        .assert_accessible("after revoking a site")
        .await;

    // Run Repair, keeping the profile.
    session.click("#repair").await;
    session
        .wait_until(
            "document.getElementById('confirm').open",
            "the repair question",
        )
        .await;
    session
        .person
        .assert_accessible("with the repair question open")
        .await;
    session.click("#confirm-no").await;
    session
        .wait_until(
            "document.querySelectorAll('#repair-steps li').length === 5",
            "the repair's five steps",
        )
        .await;
    let steps = session
        .js("return [...document.querySelectorAll('#repair-steps li')].map(li => li.textContent)")
        .await;
    let last = steps[4].as_str().expect("a step");
    assert!(last.starts_with("Wipe the profile (skipped)"), "{steps}");
    assert!(marker.exists(), "No keeps the profile");
    session
        .wait_until(
            "document.getElementById('outcome').textContent.startsWith('Repair finished')",
            "the repair's outcome",
        )
        .await;
    session.person.assert_accessible("after a repair").await;

    // Sign out of everything: the question starts on Cancel, so Enter never wipes;
    // Cancel wipes nothing, and the yes wipes the profile.
    session.click("#sign-out").await;
    session
        .wait_until(
            "document.getElementById('confirm').open",
            "the sign-out question",
        )
        .await;
    let focused = session.js("return document.activeElement.id").await;
    assert_eq!(focused, json!("confirm-cancel"));
    session.click("#confirm-cancel").await;
    session
        .wait_until(
            "document.getElementById('outcome').textContent === 'Nothing was wiped.'",
            "the cancel to be said",
        )
        .await;
    assert!(marker.exists(), "Cancel wipes nothing");
    session.click("#sign-out").await;
    session
        .wait_until(
            "document.getElementById('confirm').open",
            "the sign-out question",
        )
        .await;
    session.click("#confirm-yes").await;
    session
        .wait_until(
            "document.getElementById('outcome').textContent.startsWith('Signed out of everything')",
            "the sign-out to be said",
        )
        .await;
    assert!(!marker.exists(), "the yes wipes the profile");
    session.person.assert_accessible("after signing out").await;
    session.finish().await;
}
