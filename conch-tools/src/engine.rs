//! Every call conch-tools makes into the browser runtime, in one place: the active tab,
//! reading (snapshot, diff, parts, find), resolving refs and describing what they point
//! to, acting through conch-browser's page layer, screenshots, history, waiting, and the
//! page's dialogs during the agent's step.
//!
//! The tools above this module decide; this module only touches the page, and only after
//! the permit flow said yes. Each tab keeps a [`Reader`] (the diff baseline) and a
//! [`DialogWatch`] whose confirms go through the permit flow.
//!
//! Deliberately absent: any rule (those are conch-policy's and the permit flow's), and any
//! script the agent wrote: every expression here is Conch's own.

use conch_browser::sync::lock;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use conch_browser::Conversation;
use conch_browser::page::act::{self, ActError, ActOptions, Commit, PointHow, Under};
use conch_browser::page::dialog::{self, DialogHook, DialogWatch, StepGuard};
use conch_browser::page::script::body;
use conch_browser::page::settle::{Settle, SettleOptions};
use conch_browser::page::{
    Change, Element, PageError, Reader, Snapshot, Who, changes_since, evaluate_in_world,
    page_address, read, resolve, screenshot_for_model,
};
use conch_policy::{FieldFacts, Mode, Point, Size};
use serde_json::{Value, json};

use crate::error::ToolError;
use crate::result::PageBody;

/// The most characters of a title in a snapshot's header.
const TITLE_CHARS: usize = 200;

/// What the permit flow needs to know about the element an act lands on.
#[derive(Debug, Clone, Default)]
pub(crate) struct TargetFacts {
    /// The element's own words: accessible name, text, value, label (HS-1).
    pub(crate) words: String,
    /// What the page says about it as a field (SEC-1).
    pub(crate) field: FieldFacts,
    /// Whether the secrets rule calls it secret.
    pub(crate) secret: bool,
    /// Its role.
    pub(crate) role: String,
    /// Its tag, lowercase.
    pub(crate) tag: String,
    /// The address of the document that holds it (a frame's, inside a frame).
    pub(crate) document_url: Option<String>,
    /// Whether it is an editable text field.
    pub(crate) editable: bool,
    /// Where it stands, for judging a commit (issue 30).
    pub(crate) commit: Box<Commit>,
}

impl TargetFacts {
    fn of(under: Under) -> TargetFacts {
        let words = if under.words.trim().is_empty() {
            under.name.clone()
        } else if under.name.trim().is_empty() || under.words.contains(under.name.trim()) {
            under.words.clone()
        } else {
            format!("{} {}", under.name, under.words)
        };
        TargetFacts {
            words,
            field: under.field.unwrap_or_default(),
            secret: under.secret,
            role: under.role,
            tag: under.tag,
            document_url: None,
            editable: under.editable,
            commit: under.commit,
        }
    }

    /// Whether it is a file box.
    pub(crate) fn is_file_input(&self) -> bool {
        self.tag == "input" && self.field.input_type.eq_ignore_ascii_case("file")
    }
}

/// The page memory of one conversation: a reader and a dialog watch per tab.
#[derive(Debug, Default)]
pub(crate) struct Pages {
    readers: tokio::sync::Mutex<HashMap<String, Reader>>,
    watches: StdMutex<HashMap<String, (String, DialogWatch)>>,
}

/// A page error as one sentence starting with a capital.
fn sentence(e: &PageError) -> ToolError {
    match e {
        PageError::RefGone(r) | PageError::NoSuchRef(r) | PageError::FrameGone(r) => {
            ToolError::StaleRef(r.clone())
        }
        PageError::NoSuchPart { parts, .. } => ToolError::NoSuchPart { parts: *parts },
        PageError::Busy { seconds } => ToolError::Busy { seconds: *seconds },
        other => ToolError::Page(other.to_string()),
    }
}

impl From<PageError> for ToolError {
    fn from(e: PageError) -> Self {
        sentence(&e)
    }
}

impl From<ActError> for ToolError {
    fn from(e: ActError) -> Self {
        match e {
            ActError::Gone { reference } => ToolError::StaleRef(reference),
            other => ToolError::Act(other.to_string()),
        }
    }
}

