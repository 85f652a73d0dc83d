//! The settings and health API (PROTO-10, AMB-23): what the person sees and changes on the
//! panel's Settings page. The gateway only routes: the rules stay in conch-browser
//! (browser.json, repair, health, the checkup) and conch-policy (allowed hosts).
//!
//! - `GET /api/browser/settings`: the backend's kind and host, and whether a key is saved,
//!   never the key or the full address (BE-3); `declineCookieBanners`, `allowLocalhost`,
//!   `allowHosts`, `searchUrl`, the always-allowed sites, the recorded user agents, what
//!   this run uses (the gateway's flags override browser.json for a run, DATA-5), and the
//!   statements the page shows (NET-12, HS-9, BE-17).
//! - `PATCH /api/browser/settings`: a JSON merge of the changeable fields. A body that
//!   names `backend` or `sites` gets 400 with a sentence, and nothing changes (BE-2).
//! - `PUT /api/browser/backend`: the only way to change the backend (BE-2). Anything but
//!   local needs a recent sign-in ([`RecentAuth`]): 403 without.
//! - `GET /api/browser/status`: what runs and why (LAUNCH-13), the health check, the
//!   checkup's flagged items, health notes, the backup manifest (PROTO-11) and what
//!   the conversations' results cost so far (`spent`, one line, issue 31).
//! - `POST /api/browser/repair`: every fix in turn with each step's outcome; the profile
//!   is wiped as the last step only when the body carries the person's yes,
//!   `{"wipeProfile": true}` (LAUNCH-14).
//! - `DELETE /api/browser/sites/{site}`: revokes the site; the next act on it asks again
//!   (PERM-7).
//! - `POST /api/browser/sign-out`: wipes the profile only with `{"confirm": true}`, which
//!   the page sends after the person confirmed; without it nothing is wiped (DATA-4).
//! - `POST /api/browser/sign-in-again`: prints a new one-time sign-in link on the
//!   gateway's standard error, as at start, so the person can sign in recently without a
//!   restart; the link never goes back to the page (AMB-2).
//!
//! Every route needs the panel's sign-in and the gateway's own `Host`; every route that
//! changes something also needs the gateway's own `Origin`, so a page elsewhere can't
//! forge one (AMB-2). The panel page is the person's door here: its confirmations are the
//! person's answers, as a card's are.
//!
//! Deliberately absent: any way to read a key back, to add a site (only the person's
//! Always on a card adds one, PERM-6), or to change what this run's guard allows while it
//! runs (local-access changes take effect when the gateway next starts).

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use conch_browser::remote::Remote;
use conch_browser::reports::{HostReports, NO_PROXY_RISK, OWN_CHROME_RISK};
use conch_browser::seal::{KeyPlace, SecretEntry, SecretText};
use conch_browser::store::{Backend, BrowserSettings, UpdateError};
use conch_browser::{Browser, Home, RunState};
use conch_policy::AllowedHost;
use serde_json::{Map, Value, json};

use crate::door::{Panel, answer, refuse};

/// Why the person's choice of browser could not be read or saved: the sentence that says
/// what was wrong, as the embedder's [`BackendChoice`] gives it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ChoiceError(pub String);

/// How the embedder keeps the person's choice of browser (BE-1, BE-2, BE-3): the same
/// rules as its command line's, so the Settings page and the command save alike.
/// Without one ([`Panel::set_backend_choice`]), the page shows the backend's kind only
/// and refuses to change it.
pub trait BackendChoice: std::fmt::Debug + Send + Sync {
    /// What is sealed for the backends: each entry's name, kind and host, never a key.
    ///
    /// # Errors
    /// [`ChoiceError`] when the sealed file can't be read.
    fn saved(&self, home: &Home) -> Result<Vec<SecretEntry>, ChoiceError>;

    /// Saves the choice: the key and the address sealed, the backend in browser.json.
    /// Gives what was saved, line by line, never a key or a full address.
    ///
    /// # Errors
    /// [`ChoiceError`] with nothing saved, saying what was wrong.
    fn save(
        &self,
        home: &Home,
        backend: Backend,
        url: Option<String>,
        project: Option<String>,
        key: Option<SecretText>,
    ) -> Result<Vec<String>, ChoiceError>;

    /// The remote browser the saved choice gives the runtime, if any, and a sentence when
    /// the choice can't be driven.
    fn remote(&self, home: &Home) -> (Option<Remote>, Option<String>);

    /// Saves a pool of browsers (issue 32): each DevTools address sealed, at most
    /// `per_endpoint` conversations on each (the embedder's default when `None`). Gives
    /// what was saved, hosts only. An embedder that keeps no pool refuses it.
    ///
    /// # Errors
    /// [`ChoiceError`] with nothing saved, saying what was wrong.
    fn save_pool(
        &self,
        _home: &Home,
        _endpoints: Vec<String>,
        _per_endpoint: Option<String>,
    ) -> Result<Vec<String>, ChoiceError> {
        Err(ChoiceError("this app keeps no pool of browsers".to_owned()))
    }
}

