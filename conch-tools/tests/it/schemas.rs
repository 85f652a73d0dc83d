//! The tool definitions as data: the golden file, the plain-schema lint, the size of
//! `tools/list`, the class table, and the MCP door in memory (TOOL-1 … TOOL-5, TOOL-14,
//! TOOL-16).

use conch_policy::ActClass;
use conch_tools::{
    McpServer, Mode, NoOneToAsk, TOOL_NAMES, ToolCall, Tools, ToolsConfig, bridged_functions,
    tool_specs,
};
use serde_json::{Value, json};
use std::sync::Arc;

fn tools_list() -> Value {
    json!({ "tools": tool_specs().iter().map(|s| s.to_mcp()).collect::<Vec<_>>() })
}

/// A toolbox whose browser never starts (nothing here calls a tool).
fn offline_tools() -> Tools {
    let dir = std::env::temp_dir().join("conch-tools-offline-home");
    let mut config = conch_browser::BrowserConfig::new(conch_browser::Home::new(dir));
    config.download = None;
    Tools::new(
        conch_browser::Browser::new(config),
        ToolsConfig::new(Arc::new(NoOneToAsk)),
    )
}

/// TOOL-1: exactly fifteen tools, names, descriptions and schemas frozen in a golden file.
#[test]
fn tool_1_golden_definitions() {
    let names: Vec<&str> = tool_specs().iter().map(|s| s.name).collect();
    assert_eq!(names, TOOL_NAMES);
    insta::assert_json_snapshot!("tools_list", tools_list());
}

/// The `tools/list` result as the MCP door gives it to a client, as JSON text.
async fn door_tools_list() -> String {
    let server = McpServer::new(offline_tools(), Mode::Ask);
    let session = server.session("size");
    let init = session
        .handle(&json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } }))
        .await;
    assert!(init.is_some_and(|i| i.get("result").is_some()));
    let Some(listed) = session
        .handle(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }))
        .await
    else {
        panic!("tools/list got no answer");
    };
    assert!(listed["result"]["nextCursor"].is_null(), "{listed}");
    listed["result"].to_string()
}

/// Issue 31: the whole `tools/list` result, as the JSON text a client receives from the
/// MCP door, stays at most 5,000 characters: it sits in every conversation's context.
#[tokio::test]
async fn issue_31_tools_list_is_at_most_5000_characters() {
    let size = door_tools_list().await.chars().count();
    println!("tools/list is {size} characters");
    assert!(size <= 5_000, "tools/list is {size} characters");
    assert_eq!(tools_list().to_string().chars().count(), size);
}

/// Issue 31: shortening kept every description saying what the tool gives back.
#[test]
fn issue_31_every_description_says_what_the_tool_returns() {
    for spec in tool_specs() {
        assert!(
            spec.description.contains(" Returns "),
            "{}: {:?} does not say what it returns",
            spec.name,
            spec.description
        );
    }
}

/// Issue 31: shortening dropped no argument: every tool keeps the arguments the calls
/// take (a public contract), and `tools/list` is the same text every time it is built,
/// tools in the fixed order and properties in a stable one.
#[tokio::test]
async fn issue_31_tools_list_keeps_every_argument_in_a_deterministic_order() {
    let arguments: Vec<(&str, Vec<String>)> = tool_specs()
        .iter()
        .map(|s| {
            let mut names: Vec<String> = s.input_schema["properties"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            names.sort();
            (s.name, names)
        })
        .collect();
    let want: [(&str, &[&str]); 15] = [
        ("browser_open", &["url"]),
        ("browser_read", &["find", "part"]),
        ("browser_click", &["how", "ref", "to"]),
        ("browser_type", &["ref", "submit", "text"]),
        ("browser_press", &["key", "ref"]),
        ("browser_select", &["ref", "values"]),
        ("browser_scroll", &["amount", "direction", "ref"]),
        ("browser_back", &[]),
        ("browser_screenshot", &[]),
        ("browser_wait", &["gone", "seconds", "text"]),
        ("browser_handoff", &["reason"]),
        ("browser_tabs", &["action", "search", "tab", "url"]),
        (
            "browser_click_at",
            &["description", "how", "text", "to_x", "to_y", "x", "y"],
        ),
        ("browser_upload", &["files", "ref"]),
        ("browser_form", &["fields"]),
    ];
    for ((name, got), (want_name, want_args)) in arguments.iter().zip(want) {
        assert_eq!(*name, want_name);
        assert_eq!(
            got,
            &want_args.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
            "{name}"
        );
    }
    let items = &tool_specs()[14].input_schema["properties"]["fields"]["items"];
    assert_eq!(items["required"], json!(["ref", "value"]));
    let first = door_tools_list().await;
    for _ in 0..3 {
        assert_eq!(door_tools_list().await, first);
    }
    let listed: Value = serde_json::from_str(&first).unwrap();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, TOOL_NAMES);
}

