//! `conch-gateway backend show` and `conch-gateway backend set …`: the person chooses the
//! browser Conch drives, never the agent (TOOL-14, BE-1). The choice goes to
//! `browser.json`; a key or an address goes to `browser.secrets.json`, sealed (DATA-6,
//! BE-3), and is printed nowhere: `set` says only "key saved".
//!
//! At start, [`remote_for`] turns the choice into the runtime's remote browser: a DevTools
//! address (`cdp`), a Browserbase or a Steel session, or the person's own Chrome, found by
//! its `DevToolsActivePort` in its usual profile folder (or the folder
//! `CONCH_CHROME_PROFILE` names), and connected to once, at start (BE-10).
//!
//! Deliberately absent: any way to read a key back.

use std::io::{IsTerminal as _, Read as _, Write as _};

use conch_browser::own_chrome::OwnChrome;
use conch_browser::remote::{Remote, may_carry_key, shown};
use conch_browser::seal::{SealError, Sealer, SecretText, SecretsFile};
use conch_browser::store::{Backend, BrowserSettings, StoreError, UpdateError};
use conch_browser::{Home, SystemClock};

use crate::cli::{NoHome, sentence};

/// The usage of `backend`.
pub(crate) const USAGE: &str = "\
Usage: conch-gateway backend show [--home DIR]
       conch-gateway backend set local|chrome|browserbase|steel|cdp [options]
       conch-gateway backend set pool --endpoint URL [--endpoint URL …] [--per-endpoint N]

  --url URL        cdp: the DevTools address (http://host:port, ws://… or wss://…);
                   steel: a self-hosted steel-browser's address. Without it, browserbase
                   and steel use the provider's own API and forget an earlier address:
                   a key goes only to the address it was saved with
  --project ID     browserbase: the project id
  --endpoint URL   pool: one browser's DevTools address (http://host:port, ws://… or
                   wss://…, a token may ride in its query); give one per browser
  --per-endpoint N pool: the most conversations on one browser at once (default 4)
  --key-env NAME   read the provider's key from this environment variable
                   (without it, browserbase and steel read one line from standard input,
                   not shown on a terminal)

  chrome asks you to confirm on a terminal; without one it is refused (or choose it on
  the settings page after signing in).
  --home DIR       Conch's folder (default: $CONCH_HOME or ~/.conch)
";

/// What `backend …` (and the settings page's choice of browser) refused, in the sentence the
/// person sees: no closing full stop, which the caller adds ([`sentence`]) or follows with
/// "; nothing was changed.". The key is in none of them.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BackendError {
    /// `backend set` with no backend named.
    #[error("backend set needs one of local, chrome, browserbase, steel, cdp or pool")]
    NoneNamed,
    /// A name that is not a backend (or Browser Use Cloud, which is not offered).
    #[error("{0}")]
    NotABackend(String),
    /// A flag given last, with no value after it.
    #[error("{0} needs a value")]
    NeedsValue(&'static str),
    /// A flag `backend` does not know.
    #[error("unknown option “{0}”; see conch-gateway backend --help")]
    UnknownOption(String),
    /// A verb other than `show` or `set`.
    #[error("unknown backend command “{0}”: use show or set")]
    UnknownCommand(String),
    /// Conch's folder can't be found.
    #[error(transparent)]
    NoHome(#[from] NoHome),
    /// `--key-env NAME` names a variable that is unset (or not text).
    #[error("the environment variable {0} holds no key")]
    NoKeyInVariable(String),
    /// Nothing but white space was given as the key.
    #[error("no key was given: pass --key-env NAME or type it on standard input")]
    NoKeyGiven,
    /// Standard input could not be read.
    #[error("the key could not be read from standard input ({0})")]
    KeyUnread(#[source] std::io::Error),
    /// The key's bytes on standard input are not UTF-8.
    #[error("the key on standard input is not text")]
    KeyNotText,
    /// `backend set chrome` with no terminal to confirm on (BE-16).
    #[error("{OWN_CHROME_NEEDS_YOU}")]
    OwnChromeNeedsYou,
    /// The terminal's answer could not be read.
    #[error("the answer could not be read ({0}); nothing was changed")]
    AnswerUnread(#[source] std::io::Error),
    /// The person answered anything but y or yes.
    #[error("your own Chrome was not turned on; nothing was changed")]
    OwnChromeDeclined,
    /// Browserbase, or Steel's cloud, with no key.
    #[error("the {0} backend needs its API key")]
    NeedsKey(Backend),
    /// `cdp` with no address.
    #[error("the cdp backend needs its DevTools address (--url on the command line)")]
    NeedsAddress,
    /// `pool` with no `--endpoint`.
    #[error(
        "the pool backend needs at least one DevTools address (--endpoint URL, once per browser)"
    )]
    NeedsEndpoints,
    /// `--per-endpoint` that is not a number from 1 to 64.
    #[error("--per-endpoint takes a number of conversations from 1 to 64, not “{0}”")]
    BadCap(String),
    /// `--endpoint` or `--per-endpoint` for a backend other than pool.
    #[error("--endpoint and --per-endpoint are for the pool backend only")]
    NotAPool,
    /// A `cdp` address of another scheme (shown without its query).
    #[error("{0} is not a DevTools address: use http://host:port, ws://… or wss://…")]
    NotDevTools(String),
    /// A provider address of another scheme (shown without its query).
    #[error("{0} is not an API address: use https://…")]
    NotAnApi(String),
    /// A key with a plain-http address off this machine (BE-6).
    #[error(
        "{0} would get the key in plain text: a key goes only to an https:// address (plain http only to this machine)"
    )]
    PlainText(String),
    /// The device key, or browser.secrets.json, could not be used.
    #[error("{0}")]
    Sealed(#[from] SealError),
    /// browser.json could not be read.
    #[error("failed to {}{}", .0, why(.0))]
    Settings(#[source] StoreError),
    /// browser.json could not be written.
    #[error("failed to {}{}", .0, why(.0))]
    NotSaved(#[source] UpdateError<std::convert::Infallible>),
}

impl From<StoreError> for BackendError {
    fn from(e: StoreError) -> Self {
        BackendError::Settings(e)
    }
}

impl From<UpdateError<std::convert::Infallible>> for BackendError {
    fn from(e: UpdateError<std::convert::Infallible>) -> Self {
        BackendError::NotSaved(e)
    }
}

/// What the system said under a store error (which names only what was done, and where),
/// in brackets.
fn why(e: &dyn std::error::Error) -> String {
    e.source().map(|s| format!(" ({s})")).unwrap_or_default()
}

/// The name a backend's address or key is sealed under.
fn secret_name(backend: Backend) -> &'static str {
    backend.as_str()
}

/// Runs `backend …` with the arguments after `backend`; gives what to print, or the
/// sentence that says what was wrong.
///
/// # Errors
/// [`BackendError`] for a mistake on the command line or a file that can't be used;
/// nothing is saved then.
pub(crate) fn run(args: &[String]) -> Result<String, BackendError> {
    let mut args = args.iter();
    let verb = args.next().map(String::as_str);
    let mut chosen: Option<Backend> = None;
    if verb == Some("set") {
        let name = args.next().ok_or(BackendError::NoneNamed)?;
        chosen = Some(name.parse().map_err(BackendError::NotABackend)?);
    }
    let (mut home, mut url, mut project, mut key_env) = (None, None, None, None);
    let (mut endpoints, mut per_endpoint) = (Vec::new(), None);
    while let Some(arg) = args.next() {
        let mut value =
            |flag: &'static str| args.next().cloned().ok_or(BackendError::NeedsValue(flag));
        match arg.as_str() {
            "--home" => home = Some(value("--home")?),
            "--url" => url = Some(value("--url")?),
            "--project" => project = Some(value("--project")?),
            "--key-env" => key_env = Some(value("--key-env")?),
            "--endpoint" => endpoints.push(value("--endpoint")?),
            "--per-endpoint" => per_endpoint = Some(value("--per-endpoint")?),
            "-h" | "--help" => return Ok(USAGE.to_owned()),
            other => return Err(BackendError::UnknownOption(other.to_owned())),
        }
    }
    let home = crate::cli::home(home.as_deref().map(std::path::Path::new))?;
    match (verb, chosen) {
        (Some("show"), _) => show(&home),
        (Some("set"), Some(Backend::Pool)) => {
            save_pool(&home, endpoints, per_endpoint.as_deref()).map(|said| said.join("\n") + "\n")
        }
        (Some("set"), Some(_)) if !endpoints.is_empty() || per_endpoint.is_some() => {
            Err(BackendError::NotAPool)
        }
        (Some("set"), Some(backend)) => {
            // A key is read only when the backend takes one: never echoed, never printed.
            let takes_key = matches!(backend, Backend::Browserbase | Backend::Steel);
            let key = if needs_key(backend, url.as_deref()) || (takes_key && key_env.is_some()) {
                Some(read_key(key_env.as_deref())?)
            } else {
                None
            };
            if backend == Backend::Chrome {
                confirm_own_chrome()?;
            }
            save_choice(&home, backend, url, project, key).map(|said| said.join("\n") + "\n")
        }
        (Some("-h" | "--help") | None, _) => Ok(USAGE.to_owned()),
        (Some(other), _) => Err(BackendError::UnknownCommand(other.to_owned())),
    }
}

/// The device's sealer and browser.secrets.json, opened with it.
///
/// # Errors
/// [`BackendError::Sealed`] when the device key or the file can't be used.
pub(crate) fn sealed(home: &Home) -> Result<(Sealer, SecretsFile), BackendError> {
    let sealer = Sealer::open_device(home)?;
    let file = SecretsFile::load(home, &sealer, &SystemClock)?;
    Ok((sealer, file))
}

fn settings(home: &Home) -> Result<BrowserSettings, BackendError> {
    Ok(BrowserSettings::load(home, &SystemClock)?.value)
}

fn show(home: &Home) -> Result<String, BackendError> {
    let settings = settings(home)?;
    let mut out = format!("backend: {}\n", settings.backend);
    let (sealer, file) = sealed(home)?;
    for entry in file.inventory() {
        out.push_str(&format!(
            "saved: {} ({}) for {}\n",
            entry.name, entry.kind, entry.host
        ));
    }
    out.push_str(&format!(
        "keys are sealed with a key kept in {}\n",
        sealer.key_place()
    ));
    Ok(out)
}

/// The host a key for `backend` is bound to (BE-6, BE-7): the address it was saved with
/// (as [`shown`] gives it), else the provider's own API.
fn key_host(backend: Backend, url: Option<&str>) -> String {
    match (backend, url) {
        (_, Some(url)) => shown(url),
        (Backend::Browserbase, None) => "api.browserbase.com".to_owned(),
        _ => "api.steel.dev".to_owned(),
    }
}

/// Whether `backend` needs a key: Browserbase always, Steel's cloud (no address given).
pub(crate) fn needs_key(backend: Backend, url: Option<&str>) -> bool {
    match backend {
        Backend::Browserbase => true,
        Backend::Steel => url.is_none(),
        _ => false,
    }
}

/// Saves the person's choice of browser (BE-1, BE-2): the key and the address sealed in
/// browser.secrets.json (BE-3), the choice in browser.json (DATA-5). Gives what was saved,
/// line by line, never a key or a full address; or the sentence that says what was wrong,
/// with nothing saved. Used by `backend set` and by `PUT /api/browser/backend`.
pub(crate) fn save_choice(
    home: &Home,
    backend: Backend,
    url: Option<String>,
    project: Option<String>,
    key: Option<SecretText>,
) -> Result<Vec<String>, BackendError> {
    let mut said = Vec::new();
    let key = key
        .map(|k| SecretText::new(k.expose().trim().to_owned()))
        .filter(|k| !k.expose().is_empty());
    if needs_key(backend, url.as_deref()) && key.is_none() {
        return Err(BackendError::NeedsKey(backend));
    }
    let (sealer, mut file) = sealed(home)?;
    match backend {
        Backend::Cdp => {
            let url = url.ok_or(BackendError::NeedsAddress)?;
            if !(url.starts_with("http://")
                || url.starts_with("ws://")
                || url.starts_with("wss://"))
            {
                return Err(BackendError::NotDevTools(shown(&url)));
            }
            file.set(
                secret_name(backend),
                "address",
                &shown(&url),
                SecretText::new(url),
            );
            said.push("address saved".to_owned());
        }
        Backend::Browserbase | Backend::Steel => {
            let name = secret_name(backend);
            let base_name = format!("{name}-base");
            if let Some(url) = &url {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(BackendError::NotAnApi(shown(url)));
                }
                if key.is_some() && !url::Url::parse(url).is_ok_and(|u| may_carry_key(&u)) {
                    return Err(BackendError::PlainText(shown(url)));
                }
                file.set(
                    &base_name,
                    "address",
                    &shown(url),
                    SecretText::new(url.clone()),
                );
                said.push("address saved".to_owned());
            } else if file.remove(&base_name) {
                // No address given: the provider's own API, never one left from an
                // earlier `backend set --url` (BE-6, BE-7).
                said.push("the earlier address was cleared".to_owned());
            }
            // The key is for the API it was given with: a configured one, else the
            // provider's own; it is never sent anywhere else.
            let host = key_host(backend, url.as_deref());
            if let Some(key) = key {
                file.set(name, "api key", &host, key);
                said.push("key saved".to_owned());
            } else if file
                .inventory()
                .iter()
                .any(|e| e.name == name && e.host != host)
                && file.remove(name)
            {
                // A new address without a key: the key saved for the old one stays out of it.
                said.push("the key saved for the earlier address was removed".to_owned());
            }
            if let Some(project) = project {
                file.set(
                    "browserbase-project",
                    "project",
                    "api.browserbase.com",
                    SecretText::new(project),
                );
            }
        }
        // A pool's addresses come through `save_pool`.
        Backend::Pool => return Err(BackendError::NeedsEndpoints),
        Backend::Local | Backend::Chrome => {}
    }
    file.save(&sealer)?;
    BrowserSettings::update(home, &SystemClock, |settings| {
        settings.backend = backend;
        Ok::<_, std::convert::Infallible>(true)
    })?;
    said.push(format!("backend: {backend}"));
    if backend == Backend::Chrome {
        said.push(
            "turn on remote debugging at chrome://inspect/#remote-debugging in your Chrome; when Conch starts, Chrome asks you once to allow it".to_owned(),
        );
    }
    Ok(said)
}

/// The name a pool's `n`th address (from 1) is sealed under.
fn pool_name(n: usize) -> String {
    format!("pool-{n}")
}

/// The name a pool's cap per browser is kept under (not secret, kept beside its addresses).
const POOL_CAP: &str = "pool-cap";

/// Saves a pool of browsers as the person's choice (issue 32, BE-1, BE-2): each DevTools
/// address sealed in browser.secrets.json (a token may ride in its query, BE-3), the
/// earlier pool's addresses removed, the cap per browser beside them, and the choice in
/// browser.json. Gives what was saved, line by line, with hosts only; or the sentence
/// that says what was wrong, with nothing saved. Used by `backend set pool` and by
/// `PUT /api/browser/backend`.
pub(crate) fn save_pool(
    home: &Home,
    endpoints: Vec<String>,
    per_endpoint: Option<&str>,
) -> Result<Vec<String>, BackendError> {
    let endpoints: Vec<String> = endpoints
        .into_iter()
        .map(|e| e.trim().to_owned())
        .filter(|e| !e.is_empty())
        .collect();
    if endpoints.is_empty() {
        return Err(BackendError::NeedsEndpoints);
    }
    for endpoint in &endpoints {
        if !(endpoint.starts_with("http://")
            || endpoint.starts_with("ws://")
            || endpoint.starts_with("wss://"))
            || url::Url::parse(endpoint).map_or(true, |u| u.host_str().is_none())
        {
            return Err(BackendError::NotDevTools(shown(endpoint)));
        }
    }
    let cap = match per_endpoint {
        None => conch_browser::remote::POOL_PER_ENDPOINT,
        Some(text) => match text.trim().parse::<usize>() {
            Ok(n) if (1..=64).contains(&n) => n,
            _ => return Err(BackendError::BadCap(text.to_owned())),
        },
    };
    let (sealer, mut file) = sealed(home)?;
    let old: Vec<String> = file
        .inventory()
        .into_iter()
        .map(|e| e.name)
        .filter(|n| n.starts_with("pool-"))
        .collect();
    for name in old {
        file.remove(&name);
    }
    let mut said = Vec::new();
    for (n, endpoint) in endpoints.into_iter().enumerate() {
        let host = shown(&endpoint);
        file.set(
            &pool_name(n + 1),
            "address",
            &host,
            SecretText::new(endpoint),
        );
        said.push(format!("address saved for {host}"));
    }
    file.set(
        POOL_CAP,
        "cap",
        &format!("{cap} per browser"),
        SecretText::new(cap.to_string()),
    );
    file.save(&sealer)?;
    BrowserSettings::update(home, &SystemClock, |settings| {
        settings.backend = Backend::Pool;
        Ok::<_, std::convert::Infallible>(true)
    })?;
    said.push(format!("at most {cap} conversations on each browser"));
    said.push(format!("backend: {}", Backend::Pool));
    Ok(said)
}

/// The pool saved in `file`: its addresses in their order, and its cap per browser.
fn saved_pool(file: &SecretsFile) -> Option<Remote> {
    let mut numbered: Vec<(usize, String)> = file
        .inventory()
        .into_iter()
        .filter_map(|e| {
            let n = e.name.strip_prefix("pool-")?.parse::<usize>().ok()?;
            Some((n, file.get(&e.name)?.expose().to_owned()))
        })
        .collect();
    numbered.sort_by_key(|(n, _)| *n);
    let per_endpoint = file
        .get(POOL_CAP)
        .and_then(|c| c.expose().parse::<usize>().ok())
        .unwrap_or(conch_browser::remote::POOL_PER_ENDPOINT);
    (!numbered.is_empty()).then(|| Remote::Pool {
        endpoints: numbered.into_iter().map(|(_, e)| e).collect(),
        per_endpoint,
    })
}

/// The key from the environment variable `name`, else one line of standard input, read
/// without echo on a terminal.
fn read_key(name: Option<&str>) -> Result<SecretText, BackendError> {
    let key = match name {
        Some(name) => SecretText::new(
            std::env::var(name).map_err(|_| BackendError::NoKeyInVariable(name.to_owned()))?,
        ),
        None => {
            let terminal = std::io::stdin().is_terminal();
            if terminal {
                // The terminal's own setting; no unsafe code for termios. Echo is off
                // before the prompt shows.
                let _ = std::process::Command::new("stty").arg("-echo").status();
                eprint!("API key (not shown): ");
                let _ = std::io::stderr().flush();
            }
            let line = read_line_wiped();
            if terminal {
                let _ = std::process::Command::new("stty").arg("echo").status();
                eprintln!();
            }
            line?
        }
    };
    let key = SecretText::new(key.expose().trim().to_owned());
    if key.expose().is_empty() {
        return Err(BackendError::NoKeyGiven);
    }
    Ok(key)
}

/// The most bytes of a key line read from standard input.
const KEY_LINE: usize = 16 * 1024;

/// One line of standard input (without its line end) into a buffer that is wiped when
/// dropped. The read asks for more than standard input's own 8 KiB buffer holds, so the
/// bytes go straight into this one, never into that buffer, which is not wiped.
fn read_line_wiped() -> Result<SecretText, BackendError> {
    let mut buffer = zeroize::Zeroizing::new(vec![0u8; KEY_LINE]);
    let mut filled = 0;
    let mut stdin = std::io::stdin().lock();
    while filled < buffer.len() && !buffer[..filled].contains(&b'\n') {
        match stdin.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(BackendError::KeyUnread(e)),
        }
    }
    let line = buffer[..filled]
        .split(|b| *b == b'\n')
        .next()
        .unwrap_or_default();
    let line = std::str::from_utf8(line).map_err(|_| BackendError::KeyNotText)?;
    Ok(SecretText::new(line.trim_end_matches('\r').to_owned()))
}