/// The id of the conversation's active tab, if it has one.
pub(crate) async fn active_tab(conv: &Conversation) -> Result<Option<String>, ToolError> {
    Ok(conv.active_tab_id().await?)
}

/// The active tab's id, or the sentence that says to open a page.
pub(crate) async fn need_tab(conv: &Conversation) -> Result<String, ToolError> {
    active_tab(conv).await?.ok_or(ToolError::NoPage)
}

/// Evaluates one of Conch's own expressions in the active tab, without a user gesture, in
/// Conch's isolated world: a wait or a check reads the page where the page cannot
/// redefine `innerText`, `textContent` or `readyState` (issue 11 review).
pub(crate) async fn evaluate(conv: &Conversation, expression: &str) -> Result<Value, ToolError> {
    let page = conv.page().await?;
    Ok(evaluate_in_world(&page, expression).await?)
}

/// The active tab's address, from the browser's frame tree, not from a script the page
/// could answer: it names the site for the permit flow and the secret filler.
pub(crate) async fn current_url(conv: &Conversation) -> Result<String, ToolError> {
    let page = conv.page().await?;
    Ok(page_address(&page).await?)
}

/// How long the first read of a tab an act opened waits for its page to load (TAB-3).
const NEW_TAB_LOAD: Duration = Duration::from_secs(10);

/// The header line of a whole snapshot (SNAP-13).
fn header(tab: &str, snapshot: &Snapshot) -> String {
    let mut short = snapshot.clone();
    if short.title.chars().count() > TITLE_CHARS {
        short.title = short.title.chars().take(TITLE_CHARS).collect();
    }
    short.title = short.title.replace(['\n', '\r'], " ");
    short.text.clear();
    short.header(tab)
}

/// Part `n` of a snapshot, under its header, as a result body.
fn whole(tab: &str, snapshot: &Snapshot, n: usize) -> Result<PageBody, ToolError> {
    let part = snapshot.part(n)?;
    Ok(PageBody {
        text: format!("{}\n{part}", header(tab, snapshot)),
    })
}

/// The first look at a new page, under its header (SNAP-6, SNAP-13, issue 11): the whole
/// snapshot when it is short, else what can be acted on and the top of its text.
fn first_look(tab: &str, snapshot: &Snapshot) -> PageBody {
    PageBody::bounded(&format!(
        "{}\n{}",
        header(tab, snapshot),
        snapshot.first_look()
    ))
}

impl Pages {
    /// Reads the active tab and gives its first look (SNAP-6, SNAP-13): what a new page,
    /// a new tab or a new document shows first.
    pub(crate) async fn first_look(&self, conv: &Conversation) -> Result<PageBody, ToolError> {
        let tab = need_tab(conv).await?;
        let page = conv.page().await?;
        let mut readers = self.readers.lock().await;
        let reader = readers.entry(tab.clone()).or_default();
        let snapshot = read(&page, reader).await?;
        Ok(first_look(&tab, &snapshot))
    }

    /// Reads the active tab whole and gives part `n` (SNAP-1, SNAP-8, SNAP-13).
    pub(crate) async fn read_part(
        &self,
        conv: &Conversation,
        n: usize,
    ) -> Result<PageBody, ToolError> {
        let tab = need_tab(conv).await?;
        let page = conv.page().await?;
        let mut readers = self.readers.lock().await;
        let reader = readers.entry(tab.clone()).or_default();
        let snapshot = read(&page, reader).await?;
        whole(&tab, &snapshot, n)
    }

    /// The lines of the whole page holding `needle`, with their parts (SNAP-11), each
    /// with its neighbourhood: the item around it, with its refs (issue 11, class 7).
    pub(crate) async fn find(
        &self,
        conv: &Conversation,
        needle: &str,
    ) -> Result<Option<PageBody>, ToolError> {
        let tab = need_tab(conv).await?;
        let page = conv.page().await?;
        let mut readers = self.readers.lock().await;
        let reader = readers.entry(tab.clone()).or_default();
        let snapshot = read(&page, reader).await?;
        let found = snapshot.find(needle);
        if found.is_empty() {
            return Ok(None);
        }
        let lines: Vec<String> = found
            .iter()
            .map(|f| {
                if f.block.len() > 1 {
                    format!("(part {})\n{}", f.part, f.block.join("\n"))
                } else {
                    format!("(part {}) {}", f.part, f.line)
                }
            })
            .collect();
        Ok(Some(PageBody::bounded(&lines.join("\n"))))
    }

