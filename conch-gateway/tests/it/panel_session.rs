//! Sessions of the person's door in a real browser (LIVE-18, AMB-2, issue 28): the panel's
//! sign-in is bound to its own origin, so a local server the signed-in browser visits
//! learns nothing it can replay; "Sign out" ends this browser's session; a signed-out
//! browser gets a fresh link printed on standard error and follows a handoff's link
//! through sign-in back to the handoff. axe-core checks each new state.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::live::wait_for_line;
use crate::panel_browser::Session;
use crate::support::door_request;

/// The stdio door's one conversation.
const STDIO: &str = "mcp-stdio";

/// A web server on another 127.0.0.1 port: it keeps the head of every request it gets
/// and answers each with a small page.
async fn attacker() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&heads);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let kept = Arc::clone(&kept);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                kept.lock()
                    .expect("the heads")
                    .push(String::from_utf8_lossy(&head).into_owned());
                let page = "<!doctype html><html lang=\"en\"><title>Elsewhere</title><main><h1>Another local app</h1></main></html>";
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                    page.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
            });
        }
    });
    (port, heads)
}

/// Every header line of `head` but the request line and `Host`.
fn replayable(head: &str) -> Vec<(String, String)> {
    head.lines()
        .skip(1)
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .filter(|(name, _)| !name.is_empty() && !name.eq_ignore_ascii_case("host"))
        .collect()
}

/// LIVE-18 (AMB-2): the person signs in and watches; their browser then visits another
/// server on 127.0.0.1, which captures every header it gets (the panel's cookie among
/// them, as cookies ignore ports) and replays them, with the panel's own Host and
/// Origin, against the settings, passwords, conversations and thumbnails API and the
/// live socket: each is refused (401/403), while the real panel still works.
#[tokio::test(flavor = "multi_thread")]
async fn live_18_a_local_server_the_signed_in_browser_visits_learns_nothing_it_can_replay() {
    let (_pages, session, _page) = Session::watching("basic.html", &[]).await;
    let panel_port = session.port();
    let (port, heads) = attacker().await;
    session
        .person
        .client
        .goto(&format!("http://127.0.0.1:{port}/welcome"))
        .await
        .expect("the other server answers");
    let captured: Vec<String> = heads.lock().expect("the heads").clone();
    assert!(!captured.is_empty(), "the browser visited the other server");
    let all = captured.join("\n");
    assert!(
        all.to_lowercase().contains("cookie: conch_session_"),
        "the panel's cookie reaches another local port (the threat is real): {all}"
    );

    let own_host = format!("127.0.0.1:{panel_port}");
    let own_origin = format!("http://127.0.0.1:{panel_port}");
    let mut tries = 0;
    for head in &captured {
        let replayed = replayable(head);
        // As captured, and with the panel's own Origin forged (a plain client can).
        let mut forged = replayed.clone();
        forged.retain(|(name, _)| !name.eq_ignore_ascii_case("origin"));
        forged.push(("Origin".to_owned(), own_origin.clone()));
        for headers in [&replayed, &forged] {
            let mut with_host: Vec<(&str, &str)> = vec![("Host", own_host.as_str())];
            with_host.extend(headers.iter().map(|(n, v)| (n.as_str(), v.as_str())));
            for (method, path, body) in [
                ("GET", "/api/browser/settings", ""),
                ("GET", "/api/browser/status", ""),
                (
                    "PATCH",
                    "/api/browser/settings",
                    r#"{"allowLocalhost":true}"#,
                ),
                ("GET", "/api/browser/passwords", ""),
                (
                    "POST",
                    "/api/browser/passwords",
                    r#"{"site":"example.com","username":"ada","password":"x"}"#,
                ),
                ("GET", "/api/browser/conversations", ""),
                (
                    "PUT",
                    "/api/browser/conversations/mcp-stdio/budget",
                    r#"{"chars":null}"#,
                ),
                ("GET", "/api/browser/shots/x.jpg", ""),
                ("POST", "/api/browser/sign-in-again", ""),
                ("DELETE", "/api/browser/session", ""),
            ] {
                let (status, _, said) =
                    door_request(panel_port, method, path, &with_host, body).await;
                assert!(
                    status == 401 || status == 403,
                    "{method} {path} replayed with {with_host:?} got {status}: {said}"
                );
                tries += 1;
            }
            // The live socket, offering the panel's subprotocol with whatever it has.
            let mut upgrade = with_host.clone();
            upgrade.extend([
                ("Connection", "Upgrade"),
                ("Upgrade", "websocket"),
                ("Sec-WebSocket-Version", "13"),
                ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
                ("Sec-WebSocket-Protocol", "conch"),
            ]);
            let (status, _, said) = crate::live::get(
                panel_port,
                &format!("/api/browser/live?conversation={STDIO}"),
                &upgrade,
            )
            .await;
            assert!(
                status == 401 || status == 403,
                "the live socket replayed with {upgrade:?} got {status}: {said}"
            );
            tries += 1;
        }
    }
    assert!(tries >= 20, "{tries}");
    let settings =
        std::fs::read_to_string(session.home.path().join("browser.json")).unwrap_or_default();
    assert!(!settings.contains("\"allowLocalhost\":true"), "{settings}");

    // The person's own panel still works: the live view, and the API with its token.
    session.open(&format!("conversation={STDIO}")).await;
    let listed = session
        .person
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1]; fetch('/api/browser/passwords', {headers: {'X-Conch-Session': localStorage.getItem('conch.session')}}).then(a => done(a.status));",
            vec![],
        )
        .await
        .expect("a script runs");
    assert_eq!(listed, json!(200));
    session.finish().await;
}

