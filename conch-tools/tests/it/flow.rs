//! The reading tools and tabs against a real browser: open, read, parts, find, back,
//! screenshot, wait, scroll, tabs (TOOL-10, TOOL-12, TOOL-18 … TOOL-21, TAB-1, TAB-4,
//! SNAP-13, PERM-2).

use conch_fixtures::FixtureServer;
use conch_policy::{FIRST_LOOK_CHARS, marker_count};
use conch_tools::{Choice, Content, Mode, QuestionKind};
use serde_json::json;

use crate::support::{Recorder, ref_of, setup, tools};

#[tokio::test(flavor = "multi_thread")]
async fn tool_19_to_21_reading_tools_on_fixture_pages() {
    // Boxed: its many steps held inline overflow a test thread's stack in a debug build.
    Box::pin(async move {
        let server = FixtureServer::start().await.unwrap();
        let setup = setup();
        let asker = Recorder::answering(Choice::No, Choice::No);
        let tools = tools(&setup, asker.clone());
        // PERM-2: reading never asks, even in Plan only.
        let chat = tools.chat("reader", Mode::PlanOnly);

        // TOOL-19, SNAP-13: open gives the whole snapshot, under the tab, title and URL.
        let opened = chat
            .call("browser_open", &json!({ "url": server.url("basic.html") }))
            .await;
        assert!(!opened.is_error, "{}", opened.text());
        let text = opened.text();
        assert!(text.contains("Tab t1: \"Basic page\""), "{text}");
        assert!(text.contains("Hello from the fixtures"), "{text}");
        assert_eq!(
            marker_count(&text),
            2,
            "the untrusted wrapper is there once: {text}"
        );

        let read = chat.call("browser_read", &json!({})).await;
        assert!(read.text().contains("button \"Go\""), "{}", read.text());
        let found = chat.call("browser_read", &json!({ "find": "hello" })).await;
        assert!(found.text().contains("(part 1)"), "{}", found.text());
        let no_part = chat.call("browser_read", &json!({ "part": 9 })).await;
        assert!(
            no_part.is_error && no_part.text().contains("part"),
            "{}",
            no_part.text()
        );

        // TOOL-21: back goes to the earlier page.
        chat.call(
            "browser_open",
            &json!({ "url": server.url("tools-delayed.html") }),
        )
        .await;
        let back = chat.call("browser_back", &json!({})).await;
        assert!(
            back.text().contains("Hello from the fixtures"),
            "{}",
            back.text()
        );

        // TOOL-20: wait for text that comes later.
        chat.call(
            "browser_open",
            &json!({ "url": server.url("tools-delayed.html") }),
        )
        .await;
        let waited = chat
            .call(
                "browser_wait",
                &json!({ "text": "Ready now", "seconds": 10 }),
            )
            .await;
        assert!(waited.text().contains("Done waiting"), "{}", waited.text());

        // TOOL-18: a screenshot with its size.
        let shot = chat.call("browser_screenshot", &json!({})).await;
        assert!(
            shot.content
                .iter()
                .any(|c| matches!(c, Content::Image { mime_type, .. } if mime_type == "image/png"))
        );
        assert!(shot.text().contains("pixels"), "{}", shot.text());

        // Scrolling reads, and really moves a page taller than the window.
        chat.call(
            "browser_open",
            &json!({ "url": server.url("scroll-panel.html") }),
        )
        .await;
        let scroll_y = || async { chat.conversation().evaluate("scrollY").await.unwrap() };
        assert_eq!(scroll_y().await, json!(0));
        let scrolled = chat
            .call("browser_scroll", &json!({ "direction": "down" }))
            .await;
        assert!(!scrolled.is_error, "{}", scrolled.text());
        let moved = scroll_y().await.as_f64().expect("scrollY is a number");
        assert!(moved > 100.0, "the page scrolled only to {moved}");

        // TAB-1, TAB-4: tabs open, list, switch, close; two tabs are named in every result.
        let second = chat
            .call(
                "browser_tabs",
                &json!({ "action": "open", "url": server.url("tabs-a.html") }),
            )
            .await;
        assert!(
            second.text().contains("Opened a new tab, t2"),
            "{}",
            second.text()
        );
        assert!(second.text().contains("Tabs: t1"), "{}", second.text());
        let scrolled = chat.call("browser_scroll", &json!({})).await;
        assert!(
            scrolled.text().contains("t1") && scrolled.text().contains("t2 "),
            "{}",
            scrolled.text()
        );
        let switched = chat
            .call("browser_tabs", &json!({ "action": "switch", "tab": "t1" }))
            .await;
        assert!(switched.text().contains("Tab t1"), "{}", switched.text());
        let closed = chat
            .call("browser_tabs", &json!({ "action": "close", "tab": "t2" }))
            .await;
        assert!(closed.text().contains("Closed t2"), "{}", closed.text());
        let listed = chat
            .call("browser_tabs", &json!({ "action": "list" }))
            .await;
        assert!(listed.text().contains("1 tab(s) open"), "{}", listed.text());

        // BOT-1, TOOL-17: a refusal page comes back with the advice.
        let denied = chat
            .call(
                "browser_open",
                &json!({ "url": server.url("access-denied.html") }),
            )
            .await;
        assert!(
            denied.text().contains("refused this visit"),
            "{}",
            denied.text()
        );

        // browser_handoff says no one can take over, as one sentence.
        let handoff = chat
            .call("browser_handoff", &json!({ "reason": "a code" }))
            .await;
        assert!(
            handoff.is_error && handoff.text().contains("No one can take over"),
            "{}",
            handoff.text()
        );

        assert!(
            asker.asked().is_empty(),
            "reading asked: {:?}",
            asker.kinds()
        );
        tools.browser().shutdown().await;
    })
    .await;
}

