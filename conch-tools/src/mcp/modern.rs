//! The new era's own rules (2026-07-28): what a request that carries its version in
//! `_meta` gets, with no `initialize` and no session.
//!
//! - Every request says its version (`io.modelcontextprotocol/protocolVersion`) and the
//!   client's capabilities (`io.modelcontextprotocol/clientCapabilities`) in `_meta`;
//!   nothing is inferred from an earlier request. A version other than
//!   [`MODERN_VERSION`] is refused with `UnsupportedProtocolVersion` (`-32022`), naming
//!   every version this server speaks.
//! - `server/discover` answers the versions, the capabilities (extensions included),
//!   the instructions, and (as every result) the identity in `_meta`.
//! - Every result carries `resultType` and the server's identity in `_meta`; the lists
//!   and `resources/read` carry `ttlMs` and `cacheScope`. `tools/list` is the same list
//!   in the same order on every request.
//! - `ping` and `logging/setLevel` do not exist (Method not found).
//! - `subscriptions/listen` is acknowledged and then held open; the tool list never
//!   changes while the server runs, so it carries no `toolsListChanged`.
//! - Over HTTP (the gateway's business), a conversation is a server-minted handle the
//!   agent passes as the tool argument [`HANDLE_ARG`]; the list shows it in every
//!   tool's schema when the server is made [`McpServer::with_handles`].

use std::sync::atomic::Ordering;

use conch_browser::sync::lock;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::{
    INVALID_PARAMS, METHOD_NOT_FOUND, McpServer, McpSession, PROTOCOL_VERSIONS, SERVER_NAME, error,
    id_key, legacy,
};
use crate::prompt::BROWSER_HINT;
use crate::result::ToolResult;

/// The new era's one version.
pub const MODERN_VERSION: &str = "2026-07-28";

/// `_meta` key: the request's protocol version.
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request.
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's identity.
pub const META_CLIENT: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of a result: the server's identity.
pub const META_SERVER: &str = "io.modelcontextprotocol/serverInfo";

/// The HTTP headers' values do not match the body, or one is missing.
pub const HEADER_MISMATCH: i64 = -32020;
/// The request needs a client capability it did not declare.
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// The request's protocol version is not one this server speaks.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The tool argument that carries a conversation handle over new-era HTTP.
pub const HANDLE_ARG: &str = "conversation";

/// What the handle argument says in each tool's schema.
const HANDLE_WORDS: &str =
    "Conversation handle from an earlier Conch result. Omit it to start a new one.";

/// How long a client may keep the tool list: it never changes while the server runs.
const LIST_TTL_MS: u64 = 60 * 60 * 1000;

/// Whether `method` with `params` is a new-era request: `server/discover`, or any
/// request whose `_meta` names its protocol version.
pub fn is_modern(method: &str, params: &Value) -> bool {
    method == "server/discover" || meta(params).get(META_VERSION).is_some()
}

/// The request's `_meta` (or null).
fn meta(params: &Value) -> &Value {
    params.get("_meta").unwrap_or(&Value::Null)
}

/// The client capabilities a new-era request declares (an empty object when none).
pub fn client_capabilities(params: &Value) -> Value {
    meta(params)
        .get(META_CAPABILITIES)
        .filter(|c| c.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}))
}

/// The `UnsupportedProtocolVersion` error for a request that asked for `requested`.
pub fn unsupported_version(id: &Value, requested: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": {
        "code": UNSUPPORTED_PROTOCOL_VERSION,
        "message": format!(
            "Unsupported protocol version {requested:?}: this server speaks {} (the older ones after initialize).",
            PROTOCOL_VERSIONS.join(", ")
        ),
        "data": { "supported": PROTOCOL_VERSIONS, "requested": requested },
    } })
}

