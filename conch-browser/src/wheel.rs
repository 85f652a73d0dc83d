//! Who has the wheel of one conversation's browser: the agent, or the person (HAND-1,
//! HAND-5, HAND-8, HAND-9, TAB-10, LIVE-13).
//!
//! A [`Wheel`] is shared by the conversation's agent side (conch-tools) and the person's
//! side (the live view, or a person at a headed window). The person takes over and hands
//! back; while they drive, or while a handoff waits for them, the agent's next call waits
//! ([`Wheel::agents_turn`], HAND-8) instead of failing. What the person did that the agent
//! must know (they drove, switched tabs, used find) becomes one note for the agent's next
//! result.
//!
//! The person's input passes through here only as "there was input now"
//! ([`Wheel::person_input`]), never as what was typed or where: that is what a gate
//! handoff needs to know to never take the wheel back mid-typing (HAND-4, SEC-7).
//!
//! The wheel is also where the two sides meet for the live view: the agent's side
//! publishes what it does ([`Activity`]: its pointer, its steps, its handoffs) and the
//! person's side subscribes ([`Wheel::activity`], LIVE-5, LIVE-6); the person's Stop
//! interrupts the agent's call in flight ([`Wheel::interrupt`], LIVE-14); the agent's side
//! marks its steps so find can be refused mid-step ([`Wheel::agent_step`], LIVE-12); the
//! panel's size shapes the conversation's viewport ([`Wheel::set_panel`], LIVE-4).
//!
//! Deliberately absent: the input itself, the screencast and the commands (conch-live),
//! and the watching of a gate (`handoff`).

use crate::sync::lock;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use conch_policy::Size;
use tokio::sync::{broadcast, oneshot, watch};
use tokio::time::Instant;

use crate::protocol::{BrowserHandoff, BrowserStep};

/// How many activities a slow live view may fall behind before it skips to the newest.
const ACTIVITY_BUFFER: usize = 64;

/// How many of the agent's latest steps the wheel keeps for a panel opened mid-task
/// (issue 28): their captions and thumbnails' names, never the pictures.
pub const STEPS_KEPT: usize = 50;

/// What the agent's side did, for whoever watches the conversation live.
#[derive(Debug, Clone, PartialEq)]
pub enum Activity {
    /// The agent's pointer acted at a point of the page's viewport, in CSS pixels (LIVE-5).
    Cursor {
        /// Viewport x.
        x: f64,
        /// Viewport y.
        y: f64,
        /// What the pointer did: `click`, `hover`, `drag`, `type`, `select`…
        kind: String,
        /// What the agent is doing, for a person ("Typing in Search").
        caption: String,
    },
    /// One step of the agent, for the transcript card (LIVE-6).
    Step(BrowserStep),
    /// A handoff opened or ended (HAND-1, HAND-6).
    Handoff(BrowserHandoff),
}

/// Where the wheel stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WheelState {
    /// The person has taken over (pointer, keys or an explicit take over).
    pub person_drives: bool,
    /// A handoff waits for the person, with the agent's reason.
    pub handoff: Option<String>,
    /// How the last handoff ended, once it has (read by the waiting step).
    pub ended: Option<HandEnd>,
    /// The agent (its MCP client) went away: nothing waits for the person any more.
    pub agent_left: bool,
    /// How many of the agent's calls are in flight, waiting for the wheel or running
    /// (issue 28): the conversation's turn runs while any is, so the panel shows Stop.
    pub calls: u32,
}

/// How the person ended a handoff from their side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandEnd {
    /// They pressed I'm done (hand back) (HAND-5).
    Done,
    /// They pressed Stop (HAND-9).
    Stopped,
    /// The agent went away (its MCP client closed or its session ended): the call that
    /// waited is over, so the handoff is too.
    AgentLeft,
}

