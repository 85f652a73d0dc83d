//! The toolbox: [`Tools`] holds the browser and the embedder's traits; [`Chat`] is one
//! conversation, with its own tabs, its own "This chat" answers and its calls one at a
//! time (TOOL-7, TOOL-11, PERM-5, TAB-9).
//!
//! A call is read ([`ToolCall::parse`]), checked (schemes and addresses for navigation,
//! Plan only, uploads' files, then the permit flow), carried out through the engine
//! module, and framed into a [`ToolResult`].
//!
//! Deliberately absent: any way for a tool to start a browser of the agent's choosing, read
//! a file into a result, or run the agent's script (TOOL-13, TOOL-14).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex, PoisonError};
use std::time::Duration;

use conch_browser::guard::BLOCKED_SENTENCE;
use conch_browser::page::download::{DownloadPlaces, DownloadWatch, watch_downloads};
use conch_browser::{Browser, Conversation, RunState};
use conch_policy::{
    ActClass, ActKind, Chord, Mode, NavigationBy, NetSettings, PermitFacts, Point, Refusal,
    RefusalCode, Site, Size, StakesWords, Verdict, carries, classify_field, navigation_verdict,
    verdict_for_url,
};
use serde_json::Value;
use url::Url;

use crate::call::{Direction, FormField, How, TabAction, ToolCall};
use crate::embedder::{
    Asker, AutoAllows, AutoPolicy, ChatFiles, ImageDescriber, SecretFiller, SecretRequest,
    TaintGuard, WorkFolder,
};
use crate::engine::{self, Pages, Pointer, Settling};
use crate::error::ToolError;
use crate::permit::{ConfirmHook, DownloadAsk, permit};
use crate::prompt::EngineCaps;
use crate::result::{PageBody, Reply, TabLine, ToolResult, compose};
use crate::upload;

/// The default search address: `%s` becomes the words (AMB-6).
pub const DEFAULT_SEARCH_URL: &str = "https://duckduckgo.com/?q=%s";

/// The longest browser_wait waits (AMB-6).
pub const MAX_WAIT: Duration = Duration::from_secs(30);

/// How the toolbox is set up: the embedder's traits and the settings the rules read.
#[derive(Debug, Clone)]
pub struct ToolsConfig {
    /// Carries questions to the person.
    pub asker: Arc<dyn Asker>,
    /// Fills secret fields from the person's vault; `None` hands them over (SEC-2).
    pub secret_filler: Option<Arc<dyn SecretFiller>>,
    /// The files uploads may draw from (UP-2).
    pub chat_files: Arc<dyn ChatFiles>,
    /// Auto mode's policy (PERM-10).
    pub auto_policy: Arc<dyn AutoPolicy>,
    /// Says whether the conversation read untrusted content; its note goes on the cards
    /// (PERM-13, UP-10). `None`: never tainted.
    pub taint_guard: Option<Arc<dyn TaintGuard>>,
    /// Describes screenshots for conversations whose engine can't see (TOOL-18).
    pub image_describer: Option<Arc<dyn ImageDescriber>>,
    /// The network settings navigation is judged under (NET-5, NET-6).
    pub net: NetSettings,
    /// The significant words (HS-1).
    pub stakes: StakesWords,
    /// The search address for browser_tabs open with `search` (TAB-8).
    pub search_url: String,
    /// Where downloads the person keeps go (the workspace's `Downloads`); `None` leaves
    /// downloads to the browser's default and asks nothing (DL-1 needs it set).
    pub downloads: Option<std::path::PathBuf>,
}

impl ToolsConfig {
    /// Defaults around `asker`: no secret filler, no chat files, Auto without the site
    /// question, nothing local allowed, the built-in words, DuckDuckGo for searches.
    pub fn new(asker: Arc<dyn Asker>) -> Self {
        ToolsConfig {
            asker,
            secret_filler: None,
            chat_files: Arc::new(WorkFolder::default()),
            auto_policy: Arc::new(AutoAllows),
            taint_guard: None,
            image_describer: None,
            net: NetSettings::default(),
            stakes: StakesWords::default(),
            search_url: DEFAULT_SEARCH_URL.to_owned(),
            downloads: None,
        }
    }
}

