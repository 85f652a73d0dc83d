//! The guard's CDP layer: rules installed on every page, frame, popup and worker while the
//! browser holds it (wait-for-debugger-on-start), before its first request (LAUNCH-19,
//! NET-2, NET-7, NET-8).
//!
//! On each held target, [`install`]:
//! - pauses its document requests (`Fetch`, resource type `Document`) and cancels those to
//!   schemes a page may not navigate to (`navigation_verdict(.., NavigationBy::Page)`,
//!   NET-7); where no proxy stands in front (own Chrome, cloud, a DevTools address), it
//!   pauses every request instead and judges each address with `verdict_for_url`, and a
//!   host name by the addresses the guard's resolver gives it (`verdict_for_resolved_url`,
//!   reused for 30 s; NET-3);
//! - where no proxy stands in front, replaces `WebSocket` (`WebSocketStream`,
//!   `WebTransport`) in every new document and every held worker, before their own
//!   script, by one that asks these rules first (`websocket.js`): `Fetch` cannot pause a
//!   WebSocket handshake, and `Network.setBlockedURLs` does not block one either (checked
//!   against Chromium 148). Its question is a request to `/.conch-guard/websocket` on the
//!   page's own origin (or `conch-guard.invalid`) that is
//!   answered here, with the verdict a request to that address gets, and never sent;
//! - makes `navigator.serviceWorker.register` reject in every new document (NET-2);
//! - auto-attaches, held, to the target's own children (frames, workers), which come back
//!   through the runtime to this same function (a dedicated worker's requests are paused
//!   on its owner's session: it has no `Fetch` of its own);
//! - never lets a service worker run: its target stays held and is logged (NET-2).
//!
//! It fails closed: when the browser refuses a rule (`Fetch.enable`, the auto-attach to
//! children), or the target's type is one it does not know, the target is never resumed
//! (a page is closed) and the refusal is logged as [`UNGUARDED`]. The browser's own UI
//! (`browser_ui` targets) is not a page and gets no rules. A page whose
//! service-worker shim the browser refuses is closed once the refusal arrives.
//!
//! The runtime then resumes the target. An out-of-process frame's own document request is
//! paused on its parent's session, so it is judged there.
//!
//! A blank page ([`Rules::stand_blank`]: one the runtime opens only to stand on an origin
//! and reach that origin's local storage, ERR-3, ERR-11) is judged the same way, but a
//! document request the guard allows is answered here with an empty document and never
//! sent, and every other request of it is refused: nothing of it reaches the network.
//!
//! Deliberately absent: any judgement of addresses when the proxy is in front (the proxy
//! sees the address actually connected to; this layer could only see names), and any
//! change to what a request carries.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use conch_cdp::protocol::SessionId;
use conch_cdp::protocol::fetch::{
    ContinueRequest, Enable as FetchEnable, ErrorReason, FailRequest, RequestPattern, RequestPaused,
};
use conch_cdp::protocol::target::{CloseTarget, SetAutoAttach, TargetType};
use conch_cdp::{AttachedTarget, ErrorKind, EventStream, Session};
use conch_policy::{
    NavigationBy, NetSettings, Verdict, navigation_verdict, verdict_for_resolved_url,
    verdict_for_url,
};
use futures_util::StreamExt;
use url::Url;

use super::log::GuardLog;
use super::resolve::Resolve;
use crate::page::script;

/// The refusal code logged for a target kept from running because its rules are not in.
pub(crate) const UNGUARDED: &str = "unguarded-target";

/// The target type of the browser's own UI.
const BROWSER_UI: &str = "browser_ui";

/// Makes service worker registration fail in every document (NET-2, AMB-1). Run before any
/// of the page's own script.
const NO_SERVICE_WORKER: &str = script::body(include_str!("rules/no_service_worker.js"));

/// Replaces `WebSocket` (and `WebSocketStream`, `WebTransport`) in every document and
/// worker by one that asks at [`JUDGE_PATH`] first, where no proxy stands in front (AMB-1).
const WEBSOCKET_GUARD: &str = script::body(include_str!("rules/websocket.js"));

