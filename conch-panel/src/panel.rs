//! The person's door (PROTO-13, LIVE-18, AMB-2): the routes a person's browser uses, on
//! the same listener as `/mcp` in `serve` and on a port of their own in `mcp`.
//!
//! - `GET /signin?code=CODE`: a one-time code, printed on standard error at start, by the
//!   sign-in page's button or by `conch-gateway signin` (`POST /api/browser/signin-code`);
//!   each works once, within 10 minutes. It gives a session of two factors: a token the
//!   panel's page keeps in its own origin's storage and sends as `X-Conch-Session` (the
//!   live socket: as its subprotocol `conch.session.TOKEN`), and a cookie (`conch_session_PORT`,
//!   `HttpOnly; SameSite=Strict; Path=/`). A cookie goes to every server on 127.0.0.1,
//!   whatever its port; the token stays with the panel's origin, so a local server the
//!   person's browser visits learns nothing it can replay (LIVE-18, AMB-2). A wrong, used
//!   or expired code gets the sign-in page with 403.
//! - `GET /`: the web panel for a browser with the cookie ([`crate::assets`]), else the
//!   sign-in page, whose button prints a fresh link on standard error (never into the
//!   page) and which leads back to the address the person opened (a handoff's link).
//!   `GET /panel/{file}`: the panel's files; those of the sign-in page for anyone.
//! - Sessions end after `--panel-idle` hours unused (12 by default) and on the panel's
//!   "Sign out" (`DELETE /api/browser/session`), which closes their live sockets.
//! - `GET /api/browser/live?conversation=ID`: the live view's WebSocket (LIVE-1), bridged
//!   to conch-live by [`crate::live`]. Before the upgrade it needs both factors and an
//!   `Origin` that is the gateway's own (LIVE-18); a wrong host or origin gets 403, no
//!   session 401, each with one sentence, and a missing conversation gets 400.
//!
//! - `GET /api/browser/conversations`: the conversations the person can watch, each with
//!   its name (the MCP client that opened it and its first page's title, issue 28), its
//!   tabs, watchers and waiting questions (issue 14), for a signed-in person.
//! - `/passwords` and `/api/browser/passwords`: the Passwords page and its API, in
//!   [`crate::passwords`] (issue 16).
//!
//! Every route needs a `Host` that is the gateway's own loopback name and port, so a page
//! whose name was rebound to 127.0.0.1 (DNS rebinding) is refused. Every API route needs
//! both factors. Sessions live in memory only.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use crate::live::Live;
use crate::secret::constant_time_eq;

/// The session cookie's name before `_PORT`: the second factor, sent to every server on
/// 127.0.0.1. The port in its name keeps two gateways' cookies apart (a cookie ignores
/// ports, so a second gateway's sign-in would otherwise replace the first's).
pub(crate) const SESSION_COOKIE: &str = "conch_session";

/// The header that carries the session's token on each API call: the first factor,
/// which only the panel's own origin holds (its `localStorage`).
pub(crate) const SESSION_HEADER: &str = "x-conch-session";

/// The live socket's subprotocol, which the gateway answers with.
pub(crate) const SOCKET_PROTOCOL: &str = "conch";

/// The prefix of the second subprotocol a panel offers, which carries the token (a
/// browser can't set a WebSocket's headers).
pub(crate) const SOCKET_TOKEN_PREFIX: &str = "conch.session.";

/// How long an unused sign-in code works.
pub(crate) const CODE_LIFETIME: Duration = Duration::from_secs(10 * 60);

/// How long a session may go unused before it ends, unless `--panel-idle` says.
pub const DEFAULT_PANEL_IDLE: Duration = Duration::from_secs(12 * 60 * 60);

/// The most unused sign-in codes kept at once; a newer one pushes out the oldest.
const CODES_KEPT: usize = 8;

/// The largest live message read. conch-live refuses a command over 64 KiB with
/// `{type:"error", message:"Invalid command"}` and the socket stays open; a message past
/// this larger bound is refused by the WebSocket itself, which closes the socket.
pub(crate) const LIVE_MESSAGE_LIMIT: usize = 1024 * 1024;

/// The clock sessions and codes are timed by (injected in tests).
pub type Clock = Arc<dyn Fn() -> Instant + Send + Sync>;

