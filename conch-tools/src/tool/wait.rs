//! browser_wait: a short pause, or until some words appear or go away, never longer than
//! [`MAX_WAIT`] (AMB-6).

use std::time::Duration;

use crate::engine;
use crate::error::ToolError;
use crate::result::Reply;
use crate::tool::turn::Turn;

/// The longest browser_wait waits (AMB-6).
pub const MAX_WAIT: Duration = Duration::from_secs(30);

/// Waits for `text` to appear or `gone` to go away, at most `seconds`; with neither,
/// just waits.
pub(crate) async fn run(
    turn: &Turn<'_>,
    text: Option<&str>,
    gone: Option<&str>,
    seconds: Option<f64>,
) -> Result<Reply, ToolError> {
    let conv = turn.conv();
    engine::need_tab(conv).await?;
    let bound = |default: f64| {
        Duration::from_secs_f64(
            seconds
                .unwrap_or(default)
                .clamp(0.0, MAX_WAIT.as_secs_f64()),
        )
    };
    let mut reply = if text.is_none() && gone.is_none() {
        let within = bound(1.0);
        tokio::time::sleep(within).await;
        Reply::line(format!("Waited {} s.", within.as_secs_f64().round()))
    } else {
        let within = bound(10.0);
        let met = engine::wait_for_text(conv, text, gone, within).await?;
        let what = match (text, gone) {
            (Some(t), _) => format!("“{t}” to appear"),
            (None, Some(g)) => format!("“{g}” to go away"),
            (None, None) => "the page".to_owned(),
        };
        if met {
            Reply::line(format!("Done waiting for {what}."))
        } else {
            Reply::line(format!(
                "Waited {} s for {what}, and it didn't happen; read the page or wait again.",
                within.as_secs_f64().round()
            ))
        }
    };
    reply.page = turn.pages().changes(conv).await?;
    Ok(reply)
}
