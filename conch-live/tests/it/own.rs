//! A browser of its own for a chat, from the live view (LIVE-16, ERR-23): the session
//! command switches it, its answer and the view's tabs carry the reason and the sites
//! lent, and a task can't be given the main browser.

use std::time::Duration;

use conch_browser::ConversationKind;
use conch_browser::protocol::BrowserTab;
use conch_browser::store::BrowserSettings;
use conch_live::{Event, SESSION_TASK};
use serde_json::json;

use crate::support::{cmd, lab, next_event};

/// The one `tabs` event of `answer`.
fn tabs_of(answer: &[Event]) -> BrowserTab {
    match answer {
        [Event::Tabs(tab)] => tab.clone(),
        other => panic!("not one tabs event: {other:?}"),
    }
}

/// ERR-23, LIVE-16: `own: true` is answered with the chat's tabs, whose session says
/// `own` (its main tab closed); once the chat browses there, the view's tabs carry the
/// site lent to it (shop.test, always allowed) and show its new tab. `own: false` is
/// answered with no session; a task is never given the main browser.
#[tokio::test(flavor = "multi_thread")]
async fn err_23_the_tab_carries_its_own_browser_reason_and_lent_sites() {
    let lab = lab().await;
    let mut settings = BrowserSettings::default();
    settings.allow_site("shop.test");
    settings
        .save(&lab.browser.config().home)
        .expect("browser.json");
    let _main = lab.open("mine", "live.html").await;
    let (mut feed, control) = lab.hub.join("mine");

    let tab = tabs_of(
        &control
            .command(&cmd(&json!({"type": "session", "own": true})))
            .await,
    );
    let session = tab.session.expect("its own browser");
    assert_eq!(session.reason, "own");
    assert!(tab.tabs.is_empty(), "its main tab closed: {:?}", tab.tabs);
    assert!(lab.browser.has_own_browser("mine"));

    lab.browser
        .conversation("mine")
        .open(&format!("{}live.html", lab.base))
        .await
        .expect("the chat browses in its own browser");
    let shown = next_event(&mut feed, Duration::from_secs(10), |event| match event {
        Event::Tabs(tab)
            if tab.tabs.len() == 1
                && tab
                    .session
                    .as_ref()
                    .is_some_and(|s| s.reason == "own" && s.sites == ["shop.test"]) =>
        {
            Some(())
        }
        _ => None,
    })
    .await;
    assert!(
        shown.is_some(),
        "the view shows the own browser's tab and lent site"
    );

    let back = tabs_of(
        &control
            .command(&cmd(&json!({"type": "session", "own": false})))
            .await,
    );
    assert_eq!(back.session, None, "back in the main context");
    assert!(back.tabs.is_empty(), "its own browser's tab closed");
    assert!(!lab.browser.has_own_browser("mine"));
    assert_eq!(lab.browser.errands_open().await, 0);

    lab.browser.set_kind("job", ConversationKind::Task);
    let (_task_feed, task) = lab.hub.join("job");
    assert_eq!(
        task.command(&cmd(&json!({"type": "session", "own": false})))
            .await,
        vec![Event::Error {
            message: SESSION_TASK.to_owned()
        }]
    );
    let kept = tabs_of(
        &task
            .command(&cmd(&json!({"type": "session", "own": true})))
            .await,
    );
    assert_eq!(kept.session.map(|s| s.reason).as_deref(), Some("task"));
    lab.browser.shutdown().await;
}
