//! The rules from the agent's side, on a real page that records every event it gets
//! (PERM-3, PERM-5, PERM-8, PERM-9, PERM-12, HS-1, HS-2, SEC-2, UP-5, NET-11, TOOL-10).

use std::sync::Arc;

use conch_fixtures::FixtureServer;
use conch_policy::marker_count;
use conch_tools::{
    BoxFuture, Chat, Choice, Content, Mode, QuestionKind, SecretFiller, SecretRequest, SecretValue,
    ToolsConfig,
};
use serde_json::{Value, json};

use crate::support::{Recorder, ref_of, setup, tools};

async fn events(chat: &Chat) -> Vec<String> {
    let value = chat
        .conversation()
        .evaluate("window.events")
        .await
        .expect("the page's event log");
    serde_json::from_value(value).expect("a list of events")
}

async fn snapshot(chat: &Chat) -> String {
    chat.call("browser_read", &json!({})).await.text()
}

/// A plain-text file the server hands out as a download named `name`.
fn attachment(name: &str, body: &str) -> conch_fixtures::Response {
    conch_fixtures::Response {
        status: 200,
        headers: vec![
            ("Content-Type".into(), "text/plain".into()),
            (
                "Content-Disposition".into(),
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        body: body.as_bytes().to_vec(),
    }
}

/// Tools over a new browser with `browser` as its config that keep downloads in
/// `downloads` and ask `asker`, with localhost allowed for the fixture server.
fn downloading_tools(
    browser: conch_browser::BrowserConfig,
    asker: Arc<Recorder>,
    downloads: &std::path::Path,
) -> conch_tools::Tools {
    let mut config = ToolsConfig::new(asker);
    config.net.allow_localhost = true;
    config.downloads = Some(downloads.to_owned());
    conch_tools::Tools::new(conch_browser::Browser::new(browser), config)
}

/// Tools over the same browser as `tools` that fill secret fields from `filler` and
/// ask `asker`, with localhost allowed for the fixture server.
fn with_filler(
    tools: &conch_tools::Tools,
    asker: Arc<Recorder>,
    filler: Arc<dyn SecretFiller>,
) -> conch_tools::Tools {
    let mut config = ToolsConfig::new(asker);
    config.net.allow_localhost = true;
    config.secret_filler = Some(filler);
    conch_tools::Tools::new(tools.browser().clone(), config)
}

/// Opens `url` in the chat and gives the ref of the element named `label` there.
async fn open_and_find(chat: &Chat, url: &str, label: &str) -> String {
    let opened = chat.call("browser_open", &json!({ "url": url })).await;
    ref_of(&opened.text(), label)
}

/// Types into the secret field `field`: the text is ignored, the vault fills it.
async fn fill_from_vault(chat: &Chat, field: &str) -> conch_tools::ToolResult {
    chat.call("browser_type", &json!({ "ref": field, "text": "ignored" }))
        .await
}

/// A screenshot, which click_at needs first: one that fails, or carries no image, fails the
/// test here rather than leaving a later step to fail for another reason.
async fn screenshot(chat: &Chat) {
    let shot = chat.call("browser_screenshot", &json!({})).await;
    assert!(!shot.is_error, "{}", shot.text());
    assert!(
        shot.content
            .iter()
            .any(|c| matches!(c, Content::Image { mime_type, .. } if mime_type == "image/png")),
        "{}",
        shot.text()
    );
}

/// PERM-9, PERM-14, UP-11, FORM-6: Plan only refuses every act with one sentence, and
/// the page receives no event at all; reading asks nothing (PERM-2).
#[tokio::test(flavor = "multi_thread")]
async fn perm_9_plan_only_refuses_every_act_and_sends_nothing() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    std::fs::write(setup.work.join("cv.pdf"), b"%PDF").unwrap();
    let asker = Recorder::answering(Choice::ThisChat, Choice::Yes);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("plan", Mode::PlanOnly);
    chat.call(
        "browser_open",
        &json!({ "url": server.url("tools-shop.html") }),
    )
    .await;
    let page = snapshot(&chat).await;
    let add = ref_of(&page, "Add to cart");
    let name = ref_of(&page, "Name");
    let country = ref_of(&page, "Country");
    let cv = ref_of(&page, "CV");
    screenshot(&chat).await;
    let acts = [
        ("browser_click", json!({ "ref": add })),
        ("browser_click", json!({ "ref": add, "how": "double" })),
        ("browser_click", json!({ "ref": add, "how": "right" })),
        (
            "browser_click",
            json!({ "ref": add, "how": "drag", "to": name }),
        ),
        ("browser_type", json!({ "ref": name, "text": "Ada" })),
        ("browser_press", json!({ "key": "Enter", "ref": name })),
        (
            "browser_select",
            json!({ "ref": country, "values": ["Spain"] }),
        ),
        (
            "browser_form",
            json!({ "fields": [{ "ref": name, "value": "Ada" }] }),
        ),
        (
            "browser_click_at",
            json!({ "x": 10, "y": 10, "description": "a corner" }),
        ),
        ("browser_upload", json!({ "ref": cv, "files": ["cv.pdf"] })),
    ];
    for (tool, args) in acts {
        let result = chat.call(tool, &args).await;
        assert!(result.is_error, "{tool} was not refused");
        assert!(
            result.text().contains("Plan only"),
            "{tool}: {}",
            result.text()
        );
    }
    assert_eq!(events(&chat).await, Vec::<String>::new());
    assert!(asker.asked().is_empty());
    tools.browser().shutdown().await;
}

/// PERM-8, HS-1, HS-2, PERM-12: "Place order" confirms even in Full trust, with the
/// element's words and no Always; a No leaves the page untouched, a Yes goes ahead.
#[tokio::test(flavor = "multi_thread")]
async fn perm_8_place_order_confirms_even_in_full_trust() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("trusting", Mode::FullTrust);
    chat.call(
        "browser_open",
        &json!({ "url": server.url("tools-shop.html") }),
    )
    .await;
    let page = snapshot(&chat).await;
    let order = ref_of(&page, "Place order");

    let declined = chat.call("browser_click", &json!({ "ref": order })).await;
    assert!(declined.is_error, "{}", declined.text());
    assert!(declined.text().contains("declined"), "{}", declined.text());
    let asked = asker.asked();
    assert_eq!(asker.kinds(), vec![QuestionKind::HighStakes]);
    assert!(
        asked[0].question.text().contains("Place order"),
        "{}",
        asked[0].question.text()
    );
    assert!(!asked[0].question.choices().contains(&Choice::Always));
    // HS-2, PERM-13: the card shows the element, cut from the view.
    let thumbnail = asked[0].thumbnail.as_ref().expect("a thumbnail");
    assert!(thumbnail.starts_with(b"\x89PNG"), "not a PNG");
    assert!(events(&chat).await.is_empty(), "{:?}", events(&chat).await);

    asker.then_other(Choice::Yes);
    let placed = chat.call("browser_click", &json!({ "ref": order })).await;
    assert!(!placed.is_error, "{}", placed.text());
    assert!(placed.text().contains("Order placed"), "{}", placed.text());
    assert_eq!(asker.kinds().len(), 2);
    // An ordinary button asks nothing in Full trust.
    let add = ref_of(&page, "Add to cart");
    let added = chat.call("browser_click", &json!({ "ref": add })).await;
    assert!(!added.is_error, "{}", added.text());
    assert_eq!(asker.kinds().len(), 2);
    tools.browser().shutdown().await;
}