/// One conversation's wheel. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct Wheel {
    state: watch::Sender<WheelState>,
    last_input: Mutex<Option<Instant>>,
    notes: Mutex<PersonNotes>,
    activity: broadcast::Sender<Activity>,
    /// How many times the person pressed Stop (LIVE-14): a call compares before and after.
    interrupts: watch::Sender<u64>,
    /// Agent steps running now (LIVE-12).
    stepping: AtomicU64,
    /// Whether the conversation has browsed yet, for the open-the-panel flag (LIVE-7).
    browsed: AtomicBool,
    /// The panel's most recent size, which shapes the viewport (LIVE-4, AMB-11).
    panel: Mutex<Option<Size>>,
    /// The latest [`STEPS_KEPT`] steps, oldest first, for a panel opened mid-task.
    steps: Mutex<VecDeque<BrowserStep>>,
    /// The turn of the step told last: the next step waits for it, so steps reach the
    /// live view in the order they were taken, though each one's thumbnail is made in
    /// the background (LIVE-6).
    last_turn: Mutex<Option<oneshot::Receiver<()>>>,
    /// When the agent's last call ended, for [`Wheel::agent_idle_for`].
    last_call_end: Mutex<Option<Instant>>,
}

/// What the person did that the agent's next result says.
#[derive(Debug, Default)]
struct PersonNotes {
    drove: bool,
    switched_to: Option<String>,
    found: bool,
    left: bool,
}

impl Default for Wheel {
    fn default() -> Self {
        Wheel {
            state: watch::Sender::new(WheelState::default()),
            last_input: Mutex::new(None),
            notes: Mutex::new(PersonNotes::default()),
            activity: broadcast::Sender::new(ACTIVITY_BUFFER),
            interrupts: watch::Sender::new(0),
            stepping: AtomicU64::new(0),
            browsed: AtomicBool::new(false),
            panel: Mutex::new(None),
            steps: Mutex::new(VecDeque::new()),
            last_turn: Mutex::new(None),
            last_call_end: Mutex::new(None),
        }
    }
}

/// Marks an agent's call in flight while it lives (issue 28); from [`Wheel::agent_call`].
#[derive(Debug)]
pub struct CallMark<'a>(&'a Wheel);

impl Drop for CallMark<'_> {
    fn drop(&mut self) {
        *lock(&self.0.last_call_end) = Some(Instant::now());
        self.0
            .state
            .send_modify(|s| s.calls = s.calls.saturating_sub(1));
    }
}

/// Marks an agent step while it lives (LIVE-12); from [`Wheel::agent_step`].
#[derive(Debug)]
pub struct StepMark<'a>(&'a Wheel);

