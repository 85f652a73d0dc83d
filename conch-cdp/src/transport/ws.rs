//! The WebSocket transport: `ws://`, `wss://` (with the `tls` feature), or an `http://`
//! DevTools address resolved through `/json/version`.

use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::error::CapacityError;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use url::Url;

use super::{Incoming, Reader, Writer, http};
use crate::config::Config;
use crate::error::{Error, ErrorKind, Reason};
use crate::redact;

type Stream = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Connects to `address` (`ws://`, `wss://` or `http://`).
pub(crate) async fn connect(address: &str, config: &Config) -> Result<(Reader, Writer), Error> {
    let url = parse(address)?;
    let url = match url.scheme() {
        "ws" | "wss" => url,
        "http" => {
            let found = http::discover(&url).await?;
            let found = parse(&found)?;
            if !matches!(found.scheme(), "ws" | "wss") {
                return Err(Error::with_source(
                    ErrorKind::InvalidUrl,
                    Reason(format!(
                        "/json/version named {}, which is not a websocket address",
                        redact::url(found.as_str())
                    )),
                ));
            }
            found
        }
        other => {
            return Err(Error::with_source(
                ErrorKind::Unsupported,
                Reason(format!(
                    "the scheme {other}:// (use ws://, wss:// or http://)"
                )),
            ));
        }
    };
    let ws_config = WebSocketConfig::default()
        .max_message_size(Some(config.websocket_ceiling()))
        .max_frame_size(Some(config.websocket_ceiling()));
    let stream = handshake(&url, ws_config).await?;
    let (sink, stream) = stream.split();
    Ok((
        Reader::WebSocket(WsReader {
            stream,
            limit: config.max_message_size,
        }),
        Writer::WebSocket(WsWriter { sink }),
    ))
}

fn parse(address: &str) -> Result<Url, Error> {
    Url::parse(address).map_err(|error| {
        Error::with_source(
            ErrorKind::InvalidUrl,
            Reason(format!("{}: {error}", redact::url(address))),
        )
    })
}

#[cfg(not(feature = "tls"))]
async fn handshake(url: &Url, ws_config: WebSocketConfig) -> Result<Stream, Error> {
    if url.scheme() == "wss" {
        return Err(Error::with_source(
            ErrorKind::Unsupported,
            Reason("wss:// needs conch-cdp's `tls` feature".to_owned()),
        ));
    }
    let (stream, _response) =
        tokio_tungstenite::connect_async_with_config(url.as_str(), Some(ws_config), true)
            .await
            .map_err(|error| handshake_error(url, &error))?;
    Ok(stream)
}

#[cfg(feature = "tls")]
async fn handshake(url: &Url, ws_config: WebSocketConfig) -> Result<Stream, Error> {
    use std::sync::Arc;
    let connector = if url.scheme() == "wss" {
        // Our own provider: whatever else the process links, no global default is needed.
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|error| Error::with_source(ErrorKind::Transport, error))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Some(tokio_tungstenite::Connector::Rustls(Arc::new(tls)))
    } else {
        None
    };
    let (stream, _response) = tokio_tungstenite::connect_async_tls_with_config(
        url.as_str(),
        Some(ws_config),
        true,
        connector,
    )
    .await
    .map_err(|error| handshake_error(url, &error))?;
    Ok(stream)
}

/// A handshake failure, its text scrubbed of the address's secrets.
fn handshake_error(url: &Url, error: &tungstenite::Error) -> Error {
    let text = scrub(&error.to_string(), url);
    Error::with_source(
        ErrorKind::Transport,
        Reason(format!(
            "connecting to {}: {text}",
            redact::url(url.as_str())
        )),
    )
}

/// `text` with any piece of `url` that may be a secret replaced by `***`.
fn scrub(text: &str, url: &Url) -> String {
    let mut text = text.to_owned();
    let secrets = [url.query(), url.password(), Some(url.username())];
    for secret in secrets.into_iter().flatten() {
        if !secret.is_empty() {
            text = text.replace(secret, "***");
        }
    }
    text
}

/// The receiving half of a WebSocket.
#[derive(Debug)]
pub(crate) struct WsReader {
    stream: SplitStream<Stream>,
    limit: usize,
}

impl WsReader {
    /// The next message. Cancel-safe (`StreamExt::next` is).
    pub(crate) async fn recv(&mut self) -> Incoming {
        loop {
            let bytes = match self.stream.next().await {
                Some(Ok(Message::Text(text))) => text.into(),
                Some(Ok(Message::Binary(bytes))) => bytes,
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
                Some(Ok(Message::Close(_))) | None => return Incoming::End(None),
                Some(Err(tungstenite::Error::Capacity(CapacityError::MessageTooLong {
                    size,
                    ..
                }))) => {
                    // The frame cannot be skipped: the stream is lost.
                    return Incoming::End(Some(Error::new(ErrorKind::MessageTooLarge {
                        size,
                        limit: self.limit,
                    })));
                }
                Some(Err(error)) => {
                    return Incoming::End(Some(Error::with_source(ErrorKind::Transport, error)));
                }
            };
            if bytes.len() > self.limit {
                return Incoming::TooLarge(bytes.len());
            }
            return Incoming::Message(bytes);
        }
    }
}

/// The sending half of a WebSocket.
#[derive(Debug)]
pub(crate) struct WsWriter {
    sink: SplitSink<Stream, Message>,
}

impl WsWriter {
    pub(crate) async fn feed(&mut self, text: String) -> Result<(), Error> {
        self.sink
            .feed(Message::text(text))
            .await
            .map_err(|error| Error::with_source(ErrorKind::Transport, error))
    }

    pub(crate) async fn flush(&mut self) -> Result<(), Error> {
        self.sink
            .flush()
            .await
            .map_err(|error| Error::with_source(ErrorKind::Transport, error))
    }

    pub(crate) async fn close(&mut self) {
        let _ = self.sink.close().await;
    }
}
