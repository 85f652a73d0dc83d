//! The `Target` domain: targets, browser contexts and flat sessions.

use serde::{Deserialize, Serialize};

use super::{BrowserContextId, Empty, SessionId, TargetId, command, event, string_enum};

string_enum! {
    /// The type of a target.
    pub enum TargetType {
        /// A tab's page.
        Page = "page",
        /// An out-of-process frame.
        Iframe = "iframe",
        /// A dedicated worker.
        Worker = "worker",
        /// A shared worker.
        SharedWorker = "shared_worker",
        /// A service worker.
        ServiceWorker = "service_worker",
        /// The browser itself.
        Browser = "browser",
        /// A tab (with `Target.setAutoAttach` filters that include tabs).
        Tab = "tab",
        /// An extension's background page.
        BackgroundPage = "background_page",
        /// A worklet.
        Worklet = "worklet",
        /// A shared storage worklet.
        SharedStorageWorklet = "shared_storage_worklet",
        /// An auction worklet.
        AuctionWorklet = "auction_worklet",
        /// Something else the browser names "other".
        Unknown = "other",
    }
}

/// What the browser says about a target.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetInfo {
    /// The target's id.
    pub target_id: TargetId,
    /// The target's type.
    #[serde(rename = "type")]
    pub target_type: TargetType,
    /// The title (for pages).
    #[serde(default)]
    pub title: String,
    /// The URL (may hold credentials: trace it through [`crate::redact::url`]).
    #[serde(default)]
    pub url: String,
    /// Whether some client is attached.
    #[serde(default)]
    pub attached: bool,
    /// The target that opened this one, if any.
    #[serde(default)]
    pub opener_id: Option<TargetId>,
    /// The browser context it belongs to.
    #[serde(default)]
    pub browser_context_id: Option<BrowserContextId>,
    /// A subtype (for example `"prerender"`).
    #[serde(default)]
    pub subtype: Option<String>,
}

/// `Target.createTarget`: opens a new page.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTarget {
    /// The first URL (`about:blank` is usual).
    pub url: String,
    /// Frame width in DIP (headless only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// Frame height in DIP (headless only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    /// The browser context to open it in (default: the default context).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser_context_id: Option<BrowserContextId>,
    /// Open in a new window rather than a tab.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_window: Option<bool>,
    /// Open in the background.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background: Option<bool>,
}
command!(CreateTarget, "Target.createTarget", CreateTargetResponse);

impl CreateTarget {
    /// A new page at `url` in the default context.
    pub fn new(url: impl Into<String>) -> Self {
        CreateTarget {
            url: url.into(),
            ..CreateTarget::default()
        }
    }
}

/// The answer to [`CreateTarget`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTargetResponse {
    /// The new target's id.
    pub target_id: TargetId,
}

/// `Target.attachToTarget`: attaches to a target; with `flatten`, the answer's session id
/// goes on the messages themselves (see [`crate::Connection::attach`]).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachToTarget {
    /// The target.
    pub target_id: TargetId,
    /// Flat session (always wanted with conch-cdp).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flatten: Option<bool>,
}
command!(
    AttachToTarget,
    "Target.attachToTarget",
    AttachToTargetResponse
);

impl AttachToTarget {
    /// A flat attach to `target_id`.
    pub fn flat(target_id: TargetId) -> Self {
        AttachToTarget {
            target_id,
            flatten: Some(true),
        }
    }
}

/// The answer to [`AttachToTarget`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachToTargetResponse {
    /// The new session.
    pub session_id: SessionId,
}

/// `Target.detachFromTarget`: ends a session.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DetachFromTarget {
    /// The session to end.
    pub session_id: SessionId,
}
command!(DetachFromTarget, "Target.detachFromTarget", Empty);

/// One entry of a [`SetAutoAttach`] filter.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetFilterEntry {
    /// Exclude rather than include.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclude: Option<bool>,
    /// The target type it matches (all types when absent).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub target_type: Option<String>,
}

/// `Target.setAutoAttach`: attach to related targets (the browser's pages when sent on the
/// browser session; a page's frames and workers when sent on the page's session).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetAutoAttach {
    /// Attach automatically.
    pub auto_attach: bool,
    /// Hold each new target until `Runtime.runIfWaitingForDebugger` is sent on its session.
    pub wait_for_debugger_on_start: bool,
    /// Flat sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flatten: Option<bool>,
    /// Which target types to attach to (the browser's default when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter: Option<Vec<TargetFilterEntry>>,
}
command!(SetAutoAttach, "Target.setAutoAttach", Empty);

