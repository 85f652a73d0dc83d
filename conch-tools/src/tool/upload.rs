//! browser_upload: puts files into a file box. The files are judged first by the upload
//! rules (where each comes from and really leads, UP-2, UP-3, UP-8, UP-13), then the act
//! by the permit flow, whose card names them (UP-9).

use std::path::PathBuf;

use crate::engine;
use crate::error::ToolError;
use crate::result::Reply;
use crate::tool::turn::Turn;
use crate::upload;

/// Puts `files` into the file box `reference`.
pub(crate) async fn run(
    turn: &Turn<'_>,
    reference: &str,
    files: &[String],
) -> Result<Reply, ToolError> {
    let conv = turn.conv();
    let site = turn.site().await?;
    let checked = upload::check(
        &turn.config().chat_files,
        turn.home(),
        turn.conversation_id(),
        files,
    )?;
    let (element, target) = engine::target(conv, reference).await?;
    let mut facts = turn.facts(site, &target);
    facts.secret_target = false;
    facts.uploads = checked.iter().map(|f| f.facts.item()).collect();
    turn.permit(Some(&element), facts, false).await?;
    let _step = turn.step().await;
    let paths: Vec<PathBuf> = checked.iter().map(|f| f.facts.resolved.clone()).collect();
    let held = engine::upload(&element, &paths).await?;
    let count = held.len();
    turn.changed(vec![format!(
        "The file box now holds {count} file{}.",
        if count == 1 { "" } else { "s" }
    )])
    .await
}
