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
use tokio::sync::oneshot;

use super::{
    INVALID_PARAMS, METHOD_NOT_FOUND, McpServer, McpSession, PROTOCOL_VERSIONS, SERVER_NAME, error,
    id_key, legacy,
};
use crate::prompt::BROWSER_HINT;

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
            Some(session) => match session.call(id, params, notify).await {
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
