//! The crate's one error type: [`Error`], with a [`ErrorKind`] to match on.
//!
//! Messages are lowercase fragments that read after "failed to" and never contain a
//! credential: every address in them has gone through [`crate::redact::url`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// The source of an error, shared so that one failure can be handed to many waiters.
type Source = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// What went wrong with a DevTools call or connection.
///
/// Match on [`Error::kind`]; add context with [`Error::method`] (the command that failed,
/// when there is one).
#[derive(Clone, thiserror::Error)]
pub struct Error {
    kind: ErrorKind,
    method: Option<Arc<str>>,
    #[source]
    source: Option<Source>,
}

/// The kinds of [`Error`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The browser answered the command with an error.
    Protocol {
        /// The JSON-RPC error code (for example -32601 for an unknown method).
        code: i64,
        /// The browser's message.
        message: String,
    },
    /// The connection is closed (the browser exited, crashed or was killed, or the socket
    /// or pipe dropped, or [`crate::Connection::close`] was called). Every pending and later
    /// call fails with this at once.
    Closed,
    /// The session the call was sent on was detached (`Target.detachedFromTarget`).
    Detached,
    /// The target behind the session crashed (`Inspector.targetCrashed`) while the call was
    /// pending.
    TargetCrashed,
    /// No answer came within the call's timeout.
    Timeout {
        /// The timeout that ran out.
        after: Duration,
    },
    /// The transport failed to connect or to carry a message.
    Transport,
    /// A message or a result could not be decoded (malformed JSON, or JSON of the wrong
    /// shape). For an incoming message, only that message is lost.
    Decode,
    /// The browser sent a reply to an id no call ever used, or a message that is neither a
    /// reply nor an event. Only that message is lost.
    UnexpectedMessage,
    /// An incoming message was larger than [`crate::Config::max_message_size`] and was
    /// refused.
    MessageTooLarge {
        /// The message's size in bytes (at least this many, for a message cut off early).
        size: usize,
        /// The configured limit.
        limit: usize,
    },
    /// The address or feature is not supported (a `wss://` address without the `tls`
    /// feature, a scheme that is not ws, wss or http).
    Unsupported,
    /// The address is not a valid DevTools address.
    InvalidUrl,
    /// The browser process could not be started.
    Launch,
}

impl Error {
    /// A new error of this kind, without a source.
    pub(crate) fn new(kind: ErrorKind) -> Self {
        Error {
            kind,
            method: None,
            source: None,
        }
    }

    /// A new error of this kind caused by `source`.
    pub(crate) fn with_source(
        kind: ErrorKind,
        source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        Error {
            kind,
            method: None,
            source: Some(Arc::from(source.into())),
        }
    }

    /// The same error, saying which command it concerns.
    pub(crate) fn for_method(mut self, method: &str) -> Self {
        if self.method.is_none() {
            self.method = Some(Arc::from(method));
        }
        self
    }

    pub(crate) fn closed() -> Self {
        Error::new(ErrorKind::Closed)
    }

    pub(crate) fn decode(source: serde_json::Error) -> Self {
        Error::with_source(ErrorKind::Decode, source)
    }

    /// What kind of error this is.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The DevTools method of the call that failed, if the error belongs to a call.
    pub fn method(&self) -> Option<&str> {
        self.method.as_deref()
    }

    /// Whether this is [`ErrorKind::Closed`]: the connection is gone for good.
    pub fn is_closed(&self) -> bool {
        self.kind == ErrorKind::Closed
    }

    /// Whether this is [`ErrorKind::Timeout`].
    pub fn is_timeout(&self) -> bool {
        matches!(self.kind, ErrorKind::Timeout { .. })
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::Protocol { code, message } => {
                write!(f, "the browser answered with error {code}: {message}")
            }
            ErrorKind::Closed => f.write_str("the devtools connection is closed"),
            ErrorKind::Detached => f.write_str("the session was detached"),
            ErrorKind::TargetCrashed => f.write_str("the target crashed"),
            ErrorKind::Timeout { after } => {
                write!(f, "no answer within {} ms", after.as_millis())
            }
            ErrorKind::Transport => f.write_str("the devtools transport failed"),
            ErrorKind::Decode => f.write_str("could not decode a devtools message"),
            ErrorKind::UnexpectedMessage => f.write_str("unexpected devtools message"),
            ErrorKind::MessageTooLarge { size, limit } => write!(
                f,
                "refused a devtools message of {size} bytes (the limit is {limit})"
            ),
            ErrorKind::Unsupported => f.write_str("unsupported devtools address or feature"),
            ErrorKind::InvalidUrl => f.write_str("invalid devtools address"),
            ErrorKind::Launch => f.write_str("could not start the browser"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(method) = &self.method {
            write!(f, "{method}: ")?;
        }
        write!(f, "{}", self.kind)?;
        // The source's text is part of the message: thiserror's `#[source]` lets reporters
        // walk the chain, but plain `{}` logs should still say why.
        if let Some(source) = &self.source {
            write!(f, ": {source}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.kind)
            .field("method", &self.method)
            .field("source", &self.source.as_ref().map(ToString::to_string))
            .finish()
    }
}

/// A short, credential-free text used as the source of an error.
#[derive(Debug)]
pub(crate) struct Reason(pub(crate) String);

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Reason {}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
