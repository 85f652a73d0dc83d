//! New-era POSTs at `/mcp` and `/mcp/task` (MCP 2026-07-28): no `initialize`, no
//! `Mcp-Session-Id`, no GET stream.
//!
//! - The request headers are checked against the body: `MCP-Protocol-Version` (equal to
//!   `_meta`'s version), `Mcp-Method`, and `Mcp-Name` for `tools/call` and
//!   `resources/read` (its `=?base64?…?=` form decoded); a missing or differing one is
//!   400 with `HeaderMismatch` (`-32020`), a version this server does not speak 400 with
//!   `UnsupportedProtocolVersion` (`-32022`), an unknown method 404.
//! - A conversation is a handle (see `handle`): a `tools/call` without the `conversation`
//!   argument starts a conversation and its result names the handle; one with it
//!   continues that conversation (a task's at `/mcp/task`, named by `Conch-Task` when
//!   given). An unknown, expired or forged handle is refused in the tool's result.
//! - A call (and `subscriptions/listen`) is answered on its own event stream: its
//!   progress, then its response. A stream the client closes is that call cancelled,
//!   and only that call.

use std::sync::{Arc, PoisonError};
use std::time::Instant;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use conch_tools::{
    ConversationKind, HANDLE_ARG, HEADER_MISMATCH, META_VERSION, MODERN_VERSION, McpServer,
    McpSession, UNSUPPORTED_PROTOCOL_VERSION, unsupported_version,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::{Busy, Door, Open, TASK_HEADER, VERSION_HEADER, rpc_error, task_name};
use crate::ask::Outbound;
use crate::handle;

/// The header naming the request's method.
const METHOD_HEADER: &str = "mcp-method";

/// The header naming the tool (or resource) the request is about.
const NAME_HEADER: &str = "mcp-name";

/// Whether a POST is the new era's: its body names its version in `_meta` (or is
/// `server/discover`), or its `MCP-Protocol-Version` header says 2026-07-28.
pub(super) fn is_modern(headers: &HeaderMap, message: &Value) -> bool {
    let header_says = headers
        .get(VERSION_HEADER)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|v| v.trim() == MODERN_VERSION);
    let body_says = message
        .get("method")
        .and_then(Value::as_str)
        .is_some_and(|method| {
            conch_tools::is_modern(method, message.get("params").unwrap_or(&Value::Null))
        });
    header_says || body_says
}

/// A new-era POST, of a conversation of `kind` when it starts one.
pub(super) async fn post(
    door: Door,
    headers: HeaderMap,
    mut message: Value,
    kind: ConversationKind,
) -> Response {
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    if let Err(refused) = check_headers(&headers, &message, &id) {
        return *refused;
    }
    if message.get("id").is_none() {
        // MCP 2026-07-28 over HTTP has no client notifications: closing a call's stream
        // is its cancellation. Accepted and ignored.
        return StatusCode::ACCEPTED.into_response();
    }
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if method == "subscriptions/listen" {
        return stream_stateless(door.server.clone(), message);
    }
    if method != "tools/call" {
        return json_answer(door.server.handle_stateless(&message, &|_| {}).await);
    }
    // A call: its conversation, by handle or new.
    let given = message
        .get("params")
        .and_then(|p| p.get("arguments"))
        .and_then(|a| a.get(HANDLE_ARG))
        .cloned();
    if let Some(arguments) = message
        .get_mut("params")
        .and_then(|p| p.get_mut("arguments"))
        .and_then(Value::as_object_mut)
    {
        arguments.remove(HANDLE_ARG);
    }
    let (session, key, handle) = match given {
        Some(Value::String(given)) => {
            let found = handle::verify(&door.token, &given)
                .map(|id| format!("handle:{id}"))
                .and_then(|key| door.take(&key).map(|(session, _)| (session, key)));
            match found {
                Some((session, key)) => (session, key, Handle::Given(given)),
                None => return json_answer(Some(unknown_handle(&id))),
            }
        }
        Some(_) => return json_answer(Some(unknown_handle(&id))),
        // The inline live view's tools act only in the conversation that opened it.
        None if message
            .get("params")
            .is_some_and(conch_tools::app::calls_app_only) =>
        {
            return json_answer(Some(needs_handle(&id)));
        }
        // A retried call (MRTR) whose first round started its conversation.
        None if let Some(found) = waiting(&door, &message) => found,
        None => match start(&door, &headers, kind) {
            Ok((session, key, handle)) => (session, key, Handle::Minted(handle)),
            Err(refused) => return *refused,
        },
    };
    let busy = Busy {
        door: door.clone(),
        id: key,
    };
    stream_call(session, message, busy, handle).into_response()
}

