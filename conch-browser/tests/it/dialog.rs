//! The page's own dialogs, answered by whoever drives (DLG-1 … DLG-13, AMB-19), against a
//! real headless Chromium.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use conch_browser::page::act::{self, How};
use conch_browser::page::dialog::{
    self, Answered, AnsweredBy, Dialog, DialogHook, DialogWatch, HookFuture,
};
use conch_policy::{DialogKind, Mode};
use serde_json::json;

use crate::act::{css, lab, quick};

/// A hook that records each confirm and answers as told, after `delay`.
#[derive(Debug)]
struct Spy {
    asked: Mutex<Vec<String>>,
    yes: bool,
    delay: Duration,
}

impl DialogHook for Spy {
    fn confirm(&self, dialog: Dialog) -> HookFuture {
        self.asked.lock().expect("spy lock").push(dialog.message);
        let (yes, delay) = (self.yes, self.delay);
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            yes
        })
    }
}

fn spy(yes: bool, delay: Duration) -> Arc<Spy> {
    Arc::new(Spy {
        asked: Mutex::new(Vec::new()),
        yes,
        delay,
    })
}

async fn wait_for_note(watch: &DialogWatch) -> Vec<dialog::DialogNote> {
    for _ in 0..50 {
        let notes = watch.take_notes();
        if !notes.is_empty() {
            return notes;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Vec::new()
}

/// DLG-1, DLG-3, DLG-5, DLG-6, DLG-8, DLG-13: during an agent step an alert is closed and
/// its words noted, a prompt is cancelled, a confirm goes to the hook (Yes accepts), and in
/// Plan only a confirm is cancelled without asking. Each click raising a dialog is a
/// success through the dialog.
#[tokio::test(flavor = "multi_thread")]
async fn dlg_3_agent_step_answers() {
    let lab = lab().await;
    let page = lab.open("dialogs.html").await;
    let hook = spy(true, Duration::ZERO);
    let watch = dialog::watch(&page, hook.clone()).await.unwrap();
    let o = quick();
    {
        let _step = watch.agent_step(Mode::Ask);
        let done = act::click(&css(&page, "#alert").await, How::Click, &o)
            .await
            .unwrap();
        assert!(done.through_dialog);
        let notes = watch.take_notes();
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].dialog.kind, DialogKind::Alert);
        assert_eq!(notes[0].answer, Answered::Closed);
        assert!(
            notes[0].sentence().contains("“Saved!”"),
            "{}",
            notes[0].sentence()
        );

        act::click(&css(&page, "#prompt").await, How::Click, &o)
            .await
            .unwrap();
        let notes = watch.take_notes();
        assert_eq!(notes[0].answer, Answered::Cancelled);
        assert!(notes[0].sentence().contains("cancelled"));

        act::click(&css(&page, "#remove").await, How::Click, &o)
            .await
            .unwrap();
        assert_eq!(*hook.asked.lock().unwrap(), ["Remove this item?"]);
        let notes = watch.take_notes();
        assert_eq!(
            (notes[0].answer, notes[0].by),
            (Answered::Accepted, AnsweredBy::Person)
        );
    }
    {
        let _step = watch.agent_step(Mode::PlanOnly);
        act::click(&css(&page, "#delete").await, How::Click, &o)
            .await
            .unwrap();
        assert_eq!(
            hook.asked.lock().unwrap().len(),
            1,
            "Plan only asks nothing"
        );
        assert_eq!(watch.take_notes()[0].answer, Answered::Cancelled);
    }
    assert_eq!(
        lab.log().await,
        ["alert:done", "prompt:null", "confirm:true", "confirm:false"]
    );
    lab.browser.shutdown().await;
}

/// DLG-13: a click held up behind a confirm the person takes long to answer (longer than
/// one input call may wait) is still a success once the confirm is answered.
#[tokio::test(flavor = "multi_thread")]
async fn dlg_13_click_held_behind_a_slow_confirm_succeeds() {
    let lab = lab().await;
    let page = lab.open("remove-item.html").await;
    let hook = spy(true, Duration::from_millis(5_500));
    let watch = dialog::watch(&page, hook.clone()).await.unwrap();
    let _step = watch.agent_step(Mode::Ask);
    let done = act::click(&css(&page, "#delete").await, How::Click, &quick())
        .await
        .unwrap();
    assert!(done.through_dialog);
    assert_eq!(*hook.asked.lock().unwrap(), ["Are you sure?"]);
    assert_eq!(lab.log().await, ["deleted"]);
    lab.browser.shutdown().await;
}

