//! The live view inline in the chat through a real gateway (issue 31): over stdio, a
//! client that declares MCP Apps calls the app-only tools as its host would for the view,
//! with the sign-in link the person got on standard error.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use conch_fixtures::FixtureServer;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::support::{StdioClient, gateway};

/// The apps extension in a client's capabilities.
fn apps() -> Value {
    json!({ "extensions": { "io.modelcontextprotocol/ui": { "mimeTypes": ["text/html;profile=mcp-app"] } } })
}

/// A tool call's result.
async fn call(client: &mut StdioClient, name: &str, arguments: Value) -> Value {
    let answer = client
        .request(
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
        )
        .await;
    answer["result"].clone()
}

/// Looks until `done` holds for a look (within 60 s); gives that look.
async fn look_until(client: &mut StdioClient, grant: &str, done: impl Fn(&Value) -> bool) -> Value {
    let started = Instant::now();
    let mut after = 0;
    loop {
        let look = call(
            client,
            "live_look",
            json!({ "grant": grant, "after": after }),
        )
        .await;
        assert_eq!(look["isError"], false, "{look}");
        let seen = look["structuredContent"].clone();
        if done(&seen) {
            return seen;
        }
        after = seen["seq"].as_u64().unwrap_or(after);
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the view never showed it: {seen:.300}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Issue 31, LIVE-8, PERM-3, SEC-7: the person signs in to the inline view with the
/// panel's link, answers the site question's card there, sees frames of the fixture
/// page, takes over and types a canary into its field, and hands back; the agent's page
/// has the letters, while the canary is in no result, the standard error or the log. The
/// model's call without the grant was refused and took nothing over.
#[tokio::test(flavor = "multi_thread")]
async fn live_8_the_inline_view_signs_in_answers_shows_frames_takes_over_and_types() {
    let canary = "CanaryInline7f3a";
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut command = gateway(
        home.path(),
        &["mcp", "--panel-port", "0", "--allow-localhost"],
    );
    command.env("RUST_LOG", "debug");
    let mut client = StdioClient::start_with(command, apps()).await;
    // Standard error, kept whole, and the sign-in link from it.
    let stderr = client.child.stderr.take().unwrap();
    let said = Arc::new(Mutex::new(String::new()));
    let (link_tx, link_rx) = tokio::sync::oneshot::channel();
    let reader = tokio::spawn({
        let said = Arc::clone(&said);
        async move {
            let mut lines = BufReader::new(stderr).lines();
            let mut link_tx = Some(link_tx);
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some((_, link)) = line.split_once("watch and take over at ")
                    && let Some(tx) = link_tx.take()
                {
                    let _ = tx.send(link.trim().to_owned());
                }
                said.lock().unwrap().push_str(&line);
                said.lock().unwrap().push('\n');
            }
        }
    });
    let link = tokio::time::timeout(Duration::from_secs(30), link_rx)
        .await
        .expect("the sign-in link within 30 s")
        .unwrap();

    // The model tries first: refused, and nothing is taken over.
    let refused = call(&mut client, "live_take_over", json!({})).await;
    assert_eq!(refused["isError"], true, "{refused}");

    // The agent opens the page and clicks its field: the first act on the site waits
    // on the site question's card (PERM-3).
    let page = client.open(&server.url("person-typing.html")).await;
    let field = crate::support::ref_of(&page, "Password");
    let open_id = client
        .send_request(
            "tools/call",
            json!({ "name": "browser_click", "arguments": { "ref": field } }),
        )
        .await;
    let signed = call(&mut client, "live_sign_in", json!({ "code": link })).await;
    assert_eq!(signed["isError"], false, "{signed}");
    let grant = signed["structuredContent"]["grant"]
        .as_str()
        .unwrap()
        .to_owned();
    let seen = look_until(&mut client, &grant, |s| {
        s["cards"].as_array().is_some_and(|c| !c.is_empty())
    })
    .await;
    let card = &seen["cards"][0];
    assert!(
        card["choices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "thisChat"),
        "{card}"
    );
    let answered = call(
        &mut client,
        "live_answer",
        json!({ "grant": grant, "id": card["id"], "choice": "thisChat" }),
    )
    .await;
    assert_eq!(answered["isError"], false, "{answered}");
    // The page's frames come.
    let seen = look_until(&mut client, &grant, |s| {
        s["frame"].as_str().is_some_and(|f| f.len() > 1000)
    })
    .await;
    assert!(
        seen["frame"].as_str().unwrap().starts_with("/9j/"),
        "a JPEG"
    );
    while !client.transcript.contains(&format!("\"id\":{open_id},")) {
        call(
            &mut client,
            "live_look",
            json!({ "grant": grant, "after": u64::MAX }),
        )
        .await;
    }

    // The person takes over and types into the focused field; the agent waits.
    let took = call(&mut client, "live_take_over", json!({ "grant": grant })).await;
    assert_eq!(took["isError"], false, "{took}");
    let typed = call(
        &mut client,
        "live_input",
        json!({ "grant": grant, "input": { "type": "text", "text": canary } }),
    )
    .await;
    assert_eq!(typed["isError"], false, "{typed}");
    look_until(&mut client, &grant, |s| s["status"]["driver"] == "person").await;
    let back = call(&mut client, "live_hand_back", json!({ "grant": grant })).await;
    assert_eq!(back["isError"], false, "{back}");
    let letters = format!("{} letters typed.", canary.len());
    let started = Instant::now();
    loop {
        let (page, _) = client.call("browser_read", json!({})).await;
        if page.contains(&letters) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the person's typing never reached the page: {page}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let transcript = client.transcript.clone();
    client.finish().await;
    let _ = tokio::time::timeout(Duration::from_secs(10), reader).await;
    let log = std::fs::read_to_string(home.path().join("gateway.log")).unwrap_or_default();
    let stderr = said.lock().unwrap().clone();
    for (what, text) in [
        ("a result", &transcript),
        ("standard error", &stderr),
        ("the log", &log),
    ] {
        assert!(!text.contains(canary), "the canary is in {what}");
    }
    assert!(
        log.contains("inline live view"),
        "the log says nothing of it"
    );
}