fn lint(schema: &Value, depth: usize, path: &str, problems: &mut Vec<String>) {
    let Some(object) = schema.as_object() else {
        problems.push(format!("{path}: not an object"));
        return;
    };
    for banned in ["oneOf", "anyOf", "allOf", "$ref", "$defs", "not"] {
        if object.contains_key(banned) {
            problems.push(format!("{path}: uses {banned}"));
        }
    }
    match object.get("type").and_then(Value::as_str) {
        Some("object") => {
            if depth > 2 {
                problems.push(format!("{path}: an object deeper than two levels"));
            }
            for (name, property) in object
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                lint(property, depth + 1, &format!("{path}.{name}"), problems);
            }
        }
        Some("array") => match object.get("items") {
            Some(items) => lint(items, depth, &format!("{path}[]"), problems),
            None => problems.push(format!("{path}: an array without items")),
        },
        Some("string" | "number" | "integer" | "boolean") => {}
        other => problems.push(format!("{path}: type {other:?}")),
    }
}

/// TOOL-4: every schema is plain; TOOL-14: no parameter chooses a browser, its
/// executable, arguments, profile or backend, or names a script.
#[test]
fn tool_4_and_tool_14_schemas_are_plain_and_reach_nothing() {
    fn names(schema: &Value, out: &mut Vec<String>) {
        for (name, property) in schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            out.push(name.to_lowercase());
            names(property, out);
            if let Some(items) = property.get("items") {
                names(items, out);
            }
        }
    }
    let banned = [
        "executable",
        "profile",
        "backend",
        "args",
        "arguments",
        "script",
        "command",
        "headless",
        "path",
        "browser",
        "cdp",
        "expression",
        "code",
    ];
    let mut problems = Vec::new();
    for spec in tool_specs() {
        lint(&spec.input_schema, 1, spec.name, &mut problems);
        let mut found = Vec::new();
        names(&spec.input_schema, &mut found);
        for name in found {
            if banned.contains(&name.as_str()) {
                problems.push(format!("{}: has a parameter {name}", spec.name));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// ERR-1: no tool parameter can choose or leave a conversation's browser context: the
/// embedder's `ToolContext` alone makes a conversation a task.
#[test]
fn err_1_no_tool_parameter_chooses_a_context() {
    fn names(schema: &Value, out: &mut Vec<String>) {
        for (name, property) in schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            out.push(name.to_lowercase());
            names(property, out);
            if let Some(items) = property.get("items") {
                names(items, out);
            }
        }
    }
    let banned = [
        "context",
        "session",
        "kind",
        "task",
        "errand",
        "incognito",
        "isolated",
        "own",
        "cookies",
        "storage",
        "signin",
        "lend",
    ];
    let mut found = Vec::new();
    for spec in tool_specs() {
        let mut all = Vec::new();
        names(&spec.input_schema, &mut all);
        found.extend(
            all.into_iter()
                .filter(|name| banned.iter().any(|b| name.contains(b)))
                .map(|name| format!("{}: {name}", spec.name)),
        );
    }
    assert!(found.is_empty(), "{found:?}");
}

/// ERR-6: a task's MCP session is told at `initialize` that it browses in a browser of
/// its own, signed out but for the always-allowed sites; a chat's is not.
#[tokio::test]
async fn err_6_a_tasks_session_is_told_it_has_its_own_browser() {
    let server = McpServer::new(offline_tools(), Mode::Ask);
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } });
    let task = server
        .session_as("memory-task", conch_tools::ConversationKind::Task)
        .handle(&init)
        .await
        .unwrap();
    let told = task["result"]["instructions"].as_str().unwrap_or_default();
    assert!(told.contains(conch_tools::ERRAND_NOTE), "{told}");
    let chat = server.session("memory-chat").handle(&init).await.unwrap();
    let told = chat["result"]["instructions"].as_str().unwrap_or_default();
    assert_eq!(told, conch_tools::BROWSER_HINT);
    assert_eq!(
        conch_tools::errand_prompt(false),
        conch_tools::ERRAND_OWN_CHROME_NOTE,
        "beside your own Chrome the note says it is signed in nowhere"
    );
}

