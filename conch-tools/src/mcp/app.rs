//! The live view inline in the chat (MCP Apps, issue 31): the app-only tools the view at
//! `ui://conch/live` calls through its host, and the grant that lets only the person use
//! them.
//!
//! The view talks to the gateway only through the host's `tools/call`; these tools are
//! listed only to a client that declared the MCP Apps extension, each with
//! `_meta.ui.visibility: ["app"]`, so the host keeps them from the model. That alone
//! would trust the host, so Conch itself refuses them from anyone but the person: every
//! tool but [`SIGN_IN`] needs a grant, and the only way to a grant is a one-time sign-in
//! code of the panel's (the link `conch-gateway` printed, or `conch-gateway signin`),
//! exactly as the panel signs the person in. A grant is 256 random bits, given only in
//! the sign-in's `structuredContent` (which a host gives the view, not the model), and
//! bound to the conversation whose session signed in: used from another conversation it
//! is refused, and nothing acts. What the person types goes to the page and never into a
//! result, a log or an event (SEC-7).
//!
//! A grant lives as long as the panel sign-in its code made ([`AppDoor::still_signed_in`]
//! on every use): it ends when the person signs out of the panel, and when it went unused
//! for the panel's idle time (the panel's rule and duration, not one of its own); then
//! every tool answers [`REFUSED_SIGNED_OUT`], and the view asks for a new code.
//!
//! Over new-era HTTP (MCP 2026-07-28), a conversation is a handle passed as an argument:
//! the view learns it from the result that opened it (`_meta["dev.conch/conversation"]`)
//! and passes it with every call, so each tool's schema takes it too (the HTTP door reads
//! it; a grant of one handle's conversation used with another's is refused).
//!
//! The embedder says what the tools do with an [`AppDoor`] (conch-panel's bridges them to
//! the live view and the question cards the panel shows).
//!
//! Deliberately absent: anything the model may call; a client without the extension
//! sees none of these tools, and a call to one is an unknown tool to it.

use std::fmt;
use std::sync::{Arc, Mutex as StdMutex};

use conch_browser::sync::lock;
use serde_json::{Value, json};

use crate::embedder::BoxFuture;

/// The app-only tool that signs the person in with a one-time code: `{code}`, the code or
/// the whole sign-in link.
pub const SIGN_IN: &str = "live_sign_in";
/// The app-only tool that gives the newest frame, cursor, caption, status and cards:
/// `{grant, after?}`.
pub const LOOK: &str = "live_look";
/// The app-only tool with which the person takes over: `{grant}`.
pub const TAKE_OVER: &str = "live_take_over";
/// The app-only tool that sends the person's pointer, keys or text while they hold the
/// wheel: `{grant, input}`.
pub const INPUT: &str = "live_input";
/// The app-only tool with which the person hands back ("I'm done"): `{grant}`.
pub const HAND_BACK: &str = "live_hand_back";
/// The app-only tool that answers a question card: `{grant, id, choice}`.
pub const ANSWER: &str = "live_answer";

/// Every app-only tool, in the order `tools/list` gives them.
pub const APP_ONLY_TOOLS: [&str; 6] = [SIGN_IN, LOOK, TAKE_OVER, INPUT, HAND_BACK, ANSWER];

/// What a call without a good grant answers: the model's, or anyone's but the signed-in
/// person's.
pub const REFUSED_WITHOUT_GRANT: &str = "Refused: this tool is the live view's, for the person after they sign in there; an agent can't use it, and nothing was done. To let the person act, call browser_handoff.";

/// What a grant of another conversation's view answers.
pub const REFUSED_OTHER_CONVERSATION: &str = "Refused: this sign-in belongs to another conversation's live view, and nothing was done. Sign in again in this conversation's view.";

/// What a grant whose sign-in ended answers: the person signed out of the panel, or the
/// view went unused for the panel's idle time.
pub const REFUSED_SIGNED_OUT: &str = "Refused: the person signed out of Conch's panel, or this live view went unused past the panel's idle time, and nothing was done. Sign in here again with a new link from `conch-gateway signin`.";

