//! browser_type's `submit` (issue 30, GES-8, HS-8, SEC-2): the text, then Enter in the same
//! field, in one call that reads once, after the Enter. The Enter is judged exactly as
//! browser_press Enter on that field is, and after a saved password's fill it signs in
//! without the password ever showing.

use std::sync::Arc;

use conch_fixtures::{FixtureServer, Response};
use conch_tools::{
    BoxFuture, Chat, Choice, Mode, QuestionKind, SecretFiller, SecretRequest, SecretValue,
    ToolResult, ToolsConfig,
};
use serde_json::{Value, json};

use crate::support::{Recorder, ref_of, setup, tools};

/// `tool` called with `args`, its future boxed: a test's steps held inline overflow the
/// test thread's stack in a debug build.
async fn call(chat: &Chat, tool: &str, args: &Value) -> ToolResult {
    Box::pin(chat.call(tool, args)).await
}

/// What `expression` gives on the chat's page.
async fn eval(chat: &Chat, expression: &str) -> Value {
    chat.conversation()
        .evaluate(expression)
        .await
        .expect("the page answers")
}

/// The page's event log.
async fn events(chat: &Chat) -> Vec<String> {
    serde_json::from_value(eval(chat, "window.events").await).expect("a list of events")
}

/// How many high-stakes questions `asker` was asked.
fn high_stakes(asker: &Recorder) -> usize {
    asker
        .kinds()
        .into_iter()
        .filter(|k| *k == QuestionKind::HighStakes)
        .count()
}

/// A search form that sends its words to a results page by GET, as a site's search does.
const SEARCH: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Catalogue</title></head>
<body>
  <h1>Catalogue</h1>
  <form action="/submit-results" method="get">
    <label>Search the catalogue <input id="q" name="q" type="search"></label>
    <button id="go">Search</button>
  </form>
</body></html>"#;

/// The results page: it says what was searched for.
const RESULTS: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Results</title></head>
<body>
  <h1>Results</h1>
  <p id="found"></p>
  <script>
    const q = new URLSearchParams(location.search).get('q') || '';
    document.getElementById('found').textContent = '3 records for ' + q;
  </script>
</body></html>"#;

/// GES-8, issue 30: browser_type with `submit` types into a loopback search form and
/// presses Enter, and its one result is the results page (the diff shows the results);
/// the results were asked for once. On a button, `submit` gives the same sentence
/// browser_type gives without it, and sends nothing.
#[tokio::test(flavor = "multi_thread")]
async fn ges_8_type_with_submit_lands_on_the_results_in_one_call() {
    let server = FixtureServer::start().await.unwrap();
    server.route("submit-search.html", Response::html(SEARCH));
    server.route("submit-results", Response::html(RESULTS));
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("search", Mode::Ask);
    let url = server.url("submit-search.html");
    let page = call(&chat, "browser_open", &json!({ "url": url }))
        .await
        .text();
    let field = ref_of(&page, "Search the catalogue");
    let done = call(
        &chat,
        "browser_type",
        &json!({ "ref": field, "text": "harbour lights", "submit": true }),
    )
    .await;
    assert!(!done.is_error, "{}", done.text());
    assert!(
        done.text().contains("3 records for harbour lights"),
        "{}",
        done.text()
    );
    assert_eq!(server.requests("submit-results"), 1);
    assert_eq!(asker.kinds(), vec![QuestionKind::Site]);

    // Bad input: a button is no text field, with or without submit.
    let page = call(&chat, "browser_open", &json!({ "url": url }))
        .await
        .text();
    let button = ref_of(&page, "button \"Search\"");
    let plain = call(
        &chat,
        "browser_type",
        &json!({ "ref": button, "text": "x" }),
    )
    .await;
    let submitted = call(
        &chat,
        "browser_type",
        &json!({ "ref": button, "text": "x", "submit": "true" }),
    )
    .await;
    assert!(plain.is_error && submitted.is_error, "{}", submitted.text());
    assert!(
        plain.text().contains("is not a text field"),
        "{}",
        plain.text()
    );
    assert_eq!(submitted.text(), plain.text());
    assert_eq!(server.requests("submit-results"), 1);
    tools.browser().shutdown().await;
}

