//! What the traces and errors never show (SEC-8, LAUNCH-18): typed text, cookie values,
//! authorization headers, and credentials in addresses.

use conch_cdp::protocol::input::{DispatchKeyEvent, InsertText, KeyEventType};
use conch_cdp::protocol::runtime;
use conch_cdp::{Config, Connection, redact};
use conch_fixtures::FixtureServer;
use conch_fixtures::fake_cdp::FakeCdp;
use serde_json::json;

use crate::support::{Capture, eval, launch, navigate, new_page};

const SECRETS: &[&str] = &[
    "hunter2-typed",
    "key-text-s3cr3t",
    "cookie-value-s3cr3t",
    "set-cookie-s3cr3t",
    "bearer-s3cr3t",
    "apikey-s3cr3t",
    "url-password-s3cr3t",
    "posted-s3cr3t",
];

fn assert_no_secret(lines: &[String]) {
    for line in lines {
        for secret in SECRETS {
            assert!(!line.contains(secret), "a trace shows {secret}: {line}");
        }
    }
}

/// SEC-8: every message is traced, with typed text, cookies, auth headers, posted data
/// and credentials in addresses redacted: in calls, in replies and in events.
#[tokio::test]
async fn wire_traces_redact_typed_text_cookies_and_credentials_sec_8() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let fake = FakeCdp::start().await.expect("fake");
    let connection = Connection::connect(&fake.ws_url()).await.expect("connect");
    let browser = connection.browser();

    browser
        .call(&InsertText {
            text: "hunter2-typed".into(),
        })
        .await
        .expect("Input.insertText");
    let mut key = DispatchKeyEvent::new(KeyEventType::KeyDown);
    key.text = Some("key-text-s3cr3t".into());
    key.key = Some("key-text-s3cr3t".into());
    key.unmodified_text = Some("key-text-s3cr3t".into());
    browser.call(&key).await.expect("Input.dispatchKeyEvent");
    browser
        .call_raw(
            "Network.setCookie",
            json!({ "name": "sid", "value": "cookie-value-s3cr3t", "url": "https://user:url-password-s3cr3t@example.test/?apiKey=apikey-s3cr3t" }),
        )
        .await
        .expect("Network.setCookie");
    browser
        .call_raw(
            "Storage.setCookies",
            json!({ "cookies": [{ "name": "sid", "value": "cookie-value-s3cr3t", "domain": "example.test" }] }),
        )
        .await
        .expect("Storage.setCookies");
    // A reply that carries cookies (the fake echoes the params back as the result).
    browser
        .call_raw(
            "Fake.echo",
            json!({ "cookies": [{ "name": "sid", "value": "cookie-value-s3cr3t" }] }),
        )
        .await
        .expect("echo");
    // Events with cookie headers, blocked cookies, auth headers and posted data.
    let mut events = connection
        .session("S1".into())
        .events("Network.requestWillBeSentExtraInfo");
    browser
        .call_raw(
            "Fake.emit",
            json!({ "events": [
                { "sessionId": "S1", "method": "Network.requestWillBeSentExtraInfo", "params": {
                    "requestId": "1",
                    "associatedCookies": [{ "blockedReasons": [], "cookie": { "name": "sid", "value": "cookie-value-s3cr3t" } }],
                    "headers": { "Cookie": "sid=cookie-value-s3cr3t", "Authorization": "Bearer bearer-s3cr3t" }
                }},
                { "method": "Network.responseReceivedExtraInfo", "params": {
                    "requestId": "1",
                    "headers": { "set-cookie": "sid=set-cookie-s3cr3t" },
                    "blockedCookies": [{ "blockedReasons": [], "cookieLine": "sid=set-cookie-s3cr3t" }]
                }},
                { "method": "Network.requestWillBeSent", "params": {
                    "request": { "url": "http://127.0.0.1/login?apiKey=apikey-s3cr3t", "method": "POST", "headers": {}, "postData": "password=posted-s3cr3t" }
                }}
            ]}),
        )
        .await
        .expect("emit");
    // The subscriber still gets the real values: only the traces are redacted.
    let event = futures_util::StreamExt::next(&mut events)
        .await
        .expect("event");
    assert!(event.params().get().contains("cookie-value-s3cr3t"));

    let lines = capture.lines();
    let wire: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("conch_cdp::wire"))
        .collect();
    assert!(
        wire.iter()
            .any(|l| l.contains("Input.insertText") && l.contains(redact::REDACTED)),
        "no redacted Input.insertText trace in {lines:#?}"
    );
    assert!(
        wire.iter()
            .any(|l| l.contains("Input.dispatchKeyEvent") && l.contains("keyDown"))
    );
    assert!(
        wire.iter()
            .any(|l| l.contains("Network.requestWillBeSentExtraInfo"))
    );
    assert!(wire.iter().any(|l| l.contains("apiKey=***")), "{lines:#?}");
    assert!(wire.iter().any(|l| l.contains("direction=recv")));
    assert!(wire.iter().any(|l| l.contains("direction=send")));
    assert_no_secret(&lines);
}