/// NET-6: file: and javascript: are refused and nothing navigates (no browser starts).
#[tokio::test(flavor = "multi_thread")]
async fn net_6_file_and_javascript_addresses_are_refused() {
    let setup = setup();
    let tools = tools(&setup, Recorder::answering(Choice::No, Choice::No));
    let chat = tools.chat("schemes", Mode::FullTrust);
    for url in [
        "file:///etc/passwd",
        "javascript:alert(1)",
        "chrome://settings",
        "data:text/html,hi",
    ] {
        let result = chat.call("browser_open", &json!({ "url": url })).await;
        assert!(result.is_error, "{url}");
        assert!(result.text().contains("http"), "{url}: {}", result.text());
        let tab = chat
            .call("browser_tabs", &json!({ "action": "open", "url": url }))
            .await;
        assert!(tab.is_error, "{url}");
    }
    assert_eq!(
        tools.browser().status().await.state,
        conch_browser::RunState::Idle
    );
}

/// LAUNCH-5: with no browser and a download server that refuses connections, the step
/// fails with the fetcher's own sentence and the person is asked in that sentence, with
/// exactly one button, Try again; pressing it downloads again, and that failure is asked
/// about anew, once.
#[tokio::test(flavor = "multi_thread")]
async fn launch_5_a_failed_download_asks_the_person_with_one_button() {
    use conch_browser::fetch::{FetchConfig, Pin, Platform};
    use conch_policy::QuestionKind;

    let mut setup = setup();
    setup.config.probe = std::sync::Arc::new(crate::support::NoBrowsers);
    let refusing = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("address").port()
    };
    let mut fetch = FetchConfig::new(setup.work.join("cache"), Pin::pinned(Platform::Linux64));
    fetch.base_url = format!("http://127.0.0.1:{refusing}/cft")
        .parse()
        .expect("an address");
    fetch.connect_timeout = std::time::Duration::from_secs(5);
    setup.config.download = Some(fetch);
    let asker = Recorder::answering(Choice::No, Choice::No);
    asker.then_other(Choice::TryAgain);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("offline", Mode::Ask);

    let result = chat
        .call("browser_open", &json!({ "url": "https://example.com" }))
        .await;
    assert!(result.is_error);
    let sentence = result.text();
    assert!(
        sentence
            .starts_with("Conch couldn't download Chromium: the download server can't be reached."),
        "{sentence}"
    );
    // The question comes in the background; Try again fails the same way and is asked
    // once more, and answered No, which ends it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while asker.asked().len() < 2 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let asked = asker.asked();
    assert_eq!(asked.len(), 2, "{:?}", asker.kinds());
    for request in &asked {
        assert_eq!(request.question.kind(), QuestionKind::BrowserDownload);
        assert_eq!(request.question.choices(), [Choice::TryAgain]);
        assert_eq!(request.question.text(), sentence.trim_end());
        assert_eq!(request.question.site(), None);
    }
    assert_eq!(
        tools.browser().status().await.state,
        conch_browser::RunState::Unavailable
    );
}