/// The person's door's state: its port, the unused sign-in codes, the signed-in sessions
/// and the live view.
#[derive(Clone)]
pub struct Panel {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Panel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Panel")
            .field("port", &self.inner.port)
            .finish_non_exhaustive()
    }
}

/// One signed-in browser: its token (the header's), its cookie, when it signed in and
/// when it was last used.
struct Session {
    cookie: String,
    signed_in: Instant,
    used: Instant,
}

struct Inner {
    port: u16,
    /// The unused one-time sign-in codes, each with when it was made.
    codes: Mutex<Vec<(String, Instant)>>,
    /// The signed-in sessions by token.
    sessions: Mutex<HashMap<String, Session>>,
    /// How long a session may go unused.
    idle: Duration,
    clock: Clock,
    /// Bumped when a session ends, so its live sockets close.
    ended: tokio::sync::watch::Sender<u64>,
    /// When the sign-in page's button last had a link printed.
    printed: Mutex<Option<Instant>>,
    /// The secret `conch-gateway signin` shows to get a link (`<home>/panel.door`).
    door_secret: String,
    live: Live,
    /// The tools, once made: they know the conversations.
    tools: OnceLock<conch_tools::Tools>,
    /// How the embedder keeps the person's choice of browser, once given.
    choice: OnceLock<Arc<dyn crate::BackendChoice>>,
}

/// A new session: the token the panel's page keeps and sends as [`SESSION_HEADER`],
/// and the cookie's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SignedIn {
    pub(crate) token: String,
    pub(crate) cookie: String,
}

impl Panel {
    /// A door on `port` with a fresh one-time sign-in code, bridging sockets to `live`;
    /// sessions end after [`DEFAULT_PANEL_IDLE`] unused.
    pub fn new(port: u16, live: Live) -> Panel {
        Panel::with_clock(port, live, DEFAULT_PANEL_IDLE, Arc::new(Instant::now))
    }

    /// A door whose sessions end after `idle` unused, timed by `clock`.
    pub fn with_clock(port: u16, live: Live, idle: Duration, clock: Clock) -> Panel {
        let now = clock();
        Panel {
            inner: Arc::new(Inner {
                port,
                codes: Mutex::new(vec![(crate::secret::random_hex(24), now)]),
                sessions: Mutex::new(HashMap::new()),
                idle,
                clock,
                ended: tokio::sync::watch::Sender::new(0),
                printed: Mutex::new(None),
                door_secret: crate::secret::random_hex(32),
                live,
                tools: OnceLock::new(),
                choice: OnceLock::new(),
            }),
        }
    }

    /// Gives the door the tools, whose conversations it lists.
    pub fn set_tools(&self, tools: conch_tools::Tools) {
        let _ = self.inner.tools.set(tools);
    }

    /// Gives the door how the person's choice of browser is kept, for the Settings
    /// page's backend (without one, the page can't change it).
    pub fn set_backend_choice(&self, choice: Arc<dyn crate::BackendChoice>) {
        let _ = self.inner.choice.set(choice);
    }

    /// How the person's choice of browser is kept, once given.
    pub(crate) fn backend_choice(&self) -> Option<&dyn crate::BackendChoice> {
        self.inner.choice.get().map(AsRef::as_ref)
    }

    /// The routes of the person's door ([`router`]), to merge into an app's router.
    pub fn router(&self) -> Router {
        router(self.clone())
    }

    /// The port the door listens on.
    pub fn port(&self) -> u16 {
        self.inner.port
    }

    /// The secret `conch-gateway signin` sends to get a new link; it is kept in
    /// `<home>/panel.door`, readable by its owner only.
    pub fn door_secret(&self) -> &str {
        &self.inner.door_secret
    }

    /// Conch's folder, once the door has the tools.
    pub(crate) fn home(&self) -> Option<conch_browser::Home> {
        let tools = self.inner.tools.get()?;
        Some(tools.browser().config().home.clone())
    }

    /// The panel's address, `http://127.0.0.1:PORT/`: the base of a handoff's link.
    pub fn address(&self) -> String {
        format!("http://127.0.0.1:{}/", self.inner.port)
    }

    /// The session cookie's name on this door: `conch_session_PORT`.
    pub(crate) fn cookie_name(&self) -> String {
        format!("{SESSION_COOKIE}_{}", self.inner.port)
    }

    fn now(&self) -> Instant {
        (self.inner.clock)()
    }

