//! `conch-gateway serve`: the MCP door over streamable HTTP at `/mcp` on 127.0.0.1
//! (TOOL-3, AMB-2).
//!
//! Every request needs the gateway's token (`Authorization: Bearer <token>`, the scheme
//! in any case; a 401 names it in `WWW-Authenticate`), loopback included; the `Host` must
//! be the gateway's own loopback name (DNS rebinding), and a request that carries an
//! `Origin` must come from the gateway's own origin, so a page in Conch's browser (or any
//! other) cannot call the tools. The body is read only after these checks, and at most
//! [`MAX_BODY`] of it (413 past that). `initialize` opens a session (`Mcp-Session-Id`),
//! and each session is its own conversation; a session unused for the idle time is
//! closed (404, as for a session that never was). After `initialize`, a request whose
//! `MCP-Protocol-Version` is not one this server speaks gets 400; one without the header
//! is taken as 2025-03-26, as the specification says. Answers are single JSON responses;
//! the POST of a call the client cancelled ends with 202 and no body, as MCP sends no
//! response for a cancelled request.
//!
//! Sessions opened at `/mcp/task` (or at `/mcp` on a gateway started with `--errands`) are
//! tasks (ERR-1): each browses in an errand, a browser context of its own that no other
//! session sees. Deleting a task's session is the task's end (done, ERR-10): its errand
//! closes and its tabs are forgotten. A task's session that expires is interrupted: its
//! errand is set aside, sealed, and when a task's `initialize` names the same task in its
//! `Conch-Task` header (after a restart too), that session resumes it (ERR-11).
//!
//! What the server sends on its own goes on the session's event stream, which the client
//! opens with a GET (`Accept: text/event-stream`): the site question as an elicitation
//! request with `--ask-via-mcp` (the client POSTs its response back), and
//! `notifications/progress` for calls that asked for progress. Without an open stream
//! a question falls back to the gateway's own answer and progress is not sent.
//!
//! Deliberately absent: resuming a broken stream (`Last-Event-ID`), and answering a POST
//! with an event stream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use conch_tools::{
    ConversationKind, LEGACY_VERSIONS, McpServer, McpSession, TaskEvents, TaskState,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::ask::{Channels, Outbound};
use crate::live::Leaving;
use crate::secret::constant_time_eq;

mod modern;

/// The session header of streamable HTTP.
const SESSION_HEADER: &str = "mcp-session-id";

/// The protocol version header of streamable HTTP (2025-06-18 and later).
const VERSION_HEADER: &str = "mcp-protocol-version";

/// The largest request body read: MCP messages are small (tool arguments are addresses,
/// refs and field values), so a megabyte leaves room and stops a memory flood.
pub(crate) const MAX_BODY: usize = 1024 * 1024;

/// How long a session may go unused before it is closed, unless `--session-idle` says.
pub(crate) const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(30 * 60);

/// One open session: its conversation, its way back to the client, when it was last
/// used, and how many requests (and event streams) run in it now: a session with one
/// running never expires.
#[derive(Debug)]
struct Open {
    session: McpSession,
    outbound: Arc<Outbound>,
    last_used: Instant,
    busy: usize,
}

/// The HTTP door's state.
#[derive(Debug, Clone)]
pub(crate) struct Door {
    server: McpServer,
    token: Arc<String>,
    port: u16,
    idle: Duration,
    sessions: Arc<Mutex<HashMap<String, Open>>>,
    /// With `--ask-via-mcp`: the clients that answer elicitation, by conversation.
    channels: Option<Channels>,
    /// With `--errands`: every session is a task, as at `/mcp/task` (ERR-1).
    errands: bool,
    /// What ends when a session does: its handoff and questions waiting.
    leaving: Option<Leaving>,
}

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// The client deleted it: a task's is done (ERR-10).
    Deleted,
    /// It went unused for the idle time: a task's is interrupted, its errand kept for a
    /// Resume.
    Expired,
}

