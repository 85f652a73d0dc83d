//! The toolbox: [`Tools`] holds the browser and the embedder's traits; [`Chat`] is one
//! conversation, with its own tabs, its own "This chat" answers and its calls one at a
//! time (TOOL-7, TOOL-11, PERM-5, TAB-9).
//!
//! A call is read ([`ToolCall::parse`]), checked (Plan only, a running browser), handed
//! to its tool's own module under `tool/` (which judges addresses and uploads, asks the
//! permit flow and acts), and framed into a [`ToolResult`] with the step's notes and tabs.
//!
//! Deliberately absent: any way for a tool to start a browser of the agent's choosing, read
//! a file into a result, or run the agent's script (TOOL-13, TOOL-14).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex};

use conch_browser::guard::BLOCKED_SENTENCE;
use conch_browser::{Browser, BrowserError, Conversation};
use conch_policy::{ActClass, Choice, Mode, Point, Question, Refusal, RefusalCode};
use serde_json::Value;

use crate::call::{TabAction, ToolCall};
use crate::config::ToolsConfig;
use crate::context::{ConversationKind, TaskEvents, TaskState, ToolContext};
use crate::cost::{Cost, Meter};
use crate::engine::Pages;
use crate::error::ToolError;
use crate::live::{self, Told, Touch};
use crate::permit::Consent;
use crate::prompt::EngineCaps;
use crate::result::{Reply, TabLine, ToolResult, compose};
use crate::state::{ChatState, Inner, lock};
use crate::tool::{self, turn::Turn};

/// The fifteen tools over one browser. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Tools {
    inner: Arc<Inner>,
}

impl Tools {
    /// The toolbox over `browser`, set up by `config`.
    pub fn new(browser: Browser, config: ToolsConfig) -> Tools {
        Tools {
            inner: Arc::new(Inner {
                browser,
                config: Arc::new(config),
                chats: StdMutex::new(HashMap::new()),
                offering_retry: AtomicBool::new(false),
            }),
        }
    }

    /// The browser the tools drive.
    pub fn browser(&self) -> &Browser {
        &self.inner.browser
    }

    /// The toolbox's configuration.
    pub fn config(&self) -> &ToolsConfig {
        &self.inner.config
    }

    /// Conversation `id` in `mode` (PERM-1): its tabs and "This chat" answers are its own.
    /// Asking again for the same id gives the same conversation, now in `mode`.
    pub fn chat(&self, id: &str, mode: Mode) -> Chat {
        self.chat_in(&ToolContext::chat(id, mode))
    }

    /// The conversation `ctx` names, in its mode, as a chat or a task (ERR-1): the embedder
    /// calls this when the conversation's turn builds its tools. A task browses in an
    /// errand of its own from then on and can't leave it; a chat keeps the main context
    /// (ERR-2). Asking again gives the same conversation, now in `ctx.mode`.
    pub fn chat_in(&self, ctx: &ToolContext) -> Chat {
        let id = ctx.conversation.as_str();
        let mode = ctx.mode;
        let browser = &self.inner.browser;
        // Said to the browser before the conversation's view is taken, so a task's view
        // is its errand's.
        browser.set_kind(id, ctx.kind);
        let kind = browser.kind(id);
        let state = {
            let mut chats = lock(&self.inner.chats);
            // A chat that becomes a task starts its errand with a view of its own.
            if chats.get(id).is_some_and(|state| state.kind != kind) {
                chats.remove(id);
            }
            Arc::clone(chats.entry(id.to_owned()).or_insert_with(|| {
                Arc::new(ChatState {
                    consent: Arc::new(Consent::new(id, mode)),
                    one_call: tokio::sync::Mutex::new(()),
                    vision: AtomicBool::new(true),
                    screenshot: StdMutex::new(None),
                    pages: Pages::default(),
                    conversation: StdMutex::new(browser.conversation(id)),
                    kind,
                    downloads: tokio::sync::Mutex::new(None),
                    client: StdMutex::new(None),
                    first_title: StdMutex::new(None),
                    followup: StdMutex::new(None),
                    meter: Meter::new(self.inner.config.budget_chars),
                })
            }))
        };
        state.consent.set_mode(mode);
        Chat {
            tools: self.clone(),
            state,
        }
    }

