//! The person's door (PROTO-13, LIVE-18, AMB-2): the routes a person's browser uses, on
//! the same listener as `/mcp` in `serve` and on a port of their own in `mcp`.
//!
//! - `GET /signin?code=CODE`: the link printed on standard error at start. The code is
//!   one-time: the first request with it gets a session cookie (`conch_session`,
//!   `HttpOnly; SameSite=Strict; Path=/`) and a 303 to `/`; a wrong or used code gets 403.
//! - `GET /`: the web panel for a signed-in person ([`crate::assets`]), else one sentence
//!   saying to open the sign-in link. `GET /panel/{file}`: the panel's files, signed in only.
//! - `GET /api/browser/live?conversation=ID`: the live view's WebSocket (LIVE-1), bridged
//!   to conch-live by [`crate::live`]. Before the upgrade it needs the session cookie and
//!   an `Origin` that is the gateway's own (LIVE-18); anything else gets 403 and one
//!   sentence, and a missing conversation gets 400.
//!
//! - `GET /api/browser/conversations`: the conversations the person can watch, each with
//!   its name (the MCP client that opened it and its first page's title, issue 28), its
//!   tabs, watchers and waiting questions (issue 14), for a signed-in person.
//! - `/passwords` and `/api/browser/passwords`: the Passwords page and its API, in
//!   [`crate::passwords`] (issue 16).
//!
//! Every route needs a `Host` that is the gateway's own loopback name and port, so a page
//! whose name was rebound to 127.0.0.1 (DNS rebinding) is refused.
//!
//! A signed-in person may ask for a new one-time link ([`Panel::renew_signin`], from the
//! settings page, for a recent sign-in): it is printed on standard error like the first,
//! never sent back to the page. Sessions live in memory only.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Instant;

use axum::Router;
use axum::extract::State;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::live::Live;

/// The session cookie's name.
pub(crate) const SESSION_COOKIE: &str = "conch_session";

/// The largest live message read. conch-live refuses a command over 64 KiB with
/// `{type:"error", message:"Invalid command"}` and the socket stays open; a message past
/// this larger bound is refused by the WebSocket itself, which closes the socket.
pub(crate) const LIVE_MESSAGE_LIMIT: usize = 1024 * 1024;

/// The person's door's state: its port, the unused sign-in code, the signed-in sessions
/// and the live view.
#[derive(Debug, Clone)]
pub(crate) struct Panel {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    port: u16,
    /// The one-time sign-in code, until it is used.
    code: Mutex<Option<String>>,
    /// The valid `conch_session` values, with when each signed in (the settings'
    /// recent sign-in, BE-2).
    sessions: Mutex<HashMap<String, Instant>>,
    live: Live,
    /// The tools, once made: they know the conversations.
    tools: OnceLock<conch_tools::Tools>,
}

impl Panel {
    /// A door on `port` with a fresh one-time sign-in code, bridging sockets to `live`.
    pub(crate) fn new(port: u16, live: Live) -> Panel {
        Panel {
            inner: Arc::new(Inner {
                port,
                code: Mutex::new(Some(crate::random_hex(24))),
                sessions: Mutex::new(HashMap::new()),
                live,
                tools: OnceLock::new(),
            }),
        }
    }

    /// Gives the door the tools, whose conversations it lists.
    pub(crate) fn set_tools(&self, tools: conch_tools::Tools) {
        let _ = self.inner.tools.set(tools);
    }

    /// The port the door listens on.
    pub(crate) fn port(&self) -> u16 {
        self.inner.port
    }

    /// Conch's folder, once the door has the tools.
    pub(crate) fn home(&self) -> Option<conch_browser::Home> {
        let tools = self.inner.tools.get()?;
        Some(tools.browser().config().home.clone())
    }

    /// The panel's address, `http://127.0.0.1:PORT/`: the base of a handoff's link.
    pub(crate) fn address(&self) -> String {
        format!("http://127.0.0.1:{}/", self.inner.port)
    }

    /// The sign-in link with the one-time code, while the code is unused.
    pub(crate) fn signin_link(&self) -> Option<String> {
        let code = self
            .inner
            .code
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        code.as_ref()
            .map(|code| format!("{}signin?code={code}", self.address()))
    }

