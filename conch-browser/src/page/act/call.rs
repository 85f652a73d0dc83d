//! Calling the act scripts on an element: their answers, the element's description
//! (role, name, field facts) and the errors a gone element gives.

use conch_cdp::{Error as CdpError, Session};
use conch_policy::{FieldFacts, classify_field};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ActError, Under, js, with_prelude};
use crate::page::Element;

/// An element description as the page scripts return it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Desc {
    pub(crate) gone: bool,
    pub(crate) role: String,
    pub(crate) name: String,
    pub(crate) tag: String,
    #[serde(rename = "type")]
    pub(crate) input_type: String,
    pub(crate) field: bool,
    pub(crate) editable: bool,
    pub(crate) disabled: bool,
    pub(crate) words: String,
    pub(crate) checked: Option<bool>,
    pub(crate) visible: bool,
    pub(crate) stable: bool,
    pub(crate) facts: Facts,
    pub(crate) cross_frame: bool,
    /// Whether what the pointer presses is the element itself, scrolled into view by the
    /// actionability check ([`ACTIONABLE`](super::js::ACTIONABLE) with `inView` only).
    pub(crate) press_self: bool,
    /// The address of the element's own document ([`DESCRIBE`](super::js::DESCRIBE) only).
    pub(crate) document: String,
    /// Where it stands, for judging a commit ([`DESCRIBE`](super::js::DESCRIBE) only);
    /// boxed, as descriptions are held across many awaits.
    pub(crate) commit: Box<Commit>,
}

/// Where a control stands, as [`DESCRIBE`](super::js::DESCRIBE) reads it (issue 30).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Commit {
    /// Its `href` attribute as written; `None` when it has none.
    pub href: Option<String>,
    /// Its form's legends, accessible name and heading.
    pub form: String,
    /// The accessible name (or heading) of the dialog it is in.
    pub dialog: String,
    /// Whether that dialog opened after the open dialogs were last marked
    /// ([`mark_open_dialogs`](crate::page::act::mark_open_dialogs)).
    pub dialog_fresh: bool,
    /// The text near it that may ask to confirm: its dialog's or form's, or the page's
    /// before its form, other controls' words left out.
    pub text: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Facts {
    input_type: String,
    autocomplete: String,
    label: String,
    name: String,
    id: String,
    placeholder: String,
}

impl Desc {
    /// "the button “Pay now”".
    pub(crate) fn what(&self) -> String {
        let role = if self.role.is_empty() || self.role == "generic" {
            "the element".to_owned()
        } else {
            format!("the {}", self.role)
        };
        if self.name.is_empty() {
            role
        } else {
            format!("{role} “{}”", self.name)
        }
    }

    /// "The button “Pay now”", for the start of a sentence.
    pub(crate) fn what_capital(&self) -> String {
        let what = self.what();
        let mut chars = what.chars();
        chars.next().map_or(what.clone(), |c| {
            c.to_uppercase().collect::<String>() + chars.as_str()
        })
    }

    /// "A dialog “Cookie settings”", "An element", for naming a blocker.
    pub(super) fn what_indefinite(&self) -> String {
        let what = self.what();
        let rest = what.strip_prefix("the ").unwrap_or(&what);
        let vowel = rest
            .chars()
            .next()
            .is_some_and(|c| "aeiouAEIOU".contains(c));
        format!("{} {rest}", if vowel { "An" } else { "A" })
    }

    pub(crate) fn field_facts(&self) -> FieldFacts {
        FieldFacts {
            input_type: self.facts.input_type.clone(),
            autocomplete: self.facts.autocomplete.clone(),
            label: self.facts.label.clone(),
            name: self.facts.name.clone(),
            id: self.facts.id.clone(),
            placeholder: self.facts.placeholder.clone(),
        }
    }

    pub(crate) fn is_secret(&self) -> bool {
        self.field && classify_field(&self.field_facts()).is_secret()
    }

    pub(super) fn under(&self) -> Under {
        Under {
            role: self.role.clone(),
            name: self.name.clone(),
            words: self.words.clone(),
            tag: self.tag.clone(),
            editable: self.editable,
            field: self.field.then(|| self.field_facts()),
            secret: self.is_secret(),
            commit: self.commit.clone(),
        }
    }
}