    /// The conversations the tools hold now, by id, sorted.
    pub fn conversations(&self) -> Vec<String> {
        let mut ids: Vec<String> = lock(&self.inner.chats).keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Revokes `site` (PERM-7): it leaves browser.json's always-allowed sites, and every
    /// conversation forgets its "This chat" answer for it, so the next act on it asks
    /// again. Gives whether browser.json held it.
    ///
    /// # Errors
    /// When browser.json can't be read or written; nothing is forgotten then.
    pub fn revoke_site(&self, site: &str) -> Result<bool, conch_browser::store::StoreError> {
        use conch_browser::store::{BrowserSettings, UpdateError};
        let browser = &self.inner.browser;
        let mut held = false;
        BrowserSettings::update(
            &browser.config().home,
            browser.config().clock.as_ref(),
            |s| {
                held = s.revoke_site(site);
                Ok::<_, std::convert::Infallible>(held)
            },
        )
        .map_err(|e| match e {
            UpdateError::Store(e) => e,
            UpdateError::Refused(never) => match never {},
        })?;
        for chat in lock(&self.inner.chats).values() {
            chat.consent.forget_site(site);
        }
        Ok(held)
    }

    /// How the person knows conversation `id` (issue 28): the name of the client that
    /// opened it (MCP `clientInfo.name`, e.g. "Claude Code") and the title of its first
    /// page, each `None` until known.
    pub fn naming(&self, id: &str) -> (Option<String>, Option<String>) {
        let chats = lock(&self.inner.chats);
        let Some(state) = chats.get(id) else {
            return (None, None);
        };
        (
            lock(&state.client).clone(),
            lock(&state.first_title).clone(),
        )
    }

    /// What conversation `id`'s results cost so far and its budget in characters
    /// (issue 31); `None` for a conversation the tools don't hold.
    pub fn spent(&self, id: &str) -> Option<(Cost, Option<u64>)> {
        let chats = lock(&self.inner.chats);
        let state = chats.get(id)?;
        Some((state.meter.spent(), state.meter.budget()))
    }

    /// Sets conversation `id`'s budget in characters (`None`: none), the person's choice
    /// on the panel (issue 31): the next result that would pass it is one sentence
    /// instead. No tool reaches this. Gives whether the tools hold the conversation.
    pub fn set_budget(&self, id: &str, budget: Option<u64>) -> bool {
        let chats = lock(&self.inner.chats);
        let Some(state) = chats.get(id) else {
            return false;
        };
        state.meter.set_budget(budget);
        true
    }

    /// Forgets conversation `id`'s answers (its tabs stay with the browser).
    pub fn forget(&self, id: &str) {
        lock(&self.inner.chats).remove(id);
    }
}

impl TaskEvents for Tools {
    async fn task_changed(&self, conversation: &str, state: TaskState) {
        let ends =
            state.is_over() && self.inner.browser.kind(conversation) == ConversationKind::Task;
        self.inner.browser.task_changed(conversation, state).await;
        if ends {
            self.forget(conversation);
        }
    }

    async fn chat_deleted(&self, conversation: &str) {
        self.inner.browser.chat_deleted(conversation).await;
        self.forget(conversation);
    }
}

/// One conversation's door to the tools.
#[derive(Debug, Clone)]
pub struct Chat {
    tools: Tools,
    state: Arc<ChatState>,
}

impl Chat {
    /// The conversation's id.
    pub fn id(&self) -> &str {
        self.state.consent.id()
    }

    /// The conversation's mode.
    pub fn mode(&self) -> Mode {
        self.state.consent.mode()
    }

    /// Tells the tools what the conversation's engine can do: an engine that can't see gets
    /// a screenshot described in words instead of the image (TOOL-18).
    pub fn set_engine(&self, caps: EngineCaps) {
        self.state.vision.store(caps.vision, Ordering::SeqCst);
    }

