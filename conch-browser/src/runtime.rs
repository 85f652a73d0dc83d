//! The browser runtime: one browser shared by every conversation, reached on first need,
//! healed when it dies, shut down when idle (LAUNCH-8, LAUNCH-9, LAUNCH-12, LAUNCH-13,
//! LAUNCH-16), and each conversation's tabs (TAB-2, TAB-3, TAB-5, TAB-6, TAB-9, DATA-9,
//! TOOL-11).
//!
//! [`Browser`] is the handle embedders hold, and its state lives in `state`;
//! [`Conversation`] is one conversation's view of it. Browser-wide work (launch, relaunch,
//! shutdown) holds the state lock; a conversation's calls run one at a time under its own
//! lock, while different conversations run in parallel. One job per file, in layers that
//! import one way only (`LAYERS`, which a test checks; lowest first): `state` holds the
//! shared state in owned parts at the bottom; above it `storage`, `seed` and `navigate` (loads pages); `targets` watches
//! the browser's targets; `tabs` holds tabs and conversations; `aside` and `lend` keep
//! and lend errands; and `reach` chooses and reaches the backend through the seam
//! (`crate::backend`) and falls back to the local browser (BE-1, BE-4).
//!
//! Every target the browser makes (tabs, popups, frames, workers) is auto-attached and held
//! until the guard's CDP rules are in (LAUNCH-19, NET-8); with a [`GuardConfig`] the browser
//! also sends everything through the guard's proxy (AMB-1, see [`crate::guard`]).
//!
//! Deliberately absent: reading pages and acting on them (they build on
//! [`Conversation::page`]).

use crate::sync::lock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex as StdMutex, Weak};
use std::time::{Duration, SystemTime};

use conch_cdp::protocol::target::{CloseTarget, DisposeBrowserContext};
use conch_cdp::protocol::{BrowserContextId, TargetId};
use conch_cdp::{Connection, Session, SessionId};
use conch_policy::NetSettings;
use tokio::sync::Mutex;

use crate::backend::local::Local;
use crate::backend::{Abilities, Driver, Held};
use crate::clock::{Clock, SystemClock};
use crate::discover::{Probe, SystemProbe};
use crate::errands::{ConversationKind, TaskState};
use crate::error::BrowserError;
use crate::fetch::{FetchConfig, Progress};
use crate::guard::{self, Blocked, GuardConfig, GuardLog};
use crate::home::{Home, Ownership};
use crate::process::{ProcessTable, SystemProcessTable};
use crate::remote;
use crate::saver::TabsSaver;
use crate::store::TabsFile;
use crate::wheel::Wheel;

mod aside;
mod beside;
mod lend;
mod navigate;
mod own;
mod pool;
mod reach;
mod renew;
mod repair;
mod revive;
mod seed;
mod state;
mod storage;
mod tabs;
mod targets;
#[cfg(test)]
pub(crate) mod testing;

pub use beside::{ERRANDS_BESIDE_OWN_CHROME, errands_run_here};
pub use own::{MOVED_APART, MOVED_BACK, OwnBrowser};
pub use pool::waiting_sentence;
pub use repair::{RepairStep, StepOutcome};
pub use state::Conversation;
use state::{
    Backends, BorrowedContexts, ErrandParts, Inner, Kept, PageRef, Pages, Running, Side, State,
    Talks,
};

/// A pool's placements, as the state below the pool's layer holds them (issue 32).
type PoolRef = Arc<pool::Pool>;

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
    /// The most errand contexts open at once (ERR-15): conch-policy's `errand_limit` of
    /// this computer's total memory (2 to 6). At the cap, the errand used least recently
    /// that nobody drives or watches is set aside to make room (ERR-16).
    pub errand_limit: usize,
    /// On a pool (issue 32), how long a conversation waits for a free browser when every
    /// address is at its cap, before it is refused with a sentence: 2 minutes.
    pub pool_wait: Duration,
    /// Receives `browser.status` while Chromium downloads, with its progress (LAUNCH-4,
    /// PROTO-2), as conversation `""`: the status is the whole browser's. `None` tells
    /// only [`Browser::status`].
    pub events: Option<Arc<dyn crate::protocol::EventSink>>,
    /// Tests: pages whose address holds this text are handed over only after this long,
    /// as by a browser too busy to attach them in time.
    #[cfg(test)]
    pub(crate) hold_pages: Option<(String, Duration)>,
    /// Tests: waited on between the errand cap's decision and the new errand's
    /// registration (ERR-15), so two starters can be made to meet there.
    #[cfg(test)]
    pub(crate) room_pause: Option<Arc<crate::errands::RoomPause>>,
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
            events: None,
            share_home: false,
            headless: true,
            download: FetchConfig::for_this_computer(&SystemProbe),
            // Safe by default: every page goes through the guard, and nothing local is
            // allowed. An embedder names its gateway and allowed local origins here.
            guard: Some(GuardConfig::new(NetSettings::default())),
            remote: None,
            errand_limit: conch_policy::errand_limit(total_memory()),
            pool_wait: Duration::from_secs(120),
            #[cfg(test)]
            hold_pages: None,
            #[cfg(test)]
            room_pause: None,
        }
    }
}