/// How long a sign-in counts as recent for changing the backend (AMB-2).
pub(crate) const RECENT: Duration = Duration::from_secs(5 * 60);

/// Whether the person signed in recently enough to change the backend to anything but
/// local (BE-2). The embedder decides; the gateway's default is [`SignedInWithin`].
pub(crate) trait RecentAuth: std::fmt::Debug + Send + Sync {
    /// Whether a session that signed in at `signed_in_at` counts as a recent sign-in.
    fn is_recent(&self, signed_in_at: Instant) -> bool;
}

/// The default [`RecentAuth`]: signed in to the panel within `window` (5 minutes) of
/// `now()`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SignedInWithin {
    pub(crate) window: Duration,
    pub(crate) now: fn() -> Instant,
}

impl Default for SignedInWithin {
    fn default() -> Self {
        SignedInWithin {
            window: RECENT,
            now: Instant::now,
        }
    }
}

impl RecentAuth for SignedInWithin {
    fn is_recent(&self, signed_in_at: Instant) -> bool {
        (self.now)().saturating_duration_since(signed_in_at) <= self.window
    }
}

/// NET-12: the local browser is hardened, not sandboxed.
pub(crate) const HARDENING: &str = "Conch's own browser is hardened, not sandboxed: it runs as you, on your computer, with its own profile and every connection past Conch's guard. For stronger containment, use a remote browser (a cloud browser or a DevTools address) or run Conch in a virtual machine.";

/// HS-9, AMB-1: the residual risks, in words, with what the guard cannot hold where no
/// proxy stands in front of the browser.
pub(crate) const RESIDUAL_RISKS: [&str; 5] = [
    "A site you approved can still steer the agent within that site.",
    "A page can leak what the agent read through the addresses it makes the agent open.",
    "A “Buy” painted on a canvas is guarded only by the site question and the agent's own description of what it clicks.",
    "A vaguely worded question from a page (“Continue?”) on a site you allowed is answered OK.",
    NO_PROXY_RISK,
];

/// Issue 32 (AMB-1): what the guard cannot hold on a pool of remote browsers, where no
/// proxy of Conch's stands in front and only DevTools is in its hands.
pub(crate) const POOL_RISK: &str = "On a pool of remote browsers, Conch's proxy cannot stand in front of them: Conch judges each request and WebSocket through DevTools alone, and what it cannot enforce there is this: site names are resolved by the remote machines, whose network may answer with an address on their own network; traffic outside what DevTools intercepts (a bare connection opened before Conch refuses it, WebRTC, the browser's own background requests) is not seen; and the machines of the pool, and whoever runs them, see every page each conversation opens.";

/// The settings routes' state: the panel (sign-in, host and origin checks, the tools) and
/// who judges a recent sign-in. Changes to browser.json go through
/// [`BrowserSettings::update`], so two never write over each other.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    panel: Panel,
    recent: Arc<dyn RecentAuth>,
}

impl Settings {
    /// The settings of `panel`, with the default [`RecentAuth`].
    pub(crate) fn new(panel: Panel) -> Settings {
        Settings::with_recent_auth(panel, Arc::new(SignedInWithin::default()))
    }

    /// The settings of `panel`, judging recent sign-ins with `recent`.
    pub(crate) fn with_recent_auth(panel: Panel, recent: Arc<dyn RecentAuth>) -> Settings {
        Settings { panel, recent }
    }

    /// The tools, for a signed-in request on the own host (and, when `changes`, the own
    /// origin); else the refusal to send.
    fn check(&self, headers: &HeaderMap, changes: bool) -> Result<&conch_tools::Tools, Refused> {
        if let Some(refused) = self.panel.refusal(headers) {
            return Err(refused.into());
        }
        if changes && !self.panel.own_origin(headers) {
            return Err(Refused::from(refuse(
                StatusCode::FORBIDDEN,
                "Forbidden: only the gateway's own pages may change Conch's settings.",
            )));
        }
        self.panel.tools().ok_or_else(|| {
            refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                "Conch is still starting; try again in a moment.",
            )
            .into()
        })
    }

    /// The tools and the body's fields, for a change (`PATCH`, `PUT`, `POST`): a
    /// signed-in request from the own origin with a JSON object; else the refusal.
    fn change_of(
        &self,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> Result<(&conch_tools::Tools, Map<String, Value>), Refused> {
        Ok((self.check(headers, true)?, object(body)?))
    }
}

/// The settings routes, on the panel's listener.
pub(crate) fn router(settings: Settings) -> Router {
    Router::new()
        .route("/api/browser/settings", get(read).patch(change))
        .route("/api/browser/backend", put(choose_backend))
        .route("/api/browser/status", get(status))
        .route("/api/browser/repair", post(repair))
        .route("/api/browser/sites/{site}", delete(revoke_site))
        .route("/api/browser/sign-out", post(sign_out))
        .route("/api/browser/sign-in-again", post(sign_in_again))
        .with_state(settings)
}

/// A refusal on its way back: boxed, as a response is large.
#[derive(Debug)]
struct Refused(Box<Response>);

