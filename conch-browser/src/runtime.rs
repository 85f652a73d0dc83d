//! The local browser runtime: one browser shared by every conversation, launched on first
//! need, healed when it dies, shut down when idle (LAUNCH-8, LAUNCH-9, LAUNCH-12,
//! LAUNCH-13, LAUNCH-16), and each conversation's tabs (TAB-2, TAB-3, TAB-5, TAB-6,
//! TAB-9, DATA-9, TOOL-11).
//!
//! [`Browser`] is the handle embedders hold; [`Conversation`] is one conversation's view of
//! it. Browser-wide work (launch, relaunch, shutdown) holds the state lock; a
//! conversation's calls run one at a time under its own lock, while different
//! conversations run in parallel.
//!
//! Every target the browser makes (tabs, popups, frames, workers) is auto-attached and held
//! until the guard's CDP rules are in (LAUNCH-19, NET-8); with a [`GuardConfig`] the browser
//! also sends everything through the guard's proxy (AMB-1, see [`crate::guard`]).
//!
//! Deliberately absent: reading pages and acting on them (they build on
//! [`Conversation::page`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex as StdMutex, PoisonError, Weak};
use std::time::{Duration, Instant, SystemTime};

use conch_cdp::protocol::TargetId;
use conch_cdp::protocol::emulation::{SetDeviceMetricsOverride, SetFocusEmulationEnabled};
use conch_cdp::protocol::page::{
    DomContentEventFired, Enable as PageEnable, LoadEventFired, Navigate,
};
use conch_cdp::protocol::runtime::Evaluate;
use conch_cdp::protocol::target::{
    ActivateTarget, CloseTarget, CreateTarget, GetTargets, SetAutoAttach, SetDiscoverTargets,
    TargetDestroyed, TargetInfo, TargetType,
};
use conch_cdp::{AttachedTarget, AttachedTargets, Connection, Session, SessionId};
use conch_policy::{NetSettings, TabUse};
use futures_util::StreamExt;
use serde::Deserialize;
use tokio::sync::Mutex;

use crate::backend::local::Local;
use crate::backend::{Abilities, Backend, ConnectError, Connected, Driver, Facts, Held};
use crate::clock::{Clock, SystemClock};
use crate::discover::{Probe, SystemProbe};
use crate::error::BrowserError;
use crate::fetch::{FetchConfig, Progress};
use crate::guard::rules::{After, Rules};
use crate::guard::{self, BLOCKED_PAGE_SENTENCE, Blocked, GuardConfig, GuardLog};
use crate::home::{Home, Ownership};
use crate::page::dialog::{self, DialogWatch};
use crate::process::{ProcessTable, SystemProcessTable};
use crate::remote;
use crate::saver::TabsSaver;
use crate::store::{ConversationTabs, SavedTab, TabsFile};
use crate::wheel::Wheel;

/// The most tabs one conversation keeps (TAB-5), as conch-policy decides it.
pub use conch_policy::MAX_TABS;

/// How the runtime is set up. [`BrowserConfig::new`] gives the product's defaults; tests
/// swap the seams (clock, probe, process table).
#[derive(Debug, Clone)]
pub struct BrowserConfig {
    /// Conch's home directory.
    pub home: Home,
    /// The clock idle shutdown reads.
    pub clock: Arc<dyn Clock>,
    /// Where discovery looks.
    pub probe: Arc<dyn Probe + Send + Sync>,
    /// How stale browsers are found and ended.
    pub processes: Arc<dyn ProcessTable + Send + Sync>,
    /// Idle time after which the browser shuts down (LAUNCH-12): 10 minutes.
    pub idle_after: Duration,
    /// How long a navigation waits for the load event before its one retry (AMB-22).
    pub navigation_timeout: Duration,
    /// How long the retry waits for DOMContentLoaded (AMB-22).
    pub retry_timeout: Duration,
    /// How long a new page may take to be attached, ruled and resumed before its creation
    /// fails with [`BrowserError::PageNotReady`] (and the page is closed): 10 s.
    pub attach_timeout: Duration,
    /// Extra browser flags (the guard's proxy, for instance).
    pub extra_args: Vec<String>,
    /// Give the browser the person's HOME instead of its own (AMB-24).
    pub share_home: bool,
    /// Run without a window (the default); `false` shows the browser on the desktop.
    pub headless: bool,
    /// Where to download Chromium from when no browser is found (LAUNCH-4); `None` turns
    /// downloading off.
    pub download: Option<FetchConfig>,
    /// The network guard (AMB-1): a proxy that judges every connection, with
    /// `allowLocalhost`, `allowHosts` and the gateway's address. `None` runs no proxy: only
    /// the CDP rules (schemes, service workers) apply, so every embedder that lets an agent
    /// browse must set it (the gateway does, with its own port).
    pub guard: Option<GuardConfig>,
    /// A browser Conch does not launch, instead of a local one (BE-1): a DevTools address
    /// (BE-8) or a cloud provider's session (BE-6, BE-7). Conch opens and closes only its
    /// own tabs there, and the guard runs in CDP-only mode (no proxy can be put in front
    /// of it). When it can't be reached, Conch uses its own local browser and says why
    /// in the status (BE-4).
    pub remote: Option<remote::Remote>,
    /// Tests: pages whose address holds this text are handed over only after this long,
    /// as by a browser too busy to attach them in time.
    #[cfg(test)]
    pub(crate) hold_pages: Option<(String, Duration)>,
}

impl BrowserConfig {
    /// The product's defaults on `home`.
    pub fn new(home: Home) -> Self {
        BrowserConfig {
            home,
            clock: Arc::new(SystemClock),
            probe: Arc::new(SystemProbe),
            processes: Arc::new(SystemProcessTable::default()),
            idle_after: Duration::from_secs(10 * 60),
            navigation_timeout: Duration::from_secs(30),
            retry_timeout: Duration::from_secs(15),
            attach_timeout: Duration::from_secs(10),
            extra_args: Vec::new(),
            share_home: false,
            headless: true,
            download: FetchConfig::for_this_computer(&SystemProbe),
            // Safe by default: every page goes through the guard, and nothing local is
            // allowed. An embedder names its gateway and allowed local origins here.
            guard: Some(GuardConfig::new(NetSettings::default())),
            remote: None,
            #[cfg(test)]
            hold_pages: None,
        }
    }
}

/// Whether the browser runs (LAUNCH-13).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunState {
    /// Not started yet, or shut down while idle: it starts on the next call.
    Idle,
    /// Running.
    Running,
    /// Downloading Chromium; [`Status::download`] says how far (LAUNCH-4).
    Downloading,
    /// No browser could be had; [`Status::why`] says why.
    Unavailable,
}

/// What runs and why (LAUNCH-13).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The backend actually driving: `local`, `chrome`, `browserbase`, `steel` or `cdp`
    /// (BE-1). `local` when the chosen one could not be reached, and [`Status::why`] says
    /// why (BE-4).
    pub backend: &'static str,
    /// Running, idle or unavailable.
    pub state: RunState,
    /// The browser's name ("Chromium"), once one was chosen.
    pub browser: Option<String>,
    /// Product and version ("HeadlessChrome/156.0.8078.73").
    pub version: Option<String>,
    /// The executable.
    pub executable: Option<std::path::PathBuf>,
    /// The user agent the browser reports (for status only: Conch never rewrites it).
    pub user_agent: Option<String>,
    /// Why this browser and not the first one found, or why none runs, in a sentence.
    pub why: Option<String>,
    /// How many times the browser was (re)launched by this runtime.
    pub launches: u32,
    /// The download's progress, while or after Chromium is downloaded.
    pub download: Option<Progress>,
}

/// A tab of a conversation, as the agent sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabInfo {
    /// `t1`, `t2`, …
    pub id: String,
    /// The page's title.
    pub title: String,
    /// The page's address.
    pub url: String,
    /// Whether it is the conversation's active tab.
    pub active: bool,
}

/// The shared local browser. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Browser {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: BrowserConfig,
    /// This process's lock on the home, held while the runtime lives (issue 12).
    owner: Ownership,
    state: Mutex<State>,
    /// Kept apart from the state so it can be read while a launch or download holds that.
    status: Arc<StdMutex<Status>>,
    /// The backend the person chose (BE-1).
    chosen: Arc<dyn Driver>,
    /// Conch's own local browser: the chosen one, or the stand-in when the chosen one
    /// can't be reached (BE-4).
    local: Arc<dyn Driver>,
    /// What the running backend can do: its guard, whether its targets are discovered,
    /// whether its downloads land here (BE-1).
    abilities: StdMutex<Abilities>,
    /// One lock per conversation: its calls run one at a time (TOOL-11).
    conversation_locks: StdMutex<HashMap<String, Arc<Mutex<()>>>>,
    /// Every refusal of the guard, proxy and CDP rules alike.
    guard_log: Arc<GuardLog>,
    /// The CDP rules every held target gets.
    rules: Rules,
    /// The rules on a browser no proxy stands in front of: every request's address is
    /// judged here (CDP-only mode).
    remote_rules: Rules,
    /// The guard's proxy, started before the first launch and kept across relaunches.
    guard: Arc<Mutex<Option<guard::Running>>>,
    /// Pages Conch created, attached, ruled and resumed, until `create_page` takes them.
    ready: StdMutex<Ready>,
    ready_changed: tokio::sync::Notify,
    /// The dialog watch of every page and out-of-process frame, installed as it attaches
    /// (DLG-1): a dialog is answered whether or not an agent step is on its page.
    dialogs: StdMutex<HashMap<TargetId, DialogWatch>>,
    /// Writes tabs.json in the background, newest state only.
    saver: TabsSaver,
    /// Who has the wheel, per conversation (HAND-8).
    wheels: StdMutex<HashMap<String, Arc<Wheel>>>,
    /// The session each attached child target (frame, worker, popup) was announced on,
    /// while it lives: a blocked request of a frame is its page's, so its conversation's
    /// (issue 12).
    parents: StdMutex<HashMap<SessionId, SessionId>>,
}

