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
const LOOK_JS: &str = r"((tokenNames) => {
  const out = { href: location.href, fields: [], frames: [], token: false };
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width < 1 || r.height < 1) return false;
    const s = getComputedStyle(el);
    return s.visibility !== 'hidden' && s.display !== 'none' && Number(s.opacity) > 0;
  };
  const attr = (el, name) => (el.getAttribute(name) || '').slice(0, 200);
  const walk = (doc, depth) => {
    for (const el of doc.querySelectorAll('input, textarea')) {
      const name = attr(el, 'name');
      if (tokenNames.includes(name) && el.value && el.value.trim() !== '') out.token = true;
      const type = el.tagName === 'INPUT' ? (attr(el, 'type') || 'text').toLowerCase() : '';
      if (type === 'hidden' || !shown(el)) continue;
      const label = (el.labels && el.labels[0] ? el.labels[0].textContent : attr(el, 'aria-label')) || '';
      out.fields.push({ inputType: type, autocomplete: attr(el, 'autocomplete'), label: label.trim().slice(0, 200),
        name, id: el.id || '', placeholder: attr(el, 'placeholder') });
    }
    for (const f of doc.querySelectorAll('iframe, frame')) {
      if (shown(f) && f.src) out.frames.push(f.src);
      let inner = null;
      try { inner = f.contentDocument; } catch (e) { inner = null; }
      if (inner && depth < 8) walk(inner, depth + 1);
    }
  };
  walk(document, 0);
  return out;
})";

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
