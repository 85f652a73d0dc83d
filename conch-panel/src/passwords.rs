//! The person's saved passwords (issue 16, SEC-2): `<home>/passwords.secrets.json`, sealed
//! like the backend keys, and the gateway's default [`SecretFiller`] ([`Vault`]), so an
//! agent signs in to a saved site without the model ever seeing the password.
//!
//! Each entry is for one site with its scheme: the registrable domain
//! (`https://example.com` covers `https://www.example.com` and
//! `https://login.example.com`, and a port other than 443 is another entry), or the exact
//! `host:port` for loopback and IP addresses, where a port is another app
//! (`http://127.0.0.1:8080`). The scheme counts: a password saved for an https site is
//! never filled into the http page of the same name (issue 29). A look-alike host is
//! another site and gets nothing. The person manages entries from the panel's Passwords
//! page (`/passwords`, [`routes`]: a form on the panel's own origin, which the agent's
//! browser never shows) or from the command line:
//!
//! - `conch-gateway passwords add SITE --username NAME [--home DIR]`: the password is one
//!   line of standard input, read without echo on a terminal; only "password saved" is
//!   printed.
//! - `conch-gateway passwords list [--home DIR]`: each site and username, never a password.
//! - `conch-gateway passwords remove SITE [--home DIR]`.
//!
//! A file that does not open (a flipped byte) is set aside and fails closed: nothing is
//! filled, and every reader (the Passwords page, `passwords list`) is told so, until the
//! person saves again. Every change is read, made and written under a lock file next to
//! the vault (`passwords.secrets.json.lock`), shared by the gateway and the `passwords`
//! command, so two processes saving at once lose nothing.
//!
//! On a new-password field of a site with nothing saved (a sign-up form), once the act is
//! permitted, the vault makes a strong password ([`SecretText::strong_password`]) and
//! saves it for the site with the form's username before anything is typed; when it can't
//! be saved, nothing is made and the field goes to the person.
//!
//! Deliberately absent: any way to print or answer a password back, from the command line
//! or the API.

use std::fs::File;
use std::path::PathBuf;

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
use url::{Host, Url};
use zeroize::Zeroize as _;

use crate::door::{Panel, WRONG_HOST, json_response, refuse};

/// The kind the entries are sealed as.
const KIND: &str = "password";

/// Whether `url`'s password is kept under its exact `host:port` ([`Site::for_password`]):
/// a local app or an IP address.
fn by_host_and_port(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(_) | Host::Ipv6(_)) => true,
        Some(Host::Domain(name)) => name == "localhost" || name.ends_with(".localhost"),
        None => false,
    }
}

/// The key a password for a page at `url` is kept under (SEC-2, issue 29): the page's
/// scheme, its site ([`Site::for_password`]) and a port other than the scheme's own
/// (a local app's site has its port already): `https://example.com`,
/// `https://example.com:8443`, `http://127.0.0.1:8080`. The scheme and the port count,
/// so a password saved for an https site never goes into the http page of the same
/// name, nor to another port.
fn key_of_url(url: &Url) -> Option<String> {
    let site = Site::for_password(url)?;
    Some(match url.port() {
        Some(port) if !by_host_and_port(url) => format!("{}://{site}:{port}", url.scheme()),
        _ => format!("{}://{site}", url.scheme()),
    })
}

/// The site the person typed on the command line or the Passwords page (`example.com`,
/// `http://example.com`, `127.0.0.1:8080`), as the key it is kept under
/// ([`key_of_url`]). Without a scheme a name is https and a local app or an IP address
/// is http.
fn key_of_argument(site: &str) -> Result<String, String> {
    let text = site.trim();
    let not_a_site = || {
        format!("“{text}” is not a site; give example.com, https://example.com or 127.0.0.1:8080")
    };
    let url = if text.contains("://") {
        Url::parse(text).map_err(|_| not_a_site())?
    } else {
        let https = Url::parse(&format!("https://{text}")).map_err(|_| not_a_site())?;
        if by_host_and_port(&https) {
            Url::parse(&format!("http://{text}")).map_err(|_| not_a_site())?
        } else {
            https
        }
    };
    key_of_url(&url).ok_or_else(not_a_site)
}

