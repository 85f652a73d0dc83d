//! `conch-gateway mcp` from an MCP client over stdio (TOOL-2, TOOL-3, AMB-5).

use conch_fixtures::FixtureServer;
use serde_json::json;

use crate::support::{StdioClient, gateway, ref_of};

/// tools/list is the catalogue, at most 8,000 characters; every tool works on fixture
/// pages; --unattended answers the site question No at once and says so.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_over_stdio_unattended() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("work");
    let mut client = StdioClient::start(gateway(
        home.path(),
        &["mcp", "--unattended", "--allow-localhost"],
    ))
    .await;

    let list = client.request("tools/list", json!({})).await;
    let tools = list["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 15);
    assert!(list["result"].to_string().chars().count() <= 8_000);
    let specs: Vec<serde_json::Value> = conch_tools::tool_specs()
        .iter()
        .map(|s| s.to_mcp())
        .collect();
    assert_eq!(tools, &specs);

    let (page, error) = client
        .call(
            "browser_open",
            json!({ "url": server.url("tools-shop.html") }),
        )
        .await;
    assert!(!error, "{page}");
    assert!(page.contains("Add to cart"), "{page}");
    let add = ref_of(&page, "Add to cart");
    let (text, error) = client.call("browser_click", json!({ "ref": add })).await;
    assert!(error, "{text}");
    assert!(
        text.contains("unattended") && text.contains("answered No"),
        "{text}"
    );
    assert!(
        text.contains("--trust full") || text.contains("browser.json"),
        "{text}"
    );

    let (text, error) = client
        .call("browser_read", json!({ "find": "Place order" }))
        .await;
    assert!(!error && text.contains("Place order"), "{text}");
    let (text, _) = client.call("browser_screenshot", json!({})).await;
    assert!(text.contains("pixels"), "{text}");
    let (text, _) = client
        .call("browser_tabs", json!({ "action": "list" }))
        .await;
    assert!(text.contains("t1"), "{text}");
    let (text, error) = client
        .call("browser_open", json!({ "url": "file:///etc/passwd" }))
        .await;
    assert!(error && text.contains("http"), "{text}");
    // HAND-1: an unattended run has nobody to wait for: the handoff says so at once.
    let (text, error) = client
        .call("browser_handoff", json!({ "reason": "a code" }))
        .await;
    assert!(error && text.contains("No one can take over"), "{text}");
    assert!(!work.exists() || work.is_dir());
    client.finish().await;
}

/// Full trust over stdio: ordinary acts go ahead, "Place order" is still confirmed (and
/// so refused when nobody can answer), and nothing reaches the page (PERM-8).
#[tokio::test(flavor = "multi_thread")]
async fn mcp_over_stdio_full_trust_still_confirms_high_stakes() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut client = StdioClient::start(gateway(
        home.path(),
        &[
            "mcp",
            "--trust",
            "full",
            "--allow-localhost",
            "--ask-timeout",
            "1",
        ],
    ))
    .await;
    let (page, _) = client
        .call(
            "browser_open",
            json!({ "url": server.url("tools-shop.html") }),
        )
        .await;
    let (text, error) = client
        .call(
            "browser_click",
            json!({ "ref": ref_of(&page, "Add to cart") }),
        )
        .await;
    assert!(!error, "{text}");
    // The click's result is the page's change: the count went from 0 to 1.
    assert!(
        text.contains("- - paragraph: In cart: 0\n+ - paragraph: In cart: 1"),
        "{text}"
    );
    let (text, error) = client
        .call(
            "browser_click",
            json!({ "ref": ref_of(&page, "Place order") }),
        )
        .await;
    // The panel's card waits for the person; nobody answers within the timeout.
    assert!(error, "{text}");
    assert!(text.contains("Nobody answered"), "{text}");
    let (text, _) = client.call("browser_read", json!({})).await;
    assert!(!text.contains("Order placed"), "{text}");
    assert!(text.contains("paragraph: In cart: 1\n"), "{text}");
    client.finish().await;
}

