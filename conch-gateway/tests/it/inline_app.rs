//! The live view inline in the chat through a real gateway (issue 31): over stdio, a
//! client that declares MCP Apps calls the app-only tools as its host would for the view,
//! with the sign-in link the person got on standard error; over new-era HTTP, the view
//! passes the conversation handle its opening result named.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use conch_fixtures::FixtureServer;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::support::{StdioClient, gateway};

/// A gateway in `mcp` on `home` with `extra` arguments, whose client declares MCP Apps:
/// the client, the sign-in link it printed, its standard error as it comes (kept whole),
/// and the task reading it.
pub(crate) async fn start_inline(
    home: &std::path::Path,
    extra: &[&str],
) -> (
    StdioClient,
    String,
    Arc<Mutex<String>>,
    tokio::task::JoinHandle<()>,
) {
    let mut args = vec!["mcp", "--panel-port", "0", "--allow-localhost"];
    args.extend_from_slice(extra);
    let mut command = gateway(home, &args);
    command.env("RUST_LOG", "debug");
    let mut client = StdioClient::start_with(command, apps()).await;
    let stderr = client.child.stderr.take().expect("stderr is piped");
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
                let mut kept = said.lock().unwrap_or_else(PoisonError::into_inner);
                kept.push_str(&line);
                kept.push('\n');
            }
        }
    });
    let link = tokio::time::timeout(Duration::from_secs(30), link_rx)
        .await
        .expect("the sign-in link within 30 s")
        .expect("the link is sent");
    (client, link, said, reader)
}

/// The apps extension in a client's capabilities.
pub(crate) fn apps() -> Value {
    json!({ "extensions": { "io.modelcontextprotocol/ui": { "mimeTypes": ["text/html;profile=mcp-app"] } } })
}

/// The grant a `live_sign_in` result `signed` carries (its structured content).
pub(crate) fn grant_of(signed: &Value) -> String {
    signed["structuredContent"]["grant"]
        .as_str()
        .unwrap_or_else(|| panic!("a grant: {signed}"))
        .to_owned()
}

/// A tool call's result.
pub(crate) async fn call(client: &mut StdioClient, name: &str, arguments: Value) -> Value {
    let answer = client
        .request(
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
        )
        .await;
    answer["result"].clone()
}

/// Looks until `done` holds for a look (within 60 s); gives that look.
pub(crate) async fn look_until(
    client: &mut StdioClient,
    grant: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
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
            "the view never showed it: {}",
            without_frame(&seen)
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
    let (mut client, link, said, reader) = start_inline(home.path(), &[]).await;

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
    let grant = grant_of(&signed);
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
    person_types(&mut client, &grant, canary).await;

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

/// A look without its frame (its length instead), to show in a failure.
pub(crate) fn without_frame(look: &Value) -> Value {
    let mut look = look.clone();
    look["frame"] = json!(look["frame"].as_str().map(str::len));
    look
}

/// The person takes over through the inline view, types `canary` into the focused field
/// and hands back; the agent's next reads see every letter on the page.
async fn person_types(client: &mut StdioClient, grant: &str, canary: &str) {
    let took = call(client, "live_take_over", json!({ "grant": grant })).await;
    assert_eq!(took["isError"], false, "{took}");
    let typed = call(
        client,
        "live_input",
        json!({ "grant": grant, "input": { "type": "text", "text": canary } }),
    )
    .await;
    assert_eq!(typed["isError"], false, "{typed}");
    look_until(client, grant, |s| s["status"]["driver"] == "person").await;
    let back = call(client, "live_hand_back", json!({ "grant": grant })).await;
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
}

/// The response to request `id`: read already (into the transcript), or the next one.
pub(crate) async fn answer_of(client: &mut StdioClient, id: i64) -> Value {
    let read = client
        .transcript
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|m| m["id"] == json!(id) && m.get("method").is_none());
    match read {
        Some(answer) => answer,
        None => crate::live::answer_to(client, id).await,
    }
}

/// The text of a tool result.
pub(crate) fn said_by(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect()
}