impl From<Response> for Refused {
    fn from(response: Response) -> Self {
        Refused(Box::new(response))
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        *self.0
    }
}

/// A 400 with `sentence` as JSON (`{"error": …}`).
fn bad_request(sentence: &str) -> Response {
    answer(StatusCode::BAD_REQUEST, &json!({ "error": sentence }))
}

/// The body as a JSON object (an empty body is an empty object); else the 400 to send.
fn object(body: &Bytes) -> Result<Map<String, Value>, Refused> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(fields)) => Ok(fields),
        _ => Err(bad_request(
            "The body must be a JSON object, like {\"allowLocalhost\": true}; nothing was changed.",
        )
        .into()),
    }
}

fn load(browser: &Browser) -> Result<BrowserSettings, Refused> {
    BrowserSettings::load(&browser.config().home, browser.config().clock.as_ref())
        .map(|loaded| loaded.value)
        .map_err(|e| {
            refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("Conch's settings could not be read: failed to {e}."),
            )
            .into()
        })
}

/// The backend as the page shows it: its kind, the host it is reached at and whether a
/// key and an address are saved; never a key or a full address (BE-3).
fn backend_view(choice: Option<&dyn BackendChoice>, browser: &Browser, backend: Backend) -> Value {
    let name = backend.as_str();
    let mut host: Option<String> = None;
    let (mut key_saved, mut address_saved) = (false, false);
    let saved = match choice {
        Some(choice) => choice.saved(&browser.config().home),
        None => Ok(Vec::new()),
    };
    match saved {
        Ok(inventory) => {
            for entry in inventory {
                if entry.name != name && entry.name != format!("{name}-base") {
                    continue;
                }
                match entry.kind.as_str() {
                    "api key" => key_saved = true,
                    "address" => address_saved = true,
                    _ => {}
                }
                if host.is_none() || entry.kind == "address" {
                    host = Some(host_only(&entry.host));
                }
            }
        }
        Err(e) => tracing::warn!("the sealed backend file can't be read for the settings: {e}"),
    }
    // A pool's addresses, each by its host only (issue 32, BE-3).
    let hosts: Vec<String> = match (backend, choice) {
        (Backend::Pool, Some(choice)) => choice
            .saved(&browser.config().home)
            .unwrap_or_default()
            .into_iter()
            .filter(|e| e.name.starts_with("pool-") && e.kind == "address")
            .map(|e| host_only(&e.host))
            .collect(),
        _ => Vec::new(),
    };
    if backend == Backend::Pool && !hosts.is_empty() {
        host = hosts.first().cloned();
        address_saved = true;
    }
    json!({
        "kind": name,
        "host": host,
        "hosts": hosts,
        "keySaved": key_saved,
        "addressSaved": address_saved,
    })
}

/// `host[:port]` of a shown address, never its scheme's user, path or query.
fn host_only(shown: &str) -> String {
    match url::Url::parse(shown) {
        Ok(url) => match (url.host_str(), url.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            _ => String::new(),
        },
        Err(_) => shown.to_owned(),
    }
}

/// The settings as `GET /api/browser/settings` gives them.
fn settings_view(
    choice: Option<&dyn BackendChoice>,
    tools: &conch_tools::Tools,
    settings: &BrowserSettings,
) -> Value {
    let browser = tools.browser();
    let config = tools.config();
    json!({
        "backend": backend_view(choice, browser, settings.backend),
        "declineCookieBanners": settings.decline_cookie_banners,
        "allowLocalhost": settings.allow_localhost,
        "allowHosts": settings.allow_hosts,
        "searchUrl": settings.search_url,
        "sites": settings.sites,
        "userAgents": settings.user_agents,
        "thisRun": {
            "allowLocalhost": config.net.allow_localhost,
            "allowHosts": config.net.allow_hosts.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "searchUrl": config.search_url,
        },
        "statements": {
            "hardening": HARDENING,
            "residualRisks": RESIDUAL_RISKS,
            "ownChrome": OWN_CHROME_RISK,
            "pool": POOL_RISK,
        },
    })
}

/// `GET /api/browser/settings`.
async fn read(State(settings): State<Settings>, headers: HeaderMap) -> Result<Response, Refused> {
    let tools = settings.check(&headers, false)?;
    let saved = load(tools.browser())?;
    Ok(answer(
        StatusCode::OK,
        &settings_view(settings.panel.backend_choice(), tools, &saved),
    ))
}

/// The sentence for a PATCH that names a field it may not change; `None` for a field it
/// may.
fn unchangeable(field: &str) -> Option<String> {
    match field {
        "backend" => Some(
            "The backend can't be changed here: choose it with PUT /api/browser/backend (the Browser section of the settings page); nothing was changed.".to_owned(),
        ),
        "sites" => Some(
            "The always-allowed sites can't be changed here: revoke one with DELETE /api/browser/sites/SITE, and only your Always on a question adds one; nothing was changed.".to_owned(),
        ),
        "declineCookieBanners" | "allowLocalhost" | "allowHosts" | "searchUrl" => None,
        other => Some(format!(
            "“{other}” is not a setting that can be changed; the changeable ones are declineCookieBanners, allowLocalhost, allowHosts and searchUrl; nothing was changed."
        )),
    }
}