/// Plan only over stdio refuses every act.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_over_stdio_plan_only_refuses_acts() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut client = StdioClient::start(gateway(
        home.path(),
        &["mcp", "--trust", "plan", "--allow-localhost"],
    ))
    .await;
    let (page, _) = client
        .call(
            "browser_open",
            json!({ "url": server.url("tools-shop.html") }),
        )
        .await;
    let (text, error) = client
        .call(
            "browser_type",
            json!({ "ref": ref_of(&page, "Name"), "text": "Ada" }),
        )
        .await;
    assert!(error && text.contains("Plan only"), "{text}");
    client.finish().await;
}

/// --ask-via-mcp: the site question goes to the client as an elicitation with This chat
/// and No only; high stakes never goes that way (AMB-5).
#[tokio::test(flavor = "multi_thread")]
async fn mcp_over_stdio_asks_the_site_question_by_elicitation() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut client = StdioClient::start_with(
        gateway(
            home.path(),
            &[
                "mcp",
                "--ask-via-mcp",
                "--allow-localhost",
                "--ask-timeout",
                "1",
            ],
        ),
        json!({ "elicitation": {} }),
    )
    .await;
    let (page, _) = client
        .call(
            "browser_open",
            json!({ "url": server.url("tools-shop.html") }),
        )
        .await;
    let mut asked = Vec::new();
    let answer = client
        .request_answering(
            "tools/call",
            json!({ "name": "browser_click", "arguments": { "ref": ref_of(&page, "Add to cart") } }),
            |request| {
                asked.push(request.clone());
                Some(json!({ "action": "accept", "content": { "answer": "This chat" } }))
            },
        )
        .await;
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["method"], "elicitation/create");
    assert_eq!(
        asked[0]["params"]["requestedSchema"]["properties"]["answer"]["enum"],
        json!(["This chat", "No"])
    );
    // High stakes is never elicited: it goes to the panel's card, which nobody answers.
    let mut elicited = 0;
    let answer = client
        .request_answering(
            "tools/call",
            json!({ "name": "browser_click", "arguments": { "ref": ref_of(&page, "Place order") } }),
            |_| {
                elicited += 1;
                Some(json!({ "action": "accept", "content": { "answer": "This chat" } }))
            },
        )
        .await;
    assert_eq!(elicited, 0);
    assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
    client.finish().await;
}

/// NET-10: with the guard on, a request the page makes to a local app that is not
/// allowed is blocked, and the result says so without naming the address or port.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_over_stdio_reports_blocked_requests() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let allowed = format!("127.0.0.1:{}", server.port());
    let mut client = StdioClient::start(gateway(
        home.path(),
        &["mcp", "--unattended", "--allow-host", &allowed],
    ))
    .await;
    let (text, error) = client
        .call(
            "browser_open",
            json!({ "url": server.url("tools-private.html") }),
        )
        .await;
    assert!(!error, "{text}");
    assert!(
        text.contains("A page that reaches another local app"),
        "{text}"
    );
    assert!(
        text.contains("Conch blocked a request to a private address"),
        "{text}"
    );
    assert!(
        !text.contains(&server.cross_site_port().to_string()),
        "{text}"
    );
    assert_eq!(server.requests("/dot.svg"), 0);
    client.finish().await;
}

