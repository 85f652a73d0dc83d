//! The live views of every conversation, and the screencast behind each (LIVE-1 … LIVE-4,
//! LIVE-15).
//!
//! A [`Hub`] holds one view per watched conversation. [`Hub::join`] gives a watcher its
//! [`Feed`] (what goes to the panel: JPEG frames and events) and its [`Control`] (what the
//! panel sends). The first watcher of a conversation starts `Page.startScreencast` on its
//! active tab; the last one to leave stops it (LIVE-2). Frames are latest-wins: the view
//! keeps only the newest, and each watcher takes the newest when it is ready, so a watcher
//! that stops reading holds at most one frame (LIVE-3). Every frame is acknowledged to
//! Chrome as it comes. The cast follows the conversation's active tab and never shows
//! another conversation's (LIVE-15). Its frames are as big as the biggest watcher's screen
//! in device pixels (the panel's size × its device pixel ratio), never bigger than the
//! viewport: Chrome encodes no pixel no panel shows (issue 30). While anyone watches, the browser does not idle out,
//! and its idle time counts from when the last watcher left (LAUNCH-12).
//!
//! Deliberately absent: the socket (the gateway's) and the commands' effects
//! ([`control`](crate::control)).

use conch_browser::sync::lock;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use conch_browser::page::cast::LiveCast;
use conch_browser::page::dialog;
use conch_browser::protocol::{BrowserPageDialog, BrowserTab, BrowserTabSummary};
use conch_browser::wheel::{Activity, WheelState};
use conch_browser::{AwakeGuard, Browser, Conversation, TabInfo, Wheel};
use conch_cdp::Session;
use conch_policy::Size;
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::{broadcast, mpsc, watch};

use crate::command::Event;
use crate::control::{Control, Input, deliver};

/// How often the cast looks at the conversation's tabs and the page's dialog.
const LOOK_EVERY: Duration = Duration::from_millis(200);

/// How much a frame is compressed (JPEG quality, 0–100).
const JPEG_QUALITY: u8 = 70;

/// While the agent's step runs, a frame is acknowledged no sooner than this after the one
/// before: at most 15 frames a second. Chrome captures and encodes no frame while three
/// wait for their acknowledgement, so on a page that keeps drawing (a load, an animation)
/// the cast takes less of the machine from the agent's step (issue 30). The person's own
/// driving, and a page changing on its own, are never paced.
const STEP_FRAME_GAP: Duration = Duration::from_millis(66);

/// How many frames Chrome captures that wait for their acknowledgement; while that many
/// wait (paced, or encoding and on their way on a loaded machine), it drops what the page
/// draws and never sends it later. So a burst of that many frames may have lost the
/// page's last change.
const FRAMES_WAITING: usize = 3;

/// How long the cast waits for a frame, after a burst that may have lost the page's last
/// change, before it starts again: a fresh start's first frame shows the page as it is
/// now (LIVE-3).
const REFRESH_AFTER: Duration = Duration::from_millis(100);

/// Frames that come this far apart are two bursts. Wider than [`REFRESH_AFTER`]: on a
/// loaded machine, frames Chrome captured together may come spread out as they are
/// encoded one after another.
const BURST_GAP: Duration = Duration::from_millis(300);

/// How many events a slow watcher may fall behind before it skips to the newest.
const EVENT_BUFFER: usize = 64;

/// How many of the person's inputs may wait behind a page frozen by its dialog (DLG-9).
const HELD_INPUTS: usize = 1024;

/// Interrupts the conversation's turn when the person presses Stop (LIVE-14): the
/// embedder's, exactly as its composer's Stop does.
pub trait TurnControl: fmt::Debug + Send + Sync {
    /// Interrupts the turn of `conversation`.
    fn interrupt(&self, conversation: &str);
}

/// One message to the panel.
#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    /// One JPEG frame of the active tab; sent as a binary message.
    Frame(Vec<u8>),
    /// An event; sent as text (`serde_json::to_string`).
    Event(Event),
}

/// The live views of every conversation of one browser. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Hub {
    inner: Arc<HubInner>,
}

#[derive(Debug)]
struct HubInner {
    browser: Browser,
    turn: Arc<dyn TurnControl>,
    views: Mutex<HashMap<String, Weak<View>>>,
}

/// The newest frame and its number.
type Latest = Option<(u64, Arc<Vec<u8>>)>;

