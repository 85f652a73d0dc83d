//! Errands through the tools: the embedder's [`ToolContext`] makes a conversation a task,
//! which browses in a context of its own; [`TaskEvents`] ends it (ERR-1, ERR-2, ERR-10).

use conch_fixtures::FixtureServer;
use conch_tools::{Choice, ConversationKind, Mode, TaskEvents, TaskState, ToolContext};
use serde_json::json;

use crate::support::{Recorder, setup, tools};

async fn cookie(chat: &conch_tools::Chat) -> String {
    chat.conversation()
        .evaluate("document.cookie")
        .await
        .expect("cookies")
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// ERR-1, ERR-2, ERR-10: two tasks made by the embedder's context open the same site
/// through `browser_open` and each keeps its own cookie; a chat keeps the main context's;
/// `task_changed(done)` closes the errand and forgets the conversation.
#[tokio::test(flavor = "multi_thread")]
async fn err_1_err_10_the_embedders_context_makes_a_task_an_errand() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools(&setup, Recorder::answering(Choice::No, Choice::No));
    let url = server.url("basic.html");

    let chat = tools.chat_in(&ToolContext::chat("chat", Mode::Ask));
    let a = tools.chat_in(&ToolContext::task("task-a", Mode::Ask));
    let b = tools.chat_in(&ToolContext::task("task-b", Mode::Ask));
    for (conv, value) in [(&chat, "main"), (&a, "a"), (&b, "b")] {
        let opened = conv.call("browser_open", &json!({ "url": url })).await;
        assert!(!opened.is_error, "{}", opened.text());
        assert_eq!(cookie(conv).await, "", "{value} starts with no cookie");
        conv.conversation()
            .evaluate(&format!("document.cookie = 'who={value}'; 1"))
            .await
            .unwrap();
    }
    assert_eq!(cookie(&a).await, "who=a");
    assert_eq!(cookie(&b).await, "who=b");
    assert_eq!(cookie(&chat).await, "who=main");
    // The same id asked for as a chat stays a task: only the embedder's events end it.
    let again = tools.chat("task-a", Mode::Ask);
    assert_eq!(cookie(&again).await, "who=a");
    assert_eq!(tools.browser().kind("task-a"), ConversationKind::Task);

    tools.task_changed("task-a", TaskState::Done).await;
    assert_eq!(tools.browser().errands_open().await, 1);
    assert!(!tools.conversations().contains(&"task-a".to_owned()));
    tools.chat_deleted("task-b").await;
    assert_eq!(tools.browser().errands_open().await, 0);
    assert_eq!(cookie(&chat).await, "who=main", "the chat is untouched");
    tools.browser().shutdown().await;
}

/// Signs the main context in on the fixtures' site, through a Set-Cookie of the site's
/// own, and gives the tools and their recorder for `site` answers.
async fn signed_in(
    server: &FixtureServer,
    setup: &crate::support::Setup,
    site: Choice,
) -> (conch_tools::Tools, std::sync::Arc<Recorder>) {
    server.route(
        "/signin-main",
        conch_fixtures::Response {
            headers: vec![
                ("Content-Type".into(), "text/html".into()),
                (
                    "Set-Cookie".into(),
                    "sid=person; Path=/; Max-Age=3600".into(),
                ),
            ],
            ..conch_fixtures::Response::html("<title>Signed in</title>")
        },
    );
    let asker = Recorder::answering(site, Choice::No);
    let tools = tools(setup, asker.clone());
    let chat = tools.chat_in(&ToolContext::chat("chat", Mode::Ask));
    let opened = chat
        .call("browser_open", &json!({ "url": server.url("signin-main") }))
        .await;
    assert!(!opened.is_error, "{}", opened.text());
    assert_eq!(cookie(&chat).await, "sid=person");
    (tools, asker)
}

/// Opens the fixtures' button page in task `id` in `mode` and clicks Go; gives the click's
/// result text.
async fn click_in_task(
    tools: &conch_tools::Tools,
    server: &FixtureServer,
    id: &str,
    mode: Mode,
) -> (conch_tools::Chat, String) {
    let task = tools.chat_in(&ToolContext::task(id, mode));
    let opened = task
        .call("browser_open", &json!({ "url": server.url("basic.html") }))
        .await;
    assert_eq!(cookie(&task).await, "", "the errand starts signed out");
    let go = crate::support::ref_of(&opened.text(), "Go");
    let clicked = task.call("browser_click", &json!({ "ref": go })).await;
    (task, clicked.text())
}

