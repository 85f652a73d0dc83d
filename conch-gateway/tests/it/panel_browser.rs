//! The web panel in a real browser (issue 14): the person's Chromium, driven over
//! WebDriver by fantoccini through chromedriver, signs in with the printed link and uses
//! the panel, while an MCP client drives Conch over stdio as the agent. axe-core checks
//! every state the person sees (LIVE-10).

use std::time::Duration;

use conch_fixtures::FixtureServer;
use fantoccini::Locator;
use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::key::Key;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;

use crate::support::{StdioClient, gateway, ref_of};
use crate::webdriver::Person;

/// The stdio door's one conversation.
const STDIO: &str = "mcp-stdio";

/// A `conch-gateway mcp` with its person's door, the agent's MCP client, and the
/// person's browser.
pub(crate) struct Session {
    pub(crate) agent: StdioClient,
    pub(crate) person: Person,
    /// The person's door, `http://127.0.0.1:PORT`.
    pub(crate) door: String,
    /// The one-time sign-in link printed at start.
    pub(crate) link: String,
    /// The gateway's standard error after the sign-in link, line by line.
    pub(crate) stderr: mpsc::UnboundedReceiver<String>,
    /// The gateway's home; its `work` folder holds what the agent may upload.
    pub(crate) home: tempfile::TempDir,
}

/// Starts `mcp --allow-localhost` with `args` (and `--panel-port 0` unless `args` name a
/// port) on `home` with `env` set; gives the agent's client, the sign-in link printed at
/// start, and the rest of standard error line by line.
pub(crate) async fn launch(
    home: &std::path::Path,
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> (StdioClient, String, mpsc::UnboundedReceiver<String>) {
    let mut all = vec!["mcp", "--allow-localhost"];
    if !args.contains(&"--panel-port") {
        all.extend_from_slice(&["--panel-port", "0"]);
    }
    all.extend_from_slice(args);
    let mut command = gateway(home, &all);
    command.envs(env.iter().copied());
    let mut agent = StdioClient::start(command).await;
    let pipe = agent.child.stderr.take().expect("stderr is piped");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (rest, stderr) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut lines = BufReader::new(pipe).lines();
        let mut tx = Some(tx);
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(link) = line.split("watch and take over at ").nth(1)
                && let Some(tx) = tx.take()
            {
                let _ = tx.send(link.to_owned());
            } else {
                let _ = rest.send(line);
            }
        }
    });
    let link = tokio::time::timeout(Duration::from_secs(60), rx.recv())
        .await
        .expect("the sign-in link within 60 s")
        .expect("the gateway prints its sign-in link");
    (agent, link, stderr)
}

impl Session {
    /// A fixture server, and a gateway started with `args` whose agent opened `file`,
    /// watched from a signed-in panel; gives the open's result too.
    pub(crate) async fn watching(file: &str, args: &[&str]) -> (FixtureServer, Session, String) {
        let pages = FixtureServer::start().await.expect("fixture server");
        let mut session = Session::start(args).await;
        let page = session.agent.open(&pages.url(file)).await;
        session.sign_in().await;
        session.open(&format!("conversation={STDIO}")).await;
        (pages, session, page)
    }

    /// Starts `mcp --panel-port 0 --allow-localhost` with `args` (see [`launch`]), reads the sign-in link
    /// from standard error, and opens the person's browser (not yet signed in).
    pub(crate) async fn start(args: &[&str]) -> Session {
        Session::start_in(tempfile::tempdir().expect("a temp home"), args).await
    }

    /// As [`Session::start`], on `home` (which may hold files the gateway reads at start).
    pub(crate) async fn start_in(home: tempfile::TempDir, args: &[&str]) -> Session {
        Session::start_with(home, args, &[]).await
    }

    /// As [`Session::start_in`], with `env` set for the gateway.
    pub(crate) async fn start_with(
        home: tempfile::TempDir,
        args: &[&str],
        env: &[(&str, &std::ffi::OsStr)],
    ) -> Session {
        let ((agent, link, stderr), person) =
            tokio::join!(launch(home.path(), args, env), Person::start());
        let door = link
            .split("/signin?code=")
            .next()
            .expect("a sign-in link")
            .to_owned();
        assert!(door.starts_with("http://127.0.0.1:"), "{link}");
        Session {
            agent,
            person,
            door,
            link,
            stderr,
            home,
        }
    }

    /// Opens the sign-in link in the person's browser: the 303 sets the cookie and
    /// leads to the panel.
    pub(crate) async fn sign_in(&self) {
        self.person
            .client
            .goto(&self.link)
            .await
            .expect("the sign-in link opens");
        // The panel's page takes its token from the address's fragment and drops it.
        self.wait_until(
            "location.hash === '' && document.getElementById('conversations') !== null",
            "the panel, with the token out of the address",
        )
        .await;
        let url = self.person.client.current_url().await.expect("a URL");
        assert_eq!(
            url.as_str(),
            format!("{}/", self.door),
            "the link leads to the panel"
        );
    }

    /// The person's door's port.
    pub(crate) fn port(&self) -> u16 {
        self.door
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("the door's port")
    }

    /// Opens the panel's address and finds the sign-in page there, not the panel.
    pub(crate) async fn sees_the_sign_in_page(&self) {
        self.person
            .client
            .goto(&format!("{}/", self.door))
            .await
            .expect("the door answers");
        let text = self.body_text().await;
        assert!(text.contains("Print a new sign-in link"), "{text}");
    }

