//! Lending and taking back sign-ins (ERR-4, ERR-5, ERR-6, ERR-8, PERM-15): when the person
//! presses Allow on a site's question inside an errand, that site's cookies and local
//! storage are copied from the main context into the errand's; revoking a site (no longer
//! always allowed) takes its cookies and local storage back from every errand, open or set
//! aside.
//!
//! Deliberately absent: deciding when to lend. The permit flow asks conch-policy, and
//! only an answer given in the person's own UI lends (never Auto, Full trust or MCP
//! elicitation, ERR-5).

use serde_json::{Value, json};

use super::*;

impl Browser {
    /// Whether an Allow in conversation `id` lends a sign-in (ERR-4): it browses in an
    /// errand (a task, or a chat given a browser of its own, LIVE-16), and the main
    /// browser is not the person's own Chrome, from which nothing is copied (ERR-6).
    pub fn errand_lends(&self, id: &str) -> bool {
        self.inner.side == Side::Main
            && self.browses_apart(id)
            && lock(&self.inner.backend.chosen).abilities().may_lend
    }

    /// Lends the main context's sign-in on `site` (its cookies, by conch-policy's site
    /// function) to task `id`'s errand, after the person allowed that site in it (ERR-4,
    /// PERM-15). Gives how many cookies were lent; nothing for a chat, beside the
    /// person's own Chrome, or when the errand has no context open.
    ///
    /// # Errors
    /// A DevTools failure, or [`BrowserError::Unavailable`] when the main browser can't be
    /// had to copy from.
    pub async fn lend_sign_in(&self, id: &str, site: &str) -> Result<usize, BrowserError> {
        if !self.errand_lends(id) {
            return Ok(0);
        }
        let Ok(site) = conch_policy::Site::of_host(site) else {
            return Ok(0);
        };
        let errands = self.errands();
        let (browser, context) = {
            let state = errands.inner.state.lock().await;
            let Some(context) = state.contexts.get(id).cloned() else {
                return Ok(0);
            };
            let Some(running) = state.running.as_ref() else {
                return Ok(0);
            };
            (running.connection.browser(), context)
        };
        let lent = super::seed::copy_sites(
            self,
            &errands.inner,
            id,
            &browser,
            &context,
            std::slice::from_ref(&site),
        )
        .await?;
        super::seed::note_lent(&errands.inner, id, &[site]);
        tracing::info!(target: "conch_browser", count = lent, "a sign-in was lent to an errand");
        Ok(lent)
    }

    /// Takes `site`'s cookies and local storage back from every errand (ERR-8, AMB-26):
    /// open errands lose them from their contexts (and from the snapshots a crashed one
    /// would come back from, ERR-19), set-aside ones from their sealed sessions. The
    /// embedder calls this when the person revokes an always-allowed site.
    ///
    /// An open errand whose browser fails meanwhile does not stop the rest: every other
    /// errand, open or set aside, is done, and the answer names the ones not reached.
    pub async fn revoke_site(&self, site: &str) -> crate::errands::Revoked {
        let mut revoked = crate::errands::Revoked::default();
        let Ok(site) = conch_policy::Site::of_host(site) else {
            return revoked;
        };
        let errands = match self.inner.side {
            Side::Main => self.errands(),
            Side::Errands => self.clone(),
        };
        let keeps = |cookie: &Value| {
            !cookie["domain"].as_str().is_some_and(|domain| {
                conch_policy::lends_cookie(domain, std::slice::from_ref(&site))
            })
        };
        let (browser, contexts) = {
            let state = errands.inner.state.lock().await;
            let mut contexts: Vec<(String, BrowserContextId)> = state
                .contexts
                .iter()
                .map(|(id, context)| (id.clone(), context.clone()))
                .collect();
            contexts.sort_by_key(|(id, _)| state.errand_used.get(id).copied().unwrap_or(0));
            (
                state.running.as_ref().map(|r| r.connection.browser()),
                contexts,
            )
        };
        if let Some(browser) = browser {
            for (id, context) in contexts {
                if let Err(e) = take_cookies_back(&browser, &context, &keeps).await {
                    tracing::warn!(target: "conch_browser", error = %e, "an open errand's browser did not give a revoked site's cookies back");
                    revoked.unreached.push(id);
                }
            }
        }
        for sites in lock(&errands.inner.errand.lent).values_mut() {
            sites.remove(site.as_str());
        }
        for cookies in lock(&errands.inner.errand.pending).values_mut() {
            cookies.retain(|c| keeps(c));
        }
        // A crashed errand's browser comes back from its snapshot (ERR-19): not with the
        // site's cookies.
        for cookies in lock(&errands.inner.errand.snapshots).values_mut() {
            cookies.retain(|c| keeps(c));
        }
        let keeps_origin = |origin: &str| {
            !url::Url::parse(origin)
                .is_ok_and(|url| conch_policy::lends_origin(&url, std::slice::from_ref(&site)))
        };
        // An errand whose browser failed just now is not asked again for its storage.
        for id in super::storage::take_back(&errands.inner, &keeps_origin, &revoked.unreached).await
        {
            revoked.unreached.push(id);
        }
        errands.revoke_aside(&keeps, &keeps_origin).await;
        revoked
    }
}

/// How long one errand's browser may take over each step of giving a revoked site back
/// before it is named as not reached: the person waits for the answer.
const REVOKE_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// Rewrites `context`'s cookie jar without the cookies `keeps` refuses.
async fn take_cookies_back(
    browser: &Session,
    context: &BrowserContextId,
    keeps: &(dyn Fn(&Value) -> bool + Sync),
) -> Result<(), BrowserError> {
    let jar = browser
        .call_raw_with_timeout(
            "Storage.getCookies",
            json!({ "browserContextId": context }),
            REVOKE_WITHIN,
        )
        .await?;
    let all = jar["cookies"].as_array().cloned().unwrap_or_default();
    if all.iter().all(keeps) {
        return Ok(());
    }
    let kept: Vec<Value> = all
        .iter()
        .filter(|c| keeps(c))
        .map(super::seed::cookie_param)
        .collect();
    browser
        .call_raw_with_timeout(
            "Storage.clearCookies",
            json!({ "browserContextId": context }),
            REVOKE_WITHIN,
        )
        .await?;
    if !kept.is_empty() {
        browser
            .call_raw_with_timeout(
                "Storage.setCookies",
                json!({ "cookies": kept, "browserContextId": context }),
                REVOKE_WITHIN,
            )
            .await?;
    }
    Ok(())
}
