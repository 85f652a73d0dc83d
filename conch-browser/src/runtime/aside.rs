//! Setting errands aside and bringing them back (ERR-11, ERR-12, ERR-13): an interrupted
//! or failed task's errand, and every open errand at shutdown, is put away sealed in
//! `browser.errands.secrets.json` ([`crate::aside`]) with its cookies and its tabs'
//! addresses, and its context closes. When the same conversation next browses (Resume,
//! also after a restart), its tabs reopen in a new context that gets its cookies back
//! before any of its pages loads. A task that is done forgets its entry (ERR-10).
//!
//! Deliberately absent: local storage, which an errand does not keep across a set-aside.

use serde_json::{Value, json};

use super::*;
use crate::aside::{AsideFile, AsideTab, SetAside, unix_secs};
use crate::seal::Sealer;
use crate::store::{ConversationTabs, SavedTab};

/// The sealed file and its sealer, once opened.
#[derive(Debug)]
pub(super) struct Kept {
    sealer: Sealer,
    file: AsideFile,
}

impl Browser {
    /// The set-aside errands, opened on first need. `None` when the device key can't be
    /// had: errands are then not kept across a set-aside (said in the log).
    async fn aside_file(&self) -> Option<tokio::sync::MutexGuard<'_, Option<Kept>>> {
        let mut kept = self.inner.aside.lock().await;
        if kept.is_none() {
            let main = self.inner.main.as_ref().and_then(Weak::upgrade)?;
            let home = &main.config.home;
            let sealer = match Sealer::open(home, None) {
                Ok(sealer) => sealer,
                Err(e) => {
                    tracing::warn!(target: "conch_browser", error = %e, "set-aside errands can't be kept");
                    return None;
                }
            };
            let file = match AsideFile::load(home, &sealer, self.inner.config.clock.as_ref()) {
                Ok(file) => file,
                Err(e) => {
                    // Fails closed: the unreadable file was set aside, never read.
                    tracing::warn!(target: "conch_browser", error = %e, "the set-aside errands did not open; starting without them");
                    match AsideFile::load(home, &sealer, self.inner.config.clock.as_ref()) {
                        Ok(file) => file,
                        Err(_) => return None,
                    }
                }
            };
            *kept = Some(Kept { sealer, file });
        }
        Some(kept)
    }

    /// Sets errand `id` aside (ERR-11): its cookies and tabs are sealed away and its
    /// context closes. Gives whether there was anything to keep.
    pub(super) async fn set_errand_aside(&self, id: &str) -> bool {
        let conv = self.conversation(id);
        let turn = Arc::clone(&conv.lock);
        let _turn = turn.lock().await;
        conv.refresh_titles().await;
        let (browser, context, tabs) = {
            let state = self.inner.state.lock().await;
            (
                state.running.as_ref().map(|r| r.connection.browser()),
                state.contexts.get(id).cloned(),
                state.tabs.conversation(id).cloned(),
            )
        };
        let Some(tabs) = tabs.filter(|t| !t.tabs.is_empty()) else {
            return false;
        };
        let cookies = match (browser, context) {
            (Some(browser), Some(context)) => {
                match browser
                    .call_raw("Storage.getCookies", json!({ "browserContextId": context }))
                    .await
                {
                    Ok(jar) => jar["cookies"].as_array().cloned().unwrap_or_default(),
                    Err(e) => {
                        tracing::warn!(target: "conch_browser", error = %e, "an errand's cookies could not be read to set it aside");
                        Vec::new()
                    }
                }
            }
            // Reopened from a set-aside but not browsed since: its cookies still wait.
            _ => lock(&self.inner.pending)
                .get(id)
                .cloned()
                .unwrap_or_default(),
        };
        let active = tabs
            .active
            .as_ref()
            .and_then(|a| tabs.tabs.iter().position(|t| &t.id == a));
        let errand = SetAside {
            at: unix_secs(self.inner.config.clock.as_ref()),
            cookies,
            tabs: tabs
                .tabs
                .iter()
                .map(|t| AsideTab {
                    url: t.url.clone(),
                    title: t.title.clone(),
                })
                .collect(),
            active,
        };
        if let Some(mut kept) = self.aside_file().await
            && let Some(kept) = kept.as_mut()
        {
            let forgotten = kept.file.put(id, &errand, self.inner.config.clock.as_ref());
            if !forgotten.is_empty() {
                tracing::info!(target: "conch_browser", count = forgotten.len(), "the oldest set-aside errands were forgotten");
            }
            if let Err(e) = kept.file.save(&kept.sealer) {
                tracing::warn!(target: "conch_browser", error = %e, "the set-aside errands could not be saved");
            }
        }
        drop(_turn);
        self.close_conversation(id).await;
        true
    }

    /// Sets every open errand aside (ERR-12: shutdown, repair, update).
    pub(super) async fn set_every_errand_aside(&self) {
        let open: Vec<String> = {
            let state = self.inner.state.lock().await;
            state
                .tabs
                .conversations
                .iter()
                .filter(|(_, tabs)| !tabs.tabs.is_empty())
                .map(|(id, _)| id.clone())
                .collect()
        };
        for id in open {
            self.set_errand_aside(&id).await;
        }
    }

    /// Brings errand `id` back if it was set aside and has nothing open now (Resume,
    /// ERR-11): its tabs are filed to reopen on this call and its cookies wait for its
    /// new context.
    pub(super) async fn resume_errand(&self, id: &str) {
        {
            let state = self.inner.state.lock().await;
            let open = state.contexts.contains_key(id)
                || state
                    .tabs
                    .conversation(id)
                    .is_some_and(|t| !t.tabs.is_empty());
            if open {
                return;
            }
        }
        let errand = match self.aside_file().await {
            Some(kept) => kept.as_ref().and_then(|k| k.file.get(id)),
            None => None,
        };
        let Some(errand) = errand else { return };
        let mut tabs = ConversationTabs::default();
        for (n, tab) in errand.tabs.iter().enumerate() {
            let tab_id = tabs.allocate_id();
            if errand.active == Some(n) {
                tabs.active = Some(tab_id.clone());
            }
            tabs.tabs.push(SavedTab {
                id: tab_id,
                url: tab.url.clone(),
                title: tab.title.clone(),
                opener: None,
                last_used: 0,
            });
        }
        if tabs.active.is_none() {
            tabs.active = tabs.tabs.last().map(|t| t.id.clone());
        }
        lock(&self.inner.pending).insert(id.to_owned(), errand.cookies);
        let mut state = self.inner.state.lock().await;
        *state.tabs.conversation_mut(id) = tabs;
        state.unrestored.insert(id.to_owned());
        tracing::info!(target: "conch_browser", "a set-aside errand is back");
    }

    /// Marks errand `id` used by its agent now and, when it has no context yet and the
    /// open errands are at the cap, makes room (ERR-15 … ERR-17): the errand used least
    /// recently that nobody drives or watches is set aside (it comes back as it was when
    /// next used).
    ///
    /// # Errors
    /// [`BrowserError::ErrandsBusy`] when every open errand is driven or watched.
    pub(super) async fn make_errand_room(&self, id: &str) -> Result<(), BrowserError> {
        let open: Vec<(String, u64)> = {
            let mut state = self.inner.state.lock().await;
            state.use_counter += 1;
            let now = state.use_counter;
            state.errand_used.insert(id.to_owned(), now);
            let at = self.inner.config.clock.now();
            state.errand_used_at.insert(id.to_owned(), at);
            if state.contexts.contains_key(id)
                || state.contexts.len() < self.inner.config.errand_limit
            {
                return Ok(());
            }
            state
                .contexts
                .keys()
                .map(|open| {
                    (
                        open.clone(),
                        state.errand_used.get(open).copied().unwrap_or(0),
                    )
                })
                .collect()
        };
        let open: Vec<conch_policy::OpenErrand> = open
            .into_iter()
            .map(|(open, last_used)| {
                let busy = self.errand_busy(&open);
                conch_policy::OpenErrand {
                    id: open,
                    last_used,
                    busy,
                }
            })
            .collect();
        match conch_policy::make_room(&open, self.inner.config.errand_limit) {
            conch_policy::Room::Free => Ok(()),
            conch_policy::Room::SetAside(other) => {
                tracing::info!(target: "conch_browser", "the errands are at their cap; the one used least recently is set aside");
                self.set_errand_aside(&other).await;
                Ok(())
            }
            conch_policy::Room::Busy(verdict) => {
                Err(BrowserError::ErrandsBusy(verdict.refusal().map_or_else(
                    || {
                        conch_policy::Refusal::new(conch_policy::RefusalCode::ErrandsBusy)
                            .sentence()
                    },
                    conch_policy::Refusal::sentence,
                )))
            }
        }
    }

    /// Sets aside every open errand nobody drove or watched for the idle time (ERR-18,
    /// AMB-26: 10 minutes by default, [`BrowserConfig::idle_after`]).
    pub(super) async fn set_idle_errands_aside(&self) {
        let idle: Vec<String> = {
            let state = self.inner.state.lock().await;
            let now = self.inner.config.clock.now();
            state
                .contexts
                .keys()
                .filter(|id| {
                    state.errand_used_at.get(*id).is_none_or(|at| {
                        now.duration_since(*at).unwrap_or(Duration::ZERO)
                            >= self.inner.config.idle_after
                    })
                })
                .cloned()
                .collect()
        };
        for id in idle {
            if !self.errand_busy(&id) {
                tracing::info!(target: "conch_browser", "an idle errand is set aside");
                self.set_errand_aside(&id).await;
            }
        }
    }

    /// Snapshots errand `id`'s cookies (ERR-19): what it comes back with if its browser
    /// crashes.
    pub(super) async fn snapshot_errand(&self, id: &str) {
        let (browser, context) = {
            let state = self.inner.state.lock().await;
            let Some(context) = state.contexts.get(id).cloned() else {
                return;
            };
            let Some(running) = state.running.as_ref() else {
                return;
            };
            (running.connection.browser(), context)
        };
        if let Ok(jar) = browser
            .call_raw("Storage.getCookies", json!({ "browserContextId": context }))
            .await
        {
            let cookies = jar["cookies"].as_array().cloned().unwrap_or_default();
            lock(&self.inner.snapshots).insert(id.to_owned(), cookies);
        }
    }

    /// Whether someone drives or watches errand `id` now: its agent's call runs, the
    /// person took over, or someone watches it live (ERR-16).
    fn errand_busy(&self, id: &str) -> bool {
        let calling = lock(&self.inner.conversation_locks)
            .get(id)
            .is_some_and(|turn| turn.try_lock().is_err());
        let wheel = lock(&self.inner.wheels).get(id).cloned();
        calling || wheel.is_some_and(|w| w.watched() || w.state().person_drives || w.agent_busy())
    }

    /// Keeps only the cookies `keeps` accepts in every set-aside errand (ERR-8).
    pub(super) async fn revoke_aside(&self, keeps: &(dyn Fn(&Value) -> bool + Sync)) {
        let Some(mut kept) = self.aside_file().await else {
            return;
        };
        let Some(kept) = kept.as_mut() else { return };
        let mut changed = false;
        for name in kept.file.names() {
            let Some(mut errand) = kept.file.get(&name) else {
                continue;
            };
            let before = errand.cookies.len();
            errand.cookies.retain(|c| keeps(c));
            if errand.cookies.len() != before {
                kept.file
                    .put(&name, &errand, self.inner.config.clock.as_ref());
                changed = true;
            }
        }
        if changed && let Err(e) = kept.file.save(&kept.sealer) {
            tracing::warn!(target: "conch_browser", error = %e, "the set-aside errands could not be saved");
        }
    }

    /// Forgets errand `id`'s set-aside entry, if any (ERR-10).
    pub(super) async fn forget_aside(&self, id: &str) {
        lock(&self.inner.pending).remove(id);
        if let Some(mut kept) = self.aside_file().await
            && let Some(kept) = kept.as_mut()
            && kept.file.remove(id)
            && let Err(e) = kept.file.save(&kept.sealer)
        {
            tracing::warn!(target: "conch_browser", error = %e, "the set-aside errands could not be saved");
        }
    }

    /// The names of the conversations with an errand set aside (for status and tests).
    pub async fn errands_set_aside(&self) -> Vec<String> {
        let errands = match self.inner.side {
            Side::Errands => Some(self.clone()),
            Side::Main => Some(self.errands()),
        };
        let Some(errands) = errands else {
            return Vec::new();
        };
        match errands.aside_file().await {
            Some(kept) => kept.as_ref().map(|k| k.file.names()).unwrap_or_default(),
            None => Vec::new(),
        }
    }
}

/// Gives a new context of errand `id` the cookies it had when it was set aside, if it
/// was (ERR-11).
pub(super) async fn restore_cookies(
    inner: &Inner,
    errands: &Session,
    id: &str,
    context: &BrowserContextId,
) -> Result<(), BrowserError> {
    let Some(cookies) = lock(&inner.pending).remove(id) else {
        return Ok(());
    };
    let cookies: Vec<Value> = cookies.iter().map(super::seed::cookie_param).collect();
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
