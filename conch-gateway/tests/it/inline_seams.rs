//! The live view inline in the chat at its seams (issues 31 and 32): over old-era HTTP,
//! where each `Mcp-Session-Id` is a conversation and no handle is passed; on a pool of
//! remote browsers whose address dies while the person holds the wheel through the view;
//! and beside the panel, both watching one conversation at once.

use std::time::{Duration, Instant};

use conch_fixtures::FixtureServer;
use conch_fixtures::browser::Standalone;
use serde_json::{Value, json};

use crate::http::{Served, post_to};
use crate::inline_app::{
    answer_of, apps, call, grant_of, look_until, said_by, start_inline, without_frame,
};
use crate::live::{Socket, fresh_code, join, next_event, send, signed_in};
use crate::support::StdioClient;

/// The old era's newest protocol version.
const OLD_ERA: &str = "2025-11-25";

/// Opens an old-era session at `/mcp` whose client declares MCP Apps when `with_apps`;
/// gives its `Mcp-Session-Id`.
async fn old_session(served: &Served, with_apps: bool) -> String {
    let capabilities = if with_apps { apps() } else { json!({}) };
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": OLD_ERA, "capabilities": capabilities,
        "clientInfo": { "name": "t", "version": "1" } } });
    let bearer = served.bearer();
    let (status, head, body) = post_to(
        served.port,
        "/mcp",
        &[("Authorization", bearer.as_str())],
        &init.to_string(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    head.lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .map(|id| id.trim().to_owned())
        .unwrap_or_else(|| panic!("a session id: {head}"))
}

/// One old-era request in `session`: the whole answer, whose body is added to `seen`.
async fn old_request(
    served: &Served,
    session: &str,
    seen: &mut String,
    method: &str,
    params: Value,
) -> Value {
    let message = json!({ "jsonrpc": "2.0", "id": 2, "method": method, "params": params });
    let bearer = served.bearer();
    let headers = [
        ("Authorization", bearer.as_str()),
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", OLD_ERA),
    ];
    let (status, _, body) = post_to(served.port, "/mcp", &headers, &message.to_string()).await;
    assert_eq!(status, 200, "{method}: {body}");
    seen.push_str(&body);
    serde_json::from_str(&body).unwrap_or_else(|_| panic!("not JSON: {body}"))
}

/// An old-era tool call in `session`: its result.
async fn old_call(
    served: &Served,
    session: &str,
    seen: &mut String,
    name: &str,
    arguments: Value,
) -> Value {
    let params = json!({ "name": name, "arguments": arguments });
    old_request(served, session, seen, "tools/call", params).await["result"].clone()
}

/// Every tool `tools/list` gives in `session`, page after page.
async fn old_tools(served: &Served, session: &str, seen: &mut String) -> Vec<Value> {
    let mut tools = Vec::new();
    let mut params = json!({});
    loop {
        let page = old_request(served, session, seen, "tools/list", params).await;
        tools.extend(
            page["result"]["tools"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        );
        match page["result"]["nextCursor"].as_str() {
            Some(cursor) => params = json!({ "cursor": cursor }),
            None => return tools,
        }
    }
}

/// Issue 31, LIVE-8, PERM-3, SEC-7: over old-era HTTP (2025-11-25), where each
/// `Mcp-Session-Id` is its own conversation and no handle is passed, the inline view
/// works in the session that opened it. Its app-only tools are listed, for the app only
/// and with no handle argument, to a client with the MCP Apps extension and to no other;
/// the model's call without a grant is refused and takes nothing over; a client without
/// the extension can't sign in with the person's code, nor use it up; the grant used from
/// another session is refused and nothing acts there; in its own session the view shows
/// frames, takes over, types and hands back; the canary is in no response and not in the
/// log.
#[tokio::test(flavor = "multi_thread")]
async fn issue_31_the_inline_view_works_over_old_era_http_in_its_own_session() {
    let canary = "CanaryOldEraInline8e2c";
    let pages = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let served = Served::start(home.path(), &["--allow-localhost", "--trust", "full"]).await;
    let mut seen = String::new();
    let url = pages.url("person-typing.html");
    let mine = old_session(&served, true).await;
    let other = old_session(&served, true).await;
    let plain = old_session(&served, false).await;

    // Listed to the app only, with no handle: the session is the conversation.
    let tools = old_tools(&served, &mine, &mut seen).await;
    for name in conch_tools::app::APP_ONLY_TOOLS {
        let tool = tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} is not listed: {tools:?}"));
        assert_eq!(tool["_meta"]["ui"]["visibility"], json!(["app"]), "{tool}");
        assert!(
            tool["inputSchema"]["properties"]
                .get("conversation")
                .is_none(),
            "{tool}"
        );
    }
    let plain_tools = old_tools(&served, &plain, &mut seen).await;
    assert!(
        plain_tools
            .iter()
            .all(|t| !conch_tools::app::is_app_only(t["name"].as_str().unwrap_or_default())),
        "listed to a client without the extension: {plain_tools:?}"
    );

    // Two conversations on the same page; the agent's own clicks its field.
    let mut first_look = String::new();
    for session in [&mine, &other] {
        let opened = old_call(
            &served,
            session,
            &mut seen,
            "browser_open",
            json!({ "url": url }),
        )
        .await;
        assert_eq!(opened["isError"], false, "{opened}");
        if first_look.is_empty() {
            first_look = said_by(&opened);
        }
    }
    let field = crate::support::ref_of(&first_look, "Password");
    let clicked = old_call(
        &served,
        &mine,
        &mut seen,
        "browser_click",
        json!({ "ref": field }),
    )
    .await;
    assert_eq!(clicked["isError"], false, "{clicked}");

    // The model tries: refused, and nothing is taken over.
    let refused = old_call(&served, &mine, &mut seen, "live_take_over", json!({})).await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(
        said_by(&refused),
        conch_tools::app::REFUSED_WITHOUT_GRANT,
        "{refused}"
    );
    // A client without the extension: the person's code signs nothing in, and still works.
    let code = fresh_code(home.path()).await;
    let bare = old_request(
        &served,
        &plain,
        &mut seen,
        "tools/call",
        json!({ "name": "live_sign_in", "arguments": { "code": code } }),
    )
    .await;
    assert!(
        bare["result"]["structuredContent"]["grant"].is_null()
            && bare["result"]["isError"] != false,
        "{bare}"
    );
    let signed = old_call(
        &served,
        &mine,
        &mut seen,
        "live_sign_in",
        json!({ "code": code }),
    )
    .await;
    let grant = grant_of(&signed);

    // The grant from another session: refused, and nothing acts there.
    for (name, args) in [
        ("live_look", json!({})),
        ("live_take_over", json!({})),
        (
            "live_input",
            json!({ "input": { "type": "text", "text": canary } }),
        ),
        ("live_hand_back", json!({})),
        ("live_answer", json!({ "id": "q1", "choice": "thisChat" })),
    ] {
        let mut args = args;
        args["grant"] = json!(grant);
        let refused = old_call(&served, &other, &mut seen, name, args).await;
        assert_eq!(
            said_by(&refused),
            conch_tools::app::REFUSED_OTHER_CONVERSATION,
            "{name}: {refused}"
        );
    }

    // In its own session: frames (the agent still at the wheel), take over, type, hand back.
    let started = Instant::now();
    let mut after = 0;
    loop {
        let look = old_call(
            &served,
            &mine,
            &mut seen,
            "live_look",
            json!({ "grant": grant, "after": after }),
        )
        .await;
        assert_eq!(look["isError"], false, "{look}");
        let now = &look["structuredContent"];
        if now["frame"].as_str().is_some_and(|f| f.len() > 1000) {
            assert_eq!(
                now["status"]["driver"],
                "agent",
                "the model took over: {}",
                without_frame(now)
            );
            break;
        }
        after = now["seq"].as_u64().unwrap_or(after);
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no frame: {}",
            without_frame(&look["structuredContent"])
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
        let done = old_call(&served, &mine, &mut seen, name, args).await;
        assert_eq!(done["isError"], false, "{name}: {done}");
    }
    let letters = format!("{} letters typed.", canary.len());
    let started = Instant::now();
    loop {
        let read = old_call(&served, &mine, &mut seen, "browser_read", json!({})).await;
        if said_by(&read).contains(&letters) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the person's typing never reached the page: {read}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The other conversation: untouched, and its agent never waits for a person.
    let untouched = tokio::time::timeout(
        Duration::from_secs(30),
        old_call(&served, &other, &mut seen, "browser_read", json!({})),
    )
    .await
    .expect("the other conversation's read waited: it was taken over");
    assert!(
        said_by(&untouched).contains("0 letters typed."),
        "the other conversation's page was typed into: {untouched}"
    );
    let log = std::fs::read_to_string(home.path().join("gateway.log")).unwrap_or_default();
    for (what, text) in [("a response", &seen), ("the log", &log)] {
        assert!(!text.contains(canary), "the canary is in {what}");
    }
}

/// The panel's port in a sign-in link.
fn port_of(link: &str) -> u16 {
    link.strip_prefix("http://127.0.0.1:")
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("a loopback link: {link}"))
}

/// The next `browser.status` the panel's socket hears that says the browser is away.
async fn next_away(socket: &mut Socket) -> Value {
    loop {
        let status = next_event(socket, "browser.status").await;
        if status["running"] == false {
            return status;
        }
    }
}

/// Whether the agent's request `id` was answered already.
fn answered(client: &StdioClient, id: i64) -> bool {
    client.transcript.contains(&format!("\"id\":{id},"))
}

/// Waits until the inline view's frames are of the page again after the browser was away,
/// and checks the wheel is still the person's and the agent's read `read` still waits.
async fn back_with_the_wheel(client: &mut StdioClient, grant: &str, read: i64) {
    let back = look_until(client, grant, |s| {
        s["browser"]["away"] == false && s["frame"].as_str().is_some_and(|f| f.len() > 1000)
    })
    .await;
    assert_eq!(
        back["status"]["driver"],
        "person",
        "{}",
        without_frame(&back)
    );
    assert!(
        !answered(client, read),
        "the agent acted while the person drove"
    );
}

/// The person types `text` (five letters) through the inline view while the agent's read
/// `read` waits behind the wheel, then hands back: the read goes on, and what the agent
/// reads (that result and any further reads) comes to show the letters on the page.
async fn types_and_the_agent_goes_on(
    client: &mut StdioClient,
    grant: &str,
    read: i64,
    text: &str,
) -> String {
    let typed = call(
        client,
        "live_input",
        json!({ "grant": grant, "input": { "type": "text", "text": text } }),
    )
    .await;
    assert_eq!(typed["isError"], false, "{typed}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !answered(client, read),
        "the agent acted while the person drove"
    );
    let handed = call(client, "live_hand_back", json!({ "grant": grant })).await;
    assert_eq!(handed["isError"], false, "{handed}");
    let answer = tokio::time::timeout(Duration::from_secs(30), answer_of(client, read))
        .await
        .expect("the agent's read goes on after the hand back");
    let mut said = said_by(&answer["result"]);
    let started = Instant::now();
    while !said.contains("5 letters typed.") {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the person's typing never reached the reopened page: {said}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
        said.push_str(&client.call("browser_read", json!({})).await.0);
    }
    said
}

/// Issue 32, BE-4, LIVE-8, issue 31, the seam of the inline view and the pool: the person
/// holds the wheel through the inline view of a conversation placed on a pool of two
/// browsers, while the panel watches too, and the address the conversation is on dies.
/// The inline view is told with the panel's own sentence (the panel's socket hears the
/// same `browser.status`); its stale frame gives way to frames of the tabs reopened on the
/// other address; the wheel and the inline grant still hold, as on the panel (the person
/// types on the reopened page, the agent still waits); once they hand back, the agent's
/// read goes on there, and the agent is told its tabs were reopened.
#[tokio::test(flavor = "multi_thread")]
async fn be_4_an_address_dying_under_the_inline_views_hands_is_told_there_and_reopened() {
    let pages = FixtureServer::start().await.unwrap();
    let mut endpoints = [
        Some(Standalone::start().expect("a standalone Chromium")),
        Some(Standalone::start().expect("a standalone Chromium")),
    ];
    let addresses: Vec<(String, u16)> = endpoints
        .iter()
        .flatten()
        .map(|e| (e.http(), e.port()))
        .collect();
    let home = tempfile::tempdir().unwrap();
    let (ok, out, err) = crate::backend::backend(
        home.path(),
        &[
            "set",
            "pool",
            "--endpoint",
            &addresses[0].0,
            "--endpoint",
            &addresses[1].0,
        ],
        &[],
    )
    .await;
    assert!(ok, "{out} {err}");
    let (mut client, link, _said, reader) = start_inline(home.path(), &["--trust", "full"]).await;
    let port = port_of(&link);
    let url = pages.url("person-typing.html");
    client.open(&url).await;
    let mut on = None;
    for (index, (_, devtools)) in addresses.iter().enumerate() {
        if crate::backend::http_get(*devtools, "/json/list")
            .await
            .contains(&url)
        {
            on = Some(index);
        }
    }
    let on = on.unwrap_or_else(|| panic!("the page is on neither address of the pool"));

    // The inline view: signed in, watching, holding the wheel; the panel watches too.
    let signed = call(&mut client, "live_sign_in", json!({ "code": link })).await;
    let grant = grant_of(&signed);
    look_until(&mut client, &grant, |s| {
        s["frame"].as_str().is_some_and(|f| f.len() > 1000)
    })
    .await;
    let took = call(&mut client, "live_take_over", json!({ "grant": grant })).await;
    assert_eq!(took["isError"], false, "{took}");
    look_until(&mut client, &grant, |s| s["status"]["driver"] == "person").await;
    let window = signed_in(port, &fresh_code(home.path()).await).await;
    let mut socket = join(port, &window, "mcp-stdio").await;
    next_event(&mut socket, "status").await;
    let read = client
        .send_request(
            "tools/call",
            json!({ "name": "browser_read", "arguments": {} }),
        )
        .await;

    // The address dies under the person's hands.
    drop(endpoints[on].take());
    let told = look_until(&mut client, &grant, |s| s["browser"]["running"] == false).await;
    assert!(
        told["browser"]["told"].as_u64().is_some_and(|n| n >= 1),
        "{}",
        without_frame(&told)
    );
    let sentence = told["browser"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        sentence.contains("reopening this conversation's tabs"),
        "{}",
        without_frame(&told)
    );
    // The panel heard the same sentence (among what it was told of the browser).
    let heard = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if next_away(&mut socket).await["message"] == sentence.as_str() {
                return;
            }
        }
    })
    .await;
    assert!(heard.is_ok(), "the panel never heard: {sentence}");

    // The view comes back on the other address; the wheel and the grant still hold.
    back_with_the_wheel(&mut client, &grant, read).await;
    // The view may show its frames again on the move's own word, while the tabs still
    // reopen there.
    let (_, other) = &addresses[1 - on];
    let started = Instant::now();
    while !crate::backend::http_get(*other, "/json/list")
        .await
        .contains(&url)
    {
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the tab did not reopen on the other address"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The agent goes on there once they hand back, and is told.
    let said = types_and_the_agent_goes_on(&mut client, &grant, read, "moved").await;
    // One move is told once, naming where the tabs went, and not again as ERR-19's
    // note (whether the dying port still took a connection decides only the wording).
    assert_eq!(
        said.matches("so this conversation moved to the browser at")
            .count(),
        1,
        "the agent was not told once where its tabs were reopened: {said}"
    );
    assert!(!said.contains("Reopened a task's browser"), "{said}");
    client.finish().await;
    reader.abort();
}

