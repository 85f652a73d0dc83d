//! A browser at a DevTools address, the `cdp` backend (BE-8): `http://host:port` is asked
//! for its `/json/version` and the WebSocket it names is used, with the host and port
//! Chrome reports replaced by the ones actually reached (Chrome answers `127.0.0.1` or
//! `0.0.0.0` behind a forwarded port); `ws://` and `wss://` addresses are used as given.
//!
//! Conch never launches, closes or restarts such a browser: it opens its own tabs in it and
//! closes only those when it lets go. It cannot put its proxy in front of a browser it did
//! not launch, so the guard runs in CDP-only mode there (see the containment model).
//!
//! The cloud providers (BE-6, BE-7) are reached the same way once a session exists:
//! Browserbase's `POST {base}/v1/sessions` (key in `X-BB-API-Key`) answers a `connectUrl`;
//! Steel's `POST {base}/v1/sessions` (key in `steel-api-key`; none for a self-hosted
//! steel-browser) answers a `websocketUrl`, whose `0.0.0.0` host a self-hosted server
//! names is replaced by the one reached. Letting go releases the session
//! (`{"status":"REQUEST_RELEASE"}` to Browserbase, `POST …/release` to Steel).
//!
//! Deliberately absent: `https://` DevTools addresses (no provider serves one; a `wss://`
//! address is taken as given), contexts (profiles kept by a provider) and the providers'
//! own live views.

use std::time::Duration;

use conch_cdp::{Config as CdpConfig, Connection};
use serde_json::{Value, json};

use crate::backend::Backend;
use crate::discover::Probe;
use crate::own_chrome::{self, OwnChrome, OwnChromeError};
use crate::seal::SecretText;
use serde::Deserialize;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use url::Url;

/// The most `/json/version` may say, in bytes.
const MAX_VERSION_ANSWER: u64 = 64 * 1024;

/// How long reaching the address may take, all told.
pub(crate) const REACH_WITHIN: Duration = Duration::from_secs(10);

/// Where Steel's cloud takes DevTools connections (`?apiKey=…&sessionId=…`, BE-7).
pub const STEEL_CONNECT: &str = "wss://connect.steel.dev";

/// How long a Steel cloud session may live at most, in milliseconds (`timeout` on create;
/// Steel's own default is 5 minutes, shorter than Conch's 10 idle minutes). Conch
/// releases it sooner when it lets go.
pub const STEEL_TIMEOUT_MS: u64 = 30 * 60 * 1000;

/// How long a Browserbase session may live at most, in seconds (`timeout` on create: 60
/// to 21600; without it the project's own default applies, which Conch can't know).
/// Browserbase, like Steel, has no call that extends a session, so one in use is renewed
/// before this ends (BE-7). Conch releases it sooner when it lets go.
pub const BROWSERBASE_TIMEOUT_S: u64 = 30 * 60;

/// A browser Conch does not launch (BE-1). Its `Debug` shows addresses as [`shown`] does
/// (no path, query or userinfo) and never a key.
#[derive(Clone)]
#[non_exhaustive]
pub enum Remote {
    /// Any browser at a DevTools address (BE-8).
    Cdp(String),
    /// A Browserbase session (BE-6), created at `base` (`https://api.browserbase.com`).
    Browserbase {
        /// The API's address.
        base: String,
        /// The API key.
        key: SecretText,
        /// The project, when the key has several.
        project: Option<String>,
    },
    /// A Steel session (BE-7): the cloud (`https://api.steel.dev`) with a key, or a
    /// self-hosted steel-browser without one.
    Steel {
        /// The API's address.
        base: String,
        /// The API key; `None` for a self-hosted steel-browser.
        key: Option<SecretText>,
        /// Where the cloud takes DevTools connections when a session's answer names no
        /// `websocketUrl`; `None` is [`STEEL_CONNECT`]. (Configurable for tests, as `base`.)
        connect: Option<String>,
    },
    /// The person's own Chrome, through its consented remote-debugging door (BE-10).
    Chrome(OwnChrome),
    /// A pool of browsers at DevTools addresses (issue 32): each conversation (chat or
    /// task) browses in a context of its own, over a connection of its own, on the
    /// least-loaded address, at most `per_endpoint` conversations on each.
    Pool {
        /// The DevTools addresses, as [`Remote::Cdp`] takes them (a token may ride in the
        /// query: they are sealed like any backend address, BE-3).
        endpoints: Vec<String>,
        /// The most conversations on one address at once ([`POOL_PER_ENDPOINT`] by
        /// default).
        per_endpoint: usize,
    },
}

