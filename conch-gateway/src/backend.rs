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

use std::io::BufRead as _;

use conch_browser::own_chrome::OwnChrome;
use conch_browser::remote::{Remote, shown};
use conch_browser::seal::{SealError, Sealer, SecretText, SecretsFile};
use conch_browser::store::{Backend, BrowserSettings};
use conch_browser::{Home, SystemClock};

/// The usage of `backend`.
pub(crate) const USAGE: &str = "\
Usage: conch-gateway backend show [--home DIR]
       conch-gateway backend set local|chrome|browserbase|steel|cdp [options]

  --url URL        cdp: the DevTools address (http://host:port, ws://… or wss://…);
                   steel: a self-hosted steel-browser's address
  --project ID     browserbase: the project id
  --key-env NAME   read the provider's key from this environment variable
                   (without it, browserbase and steel read one line from standard input)
  --home DIR       Conch's folder (default: $CONCH_HOME or ~/.conch)
";

/// The name a backend's address or key is sealed under.
fn secret_name(backend: Backend) -> &'static str {
    backend.as_str()
}

/// Runs `backend …` with the arguments after `backend`; gives what to print, or the
/// sentence that says what was wrong.
pub(crate) fn run(args: &[String]) -> Result<String, String> {
    let mut args = args.iter();
    let verb = args.next().map(String::as_str);
    let mut chosen: Option<Backend> = None;
    if verb == Some("set") {
        let name = args
            .next()
            .ok_or("backend set needs one of local, chrome, browserbase, steel or cdp")?;
        chosen = Some(parse_backend(name)?);
    }
    let (mut home, mut url, mut project, mut key_env) = (None, None, None, None);
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| {
            args.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match arg.as_str() {
            "--home" => home = Some(value("--home")?),
            "--url" => url = Some(value("--url")?),
            "--project" => project = Some(value("--project")?),
            "--key-env" => key_env = Some(value("--key-env")?),
            "-h" | "--help" => return Ok(USAGE.to_owned()),
            other => {
                return Err(format!(
                    "unknown option “{other}”; see conch-gateway backend --help"
                ));
            }
        }
    }
    let home = crate::cli::home(home.as_deref().map(std::path::Path::new))?;
    match (verb, chosen) {
        (Some("show"), _) => show(&home),
        (Some("set"), Some(backend)) => {
            // A key is read only when the backend takes one: never echoed, never printed.
            let takes_key = matches!(backend, Backend::Browserbase | Backend::Steel);
            let key = if needs_key(backend, url.as_deref()) || (takes_key && key_env.is_some()) {
                Some(read_key(key_env.as_deref())?)
            } else {
                None
            };
            save_choice(&home, backend, url, project, key).map(|said| said.join("\n") + "\n")
        }
        (Some("-h" | "--help") | None, _) => Ok(USAGE.to_owned()),
        (Some(other), _) => Err(format!(
            "unknown backend command “{other}”: use show or set"
        )),
    }
}

fn parse_backend(name: &str) -> Result<Backend, String> {
    name.parse()
}

pub(crate) fn sealed(home: &Home) -> Result<(Sealer, SecretsFile), String> {
    let sealer = Sealer::open_device(home).map_err(|e| format!("{e}."))?;
    let file = SecretsFile::load(home, &sealer, &SystemClock).map_err(|e| match e {
        SealError::Tampered { .. } => format!("{e}"),
        other => format!("{other}."),
    })?;
    Ok((sealer, file))
}

fn settings(home: &Home) -> Result<BrowserSettings, String> {
    BrowserSettings::load(home, &SystemClock)
        .map(|loaded| loaded.value)
        .map_err(|e| format!("{e}."))
}

fn show(home: &Home) -> Result<String, String> {
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
    key: Option<String>,
) -> Result<Vec<String>, String> {
    let mut said = Vec::new();
    let key = key.map(|k| k.trim().to_owned()).filter(|k| !k.is_empty());
    if needs_key(backend, url.as_deref()) && key.is_none() {
        return Err(format!("the {backend} backend needs its API key"));
    }
    let (sealer, mut file) = sealed(home)?;
    match backend {
        Backend::Cdp => {
            let url = url
                .ok_or("the cdp backend needs its DevTools address (--url on the command line)")?;
            if !(url.starts_with("http://")
                || url.starts_with("ws://")
                || url.starts_with("wss://"))
            {
                return Err(format!(
                    "{} is not a DevTools address: use http://host:port, ws://… or wss://…",
                    shown(&url)
                ));
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
            if let Some(url) = &url {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(format!(
                        "{} is not an API address: use https://…",
                        shown(url)
                    ));
                }
                file.set(
                    &format!("{name}-base"),
                    "address",
                    &shown(url),
                    SecretText::new(url.clone()),
                );
                said.push("address saved".to_owned());
            }
            if let Some(key) = key {
                // The key is for the API it was given with: a configured one, else the
                // provider's own.
                let host = match (backend, &url) {
                    (_, Some(url)) => shown(url),
                    (Backend::Browserbase, None) => "api.browserbase.com".to_owned(),
                    _ => "api.steel.dev".to_owned(),
                };
                file.set(name, "api key", &host, SecretText::new(key));
                said.push("key saved".to_owned());
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
        Backend::Local | Backend::Chrome => {}
    }
    file.save(&sealer).map_err(|e| format!("{e}."))?;
    BrowserSettings::update(home, &SystemClock, |settings| {
        settings.backend = backend;
        Ok::<_, std::convert::Infallible>(true)
    })
    .map_err(|e| format!("failed to {e}"))?;
    said.push(format!("backend: {backend}"));
    if backend == Backend::Chrome {
        said.push(
            "turn on remote debugging at chrome://inspect/#remote-debugging in your Chrome; when Conch starts, Chrome asks you once to allow it".to_owned(),
        );
    }
    Ok(said)
}

/// The key from the environment variable `name`, else one line of standard input.
fn read_key(name: Option<&str>) -> Result<String, String> {
    let key = match name {
        Some(name) => std::env::var(name)
            .map_err(|_| format!("the environment variable {name} holds no key"))?,
        None => {
            let mut line = String::new();
            std::io::stdin()
                .lock()
                .read_line(&mut line)
                .map_err(|e| format!("the key could not be read from standard input ({e})"))?;
            line
        }
    };
    let key = key.trim().to_owned();
    if key.is_empty() {
        return Err(
            "no key was given: pass --key-env NAME or type it on standard input".to_owned(),
        );
    }
    Ok(key)
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
        Err(e) => return (None, Some(format!("{e} {local}"))),
    };
    let name = secret_name(backend);
    let value = |key: &str| file.get(key).cloned();
    let base = |default: &str| {
        value(&format!("{name}-base")).map_or_else(|| default.to_owned(), |b| b.expose().to_owned())
    };
    let remote = match backend {
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