/// The panel's socket hears who drives, until `driver` (within 30 s).
async fn panel_hears_driver(socket: &mut Socket, driver: &str) {
    let heard = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if next_event(socket, "status").await["driver"] == driver {
                return;
            }
        }
    })
    .await;
    assert!(heard.is_ok(), "the panel never heard the {driver} drive");
}

/// LIVE-8, LIVE-9, HAND-8, issue 31, the seam of the inline view and the panel on one
/// conversation: with the inline view open, the person takes over in the panel. The
/// inline view shows the wheel is the person's (no second takeover: its input goes to
/// the page at once), and its I'm done ends the takeover for both, the panel told and the
/// agent's waiting read going on. Taken over in the panel again, the panel's I'm done
/// ends it for the inline view too: its typing is refused until it takes over itself.
#[tokio::test(flavor = "multi_thread")]
async fn live_8_a_takeover_in_the_panel_shows_in_the_inline_view_and_either_ends_it() {
    let pages = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let (mut client, link, _said, reader) = start_inline(home.path(), &["--trust", "full"]).await;
    let port = port_of(&link);
    client.open(&pages.url("person-typing.html")).await;
    let signed = call(&mut client, "live_sign_in", json!({ "code": link })).await;
    let grant = grant_of(&signed);
    look_until(&mut client, &grant, |s| {
        s["frame"].as_str().is_some_and(|f| f.len() > 1000) && s["status"]["driver"] == "agent"
    })
    .await;
    let window = signed_in(port, &fresh_code(home.path()).await).await;
    let mut socket = join(port, &window, "mcp-stdio").await;
    panel_hears_driver(&mut socket, "agent").await;

    for round in ["the inline view's I'm done", "the panel's I'm done"] {
        // The person takes over in the panel; the agent's read waits.
        send(&mut socket, json!({ "type": "takeover" }).to_string()).await;
        panel_hears_driver(&mut socket, "person").await;
        let read = client
            .send_request(
                "tools/call",
                json!({ "name": "browser_read", "arguments": {} }),
            )
            .await;
        // The inline view shows it: the wheel is the person's, and its typing goes to the
        // page without a takeover of its own.
        let shown = look_until(&mut client, &grant, |s| s["status"]["driver"] == "person").await;
        assert!(
            shown["status"]["handoff"].is_null(),
            "{round}: {}",
            without_frame(&shown)
        );
        let typed = call(
            &mut client,
            "live_input",
            json!({ "grant": grant, "input": { "type": "text", "text": "ab" } }),
        )
        .await;
        assert_eq!(typed["isError"], false, "{round}: {typed}");
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(
            !answered(&client, read),
            "{round}: the agent acted while the person drove"
        );

        if round == "the inline view's I'm done" {
            let handed = call(&mut client, "live_hand_back", json!({ "grant": grant })).await;
            assert_eq!(handed["isError"], false, "{handed}");
            panel_hears_driver(&mut socket, "agent").await;
        } else {
            send(&mut socket, json!({ "type": "handback" }).to_string()).await;
            look_until(&mut client, &grant, |s| s["status"]["driver"] == "agent").await;
            let refused = call(
                &mut client,
                "live_input",
                json!({ "grant": grant, "input": { "type": "text", "text": "x" } }),
            )
            .await;
            assert_eq!(
                said_by(&refused),
                conch_tools::app::TAKE_OVER_FIRST,
                "the takeover went on in the inline view: {refused}"
            );
        }
        // Ended for both: the agent's read goes on, and says what the person did.
        let answer = tokio::time::timeout(Duration::from_secs(30), answer_of(&mut client, read))
            .await
            .unwrap_or_else(|_| panic!("{round}: the agent's read still waits"));
        let text = said_by(&answer["result"]);
        assert!(
            text.contains("The person used the browser"),
            "{round}: {text}"
        );
        let letters = if round == "the inline view's I'm done" {
            2
        } else {
            4
        };
        assert!(
            text.contains(&format!("{letters} letters typed.")),
            "{round}: {text}"
        );
    }
    client.finish().await;
    reader.abort();
}