#[derive(Debug)]
struct Vault;

impl SecretFiller for Vault {
    fn secret_for<'a>(&'a self, _: &'a SecretRequest) -> BoxFuture<'a, Option<SecretValue>> {
        Box::pin(async { Some(SecretValue::new("s3cret")) })
    }
}

/// SEC-2: typing into a password field is refused with the handoff sentence and no key
/// reaches the page; with a SecretFiller the field is filled and the value never shows.
#[tokio::test(flavor = "multi_thread")]
async fn sec_2_password_field_is_refused_or_filled_from_the_vault() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::Yes);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("secrets", Mode::Ask);
    chat.call(
        "browser_open",
        &json!({ "url": server.url("tools-shop.html") }),
    )
    .await;
    let page = snapshot(&chat).await;
    let password = ref_of(&page, "Password");
    let refused = chat
        .call(
            "browser_type",
            &json!({ "ref": password, "text": "hunter2" }),
        )
        .await;
    assert!(refused.is_error);
    assert!(
        refused.text().contains("browser_handoff"),
        "{}",
        refused.text()
    );
    assert!(events(&chat).await.is_empty(), "{:?}", events(&chat).await);
    // SEC-5: a shortcut on the secret field is refused too.
    let paste = chat
        .call(
            "browser_press",
            &json!({ "key": "Control+V", "ref": password }),
        )
        .await;
    assert!(paste.is_error, "{}", paste.text());
    assert!(events(&chat).await.is_empty(), "{:?}", events(&chat).await);

    let vaulted = with_filler(&tools, asker.clone(), Arc::new(Vault));
    let chat = vaulted.chat("secrets", Mode::Ask);
    let filled = fill_from_vault(&chat, &password).await;
    assert!(!filled.is_error, "{}", filled.text());
    assert!(!filled.text().contains("s3cret"), "{}", filled.text());
    let value = chat
        .conversation()
        .evaluate("document.getElementById('password').value")
        .await
        .unwrap();
    assert_eq!(value, Value::String("s3cret".to_owned()));
    tools.browser().shutdown().await;
}

/// UP-5, UP-13: a key-shaped file is refused, naming the rule, before anything is asked.
#[tokio::test(flavor = "multi_thread")]
async fn up_5_key_shaped_upload_is_refused() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    std::fs::write(
        setup.work.join("id_rsa"),
        b"-----BEGIN OPENSSH PRIVATE KEY-----",
    )
    .unwrap();
    let asker = Recorder::answering(Choice::ThisChat, Choice::Yes);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("uploads", Mode::FullTrust);
    chat.call(
        "browser_open",
        &json!({ "url": server.url("tools-shop.html") }),
    )
    .await;
    let cv = ref_of(&snapshot(&chat).await, "CV");
    let refused = chat
        .call("browser_upload", &json!({ "ref": cv, "files": ["id_rsa"] }))
        .await;
    assert!(refused.is_error);
    assert!(
        refused.text().contains("key or credentials"),
        "{}",
        refused.text()
    );
    assert!(!refused.text().contains("BEGIN"), "{}", refused.text());
    let outside = chat
        .call(
            "browser_upload",
            &json!({ "ref": cv, "files": ["/etc/hostname"] }),
        )
        .await;
    assert!(outside.is_error, "{}", outside.text());
    assert!(asker.asked().is_empty());
    // UP-9: an allowed file asks every time, even in Full trust, naming file and site.
    std::fs::write(setup.work.join("cv.pdf"), b"%PDF-1.4").unwrap();
    let uploaded = chat
        .call("browser_upload", &json!({ "ref": cv, "files": ["cv.pdf"] }))
        .await;
    assert!(!uploaded.is_error, "{}", uploaded.text());
    let asked = asker.asked();
    assert_eq!(asker.kinds(), vec![QuestionKind::Upload]);
    assert!(
        asked[0]
            .question
            .text()
            .contains("“cv.pdf” (from the work folder)"),
        "{}",
        asked[0].question.text()
    );
    assert_eq!(asked[0].question.choices(), &[Choice::Yes, Choice::No]);
    let name = chat
        .conversation()
        .evaluate("document.getElementById('cv').files[0].name")
        .await
        .unwrap();
    assert_eq!(name, Value::String("cv.pdf".to_owned()));
    tools.browser().shutdown().await;
}

/// BE-3, DATA-10, from the attacker's side: with the work folder inside Conch's home
/// (the home is its parent), an upload of a link to the device key, of a copy of a sealed
/// file, of a set-aside copy, and of a hard link to the passwords file under an innocent
/// name is each refused with a sentence naming the rule; nothing is asked, nothing
/// reaches the page, and no byte of them appears in a result.
#[tokio::test(flavor = "multi_thread")]
async fn be_3_sealed_secrets_are_never_uploaded_through_links_copies_or_hard_links() {
    const CANARY: &str = "SEALED_CANARY_0d9f3b";
    let server = FixtureServer::start().await.unwrap();
    let mut setup = setup();
    let home = setup.config.home.root().to_owned();
    setup.work = home.join("work");
    std::fs::create_dir_all(&setup.work).unwrap();
    std::fs::write(home.join("device.key"), CANARY).unwrap();
    std::fs::write(home.join("passwords.secrets.json"), CANARY).unwrap();
    std::fs::write(
        home.join("browser.secrets.json.corrupt-20261203T080000Z"),
        CANARY,
    )
    .unwrap();
    let work = &setup.work;
    std::os::unix::fs::symlink(home.join("device.key"), work.join("notes.txt")).unwrap();
    std::os::unix::fs::symlink(home.join("device.key"), work.join("device.key")).unwrap();
    std::fs::write(work.join("backup.secrets.json"), CANARY).unwrap();
    std::fs::copy(
        home.join("browser.secrets.json.corrupt-20261203T080000Z"),
        work.join("browser.secrets.json.corrupt-20261203T080000Z"),
    )
    .unwrap();
    std::fs::hard_link(home.join("passwords.secrets.json"), work.join("cv.pdf")).unwrap();
    let asker = Recorder::answering(Choice::ThisChat, Choice::Yes);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("uploads", Mode::FullTrust);
    chat.call(
        "browser_open",
        &json!({ "url": server.url("tools-shop.html") }),
    )
    .await;
    let cv = ref_of(&snapshot(&chat).await, "CV");
    for file in [
        "notes.txt",
        "device.key",
        "backup.secrets.json",
        "browser.secrets.json.corrupt-20261203T080000Z",
        "cv.pdf",
        "../device.key",
        "../passwords.secrets.json",
    ] {
        let refused = chat
            .call("browser_upload", &json!({ "ref": cv, "files": [file] }))
            .await;
        let said = refused.text();
        assert!(refused.is_error, "{file}: {said}");
        assert!(!said.contains(CANARY), "{file}: {said}");
        if !file.starts_with("..") {
            assert!(
                said.contains("one of Conch's sealed secrets"),
                "{file}: {said}"
            );
        }
    }
    assert!(asker.asked().is_empty(), "{:?}", asker.kinds());
    let files = chat
        .conversation()
        .evaluate("document.getElementById('cv').files.length")
        .await
        .unwrap();
    assert_eq!(files, json!(0), "a file reached the page");
    assert!(
        !events(&chat)
            .await
            .iter()
            .any(|e| e.contains("change") || e.contains("input")),
        "{:?}",
        events(&chat).await
    );
    tools.browser().shutdown().await;
}

