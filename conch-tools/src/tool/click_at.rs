//! browser_click_at: a click (or hover, or drag) at a point of the last screenshot, then
//! text typed when given (GES-10, GES-12, GES-14). The page's words under the point and
//! the agent's description both decide whether it is significant (HS-5).

use conch_policy::{Point, Refusal, RefusalCode};

use crate::call::How;
use crate::engine::{self, Pointer};
use crate::error::ToolError;
use crate::result::Reply;
use crate::tool::turn::Turn;

/// Where and how browser_click_at presses, as the call gave it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Aim<'a> {
    /// The point, in the last screenshot's pixels.
    pub(crate) at: Point,
    /// How to press.
    pub(crate) how: How,
    /// The drop point, for a drag.
    pub(crate) to: Option<Point>,
    /// Text to type after clicking.
    pub(crate) text: Option<&'a str>,
    /// What the agent says is there.
    pub(crate) description: &'a str,
}

/// Presses at `aim`'s point.
pub(crate) async fn run(turn: &Turn<'_>, aim: Aim<'_>) -> Result<Reply, ToolError> {
    let Some(shot) = turn.last_screenshot() else {
        return Err(Refusal::new(RefusalCode::NoScreenshot).into());
    };
    let conv = turn.conv();
    let site = turn.site().await?;
    let (point, target) = engine::under_point(conv, aim.at, shot).await?;
    let mut facts = turn.facts(site, &target);
    // The page's words decide, and the agent's description too (HS-5).
    if facts.significant_words.is_none() {
        facts.significant_words = turn.significant("", aim.description);
    }
    // The field focused after the click is checked before any key (SEC-6).
    facts.secret_target = false;
    let drag_to = match (aim.how, aim.to) {
        (How::Drag, Some(to)) => {
            let (to_point, to_facts) = engine::under_point(conv, to, shot).await?;
            if facts.significant_words.is_none() {
                facts.significant_words = turn.significant(&to_facts.role, &to_facts.words);
            }
            Some(to_point)
        }
        (How::Drag, None) => {
            return Err(ToolError::Usage(
                "A drag needs to_x and to_y, where to drop; call browser_click_at again with them."
                    .to_owned(),
            ));
        }
        _ => None,
    };
    turn.permit(None, facts, false).await?;
    let _step = turn.step().await;
    let pointer = match aim.how {
        How::Double => Some(Pointer::Double),
        How::Right => Some(Pointer::Right),
        How::Hover => Some(Pointer::Hover),
        _ => None,
    };
    engine::click_at(conv, point, pointer, drag_to, aim.text).await?;
    turn.changed(Vec::new()).await
}