/// LIVE-18, LIVE-8, SEC-7 (issue 31), the seam of the inline view and the panel's
/// sign-out, both acting at once: the person holds the wheel through the inline view and
/// types, while in a second window, watching the same conversation on the panel, they
/// sign out. The typing that got through is on the page, all of it; the next inline call
/// is refused with a sentence; nothing typed after (a canary) reaches the page; and the
/// wheel goes back to the agent after conch-live's grace, as when the panel's own socket
/// closes mid-takeover, so the agent's waiting read goes on and says why.
#[tokio::test(flavor = "multi_thread")]
async fn live_18_signing_out_of_the_panel_mid_takeover_ends_the_inline_grant() {
    let canary = "CanaryAfterSignOut9c2e";
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    // Full trust: the agent's click on the field asks nothing.
    let (mut client, link, said, reader) = start_inline(home.path(), &["--trust", "full"]).await;
    let port: u16 = link
        .strip_prefix("http://127.0.0.1:")
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("a loopback link: {link}"));
    let page = client.open(&server.url("person-typing.html")).await;
    let field = crate::support::ref_of(&page, "Password");
    client
        .call_ok("browser_click", json!({ "ref": field }))
        .await;

    // The inline view: signed in, watching, holding the wheel.
    let signed = call(&mut client, "live_sign_in", json!({ "code": link })).await;
    let grant = grant_of(&signed);
    look_until(&mut client, &grant, |s| {
        s["frame"].as_str().is_some_and(|f| f.len() > 1000)
    })
    .await;
    let took = call(&mut client, "live_take_over", json!({ "grant": grant })).await;
    assert_eq!(took["isError"], false, "{took}");
    look_until(&mut client, &grant, |s| s["status"]["driver"] == "person").await;

    // The panel in a second window, on the same conversation, signed in with its own code.
    let window = crate::live::signed_in(port, &crate::live::fresh_code(home.path()).await).await;
    let mut socket = crate::live::join(port, &window, "mcp-stdio").await;
    crate::live::next_event(&mut socket, "status").await;
    // The agent's read waits while the person drives.
    let read = client
        .send_request(
            "tools/call",
            json!({ "name": "browser_read", "arguments": {} }),
        )
        .await;

    // Both at once: the person types a letter at a time inline while the window signs out.
    let own = format!("http://127.0.0.1:{port}");
    let sign_out = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        let mut headers = window.headers().to_vec();
        headers.push(("Origin", own.as_str()));
        crate::support::door_request(port, "DELETE", "/api/browser/session", &headers, "").await
    });
    let mut accepted = 0usize;
    let started = Instant::now();
    let refusal = loop {
        let typed = call(
            &mut client,
            "live_input",
            json!({ "grant": grant, "input": { "type": "text", "text": "a" } }),
        )
        .await;
        if typed["isError"] == true {
            break typed;
        }
        accepted += 1;
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the inline view still types after the sign-out"
        );
    };
    let signed_out = Instant::now();
    let (status, _, body) = sign_out.await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(accepted > 0, "nothing was typed before the sign-out");
    assert_eq!(
        said_by(&refusal),
        conch_tools::app::REFUSED_SIGNED_OUT,
        "{refusal}"
    );
    assert_eq!(refusal["structuredContent"]["signedOut"], true, "{refusal}");
    // Nothing after gets through: the canary, a look, a hand back.
    for (name, args) in [
        (
            "live_input",
            json!({ "grant": grant, "input": { "type": "text", "text": canary } }),
        ),
        ("live_look", json!({ "grant": grant })),
        ("live_hand_back", json!({ "grant": grant })),
    ] {
        let refused = call(&mut client, name, args).await;
        assert_eq!(
            said_by(&refused),
            conch_tools::app::REFUSED_SIGNED_OUT,
            "{name}: {refused}"
        );
    }

    // The wheel goes back to the agent: its read goes on, and says why.
    let answer = tokio::time::timeout(Duration::from_secs(30), answer_of(&mut client, read))
        .await
        .expect("the wheel came back to the agent within 30 s");
    // As soon as a closed panel socket's would: conch-live's grace (3 s), not the
    // inline view's own 20 s without a look.
    assert!(
        signed_out.elapsed() < Duration::from_secs(12),
        "the wheel came back only after {:?}",
        signed_out.elapsed()
    );
    let text = said_by(&answer["result"]);
    assert!(text.contains("The person used the browser"), "{text}");
    assert!(
        text.contains(&format!("{accepted} letters typed.")),
        "every letter typed before the sign-out, and none after ({accepted}): {text}"
    );

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
}

