//! The old era's own rules (2024-11-05 … 2025-11-25): what a session that opened with
//! `initialize` has and the new era does not.
//!
//! - `initialize` agrees a version (the client's, when it is one of
//!   [`LEGACY_VERSIONS`], else the newest of them) and records the client's
//!   capabilities for the whole session.
//! - JSON-RPC batches: answered one message after the other for 2024-11-05 and
//!   2025-03-26, refused whole for the later versions, which dropped them.
//! - `ping` and `logging/setLevel` are answered (the new era removed both).
//! - The site question goes to the client as an `elicitation/create` request of the
//!   server's own (the gateway's transports carry it), not inside a result.

use std::sync::atomic::Ordering;

use conch_browser::sync::lock;
use serde_json::{Value, json};

use super::{
    APP_MIME, APPS_EXTENSION, INVALID_PARAMS, INVALID_REQUEST, McpSession, SERVER_NAME, error,
};
use crate::context::ConversationKind;
use crate::prompt::{BROWSER_HINT, errand_prompt};

/// The versions an `initialize` may agree, newest first.
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The log levels `logging/setLevel` takes (RFC 5424's, as MCP names them).
const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// The methods only the old era has; `None` when `method` is not one of them.
pub(super) fn answer(
    session: &McpSession,
    method: &str,
    params: &Value,
    in_batch: bool,
) -> Option<Result<Value, (i64, String)>> {
    Some(match method {
        "initialize" if in_batch => Err((
            INVALID_REQUEST,
            "Invalid request: initialize may not be part of a batch.".to_owned(),
        )),
        "initialize" => Ok(session.initialize(params)),
        "ping" => Ok(json!({})),
        "logging/setLevel" => match params.get("level").and_then(Value::as_str) {
            Some(level) if LOG_LEVELS.contains(&level) => Ok(json!({})),
            _ => Err((
                INVALID_PARAMS,
                format!(
                    "logging/setLevel takes a level: one of {}.",
                    LOG_LEVELS.join(", ")
                ),
            )),
        },
        _ => return None,
    })
}

impl McpSession {
    /// Whether a JSON-RPC batch is part of the agreed version: 2025-03-26 and
    /// 2024-11-05 have them, later versions (and the new era) removed them.
    pub fn accepts_batches(&self) -> bool {
        matches!(self.protocol_version(), Some("2025-03-26" | "2024-11-05"))
    }

    /// A batch: each message in turn, the answers in one array; refused whole when the
    /// agreed version has no batches.
    pub(super) async fn batch(
        &self,
        batch: &[Value],
        notify: &(dyn Fn(Value) + Send + Sync),
    ) -> Option<Value> {
        if !self.accepts_batches() {
            let version = self.protocol_version().unwrap_or("before initialize");
            return Some(error(
                &Value::Null,
                INVALID_REQUEST,
                &format!(
                    "Invalid request: MCP {version} has no JSON-RPC batches; send each message on its own."
                ),
            ));
        }
        if batch.is_empty() {
            return Some(error(
                &Value::Null,
                INVALID_REQUEST,
                "Invalid request: the batch is empty.",
            ));
        }
        let mut answers = Vec::new();
        for message in batch {
            if let Some(answer) = self.one(message, notify, true).await {
                answers.push(answer);
            }
        }
        (!answers.is_empty()).then_some(Value::Array(answers))
    }

    /// `initialize`: agrees the version and records the client for the session.
    fn initialize(&self, params: &Value) -> Value {
        let asked = params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let version = LEGACY_VERSIONS
            .iter()
            .find(|v| **v == asked)
            .copied()
            .unwrap_or(LEGACY_VERSIONS[0]);
        let capabilities = params.get("capabilities").cloned().unwrap_or(Value::Null);
        let elicits = capabilities.get("elicitation").is_some();
        self.elicitation.store(elicits, Ordering::SeqCst);
        // The person's panel names the conversation by its client (issue 28).
        if let Some(name) = params
            .get("clientInfo")
            .and_then(|c| c.get("name"))
            .and_then(Value::as_str)
        {
            self.chat.set_client(name);
        }
        let apps = declares_apps(&capabilities);
        self.apps.store(apps, Ordering::SeqCst);
        *lock(&self.version) = Some(version);
        let mut capabilities = self.server.capabilities(apps);
        capabilities["logging"] = json!({});
        // A task's session is told it browses in a browser of its own (ERR-6).
        let browser = self.server.tools.browser();
        let id = self.chat.id();
        let instructions = if browser.kind(id) == ConversationKind::Task {
            format!("{BROWSER_HINT} {}", errand_prompt(browser.errand_lends(id)))
        } else {
            BROWSER_HINT.to_owned()
        };
        json!({
            "protocolVersion": version,
            "capabilities": capabilities,
            "serverInfo": { "name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION") },
            "instructions": instructions,
        })
    }
}

/// Whether client `capabilities` declare the MCP Apps extension with its MIME type.
pub(super) fn declares_apps(capabilities: &Value) -> bool {
    capabilities
        .get("extensions")
        .and_then(|e| e.get(APPS_EXTENSION))
        .and_then(|ui| ui.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t == APP_MIME))
}
