//! Misbehaviour from the scripted fake DevTools server (LAUNCH-17): each bad message is a
//! typed error for that message only, and the next good message still works; replies and
//! events are routed right; an abrupt close fails what is pending; timeouts fire.

use std::time::{Duration, Instant};

use conch_cdp::{Config, Connection, Error, ErrorKind, Errors, SessionId};
use conch_fixtures::fake_cdp::FakeCdp;
use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::support::within;

async fn connect(fake: &FakeCdp, config: Config) -> Connection {
    Connection::connect_with(&fake.ws_url(), config)
        .await
        .expect("connect to the fake")
}

/// The next dropped-message report.
async fn next_error(errors: &mut Errors) -> Error {
    within(5, "an error report", errors.next())
        .await
        .expect("the errors stream ended")
}

/// A good round trip on the browser session still works.
async fn assert_alive(connection: &Connection, n: u64) {
    let echoed = connection
        .browser()
        .call_raw("Fake.echo", json!({ "n": n }))
        .await
        .expect("a good call after a bad message");
    assert_eq!(echoed, json!({ "n": n }));
}

/// LAUNCH-17: garbage text is a `Decode` error; the connection goes on.
#[tokio::test]
async fn garbage_is_a_decode_error_and_the_connection_survives_launch_17() {
    let fake = FakeCdp::start().await.expect("fake");
    let connection = connect(&fake, Config::default()).await;
    let mut errors = connection.errors();
    connection
        .browser()
        .call_raw("Fake.garbage", Value::Null)
        .await
        .expect("the call itself is answered");
    assert_eq!(next_error(&mut errors).await.kind(), &ErrorKind::Decode);
    assert_alive(&connection, 1).await;
}

/// LAUNCH-17: a reply to an id no call used is an `UnexpectedMessage`; the connection
/// goes on.
#[tokio::test]
async fn reply_to_an_unknown_id_is_reported_and_the_connection_survives_launch_17() {
    let fake = FakeCdp::start().await.expect("fake");
    let connection = connect(&fake, Config::default()).await;
    let mut errors = connection.errors();
    connection
        .browser()
        .call_raw("Fake.unknownId", Value::Null)
        .await
        .expect("the call itself is answered");
    let error = next_error(&mut errors).await;
    assert_eq!(error.kind(), &ErrorKind::UnexpectedMessage);
    assert!(error.to_string().contains("999999999"), "{error}");
    assert_alive(&connection, 2).await;
}

/// LAUNCH-17: a reply cut in the middle is a `Decode` error; the whole reply that follows
/// answers the call.
#[tokio::test]
async fn truncated_message_is_a_decode_error_and_the_connection_survives_launch_17() {
    let fake = FakeCdp::start().await.expect("fake");
    let connection = connect(&fake, Config::default()).await;
    let mut errors = connection.errors();
    let answer = connection
        .browser()
        .call_raw("Fake.truncated", Value::Null)
        .await
        .expect("the whole reply answers");
    assert_eq!(answer, json!({ "value": "the whole reply" }));
    assert_eq!(next_error(&mut errors).await.kind(), &ErrorKind::Decode);
    assert_alive(&connection, 3).await;
}

/// LAUNCH-17, issue 12: a reply of the wrong shape fails its call at once with a
/// `Decode` error (it used to wait for the call's 30 s timeout); the connection goes on.
#[tokio::test]
async fn a_reply_that_cannot_be_decoded_fails_its_call_at_once_launch_17() {
    let fake = FakeCdp::start().await.expect("fake");
    let connection = connect(&fake, Config::default()).await;
    let started = std::time::Instant::now();
    let error = connection
        .browser()
        .call_raw_with_timeout(
            "Fake.badReply",
            Value::Null,
            std::time::Duration::from_secs(20),
        )
        .await
        .expect_err("a reply of the wrong shape is an error");
    assert_eq!(error.kind(), &ErrorKind::Decode, "{error}");
    assert_eq!(error.method(), Some("Fake.badReply"));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "the call waited {:?}",
        started.elapsed()
    );
    assert_alive(&connection, 5).await;
}