/// The fifteen tools over one browser. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Tools {
    inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) browser: Browser,
    pub(crate) config: ToolsConfig,
    chats: StdMutex<HashMap<String, Arc<ChatState>>>,
    /// The download watch of the current browser launch, by launch count (DL-1).
    downloads: tokio::sync::Mutex<Option<(u32, DownloadWatch)>>,
    /// The conversation whose step runs now, for download questions.
    pub(crate) stepping: StdMutex<String>,
}

/// One conversation's state in the toolbox.
#[derive(Debug)]
pub(crate) struct ChatState {
    pub(crate) id: String,
    mode: StdMutex<Mode>,
    /// Sites the person allowed for this chat (PERM-5).
    sites: StdMutex<HashSet<String>>,
    /// Calls run one at a time (TOOL-11).
    turn: tokio::sync::Mutex<()>,
    /// The person said yes to a significant act in this step (DLG-7).
    vouched: AtomicBool,
    /// Whether the conversation's engine sees images (TOOL-18).
    vision: AtomicBool,
    /// The size of the last screenshot, for click_at (GES-12).
    screenshot: StdMutex<Option<Size>>,
    /// Each tab's reader and dialog watch.
    pages: Pages,
    conversation: Conversation,
}

fn lock<T>(mutex: &StdMutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ChatState {
    pub(crate) fn site_allowed(&self, site: &str) -> bool {
        lock(&self.sites).contains(site)
    }

    pub(crate) fn allow_site(&self, site: &str) {
        lock(&self.sites).insert(site.to_owned());
    }

    pub(crate) fn vouched(&self) -> bool {
        self.vouched.load(Ordering::SeqCst)
    }

    pub(crate) fn vouch(&self) {
        self.vouched.store(true, Ordering::SeqCst);
    }

    pub(crate) fn mode(&self) -> Mode {
        *lock(&self.mode)
    }
}

impl Tools {
    /// The toolbox over `browser`, set up by `config`.
    pub fn new(browser: Browser, config: ToolsConfig) -> Tools {
        Tools {
            inner: Arc::new(Inner {
                browser,
                config,
                chats: StdMutex::new(HashMap::new()),
                downloads: tokio::sync::Mutex::new(None),
                stepping: StdMutex::new(String::new()),
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
        let state = {
            let mut chats = lock(&self.inner.chats);
            Arc::clone(chats.entry(id.to_owned()).or_insert_with(|| {
                Arc::new(ChatState {
                    id: id.to_owned(),
                    mode: StdMutex::new(mode),
                    sites: StdMutex::new(HashSet::new()),
                    turn: tokio::sync::Mutex::new(()),
                    vouched: AtomicBool::new(false),
                    vision: AtomicBool::new(true),
                    screenshot: StdMutex::new(None),
                    pages: Pages::default(),
                    conversation: self.inner.browser.conversation(id),
                })
            }))
        };
        *lock(&state.mode) = mode;
        Chat {
            tools: self.clone(),
            state,
        }
    }

    /// Forgets conversation `id`'s answers (its tabs stay with the browser).
    pub fn forget(&self, id: &str) {
        lock(&self.inner.chats).remove(id);
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
        &self.state.id
    }

    /// The conversation's mode.
    pub fn mode(&self) -> Mode {
        self.state.mode()
    }

    /// Tells the tools what the conversation's engine can do: an engine that can't see gets
    /// a screenshot described in words instead of the image (TOOL-18).
    pub fn set_engine(&self, caps: EngineCaps) {
        self.state.vision.store(caps.vision, Ordering::SeqCst);
    }

    /// The runtime's view of this conversation.
    pub fn conversation(&self) -> &Conversation {
        &self.state.conversation
    }

    /// Calls tool `name` with JSON `args`, as every door does. Never fails: a refusal or
    /// failure is a result whose text is one sentence naming the next step.
    pub async fn call(&self, name: &str, args: &Value) -> ToolResult {
        match ToolCall::parse(name, args) {
            Ok(call) => self.run(&call).await,
            Err(e) => ToolResult::error(e.to_string()),
        }
    }

    /// Runs one parsed call. Calls of one conversation run one at a time (TOOL-11).
    pub async fn run(&self, call: &ToolCall) -> ToolResult {
        let _turn = self.state.turn.lock().await;
        self.state.vouched.store(false, Ordering::SeqCst);
        let guard_log = self.tools.inner.browser.guard_log();
        let cursor = guard_log.cursor();
        let outcome = self.dispatch(call).await;
        // NET-10: requests the guard refused during the step, without their address.
        let blocked = guard_log
            .since(cursor)
            .iter()
            .filter(|b| b.code != "page-scheme-cancelled")
            .count();
        let (reply, is_error) = match outcome {
            Ok(reply) => (reply, false),
            Err(e) => (Reply::line(e.to_string()), true),
        };
        let (mut notes, tabs) = self.footer().await;
        if let Some((_, watch)) = self.tools.inner.downloads.lock().await.as_ref() {
            notes.extend(watch.take_notes().iter().map(|n| n.sentence()));
        }
        if blocked > 0 && !notes.iter().any(|n| n.contains(BLOCKED_SENTENCE)) {
            notes.push(BLOCKED_SENTENCE.to_owned());
        }
        let dialogs = self.state.pages.dialog_notes();
        compose(reply, &notes, &dialogs, &tabs, is_error)
    }

    /// The runtime's notes and the tab list, when the browser runs.
    async fn footer(&self) -> (Vec<String>, Vec<TabLine>) {
        let conv = &self.state.conversation;
        if self.tools.inner.browser.status().await.state != RunState::Running {
            return (Vec::new(), Vec::new());
        }
        let notes = conv.take_notes().await;
        let tabs = conv
            .tabs()
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

    async fn dispatch(&self, call: &ToolCall) -> Result<Reply, ToolError> {
        let conv = &self.state.conversation;
        let inner = &self.tools.inner;
        let pages = &self.state.pages;
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
            inner.browser.ensure_running().await?;
        }
        match call {
            ToolCall::Open { url } => {
                let url = self.check_address(url)?;
                let _step = self.step().await;
                let tab = conv.open(url.as_str()).await?;
                pages.forget(&tab.id).await;
                let notes = engine::after_open(conv, self.decline_banners()).await;
                let mut reply = Reply::page(pages.read_part(conv, 1).await?);
                reply.lines = notes;
                Ok(reply)
            }
            ToolCall::Read { part, find } => match find {
                Some(needle) => match pages.find(conv, needle).await? {
                    Some(body) => Ok(Reply::page(body)),
                    None => Ok(Reply::line(format!(
                        "“{needle}” is not on the page; read it with browser_read, or look for other words."
                    ))),
                },
                None => Ok(Reply::page(
                    pages.read_part(conv, part.unwrap_or(1) as usize).await?,
                )),
            },
            ToolCall::Back => {
                engine::need_tab(conv).await?;
                let _step = self.step().await;
                if !engine::back(conv).await? {
                    return Ok(Reply::line(
                        "There is no earlier page in this tab; open an address with browser_open.",
                    ));
                }
                self.changed(Vec::new()).await
            }
            ToolCall::Screenshot => {
                engine::need_tab(conv).await?;
                let (png, size) = pages.screenshot(conv).await?;
                *lock(&self.state.screenshot) = Some(size);
                let mut reply = Reply::line(format!(
                    "A screenshot of the active tab, {}×{} pixels.",
                    size.width, size.height
                ));
                if self.state.vision.load(Ordering::SeqCst) {
                    reply.image = Some(conch_browser::page::base64::encode(&png));
                } else {
                    // A model that can't see gets words instead (TOOL-18).
                    let words = match &inner.config.image_describer {
                        Some(describer) => describer.describe(&png).await,
                        None => "This model can't see images, so the picture is not included; read the page with browser_read instead.".to_owned(),
                    };
                    reply.lines.push(words);
                }
                Ok(reply)
            }
            ToolCall::Wait {
                text,
                gone,
                seconds,
            } => self.wait(text.as_deref(), gone.as_deref(), *seconds).await,
            ToolCall::Scroll {
                direction,
                reference,
                amount,
            } => {
                engine::need_tab(conv).await?;
                let element = match reference {
                    Some(reference) => Some(engine::target(conv, reference).await?.0),
                    None => None,
                };
                let _step = self.step().await;
                let times = amount.round().clamp(1.0, 10.0) as u32;
                engine::scroll(conv, *direction == Direction::Up, element.as_ref(), times)
                    .await?;
                self.changed(Vec::new()).await
            }
            ToolCall::Handoff { .. } => Err(ToolError::Usage(
                "No one can take over right now: the live view isn't running, so carry on without a handoff or tell the person in your reply what they need to do.".to_owned(),
            )),
            ToolCall::Tabs {
                action,
                url,
                search,
                tab,
            } => self.tabs(*action, url.as_deref(), search.as_deref(), tab.as_deref()).await,
            ToolCall::Click { reference, how, to } => {
                let site = self.site().await?;
                let (element, target) = engine::target(conv, reference).await?;
                let mut facts = self.facts(call.act(), site, &target);
                let drop = match (how, to) {
                    (How::Drag, Some(to)) => {
                        // A drag checks the words of both ends (HS-4).
                        let (drop, drop_facts) = engine::target(conv, to).await?;
                        if facts.significant_words.is_none() {
                            facts.significant_words =
                                self.significant(&drop_facts.role, &drop_facts.words);
                        }
                        Some(drop)
                    }
                    (How::Drag, None) => {
                        return Err(ToolError::Usage(
                            "A drag needs `to`, the ref of where to drop; call browser_click again with it.".to_owned(),
                        ));
                    }
                    _ => None,
                };
                permit(inner, &self.state, Some(&element), call.name(), facts, false).await?;
                let _step = self.step().await;
                match (how, drop) {
                    (How::Drag, Some(drop)) => engine::drag(&element, &drop).await?,
                    (How::Double, _) => engine::click(&element, Pointer::Double, Settling::Now).await?,
                    (How::Right, _) => engine::click(&element, Pointer::Right, Settling::Now).await?,
                    (How::Hover, _) => engine::click(&element, Pointer::Hover, Settling::Now).await?,
                    _ => engine::click(&element, Pointer::Click, Settling::Now).await?,
                }
                self.changed(Vec::new()).await
            }
            ToolCall::Type { reference, text } => {
                let site = self.site().await?;
                let (element, target) = engine::target(conv, reference).await?;
                let mut facts = self.facts(ActKind::Type, site.clone(), &target);
                let secret = match (facts.secret_target, &inner.config.secret_filler) {
                    (true, Some(filler)) => {
                        let request = SecretRequest {
                            conversation: self.state.id.clone(),
                            site: site.clone(),
                            url: engine::current_url(conv).await.unwrap_or_default(),
                            field: target.field.clone(),
                        };
                        let value = filler.secret_for(&request).await;
                        if value.is_some() {
                            // Filled from the vault: the agent's text is never used (SEC-2).
                            facts.secret_target = false;
                        }
                        value
                    }
                    _ => None,
                };
                permit(inner, &self.state, Some(&element), call.name(), facts, carries(&[text])).await?;
                let _step = self.step().await;
                match secret {
                    Some(secret) => {
                        engine::fill_secret(&element, secret.expose()).await?;
                        self.changed(vec![
                            "Filled that field from the person's saved passwords; its value is not shown.".to_owned(),
                        ])
                        .await
                    }
                    None => {
                        engine::type_text(&element, text, Settling::Now).await?;
                        self.changed(Vec::new()).await
                    }
                }
            }
            ToolCall::Press { key, reference } => {
                let chord = Chord::parse(key).map_err(|_| {
                    ToolError::Usage(format!(
                        "“{key}” is not a key Conch knows; use a key name like Enter, Tab, Escape, ArrowDown or Control+A."
                    ))
                })?;
                let site = self.site().await?;
                let (element, target) = match reference {
                    Some(reference) => {
                        let (element, target) = engine::target(conv, reference).await?;
                        (Some(element), target)
                    }
                    None => (None, engine::focused(conv).await?),
                };
                let mut facts = self.facts(ActKind::Press, site, &target);
                // Enter in a form's field submits the form: it is judged by the control
                // that will submit it, the form's default button, and the card shows that
                // button (issue 11, HS-8, HS-2).
                let mut shown = None;
                if chord.key() == "Enter"
                    && facts.significant_words.is_none()
                    && let Some((button, submitter)) =
                        engine::submitter(conv, element.as_ref()).await?
                {
                    facts.significant_words = self.significant(&submitter.role, &submitter.words);
                    if facts.significant_words.is_some() {
                        shown = button;
                    }
                }
                facts.keys = Some(chord);
                let card = shown.as_ref().or(element.as_ref());
                permit(inner, &self.state, card, call.name(), facts, false).await?;
                let _step = self.step().await;
                engine::press(conv, key, element.as_ref()).await?;
                self.changed(Vec::new()).await
            }
            ToolCall::Select { reference, values } => {
                let site = self.site().await?;
                let (element, target) = engine::target(conv, reference).await?;
                let facts = self.facts(ActKind::Select, site, &target);
                permit(inner, &self.state, Some(&element), call.name(), facts, false).await?;
                let _step = self.step().await;
                let picked = engine::select(&element, values, Settling::Now).await?;
                let picked: Vec<String> = picked.iter().map(|p| format!("“{p}”")).collect();
                self.changed(vec![format!("Chose {}.", picked.join(", "))])
                    .await
            }
            ToolCall::ClickAt {
                x,
                y,
                how,
                to,
                text,
                description,
            } => {
                let Some(shot) = *lock(&self.state.screenshot) else {
                    return Err(Refusal::new(RefusalCode::NoScreenshot).into());
                };
                let site = self.site().await?;
                let (point, target) = engine::under_point(conv, Point { x: *x, y: *y }, shot).await?;
                let mut facts = self.facts(call.act(), site, &target);
                // The page's words decide, and the agent's description too (HS-5).
                if facts.significant_words.is_none() {
                    facts.significant_words = self.significant("", description);
                }
                // The field focused after the click is checked before any key (SEC-6).
                facts.secret_target = false;
                let drag_to = match (how, to) {
                    (How::Drag, Some((tx, ty))) => {
                        let (to_point, to_facts) =
                            engine::under_point(conv, Point { x: *tx, y: *ty }, shot).await?;
                        if facts.significant_words.is_none() {
                            facts.significant_words =
                                self.significant(&to_facts.role, &to_facts.words);
                        }
                        Some(to_point)
                    }
                    (How::Drag, None) => {
                        return Err(ToolError::Usage(
                            "A drag needs to_x and to_y, where to drop; call browser_click_at again with them.".to_owned(),
                        ));
                    }
                    _ => None,
                };
                permit(inner, &self.state, None, call.name(), facts, false).await?;
                let _step = self.step().await;
                let pointer = match how {
                    How::Double => Some(Pointer::Double),
                    How::Right => Some(Pointer::Right),
                    How::Hover => Some(Pointer::Hover),
                    _ => None,
                };
                engine::click_at(conv, point, pointer, drag_to, text.as_deref()).await?;
                self.changed(Vec::new()).await
            }
            ToolCall::Upload { reference, files } => {
                let site = self.site().await?;
                let checked = upload::check(
                    &inner.config.chat_files,
                    &inner.browser.config().home,
                    &self.state.id,
                    files,
                )?;
                let (element, target) = engine::target(conv, reference).await?;
                let mut facts = self.facts(ActKind::Upload, site, &target);
                facts.secret_target = false;
                facts.uploads = checked.iter().map(|f| f.facts.item()).collect();
                permit(inner, &self.state, Some(&element), call.name(), facts, false).await?;
                let _step = self.step().await;
                let paths: Vec<std::path::PathBuf> =
                    checked.iter().map(|f| f.facts.resolved.clone()).collect();
                let held = engine::upload(&element, &paths).await?;
                let count = held.len();
                self.changed(vec![format!(
                    "The file box now holds {count} file{}.",
                    if count == 1 { "" } else { "s" }
                )])
                .await
            }
            ToolCall::Form { fields } => self.form(fields).await,
        }
    }

    /// browser_form: one permit for the whole form, then each field; a field that can't
    /// be filled is skipped and named (FORM-3, FORM-4, FORM-5, HS-7).
    async fn form(&self, fields: &[FormField]) -> Result<Reply, ToolError> {
        let conv = &self.state.conversation;
        let inner = &self.tools.inner;
        let site = self.site().await?;
        let values: Vec<&str> = fields.iter().map(|f| f.value.as_str()).collect();
        let mut facts = PermitFacts::new(self.mode(), ActKind::Form, site);
        let mut targets = Vec::with_capacity(fields.len());
        for field in fields {
            let resolved = engine::target(conv, &field.reference).await;
            if let Ok((_, target)) = &resolved
                && facts.significant_words.is_none()
                && (target.role == "checkbox" || target.role == "radio")
                && is_ticked(&field.value)
            {
                facts.significant_words = self.significant(&target.role, &target.words);
            }
            targets.push(resolved);
        }
        permit(
            inner,
            &self.state,
            None,
            "browser_form",
            facts,
            carries(&values),
        )
        .await?;
        let _step = self.step().await;
        let mut filled = 0usize;
        let mut skipped: Vec<String> = Vec::new();
        // The fields are filled without waiting after each; the page settles once after
        // the last one.
        let settling = engine::begin_settling(conv).await;
        for (field, resolved) in fields.iter().zip(targets) {
            let r = &field.reference;
            let (element, target) = match resolved {
                Ok(found) => found,
                Err(e) => {
                    skipped.push(format!("{r}: {e}"));
                    continue;
                }
            };
            let outcome = if target.secret {
                Err(ToolError::Usage(
                    "a password, code or card field: Conch never types into it; call browser_type on it (or browser_handoff)".to_owned(),
                ))
            } else if target.is_file_input()
                || engine::is_file_input(&element).await.unwrap_or(false)
            {
                Err(ToolError::Usage(
                    "a file box: put files into it with browser_upload".to_owned(),
                ))
            } else if target.role == "checkbox" || target.role == "radio" {
                let want = is_ticked(&field.value);
                match engine::is_checked(&element).await {
                    Ok(now) if now == want => Ok(()),
                    Ok(_) if !want && target.role == "radio" => Err(ToolError::Usage(
                        "a radio can't be unticked; tick another one of its group".to_owned(),
                    )),
                    Ok(_) => engine::click(&element, Pointer::Click, Settling::Later).await,
                    Err(e) => Err(e),
                }
            } else if target.tag == "select" || target.role == "listbox" {
                engine::select(
                    &element,
                    std::slice::from_ref(&field.value),
                    Settling::Later,
                )
                .await
                .map(|_| ())
            } else {
                engine::type_text(&element, &field.value, Settling::Later).await
            };
            match outcome {
                Ok(()) => filled += 1,
                Err(e) => skipped.push(format!("{r}: {}", e.to_string().trim_end_matches('.'))),
            }
        }
        if let Some(settling) = settling {
            engine::finish_settling(settling).await;
        }
        let mut lines = vec![format!(
            "Filled {filled} of {} field{}.",
            fields.len(),
            if fields.len() == 1 { "" } else { "s" }
        )];
        if !skipped.is_empty() {
            lines.push(format!("Skipped: {}.", skipped.join("; ")));
        }
        self.changed(lines).await
    }

    /// What changed after an act, after `lines`.
    async fn changed(&self, lines: Vec<String>) -> Result<Reply, ToolError> {
        let mut reply = Reply {
            lines,
            ..Reply::default()
        };
        match self.state.pages.changes(&self.state.conversation).await? {
            Some(body) => reply.page = Some(body),
            None => reply
                .lines
                .push("Nothing on the page changed that a read shows.".to_owned()),
        }
        Ok(reply)
    }

    /// Marks the agent's step on the conversation's tabs, for the page's dialogs.
    async fn step(&self) -> Vec<conch_browser::page::dialog::StepGuard> {
        *lock(&self.tools.inner.stepping) = self.state.id.clone();
        self.watch_downloads().await;
        let hook = Arc::new(ConfirmHook {
            inner: Arc::downgrade(&self.tools.inner),
            chat: Arc::downgrade(&self.state),
        });
        self.state
            .pages
            .step(&self.state.conversation, self.mode(), hook)
            .await
            .unwrap_or_default()
    }

    /// The person's "decline cookie banners" setting (browser.json).
    fn decline_banners(&self) -> bool {
        let home = &self.tools.inner.browser.config().home;
        conch_browser::store::BrowserSettings::load(home, &conch_browser::SystemClock)
            .map(|loaded| loaded.value.decline_cookie_banners)
            .unwrap_or(false)
    }

    /// Installs the download watch on this browser launch, once (DL-1, AMB-9).
    async fn watch_downloads(&self) {
        let inner = &self.tools.inner;
        let Some(downloads) = inner.config.downloads.clone() else {
            return;
        };
        let launch = inner.browser.status().await.launches;
        let mut current = inner.downloads.lock().await;
        if current.as_ref().is_some_and(|(at, _)| *at == launch) {
            return;
        }
        let Ok(page) = self.state.conversation.page().await else {
            return;
        };
        let places = DownloadPlaces::Local {
            staging: inner
                .browser
                .config()
                .home
                .browser_dir()
                .join("downloads-staging"),
            downloads,
        };
        let hook = Arc::new(DownloadAsk {
            inner: Arc::downgrade(&self.tools.inner),
        });
        match watch_downloads(&page.connection().browser(), places, hook).await {
            Ok(watch) => *current = Some((launch, watch)),
            Err(e) => tracing::warn!(target: "conch_tools", %e, "downloads can't be watched"),
        }
    }

    /// Judges an address the agent asked to open: http, https or about:blank only (NET-6),
    /// and never a refused place (NET-1, NET-3, NET-5).
    fn check_address(&self, address: &str) -> Result<Url, ToolError> {
        let trimmed = address.trim();
        let url = Url::parse(trimmed).or_else(|e| match e {
            // "example.com" without a scheme: https is meant.
            url::ParseError::RelativeUrlWithoutBase if !trimmed.contains(' ') => {
                Url::parse(&format!("https://{trimmed}"))
            }
            other => Err(other),
        });
        let url = url.map_err(|_| ToolError::BadAddress(trimmed.to_owned()))?;
        if let Verdict::Refuse(refusal) = navigation_verdict(&url, NavigationBy::Agent) {
            return Err(refusal.into());
        }
        if let Verdict::Refuse(refusal) = verdict_for_url(&url, &self.tools.inner.config.net) {
            return Err(refusal.into());
        }
        Ok(url)
    }

    /// The site of the active tab's page, for the permit flow.
    async fn site(&self) -> Result<Site, ToolError> {
        let conv = &self.state.conversation;
        if engine::active_tab(conv).await?.is_none() {
            return Err(ToolError::NoPage);
        }
        let url = engine::current_url(conv).await?;
        let parsed = Url::parse(&url).map_err(|_| ToolError::NoPage)?;
        Site::of_url(&parsed).map_err(|_| ToolError::NoPage)
    }

    /// The permit facts of an act on `target`.
    fn facts(&self, act: ActKind, site: Site, target: &engine::TargetFacts) -> PermitFacts {
        let mut facts = PermitFacts::new(self.mode(), act, site);
        facts.significant_words = self.significant(&target.role, &target.words);
        facts.secret_target = target.secret || classify_field(&target.field).is_secret();
        // An act inside a frame of another site names that site too (PERM-16).
        facts.frame_site = target
            .document_url
            .as_deref()
            .and_then(|u| Url::parse(u).ok())
            .and_then(|u| Site::of_url(&u).ok())
            .filter(|frame| *frame != facts.site);
        facts
    }

    /// The control's words when they name a significant act (HS-1): a control of `role`
    /// (empty when unknown), so a link whose name is a long description is navigation.
    fn significant(&self, role: &str, words: &str) -> Option<String> {
        self.tools
            .inner
            .config
            .stakes
            .on_control(role, words)
            .map(|_| words.trim().to_owned())
    }

    async fn wait(
        &self,
        text: Option<&str>,
        gone: Option<&str>,
        seconds: Option<f64>,
    ) -> Result<Reply, ToolError> {
        let conv = &self.state.conversation;
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
        reply.page = self.state.pages.changes(conv).await?;
        Ok(reply)
    }

    async fn tabs(
        &self,
        action: TabAction,
        url: Option<&str>,
        search: Option<&str>,
        tab: Option<&str>,
    ) -> Result<Reply, ToolError> {
        let conv = &self.state.conversation;
        match action {
            TabAction::List => {
                let tabs = conv.tabs().await?;
                if tabs.is_empty() {
                    return Ok(Reply::line(
                        "No tabs are open yet; open one with browser_open.",
                    ));
                }
                let listed: Vec<String> = tabs
                    .iter()
                    .map(|t| {
                        let active = if t.active { " (active)" } else { "" };
                        format!("{}{active}: {} — {}", t.id, t.title, t.url)
                    })
                    .collect();
                let mut reply = Reply::line(format!("{} tab(s) open.", tabs.len()));
                reply.page = Some(PageBody::bounded(&listed.join("\n")));
                Ok(reply)
            }
            TabAction::Open => {
                let address = match (url, search) {
                    (Some(url), _) => url.to_owned(),
                    (None, Some(words)) => self.search_address(words),
                    (None, None) => {
                        return Err(ToolError::Usage(
                            "browser_tabs open needs a url or search words; call it again with one.".to_owned(),
                        ));
                    }
                };
                let url = self.check_address(&address)?;
                let opened = conv.new_tab(url.as_str()).await?;
                let notes = engine::after_open(conv, self.decline_banners()).await;
                let mut reply = Reply::page(self.state.pages.read_part(conv, 1).await?);
                reply.lines = notes;
                reply
                    .lines
                    .insert(0, format!("Opened a new tab, {}.", opened.id));
                Ok(reply)
            }
            TabAction::Switch => {
                let tab = tab.ok_or_else(|| {
                    ToolError::Usage(
                        "browser_tabs switch needs a tab, e.g. t2; list them with browser_tabs list.".to_owned(),
                    )
                })?;
                conv.switch(tab).await?;
                Ok(Reply::page(self.state.pages.read_part(conv, 1).await?))
            }
            TabAction::Close => {
                let tab = tab.ok_or_else(|| {
                    ToolError::Usage(
                        "browser_tabs close needs a tab, e.g. t2; list them with browser_tabs list.".to_owned(),
                    )
                })?;
                conv.close(tab).await?;
                Ok(Reply::line(format!("Closed {tab}.")))
            }
        }
    }

    /// The search engine's address for `words` (TAB-8).
    fn search_address(&self, words: &str) -> String {
        let encoded: String = url::form_urlencoded::byte_serialize(words.as_bytes()).collect();
        self.tools.inner.config.search_url.replace("%s", &encoded)
    }
}

/// Whether a form value ticks a box.
fn is_ticked(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "true" | "yes" | "on" | "checked" | "1"
    )
}
