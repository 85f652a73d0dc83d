//! The person's side of a conversation placed on a pool of remote browsers (issue 32):
//! the live view shows its frames, the person takes over and types, the idle let-go
//! (BE-5) never takes the place from under the person's hands, a handoff or the agent's
//! call, and an address that dies while the person holds the wheel is told to them and
//! reopened elsewhere with the wheel still theirs (BE-4).
//!
//! The pool's addresses are plain headless Chromiums with DevTools ports; the runtime's
//! own local browser can't start, so every page is the pool's.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use conch_browser::discover::FolderProbe;
use conch_browser::handoff::{HandoffEnd, hand_off};
use conch_browser::protocol::{BrowserEvent, EventSink};
use conch_browser::remote::Remote;
use conch_browser::{Conversation, ManualClock};
use conch_fixtures::browser::Standalone;
use conch_live::Event;
use serde_json::json;

use crate::support::{Lab, cmd, eval, eventually, lab_with, next_event, next_frame};

/// The `browser.status` sentences the runtime sent, by conversation.
#[derive(Debug, Default)]
struct Heard(Mutex<Vec<(String, bool, String)>>);

impl EventSink for Heard {
    fn send(&self, conversation: &str, event: BrowserEvent) {
        if let BrowserEvent::Status(status) = event {
            self.0.lock().expect("heard").push((
                conversation.to_owned(),
                status.running,
                status.message,
            ));
        }
    }
}

impl Heard {
    /// What conversation `id` was told, with whether the browser ran.
    fn of(&self, id: &str) -> Vec<(bool, String)> {
        self.0
            .lock()
            .expect("heard")
            .iter()
            .filter(|(c, _, _)| c == id)
            .map(|(_, running, message)| (*running, message.clone()))
            .collect()
    }
}

/// A lab on a pool of `endpoints` (at most 4 conversations each), its clock and what its
/// runtime told the live side.
async fn pool_lab(endpoints: &[&Standalone]) -> (Lab, Arc<ManualClock>, Arc<Heard>) {
    let clock = Arc::new(ManualClock::new(
        std::time::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
    ));
    let heard = Arc::new(Heard::default());
    let addresses: Vec<String> = endpoints.iter().map(|e| e.http()).collect();
    let (given_clock, given_heard) = (Arc::clone(&clock), Arc::clone(&heard));
    let empty = tempfile::tempdir().expect("temp dir");
    let no_browsers = empty.path().to_owned();
    let lab = lab_with(move |config| {
        config.remote = Some(Remote::Pool {
            endpoints: addresses,
            per_endpoint: 4,
        });
        config.probe = Arc::new(FolderProbe { dir: no_browsers });
        config.clock = given_clock;
        config.events = Some(given_heard);
        config.pool_wait = Duration::from_secs(5);
    })
    .await;
    // The probe's folder is only looked into, never written: it may go now.
    drop(empty);
    (lab, clock, heard)
}

/// The note field's value, read by the agent's side.
async fn note(chat: &Conversation) -> serde_json::Value {
    eval(chat, "document.getElementById('note').value").await
}

