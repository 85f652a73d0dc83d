//! The gateway's default [`Notifier`] (HAND-1, HAND-7): a handoff is said on standard
//! error (never standard output, which carries MCP in `mcp` mode) and in the log, and
//! with `--notify-command` it also runs that command, so a desktop notification or a
//! phone push can carry the take-over link.
//!
//! The command is split on whitespace (no shell): the first word is the program, the
//! rest its first arguments, followed by two more: the title, and the body with the link.
//! It is spawned and never waited on (a thread reaps it); one that can't start is a
//! warning, never an error.
//!
//! Deliberately absent: retries, and any answer from the command.

use std::process::{Command, Stdio};

use conch_tools::{Notification, Notifier};

/// Says a handoff on standard error and the log, and runs the person's command.
#[derive(Debug, Clone, Default)]
pub struct GatewayNotifier {
    /// `--notify-command`, split: the program and its first arguments.
    pub command: Option<Vec<String>>,
}

/// `text` on one line: control characters (a reason's newlines) become spaces.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

impl GatewayNotifier {
    /// The line said on standard error: `<title>: <body> Take over: <link>`.
    pub(crate) fn line(notification: &Notification) -> String {
        let mut line = format!(
            "{}: {}",
            one_line(&notification.title),
            one_line(&notification.body)
        );
        if let Some(link) = &notification.link {
            line.push_str(&format!(" {}: {}", notification.action, one_line(link)));
        }
        line
    }

    /// Runs the command with the title and `<body> <link>`, without waiting for it.
    fn run(&self, words: &[String], notification: &Notification) {
        let Some((program, first)) = words.split_first() else {
            return;
        };
        let text = match &notification.link {
            Some(link) => format!("{} {link}", notification.body),
            None => notification.body.clone(),
        };
        let spawned = Command::new(program)
            .args(first)
            .arg(&notification.title)
            .arg(text)
            .stdin(Stdio::null())
            // Standard output is the MCP stream in `mcp` mode: the command never writes there.
            .stdout(Stdio::null())
            .spawn();
        match spawned {
            Ok(mut child) => {
                let reaped = std::thread::Builder::new()
                    .name("notify-command".to_owned())
                    .spawn(move || {
                        if let Ok(status) = child.wait()
                            && !status.success()
                        {
                            tracing::warn!("the notify command ended with {status}");
                        }
                    });
                if let Err(e) = reaped {
                    tracing::warn!("the notify command runs but can't be watched ({e})");
                }
            }
            Err(e) => {
                tracing::warn!("the notify command “{program}” can't start ({e})");
                eprintln!("conch-gateway: the notify command “{program}” can't start ({e}).");
            }
        }
    }
}

impl Notifier for GatewayNotifier {
    fn notify(&self, notification: &Notification) {
        let line = GatewayNotifier::line(notification);
        eprintln!("conch-gateway: {line}");
        tracing::info!(
            conversation = %notification.conversation,
            gate = notification.gate,
            "handoff: {line}"
        );
        if let Some(words) = &self.command {
            self.run(words, notification);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notification() -> Notification {
        Notification {
            conversation: "c1".to_owned(),
            title: "Conch needs you in the browser".to_owned(),
            body: "Sign in.\nPress I'm done when you have finished.".to_owned(),
            link: Some("http://127.0.0.1:7391/?browser=1&conversation=c1".to_owned()),
            action: "Take over",
            gate: false,
        }
    }

    /// HAND-7: the line carries the title, the body on one line, and the take-over link.
    #[test]
    fn hand_7_the_line_carries_the_title_the_body_and_the_link() {
        assert_eq!(
            GatewayNotifier::line(&notification()),
            "Conch needs you in the browser: Sign in. Press I'm done when you have finished. Take over: http://127.0.0.1:7391/?browser=1&conversation=c1"
        );
        let mut without = notification();
        without.link = None;
        assert!(!GatewayNotifier::line(&without).contains("Take over"));
    }

    /// A command that can't start is a warning: notify returns as usual.
    #[test]
    fn a_command_that_cant_start_is_only_a_warning() {
        let notifier = GatewayNotifier {
            command: Some(vec!["/nonexistent/conch-notify".to_owned()]),
        };
        notifier.notify(&notification());
    }
}
