//! Conch's isolated world in each frame: creating it, installing the reader script in it,
//! calling into it, and finding the sessions of out-of-process frames (AMB-4).
//!
//! The world ("conch") is made with `Page.createIsolatedWorld` per frame and remembered by
//! (session, frame) in a process-wide table, since Chromium makes a new world on every
//! call; a navigation destroys it. The session's `Page.frameNavigated` events, read by
//! the next call before it picks a world, forget the worlds of the documents that went;
//! one whose loss no event told of yet is noticed by the call ("Cannot find context") and
//! made anew. The reader script goes in with the first call that needs it, in the same
//! evaluation. The page never sees the world's globals, so refs are neither visible to
//! nor forgeable by the page.
//!
//! Out-of-process frames are their own targets (a frame target's id is its frame id): the
//! session used is the one the browser auto-attached under Conch's own page, ruled by the
//! guard before the frame ran, which the target watcher hands here ([`frame_attached`]).
//! Nothing here lists the browser's targets or attaches to one by name: in the person's
//! own Chrome a list would name the person's tabs (BE-13, NET-9). A page's entries go when
//! it closes, and a whole browser's when it shuts down or dies (issue 12). Deliberately absent: listening to execution-context events
//! (`Runtime.enable`); the navigations are read lazily instead, by the calls themselves.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

use conch_cdp::RawEvents;
use conch_cdp::protocol::runtime::{Evaluate, EvaluateResponse};
use conch_cdp::{ErrorKind, Session};
use futures_util::{FutureExt as _, StreamExt as _};
use serde_json::{Value, json};

use super::error::PageError;

/// How long one of Conch's own scripts may take in the page. They finish in
/// milliseconds; a page whose script never ends (`for(;;){}`) holds them, and the step
/// should say so rather than wait for the browser-wide call timeout.
pub const PAGE_SCRIPT_TIMEOUT: Duration = Duration::from_secs(10);

/// Evaluates one of Conch's own expressions in Conch's isolated world of `page`'s top
/// frame and gives its JSON value: a check that guards a rule reads the page there, where
/// the page cannot redefine the globals and getters it uses (issue 11 review).
///
/// # Errors
/// [`PageError::Cdp`] when the browser does not answer, [`PageError::Script`] when the
/// expression throws.
pub async fn evaluate_in_world(page: &Session, expression: &str) -> Result<Value, PageError> {
    let answer = Frame::top(page).await?.evaluate(expression, true).await?;
    Ok(answer.result.value.unwrap_or(Value::Null))
}

/// Calls `function` (one of Conch's own function declarations) with `args` in Conch's
/// isolated world of `page`'s top frame and gives its JSON value. The arguments travel
/// as `Runtime.callFunctionOn` arguments, never in the script's text, so conch-cdp's
/// traces hide them: this is how a script is handed the person's words (find's, SEC-7).
///
/// # Errors
/// [`PageError::Cdp`] when the browser does not answer, [`PageError::Busy`] when the page
/// is busy, [`PageError::Script`] when the function throws.
pub async fn call_in_world(
    page: &Session,
    function: &str,
    args: &[Value],
) -> Result<Value, PageError> {
    let frame = Frame::top(page).await?;
    let arguments: Vec<Value> = args.iter().map(|v| json!({ "value": v })).collect();
    let mut fresh = false;
    loop {
        let context = frame.context(fresh).await?;
        let params = json!({
            "functionDeclaration": function,
            "executionContextId": context,
            "arguments": arguments,
            "returnByValue": true,
            "silent": true,
        });
        match page
            .call_raw_with_timeout("Runtime.callFunctionOn", params, PAGE_SCRIPT_TIMEOUT)
            .await
        {
            Ok(answer) => {
                if let Some(details) = answer.get("exceptionDetails") {
                    let text = details["exception"]["description"]
                        .as_str()
                        .or_else(|| details["text"].as_str())
                        .unwrap_or("the script threw");
                    return Err(PageError::Script(text.to_owned()));
                }
                return Ok(answer["result"]["value"].clone());
            }
            Err(e) if !fresh && is_lost_context(e.kind()) => fresh = true,
            Err(e) => return Err(PageError::of_script_call(e)),
        }
    }
}

/// A DevTools call that the page's own process answers, bounded like Conch's scripts: a
/// page whose own script never ends makes it fail as [`PageError::Busy`] instead of
/// waiting out the browser's whole call timeout (SNAP-12).
pub(crate) async fn page_call(
    session: &Session,
    method: &str,
    params: Value,
) -> Result<Value, PageError> {
    session
        .call_raw_with_timeout(method, params, PAGE_SCRIPT_TIMEOUT)
        .await
        .map_err(PageError::of_script_call)
}