/// ERR-6: beside the person's own Chrome, a task's MCP session is told at `initialize`
/// that it browses in Conch's own browser, signed in nowhere (nothing is copied out of
/// Chrome), not that sign-ins may be lent. Nothing connects to Chrome for this.
#[tokio::test]
async fn err_6_beside_your_own_chrome_a_tasks_session_is_told_it_is_signed_in_nowhere() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = conch_browser::BrowserConfig::new(conch_browser::Home::new(dir.path()));
    config.download = None;
    config.remote = Some(conch_browser::remote::Remote::Chrome(
        conch_browser::own_chrome::OwnChrome::in_folder(
            dir.path().join("chrome-profile"),
            std::time::Duration::from_secs(1),
        ),
    ));
    let tools = Tools::new(
        conch_browser::Browser::new(config),
        ToolsConfig::new(Arc::new(NoOneToAsk)),
    );
    let server = McpServer::new(tools, Mode::Ask);
    let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } });
    let task = server
        .session_as("own-chrome-task", conch_tools::ConversationKind::Task)
        .handle(&init)
        .await
        .unwrap();
    let told = task["result"]["instructions"].as_str().unwrap_or_default();
    assert!(told.contains(conch_tools::ERRAND_OWN_CHROME_NOTE), "{told}");
    assert!(!told.contains(conch_tools::ERRAND_NOTE), "{told}");
}

/// TOOL-2: the bridged function schemas match the MCP definitions field by field.
#[test]
fn tool_2_bridged_functions_match_mcp() {
    let list = tools_list();
    let functions = bridged_functions();
    assert_eq!(functions.len(), 15);
    for (mcp, function) in list["tools"].as_array().unwrap().iter().zip(&functions) {
        assert_eq!(mcp["name"], function["name"]);
        assert_eq!(mcp["description"], function["description"]);
        assert_eq!(mcp["inputSchema"], function["parameters"]);
    }
}

/// TOOL-5, FORM-6, issue 12: `readOnlyHint` is true only for tools that change nothing,
/// so never for an acting tool; hover reads, drag acts, handoff is neither.
#[test]
fn tool_5_read_only_hint_never_on_an_acting_tool() {
    let minimal = |name: &str| match name {
        "browser_open" => json!({ "url": "https://example.com" }),
        "browser_click" | "browser_type" | "browser_select" | "browser_upload" => {
            json!({ "ref": "e1", "text": "x", "values": ["a"], "files": ["a.txt"] })
        }
        "browser_press" => json!({ "key": "Enter" }),
        "browser_tabs" => json!({ "action": "list" }),
        "browser_click_at" => json!({ "x": 1, "y": 2, "description": "a dot" }),
        "browser_form" => json!({ "fields": [{ "ref": "e1", "value": "a" }] }),
        "browser_handoff" => json!({ "reason": "a code" }),
        _ => json!({}),
    };
    for spec in tool_specs() {
        let call = ToolCall::parse(spec.name, &minimal(spec.name)).unwrap();
        let reading = call.act().class() == ActClass::Reading;
        if spec.read_only {
            assert!(reading, "{} is read-only but not a reading call", spec.name);
        }
    }
    let hover = ToolCall::parse("browser_click", &json!({ "ref": "e1", "how": "hover" })).unwrap();
    assert_eq!(hover.act().class(), ActClass::Reading);
    let drag = ToolCall::parse(
        "browser_click",
        &json!({ "ref": "e1", "how": "drag", "to": "e2" }),
    )
    .unwrap();
    assert_eq!(drag.act().class(), ActClass::Acting);
    let handoff = ToolCall::parse("browser_handoff", &json!({ "reason": "x" })).unwrap();
    assert_eq!(handoff.act().class(), ActClass::Neither);
}

/// Issue 12: `readOnlyHint` is true only for the tools that change nothing. Opening an
/// address and going back navigate the tab away from its page, and browser_tabs can
/// open and close tabs, so these are not read-only even though their class is reading
/// (Plan only still allows them). Scrolling moves the view only.
#[test]
fn read_only_hint_only_for_tools_that_change_nothing() {
    let read_only: Vec<&str> = tool_specs()
        .iter()
        .filter(|s| s.to_mcp()["annotations"]["readOnlyHint"] == json!(true))
        .map(|s| s.name)
        .collect();
    assert_eq!(
        read_only,
        [
            "browser_read",
            "browser_scroll",
            "browser_screenshot",
            "browser_wait"
        ]
    );
    for changing in ["browser_open", "browser_back", "browser_tabs"] {
        let spec = conch_tools::tool_spec(changing).unwrap();
        assert_eq!(
            spec.to_mcp()["annotations"]["readOnlyHint"],
            json!(false),
            "{changing}"
        );
    }
    let close =
        ToolCall::parse("browser_tabs", &json!({ "action": "close", "tab": "t2" })).unwrap();
    assert_eq!(close.act().class(), ActClass::Reading);
}

