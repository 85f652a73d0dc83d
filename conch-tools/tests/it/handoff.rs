//! browser_handoff and the wheel through the tools, against a real browser (HAND-1,
//! HAND-6, HAND-7, HAND-8): the person is notified with the link, a sign-in handoff ends
//! by itself and says so, and the agent's call waits while the person drives.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use conch_browser::protocol::{
    BrowserActionKind, BrowserEvent, BrowserHandoff, BrowserStep, EventSink,
};
use conch_browser::wheel::Activity;
use conch_fixtures::FixtureServer;
use conch_fixtures::pictures::near;
use conch_tools::{Choice, Mode, Notification, Notifier, Tools, ToolsConfig};
use serde_json::json;

use crate::support::{Recorder, setup};

/// Keeps every notification.
#[derive(Debug, Default)]
struct Told(Mutex<Vec<Notification>>);

impl Notifier for Told {
    fn notify(&self, notification: &Notification) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(notification.clone());
    }
}

fn tools_with(setup: &crate::support::Setup, told: Arc<Told>) -> Tools {
    let mut config = ToolsConfig::new(Recorder::answering(Choice::No, Choice::No));
    config.net.allow_localhost = true;
    config.notifier = Some(told);
    config.panel_link = Some("http://127.0.0.1:7391/chat".to_owned());
    Tools::new(conch_browser::Browser::new(setup.config.clone()), config)
}

/// HAND-1, HAND-6, HAND-7: the person is told, with the link and the Take over action;
/// a sign-in ends by itself once they are through and the agent reads that and the page.
#[tokio::test(flavor = "multi_thread")]
async fn hand_1_a_handoff_notifies_waits_and_ends_by_itself_at_a_gate() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let told = Arc::new(Told::default());
    let tools = tools_with(&setup, Arc::clone(&told));
    let chat = tools.chat("signin", Mode::Ask);
    chat.call(
        "browser_open",
        &json!({ "url": server.url("signin-gate.html") }),
    )
    .await;
    let waiting = tokio::spawn({
        let chat = chat.clone();
        async move {
            chat.call(
                "browser_handoff",
                &json!({ "reason": "Sign in to Harbour Mail." }),
            )
            .await
        }
    });
    tokio::time::sleep(Duration::from_millis(800)).await;
    let notes = told
        .0
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    assert_eq!(notes.len(), 1, "{notes:?}");
    let note = &notes[0];
    assert!(note.gate, "{note:?}");
    assert_eq!(note.action, "Take over");
    assert_eq!(
        note.link.as_deref(),
        Some("http://127.0.0.1:7391/chat?browser=1&conversation=signin")
    );
    assert!(note.body.contains("carries on by itself"), "{note:?}");
    assert!(
        !waiting.is_finished(),
        "the step did not wait for the person"
    );
    // The person signs in (the live view's input would do this).
    let browser = tools.browser();
    let wheel = browser.wheel("signin");
    wheel.take_over();
    wheel.person_input();
    let page = browser.conversation("signin");
    let _ = page
        .evaluate(&format!(
            "location.href = {:?}; true",
            server.url("account.html")
        ))
        .await;
    let result = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("the handoff ends by itself")
        .unwrap();
    let text = result.text();
    assert!(!result.is_error, "{text}");
    assert!(
        text.contains("You got through, so Conch carried on"),
        "{text}"
    );
    assert!(
        text.contains("Welcome back"),
        "the page as the person left it: {text}"
    );
    tools.browser().shutdown().await;
}