/// Issue 32 (BE-5, LAUNCH-12, HAND-8, LIVE-1): on a pool, the live view shows the
/// conversation's frames; the person takes over and types; ten idle minutes pass while
/// they hold the wheel, and the place is kept; they hand back and close the panel, and
/// the idle time starts then, not at the agent's last step: the agent carries on in the
/// same tab, the person's text still there. Ten idle minutes later the place is let go.
#[tokio::test(flavor = "multi_thread")]
async fn be_5_on_a_pool_the_person_at_the_wheel_keeps_the_place_and_the_agent_carries_on() {
    let a = Standalone::start().expect("a standalone Chromium");
    let (lab, clock, _) = pool_lab(&[&a]).await;
    let chat = lab.open("p", "live.html").await;
    assert_eq!(lab.browser.pid().await, None, "Conch launched a browser");
    let tab = chat.tabs_now().await;
    eval(&chat, "document.getElementById('note').focus(); true").await;
    let (mut feed, control) = lab.hub.join("p");
    assert!(
        next_frame(&mut feed, Duration::from_secs(10))
            .await
            .is_some(),
        "the live view shows no frame of the pool's page"
    );
    control.command(&cmd(&json!({"type": "takeover"}))).await;
    control
        .command(&cmd(
            &json!({"type": "text", "text": "typed by the person"}),
        ))
        .await;
    let typed = eventually(Duration::from_secs(5), || async {
        note(&chat).await == json!("typed by the person")
    })
    .await;
    assert!(typed, "the person's typing never reached the pool's page");

    // Ten idle minutes with the person at the wheel: the place is kept.
    clock.advance(Duration::from_secs(11 * 60));
    lab.browser.tick().await;
    assert!(
        !chat.pages_now().await.is_empty(),
        "let go under the person"
    );

    // They hand back and close the panel: the idle time starts now.
    control.command(&cmd(&json!({"type": "handback"}))).await;
    drop((feed, control));
    tokio::time::sleep(Duration::from_millis(200)).await;
    lab.browser.tick().await;
    assert!(
        !chat.pages_now().await.is_empty(),
        "let go at once after the person handed back"
    );
    // The agent carries on in the same tab, as the person left it.
    assert_eq!(note(&chat).await, json!("typed by the person"));
    assert_eq!(chat.tabs_now().await, tab);

    // Ten idle minutes after that, the place is let go.
    clock.advance(Duration::from_secs(11 * 60));
    lab.browser.tick().await;
    assert!(chat.pages_now().await.is_empty(), "never let go");
    lab.browser.shutdown().await;
}

/// Issue 32 (BE-5, HAND-1): on a pool, a handoff waiting for a person who has not opened
/// the panel yet keeps the place through the idle time; the person comes, types and
/// presses I'm done, and the handoff ends on the same page.
#[tokio::test(flavor = "multi_thread")]
async fn be_5_on_a_pool_a_waiting_handoff_keeps_the_place() {
    let a = Standalone::start().expect("a standalone Chromium");
    let (lab, clock, _) = pool_lab(&[&a]).await;
    let chat = lab.open("h", "live.html").await;
    eval(&chat, "document.getElementById('note').focus(); true").await;
    let handoff = tokio::spawn({
        let chat = chat.clone();
        async move { hand_off(&chat, "Type the note", Duration::from_millis(250)).await }
    });
    let opened = eventually(Duration::from_secs(5), || async {
        chat.wheel().state().handoff.is_some()
    })
    .await;
    assert!(opened, "the handoff never opened");
    clock.advance(Duration::from_secs(11 * 60));
    lab.browser.tick().await;
    assert!(
        !chat.pages_now().await.is_empty(),
        "let go while a handoff waited for the person"
    );
    let (_feed, control) = lab.hub.join("h");
    control
        .command(&cmd(&json!({"type": "text", "text": "done by hand"})))
        .await;
    let typed = eventually(Duration::from_secs(5), || async {
        note(&chat).await == json!("done by hand")
    })
    .await;
    assert!(typed, "the person's typing never reached the page");
    control.command(&cmd(&json!({"type": "handback"}))).await;
    let handed = tokio::time::timeout(Duration::from_secs(10), handoff)
        .await
        .expect("I'm done ends the handoff")
        .expect("joined")
        .expect("handed");
    assert_eq!(handed.end, HandoffEnd::Done);
    lab.browser.shutdown().await;
}