/// How many conversations one address of a pool takes at once, unless the person says
/// otherwise (issue 32).
pub const POOL_PER_ENDPOINT: usize = 4;

/// What the person reads about a pool of `endpoints`: how many, and each one's host.
fn shown_pool(endpoints: &[String]) -> String {
    let hosts: Vec<String> = endpoints.iter().map(|e| shown(e)).collect();
    format!(
        "the pool of {} browser{} ({})",
        endpoints.len(),
        if endpoints.len() == 1 { "" } else { "s" },
        hosts.join(", ")
    )
}

impl Remote {
    /// What the person reads about it: never a key, a path or a query.
    pub fn shown(&self) -> String {
        match self {
            Remote::Cdp(address) => format!("the browser at {}", shown(address)),
            Remote::Browserbase { .. } => "Browserbase".to_owned(),
            Remote::Steel {
                base, key: Some(_), ..
            } => format!("Steel at {}", shown(base)),
            Remote::Steel {
                base, key: None, ..
            } => {
                format!("the steel-browser at {}", shown(base))
            }
            Remote::Chrome(_) => "your Chrome".to_owned(),
            Remote::Pool { endpoints, .. } => shown_pool(endpoints),
        }
    }

    /// Which backend it is (for the status, BE-1).
    pub fn backend(&self) -> Backend {
        match self {
            Remote::Cdp(_) => Backend::Cdp,
            Remote::Browserbase { .. } => Backend::Browserbase,
            Remote::Steel { .. } => Backend::Steel,
            Remote::Chrome(_) => Backend::Chrome,
            Remote::Pool { .. } => Backend::Pool,
        }
    }
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Remote::Cdp(address) => f.debug_tuple("Cdp").field(&shown(address)).finish(),
            Remote::Browserbase { base, key, project } => f
                .debug_struct("Browserbase")
                .field("base", &shown(base))
                .field("key", key)
                .field("project", project)
                .finish(),
            Remote::Steel { base, key, connect } => f
                .debug_struct("Steel")
                .field("base", &shown(base))
                .field("key", key)
                .field("connect", &connect.as_deref().map(shown))
                .finish(),
            Remote::Chrome(own) => f.debug_tuple("Chrome").field(own).finish(),
            Remote::Pool {
                endpoints,
                per_endpoint,
            } => f
                .debug_struct("Pool")
                .field(
                    "endpoints",
                    &endpoints.iter().map(|e| shown(e)).collect::<Vec<_>>(),
                )
                .field("per_endpoint", per_endpoint)
                .finish(),
        }
    }
}

/// A provider's session, to release when Conch lets go (BE-5).
#[derive(Clone)]
pub(crate) struct CloudSession {
    url: String,
    header: Option<(&'static str, SecretText)>,
    body: Value,
    /// How long the provider lets it live at most (Steel's cloud `timeout`).
    lifetime: Option<Duration>,
}

impl CloudSession {
    /// How long the provider lets it live at most from its start, if it says.
    pub(crate) fn lifetime(&self) -> Option<Duration> {
        self.lifetime
    }
}

impl std::fmt::Debug for CloudSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloudSession")
            .field("url", &shown(&self.url))
            .field("header", &self.header)
            .finish_non_exhaustive()
    }
}

/// Whether a provider's key may travel to `url` (BE-6, BE-7): only encrypted (`https`,
/// `wss`), or in plain text to this machine itself (a loopback address or `localhost`,
/// where nothing crosses a network: a self-hosted steel-browser, a pretend provider in
/// tests).
pub fn may_carry_key(url: &Url) -> bool {
    match url.scheme() {
        "https" | "wss" => url.host().is_some(),
        "http" | "ws" => match url.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
            None => false,
        },
        _ => false,
    }
}

/// The sentence for a key Conch will not send to `url`.
fn not_for_key(url: &str) -> RemoteError {
    RemoteError::Provider(format!(
        "{} would get the key in plain text: a key goes only over https (plain http only to this machine); nothing was sent",
        shown(url)
    ))
}

/// A connected remote browser.
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) connection: Connection,
    pub(crate) session: Option<CloudSession>,
}

