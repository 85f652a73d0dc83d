//! The connection actor: one task that owns the transport, the pending calls and the
//! event routes. Handles ([`crate::Connection`], [`crate::Session`], the streams) talk to
//! it through one channel carrying the closed enum [`Request`].
//!
//! Incoming messages are read as an envelope whose `params` and `result` stay raw JSON
//! ([`RawValue`]): a reply is handed to its caller unparsed, an event is copied out only if
//! someone subscribed to its (session, method). Nothing from the wire can make this task
//! panic; a message it cannot use is reported (tracing and [`crate::Connection::errors`])
//! and dropped, and the connection goes on.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot, watch};

use crate::error::{Error, ErrorKind, Reason};
use crate::events::RawEvent;
use crate::protocol::SessionId;
use crate::redact;
use crate::transport::{Incoming, Reader, Writer};

/// The tracing target of every message sent or received (level TRACE, redacted).
pub(crate) const WIRE: &str = "conch_cdp::wire";

/// The tracing target of each call's round trip (level DEBUG): its method and the time
/// from its write to its reply, for finding where a step's time goes.
pub(crate) const TIMING: &str = "conch_cdp::timing";

/// How many queued calls are written before one flush.
const BATCH: usize = 64;

/// What a call's waiter receives: the raw `result`, or why there is none.
pub(crate) type Reply = Result<Box<RawValue>, Error>;

/// How many detached sessions the actor remembers (beyond that, the oldest are forgotten:
/// a call on one waits for its timeout instead of failing at once).
pub(crate) const DETACHED_KEPT: usize = 4096;

/// Everything a handle can ask of the actor.
#[derive(Debug)]
pub(crate) enum Request {
    /// Send a command and route its reply.
    Call(Call),
    /// The waiter of this call is gone (dropped or timed out): forget the call.
    Cancel(u64),
    /// Route matching events to this subscriber.
    Subscribe(Subscription),
    /// A subscriber is gone.
    Unsubscribe { key: SubKey, id: u64 },
    /// Send reports of dropped incoming messages here.
    WatchErrors(mpsc::Sender<Error>),
    /// Close the connection.
    Close,
}

/// A command ready to write.
#[derive(Debug)]
pub(crate) struct Call {
    pub(crate) id: u64,
    pub(crate) session: Option<SessionId>,
    pub(crate) method: Cow<'static, str>,
    /// The whole message, serialised by the caller.
    pub(crate) text: String,
    pub(crate) reply: oneshot::Sender<Reply>,
}

/// Which events a subscriber wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SubKey {
    pub(crate) session: SessionFilter,
    pub(crate) method: Box<str>,
}

/// The session part of a [`SubKey`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SessionFilter {
    /// Events of one session (`None`: the browser's own, without `sessionId`).
    Exact(Option<SessionId>),
    /// Events of every session.
    Any,
}

#[derive(Debug)]
pub(crate) struct Subscription {
    pub(crate) key: SubKey,
    pub(crate) id: u64,
    pub(crate) tx: mpsc::Sender<RawEvent>,
}

#[derive(Debug)]
struct Subscriber {
    id: u64,
    tx: mpsc::Sender<RawEvent>,
}

impl Subscriber {
    /// Hands `event` over; false when the subscriber is gone, or so far behind that its
    /// buffer is full: it is then dropped (its stream ends, so it can tell), never made
    /// to skip an event silently, and never allowed to grow the actor's memory.
    fn deliver(&self, event: &RawEvent) -> bool {
        match self.tx.try_send(event.clone()) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::warn!(
                    target: "conch_cdp",
                    method = event.method(),
                    session = event.session_id().map_or("", SessionId::as_str),
                    "an event subscriber fell too far behind; its stream is ended"
                );
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }
}

#[derive(Debug)]
struct Pending {
    session: Option<SessionId>,
    method: Cow<'static, str>,
    reply: oneshot::Sender<Reply>,
    /// When it was written (for [`TIMING`]).
    sent: std::time::Instant,
}

