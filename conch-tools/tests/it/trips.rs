//! How many DevTools commands one act sends (issue 32): on a loaded machine each command
//! the page's process answers waits for its main thread, which every conversation on the
//! browser shares, so the count per act is what a step's p95 grows with. Counted from
//! conch-cdp's wire trace (`conch_cdp::wire`, each command as it is written), the whole
//! tool call with the read after it and the step card's thumbnail, as the gateway runs
//! it.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use conch_browser::protocol::{BrowserEvent, EventSink};
use conch_fixtures::FixtureServer;
use conch_tools::{Choice, Mode, Tools, ToolsConfig};
use serde_json::json;
use tracing::field::{Field, Visit};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;

use crate::support::{Recorder, Setup, blank_window_made, page_targets, ref_of, setup};

/// The commands written since the recorder was installed: (method, session).
type Sent = Arc<Mutex<Vec<(String, String)>>>;

/// Keeps the method and session of every command conch-cdp writes.
struct Recording(Sent);

#[derive(Default)]
struct Fields {
    send: bool,
    method: String,
    session: String,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "direction" => self.send = value == "send",
            "method" => value.clone_into(&mut self.method),
            "session" => value.clone_into(&mut self.session),
            _ => {}
        }
    }

    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

impl<S: tracing::Subscriber> Layer<S> for Recording {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().target() != "conch_cdp::wire" {
            return;
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        if fields.send {
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((fields.method, fields.session));
        }
    }
}

/// The process's recorder of written commands (one per test process, as nextest runs
/// each test in its own).
fn recorder() -> Sent {
    static SENT: OnceLock<Sent> = OnceLock::new();
    SENT.get_or_init(|| {
        let sent: Sent = Arc::default();
        let filter = tracing_subscriber::filter::Targets::new()
            .with_target("conch_cdp::wire", tracing::Level::TRACE);
        let subscriber =
            tracing_subscriber::registry().with(Recording(Arc::clone(&sent)).with_filter(filter));
        // Another test of this process may have installed it first: then nothing is
        // recorded, and the count below says so.
        let _ = tracing::subscriber::set_global_default(subscriber);
        sent
    })
    .clone()
}

/// Takes the steps' events, as the gateway's event log does, so each step makes its card's
/// thumbnail.
#[derive(Debug, Default)]
struct Steps;

impl EventSink for Steps {
    fn send(&self, _: &str, _: BrowserEvent) {}
}

/// The commands one call of `tool` with `args` writes, once its step card's thumbnail is
/// made.
async fn sent_by(
    chat: &conch_tools::Chat,
    sent: &Sent,
    tool: &str,
    args: &serde_json::Value,
) -> Vec<String> {
    let start = sent.lock().map_or(0, |s| s.len());
    let result = chat.call(tool, args).await;
    assert!(!result.is_error, "{tool}: {}", result.text());
    // The thumbnail is made in the background once the call answered.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let sent = sent
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    sent[start..]
        .iter()
        .map(|(method, _)| method.clone())
        .collect()
}

/// The tools on `setup`'s browser, reaching the fixture pages on loopback, answering
/// This chat to the site question, with `events` heard if given.
fn on_loopback(setup: &Setup, events: Option<Arc<dyn EventSink>>) -> Tools {
    let mut config = ToolsConfig::new(Recorder::answering(Choice::ThisChat, Choice::No));
    config.net.allow_localhost = true;
    config.events = events;
    Tools::new(conch_browser::Browser::new(setup.config.clone()), config)
}

