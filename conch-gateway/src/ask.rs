//! Who answers questions in the gateway (AMB-5): nobody yet (no panel), or No at once
//! with `--unattended`; with `--ask-via-mcp`, the site question, reduced to This chat /
//! No, goes to the MCP client when the client supports elicitation: as an elicitation
//! request of the server's in the old era, inside the call's own `input_required`
//! result in the new era (MRTR, conch-tools' `mcp`).
//!
//! Deliberately absent: Always, high stakes, uploads and downloads never go through
//! elicitation (the MCP client may be the agent's own host answering for itself).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use conch_tools::{Answer, AskRequest, Asker, BoxFuture, Choice};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

/// Sends a request to an MCP client and waits for its response.
pub(crate) trait ClientChannel: std::fmt::Debug + Send + Sync {
    /// Sends `method` with `params`; the client's `result`, or `None` on error or
    /// disconnect.
    fn request(&self, method: &str, params: Value) -> BoxFuture<'_, Option<Value>>;
}

/// The way from the server to one MCP client: the lines it sends (stdout, or a session's
/// GET event stream over HTTP, which the client may open and reopen), and the server's
/// requests waiting for the client's responses.
#[derive(Debug)]
pub(crate) struct Outbound {
    sink: Mutex<Option<mpsc::UnboundedSender<String>>>,
    pending: Mutex<HashMap<i64, oneshot::Sender<Option<Value>>>>,
    next_id: AtomicI64,
    /// The client is gone: no answer can come any more.
    closed: AtomicBool,
}

impl Outbound {
    /// A way to a client, writing to `sink` (or nowhere until [`Outbound::set_sink`]).
    pub(crate) fn new(sink: Option<mpsc::UnboundedSender<String>>) -> Outbound {
        Outbound {
            sink: Mutex::new(sink),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
            closed: AtomicBool::new(false),
        }
    }

    /// Writes from now on to `sink`; the previous one, if any, is dropped (its stream
    /// ends).
    pub(crate) fn set_sink(&self, sink: mpsc::UnboundedSender<String>) {
        *self.sink.lock().unwrap_or_else(PoisonError::into_inner) = Some(sink);
    }

    /// Sends one message (a notification); false when nothing carries it.
    pub(crate) fn send(&self, message: &Value) -> bool {
        self.sink
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_some_and(|sink| sink.send(message.to_string()).is_ok())
    }

    /// Delivers a client's response to the request waiting for it; false when no
    /// request waits for it.
    pub(crate) fn deliver(&self, message: &Value) -> bool {
        let Some(id) = message.get("id").and_then(Value::as_i64) else {
            return false;
        };
        let waiting = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        match waiting {
            Some(tx) => {
                let _ = tx.send(message.get("result").cloned());
                true
            }
            None => false,
        }
    }

    /// The client is gone: the questions waiting for it get no answer (No), and later
    /// ones are not sent.
    pub(crate) fn close(&self) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        self.closed.store(true, Ordering::SeqCst);
        pending.clear();
        self.sink
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

impl ClientChannel for Outbound {
    fn request(&self, method: &str, params: Value) -> BoxFuture<'_, Option<Value>> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            if self.closed.load(Ordering::SeqCst) {
                return Box::pin(async { None });
            }
            pending.insert(id, tx);
        }
        let sent =
            self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        if !sent {
            self.pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&id);
        }
        // Whoever stops waiting (the answer's timeout, a cancelled call) drops the
        // future, and with it the entry: a question never answered leaves nothing behind.
        let forget = ForgetOnDrop { outbound: self, id };
        Box::pin(async move {
            let _forget = forget;
            if !sent {
                return None;
            }
            rx.await.ok().flatten()
        })
    }
}

/// Removes a request's waiting entry when its future ends or is dropped unanswered.
struct ForgetOnDrop<'a> {
    outbound: &'a Outbound,
    id: i64,
}

impl Drop for ForgetOnDrop<'_> {
    fn drop(&mut self) {
        self.outbound
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

/// The MCP clients that said they answer elicitation, by conversation.
pub(crate) type Channels = Arc<Mutex<HashMap<String, Arc<dyn ClientChannel>>>>;

/// The `--ask-via-mcp` asker: elicitation for the site question, `fallback` otherwise.
#[derive(Debug)]
pub(crate) struct ElicitAsker {
    pub(crate) fallback: Arc<dyn Asker>,
    pub(crate) channels: Channels,
}

/// How long the client has to answer (AMB-5: no answer means No).
const ANSWER_WITHIN: Duration = Duration::from_secs(600);

impl Asker for ElicitAsker {
    fn ask<'a>(&'a self, request: &'a AskRequest) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            // A new-era call whose client answers (MRTR) asks inside its own result;
            // an old-era client gets an elicitation request of the server's.
            let modern = conch_tools::client_answers_here();
            let channel = self
                .channels
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(&request.conversation)
                .cloned()
                .filter(|_| !modern);
            let Some(question) = request.question.for_elicitation() else {
                return self.fallback.ask(request).await;
            };
            if channel.is_none() && !modern {
                return self.fallback.ask(request).await;
            }
            let labels: Vec<&str> = question.choices().iter().map(|c| c.label()).collect();
            let params = json!({
                "message": question.text(),
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "answer": { "type": "string", "title": "Your answer", "enum": labels }
                    },
                    "required": ["answer"]
                }
            });
            let asked = async {
                match &channel {
                    Some(channel) => channel.request("elicitation/create", params).await,
                    None => conch_tools::ask_client("elicitation/create", params).await,
                }
            };
            let answer = tokio::time::timeout(ANSWER_WITHIN, asked)
                .await
                .ok()
                .flatten();
            let chosen = answer.as_ref().and_then(|result| {
                (result["action"] == "accept")
                    .then(|| result["content"]["answer"].as_str())
                    .flatten()
            });
            match chosen {
                Some(label) if label == Choice::ThisChat.label() => {
                    Answer::Person(Choice::ThisChat)
                }
                _ => Answer::Person(Choice::No),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;
    use tokio::sync::mpsc;

    use super::{ClientChannel, Outbound};

    #[tokio::test]
    async fn issue_12_an_unanswered_elicitation_leaves_no_pending_entry() {
        let (sink, mut sent) = mpsc::unbounded_channel();
        let outbound = Outbound::new(Some(sink));
        let waited = tokio::time::timeout(
            Duration::from_millis(50),
            outbound.request("elicitation/create", json!({})),
        )
        .await;
        assert!(waited.is_err(), "the client never answers");
        assert!(sent.recv().await.is_some(), "the question was sent");
        assert!(
            outbound.pending.lock().expect("lock").is_empty(),
            "the timed-out question is still pending"
        );
    }
}