/// The address of `page`'s top document, from the browser, not from a script the page
/// could answer: the site the permit flow and the secret filler use. The browser process
/// answers `Target.getTargetInfo` itself, so a page whose own script never ends cannot
/// hold it up (SNAP-12); the frame tree, which the page's process answers, is asked only
/// when that fails, and only for as long as one of Conch's scripts may take.
///
/// # Errors
/// [`PageError::Cdp`] when the browser does not answer, [`PageError::Busy`] when only the
/// page could and it is busy.
pub async fn page_address(page: &Session) -> Result<String, PageError> {
    if let Ok(info) = page.call_raw("Target.getTargetInfo", json!({})).await
        && let Some(url) = info["targetInfo"]["url"].as_str()
    {
        return Ok(url.to_owned());
    }
    let tree = page_call(page, "Page.getFrameTree", Value::Null).await?;
    let frame = &tree["frameTree"]["frame"];
    let url = frame["url"].as_str().unwrap_or_default();
    // The fragment is reported apart from the URL.
    Ok(match frame["urlFragment"].as_str() {
        Some(fragment) if !fragment.is_empty() && !url.contains('#') => format!("{url}{fragment}"),
        _ => url.to_owned(),
    })
}

/// The reader script: defines `__conch` in the world it runs in.
const SCRIPT: &str = include_str!("snapshot.js");

/// Runs a look with what animates now set to its end (pasted at `/*AT_THEIR_END*/` in
/// the reader, and in the settle's check of a header flipped open).
pub(crate) const AT_THEIR_END: &str = crate::page::script::body(include_str!("at_their_end.js"));

/// Roles, names and page text, shared with the act scripts (pasted at `/*ROLES*/`).
pub(crate) const ROLES: &str = include_str!("roles.js");

/// The world's name in Chromium (seen in DevTools' context list, never by the page).
const WORLD_NAME: &str = "conch";

/// Conch's world in one document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct World {
    /// Its execution context id.
    context: i64,
    /// Whether the reader script runs in it.
    reader: bool,
}

#[derive(Default)]
struct Tables {
    /// (session id, frame id) -> Conch's world in the frame's document.
    worlds: HashMap<(String, String), World>,
    /// Session id -> its `Page.frameNavigated` events, read before a world is picked.
    navigations: HashMap<String, RawEvents>,
    /// Session id -> the frame id of its top frame.
    top_frames: HashMap<String, String>,
    /// Frame target id -> (the key of the session it was found from, the session attached
    /// to it).
    frame_sessions: HashMap<String, (String, Session)>,
    /// Frame target id -> the session the browser auto-attached to it under one of
    /// Conch's pages, from the target watcher (until it detaches).
    attached_frames: HashMap<String, Session>,
    /// The sessions whose `Network` domain settling enabled (issue 32: once, not per act).
    network_on: HashSet<String>,
    /// Session id -> its WebSockets' openings, read lazily by settling (issue 30).
    sockets: HashMap<String, Sockets>,
    /// (session id, frame id) -> the elements already marked as listened on in the
    /// frame's world, so a read marks only the new ones (issue 30).
    marked: HashMap<(String, String), Marked>,
}

/// The elements marked as listened on in one world (issue 30).
#[derive(Debug, Default)]
struct Marked {
    /// The world's execution context: a new one starts with no marks.
    context: i64,
    /// The backend node ids of the elements marked.
    nodes: HashSet<i64>,
    /// The highest backend node id the last lookup told of: a higher one is new since.
    highest: i64,
}

impl Tables {
    /// Drops every entry of the session `key` (a page that closed or detached), and of
    /// the out-of-process frames found from it, so the tables hold live pages only.
    fn forget(&mut self, key: &str) {
        // The frames found from it, and the frames found from those, at any depth.
        let mut gone = vec![key.to_owned()];
        let mut at = 0;
        while let Some(parent) = gone.get(at).cloned() {
            at += 1;
            let frames: Vec<String> = self
                .frame_sessions
                .iter()
                .filter(|(_, (found_from, _))| *found_from == parent)
                .map(|(id, _)| id.clone())
                .collect();
            for id in frames {
                if let Some((_, session)) = self.frame_sessions.remove(&id) {
                    gone.push(session_key(&session));
                }
            }
        }
        self.worlds
            .retain(|(session, _), _| !gone.contains(session));
        self.marked
            .retain(|(session, _), _| !gone.contains(session));
        self.top_frames.retain(|session, _| !gone.contains(session));
        self.network_on.retain(|session| !gone.contains(session));
        self.sockets.retain(|session, _| !gone.contains(session));
        self.navigations
            .retain(|session, _| !gone.contains(session));
    }

    /// Forgets the worlds of the documents `session`'s frames left since the last look,
    /// except `keep`'s: a world made for that frame after those events is in its new
    /// document already. A session whose events ended (detached, or too far behind) is
    /// left to the lazy check.
    fn note_navigations(&mut self, session: &str, keep: Option<&str>) {
        let Some(events) = self.navigations.get_mut(session) else {
            return;
        };
        let mut left = Vec::new();
        loop {
            match events.next().now_or_never() {
                Some(Some(event)) => {
                    if let Ok(navigated) = event.parse::<Navigated>()
                        && keep != Some(navigated.frame.id.as_str())
                    {
                        left.push(navigated.frame.id);
                    }
                }
                Some(None) => {
                    self.navigations.remove(session);
                    break;
                }
                None => break,
            }
        }
        for frame in left {
            self.worlds.remove(&(session.to_owned(), frame));
        }
    }
}