/// Applies `fields` to `settings`, every one checked first; the sentence of the first
/// problem otherwise, with `settings` left as it was.
fn merge(settings: &mut BrowserSettings, fields: &Map<String, Value>) -> Result<(), String> {
    // Fields that may not change are refused before anything else, whatever else comes.
    for field in ["backend", "sites"] {
        if fields.contains_key(field) {
            return Err(unchangeable(field).unwrap_or_default());
        }
    }
    let mut next = settings.clone();
    for (field, value) in fields {
        if let Some(sentence) = unchangeable(field) {
            return Err(sentence);
        }
        let wrong = |what: &str| format!("{field} must be {what}; nothing was changed.");
        match field.as_str() {
            "declineCookieBanners" => {
                next.decline_cookie_banners =
                    value.as_bool().ok_or_else(|| wrong("true or false"))?;
            }
            "allowLocalhost" => {
                next.allow_localhost = value.as_bool().ok_or_else(|| wrong("true or false"))?;
            }
            "allowHosts" => {
                let list = value
                    .as_array()
                    .ok_or_else(|| wrong("a list of HOST:PORT entries"))?;
                let mut hosts = Vec::new();
                for entry in list {
                    let text = entry
                        .as_str()
                        .ok_or_else(|| wrong("a list of HOST:PORT entries"))?;
                    let host = AllowedHost::parse(text.trim()).map_err(|_| {
                        format!(
                            "“{text}” is not a local app's HOST:PORT (like localhost:3000); nothing was changed."
                        )
                    })?;
                    let host = host.to_string();
                    if !hosts.contains(&host) {
                        hosts.push(host);
                    }
                }
                next.allow_hosts = hosts;
            }
            _ => {
                let text = value
                    .as_str()
                    .ok_or_else(|| wrong("an address with %s where the words go"))?
                    .trim();
                let web = url::Url::parse(&text.replace("%s", "x"))
                    .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some());
                if !web || !text.contains("%s") {
                    return Err(wrong(
                        "an http or https address with %s where the words go, like https://duckduckgo.com/?q=%s",
                    ));
                }
                text.clone_into(&mut next.search_url);
            }
        }
    }
    *settings = next;
    Ok(())
}

/// `PATCH /api/browser/settings`: a merge of the changeable fields.
async fn change(
    State(settings): State<Settings>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, Refused> {
    let (tools, fields) = settings.change_of(&headers, &body)?;
    let config = tools.browser().config();
    let saved = BrowserSettings::update(&config.home, config.clock.as_ref(), |s| {
        merge(s, &fields).map(|()| true)
    })
    .map_err(|e| match e {
        UpdateError::Refused(sentence) => Refused::from(bad_request(&sentence)),
        UpdateError::Store(e) => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("Conch's settings could not be saved: failed to {e}; nothing was changed."),
        )
        .into(),
    })?;
    tracing::info!(fields = ?fields.keys().collect::<Vec<_>>(), "the person changed the settings");
    let mut view = settings_view(settings.panel.backend_choice(), tools, &saved);
    view["said"] = json!(
        "Saved. Changes to local access and the search address take effect when conch-gateway next starts."
    );
    Ok(answer(StatusCode::OK, &view))
}