/// Issue 11 (a new session inherits the last one's tabs), TAB-2: a second `conch-gateway
/// mcp` on the same home starts with no tabs, and its first tab is t1 again.
#[tokio::test(flavor = "multi_thread")]
async fn tab_2_each_gateway_process_starts_with_no_tabs() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let args = [
        "mcp",
        "--trust",
        "full",
        "--unattended",
        "--allow-localhost",
    ];
    let mut first = StdioClient::start(gateway(home.path(), &args)).await;
    let (text, error) = first
        .call("browser_open", json!({ "url": server.url("basic.html") }))
        .await;
    assert!(!error, "{text}");
    let (text, error) = first
        .call(
            "browser_tabs",
            json!({ "action": "open", "url": server.url("tabs-a.html") }),
        )
        .await;
    assert!(!error && text.contains("t2"), "{text}");
    first.finish().await;

    let mut second = StdioClient::start(gateway(home.path(), &args)).await;
    let (text, error) = second
        .call("browser_tabs", json!({ "action": "list" }))
        .await;
    assert!(!error, "{text}");
    assert!(!text.contains("t1") && !text.contains("t2"), "{text}");
    let (text, error) = second
        .call(
            "browser_tabs",
            json!({ "action": "open", "url": server.url("counter.html") }),
        )
        .await;
    assert!(!error, "{text}");
    assert!(text.contains("t1") && !text.contains("t3"), "{text}");
    second.finish().await;
}

/// DATA-1, issue 12: two gateways on one home. While the first one runs, a second
/// `conch-gateway mcp` on the same folder stops at once with one sentence naming the folder,
/// the first one's process and the way out (`--home` elsewhere); the first one goes on
/// working. Once the first has exited, a gateway on that home starts.
#[tokio::test(flavor = "multi_thread")]
async fn data_1_a_second_gateway_on_one_home_stops_with_one_sentence() {
    let home = tempfile::tempdir().unwrap();
    let mut first = StdioClient::start(gateway(home.path(), &["mcp", "--unattended"])).await;
    let first_pid = first.child.id().expect("the first gateway runs");

    let second = gateway(home.path(), &["mcp", "--unattended"])
        .output()
        .await
        .expect("the second gateway runs");
    assert!(!second.status.success(), "{second:?}");
    let said = String::from_utf8_lossy(&second.stderr);
    let sentence = said
        .lines()
        .find(|line| line.contains("Another Conch"))
        .unwrap_or_else(|| panic!("no sentence about the other gateway in {said}"));
    assert!(
        sentence.contains(&home.path().display().to_string())
            && sentence.contains(&format!("process {first_pid}"))
            && sentence.contains("--home"),
        "{sentence}"
    );

    let list = first.request("tools/list", json!({})).await;
    assert!(list["result"]["tools"].is_array(), "{list}");
    first.finish().await;

    let mut third = StdioClient::start(gateway(home.path(), &["mcp", "--unattended"])).await;
    let list = third.request("tools/list", json!({})).await;
    assert!(list["result"]["tools"].is_array(), "{list}");
    third.finish().await;
}

/// Issue 12: a JSON-RPC batch over stdio is answered as the agreed version says: one
/// array of answers under 2025-03-26, one Invalid Request error under 2025-06-18;
/// never silence (the next request's answer would otherwise come first).
#[tokio::test(flavor = "multi_thread")]
async fn mcp_batches_over_stdio_follow_the_agreed_version() {
    let home = tempfile::tempdir().unwrap();
    let batch = json!([
        { "jsonrpc": "2.0", "id": "a", "method": "ping" },
        { "jsonrpc": "2.0", "id": "b", "method": "tools/list" },
    ]);

    let mut old =
        StdioClient::start_at(gateway(home.path(), &["mcp"]), "2025-03-26", json!({})).await;
    old.send(&batch).await;
    let answer = old.next_message().await;
    let answers = answer.as_array().unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(answers.len(), 2, "{answer}");
    assert_eq!(answers[0]["id"], "a");
    assert_eq!(answers[1]["id"], "b");
    assert_eq!(answers[1]["result"]["tools"].as_array().unwrap().len(), 15);
    old.finish().await;

    let mut new =
        StdioClient::start_at(gateway(home.path(), &["mcp"]), "2025-06-18", json!({})).await;
    new.send(&batch).await;
    let answer = new.next_message().await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(answer["id"], serde_json::Value::Null);
    new.finish().await;
}