/// `Page.frameNavigated`, the part read here.
#[derive(serde::Deserialize)]
struct Navigated {
    frame: NavigatedFrame,
}

#[derive(serde::Deserialize)]
struct NavigatedFrame {
    id: String,
}

/// Forgets everything remembered about `session` (called when its page is closed or
/// destroyed); without it the tables would grow with every page ever opened.
pub(crate) fn forget_session(session: &Session) {
    tables().forget(&session_key(session));
}

/// Forgets every page of a browser that died or shut down (`pages`), their out-of-process
/// frames, and any frame session left whose connection is closed: a dead browser's worlds
/// and sessions are never used again, and must not stay for the life of the process.
pub(crate) fn forget_browser<'a>(pages: impl IntoIterator<Item = &'a Session>) {
    let mut tables = tables();
    for page in pages {
        tables.forget(&session_key(page));
    }
    let dead: Vec<String> = tables
        .frame_sessions
        .iter()
        .filter(|(_, (_, session))| session.connection().is_closed())
        .map(|(_, (_, session))| session_key(session))
        .collect();
    for key in dead {
        tables.forget(&key);
    }
    tables
        .frame_sessions
        .retain(|_, (_, session)| !session.connection().is_closed());
    tables
        .attached_frames
        .retain(|_, session| !session.connection().is_closed());
}

/// The out-of-process frame `target_id` was auto-attached under one of Conch's pages as
/// `session`, its guard rules in (called by the target watcher before it runs).
pub(crate) fn frame_attached(target_id: &str, session: Session) {
    tables()
        .attached_frames
        .insert(target_id.to_owned(), session);
}

/// The out-of-process frame `target_id`'s session `ended` ended: it is forgotten, unless
/// the frame was attached anew meanwhile (a frame moving to another process detaches and
/// attaches again under the same id).
pub(crate) fn frame_detached(target_id: &str, ended: &Session) {
    let ended = session_key(ended);
    let mut tables = tables();
    if tables
        .attached_frames
        .get(target_id)
        .is_some_and(|s| session_key(s) == ended)
    {
        tables.attached_frames.remove(target_id);
    }
    if tables
        .frame_sessions
        .get(target_id)
        .is_some_and(|(_, s)| session_key(s) == ended)
    {
        tables.frame_sessions.remove(target_id);
    }
    tables.forget(&ended);
}

/// Whether `session`'s `Network` domain was enabled for settling already
/// ([`network_enabled`]); forgotten with the session.
pub(crate) fn network_on(session: &Session) -> bool {
    tables().network_on.contains(&session_key(session))
}

/// `session`'s `Network` domain is enabled: settling asks no more (issue 32).
pub(crate) fn network_enabled(session: &Session) {
    tables().network_on.insert(session_key(session));
}

/// The WebSockets of one page that are still opening: created, and no answer to their
/// handshake yet (issue 30), from the events read so far; and how long each open one
/// takes to answer.
#[derive(Debug)]
struct Sockets {
    created: RawEvents,
    handshakes: RawEvents,
    answered: RawEvents,
    closed: RawEvents,
    opening: HashSet<String>,
    /// When each socket's handshake was sent (the browser's monotonic clock, seconds),
    /// until its answer came.
    handshake_sent: HashMap<String, f64>,
    /// The longest each socket took to answer, in seconds: its handshake, and each
    /// answer to an act's message ([`socket_answered`]).
    round_trip: HashMap<String, f64>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct SocketEvent {
    request_id: String,
    /// When, on the browser's monotonic clock (seconds).
    #[serde(default)]
    timestamp: Option<f64>,
}

impl Sockets {
    fn read(&mut self) {
        let parse = |event: conch_cdp::RawEvent| event.parse::<SocketEvent>().ok();
        while let Some(Some(event)) = self.created.next().now_or_never() {
            if let Some(socket) = parse(event) {
                self.opening.insert(socket.request_id);
            }
        }
        while let Some(Some(event)) = self.handshakes.next().now_or_never() {
            if let Some(SocketEvent {
                request_id,
                timestamp: Some(at),
            }) = parse(event)
            {
                self.handshake_sent.insert(request_id, at);
            }
        }
        while let Some(Some(event)) = self.answered.next().now_or_never() {
            if let Some(socket) = parse(event) {
                self.opening.remove(&socket.request_id);
                let sent = self.handshake_sent.remove(&socket.request_id);
                if let Some((sent, at)) = sent.zip(socket.timestamp) {
                    self.took(socket.request_id, at - sent);
                }
            }
        }
        while let Some(Some(event)) = self.closed.next().now_or_never() {
            if let Some(socket) = parse(event) {
                self.opening.remove(&socket.request_id);
                self.handshake_sent.remove(&socket.request_id);
                self.round_trip.remove(&socket.request_id);
            }
        }
    }