/// `PUT /api/browser/backend`: `{"backend": KIND, "url"?, "key"?, "project"?}` (BE-2).
async fn choose_backend(
    State(settings): State<Settings>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, Refused> {
    let (tools, fields) = settings.change_of(&headers, &body)?;
    let text = |name: &str| fields.get(name).and_then(Value::as_str).map(str::to_owned);
    let Some(backend) = text("backend").and_then(|b| b.parse::<Backend>().ok()) else {
        return Err(bad_request(
            "Say which browser with \"backend\": local, chrome, browserbase, steel, cdp or pool; nothing was changed.",
        )
        .into());
    };
    if let Some(other) = fields.keys().find(|k| {
        !matches!(
            k.as_str(),
            "backend" | "url" | "key" | "project" | "endpoints" | "perEndpoint"
        )
    }) {
        return Err(bad_request(&format!(
            "“{other}” is not part of a backend choice (backend, url, key, project, endpoints, perEndpoint); nothing was changed."
        ))
        .into());
    }
    if backend != Backend::Local {
        let recent = settings
            .panel
            .signed_in_at(&headers)
            .is_some_and(|at| settings.recent.is_recent(at));
        if !recent {
            return Err(refuse(
                StatusCode::FORBIDDEN,
                "Forbidden: choosing a browser other than Conch's own needs a recent sign-in; ask for a new sign-in link (it is printed where conch-gateway runs), open it, and choose again within 5 minutes.",
            )
            .into());
        }
    }
    let Some(choice) = settings.panel.backend_choice() else {
        return Err(refuse(
            StatusCode::CONFLICT,
            "This app does not let the panel choose the browser; nothing was changed.",
        )
        .into());
    };
    let browser = tools.browser();
    let home = &browser.config().home;
    let saved = if backend == Backend::Pool {
        // A pool: `endpoints` (a list of addresses) and `perEndpoint` (a number), issue 32.
        let endpoints: Vec<String> = fields
            .get("endpoints")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let per_endpoint = fields.get("perEndpoint").map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        choice.save_pool(home, endpoints, per_endpoint)
    } else {
        choice.save(
            home,
            backend,
            text("url"),
            text("project"),
            text("key").map(conch_browser::seal::SecretText::new),
        )
    };
    let said = match saved {
        Ok(said) => said,
        Err(ChoiceError(sentence)) => {
            return Err(
                bad_request(&format!("{}; nothing was changed.", capital(&sentence))).into(),
            );
        }
    };
    let (remote, unusable) = choice.remote(home);
    if let Err(e) = browser.choose(remote.as_ref()).await {
        return Err(refuse(StatusCode::CONFLICT, &e.to_string()).into());
    }
    if backend == Backend::Chrome {
        // Chrome asks the person for each connection: connect now, while they are here
        // (BE-10).
        let browser = browser.clone();
        tokio::spawn(async move {
            if let Err(e) = browser.ensure_running().await {
                tracing::warn!("your Chrome can't be used: {e}");
            }
        });
    }
    tracing::info!(backend = %backend, "the person chose the browser");
    let saved = load(browser)?;
    let mut view = settings_view(settings.panel.backend_choice(), tools, &saved);
    view["said"] = json!(said);
    view["unusable"] = json!(unusable);
    Ok(answer(StatusCode::OK, &view))
}

/// `sentence` with its first letter capitalised.
fn capital(sentence: &str) -> String {
    let mut chars = sentence.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `GET /api/browser/status`: what runs and why (LAUNCH-13), with the health check, the
/// checkup, health notes and the backup manifest (PROTO-11).
async fn status(State(settings): State<Settings>, headers: HeaderMap) -> Result<Response, Refused> {
    let tools = settings.check(&headers, false)?;
    let browser = tools.browser();
    let status = browser.status().await;
    record_user_agent(browser, &status);
    let device_key = device_key(browser).await;
    let reports: &dyn HostReports = browser;
    let saved = load(browser).unwrap_or_default();
    let state = match status.state {
        RunState::Idle => "idle",
        RunState::Running => "running",
        RunState::Downloading => "downloading",
        RunState::Unavailable => "unavailable",
    };
    // Issue 31: what the conversations' results cost so far, in one line.
    let ids = tools.conversations();
    let spent = ids
        .iter()
        .filter_map(|id| tools.spent(id))
        .fold(conch_tools::Cost::default(), |sum, (cost, _)| {
            sum.plus(cost)
        });
    let spent = format!(
        "{} conversation{}: {}",
        ids.len(),
        if ids.len() == 1 { "" } else { "s" },
        conch_tools::spent_line(spent, None)
    );
    let view = json!({
        "gateway": { "version": env!("CARGO_PKG_VERSION") },
        "spent": spent,
        "chosen": saved.backend.as_str(),
        "backend": status.backend,
        "state": state,
        "running": status.state == RunState::Running,
        "browser": status.browser,
        "version": status.version,
        "executable": status.executable.as_ref().map(|p| p.display().to_string()),
        "userAgent": status.user_agent,
        "why": status.why,
        "launches": status.launches,
        "download": status.download.as_ref().map(|d| json!({
            "done": d.done, "total": d.total,
        })),
        "health": reports.health().iter().map(|item| json!({
            "id": item.check.id(),
            "ok": !matches!(item.state, conch_browser::HealthState::Failing(_)),
            "said": match &item.state {
                conch_browser::HealthState::Ok => None,
                conch_browser::HealthState::Failing(why)
                | conch_browser::HealthState::Note(why) => Some(why),
            },
        })).collect::<Vec<_>>(),
        "flagged": reports.checkup().iter().map(|item| json!({
            "id": item.id, "said": item.sentence, "fix": item.fix,
        })).collect::<Vec<_>>(),
        "notes": reports.notes(),
        "deviceKey": device_key,
        "backup": {
            "files": reports.manifest().files.iter().map(|f| json!({
                "file": f.path.file_name().map(|n| n.to_string_lossy().into_owned()),
                "class": f.class.as_str(),
                "carriedToAnotherComputer": f.class.carried_to_another_computer(),
            })).collect::<Vec<_>>(),
            "powers": reports.manifest().powers.iter().map(|p| p.code()).collect::<Vec<_>>(),
        },
    });
    Ok(answer(StatusCode::OK, &view))
}

/// Where the device key that seals the keys and passwords is kept (BE-3): `place` is
/// `keychain` or `file` (`null` when no key could be had), `said` the sentence. The key is
/// looked for once per process, off the async workers (the keychain may take up to
/// [`conch_browser::seal::KEYCHAIN_WAIT`]); later sealing keeps the answer current.
async fn device_key(browser: &Browser) -> Value {
    let home = browser.config().home.clone();
    let place = match conch_browser::seal::last_key_place(&home) {
        Some(place) => place,
        None => tokio::task::spawn_blocking(move || {
            conch_browser::seal::Sealer::open_device(&home)
                .map(|sealer| sealer.key_place().clone())
                .map_err(|e| e.to_string())
        })
        .await
        .unwrap_or_else(|e| Err(e.to_string())),
    };
    match place {
        Ok(place) => json!({
            "place": match place {
                KeyPlace::Keychain => "keychain",
                KeyPlace::KeyFile(_) => "file",
            },
            "said": format!("Keys are sealed with a key kept in {place}."),
        }),
        Err(why) => json!({ "place": null, "said": capital(&format!("{why}.")) }),
    }
}

/// Records the user agent the running browser reports in browser.json, per browser, for
/// status (DATA-5, AMB-16). Conch never rewrites it.
fn record_user_agent(browser: &Browser, status: &conch_browser::Status) {
    let (Some(name), Some(agent)) = (&status.browser, &status.user_agent) else {
        return;
    };
    let config = browser.config();
    let recorded = BrowserSettings::update(&config.home, config.clock.as_ref(), |s| {
        let new = s.user_agents.get(name) != Some(agent);
        if new {
            s.user_agents.insert(name.clone(), agent.clone());
        }
        Ok::<_, std::convert::Infallible>(new)
    });
    if let Err(e) = recorded {
        tracing::warn!("the browser's user agent could not be recorded in browser.json: {e}");
    }
}

/// `POST /api/browser/repair`: every fix in turn; the profile wiped last, only with
/// `{"wipeProfile": true}` (LAUNCH-14).
async fn repair(
    State(settings): State<Settings>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, Refused> {
    let (tools, fields) = settings.change_of(&headers, &body)?;
    let wipe = match fields.get("wipeProfile") {
        None => false,
        Some(Value::Bool(yes)) => *yes,
        Some(_) => {
            return Err(bad_request(
                "wipeProfile must be true (the person said yes) or false; nothing was repaired.",
            )
            .into());
        }
    };
    let steps = tools.browser().repair_all(wipe).await;
    let reports: &dyn HostReports = tools.browser();
    Ok(answer(
        StatusCode::OK,
        &json!({
            "steps": steps.iter().map(|s| json!({
                "id": s.id,
                "outcome": s.outcome.kind(),
                "said": s.outcome.sentence(),
            })).collect::<Vec<_>>(),
            "notes": reports.notes(),
        }),
    ))
}

/// `DELETE /api/browser/sites/{site}`: the site is no longer always allowed, and no
/// conversation's "This chat" answer stands for it: the next act on it asks (PERM-7).
async fn revoke_site(
    State(settings): State<Settings>,
    headers: HeaderMap,
    Path(site): Path<String>,
) -> Result<Response, Refused> {
    let tools = settings.check(&headers, true)?;
    // The site as browser.json keeps it, else as conch-policy names a host's site
    // (`www.shop.example` is `shop.example`).
    let saved = load(tools.browser())?;
    let site = if saved.is_site_allowed(&site) {
        site
    } else {
        conch_policy::Site::of_host(&site)
            .map(|s| s.as_str().to_owned())
            .unwrap_or(site)
    };
    let revoked = tools.revoke_site(&site);
    // Every task's browser gives that site's cookies back, open or set aside (ERR-8); an
    // open one whose browser fails meanwhile is named, the rest are done all the same.
    let taken_back = tools.browser().revoke_site(&site).await;
    if !taken_back.is_complete() {
        tracing::warn!(site = %site, errands = taken_back.unreached.len(), "a task's browser could not give a revoked site's sign-in back");
    }
    Ok(match revoked {
        Ok(true) => {
            tracing::info!(site = %site, "the person revoked a site");
            let said = format!(
                "{site} is no longer always allowed: the next act there asks you again.{}",
                not_taken_back(&site, &taken_back)
            );
            answer(StatusCode::OK, &json!({ "said": said }))
        }
        Ok(false) => answer(
            StatusCode::NOT_FOUND,
            &json!({ "error": format!("{site} is not among the always-allowed sites.") }),
        ),
        Err(e) => refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("The site could not be revoked: failed to {e}."),
        ),
    })
}

/// What a revoke's answer adds when an open task's browser did not give the site back
/// (ERR-8): which tasks, and what to do; nothing when every errand gave it back.
fn not_taken_back(site: &str, revoked: &conch_browser::Revoked) -> String {
    if revoked.is_complete() {
        return String::new();
    }
    let tasks = match revoked.unreached.len() {
        1 => "one task".to_owned(),
        n => format!("{n} tasks"),
    };
    format!(
        " The browser of {tasks} did not answer, so it may still be signed in to {site}: {}. End that task to take the sign-in back.",
        revoked.unreached.join(", ")
    )
}

/// `POST /api/browser/sign-out`: signs out of everything (wipes the profile) only with
/// the person's confirmation, `{"confirm": true}`.
async fn sign_out(
    State(settings): State<Settings>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, Refused> {
    let (tools, fields) = settings.change_of(&headers, &body)?;
    if fields.get("confirm") != Some(&Value::Bool(true)) {
        return Err(bad_request(
            "Signing out of everything wipes every site's sign-in and needs your confirmation, {\"confirm\": true}; nothing was wiped.",
        )
        .into());
    }
    Ok(match tools.browser().sign_out_everywhere().await {
        Ok(()) => {
            tracing::info!("the person signed out of everything");
            answer(
                StatusCode::OK,
                &json!({ "said": "Signed out of everything: the profile was wiped, and the browser starts afresh on the next call." }),
            )
        }
        Err(e) => refuse(StatusCode::CONFLICT, &e.to_string()),
    })
}

/// `POST /api/browser/sign-in-again`: a new one-time sign-in link, printed on standard
/// error where the person started the gateway; the page hears only where to look.
async fn sign_in_again(
    State(settings): State<Settings>,
    headers: HeaderMap,
) -> Result<Response, Refused> {
    settings.check(&headers, true)?;
    let link = settings.panel.renew_signin();
    eprintln!("conch-gateway: sign in again at {link}");
    tracing::info!("the person asked for a new sign-in link");
    Ok(answer(
        StatusCode::OK,
        &json!({ "said": "A new sign-in link was printed where conch-gateway runs (its standard error). Open it, then choose the browser again within 5 minutes." }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ERR-8: a revoke whose open task's browser did not answer says which tasks may still
    /// be signed in and what to do; a complete one adds nothing.
    #[test]
    fn err_8_a_revoke_names_the_tasks_whose_browser_did_not_give_the_site_back() {
        let site = "shop.example";
        assert_eq!(not_taken_back(site, &conch_browser::Revoked::default()), "");
        let mut revoked = conch_browser::Revoked {
            unreached: vec!["task-nightly".to_owned()],
        };
        let said = not_taken_back(site, &revoked);
        assert!(
            said.contains("one task did not answer")
                && said.contains("signed in to shop.example: task-nightly.")
                && said.contains("End that task"),
            "{said}"
        );
        revoked.unreached.push("task-weekly".to_owned());
        assert!(
            not_taken_back(site, &revoked).contains("2 tasks did not answer"),
            "{revoked:?}"
        );
    }

    /// BE-2, AMB-2: the default recent sign-in is 5 minutes, by the clock it is given.
    #[test]
    fn be_2_a_sign_in_is_recent_for_five_minutes() {
        let recent = SignedInWithin::default();
        assert!(recent.is_recent(Instant::now()));
        let later = SignedInWithin {
            window: RECENT,
            now: || Instant::now() + Duration::from_secs(5 * 60 + 1),
        };
        assert!(!later.is_recent(Instant::now()));
    }

    /// BE-2: a merge that names the backend or the sites changes nothing, even beside a
    /// field it could change.
    #[test]
    fn be_2_a_merge_with_backend_or_sites_changes_nothing() {
        let mut settings = BrowserSettings::default();
        for body in [
            json!({ "allowLocalhost": true, "backend": "chrome" }),
            json!({ "sites": ["shop.test"], "allowLocalhost": true }),
            json!({ "allowLocalhost": true, "allowHosts": ["10.0.0.1:80"] }),
            json!({ "searchUrl": "javascript:alert(1)//%s" }),
            json!({ "userAgents": {} }),
        ] {
            let Value::Object(fields) = body else {
                unreachable!()
            };
            assert!(merge(&mut settings, &fields).is_err(), "{fields:?}");
            assert_eq!(settings, BrowserSettings::default());
        }
        let Value::Object(fields) = json!({
            "allowLocalhost": true,
            "allowHosts": ["localhost:3000", "localhost:3000"],
            "searchUrl": "https://search.example/?q=%s",
            "declineCookieBanners": false,
        }) else {
            unreachable!()
        };
        merge(&mut settings, &fields).expect("changeable fields");
        assert!(settings.allow_localhost && !settings.decline_cookie_banners);
        assert_eq!(settings.allow_hosts, ["localhost:3000"]);
    }

    /// A recent sign-in that the test turns on and off.
    #[derive(Debug, Default)]
    struct Toggle(std::sync::atomic::AtomicBool);

    impl RecentAuth for Toggle {
        fn is_recent(&self, _: Instant) -> bool {
            self.0.load(std::sync::atomic::Ordering::SeqCst)
        }
    }

    /// One request to the in-process gateway from its own page, `cookie` being the
    /// session's cookie and header lines; gives (status, body).
    async fn put(port: u16, cookie: &str, body: &str) -> (u16, String) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connect");
        let request = format!(
            "PUT /api/browser/backend HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\nCookie: {cookie}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.expect("write");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.expect("read");
        let status = answer
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        (status, answer)
    }

    /// A [`BackendChoice`] that keeps only the backend's kind, in browser.json.
    #[derive(Debug)]
    struct JustTheKind;

    impl BackendChoice for JustTheKind {
        fn saved(&self, _: &Home) -> Result<Vec<SecretEntry>, ChoiceError> {
            Ok(Vec::new())
        }
        fn save(
            &self,
            home: &Home,
            backend: Backend,
            _: Option<String>,
            _: Option<String>,
            _: Option<SecretText>,
        ) -> Result<Vec<String>, ChoiceError> {
            BrowserSettings::update(home, &conch_browser::SystemClock, |settings| {
                settings.backend = backend;
                Ok::<_, std::convert::Infallible>(true)
            })
            .map_err(|e| ChoiceError(e.to_string()))?;
            Ok(vec![format!("backend: {backend}")])
        }
        fn remote(&self, _: &Home) -> (Option<Remote>, Option<String>) {
            (None, None)
        }
    }

    /// A settings door on a free port of 127.0.0.1 for a fresh home, judging recent
    /// sign-ins with `recent`, keeping the backend with `choice`: its port, the headers
    /// of a signed-in request, the home and the server.
    async fn serve_settings(
        choice: Option<Arc<dyn BackendChoice>>,
        recent: Arc<dyn RecentAuth>,
    ) -> (
        u16,
        String,
        tempfile::TempDir,
        tokio::task::JoinHandle<std::io::Result<()>>,
    ) {
        let dir = tempfile::tempdir().expect("temp home");
        let home = conch_browser::Home::new(dir.path());
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        let browser = Browser::new(conch_browser::BrowserConfig::new(home));
        let board = crate::cards::Board::new(Duration::from_secs(1));
        let panel = Panel::new(port, crate::live::Live::new(browser.clone(), board));
        panel.set_tools(conch_tools::Tools::new(
            browser,
            conch_tools::ToolsConfig::new(Arc::new(conch_tools::Unattended)),
        ));
        if let Some(choice) = choice {
            panel.set_backend_choice(choice);
        }
        let link = panel.signin_link().expect("a link");
        let code = link.split("code=").nth(1).expect("a code");
        let signed = panel.sign_in(code).expect("signed in");
        let cookie = format!(
            "{}={}\r\n{}: {}",
            panel.cookie_name(),
            signed.cookie,
            crate::door::SESSION_HEADER,
            signed.token
        );
        let app = router(Settings::with_recent_auth(panel, recent));
        let served = tokio::spawn(async move { axum::serve(listener, app).await });
        (port, cookie, dir, served)
    }

    /// The backend browser.json names in `dir`.
    fn saved_backend(dir: &tempfile::TempDir) -> Backend {
        BrowserSettings::load(
            &conch_browser::Home::new(dir.path()),
            &conch_browser::SystemClock,
        )
        .expect("settings")
        .value
        .backend
    }

    /// BE-2: PUT backend to anything but local is 403 without a recent sign-in and 200
    /// with one (the embedder's RecentAuth, injected); local needs none.
    #[tokio::test(flavor = "multi_thread")]
    async fn be_2_put_backend_needs_a_recent_sign_in() {
        let recent = Arc::new(Toggle::default());
        let (port, cookie, dir, served) =
            serve_settings(Some(Arc::new(JustTheKind)), recent.clone()).await;
        let chrome = r#"{"backend":"cdp","url":"http://127.0.0.1:1"}"#;
        let (status, said) = put(port, &cookie, chrome).await;
        assert_eq!(status, 403, "{said}");
        assert!(said.contains("recent sign-in"), "{said}");
        assert_eq!(saved_backend(&dir), Backend::Local, "nothing changed");
        let (status, said) = put(port, &cookie, r#"{"backend":"local"}"#).await;
        assert_eq!(status, 200, "{said}");
        recent.0.store(true, std::sync::atomic::Ordering::SeqCst);
        let (status, said) = put(port, &cookie, chrome).await;
        assert_eq!(status, 200, "{said}");
        assert_eq!(saved_backend(&dir), Backend::Cdp);
        served.abort();
    }

    /// Issue 28, BE-2: an embedder that gives the panel no BackendChoice keeps the
    /// backend out of the page's reach: PUT backend is 409 with a sentence, and nothing
    /// changes, even after a recent sign-in.
    #[tokio::test(flavor = "multi_thread")]
    async fn be_2_without_a_backend_choice_the_page_cannot_change_the_backend() {
        let recent = Arc::new(Toggle::default());
        recent.0.store(true, std::sync::atomic::Ordering::SeqCst);
        let (port, cookie, dir, served) = serve_settings(None, recent).await;
        let (status, said) = put(
            port,
            &cookie,
            r#"{"backend":"cdp","url":"http://127.0.0.1:1"}"#,
        )
        .await;
        assert_eq!(status, 409, "{said}");
        assert!(said.contains("does not let the panel choose"), "{said}");
        assert_eq!(saved_backend(&dir), Backend::Local, "nothing changed");
        served.abort();
    }

    /// BE-3: the host shown never carries the address's user, path or query.
    #[test]
    fn be_3_only_the_host_is_shown() {
        assert_eq!(host_only("wss://host.example:9222"), "host.example:9222");
        assert_eq!(host_only("https://api.steel.dev"), "api.steel.dev");
    }
}
