//! conch-gateway: Conch's reference binary. It wires the crates together and holds no
//! rule of its own.
//!
//! - `conch-gateway mcp`: the MCP door over stdio, for MCP clients that spawn it
//!   (`claude mcp add conch -- conch-gateway mcp`).
//! - `conch-gateway serve`: the same tools over streamable HTTP at `/mcp` on 127.0.0.1,
//!   behind the gateway's token (written to `<home>/gateway.token`).
//!
//! Who answers questions: no panel exists yet, so a question nobody can answer is refused
//! with a sentence saying how to allow it; `--unattended` answers every question No at
//! once and says so; `--ask-via-mcp` sends the site question (This chat / No only) to
//! the MCP client as an elicitation request.
//!
//! - `conch-gateway backend show|set …`: the person chooses the browser Conch drives; keys
//!   and addresses are sealed (`backend`).
//!
//! The person's door is the conch-panel library, mounted with one call: a sign-in link
//! printed on standard error at start, the panel's pages and the live view's WebSocket,
//! on the `serve` port, or in `mcp` mode on a port of its own (`--panel-port`). While it
//! listens, `browser_handoff` tells the person through the notifier and waits for them.
//!
//! The settings and health API rides on the person's door; browser.json's
//! `allowLocalhost`, `allowHosts` and `searchUrl` are read at start, and the flags
//! override them for a run (DATA-5).

mod ask;
mod backend;
mod choice;
mod cli;
mod handle;
mod http;
mod log;
mod signin;
mod stdio;
mod stop;
mod vault;

// The person's door is conch-panel's (issue 28); the gateway wires it.
use conch_panel::secret::{self, random_hex};
use conch_panel::{cards, events, live, notify, panel, passwords};

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use conch_browser::discover::{Os, Probe, SystemProbe};
use conch_browser::guard::GuardConfig;
use conch_browser::store::BrowserSettings;
use conch_browser::{Browser, BrowserConfig, Home, SystemClock};
use conch_policy::{Gateway, NetSettings};
use conch_tools::{Asker, McpServer, NoOneToAsk, Tools, ToolsConfig, Unattended, WorkFolder};

use crate::ask::{Channels, ElicitAsker};
use crate::cli::{Cli, CliError, Command, NoHome, USAGE, sentence};

/// Finds browsers as the system does, with `--browser` first (as `CONCH_BROWSER` is).
#[derive(Debug)]
struct ChosenBrowser {
    path: PathBuf,
}

impl Probe for ChosenBrowser {
    fn os(&self) -> Os {
        SystemProbe.os()
    }
    fn var(&self, name: &str) -> Option<OsString> {
        if name == "CONCH_BROWSER" {
            return Some(self.path.clone().into_os_string());
        }
        SystemProbe.var(name)
    }
    fn is_file(&self, path: &Path) -> bool {
        SystemProbe.is_file(path)
    }
    fn list_dir(&self, path: &Path) -> Vec<String> {
        SystemProbe.list_dir(path)
    }
}

/// A command that manages Conch's files (`backend`, `passwords`, `signin`): the arguments
/// after its name give what to print, or what was wrong.
type Manage = fn(&[String]) -> Result<String, CommandError>;

