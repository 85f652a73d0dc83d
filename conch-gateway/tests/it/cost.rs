//! What each result costs, on the gateway (issue 31): `--budget-chars`, the running
//! total in each result, in the status and on the panel's list, and the person's
//! per-conversation budget, which only the signed-in panel can set.

use conch_fixtures::FixtureServer;
use serde_json::{Value, json};

use crate::live::{Watched, get};
use crate::support::door_request;

/// The `_meta` cost of a `tools/call` answer.
fn cost(answer: &Value) -> &Value {
    &answer["result"]["_meta"]["dev.conch/cost"]
}

/// Issue 31: `mcp --budget-chars N` gives every conversation that budget; each result
/// says what it cost and the total; the status and the panel's list say it in one line;
/// the signed-in person (from the panel's own origin) sets a conversation's own budget,
/// and the next step that would pass it is a sentence instead of the page.
#[tokio::test(flavor = "multi_thread")]
async fn cost_4_budget_chars_and_the_persons_budget_hold_on_the_gateway() {
    let pages = FixtureServer::start().await.expect("fixture server");
    let home = tempfile::tempdir().expect("temp home");
    let mut watched = Watched::start(home.path(), &["--budget-chars", "100000"]).await;
    let port = watched.port;
    let open = json!({ "name": "browser_open", "arguments": { "url": pages.url("counter.html") } });
    let answer = watched.client.request("tools/call", open).await;
    let first = cost(&answer).clone();
    assert_eq!(first["budgetChars"], 100_000, "{answer}");
    assert!(first["chars"].as_u64().unwrap() > 0, "{answer}");
    assert_eq!(first["total"]["chars"], first["chars"], "{answer}");

    let signed = watched.sign_in().await;
    let (status, _, body) = get(port, "/api/browser/conversations", &signed.headers()).await;
    assert_eq!(status, 200, "{body}");
    let list: Value = serde_json::from_str(&body).expect("JSON");
    let conversation = &list["conversations"][0];
    let id = conversation["id"].as_str().expect("an id").to_owned();
    assert_eq!(conversation["budgetChars"], 100_000, "{body}");
    assert_eq!(conversation["spentChars"], first["chars"], "{body}");
    let line = conversation["spent"].as_str().expect("one line");
    assert!(
        line.contains("characters (about ") && !line.contains('\n'),
        "{line}"
    );
    let (status, _, body) = get(port, "/api/browser/status", &signed.headers()).await;
    assert_eq!(status, 200, "{body}");
    let status_view: Value = serde_json::from_str(&body).expect("JSON");
    let said = status_view["spent"].as_str().expect("one line");
    assert!(said.starts_with("1 conversation: "), "{said}");

    // Only the panel's own pages may set it: both factors and the own Origin.
    let path = format!("/api/browser/conversations/{id}/budget");
    let own = format!("http://127.0.0.1:{port}");
    let [cookie, token] = signed.headers();
    let body = r#"{"chars": 10}"#;
    for headers in [
        vec![cookie, token],
        vec![cookie, token, ("Origin", "http://127.0.0.1:1")],
        vec![("Origin", own.as_str())],
    ] {
        let (status, _, said) = door_request(port, "PUT", &path, &headers, body).await;
        assert!(
            status == 401 || status == 403,
            "{headers:?}: {status} {said}"
        );
    }
    let with_origin = [cookie, token, ("Origin", own.as_str())];
    let (status, _, said) =
        door_request(port, "PUT", &path, &with_origin, r#"{"chars": "lots"}"#).await;
    assert_eq!(status, 400, "{said}");
    let (status, _, said) = door_request(
        port,
        "PUT",
        "/api/browser/conversations/nobody/budget",
        &with_origin,
        body,
    )
    .await;
    assert_eq!(status, 404, "{said}");
    let (status, _, said) = door_request(port, "PUT", &path, &with_origin, body).await;
    assert_eq!(status, 200, "{said}");
    let set: Value = serde_json::from_str(&said).expect("JSON");
    assert_eq!(set["budgetChars"], 10, "{said}");

    let read = json!({ "name": "browser_read", "arguments": {} });
    let answer = watched.client.request("tools/call", read).await;
    assert_eq!(cost(&answer)["withheld"], true, "{answer}");
    assert_eq!(cost(&answer)["budgetChars"], 10, "{answer}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("is withheld"), "{text}");
    watched.client.finish().await;
}
