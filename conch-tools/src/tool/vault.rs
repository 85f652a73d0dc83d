//! The person's vault on a secret field (SEC-2, issue 16), for browser_type and
//! browser_form: the embedder's [`SecretFiller`](crate::SecretFiller) gives the saved
//! password for the field's own site, or, on a new-password field with nothing saved
//! (`conch_policy::is_new_password`), makes a strong one and keeps it with the form's
//! username, once the act is permitted. The value is typed into the field (and into the
//! form's other new-password fields, its confirmations) and never reaches a result, a log
//! or an event: the sentences name the site only.
//!
//! The site is the one of the document that holds the field, so a password field in
//! another site's frame is asked for under that site, never the tab's.
//!
//! Deliberately absent: any rule (is_new_password is conch-policy's, the site rule is
//! `Site::for_password`) and any keeping (the filler keeps what it makes).

use std::sync::Arc;

use conch_browser::page::Element;
use conch_policy::{
    FieldClass, Refusal, RefusalCode, SecretKind, Site, classify_field, is_new_password,
};

use crate::embedder::{SecretFiller, SecretRequest, SecretValue};
use crate::engine::{self, TargetFacts};
use crate::error::ToolError;
use crate::tool::turn::Turn;

/// What the vault has for a field: the saved password, or the promise to make one when
/// the act is permitted (so a refused act leaves nothing saved).
pub(crate) struct VaultFill {
    filler: Arc<dyn SecretFiller>,
    request: SecretRequest,
    /// The saved password; `None` for one to make.
    saved: Option<SecretValue>,
    /// The site it is kept under, for the sentence.
    site: String,
    /// The other new-password fields of the form: the confirmations.
    confirmations: Vec<Element>,
}

/// Asks the embedder's vault for `target`'s value, on `site`: `None` when there is no
/// filler, or nothing saved and the field is no new-password field, so the field goes to
/// the person.
pub(crate) async fn ask(
    turn: &Turn<'_>,
    site: &Site,
    element: &Element,
    target: &TargetFacts,
) -> Option<VaultFill> {
    let filler = turn.config().secret_filler.clone()?;
    let url = match &target.document_url {
        Some(url) => url.clone(),
        None => engine::current_url(turn.conv()).await.unwrap_or_default(),
    };
    let key = url::Url::parse(&url)
        .ok()
        .and_then(|u| Site::for_password(&u))
        .unwrap_or_else(|| site.to_string());
    let form = engine::form_around(element).await.unwrap_or_default();
    let passwords: Vec<usize> = form
        .inputs
        .iter()
        .enumerate()
        .filter(|(_, f)| classify_field(f) == FieldClass::Secret(SecretKind::Password))
        .map(|(i, _)| i)
        .collect();
    let facts: Vec<_> = passwords.iter().map(|&i| form.inputs[i].clone()).collect();
    let new_password = is_new_password(&target.field, &facts, &form.words);
    let request = SecretRequest {
        conversation: turn.conversation_id().to_owned(),
        site: site.clone(),
        url,
        field: target.field.clone(),
        new_password,
        username: form.username,
    };
    let saved = filler.secret_for(&request).await;
    if saved.is_none() && !new_password {
        return None;
    }
    let mut confirmations = Vec::new();
    if new_password {
        for &i in passwords.iter().filter(|&&i| Some(i) != form.at) {
            if !is_new_password(&form.inputs[i], &facts, &form.words) {
                continue;
            }
            let name = format!("{}'s confirmation field", element.reference);
            if let Ok(other) = engine::form_input(element, i, name).await {
                confirmations.push(other);
            }
        }
    }
    Some(VaultFill {
        filler,
        request,
        saved,
        site: key,
        confirmations,
    })
}

/// Types the vault's value into `element` and its confirmations, making it first when
/// none was saved (a filler that makes none hands the field to the person); gives the
/// sentence for the result, which names the site, never the value.
pub(crate) async fn fill(element: &Element, fill: &VaultFill) -> Result<String, ToolError> {
    let made = fill.saved.is_none();
    let value = match &fill.saved {
        Some(saved) => saved.clone(),
        None => fill
            .filler
            .new_secret_for(&fill.request)
            .await
            .ok_or_else(|| ToolError::from(Refusal::new(RefusalCode::SecretField)))?,
    };
    engine::fill_secret(element, value.expose()).await?;
    let site = &fill.site;
    let mut sentence = if made {
        format!("Generated a strong password for {site}, filled it and saved it")
    } else {
        format!("Filled the saved password for {site}")
    };
    sentence.push_str("; its value is not shown.");
    for other in &fill.confirmations {
        match engine::fill_secret(other, value.expose()).await {
            Ok(()) => sentence.push_str(" Its confirmation field has it too."),
            Err(e) => sentence.push_str(&format!(
                " Its confirmation field could not be filled ({}); call browser_type on it.",
                e.to_string().trim_end_matches('.')
            )),
        }
    }
    Ok(sentence)
}
