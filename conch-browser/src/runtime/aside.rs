//! Setting errands aside and bringing them back (ERR-11, ERR-12, ERR-13): an interrupted
//! or failed task's errand, and every open errand at shutdown, is put away sealed in
//! `browser.errands.secrets.json` ([`crate::aside`]) with its cookies, its local storage
//! ([`super::storage`]) and its tabs' addresses, and its context closes. When the same
//! conversation next browses (Resume, also after a restart), its tabs reopen in a new
//! context that gets its cookies and local storage back before any of its pages loads. A
//! task that is done forgets its entry (ERR-10).
//!
//! The cap (ERR-15 … ERR-17): a new errand's context is opened under one lock, from the
//! decision that there is room (or the set-aside that makes it) to the context's
//! registration, so errands starting at the same moment never pass the cap together.
//!
//! Deliberately absent: session storage, which an errand does not keep across a
//! set-aside.

use serde_json::{Value, json};

use super::*;
use crate::aside::{AsideFile, AsideTab, SetAside, unix_secs};
use crate::seal::Sealer;
use crate::store::{ConversationTabs, SavedTab};

impl Browser {
    /// The set-aside errands, opened on first need. `None` when the device key can't be
    /// had: errands are then not kept across a set-aside (said in the log).
    async fn aside_file(&self) -> Option<tokio::sync::MutexGuard<'_, Option<Kept>>> {
        let mut kept = self.inner.errand.aside.lock().await;
        if kept.is_none() {
            let main = self.inner.errand.main.as_ref().and_then(Weak::upgrade)?;
            let home = &main.config.home;
            // The keychain may take its time (bounded by KEYCHAIN_WAIT): not on this task.
            let asked = home.clone();
            let opened = tokio::task::spawn_blocking(move || Sealer::open_device(&asked)).await;
            let sealer = match opened {
                Ok(Ok(sealer)) => sealer,
                Err(e) => {
                    tracing::warn!(target: "conch_browser", error = %e, "set-aside errands can't be kept");
                    return None;
                }
                Ok(Err(e)) => {
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

    /// Sets errand `id` aside (ERR-11): its cookies, local storage and tabs are sealed
    /// away and its context closes. Gives whether there was anything to keep.
    pub(super) async fn set_errand_aside(&self, id: &str) -> bool {
        let conv = self.conversation(id);
        let turn = Arc::clone(&conv.lock);
        let turn = turn.lock_owned().await;
        self.set_aside_in_turn(&conv, turn).await
    }

    /// Sets errand `id` aside now if no call of its own runs: gives `None` when one does
    /// (it is busy after all), else whether there was anything to keep.
    async fn set_errand_aside_if_idle(&self, id: &str) -> Option<bool> {
        let conv = self.conversation(id);
        let turn = Arc::clone(&conv.lock).try_lock_owned().ok()?;
        Some(self.set_aside_in_turn(&conv, turn).await)
    }

    /// Sets `conv`'s errand aside while its `_turn` is held (see
    /// [`Browser::set_errand_aside`]).
    async fn set_aside_in_turn(
        &self,
        conv: &Conversation,
        _turn: tokio::sync::OwnedMutexGuard<()>,
    ) -> bool {
        let id = conv.id.as_str();
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
            // Nothing to keep; an open context without tabs still gives its place back.
            if context.is_some() {
                drop(_turn);
                self.close_conversation(id).await;
            }
            return false;
        };
        let storage = match &context {
            Some(context) => match super::storage::read_errand(&self.inner, id, context).await {
                Ok(storage) => storage,
                Err(e) => {
                    tracing::warn!(target: "conch_browser", error = %e, "an errand's local storage could not be read to set it aside; its last snapshot is kept");
                    super::storage::last_known(&self.inner, id)
                }
            },
            // Reopened from a set-aside but not browsed since: its storage still waits.
            None => super::storage::last_known(&self.inner, id),
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
            _ => lock(&self.inner.errand.pending)
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
            storage,
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
        lock(&self.inner.errand.pending).insert(id.to_owned(), errand.cookies);
        super::storage::resume(&self.inner, id, errand.storage);
        let mut state = self.inner.state.lock().await;
        *state.tabs.conversation_mut(id) = tabs;
        state.unrestored.insert(id.to_owned());
        tracing::info!(target: "conch_browser", "a set-aside errand is back");
    }

    /// Marks errand `id` used by its agent now and, when it has no context yet, opens one
    /// within the cap (ERR-15 … ERR-17): at the cap, the errand used least recently that
    /// nobody drives or watches is set aside first (it comes back as it was when next
    /// used). The decision and the new context's registration happen under one lock, so
    /// errands starting at the same moment never pass the cap together. The errands'
    /// browser is started if it does not run.
    ///
    /// # Errors
    /// [`BrowserError::ErrandsBusy`] when every open errand is driven or watched; a
    /// failure to start the browser or make the context.
    pub(super) async fn open_errand(&self, id: &str) -> Result<(), BrowserError> {
        // A browser that died is noticed first: its contexts are gone, and each comes
        // back through the lock below.
        self.ensure_running().await?;
        if self.mark_errand_used(id).await {
            return Ok(());
        }
        let _room = self.inner.errand.room.lock().await;
        self.make_errand_room(id).await?;
        #[cfg(test)]
        if let Some(pause) = &self.inner.config.room_pause {
            pause.decided().await;
        }
        self.ensure_running().await?;
        let generation = self.inner.state.lock().await.generation;
        super::tabs::errand_context(&self.inner, id, generation).await?;
        Ok(())
    }

    /// Marks errand `id` used by its agent now; gives whether its context is open.
    async fn mark_errand_used(&self, id: &str) -> bool {
        let mut state = self.inner.state.lock().await;
        state.use_counter += 1;
        let now = state.use_counter;
        state.errand_used.insert(id.to_owned(), now);
        let at = self.inner.config.clock.now();
        state.errand_used_at.insert(id.to_owned(), at);
        state.contexts.contains_key(id)
    }

    /// Makes room for errand `id`'s new context when the open errands are at the cap
    /// (ERR-16, ERR-17): the errand used least recently that nobody drives or watches is
    /// set aside. Called with the room lock held.
    ///
    /// # Errors
    /// [`BrowserError::ErrandsBusy`] when every open errand is driven or watched.
    async fn make_errand_room(&self, id: &str) -> Result<(), BrowserError> {
        // A victim whose own call starts meanwhile is busy after all: decide again.
        for _ in 0..4 {
            match self.room_for(id).await {
                Ok(Some(other)) => {
                    tracing::info!(target: "conch_browser", "the errands are at their cap; the one used least recently is set aside");
                    if self.set_errand_aside_if_idle(&other).await.is_some() {
                        return Ok(());
                    }
                }
                Ok(None) => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Err(errands_busy())
    }

    /// Whether errand `id` has room for a context: `None` when it has, or the errand to
    /// set aside to make it.
    ///
    /// # Errors
    /// [`BrowserError::ErrandsBusy`] when every open errand is driven or watched.
    async fn room_for(&self, id: &str) -> Result<Option<String>, BrowserError> {
        let open: Vec<(String, u64)> = {
            let state = self.inner.state.lock().await;
            if state.contexts.contains_key(id)
                || state.contexts.len() < self.inner.config.errand_limit
            {
                return Ok(None);
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
            conch_policy::Room::Free => Ok(None),
            conch_policy::Room::SetAside(other) => Ok(Some(other)),
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
    /// AMB-26: 10 minutes by default, [`BrowserConfig::idle_after`]). An errand found
    /// busy (the person at its wheel or watching it, a handoff or a call of its agent in
    /// flight) counts as used now: its idle time starts again when that ends, never
    /// from the agent's last step before it (LAUNCH-12, BE-5).
    pub(super) async fn set_idle_errands_aside(&self) {
        let mut state = self.inner.state.lock().await;
        let now = self.inner.config.clock.now();
        let open: Vec<String> = state.contexts.keys().cloned().collect();
        let mut idle = Vec::new();
        for id in open {
            if self.errand_busy(&id) {
                state.errand_used_at.insert(id, now);
                continue;
            }
            let unused = state.errand_used_at.get(&id).is_none_or(|at| {
                now.duration_since(*at).unwrap_or(Duration::ZERO) >= self.inner.config.idle_after
            });
            if unused {
                idle.push(id);
            }
        }
        drop(state);
        for id in idle {
            if !self.errand_busy(&id) {
                tracing::info!(target: "conch_browser", "an idle errand is set aside");
                self.set_errand_aside(&id).await;
            }
        }
    }

    /// Snapshots errand `id`'s cookies and local storage (ERR-19): what it comes back with
    /// if its browser crashes.
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
            lock(&self.inner.errand.snapshots).insert(id.to_owned(), cookies);
        }
        super::storage::snapshot(&self.inner, id, &context).await;
    }

    /// Whether someone drives or watches errand `id` now: its agent's call runs, the
    /// person took over, or someone watches it live (ERR-16).
    fn errand_busy(&self, id: &str) -> bool {
        let calling = lock(&self.inner.talks.conversation_locks)
            .get(id)
            .is_some_and(|turn| turn.try_lock().is_err());
        let wheel = lock(&self.inner.talks.wheels).get(id).cloned();
        calling
            || wheel.is_some_and(|w| {
                let state = w.state();
                // A handoff or a question waits for the person inside a call of its
                // agent (calls): the person may answer at any time.
                w.watched()
                    || state.person_drives
                    || state.handoff.is_some()
                    || state.calls > 0
                    || w.agent_busy()
            })
    }

    /// Keeps only the cookies `keeps` accepts, and the local storage of the origins
    /// `keeps_origin` accepts, in every set-aside errand (ERR-8).
    pub(super) async fn revoke_aside(
        &self,
        keeps: &(dyn Fn(&Value) -> bool + Sync),
        keeps_origin: &(dyn Fn(&str) -> bool + Sync),
    ) {
        super::storage::revoke(&self.inner, keeps_origin);
        let Some(mut kept) = self.aside_file().await else {
            return;
        };
        let Some(kept) = kept.as_mut() else { return };
        let mut changed = false;
        for name in kept.file.names() {
            let Some(mut errand) = kept.file.get(&name) else {
                continue;
            };
            let before = (errand.cookies.len(), errand.storage.len());
            errand.cookies.retain(|c| keeps(c));
            errand.storage.retain(|s| keeps_origin(&s.origin));
            if (errand.cookies.len(), errand.storage.len()) != before {
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
        lock(&self.inner.errand.pending).remove(id);
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

/// The refusal when every open errand is driven or watched (ERR-17).
fn errands_busy() -> BrowserError {
    BrowserError::ErrandsBusy(
        conch_policy::Refusal::new(conch_policy::RefusalCode::ErrandsBusy).sentence(),
    )
}