/// What an app-only tool called over new-era HTTP without its conversation's handle
/// answers (the door starts no conversation for it, and the code is not used up).
pub const NEEDS_HANDLE: &str = "Refused: here the live view needs its conversation's handle (the conversation the result that opened it names), and nothing was done. Open the view again from one of the agent's results.";

/// What a sign-in with a code that doesn't work answers.
pub const CODE_REFUSED: &str = "That sign-in code doesn't work: it was used already or is older than 10 minutes. Run `conch-gateway signin` for a new link and paste it here.";

/// What input answers while the agent holds the wheel.
pub const TAKE_OVER_FIRST: &str =
    "Take over first: keys and text go to the page only while you hold the wheel.";

/// The most grants kept at once; a newer one pushes out the oldest.
const GRANTS_KEPT: usize = 64;

/// What the inline live view does, the embedder's: the panel's sign-in, its live view and
/// its question cards for one conversation at a time.
pub trait AppDoor: fmt::Debug + Send + Sync {
    /// Uses one of the panel's one-time sign-in codes for `conversation`'s view: the new
    /// sign-in's id when it worked (the code is used up), which only the grant keeps.
    fn sign_in(&self, conversation: &str, code: &str) -> Option<String>;
    /// Whether the sign-in `id` still holds (the person has not signed out of the panel,
    /// and it was used within the panel's idle time), marking it used now.
    fn still_signed_in(&self, id: &str) -> bool;
    /// The newest look at `conversation`'s view: waits a little for a frame newer than
    /// frame number `after`. A JSON object: `seq`, `frame` (base64 JPEG when newer than
    /// `after`, else null), `cursor`, `caption`, `status`, `browser` (the newest
    /// `browser.status` that said the browser is away, as the panel hears it, with its
    /// number `told`, and `away` while it did not run again and no frame came since;
    /// null before any), `cards`.
    fn look<'a>(&'a self, conversation: &'a str, after: u64) -> BoxFuture<'a, Value>;
    /// Runs one live-protocol command of the person's (`takeover`, `handback`,
    /// `pointer`, `key`, `text`, `size`) in `conversation`'s view: the events for the
    /// person (never quoting what they typed).
    fn command<'a>(&'a self, conversation: &'a str, command: Value) -> BoxFuture<'a, Vec<Value>>;
    /// Whether the person holds `conversation`'s wheel now.
    fn person_drives(&self, conversation: &str) -> bool;
    /// The person's answer `choice` to card `id` of `conversation`: one sentence why not.
    fn answer(&self, conversation: &str, id: &str, choice: &str) -> Result<(), String>;
}

/// One grant the person got: its secret, its conversation, the door's sign-in that made
/// it, and whether that sign-in ended (kept, so the view keeps hearing why).
struct Grant {
    secret: String,
    conversation: String,
    sign_in: String,
    ended: bool,
}

/// The inline view's door and the grants the person got. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Inline {
    door: Arc<dyn AppDoor>,
    /// The grants, oldest first.
    grants: Arc<StdMutex<Vec<Grant>>>,
}

impl fmt::Debug for Inline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the grants.
        f.debug_struct("Inline")
            .field("door", &self.door)
            .finish_non_exhaustive()
    }
}

impl Inline {
    pub(crate) fn new(door: Arc<dyn AppDoor>) -> Inline {
        Inline {
            door,
            grants: Arc::new(StdMutex::new(Vec::new())),
        }
    }

    /// A new grant for `conversation`, made by the door's sign-in `sign_in`.
    fn grant(&self, conversation: &str, sign_in: String) -> String {
        let grant = format!(
            "{}{}",
            super::modern::random_state(),
            super::modern::random_state()
        );
        let mut grants = lock(&self.grants);
        grants.push(Grant {
            secret: grant.clone(),
            conversation: conversation.to_owned(),
            sign_in,
            ended: false,
        });
        let extra = grants.len().saturating_sub(GRANTS_KEPT);
        grants.drain(..extra);
        grant
    }