/// An incoming message, its payloads left raw.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default)]
    id: Option<u64>,
    #[serde(default, borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(default, borrow, rename = "sessionId")]
    session_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<WireError>,
}

#[derive(Deserialize)]
struct WireError {
    #[serde(default)]
    code: i64,
    #[serde(default)]
    message: String,
    #[serde(default)]
    data: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DetachedParams {
    session_id: SessionId,
}

/// What handling one request says about the loop.
enum Step {
    Continue,
    Stop(Option<Error>),
}

/// The actor's state.
#[derive(Debug)]
pub(crate) struct Actor {
    pending: HashMap<u64, Pending>,
    /// The highest call id seen: a reply above it answers no call ever made.
    max_id: u64,
    /// Routes by session (`""` for the browser's own events), then method.
    exact: HashMap<Arc<str>, HashMap<Box<str>, Vec<Subscriber>>>,
    /// Routes for every session, by method.
    any: HashMap<Box<str>, Vec<Subscriber>>,
    /// Sessions that were detached: calls and subscriptions on them end at once. The
    /// newest [`DETACHED_KEPT`] are remembered (in `detached_order`), so a long-lived
    /// browser that opens and closes many pages does not grow this without end.
    detached: HashSet<SessionId>,
    detached_order: std::collections::VecDeque<SessionId>,
    error_watchers: Vec<mpsc::Sender<Error>>,
    limit: usize,
    /// The number of pending calls, published for [`crate::Connection::pending_calls`].
    gauge: Arc<AtomicUsize>,
}

impl Actor {
    pub(crate) fn new(limit: usize, gauge: Arc<AtomicUsize>) -> Self {
        Actor {
            pending: HashMap::new(),
            max_id: 0,
            exact: HashMap::new(),
            any: HashMap::new(),
            detached: HashSet::new(),
            detached_order: std::collections::VecDeque::new(),
            error_watchers: Vec::new(),
            limit,
            gauge,
        }
    }

    /// Runs until the transport ends, [`Request::Close`] arrives or every handle is gone;
    /// then fails everything pending with [`ErrorKind::Closed`], ends every stream, and
    /// marks the connection closed.
    pub(crate) async fn run(
        mut self,
        mut inbox: mpsc::UnboundedReceiver<Request>,
        mut reader: Reader,
        mut writer: Writer,
        closed: watch::Sender<bool>,
    ) {
        let reason = loop {
            tokio::select! {
                request = inbox.recv() => {
                    let Some(request) = request else { break None };
                    match self.handle(request, &mut inbox, &mut writer).await {
                        Step::Continue => {}
                        Step::Stop(reason) => break reason,
                    }
                }
                incoming = reader.recv() => match incoming {
                    Incoming::Message(bytes) => self.dispatch(&bytes),
                    Incoming::TooLarge(size) => self.report(&Error::new(ErrorKind::MessageTooLarge {
                        size,
                        limit: self.limit,
                    })),
                    Incoming::End(reason) => break reason,
                },
            }
            self.gauge.store(self.pending.len(), Ordering::Relaxed);
        };
        match &reason {
            Some(reason) => {
                tracing::debug!(target: "conch_cdp", %reason, "devtools connection closed")
            }
            None => tracing::debug!(target: "conch_cdp", "devtools connection closed"),
        }
        // No new request gets in; the ones already queued are answered below.
        inbox.close();
        if let Some(reason) = &reason {
            self.report(reason);
        }
        let closed_error = || match &reason {
            Some(reason) => Error::with_source(ErrorKind::Closed, reason.clone()),
            None => Error::closed(),
        };
        for (_, pending) in self.pending.drain() {
            let _ = pending
                .reply
                .send(Err(closed_error().for_method(&pending.method)));
        }
        while let Ok(request) = inbox.try_recv() {
            if let Request::Call(call) = request {
                let _ = call
                    .reply
                    .send(Err(closed_error().for_method(&call.method)));
            }
        }
        // Dropping the routes ends every event stream.
        self.exact.clear();
        self.any.clear();
        self.error_watchers.clear();
        self.gauge.store(0, Ordering::Relaxed);
        let _ = closed.send(true);
        // A close that cannot finish (a stuck peer) must not hold the task.
        let _ = tokio::time::timeout(Duration::from_secs(1), writer.close()).await;
    }

