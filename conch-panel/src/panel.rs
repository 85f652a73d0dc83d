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
//! - `PUT /api/browser/conversations/{id}/budget` `{"chars": N|null}`: the conversation's
//!   budget in characters of results (issue 31), the person's only; each listed
//!   conversation says what it spent (`spent`, one line) and its budget.
//! - `/passwords` and `/api/browser/passwords`: the Passwords page and its API, in
//!   [`crate::passwords`] (issue 16).
//!
//! Every route needs a `Host` that is the gateway's own loopback name and port, so a page
//! whose name was rebound to 127.0.0.1 (DNS rebinding) is refused. Every API route needs
//! both factors. The sessions and those checks are `door`'s, shared with the
//! Settings and Passwords pages.

use std::sync::PoisonError;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

pub use crate::door::{Clock, DEFAULT_PANEL_IDLE, Panel};
use crate::door::{
    NOT_SIGNED_IN, SOCKET_PROTOCOL, WRONG_HOST, json_response, refuse, socket_token,
};
use crate::secret::constant_time_eq;

/// The largest live message read. conch-live refuses a command over 64 KiB with
/// `{type:"error", message:"Invalid command"}` and the socket stays open; a message past
/// this larger bound is refused by the WebSocket itself, which closes the socket.
pub(crate) const LIVE_MESSAGE_LIMIT: usize = 1024 * 1024;

/// The panel page's routes: `/`, `/signin`, `/api/browser/live` and the rest above
/// ([`crate::router`] adds the Passwords' and the Settings').
pub(crate) fn routes() -> Router<Panel> {
    Router::new()
        .route("/", get(home))
        .route("/panel/{file}", get(panel_file))
        .route("/signin", get(signin))
        .route("/api/browser/session", axum::routing::delete(sign_out))
        .route("/api/browser/signin-link", post(print_signin_link))
        .route("/api/browser/signin-code", post(give_signin_link))
        .route("/api/browser/live", get(live))
        .route("/api/browser/conversations", get(conversations))
        .route(
            "/api/browser/conversations/{id}/budget",
            axum::routing::put(set_budget),
        )
        .route("/api/browser/shots/{file}", get(shot))
}

/// The value of the query parameter `name`, decoded as a form (`%XX` and `+`) by the
/// `url` crate; `None` when absent. A broken escape stays as it was sent.
fn query_param(uri: &Uri, name: &str) -> Option<String> {
    url::form_urlencoded::parse(uri.query()?.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

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
        let (spent, budget) = tools.spent(&id).unwrap_or_default();
        list.push(serde_json::json!({
            "id": id,
            "name": display_name(&id, client.as_deref(), title.as_deref()),
            "client": client,
            "title": title,
            "watchers": live.watchers(&id),
            "questions": live.board().count_for(&id),
            "spent": conch_tools::spent_line(spent, budget),
            "spentChars": spent.chars,
            "spentTokens": spent.tokens,
            "budgetChars": budget,
            "tabs": tabs.iter().map(|t| serde_json::json!({
                "id": t.id, "title": t.title, "url": t.url, "active": t.active,
            })).collect::<Vec<_>>(),
        }));
    }
    json_response(&serde_json::json!({ "conversations": list }))
}

/// `PUT /api/browser/conversations/{id}/budget` `{"chars": N}` (or `null`: no budget): the
/// conversation's budget in characters of results, the person's choice (issue 31); the
/// agent has no door to it. Both factors and the gateway's own `Origin` are needed
/// (AMB-2). A body without a whole number or null gets 400, an unknown
/// conversation 404.
async fn set_budget(
    State(panel): State<Panel>,
    headers: HeaderMap,
    axum::extract::Path(id): axum::extract::Path<String>,
    body: axum::body::Bytes,
) -> Response {
    if let Some(refused) = panel.refusal(&headers) {
        return refused;
    }
    if !panel.own_origin(&headers) {
        return refuse(
            StatusCode::FORBIDDEN,
            "Forbidden: only the panel's own pages may set a budget.",
        );
    }
    let chars = match serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v.get("chars").cloned())
    {
        Some(serde_json::Value::Null) => None,
        Some(n) if n.as_u64().is_some() => n.as_u64(),
        _ => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "The budget takes {\"chars\": N} with a whole number of characters, or null for none.",
            );
        }
    };
    let Some(tools) = panel.inner.tools.get() else {
        return refuse(StatusCode::NOT_FOUND, "No such conversation.");
    };
    if !tools.set_budget(&id, chars) {
        return refuse(StatusCode::NOT_FOUND, "No such conversation.");
    }
    let (spent, budget) = tools.spent(&id).unwrap_or_default();
    json_response(&serde_json::json!({
        "id": id,
        "budgetChars": budget,
        "spent": conch_tools::spent_line(spent, budget),
    }))
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
}
