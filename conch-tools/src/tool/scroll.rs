//! browser_scroll: the page or one element, up or down, by whole screens.

use crate::call::Direction;
use crate::engine;
use crate::error::ToolError;
use crate::result::Reply;
use crate::tool::turn::Turn;

/// Scrolls `reference` (else the page) `amount` screens in `direction`.
pub(crate) async fn run(
    turn: &Turn<'_>,
    direction: Direction,
    reference: Option<&str>,
    amount: f64,
) -> Result<Reply, ToolError> {
    let conv = turn.conv();
    engine::need_tab(conv).await?;
    let element = match reference {
        Some(reference) => Some(engine::target(conv, reference).await?.0),
        None => None,
    };
    let _step = turn.step().await;
    let times = amount.round().clamp(1.0, 10.0) as u32;
    engine::scroll(conv, direction == Direction::Up, element.as_ref(), times).await?;
    turn.changed(Vec::new()).await
}
