//! What each result costs (issue 31): every result's size in `_meta` in both MCP eras
//! and on the library's result, the conversation's running total, and the person's
//! budget, which gives the step that would pass it a sentence instead of its page.

use conch_fixtures::FixtureServer;
use conch_tools::{COST_META, Choice, Cost, McpServer, Mode, TOKEN_METHOD, ToolResult};
use serde_json::{Value, json};

use crate::support::{Recorder, ref_of, setup, tools};

/// A `tools/call` message; `modern` puts the new era's version in `_meta`.
fn call_message(id: u64, tool: &str, args: &Value, modern: bool) -> Value {
    let mut params = json!({ "name": tool, "arguments": args });
    if modern {
        params["_meta"] = json!({ conch_tools::META_VERSION: conch_tools::MODERN_VERSION });
    }
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params })
}

/// The text of an MCP result's content, joined as [`ToolResult::text`] joins it.
fn mcp_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Issue 31: in both eras every `tools/call` result's `_meta` carries its characters,
/// its tokens by the named method, and the conversation's running total; the library's
/// result gives the same through `cost()` and `spent`.
#[tokio::test(flavor = "multi_thread")]
async fn cost_1_every_result_carries_its_size_in_both_eras_and_the_library() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools(&setup, Recorder::answering(Choice::No, Choice::No));
    let mcp = McpServer::new(tools.clone(), Mode::Ask);
    for modern in [false, true] {
        let session = mcp.session(if modern { "cost-modern" } else { "cost-legacy" });
        if !modern {
            let hello = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": { "protocolVersion": "2025-06-18", "capabilities": {} } });
            session.handle(&hello).await.expect("initialize");
        }
        let mut total = 0u64;
        let steps = [
            ("browser_open", json!({ "url": server.url("counter.html") })),
            ("browser_read", json!({})),
            ("browser_tabs", json!({ "action": "nonsense" })),
        ];
        for (n, (tool, args)) in steps.into_iter().enumerate() {
            let answer = Box::pin(session.handle(&call_message(n as u64 + 1, tool, &args, modern)))
                .await
                .expect("an answer");
            let result = &answer["result"];
            let cost = &result["_meta"][COST_META];
            let text = mcp_text(result);
            let chars = text.chars().count() as u64;
            assert_eq!(cost["chars"], chars, "{modern} {tool}: {cost}");
            assert_eq!(cost["tokens"], Cost::of_text(&text).tokens, "{cost}");
            assert!(cost["tokens"].as_u64().unwrap() > 0, "{cost}");
            assert_eq!(cost["method"], TOKEN_METHOD);
            total += chars;
            assert_eq!(cost["total"]["chars"], total, "{modern} {tool}: {cost}");
            if modern {
                assert_eq!(result["resultType"], "complete", "{result}");
                assert!(
                    result["_meta"][conch_tools::META_SERVER].is_object(),
                    "{result}"
                );
            }
        }
        let id = session.chat().id().to_owned();
        assert_eq!(tools.spent(&id).expect("held").0.chars, total);
    }

    // The library: the result says what it costs and what the conversation spent.
    let chat = tools.chat("cost-library", Mode::Ask);
    let opened: ToolResult = Box::pin(chat.call(
        "browser_open",
        &json!({ "url": server.url("counter.html") }),
    ))
    .await;
    let cost = opened.cost();
    assert_eq!(cost.chars, opened.text().chars().count() as u64);
    let spent = opened.spent.expect("counted");
    assert_eq!(spent.total, cost);
    assert!(!spent.withheld && spent.budget.is_none());
    let read = Box::pin(chat.call("browser_read", &json!({}))).await;
    assert_eq!(read.spent.expect("counted").total, cost.plus(read.cost()));
    assert_eq!(chat.spent(), cost.plus(read.cost()));
    tools.browser().shutdown().await;
}