/// LAUNCH-16: with no browser to be had, every tool answers with the same truthful
/// sentence, at once.
#[tokio::test(flavor = "multi_thread")]
async fn launch_16_without_a_browser_every_tool_says_why() {
    let mut setup = setup();
    setup.config.probe = std::sync::Arc::new(crate::support::NoBrowsers);
    let tools = tools(&setup, Recorder::answering(Choice::No, Choice::No));
    let chat = tools.chat("nothing", Mode::Ask);
    let calls = [
        ("browser_open", json!({ "url": "https://example.com" })),
        ("browser_read", json!({})),
        ("browser_click", json!({ "ref": "e1" })),
        ("browser_type", json!({ "ref": "e1", "text": "a" })),
        ("browser_press", json!({ "key": "Enter" })),
        ("browser_select", json!({ "ref": "e1", "values": ["a"] })),
        ("browser_scroll", json!({})),
        ("browser_back", json!({})),
        ("browser_screenshot", json!({})),
        ("browser_wait", json!({ "seconds": 1 })),
        ("browser_handoff", json!({ "reason": "a code" })),
        ("browser_tabs", json!({ "action": "list" })),
        (
            "browser_click_at",
            json!({ "x": 1, "y": 1, "description": "a dot" }),
        ),
        ("browser_upload", json!({ "ref": "e1", "files": ["a.txt"] })),
        (
            "browser_form",
            json!({ "fields": [{ "ref": "e1", "value": "a" }] }),
        ),
    ];
    let mut sentences = std::collections::BTreeSet::new();
    for (tool, args) in calls {
        let started = std::time::Instant::now();
        let result = chat.call(tool, &args).await;
        assert!(result.is_error, "{tool}");
        assert!(
            result.text().contains("unavailable"),
            "{tool}: {}",
            result.text()
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{tool}"
        );
        sentences.insert(result.text());
    }
    assert_eq!(sentences.len(), 1, "{sentences:?}");
}

/// The characters between the untrusted wrapper's markers.
fn body(text: &str) -> usize {
    let start = text
        .find("<<<CONCH PAGE TEXT BEGIN>>>")
        .expect("the begin marker");
    let end = text
        .find("<<<CONCH PAGE TEXT END>>>")
        .expect("the end marker");
    text[start..end].chars().count()
}

