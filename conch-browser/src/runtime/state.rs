//! The runtime's state, at the bottom of its layers: the shared [`Inner`] behind every
//! [`Browser`] handle, the browser-wide [`State`] under its lock, and the small acts on
//! them every job above shares (touching, finding and closing a tab; taking a page the
//! watcher made ready). Nothing here imports another runtime file: the jobs above it
//! (`storage`, `seed`, `navigate`, `targets`, `tabs`, `aside`, `reach`, …) import it.
//!
//! Deliberately absent: launching, watching targets, navigating (the jobs above).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Weak;
use std::time::Instant;

use conch_cdp::protocol::target::CloseTarget;
use conch_policy::TabUse;

use super::*;
use crate::aside::{AsideFile, OriginStorage};
use crate::guard::rules::Rules;
use crate::page::dialog::DialogWatch;
use crate::seal::Sealer;
use crate::store::ConversationTabs;

#[derive(Debug)]
pub(super) struct Inner {
    pub(super) config: BrowserConfig,
    /// This process's lock on the home, held while the runtime lives (issue 12).
    pub(super) owner: Ownership,
    pub(super) state: Mutex<State>,
    /// Holders that keep the browser awake (a watcher, a call waiting for the person):
    /// kept apart from the state so one is taken without waiting for a launch (LAUNCH-12).
    pub(super) awake: std::sync::atomic::AtomicUsize,
    /// Writes tabs.json in the background, newest state only.
    pub(super) saver: TabsSaver,
    /// The main browser, or the errands' browser (ERR-20).
    pub(super) side: Side,
    /// The backend part.
    pub(super) backend: Backends,
    /// The pages part.
    pub(super) pages: Pages,
    /// The conversations part.
    pub(super) talks: Talks,
    /// The errands part.
    pub(super) errand: ErrandParts,
    /// The main browser's crashes and its own relaunches while someone is there (LAUNCH-8).
    pub(super) revival: Revival,
}

/// The main browser's crashes and its own relaunches after them. Lives in [`Inner`].
#[derive(Debug, Default)]
pub(super) struct Revival {
    pub(super) inner: StdMutex<Revived>,
}

#[derive(Debug, Default)]
pub(super) struct Revived {
    /// The generation of the last browser found dead (not shut down on purpose).
    pub(super) died: Option<u64>,
    /// When each relaunch of the last [`WINDOW`] started, oldest first.
    pub(super) relaunches: std::collections::VecDeque<Instant>,
}

/// The backend part: which browser drives and how it is reached and guarded (BE-1, BE-4, AMB-1): the chosen driver, Conch's own local one, what the running one can do, the status, and the guard.
#[derive(Debug)]
pub(super) struct Backends {
    /// Kept apart from the state so it can be read while a launch or download holds that.
    pub(super) status: Arc<StdMutex<Status>>,
    /// The backend the person chose (BE-1); the settings may choose another one while
    /// Conch runs ([`Browser::choose`], BE-2).
    pub(super) chosen: StdMutex<Arc<dyn Driver>>,
    /// Conch's own local browser: the chosen one, or the stand-in when the chosen one
    /// can't be reached (BE-4).
    pub(super) local: Arc<dyn Driver>,
    /// The sentence saying why Conch's own local browser stands in for the chosen
    /// backend, while it does (BE-4).
    pub(super) stand_in: StdMutex<Option<String>>,
    /// What the running backend can do: its guard, whether its targets are discovered,
    /// whether its downloads land here (BE-1).
    pub(super) abilities: StdMutex<Abilities>,
    /// The guard's proxy, started before the first launch and kept across relaunches.
    pub(super) guard: Arc<Mutex<Option<guard::Running>>>,
    /// Every refusal of the guard, proxy and CDP rules alike.
    pub(super) guard_log: Arc<GuardLog>,
    /// The CDP rules every held target gets.
    pub(super) rules: Rules,
    /// The rules on a browser no proxy stands in front of: every request's address is
    /// judged here (CDP-only mode).
    pub(super) remote_rules: Rules,
}

/// The pages part: what the target watcher hands over and remembers of attached targets (LAUNCH-19, DLG-1), forgotten when the browser goes.
#[derive(Debug)]
pub(super) struct Pages {
    /// Pages Conch created, attached, ruled and resumed, until `create_page` takes them.
    pub(super) ready: StdMutex<Ready>,
    pub(super) ready_changed: tokio::sync::Notify,
    /// The dialog watch of every page and out-of-process frame, installed as it attaches
    /// (DLG-1): a dialog is answered whether or not an agent step is on its page.
    pub(super) dialogs: StdMutex<HashMap<TargetId, DialogWatch>>,
    /// The session each attached child target (frame, worker, popup) was announced on,
    /// while it lives: a blocked request of a frame is its page's, so its conversation's
    /// (issue 12).
    pub(super) parents: StdMutex<HashMap<SessionId, SessionId>>,
}