/// HS-8, HS-1, issue 30 (seam with high-stakes judging): `submit` in the checkout's
/// Address field presses the form's "Place order", so it is asked once, at the Enter, as
/// browser_press Enter there is, in Ask, Auto and Full trust alike. A No leaves the text
/// typed and nothing submitted, and the result says so; a Yes places the order and the
/// result shows it. `submit` in the store's search box asks nothing.
#[tokio::test(flavor = "multi_thread")]
async fn hs_8_submit_is_asked_once_like_enter_and_a_no_submits_nothing() {
    let server = FixtureServer::start().await.unwrap();
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let tools = tools(&setup, asker.clone());
    for (n, mode) in [Mode::Ask, Mode::Auto, Mode::FullTrust]
        .into_iter()
        .enumerate()
    {
        let chat = tools.chat(&format!("submit-{n}"), mode);
        let page = call(
            &chat,
            "browser_open",
            &json!({ "url": server.url("tools-checkout.html") }),
        )
        .await
        .text();
        let address = ref_of(&page, "Address");
        let before = high_stakes(&asker);
        let declined = call(
            &chat,
            "browser_type",
            &json!({ "ref": address, "text": "1 Main St", "submit": true }),
        )
        .await;
        assert!(declined.is_error, "{mode:?}: {}", declined.text());
        for words in ["The text was typed", "nothing was submitted", "declined"] {
            assert!(
                declined.text().contains(words),
                "{mode:?}: {}",
                declined.text()
            );
        }
        assert_eq!(high_stakes(&asker), before + 1, "{mode:?}");
        let asked = asker.asked().last().cloned().expect("a question");
        assert!(
            asked.question.text().contains("Place order"),
            "{}",
            asked.question.text()
        );
        assert_eq!(
            eval(&chat, "document.getElementById('address').value").await,
            json!("1 Main St")
        );
        let submits = |events: Vec<String>| {
            events
                .into_iter()
                .filter(|e| e.starts_with("submit:"))
                .collect::<Vec<_>>()
        };
        assert!(submits(events(&chat).await).is_empty(), "{mode:?}");

        asker.then_other(Choice::Yes);
        let placed = call(
            &chat,
            "browser_type",
            &json!({ "ref": address, "text": "2 Main St", "submit": true }),
        )
        .await;
        assert!(!placed.is_error, "{mode:?}: {}", placed.text());
        assert!(placed.text().contains("Order placed"), "{}", placed.text());
        assert_eq!(high_stakes(&asker), before + 2, "{mode:?}");

        let search = call(
            &chat,
            "browser_type",
            &json!({ "ref": ref_of(&page, "Search the store"), "text": "kettle", "submit": true }),
        )
        .await;
        assert!(!search.is_error, "{mode:?}: {}", search.text());
        assert_eq!(high_stakes(&asker), before + 2, "{mode:?}");
        assert_eq!(
            submits(events(&chat).await),
            vec!["submit:checkout:place", "submit:site-search:search"],
            "{mode:?}"
        );
    }
    tools.browser().shutdown().await;
}

/// A form that deletes an account once its name is typed, and asks "Are you sure" in a
/// confirm of its own on submit.
const DELETE: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Settings</title></head>
<body>
  <h1>Danger zone</h1>
  <form id="close">
    <label>Type your account name to confirm <input id="name" name="name"></label>
    <button id="delete">Delete account</button>
  </form>
  <p id="state">Account open</p>
  <script>
    window.events = [];
    document.getElementById('close').addEventListener('submit', (e) => {
      e.preventDefault();
      const sure = confirm('Are you sure you want to delete your account? This cannot be undone.');
      window.events.push('submit:' + sure);
      if (sure) document.getElementById('state').textContent = 'Account deleted';
    });
  </script>
</body></html>"#;

