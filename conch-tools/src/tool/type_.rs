//! browser_type: replaces a field's contents with the agent's text. A secret field is
//! filled from the person's vault when the embedder has one ([`vault`]: the saved
//! password, or a new strong one on a sign-up form), and the agent's text is never used
//! for it (SEC-2).
//!
//! With `submit`, Enter is pressed in the same field after the text, as Playwright MCP's
//! `submit` does, and the call reads once, after the Enter (issue 30). The Enter is its own
//! act, judged exactly as browser_press Enter on that field is ([`press::permit`], HS-8):
//! asked, when it commits, after the text is in, so a No leaves the text typed and nothing
//! submitted, and the result says so. When the person takes the wheel before the Enter,
//! it is not pressed, and the result says so too (HAND-8).

use conch_policy::{Chord, carries};

use crate::engine::{self, Settling};
use crate::error::ToolError;
use crate::result::Reply;
use crate::tool::turn::Turn;
use crate::tool::{press, vault};

/// What a submit says when the person took the wheel before its Enter (HAND-8).
const PERSON_TOOK_THE_WHEEL: &str = "The text was typed, but Enter was not pressed, so nothing was submitted: the person took the wheel during this call. Your next call waits until they hand it back, and its result shows what they changed.";

/// Types `text` into `reference`, then presses Enter there when `submit`.
pub(crate) async fn run(
    turn: &Turn<'_>,
    reference: &str,
    text: &str,
    submit: bool,
) -> Result<Reply, ToolError> {
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
    let mut lines = Vec::new();
    {
        let _step = turn.step().await;
        match secret {
            Some(secret) => lines.push(vault::fill(&element, &secret).await?),
            None => engine::type_text(&element, text, Settling::Now).await?,
        }
    }
    if submit {
        let enter = Chord::parse("Enter").map_err(|e| ToolError::Page(e.to_string()))?;
        // The text is in: a refusal or a No of the Enter says so (issue 30).
        press::permit(turn, site, enter, Some(&element), &target)
            .await
            .map_err(|e| {
                ToolError::Act(format!(
                    "The text was typed, but Enter was not pressed, so nothing was submitted. {e}"
                ))
            })?;
        // The person took the wheel while the text went in or the Enter was asked about:
        // the Enter would land among their own acts (HAND-8).
        if turn.person_took_the_wheel() {
            return Err(ToolError::Act(PERSON_TOOK_THE_WHEEL.to_owned()));
        }
        let _step = turn.step().await;
        engine::press(conv, "Enter", Some(&element))
            .await
            .map_err(|e| {
                ToolError::Act(format!(
                    "The text was typed, but pressing Enter failed: {e}"
                ))
            })?;
    }
    turn.changed(lines).await
}