/// HAND-8: while the person drives, the agent's next call waits for hand back, and its
/// result says the person used the browser.
#[tokio::test(flavor = "multi_thread")]
async fn hand_8_an_agent_call_during_takeover_returns_after_hand_back() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools_with(&setup, Arc::new(Told::default()));
    let chat = tools.chat("drive", Mode::Ask);
    chat.call("browser_open", &json!({ "url": server.url("basic.html") }))
        .await;
    let wheel = tools.browser().wheel("drive");
    wheel.take_over();
    let reading = tokio::spawn({
        let chat = chat.clone();
        async move { chat.call("browser_read", &json!({})).await }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        !reading.is_finished(),
        "the read went on while the person drove"
    );
    wheel.hand_back();
    let read = tokio::time::timeout(Duration::from_secs(5), reading)
        .await
        .expect("the read returns after hand back")
        .unwrap();
    assert!(
        read.text().contains("The person used the browser"),
        "{}",
        read.text()
    );
    tools.browser().shutdown().await;
}

/// HAND-9: Stop during a handoff ends the step, which says so.
#[tokio::test(flavor = "multi_thread")]
async fn hand_9_stop_during_a_handoff_returns_stopped() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools_with(&setup, Arc::new(Told::default()));
    let chat = tools.chat("pay", Mode::Ask);
    chat.call(
        "browser_open",
        &json!({ "url": server.url("payment.html") }),
    )
    .await;
    let waiting = tokio::spawn({
        let chat = chat.clone();
        async move {
            chat.call(
                "browser_handoff",
                &json!({ "reason": "Pay for the order." }),
            )
            .await
        }
    });
    tokio::time::sleep(Duration::from_millis(800)).await;
    tools.browser().wheel("pay").stop();
    let result = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("Stop ends the handoff")
        .unwrap();
    assert!(result.text().starts_with("Stopped"), "{}", result.text());
    tools.browser().shutdown().await;
}

/// Keeps every protocol event, by conversation (PROTO-2).
#[derive(Debug, Default)]
struct Sink(Mutex<Vec<(String, BrowserEvent)>>);

impl EventSink for Sink {
    fn send(&self, conversation: &str, event: BrowserEvent) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((conversation.to_owned(), event));
    }
}

impl Sink {
    fn steps(&self) -> Vec<BrowserStep> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .filter_map(|(_, e)| match e {
                BrowserEvent::Step(step) => Some(step.clone()),
                _ => None,
            })
            .collect()
    }
}

fn tools_with_sink(setup: &crate::support::Setup, sink: Arc<Sink>) -> Tools {
    let mut config = ToolsConfig::new(Recorder::answering(Choice::ThisChat, Choice::No));
    config.net.allow_localhost = true;
    config.notifier = Some(Arc::new(Told::default()));
    config.events = Some(sink);
    Tools::new(conch_browser::Browser::new(setup.config.clone()), config)
}

/// A fixture server, a toolbox that answers This chat and records events in `sink`, and
/// conversation `id` with `page` open.
struct Lab {
    server: FixtureServer,
    _setup: crate::support::Setup,
    tools: Tools,
    chat: conch_tools::Chat,
    sink: Arc<Sink>,
    /// The open's result.
    opened: conch_tools::ToolResult,
}

impl Lab {
    async fn open(id: &str, page: &str) -> Lab {
        let server = FixtureServer::start().await.expect("fixture server");
        let setup = setup();
        let sink = Arc::new(Sink::default());
        let tools = tools_with_sink(&setup, Arc::clone(&sink));
        let chat = tools.chat(id, Mode::Ask);
        let opened = chat
            .call("browser_open", &json!({ "url": server.url(page) }))
            .await;
        Lab {
            server,
            _setup: setup,
            tools,
            chat,
            sink,
            opened,
        }
    }
}

