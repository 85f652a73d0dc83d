//! The keyboard: focusing a field, typing into it (GES-8) with the focus checked right
//! before the text goes in, and pressing keys and chords (GES-5). Never into a secret
//! field (SEC-2, SEC-5).

use conch_cdp::Session;
use conch_policy::{Chord, classify_field, key_verdict_on_secret, typing_verdict};
use serde_json::Value;
use zeroize::Zeroizing;

use super::call::{call_on, describe};
use super::hit::frame_owners;
use super::point::focused;
use super::ready::{Sends, Still, actionable_point, settled, settled_sending, wait_actionable};
use super::{ActError, ActOptions, Done, js, with_prelude};
use crate::page::Element;
use crate::page::input::{self, Press};

/// Focuses `el`: by script, and by a click at its centre when the script could not move
/// the browser's focus there (a frame of another site).
pub(crate) async fn focus(el: &Element, options: &ActOptions) -> Result<(), ActError> {
    let focused = call_on(
        &el.frame,
        &el.object_id,
        &with_prelude(js::FOCUS),
        &[],
        &el.reference,
    )
    .await?;
    if focused != Value::Bool(true) {
        let (at, _) = actionable_point(el, options, true).await?;
        input::click(&el.page, at, Press::Left).await?;
    }
    Ok(())
}

/// Replaces the contents of the text field `el` with `text`, as typed input (GES-8).
/// Never into a secret field (SEC-2).
///
/// # Errors
/// [`ActError::NotEditable`], [`ActError::Secret`], [`ActError::Disabled`], or as
/// [`click`](super::click).
pub async fn type_text(el: &Element, text: &str, options: &ActOptions) -> Result<Done, ActError> {
    let desc = wait_actionable(el, options, true, Still::Unchecked).await?;
    if !desc.editable {
        return Err(ActError::NotEditable {
            reference: el.reference.clone(),
            what: desc.what_capital(),
        });
    }
    if let Some(refusal) = typing_verdict(classify_field(&desc.field_facts())).refusal() {
        return Err(ActError::Secret(refusal.sentence()));
    }
    settled_sending(
        &el.page,
        options,
        async {
            focus(el, options).await?;
            replace_text_in(el, text).await
        },
        Sends::NotOnOpening,
    )
    .await
}

/// Replaces the contents of the focused field `el` with `text`: selects all, then checks
/// in the element's own world that it still holds the focus right before the text goes
/// in, so a page that moves the focus elsewhere gets nothing typed (issue 11 review).
///
/// # Errors
/// [`ActError::FocusMoved`] when `el` lost the focus, or a DevTools failure.
pub async fn replace_text_in(el: &Element, text: &str) -> Result<(), ActError> {
    input::select_all_focused(&el.page).await?;
    let held = call_on(
        &el.frame,
        &el.object_id,
        &with_prelude(js::HAS_FOCUS),
        &[],
        &el.reference,
    )
    .await?;
    if held != Value::Bool(true) {
        let what = describe(&el.frame, &el.object_id, &el.reference)
            .await
            .map(|d| d.what())
            .unwrap_or_else(|_| "the field".to_owned());
        return Err(ActError::FocusMoved {
            reference: el.reference.clone(),
            what,
        });
    }
    input::insert_over_selection(&el.page, text).await?;
    Ok(())
}

/// Fills the focused secret field `el` with `secret` key by key (SEC-2, issue 29):
/// selects all, then, right before each key, checks in the element's own world that `el`
/// still holds the focus (its document's included, so a move into another frame counts).
/// A page that moves the focus when the first key lands gets nothing more: the fill stops
/// before the next key, and no key of the secret ever goes to another element.
///
/// # Errors
/// [`ActError::FocusMoved`] when `el` lost the focus before the first key,
/// [`ActError::FillStopped`] when it lost it after, or a DevTools failure.
pub async fn fill_secret_in(el: &Element, secret: &str) -> Result<(), ActError> {
    // An out-of-process frame's own view of the focus lags behind the page around it:
    // the owner of each frame on the way up is asked too, in its own process.
    let owners = frame_owners(el).await;
    input::select_all_focused(&el.page).await?;
    let mut key = Zeroizing::new([0u8; 4]);
    for (typed, c) in secret.chars().enumerate() {
        if !holds_focus(el, owners.as_deref()).await? {
            let what = describe(&el.frame, &el.object_id, &el.reference)
                .await
                .map(|d| d.what())
                .unwrap_or_else(|_| "the field".to_owned());
            let reference = el.reference.clone();
            return Err(if typed == 0 {
                ActError::FocusMoved { reference, what }
            } else {
                ActError::FillStopped { reference, what }
            });
        }
        input::insert_over_selection(&el.page, c.encode_utf8(&mut key[..])).await?;
    }
    Ok(())
}

/// Whether `el` holds the keyboard focus, read in its own world where the page cannot
/// redefine `activeElement` or `hasFocus`, and each of its frames' `owners` holds it in
/// its own document; no when an owner could not be found (`None`).
async fn holds_focus(el: &Element, owners: Option<&[(Session, String)]>) -> Result<bool, ActError> {
    let Some(owners) = owners else {
        return Ok(false);
    };
    let here = std::iter::once((&el.frame, &el.object_id));
    for (session, object) in here.chain(owners.iter().map(|(s, o)| (s, o))) {
        let held = call_on(
            session,
            object,
            &with_prelude(js::HAS_FOCUS),
            &[],
            &el.reference,
        )
        .await?;
        if held != Value::Bool(true) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Presses `keys` (a key or a chord such as `Control+Shift+K`) on `on` after focusing it,
/// or on whatever has focus (GES-5).
///
/// # Errors
/// [`ActError::Keys`] for a chord that can't be read or a key Conch doesn't know, or as
/// [`click`](super::click).
pub async fn press(
    page: &Session,
    keys: &str,
    on: Option<&Element>,
    options: &ActOptions,
) -> Result<Done, ActError> {
    let chord = Chord::parse(keys).map_err(|e| ActError::Keys(e.to_string()))?;
    let target = match on {
        Some(el) => Some(
            wait_actionable(el, options, true, Still::Unchecked)
                .await?
                .under(),
        ),
        None => focused(page).await?,
    };
    // On a secret field only keys that type nothing (Tab, Enter, arrows…) go (SEC-5, AMB-13).
    if target.is_some_and(|t| t.secret)
        && let Some(refusal) = key_verdict_on_secret(&chord).refusal()
    {
        return Err(ActError::Secret(refusal.sentence()));
    }
    settled(page, options, async {
        if let Some(el) = on {
            focus(el, options).await?;
        }
        input::press_chord(page, &chord).await?;
        Ok(())
    })
    .await
}
