//! browser_select: picks options of a list by label or value. Choosing is not a commit,
//! so an option's words ("Delete") never ask (issue 30).

use crate::engine::{self, Settling};
use crate::error::ToolError;
use crate::result::Reply;
use crate::tool::turn::Turn;

/// Picks `values` in the list `reference`.
pub(crate) async fn run(
    turn: &Turn<'_>,
    reference: &str,
    values: &[String],
) -> Result<Reply, ToolError> {
    let conv = turn.conv();
    let site = turn.site().await?;
    let (element, target) = engine::target(conv, reference).await?;
    let facts = turn.facts(site, &target);
    turn.permit(Some(&element), facts, false).await?;
    let _step = turn.step().await;
    let picked = engine::select(&element, values, Settling::Now).await?;
    let picked: Vec<String> = picked.iter().map(|p| format!("“{p}”")).collect();
    turn.changed(vec![format!("Chose {}.", picked.join(", "))])
        .await
}
