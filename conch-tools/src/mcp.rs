//! The MCP door, transport-agnostic: [`McpServer`] answers JSON-RPC messages for one
//! [`McpSession`] per client session, each its own conversation (TOOL-2, TOOL-3, TOOL-16).
//!
//! It speaks both protocol eras, and a client picks one per request:
//!
//! - the old era, 2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25: `initialize` agrees
//!   a version for the session; its own rules (the handshake, batches, `ping`,
//!   `logging/setLevel`, elicitation as a request of the server's) live in [`legacy`];
//! - the new era, 2026-07-28: no handshake and no session, every request carries its
//!   version and the client's capabilities in `_meta`; its own rules (`server/discover`,
//!   `resultType`, cacheable lists, its error codes, `subscriptions/listen`, the
//!   conversation handle over HTTP) live in [`modern`].
//!
//! A request with `_meta.io.modelcontextprotocol/protocolVersion` (or `server/discover`)
//! is the new era's, anything else the old era's; both may come on one connection (a
//! client that probes with `server/discover` and then sends `initialize` is served in
//! the old era from there), and neither loses the other's calls. What both eras share
//! stays here: `tools/list` with cursors, `tools/call`, the MCP App's resources, and
//! cancellation: `notifications/cancelled` stops the call with that id (its future is
//! dropped, so the conversation is free for the next call at once) and no response is
//! sent for it. A call whose client sent `_meta.progressToken` makes
//! `notifications/progress` every [`PROGRESS_EVERY`] while it runs, so a handoff, a
//! question to the person or a long navigation never looks like a hang.
//!
//! The transports live elsewhere: the gateway carries these messages over stdio and over
//! streamable HTTP; an embedding application can call [`McpSession::handle`] in memory,
//! with no port opened and no process spawned (TOOL-3). Written by hand rather than on an
//! SDK: the protocol surface needed here is small, and the schemas are data already.
//!
//! Deliberately absent: prompts, sampling, and any server-side method that would let a
//! client choose a browser or its settings.

pub mod app;
mod legacy;
mod modern;

use app::AppDoor;

pub use legacy::LEGACY_VERSIONS;
pub use modern::{
    HANDLE_ARG, HEADER_MISMATCH, META_CAPABILITIES, META_CLIENT, META_SERVER, META_VERSION,
    MISSING_CLIENT_CAPABILITY, MODERN_VERSION, QUESTION_KEY, UNSUPPORTED_PROTOCOL_VERSION,
    ask_client, client_answers_here, client_capabilities, is_modern, unsupported_version,
};

use conch_browser::sync::lock;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use conch_policy::Mode;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::context::{ConversationKind, ToolContext};
use crate::spec::{tool_spec, tool_specs};
use crate::tools::{Chat, Tools};

/// The server's name in `initialize` and `server/discover` (TOOL-2).
pub const SERVER_NAME: &str = "conch_browser";

/// Protocol versions this server speaks, newest first: the new era's, then the old
/// era's ([`LEGACY_VERSIONS`], agreed at `initialize`).
pub const PROTOCOL_VERSIONS: &[&str] = &[
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

/// How often a long call tells a client that asked for progress that it still runs.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(3);

/// The MCP Apps extension's name in a client's capabilities (SEP-1865).
pub const APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an MCP App's view.
pub const APP_MIME: &str = "text/html;profile=mcp-app";

/// The live view's MCP App resource.
pub const LIVE_APP_URI: &str = "ui://conch/live";

/// The tools whose results link the live view's app: where the person may want to watch.
const APP_TOOLS: [&str; 2] = ["browser_open", "browser_handoff"];

/// The live view as an MCP App (issue 14): the view's HTML and the origins it may reach,
/// which go in the resource's CSP (`_meta.ui.csp`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpApp {
    /// The view: one HTML document.
    pub html: String,
    /// The origins the view connects to or links to (`http://127.0.0.1:PORT`).
    pub connect_domains: Vec<String>,
}