/// The conversations part: each conversation's lock, wheel and kind (TOOL-11, HAND-8, ERR-1, LIVE-16). Its tabs are in [`State`], under the browser-wide lock.
#[derive(Debug)]
pub(super) struct Talks {
    /// One lock per conversation: its calls run one at a time (TOOL-11).
    pub(super) conversation_locks: StdMutex<HashMap<String, Arc<Mutex<()>>>>,
    /// Who has the wheel, per conversation (HAND-8).
    pub(super) wheels: StdMutex<HashMap<String, Arc<Wheel>>>,
    /// What each conversation is, as the embedder said (ERR-1); main side only.
    pub(super) kinds: StdMutex<HashMap<String, ConversationKind>>,
    /// The chats the person gave a browser of their own (LIVE-16); main side only.
    pub(super) own: StdMutex<std::collections::HashSet<String>>,
}

/// The errands part: the errands' browser seen from the main one, and on the errands' side each errand's context-bound state (ERR-1, ERR-3, ERR-11, ERR-15, ERR-19, ERR-21, ERR-23).
#[derive(Debug)]
pub(super) struct ErrandParts {
    /// The errands' browser, made when the first task asks for its conversation and
    /// launched when that errand first needs a page (ERR-20), or beside a remote browser
    /// its contexts there (ERR-21); main side only.
    pub(super) errands: StdMutex<Option<Browser>>,
    /// The errands' browser's main one, which seeds its errands (ERR-3); errands side
    /// only.
    pub(super) main: Option<Weak<Inner>>,
    /// The contexts errands made in the main remote browser (ERR-21), shared by both
    /// sides: the main watcher leaves their targets to the errands' one.
    pub(super) borrowed: BorrowedContexts,
    /// The errands' browser: whether it runs on the main browser's connection (ERR-21).
    pub(super) on_main: std::sync::atomic::AtomicBool,
    /// The errands' browser: why tasks run in Conch's own local browser instead of the
    /// chosen backend's, for Health (ERR-6, ERR-21).
    pub(super) runs_here: StdMutex<Option<String>>,
    /// The set-aside errands, sealed, once opened (ERR-11); errands side only.
    pub(super) aside: Arc<Mutex<Option<Kept>>>,
    /// On a pool, where each conversation is placed (issue 32). Main side only.
    pub(super) pool: StdMutex<Option<PoolRef>>,
    /// Cookies of errands brought back, waiting for their new context (ERR-11).
    pub(super) pending: StdMutex<HashMap<String, Vec<serde_json::Value>>>,
    /// Each open errand's cookies as of a few seconds after its last page load, and the
    /// load count that snapshot waits for (ERR-19).
    pub(super) snapshots: StdMutex<HashMap<String, Vec<serde_json::Value>>>,
    pub(super) snapshot_due: StdMutex<HashMap<String, u64>>,
    /// The sites each errand was seeded or lent (ERR-23), for its window's tooltip.
    pub(super) lent: StdMutex<HashMap<String, std::collections::BTreeSet<String>>>,
    /// Each errand's local storage: its origins, snapshot and what waits for its next
    /// context (ERR-3, ERR-11, ERR-19); errands side only.
    pub(super) storage: StdMutex<Stores>,
    /// Held from the cap's decision until the new errand's context is registered, so two
    /// errands starting at once can't both take the last place (ERR-15, ERR-16).
    pub(super) room: Mutex<()>,
}

impl Backends {
    /// What the running backend can do (BE-1).
    pub(super) fn abilities(&self) -> Abilities {
        *lock(&self.abilities)
    }
}

impl Pages {
    /// Forgets every page handed over or watched: the browser they were in is gone.
    pub(super) fn forget(&self) {
        lock(&self.ready).clear();
        lock(&self.dialogs).clear();
        lock(&self.parents).clear();
    }
}

impl Talks {
    /// Conversation `id`'s lock, made on first need (TOOL-11).
    pub(super) fn lock_of(&self, id: &str) -> Arc<Mutex<()>> {
        Arc::clone(
            lock(&self.conversation_locks)
                .entry(id.to_owned())
                .or_default(),
        )
    }

