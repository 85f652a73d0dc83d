//! Acting on a page like a person: trusted input at an element's centre after scrolling it
//! into view (GES-1 … GES-15), and at a point of the last screenshot (click_at).
//!
//! Every pointer act waits, within [`ActOptions::actionable_within`], until its element is
//! visible, stable and enabled, and says which failed (GES-15, AMB-22); a click the page
//! would intercept is not sent and the blocker is named (GES-7). The point and that check
//! run through every frame, nested, scrolled or transformed, of every process (`hit`).
//! After the act the page is left to settle ([`settle`](super::settle)). Input held up
//! behind a dialog the act raised counts as done once the dialog is answered (DLG-13).
//!
//! Each gesture family reads on its own: pointer gestures (`pointer.rs`), the keyboard
//! (`keys.rs`), options (`choose.rs`), scrolling (`scroll.rs`), acting at a point
//! (`point.rs`); what they share is waiting and settling (`ready.rs`), calling the page's
//! scripts (`call.rs`, `js.rs`) and hit testing through frames (`hit.rs`).
//!
//! Deliberately absent: the rules (permission, high stakes) — the tools crate asks
//! conch-policy before calling here; this module only refuses to type into a secret field
//! (SEC-2, SEC-6), as a last guard. No synthetic DOM events for pointer input.

mod call;
mod choose;
mod error;
mod hit;
mod js;
mod keys;
mod point;
mod pointer;
mod ready;
mod scroll;
mod submit;

use std::time::Duration;

use conch_cdp::Session;
use conch_policy::FieldFacts;

use super::Element;
use super::settle::{SettleOptions, Settled};

pub use call::{Commit, PAGE_SCRIPT_TIMEOUT, describe_element, describe_element_in_document};
pub(crate) use call::{Desc, call_on, call_on_handle, describe};
pub use choose::select;
pub use error::ActError;
pub(crate) use js::with_prelude;
pub(crate) use keys::focus;
pub use keys::{fill_secret_in, press, replace_text_in, type_text};
pub use point::{PointHow, click_at, focused, under_point};
pub use pointer::{click, drag};
pub(crate) use ready::actionable_point;
pub use scroll::{scale_point, scroll, viewport};
pub use submit::{focused_submitter, submitter};

/// The script that picks a select's options (shared with form filling).
pub(crate) const SELECT_SCRIPT: &str = js::SELECT;

/// The script that waits for the transitions an act started (shared with settling, which
/// runs it in its own wait, issue 32).
pub(crate) const ANIMATIONS_SCRIPT: &str = js::ANIMATIONS;

/// Bounds of one act.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActOptions {
    /// How long to wait for the element to be visible, stable and enabled (AMB-22: 10 s).
    pub actionable_within: Duration,
    /// How long a covered element may stay covered before the blocker is named.
    pub covered_within: Duration,
    /// Settling after the act.
    pub settle: SettleOptions,
}

impl Default for ActOptions {
    fn default() -> Self {
        ActOptions {
            actionable_within: Duration::from_secs(10),
            covered_within: Duration::from_millis(500),
            settle: SettleOptions::default(),
        }
    }
}

/// What a finished act reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Done {
    /// How the page settled.
    pub settled: Settled,
    /// Whether the act raised a dialog of the page (its note is in the page's
    /// [`DialogWatch`](super::dialog::DialogWatch)).
    pub through_dialog: bool,
    /// Where the pointer acted, in the page's viewport (CSS pixels), for the live view's
    /// cursor (LIVE-5); `None` for an act without the pointer.
    pub at: Option<(f64, f64)>,
}

/// The pointer gesture of browser_click (GES-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// One left click.
    Click,
    /// A double click.
    Double,
    /// A right click (the context menu).
    Right,
    /// The pointer moves over the element; nothing is pressed.
    Hover,
}

/// A scroll direction (GES-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Up.
    Up,
    /// Down.
    Down,
    /// Left.
    Left,
    /// Right.
    Right,
}

impl Direction {
    fn signs(self) -> (f64, f64) {
        match self {
            Direction::Up => (0.0, -1.0),
            Direction::Down => (0.0, 1.0),
            Direction::Left => (-1.0, 0.0),
            Direction::Right => (1.0, 0.0),
        }
    }
}

/// What lies at a point or holds the focus, for the rules to judge (HS-5, SEC-6).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Under {
    /// Its role (`button`, `textbox`, `canvas`…).
    pub role: String,
    /// Its accessible name (page text).
    pub name: String,
    /// Its words (page text, at most 200 characters).
    pub words: String,
    /// Its tag name, lowercase.
    pub tag: String,
    /// Whether it is an editable text field.
    pub editable: bool,
    /// The facts the secrets rule reads, for a field.
    pub field: Option<FieldFacts>,
    /// Whether the secrets rule calls it secret.
    pub secret: bool,
    /// Where it stands, for judging a commit (issue 30): its `href`, form, dialog and the
    /// text near it. Boxed, as a description is held across many awaits.
    pub commit: Box<Commit>,
}

/// What a click at a point did.
#[derive(Debug, Clone, PartialEq)]
pub struct PointDone {
    /// The act.
    pub done: Done,
    /// What was under the point.
    pub under: Under,
    /// Whether `text` was typed.
    pub typed: bool,
}

/// Marks the dialogs open now on `page`'s top frame, and in the frame of `within` (the
/// control about to act) when it is another, so that a later description of a control in
/// a dialog opened since says so ([`Commit::dialog_fresh`], issue 30): the follow-up
/// confirmation an approved act opens is told from one already there, also when both are
/// inside a frame (each frame's world keeps its own marks; a frame never marked tells no
/// dialog as fresh, so its confirmation was asked about again).
///
/// # Errors
/// A DevTools failure, or the page's script time running out.
pub async fn mark_open_dialogs(
    page: &Session,
    within: Option<&Element>,
) -> Result<(), super::PageError> {
    super::evaluate_in_world(page, js::MARK_DIALOGS).await?;
    if let Some(el) = within {
        // Called on the control, the script runs in its frame's world, where the
        // descriptions of that frame's controls look for the marks.
        call::call_on(
            &el.frame,
            &el.object_id,
            &format!("function() {{ return {}; }}", js::MARK_DIALOGS),
            &[],
            &el.reference,
        )
        .await
        .map_err(|e| super::PageError::Script(e.to_string()))?;
    }
    Ok(())
}

/// The centre of `el` in its page's viewport (CSS pixels), for the live view's cursor
/// over a field the agent types in or a list it chooses from (LIVE-5); `None` when it has
/// no box.
pub async fn centre(el: &Element) -> Option<(f64, f64)> {
    let (x, y) = hit::session_point(el).await.ok().flatten()?;
    Some((x + el.offset.0, y + el.offset.1))
}

/// The element behind `reference` on the page `page` (reading's
/// [`resolve`](super::resolve)), for the acts here.
///
/// # Errors
/// [`ActError::Ref`] when the ref is gone or unknown.
pub async fn element(page: &Session, reference: &str) -> Result<Element, ActError> {
    Ok(super::resolve(page, reference).await?)
}