    /// What changed on the active tab since the agent last read it (SNAP-5, SNAP-6): a
    /// diff, the new page's first look, or `None` when nothing changed.
    pub(crate) async fn changes(&self, conv: &Conversation) -> Result<Option<PageBody>, ToolError> {
        let tab = need_tab(conv).await?;
        let page = conv.page().await?;
        // A tab the act opened (TAB-3) was never read: its first look waits for its page.
        let fresh = !self.readers.lock().await.contains_key(&tab);
        if fresh {
            // Bounded; a page that never finishes is read as it stands.
            let _ = conv.active_tab_loaded(NEW_TAB_LOAD).await;
        }
        let mut readers = self.readers.lock().await;
        let reader = readers.entry(tab.clone()).or_default();
        match changes_since(&page, reader, Who::Agent).await? {
            Change::Nothing => Ok(None),
            Change::Diff(text) => Ok(Some(PageBody::bounded(&text))),
            Change::Whole(snapshot) => Ok(Some(first_look(&tab, &snapshot))),
        }
    }

    /// What the person changed on the active tab since the agent last read it, labelled
    /// as theirs (SNAP-7), so the step's own diff after it shows only the step's changes.
    pub(crate) async fn person_changes(&self, conv: &Conversation) -> Option<PageBody> {
        let tab = need_tab(conv).await.ok()?;
        let page = conv.page().await.ok()?;
        let mut readers = self.readers.lock().await;
        // A tab the agent never read has no baseline to compare with.
        let reader = readers.get_mut(&tab)?;
        match changes_since(&page, reader, Who::Person).await.ok()? {
            Change::Diff(text) => Some(PageBody::bounded(&text)),
            Change::Whole(snapshot) => Some(first_look(&tab, &snapshot)),
            Change::Nothing => None,
        }
    }

    /// Forgets every tab's reader and dialog watch: the conversation's tabs closed when
    /// it moved to or from a browser of its own (LIVE-16), and new ones reuse their ids.
    pub(crate) async fn clear(&self) {
        self.readers.lock().await.clear();
        lock(&self.watches).clear();
    }

    /// Forgets the active tab's baseline: the next change is the whole page.
    pub(crate) async fn forget(&self, tab: &str) {
        if let Some(reader) = self.readers.lock().await.get_mut(tab) {
            reader.forget();
        }
    }

    /// A PNG of the active tab for the model, secret fields painted over (SEC-4), with
    /// its size in CSS pixels.
    pub(crate) async fn screenshot(
        &self,
        conv: &Conversation,
    ) -> Result<(Vec<u8>, Size), ToolError> {
        let tab = need_tab(conv).await?;
        let page = conv.page().await?;
        let size = act::viewport(&page).await?;
        let mut readers = self.readers.lock().await;
        let reader = readers.entry(tab.clone()).or_default();
        let png = screenshot_for_model(&page, reader).await?;
        Ok((png, size))
    }

    /// Marks an agent step on the active tab: its dialogs get the step's answers and
    /// confirms go to `hook` (DLG-2, DLG-6). The watch is installed on first use.
    pub(crate) async fn step(
        &self,
        conv: &Conversation,
        mode: Mode,
        hook: Arc<dyn DialogHook>,
    ) -> Result<Vec<StepGuard>, ToolError> {
        let Some(tab) = active_tab(conv).await? else {
            return Ok(Vec::new());
        };
        let page = conv.page().await?;
        // Input to a tab in the background can stall (a popup of its own may be in
        // front): bring this one forward for the step, unless it is there already.
        conv.bring_to_front_for_step(&page).await;
        let session = page
            .id()
            .map(|id| id.as_str().to_owned())
            .unwrap_or_default();
        let installed = lock(&self.watches)
            .get(&tab)
            .is_some_and(|(id, _)| *id == session);
        if !installed {
            let watch = dialog::watch(&page, hook)
                .await
                .map_err(conch_browser::BrowserError::from)?;
            lock(&self.watches).insert(tab.clone(), (session, watch));
        }
        let watches = lock(&self.watches);
        Ok(watches
            .values()
            .map(|(_, watch)| watch.agent_step(mode))
            .collect())
    }