/// TOOL-3, TOOL-16: the MCP door in memory (no port, no process): initialize, then
/// `tools/list` in pages of five covers all fifteen.
#[tokio::test]
async fn tool_3_and_tool_16_in_memory_mcp_with_pages() {
    let server = McpServer::new(offline_tools(), Mode::Ask).with_page_size(5);
    let session = server.session("memory");
    let init = session
        .handle(&json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } }))
        .await
        .unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "conch_browser");
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    let initialized = session
        .handle(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .await;
    assert!(initialized.is_none());
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let page = session
            .handle(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": params }))
            .await
            .unwrap();
        pages += 1;
        for tool in page["result"]["tools"].as_array().unwrap() {
            names.push(tool["name"].as_str().unwrap().to_owned());
        }
        match page["result"]["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(names, TOOL_NAMES);
    let unknown = session
        .handle(&json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "run_shell", "arguments": {} } }))
        .await
        .unwrap();
    assert_eq!(unknown["error"]["code"], -32602);
    let missing = session
        .handle(&json!({ "jsonrpc": "2.0", "id": 4, "method": "resources/list" }))
        .await
        .unwrap();
    assert_eq!(missing["error"]["code"], -32601);
}

/// A session of the in-memory door that agreed on protocol `version`.
async fn session_at(version: &str) -> conch_tools::McpSession {
    let session = McpServer::new(offline_tools(), Mode::Ask).session("batches");
    let init = session
        .handle(&json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": { "protocolVersion": version, "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } }))
        .await
        .expect("initialize is answered");
    assert_eq!(init["result"]["protocolVersion"], version);
    session
}

/// Issue 12: under 2025-03-26 a JSON-RPC batch is processed, each request answered in one
/// array, notifications left unanswered; an empty batch and an initialize inside a batch
/// are Invalid Request errors, not silence.
#[tokio::test]
async fn mcp_batches_are_processed_under_2025_03_26() {
    let session = session_at("2025-03-26").await;
    let answer = session
        .handle(&json!([
            { "jsonrpc": "2.0", "id": 1, "method": "ping" },
            { "jsonrpc": "2.0", "method": "notifications/initialized" },
            { "jsonrpc": "2.0", "id": "two", "method": "tools/list" },
            { "jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {} },
        ]))
        .await
        .expect("a batch with requests is answered");
    let answers = answer.as_array().expect("an array of answers");
    assert_eq!(answers.len(), 3, "{answer}");
    assert_eq!(
        answers[0],
        json!({ "jsonrpc": "2.0", "id": 1, "result": {} })
    );
    assert_eq!(answers[1]["id"], "two");
    assert_eq!(answers[1]["result"]["tools"].as_array().unwrap().len(), 15);
    assert_eq!(answers[2]["id"], 3);
    assert_eq!(answers[2]["error"]["code"], -32600);
    let empty = session.handle(&json!([])).await.expect("an answer");
    assert_eq!(empty["error"]["code"], -32600, "{empty}");
    assert_eq!(empty["id"], Value::Null);
    let only_notes = session
        .handle(&json!([{ "jsonrpc": "2.0", "method": "notifications/initialized" }]))
        .await;
    assert!(only_notes.is_none(), "{only_notes:?}");
}

/// Issue 12: MCP 2025-06-18 removed batches, so a batch gets one Invalid Request error
/// whose message says to send messages one at a time, and nothing in it runs.
#[tokio::test]
async fn mcp_batches_are_one_invalid_request_under_2025_06_18() {
    for version in ["2025-06-18", "2025-11-25"] {
        let session = session_at(version).await;
        let answer = session
            .handle(&json!([
                { "jsonrpc": "2.0", "id": 1, "method": "ping" },
                { "jsonrpc": "2.0", "id": 2, "method": "tools/list" },
            ]))
            .await
            .expect("a batch is never dropped silently");
        assert!(answer.is_object(), "{answer}");
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
        assert_eq!(answer["id"], Value::Null);
        let text = answer["error"]["message"].as_str().unwrap();
        assert!(
            text.contains(version) && text.contains("on its own"),
            "{text}"
        );
    }
}

/// A new-era request's `_meta` (MCP 2026-07-28): its version and the client's
/// capabilities, with no `initialize` before it.
fn modern(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        conch_tools::META_VERSION: conch_tools::MODERN_VERSION,
        conch_tools::META_CAPABILITIES: {},
        conch_tools::META_CLIENT: { "name": "modern-client", "version": "2" },
    });
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })
}

