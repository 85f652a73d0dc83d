//! What a person meets when they come to the panel mid-task (issue 28): the conversation
//! named by its client and first page (LIVE-10), the steps so far (LIVE-6), and the
//! protocol's events on the live socket (PROTO-2).

use serde_json::{Value, json};

use crate::live::{Watched, answer_to, get, join, next_event, opened, send};

/// LIVE-10 (issue 28): the conversations API names a conversation by the MCP client that
/// opened it (`clientInfo.name`) and its first page's title, not by "mcp-stdio".
#[tokio::test(flavor = "multi_thread")]
async fn live_10_a_conversation_is_named_by_its_client_and_first_page() {
    let (_pages, _home, watched, _page) = opened("counter.html").await;
    let cookie = watched.sign_in().await;
    let (status, _, body) = get(
        watched.port,
        "/api/browser/conversations",
        &cookie.headers(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let list: Value = serde_json::from_str(&body).expect("JSON");
    let conversation = &list["conversations"][0];
    // The test client says `clientInfo: { name: "test" }` at initialize.
    assert_eq!(conversation["client"], "test", "{list}");
    assert_eq!(conversation["title"], "Counter", "{list}");
    assert_eq!(conversation["name"], "test · Counter", "{list}");
    // The id, which links use, stays.
    assert_eq!(conversation["id"], "mcp-stdio", "{list}");
    watched.client.finish().await;
}

/// LIVE-6 (issue 28): a person who opens the panel after three agent steps gets those
/// steps, with their captions and thumbnails, on the live socket first.
#[tokio::test(flavor = "multi_thread")]
async fn live_6_a_panel_opened_after_three_steps_lists_them() {
    let pages = conch_fixtures::FixtureServer::start()
        .await
        .expect("fixture server");
    let home = tempfile::tempdir().expect("temp home");
    let mut watched = Watched::start(home.path(), &[]).await;
    for (tool, arguments) in [
        ("browser_open", json!({ "url": pages.url("counter.html") })),
        ("browser_read", json!({})),
        ("browser_screenshot", json!({})),
    ] {
        let (text, error) = watched.client.call(tool, arguments).await;
        assert!(!error, "{tool}: {text}");
    }
    // Nobody watched during the steps; now a panel opens.
    let cookie = watched.sign_in().await;
    let mut socket = join(watched.port, &cookie, "mcp-stdio").await;
    let mut kinds = Vec::new();
    for _ in 0..3 {
        let step = next_event(&mut socket, "step").await;
        assert!(
            !step["caption"].as_str().unwrap_or_default().is_empty(),
            "{step}"
        );
        assert!(
            step["thumbnail"]
                .as_str()
                .is_some_and(|t| t.starts_with("browser/shots/")),
            "a thumbnail: {step}"
        );
        kinds.push(step["kind"].as_str().unwrap_or_default().to_owned());
    }
    assert_eq!(kinds, ["navigate", "read", "screenshot"]);
    watched.client.finish().await;
}

/// PROTO-2 (issue 28): `permission.requested.browser` reaches the panel's live socket
/// through the gateway's EventSink, beside the question's card, not only in golden JSON.
#[tokio::test(flavor = "multi_thread")]
async fn proto_2_permission_requested_reaches_the_live_socket() {
    let (_pages, _home, mut watched, page) = opened("counter.html").await;
    let cookie = watched.sign_in().await;
    let mut socket = join(watched.port, &cookie, "mcp-stdio").await;
    let add = crate::support::ref_of(&page, "button \"Add\"");
    let call = watched
        .client
        .send_request(
            "tools/call",
            json!({ "name": "browser_click", "arguments": { "ref": add } }),
        )
        .await;
    let asked = next_event(&mut socket, "permission.requested.browser").await;
    assert_eq!(asked["kind"], "site", "{asked}");
    assert!(
        asked["site"]
            .as_str()
            .is_some_and(|s| s.starts_with("127.0.0.1")),
        "{asked}"
    );
    assert_eq!(asked["lendsSignIn"], false, "{asked}");
    let card = next_event(&mut socket, "question").await;
    send(
        &mut socket,
        json!({ "type": "answer", "id": card["id"], "choice": "thisChat" }).to_string(),
    )
    .await;
    let _ = answer_to(&mut watched.client, call).await;
    watched.client.finish().await;
}
