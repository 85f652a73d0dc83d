//! The control implicit submission presses: Enter in a form's field submits the form
//! through its default button, the first submit button in tree order among the form's
//! controls (`form` attribute included), as the HTML standard's implicit submission and
//! `form.requestSubmit()` with no submitter do (issue 11, HS-8). The rules judge such a
//! press by that button's words, not the field's.
//!
//! Deliberately absent: guessing what a page's own script does on Enter (a chat box
//! outside any form); only the browser's own submission is followed.

use conch_cdp::Session;

use super::point::through_focus;
use super::{ActError, Element, Under, call_on_handle, describe};
use crate::page::script;

/// `submitterOf(el)`: the form's default button for Enter in `el`. A form with no submit
/// button submits on Enter when it has at most one field that blocks implicit submission;
/// its submit handler then acts as its own button would (a "Send" of `type=button` whose
/// script calls `form.requestSubmit()`), so that button stands in, or the form itself when
/// it has none. Null when Enter there submits nothing (a textarea, a button, a select, a
/// field outside any form, a disabled default button, a form of several fields and no
/// submit button).
const SUBMITTER_OF: &str = script::body(include_str!("submit/submitter_of.js"));

/// Called on an element: its submitter.
const SUBMITTER: &str = script::body(include_str!("submit/submitter.js"));

/// An expression: the submitter of the focused element, through same-origin frames and
/// shadow roots; a cross-origin frame that holds the focus is returned as itself, so the
/// walk goes on inside it.
const FOCUSED_SUBMITTER: &str = script::body(include_str!("submit/focused_submitter.js"));

/// The control that Enter in `el` would press to submit its form (in the same frame, under
/// the same ref, for a card's thumbnail), described; `None` when Enter there submits
/// nothing.
///
/// # Errors
/// [`ActError::Gone`], or a DevTools failure.
pub async fn submitter(el: &Element) -> Result<Option<(Element, Under)>, ActError> {
    let script = SUBMITTER.replace("SUBMITTER_OF", SUBMITTER_OF);
    let Some(object_id) =
        call_on_handle(&el.frame, &el.object_id, &script, &[], &el.reference).await?
    else {
        return Ok(None);
    };
    let under = describe(&el.frame, &object_id, &el.reference)
        .await?
        .under();
    let submitter = Element {
        object_id,
        ..el.clone()
    };
    Ok(Some((submitter, under)))
}

/// [`FOCUSED_SUBMITTER`] with the submitter lookup and the one walk to the focused element
/// (`act/js/focused.js`, which the acts use too) pasted in.
fn focused_submitter_script() -> String {
    FOCUSED_SUBMITTER
        .replace("SUBMITTER_OF", SUBMITTER_OF)
        .replace("FOCUSED", super::js::FOCUSED)
}

/// The control that Enter would press to submit the form of the focused element, through
/// frames of any site; `None` when Enter there submits nothing.
///
/// # Errors
/// A DevTools failure.
pub async fn focused_submitter(page: &Session) -> Result<Option<Under>, ActError> {
    let script = focused_submitter_script();
    let found = through_focus(page, &script).await?;
    // A frame of another site that Conch could not enter submits nothing it can name.
    Ok(found.filter(|under| !matches!(under.tag.as_str(), "iframe" | "frame")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::script::well_formed;

    /// The submitter scripts, `submitterOf` pasted in, are whole (issue 30).
    #[test]
    fn issue_30_submitter_scripts_compose_into_whole_functions() {
        for composed in [
            SUBMITTER.replace("SUBMITTER_OF", SUBMITTER_OF),
            focused_submitter_script(),
        ] {
            well_formed(&composed).unwrap_or_else(|e| panic!("{e}:\n{composed}"));
            assert!(
                composed.contains("const submitterOf = (el) =>"),
                "{composed}"
            );
        }
    }
}
