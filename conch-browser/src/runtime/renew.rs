//! Keeping a cloud session in use alive past its provider's lifetime (BE-7). Steel's
//! cloud ends a session `timeout` after it started, whatever its client does: the time is
//! fixed when the session is made and its API has no call that extends it (only create
//! and release). So Conch renews it itself: a few minutes before the end, at a moment when
//! no conversation's call runs, it reads the session's cookies, makes a successor session
//! that starts with them (Steel's `sessionContext.cookies`), releases the old one, and the
//! tabs reopen in the successor on their conversations' next calls (LAUNCH-8). An idle
//! session is not renewed: it is let go after the idle time (BE-5).
//!
//! Deliberately absent: local storage and open forms, which a successor does not get.

use serde_json::json;

use super::*;

/// How long before a cloud session's end Conch renews it.
pub(super) const RENEW_BEFORE: Duration = Duration::from_secs(5 * 60);

/// Whether the running browser is a cloud session that ends within [`RENEW_BEFORE`] of
/// `now`.
pub(super) fn due(state: &State, now: SystemTime) -> bool {
    let Some(running) = state.running.as_ref() else {
        return false;
    };
    let Some(lifetime) = running.held.lifetime() else {
        return false;
    };
    let ends = running.since + lifetime;
    now + RENEW_BEFORE >= ends
}

impl Browser {
    /// Renews the running cloud session now if no conversation's call runs (else the
    /// next tick tries again): its cookies go into a successor session, which replaces it.
    pub(super) async fn renew_cloud_session(&self) {
        // Every conversation's turn is held meanwhile, so no call is cut off and none
        // starts until the successor is there.
        let turns: Vec<Arc<Mutex<()>>> = lock(&self.inner.talks.conversation_locks)
            .values()
            .cloned()
            .collect();
        let mut held = Vec::with_capacity(turns.len());
        for turn in turns {
            match turn.try_lock_owned() {
                Ok(guard) => held.push(guard),
                Err(_) => return,
            }
        }
        let mut state = self.inner.state.lock().await;
        let now = self.inner.config.clock.now();
        if !due(&state, now) {
            return;
        }
        let Some(running) = state.running.as_ref() else {
            return;
        };
        let cookies = match running
            .connection
            .browser()
            .call_raw("Storage.getCookies", json!({}))
            .await
        {
            Ok(jar) => jar["cookies"].as_array().cloned().unwrap_or_default(),
            Err(e) => {
                tracing::warn!(target: "conch_browser", error = %e, "the cloud session's cookies could not be read to renew it; it is renewed signed out");
                Vec::new()
            }
        };
        let chosen = Arc::clone(&lock(&self.inner.backend.chosen));
        chosen.carry_cookies(cookies);
        tracing::info!(target: "conch_browser", "the cloud session ends soon: renewing it");
        let last_activity = state.last_activity;
        shut_down(&self.inner, &mut state).await;
        let renewed = self.ensure_running_locked(&mut state).await;
        // Renewing is not the agent's use: the idle time runs on from its last call.
        state.last_activity = last_activity;
        if let Err(e) = renewed {
            tracing::warn!(target: "conch_browser", error = %e, "the cloud session could not be renewed; the next call tries again");
        }
        drop(state);
        drop(held);
    }
}