    /// Names the client that opened the conversation (MCP `clientInfo.name`), as the
    /// person's panel shows it (issue 28). Control characters go, the name is trimmed
    /// and kept to 60 characters; an empty name is no name.
    pub fn set_client(&self, name: &str) {
        let clean: String = name
            .chars()
            .filter(|c| !c.is_control())
            .collect::<String>()
            .trim()
            .chars()
            .take(60)
            .collect();
        *lock(&self.state.client) = (!clean.is_empty()).then_some(clean);
    }

    /// The address that opens this conversation with the browser in front, where the
    /// person takes over (HAND-7): the embedder's panel link with `browser=1` and the
    /// conversation added; `None` without a panel.
    pub fn panel_link(&self) -> Option<String> {
        self.tools.inner.config.panel_link_for(self.id())
    }

    /// Where this conversation stands while it waits for a free browser of a pool (issue
    /// 32): the waiting sentence while it waits, `None` when it does not; `None`
    /// altogether when the backend is not a pool. The MCP door sends each change as
    /// progress to a call that asked for it.
    pub fn waits_for_place(&self) -> Option<tokio::sync::watch::Receiver<Option<String>>> {
        self.tools.inner.browser.waits_for_place(self.id())
    }

    /// The runtime's view of this conversation, where it browses now (in a browser of
    /// its own after the person gave it one, LIVE-16).
    pub fn conversation(&self) -> Conversation {
        self.state.conversation().0
    }

    /// Calls tool `name` with JSON `args`, as every door does. Never fails: a refusal or
    /// failure is a result whose text is one sentence naming the next step.
    pub async fn call(&self, name: &str, args: &Value) -> ToolResult {
        match ToolCall::parse(name, args) {
            Ok(call) => {
                // The tool's name and time only: never its arguments, which may carry what
                // the agent types (SEC-8).
                let started = std::time::Instant::now();
                tracing::debug!(target: "conch_tools", tool = call.name(), "call started");
                let result = self.run(&call).await;
                tracing::debug!(
                    target: "conch_tools",
                    tool = call.name(),
                    ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                    "call ended"
                );
                result
            }
            Err(e) => self
                .state
                .meter
                .account(name, ToolResult::error(e.to_string())),
        }
    }

    /// What this conversation's results cost so far (issue 31).
    pub fn spent(&self) -> Cost {
        self.state.meter.spent()
    }

    /// Counts `text` the embedder added to one of this conversation's results (the
    /// gateway's conversation handle line) in the running total; gives the new total.
    pub fn count_added(&self, text: &str) -> Cost {
        self.state.meter.add(Cost::of_text(text))
    }