/// JSON-RPC error codes.
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INVALID_REQUEST: i64 = -32600;
const INTERNAL_ERROR: i64 = -32603;

/// The MCP server: the tools, the mode every session starts in, the page size of
/// `tools/list`.
#[derive(Debug, Clone)]
pub struct McpServer {
    tools: Tools,
    mode: Mode,
    page_size: usize,
    progress_every: Duration,
    app: Option<Arc<McpApp>>,
    /// The inline live view's app-only tools, when the embedder gave their door.
    inline: Option<app::Inline>,
    /// Whether new-era tool schemas carry the conversation handle ([`HANDLE_ARG`]).
    handles: bool,
}

impl McpServer {
    /// A server over `tools`; each session's conversation is in `mode`.
    pub fn new(tools: Tools, mode: Mode) -> McpServer {
        McpServer {
            tools,
            mode,
            page_size: crate::spec::TOOL_NAMES.len(),
            progress_every: PROGRESS_EVERY,
            app: None,
            inline: None,
            handles: false,
        }
    }

    /// New-era tool lists show the conversation handle argument ([`HANDLE_ARG`]) in
    /// every tool's schema: for a transport with no sessions (streamable HTTP in
    /// 2026-07-28), where the agent passes the handle to stay in its conversation. The
    /// old era and stdio never see it.
    pub fn with_handles(mut self) -> McpServer {
        self.handles = true;
        self
    }

    /// Answers a new-era request that needs no conversation (`server/discover`, the
    /// lists, a read, an error), as a transport without sessions does; `None` for a
    /// notification, an old-era message, or a `subscriptions/listen` whose client went
    /// away. A `tools/call` here is refused: it needs a session.
    pub async fn handle_stateless(
        &self,
        message: &Value,
        notify: &(dyn Fn(Value) + Send + Sync),
    ) -> Option<Value> {
        let id = message.get("id")?;
        let method = message.get("method").and_then(Value::as_str)?;
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        if !is_modern(method, &params) {
            return None;
        }
        modern::answer(self, None, id, method, &params, notify).await
    }

    /// The server's capabilities for a client that does (or doesn't) declare MCP Apps.
    fn capabilities(&self, apps: bool) -> Value {
        let mut capabilities = json!({ "tools": { "listChanged": false } });
        if apps && self.app.is_some() {
            capabilities["resources"] = json!({ "listChanged": false });
            capabilities["extensions"] = json!({ APPS_EXTENSION: { "mimeTypes": [APP_MIME] } });
        }
        capabilities
    }

    /// Offers the live view as an MCP App (`ui://conch/live`) to clients that declare
    /// the extension; clients without it see no difference.
    pub fn with_app(mut self, app: McpApp) -> McpServer {
        self.app = Some(Arc::new(app));
        self
    }

    /// Gives the live view's app its app-only tools (issue 31), which act through `door`
    /// for the signed-in person only; listed to clients that declare MCP Apps.
    pub fn with_app_door(mut self, door: Arc<dyn AppDoor>) -> McpServer {
        self.inline = Some(app::Inline::new(door));
        self
    }

    /// Lists at most `page_size` tools per `tools/list` page (TOOL-16).
    pub fn with_page_size(mut self, page_size: usize) -> McpServer {
        self.page_size = page_size.max(1);
        self
    }

    /// Sends `notifications/progress` this often during a call whose client asked for
    /// progress (default [`PROGRESS_EVERY`]; at least 100 ms).
    pub fn with_progress_every(mut self, every: Duration) -> McpServer {
        self.progress_every = every.max(Duration::from_millis(100));
        self
    }

    /// The toolbox.
    pub fn tools(&self) -> &Tools {
        &self.tools
    }

    /// A session whose calls are conversation `conversation`, a chat.
    pub fn session(&self, conversation: &str) -> McpSession {
        self.session_as(conversation, ConversationKind::Chat)
    }

