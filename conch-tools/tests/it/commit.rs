//! High stakes at the act that commits (issue 30, HS-1, HS-7, HS-8, AMB-12): a commit is
//! judged by its own words and its context (form, dialog, confirmation sentence), in Ask,
//! Auto and Full trust alike; a link with an address, an option and a field never ask; one
//! Yes covers the page's own confirmation of the same act in the next step.

use conch_fixtures::FixtureServer;
use conch_tools::{Chat, Choice, Mode, QuestionKind, ToolResult};
use serde_json::{Value, json};

use crate::support::{Recorder, ref_of, setup, tools};

const MODES: [Mode; 3] = [Mode::Ask, Mode::Auto, Mode::FullTrust];

async fn events(chat: &Chat) -> Vec<String> {
    let value: Value = chat
        .conversation()
        .evaluate("window.events")
        .await
        .expect("the page's event log");
    serde_json::from_value(value).expect("a list of events")
}

async fn read(chat: &Chat) -> String {
    call(chat, "browser_read", &json!({})).await.text()
}

/// `tool` called with `args`, its future boxed: a test's steps held inline overflow the
/// test thread's stack in a debug build.
async fn call(chat: &Chat, tool: &str, args: &Value) -> ToolResult {
    Box::pin(chat.call(tool, args)).await
}

/// How many high-stakes questions `asker` was asked.
fn high_stakes(asker: &Recorder) -> usize {
    asker
        .kinds()
        .into_iter()
        .filter(|k| *k == QuestionKind::HighStakes)
        .count()
}

/// Clicks the element named `name` on `page`, and fails the test when the call fails.
async fn click(chat: &Chat, page: &str, name: &str) -> String {
    let done = call(chat, "browser_click", &json!({ "ref": ref_of(page, name) })).await;
    assert!(!done.is_error, "{name}: {}", done.text());
    done.text()
}

/// HS-1, issue 30 (Django admin's delete flow): the list's "Delete" is a link to a GET
/// confirmation page, so following it asks nothing; the page's "Yes, I’m sure" submit,
/// harmless in its own words, asks because the page asks "Are you sure you want to delete
/// …?"; its "No, take me back" link never asks. One question in all, in every mode.
#[tokio::test(flavor = "multi_thread")]
async fn hs_1_a_delete_link_leads_to_a_confirmation_page_whose_yes_asks_once() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::Yes);
    let tools = tools(&setup, asker.clone());
    for (n, mode) in MODES.into_iter().enumerate() {
        let chat = tools.chat(&format!("django-{n}"), mode);
        let list = call(
            &chat,
            "browser_open",
            &json!({ "url": server.url("commit-list.html") }),
        )
        .await
        .text();
        let before = high_stakes(&asker);
        click(&chat, &list, "Delete").await;
        assert_eq!(high_stakes(&asker), before, "{mode:?}: the link asked");
        let confirm = read(&chat).await;
        assert!(confirm.contains("Are you sure"), "{confirm}");
        let yes = click(&chat, &confirm, "Yes, I’m sure").await;
        assert_eq!(high_stakes(&asker), before + 1, "{mode:?}: {yes}");
        let asked = asker.asked().last().cloned().expect("a question");
        assert_eq!(asked.question.kind(), QuestionKind::HighStakes);
        assert!(
            asked.question.text().contains("Yes, I’m sure"),
            "{}",
            asked.question.text()
        );
        assert_eq!(events(&chat).await, vec!["submit:confirm".to_owned()]);
        click(&chat, &read(&chat).await, "No, take me back").await;
        assert_eq!(high_stakes(&asker), before + 1, "{mode:?}");
    }
    tools.browser().shutdown().await;
}

