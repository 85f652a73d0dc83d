//! The handles: [`Connection`] (one transport to one browser) and [`Session`] (one flat
//! session on it, or the browser's own). Both are cheap to clone and talk to the
//! connection's actor ([`crate::actor`]) over a channel.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot, watch};
use tracing::instrument::WithSubscriber;

use crate::actor::{self, Actor, Call, Request, SessionFilter, SubKey, Subscription};
use crate::config::Config;
use crate::error::{Error, ErrorKind, Result};
use crate::events::{AttachedTargets, Errors, EventStream, RawEvents};
use crate::protocol::target::{AttachToTarget, AttachedToTarget};
use crate::protocol::{Command, Event, SessionId, TargetId};
use crate::redact;
use crate::transport::{Reader, Writer};

/// A connection to one browser's DevTools, over a WebSocket or a pipe.
///
/// Cheap to clone; every clone is the same connection. The connection closes when the
/// browser goes away, when [`Connection::close`] is called, or when every handle (and every
/// stream) is dropped. Once closed, every pending and later call fails with
/// [`ErrorKind::Closed`] and every event stream ends.
#[derive(Clone)]
pub struct Connection {
    inner: Arc<Inner>,
}

struct Inner {
    actor: mpsc::UnboundedSender<Request>,
    next_id: AtomicU64,
    next_subscription: AtomicU64,
    closed: watch::Receiver<bool>,
    pending: Arc<AtomicUsize>,
    config: Config,
    /// Where it goes, credentials masked.
    endpoint: String,
}

impl Connection {
    /// Connects to a DevTools address with the default [`Config`]: `ws://…`, `wss://…`
    /// (with the `tls` feature) or `http://host:port`, whose `/json/version` names the
    /// browser's WebSocket.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidUrl`], [`ErrorKind::Unsupported`] (a `wss://` address without
    /// the `tls` feature, another scheme), [`ErrorKind::Transport`], or
    /// [`ErrorKind::Timeout`] after [`Config::connect_timeout`]. No message contains the
    /// address's credentials.
    pub async fn connect(address: &str) -> Result<Connection> {
        Connection::connect_with(address, Config::default()).await
    }

    /// [`Connection::connect`] with a [`Config`].
    ///
    /// # Errors
    /// As [`Connection::connect`].
    pub async fn connect_with(address: &str, config: Config) -> Result<Connection> {
        let endpoint = redact::url(address);
        tracing::debug!(target: "conch_cdp", %endpoint, "connecting");
        let connecting = crate::transport::ws::connect(address, &config);
        let (reader, writer) = tokio::time::timeout(config.connect_timeout, connecting)
            .await
            .map_err(|_| {
                Error::new(ErrorKind::Timeout {
                    after: config.connect_timeout,
                })
            })??;
        Ok(Connection::start(reader, writer, config, endpoint))
    }

    /// Starts `command` (a browser; its flags are the caller's) with
    /// `--remote-debugging-pipe` added, and connects to it through fds 3 and 4: no TCP port
    /// is opened (LAUNCH-20). The child is killed when its handle is dropped.
    ///
    /// # Errors
    /// [`ErrorKind::Launch`] when the process cannot be started.
    #[cfg(unix)]
    pub async fn launch(
        command: std::process::Command,
        config: Config,
    ) -> Result<(Connection, tokio::process::Child)> {
        let program = command.get_program().to_string_lossy().into_owned();
        let launch_error = |error: std::io::Error| {
            Error::with_source(
                ErrorKind::Launch,
                crate::error::Reason(format!("{program}: {error}")),
            )
        };
        let spawned = crate::unix::spawn_with_pipe(command).map_err(launch_error)?;
        let to_browser = tokio::net::unix::pipe::Sender::from_owned_fd(spawned.to_browser)
            .map_err(launch_error)?;
        let from_browser = tokio::net::unix::pipe::Receiver::from_owned_fd(spawned.from_browser)
            .map_err(launch_error)?;
        let reader = Reader::Pipe(crate::transport::pipe::PipeReader::new(
            from_browser,
            config.max_message_size,
        ));
        let writer = Writer::Pipe(crate::transport::pipe::PipeWriter::new(to_browser));
        let endpoint = format!("pipe to {program}");
        Ok((
            Connection::start(reader, writer, config, endpoint),
            spawned.child,
        ))
    }