    /// Runs one parsed call. Calls of one conversation run one at a time (TOOL-11).
    pub async fn run(&self, call: &ToolCall) -> ToolResult {
        // LAUNCH-12: the browser never idles out under a call, however long it waits for
        // the person (a handoff, a question); idle time counts from the call's end.
        let _awake = self.tools.inner.browser.hold_awake();
        let _turn = self.state.one_call.lock().await;
        self.state.consent.begin_call();
        // The person may have given the chat a browser of its own, or taken it back,
        // since the last call (LIVE-16): this call browses where the chat is now.
        let (conv, moved) = self.state.conversation();
        if moved {
            self.state.pages.clear().await;
        }
        let conv = &conv;
        let wheel = conv.wheel();
        // Issue 28: the turn runs, for the panel's Stop, until this call returns.
        let _call = wheel.agent_call();
        // LIVE-14: the person's Stop ends the call, waiting or running; its result says so.
        let stops = wheel.interrupts();
        let cursor = conv.blocked_cursor();
        let listened = wheel.watched() || self.tools.inner.config.events.is_some();
        let step = async {
            // HAND-8: while the person drives or a handoff waits, the agent's call waits
            // for the wheel instead of failing.
            wheel.agents_turn().await;
            // LIVE-12: the person's find is refused while the step runs.
            let _mark = wheel.agent_step();
            // SNAP-7: what the person changed comes first, marked as theirs, so the step's
            // own diff shows only the step's changes.
            let person = if wheel.person_touched() && call.act().class() == ActClass::Acting {
                self.state.pages.person_changes(conv).await
            } else {
                None
            };
            let (outcome, touch) = live::scoped(listened, self.dispatch(call, conv)).await;
            (with_persons(outcome, person), touch)
        };
        let (outcome, touch) = tokio::select! {
            done = step => done,
            () = wheel.interrupted_after(stops) => (Err(ToolError::Stopped), Touch::default()),
        };
        if let Ok(reply) = &outcome {
            let told = Told {
                conv,
                home: &self.tools.inner.browser.config().home,
                sink: self.tools.inner.config.events.as_ref(),
            };
            live::step_done(&told, call, &touch, reply.lines.first().cloned());
        }
        // NET-10: requests the guard refused during the step, without their address; only
        // those this conversation's own tabs made (issue 12), never another's.
        let blocked = conv
            .blocked_since(cursor)
            .await
            .iter()
            .filter(|b| b.code != "page-scheme-cancelled")
            .count();
        if let Err(ToolError::Browser(BrowserError::DownloadFailed(sentence))) = &outcome {
            offer_try_again(&self.tools.inner, self.id(), sentence);
        }
        let (reply, is_error) = match outcome {
            Ok(reply) => (reply, false),
            Err(e) => (Reply::line(e.to_string()), true),
        };
        let (mut notes, tabs) = self.footer(conv).await;
        self.note_first_title(&tabs);
        if let Some((_, watch)) = self.state.downloads.lock().await.as_ref() {
            notes.extend(watch.take_notes().iter().map(|n| n.sentence()));
        }
        if blocked > 0 && !notes.iter().any(|n| n.contains(BLOCKED_SENTENCE)) {
            notes.push(BLOCKED_SENTENCE.to_owned());
        }
        let dialogs = self.state.pages.dialog_notes();
        // Issue 31: counted, and over the budget the step's text gives way to a sentence.
        let result = compose(reply, &notes, &dialogs, &tabs, is_error);
        self.state.meter.account(call.name(), result)
    }

    /// Keeps the title of the conversation's first page that has one (issue 28).
    fn note_first_title(&self, tabs: &[TabLine]) {
        let mut first = lock(&self.state.first_title);
        if first.is_none() {
            let titled = tabs
                .iter()
                .filter(|t| !t.title.trim().is_empty())
                .min_by_key(|t| !t.active);
            *first = titled.map(|t| t.title.trim().chars().take(80).collect());
        }
    }

    /// The runtime's notes and the tab list, when the conversation's browser runs (a
    /// task's, or its own on a pool, issue 32: not only the main one).
    async fn footer(&self, conv: &Conversation) -> (Vec<String>, Vec<TabLine>) {
        if !conv.browser_runs().await {
            return (Vec::new(), Vec::new());
        }
        let mut notes = conv.wheel().take_notes();
        notes.extend(conv.take_notes().await);
        let tabs = conv
            .tabs_followed()
            .await
            .unwrap_or_default()
            .into_iter()
            .map(|t| TabLine {
                id: t.id,
                title: t.title,
                active: t.active,
            })
            .collect();
        (notes, tabs)
    }