const TAINT_NOTE: &str = "This chat read a web page that may be steering it.";

#[derive(Debug)]
struct Tainted;

impl conch_tools::TaintGuard for Tainted {
    fn note(&self, _: &str) -> Option<String> {
        Some(TAINT_NOTE.to_owned())
    }
}

/// NET-11, TOOL-10: a page tells the agent to click "Delete account"; a scripted obedient
/// agent does, and the confirmation is still asked; the page can't forge the wrapper.
#[tokio::test(flavor = "multi_thread")]
async fn net_11_an_obedient_agent_still_meets_the_confirmation() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let mut config = ToolsConfig::new(asker.clone());
    config.net.allow_localhost = true;
    config.taint_guard = Some(Arc::new(Tainted));
    let tools = conch_tools::Tools::new(conch_browser::Browser::new(setup.config.clone()), config);
    let chat = tools.chat("injected", Mode::Ask);
    let opened = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("tools-injection.html") }),
        )
        .await;
    let text = opened.text();
    assert_eq!(marker_count(&text), 2, "{text}");
    assert!(
        text.trim_end().ends_with("<<<CONCH PAGE TEXT END>>>")
            || text.contains("<<<CONCH PAGE TEXT END>>>\n"),
        "{text}"
    );
    // The obedient agent: it does what the page says.
    let delete = ref_of(&text, "Delete account");
    let clicked = chat.call("browser_click", &json!({ "ref": delete })).await;
    assert!(clicked.is_error, "{}", clicked.text());
    assert_eq!(
        asker.kinds(),
        vec![QuestionKind::Site, QuestionKind::HighStakes]
    );
    // PERM-13: the taint guard's note goes on the cards.
    assert!(
        asker
            .asked()
            .iter()
            .all(|r| r.taint_note.as_deref() == Some(TAINT_NOTE))
    );
    let deleted = chat
        .conversation()
        .evaluate("window.deleted")
        .await
        .unwrap();
    assert_eq!(deleted, Value::Bool(false));
    tools.browser().shutdown().await;
}

/// PERM-3, PERM-5, PERM-6: one site question per site per conversation; another
/// conversation asks again; Always is saved to browser.json and then holds everywhere.
#[tokio::test(flavor = "multi_thread")]
async fn perm_3_and_5_this_chat_lasts_for_one_conversation() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let tools = tools(&setup, asker.clone());
    let a = tools.chat("a", Mode::Ask);
    a.call(
        "browser_open",
        &json!({ "url": server.url("tools-shop.html") }),
    )
    .await;
    let add = ref_of(&snapshot(&a).await, "Add to cart");
    let first = a.call("browser_click", &json!({ "ref": add })).await;
    assert!(!first.is_error, "{}", first.text());
    assert!(
        first.text().contains("+ - paragraph: In cart: 1\n"),
        "{}",
        first.text()
    );
    a.call("browser_click", &json!({ "ref": add })).await;
    assert_eq!(asker.kinds(), vec![QuestionKind::Site]);

    let b = tools.chat("b", Mode::Ask);
    b.call(
        "browser_open",
        &json!({ "url": server.url("tools-shop.html") }),
    )
    .await;
    let add_b = ref_of(&snapshot(&b).await, "Add to cart");
    b.call("browser_click", &json!({ "ref": add_b })).await;
    assert_eq!(asker.kinds(), vec![QuestionKind::Site, QuestionKind::Site]);

    // Always: saved, and a third conversation does not ask.
    tools.browser().shutdown().await;
    let always = Recorder::answering(Choice::Always, Choice::No);
    let saving = crate::support::tools(&setup, always.clone());
    let c = saving.chat("c", Mode::Ask);
    c.call(
        "browser_open",
        &json!({ "url": server.url("tools-shop.html") }),
    )
    .await;
    let add_c = ref_of(&snapshot(&c).await, "Add to cart");
    c.call("browser_click", &json!({ "ref": add_c })).await;
    let settings = std::fs::read_to_string(setup.config.home.settings_file()).unwrap();
    assert!(settings.contains("127.0.0.1"), "{settings}");
    let d = saving.chat("d", Mode::Ask);
    d.call(
        "browser_open",
        &json!({ "url": server.url("tools-shop.html") }),
    )
    .await;
    let add_d = ref_of(&snapshot(&d).await, "Add to cart");
    d.call("browser_click", &json!({ "ref": add_d })).await;
    assert_eq!(always.kinds(), vec![QuestionKind::Site]);
    saving.browser().shutdown().await;
}

/// HS-8, SEC-5: Enter on "Place order" is judged as clicking it; Tab on the password
/// field works while a printable key is refused.
#[tokio::test(flavor = "multi_thread")]
async fn hs_8_enter_on_a_significant_control_confirms() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("keys", Mode::FullTrust);
    chat.call(
        "browser_open",
        &json!({ "url": server.url("tools-shop.html") }),
    )
    .await;
    let page = snapshot(&chat).await;
    let pressed = chat
        .call(
            "browser_press",
            &json!({ "key": "Enter", "ref": ref_of(&page, "Place order") }),
        )
        .await;
    assert!(pressed.is_error, "{}", pressed.text());
    assert_eq!(asker.kinds(), vec![QuestionKind::HighStakes]);
    let password = ref_of(&page, "Password");
    let tab = chat
        .call("browser_press", &json!({ "key": "Tab", "ref": password }))
        .await;
    assert!(!tab.is_error, "{}", tab.text());
    let letter = chat
        .call("browser_press", &json!({ "key": "a", "ref": password }))
        .await;
    assert!(letter.is_error, "{}", letter.text());
    let typed: Vec<String> = events(&chat)
        .await
        .into_iter()
        .filter(|e| e == "input:password")
        .collect();
    assert!(typed.is_empty(), "{typed:?}");
    tools.browser().shutdown().await;
}