    /// `socket` took `seconds` to answer: kept when the longest yet.
    fn took(&mut self, socket: String, seconds: f64) {
        if !seconds.is_finite() || seconds < 0.0 {
            return;
        }
        let longest = self.round_trip.entry(socket).or_insert(seconds);
        *longest = longest.max(seconds);
    }
}

/// The WebSockets of `session` still opening (created and not yet answered, as far as
/// the events since its first call tell): an act's message to one is sent once it opens
/// (issue 30). The first call starts watching and gives none.
pub(crate) fn sockets_opening(session: &Session) -> HashSet<String> {
    let mut tables = tables();
    page_sockets(&mut tables, session).opening.clone()
}

/// `session`'s sockets, watched from the first call on, with the events so far read.
fn page_sockets<'t>(tables: &'t mut Tables, session: &Session) -> &'t mut Sockets {
    let sockets = tables
        .sockets
        .entry(session_key(session))
        .or_insert_with(|| Sockets {
            created: session.events("Network.webSocketCreated"),
            handshakes: session.events("Network.webSocketWillSendHandshakeRequest"),
            answered: session.events("Network.webSocketHandshakeResponseReceived"),
            closed: session.events("Network.webSocketClosed"),
            opening: HashSet::new(),
            handshake_sent: HashMap::new(),
            round_trip: HashMap::new(),
        });
    sockets.read();
    sockets
}

/// The longest `socket` of `session` has taken to answer, as far as seen: its handshake
/// and the answers to acts' messages on it ([`socket_answered`]); none when its opening
/// was not seen and no act's message on it was answered yet (issue 30).
pub(crate) fn socket_round_trip(session: &Session, socket: &str) -> Option<Duration> {
    let mut tables = tables();
    let seconds = *page_sockets(&mut tables, session).round_trip.get(socket)?;
    Duration::try_from_secs_f64(seconds).ok()
}

/// An act's message on `socket` of `session` was answered `seconds` after it was sent.
pub(crate) fn socket_answered(session: &Session, socket: &str, seconds: f64) {
    let mut tables = tables();
    page_sockets(&mut tables, session).took(socket.to_owned(), seconds);
}

/// Starts watching `session`'s WebSockets' openings, once (see [`sockets_opening`]).
pub(crate) fn watch_sockets(session: &Session) {
    let _ = sockets_opening(session);
}

fn tables() -> std::sync::MutexGuard<'static, Tables> {
    static TABLES: OnceLock<Mutex<Tables>> = OnceLock::new();
    TABLES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

fn session_key(session: &Session) -> String {
    session
        .id()
        .map_or_else(String::new, |id| id.as_str().to_owned())
}

/// The page events whose listener on an element makes it a control (issue 30).
const CLICK_TYPES: &[&str] = &[
    "click",
    "dblclick",
    "mousedown",
    "mouseup",
    "pointerdown",
    "pointerup",
];

/// The most elements with click listeners one read marks (issue 30).
pub(crate) const MOST_LISTENED: usize = 200;

/// The DevTools object group of the handles made while marking listened elements.
const LISTENED_GROUP: &str = "conch-listened";

/// Whether elements were added to the frame's document since the listener marks were last
/// asked of DevTools (true the first time for a document); see `world/added.js`.
const ADDED_JS: &str = crate::page::script::body(include_str!("world/added.js"));

/// An expression for the reader's world (`world/read_first.js`): `[document.readyState,
/// ADDED_JS's answer, the snapshot or null]`, the snapshot taken at once when nothing needs
/// marking first (issue 32: a read of a page an act changed only the words of is one
/// round trip, three before).
pub(crate) static READ_FIRST_JS: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    crate::page::script::body(include_str!("world/read_first.js")).replace("ADDED_WATCH", ADDED_JS)
});

/// How many times DevTools was asked for a document's listeners (issue 30).
static LISTENER_LOOKUPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many times, since the process started, a read asked DevTools for a document's
/// listeners (`DOMDebugger.getEventListeners`, a read's costliest call on a page with
/// many): for tests and benches to see that an unchanged page is not asked again.
pub fn listener_lookups() -> u64 {
    LISTENER_LOOKUPS.load(std::sync::atomic::Ordering::Relaxed)
}

/// How many elements reads resolved in Conch's world to mark them as listened on.
static LISTENED_MARKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many elements, since the process started, reads resolved in Conch's world to mark
/// them as listened on (one `DOM.resolveNode` each, issue 30): for tests and benches to see
/// that a read marks only the elements no earlier read of the document marked.
pub fn listened_marks() -> u64 {
    LISTENED_MARKS.load(std::sync::atomic::Ordering::Relaxed)
}

/// A frame as the reader knows it: the session that holds its document and its id.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub(crate) session: Session,
    pub(crate) frame_id: String,
}

impl Frame {
    /// The top frame of `session` (a page's, or an out-of-process frame's own).
    pub(crate) async fn top(session: &Session) -> Result<Frame, PageError> {
        let key = session_key(session);
        let known = tables().top_frames.get(&key).cloned();
        let frame_id = match known {
            Some(id) => id,
            None => {
                let tree = page_call(session, "Page.getFrameTree", Value::Null).await?;
                let id = tree["frameTree"]["frame"]["id"]
                    .as_str()
                    .ok_or_else(|| PageError::Script("the frame tree has no frame".to_owned()))?
                    .to_owned();
                tables().top_frames.insert(key, id.clone());
                id
            }
        };
        Ok(Frame {
            session: session.clone(),
            frame_id,
        })
    }

