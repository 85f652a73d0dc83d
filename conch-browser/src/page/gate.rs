//! One look at a page for a gate (HAND-2, AMB-20): a visible password or one-time-code
//! field, a captcha frame, a captcha token, and which document shows.
//!
//! The look runs in Conch's isolated world of the page (the page cannot fake what it
//! sees) and walks same-origin frames; a captcha in a frame of another site is known by
//! its frame's address. Field values never leave the page: a captcha token is reported as
//! present, never read. conch-policy classifies the fields and judges the looks.

use conch_cdp::Session;
use conch_policy::{
    CAPTCHA_TOKEN_FIELDS, FieldClass, FieldFacts, GateLook, SecretKind, classify_field,
    is_captcha_frame,
};
use serde::Deserialize;
use url::Url;

use super::PageError;
use super::world::Frame;
use crate::page::script;

/// Facts of one look, as the page's script gives them.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawLook {
    href: String,
    fields: Vec<RawField>,
    frames: Vec<String>,
    token: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawField {
    input_type: String,
    autocomplete: String,
    label: String,
    name: String,
    id: String,
    placeholder: String,
}

/// The look, run in Conch's isolated world: visible text fields' facts (never values),
/// visible frames' addresses, and whether a captcha token field holds a value.
const LOOK_JS: &str = script::body(include_str!("gate/look.js"));

/// Looks at `page` for a gate (HAND-2): what shows, and which document it is.
///
/// # Errors
/// [`PageError`] when the page cannot be asked.
pub async fn look(page: &Session) -> Result<GateLook, PageError> {
    let tokens = serde_json::to_string(CAPTCHA_TOKEN_FIELDS)
        .map_err(|e| PageError::Script(e.to_string()))?;
    let frame = Frame::top(page).await?;
    let answer = frame
        .evaluate(&format!("({LOOK_JS})({tokens})"), true)
        .await?;
    let raw: RawLook = answer
        .result
        .value
        .and_then(|v| serde_json::from_value(v).ok())
        .ok_or_else(|| PageError::Script("the gate look did not answer".to_owned()))?;
    let tree = super::world::page_call(page, "Page.getFrameTree", serde_json::json!({})).await?;
    let loader = tree["frameTree"]["frame"]["loaderId"]
        .as_str()
        .unwrap_or_default();
    let kinds: Vec<SecretKind> = raw
        .fields
        .into_iter()
        .filter_map(|f| {
            let class = classify_field(&FieldFacts {
                input_type: f.input_type,
                autocomplete: f.autocomplete,
                label: f.label,
                name: f.name,
                id: f.id,
                placeholder: f.placeholder,
            });
            match class {
                FieldClass::Secret(kind) => Some(kind),
                FieldClass::Plain => None,
            }
        })
        .collect();
    Ok(GateLook {
        document: format!("{loader} {}", raw.href),
        password_visible: kinds.contains(&SecretKind::Password),
        code_visible: kinds.contains(&SecretKind::Code),
        captcha_visible: raw
            .frames
            .iter()
            .filter_map(|src| Url::parse(src).ok())
            .any(|url| is_captcha_frame(&url)),
        captcha_token: raw.token,
        popup_came_and_went: false,
    })
}