    /// Makes a new one-time sign-in code, replacing any unused one, and gives its link
    /// (for standard error only: it is never sent to a page).
    pub(crate) fn renew_signin(&self) -> String {
        let code = crate::random_hex(24);
        let link = format!("{}signin?code={code}", self.address());
        *self
            .inner
            .code
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(code);
        link
    }

    /// Uses the sign-in code: a new session's value when `given` is the unused code.
    pub(crate) fn sign_in(&self, given: &str) -> Option<String> {
        let mut code = self
            .inner
            .code
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let right = code
            .as_ref()
            .is_some_and(|code| constant_time_eq(code.as_bytes(), given.as_bytes()));
        if !right {
            return None;
        }
        *code = None;
        let session = crate::random_hex(32);
        self.inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(session.clone(), Instant::now());
        Some(session)
    }

    /// Whether the request carries a valid session cookie.
    pub(crate) fn signed_in(&self, headers: &HeaderMap) -> bool {
        let sessions = self
            .inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        cookies(headers, SESSION_COOKIE).any(|value| sessions.contains_key(value))
    }

    /// When the request's session signed in, for a signed-in request.
    pub(crate) fn signed_in_at(&self, headers: &HeaderMap) -> Option<Instant> {
        let sessions = self
            .inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        cookies(headers, SESSION_COOKIE)
            .filter_map(|value| sessions.get(value).copied())
            .max()
    }

    /// The tools, once made.
    pub(crate) fn tools(&self) -> Option<&conch_tools::Tools> {
        self.inner.tools.get()
    }

    /// The 403 for anyone but a signed-in person on the gateway's own host, with the
    /// sentence that says why; `None` lets the person through.
    pub(crate) fn refusal(&self, headers: &HeaderMap) -> Option<Response> {
        if !self.own_host(headers) {
            return Some(refuse(StatusCode::FORBIDDEN, WRONG_HOST));
        }
        if !self.signed_in(headers) {
            return Some(refuse(StatusCode::FORBIDDEN, NOT_SIGNED_IN));
        }
        None
    }

    /// Whether `Host` is the gateway's own loopback name and port (DNS rebinding).
    pub(crate) fn own_host(&self, headers: &HeaderMap) -> bool {
        let port = self.inner.port;
        headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|host| {
                [format!("127.0.0.1:{port}"), format!("localhost:{port}")]
                    .iter()
                    .any(|own| own.eq_ignore_ascii_case(host.trim()))
            })
    }

    /// Whether `Origin` is present and the gateway's own.
    pub(crate) fn own_origin(&self, headers: &HeaderMap) -> bool {
        let port = self.inner.port;
        headers
            .get(header::ORIGIN)
            .and_then(|h| h.to_str().ok())
            .is_some_and(|origin| {
                [
                    format!("http://127.0.0.1:{port}"),
                    format!("http://localhost:{port}"),
                ]
                .iter()
                .any(|own| own.eq_ignore_ascii_case(origin.trim()))
            })
    }
}

/// The person's routes: `/`, `/signin`, `/api/browser/live` and the rest above, the
/// passwords' ([`crate::passwords`]) and the settings' ([`crate::settings`]).
pub(crate) fn router(panel: Panel) -> Router {
    let settings = crate::settings::router(crate::settings::Settings::new(panel.clone()));
    Router::new()
        .route("/", get(home))
        .route("/panel/{file}", get(panel_file))
        .route("/signin", get(signin))
        .route("/api/browser/live", get(live))
        .route("/api/browser/conversations", get(conversations))
        .route("/api/browser/shots/{file}", get(shot))
        // The Passwords page and its API (issue 16).
        .merge(crate::passwords::routes())
        .with_state(panel)
        .merge(settings)
}

/// Values of the cookie `name` in every `Cookie` header.
fn cookies<'a>(headers: &'a HeaderMap, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|line| line.split(';'))
        .filter_map(move |pair| {
            let (key, value) = pair.trim().split_once('=')?;
            (key.trim() == name).then(|| value.trim())
        })
}

/// The value of the query parameter `name`, percent-decoded; `None` when absent or not
/// UTF-8 after decoding.
fn query_param(uri: &Uri, name: &str) -> Option<String> {
    uri.query()?.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (percent_decode(key)? == name).then(|| percent_decode(value))?
    })
}