    /// A session whose calls are conversation `conversation`, a chat or a task (ERR-1):
    /// the embedder's transport decides, never the client's arguments.
    pub fn session_as(&self, conversation: &str, kind: ConversationKind) -> McpSession {
        let ctx = ToolContext {
            conversation: conversation.to_owned(),
            mode: self.mode,
            kind,
        };
        McpSession {
            server: self.clone(),
            chat: self.tools.chat_in(&ctx),
            elicitation: Arc::new(AtomicBool::new(false)),
            apps: Arc::new(AtomicBool::new(false)),
            version: Arc::new(StdMutex::new(None)),
            running: Arc::new(StdMutex::new(HashMap::new())),
            listening: Arc::new(StdMutex::new(HashMap::new())),
            parked: Arc::new(StdMutex::new(HashMap::new())),
            serial: Arc::new(AtomicU64::new(0)),
        }
    }

    /// `resources/list`: the live view's app, for a client that declared MCP Apps.
    fn resources(&self, apps: bool) -> Value {
        let listed = match &self.app {
            Some(_) if apps => vec![json!({
                "uri": LIVE_APP_URI,
                "name": "Conch live view",
                "description": "Watch the agent's browser and take over.",
                "mimeType": APP_MIME,
            })],
            _ => Vec::new(),
        };
        json!({ "resources": listed })
    }

    /// `resources/read` of the live view's app: its HTML, with a CSP that lets it reach
    /// only the gateway's own origin.
    fn read_resource(&self, params: &Value) -> Result<Value, (i64, String)> {
        let uri = params
            .get("uri")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match &self.app {
            Some(app) if uri == LIVE_APP_URI => Ok(json!({
                "contents": [{
                    "uri": LIVE_APP_URI,
                    "mimeType": APP_MIME,
                    "text": app.html,
                    "_meta": { "ui": {
                        "csp": {
                            "connectDomains": app.connect_domains,
                            "resourceDomains": [],
                            "frameDomains": [],
                        },
                        "prefersBorder": true,
                    } },
                }],
            })),
            _ => Err((INVALID_PARAMS, format!("Resource not found: {uri}"))),
        }
    }

    /// One page of `tools/list`: the tools after `cursor`, and the next cursor while more
    /// remain; with `handles`, each schema has the conversation handle argument.
    fn list(
        &self,
        cursor: Option<&str>,
        apps: bool,
        handles: bool,
    ) -> Result<Value, (i64, String)> {
        let start = match cursor {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|n| *n <= tool_specs().len())
                .ok_or((INVALID_PARAMS, "Invalid cursor".to_owned()))?,
        };
        let end = (start + self.page_size).min(tool_specs().len());
        let tools: Vec<Value> = tool_specs()[start..end]
            .iter()
            .map(|s| {
                let mut tool = s.to_mcp();
                if apps && self.app.is_some() && APP_TOOLS.contains(&s.name) {
                    tool["_meta"] = json!({ "ui": { "resourceUri": LIVE_APP_URI } });
                }
                if handles {
                    tool = modern::with_handle(tool);
                }
                tool
            })
            .collect();
        let mut tools = tools;
        if end == tool_specs().len() && apps && self.app.is_some() && self.inline.is_some() {
            tools.extend(app::listed(handles));
        }
        let mut answer = json!({ "tools": tools });
        if end < tool_specs().len() {
            answer["nextCursor"] = json!(end.to_string());
        }
        Ok(answer)
    }
}

