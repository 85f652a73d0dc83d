//! Seeding a new errand (ERR-3, ERR-6, ERR-7, ERR-9): a copy of the main context's
//! cookies and local storage for exactly the sites the person always allows
//! (`browser.json` sites), each cookie's domain and each storage origin judged by
//! conch-policy's site function, the same one permissions use (`.shop.example` →
//! `shop.example`; `alice.github.io` is not `github.io`). Never the whole jar, never from
//! the person's own Chrome, and never back: nothing is ever copied from an errand to the
//! main context.
//!
//! The cookies go from one browser to the other through DevTools calls, and local storage
//! through a blank page of Conch's own on each origin ([`super::storage`]), whose traces
//! conch-cdp redacts; they never enter a result, a log line or a URL (ERR-9).
//!
//! Deliberately absent: session storage, IndexedDB and passkeys.

use serde_json::{Value, json};

use super::*;
use crate::store::BrowserSettings;

/// The fields of a cookie `Storage.setCookies` takes, as `Storage.getCookies` gives them.
const COOKIE_FIELDS: &[&str] = &[
    "name",
    "value",
    "domain",
    "path",
    "secure",
    "httpOnly",
    "sameSite",
    "priority",
    "sourceScheme",
    "sourcePort",
];

/// Copies the main context's cookies and local storage of the always-allowed sites into
/// the errand's new `context` in the errands' browser `errands` (ERR-3). Gives how many
/// cookies were copied.
/// Nothing when there is no main browser to copy from, when no site is always allowed, or
/// beside the person's own Chrome (ERR-6).
pub(super) async fn seed(
    inner: &Inner,
    id: &str,
    errands: &Session,
    context: &BrowserContextId,
) -> Result<usize, BrowserError> {
    let Some(main) = inner.errand.main.as_ref().and_then(Weak::upgrade) else {
        return Ok(0);
    };
    let main = Browser { inner: main };
    // Conch never copies cookies out of the person's own browser (ERR-6).
    if !lock(&main.inner.backend.chosen).abilities().may_seed {
        return Ok(0);
    }
    let sites = lent_sites(&main);
    let copied = copy_sites(&main, inner, id, errands, context, &sites).await?;
    note_lent(inner, id, &sites);
    Ok(copied)
}

/// Notes `sites` as lent to errand `id` (ERR-23).
pub(super) fn note_lent(inner: &Inner, id: &str, sites: &[conch_policy::Site]) {
    if sites.is_empty() {
        return;
    }
    lock(&inner.errand.lent)
        .entry(id.to_owned())
        .or_default()
        .extend(sites.iter().map(|s| s.as_str().to_owned()));
}

/// Copies the main context's cookies and local storage of `sites` (by conch-policy's
/// site function) into errand `id`'s `context` in the errands' browser `into` (reached
/// through `errands`). Gives how many cookies were copied. Local storage that can't be
/// copied is said in the log and left out: the errand then signs in again.
pub(super) async fn copy_sites(
    main: &Browser,
    into: &Inner,
    id: &str,
    errands: &Session,
    context: &BrowserContextId,
    sites: &[conch_policy::Site],
) -> Result<usize, BrowserError> {
    if sites.is_empty() {
        return Ok(0);
    }
    main.ensure_running().await?;
    let source = {
        let state = main.inner.state.lock().await;
        let running = state.running.as_ref().ok_or(BrowserError::NotRunning)?;
        running.connection.browser()
    };
    let jar = source.call_raw("Storage.getCookies", json!({})).await?;
    let lent: Vec<Value> = jar["cookies"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|cookie| {
            cookie["domain"]
                .as_str()
                .is_some_and(|domain| conch_policy::lends_cookie(domain, sites))
        })
        .map(cookie_param)
        .collect();
    let count = lent.len();
    if !lent.is_empty() {
        errands
            .call_raw(
                "Storage.setCookies",
                json!({ "cookies": lent, "browserContextId": context }),
            )
            .await?;
        tracing::debug!(target: "conch_browser", count, "an errand was seeded with the always-allowed sites' cookies");
    }
    if let Err(e) = super::storage::copy_sites(main, into, id, context, sites, &lent).await {
        tracing::warn!(target: "conch_browser", error = %e, "the always-allowed sites' local storage could not be copied into an errand");
    }
    Ok(count)
}

/// The sites the person always allows, as conch-policy's sites. An unreadable settings
/// file lends nothing.
fn lent_sites(main: &Browser) -> Vec<conch_policy::Site> {
    let config = &main.inner.config;
    let Ok(settings) = BrowserSettings::load(&config.home, config.clock.as_ref()) else {
        return Vec::new();
    };
    settings
        .value
        .sites
        .iter()
        .filter_map(|site| conch_policy::Site::of_host(site).ok())
        .collect()
}

/// A cookie as `Storage.setCookies` takes it: its own fields, and its expiry unless it
/// lives for the session only.
pub(super) fn cookie_param(cookie: &Value) -> Value {
    let mut param = serde_json::Map::new();
    for field in COOKIE_FIELDS {
        if let Some(value) = cookie.get(*field) {
            param.insert((*field).to_owned(), value.clone());
        }
    }
    let session = cookie["session"].as_bool().unwrap_or(true);
    if !session && let Some(expires) = cookie.get("expires") {
        param.insert("expires".to_owned(), expires.clone());
    }
    Value::Object(param)
}

/// Gives a new context of errand `id` the cookies and local storage it had when it was
/// set aside, or at its last snapshot before a crash (ERR-11, ERR-19).
pub(super) async fn restore_cookies(
    inner: &Inner,
    errands: &Session,
    id: &str,
    context: &BrowserContextId,
) -> Result<(), BrowserError> {
    super::storage::restore(inner, id, context).await?;
    let Some(cookies) = lock(&inner.errand.pending).remove(id) else {
        return Ok(());
    };
    let cookies: Vec<Value> = cookies.iter().map(cookie_param).collect();
    if cookies.is_empty() {
        return Ok(());
    }
    errands
        .call_raw(
            "Storage.setCookies",
            json!({ "cookies": cookies, "browserContextId": context }),
        )
        .await?;
    Ok(())
}
