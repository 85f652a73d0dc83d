//! A browser of its own for a chat (LIVE-16, ERR-23), and a conversation leaving the main
//! context when it becomes a task (ERR-1).
//!
//! The person's live view (`{type:'session', own:true}`) or the embedder gives a chat an
//! errand of its own with [`Browser::set_own_browser`]: a browser context in the errands'
//! browser, seeded like a task's with the always-allowed sites' cookies (ERR-3), where an
//! Allow lends a site's sign-in (ERR-4); `own:false` returns it to the main context. No
//! tool argument reaches this (ERR-1): only the person's command or the embedder's call.
//! A task always browses in its errand, and the toggle can't take it out ([`OwnBrowser::Task`]).
//!
//! What happens to the tabs on each switch: the conversation's tabs in the context it
//! leaves close, and its next step opens afresh in the other one; that step's result
//! says so ([`MOVED_APART`], [`MOVED_BACK`]). They are deliberately not reopened at the
//! same addresses, because an address opened again in another context is a new request
//! with other cookies: the page the person saw signed in shows up signed out (or as
//! someone else), and an address that acts when loaded (a one-time sign-in link, an
//! unsubscribe link) acts a second time, so a sign-in link would sign the isolated context
//! in without the person lending anything (ERR-4). A person who asks for a separate
//! browser expects a clean one, and one who takes it back expects their own sign-ins,
//! not what the isolated one was doing; the agent, told, opens what it still needs. A
//! chat returned to the main context loses its own browser's context for good: what it
//! signed in to there is never copied back (ERR-7).
//!
//! The same happens when the embedder says a chat that already browsed is a task
//! ([`Browser::set_kind`]): its tabs in the main context close, in the background once any
//! call of it in flight there is done, so no tab of a task stays in the main context.
//!
//! The conversation's [`Wheel`] (who drives, the panel's size, who watches) goes with it
//! from one browser to the other, so its live view and its agent share one wheel wherever
//! it browses. Whoever keeps a [`Conversation`] (the live view, the toolbox) asks
//! [`Conversation::moved`] and takes [`Conversation::here`].
//!
//! Deliberately absent: keeping the toggle across a restart (a new gateway process is a
//! new session, whose chats start in the main context), and moving tabs between contexts.

use super::*;

/// Where a conversation browses after [`Browser::set_own_browser`] (LIVE-16).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnBrowser {
    /// In the main context, signed in wherever the person signed in (ERR-2).
    Main,
    /// In a browser of its own the person gave it (LIVE-16).
    Own,
    /// In its task's errand, which it can't leave (ERR-1): the toggle changed nothing.
    Task,
}

/// What the conversation's next result says after it left the main context with tabs
/// open there.
pub const MOVED_APART: &str = "This conversation now browses in a browser of its own, so its tabs of the shared browser were closed; open the page again if you still need it.";

/// What the chat's next result says after the person took its own browser back.
pub const MOVED_BACK: &str = "This chat browses in the main browser again, with the person's sign-ins, so the tabs of its own browser were closed; open the page again if you still need it.";

/// Why conversation `id` of `browser` browses apart from the main context (ERR-23):
/// `own` for a chat the person gave a browser of its own, else `task`.
pub(super) fn reason(browser: &Browser, id: &str) -> &'static str {
    match browser.main_of() {
        Some(main)
            if main.kind(id) != ConversationKind::Task
                && lock(&main.inner.talks.own).contains(id) =>
        {
            "own"
        }
        _ => "task",
    }
}

impl Browser {
    /// Gives chat `id` a browser of its own (`own`), or returns it to the main context
    /// (LIVE-16). Called by the person's live view or the embedder, never by a tool
    /// (ERR-1). Its tabs in the context it leaves close (see the module's doc), after its
    /// call in flight there, if any, is done. Gives where it browses now: a task stays in
    /// its errand whatever is asked ([`OwnBrowser::Task`]).
    pub async fn set_own_browser(&self, id: &str, own: bool) -> OwnBrowser {
        let Some(main) = self.main_of() else {
            return OwnBrowser::Task;
        };
        if main.kind(id) == ConversationKind::Task {
            return OwnBrowser::Task;
        }
        let changed = {
            let mut chats = lock(&main.inner.talks.own);
            if own {
                chats.insert(id.to_owned())
            } else {
                chats.remove(id)
            }
        };
        if changed {
            tracing::info!(target: "conch_browser", own, "a chat's own browser was switched by the person");
            main.move_wheel(id, own);
        }
        main.settle(id).await;
        if own {
            OwnBrowser::Own
        } else {
            OwnBrowser::Main
        }
    }

    /// Whether the person gave chat `id` a browser of its own (LIVE-16).
    pub fn has_own_browser(&self, id: &str) -> bool {
        self.main_of()
            .is_some_and(|main| lock(&main.inner.talks.own).contains(id))
    }

