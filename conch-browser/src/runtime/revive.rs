//! The main browser comes back at once when it dies while someone is there (LAUNCH-8,
//! issue 28): a watcher, a call in flight or a handoff or question waiting for the person
//! holds it awake ([`Browser::hold_awake`]); when its process dies or its DevTools
//! connection drops under such a hold, it is relaunched without waiting for the next
//! call, every conversation's saved tabs reopen at their addresses (in order, the active
//! one active), and the live side hears of it as `browser.status` events: "relaunching",
//! then "back". Nobody there: nothing changes, the next call heals it.
//!
//! A crash loop must not spin: relaunches are counted over the last minute, the second and
//! third wait (1 s, 2 s) first, and a fourth crash within the minute is left for the next
//! call, which the status and the event say.
//!
//! Deliberately absent: relaunching itself and reopening tabs (`reach`, `tabs`), and the
//! errands' browser, which heals its watched errands on its own (ERR-19, `reach`).

use std::time::Instant;

use super::state::Revival;
use super::*;
use crate::protocol::{BrowserEvent, BrowserStatus};

/// The most relaunches of its own within [`WINDOW`]; one more crash is left for the next
/// call.
const MOST_IN_WINDOW: usize = 3;

/// The window relaunches are counted in.
const WINDOW: Duration = Duration::from_secs(60);

/// How long reopening every conversation's tabs may take before the live side is told the
/// browser is back anyway (a page that never loads must not hold the news).
const REOPEN_WAIT: Duration = Duration::from_secs(30);

/// What the live side hears while the main browser is relaunched after a crash.
pub(super) const RELAUNCHING: &str =
    "The browser stopped unexpectedly; Conch is starting it again with its tabs.";

/// What the live side hears once the main browser is back with its tabs.
pub(super) const RELAUNCHED: &str = "The browser is back, with its tabs.";

/// Whether a crash is relaunched now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Admit {
    /// Relaunch after this long.
    After(Duration),
    /// Too many in the last minute (how many): leave it for the next call.
    GiveUp(usize),
}

impl Revival {
    /// Records that the browser of `generation` was found dead (from `refresh_running`).
    pub(super) fn died(&self, generation: u64) {
        lock(&self.inner).died = Some(generation);
    }

    /// Whether the browser of `generation` died, rather than being shut down on purpose.
    fn crashed(&self, generation: u64) -> bool {
        lock(&self.inner).died == Some(generation)
    }

    /// Counts a relaunch at `now` unless [`MOST_IN_WINDOW`] happened in the last minute.
    fn admit(&self, now: Instant) -> Admit {
        let mut revived = lock(&self.inner);
        while revived
            .relaunches
            .front()
            .is_some_and(|at| now.saturating_duration_since(*at) >= WINDOW)
        {
            revived.relaunches.pop_front();
        }
        let before = revived.relaunches.len();
        if before >= MOST_IN_WINDOW {
            return Admit::GiveUp(before);
        }
        revived.relaunches.push_back(now);
        // At once the first time; then 1 s, 2 s.
        Admit::After(match before {
            0 => Duration::ZERO,
            n => Duration::from_secs(1 << (n - 1)),
        })
    }
}

/// Watches the main browser of `generation` on `connection`: when it dies while held
/// awake, brings it back at once with every conversation's tabs. Started by `install`;
/// boxed with its type named, as the relaunch it makes starts the next one.
pub(super) fn when_held(
    inner: Weak<Inner>,
    connection: Connection,
    generation: u64,
) -> futures_util::future::BoxFuture<'static, ()> {
    Box::pin(watch(inner, connection, generation))
}

async fn watch(inner: Weak<Inner>, connection: Connection, generation: u64) {
    connection.closed().await;
    let Some(inner) = inner.upgrade() else { return };
    let browser = Browser { inner };
    {
        let mut state = browser.inner.state.lock().await;
        if state.generation == generation && state.running.is_some() {
            refresh_running(&browser.inner, &mut state);
        }
        // Shut down on purpose (idle, Stop, a new backend), or never there: nothing to do.
        if !browser.inner.revival.crashed(generation) {
            return;
        }
    }
    if !held(&browser) {
        // Nobody there: the next call heals it, as before.
        return;
    }
    revive(&browser).await;
}

/// Whether someone holds the browser awake now.
fn held(browser: &Browser) -> bool {
    browser
        .inner
        .awake
        .load(std::sync::atomic::Ordering::SeqCst)
        > 0
}

