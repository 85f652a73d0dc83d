//! Choosing and reaching the backend (BE-1, BE-4): the chosen one is connected through
//! the backend seam ([`crate::backend::Driver`]); when it can't be reached, Conch's own
//! local browser stands in and the status says why in one sentence. What connected is
//! then watched and its targets held until the guard's rules are in (LAUNCH-19).
//! [`Browser::repair`] reconnects to the chosen one and ends the stand-in (BE-4). The
//! errands' browser is reached the same way: beside a remote browser its driver borrows
//! the main one's connection (`beside`), and when that gives no context for them it
//! stands in with Conch's own local browser, which Health says once (ERR-21).
//!
//! Deliberately absent: launching and reaching themselves, which are the backends'.

use std::collections::HashMap;
use std::sync::Arc;

use conch_cdp::protocol::target::{SetAutoAttach, SetDiscoverTargets, TargetCreated, TargetType};
use futures_util::{FutureExt, StreamExt};

use super::targets::watch_targets;
use super::*;
use crate::backend::{Backend, ConnectError, Connected, Driver, Facts};
use crate::error::BrowserError;

impl Browser {
    pub(super) async fn ensure_running_locked(
        &self,
        state: &mut State,
    ) -> Result<(), BrowserError> {
        self.owns_home()?;
        state.last_activity = self.inner.config.clock.now();
        refresh_running(&self.inner, state);
        if state.running.is_some() {
            return Ok(());
        }
        let (driver, connected) = self.reach().await?;
        self.install(state, driver.as_ref(), connected).await?;
        // What placing it on a pool left for the conversation's next result (issue 32).
        let chosen = Arc::clone(&lock(&self.inner.backend.chosen));
        for (id, note) in chosen.notes() {
            state.notes.entry(id).or_default().push(note);
        }
        Ok(())
    }

    /// Repairs what the health check found (BE-4): when Conch's own local browser stands
    /// in for the chosen backend, connects to the chosen one again and, once it answers,
    /// ends the stand-in; the saved tabs reopen there on their conversations' next calls.
    /// When it still can't be reached, the local browser stays and the sentence says why
    /// as of now. Every open errand is set aside first (ERR-12). Gives the health check
    /// after the repair.
    ///
    /// # Errors
    /// [`BrowserError::HomeInUse`] when another process owns the home, or a DevTools
    /// failure while the reached browser is being set up.
    pub async fn repair(&self) -> Result<Vec<HealthItem>, BrowserError> {
        self.owns_home()?;
        // Every open errand is set aside first, and comes back when next used (ERR-12).
        let errands = lock(&self.inner.errand.errands).clone();
        if let Some(errands) = &errands {
            errands.set_every_errand_aside().await;
        }
        let mut state = self.inner.state.lock().await;
        refresh_running(&self.inner, &mut state);
        if lock(&self.inner.backend.stand_in).is_some() {
            let chosen = Arc::clone(&lock(&self.inner.backend.chosen));
            if let Some(waiting) = chosen.waiting() {
                lock(&self.inner.backend.status).why = Some(waiting.to_owned());
            }
            match chosen.connect().await {
                Ok(connected) => {
                    // The stand-in goes: its tabs stay saved and reopen on the chosen one.
                    shut_down(&self.inner, &mut state).await;
                    self.record(chosen.backend(), &connected.facts);
                    *lock(&self.inner.backend.stand_in) = None;
                    state.last_activity = self.inner.config.clock.now();
                    self.install(&mut state, chosen.as_ref(), connected).await?;
                }
                Err(ConnectError::Unreachable(why)) => {
                    let sentence = format!(
                        "Conch couldn't reach {} ({why}), so it uses its own local browser.",
                        chosen.shown()
                    );
                    tracing::warn!(target: "conch_browser", why = %why, "repair: the chosen browser still can't be reached");
                    lock(&self.inner.backend.status).why = Some(sentence.clone());
                    *lock(&self.inner.backend.stand_in) = Some(sentence);
                }
                Err(ConnectError::Browser(e)) => return Err(e),
            }
        }
        drop(state);
        // Browsers of the pool taken out are tried again on the next places (issue 32).
        if let Some(pool) = lock(&self.inner.errand.pool).clone() {
            pool.take_all_back();
        }
        // Errands that fell back to Conch's own browser try the chosen one's contexts
        // again on their next call (ERR-21).
        if let Some(errands) = errands
            && lock(&errands.inner.backend.stand_in).is_some()
        {
            Box::pin(errands.shutdown()).await;
            self.aim_errands(&errands);
        }
        Ok(self.health())
    }