/// This computer's total physical memory in bytes (AMB-26), from `/proc/meminfo` on
/// Linux; 0 where it can't be read, which the cap counts as its smallest.
fn total_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|line| line.strip_prefix("MemTotal:"))
                .and_then(|rest| {
                    rest.trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse::<u64>()
                        .ok()
                })
        })
        .map_or(0, |kib| kib.saturating_mul(1024))
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

/// Which health check an item is (BE-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HealthCheck {
    /// Whether the chosen backend drives the browser (`browser-backend`).
    BrowserBackend,
    /// Where tasks browse, when it is not where the chosen backend is: Conch's own local
    /// browser beside a remote one that gives no separate contexts, or beside your own
    /// Chrome (`browser-errands`, ERR-6, ERR-21).
    BrowserErrands,
    /// A task's browser came back after a crash (`browser-errands-reopened`): present for
    /// ten minutes after a crashed errand was reopened from its snapshot (ERR-19).
    ErrandsReopened,
    /// Where the device key that seals Conch's secrets is kept (`browser-device-key`, BE-3):
    /// well in the system keychain, a note when a key file holds it (keys protected by
    /// file permissions only), failing when no key could be had. Present once a sealed
    /// file was opened in this process.
    DeviceKey,
}

impl HealthCheck {
    /// The check's stable id, as the health report names it.
    pub fn id(self) -> &'static str {
        match self {
            HealthCheck::BrowserBackend => "browser-backend",
            HealthCheck::BrowserErrands => "browser-errands",
            HealthCheck::ErrandsReopened => "browser-errands-reopened",
            HealthCheck::DeviceKey => "browser-device-key",
        }
    }
}

/// How a health check stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HealthState {
    /// All is well.
    Ok,
    /// Something is wrong, in one sentence; [`Browser::repair`] may mend it.
    Failing(String),
    /// All is well, and there is something the person should hear of, in one sentence:
    /// where tasks browse (ERR-6, ERR-21), or "Reopened a task's browser as it was."
    /// (ERR-19).
    Note(String),
}

/// One item of the health check (BE-4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthItem {
    /// Which check.
    pub check: HealthCheck,
    /// How it stands.
    pub state: HealthState,
}

