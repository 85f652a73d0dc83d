//! When the gateway is asked to stop: Ctrl-C (SIGINT) anywhere, and SIGTERM on Unix (a
//! service manager's stop, `kill`, a container's end). Every one of them leads to the
//! same orderly shutdown: cloud sessions released (BE-5), open errands set aside sealed
//! (ERR-12), pending saves flushed.
//!
//! The signals are taken over when [`Stop::listen`] is called, at the gateway's start, so
//! one that arrives while the browser is starting is not lost to the default action (which
//! would end the process without any of that).

use std::time::Duration;

use tokio::sync::watch;

/// How long a stop waits for the requests in flight before it shuts down anyway.
pub(crate) const GRACE: Duration = Duration::from_secs(5);

/// Resolves once a stop was asked for; cheap to clone, every clone sees it.
#[derive(Debug, Clone)]
pub(crate) struct Stop {
    asked: watch::Receiver<bool>,
}

impl Stop {
    /// Takes over SIGINT and SIGTERM (Ctrl-C only, off Unix) now, and waits for them in
    /// a task of the current runtime. A signal that cannot be taken over keeps its default
    /// action, with a warning.
    pub(crate) fn listen() -> Stop {
        let (tell, asked) = watch::channel(false);
        let signals = Signals::install();
        tokio::spawn(async move {
            signals.next().await;
            tracing::info!("asked to stop: shutting down");
            let _ = tell.send(true);
        });
        Stop { asked }
    }

    /// Waits until a stop is asked for.
    pub(crate) async fn asked(mut self) {
        // An error means the listening task is gone without a signal: never resolve.
        if self.asked.wait_for(|asked| *asked).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// The signals taken over.
struct Signals {
    #[cfg(unix)]
    terminate: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    interrupt: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    #[cfg(unix)]
    fn install() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        let take = |kind: SignalKind, name: &str| match signal(kind) {
            Ok(signal) => Some(signal),
            Err(e) => {
                tracing::warn!("{name} can't be taken over ({e}); it ends the gateway at once");
                None
            }
        };
        Signals {
            terminate: take(SignalKind::terminate(), "SIGTERM"),
            interrupt: take(SignalKind::interrupt(), "SIGINT"),
        }
    }

    #[cfg(not(unix))]
    fn install() -> Signals {
        Signals {}
    }

    /// The first signal to arrive.
    #[cfg(unix)]
    async fn next(self) {
        async fn one(signal: Option<tokio::signal::unix::Signal>) {
            match signal {
                Some(mut signal) => {
                    if signal.recv().await.is_none() {
                        std::future::pending::<()>().await;
                    }
                }
                None => std::future::pending::<()>().await,
            }
        }
        tokio::select! {
            () = one(self.terminate) => {}
            () = one(self.interrupt) => {}
        }
    }

    /// Ctrl-C (Windows' console close and break are not taken over).
    #[cfg(not(unix))]
    async fn next(self) {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!("Ctrl-C can't be taken over ({e})");
            std::future::pending::<()>().await;
        }
    }
}
