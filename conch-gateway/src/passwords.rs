//! The person's saved passwords (issue 16, SEC-2): `<home>/passwords.secrets.json`, sealed
//! like the backend keys, and the gateway's default [`SecretFiller`] ([`Vault`]), so an
//! agent signs in to a saved site without the model ever seeing the password.
//!
//! Each entry is for one site: the registrable domain (`example.com` covers
//! `www.example.com` and `login.example.com`), or the exact `host:port` for loopback and
//! IP addresses, where a port is another app. A look-alike host is another site and gets
//! nothing. The person manages entries from the panel's Passwords page (`/passwords`,
//! [`routes`]: a form on the panel's own origin, which the agent's browser never shows)
//! or from the command line:
//!
//! - `conch-gateway passwords add SITE --username NAME [--home DIR]`: the password is one
//!   line of standard input, read without echo on a terminal; only "password saved" is
//!   printed.
//! - `conch-gateway passwords list [--home DIR]`: each site and username, never a password.
//! - `conch-gateway passwords remove SITE [--home DIR]`.
//!
//! A file that does not open (a flipped byte) is set aside and fails closed: nothing is
//! filled until the person saves again.
//!
//! On a new-password field of a site with nothing saved (a sign-up form), once the act is
//! permitted, the vault makes a strong password ([`SecretText::strong_password`]) and
//! saves it for the site with the form's username before anything is typed; when it can't
//! be saved, nothing is made and the field goes to the person.
//!
//! Deliberately absent: any way to print or answer a password back, from the command line
//! or the API.

use std::io::{BufRead as _, IsTerminal as _};
use std::process::Command;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use axum::routing::{delete, get};
use conch_browser::seal::{SealError, Sealer, SecretText, SecretsFile};
use conch_browser::{Home, SystemClock};
use conch_policy::{FieldClass, SecretKind, Site, classify_field};
use conch_tools::{BoxFuture, SecretFiller, SecretRequest, SecretValue};
use serde::Deserialize;

use crate::panel::{Panel, WRONG_HOST, json_response, refuse};

/// The kind the entries are sealed as.
const KIND: &str = "password";

/// The usage of `passwords`.
pub(crate) const USAGE: &str = "\
Usage: conch-gateway passwords add SITE --username NAME [--home DIR]
       conch-gateway passwords list [--home DIR]
       conch-gateway passwords remove SITE [--home DIR]

  SITE             example.com (covers its subdomains), or host:port for a local app
                   or an IP address (127.0.0.1:8080)
  --username NAME  the account's user name
  --home DIR       Conch's folder (default: $CONCH_HOME or ~/.conch)

The password is read from standard input (without echo on a terminal) and never shown.
";

/// The site the person typed on the command line (`example.com`, `127.0.0.1:8080`), in
/// the shape conch-policy keeps passwords under ([`Site::for_password`]).
fn key_of_argument(site: &str) -> Result<String, String> {
    let text = site.trim();
    let not_a_site = || format!("“{text}” is not a site; give example.com or 127.0.0.1:8080");
    let with_scheme = if text.contains("://") {
        text.to_owned()
    } else {
        format!("http://{text}")
    };
    let url = url::Url::parse(&with_scheme).map_err(|_| not_a_site())?;
    Site::for_password(&url).ok_or_else(not_a_site)
}

/// The key a page at `address` is looked up under.
fn key_of_page(address: &str) -> Option<String> {
    Site::for_password(&url::Url::parse(address).ok()?)
}

fn open(home: &Home) -> Result<(Sealer, SecretsFile), String> {
    let sealer = Sealer::open(home, None).map_err(|e| format!("{e}."))?;
    let file =
        SecretsFile::load_at(home.passwords_file(), &sealer, &SystemClock).map_err(
            |e| match e {
                SealError::Tampered { .. } => format!("{e} Save the passwords again."),
                other => format!("{other}."),
            },
        )?;
    Ok((sealer, file))
}