    /// Forgets `session`'s top frame id (for a retry after the frame was replaced).
    pub(crate) fn forget_top(session: &Session) {
        tables().top_frames.remove(&session_key(session));
    }

    fn key(&self) -> (String, String) {
        (session_key(&self.session), self.frame_id.clone())
    }

    /// The frame's world as the table knows it, once the navigations read so far are
    /// applied; `None` when it has none.
    fn known(&self) -> Option<World> {
        let key = self.key();
        let mut tables = tables();
        tables.note_navigations(&key.0, None);
        tables.worlds.get(&key).copied()
    }

    /// Marks the frame's world as running the reader script.
    fn mark_reader(&self, context: i64) {
        if let Some(world) = tables().worlds.get_mut(&self.key())
            && world.context == context
        {
            world.reader = true;
        }
    }

    async fn context(&self, fresh: bool) -> Result<i64, PageError> {
        if !fresh && let Some(world) = self.known() {
            return Ok(world.context);
        }
        let key = self.key();
        if !tables().navigations.contains_key(&key.0) {
            // Subscribed before the world is made: every later navigation is seen.
            let events = self.session.events("Page.frameNavigated");
            tables().navigations.entry(key.0.clone()).or_insert(events);
        }
        let made = page_call(
            &self.session,
            "Page.createIsolatedWorld",
            json!({ "frameId": self.frame_id, "worldName": WORLD_NAME }),
        )
        .await?;
        let id = made["executionContextId"]
            .as_i64()
            .ok_or_else(|| PageError::Script("no execution context for the frame".to_owned()))?;
        let mut tables = tables();
        // The navigations read now came before the world was made: they forget other
        // frames' worlds, not this new one.
        tables.note_navigations(&key.0, Some(&key.1));
        tables.worlds.insert(
            key,
            World {
                context: id,
                reader: false,
            },
        );
        Ok(id)
    }

    /// Evaluates `expression` in the frame's conch world, making the world when it is new
    /// or was destroyed by a navigation. `by_value` returns JSON; otherwise a handle.
    pub(crate) async fn evaluate(
        &self,
        expression: &str,
        by_value: bool,
    ) -> Result<EvaluateResponse, PageError> {
        self.evaluate_with(expression, by_value, None).await
    }

    /// [`Frame::evaluate`] by value, awaiting the promise `expression` gives, with the
    /// call's own `timeout` (a wait that runs in the world for a while).
    pub(crate) async fn evaluate_awaiting(
        &self,
        expression: &str,
        timeout: Duration,
    ) -> Result<EvaluateResponse, PageError> {
        self.evaluate_with(expression, true, Some(timeout)).await
    }

    async fn evaluate_with(
        &self,
        expression: &str,
        by_value: bool,
        awaiting: Option<Duration>,
    ) -> Result<EvaluateResponse, PageError> {
        Ok(self.evaluate_in(expression, by_value, awaiting).await?.0)
    }

    /// [`Frame::evaluate_with`], with the world's context it ran in.
    async fn evaluate_in(
        &self,
        expression: &str,
        by_value: bool,
        awaiting: Option<Duration>,
    ) -> Result<(EvaluateResponse, i64), PageError> {
        let mut fresh = false;
        loop {
            let context = self.context(fresh).await?;
            let call = Evaluate {
                expression: expression.to_owned(),
                context_id: Some(context),
                return_by_value: Some(by_value),
                silent: Some(true),
                await_promise: awaiting.map(|_| true),
                ..Evaluate::default()
            };
            // A page whose own script never ends answers nothing: the bound keeps a read
            // from waiting out the browser's whole call timeout (SNAP-12).
            let answer = self
                .session
                .call_with_timeout(&call, awaiting.unwrap_or(PAGE_SCRIPT_TIMEOUT))
                .await;
            match answer {
                Ok(answer) => {
                    if let Some(details) = answer.exception_details {
                        let text = details
                            .exception
                            .and_then(|e| e.description)
                            .unwrap_or(details.text);
                        return Err(PageError::Script(text));
                    }
                    return Ok((answer, context));
                }
                Err(e) if !fresh && is_lost_context(e.kind()) => fresh = true,
                Err(e) => return Err(PageError::of_script_call(e)),
            }
        }
    }