/// A call's conversation handle: the one it passed, or one minted as it started the
/// conversation (which its result names in a sentence too).
enum Handle {
    Given(String),
    Minted(String),
}

/// The conversation whose call waits for this retried request's `requestState`, when
/// the first round came with no handle (it started the conversation), and its handle,
/// which the final result names.
fn waiting(door: &Door, message: &Value) -> Option<(McpSession, String, Handle)> {
    let state = message.get("params")?.get("requestState")?.as_str()?;
    let key = door
        .sessions
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .find(|(key, open)| key.starts_with("handle:") && open.session.holds_state(state))
        .map(|(key, _)| key.clone())?;
    let handle = handle::of(&door.token, key.strip_prefix("handle:")?);
    door.take(&key)
        .map(|(session, _)| (session, key, Handle::Minted(handle)))
}

/// Starts a conversation for a call with no handle: a chat, or a task's (named by
/// `Conch-Task` when given, refused while that task runs already, ERR-11).
fn start(
    door: &Door,
    headers: &HeaderMap,
    kind: ConversationKind,
) -> Result<(McpSession, String, String), Box<Response>> {
    let (minted, id) = handle::mint(&door.token);
    let (conversation, named) = match task_name(headers, kind)? {
        Some(name) => (format!("task-{name}"), Some(name)),
        None => (format!("mcp-http-{id}"), None),
    };
    door.sweep();
    let key = format!("handle:{id}");
    let mut sessions = door.sessions.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(name) = named
        && sessions
            .values()
            .any(|open| open.session.chat().id() == conversation)
    {
        return Err(Box::new(rpc_error(
            StatusCode::CONFLICT,
            -32000,
            &format!(
                "A task named {name:?} is running already: end it, or give this call another {TASK_HEADER} name."
            ),
        )));
    }
    let session = door.server.session_as(&conversation, kind);
    sessions.insert(
        key.clone(),
        Open {
            session: session.clone(),
            outbound: Arc::new(Outbound::new(None)),
            last_used: Instant::now(),
            busy: 1,
        },
    );
    Ok((session, key, minted))
}

/// The tool result for an app-only tool of the inline live view called without a
/// handle: nothing starts and nothing acts.
fn needs_handle(id: &Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": {
        "resultType": "complete",
        "isError": true,
        "content": [{ "type": "text", "text": conch_tools::app::NEEDS_HANDLE }],
    } })
}

/// The tool result for a handle this gateway did not mint, or whose conversation ended.
fn unknown_handle(id: &Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "result": {
        "resultType": "complete",
        "isError": true,
        "content": [{ "type": "text", "text": format!(
            "This {HANDLE_ARG} handle is not one this gateway gave, or its conversation has ended. Call again without {HANDLE_ARG} to start a new conversation, and pass the handle its result names."
        ) }],
    } })
}