/// Why a DevTools address could not be used. Each is a phrase for "Conch couldn't reach
/// the browser at … (phrase)".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// Not an `http://`, `ws://` or `wss://` address with a host.
    #[error("{0} is not a DevTools address: use http://host:port, ws://… or wss://…")]
    NotAnAddress(String),
    /// Nothing answered, or the answer was not Chrome's.
    #[error("{0}")]
    Unreachable(String),
    /// The WebSocket did not open.
    #[error("its DevTools socket did not open: {0}")]
    Socket(#[source] conch_cdp::Error),
    /// The provider refused or failed to make a session.
    #[error("{0}")]
    Provider(String),
    /// The person's own Chrome: no door, or one Conch won't use (BE-10).
    #[error("{0}")]
    OwnChrome(#[from] OwnChromeError),
    /// The person's own Chrome did not let Conch in within the wait (BE-10).
    #[error(
        "Chrome did not let Conch in within {0} s: answer “Allow” in its “Allow remote debugging?” dialog, then repair"
    )]
    NotAllowed(u64),
}

#[derive(Deserialize)]
struct Version {
    #[serde(rename = "webSocketDebuggerUrl")]
    socket: Option<String>,
}

/// One entry of `/json/list`.
#[derive(Deserialize)]
struct Listed {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(rename = "webSocketDebuggerUrl")]
    socket: Option<String>,
}

/// The address as a person may show it: scheme, host and port, never a path or a query
/// (a provider's key can ride in the query).
pub fn shown(address: &str) -> String {
    match Url::parse(address) {
        Ok(url) => match (url.host_str(), url.port_or_known_default()) {
            (Some(host), Some(port)) => format!("{}://{host}:{port}", url.scheme()),
            (Some(host), None) => format!("{}://{host}", url.scheme()),
            _ => "that address".to_owned(),
        },
        Err(_) => "that address".to_owned(),
    }
}

/// The WebSocket address behind `address` (BE-8).
///
/// # Errors
/// [`RemoteError::NotAnAddress`] or [`RemoteError::Unreachable`].
pub async fn socket_address(address: &str) -> Result<String, RemoteError> {
    let not_one = || RemoteError::NotAnAddress(shown(address));
    let url = Url::parse(address).map_err(|_| not_one())?;
    let host = url.host_str().ok_or_else(not_one)?.to_owned();
    match url.scheme() {
        "ws" | "wss" => return Ok(address.to_owned()),
        "http" => {}
        _ => return Err(not_one()),
    }
    let port = url.port_or_known_default().ok_or_else(not_one)?;
    // The person's query (a proxy's token) goes with every request and onto the socket.
    let query = url.query().map(|q| format!("?{q}")).unwrap_or_default();
    let version = get(&host, port, &format!("/json/version{query}")).await;
    let named = match version {
        Ok(body) => serde_json::from_slice::<Version>(&body)
            .ok()
            .and_then(|v| v.socket),
        // An answer, but not one naming a socket (a 404): /json/list may.
        Err(RemoteError::Unreachable(why)) if why.starts_with("it answered") => None,
        Err(e) => return Err(e),
    };
    let named = match named {
        Some(socket) => socket,
        // No socket named there: the browser's, else a page's, from /json/list (BE-8).
        None => {
            let listed = get(&host, port, &format!("/json/list{query}")).await;
            let listed: Vec<Listed> = listed
                .ok()
                .and_then(|body| serde_json::from_slice(&body).ok())
                .unwrap_or_default();
            let pick = |kind: &str| {
                listed
                    .iter()
                    .find(|l| l.kind == kind && l.socket.is_some())
                    .and_then(|l| l.socket.clone())
            };
            pick("browser").or_else(|| pick("page")).ok_or_else(|| {
                RemoteError::Unreachable(
                    "what answered there named no DevTools socket in /json/version or /json/list"
                        .to_owned(),
                )
            })?
        }
    };
    let mut socket = Url::parse(&named).map_err(|_| {
        RemoteError::Unreachable("the browser named no usable DevTools socket".to_owned())
    })?;
    let have: Vec<String> = socket.query_pairs().map(|(k, _)| k.into_owned()).collect();
    let extra: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| !have.iter().any(|h| h == k))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    if !extra.is_empty() {
        socket.query_pairs_mut().extend_pairs(extra);
    }
    // The browser names itself as it sees itself; the address that reached it is the one
    // that works from here.
    socket
        .set_host(Some(&host))
        .and_then(|()| {
            socket
                .set_port(Some(port))
                .map_err(|()| url::ParseError::InvalidPort)
        })
        .map_err(|_| not_one())?;
    Ok(socket.into())
}