/// SEC-8, issue 12: headers in the `[{name, value}]` shape (`Fetch.continueRequest`,
/// `Fetch.requestPaused`'s response headers), the object shape inside `Fetch.requestPaused`,
/// `Fetch.continueWithAuth`'s user name and password, and the values in Runtime calls,
/// replies and events never reach a trace; harmless headers and numbers still do.
#[tokio::test]
async fn sec_8_fetch_headers_auth_and_runtime_values_are_redacted() {
    const CANARIES: &[&str] = &[
        "fetch-cookie-c4n4ry",
        "fetch-bearer-c4n4ry",
        "paused-cookie-c4n4ry",
        "paused-set-cookie-c4n4ry",
        "auth-user-c4n4ry",
        "auth-password-c4n4ry",
        "runtime-arg-c4n4ry",
        "console-c4n4ry",
        "returned-field-c4n4ry",
    ];
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let fake = FakeCdp::start().await.expect("fake");
    let connection = Connection::connect(&fake.ws_url()).await.expect("connect");
    let browser = connection.browser();
    browser
        .call_raw(
            "Fetch.continueRequest",
            json!({ "requestId": "r1", "headers": [
                { "name": "Cookie", "value": "sid=fetch-cookie-c4n4ry" },
                { "name": "authorization", "value": "Bearer fetch-bearer-c4n4ry" },
                { "name": "Accept", "value": "text/html" }
            ]}),
        )
        .await
        .expect("Fetch.continueRequest");
    browser
        .call_raw(
            "Fetch.continueWithAuth",
            json!({ "requestId": "r2", "authChallengeResponse": {
                "response": "ProvideCredentials",
                "username": "auth-user-c4n4ry",
                "password": "auth-password-c4n4ry"
            }}),
        )
        .await
        .expect("Fetch.continueWithAuth");
    browser
        .call_raw(
            "Runtime.callFunctionOn",
            json!({ "objectId": "1", "functionDeclaration": "function(v) { this.value = v; }",
                    "arguments": [{ "value": "runtime-arg-c4n4ry" }, { "value": 7 }] }),
        )
        .await
        .expect("Runtime.callFunctionOn");
    browser
        .call_raw(
            "Fake.emit",
            json!({ "events": [
                { "method": "Fetch.requestPaused", "params": {
                    "requestId": "r3",
                    "request": { "url": "http://127.0.0.1/", "method": "GET",
                                 "headers": { "Cookie": "sid=paused-cookie-c4n4ry" } },
                    "responseStatusCode": 200,
                    "responseHeaders": [
                        { "name": "Set-Cookie", "value": "sid=paused-set-cookie-c4n4ry" },
                        { "name": "Content-Type", "value": "text/html" }
                    ]
                }},
                { "method": "Runtime.consoleAPICalled", "params": {
                    "type": "log", "executionContextId": 1, "timestamp": 1.0,
                    "args": [{ "type": "string", "value": "console-c4n4ry" }]
                }}
            ]}),
        )
        .await
        .expect("emit");
    // A reply of a script that read a field back, as conch-cdp traces it.
    let mut reply = json!({ "result": { "type": "object", "value": { "field": "returned-field-c4n4ry", "n": 3 },
        "preview": { "properties": [{ "name": "v", "type": "string", "value": "returned-field-c4n4ry" }] } } });
    redact::message("Runtime.callFunctionOn", &mut reply);
    assert!(
        !reply.to_string().contains("returned-field-c4n4ry"),
        "{reply}"
    );
    let mut number = json!({ "result": { "type": "number", "value": 42 } });
    redact::message("Runtime.evaluate", &mut number);
    assert_eq!(number["result"]["value"], 42);

    let lines = capture.lines();
    let wire: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("conch_cdp::wire"))
        .collect();
    for method in [
        "Fetch.continueRequest",
        "Fetch.continueWithAuth",
        "Fetch.requestPaused",
        "Runtime.callFunctionOn",
        "Runtime.consoleAPICalled",
    ] {
        assert!(
            wire.iter()
                .any(|l| l.contains(method) && l.contains(redact::REDACTED)),
            "no redacted {method} trace in {lines:#?}"
        );
    }
    assert!(
        wire.iter().any(|l| l.contains("text/html")),
        "harmless headers are kept: {lines:#?}"
    );
    // The test's own order to the fake (Fake.emit) carries the events as its params, under
    // a method no browser has; the events themselves are what a browser sends.
    for line in lines.iter().filter(|l| !l.contains("method=Fake.emit")) {
        for canary in CANARIES {
            assert!(!line.contains(canary), "a trace shows {canary}: {line}");
        }
    }
}

