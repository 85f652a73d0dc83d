//! The command line: `conch-gateway mcp` (stdio) and `conch-gateway serve` (HTTP), with
//! their flags. Parsed by hand: a dozen flags need no parser crate.
//!
//! Deliberately absent: any flag the agent could reach. These are the person's (or the
//! MCP client configuration's) choices, made before the gateway starts.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use conch_policy::{AllowedHost, Mode};

/// The usage text.
pub(crate) const USAGE: &str = "\
Usage: conch-gateway <mcp|serve> [options]
       conch-gateway backend <show|set> … (see conch-gateway backend --help)
       conch-gateway passwords <add|list|remove> … (see conch-gateway passwords --help)
       conch-gateway signin [--home DIR]  (prints a new sign-in link of the running gateway)

  mcp      Serve Conch's browser tools over MCP on stdin/stdout.
  serve    Serve them over streamable HTTP at http://127.0.0.1:PORT/mcp (token required).
  backend  Show or choose the browser Conch drives (local, cdp, …); keys are sealed.

Options:
  --home DIR             Conch's folder (default: $CONCH_HOME or ~/.conch)
  --trust MODE           ask (default), auto, full or plan
  --unattended           Answer every question No at once, and say so in the result
  --ask-via-mcp          Ask the site question (This chat / No only) through the MCP client
  --allow-host HOST:PORT Let pages reach this local app (repeatable)
  --allow-localhost      Let pages reach every local app but the gateway
  --browser PATH         The browser executable to use
  --headed               Show the browser window (needs a desktop)
  --port PORT            serve only: the port on 127.0.0.1 (default 7391; 0 picks one)
  --session-idle SECONDS serve only: close an MCP session unused this long (default 1800)
  --errands              Every MCP session is a task, browsing in a browser of its own
                         (serve also offers /mcp/task for that without the flag)
  --panel-port PORT      mcp only: the person's port on 127.0.0.1, for the sign-in link and
                         the live view (default 7391, else the next free one; 0 picks one)
  --panel-idle HOURS     End a panel sign-in unused this long (default 12; decimals allowed)
  --ask-timeout SECONDS  How long a question waits for the person on the panel before it
                         counts as No (default 300)
  --budget-chars N       Each conversation's budget in characters of results: the step that
                         would pass it gets a sentence instead of its page (the panel
                         sets a conversation's own)
  --notify-command CMD   Also run CMD TITLE TEXT when the agent hands the browser over
                         (CMD split on spaces, no shell; TEXT ends with the take-over link)
  -h, --help             This text
";

/// Which door to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Command {
    /// MCP over stdio.
    Mcp,
    /// MCP over HTTP.
    Serve,
}

/// The parsed command line.
#[derive(Debug, Clone)]
pub(crate) struct Cli {
    pub(crate) command: Command,
    pub(crate) home: Option<PathBuf>,
    pub(crate) mode: Mode,
    pub(crate) unattended: bool,
    pub(crate) ask_via_mcp: bool,
    pub(crate) allow_hosts: Vec<AllowedHost>,
    pub(crate) allow_localhost: bool,
    pub(crate) browser: Option<PathBuf>,
    pub(crate) headed: bool,
    pub(crate) port: u16,
    /// `mcp`: the port the person's door asks for first (`0`: any free port).
    pub(crate) panel_port: u16,
    /// The program and its first arguments, run on each handoff with the title and text.
    pub(crate) notify_command: Option<Vec<String>>,
    /// How long a question waits for the person on the panel before it counts as No.
    pub(crate) ask_timeout: Duration,
    /// How long a panel sign-in may go unused before it ends.
    pub(crate) panel_idle: Duration,
    /// `serve`: how long an MCP session may go unused before it is closed.
    pub(crate) session_idle: Duration,
    /// Every MCP session is a task, in an errand of its own (ERR-1).
    pub(crate) errands: bool,
    /// Each conversation's budget in characters of results (issue 31).
    pub(crate) budget_chars: Option<u64>,
}