/// Checks the request headers against the body (2026-07-28's Server Validation).
fn check_headers(headers: &HeaderMap, message: &Value, id: &Value) -> Result<(), Box<Response>> {
    let mismatch = |text: String| {
        Box::new(rpc_error_with_id(
            StatusCode::BAD_REQUEST,
            id,
            HEADER_MISMATCH,
            &format!("Header mismatch: {text}"),
        ))
    };
    let value = |name: &str| {
        headers
            .get(name)
            .map(|h| h.to_str().map(str::trim).map_err(|_| ()))
    };
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let params = message.get("params").unwrap_or(&Value::Null);
    let body_version = params
        .get("_meta")
        .and_then(|m| m.get(META_VERSION))
        .and_then(Value::as_str);
    let version = match value(VERSION_HEADER) {
        None => {
            return Err(mismatch(
                "the MCP-Protocol-Version header is missing.".into(),
            ));
        }
        Some(Err(())) => return Err(mismatch("MCP-Protocol-Version is not text.".into())),
        Some(Ok(v)) => v,
    };
    match body_version {
        Some(body) if body != version => {
            return Err(mismatch(format!(
                "MCP-Protocol-Version {version:?} differs from _meta.{META_VERSION} {body:?}."
            )));
        }
        None if method != "server/discover" => {
            return Err(mismatch(format!(
                "MCP-Protocol-Version {version:?} needs the body's _meta.{META_VERSION} too."
            )));
        }
        _ => {}
    }
    if version != MODERN_VERSION {
        let body = unsupported_version(id, version);
        return Err(Box::new(
            (
                StatusCode::BAD_REQUEST,
                [(header::CONTENT_TYPE, "application/json")],
                body.to_string(),
            )
                .into_response(),
        ));
    }
    if message.get("id").is_none() {
        return Ok(());
    }
    match value(METHOD_HEADER) {
        Some(Ok(m)) if m == method => {}
        Some(Ok(m)) => {
            return Err(mismatch(format!(
                "Mcp-Method {m:?} differs from the body's method {method:?}."
            )));
        }
        _ => return Err(mismatch("the Mcp-Method header is missing.".into())),
    }
    let named = match method {
        "tools/call" | "prompts/get" => params.get("name").and_then(Value::as_str),
        "resources/read" => params.get("uri").and_then(Value::as_str),
        _ => return Ok(()),
    };
    let given = match value(NAME_HEADER) {
        Some(Ok(given)) => decode_header(given),
        _ => return Err(mismatch("the Mcp-Name header is missing.".into())),
    };
    match (given, named) {
        (Some(given), Some(named)) if given == named => Ok(()),
        (given, named) => Err(mismatch(format!(
            "Mcp-Name {:?} differs from the body's {:?}.",
            given.unwrap_or_default(),
            named.unwrap_or_default()
        ))),
    }
}