    /// The text of the page's body as the person sees it.
    pub(crate) async fn body_text(&self) -> String {
        let text: Value = self
            .person
            .client
            .execute("return document.body.innerText", vec![])
            .await
            .expect("a script runs");
        text.as_str().unwrap_or_default().to_owned()
    }

    /// Opens the panel at `/?QUERY` and waits until its live socket is open.
    pub(crate) async fn open(&self, query: &str) {
        self.person
            .client
            .goto(&format!("{}/?{query}", self.door))
            .await
            .expect("the panel opens");
        self.wait_until(
            "document.getElementById('connection').textContent.startsWith('Watching')",
            "the live view to connect",
        )
        .await;
    }

    /// Runs `script` in the panel; gives what it returns.
    pub(crate) async fn js(&self, script: &str) -> Value {
        self.person
            .client
            .execute(script, vec![])
            .await
            .unwrap_or_else(|e| panic!("{script}: {e}"))
    }

    /// Waits up to 20 s until the expression `condition` is truthy in the panel; gives
    /// its value.
    pub(crate) async fn wait_until(&self, condition: &str, what: &str) -> Value {
        let script = format!("return ({condition});");
        let started = std::time::Instant::now();
        loop {
            let value = self.js(&script).await;
            let truthy = !matches!(&value, Value::Null | Value::Bool(false))
                && value != json!("")
                && value != json!(0);
            if truthy {
                return value;
            }
            if started.elapsed() > Duration::from_secs(20) {
                let text = self.body_text().await;
                panic!("waited 20 s for {what} ({condition}); the panel says:\n{text}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The panel's element at `css`.
    pub(crate) async fn element(&self, css: &str) -> fantoccini::elements::Element {
        self.person
            .client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no {css} in the panel: {e}"))
    }

    /// Clicks the panel's element at `css`, as the person.
    pub(crate) async fn click(&self, css: &str) {
        self.element(css)
            .await
            .click()
            .await
            .unwrap_or_else(|e| panic!("{css} can't be clicked: {e}"));
    }

    /// Clicks the button whose words are `label` inside the card of `#cards` whose text
    /// holds `card_text`.
    pub(crate) async fn answer_card(&self, card_text: &str, label: &str) {
        let xpath = format!(
            "//div[@id='cards']//section[contains(., '{card_text}')]//button[normalize-space()='{label}']"
        );
        self.person
            .client
            .find(Locator::XPath(&xpath))
            .await
            .unwrap_or_else(|e| panic!("no {label:?} on a card with {card_text:?}: {e}"))
            .click()
            .await
            .expect("the card's button can be clicked");
    }

    /// Presses the keys of `chord` together on whatever has the focus, as the person.
    async fn press(&self, chord: &[Key]) {
        let mut actions = KeyActions::new("keyboard".to_owned());
        for key in chord {
            actions = actions.then(KeyAction::Down {
                value: (*key).into(),
            });
        }
        for key in chord.iter().rev() {
            actions = actions.then(KeyAction::Up {
                value: (*key).into(),
            });
        }
        self.person
            .client
            .perform_actions(actions)
            .await
            .expect("the keys are pressed");
    }

    /// The id of the panel's focused element, and whether its focus shows: an outline or
    /// a ring around it (LIVE-10).
    async fn focused(&self) -> (String, bool) {
        let answer = self
            .js(
                "const e = document.activeElement; const s = getComputedStyle(e); \
                 const ring = (n) => n && getComputedStyle(n).boxShadow !== 'none'; \
                 const outline = s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0; \
                 return [e.id, outline || ring(e) || ring(e.closest('.view'))];",
            )
            .await;
        (
            answer[0].as_str().unwrap_or_default().to_owned(),
            answer[1] == json!(true),
        )
    }

    /// Waits until the live canvas shows a frame: drawn, with many opaque pixels.
    pub(crate) async fn wait_for_frame(&self) {
        self.wait_until(
            "document.getElementById('waiting').hidden && (() => { const c = document.getElementById('live-canvas'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] === 255) n++; return n > 10000; })()",
            "a frame drawn on the live canvas",
        )
        .await;
    }

    /// The answer to the agent's tools/call request `id`, skipping notifications.
    pub(crate) async fn answer_to(&mut self, id: i64) -> Value {
        tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                let message = self.agent.next_message().await;
                if message["id"] == json!(id) {
                    return message;
                }
            }
        })
        .await
        .expect("the agent's call is answered within 30 s")
    }

    /// Ends the person's browser and the gateway.
    pub(crate) async fn finish(self) {
        self.person.finish().await;
        self.agent.finish().await;
    }
}

/// LIVE-10: the page at `/` has no axe-core violations, signed out (a sentence saying to
/// use the link) and signed in.
#[tokio::test(flavor = "multi_thread")]
async fn live_10_the_panel_has_no_axe_violations_signed_in_and_out() {
    let session = Session::start(&[]).await;
    session.sees_the_sign_in_page().await;
    session.person.assert_accessible("signed out").await;

    session.sign_in().await;
    let text = session.body_text().await;
    assert!(!text.contains("sign-in link"), "signed in: {text}");
    session.person.assert_accessible("signed in").await;
    session.finish().await;
}

/// A call's result text.
fn result_text(answer: &Value) -> String {
    answer["result"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// LIVE-1, LIVE-10: the panel's live view shows the fixture page the agent opened, drawn
/// on the canvas; the live view has no axe-core violations.
#[tokio::test(flavor = "multi_thread")]
async fn live_1_the_panel_shows_the_fixture_page_live() {
    let pages = FixtureServer::start().await.unwrap();
    let mut session = Session::start(&[]).await;
    session.agent.open(&pages.url("live.html")).await;
    session.sign_in().await;
    session
        .wait_until(
            "document.querySelector('#conversations a[href*=\"conversation=mcp-stdio\"]')",
            "the conversation in the list",
        )
        .await;
    session
        .person
        .assert_accessible("with the conversations listed")
        .await;
    session.click("#conversations a").await;
    session
        .wait_until(
            "document.getElementById('connection').textContent.startsWith('Watching')",
            "the live view to connect",
        )
        .await;
    session.wait_for_frame().await;
    let tabs = session
        .wait_until(
            "document.getElementById('tabs').textContent",
            "the tab strip",
        )
        .await;
    assert!(tabs.as_str().unwrap_or_default().contains("Live"), "{tabs}");
    session.person.assert_accessible("in the live view").await;
    session.finish().await;
}

/// LIVE-5: the agent's click draws its cursor on the live view and the caption says what
/// it does; its next click moves the cursor.
#[tokio::test(flavor = "multi_thread")]
async fn live_5_the_agents_click_moves_the_drawn_cursor() {
    let (_pages, mut session, page) = Session::watching("live.html", &["--trust", "full"]).await;
    session.wait_for_frame().await;
    let cursor_at = "(() => { const c = document.getElementById('cursor'); return c.hidden ? null : c.style.left + ',' + c.style.top; })()";

    let animate = ref_of(&page, "button \"Animate\"");
    session
        .agent
        .call_ok("browser_click", json!({ "ref": animate }))
        .await;
    let first = session.wait_until(cursor_at, "the agent's cursor").await;
    let caption = session
        .wait_until(
            "document.getElementById('caption').textContent",
            "a caption",
        )
        .await;
    assert!(
        caption.as_str().unwrap_or_default().contains("Click"),
        "{caption}"
    );
    session
        .person
        .assert_accessible("with the agent's cursor")
        .await;

    let note = ref_of(&page, "textbox \"Note\"");
    session
        .agent
        .call_ok("browser_click", json!({ "ref": note }))
        .await;
    let moved = format!("{cursor_at} !== {first}");
    session.wait_until(&moved, "the cursor to move").await;
    session.finish().await;
}

/// LIVE-10 (issue 28): a screen reader gets the live view in words, in a polite live
/// region the canvas is described by: the active tab's title and address, which follow
/// the agent's navigation, and the agent's last caption. No axe-core violation.
#[tokio::test(flavor = "multi_thread")]
async fn live_10_a_screen_reader_hears_the_tabs_title_and_address_and_the_agents_caption() {
    let (pages, mut session, _page) = Session::watching("basic.html", &["--trust", "full"]).await;
    let region = session
        .js(
            "const r = document.getElementById('live-summary'); \
             return [r.getAttribute('aria-live'), document.getElementById('live-canvas').getAttribute('aria-describedby')];",
        )
        .await;
    assert_eq!(region[0], json!("polite"));
    assert!(
        region[1]
            .as_str()
            .unwrap_or_default()
            .split(' ')
            .any(|id| id == "live-summary"),
        "the canvas is described by the words: {region}"
    );
    let says = |title: &str, file: &str| {
        format!(
            "(() => {{ const t = document.getElementById('live-page').textContent; return t.includes('“{title}”') && t.includes({url:?}); }})()",
            url = pages.url(file)
        )
    };
    session
        .wait_until(
            &says("Basic page", "basic.html"),
            "the tab's title and address in words",
        )
        .await;
    session
        .person
        .assert_accessible("with the live view in words")
        .await;

    let page = session.agent.open(&pages.url("live.html")).await;
    session
        .wait_until(
            &says("Live", "live.html"),
            "the words to follow the agent's navigation",
        )
        .await;
    let animate = ref_of(&page, "button \"Animate\"");
    session
        .agent
        .call_ok("browser_click", json!({ "ref": animate }))
        .await;
    // The caption of the open before may still show for a moment: the click's comes next.
    let doing = session
        .wait_until(
            "(() => { const t = document.getElementById('live-doing').textContent; return t.includes('Animate') && t; })()",
            "the agent's caption of the click in words",
        )
        .await;
    let doing = doing.as_str().unwrap_or_default();
    assert!(doing.starts_with("The agent: "), "{doing}");
    assert!(doing.contains("Animate"), "{doing}");
    session
        .person
        .assert_accessible("with the agent's caption in words")
        .await;
    session.finish().await;
}

/// PERM-3: a site question is a card in the panel; This chat there lets the agent's call
/// complete.
#[tokio::test(flavor = "multi_thread")]
async fn perm_3_a_site_question_answered_this_chat_in_the_panel_lets_the_call_complete() {
    let (_pages, mut session, page) = Session::watching("counter.html", &[]).await;
    let add = ref_of(&page, "button \"Add\"");
    let call = session
        .agent
        .send_request(
            "tools/call",
            json!({ "name": "browser_click", "arguments": { "ref": add } }),
        )
        .await;
    let card = session
        .wait_until(
            "document.querySelector('#cards .card')?.innerText",
            "a card",
        )
        .await;
    let card = card.as_str().unwrap_or_default().to_owned();
    assert!(
        card.contains("127.0.0.1"),
        "the card names the site: {card}"
    );
    let choices = session
        .js("return [...document.querySelectorAll('#cards .card button')].map(b => b.textContent)")
        .await;
    assert_eq!(choices, json!(["This chat", "Always", "No"]), "{card}");
    session
        .person
        .assert_accessible("with a site question")
        .await;
    session.answer_card("127.0.0.1", "This chat").await;
    let result = session.answer_to(call).await;
    let text = result_text(&result);
    assert_eq!(result["result"]["isError"], json!(false), "{text}");
    assert!(text.contains("Count: 1"), "{text}");
    session
        .wait_until(
            "document.querySelectorAll('#cards .card').length === 0",
            "the card to close",
        )
        .await;
    session.finish().await;
}

/// HS-2: a high-stakes card shows the button's own words, "Place order", and a picture of
/// it; No there keeps the page untouched and the agent is told the person declined.
#[tokio::test(flavor = "multi_thread")]
async fn hs_2_a_high_stakes_card_shows_place_order_and_no_keeps_the_page() {
    let (_pages, mut session, page) = Session::watching("basic-form.html", &[]).await;
    let order = ref_of(&page, "Place order");
    let call = session
        .agent
        .send_request(
            "tools/call",
            json!({ "name": "browser_click", "arguments": { "ref": order } }),
        )
        .await;
    session
        .wait_until(
            "document.querySelector('#cards .card.kind-site')",
            "the site card",
        )
        .await;
    session.answer_card("127.0.0.1", "This chat").await;
    let card = session
        .wait_until(
            "document.querySelector('#cards .card.kind-highStakes')?.innerText",
            "the high-stakes card",
        )
        .await;
    let card = card.as_str().unwrap_or_default().to_owned();
    assert!(
        card.contains("Place order"),
        "the element's own words: {card}"
    );
    assert!(
        !card.contains("Always"),
        "high stakes never offer Always: {card}"
    );
    session
        .wait_until(
            "document.querySelector('#cards .card.kind-highStakes img.thumbnail')?.complete",
            "the card's picture of the button",
        )
        .await;
    session
        .person
        .assert_accessible("with a high-stakes question")
        .await;
    // The README's picture of the panel comes from here: CONCH_PANEL_SHOT=docs/panel.png.
    if let Ok(path) = std::env::var("CONCH_PANEL_SHOT") {
        let png = session
            .person
            .client
            .screenshot()
            .await
            .expect("a screenshot");
        std::fs::write(&path, png).expect("the screenshot is written");
    }
    session.answer_card("Place order", "No").await;
    let result = session.answer_to(call).await;
    let text = result_text(&result);
    assert!(text.contains("declined"), "{text}");
    let (read, _) = session.agent.call("browser_read", json!({})).await;
    assert!(!read.contains("Sent"), "the form was sent: {read}");
    session.finish().await;
}

/// LIVE-8, LIVE-10: the person takes over with the button, types into the page's field
/// through the hidden text field, hands back, and the agent's next result says the person
/// used the browser, with what they typed.
#[tokio::test(flavor = "multi_thread")]
async fn live_8_take_over_type_and_hand_back_and_the_agent_is_told() {
    let (_pages, mut session, _page) = Session::watching("live.html", &[]).await;
    session.wait_for_frame().await;
    session.click("#takeover").await;
    session
        .wait_until(
            "!document.getElementById('handback').hidden",
            "Hand back to show",
        )
        .await;
    session
        .person
        .assert_accessible("while the person drives")
        .await;
    // Tab moves the page's focus to its first field, Note; then the words.
    let keys = session.element("#keys").await;
    keys.send_keys(&Key::Tab.to_string())
        .await
        .expect("keys go to the hidden field");
    tokio::time::sleep(Duration::from_millis(300)).await;
    keys.send_keys("hello shell")
        .await
        .expect("keys go to the hidden field");
    tokio::time::sleep(Duration::from_millis(500)).await;
    session.click("#handback").await;
    session
        .wait_until(
            "!document.getElementById('takeover').hidden",
            "Take over to show again",
        )
        .await;
    let read = session.agent.call_ok("browser_read", json!({})).await;
    assert!(read.contains("The person used the browser"), "{read}");
    assert!(
        read.contains("hello shell"),
        "what the person typed: {read}"
    );
    session.finish().await;
}

/// LIVE-11, LIVE-10: Ctrl+F opens the find bar; "apple" on a page with three finds 1/3,
/// and Enter goes to 2/3.
#[tokio::test(flavor = "multi_thread")]
async fn live_11_find_highlights_two_of_three() {
    let (_pages, session, _page) = Session::watching("live.html", &[]).await;
    session.wait_for_frame().await;
    let canvas = session.element("#live-canvas").await;
    canvas
        .send_keys(&format!("{}f{}", Key::Control, Key::Null))
        .await
        .expect("keys reach the panel");
    session
        .wait_until(
            "!document.getElementById('find').hidden && document.activeElement.id === 'find-input'",
            "the find bar, focused",
        )
        .await;
    let input = session.element("#find-input").await;
    input.send_keys("apple").await.expect("typing in find");
    session
        .wait_until(
            "document.getElementById('find-count').textContent === '1/3'",
            "1/3",
        )
        .await;
    input
        .send_keys(&Key::Enter.to_string())
        .await
        .expect("Enter in find");
    session
        .wait_until(
            "document.getElementById('find-count').textContent === '2/3'",
            "2/3",
        )
        .await;
    session
        .person
        .assert_accessible("with the find bar open")
        .await;
    session.finish().await;
}

/// LIVE-14: Stop in the panel ends the agent's call in flight, which says the person
/// pressed Stop.
#[tokio::test(flavor = "multi_thread")]
async fn live_14_stop_ends_the_agents_call() {
    let (_pages, mut session, _page) = Session::watching("basic.html", &[]).await;
    let waiting = session.agent.start_waiting(30).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let started = std::time::Instant::now();
    session.click("#stop").await;
    let answer = session.answer_to(waiting).await;
    assert!(answer.to_string().contains("pressed Stop"), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "Stop took {:?}",
        started.elapsed()
    );
    session.finish().await;
}

/// LIVE-14, LIVE-10 (issue 28): Stop shows only while a turn runs: hidden while the
/// agent has no call in flight, shown while one runs, hidden again once it ended; no
/// axe-core violation either way.
#[tokio::test(flavor = "multi_thread")]
async fn live_14_stop_shows_only_while_a_turn_runs() {
    let (_pages, mut session, _page) = Session::watching("basic.html", &[]).await;
    let stop_hidden = "document.getElementById('stop').hidden";
    session
        .wait_until(stop_hidden, "Stop hidden with no call in flight")
        .await;
    session
        .person
        .assert_accessible("with no turn running")
        .await;
    let waiting = session.agent.start_waiting(30).await;
    session
        .wait_until(
            "!document.getElementById('stop').hidden && document.getElementById('stop').offsetWidth > 0",
            "Stop shown while the agent's call runs",
        )
        .await;
    session.person.assert_accessible("while a turn runs").await;
    session.click("#stop").await;
    let answer = session.answer_to(waiting).await;
    assert!(answer.to_string().contains("pressed Stop"), "{answer}");
    session
        .wait_until(stop_hidden, "Stop hidden once the call ended")
        .await;
    // A quick call shows Stop while it runs and leaves it hidden after.
    session.agent.call_ok("browser_read", json!({})).await;
    session
        .wait_until(stop_hidden, "Stop hidden after a finished call")
        .await;
    session.finish().await;
}

/// LIVE-17, LIVE-10: `?browser=1` shows the browser in front, with no choosing from the
/// list, with or without naming the conversation.
#[tokio::test(flavor = "multi_thread")]
async fn live_17_browser_1_shows_the_browser_in_front() {
    let pages = FixtureServer::start().await.unwrap();
    let mut session = Session::start(&[]).await;
    session.agent.open(&pages.url("live.html")).await;
    session.sign_in().await;
    session
        .open(&format!("browser=1&conversation={STDIO}"))
        .await;
    session.wait_for_frame().await;
    session
        .wait_until(
            "document.body.classList.contains('browser-front') && !document.getElementById('live').hidden",
            "the browser in front",
        )
        .await;
    session
        .person
        .assert_accessible("with the browser in front")
        .await;
    session.open("browser=1").await;
    session.wait_for_frame().await;
    let heading = session
        .wait_until(
            "document.getElementById('live-heading').textContent",
            "the live view's heading",
        )
        .await;
    assert!(
        heading.as_str().unwrap_or_default().contains(STDIO),
        "{heading}"
    );
    session.finish().await;
}

/// DLG-15, LIVE-10: a page's confirm while the person drives is drawn over the page under
/// the site's name, not as Conch's; OK answers it.
#[tokio::test(flavor = "multi_thread")]
async fn dlg_15_a_page_confirm_while_the_person_drives_is_drawn_under_the_sites_name() {
    let (pages, session, _page) = Session::watching("live.html", &[]).await;
    session.wait_for_frame().await;
    session.click("#takeover").await;
    session
        .wait_until(
            "!document.getElementById('handback').hidden",
            "Hand back to show",
        )
        .await;
    // Tab past Note and Password to the page's Ask button, and press it.
    let keys = session.element("#keys").await;
    for _ in 0..3 {
        keys.send_keys(&Key::Tab.to_string())
            .await
            .expect("keys go to the hidden field");
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    keys.send_keys(&Key::Enter.to_string())
        .await
        .expect("keys go to the hidden field");
    session
        .wait_until(
            "!document.getElementById('page-dialog').hidden",
            "the page's dialog",
        )
        .await;
    let heading = session
        .js("return document.getElementById('page-dialog-heading').textContent")
        .await;
    // The site is the page's host and port, as the agent's browser sees it.
    let site = pages
        .url("")
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    assert_eq!(
        heading,
        json!(format!("{site} says")),
        "drawn under the site's name"
    );
    let message = session
        .js("return document.getElementById('page-dialog-message').textContent")
        .await;
    assert_eq!(message, json!("Delete the draft?"));
    session
        .person
        .assert_accessible("with the page's confirm")
        .await;
    session.click("#page-dialog-ok").await;
    session
        .wait_until(
            "document.getElementById('page-dialog').hidden",
            "the dialog to close",
        )
        .await;
    session.finish().await;
}

/// UP-9, LIVE-10: an upload card names each file, where it comes from and the site; Yes
/// there lets the files reach the page.
#[tokio::test(flavor = "multi_thread")]
async fn up_9_an_upload_card_lists_the_files() {
    let pages = FixtureServer::start().await.unwrap();
    let mut session = Session::start(&["--trust", "full"]).await;
    let work = session.home.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("cv.pdf"), b"%PDF-1.4 a cv").unwrap();
    std::fs::write(work.join("photo.png"), b"not really a png").unwrap();
    let page = session.agent.open(&pages.url("upload.html")).await;
    let visible = ref_of(&page, "Visible box");
    session.sign_in().await;
    session.open(&format!("conversation={STDIO}")).await;
    let call = session
        .agent
        .send_request(
            "tools/call",
            json!({ "name": "browser_upload", "arguments": { "ref": visible, "files": ["cv.pdf", "photo.png"] } }),
        )
        .await;
    let card = session
        .wait_until(
            "document.querySelector('#cards .card.kind-upload')?.innerText",
            "the upload card",
        )
        .await;
    let card = card.as_str().unwrap_or_default().to_owned();
    for named in [
        "“cv.pdf” (from the work folder)",
        "“photo.png” (from the work folder)",
        "127.0.0.1",
    ] {
        assert!(card.contains(named), "the card names {named}: {card}");
    }
    assert!(
        !card.contains("Always"),
        "uploads never offer Always: {card}"
    );
    assert!(
        !card.contains("null"),
        "a missing part of the card shows as nothing: {card}"
    );
    session
        .person
        .assert_accessible("with an upload question")
        .await;
    session.answer_card("cv.pdf", "Yes").await;
    let result = session.answer_to(call).await;
    let text = result_text(&result);
    assert_eq!(result["result"]["isError"], json!(false), "{text}");
    let (read, _) = session.agent.call("browser_read", json!({})).await;
    assert!(read.contains("cv.pdf:13"), "the page got the files: {read}");
    session.finish().await;
}

/// HAND-3, HAND-6, LIVE-10: a sign-in handoff shows its banner; the person signs in
/// through the panel, keys only, and the handoff ends by itself once the gate is behind
/// them.
#[tokio::test(flavor = "multi_thread")]
async fn hand_3_a_sign_in_handoff_ends_by_itself_after_the_person_signs_in_through_the_panel() {
    let (_pages, mut session, _page) =
        Session::watching("signin-gate.html", &["--trust", "full"]).await;
    session.wait_for_frame().await;
    let call = session
        .agent
        .send_request(
            "tools/call",
            json!({ "name": "browser_handoff", "arguments": { "reason": "Please sign in to Harbour Mail." } }),
        )
        .await;
    let reason = session
        .wait_until(
            "!document.getElementById('handoff').hidden && document.getElementById('handoff-reason').textContent",
            "the handoff banner",
        )
        .await;
    assert!(
        reason
            .as_str()
            .unwrap_or_default()
            .contains("Please sign in"),
        "{reason}"
    );
    session
        .person
        .assert_accessible("with a handoff waiting")
        .await;
    let keys = session.element("#keys").await;
    let tab = Key::Tab.to_string();
    let enter = Key::Enter.to_string();
    for input in [
        tab.as_str(),
        "me@harbour.test",
        tab.as_str(),
        "correct horse",
        enter.as_str(),
    ] {
        keys.send_keys(input).await.expect("keys go to the page");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    // The code page is still a gate.
    session
        .wait_until("document.title.startsWith('Two-step')", "the code page")
        .await;
    for input in [tab.as_str(), "123456", enter.as_str()] {
        keys.send_keys(input).await.expect("keys go to the page");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let result = session.answer_to(call).await;
    let text = result_text(&result);
    assert!(
        text.contains("You got through, so Conch carried on"),
        "{text}"
    );
    session
        .wait_until(
            "document.getElementById('handoff').hidden",
            "the banner to go",
        )
        .await;
    session.finish().await;
}

/// LIVE-10: the live view works from the keyboard with the focus always shown: Tab reaches
/// Take over, Find, Stop and the page; Tab inside the page is the page's, and Shift+Esc
/// brings the focus back to the panel, where Enter takes over and, later, hands back.
#[tokio::test(flavor = "multi_thread")]
async fn live_10_the_live_view_is_keyboard_operable_with_the_focus_shown() {
    let (_pages, mut session, _page) = Session::watching("live.html", &[]).await;
    session.wait_for_frame().await;
    // Stop shows only while a turn runs (issue 28): the agent waits meanwhile.
    session.agent.start_waiting(60).await;
    session
        .wait_until(
            "!document.getElementById('stop').hidden",
            "Stop shown while the agent's call runs",
        )
        .await;
    let mut reached = Vec::new();
    for _ in 0..30 {
        session.press(&[Key::Tab]).await;
        let (id, shown) = session.focused().await;
        assert!(shown, "the focus on #{id} does not show");
        reached.push(id.clone());
        if id == "keys" {
            break;
        }
    }
    for id in ["takeover", "find-open", "stop", "live-canvas", "keys"] {
        assert!(
            reached.iter().any(|r| r == id),
            "Tab never reaches #{id}: {reached:?}"
        );
    }
    // In the page's text field, Shift+Esc is the way out.
    session.press(&[Key::Shift, Key::Escape]).await;
    let (id, shown) = session.focused().await;
    assert_eq!(id, "takeover", "Shift+Esc leads back to the panel");
    assert!(shown);
    session.press(&[Key::Enter]).await;
    session
        .wait_until(
            "!document.getElementById('handback').hidden && document.activeElement.id === 'keys'",
            "the person to have the wheel, keys in the page",
        )
        .await;
    session.press(&[Key::Shift, Key::Escape]).await;
    assert_eq!(session.focused().await.0, "handback");
    session.press(&[Key::Enter]).await;
    session
        .wait_until(
            "!document.getElementById('takeover').hidden",
            "the agent to have the wheel again",
        )
        .await;
    session.person.assert_accessible("after keyboard use").await;
    session.finish().await;
}

/// PERM-3, issue 14 (a second tab of the panel): two windows of the panel both show the
/// site question; This chat in one completes the agent's call, and the other's card goes.
#[tokio::test(flavor = "multi_thread")]
async fn perm_3_two_panels_show_the_card_and_the_first_answer_closes_it_in_both() {
    let (_pages, mut session, page) = Session::watching("counter.html", &[]).await;
    let add = ref_of(&page, "button \"Add\"");
    let client = session.person.client.clone();
    let first = client.window().await.expect("a window");
    let second = session.person.second_window().await;
    session.open(&format!("conversation={STDIO}")).await;

    let call = session
        .agent
        .send_request(
            "tools/call",
            json!({ "name": "browser_click", "arguments": { "ref": add } }),
        )
        .await;
    let card = "document.querySelector('#cards .card.kind-site')";
    session
        .wait_until(card, "the card in the second window")
        .await;
    client
        .switch_to_window(first.clone())
        .await
        .expect("the first window");
    session
        .wait_until(card, "the card in the first window")
        .await;
    session.answer_card("127.0.0.1", "This chat").await;
    let result = session.answer_to(call).await;
    let text = result_text(&result);
    assert!(text.contains("Count: 1"), "{text}");
    session
        .wait_until(
            "document.querySelectorAll('#cards .card').length === 0",
            "the card to go in the first window",
        )
        .await;
    client
        .switch_to_window(second)
        .await
        .expect("the second window");
    session
        .wait_until(
            "document.querySelectorAll('#cards .card').length === 0 && !document.getElementById('no-cards').hidden",
            "the card to go in the second window",
        )
        .await;
    session
        .person
        .assert_accessible("after another window answered")
        .await;
    session.finish().await;
}

/// HAND-8, issue 14 (a closed socket mid-takeover): the person takes over, the agent's
/// next call waits, and closing the panel's page ends the takeover so the call goes on.
#[tokio::test(flavor = "multi_thread")]
async fn hand_8_closing_the_panel_mid_takeover_gives_the_agent_the_wheel_back() {
    let (_pages, mut session, _page) = Session::watching("basic.html", &[]).await;
    session.click("#takeover").await;
    session
        .wait_until(
            "!document.getElementById('handback').hidden",
            "Hand back to show",
        )
        .await;
    let call = session
        .agent
        .send_request(
            "tools/call",
            json!({ "name": "browser_read", "arguments": {} }),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    // Leaving the panel closes its live socket.
    session
        .person
        .client
        .goto("about:blank")
        .await
        .expect("the panel can be left");
    let result = session.answer_to(call).await;
    let text = result_text(&result);
    assert!(text.contains("The person used the browser"), "{text}");
    session.finish().await;
}

/// LIVE-16, ERR-23, LIVE-10: the live view offers "A browser of its own for this chat" as
/// a toggle button reached and pressed from the keyboard; pressed, the window shows "Its
/// own browser", whose tooltip (the toggle's and the badge's description, shown on focus)
/// names the site lent once the chat browses there, and the agent's next result says its
/// tabs of the shared browser closed; pressed again, the chat is back in the main browser.
/// No axe-core violation in either state.
#[tokio::test(flavor = "multi_thread")]
async fn live_16_the_panel_toggles_its_own_browser_by_keyboard() {
    let pages = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().expect("a temp home");
    std::fs::write(
        home.path().join("browser.json"),
        json!({ "format": 1, "sites": ["shop.example"] }).to_string(),
    )
    .expect("browser.json");
    let mut session = Session::start_in(home, &[]).await;
    session.agent.open(&pages.url("live.html")).await;
    session.sign_in().await;
    session.open(&format!("conversation={STDIO}")).await;
    session
        .wait_until(
            "document.getElementById('own-toggle').getAttribute('aria-pressed') === 'false' && document.getElementById('own-badge').hidden",
            "the toggle, not pressed",
        )
        .await;
    let mut reached = false;
    for _ in 0..30 {
        session.press(&[Key::Tab]).await;
        let (id, shown) = session.focused().await;
        if id == "own-toggle" {
            assert!(shown, "the focus on the toggle does not show");
            reached = true;
            break;
        }
    }
    assert!(reached, "Tab never reaches the toggle");
    session.press(&[Key::Enter]).await;
    session
        .wait_until(
            "document.getElementById('own-toggle').getAttribute('aria-pressed') === 'true' && !document.getElementById('own-badge').hidden",
            "its own browser",
        )
        .await;
    let badge = session
        .js("return document.getElementById('own-badge').textContent")
        .await;
    assert_eq!(badge, json!("Its own browser"));

    let page = session.agent.open(&pages.url("live.html")).await;
    assert!(page.contains("browser of its own"), "{page}");
    let sites = session
        .wait_until(
            "document.getElementById('own-sites').textContent.includes('shop.example') && document.getElementById('own-sites').textContent",
            "the lent site in the tooltip",
        )
        .await;
    assert!(
        sites.as_str().unwrap_or_default().contains("lent"),
        "{sites}"
    );
    let described = session
        .js(
            "const t = document.getElementById('own-toggle'); const b = document.getElementById('own-badge'); \
             const tip = document.getElementById('own-sites'); \
             return [t.getAttribute('aria-describedby'), b.getAttribute('aria-describedby'), tip.getAttribute('role'), \
                     document.activeElement.id, getComputedStyle(tip).display];",
        )
        .await;
    assert_eq!(
        described,
        json!(["own-sites", "own-sites", "tooltip", "own-toggle", "block"]),
        "the tooltip describes the toggle and the badge, and shows while the toggle has the focus"
    );
    session
        .person
        .assert_accessible("with its own browser")
        .await;
    session.press(&[Key::Escape]).await;
    let hidden = session
        .js("return getComputedStyle(document.getElementById('own-sites')).display")
        .await;
    assert_eq!(hidden, json!("none"), "Escape hides the tooltip");

    session.press(&[Key::Space]).await;
    session
        .wait_until(
            "document.getElementById('own-toggle').getAttribute('aria-pressed') === 'false' && document.getElementById('own-badge').hidden",
            "the main browser again",
        )
        .await;
    let tabs = session
        .agent
        .call_ok("browser_tabs", json!({ "action": "list" }))
        .await;
    assert!(tabs.contains("main browser again"), "{tabs}");
    session
        .person
        .assert_accessible("back in the main browser")
        .await;
    session.finish().await;
}

/// ERR-23, LIVE-10: a task's window (`--errands`) shows "Its own browser" with the site
/// lent to it in the tooltip, and no toggle: a task can't leave its errand (ERR-1).
#[tokio::test(flavor = "multi_thread")]
async fn err_23_a_tasks_window_shows_its_own_browser_without_the_toggle() {
    let pages = FixtureServer::start().await.unwrap();
    let home = tempfile::tempdir().expect("a temp home");
    std::fs::write(
        home.path().join("browser.json"),
        json!({ "format": 1, "sites": ["shop.example"] }).to_string(),
    )
    .expect("browser.json");
    let session = Session::start_in(home, &["--errands"]).await;
    a_tasks_window_says(
        session,
        &pages,
        &["task", "shop.example"],
        "in a task's window",
    )
    .await;
}

/// The task's window of `session` (an errand's stdio conversation, having opened nothing
/// yet) after it opens a page: "Its own browser" shown, no toggle, the tooltip holding
/// each of `words`, and no axe violation (`state` names it).
async fn a_tasks_window_says(
    mut session: Session,
    pages: &FixtureServer,
    words: &[&str],
    state: &str,
) {
    session.agent.open(&pages.url("live.html")).await;
    session.sign_in().await;
    session.open(&format!("conversation={STDIO}")).await;
    let tip = session
        .wait_until(
            "!document.getElementById('own-badge').hidden && document.getElementById('own-toggle').hidden && document.getElementById('own-sites').textContent",
            "a task's own browser, with no toggle",
        )
        .await;
    let tip = tip.as_str().unwrap_or_default();
    assert!(words.iter().all(|w| tip.contains(w)), "{tip}");
    session.person.assert_accessible(state).await;
    session.finish().await;
}

/// ERR-6, ERR-23: beside your own Chrome a task's window says it browses in Conch's own
/// browser on this computer, signed in nowhere, with nothing copied out of your Chrome,
/// and offers no toggle (a task can't leave its own browser).
#[tokio::test(flavor = "multi_thread")]
async fn err_6_a_tasks_window_beside_your_own_chrome_says_it_is_signed_in_nowhere() {
    let pages = FixtureServer::start().await.unwrap();
    let chrome = conch_fixtures::browser::Standalone::start_on(&pages.url("person-tab.html"))
        .expect("a stand-in for your own Chrome");
    let home = tempfile::tempdir().expect("a temp home");
    // Turning your own Chrome on needs the person at a terminal (BE-16).
    let (ok, out) =
        crate::backend::backend_on_a_terminal(home.path(), &["set", "chrome"], "[y/N]", "y\n")
            .await;
    assert!(ok, "{out}");
    let profile = chrome.profile();
    let session = Session::start_with(
        home,
        &["--errands"],
        &[("CONCH_CHROME_PROFILE", profile.as_os_str())],
    )
    .await;
    a_tasks_window_says(
        session,
        &pages,
        &["signed in nowhere", "your own Chrome"],
        "in a task's window beside your own Chrome",
    )
    .await;
}

/// Issue 31: the panel's list says in one line what the conversation's results cost so
/// far; the person sets its budget with the form under the list (by keyboard), and the
/// agent's next step that would pass it gets the sentence. No axe-core violation.
#[tokio::test(flavor = "multi_thread")]
async fn cost_7_the_panel_shows_what_a_conversation_spent_and_sets_its_budget() {
    let (_pages, mut session, _) = Session::watching("counter.html", &[]).await;
    let line = session
        .wait_until(
            "[...document.querySelectorAll('.conversation-spent')].map((s) => s.textContent).join('|')",
            "the conversation's running total",
        )
        .await;
    let line = line.as_str().unwrap_or_default();
    assert!(
        line.starts_with("Results so far: ") && line.contains(" characters (about "),
        "{line}"
    );
    session
        .wait_until(
            "!document.getElementById('budget').hidden",
            "the budget form",
        )
        .await;
    session
        .person
        .assert_accessible("with the budget form")
        .await;
    let input = session.element("#budget-chars").await;
    input.send_keys("10").await.expect("typing the budget");
    input
        .send_keys("\u{E007}")
        .await
        .expect("Enter submits the form");
    let said = session
        .wait_until(
            "document.getElementById('budget-said').textContent",
            "the budget's answer",
        )
        .await;
    assert!(
        said.as_str().unwrap_or_default().starts_with("Budget set."),
        "{said}"
    );
    let (text, error) = session.agent.call("browser_read", json!({})).await;
    assert!(!error && text.contains("is withheld"), "{text}");
    session.finish().await;
}