/// One MCP client session: one conversation.
#[derive(Debug, Clone)]
pub struct McpSession {
    server: McpServer,
    chat: Chat,
    elicitation: Arc<AtomicBool>,
    /// Whether the client declared the MCP Apps extension.
    apps: Arc<AtomicBool>,
    /// The protocol version agreed at `initialize`, if it happened.
    version: Arc<StdMutex<Option<&'static str>>>,
    /// The calls running now, by request id, each with its serial number and the switch
    /// that stops it.
    running: Arc<StdMutex<HashMap<String, Running>>>,
    /// The new era's `subscriptions/listen` requests held open, by request id.
    listening: Arc<StdMutex<HashMap<String, Running>>>,
    /// The new era's calls waiting for their client's answer, by `requestState`.
    parked: Arc<StdMutex<HashMap<String, modern::Parked>>>,
    serial: Arc<AtomicU64>,
}

/// A running call: its serial number, and the switch that stops it.
type Running = (u64, oneshot::Sender<()>);

/// A request id as a map key: `1` and `"1"` stay apart.
fn id_key(id: &Value) -> String {
    id.to_string()
}

impl McpSession {
    /// Marks the call `id` as running, so `notifications/cancelled` can stop it: its key,
    /// its serial (a later call reusing the id is another), and the stop it hears.
    pub(crate) fn start_running(&self, id: &Value) -> (String, u64, oneshot::Receiver<()>) {
        let key = id_key(id);
        let serial = self.serial.fetch_add(1, Ordering::SeqCst);
        let (stop, stopped) = oneshot::channel();
        lock(&self.running).insert(key.clone(), (serial, stop));
        (key, serial, stopped)
    }

    /// The session's conversation.
    pub fn chat(&self) -> &Chat {
        &self.chat
    }

    /// Whether the client said at `initialize` that it answers elicitation requests.
    pub fn client_elicits(&self) -> bool {
        self.elicitation.load(Ordering::SeqCst)
    }