pub(super) fn is_gone(e: &CdpError) -> bool {
    matches!(e.kind(), conch_cdp::ErrorKind::Protocol { message, .. }
        if message.contains("Could not find object")
            || message.contains("Cannot find context")
            || message.contains("No node")
            || message.contains("does not belong"))
}

pub use crate::page::world::PAGE_SCRIPT_TIMEOUT;

/// Calls `function` on `object_id` in `session` with `args`, returning its JSON value.
pub(crate) async fn call_on(
    session: &Session,
    object_id: &str,
    function: &str,
    args: &[Value],
    reference: &str,
) -> Result<Value, ActError> {
    let answer = call_function(session, object_id, function, args, reference, true).await?;
    script_value(&answer)
}

/// Calls `function` on `object_id` and returns the object id of its result (null: `None`).
pub(crate) async fn call_on_handle(
    session: &Session,
    object_id: &str,
    function: &str,
    args: &[Value],
    reference: &str,
) -> Result<Option<String>, ActError> {
    let answer = call_function(session, object_id, function, args, reference, false).await?;
    handle_of(&answer)
}

/// `Runtime.callFunctionOn`, bounded by [`PAGE_SCRIPT_TIMEOUT`]; a value answer awaits the
/// function's promise, a handle answer does not.
async fn call_function(
    session: &Session,
    object_id: &str,
    function: &str,
    args: &[Value],
    reference: &str,
    by_value: bool,
) -> Result<Value, ActError> {
    let arguments: Vec<Value> = args.iter().map(|v| json!({ "value": v })).collect();
    let mut params = json!({
        "functionDeclaration": function,
        "objectId": object_id,
        "arguments": arguments,
        "silent": true,
    });
    if by_value {
        params["returnByValue"] = json!(true);
        params["awaitPromise"] = json!(true);
    }
    session
        .call_raw_with_timeout("Runtime.callFunctionOn", params, PAGE_SCRIPT_TIMEOUT)
        .await
        .map_err(|e| gone_or(e, reference))
}

pub(super) fn gone_or(e: CdpError, reference: &str) -> ActError {
    if is_gone(&e) {
        ActError::Gone {
            reference: reference.to_owned(),
        }
    } else {
        ActError::Cdp(e)
    }
}

pub(super) fn script_value(answer: &Value) -> Result<Value, ActError> {
    if let Some(details) = answer.get("exceptionDetails") {
        let text = details
            .pointer("/exception/description")
            .or_else(|| details.get("text"))
            .and_then(Value::as_str)
            .unwrap_or("a script error");
        let first = text.lines().next().unwrap_or(text);
        return Err(ActError::Script(first.to_owned()));
    }
    Ok(answer
        .pointer("/result/value")
        .cloned()
        .unwrap_or(Value::Null))
}

fn handle_of(answer: &Value) -> Result<Option<String>, ActError> {
    if answer.get("exceptionDetails").is_some() {
        return Err(ActError::Script("the page's script threw".to_owned()));
    }
    Ok(answer
        .pointer("/result/objectId")
        .and_then(Value::as_str)
        .map(str::to_owned))
}

/// Describes the element `object_id` of `session`.
pub(crate) async fn describe(
    session: &Session,
    object_id: &str,
    reference: &str,
) -> Result<Desc, ActError> {
    let value = call_on(
        session,
        object_id,
        &with_prelude(js::DESCRIBE),
        &[],
        reference,
    )
    .await?;
    Ok(serde_json::from_value(value).unwrap_or_default())
}

/// Describes `el` (role, name, field facts…).
///
/// # Errors
/// [`ActError::Gone`], or a DevTools failure.
pub async fn describe_element(el: &Element) -> Result<Under, ActError> {
    Ok(describe(&el.frame, &el.object_id, &el.reference)
        .await?
        .under())
}

/// [`describe_element`], with the address of the document the element is in (a frame's
/// own, for an element of a frame), in the same look: `None` when it has none.
///
/// # Errors
/// [`ActError::Gone`], or a DevTools failure.
pub async fn describe_element_in_document(
    el: &Element,
) -> Result<(Under, Option<String>), ActError> {
    let desc = describe(&el.frame, &el.object_id, &el.reference).await?;
    let document = Some(desc.document.clone()).filter(|url| !url.is_empty());
    Ok((desc.under(), document))
}
