//! conch-tools: the agent's side of Conch's browser. Fifteen plain tools, written once,
//! the permit flow every act goes through, and the MCP door.
//!
//! # Embedding it (the library door)
//!
//! A Rust agent drives the browser without MCP: make a [`Tools`] over a
//! [`conch_browser::Browser`] with your own [`Asker`], take a [`Chat`] per conversation,
//! and [`Chat::call`] the tools by name with JSON arguments. `examples/embed.rs` is this,
//! runnable (a test runs it against a fixture page):
//!
//! ```text
//! let browser = Browser::new(BrowserConfig::new(Home::new(dir)));
//! let tools = Tools::new(browser, ToolsConfig::new(Arc::new(MyAsker)));
//! let chat = tools.chat("conversation-1", Mode::Ask);
//! let result = chat.call("browser_open", &json!({ "url": "https://example.com" })).await;
//! println!("{}", result.text());
//! ```
//!
//! # Brief overview
//!
//! - The tools: [`tool_specs`] (names, descriptions, plain input schemas, `readOnlyHint`),
//!   [`bridged_functions`] for API engines (TOOL-1, TOOL-2, TOOL-4, TOOL-5), and
//!   [`ToolCall`] for a parsed call with its [`ToolCall::caption`] (TOOL-6).
//! - The calls: [`Tools`] and [`Chat`], giving a [`ToolResult`] (TOOL-10, TOOL-12,
//!   TOOL-15, TOOL-17), with what it costs ([`ToolResult::cost`], [`ToolResult::spent`])
//!   under the conversation's budget ([`Tools::set_budget`], issue 31).
//! - The person: [`Asker`] (with [`Unattended`] and [`NoOneToAsk`]), [`SecretFiller`],
//!   [`ChatFiles`], [`AutoPolicy`] — the traits the embedder implements.
//! - The MCP door: [`McpServer`] and [`McpSession`], transport-agnostic JSON-RPC.
//! - The prompt: [`browser_prompt`] (TOOL-8, TOOL-9).
//!
//! Deliberately absent: no tool starts a browser of the agent's choosing, reads a file into
//! a result, or runs the agent's script (TOOL-13, TOOL-14); rules live in conch-policy.
#![warn(missing_docs)]

mod call;
mod config;
mod context;
mod cost;
mod embedder;
mod engine;
mod error;
mod live;
mod mcp;
mod permit;
mod prompt;
mod result;
mod spec;
mod state;
mod tool;
mod tools;
mod upload;

pub use call::{Direction, FormField, How, TabAction, ToolCall};
pub use conch_policy::{Choice, Mode, Question, QuestionKind};
pub use config::{DEFAULT_SEARCH_URL, ToolsConfig};
pub use context::{ConversationKind, TaskEvents, TaskState, ToolContext};
pub use cost::{COST_META, Cost, Spent, TOKEN_METHOD, spent_line};
pub use embedder::{
    Answer, AskRequest, Asker, AutoAllows, AutoPolicy, AutoRequest, BoxFuture, ChatFiles,
    ImageDescriber, NoOneToAsk, Notification, Notifier, SecretFiller, SecretRequest, SecretValue,
    TaintGuard, Unattended, WorkFolder, how_to_allow,
};
#[doc(hidden)]
pub use engine::PAGE_WORDS;
pub use error::ToolError;
pub use live::SHOTS_CAP_BYTES;
pub use mcp::app::{self, AppDoor};
pub use mcp::{
    APP_MIME, APPS_EXTENSION, HANDLE_ARG, HEADER_MISMATCH, LEGACY_VERSIONS, LIVE_APP_URI,
    META_CAPABILITIES, META_CLIENT, META_SERVER, META_VERSION, MISSING_CLIENT_CAPABILITY,
    MODERN_VERSION, McpApp, McpServer, McpSession, PROGRESS_EVERY, PROTOCOL_VERSIONS, QUESTION_KEY,
    SERVER_NAME, UNSUPPORTED_PROTOCOL_VERSION, ask_client, client_answers_here,
    client_capabilities, is_modern, unsupported_version,
};
pub use prompt::{
    BROWSER_HINT, ERRAND_NOTE, ERRAND_OWN_CHROME_NOTE, EngineCaps, NO_BROWSER_NOTE, browser_prompt,
    errand_prompt,
};
pub use result::{Content, ToolResult};
pub use spec::{TOOL_NAMES, ToolSpec, bridged_functions, tool_spec, tool_specs};
pub use tool::wait::MAX_WAIT;
pub use tools::{Chat, Tools};
