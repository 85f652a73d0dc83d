//! [`Config`]: the knobs of a connection (timeouts, message size limit, how far an event
//! subscriber may fall behind).

use std::time::Duration;

/// How a [`crate::Connection`] behaves. Start from [`Config::default`] and change what you
/// need with the `with_*` methods.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// How long a call waits for its answer unless the call names its own timeout
    /// (default 30 s).
    pub call_timeout: Duration,
    /// How long connecting (HTTP discovery plus the WebSocket handshake) may take
    /// (default 30 s).
    pub connect_timeout: Duration,
    /// The largest incoming message accepted, in bytes (default 256 MiB; Chrome itself
    /// accepts up to 100 MB inbound, and a full-page screenshot can be tens of MB). A larger
    /// message is refused with [`crate::ErrorKind::MessageTooLarge`] and the connection goes
    /// on. On a pipe the refused message is skipped without being held in memory. A
    /// WebSocket cannot skip part of a frame, so it reads messages up to twice this size
    /// whole before refusing them; a WebSocket message larger than that ends the connection.
    pub max_message_size: usize,
    /// How many events may wait for one subscriber that has not read them (default
    /// 8192). A subscriber that falls that far behind is dropped with a logged warning:
    /// its stream ends, so it can tell it missed events, and it never silently loses
    /// one, nor holds the connection's memory without bound.
    pub event_buffer: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            call_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(30),
            max_message_size: 256 << 20,
            event_buffer: 8192,
        }
    }
}

impl Config {
    /// Sets [`Config::call_timeout`].
    #[must_use]
    pub fn with_call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Sets [`Config::connect_timeout`].
    #[must_use]
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets [`Config::max_message_size`].
    #[must_use]
    pub fn with_max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }

    /// Sets [`Config::event_buffer`] (at least 1).
    #[must_use]
    pub fn with_event_buffer(mut self, events: usize) -> Self {
        self.event_buffer = events.max(1);
        self
    }

    /// The hard limit given to the WebSocket layer: past it the stream cannot go on.
    pub(crate) fn websocket_ceiling(&self) -> usize {
        self.max_message_size.saturating_mul(2)
    }
}