/// Issue 12: `notifications/cancelled` stops the call with that id: no answer comes for
/// it, and the conversation is free, so the next call runs at once instead of after the
/// 30 s the cancelled wait would have taken.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_cancelled_call_frees_the_conversation_over_stdio() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut client = StdioClient::start(gateway(
        home.path(),
        &["mcp", "--unattended", "--allow-localhost"],
    ))
    .await;
    let (page, error) = client
        .call("browser_open", json!({ "url": server.url("basic.html") }))
        .await;
    assert!(!error, "{page}");
    let waiting = client
        .send_request(
            "tools/call",
            json!({ "name": "browser_wait", "arguments": { "text": "a text this page never shows", "seconds": 30 } }),
        )
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    client
        .send(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": waiting, "reason": "the person stopped it" } }))
        .await;
    let started = std::time::Instant::now();
    let reading = client
        .send_request(
            "tools/call",
            json!({ "name": "browser_read", "arguments": {} }),
        )
        .await;
    let answer = loop {
        let message = client.next_message().await;
        assert_ne!(
            message["id"],
            json!(waiting),
            "a cancelled call is not answered: {message}"
        );
        if message["id"] == json!(reading) {
            break message;
        }
    };
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "the next call waited {:?} for the cancelled one",
        started.elapsed()
    );
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("Hello from the fixtures"), "{answer}");
    client.finish().await;
}

/// Issue 12: a call that waits more than a few seconds sends `notifications/progress`
/// with the client's progressToken, increasing, before its answer; a call without a
/// token sends none.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_long_call_sends_progress_over_stdio() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut client = StdioClient::start(gateway(
        home.path(),
        &["mcp", "--unattended", "--allow-localhost"],
    ))
    .await;
    let (page, error) = client
        .call("browser_open", json!({ "url": server.url("basic.html") }))
        .await;
    assert!(!error, "{page}");
    let with_token = client
        .send_request(
            "tools/call",
            json!({ "name": "browser_wait", "arguments": { "seconds": 7 }, "_meta": { "progressToken": "wait-1" } }),
        )
        .await;
    let mut notes = Vec::new();
    let answer = loop {
        let message = client.next_message().await;
        if message["method"] == "notifications/progress" {
            notes.push(message);
        } else if message["id"] == json!(with_token) {
            break message;
        }
    };
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    assert!(notes.len() >= 2, "{notes:?}");
    for (n, note) in notes.iter().enumerate() {
        assert_eq!(note["params"]["progressToken"], "wait-1", "{note}");
        assert_eq!(note["params"]["progress"], json!(n + 1), "{note}");
        assert!(
            note["params"]["message"]
                .as_str()
                .unwrap()
                .contains("browser_wait"),
            "{note}"
        );
    }
    let without = client
        .send_request(
            "tools/call",
            json!({ "name": "browser_wait", "arguments": { "seconds": 4 } }),
        )
        .await;
    loop {
        let message = client.next_message().await;
        assert_ne!(message["method"], "notifications/progress", "{message}");
        if message["id"] == json!(without) {
            break;
        }
    }
    client.finish().await;
}