    /// The dialog notes of every tab since the last call (DLG-12): page words, to wrap.
    pub(crate) fn dialog_notes(&self) -> Vec<String> {
        lock(&self.watches)
            .values()
            .flat_map(|(_, watch)| watch.take_notes())
            .map(|note| note.sentence())
            .collect()
    }
}

/// After the active tab opened a page: Conch declines a common cookie banner when the
/// person's setting says so (LAUNCH-11), then looks for a bot check, waiting a challenge
/// out (BOT-1 … BOT-4, TAB-7). Gives the sentences for the result.
pub(crate) async fn after_open(conv: &Conversation, decline_banners: bool) -> Vec<String> {
    let Ok(page) = conv.page().await else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    if decline_banners
        && let Ok(Some(note)) =
            conch_browser::page::consent::decline_banner(&page, &ActOptions::default()).await
    {
        notes.push(note.sentence());
    }
    let wait = conch_browser::page::botcheck::BotWait::default();
    if let Ok(outcome) = conch_browser::page::botcheck::after_navigation(&page, None, wait).await
        && let Some(note) = outcome.note
    {
        notes.push(note);
    }
    notes
}

/// The element behind `reference` on the active tab, and its facts.
pub(crate) async fn target(
    conv: &Conversation,
    reference: &str,
) -> Result<(Element, TargetFacts), ToolError> {
    let page = conv.page().await?;
    let element = resolve(&page, reference).await?;
    // One look gives both what it is and the document it is in.
    let (under, document) = act::describe_element_in_document(&element).await?;
    crate::live::touched(&under.name);
    let mut facts = TargetFacts::of(under);
    facts.document_url = document;
    Ok((element, facts))
}

/// Marks the dialogs open now on the active tab, and in the frame of `within` (the control
/// about to act), so the next act can tell a confirmation opened since (issue 30). A page
/// that can't be marked leaves nothing covered.
pub(crate) async fn mark_open_dialogs(conv: &Conversation, within: Option<&Element>) -> bool {
    match conv.page().await {
        Ok(page) => act::mark_open_dialogs(&page, within).await.is_ok(),
        Err(_) => false,
    }
}

/// A PNG of the view around `element` for the question card (PERM-13, HS-2), or `None`
/// when it can't be cut.
pub(crate) async fn thumbnail(element: &Element) -> Option<Vec<u8>> {
    const MARGIN: f64 = 40.0;
    let answer = element
        .frame
        .call_raw(
            "Runtime.callFunctionOn",
            json!({
                "objectId": element.object_id,
                "functionDeclaration": "function() { const r = this.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; }",
                "returnByValue": true,
            }),
        )
        .await
        .ok()?;
    let rect = answer["result"]["value"].as_array()?;
    let n = |i: usize| rect.get(i).and_then(Value::as_f64);
    let (x, y, w, h) = (n(0)?, n(1)?, n(2)?, n(3)?);
    let scroll = element
        .page
        .call_raw(
            "Runtime.evaluate",
            json!({ "expression": "[scrollX, scrollY]", "returnByValue": true }),
        )
        .await
        .ok()?;
    let sx = scroll["result"]["value"][0].as_f64().unwrap_or(0.0);
    let sy = scroll["result"]["value"][1].as_f64().unwrap_or(0.0);
    let left = (x + element.offset.0 - MARGIN).max(0.0);
    let top = (y + element.offset.1 - MARGIN).max(0.0);
    let shot = element
        .page
        .call_raw(
            "Page.captureScreenshot",
            json!({
                "format": "png",
                "clip": {
                    "x": left + sx,
                    "y": top + sy,
                    "width": (w + 2.0 * MARGIN).clamp(1.0, 1200.0),
                    "height": (h + 2.0 * MARGIN).clamp(1.0, 800.0),
                    "scale": 1,
                },
            }),
        )
        .await
        .ok()?;
    conch_browser::page::base64::decode(shot["data"].as_str()?)
}