    /// The protocol version agreed at `initialize`, or `None` before it.
    pub fn protocol_version(&self) -> Option<&'static str> {
        *lock(&self.version)
    }

    /// Answers one JSON-RPC message (or batch) from the client. Gives the response for a
    /// request, and `None` for a notification, a response (those are the transport's
    /// business) or a cancelled request.
    pub async fn handle(&self, message: &Value) -> Option<Value> {
        self.handle_notifying(message, &|_| {}).await
    }

    /// As [`McpSession::handle`], sending the notifications the server makes while it
    /// works (`notifications/progress` when the client asked for them) through `notify`.
    pub async fn handle_notifying(
        &self,
        message: &Value,
        notify: &(dyn Fn(Value) + Send + Sync),
    ) -> Option<Value> {
        match message {
            Value::Array(batch) => self.batch(batch, notify).await,
            _ => self.one(message, notify, false).await,
        }
    }

    /// One message; `in_batch` when it came inside a batch.
    async fn one(
        &self,
        message: &Value,
        notify: &(dyn Fn(Value) + Send + Sync),
        in_batch: bool,
    ) -> Option<Value> {
        if !message.is_object() {
            return Some(error(&Value::Null, INVALID_REQUEST, "Invalid request"));
        }
        let id = message.get("id").cloned();
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            return match id {
                // A response to one of our requests, or nothing at all.
                Some(_) if message.get("result").is_some() || message.get("error").is_some() => {
                    None
                }
                Some(id) => Some(error(&id, INVALID_REQUEST, "Invalid request")),
                None => None,
            };
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let Some(id) = id else {
            // Notifications get no answer.
            if method == "notifications/cancelled" {
                self.cancel(&params);
            }
            return None;
        };
        if is_modern(method, &params) {
            if in_batch {
                return Some(error(
                    &id,
                    INVALID_REQUEST,
                    &format!("Invalid request: MCP {MODERN_VERSION} has no JSON-RPC batches."),
                ));
            }
            return modern::answer(&self.server, Some(self), &id, method, &params, notify).await;
        }
        let answer = match legacy::answer(self, method, &params, in_batch) {
            Some(answer) => answer,
            None => self.shared(&id, method, &params, notify).await?,
        };
        Some(match answer {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err((code, text)) => error(&id, code, &text),
        })
    }

    /// The methods both eras have, answered as the old era (whose session recorded the
    /// client's capabilities at `initialize`): `None` when the call was cancelled.
    async fn shared(
        &self,
        id: &Value,
        method: &str,
        params: &Value,
        notify: &(dyn Fn(Value) + Send + Sync),
    ) -> Option<Result<Value, (i64, String)>> {
        let apps = self.apps.load(Ordering::SeqCst);
        Some(match method {
            "tools/list" => {
                self.server
                    .list(params.get("cursor").and_then(Value::as_str), apps, false)
            }
            "resources/list" if self.server.app.is_some() => Ok(self.server.resources(apps)),
            "resources/read" if self.server.app.is_some() => self.server.read_resource(params),
            // Cancelled: no response (MCP cancellation).
            "tools/call" => self.call(id, params, notify).await?,
            _ => Err((METHOD_NOT_FOUND, format!("Method not found: {method}"))),
        })
    }

    /// `notifications/cancelled`: stops the call with `requestId`, if it still runs.
    fn cancel(&self, params: &Value) {
        let Some(id) = params.get("requestId") else {
            return;
        };
        let key = id_key(id);
        if let Some((_, stop)) = lock(&self.running).remove(&key) {
            let _ = stop.send(());
        }
        if let Some((_, stop)) = lock(&self.listening).remove(&key) {
            let _ = stop.send(());
        }
    }

    /// Whether a new-era call of this session waits for the retried request with
    /// `request_state` (MRTR).
    pub fn holds_state(&self, request_state: &str) -> bool {
        lock(&self.parked).contains_key(request_state)
    }

    /// Ends the new era's `subscriptions/listen` requests held open (their client is
    /// gone: stdin closed), so nothing waits for them.
    pub fn stop_listening(&self) {
        lock(&self.listening).clear();
    }

    /// Runs a `tools/call`: `None` when the client cancelled it. While it runs, a client
    /// that sent `_meta.progressToken` hears `notifications/progress` every
    /// [`McpServer::with_progress_every`].
    async fn call(
        &self,
        id: &Value,
        params: &Value,
        notify: &(dyn Fn(Value) + Send + Sync),
    ) -> Option<Result<Value, (i64, String)>> {
        let apps = self.apps.load(Ordering::SeqCst);
        if let Some(result) =
            app::call(self.server.inline.as_ref(), apps, self.chat.id(), params).await
        {
            return Some(Ok(result));
        }
        let (name, args) = match called_tool(params) {
            Ok(called) => called,
            Err(e) => return Some(Err(e)),
        };
        let token = progress_token(params);
        // Issue 32: where the call stands in a pool's line goes out as progress at once.
        let mut line = token.as_ref().and(self.chat.waits_for_place());
        let (key, serial, mut stopped) = self.start_running(id);
        let running = self.chat.call(name, &args);
        tokio::pin!(running);
        let started = tokio::time::Instant::now();
        let every = self.server.progress_every;
        let mut ticks = tokio::time::interval_at(started + every, every);
        let mut sent = 0u64;
        let outcome = loop {
            tokio::select! {
                result = &mut running => break Some(result),
                _ = &mut stopped => break None,
                _ = ticks.tick(), if token.is_some() => {
                    sent += 1;
                    notify(progress_note(&token, sent, name, started, self, line.as_ref()));
                }
                sentence = next_in_line(&mut line) => {
                    sent += 1;
                    notify(line_note(&token, sent, &sentence));
                }
            }
        };
        {
            let mut running = lock(&self.running);
            if running.get(&key).is_some_and(|(s, _)| *s == serial) {
                running.remove(&key);
            }
        }
        outcome.map(|result| Ok(result.to_mcp()))
    }
}