#[derive(Debug)]
struct State {
    running: Option<Running>,
    tabs: TabsFile,
    last_activity: SystemTime,
    /// Things that happened outside a call, for the conversation's next result.
    notes: HashMap<String, Vec<String>>,
    /// Counter behind `SavedTab::last_used`.
    use_counter: u64,
    /// Holders that keep the browser awake (a watcher, a person driving).
    awake: usize,
    /// Counts launches, so a page made for one browser is never filed under the next.
    generation: u64,
    /// Conversations whose saved tabs have no page in the running browser yet: each
    /// reopens its own on its next call, one tab at a time, outside the browser-wide lock.
    unrestored: std::collections::HashSet<String>,
}

#[derive(Debug)]
struct Running {
    connection: Connection,
    /// What to let go of: the process Conch launched, or a remote browser's session.
    held: Box<dyn Held>,
    /// Page targets that are conversations' tabs.
    pages: HashMap<TargetId, PageRef>,
    watcher: tokio::task::JoinHandle<()>,
}

#[derive(Debug, Clone)]
struct PageRef {
    conversation: String,
    tab: String,
    session: Session,
}

fn lock<T>(mutex: &StdMutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Browser {
    /// A runtime on `config`. Nothing starts until a conversation needs a page. Tabs saved
    /// by an earlier run are loaded from `tabs.json` and reopen when the browser starts.
    /// The runtime takes the home's lock ([`Home::lock`]) for as long as it lives; when
    /// another process owns the home, [`Browser::owns_home`] says so and nothing launches.
    pub fn new(config: BrowserConfig) -> Browser {
        // One process owns a home: another one's tabs are neither read nor set aside.
        let owner = Ownership::take(&config.home);
        let loaded = match owner.check() {
            Ok(()) => TabsFile::load(&config.home, config.clock.as_ref()),
            Err(_) => Ok(crate::store::Loaded {
                value: TabsFile::default(),
                set_aside: None,
            }),
        };
        let (tabs, why) = match loaded {
            Ok(loaded) => (
                loaded.value,
                loaded.set_aside.map(|s| {
                    format!(
                        "The saved tabs file was unreadable, so it was set aside as {}.",
                        s.moved_to.display()
                    )
                }),
            ),
            // Never started over empty: the file is left as it was (issue 12).
            Err(e) => (
                TabsFile::unreadable(),
                Some(format!(
                    "The saved tabs could not be read ({e}); the file is left as it was, and tabs are not saved until Conch restarts with it readable."
                )),
            ),
        };
        let now = config.clock.now();
        // Least-recently-used order goes on from the saved values (issue 12): a tab used
        // after a restart is newer than every tab used before it.
        let use_counter = tabs
            .conversations
            .values()
            .flat_map(|c| c.tabs.iter().map(|t| t.last_used))
            .max()
            .unwrap_or(0);
        let guard_log = Arc::new(GuardLog::default());
        let rules = guard::rules_for(config.guard.as_ref(), Arc::clone(&guard_log));
        let remote_rules = guard::rules_for(
            config
                .guard
                .as_ref()
                .map(|g| GuardConfig {
                    mode: guard::GuardMode::CdpOnly,
                    ..g.clone()
                })
                .as_ref(),
            Arc::clone(&guard_log),
        );
        let status = Arc::new(StdMutex::new(Status {
            backend: "local",
            state: RunState::Idle,
            browser: None,
            version: None,
            executable: None,
            user_agent: None,
            why,
            launches: 0,
            download: None,
        }));
        let guard = Arc::new(Mutex::new(None));
        let sink = Arc::clone(&status);
        let local: Arc<dyn Driver> = Arc::new(Local {
            home: config.home.clone(),
            probe: Arc::clone(&config.probe),
            processes: Arc::clone(&config.processes),
            extra_args: config.extra_args.clone(),
            share_home: config.share_home,
            headless: config.headless,
            download: config.download.clone(),
            guard_config: config.guard.clone(),
            guard: Arc::clone(&guard),
            guard_log: Arc::clone(&guard_log),
            on_download: Arc::new(move |progress| match progress {
                None => lock(&sink).state = RunState::Downloading,
                Some(progress) => lock(&sink).download = Some(progress),
            }),
        });
        let chosen = match config.remote.as_ref() {
            Some(remote) => crate::backend::reached::driver_for(remote, Arc::clone(&config.probe)),
            None => Arc::clone(&local),
        };
        Browser {
            inner: Arc::new(Inner {
                status,
                chosen,
                local,
                abilities: StdMutex::new(Abilities::LOCAL),
                state: Mutex::new(State {
                    running: None,
                    tabs,
                    last_activity: now,
                    notes: HashMap::new(),
                    use_counter,
                    awake: 0,
                    generation: 0,
                    unrestored: std::collections::HashSet::new(),
                }),
                conversation_locks: StdMutex::new(HashMap::new()),
                guard_log,
                rules,
                remote_rules,
                guard,
                ready: StdMutex::default(),
                ready_changed: tokio::sync::Notify::new(),
                dialogs: StdMutex::new(HashMap::new()),
                saver: TabsSaver::new(config.home.clone()),
                wheels: StdMutex::default(),
                parents: StdMutex::default(),
                owner,
                config,
            }),
        }
    }

    /// Nothing when this process owns its home; else the one sentence saying another
    /// Conch does, and the way out (issue 12). Every launch and wipe checks it.
    ///
    /// # Errors
    /// [`BrowserError::HomeInUse`], or [`BrowserError::Home`] when the lock could not be
    /// taken.
    pub fn owns_home(&self) -> Result<(), BrowserError> {
        self.inner.owner.check().map_err(BrowserError::of_home)
    }

    /// The runtime's configuration.
    pub fn config(&self) -> &BrowserConfig {
        &self.inner.config
    }

    /// The guard's log of refusals (NET-10): ask [`GuardLog::cursor`] before a step and
    /// [`GuardLog::since`] after it.
    pub fn guard_log(&self) -> Arc<GuardLog> {
        Arc::clone(&self.inner.guard_log)
    }

    /// Where the guard's proxy listens, once the browser was launched with one.
    pub async fn guard_proxy(&self) -> Option<std::net::SocketAddr> {
        self.inner
            .guard
            .lock()
            .await
            .as_ref()
            .and_then(guard::Running::proxy_addr)
    }

    /// What runs and why.
    pub async fn status(&self) -> Status {
        // Never waits for a launch or a download in progress.
        if let Ok(mut state) = self.inner.state.try_lock() {
            refresh_running(&self.inner, &mut state);
        }
        lock(&self.inner.status).clone()
    }

    /// One conversation's view of the browser. Its tabs are its own (TAB-9).
    pub fn conversation(&self, id: &str) -> Conversation {
        let lock = Arc::clone(
            lock(&self.inner.conversation_locks)
                .entry(id.to_owned())
                .or_default(),
        );
        Conversation {
            browser: self.clone(),
            id: id.to_owned(),
            lock,
        }
    }

    /// Starts the browser if it does not run (or died), restoring every conversation's tabs.
    ///
    /// # Errors
    /// [`BrowserError::Unavailable`] with one sentence when no browser can be had;
    /// [`BrowserError::HomeInUse`] when another process owns the home.
    pub async fn ensure_running(&self) -> Result<(), BrowserError> {
        let mut state = self.inner.state.lock().await;
        self.ensure_running_locked(&mut state).await
    }

    /// Shuts the browser down if nothing used it for [`BrowserConfig::idle_after`] and
    /// nothing keeps it awake (LAUNCH-12). The runtime calls this every 30 s by itself;
    /// tests call it after moving their clock. Gives whether it shut down.
    pub async fn tick(&self) -> bool {
        let mut state = self.inner.state.lock().await;
        refresh_running(&self.inner, &mut state);
        let now = self.inner.config.clock.now();
        let idle_for = now
            .duration_since(state.last_activity)
            .unwrap_or(Duration::ZERO);
        if state.running.is_none() || state.awake > 0 || idle_for < self.inner.config.idle_after {
            return false;
        }
        tracing::info!(target: "conch_browser", "shutting the idle browser down");
        shut_down(&self.inner, &mut state).await;
        true
    }

    /// Keeps the browser from idling out while the guard lives (someone watches or drives).
    pub async fn keep_awake(&self) -> AwakeGuard {
        self.inner.state.lock().await.awake += 1;
        AwakeGuard {
            inner: Arc::downgrade(&self.inner),
        }
    }

    /// Closes the browser now. Tabs stay saved and reopen on the next call.
    pub async fn shutdown(&self) {
        let mut state = self.inner.state.lock().await;
        shut_down(&self.inner, &mut state).await;
        drop(state);
        self.flush_saves().await;
    }

    /// Waits until every change of tabs so far is in tabs.json (they are written in the
    /// background, a moment after they happen).
    pub async fn flush_saves(&self) {
        self.inner.saver.flush().await;
    }

    /// Signs out of everything (DATA-4): closes the browser and wipes its profile, so no
    /// site's cookies or storage survive. Tabs stay saved and reopen, signed out, on the
    /// next call.
    ///
    /// # Errors
    /// [`BrowserError::Wipe`] when the profile cannot be emptied.
    pub async fn sign_out_everywhere(&self) -> Result<(), BrowserError> {
        self.owns_home()?;
        let mut state = self.inner.state.lock().await;
        shut_down(&self.inner, &mut state).await;
        self.inner
            .config
            .home
            .wipe_profile()
            .map_err(BrowserError::Wipe)
    }

    /// Forgets every conversation's saved tabs, closing those open: a new gateway process
    /// is a new session, whose conversations start with no tabs and number them from t1
    /// (issue 11). Restoring tabs is for a browser that went away under a running process.
    pub async fn forget_saved_tabs(&self) {
        let mut state = self.inner.state.lock().await;
        if let Some(running) = state.running.as_mut() {
            let browser = running.connection.browser();
            for (target_id, _) in running.pages.drain() {
                let _ = browser.call(&CloseTarget { target_id }).await;
            }
        }
        // Cleared, not replaced: tabs that stand in for an unreadable file still never
        // overwrite it.
        state.tabs.conversations.clear();
        state.unrestored.clear();
        self.inner.saver.save(&state.tabs);
    }

    /// Ends conversation `id` for good (its MCP session ended): closes its tabs, forgets
    /// them and its notes, and lets go of its lock, so nothing of it stays in memory, in
    /// the browser or in tabs.json. A later call with the same id starts afresh.
    pub async fn end_conversation(&self, id: &str) {
        let mut state = self.inner.state.lock().await;
        if let Some(running) = state.running.as_mut() {
            let browser = running.connection.browser();
            let targets: Vec<TargetId> = running
                .pages
                .iter()
                .filter(|(_, p)| p.conversation == id)
                .map(|(target, _)| target.clone())
                .collect();
            for target_id in targets {
                // Forgotten first, so the watcher does not report the close as the page's.
                if let Some(page) = running.pages.remove(&target_id) {
                    crate::page::forget_session(&page.session);
                }
                let _ = browser.call(&CloseTarget { target_id }).await;
            }
        }
        let removed = state.tabs.conversations.remove(id).is_some();
        state.unrestored.remove(id);
        state.notes.remove(id);
        if removed {
            self.inner.saver.save(&state.tabs);
        }
        drop(state);
        lock(&self.inner.conversation_locks).remove(id);
        // A handoff or takeover of a conversation that is gone lets its waiters go.
        if let Some(wheel) = lock(&self.inner.wheels).remove(id) {
            wheel.stop();
        }
    }

    /// How many conversations the runtime holds a lock and a wheel for: every one that
    /// was asked for and has not ended ([`Browser::end_conversation`]). For status and
    /// tests: it must not grow with conversations that are over (issue 12).
    pub fn conversations_held(&self) -> usize {
        lock(&self.inner.conversation_locks).len()
    }

    /// Whether the running browser is one Conch did not launch (a DevTools address or a
    /// cloud session): its disk is not this machine's, so its downloads are refused (DL-5).
    pub fn is_remote(&self) -> bool {
        !self.abilities().downloads_to_disk
    }

    /// What the running backend can do (BE-1): Conch's own local browser's abilities
    /// until another one runs.
    pub fn abilities(&self) -> Abilities {
        *lock(&self.inner.abilities)
    }

    /// Who has the wheel of conversation `id` (HAND-8): shared by its agent side and the
    /// person's side.
    pub fn wheel(&self, id: &str) -> Arc<Wheel> {
        Arc::clone(lock(&self.inner.wheels).entry(id.to_owned()).or_default())
    }

    /// The browser process's id, while it runs (for status and tests).
    pub async fn pid(&self) -> Option<u32> {
        let state = self.inner.state.lock().await;
        state.running.as_ref().and_then(|r| r.held.pid())
    }

    async fn ensure_running_locked(&self, state: &mut State) -> Result<(), BrowserError> {
        self.owns_home()?;
        state.last_activity = self.inner.config.clock.now();
        refresh_running(&self.inner, state);
        if state.running.is_some() {
            return Ok(());
        }
        // Pages of a browser that went away are never handed over.
        lock(&self.inner.ready).clear();
        lock(&self.inner.dialogs).clear();
        lock(&self.inner.parents).clear();
        let (driver, connected) = self.reach().await?;
        let abilities = driver.abilities();
        *lock(&self.inner.abilities) = abilities;
        let connection = connected.connection.clone();
        let browser = connection.browser();
        // Every new target, at any depth, is held until the guard's rules are in
        // (LAUNCH-19, NET-8). Subscribed before asking, so none slips past.
        let attached = connection.attached_targets();
        // In the person's own Chrome nothing but Conch's own pages is attached or
        // discovered: its tabs are never listed, read or ruled (BE-13, NET-9).
        if abilities.discovers_targets {
            browser.call(&SetAutoAttach::held()).await?;
            browser.call(&SetDiscoverTargets { discover: true }).await?;
        }
        let watcher = tokio::spawn(watch_targets(
            Arc::downgrade(&self.inner),
            connection.clone(),
            attached,
        ));
        {
            let mut status = lock(&self.inner.status);
            if status.launches == 0 {
                tokio::spawn(idle_ticker(Arc::downgrade(&self.inner)));
            }
            status.launches += 1;
            status.state = RunState::Running;
        }
        state.running = Some(Running {
            connection,
            held: connected.held,
            pages: HashMap::new(),
            watcher,
        });
        state.generation += 1;
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
        let chosen = Arc::clone(&self.inner.chosen);
        if let Some(waiting) = chosen.waiting() {
            lock(&self.inner.status).why = Some(waiting.to_owned());
        }
        let why = match chosen.connect().await {
            Ok(connected) => {
                self.record(chosen.backend(), &connected.facts);
                return Ok((chosen, connected));
            }
            Err(ConnectError::Browser(e)) => {
                if let BrowserError::Unavailable(sentence) = &e {
                    let mut status = lock(&self.inner.status);
                    status.state = RunState::Unavailable;
                    status.why = Some(sentence.clone());
                }
                return Err(e);
            }
            Err(ConnectError::Unreachable(why)) => why,
        };
        let shown = chosen.shown();
        tracing::warn!(target: "conch_browser", address = %shown, why = %why, "the remote browser can't be reached; using the local one");
        lock(&self.inner.status).backend = "local";
        let local = Arc::clone(&self.inner.local);
        let connected = match local.connect().await {
            Ok(connected) => connected,
            Err(ConnectError::Browser(BrowserError::Unavailable(local))) => {
                let sentence = format!("Conch couldn't reach {shown} ({why}). {local}");
                let mut status = lock(&self.inner.status);
                status.state = RunState::Unavailable;
                status.why = Some(sentence.clone());
                return Err(BrowserError::Unavailable(sentence));
            }
            Err(ConnectError::Browser(e)) => return Err(e),
            Err(ConnectError::Unreachable(e)) => return Err(BrowserError::Unavailable(e)),
        };
        self.record(local.backend(), &connected.facts);
        lock(&self.inner.status).why = Some(format!(
            "Conch couldn't reach {shown} ({why}), so it uses its own local browser."
        ));
        Ok((local, connected))
    }

    /// Records in the status which backend and browser run, and why.
    fn record(&self, backend: Backend, facts: &Facts) {
        let mut status = lock(&self.inner.status);
        status.backend = backend.as_str();
        status.browser = Some(facts.browser.clone());
        status.version = Some(facts.version.clone());
        status.executable.clone_from(&facts.executable);
        status.user_agent = Some(facts.user_agent.clone());
        status.why.clone_from(&facts.why);
    }

    async fn with_state<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut state = self.inner.state.lock().await;
        f(&mut state)
    }
}

