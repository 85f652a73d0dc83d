//! browser_type: replaces a field's contents with the agent's text. A secret field is
//! filled from the person's vault when the embedder has one ([`vault`]: the saved
//! password, or a new strong one on a sign-up form), and the agent's text is never used
//! for it (SEC-2).

use crate::engine::{self, Settling};
use crate::error::ToolError;
use crate::result::Reply;
use crate::tool::turn::Turn;
use crate::tool::vault;
use conch_policy::carries;

/// Types `text` into `reference`.
pub(crate) async fn run(turn: &Turn<'_>, reference: &str, text: &str) -> Result<Reply, ToolError> {
    let conv = turn.conv();
    let site = turn.site().await?;
    let (element, target) = engine::target(conv, reference).await?;
    let mut facts = turn.facts(site.clone(), &target);
    let secret = if facts.secret_target {
        vault::ask(turn, &site, &element, &target).await
    } else {
        None
    };
    if secret.is_some() {
        // Filled from the vault: the agent's text is never used (SEC-2).
        facts.secret_target = false;
    }
    turn.permit(Some(&element), facts, carries(&[text])).await?;
    let _step = turn.step().await;
    match secret {
        Some(secret) => {
            let sentence = vault::fill(&element, &secret).await?;
            turn.changed(vec![sentence]).await
        }
        None => {
            engine::type_text(&element, text, Settling::Now).await?;
            turn.changed(Vec::new()).await
        }
    }
}