/// The `sent`th progress notification for `tool`'s call in `session`, started at
/// `started`, with the client's `token`: while the call waits in a pool's `line`, the
/// waiting sentence (issue 32).
fn progress_note(
    token: &Option<Value>,
    sent: u64,
    tool: &str,
    started: tokio::time::Instant,
    session: &McpSession,
    line: Option<&Line>,
) -> Value {
    if let Some(sentence) = line.and_then(|l| l.borrow().clone()) {
        return line_note(token, sent, &sentence);
    }
    let words = progress_words(
        tool,
        started.elapsed(),
        session.chat.panel_link().as_deref(),
    );
    line_note(token, sent, &words)
}

/// Where a call stands in a pool's line (issue 32): the waiting sentence while it waits.
pub(crate) type Line = tokio::sync::watch::Receiver<Option<String>>;

/// The `sent`th progress notification with the client's `token`, saying `sentence`.
pub(crate) fn line_note(token: &Option<Value>, sent: u64, sentence: &str) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {
            "progressToken": token,
            "progress": sent,
            "message": sentence,
        },
    })
}

/// The next waiting sentence of `line` (a call's place in a pool's line); pending forever
/// without a line, once its sender is gone, and while the line only clears.
pub(crate) async fn next_in_line(line: &mut Option<Line>) -> String {
    loop {
        let Some(waits) = line.as_mut() else {
            return std::future::pending().await;
        };
        if waits.changed().await.is_err() {
            *line = None;
            continue;
        }
        if let Some(sentence) = waits.borrow_and_update().clone() {
            return sentence;
        }
    }
}

/// What a progress notification says while `tool` has run for `elapsed`; a handoff's
/// carries the link where the person takes over, when there is a panel.
fn progress_words(tool: &str, elapsed: Duration, link: Option<&str>) -> String {
    let secs = elapsed.as_secs();
    match (tool, link) {
        ("browser_handoff", Some(link)) => format!(
            "Waiting for the person to hand the page back ({secs} s so far). Take over at {link}"
        ),
        ("browser_handoff", None) => {
            format!("Waiting for the person to hand the page back ({secs} s so far).")
        }
        (_, Some(link)) => format!(
            "{tool} is still working, or waiting for the person's answer ({secs} s so far). The person answers at {link}"
        ),
        (_, None) => format!(
            "{tool} is still working, or waiting for the person's answer ({secs} s so far)."
        ),
    }
}

fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// The call's `_meta.progressToken`, when it is one a client may send (a string or an
/// integer): the client wants `notifications/progress` for it.
pub(crate) fn progress_token(params: &Value) -> Option<Value> {
    params
        .get("_meta")
        .and_then(|m| m.get("progressToken"))
        .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
        .cloned()
}