    /// Makes `remote` the chosen backend from now on (`None`: Conch's own local browser),
    /// as the person chose it in the settings (BE-2): the running browser is let go (its
    /// tabs stay saved), any stand-in ends, and the next call reaches the new choice,
    /// falling back to the local browser with a sentence when it can't (BE-4).
    ///
    /// # Errors
    /// [`BrowserError::HomeInUse`] when another process owns the home.
    pub async fn choose(&self, remote: Option<&remote::Remote>) -> Result<(), BrowserError> {
        self.owns_home()?;
        let driver = match remote {
            Some(remote) => {
                crate::backend::reached::driver_for(remote, Arc::clone(&self.inner.config.probe))
            }
            None => Arc::clone(&self.inner.backend.local),
        };
        // Errands follow the choice (ERR-6, ERR-21): every open one is set aside and
        // comes back, where the new backend has them, when next used.
        let errands = lock(&self.inner.errand.errands).clone();
        if let Some(errands) = &errands {
            errands.set_every_errand_aside().await;
            Box::pin(errands.shutdown()).await;
        }
        // Every conversation on a pool lets go of its place; a new pool starts empty.
        let old_pool = lock(&self.inner.errand.pool).take();
        if let Some(pool) = old_pool {
            pool.let_all_go().await;
        }
        if self.inner.side == Side::Main {
            let mut config = self.inner.config.clone();
            config.remote = remote.cloned();
            *lock(&self.inner.errand.pool) = super::pool::Pool::of(&config);
        }
        let mut state = self.inner.state.lock().await;
        shut_down(&self.inner, &mut state).await;
        *lock(&self.inner.backend.chosen) = driver;
        *lock(&self.inner.backend.stand_in) = None;
        {
            let mut status = lock(&self.inner.backend.status);
            status.why = None;
            status.state = RunState::Idle;
            if lock(&self.inner.errand.pool).is_some() {
                status.backend = crate::backend::Backend::Pool.as_str();
            }
        }
        drop(state);
        if let Some(errands) = &errands {
            self.aim_errands(errands);
        }
        Ok(())
    }

    /// Starts watching what `driver` connected, and makes it the running browser.
    async fn install(
        &self,
        state: &mut State,
        driver: &dyn Driver,
        connected: Connected,
    ) -> Result<(), BrowserError> {
        // Pages of a browser that went away are never handed over.
        self.inner.pages.forget();
        let abilities = driver.abilities();
        *lock(&self.inner.backend.abilities) = abilities;
        let connection = connected.connection.clone();
        let heal_connection = connected.connection.clone();
        let browser = connection.browser();
        // Every new target, at any depth, is held until the guard's rules are in
        // (LAUNCH-19, NET-8). Subscribed before asking, so none slips past.
        let attached = connection.attached_targets();
        // Errands in a context of the main remote browser borrow its connection, where
        // every target is already auto-attached, held (ERR-21).
        let on_main = driver.on_main();
        self.inner
            .errand
            .on_main
            .store(on_main, std::sync::atomic::Ordering::SeqCst);
        // In the person's own Chrome nothing but Conch's own pages is attached or
        // discovered: its tabs are never listed, read or ruled (BE-13, NET-9).
        let mut launch_page = None;
        if abilities.discovers_targets && !on_main {
            browser.call(&SetAutoAttach::held()).await?;
            // Discovery reports the targets there already, before its answer: the page
            // Conch's own browser opened at launch is among them (issue 31).
            let mut created = browser.subscribe::<TargetCreated>();
            browser.call(&SetDiscoverTargets { discover: true }).await?;
            let adoptable = self.inner.side == Side::Main
                && self.inner.config.headless
                && connected.held.pid().is_some();
            while let Some(Some(event)) = created.next().now_or_never() {
                let Ok(event) = event else { continue };
                let info = event.target_info;
                if adoptable
                    && launch_page.is_none()
                    && info.target_type == TargetType::Page
                    && info.opener_id.is_none()
                    && info.url == "about:blank"
                {
                    launch_page = Some((info.target_id, std::time::Instant::now()));
                }
            }
        }
        let watcher = tokio::spawn(watch_targets(
            Arc::downgrade(&self.inner),
            connection.clone(),
            attached,
        ));
        {
            let mut status = lock(&self.inner.backend.status);
            if status.launches == 0 {
                tokio::spawn(idle_ticker(Arc::downgrade(&self.inner)));
            }
            status.launches += 1;
            status.state = RunState::Running;
        }
        state.running = Some(Running {
            connection,
            held: connected.held,
            since: self.inner.config.clock.now(),
            pages: HashMap::new(),
            watcher,
            launch_page,
            spare: None,
            blank: None,
        });
        state.generation += 1;
        // Contexts of a browser that went away are gone with it.
        state.contexts.clear();
        if self.inner.side == Side::Errands {
            tokio::spawn(heal_when_watched(
                Arc::downgrade(&self.inner),
                heal_connection,
                state.generation,
            ));
        } else {
            // Held awake when it dies, the main browser comes back at once (LAUNCH-8).
            tokio::spawn(super::revive::when_held(
                Arc::downgrade(&self.inner),
                heal_connection,
                state.generation,
            ));
        }
        // Saved tabs reopen when their conversation next calls (LAUNCH-8), each on its
        // own and never under this lock: one slow page must not hold every conversation.
        state.unrestored = state
            .tabs
            .conversations
            .iter()
            .filter(|(_, tabs)| !tabs.tabs.is_empty())
            .map(|(id, _)| id.clone())
            .collect();
        Ok(())
    }

