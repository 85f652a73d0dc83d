//! `conch-gateway mcp`: the MCP door on stdin and stdout, one JSON-RPC message per line.
//! The process is one MCP session, so one conversation.
//!
//! Both protocol eras are served on the one process (conch-tools' `mcp` tells them
//! apart by each request's `_meta`): an old-era client's `initialize` and a new-era
//! client's `server/discover` or `_meta`-carrying requests alike; either way the
//! process is one conversation, with no handle.
//!
//! A line may hold a JSON-RPC batch (an array), answered as the session's agreed protocol
//! version says. Requests run as tasks of their own, so a tool call waiting for an elicitation answer
//! does not stop the answer from being read; conch-tools still runs one call at a time
//! per conversation. Only JSON-RPC goes to stdout.
//!
//! Deliberately absent: logging to stdout.

use std::sync::{Arc, PoisonError};

use conch_tools::McpSession;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::ask::{Channels, Outbound};
use crate::live::Leaving;

/// The conversation id of the stdio session.
pub(crate) const STDIO_CONVERSATION: &str = "mcp-stdio";

/// Serves `session` until stdin closes or `stop` resolves (SIGTERM, SIGINT). A stop
/// gives the calls in flight [`GRACE`](crate::stop::GRACE) to finish, then ends them.
/// Stdin closing is the client gone: a handoff or question waiting for it ends at once
/// (`leaving`), so the process exits with its browser instead of waiting for no one.
pub(crate) async fn serve(
    session: McpSession,
    channels: Option<Channels>,
    leaving: &Leaving,
    stop: impl Future<Output = ()>,
) {
    let mut stop = std::pin::pin!(stop);
    let mut stopped = false;
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = rx.recv().await {
            if stdout.write_all(line.as_bytes()).await.is_err()
                || stdout.write_all(b"\n").await.is_err()
                || stdout.flush().await.is_err()
            {
                return;
            }
        }
    });
    let outbound = Arc::new(Outbound::new(Some(tx.clone())));
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        let line = tokio::select! {
            line = lines.next_line() => line,
            () = &mut stop => {
                stopped = true;
                break;
            }
        };
        let Ok(Some(line)) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let message: Value = match serde_json::from_str(&line) {
            Ok(message) => message,
            Err(_) => {
                let error = json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32700, "message": "Parse error" } });
                let _ = tx.send(error.to_string());
                continue;
            }
        };
        let message = match message {
            // Responses inside a batch go to the requests waiting for them; the rest of
            // the batch is the session's (which refuses it whole when the agreed version
            // has no batches).
            Value::Array(batch) if session.accepts_batches() => {
                let rest: Vec<Value> = batch
                    .into_iter()
                    .filter(|m| m.get("method").is_some() || !outbound.deliver(m))
                    .collect();
                if rest.is_empty() {
                    continue;
                }
                Value::Array(rest)
            }
            message => message,
        };
        if message.get("method").is_none() && outbound.deliver(&message) {
            continue;
        }
        let is_initialize = message.get("method").and_then(Value::as_str) == Some("initialize");
        let session = session.clone();
        let tx = tx.clone();
        let channels = channels.clone();
        let outbound = Arc::clone(&outbound);
        tasks.spawn(async move {
            let notes = tx.clone();
            let notify = move |note: Value| {
                let _ = notes.send(note.to_string());
            };
            let answer = session.handle_notifying(&message, &notify).await;
            if is_initialize
                && session.client_elicits()
                && let Some(channels) = channels
            {
                channels
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(session.chat().id().to_owned(), outbound);
            }
            if let Some(answer) = answer {
                let _ = tx.send(answer.to_string());
            }
        });
        // Reap finished tasks as we go.
        while tasks.try_join_next().is_some() {}
    }
    // Stdin closed (or a stop): questions waiting for the client get no answer (No), a
    // handoff or question waiting for the person ends (nobody waits for it any more),
    // then what runs finishes, then writing stops.
    outbound.close();
    leaving.left(session.chat().id());
    // A new-era `subscriptions/listen` waits for its client, which is gone.
    session.stop_listening();
    let finish = async { while tasks.join_next().await.is_some() {} };
    if stopped {
        // Asked to stop: what runs gets a moment, then is dropped with the tasks.
        let _ = tokio::time::timeout(crate::stop::GRACE, finish).await;
    } else {
        finish.await;
    }
    if let Some(channels) = &channels {
        channels
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session.chat().id());
    }
    drop(tx);
    drop(outbound);
    let _ = writer.await;
}