    /// Handles `request` and whatever else is already queued (up to [`BATCH`] more), then
    /// flushes the calls written, once.
    async fn handle(
        &mut self,
        request: Request,
        inbox: &mut mpsc::UnboundedReceiver<Request>,
        writer: &mut Writer,
    ) -> Step {
        let mut next = Some(request);
        let mut budget = BATCH;
        let mut wrote = false;
        let mut step = Step::Continue;
        while let Some(request) = next.take() {
            match request {
                Request::Call(call) => match self.write_call(call, writer).await {
                    Ok(()) => wrote = true,
                    // The transport is broken: nothing more can be sent.
                    Err(error) => return Step::Stop(Some(error)),
                },
                Request::Cancel(id) => {
                    self.pending.remove(&id);
                }
                Request::Subscribe(subscription) => self.subscribe(subscription),
                Request::Unsubscribe { key, id } => self.unsubscribe(&key, id),
                Request::WatchErrors(tx) => self.error_watchers.push(tx),
                Request::Close => {
                    step = Step::Stop(None);
                    break;
                }
            }
            if budget > 0 {
                budget -= 1;
                next = inbox.try_recv().ok();
            }
        }
        if wrote && let Err(error) = writer.flush().await {
            return Step::Stop(Some(error));
        }
        step
    }

    async fn write_call(&mut self, call: Call, writer: &mut Writer) -> Result<(), Error> {
        let Call {
            id,
            session,
            method,
            text,
            reply,
        } = call;
        self.max_id = self.max_id.max(id);
        if let Some(session) = &session
            && self.detached.contains(session)
        {
            let _ = reply.send(Err(Error::new(ErrorKind::Detached).for_method(&method)));
            return Ok(());
        }
        if reply.is_closed() {
            // The caller already gave up.
            return Ok(());
        }
        self.pending.insert(
            id,
            Pending {
                session,
                method,
                reply,
                sent: std::time::Instant::now(),
            },
        );
        writer.feed(text).await
    }

    fn subscribe(&mut self, subscription: Subscription) {
        let Subscription { key, id, tx } = subscription;
        let subscriber = Subscriber { id, tx };
        match key.session {
            SessionFilter::Any => self.any.entry(key.method).or_default().push(subscriber),
            SessionFilter::Exact(session) => {
                if let Some(session) = &session
                    && self.detached.contains(session)
                {
                    // Dropping the sender ends the stream at once.
                    return;
                }
                let session: Arc<str> = match &session {
                    Some(session) => Arc::from(session.as_str()),
                    None => Arc::from(""),
                };
                self.exact
                    .entry(session)
                    .or_default()
                    .entry(key.method)
                    .or_default()
                    .push(subscriber);
            }
        }
    }

    fn unsubscribe(&mut self, key: &SubKey, id: u64) {
        match &key.session {
            SessionFilter::Any => {
                if let Some(subscribers) = self.any.get_mut(&key.method) {
                    subscribers.retain(|s| s.id != id);
                    if subscribers.is_empty() {
                        self.any.remove(&key.method);
                    }
                }
            }
            SessionFilter::Exact(session) => {
                let session = session.as_ref().map_or("", SessionId::as_str);
                if let Some(methods) = self.exact.get_mut(session) {
                    if let Some(subscribers) = methods.get_mut(&key.method) {
                        subscribers.retain(|s| s.id != id);
                        if subscribers.is_empty() {
                            methods.remove(&key.method);
                        }
                    }
                    if methods.is_empty() {
                        self.exact.remove(session);
                    }
                }
            }
        }
    }