/// Where [`WEBSOCKET_GUARD`] asks: this path on the page's own origin (so a page policy
/// that lets the page reach itself lets it ask), or on `https://conch-guard.invalid` for a
/// page without one. Its requests are answered by the rules themselves (204 for an allowed
/// address, 403 otherwise) and never leave the browser.
const JUDGE_PATH: &str = "/.conch-guard/websocket";

/// How long a name's addresses, as the guard's resolver gave them, are reused.
const NAME_TTL: Duration = Duration::from_secs(30);

/// Names resolved lately: each with when, and its addresses.
pub(crate) type Names = Arc<Mutex<HashMap<String, (Instant, Vec<IpAddr>)>>>;

/// What the CDP layer enforces.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    /// Judge every request's address here, because no proxy stands in front. `None` when
    /// the proxy judges.
    pub(crate) check_urls: Option<Arc<NetSettings>>,
    /// With `check_urls`: how a request's host name is resolved before it may continue
    /// (NET-3), so a name that resolves to a private address is refused here too.
    pub(crate) resolver: Option<Arc<dyn Resolve>>,
    /// Names resolved lately, with when ([`NAME_TTL`]). Shared by every copy of the rules.
    pub(crate) names: Names,
    pub(crate) log: Arc<GuardLog>,
    /// The sessions of blank pages: their allowed documents are answered here, empty, and
    /// never sent (see the module docs). Shared by every copy of the rules of a browser.
    pub(crate) blank: Arc<Mutex<HashSet<SessionId>>>,
    /// Tests: ask for `Fetch.enable` in a form the browser refuses, so a real browser
    /// fails to install a rule.
    #[cfg(test)]
    pub(crate) break_fetch: bool,
}

impl Rules {
    /// From now on, page `session` only stands on origins: a document it asks for that the
    /// guard allows is answered with an empty one, never sent, and nothing else of it
    /// leaves (ERR-3, ERR-22). [`Rules::forget_blank`] ends it.
    pub(crate) fn stand_blank(&self, session: &SessionId) {
        self.blanks().insert(session.clone());
    }

    /// `session` is no longer a blank page (it closed).
    pub(crate) fn forget_blank(&self, session: &SessionId) {
        self.blanks().remove(session);
    }

    fn is_blank(&self, session: Option<&SessionId>) -> bool {
        session.is_some_and(|s| self.blanks().contains(s))
    }

    fn blanks(&self) -> std::sync::MutexGuard<'_, HashSet<SessionId>> {
        self.blank.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The empty document a blank page gets for every origin it stands on: nothing to load,
/// and a policy that would refuse anything it asked for.
const BLANK_DOCUMENT: &str = "<!doctype html><title></title>";

/// What to do with a target once its rules are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum After {
    /// Let it run.
    Resume,
    /// Keep it held for good (a service worker).
    Hold,
    /// Never let it run: its rules are not in (already logged, and a page closed).
    Refuse,
}

/// Why a target's rules are not in.
#[derive(Debug, thiserror::Error)]
enum NotGuarded {
    /// The browser refused a command the rules need.
    #[error("the browser refused {method} on the target")]
    Refused {
        method: &'static str,
        #[source]
        source: conch_cdp::Error,
    },
    /// A target type the rules do not cover.
    #[error("the guard has no rules for targets of type {0:?}")]
    UnknownType(String),
}

/// Installs the rules on a held target and says what to do with it. It fails closed: a
/// rule the browser refuses, or a target type without rules, gives [`After::Refuse`],
/// logged, and a page is closed.
pub(crate) async fn install(target: &AttachedTarget, rules: &Rules) -> After {
    match try_install(target, rules).await {
        Ok(after) => after,
        // The target went away meanwhile (a frame removed, a page closed): nothing runs.
        Err(NotGuarded::Refused { source, .. })
            if matches!(
                source.kind(),
                ErrorKind::Detached | ErrorKind::Closed | ErrorKind::TargetCrashed
            ) =>
        {
            After::Refuse
        }
        Err(why) => {
            keep_from_running(target, rules, &why).await;
            After::Refuse
        }
    }
}

