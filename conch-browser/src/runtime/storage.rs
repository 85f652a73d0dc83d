//! Local storage of errands (ERR-3, ERR-11, ERR-19): a new errand gets a copy of the main
//! context's local storage for exactly the always-allowed sites (each origin judged by
//! conch-policy's site function, the same one cookies and permissions use), an errand set
//! aside keeps its local storage sealed with its cookies, and a crashed errand comes back
//! with the local storage of its last snapshot.
//!
//! Local storage can only be reached through a document on its origin. Conch opens a
//! blank page of its own for that (in the main context to read, in the errand's context to
//! read or write): attached, ruled and resumed like every page (ERR-22), and marked blank
//! in the guard, which answers each document it asks for with an empty one and sends
//! nothing ([`crate::guard::rules`]). It stands on one origin after another, reads with
//! `DOMStorage.getDOMStorageItems` and writes with `DOMStorage.setDOMStorageItem`, whose
//! values conch-cdp's traces redact (ERR-9), and closes. It is never a tab: no
//! conversation, live view or agent sees it.
//!
//! Which origins: for seeding, those the main context's cookies of the lent sites were set
//! from, each lent site itself and its `www.`, and the main context's tabs and the pages
//! it showed in this run on those sites; for an errand, every origin one of its pages
//! stood on (told by the target watcher) and every origin it was given storage of. At
//! most [`MAX_ORIGINS`] are read at once.
//!
//! Deliberately absent: session storage, IndexedDB and passkeys (never copied, ADR 0141);
//! local storage of an origin reached only in a frame, or one the main context showed
//! before this run only and holds no cookie or tab of (Chromium tells no list of the
//! origins with storage); anything from the person's own Chrome (ERR-6); and anything
//! copied back to the main context (ERR-7).

use std::collections::{BTreeMap, BTreeSet};

use conch_cdp::protocol::target::CreateTarget;
use serde_json::{Value, json};
use url::Url;

use super::state::ready_or_closed;
use super::*;
use crate::aside::OriginStorage;

/// The most origins one read goes through: a bound on the time a blank page takes.
pub(super) const MAX_ORIGINS: usize = 32;

/// How long health says a task's browser was reopened as it was, after the heal (ERR-19):
/// ten minutes on the runtime's clock, then the item clears by itself. A time, not one
/// read: the settings page, the status and the checkup all read health, and none of them
/// should take the sentence from the others.
pub(super) const REOPENED_SHOWN: Duration = Duration::from_secs(10 * 60);

/// The origin of `url` (`https://shop.example`, with a port only when it is not the
/// scheme's own), when it is a web page's: http or https.
pub(super) fn origin_of(url: &str) -> Option<String> {
    let url = Url::parse(url).ok()?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return None;
    }
    Some(url.origin().ascii_serialization())
}

/// The most origins of the main context remembered for seeding.
const MAX_SEEN: usize = 512;

/// Conversation `id`'s page stood on `url`. In the errands' browser, its origin's
/// storage is the errand's to keep; in the main one, seeding may look there.
pub(super) fn saw(inner: &Inner, id: &str, url: &str) {
    let Some(origin) = origin_of(url) else { return };
    let mut stores = lock(&inner.errand.storage);
    match inner.side {
        Side::Errands => {
            stores
                .errands
                .entry(id.to_owned())
                .or_default()
                .origins
                .insert(origin);
        }
        Side::Main => {
            if stores.seen.len() < MAX_SEEN {
                stores.seen.insert(origin);
            }
        }
    }
}

/// Forgets what errand `id` held (it closed, ERR-10).
pub(super) fn forget(inner: &Inner, id: &str) {
    lock(&inner.errand.storage).errands.remove(id);
}

/// Forgets what every errand held ("sign out of every site", ERR-8).
pub(super) fn forget_all(inner: &Inner) {
    lock(&inner.errand.storage).errands.clear();
}

/// The errands' browser crashed: each of `open` comes back with its last snapshot's
/// storage in its next context, and health says so once it does (ERR-19).
pub(super) fn crashed<'a>(inner: &Inner, open: impl Iterator<Item = &'a String>) {
    let mut stores = lock(&inner.errand.storage);
    for id in open {
        let held = stores.errands.entry(id.clone()).or_default();
        if held.pending.is_none() {
            held.pending = Some(held.snapshot.clone().unwrap_or_default());
        }
        held.healing = true;
    }
}

