//! browser_handoff: without the live view no one can take over, and the sentence says
//! what the agent does instead.

use crate::error::ToolError;
use crate::result::Reply;

/// Hands the browser to the person, which can't happen without the live view.
pub(crate) fn run() -> Result<Reply, ToolError> {
    Err(ToolError::Usage(
        "No one can take over right now: the live view isn't running, so carry on without a handoff or tell the person in your reply what they need to do.".to_owned(),
    ))
}