/// Issue 31: `server/discover` names the five versions (the new era's first), the
/// capabilities and the server's identity; it and every new-era result carry
/// `resultType`, and the lists `ttlMs` and `cacheScope`; `tools/list` is one list in
/// one order, with no handle argument where the transport keeps the conversation.
#[tokio::test]
async fn issue_31_server_discover_and_modern_results_need_no_initialize() {
    let server = McpServer::new(offline_tools(), Mode::Ask);
    let session = server.session("modern");
    for probe in [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "server/discover" }),
        modern(1, "server/discover", json!({})),
    ] {
        let found = session.handle(&probe).await.unwrap();
        let result = &found["result"];
        assert_eq!(
            result["supportedVersions"],
            json!([
                "2026-07-28",
                "2025-11-25",
                "2025-06-18",
                "2025-03-26",
                "2024-11-05"
            ]),
            "{found}"
        );
        assert_eq!(result["resultType"], "complete");
        assert_eq!(result["capabilities"]["tools"]["listChanged"], false);
        assert_eq!(
            result["_meta"][conch_tools::META_SERVER]["name"],
            "conch_browser"
        );
        assert!(result["ttlMs"].as_u64().is_some() && result["cacheScope"] == "private");
        assert!(result["instructions"].as_str().is_some());
    }
    assert_eq!(session.protocol_version(), None, "no handshake happened");
    let first = session
        .handle(&modern(2, "tools/list", json!({})))
        .await
        .unwrap();
    let again = session
        .handle(&modern(3, "tools/list", json!({})))
        .await
        .unwrap();
    assert_eq!(first["result"]["tools"], again["result"]["tools"]);
    assert_eq!(first["result"]["resultType"], "complete");
    assert_eq!(first["result"]["cacheScope"], "private");
    assert!(first["result"]["ttlMs"].as_u64().unwrap() > 0);
    let names: Vec<&str> = first["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, TOOL_NAMES);
    assert!(!first.to_string().contains(conch_tools::HANDLE_ARG));
    let unknown = session
        .handle(&modern(4, "tools/call", json!({ "name": "browser_fly" })))
        .await
        .unwrap();
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    // The client's name reaches the person's panel as it does at initialize.
    assert_eq!(
        server.tools().naming("modern").0.as_deref(),
        Some("modern-client")
    );
}

/// Issue 31: a version the server does not speak is refused with
/// `UnsupportedProtocolVersion` (-32022), naming the versions it does; an old version
/// in `_meta` is refused too (the old era starts with `initialize`).
#[tokio::test]
async fn issue_31_an_unsupported_version_is_refused_naming_the_versions() {
    let session = McpServer::new(offline_tools(), Mode::Ask).session("versions");
    for asked in ["1900-01-01", "2025-06-18"] {
        let mut request = modern(1, "tools/list", json!({}));
        request["params"]["_meta"][conch_tools::META_VERSION] = json!(asked);
        let refused = session.handle(&request).await.unwrap();
        assert_eq!(refused["error"]["code"], -32022, "{refused}");
        assert_eq!(refused["error"]["data"]["requested"], asked);
        assert_eq!(
            refused["error"]["data"]["supported"][0],
            conch_tools::MODERN_VERSION
        );
        assert_eq!(
            refused["error"]["data"]["supported"]
                .as_array()
                .unwrap()
                .len(),
            5
        );
    }
}