/// Errand `id` comes back from a set-aside (ERR-11): its next context gets `storage`.
pub(super) fn resume(inner: &Inner, id: &str, storage: Vec<OriginStorage>) {
    let mut stores = lock(&inner.errand.storage);
    let held = stores.errands.entry(id.to_owned()).or_default();
    held.origins
        .extend(storage.iter().map(|s| s.origin.clone()));
    held.pending = Some(storage);
    held.healing = false;
}

/// What errand `id` held as of its last snapshot, or what still waits for its next
/// context: what a set-aside keeps when its context can't be read.
pub(super) fn last_known(inner: &Inner, id: &str) -> Vec<OriginStorage> {
    let stores = lock(&inner.errand.storage);
    stores
        .errands
        .get(id)
        .and_then(|h| h.pending.clone().or_else(|| h.snapshot.clone()))
        .unwrap_or_default()
}

/// Drops the storage of every origin `keeps` refuses from every errand's snapshot and
/// pending storage (ERR-8).
pub(super) fn revoke(inner: &Inner, keeps: &dyn Fn(&str) -> bool) {
    let mut stores = lock(&inner.errand.storage);
    for held in stores.errands.values_mut() {
        for list in [held.snapshot.as_mut(), held.pending.as_mut()]
            .into_iter()
            .flatten()
        {
            list.retain(|s| keeps(&s.origin));
        }
    }
}