    /// Whether conversation `id` browses apart from the main context: a task (ERR-1) or
    /// a chat given a browser of its own (LIVE-16). Main side only.
    pub(super) fn browses_apart(&self, id: &str) -> bool {
        self.kind(id) == ConversationKind::Task
            || lock(&self.inner.talks.own).contains(id)
            // On a pool every conversation browses in a browser of its own (issue 32).
            || lock(&self.inner.errand.pool).is_some()
    }

    /// Conversation `id` just left the main context (a chat became a task): its wheel
    /// goes with it now, and its tabs there close in the background (ERR-1).
    pub(super) fn moved_apart(&self, id: &str) {
        self.move_wheel(id, true);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let main = self.clone();
                let id = id.to_owned();
                runtime.spawn(async move { main.settle(&id).await });
            }
            Err(_) => {
                tracing::debug!(target: "conch_browser", "no runtime to close a new task's tabs of the main browser");
            }
        }
    }

    /// The main browser: this one, or the errands' browser's main one while it lives.
    fn main_of(&self) -> Option<Browser> {
        match self.inner.side {
            Side::Main => Some(self.clone()),
            Side::Errands => self
                .inner
                .errand
                .main
                .as_ref()
                .and_then(Weak::upgrade)
                .map(|inner| Browser { inner }),
        }
    }

    /// Moves conversation `id`'s wheel to the errands' browser (`apart`) or back to the
    /// main one, replacing any there. Main side only.
    fn move_wheel(&self, id: &str, apart: bool) {
        let errands = if apart {
            Some(self.errands())
        } else {
            lock(&self.inner.errand.errands).clone()
        };
        let Some(errands) = errands else { return };
        let (from, to) = if apart {
            (&self.inner.talks.wheels, &errands.inner.talks.wheels)
        } else {
            (&errands.inner.talks.wheels, &self.inner.talks.wheels)
        };
        let wheel = lock(from).remove(id);
        if let Some(wheel) = wheel {
            lock(to).insert(id.to_owned(), wheel);
        }
    }

    /// Leaves nothing of conversation `id` in the context it no longer browses in: its
    /// tabs there close and are forgotten, and its next result says so. Waits for its
    /// calls in flight on both sides; asks where it browses only then, so switches made
    /// one after the other settle in order. Main side only.
    async fn settle(&self, id: &str) {
        let main_turn = Arc::clone(
            lock(&self.inner.talks.conversation_locks)
                .entry(id.to_owned())
                .or_default(),
        );
        let _main_turn = main_turn.lock().await;
        let apart = self.browses_apart(id);
        let errands = if apart {
            Some(self.errands())
        } else {
            lock(&self.inner.errand.errands).clone()
        };
        let Some(errands) = errands else { return };
        let errand_turn = Arc::clone(
            lock(&errands.inner.talks.conversation_locks)
                .entry(id.to_owned())
                .or_default(),
        );
        let _errand_turn = errand_turn.lock().await;
        self.move_wheel(id, apart);
        if apart {
            let (had_tabs, mut notes) = {
                let mut state = self.inner.state.lock().await;
                let had = state
                    .tabs
                    .conversation(id)
                    .is_some_and(|t| !t.tabs.is_empty());
                (had, state.notes.remove(id).unwrap_or_default())
            };
            if !had_tabs && notes.is_empty() {
                // Nothing of it in the main context, but its lock: let go of it.
                lock(&self.inner.talks.conversation_locks).remove(id);
                return;
            }
            // Told first: the note is there by the time the tabs are gone.
            if had_tabs {
                notes.push(MOVED_APART.to_owned());
            }
            errands.note(id, notes).await;
            self.close_conversation(id).await;
        } else {
            let had_tabs = {
                let state = errands.inner.state.lock().await;
                state
                    .tabs
                    .conversation(id)
                    .is_some_and(|t| !t.tabs.is_empty())
            };
            let set_aside = errands.errands_set_aside().await.iter().any(|n| n == id);
            if !had_tabs && !set_aside {
                lock(&errands.inner.talks.conversation_locks).remove(id);
                return;
            }
            self.note(id, vec![MOVED_BACK.to_owned()]).await;
            errands.forget_aside(id).await;
            Box::pin(errands.close_conversation(id)).await;
        }
    }

    /// Adds `notes` to conversation `id`'s next result.
    async fn note(&self, id: &str, notes: Vec<String>) {
        if notes.is_empty() {
            return;
        }
        let mut state = self.inner.state.lock().await;
        state.notes.entry(id.to_owned()).or_default().extend(notes);
    }
}

impl Conversation {
    /// Whether this conversation browses in another context than this view's now: the
    /// person gave it a browser of its own or took it back (LIVE-16), or it became a task
    /// (ERR-1). Whoever keeps a view takes [`Conversation::here`] then.
    pub fn moved(&self) -> bool {
        let Some(main) = self.browser.main_of() else {
            return false;
        };
        main.browses_apart(&self.id) != (self.browser.inner.side == Side::Errands)
    }

    /// This conversation's view where it browses now (see [`Conversation::moved`]).
    pub fn here(&self) -> Conversation {
        match self.browser.main_of() {
            Some(main) => main.conversation(&self.id),
            None => self.clone(),
        }
    }
}