/// Opens `remote`: makes the provider's session when there is one, then connects. A
/// renewed cloud session (BE-7) starts with the cookies `carry`: Steel's in its
/// `sessionContext`, Browserbase's (whose create takes no cookies) set over DevTools
/// before its first page.
///
/// # Errors
/// [`RemoteError`]: the address, the provider or the socket.
pub(crate) async fn open(
    remote: &Remote,
    probe: &(dyn Probe + Send + Sync),
    carry: &[Value],
) -> Result<Opened, RemoteError> {
    // Cookies set on the new session once connected (Browserbase's renewal).
    let mut set_once_connected: &[Value] = &[];
    let (socket, session) = match remote {
        Remote::Chrome(own) => {
            // One connection, one dialog: no probe of /json/* first, no retry (BE-10).
            let socket = own_chrome::find_socket(own, probe)?;
            let mut config = CdpConfig::default();
            config.connect_timeout = own.allow_within;
            let connection =
                Connection::connect_with(&socket, config)
                    .await
                    .map_err(|e| match e.kind() {
                        conch_cdp::ErrorKind::Timeout { .. } => {
                            RemoteError::NotAllowed(own.allow_within.as_secs())
                        }
                        _ => RemoteError::Socket(e),
                    })?;
            return Ok(Opened {
                connection,
                session: None,
            });
        }
        Remote::Cdp(address) => (socket_address(address).await?, None),
        // The main browser's own connection on a pool, for its status: the first address
        // that answers (each conversation's own is made by the runtime's placement).
        Remote::Pool { endpoints, .. } => {
            let mut last = RemoteError::Unreachable("the pool names no address".to_owned());
            let mut found = None;
            for endpoint in endpoints {
                match socket_address(endpoint).await {
                    Ok(socket) => {
                        found = Some(socket);
                        break;
                    }
                    Err(e) => last = e,
                }
            }
            (found.ok_or(last)?, None)
        }
        Remote::Browserbase { base, key, project } => {
            let mut body = json!({
                "browserSettings": { "viewport": { "width": 1280, "height": 800 } },
                "timeout": BROWSERBASE_TIMEOUT_S,
            });
            set_once_connected = carry;
            if let Some(project) = project {
                body["projectId"] = json!(project);
            }
            let base = base.trim_end_matches('/');
            let made = post(
                &format!("{base}/v1/sessions"),
                Some(("X-BB-API-Key", key)),
                &body,
            )
            .await?;
            let id = field(&made, "id")?;
            let socket = field(&made, "connectUrl")?;
            let session = CloudSession {
                url: format!("{base}/v1/sessions/{id}"),
                header: Some(("X-BB-API-Key", key.clone())),
                body: json!({ "status": "REQUEST_RELEASE" }),
                lifetime: Some(Duration::from_secs(BROWSERBASE_TIMEOUT_S)),
            };
            (socket, Some(session))
        }
        Remote::Steel { base, key, connect } => {
            let base = base.trim_end_matches('/');
            let header = key.as_ref().map(|k| ("steel-api-key", k.clone()));
            let mut body = json!({ "dimensions": { "width": 1280, "height": 800 } });
            if key.is_some() {
                // The cloud's lifetime in ms; a self-hosted steel-browser has none.
                body["timeout"] = json!(STEEL_TIMEOUT_MS);
                // A renewed session starts signed in where the one it replaces was.
                if !carry.is_empty() {
                    let cookies: Vec<Value> = carry.iter().map(steel_cookie).collect();
                    body["sessionContext"] = json!({ "cookies": cookies });
                }
            }
            let made = post(
                &format!("{base}/v1/sessions"),
                header.as_ref().map(|(name, k)| (*name, k)),
                &body,
            )
            .await?;
            let id = field(&made, "id")?;
            let socket = steel_socket(&made, &id, base, key.as_ref(), connect.as_deref())?;
            let session = CloudSession {
                url: format!("{base}/v1/sessions/{id}/release"),
                lifetime: key
                    .is_some()
                    .then(|| Duration::from_millis(STEEL_TIMEOUT_MS)),
                header,
                body: json!({}),
            };
            (socket.into(), Some(session))
        }
    };
    let connection = connect_socket(&socket).await;
    if let Ok(connection) = &connection
        && !set_once_connected.is_empty()
    {
        let cookies: Vec<Value> = set_once_connected.iter().map(steel_cookie).collect();
        if let Err(e) = connection
            .browser()
            .call_raw("Storage.setCookies", json!({ "cookies": cookies }))
            .await
        {
            tracing::warn!(target: "conch_browser", error = %e, "the renewed cloud session could not be given the old one's cookies; it starts signed out");
        }
    }
    match connection {
        Ok(connection) => Ok(Opened {
            connection,
            session,
        }),
        Err(e) => {
            if let Some(session) = &session {
                release(session).await;
            }
            Err(e)
        }
    }
}

