//! The pipe transport: NUL-terminated JSON messages, read on the browser's fd 4 and
//! written to its fd 3 (the child side is set up in [`crate::unix`]).

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufWriter};
use tokio::net::unix::pipe;
use tokio_tungstenite::tungstenite::Bytes;

use super::Incoming;
use crate::error::{Error, ErrorKind};

/// Compact the buffer once this many consumed bytes sit at its front.
const COMPACT_AT: usize = 1 << 20;
/// Read in chunks of at least this size.
const READ_CHUNK: usize = 64 * 1024;

/// Splits the browser's output into messages at NUL bytes.
#[derive(Debug)]
pub(crate) struct PipeReader {
    rx: pipe::Receiver,
    buf: Vec<u8>,
    /// Where the current message starts in `buf`.
    start: usize,
    /// How far `buf` has been searched for a NUL.
    scanned: usize,
    /// While skipping an oversized message: how many of its bytes were dropped so far.
    discarding: Option<usize>,
    limit: usize,
}

impl PipeReader {
    pub(crate) fn new(rx: pipe::Receiver, limit: usize) -> Self {
        PipeReader {
            rx,
            buf: Vec::with_capacity(READ_CHUNK),
            start: 0,
            scanned: 0,
            discarding: None,
            limit,
        }
    }

    /// The next message. Cancel-safe: all state lives in `self`, and the only await is
    /// `read_buf`, which reads nothing when cancelled.
    pub(crate) async fn recv(&mut self) -> Incoming {
        loop {
            if let Some(offset) = self.buf[self.scanned..].iter().position(|b| *b == 0) {
                let end = self.scanned + offset;
                let len = end - self.start;
                let item = match self.discarding.take() {
                    Some(dropped) => Incoming::TooLarge(dropped + len),
                    None if len > self.limit => Incoming::TooLarge(len),
                    None => Incoming::Message(Bytes::copy_from_slice(&self.buf[self.start..end])),
                };
                self.start = end + 1;
                self.scanned = self.start;
                self.compact();
                return item;
            }
            self.scanned = self.buf.len();
            let pending = self.buf.len() - self.start;
            if pending > self.limit {
                // Too large already: drop what we hold and skip to the next NUL.
                self.discarding = Some(self.discarding.unwrap_or(0) + pending);
                self.buf.clear();
                self.start = 0;
                self.scanned = 0;
            }
            if self.buf.capacity() - self.buf.len() < READ_CHUNK / 4 {
                self.buf.reserve(READ_CHUNK);
            }
            match self.rx.read_buf(&mut self.buf).await {
                Ok(0) => return Incoming::End(None),
                Ok(_) => {}
                Err(error) => {
                    return Incoming::End(Some(Error::with_source(ErrorKind::Transport, error)));
                }
            }
        }
    }

    fn compact(&mut self) {
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
            self.scanned = 0;
        } else if self.start >= COMPACT_AT {
            self.buf.drain(..self.start);
            self.scanned -= self.start;
            self.start = 0;
        }
    }
}

/// Writes NUL-terminated messages to the browser.
#[derive(Debug)]
pub(crate) struct PipeWriter {
    tx: BufWriter<pipe::Sender>,
}

impl PipeWriter {
    pub(crate) fn new(tx: pipe::Sender) -> Self {
        PipeWriter {
            tx: BufWriter::with_capacity(READ_CHUNK, tx),
        }
    }

    pub(crate) async fn feed(&mut self, text: String) -> Result<(), Error> {
        self.tx
            .write_all(text.as_bytes())
            .await
            .map_err(transport)?;
        self.tx.write_all(&[0]).await.map_err(transport)
    }

    pub(crate) async fn flush(&mut self) -> Result<(), Error> {
        self.tx.flush().await.map_err(transport)
    }

    pub(crate) async fn close(&mut self) {
        // The browser sees end-of-file on its fd 3 and shuts down.
        let _ = self.tx.shutdown().await;
    }
}

fn transport(error: std::io::Error) -> Error {
    Error::with_source(ErrorKind::Transport, error)
}