/// SNAP-8, SNAP-9, SNAP-11, TOOL-12: a long page comes in parts of at most 16,000
/// characters, each saying where the next is; find searches them all. Opening it gives
/// its first look (SNAP-6), which names the parts.
#[tokio::test(flavor = "multi_thread")]
async fn snap_9_long_pages_come_in_parts() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools(&setup, Recorder::answering(Choice::No, Choice::No));
    let chat = tools.chat("long", Mode::Ask);
    let look = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("long-page.html") }),
        )
        .await
        .text();
    assert!(look.contains("First look: "), "{look}");
    assert!(body(&look) <= FIRST_LOOK_CHARS + 300, "{}", body(&look));
    let count: usize = look
        .split("The rest: browser_read part 1 of ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no part count in {look}"));
    assert!(count >= 3, "{count}");
    let first = chat.call("browser_read", &json!({})).await.text();
    assert!(
        first.contains(&format!("part 1 of {count} — next: browser_read part 2")),
        "{}",
        &first[..500.min(first.len())]
    );
    assert!(body(&first) <= 16_000 + 300, "{}", body(&first));
    let last = chat
        .call("browser_read", &json!({ "part": count }))
        .await
        .text();
    assert!(
        last.contains("the last part"),
        "{}",
        &last[..300.min(last.len())]
    );
    assert!(last.contains("Footer: the end of the long page"));
    let found = chat
        .call("browser_read", &json!({ "find": "Footer: the end" }))
        .await
        .text();
    assert!(found.contains(&format!("(part {count})")), "{found}");
    tools.browser().shutdown().await;
}

/// SNAP-6, issue 11: a new page's first look is much smaller than its first part, yet
/// holds every control and link the agent acts on next: a product grid's "Add to cart"
/// is clicked from the open's result with no read between.
#[tokio::test(flavor = "multi_thread")]
async fn snap_6_a_new_pages_first_look_lists_what_can_be_acted_on() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools(&setup, Recorder::answering(Choice::ThisChat, Choice::No));
    let chat = tools.chat("shop", Mode::Ask);
    let look = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("products.html") }),
        )
        .await
        .text();
    assert!(look.contains("Tab t1: \"Products\""), "{look}");
    assert!(body(&look) <= FIRST_LOOK_CHARS + 300, "{}", body(&look));
    for control in [
        "link \"Deals\"",
        "heading \"All products\"",
        "button \"Add to cart\"",
    ] {
        assert!(look.contains(control), "{control} missing:\n{look}");
    }
    assert!(look.contains("First look: "), "{look}");
    let part = chat.call("browser_read", &json!({})).await.text();
    assert!(
        body(&part) > 2 * body(&look),
        "{} vs {}",
        body(&part),
        body(&look)
    );
    let add = ref_of(&look, "button \"Add to cart\"");
    let clicked = chat.call("browser_click", &json!({ "ref": add })).await;
    assert!(!clicked.is_error, "{}", clicked.text());
    let cart = chat
        .call("browser_read", &json!({ "find": "Cart:" }))
        .await
        .text();
    assert!(cart.contains("Cart: 1 items"), "{cart}");
    tools.browser().shutdown().await;
}

#[derive(Debug)]
struct Describer;

impl conch_tools::ImageDescriber for Describer {
    fn describe<'a>(&'a self, png: &'a [u8]) -> conch_tools::BoxFuture<'a, String> {
        let sentence = format!("A picture of {} bytes.", png.len());
        Box::pin(async move { sentence })
    }
}

/// TOOL-18: an engine that can't see gets the describer's words instead of the image.
#[tokio::test(flavor = "multi_thread")]
async fn tool_18_a_model_that_cant_see_gets_a_description() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let mut config = conch_tools::ToolsConfig::new(Recorder::answering(Choice::No, Choice::No));
    config.net.allow_localhost = true;
    config.image_describer = Some(std::sync::Arc::new(Describer));
    let tools = conch_tools::Tools::new(conch_browser::Browser::new(setup.config.clone()), config);
    let chat = tools.chat("blind", Mode::Ask);
    chat.set_engine(conch_tools::EngineCaps {
        host_tools: true,
        bridged: false,
        vision: false,
    });
    chat.call("browser_open", &json!({ "url": server.url("basic.html") }))
        .await;
    let shot = chat.call("browser_screenshot", &json!({})).await;
    assert!(
        !shot
            .content
            .iter()
            .any(|c| matches!(c, Content::Image { .. }))
    );
    assert!(shot.text().contains("A picture of"), "{}", shot.text());
    assert!(shot.text().contains("pixels"), "{}", shot.text());
    tools.browser().shutdown().await;
}