/// Runs `passwords …` with the arguments after `passwords`; gives what to print, or the
/// sentence that says what was wrong.
pub(crate) fn run(args: &[String]) -> Result<String, String> {
    let mut args = args.iter();
    let verb = args.next().map(String::as_str);
    let mut site = None;
    if matches!(verb, Some("add" | "remove")) {
        site = Some(
            args.next()
                .filter(|s| !s.starts_with("--"))
                .ok_or(
                    "give the site, as in: conch-gateway passwords add example.com --username ada",
                )?
                .clone(),
        );
    }
    let (mut home, mut username) = (None, None);
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| {
            args.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match arg.as_str() {
            "--home" => home = Some(value("--home")?),
            "--username" => username = Some(value("--username")?),
            "-h" | "--help" => return Ok(USAGE.to_owned()),
            other => {
                return Err(format!(
                    "unknown option “{other}”; see conch-gateway passwords --help"
                ));
            }
        }
    }
    let home = crate::cli::home(home.as_deref().map(std::path::Path::new))?;
    match (verb, site) {
        (Some("add"), Some(site)) => {
            let username = username
                .filter(|u| !u.trim().is_empty())
                .ok_or("passwords add needs --username NAME")?;
            add(&home, &site, &username)
        }
        (Some("remove"), Some(site)) => remove(&home, &site),
        (Some("list"), _) => list(&home),
        (Some("-h" | "--help") | None, _) => Ok(USAGE.to_owned()),
        (Some(other), _) => Err(format!(
            "unknown passwords command “{other}”: use add, list or remove"
        )),
    }
}

fn add(home: &Home, site: &str, username: &str) -> Result<String, String> {
    let key = key_of_argument(site)?;
    let password = read_password()?;
    save(home, &key, username.trim(), password)?;
    Ok(format!("password saved for {key} ({})\n", username.trim()))
}

fn remove(home: &Home, site: &str) -> Result<String, String> {
    let key = key_of_argument(site)?;
    if !forget(home, &key)? {
        return Err(format!("no password is saved for {key}"));
    }
    Ok(format!("password removed for {key}\n"))
}

fn list(home: &Home) -> Result<String, String> {
    let entries: Vec<String> = entries(home)?
        .into_iter()
        .map(|(site, username)| format!("{site}\t{username}\n"))
        .collect();
    if entries.is_empty() {
        return Ok("no passwords saved\n".to_owned());
    }
    Ok(entries.concat())
}

/// Saves `password` for the site `key` with `username`, replacing what was there.
fn save(home: &Home, key: &str, username: &str, password: SecretText) -> Result<(), String> {
    let (sealer, mut file) = open(home)?;
    file.set(key, KIND, username, password);
    file.save(&sealer).map_err(|e| format!("{e}."))
}

/// Forgets the site `key`'s password; `false` when none was saved.
fn forget(home: &Home, key: &str) -> Result<bool, String> {
    let (sealer, mut file) = open(home)?;
    if !file.remove(key) {
        return Ok(false);
    }
    file.save(&sealer).map_err(|e| format!("{e}."))?;
    Ok(true)
}

/// Each saved site with its username, never a password.
fn entries(home: &Home) -> Result<Vec<(String, String)>, String> {
    let (_, file) = open(home)?;
    Ok(file
        .inventory()
        .into_iter()
        .filter(|e| e.kind == KIND)
        .map(|e| (e.name, e.host))
        .collect())
}

/// One line of standard input, without echo on a terminal.
fn read_password() -> Result<SecretText, String> {
    let terminal = std::io::stdin().is_terminal();
    if terminal {
        eprint!("Password: ");
        // The terminal's own setting; no unsafe code for termios.
        let _ = Command::new("stty").arg("-echo").status();
    }
    let mut line = String::new();
    let read = std::io::stdin().lock().read_line(&mut line);
    if terminal {
        let _ = Command::new("stty").arg("echo").status();
        eprintln!();
    }
    read.map_err(|e| format!("the password could not be read ({e})"))?;
    let password = line.trim_end_matches(['\n', '\r']).to_owned();
    line.clear();
    if password.is_empty() {
        return Err("give the password as one line on standard input".to_owned());
    }
    Ok(SecretText::new(password))
}

/// The Passwords page and its API (issue 16), for [`crate::panel::router`]:
///
/// - `GET /passwords`: the page (`panel/passwords.html`), for a signed-in person.
/// - `GET /api/browser/passwords`: `{"passwords": [{"site", "username"}]}`, never a
///   password.
/// - `POST /api/browser/passwords` with `{"site", "username", "password"}` as
///   `application/json`: saves it; answers `{"saved": {"site", "username"}}`.
/// - `DELETE /api/browser/passwords/{site}`: forgets it; 404 when none was saved.
///
/// Every route needs the gateway's own `Host` and the session cookie; the API also
/// refuses any `Origin` but the gateway's own, and a change needs one (a forged
/// cross-site request gets 403). Refusals and mistakes are one sentence of plain text.
pub(crate) fn routes() -> Router<Panel> {
    Router::new()
        .route("/passwords", get(passwords_page))
        .route("/api/browser/passwords", get(list_route).post(save_route))
        .route("/api/browser/passwords/{site}", delete(remove_route))
}

