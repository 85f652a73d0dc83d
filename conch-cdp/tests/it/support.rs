//! Helpers: launching the test browser, opening pages, bounded waits, capturing traces.

use std::fmt::{Debug, Write as _};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use conch_cdp::protocol::{browser, page, runtime, target};
use conch_cdp::{Config, Connection, Session};
use conch_fixtures::TempProfile;
use futures_util::StreamExt;
use tokio::process::Child;

/// Waits for `future` at most `secs` seconds, failing the test with `what` after that.
pub(crate) async fn within<F: Future>(secs: u64, what: &str, future: F) -> F::Output {
    match tokio::time::timeout(Duration::from_secs(secs), future).await {
        Ok(output) => output,
        Err(_) => panic!("timed out after {secs} s waiting for {what}"),
    }
}

/// A launched test browser.
pub(crate) struct Browser {
    pub(crate) connection: Connection,
    pub(crate) child: Child,
    _profile: TempProfile,
}

/// Launches the test browser over the pipe.
pub(crate) async fn launch() -> Browser {
    let profile = TempProfile::new().expect("temp profile");
    let mut command = conch_fixtures::browser::command(profile.path()).expect("a test browser");
    // Chromium's dbus chatter would bury the test output.
    command.stderr(std::process::Stdio::null());
    let config = Config::default().with_call_timeout(Duration::from_secs(20));
    let (connection, child) = Connection::launch(command, config)
        .await
        .expect("launch over the pipe");
    Browser {
        connection,
        child,
        _profile: profile,
    }
}

impl Browser {
    /// Closes the browser (`Browser.close`), waits for it to exit, kills it if it won't.
    pub(crate) async fn close(mut self) {
        let _ = self
            .connection
            .browser()
            .call_with_timeout(&browser::Close {}, Duration::from_secs(5))
            .await;
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// Opens `about:blank` in a new target and attaches to it (flat).
pub(crate) async fn new_page(connection: &Connection) -> Session {
    let created = connection
        .call(&target::CreateTarget::new("about:blank"))
        .await
        .expect("Target.createTarget");
    connection
        .attach(created.target_id)
        .await
        .expect("Target.attachToTarget")
}

/// Navigates `page` to `url` and waits for its load event (subscribed before navigating).
pub(crate) async fn navigate(page: &Session, url: &str) {
    page.call(&page::Enable {}).await.expect("Page.enable");
    let mut loads = page.subscribe::<page::LoadEventFired>();
    let navigated = page
        .call(&page::Navigate::new(url))
        .await
        .expect("Page.navigate");
    assert_eq!(navigated.error_text, None, "navigation to {url} failed");
    within(15, "Page.loadEventFired", loads.next())
        .await
        .expect("load event stream ended")
        .expect("load event decodes");
}

/// Evaluates `expression` on `session` and returns its JSON value.
pub(crate) async fn eval(session: &Session, expression: &str) -> serde_json::Value {
    let answer = session
        .call(&runtime::Evaluate::value(expression))
        .await
        .expect("Runtime.evaluate");
    assert!(
        answer.exception_details.is_none(),
        "{expression} threw: {:?}",
        answer.exception_details
    );
    answer.result.value.unwrap_or(serde_json::Value::Null)
}

/// A tracing subscriber that keeps every event as one line of text:
/// `target field=value field=value…`.
#[derive(Clone, Default)]
pub(crate) struct Capture {
    lines: Arc<Mutex<Vec<String>>>,
    next_span: Arc<AtomicU64>,
}

impl Capture {
    pub(crate) fn lines(&self) -> Vec<String> {
        self.lines.lock().expect("capture lock").clone()
    }
}

struct Line(String);

impl tracing::field::Visit for Line {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn Debug) {
        let _ = write!(self.0, " {}={:?}", field.name(), value);
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        let _ = write!(self.0, " {}={}", field.name(), value);
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(self.next_span.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut line = Line(event.metadata().target().to_owned());
        event.record(&mut line);
        self.lines.lock().expect("capture lock").push(line.0);
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}