impl SetAutoAttach {
    /// Flat auto-attach that holds every new target until it is resumed (LAUNCH-19).
    pub fn held() -> Self {
        SetAutoAttach {
            auto_attach: true,
            wait_for_debugger_on_start: true,
            flatten: Some(true),
            filter: None,
        }
    }
}

/// `Target.setDiscoverTargets`: turns `targetCreated`/`targetDestroyed` events on or off.
#[derive(Debug, Clone, Serialize)]
pub struct SetDiscoverTargets {
    /// On or off.
    pub discover: bool,
}
command!(SetDiscoverTargets, "Target.setDiscoverTargets", Empty);

/// `Target.closeTarget`: closes a page.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CloseTarget {
    /// The target.
    pub target_id: TargetId,
}
command!(CloseTarget, "Target.closeTarget", CloseTargetResponse);

/// The answer to [`CloseTarget`].
#[derive(Debug, Clone, Deserialize)]
pub struct CloseTargetResponse {
    /// Deprecated by the protocol; absent on newer browsers.
    #[serde(default)]
    pub success: Option<bool>,
}

/// `Target.getTargets`: every target the browser has, with its title and address.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GetTargets {}
command!(GetTargets, "Target.getTargets", GetTargetsResponse);

/// The answer to [`GetTargets`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTargetsResponse {
    /// The targets.
    pub target_infos: Vec<TargetInfo>,
}

/// `Target.activateTarget`: brings a page to the front of its window (so it draws and takes
/// input again after a popup covered it).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivateTarget {
    /// The target.
    pub target_id: TargetId,
}
command!(ActivateTarget, "Target.activateTarget", super::Empty);

/// `Target.createBrowserContext`: a new isolated context (its own cookies and storage).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateBrowserContext {
    /// Dispose of the context when this client detaches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispose_on_detach: Option<bool>,
    /// A proxy for the context's requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy_server: Option<String>,
    /// Hosts that bypass that proxy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy_bypass_list: Option<String>,
}
command!(
    CreateBrowserContext,
    "Target.createBrowserContext",
    CreateBrowserContextResponse
);

/// The answer to [`CreateBrowserContext`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateBrowserContextResponse {
    /// The new context.
    pub browser_context_id: BrowserContextId,
}

/// `Target.disposeBrowserContext`: closes a context and all its pages.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DisposeBrowserContext {
    /// The context.
    pub browser_context_id: BrowserContextId,
}
command!(DisposeBrowserContext, "Target.disposeBrowserContext", Empty);

/// `Target.attachedToTarget`: a session was attached (delivered on the parent session).
/// [`crate::Session::attached_targets`] turns these into ready [`crate::AttachedTarget`]s.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachedToTarget {
    /// The new session.
    pub session_id: SessionId,
    /// The target.
    pub target_info: TargetInfo,
    /// Whether the target is held until `Runtime.runIfWaitingForDebugger`.
    #[serde(default)]
    pub waiting_for_debugger: bool,
}
event!(AttachedToTarget, "Target.attachedToTarget");

/// `Target.detachedFromTarget`: a session ended. conch-cdp ends that session's event
/// streams and fails its pending calls with [`crate::ErrorKind::Detached`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetachedFromTarget {
    /// The session that ended.
    pub session_id: SessionId,
    /// Its target (deprecated by the protocol, still sent).
    #[serde(default)]
    pub target_id: Option<TargetId>,
}
event!(DetachedFromTarget, "Target.detachedFromTarget");

/// `Target.targetCreated` (with discovery on).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetCreated {
    /// The new target.
    pub target_info: TargetInfo,
}
event!(TargetCreated, "Target.targetCreated");

/// `Target.targetDestroyed` (with discovery on).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetDestroyed {
    /// The target that is gone.
    pub target_id: TargetId,
}
event!(TargetDestroyed, "Target.targetDestroyed");

/// `Target.targetCrashed` (with discovery on).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetCrashed {
    /// The target that crashed.
    pub target_id: TargetId,
    /// The termination status.
    #[serde(default)]
    pub status: String,
    /// The termination error code.
    #[serde(default)]
    pub error_code: i64,
}
event!(TargetCrashed, "Target.targetCrashed");