/// LIVE-5: a click publishes the agent's cursor at the element's centre with a caption
/// naming it; a read publishes no cursor.
#[tokio::test(flavor = "multi_thread")]
async fn live_5_a_click_publishes_a_cursor_at_the_elements_centre_with_its_caption() {
    let lab = Lab::open("cursor", "counter.html").await;
    let (tools, chat) = (&lab.tools, &lab.chat);
    let opened = &lab.opened;
    let add = crate::support::ref_of(&opened.text(), "button \"Add\"");
    let mut activity = tools.browser().wheel("cursor").activity();
    let clicked = chat.call("browser_click", &json!({ "ref": add })).await;
    assert!(!clicked.is_error, "{}", clicked.text());
    let centre = chat
        .conversation()
        .evaluate("(() => { const r = document.querySelector('button').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        .await
        .unwrap();
    let cursor = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if let Activity::Cursor {
                x,
                y,
                kind,
                caption,
            } = activity.recv().await.unwrap()
            {
                return (x, y, kind, caption);
            }
        }
    })
    .await
    .expect("a cursor was published");
    let (x, y, kind, caption) = cursor;
    assert!(
        (x - centre[0].as_f64().unwrap()).abs() < 1.5
            && (y - centre[1].as_f64().unwrap()).abs() < 1.5,
        "the cursor at ({x}, {y}), the button's centre at {centre}"
    );
    assert_eq!(kind, "click");
    assert_eq!(caption, "Clicking “Add”");
    chat.call("browser_read", &json!({})).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    while let Ok(next) = activity.try_recv() {
        assert!(
            !matches!(next, Activity::Cursor { .. }),
            "a read moved the cursor: {next:?}"
        );
    }
    tools.browser().shutdown().await;
}

/// LIVE-6, LIVE-7, DATA-8: three actions give three `browser.step` events, each with a
/// JPEG thumbnail under `<home>/browser/shots/`; only the first opens the panel.
#[tokio::test(flavor = "multi_thread")]
async fn live_6_three_actions_produce_three_steps_each_with_a_thumbnail() {
    let lab = Lab::open("steps", "counter.html").await;
    let (tools, chat, sink) = (&lab.tools, &lab.chat, &lab.sink);
    let opened = &lab.opened;
    let add = crate::support::ref_of(&opened.text(), "button \"Add\"");
    chat.call("browser_click", &json!({ "ref": add })).await;
    chat.call("browser_press", &json!({ "key": "End" })).await;
    let mut steps = Vec::new();
    for _ in 0..100 {
        steps = sink.steps();
        if steps.len() >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(steps.len(), 3, "{steps:?}");
    let kinds: Vec<_> = steps.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [
            BrowserActionKind::Navigate,
            BrowserActionKind::Click,
            BrowserActionKind::Press
        ]
    );
    let home = &tools.browser().config().home;
    for step in &steps {
        assert_eq!(step.tab, "t1");
        let name = step.thumbnail.as_deref().expect("a thumbnail");
        assert!(name.starts_with("browser/shots/"), "{name}");
        let jpeg = std::fs::read(home.root().join(name)).expect("the thumbnail file");
        assert_eq!(jpeg[..3], [0xff, 0xd8, 0xff], "a JPEG");
    }
    let open: Vec<bool> = steps.iter().map(|s| s.open_panel).collect();
    assert_eq!(
        open,
        [true, false, false],
        "only the first step opens the panel"
    );
    assert_eq!(steps[1].caption, "Clicking “Add”");
    tools.browser().shutdown().await;
}

/// The size and centre colour of `jpeg`, decoded by the conversation's own page.
async fn centre_pixel(chat: &conch_tools::Chat, jpeg: &[u8]) -> (u64, u64, [u8; 3]) {
    let script =
        conch_fixtures::pictures::centre_pixel_script(&conch_browser::page::base64::encode(jpeg));
    let got = chat
        .conversation()
        .evaluate(&script)
        .await
        .expect("the page decodes the picture");
    let n = |i: usize| got[i].as_u64().unwrap_or_else(|| panic!("{got}"));
    let colour = |i: usize| u8::try_from(n(i)).expect("a colour");
    (n(0), n(1), [colour(2), colour(3), colour(4)])
}