async fn try_install(target: &AttachedTarget, rules: &Rules) -> Result<After, NotGuarded> {
    let session = &target.session;
    match &target.target_info.target_type {
        TargetType::ServiceWorker => {
            let (host, port) = host_port(&target.target_info.url);
            let by = session.id();
            rules.log.record_for(by, &host, port, "service-worker");
            return Ok(After::Hold);
        }
        TargetType::Page | TargetType::Iframe => {
            watch_requests(session, rules).await?;
            // Sent, not awaited: a held popup's renderer answers only once it runs, and
            // the script is queued ahead of anything the page does. Should the browser
            // refuse it, the page is closed then.
            let source = match rules.check_urls {
                Some(_) => format!("{NO_SERVICE_WORKER}\n{WEBSOCKET_GUARD}"),
                None => NO_SERVICE_WORKER.to_owned(),
            };
            let target = target.clone();
            let rules = rules.clone();
            tokio::spawn(async move {
                let shim = target
                    .session
                    .call_raw(
                        "Page.addScriptToEvaluateOnNewDocument",
                        serde_json::json!({ "source": source, "runImmediately": true }),
                    )
                    .await;
                if let Err(source) = shim
                    && matches!(
                        source.kind(),
                        ErrorKind::Protocol { .. } | ErrorKind::Timeout { .. }
                    )
                {
                    let why = NotGuarded::Refused {
                        method: "Page.addScriptToEvaluateOnNewDocument",
                        source,
                    };
                    keep_from_running(&target, &rules, &why).await;
                }
            });
        }
        // A dedicated worker has no `Fetch` domain of its own: its requests are paused on
        // its owner's session, which judges them.
        TargetType::Worker => {
            if rules.check_urls.is_some() {
                guard_sockets(session).await?;
            }
        }
        TargetType::SharedWorker => {
            if rules.check_urls.is_some() {
                watch_requests(session, rules).await?;
                guard_sockets(session).await?;
            }
        }
        // The browser's own UI (pages it hosts itself): no page can reach or steer it,
        // and it was never a page Conch opened.
        TargetType::Other(kind) if kind == BROWSER_UI => return Ok(After::Resume),
        other => return Err(NotGuarded::UnknownType(other.as_str().to_owned())),
    }
    // Its children arrive held too, and come back here.
    session
        .call(&SetAutoAttach::held())
        .await
        .map_err(|source| NotGuarded::Refused {
            method: "Target.setAutoAttach",
            source,
        })?;
    Ok(After::Resume)
}

/// Puts the WebSocket guard into a held worker before its own script runs (no proxy in
/// front, AMB-1). A worker it cannot be put into never runs.
async fn guard_sockets(session: &Session) -> Result<(), NotGuarded> {
    let answer = session
        .call_raw(
            "Runtime.evaluate",
            serde_json::json!({ "expression": WEBSOCKET_GUARD, "silent": true }),
        )
        .await
        .map_err(|source| NotGuarded::Refused {
            method: "Runtime.evaluate",
            source,
        })?;
    if answer.get("exceptionDetails").is_some() {
        tracing::warn!(target: "conch_browser::guard", "the WebSocket guard failed in a worker");
    }
    Ok(())
}

/// Logs the refusal of a target whose rules are not in, and closes it if it is a page
/// (other targets stay held: they never run).
async fn keep_from_running(target: &AttachedTarget, rules: &Rules, why: &NotGuarded) {
    let info = &target.target_info;
    let (host, port) = host_port(&info.url);
    rules
        .log
        .record_for(target.session.id(), &host, port, UNGUARDED);
    tracing::warn!(
        target: "conch_browser::guard",
        kind = info.target_type.as_str(),
        error = %why,
        "a target was kept from running: its guard rules are not in"
    );
    if info.target_type == TargetType::Page {
        let close = CloseTarget {
            target_id: info.target_id.clone(),
        };
        let _ = target.session.connection().browser().call(&close).await;
    }
}

