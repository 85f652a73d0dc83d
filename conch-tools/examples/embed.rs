//! Embedding Conch's browser tools in a Rust agent, without MCP.
//!
//! The agent's side is three calls: make [`Tools`] over a [`Browser`] with your own
//! [`Asker`] (here: one that prints each question and allows the site for this chat, and
//! says No to everything else), take a [`Chat`](conch_tools::Chat) per conversation, and
//! call tools by name with JSON arguments, as a model would.
//!
//! Run it with `cargo run -p conch-tools --example embed -- http://127.0.0.1:8000/page.html`
//! (Conch's home is a temporary folder; any local Chromium-family browser is used).

use std::sync::{Arc, Mutex};

use conch_browser::{Browser, BrowserConfig};
use conch_tools::{
    Answer, AskRequest, Asker, BoxFuture, Choice, Mode, QuestionKind, Tools, ToolsConfig,
};
use serde_json::json;

/// An asker that writes each question into the transcript and answers it: This chat for
/// the site question, No for anything more.
#[derive(Debug, Default)]
struct PrintingAsker {
    transcript: Mutex<Vec<String>>,
}

impl Asker for PrintingAsker {
    fn ask<'a>(&'a self, request: &'a AskRequest) -> BoxFuture<'a, Answer> {
        let question = request.question.text().to_owned();
        if let Ok(mut transcript) = self.transcript.lock() {
            transcript.push(format!("Asked: {question}"));
        }
        let choice = match request.question.kind() {
            QuestionKind::Site => Choice::ThisChat,
            _ => Choice::No,
        };
        Box::pin(async move { Answer::Person(choice) })
    }
}

/// Opens `url`, finds the "Add to cart" button and clicks it; gives the transcript.
///
/// # Errors
/// A sentence when the page has no "Add to cart" button.
pub(crate) async fn run(config: BrowserConfig, url: &str) -> Result<String, String> {
    let asker = Arc::new(PrintingAsker::default());
    let mut tools_config = ToolsConfig::new(asker.clone());
    // The example's pages are served on this computer.
    tools_config.net.allow_localhost = true;
    let tools = Tools::new(Browser::new(config), tools_config);
    let chat = tools.chat("example", Mode::Ask);

    let opened = chat.call("browser_open", &json!({ "url": url })).await;
    let mut transcript = vec![opened.text()];
    // A scripted "model": pick the button's ref from the snapshot.
    let reference = opened
        .text()
        .lines()
        .find(|line| line.contains("Add to cart"))
        .and_then(|line| line.split("[ref=").nth(1))
        .and_then(|rest| rest.split(']').next())
        .map(str::to_owned)
        .ok_or_else(|| "The page has no “Add to cart” button.".to_owned())?;
    let clicked = chat
        .call("browser_click", &json!({ "ref": reference }))
        .await;
    if let Ok(asked) = asker.transcript.lock() {
        transcript.extend(asked.iter().cloned());
    }
    transcript.push(clicked.text());
    tools.browser().shutdown().await;
    Ok(transcript.join("\n\n"))
}

#[cfg_attr(test, expect(dead_code, reason = "the tests call run() directly"))]
fn main() {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "http://127.0.0.1:8000/".to_owned());
    let home = std::env::temp_dir().join(format!("conch-embed-{}", std::process::id()));
    let config = BrowserConfig::new(conch_browser::Home::new(home));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build();
    match runtime.map(|rt| rt.block_on(run(config, &url))) {
        Ok(Ok(transcript)) => println!("{transcript}"),
        Ok(Err(sentence)) => eprintln!("{sentence}"),
        Err(e) => eprintln!("The async runtime could not start: {e}"),
    }
}