/// How the device key's place stands for health (BE-3).
fn device_key_state(place: Result<crate::seal::KeyPlace, String>) -> HealthState {
    match place {
        Ok(crate::seal::KeyPlace::Keychain) => HealthState::Ok,
        Ok(file @ crate::seal::KeyPlace::KeyFile(_)) => HealthState::Note(format!(
            "Keys are protected by file permissions only: Conch's device key is in {file}."
        )),
        Err(why) => HealthState::Failing(format!("Conch's sealed secrets can't be opened: {why}.")),
    }
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

/// What the errands' browser shares with the main one: the home's lock, and the guard
/// (its proxy and its log of refusals, ERR-22).
#[derive(Debug)]
struct ErrandsOf {
    /// The main browser, whose always-allowed sites' cookies seed each errand (ERR-3).
    main: Weak<Inner>,
    owner: Ownership,
    guard: Arc<Mutex<Option<guard::Running>>>,
    guard_log: Arc<GuardLog>,
    borrowed: BorrowedContexts,
    /// The set-aside errands' sealed file, shared with its other users (a pool's
    /// conversations, one writer); `None` opens one of its own.
    aside: Option<Arc<Mutex<Option<Kept>>>>,
}

impl Browser {
    /// A runtime on `config`. Nothing starts until a conversation needs a page. Tabs saved
    /// by an earlier run are loaded from `tabs.json` and reopen when the browser starts.
    /// The runtime takes the home's lock ([`Home::lock`]) for as long as it lives; when
    /// another process owns the home, [`Browser::owns_home`] says so and nothing launches.
    pub fn new(config: BrowserConfig) -> Browser {
        Browser::build(config, None)
    }

    /// The runtime on `config`: the main one, or with `errands` (the main one's lock,
    /// guard proxy and guard log) the errands' browser, whose tabs are never read from
    /// or written to `tabs.json` (ERR-20, ERR-22).
    fn build(config: BrowserConfig, errands: Option<&ErrandsOf>) -> Browser {
        let side = if errands.is_some() {
            Side::Errands
        } else {
            Side::Main
        };
        // One process owns a home: another one's tabs are neither read nor set aside.
        let owner = match errands {
            Some(main) => main.owner.clone(),
            None => Ownership::take(&config.home),
        };
        let loaded = match owner.check() {
            Ok(()) if side == Side::Main => TabsFile::load(&config.home, config.clock.as_ref()),
            _ => Ok(crate::store::Loaded {
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
        let guard_log = errands.map_or_else(
            || Arc::new(GuardLog::default()),
            |main| Arc::clone(&main.guard_log),
        );
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
        // On a pool nothing runs here: each conversation's browser is placed on it.
        let on_pool =
            side == Side::Main && matches!(config.remote, Some(remote::Remote::Pool { .. }));
        let status = Arc::new(StdMutex::new(Status {
            backend: if on_pool { "pool" } else { "local" },
            state: RunState::Idle,
            browser: None,
            version: None,
            executable: None,
            user_agent: None,
            why,
            launches: 0,
            download: None,
        }));
        let guard = errands.map_or_else(
            || Arc::new(Mutex::new(None)),
            |main| Arc::clone(&main.guard),
        );
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
            on_download: {
                let events = config.events.clone();
                Arc::new(move |progress| {
                    match progress {
                        None => lock(&sink).state = RunState::Downloading,
                        Some(progress) => lock(&sink).download = Some(progress),
                    }
                    if let Some(events) = &events {
                        events.send("", download_status(progress));
                    }
                })
            },
            fresh_profile: side == Side::Errands,
        });
        let chosen = match config.remote.as_ref() {
            Some(remote) => crate::backend::reached::driver_for(remote, Arc::clone(&config.probe)),
            None => Arc::clone(&local),
        };
        Browser {
            inner: Arc::new(Inner {
                awake: std::sync::atomic::AtomicUsize::new(0),
                state: Mutex::new(State {
                    running: None,
                    tabs,
                    last_activity: now,
                    notes: HashMap::new(),
                    use_counter,
                    generation: 0,
                    unrestored: std::collections::HashSet::new(),
                    contexts: HashMap::new(),
                    errand_used: HashMap::new(),
                    errand_used_at: HashMap::new(),
                }),
                saver: if side == Side::Main {
                    TabsSaver::new(config.home.clone())
                } else {
                    TabsSaver::off(config.home.clone())
                },
                side,
                backend: Backends {
                    status,
                    chosen: StdMutex::new(chosen),
                    local,
                    stand_in: StdMutex::new(None),
                    abilities: StdMutex::new(Abilities::LOCAL),
                    guard,
                    guard_log,
                    rules,
                    remote_rules,
                },
                pages: Pages {
                    ready: StdMutex::default(),
                    ready_changed: tokio::sync::Notify::new(),
                    dialogs: StdMutex::new(HashMap::new()),
                    parents: StdMutex::default(),
                },
                talks: Talks {
                    conversation_locks: StdMutex::new(HashMap::new()),
                    wheels: StdMutex::default(),
                    kinds: StdMutex::default(),
                    own: StdMutex::default(),
                },
                errand: ErrandParts {
                    errands: StdMutex::new(None),
                    main: errands.map(|main| main.main.clone()),
                    borrowed: errands.map_or_else(Arc::default, |main| Arc::clone(&main.borrowed)),
                    on_main: std::sync::atomic::AtomicBool::new(false),
                    runs_here: StdMutex::new(None),
                    aside: errands.and_then(|e| e.aside.clone()).unwrap_or_default(),
                    pool: StdMutex::new(if side == Side::Main {
                        pool::Pool::of(&config)
                    } else {
                        None
                    }),
                    pending: StdMutex::default(),
                    snapshots: StdMutex::default(),
                    snapshot_due: StdMutex::default(),
                    lent: StdMutex::default(),
                    storage: StdMutex::default(),
                    room: Mutex::new(()),
                },
                revival: state::Revival::default(),
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
        Arc::clone(&self.inner.backend.guard_log)
    }

    /// Where the guard's proxy listens, once the browser was launched with one.
    pub async fn guard_proxy(&self) -> Option<std::net::SocketAddr> {
        self.inner
            .backend
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
        lock(&self.inner.backend.status).clone()
    }

    /// The health check (BE-4): `browser-backend` is ok, or says in one sentence why the
    /// chosen backend can't be reached and Conch's own local browser stands in.
    /// [`Browser::repair`] mends it. Once a task browses, `browser-errands` says once
    /// when tasks run in Conch's own local browser instead of the chosen backend: beside
    /// your own Chrome, signed in nowhere (ERR-6), or beside a remote browser that gives
    /// no separate contexts (ERR-21). For ten minutes after a crashed task's browser was
    /// reopened from its snapshot, `browser-errands-reopened` says so (ERR-19); it then
    /// clears by itself, whoever read it.
    pub fn health(&self) -> Vec<HealthItem> {
        let backend = match lock(&self.inner.backend.stand_in).clone() {
            None => match self.pool().and_then(|pool| pool.health()) {
                // Some of the pool's browsers taken out (issue 32).
                Some(why) => HealthState::Failing(why),
                None => HealthState::Ok,
            },
            Some(why) => HealthState::Failing(why),
        };
        let mut items = vec![HealthItem {
            check: HealthCheck::BrowserBackend,
            state: backend,
        }];
        // Said once, however many errands there are (ERR-6, ERR-21).
        let errands = lock(&self.inner.errand.errands).clone();
        if let Some(why) = errands
            .as_ref()
            .and_then(|e| lock(&e.inner.errand.runs_here).clone())
        {
            items.push(HealthItem {
                check: HealthCheck::BrowserErrands,
                state: HealthState::Note(why),
            });
        }
        if let Some(errands) = errands
            && storage::reopened_lately(&errands.inner, self.inner.config.clock.now())
        {
            items.push(HealthItem {
                check: HealthCheck::ErrandsReopened,
                state: HealthState::Note(REOPENED.to_owned()),
            });
        }
        if let Some(place) = crate::seal::last_key_place(&self.inner.config.home) {
            items.push(HealthItem {
                check: HealthCheck::DeviceKey,
                state: device_key_state(place),
            });
        }
        items
    }

    /// One conversation's view of the browser. Its tabs are its own (TAB-9). A task's is
    /// in its errand: a browser context of its own in the errands' browser (ERR-1).
    pub fn conversation(&self, id: &str) -> Conversation {
        if let Some(errands) = self.errands_for(id) {
            return errands.conversation(id);
        }
        Conversation {
            browser: self.clone(),
            id: id.to_owned(),
            lock: self.inner.talks.lock_of(id),
        }
    }

    /// Says what conversation `id` is (ERR-1): the embedder calls this when the
    /// conversation's turn builds its tools, before it browses. A task browses in an
    /// errand of its own from then on and can't leave it; a chat stays in the main context
    /// (ERR-2). Saying `Chat` of a task changes nothing: only [`Browser::task_changed`] or
    /// [`Browser::chat_deleted`] ends an errand.
    pub fn set_kind(&self, id: &str, kind: ConversationKind) {
        if self.inner.side == Side::Errands || kind == ConversationKind::Chat {
            return;
        }
        let apart = self.browses_apart(id);
        lock(&self.inner.talks.kinds).insert(id.to_owned(), ConversationKind::Task);
        if !apart {
            // A chat that becomes a task leaves no tab in the main context (ERR-1).
            self.moved_apart(id);
        }
    }

    /// What conversation `id` is (ERR-1): a chat unless the embedder said it is a task.
    pub fn kind(&self, id: &str) -> ConversationKind {
        if self.inner.side == Side::Errands {
            return ConversationKind::Task;
        }
        lock(&self.inner.talks.kinds)
            .get(id)
            .copied()
            .unwrap_or_default()
    }

    /// How task `id` stands, as the embedder reports it (ERR-10, ERR-11). When it is over
    /// (done, unverified or stopped) its errand's context closes and its tabs and
    /// set-aside session are forgotten; an interrupted or failed task's errand is set
    /// aside, sealed, and comes back when the same conversation browses again (Resume),
    /// also after a restart.
    pub async fn task_changed(&self, id: &str, state: TaskState) {
        let Some(errands) = self.errands_for(id) else {
            return;
        };
        if state.is_over() {
            self.end_conversation(id).await;
        } else if matches!(state, TaskState::Interrupted | TaskState::Failed) {
            errands.set_errand_aside(id).await;
            // On a pool its browser is its own: letting go gives its place back now, not
            // after the idle time (issue 32, ERR-15); it is placed again when next used.
            if self.pool().is_some() {
                Box::pin(errands.shutdown()).await;
            }
        }
    }

    /// Chat `id` was deleted: its tabs close and are forgotten, and when it is a task its
    /// errand's context closes too (ERR-10).
    pub async fn chat_deleted(&self, id: &str) {
        self.end_conversation(id).await;
    }

    /// The pool each conversation is placed on, when the chosen backend is one (issue 32).
    fn pool(&self) -> Option<Arc<pool::Pool>> {
        lock(&self.inner.errand.pool).clone()
    }

    /// Where conversation `id` stands while it waits for a free browser of a pool (issue
    /// 32, ERR-15): the waiting sentence ("Waiting for a free browser: 2 ahead.") while
    /// it waits, `None` when it does not; the agent's door sends each change as
    /// progress. `None` altogether when the backend is not a pool.
    pub fn waits_for_place(
        &self,
        id: &str,
    ) -> Option<tokio::sync::watch::Receiver<Option<String>>> {
        self.pool().map(|pool| pool.waits(id))
    }

    /// The errands' browser when conversation `id` is a task (ERR-1), made on first need.
    fn errands_for(&self, id: &str) -> Option<Browser> {
        if self.inner.side == Side::Errands {
            return None;
        }
        // On a pool every conversation browses in a browser of its own (issue 32).
        if let Some(pool) = self.pool() {
            return Some(pool.browser_for(self, id));
        }
        if !self.browses_apart(id) {
            return None;
        }
        Some(self.errands())
    }

    /// The errands' browser (ERR-20): made once, launched when its first page is needed,
    /// on its own folder under `<home>/browser/errands`, with a profile emptied at every
    /// launch and contexts that never touch the disk; behind the main one's guard (ERR-22).
    fn errands(&self) -> Browser {
        let mut errands = lock(&self.inner.errand.errands);
        if let Some(browser) = errands.as_ref() {
            return browser.clone();
        }
        let main = &self.inner.config;
        let mut config = main.clone();
        config.home = Home::new(main.home.browser_dir().join("errands"));
        // Its own local browser is the second Chromium (ERR-20); where errands run beside
        // a remote browser or the person's own Chrome is chosen below (ERR-6, ERR-21).
        config.remote = None;
        let browser = Browser::build(
            config,
            Some(&ErrandsOf {
                main: Arc::downgrade(&self.inner),
                owner: self.inner.owner.clone(),
                guard: Arc::clone(&self.inner.backend.guard),
                guard_log: Arc::clone(&self.inner.backend.guard_log),
                borrowed: Arc::clone(&self.inner.errand.borrowed),
                aside: None,
            }),
        );
        self.aim_errands(&browser);
        *errands = Some(browser.clone());
        browser
    }

    /// The errands' browser process's id, while it runs (ERR-20; for status and tests).
    pub async fn errands_pid(&self) -> Option<u32> {
        let errands = lock(&self.inner.errand.errands).clone();
        match errands {
            Some(errands) => errands.pid().await,
            None => None,
        }
    }

    /// How many errands have a browser context open now (ERR-1; for status and tests).
    pub async fn errands_open(&self) -> usize {
        let errands = lock(&self.inner.errand.errands).clone();
        match errands {
            Some(errands) => errands.inner.state.lock().await.contexts.len(),
            None => 0,
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
        // The errands' own sweep: idle errands are set aside (ERR-18).
        let errands = lock(&self.inner.errand.errands).clone();
        let mut errands_here = false;
        if let Some(errands) = errands {
            Box::pin(errands.tick()).await;
            // The main remote browser is not let go while an errand uses a context in
            // it (ERR-21).
            errands_here = errands.errands_in_main();
        }
        if self.inner.side == Side::Errands {
            self.set_idle_errands_aside().await;
        }
        // On a pool each conversation's browser is set aside and let go when idle, which
        // frees its place (issue 32); one waiting for a place is not waited for.
        if let Some(pool) = self.pool() {
            for browser in pool.browsers() {
                if browser.inner.state.try_lock().is_ok() {
                    Box::pin(browser.tick()).await;
                }
            }
        }
        let mut state = self.inner.state.lock().await;
        refresh_running(&self.inner, &mut state);
        let now = self.inner.config.clock.now();
        let idle_for = now
            .duration_since(state.last_activity)
            .unwrap_or(Duration::ZERO);
        // A cloud session in use that its provider would end soon is renewed first (BE-7);
        // never one an errand's context lives in (ERR-21).
        if idle_for < self.inner.config.idle_after && !errands_here && renew::due(&state, now) {
            drop(state);
            self.renew_cloud_session().await;
            return false;
        }
        if state.running.is_none()
            || self.inner.awake.load(std::sync::atomic::Ordering::SeqCst) > 0
            || idle_for < self.inner.config.idle_after
            || errands_here
        {
            return false;
        }
        // An open errand's cookies live only in its context: the errands' browser stays
        // while any is open.
        if !state.contexts.is_empty() {
            return false;
        }
        tracing::info!(target: "conch_browser", "shutting the idle browser down");
        shut_down(&self.inner, &mut state).await;
        true
    }

    /// Keeps the browser from idling out while the guard lives (someone watches or drives).
    pub async fn keep_awake(&self) -> AwakeGuard {
        self.hold_awake()
    }

    /// As [`Browser::keep_awake`], taken at once without waiting (a watcher joining, a
    /// call starting): the idle time counts from when the last holder let go (LAUNCH-12).
    pub fn hold_awake(&self) -> AwakeGuard {
        self.inner
            .awake
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        AwakeGuard {
            inner: Arc::downgrade(&self.inner),
        }
    }

    /// Closes the browser now. Tabs stay saved and reopen on the next call. Every open
    /// errand is set aside (ERR-12) and the errands' browser closes too.
    pub async fn shutdown(&self) {
        let errands = lock(&self.inner.errand.errands).clone();
        if let Some(errands) = errands {
            // Every open errand is set aside first (ERR-12).
            errands.set_every_errand_aside().await;
            Box::pin(errands.shutdown()).await;
        }
        if let Some(pool) = self.pool() {
            pool.let_all_go().await;
        }
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
    /// site's cookies or storage survive, and wipes every errand, open or set aside
    /// (ERR-8). Tabs stay saved and reopen, signed out, on the next call.
    ///
    /// # Errors
    /// [`BrowserError::Wipe`] when the profile cannot be emptied.
    pub async fn sign_out_everywhere(&self) -> Result<(), BrowserError> {
        self.owns_home()?;
        // Every errand is wiped too (ERR-8): open contexts close, set-aside sessions and
        // snapshots lose their cookies; their tabs reopen, signed out, on next use.
        let errands = lock(&self.inner.errand.errands).clone();
        if let Some(errands) = errands {
            errands.shutdown().await;
            errands.inner.errand.forget_all();
            storage::forget_all(&errands.inner);
            errands.revoke_aside(&|_| false, &|_| false).await;
        }
        // On a pool every conversation's context closes, and what was set aside is wiped.
        if let Some(pool) = self.pool() {
            for browser in pool.browsers() {
                Box::pin(browser.shutdown()).await;
                browser.inner.errand.forget_all();
                storage::forget_all(&browser.inner);
                browser.revoke_aside(&|_| false, &|_| false).await;
            }
        }
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
            state::keep_a_window(running).await;
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
        // On a pool the conversation's context is disposed and its connection closed,
        // which frees its place (issue 32, ERR-10).
        if self.inner.side == Side::Main
            && let Some(pool) = self.pool()
        {
            if let Some(browser) = pool.remove(id) {
                browser.forget_aside(id).await;
                Box::pin(browser.close_conversation(id)).await;
                Box::pin(browser.shutdown()).await;
            }
            lock(&self.inner.talks.kinds).remove(id);
            lock(&self.inner.talks.own).remove(id);
            return;
        }
        if let Some(errands) = self.errands_for(id) {
            errands.forget_aside(id).await;
            Box::pin(errands.close_conversation(id)).await;
            lock(&self.inner.talks.kinds).remove(id);
            lock(&self.inner.talks.own).remove(id);
            return;
        }
        self.close_conversation(id).await;
    }

    /// Closes conversation `id`'s tabs (and an errand's context) and forgets them.
    async fn close_conversation(&self, id: &str) {
        let mut state = self.inner.state.lock().await;
        if let Some(running) = state.running.as_mut() {
            state::keep_a_window(running).await;
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
        // An errand's context closes with it: its cookies and storage are gone (ERR-10).
        if let Some(context) = state.contexts.remove(id)
            && let Some(running) = state.running.as_ref()
        {
            let disposed = running
                .connection
                .browser()
                .call(&DisposeBrowserContext {
                    browser_context_id: context,
                })
                .await;
            if let Err(e) = disposed {
                tracing::debug!(target: "conch_browser", error = %e, "an errand's context could not be closed");
            }
        }
        state.errand_used.remove(id);
        state.errand_used_at.remove(id);
        self.inner.errand.forget(id);
        storage::forget(&self.inner, id);
        let removed = state.tabs.conversations.remove(id).is_some();
        state.unrestored.remove(id);
        state.notes.remove(id);
        if removed {
            self.inner.saver.save(&state.tabs);
        }
        drop(state);
        self.inner.talks.forget(id);
    }

    /// How many conversations the runtime holds a lock and a wheel for: every one that
    /// was asked for and has not ended ([`Browser::end_conversation`]). For status and
    /// tests: it must not grow with conversations that are over (issue 12).
    pub fn conversations_held(&self) -> usize {
        lock(&self.inner.talks.conversation_locks).len()
    }

    /// Whether the running browser is one Conch did not launch (a DevTools address or a
    /// cloud session): its disk is not this machine's, so its downloads are refused (DL-5).
    pub fn is_remote(&self) -> bool {
        !self.abilities().downloads_to_disk
    }

    /// Whether conversation `id` acts in the person's own browser (BE-12): the backend
    /// chosen for the main browser is one whose tabs the person sees among their own
    /// (they carry the badge, BE-14), and the conversation browses there, not apart (a
    /// task, or a chat given a browser of its own, browses in Conch's own, ERR-6). Known
    /// from the choice, before anything connects, so the first question already knows;
    /// where the choice could not be reached and Conch's own browser stands in, it still
    /// says yes, asking more rather than less.
    pub fn in_persons_browser(&self, id: &str) -> bool {
        self.inner.side == Side::Main
            && !self.browses_apart(id)
            && lock(&self.inner.backend.chosen).abilities().persons_browser
    }

    /// What the running backend can do (BE-1): Conch's own local browser's abilities
    /// until another one runs.
    pub fn abilities(&self) -> Abilities {
        self.inner.backend.abilities()
    }

    /// Who has the wheel of conversation `id` (HAND-8): shared by its agent side and the
    /// person's side.
    pub fn wheel(&self, id: &str) -> Arc<Wheel> {
        if let Some(errands) = self.errands_for(id) {
            return errands.wheel(id);
        }
        self.inner.talks.wheel(id)
    }

    /// The browser process's id, while it runs (for status and tests).
    pub async fn pid(&self) -> Option<u32> {
        let state = self.inner.state.lock().await;
        state.running.as_ref().and_then(|r| r.held.pid())
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
            // The idle time starts now, before the hold ends, so no tick between the two
            // sees an old last activity and no holder.
            // Without a runtime nothing ticks, so the hold just ends.
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => {
                    handle.spawn(async move {
                        inner.state.lock().await.last_activity = inner.config.clock.now();
                        inner
                            .awake
                            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                    });
                }
                Err(_) => {
                    inner
                        .awake
                        .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                }
            }
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
        // Found dead, not shut down on purpose: held awake, it comes back at once (LAUNCH-8).
        inner.revival.died(state.generation);
        // Whether connecting again tells where the tabs went (a pool's move, issue 32),
        // instead of ERR-19's note: one reopening is told once.
        let mut told_elsewhere = false;
        if let Some(running) = state.running.take() {
            told_elsewhere = running.held.tells_reopening();
            running.watcher.abort();
            running.connection.close();
            forget_pages(inner, &running);
        }
        // Each open errand comes back from its last snapshot on its next call (ERR-19).
        if inner.side == Side::Errands {
            let snapshots = lock(&inner.errand.snapshots).clone();
            let mut pending = lock(&inner.errand.pending);
            for id in state.contexts.keys() {
                if let Some(cookies) = snapshots.get(id) {
                    pending.entry(id.clone()).or_insert_with(|| cookies.clone());
                }
                if !told_elsewhere {
                    state
                        .notes
                        .entry(id.clone())
                        .or_default()
                        .push(REOPENED.to_owned());
                }
            }
            storage::crashed(inner, state.contexts.keys());
        }
        state.contexts.clear();
        tracing::warn!(target: "conch_browser", "the browser went away; it restarts on the next call");
        lock(&inner.backend.status).state = RunState::Idle;
    }
}

/// What a task's next result says after its errand's browser crashed and came back from
/// its last snapshot (ERR-19).
pub const REOPENED: &str = "Reopened a task's browser as it was.";

/// Forgets what the runtime and the page readers remembered about `running`'s pages (their
/// isolated worlds, frames, dialog watches, attach order), once that browser is gone.
fn forget_pages(inner: &Inner, running: &Running) {
    crate::page::forget_browser(running.pages.values().map(|p| &p.session));
    inner.pages.forget();
}

async fn shut_down(inner: &Inner, state: &mut State) {
    let Some(running) = state.running.take() else {
        return;
    };
    running.watcher.abort();
    forget_pages(inner, &running);
    state.contexts.clear();
    let ours: Vec<TargetId> = running.pages.keys().cloned().collect();
    running.held.let_go(running.connection, ours).await;
    lock(&inner.backend.status).state = RunState::Idle;
}

/// `browser.status` while Chromium downloads (LAUNCH-4): `None` as it starts.
fn download_status(progress: Option<Progress>) -> crate::protocol::BrowserEvent {
    let download = progress.map_or(
        crate::protocol::BrowserDownload {
            done: 0,
            total: None,
        },
        |p| crate::protocol::BrowserDownload {
            done: p.done,
            total: p.total,
        },
    );
    let message = match download.total {
        Some(total) if total > 0 => format!(
            "Conch is downloading Chromium ({}%).",
            download.done.saturating_mul(100) / total
        ),
        _ => "Conch is downloading Chromium.".to_owned(),
    };
    crate::protocol::BrowserEvent::Status(crate::protocol::BrowserStatus {
        running: false,
        backend: "local".to_owned(),
        message,
        open_panel: false,
        download: Some(download),
    })
}

/// Ticks every 30 s while the runtime lives. Boxed with its type named: a tick may renew a
/// cloud session, which connects again and so starts a ticker (BE-7).
fn idle_ticker(inner: Weak<Inner>) -> futures_util::future::BoxFuture<'static, ()> {
    Box::pin(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(30)).await;
            let Some(inner) = inner.upgrade() else { return };
            Browser { inner }.tick().await;
        }
    })
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
    let parents = lock(&inner.pages.parents);
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

/// The runtime's files, lowest layer first: the state and its store at the bottom, the
/// jobs that use them above. A file imports (`super::<file>`) only files before it, so
/// no two runtime files import each other (issue 29); a new file takes its place here.
#[cfg(test)]
const LAYERS: &[&str] = &[
    "state", "storage", "seed", "navigate", "own", "beside", "pool", "renew", "targets", "tabs",
    "aside", "lend", "repair", "revive", "reach", "testing",
];

#[cfg(test)]
mod layers {
    use super::LAYERS;

    /// The runtime files `source` imports, its tests and doc comments aside.
    fn imports(source: &str) -> Vec<String> {
        let code = source
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default();
        let mut found = Vec::new();
        for line in code.lines() {
            let line = line.trim_start();
            if line.starts_with("//") {
                continue;
            }
            for prefix in ["super::", "crate::runtime::"] {
                for (at, _) in line.match_indices(prefix) {
                    let rest = &line[at + prefix.len()..];
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if LAYERS.contains(&name.as_str()) {
                        found.push(name);
                    }
                }
            }
        }
        found
    }

    #[test]
    fn arch_runtime_imports_go_one_direction() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/runtime");
        let mut wrong = Vec::new();
        for entry in std::fs::read_dir(&dir).expect("src/runtime is readable") {
            let path = entry.expect("an entry").path();
            let Some(name) = path.file_stem().and_then(|n| n.to_str()) else {
                continue;
            };
            let Some(layer) = LAYERS.iter().position(|l| *l == name) else {
                wrong.push(format!("{name}.rs has no place in LAYERS"));
                continue;
            };
            let source = std::fs::read_to_string(&path).expect("a runtime file is readable");
            for import in imports(&source) {
                let below = LAYERS
                    .iter()
                    .position(|l| *l == import)
                    .unwrap_or(usize::MAX);
                if below >= layer {
                    wrong.push(format!("{name}.rs imports {import}, which is not below it"));
                }
            }
        }
        assert!(wrong.is_empty(), "runtime layering broken: {wrong:#?}");
    }
}