    fn codes(&self) -> std::sync::MutexGuard<'_, Vec<(String, Instant)>> {
        self.inner
            .codes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The sign-in link with the newest unused code, while one works.
    pub fn signin_link(&self) -> Option<String> {
        let now = self.now();
        let mut codes = self.codes();
        codes.retain(|(_, made)| now.saturating_duration_since(*made) < CODE_LIFETIME);
        codes
            .last()
            .map(|(code, _)| format!("{}signin?code={code}", self.address()))
    }

    /// Makes a new one-time sign-in code (the older unused ones keep working until they
    /// expire) and gives its link, for standard error or the owner's `signin` command
    /// only: it is never sent to a page.
    pub(crate) fn renew_signin(&self) -> String {
        let code = crate::secret::random_hex(24);
        let link = format!("{}signin?code={code}", self.address());
        let now = self.now();
        let mut codes = self.codes();
        codes.retain(|(_, made)| now.saturating_duration_since(*made) < CODE_LIFETIME);
        codes.push((code, now));
        let extra = codes.len().saturating_sub(CODES_KEPT);
        codes.drain(..extra);
        link
    }

    /// Uses a sign-in code: a new session when `given` is an unused code made less than
    /// [`CODE_LIFETIME`] ago.
    pub(crate) fn sign_in(&self, given: &str) -> Option<SignedIn> {
        let now = self.now();
        {
            let mut codes = self.codes();
            codes.retain(|(_, made)| now.saturating_duration_since(*made) < CODE_LIFETIME);
            let at = codes
                .iter()
                .position(|(code, _)| constant_time_eq(code.as_bytes(), given.as_bytes()))?;
            codes.remove(at);
        }
        let signed = SignedIn {
            token: crate::secret::random_hex(32),
            cookie: crate::secret::random_hex(32),
        };
        self.sessions().insert(
            signed.token.clone(),
            Session {
                cookie: signed.cookie.clone(),
                signed_in: now,
                used: now,
            },
        );
        Some(signed)
    }

    /// The token of the live session that `token` names and whose cookie the request
    /// carries, marked used now; ends a session unused for longer than the idle time.
    fn session(&self, headers: &HeaderMap, token: Option<&str>) -> Option<Instant> {
        let token = token?;
        let now = self.now();
        let idle = self.inner.idle;
        let name = self.cookie_name();
        let mut sessions = self.sessions();
        let before = sessions.len();
        sessions.retain(|_, s| now.saturating_duration_since(s.used) < idle);
        let expired = sessions.len() != before;
        let found = sessions
            .iter_mut()
            .find(|(own, _)| constant_time_eq(own.as_bytes(), token.as_bytes()))
            .map(|(_, session)| session)
            .filter(|session| {
                cookies(headers, &name)
                    .any(|value| constant_time_eq(value.as_bytes(), session.cookie.as_bytes()))
            })
            .map(|session| {
                session.used = now;
                session.signed_in
            });
        drop(sessions);
        if expired {
            self.inner.ended.send_modify(|n| *n += 1);
        }
        found
    }

    /// Whether the request carries both factors of a live session: the token in
    /// [`SESSION_HEADER`] and its cookie.
    pub(crate) fn signed_in(&self, headers: &HeaderMap) -> bool {
        self.signed_in_at(headers).is_some()
    }

    /// When the request's session signed in, for a signed-in request (both factors).
    pub(crate) fn signed_in_at(&self, headers: &HeaderMap) -> Option<Instant> {
        self.session(headers, header_token(headers))
    }

    /// Whether the request carries the cookie of a live session: enough for the panel's
    /// pages and files, which hold nothing of the person's (a page navigation can't carry
    /// a header); never for the API or the live socket.
    pub(crate) fn has_session_cookie(&self, headers: &HeaderMap) -> bool {
        let now = self.now();
        let idle = self.inner.idle;
        let name = self.cookie_name();
        let sessions = self.sessions();
        cookies(headers, &name).any(|value| {
            sessions.values().any(|session| {
                now.saturating_duration_since(session.used) < idle
                    && constant_time_eq(value.as_bytes(), session.cookie.as_bytes())
            })
        })
    }

