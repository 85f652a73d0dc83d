//! Tool calls without a browser: lenient argument reading, captions, error sentences,
//! the prompt fragment, and refusals that need no page (TOOL-6, TOOL-8, TOOL-9, TOOL-15,
//! NET-6).

use conch_tools::{
    BROWSER_HINT, EngineCaps, How, NO_BROWSER_NOTE, ToolCall, ToolError, browser_prompt,
};
use serde_json::json;

#[test]
fn weak_model_arguments_are_read_leniently() {
    let call = ToolCall::parse(
        "browser_click_at",
        &json!({ "x": "10", "y": 20.5, "description": "Buy", "extra": 1 }),
    )
    .unwrap();
    assert!(
        matches!(call, ToolCall::ClickAt { x, y, how: How::Click, .. } if x == 10.0 && y == 20.5)
    );
    let select = ToolCall::parse(
        "browser_select",
        &json!({ "ref": "e3", "values": "France" }),
    )
    .unwrap();
    assert_eq!(
        select,
        ToolCall::Select {
            reference: "e3".to_owned(),
            values: vec!["France".to_owned()]
        }
    );
    let form = ToolCall::parse(
        "browser_form",
        &json!({ "fields": [{ "ref": "e1", "value": true }] }),
    )
    .unwrap();
    assert!(matches!(form, ToolCall::Form { fields } if fields[0].value == "true"));
    assert_eq!(
        ToolCall::parse("browser_back", &serde_json::Value::Null).unwrap(),
        ToolCall::Back
    );
}

/// GES-8, issue 30: browser_type's `submit` is optional and off by default (the contract
/// grows only additively), read leniently as a boolean, and a caption says Enter follows
/// without showing the text; a value that is no boolean is one sentence naming the fix.
#[test]
fn ges_8_submit_is_optional_lenient_and_captioned() {
    let typed = |args: serde_json::Value| ToolCall::parse("browser_type", &args);
    let submit_of = |call: &ToolCall| match call {
        ToolCall::Type { submit, .. } => Some(*submit),
        _ => None,
    };
    let plain = typed(json!({ "ref": "e4", "text": "kettle" })).unwrap();
    assert_eq!(submit_of(&plain), Some(false));
    for (value, want) in [
        (json!(true), true),
        (json!("true"), true),
        (json!(1), true),
        (json!(false), false),
        (json!("False"), false),
        (json!(null), false),
    ] {
        let call = typed(json!({ "ref": "e4", "text": "kettle", "submit": value })).unwrap();
        assert_eq!(submit_of(&call), Some(want), "{value}");
    }
    let submitted = typed(json!({ "ref": "e4", "text": "kettle", "submit": true })).unwrap();
    assert_eq!(
        submitted.caption(Some("Search")),
        "Typing in “Search” and pressing Enter"
    );
    assert!(!submitted.caption(None).contains("kettle"));
    let bad = typed(json!({ "ref": "e4", "text": "kettle", "submit": "soon" })).unwrap_err();
    let text = bad.to_string();
    assert!(
        text.contains("is not true or false") && text.ends_with('.'),
        "{text}"
    );
}

/// TOOL-15: a call that doesn't fit is one sentence naming the fix.
#[test]
fn tool_15_bad_calls_are_one_sentence() {
    let errors = [
        ToolCall::parse("browser_click", &json!({})).unwrap_err(),
        ToolCall::parse("browser_tabs", &json!({ "action": "explode" })).unwrap_err(),
        ToolCall::parse("browser_fly", &json!({})).unwrap_err(),
        ToolError::NoPage,
        ToolError::StaleRef("e12".to_owned()),
        ToolError::NoSuchPart { parts: 3 },
        ToolError::Declined {
            question: "Let Conch use shop.test?".to_owned(),
        },
    ];
    for error in errors {
        let text = error.to_string();
        assert!(!text.is_empty() && text.chars().count() <= 300, "{text}");
        assert!(text.ends_with('.'), "{text}");
        let names_a_step = ["call", "use", "open", "ask", "give", "try", "don't"]
            .iter()
            .any(|w| text.to_lowercase().contains(w));
        assert!(names_a_step, "{text}");
    }
}

/// TOOL-6: a caption for every tool; never a typed value or a file's contents.
#[test]
fn tool_6_captions_never_show_values() {
    let typed =
        ToolCall::parse("browser_type", &json!({ "ref": "e4", "text": "hunter2" })).unwrap();
    assert_eq!(typed.caption(Some("Password")), "Typing in “Password”");
    assert!(!typed.caption(None).contains("hunter2"));
    let form = ToolCall::parse("browser_form", &json!({ "fields": (0..12).map(|i| json!({ "ref": format!("e{i}"), "value": "secret" })).collect::<Vec<_>>() })).unwrap();
    assert_eq!(form.caption(None), "Filling 12 fields");
    let click = ToolCall::parse("browser_click", &json!({ "ref": "e7" })).unwrap();
    assert_eq!(click.caption(Some("Place order")), "Clicking “Place order”");
    let upload = ToolCall::parse(
        "browser_upload",
        &json!({ "ref": "e2", "files": ["cv.pdf"] }),
    )
    .unwrap();
    assert_eq!(upload.caption(None), "Uploading 1 file");
}

/// TOOL-8, TOOL-9: the browser line of the engine's prompt.
#[test]
fn tool_8_and_tool_9_prompt_fragment() {
    let host = EngineCaps {
        host_tools: true,
        bridged: false,
        vision: true,
    };
    let bridge = EngineCaps {
        host_tools: false,
        bridged: true,
        vision: false,
    };
    let bare = EngineCaps::default();
    assert_eq!(browser_prompt(host, true), Some(BROWSER_HINT));
    assert_eq!(browser_prompt(bridge, true), Some(BROWSER_HINT));
    assert_eq!(browser_prompt(bridge, false), Some(NO_BROWSER_NOTE));
    assert_eq!(browser_prompt(host, false), None);
    assert_eq!(browser_prompt(bare, true), None);
    assert!(BROWSER_HINT.contains("browser_form") && BROWSER_HINT.contains("part"));
}