/// Answers one new-era request: in `session` when there is one (stdio, an in-memory
/// embedder, a conversation's handle over HTTP), else statelessly (a tool call then
/// needs a conversation the transport did not give). `None` when the client cancelled.
pub(super) async fn answer(
    server: &McpServer,
    session: Option<&McpSession>,
    id: &Value,
    method: &str,
    params: &Value,
    notify: &(dyn Fn(Value) + Send + Sync),
) -> Option<Value> {
    let version = meta(params).get(META_VERSION).and_then(Value::as_str);
    match version {
        Some(MODERN_VERSION) => {}
        // `server/discover` may come as a bare probe.
        None if method == "server/discover" => {}
        Some(other) => return Some(unsupported_version(id, other)),
        None => return Some(unsupported_version(id, "")),
    }
    let capabilities = client_capabilities(params);
    let apps = legacy::declares_apps(&capabilities);
    if let (Some(session), Some(name)) = (
        session,
        meta(params)
            .get(META_CLIENT)
            .and_then(|c| c.get("name"))
            .and_then(Value::as_str),
    ) {
        session.chat.set_client(name);
    }
    let answer = match method {
        "server/discover" => Ok(cacheable(json!({
            "supportedVersions": PROTOCOL_VERSIONS,
            "capabilities": server.capabilities(apps),
            "instructions": BROWSER_HINT,
        }))),
        "tools/list" => server
            .list(
                params.get("cursor").and_then(Value::as_str),
                apps,
                server.handles,
            )
            .map(cacheable),
        "resources/list" if server.app.is_some() => Ok(cacheable(server.resources(apps))),
        "resources/read" if server.app.is_some() => server.read_resource(params).map(cacheable),
        "tools/call" => match session {
            Some(session) => match call(session, id, params, notify).await {
                Some(answer) => answer,
                None => return None,
            },
            None => Err((
                INVALID_PARAMS,
                "tools/call needs a conversation: the transport gave none.".to_owned(),
            )),
        },
        "subscriptions/listen" => {
            listen(session, id, params, notify).await;
            return None;
        }
        "initialize" | "ping" | "logging/setLevel" => Err((
            METHOD_NOT_FOUND,
            format!(
                "Method not found: {method} is not part of MCP {MODERN_VERSION} (send it without _meta.{META_VERSION} after initialize for the older versions)."
            ),
        )),
        _ => Err((METHOD_NOT_FOUND, format!("Method not found: {method}"))),
    };
    Some(match answer {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": complete(result) }),
        Err((code, text)) => error(id, code, &text),
    })
}

/// The server's identity.
fn identity() -> Value {
    json!({ "name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION") })
}

/// A final result: `resultType` (unless it says otherwise already) and the server's
/// identity in `_meta`.
pub(super) fn complete(mut result: Value) -> Value {
    if let Some(fields) = result.as_object_mut() {
        fields
            .entry("resultType")
            .or_insert_with(|| json!("complete"));
        let meta = fields.entry("_meta").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(META_SERVER.to_owned(), identity());
        }
    }
    result
}

/// A list (or a read) a client may keep for [`LIST_TTL_MS`], within one authorization
/// context: the tools are the same for everyone, but the gateway's token is the door.
fn cacheable(mut result: Value) -> Value {
    result["ttlMs"] = json!(LIST_TTL_MS);
    result["cacheScope"] = json!("private");
    result
}

/// Adds the conversation handle argument to a tool's schema.
pub(super) fn with_handle(mut tool: Value) -> Value {
    if let Some(properties) = tool
        .get_mut("inputSchema")
        .and_then(|s| s.get_mut("properties"))
        .and_then(Value::as_object_mut)
    {
        properties.insert(
            HANDLE_ARG.to_owned(),
            json!({ "type": "string", "description": HANDLE_WORDS }),
        );
    }
    tool
}