/// A new-era (2026-07-28) request of a client that declares MCP Apps.
fn modern_apps(method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": apps(),
    });
    json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params })
}

/// A new-era tool call over HTTP, as the host makes it for the view or the model: its
/// result, and the whole response is added to `seen`.
async fn call_http(
    served: &crate::http::Served,
    seen: &mut String,
    name: &str,
    arguments: Value,
) -> Value {
    let message = modern_apps(
        "tools/call",
        json!({ "name": name, "arguments": arguments }),
    );
    let headers = crate::http::modern_headers(served, &message);
    let (status, _, answer) = crate::http::post_modern(served, "/mcp", &headers, &message).await;
    assert_eq!(status, 200, "{name}: {answer}");
    seen.push_str(&answer.to_string());
    answer["result"].clone()
}

/// Issue 31, LIVE-8, LIVE-15, SEC-7: over new-era HTTP (no protocol sessions; a
/// conversation is a handle), the inline view works in its own conversation: every
/// result names its conversation's handle in `_meta`, which the view passes with each
/// app-only call; without a handle the view's call is refused and starts nothing (the
/// code is not used up); its grant used with another conversation's handle is refused
/// and nothing acts there; in its own it shows frames, takes over, types and hands back.
#[tokio::test(flavor = "multi_thread")]
async fn issue_31_the_inline_view_works_over_new_era_http_with_its_conversations_handle() {
    let canary = "CanaryModernInline4b1d";
    let pages = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let served =
        crate::http::Served::start(home.path(), &["--allow-localhost", "--trust", "full"]).await;
    let mut seen = String::new();
    let url = pages.url("person-typing.html");
    // Two conversations on the same page: the view's, and another.
    let mut handles = Vec::new();
    let mut first_look = String::new();
    for _ in 0..2 {
        let opened = call_http(&served, &mut seen, "browser_open", json!({ "url": url })).await;
        assert_eq!(opened["isError"], false, "{opened}");
        if first_look.is_empty() {
            first_look = said_by(&opened);
        }
        let handle = opened["_meta"]["dev.conch/conversation"]
            .as_str()
            .unwrap_or_else(|| panic!("no handle: {opened}"))
            .to_owned();
        handles.push(handle);
    }
    let (mine, other) = (handles[0].clone(), handles[1].clone());
    // A later result names its conversation too: any result may open the view.
    let look = call_http(
        &served,
        &mut seen,
        "browser_read",
        json!({ "conversation": mine }),
    )
    .await;
    assert_eq!(
        look["_meta"]["dev.conch/conversation"],
        mine.as_str(),
        "{look}"
    );
    let field = crate::support::ref_of(&first_look, "Password");
    let clicked = call_http(
        &served,
        &mut seen,
        "browser_click",
        json!({ "ref": field, "conversation": mine }),
    )
    .await;
    assert_eq!(clicked["isError"], false, "{clicked}");

    // Without a handle: refused, no conversation starts, and the code still works.
    let code = crate::live::fresh_code(home.path()).await;
    let bare = call_http(&served, &mut seen, "live_sign_in", json!({ "code": code })).await;
    assert_eq!(bare["isError"], true, "{bare}");
    assert_eq!(said_by(&bare), conch_tools::app::NEEDS_HANDLE, "{bare}");
    assert!(bare["_meta"]["dev.conch/conversation"].is_null(), "{bare}");
    let signed = call_http(
        &served,
        &mut seen,
        "live_sign_in",
        json!({ "code": code, "conversation": mine }),
    )
    .await;
    let grant = grant_of(&signed);

    // The grant with the other conversation's handle: refused, and nothing acts there.
    for (name, args) in [
        ("live_look", json!({})),
        ("live_take_over", json!({})),
        (
            "live_input",
            json!({ "input": { "type": "text", "text": canary } }),
        ),
        ("live_hand_back", json!({})),
    ] {
        let mut args = args;
        args["grant"] = json!(grant);
        args["conversation"] = json!(other);
        let refused = call_http(&served, &mut seen, name, args).await;
        assert_eq!(
            said_by(&refused),
            conch_tools::app::REFUSED_OTHER_CONVERSATION,
            "{name}: {refused}"
        );
    }

    // In its own conversation: frames, take over, type, hand back.
    let started = Instant::now();
    let mut after = 0;
    loop {
        let look = call_http(
            &served,
            &mut seen,
            "live_look",
            json!({ "grant": grant, "after": after, "conversation": mine }),
        )
        .await;
        assert_eq!(look["isError"], false, "{look}");
        let frame = look["structuredContent"]["frame"]
            .as_str()
            .unwrap_or_default();
        if frame.len() > 1000 {
            assert!(frame.starts_with("/9j/"), "a JPEG");
            break;
        }
        after = look["structuredContent"]["seq"].as_u64().unwrap_or(after);
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no frame: {look:.300}"
        );
    }
    for (name, args) in [
        ("live_take_over", json!({})),
        (
            "live_input",
            json!({ "input": { "type": "text", "text": canary } }),
        ),
        ("live_hand_back", json!({})),
    ] {
        let mut args = args;
        args["grant"] = json!(grant);
        args["conversation"] = json!(mine);
        let done = call_http(&served, &mut seen, name, args).await;
        assert_eq!(done["isError"], false, "{name}: {done}");
    }
    let letters = format!("{} letters typed.", canary.len());
    let started = Instant::now();
    loop {
        let read = call_http(
            &served,
            &mut seen,
            "browser_read",
            json!({ "conversation": mine }),
        )
        .await;
        if said_by(&read).contains(&letters) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the person's typing never reached the page: {read}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let untouched = call_http(
        &served,
        &mut seen,
        "browser_read",
        json!({ "conversation": other }),
    )
    .await;
    assert!(
        said_by(&untouched).contains("0 letters typed."),
        "the other conversation's page was typed into: {untouched}"
    );
    let log = std::fs::read_to_string(home.path().join("gateway.log")).unwrap_or_default();
    for (what, text) in [("a response", &seen), ("the log", &log)] {
        assert!(!text.contains(canary), "the canary is in {what}");
    }
}

