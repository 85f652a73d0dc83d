//! What the engine's prompt says about the browser (TOOL-8, TOOL-9): the one-line hint for
//! engines that have the tools, and the "you can't browse" note for a bridge engine that
//! was offered none.
//!
//! Deliberately absent: any mention of the browser to an engine without host tools.

/// What an engine can do (the `EngineCaps` interface).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EngineCaps {
    /// The engine runs host tools (MCP or native tools).
    pub host_tools: bool,
    /// The engine takes bridged function tools.
    pub bridged: bool,
    /// The engine can see images.
    pub vision: bool,
}

/// The hint for an engine that has the browser tools (TOOL-9).
pub const BROWSER_HINT: &str = "You have a real web browser through the browser_ tools: browser_form fills many fields in one step, and browser_read takes `part` to read long pages piece by piece.";

/// The note for a bridge engine that was offered no browser tools (TOOL-8).
pub const NO_BROWSER_NOTE: &str = "You can't browse the web in this conversation.";

/// The browser's line in the engine's prompt, if any: the hint when the tools are offered,
/// the note when a bridge engine is not offered them, nothing for an engine without host
/// tools (TOOL-8).
pub fn browser_prompt(caps: EngineCaps, browser_available: bool) -> Option<&'static str> {
    let offered = browser_available && (caps.host_tools || caps.bridged);
    if offered {
        Some(BROWSER_HINT)
    } else if caps.bridged {
        Some(NO_BROWSER_NOTE)
    } else {
        None
    }
}