    /// Who has the wheel of conversation `id` (HAND-8), made on first need.
    pub(super) fn wheel(&self, id: &str) -> Arc<Wheel> {
        Arc::clone(lock(&self.wheels).entry(id.to_owned()).or_default())
    }

    /// Lets go of conversation `id`'s lock and wheel: a handoff or takeover of a
    /// conversation that is gone lets its waiters go.
    pub(super) fn forget(&self, id: &str) {
        lock(&self.conversation_locks).remove(id);
        if let Some(wheel) = lock(&self.wheels).remove(id) {
            wheel.stop();
        }
    }
}

impl ErrandParts {
    /// Forgets the cookies, snapshot and lent sites kept for errand `id` (it closed).
    pub(super) fn forget(&self, id: &str) {
        lock(&self.pending).remove(id);
        lock(&self.snapshots).remove(id);
        lock(&self.snapshot_due).remove(id);
        lock(&self.lent).remove(id);
    }

    /// Forgets every errand's cookies, snapshots and lent sites (ERR-8).
    pub(super) fn forget_all(&self) {
        lock(&self.pending).clear();
        lock(&self.snapshots).clear();
        lock(&self.lent).clear();
    }
}

/// One conversation's view of the browser: its own tabs, its calls one at a time.
#[derive(Debug, Clone)]
pub struct Conversation {
    pub(super) browser: Browser,
    pub(super) id: String,
    pub(super) lock: Arc<Mutex<()>>,
}

/// Which of the two browsers an [`Inner`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    /// The main browser: chats, the person's profile.
    Main,
    /// The errands' browser: non-persistent, one context per task (ERR-1, ERR-20).
    Errands,
}

#[derive(Debug)]
pub(super) struct State {
    pub(super) running: Option<Running>,
    pub(super) tabs: TabsFile,
    pub(super) last_activity: SystemTime,
    /// Things that happened outside a call, for the conversation's next result.
    pub(super) notes: HashMap<String, Vec<String>>,
    /// Counter behind `SavedTab::last_used`.
    pub(super) use_counter: u64,
    /// Counts launches, so a page made for one browser is never filed under the next.
    pub(super) generation: u64,
    /// Conversations whose saved tabs have no page in the running browser yet: each
    /// reopens its own on its next call, one tab at a time, outside the browser-wide lock.
    pub(super) unrestored: std::collections::HashSet<String>,
    /// The errands' browser: each task's own browser context in the running browser
    /// (ERR-1), made when its first page is.
    pub(super) contexts: HashMap<String, BrowserContextId>,
    /// The errands' browser: when each errand was last used by its agent, in the order of
    /// `use_counter` (ERR-16), and on the clock (ERR-18).
    pub(super) errand_used: HashMap<String, u64>,
    pub(super) errand_used_at: HashMap<String, SystemTime>,
}

#[derive(Debug)]
pub(super) struct Running {
    pub(super) connection: Connection,
    /// What to let go of: the process Conch launched, or a remote browser's session.
    pub(super) held: Box<dyn Held>,
    /// When it was connected, by the runtime's clock (a cloud session's lifetime runs
    /// from then).
    pub(super) since: SystemTime,
    /// Page targets that are conversations' tabs.
    pub(super) pages: HashMap<TargetId, PageRef>,
    pub(super) watcher: tokio::task::JoinHandle<()>,
    /// The blank page Conch's own headless browser opened at launch, and since when,
    /// until the first tab of the main context is made: that tab is whichever of this page
    /// and a window made for it is ruled first, and the other stays as the browser's
    /// blank window (issue 31, LIVE-16).
    pub(super) launch_page: Option<(TargetId, Instant)>,
    /// The blank window owed in the launch page's stead once the first tab took it alone
    /// (issue 31): made after that tab's first load, or first by whatever closes a page
    /// before then ([`keep_a_window`]), so the browser never closes its last window and
    /// keeps its profile's session cookies (LIVE-16).
    pub(super) spare: Option<Arc<Spare>>,
    /// That window once made, ruled and resumed: the next new tab of the main context
    /// takes it instead of waiting for a window of its own (issue 32: a window is about
    /// 50 ms of the browser's main thread, and the page's renderer starts with it), and a
    /// window is owed in its stead again.
    pub(super) blank: Option<(TargetId, Session)>,
}