/// HS-1, PERM-8, issue 11 (high stakes that are not): on a real-shaped checkout page in
/// Full trust, where every other question is answered No (as `--unattended` answers), a
/// link whose name describes content ("Articles published between …") and "Your orders"
/// are plain navigation: clicking them asks nothing and goes ahead.
#[tokio::test(flavor = "multi_thread")]
async fn hs_1_a_link_that_describes_content_is_navigation() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("navigating", Mode::FullTrust);
    chat.call(
        "browser_open",
        &json!({ "url": server.url("tools-checkout.html") }),
    )
    .await;
    let page = snapshot(&chat).await;
    for name in ["Articles published between", "Your orders"] {
        let clicked = chat
            .call("browser_click", &json!({ "ref": ref_of(&page, name) }))
            .await;
        assert!(!clicked.is_error, "{name}: {}", clicked.text());
    }
    assert!(asker.asked().is_empty(), "{:?}", asker.kinds());
    assert!(
        events(&chat).await.contains(&"click:archive".to_owned()),
        "{:?}",
        events(&chat).await
    );
    tools.browser().shutdown().await;
}

/// HS-8, PERM-8, PERM-12, issue 11 (high stakes that are): Enter in an ordinary field of a
/// checkout form submits it through its default button, "Place order", so it is judged as
/// pressing "Place order". In Full trust with the answer No (as `--unattended` answers) it
/// is refused and the form is not submitted, by ref and in the focused field alike; a Yes
/// places the order. A one-field message form whose "Send" button calls `requestSubmit()`
/// is judged by that button. Enter in the store's search box, whose button is "Search",
/// and in the delivery note (a textarea, which submits nothing) asks nothing.
#[tokio::test(flavor = "multi_thread")]
async fn hs_8_enter_in_a_field_is_judged_by_the_button_that_submits() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("checkout", Mode::FullTrust);
    chat.call(
        "browser_open",
        &json!({ "url": server.url("tools-checkout.html") }),
    )
    .await;
    let page = snapshot(&chat).await;
    let address = ref_of(&page, "Address");
    let submitted = |events: &[String], form: &str| {
        events
            .iter()
            .filter(|e| e.starts_with(&format!("submit:{form}:")))
            .cloned()
            .collect::<Vec<_>>()
    };

    let typed = chat
        .call(
            "browser_type",
            &json!({ "ref": address, "text": "1 Main St" }),
        )
        .await;
    assert!(!typed.is_error, "{}", typed.text());
    assert!(asker.asked().is_empty(), "{:?}", asker.kinds());

    let by_ref = chat
        .call("browser_press", &json!({ "key": "Enter", "ref": address }))
        .await;
    assert!(by_ref.is_error, "{}", by_ref.text());
    assert!(by_ref.text().contains("declined"), "{}", by_ref.text());
    assert_eq!(asker.kinds(), vec![QuestionKind::HighStakes]);
    let question = asker.asked()[0].question.text().to_owned();
    assert!(question.contains("Place order"), "{question}");
    // HS-2: the card shows the button that would be pressed, not the field: the
    // thumbnail is cut around "Place order" (its width and the margin of 40 on each side).
    let thumbnail = asker.asked()[0].thumbnail.clone().expect("a thumbnail");
    let png_width = u32::from_be_bytes(thumbnail[16..20].try_into().unwrap());
    let widths = chat
        .conversation()
        .evaluate("['place', 'address'].map(id => document.getElementById(id).getBoundingClientRect().width)")
        .await
        .unwrap();
    let width = |i: usize| widths[i].as_f64().unwrap() + 80.0;
    assert!(
        (f64::from(png_width) - width(0)).abs() <= 1.0,
        "{png_width} for {widths}"
    );
    assert!(
        (f64::from(png_width) - width(1)).abs() > 1.0,
        "{png_width} for {widths}"
    );

    // The Address field still holds the focus after typing: Enter with no ref.
    let focused = chat.call("browser_press", &json!({ "key": "Enter" })).await;
    assert!(focused.is_error, "{}", focused.text());
    assert_eq!(
        asker.kinds(),
        vec![QuestionKind::HighStakes, QuestionKind::HighStakes]
    );
    assert!(
        submitted(&events(&chat).await, "checkout").is_empty(),
        "{:?}",
        events(&chat).await
    );

    let note = chat
        .call(
            "browser_press",
            &json!({ "key": "Enter", "ref": ref_of(&page, "Delivery note") }),
        )
        .await;
    assert!(!note.is_error, "{}", note.text());
    let search = chat
        .call(
            "browser_press",
            &json!({ "key": "Enter", "ref": ref_of(&page, "Search the store") }),
        )
        .await;
    assert!(!search.is_error, "{}", search.text());
    assert_eq!(asker.kinds().len(), 2, "{:?}", asker.kinds());
    assert_eq!(
        submitted(&events(&chat).await, "site-search"),
        vec!["submit:site-search:search".to_owned()]
    );

    // A one-field form whose "Send" button calls requestSubmit(): Enter submits it too.
    let message = chat
        .call(
            "browser_press",
            &json!({ "key": "Enter", "ref": ref_of(&page, "Message the seller") }),
        )
        .await;
    assert!(message.is_error, "{}", message.text());
    assert_eq!(asker.kinds().len(), 3, "{:?}", asker.kinds());
    let question = asker.asked()[2].question.text().to_owned();
    assert!(question.contains("“Send”"), "{question}");
    assert!(
        submitted(&events(&chat).await, "message").is_empty(),
        "{:?}",
        events(&chat).await
    );

    asker.then_other(Choice::Yes);
    let yes = chat
        .call("browser_press", &json!({ "key": "Enter", "ref": address }))
        .await;
    assert!(!yes.is_error, "{}", yes.text());
    assert_eq!(asker.kinds().len(), 4, "{:?}", asker.kinds());
    assert_eq!(
        submitted(&events(&chat).await, "checkout"),
        vec!["submit:checkout:place".to_owned()]
    );
    tools.browser().shutdown().await;
}

