//! Settling after an act: wait until the page is quiet (no request of the page in flight
//! and no DOM mutation for a short window), bounded, instead of a fixed pause.
//!
//! [`Settle::begin`] is called before the act (so the requests it starts and the changes
//! its own handlers make are seen) and [`Settle::finish`] after it. The window is counted
//! from the act: a page that changed nothing is quiet 30 ms after the act began, one that
//! changed, 50 ms after its last change (issue 11: every act that loads nothing paid the
//! time its own answer took, and a full window after it). A click that fetches waits for
//! the answer, up to the bound. An act that loads a
//! new document is done at that document's load event, once no request of the page is in
//! flight: the same point browser_open reads a page at, without a quiet window after it
//! (the page's own requests after its load are waited for as any act's).
//!
//! A page that never goes quiet (a clock, a chart a timer redraws, a progress bar, a poll
//! of its server) is judged by the act's own effects (issue 30): only the requests the act
//! started count (those within half a second of it, or following one of its own), and a
//! change to a node that was already changing on its own before the act (the churn
//! learner, `settle/learn.js`) does not hold the quiet window open. The outcome then says
//! the page is still `changing`, and the tools tell the agent to wait for its words.
//!
//! An act that sends a WebSocket message (a notebook's run, a chat's send) waits for the
//! first frame back on that socket, as it waits for a request it started (issue 30): the
//! page writes the answer when it comes. A server that answers does so at once, so the
//! answer is waited for [`ANSWER_WITHIN`] of the message at most: one that takes the
//! event and answers nothing (an input's value) does not hold the act to the bound. Text
//! typed into a field waits for it only about as long as that socket takes to answer
//! (its handshake, the answers seen on it), which a server that only takes the value
//! mostly never does.
//! Only a socket the act itself sent on, within
//! [`ACT_WINDOW`] of it, is waited for; a feed that keeps sending on its own is not. A
//! socket still opening at the act (a notebook's kernel connecting) is waited for until
//! it opens, and what the page sends on it at once then (its queued messages) counts as
//! the act's. The first frame back is not always the one that changes the page (NiceGUI
//! sends the components to load, then the update): an answer that came just before the
//! DOM was found quiet is followed by one more quiet window.
//!
//! Deliberately absent: waiting on long-lived requests (EventSource, WebSocket) as such, on
//! requests that change no text (images, fonts, media, icons, pings), and any script in
//! the page's own realm: the observers run in Conch's isolated world; the act's watch
//! disconnects when the window closes, and the churn learner, one per document, only
//! keeps a WeakMap of the nodes that change. While a dialog waits, nothing is sent to the
//! frozen page (DLG-14).

use std::collections::HashSet;
use std::time::Duration;

use conch_cdp::{RawEvents, Session};
use futures_util::{FutureExt as _, StreamExt};
use serde::Deserialize;
use tokio::time::Instant;

use super::dialog;
use super::world::Frame;
use crate::page::script;

/// How quiet is quiet, and how long to wait for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettleOptions {
    /// No DOM mutation for this long.
    pub quiet: Duration,
    /// The most an act waits for the page to settle.
    pub max: Duration,
}

impl Default for SettleOptions {
    fn default() -> Self {
        SettleOptions {
            // Long enough for a click's own handlers and the layout they cause; a page's
            // slower follow-up (a request it starts) is caught by the in-flight check.
            quiet: Duration::from_millis(50),
            max: Duration::from_millis(1500),
        }
    }
}

/// What settling found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settled {
    /// How long the wait took.
    pub waited: Duration,
    /// Whether the act's own effects landed before the bound (false: it was still busy).
    pub quiet: bool,
    /// Whether the page was still changing when the wait ended: changes that repeat on
    /// their own (a clock, a chart, a progress bar), which the wait does not hold out for,
    /// or a page still busy at the bound (issue 30). The agent is told, so it waits for
    /// the words it needs with browser_wait.
    pub changing: bool,
}

