//! browser_open: judges the address before anything starts (NET-6), opens it in the
//! active tab (or a first one) and gives the first look at the page (SNAP-6).

use crate::error::ToolError;
use crate::result::Reply;
use crate::tool::turn::Turn;

/// Opens `url` in the conversation's active tab.
pub(crate) async fn run(turn: &Turn<'_>, url: &str) -> Result<Reply, ToolError> {
    let conv = turn.conv();
    let pages = turn.pages();
    let url = turn.check_address(url)?;
    let _step = turn.step().await;
    let tab = conv.open(url.as_str()).await?;
    pages.forget(&tab.id).await;
    let notes = turn.after_open().await;
    let mut reply = Reply::page(pages.first_look(conv).await?);
    reply.lines = notes;
    Ok(reply)
}