/// SEC-7, LIVE-8 (issue 31), the seam of the inline view and another watcher of the same
/// conversation: while the panel watches in a second window, the person takes over
/// inline and types a canary, which reaches the page; the panel's socket hears the
/// takeover and the hand back (it is listening), but never the canary, in no event.
#[tokio::test(flavor = "multi_thread")]
async fn sec_7_a_canary_typed_inline_is_in_no_event_of_another_watcher() {
    use futures_util::StreamExt;
    use tokio_tungstenite::tungstenite::Message;

    let canary = "CanaryInlineWatcher5d7b";
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let (mut client, link, _said, reader) = start_inline(home.path(), &["--trust", "full"]).await;
    let port: u16 = link
        .strip_prefix("http://127.0.0.1:")
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("a loopback link: {link}"));
    let page = client.open(&server.url("person-typing.html")).await;
    let field = crate::support::ref_of(&page, "Password");
    client
        .call_ok("browser_click", json!({ "ref": field }))
        .await;

    // The panel's window watches the conversation, keeping every text message it hears.
    let window = crate::live::signed_in(port, &crate::live::fresh_code(home.path()).await).await;
    let mut socket = crate::live::join(port, &window, "mcp-stdio").await;
    let heard = Arc::new(Mutex::new(Vec::<String>::new()));
    let listening = tokio::spawn({
        let heard = Arc::clone(&heard);
        async move {
            while let Some(Ok(message)) = socket.next().await {
                if let Message::Text(text) = message {
                    heard
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(text.to_string());
                }
            }
        }
    });

    let signed = call(&mut client, "live_sign_in", json!({ "code": link })).await;
    let grant = grant_of(&signed);
    person_types(&mut client, &grant, canary).await;
    // The window heard the wheel go to the person and back.
    let started = Instant::now();
    loop {
        let drivers: Vec<String> = heard
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(|text| serde_json::from_str::<Value>(text).ok())
            .filter(|event| event["type"] == "status")
            .filter_map(|event| event["driver"].as_str().map(str::to_owned))
            .collect();
        let person = drivers.iter().position(|d| d == "person");
        if person.is_some_and(|at| drivers[at..].iter().any(|d| d == "agent")) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the window never heard the takeover and the hand back: {drivers:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    listening.abort();
    let heard = heard.lock().unwrap_or_else(PoisonError::into_inner).clone();
    assert!(!heard.is_empty());
    for text in &heard {
        assert!(!text.contains(canary), "the canary is in an event: {text}");
    }
    client.finish().await;
    reader.abort();
}