/// What parsing gave instead of a command line.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CliError {
    /// `--help`.
    #[error("the usage was asked for")]
    Help,
    /// A mistake, in one sentence.
    #[error(transparent)]
    Usage(#[from] UsageError),
}

/// A mistake on the command line, in the sentence the person sees (no closing full stop:
/// [`sentence`] adds it).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum UsageError {
    /// A first word that is no command.
    #[error("unknown command “{0}”: use mcp, serve or backend")]
    UnknownCommand(String),
    /// A flag given last, with no value after it.
    #[error("{0} needs a value")]
    NeedsValue(&'static str),
    /// A flag's value that it does not take: the flag, what it takes, what was given.
    #[error("{flag} takes {takes}, not “{given}”")]
    BadValue {
        /// The flag, like `--port`.
        flag: &'static str,
        /// What it takes, like "a number".
        takes: &'static str,
        /// The text given.
        given: String,
    },
    /// `--notify-command` with only white space.
    #[error("--notify-command needs a program to run")]
    NoProgram,
    /// A flag the gateway does not know.
    #[error("unknown option “{0}”; see conch-gateway --help")]
    UnknownOption(String),
}

impl UsageError {
    fn bad(flag: &'static str, takes: &'static str, given: &str) -> CliError {
        CliError::Usage(UsageError::BadValue {
            flag,
            takes,
            given: given.to_owned(),
        })
    }
}

/// `error`'s message as a sentence for standard error: with one closing full stop, whether
/// or not the message has its own.
pub(crate) fn sentence(error: &dyn std::fmt::Display) -> String {
    let text = error.to_string();
    if text.ends_with('.') {
        text
    } else {
        text + "."
    }
}

