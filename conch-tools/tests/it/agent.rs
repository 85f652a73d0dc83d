//! An agent-side script through the tools: a 12-field form, a cart on a 200-item page, a
//! page's confirm, and a popup (FORM-1, FORM-5, SNAP-11, DLG-6, DLG-7, DLG-12, TAB-3).

use conch_fixtures::FixtureServer;
use conch_tools::{Choice, Mode, QuestionKind};
use serde_json::{Value, json};

use crate::support::{Recorder, ref_of, setup, tools};

#[tokio::test(flavor = "multi_thread")]
async fn agent_fills_a_form_shops_confirms_and_follows_a_popup() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::Yes);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("agent", Mode::Ask);

    // A 12-field form in one browser_form call: one question in Ask mode (FORM-5).
    let page = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("tools-form.html") }),
        )
        .await
        .text();
    let field = |label: &str, value: &str| json!({ "ref": ref_of(&page, label), "value": value });
    let fields = json!([
        field("First name", "Ada"),
        field("Last name", "Lovelace"),
        field("Email", "ada@example.com"),
        field("Phone", "0123"),
        field("Street", "1 Analytical Row"),
        field("City", "London"),
        field("Postcode", "N1"),
        field("Country", "Italy"),
        field("Company", "Engines Ltd"),
        field("About you", "I like numbers"),
        field("Email me news", "true"),
        field("Pro plan", "true"),
    ]);
    let filled = chat
        .call("browser_form", &json!({ "fields": fields }))
        .await;
    assert!(
        filled.text().contains("Filled 12 of 12 fields"),
        "{}",
        filled.text()
    );
    assert_eq!(asker.kinds(), vec![QuestionKind::Site]);
    let create = ref_of(&page, "Create account");
    let sent = chat.call("browser_click", &json!({ "ref": create })).await;
    assert!(sent.text().contains("Thanks, Ada"), "{}", sent.text());
    let form = chat.conversation().evaluate("window.sent").await.unwrap();
    assert_eq!(form["city"], "London");
    assert_eq!(form["country"], "Italy");
    assert_eq!(form["news"], "on");
    assert_eq!(form["plan"], "pro");

    // A cart on a 200-item page: find the item, click it.
    chat.call(
        "browser_open",
        &json!({ "url": server.url("tools-cart.html") }),
    )
    .await;
    // find gives the item around the words (issue 11, class 7): the button beside them.
    let found = chat
        .call("browser_read", &json!({ "find": "Thing number 150" }))
        .await
        .text();
    let add = ref_of(&found, "Add thing 150");
    let added = chat.call("browser_click", &json!({ "ref": add })).await;
    assert!(!added.is_error, "{}", added.text());
    assert!(
        added.text().contains("In cart: 1") || added.text().contains("+ "),
        "{}",
        added.text()
    );
    let cart = chat.conversation().evaluate("window.added").await.unwrap();
    assert_eq!(cart, json!([150]));

    // A page's confirm goes through the permit flow (DLG-6); the site is already allowed,
    // so "Remove this item?" is accepted without a question, and its note comes back.
    let page = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("tools-confirm.html") }),
        )
        .await
        .text();
    let asked_before = asker.asked().len();
    let removed = chat
        .call("browser_click", &json!({ "ref": ref_of(&page, "Remove") }))
        .await;
    assert!(
        removed.text().contains("Remove this item?"),
        "{}",
        removed.text()
    );
    assert_eq!(asker.asked().len(), asked_before);
    let item = chat
        .conversation()
        .evaluate("item.textContent")
        .await
        .unwrap();
    assert_eq!(item, Value::String("Removed".to_owned()));
    // DLG-7: "Delete basket" confirms (high stakes); the site's "Are you sure?" right
    // after it is covered by that yes.
    let deleted = chat
        .call(
            "browser_click",
            &json!({ "ref": ref_of(&page, "Delete basket") }),
        )
        .await;
    assert!(!deleted.is_error, "{}", deleted.text());
    assert_eq!(asker.asked().len(), asked_before + 1);
    let item = chat
        .conversation()
        .evaluate("item.textContent")
        .await
        .unwrap();
    assert_eq!(item, Value::String("Deleted".to_owned()));

    // A link that opens a new tab: the result says so and names both tabs (TAB-3, TAB-4).
    let page = chat
        .call("browser_open", &json!({ "url": server.url("tabs.html") }))
        .await
        .text();
    let popup = chat
        .call(
            "browser_click",
            &json!({ "ref": ref_of(&page, "Open A in a new tab") }),
        )
        .await;
    let text = popup.text();
    assert!(text.contains("That opened a new tab, t2"), "{text}");
    assert!(text.contains("Tabs: t1"), "{text}");
    tools.browser().shutdown().await;
}

/// TAB-3 (issue 11: real apps, a link that opens a new tab): the new tab's first look is
/// read once its page has loaded. A page whose body waits 400 ms for a script was read blank, and the
/// agent had to wait for it and read again.
#[tokio::test(flavor = "multi_thread")]
async fn tab_3_a_new_tab_is_read_once_its_page_has_loaded() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools(&setup, Recorder::answering(Choice::ThisChat, Choice::Yes));
    let chat = tools.chat("agent", Mode::Ask);
    let page = chat
        .call("browser_open", &json!({ "url": server.url("tabs.html") }))
        .await
        .text();
    let opened = chat
        .call(
            "browser_click",
            &json!({ "ref": ref_of(&page, "Open A slowly in a new tab") }),
        )
        .await;
    let text = opened.text();
    assert!(!opened.is_error, "{text}");
    assert!(text.contains("That opened a new tab, t2"), "{text}");
    assert!(
        text.contains("A page whose body comes after a slow script."),
        "the new tab was read before its page came: {text}"
    );
    tools.browser().shutdown().await;
}