/// DLG-2, DLG-11, AMB-19: between steps a confirm gets Cancel and an alert OK, and the
/// next result can say so; DLG-9, DLG-10: while the person drives, the dialog waits for
/// their answer, and handing back cancels it.
#[tokio::test(flavor = "multi_thread")]
async fn dlg_11_between_steps_and_person() {
    let lab = lab().await;
    let page = lab.open("timer-dialogs.html?after=1500").await;
    let hook = spy(true, Duration::ZERO);
    let watch = dialog::watch(&page, hook.clone()).await.unwrap();
    let notes = wait_for_note(&watch).await;
    assert_eq!(notes.len(), 1, "the timer's confirm was answered");
    assert_eq!(
        (notes[0].answer, notes[0].by),
        (Answered::Cancelled, AnsweredBy::Default)
    );
    assert!(notes[0].sentence().contains("“Keep me signed in?”"));
    assert!(hook.asked.lock().unwrap().is_empty());
    assert_eq!(lab.log().await, ["confirm:false"]);

    lab.open("dialogs.html").await;
    lab.eval("later('alert', 'Between steps')").await;
    let notes = wait_for_note(&watch).await;
    assert_eq!(notes[0].answer, Answered::Closed);

    // The person drives: the dialog waits for them.
    watch.set_person_driving(true).await;
    lab.eval("later('confirm', 'Keep this?')").await;
    for _ in 0..50 {
        if watch.pending().is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        watch.pending().map(|d| d.message),
        Some("Keep this?".to_owned())
    );
    // DLG-14: nothing is sent to the frozen page; the act says why at once.
    let page = lab.chat.page().await.unwrap();
    let started = std::time::Instant::now();
    let err = act::click(&frozen_element(&page), How::Click, &quick())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("“Keep this?”"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(watch.answer(true, None).await.unwrap());
    assert!(watch.until_answered(Duration::from_secs(1)).await);
    assert_eq!(watch.take_notes()[0].by, AnsweredBy::Person);

    // DLG-10: handing back while their dialog waits cancels it.
    lab.eval("later('confirm', 'Still there?')").await;
    for _ in 0..50 {
        if watch.pending().is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    watch.set_person_driving(false).await;
    let notes = watch.take_notes();
    assert_eq!(
        (notes[0].answer, notes[0].by),
        (Answered::Cancelled, AnsweredBy::HandBack)
    );
    assert_eq!(
        lab.log().await,
        ["alert:undefined", "confirm:true", "confirm:false"]
    );
    lab.browser.shutdown().await;
}

/// DLG-4, AMB-19: during an agent step "Leave site?" leaves; between steps it stays.
#[tokio::test(flavor = "multi_thread")]
async fn dlg_4_leave_site_during_a_step_stays_between() {
    let lab = lab().await;
    let page = lab.open("beforeunload.html").await;
    let watch = dialog::watch(&page, spy(true, Duration::ZERO))
        .await
        .unwrap();
    // Armed by a user gesture.
    act::click(&css(&page, "#arm").await, How::Click, &quick())
        .await
        .unwrap();
    // Between steps: a navigation the page starts is stopped by "Stay".
    lab.eval("setTimeout(() => { location.href = 'basic.html'; }, 10); true")
        .await;
    let notes = wait_for_note(&watch).await;
    assert_eq!(notes[0].answer, Answered::Stayed);
    assert_eq!(
        lab.eval("document.title").await,
        json!("Unsaved changes (armed)")
    );

    let _step = watch.agent_step(Mode::Ask);
    let tab = lab.chat.open(&lab.server.url("basic.html")).await.unwrap();
    assert_eq!(tab.title, "Basic page");
    let notes = watch.take_notes();
    assert_eq!(notes[0].answer, Answered::Left);
    lab.browser.shutdown().await;
}

/// An element of a page frozen by a dialog (its handle is never used: nothing is sent).
fn frozen_element(page: &conch_cdp::Session) -> conch_browser::page::Element {
    conch_browser::page::Element {
        reference: "e1".to_owned(),
        page: page.clone(),
        frame: page.clone(),
        object_id: "frozen".to_owned(),
        offset: (0.0, 0.0),
    }
}

/// DLG-1, LAUNCH-19 (issue 11): the dialog watch is on every page from the moment it
/// attaches, not only on the tab of an agent step. An alert during the first open is
/// closed (the open does not hang on a frozen page), and a confirm that a background tab
/// raises as it loads is cancelled, each with its note.
#[tokio::test(flavor = "multi_thread")]
async fn dlg_1_dialogs_before_any_step_are_answered() {
    let lab = lab().await;
    let url = lab.server.url("dialog-on-load.html");
    let opened = tokio::time::timeout(Duration::from_secs(20), lab.chat.open(&url)).await;
    let tab = opened
        .expect("the open does not hang on the alert")
        .expect("the page opens");
    assert_eq!(tab.title, "Welcome");
    assert_eq!(lab.log().await, vec!["alert closed"]);
    let page = lab.chat.page().await.expect("a page");
    let watch = dialog::watch(&page, Arc::new(dialog::CancelConfirms))
        .await
        .expect("the page's watch");
    let notes = wait_for_note(&watch).await;
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0].answer, Answered::Closed);
    assert_eq!(notes[0].by, AnsweredBy::Default);

    // A new tab that confirms while it loads, with no step on it.
    act::click(&css(&page, "#pop").await, How::Click, &quick())
        .await
        .expect("the link opens a tab");
    let mut log = json!(null);
    for _ in 0..50 {
        log = lab.eval("window.log").await;
        if log == json!(["confirm:false"]) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        log,
        json!(["confirm:false"]),
        "the new tab's confirm is cancelled"
    );
}