/// ERR-4, PERM-15: in an errand, the site question says Allow lends the sign-in; after
/// the person's Allow the errand has the main context's cookie of that site.
#[tokio::test(flavor = "multi_thread")]
async fn err_4_perm_15_allow_in_an_errand_lends_the_sites_sign_in() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let (tools, asker) = signed_in(&server, &setup, Choice::ThisChat).await;
    let (task, clicked) = click_in_task(&tools, &server, "task", Mode::Ask).await;
    assert!(!clicked.contains("declined"), "{clicked}");
    let asked = asker.asked();
    assert_eq!(asked.len(), 1, "one site question");
    assert!(asked[0].question.lends_sign_in());
    assert!(
        asked[0]
            .question
            .text()
            .contains("lends your sign-in on 127.0.0.1 to this conversation's own browser"),
        "{}",
        asked[0].question.text()
    );
    assert_eq!(cookie(&task).await, "sid=person", "the sign-in is lent");
    let session = task.conversation().session().expect("its own browser");
    assert_eq!(
        session.sites,
        ["127.0.0.1"],
        "the lent site is named (ERR-23)"
    );
    tools.browser().shutdown().await;
}

/// ERR-4: No lends nothing.
#[tokio::test(flavor = "multi_thread")]
async fn err_4_no_in_an_errand_lends_nothing() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let (tools, asker) = signed_in(&server, &setup, Choice::No).await;
    let (task, _) = click_in_task(&tools, &server, "task", Mode::Ask).await;
    assert_eq!(asker.asked().len(), 1);
    assert_eq!(cookie(&task).await, "", "nothing is lent");
    tools.browser().shutdown().await;
}

/// ERR-5: Full trust asks no site question in an errand and lends nothing; a chat's
/// question never lends (it is in the main context already).
#[tokio::test(flavor = "multi_thread")]
async fn err_5_full_trust_lends_nothing() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let (tools, asker) = signed_in(&server, &setup, Choice::ThisChat).await;
    let (task, clicked) = click_in_task(&tools, &server, "task", Mode::FullTrust).await;
    assert!(asker.asked().is_empty(), "no question: {clicked}");
    assert_eq!(cookie(&task).await, "", "nothing is lent");

    let chat = tools.chat_in(&ToolContext::chat("chat-2", Mode::Ask));
    let opened = chat
        .call("browser_open", &json!({ "url": server.url("basic.html") }))
        .await;
    let go = crate::support::ref_of(&opened.text(), "Go");
    chat.call("browser_click", &json!({ "ref": go })).await;
    let asked = asker.asked();
    assert_eq!(asked.len(), 1);
    assert!(
        !asked[0].question.lends_sign_in(),
        "a chat's question lends nothing"
    );
    tools.browser().shutdown().await;
}

/// LIVE-16, ERR-23: when the person gives a chat a browser of its own, the chat's next
/// call browses there, signed out (the fixtures' site is not always allowed), and its
/// result says its tabs of the shared browser closed; taken back, its next call is in the
/// main context again, with the main context's cookie. The chat's door is the same
/// throughout: only the person's switch moved it.
#[tokio::test(flavor = "multi_thread")]
async fn live_16_the_toolbox_follows_a_chat_to_its_own_browser_and_back() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools(&setup, Recorder::answering(Choice::No, Choice::No));
    let url = server.url("basic.html");
    let chat = tools.chat_in(&ToolContext::chat("chat", Mode::Ask));
    let opened = chat.call("browser_open", &json!({ "url": url })).await;
    assert!(!opened.is_error, "{}", opened.text());
    chat.conversation()
        .evaluate("document.cookie = 'who=main'; 1")
        .await
        .unwrap();

    tools.browser().set_own_browser("chat", true).await;
    let opened = chat.call("browser_open", &json!({ "url": url })).await;
    assert!(!opened.is_error, "{}", opened.text());
    assert!(
        opened.text().contains(conch_browser::MOVED_APART),
        "{}",
        opened.text()
    );
    assert_eq!(cookie(&chat).await, "", "its own browser starts signed out");
    let session = chat.conversation().session().expect("its own browser");
    assert_eq!(session.reason, "own");
    assert_eq!(tools.browser().kind("chat"), ConversationKind::Chat);

    tools.browser().set_own_browser("chat", false).await;
    let opened = chat.call("browser_open", &json!({ "url": url })).await;
    assert!(!opened.is_error, "{}", opened.text());
    assert!(
        opened.text().contains(conch_browser::MOVED_BACK),
        "{}",
        opened.text()
    );
    assert_eq!(cookie(&chat).await, "who=main");
    assert!(chat.conversation().session().is_none());
    tools.browser().shutdown().await;
}