/// What holds the keyboard focus on the active tab.
pub(crate) async fn focused(conv: &Conversation) -> Result<TargetFacts, ToolError> {
    let page = conv.page().await?;
    Ok(act::focused(&page)
        .await?
        .map(TargetFacts::of)
        .unwrap_or_default())
}

/// The control that Enter on `on` (or, with no element, in the focused field) would press
/// to submit its form: the form's default button (issue 11, HS-8), with the element itself
/// when it was found by ref (for the card's thumbnail). `None` when Enter there submits
/// nothing.
pub(crate) async fn submitter(
    conv: &Conversation,
    on: Option<&Element>,
) -> Result<Option<(Option<Element>, TargetFacts)>, ToolError> {
    Ok(match on {
        Some(element) => act::submitter(element)
            .await?
            .map(|(button, under)| (Some(button), TargetFacts::of(under))),
        None => act::focused_submitter(&conv.page().await?)
            .await?
            .map(|under| (None, TargetFacts::of(under))),
    })
}

/// What lies under a point of the last screenshot, and the point in the viewport now.
pub(crate) async fn under_point(
    conv: &Conversation,
    point: Point,
    screenshot: Size,
) -> Result<(Point, TargetFacts), ToolError> {
    let page = conv.page().await?;
    let scaled = act::scale_point(&page, point, Some(screenshot)).await?;
    let under = act::under_point(&page, scaled).await?;
    Ok((scaled, TargetFacts::of(under)))
}

/// How a pointer act presses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pointer {
    /// One left click.
    Click,
    /// A double click.
    Double,
    /// A right click.
    Right,
    /// Hover only.
    Hover,
}

/// When an act waits for the page to settle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Settling {
    /// Right after the act (one act, one step).
    Now,
    /// Not at all: the caller settles once after several acts (a form's fields).
    Later,
}

impl Settling {
    fn options(self) -> ActOptions {
        match self {
            Settling::Now => ActOptions::default(),
            Settling::Later => ActOptions {
                settle: SettleOptions {
                    quiet: Duration::ZERO,
                    max: Duration::ZERO,
                },
                ..ActOptions::default()
            },
        }
    }
}

/// Begins watching the conversation's page for the network and DOM activity of several
/// acts, so that one wait after the last act covers them all.
pub(crate) async fn begin_settling(conv: &Conversation) -> Option<Settle> {
    let page = conv.page().await.ok()?;
    Some(Settle::begin(&page).await)
}

/// Waits, bounded, until the page is quiet after the acts since `settle` began.
pub(crate) async fn finish_settling(settle: Settle) {
    settle.finish(SettleOptions::default()).await;
}

/// The line an act's result carries when the page keeps changing on its own (issue 30).
pub(crate) const STILL_CHANGING: &str = "The page keeps changing on its own (a clock, a feed, a chart…); if words you need are not shown yet, call browser_wait with them.";

/// Whether the active tab's page was still changing on its own when the last act on it
/// settled (issue 30); asked once per act.
pub(crate) async fn still_changing(conv: &Conversation) -> bool {
    conv.page()
        .await
        .is_ok_and(|page| conch_browser::page::settle::still_changing(&page))
}

/// Clicks (or double-, right-clicks, hovers) an element.
pub(crate) async fn click(
    element: &Element,
    how: Pointer,
    settling: Settling,
) -> Result<(), ToolError> {
    let how = match how {
        Pointer::Click => act::How::Click,
        Pointer::Double => act::How::Double,
        Pointer::Right => act::How::Right,
        Pointer::Hover => act::How::Hover,
    };
    let done = act::click(element, how, &settling.options()).await?;
    crate::live::pressed_at(done.at);
    Ok(())
}

/// Drags one element onto another.
pub(crate) async fn drag(from: &Element, to: &Element) -> Result<(), ToolError> {
    let done = act::drag(from, to, &ActOptions::default()).await?;
    crate::live::pressed_at(done.at);
    Ok(())
}

