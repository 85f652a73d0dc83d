//! Watching the browser's targets: every attached target gets the guard's rules before it
//! runs (LAUNCH-19, NET-8) and a dialog watch (DLG-1); a page Conch made is handed to the
//! `create_page` waiting for it; popups become tabs of their opener's conversation (TAB-3,
//! TAB-5); destroyed pages leave their conversation (TAB-6); addresses and titles are
//! saved as they change (DATA-9).
//!
//! Deliberately absent: choosing which tab a popup pushes out (conch-policy's).

use std::sync::{Arc, Weak};
use std::time::Duration;

use conch_cdp::protocol::TargetId;
use conch_cdp::protocol::emulation::{SetDeviceMetricsOverride, SetFocusEmulationEnabled};
use conch_cdp::protocol::page::Enable as PageEnable;
use conch_cdp::protocol::target::{CloseTarget, TargetDestroyed, TargetInfo, TargetType};
use conch_cdp::{AttachedTarget, AttachedTargets, Connection, Session};
use futures_util::StreamExt;
use serde::Deserialize;

use super::state::{close_tab, tab_to_close_for_popup, touch};
use super::*;
use crate::guard::rules::After;
use crate::guard::{self};
use crate::page::dialog::{self};
use crate::store::SavedTab;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TargetInfoChanged {
    target_info: TargetInfo,
}

