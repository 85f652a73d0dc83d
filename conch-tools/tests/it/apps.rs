//! The live view inline in the chat (issue 31, LIVE-8, LIVE-15, PERM-3, SEC-7), from the
//! attacker's side: the app-only tools refuse the model (no grant), refuse a grant of
//! another conversation, act only for the signed-in person's own conversation, never
//! echo what the person typed, and a client without the MCP Apps extension sees nothing
//! new. The door is a recording fake: what reaches it is what acted.

use std::sync::{Arc, Mutex};

use conch_tools::app::{
    ANSWER, APP_ONLY_TOOLS, CODE_REFUSED, HAND_BACK, INPUT, LOOK, REFUSED_OTHER_CONVERSATION,
    REFUSED_SIGNED_OUT, REFUSED_WITHOUT_GRANT, SIGN_IN, TAKE_OVER,
};
use conch_tools::{
    APP_MIME, APPS_EXTENSION, AppDoor, BoxFuture, McpApp, McpServer, McpSession, NoOneToAsk, Tools,
    ToolsConfig,
};
use conch_tools::{Mode, app};
use serde_json::{Value, json};

/// The one sign-in code the fake door takes.
const GOOD_CODE: &str = "0123456789abcdef0123456789abcdef01234567";

/// A door that records what reached it: (conversation, what).
#[derive(Debug, Default)]
struct Recorder {
    acts: Mutex<Vec<(String, String)>>,
    drives: Mutex<bool>,
    codes_used: Mutex<Vec<String>>,
    /// The sign-ins ended (the person signed out of the panel).
    ended: Mutex<bool>,
}

impl Recorder {
    fn acts(&self) -> Vec<(String, String)> {
        self.acts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl AppDoor for Recorder {
    fn sign_in(&self, _conversation: &str, code: &str) -> Option<String> {
        let mut used = self
            .codes_used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if code == GOOD_CODE && !used.iter().any(|c| c == code) {
            used.push(code.to_owned());
            return Some(format!("sign-in-{}", used.len()));
        }
        None
    }

    fn still_signed_in(&self, _id: &str) -> bool {
        !*self
            .ended
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn look<'a>(&'a self, conversation: &'a str, _after: u64) -> BoxFuture<'a, Value> {
        self.acts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((conversation.to_owned(), "look".to_owned()));
        Box::pin(async { json!({ "seq": 1, "frame": "AAAA", "cards": [] }) })
    }

    fn command<'a>(&'a self, conversation: &'a str, command: Value) -> BoxFuture<'a, Vec<Value>> {
        if command["type"] == "takeover" {
            *self
                .drives
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = true;
        }
        self.acts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((conversation.to_owned(), command.to_string()));
        Box::pin(async { Vec::new() })
    }

    fn person_drives(&self, _conversation: &str) -> bool {
        *self
            .drives
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn answer(&self, conversation: &str, id: &str, choice: &str) -> Result<(), String> {
        self.acts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((conversation.to_owned(), format!("answer {id} {choice}")));
        Ok(())
    }
}

fn offline_tools() -> Tools {
    let dir = std::env::temp_dir().join("conch-tools-offline-home");
    let mut config = conch_browser::BrowserConfig::new(conch_browser::Home::new(dir));
    config.download = None;
    Tools::new(
        conch_browser::Browser::new(config),
        ToolsConfig::new(Arc::new(NoOneToAsk)),
    )
}

fn server(door: &Arc<Recorder>) -> McpServer {
    McpServer::new(offline_tools(), Mode::Ask)
        .with_app(McpApp {
            html: "<!doctype html><title>Conch</title>".to_owned(),
            connect_domains: Vec::new(),
        })
        .with_app_door(Arc::clone(door) as Arc<dyn AppDoor>)
}

async fn request(session: &McpSession, method: &str, params: Value) -> Value {
    session
        .handle(&json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }))
        .await
        .expect("an answer")
}

/// A session of conversation `conversation` whose client declares MCP Apps (or not).
async fn session(server: &McpServer, conversation: &str, apps: bool) -> McpSession {
    let session = server.session(conversation);
    let capabilities = if apps {
        json!({ "extensions": { APPS_EXTENSION: { "mimeTypes": [APP_MIME] } } })
    } else {
        json!({})
    };
    let hello = request(
        &session,
        "initialize",
        json!({ "protocolVersion": "2025-11-25", "capabilities": capabilities,
                "clientInfo": { "name": "t", "version": "1" } }),
    )
    .await;
    assert!(hello.get("result").is_some(), "{hello}");
    session
}

async fn call(session: &McpSession, name: &str, arguments: Value) -> Value {
    request(
        session,
        "tools/call",
        json!({ "name": name, "arguments": arguments }),
    )
    .await
}

/// The text of a tool result.
fn text(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Signs `session` in with the good code: its grant.
async fn sign_in(session: &McpSession) -> String {
    let signed = call(session, SIGN_IN, json!({ "code": GOOD_CODE })).await;
    assert_eq!(signed["result"]["isError"], false, "{signed}");
    signed["result"]["structuredContent"]["grant"]
        .as_str()
        .expect("a grant")
        .to_owned()
}

/// Issue 31, LIVE-8: the model calls every app-only tool (no grant, a made-up grant, a
/// wrong sign-in code): each is refused with a sentence that says so, and nothing reaches
/// the door; a client without the extension doesn't even have the tools.
#[tokio::test]
async fn live_8_the_model_calling_the_app_only_tools_is_refused_and_nothing_acts() {
    let door = Arc::new(Recorder::default());
    let server = server(&door);
    let model = session(&server, "c1", true).await;
    let made_up = "f".repeat(64);
    for name in [LOOK, TAKE_OVER, INPUT, HAND_BACK, ANSWER] {
        for args in [
            json!({}),
            json!({ "grant": made_up, "input": { "type": "text", "text": "x" }, "id": "q1", "choice": "always" }),
        ] {
            let answer = call(&model, name, args).await;
            assert_eq!(answer["result"]["isError"], true, "{name}: {answer}");
            assert_eq!(text(&answer), REFUSED_WITHOUT_GRANT, "{name}");
            assert!(
                answer["result"].get("structuredContent").is_none(),
                "{answer}"
            );
        }
    }
    let guessed = call(&model, SIGN_IN, json!({ "code": "not-a-code" })).await;
    assert_eq!(text(&guessed), CODE_REFUSED, "{guessed}");
    assert!(!guessed.to_string().contains("grant\""), "{guessed}");
    // The new era (2026-07-28, no handshake) refuses the same way.
    let modern = server.session("c3");
    let answer = modern
        .handle(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": TAKE_OVER, "arguments": { "grant": made_up },
            "_meta": { conch_tools::META_VERSION: conch_tools::MODERN_VERSION,
                       conch_tools::META_CAPABILITIES: { "extensions": { APPS_EXTENSION: { "mimeTypes": [APP_MIME] } } } } } }))
        .await
        .expect("an answer");
    assert_eq!(text(&answer), REFUSED_WITHOUT_GRANT, "{answer}");
    assert!(door.acts().is_empty(), "something acted: {:?}", door.acts());

