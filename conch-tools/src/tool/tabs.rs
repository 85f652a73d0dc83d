//! browser_tabs: the conversation's own tabs: list them, open one with an address or a
//! search (TAB-8), switch to one, close one (TAB-9).

use crate::call::TabAction;
use crate::error::ToolError;
use crate::result::{PageBody, Reply};
use crate::tool::turn::Turn;

/// Does `action` on the conversation's tabs; `url` or `search` for open, `tab` for
/// switch and close.
pub(crate) async fn run(
    turn: &Turn<'_>,
    action: TabAction,
    url: Option<&str>,
    search: Option<&str>,
    tab: Option<&str>,
) -> Result<Reply, ToolError> {
    let conv = turn.conv();
    match action {
        TabAction::List => {
            let tabs = conv.tabs().await?;
            if tabs.is_empty() {
                return Ok(Reply::line(
                    "No tabs are open yet; open one with browser_open.",
                ));
            }
            let listed: Vec<String> = tabs
                .iter()
                .map(|t| {
                    let active = if t.active { " (active)" } else { "" };
                    format!("{}{active}: {} — {}", t.id, t.title, t.url)
                })
                .collect();
            let mut reply = Reply::line(format!("{} tab(s) open.", tabs.len()));
            reply.page = Some(PageBody::bounded(&listed.join("\n")));
            Ok(reply)
        }
        TabAction::Open => {
            let address = match (url, search) {
                (Some(url), _) => url.to_owned(),
                (None, Some(words)) => search_address(&turn.config().search_url, words),
                (None, None) => {
                    return Err(ToolError::Usage(
                        "browser_tabs open needs a url or search words; call it again with one."
                            .to_owned(),
                    ));
                }
            };
            let url = turn.check_address(&address)?;
            let opened = conv.new_tab(url.as_str()).await?;
            let notes = turn.after_open().await;
            let mut reply = Reply::page(turn.pages().first_look(conv).await?);
            reply.lines = notes;
            reply
                .lines
                .insert(0, format!("Opened a new tab, {}.", opened.id));
            Ok(reply)
        }
        TabAction::Switch => {
            let tab = tab.ok_or_else(|| {
                ToolError::Usage(
                    "browser_tabs switch needs a tab, e.g. t2; list them with browser_tabs list."
                        .to_owned(),
                )
            })?;
            conv.switch(tab).await?;
            Ok(Reply::page(turn.pages().read_part(conv, 1).await?))
        }
        TabAction::Close => {
            let tab = tab.ok_or_else(|| {
                ToolError::Usage(
                    "browser_tabs close needs a tab, e.g. t2; list them with browser_tabs list."
                        .to_owned(),
                )
            })?;
            conv.close(tab).await?;
            Ok(Reply::line(format!("Closed {tab}.")))
        }
    }
}

/// The search engine's address for `words` (TAB-8): `%s` in `search_url` becomes them.
fn search_address(search_url: &str, words: &str) -> String {
    let encoded: String = url::form_urlencoded::byte_serialize(words.as_bytes()).collect();
    search_url.replace("%s", &encoded)
}