/// Issue 11 review (TOOL-20): browser_wait reads the page's text in Conch's isolated
/// world. A page whose own `innerText` claims "Order placed" does not end a wait for it;
/// its true text does.
#[tokio::test(flavor = "multi_thread")]
async fn tool_20_a_wait_for_text_reads_the_page_where_it_cannot_lie() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools(&setup, Recorder::answering(Choice::No, Choice::No));
    let chat = tools.chat("waits", Mode::Ask);
    let opened = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("lies-text.html") }),
        )
        .await;
    assert!(!opened.is_error, "{}", opened.text());
    let lie = chat
        .call(
            "browser_wait",
            &json!({ "text": "Order placed", "seconds": 1 }),
        )
        .await
        .text();
    assert!(!lie.starts_with("Done waiting"), "{lie}");
    let truth = chat
        .call(
            "browser_wait",
            &json!({ "text": "not placed yet", "seconds": 1 }),
        )
        .await
        .text();
    assert!(truth.starts_with("Done waiting"), "{truth}");
    tools.browser().shutdown().await;
}

/// PERM-7: revoking a site takes it out of browser.json's always-allowed sites and makes
/// every conversation forget its "This chat" answer for it (an Always answer gives the
/// conversation both): the next click there asks again.
#[tokio::test(flavor = "multi_thread")]
async fn perm_7_revoking_a_site_forgets_always_and_this_chat() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::Always, Choice::No);
    let tools = tools(&setup, asker.clone());
    let always = tools.chat("always", Mode::Ask);
    let page = always
        .call(
            "browser_open",
            &json!({ "url": server.url("counter.html") }),
        )
        .await
        .text();
    let add = ref_of(&page, "button \"Add\"");
    assert!(
        !always
            .call("browser_click", &json!({ "ref": add }))
            .await
            .is_error
    );
    assert_eq!(asker.asked().len(), 1, "the first click asks");
    assert!(
        !always
            .call("browser_click", &json!({ "ref": add }))
            .await
            .is_error
    );
    assert_eq!(
        asker.asked().len(),
        1,
        "Always: the next click does not ask"
    );

    assert!(tools.revoke_site("127.0.0.1").unwrap());
    assert!(!tools.revoke_site("127.0.0.1").unwrap(), "once only");
    let settings = conch_browser::store::BrowserSettings::load(
        &setup.config.home,
        &conch_browser::SystemClock,
    )
    .unwrap()
    .value;
    assert!(settings.sites.is_empty(), "{:?}", settings.sites);
    assert!(
        !always
            .call("browser_click", &json!({ "ref": add }))
            .await
            .is_error
    );
    assert_eq!(asker.asked().len(), 2, "revoked: the next click asks again");
    tools.browser().shutdown().await;
}

/// BE-12, PERM-6, PERM-8: in the person's own Chrome (a stand-in Chromium Conch did not
/// launch) every conversation asks before acting on a site, in Full trust and Auto alike
/// and with the site always allowed in browser.json: the question is the own-Chrome one,
/// without Always, and a conversation's answer holds for that conversation only.
#[tokio::test(flavor = "multi_thread")]
async fn be_12_in_your_own_chrome_every_conversation_asks_whatever_the_mode_or_always() {
    let server = FixtureServer::start().await.unwrap();
    let mut standalone = conch_fixtures::browser::Standalone::start().expect("a stand-in");
    let mut setup = setup();
    setup.config.remote = Some(conch_browser::remote::Remote::Chrome(
        conch_browser::own_chrome::OwnChrome::in_folder(
            standalone.profile().to_path_buf(),
            std::time::Duration::from_secs(30),
        ),
    ));
    conch_browser::store::BrowserSettings::update(
        &setup.config.home,
        &conch_browser::SystemClock,
        |settings| Ok::<_, std::convert::Infallible>(settings.allow_site("127.0.0.1")),
    )
    .unwrap();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let tools = tools(&setup, asker.clone());
    for (n, mode) in [Mode::FullTrust, Mode::Auto].into_iter().enumerate() {
        let chat = tools.chat(&format!("own-{n}"), mode);
        let page = chat
            .call(
                "browser_open",
                &json!({ "url": server.url("counter.html") }),
            )
            .await
            .text();
        let add = ref_of(&page, "button \"Add\"");
        for _ in 0..2 {
            let clicked = chat.call("browser_click", &json!({ "ref": add })).await;
            assert!(!clicked.is_error, "{}", clicked.text());
        }
        let asked = asker.asked();
        assert_eq!(
            asked.len(),
            n + 1,
            "{mode:?}: one question per conversation"
        );
        let question = &asked[n].question;
        assert_eq!(question.kind(), QuestionKind::OwnChrome, "{mode:?}");
        assert!(
            !question.choices().contains(&Choice::Always),
            "{:?}",
            question.choices()
        );
    }
    tools.browser().shutdown().await;
    assert!(standalone.alive(), "letting go closed the person's Chrome");
}

