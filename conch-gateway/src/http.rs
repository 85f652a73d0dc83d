//! `conch-gateway serve`: the MCP door over streamable HTTP at `/mcp` on 127.0.0.1
//! (TOOL-3, AMB-2).
//!
//! Every request needs the gateway's token (`Authorization: Bearer <token>`), loopback
//! included; the `Host` must be the gateway's own loopback name (DNS rebinding), and a
//! request that carries an `Origin` must come from the gateway's own origin, so a page in
//! Conch's browser (or any other) cannot call the tools. `initialize` opens a session
//! (`Mcp-Session-Id`), and each session is its own conversation. Answers are single JSON
//! responses.
//!
//! Deliberately absent: server-sent event streams (GET answers 405), and so elicitation
//! over HTTP.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use conch_tools::{McpServer, McpSession};
use serde_json::{Value, json};

/// The session header of streamable HTTP.
const SESSION_HEADER: &str = "mcp-session-id";

/// The HTTP door's state.
#[derive(Debug, Clone)]
pub(crate) struct Door {
    server: McpServer,
    token: Arc<String>,
    port: u16,
    sessions: Arc<Mutex<HashMap<String, McpSession>>>,
}

impl Door {
    pub(crate) fn new(server: McpServer, token: String, port: u16) -> Door {
        Door {
            server,
            token: Arc::new(token),
            port,
            sessions: Arc::new(Mutex::new(HashMap::new())),
        }
    }
}

/// The router: `/mcp` only.
pub(crate) fn router(door: Door) -> Router {
    Router::new()
        .route("/mcp", post(post_mcp).get(get_mcp).delete(delete_mcp))
        .with_state(door)
}

fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response {
    let body =
        json!({ "jsonrpc": "2.0", "id": null, "error": { "code": code, "message": message } });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Checks the token, the Host and the Origin (AMB-2).
fn admit(door: &Door, headers: &HeaderMap) -> Result<(), Box<Response>> {
    let host_ok = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|host| {
            [
                format!("127.0.0.1:{}", door.port),
                format!("localhost:{}", door.port),
                format!("[::1]:{}", door.port),
            ]
            .iter()
            .any(|allowed| allowed.eq_ignore_ascii_case(host))
        });
    if !host_ok {
        return Err(Box::new(rpc_error(
            StatusCode::FORBIDDEN,
            -32001,
            "Forbidden: the gateway answers only on its own loopback address.",
        )));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let own = [
            format!("http://127.0.0.1:{}", door.port),
            format!("http://localhost:{}", door.port),
        ];
        let ok = origin
            .to_str()
            .is_ok_and(|o| own.iter().any(|allowed| allowed.eq_ignore_ascii_case(o)));
        if !ok {
            return Err(Box::new(rpc_error(
                StatusCode::FORBIDDEN,
                -32001,
                "Forbidden: web pages may not call the gateway's MCP endpoint.",
            )));
        }
    }
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .unwrap_or_default();
    if !constant_time_eq(presented.as_bytes(), door.token.as_bytes()) {
        return Err(Box::new(rpc_error(
            StatusCode::UNAUTHORIZED,
            -32001,
            "Unauthorized: send the gateway's token as Authorization: Bearer <token>.",
        )));
    }
    Ok(())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn post_mcp(State(door): State<Door>, headers: HeaderMap, body: Bytes) -> Response {
    if let Err(refused) = admit(&door, &headers) {
        return *refused;
    }
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return rpc_error(StatusCode::BAD_REQUEST, -32700, "Parse error");
    };
    let is_initialize = message.get("method").and_then(Value::as_str) == Some("initialize");
    let (session, new_id) = if is_initialize {
        let id = crate::random_hex(16);
        let session = door.server.session(&format!("mcp-http-{id}"));
        door.sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), session.clone());
        (session, Some(id))
    } else {
        let id = headers
            .get(SESSION_HEADER)
            .and_then(|h| h.to_str().ok())
            .unwrap_or_default();
        let found = door
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned();
        match found {
            Some(session) => (session, None),
            None if id.is_empty() => {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    -32000,
                    "Bad request: send initialize first, then the Mcp-Session-Id it gave.",
                );
            }
            None => {
                return rpc_error(
                    StatusCode::NOT_FOUND,
                    -32001,
                    "Session not found: initialize a new session.",
                );
            }
        }
    };
    let answer = session.handle(&message).await;
    let mut response = match answer {
        Some(answer) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            answer.to_string(),
        )
            .into_response(),
        None => StatusCode::ACCEPTED.into_response(),
    };
    if let Some(id) = new_id
        && let Ok(value) = HeaderValue::from_str(&id)
    {
        response.headers_mut().insert(SESSION_HEADER, value);
    }
    response
}

async fn get_mcp(State(door): State<Door>, headers: HeaderMap) -> Response {
    if let Err(refused) = admit(&door, &headers) {
        return *refused;
    }
    StatusCode::METHOD_NOT_ALLOWED.into_response()
}

async fn delete_mcp(State(door): State<Door>, headers: HeaderMap) -> Response {
    if let Err(refused) = admit(&door, &headers) {
        return *refused;
    }
    let id = headers
        .get(SESSION_HEADER)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    let removed = door
        .sessions
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(id);
    match removed {
        Some(session) => {
            let id = session.chat().id();
            door.server.tools().forget(id);
            // The session is over: its tabs close and nothing of it is kept.
            door.server.tools().browser().end_conversation(id).await;
            StatusCode::NO_CONTENT.into_response()
        }
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