    /// Whether `args` carry a live grant for `conversation`: the refusal's sentence if
    /// not. A grant whose sign-in ended stays ended, with every other grant of that
    /// sign-in.
    fn check(&self, conversation: &str, args: &Value) -> Result<(), &'static str> {
        let given = args
            .get("grant")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if given.is_empty() {
            return Err(REFUSED_WITHOUT_GRANT);
        }
        let sign_in = {
            let grants = lock(&self.grants);
            let found = grants
                .iter()
                .find(|grant| same(grant.secret.as_bytes(), given.as_bytes()));
            match found {
                Some(grant) if grant.conversation != conversation => {
                    return Err(REFUSED_OTHER_CONVERSATION);
                }
                Some(grant) if grant.ended => return Err(REFUSED_SIGNED_OUT),
                Some(grant) => grant.sign_in.clone(),
                None => return Err(REFUSED_WITHOUT_GRANT),
            }
        };
        if self.door.still_signed_in(&sign_in) {
            return Ok(());
        }
        for grant in lock(&self.grants).iter_mut() {
            if grant.sign_in == sign_in {
                grant.ended = true;
            }
        }
        Err(REFUSED_SIGNED_OUT)
    }

    /// The tool `name`'s call with `args` in `conversation`: a `CallToolResult`.
    async fn run(&self, conversation: &str, name: &str, args: &Value) -> Value {
        if name == SIGN_IN {
            let code = code_of(args.get("code").and_then(Value::as_str).unwrap_or_default());
            let signed = (!code.is_empty())
                .then(|| self.door.sign_in(conversation, code))
                .flatten();
            let Some(sign_in) = signed else {
                tracing::info!(target: "conch_tools", conversation, "an inline live view's sign-in was refused");
                return refused(CODE_REFUSED);
            };
            tracing::info!(target: "conch_tools", conversation, "the person signed in to the inline live view");
            let grant = self.grant(conversation, sign_in);
            return done("Signed in to the live view.", json!({ "grant": grant }));
        }
        if let Err(sentence) = self.check(conversation, args) {
            tracing::info!(target: "conch_tools", conversation, tool = name, "an app-only tool was refused: no live grant of this conversation's");
            let mut answer = refused(sentence);
            if sentence == REFUSED_SIGNED_OUT {
                // For the view: back to its sign-in.
                answer["structuredContent"] = json!({ "signedOut": true });
            }
            return answer;
        }
        match name {
            LOOK => {
                let after = args.get("after").and_then(Value::as_u64).unwrap_or(0);
                let look = self.door.look(conversation, after).await;
                done("The live view's newest frame.", look)
            }
            TAKE_OVER => {
                let events = self
                    .door
                    .command(conversation, json!({ "type": "takeover" }))
                    .await;
                done("You have the wheel.", json!({ "events": events }))
            }
            HAND_BACK => {
                let events = self
                    .door
                    .command(conversation, json!({ "type": "handback" }))
                    .await;
                done("Handed back to the agent.", json!({ "events": events }))
            }
            INPUT => {
                let input = args.get("input").cloned().unwrap_or(Value::Null);
                let kind = input
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !matches!(kind, "pointer" | "key" | "text" | "size") {
                    return refused("Invalid input: send a pointer, key, text or size.");
                }
                if matches!(kind, "key" | "text") && !self.door.person_drives(conversation) {
                    return refused(TAKE_OVER_FIRST);
                }
                let events = self.door.command(conversation, input).await;
                done("Sent.", json!({ "events": events }))
            }
            ANSWER => {
                let id = args.get("id").and_then(Value::as_str).unwrap_or_default();
                let choice = args
                    .get("choice")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                match self.door.answer(conversation, id, choice) {
                    Ok(()) => done("Answered.", json!({ "id": id, "choice": choice })),
                    Err(sentence) => refused(&sentence),
                }
            }
            _ => refused(REFUSED_WITHOUT_GRANT),
        }
    }
}

