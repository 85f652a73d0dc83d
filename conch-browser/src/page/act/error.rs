//! Why an act could not be done: one sentence a model can act on, naming the next step.

use conch_cdp::Error as CdpError;

use crate::page::PageError;
use crate::page::input::InputError;

/// Why an act could not be done: one sentence naming the next step.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ActError {
    /// The element left the page.
    #[error("{reference} is gone from the page; read the page again.")]
    Gone {
        /// The ref.
        reference: String,
    },
    /// Not visible within the bound.
    #[error(
        "{what} ({reference}) did not become visible within {seconds} s; it may be inside a closed menu or tab: read the page again."
    )]
    Hidden {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
        /// The bound.
        seconds: u64,
    },
    /// Hidden inside something closed that a control opens (issue 11, class 2).
    #[error("{what} ({reference}) is inside the closed “{closed}”; click that first ({control}).")]
    Closed {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
        /// The words of what opens it ("Menu").
        closed: String,
        /// That control, as the agent can act on it: "the button “Menu”, ref e4".
        control: String,
    },
    /// Disabled through the bound.
    #[error(
        "{what} ({reference}) is disabled; the page may want something else done first: read it again."
    )]
    Disabled {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
    },
    /// Still moving at the bound.
    #[error("{what} ({reference}) kept moving; wait with browser_wait and try again.")]
    Moving {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
    },
    /// Something else is on top at the click point (GES-7).
    #[error("{blocker} covers it; close or answer it first.")]
    Covered {
        /// The blocker, as "A dialog “Cookie settings”".
        blocker: String,
    },
    /// Scrolling did not bring it where a pointer can reach.
    #[error("{what} ({reference}) can't be reached by the pointer; read the page again.")]
    Unreachable {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
    },
    /// The page moved the focus away from the field before the text went in.
    #[error(
        "The page moved the focus away from {what} ({reference}) before Conch typed, so nothing was typed; read the page and try again."
    )]
    FocusMoved {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
    },
    /// The page moved the focus away from a secret field in the middle of its fill: the
    /// fill stopped before the next key, so nothing went anywhere else (SEC-2, issue 29).
    #[error(
        "The page moved the focus away from {what} ({reference}) while Conch was filling it from Passwords, so the fill stopped there and nothing went anywhere else; the field holds only part of the password. Read the page and call browser_handoff so the person signs in."
    )]
    FillStopped {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
    },
    /// Text into something that is not a text field.
    #[error("{what} ({reference}) is not a text field; use browser_click or browser_select.")]
    NotEditable {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
    },
    /// A secret field (SEC-2, SEC-6): the policy's sentence.
    #[error("{0}")]
    Secret(String),
    /// Select on something that is neither a select nor a listbox.
    #[error("{what} ({reference}) is not a list of options; use browser_click.")]
    NotSelect {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
    },
    /// No option matched.
    #[error("No option matches {missing}; the choices are: {choices}.")]
    NoOption {
        /// The values not found, quoted.
        missing: String,
        /// The choices, quoted.
        choices: String,
    },
    /// More than one option for a single-choice list.
    #[error("{what} ({reference}) takes one choice only; pass one value.")]
    OneChoice {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
    },
    /// A key or chord that can't be pressed.
    #[error("{0}")]
    Keys(String),
    /// A rule of conch-policy said no (a point outside the screenshot…).
    #[error("{0}")]
    Refused(String),
    /// A file act went wrong in the page.
    #[error("{0}")]
    Upload(String),
    /// The page's script failed.
    #[error("The page did not let Conch do that ({0}); read the page and try another way.")]
    Script(String),
    /// The page is frozen by its own dialog, which waits for an answer (DLG-14).
    #[error(
        "The page is waiting for an answer to its dialog “{0}”; nothing can be done on it until the dialog is answered."
    )]
    Frozen(String),
    /// The ref could not be resolved (reading's sentence).
    #[error("{}", capitalised(.0))]
    Ref(#[from] PageError),
    /// The browser did not answer.
    #[error("{}", cdp_sentence(.0))]
    Cdp(#[from] CdpError),
}

/// `error` as a sentence: a capital first letter and a full stop.
fn capitalised(error: &PageError) -> String {
    let text = error.to_string();
    let mut chars = text.chars();
    let first = chars
        .next()
        .map(|c| c.to_uppercase().collect::<String>())
        .unwrap_or_default();
    format!("{first}{}.", chars.as_str().trim_end_matches('.'))
}

impl From<InputError> for ActError {
    fn from(e: InputError) -> Self {
        match e {
            InputError::UnknownKey(_) => ActError::Keys(e.to_string()),
            InputError::Cdp(e) => ActError::Cdp(e),
        }
    }
}

/// What a DevTools failure means to the agent. Input the page does not take in time is
/// its own case: the page is busy (a script that never ends) or not drawing, and saying
/// "the browser did not answer" would send the agent to retry at once.
fn cdp_sentence(error: &CdpError) -> String {
    let input = error.method().is_some_and(|m| m.starts_with("Input."));
    match error.kind() {
        conch_cdp::ErrorKind::Timeout { after } if input => format!(
            "The page did not take the input within {} s: it is busy running a script or not drawing, so the act may not have happened. Call browser_read to see the page, then try again.",
            after.as_secs()
        ),
        conch_cdp::ErrorKind::Timeout { after } => format!(
            "The page did not answer within {} s: a script of its own is keeping it busy. Wait, or open another page; nothing was done.",
            after.as_secs()
        ),
        _ => format!("The browser did not answer: {error}; try again."),
    }
}