/// Issue 12 (unbounded growth), DLG-12: a page that raises dialogs in a loop where nobody
/// takes the notes keeps only the newest `MAX_NOTES` of them.
#[tokio::test(flavor = "multi_thread")]
async fn dlg_12_notes_nobody_takes_are_bounded() {
    let lab = lab().await;
    let page = lab.open("basic.html").await;
    let watch = dialog::watch(&page, Arc::new(dialog::CancelConfirms))
        .await
        .expect("the page's watch");
    watch.take_notes();
    page.call_raw(
        "Runtime.evaluate",
        json!({ "expression": "setTimeout(() => { for (let i = 1; i <= 30; i++) alert('alert ' + i); window.alertsDone = true; }, 0)" }),
    )
    .await
    .expect("evaluate");
    let mut done = json!(null);
    for _ in 0..100 {
        done = lab.eval("window.alertsDone === true").await;
        if done == json!(true) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        done,
        json!(true),
        "the page's thirty alerts were all answered"
    );
    // The last note is written when the browser's reply to its answer is read, which can
    // come a moment after the page runs on (seen on a loaded CI machine): give it that.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let notes = watch.take_notes();
    assert_eq!(notes.len(), dialog::MAX_NOTES);
    assert_eq!(
        notes.last().map(|n| n.dialog.message.as_str()),
        Some("alert 30")
    );
}

/// DLG-1, LAUNCH-19 (issue 11): a tab opened with `new_tab` (browser_tabs open) that
/// confirms while it loads, with no step on it, has its confirm cancelled by the rules.
#[tokio::test(flavor = "multi_thread")]
async fn dlg_1_a_dialog_in_a_tab_opened_with_browser_tabs_is_answered() {
    let lab = lab().await;
    lab.open("basic.html").await;
    let url = lab.server.url("dialog-on-load.html?confirm=1");
    let opened = tokio::time::timeout(Duration::from_secs(20), lab.chat.new_tab(&url)).await;
    opened
        .expect("the new tab does not hang on the confirm")
        .expect("the tab opens");
    let mut log = json!(null);
    for _ in 0..50 {
        log = lab.eval("window.log").await;
        if log == json!(["confirm:false"]) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(log, json!(["confirm:false"]), "the new tab's confirm");
}

/// DLG-1, LAUNCH-19 (issue 11): a confirm in an out-of-process frame (a frame of another
/// site) raised while the page loads is cancelled by the rules, and the open goes on.
#[tokio::test(flavor = "multi_thread")]
async fn dlg_1_a_dialog_in_an_out_of_process_frame_is_answered() {
    let lab = lab().await;
    let url = lab.server.url("xo-dialog.html");
    let opened = tokio::time::timeout(Duration::from_secs(20), lab.chat.open(&url)).await;
    opened
        .expect("the open does not hang on the frame's confirm")
        .expect("the page opens");
    let mut log = json!(null);
    for _ in 0..50 {
        log = lab.eval("window.log").await;
        if log == json!(["confirm:false"]) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(log, json!(["confirm:false"]), "the frame's confirm");
}
