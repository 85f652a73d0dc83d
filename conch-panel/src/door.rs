//! What every page of the person's door shares (issue 28): the door's state and its
//! sessions ([`Panel`]: the one-time sign-in codes, the two-factor sessions that end when
//! idle or signed out, and the inline live view's sign-ins, which end by the same rule and
//! with any sign-out of the panel), the checks of the gateway's own `Host` and `Origin`
//! ([`Panel::own_host`], [`Panel::own_origin`], [`Panel::refusal`]) and the answers (a
//! refusal as one sentence of plain text, [`refuse`]; JSON no cache keeps, [`answer`]).
//!
//! The pages' routes (the panel's in [`crate::panel`], [`crate::settings`] and
//! [`crate::passwords`]) each use this module and never each other; [`crate::router`]
//! puts them together.
//!
//! Deliberately absent: any route. Sessions live in memory only.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

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

/// The clock sessions and codes are timed by (injected in tests).
pub type Clock = Arc<dyn Fn() -> Instant + Send + Sync>;

/// The person's door's state: its port, the unused sign-in codes, the signed-in sessions
/// and the live view.
#[derive(Clone)]
pub struct Panel {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Panel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Panel")
            .field("port", &self.inner.port)
            .finish_non_exhaustive()
    }
}

/// One signed-in browser: its token (the header's), its cookie, when it signed in and
/// when it was last used; or, with `inline`, the sign-in of a conversation's inline live
/// view in the chat (issue 31), which has no browser of its own: its token and cookie are
/// never sent anywhere, and it opens no page of the panel.
struct Session {
    cookie: String,
    signed_in: Instant,
    used: Instant,
    /// The conversation whose inline live view signed in, for an inline sign-in.
    inline: Option<String>,
}

impl Session {
    /// Whether a session last used at `self.used` is still live at `now`: the one rule
    /// of the panel's idle time, for the panel's sessions and the inline view's alike.
    fn live_at(&self, now: Instant, idle: Duration) -> bool {
        now.saturating_duration_since(self.used) < idle
    }
}

pub(crate) struct Inner {
    pub(crate) port: u16,
    /// The unused one-time sign-in codes, each with when it was made.
    codes: Mutex<Vec<(String, Instant)>>,
    /// The signed-in sessions by token.
    sessions: Mutex<HashMap<String, Session>>,
    /// How long a session may go unused.
    idle: Duration,
    clock: Clock,
    /// Bumped when a session ends, so its live sockets close.
    pub(crate) ended: tokio::sync::watch::Sender<u64>,
    /// When the sign-in page's button last had a link printed.
    pub(crate) printed: Mutex<Option<Instant>>,
    /// The secret `conch-gateway signin` shows to get a link (`<home>/panel.door`).
    door_secret: String,
    pub(crate) live: Live,
    /// The tools, once made: they know the conversations.
    pub(crate) tools: OnceLock<conch_tools::Tools>,
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

    pub(crate) fn now(&self) -> Instant {
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
        self.sign_in_as(given, None)
    }

    /// Uses a sign-in code for the inline live view of `conversation` (issue 31): the
    /// new sign-in's id, which only the inline view's grant keeps, when `given` works as
    /// [`Panel::sign_in`] takes it. The sign-in ends as a panel session does: unused for
    /// the idle time, or when the person signs out of the panel in any browser.
    pub(crate) fn sign_in_inline(&self, given: &str, conversation: &str) -> Option<String> {
        self.sign_in_as(given, Some(conversation))
            .map(|signed| signed.token)
    }

    /// Whether the inline sign-in `id` is still live (not signed out, not idle past the
    /// panel's idle time, by the same rule as [`Panel::session`]); a live one is marked
    /// used now. A session past its idle time ends here too.
    pub(crate) fn use_inline(&self, id: &str) -> bool {
        self.among_live(|sessions, now| {
            sessions
                .iter_mut()
                .find(|(own, s)| {
                    s.inline.is_some() && constant_time_eq(own.as_bytes(), id.as_bytes())
                })
                .map(|(_, session)| session.used = now)
                .is_some()
        })
    }

    /// Ends every session unused for longer than the idle time (telling the panel's
    /// sockets), then lets `pick` look among the live ones at this moment.
    fn among_live<T>(&self, pick: impl FnOnce(&mut HashMap<String, Session>, Instant) -> T) -> T {
        let now = self.now();
        let idle = self.inner.idle;
        let mut sessions = self.sessions();
        let before = sessions.len();
        sessions.retain(|_, s| s.live_at(now, idle));
        let expired = sessions.len() != before;
        let found = pick(&mut sessions, now);
        drop(sessions);
        if expired {
            self.inner.ended.send_modify(|n| *n += 1);
        }
        found
    }

    /// Whether some inline sign-in of `conversation`'s view is still live (without
    /// marking it used).
    pub(crate) fn inline_signed_in(&self, conversation: &str) -> bool {
        let now = self.now();
        let idle = self.inner.idle;
        self.sessions()
            .values()
            .any(|s| s.inline.as_deref() == Some(conversation) && s.live_at(now, idle))
    }