    /// Connects to the chosen backend; when it can't be reached, launches the local one
    /// and says why in the status (BE-4). Gives the driver that connected.
    async fn reach(&self) -> Result<(Arc<dyn Driver>, Connected), BrowserError> {
        let chosen = Arc::clone(&lock(&self.inner.backend.chosen));
        if let Some(waiting) = chosen.waiting() {
            lock(&self.inner.backend.status).why = Some(waiting.to_owned());
        }
        let why = match chosen.connect().await {
            Ok(connected) => {
                self.record(chosen.backend(), &connected.facts);
                *lock(&self.inner.backend.stand_in) = None;
                if chosen.on_main() {
                    // Errands are in the main remote browser again (ERR-21).
                    *lock(&self.inner.errand.runs_here) = None;
                }
                return Ok((chosen, connected));
            }
            Err(ConnectError::Browser(e)) => {
                if let BrowserError::Unavailable(sentence)
                | BrowserError::DownloadFailed(sentence) = &e
                {
                    let mut status = lock(&self.inner.backend.status);
                    status.state = RunState::Unavailable;
                    status.why = Some(sentence.clone());
                }
                return Err(e);
            }
            Err(ConnectError::Unreachable(why)) => why,
        };
        let shown = chosen.shown();
        tracing::warn!(target: "conch_browser", address = %shown, why = %why, "the remote browser can't be reached; using the local one");
        lock(&self.inner.backend.status).backend = "local";
        let local = Arc::clone(&self.inner.backend.local);
        let connected = match local.connect().await {
            Ok(connected) => connected,
            Err(ConnectError::Browser(
                e @ (BrowserError::Unavailable(_) | BrowserError::DownloadFailed(_)),
            )) => {
                let sentence = format!("Conch couldn't reach {shown} ({why}). {e}");
                let mut status = lock(&self.inner.backend.status);
                status.state = RunState::Unavailable;
                status.why = Some(sentence.clone());
                *lock(&self.inner.backend.stand_in) = Some(sentence.clone());
                // A failed download keeps its kind: the person is offered Try again.
                return Err(match e {
                    BrowserError::DownloadFailed(_) => BrowserError::DownloadFailed(sentence),
                    _ => BrowserError::Unavailable(sentence),
                });
            }
            Err(ConnectError::Browser(e)) => return Err(e),
            Err(ConnectError::Unreachable(e)) => return Err(BrowserError::Unavailable(e)),
        };
        self.record(local.backend(), &connected.facts);
        if self.inner.side == Side::Errands {
            // Beside a remote browser that gives no context for them, errands run in
            // Conch's own browser here, and Health says so once (ERR-21).
            let sentence = super::beside::errands_run_here(&why);
            *lock(&self.inner.errand.runs_here) = Some(sentence.clone());
            *lock(&self.inner.backend.stand_in) = Some(sentence);
            return Ok((local, connected));
        }
        let sentence =
            format!("Conch couldn't reach {shown} ({why}), so it uses its own local browser.");
        lock(&self.inner.backend.status).why = Some(sentence.clone());
        *lock(&self.inner.backend.stand_in) = Some(sentence);
        Ok((local, connected))
    }

    /// Records in the status which backend and browser run, and why.
    fn record(&self, backend: Backend, facts: &Facts) {
        let mut status = lock(&self.inner.backend.status);
        status.backend = backend.as_str();
        status.browser = Some(facts.browser.clone());
        status.version = Some(facts.version.clone());
        status.executable.clone_from(&facts.executable);
        status.user_agent = Some(facts.user_agent.clone());
        status.why.clone_from(&facts.why);
    }
}

/// When the errands' browser of `generation` crashes, reopens at once every errand someone
/// watches or whose wheel the person holds (a takeover, a handoff waiting), as it was
/// (ERR-19; on a pool, on another address, BE-4): the others come back on their next
/// call. A browser shut down on purpose is not reopened.
async fn heal_when_watched(inner: Weak<Inner>, connection: Connection, generation: u64) {
    connection.closed().await;
    let Some(inner) = inner.upgrade() else { return };
    let browser = Browser { inner };
    let watched: Vec<String> = {
        let mut state = browser.inner.state.lock().await;
        // Shut down on purpose (the running browser was let go first), or already
        // replaced: nothing to heal.
        if state.generation != generation || state.running.is_none() {
            return;
        }
        let open: Vec<String> = state.contexts.keys().cloned().collect();
        refresh_running(&browser.inner, &mut state);
        let wheels = lock(&browser.inner.talks.wheels);
        open.into_iter()
            .filter(|id| {
                wheels.get(id).is_some_and(|w| {
                    let wheel = w.state();
                    w.watched() || wheel.person_drives || wheel.handoff.is_some()
                })
            })
            .collect()
    };
    for id in watched {
        tokio::spawn(super::tabs::reopen(browser.conversation(&id)));
    }
}