/// HS-1, issue 30: choosing an option never asks, even "Delete selected posts", and the
/// form's harmless "Go" submits without a question; typing "please delete" into a field
/// labelled "Post title", and pressing keys there, asks nothing. Full trust, answers No.
#[tokio::test(flavor = "multi_thread")]
async fn hs_1_choosing_an_option_or_typing_in_a_field_never_asks() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let tools = tools(&setup, asker.clone());
    for (n, mode) in MODES.into_iter().enumerate() {
        let chat = tools.chat(&format!("choosing-{n}"), mode);
        let page = call(
            &chat,
            "browser_open",
            &json!({ "url": server.url("commit-list.html") }),
        )
        .await
        .text();
        let action = ref_of(&page, "Action");
        for value in ["Keep", "Delete selected posts"] {
            let chose = call(
                &chat,
                "browser_select",
                &json!({ "ref": action, "values": [value] }),
            )
            .await;
            assert!(!chose.is_error, "{value}: {}", chose.text());
        }
        let page = read(&chat).await;
        click(&chat, &page, "Go").await;
        let title = ref_of(&page, "Post title");
        let typed = call(
            &chat,
            "browser_type",
            &json!({ "ref": title, "text": "please delete" }),
        )
        .await;
        assert!(!typed.is_error, "{}", typed.text());
        for key in ["End", "Space", "Enter"] {
            let pressed = call(&chat, "browser_press", &json!({ "key": key, "ref": title })).await;
            assert!(!pressed.is_error, "{key}: {}", pressed.text());
        }
        assert_eq!(high_stakes(&asker), 0, "{mode:?}: {:?}", asker.kinds());
        assert_eq!(
            events(&chat).await,
            vec![
                "submit:actions:delete_selected".to_owned(),
                "submit:new-post".to_owned()
            ]
        );
    }
    tools.browser().shutdown().await;
}

/// HS-1, issue 30: in the page's dialog "Delete project?", "Yes" asks (a No leaves the
/// project) and "Cancel" never does; from the attacker's side, a form whose legend is
/// "Send payment" asks at its "Continue", and a div with a click listener reading "OK" in
/// an alert dialog named "Publish to everyone" asks. In Ask, Auto and Full trust.
#[tokio::test(flavor = "multi_thread")]
async fn hs_1_a_harmless_commit_asks_by_its_dialog_or_form() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let tools = tools(&setup, asker.clone());
    for (n, mode) in MODES.into_iter().enumerate() {
        let chat = tools.chat(&format!("dialog-{n}"), mode);
        let page = call(
            &chat,
            "browser_open",
            &json!({ "url": server.url("commit-dialog.html") }),
        )
        .await
        .text();
        let before = high_stakes(&asker);
        // "Archive" opens the delete dialog without a question of its own.
        click(&chat, &page, "Archive").await;
        let open = read(&chat).await;
        click(&chat, &open, "Cancel").await;
        assert_eq!(high_stakes(&asker), before, "{mode:?}: Cancel asked");
        click(&chat, &read(&chat).await, "Archive").await;
        let yes = call(
            &chat,
            "browser_click",
            &json!({ "ref": ref_of(&read(&chat).await, "Yes") }),
        )
        .await;
        assert!(yes.is_error, "{mode:?}: {}", yes.text());
        assert_eq!(high_stakes(&asker), before + 1, "{mode:?}");
        let asked = asker.asked().last().cloned().expect("a question");
        assert!(
            asked.question.text().contains("Delete project?"),
            "{}",
            asked.question.text()
        );
        let page = read(&chat).await;
        let pay = call(
            &chat,
            "browser_click",
            &json!({ "ref": ref_of(&page, "Continue") }),
        )
        .await;
        assert!(pay.is_error, "{mode:?}: {}", pay.text());
        assert_eq!(high_stakes(&asker), before + 2, "{mode:?}");
        // Enter in the amount field presses the same "Continue": asked too (HS-8).
        let enter = call(
            &chat,
            "browser_press",
            &json!({ "key": "Enter", "ref": ref_of(&page, "Amount") }),
        )
        .await;
        assert!(enter.is_error, "{mode:?}: {}", enter.text());
        assert_eq!(high_stakes(&asker), before + 3, "{mode:?}");
        click(&chat, &page, "Preview").await;
        let ok = call(
            &chat,
            "browser_click",
            &json!({ "ref": ref_of(&read(&chat).await, "OK") }),
        )
        .await;
        assert!(ok.is_error, "{mode:?}: {}", ok.text());
        assert_eq!(high_stakes(&asker), before + 4, "{mode:?}");
        assert_eq!(
            events(&chat).await,
            vec![
                "click:archive",
                "click:cancel",
                "click:archive",
                "click:preview"
            ]
        );
    }
    tools.browser().shutdown().await;
}