/// FORM-3, FORM-4: a password field, a file box and an unknown ref are skipped and
/// named; the rest is filled.
#[tokio::test(flavor = "multi_thread")]
async fn form_3_and_4_skipped_fields_are_named() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let tools = tools(&setup, Recorder::answering(Choice::ThisChat, Choice::Yes));
    let chat = tools.chat("form", Mode::Ask);
    chat.call(
        "browser_open",
        &json!({ "url": server.url("tools-shop.html") }),
    )
    .await;
    let page = snapshot(&chat).await;
    let result = chat
        .call(
            "browser_form",
            &json!({ "fields": [
                { "ref": ref_of(&page, "Name"), "value": "Ada" },
                { "ref": ref_of(&page, "Password"), "value": "hunter2" },
                { "ref": ref_of(&page, "CV"), "value": "cv.pdf" },
                { "ref": "e999", "value": "x" },
            ] }),
        )
        .await;
    let text = result.text();
    assert!(text.contains("Filled 1 of 4 fields"), "{text}");
    assert!(text.contains("e999"), "{text}");
    assert!(text.contains("password, code or card"), "{text}");
    assert!(text.contains("file box"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    let name = chat
        .conversation()
        .evaluate(
            "[document.getElementById('name').value, document.getElementById('password').value]",
        )
        .await
        .unwrap();
    assert_eq!(name, json!(["Ada", ""]));
    tools.browser().shutdown().await;
}

/// TOOL-7, TOOL-11: the same scenario through the MCP door and through a bridged call
/// asks the same questions; two calls at once run one after the other.
#[tokio::test(flavor = "multi_thread")]
async fn tool_7_mcp_and_bridged_calls_ask_alike() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let tools = tools(&setup, asker.clone());
    let bridged = tools.chat("bridged", Mode::Ask);
    bridged
        .call(
            "browser_open",
            &json!({ "url": server.url("tools-shop.html") }),
        )
        .await;
    let page = snapshot(&bridged).await;
    let (add, order) = (ref_of(&page, "Add to cart"), ref_of(&page, "Place order"));
    bridged.call("browser_click", &json!({ "ref": add })).await;
    bridged
        .call("browser_click", &json!({ "ref": order }))
        .await;
    let through_bridge = asker.kinds();

    let server_door = conch_tools::McpServer::new(tools.clone(), Mode::Ask);
    let session = server_door.session("mcp");
    let call = |id: i64, name: &str, arguments: Value| json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": name, "arguments": arguments } });
    session
        .handle(&call(
            1,
            "browser_open",
            json!({ "url": server.url("tools-shop.html") }),
        ))
        .await;
    session.handle(&call(2, "browser_read", json!({}))).await;
    session
        .handle(&call(3, "browser_click", json!({ "ref": add })))
        .await;
    session
        .handle(&call(4, "browser_click", json!({ "ref": order })))
        .await;
    assert_eq!(asker.kinds()[through_bridge.len()..], through_bridge[..]);
    assert_eq!(
        through_bridge,
        vec![QuestionKind::Site, QuestionKind::HighStakes]
    );

    // TOOL-11: a click and a type issued together do not interleave.
    let name = ref_of(&page, "Name");
    let click_args = json!({ "ref": add });
    let type_args = json!({ "ref": name, "text": "Ada" });
    let (clicked, typed) = tokio::join!(
        bridged.call("browser_click", &click_args),
        bridged.call("browser_type", &type_args),
    );
    assert!(
        !clicked.is_error && !typed.is_error,
        "{} / {}",
        clicked.text(),
        typed.text()
    );
    let log = events(&bridged).await;
    let add_events: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(_, e)| e.ends_with(":add"))
        .map(|(i, _)| i)
        .collect();
    let name_events: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(_, e)| e.ends_with(":name"))
        .map(|(i, _)| i)
        .collect();
    let separate = add_events.iter().max() < name_events.iter().min()
        || name_events.iter().max() < add_events.iter().min();
    assert!(separate, "interleaved: {log:?}");
    tools.browser().shutdown().await;
}

/// DL-1, HS-3: a download asks every time, naming the file and the site, with no Always;
/// nothing lands in Downloads before a Yes.
#[tokio::test(flavor = "multi_thread")]
async fn dl_1_downloads_ask_and_land_only_after_yes() {
    let server = FixtureServer::start().await.unwrap();
    server.route(
        "/files/report.txt",
        attachment("report.txt", "quarterly numbers"),
    );
    let setup = setup();
    let downloads = setup.work.join("Downloads");
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let tools = downloading_tools(setup.config.clone(), asker.clone(), &downloads);
    let chat = tools.chat("downloads", Mode::FullTrust);
    let page = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("tools-download.html") }),
        )
        .await
        .text();
    let link = ref_of(&page, "Get the report");
    let first = chat
        .call("browser_click", &json!({ "ref": link }))
        .await
        .text();
    let asked = async {
        for _ in 0..100 {
            if asker.kinds().contains(&QuestionKind::Download) {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        false
    };
    assert!(asked.await, "{:?}", asker.kinds());
    let question = asker
        .asked()
        .into_iter()
        .find(|r| r.question.kind() == QuestionKind::Download)
        .unwrap()
        .question;
    assert!(
        question.text().contains("report.txt") && question.text().contains("127.0.0.1"),
        "{}",
        question.text()
    );
    assert!(!question.choices().contains(&Choice::Always));
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let kept = std::fs::read_dir(&downloads)
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(kept, 0);

    asker.then_other(Choice::Yes);
    let second = chat
        .call("browser_click", &json!({ "ref": link }))
        .await
        .text();
    let mut saved = false;
    for _ in 0..100 {
        if downloads.join("report.txt").is_file() {
            saved = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(saved, "the download was not kept");
    assert_eq!(
        std::fs::read(downloads.join("report.txt")).unwrap(),
        b"quarterly numbers"
    );
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let later = chat.call("browser_read", &json!({})).await.text();
    let all = format!("{first}\n{second}\n{later}");
    assert!(
        all.contains("The person declined the download “report.txt”"),
        "{all}"
    );
    assert!(all.contains("saved to Downloads"), "{all}");
    tools.browser().shutdown().await;
}

/// DL-1, DL-2, DL-3, ERR-1 (issue 29): two chats and a task's errand each download a file
/// of their own at the same moment. Every browser context gets the download rules, each
/// question names its own conversation's file and goes to that conversation, each
/// conversation is told of its own file only, and all three land in Downloads.
#[tokio::test(flavor = "multi_thread")]
async fn dl_1_err_1_each_conversation_hears_of_its_own_download_only() {
    let server = FixtureServer::start().await.unwrap();
    let names = ["alpha", "bravo", "charlie"];
    for name in names {
        server.route(
            &format!("/dl/{name}.html"),
            conch_fixtures::Response {
                status: 200,
                headers: vec![("Content-Type".into(), "text/html".into())],
                body: format!(
                    "<!doctype html><title>{name}</title><a href=\"/files/{name}.txt\" download>Get {name}</a>"
                )
                .into_bytes(),
            },
        );
        server.route(
            &format!("/files/{name}.txt"),
            attachment(&format!("{name}.txt"), &format!("the {name} file")),
        );
    }
    let setup = setup();
    let downloads = setup.work.join("Downloads");
    let asker = Recorder::answering(Choice::ThisChat, Choice::Yes);
    let tools = downloading_tools(setup.config.clone(), asker.clone(), &downloads);
    let chats = [
        tools.chat_in(&conch_tools::ToolContext::chat("chat-a", Mode::FullTrust)),
        tools.chat_in(&conch_tools::ToolContext::chat("chat-b", Mode::FullTrust)),
        tools.chat_in(&conch_tools::ToolContext::task("task-c", Mode::FullTrust)),
    ];
    let mut links = Vec::new();
    for (chat, name) in chats.iter().zip(names) {
        let page = chat
            .call(
                "browser_open",
                &json!({ "url": server.url(&format!("dl/{name}.html")) }),
            )
            .await;
        assert!(!page.is_error, "{name}: {}", page.text());
        links.push(ref_of(&page.text(), &format!("Get {name}")));
    }
    let [a, b, c] = &chats;
    let args: Vec<Value> = links.iter().map(|l| json!({ "ref": l })).collect();
    let (ra, rb, rc) = tokio::join!(
        a.call("browser_click", &args[0]),
        b.call("browser_click", &args[1]),
        c.call("browser_click", &args[2]),
    );
    let mut heard = [ra.text(), rb.text(), rc.text()];
    for _ in 0..100 {
        if heard.iter().all(|h| h.contains("saved to Downloads")) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        for (chat, text) in chats.iter().zip(heard.iter_mut()) {
            text.push_str(&chat.call("browser_read", &json!({})).await.text());
        }
    }
    for ((text, name), conversation) in heard.iter().zip(names).zip(["chat-a", "chat-b", "task-c"])
    {
        assert!(
            text.contains(&format!("The download “{name}.txt” was saved to Downloads")),
            "{conversation} was not told of its file: {text}"
        );
        for other in names.iter().filter(|n| **n != name) {
            assert!(
                !text.contains(&format!("{other}.txt")),
                "{conversation} was told of {other}: {text}"
            );
        }
        assert_eq!(
            std::fs::read(downloads.join(format!("{name}.txt"))).unwrap(),
            format!("the {name} file").into_bytes()
        );
    }
    let questions: Vec<_> = asker
        .asked()
        .into_iter()
        .filter(|r| r.question.kind() == QuestionKind::Download)
        .collect();
    assert_eq!(questions.len(), 3, "{questions:?}");
    for (name, conversation) in names.iter().zip(["chat-a", "chat-b", "task-c"]) {
        let asked: Vec<_> = questions
            .iter()
            .filter(|r| r.question.text().contains(&format!("{name}.txt")))
            .collect();
        assert_eq!(asked.len(), 1, "{name}: {questions:?}");
        assert_eq!(asked[0].conversation, conversation, "{name}");
    }
    tools.browser().shutdown().await;
}

/// DL-5: a browser Conch did not launch keeps its files on its own disk, so a download
/// there is refused with a sentence and nothing is asked or kept.
#[tokio::test(flavor = "multi_thread")]
async fn dl_5_a_remote_browsers_download_is_refused_with_a_sentence() {
    let server = FixtureServer::start().await.unwrap();
    server.route(
        "/files/report.txt",
        attachment("report.txt", "quarterly numbers"),
    );
    let standalone = conch_fixtures::browser::Standalone::start().expect("a standalone Chromium");
    let setup = setup();
    let downloads = setup.work.join("Downloads");
    let asker = Recorder::answering(Choice::ThisChat, Choice::Yes);
    let mut browser_config = setup.config.clone();
    browser_config.remote = Some(conch_browser::remote::Remote::Cdp(standalone.http()));
    let tools = downloading_tools(browser_config, asker.clone(), &downloads);
    let chat = tools.chat("downloads", Mode::FullTrust);
    let page = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("tools-download.html") }),
        )
        .await
        .text();
    assert!(
        tools.browser().is_remote(),
        "the remote browser was not used"
    );
    let link = ref_of(&page, "Get the report");
    let first = chat
        .call("browser_click", &json!({ "ref": link }))
        .await
        .text();
    let mut all = first;
    for _ in 0..30 {
        if all.contains("was refused") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        all.push_str(&chat.call("browser_read", &json!({})).await.text());
    }
    assert!(
        all.contains("The download “report.txt” was refused: this browser runs on another machine"),
        "{all}"
    );
    assert!(
        !asker.kinds().contains(&QuestionKind::Download),
        "{:?}",
        asker.kinds()
    );
    assert!(!downloads.join("report.txt").exists());
    tools.browser().shutdown().await;
}