    /// The checks every call passes, then the call's own tool.
    async fn dispatch(&self, call: &ToolCall, conv: &Conversation) -> Result<Reply, ToolError> {
        // Plan only refuses every act before anything touches the page (PERM-9).
        if self.mode() == Mode::PlanOnly && call.act().class() == ActClass::Acting {
            return Err(Refusal::new(RefusalCode::PlanOnly).into());
        }
        // Without a browser every tool says so in the same sentence (LAUNCH-16); an
        // address is judged first, so a refused one starts nothing (NET-6).
        let navigates = matches!(
            call,
            ToolCall::Open { .. }
                | ToolCall::Tabs {
                    action: TabAction::Open,
                    ..
                }
        );
        if !navigates {
            self.tools.inner.browser.ensure_running().await?;
        }
        let turn = Turn::new(
            &self.tools.inner,
            &self.state,
            conv.clone(),
            call.name(),
            call.act(),
        );
        match call {
            ToolCall::Open { url } => tool::open::run(&turn, url).await,
            ToolCall::Read { part, find } => tool::read::run(&turn, *part, find.as_deref()).await,
            ToolCall::Click { reference, how, to } => {
                tool::click::run(&turn, reference, *how, to.as_deref()).await
            }
            ToolCall::Type {
                reference,
                text,
                submit,
            } => tool::type_::run(&turn, reference, text, *submit).await,
            ToolCall::Press { key, reference } => {
                tool::press::run(&turn, key, reference.as_deref()).await
            }
            ToolCall::Select { reference, values } => {
                tool::select::run(&turn, reference, values).await
            }
            ToolCall::Scroll {
                direction,
                reference,
                amount,
            } => tool::scroll::run(&turn, *direction, reference.as_deref(), *amount).await,
            ToolCall::Back => tool::back::run(&turn).await,
            ToolCall::Screenshot => tool::screenshot::run(&turn).await,
            ToolCall::Wait {
                text,
                gone,
                seconds,
            } => tool::wait::run(&turn, text.as_deref(), gone.as_deref(), *seconds).await,
            ToolCall::Handoff { reason } => tool::handoff::run(&turn, reason).await,
            ToolCall::Tabs {
                action,
                url,
                search,
                tab,
            } => {
                let (url, search, tab) = (url.as_deref(), search.as_deref(), tab.as_deref());
                tool::tabs::run(&turn, *action, url, search, tab).await
            }
            ToolCall::ClickAt {
                x,
                y,
                how,
                to,
                text,
                description,
            } => {
                let aim = tool::click_at::Aim {
                    at: Point { x: *x, y: *y },
                    how: *how,
                    to: to.map(|(x, y)| Point { x, y }),
                    text: text.as_deref(),
                    description,
                };
                tool::click_at::run(&turn, aim).await
            }
            ToolCall::Upload { reference, files } => {
                tool::upload::run(&turn, reference, files).await
            }
            ToolCall::Form { fields } => tool::form::run(&turn, fields).await,
        }
    }
}

/// Puts what the person changed before the step's own outcome (SNAP-7).
fn with_persons(
    outcome: Result<Reply, ToolError>,
    person: Option<crate::result::PageBody>,
) -> Result<Reply, ToolError> {
    let Some(person) = person else {
        return outcome;
    };
    let mut reply = outcome?;
    let text = match reply.page.take() {
        Some(step) => format!("{}\n\nThen your step:\n{}", person.text, step.text),
        None => person.text,
    };
    reply.page = Some(crate::result::PageBody::bounded(&text));
    Ok(reply)
}

/// The browser's download failed (LAUNCH-5): the person is asked once, in the fetcher's
/// own sentence, with one button, Try again; pressing it downloads again in the
/// background, and a new failure is asked about anew. The agent's step has already failed
/// with the same sentence: nothing waits for the person here.
fn offer_try_again(inner: &Arc<Inner>, conversation: &str, sentence: &str) {
    if inner.offering_retry.swap(true, Ordering::SeqCst) {
        return;
    }
    let request = crate::embedder::AskRequest {
        conversation: conversation.to_owned(),
        question: Question::browser_download_failed(sentence),
        tool: "browser-download".to_owned(),
        thumbnail: None,
        taint_note: None,
    };
    let inner = Arc::downgrade(inner);
    tokio::spawn(async move {
        let Some(asker) = inner.upgrade().map(|i| Arc::clone(&i.config.asker)) else {
            return;
        };
        let answer = asker.ask(&request).await;
        let Some(inner) = inner.upgrade() else { return };
        inner.offering_retry.store(false, Ordering::SeqCst);
        if answer == crate::embedder::Answer::Person(Choice::TryAgain)
            && let Err(BrowserError::DownloadFailed(again)) = inner.browser.ensure_running().await
        {
            offer_try_again(&inner, &request.conversation, &again);
        }
    });
}
