//! browser_read: one part of the page's snapshot, or the parts holding some words.

use crate::error::ToolError;
use crate::result::Reply;
use crate::tool::turn::Turn;

/// Reads part `part` (from 1) of the active tab's page, or finds `find` on it.
pub(crate) async fn run(
    turn: &Turn<'_>,
    part: Option<u32>,
    find: Option<&str>,
) -> Result<Reply, ToolError> {
    let conv = turn.conv();
    let pages = turn.pages();
    match find {
        Some(needle) => match pages.find(conv, needle).await? {
            Some(body) => Ok(Reply::page(body)),
            None => Ok(Reply::line(format!(
                "“{needle}” is not on the page; read it with browser_read, or look for other words."
            ))),
        },
        None => Ok(Reply::page(
            pages.read_part(conv, part.unwrap_or(1) as usize).await?,
        )),
    }
}