    // Without the extension the tools don't exist.
    let plain = session(&server, "c2", false).await;
    for name in APP_ONLY_TOOLS {
        let answer = call(&plain, name, json!({ "code": GOOD_CODE })).await;
        assert_eq!(answer["error"]["code"], -32602, "{name}: {answer}");
    }
    assert!(door.acts().is_empty(), "{:?}", door.acts());
    assert!(
        door.codes_used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_empty(),
        "a client without the extension used the person's code"
    );
}

/// Issue 31, LIVE-15: a grant the person got in conversation A's view, used from
/// conversation B's session, is refused and nothing acts in either; in A it acts for A.
#[tokio::test]
async fn live_15_a_grant_from_one_conversation_is_refused_in_another() {
    let door = Arc::new(Recorder::default());
    let server = server(&door);
    let a = session(&server, "conv-a", true).await;
    let b = session(&server, "conv-b", true).await;
    let grant = sign_in(&a).await;
    for name in [LOOK, TAKE_OVER, INPUT, HAND_BACK, ANSWER] {
        let answer = call(
            &b,
            name,
            json!({ "grant": grant, "input": { "type": "pointer", "action": "down", "x": 1, "y": 1 }, "id": "q1", "choice": "always" }),
        )
        .await;
        assert_eq!(
            text(&answer),
            REFUSED_OTHER_CONVERSATION,
            "{name}: {answer}"
        );
    }
    assert!(door.acts().is_empty(), "{:?}", door.acts());
    let took = call(&a, TAKE_OVER, json!({ "grant": grant })).await;
    assert_eq!(took["result"]["isError"], false, "{took}");
    let answered = call(
        &a,
        ANSWER,
        json!({ "grant": grant, "id": "q1", "choice": "thisChat" }),
    )
    .await;
    assert_eq!(answered["result"]["isError"], false, "{answered}");
    let acts = door.acts();
    assert!(acts.iter().all(|(conv, _)| conv == "conv-a"), "{acts:?}");
    assert_eq!(acts.len(), 2, "{acts:?}");
    // A code works once: a second sign-in with it is refused.
    let again = call(&b, SIGN_IN, json!({ "code": GOOD_CODE })).await;
    assert_eq!(text(&again), CODE_REFUSED);
}