impl Door {
    pub(crate) fn new(
        server: McpServer,
        token: String,
        port: u16,
        idle: Duration,
        channels: Option<Channels>,
    ) -> Door {
        Door {
            server: server.with_handles(),
            token: Arc::new(token),
            port,
            idle,
            sessions: Arc::new(Mutex::new(HashMap::new())),
            channels,
            errands: false,
            leaving: None,
        }
    }

    /// A session ending (closed, deleted, expired) ends what waits for its agent.
    pub(crate) fn with_leaving(mut self, leaving: Leaving) -> Door {
        self.leaving = Some(leaving);
        self
    }

    /// With `errands`, every session at `/mcp` is a task too (`--errands`, ERR-1).
    pub(crate) fn with_errands(mut self, errands: bool) -> Door {
        self.errands = errands;
        self
    }

    /// Forgets a closed session: its conversation, its elicitation channel, and the
    /// questions waiting for its client (No).
    fn close(&self, open: &Open, ended: Ended) {
        let conversation = open.session.chat().id();
        if let Some(channels) = &self.channels {
            channels
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(conversation);
        }
        open.outbound.close();
        if let Some(leaving) = &self.leaving {
            leaving.left(conversation);
        }
        let tools = self.server.tools().clone();
        let conversation = conversation.to_owned();
        if tools.browser().kind(&conversation) == ConversationKind::Task {
            // A task's session ending is the task's end (ERR-10): deleted is done (its
            // errand closes and is forgotten); dropped is interrupted (kept for a Resume).
            let state = match ended {
                Ended::Deleted => TaskState::Done,
                Ended::Expired => TaskState::Interrupted,
            };
            tools.forget(&conversation);
            tokio::spawn(async move { tools.task_changed(&conversation, state).await });
            return;
        }
        tools.forget(&conversation);
        // The session is over: its tabs close and nothing of it is kept in the browser.
        tokio::spawn(async move { tools.browser().end_conversation(&conversation).await });
    }

    /// Closes the sessions unused for longer than the idle time, ending their
    /// conversations for good.
    pub(crate) fn sweep(&self) {
        let expired: Vec<Open> = {
            let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
            let ids: Vec<String> = sessions
                .iter()
                .filter(|(_, open)| open.busy == 0 && open.last_used.elapsed() > self.idle)
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        for open in expired {
            tracing::info!(
                conversation = open.session.chat().id(),
                "MCP session closed after idle"
            );
            // Expired is ended, as a DELETE is: its tabs, lock, elicitation channel and
            // event stream go too (issue 12).
            self.close(&open, Ended::Expired);
        }
    }

    /// The session `id` and its way back to the client if it is open, marked busy
    /// until [`Door::release`].
    fn take(&self, id: &str) -> Option<(McpSession, Arc<Outbound>)> {
        self.sweep();
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        let open = sessions.get_mut(id)?;
        open.busy += 1;
        open.last_used = Instant::now();
        Some((open.session.clone(), Arc::clone(&open.outbound)))
    }

    /// The end of a request in session `id`.
    fn release(&self, id: &str) {
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(open) = sessions.get_mut(id) {
            open.busy = open.busy.saturating_sub(1);
            open.last_used = Instant::now();
        }
    }
}

/// Marks a session's request finished however the handler ends (an HTTP client that
/// hangs up drops the handler's future, or its event stream).
struct Busy {
    door: Door,
    id: String,
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.door.release(&self.id);
    }
}

/// The router: `/mcp`, and `/mcp/task`, whose sessions are tasks (ERR-1): each browses in
/// an errand of its own. A session's later requests may go to either path.
pub(crate) fn router(door: Door) -> Router {
    Router::new()
        .route("/mcp", post(post_mcp).get(get_mcp).delete(delete_mcp))
        .route("/mcp/task", post(post_task).get(get_mcp).delete(delete_mcp))
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
        .and_then(bearer_token)
        .unwrap_or_default();
    if !constant_time_eq(presented.as_bytes(), door.token.as_bytes()) {
        let mut refused = rpc_error(
            StatusCode::UNAUTHORIZED,
            -32001,
            "Unauthorized: send the gateway's token as Authorization: Bearer <token>.",
        );
        refused.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer realm=\"conch-gateway\""),
        );
        return Err(Box::new(refused));
    }
    Ok(())
}