/// Takes the local storage of every origin `keeps` refuses out of every open errand's
/// context, and out of what every errand keeps (ERR-8), but for the open errands in
/// `skip`. Gives the errands whose browser failed while their storage was cleared; the
/// others are done all the same.
pub(super) async fn take_back(
    inner: &Inner,
    keeps: &(dyn Fn(&str) -> bool + Sync),
    skip: &[String],
) -> Vec<String> {
    revoke(inner, keeps);
    let mut unreached = Vec::new();
    let contexts: Vec<(String, BrowserContextId)> = {
        let state = inner.state.lock().await;
        if state.running.is_none() {
            return unreached;
        }
        state
            .contexts
            .iter()
            .map(|(id, c)| (id.clone(), c.clone()))
            .collect()
    };
    for (id, context) in contexts {
        if skip.contains(&id) {
            continue;
        }
        let gone: Vec<OriginStorage> = {
            let stores = lock(&inner.errand.storage);
            stores
                .errands
                .get(&id)
                .map(|h| {
                    h.origins
                        .iter()
                        .filter(|o| !keeps(o))
                        .map(|origin| OriginStorage {
                            origin: origin.clone(),
                            items: Vec::new(),
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        if !gone.is_empty()
            && let Err(e) = write(inner, Some(&context), &gone, true).await
        {
            tracing::warn!(target: "conch_browser", error = %e, "an open errand's browser did not give a revoked site's local storage back");
            unreached.push(id);
        }
    }
    unreached
}

/// When an errand last got its snapshot back after a crash, if within
/// [`REOPENED_SHOWN`] of `now` (ERR-19).
pub(super) fn reopened_lately(inner: &Inner, now: SystemTime) -> bool {
    lock(&inner.errand.storage)
        .reopened_at
        .is_some_and(|at| now.duration_since(at).unwrap_or(Duration::ZERO) < REOPENED_SHOWN)
}

/// Gives errand `id`'s new `context` the storage that waits for it, if any: a
/// set-aside's (ERR-11) or a crashed one's last snapshot (ERR-19), then notes a heal for
/// health. Before any of its pages loads. When it can't be written, it waits on for the
/// next context.
///
/// # Errors
/// A DevTools failure, or [`BrowserError::PageNotReady`] when the blank page was not.
pub(super) async fn restore(
    inner: &Inner,
    id: &str,
    context: &BrowserContextId,
) -> Result<(), BrowserError> {
    let (pending, healing) = {
        let mut stores = lock(&inner.errand.storage);
        let Some(held) = stores.errands.get_mut(id) else {
            return Ok(());
        };
        (held.pending.take(), std::mem::take(&mut held.healing))
    };
    let Some(pending) = pending else {
        return Ok(());
    };
    if !pending.is_empty() {
        if let Err(e) = write(inner, Some(context), &pending, true).await {
            // Kept for the next context: the one being made is given up with this error.
            let mut stores = lock(&inner.errand.storage);
            let held = stores.errands.entry(id.to_owned()).or_default();
            held.pending.get_or_insert(pending);
            held.healing |= healing;
            return Err(e);
        }
        let mut stores = lock(&inner.errand.storage);
        let held = stores.errands.entry(id.to_owned()).or_default();
        held.origins
            .extend(pending.iter().map(|s| s.origin.clone()));
        held.snapshot = Some(pending);
    }
    if healing {
        lock(&inner.errand.storage).reopened_at = Some(inner.config.clock.now());
        tracing::info!(target: "conch_browser", "a task's browser was reopened as it was");
    }
    Ok(())
}

/// Reads errand `id`'s local storage from its `context`: every origin its tabs stand on,
/// stood on, or it was given storage of (ERR-11).
pub(super) async fn read_errand(
    inner: &Inner,
    id: &str,
    context: &BrowserContextId,
) -> Result<Vec<OriginStorage>, BrowserError> {
    let tabs: Vec<String> = {
        let state = inner.state.lock().await;
        state
            .tabs
            .conversation(id)
            .map(|c| c.tabs.iter().map(|t| t.url.clone()).collect())
            .unwrap_or_default()
    };
    let origins: Vec<String> = {
        let mut stores = lock(&inner.errand.storage);
        let held = stores.errands.entry(id.to_owned()).or_default();
        held.origins
            .extend(tabs.iter().filter_map(|t| origin_of(t)));
        held.origins.iter().take(MAX_ORIGINS).cloned().collect()
    };
    read(inner, Some(context), &origins).await
}

/// Snapshots errand `id`'s local storage (ERR-19): what it comes back with after a crash.
/// A read that fails keeps the snapshot before it.
pub(super) async fn snapshot(inner: &Inner, id: &str, context: &BrowserContextId) {
    match read_errand(inner, id, context).await {
        Ok(storage) => {
            if let Some(held) = lock(&inner.errand.storage).errands.get_mut(id) {
                held.snapshot = Some(storage);
            }
        }
        Err(e) => {
            tracing::debug!(target: "conch_browser", error = %e, "an errand's local storage could not be snapshotted");
        }
    }
}

/// Copies the main context's local storage of `sites` into errand `id`'s `context` in
/// the errands' browser `into` (ERR-3, ERR-4): the origins the main context's cookies
/// `jar` were set from, each site and its `www.`, and the main context's tabs and pages
/// of this run on them, each judged by conch-policy's site function. Gives how many
/// origins had storage.
pub(super) async fn copy_sites(
    main: &Browser,
    into: &Inner,
    id: &str,
    context: &BrowserContextId,
    sites: &[conch_policy::Site],
    jar: &[Value],
) -> Result<usize, BrowserError> {
    if sites.is_empty() {
        return Ok(0);
    }
    let mut tabs: Vec<String> = {
        let state = main.inner.state.lock().await;
        state
            .tabs
            .conversations
            .values()
            .flat_map(|c| c.tabs.iter().map(|t| t.url.clone()))
            .collect()
    };
    tabs.extend(lock(&main.inner.errand.storage).seen.iter().cloned());
    let origins = seed_origins(jar, &tabs, sites);
    let storage = read(&main.inner, None, &origins).await?;
    if storage.is_empty() {
        return Ok(0);
    }
    write(into, Some(context), &storage, false).await?;
    let mut stores = lock(&into.errand.storage);
    let held = stores.errands.entry(id.to_owned()).or_default();
    held.origins
        .extend(storage.iter().map(|s| s.origin.clone()));
    tracing::debug!(target: "conch_browser", count = storage.len(), "an errand was seeded with the always-allowed sites' local storage");
    Ok(storage.len())
}

/// The origins whose local storage seeding reads for `sites` (ERR-3): where the lent
/// cookies of `jar` were set from (their host, scheme and port, both schemes when the
/// cookie doesn't say), each site and its `www.` over https, and the addresses of `tabs`
/// on those sites. Every one judged by conch-policy's site function; at most
/// [`MAX_ORIGINS`], in a stable order.
pub(super) fn seed_origins(
    jar: &[Value],
    tabs: &[String],
    sites: &[conch_policy::Site],
) -> Vec<String> {
    let mut found = BTreeSet::new();
    for site in sites {
        found.insert(format!("https://{}", site.as_str()));
        found.insert(format!("https://www.{}", site.as_str()));
    }
    for cookie in jar {
        let Some(domain) = cookie["domain"].as_str() else {
            continue;
        };
        let host = domain.trim_start_matches('.');
        let schemes: &[&str] = match cookie["sourceScheme"].as_str() {
            Some("Secure") => &["https"],
            Some("NonSecure") => &["http"],
            _ => &["https", "http"],
        };
        let port = cookie["sourcePort"]
            .as_i64()
            .filter(|p| (1..=65_535).contains(p));
        for scheme in schemes {
            let address = match port {
                Some(port) => format!("{scheme}://{host}:{port}/"),
                None => format!("{scheme}://{host}/"),
            };
            if let Some(origin) = origin_of(&address) {
                found.insert(origin);
            }
        }
    }
    found.extend(tabs.iter().filter_map(|t| origin_of(t)));
    found
        .into_iter()
        .filter(|origin| {
            Url::parse(origin).is_ok_and(|url| conch_policy::lends_origin(&url, sites))
        })
        .take(MAX_ORIGINS)
        .collect()
}

/// A page of Conch's own that only stands on origins, never a tab (see the module docs).
struct Blank {
    session: Session,
    target: TargetId,
    browser: Session,
}

/// Opens a blank page in `context` (the default context when `None`) of `inner`'s
/// running browser, attached, ruled and marked blank in the guard.
async fn open_blank(
    inner: &Inner,
    context: Option<&BrowserContextId>,
) -> Result<Blank, BrowserError> {
    if !inner.backend.abilities().discovers_targets {
        // The person's own Chrome: nothing is read or written there (ERR-6).
        return Err(BrowserError::NotRunning);
    }
    let browser = {
        let state = inner.state.lock().await;
        let running = state.running.as_ref().ok_or(BrowserError::NotRunning)?;
        running.connection.browser()
    };
    let created = browser
        .call(&CreateTarget {
            new_window: Some(true),
            background: Some(true),
            browser_context_id: context.cloned(),
            ..CreateTarget::new("about:blank")
        })
        .await?;
    let session = ready_or_closed(inner, &browser, created.target_id.clone()).await?;
    if let Some(id) = session.id() {
        inner.backend.rules.stand_blank(id);
        inner.backend.remote_rules.stand_blank(id);
    }
    Ok(Blank {
        session,
        target: created.target_id,
        browser,
    })
}

impl Blank {
    /// Stands on `origin`: an empty document of it, answered by the guard, never sent.
    /// Gives whether the page is on it now.
    async fn stand_on(&self, origin: &str) -> bool {
        let went = self
            .session
            .call_raw("Page.navigate", json!({ "url": format!("{origin}/") }))
            .await;
        match went {
            Ok(answer) => answer.get("errorText").is_none_or(Value::is_null),
            Err(_) => false,
        }
    }

    /// The local storage of `origin`, which the page stands on.
    async fn items(&self, origin: &str) -> Result<Vec<(String, String)>, BrowserError> {
        let answer = self
            .session
            .call_raw(
                "DOMStorage.getDOMStorageItems",
                json!({ "storageId": storage_id(origin) }),
            )
            .await?;
        Ok(answer["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|entry| {
                Some((
                    entry.get(0)?.as_str()?.to_owned(),
                    entry.get(1)?.as_str()?.to_owned(),
                ))
            })
            .collect())
    }

    /// Closes the page and takes its mark out of the guard.
    async fn close(self, inner: &Inner) {
        if let Some(id) = self.session.id() {
            inner.backend.rules.forget_blank(id);
            inner.backend.remote_rules.forget_blank(id);
        }
        let _ = self
            .browser
            .call(&CloseTarget {
                target_id: self.target,
            })
            .await;
    }
}

/// `DOMStorage.StorageId` of `origin`'s local storage.
fn storage_id(origin: &str) -> Value {
    json!({ "securityOrigin": origin, "isLocalStorage": true })
}

/// Reads the local storage of `origins` in `context` of `inner`'s running browser. Gives
/// the origins that hold something; an origin the page can't stand on is left out.
async fn read(
    inner: &Inner,
    context: Option<&BrowserContextId>,
    origins: &[String],
) -> Result<Vec<OriginStorage>, BrowserError> {
    if origins.is_empty() {
        return Ok(Vec::new());
    }
    let blank = open_blank(inner, context).await?;
    let mut found = BTreeMap::new();
    let mut failed = None;
    for origin in origins.iter().take(MAX_ORIGINS) {
        if !blank.stand_on(origin).await {
            continue;
        }
        match blank.items(origin).await {
            Ok(items) if items.is_empty() => {}
            Ok(items) => {
                found.insert(origin.clone(), items);
            }
            Err(BrowserError::Cdp(e))
                if matches!(e.kind(), conch_cdp::ErrorKind::Protocol { .. }) =>
            {
                // Not on that origin after all (it went elsewhere): nothing of it read.
            }
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    blank.close(inner).await;
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(found
        .into_iter()
        .map(|(origin, items)| OriginStorage { origin, items })
        .collect())
}

/// Writes `storage` into `context` of `inner`'s running browser, each origin's items on
/// top of what it holds, or instead of it when `replace`.
async fn write(
    inner: &Inner,
    context: Option<&BrowserContextId>,
    storage: &[OriginStorage],
    replace: bool,
) -> Result<(), BrowserError> {
    if storage.iter().all(|s| s.items.is_empty()) && !replace {
        return Ok(());
    }
    let blank = open_blank(inner, context).await?;
    let mut result = Ok(());
    for origin in storage.iter().take(MAX_ORIGINS) {
        if !blank.stand_on(&origin.origin).await {
            tracing::debug!(target: "conch_browser", "a blank page could not stand on an origin to write its storage");
            continue;
        }
        let id = storage_id(&origin.origin);
        if replace
            && let Err(e) = blank
                .session
                .call_raw("DOMStorage.clear", json!({ "storageId": id }))
                .await
        {
            result = Err(e.into());
            break;
        }
        for (key, value) in &origin.items {
            let set = blank
                .session
                .call_raw(
                    "DOMStorage.setDOMStorageItem",
                    json!({ "storageId": id, "key": key, "value": value }),
                )
                .await;
            if let Err(e) = set {
                result = Err(e.into());
                break;
            }
        }
        if result.is_err() {
            break;
        }
    }
    blank.close(inner).await;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sites(names: &[&str]) -> Vec<conch_policy::Site> {
        names
            .iter()
            .map(|n| conch_policy::Site::of_host(n).expect("a site"))
            .collect()
    }

    /// ERR-3 (unit): seeding reads the origins of the lent sites only, by the site
    /// function: the cookie's own origin (scheme and port), the site and its `www.`, and
    /// the main context's tabs on it; never bank.test's, and alice.github.io's lent site
    /// does not reach bob.github.io or github.io.
    #[test]
    fn err_3_seeding_reads_the_lent_sites_origins_only() {
        let jar = vec![
            json!({ "domain": ".shop.test", "sourceScheme": "NonSecure", "sourcePort": 80 }),
            json!({ "domain": "accounts.shop.test", "sourceScheme": "Secure", "sourcePort": 8443 }),
            json!({ "domain": "bank.test", "sourceScheme": "Secure", "sourcePort": 443 }),
            json!({ "domain": "alice.github.io", "sourceScheme": "Unset" }),
            json!({ "domain": "github.io", "sourceScheme": "Secure" }),
        ];
        let tabs = vec![
            "http://shop.test:8080/cart?x=1".to_owned(),
            "https://bob.github.io/".to_owned(),
            "about:blank".to_owned(),
        ];
        let origins = seed_origins(&jar, &tabs, &sites(&["shop.test", "alice.github.io"]));
        assert_eq!(
            origins,
            [
                "http://alice.github.io",
                "http://shop.test",
                "http://shop.test:8080",
                "https://accounts.shop.test:8443",
                "https://alice.github.io",
                "https://shop.test",
                "https://www.alice.github.io",
                "https://www.shop.test",
            ]
        );
        assert!(seed_origins(&jar, &tabs, &[]).is_empty());
        assert_eq!(origin_of("data:text/html,x"), None);
        assert_eq!(
            origin_of("https://shop.test:443/a?b#c").as_deref(),
            Some("https://shop.test")
        );
    }
}
