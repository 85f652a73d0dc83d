//! Who answers a page's own dialog, and how (DLG-2, DLG-4, DLG-5, DLG-6, DLG-8, DLG-10,
//! DLG-11, AMB-19).
//!
//! | dialog | agent's step on this tab | the person drives | nobody (between steps) |
//! |---|---|---|---|
//! | alert | OK, words to the agent | the person | OK |
//! | confirm | permit (Cancel in Plan only) | the person | Cancel |
//! | prompt | Cancel, never typed into | the person | Cancel |
//! | "Leave site?" | leave | the person | stay |
//!
//! A dialog on a tab the step isn't acting on follows the between-steps rule; watching is
//! not driving (AMB-19). A dialog left waiting when the person hands back, or when the
//! page closes, gets Cancel (DLG-10).

use serde::Serialize;

use crate::permit::Mode;

/// The four kinds of page dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DialogKind {
    /// A message with OK.
    Alert,
    /// A question with OK and Cancel.
    Confirm,
    /// The page's own text box.
    Prompt,
    /// "Leave site?"
    BeforeUnload,
}

/// Who drives the tab when the dialog appears.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Driver {
    /// An agent step that acts on this tab.
    AgentStep,
    /// The person, in takeover.
    Person,
    /// Nobody: between steps, an agent step on another tab, or only watching.
    Nobody,
}

/// How a dialog is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DialogAnswer {
    /// OK, or leave.
    Accept,
    /// Cancel, or stay.
    Dismiss,
    /// Run the permission rule with [`ActKind::PageConfirm`](crate::ActKind::PageConfirm):
    /// accept on Allow (after any question is answered yes), dismiss otherwise (DLG-6).
    Permit,
    /// Publish it to the person's panel and wait for their answer (DLG-9).
    Person,
}

/// How a dialog is answered, by who drives and the conversation's mode.
pub fn dialog_answer(kind: DialogKind, driver: Driver, mode: Mode) -> DialogAnswer {
    match (driver, kind) {
        (Driver::Person, _) => DialogAnswer::Person,
        (Driver::AgentStep, DialogKind::Alert | DialogKind::BeforeUnload) => DialogAnswer::Accept,
        (Driver::AgentStep, DialogKind::Prompt) => DialogAnswer::Dismiss,
        (Driver::AgentStep, DialogKind::Confirm) => {
            if mode == Mode::PlanOnly {
                DialogAnswer::Dismiss
            } else {
                DialogAnswer::Permit
            }
        }
        (Driver::Nobody, DialogKind::Alert) => DialogAnswer::Accept,
        (Driver::Nobody, DialogKind::Confirm | DialogKind::Prompt | DialogKind::BeforeUnload) => {
            DialogAnswer::Dismiss
        }
    }
}

/// The answer for a dialog still waiting when the person hands back or the page closes
/// (DLG-10).
pub const ON_HAND_BACK: DialogAnswer = DialogAnswer::Dismiss;