/// Follows the browser's targets: every attached target gets the guard's rules before it
/// runs (LAUNCH-19), popups become tabs of their opener's conversation (TAB-3, TAB-5),
/// closed pages leave their conversation and give the active tab back to the opener
/// (TAB-6), and addresses and titles are saved as they change (DATA-9).
pub(super) async fn watch_targets(
    inner: Weak<Inner>,
    connection: Connection,
    attached: AttachedTargets,
) {
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
                if !inner.backend.abilities().discovers_targets {
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
    super::state::targets_changed();
    if !ours(&inner, &target.target_info) {
        return;
    }
    let abilities = inner.backend.abilities();
    let rules = match abilities.guard {
        guard::GuardMode::CdpOnly => &inner.backend.remote_rules,
        guard::GuardMode::Proxy => &inner.backend.rules,
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
    let frame = info.target_type == TargetType::Iframe;
    if frame {
        // The reader finds an out-of-process frame's session here, never by listing the
        // browser's targets (BE-13): only frames auto-attached under Conch's pages.
        crate::page::frame_attached(info.target_id.as_str(), target.session.clone());
    }
    if info.target_type == TargetType::Page {
        // Before its Network events start: a WebSocket the page opens while it loads is
        // known to settling (issue 30).
        crate::page::watch_sockets(&target.session);
    }
    if network && let Some(id) = target.session.id().cloned() {
        if let Some(parent) = target.parent.clone() {
            lock(&inner.pages.parents).insert(id.clone(), parent);
        }
        let claims = guard::claims::watch(&target.session, Arc::clone(&inner.backend.guard_log));
        let weak = Arc::downgrade(&inner);
        let frame_id = frame.then(|| (info.target_id.clone(), target.session.clone()));
        tokio::spawn(async move {
            claims.await;
            // The session ended: it has no children any more.
            if let Some((frame_id, session)) = frame_id {
                crate::page::frame_detached(frame_id.as_str(), &session);
            }
            if let Some(inner) = weak.upgrade() {
                lock(&inner.pages.parents).remove(&id);
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
        // A page's viewport and focus go in the same way, sent before the resume, so
        // its first script sees them (AMB-11); a held popup, which shares its opener's
        // renderer, answers them only once it runs, so they are awaited beside it.
        let shaped = async {
            if page {
                shape_page(&target.session).await;
            }
        };
        let ((), watch, ()) = tokio::join!(
            shaped,
            dialog::watch(&target.session, Arc::new(dialog::CancelConfirms)),
            resume
        );
        match watch {
            Ok(watch) => {
                let mut dialogs = lock(&inner.pages.dialogs);
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
        let late = lock(&inner.pages.ready).file(
            info.target_id.clone(),
            target.session.clone(),
            unclaimed_after(&inner),
        );
        if late.is_some() {
            tracing::debug!(target: "conch_browser", "a page attached after its creation gave up; closed");
            let close = CloseTarget {
                target_id: info.target_id.clone(),
            };
            let _ = target.session.connection().browser().call(&close).await;
            return;
        }
        inner.pages.ready_changed.notify_waiters();
    }
}

/// How long a page filed for its creator is kept unclaimed: a creator waits at most the
/// attach timeout from its CreateTarget's answer.
pub(super) fn unclaimed_after(inner: &Inner) -> Duration {
    inner.config.attach_timeout * 2 + Duration::from_secs(5)
}

/// Whether an attached target is this side's to rule (ERR-21): on a connection the
/// errands borrow from the main remote browser, the targets of the errands' contexts are
/// the errands' watcher's, and every other is the main one's.
fn ours(inner: &Inner, info: &TargetInfo) -> bool {
    let borrowed = info
        .browser_context_id
        .as_ref()
        .is_some_and(|context| lock(&inner.errand.borrowed).contains(context));
    match inner.side {
        Side::Main => !borrowed,
        Side::Errands => {
            borrowed
                || !inner
                    .errand
                    .on_main
                    .load(std::sync::atomic::Ordering::SeqCst)
        }
    }
}

/// Gives a page the desktop viewport with no panel (AMB-11: 1280×800 at scale 1, so
/// responsive sites show their desktop layout) and emulated focus (its window is rarely
/// the system's front one, yet focus events and typing must work as in front).
/// Both are sent at once, when first polled: before a resume polled after it.
async fn shape_page(session: &Session) {
    let viewport = conch_policy::DEFAULT_VIEWPORT;
    let metrics = SetDeviceMetricsOverride {
        width: viewport.width,
        height: viewport.height,
        device_scale_factor: 1.0,
        mobile: false,
    };
    let focus = SetFocusEmulationEnabled { enabled: true };
    let (sized, focused) = tokio::join!(session.call(&metrics), session.call(&focus));
    if let Err(e) = sized {
        tracing::debug!(target: "conch_browser", error = %e, "the page's viewport could not be set");
    }
    if let Err(e) = focused {
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
    super::state::targets_changed();
    lock(&inner.pages.dialogs).remove(target);
    let mut state = inner.state.lock().await;
    // The blank window kept for the next new tab went away: none is taken (issue 32).
    if let Some(running) = state.running.as_mut()
        && running
            .blank
            .as_ref()
            .is_some_and(|(blank, _)| blank == target)
    {
        running.blank = None;
    }
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

async fn page_changed(inner: &Arc<Inner>, info: &TargetInfo) {
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
    if moved {
        // Its origin's local storage may be seeded (ERR-3) or kept (ERR-11, ERR-19).
        super::storage::saw(inner, &page.conversation, &info.url);
    }
    if moved && inner.side == Side::Errands {
        snapshot_soon(inner, &page.conversation);
    }
    // A title alone is not worth two fsyncs under the browser-wide lock: a page that
    // changes its title in a loop would stall every conversation. It is written with the
    // next change that matters.
    if moved {
        inner.saver.save(&state.tabs);
    }
}

/// How long after a page loads its errand's cookies and local storage are snapshotted
/// (ERR-19, AMB-26).
const SNAPSHOT_AFTER: Duration = Duration::from_secs(3);

/// Snapshots errand `conversation`'s cookies and local storage [`SNAPSHOT_AFTER`] from
/// now, debounced: a later load in the meantime moves the snapshot on (ERR-19).
fn snapshot_soon(inner: &Arc<Inner>, conversation: &str) {
    let due = {
        let mut due = lock(&inner.errand.snapshot_due);
        let count = due.entry(conversation.to_owned()).or_insert(0);
        *count += 1;
        *count
    };
    let weak = Arc::downgrade(inner);
    let conversation = conversation.to_owned();
    tokio::spawn(async move {
        tokio::time::sleep(SNAPSHOT_AFTER).await;
        let Some(inner) = weak.upgrade() else { return };
        if lock(&inner.errand.snapshot_due).get(&conversation) != Some(&due) {
            return;
        }
        Browser { inner }.snapshot_errand(&conversation).await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::testing::config;
    use conch_cdp::protocol::target::GetTargets;

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

    /// ERR-21, ERR-22: on a connection the errands borrow from the main remote browser,
    /// a target of an errand's context is the errands' watcher's to rule and resume, and
    /// every other target the main one's; on their own local browser the errands rule
    /// every target of theirs.
    #[test]
    fn err_21_targets_of_the_errands_contexts_are_the_errands_watchers() {
        let dir = tempfile::tempdir().unwrap();
        let main = Browser::new(config(&dir));
        let errands = main.errands();
        let info = |context: &str| -> TargetInfo {
            serde_json::from_value(serde_json::json!({
                "targetId": "T", "type": "page", "browserContextId": context,
            }))
            .unwrap()
        };
        let (errand, chat, bare) = (info("E1"), info("DEFAULT"), {
            let mut bare = info("x");
            bare.browser_context_id = None;
            bare
        });
        // Errands on their own local browser: the registry is empty, each rules its own.
        assert!(ours(&main.inner, &chat) && ours(&errands.inner, &chat));
        errands
            .inner
            .errand
            .on_main
            .store(true, std::sync::atomic::Ordering::SeqCst);
        lock(&errands.inner.errand.borrowed).insert("E1".into());
        assert!(
            !ours(&main.inner, &errand),
            "the main watcher rules an errand's page"
        );
        assert!(ours(&errands.inner, &errand));
        assert!(ours(&main.inner, &chat));
        assert!(
            !ours(&errands.inner, &chat),
            "the errands rule the chat's page"
        );
        assert!(ours(&main.inner, &bare) && !ours(&errands.inner, &bare));
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
        let filed = || {
            let mut ids: Vec<TargetId> = lock(&browser.inner.pages.ready)
                .pages
                .keys()
                .cloned()
                .collect();
            ids.sort_by(|a, b| a.0.cmp(&b.0));
            ids
        };
        // The browser's own first tab is filed too (held like any page), and nobody takes
        // it. Waited for, not slept on: on a loaded machine it is filed later (it was once
        // after the 2 s this test used to sleep).
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        while filed().len() != pages(&browser).await.len() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the browser's own tab was never filed"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let before = pages(&browser).await;
        let first = filed();
        // This test is about a page Conch makes: the first tab would take the launch page
        // instead (issue 31).
        {
            let mut state = browser.inner.state.lock().await;
            state.running.as_mut().unwrap().launch_page = None;
        }
        let chat = browser.conversation("c1");

        let failed = chat.open("about:blank").await.unwrap_err();
        assert!(
            matches!(failed, BrowserError::PageNotReady { seconds: 1 }),
            "{failed:?}"
        );
        assert_ne!(failed.to_string(), BrowserError::NotRunning.to_string());
        // Past the hold: the late page was handed over, and dropped. It is closed by then
        // or soon after; waited for up to 15 s on a loaded machine, never taken as done.
        tokio::time::sleep(Duration::from_millis(2000)).await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        while pages(&browser).await != before && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(filed(), first, "the late page is kept");
        assert!(lock(&browser.inner.pages.ready).abandoned.is_empty());
        assert_eq!(pages(&browser).await, before, "the late page is left open");
        assert!(chat.tabs().await.unwrap().is_empty());
        browser.shutdown().await;
    }
}