/// Pauses the target's requests and judges each one: documents only when the proxy
/// judges addresses, every request otherwise.
async fn watch_requests(session: &Session, rules: &Rules) -> Result<(), NotGuarded> {
    // Subscribed before enabling, so the first pause cannot slip past.
    let paused = session.subscribe::<RequestPaused>();
    let resource_type = rules.check_urls.is_none().then(|| "Document".to_owned());
    #[cfg(test)]
    let resource_type = match rules.break_fetch {
        true => Some("NoSuchResourceType".to_owned()),
        false => resource_type,
    };
    let pattern = RequestPattern {
        url_pattern: Some("*".to_owned()),
        resource_type,
        ..RequestPattern::default()
    };
    let enable = FetchEnable {
        patterns: Some(vec![pattern]),
        handle_auth_requests: None,
    };
    session
        .call(&enable)
        .await
        .map_err(|source| NotGuarded::Refused {
            method: "Fetch.enable",
            source,
        })?;
    tokio::spawn(judge_requests(session.clone(), paused, rules.clone()));
    Ok(())
}

async fn judge_requests(session: Session, mut paused: EventStream<RequestPaused>, rules: Rules) {
    while let Some(event) = paused.next().await {
        let Ok(event) = event else { continue };
        let blank = rules.is_blank(session.id());
        let session = session.clone();
        let rules = rules.clone();
        // Judged and answered off the loop, so one slow answer (a name to resolve) does not
        // hold the others.
        tokio::spawn(async move {
            if !blank && let Some(asked) = question(&event, &rules) {
                let allowed = judge_url(&asked, &event, &rules, session.id())
                    .await
                    .is_none();
                answer_question(&session, event.request_id, allowed).await;
                return;
            }
            let verdict = judge(&event, &rules, session.id()).await;
            match verdict {
                None if blank && event.resource_type == "Document" => {
                    fulfill_blank(&session, event.request_id).await;
                }
                None if !blank => {
                    let _ = session.call(&ContinueRequest::new(event.request_id)).await;
                }
                _ => {
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

/// The address a [`WEBSOCKET_GUARD`] asks about, if `event` is its question.
fn question(event: &RequestPaused, rules: &Rules) -> Option<Url> {
    rules.check_urls.as_ref()?;
    let url = Url::parse(&event.request.url).ok()?;
    if !matches!(url.scheme(), "http" | "https") || url.path() != JUDGE_PATH {
        return None;
    }
    let to = url.query_pairs().find(|(k, _)| k == "to")?.1.into_owned();
    // An unreadable address is judged as such (refused).
    Some(Url::parse(&to).unwrap_or_else(|_| Url::parse("conch-unreadable:").expect("a URL")))
}

/// Answers a WebSocket guard's question: 204 lets its socket open, 403 refuses it.
async fn answer_question(
    session: &Session,
    request_id: conch_cdp::protocol::fetch::RequestId,
    allowed: bool,
) {
    let answer = session
        .call_raw(
            "Fetch.fulfillRequest",
            serde_json::json!({
                "requestId": request_id,
                "responseCode": if allowed { 204 } else { 403 },
                "responseHeaders": [
                    { "name": "Access-Control-Allow-Origin", "value": "*" },
                    { "name": "Cache-Control", "value": "no-store" },
                ],
                "body": "",
            }),
        )
        .await;
    if let Err(e) = answer {
        tracing::debug!(target: "conch_browser::guard", error = %e, "a WebSocket question could not be answered");
    }
}

/// Answers a blank page's document request with [`BLANK_DOCUMENT`]; it is never sent.
async fn fulfill_blank(session: &Session, request_id: conch_cdp::protocol::fetch::RequestId) {
    let body = crate::page::base64::encode(BLANK_DOCUMENT.as_bytes());
    let answer = session
        .call_raw(
            "Fetch.fulfillRequest",
            serde_json::json!({
                "requestId": request_id,
                "responseCode": 200,
                "responseHeaders": [
                    { "name": "Content-Type", "value": "text/html; charset=utf-8" },
                    { "name": "Content-Security-Policy", "value": "default-src 'none'" },
                    { "name": "Cache-Control", "value": "no-store" },
                ],
                "body": body,
            }),
        )
        .await;
    if let Err(e) = answer {
        tracing::debug!(target: "conch_browser::guard", error = %e, "a blank page's document could not be answered");
    }
}

/// `None` to let the request go, or the refusal code (already logged).
/// The refusal is logged as `by`'s: the session whose request was paused.
async fn judge(
    event: &RequestPaused,
    rules: &Rules,
    by: Option<&SessionId>,
) -> Option<&'static str> {
    let Ok(url) = Url::parse(&event.request.url) else {
        rules.log.record_for(by, "", 0, "unreadable-address");
        return Some("unreadable-address");
    };
    judge_url(&url, event, rules, by).await
}

/// [`judge`] for `url`: the scheme rules for documents, and, with no proxy in front, the
/// address rules, a name's resolved addresses included.
async fn judge_url(
    url: &Url,
    event: &RequestPaused,
    rules: &Rules,
    by: Option<&SessionId>,
) -> Option<&'static str> {
    let mut verdict = Verdict::Allow;
    if event.resource_type == "Document" {
        verdict = navigation_verdict(url, NavigationBy::Page);
    }
    if verdict.is_allowed()
        && let Some(net) = &rules.check_urls
    {
        verdict = verdict_for_url(url, net);
        if verdict.is_allowed()
            && let Some(resolver) = &rules.resolver
            && let Some(url::Host::Domain(name)) = url.host()
        {
            let port = url.port_or_known_default().unwrap_or(0);
            let addresses = resolve(rules, resolver.as_ref(), name, port).await;
            verdict = verdict_for_resolved_url(url, &addresses, net);
        }
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
    rules.log.record_for(by, &host, port, code);
    Some(code)
}

/// `name`'s addresses, as the guard's resolver answers them, reused for [`NAME_TTL`]. A
/// name that does not resolve has none (and is refused).
async fn resolve(rules: &Rules, resolver: &dyn Resolve, name: &str, port: u16) -> Vec<IpAddr> {
    let key = name.trim_end_matches('.').to_ascii_lowercase();
    {
        let mut names = rules.names.lock().unwrap_or_else(PoisonError::into_inner);
        names.retain(|_, (when, _)| when.elapsed() < NAME_TTL);
        if let Some((_, found)) = names.get(&key) {
            return found.clone();
        }
    }
    let found: Vec<IpAddr> = match resolver.resolve(name, port).await {
        Ok(found) => found.iter().map(|r| r.checked).collect(),
        Err(_) => Vec::new(),
    };
    rules
        .names
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key, (Instant::now(), found.clone()));
    found
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use conch_cdp::Connection;
    use conch_fixtures::fake_cdp::FakeCdp;
    use conch_policy::AllowedHost;
    use tokio::io::AsyncWriteExt;
    use tokio::net::TcpListener;

    use super::*;
    use crate::guard::GuardConfig;
    use crate::{Browser, BrowserConfig, Home};

    /// A loopback app that counts connections and answers a page.
    async fn app() -> (u16, Arc<AtomicUsize>) {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&hits);
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let page = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 19\r\n\r\n<title>App</title>.";
                    let _ = s.write_all(page.as_bytes()).await;
                });
            }
        });
        (port, hits)
    }

    /// A browser whose guard allows the app on `port` only.
    fn browser(dir: &std::path::Path, port: u16, break_fetch: bool) -> Browser {
        let mut config = BrowserConfig::new(Home::new(dir.join("home")));
        config.download = None;
        let mut net = NetSettings::for_gateway_port(port.wrapping_add(1).max(1));
        net.allow_hosts = vec![AllowedHost::parse(&format!("127.0.0.1:{port}")).unwrap()];
        let mut guard = GuardConfig::new(net);
        guard.break_fetch = break_fetch;
        config.guard = Some(guard);
        Browser::new(config)
    }

    /// NET-8 (issue 12): when the browser refuses a rule (here `Fetch.enable`, asked in a
    /// form it rejects), the target is never resumed: the page never loads and the app it
    /// was opened on gets no connection, the refusal is logged, and the page is closed.
    /// The same page with its rules in does load (the control).
    #[tokio::test(flavor = "multi_thread")]
    async fn net_8_a_page_whose_rules_fail_never_runs() {
        let (port, hits) = app().await;
        let address = format!("http://127.0.0.1:{port}/");
        let dir = tempfile::tempdir().unwrap();

        let control = browser(&dir.path().join("control"), port, false);
        let chat = control.conversation("c1");
        chat.open(&address).await.unwrap();
        assert_eq!(chat.evaluate("document.title").await.unwrap(), "App");
        assert!(hits.load(Ordering::SeqCst) >= 1);
        control.shutdown().await;
        hits.store(0, Ordering::SeqCst);

        let broken = browser(&dir.path().join("broken"), port, true);
        let chat = broken.conversation("c1");
        let opened = chat.open(&address).await;
        assert!(opened.is_err(), "the page opened without its rules");
        tokio::time::sleep(Duration::from_millis(1000)).await;
        assert_eq!(hits.load(Ordering::SeqCst), 0, "the unguarded page ran");
        let codes: Vec<&str> = broken.guard_log().since(0).iter().map(|b| b.code).collect();
        assert!(codes.contains(&UNGUARDED), "{codes:?}");
        broken.shutdown().await;
    }

    /// NET-8 (issue 12): a target of a type the rules do not know is never resumed, and
    /// the refusal is logged.
    #[tokio::test]
    async fn net_8_a_target_of_unknown_type_never_runs() {
        let fake = FakeCdp::start().await.unwrap();
        let connection = Connection::connect(&fake.ws_url()).await.unwrap();
        let mut attached = connection.attached_targets();
        for (i, kind) in ["other", "shared_storage_worklet", "something_new"]
            .iter()
            .enumerate()
        {
            let event = serde_json::json!({
                "method": "Target.attachedToTarget",
                "params": {
                    "sessionId": format!("S{i}"),
                    "targetInfo": { "targetId": format!("T{i}"), "type": kind, "url": "http://shop.test/" },
                    "waitingForDebugger": true,
                },
            });
            connection
                .browser()
                .call_raw("Fake.emit", serde_json::json!({ "events": [event] }))
                .await
                .unwrap();
            let target = attached.next().await.unwrap().unwrap();
            let log = Arc::new(GuardLog::default());
            let rules = Rules {
                check_urls: None,
                resolver: None,
                names: Arc::default(),
                log: Arc::clone(&log),
                blank: Arc::default(),
                break_fetch: false,
            };
            assert_eq!(install(&target, &rules).await, After::Refuse, "{kind}");
            let codes: Vec<&str> = log.since(0).iter().map(|b| b.code).collect();
            assert_eq!(codes, [UNGUARDED], "{kind}");
        }
        // The browser's own UI is not a page: it runs, with no rules and nothing logged.
        let event = serde_json::json!({
            "method": "Target.attachedToTarget",
            "params": {
                "sessionId": "UI",
                "targetInfo": { "targetId": "UI", "type": "browser_ui", "url": "chrome://x/" },
                "waitingForDebugger": true,
            },
        });
        connection
            .browser()
            .call_raw("Fake.emit", serde_json::json!({ "events": [event] }))
            .await
            .unwrap();
        let target = attached.next().await.unwrap().unwrap();
        let log = Arc::new(GuardLog::default());
        let rules = Rules {
            check_urls: None,
            resolver: None,
            names: Arc::default(),
            log: Arc::clone(&log),
            blank: Arc::default(),
            break_fetch: false,
        };
        assert_eq!(install(&target, &rules).await, After::Resume);
        assert!(log.since(0).is_empty());
    }
}