/// LAUNCH-17: a message over the limit is refused with `MessageTooLarge`; the connection
/// goes on.
#[tokio::test]
async fn oversized_message_is_refused_and_the_connection_survives_launch_17() {
    let fake = FakeCdp::start().await.expect("fake");
    let config = Config::default().with_max_message_size(64 * 1024);
    let connection = connect(&fake, config).await;
    let mut errors = connection.errors();
    let mut big = connection.browser().events("Fake.big");
    connection
        .browser()
        .call_raw("Fake.oversized", json!({ "bytes": 100_000 }))
        .await
        .expect("the call itself is answered");
    let error = next_error(&mut errors).await;
    match error.kind() {
        ErrorKind::MessageTooLarge { size, limit } => {
            assert!(*size > 100_000, "{size}");
            assert_eq!(*limit, 64 * 1024);
        }
        other => panic!("expected MessageTooLarge, got {other:?}"),
    }
    assert_alive(&connection, 4).await;
    // The refused event never reached its subscriber.
    assert!(
        tokio::time::timeout(Duration::from_millis(100), big.next())
            .await
            .is_err(),
        "the oversized event was delivered"
    );
}

/// A WebSocket message past twice the limit cannot be skipped: the connection closes, and
/// says why (`MessageTooLarge`), and calls fail with `Closed`.
#[tokio::test]
async fn websocket_message_past_the_ceiling_closes_the_connection() {
    let fake = FakeCdp::start().await.expect("fake");
    let config = Config::default().with_max_message_size(16 * 1024);
    let connection = connect(&fake, config).await;
    let mut errors = connection.errors();
    let error = connection
        .browser()
        .call_raw("Fake.oversized", json!({ "bytes": 100_000 }))
        .await
        .expect_err("the connection is lost");
    assert!(error.is_closed(), "{error}");
    let reported = next_error(&mut errors).await;
    assert!(
        matches!(reported.kind(), ErrorKind::MessageTooLarge { .. }),
        "{reported}"
    );
    within(1, "closed()", connection.closed()).await;
}

/// LAUNCH-17: replies that arrive in another order than the calls reach their callers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_of_order_replies_reach_their_callers_launch_17() {
    let fake = FakeCdp::start().await.expect("fake");
    let connection = connect(&fake, Config::default()).await;
    let browser = connection.browser();
    let mut calls = Vec::new();
    // Later calls are answered sooner: 0 waits 400 ms, 4 waits 0 ms.
    for n in 0..5u64 {
        let browser = browser.clone();
        calls.push(tokio::spawn(async move {
            let answer = browser
                .call_raw("Fake.echo", json!({ "n": n, "delayMs": 400 - n * 100 }))
                .await
                .expect("echo");
            (n, answer, Instant::now())
        }));
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut finished = Vec::new();
    for call in calls {
        let (n, answer, at) = within(5, "an echo", call).await.expect("task");
        assert_eq!(answer["n"], json!(n), "call {n} got another's reply");
        finished.push((at, n));
    }
    finished.sort();
    let order: Vec<u64> = finished.iter().map(|(_, n)| *n).collect();
    assert_eq!(
        order,
        vec![4, 3, 2, 1, 0],
        "replies did not arrive out of order"
    );
}

/// LAUNCH-17: events of two sessions (and of the browser) go to their own streams only;
/// a connection-wide stream sees both sessions.
#[tokio::test]
async fn events_of_two_sessions_route_to_their_own_streams_launch_17() {
    let fake = FakeCdp::start().await.expect("fake");
    let connection = connect(&fake, Config::default()).await;
    let a = connection.session(SessionId::from("AAAA"));
    let b = connection.session(SessionId::from("BBBB"));
    let mut a_events = a.events("Test.ping");
    let mut b_events = b.events("Test.ping");
    let mut browser_events = connection.browser().events("Test.ping");
    let mut a_other = a.events("Test.other");
    let event = |session: Option<&str>, n: u64| {
        let mut e = json!({ "method": "Test.ping", "params": { "n": n } });
        if let Some(session) = session {
            e["sessionId"] = json!(session);
        }
        e
    };
    // Sending on session A also checks that replies carry the session back.
    a.call_raw(
        "Fake.emit",
        json!({ "events": [event(Some("BBBB"), 1), event(Some("AAAA"), 2), event(None, 3), event(Some("AAAA"), 4)] }),
    )
    .await
    .expect("emit");
    let n = |e: conch_cdp::RawEvent| {
        let v: Value = e.parse().expect("params");
        v["n"].as_u64().expect("n")
    };
    let first_a = next(&mut a_events).await;
    assert_eq!(first_a.session_id().map(SessionId::as_str), Some("AAAA"));
    assert_eq!(first_a.method(), "Test.ping");
    assert_eq!(n(first_a), 2);
    assert_eq!(n(next(&mut a_events).await), 4);
    assert_eq!(n(next(&mut b_events).await), 1);
    assert_eq!(n(next(&mut browser_events).await), 3);
    for stream in [
        &mut a_events,
        &mut b_events,
        &mut browser_events,
        &mut a_other,
    ] {
        assert!(
            tokio::time::timeout(Duration::from_millis(50), stream.next())
                .await
                .is_err(),
            "an event went to the wrong stream"
        );
    }
}