/// Issue 30 (SNAP-1, SNAP-11, TOOL-20): one page, one view. The words a flow editor draws
/// in SVG, which browser_wait finds, browser_read's find finds too, on a line with a ref
/// where a person clicks them.
#[tokio::test(flavor = "multi_thread")]
async fn snap_11_what_a_wait_sees_in_svg_find_sees_too() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools(&setup, Recorder::answering(Choice::No, Choice::No));
    let chat = tools.chat("svg", Mode::Ask);
    let opened = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("flow-editor.html") }),
        )
        .await;
    assert!(!opened.is_error, "{}", opened.text());
    for (words, clicked) in [
        ("Fetch orders", true),
        ("Start", true),
        ("Deploy", true),
        ("Drag nodes to arrange", false),
    ] {
        let waited = chat
            .call("browser_wait", &json!({ "text": words, "seconds": 1 }))
            .await
            .text();
        assert!(waited.starts_with("Done waiting"), "{words}: {waited}");
        let found = chat
            .call("browser_read", &json!({ "find": words }))
            .await
            .text();
        assert!(!found.contains("is not on the page"), "{words}: {found}");
        let line = found
            .lines()
            .find(|l| l.contains(words) && !l.contains("find"))
            .unwrap_or_else(|| panic!("{words} not found:\n{found}"));
        assert_eq!(line.contains("[ref="), clicked, "{line}");
    }
    tools.browser().shutdown().await;
}

/// Issue 30 (pages that never go quiet): a click on a live dashboard whose report comes
/// from a 300 ms answer gives the report in its result, soon, with one line saying the
/// page keeps changing on its own; a click on a quiet page says nothing of the kind.
#[tokio::test(flavor = "multi_thread")]
async fn issue_30_a_click_on_a_busy_page_says_the_page_keeps_changing() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools(&setup, Recorder::answering(Choice::ThisChat, Choice::No));
    let chat = tools.chat("busy", Mode::Ask);
    let look = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("busy-chart.html") }),
        )
        .await
        .text();
    // The agent thinks before it acts; the page ticks meanwhile.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let go = ref_of(&look, "button \"Load the report\"");
    let started = std::time::Instant::now();
    let clicked = chat.call("browser_click", &json!({ "ref": go })).await;
    let took = started.elapsed();
    let text = clicked.text();
    assert!(!clicked.is_error, "{text}");
    assert!(text.contains("Report ready: 42 orders"), "{text}");
    assert!(text.contains("keeps changing on its own"), "{text}");
    assert!(took < std::time::Duration::from_millis(1200), "{took:?}");
    let look = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("counter.html") }),
        )
        .await
        .text();
    let add = ref_of(&look, "button \"Add\"");
    let clicked = chat
        .call("browser_click", &json!({ "ref": add }))
        .await
        .text();
    assert!(clicked.contains("Count: 1"), "{clicked}");
    assert!(!clicked.contains("keeps changing"), "{clicked}");
    tools.browser().shutdown().await;
}

