//! The `Fetch` domain: request interception (the network guard's hook).

use serde::{Deserialize, Serialize};

use super::{Empty, FrameId, command, event, network, string_enum, string_id};

string_id!(
    /// A paused request's id (`Fetch.RequestId`).
    RequestId
);

string_enum! {
    /// When a request is paused.
    pub enum RequestStage {
        /// Before the request is sent.
        Request = "Request",
        /// After the response headers arrive.
        Response = "Response",
    }
}

/// Which requests [`Enable`] pauses.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestPattern {
    /// A wildcard address pattern (`"*"` for all).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url_pattern: Option<String>,
    /// Only this resource type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_type: Option<String>,
    /// The stage (request when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_stage: Option<RequestStage>,
}

/// `Fetch.enable`: pause matching requests on this session ([`RequestPaused`]).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Enable {
    /// The patterns (every request when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patterns: Option<Vec<RequestPattern>>,
    /// Also pause on authentication challenges.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handle_auth_requests: Option<bool>,
}
command!(Enable, "Fetch.enable", Empty);

/// `Fetch.disable`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Disable {}
command!(Disable, "Fetch.disable", Empty);

/// A header for [`ContinueRequest`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HeaderEntry {
    /// The name.
    pub name: String,
    /// The value.
    pub value: String,
}

/// `Fetch.continueRequest`: lets a paused request go, maybe changed.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContinueRequest {
    /// The paused request.
    pub request_id: RequestId,
    /// A new address (same scheme only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A new method.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// A new body, base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub post_data: Option<String>,
    /// New headers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headers: Option<Vec<HeaderEntry>>,
}
command!(ContinueRequest, "Fetch.continueRequest", Empty);

impl ContinueRequest {
    /// Continue `request_id` unchanged.
    pub fn new(request_id: RequestId) -> Self {
        ContinueRequest {
            request_id,
            url: None,
            method: None,
            post_data: None,
            headers: None,
        }
    }
}

string_enum! {
    /// Why a request failed (`Network.ErrorReason`).
    pub enum ErrorReason {
        /// Generic failure.
        Failed = "Failed",
        /// Aborted.
        Aborted = "Aborted",
        /// Timed out.
        TimedOut = "TimedOut",
        /// Access denied.
        AccessDenied = "AccessDenied",
        /// Connection closed.
        ConnectionClosed = "ConnectionClosed",
        /// Connection reset.
        ConnectionReset = "ConnectionReset",
        /// Connection refused.
        ConnectionRefused = "ConnectionRefused",
        /// Connection aborted.
        ConnectionAborted = "ConnectionAborted",
        /// Connection failed.
        ConnectionFailed = "ConnectionFailed",
        /// Name not resolved.
        NameNotResolved = "NameNotResolved",
        /// Internet disconnected.
        InternetDisconnected = "InternetDisconnected",
        /// Address unreachable.
        AddressUnreachable = "AddressUnreachable",
        /// Blocked by the client (what a guard refusal should use).
        BlockedByClient = "BlockedByClient",
        /// Blocked by the response.
        BlockedByResponse = "BlockedByResponse",
    }
}

/// `Fetch.failRequest`: fails a paused request.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailRequest {
    /// The paused request.
    pub request_id: RequestId,
    /// Why.
    pub error_reason: ErrorReason,
}
command!(FailRequest, "Fetch.failRequest", Empty);

/// `Fetch.requestPaused`: a request waits for [`ContinueRequest`] or [`FailRequest`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestPaused {
    /// The paused request's id.
    pub request_id: RequestId,
    /// The request.
    pub request: network::Request,
    /// The frame that made it.
    pub frame_id: FrameId,
    /// The resource type (`"Document"`, `"Script"`...).
    #[serde(default)]
    pub resource_type: String,
    /// At the response stage: the status code.
    #[serde(default)]
    pub response_status_code: Option<i64>,
    /// At the response stage: the network error.
    #[serde(default)]
    pub response_error_reason: Option<String>,
    /// The matching `Network` request id, if the Network domain is on.
    #[serde(default)]
    pub network_id: Option<String>,
}
event!(RequestPaused, "Fetch.requestPaused");