async fn next(stream: &mut conch_cdp::RawEvents) -> conch_cdp::RawEvent {
    within(5, "an event", stream.next())
        .await
        .expect("stream ended")
}

/// LAUNCH-17: `Target.detachedFromTarget` fails the session's pending calls with
/// `Detached`, ends its streams, and later calls on it fail at once.
#[tokio::test]
async fn detaching_a_session_fails_its_calls_and_ends_its_streams_launch_17() {
    let fake = FakeCdp::start().await.expect("fake");
    let connection = connect(&fake, Config::default()).await;
    let child = connection.session(SessionId::from("CHILD"));
    let other = connection.session(SessionId::from("OTHER"));
    let mut child_events = child.events("Test.ping");
    let mut other_events = other.events("Test.ping");
    let pending = {
        let child = child.clone();
        tokio::spawn(async move { child.call_raw("Fake.never", Value::Null).await })
    };
    within(5, "the call to be pending", async {
        while connection.pending_calls() < 1 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    connection
        .browser()
        .call_raw(
            "Fake.emit",
            json!({ "events": [{ "method": "Target.detachedFromTarget", "params": { "sessionId": "CHILD", "targetId": "T1" } }] }),
        )
        .await
        .expect("emit");
    let error = within(2, "the pending call", pending)
        .await
        .expect("task")
        .expect_err("a call on a detached session");
    assert_eq!(error.kind(), &ErrorKind::Detached);
    assert!(
        within(2, "the child's stream to end", child_events.next())
            .await
            .is_none()
    );
    let error = child
        .call_raw("Fake.echo", json!({}))
        .await
        .expect_err("a later call on the detached session");
    assert_eq!(error.kind(), &ErrorKind::Detached);
    assert!(
        within(
            1,
            "a new stream on the detached session",
            child.events("Test.ping").next()
        )
        .await
        .is_none()
    );
    // The other session is untouched.
    assert!(
        tokio::time::timeout(Duration::from_millis(50), other_events.next())
            .await
            .is_err(),
        "the other session's stream ended"
    );
    other
        .call_raw("Fake.echo", json!({}))
        .await
        .expect("the other session works");
}

/// `Inspector.targetCrashed` on a session fails its pending calls with `TargetCrashed` at
/// once instead of letting each wait for its timeout.
#[tokio::test]
async fn a_crashed_target_fails_its_pending_calls() {
    let fake = FakeCdp::start().await.expect("fake");
    let connection = connect(&fake, Config::default()).await;
    let crashed = connection.session(SessionId::from("CRASH"));
    let pending = {
        let crashed = crashed.clone();
        tokio::spawn(async move { crashed.call_raw("Fake.never", Value::Null).await })
    };
    within(5, "the call to be pending", async {
        while connection.pending_calls() < 1 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    connection
        .browser()
        .call_raw(
            "Fake.emit",
            json!({ "events": [{ "sessionId": "CRASH", "method": "Inspector.targetCrashed", "params": {} }] }),
        )
        .await
        .expect("emit");
    let error = within(2, "the pending call", pending)
        .await
        .expect("task")
        .expect_err("a call on a crashed target");
    assert_eq!(error.kind(), &ErrorKind::TargetCrashed);
}

/// LAUNCH-17: an abrupt close (no close frame) fails every pending call with `Closed` at
/// once, ends every stream, and later calls fail at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abrupt_close_fails_pending_calls_launch_17() {
    let fake = FakeCdp::start().await.expect("fake");
    let connection = connect(&fake, Config::default()).await;
    let mut events = connection.session(SessionId::from("S")).events("Test.ping");
    let mut pending = Vec::new();
    for _ in 0..3 {
        let browser = connection.browser();
        pending.push(tokio::spawn(async move {
            browser.call_raw("Fake.never", Value::Null).await
        }));
    }
    within(5, "the calls to be pending", async {
        while connection.pending_calls() < 3 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    let started = Instant::now();
    let close = connection
        .browser()
        .call_raw("Fake.close", Value::Null)
        .await;
    assert!(close.expect_err("Fake.close is never answered").is_closed());
    for call in pending {
        let error = within(1, "a pending call", call)
            .await
            .expect("task")
            .expect_err("answered by a closed connection");
        assert!(error.is_closed(), "{error}");
    }
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(
        within(1, "the stream to end", events.next())
            .await
            .is_none()
    );
    let error = connection
        .browser()
        .call_raw("Fake.echo", json!({}))
        .await
        .expect_err("a later call");
    assert!(error.is_closed(), "{error}");
    assert_eq!(connection.pending_calls(), 0);
}

/// LAUNCH-17: a per-call timeout fires with `Timeout`, its pending entry is removed, and
/// the late reply is not mistaken for a stray one. A dropped call is removed too.
#[tokio::test]
async fn per_call_timeout_fires_and_frees_the_entry_launch_17() {
    let fake = FakeCdp::start().await.expect("fake");
    let connection = connect(&fake, Config::default()).await;
    let mut errors = connection.errors();
    let browser = connection.browser();
    let started = Instant::now();
    let error = browser
        .call_raw_with_timeout(
            "Fake.echo",
            json!({ "delayMs": 300 }),
            Duration::from_millis(100),
        )
        .await
        .expect_err("the reply comes after the timeout");
    assert!(error.is_timeout(), "{error}");
    assert_eq!(
        error.kind(),
        &ErrorKind::Timeout {
            after: Duration::from_millis(100)
        }
    );
    assert_eq!(error.method(), Some("Fake.echo"));
    assert!(started.elapsed() < Duration::from_millis(250));
    assert_alive(&connection, 5).await;
    assert_eq!(connection.pending_calls(), 0);
    // The late reply (after 300 ms) is dropped quietly.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        tokio::time::timeout(Duration::from_millis(50), errors.next())
            .await
            .is_err(),
        "a late reply was reported as an error"
    );

    // The default timeout comes from the config.
    let short = connect(
        &fake,
        Config::default().with_call_timeout(Duration::from_millis(100)),
    )
    .await;
    let error = short
        .browser()
        .call_raw("Fake.never", Value::Null)
        .await
        .expect_err("never");
    assert!(error.is_timeout(), "{error}");

    // A call whose future is dropped leaves no entry behind.
    let dropped = tokio::time::timeout(
        Duration::from_millis(50),
        browser.call_raw("Fake.never", Value::Null),
    )
    .await;
    assert!(dropped.is_err());
    assert_alive(&connection, 6).await;
    assert_eq!(connection.pending_calls(), 0);
}

/// A typed response that does not fit the answer is a `Decode` error naming the method;
/// optional fields are tolerated.
#[tokio::test]
async fn typed_responses_decode_or_fail_with_decode() {
    let fake = FakeCdp::start().await.expect("fake");
    let connection = connect(&fake, Config::default()).await;
    // The fake answers {} to anything: a typed command whose response has required fields
    // fails to decode, as a `Decode` error naming the method.
    let error = connection
        .call(&conch_cdp::protocol::target::CreateTarget::new(
            "about:blank",
        ))
        .await
        .expect_err("{} has no targetId");
    assert_eq!(error.kind(), &ErrorKind::Decode);
    assert_eq!(error.method(), Some("Target.createTarget"));
    // Tolerant responses decode from {}.
    connection
        .call(&conch_cdp::protocol::target::CloseTarget {
            target_id: "T".into(),
        })
        .await
        .expect("closeTarget's response has only optional fields");
}

/// `http://` discovery reads `/json/version` (here chunked) and connects to the named
/// WebSocket.
#[tokio::test]
async fn http_discovery_reads_json_version() {
    let fake = FakeCdp::start().await.expect("fake");
    let connection = Connection::connect(&fake.http_url())
        .await
        .expect("discovery");
    assert_alive(&connection, 7).await;
    assert_eq!(fake.handshakes(), 1);
}

/// Unusable addresses are typed errors, not panics or hangs.
#[tokio::test]
async fn bad_addresses_are_typed_errors() {
    let error = Connection::connect("ftp://127.0.0.1/")
        .await
        .expect_err("ftp");
    assert_eq!(error.kind(), &ErrorKind::Unsupported);
    let error = Connection::connect("not an address")
        .await
        .expect_err("garbage");
    assert_eq!(error.kind(), &ErrorKind::InvalidUrl);
    #[cfg(not(feature = "tls"))]
    {
        let error = Connection::connect("wss://127.0.0.1:9/devtools/browser/x")
            .await
            .expect_err("wss without tls");
        assert_eq!(error.kind(), &ErrorKind::Unsupported);
        assert!(error.to_string().contains("tls"), "{error}");
    }
    #[cfg(feature = "tls")]
    {
        // The fake speaks plain WebSocket: the TLS handshake fails, as a typed error.
        let fake = FakeCdp::start().await.expect("fake");
        let address = fake.ws_url().replacen("ws://", "wss://", 1);
        let error = Connection::connect(&address)
            .await
            .expect_err("no TLS there");
        assert_eq!(error.kind(), &ErrorKind::Transport, "{error}");
    }
    // A closed port: find a free one and let it go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let error = Connection::connect(&format!("ws://127.0.0.1:{port}/devtools/browser/x"))
        .await
        .expect_err("nobody listens");
    assert_eq!(error.kind(), &ErrorKind::Transport);
    let error = Connection::connect_with(
        &format!("ws://127.0.0.1:{port}/"),
        Config::default().with_connect_timeout(Duration::from_millis(1)),
    )
    .await
    .expect_err("nobody listens");
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Transport | ErrorKind::Timeout { .. }
        ),
        "{error}"
    );
}

/// Issue 12 (unbounded growth): the actor remembers only the newest 4,096 detached
/// sessions. After 4,100 detaches, a call on the newest still fails at once with
/// `Detached`, while the oldest is forgotten: the fake answers it like any session.
#[tokio::test]
async fn the_detached_sessions_remembered_are_bounded() {
    let fake = FakeCdp::start().await.expect("fake");
    let connection = connect(&fake, Config::default()).await;
    let events: Vec<Value> = (0..4100)
        .map(|n| {
            json!({ "method": "Target.detachedFromTarget", "params": { "sessionId": format!("S{n}"), "targetId": format!("T{n}") } })
        })
        .collect();
    connection
        .browser()
        .call_raw("Fake.emit", json!({ "events": events }))
        .await
        .expect("emit");
    let newest = connection
        .session(SessionId::from("S4099"))
        .call_raw("Fake.echo", json!({}))
        .await
        .expect_err("the newest detached session is remembered");
    assert_eq!(newest.kind(), &ErrorKind::Detached);
    let oldest = connection
        .session(SessionId::from("S0"))
        .call_raw("Fake.echo", json!({ "n": 0 }))
        .await
        .expect("the oldest detached session is forgotten");
    assert_eq!(oldest, json!({ "n": 0 }));
}

/// Issue 12 (unbounded growth): a subscriber that falls `event_buffer` events behind is
/// dropped with a warning: its stream gives what it had buffered and then ends, so it can
/// tell it missed events (it is never made to skip one silently). A subscriber that keeps
/// up gets every event, and the connection goes on.
#[tokio::test]
async fn issue_12_a_subscriber_that_falls_behind_is_ended_not_grown() {
    let fake = FakeCdp::start().await.expect("fake");
    let connection = connect(&fake, Config::default().with_event_buffer(4)).await;
    let browser = connection.browser();
    let mut behind = browser.events("Test.ping");
    let mut keeping_up = browser.events("Test.ping");
    let n = |e: conch_cdp::RawEvent| {
        let v: Value = e.parse().expect("params");
        v["n"].as_u64().expect("n")
    };
    let mut kept = Vec::new();
    for batch in 0..3u64 {
        let events: Vec<Value> = (0..3)
            .map(|i| json!({ "method": "Test.ping", "params": { "n": batch * 3 + i } }))
            .collect();
        browser
            .call_raw("Fake.emit", json!({ "events": events }))
            .await
            .expect("emit");
        for _ in 0..3 {
            kept.push(n(next(&mut keeping_up).await));
        }
    }
    assert_eq!(kept, (0..9).collect::<Vec<_>>());
    let mut got = Vec::new();
    while let Some(event) = within(5, "the end of the stream", behind.next()).await {
        got.push(n(event));
    }
    assert_eq!(
        got,
        [0, 1, 2, 3],
        "the first events, in order, then the end"
    );
    assert_alive(&connection, 7).await;
}