/// Replaces a text field's contents.
pub(crate) async fn type_text(
    element: &Element,
    text: &str,
    settling: Settling,
) -> Result<(), ToolError> {
    crate::live::over(element).await;
    act::type_text(element, text, &settling.options()).await?;
    Ok(())
}

/// Fills a secret field with the vault's value: focus by a click, then typed input key
/// by key, the focus checked before each key ([`act::fill_secret_in`]). The value goes
/// nowhere else (SEC-2, issue 29).
pub(crate) async fn fill_secret(element: &Element, secret: &str) -> Result<(), ToolError> {
    act::click(element, act::How::Click, &ActOptions::default()).await?;
    act::fill_secret_in(element, secret)
        .await
        .map_err(|e| ToolError::Act(e.to_string()))?;
    Ok(())
}

/// The script that finds a field's form (its `form`, the closest `<form>`, else the
/// document's body) and the typed-text inputs in it, in order, as `scope` and `inputs`.
const FORM_INPUTS: &str = body(include_str!("engine/form_inputs.js"));

/// Reads the form around a secret field, [`FORM_INPUTS`] pasted in.
const FORM_AROUND: &str = body(include_str!("engine/form_around.js"));

/// The `at`th typed-text input of a field's form, [`FORM_INPUTS`] pasted in.
const FORM_INPUT: &str = body(include_str!("engine/form_input.js"));

/// `script` with [`FORM_INPUTS`] pasted in place of its `FORM_INPUTS` line.
fn with_form_inputs(script: &str) -> String {
    script.replace("FORM_INPUTS", FORM_INPUTS)
}

/// What the form around a secret field holds, for the vault (SEC-2, issue 16).
#[derive(Debug, Clone, Default)]
pub(crate) struct FormAround {
    /// The form's typed-text inputs, in order.
    pub(crate) inputs: Vec<FieldFacts>,
    /// Where the field itself is among them.
    pub(crate) at: Option<usize>,
    /// The form's words: its name, id and label, its headings and its buttons.
    pub(crate) words: String,
    /// What its username or email field holds, empty when it has none.
    pub(crate) username: String,
}