/// The DevTools socket of the Steel session `made` (id `id`) made at `base` (BE-7): its
/// `websocketUrl` (a self-hosted steel-browser's `0.0.0.0` replaced by the host reached),
/// else the cloud's `{connect}?apiKey=…&sessionId=…`, else, self-hosted, the API's own
/// address as `ws://`. The key is added as `apiKey` where it is missing.
///
/// # Errors
/// [`RemoteError::Provider`] when no usable address results.
pub fn steel_socket(
    made: &Value,
    id: &str,
    base: &str,
    key: Option<&SecretText>,
    connect: Option<&str>,
) -> Result<Url, RemoteError> {
    let unusable = || RemoteError::Provider("Steel named no usable DevTools socket".to_owned());
    let mut socket = match made["websocketUrl"].as_str().filter(|s| !s.is_empty()) {
        Some(named) => {
            let mut socket = Url::parse(named).map_err(|_| unusable())?;
            // A self-hosted steel-browser names itself as it listens (`0.0.0.0`).
            if socket.host_str() == Some("0.0.0.0")
                && let Some(host) = Url::parse(base)
                    .ok()
                    .and_then(|b| b.host_str().map(str::to_owned))
            {
                let _ = socket.set_host(Some(&host));
            }
            socket
        }
        None if key.is_some() => {
            let mut socket =
                Url::parse(connect.unwrap_or(STEEL_CONNECT)).map_err(|_| unusable())?;
            socket.query_pairs_mut().append_pair("sessionId", id);
            socket
        }
        None => {
            let mut socket = Url::parse(base).map_err(|_| unusable())?;
            let scheme = if socket.scheme() == "https" {
                "wss"
            } else {
                "ws"
            };
            socket.set_scheme(scheme).map_err(|()| unusable())?;
            socket.set_path("/");
            socket
        }
    };
    if !matches!(socket.scheme(), "ws" | "wss") {
        return Err(unusable());
    }
    if let Some(key) = key
        && !socket.query_pairs().any(|(k, _)| k == "apiKey")
    {
        // The key goes only to the host it was saved for (the API's) or the cloud's own
        // connect address, and never in plain text over a network (BE-7).
        let host_of = |address: &str| {
            Url::parse(address)
                .ok()
                .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        };
        let host = socket.host_str().map(str::to_ascii_lowercase);
        let its_own = host.is_some()
            && (host == host_of(base) || host == host_of(connect.unwrap_or(STEEL_CONNECT)));
        if !its_own {
            return Err(RemoteError::Provider(format!(
                "Steel named a DevTools socket at {}, a host the key was not saved for; nothing was sent",
                shown(socket.as_str())
            )));
        }
        if !may_carry_key(&socket) {
            return Err(not_for_key(socket.as_str()));
        }
        socket.query_pairs_mut().append_pair("apiKey", key.expose());
    }
    Ok(socket)
}

/// A CDP `Network.Cookie` as Steel's `sessionContext.cookies` and `Storage.setCookies`
/// take it: the fields they name alike; `expires` only for a cookie that is not a session
/// cookie.
fn steel_cookie(cookie: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for field in [
        "name", "value", "domain", "path", "httpOnly", "secure", "sameSite",
    ] {
        if let Some(value) = cookie.get(field) {
            out.insert(field.to_owned(), value.clone());
        }
    }
    if cookie["session"] == json!(false)
        && let Some(expires) = cookie.get("expires")
    {
        out.insert("expires".to_owned(), expires.clone());
    }
    Value::Object(out)
}

/// Releases a provider's session (BE-5); a failure is logged, not fatal: the provider's
/// own timeout ends it.
pub(crate) async fn release(session: &CloudSession) {
    let header = session.header.as_ref().map(|(name, k)| (*name, k));
    if let Err(e) = post(&session.url, header, &session.body).await {
        tracing::warn!(target: "conch_browser", error = %e, "the cloud session could not be released");
    }
}

/// A string field of a provider's answer.
fn field(answer: &Value, name: &str) -> Result<String, RemoteError> {
    answer[name]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| RemoteError::Provider(format!("the provider's answer has no {name}")))
}