/// The token of an `Authorization` value, whose scheme `Bearer` is matched in any case
/// (RFC 9110: auth schemes are case-insensitive).
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim_start().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// Checks `MCP-Protocol-Version` on a request after `initialize`: absent means 2025-03-26
/// (the specification's rule for clients that predate the header); one this server
/// does not speak is a 400.
fn check_version(headers: &HeaderMap) -> Result<(), Box<Response>> {
    let Some(value) = headers.get(VERSION_HEADER) else {
        return Ok(());
    };
    let version = value.to_str().unwrap_or_default().trim();
    if LEGACY_VERSIONS.contains(&version) {
        return Ok(());
    }
    Err(Box::new(rpc_error(
        StatusCode::BAD_REQUEST,
        -32000,
        &format!(
            "Bad request: MCP-Protocol-Version {version:?} is not one this server speaks ({}).",
            LEGACY_VERSIONS.join(", ")
        ),
    )))
}

/// The header that names a task's session, so an interrupted task resumes in the same
/// errand when a session with the same name opens again (ERR-11). The person configures it
/// in the MCP client (a scheduler sets it per task); the agent can't.
pub(crate) const TASK_HEADER: &str = "conch-task";

/// The task name an `initialize` carries (`Conch-Task`), for a task's session: 1 to 64
/// letters, digits, `.`, `_` or `-`. A chat's session ignores it.
fn task_name(headers: &HeaderMap, kind: ConversationKind) -> Result<Option<String>, Box<Response>> {
    if kind != ConversationKind::Task {
        return Ok(None);
    }
    let Some(value) = headers.get(TASK_HEADER) else {
        return Ok(None);
    };
    let name = value.to_str().unwrap_or_default().trim();
    let fits = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if fits {
        Ok(Some(name.to_owned()))
    } else {
        Err(Box::new(rpc_error(
            StatusCode::BAD_REQUEST,
            -32000,
            "Bad request: Conch-Task takes a name of 1 to 64 letters, digits, dots, dashes or underscores.",
        )))
    }
}

async fn post_mcp(State(door): State<Door>, request: Request) -> Response {
    let kind = if door.errands {
        ConversationKind::Task
    } else {
        ConversationKind::Chat
    };
    post_as(door, request, kind).await
}

/// POST `/mcp/task`: as `/mcp`, but `initialize` opens a task's session (ERR-1).
async fn post_task(State(door): State<Door>, request: Request) -> Response {
    post_as(door, request, ConversationKind::Task).await
}