    /// Tells the reader which elements of the frame's document have a click listener of
    /// the page's own (issue 30): a card or an icon wired with `addEventListener` and no
    /// role, no `onclick` attribute and no hand cursor is still a control. The reader
    /// cannot see the page's listeners from its world; DevTools can, in one call for the
    /// whole document. Listeners on the document, `<html>` or `<body>` (a framework's
    /// delegation) say nothing about one element and are left out, and past
    /// [`MOST_LISTENED`] new elements in one read (the newest first) the rest wait for a
    /// later read. The listeners are asked of the
    /// page's own `document` (asked through Conch's world, the handler handles made there
    /// crashed the renderer on a page with a thousand listeners); the elements are then
    /// resolved in Conch's world. Best effort: a failure marks nothing. Measured (shared
    /// machine, 10 reads): products.html 47 ms a read with it, 42 ms without; a 100-line
    /// page 7 ms against 2.5 ms; products.html with a listener on each of ~1,000 boxes
    /// 190–260 ms against 64–133 ms.
    ///
    /// The marks are kept for the document: DevTools is asked again only once an element
    /// was added to it since (the watch of `world/added.js`), so a second read of an
    /// unchanged page makes no such call. A listener added later to an element already
    /// there is not seen until an element is added. An element, once marked, stays marked
    /// for its document (only new ones are resolved and sent to the reader), also when the
    /// page takes its listener off again.
    pub(crate) async fn mark_listened(&self) {
        let added = self.evaluate(ADDED_JS, true).await.ok().and_then(|answer| {
            answer
                .result
                .value
                .as_ref()
                .and_then(serde_json::Value::as_bool)
        });
        self.mark_listened_if(added).await;
    }

    /// [`Frame::mark_listened`], `added` already asked ([`READ_FIRST_JS`], in the
    /// read's first call, issue 32): nothing is asked of DevTools when no element was
    /// added since the last time.
    pub(crate) async fn mark_listened_if(&self, added: Option<bool>) {
        if added == Some(false) {
            return;
        }
        let Ok(context) = self.context(false).await else {
            return;
        };
        let _ = self.mark_listened_in(context).await;
        let _ = page_call(
            &self.session,
            "Runtime.releaseObjectGroup",
            json!({ "objectGroup": LISTENED_GROUP }),
        )
        .await;
    }

    async fn mark_listened_in(&self, context: i64) -> Result<(), PageError> {
        // Asked with no object group: DevTools then makes no handle for each listener's
        // function (two per listener, each described by its source), which on JupyterLab
        // (7,000 listeners) was three quarters of the call's time and 4.6 MB of its answer
        // (issue 30). The document's own handle is released by its id.
        let document = page_call(
            &self.session,
            "Runtime.evaluate",
            json!({ "expression": "document", "silent": true }),
        )
        .await?;
        let Some(document) = document["result"]["objectId"].as_str() else {
            return Ok(());
        };
        LISTENER_LOOKUPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let found = page_call(
            &self.session,
            "DOMDebugger.getEventListeners",
            json!({ "objectId": document, "depth": -1, "pierce": true }),
        )
        .await;
        let _ = page_call(
            &self.session,
            "Runtime.releaseObject",
            json!({ "objectId": document }),
        )
        .await;
        let found = found?;
        // Only the elements not marked in this world yet are resolved and marked: an
        // element keeps its mark for its document's life (issue 30: JupyterLab's 200
        // were resolved again after every act). In document order, but what the page
        // added since the last lookup first: DevTools numbers a node when it first tells
        // of it, so an act's new controls are not left past the bound behind old ones.
        let key = self.key();
        let nodes: Vec<i64> = {
            let mut tables = tables();
            let marked = tables.marked.entry(key.clone()).or_default();
            if marked.context != context {
                *marked = Marked {
                    context,
                    ..Marked::default()
                };
            }
            let mut fresh: Vec<i64> = Vec::new();
            let mut older: Vec<i64> = Vec::new();
            let mut seen = HashSet::new();
            let mut highest = marked.highest;
            for listener in found["listeners"].as_array().into_iter().flatten() {
                let Some(node) = listener["backendNodeId"].as_i64() else {
                    continue;
                };
                highest = highest.max(node);
                let kind = listener["type"].as_str().unwrap_or("");
                if CLICK_TYPES.contains(&kind) && !marked.nodes.contains(&node) && seen.insert(node)
                {
                    if node > marked.highest {
                        fresh.push(node);
                    } else {
                        older.push(node);
                    }
                }
            }
            marked.highest = highest;
            fresh.extend(older);
            fresh.truncate(MOST_LISTENED);
            fresh
        };
        if nodes.is_empty() {
            return Ok(());
        }
        LISTENED_MARKS.fetch_add(nodes.len() as u64, std::sync::atomic::Ordering::Relaxed);
        let resolved = futures_util::future::join_all(nodes.iter().map(|node| {
            page_call(
                &self.session,
                "DOM.resolveNode",
                json!({ "backendNodeId": node, "executionContextId": context, "objectGroup": LISTENED_GROUP }),
            )
        }))
        .await;
        let args: Vec<Value> = resolved
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .filter_map(|r| r["object"]["objectId"].as_str())
            .map(|id| json!({ "objectId": id }))
            .collect();
        if args.is_empty() {
            return Ok(());
        }
        page_call(
            &self.session,
            "Runtime.callFunctionOn",
            json!({
                "functionDeclaration": "function() { if (typeof __conch !== 'undefined') __conch.listened(arguments); }",
                "executionContextId": context,
                "arguments": args,
                "silent": true,
            }),
        )
        .await?;
        if let Some(marked) = tables().marked.get_mut(&key)
            && marked.context == context
        {
            marked.nodes.extend(nodes);
        }
        Ok(())
    }

