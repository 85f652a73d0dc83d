//! The `Browser` domain: version and shutdown.

use serde::{Deserialize, Serialize};

use super::{Empty, command};

/// `Browser.getVersion`: the browser's product and protocol versions.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GetVersion {}
command!(GetVersion, "Browser.getVersion", GetVersionResponse);

/// The answer to [`GetVersion`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetVersionResponse {
    /// The protocol version, such as `"1.3"`.
    #[serde(default)]
    pub protocol_version: String,
    /// The product, such as `"HeadlessChrome/156.0.0.0"`.
    #[serde(default)]
    pub product: String,
    /// The product revision.
    #[serde(default)]
    pub revision: String,
    /// The default user agent.
    #[serde(default)]
    pub user_agent: String,
    /// The V8 version.
    #[serde(default)]
    pub js_version: String,
}

/// `Browser.close`: closes the browser gracefully.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Close {}
command!(Close, "Browser.close", Empty);