/// A POST whose `initialize` opens a session of `kind`.
async fn post_as(door: Door, request: Request, kind: ConversationKind) -> Response {
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    if let Err(refused) = admit(&door, &headers) {
        return *refused;
    }
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY).await else {
        return rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            -32600,
            &format!("Payload too large: a message may be at most {MAX_BODY} bytes."),
        );
    };
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return rpc_error(StatusCode::BAD_REQUEST, -32700, "Parse error");
    };
    if modern::is_modern(&headers, &message) {
        return modern::post(door, headers, message, kind).await;
    }
    let is_initialize = message.get("method").and_then(Value::as_str) == Some("initialize");
    let (session, outbound, session_id, new_id) = if is_initialize {
        let id = crate::random_hex(16);
        let (conversation, named) = match task_name(&headers, kind) {
            Ok(Some(name)) => (format!("task-{name}"), Some(name)),
            Ok(None) => (format!("mcp-http-{id}"), None),
            Err(refused) => return *refused,
        };
        door.sweep();
        let outbound = Arc::new(Outbound::new(None));
        // The name is checked and the session registered under one lock, so two sessions
        // named alike at the same moment never both run the task (ERR-11).
        let session = {
            let mut sessions = door.sessions.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(name) = named
                && sessions
                    .values()
                    .any(|open| open.session.chat().id() == conversation)
            {
                drop(sessions);
                return rpc_error(
                    StatusCode::CONFLICT,
                    -32000,
                    &format!(
                        "A task named {name:?} is running already: end its session, or give this one another {TASK_HEADER} name."
                    ),
                );
            }
            let session = door.server.session_as(&conversation, kind);
            sessions.insert(
                id.clone(),
                Open {
                    session: session.clone(),
                    outbound: Arc::clone(&outbound),
                    last_used: Instant::now(),
                    busy: 1,
                },
            );
            session
        };
        (session, outbound, id.clone(), Some(id))
    } else {
        if let Err(refused) = check_version(&headers) {
            return *refused;
        }
        let id = headers
            .get(SESSION_HEADER)
            .and_then(|h| h.to_str().ok())
            .unwrap_or_default();
        match door.take(id) {
            Some((session, outbound)) => (session, outbound, id.to_owned(), None),
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
                    "Session not found: it was closed or expired; initialize a new session.",
                );
            }
        }
    };
    let _busy = Busy {
        door: door.clone(),
        id: session_id,
    };
    // The client's responses to the server's requests (one, or inside a batch).
    let message = match message {
        Value::Array(batch) if session.accepts_batches() => {
            let rest: Vec<Value> = batch
                .into_iter()
                .filter(|m| m.get("method").is_some() || !outbound.deliver(m))
                .collect();
            if rest.is_empty() {
                return StatusCode::ACCEPTED.into_response();
            }
            Value::Array(rest)
        }
        message => message,
    };
    if message.get("method").is_none() && outbound.deliver(&message) {
        return StatusCode::ACCEPTED.into_response();
    }
    let notify = {
        let outbound = Arc::clone(&outbound);
        move |note: Value| {
            outbound.send(&note);
        }
    };
    let answer = session.handle_notifying(&message, &notify).await;
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