/// Why a command that manages Conch's files did nothing; its message is the sentence the
/// person sees after `conch-gateway: `.
#[derive(Debug, thiserror::Error)]
enum CommandError {
    /// `backend show|set …`.
    #[error(transparent)]
    Backend(#[from] backend::BackendError),
    /// `passwords …` and `signin`, which still say what was wrong as a sentence.
    #[error("{0}")]
    Command(String),
}

/// Why the gateway (`mcp`, `serve`) stopped with a failure; its message is the sentence
/// the person sees after `conch-gateway: `.
#[derive(Debug, thiserror::Error)]
enum RunError {
    /// Conch's folder can't be found.
    #[error(transparent)]
    NoHome(#[from] NoHome),
    /// `serve`'s port can't be bound.
    #[error("port {port} on 127.0.0.1 can't be used ({source}).")]
    Port {
        /// The port asked for.
        port: u16,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The bound port can't be read back.
    #[error("the listening port can't be read ({0}).")]
    LocalAddress(#[source] std::io::Error),
    /// Another gateway owns this home, or its lock failed (issue 12).
    #[error("{0}")]
    Home(#[source] conch_browser::BrowserError),
    /// The token file can't be written.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// The HTTP server failed.
    #[error("the HTTP server stopped ({0}).")]
    Served(#[source] std::io::Error),
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let manage: Option<Manage> = match args.first().map(String::as_str) {
        Some("backend") => Some(|args| Ok(backend::run(args)?)),
        Some("passwords") => Some(|args| vault::run(args).map_err(CommandError::Command)),
        Some("signin") => Some(|args| signin::run(args).map_err(CommandError::Command)),
        _ => None,
    };
    if let Some(manage) = manage {
        return match manage(&args[1..]) {
            Ok(said) => {
                print!("{said}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("conch-gateway: {}", sentence(&e));
                ExitCode::from(2)
            }
        };
    }
    let cli = match Cli::parse(&args) {
        Ok(cli) => cli,
        Err(CliError::Help) => {
            eprint!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(CliError::Usage(e)) => {
            eprintln!("conch-gateway: {}", sentence(&e));
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("conch-gateway: the async runtime could not start ({e}).");
            return ExitCode::FAILURE;
        }
    };
    let ran = runtime.block_on(run(cli));
    // Standard input is read on a blocking thread that only a new line or its end frees:
    // the runtime is not waited on for it once the gateway has shut down.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conch-gateway: {}", sentence(&e));
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<(), RunError> {
    // SIGTERM and SIGINT are taken over first: from here on, either one shuts down in
    // order (BE-5, ERR-12) instead of ending the process where it stands.
    let stop = stop::Stop::listen();
    let home = cli::home(cli.home.as_deref())?;
    if let Some(problem) = log::install(home.root()) {
        eprintln!("conch-gateway: {problem}");
    }
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        door = match cli.command {
            Command::Mcp => "mcp (stdio)",
            Command::Serve => "serve (HTTP)",
        },
        "conch-gateway started"
    );

    // The listener is bound before the browser's settings are made: the guard keeps pages
    // off its port (NET-1).
    let listener = match cli.command {
        Command::Serve => Some(
            tokio::net::TcpListener::bind(("127.0.0.1", cli.port))
                .await
                .map_err(|source| RunError::Port {
                    port: cli.port,
                    source,
                })?,
        ),
        Command::Mcp => bind_panel(cli.panel_port).await,
    };
    let port = match &listener {
        Some(listener) => listener
            .local_addr()
            .map_err(RunError::LocalAddress)?
            .port(),
        None => 0,
    };

    // Who answers questions (issue 14): the panel's cards while the person's door
    // listens; No at once when unattended; a refusal with a sentence with no door. The
    // site question may go to the MCP client instead (`--ask-via-mcp`).
    let board = cards::Board::new(cli.ask_timeout);
    let base: Arc<dyn Asker> = if cli.unattended {
        Arc::new(Unattended)
    } else if listener.is_some() {
        Arc::new(cards::PanelAsker {
            board: board.clone(),
            link: format!("http://127.0.0.1:{port}/"),
        })
    } else {
        Arc::new(NoOneToAsk)
    };
    let channels: Option<Channels> = cli
        .ask_via_mcp
        .then(|| Arc::new(Mutex::new(HashMap::new())));
    let asker: Arc<dyn Asker> = match &channels {
        Some(channels) => Arc::new(ElicitAsker {
            fallback: base,
            channels: Arc::clone(channels),
        }),
        None => base,
    };

    // browser.json's settings (DATA-5); the gateway's flags override them for this run.
    let saved = saved_settings(&home);
    let net = NetSettings {
        allow_localhost: cli.allow_localhost || saved.allow_localhost,
        allow_hosts: if cli.allow_hosts.is_empty() {
            allowed_hosts(&saved.allow_hosts)
        } else {
            cli.allow_hosts.clone()
        },
        gateway: Gateway::on_port(port),
    };
    let mut config = BrowserConfig::new(home.clone());
    config.headless = !cli.headed;
    // The person's choice of browser (`conch-gateway backend set …`, BE-1).
    let (remote, unusable) = backend::remote_for(&home);
    if let Some(sentence) = unusable {
        tracing::warn!("{sentence}");
        eprintln!("conch-gateway: {sentence}");
    }
    let own_chrome = matches!(remote, Some(conch_browser::remote::Remote::Chrome(_)));
    config.remote = remote;
    if let Some(path) = &cli.browser {
        config.probe = Arc::new(ChosenBrowser { path: path.clone() });
    }
    // Every connection of every page goes past the guard (NET-*), which never lets a page
    // reach the gateway's own port.
    config.guard = Some(GuardConfig::new(net.clone()));
    // The browser's status (Chromium's download progress) reaches the panel (PROTO-2).
    if listener.is_some() {
        config.events = Some(Arc::new(events::PanelEvents {
            board: board.clone(),
        }));
    }
    let browser = Browser::new(config);
    // One gateway per home: a second one says so in one sentence and stops (issue 12).
    browser.owns_home().map_err(RunError::Home)?;
    // A new gateway is a new session: its conversations start with no tabs of their own
    // (the last process's tabs are not reopened, and new ones are numbered from t1).
    browser.forget_saved_tabs().await;
    if own_chrome {
        // Chrome asks the person for each connection: connect once, now, so the dialog
        // comes while they are here, not inside an agent's timed call (BE-10).
        let browser = browser.clone();
        tokio::spawn(async move {
            if let Err(e) = browser.ensure_running().await {
                tracing::warn!("your Chrome can't be used: {e}");
            }
        });
    }

    let mut tools_config = ToolsConfig::new(asker);
    // Uploads come from the work folder, `<home>/work` (UP-2, UP-6).
    tools_config.chat_files = Arc::new(WorkFolder(Some(home.root().join("work"))));
    // Downloads the person keeps land in `<home>/work/Downloads` (DL-1, AMB-9).
    tools_config.downloads = Some(home.root().join("work").join("Downloads"));
    tools_config.net = net;
    tools_config.search_url.clone_from(&saved.search_url);
    // Issue 31: the person's budget for each conversation's results.
    tools_config.budget_chars = cli.budget_chars;
    // Secret fields are filled from the person's saved passwords, never from the agent's
    // text (SEC-2, issue 16).
    tools_config.secret_filler = Some(Arc::new(passwords::Vault { home: home.clone() }));
    // The person's door: wherever it listens, a handoff tells them and waits (HAND-1);
    // an unattended run has nobody to wait for, so its handoff says so at once.
    let panel = listener.as_ref().map(|_| {
        panel::Panel::with_clock(
            port,
            live::Live::new(browser.clone(), board.clone()),
            cli.panel_idle,
            Arc::new(std::time::Instant::now),
        )
    });
    // `conch-gateway signin` finds the running door through `<home>/panel.door` (0600).
    let door_file = match &panel {
        Some(panel) => match signin::write_door(&home, panel) {
            Ok(path) => Some(path),
            Err(sentence) => {
                tracing::warn!("{sentence}");
                eprintln!(
                    "conch-gateway: {sentence} conch-gateway signin won't find this gateway."
                );
                None
            }
        },
        None => None,
    };
    if let Some(panel) = panel.as_ref().filter(|_| !cli.unattended) {
        tools_config.notifier = Some(Arc::new(notify::GatewayNotifier {
            command: cli.notify_command.clone(),
        }));
        tools_config.panel_link = Some(panel.address());
    }
    // The protocol's events reach the panel, and every step is kept for a panel opened
    // mid-task (PROTO-2, issue 28).
    if listener.is_some() {
        tools_config.events = Some(Arc::new(events::PanelEvents {
            board: board.clone(),
        }));
    }
    let tools = Tools::new(browser.clone(), tools_config);
    if let Some(panel) = &panel {
        panel.set_tools(tools.clone());
        panel.set_backend_choice(Arc::new(choice::GatewayBackends));
    }
    let mut server = McpServer::new(tools, cli.mode);
    if let Some(panel) = &panel {
        // The live view as an MCP App for clients that declare the extension (issue 14),
        // and its app-only tools, which only the signed-in person can use (issue 31).
        server = server
            .with_app(live_app(&panel.address()))
            .with_app_door(Arc::new(conch_panel::inline::InlineDoor::new(
                panel.clone(),
            )));
    }

    match (cli.command, listener) {
        (Command::Serve, Some(listener)) => {
            let token = std::env::var("CONCH_GATEWAY_TOKEN")
                .ok()
                .filter(|t| t.len() >= 16)
                .unwrap_or_else(|| random_hex(24));
            let token_file = write_token(&home, &token)?;
            eprintln!(
                "conch-gateway: MCP at http://127.0.0.1:{port}/mcp (token in {})",
                token_file.display()
            );
            let door = http::Door::new(server, token, port, cli.session_idle, channels)
                .with_errands(cli.errands)
                .with_leaving(live::Leaving::new(browser.clone(), board.clone()));
            // Sessions unused for the idle time are closed even when no request comes.
            let sweeper = {
                let door = door.clone();
                let every = (cli.session_idle / 2).max(std::time::Duration::from_secs(1));
                tokio::spawn(async move {
                    let mut ticks = tokio::time::interval(every);
                    loop {
                        ticks.tick().await;
                        door.sweep();
                    }
                })
            };
            let mut app = http::router(door);
            if let Some(panel) = panel {
                announce(&panel);
                app = conch_panel::mount(app, &panel);
            }
            let served = axum::serve(listener, app).with_graceful_shutdown(stop.clone().asked());
            // A stop waits for the requests in flight, but not for ever: an event stream
            // held open by a client would keep the gateway up.
            let served = tokio::select! {
                served = served => served,
                () = async {
                    stop.asked().await;
                    tokio::time::sleep(stop::GRACE).await;
                } => Ok(()),
            };
            sweeper.abort();
            signin::remove_door(door_file.as_deref());
            browser.shutdown().await;
            served.map_err(RunError::Served)
        }
        (_, listener) => {
            // The person's door runs beside the MCP stream, until stdin closes.
            let door = match (listener, panel) {
                (Some(listener), Some(panel)) => {
                    announce(&panel);
                    let app = conch_panel::router(&panel);
                    Some(tokio::spawn(async move {
                        if let Err(e) = axum::serve(listener, app).await {
                            tracing::warn!("the person's door stopped ({e})");
                        }
                    }))
                }
                _ => None,
            };
            // With --errands the one conversation is a task, in an errand of its own.
            let kind = if cli.errands {
                conch_tools::ConversationKind::Task
            } else {
                conch_tools::ConversationKind::Chat
            };
            let session = server.session_as(stdio::STDIO_CONVERSATION, kind);
            let leaving = live::Leaving::new(browser.clone(), board.clone());
            stdio::serve(session, channels, &leaving, stop.asked()).await;
            if let Some(door) = door {
                door.abort();
            }
            signin::remove_door(door_file.as_deref());
            browser.shutdown().await;
            Ok(())
        }
    }
}

/// browser.json's settings (DATA-5): the defaults, with a warning, when they can't be read
/// (a corrupt file is set aside and said so).
fn saved_settings(home: &Home) -> BrowserSettings {
    match BrowserSettings::load(home, &SystemClock) {
        Ok(loaded) => {
            if let Some(aside) = loaded.set_aside {
                tracing::warn!("{aside}");
                eprintln!("conch-gateway: {aside}.");
            }
            loaded.value
        }
        Err(e) => {
            tracing::warn!("browser.json can't be read ({e}); the defaults are used");
            eprintln!("conch-gateway: failed to {e}; the default settings are used.");
            BrowserSettings::default()
        }
    }
}

/// browser.json's `allowHosts` (AMB-3): an entry that is not a local app's HOST:PORT is
/// left out, with a warning.
fn allowed_hosts(entries: &[String]) -> Vec<conch_policy::AllowedHost> {
    entries
        .iter()
        .filter_map(|entry| match conch_policy::AllowedHost::parse(entry) {
            Ok(host) => Some(host),
            Err(_) => {
                tracing::warn!(entry = %entry, "an allowHosts entry of browser.json is not a local HOST:PORT and is left out");
                eprintln!(
                    "conch-gateway: browser.json's allowHosts entry “{entry}” is not a local app's HOST:PORT, so it is left out."
                );
                None
            }
        })
        .collect()
}

/// How many ports past `--panel-port` are tried before any free port.
const PANEL_PORT_TRIES: u16 = 20;

/// Binds the person's door for `mcp` on 127.0.0.1: `first`, else the next free port up to
/// 20 more, else any free port (`0` asks for any at once). `None`, with a warning, when
/// nothing can be bound: the gateway goes on without the door (PROTO-13).
async fn bind_panel(first: u16) -> Option<tokio::net::TcpListener> {
    let mut ports: Vec<u16> = Vec::new();
    if first != 0 {
        ports.extend((0..=PANEL_PORT_TRIES).filter_map(|step| first.checked_add(step)));
    }
    ports.push(0);
    let mut last = None;
    for port in ports {
        match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
            Ok(listener) => return Some(listener),
            Err(e) => last = Some(e),
        }
    }
    let why = last.map(|e| e.to_string()).unwrap_or_default();
    tracing::warn!("the person's door can't listen on 127.0.0.1 ({why}); going on without it");
    eprintln!(
        "conch-gateway: the person's door can't listen on 127.0.0.1 ({why}); going on without the live view and handoffs."
    );
    None
}

/// Prints the one-time sign-in link on standard error (never in the log, which is kept
/// on disk).
fn announce(panel: &panel::Panel) {
    if let Some(link) = panel.signin_link() {
        eprintln!("conch-gateway: watch and take over at {link}");
    }
}

/// The live view's MCP App: the live view itself, drawn in the host's iframe and talking
/// to the gateway only through the host's tool calls, so it may reach no origin at all.
fn live_app(panel: &str) -> conch_tools::McpApp {
    conch_tools::McpApp {
        html: conch_panel::inline::app_html(panel),
        connect_domains: Vec::new(),
    }
}

/// Why a private file (the token, the panel's door) could not be written; each says which
/// path and what the system said.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TokenError {
    /// Conch's folder could not be made.
    #[error("{} can't be created ({source}).", path.display())]
    Folder {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The token file could not be written.
    #[error("{} can't be written ({source}).", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Writes the token to `<home>/gateway.token`, readable by its owner only (not under
/// `browser/`, which the browser process sees as its own). A file left with a looser
/// mode is made owner-only before the token goes into it.
///
/// # Errors
/// [`TokenError`] when the folder or the file can't be written.
fn write_token(home: &Home, token: &str) -> Result<PathBuf, TokenError> {
    write_private(home, "gateway.token", token)
}

/// Writes `text` to `<home>/NAME`, readable by its owner only; gives its path.
///
/// # Errors
/// [`TokenError`] when the folder or the file can't be written.
pub(crate) fn write_private(home: &Home, name: &str, text: &str) -> Result<PathBuf, TokenError> {
    let dir = home.root().to_path_buf();
    std::fs::create_dir_all(&dir).map_err(|source| TokenError::Folder {
        path: dir.clone(),
        source,
    })?;
    let path = dir.join(name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options.open(&path).and_then(|mut file| {
        use std::io::Write;
        // `mode` applies only when the file is created: an old file keeps its own.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        file.write_all(text.as_bytes())
    });
    written.map_err(|source| TokenError::File {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 29: the gateway's own errors are typed: a token that can't be written says
    /// which path and why, as a `TokenError` a caller can match on.
    #[test]
    fn issue_29_a_token_that_cannot_be_written_is_a_typed_error_naming_its_path() {
        let dir = tempfile::tempdir().expect("a temp dir");
        // Conch's folder is a file: it can't be made.
        let blocked = dir.path().join("not-a-folder");
        std::fs::write(&blocked, b"x").expect("a file");
        let e = write_token(&Home::new(&blocked), "t0k3n").expect_err("no folder");
        assert!(matches!(e, TokenError::Folder { .. }), "{e:?}");
        assert!(e.to_string().contains("not-a-folder"), "{e}");
        // The token's own path is a folder: it can't be written.
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join("gateway.token")).expect("a folder");
        let e = write_token(&Home::new(&home), "t0k3n").expect_err("no file");
        assert!(matches!(e, TokenError::File { .. }), "{e:?}");
        assert!(e.to_string().contains("gateway.token"), "{e}");
    }

    /// Issue 29: a missing home is a typed error (`NoHome`) with the sentence the commands
    /// print.
    #[test]
    fn issue_29_no_home_is_a_typed_error_with_its_sentence() {
        let e = cli::NoHome(conch_browser::Home::from_vars(|_| None).expect_err("no vars"));
        assert!(
            e.to_string().starts_with("Conch's folder can't be found: "),
            "{e}"
        );
        assert_eq!(String::from(e).chars().last(), Some('.'));
    }
}
