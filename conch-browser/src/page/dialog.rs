//! The page's own dialogs (alert, confirm, prompt, "Leave site?"): every one is answered,
//! by whoever drives (DLG-1, DLG-2, AMB-19).
//!
//! [`watch`] installs a [`DialogWatch`] on a page session (the runtime installs one per
//! page it owns, and one per out-of-process frame session). The rules are conch-policy's
//! [`dialog_answer`]: during an agent step an alert is closed, "Leave site?" leaves and a
//! prompt is cancelled; a confirm goes to the [`DialogHook`] (the tools crate asks the
//! person through its permit flow); in Plan only a confirm is cancelled; between steps an
//! alert gets OK and everything else Cancel; while the person drives, the dialog waits in
//! [`DialogWatch::pending`] for [`DialogWatch::answer`]. Every answer leaves a
//! [`DialogNote`] for the next result ([`DialogWatch::take_notes`], DLG-12).
//!
//! Acting finds the watch of its page here, to count an input held up behind a dialog it
//! raised as done once the dialog is answered (DLG-13), and to send nothing to a frozen page
//! (DLG-14).
//!
//! Deliberately absent: typing into a prompt (Conch never does, DLG-5), and any library
//! default that dismisses dialogs unseen.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use conch_cdp::Session;
use conch_policy::{DialogAnswer, DialogKind, Driver, Mode, ON_HAND_BACK, dialog_answer};
use futures_util::StreamExt;
use serde::Deserialize;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// The most dialog notes a watch keeps until they are taken (the newest).
pub const MAX_NOTES: usize = 20;

/// How long [`watch`] waits for `Page.enable`.
const ENABLE_WAIT: Duration = Duration::from_secs(2);

/// A dialog the page raised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dialog {
    /// Which kind.
    pub kind: DialogKind,
    /// The page's words (page text: wrap it as untrusted before the agent reads it).
    pub message: String,
    /// A prompt's default text.
    pub default_prompt: String,
    /// The address of the frame that raised it.
    pub url: String,
}

/// How a dialog was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answered {
    /// An alert was closed (OK).
    Closed,
    /// A confirm or prompt was accepted.
    Accepted,
    /// A confirm or prompt was cancelled.
    Cancelled,
    /// "Leave site?" was answered Leave.
    Left,
    /// "Leave site?" was answered Stay.
    Stayed,
}

/// Who answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnsweredBy {
    /// Conch, by the rule for the agent's step.
    AgentStep,
    /// The person, through the permit question or the live view.
    Person,
    /// Conch, by the page's default between steps.
    Default,
    /// Conch cancelled it because the person handed back (DLG-10).
    HandBack,
}

/// What the page asked and how it was answered (dialogNotes, DLG-12).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DialogNote {
    /// The dialog.
    pub dialog: Dialog,
    /// The answer.
    pub answer: Answered,
    /// Who gave it.
    pub by: AnsweredBy,
}

impl DialogNote {
    /// One sentence for the agent. The page's words are quoted as given: the tools crate
    /// wraps the whole result's page text as untrusted.
    pub fn sentence(&self) -> String {
        let words = &self.dialog.message;
        let when = match self.by {
            AnsweredBy::AgentStep => "",
            AnsweredBy::Person => " (answered by the person)",
            AnsweredBy::Default => " (between steps, by the page's default)",
            AnsweredBy::HandBack => " (cancelled because the person handed back)",
        };
        match (self.dialog.kind, self.answer) {
            (DialogKind::Alert, _) => {
                format!("The page showed a message: “{words}”; it was closed{when}.")
            }
            (DialogKind::BeforeUnload, Answered::Left) => {
                format!("The page asked to confirm leaving; Conch left the page{when}.")
            }
            (DialogKind::BeforeUnload, _) => {
                format!("The page asked to confirm leaving; the tab stayed on the page{when}.")
            }
            (DialogKind::Prompt, Answered::Accepted) => {
                format!("The page asked for text: “{words}”; it was answered{when}.")
            }
            (DialogKind::Prompt, _) => {
                format!("The page asked for text: “{words}”; the prompt was cancelled{when}.")
            }
            (DialogKind::Confirm, Answered::Accepted) => {
                format!("The page asked “{words}”; it was accepted{when}.")
            }
            (DialogKind::Confirm, _) => {
                format!("The page asked “{words}”; it was cancelled{when}.")
            }
        }
    }
}