/// The sentence that refuses turning on the person's own Chrome without them.
const OWN_CHROME_NEEDS_YOU: &str = "turning on your own Chrome needs you: run conch-gateway backend set chrome in a terminal and answer y, or choose it on the settings page after signing in";

/// Asks the person on their terminal before Conch drives their own Chrome (BE-16); a
/// command without a terminal is refused, and anything but y or yes is a No.
fn confirm_own_chrome() -> Result<(), BackendError> {
    if !std::io::stdin().is_terminal() {
        return Err(BackendError::OwnChromeNeedsYou);
    }
    eprint!(
        "Conch will drive your own Chrome: it opens tabs of its own there, and sites see you signed in. Turn it on? [y/N] "
    );
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin()
        .read_line(&mut answer)
        .map_err(BackendError::AnswerUnread)?;
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(()),
        _ => Err(BackendError::OwnChromeDeclined),
    }
}

/// The remote browser the chosen backend gives the runtime, if any, and a sentence for
/// standard error when the choice can't be driven (BE-4).
pub(crate) fn remote_for(home: &Home) -> (Option<Remote>, Option<String>) {
    let local = "Conch uses its own local browser.";
    let backend = match settings(home) {
        Ok(settings) => settings.backend,
        Err(e) => {
            return (
                None,
                Some(format!("the browser settings can't be read ({e}); {local}")),
            );
        }
    };
    if backend == Backend::Local {
        return (None, None);
    }
    if backend == Backend::Chrome {
        // No key and no address: Chrome's own file says where its door is (BE-10).
        let mut own = OwnChrome::default();
        own.folder = std::env::var_os("CONCH_CHROME_PROFILE")
            .filter(|v| !v.is_empty())
            .map(std::path::PathBuf::from);
        return (Some(Remote::Chrome(own)), None);
    }
    let file = match sealed(home) {
        Ok((_, file)) => file,
        Err(e) => return (None, Some(format!("{} {local}", sentence(&e)))),
    };
    let name = secret_name(backend);
    let value = |key: &str| file.get(key).cloned();
    let base = |default: &str| {
        value(&format!("{name}-base")).map_or_else(|| default.to_owned(), |b| b.expose().to_owned())
    };
    // A key goes only to the host it was saved for (BE-6, BE-7): a file that pairs it
    // with another address (one left by an earlier version) sends it nowhere.
    if matches!(backend, Backend::Browserbase | Backend::Steel) {
        let saved_base = value(&format!("{name}-base"));
        let host = key_host(backend, saved_base.as_ref().map(SecretText::expose));
        if let Some(entry) = file.inventory().into_iter().find(|e| e.name == name)
            && entry.host != host
        {
            return (
                None,
                Some(format!(
                    "the saved {backend} key is for {}, not for {host}, so it is not sent there: set it again with conch-gateway backend set {backend} …; {local}",
                    entry.host
                )),
            );
        }
    }
    let remote = match backend {
        Backend::Pool => saved_pool(&file),
        Backend::Cdp => value(name).map(|a| Remote::Cdp(a.expose().to_owned())),
        Backend::Browserbase => value(name).map(|key| Remote::Browserbase {
            base: base("https://api.browserbase.com"),
            key,
            project: value("browserbase-project").map(|p| p.expose().to_owned()),
        }),
        _ => {
            let key = value(name);
            let base_saved = value(&format!("{name}-base")).is_some();
            (key.is_some() || base_saved).then(|| Remote::Steel {
                base: base("https://api.steel.dev"),
                key,
                connect: None,
            })
        }
    };
    match remote {
        Some(remote) => (Some(remote), None),
        None => (
            None,
            Some(format!(
                "the {backend} backend has nothing saved to reach it with (conch-gateway backend set {backend} …); {local}"
            )),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_in(home: &std::path::Path, args: &[&str]) -> Result<String, BackendError> {
        let mut args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        args.extend(["--home".to_owned(), home.display().to_string()]);
        run(&args)
    }

    /// BE-7, issue 29: a bad address is a typed error whose sentence says what to use
    /// instead, and nothing is saved.
    #[test]
    fn be_7_backend_set_with_a_bad_url_says_what_to_do() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let e = run_in(dir.path(), &["set", "steel", "--url", "ftp://x"]).expect_err("refused");
        assert!(matches!(e, BackendError::NotAnApi(_)), "{e:?}");
        assert_eq!(
            crate::cli::sentence(&e),
            "ftp://x:21 is not an API address: use https://…."
        );
        let e = run_in(dir.path(), &["set", "cdp", "--url", "ftp://x"]).expect_err("refused");
        assert!(matches!(e, BackendError::NotDevTools(_)), "{e:?}");
        assert_eq!(
            e.to_string(),
            "ftp://x:21 is not a DevTools address: use http://host:port, ws://… or wss://…"
        );
        let e = run_in(dir.path(), &["set", "cdp"]).expect_err("refused");
        assert!(matches!(e, BackendError::NeedsAddress), "{e:?}");
        let home = Home::new(dir.path());
        let e = save_choice(
            &home,
            Backend::Browserbase,
            Some("http://example.com".to_owned()),
            None,
            Some(SecretText::new("bb_CANARY_41".to_owned())),
        )
        .expect_err("refused");
        assert!(matches!(e, BackendError::PlainText(_)), "{e:?}");
        assert_eq!(
            e.to_string(),
            "http://example.com:80 would get the key in plain text: a key goes only to an https:// address (plain http only to this machine)"
        );
        let shown = run_in(dir.path(), &["show"]).expect("show");
        assert!(
            shown.contains("backend: local") && !shown.contains("saved:"),
            "{shown}"
        );
    }

    /// BE-1, issue 29: each mistake on `backend`'s command line is its own typed error,
    /// with the sentence the person has always seen.
    #[test]
    fn be_1_backend_command_line_mistakes_are_typed_sentences() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let e = run(&["set".to_owned()]).expect_err("refused");
        assert!(matches!(e, BackendError::NoneNamed), "{e:?}");
        assert_eq!(
            e.to_string(),
            "backend set needs one of local, chrome, browserbase, steel, cdp or pool"
        );
        let cases: [(&[&str], &str); 4] = [
            (
                &["set", "nope"],
                "“nope” is not a backend: use local, chrome, browserbase, steel, cdp or pool",
            ),
            (
                &["show", "--bogus"],
                "unknown option “--bogus”; see conch-gateway backend --help",
            ),
            (&["frob"], "unknown backend command “frob”: use show or set"),
            (
                &["set", "chrome"],
                "turning on your own Chrome needs you: run conch-gateway backend set chrome in a terminal and answer y, or choose it on the settings page after signing in",
            ),
        ];
        for (args, said) in cases {
            let e = run_in(dir.path(), args).expect_err("refused");
            assert_eq!(e.to_string(), said, "{args:?}");
        }
        let e = run(&["show".to_owned(), "--home".to_owned()]).expect_err("refused");
        assert!(matches!(e, BackendError::NeedsValue("--home")), "{e:?}");
        let e = run(&["set", "browserbase", "--project"].map(str::to_owned)).expect_err("refused");
        assert_eq!(e.to_string(), "--project needs a value");
        assert!(matches!(
            run_in(dir.path(), &["set", "browser-use"]),
            Err(BackendError::NotABackend(_))
        ));
    }
}
