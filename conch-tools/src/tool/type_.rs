//! browser_type: replaces a field's contents with the agent's text. A secret field is
//! filled from the person's vault when the embedder has one, and the agent's text is never
//! used for it (SEC-2).

use crate::embedder::SecretRequest;
use crate::engine::{self, Settling};
use crate::error::ToolError;
use crate::result::Reply;
use crate::tool::turn::Turn;
use conch_policy::carries;

/// Types `text` into `reference`.
pub(crate) async fn run(turn: &Turn<'_>, reference: &str, text: &str) -> Result<Reply, ToolError> {
    let conv = turn.conv();
    let site = turn.site().await?;
    let (element, target) = engine::target(conv, reference).await?;
    let mut facts = turn.facts(site.clone(), &target);
    let secret = match (facts.secret_target, &turn.config().secret_filler) {
        (true, Some(filler)) => {
            let request = SecretRequest {
                conversation: turn.conversation_id().to_owned(),
                site: site.clone(),
                url: engine::current_url(conv).await.unwrap_or_default(),
                field: target.field.clone(),
            };
            let value = filler.secret_for(&request).await;
            if value.is_some() {
                // Filled from the vault: the agent's text is never used (SEC-2).
                facts.secret_target = false;
            }
            value
        }
        _ => None,
    };
    turn.permit(Some(&element), facts, carries(&[text])).await?;
    let _step = turn.step().await;
    match secret {
        Some(secret) => {
            engine::fill_secret(&element, secret.expose()).await?;
            turn.changed(vec![
                "Filled that field from the person's saved passwords; its value is not shown."
                    .to_owned(),
            ])
            .await
        }
        None => {
            engine::type_text(&element, text, Settling::Now).await?;
            turn.changed(Vec::new()).await
        }
    }
}