/// `subscriptions/listen`: acknowledged with what this server will send (nothing: its
/// tool list never changes), then held open until the client cancels it (stdio) or
/// closes its stream (HTTP).
async fn listen(
    session: Option<&McpSession>,
    id: &Value,
    params: &Value,
    notify: &(dyn Fn(Value) + Send + Sync),
) {
    let _ = params;
    notify(json!({
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "notifications": {},
            "_meta": { "io.modelcontextprotocol/subscriptionId": id },
        },
    }));
    match session {
        Some(session) => {
            let key = id_key(id);
            let serial = session.serial.fetch_add(1, Ordering::SeqCst);
            let (stop, stopped) = oneshot::channel();
            lock(&session.listening).insert(key.clone(), (serial, stop));
            let _ = stopped.await;
            let mut listening = lock(&session.listening);
            if listening.get(&key).is_some_and(|(s, _)| *s == serial) {
                listening.remove(&key);
            }
        }
        None => std::future::pending::<()>().await,
    }
}

/// The key of the site question in an `InputRequiredResult`'s `inputRequests`.
pub const QUESTION_KEY: &str = "conch_question";

tokio::task_local! {
    /// Where a new-era call's questions for its client go, in the call's own task: set
    /// when its request declared elicitation.
    static CLIENT_INPUT: Option<mpsc::UnboundedSender<InputAsk>>;
}

/// Whether the code running now is a new-era call whose client answers questions
/// (MRTR): then [`ask_client`] asks it.
pub fn client_answers_here() -> bool {
    CLIENT_INPUT
        .try_with(|inputs| inputs.is_some())
        .unwrap_or(false)
}

/// Asks the client of the new-era call running now (`elicitation/create` with
/// `params`): the call's request ends with `input_required`, and the client's answer
/// (its result) comes with the retried request; `None` when no such call runs here or
/// the client never answers.
pub async fn ask_client(method: &str, params: Value) -> Option<Value> {
    let (tx, rx) = oneshot::channel();
    let sent = CLIENT_INPUT
        .try_with(|inputs| {
            inputs
                .as_ref()
                .is_some_and(|s| s.send((method.to_owned(), params, tx)).is_ok())
        })
        .unwrap_or(false);
    if !sent {
        return None;
    }
    rx.await.ok().flatten()
}

/// A question for the client from the call that runs (method, params, where its
/// answer goes: the client's result, or `None`).
pub(super) type InputAsk = (String, Value, oneshot::Sender<Option<Value>>);

/// A call waiting for its client's answer (MRTR): it runs on in the background, and
/// the retried request with this entry's `requestState` continues it.
#[derive(Debug)]
pub(super) struct Parked {
    /// The tool and its arguments: the retried request must be the same call.
    name: String,
    args: Value,
    /// Where the client's answer goes.
    answer: oneshot::Sender<Option<Value>>,
    /// The call's result, when it comes.
    result: oneshot::Receiver<ToolResult>,
    /// Its next questions.
    asks: mpsc::UnboundedReceiver<InputAsk>,
    /// Stops it.
    task: tokio::task::AbortHandle,
}

