//! browser_back: one step back in the active tab's history.

use crate::engine;
use crate::error::ToolError;
use crate::result::Reply;
use crate::tool::turn::Turn;

/// Goes back one page in the active tab.
pub(crate) async fn run(turn: &Turn<'_>) -> Result<Reply, ToolError> {
    let conv = turn.conv();
    engine::need_tab(conv).await?;
    let _step = turn.step().await;
    if !engine::back(conv).await? {
        return Ok(Reply::line(
            "There is no earlier page in this tab; open an address with browser_open.",
        ));
    }
    turn.changed(Vec::new()).await
}