/// Issue 12: the gateway installs a log subscriber: RUST_LOG's events, the libraries'
/// included, go to standard error and to `<home>/gateway.log`, never to stdout (the MCP
/// stream, which stays JSON-RPC only); events under the RUST_LOG level are left out.
#[tokio::test(flavor = "multi_thread")]
async fn mcp_gateway_logs_to_stderr_and_gateway_log_never_stdout() {
    use tokio::io::AsyncReadExt;
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut command = gateway(home.path(), &["mcp", "--unattended", "--allow-localhost"]);
    command.env("RUST_LOG", "info,conch_browser=debug");
    let mut client = StdioClient::start(command).await;
    let mut stderr = client.child.stderr.take().unwrap();
    let drained = tokio::spawn(async move {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text).await;
        text
    });
    let (page, error) = client
        .call("browser_open", json!({ "url": server.url("basic.html") }))
        .await;
    assert!(!error, "{page}");
    client.finish().await;
    let stderr = drained.await.unwrap();
    let log = std::fs::read_to_string(home.path().join("gateway.log")).unwrap_or_default();
    for text in [&stderr, &log] {
        assert!(text.contains("conch-gateway started"), "{text}");
        assert!(text.contains("profile healed before launch"), "{text}");
    }

    let quiet = tempfile::tempdir().unwrap();
    let mut command = gateway(quiet.path(), &["mcp"]);
    command.env("RUST_LOG", "warn");
    let client = StdioClient::start(command).await;
    client.finish().await;
    let log = std::fs::read_to_string(quiet.path().join("gateway.log")).unwrap();
    assert!(!log.contains("conch-gateway started"), "{log}");
}

/// Issue 14, issue 31: over stdio, a client that declares MCP Apps can read the live
/// view's app, which is the live view itself: it speaks the MCP Apps view protocol, may
/// reach no origin (it talks to the gateway only through the host's tool calls, to
/// app-only tools listed for the app alone), and offers the full panel with the browser
/// in front.
#[tokio::test(flavor = "multi_thread")]
async fn live_17_the_live_view_is_offered_as_an_mcp_app() {
    let home = tempfile::tempdir().unwrap();
    let mut client = StdioClient::start_with(
        gateway(home.path(), &["mcp", "--panel-port", "0"]),
        json!({ "extensions": { "io.modelcontextprotocol/ui": { "mimeTypes": ["text/html;profile=mcp-app"] } } }),
    )
    .await;
    let tools = client.request("tools/list", json!({})).await;
    let tools = tools["result"]["tools"].as_array().unwrap();
    let handoff = tools
        .iter()
        .find(|t| t["name"] == "browser_handoff")
        .unwrap()
        .clone();
    assert_eq!(handoff["_meta"]["ui"]["resourceUri"], "ui://conch/live");
    let app_only: Vec<&str> = tools
        .iter()
        .filter(|t| t["_meta"]["ui"]["visibility"] == json!(["app"]))
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(app_only, conch_tools::app::APP_ONLY_TOOLS);
    let read = client
        .request("resources/read", json!({ "uri": "ui://conch/live" }))
        .await;
    let content = &read["result"]["contents"][0];
    assert_eq!(content["mimeType"], "text/html;profile=mcp-app");
    let html = content["text"].as_str().unwrap();
    assert_eq!(content["_meta"]["ui"]["csp"]["connectDomains"], json!([]));
    assert!(
        html.contains("protocolVersion: '2026-01-26'"),
        "{html:.300}"
    );
    assert!(html.contains("live_look"));
    assert!(
        html.contains("http://127.0.0.1:") && html.contains("/?browser=1"),
        "the view offers the panel with the browser in front"
    );
    assert!(!html.contains("{{"), "a placeholder is left");
    client.finish().await;
}

/// Issue 31: one stdio process answers both eras: a new-era client's `server/discover`
/// and `_meta`-carrying requests with no handshake (`resultType`, no `ping`), and a
/// client that probes with `server/discover` and then sends `initialize` in the old
/// era, with no handle argument in either list.
#[tokio::test(flavor = "multi_thread")]
async fn issue_31_both_eras_over_stdio() {
    let home = tempfile::tempdir().unwrap();
    let mut client = StdioClient::start_bare(gateway(home.path(), &["mcp"])).await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let found = client
        .request("server/discover", json!({ "_meta": meta }))
        .await;
    assert_eq!(
        found["result"]["supportedVersions"][0], "2026-07-28",
        "{found}"
    );
    assert_eq!(found["result"]["resultType"], "complete");
    let listed = client.request("tools/list", json!({ "_meta": meta })).await;
    assert_eq!(listed["result"]["resultType"], "complete");
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 15);
    assert!(
        !listed.to_string().contains("\"conversation\""),
        "stdio has no handle"
    );
    let ping = client.request("ping", json!({ "_meta": meta })).await;
    assert_eq!(ping["error"]["code"], -32601, "{ping}");
    // Then the old era on the same process.
    let init = client
        .request(
            "initialize",
            json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } }),
        )
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    let pong = client.request("ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
    let old = client.request("tools/list", json!({})).await;
    assert!(old["result"].get("resultType").is_none());
    client.finish().await;
}