/// A header value as sent: plain, or `=?base64?…?=` (UTF-8 in standard Base64); `None`
/// when the Base64 is not.
fn decode_header(value: &str) -> Option<String> {
    let Some(encoded) = value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    else {
        return Some(value.to_owned());
    };
    let mut bits = 0u32;
    let mut count = 0;
    let mut bytes = Vec::new();
    for c in encoded.trim_end_matches('=').bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        count += 6;
        if count >= 8 {
            count -= 8;
            bytes.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    String::from_utf8(bytes).ok()
}

/// An error response with the request's id.
fn rpc_error_with_id(status: StatusCode, id: &Value, code: i64, message: &str) -> Response {
    let body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// A single JSON answer, with the status the revision gives its errors.
fn json_answer(answer: Option<Value>) -> Response {
    let Some(answer) = answer else {
        return StatusCode::ACCEPTED.into_response();
    };
    let status = match answer
        .get("error")
        .and_then(|e| e.get("code"))
        .and_then(Value::as_i64)
    {
        Some(
            HEADER_MISMATCH | UNSUPPORTED_PROTOCOL_VERSION | conch_tools::MISSING_CLIENT_CAPABILITY,
        ) => StatusCode::BAD_REQUEST,
        Some(-32601) => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    };
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        answer.to_string(),
    )
        .into_response()
}

/// A call on its own event stream: its progress, then its response (naming the handle
/// in a sentence when the call started the conversation, and in `_meta` always, so an
/// inline live view opened by any result learns it). The call runs while the stream is
/// open: the client closing it cancels the call, and nothing else.
fn stream_call(session: McpSession, message: Value, busy: Busy, handle: Handle) -> Response {
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    let running = tokio::spawn(async move {
        let _busy = busy;
        let notes = tx.clone();
        let notify = move |note: Value| {
            let _ = notes.send(note.to_string());
        };
        if let Some(mut answer) = session.handle_notifying(&message, &notify).await {
            match &handle {
                Handle::Minted(handle) => name_handle(&mut answer, handle, session.chat()),
                Handle::Given(handle) => meta_handle(&mut answer, handle),
            }
            let _ = tx.send(answer.to_string());
        }
    });
    events(rx, running)
}

/// Adds the new conversation's handle to a call's result: a sentence for the agent, and
/// `_meta` for a program. The sentence counts in the result's cost and the
/// conversation's total (issue 31).
fn name_handle(answer: &mut Value, handle: &str, chat: &conch_tools::Chat) {
    let Some(result) = answer.get_mut("result") else {
        return;
    };
    if let Some(content) = result.get_mut("content").and_then(Value::as_array_mut) {
        let line = format!(
            "Conversation: {handle}. Pass \"{HANDLE_ARG}\": \"{handle}\" in your next Conch calls to stay in this conversation (its tabs and its answers)."
        );
        // Joined to the text before it by a blank line, as a result's text is read.
        let joined = format!("\n\n{line}");
        let added = conch_tools::Cost::of_text(&joined);
        let total = chat.count_added(&joined);
        content.push(json!({ "type": "text", "text": line }));
        if let Some(cost) = result
            .get_mut("_meta")
            .and_then(|meta| meta.get_mut(conch_tools::COST_META))
            .and_then(Value::as_object_mut)
        {
            for (key, more) in [("chars", added.chars), ("tokens", added.tokens)] {
                let was = cost.get(key).and_then(Value::as_u64).unwrap_or(0);
                cost.insert(key.to_owned(), json!(was + more));
            }
            cost.insert(
                "total".to_owned(),
                json!({ "chars": total.chars, "tokens": total.tokens }),
            );
        }
    }
    meta_handle(answer, handle);
}

/// Names the conversation's handle in a call's result's `_meta`, for a program (an
/// inline live view learns its conversation there, issue 31); the model reads none of it.
fn meta_handle(answer: &mut Value, handle: &str) {
    if let Some(meta) = answer
        .get_mut("result")
        .and_then(Value::as_object_mut)
        .map(|r| r.entry("_meta").or_insert_with(|| json!({})))
        .and_then(Value::as_object_mut)
    {
        meta.insert("dev.conch/conversation".to_owned(), json!(handle));
    }
}

/// `subscriptions/listen` on its event stream: its acknowledgement, then nothing until
/// the client closes it.
fn stream_stateless(server: McpServer, message: Value) -> Response {
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    let running = tokio::spawn(async move {
        let notes = tx.clone();
        let notify = move |note: Value| {
            let _ = notes.send(note.to_string());
        };
        if let Some(answer) = server.handle_stateless(&message, &notify).await {
            let _ = tx.send(answer.to_string());
        }
    });
    events(rx, running)
}

/// The event stream of `rx`; dropping it (the client went away) stops `running`.
fn events(rx: mpsc::UnboundedReceiver<String>, running: tokio::task::JoinHandle<()>) -> Response {
    struct Stop(tokio::task::JoinHandle<()>);
    impl Drop for Stop {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    let stop = Stop(running);
    let events = futures_util::stream::unfold((rx, stop), |(mut rx, stop)| async move {
        let line = rx.recv().await?;
        let event = Event::default().event("message").data(line);
        Some((Ok::<Event, std::convert::Infallible>(event), (rx, stop)))
    });
    let mut response = Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response();
    response
        .headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}