    /// Handles one incoming message.
    fn dispatch(&mut self, bytes: &[u8]) {
        let envelope: Envelope<'_> = match serde_json::from_slice(bytes) {
            Ok(envelope) => envelope,
            Err(error) => {
                // JSON of the wrong shape that names its call: that call fails now, not
                // at its timeout. (Text that is not JSON names nothing for sure.)
                let id = serde_json::from_slice::<serde_json::Value>(bytes)
                    .ok()
                    .and_then(|v| v.get("id").and_then(serde_json::Value::as_u64));
                match id.and_then(|id| self.pending.remove(&id)) {
                    Some(pending) => {
                        let failed = Error::decode(error).for_method(&pending.method);
                        self.report(&failed);
                        let _ = pending.reply.send(Err(failed));
                    }
                    None => self.report(&Error::decode(error)),
                }
                return;
            }
        };
        let session = envelope.session_id.as_deref();
        if let Some(id) = envelope.id {
            self.reply(id, &envelope);
        } else if let Some(method) = envelope.method.as_deref() {
            trace_incoming("event", None, method, session, envelope.params);
            self.route(method, session, envelope.params);
            self.after_event(method, session, envelope.params);
        } else {
            self.report(&Error::with_source(
                ErrorKind::UnexpectedMessage,
                Reason("a message that is neither a reply nor an event".to_owned()),
            ));
        }
    }

    fn reply(&mut self, id: u64, envelope: &Envelope<'_>) {
        let session = envelope.session_id.as_deref();
        let Some(pending) = self.pending.remove(&id) else {
            if id > self.max_id {
                self.report(&Error::with_source(
                    ErrorKind::UnexpectedMessage,
                    Reason(format!("a reply to id {id}, which no call used")),
                ));
            } else {
                tracing::debug!(target: "conch_cdp", id, "late reply to a call nobody awaits");
            }
            return;
        };
        tracing::debug!(
            target: TIMING,
            method = &*pending.method,
            us = u64::try_from(pending.sent.elapsed().as_micros()).unwrap_or(u64::MAX),
            "reply"
        );
        let reply = match &envelope.error {
            Some(error) => {
                trace_incoming("error", Some(id), &pending.method, session, None);
                let mut message = error.message.clone();
                if let Some(serde_json::Value::String(data)) = &error.data {
                    message = format!("{message} ({data})");
                }
                Err(Error::new(ErrorKind::Protocol {
                    code: error.code,
                    message,
                }))
            }
            None => {
                trace_incoming("reply", Some(id), &pending.method, session, envelope.result);
                match envelope.result {
                    Some(result) => Ok(result.to_owned()),
                    None => empty_object(),
                }
            }
        };
        let _ = pending
            .reply
            .send(reply.map_err(|e| e.for_method(&pending.method)));
    }

    /// Hands an event to its subscribers; the params are copied out only if there are any.
    fn route(&mut self, method: &str, session: Option<&str>, params: Option<&RawValue>) {
        let session_key = session.unwrap_or("");
        let has_exact = self
            .exact
            .get(session_key)
            .is_some_and(|methods| methods.contains_key(method));
        let has_any = self.any.contains_key(method);
        if !has_exact && !has_any {
            return;
        }
        let params: Arc<RawValue> = match params {
            Some(params) => Arc::from(params.to_owned()),
            None => match empty_object() {
                Ok(empty) => Arc::from(empty),
                Err(_) => return,
            },
        };
        let event = RawEvent::new(session.map(SessionId::from), Arc::from(method), params);
        if has_exact && let Some(methods) = self.exact.get_mut(session_key) {
            if let Some(subscribers) = methods.get_mut(method) {
                subscribers.retain(|s| s.deliver(&event));
                if subscribers.is_empty() {
                    methods.remove(method);
                }
            }
            if methods.is_empty() {
                self.exact.remove(session_key);
            }
        }
        if has_any && let Some(subscribers) = self.any.get_mut(method) {
            subscribers.retain(|s| s.deliver(&event));
            if subscribers.is_empty() {
                self.any.remove(method);
            }
        }
    }

