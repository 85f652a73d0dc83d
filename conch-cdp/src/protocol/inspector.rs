//! The `Inspector` domain: a target's own end (detached, crashed).

use serde::{Deserialize, Serialize};

use super::{Empty, command, event};

/// `Inspector.enable`: turns on [`Detached`] and [`TargetCrashed`] for the session.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Enable {}
command!(Enable, "Inspector.enable", Empty);

/// `Inspector.detached`: the session was detached from its target.
#[derive(Debug, Clone, Deserialize)]
pub struct Detached {
    /// Why, such as `"target_closed"`.
    #[serde(default)]
    pub reason: String,
}
event!(Detached, "Inspector.detached");

/// `Inspector.targetCrashed`: the target crashed. conch-cdp fails the session's pending
/// calls with [`crate::ErrorKind::TargetCrashed`] when it sees this.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct TargetCrashed {}
event!(TargetCrashed, "Inspector.targetCrashed");