/// Keeps the browser awake while it lives (see [`Browser::keep_awake`]).
#[derive(Debug)]
pub struct AwakeGuard {
    inner: Weak<Inner>,
}

impl Drop for AwakeGuard {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.upgrade() {
            tokio::spawn(async move {
                let mut state = inner.state.lock().await;
                state.awake = state.awake.saturating_sub(1);
                state.last_activity = inner.config.clock.now();
            });
        }
    }
}

/// Notices a browser that died since the last look: its state becomes "not running", so
/// the next call relaunches it. Tabs stay saved.
fn refresh_running(inner: &Inner, state: &mut State) {
    let dead = match state.running.as_mut() {
        Some(running) => running.connection.is_closed() || running.held.gone(),
        None => false,
    };
    if dead {
        if let Some(running) = state.running.take() {
            running.watcher.abort();
            running.connection.close();
            forget_pages(inner, &running);
        }
        tracing::warn!(target: "conch_browser", "the browser went away; it restarts on the next call");
        lock(&inner.status).state = RunState::Idle;
    }
}

/// Forgets what the runtime and the page readers remembered about `running`'s pages (their
/// isolated worlds, frames, dialog watches, attach order), once that browser is gone.
fn forget_pages(inner: &Inner, running: &Running) {
    crate::page::forget_browser(running.pages.values().map(|p| &p.session));
    lock(&inner.ready).clear();
    lock(&inner.dialogs).clear();
    lock(&inner.parents).clear();
}