/// One conversation's live view, shared by its watchers.
pub(crate) struct View {
    /// The conversation where it browses: it follows a chat given a browser of its own
    /// and back, or one that became a task (LIVE-16, ERR-1); read it with [`View::conv`].
    conv: Mutex<Conversation>,
    pub(crate) wheel: Arc<Wheel>,
    pub(crate) browser: Browser,
    pub(crate) turn: Arc<dyn TurnControl>,
    frames: watch::Sender<Latest>,
    pub(crate) events: broadcast::Sender<Event>,
    watched: watch::Sender<usize>,
    /// Each watcher's screen in device pixels (its panel's size × its device pixel
    /// ratio), by seat id, once its panel reported one; the cast's frames are sized by
    /// them ([`conch_policy::cast_size`]).
    pub(crate) screens: watch::Sender<HashMap<u64, Size>>,
    /// Held while anyone watches: the browser never idles out under a watcher, and its
    /// idle time counts from when the last one left (LAUNCH-12).
    awake: Mutex<Option<AwakeGuard>>,
    casting: Mutex<bool>,
    /// The person's input, in order, to the page (DLG-9 holds it behind a dialog), each
    /// with the [`View::held_epoch`] it was sent in.
    pub(crate) inputs: mpsc::Sender<(u64, Input)>,
    /// Bumped when input held behind a dialog must be dropped (DLG-10): the takeover
    /// ended or the dialog was cancelled. An input of an older epoch is never delivered.
    held: Arc<AtomicU64>,
    /// The sockets driving the person's takeover now, by seat id (LIVE-8).
    pub(crate) drivers: Mutex<HashSet<u64>>,
    /// The next socket's seat id.
    seats: AtomicU64,
}

impl fmt::Debug for View {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("View")
            .field("conversation", &self.conv().id())
            .field("watchers", &*self.watched.borrow())
            .finish_non_exhaustive()
    }
}

impl View {
    /// The epoch the person's input is sent in now.
    pub(crate) fn held_epoch(&self) -> u64 {
        self.held.load(Ordering::SeqCst)
    }

    /// Drops the person's input still waiting (behind a dialog): it is never delivered
    /// (DLG-10).
    pub(crate) fn drop_held(&self) {
        self.held.fetch_add(1, Ordering::SeqCst);
    }

    /// A new socket's seat id.
    pub(crate) fn next_seat(&self) -> u64 {
        self.seats.fetch_add(1, Ordering::SeqCst)
    }

    /// The conversation where it browses now: after a switch to or from a browser of its
    /// own (LIVE-16), the view shows the new context's tabs. Its wheel goes with it.
    pub(crate) fn conv(&self) -> Conversation {
        let mut conv = lock(&self.conv);
        if conv.moved() {
            *conv = conv.here();
        }
        conv.clone()
    }
}