/// Network activity of one page, watched from before an act.
#[derive(Debug)]
pub struct Settle {
    page: Session,
    sent: RawEvents,
    finished: RawEvents,
    failed: RawEvents,
    loaded: RawEvents,
    /// WebSocket frames the page sends and receives (issue 30).
    frames_sent: RawEvents,
    frames_received: RawEvents,
    /// Handshake answers and closes of WebSockets (issue 30).
    handshakes: RawEvents,
    sockets_closed: RawEvents,
    /// The sockets still opening when the act began; each is in `in_flight` as `open:`
    /// and its id until it opens or closes.
    opening: HashSet<String>,
    /// When each socket that was opening at the act opened (the browser's monotonic clock).
    opened: std::collections::HashMap<String, f64>,
    /// The sockets that opened for the act and were sent nothing yet, with when that was
    /// seen: each is in `in_flight` as `send:` for [`SEND_AFTER_OPEN`].
    sending: Vec<(String, Instant)>,
    /// The sockets the act sent a frame on and no answer has come on since, with when
    /// that frame was sent (the browser's monotonic clock) and when it was seen (this
    /// process's clock), and how long its answer is waited for from then
    /// ([`ANSWER_WITHIN`], or [`typed_answer_within`]); each is in `in_flight` too, as
    /// `ws:` and its id.
    asked: std::collections::HashMap<String, (f64, Instant, Duration)>,
    /// When the act began, on this process's clock, for whether a frame sent is the act's.
    begun_at: Instant,
    /// When the last answer on a socket the act sent on was seen: what the page does with
    /// it is looked for by a quiet window after it ([`Settle::answer_unseen`]).
    answered: Option<Instant>,
    /// Whether the top document fired its load event since the act, and what followed.
    load: Load,
    in_flight: HashSet<String>,
    /// Requests that ended before their start was read: the start, read later, must not
    /// count them as in flight (a request can start and end within one pause).
    ended_early: HashSet<String>,
    /// The key of the watch installed before the act ([`HOLD_JS`]), until the first
    /// wait reads it.
    held: Option<u64>,
    /// When the act began, on the wall clock the browser stamps requests with (seconds).
    begun: f64,
    /// When the last request of the act's ended (the browser's monotonic clock, seconds),
    /// for the chain rule of [`Settle::is_the_acts`].
    last_end: Option<f64>,
    /// Whether the DOM kept changing on its own during the wait (see `watch.js`).
    churned: bool,
    /// Whether a watch in the page may still run: its wait was given up (a load came) or
    /// its install was not answered in time. While one runs, the churn learner counts no
    /// change as the page's own, so it is stopped when the wait ends.
    abandoned: bool,
    /// When the act began, and the most its transitions are waited for: the in-page wait
    /// that finds the DOM quiet then waits for them too ([`Settle::finish_animated`]).
    animations: Option<(Instant, Duration)>,
    /// Whether the act's transitions were waited for in the page already.
    animated: bool,
    /// Whether a page that changed nothing is quiet once a frame has passed after the act
    /// (its animation-frame callbacks and a task after them ran) rather than [`FIRST`]
    /// after the act began ([`Settle::quiet_after_a_frame`]).
    after_a_frame: bool,
    /// Whether an answer on a socket is waited for only about as long as that socket
    /// takes to answer ([`Settle::answers_briefly`]).
    briefly: bool,
}

/// Where the top document's load stands since the act.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Load {
    /// No load event yet: the act's outcome is judged by a quiet window.
    No,
    /// A load event came: the page is read once nothing is in flight.
    Fired,
    /// A load event came with requests in flight: once they end, a quiet window judges
    /// the changes they bring, as after any act.
    Busy,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RequestEvent {
    request_id: String,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    loader_id: Option<String>,
    #[serde(default, rename = "documentURL")]
    document_url: Option<String>,
    #[serde(default)]
    request: Option<RequestUrl>,
    /// When the request started, on the wall clock (seconds since the epoch).
    #[serde(default, rename = "wallTime")]
    wall_time: Option<f64>,
    /// When the event happened, on the browser's monotonic clock (seconds).
    #[serde(default)]
    timestamp: Option<f64>,
}

/// A WebSocket frame sent or received (`Network.webSocketFrameSent`/`Received`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FrameEvent {
    /// The socket's id.
    request_id: String,
    /// When, on the browser's monotonic clock (seconds).
    #[serde(default)]
    timestamp: Option<f64>,
}

#[derive(Deserialize)]
struct RequestUrl {
    url: String,
}

impl RequestEvent {
    /// Whether the page's text can wait on this request: a document, a script, a style
    /// sheet (it decides what shows), or the page's own fetches. Images, fonts, media,
    /// icons and pings change no line of a snapshot, and on a slow server waiting for them
    /// cost a whole second per step (Trac); long-lived streams never end at all. As
    /// Playwright MCP does, the wait is for the kinds that carry the page's content.
    fn changes_the_page(&self) -> bool {
        matches!(
            self.kind.as_deref(),
            None | Some("Document" | "Script" | "Stylesheet" | "XHR" | "Fetch")
        )
    }

