//! Who answers questions in the gateway (AMB-5): nobody yet (no panel), or No at once
//! with `--unattended`; with `--ask-via-mcp`, the site question, reduced to This chat /
//! No, goes to the MCP client as an elicitation request when the client supports it.
//!
//! Deliberately absent: Always, high stakes, uploads and downloads never go through
//! elicitation (the MCP client may be the agent's own host answering for itself).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use conch_tools::{Answer, AskRequest, Asker, BoxFuture, Choice};
use serde_json::{Value, json};

/// Sends a request to an MCP client and waits for its response.
pub(crate) trait ClientChannel: std::fmt::Debug + Send + Sync {
    /// Sends `method` with `params`; the client's `result`, or `None` on error or
    /// disconnect.
    fn request(&self, method: &str, params: Value) -> BoxFuture<'_, Option<Value>>;
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
            let channel = self
                .channels
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(&request.conversation)
                .cloned();
            let (Some(channel), Some(question)) = (channel, request.question.for_elicitation())
            else {
                return self.fallback.ask(request).await;
            };
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
            let answer =
                tokio::time::timeout(ANSWER_WITHIN, channel.request("elicitation/create", params))
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
