//! browser_click: click, double-click, right-click, hover or drag an element by ref. A
//! drag is judged by the words of both ends (HS-4).

use crate::call::How;
use crate::engine::{self, Pointer, Settling};
use crate::error::ToolError;
use crate::result::Reply;
use crate::tool::turn::Turn;

/// Presses `reference` as `how` says; a drag drops on `to`.
pub(crate) async fn run(
    turn: &Turn<'_>,
    reference: &str,
    how: How,
    to: Option<&str>,
) -> Result<Reply, ToolError> {
    let conv = turn.conv();
    let site = turn.site().await?;
    let (element, target) = engine::target(conv, reference).await?;
    let mut facts = turn.facts(site, &target);
    let drop = match (how, to) {
        (How::Drag, Some(to)) => {
            // A drag checks the words of both ends (HS-4).
            let (drop, drop_facts) = engine::target(conv, to).await?;
            if facts.significant_words.is_none() {
                facts.significant_words = turn.significant(&drop_facts.role, &drop_facts.words);
            }
            Some(drop)
        }
        (How::Drag, None) => {
            return Err(ToolError::Usage(
                "A drag needs `to`, the ref of where to drop; call browser_click again with it."
                    .to_owned(),
            ));
        }
        _ => None,
    };
    turn.permit(Some(&element), facts, false).await?;
    let _step = turn.step().await;
    match (how, drop) {
        (How::Drag, Some(drop)) => engine::drag(&element, &drop).await?,
        (How::Double, _) => engine::click(&element, Pointer::Double, Settling::Now).await?,
        (How::Right, _) => engine::click(&element, Pointer::Right, Settling::Now).await?,
        (How::Hover, _) => engine::click(&element, Pointer::Hover, Settling::Now).await?,
        _ => engine::click(&element, Pointer::Click, Settling::Now).await?,
    }
    turn.changed(Vec::new()).await
}
