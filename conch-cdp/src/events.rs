//! Event streams: [`RawEvents`] (one method, raw params), [`EventStream`] (typed),
//! [`AttachedTargets`] (new child sessions, held before they run) and [`Errors`]
//! (incoming messages the connection dropped).
//!
//! A stream is registered with the connection when it is created, so subscribe first and
//! then send the command that triggers the event: nothing is missed. Streams end when the
//! session is detached or the connection closes, and unregister themselves when dropped.
//! A stream whose reader falls [`crate::Config::event_buffer`] events behind ends too
//! (with a logged warning): it never skips an event silently, so a reader that must see
//! every event knows when it did not.

use std::fmt;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::Stream;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use crate::actor::{Request, SubKey};
use crate::connection::{Connection, Session};
use crate::error::{Error, Result};
use crate::protocol::target::{AttachedToTarget, TargetInfo};
use crate::protocol::{Event, SessionId};

/// One event as it came, its params still raw JSON. Cheap to clone.
#[derive(Clone)]
pub struct RawEvent {
    session_id: Option<SessionId>,
    method: Arc<str>,
    params: Arc<RawValue>,
}

impl RawEvent {
    pub(crate) fn new(
        session_id: Option<SessionId>,
        method: Arc<str>,
        params: Arc<RawValue>,
    ) -> Self {
        RawEvent {
            session_id,
            method,
            params,
        }
    }

    /// The session it came on (`None`: the browser's own).
    pub fn session_id(&self) -> Option<&SessionId> {
        self.session_id.as_ref()
    }

    /// The method, such as `"Page.loadEventFired"`.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The params, raw.
    pub fn params(&self) -> &RawValue {
        &self.params
    }

    /// The params, decoded.
    ///
    /// # Errors
    /// [`crate::ErrorKind::Decode`] when they do not fit `T`.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T> {
        serde_json::from_str(self.params.get())
            .map_err(|e| Error::decode(e).for_method(&self.method))
    }
}

impl fmt::Debug for RawEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Params can hold page text and secrets: only their size is shown.
        f.debug_struct("RawEvent")
            .field("session_id", &self.session_id)
            .field("method", &self.method)
            .field("params_len", &self.params.get().len())
            .finish()
    }
}

/// The events of one method (on one session, or on every session), raw.
pub struct RawEvents {
    rx: mpsc::Receiver<RawEvent>,
    registration: Option<(mpsc::UnboundedSender<Request>, SubKey, u64)>,
}

impl RawEvents {
    pub(crate) fn new(
        rx: mpsc::Receiver<RawEvent>,
        actor: mpsc::UnboundedSender<Request>,
        key: SubKey,
        id: u64,
    ) -> Self {
        RawEvents {
            rx,
            registration: Some((actor, key, id)),
        }
    }
}

impl Stream for RawEvents {
    type Item = RawEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<RawEvent>> {
        self.rx.poll_recv(cx)
    }
}

impl Drop for RawEvents {
    fn drop(&mut self) {
        if let Some((actor, key, id)) = self.registration.take() {
            let _ = actor.send(Request::Unsubscribe { key, id });
        }
    }
}

impl fmt::Debug for RawEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = self.registration.as_ref().map(|(_, key, _)| key);
        f.debug_struct("RawEvents")
            .field("key", &key)
            .finish_non_exhaustive()
    }
}

/// The events of one typed method. Yields `Err` for an event whose params do not decode
/// (the stream goes on).
pub struct EventStream<E> {
    raw: RawEvents,
    _event: PhantomData<fn() -> E>,
}

impl<E> EventStream<E> {
    pub(crate) fn new(raw: RawEvents) -> Self {
        EventStream {
            raw,
            _event: PhantomData,
        }
    }
}

impl<E: Event> Stream for EventStream<E> {
    type Item = Result<E>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<E>>> {
        Pin::new(&mut self.raw)
            .poll_next(cx)
            .map(|event| event.map(|event| event.parse::<E>()))
    }
}

impl<E> fmt::Debug for EventStream<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventStream")
            .field("raw", &self.raw)
            .finish()
    }
}

/// A session the browser attached (`Target.attachedToTarget`), ready to use.
///
/// With `waitForDebuggerOnStart` (see [`crate::protocol::target::SetAutoAttach::held`]) the
/// target runs nothing until [`AttachedTarget::resume`]: subscribe to its events and
/// enable what must see its first request (`Fetch.enable`...) on [`AttachedTarget::session`]
/// first.
#[derive(Debug, Clone)]
pub struct AttachedTarget {
    /// The new session.
    pub session: Session,
    /// The session the attach was announced on (`None`: the browser's own).
    pub parent: Option<SessionId>,
    /// The target.
    pub target_info: TargetInfo,
    /// Whether the target is held until [`AttachedTarget::resume`].
    pub waiting_for_debugger: bool,
}

impl AttachedTarget {
    /// Lets a held target run (`Runtime.runIfWaitingForDebugger` on its session).
    ///
    /// # Errors
    /// As any call.
    pub async fn resume(&self) -> Result<()> {
        self.session
            .call(&crate::protocol::runtime::RunIfWaitingForDebugger {})
            .await
            .map(|_| ())
    }
}

/// New child sessions, as [`AttachedTarget`]s. Yields `Err` for an announcement that does
/// not decode (the stream goes on).
pub struct AttachedTargets {
    raw: RawEvents,
    connection: Connection,
}

impl AttachedTargets {
    pub(crate) fn new(raw: RawEvents, connection: Connection) -> Self {
        AttachedTargets { raw, connection }
    }
}

impl Stream for AttachedTargets {
    type Item = Result<AttachedTarget>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        Pin::new(&mut this.raw).poll_next(cx).map(|event| {
            event.map(|event| {
                let attached: AttachedToTarget = event.parse()?;
                Ok(AttachedTarget {
                    session: this.connection.session(attached.session_id),
                    parent: event.session_id().cloned(),
                    target_info: attached.target_info,
                    waiting_for_debugger: attached.waiting_for_debugger,
                })
            })
        })
    }
}

impl fmt::Debug for AttachedTargets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AttachedTargets")
            .field("raw", &self.raw)
            .finish_non_exhaustive()
    }
}

/// Reports of incoming messages the connection dropped (garbage, a reply to an id no
/// call used, a message over the size limit...), and finally the reason the connection
/// closed, if it failed. Ends when the connection closes.
#[derive(Debug)]
pub struct Errors {
    rx: mpsc::Receiver<Error>,
}

impl Errors {
    pub(crate) fn new(rx: mpsc::Receiver<Error>) -> Self {
        Errors { rx }
    }
}

impl Stream for Errors {
    type Item = Error;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Error>> {
        self.rx.poll_recv(cx)
    }
}
