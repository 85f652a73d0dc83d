//! browser_screenshot: the active tab as an image, or described in words for an engine
//! that can't see (TOOL-18). Its size is kept for browser_click_at (GES-12).

use crate::engine;
use crate::error::ToolError;
use crate::result::Reply;
use crate::tool::turn::Turn;

/// Takes a screenshot of the active tab.
pub(crate) async fn run(turn: &Turn<'_>) -> Result<Reply, ToolError> {
    let conv = turn.conv();
    engine::need_tab(conv).await?;
    let (png, size) = turn.pages().screenshot(conv).await?;
    turn.remember_screenshot(size);
    let mut reply = Reply::line(format!(
        "A screenshot of the active tab, {}×{} pixels.",
        size.width, size.height
    ));
    if turn.vision() {
        reply.image = Some(conch_browser::page::base64::encode(&png));
    } else {
        // A model that can't see gets words instead (TOOL-18).
        let words = match &turn.config().image_describer {
            Some(describer) => describer.describe(&png).await,
            None => "This model can't see images, so the picture is not included; read the page with browser_read instead.".to_owned(),
        };
        reply.lines.push(words);
    }
    Ok(reply)
}