    /// Whether this is a worker's own script: the page sees it start, but its end is
    /// reported only to the worker's target, so waiting for it would always hit the bound.
    /// The browser sends it with no loader and the worker's URL as the document.
    fn is_worker_script(&self) -> bool {
        self.loader_id.as_deref() == Some("")
            && self
                .request
                .as_ref()
                .is_some_and(|r| self.document_url.as_deref() == Some(r.url.as_str()))
    }
}

/// Starts watching the DOM: the watch's start, the time of the page's last change since
/// (-1: none yet) and its observer. Installed before the act ([`HOLD_JS`]), so that the
/// changes the act's own handlers make count and a page that changes nothing is judged
/// from the act, not from when the act's answer came back; or by the wait itself, when
/// none was (a new document).
const WATCH_JS: &str = script::body(include_str!("settle/watch.js"));

/// Starts, once per document, the churn learner [`WATCH_JS`] asks what keeps changing on
/// its own (issue 30); called as a function of no arguments. Started by the reader too,
/// so that what changed between a read and the act is known at the act.
pub(crate) const LEARN_JS: &str = script::body(include_str!("settle/learn.js"));

/// The watch of [`WATCH_JS`] with its learner, as a function of no arguments.
fn watch() -> String {
    format!("(() => ({WATCH_JS})({LEARN_JS}))")
}

/// Holds a [`WATCH_JS`] watch under `key` until the wait after the act takes it, or for
/// `max` when it never comes (a navigation takes it with the document).
const HOLD_JS: &str = script::body(include_str!("settle/hold.js"));

/// The in-page wait for a quiet DOM: resolves with whether it was quiet before `max`.
/// With the watch held under `key` from before the act, a page that changed nothing since
/// the act began is quiet `first` after that start (or, asked so, once a frame has passed
/// since the wait began, if sooner); once it changed, `quiet` after its last change; and
/// never sooner than `after` from now, so that what the act queued for its next task (a
/// timer of 0) runs first. Without one (a new document), the window is `quiet` from now.
const QUIET_JS: &str = script::body(include_str!("settle/quiet.js"));

/// The in-page wait for a quiet DOM followed, once quiet, by the wait for the act's
/// transitions: a function of (the wait, the transitions' function, ms since the act
/// began, their bound, the wait's bound), resolving with the wait's answer and
/// `animated`. A header the act flipped open whose content has not come yet is waited
/// for too, until the page's next change has gone quiet (issue 30: Quasar's expansion
/// starts its slide 100 ms after the flip, past the quiet window).
/// What animates now is judged at its end (`at_their_end.js`, pasted at `AT_THEIR_END`).
static ANIMATED_JS: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    script::body(include_str!("settle/animated.js"))
        .replace("AT_THEIR_END", crate::page::world::AT_THEIR_END)
});

/// How long after the act began a page that changed nothing is judged quiet.
const FIRST: Duration = Duration::from_millis(30);
/// The least a wait lasts after the act's answer came back.
const AFTER: Duration = Duration::from_millis(10);

/// A request that starts this long after the act began is the act's only when it follows
/// one of the act's (a chain of fetches): a timer's poll, a long poll asked again or a
/// stream of the page's own is not waited for (issue 30). A debounce of a few hundred ms
/// is within it.
const ACT_WINDOW: f64 = 0.5;
/// A request that starts within this long after the act's last one ended follows it.
const CHAIN: f64 = 0.1;
/// What the page sends on a socket within this long of its opening (a socket that was
/// opening at the act) is the act's; the act waits that long for it, on the browser's
/// clock and then on this process's, as a loaded renderer runs the page's open handler
/// late (the queued message of a notebook's cell).
const SEND_AFTER_OPEN: f64 = 0.3;

/// The most an act waits for the first frame back on a WebSocket it sent a message on,
/// from that message (issue 30). A server that answers (a notebook's kernel saying it is
/// busy, an app sending the change the event made) does so at once; one that takes the
/// event and answers nothing (NiceGUI or a chat's server told an input's new value)
/// held every such act to the whole bound (1.5 s for typing three letters into a
/// filtering select, where Playwright MCP took 0.16 s). An answer that comes later is
/// read by the agent's next look or `browser_wait`.
const ANSWER_WITHIN: Duration = Duration::from_millis(500);

/// The least an answer to typed text is waited for on a socket that answers fast.
const TYPED_ANSWER_LEAST: Duration = Duration::from_millis(150);

