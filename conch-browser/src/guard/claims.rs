//! The page's side of a proxy refusal: which tab's request the proxy refused (NET-10,
//! issue 12).
//!
//! The proxy sees connections, not tabs, so it logs a refusal with nobody's name on it.
//! Every page, frame and worker session has a [`watch`] on its own `Network` events; when
//! one of its requests comes back refused (a plain-http answer carrying the proxy's
//! `X-Conch-Blocked` marker or its `403 Blocked by Conch` status, a request or WebSocket
//! that failed), the session claims the
//! proxy's refusal of that host and port ([`GuardLog::claim`]). A page therefore only ever
//! claims a refusal of an address it asked for itself, and the conversation is told of
//! the refusals its own tabs claimed.
//!
//! Deliberately absent: any change to the page's requests, and any claim of a refusal the
//! CDP rules made (those already carry their session).

use std::collections::HashMap;
use std::sync::Arc;

use conch_cdp::protocol::SessionId;
use conch_cdp::{RawEvent, Session};
use futures_util::StreamExt;
use serde::Deserialize;

use super::log::GuardLog;

/// The marker header on the proxy's refusal page.
pub(crate) const MARKER: &str = "x-conch-blocked";

/// The reason phrase of the proxy's refusal (`403 Blocked by Conch`): the browser reports
/// no headers for some requests (a beacon's), but always the status line.
pub(crate) const REASON: &str = "Blocked by Conch";

/// How many requests in flight a watch remembers; beyond that it starts over (a request
/// it forgot can no longer claim a refusal, nothing worse).
const REMEMBERED: usize = 4096;

/// The error a CDP rule's refusal ends a request with: already logged with its session.
const BLOCKED_BY_CLIENT: &str = "net::ERR_BLOCKED_BY_CLIENT";

const METHODS: [&str; 6] = [
    "Network.requestWillBeSent",
    "Network.responseReceived",
    "Network.loadingFinished",
    "Network.loadingFailed",
    "Network.webSocketCreated",
    "Network.webSocketHandshakeResponseReceived",
];
const WEBSOCKET_CLOSED: &str = "Network.webSocketClosed";

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Sent {
    request_id: String,
    #[serde(default)]
    request: Option<Address>,
    /// A WebSocket's address (`webSocketCreated`).
    #[serde(default)]
    url: Option<String>,
}

#[derive(Deserialize)]
struct Address {
    url: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Answered {
    request_id: String,
    response: Answer,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Answer {
    url: String,
    #[serde(default)]
    status: u16,
    #[serde(default)]
    status_text: String,
    #[serde(default)]
    headers: serde_json::Map<String, serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Ended {
    request_id: String,
    #[serde(default)]
    error_text: Option<String>,
}

/// Starts following `session`'s requests, subscribed at once (so a held target's first
/// request is seen; send [`enable`] before resuming it). The future ends when the session
/// does.
pub(crate) fn watch(session: &Session, log: Arc<GuardLog>) -> impl Future<Output = ()> + use<> {
    let streams: Vec<_> = METHODS
        .iter()
        .chain(std::iter::once(&WEBSOCKET_CLOSED))
        .map(|method| session.events(method))
        .collect();
    let id = session.id().cloned();
    async move {
        let Some(id) = id else { return };
        let mut events = futures_util::stream::select_all(streams);
        let mut in_flight: HashMap<String, (String, u16)> = HashMap::new();
        while let Some(event) = events.next().await {
            seen(&event, &id, &log, &mut in_flight);
        }
    }
}

/// Turns the session's `Network` events on.
pub(crate) async fn enable(session: &Session) {
    if let Err(e) = session.call(&conch_cdp::protocol::network::Enable {}).await {
        tracing::debug!(target: "conch_browser::guard", error = %e, "no network events from a target");
    }
}

fn seen(
    event: &RawEvent,
    id: &SessionId,
    log: &GuardLog,
    in_flight: &mut HashMap<String, (String, u16)>,
) {
    match event.method() {
        "Network.requestWillBeSent" | "Network.webSocketCreated" => {
            let Ok(sent) = event.parse::<Sent>() else {
                return;
            };
            let url = sent.request.map(|r| r.url).or(sent.url);
            if let Some(place) = url.as_deref().and_then(host_port) {
                if in_flight.len() >= REMEMBERED {
                    in_flight.clear();
                }
                in_flight.insert(sent.request_id, place);
            }
        }
        "Network.responseReceived" => {
            let Ok(answered) = event.parse::<Answered>() else {
                return;
            };
            let response = &answered.response;
            let marked = response
                .headers
                .keys()
                .any(|k| k.eq_ignore_ascii_case(MARKER))
                || (response.status == 403 && response.status_text == REASON);
            if marked {
                in_flight.remove(&answered.request_id);
                if let Some((host, port)) = host_port(&answered.response.url) {
                    log.claim(id, &host, port);
                }
            }
        }
        "Network.loadingFailed" => {
            let Ok(ended) = event.parse::<Ended>() else {
                return;
            };
            let place = in_flight.remove(&ended.request_id);
            if ended.error_text.as_deref() == Some(BLOCKED_BY_CLIENT) {
                return;
            }
            if let Some((host, port)) = place {
                log.claim(id, &host, port);
            }
        }
        WEBSOCKET_CLOSED => {
            // Closed without a handshake: its tunnel was refused (or never answered).
            let Ok(ended) = event.parse::<Ended>() else {
                return;
            };
            if let Some((host, port)) = in_flight.remove(&ended.request_id) {
                log.claim(id, &host, port);
            }
        }
        // It went through: nothing to claim.
        _ => {
            if let Ok(ended) = event.parse::<Ended>() {
                in_flight.remove(&ended.request_id);
            }
        }
    }
}

/// The host and port a request went to, for addresses that go through the proxy.
fn host_port(address: &str) -> Option<(String, u16)> {
    let url = url::Url::parse(address).ok()?;
    if !matches!(url.scheme(), "http" | "https" | "ws" | "wss") {
        return None;
    }
    let host = super::log::canonical(url.host_str()?);
    Some((host, url.port_or_known_default()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_read_as_the_proxy_logs_them() {
        assert_eq!(host_port("https://[::1]:9/x"), Some(("::1".to_owned(), 9)));
        assert_eq!(
            host_port("ws://LocalHost./x"),
            Some(("localhost".to_owned(), 80))
        );
        assert_eq!(host_port("data:text/html,x"), None);
    }
}