/// PERM-16: clicking in a cross-site frame asks about the top-level site and names the
/// frame's site too; the frame's "Place order" still confirms.
#[tokio::test(flavor = "multi_thread")]
async fn perm_16_a_cross_site_frame_is_named() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("frames", Mode::Ask);
    let page = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("xo-frame.html") }),
        )
        .await
        .text();
    let order = ref_of(&page, "Place order");
    let clicked = chat.call("browser_click", &json!({ "ref": order })).await;
    assert!(clicked.is_error, "{}", clicked.text());
    let asked = asker.asked();
    assert_eq!(
        asker.kinds(),
        vec![QuestionKind::Site, QuestionKind::HighStakes]
    );
    assert_eq!(
        asked[0].question.text(),
        "Let Conch use 127.0.0.1, and localhost inside it?"
    );
    tools.browser().shutdown().await;
}

/// HS-5: for browser_click_at the page's words decide, through a cross-site frame, even
/// when the description says otherwise; a description of "Buy" over a bare canvas
/// confirms too. HS-4: a drag onto "Delete" confirms.
#[tokio::test(flavor = "multi_thread")]
async fn hs_5_click_at_reads_the_page_not_the_agent() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("points", Mode::FullTrust);
    chat.call(
        "browser_open",
        &json!({ "url": server.url("click-at-frames.html") }),
    )
    .await;
    screenshot(&chat).await;
    // The frame sits at (100, 100); its button at (10, 110), 200×30.
    let next = chat
        .call(
            "browser_click_at",
            &json!({ "x": 200, "y": 225, "description": "Next" }),
        )
        .await;
    assert!(next.is_error, "{}", next.text());
    assert_eq!(asker.kinds(), vec![QuestionKind::HighStakes]);
    assert!(asker.asked()[0].question.text().contains("Place order"));

    chat.call("browser_open", &json!({ "url": server.url("canvas.html") }))
        .await;
    screenshot(&chat).await;
    let buy = chat
        .call(
            "browser_click_at",
            &json!({ "x": 600, "y": 400, "description": "Buy button" }),
        )
        .await;
    assert!(buy.is_error, "{}", buy.text());
    assert_eq!(asker.kinds().len(), 2);
    let log = chat.conversation().evaluate("window.log").await.unwrap();
    assert_eq!(log, json!([]));

    chat.call(
        "browser_open",
        &json!({ "url": server.url("drag-list.html") }),
    )
    .await;
    screenshot(&chat).await;
    let centre = |id: &str| {
        format!(
            "(() => {{ const r = document.getElementById('{id}').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
        )
    };
    let from = chat.conversation().evaluate(&centre("h-a")).await.unwrap();
    let to = chat
        .conversation()
        .evaluate(&centre("trash"))
        .await
        .unwrap();
    let dragged = chat
        .call(
            "browser_click_at",
            &json!({ "x": from[0], "y": from[1], "how": "drag", "to_x": to[0], "to_y": to[1], "description": "Apples" }),
        )
        .await;
    assert!(dragged.is_error, "{}", dragged.text());
    assert_eq!(asker.kinds().len(), 3);
    assert!(asker.asked()[2].question.text().contains("Delete"));
    tools.browser().shutdown().await;
}

#[derive(Debug)]
struct AutoSpy {
    seen: std::sync::Mutex<Vec<bool>>,
}

impl conch_tools::AutoPolicy for AutoSpy {
    fn decide(&self, request: &conch_tools::AutoRequest) -> conch_policy::AutoAnswer {
        self.seen.lock().expect("spy").push(request.carries);
        conch_policy::AutoAnswer::Allow
    }
}