/// Relaunches the crashed main browser and reopens every conversation's tabs, telling
/// the live side before and after; bounded by [`Revival::admit`].
async fn revive(browser: &Browser) {
    let inner = &browser.inner;
    let delay = match inner.revival.admit(Instant::now()) {
        Admit::After(delay) => delay,
        Admit::GiveUp(times) => {
            let sentence = format!(
                "The browser stopped {times} times within a minute, so Conch no longer starts it again by itself; it starts on the agent's next step."
            );
            tracing::warn!(target: "conch_browser", times, "the browser keeps crashing; leaving it for the next call");
            lock(&inner.backend.status).why = Some(sentence.clone());
            tell(browser, false, sentence);
            return;
        }
    };
    tracing::warn!(target: "conch_browser", ?delay, "the browser went away while someone was there; relaunching it");
    tell(browser, false, RELAUNCHING.to_owned());
    tokio::time::sleep(delay).await;
    if !held(browser) {
        // Everyone left while it waited: the next call heals it.
        return;
    }
    if let Err(e) = browser.ensure_running().await {
        tracing::warn!(target: "conch_browser", error = %e, "the crashed browser could not be relaunched");
        tell(
            browser,
            false,
            format!("The browser stopped unexpectedly and could not be started again: {e}"),
        );
        return;
    }
    // Each conversation's saved tabs, as its next call would reopen them.
    let (relaunched, waiting): (u64, Vec<String>) = {
        let state = inner.state.lock().await;
        (state.generation, state.unrestored.iter().cloned().collect())
    };
    let reopening = waiting.iter().map(|id| {
        let conv = browser.conversation(id);
        async move {
            if let Err(e) = conv.tabs().await {
                tracing::warn!(target: "conch_browser", error = %e, "a conversation's tabs could not be reopened after a crash");
            }
        }
    });
    if tokio::time::timeout(REOPEN_WAIT, futures_util::future::join_all(reopening))
        .await
        .is_err()
    {
        tracing::warn!(target: "conch_browser", "reopening the tabs after a crash is slow; telling the watchers anyway");
    }
    // Not when the relaunched browser died again meanwhile: its death was told already,
    // and "back" after it would say the opposite of what is so.
    let still = {
        let state = inner.state.lock().await;
        state.generation == relaunched
            && state
                .running
                .as_ref()
                .is_some_and(|r| !r.connection.is_closed())
    };
    if still {
        tell(browser, true, RELAUNCHED.to_owned());
    }
}

/// Sends `browser.status` for the whole browser (conversation `""`: every live socket).
fn tell(browser: &Browser, running: bool, message: String) {
    let Some(events) = browser.inner.config.events.as_ref() else {
        return;
    };
    let backend = lock(&browser.inner.backend.status).backend.to_owned();
    events.send(
        "",
        BrowserEvent::Status(BrowserStatus {
            running,
            backend,
            message,
            open_panel: false,
            download: None,
        }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::testing::config;

    /// Waits (up to 20 s) until a browser other than `old` runs; gives its pid.
    async fn relaunched_after(browser: &Browser, old: u32) -> u32 {
        for _ in 0..200 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if let Some(now) = browser.pid().await
                && now != old
            {
                return now;
            }
        }
        panic!("not relaunched");
    }

    /// LAUNCH-8 (issue 28): a browser that dies again while its tabs are being reopened
    /// loses none of them: they reopen with the next relaunch, at their addresses.
    #[tokio::test(flavor = "multi_thread")]
    async fn launch_8_a_crash_while_the_tabs_reopen_loses_no_tab() {
        let server = conch_fixtures::FixtureServer::start().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut config = config(&dir);
        // Reopening tabs-a takes a second: the crash lands while the tabs reopen.
        config.hold_pages = Some(("tabs-a".to_owned(), Duration::from_secs(1)));
        let browser = Browser::new(config);
        let chat = browser.conversation("c1");
        chat.open(&server.url("basic.html")).await.unwrap();
        chat.new_tab(&server.url("tabs-a.html")).await.unwrap();
        let before: Vec<String> = chat.tabs_now().await.into_iter().map(|t| t.url).collect();
        let _watcher = browser.hold_awake();
        let first = browser.pid().await.unwrap();
        conch_fixtures::browser::kill(first);
        // Killed again the moment it is back, while its tabs reopen.
        let second = relaunched_after(&browser, first).await;
        conch_fixtures::browser::kill(second);
        relaunched_after(&browser, second).await;
        let mut pages = 0;
        for _ in 0..200 {
            pages = chat.pages_now().await.len();
            if pages == 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let after: Vec<String> = chat.tabs_now().await.into_iter().map(|t| t.url).collect();
        assert_eq!(after, before, "{:?}", chat.take_notes().await);
        assert_eq!(pages, 2);
        browser.shutdown().await;
    }

    /// LAUNCH-8 (issue 28): a crash loop does not spin: the first relaunch is at once,
    /// the next two wait 1 s and 2 s, a fourth within the minute is given up, and a
    /// minute later it relaunches at once again.
    #[test]
    fn launch_8_a_crash_loop_is_relaunched_three_times_a_minute_then_left() {
        let revival = Revival::default();
        let start = Instant::now();
        let at = |secs: u64| start + Duration::from_secs(secs);
        assert_eq!(revival.admit(at(0)), Admit::After(Duration::ZERO));
        assert_eq!(revival.admit(at(1)), Admit::After(Duration::from_secs(1)));
        assert_eq!(revival.admit(at(3)), Admit::After(Duration::from_secs(2)));
        assert_eq!(revival.admit(at(6)), Admit::GiveUp(3));
        assert_eq!(revival.admit(at(59)), Admit::GiveUp(3));
        // The first relaunch is a minute old: one place is free again.
        assert_eq!(revival.admit(at(60)), Admit::After(Duration::from_secs(2)));
        assert_eq!(revival.admit(at(200)), Admit::After(Duration::ZERO));
    }

    /// LAUNCH-8 (issue 28): only a browser found dead is relaunched, never one shut down
    /// on purpose (its generation was never marked).
    #[test]
    fn launch_8_only_a_browser_found_dead_is_relaunched() {
        let revival = Revival::default();
        assert!(!revival.crashed(1));
        revival.died(1);
        assert!(revival.crashed(1));
        assert!(!revival.crashed(2));
    }
}