    /// Runs `call` (an expression using `__conch`) in the world, installing the reader
    /// first when this document has none, with refs and frame handles numbered after the
    /// highest this frame gave before (`high_water`, updated from the answer's `next` and
    /// `nextFrame`), so that a held ref never names a later document's element or frame.
    /// Returns the JSON value, or `None` when the world had no reader and `install` was
    /// false.
    pub(crate) async fn call_reader(
        &self,
        call: &str,
        install: Option<&mut HashMap<String, u64>>,
    ) -> Result<Option<Value>, PageError> {
        let frames_key = format!("{}/frames", self.frame_id);
        let bases = install.as_ref().map(|high| {
            (
                high.get(&self.frame_id).copied().unwrap_or(0),
                high.get(&frames_key).copied().unwrap_or(0),
            )
        });
        let value = self.call_reader_from(call, bases).await?;
        if let (Some(high), Some(value)) = (install, value.as_ref()) {
            self.note_high_water(high, value);
        }
        Ok(value)
    }

    /// Keeps the highest ref and frame handle numbers a snapshot of this frame (`value`)
    /// gave, for the reader installed in a later document.
    pub(crate) fn note_high_water(&self, high: &mut HashMap<String, u64>, value: &Value) {
        let frames_key = format!("{}/frames", self.frame_id);
        for (key, field) in [(self.frame_id.clone(), "next"), (frames_key, "nextFrame")] {
            if let Some(n) = value.get(field).and_then(Value::as_u64) {
                let entry = high.entry(key).or_insert(0);
                *entry = (*entry).max(n);
            }
        }
    }

    async fn call_reader_from(
        &self,
        call: &str,
        install: Option<(u64, u64)>,
    ) -> Result<Option<Value>, PageError> {
        let install_with = |(base, frame_base): (u64, u64)| {
            let script = SCRIPT
                .replace("/*ROLES*/", ROLES)
                .replace("/*AT_THEIR_END*/", AT_THEIR_END)
                .replace("__FRAME_BASE__", &frame_base.to_string())
                .replace("__BASE__", &base.to_string());
            // The reader goes in and answers in one evaluation. The settle's churn
            // learner starts with it, so an act knows what was changing on its own
            // before it (issue 30).
            format!(
                "(({}) (), {script}, ({call}))",
                crate::page::settle::LEARN_JS
            )
        };
        if let Some(bases) = install
            && self.known().is_some_and(|world| !world.reader)
        {
            // A world Conch made in this document and never put the reader in.
            return self.install_and_call(&install_with(bases)).await.map(Some);
        }
        let guarded = format!("typeof __conch === 'undefined' ? '\u{1}fresh' : ({call})");
        let (answer, context) = self.evaluate_in(&guarded, true, None).await?;
        let value = answer.result.value.unwrap_or(Value::Null);
        if value.as_str() != Some("\u{1}fresh") {
            self.mark_reader(context);
            return Ok(Some(value));
        }
        match install {
            Some(bases) => self.install_and_call(&install_with(bases)).await.map(Some),
            None => Ok(None),
        }
    }

    /// Evaluates the reader script followed by a call, and marks the world as having it.
    async fn install_and_call(&self, expression: &str) -> Result<Value, PageError> {
        let (answer, context) = self.evaluate_in(expression, true, None).await?;
        self.mark_reader(context);
        Ok(answer.result.value.unwrap_or(Value::Null))
    }

    /// The frame behind the world's frame handle `n` (`__conch.frame(n)`): its id, the
    /// session that holds it (this one, or an out-of-process frame's own), and the handle
    /// of the `<iframe>` element in this frame.
    pub(crate) async fn child(&self, n: u64) -> Result<Option<(Frame, String)>, PageError> {
        let answer = self
            .evaluate(
                &format!("typeof __conch === 'undefined' ? 'gone' : __conch.frame({n})"),
                false,
            )
            .await?;
        let Some(object_id) = answer.result.object_id else {
            return Ok(None);
        };
        let node = page_call(
            &self.session,
            "DOM.describeNode",
            json!({ "objectId": object_id }),
        )
        .await?;
        let Some(frame_id) = node["node"]["frameId"].as_str().map(str::to_owned) else {
            return Ok(None);
        };
        let session = match frame_session(&self.session, &frame_id).await? {
            Some(session) => session,
            None => self.session.clone(),
        };
        Ok(Some((Frame { session, frame_id }, object_id)))
    }

    /// The frame whose owner element (`<iframe>`) is `object_id` in this frame's session:
    /// the same session for a frame in the page's process, the frame's own session for an
    /// out-of-process one. `None` when the element owns no frame.
    pub(crate) async fn owned_by(
        session: &Session,
        object_id: &str,
    ) -> Result<Option<Frame>, PageError> {
        let node = page_call(
            session,
            "DOM.describeNode",
            json!({ "objectId": object_id }),
        )
        .await?;
        let Some(frame_id) = node["node"]["frameId"].as_str().map(str::to_owned) else {
            return Ok(None);
        };
        let session = match frame_session(session, &frame_id).await? {
            Some(own) => own,
            None => session.clone(),
        };
        Ok(Some(Frame { session, frame_id }))
    }