/// POSTs `body` as JSON to `url` with the key header; the answer's JSON.
async fn post(
    url: &str,
    key: Option<(&str, &SecretText)>,
    body: &Value,
) -> Result<Value, RemoteError> {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    let client = reqwest::Client::builder()
        .connect_timeout(REACH_WITHIN)
        .timeout(REACH_WITHIN * 3)
        .user_agent(concat!("conch/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| RemoteError::Provider(format!("no HTTP client ({e})")))?;
    if key.is_some() && !Url::parse(url).is_ok_and(|u| may_carry_key(&u)) {
        return Err(not_for_key(url));
    }
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some((name, key)) = key {
        request = request.header(name, key.expose());
    }
    let shown_url = shown(url);
    let answer = request.send().await.map_err(|e| {
        RemoteError::Provider(format!("{shown_url} did not answer ({})", e.without_url()))
    })?;
    let status = answer.status();
    let bytes = answer.bytes().await.map_err(|e| {
        RemoteError::Provider(format!("{shown_url} broke off ({})", e.without_url()))
    })?;
    if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
        return Err(RemoteError::Provider(format!(
            "{shown_url} refused the saved key (HTTP {}); set it again with conch-gateway backend set",
            status.as_u16()
        )));
    }
    if !status.is_success() {
        return Err(RemoteError::Provider(format!(
            "{shown_url} answered HTTP {}",
            status.as_u16()
        )));
    }
    serde_json::from_slice(&bytes).map_err(|_| {
        RemoteError::Provider(format!("{shown_url} answered something other than JSON"))
    })
}

/// Connects to the DevTools socket `socket`.
async fn connect_socket(socket: &str) -> Result<Connection, RemoteError> {
    let mut config = CdpConfig::default();
    config.connect_timeout = REACH_WITHIN;
    Connection::connect_with(socket, config)
        .await
        .map_err(RemoteError::Socket)
}

/// Whether `answer` holds a whole HTTP answer: its head and as many body bytes as its
/// Content-Length says.
fn complete(answer: &[u8]) -> bool {
    let Some(split) = answer.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&answer[..split]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok());
    length.is_some_and(|length| answer.len() >= split + 4 + length)
}