/// HS-1, DLG-7, issue 30 (one question for one irreversible act): `submit` in a field of
/// a form whose button deletes is asked once, at the Enter; the Yes covers the page's own
/// "Are you sure" confirm that the submit raises, so nothing else is asked, and the result
/// shows the account deleted.
#[tokio::test(flavor = "multi_thread")]
async fn hs_1_submit_that_deletes_is_asked_once_and_covers_the_pages_confirm() {
    let server = FixtureServer::start().await.unwrap();
    server.route("submit-delete.html", Response::html(DELETE));
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::Yes);
    let tools = tools(&setup, asker.clone());
    let chat = tools.chat("delete", Mode::Ask);
    let page = call(
        &chat,
        "browser_open",
        &json!({ "url": server.url("submit-delete.html") }),
    )
    .await
    .text();
    let done = call(
        &chat,
        "browser_type",
        &json!({ "ref": ref_of(&page, "Type your account name"), "text": "ada", "submit": true }),
    )
    .await;
    assert!(!done.is_error, "{}", done.text());
    assert!(done.text().contains("Account deleted"), "{}", done.text());
    assert_eq!(
        asker.kinds(),
        vec![QuestionKind::Site, QuestionKind::HighStakes]
    );
    let question = asker.asked()[1].question.text().to_owned();
    assert!(question.contains("Delete account"), "{question}");
    assert_eq!(events(&chat).await, vec!["submit:true"]);
    tools.browser().shutdown().await;
}

/// The password the vault holds for the sign-in page: a canary that must never show.
const CANARY: &str = "canary-submit-5e1d";

/// A vault with [`CANARY`] saved for every site.
#[derive(Debug)]
struct Saved;

impl SecretFiller for Saved {
    fn secret_for<'a>(&'a self, _: &'a SecretRequest) -> BoxFuture<'a, Option<SecretValue>> {
        Box::pin(async { Some(SecretValue::new(CANARY)) })
    }
}

/// A sign-in form that checks the password on submit and says whether it came.
fn signin_page() -> String {
    let (head, tail) = CANARY.split_at(7);
    format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head>
<body>
  <h1>Sign in to Ledger</h1>
  <form id="signin">
    <label>Email <input id="email" name="email" type="email" autocomplete="username"></label>
    <label>Password <input id="password" name="password" type="password" autocomplete="current-password"></label>
    <button id="go">Sign in</button>
  </form>
  <p id="state">Not signed in</p>
  <script>
    window.events = [];
    const saved = ['{head}', '{tail}'].join('');
    document.getElementById('signin').addEventListener('submit', (e) => {{
      e.preventDefault();
      const ok = document.getElementById('password').value === saved;
      window.events.push('submit:' + ok);
      document.getElementById('state').textContent = ok ? 'Welcome back, you are signed in' : 'Wrong password';
    }});
  </script>
</body></html>"#
    )
}

/// SEC-2, issue 30 (seam with the vault): `submit` on a password field fills the saved
/// password, never the agent's text, then presses Enter there: the form is signed in, in
/// the same call, and the password shows nowhere (the result, the questions, the address).
#[tokio::test(flavor = "multi_thread")]
async fn sec_2_submit_after_a_saved_password_fill_signs_in_and_never_shows_it() {
    let server = FixtureServer::start().await.unwrap();
    server.route("submit-signin.html", Response::html(&signin_page()));
    let setup = setup();
    let asker = Recorder::answering(Choice::ThisChat, Choice::No);
    let plain = tools(&setup, asker.clone());
    let mut config = ToolsConfig::new(asker.clone());
    config.net.allow_localhost = true;
    config.secret_filler = Some(Arc::new(Saved));
    let tools = conch_tools::Tools::new(plain.browser().clone(), config);
    let chat = tools.chat("signin", Mode::Ask);
    let page = call(
        &chat,
        "browser_open",
        &json!({ "url": server.url("submit-signin.html") }),
    )
    .await
    .text();
    let password = ref_of(&page, "Password");
    let done = call(
        &chat,
        "browser_type",
        &json!({ "ref": password, "text": "hunter2", "submit": true }),
    )
    .await;
    assert!(!done.is_error, "{}", done.text());
    let text = done.text();
    assert!(text.contains("Filled the saved password for"), "{text}");
    assert!(text.contains("Welcome back, you are signed in"), "{text}");
    assert!(
        !text.contains(CANARY) && !text.contains("hunter2"),
        "{text}"
    );
    assert_eq!(events(&chat).await, vec!["submit:true"]);
    for asked in asker.asked() {
        assert!(!asked.question.text().contains(CANARY), "{asked:?}");
    }
    assert_eq!(asker.kinds(), vec![QuestionKind::Site]);
    let address = eval(&chat, "location.href").await;
    assert!(!address.to_string().contains(CANARY), "{address}");
    plain.browser().shutdown().await;
}