/// SEC-7, issue 31: what the person types through the inline view reaches the page's
/// door and appears in no result (not the model's text, not the view's data); keys and
/// text are refused until the person holds the wheel.
#[tokio::test]
async fn sec_7_a_canary_the_person_types_in_the_inline_view_is_in_no_result() {
    let canary = "CANARY-inline-7f3a";
    let door = Arc::new(Recorder::default());
    let server = server(&door);
    let person = session(&server, "c1", true).await;
    // A sign-in link pasted whole works as its code.
    let signed = call(
        &person,
        SIGN_IN,
        json!({ "code": format!("http://127.0.0.1:7391/signin?code={GOOD_CODE}") }),
    )
    .await;
    let grant = signed["result"]["structuredContent"]["grant"]
        .as_str()
        .expect("a grant")
        .to_owned();
    assert!(
        !text(&signed).contains(&grant),
        "the model's text holds the grant"
    );
    let early = call(
        &person,
        INPUT,
        json!({ "grant": grant, "input": { "type": "text", "text": canary } }),
    )
    .await;
    assert_eq!(text(&early), app::TAKE_OVER_FIRST, "{early}");
    assert!(door.acts().is_empty());
    call(&person, TAKE_OVER, json!({ "grant": grant })).await;
    let typed = call(
        &person,
        INPUT,
        json!({ "grant": grant, "input": { "type": "text", "text": canary } }),
    )
    .await;
    assert_eq!(typed["result"]["isError"], false, "{typed}");
    assert!(!typed.to_string().contains(canary), "{typed}");
    assert!(
        door.acts().iter().any(|(_, what)| what.contains(canary)),
        "the text never reached the page: {:?}",
        door.acts()
    );
    let other = call(
        &person,
        INPUT,
        json!({ "grant": grant, "input": { "type": "find", "text": canary } }),
    )
    .await;
    assert_eq!(other["result"]["isError"], true);
    assert!(!other.to_string().contains(canary), "{other}");
}

/// Issue 31: a client with the extension lists the app-only tools, each visible to the
/// app only; the rest of its list is the plain client's, so the model's list is as small
/// as before (at most 5,000 characters) and a plain client's list is unchanged.
#[tokio::test]
async fn issue_31_app_only_tools_are_listed_only_to_apps_clients_and_only_for_the_app() {
    let door = Arc::new(Recorder::default());
    let server = server(&door);
    let plain = session(&server, "c1", false).await;
    let apps = session(&server, "c2", true).await;
    let plain_list = request(&plain, "tools/list", json!({})).await["result"]["tools"].clone();
    let apps_list = request(&apps, "tools/list", json!({})).await["result"]["tools"].clone();
    let names = |list: &Value| -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(
        names(&plain_list).iter().all(|n| !app::is_app_only(n)),
        "{plain_list}"
    );
    let for_model: Vec<&Value> = apps_list
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["_meta"]["ui"]["visibility"] != json!(["app"]))
        .collect();
    let app_only: Vec<&str> = apps_list
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["_meta"]["ui"]["visibility"] == json!(["app"]))
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(app_only, APP_ONLY_TOOLS);
    assert_eq!(
        for_model
            .iter()
            .map(|t| t["name"].clone())
            .collect::<Vec<_>>(),
        plain_list
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].clone())
            .collect::<Vec<_>>()
    );
    let model_chars = serde_json::to_string(&json!({ "tools": for_model }))
        .unwrap()
        .len();
    assert!(
        model_chars <= 5_000,
        "the model's list is {model_chars} characters"
    );
}

/// Issue 31, LIVE-8 with the budget at once (the seam of the inline view and the
/// conversation's meter): the person's inline view fetching frames through its app-only
/// tools is never withheld by the agent's budget and spends none of it; what the agent
/// reads is all the budget counts.
#[tokio::test]
async fn live_8_the_inline_views_looks_spend_none_of_the_agents_budget() {
    let door = Arc::new(Recorder::default());
    let tools = offline_tools();
    let server = McpServer::new(tools.clone(), Mode::Ask)
        .with_app(McpApp {
            html: "<!doctype html><title>Conch</title>".to_owned(),
            connect_domains: Vec::new(),
        })
        .with_app_door(Arc::clone(&door) as Arc<dyn AppDoor>);
    let view = session(&server, "c1", true).await;
    let grant = sign_in(&view).await;
    assert!(tools.set_budget("c1", Some(1)), "the conversation is held");
    for _ in 0..10 {
        let look = call(&view, LOOK, json!({ "grant": grant })).await;
        assert_eq!(look["result"]["isError"], false, "{look}");
        assert_eq!(
            look["result"]["structuredContent"]["frame"], "AAAA",
            "the view's frame was withheld: {look}"
        );
    }
    let (spent, budget) = tools.spent("c1").expect("the conversation");
    assert_eq!(budget, Some(1));
    assert_eq!(spent.chars, 0, "the view's looks were counted: {spent:?}");
}