/// The boxed future a [`DialogHook`] returns.
pub type HookFuture = Pin<Box<dyn Future<Output = bool> + Send + 'static>>;

/// Answers a confirm raised during an agent step (DLG-6): the tools crate implements it
/// with its permit flow (the site question, high stakes, a Yes already given in this step
/// covers a follow-up, DLG-7). `true` accepts, `false` cancels.
pub trait DialogHook: Send + Sync + fmt::Debug {
    /// Decides a confirm.
    fn confirm(&self, dialog: Dialog) -> HookFuture;
}

/// A hook that cancels every confirm (for pages nobody may confirm on).
#[derive(Debug, Clone, Copy, Default)]
pub struct CancelConfirms;

impl DialogHook for CancelConfirms {
    fn confirm(&self, _: Dialog) -> HookFuture {
        Box::pin(async { false })
    }
}

#[derive(Debug)]
struct State {
    driver: Driver,
    mode: Mode,
    /// A dialog waiting for an answer.
    pending: Option<Dialog>,
    /// Dialogs seen so far.
    opened: u64,
    notes: Vec<DialogNote>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    session: Session,
    state: Mutex<State>,
    changed: Notify,
    /// Who decides a confirm during an agent step: the conversation's permit flow, set by
    /// whoever last asked for the watch (the runtime starts it with [`CancelConfirms`]).
    hook: Mutex<Arc<dyn DialogHook>>,
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many dialogs the page has raised since the watch began.
    pub(crate) fn opened(&self) -> u64 {
        self.lock().opened
    }

    /// Whether a dialog waits now.
    pub(crate) fn is_pending(&self) -> bool {
        self.lock().pending.is_some()
    }

    /// The words of the dialog waiting now, if one waits.
    pub(crate) fn pending_words(&self) -> Option<String> {
        self.lock().pending.as_ref().map(|d| d.message.clone())
    }

    /// Waits until no dialog waits.
    pub(crate) async fn until_answered(&self) {
        loop {
            let changed = self.changed.notified();
            if !self.is_pending() {
                return;
            }
            changed.await;
        }
    }

    async fn handle(&self, accept: bool, text: Option<String>) -> Result<(), conch_cdp::Error> {
        let mut params = serde_json::json!({ "accept": accept });
        if let Some(text) = text {
            params["promptText"] = serde_json::Value::String(text);
        }
        self.session
            .call_raw("Page.handleJavaScriptDialog", params)
            .await
            .map(|_| ())
    }

    fn finish(&self, dialog: Dialog, answer: Answered, by: AnsweredBy) {
        {
            let mut state = self.lock();
            state.pending = None;
            state.notes.push(DialogNote { dialog, answer, by });
            // A page that raises dialogs in a loop where nobody reads the notes (a
            // background tab) must not grow them without end: the newest are kept.
            if state.notes.len() > MAX_NOTES {
                let extra = state.notes.len() - MAX_NOTES;
                state.notes.drain(..extra);
            }
        }
        self.changed.notify_waiters();
    }
}

fn registry() -> &'static Mutex<HashMap<String, Weak<Watching>>> {
    static REGISTRY: OnceLock<Mutex<HashMap<String, Weak<Watching>>>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(HashMap::new()))
}

fn key_of(session: &Session) -> String {
    session
        .id()
        .map(|id| id.as_str().to_owned())
        .unwrap_or_default()
}

/// The watch installed on `session`, if any.
pub(crate) fn watching(session: &Session) -> Option<Arc<Inner>> {
    let map = registry().lock().unwrap_or_else(PoisonError::into_inner);
    map.get(&key_of(session))
        .and_then(Weak::upgrade)
        .map(|w| Arc::clone(&w.inner))
}

/// The one watch of a page session and the task that answers its dialogs.
#[derive(Debug)]
struct Watching {
    inner: Arc<Inner>,
    task: JoinHandle<()>,
}

impl Drop for Watching {
    fn drop(&mut self) {
        self.task.abort();
        let mut map = registry().lock().unwrap_or_else(PoisonError::into_inner);
        map.retain(|_, w| w.strong_count() > 0);
    }
}