/// Aborts a call's task when its request ends without parking it (cancelled, or the
/// stream that carried it closed).
struct AbortOnDrop(Option<tokio::task::AbortHandle>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// A new-era `tools/call`: the call runs as a task of its own; a question for the
/// client (the site question with `--ask-via-mcp`, when the request declares
/// elicitation) ends this request with `input_required`, the question, and an opaque
/// `requestState` (128 random bits naming the waiting call, kept only here). The
/// retried request with that `requestState` and the client's `inputResponses` gives the
/// answer to the same call, which goes on: the act runs once. A `requestState` used
/// already, never given, or given for another call is refused. `None` when cancelled.
pub(super) async fn call(
    session: &McpSession,
    id: &Value,
    params: &Value,
    notify: &(dyn Fn(Value) + Send + Sync),
) -> Option<Result<Value, (i64, String)>> {
    let apps = legacy::declares_apps(&client_capabilities(params));
    if let Some(result) = super::app::call(
        session.server.inline.as_ref(),
        apps,
        session.chat.id(),
        params,
    )
    .await
    {
        return Some(Ok(result));
    }
    let (name, args) = match super::called_tool(params) {
        Ok(called) => called,
        Err(e) => return Some(Err(e)),
    };
    let elicits = client_capabilities(params).get("elicitation").is_some();
    let (mut result, mut asks, task) = match params.get("requestState") {
        Some(state) => {
            let state = state.as_str().unwrap_or_default();
            let parked = {
                let mut parked = lock(&session.parked);
                match parked.get(state) {
                    Some(p) if p.name == name && p.args == args => parked.remove(state),
                    Some(_) => {
                        return Some(Err((
                            INVALID_PARAMS,
                            "This requestState belongs to another call: retry the same tool with the same arguments.".to_owned(),
                        )));
                    }
                    None => None,
                }
            };
            let Some(parked) = parked else {
                return Some(Err((
                    INVALID_PARAMS,
                    "This requestState is not one this server gave for a waiting call, or it was used already: call the tool again without it.".to_owned(),
                )));
            };
            let answer = params
                .get("inputResponses")
                .and_then(|r| r.get(QUESTION_KEY))
                .cloned();
            let _ = parked.answer.send(answer);
            (parked.result, parked.asks, parked.task)
        }
        None => {
            let (done, result) = oneshot::channel();
            let (ask_tx, asks) = mpsc::unbounded_channel();
            let chat = session.chat.clone();
            let (name, args) = (name.to_owned(), args.clone());
            let ask_tx = elicits.then_some(ask_tx);
            let task = tokio::spawn(CLIENT_INPUT.scope(ask_tx, async move {
                let _ = done.send(chat.call(&name, &args).await);
            }))
            .abort_handle();
            (result, asks, task)
        }
    };
    let mut guard = AbortOnDrop(Some(task.clone()));
    let token = super::progress_token(params);
    // Issue 32: where the call stands in a pool's line goes out as progress at once.
    let mut line = token.as_ref().and(session.chat.waits_for_place());
    let (key, serial, mut stopped) = session.start_running(id);
    let started = tokio::time::Instant::now();
    let every = session.server.progress_every;
    let mut ticks = tokio::time::interval_at(started + every, every);
    let mut sent = 0u64;
    let outcome = loop {
        tokio::select! {
            done = &mut result => break Some(done.map(|r| Ok(r.to_mcp())).unwrap_or_else(|_| {
                Err((super::INTERNAL_ERROR, format!("{name} ended without a result.")))
            })),
            _ = &mut stopped => break None,
            Some((method, question, answer)) = asks.recv() => {
                let state = random_state();
                guard.0 = None;
                lock(&session.parked).insert(state.clone(), Parked {
                    name: name.to_owned(),
                    args: args.clone(),
                    answer,
                    result,
                    asks,
                    task,
                });
                break Some(Ok(json!({
                    "resultType": "input_required",
                    "inputRequests": { QUESTION_KEY: { "method": method, "params": question } },
                    "requestState": state,
                })));
            }
            _ = ticks.tick(), if token.is_some() => {
                sent += 1;
                notify(super::progress_note(&token, sent, name, started, session, line.as_ref()));
            }
            sentence = super::next_in_line(&mut line) => {
                sent += 1;
                notify(super::line_note(&token, sent, &sentence));
            }
        }
    };
    let mut running = lock(&session.running);
    if running.get(&key).is_some_and(|(s, _)| *s == serial) {
        running.remove(&key);
    }
    outcome
}

/// A `requestState`: 128 random bits as hex, from the system's random source.
pub(super) fn random_state() -> String {
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes));
    if read.is_err() {
        use std::hash::{BuildHasher, Hasher};
        for chunk in bytes.chunks_mut(8) {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_usize(chunk.as_ptr() as usize);
            chunk.copy_from_slice(&hasher.finish().to_le_bytes());
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