/// TOOL-20, issue 30: a wait's quick look for words not in the document yet (no layout)
/// never keeps it from words the page renders otherwise: words that come late, in
/// capitals by CSS and split by a hidden node, are found.
#[tokio::test(flavor = "multi_thread")]
async fn tool_20_a_wait_finds_late_words_the_document_holds_otherwise() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools(&setup, Recorder::answering(Choice::No, Choice::No));
    let chat = tools.chat("late", Mode::Ask);
    let opened = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("late-words.html") }),
        )
        .await;
    assert!(!opened.is_error, "{}", opened.text());
    let waited = chat
        .call(
            "browser_wait",
            &json!({ "text": "TIDE TABLE READY", "seconds": 5 }),
        )
        .await
        .text();
    assert!(waited.starts_with("Done waiting"), "{waited}");
    tools.browser().shutdown().await;
}

/// TOOL-20, issue 30: a wait's quick look reads the words the page shows (in its body,
/// an open shadow root and a same-origin frame) and not the long text of a script or a
/// style it never shows: TiddlyWiki's 2.6 MB store made every look cost more than the
/// pause between looks, so a wait kept the page's own work waiting. A wait still finds
/// the words beside them.
#[tokio::test(flavor = "multi_thread")]
async fn tool_20_a_waits_quick_look_reads_no_long_script_or_style() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools(&setup, Recorder::answering(Choice::No, Choice::No));
    let chat = tools.chat("store", Mode::Ask);
    let opened = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("long-script-words.html") }),
        )
        .await;
    assert!(!opened.is_error, "{}", opened.text());
    let words = chat
        .conversation()
        .evaluate(conch_tools::PAGE_WORDS)
        .await
        .unwrap();
    let words = words.as_str().expect("the quick look gives text");
    for shown in [
        "glaciernotes",
        "willownotes",
        "shadowedlynxwords",
        "framedheronwords",
    ] {
        assert!(words.contains(shown), "{shown} is missing: {words}");
    }
    for unshown in ["storecanary", "stylecanary", "shadowcanary"] {
        assert!(
            !words.contains(unshown),
            "the quick look read {unshown} ({} characters)",
            words.len()
        );
    }
    let waited = chat
        .call(
            "browser_wait",
            &json!({ "text": "Willow notes", "seconds": 2 }),
        )
        .await
        .text();
    assert!(waited.starts_with("Done waiting"), "{waited}");
    tools.browser().shutdown().await;
}

/// Issue 30 (whatever browser_wait can see, browser_read and find can see too): on a page
/// that keeps changing, words in the places text hides (an open shadow root, a same-origin
/// frame, a custom element, SVG text and its tspan, a visually hidden label, an open
/// <details>) are found by a wait, and every word a wait finds, find finds too.
#[tokio::test(flavor = "multi_thread")]
async fn snap_11_every_word_a_wait_finds_find_finds_too() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools(&setup, Recorder::answering(Choice::No, Choice::No));
    let chat = tools.chat("hidden", Mode::Ask);
    let opened = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("busy-hidden-words.html") }),
        )
        .await;
    assert!(!opened.is_error, "{}", opened.text());
    for words in [
        "Shadowed lynx words",
        "Framed walrus words",
        "Custom heron words",
        "otter words",
        "Hidden badger label",
        "Detailed falcon words",
        "Decorative mole words",
    ] {
        let waited = chat
            .call("browser_wait", &json!({ "text": words, "seconds": 1 }))
            .await
            .text();
        assert!(waited.starts_with("Done waiting"), "{words}: {waited}");
        let found = chat
            .call("browser_read", &json!({ "find": words }))
            .await
            .text();
        assert!(
            found
                .lines()
                .any(|l| l.contains(words) && !l.contains("find")),
            "{words} waited for but not found:\n{found}"
        );
    }
    tools.browser().shutdown().await;
}