impl Drop for StepMark<'_> {
    fn drop(&mut self) {
        self.0.stepping.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Wheel {
    /// Where the wheel stands now.
    pub fn state(&self) -> WheelState {
        self.state.borrow().clone()
    }

    /// A receiver that sees every change (the live view's status, a waiting step).
    pub fn watch(&self) -> watch::Receiver<WheelState> {
        self.state.subscribe()
    }

    /// The person takes the wheel (their first pointer or key input, or Take over).
    pub fn take_over(&self) {
        self.state.send_modify(|s| s.person_drives = true);
        lock(&self.notes).drove = true;
    }

    /// The person hands the wheel back. During a handoff this is "I'm done" (HAND-5): the
    /// handoff ends and the agent carries on.
    pub fn hand_back(&self) {
        self.state.send_modify(|s| {
            s.person_drives = false;
            if s.handoff.take().is_some() {
                s.ended = Some(HandEnd::Done);
            }
        });
    }

    /// Every window the person drove from went away mid-takeover and none came back
    /// within the grace (LIVE-8): the wheel goes back to the agent, whose next result says
    /// so. Never called during a handoff, which only the person ends (HAND-5).
    pub fn person_left(&self) {
        self.state.send_modify(|s| s.person_drives = false);
        lock(&self.notes).left = true;
    }

    /// The page under the person's hands is gone and could not be reopened anywhere (its
    /// browser died and none stands in, BE-4): the wheel goes back to the agent's side,
    /// so the agent's waiting call goes on and hears why, never a "person has the wheel"
    /// over no page. A waiting handoff stays open: only the person ends it (HAND-5).
    /// Gives whether the person had the wheel.
    pub fn page_gone(&self) -> bool {
        let mut had = false;
        self.state.send_modify(|s| {
            had = s.person_drives && s.handoff.is_none();
            if had {
                s.person_drives = false;
            }
        });
        had
    }

    /// The person pressed Stop: a waiting handoff ends "stopped" (HAND-9) and the wheel
    /// goes back to the agent's side, whose turn the embedder interrupts (LIVE-14).
    pub fn stop(&self) {
        self.state.send_modify(|s| {
            s.person_drives = false;
            if s.handoff.take().is_some() {
                s.ended = Some(HandEnd::Stopped);
            }
        });
    }

    /// The person's input reached the page just now. Only the moment is kept, never the
    /// input (SEC-7).
    pub fn person_input(&self) {
        *lock(&self.last_input) = Some(Instant::now());
        lock(&self.notes).drove = true;
    }

    /// How long since the person's last input, or `None` when there was none.
    pub fn since_person_input(&self) -> Option<Duration> {
        lock(&self.last_input).map(|at| at.elapsed())
    }

    /// The person made `tab` the active tab from the live view (TAB-10).
    pub fn person_switched_tab(&self, tab: &str) {
        lock(&self.notes).switched_to = Some(tab.to_owned());
    }

    /// The person used find, which scrolls the page (LIVE-13).
    pub fn person_used_find(&self) {
        lock(&self.notes).found = true;
    }

    /// Whether the person drove or used find since the agent's last result (SNAP-7): the
    /// page may have changed under their hands. Reading does not take the notes.
    pub fn person_touched(&self) -> bool {
        let notes = lock(&self.notes);
        notes.drove || notes.found
    }

    /// What the person did since the agent's last result, as sentences, once.
    pub fn take_notes(&self) -> Vec<String> {
        let notes = std::mem::take(&mut *lock(&self.notes));
        let mut out = Vec::new();
        if notes.drove {
            out.push(
                "The person used the browser since your last step, so the page may have changed: read it before acting."
                    .to_owned(),
            );
        }
        if let Some(tab) = notes.switched_to {
            out.push(format!("The person switched to tab {tab}."));
        }
        if notes.found {
            out.push("The person used find on the page, which may have scrolled it.".to_owned());
        }
        if notes.left {
            out.push(
                "The person's live view closed while they had the wheel, so the browser came back to you."
                    .to_owned(),
            );
        }
        out
    }

    /// Publishes what the agent's side did to whoever watches live; nobody watching costs
    /// nothing.
    /// A step is also kept (the latest [`STEPS_KEPT`]) for a panel opened later.
    pub fn publish(&self, activity: Activity) {
        // Kept and sent under one lock, so a joining watcher sees each step once.
        let mut steps = lock(&self.steps);
        if let Activity::Step(step) = &activity {
            if steps.len() == STEPS_KEPT {
                steps.pop_front();
            }
            steps.push_back(step.clone());
        }
        let _ = self.activity.send(activity);
    }

    /// What the agent's side does from now on (the live view). A receiver that falls more
    /// than 64 behind skips to the newest.
    pub fn activity(&self) -> broadcast::Receiver<Activity> {
        self.activity.subscribe()
    }

    /// A step's place in line, taken when the step is done: [`StepTurn::wait`] returns
    /// once every step taken before it was told (or given up), and dropping the turn lets
    /// the next one go (LIVE-6).
    pub fn step_turn(&self) -> StepTurn {
        let (done, next) = oneshot::channel();
        let before = lock(&self.last_turn).replace(next);
        StepTurn {
            before,
            _done: done,
        }
    }

    /// The steps so far (the latest [`STEPS_KEPT`], oldest first) and what the agent's
    /// side does from now on, with no step in both and none between (issue 28): what a
    /// panel opened mid-task shows first.
    pub fn activity_with_steps(&self) -> (Vec<BrowserStep>, broadcast::Receiver<Activity>) {
        let steps = lock(&self.steps);
        (steps.iter().cloned().collect(), self.activity.subscribe())
    }

    /// Whether someone watches the conversation live, so a step's thumbnail is worth its
    /// screenshot.
    pub fn watched(&self) -> bool {
        self.activity.receiver_count() > 0
    }

    /// The person pressed Stop: the agent's call in flight ends (LIVE-14), as does a
    /// waiting handoff (HAND-9).
    pub fn interrupt(&self) {
        self.interrupts.send_modify(|n| *n += 1);
        self.stop();
    }

    /// How many times Stop was pressed so far; give it to [`Wheel::interrupted_after`].
    pub fn interrupts(&self) -> u64 {
        *self.interrupts.borrow()
    }

    /// Resolves once Stop is pressed after `seen` (from [`Wheel::interrupts`]).
    pub async fn interrupted_after(&self, seen: u64) {
        let mut rx = self.interrupts.subscribe();
        // The sender lives as long as `self`.
        let _ = rx.wait_for(|n| *n > seen).await;
    }

    /// Marks an agent's call in flight until the mark is dropped, whether it waits for the
    /// wheel, runs, or waits for the person (a handoff, a question): watchers see
    /// [`WheelState::calls`] change, and the panel shows Stop only meanwhile (issue 28).
    pub fn agent_call(&self) -> CallMark<'_> {
        self.state.send_modify(|s| s.calls += 1);
        CallMark(self)
    }

    /// How long no call of the agent has been in flight: `None` while one is, the
    /// longest time when none ever was (an embedder that marks no calls). Work the
    /// browser can put off (the blank window kept after a first load, issue 31) waits
    /// for a pause, so it does not slow the agent's next step.
    pub fn agent_idle_for(&self) -> Option<Duration> {
        if self.state.borrow().calls > 0 {
            return None;
        }
        Some(lock(&self.last_call_end).map_or(Duration::MAX, |end| end.elapsed()))
    }

    /// Marks an agent step until the mark is dropped, so the person's find is refused
    /// meanwhile (LIVE-12).
    pub fn agent_step(&self) -> StepMark<'_> {
        self.stepping.fetch_add(1, Ordering::SeqCst);
        StepMark(self)
    }

    /// Whether an agent step runs now (LIVE-12).
    pub fn agent_busy(&self) -> bool {
        self.stepping.load(Ordering::SeqCst) > 0
    }

    /// `true` the first time it is asked, then `false`: the conversation's first event
    /// opens the panel (LIVE-7).
    pub fn first_browse(&self) -> bool {
        !self.browsed.swap(true, Ordering::SeqCst)
    }

    /// The panel reported its size: the most recent size wins (LIVE-4, AMB-11).
    pub fn set_panel(&self, panel: Size) {
        *lock(&self.panel) = Some(panel);
    }

    /// The panel's most recent size, if one was reported.
    pub fn panel(&self) -> Option<Size> {
        *lock(&self.panel)
    }

    /// The viewport the conversation's pages get: the panel's shape, or 1280×800 with no
    /// panel (LIVE-4, AMB-11).
    pub fn viewport(&self) -> Size {
        conch_policy::viewport_for_panel(*lock(&self.panel))
    }

    /// Opens a handoff for `reason` (HAND-1); the step then waits for its end.
    pub(crate) fn open_handoff(&self, reason: &str) {
        self.state.send_modify(|s| {
            s.handoff = Some(reason.to_owned());
            s.ended = None;
            s.agent_left = false;
        });
    }

    /// The agent went away (its MCP client closed, or its session ended or was deleted):
    /// a waiting handoff ends at once, the person's takeover with it (nobody waits for
    /// the wheel any more), and whoever watches is told (`agent_left`).
    pub fn agent_left(&self) {
        self.state.send_modify(|s| {
            s.person_drives = false;
            if s.handoff.take().is_some() {
                s.ended = Some(HandEnd::AgentLeft);
            }
            s.agent_left = true;
        });
    }

    /// Closes the handoff from Conch's side (it ended by itself, or the conversation
    /// went away); the person's driving ends with it.
    pub(crate) fn close_handoff(&self) {
        self.state.send_modify(|s| {
            s.handoff = None;
            s.person_drives = false;
        });
    }

    /// Resolves when it is the agent's turn: nobody drives and no handoff waits (HAND-8).
    /// Gives whether it had to wait.
    pub async fn agents_turn(&self) -> bool {
        let mut rx = self.state.subscribe();
        let free = |s: &WheelState| !s.person_drives && s.handoff.is_none();
        if free(&rx.borrow_and_update()) {
            return false;
        }
        // The sender lives as long as `self`, so the wait ends only when the wheel frees.
        let _ = rx.wait_for(free).await;
        true
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// LIVE-6 (issue 28): a step whose thumbnail is ready first still waits for the step
    /// taken before it, so a late panel lists them in the order they were taken.
    #[tokio::test]
    async fn live_6_a_step_is_told_after_the_steps_taken_before_it() {
        let wheel = Wheel::default();
        let first = wheel.step_turn();
        let mut second = wheel.step_turn();
        let mut third = wheel.step_turn();
        let waiting = tokio::spawn(async move {
            second.wait().await;
            second
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !waiting.is_finished(),
            "the second step went before the first"
        );
        drop(first);
        let second = waiting.await.unwrap();
        let early = tokio::time::timeout(Duration::from_millis(50), third.wait()).await;
        assert!(early.is_err(), "the third step went before the second");
        drop(second);
        tokio::time::timeout(Duration::from_secs(1), third.wait())
            .await
            .expect("the third step goes once the second was told");
    }

    /// Issue 31: the agent counts as idle only while none of its calls is in flight, for
    /// as long as since the last one ended; a wheel no call ever marked is idle for good.
    #[tokio::test]
    async fn issue_31_the_agent_is_idle_only_between_its_calls() {
        let wheel = Wheel::default();
        assert_eq!(wheel.agent_idle_for(), Some(Duration::MAX));
        let call = wheel.agent_call();
        assert_eq!(wheel.agent_idle_for(), None);
        let other = wheel.agent_call();
        drop(call);
        assert_eq!(wheel.agent_idle_for(), None, "another call still runs");
        drop(other);
        tokio::time::sleep(Duration::from_millis(120)).await;
        let idle = wheel.agent_idle_for().expect("no call runs");
        assert!(
            idle >= Duration::from_millis(120) && idle < Duration::MAX,
            "{idle:?}"
        );
        let _next = wheel.agent_call();
        assert_eq!(wheel.agent_idle_for(), None);
    }

    #[tokio::test]
    async fn hand_8_the_agent_waits_while_the_person_drives() {
        let wheel = Arc::new(Wheel::default());
        assert!(!wheel.agents_turn().await, "a free wheel makes nobody wait");
        wheel.take_over();
        let waiting = tokio::spawn({
            let wheel = Arc::clone(&wheel);
            async move { wheel.agents_turn().await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            !waiting.is_finished(),
            "the agent went on while the person drove"
        );
        wheel.hand_back();
        assert!(
            waiting.await.unwrap(),
            "the agent's turn came after hand back"
        );
        let notes = wheel.take_notes();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(wheel.take_notes().is_empty(), "notes are given once");
    }

    /// LIVE-14 (issue 28): the turn runs while any of the agent's calls is in flight, and
    /// watchers see it start and end.
    #[test]
    fn live_14_calls_in_flight_are_counted_for_the_panels_stop() {
        let wheel = Wheel::default();
        let mut seen = wheel.watch();
        assert_eq!(wheel.state().calls, 0);
        let first = wheel.agent_call();
        let second = wheel.agent_call();
        assert_eq!(wheel.state().calls, 2);
        assert!(
            seen.has_changed().unwrap_or(false),
            "watchers see a call start"
        );
        seen.borrow_and_update();
        drop(first);
        assert_eq!(wheel.state().calls, 1, "one call still runs");
        drop(second);
        assert_eq!(wheel.state().calls, 0);
        assert!(seen.has_changed().unwrap_or(false), "watchers see it end");
    }

    #[test]
    fn hand_5_hand_back_during_a_handoff_is_im_done_and_stop_is_stopped() {
        let wheel = Wheel::default();
        wheel.open_handoff("Sign in");
        wheel.hand_back();
        assert_eq!(wheel.state().ended, Some(HandEnd::Done));
        assert_eq!(wheel.state().handoff, None);
        wheel.open_handoff("Pay");
        assert_eq!(wheel.state().ended, None);
        wheel.stop();
        assert_eq!(wheel.state().ended, Some(HandEnd::Stopped));
    }

    #[test]
    fn tab_10_and_live_13_the_person_switching_tabs_and_finding_are_told() {
        let wheel = Wheel::default();
        wheel.person_switched_tab("t2");
        wheel.person_used_find();
        let notes = wheel.take_notes();
        assert_eq!(
            notes,
            [
                "The person switched to tab t2.",
                "The person used find on the page, which may have scrolled it."
            ]
        );
    }
}

/// One step's place in line for the live view (see [`Wheel::step_turn`]).
#[derive(Debug)]
pub struct StepTurn {
    /// The step before: its sender drops when it was told.
    before: Option<oneshot::Receiver<()>>,
    /// Dropped once this step was told, which lets the next one go.
    _done: oneshot::Sender<()>,
}

impl StepTurn {
    /// Waits until every step taken before this one was told.
    pub async fn wait(&mut self) {
        if let Some(before) = self.before.take() {
            let _ = before.await;
        }
    }
}
