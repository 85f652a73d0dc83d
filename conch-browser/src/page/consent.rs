//! Declining common cookie banners before the agent reads a page (LAUNCH-11, AMB-25).
//!
//! Only banners of a curated list of consent platforms (and elements that call themselves
//! a cookie or consent banner) are looked at, and inside one only a control whose words
//! conch-policy's `is_reject_control` calls a reject or "necessary only" control is
//! pressed, with a trusted click. It is Conch's own act: no question, in every mode.
//!
//! Deliberately absent: ever pressing an accept control, a settings control, or anything
//! outside a detected banner. A banner with no reject control is left alone. The setting
//! `declineCookieBanners` is read by the caller, which simply does not call this when off.

use conch_cdp::Session;
use conch_policy::is_reject_control;
use serde::Deserialize;
use serde_json::json;

use super::Element;
use super::act::{self, ActError, ActOptions, How};
use super::world::Frame;
use crate::page::script;

/// What was declined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsentNote {
    /// The consent platform or kind of banner.
    pub platform: String,
    /// The words of the control pressed.
    pub control: String,
}

impl ConsentNote {
    /// The sentence for the result.
    pub fn sentence(&self) -> String {
        format!(
            "Conch declined the site's cookie banner ({}) by pressing “{}”.",
            self.platform, self.control
        )
    }
}

/// Curated banners: platform, selector of the banner.
const BANNERS: &[(&str, &str)] = &[
    ("OneTrust", "#onetrust-banner-sdk, #onetrust-consent-sdk"),
    ("Cookiebot", "#CybotCookiebotDialog"),
    ("Didomi", "#didomi-host, #didomi-popup"),
    ("Quantcast", ".qc-cmp2-container"),
    ("TrustArc", "#truste-consent-track, #truste-consent-content"),
    ("Osano", ".osano-cm-dialog"),
    ("Cookie Consent", ".cc-window, .cc-banner"),
    ("CookieYes", ".cky-consent-container"),
    ("Complianz", ".cmplz-cookiebanner"),
    ("Google consent", ".fc-consent-root"),
    ("Iubenda", "#iubenda-cs-banner"),
    ("Borlabs", "#BorlabsCookieBox"),
    ("Klaro", ".klaro .cookie-notice, .klaro .cookie-modal"),
    (
        "cookie banner",
        "[role=dialog][aria-label*=cookie i], [role=dialog][aria-labelledby][id*=cookie i], [id*=cookie-banner i], [class*=cookie-banner i], [id*=consent-banner i], [class*=consent-banner i], [role=dialog][aria-label*=consent i], [role=region][aria-label*=cookie i]",
    ),
];

/// Finds visible controls inside visible banners: `[elements, [{platform, words}]]`, or
/// `null` when there is none (most pages: one round trip).
const FIND: &str = script::body(include_str!("consent/find.js"));

#[derive(Deserialize)]
struct Candidate {
    platform: String,
    words: String,
}

/// Declines a common cookie banner on `page` if one shows: presses its reject control.
/// `None` when no banner, or no reject control, is found.
///
/// # Errors
/// A DevTools failure, or as [`act::click`] for the control.
pub async fn decline_banner(
    page: &Session,
    options: &ActOptions,
) -> Result<Option<ConsentNote>, ActError> {
    let banners = serde_json::to_string(BANNERS)
        .map_err(|_| ActError::Script("the banner list".to_owned()))?;
    // In Conch's isolated world: the page cannot redefine `innerText`, `querySelectorAll`
    // or the style getters to steer which control is pressed.
    let answer = Frame::top(page)
        .await?
        .evaluate(&format!("({FIND})({banners})"), false)
        .await?;
    let Some(found) = answer.result.object_id.as_deref() else {
        return Ok(None);
    };
    let info = act::call_on(page, found, "function() { return this[1]; }", &[], "banner").await?;
    let candidates: Vec<Candidate> = serde_json::from_value(info).unwrap_or_default();
    let Some((index, pick)) = candidates
        .iter()
        .enumerate()
        .find(|(_, c)| is_reject_control(&c.words))
    else {
        return Ok(None);
    };
    let Some(object_id) = act::call_on_handle(
        page,
        found,
        "function(i) { return this[0][i]; }",
        &[json!(index)],
        "banner",
    )
    .await?
    else {
        return Ok(None);
    };
    let control = Element {
        reference: "the banner's reject control".to_owned(),
        page: page.clone(),
        frame: page.clone(),
        object_id,
        offset: (0.0, 0.0),
    };
    act::click(&control, How::Click, options).await?;
    Ok(Some(ConsentNote {
        platform: pick.platform.clone(),
        control: pick.words.clone(),
    }))
}
