//! The gateway's log: `tracing` events from every crate (the libraries' warnings
//! included), filtered by `RUST_LOG`, written to standard error and appended to
//! `<home>/gateway.log` (owner-only; set aside as `gateway.log.1` past 8 MiB).
//!
//! `RUST_LOG` takes the simple form `level` or `target=level,...` (tracing-subscriber's
//! `Targets`, no regex); unset or unreadable means `warn`.
//!
//! Deliberately absent: standard output. In `mcp` mode it is the MCP stream.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::writer::MakeWriterExt;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Past this size, the old log is set aside when the gateway starts.
const ROTATE_AT: u64 = 8 * 1024 * 1024;

/// What part of the log could not be set up (the rest still works), in the sentence the
/// person sees on standard error.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LogProblem {
    /// `RUST_LOG` is not a filter; warnings are logged.
    #[error(
        "RUST_LOG “{0}” can't be read (use a level, or target=level pairs separated by commas); logging warnings only."
    )]
    Filter(String),
    /// `<home>/gateway.log` can't be opened; the log goes to standard error only.
    #[error("{} can't be written ({source}); logging to standard error only.", path.display())]
    File {
        /// The log file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// Another subscriber came first (in tests).
    #[error("a log subscriber was already installed.")]
    AlreadyInstalled,
}

/// The filter `RUST_LOG` describes, or `warn`.
fn filter(spec: Option<&str>) -> (Targets, Option<LogProblem>) {
    let default = || Targets::new().with_default(tracing::Level::WARN);
    match spec.map(str::trim).filter(|s| !s.is_empty()) {
        None => (default(), None),
        Some(spec) => match spec.parse::<Targets>() {
            Ok(targets) => (targets, None),
            Err(_) => (default(), Some(LogProblem::Filter(spec.to_owned()))),
        },
    }
}

/// Opens `<dir>/gateway.log` for appending, owner-only, setting a large old one aside.
fn open_log(dir: &Path) -> std::io::Result<File> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join("gateway.log");
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > ROTATE_AT) {
        std::fs::rename(&path, dir.join("gateway.log.1"))?;
    }
    let mut options = OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Installs the subscriber for the whole process. Gives a sentence for standard error
/// when part of it could not be set up (the rest still works).
pub(crate) fn install(home: &Path) -> Option<LogProblem> {
    let (targets, mut problem) = filter(std::env::var("RUST_LOG").ok().as_deref());
    let file = match open_log(home) {
        Ok(file) => Some(Mutex::new(file)),
        Err(source) => {
            problem = Some(LogProblem::File {
                path: home.join("gateway.log"),
                source,
            });
            None
        }
    };
    let stderr = std::io::stderr;
    let layer = tracing_subscriber::fmt::layer().with_ansi(false);
    let installed = match file {
        Some(file) => tracing_subscriber::registry()
            .with(layer.with_writer(stderr.and(file)))
            .with(targets)
            .try_init(),
        None => tracing_subscriber::registry()
            .with(layer.with_writer(stderr))
            .with(targets)
            .try_init(),
    };
    if installed.is_err() {
        problem = Some(LogProblem::AlreadyInstalled);
    }
    problem
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing::Level;

    #[test]
    fn rust_log_forms_are_read_and_a_bad_one_falls_back_to_warn() {
        let (targets, problem) = filter(Some("conch_browser=debug,info"));
        assert!(problem.is_none());
        assert!(targets.would_enable("conch_browser::launch", &Level::DEBUG));
        assert!(!targets.would_enable("hyper", &Level::DEBUG));
        assert!(targets.would_enable("hyper", &Level::INFO));
        let (targets, problem) = filter(None);
        assert!(problem.is_none());
        assert!(targets.would_enable("anything", &Level::WARN));
        assert!(!targets.would_enable("anything", &Level::INFO));
        let (targets, problem) = filter(Some("conch=[{x}]loud"));
        assert!(
            matches!(problem, Some(LogProblem::Filter(_))),
            "{problem:?}"
        );
        assert!(!targets.would_enable("conch", &Level::INFO));
    }
}