async fn shut_down(inner: &Inner, state: &mut State) {
    let Some(running) = state.running.take() else {
        return;
    };
    running.watcher.abort();
    forget_pages(inner, &running);
    let ours: Vec<TargetId> = running.pages.keys().cloned().collect();
    running.held.let_go(running.connection, ours).await;
    lock(&inner.status).state = RunState::Idle;
}

/// Pages attached, ruled and resumed, waiting for the `create_page` that made them.
#[derive(Debug, Default)]
struct Ready {
    /// Each with when it was filed.
    pages: HashMap<TargetId, (Session, Instant)>,
    /// Pages whose `create_page` gave up waiting (and closed them), and since when: one
    /// that attaches after all is dropped, not kept until the next launch (issue 12).
    abandoned: HashMap<TargetId, Instant>,
}

/// How long a page given up on is remembered, should it attach after all.
const ABANDONED_KEPT: Duration = Duration::from_secs(120);

impl Ready {
    fn clear(&mut self) {
        self.pages.clear();
        self.abandoned.clear();
    }

    /// Files a page for its `create_page`; gives it back when that one gave up on it.
    /// Pages filed longer than `unclaimed_after` ago that nobody took (the browser's own
    /// first tab, or one whose creator failed) are dropped: no creator waits that long.
    fn file(
        &mut self,
        target: TargetId,
        session: Session,
        unclaimed_after: Duration,
    ) -> Option<Session> {
        self.abandoned
            .retain(|_, since| since.elapsed() < ABANDONED_KEPT);
        self.pages
            .retain(|_, (_, filed)| filed.elapsed() < unclaimed_after);
        if self.abandoned.remove(&target).is_some() {
            return Some(session);
        }
        self.pages.insert(target, (session, Instant::now()));
        None
    }

    /// The page `target`, for the `create_page` that made it.
    fn take(&mut self, target: &TargetId) -> Option<Session> {
        self.pages.remove(target).map(|(session, _)| session)
    }

    /// `create_page` gives up on `target`: whether it was filed meanwhile or comes later,
    /// it is not kept.
    fn abandon(&mut self, target: &TargetId) {
        if self.pages.remove(target).is_none() {
            self.abandoned.insert(target.clone(), Instant::now());
        }
    }
}

/// Opens a page target for `conversation`'s tab `tab`. The browser attaches it held; the
/// target watcher installs the guard's rules and resumes it (LAUNCH-19), then hands its
/// session over here. The browser-wide lock is not held while the page is made, so other
/// conversations go on meanwhile.
async fn create_page(
    inner: &Inner,
    conversation: &str,
    tab: &str,
    url: &str,
) -> Result<Session, BrowserError> {
    let (browser, generation) = {
        let state = inner.state.lock().await;
        let running = state.running.as_ref().ok_or(BrowserError::NotRunning)?;
        (running.connection.browser(), state.generation)
    };
    // Each tab in a window of its own: a background tab of a shared window gets no frames,
    // so trusted input to it waits until it times out (issue 18). In its own window every
    // conversation's tab is in front of its window and takes input at the same time as
    // every other's.
    let viewport = conch_policy::DEFAULT_VIEWPORT;
    // In the person's own Chrome nothing is auto-attached: the page is made blank,
    // attached by name, ruled, and only then sent to `url` (BE-13, NET-9).
    let own = !lock(&inner.abilities).discovers_targets;
    let created = browser
        .call(&CreateTarget {
            new_window: Some(true),
            width: Some(viewport.width),
            height: Some(viewport.height),
            ..CreateTarget::new(if own { "about:blank" } else { url })
        })
        .await?;
    if own
        && let Err(e) = browser
            .call(&conch_cdp::protocol::target::AttachToTarget::flat(
                created.target_id.clone(),
            ))
            .await
    {
        let _ = browser
            .call(&CloseTarget {
                target_id: created.target_id,
            })
            .await;
        return Err(e.into());
    }
    let Some(session) = take_ready(inner, &created.target_id).await else {
        // Never left behind: a page nobody files would live on unseen, and one that is
        // handed over late is dropped (issue 12).
        lock(&inner.ready).abandon(&created.target_id);
        let _ = browser
            .call(&CloseTarget {
                target_id: created.target_id,
            })
            .await;
        return Err(BrowserError::PageNotReady {
            seconds: inner.config.attach_timeout.as_secs().max(1),
        });
    };
    let mut state = inner.state.lock().await;
    let same_browser = state.generation == generation;
    match state.running.as_mut() {
        Some(running) if same_browser => {
            running.pages.insert(
                created.target_id,
                PageRef {
                    conversation: conversation.to_owned(),
                    tab: tab.to_owned(),
                    session: session.clone(),
                },
            );
            drop(state);
            if own && url != "about:blank" {
                // Its load is waited for by the caller, as a new target's is.
                session.call(&Navigate::new(url)).await?;
            }
            Ok(session)
        }
        _ => Err(BrowserError::NotRunning),
    }
}

fn touch(state: &mut State, conversation: &str, tab: &str) {
    state.use_counter += 1;
    let counter = state.use_counter;
    if let Some(saved) = state.tabs.conversation_mut(conversation).tab_mut(tab) {
        saved.last_used = counter;
    }
}

/// Removes `tab` from the saved tabs; if it was active, its opener comes back to the
/// front (TAB-6), else the tab used most recently.
fn forget_tab(tabs: &mut ConversationTabs, tab: &str) {
    let opener = tabs.tab(tab).and_then(|t| t.opener.clone());
    tabs.tabs.retain(|t| t.id != tab);
    if tabs.active.as_deref() == Some(tab) {
        tabs.active = opener.filter(|o| tabs.tab(o).is_some()).or_else(|| {
            tabs.tabs
                .iter()
                .max_by_key(|t| t.last_used)
                .map(|t| t.id.clone())
        });
    }
}

/// Closes `conversation`'s tab `tab`: its page, and its place in the saved tabs.
async fn close_tab(state: &mut State, conversation: &str, tab: &str) -> Result<(), BrowserError> {
    forget_tab(state.tabs.conversation_mut(conversation), tab);
    if let Some(running) = state.running.as_mut() {
        let target = running
            .pages
            .iter()
            .find(|(_, p)| p.conversation == conversation && p.tab == tab)
            .map(|(id, _)| id.clone());
        if let Some(target) = target {
            // Forgotten first, so the watcher does not report the close as the page's.
            if let Some(page) = running.pages.remove(&target) {
                crate::page::forget_session(&page.session);
            }
            running
                .connection
                .browser()
                .call(&CloseTarget { target_id: target })
                .await?;
        }
    }
    Ok(())
}