/// Issue 32 (BE-4, LIVE-1, HAND-8): the address of a conversation dies while the person
/// holds its wheel. The person is told at once (a `browser.status` the panel shows over
/// the stale frame), the conversation's tabs reopen on the other address without waiting
/// for the agent, the live view shows them, the wheel stays the person's and their
/// typing reaches the reopened page; once they hand back, the agent's next step works
/// there and its result says where the conversation went, once, in one note.
#[tokio::test(flavor = "multi_thread")]
async fn be_4_an_address_dying_under_the_persons_hands_is_told_and_reopened_elsewhere() {
    let a = Standalone::start().expect("a standalone Chromium");
    let b = Standalone::start().expect("a standalone Chromium");
    let (lab, _, heard) = pool_lab(&[&a, &b]).await;
    let chat = lab.open("d", "basic.html").await;
    chat.new_tab(&format!("{}live.html", lab.base))
        .await
        .expect("a second tab");
    let before: Vec<String> = chat.tabs_now().await.into_iter().map(|t| t.url).collect();
    let _ = chat.take_notes().await;
    let (mut feed, control) = lab.hub.join("d");
    assert!(
        next_frame(&mut feed, Duration::from_secs(10))
            .await
            .is_some()
    );
    control.command(&cmd(&json!({"type": "takeover"}))).await;
    let agent = tokio::spawn({
        let wheel = chat.wheel();
        async move { wheel.agents_turn().await }
    });

    drop(a);
    let told = eventually(Duration::from_secs(20), || async {
        heard
            .of("d")
            .iter()
            // "stopped answering", or "dropped" when the dying browser's port still
            // took a connection as it went: the person is told either way.
            .any(|(running, m)| !running && m.contains("reopening this conversation's tabs"))
    })
    .await;
    assert!(told, "the person was not told: {:?}", heard.of("d"));
    let back = eventually(Duration::from_secs(30), || async {
        chat.pages_now().await.len() == 2
    })
    .await;
    assert!(back, "the tabs did not reopen without the agent");
    let after: Vec<String> = chat.tabs_now().await.into_iter().map(|t| t.url).collect();
    assert_eq!(after, before);
    assert!(
        next_frame(&mut feed, Duration::from_secs(10))
            .await
            .is_some(),
        "the live view shows nothing of the reopened tabs"
    );
    // The wheel is still the person's; the agent still waits.
    assert!(chat.wheel().state().person_drives);
    assert!(
        !agent.is_finished(),
        "the agent acted while the person drove"
    );
    let driver = next_event(&mut feed, Duration::from_millis(500), |e| match e {
        Event::Status { driver, .. } => Some(driver.clone()),
        _ => None,
    })
    .await;
    assert_ne!(
        driver.as_deref(),
        Some("agent"),
        "the wheel went to the agent"
    );
    eval(&chat, "document.getElementById('note').focus(); true").await;
    control
        .command(&cmd(&json!({"type": "text", "text": "after the move"})))
        .await;
    let typed = eventually(Duration::from_secs(5), || async {
        note(&chat).await == json!("after the move")
    })
    .await;
    assert!(typed, "the person's typing never reached the reopened page");

    control.command(&cmd(&json!({"type": "handback"}))).await;
    tokio::time::timeout(Duration::from_secs(5), agent)
        .await
        .expect("hand back frees the agent")
        .expect("joined");
    assert_eq!(eval(&chat, "1 + 1").await, json!(2));
    let notes = chat.take_notes().await;
    // The agent is told its tabs were reopened once, in one note that names where they
    // went (the move is decided when the connection drops, whatever the killed browser's
    // port still does for a moment), not ERR-19's "Reopened a task's browser as it was."
    // besides.
    let told: Vec<&String> = notes
        .iter()
        .filter(|n| n.contains("reopened") || n.contains("Reopened"))
        .collect();
    assert_eq!(told.len(), 1, "{notes:?}");
    assert!(
        told[0].contains(&format!(
            "so this conversation moved to the browser at {}",
            b.http()
        )),
        "{notes:?}"
    );
    lab.browser.shutdown().await;
}