/// Makes the blank window owed in the launch page's stead, if one is owed and not made
/// yet, and waits until it is (issue 31, LIVE-16): called before Conch closes a page, so
/// the browser never closes its last window.
pub(super) fn keep_a_window(running: &Running) -> impl Future<Output = ()> + Send + 'static {
    let spare = running.spare.clone();
    let browser = running.connection.browser();
    async move {
        if let Some(spare) = spare {
            spare.window.get_or_init(|| make_a_window(browser)).await;
            // The task that owes it rules it and keeps it ready now (issue 32).
            spare.made.notify_one();
        }
    }
}

/// The blank window owed in the stead of a page a tab took ([`Running::spare`]): made
/// once, by its owing task after the tab's load and a pause, or first by whatever closes
/// a page, which then tells that task so it keeps the window ready at once.
#[derive(Debug, Default)]
pub(super) struct Spare {
    pub(super) window: tokio::sync::OnceCell<Option<TargetId>>,
    pub(super) made: tokio::sync::Notify,
}

/// Makes a blank window through `browser`, the browser's own, and gives its target: it
/// keeps the browser a window (issue 31, LIVE-16) and stands ready for the next new tab
/// (issue 32), so a failure is logged, not returned.
pub(super) async fn make_a_window(browser: Session) -> Option<TargetId> {
    let viewport = conch_policy::DEFAULT_VIEWPORT;
    let blank = conch_cdp::protocol::target::CreateTarget {
        new_window: Some(true),
        width: Some(viewport.width),
        height: Some(viewport.height),
        ..conch_cdp::protocol::target::CreateTarget::new("about:blank")
    };
    match browser.call(&blank).await {
        Ok(made) => Some(made.target_id),
        Err(e) => {
            tracing::info!(target: "conch_browser", error = %e, "no blank window in the launch page's stead");
            None
        }
    }
}

#[derive(Debug, Clone)]
pub(super) struct PageRef {
    pub(super) conversation: String,
    pub(super) tab: String,
    pub(super) session: Session,
}

/// The sealed file and its sealer, once opened.
#[derive(Debug)]
pub(super) struct Kept {
    pub(super) sealer: Sealer,
    pub(super) file: AsideFile,
}

/// What a browser knows of local storage: the errands' browser of its errands', the
/// main one of the origins its pages showed.
#[derive(Debug, Default)]
pub(super) struct Stores {
    pub(super) errands: HashMap<String, HeldStorage>,
    /// The origins the main context's pages stood on in this run (main side only), at
    /// most [`MAX_SEEN`]: where seeding looks besides cookies and tabs (ERR-3).
    pub(super) seen: BTreeSet<String>,
    /// When an errand last got its snapshot back after a crash (ERR-19), for health.
    pub(super) reopened_at: Option<SystemTime>,
}

/// One errand's local storage, as far as the runtime knows it. Its `Debug` shows counts.
#[derive(Default)]
pub(super) struct HeldStorage {
    /// The origins its pages stood on, or that it was given storage of.
    pub(super) origins: BTreeSet<String>,
    /// Its storage as of its last snapshot (ERR-19).
    pub(super) snapshot: Option<Vec<OriginStorage>>,
    /// What its next context gets: a set-aside's storage on Resume (ERR-11), or its
    /// snapshot after a crash (ERR-19).
    pub(super) pending: Option<Vec<OriginStorage>>,
    /// Whether `pending` heals a crash: health says so once it is back.
    pub(super) healing: bool,
}

impl std::fmt::Debug for HeldStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeldStorage")
            .field("origins", &self.origins.len())
            .field("snapshot", &self.snapshot.as_ref().map(Vec::len))
            .field("pending", &self.pending.as_ref().map(Vec::len))
            .field("healing", &self.healing)
            .finish()
    }
}

/// The contexts the errands made in the main browser (ERR-21): their targets are the
/// errands' watcher's, not the main one's. Ids of disposed contexts may stay: Chromium
/// never gives the same id twice.
pub(super) type BorrowedContexts = Arc<StdMutex<HashSet<BrowserContextId>>>;

/// Pages attached, ruled and resumed, waiting for the `create_page` that made them.
#[derive(Debug, Default)]
pub(super) struct Ready {
    /// Each with when it was filed.
    pub(super) pages: HashMap<TargetId, (Session, Instant)>,
    /// Pages whose `create_page` gave up waiting (and closed them), and since when: one
    /// that attaches after all is dropped, not kept until the next launch (issue 12).
    pub(super) abandoned: HashMap<TargetId, Instant>,
}