/// Decodes `%XX` escapes and `+` (a space in a query); `None` for a broken escape or
/// bytes that are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'%' => {
                let hex = text.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A refusal: `status` and one sentence as plain text.
pub(crate) fn refuse(status: StatusCode, sentence: &str) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        format!("{sentence}\n"),
    )
        .into_response()
}

pub(crate) const NOT_SIGNED_IN: &str =
    "Forbidden: sign in first with the link conch-gateway printed when it started.";

pub(crate) const WRONG_HOST: &str =
    "Forbidden: the gateway answers only on its own loopback address (127.0.0.1 or localhost).";

/// A small HTML page: `sentence` in a paragraph. Nothing in it comes from the request.
pub(crate) fn page(sentence: &str) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Conch</title></head>\n<body>\n<main>\n<h1>Conch</h1>\n<p>{sentence}</p>\n</main>\n</body>\n</html>\n"
    );
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::X_FRAME_OPTIONS, "DENY"),
            (header::CONTENT_SECURITY_POLICY, "default-src 'none'"),
        ],
        html,
    )
        .into_response()
}

/// `GET /`: the web panel, or how to sign in.
async fn home(State(panel): State<Panel>, headers: HeaderMap) -> Response {
    if !panel.own_host(&headers) {
        return refuse(StatusCode::FORBIDDEN, WRONG_HOST);
    }
    if panel.signed_in(&headers) {
        crate::assets::panel(panel.inner.port)
    } else {
        page("Sign in with the link conch-gateway printed on its standard error when it started.")
    }
}

/// `GET /api/browser/conversations`: every conversation with its tabs, how many watch it
/// and how many questions wait in it (issue 14).
async fn conversations(State(panel): State<Panel>, headers: HeaderMap) -> Response {
    if let Some(refused) = panel.refusal(&headers) {
        return refused;
    }
    let Some(tools) = panel.inner.tools.get() else {
        return json_response(&serde_json::json!({ "conversations": [] }));
    };
    let live = &panel.inner.live;
    let mut list = Vec::new();
    for id in tools.conversations() {
        let tabs = tools.browser().conversation(&id).tabs_now().await;
        let (client, title) = tools.naming(&id);
        list.push(serde_json::json!({
            "id": id,
            "name": display_name(&id, client.as_deref(), title.as_deref()),
            "client": client,
            "title": title,
            "watchers": live.watchers(&id),
            "questions": live.board().count_for(&id),
            "tabs": tabs.iter().map(|t| serde_json::json!({
                "id": t.id, "title": t.title, "url": t.url, "active": t.active,
            })).collect::<Vec<_>>(),
        }));
    }
    json_response(&serde_json::json!({ "conversations": list }))
}

/// What the panel calls a conversation (issue 28): the client that opened it with its
/// first page's title ("Claude Code · Example Domain"), the client alone before a page,
/// else the conversation's id.
fn display_name(id: &str, client: Option<&str>, title: Option<&str>) -> String {
    match (client, title) {
        (Some(client), Some(title)) => format!("{client} · {title}"),
        (Some(client), None) => client.to_owned(),
        (None, Some(title)) => title.to_owned(),
        (None, None) => id.to_owned(),
    }
}

/// A JSON answer that no cache keeps.
pub(crate) fn json_response(value: &serde_json::Value) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        value.to_string(),
    )
        .into_response()
}

/// `GET /api/browser/shots/{file}`: a step's thumbnail (LIVE-6, DATA-8), for a signed-in
/// person only. Only a plain `NAME.jpg` of `<home>/browser/shots/` is served: no path, no
/// other kind of file.
async fn shot(
    State(panel): State<Panel>,
    headers: HeaderMap,
    axum::extract::Path(file): axum::extract::Path<String>,
) -> Response {
    if let Some(refused) = panel.refusal(&headers) {
        return refused;
    }
    let plain = file.ends_with(".jpg")
        && file.len() <= 128
        && file
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !file.starts_with('.');
    let Some(tools) = panel.inner.tools.get().filter(|_| plain) else {
        return refuse(StatusCode::NOT_FOUND, "No such thumbnail.");
    };
    let path = tools.browser().config().home.shots_dir().join(&file);
    match tokio::fs::read(&path).await {
        Ok(jpeg) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, "image/jpeg"),
                (header::CACHE_CONTROL, "private, max-age=3600"),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            ],
            jpeg,
        )
            .into_response(),
        Err(_) => refuse(StatusCode::NOT_FOUND, "No such thumbnail."),
    }
}

