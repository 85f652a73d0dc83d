//! The one error type: malformed input only. A rule that says no returns a
//! [`Refusal`](crate::Refusal) value instead, never an error.

/// Input this crate could not read: an address, a host, an `allowHosts` entry, a key
/// chord or a mode name. Its message reads after "failed to".
#[derive(Debug, thiserror::Error)]
#[error("{kind} {input:?}")]
pub struct Error {
    input: String,
    kind: ErrorKind,
    #[source]
    source: Option<url::ParseError>,
}

/// What could not be read.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    /// An address that is not a URL.
    #[error("parse the address")]
    Url,
    /// A host name or IP literal that the WHATWG host parser refuses.
    #[error("read the host")]
    Host,
    /// An address without a host (`about:blank`, `data:`) where one is needed.
    #[error("find a host in the address")]
    NoHost,
    /// An `allowHosts` entry that is not `host:port`.
    #[error("read the allowed host (expected host:port)")]
    AllowedHost,
    /// An `allowHosts` entry naming an address that is not loopback.
    #[error("allow a host that is not on this computer (allowHosts entries must be loopback)")]
    AllowedHostNotLoopback,
    /// A key chord such as `Control+Shift+K` that could not be read.
    #[error("read the keys")]
    Keys,
    /// A conversation mode other than Ask, Auto, Full trust or Plan only.
    #[error("read the mode")]
    Mode,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, input: &str) -> Self {
        Self {
            input: input.to_owned(),
            kind,
            source: None,
        }
    }

    pub(crate) fn with_source(kind: ErrorKind, input: &str, source: url::ParseError) -> Self {
        Self {
            input: input.to_owned(),
            kind,
            source: Some(source),
        }
    }

    /// What could not be read.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The input as it was given.
    pub fn input(&self) -> &str {
        &self.input
    }
}