/// Issue 32, BE-4, issue 31: the only address of the pool dies while the person holds
/// the wheel through the inline view: with no address left, Conch falls back to its own
/// local browser (BE-4) and reopens the tabs there. The view is told with the panel's
/// sentence, shows the reopened page, and the wheel and the grant still hold: the person
/// types there and hands back, and the agent's waiting read goes on, on that page.
#[tokio::test(flavor = "multi_thread")]
async fn be_4_with_no_address_left_the_inline_view_goes_on_on_the_local_browser() {
    let pages = FixtureServer::start().await.unwrap();
    let only = Standalone::start().expect("a standalone Chromium");
    let home = tempfile::tempdir().unwrap();
    let address = only.http();
    let (ok, out, err) = crate::backend::backend(
        home.path(),
        &["set", "pool", "--endpoint", address.as_str()],
        &[],
    )
    .await;
    assert!(ok, "{out} {err}");
    let (mut client, link, _said, reader) = start_inline(home.path(), &["--trust", "full"]).await;
    client.open(&pages.url("person-typing.html")).await;
    let signed = call(&mut client, "live_sign_in", json!({ "code": link })).await;
    let grant = grant_of(&signed);
    look_until(&mut client, &grant, |s| {
        s["frame"].as_str().is_some_and(|f| f.len() > 1000)
    })
    .await;
    let took = call(&mut client, "live_take_over", json!({ "grant": grant })).await;
    assert_eq!(took["isError"], false, "{took}");
    look_until(&mut client, &grant, |s| s["status"]["driver"] == "person").await;
    let read = client
        .send_request(
            "tools/call",
            json!({ "name": "browser_read", "arguments": {} }),
        )
        .await;

    drop(only);
    let told = look_until(&mut client, &grant, |s| s["browser"]["running"] == false).await;
    assert!(
        told["browser"]["message"].as_str().is_some_and(
            |m| m.contains("reopening this conversation's tabs")
                // Where they go is said truly: the pool has no other browser (BE-4);
                // a port that still took a connection for a moment is told as a drop.
                && (m.contains("local browser") || m.contains("dropped"))
                && !m.contains("another browser of the pool")
        ),
        "{}",
        without_frame(&told)
    );
    back_with_the_wheel(&mut client, &grant, read).await;
    types_and_the_agent_goes_on(&mut client, &grant, read, "local").await;
    client.finish().await;
    reader.abort();
}