/// The tool a `tools/call` names and its arguments, in either era: Invalid params when it
/// names no tool or one this server does not have.
pub(crate) fn called_tool(params: &Value) -> Result<(&str, Value), (i64, String)> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Err((INVALID_PARAMS, "tools/call needs a tool name".to_owned()));
    };
    if tool_spec(name).is_none() {
        return Err((INVALID_PARAMS, format!("Unknown tool: {name}")));
    }
    Ok((
        name,
        params.get("arguments").cloned().unwrap_or(Value::Null),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ToolsConfig;
    use crate::embedder::NoOneToAsk;
    use crate::tools::Tools;

    fn session_with_app(dir: &std::path::Path) -> McpSession {
        let browser = conch_browser::Browser::new(conch_browser::BrowserConfig::new(
            conch_browser::Home::new(dir),
        ));
        let tools = Tools::new(browser, ToolsConfig::new(std::sync::Arc::new(NoOneToAsk)));
        McpServer::new(tools, Mode::Ask)
            .with_app(McpApp {
                html: "<!doctype html><title>Conch</title>".to_owned(),
                connect_domains: vec!["http://127.0.0.1:7391".to_owned()],
            })
            .session("apps")
    }

    async fn request(session: &McpSession, method: &str, params: Value) -> Value {
        session
            .handle(&json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }))
            .await
            .expect("an answer")
    }

    /// Issue 14: a client that declares MCP Apps gets the live view as `ui://conch/live`,
    /// linked from browser_open and browser_handoff, with a CSP naming only the gateway;
    /// a client that doesn't sees no difference.
    #[tokio::test]
    async fn live_1_the_live_view_is_an_mcp_app_only_for_clients_that_declare_it() {
        let dir = tempfile::tempdir().unwrap();
        let plain = session_with_app(dir.path());
        let hello = request(
            &plain,
            "initialize",
            json!({ "protocolVersion": "2025-06-18", "capabilities": {} }),
        )
        .await;
        assert!(
            hello["result"]["capabilities"].get("resources").is_none(),
            "{hello}"
        );
        let tools = request(&plain, "tools/list", json!({})).await;
        assert!(!tools.to_string().contains("ui://"), "{tools}");
        let listed = request(&plain, "resources/list", json!({})).await;
        assert_eq!(listed["result"]["resources"], json!([]));

        let apps = session_with_app(dir.path());
        let hello = request(
            &apps,
            "initialize",
            json!({ "protocolVersion": "2025-06-18", "capabilities": {
                "extensions": { APPS_EXTENSION: { "mimeTypes": [APP_MIME] } } } }),
        )
        .await;
        assert!(
            hello["result"]["capabilities"].get("resources").is_some(),
            "{hello}"
        );
        let tools = request(&apps, "tools/list", json!({})).await;
        let linked: Vec<&str> = tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["_meta"]["ui"]["resourceUri"] == LIVE_APP_URI)
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(linked, ["browser_open", "browser_handoff"]);
        let listed = request(&apps, "resources/list", json!({})).await;
        assert_eq!(listed["result"]["resources"][0]["mimeType"], APP_MIME);
        let read = request(&apps, "resources/read", json!({ "uri": LIVE_APP_URI })).await;
        let content = &read["result"]["contents"][0];
        assert_eq!(content["mimeType"], APP_MIME);
        assert!(
            content["text"]
                .as_str()
                .unwrap()
                .starts_with("<!doctype html>")
        );
        assert_eq!(
            content["_meta"]["ui"]["csp"]["connectDomains"],
            json!(["http://127.0.0.1:7391"])
        );
        let missing = request(
            &apps,
            "resources/read",
            json!({ "uri": "ui://conch/other" }),
        )
        .await;
        assert_eq!(missing["error"]["code"], INVALID_PARAMS);
    }

    /// HAND-7: while a handoff waits, progress carries the link where the person takes
    /// over; without a panel it says only that the step waits.
    #[test]
    fn hand_7_handoff_progress_carries_the_take_over_link() {
        let mut config = ToolsConfig::new(std::sync::Arc::new(NoOneToAsk));
        assert_eq!(config.panel_link_for("c1"), None);
        config.panel_link = Some("http://127.0.0.1:7391/".to_owned());
        let link = config.panel_link_for("c1");
        assert_eq!(
            link.as_deref(),
            Some("http://127.0.0.1:7391/?browser=1&conversation=c1")
        );
        let words = progress_words("browser_handoff", Duration::from_secs(12), link.as_deref());
        assert!(
            words.ends_with("Take over at http://127.0.0.1:7391/?browser=1&conversation=c1"),
            "{words}"
        );
        assert!(words.contains("12 s"), "{words}");
        let plain = progress_words("browser_handoff", Duration::from_secs(1), None);
        assert!(!plain.contains("http"), "{plain}");
        let other = progress_words("browser_click", Duration::from_secs(1), link.as_deref());
        assert!(
            other.ends_with(
                "The person answers at http://127.0.0.1:7391/?browser=1&conversation=c1"
            ),
            "a question's wait carries the panel's link: {other}"
        );
    }
}