/// The key a page at `address` is looked up under.
fn key_of_page(address: &str) -> Option<String> {
    key_of_url(&Url::parse(address).ok()?)
}

/// Gives an entry saved before the scheme counted (`example.com`, `127.0.0.1:8080`) the
/// key it has now ([`key_of_argument`]'s defaults: https for a name, http for a local
/// app), in memory; the next save writes it so.
fn rekey_old_entries(file: &mut SecretsFile) {
    for entry in file.inventory() {
        if entry.kind != KIND || entry.name.contains("://") {
            continue;
        }
        let Ok(key) = key_of_argument(&entry.name) else {
            continue;
        };
        let Some(value) = file.get(&entry.name).cloned() else {
            continue;
        };
        file.remove(&entry.name);
        if file.get(&key).is_none() {
            file.set(&key, KIND, &entry.host, value);
        }
    }
}

/// The vault's lock file, next to it: every change of the vault, by the gateway or the
/// `passwords` command, is made under it (issue 29).
fn lock_file(home: &Home) -> PathBuf {
    let mut name = home.passwords_file().into_os_string();
    name.push(".lock");
    PathBuf::from(name)
}

/// Takes the vault's lock (an advisory `flock` on the lock file, waiting for another
/// holder), for as long as the returned file is open. The system lets it go when the
/// holder ends, so a crashed holder leaves no stale lock.
fn lock(home: &Home) -> Result<File, String> {
    let path = lock_file(home);
    let failed = |e: std::io::Error| {
        format!(
            "the saved passwords could not be locked ({}: {e})",
            path.display()
        )
    };
    let mut folder = std::fs::DirBuilder::new();
    folder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut folder, 0o700);
    folder.create(home.root()).map_err(failed)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(&path).map_err(failed)?;
    file.lock().map_err(failed)?;
    Ok(file)
}

/// What opening the vault does when it was set aside as tampered and not saved since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SetAside {
    /// Says so: to every reader, a removal and a generated password.
    Say,
    /// Starts a new vault: the person saves a password again.
    StartAfresh,
}

/// The sentence for a vault that did not open and was set aside as `moved_to`.
fn tampered(moved_to: &std::path::Path) -> String {
    format!(
        "The saved passwords did not open (the file was changed, or sealed on another device), so none is filled; the file was set aside as {}. Save the passwords again.",
        moved_to.display()
    )
}

/// The newest set-aside copy of the vault (`passwords.secrets.json.corrupt-…`), when the
/// vault itself is gone.
fn set_aside_copy(home: &Home) -> Option<PathBuf> {
    let path = home.passwords_file();
    if path.exists() {
        return None;
    }
    let mut prefix = path.file_name()?.to_os_string();
    prefix.push(".corrupt-");
    let prefix = prefix.to_string_lossy().into_owned();
    std::fs::read_dir(path.parent()?)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
        })
        .max_by_key(|p| {
            std::fs::metadata(p)
                .and_then(|m| m.modified())
                .unwrap_or(std::time::SystemTime::UNIX_EPOCH)
        })
}