/// PERM-10, PERM-11, FORM-5: in Auto, the embedder's policy decides the site question
/// and sees `carries`; high stakes is asked whatever it says.
#[tokio::test(flavor = "multi_thread")]
async fn perm_10_auto_policy_decides_the_site_question_only() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let spy = Arc::new(AutoSpy {
        seen: std::sync::Mutex::new(Vec::new()),
    });
    let mut config = ToolsConfig::new(asker.clone());
    config.net.allow_localhost = true;
    config.auto_policy = spy.clone();
    let tools = conch_tools::Tools::new(conch_browser::Browser::new(setup.config.clone()), config);
    let chat = tools.chat("auto", Mode::Auto);
    chat.call(
        "browser_open",
        &json!({ "url": server.url("tools-shop.html") }),
    )
    .await;
    let page = snapshot(&chat).await;
    let long = "x".repeat(500);
    let form = chat
        .call(
            "browser_form",
            &json!({ "fields": [{ "ref": ref_of(&page, "Name"), "value": long }] }),
        )
        .await;
    assert!(!form.is_error, "{}", form.text());
    let short = chat
        .call(
            "browser_type",
            &json!({ "ref": ref_of(&page, "Name"), "text": "Ada" }),
        )
        .await;
    assert!(!short.is_error, "{}", short.text());
    assert_eq!(*spy.seen.lock().unwrap(), vec![true, false]);
    assert!(asker.asked().is_empty());
    let order = chat
        .call(
            "browser_click",
            &json!({ "ref": ref_of(&page, "Place order") }),
        )
        .await;
    assert!(order.is_error, "{}", order.text());
    assert_eq!(asker.kinds(), vec![QuestionKind::HighStakes]);
    tools.browser().shutdown().await;
}

/// DLG-6: a page's confirm that asks for a significant act is high stakes, asked with no
/// thumbnail (a frozen page can't be pictured); No cancels it.
#[tokio::test(flavor = "multi_thread")]
async fn dlg_6_a_significant_page_confirm_is_high_stakes() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("confirms", Mode::FullTrust);
    let page = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("tools-confirm.html") }),
        )
        .await
        .text();
    let tidy = chat
        .call("browser_click", &json!({ "ref": ref_of(&page, "Tidy up") }))
        .await;
    assert!(!tidy.is_error, "{}", tidy.text());
    assert_eq!(asker.kinds(), vec![QuestionKind::HighStakes]);
    let asked = &asker.asked()[0];
    assert!(
        asked.question.text().contains("Send the order now?"),
        "{}",
        asked.question.text()
    );
    assert!(asked.thumbnail.is_none());
    assert!(tidy.text().contains("it was cancelled"), "{}", tidy.text());
    let item = chat
        .conversation()
        .evaluate("item.textContent")
        .await
        .unwrap();
    assert_eq!(item, Value::String("Kept".to_owned()));
    tools.browser().shutdown().await;
}

/// A vault that notes the address each request names.
#[derive(Debug, Default)]
struct NotingVault {
    urls: std::sync::Mutex<Vec<String>>,
}

impl SecretFiller for NotingVault {
    fn secret_for<'a>(&'a self, request: &'a SecretRequest) -> BoxFuture<'a, Option<SecretValue>> {
        self.urls
            .lock()
            .expect("the vault's notes")
            .push(request.url.clone());
        Box::pin(async { Some(SecretValue::new("s3cret")) })
    }
}

/// The fill was refused with a result that `says` the words and shows no byte of the
/// vault's secret; `context` prefixes the failure message.
fn assert_refused_without_the_secret(typed: &conch_tools::ToolResult, says: &str, context: &str) {
    let text = typed.text();
    assert!(typed.is_error, "{context}: {text}");
    assert!(text.contains(says), "{context}: {text}");
    assert!(!text.contains("s3cret"), "{context}: {text}");
}

/// Issue 11 review (GES-8, SEC-2): the secret filler checks the focus in Conch's world
/// right before the secret goes in. A sign-in page that moves the focus to a field of its
/// own on the first key gets nothing typed, neither there nor in the password box; the
/// vault was asked for the page's true address.
#[tokio::test(flavor = "multi_thread")]
async fn ges_8_the_secret_filler_types_nothing_when_the_page_moves_the_focus() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::Yes);
    let vault = Arc::new(NotingVault::default());
    let tools = tools(&setup, asker.clone());
    let vaulted = with_filler(&tools, asker, vault.clone());
    let chat = vaulted.chat("thief", Mode::Ask);
    let url = server.url("secret-thief.html");
    let password = open_and_find(&chat, &url, "Password").await;
    let typed = fill_from_vault(&chat, &password).await;
    assert_refused_without_the_secret(&typed, "nothing was typed", "");
    let values = chat
        .conversation()
        .evaluate("[password.value, capture.value]")
        .await
        .unwrap();
    assert_eq!(values, json!(["", ""]));
    assert_eq!(*vault.urls.lock().unwrap(), vec![url]);
    tools.browser().shutdown().await;
}

/// Issue 29, SEC-2: the field that receives the saved password is checked before every
/// key of the fill. A sign-in page that moves the focus on the first key that lands, to a
/// visible text field of its own or into a frame's field, gets no more of it: the fill
/// stops at once and says so, and the other field holds nothing of the password.
#[tokio::test(flavor = "multi_thread")]
async fn sec_2_a_fill_stops_when_the_page_moves_the_focus_mid_fill() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::Yes);
    let vault = Arc::new(NotingVault::default());
    let tools = tools(&setup, asker.clone());
    let vaulted = with_filler(&tools, asker, vault.clone());
    for to in ["field", "frame"] {
        let chat = vaulted.chat(&format!("thief-{to}"), Mode::FullTrust);
        let url = server.url(&format!("secret-focus-thief.html?to={to}"));
        let password = open_and_find(&chat, &url, "Password").await;
        let typed = fill_from_vault(&chat, &password).await;
        assert_refused_without_the_secret(&typed, "the fill stopped there", to);
        assert!(typed.text().contains("browser_handoff"), "{}", typed.text());
        let values = chat
            .conversation()
            .evaluate(
                "[password.value, note.value, box.contentDocument.getElementById('comment').value]",
            )
            .await
            .unwrap();
        assert_eq!(values, json!(["s", "", ""]), "{to}");
    }
    tools.browser().shutdown().await;
}

/// Issue 29, SEC-2: a password field in another site's frame (another process) is
/// checked before every key too: when the page around it takes the focus out of the
/// frame after the first key, the fill stops and the page's field gets nothing.
#[tokio::test(flavor = "multi_thread")]
async fn sec_2_a_fill_in_a_frame_stops_when_the_page_takes_the_focus_out() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::Yes);
    let vault = Arc::new(NotingVault::default());
    let tools = tools(&setup, asker.clone());
    let vaulted = with_filler(&tools, asker, vault.clone());
    let chat = vaulted.chat("frame-thief", Mode::FullTrust);
    let url = server.url("secret-frame-thief.html");
    let password = open_and_find(&chat, &url, "Password").await;
    let typed = fill_from_vault(&chat, &password).await;
    assert_refused_without_the_secret(&typed, "the fill stopped there", "");
    let values = chat
        .conversation()
        .evaluate("[note.value, document.activeElement.id]")
        .await
        .unwrap();
    assert_eq!(values, json!(["", "note"]));
    tools.browser().shutdown().await;
}