/// The most bytes of a save request, and of each of its fields.
const BODY_LIMIT: usize = 16 * 1024;
const FIELD_LIMIT: usize = 1024;

/// What a save request carries.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SaveRequest {
    site: String,
    username: String,
    password: SecretText,
}

/// The API's checks: the panel's own (host, session), then the origin: a change needs
/// the gateway's own `Origin`; a read refuses any other.
fn api_refusal(panel: &Panel, headers: &HeaderMap, change: bool) -> Option<Response> {
    if let Some(refused) = panel.refusal(headers) {
        return Some(refused);
    }
    let has_origin = headers.contains_key(header::ORIGIN);
    if (change || has_origin) && !panel.own_origin(headers) {
        return Some(refuse(
            StatusCode::FORBIDDEN,
            "Forbidden: only the panel's own Passwords page may read or change the saved passwords.",
        ));
    }
    None
}

/// Runs `work` on Conch's folder off the async threads; a sentence for the person when
/// the folder or the file can't be used.
async fn on_home<T: Send + 'static>(
    panel: &Panel,
    work: impl FnOnce(&Home) -> Result<T, String> + Send + 'static,
) -> Result<T, Response> {
    let Some(home) = panel.home() else {
        return Err(refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "The gateway is still starting: try again in a moment.",
        ));
    };
    match tokio::task::spawn_blocking(move || work(&home)).await {
        Ok(Ok(done)) => Ok(done),
        Ok(Err(sentence)) => Err(refuse(StatusCode::INTERNAL_SERVER_ERROR, &sentence)),
        Err(_) => Err(refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            "The saved passwords could not be read: try again.",
        )),
    }
}

/// `GET /passwords`: the page, or how to sign in.
async fn passwords_page(State(panel): State<Panel>, headers: HeaderMap) -> Response {
    if !panel.own_host(&headers) {
        return refuse(StatusCode::FORBIDDEN, WRONG_HOST);
    }
    if !panel.has_session_cookie(&headers) {
        return crate::assets::signin_page(StatusCode::OK, panel.port());
    }
    crate::assets::file("passwords.html", panel.port())
}

/// `GET /api/browser/passwords`: each site and username.
async fn list_route(State(panel): State<Panel>, headers: HeaderMap) -> Response {
    if let Some(refused) = api_refusal(&panel, &headers, false) {
        return refused;
    }
    match on_home(&panel, entries).await {
        Ok(entries) => json_response(&serde_json::json!({
            "passwords": entries
                .into_iter()
                .map(|(site, username)| serde_json::json!({ "site": site, "username": username }))
                .collect::<Vec<_>>(),
        })),
        Err(refused) => refused,
    }
}

/// `POST /api/browser/passwords`: saves one.
async fn save_route(State(panel): State<Panel>, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(refused) = api_refusal(&panel, &headers, true) {
        return refused;
    }
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        });
    if !json {
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Send the password as application/json: {\"site\", \"username\", \"password\"}.",
        );
    }
    if body.len() > BODY_LIMIT {
        return refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            "That request is too large to be a password.",
        );
    }
    // serde's message could quote the body: the sentence is Conch's own.
    let Ok(request) = serde_json::from_slice::<SaveRequest>(&body) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "Bad request: send {\"site\", \"username\", \"password\"}, each a string.",
        );
    };
    let username = request.username.trim().to_owned();
    let key = match key_of_argument(&request.site) {
        Ok(key) => key,
        Err(sentence) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                &format!("Bad request: {sentence}."),
            );
        }
    };
    if username.is_empty() || username.len() > FIELD_LIMIT {
        return refuse(
            StatusCode::BAD_REQUEST,
            "Bad request: give the account's username.",
        );
    }
    let password = request.password;
    if password.expose().is_empty() || password.expose().len() > FIELD_LIMIT {
        return refuse(
            StatusCode::BAD_REQUEST,
            "Bad request: give the password (at most 1024 characters).",
        );
    }
    let (site, user) = (key.clone(), username.clone());
    match on_home(&panel, move |home| save(home, &site, &user, password)).await {
        Ok(()) => {
            tracing::info!(site = key, "the person saved a password from the panel");
            json_response(&serde_json::json!({ "saved": { "site": key, "username": username } }))
        }
        Err(refused) => refused,
    }
}