/// Issue 31, AMB-5: in the new era the site question (`--ask-via-mcp`) comes inside the
/// call's own result (`input_required`, MRTR) with an opaque `requestState`; the retried
/// call with the client's answer continues the same act, which runs once; the state
/// replayed or forged is refused. High stakes still never asks the client.
#[tokio::test(flavor = "multi_thread")]
async fn issue_31_the_site_question_is_a_multi_round_trip_in_the_new_era() {
    let server = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut client = StdioClient::start_bare(gateway(
        home.path(),
        &[
            "mcp",
            "--ask-via-mcp",
            "--allow-localhost",
            "--ask-timeout",
            "1",
        ],
    ))
    .await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} },
    });
    let call = |name: &str, arguments: serde_json::Value| json!({ "name": name, "arguments": arguments, "_meta": meta });
    let opened = client
        .request(
            "tools/call",
            call(
                "browser_open",
                json!({ "url": server.url("tools-shop.html") }),
            ),
        )
        .await;
    let page = opened["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let add = call(
        "browser_click",
        json!({ "ref": ref_of(&page, "Add to cart") }),
    );
    let first = client.request("tools/call", add.clone()).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let question = &result["inputRequests"][conch_tools::QUESTION_KEY];
    assert_eq!(question["method"], "elicitation/create");
    assert_eq!(
        question["params"]["requestedSchema"]["properties"]["answer"]["enum"],
        json!(["This chat", "No"])
    );
    let state = result["requestState"]
        .as_str()
        .expect("a requestState")
        .to_owned();
    let requests: Vec<serde_json::Value> = client
        .transcript
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["method"] == "elicitation/create")
        .collect();
    assert!(
        requests.is_empty(),
        "no request of the server's: {requests:?}"
    );

    // Forged, or for another call: refused, and the waiting call is untouched.
    let answered = json!({ conch_tools::QUESTION_KEY: { "action": "accept", "content": { "answer": "This chat" } } });
    let mut forged = add.clone();
    forged["requestState"] = json!(format!("{state}0"));
    forged["inputResponses"] = answered.clone();
    let refused = client.request("tools/call", forged).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let mut other = call(
        "browser_click",
        json!({ "ref": ref_of(&page, "Place order") }),
    );
    other["requestState"] = json!(state);
    other["inputResponses"] = answered.clone();
    let refused = client.request("tools/call", other).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");

    let mut retried = add.clone();
    retried["requestState"] = json!(state);
    retried["inputResponses"] = answered.clone();
    let done = client.request("tools/call", retried.clone()).await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(done["result"]["isError"], false, "{done}");
    // Replayed: refused; the act ran once.
    let replayed = client.request("tools/call", retried).await;
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
    let read = client
        .request(
            "tools/call",
            call("browser_read", json!({ "find": "In cart" })),
        )
        .await;
    let text = read["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("In cart: 1"), "{text}");

    // High stakes is never the client's to answer: no input_required.
    let order = client
        .request(
            "tools/call",
            call(
                "browser_click",
                json!({ "ref": ref_of(&page, "Place order") }),
            ),
        )
        .await;
    assert_eq!(order["result"]["resultType"], "complete", "{order}");
    assert_eq!(order["result"]["isError"], true, "{order}");
    client.finish().await;
}