/// Issue 31, LIVE-18: a grant lives only as long as the panel sign-in its code made: once
/// the door says that sign-in ended (the person signed out of the panel, or it sat idle
/// past the panel's idle time), every tool is refused with a sentence that says so and
/// tells the view to sign in again, and nothing reaches the door; a new code signs in
/// again.
#[tokio::test]
async fn live_18_a_grant_ends_when_its_panel_sign_in_ends() {
    let door = Arc::new(Recorder::default());
    let server = server(&door);
    let view = session(&server, "c1", true).await;
    let grant = sign_in(&view).await;
    let took = call(&view, TAKE_OVER, json!({ "grant": grant })).await;
    assert_eq!(took["result"]["isError"], false, "{took}");
    let acted = door.acts().len();
    *door
        .ended
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = true;
    for name in [LOOK, TAKE_OVER, INPUT, HAND_BACK, ANSWER] {
        let answer = call(
            &view,
            name,
            json!({ "grant": grant, "input": { "type": "text", "text": "after" }, "id": "q1", "choice": "always" }),
        )
        .await;
        assert_eq!(answer["result"]["isError"], true, "{name}: {answer}");
        assert_eq!(text(&answer), REFUSED_SIGNED_OUT, "{name}");
        assert_eq!(
            answer["result"]["structuredContent"],
            json!({ "signedOut": true }),
            "the view is told to sign in again: {answer}"
        );
    }
    assert_eq!(door.acts().len(), acted, "acted after: {:?}", door.acts());
}

/// Issue 31: over new-era HTTP (a server with handles) each app-only tool also takes the
/// conversation handle, added beside its arguments (which stay as they were); the model's
/// part of the list is the plain client's, handle and all.
#[tokio::test]
async fn issue_31_app_only_tools_take_the_conversation_handle_where_handles_are() {
    let door = Arc::new(Recorder::default());
    let with = server(&door).with_handles();
    let without = server(&door);
    let list = |server: &McpServer, apps: bool| {
        let session = server.session("c1");
        let mut capabilities = json!({});
        if apps {
            capabilities = json!({ "extensions": { APPS_EXTENSION: { "mimeTypes": [APP_MIME] } } });
        }
        async move {
            let answer = session
                .handle(
                    &json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {
                    "_meta": { conch_tools::META_VERSION: conch_tools::MODERN_VERSION,
                               conch_tools::META_CAPABILITIES: capabilities } } }),
                )
                .await;
            answer
                .map(|a| a["result"]["tools"].clone())
                .unwrap_or_default()
        }
    };
    let handled = list(&with, true).await;
    let plain = list(&without, true).await;
    let model_only = list(&with, false).await;
    let tools = |list: &Value| list.as_array().cloned().unwrap_or_default();
    for (tool, before) in tools(&handled).iter().zip(tools(&plain)) {
        if !app::is_app_only(tool["name"].as_str().unwrap_or_default()) {
            continue;
        }
        let properties = &tool["inputSchema"]["properties"];
        assert_eq!(properties["conversation"]["type"], "string", "{tool}");
        let mut others = properties.clone();
        if let Some(o) = others.as_object_mut() {
            o.remove("conversation");
        }
        assert_eq!(others, before["inputSchema"]["properties"], "{tool}");
        assert_eq!(
            tool["inputSchema"]["required"],
            before["inputSchema"]["required"]
        );
    }
    assert_eq!(
        tools(&handled)
            .iter()
            .filter(|t| app::is_app_only(t["name"].as_str().unwrap_or_default()))
            .count(),
        APP_ONLY_TOOLS.len()
    );
    // The model's tools: the same names and arguments as a plain client's.
    let schemas = |list: Vec<Value>| -> Vec<(Value, Value)> {
        list.into_iter()
            .filter(|t| !app::is_app_only(t["name"].as_str().unwrap_or_default()))
            .map(|t| (t["name"].clone(), t["inputSchema"].clone()))
            .collect()
    };
    assert_eq!(schemas(tools(&handled)), schemas(tools(&model_only)));
}