/// How long an answer to text typed into a field is waited for on a socket that has
/// taken `round_trip` at most to answer (its handshake, the acts' messages answered on
/// it): four times that, at least [`TYPED_ANSWER_LEAST`], at most [`ANSWER_WITHIN`], and
/// [`ANSWER_WITHIN`] when unknown (issue 30). A server that answers what is typed (a
/// search that filters on the server) does so about as fast as it answers anything; one
/// that only takes the value is let go of sooner. A later answer is read by the agent's
/// next look or `browser_wait`, as Playwright MCP's typing, which waits for no socket.
fn typed_answer_within(round_trip: Option<Duration>) -> Duration {
    round_trip.map_or(ANSWER_WITHIN, |took| {
        (took * 4).clamp(TYPED_ANSWER_LEAST, ANSWER_WITHIN)
    })
}

/// The wall clock, in seconds since the epoch, as the browser stamps requests.
fn wall_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A key for each held observer, so that two waits never read each other's.
static HOLDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Settle {
    /// Starts watching `page`'s requests (enables the `Network` domain).
    pub async fn begin(page: &Session) -> Settle {
        let sent = page.events("Network.requestWillBeSent");
        let finished = page.events("Network.loadingFinished");
        let failed = page.events("Network.loadingFailed");
        let loaded = page.events("Page.loadEventFired");
        let frames_sent = page.events("Network.webSocketFrameSent");
        let frames_received = page.events("Network.webSocketFrameReceived");
        let handshakes = page.events("Network.webSocketHandshakeResponseReceived");
        let sockets_closed = page.events("Network.webSocketClosed");
        let opening = super::world::sockets_opening(page);
        // Best effort: without it, settling still waits for a quiet DOM. Asked together
        // with the observer's install, which does not depend on it; once per page, as
        // the domain stays on for the session's life (issue 32).
        let network = async {
            if super::world::network_on(page) {
                return;
            }
            if page
                .call_raw("Network.enable", serde_json::json!({}))
                .await
                .is_ok()
            {
                super::world::network_enabled(page);
            }
        };
        let ((), held) = tokio::join!(network, hold(page, SettleOptions::default().max));
        Settle {
            page: page.clone(),
            sent,
            finished,
            failed,
            loaded,
            frames_sent,
            frames_received,
            handshakes,
            sockets_closed,
            in_flight: opening.iter().map(|id| format!("open:{id}")).collect(),
            opening,
            opened: std::collections::HashMap::new(),
            sending: Vec::new(),
            asked: std::collections::HashMap::new(),
            begun_at: Instant::now(),
            answered: None,
            load: Load::No,
            ended_early: HashSet::new(),
            abandoned: held.is_none(),
            held,
            begun: wall_now(),
            last_end: None,
            churned: false,
            animations: None,
            animated: false,
            after_a_frame: false,
            briefly: false,
        }
    }

    /// Judges a page that changed nothing quiet once a frame has passed after the act,
    /// never sooner than [`AFTER`], instead of [`FIRST`] after the act began: for text
    /// typed into a field (issue 30), whose page reacts in the input event itself, in a
    /// task or a microtask after it, or in its next animation frame (an editor drawing its
    /// lines); a typed step spent about 20 of its 40 ms waiting on a form that changes
    /// nothing. A page that changed waits its quiet window as before.
    pub(crate) fn quiet_after_a_frame(&mut self) {
        self.after_a_frame = true;
    }

    /// Waits for an answer to the act's message on a socket only about as long as that
    /// socket takes to answer ([`typed_answer_within`]), not [`ANSWER_WITHIN`]: for text
    /// typed into a field, whose value a server-driven app's page tells its server, which
    /// mostly takes it and answers nothing (issue 30: NiceGUI's filtering select spent
    /// 500 ms of its typing step waiting, at parity with Playwright MCP).
    pub(crate) fn answers_briefly(&mut self) {
        self.briefly = true;
    }

    /// As [`Settle::finish`], then waits until the CSS transitions and animations the act
    /// started (since `began`, at most `within`) have ended (`animations.js` of the act's
    /// scripts). They are waited for by the same in-page wait that finds the DOM quiet,
    /// one round trip less per act (issue 32); gives whether they were, so the caller
    /// waits for them itself when not (a new document, a page still busy at the bound).
    pub(crate) async fn finish_animated(
        mut self,
        options: SettleOptions,
        began: Instant,
        within: Duration,
    ) -> (Settled, bool) {
        self.animations = Some((began, within));
        self.finished(options).await
    }

    /// Does not wait for the sockets that were still opening when the act began: the act
    /// sends nothing on them (text typed into a field), so their opening is not its
    /// effect (issue 30).
    pub(crate) fn not_for_sockets_opening(&mut self) {
        for id in self.opening.drain() {
            self.in_flight.remove(&format!("open:{id}"));
        }
    }

    /// Whether a request that changes the page is the act's own (issue 30): it started
    /// within [`ACT_WINDOW`] of the act, or just after one of the act's ended, or the act
    /// loads a new document (whose requests are all its own). Not while one is in flight:
    /// a poll every 200 ms, slow on a loaded machine, would overlap the next for ever.
    /// A page's own background requests that started before the act are never seen.
    fn is_the_acts(&self, request: &RequestEvent) -> bool {
        let Some(at) = request.wall_time else {
            return true;
        };
        self.load != Load::No
            || request.kind.as_deref() == Some("Document")
            || at - self.begun <= ACT_WINDOW
            || self
                .last_end
                .zip(request.timestamp)
                .is_some_and(|(end, started)| started - end <= CHAIN)
    }

    /// A WebSocket frame the page sent, seen at `seen` (this process's clock): when the
    /// act sent it (seen within [`ACT_WINDOW`] of the act, while no load came), its socket
    /// is waited on until a frame comes back on it.
    fn frame_sent(&mut self, frame: &FrameEvent, seen: Instant) {
        let just_opened = self
            .opened
            .get(&frame.request_id)
            .zip(frame.timestamp)
            .is_some_and(|(opened, at)| at - opened <= SEND_AFTER_OPEN);
        let the_acts = self.load == Load::No
            && (just_opened
                || seen.saturating_duration_since(self.begun_at).as_secs_f64() <= ACT_WINDOW);
        if self.in_flight.remove(&format!("send:{}", frame.request_id)) {
            self.sending.retain(|(id, _)| *id != frame.request_id);
        }
        if the_acts && !self.asked.contains_key(&frame.request_id) {
            let within = if self.briefly {
                typed_answer_within(super::world::socket_round_trip(
                    &self.page,
                    &frame.request_id,
                ))
            } else {
                ANSWER_WITHIN
            };
            self.asked.insert(
                frame.request_id.clone(),
                (frame.timestamp.unwrap_or(0.0), seen, within),
            );
            self.in_flight.insert(format!("ws:{}", frame.request_id));
        }
    }

    /// A WebSocket frame the page received: the first on a socket the act sent on, after
    /// the act's frame, answers it; how long it took is remembered for the socket.
    fn frame_received(&mut self, frame: &FrameEvent) {
        if let Some((sent, _, _)) = self.asked.get(&frame.request_id)
            && frame.timestamp.is_none_or(|at| at >= *sent)
        {
            if let Some(at) = frame.timestamp
                && *sent > 0.0
            {
                super::world::socket_answered(&self.page, &frame.request_id, at - sent);
            }
            self.asked.remove(&frame.request_id);
            self.in_flight.remove(&format!("ws:{}", frame.request_id));
            self.answered = Some(Instant::now());
        }
    }

    /// Whether a socket's answer came so shortly before a wait found the DOM quiet that
    /// what the page does with it may not have shown yet: the first frame back is not
    /// always the one that changes the page (NiceGUI sends the components to load, then
    /// the update that opens an expansion, a few ms apart), and the page handles a frame
    /// after the browser has reported it. Then a fresh quiet window after it is waited
    /// for (issue 30, SNAP-1).
    fn answer_unseen(&self, quiet: Duration) -> bool {
        self.answered.is_some_and(|at| at.elapsed() < quiet)
    }

    /// Reads the WebSocket frames sent and received so far: the sent first, so that an
    /// answer already queued finds the frame it answers.
    fn drain_frames(&mut self) {
        self.drain_openings();
        self.drain_sent();
        while let Some(Some(event)) = self.frames_received.next().now_or_never() {
            if let Ok(frame) = event.parse::<FrameEvent>() {
                self.frame_received(&frame);
            }
        }
    }

    /// Reads the handshakes and closes of WebSockets so far: a socket that was opening at
    /// the act is no longer waited for as such once it opened or closed.
    fn drain_openings(&mut self) {
        while let Some(Some(event)) = self.handshakes.next().now_or_never() {
            if let Ok(socket) = event.parse::<FrameEvent>() {
                self.socket_opened(socket);
            }
        }
        while let Some(Some(event)) = self.sockets_closed.next().now_or_never() {
            if let Ok(socket) = event.parse::<FrameEvent>() {
                let id = socket.request_id;
                self.opening.remove(&id);
                self.asked.remove(&id);
                self.in_flight.remove(&format!("open:{id}"));
                self.in_flight.remove(&format!("send:{id}"));
                self.in_flight.remove(&format!("ws:{id}"));
            }
        }
    }

    /// A WebSocket answered its handshake: when it was opening at the act, it is waited
    /// for no longer as such, and what the page sends on it at once is the act's.
    fn socket_opened(&mut self, socket: FrameEvent) {
        if self.opening.remove(&socket.request_id) {
            self.in_flight
                .remove(&format!("open:{}", socket.request_id));
            // Held until the page sends on it, or for SEND_AFTER_OPEN.
            self.in_flight.insert(format!("send:{}", socket.request_id));
            self.sending
                .push((socket.request_id.clone(), Instant::now()));
            self.opened
                .insert(socket.request_id, socket.timestamp.unwrap_or(0.0));
        }
    }

    /// Lets go of the sockets that opened for the act and were sent nothing within
    /// [`SEND_AFTER_OPEN`].
    fn expire_sending(&mut self) {
        let in_flight = &mut self.in_flight;
        self.sending.retain(|(id, at)| {
            let waiting = at.elapsed().as_secs_f64() < SEND_AFTER_OPEN;
            if !waiting {
                in_flight.remove(&format!("send:{id}"));
            }
            waiting
        });
    }

    /// Lets go of the sockets the act sent on that gave no answer within their wait
    /// ([`ANSWER_WITHIN`] of the act's frame, or [`typed_answer_within`]): a server that
    /// takes an event and answers nothing (an input's value, a filter's text) is not
    /// waited out to the bound.
    fn expire_unanswered(&mut self) {
        let in_flight = &mut self.in_flight;
        self.asked.retain(|id, (_, seen, within)| {
            let waiting = seen.elapsed() < *within;
            if !waiting {
                in_flight.remove(&format!("ws:{id}"));
            }
            waiting
        });
    }

    /// Reads the WebSocket frames sent so far.
    fn drain_sent(&mut self) {
        let now = Instant::now();
        while let Some(Some(event)) = self.frames_sent.next().now_or_never() {
            if let Ok(frame) = event.parse::<FrameEvent>() {
                self.frame_sent(&frame, now);
            }
        }
    }

    fn drain(&mut self) {
        self.drain_frames();
        while let Some(Some(event)) = self.sent.next().now_or_never() {
            if let Ok(request) = event.parse::<RequestEvent>()
                && request.changes_the_page()
                && !request.is_worker_script()
                && !self.ended_early.remove(&request.request_id)
                && self.is_the_acts(&request)
            {
                self.in_flight.insert(request.request_id);
            }
        }
        let mut ended = Vec::new();
        for stream in [&mut self.finished, &mut self.failed] {
            while let Some(Some(event)) = stream.next().now_or_never() {
                if let Ok(request) = event.parse::<RequestEvent>() {
                    ended.push((request.request_id, request.timestamp));
                }
            }
        }
        for (id, at) in ended {
            self.ended(id, at);
        }
        while let Some(Some(_)) = self.loaded.next().now_or_never() {
            self.load_fired();
        }
    }

    /// The top document fired its load event.
    fn load_fired(&mut self) {
        if self.load == Load::No {
            self.load = Load::Fired;
        }
    }

    /// A request ended: it leaves the in-flight set, or, when its start has not been read
    /// yet, is remembered so that its start does not count it.
    fn ended(&mut self, id: String, at: Option<f64>) {
        if self.in_flight.remove(&id) {
            self.last_end = at.or(self.last_end);
        } else {
            self.ended_early.insert(id);
        }
    }

    /// The outcome after `start`.
    fn settled(&self, start: Instant, quiet: bool) -> Settled {
        Settled {
            waited: start.elapsed(),
            quiet,
            changing: self.churned || !quiet,
        }
    }

    /// Waits until the act's own effects landed (its requests answered, its changes to
    /// the DOM done), at most `options.max`. A page that keeps changing on its own is not
    /// waited out: the outcome says it is still `changing` (issue 30), and so does
    /// [`still_changing`] for the page until asked.
    pub async fn finish(self, options: SettleOptions) -> Settled {
        self.finished(options).await.0
    }

    /// [`Settle::finish`], and whether the act's transitions were waited for.
    async fn finished(self, options: SettleOptions) -> (Settled, bool) {
        let page = self.page.clone();
        // Boxed: every act awaits this, and its state inside theirs overflowed a test's
        // stack (conch-tools' reading tools).
        let (settled, abandoned, animated) = Box::pin(self.wait(options)).await;
        if abandoned && !dialog::watching(&page).is_some_and(|w| w.is_pending()) {
            release(&page).await;
        }
        if !options.max.is_zero() {
            note(&page, settled.changing);
        }
        (settled, animated)
    }

    async fn wait(mut self, options: SettleOptions) -> (Settled, bool, bool) {
        let settled = self.waiting(options).await;
        (settled, self.abandoned, self.animated)
    }

    async fn waiting(&mut self, options: SettleOptions) -> Settled {
        let start = Instant::now();
        let deadline = start + options.max;
        let watch = dialog::watching(&self.page);
        loop {
            if watch.as_ref().is_some_and(|w| w.is_pending()) {
                // A frozen page answers nothing (DLG-14): the act is done.
                return Settled {
                    changing: false,
                    ..self.settled(start, false)
                };
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                tracing::debug!(
                    target: "conch_browser",
                    in_flight = self.in_flight.len(),
                    "the page did not settle within the bound"
                );
                return self.settled(start, false);
            }
            self.drain();
            if self.load == Load::Fired {
                if self.in_flight.is_empty() {
                    // A new document loaded and nothing it asked for is pending: it is
                    // read now, as browser_open reads a page at its load event.
                    return self.settled(start, true);
                }
                // Requests of its own after the load: their changes are judged by a
                // quiet window, as any act's.
                self.load = Load::Busy;
            }
            // A load event ends the window at once: a new document is judged by its load,
            // not by how long its scripts keep changing it. The frames the page sends
            // meanwhile are read as they come, to tell the act's own (issue 30).
            let page = self.page.clone();
            let dom_wait = dom_quiet(
                &page,
                options.quiet,
                left,
                self.held.take(),
                self.animations,
                self.after_a_frame,
            );
            tokio::pin!(dom_wait);
            let dom = loop {
                tokio::select! {
                    dom = &mut dom_wait => break Some(dom),
                    Some(_) = self.loaded.next(), if self.load == Load::No => {
                        self.load_fired();
                        self.abandoned = true;
                        break None;
                    }
                    Some(event) = self.frames_sent.next() => {
                        if let Ok(frame) = event.parse::<FrameEvent>() {
                            self.frame_sent(&frame, Instant::now());
                        }
                    }
                    // Read as they come, so an answer's time is when it came, not when
                    // the wait ended.
                    Some(event) = self.frames_received.next() => {
                        if let Ok(frame) = event.parse::<FrameEvent>() {
                            self.drain_openings();
                            self.drain_sent();
                            self.frame_received(&frame);
                        }
                    }
                }
            };
            let Some(dom) = dom else {
                continue;
            };
            self.churned |= dom.is_some_and(|d| d.churned);
            self.animated = dom.is_some_and(|d| d.animated);
            self.drain();
            self.expire_sending();
            self.expire_unanswered();
            if self.in_flight.is_empty() && dom.is_some_and(|d| d.quiet) {
                if self.answer_unseen(options.quiet) {
                    continue;
                }
                return self.settled(start, true);
            }
            // Wait a little for the requests in flight (or the new document), then look
            // again; the last request ending, or a load, ends the wait at once.
            let requests = !self.in_flight.is_empty();
            let pause = tokio::time::sleep(options.quiet.min(left) / 2);
            tokio::pin!(pause);
            loop {
                let ended = tokio::select! {
                    () = &mut pause => break,
                    Some(event) = self.finished.next() => event.parse::<RequestEvent>().ok(),
                    Some(event) = self.failed.next() => event.parse::<RequestEvent>().ok(),
                    Some(event) = self.handshakes.next(), if !self.opening.is_empty() => {
                        // What the page sends at once on a socket that opened is looked
                        // for by the next wait.
                        if let Ok(socket) = event.parse::<FrameEvent>() {
                            self.socket_opened(socket);
                        }
                        self.drain_frames();
                        break;
                    }
                    Some(event) = self.frames_received.next() => {
                        if let Ok(frame) = event.parse::<FrameEvent>() {
                            self.drain_openings();
                            self.drain_sent();
                            self.frame_received(&frame);
                            if requests && self.in_flight.is_empty() {
                                break;
                            }
                        }
                        None
                    }
                    Some(_) = self.loaded.next() => {
                        self.load_fired();
                        if self.load == Load::Fired {
                            break;
                        }
                        None
                    }
                };
                if let Some(request) = ended {
                    self.ended(request.request_id, request.timestamp);
                    if requests && self.in_flight.is_empty() {
                        break;
                    }
                }
            }
        }
    }
}