/// Issue 31: `ping` and `logging/setLevel` are answered in the old era only; the new era
/// removed them (Method not found). A client that probes with `server/discover` and then
/// sends `initialize` is served in the old era, results as before (no `resultType`).
#[tokio::test]
async fn issue_31_ping_and_set_level_only_where_the_era_has_them() {
    let session = McpServer::new(offline_tools(), Mode::Ask).session("eras");
    let probe = session
        .handle(&modern(1, "server/discover", json!({})))
        .await
        .unwrap();
    assert!(probe["result"]["supportedVersions"].is_array());
    for method in ["ping", "logging/setLevel", "initialize"] {
        let refused = session
            .handle(&modern(2, method, json!({ "level": "info" })))
            .await
            .unwrap();
        assert_eq!(refused["error"]["code"], -32601, "{method}: {refused}");
    }
    let init = session
        .handle(&json!({ "jsonrpc": "2.0", "id": 3, "method": "initialize", "params": { "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } }))
        .await
        .unwrap();
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["result"]["capabilities"]["logging"], json!({}));
    let pong = session
        .handle(&json!({ "jsonrpc": "2.0", "id": 4, "method": "ping" }))
        .await
        .unwrap();
    assert_eq!(pong["result"], json!({}));
    let level = session
        .handle(&json!({ "jsonrpc": "2.0", "id": 5, "method": "logging/setLevel", "params": { "level": "warning" } }))
        .await
        .unwrap();
    assert_eq!(level["result"], json!({}), "{level}");
    let wrong = session
        .handle(&json!({ "jsonrpc": "2.0", "id": 6, "method": "logging/setLevel", "params": { "level": "loud" } }))
        .await
        .unwrap();
    assert_eq!(wrong["error"]["code"], -32602);
    let listed = session
        .handle(&json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/list" }))
        .await
        .unwrap();
    assert!(
        listed["result"].get("resultType").is_none(),
        "old era unchanged"
    );
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 15);
    // A new-era request on the same connection is still the new era's.
    let modern_list = session
        .handle(&modern(8, "tools/list", json!({})))
        .await
        .unwrap();
    assert_eq!(modern_list["result"]["resultType"], "complete");
}

/// Issue 31: a server made for sessionless HTTP lists the conversation handle argument
/// in every tool's schema in the new era, and never in the old; this says what it costs.
#[tokio::test]
async fn issue_31_the_handle_argument_is_listed_only_in_the_new_era() {
    let server = McpServer::new(offline_tools(), Mode::Ask).with_handles();
    let session = server.session("handles");
    let listed = session
        .handle(&modern(1, "tools/list", json!({})))
        .await
        .unwrap();
    let tools = listed["result"]["tools"].as_array().unwrap();
    for tool in tools {
        let property = &tool["inputSchema"]["properties"][conch_tools::HANDLE_ARG];
        assert_eq!(property["type"], "string", "{}", tool["name"]);
        let required = tool["inputSchema"]["required"].as_array();
        assert!(
            !required.is_some_and(|r| r.contains(&json!(conch_tools::HANDLE_ARG))),
            "the handle is optional: the first call has none"
        );
    }
    let plain = McpServer::new(offline_tools(), Mode::Ask)
        .session("plain")
        .handle(&modern(1, "tools/list", json!({})))
        .await
        .unwrap();
    let cost = listed["result"]["tools"].to_string().chars().count()
        - plain["result"]["tools"].to_string().chars().count();
    assert!(
        cost <= 15 * 130,
        "the handle costs {cost} schema characters"
    );
    let old = session
        .handle(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }))
        .await
        .unwrap();
    assert!(!old.to_string().contains(conch_tools::HANDLE_ARG));
}

/// Issue 31: `subscriptions/listen` is acknowledged (with nothing to send: the tool list
/// never changes) and held until the client cancels it; it holds up no call.
#[tokio::test]
async fn issue_31_subscriptions_listen_is_acknowledged_and_ends_when_cancelled() {
    let session = McpServer::new(offline_tools(), Mode::Ask).session("listen");
    let (tx, mut heard) = tokio::sync::mpsc::unbounded_channel();
    let listening = {
        let session = session.clone();
        tokio::spawn(async move {
            let notify = move |note: Value| {
                let _ = tx.send(note);
            };
            session
                .handle_notifying(
                    &modern(
                        7,
                        "subscriptions/listen",
                        json!({ "notifications": { "toolsListChanged": true } }),
                    ),
                    &notify,
                )
                .await
        })
    };
    let ack = tokio::time::timeout(std::time::Duration::from_secs(5), heard.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"], json!({}), "{ack}");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    let listed = session
        .handle(&modern(8, "tools/list", json!({})))
        .await
        .unwrap();
    assert_eq!(listed["result"]["tools"].as_array().unwrap().len(), 15);
    assert!(!listening.is_finished());
    session
        .handle(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 7 } }))
        .await;
    let answer = tokio::time::timeout(std::time::Duration::from_secs(5), listening)
        .await
        .expect("the listen ends when cancelled")
        .unwrap();
    assert!(answer.is_none());
}