/// LAUNCH-18: a DevTools address with an API key in its query (the fake refuses the
/// handshake without it) connects and works, and neither the traces nor any error show
/// the key or the address's password.
#[tokio::test]
async fn credentials_in_the_address_never_reach_traces_or_errors_launch_18() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let fake = FakeCdp::start_requiring("apiKey=apikey-s3cr3t")
        .await
        .expect("fake");
    let address = format!("{}?apiKey=apikey-s3cr3t", fake.ws_url());
    let connection = Connection::connect(&address)
        .await
        .expect("connect with the key");
    assert_eq!(fake.handshakes(), 1, "the key did not reach the server");
    connection
        .browser()
        .call_raw("Fake.echo", json!({ "n": 1 }))
        .await
        .expect("a call");
    assert!(!format!("{connection:?}").contains("apikey-s3cr3t"));

    // Refused (wrong key): the error says why without the key.
    let wrong = format!("{}?apiKey=bearer-s3cr3t", fake.ws_url());
    let error = Connection::connect(&wrong).await.expect_err("wrong key");
    let shown = format!("{error} {error:?}");
    assert!(shown.contains("401"), "{shown}");
    assert!(shown.contains("apiKey=***"), "{shown}");
    assert!(!shown.contains("bearer-s3cr3t"), "{shown}");

    // Unreachable, with a password and a key: the error names the host only.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let unreachable =
        format!("ws://user:url-password-s3cr3t@127.0.0.1:{port}/devtools?apiKey=apikey-s3cr3t");
    let error = Connection::connect_with(&unreachable, Config::default())
        .await
        .expect_err("nobody listens");
    let shown = format!("{error} {error:?}");
    assert!(shown.contains("127.0.0.1"), "{shown}");
    assert!(
        !shown.contains("url-password-s3cr3t") && !shown.contains("apikey-s3cr3t"),
        "{shown}"
    );
    // Discovery over http with a key.
    let error = Connection::connect(&format!("http://127.0.0.1:{port}/?apiKey=apikey-s3cr3t"))
        .await
        .expect_err("nobody listens");
    assert!(!format!("{error} {error:?}").contains("apikey-s3cr3t"));

    assert_no_secret(&capture.lines());
}

/// SEC-8 on the redaction rules themselves.
#[test]
fn redaction_rules_sec_8() {
    assert_eq!(
        redact::url("wss://user:pw@cloud.example/session?apiKey=k&x=1#frag"),
        "wss://***:***@cloud.example/session?apiKey=***&x=***"
    );
    assert_eq!(
        redact::url("ws://127.0.0.1:9222/devtools/browser/ab"),
        "ws://127.0.0.1:9222/devtools/browser/ab"
    );
    assert_eq!(redact::url("not a url?token=abc"), "[redacted]");
    let mut key =
        json!({ "type": "keyDown", "key": "a", "code": "KeyA", "text": "a", "modifiers": 8 });
    redact::message("Input.dispatchKeyEvent", &mut key);
    assert_eq!(
        key,
        json!({ "type": "keyDown", "key": "[redacted]", "code": "[redacted]", "text": "[redacted]", "modifiers": 8 })
    );
    let mut cookies = json!({ "cookies": [{ "name": "a", "value": "b", "domain": "d" }] });
    redact::message("Network.getCookies", &mut cookies);
    assert_eq!(
        cookies,
        json!({ "cookies": [{ "name": "a", "value": "[redacted]", "domain": "d" }] })
    );
    let mut long = json!({ "data": "A".repeat(10_000) });
    redact::message("Page.captureScreenshot", &mut long);
    assert!(
        long["data"]
            .as_str()
            .is_some_and(|d| d.len() < 400 && d.contains("10000 bytes"))
    );
}