/// What the in-page wait found.
#[derive(Debug, Clone, Copy, Deserialize)]
struct Dom {
    /// Whether the DOM went quiet (churn aside) before the bound.
    quiet: bool,
    /// Whether it kept changing on its own meanwhile.
    churned: bool,
    /// Whether the act's transitions were waited for after the DOM went quiet.
    #[serde(default)]
    animated: bool,
}

/// Whether each page was still changing when its last act's wait ended, by session, until
/// [`still_changing`] reads it.
fn changing() -> std::sync::MutexGuard<'static, HashSet<String>> {
    static CHANGING: std::sync::OnceLock<std::sync::Mutex<HashSet<String>>> =
        std::sync::OnceLock::new();
    CHANGING
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn session_key(page: &Session) -> String {
    page.id()
        .map_or_else(String::new, |id| id.as_str().to_owned())
}

/// Notes whether `page` was still changing after an act.
fn note(page: &Session, still: bool) {
    let key = session_key(page);
    if still {
        changing().insert(key);
    } else {
        changing().remove(&key);
    }
}

/// Whether `page` was still changing when the last act on it settled, forgotten once
/// read (issue 30): the tools tell the agent, who then waits for the words it needs.
pub fn still_changing(page: &Session) -> bool {
    changing().remove(&session_key(page))
}