/// The tab a popup pushes out of a full conversation (TAB-5): conch-policy's choice, the
/// tab unused longest.
fn tab_to_close_for_popup(tabs: &ConversationTabs) -> Option<String> {
    let uses: Vec<TabUse> = tabs
        .tabs
        .iter()
        .map(|t| TabUse {
            id: t.id.clone(),
            last_used: t.last_used,
        })
        .collect();
    conch_policy::tab_to_close_for_popup(&uses).map(|t| t.id.clone())
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TargetInfoChanged {
    target_info: TargetInfo,
}

/// Waits (bounded) for the watcher to hand over the page `target`, attached and ruled.
async fn take_ready(inner: &Inner, target: &TargetId) -> Option<Session> {
    let deadline = tokio::time::Instant::now() + inner.config.attach_timeout;
    loop {
        let notified = inner.ready_changed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if let Some(session) = lock(&inner.ready).take(target) {
            return Some(session);
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            return None;
        }
    }
}

/// Follows the browser's targets: every attached target gets the guard's rules before it
/// runs (LAUNCH-19), popups become tabs of their opener's conversation (TAB-3, TAB-5),
/// closed pages leave their conversation and give the active tab back to the opener
/// (TAB-6), and addresses and titles are saved as they change (DATA-9).
async fn watch_targets(inner: Weak<Inner>, connection: Connection, attached: AttachedTargets) {
    // Attachments never wait behind the state lock: create_page holds it while it waits
    // for its own page to be ruled, and the events below may need it.
    let _attaching = AbortOnDrop(tokio::spawn(watch_attached(
        inner.clone(),
        connection.clone(),
        attached,
    )));
    let browser = connection.browser();
    let mut destroyed = browser.subscribe::<TargetDestroyed>();
    let mut changed = browser.events("Target.targetInfoChanged");
    // Without discovery (the person's own Chrome) a closed page of Conch's says so by
    // its session ending.
    let mut detached_raw = browser.events("Target.detachedFromTarget");
    loop {
        tokio::select! {
            event = destroyed.next() => {
                let Some(event) = event else { break };
                let Ok(event) = event else { continue };
                let Some(inner) = inner.upgrade() else { return };
                page_destroyed(&inner, &event.target_id).await;
            }
            event = detached_raw.next() => {
                let Some(event) = event else { break };
                let Ok(event) = event.parse::<TargetDestroyed>() else { continue };
                let Some(inner) = inner.upgrade() else { return };
                if !lock(&inner.abilities).discovers_targets {
                    page_destroyed(&inner, &event.target_id).await;
                }
            }
            event = changed.next() => {
                let Some(event) = event else { break };
                let Ok(event) = event.parse::<TargetInfoChanged>() else { continue };
                let Some(inner) = inner.upgrade() else { return };
                page_changed(&inner, &event.target_info).await;
            }
        }
    }
    lost_events(&connection, "target changes").await;
}

/// A stream the runtime must never miss an event of ended while the browser still runs:
/// it fell too far behind (conch-cdp ends such a stream rather than skip events). The
/// runtime's view of the browser can no longer be trusted, so the connection is closed:
/// the browser relaunches on the next call and the tabs are restored.
async fn lost_events(connection: &Connection, what: &str) {
    // Streams end a moment before the connection says it closed.
    let closing = tokio::time::timeout(Duration::from_millis(500), connection.closed()).await;
    if closing.is_err() {
        tracing::warn!(target: "conch_browser", what, "lost the browser's events; restarting it");
        connection.close();
    }
}

/// Ends a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Hands every attached target, at any depth, to [`target_attached`], each on its own task
/// (a popup waits for the state lock).
async fn watch_attached(inner: Weak<Inner>, connection: Connection, mut attached: AttachedTargets) {
    while let Some(target) = attached.next().await {
        let Ok(target) = target else { continue };
        let Some(inner) = inner.upgrade() else { return };
        tokio::spawn(target_attached(inner, target));
    }
    // Targets attached from now on would stay held for good: never unguarded, but never
    // running either.
    lost_events(&connection, "attached targets").await;
}

/// Rules a newly attached target, then lets it run (or holds it for good: a service
/// worker). A page Conch created is handed to `create_page`; a popup becomes a tab first.
async fn target_attached(inner: Arc<Inner>, target: AttachedTarget) {
    let abilities = *lock(&inner.abilities);
    let rules = match abilities.guard {
        guard::GuardMode::CdpOnly => &inner.remote_rules,
        guard::GuardMode::Proxy => &inner.rules,
    };
    let after = guard::rules::install(&target, rules).await;
    if after == After::Refuse {
        // Its rules are not in: it never runs (NET-8). The guard logged it.
        return;
    }
    let info = &target.target_info;
    let page = info.target_type == TargetType::Page;
    if page && info.opener_id.is_some() {
        popup_created(&inner, &target).await;
    }
    // Whose its blocked requests are (issue 12): its own session's, claimed from its
    // network events, and through its parent its page's. Subscribed before it runs.
    let network = matches!(
        info.target_type,
        TargetType::Page | TargetType::Iframe | TargetType::Worker | TargetType::SharedWorker
    );
    if network && let Some(id) = target.session.id().cloned() {
        if let Some(parent) = target.parent.clone() {
            lock(&inner.parents).insert(id.clone(), parent);
        }
        let claims = guard::claims::watch(&target.session, Arc::clone(&inner.guard_log));
        let weak = Arc::downgrade(&inner);
        tokio::spawn(async move {
            claims.await;
            // The session ended: it has no children any more.
            if let Some(inner) = weak.upgrade() {
                lock(&inner.parents).remove(&id);
            }
        });
    }
    let resume = async {
        if network {
            // Sent before the resume, so its first request is seen.
            guard::claims::enable(&target.session).await;
        }
    };
    let resume = async {
        tokio::join!(resume, async {
            if after == After::Resume && target.waiting_for_debugger {
                let _ = target.resume().await;
            }
        });
    };
    if page || info.target_type == TargetType::Iframe {
        // The dialog watch goes in with the rules, before the target runs (DLG-1,
        // LAUNCH-19): its `Page.enable` is sent before the resume, and answered after it.
        let (watch, ()) = tokio::join!(
            dialog::watch(&target.session, Arc::new(dialog::CancelConfirms)),
            resume
        );
        match watch {
            Ok(watch) => {
                let mut dialogs = lock(&inner.dialogs);
                dialogs.retain(|_, w| w.is_watching());
                dialogs.insert(info.target_id.clone(), watch);
            }
            Err(e) => {
                tracing::debug!(target: "conch_browser", error = %e, "no dialog watch on a target");
            }
        }
    } else {
        resume.await;
    }
    if page {
        // After the resume: a held popup shares its opener's renderer and does not answer
        // Page.enable until it runs.
        shape_page(&target.session).await;
        let _ = target.session.call(&PageEnable {}).await;
        if abilities.badge {
            crate::own_chrome::show_badge(&target.session).await;
        }
    }
    if page && info.opener_id.is_none() {
        #[cfg(test)]
        if let Some((marker, hold)) = &inner.config.hold_pages
            && info.url.contains(marker.as_str())
        {
            tokio::time::sleep(*hold).await;
        }
        // A creator waits at most the attach timeout from its CreateTarget's answer.
        let unclaimed_after = inner.config.attach_timeout * 2 + Duration::from_secs(5);
        let late = lock(&inner.ready).file(
            info.target_id.clone(),
            target.session.clone(),
            unclaimed_after,
        );
        if late.is_some() {
            tracing::debug!(target: "conch_browser", "a page attached after its creation gave up; closed");
            let close = CloseTarget {
                target_id: info.target_id.clone(),
            };
            let _ = target.session.connection().browser().call(&close).await;
            return;
        }
        inner.ready_changed.notify_waiters();
    }
}

/// Gives a page the desktop viewport with no panel (AMB-11: 1280×800 at scale 1, so
/// responsive sites show their desktop layout) and emulated focus (its window is rarely
/// the system's front one, yet focus events and typing must work as in front).
async fn shape_page(session: &Session) {
    let viewport = conch_policy::DEFAULT_VIEWPORT;
    let metrics = SetDeviceMetricsOverride {
        width: viewport.width,
        height: viewport.height,
        device_scale_factor: 1.0,
        mobile: false,
    };
    if let Err(e) = session.call(&metrics).await {
        tracing::debug!(target: "conch_browser", error = %e, "the page's viewport could not be set");
    }
    let focus = SetFocusEmulationEnabled { enabled: true };
    if let Err(e) = session.call(&focus).await {
        tracing::debug!(target: "conch_browser", error = %e, "the page's focus could not be emulated");
    }
}

async fn popup_created(inner: &Inner, target: &AttachedTarget) {
    let info = &target.target_info;
    let Some(opener) = info.opener_id.as_ref() else {
        return;
    };
    let mut state = inner.state.lock().await;
    let Some(running) = state.running.as_ref() else {
        return;
    };
    if running.pages.contains_key(&info.target_id) {
        return;
    }
    let Some(opener_ref) = running.pages.get(opener).cloned() else {
        return;
    };
    let conversation = opener_ref.conversation.clone();
    let session = target.session.clone();
    let mut notes = Vec::new();
    // A ninth tab pushes out the one unused longest (TAB-5). The opener is in use: the
    // popup came from it.
    touch(&mut state, &conversation, &opener_ref.tab);
    let tabs = state.tabs.conversation_mut(&conversation);
    if let Some(victim) = tab_to_close_for_popup(tabs) {
        notes.push(format!(
            "This conversation keeps at most {MAX_TABS} tabs, so Conch closed {victim}, the tab unused longest."
        ));
        // The popup, not the victim, is about to be the front tab.
        let _ = close_tab(&mut state, &conversation, &victim).await;
    }
    let tabs = state.tabs.conversation_mut(&conversation);
    let id = tabs.allocate_id();
    tabs.tabs.push(SavedTab {
        id: id.clone(),
        url: info.url.clone(),
        title: info.title.clone(),
        opener: Some(opener_ref.tab.clone()),
        last_used: 0,
    });
    tabs.active = Some(id.clone());
    touch(&mut state, &conversation, &id);
    if let Some(running) = state.running.as_mut() {
        running.pages.insert(
            info.target_id.clone(),
            PageRef {
                conversation: conversation.clone(),
                tab: id.clone(),
                session,
            },
        );
    }
    notes.push(format!("That opened a new tab, {id}."));
    state.notes.entry(conversation).or_default().extend(notes);
    inner.saver.save(&state.tabs);
}

async fn page_destroyed(inner: &Inner, target: &TargetId) {
    lock(&inner.dialogs).remove(target);
    let mut state = inner.state.lock().await;
    let Some(page) = state.running.as_mut().and_then(|r| r.pages.remove(target)) else {
        return;
    };
    crate::page::forget_session(&page.session);
    let tabs = state.tabs.conversation_mut(&page.conversation);
    let opener = tabs.tab(&page.tab).and_then(|t| t.opener.clone());
    tabs.tabs.retain(|t| t.id != page.tab);
    if tabs.active.as_deref() == Some(page.tab.as_str()) {
        // The opener comes back to the front (TAB-6), else the tab used most recently.
        tabs.active = opener.filter(|o| tabs.tab(o).is_some()).or_else(|| {
            tabs.tabs
                .iter()
                .max_by_key(|t| t.last_used)
                .map(|t| t.id.clone())
        });
    }
    let note = format!("Tab {} closed.", page.tab);
    state.notes.entry(page.conversation).or_default().push(note);
    inner.saver.save(&state.tabs);
}

async fn page_changed(inner: &Inner, info: &TargetInfo) {
    let mut state = inner.state.lock().await;
    let Some(page) = state
        .running
        .as_ref()
        .and_then(|r| r.pages.get(&info.target_id))
        .cloned()
    else {
        return;
    };
    let Some(tab) = state
        .tabs
        .conversation_mut(&page.conversation)
        .tab_mut(&page.tab)
    else {
        return;
    };
    if tab.url == info.url && tab.title == info.title {
        return;
    }
    let moved = tab.url != info.url;
    tab.url.clone_from(&info.url);
    tab.title.clone_from(&info.title);
    // A title alone is not worth two fsyncs under the browser-wide lock: a page that
    // changes its title in a loop would stall every conversation. It is written with the
    // next change that matters.
    if moved {
        inner.saver.save(&state.tabs);
    }
}

async fn idle_ticker(inner: Weak<Inner>) {
    loop {
        tokio::time::sleep(Duration::from_secs(30)).await;
        let Some(inner) = inner.upgrade() else { return };
        Browser { inner }.tick().await;
    }
}

/// One conversation's view of the browser: its own tabs, its calls one at a time.
#[derive(Debug, Clone)]
pub struct Conversation {
    browser: Browser,
    id: String,
    lock: Arc<Mutex<()>>,
}

impl Conversation {
    /// The conversation's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Who has the wheel of this conversation (HAND-8).
    pub fn wheel(&self) -> Arc<Wheel> {
        self.browser.wheel(&self.id)
    }

    /// Opens `url` in the active tab, or in a new tab when the conversation has none.
    /// Waits for the page to load, retrying once with a lighter wait (LAUNCH-10).
    ///
    /// # Errors
    /// [`BrowserError::Unavailable`], [`BrowserError::NavigationTimeout`],
    /// [`BrowserError::Navigation`], or a DevTools failure.
    pub async fn open(&self, url: &str) -> Result<TabInfo, BrowserError> {
        let _turn = self.lock.lock().await;
        let active = self.active_or_new().await?;
        self.navigate_tab(&active, url).await?;
        self.tab_info(&active).await
    }

    /// Opens `url` in a new tab and makes it active. Refused past [`MAX_TABS`] (TAB-5).
    ///
    /// # Errors
    /// [`BrowserError::TabLimit`], or as [`Conversation::open`].
    pub async fn new_tab(&self, url: &str) -> Result<TabInfo, BrowserError> {
        let _turn = self.lock.lock().await;
        let id = self.create_tab("about:blank").await?;
        self.navigate_tab(&id, url).await?;
        self.tab_info(&id).await
    }

    /// The conversation's tabs, in the order they were opened.
    ///
    /// # Errors
    /// As [`Browser::ensure_running`].
    pub async fn tabs(&self) -> Result<Vec<TabInfo>, BrowserError> {
        let _turn = self.lock.lock().await;
        self.ensure_ready().await?;
        self.refresh_titles().await;
        Ok(self
            .browser
            .with_state(|state| tab_list(state, &self.id))
            .await)
    }

    /// Takes the titles and addresses of this conversation's tabs from the browser itself
    /// (one browser-level call: a page frozen by its dialog is not asked, SNAP-12), so a
    /// tab's title follows its page even where no change event came.
    async fn refresh_titles(&self) {
        let (browser, mine) = {
            let state = self.browser.inner.state.lock().await;
            let mine: Vec<TargetId> = state.running.as_ref().map_or_else(Vec::new, |r| {
                r.pages
                    .iter()
                    .filter(|(_, p)| p.conversation == self.id)
                    .map(|(id, _)| id.clone())
                    .collect()
            });
            (state.running.as_ref().map(|r| r.connection.browser()), mine)
        };
        let Some(browser) = browser else { return };
        let targets = if !self.browser.abilities().discovers_targets {
            // The person's own Chrome: each of Conch's pages by name, never the list of
            // every tab (BE-13).
            let mut infos = Vec::new();
            for target_id in mine {
                let answer = browser
                    .call_raw_with_timeout(
                        "Target.getTargetInfo",
                        serde_json::json!({ "targetId": target_id }),
                        Duration::from_secs(2),
                    )
                    .await;
                if let Some(info) = answer.ok().and_then(|a| {
                    serde_json::from_value::<TargetInfo>(a["targetInfo"].clone()).ok()
                }) {
                    infos.push(info);
                }
            }
            infos
        } else {
            match browser
                .call_with_timeout(&GetTargets {}, Duration::from_secs(2))
                .await
            {
                Ok(targets) => targets.target_infos,
                Err(_) => return,
            }
        };
        let mut state = self.browser.inner.state.lock().await;
        let Some(running) = state.running.as_ref() else {
            return;
        };
        let fresh: Vec<(String, TargetInfo)> = targets
            .into_iter()
            .filter_map(|info| {
                let page = running.pages.get(&info.target_id)?;
                (page.conversation == self.id).then(|| (page.tab.clone(), info))
            })
            .collect();
        let tabs = state.tabs.conversation_mut(&self.id);
        for (tab, info) in fresh {
            if let Some(saved) = tabs.tab_mut(&tab) {
                saved.url.clone_from(&info.url);
                saved.title.clone_from(&info.title);
            }
        }
    }

    /// Makes `tab` the active tab.
    ///
    /// # Errors
    /// [`BrowserError::NoSuchTab`].
    pub async fn switch(&self, tab: &str) -> Result<TabInfo, BrowserError> {
        let _turn = self.lock.lock().await;
        self.ensure_ready().await?;
        self.browser
            .with_state(|state| {
                let tabs = state.tabs.conversation_mut(&self.id);
                if tabs.tab(tab).is_none() {
                    return Err(BrowserError::NoSuchTab(tab.to_owned()));
                }
                tabs.active = Some(tab.to_owned());
                touch(state, &self.id, tab);
                self.browser.inner.saver.save(&state.tabs);
                Ok(())
            })
            .await?;
        self.bring_to_front(tab).await;
        self.tab_info(tab).await
    }

    /// Closes `tab`; its opener, or else the tab used most recently, becomes active.
    ///
    /// # Errors
    /// [`BrowserError::NoSuchTab`], or a DevTools failure.
    pub async fn close(&self, tab: &str) -> Result<(), BrowserError> {
        let _turn = self.lock.lock().await;
        self.ensure_ready().await?;
        let mut state = self.browser.inner.state.lock().await;
        if state.tabs.conversation_mut(&self.id).tab(tab).is_none() {
            return Err(BrowserError::NoSuchTab(tab.to_owned()));
        }
        close_tab(&mut state, &self.id, tab).await?;
        self.browser.inner.saver.save(&state.tabs);
        let active = state
            .tabs
            .conversation(&self.id)
            .and_then(|t| t.active.clone());
        drop(state);
        if let Some(active) = active {
            self.bring_to_front(&active).await;
        }
        Ok(())
    }

    /// Where the guard's log stands now: give it to [`Conversation::blocked_since`] after
    /// a step (NET-10).
    pub fn blocked_cursor(&self) -> u64 {
        self.browser.inner.guard_log.cursor()
    }

    /// The requests the guard refused after `cursor` that this conversation's own tabs
    /// made (their pages, frames and workers), never another conversation's (NET-10,
    /// issue 12). Waits a moment for the pages to hear of the proxy's refusals.
    pub async fn blocked_since(&self, cursor: u64) -> Vec<Blocked> {
        let inner = &self.browser.inner;
        inner.guard_log.claims_settled(cursor, CLAIMS_WAIT).await;
        let tabs: std::collections::HashSet<SessionId> = {
            let state = inner.state.lock().await;
            state
                .running
                .as_ref()
                .map(|r| {
                    r.pages
                        .values()
                        .filter(|p| p.conversation == self.id)
                        .filter_map(|p| p.session.id().cloned())
                        .collect()
                })
                .unwrap_or_default()
        };
        whose(inner, inner.guard_log.since(cursor), &tabs)
    }

    /// Notes that came up since the last call ("That opened a new tab, t2"), taken once.
    pub async fn take_notes(&self) -> Vec<String> {
        self.browser
            .with_state(|state| state.notes.remove(&self.id).unwrap_or_default())
            .await
    }

    /// The DevTools session of the active tab, for reading and acting on the page.
    ///
    /// # Errors
    /// As [`Browser::ensure_running`], or [`BrowserError::NoTab`].
    pub async fn page(&self) -> Result<Session, BrowserError> {
        self.ensure_ready().await?;
        let state = self.browser.inner.state.lock().await;
        let active = state
            .tabs
            .conversation(&self.id)
            .and_then(|t| t.active.clone())
            .ok_or(BrowserError::NoTab)?;
        session_of(&state, &self.id, &active).ok_or(BrowserError::NoTab)
    }

    /// Evaluates `expression` in the active tab and gives its JSON value (for tests and
    /// simple probes; the agent never runs script).
    ///
    /// # Errors
    /// As [`Conversation::page`], or [`BrowserError::Script`] when it throws.
    pub async fn evaluate(&self, expression: &str) -> Result<serde_json::Value, BrowserError> {
        let _turn = self.lock.lock().await;
        let page = self.page().await?;
        // As if the person had clicked: a script that opens a popup is not blocked.
        let mut evaluate = Evaluate::value(expression);
        evaluate.user_gesture = Some(true);
        let answer = page.call(&evaluate).await?;
        if let Some(details) = answer.exception_details {
            return Err(BrowserError::Script(details.text));
        }
        Ok(answer.result.value.unwrap_or(serde_json::Value::Null))
    }

    /// The conversation's active tab, if it has one.
    async fn active_tab(&self) -> Option<String> {
        self.browser
            .with_state(|state| {
                state
                    .tabs
                    .conversation(&self.id)
                    .and_then(|t| t.active.clone())
            })
            .await
    }

    async fn active_or_new(&self) -> Result<String, BrowserError> {
        self.ensure_ready().await?;
        let active = self.active_tab().await;
        match active {
            Some(tab) => Ok(tab),
            None => self.create_tab("about:blank").await,
        }
    }

    async fn create_tab(&self, url: &str) -> Result<String, BrowserError> {
        self.ensure_ready().await?;
        let id = {
            let mut state = self.browser.inner.state.lock().await;
            let tabs = state.tabs.conversation_mut(&self.id);
            if conch_policy::may_open_tab(tabs.tabs.len()) != conch_policy::Verdict::Allow {
                return Err(BrowserError::TabLimit);
            }
            tabs.allocate_id()
        };
        create_page(&self.browser.inner, &self.id, &id, url).await?;
        let mut state = self.browser.inner.state.lock().await;
        let tabs = state.tabs.conversation_mut(&self.id);
        tabs.tabs.push(SavedTab {
            id: id.clone(),
            url: url.to_owned(),
            title: String::new(),
            opener: None,
            last_used: 0,
        });
        tabs.active = Some(id.clone());
        touch(&mut state, &self.id, &id);
        self.browser.inner.saver.save(&state.tabs);
        Ok(id)
    }

    /// Starts the browser if needed, then reopens this conversation's saved tabs if the
    /// browser that had them went away (LAUNCH-8): each tab on its own, their loads waited
    /// for together and outside the browser-wide lock; a tab that cannot be reopened is
    /// dropped with a note saying so.
    async fn ensure_ready(&self) -> Result<(), BrowserError> {
        self.browser.ensure_running().await?;
        let saved: Vec<SavedTab> = {
            let mut state = self.browser.inner.state.lock().await;
            if !state.unrestored.remove(&self.id) {
                return Ok(());
            }
            state
                .tabs
                .conversation(&self.id)
                .map(|t| t.tabs.clone())
                .unwrap_or_default()
        };
        let inner = &self.browser.inner;
        let mut reopened = Vec::new();
        for tab in saved {
            let url = if tab.url.is_empty() {
                "about:blank"
            } else {
                tab.url.as_str()
            };
            match create_page(inner, &self.id, &tab.id, url).await {
                Ok(session) => reopened.push((tab.id.clone(), session)),
                Err(BrowserError::NotRunning) => return Err(BrowserError::NotRunning),
                Err(e) => {
                    let mut state = inner.state.lock().await;
                    forget_tab(state.tabs.conversation_mut(&self.id), &tab.id);
                    inner.saver.save(&state.tabs);
                    state.notes.entry(self.id.clone()).or_default().push(format!(
                        "Tab {} could not be reopened after the browser restarted ({e}), so it is gone.",
                        tab.id
                    ));
                }
            }
        }
        // The pages load by themselves; wait for them (bounded) so the next read sees
        // them. A page that no longer loads stays open on whatever it shows.
        let within = inner.config.retry_timeout;
        let waits = reopened.iter().map(|(id, session)| async move {
            if !wait_until_loaded(session, within).await {
                tracing::info!(target: "conch_browser", tab = %id, "a restored tab did not finish loading");
            }
        });
        futures_util::future::join_all(waits).await;
        if let Some(active) = self.active_tab().await {
            self.bring_to_front(&active).await;
        }
        Ok(())
    }

    /// Navigates `tab` and waits for its load event; on a timeout, navigates once more and
    /// waits only for DOMContentLoaded (LAUNCH-10, AMB-22).
    async fn navigate_tab(&self, tab: &str, url: &str) -> Result<(), BrowserError> {
        let config = &self.browser.inner.config;
        let session = {
            let mut state = self.browser.inner.state.lock().await;
            touch(&mut state, &self.id, tab);
            session_of(&state, &self.id, tab)
                .ok_or_else(|| BrowserError::NoSuchTab(tab.to_owned()))?
        };
        let cursor = self.browser.inner.guard_log.cursor();
        let first = navigate(&session, url, Wait::Load, config.navigation_timeout).await;
        if self.main_document_blocked(&session, url, cursor).await {
            // The tab shows the guard's page (or the browser's error page for https): say
            // so in words, without the address (NET-10).
            return Ok(());
        }
        if first? {
            return Ok(());
        }
        tracing::info!(target: "conch_browser", "navigation timed out; retrying once with a lighter wait");
        // The first attempt is still loading; stop it, or the retry is aborted by it.
        let _ = session
            .call_raw("Page.stopLoading", serde_json::json!({}))
            .await;
        if navigate(&session, url, Wait::DomContent, config.retry_timeout).await? {
            return Ok(());
        }
        Err(BrowserError::NavigationTimeout {
            seconds: (config.navigation_timeout + config.retry_timeout).as_secs(),
        })
    }

    /// Whether the guard refused the page's own document since `cursor`: the address asked
    /// for, or the one a redirect led to (where the tab now is). If so, the conversation
    /// gets the NET-10 note.
    async fn main_document_blocked(&self, session: &Session, url: &str, cursor: u64) -> bool {
        let inner = &self.browser.inner;
        inner.guard_log.claims_settled(cursor, CLAIMS_WAIT).await;
        let tab: std::collections::HashSet<SessionId> = session.id().cloned().into_iter().collect();
        let since = whose(inner, inner.guard_log.since(cursor), &tab);
        if since.is_empty() {
            return false;
        }
        let mut addresses = vec![url.to_owned()];
        if let Ok(answer) = session.call(&Evaluate::value("location.href")).await
            && let Some(serde_json::Value::String(now)) = answer.result.value
        {
            addresses.push(now);
        }
        let blocked = addresses.iter().any(|address| {
            let Ok(url) = url::Url::parse(address) else {
                return false;
            };
            let Some(host) = url.host_str() else {
                return false;
            };
            let host = guard::canonical_host(host);
            let port = url.port_or_known_default().unwrap_or(0);
            since
                .iter()
                .any(|b| guard::canonical_host(&b.host) == host && b.port == port)
        });
        if blocked {
            self.browser
                .with_state(|state| {
                    let notes = state.notes.entry(self.id.clone()).or_default();
                    if !notes.iter().any(|n| n == BLOCKED_PAGE_SENTENCE) {
                        notes.push(BLOCKED_PAGE_SENTENCE.to_owned());
                    }
                })
                .await;
        }
        blocked
    }

    /// Brings `tab` to the front of its window: a popup opened from it sits in front of it
    /// in the same window, and a page behind another gets no frames and no input.
    async fn bring_to_front(&self, tab: &str) {
        let target = {
            let state = self.browser.inner.state.lock().await;
            state.running.as_ref().and_then(|r| {
                let target = r
                    .pages
                    .iter()
                    .find(|(_, p)| p.conversation == self.id && p.tab == tab)
                    .map(|(id, _)| id.clone())?;
                Some((r.connection.browser(), target))
            })
        };
        if let Some((browser, target_id)) = target
            && let Err(e) = browser.call(&ActivateTarget { target_id }).await
        {
            tracing::debug!(target: "conch_browser", error = %e, "the tab could not be brought to the front");
        }
    }

    async fn tab_info(&self, tab: &str) -> Result<TabInfo, BrowserError> {
        // Titles and addresses arrive as events; read the page itself for a fresh answer.
        let session = {
            let state = self.browser.inner.state.lock().await;
            session_of(&state, &self.id, tab)
                .ok_or_else(|| BrowserError::NoSuchTab(tab.to_owned()))?
        };
        let answer = session
            .call(&Evaluate::value("[document.title, location.href]"))
            .await?;
        let pair = answer.result.value.unwrap_or_default();
        let title = pair[0].as_str().unwrap_or_default().to_owned();
        let url = pair[1].as_str().unwrap_or_default().to_owned();
        let mut state = self.browser.inner.state.lock().await;
        let tabs = state.tabs.conversation_mut(&self.id);
        let active = tabs.active.as_deref() == Some(tab);
        if let Some(saved) = tabs.tab_mut(tab)
            && (saved.url != url || saved.title != title)
        {
            saved.url.clone_from(&url);
            saved.title.clone_from(&title);
            self.browser.inner.saver.save(&state.tabs);
        }
        Ok(TabInfo {
            id: tab.to_owned(),
            title,
            url,
            active,
        })
    }
}

/// What a navigation waits for.
#[derive(Debug, Clone, Copy)]
enum Wait {
    /// The load event (everything, images included).
    Load,
    /// DOMContentLoaded (the document, not its subresources).
    DomContent,
}

/// Navigates `session`'s page to `url` and waits for `wait`, all within `within`. Gives
/// whether it arrived in time; a navigation that fails at once is an error.
async fn navigate(
    session: &Session,
    url: &str,
    wait: Wait,
    within: Duration,
) -> Result<bool, BrowserError> {
    let deadline = tokio::time::Instant::now() + within;
    // Subscribed before navigating, so the event cannot slip past.
    let mut loaded = session.subscribe::<LoadEventFired>();
    let mut ready = session.subscribe::<DomContentEventFired>();
    // Page.navigate answers only once the response starts: an address that never answers
    // holds it, so it shares the deadline.
    let started = match tokio::time::timeout_at(
        deadline,
        session.call_with_timeout(&Navigate::new(url), within),
    )
    .await
    {
        Ok(Ok(started)) => started,
        Ok(Err(e)) if matches!(e.kind(), conch_cdp::ErrorKind::Timeout { .. }) => return Ok(false),
        Ok(Err(e)) => return Err(e.into()),
        Err(_) => return Ok(false),
    };
    if let Some(reason) = started.error_text.filter(|t| !t.is_empty()) {
        return Err(BrowserError::Navigation(reason));
    }
    if started.loader_id.is_none() {
        return Ok(true); // a same-document navigation: nothing more will load
    }
    let arrived = match wait {
        Wait::Load => matches!(
            tokio::time::timeout_at(deadline, loaded.next()).await,
            Ok(Some(_))
        ),
        Wait::DomContent => matches!(
            tokio::time::timeout_at(deadline, ready.next()).await,
            Ok(Some(_))
        ),
    };
    Ok(arrived)
}

/// Waits until `session`'s page has left its first empty document and finished loading,
/// at most `within`; gives whether it did. (A new target starts on an empty document that
/// is already "complete", so the load event alone cannot tell.)
async fn wait_until_loaded(session: &Session, within: Duration) -> bool {
    const LOADED: &str = "document.readyState === 'complete' && location.href !== 'about:blank'";
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let answer = session.call(&Evaluate::value(LOADED)).await;
        if answer.ok().and_then(|a| a.result.value) == Some(serde_json::Value::Bool(true)) {
            return true;
        }
        if tokio::time::Instant::now() + Duration::from_millis(50) > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// How long a step's end waits for pages to claim the proxy's refusals (they hear of them
/// a moment after the proxy logs them).
const CLAIMS_WAIT: Duration = Duration::from_millis(300);

/// The entries of `blocked` made by one of `roots`' sessions or a session under them.
fn whose(
    inner: &Inner,
    blocked: Vec<Blocked>,
    roots: &std::collections::HashSet<SessionId>,
) -> Vec<Blocked> {
    if roots.is_empty() {
        return Vec::new();
    }
    let parents = lock(&inner.parents);
    let under = |session: &SessionId| {
        let mut at = Some(session);
        // Bounded: frames nest, but never without end.
        for _ in 0..64 {
            let Some(now) = at else { return false };
            if roots.contains(now) {
                return true;
            }
            at = parents.get(now);
        }
        false
    };
    blocked
        .into_iter()
        .filter(|b| b.by.iter().any(under))
        .collect()
}

fn session_of(state: &State, conversation: &str, tab: &str) -> Option<Session> {
    state.running.as_ref().and_then(|r| {
        r.pages
            .values()
            .find(|p| p.conversation == conversation && p.tab == tab)
            .map(|p| p.session.clone())
    })
}

fn tab_list(state: &State, conversation: &str) -> Vec<TabInfo> {
    let Some(tabs) = state.tabs.conversation(conversation) else {
        return Vec::new();
    };
    tabs.tabs
        .iter()
        .map(|t| TabInfo {
            id: t.id.clone(),
            title: t.title.clone(),
            url: t.url.clone(),
            active: tabs.active.as_deref() == Some(t.id.as_str()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(dir: &tempfile::TempDir) -> BrowserConfig {
        let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
        config.download = None;
        // The fixtures are on loopback; containment has its own tests.
        config.guard = None;
        config
    }

    /// The page targets the browser has, by address.
    async fn pages(browser: &Browser) -> Vec<String> {
        let session = {
            let state = browser.inner.state.lock().await;
            state.running.as_ref().map(|r| r.connection.browser())
        };
        let Some(session) = session else {
            return Vec::new();
        };
        let targets = session.call(&GetTargets {}).await.unwrap();
        targets
            .target_infos
            .into_iter()
            .filter(|t| t.target_type == TargetType::Page)
            .map(|t| t.url)
            .collect()
    }

    /// Issue 12: a page the browser does not attach and rule in time fails its creation
    /// with `PageNotReady` (not "the browser is not running"); when it is handed over
    /// after all, it is dropped and closed, not kept for a later creation.
    #[tokio::test(flavor = "multi_thread")]
    async fn issue_12_a_page_ready_too_late_fails_as_not_ready_and_is_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = config(&dir);
        config.attach_timeout = Duration::from_millis(400);
        config.hold_pages = Some((String::new(), Duration::from_millis(1500)));
        let browser = Browser::new(config);
        browser.ensure_running().await.unwrap();
        // The browser's own first tab is filed too (held like any page), and nobody takes it.
        tokio::time::sleep(Duration::from_millis(2000)).await;
        let before = pages(&browser).await;
        let filed = || {
            let mut ids: Vec<TargetId> = lock(&browser.inner.ready).pages.keys().cloned().collect();
            ids.sort_by(|a, b| a.0.cmp(&b.0));
            ids
        };
        let first = filed();
        let chat = browser.conversation("c1");

        let failed = chat.open("about:blank").await.unwrap_err();
        assert!(
            matches!(failed, BrowserError::PageNotReady { seconds: 1 }),
            "{failed:?}"
        );
        assert_ne!(failed.to_string(), BrowserError::NotRunning.to_string());
        // Past the hold: the late page was handed over, and dropped.
        tokio::time::sleep(Duration::from_millis(2000)).await;
        assert_eq!(filed(), first, "the late page is kept");
        assert!(lock(&browser.inner.ready).abandoned.is_empty());
        assert_eq!(pages(&browser).await, before, "the late page is left open");
        assert!(chat.tabs().await.unwrap().is_empty());
        browser.shutdown().await;
    }

    /// LAUNCH-8, issue 12: after a crash each saved tab reopens on its own: one that the
    /// browser does not ready in time is dropped with a note naming it, and the others
    /// come back at their addresses under their ids.
    #[tokio::test(flavor = "multi_thread")]
    async fn launch_8_a_tab_that_fails_to_reopen_is_a_note_and_the_rest_come_back() {
        let server = conch_fixtures::FixtureServer::start().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut config = config(&dir);
        config.attach_timeout = Duration::from_millis(1500);
        config.hold_pages = Some(("never-reopens".to_owned(), Duration::from_secs(4)));
        let browser = Browser::new(config);
        let chat = browser.conversation("c1");
        chat.open(&server.url("basic.html")).await.unwrap();
        chat.new_tab(&server.url("tabs-a.html?never-reopens"))
            .await
            .unwrap();
        chat.new_tab(&server.url("tabs-b.html")).await.unwrap();
        let before = chat.tabs().await.unwrap();
        assert_eq!(before.len(), 3);

        let pid = browser.pid().await.unwrap();
        let killed = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let mut gone = false;
        for _ in 0..100 {
            if browser.status().await.state != RunState::Running {
                gone = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(gone, "the browser did not die");

        let after = chat.tabs().await.unwrap();
        let ids: Vec<(&str, &str)> = after
            .iter()
            .map(|t| (t.id.as_str(), t.url.as_str()))
            .collect();
        assert_eq!(
            ids,
            [
                ("t1", before[0].url.as_str()),
                ("t3", before[2].url.as_str())
            ]
        );
        let notes = chat.take_notes().await;
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("Tab t2 could not be reopened after the browser restarted")),
            "{notes:?}"
        );
        assert_eq!(
            chat.evaluate("document.title").await.unwrap(),
            "Tab B",
            "the active tab is back"
        );
        browser.shutdown().await;
    }
}
