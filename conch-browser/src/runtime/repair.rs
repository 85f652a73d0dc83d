//! Repair (LAUNCH-14): every fix in turn, each with its outcome in a sentence, and the
//! profile wiped only as the last step and only when the person said yes.
//!
//! The steps, in order: end stale browser processes and clear the profile's locks
//! (LAUNCH-6), relaunch (LAUNCH-8), say whether Conch fell back to another browser or
//! downloaded one (LAUNCH-4, LAUNCH-9, BE-4), reconnect the chosen backend (BE-4), then
//! wipe the profile (DATA-4) or leave it.
//!
//! Deliberately absent: asking the person. The caller asks and passes the answer; a
//! repair never wipes on its own.

use super::*;
use crate::process::heal_profile;

/// How one repair step went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepOutcome {
    /// The step did what it says; the sentence says what.
    Done(String),
    /// Nothing needed doing, or the person said no; the sentence says which.
    Skipped(String),
    /// The step failed; the sentence says why and what to try.
    Failed(String),
}

impl StepOutcome {
    /// `done`, `skipped` or `failed`.
    pub fn kind(&self) -> &'static str {
        match self {
            StepOutcome::Done(_) => "done",
            StepOutcome::Skipped(_) => "skipped",
            StepOutcome::Failed(_) => "failed",
        }
    }

    /// The outcome's sentence.
    pub fn sentence(&self) -> &str {
        match self {
            StepOutcome::Done(s) | StepOutcome::Skipped(s) | StepOutcome::Failed(s) => s,
        }
    }
}

/// One step of [`Browser::repair_all`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairStep {
    /// The step's stable id: `end-stale`, `relaunch`, `fallback-or-download`,
    /// `reconnect-backend`, `wipe-profile`.
    pub id: &'static str,
    /// How it went.
    pub outcome: StepOutcome,
}

impl Browser {
    /// Runs every fix in turn and reports each step (LAUNCH-14). The profile is wiped
    /// only as the last step, and only when `wipe_profile` carries the person's yes;
    /// otherwise that step is reported as skipped and the profile is left as it was.
    /// A failed step does not stop the ones after it.
    pub async fn repair_all(&self, wipe_profile: bool) -> Vec<RepairStep> {
        let mut steps = Vec::new();
        if let Err(e) = self.owns_home() {
            let said = e.to_string();
            for id in [
                "end-stale",
                "relaunch",
                "fallback-or-download",
                "reconnect-backend",
                "wipe-profile",
            ] {
                steps.push(RepairStep {
                    id,
                    outcome: StepOutcome::Failed(said.clone()),
                });
            }
            return steps;
        }
        // Every open errand is set aside first, sealed with its tabs, and comes back as it
        // was when its task next browses (LAUNCH-14, ERR-12); the step says so.
        let aside = self.set_errands_aside_for_repair().await;
        let mut ended = self.end_stale().await;
        if let (Some(said), StepOutcome::Done(text) | StepOutcome::Skipped(text)) =
            (aside, &mut ended)
        {
            text.push(' ');
            text.push_str(&said);
        }
        steps.push(RepairStep {
            id: "end-stale",
            outcome: ended,
        });
        let relaunched = self.ensure_running().await;
        let status = self.status().await;
        steps.push(RepairStep {
            id: "relaunch",
            outcome: match &relaunched {
                Ok(()) => StepOutcome::Done(format!(
                    "The browser runs again ({}).",
                    status.version.as_deref().unwrap_or(status.backend)
                )),
                Err(e) => StepOutcome::Failed(e.to_string()),
            },
        });
        let stand_in = lock(&self.inner.backend.stand_in).clone();
        steps.push(RepairStep {
            id: "fallback-or-download",
            outcome: match (&stand_in, &status.download, &status.why) {
                (Some(why), _, _) => StepOutcome::Done(why.clone()),
                (None, Some(_), _) => StepOutcome::Done(
                    "No browser was found, so Conch downloaded Chromium and uses it.".to_owned(),
                ),
                (None, None, Some(why)) if relaunched.is_ok() => StepOutcome::Done(why.clone()),
                _ => StepOutcome::Skipped("No fallback or download was needed.".to_owned()),
            },
        });
        steps.push(RepairStep {
            id: "reconnect-backend",
            outcome: match stand_in {
                None => StepOutcome::Skipped(format!(
                    "The chosen browser ({}) is the one in use.",
                    lock(&self.inner.backend.chosen).backend()
                )),
                Some(_) => match self.repair().await {
                    Ok(_) => match lock(&self.inner.backend.stand_in).clone() {
                        None => StepOutcome::Done(format!(
                            "Conch reconnected to the chosen browser ({}).",
                            lock(&self.inner.backend.chosen).backend()
                        )),
                        Some(why) => StepOutcome::Failed(why),
                    },
                    Err(e) => StepOutcome::Failed(e.to_string()),
                },
            },
        });
        steps.push(RepairStep {
            id: "wipe-profile",
            outcome: if wipe_profile {
                match self.sign_out_everywhere().await {
                    Ok(()) => StepOutcome::Done(
                        "The profile was wiped: every site is signed out, and the browser starts afresh on the next call.".to_owned(),
                    ),
                    Err(e) => StepOutcome::Failed(e.to_string()),
                }
            } else {
                StepOutcome::Skipped(
                    "The profile was left as it was: you chose not to wipe it.".to_owned(),
                )
            },
        });
        tracing::info!(target: "conch_browser", steps = ?steps.iter().map(|s| (s.id, s.outcome.kind())).collect::<Vec<_>>(), "repair ran");
        steps
    }

    /// Sets every open errand aside before the repair; the sentence that says how many,
    /// or `None` when no task had a browser open.
    async fn set_errands_aside_for_repair(&self) -> Option<String> {
        let errands = lock(&self.inner.errand.errands).clone()?;
        let open = errands.inner.state.lock().await.contexts.len();
        errands.set_every_errand_aside().await;
        (open > 0).then(|| {
            format!(
                "{open} task browser(s) set aside; each comes back as it was when its task next browses."
            )
        })
    }

    /// Closes the running browser (its tabs stay saved), then ends any other process still
    /// holding Conch's profile and removes its stale locks (LAUNCH-6).
    async fn end_stale(&self) -> StepOutcome {
        {
            let mut state = self.inner.state.lock().await;
            shut_down(&self.inner, &mut state).await;
        }
        let profile = self.inner.config.home.profile_dir();
        let processes = Arc::clone(&self.inner.config.processes);
        let healed =
            tokio::task::spawn_blocking(move || heal_profile(&profile, processes.as_ref())).await;
        match healed {
            Err(e) => StepOutcome::Failed(format!("The profile could not be checked ({e}).")),
            Ok(report) if !report.is_healed() => {
                let problems: Vec<String> = report
                    .problems
                    .iter()
                    .map(|p| format!("failed to {p}"))
                    .collect();
                StepOutcome::Failed(format!(
                    "Conch {}; close other browsers using Conch's folder and try again.",
                    problems.join(", ")
                ))
            }
            Ok(report) if report.ended.is_empty() && report.removed.is_empty() => {
                StepOutcome::Skipped("No stale browser process or lock was found.".to_owned())
            }
            Ok(report) => StepOutcome::Done(format!(
                "Ended {} stale browser process(es) and removed {} stale lock(s).",
                report.ended.len(),
                report.removed.len()
            )),
        }
    }
}
