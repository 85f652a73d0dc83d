//! browser_handoff: the person takes the wheel (HAND-1 … HAND-9). The person is told
//! through the embedder's [`Notifier`](crate::Notifier) (with the link that opens the
//! browser, HAND-7), the step waits until the handoff ends (by itself at a gate, by I'm
//! done, or by Stop), then says what happened and shows the page as the person left it.
//! Where nobody can take over (no notifier: no live view, no visible window) it says so
//! at once instead of waiting for no one.

use conch_browser::handoff::{HandoffEnd, LOOK_EVERY, hand_off};
use conch_browser::page::gate::look;

use conch_browser::protocol::BrowserHandoff;

use crate::embedder::Notification;
use crate::error::ToolError;
use crate::live;
use crate::result::Reply;
use crate::tool::turn::Turn;

/// What the agent reads when nobody can take over.
pub(crate) const NO_ONE: &str = "No one can take over right now (there is no live view, or this run is unattended), so carry on without a handoff or tell the person in your reply what they need to do.";

/// Hands the browser to the person for `reason` and waits for the handoff to end.
pub(crate) async fn run(turn: &Turn<'_>, reason: &str) -> Result<Reply, ToolError> {
    let Some(notifier) = turn.config().notifier.as_ref() else {
        return Err(ToolError::Usage(NO_ONE.to_owned()));
    };
    let conv = turn.conv();
    let page = conv.page().await?;
    let gate = look(&page).await.is_ok_and(|seen| seen.is_gate());
    let conversation = turn.conversation_id().to_owned();
    let body = if gate {
        format!("{reason} Conch carries on by itself once you are through.")
    } else {
        format!("{reason} Press I'm done when you have finished.")
    };
    notifier.notify(&Notification {
        link: turn.config().panel_link_for(&conversation),
        conversation,
        title: "Conch needs you in the browser".to_owned(),
        body,
        action: "Take over",
        gate,
    });
    let sink = turn.config().events.as_ref();
    live::handoff(
        conv,
        sink,
        BrowserHandoff {
            reason: reason.to_owned(),
            auto: gate,
            outcome: None,
        },
    );
    let handed = hand_off(conv, reason, LOOK_EVERY).await?;
    let outcome = match handed.end {
        HandoffEnd::GotThrough => "gotThrough",
        HandoffEnd::Done => "handedBack",
        HandoffEnd::Stopped => "stopped",
        HandoffEnd::AgentLeft => "agentLeft",
    };
    live::handoff(
        conv,
        sink,
        BrowserHandoff {
            reason: reason.to_owned(),
            auto: handed.end.auto(),
            outcome: Some(outcome.to_owned()),
        },
    );
    // The handoff's own sentence says the person drove; the wheel's note would repeat it.
    let _ = conv.wheel().take_notes();
    let sentence = match handed.end {
        HandoffEnd::GotThrough => {
            "You got through, so Conch carried on: the person finished at the gate and Conch took the wheel back. The page as they left it:"
        }
        HandoffEnd::Done => {
            "The person pressed I'm done and handed the browser back. The page as they left it:"
        }
        HandoffEnd::AgentLeft => {
            return Ok(Reply::line(
                "The handoff ended because this session closed; nobody waits for it any more.",
            ));
        }
        HandoffEnd::Stopped => {
            return Ok(Reply::line(
                "Stopped: the person pressed Stop during the handoff, so end your turn here.",
            ));
        }
    };
    let mut reply = Reply::page(turn.pages().read_part(conv, 1).await?);
    reply.lines.push(sentence.to_owned());
    Ok(reply)
}