/// Issue 32: one browser_click on a button of the 200-item page, and one browser_type into
/// its field, each with the read after it and the step card's thumbnail, send few DevTools
/// commands: no page's layout asked twice in one act, the tabs' titles not asked of the
/// browser when its events already tell them, the tab not brought to the front when it is
/// there, the hit test not taken apart when the pointer meets the element itself, and the
/// actionability check and the scroll into view in one call. The click still lands (the
/// cart counts it) and the text is still typed.
#[tokio::test(flavor = "multi_thread")]
async fn issue_32_one_click_and_one_type_send_few_devtools_commands() {
    Box::pin(async move {
        let sent = recorder();
        let server = FixtureServer::start().await.expect("fixture server");
        let setup = setup();
        let tools = on_loopback(&setup, Some(Arc::new(Steps)));
        let chat = tools.chat("trips", Mode::FullTrust);
        let opened = chat
            .call("browser_open", &json!({ "url": server.url("load.html") }))
            .await;
        assert!(!opened.is_error, "{}", opened.text());
        let text = opened.text();
        let add = ref_of(&text, "button \"Add to cart\"");
        let note = ref_of(&text, "textbox \"Note\"");
        blank_window_made(&chat).await;
        // The first act of a page sets up what every later one reuses (the dialog watch,
        // the network domain, the downloads' place): counted from the second.
        sent_by(&chat, &sent, "browser_click", &json!({ "ref": add })).await;
        let click = sent_by(&chat, &sent, "browser_click", &json!({ "ref": add })).await;
        let typed = sent_by(
            &chat,
            &sent,
            "browser_type",
            &json!({ "ref": note, "text": "gift wrap" }),
        )
        .await;
        let read = chat.call("browser_read", &json!({})).await;
        assert!(read.text().contains("Cart: 2 items"), "{}", read.text());
        let field = chat
            .call("browser_read", &json!({ "find": "gift wrap" }))
            .await;
        assert!(field.text().contains("gift wrap"), "{}", field.text());
        println!("click: {} commands: {click:?}", click.len());
        println!("type: {} commands: {typed:?}", typed.len());
        assert!(
            !click.is_empty(),
            "no command was recorded: another log subscriber was installed first"
        );
        let count = |list: &[String], method: &str| list.iter().filter(|m| *m == method).count();
        for list in [&click, &typed] {
            assert_eq!(count(list, "Target.getTargets"), 0, "{list:?}");
            assert_eq!(count(list, "Page.bringToFront"), 0, "{list:?}");
            // The act's, and the thumbnail's once the page settled.
            assert!(count(list, "Page.getLayoutMetrics") <= 2, "{list:?}");
            // The act's watch, its wait, and one read of a page with nothing new to mark.
            assert!(count(list, "Runtime.evaluate") <= 4, "{list:?}");
        }
        assert_eq!(count(&typed, "Page.getLayoutMetrics"), 1, "{typed:?}");
        // The pointer meets the button itself: the hit test is not taken apart.
        assert_eq!(count(&click, "DOM.resolveNode"), 0, "{click:?}");
        assert!(count(&click, "Runtime.callFunctionOn") <= 2, "{click:?}");
        // Before issue 32's work: 27 for the click, 19 for the type.
        assert!(click.len() <= 17, "{} commands: {click:?}", click.len());
        assert!(typed.len() <= 15, "{} commands: {typed:?}", typed.len());
        tools.browser().shutdown().await;
    })
    .await;
}

/// Issue 32, the seam of two conversations on one browser: a tab Conch brought to the
/// front for a step is not brought forward again at the next, but once another target
/// came (another conversation's second tab here, in a window made for it; a popup in its
/// own window alike) it is, and the click lands.
#[tokio::test(flavor = "multi_thread")]
async fn issue_32_a_tab_is_brought_forward_again_once_another_target_came() {
    Box::pin(async move {
        let sent = recorder();
        let server = FixtureServer::start().await.expect("fixture server");
        let setup = setup();
        let tools = on_loopback(&setup, None);
        let first = tools.chat("front-1", Mode::FullTrust);
        let second = tools.chat("front-2", Mode::FullTrust);
        let opened = first
            .call("browser_open", &json!({ "url": server.url("load.html") }))
            .await;
        assert!(!opened.is_error, "{}", opened.text());
        blank_window_made(&first).await;
        let add = ref_of(&opened.text(), "button \"Add to cart\"");
        let click = json!({ "ref": add });
        let fronted = |list: &[String]| list.iter().any(|m| m == "Page.bringToFront");
        let before = sent_by(&first, &sent, "browser_click", &click).await;
        assert!(fronted(&before), "{before:?}");
        let again = sent_by(&first, &sent, "browser_click", &click).await;
        assert!(!fronted(&again), "{again:?}");
        // Another conversation's tabs come while the first's is in front: its first takes
        // the blank window the browser kept ready (no target comes for it), its second
        // comes in a window made for it (the next blank one is made only after a load
        // and a pause in its calls).
        let other = second
            .call("browser_open", &json!({ "url": server.url("basic.html") }))
            .await;
        assert!(!other.is_error, "{}", other.text());
        let url = server.url("basic.html");
        let another = second
            .call("browser_tabs", &json!({ "action": "open", "url": url }))
            .await;
        assert!(!another.is_error, "{}", another.text());
        let after = sent_by(&first, &sent, "browser_click", &click).await;
        assert!(fronted(&after), "{after:?}");
        let read = first.call("browser_read", &json!({})).await;
        assert!(read.text().contains("Cart: 3 items"), "{}", read.text());
        tools.browser().shutdown().await;
    })
    .await;
}

/// Issue 31, the seam of the blank window and the agent's steps: the window the browser
/// keeps after its first tab's load is not made while the agent's calls follow one
/// another at once (it would hold up the next step on the browser's main thread), and is
/// made in the first pause.
#[tokio::test(flavor = "multi_thread")]
async fn issue_31_the_blank_window_waits_for_a_pause_in_the_agents_calls() {
    Box::pin(async move {
        let server = FixtureServer::start().await.expect("fixture server");
        let setup = setup();
        let tools = on_loopback(&setup, None);
        let chat = tools.chat("busy", Mode::FullTrust);
        let opened = chat
            .call("browser_open", &json!({ "url": server.url("basic.html") }))
            .await;
        assert!(!opened.is_error, "{}", opened.text());
        let busy = std::time::Instant::now();
        while busy.elapsed() < Duration::from_millis(1500) {
            let read = chat.call("browser_read", &json!({})).await;
            assert!(!read.is_error, "{}", read.text());
        }
        assert_eq!(page_targets(&chat).await, 1, "made while the calls went on");
        blank_window_made(&chat).await;
        tools.browser().shutdown().await;
    })
    .await;
}