/// LIVE-18 (AMB-2): "Sign out of the panel" ends this browser's session: the live socket
/// closes, the page shows the sign-in page (no axe violation), and the old token and
/// cookie are refused by the API.
#[tokio::test(flavor = "multi_thread")]
async fn live_18_sign_out_ends_this_browsers_session() {
    let (_pages, session, _page) = Session::watching("basic.html", &[]).await;
    session.person.assert_accessible("with Sign out").await;
    let token = session
        .js("return localStorage.getItem('conch.session')")
        .await;
    let token = token.as_str().expect("the token is kept").to_owned();
    assert_eq!(token.len(), 64);
    let cookie = session
        .person
        .client
        .get_named_cookie(&format!("conch_session_{}", session.port()))
        .await
        .expect("the session's cookie")
        .value()
        .to_owned();
    let port = session.port();
    let pair = format!("conch_session_{port}={cookie}");
    let both = [
        ("Cookie", pair.as_str()),
        ("X-Conch-Session", token.as_str()),
    ];
    let (status, _, _) = door_request(port, "GET", "/api/browser/settings", &both, "").await;
    assert_eq!(status, 200, "signed in");

    session.click("#panel-sign-out").await;
    session
        .wait_until(
            "location.pathname === '/signin' && document.body.dataset.ready === '1'",
            "the sign-in page",
        )
        .await;
    let text = session.body_text().await;
    assert!(text.contains("Print a new sign-in link"), "{text}");
    session.person.assert_accessible("signed out").await;
    assert_eq!(
        session
            .js("return localStorage.getItem('conch.session')")
            .await,
        Value::Null,
        "the token is forgotten"
    );
    let (status, _, said) = door_request(port, "GET", "/api/browser/settings", &both, "").await;
    assert_eq!(status, 401, "the old session is ended: {said}");
    // Back at the panel's address, the browser gets the sign-in page, not the panel.
    session.sees_the_sign_in_page().await;
    session.finish().await;
}

/// AMB-2, HAND-1: a signed-out browser opens a handoff's link: it gets the sign-in page
/// (no axe violation), whose button prints a fresh link on the gateway's standard error
/// and never into the page; that link signs in and leads back to the handoff, which the
/// person ends with "I'm done".
#[tokio::test(flavor = "multi_thread")]
async fn amb_2_a_signed_out_browser_follows_a_handoff_link_through_sign_in() {
    let pages = conch_fixtures::FixtureServer::start()
        .await
        .expect("fixture server");
    let mut session = Session::start(&[]).await;
    let (page, error) = session
        .agent
        .call("browser_open", json!({ "url": pages.url("basic.html") }))
        .await;
    assert!(!error, "{page}");
    let call = session
        .agent
        .send_request(
            "tools/call",
            json!({ "name": "browser_handoff", "arguments": { "reason": "Please pay for the order." } }),
        )
        .await;
    let line = wait_for_line(&mut session.stderr, "Take over: ").await;
    let handoff = line
        .split("Take over: ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the handoff's link")
        .to_owned();
    assert!(handoff.starts_with(&session.door), "{handoff}");

    session
        .person
        .client
        .goto(&handoff)
        .await
        .expect("the handoff's link opens");
    session
        .wait_until("document.body.dataset.ready === '1'", "the sign-in page")
        .await;
    let text = session.body_text().await;
    assert!(text.contains("Print a new sign-in link"), "{text}");
    session.person.assert_accessible("the sign-in page").await;
    session.click("#print-link").await;
    let said = session
        .wait_until(
            "document.getElementById('outcome').textContent",
            "the button's outcome",
        )
        .await;
    assert!(
        said.as_str().unwrap_or_default().contains("standard error"),
        "{said}"
    );
    let line = wait_for_line(&mut session.stderr, "sign in at ").await;
    let fresh = line
        .split("sign in at ")
        .nth(1)
        .expect("the fresh link")
        .trim()
        .to_owned();
    let code = fresh.split("code=").nth(1).expect("a code");
    let html = session
        .js("return document.documentElement.outerHTML")
        .await;
    assert!(
        !html.as_str().unwrap_or_default().contains(code),
        "the link never reaches the page"
    );
    session
        .person
        .assert_accessible("the sign-in page, link printed")
        .await;

    session
        .person
        .client
        .goto(&fresh)
        .await
        .expect("the fresh link opens");
    session
        .wait_until(
            "!document.getElementById('handoff').hidden && document.getElementById('handoff-reason').textContent",
            "the handoff banner after the sign-in",
        )
        .await;
    let url = session.person.client.current_url().await.expect("a URL");
    assert_eq!(url.as_str(), handoff, "back at the handoff's link");
    session.click("#done").await;
    let answer = tokio::time::timeout(Duration::from_secs(60), session.answer_to(call))
        .await
        .expect("the handoff ends");
    assert!(answer.get("result").is_some(), "{answer}");
    session.finish().await;
}
