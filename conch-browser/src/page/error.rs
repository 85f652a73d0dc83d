//! Why reading a page or resolving a ref failed: [`PageError`], one sentence each that
//! names the next step ("ref e12 is gone; read the page again").

/// Why reading a page, resolving a ref or taking a screenshot failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PageError {
    /// The ref's element left the document (or the document changed) since it was read
    /// (SNAP-2). Nothing was done to the page.
    #[error("ref {0} is gone; read the page again")]
    RefGone(String),
    /// No read of this page ever gave that ref, or it is not shaped like one.
    #[error("there is no ref {0} on this page; read the page again and use a ref from it")]
    NoSuchRef(String),
    /// The frame a prefixed ref (`f1e3`) points into is gone.
    #[error("the frame of ref {0} is gone; read the page again")]
    FrameGone(String),
    /// The part asked for is past the last part.
    #[error("there is no part {asked}: the page has {parts} part(s); read part 1 to {parts}")]
    NoSuchPart {
        /// The part asked for.
        asked: usize,
        /// How many parts there are.
        parts: usize,
    },
    /// Conch's reader failed inside the page.
    #[error("reading the page failed ({0}); read the page again")]
    Script(String),
    /// The screenshot could not be decoded or encoded.
    #[error("the screenshot could not be prepared ({0}); try again")]
    Image(String),
    /// A script of the page's own keeps it from answering (a loop that never ends): no
    /// read or script of Conch's can run there until it stops (SNAP-12).
    #[error(
        "the page did not answer within {seconds} s: a script of its own is keeping it busy; wait, or open another page"
    )]
    Busy {
        /// How long Conch waited.
        seconds: u64,
    },
    /// The browser did not answer as expected.
    #[error("the browser did not answer ({0}); try again")]
    Cdp(#[from] conch_cdp::Error),
}

impl PageError {
    /// The failure of one of Conch's own scripts, bounded by
    /// [`PAGE_SCRIPT_TIMEOUT`](super::act::PAGE_SCRIPT_TIMEOUT): running out of time means
    /// the page is busy with a script of its own, not that the browser failed.
    pub fn of_script_call(e: conch_cdp::Error) -> PageError {
        match e.kind() {
            conch_cdp::ErrorKind::Timeout { after } => PageError::Busy {
                seconds: after.as_secs(),
            },
            _ => PageError::Cdp(e),
        }
    }
}
