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