/// A plain HTTP/1.1 GET of `path` on `host:port`, its body.
async fn get(host: &str, port: u16, path: &str) -> Result<Vec<u8>, RemoteError> {
    let failed = |e: std::io::Error| RemoteError::Unreachable(format!("nothing answered ({e})"));
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect((host, port))
            .await
            .map_err(failed)?;
        let authority = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.map_err(failed)?;
        // Chrome's DevTools server keeps the connection open whatever the request says:
        // the answer ends where its Content-Length says.
        let mut answer = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            let n = stream.read(&mut chunk).await.map_err(failed)?;
            answer.extend_from_slice(&chunk[..n]);
            if n == 0 || complete(&answer) || answer.len() as u64 > MAX_VERSION_ANSWER {
                break;
            }
        }
        Ok::<_, RemoteError>(answer)
    };
    let answer = tokio::time::timeout(REACH_WITHIN, exchange)
        .await
        .map_err(|_| {
            RemoteError::Unreachable(format!(
                "nothing answered within {} s",
                REACH_WITHIN.as_secs()
            ))
        })??;
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| RemoteError::Unreachable("the answer was not HTTP".to_owned()))?;
    let head = String::from_utf8_lossy(&answer[..split]);
    if !head.starts_with("HTTP/1.1 200") && !head.starts_with("HTTP/1.0 200") {
        let status = head.lines().next().unwrap_or_default().to_owned();
        return Err(RemoteError::Unreachable(format!(
            "it answered {}",
            status.trim()
        )));
    }
    Ok(answer[split + 4..].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny DevTools HTTP stand-in: `version` and `list` are the bodies of
    /// `/json/version` and `/json/list` (`None`: 404); gives its port and the request
    /// lines it saw.
    async fn devtools_http(
        version: Option<&'static str>,
        list: &'static str,
    ) -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let port = listener.local_addr().expect("addr").port();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let lines = std::sync::Arc::clone(&seen);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut buf = [0u8; 4096];
                let n = stream.read(&mut buf).await.unwrap_or(0);
                let line = String::from_utf8_lossy(&buf[..n])
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                let body = if line.contains("/json/version") {
                    version
                } else if line.contains("/json/list") {
                    Some(list)
                } else {
                    None
                };
                lines.lock().expect("lines").push(line);
                let answer = match body {
                    Some(body) => format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    ),
                    None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_owned(),
                };
                let _ = stream.write_all(answer.as_bytes()).await;
            }
        });
        (port, seen)
    }

    #[tokio::test]
    async fn be_8_without_a_socket_in_json_version_json_list_names_it_and_the_query_is_kept() {
        let list = r#"[{"type":"page","webSocketDebuggerUrl":"ws://127.0.0.1:1/devtools/page/P"},
            {"type":"browser","webSocketDebuggerUrl":"ws://0.0.0.0:1/devtools/browser/B"}]"#;
        let (port, seen) = devtools_http(Some(r#"{"Browser":"Chrome/150"}"#), list).await;
        let socket = socket_address(&format!("http://127.0.0.1:{port}/?token=T"))
            .await
            .expect("a socket");
        assert_eq!(
            socket,
            format!("ws://127.0.0.1:{port}/devtools/browser/B?token=T")
        );
        let lines = seen.lock().expect("lines").clone();
        assert!(
            lines[0].starts_with("GET /json/version?token=T ")
                && lines[1].starts_with("GET /json/list?token=T "),
            "{lines:?}"
        );
        // A 404 at /json/version, and only pages listed: a page's socket.
        let pages =
            r#"[{"type":"page","webSocketDebuggerUrl":"ws://127.0.0.1:1/devtools/page/P"}]"#;
        let (port, _) = devtools_http(None, pages).await;
        let socket = socket_address(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("a socket");
        assert_eq!(socket, format!("ws://127.0.0.1:{port}/devtools/page/P"));
        // Nothing named anywhere: one sentence.
        let (port, _) = devtools_http(None, "[]").await;
        let e = socket_address(&format!("http://127.0.0.1:{port}"))
            .await
            .expect_err("no socket");
        assert!(e.to_string().contains("/json/list"), "{e}");
    }

    #[tokio::test]
    async fn be_8_the_query_of_an_http_address_is_kept_on_the_socket_json_version_names() {
        let (port, _) = devtools_http(
            Some(r#"{"webSocketDebuggerUrl":"ws://127.0.0.1:1/devtools/browser/B"}"#),
            "[]",
        )
        .await;
        let socket = socket_address(&format!("http://127.0.0.1:{port}/?token=T&x=1"))
            .await
            .expect("a socket");
        assert_eq!(
            socket,
            format!("ws://127.0.0.1:{port}/devtools/browser/B?token=T&x=1")
        );
    }

    #[test]
    fn be_7_without_a_websocket_url_steel_cloud_is_reached_at_connect_steel_dev() {
        let key = SecretText::new("st-key".to_owned());
        let made = json!({ "id": "s-1", "status": "live" });
        let socket = steel_socket(&made, "s-1", "https://api.steel.dev", Some(&key), None)
            .expect("an address");
        assert_eq!(
            socket.as_str(),
            "wss://connect.steel.dev/?sessionId=s-1&apiKey=st-key"
        );
        let socket = steel_socket(
            &made,
            "s-1",
            "https://api.steel.dev",
            Some(&key),
            Some("ws://127.0.0.1:9/"),
        )
        .expect("an address");
        assert_eq!(
            socket.as_str(),
            "ws://127.0.0.1:9/?sessionId=s-1&apiKey=st-key"
        );
        // Self-hosted, no key: the API's own address, as a socket.
        let socket =
            steel_socket(&made, "s-1", "http://10.1.2.3:3000", None, None).expect("an address");
        assert_eq!(socket.as_str(), "ws://10.1.2.3:3000/");
        // A named socket wins, its key added once.
        let named =
            json!({ "id": "s-1", "websocketUrl": "wss://x.example/?sessionId=s-1&apiKey=st-key" });
        let socket = steel_socket(&named, "s-1", "https://api.steel.dev", Some(&key), None)
            .expect("an address");
        assert_eq!(
            socket.as_str(),
            "wss://x.example/?sessionId=s-1&apiKey=st-key"
        );
    }

    /// BE-3, PROTO-10: `Debug` of any backend value shows no key and no token, neither in
    /// a DevTools address's query nor in its userinfo.
    #[test]
    fn be_3_debug_of_a_backend_shows_no_key_token_or_userinfo() {
        const CANARY: &str = "CANARY-dbg-5e1";
        let key = || SecretText::new(CANARY.to_owned());
        let values = [
            Remote::Cdp(format!(
                "wss://me:{CANARY}@cdp.example/devtools?token={CANARY}"
            )),
            Remote::Cdp(format!("http://127.0.0.1:9222/?token={CANARY}")),
            Remote::Browserbase {
                base: format!("https://u:{CANARY}@api.browserbase.com/?k={CANARY}"),
                key: key(),
                project: Some("p-1".to_owned()),
            },
            Remote::Steel {
                base: "https://api.steel.dev".to_owned(),
                key: Some(key()),
                connect: Some(format!("wss://connect.steel.dev/?apiKey={CANARY}")),
            },
        ];
        for value in &values {
            let shown = format!("{value:?} {value:#?}");
            assert!(!shown.contains(CANARY), "{shown}");
        }
        let session = CloudSession {
            url: format!("https://u:{CANARY}@api.steel.dev/v1/sessions/s/release"),
            header: Some(("steel-api-key", key())),
            body: json!({}),
            lifetime: None,
        };
        let shown = format!("{session:?}");
        assert!(!shown.contains(CANARY), "{shown}");
        // What the value is stays readable.
        assert!(format!("{:?}", values[0]).contains("cdp.example"));
    }

    /// BE-6, BE-7: a key travels only encrypted, or in plain text to this machine itself.
    #[test]
    fn be_6_a_key_goes_only_over_https_or_to_this_machine() {
        for yes in [
            "https://api.browserbase.com",
            "wss://connect.steel.dev/",
            "http://127.0.0.1:3000",
            "ws://[::1]:9/",
            "http://localhost:1",
        ] {
            assert!(may_carry_key(&Url::parse(yes).expect("a url")), "{yes}");
        }
        for no in [
            "http://api.browserbase.com",
            "ws://connect.steel.dev/",
            "http://10.1.2.3:3000",
            "http://127.0.0.1.example:3000",
            "ftp://127.0.0.1/",
        ] {
            assert!(!may_carry_key(&Url::parse(no).expect("a url")), "{no}");
        }
    }

    /// BE-7: the key is added only to a socket on the host it was saved for (the API's, or
    /// the cloud's connect address), never to another host or a plain ws:// over a network.
    #[test]
    fn be_7_steel_adds_the_key_to_no_other_host() {
        let key = SecretText::new("st-key".to_owned());
        let elsewhere = json!({ "id": "s-1", "websocketUrl": "wss://evil.example/?sessionId=s-1" });
        let e = steel_socket(&elsewhere, "s-1", "https://api.steel.dev", Some(&key), None)
            .expect_err("another host");
        assert!(!e.to_string().contains("st-key"), "{e}");
        let plain = json!({ "id": "s-1", "websocketUrl": "ws://connect.steel.dev/?sessionId=s-1" });
        let e = steel_socket(&plain, "s-1", "https://api.steel.dev", Some(&key), None)
            .expect_err("plain text over a network");
        assert!(e.to_string().contains("plain text"), "{e}");
        let own = json!({ "id": "s-1", "websocketUrl": "wss://connect.steel.dev/?sessionId=s-1" });
        assert!(
            steel_socket(&own, "s-1", "https://api.steel.dev", Some(&key), None)
                .is_ok_and(|s| s.as_str().ends_with("apiKey=st-key"))
        );
    }

    /// BE-6: `post` refuses to send a key in plain text to an address that is not
    /// loopback before it connects. `0.0.0.0` is such an address, yet Linux takes a
    /// connection to it to this machine: a listener on 127.0.0.1 there must see nothing.
    #[tokio::test]
    async fn be_6_a_key_is_not_posted_over_plain_http_to_another_machine() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let port = listener.local_addr().expect("addr").port();
        let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = std::sync::Arc::clone(&seen);
        tokio::spawn(async move {
            while listener.accept().await.is_ok() {
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        });
        let key = SecretText::new("CANARY-post-k".to_owned());
        let e = post(
            &format!("http://0.0.0.0:{port}/v1/sessions"),
            Some(("X-BB-API-Key", &key)),
            &json!({}),
        )
        .await
        .expect_err("refused");
        assert!(e.to_string().contains("nothing was sent"), "{e}");
        assert!(!e.to_string().contains("CANARY"), "{e}");
        assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 0);
    }

    #[test]
    fn be_8_an_address_is_shown_without_its_path_or_query() {
        assert_eq!(
            shown("wss://connect.example.com/?apiKey=SECRET&sessionId=1"),
            "wss://connect.example.com:443"
        );
        assert_eq!(shown("http://127.0.0.1:9222"), "http://127.0.0.1:9222");
        assert_eq!(shown("not an address"), "that address");
    }

    #[tokio::test]
    async fn be_8_only_devtools_schemes_are_taken() {
        for bad in ["file:///tmp/x", "ftp://host:21", "nonsense"] {
            let e = socket_address(bad).await.expect_err(bad);
            assert!(matches!(e, RemoteError::NotAnAddress(_)), "{bad}: {e}");
        }
        assert_eq!(
            socket_address("ws://127.0.0.1:9/devtools/browser/x")
                .await
                .expect("taken as given"),
            "ws://127.0.0.1:9/devtools/browser/x"
        );
    }
}
