//! The two ways to a browser, behind one reader and one writer the connection actor owns:
//! a WebSocket ([`ws`], found through HTTP discovery by [`http`] when given `http://`)
//! and, on Unix, the `--remote-debugging-pipe` file descriptors ([`pipe`]).

use tokio_tungstenite::tungstenite::Bytes;

use crate::error::Error;

pub(crate) mod http;
#[cfg(unix)]
pub(crate) mod pipe;
pub(crate) mod ws;

/// What the reader yields.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// One whole message (JSON text, not yet parsed).
    Message(Bytes),
    /// A message over the size limit was skipped; the transport goes on.
    TooLarge(usize),
    /// The transport ended: `None` for an orderly end, or why it failed.
    End(Option<Error>),
}

/// The receiving half of a transport.
#[derive(Debug)]
pub(crate) enum Reader {
    WebSocket(ws::WsReader),
    #[cfg(unix)]
    Pipe(pipe::PipeReader),
}

impl Reader {
    /// The next incoming item. Cancel-safe: dropping the future loses nothing.
    pub(crate) async fn recv(&mut self) -> Incoming {
        match self {
            Reader::WebSocket(reader) => reader.recv().await,
            #[cfg(unix)]
            Reader::Pipe(reader) => reader.recv().await,
        }
    }
}

/// The sending half of a transport.
#[derive(Debug)]
pub(crate) enum Writer {
    WebSocket(ws::WsWriter),
    #[cfg(unix)]
    Pipe(pipe::PipeWriter),
}

impl Writer {
    /// Queues one message; [`Writer::flush`] sends what is queued.
    pub(crate) async fn feed(&mut self, text: String) -> Result<(), Error> {
        match self {
            Writer::WebSocket(writer) => writer.feed(text).await,
            #[cfg(unix)]
            Writer::Pipe(writer) => writer.feed(text).await,
        }
    }

    /// Sends everything queued.
    pub(crate) async fn flush(&mut self) -> Result<(), Error> {
        match self {
            Writer::WebSocket(writer) => writer.flush().await,
            #[cfg(unix)]
            Writer::Pipe(writer) => writer.flush().await,
        }
    }

    /// Ends the transport from this side.
    pub(crate) async fn close(&mut self) {
        match self {
            Writer::WebSocket(writer) => writer.close().await,
            #[cfg(unix)]
            Writer::Pipe(writer) => writer.close().await,
        }
    }
}