    fn start(reader: Reader, writer: Writer, config: Config, endpoint: String) -> Connection {
        let (actor_tx, inbox) = mpsc::unbounded_channel();
        let (closed_tx, closed_rx) = watch::channel(false);
        let pending = Arc::new(AtomicUsize::new(0));
        let actor = Actor::new(config.max_message_size, pending.clone());
        // The actor traces into the subscriber of whoever connected.
        tokio::spawn(
            actor
                .run(inbox, reader, writer, closed_tx)
                .with_current_subscriber(),
        );
        Connection {
            inner: Arc::new(Inner {
                actor: actor_tx,
                next_id: AtomicU64::new(1),
                next_subscription: AtomicU64::new(1),
                closed: closed_rx,
                pending,
                config,
                endpoint,
            }),
        }
    }

    /// The browser's own session (messages without `sessionId`): `Browser.*`, `Target.*`.
    pub fn browser(&self) -> Session {
        Session {
            connection: self.clone(),
            id: None,
        }
    }

    /// A handle for an existing flat session.
    pub fn session(&self, id: SessionId) -> Session {
        Session {
            connection: self.clone(),
            id: Some(id),
        }
    }

    /// Attaches to a target with a flat session (`Target.attachToTarget {flatten: true}`).
    ///
    /// # Errors
    /// As any call.
    pub async fn attach(&self, target_id: TargetId) -> Result<Session> {
        let attached = self
            .browser()
            .call(&AttachToTarget::flat(target_id))
            .await?;
        Ok(self.session(attached.session_id))
    }

    /// Every session attached from now on, whichever session announced it (see
    /// [`Session::attached_targets`] for one session's children).
    pub fn attached_targets(&self) -> AttachedTargets {
        let raw = self.subscribe_raw(SessionFilter::Any, AttachedToTarget::METHOD);
        AttachedTargets::new(raw, self.clone())
    }

    /// Sends `command` on the browser's own session (see [`Session::call`]).
    ///
    /// # Errors
    /// As [`Session::call`].
    pub async fn call<C: Command>(&self, command: &C) -> Result<C::Response> {
        self.browser().call(command).await
    }

    /// Reports of incoming messages dropped from now on (see [`Errors`]).
    pub fn errors(&self) -> Errors {
        let (tx, rx) = mpsc::channel(self.inner.config.event_buffer.max(1));
        let _ = self.inner.actor.send(Request::WatchErrors(tx));
        Errors::new(rx)
    }

    /// Closes the connection: pending calls fail with [`ErrorKind::Closed`], streams end.
    /// A launched browser sees its pipe close and exits.
    pub fn close(&self) {
        let _ = self.inner.actor.send(Request::Close);
    }

    /// Whether the connection is closed.
    pub fn is_closed(&self) -> bool {
        *self.inner.closed.borrow() || self.inner.actor.is_closed()
    }

    /// Resolves once the connection is closed (the signal self-healing acts on).
    pub async fn closed(&self) {
        let mut closed = self.inner.closed.clone();
        // An error means the actor is gone, which is closed too.
        let _ = closed.wait_for(|closed| *closed).await;
    }

    /// How many calls are waiting for their answer (as the actor last counted them). A
    /// call whose waiter is dropped or timed out stops counting.
    pub fn pending_calls(&self) -> usize {
        self.inner.pending.load(Ordering::Relaxed)
    }

    /// The configuration it runs with.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    fn subscribe_raw(&self, session: SessionFilter, method: &str) -> RawEvents {
        // Bounded: a subscriber that falls behind is dropped, and its stream ends.
        let (tx, rx) = mpsc::channel(self.inner.config.event_buffer.max(1));
        let id = self.inner.next_subscription.fetch_add(1, Ordering::Relaxed);
        let key = SubKey {
            session,
            method: Box::from(method),
        };
        // If the actor is gone, `tx` is dropped with the request and the stream ends.
        let _ = self.inner.actor.send(Request::Subscribe(Subscription {
            key: key.clone(),
            id,
            tx,
        }));
        RawEvents::new(rx, self.inner.actor.clone(), key, id)
    }
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("endpoint", &self.inner.endpoint)
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

/// One session: the browser's own ([`Connection::browser`]) or a flat session on a target
/// ([`Connection::attach`], [`AttachedTarget`](crate::AttachedTarget)). Cheap to clone.
#[derive(Clone)]
pub struct Session {
    connection: Connection,
    id: Option<SessionId>,
}

/// A message as written to the browser.
#[derive(Serialize)]
struct Outgoing<'a, P> {
    id: u64,
    method: &'a str,
    #[serde(rename = "sessionId", skip_serializing_if = "Option::is_none")]
    session_id: Option<&'a SessionId>,
    params: P,
}

/// Forgets a call in the actor when its waiter goes away before the answer.
struct CancelOnDrop<'a> {
    actor: &'a mpsc::UnboundedSender<Request>,
    id: u64,
    armed: bool,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        if self.armed {
            let _ = self.actor.send(Request::Cancel(self.id));
        }
    }
}