/// Issue 31: with a small budget the step that would pass it gets one sentence instead
/// of its page (what was spent, how to read less); an act past it is still done, whole;
/// the next small step that fits still works.
#[tokio::test(flavor = "multi_thread")]
async fn cost_2_the_step_past_the_budget_gets_a_sentence_and_the_act_still_happens() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools(&setup, Recorder::answering(Choice::No, Choice::No));
    let chat = tools.chat("budget", Mode::FullTrust);
    let look = Box::pin(chat.call(
        "browser_open",
        &json!({ "url": server.url("long-page.html") }),
    ))
    .await;
    assert!(!look.is_error, "{}", look.text());
    let before = chat.spent();
    assert!(tools.set_budget("budget", Some(before.chars + 3000)));
    assert_eq!(tools.spent("budget").unwrap().1, Some(before.chars + 3000));

    // A part of the long page is 16,000 characters: past the budget.
    let read = Box::pin(chat.call("browser_read", &json!({}))).await;
    let said = read.text();
    assert!(!read.is_error, "{said}");
    let spent = read.spent.expect("counted");
    assert!(spent.withheld, "{said}");
    assert!(said.contains("is withheld"), "{said}");
    assert!(
        said.contains(&format!("budget of {}", group(before.chars + 3000))),
        "{said}"
    );
    assert!(said.contains("find") && said.contains("part"), "{said}");
    assert!(!said.contains("CONCH PAGE TEXT"), "no page text: {said}");
    assert_eq!(
        spent.total,
        before.plus(read.cost()),
        "only the sentence counts"
    );
    let meta = read.to_mcp();
    assert_eq!(meta["_meta"][COST_META]["withheld"], true, "{meta}");
    assert_eq!(meta["_meta"][COST_META]["budgetChars"], before.chars + 3000);

    // The next small step fits, and is whole.
    let tabs = Box::pin(chat.call("browser_tabs", &json!({ "action": "list" }))).await;
    assert!(!tabs.spent.expect("counted").withheld, "{}", tabs.text());
    assert!(!tabs.text().contains("is withheld"), "{}", tabs.text());

    // An act past the budget is done, whole; only its page text is withheld.
    assert!(tools.set_budget("budget", None));
    let page = Box::pin(chat.call(
        "browser_open",
        &json!({ "url": server.url("counter.html") }),
    ))
    .await
    .text();
    assert!(tools.set_budget("budget", Some(chat.spent().chars + 5)));
    let click = Box::pin(chat.call("browser_click", &json!({ "ref": ref_of(&page, "Add") }))).await;
    assert!(click.spent.expect("counted").withheld, "{}", click.text());
    assert!(
        click.text().starts_with("browser_click was done"),
        "{}",
        click.text()
    );
    let count: Value = chat
        .conversation()
        .evaluate("document.getElementById('count').textContent")
        .await
        .expect("the page");
    assert_eq!(count, "Count: 1", "the click happened once, whole");

    // The embedder's default budget (the gateway's --budget-chars) holds from the start.
    let setup2 = crate::support::setup();
    let browser = conch_browser::Browser::new(setup2.config.clone());
    let mut config = conch_tools::ToolsConfig::new(Recorder::answering(Choice::No, Choice::No));
    config.net.allow_localhost = true;
    config.budget_chars = Some(50);
    let capped = conch_tools::Tools::new(browser, config);
    let chat = capped.chat("capped", Mode::FullTrust);
    let opened = Box::pin(chat.call(
        "browser_open",
        &json!({ "url": server.url("counter.html") }),
    ))
    .await;
    assert!(opened.spent.expect("counted").withheld, "{}", opened.text());
    // An error's one sentence always passes: it is what the agent needs to go on.
    let bad = Box::pin(chat.call("browser_tabs", &json!({ "action": "nonsense" }))).await;
    assert!(bad.is_error && !bad.spent.expect("counted").withheld);
    capped.browser().shutdown().await;
    tools.browser().shutdown().await;
}

/// Issue 31: the budget is the person's. No tool argument, no `_meta` of a call and no
/// tool's schema reaches it: an agent that tries to raise it still gets the sentence.
#[tokio::test(flavor = "multi_thread")]
async fn cost_3_the_agent_cannot_change_its_budget() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools(&setup, Recorder::answering(Choice::No, Choice::No));
    for spec in conch_tools::tool_specs() {
        let schema = spec.to_mcp().to_string().to_lowercase();
        assert!(!schema.contains("budget"), "{}: {schema}", spec.name);
    }
    let mcp = McpServer::new(tools.clone(), Mode::FullTrust);
    let session = mcp.session("greedy");
    let hello = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {} } });
    session.handle(&hello).await.expect("initialize");
    assert!(tools.set_budget("greedy", Some(40)));
    let raise = json!({ "budget": 10_000_000, "budgetChars": 10_000_000,
        "budget_chars": 10_000_000, "chars": 10_000_000 });
    for (n, modern) in [false, true].into_iter().enumerate() {
        let mut args = raise.clone();
        args["url"] = json!(server.url("counter.html"));
        let mut message = call_message(n as u64 + 1, "browser_open", &args, modern);
        message["params"]["_meta"][COST_META] = json!({ "budgetChars": 10_000_000 });
        message["params"]["_meta"]["budgetChars"] = json!(10_000_000);
        let answer = Box::pin(session.handle(&message)).await.expect("an answer");
        let cost = &answer["result"]["_meta"][COST_META];
        assert_eq!(cost["withheld"], true, "{answer}");
        assert_eq!(cost["budgetChars"], 40, "{answer}");
        assert_eq!(tools.spent("greedy").unwrap().1, Some(40));
    }
    tools.browser().shutdown().await;
}

/// `n` with thousands separated by commas, as the sentences write numbers.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