/// Issue 32 (BE-4, HAND-8): when every address of the pool dies while the person holds
/// the wheel, nothing is left to reopen the tabs on: the person is told so, and the
/// wheel goes back to the agent, whose waiting call goes on to hear the same sentence,
/// never a "person has the wheel" over no page.
#[tokio::test(flavor = "multi_thread")]
async fn be_4_with_no_address_left_under_the_persons_hands_the_wheel_goes_back_to_the_agent() {
    let a = Standalone::start().expect("a standalone Chromium");
    let (lab, _, heard) = pool_lab(&[&a]).await;
    let chat = lab.open("n", "live.html").await;
    let (mut feed, control) = lab.hub.join("n");
    assert!(
        next_frame(&mut feed, Duration::from_secs(10))
            .await
            .is_some()
    );
    control.command(&cmd(&json!({"type": "takeover"}))).await;
    let agent = tokio::spawn({
        let wheel = chat.wheel();
        async move { wheel.agents_turn().await }
    });
    drop(a);
    let freed = tokio::time::timeout(Duration::from_secs(30), agent)
        .await
        .expect("the wheel went back to the agent")
        .expect("joined");
    assert!(freed);
    assert!(!chat.wheel().state().person_drives);
    let said = heard.of("n");
    assert!(
        said.iter()
            .any(|(running, m)| !running && m.contains("no browser of the pool answers")),
        "{said:?}"
    );
    let driver = next_event(&mut feed, Duration::from_secs(5), |e| match e {
        Event::Status { driver, .. } if driver == "agent" => Some(driver.clone()),
        _ => None,
    })
    .await;
    assert_eq!(driver.as_deref(), Some("agent"), "the panel was not told");
    let e = chat.tabs().await.expect_err("nothing answers");
    assert!(
        e.to_string().contains("no browser of the pool answers"),
        "{e}"
    );
    lab.browser.shutdown().await;
}

/// Issue 32 (BE-4, HAND-1, ERR-19): a handoff waits for a person who has not opened the
/// panel yet when the conversation's address dies: its tabs reopen on the other address
/// at once, not on the agent's next call (the agent waits in the handoff), so the person
/// who comes finds the page and ends the handoff there.
#[tokio::test(flavor = "multi_thread")]
async fn be_4_a_waiting_handoff_whose_address_dies_is_reopened_elsewhere_at_once() {
    let a = Standalone::start().expect("a standalone Chromium");
    let b = Standalone::start().expect("a standalone Chromium");
    let (lab, _, _) = pool_lab(&[&a, &b]).await;
    let chat = lab.open("w", "basic-form.html").await;
    let handoff = tokio::spawn({
        let chat = chat.clone();
        async move { hand_off(&chat, "Type the note", Duration::from_millis(250)).await }
    });
    let opened = eventually(Duration::from_secs(5), || async {
        chat.wheel().state().handoff.is_some()
    })
    .await;
    assert!(opened, "the handoff never opened");
    drop(a);
    let back = eventually(Duration::from_secs(30), || async {
        chat.pages_now().await.len() == 1
    })
    .await;
    assert!(back, "the tab waited for the agent's next call");
    let (_feed, control) = lab.hub.join("w");
    eval(
        &chat,
        "const e = document.getElementById('email'); e.value = ''; e.focus(); true",
    )
    .await;
    control
        .command(&cmd(&json!({"type": "text", "text": "ada@example.org"})))
        .await;
    let typed = eventually(Duration::from_secs(5), || async {
        eval(&chat, "document.getElementById('email').value").await == json!("ada@example.org")
    })
    .await;
    assert!(typed, "the person's typing never reached the reopened page");
    control.command(&cmd(&json!({"type": "handback"}))).await;
    let handed = tokio::time::timeout(Duration::from_secs(10), handoff)
        .await
        .expect("I'm done ends the handoff")
        .expect("joined")
        .expect("handed");
    assert_eq!(handed.end, HandoffEnd::Done);
    lab.browser.shutdown().await;
}