impl Session {
    /// The session id (`None` for the browser's own session).
    pub fn id(&self) -> Option<&SessionId> {
        self.id.as_ref()
    }

    /// The connection it belongs to.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// Sends `command` and waits for its answer, at most [`Config::call_timeout`].
    ///
    /// # Errors
    /// [`ErrorKind::Protocol`] when the browser answers with an error,
    /// [`ErrorKind::Timeout`], [`ErrorKind::Closed`], [`ErrorKind::Detached`],
    /// [`ErrorKind::TargetCrashed`], or [`ErrorKind::Decode`] when the answer does not fit
    /// the response type.
    pub async fn call<C: Command>(&self, command: &C) -> Result<C::Response> {
        let timeout = self.connection.inner.config.call_timeout;
        self.call_with_timeout(command, timeout).await
    }

    /// [`Session::call`] with its own timeout.
    ///
    /// # Errors
    /// As [`Session::call`].
    pub async fn call_with_timeout<C: Command>(
        &self,
        command: &C,
        timeout: Duration,
    ) -> Result<C::Response> {
        let raw = self
            .request(Cow::Borrowed(C::METHOD), command, timeout)
            .await?;
        serde_json::from_str(raw.get()).map_err(|e| Error::decode(e).for_method(C::METHOD))
    }

    /// Sends any method with JSON params (an object, or null for none) and returns the
    /// JSON result: the escape hatch for commands without a typed struct.
    ///
    /// # Errors
    /// As [`Session::call`].
    pub async fn call_raw(
        &self,
        method: &str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value> {
        let timeout = self.connection.inner.config.call_timeout;
        self.call_raw_with_timeout(method, params, timeout).await
    }

    /// [`Session::call_raw`] with its own timeout.
    ///
    /// # Errors
    /// As [`Session::call`].
    pub async fn call_raw_with_timeout(
        &self,
        method: &str,
        params: serde_json::Value,
        timeout: Duration,
    ) -> Result<serde_json::Value> {
        let params = if params.is_null() {
            serde_json::Value::Object(serde_json::Map::new())
        } else {
            params
        };
        let raw = self
            .request(Cow::Owned(method.to_owned()), &params, timeout)
            .await?;
        serde_json::from_str(raw.get()).map_err(|e| Error::decode(e).for_method(method))
    }

    /// Events `E` of this session, from now on. Subscribe before sending the command that
    /// triggers them.
    pub fn subscribe<E: Event>(&self) -> EventStream<E> {
        EventStream::new(self.events(E::METHOD))
    }

    /// Events of `method` on this session, from now on, raw.
    pub fn events(&self, method: &str) -> RawEvents {
        self.connection
            .subscribe_raw(SessionFilter::Exact(self.id.clone()), method)
    }

    /// Sessions attached as children of this one (its pages when this is the browser's
    /// session; its frames and workers when it is a page's), from now on. Pair with
    /// `Target.setAutoAttach` ([`crate::protocol::target::SetAutoAttach::held`]).
    pub fn attached_targets(&self) -> AttachedTargets {
        AttachedTargets::new(
            self.events(AttachedToTarget::METHOD),
            self.connection.clone(),
        )
    }

    async fn request(
        &self,
        method: Cow<'static, str>,
        params: &impl Serialize,
        timeout: Duration,
    ) -> Result<Box<RawValue>> {
        let inner = &self.connection.inner;
        let id = inner.next_id.fetch_add(1, Ordering::Relaxed);
        let text = serde_json::to_string(&Outgoing {
            id,
            method: &method,
            session_id: self.id.as_ref(),
            params,
        })
        .map_err(|e| Error::decode(e).for_method(&method))?;
        actor::trace_outgoing(id, &method, self.id.as_ref(), params);
        let (reply_tx, reply_rx) = oneshot::channel();
        let call = Call {
            id,
            session: self.id.clone(),
            method: method.clone(),
            text,
            reply: reply_tx,
        };
        if inner.actor.send(Request::Call(call)).is_err() {
            return Err(Error::closed().for_method(&method));
        }
        let mut guard = CancelOnDrop {
            actor: &inner.actor,
            id,
            armed: true,
        };
        let outcome = tokio::time::timeout(timeout, reply_rx).await;
        match outcome {
            Ok(Ok(reply)) => {
                guard.armed = false;
                reply
            }
            Ok(Err(_)) => {
                guard.armed = false;
                Err(Error::closed().for_method(&method))
            }
            // The guard forgets the call in the actor.
            Err(_) => Err(Error::new(ErrorKind::Timeout { after: timeout }).for_method(&method)),
        }
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("connection", &self.connection)
            .finish()
    }
}