/// Refuses a vault file other users can read or write (it is written owner-only), with
/// the command that makes it so again; the file itself is kept (issue 29).
fn owner_only(path: &std::path::Path) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        if let Ok(meta) = std::fs::metadata(path)
            && meta.permissions().mode() & 0o077 != 0
        {
            return Err(format!(
                "The saved passwords file {} can be read or changed by other users, so it was not used: run `chmod 600 {}` and try again.",
                path.display(),
                path.display()
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Opens the vault; the caller holds its [`lock`].
fn open(home: &Home, set_aside: SetAside) -> Result<(Sealer, SecretsFile), String> {
    let sealer = Sealer::open_device(home).map_err(|e| format!("{e}."))?;
    if set_aside == SetAside::Say
        && let Some(copy) = set_aside_copy(home)
    {
        return Err(tampered(&copy));
    }
    owner_only(&home.passwords_file())?;
    let mut file = SecretsFile::load_at(home.passwords_file(), &sealer, &SystemClock).map_err(
        |e| match e {
            SealError::Tampered { moved_to, .. } => tampered(&moved_to),
            other => format!("{other}."),
        },
    )?;
    rekey_old_entries(&mut file);
    Ok((sealer, file))
}

/// Runs `work` on the vault under its lock: a change is read, made and written while no
/// other process or task can change it (issue 29).
fn with_vault<T>(
    home: &Home,
    set_aside: SetAside,
    work: impl FnOnce(&Sealer, &mut SecretsFile) -> Result<T, String>,
) -> Result<T, String> {
    let _held = lock(home)?;
    let (sealer, mut file) = open(home, set_aside)?;
    work(&sealer, &mut file)
}

/// Saves `password` for the site `key` with `username`, replacing what was there.
fn save(home: &Home, key: &str, username: &str, password: SecretText) -> Result<(), String> {
    with_vault(home, SetAside::StartAfresh, |sealer, file| {
        file.set(key, KIND, username, password);
        file.save(sealer).map_err(|e| format!("{e}."))
    })
}

/// Forgets the site `key`'s password; `false` when none was saved.
fn forget(home: &Home, key: &str) -> Result<bool, String> {
    with_vault(home, SetAside::Say, |sealer, file| {
        if !file.remove(key) {
            return Ok(false);
        }
        file.save(sealer).map_err(|e| format!("{e}."))?;
        Ok(true)
    })
}

/// Each saved site with its username, never a password.
fn entries(home: &Home) -> Result<Vec<(String, String)>, String> {
    with_vault(home, SetAside::Say, |_, file| {
        Ok(file
            .inventory()
            .into_iter()
            .filter(|e| e.kind == KIND)
            .map(|e| (e.name, e.host))
            .collect())
    })
}

/// The Passwords page and its API (issue 16), for [`crate::router`]:
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
    let parsed = serde_json::from_slice::<SaveRequest>(&body);
    // The body holds the password: wiped once read, when this is its one holder.
    if let Ok(mut bytes) = body.try_into_mut() {
        bytes.as_mut().zeroize();
    }
    let Ok(request) = parsed else {
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
pub struct Vault {
    /// Conch's folder, which holds `passwords.secrets.json`.
    pub home: Home,
}

/// Why a site or the vault could not be used, in a sentence that says what to do.
#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    /// The text given is not a site (`example.com`, `https://example.com`,
    /// `127.0.0.1:8080`).
    #[error("{0}")]
    NotASite(String),
    /// The vault could not be opened, read or written (a tampered file, a wrong mode,
    /// a lock or a disk problem).
    #[error("{0}")]
    Vault(String),
}

impl From<VaultError> for String {
    fn from(e: VaultError) -> String {
        e.to_string()
    }
}

impl Vault {
    /// The key a site the person typed (`example.com`, `http://example.com`,
    /// `127.0.0.1:8080`) is kept under.
    ///
    /// # Errors
    /// [`VaultError::NotASite`] with the sentence that says what to give instead.
    pub fn site(site: &str) -> Result<String, VaultError> {
        key_of_argument(site).map_err(VaultError::NotASite)
    }

    /// Saves `password` for the site `key` ([`Vault::site`]) with `username`, replacing
    /// what was there; a vault that did not open is started afresh.
    ///
    /// # Errors
    /// [`VaultError::Vault`] when the vault can't be locked or written.
    pub fn save(&self, key: &str, username: &str, password: SecretText) -> Result<(), VaultError> {
        save(&self.home, key, username, password).map_err(VaultError::Vault)
    }

    /// Forgets the site `key`'s password; `false` when none was saved.
    ///
    /// # Errors
    /// [`VaultError::Vault`] when the vault can't be opened or written.
    pub fn forget(&self, key: &str) -> Result<bool, VaultError> {
        forget(&self.home, key).map_err(VaultError::Vault)
    }

    /// Each saved site with its username, never a password.
    ///
    /// # Errors
    /// [`VaultError::Vault`] when the vault can't be opened (a tampered one says so).
    pub fn entries(&self) -> Result<Vec<(String, String)>, VaultError> {
        entries(&self.home).map_err(VaultError::Vault)
    }

    /// Opens the file under its lock in a blocking task and runs `work` on it; `None`
    /// (with a warning) when the file can't be used.
    async fn with_file<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Sealer, &mut SecretsFile) -> Option<T> + Send + 'static,
    ) -> Option<T> {
        let home = self.home.clone();
        tokio::task::spawn_blocking(move || {
            with_vault(&home, SetAside::Say, |sealer, file| Ok(work(sealer, file))).unwrap_or_else(
                |sentence| {
                    tracing::warn!("the saved passwords can't be used: {sentence}");
                    None
                },
            )
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
        assert_eq!(
            key_of_argument("example.com").unwrap(),
            "https://example.com"
        );
        assert_eq!(
            key_of_page("https://login.example.com/signin").as_deref(),
            Some("https://example.com")
        );
        assert_eq!(
            key_of_argument("127.0.0.1:8080").unwrap(),
            "http://127.0.0.1:8080"
        );
        assert_eq!(
            key_of_page("http://127.0.0.1:8080/login").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(
            key_of_argument("https://www.example.com/x").unwrap(),
            "https://example.com"
        );
        assert_eq!(key_of_page("file:///etc/passwd"), None);
        assert!(key_of_argument("").is_err());
    }

    /// Issue 29, SEC-2: the saved site's scheme and port count: a password saved for
    /// https://example.test is looked up by no http page of that name and no other port.
    #[test]
    fn sec_2_the_saved_sites_scheme_and_port_count() {
        let saved = key_of_argument("https://example.test").unwrap();
        assert_eq!(key_of_argument("example.test").unwrap(), saved);
        assert_eq!(key_of_page("https://www.example.test/in").unwrap(), saved);
        assert_eq!(key_of_page("https://example.test:443/in").unwrap(), saved);
        for other in [
            "http://example.test/in",
            "http://www.example.test/in",
            "https://example.test:8443/in",
            "http://example.test:443/in",
        ] {
            assert_ne!(key_of_page(other).unwrap(), saved, "{other}");
        }
        assert_eq!(
            key_of_page("https://example.test:8443/").unwrap(),
            key_of_argument("example.test:8443").unwrap()
        );
        let local = key_of_argument("https://127.0.0.1:8443").unwrap();
        assert_ne!(key_of_page("http://127.0.0.1:8443/").unwrap(), local);
        assert_ne!(key_of_page("https://127.0.0.1:9443/").unwrap(), local);
    }

    /// Issue 29: an entry saved before the scheme counted gets the key its bare site
    /// names now (https for a name, http for a local app).
    #[test]
    fn sec_2_an_entry_saved_before_the_scheme_counted_keeps_its_site() {
        let dir = tempfile::tempdir().expect("temp home");
        let home = Home::new(dir.path().to_owned());
        let sealer = Sealer::open(&home, None).expect("a key file");
        let mut file =
            SecretsFile::load_at(home.passwords_file(), &sealer, &SystemClock).expect("empty");
        for (site, user) in [("example.com", "ada"), ("127.0.0.1:9", "bob")] {
            file.set(site, KIND, user, SecretText::new(format!("{user}-pw")));
        }
        file.save(&sealer).expect("saved");
        let listed = entries(&home).expect("listed");
        assert_eq!(
            listed,
            vec![
                ("http://127.0.0.1:9".to_owned(), "bob".to_owned()),
                ("https://example.com".to_owned(), "ada".to_owned())
            ]
        );
    }

    /// Issue 28: the vault's public calls give a typed error an embedder can match on:
    /// a text that is not a site is `NotASite`, with the sentence that says what to give.
    #[test]
    fn issue_28_a_site_that_is_not_one_is_a_typed_error() {
        let e = Vault::site("not a site").expect_err("not a site");
        assert!(matches!(e, VaultError::NotASite(_)), "{e:?}");
        assert!(e.to_string().contains("example.com"), "{e}");
        assert_eq!(
            Vault::site("example.com").expect("a site"),
            "https://example.com"
        );
    }
}