/// LIVE-6, DATA-8 (issue 32): a step's thumbnail is its own tab as the act left it, as
/// small as a card needs: a click that paints the page green shows green, neither the page
/// before the click (red) nor the conversation's other tab (blue).
#[tokio::test(flavor = "multi_thread")]
async fn live_6_a_steps_thumbnail_shows_its_own_tab_after_the_act() {
    let lab = Lab::open("painted", "paint.html?c=0000ff").await;
    let (tools, chat, sink) = (&lab.tools, &lab.chat, &lab.sink);
    let second = chat
        .call(
            "browser_tabs",
            &json!({ "action": "open", "url": lab.server.url("paint.html") }),
        )
        .await;
    assert!(!second.is_error, "{}", second.text());
    let read = chat.call("browser_read", &json!({})).await;
    let paint = crate::support::ref_of(&read.text(), "button \"Paint it green\"");
    let clicked = chat.call("browser_click", &json!({ "ref": paint })).await;
    assert!(!clicked.is_error, "{}", clicked.text());
    let mut steps = Vec::new();
    for _ in 0..100 {
        steps = sink.steps();
        if steps.len() >= 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let kinds: Vec<_> = steps.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [
            BrowserActionKind::Navigate,
            BrowserActionKind::Tab,
            BrowserActionKind::Read,
            BrowserActionKind::Click
        ]
    );
    let home = &tools.browser().config().home;
    let picture = |i: usize| {
        let name = steps[i].thumbnail.as_deref().expect("a thumbnail");
        std::fs::read(home.root().join(name)).expect("the thumbnail file")
    };
    let (width, height, first) = centre_pixel(chat, &picture(0)).await;
    assert!(
        near(first, [0, 0, 255]),
        "the first tab's open shows it blue: {first:?}"
    );
    assert!(
        width <= 320 && height <= 320 && width >= 160,
        "a card's size: {width}×{height}"
    );
    let (_, _, before) = centre_pixel(chat, &picture(2)).await;
    assert!(
        near(before, [255, 0, 0]),
        "the second tab, read before the click, is red: {before:?}"
    );
    let (_, _, after) = centre_pixel(chat, &picture(3)).await;
    assert!(
        near(after, [0, 192, 0]),
        "the click's thumbnail shows its tab painted green (red: taken before the act; blue: the other tab): {after:?}"
    );
    assert_eq!(steps[3].tab, "t2");
    tools.browser().shutdown().await;
}

/// LIVE-14: Stop ends the agent's call in flight, and its result says the person
/// pressed Stop.
#[tokio::test(flavor = "multi_thread")]
async fn live_14_stop_ends_the_call_in_flight() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools_with(&setup, Arc::new(Told::default()));
    let chat = tools.chat("stop", Mode::Ask);
    chat.call("browser_open", &json!({ "url": server.url("basic.html") }))
        .await;
    let waiting = tokio::spawn({
        let chat = chat.clone();
        async move {
            chat.call(
                "browser_wait",
                &json!({ "text": "words that never come", "seconds": 20 }),
            )
            .await
        }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!waiting.is_finished());
    tools.browser().wheel("stop").interrupt();
    let result = tokio::time::timeout(Duration::from_secs(2), waiting)
        .await
        .expect("Stop ends the call")
        .unwrap();
    assert!(result.is_error);
    assert!(
        result.text().contains("the person pressed Stop"),
        "{}",
        result.text()
    );
    // The next call runs as usual.
    let read = chat.call("browser_read", &json!({})).await;
    assert!(!read.is_error, "{}", read.text());
    tools.browser().shutdown().await;
}

