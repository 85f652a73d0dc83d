//! Tabs and conversations: [`Conversation`] (one conversation's tabs, its calls one at a
//! time, TOOL-11), making a page for a tab, switching, closing and restoring tabs after
//! the browser came back (TAB-2, TAB-5, TAB-6, TAB-9, LAUNCH-8, DATA-9).
//!
//! Deliberately absent: navigating and waiting for loads ([`super::navigate`]).

use std::sync::Arc;
use std::time::Duration;

use conch_cdp::protocol::TargetId;
use conch_cdp::protocol::page::Navigate;
use conch_cdp::protocol::runtime::Evaluate;
use conch_cdp::protocol::target::{
    ActivateTarget, CloseTarget, CreateBrowserContext, CreateTarget, DisposeBrowserContext,
    GetTargets, TargetInfo,
};
use conch_cdp::{Session, SessionId};

use super::navigate::wait_until_loaded;
use super::seed::restore_cookies;
use super::state::{close_tab, forget_tab, ready_or_closed, session_of, touch};
use super::*;
use crate::error::BrowserError;
use crate::guard::Blocked;
use crate::store::SavedTab;
use crate::wheel::Wheel;

/// Opens a page target for `conversation`'s tab `tab`. The browser attaches it held; the
/// target watcher installs the guard's rules and resumes it (LAUNCH-19), then hands its
/// session over here. The browser-wide lock is not held while the page is made, so other
/// conversations go on meanwhile.
async fn create_page(
    inner: &Arc<Inner>,
    conversation: &str,
    tab: &str,
    url: &str,
) -> Result<Session, BrowserError> {
    let (browser, generation, launch_page, blank) = {
        let mut state = inner.state.lock().await;
        let generation = state.generation;
        let running = state.running.as_mut().ok_or(BrowserError::NotRunning)?;
        let main = inner.side == Side::Main;
        (
            running.connection.browser(),
            generation,
            running.launch_page.take(),
            running.blank.take().filter(|_| main),
        )
    };
    // Each tab in a window of its own: a background tab of a shared window gets no frames,
    // so trusted input to it waits until it times out (issue 18). In its own window every
    // conversation's tab is in front of its window and takes input at the same time as
    // every other's.
    let viewport = conch_policy::DEFAULT_VIEWPORT;
    // In the person's own Chrome nothing is auto-attached: the page is made blank,
    // attached by name, ruled, and only then sent to `url` (BE-13, NET-9).
    let own = !inner.backend.abilities().discovers_targets;
    // A task's page opens in its errand's own context (ERR-1).
    let context = match inner.side {
        Side::Errands => Some(errand_context(inner, conversation, generation).await?),
        Side::Main => None,
    };
    // The first tab after a launch (issue 31): the page the browser opened at launch, or
    // the window made for the tab, whichever is ruled first.
    let launch_page = launch_page
        .filter(|(_, since)| since.elapsed() < super::targets::unclaimed_after(inner))
        .map(|(target, _)| target);
    if context.is_none()
        && !own
        && let Some(launch) = launch_page
    {
        let (target, session) =
            first_page(inner, &browser, launch, generation, conversation).await?;
        return file_page(inner, generation, conversation, tab, target, session, url).await;
    }
    // A new tab of the main context takes the blank window kept ready, and another is
    // owed in its stead (issue 32).
    if context.is_none()
        && !own
        && let Some((target, session)) = blank
    {
        owe_a_window(inner, generation, conversation, &browser, &session).await;
        return file_page(inner, generation, conversation, tab, target, session, url).await;
    }
    let created = browser
        .call(&CreateTarget {
            new_window: Some(true),
            width: Some(viewport.width),
            height: Some(viewport.height),
            browser_context_id: context,
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
    let session = ready_or_closed(inner, &browser, created.target_id.clone()).await?;
    // A page made on `url` is on its way there; a blank one is sent there once filed.
    let to = if own { url } else { "about:blank" };
    let target = created.target_id;
    file_page(inner, generation, conversation, tab, target, session, to).await
}

/// Files the page `target` (its session `session`) as `conversation`'s tab `tab` in the
/// browser of `generation`, then sends it to `url` unless that is `about:blank` (its load
/// is waited for by the caller, as a new target's is).
async fn file_page(
    inner: &Inner,
    generation: u64,
    conversation: &str,
    tab: &str,
    target: TargetId,
    session: Session,
    url: &str,
) -> Result<Session, BrowserError> {
    let mut state = inner.state.lock().await;
    let same_browser = state.generation == generation;
    match state.running.as_mut() {
        Some(running) if same_browser => {
            running.pages.insert(
                target,
                PageRef {
                    conversation: conversation.to_owned(),
                    tab: tab.to_owned(),
                    session: session.clone(),
                },
            );
            drop(state);
            if url != "about:blank" {
                session.call(&Navigate::new(url)).await?;
            }
            Ok(session)
        }
        _ => Err(BrowserError::NotRunning),
    }
}

/// How long the first tab waits for the launch page alone before a window is made
/// beside it: the page is usually ruled well within it (about 70 ms after the browser's
/// first answer on a quiet machine), and a window made meanwhile costs that page's load
/// about 60 ms of the browser's main thread (`xtask/bench/first_page.py`).
const LAUNCH_PAGE_ALONE: Duration = Duration::from_millis(200);

/// How long after the first tab's first load the window owed in the launch page's stead
/// is made: after the first read, which it would hold up. Longer in unit tests, so they
/// can close the first tab while the window is still owed.
const SPARE_AFTER_LOAD: Duration = if cfg!(test) {
    Duration::from_secs(3)
} else {
    Duration::from_millis(500)
};

/// The longest the owed window waits for that load.
const SPARE_LOAD_WAIT: Duration = Duration::from_secs(10);

/// How long no call of the taking conversation's agent has been in flight before the
/// owed window is made: not between two calls that follow each other at once, where it
/// would hold up the next step on the browser's main thread (issue 31).
const SPARE_IDLE: Duration = Duration::from_millis(300);

/// The longest the owed window waits for such a pause after the load.
const SPARE_IDLE_WAIT: Duration = Duration::from_secs(30);

/// The first tab's page after a launch (issue 31): the page the browser opened at launch
/// when the target watcher hands it over ruled and resumed (LAUNCH-19, as any page)
/// within [`LAUNCH_PAGE_ALONE`]; a blank window is then owed in its stead
/// ([`owe_a_window`]). Otherwise a blank window is made for the tab as for any, and
/// whichever of the two is ruled first is the tab's; the other stays open, blank. Either
/// way the browser keeps a window of its own when the tab closes or moves to a browser of
/// its own, and the profile's session cookies with it (LIVE-16). The launch window's
/// renderer is sometimes far behind a new window's on a loaded machine, so it is not
/// waited for alone for long.
async fn first_page(
    inner: &Arc<Inner>,
    browser: &Session,
    launch: TargetId,
    generation: u64,
    conversation: &str,
) -> Result<(TargetId, Session), BrowserError> {
    let waited = launch.clone();
    // Never done without a page, so it is never polled again once done; bounded below.
    let launch_ready = super::state::ready_page(inner, &waited);
    tokio::pin!(launch_ready);
    if let Ok(session) = tokio::time::timeout(LAUNCH_PAGE_ALONE, &mut launch_ready).await {
        owe_a_window(inner, generation, conversation, browser, &session).await;
        return Ok((launch, session));
    }
    let viewport = conch_policy::DEFAULT_VIEWPORT;
    let blank = CreateTarget {
        new_window: Some(true),
        width: Some(viewport.width),
        height: Some(viewport.height),
        ..CreateTarget::new("about:blank")
    };
    // Its own task: a window made once the launch page won is kept, not dropped mid-way.
    let making = {
        let browser = browser.clone();
        tokio::spawn(async move { browser.call(&blank).await })
    };
    let within = inner.config.attach_timeout;
    let made = tokio::select! {
        session = &mut launch_ready => return Ok((launch, session)),
        made = making => made,
    };
    let created = match made {
        Ok(Ok(created)) => created,
        Ok(Err(e)) => {
            return match tokio::time::timeout(within, launch_ready).await {
                Ok(session) => Ok((launch, session)),
                Err(_) => Err(e.into()),
            };
        }
        Err(_) => {
            return tokio::time::timeout(within, launch_ready)
                .await
                .map(|session| (launch, session))
                .map_err(|_| BrowserError::NotRunning);
        }
    };
    let created_ready = super::state::take_ready(inner, &created.target_id);
    tokio::select! {
        session = &mut launch_ready => Ok((launch, session)),
        got = created_ready => match got {
            Some(session) => Ok((created.target_id, session)),
            None => {
                lock(&inner.pages.ready).abandon(&created.target_id);
                let _ = browser
                    .call(&CloseTarget {
                        target_id: created.target_id,
                    })
                    .await;
                Err(BrowserError::PageNotReady {
                    seconds: inner.config.attach_timeout.as_secs().max(1),
                })
            }
        },
    }
}

/// Owes the browser of `generation` a blank window in stead of the one the tab of session
/// `session` just took (the launch page, issue 31, or the blank window kept ready, issue
/// 32): it is made [`SPARE_AFTER_LOAD`] after the tab's first load (or after
/// [`SPARE_LOAD_WAIT`] without one), in the first pause of [`SPARE_IDLE`] in
/// `conversation`'s calls (at most [`SPARE_IDLE_WAIT`] on), unless whatever closes a page
/// made it first
/// ([`super::state::keep_a_window`]), so the browser never closes its last window
/// (LIVE-16). Once ruled and resumed it is kept ready for the next new tab.
async fn owe_a_window(
    inner: &Arc<Inner>,
    generation: u64,
    conversation: &str,
    browser: &Session,
    session: &Session,
) {
    let spare = Arc::new(super::state::Spare::default());
    {
        let mut state = inner.state.lock().await;
        if state.generation != generation {
            return;
        }
        let Some(running) = state.running.as_mut() else {
            return;
        };
        running.spare = Some(spare.clone());
    }
    // Subscribed before the tab is sent anywhere, so its first load is not missed.
    let mut loaded = session.subscribe::<conch_cdp::protocol::page::LoadEventFired>();
    let browser = browser.clone();
    let wheel = inner.talks.wheel(conversation);
    let inner = Arc::downgrade(inner);
    tokio::spawn(async move {
        let in_a_pause = async {
            let first_load = futures_util::StreamExt::next(&mut loaded);
            let _ = tokio::time::timeout(SPARE_LOAD_WAIT, first_load).await;
            tokio::time::sleep(SPARE_AFTER_LOAD).await;
            let paused = async {
                loop {
                    let wait = match wheel.agent_idle_for() {
                        None => Duration::from_millis(50),
                        Some(idle) if idle >= SPARE_IDLE => break,
                        Some(idle) => SPARE_IDLE - idle,
                    };
                    tokio::time::sleep(wait).await;
                }
            };
            let _ = tokio::time::timeout(SPARE_IDLE_WAIT, paused).await;
        };
        // Made first by whatever closed a page (the conversation may have ended): it is
        // ruled and kept ready at once, for a conversation that starts right after.
        tokio::select! {
            () = in_a_pause => {}
            () = spare.made.notified() => {}
        }
        drop(loaded);
        drop(wheel);
        let made = spare
            .window
            .get_or_init(|| super::state::make_a_window(browser))
            .await
            .clone();
        let (Some(target), Some(inner)) = (made, inner.upgrade()) else {
            return;
        };
        // Ruled and resumed as any page (LAUNCH-19) before any tab may take it.
        let Some(session) = super::state::take_ready(&inner, &target).await else {
            return;
        };
        let mut state = inner.state.lock().await;
        if state.generation != generation {
            return;
        }
        if let Some(running) = state.running.as_mut()
            && running
                .spare
                .as_ref()
                .is_some_and(|s| Arc::ptr_eq(s, &spare))
        {
            running.blank = Some((target, session));
        }
    });
}

/// The browser context of `conversation`'s errand in the running errands' browser: made
/// on its first page (ERR-1), with the guard's proxy named for it as for the browser
/// (ERR-22).
pub(super) async fn errand_context(
    inner: &Inner,
    conversation: &str,
    generation: u64,
) -> Result<BrowserContextId, BrowserError> {
    let browser = {
        let state = inner.state.lock().await;
        if let Some(context) = state.contexts.get(conversation) {
            return Ok(context.clone());
        }
        let running = state.running.as_ref().ok_or(BrowserError::NotRunning)?;
        running.connection.browser()
    };
    // A remote browser can't reach the guard's proxy here: its errands have the CDP-only
    // guard, as its main context has (ERR-22).
    let proxied = inner.backend.abilities().guard == guard::GuardMode::Proxy;
    let proxy = if proxied {
        inner
            .backend
            .guard
            .lock()
            .await
            .as_ref()
            .and_then(guard::Running::proxy_addr)
    } else {
        None
    };
    let made = browser
        .call(&CreateBrowserContext {
            dispose_on_detach: Some(true),
            proxy_server: proxy.map(|addr| format!("http://{addr}")),
            proxy_bypass_list: proxy.map(|_| "<-loopback>".to_owned()),
        })
        .await?;
    if inner
        .errand
        .on_main
        .load(std::sync::atomic::Ordering::SeqCst)
    {
        // Its targets are the errands' watcher's, not the main browser's (ERR-21).
        lock(&inner.errand.borrowed).insert(made.browser_context_id.clone());
    }
    // Signed in only where the person always allows, before its first page (ERR-3), then
    // given back what it held if it was set aside (ERR-11).
    let seeded =
        match super::seed::seed(inner, conversation, &browser, &made.browser_context_id).await {
            Ok(_) => restore_cookies(inner, &browser, conversation, &made.browser_context_id).await,
            Err(e) => Err(e),
        };
    if let Err(e) = seeded {
        let _ = browser
            .call(&DisposeBrowserContext {
                browser_context_id: made.browser_context_id,
            })
            .await;
        return Err(e);
    }
    let mut state = inner.state.lock().await;
    if state.generation != generation || state.running.is_none() {
        return Err(BrowserError::NotRunning);
    }
    let context = state
        .contexts
        .entry(conversation.to_owned())
        .or_insert_with(|| made.browser_context_id.clone())
        .clone();
    drop(state);
    if context != made.browser_context_id {
        // Another page of the same errand made one first: that one is the errand's.
        let _ = browser
            .call(&DisposeBrowserContext {
                browser_context_id: made.browser_context_id,
            })
            .await;
    }
    Ok(context)
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

    /// Why this conversation browses in a browser of its own, and the sites lent to it
    /// (ERR-23): `task` (or `own` for a chat the person gave a browser of its own,
    /// LIVE-16) and the always-allowed sites it was seeded with plus those the person
    /// allowed in it; `None` for a chat in the main context.
    pub fn session(&self) -> Option<crate::protocol::BrowserSession> {
        if self.browser.inner.side != Side::Errands {
            return None;
        }
        let sites = lock(&self.browser.inner.errand.lent)
            .get(&self.id)
            .map(|sites| sites.iter().cloned().collect())
            .unwrap_or_default();
        // Beside the person's own Chrome a task's browser is Conch's own, signed in
        // nowhere (ERR-6, ERR-23).
        let own_chrome = self
            .browser
            .inner
            .errand
            .main
            .as_ref()
            .and_then(Weak::upgrade)
            .is_some_and(|main| lock(&main.backend.chosen).abilities().persons_browser);
        Some(crate::protocol::BrowserSession {
            reason: match super::own::reason(&self.browser, &self.id) {
                "task" if own_chrome => "ownChrome",
                other => other,
            }
            .to_owned(),
            sites,
        })
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

    /// Brings `page`, the active tab's page, to the front of its window for an agent's
    /// step: input to a page behind another (a popup of its own in its window) can stall.
    /// Not asked again while it is there already: Conch brought it forward and no target
    /// of the browser came, went or was brought forward since (issue 32: one browser call
    /// less per act). In the person's own Chrome, whose tabs Conch does not follow, it is
    /// always asked.
    pub async fn bring_to_front_for_step(&self, page: &Session) {
        let key = page.id().map(|id| id.as_str().to_owned());
        let follows = self.browser.abilities().discovers_targets;
        if follows
            && key
                .as_ref()
                .is_some_and(|k| lock(&super::state::FRONTED).contains(k))
        {
            return;
        }
        // Cleared now, so a change while the call is on its way is not missed.
        let epoch = super::state::FRONT_EPOCH.load(std::sync::atomic::Ordering::SeqCst);
        if page
            .call_raw("Page.bringToFront", serde_json::json!({}))
            .await
            .is_ok()
            && follows
            && let Some(key) = key
        {
            let mut fronted = lock(&super::state::FRONTED);
            if super::state::FRONT_EPOCH.load(std::sync::atomic::Ordering::SeqCst) == epoch {
                fronted.insert(key);
            }
        }
    }

    /// The conversation's tabs, for the footer of every result: a conversation of one tab
    /// (the one Conch made, whose title and address come with the browser's own target
    /// events from its start) makes no browser-wide call for it (issue 32: one per act);
    /// with two or more, or where the browser sends no such events (the person's own
    /// Chrome), the titles are asked as [`Conversation::tabs`] asks them (a popup's
    /// first title can come before it became a tab).
    ///
    /// # Errors
    /// As [`Browser::ensure_running`].
    pub async fn tabs_followed(&self) -> Result<Vec<TabInfo>, BrowserError> {
        let _turn = self.lock.lock().await;
        self.ensure_ready().await?;
        let one = self
            .browser
            .with_state(|state| {
                state
                    .tabs
                    .conversation(&self.id)
                    .is_none_or(|t| t.tabs.len() <= 1)
            })
            .await;
        if !one || !self.browser.abilities().discovers_targets {
            self.refresh_titles().await;
        }
        Ok(self
            .browser
            .with_state(|state| tab_list(state, &self.id))
            .await)
    }

    /// The id of the conversation's active tab, if it has one, without asking the browser
    /// for the tabs' titles (a step needs only which tab is in front: asking for every
    /// target's title three times a step cost each conversation's steps a browser-wide
    /// call, issue 18).
    ///
    /// # Errors
    /// As [`Browser::ensure_running`].
    pub async fn active_tab_id(&self) -> Result<Option<String>, BrowserError> {
        let _turn = self.lock.lock().await;
        self.ensure_ready().await?;
        Ok(self.active_tab().await)
    }

    /// Waits, at most `within`, until the active tab's page has left its first empty
    /// document and finished loading: a tab an act just opened is read once its page is
    /// there, not the blank one before it (TAB-3). Gives whether it did.
    ///
    /// # Errors
    /// As [`Conversation::page`].
    pub async fn active_tab_loaded(&self, within: Duration) -> Result<bool, BrowserError> {
        let session = self.page().await?;
        Ok(wait_until_loaded(&session, within).await)
    }

    /// The conversation's tabs as they stand, without waiting for its call in flight and
    /// without starting the browser (the live view reads them while the agent acts):
    /// empty when the browser is not running.
    pub async fn tabs_now(&self) -> Vec<TabInfo> {
        self.refresh_titles().await;
        self.browser
            .with_state(|state| {
                if state.running.is_none() {
                    return Vec::new();
                }
                tab_list(state, &self.id)
            })
            .await
    }

    /// The active tab's id and DevTools session as they stand, without waiting for the
    /// conversation's call in flight and without starting the browser; `None` when it
    /// has no tab or the browser is not running (the live view follows it, LIVE-1).
    pub async fn active_page(&self) -> Option<(String, Session)> {
        let state = self.browser.inner.state.lock().await;
        state.running.as_ref()?;
        let active = state
            .tabs
            .conversation(&self.id)
            .and_then(|t| t.active.clone())?;
        let session = session_of(&state, &self.id, &active)?;
        Some((active, session))
    }

    /// The DevTools sessions of every tab of the conversation as they stand (the live
    /// view shapes them all to the panel, LIVE-4).
    pub async fn pages_now(&self) -> Vec<Session> {
        let state = self.browser.inner.state.lock().await;
        state.running.as_ref().map_or_else(Vec::new, |r| {
            r.pages
                .values()
                .filter(|p| p.conversation == self.id)
                .map(|p| p.session.clone())
                .collect()
        })
    }

    /// Takes the titles and addresses of this conversation's tabs from the browser itself
    /// (one browser-level call: a page frozen by its dialog is not asked, SNAP-12), so a
    /// tab's title follows its page even where no change event came.
    pub(super) async fn refresh_titles(&self) {
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
        self.browser.inner.backend.guard_log.cursor()
    }

    /// The requests the guard refused after `cursor` that this conversation's own tabs
    /// made (their pages, frames and workers), never another conversation's (NET-10,
    /// issue 12). Waits a moment for the pages to hear of the proxy's refusals.
    pub async fn blocked_since(&self, cursor: u64) -> Vec<Blocked> {
        let inner = &self.browser.inner;
        inner
            .backend
            .guard_log
            .claims_settled(cursor, CLAIMS_WAIT)
            .await;
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
        whose(inner, inner.backend.guard_log.since(cursor), &tabs)
    }

    /// Notes that came up since the last call ("That opened a new tab, t2"), taken once.
    pub async fn take_notes(&self) -> Vec<String> {
        self.browser
            .with_state(|state| state.notes.remove(&self.id).unwrap_or_default())
            .await
    }

    /// Whether a download the browser began in frame `frame_id` was started by one of
    /// this conversation's tabs (DL-1, issue 29): the frame is one of its tabs, or a
    /// frame inside one. A download of another conversation, or of a tab that is not
    /// Conch's (the person's own in their own Chrome), is not.
    pub async fn started_download(&self, frame_id: &str) -> bool {
        let mine: Vec<(TargetId, Session)> = {
            let state = self.browser.inner.state.lock().await;
            state.running.as_ref().map_or_else(Vec::new, |r| {
                r.pages
                    .iter()
                    .filter(|(_, p)| p.conversation == self.id)
                    .map(|(id, p)| (id.clone(), p.session.clone()))
                    .collect()
            })
        };
        // A tab's own frame has the tab's target id.
        if mine.iter().any(|(id, _)| id.as_str() == frame_id) {
            return true;
        }
        for (_, session) in mine {
            let tree = session
                .call_raw_with_timeout(
                    "Page.getFrameTree",
                    serde_json::json!({}),
                    Duration::from_secs(2),
                )
                .await;
            if tree.is_ok_and(|tree| frame_in(&tree["frameTree"], frame_id)) {
                return true;
            }
        }
        false
    }

    /// Where this conversation's downloads may land (DL-5): `false` when its browser is one
    /// Conch did not launch, whose disk is not this machine's.
    pub fn downloads_to_disk(&self) -> bool {
        !self.browser.is_remote()
    }

    /// Whether this conversation's pages share their browser context with the person's own
    /// tabs (your own Chrome, where Conch makes no context): download rules set there
    /// would govern the person's downloads too (DL-5, issue 29).
    pub fn shares_context_with_person(&self) -> bool {
        lock(&self.browser.inner.backend.chosen)
            .abilities()
            .shares_context_with_person
    }

    /// Whether the browser this conversation browses in runs now (a task's, or on a pool
    /// the conversation's own, not only the main one): its tabs and notes can be read
    /// without starting anything.
    pub async fn browser_runs(&self) -> bool {
        self.browser.status().await.state == RunState::Running
    }

    /// How many times this conversation's browser has launched (a watch set on one launch
    /// is gone with it).
    pub async fn launches(&self) -> u32 {
        self.browser.status().await.launches
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
        if self.browser.inner.side == Side::Errands {
            self.browser.resume_errand(&self.id).await;
            self.browser.open_errand(&self.id).await?;
        }
        self.browser.ensure_running().await?;
        let (saved, generation): (Vec<SavedTab>, u64) = {
            let mut state = self.browser.inner.state.lock().await;
            if !state.unrestored.remove(&self.id) {
                return Ok(());
            }
            let saved = state
                .tabs
                .conversation(&self.id)
                .map(|t| t.tabs.clone())
                .unwrap_or_default();
            (saved, state.generation)
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
                    // The browser died meanwhile (LAUNCH-8): the tab stays saved and
                    // reopens with the next launch.
                    if state.generation != generation
                        || state
                            .running
                            .as_ref()
                            .is_none_or(|r| r.connection.is_closed())
                    {
                        return Err(BrowserError::NotRunning);
                    }
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

    /// Brings `tab` to the front of its window: a popup opened from it sits in front of it
    /// in the same window, and a page behind another gets no frames and no input.
    async fn bring_to_front(&self, tab: &str) {
        super::state::targets_changed();
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

/// Reopens `conv`'s tabs now, as its next call would (ERR-19: a watched errand heals at
/// once). Boxed, so the runtime can start it from where the browser is installed.
pub(super) fn reopen(conv: Conversation) -> futures_util::future::BoxFuture<'static, ()> {
    Box::pin(async move {
        if let Err(e) = conv.tabs().await {
            tracing::warn!(target: "conch_browser", error = %e, "a watched errand could not be reopened");
            // Nothing to hold: the wheel goes back to the agent, whose waiting call hears
            // the same (BE-4), and the person is told over the stale frame.
            let gave_back = conv.wheel().page_gone();
            if let Some(events) = conv.browser.inner.config.events.as_ref() {
                let backend = lock(&conv.browser.inner.backend.status).backend.to_owned();
                let wheel = if gave_back {
                    " The wheel is back with the agent."
                } else {
                    ""
                };
                events.send(
                    &conv.id,
                    crate::protocol::BrowserEvent::Status(crate::protocol::BrowserStatus {
                        running: false,
                        backend,
                        message: format!(
                            "This conversation's tabs could not be reopened: {e}{wheel}"
                        ),
                        open_panel: false,
                        download: None,
                    }),
                );
            }
        }
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

/// Whether `tree` (a `Page.getFrameTree` node) holds frame `frame_id`.
fn frame_in(tree: &serde_json::Value, frame_id: &str) -> bool {
    tree["frame"]["id"].as_str() == Some(frame_id)
        || tree["childFrames"]
            .as_array()
            .is_some_and(|children| children.iter().any(|child| frame_in(child, frame_id)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::testing::{config, kill_and_wait};

    /// The page targets of the browser `page` is in: (id, address).
    async fn page_targets(page: &Session) -> Vec<(String, String)> {
        let targets = page
            .call_raw("Target.getTargets", serde_json::json!({}))
            .await
            .unwrap();
        targets["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["type"] == "page")
            .map(|t| {
                let field = |name: &str| t[name].as_str().unwrap_or_default().to_owned();
                (field("targetId"), field("url"))
            })
            .collect()
    }

    /// A browser whose launch page is ruled, and conversation "c1" with basic.html open
    /// in its first tab (the set-up of the first-tab and blank-window tests).
    struct FirstTab {
        server: conch_fixtures::FixtureServer,
        dir: tempfile::TempDir,
        browser: Browser,
        chat: Conversation,
        launch: TargetId,
    }

    async fn first_tab_open() -> FirstTab {
        let server = conch_fixtures::FixtureServer::start().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let browser = Browser::new(config(&dir));
        let launch = launch_page_ruled(&browser).await;
        let chat = browser.conversation("c1");
        chat.open(&server.url("basic.html")).await.unwrap();
        FirstTab {
            server,
            dir,
            browser,
            chat,
            launch,
        }
    }

    /// Starts `browser` and waits until the page it opened at launch is ruled; gives it.
    async fn launch_page_ruled(browser: &Browser) -> TargetId {
        browser.ensure_running().await.unwrap();
        let launch = {
            let state = browser.inner.state.lock().await;
            let running = state.running.as_ref().unwrap();
            running.launch_page.clone().expect("the launch page").0
        };
        for _ in 0..200 {
            if lock(&browser.inner.pages.ready).pages.contains_key(&launch) {
                return launch;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the launch page was never ruled");
    }

    /// The page targets of `page`'s browser once there are `n` of them, or as they are
    /// after 10 s.
    async fn until_pages(page: &Session, n: usize) -> Vec<(String, String)> {
        let mut pages = Vec::new();
        for _ in 0..200 {
            pages = page_targets(page).await;
            if pages.len() == n {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        pages
    }

    /// LIVE-16: sets a session cookie in `chat`'s page, lets `close` close what it closes
    /// (while the window owed for the tab may not be made yet), and checks that the
    /// browser runs on and a next conversation's tab still has the cookie.
    async fn the_profile_outlives(
        browser: &Browser,
        server: &conch_fixtures::FixtureServer,
        chat: &Conversation,
        close: impl AsyncFnOnce(),
        why: &str,
    ) {
        chat.evaluate("document.cookie = 'kept=yes; path=/'; 1")
            .await
            .unwrap();
        close().await;
        // The browser notices a window it no longer has in a moment, not at once.
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(browser.status().await.state, RunState::Running);
        let next = browser.conversation("next");
        next.open(&server.url("basic.html")).await.unwrap();
        assert_eq!(
            next.evaluate("document.cookie").await.unwrap(),
            "kept=yes",
            "{why}"
        );
    }

    /// Issue 31: once the page the browser opened at launch is ruled, the first tab takes
    /// it alone: no window is made while its first page loads (one would hold that load
    /// up on the browser's main thread); a blank one is made after it and stays.
    #[tokio::test(flavor = "multi_thread")]
    async fn issue_31_the_first_tab_takes_the_launch_page_and_its_window_comes_after_the_load() {
        let FirstTab {
            dir: _dir,
            browser,
            launch,
            chat,
            ..
        } = first_tab_open().await;
        let tab_target = {
            let state = browser.inner.state.lock().await;
            let running = state.running.as_ref().unwrap();
            assert!(running.launch_page.is_none(), "taken");
            running.pages.keys().next().cloned().unwrap()
        };
        assert_eq!(tab_target, launch, "the first tab is the launch page");
        let page = chat.page().await.unwrap();
        let loaded = page_targets(&page).await;
        assert_eq!(
            loaded.len(),
            1,
            "no window made during the load: {loaded:?}"
        );
        let pages = until_pages(&page, 2).await;
        assert!(
            pages
                .iter()
                .any(|(id, url)| id != launch.as_str() && url == "about:blank"),
            "the window made beside it stays, blank: {pages:?}"
        );
        assert_eq!(pages.len(), 2, "{pages:?}");
        browser.shutdown().await;
    }

    /// Issue 31, LIVE-16: closing the first tab, which took the launch page, at once,
    /// before the window owed in its stead is made, makes it first: the browser keeps a
    /// window and its profile, so a session cookie set there is there for the next tab.
    #[tokio::test(flavor = "multi_thread")]
    async fn issue_31_closing_the_first_tab_at_once_keeps_the_profile() {
        let FirstTab {
            server,
            dir: _dir,
            browser,
            chat,
            ..
        } = first_tab_open().await;
        let close = async || chat.close("t1").await.unwrap();
        the_profile_outlives(&browser, &server, &chat, close, "it outlived the first tab").await;
        browser.shutdown().await;
    }

    /// Issue 31, LIVE-16: ending the first conversation while the window owed in the
    /// launch page's stead is not made yet makes it first: the next conversation still
    /// has the profile's session cookies.
    #[tokio::test(flavor = "multi_thread")]
    async fn issue_31_ending_the_first_conversation_at_once_keeps_the_profile() {
        let FirstTab {
            server,
            dir: _dir,
            browser,
            chat: first,
            ..
        } = first_tab_open().await;
        let end = async || browser.end_conversation("c1").await;
        the_profile_outlives(
            &browser,
            &server,
            &first,
            end,
            "it outlived the conversation",
        )
        .await;
        browser.shutdown().await;
    }

    /// The blank window kept ready, looked for `tries` times 50 ms apart.
    async fn kept_ready(browser: &Browser, tries: usize) -> Option<TargetId> {
        for tried in 1..=tries {
            let ready = {
                let state = browser.inner.state.lock().await;
                let running = state.running.as_ref().unwrap();
                running.blank.as_ref().map(|(target, _)| target.clone())
            };
            if ready.is_some() || tried == tries {
                return ready;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        None
    }

    /// The target of `conversation`'s tab.
    async fn tab_target(browser: &Browser, conversation: &str) -> TargetId {
        let state = browser.inner.state.lock().await;
        let running = state.running.as_ref().unwrap();
        running
            .pages
            .iter()
            .find(|(_, p)| p.conversation == conversation)
            .map(|(target, _)| target.clone())
            .unwrap()
    }

    /// Issue 32, LIVE-16: the blank window made after the first tab's load stands ready:
    /// the next conversation's tab takes it (no window is made for that tab), another
    /// blank window is made after that tab's load, and closing both tabs leaves the
    /// browser a window and its profile.
    #[tokio::test(flavor = "multi_thread")]
    async fn issue_32_a_new_tab_takes_the_blank_window_kept_ready_and_another_comes() {
        let FirstTab {
            server,
            dir: _dir,
            browser,
            chat: first,
            ..
        } = first_tab_open().await;
        let page = first.page().await.unwrap();
        // The blank window comes after the first load, and is kept ready once ruled.
        let blank = kept_ready(&browser, 200)
            .await
            .expect("a blank window kept ready");
        assert_eq!(page_targets(&page).await.len(), 2);

        let second = browser.conversation("c2");
        second.open(&server.url("basic.html")).await.unwrap();
        let taken = tab_target(&browser, "c2").await;
        assert!(kept_ready(&browser, 1).await.is_none(), "taken");
        assert_eq!(
            taken, blank,
            "the second tab is the blank window kept ready"
        );
        let loaded = page_targets(&page).await;
        assert_eq!(loaded.len(), 2, "no window made for it: {loaded:?}");
        let pages = until_pages(&page, 3).await;
        assert_eq!(pages.len(), 3, "another blank window: {pages:?}");
        let close = async || {
            first.close("t1").await.unwrap();
            second.close("t1").await.unwrap();
        };
        the_profile_outlives(&browser, &server, &first, close, "it outlived both tabs").await;
        browser.shutdown().await;
    }

    /// Issue 32, LIVE-16: a conversation that ends right after its first page makes the
    /// window owed in that page's stead, and the window is ruled and kept ready at once,
    /// not after the load and the pause in the agent's calls it would otherwise wait for
    /// (3 s and more in tests): a conversation that starts right after takes it instead
    /// of making a window of its own (`bench scale`'s first level after its warm-up).
    #[tokio::test(flavor = "multi_thread")]
    async fn issue_32_a_conversation_that_starts_as_another_ends_takes_the_window_it_left() {
        let FirstTab {
            server,
            dir: _dir,
            browser,
            ..
        } = first_tab_open().await;
        browser.end_conversation("c1").await;
        let blank = kept_ready(&browser, 30)
            .await
            .expect("the window left by the ended conversation kept ready soon");
        let second = browser.conversation("c2");
        second.open(&server.url("basic.html")).await.unwrap();
        let taken = tab_target(&browser, "c2").await;
        assert_eq!(taken, blank, "the next conversation's tab is that window");
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

        kill_and_wait(&browser).await;

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