    /// A subscription to the sessions ending (a sign-out, or one found idle too long).
    pub(crate) fn endings(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.ended.subscribe()
    }

    /// Uses a sign-in code: a new session (of the inline view of `inline`, when given).
    fn sign_in_as(&self, given: &str, inline: Option<&str>) -> Option<SignedIn> {
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
                inline: inline.map(str::to_owned),
            },
        );
        Some(signed)
    }

    /// The token of the live session that `token` names and whose cookie the request
    /// carries, marked used now; ends a session unused for longer than the idle time.
    pub(crate) fn session(&self, headers: &HeaderMap, token: Option<&str>) -> Option<Instant> {
        let token = token?;
        let name = self.cookie_name();
        self.among_live(|sessions, now| {
            sessions
                .iter_mut()
                .find(|(own, s)| {
                    s.inline.is_none() && constant_time_eq(own.as_bytes(), token.as_bytes())
                })
                .map(|(_, session)| session)
                .filter(|session| {
                    cookies(headers, &name)
                        .any(|value| constant_time_eq(value.as_bytes(), session.cookie.as_bytes()))
                })
                .map(|session| {
                    session.used = now;
                    session.signed_in
                })
        })
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
                session.inline.is_none()
                    && session.live_at(now, idle)
                    && constant_time_eq(value.as_bytes(), session.cookie.as_bytes())
            })
        })
    }

    /// Ends the session of a signed-in request ("Sign out"); its live sockets close.
    /// Every inline live view's sign-in ends with it (issue 31): the inline views in the
    /// chat were signed in with codes of their own, so no sign-out of the panel can be
    /// told to be theirs, and a person who signs out means to stop acting through any of
    /// them. The panel's other browsers stay signed in. Whether there was a session.
    pub(crate) fn sign_out(&self, headers: &HeaderMap) -> bool {
        if self.signed_in_at(headers).is_none() {
            return false;
        }
        let Some(token) = header_token(headers) else {
            return false;
        };
        let ended = {
            let mut sessions = self.sessions();
            let ended = sessions.remove(token).is_some();
            if ended {
                sessions.retain(|_, s| s.inline.is_none());
            }
            ended
        };
        if ended {
            self.inner.ended.send_modify(|n| *n += 1);
        }
        ended
    }

    /// Whether the session `token` is still live (not signed out, not idle too long).
    pub(crate) fn alive(&self, token: &str) -> bool {
        let now = self.now();
        self.sessions()
            .get(token)
            .is_some_and(|s| s.inline.is_none() && s.live_at(now, self.inner.idle))
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
pub(crate) fn socket_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|line| line.split(','))
        .find_map(|protocol| protocol.trim().strip_prefix(SOCKET_TOKEN_PREFIX))
}

/// Values of the cookie `name` in every `Cookie` header, split on `;` as RFC 6265 §5.4
/// sends them (the way axum-extra's cookie jar splits them too). Hand-written on purpose:
/// `headers::Cookie` reads the whole line as one text and honours quotes, so a cookie
/// another 127.0.0.1 server sets with UTF-8 or an unclosed `"` in its value (Chromium
/// sends both as set) would hide the session's own cookie and lock the person out. Here
/// a pair that is not UTF-8 is passed over alone, and quotes mean nothing.
fn cookies<'a>(headers: &'a HeaderMap, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    headers
        .get_all(header::COOKIE)
        .iter()
        .flat_map(|line| line.as_bytes().split(|byte| *byte == b';'))
        .filter_map(|pair| std::str::from_utf8(pair).ok())
        .filter_map(move |pair| {
            let (key, value) = pair.trim().split_once('=')?;
            (key.trim() == name).then(|| value.trim())
        })
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

/// A JSON answer that no cache keeps, with 200.
pub(crate) fn json_response(value: &serde_json::Value) -> Response {
    answer(StatusCode::OK, value)
}

/// A JSON answer with `status`, kept by no cache.
pub(crate) fn answer(status: StatusCode, value: &serde_json::Value) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        value.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

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

    /// LIVE-18 (AMB-2): every 127.0.0.1 server the person's browser visits can set
    /// cookies that come back to the panel in the same `Cookie` line: a junk one of the
    /// session's own name, one with an unclosed quote, one with UTF-8 in its value
    /// (Chromium stores and sends all three as they were set). None of them locks the
    /// person out: every cookie of the session's name is tried, and a pair that can't be
    /// read is passed over alone.
    #[test]
    fn live_18_a_cookie_tossed_by_another_local_server_does_not_lock_the_person_out() {
        let (panel, _now, _dir) = door();
        let (one, _two) = two_sessions(&panel);
        let name = panel.cookie_name();
        let line = format!(
            "{name}=junk; junk=\"x; {name}={}; utf=caf\u{e9}",
            one.cookie
        );
        let mut headers = carrying(None, Some(&one.token));
        headers.insert(
            header::COOKIE,
            HeaderValue::from_bytes(line.as_bytes()).expect("a header value"),
        );
        assert!(panel.signed_in(&headers), "{line}");
        assert!(panel.has_session_cookie(&headers), "{line}");
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