/// ERR-9: the values of local storage never reach a trace: in `getDOMStorageItems`'
/// reply, in `setDOMStorageItem`'s call and in the DOMStorage events. Keys and origins
/// stay.
#[test]
fn err_9_dom_storage_values_are_redacted() {
    const STORED: &str = "stored-token-CANARY-7a41";
    let id = json!({ "securityOrigin": "https://shop.test", "isLocalStorage": true });
    let mut reply = json!({ "entries": [["token", STORED], ["theme", STORED]] });
    redact::message("DOMStorage.getDOMStorageItems", &mut reply);
    assert_eq!(
        reply,
        json!({ "entries": [["token", "[redacted]"], ["theme", "[redacted]"]] })
    );
    let mut set = json!({ "storageId": id, "key": "token", "value": STORED });
    redact::message("DOMStorage.setDOMStorageItem", &mut set);
    let mut added = json!({ "storageId": id, "key": "token", "newValue": STORED });
    redact::message("DOMStorage.domStorageItemAdded", &mut added);
    let mut updated =
        json!({ "storageId": id, "key": "token", "oldValue": STORED, "newValue": STORED });
    redact::message("DOMStorage.domStorageItemUpdated", &mut updated);
    for message in [&set, &added, &updated] {
        assert!(!message.to_string().contains(STORED), "{message}");
        assert_eq!(message["key"], "token", "keys stay");
        let origin = message["storageId"]["securityOrigin"].as_str();
        assert!(origin.is_some_and(|o| o.starts_with("https://shop.test")));
    }
}

/// SEC-8, issue 12 against the real browser: the typed text reaches the page, but not
/// the traces, not even in the reply of the script that reads it back.
#[tokio::test(flavor = "current_thread")]
async fn typed_text_reaches_the_page_but_not_the_traces_sec_8() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    let server = FixtureServer::start().await.expect("fixture server");
    let browser = launch().await;
    let page = new_page(&browser.connection).await;
    navigate(&page, &server.url("basic.html")).await;
    page.call(&runtime::Evaluate::value(
        "const i = document.createElement('input'); document.body.append(i); i.focus(); true",
    ))
    .await
    .expect("make an input");
    page.call(&InsertText {
        text: "hunter2-typed".into(),
    })
    .await
    .expect("Input.insertText");
    assert_eq!(
        eval(&page, "document.querySelector('input').value").await,
        "hunter2-typed"
    );
    let lines = capture.lines();
    assert!(
        lines.iter().any(|l| l.contains("Input.insertText")),
        "no trace of the call"
    );
    // The evaluate above reads the value back: its reply is redacted too (issue 12).
    assert!(
        lines
            .iter()
            .any(|l| l.contains("Runtime.evaluate") && l.contains("direction=recv")),
        "no trace of the reply"
    );
    for line in &lines {
        assert!(!line.contains("hunter2-typed"), "{line}");
    }
    browser.close().await;
}

/// SEC-7: a key event's trace names no key (its virtual key codes included), and a
/// prompt's answer shows neither going to the page nor in the closing event.
#[test]
fn sec_7_key_codes_and_a_prompts_answer_are_redacted() {
    let mut key = json!({
        "type": "keyDown", "key": "Q", "code": "KeyQ", "text": "Q", "unmodifiedText": "Q",
        "windowsVirtualKeyCode": 81, "nativeVirtualKeyCode": 81, "modifiers": 8,
        "commands": ["selectAll"],
    });
    redact::message("Input.dispatchKeyEvent", &mut key);
    let traced = key.to_string();
    for shown in ["\"Q\"", "KeyQ", "81", "selectAll"] {
        assert!(!traced.contains(shown), "{shown} in {traced}");
    }
    assert_eq!(key["modifiers"], 8, "what is no key stays");
    assert_eq!(key["type"], "keyDown");
    let mut answer = json!({ "accept": true, "promptText": "answer-canary-3d9a" });
    redact::message("Page.handleJavaScriptDialog", &mut answer);
    assert_eq!(
        answer,
        json!({ "accept": true, "promptText": "[redacted]" })
    );
    let mut closed = json!({ "result": true, "userInput": "answer-canary-3d9a" });
    redact::message("Page.javascriptDialogClosed", &mut closed);
    assert_eq!(closed, json!({ "result": true, "userInput": "[redacted]" }));
}
