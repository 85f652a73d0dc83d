//! The guard's CDP layer: rules installed on every page, frame, popup and worker while the
//! browser holds it (wait-for-debugger-on-start), before its first request (LAUNCH-19,
//! NET-2, NET-7, NET-8).
//!
//! On each held target, [`install`]:
//! - pauses its document requests (`Fetch`, resource type `Document`) and cancels those to
//!   schemes a page may not navigate to (`navigation_verdict(.., NavigationBy::Page)`,
//!   NET-7); where no proxy stands in front (own Chrome, cloud, a DevTools address), it
//!   pauses every request instead and judges each address with `verdict_for_url`;
//! - makes `navigator.serviceWorker.register` reject in every new document (NET-2);
//! - auto-attaches, held, to the target's own children (frames, workers), which come back
//!   through the runtime to this same function;
//! - never lets a service worker run: its target stays held and is logged (NET-2).
//!
//! The runtime then resumes the target. An out-of-process frame's own document request is
//! paused on its parent's session, so it is judged there.
//!
//! Deliberately absent: any judgement of addresses when the proxy is in front (the proxy
//! sees the address actually connected to; this layer could only see names), and any
//! change to what a request carries.

use std::sync::Arc;

use conch_cdp::protocol::fetch::{
    ContinueRequest, Enable as FetchEnable, ErrorReason, FailRequest, RequestPattern, RequestPaused,
};
use conch_cdp::protocol::target::{SetAutoAttach, TargetType};
use conch_cdp::{AttachedTarget, EventStream, Session};
use conch_policy::{NavigationBy, NetSettings, Verdict, navigation_verdict, verdict_for_url};
use futures_util::StreamExt;
use url::Url;

use super::log::{GuardLog, Layer};

/// Makes service worker registration fail in every document (NET-2, AMB-1). Run before any
/// of the page's own script.
const NO_SERVICE_WORKER: &str = r"(() => {
  try {
    const container = globalThis.navigator && navigator.serviceWorker;
    if (!container) return;
    const proto = Object.getPrototypeOf(container);
    const refuse = function register() {
      return Promise.reject(new DOMException('Service workers are blocked on pages Conch opens.', 'SecurityError'));
    };
    Object.defineProperty(proto, 'register', { value: refuse, writable: false, configurable: false });
  } catch (_) {}
})();";

/// What the CDP layer enforces.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    /// Judge every request's address here, because no proxy stands in front. `None` when
    /// the proxy judges.
    pub(crate) check_urls: Option<Arc<NetSettings>>,
    pub(crate) log: Arc<GuardLog>,
}

/// What to do with a target once its rules are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum After {
    /// Let it run.
    Resume,
    /// Keep it held for good (a service worker).
    Hold,
}

/// Installs the rules on a held target. Failures of single commands are tolerated (a target
/// type may lack a domain); the caller resumes when told to.
pub(crate) async fn install(target: &AttachedTarget, rules: &Rules) -> After {
    let session = &target.session;
    match target.target_info.target_type {
        TargetType::ServiceWorker => {
            let (host, port) = host_port(&target.target_info.url);
            rules.log.record(&host, port, "service-worker", Layer::Cdp);
            return After::Hold;
        }
        TargetType::Page | TargetType::Iframe => {
            watch_requests(session, rules).await;
            // Sent, not awaited: a held popup's renderer answers only once it runs, and
            // the script is queued ahead of anything the page does.
            let page = session.clone();
            tokio::spawn(async move {
                let _ = page
                    .call_raw(
                        "Page.addScriptToEvaluateOnNewDocument",
                        serde_json::json!({ "source": NO_SERVICE_WORKER, "runImmediately": true }),
                    )
                    .await;
            });
        }
        TargetType::Worker | TargetType::SharedWorker => {
            if rules.check_urls.is_some() {
                watch_requests(session, rules).await;
            }
        }
        _ => return After::Resume,
    }
    let _ = session.call(&SetAutoAttach::held()).await;
    After::Resume
}

/// Pauses the target's requests and judges each one: documents only when the proxy
/// judges addresses, every request otherwise.
async fn watch_requests(session: &Session, rules: &Rules) {
    // Subscribed before enabling, so the first pause cannot slip past.
    let paused = session.subscribe::<RequestPaused>();
    let pattern = RequestPattern {
        url_pattern: Some("*".to_owned()),
        resource_type: rules.check_urls.is_none().then(|| "Document".to_owned()),
        ..RequestPattern::default()
    };
    let enable = FetchEnable {
        patterns: Some(vec![pattern]),
        handle_auth_requests: None,
    };
    if session.call(&enable).await.is_ok() {
        tokio::spawn(judge_requests(session.clone(), paused, rules.clone()));
    }
}

async fn judge_requests(session: Session, mut paused: EventStream<RequestPaused>, rules: Rules) {
    while let Some(event) = paused.next().await {
        let Ok(event) = event else { continue };
        let verdict = judge(&event, &rules);
        let session = session.clone();
        // Answered off the loop, so one slow answer does not hold the others.
        tokio::spawn(async move {
            match verdict {
                None => {
                    let _ = session.call(&ContinueRequest::new(event.request_id)).await;
                }
                Some(_) => {
                    let _ = session
                        .call(&FailRequest {
                            request_id: event.request_id,
                            error_reason: ErrorReason::BlockedByClient,
                        })
                        .await;
                }
            }
        });
    }
}

/// `None` to let the request go, or the refusal code (already logged).
fn judge(event: &RequestPaused, rules: &Rules) -> Option<&'static str> {
    let Ok(url) = Url::parse(&event.request.url) else {
        rules.log.record("", 0, "unreadable-address", Layer::Cdp);
        return Some("unreadable-address");
    };
    let mut verdict = Verdict::Allow;
    if event.resource_type == "Document" {
        verdict = navigation_verdict(&url, NavigationBy::Page);
    }
    if verdict.is_allowed()
        && let Some(net) = &rules.check_urls
    {
        verdict = verdict_for_url(&url, net);
    }
    let refusal = verdict.refusal()?;
    let code = refusal.code().as_str();
    let (host, port) = match url.host_str() {
        Some(host) => (
            host.trim_matches(['[', ']']).to_owned(),
            url.port_or_known_default().unwrap_or(0),
        ),
        None => (format!("{}:", url.scheme()), 0),
    };
    rules.log.record(&host, port, code, Layer::Cdp);
    Some(code)
}

fn host_port(address: &str) -> (String, u16) {
    match Url::parse(address) {
        Ok(url) => (
            url.host_str().unwrap_or_default().to_owned(),
            url.port_or_known_default().unwrap_or(0),
        ),
        Err(_) => (String::new(), 0),
    }
}
