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

/// The note for a task, which browses in a browser of its own (ERR-1, ERR-3, ERR-4).
pub const ERRAND_NOTE: &str = "This task browses in a browser of its own: it starts signed out except on the sites the person always allows, and a site's sign-in is lent only when the person allows that site when asked.";

/// The note for a task beside the person's own Chrome (ERR-6).
pub const ERRAND_OWN_CHROME_NOTE: &str = "This task browses in Conch's own browser, signed in nowhere: nothing is copied from the person's own Chrome, so sign in with a handoff where a site needs it.";

/// The errand's line in a task's prompt (ERR-6): whether sign-ins can be lent to it
/// (`lends`), or it runs beside the person's own Chrome, signed in nowhere.
pub fn errand_prompt(lends: bool) -> &'static str {
    if lends {
        ERRAND_NOTE
    } else {
        ERRAND_OWN_CHROME_NOTE
    }
}

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
