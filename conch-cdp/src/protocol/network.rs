//! The `Network` domain: the parts the project uses.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Empty, command};

/// `Network.enable`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Enable {}
command!(Enable, "Network.enable", Empty);

/// `Network.setBypassServiceWorker`: requests skip service workers (sent on every session
/// before it runs, so no request escapes interception).
#[derive(Debug, Clone, Serialize)]
pub struct SetBypassServiceWorker {
    /// Bypass or not.
    pub bypass: bool,
}
command!(
    SetBypassServiceWorker,
    "Network.setBypassServiceWorker",
    Empty
);

/// A request, as events describe it.
///
/// Its `Debug` shows the method and the address with credentials masked, never headers or
/// posted data.
#[derive(Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    /// The address (may hold credentials).
    pub url: String,
    /// The HTTP method.
    #[serde(default)]
    pub method: String,
    /// The headers (may hold cookies).
    #[serde(default)]
    pub headers: serde_json::Map<String, serde_json::Value>,
    /// Whether there is a body.
    #[serde(default)]
    pub has_post_data: Option<bool>,
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("url", &crate::redact::url(&self.url))
            .finish_non_exhaustive()
    }
}