/// Answers every dialog of one page session until the last handle is dropped. A page has
/// one watch: the runtime installs it when the page attaches (so a dialog during the first
/// load, in a background popup or in a tab the agent never stepped on is answered too,
/// DLG-1), and [`watch`] on the same session gives a handle to that same watch.
#[derive(Debug, Clone)]
pub struct DialogWatch {
    /// Held, not read: the last handle ends the watch.
    _watching: Arc<Watching>,
    inner: Arc<Inner>,
}

/// Marks an agent step on a page while alive (DLG-2): dialogs raised meanwhile get the
/// step's answers. Dropping it returns the page to "between steps".
#[derive(Debug)]
pub struct StepGuard {
    inner: Arc<Inner>,
}

impl Drop for StepGuard {
    fn drop(&mut self) {
        let mut state = self.inner.lock();
        if state.driver == Driver::AgentStep {
            state.driver = Driver::Nobody;
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Opening {
    #[serde(default)]
    url: String,
    #[serde(default)]
    message: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    default_prompt: String,
}

/// The watch already answering the dialogs of `page`, if any, leaving its hook as it is
/// (the live view answers for the person through it, DLG-9).
pub fn existing(page: &Session) -> Option<DialogWatch> {
    let watching = registry()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key_of(page))
        .and_then(Weak::upgrade)?;
    Some(DialogWatch {
        inner: Arc::clone(&watching.inner),
        _watching: watching,
    })
}

/// Starts answering the dialogs of `page` (`Page.enable` is sent; `hook` decides confirms
/// during agent steps). The watch starts "between steps" in `Ask before acting` mode. When
/// the page is watched already, this gives that watch, with `hook` deciding from now on.
///
/// # Errors
/// A DevTools failure while enabling the `Page` domain.
pub async fn watch(
    page: &Session,
    hook: Arc<dyn DialogHook>,
) -> Result<DialogWatch, conch_cdp::Error> {
    let existing = registry()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&key_of(page))
        .and_then(Weak::upgrade);
    if let Some(watching) = existing {
        *watching
            .inner
            .hook
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = hook;
        return Ok(DialogWatch {
            inner: Arc::clone(&watching.inner),
            _watching: watching,
        });
    }
    let mut openings = page.events("Page.javascriptDialogOpening");
    let mut closings = page.events("Page.javascriptDialogClosed");
    // A page already frozen by a dialog does not answer `Page.enable` until the dialog
    // closes: the runtime enables the domain when it opens the page, so a slow answer here
    // is not waited for.
    match page
        .call_raw_with_timeout("Page.enable", serde_json::Value::Null, ENABLE_WAIT)
        .await
    {
        Err(e) if !e.is_timeout() => return Err(e),
        _ => {}
    }
    let inner = Arc::new(Inner {
        session: page.clone(),
        state: Mutex::new(State {
            driver: Driver::Nobody,
            mode: Mode::Ask,
            pending: None,
            opened: 0,
            notes: Vec::new(),
        }),
        changed: Notify::new(),
        hook: Mutex::new(hook),
    });
    let weak = Arc::downgrade(&inner);
    let task = tokio::spawn(async move {
        loop {
            tokio::select! {
                event = openings.next() => {
                    let Some(event) = event else { return };
                    let Some(inner) = weak.upgrade() else { return };
                    if let Ok(opening) = event.parse::<Opening>() {
                        answer(&inner, opening).await;
                    }
                }
                event = closings.next() => {
                    let Some(_) = event else { return };
                    let Some(inner) = weak.upgrade() else { return };
                    // Closed some other way (the frame went away): nothing waits now.
                    let was = inner.lock().pending.take();
                    if was.is_some() {
                        inner.changed.notify_waiters();
                    }
                }
            }
        }
    });
    let watching = Arc::new(Watching {
        inner: Arc::clone(&inner),
        task,
    });
    registry()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key_of(page), Arc::downgrade(&watching));
    Ok(DialogWatch {
        _watching: watching,
        inner,
    })
}