/// HAND-1, HAND-6, PROTO-2: a handoff raises `browser.handoff` when it opens and when it
/// ends, with how it ended.
#[tokio::test(flavor = "multi_thread")]
async fn hand_1_a_handoff_raises_its_event_opening_and_ending() {
    let lab = Lab::open("pay", "payment.html").await;
    let (tools, chat, sink) = (&lab.tools, &lab.chat, &lab.sink);
    let waiting = tokio::spawn({
        let chat = chat.clone();
        async move {
            chat.call("browser_handoff", &json!({ "reason": "Pay the invoice." }))
                .await
        }
    });
    tokio::time::sleep(Duration::from_millis(600)).await;
    tools.browser().wheel("pay").hand_back();
    let result = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("I'm done ends it")
        .unwrap();
    assert!(result.text().contains("I'm done"), "{}", result.text());
    let handoffs: Vec<BrowserHandoff> = sink
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|(conv, e)| match e {
            BrowserEvent::Handoff(h) if conv == "pay" => Some(h.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        handoffs,
        [
            BrowserHandoff {
                reason: "Pay the invoice.".to_owned(),
                auto: false,
                outcome: None
            },
            BrowserHandoff {
                reason: "Pay the invoice.".to_owned(),
                auto: false,
                outcome: Some("handedBack".to_owned())
            }
        ]
    );
    tools.browser().shutdown().await;
}

/// SNAP-7, LIVE-13: what the person changed while they had the tab comes first in the
/// agent's next result, marked as theirs; the step's own diff follows it.
#[tokio::test(flavor = "multi_thread")]
async fn snap_7_the_persons_changes_are_marked_as_theirs_in_the_next_result() {
    let lab = Lab::open("marked", "counter.html").await;
    let (tools, chat) = (&lab.tools, &lab.chat);
    let opened = &lab.opened;
    let add = crate::support::ref_of(&opened.text(), "button \"Add\"");
    // The person takes over and edits the page (their typing would do this).
    let wheel = tools.browser().wheel("marked");
    wheel.take_over();
    wheel.person_input();
    chat.conversation()
        .evaluate("document.querySelector('h1').textContent = 'Edited by hand'; true")
        .await
        .unwrap();
    wheel.hand_back();
    let clicked = chat.call("browser_click", &json!({ "ref": add })).await;
    let text = clicked.text();
    assert!(!clicked.is_error, "{text}");
    let person = text
        .find("The person changed this while they had the tab")
        .unwrap_or_else(|| panic!("no mark of the person's change: {text}"));
    let edited = text.find("Edited by hand").expect("the person's change");
    let step = text.find("Then your step:").expect("the step's own diff");
    let counted = text.rfind("Count: 1").expect("the click's change");
    assert!(person < edited && edited < step && step < counted, "{text}");
    tools.browser().shutdown().await;
}

/// A form whose first field, once typed into, lets the test's stand-in person take the
/// wheel: its input handler asks `/wheel-took` (a synchronous request, so the server has
/// it before the handler ends) and then keeps the page busy a moment, as a person's
/// click lands while the agent's call is mid-way.
const TAKEN_MIDWAY: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Shipping</title></head>
<body>
  <h1>Shipping</h1>
  <form action="/wheel-sent" method="get">
    <label>Name <input id="name" name="name"></label>
    <label>Street <input id="street" name="street"></label>
    <label>Town <input id="town" name="town"></label>
    <button id="next">Next</button>
  </form>
  <script>
    document.getElementById('name').addEventListener('input', () => {
      const ask = new XMLHttpRequest();
      ask.open('GET', '/wheel-took', false);
      ask.send();
      const until = performance.now() + 400;
      while (performance.now() < until) {}
    }, { once: true });
  </script>
</body></html>"#;

/// [`TAKEN_MIDWAY`] served and opened in conversation "wheel" (the site allowed for the
/// chat when asked): the server, what the tools live in, the tools, the chat and the page
/// as the open read it.
async fn taken_midway() -> (
    Arc<FixtureServer>,
    crate::support::Setup,
    Tools,
    conch_tools::Chat,
    String,
) {
    let server = Arc::new(FixtureServer::start().await.expect("a fixture server"));
    let page = conch_fixtures::Response::html(TAKEN_MIDWAY);
    server.route("wheel-form.html", page);
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let tools = crate::support::tools(&setup, asker);
    let chat = tools.chat("wheel", Mode::Ask);
    let url = server.url("wheel-form.html");
    let page = chat
        .call("browser_open", &json!({ "url": url }))
        .await
        .text();
    (server, setup, tools, chat, page)
}

/// The stand-in person: takes the wheel of `conversation` as soon as the page asked
/// `/wheel-took`.
fn take_over_when_asked(
    server: &Arc<FixtureServer>,
    tools: &Tools,
    conversation: &str,
) -> tokio::task::JoinHandle<()> {
    let asked = Arc::clone(server);
    let wheel = tools.browser().wheel(conversation);
    tokio::spawn(async move {
        while asked.requests("wheel-took") == 0 {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        wheel.take_over();
    })
}

/// HAND-8, LIVE-8 (issue 30, seam of `submit` and the wheel): the person takes the wheel
/// while browser_type's text goes in; its Enter is not pressed among their acts, nothing
/// is submitted, and the result says so. The agent's next call waits for hand back.
#[tokio::test(flavor = "multi_thread")]
async fn hand_8_a_submit_is_not_pressed_once_the_person_takes_the_wheel() {
    let (server, _setup, tools, chat, page) = taken_midway().await;
    let field = crate::support::ref_of(&page, "textbox \"Name\"");
    let person = take_over_when_asked(&server, &tools, "wheel");
    let typed = Box::pin(chat.call(
        "browser_type",
        &json!({ "ref": field, "text": "Ada Lovelace", "submit": true }),
    ))
    .await;
    person.await.unwrap();
    assert!(typed.is_error, "{}", typed.text());
    assert!(
        typed.text().contains("Enter was not pressed")
            && typed.text().contains("the person took the wheel"),
        "{}",
        typed.text()
    );
    assert!(
        typed.text().contains("The person used the browser"),
        "{}",
        typed.text()
    );
    assert_eq!(server.requests("wheel-sent"), 0, "nothing was submitted");

    let reading = tokio::spawn({
        let chat = chat.clone();
        async move { chat.call("browser_read", &json!({})).await }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!reading.is_finished(), "the next call waits for the wheel");
    tools.browser().wheel("wheel").hand_back();
    let read = tokio::time::timeout(Duration::from_secs(10), reading)
        .await
        .expect("the read returns after hand back")
        .unwrap();
    assert!(
        read.text()
            .contains("textbox \"Name\" [ref=e1]: Ada Lovelace"),
        "{}",
        read.text()
    );
    let value = chat
        .conversation()
        .evaluate("document.getElementById('name').value")
        .await
        .unwrap();
    assert_eq!(
        value,
        json!("Ada Lovelace"),
        "the text the agent typed stays"
    );
    tools.browser().shutdown().await;
}

/// HAND-8, LIVE-8 (issue 30, seam of browser_form and the wheel): the person takes the
/// wheel after the form's first field; the fields left are not filled among their acts
/// and are named, and the agent's next call waits for hand back.
#[tokio::test(flavor = "multi_thread")]
async fn hand_8_a_form_stops_filling_once_the_person_takes_the_wheel() {
    let (server, _setup, tools, chat, page) = taken_midway().await;
    let [name, street, town] = ["Name", "Street", "Town"]
        .map(|label| crate::support::ref_of(&page, &format!("textbox \"{label}\"")));
    let person = take_over_when_asked(&server, &tools, "wheel");
    let filled = Box::pin(chat.call(
        "browser_form",
        &json!({ "fields": [
            { "ref": name, "value": "Ada Lovelace" },
            { "ref": street, "value": "12 Harbour Lane" },
            { "ref": town, "value": "Marlow" },
        ] }),
    ))
    .await;
    person.await.unwrap();
    let text = filled.text();
    assert!(text.contains("Filled 1 of 3 fields"), "{text}");
    assert!(
        text.contains(&format!(
            "The person took the wheel, so Conch stopped before {street}, {town}"
        )),
        "{text}"
    );
    let values = chat
        .conversation()
        .evaluate("['name', 'street', 'town'].map((id) => document.getElementById(id).value)")
        .await
        .unwrap();
    assert_eq!(values, json!(["Ada Lovelace", "", ""]));
    tools.browser().wheel("wheel").hand_back();
    tools.browser().shutdown().await;
}
