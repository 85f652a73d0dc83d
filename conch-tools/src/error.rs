//! Why a tool call did not do what it was asked: [`ToolError`]. Every message is one plain
//! sentence that names the next step (TOOL-15), and none carries the gateway's address
//! (NET-10), a typed value or a file's contents.

use conch_browser::BrowserError;
use conch_policy::Refusal;

/// A refusal or failure, as the agent reads it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// No tool has that name.
    #[error("There is no tool called {0}; use one of the browser_ tools listed.")]
    UnknownTool(String),
    /// The arguments don't fit the tool's schema.
    #[error("The arguments for {tool} don't fit ({detail}); call it again as its schema says.")]
    BadArguments {
        /// The tool.
        tool: String,
        /// What serde said.
        detail: String,
    },
    /// A rule refused (Plan only, a secret field, an upload rule, a scheme, an address).
    #[error("{0}")]
    Refused(Refusal),
    /// The person said no, or closed the question.
    #[error("The person declined: {question} Don't try again unless they ask you to.")]
    Declined {
        /// The question they were asked.
        question: String,
    },
    /// No one could answer the question; the sentence says how to allow it.
    #[error("{0}")]
    Unanswered(String),
    /// The address can't be read.
    #[error("“{0}” is not a web address; give a full one, like https://example.com.")]
    BadAddress(String),
    /// No page is open in this conversation.
    #[error("No page is open yet; open one with browser_open.")]
    NoPage,
    /// The ref is not on the page (any more).
    #[error("Ref {0} is not on the page any more; call browser_read for fresh refs.")]
    StaleRef(String),
    /// The page's part does not exist.
    #[error("The page has {parts} part(s); ask for a part between 1 and {parts}.")]
    NoSuchPart {
        /// How many parts there are.
        parts: usize,
    },
    /// browser_tabs misses an argument.
    #[error("{0}")]
    Usage(String),
    /// The page reading and acting layer can't do this yet.
    #[error(
        "Conch can't act on refs in this build yet; use browser_read and browser_screenshot, or call browser_handoff."
    )]
    NotAvailable,
    /// The act could not be done on the page; the sentence says why and what next.
    #[error("{0}")]
    Act(String),
    /// The browser failed; its sentence says what to do (LAUNCH-16).
    #[error("{0}")]
    Browser(#[from] BrowserError),
    /// A script of the page's own keeps it from answering (SNAP-12).
    #[error(
        "The page did not answer within {seconds} s: a script of its own is keeping it busy. Wait, or open another page."
    )]
    Busy {
        /// How long Conch waited.
        seconds: u64,
    },
    /// The person pressed Stop while the call ran or waited (LIVE-14).
    #[error("Stopped: the person pressed Stop, so end your turn here.")]
    Stopped,
    /// A page script or DevTools answer was not as expected.
    #[error("The page did not answer as expected ({0}); call browser_read and try again.")]
    Page(String),
}

impl From<Refusal> for ToolError {
    fn from(refusal: Refusal) -> Self {
        ToolError::Refused(refusal)
    }
}