async fn answer(inner: &Inner, opening: Opening) {
    let kind = match opening.kind.as_str() {
        "alert" => DialogKind::Alert,
        "confirm" => DialogKind::Confirm,
        "prompt" => DialogKind::Prompt,
        _ => DialogKind::BeforeUnload,
    };
    let dialog = Dialog {
        kind,
        message: opening.message,
        default_prompt: opening.default_prompt,
        url: opening.url,
    };
    let (driver, mode) = {
        let mut state = inner.lock();
        state.opened += 1;
        state.pending = Some(dialog.clone());
        (state.driver, state.mode)
    };
    inner.changed.notify_waiters();
    let by = if driver == Driver::Nobody {
        AnsweredBy::Default
    } else {
        AnsweredBy::AgentStep
    };
    let accept = match dialog_answer(kind, driver, mode) {
        DialogAnswer::Accept => true,
        DialogAnswer::Dismiss => false,
        DialogAnswer::Permit => {
            let hook = Arc::clone(&inner.hook.lock().unwrap_or_else(PoisonError::into_inner));
            let yes = hook.confirm(dialog.clone()).await;
            if inner.handle(yes, None).await.is_ok() {
                let answer = if yes {
                    Answered::Accepted
                } else {
                    Answered::Cancelled
                };
                inner.finish(dialog, answer, AnsweredBy::Person);
            }
            return;
        }
        // The person answers through DialogWatch::answer.
        DialogAnswer::Person => return,
    };
    if inner.handle(accept, None).await.is_ok() {
        inner.finish(dialog.clone(), answered(kind, accept), by);
    }
}

fn answered(kind: DialogKind, accept: bool) -> Answered {
    match (kind, accept) {
        (DialogKind::Alert, _) => Answered::Closed,
        (DialogKind::BeforeUnload, true) => Answered::Left,
        (DialogKind::BeforeUnload, false) => Answered::Stayed,
        (_, true) => Answered::Accepted,
        (_, false) => Answered::Cancelled,
    }
}

impl DialogWatch {
    /// Whether it still watches (its page's session has not gone away).
    pub fn is_watching(&self) -> bool {
        !self._watching.task.is_finished()
    }

    /// Marks an agent step in `mode` until the guard is dropped (DLG-2).
    pub fn agent_step(&self, mode: Mode) -> StepGuard {
        {
            let mut state = self.inner.lock();
            state.driver = Driver::AgentStep;
            state.mode = mode;
        }
        StepGuard {
            inner: Arc::clone(&self.inner),
        }
    }

    /// Says whether the person drives the page now (DLG-9). When they hand back while
    /// their dialog waits, it gets Cancel and a note says so (DLG-10).
    pub async fn set_person_driving(&self, driving: bool) {
        let pending = {
            let mut state = self.inner.lock();
            if driving {
                state.driver = Driver::Person;
                None
            } else {
                if state.driver == Driver::Person {
                    state.driver = Driver::Nobody;
                }
                state.pending.clone()
            }
        };
        if let Some(dialog) = pending {
            let accept = ON_HAND_BACK == DialogAnswer::Accept;
            if self.inner.handle(accept, None).await.is_ok() {
                let kind = dialog.kind;
                self.inner
                    .finish(dialog, answered(kind, accept), AnsweredBy::HandBack);
            }
        }
    }

    /// The dialog waiting for the person, if any (`BrowserTab.dialog`, DLG-9).
    pub fn pending(&self) -> Option<Dialog> {
        self.inner.lock().pending.clone()
    }

    /// The person's answer to the waiting dialog (the live command `{type: 'dialog'}`).
    /// Returns whether a dialog was waiting.
    ///
    /// # Errors
    /// A DevTools failure.
    pub async fn answer(
        &self,
        accept: bool,
        text: Option<String>,
    ) -> Result<bool, conch_cdp::Error> {
        let Some(dialog) = self.pending() else {
            return Ok(false);
        };
        self.inner.handle(accept, text).await?;
        let kind = dialog.kind;
        self.inner
            .finish(dialog, answered(kind, accept), AnsweredBy::Person);
        Ok(true)
    }

    /// Waits, at most `within`, until no dialog waits. Returns whether none waits.
    pub async fn until_answered(&self, within: Duration) -> bool {
        tokio::time::timeout(within, self.inner.until_answered())
            .await
            .is_ok()
    }

    /// The notes since the last call, taken once (DLG-12).
    pub fn take_notes(&self) -> Vec<DialogNote> {
        std::mem::take(&mut self.inner.lock().notes)
    }
}