/// `GET /panel/{file}`: the panel's CSS and modules, for a signed-in person only.
async fn panel_file(
    State(panel): State<Panel>,
    headers: HeaderMap,
    axum::extract::Path(file): axum::extract::Path<String>,
) -> Response {
    if let Some(refused) = panel.refusal(&headers) {
        return refused;
    }
    crate::assets::file(&file, panel.inner.port)
}

/// `GET /signin?code=CODE`: the one-time code becomes a session cookie.
async fn signin(State(panel): State<Panel>, headers: HeaderMap, uri: Uri) -> Response {
    if !panel.own_host(&headers) {
        return refuse(StatusCode::FORBIDDEN, WRONG_HOST);
    }
    let given = query_param(&uri, "code").unwrap_or_default();
    let Some(session) = panel.sign_in(&given) else {
        tracing::warn!("a sign-in with a wrong or used code was refused");
        return refuse(
            StatusCode::FORBIDDEN,
            "This sign-in link is wrong or was already used: restart conch-gateway for a new one.",
        );
    };
    tracing::info!("the person signed in");
    let cookie = format!("{SESSION_COOKIE}={session}; HttpOnly; SameSite=Strict; Path=/");
    let mut response = (
        StatusCode::SEE_OTHER,
        [
            (header::LOCATION, "/"),
            (header::CACHE_CONTROL, "no-store"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// `GET /api/browser/live?conversation=ID`: the checks (LIVE-18, AMB-2), then the
/// upgrade to the live view's WebSocket.
async fn live(
    State(panel): State<Panel>,
    headers: HeaderMap,
    uri: Uri,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    if !panel.own_host(&headers) {
        return refuse(StatusCode::FORBIDDEN, WRONG_HOST);
    }
    if !panel.own_origin(&headers) {
        return refuse(
            StatusCode::FORBIDDEN,
            "Forbidden: only the gateway's own pages may open the live view.",
        );
    }
    if !panel.signed_in(&headers) {
        return refuse(StatusCode::FORBIDDEN, NOT_SIGNED_IN);
    }
    let Some(conversation) = query_param(&uri, "conversation").filter(|c| !c.is_empty()) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "Bad request: say which conversation to watch with ?conversation=ID.",
        );
    };
    let upgrade = match upgrade {
        Ok(upgrade) => upgrade,
        Err(rejection) => return rejection.into_response(),
    };
    let live = panel.inner.live.clone();
    upgrade
        .max_message_size(LIVE_MESSAGE_LIMIT)
        .max_frame_size(LIVE_MESSAGE_LIMIT)
        .on_upgrade(move |socket| async move { live.watch(socket, &conversation).await })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_parameters_are_decoded() {
        let uri: Uri = "/api/browser/live?x=1&conversation=mcp%2Dstdio&y"
            .parse()
            .unwrap();
        assert_eq!(
            query_param(&uri, "conversation").as_deref(),
            Some("mcp-stdio")
        );
        assert_eq!(query_param(&uri, "y").as_deref(), Some(""));
        assert_eq!(query_param(&uri, "z"), None);
        let broken: Uri = "/signin?code=%zz".parse().unwrap();
        assert_eq!(query_param(&broken, "code"), None);
        let short: Uri = "/signin?code=%4".parse().unwrap();
        assert_eq!(query_param(&short, "code"), None);
    }

    #[test]
    fn session_cookies_are_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.append(
            header::COOKIE,
            HeaderValue::from_static("a=1; conch_session=abc"),
        );
        headers.append(
            header::COOKIE,
            HeaderValue::from_static("conch_session = def"),
        );
        let found: Vec<&str> = cookies(&headers, SESSION_COOKIE).collect();
        assert_eq!(found, ["abc", "def"]);
    }
}