/// Conch's folder can't be found: no `--home`, and neither `$CONCH_HOME` nor a home
/// folder to put `~/.conch` in.
#[derive(Debug, thiserror::Error)]
#[error("Conch's folder can't be found: {0}.")]
pub(crate) struct NoHome(#[source] pub(crate) conch_browser::home::HomeError);

/// The commands that still speak in sentences (`backend`, `passwords`) take it as one.
impl From<NoHome> for String {
    fn from(e: NoHome) -> String {
        e.to_string()
    }
}

/// Conch's folder: `--home DIR`, else `$CONCH_HOME` or `~/.conch`.
///
/// # Errors
/// [`NoHome`] when neither can be found.
pub(crate) fn home(dir: Option<&std::path::Path>) -> Result<conch_browser::Home, NoHome> {
    match dir {
        Some(dir) => Ok(conch_browser::Home::new(dir)),
        None => conch_browser::Home::from_env().map_err(NoHome),
    }
}

/// How long a question waits for the person by default (issue 14: 5 minutes).
pub(crate) const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(300);

/// The default port of `serve`, and the first port `mcp` tries for the person's door.
pub(crate) const DEFAULT_PORT: u16 = 7391;

impl Cli {
    /// Reads the arguments after the program name.
    pub(crate) fn parse(args: &[String]) -> Result<Cli, CliError> {
        let mut args = args.iter();
        let command = match args.next().map(String::as_str) {
            Some("mcp") => Command::Mcp,
            Some("serve") => Command::Serve,
            Some("-h" | "--help" | "help") | None => return Err(CliError::Help),
            Some(other) => {
                return Err(UsageError::UnknownCommand(other.to_owned()).into());
            }
        };
        let mut cli = Cli {
            command,
            home: None,
            mode: Mode::Ask,
            unattended: false,
            ask_via_mcp: false,
            allow_hosts: Vec::new(),
            allow_localhost: false,
            browser: None,
            headed: false,
            port: DEFAULT_PORT,
            panel_port: DEFAULT_PORT,
            notify_command: None,
            ask_timeout: DEFAULT_ASK_TIMEOUT,
            session_idle: crate::http::DEFAULT_SESSION_IDLE,
            panel_idle: crate::panel::DEFAULT_PANEL_IDLE,
            errands: false,
            budget_chars: None,
        };
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => (flag, Some(value.to_owned())),
                _ => (arg.as_str(), None),
            };
            let mut value = |name: &'static str| -> Result<String, CliError> {
                inline
                    .clone()
                    .or_else(|| args.next().cloned())
                    .ok_or(CliError::Usage(UsageError::NeedsValue(name)))
            };
            match flag {
                "-h" | "--help" => return Err(CliError::Help),
                "--home" => cli.home = Some(PathBuf::from(value("--home")?)),
                "--trust" => {
                    let text = value("--trust")?;
                    cli.mode = match text.as_str() {
                        "full" => Mode::FullTrust,
                        "plan" => Mode::PlanOnly,
                        other => Mode::from_str(other).map_err(|_| {
                            UsageError::bad("--trust", "ask, auto, full or plan", other)
                        })?,
                    };
                }
                "--unattended" => cli.unattended = true,
                "--ask-via-mcp" => cli.ask_via_mcp = true,
                "--errands" => cli.errands = true,
                "--allow-host" => {
                    let text = value("--allow-host")?;
                    let host = AllowedHost::parse(&text).map_err(|_| {
                        UsageError::bad(
                            "--allow-host",
                            "HOST:PORT of a local app (like localhost:3000)",
                            &text,
                        )
                    })?;
                    cli.allow_hosts.push(host);
                }
                "--allow-localhost" => cli.allow_localhost = true,
                "--browser" => cli.browser = Some(PathBuf::from(value("--browser")?)),
                "--headed" => cli.headed = true,
                "--port" => {
                    let text = value("--port")?;
                    cli.port = text
                        .parse()
                        .map_err(|_| UsageError::bad("--port", "a number", &text))?;
                }
                "--panel-port" => {
                    let text = value("--panel-port")?;
                    cli.panel_port = text
                        .parse()
                        .map_err(|_| UsageError::bad("--panel-port", "a number", &text))?;
                }
                "--notify-command" => {
                    let text = value("--notify-command")?;
                    let words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
                    if words.is_empty() {
                        return Err(UsageError::NoProgram.into());
                    }
                    cli.notify_command = Some(words);
                }
                "--budget-chars" => {
                    let text = value("--budget-chars")?;
                    let chars: u64 = text.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        UsageError::bad("--budget-chars", "a number of characters above 0", &text)
                    })?;
                    cli.budget_chars = Some(chars);
                }
                "--ask-timeout" => {
                    let text = value("--ask-timeout")?;
                    let seconds: u64 = text.parse().ok().filter(|s| *s > 0).ok_or_else(|| {
                        UsageError::bad("--ask-timeout", "a number of seconds above 0", &text)
                    })?;
                    cli.ask_timeout = Duration::from_secs(seconds);
                }
                "--panel-idle" => {
                    let text = value("--panel-idle")?;
                    let hours = text
                        .parse::<f64>()
                        .ok()
                        .filter(|h| h.is_finite() && *h > 0.0 && *h <= 24.0 * 366.0)
                        .ok_or_else(|| {
                            UsageError::bad(
                                "--panel-idle",
                                "a number of hours above 0 (like 12 or 0.5)",
                                &text,
                            )
                        })?;
                    cli.panel_idle = Duration::from_secs_f64(hours * 3600.0);
                }
                "--session-idle" => {
                    let text = value("--session-idle")?;
                    let seconds: u64 = text.parse().ok().filter(|s| *s > 0).ok_or_else(|| {
                        UsageError::bad("--session-idle", "a number of seconds above 0", &text)
                    })?;
                    cli.session_idle = Duration::from_secs(seconds);
                }
                other => {
                    return Err(UsageError::UnknownOption(other.to_owned()).into());
                }
            }
        }
        Ok(cli)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Cli, CliError> {
        let args: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        Cli::parse(&args)
    }

    #[test]
    fn flags_are_read() {
        let cli = parse(
            "mcp --home /tmp/h --trust full --unattended --allow-host localhost:3000 --allow-host=127.0.0.1:8080 --allow-localhost --browser /usr/bin/chromium --ask-via-mcp",
        )
        .unwrap();
        assert_eq!(cli.command, Command::Mcp);
        assert_eq!(cli.mode, Mode::FullTrust);
        assert!(cli.unattended && cli.allow_localhost && cli.ask_via_mcp);
        assert!(!cli.errands);
        assert!(parse("serve --errands").unwrap().errands);
        assert_eq!(cli.allow_hosts.len(), 2);
        assert_eq!(cli.home, Some(PathBuf::from("/tmp/h")));
        assert_eq!(cli.panel_port, DEFAULT_PORT);
        assert_eq!(cli.notify_command, None);
        assert_eq!(parse("serve --trust plan").unwrap().mode, Mode::PlanOnly);
        assert_eq!(parse("serve").unwrap().port, DEFAULT_PORT);
        assert_eq!(
            parse("serve --session-idle 5").unwrap().session_idle,
            Duration::from_secs(5)
        );
    }

    /// Issue 31: `--budget-chars` takes a number of characters above 0, on both doors.
    #[test]
    fn cost_5_the_budget_flag_is_read_on_both_doors() {
        assert_eq!(parse("mcp").unwrap().budget_chars, None);
        assert_eq!(
            parse("mcp --budget-chars 20000").unwrap().budget_chars,
            Some(20_000)
        );
        assert_eq!(
            parse("serve --budget-chars=500").unwrap().budget_chars,
            Some(500)
        );
        for bad in ["0", "-5", "lots"] {
            let Err(CliError::Usage(e)) = parse(&format!("mcp --budget-chars {bad}")) else {
                panic!("--budget-chars {bad} was taken");
            };
            assert!(e.to_string().contains("--budget-chars takes"), "{e}");
        }
    }

    /// LIVE-18: a panel sign-in ends after 12 unused hours unless `--panel-idle` says.
    #[test]
    fn live_18_the_panel_idle_time_is_read_in_hours() {
        assert_eq!(
            parse("mcp").unwrap().panel_idle,
            Duration::from_secs(12 * 3600)
        );
        assert_eq!(
            parse("serve --panel-idle 2").unwrap().panel_idle,
            Duration::from_secs(7200)
        );
        assert_eq!(
            parse("mcp --panel-idle=0.5").unwrap().panel_idle,
            Duration::from_secs(1800)
        );
        assert!(USAGE.contains("--panel-idle HOURS"));
    }

    /// PROTO-13, HAND-7: the person's port and the notification command are read; a
    /// command is split on whitespace into the program and its first arguments.
    #[test]
    fn perm_3_the_ask_timeout_is_read_and_checked() {
        assert_eq!(parse("mcp").unwrap().ask_timeout, DEFAULT_ASK_TIMEOUT);
        assert_eq!(
            parse("mcp --ask-timeout 30").unwrap().ask_timeout,
            Duration::from_secs(30)
        );
        for bad in [
            "mcp --ask-timeout 0",
            "mcp --ask-timeout soon",
            "mcp --ask-timeout",
        ] {
            assert!(matches!(parse(bad), Err(CliError::Usage(_))), "{bad}");
        }
    }

    #[test]
    fn proto_13_the_panel_port_and_the_notify_command_are_read() {
        assert_eq!(parse("mcp --panel-port 0").unwrap().panel_port, 0);
        assert_eq!(parse("mcp --panel-port=7400").unwrap().panel_port, 7400);
        let args: Vec<String> = ["mcp", "--notify-command", "notify-send -u critical"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(
            Cli::parse(&args).unwrap().notify_command,
            Some(vec![
                "notify-send".to_owned(),
                "-u".to_owned(),
                "critical".to_owned()
            ])
        );
        assert_eq!(
            parse("serve --notify-command=say").unwrap().notify_command,
            Some(vec!["say".to_owned()])
        );
        assert!(matches!(
            parse("mcp --panel-port seven"),
            Err(CliError::Usage(_))
        ));
        assert!(matches!(
            parse("mcp --panel-port 70000"),
            Err(CliError::Usage(_))
        ));
        assert!(matches!(parse("mcp --panel-port"), Err(CliError::Usage(_))));
        assert!(matches!(
            parse("mcp --notify-command"),
            Err(CliError::Usage(_))
        ));
        assert!(matches!(
            Cli::parse(&[
                "mcp".to_owned(),
                "--notify-command".to_owned(),
                "  ".to_owned()
            ]),
            Err(CliError::Usage(_))
        ));
        assert!(USAGE.contains("--panel-port") && USAGE.contains("--notify-command"));
    }

    /// Issue 29: a mistake is a typed `UsageError` whose sentence is the one the person
    /// has always seen, with one closing full stop.
    #[test]
    fn issue_29_command_line_mistakes_are_typed_with_the_sentences_people_see() {
        let said = |line: &str| match parse(line) {
            Err(CliError::Usage(e)) => (sentence(&e), e),
            other => panic!("{line}: {other:?}"),
        };
        let (text, e) = said("mcp --port seven");
        assert_eq!(text, "--port takes a number, not “seven”.");
        assert!(
            matches!(e, UsageError::BadValue { flag: "--port", .. }),
            "{e:?}"
        );
        assert_eq!(
            said("mcp --trust yolo").0,
            "--trust takes ask, auto, full or plan, not “yolo”."
        );
        assert_eq!(
            said("mcp --allow-host 10.0.0.1:80").0,
            "--allow-host takes HOST:PORT of a local app (like localhost:3000), not “10.0.0.1:80”."
        );
        assert_eq!(
            said("mcp --panel-idle 0").0,
            "--panel-idle takes a number of hours above 0 (like 12 or 0.5), not “0”."
        );
        assert_eq!(
            said("serve --session-idle 0").0,
            "--session-idle takes a number of seconds above 0, not “0”."
        );
        assert_eq!(
            said("mcp --ask-timeout soon").0,
            "--ask-timeout takes a number of seconds above 0, not “soon”."
        );
        assert_eq!(said("mcp --home").1, UsageError::NeedsValue("--home"));
        assert_eq!(said("mcp --home").0, "--home needs a value.");
        assert_eq!(
            said("browse").0,
            "unknown command “browse”: use mcp, serve or backend."
        );
        assert_eq!(
            said("mcp --frob").0,
            "unknown option “--frob”; see conch-gateway --help."
        );
        assert_eq!(
            said("mcp --notify-command=").0,
            "--notify-command needs a program to run."
        );
    }

    #[test]
    fn mistakes_are_one_sentence() {
        assert!(matches!(parse("mcp --trust yolo"), Err(CliError::Usage(_))));
        assert!(matches!(
            parse("mcp --allow-host 10.0.0.1:80"),
            Err(CliError::Usage(_))
        ));
        assert!(matches!(parse("mcp --port"), Err(CliError::Usage(_))));
        assert!(matches!(
            parse("serve --session-idle 0"),
            Err(CliError::Usage(_))
        ));
        assert!(matches!(parse("browse"), Err(CliError::Usage(_))));
        for bad in [
            "mcp --panel-idle 0",
            "mcp --panel-idle -1",
            "mcp --panel-idle soon",
            "mcp --panel-idle NaN",
            "mcp --panel-idle",
        ] {
            assert!(matches!(parse(bad), Err(CliError::Usage(_))), "{bad}");
        }
        assert_eq!(parse("").unwrap_err(), CliError::Help);
    }
}