/// How long a page given up on is remembered, should it attach after all.
const ABANDONED_KEPT: Duration = Duration::from_secs(120);

impl Ready {
    pub(super) fn clear(&mut self) {
        self.pages.clear();
        self.abandoned.clear();
    }

    /// Files a page for its `create_page`; gives it back when that one gave up on it.
    /// Pages filed longer than `unclaimed_after` ago that nobody took (the browser's own
    /// first tab, or one whose creator failed) are dropped: no creator waits that long.
    pub(super) fn file(
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
    pub(super) fn take(&mut self, target: &TargetId) -> Option<Session> {
        self.pages.remove(target).map(|(session, _)| session)
    }

    /// `create_page` gives up on `target`: whether it was filed meanwhile or comes later,
    /// it is not kept.
    pub(super) fn abandon(&mut self, target: &TargetId) {
        if self.pages.remove(target).is_none() {
            self.abandoned.insert(target.clone(), Instant::now());
        }
    }
}

/// The page `target` that Conch just created through `browser`, once the watcher hands it
/// over attached and ruled ([`take_ready`]). Never left behind: a page nobody files would
/// live on unseen, and one handed over late is dropped (issue 12); so a page not ready in
/// time is abandoned and closed, and the creation fails with `PageNotReady`.
pub(super) async fn ready_or_closed(
    inner: &Inner,
    browser: &Session,
    target: TargetId,
) -> Result<Session, BrowserError> {
    if let Some(session) = take_ready(inner, &target).await {
        return Ok(session);
    }
    lock(&inner.pages.ready).abandon(&target);
    let _ = browser.call(&CloseTarget { target_id: target }).await;
    Err(BrowserError::PageNotReady {
        seconds: inner.config.attach_timeout.as_secs().max(1),
    })
}

/// Waits (bounded) for the watcher to hand over the page `target`, attached and ruled.
pub(super) async fn take_ready(inner: &Inner, target: &TargetId) -> Option<Session> {
    tokio::time::timeout(inner.config.attach_timeout, ready_page(inner, target))
        .await
        .ok()
}

/// Waits, unbounded, for the watcher to hand over the page `target`.
pub(super) async fn ready_page(inner: &Inner, target: &TargetId) -> Session {
    loop {
        let notified = inner.pages.ready_changed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if let Some(session) = lock(&inner.pages.ready).take(target) {
            return session;
        }
        notified.await;
    }
}

pub(super) fn touch(state: &mut State, conversation: &str, tab: &str) {
    state.use_counter += 1;
    let counter = state.use_counter;
    if let Some(saved) = state.tabs.conversation_mut(conversation).tab_mut(tab) {
        saved.last_used = counter;
    }
}

/// Removes `tab` from the saved tabs; if it was active, its opener comes back to the
/// front (TAB-6), else the tab used most recently.
pub(super) fn forget_tab(tabs: &mut ConversationTabs, tab: &str) {
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
pub(super) async fn close_tab(
    state: &mut State,
    conversation: &str,
    tab: &str,
) -> Result<(), BrowserError> {
    forget_tab(state.tabs.conversation_mut(conversation), tab);
    if let Some(running) = state.running.as_mut() {
        let target = running
            .pages
            .iter()
            .find(|(_, p)| p.conversation == conversation && p.tab == tab)
            .map(|(id, _)| id.clone());
        if let Some(target) = target {
            keep_a_window(running).await;
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
pub(super) fn tab_to_close_for_popup(tabs: &ConversationTabs) -> Option<String> {
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

pub(super) fn session_of(state: &State, conversation: &str, tab: &str) -> Option<Session> {
    state.running.as_ref().and_then(|r| {
        r.pages
            .values()
            .find(|p| p.conversation == conversation && p.tab == tab)
            .map(|p| p.session.clone())
    })
}

/// The page sessions Conch brought to the front of their windows for a step since the
/// browser's targets last changed ([`Conversation::bring_to_front_for_step`]).
pub(super) static FRONTED: StdMutex<std::collections::BTreeSet<String>> =
    StdMutex::new(std::collections::BTreeSet::new());

/// Counts the changes of the browsers' targets that may put another page in front of one
/// ([`targets_changed`]).
pub(super) static FRONT_EPOCH: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A target of a browser came or went, or one was brought forward: a page Conch brought
/// to the front may be behind another now, so each is brought forward again at its next
/// step.
pub(super) fn targets_changed() {
    let mut fronted = lock(&FRONTED);
    FRONT_EPOCH.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    fronted.clear();
}