/// HS-1, DLG-7, issue 30 (one question for one irreversible act): inside a frame of another
/// site too (out of process), Yes to a row's "Delete" covers the frame's own confirmation
/// "Delete project?" that it opens: one question in all (only the top frame's dialogs
/// were marked, so the frame's "Yes" was asked about again). A confirmation no Yes opened
/// still asks.
#[tokio::test(flavor = "multi_thread")]
async fn hs_1_one_yes_covers_the_confirmation_inside_a_frame() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::Yes);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("framed", Mode::FullTrust);
    let url = server.url("commit-dialog-frame.html");
    call(&chat, "browser_open", &json!({ "url": url })).await;
    // The frame may load after the page's load event.
    let mut page = read(&chat).await;
    for _ in 0..30 {
        if page.contains("Apollo") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        page = read(&chat).await;
    }
    click(&chat, &page, "Delete").await;
    assert_eq!(high_stakes(&asker), 1);
    let yes = click(&chat, &read(&chat).await, "Yes").await;
    assert_eq!(high_stakes(&asker), 1, "the confirmation asked again");
    assert!(!read(&chat).await.contains("Apollo"), "{yes}");
    click(&chat, &read(&chat).await, "Archive").await;
    click(&chat, &read(&chat).await, "Yes").await;
    assert_eq!(
        high_stakes(&asker),
        2,
        "a confirmation no Yes opened was covered"
    );
    tools.browser().shutdown().await;
}

/// HS-1, DLG-7, issue 30 (one question for one irreversible act): Yes to a row's
/// "Delete" covers the dialog "Delete project?" it opens, in the very next act on the same
/// tab: one question in all. A dialog that was open before the Yes, a delete after
/// another act, and a later delete of its own each still ask.
#[tokio::test(flavor = "multi_thread")]
async fn hs_1_one_yes_covers_the_confirmation_the_approved_act_opened() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::Yes);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("once", Mode::FullTrust);
    let url = server.url("commit-dialog.html");
    let page = call(&chat, "browser_open", &json!({ "url": url }))
        .await
        .text();
    click(&chat, &page, "Delete").await;
    assert_eq!(high_stakes(&asker), 1);
    click(&chat, &read(&chat).await, "Yes").await;
    assert_eq!(high_stakes(&asker), 1, "the confirmation asked again");
    assert_eq!(events(&chat).await, vec!["click:delete", "click:yes"]);

    // The dialog was already open when the person said Yes: not the act's own.
    let page = call(&chat, "browser_open", &json!({ "url": url }))
        .await
        .text();
    click(&chat, &page, "Archive").await;
    click(&chat, &read(&chat).await, "Delete").await;
    assert_eq!(high_stakes(&asker), 2);
    click(&chat, &read(&chat).await, "Yes").await;
    assert_eq!(high_stakes(&asker), 3, "an older dialog was covered");

    // Another act in between ends the cover.
    let page = call(&chat, "browser_open", &json!({ "url": url }))
        .await
        .text();
    click(&chat, &page, "Delete").await;
    assert_eq!(high_stakes(&asker), 4);
    let typed = call(
        &chat,
        "browser_type",
        &json!({ "ref": ref_of(&page, "Amount"), "text": "5" }),
    )
    .await;
    assert!(!typed.is_error, "{}", typed.text());
    click(&chat, &read(&chat).await, "Yes").await;
    assert_eq!(high_stakes(&asker), 5, "a later act was covered");

    // An unrelated later delete asks again.
    let page = call(&chat, "browser_open", &json!({ "url": url }))
        .await
        .text();
    click(&chat, &page, "Delete").await;
    assert_eq!(high_stakes(&asker), 6);
    tools.browser().shutdown().await;
}