/// `DELETE /api/browser/passwords/{site}`: forgets one.
async fn remove_route(
    State(panel): State<Panel>,
    headers: HeaderMap,
    Path(site): Path<String>,
) -> Response {
    if let Some(refused) = api_refusal(&panel, &headers, true) {
        return refused;
    }
    let key = match key_of_argument(&site) {
        Ok(key) => key,
        Err(sentence) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                &format!("Bad request: {sentence}."),
            );
        }
    };
    let site = key.clone();
    match on_home(&panel, move |home| forget(home, &site)).await {
        Ok(true) => {
            tracing::info!(site = key, "the person removed a password from the panel");
            json_response(&serde_json::json!({ "removed": { "site": key } }))
        }
        Ok(false) => refuse(
            StatusCode::NOT_FOUND,
            &format!("No password is saved for {key}."),
        ),
        Err(refused) => refused,
    }
}

/// The gateway's default [`SecretFiller`]: the person's saved password for the page's
/// site, never anything for another site.
#[derive(Debug, Clone)]
pub(crate) struct Vault {
    pub(crate) home: Home,
}

impl Vault {
    /// Opens the file in a blocking task and runs `work` on it; `None` (with a warning)
    /// when the file can't be used.
    async fn with_file<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Sealer, &mut SecretsFile) -> Option<T> + Send + 'static,
    ) -> Option<T> {
        let home = self.home.clone();
        tokio::task::spawn_blocking(move || {
            let (sealer, mut file) = match open(&home) {
                Ok(opened) => opened,
                Err(sentence) => {
                    tracing::warn!("the saved passwords can't be used: {sentence}");
                    return None;
                }
            };
            work(&sealer, &mut file)
        })
        .await
        .ok()
        .flatten()
    }
}

/// Whether the field takes a password: the vault holds nothing for a one-time code or a
/// card field, which go to the person. A field the embedder's extra words made secret
/// counts as a password.
fn holds_a_password(request: &SecretRequest) -> bool {
    !matches!(
        classify_field(&request.field),
        FieldClass::Secret(SecretKind::Code | SecretKind::Card)
    )
}

impl SecretFiller for Vault {
    fn secret_for<'a>(&'a self, request: &'a SecretRequest) -> BoxFuture<'a, Option<SecretValue>> {
        Box::pin(async move {
            if !holds_a_password(request) {
                return None;
            }
            let key = key_of_page(&request.url)?;
            let found = self
                .with_file(move |_, file| {
                    file.get(&key)
                        .map(|password| SecretValue::new(password.expose()))
                })
                .await;
            tracing::info!(
                conversation = request.conversation,
                filled = found.is_some(),
                "a secret field asked the saved passwords"
            );
            found
        })
    }

    /// A new-password field with nothing saved (issue 16): a strong password, saved for
    /// the page's site with the form's username before anything is typed, so the site
    /// never gets a password the person doesn't have; nothing when it can't be saved.
    fn new_secret_for<'a>(
        &'a self,
        request: &'a SecretRequest,
    ) -> BoxFuture<'a, Option<SecretValue>> {
        Box::pin(async move {
            if !holds_a_password(request) {
                return None;
            }
            let key = key_of_page(&request.url)?;
            let username = request.username.trim().to_owned();
            let made = self
                .with_file(move |sealer, file| {
                    if let Some(saved) = file.get(&key) {
                        // Saved meanwhile: that one is the site's.
                        return Some(SecretValue::new(saved.expose()));
                    }
                    let password = SecretText::strong_password()?;
                    let value = SecretValue::new(password.expose());
                    file.set(&key, KIND, &username, password);
                    match file.save(sealer) {
                        Ok(()) => Some(value),
                        Err(e) => {
                            tracing::warn!("a generated password could not be saved: {e}");
                            None
                        }
                    }
                })
                .await;
            tracing::info!(
                conversation = request.conversation,
                made = made.is_some(),
                "a new-password field asked the saved passwords for a new one"
            );
            made
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 16: what the person types names the same site a page is looked up under.
    #[test]
    fn sec_2_a_site_typed_on_the_command_line_is_the_pages_site() {
        assert_eq!(key_of_argument("example.com").unwrap(), "example.com");
        assert_eq!(
            key_of_page("https://login.example.com/signin").as_deref(),
            Some("example.com")
        );
        assert_eq!(key_of_argument("127.0.0.1:8080").unwrap(), "127.0.0.1:8080");
        assert_eq!(
            key_of_page("http://127.0.0.1:8080/login").as_deref(),
            Some("127.0.0.1:8080")
        );
        assert_eq!(
            key_of_argument("https://www.example.com/x").unwrap(),
            "example.com"
        );
        assert_eq!(key_of_page("file:///etc/passwd"), None);
        assert!(key_of_argument("").is_err());
    }
}