    /// The node `backend` (a backend node id of this frame's document) as an object of
    /// the frame's conch world, where the page's own script cannot reach; `None` when the
    /// node is gone or does not belong to this frame's process.
    pub(crate) async fn resolve_node(&self, backend: i64) -> Result<Option<String>, PageError> {
        let mut fresh = false;
        loop {
            let context = self.context(fresh).await?;
            let answer = self
                .session
                .call_raw(
                    "DOM.resolveNode",
                    json!({ "backendNodeId": backend, "executionContextId": context }),
                )
                .await;
            match answer {
                Ok(answer) => {
                    return Ok(answer["object"]["objectId"].as_str().map(str::to_owned));
                }
                // A world kept from the frame's last document (a navigation, or the page
                // kept in the back-forward cache) does not hold this document's nodes.
                Err(e)
                    if !fresh
                        && (is_lost_context(e.kind())
                            || matches!(e.kind(), ErrorKind::Protocol { message, .. }
                                if message.contains("does not belong"))) =>
                {
                    fresh = true;
                }
                Err(e) if matches!(e.kind(), ErrorKind::Protocol { .. }) => return Ok(None),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// The sessions of the out-of-process frames attached so far (for finding which one holds
/// a nested frame's owner).
pub(crate) fn frame_sessions() -> Vec<Session> {
    tables()
        .frame_sessions
        .values()
        .map(|(_, s)| s.clone())
        .collect()
}

fn is_lost_context(kind: &ErrorKind) -> bool {
    matches!(kind, ErrorKind::Protocol { message, .. }
        if message.contains("context") || message.contains("Execution context"))
}

/// The session of the out-of-process frame `frame_id`: the one auto-attached under
/// Conch's page (see [`frame_attached`]); `None` when the frame lives in `parent`'s
/// process (no target of its own). Never a list of the browser's targets, never an attach
/// by name (BE-13).
async fn frame_session(parent: &Session, frame_id: &str) -> Result<Option<Session>, PageError> {
    let known = tables()
        .frame_sessions
        .get(frame_id)
        .map(|(_, s)| s.clone());
    if let Some(session) = known {
        // Still attached? A cheap call answers.
        match page_call(&session, "Runtime.evaluate", json!({"expression": "1"})).await {
            Ok(_) => return Ok(Some(session)),
            Err(_) => {
                tables().frame_sessions.remove(frame_id);
            }
        }
    }
    let mut tables = tables();
    let Some(session) = tables.attached_frames.get(frame_id).cloned() else {
        return Ok(None);
    };
    tables
        .frame_sessions
        .insert(frame_id.to_owned(), (session_key(parent), session.clone()));
    Ok(Some(session))
}

#[cfg(test)]
mod tests {
    use super::{Tables, session_key, tables};
    use crate::Browser;
    use crate::page::{Reader, read};

    /// Whether the tables remember anything of `session`.
    fn remembers(session: &conch_cdp::Session) -> bool {
        let key = session_key(session);
        let tables = tables();
        tables.top_frames.contains_key(&key) || tables.worlds.keys().any(|(s, _)| *s == key)
    }

    /// Issue 12 (unbounded growth): the isolated-world tables forget a browser's pages
    /// when it shuts down, and when it dies under the runtime (found by the next look).
    #[tokio::test(flavor = "multi_thread")]
    async fn issue_12_world_tables_forget_a_browser_that_shut_down_or_died() {
        let server = conch_fixtures::FixtureServer::start().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let browser = Browser::new(crate::runtime::testing::config(&dir));
        let chat = browser.conversation("c1");

        chat.open(&server.url("basic.html")).await.unwrap();
        let page = chat.page().await.unwrap();
        read(&page, &mut Reader::new()).await.unwrap();
        assert!(remembers(&page), "the read left nothing to forget");
        browser.shutdown().await;
        assert!(
            !remembers(&page),
            "a shut-down browser's page is remembered"
        );

        chat.open(&server.url("basic.html")).await.unwrap();
        let page = chat.page().await.unwrap();
        read(&page, &mut Reader::new()).await.unwrap();
        assert!(remembers(&page));
        crate::runtime::testing::kill_and_wait(&browser).await;
        assert!(!remembers(&page), "a dead browser's page is remembered");
        assert!(tables().frame_sessions.is_empty());
    }

    #[test]
    fn issue_12_world_tables_forget_a_closed_session() {
        let mut tables = Tables::default();
        for session in ["A", "B"] {
            tables.worlds.insert(
                (session.to_owned(), "frame".to_owned()),
                super::World {
                    context: 1,
                    reader: false,
                },
            );
            tables
                .top_frames
                .insert(session.to_owned(), "frame".to_owned());
        }
        tables.forget("A");
        assert_eq!(tables.worlds.len(), 1);
        assert!(
            tables
                .worlds
                .contains_key(&("B".to_owned(), "frame".to_owned()))
        );
        assert_eq!(tables.top_frames.keys().collect::<Vec<_>>(), ["B"]);
    }
}