/// Reads the form around `element` ([`FormAround`]).
pub(crate) async fn form_around(element: &Element) -> Result<FormAround, ToolError> {
    let function = with_form_inputs(FORM_AROUND);
    let answer = element
        .frame
        .call_raw(
            "Runtime.callFunctionOn",
            json!({
                "objectId": element.object_id,
                "functionDeclaration": function,
                "returnByValue": true,
            }),
        )
        .await
        .map_err(conch_browser::BrowserError::from)?;
    let value = &answer["result"]["value"];
    let string = |v: &Value, key: &str| v[key].as_str().unwrap_or_default().to_owned();
    let inputs = value["inputs"]
        .as_array()
        .map(|inputs| {
            inputs
                .iter()
                .map(|i| FieldFacts {
                    input_type: string(i, "inputType"),
                    autocomplete: string(i, "autocomplete"),
                    label: string(i, "label"),
                    name: string(i, "name"),
                    id: string(i, "id"),
                    placeholder: string(i, "placeholder"),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(FormAround {
        inputs,
        at: value["at"].as_u64().and_then(|at| usize::try_from(at).ok()),
        words: string(value, "words"),
        username: string(value, "username"),
    })
}

/// The `index`th typed-text input of the form around `element` ([`form_around`]'s
/// order), as an element to act on, named `reference` in errors.
pub(crate) async fn form_input(
    element: &Element,
    index: usize,
    reference: String,
) -> Result<Element, ToolError> {
    let answer = element
        .frame
        .call_raw(
            "Runtime.callFunctionOn",
            json!({
                "objectId": element.object_id,
                "functionDeclaration": with_form_inputs(FORM_INPUT),
                "arguments": [{ "value": index }],
            }),
        )
        .await
        .map_err(conch_browser::BrowserError::from)?;
    let object_id = answer["result"]["objectId"]
        .as_str()
        .ok_or_else(|| ToolError::Act(format!("{reference} is gone from the page.")))?;
    Ok(Element {
        reference,
        page: element.page.clone(),
        frame: element.frame.clone(),
        object_id: object_id.to_owned(),
        offset: element.offset,
    })
}

/// Presses a key or chord, on an element or the focused one.
pub(crate) async fn press(
    conv: &Conversation,
    keys: &str,
    on: Option<&Element>,
) -> Result<(), ToolError> {
    let page = conv.page().await?;
    act::press(&page, keys, on, &ActOptions::default()).await?;
    Ok(())
}

/// Picks options of a list; gives the labels picked.
pub(crate) async fn select(
    element: &Element,
    values: &[String],
    settling: Settling,
) -> Result<Vec<String>, ToolError> {
    crate::live::over(element).await;
    let (_, picked) = act::select(element, values, &settling.options()).await?;
    Ok(picked)
}

/// Scrolls the page or an element, `times` times.
pub(crate) async fn scroll(
    conv: &Conversation,
    up: bool,
    on: Option<&Element>,
    times: u32,
) -> Result<(), ToolError> {
    let page = conv.page().await?;
    let direction = if up {
        act::Direction::Up
    } else {
        act::Direction::Down
    };
    for _ in 0..times.max(1) {
        act::scroll(&page, Some(direction), on, &ActOptions::default()).await?;
    }
    Ok(())
}

/// Clicks at a viewport point, then types `text` when given (GES-10, GES-14).
pub(crate) async fn click_at(
    conv: &Conversation,
    point: Point,
    how: Option<Pointer>,
    drag_to: Option<Point>,
    text: Option<&str>,
) -> Result<(), ToolError> {
    let page = conv.page().await?;
    let how = match (drag_to, how) {
        (Some(to), _) => PointHow::DragTo(to),
        (None, Some(Pointer::Double)) => PointHow::Double,
        (None, Some(Pointer::Right)) => PointHow::Right,
        (None, Some(Pointer::Hover)) => PointHow::Hover,
        (None, _) => PointHow::Click,
    };
    let done = act::click_at(&page, point, how, text, &ActOptions::default()).await?;
    crate::live::pressed_at(done.done.at);
    Ok(())
}

/// Whether an element is a file box (`<input type=file>`).
pub(crate) async fn is_file_input(element: &Element) -> Result<bool, ToolError> {
    let answer = element
        .frame
        .call_raw(
            "Runtime.callFunctionOn",
            json!({
                "objectId": element.object_id,
                "functionDeclaration": "function() { return this instanceof HTMLInputElement && this.type === 'file'; }",
                "returnByValue": true,
            }),
        )
        .await
        .map_err(conch_browser::BrowserError::from)?;
    Ok(answer["result"]["value"] == Value::Bool(true))
}

/// A checkbox's or radio's state.
pub(crate) async fn is_checked(element: &Element) -> Result<bool, ToolError> {
    let answer = element
        .frame
        .call_raw(
            "Runtime.callFunctionOn",
            json!({
                "objectId": element.object_id,
                "functionDeclaration": "function() { return this.checked === true || this.getAttribute('aria-checked') === 'true'; }",
                "returnByValue": true,
            }),
        )
        .await
        .map_err(conch_browser::BrowserError::from)?;
    Ok(answer["result"]["value"] == Value::Bool(true))
}

/// Puts files into a file box (or the picker its button opens) as bytes, so a browser on
/// another machine receives them too and no host path reaches the browser (UP-1, UP-12).
/// Gives the names and sizes the box now holds.
pub(crate) async fn upload(
    element: &Element,
    files: &[PathBuf],
) -> Result<Vec<(String, u64)>, ToolError> {
    let mut loaded = Vec::with_capacity(files.len());
    for file in files {
        let bytes = tokio::fs::read(file).await.map_err(|e| {
            ToolError::Act(format!(
                "A file could not be read ({e}); check it and try again."
            ))
        })?;
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "upload".to_owned());
        loaded.push(conch_browser::page::upload::UploadFile {
            name,
            mime: String::new(),
            bytes,
        });
    }
    let uploaded =
        conch_browser::page::upload::upload(element, &loaded, &ActOptions::default()).await?;
    Ok(uploaded.files)
}

/// Goes back one history entry in the active tab; `false` when there is none (TOOL-21).
pub(crate) async fn back(conv: &Conversation) -> Result<bool, ToolError> {
    let page = conv.page().await?;
    let history = page
        .call_raw("Page.getNavigationHistory", json!({}))
        .await
        .map_err(conch_browser::BrowserError::from)?;
    let current = history["currentIndex"].as_u64().unwrap_or(0) as usize;
    if current == 0 {
        return Ok(false);
    }
    let Some(entry) = history["entries"][current - 1]["id"].as_i64() else {
        return Ok(false);
    };
    let url_before = current_url(conv).await.unwrap_or_default();
    page.call_raw("Page.navigateToHistoryEntry", json!({ "entryId": entry }))
        .await
        .map_err(conch_browser::BrowserError::from)?;
    // Wait for the earlier document to be there and loaded (at most 15 s).
    for _ in 0..150 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let state = evaluate(conv, "[location.href, document.readyState]").await;
        if let Ok(state) = state
            && state[0].as_str() != Some(url_before.as_str())
            && state[1].as_str() == Some("complete")
        {
            break;
        }
    }
    Ok(true)
}

/// The page's text as a wait sees it: the body's, its open shadow roots' and its
/// same-origin frames' (issue 30: whatever a wait sees, browser_read and find see too).
const PAGE_TEXT: &str = body(include_str!("engine/page_text.js"));

/// The page's words as they stand in its document, with no layout (a quick look, issue
/// 30): see `engine/page_words.js`. Public for the tests that read it on a page.
#[doc(hidden)]
pub const PAGE_WORDS: &str = body(include_str!("engine/page_words.js"));

/// Every how many looks a wait for words reads the page's rendered text even when the
/// quick look did not find them (text the quick look can miss: split by a hidden node).
const FULL_LOOK_EVERY: u32 = 8;

/// Waits until `text` shows and `gone` does not, at most `within`; gives whether it did.
/// A wait for words that are not in the document yet looks with no layout (issue 30: a
/// page still building itself, as JupyterLab loading a notebook, was laid out again by
/// every look, 40 a second, and took seconds longer to show the words).
pub(crate) async fn wait_for_text(
    conv: &Conversation,
    text: Option<&str>,
    gone: Option<&str>,
    within: Duration,
) -> Result<bool, ToolError> {
    let probe = format!(
        "(() => {{ const t = {PAGE_TEXT}; return ({}) && ({}); }})()",
        match text {
            Some(text) => format!("t.includes({})", json!(text)),
            None => "true".to_owned(),
        },
        match gone {
            Some(gone) => format!("!t.includes({})", json!(gone)),
            None => "true".to_owned(),
        },
    );
    // Letters and digits only, lower case: what the rendered text holds of the words
    // (whitespace collapsed, case transformed by CSS) is in the document's text too.
    let quick = text.map(|text| {
        let squeezed: String = text
            .chars()
            .filter(|c| !c.is_whitespace())
            .flat_map(char::to_lowercase)
            .collect();
        format!("{PAGE_WORDS}.includes({})", json!(squeezed))
    });
    let deadline = tokio::time::Instant::now() + within;
    let mut looks = 0u32;
    loop {
        let full = looks.is_multiple_of(FULL_LOOK_EVERY);
        looks += 1;
        let maybe = match &quick {
            Some(quick) if !full => evaluate(conv, quick).await? == Value::Bool(true),
            _ => true,
        };
        if maybe && evaluate(conv, &probe).await? == Value::Bool(true) {
            return Ok(true);
        }
        if tokio::time::Instant::now() >= deadline {
            return Ok(false);
        }
        // Often enough that a wait ends soon after the words come (issue 11: a 100 ms
        // poll added 50 ms to every wait on average); one look is one short evaluation.
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use conch_browser::page::script::well_formed;

    /// The form scripts, the form's inputs pasted in, are whole functions (issue 30).
    #[test]
    fn issue_30_form_scripts_compose_into_whole_functions() {
        for script in [FORM_AROUND, FORM_INPUT] {
            let composed = with_form_inputs(script);
            well_formed(&composed).unwrap_or_else(|e| panic!("{e}:\n{composed}"));
            assert!(composed.starts_with("function("), "{composed}");
            assert!(
                composed.contains("const inputs = Array.from("),
                "{composed}"
            );
        }
    }
}