    /// Ends the session of a signed-in request ("Sign out"); its live sockets close.
    /// Whether there was one.
    pub(crate) fn sign_out(&self, headers: &HeaderMap) -> bool {
        if self.signed_in_at(headers).is_none() {
            return false;
        }
        let Some(token) = header_token(headers) else {
            return false;
        };
        let ended = self.sessions().remove(token).is_some();
        if ended {
            self.inner.ended.send_modify(|n| *n += 1);
        }
        ended
    }

    /// Whether the session `token` is still live (not signed out, not idle too long).
    fn alive(&self, token: &str) -> bool {
        let now = self.now();
        self.sessions()
            .get(token)
            .is_some_and(|s| now.saturating_duration_since(s.used) < self.inner.idle)
    }

    /// The tools, once made.
    pub(crate) fn tools(&self) -> Option<&conch_tools::Tools> {
        self.inner.tools.get()
    }

    /// The refusal for anyone but a signed-in person on the gateway's own host (403 for
    /// a wrong host, 401 without both factors of a session), with the sentence that says
    /// why; `None` lets the person through.
    pub(crate) fn refusal(&self, headers: &HeaderMap) -> Option<Response> {
        if !self.own_host(headers) {
            return Some(refuse(StatusCode::FORBIDDEN, WRONG_HOST));
        }
        if !self.signed_in(headers) {
            return Some(refuse(StatusCode::UNAUTHORIZED, NOT_SIGNED_IN));
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

/// The token in [`SESSION_HEADER`].
fn header_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(SESSION_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
}

/// The token a live socket's upgrade offers as its `conch.session.TOKEN` subprotocol.
fn socket_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|line| line.split(','))
        .find_map(|protocol| protocol.trim().strip_prefix(SOCKET_TOKEN_PREFIX))
}

/// Mounts the person's door on `app`: `app` with the panel's routes merged in (the one
/// call an embedder makes). The app must listen on 127.0.0.1 at the panel's port.
pub fn mount(app: Router, panel: &Panel) -> Router {
    app.merge(panel.router())
}

/// The person's routes: `/`, `/signin`, `/api/browser/live` and the rest above, the
/// passwords' ([`crate::passwords`]) and the settings' ([`crate::settings`]).
pub fn router(panel: Panel) -> Router {
    let settings = crate::settings::router(crate::settings::Settings::new(panel.clone()));
    Router::new()
        .route("/", get(home))
        .route("/panel/{file}", get(panel_file))
        .route("/signin", get(signin))
        .route("/api/browser/session", axum::routing::delete(sign_out))
        .route("/api/browser/signin-link", post(print_signin_link))
        .route("/api/browser/signin-code", post(give_signin_link))
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

/// The value of the query parameter `name`, decoded as a form (`%XX` and `+`) by the
/// `url` crate; `None` when absent. A broken escape stays as it was sent.
fn query_param(uri: &Uri, name: &str) -> Option<String> {
    url::form_urlencoded::parse(uri.query()?.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
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

pub(crate) const NOT_SIGNED_IN: &str = "Unauthorized: sign in first: open the panel's address for a new sign-in link, or run conch-gateway signin.";

pub(crate) const WRONG_HOST: &str =
    "Forbidden: the gateway answers only on its own loopback address (127.0.0.1 or localhost).";

/// `GET /`: the web panel for a browser with a session's cookie, else the sign-in page
/// (which remembers where the person was going, so a handoff's link leads back).
async fn home(State(panel): State<Panel>, headers: HeaderMap) -> Response {
    if !panel.own_host(&headers) {
        return refuse(StatusCode::FORBIDDEN, WRONG_HOST);
    }
    if panel.has_session_cookie(&headers) {
        crate::assets::panel(panel.inner.port)
    } else {
        crate::assets::signin_page(StatusCode::OK, panel.inner.port)
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

/// `GET /panel/{file}`: the panel's CSS and modules, for a browser with a session's
/// cookie; the sign-in page's own files ([`crate::assets::PUBLIC`]) for anyone on the
/// gateway's own host.
async fn panel_file(
    State(panel): State<Panel>,
    headers: HeaderMap,
    axum::extract::Path(file): axum::extract::Path<String>,
) -> Response {
    if !panel.own_host(&headers) {
        return refuse(StatusCode::FORBIDDEN, WRONG_HOST);
    }
    if !crate::assets::PUBLIC.contains(&file.as_str()) && !panel.has_session_cookie(&headers) {
        return refuse(StatusCode::UNAUTHORIZED, NOT_SIGNED_IN);
    }
    crate::assets::file(&file, panel.inner.port)
}

/// `GET /signin?code=CODE`: an unused code younger than 10 minutes becomes a session:
/// the cookie, and a 303 to `/#session=TOKEN`, whose fragment only the panel's own page
/// reads (a fragment is never sent to a server, nor in a `Referer`). Without a code,
/// the sign-in page; with a wrong, used or expired one, the sign-in page with 403.
async fn signin(State(panel): State<Panel>, headers: HeaderMap, uri: Uri) -> Response {
    if !panel.own_host(&headers) {
        return refuse(StatusCode::FORBIDDEN, WRONG_HOST);
    }
    let Some(given) = query_param(&uri, "code") else {
        return crate::assets::signin_page(StatusCode::OK, panel.inner.port);
    };
    let Some(signed) = panel.sign_in(&given) else {
        tracing::warn!("a sign-in with a wrong, used or expired code was refused");
        return crate::assets::signin_page(StatusCode::FORBIDDEN, panel.inner.port);
    };
    tracing::info!("the person signed in");
    let cookie = format!(
        "{}={}; HttpOnly; SameSite=Strict; Path=/",
        panel.cookie_name(),
        signed.cookie
    );
    let location = format!("/#session={}", signed.token);
    let mut response = (
        StatusCode::SEE_OTHER,
        [
            (header::CACHE_CONTROL, "no-store"),
            (header::REFERRER_POLICY, "no-referrer"),
        ],
    )
        .into_response();
    for (name, value) in [(header::SET_COOKIE, cookie), (header::LOCATION, location)] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// `DELETE /api/browser/session`: "Sign out": ends this browser's session (both
/// factors needed, and the gateway's own `Origin`); its live sockets close and its cookie
/// is cleared.
async fn sign_out(State(panel): State<Panel>, headers: HeaderMap) -> Response {
    if let Some(refused) = panel.refusal(&headers) {
        return refused;
    }
    if !panel.own_origin(&headers) {
        return refuse(
            StatusCode::FORBIDDEN,
            "Forbidden: only the panel's own pages may sign out.",
        );
    }
    panel.sign_out(&headers);
    tracing::info!("the person signed out of the panel");
    let mut response = json_response(&serde_json::json!({
        "said": "Signed out: this browser needs a new sign-in link to open the panel again."
    }));
    let cleared = format!(
        "{}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0",
        panel.cookie_name()
    );
    if let Ok(value) = HeaderValue::from_str(&cleared) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// How often the sign-in page may ask for a new link.
const PRINT_EVERY: Duration = Duration::from_secs(5);

/// `POST /api/browser/signin-link`: the sign-in page's button. A new one-time link is
/// printed on the gateway's standard error, never sent back: the page hears only where
/// to look. Needs the gateway's own `Host` and `Origin` (no session: this is how a person
/// without one gets in); asked again within 5 seconds, it prints nothing new.
async fn print_signin_link(State(panel): State<Panel>, headers: HeaderMap) -> Response {
    if !panel.own_host(&headers) {
        return refuse(StatusCode::FORBIDDEN, WRONG_HOST);
    }
    if !panel.own_origin(&headers) {
        return refuse(
            StatusCode::FORBIDDEN,
            "Forbidden: only the gateway's own sign-in page may ask for a new link.",
        );
    }
    let now = panel.now();
    let recently = {
        let mut printed = panel
            .inner
            .printed
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let recently = printed.is_some_and(|at| now.saturating_duration_since(at) < PRINT_EVERY);
        if !recently {
            *printed = Some(now);
        }
        recently
    };
    if !recently {
        let link = panel.renew_signin();
        eprintln!("conch-gateway: sign in at {link}");
        tracing::info!("the sign-in page asked for a new sign-in link");
    }
    json_response(&serde_json::json!({
        "said": "A new sign-in link was printed where conch-gateway runs (its standard error, in your terminal or your MCP client's log). Open it in this browser within 10 minutes; you can also run conch-gateway signin."
    }))
}

/// `POST /api/browser/signin-code`: `conch-gateway signin`'s request. With the door's
/// secret from `<home>/panel.door` (`Authorization: Bearer SECRET`, readable by the
/// owner only) it answers a new one-time link as `{"link"}`; anything else gets 401.
async fn give_signin_link(State(panel): State<Panel>, headers: HeaderMap) -> Response {
    if !panel.own_host(&headers) {
        return refuse(StatusCode::FORBIDDEN, WRONG_HOST);
    }
    // A page can't send this request without a preflight, and has no Origin to prove it
    // is the owner: a request with any Origin is refused.
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or_default();
    if headers.contains_key(header::ORIGIN)
        || !constant_time_eq(given.trim().as_bytes(), panel.door_secret().as_bytes())
    {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "Unauthorized: only conch-gateway signin, with the secret in the gateway's home, may ask for a link here.",
        );
    }
    tracing::info!("conch-gateway signin asked for a new sign-in link");
    json_response(&serde_json::json!({ "link": panel.renew_signin() }))
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
    // Both factors: the token the panel offers as a subprotocol, and the cookie.
    let token = socket_token(&headers).map(str::to_owned);
    if panel.session(&headers, token.as_deref()).is_none() {
        return refuse(StatusCode::UNAUTHORIZED, NOT_SIGNED_IN);
    }
    let token = token.unwrap_or_default();
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
    let mut ended = panel.inner.ended.subscribe();
    upgrade
        .protocols([SOCKET_PROTOCOL])
        .max_message_size(LIVE_MESSAGE_LIMIT)
        .max_frame_size(LIVE_MESSAGE_LIMIT)
        .on_upgrade(move |socket| async move {
            // The socket lives as long as its session: "Sign out" closes it.
            let signed_out = async {
                while ended.changed().await.is_ok() {
                    if !panel.alive(&token) {
                        return;
                    }
                }
                std::future::pending::<()>().await;
            };
            tokio::select! {
                () = live.watch(socket, &conversation) => {}
                () = signed_out => {
                    tracing::info!(conversation, "the session ended; its live socket closed");
                }
            }
        })
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
        let spaced: Uri = "/api/browser/live?conversation=a+b%20c".parse().unwrap();
        assert_eq!(
            query_param(&spaced, "conversation").as_deref(),
            Some("a b c")
        );
        let broken: Uri = "/signin?code=%zz".parse().unwrap();
        assert_eq!(query_param(&broken, "code").as_deref(), Some("%zz"));
        let short: Uri = "/signin?code=%4".parse().unwrap();
        assert_eq!(query_param(&short, "code").as_deref(), Some("%4"));
    }

    /// A door on port 1 timed by a clock the test moves; sessions end after 12 hours.
    fn door() -> (Panel, Arc<Mutex<Instant>>, tempfile::TempDir) {
        let dir = tempfile::tempdir().expect("temp home");
        let browser = conch_browser::Browser::new(conch_browser::BrowserConfig::new(
            conch_browser::Home::new(dir.path()),
        ));
        let board = crate::cards::Board::new(Duration::from_secs(1));
        let now = Arc::new(Mutex::new(Instant::now()));
        let clock = {
            let now = Arc::clone(&now);
            Arc::new(move || *now.lock().unwrap())
        };
        let panel = Panel::with_clock(1, Live::new(browser, board), DEFAULT_PANEL_IDLE, clock);
        (panel, now, dir)
    }

    fn code_of(link: &str) -> String {
        link.split("code=").nth(1).expect("a code").to_owned()
    }

    /// Two browsers signed in to `panel`: with the code at start and with a new one.
    fn two_sessions(panel: &Panel) -> (SignedIn, SignedIn) {
        let code = code_of(&panel.signin_link().expect("a link"));
        let one = panel.sign_in(&code).expect("signed in");
        let two = panel
            .sign_in(&code_of(&panel.renew_signin()))
            .expect("signed in");
        (one, two)
    }

    /// The headers of a request with `cookie` and `token`.
    fn carrying(cookie: Option<&str>, token: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("127.0.0.1:1"));
        if let Some(cookie) = cookie {
            let pair = format!("other=1; {SESSION_COOKIE}_1={cookie}");
            headers.insert(header::COOKIE, HeaderValue::from_str(&pair).unwrap());
        }
        if let Some(token) = token {
            headers.insert(SESSION_HEADER, HeaderValue::from_str(token).unwrap());
        }
        headers
    }

    /// LIVE-18 (AMB-2): an unused sign-in code works for 10 minutes, then never; a new
    /// one does not undo an older one still unused.
    #[test]
    fn live_18_an_unused_sign_in_code_expires_after_ten_minutes() {
        let (panel, now, _dir) = door();
        let first = code_of(&panel.signin_link().expect("a link at start"));
        *now.lock().unwrap() += CODE_LIFETIME;
        assert_eq!(panel.sign_in(&first), None, "10 minutes old: refused");
        assert_eq!(panel.signin_link(), None, "no link works any more");
        let second = code_of(&panel.renew_signin());
        let third = code_of(&panel.renew_signin());
        *now.lock().unwrap() += CODE_LIFETIME - Duration::from_secs(1);
        assert!(panel.sign_in(&second).is_some(), "9 min 59 s old: works");
        assert_eq!(panel.sign_in(&second), None, "once only");
        assert!(panel.sign_in(&third).is_some());
    }

    /// LIVE-18 (AMB-2): a session needs its token and its own cookie; either alone, or a
    /// token with another session's cookie, is refused.
    #[test]
    fn live_18_a_session_needs_its_token_and_its_cookie() {
        let (panel, _now, _dir) = door();
        let (one, two) = two_sessions(&panel);
        assert!(panel.signed_in(&carrying(Some(&one.cookie), Some(&one.token))));
        assert!(!panel.signed_in(&carrying(Some(&one.cookie), None)));
        assert!(!panel.signed_in(&carrying(None, Some(&one.token))));
        assert!(!panel.signed_in(&carrying(Some(&two.cookie), Some(&one.token))));
        assert!(!panel.signed_in(&carrying(Some(&one.cookie), Some(&one.cookie))));
        let refused = panel
            .refusal(&carrying(Some(&one.cookie), None))
            .expect("refused");
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
        // Another gateway's cookie (another port in its name) is not this one's.
        let mut elsewhere = carrying(None, Some(&one.token));
        let pair = format!("{SESSION_COOKIE}_2={}", one.cookie);
        elsewhere.insert(header::COOKIE, HeaderValue::from_str(&pair).unwrap());
        assert!(!panel.signed_in(&elsewhere));
        // The pages need only the cookie: they hold nothing of the person's.
        assert!(panel.has_session_cookie(&carrying(Some(&one.cookie), None)));
        assert!(!panel.has_session_cookie(&carrying(Some(&one.token), None)));
    }

    /// LIVE-18 (AMB-2): a session ends after 12 hours unused (each use counts from
    /// then), and "Sign out" ends this browser's session only.
    #[test]
    fn live_18_a_session_ends_when_idle_and_on_sign_out() {
        let (panel, now, _dir) = door();
        let (one, two) = two_sessions(&panel);
        let first = carrying(Some(&one.cookie), Some(&one.token));
        let second = carrying(Some(&two.cookie), Some(&two.token));
        let almost = DEFAULT_PANEL_IDLE - Duration::from_secs(1);
        *now.lock().unwrap() += almost;
        assert!(panel.signed_in(&first), "used within 12 hours");
        *now.lock().unwrap() += almost;
        assert!(
            panel.signed_in(&first),
            "12 hours counted from the last use"
        );
        *now.lock().unwrap() += DEFAULT_PANEL_IDLE;
        assert!(!panel.signed_in(&first), "12 hours unused: ended");
        assert!(!panel.has_session_cookie(&carrying(Some(&one.cookie), None)));
        assert!(!panel.signed_in(&second), "ended too");

        let (panel, _now, _dir) = door();
        let (one, two) = two_sessions(&panel);
        let first = carrying(Some(&one.cookie), Some(&one.token));
        let second = carrying(Some(&two.cookie), Some(&two.token));
        assert!(
            !panel.sign_out(&carrying(Some(&one.cookie), None)),
            "needs both"
        );
        assert!(panel.sign_out(&first));
        assert!(!panel.signed_in(&first));
        assert!(!panel.alive(&one.token));
        assert!(
            panel.signed_in(&second),
            "the other browser stays signed in"
        );
    }

    /// The live socket's token is read from its subprotocols.
    #[test]
    fn the_socket_token_is_its_second_subprotocol() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::SEC_WEBSOCKET_PROTOCOL,
            HeaderValue::from_static("conch, conch.session.abc"),
        );
        assert_eq!(socket_token(&headers), Some("abc"));
        assert_eq!(socket_token(&HeaderMap::new()), None);
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