/// Compares two secrets in time that doesn't depend on where they differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The code in what the person pasted: the code itself, or a sign-in link's `code=`.
fn code_of(pasted: &str) -> &str {
    let pasted = pasted.trim();
    match pasted.split_once("code=") {
        Some((_, rest)) => rest.split(['&', '#']).next().unwrap_or_default(),
        None => pasted,
    }
}

/// A result that did what was asked: `text` for the model (never the data), `data` for
/// the view.
fn done(text: &str, data: Value) -> Value {
    let mut result = json!({ "content": [{ "type": "text", "text": text }], "isError": false });
    result["structuredContent"] = data;
    result
}

/// A refusal: one sentence, and nothing done.
fn refused(sentence: &str) -> Value {
    json!({ "content": [{ "type": "text", "text": sentence }], "isError": true })
}

/// The app-only tools as `tools/list` gives them to a client with the extension; with
/// `handles` (new-era HTTP), each also takes the conversation handle of the result that
/// opened the view (an addition: the arguments before it are unchanged).
pub(super) fn listed(handles: bool) -> Vec<Value> {
    let grant = json!({ "type": "string", "description": "The grant the sign-in gave." });
    let tool = |name: &str, description: &str, mut properties: Value, required: Value| {
        if handles && let Some(properties) = properties.as_object_mut() {
            properties.insert(
                super::HANDLE_ARG.to_owned(),
                json!({ "type": "string", "description": "The conversation handle of the result that opened the view." }),
            );
        }
        json!({
            "name": name,
            "description": description,
            "inputSchema": { "type": "object", "properties": properties, "required": required },
            "_meta": { "ui": { "resourceUri": super::LIVE_APP_URI, "visibility": ["app"] } },
        })
    };
    vec![
        tool(
            SIGN_IN,
            "The live view's: signs the person in with a one-time code. Returns a grant.",
            json!({ "code": { "type": "string" } }),
            json!(["code"]),
        ),
        tool(
            LOOK,
            "The live view's: returns the newest frame, cursor, caption and cards.",
            json!({ "grant": grant, "after": { "type": "integer", "minimum": 0 } }),
            json!(["grant"]),
        ),
        tool(
            TAKE_OVER,
            "The live view's: the person takes over. Returns the status.",
            json!({ "grant": grant }),
            json!(["grant"]),
        ),
        tool(
            INPUT,
            "The live view's: the person's pointer, keys or text. Returns what happened.",
            json!({ "grant": grant, "input": { "type": "object" } }),
            json!(["grant", "input"]),
        ),
        tool(
            HAND_BACK,
            "The live view's: the person hands back. Returns the status.",
            json!({ "grant": grant }),
            json!(["grant"]),
        ),
        tool(
            ANSWER,
            "The live view's: the person answers a question card. Returns the answer.",
            json!({ "grant": grant, "id": { "type": "string" }, "choice": { "type": "string" } }),
            json!(["grant", "id", "choice"]),
        ),
    ]
}

/// A `tools/call` of an app-only tool in `conversation`, when `apps` (the client
/// declared the extension) and the server has the inline view: its `CallToolResult`.
/// `None` for any other call, which goes on as before.
pub(super) async fn call(
    inline: Option<&Inline>,
    apps: bool,
    conversation: &str,
    params: &Value,
) -> Option<Value> {
    let name = params.get("name").and_then(Value::as_str)?;
    let inline = inline.filter(|_| apps && APP_ONLY_TOOLS.contains(&name))?;
    let args = params.get("arguments").cloned().unwrap_or(Value::Null);
    Some(inline.run(conversation, name, &args).await)
}

/// Whether `name` is an app-only tool.
pub fn is_app_only(name: &str) -> bool {
    APP_ONLY_TOOLS.contains(&name)
}

/// Whether the new-era `tools/call` with `params` calls an app-only tool from a client
/// that declared the MCP Apps extension (for an HTTP door, which must then find its
/// conversation by handle, never start one).
pub fn calls_app_only(params: &Value) -> bool {
    params
        .get("name")
        .and_then(Value::as_str)
        .is_some_and(is_app_only)
        && super::legacy::declares_apps(&super::modern::client_capabilities(params))
}
