//! Filling a form in one step (FORM-1, FORM-2): text boxes, selects and lists, checkboxes
//! and radios, each by its element, with one settle at the end.
//!
//! The outcome is partial by design: `(filled, skipped with reasons)`. A secret field and
//! a file box are skipped and named (the person or browser_upload fills those); a ref that
//! could not be resolved is skipped and named.
//!
//! Deliberately absent: sending the form. No Enter, no click on a submit control, no
//! `requestSubmit`: the form's own button is the agent's next click, judged like any other.

use serde_json::Value;

use super::Element;
use super::act::{self, ActError, ActOptions, Desc, Done};
use super::input::{self, Press};
use super::settle::Settle;
use conch_cdp::Session;

/// One field to fill: its ref, the element reading resolved it to (or why it could not),
/// and the value (text; an option's label or value; `true`/`false` for a checkbox or a
/// radio).
#[derive(Debug, Clone)]
pub struct FormField {
    /// The ref the agent gave.
    pub reference: String,
    /// The element, or the sentence saying why the ref could not be resolved.
    pub element: Result<Element, String>,
    /// The value.
    pub value: String,
}

/// A field left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The ref.
    pub reference: String,
    /// Why, as a sentence.
    pub reason: String,
}

/// What filling did.
#[derive(Debug, Clone)]
pub struct FormOutcome {
    /// The refs filled.
    pub filled: Vec<String>,
    /// The refs skipped, with the reason.
    pub skipped: Vec<Skipped>,
    /// The one settle after all of it.
    pub done: Done,
}

fn truth(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "checked" | "1" => Some(true),
        "false" | "no" | "off" | "unchecked" | "0" => Some(false),
        _ => None,
    }
}

/// Fills the fields named by ref (`(ref, value)`), resolving each through reading's
/// [`resolve`](super::resolve): a ref that is gone or unknown is skipped and named.
///
/// # Errors
/// As [`fill`].
pub async fn fill_refs(
    page: &Session,
    fields: &[(String, String)],
    options: &ActOptions,
) -> Result<FormOutcome, ActError> {
    let mut resolved = Vec::with_capacity(fields.len());
    for (reference, value) in fields {
        let element = act::element(page, reference)
            .await
            .map_err(|e| e.to_string());
        resolved.push(FormField {
            reference: reference.clone(),
            element,
            value: value.clone(),
        });
    }
    fill(page, &resolved, options).await
}

/// Fills `fields` of the page `page`, never sending the form.
///
/// # Errors
/// Only a DevTools failure of the page itself; a field that fails is skipped and named.
pub async fn fill(
    page: &Session,
    fields: &[FormField],
    options: &ActOptions,
) -> Result<FormOutcome, ActError> {
    let settle = Settle::begin(page).await;
    let mut filled = Vec::new();
    let mut skipped = Vec::new();
    for field in fields {
        let skip = |reason: String| Skipped {
            reference: field.reference.clone(),
            reason,
        };
        let el = match &field.element {
            Ok(el) => el,
            Err(reason) => {
                skipped.push(skip(reason.clone()));
                continue;
            }
        };
        match fill_one(el, &field.value, options).await {
            Ok(()) => filled.push(field.reference.clone()),
            Err(Fault::Skip(reason)) => skipped.push(skip(reason)),
            Err(Fault::Act(ActError::Cdp(e))) if e.is_closed() => return Err(ActError::Cdp(e)),
            Err(Fault::Act(e)) => skipped.push(skip(e.to_string())),
        }
    }
    let settled = settle.finish(options.settle).await;
    Ok(FormOutcome {
        filled,
        skipped,
        done: Done {
            settled,
            through_dialog: false,
            at: None,
        },
    })
}

enum Fault {
    Skip(String),
    Act(ActError),
}

impl From<ActError> for Fault {
    fn from(e: ActError) -> Self {
        Fault::Act(e)
    }
}

impl From<input::InputError> for Fault {
    fn from(e: input::InputError) -> Self {
        Fault::Act(e.into())
    }
}

async fn fill_one(el: &Element, value: &str, options: &ActOptions) -> Result<(), Fault> {
    let desc: Desc = act::describe(&el.frame, &el.object_id, &el.reference).await?;
    let what = desc.what_capital();
    let r = &el.reference;
    if desc.is_secret() {
        return Err(Fault::Skip(format!(
            "{what} ({r}) is a password, code or card field: Conch never types into it; the person fills it (browser_handoff)."
        )));
    }
    if desc.tag == "input" && desc.input_type == "file" {
        return Err(Fault::Skip(format!(
            "{what} ({r}) is a file box: put files into it with browser_upload."
        )));
    }
    if desc.disabled {
        return Err(Fault::Skip(format!("{what} ({r}) is disabled.")));
    }
    if desc.role == "checkbox" || desc.role == "radio" {
        let Some(want) = truth(value) else {
            return Err(Fault::Skip(format!(
                "{what} ({r}) takes true or false, not “{value}”."
            )));
        };
        if desc.checked == Some(want) {
            return Ok(());
        }
        if desc.role == "radio" && !want {
            return Err(Fault::Skip(format!(
                "{what} ({r}) can't be unset by itself; pick another option of its group."
            )));
        }
        let (at, _) = act::actionable_point(el, options, true).await?;
        input::click(&el.page, at, Press::Left).await?;
        return Ok(());
    }
    if desc.tag == "select" {
        let answer = act::call_on(
            &el.frame,
            &el.object_id,
            act::SELECT_SCRIPT,
            &[Value::Array(vec![Value::String(value.to_owned())])],
            r,
        )
        .await?;
        if answer.get("picked").is_some() {
            return Ok(());
        }
        return Err(Fault::Skip(format!(
            "{what} ({r}) has no option “{value}”."
        )));
    }
    if desc.editable {
        act::focus(el, options).await?;
        act::replace_text_in(el, value).await?;
        return Ok(());
    }
    Err(Fault::Skip(format!(
        "{what} ({r}) is not a form field Conch can fill; use browser_click or browser_select."
    )))
}