/// Issue 16, SEC-2: a password field inside another site's frame is asked for under the
/// frame's own address, never the tab's, so the tab's saved password can't be typed into
/// a frame from elsewhere; the result names that site, never the value.
#[tokio::test(flavor = "multi_thread")]
async fn sec_2_a_password_field_in_a_cross_site_frame_is_asked_for_under_the_frames_site() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::Yes);
    let vault = Arc::new(NotingVault::default());
    let tools = tools(&setup, asker.clone());
    let vaulted = with_filler(&tools, asker, vault.clone());
    let chat = vaulted.chat("framed", Mode::FullTrust);
    let opened = chat
        .call(
            "browser_open",
            &json!({ "url": server.url("xo-frame.html") }),
        )
        .await;
    let password = ref_of(&opened.text(), "Card password");
    let typed = fill_from_vault(&chat, &password).await;
    assert!(!typed.is_error, "{}", typed.text());
    let frame_site = format!("localhost:{}", server.cross_site_port());
    assert!(
        typed
            .text()
            .contains(&format!("Filled the saved password for {frame_site}")),
        "{}",
        typed.text()
    );
    assert!(!typed.text().contains("s3cret"), "{}", typed.text());
    assert_eq!(
        *vault.urls.lock().unwrap(),
        vec![server.cross_site_url("frame.html")]
    );
    tools.browser().shutdown().await;
}

/// A vault with nothing saved that makes a password on request and notes each request.
#[derive(Debug, Default)]
struct MakingVault {
    made: std::sync::Mutex<Vec<(bool, String)>>,
}

impl SecretFiller for MakingVault {
    fn secret_for<'a>(&'a self, _: &'a SecretRequest) -> BoxFuture<'a, Option<SecretValue>> {
        Box::pin(async { None })
    }

    fn new_secret_for<'a>(
        &'a self,
        request: &'a SecretRequest,
    ) -> BoxFuture<'a, Option<SecretValue>> {
        self.made
            .lock()
            .expect("the vault's notes")
            .push((request.new_password, request.username.clone()));
        Box::pin(async { Some(SecretValue::new("n3w-s3cret-Made")) })
    }
}

/// Issue 16, SEC-2: a sign-up form's new-password field is filled with a password the
/// vault makes, and so is its confirmation field, only once the act is permitted: a
/// refused act makes nothing. The vault is told the field is a new-password one and
/// the username the form holds; the result names the site, never the value.
#[tokio::test(flavor = "multi_thread")]
async fn sec_2_a_new_password_is_made_only_for_a_permitted_act() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let vault = Arc::new(MakingVault::default());
    let no = Recorder::answering(Choice::No, Choice::No);
    let tools = tools(&setup, no.clone());
    let with_vault = |asker: Arc<Recorder>| with_filler(&tools, asker, vault.clone());
    let url = server.url("vault-signup.html");

    let refusing = with_vault(no.clone());
    let chat = refusing.chat("refused", Mode::Ask);
    let password = open_and_find(&chat, &url, "Choose a password").await;
    let typed = fill_from_vault(&chat, &password).await;
    assert!(typed.is_error, "{}", typed.text());
    assert_eq!(no.kinds(), vec![QuestionKind::Site]);
    assert!(
        vault.made.lock().unwrap().is_empty(),
        "a refused act made a password"
    );

    let yes = Recorder::answering(Choice::ThisChat, Choice::Yes);
    let allowing = with_vault(yes);
    let chat = allowing.chat("signup", Mode::Ask);
    let opened = chat.call("browser_open", &json!({ "url": url })).await;
    let page = opened.text();
    let email = ref_of(&page, "Email");
    let typed = chat
        .call(
            "browser_type",
            &json!({ "ref": email, "text": "ada@example.com" }),
        )
        .await;
    assert!(!typed.is_error, "{}", typed.text());
    let password = ref_of(&page, "Choose a password");
    let made = fill_from_vault(&chat, &password).await;
    assert!(!made.is_error, "{}", made.text());
    let site = format!("127.0.0.1:{}", server.port());
    assert!(
        made.text().contains(&format!(
            "Generated a strong password for {site}, filled it and saved it"
        )),
        "{}",
        made.text()
    );
    assert!(!made.text().contains("n3w-s3cret"), "{}", made.text());
    assert_eq!(
        *vault.made.lock().unwrap(),
        vec![(true, "ada@example.com".to_owned())]
    );
    let values = chat
        .conversation()
        .evaluate("[password.value, again.value]")
        .await
        .unwrap();
    assert_eq!(values, json!(["n3w-s3cret-Made", "n3w-s3cret-Made"]));

    // A vault that makes none (the trait's default) hands the field to the person.
    let empty = with_filler(
        &tools,
        Recorder::answering(Choice::ThisChat, Choice::Yes),
        Arc::new(EmptyVault),
    );
    let chat = empty.chat("empty", Mode::Ask);
    let password = open_and_find(&chat, &url, "Choose a password").await;
    let handed = fill_from_vault(&chat, &password).await;
    assert!(handed.is_error, "{}", handed.text());
    assert!(
        handed.text().contains("browser_handoff"),
        "{}",
        handed.text()
    );
    let value = chat
        .conversation()
        .evaluate("password.value")
        .await
        .unwrap();
    assert_eq!(value, json!(""));
    tools.browser().shutdown().await;
}

/// A vault with nothing saved that makes nothing: the trait's default.
#[derive(Debug)]
struct EmptyVault;

impl SecretFiller for EmptyVault {
    fn secret_for<'a>(&'a self, _: &'a SecretRequest) -> BoxFuture<'a, Option<SecretValue>> {
        Box::pin(async { None })
    }
}

/// HS-1, SNAP-1 (issue 30): a flow editor's node drawn in SVG with no role, whose only
/// words are drawn ("Delete workflow"), is judged by those words: in Full trust with the
/// answer No, clicking it by ref asks one high-stakes question and nothing is deleted.
/// (SVG elements have no `innerText`: before, the node was described with no words.)
#[tokio::test(flavor = "multi_thread")]
async fn hs_1_an_svg_node_is_judged_by_its_drawn_words() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("svg", Mode::FullTrust);
    chat.call(
        "browser_open",
        &json!({ "url": server.url("svg-delete.html") }),
    )
    .await;
    let page = snapshot(&chat).await;
    let clicked = chat
        .call(
            "browser_click",
            &json!({ "ref": ref_of(&page, "Delete workflow") }),
        )
        .await;
    assert!(clicked.is_error, "{}", clicked.text());
    assert_eq!(asker.kinds(), vec![QuestionKind::HighStakes]);
    assert!(events(&chat).await.is_empty(), "{:?}", events(&chat).await);
    tools.browser().shutdown().await;
}