impl Hub {
    /// The live views of `browser`'s conversations; Stop goes to `turn`.
    pub fn new(browser: Browser, turn: Arc<dyn TurnControl>) -> Hub {
        Hub {
            inner: Arc::new(HubInner {
                browser,
                turn,
                views: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// A watcher joins `conversation`'s live view: the screencast starts with the first
    /// (LIVE-2). Dropping the [`Feed`] leaves; the last to leave stops it.
    pub fn join(&self, conversation: &str) -> (Feed, Control) {
        let view = self.view(conversation);
        let first = {
            let mut first = false;
            view.watched.send_modify(|n| {
                *n += 1;
                first = *n == 1;
                if first {
                    *lock(&view.awake) = Some(view.browser.hold_awake());
                }
            });
            first
        };
        if first {
            start_cast(&view);
        }
        let state = view.wheel.state();
        let mut pending = VecDeque::new();
        pending.push_back(status_of(&state));
        if state.agent_left {
            pending.push_back(Event::AgentLeft);
        }
        // A panel opened mid-task sees the steps so far (issue 28).
        let (steps, activity) = view.wheel.activity_with_steps();
        pending.extend(steps.into_iter().map(Event::Step));
        // A watcher that joins a cast already running (a second window, a reload) gets
        // the newest frame at once, not only when the page next changes (issue 28).
        let mut frames = view.frames.subscribe();
        frames.mark_changed();
        let feed = Feed {
            frames,
            activity,
            status: view.wheel.watch(),
            events: view.events.subscribe(),
            pending,
            first_tabs: true,
            told_left: state.agent_left,
            view: Arc::clone(&view),
        };
        (feed, Control::new(view))
    }

    /// How many watch `conversation` now.
    pub fn watchers(&self, conversation: &str) -> usize {
        lock(&self.inner.views)
            .get(conversation)
            .and_then(Weak::upgrade)
            .map_or(0, |v| *v.watched.borrow())
    }

    fn view(&self, conversation: &str) -> Arc<View> {
        let mut views = lock(&self.inner.views);
        views.retain(|_, v| v.strong_count() > 0);
        if let Some(view) = views.get(conversation).and_then(Weak::upgrade) {
            return view;
        }
        let conv = self.inner.browser.conversation(conversation);
        let (inputs, queue) = mpsc::channel(HELD_INPUTS);
        let held = Arc::new(AtomicU64::new(0));
        let view = Arc::new(View {
            wheel: conv.wheel(),
            conv: Mutex::new(conv.clone()),
            browser: self.inner.browser.clone(),
            turn: Arc::clone(&self.inner.turn),
            frames: watch::Sender::new(None),
            events: broadcast::Sender::new(EVENT_BUFFER),
            watched: watch::Sender::new(0),
            screens: watch::Sender::new(HashMap::new()),
            awake: Mutex::new(None),
            casting: Mutex::new(false),
            inputs,
            held: Arc::clone(&held),
            drivers: Mutex::new(HashSet::new()),
            seats: AtomicU64::new(0),
        });
        tokio::spawn(deliver(conv, queue, held));
        views.insert(conversation.to_owned(), Arc::downgrade(&view));
        view
    }
}

/// What goes to one watcher's panel. Dropping it leaves the view.
#[derive(Debug)]
pub struct Feed {
    view: Arc<View>,
    frames: watch::Receiver<Latest>,
    activity: broadcast::Receiver<Activity>,
    status: watch::Receiver<WheelState>,
    events: broadcast::Receiver<Event>,
    pending: VecDeque<Event>,
    first_tabs: bool,
    /// Whether this watcher was told the agent left.
    told_left: bool,
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.view.watched.send_modify(|n| {
            *n = n.saturating_sub(1);
            if *n == 0 {
                // The last watcher left: the idle time starts now (LAUNCH-12).
                lock(&self.view.awake).take();
            }
        });
    }
}

impl Feed {
    /// The next message for the panel: events in the order they happened, and the newest
    /// frame whenever the watcher is ready for one (LIVE-3). `None` when the view ended.
    pub async fn next(&mut self) -> Option<Outgoing> {
        if self.first_tabs {
            self.first_tabs = false;
            self.pending
                .push_back(Event::Tabs(browser_tab(&self.view).await));
        }
        if let Some(event) = self.pending.pop_front() {
            return Some(Outgoing::Event(event));
        }
        loop {
            tokio::select! {
                biased;
                changed = self.status.changed() => {
                    changed.ok()?;
                    let state = self.status.borrow_and_update().clone();
                    // The agent leaving is told once, after the status it brought.
                    if state.agent_left && !self.told_left {
                        self.told_left = true;
                        self.pending.push_back(Event::AgentLeft);
                    }
                    return Some(Outgoing::Event(status_of(&state)));
                }
                activity = self.activity.recv() => match activity {
                    Ok(activity) => return Some(Outgoing::Event(event_of(activity))),
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
                event = self.events.recv() => match event {
                    Ok(event) => return Some(Outgoing::Event(event)),
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
                changed = self.frames.changed() => {
                    changed.ok()?;
                    let frame = self.frames.borrow_and_update().clone();
                    if let Some((_, jpeg)) = frame {
                        return Some(Outgoing::Frame(jpeg.as_ref().clone()));
                    }
                }
            }
        }
    }
}

fn status_of(state: &WheelState) -> Event {
    Event::Status {
        driver: if state.person_drives || state.handoff.is_some() {
            "person"
        } else {
            "agent"
        }
        .to_owned(),
        handoff: state.handoff.clone(),
        running: state.calls > 0 || state.handoff.is_some(),
    }
}

fn event_of(activity: Activity) -> Event {
    match activity {
        Activity::Cursor {
            x,
            y,
            kind,
            caption,
        } => Event::Cursor {
            x,
            y,
            kind,
            caption,
        },
        Activity::Step(step) => Event::Step(step),
        Activity::Handoff(handoff) => Event::Handoff(handoff),
    }
}

/// The conversation's browser as the panel shows it (PROTO-6): its tabs, the backend,
/// the dialog its active page shows, and an errand's session (ERR-23).
pub(crate) async fn browser_tab(view: &View) -> BrowserTab {
    let conv = view.conv();
    let tabs = conv.tabs_now().await;
    let dialog = match conv.active_page().await {
        Some((_, page)) => page_dialog(&page),
        None => None,
    };
    let mut tab = browser_tab_of(&tabs, view.browser.status().await.backend, dialog);
    // A task's window, or a chat's given a browser of its own, shows "Its own browser"
    // with the sites lent to it (ERR-23, LIVE-16).
    tab.session = conv.session();
    tab
}

fn browser_tab_of(
    tabs: &[TabInfo],
    backend: &str,
    dialog: Option<BrowserPageDialog>,
) -> BrowserTab {
    BrowserTab {
        tabs: tabs
            .iter()
            .map(|t| BrowserTabSummary {
                id: t.id.clone(),
                title: t.title.clone(),
                url: t.url.clone(),
                active: t.active,
            })
            .collect(),
        backend: backend.to_owned(),
        dialog,
        session: None,
    }
}

/// The dialog waiting on `page` for the person, as the panel shows it (DLG-9).
pub(crate) fn page_dialog(page: &Session) -> Option<BrowserPageDialog> {
    let pending = dialog::existing(page)?.pending()?;
    let kind = match pending.kind {
        conch_policy::DialogKind::Alert => "alert",
        conch_policy::DialogKind::Confirm => "confirm",
        conch_policy::DialogKind::Prompt => "prompt",
        conch_policy::DialogKind::BeforeUnload => "beforeunload",
    };
    let site = url_host(&pending.url);
    Some(BrowserPageDialog {
        kind: kind.to_owned(),
        message: pending.message,
        site,
        default_text: (pending.kind == conch_policy::DialogKind::Prompt)
            .then_some(pending.default_prompt),
    })
}

/// The host (and port, when the address has one) of the frame that raised a dialog: what
/// the panel names the dialog by (DLG-15).
fn url_host(address: &str) -> String {
    match url::Url::parse(address) {
        Ok(url) => match (url.host_str(), url.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            (None, _) => address.to_owned(),
        },
        Err(_) => address.to_owned(),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ScreencastFrame {
    data: String,
    session_id: i64,
}

/// Streams the conversation's active tab while anyone watches, following it from tab to
/// tab; tells the watchers when the tabs or the page's dialog change.
async fn cast(view: Arc<View>) {
    let mut watched = view.watched.subscribe();
    let mut screens = view.screens.subscribe();
    let mut seen_tabs: Option<BrowserTab> = None;
    let mut looked: u32 = 0;
    let mut frame_no: u64 = 0;
    'tabs: loop {
        if *watched.borrow_and_update() == 0 {
            break;
        }
        let Some((tab, page)) = view.conv().active_page().await else {
            look_at_tabs(&view, &mut seen_tabs, &mut looked).await;
            tokio::select! {
                () = tokio::time::sleep(LOOK_EVERY) => {}
                _ = watched.changed() => {}
            }
            continue;
        };
        shape(&view, &page).await;
        // The page's steps never cast it for their thumbnails meanwhile (LIVE-6); the
        // cast starts once a thumbnail's own frame in progress is taken.
        let _live = LiveCast::begin(&page).await;
        let mut frames = page.events("Page.screencastFrame");
        let size = conch_policy::cast_size(
            screens.borrow_and_update().values().copied(),
            view.wheel.viewport(),
        );
        let params = json!({
            "format": "jpeg",
            "quality": JPEG_QUALITY,
            "maxWidth": size.width,
            "maxHeight": size.height,
            "everyNthFrame": 1,
        });
        let started = page.call_raw("Page.startScreencast", params.clone()).await;
        if let Err(e) = started {
            tracing::debug!(target: "conch_live", error = %e, "the screencast did not start");
            tokio::time::sleep(LOOK_EVERY).await;
            continue;
        }
        tracing::debug!(target: "conch_live", conversation = view.conv().id(), tab, width = size.width, height = size.height, "screencast started");
        let mut looks = tokio::time::interval(LOOK_EVERY);
        let mut pacing = Pacing::default();
        loop {
            tokio::select! {
                event = frames.next() => {
                    let Some(event) = event else { continue 'tabs };
                    let Ok(frame) = event.parse::<ScreencastFrame>() else { continue };
                    // Every frame is acknowledged, before it is decoded, so Chrome sends
                    // the next one while this one goes out (LIVE-3): at once, or while the
                    // agent's step runs, a frame gap after the one before.
                    let waiting = Arc::clone(&pacing.waiting);
                    let now_waiting = waiting.fetch_add(1, Ordering::SeqCst) + 1;
                    let at = pacing.ack_at(
                        tokio::time::Instant::now(),
                        view.wheel.agent_busy(),
                        now_waiting,
                    );
                    let acking = page.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep_until(at).await;
                        let ack = json!({ "sessionId": frame.session_id });
                        let _ = acking.call_raw("Page.screencastFrameAck", ack).await;
                        waiting.fetch_sub(1, Ordering::SeqCst);
                    });
                    if let Some(jpeg) = conch_browser::page::base64::decode(&frame.data) {
                        frame_no += 1;
                        view.frames.send_replace(Some((frame_no, Arc::new(jpeg))));
                    }
                }
                // A burst of frames went quiet: a change Chrome dropped meanwhile would
                // never come, so the cast starts again for the page as it is now.
                () = pacing.refresh_due() => {
                    pacing = Pacing::default();
                    stop(&page).await;
                    if let Err(e) = page.call_raw("Page.startScreencast", params.clone()).await {
                        tracing::debug!(target: "conch_live", error = %e, "the screencast did not start again");
                        continue 'tabs;
                    }
                }
                _ = looks.tick() => {
                    look_at_tabs(&view, &mut seen_tabs, &mut looked).await;
                    let now = view.conv().active_page().await.map(|(t, _)| t);
                    if now.as_deref() != Some(tab.as_str()) {
                        stop(&page).await;
                        continue 'tabs;
                    }
                }
                changed = watched.changed() => {
                    if changed.is_err() || *watched.borrow_and_update() == 0 {
                        stop(&page).await;
                        break 'tabs;
                    }
                }
                // A watcher's screen changed, or a watcher left: the cast starts again at
                // the new size when it is another.
                Ok(()) = screens.changed() => {
                    let now = conch_policy::cast_size(screens.borrow_and_update().values().copied(), view.wheel.viewport());
                    if now != size {
                        stop(&page).await;
                        continue 'tabs;
                    }
                }
            }
        }
    }
    *lock(&view.casting) = false;
    // A watcher that came while the cast was ending starts it again.
    if *view.watched.borrow() > 0 {
        start_cast(&view);
    }
}

/// When the cast acknowledges its frames, and whether it must start again for the
/// newest: see [`STEP_FRAME_GAP`], [`FRAMES_WAITING`] and [`REFRESH_AFTER`].
#[derive(Debug, Default)]
struct Pacing {
    /// The soonest the next frame is acknowledged while the agent's step runs.
    next: Option<tokio::time::Instant>,
    /// When the last frame came, and how many came in its burst.
    last: Option<tokio::time::Instant>,
    burst: usize,
    /// When the cast starts again unless a frame comes first: armed by a burst of
    /// [`FRAMES_WAITING`] frames, pushed back by every frame after it.
    refresh: Option<tokio::time::Instant>,
    /// This cast's frames not acknowledged yet (Chrome counts them per start).
    waiting: Arc<AtomicUsize>,
}

impl Pacing {
    /// When to acknowledge a frame that came at `now`, with `waiting` frames (this one
    /// included) not acknowledged yet; paced while `busy` (the agent's step runs).
    fn ack_at(
        &mut self,
        now: tokio::time::Instant,
        busy: bool,
        waiting: usize,
    ) -> tokio::time::Instant {
        let at = match self.next {
            Some(next) if busy => next.max(now),
            _ => now,
        };
        self.next = Some(at + STEP_FRAME_GAP);
        let apart = self
            .last
            .is_none_or(|last| now.duration_since(last) >= BURST_GAP);
        self.burst = if apart { 1 } else { self.burst + 1 };
        self.last = Some(now);
        if self.refresh.is_some() || self.burst >= FRAMES_WAITING || waiting >= FRAMES_WAITING {
            let due = at + REFRESH_AFTER;
            self.refresh = Some(self.refresh.map_or(due, |r| r.max(due)));
        }
        at
    }

    /// Resolves when the cast must start again (never, unless a burst of frames may have
    /// lost the page's last change).
    async fn refresh_due(&self) {
        match self.refresh {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    }
}

/// Starts the cast of `view` unless it runs.
fn start_cast(view: &Arc<View>) {
    let mut casting = lock(&view.casting);
    if !*casting {
        *casting = true;
        tokio::spawn(cast(Arc::clone(view)));
    }
}

async fn stop(page: &Session) {
    if let Err(e) = page.call_raw("Page.stopScreencast", json!({})).await {
        tracing::debug!(target: "conch_live", error = %e, "the screencast did not stop cleanly");
    }
    tracing::debug!(target: "conch_live", "screencast stopped");
}

/// Gives `page` the viewport the panel's size asks for (LIVE-4); a page with no panel
/// reporting keeps the runtime's 1280×800.
pub(crate) async fn shape(view: &View, page: &Session) {
    let viewport = view.wheel.viewport();
    if viewport == conch_policy::DEFAULT_VIEWPORT {
        return;
    }
    let metrics = json!({
        "width": viewport.width,
        "height": viewport.height,
        "deviceScaleFactor": 1,
        "mobile": false,
    });
    if let Err(e) = page
        .call_raw("Emulation.setDeviceMetricsOverride", metrics)
        .await
    {
        tracing::debug!(target: "conch_live", error = %e, "the viewport could not be set");
    }
}

/// How many looks pass between two readings of the tabs' titles from the browser (one
/// DevTools call); the page's dialog is looked at every time, in memory.
const TITLES_EVERY: u32 = 5;

/// Tells the watchers when the page's dialog or the tabs changed. The dialog is looked at
/// every [`LOOK_EVERY`]; the tabs every [`TITLES_EVERY`] looks, or at once when the
/// dialog changed.
async fn look_at_tabs(view: &View, seen: &mut Option<BrowserTab>, looks: &mut u32) {
    let dialog = match view.conv().active_page().await {
        Some((_, page)) => page_dialog(&page),
        None => None,
    };
    let dialog_changed = seen.as_ref().map(|s| &s.dialog) != Some(&dialog);
    *looks = looks.wrapping_add(1);
    if !dialog_changed && seen.is_some() && !looks.is_multiple_of(TITLES_EVERY) {
        return;
    }
    let now = browser_tab(view).await;
    if seen.as_ref() != Some(&now) {
        if seen.as_ref().map(|s| &s.dialog) != Some(&now.dialog) {
            let _ = view.events.send(Event::Dialog {
                dialog: now.dialog.clone(),
            });
        }
        let _ = view.events.send(Event::Tabs(now.clone()));
        *seen = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 30, LIVE-3: frames are acknowledged at once unless the agent's step runs,
    /// then a frame gap apart; a burst of three frames (or three waiting) arms a fresh
    /// start once frames go quiet, and every later frame pushes it back; one or two
    /// frames apart arm nothing.
    #[test]
    fn live_3_frames_are_paced_only_while_the_agent_steps() {
        let t0 = tokio::time::Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let mut pacing = Pacing::default();
        assert_eq!(pacing.ack_at(ms(0), false, 1), ms(0));
        assert_eq!(pacing.ack_at(ms(16), false, 1), ms(16));
        assert_eq!(pacing.ack_at(ms(400), false, 1), ms(400));
        assert_eq!(pacing.refresh, None, "no burst of three");
        assert_eq!(pacing.ack_at(ms(432), true, 1), ms(466));
        assert_eq!(pacing.ack_at(ms(448), true, 2), ms(532));
        assert_eq!(pacing.refresh, Some(ms(632)), "a burst of three");
        assert_eq!(pacing.ack_at(ms(600), true, 2), ms(600));
        assert_eq!(
            pacing.refresh,
            Some(ms(700)),
            "a later frame pushes it back"
        );
        assert_eq!(pacing.ack_at(ms(610), false, 1), ms(610), "the step ended");
        assert_eq!(pacing.refresh, Some(ms(710)));
        let mut loaded = Pacing::default();
        assert_eq!(loaded.ack_at(ms(0), false, 3), ms(0));
        assert_eq!(loaded.refresh, Some(ms(100)), "three frames wait");
    }

    #[test]
    fn dlg_9_a_dialogs_site_is_its_frames_host() {
        assert_eq!(url_host("https://shop.test:8443/a?b#c"), "shop.test:8443");
        assert_eq!(url_host("http://user:pw@bank.test/"), "bank.test");
        assert_eq!(url_host("about:blank"), "about:blank");
    }
}