/// Stops every watch still running in the top document (`release()` of `learn.js`).
async fn release(page: &Session) {
    if let Ok(top) = Frame::top(page).await {
        let _ = top
            .evaluate(
                "globalThis.__conchChurn ? globalThis.__conchChurn.release() : true",
                true,
            )
            .await;
    }
}

/// Installs the watch of [`HOLD_JS`] in the top frame's isolated world before an act,
/// for at most `max`; gives its key, or `None` when it could not be installed (a page
/// frozen by its dialog is not asked, DLG-14), and the wait then starts from its own look.
async fn hold(page: &Session, max: Duration) -> Option<u64> {
    if dialog::watching(page).is_some_and(|w| w.is_pending()) {
        return None;
    }
    let key = HOLDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let expression = format!(
        "({HOLD_JS})({}, {key}, {})",
        watch(),
        max.as_millis() + 1000
    );
    let top = Frame::top(page).await.ok()?;
    let answer = top
        .evaluate_awaiting(&expression, Duration::from_millis(500))
        .await
        .ok()?;
    (answer.result.value == Some(serde_json::Value::Bool(true))).then_some(key)
}

/// Runs the in-page wait in Conch's isolated world, where the page cannot redefine
/// `MutationObserver`, `performance.now` or `setTimeout` to look quiet or busy; `None`
/// when the page could not run it (navigating). `held` is the key of the watch
/// installed before the act, if any. With `animations` (when the act began, the most to
/// wait), a DOM found quiet then waits for the transitions the act started.
async fn dom_quiet(
    page: &Session,
    quiet: Duration,
    left: Duration,
    held: Option<u64>,
    animations: Option<(Instant, Duration)>,
    after_a_frame: bool,
) -> Option<Dom> {
    let quiet_ms = quiet.as_millis();
    let first_ms = FIRST.min(quiet).as_millis();
    let after_ms = AFTER.min(quiet).as_millis();
    let max_ms = left.as_millis();
    let key = held.unwrap_or(0);
    let wait = format!(
        "({QUIET_JS})({}, {quiet_ms}, {first_ms}, {after_ms}, {max_ms}, {key}, {after_a_frame})",
        watch()
    );
    let (expression, animations_max) = match animations {
        Some((began, within)) => (
            format!(
                "({})(() => {wait}, {}, {}, {}, {max_ms})",
                *ANIMATED_JS,
                crate::page::act::ANIMATIONS_SCRIPT,
                began.elapsed().as_millis(),
                within.as_millis()
            ),
            within,
        ),
        None => (wait, Duration::ZERO),
    };
    let top = Frame::top(page).await.ok()?;
    match top
        .evaluate_awaiting(
            &expression,
            left + animations_max + Duration::from_millis(500),
        )
        .await
    {
        Ok(answer) => answer
            .result
            .value
            .and_then(|value| serde_json::from_value(value).ok()),
        Err(_) => {
            // The top frame may have been replaced (a swap of browsing context).
            Frame::forget_top(page);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::script::well_formed;

    /// The hold and the wait, each called with the watch, are whole expressions (issue 30).
    #[test]
    fn issue_30_settle_scripts_compose_into_whole_expressions() {
        for expression in [
            format!("({HOLD_JS})({}, 1, 2)", watch()),
            format!("({QUIET_JS})({}, 1, 2, 3, 4, 5)", watch()),
            format!(
                "({})(() => ({QUIET_JS})({}, 1, 2, 3, 4, 5), {}, 6, 7, 8)",
                *ANIMATED_JS,
                watch(),
                crate::page::act::ANIMATIONS_SCRIPT
            ),
            format!("({LEARN_JS})()"),
        ] {
            well_formed(&expression).unwrap_or_else(|e| panic!("{e}:\n{expression}"));
        }
    }
}