/// GET `/mcp`: the session's event stream, for what the server sends on its own
/// (elicitation requests, progress). A new stream replaces the session's previous one.
async fn get_mcp(State(door): State<Door>, headers: HeaderMap) -> Response {
    if let Err(refused) = admit(&door, &headers) {
        return *refused;
    }
    let wants_events = headers
        .get(header::ACCEPT)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|accept| accept.to_ascii_lowercase().contains("text/event-stream"));
    if !wants_events {
        return rpc_error(
            StatusCode::NOT_ACCEPTABLE,
            -32000,
            "Not acceptable: the event stream needs Accept: text/event-stream.",
        );
    }
    if let Err(refused) = check_version(&headers) {
        return *refused;
    }
    let id = headers
        .get(SESSION_HEADER)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    let Some((session, outbound)) = door.take(id) else {
        return rpc_error(
            StatusCode::NOT_FOUND,
            -32001,
            "Session not found: initialize a session, then open its stream with its Mcp-Session-Id.",
        );
    };
    let busy = Busy {
        door: door.clone(),
        id: id.to_owned(),
    };
    let (tx, rx) = mpsc::unbounded_channel::<String>();
    outbound.set_sink(tx);
    if session.client_elicits()
        && let Some(channels) = &door.channels
    {
        channels
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(session.chat().id().to_owned(), outbound);
    }
    // The stream holds `busy` while it is open: the session stays alive.
    let events = futures_util::stream::unfold((rx, busy), |(mut rx, busy)| async move {
        let line = rx.recv().await?;
        let event = Event::default().event("message").data(line);
        Some((Ok::<Event, std::convert::Infallible>(event), (rx, busy)))
    });
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
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
        Some(open) => {
            door.close(&open, Ended::Deleted);
            StatusCode::NO_CONTENT.into_response()
        }
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use conch_browser::guard::GuardConfig;
    use conch_browser::{Browser, BrowserConfig, Home};
    use conch_policy::{Mode, NetSettings};
    use conch_tools::{Tools, ToolsConfig, Unattended};

    use super::*;

    /// One HTTP/1.1 request to the door at `port`; gives (status, lowercased head, body).
    async fn request(
        port: u16,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, String, String) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("the door listens");
        let mut text = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer token\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            body.len()
        );
        for (name, value) in headers {
            text.push_str(&format!("{name}: {value}\r\n"));
        }
        text.push_str("\r\n");
        text.push_str(body);
        stream.write_all(text.as_bytes()).await.expect("sent");
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.expect("answered");
        let answer = String::from_utf8_lossy(&answer).into_owned();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        (status, head.to_lowercase(), body.to_owned())
    }

    /// ERR-1, ERR-10: a session opened at `/mcp/task` browses in an errand of its own; a
    /// session at `/mcp` is a chat in the main context; deleting the task's session closes
    /// its errand (done) and forgets its conversation.
    #[tokio::test(flavor = "multi_thread")]
    async fn err_1_err_10_a_task_session_has_an_errand_until_it_is_deleted() {
        let pages = conch_fixtures::FixtureServer::start().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
        config.download = None;
        config.guard = Some(GuardConfig::new(NetSettings {
            allow_localhost: true,
            ..NetSettings::default()
        }));
        let browser = Browser::new(config);
        let mut tools_config = ToolsConfig::new(Arc::new(Unattended));
        tools_config.net.allow_localhost = true;
        let tools = Tools::new(browser.clone(), tools_config);
        let server = McpServer::new(tools.clone(), Mode::Ask);
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        let door = Door::new(server, "token".to_owned(), port, DEFAULT_SESSION_IDLE, None);
        let serving = tokio::spawn(async move { axum::serve(listener, router(door)).await });

        let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } }).to_string();
        let mut sessions = Vec::new();
        for path in ["/mcp/task", "/mcp"] {
            let (status, head, body) = request(port, "POST", path, &[], &init).await;
            assert_eq!(status, 200, "{body}");
            let id = head
                .lines()
                .find_map(|l| l.strip_prefix("mcp-session-id: "))
                .expect("a session id")
                .trim()
                .to_owned();
            let open = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": { "name": "browser_open", "arguments": { "url": pages.url("cookie-jar.html?set=x") } } }).to_string();
            let (status, _, body) =
                request(port, "POST", "/mcp", &[("Mcp-Session-Id", &id)], &open).await;
            assert_eq!(status, 200, "{body}");
            assert!(body.contains("jar: [who=x]"), "{body}");
            sessions.push(id);
        }
        let task = format!("mcp-http-{}", sessions[0]);
        let chat = format!("mcp-http-{}", sessions[1]);
        assert_eq!(browser.kind(&task), ConversationKind::Task);
        assert_eq!(browser.kind(&chat), ConversationKind::Chat);
        assert_eq!(browser.errands_open().await, 1);

        // The chat's session deleted leaves the errand; the task's closes it.
        let (status, _, _) = request(
            port,
            "DELETE",
            "/mcp",
            &[("Mcp-Session-Id", &sessions[1])],
            "",
        )
        .await;
        assert_eq!(status, 204);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(browser.errands_open().await, 1);
        let (status, _, _) = request(
            port,
            "DELETE",
            "/mcp/task",
            &[("Mcp-Session-Id", &sessions[0])],
            "",
        )
        .await;
        assert_eq!(status, 204);
        // The errand's context leaves the count before its disposal is answered, and the
        // conversation is forgotten after: wait for both (CI once read the kind between).
        for _ in 0..50 {
            if browser.errands_open().await == 0 && browser.kind(&task) == ConversationKind::Chat {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(
            browser.errands_open().await,
            0,
            "the task's errand is still open"
        );
        assert_eq!(browser.kind(&task), ConversationKind::Chat, "forgotten");
        assert!(!tools.conversations().contains(&task));
        serving.abort();
        browser.shutdown().await;
    }

    /// ERR-11: two sessions naming one task in `Conch-Task` at the same moment never both
    /// run it: of each burst of initializes with the same name, exactly one opens and the
    /// rest are told the task runs already (409).
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn err_11_two_sessions_at_once_never_claim_one_task_name() {
        let dir = tempfile::tempdir().unwrap();
        let browser = Browser::new(BrowserConfig::new(Home::new(dir.path().join("home"))));
        let tools = Tools::new(browser.clone(), ToolsConfig::new(Arc::new(Unattended)));
        let server = McpServer::new(tools, Mode::Ask);
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let port = listener.local_addr().unwrap().port();
        let door = Door::new(server, "token".to_owned(), port, DEFAULT_SESSION_IDLE, None);
        let serving = {
            let door = door.clone();
            tokio::spawn(async move { axum::serve(listener, router(door)).await })
        };
        let init = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "1" } } }).to_string();
        const AT_ONCE: usize = 6;
        for round in 0..300 {
            let name = format!("nightly-{round}");
            let start = Arc::new(tokio::sync::Barrier::new(AT_ONCE));
            let tries: Vec<_> = (0..AT_ONCE)
                .map(|_| {
                    let (start, init, name) = (Arc::clone(&start), init.clone(), name.clone());
                    tokio::spawn(async move {
                        start.wait().await;
                        request(port, "POST", "/mcp/task", &[("Conch-Task", &name)], &init).await
                    })
                })
                .collect();
            let mut statuses = Vec::new();
            for answer in tries {
                let (status, _, body) = answer.await.expect("the request ran");
                assert!(status == 200 || status == 409, "{status}: {body}");
                statuses.push(status);
            }
            let opened = statuses.iter().filter(|s| **s == 200).count();
            assert_eq!(opened, 1, "round {round}: {statuses:?}");
            let claiming = door
                .sessions
                .lock()
                .unwrap()
                .values()
                .filter(|open| open.session.chat().id() == format!("task-{name}"))
                .count();
            assert_eq!(claiming, 1, "round {round}");
        }
        serving.abort();
    }

    /// Issue 12: a session that expires ends its conversation for good, as closing it
    /// does: its tab is closed in the browser, its elicitation channel and its event
    /// stream are gone, and the runtime holds no lock for it any more.
    #[tokio::test(flavor = "multi_thread")]
    async fn issue_12_an_expired_http_session_ends_its_conversation_for_good() {
        let pages = conch_fixtures::FixtureServer::start().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
        config.download = None;
        config.guard = Some(GuardConfig::new(NetSettings {
            allow_localhost: true,
            ..NetSettings::default()
        }));
        let browser = Browser::new(config);
        let tools = Tools::new(browser.clone(), ToolsConfig::new(Arc::new(Unattended)));
        let server = McpServer::new(tools, Mode::Ask);
        let channels: Channels = Arc::default();
        let door = Door::new(
            server.clone(),
            "token".to_owned(),
            1,
            Duration::from_millis(50),
            Some(Arc::clone(&channels)),
        );
        let conversation = "mcp-http-expires";
        let session = server.session(conversation);
        let (sink, mut stream) = mpsc::unbounded_channel();
        let outbound = Arc::new(Outbound::new(Some(sink)));
        channels
            .lock()
            .unwrap()
            .insert(conversation.to_owned(), outbound.clone());
        door.sessions.lock().unwrap().insert(
            "expires".to_owned(),
            Open {
                session,
                outbound,
                last_used: Instant::now(),
                busy: 0,
            },
        );
        let chat = browser.conversation(conversation);
        chat.open(&pages.url("basic.html")).await.unwrap();
        let page = chat.page().await.unwrap();
        let held = browser.conversations_held();

        tokio::time::sleep(Duration::from_millis(100)).await;
        door.sweep();
        assert!(door.sessions.lock().unwrap().is_empty());
        // The tab closes: its page answers no more.
        let mut closed = false;
        for _ in 0..50 {
            let answer = page
                .call_raw("Runtime.evaluate", json!({ "expression": "1" }))
                .await;
            if answer.is_err() {
                closed = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(closed, "the expired session's tab still runs");
        assert!(
            channels.lock().unwrap().is_empty(),
            "its elicitation channel stays"
        );
        assert!(stream.recv().await.is_none(), "its event stream stays open");
        assert_eq!(browser.conversations_held(), held - 1, "its lock stays");
        browser.shutdown().await;
    }
}