    /// What the connection itself does about an event, after its subscribers have it.
    fn after_event(&mut self, method: &str, session: Option<&str>, params: Option<&RawValue>) {
        match method {
            "Target.detachedFromTarget" => {
                let Some(params) = params else { return };
                match serde_json::from_str::<DetachedParams>(params.get()) {
                    Ok(detached) => self.detach(detached.session_id),
                    Err(error) => self.report(&Error::decode(error).for_method(method)),
                }
            }
            "Inspector.targetCrashed" => {
                if let Some(session) = session {
                    self.fail_session(session, &ErrorKind::TargetCrashed);
                }
            }
            _ => {}
        }
    }

    /// A session ended: its pending calls fail, its streams end, later use fails at once.
    fn detach(&mut self, session: SessionId) {
        tracing::debug!(target: "conch_cdp", %session, "session detached");
        self.fail_session(session.as_str(), &ErrorKind::Detached);
        self.exact.remove(session.as_str());
        if self.detached.insert(session.clone()) {
            self.detached_order.push_back(session);
            while self.detached_order.len() > DETACHED_KEPT {
                if let Some(oldest) = self.detached_order.pop_front() {
                    self.detached.remove(&oldest);
                }
            }
        }
    }

    fn fail_session(&mut self, session: &str, kind: &ErrorKind) {
        let ids: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, p)| p.session.as_ref().is_some_and(|s| s.as_str() == session))
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            if let Some(pending) = self.pending.remove(&id) {
                let error = Error::new(kind.clone()).for_method(&pending.method);
                let _ = pending.reply.send(Err(error));
            }
        }
    }

    /// An incoming message was dropped: say so in the traces and to error watchers.
    fn report(&mut self, error: &Error) {
        tracing::warn!(target: "conch_cdp", %error, "dropped an incoming devtools message");
        // A watcher that fell behind is dropped, as an event subscriber is.
        self.error_watchers
            .retain(|tx| tx.try_send(error.clone()).is_ok());
    }
}

fn empty_object() -> Reply {
    RawValue::from_string("{}".to_owned()).map_err(Error::decode)
}

/// Traces one incoming message, redacted, if TRACE is on for [`WIRE`].
fn trace_incoming(
    kind: &str,
    id: Option<u64>,
    method: &str,
    session: Option<&str>,
    payload: Option<&RawValue>,
) {
    if !tracing::enabled!(target: WIRE, tracing::Level::TRACE) {
        return;
    }
    let mut value = payload
        .and_then(|raw| serde_json::from_str::<serde_json::Value>(raw.get()).ok())
        .unwrap_or(serde_json::Value::Null);
    redact::message(method, &mut value);
    tracing::trace!(
        target: WIRE,
        direction = "recv",
        kind,
        id,
        method,
        session = session.unwrap_or(""),
        payload = %value,
    );
}

/// Traces one outgoing call, redacted, if TRACE is on for [`WIRE`].
pub(crate) fn trace_outgoing(
    id: u64,
    method: &str,
    session: Option<&SessionId>,
    params: &impl serde::Serialize,
) {
    if !tracing::enabled!(target: WIRE, tracing::Level::TRACE) {
        return;
    }
    let mut value = serde_json::to_value(params).unwrap_or(serde_json::Value::Null);
    redact::message(method, &mut value);
    tracing::trace!(
        target: WIRE,
        direction = "send",
        kind = "call",
        id,
        method,
        session = session.map_or("", SessionId::as_str),
        payload = %value,
    );
}
