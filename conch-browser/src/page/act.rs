//! Acting on a page like a person: trusted input at an element's centre after scrolling it
//! into view (GES-1 … GES-15), and at a point of the last screenshot (click_at).
//!
//! Every pointer act waits, within [`ActOptions::actionable_within`], until its element is
//! visible, stable and enabled, and says which failed (GES-15, AMB-22); a click the page
//! would intercept is not sent and the blocker is named (GES-7). The point and that check
//! run through every frame, nested, scrolled or transformed, of every process (`hit`).
//! After the act the page is left to settle ([`settle`](super::settle)). Input held up
//! behind a dialog the act raised counts as done once the dialog is answered (DLG-13).
//!
//! Deliberately absent: the rules (permission, high stakes) — the tools crate asks
//! conch-policy before calling here; this module only refuses to type into a secret field
//! (SEC-2, SEC-6), as a last guard. No synthetic DOM events for pointer input.

mod hit;
mod js;

use std::time::Duration;

use conch_cdp::{Error as CdpError, Session};
use conch_policy::{
    Chord, FieldFacts, Point, Size, classify_field, click_at_point, key_verdict_on_secret,
    typing_verdict,
};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::dialog;
use super::input::{self, InputError, Press};
use super::settle::{Settle, SettleOptions, Settled};
use super::world::Frame;
use super::{Element, PageError};

pub(crate) use js::with_prelude;

/// The script that picks a select's options (shared with form filling).
pub(crate) const SELECT_SCRIPT: &str = js::SELECT;

/// Bounds of one act.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActOptions {
    /// How long to wait for the element to be visible, stable and enabled (AMB-22: 10 s).
    pub actionable_within: Duration,
    /// How long a covered element may stay covered before the blocker is named.
    pub covered_within: Duration,
    /// Settling after the act.
    pub settle: SettleOptions,
}

impl Default for ActOptions {
    fn default() -> Self {
        ActOptions {
            actionable_within: Duration::from_secs(10),
            covered_within: Duration::from_millis(500),
            settle: SettleOptions::default(),
        }
    }
}

/// What a finished act reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    /// How the page settled.
    pub settled: Settled,
    /// Whether the act raised a dialog of the page (its note is in the page's
    /// [`DialogWatch`](super::dialog::DialogWatch)).
    pub through_dialog: bool,
}

/// The pointer gesture of browser_click (GES-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// One left click.
    Click,
    /// A double click.
    Double,
    /// A right click (the context menu).
    Right,
    /// The pointer moves over the element; nothing is pressed.
    Hover,
}

/// A scroll direction (GES-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Up.
    Up,
    /// Down.
    Down,
    /// Left.
    Left,
    /// Right.
    Right,
}

impl Direction {
    fn signs(self) -> (f64, f64) {
        match self {
            Direction::Up => (0.0, -1.0),
            Direction::Down => (0.0, 1.0),
            Direction::Left => (-1.0, 0.0),
            Direction::Right => (1.0, 0.0),
        }
    }
}

/// What lies at a point or holds the focus, for the rules to judge (HS-5, SEC-6).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Under {
    /// Its role (`button`, `textbox`, `canvas`…).
    pub role: String,
    /// Its accessible name (page text).
    pub name: String,
    /// Its words (page text, at most 200 characters).
    pub words: String,
    /// Its tag name, lowercase.
    pub tag: String,
    /// Whether it is an editable text field.
    pub editable: bool,
    /// The facts the secrets rule reads, for a field.
    pub field: Option<FieldFacts>,
    /// Whether the secrets rule calls it secret.
    pub secret: bool,
}

/// What a click at a point did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointDone {
    /// The act.
    pub done: Done,
    /// What was under the point.
    pub under: Under,
    /// Whether `text` was typed.
    pub typed: bool,
}

/// Why an act could not be done: one sentence naming the next step.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ActError {
    /// The element left the page.
    #[error("{reference} is gone from the page; read the page again.")]
    Gone {
        /// The ref.
        reference: String,
    },
    /// Not visible within the bound.
    #[error(
        "{what} ({reference}) did not become visible within {seconds} s; it may be inside a closed menu or tab: read the page again."
    )]
    Hidden {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
        /// The bound.
        seconds: u64,
    },
    /// Hidden inside something closed that a control opens (issue 11, class 2).
    #[error("{what} ({reference}) is inside the closed “{closed}”; click that first ({control}).")]
    Closed {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
        /// The words of what opens it ("Menu").
        closed: String,
        /// That control, as the agent can act on it: "the button “Menu”, ref e4".
        control: String,
    },
    /// Disabled through the bound.
    #[error(
        "{what} ({reference}) is disabled; the page may want something else done first: read it again."
    )]
    Disabled {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
    },
    /// Still moving at the bound.
    #[error("{what} ({reference}) kept moving; wait with browser_wait and try again.")]
    Moving {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
    },
    /// Something else is on top at the click point (GES-7).
    #[error("{blocker} covers it; close or answer it first.")]
    Covered {
        /// The blocker, as "A dialog “Cookie settings”".
        blocker: String,
    },
    /// Scrolling did not bring it where a pointer can reach.
    #[error("{what} ({reference}) can't be reached by the pointer; read the page again.")]
    Unreachable {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
    },
    /// The page moved the focus away from the field before the text went in.
    #[error(
        "The page moved the focus away from {what} ({reference}) before Conch typed, so nothing was typed; read the page and try again."
    )]
    FocusMoved {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
    },
    /// Text into something that is not a text field.
    #[error("{what} ({reference}) is not a text field; use browser_click or browser_select.")]
    NotEditable {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
    },
    /// A secret field (SEC-2, SEC-6): the policy's sentence.
    #[error("{0}")]
    Secret(String),
    /// Select on something that is neither a select nor a listbox.
    #[error("{what} ({reference}) is not a list of options; use browser_click.")]
    NotSelect {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
    },
    /// No option matched.
    #[error("No option matches {missing}; the choices are: {choices}.")]
    NoOption {
        /// The values not found, quoted.
        missing: String,
        /// The choices, quoted.
        choices: String,
    },
    /// More than one option for a single-choice list.
    #[error("{what} ({reference}) takes one choice only; pass one value.")]
    OneChoice {
        /// The ref.
        reference: String,
        /// Its role and name.
        what: String,
    },
    /// A key or chord that can't be pressed.
    #[error("{0}")]
    Keys(String),
    /// A rule of conch-policy said no (a point outside the screenshot…).
    #[error("{0}")]
    Refused(String),
    /// A file act went wrong in the page.
    #[error("{0}")]
    Upload(String),
    /// The page's script failed.
    #[error("The page did not let Conch do that ({0}); read the page and try another way.")]
    Script(String),
    /// The page is frozen by its own dialog, which waits for an answer (DLG-14).
    #[error(
        "The page is waiting for an answer to its dialog “{0}”; nothing can be done on it until the dialog is answered."
    )]
    Frozen(String),
    /// The ref could not be resolved (reading's sentence).
    #[error("{}", capitalised(.0))]
    Ref(#[from] PageError),
    /// The browser did not answer.
    #[error("The browser did not answer: {0}; try again.")]
    Cdp(#[from] CdpError),
}

/// `error` as a sentence: a capital first letter and a full stop.
fn capitalised(error: &PageError) -> String {
    let text = error.to_string();
    let mut chars = text.chars();
    let first = chars
        .next()
        .map(|c| c.to_uppercase().collect::<String>())
        .unwrap_or_default();
    format!("{first}{}.", chars.as_str().trim_end_matches('.'))
}

/// The element behind `reference` on the page `page` (reading's
/// [`resolve`](super::resolve)), for the acts here.
///
/// # Errors
/// [`ActError::Ref`] when the ref is gone or unknown.
pub async fn element(page: &Session, reference: &str) -> Result<Element, ActError> {
    Ok(super::resolve(page, reference).await?)
}

impl From<InputError> for ActError {
    fn from(e: InputError) -> Self {
        match e {
            InputError::UnknownKey(_) => ActError::Keys(e.to_string()),
            InputError::Cdp(e) => ActError::Cdp(e),
        }
    }
}

/// An element description as the page scripts return it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Desc {
    pub(crate) gone: bool,
    pub(crate) role: String,
    pub(crate) name: String,
    pub(crate) tag: String,
    #[serde(rename = "type")]
    pub(crate) input_type: String,
    pub(crate) field: bool,
    pub(crate) editable: bool,
    pub(crate) disabled: bool,
    pub(crate) words: String,
    pub(crate) checked: Option<bool>,
    pub(crate) visible: bool,
    pub(crate) stable: bool,
    pub(crate) facts: Facts,
    pub(crate) cross_frame: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Facts {
    input_type: String,
    autocomplete: String,
    label: String,
    name: String,
    id: String,
    placeholder: String,
}

impl Desc {
    /// "the button “Pay now”".
    pub(crate) fn what(&self) -> String {
        let role = if self.role.is_empty() || self.role == "generic" {
            "the element".to_owned()
        } else {
            format!("the {}", self.role)
        };
        if self.name.is_empty() {
            role
        } else {
            format!("{role} “{}”", self.name)
        }
    }

    /// "The button “Pay now”", for the start of a sentence.
    pub(crate) fn what_capital(&self) -> String {
        let what = self.what();
        let mut chars = what.chars();
        chars.next().map_or(what.clone(), |c| {
            c.to_uppercase().collect::<String>() + chars.as_str()
        })
    }

    /// "A dialog “Cookie settings”", "An element", for naming a blocker.
    fn what_indefinite(&self) -> String {
        let what = self.what();
        let rest = what.strip_prefix("the ").unwrap_or(&what);
        let vowel = rest
            .chars()
            .next()
            .is_some_and(|c| "aeiouAEIOU".contains(c));
        format!("{} {rest}", if vowel { "An" } else { "A" })
    }

    pub(crate) fn field_facts(&self) -> FieldFacts {
        FieldFacts {
            input_type: self.facts.input_type.clone(),
            autocomplete: self.facts.autocomplete.clone(),
            label: self.facts.label.clone(),
            name: self.facts.name.clone(),
            id: self.facts.id.clone(),
            placeholder: self.facts.placeholder.clone(),
        }
    }

    pub(crate) fn is_secret(&self) -> bool {
        self.field && classify_field(&self.field_facts()).is_secret()
    }

    fn under(&self) -> Under {
        Under {
            role: self.role.clone(),
            name: self.name.clone(),
            words: self.words.clone(),
            tag: self.tag.clone(),
            editable: self.editable,
            field: self.field.then(|| self.field_facts()),
            secret: self.is_secret(),
        }
    }
}

fn is_gone(e: &CdpError) -> bool {
    matches!(e.kind(), conch_cdp::ErrorKind::Protocol { message, .. }
        if message.contains("Could not find object")
            || message.contains("Cannot find context")
            || message.contains("No node")
            || message.contains("does not belong"))
}

/// Calls `function` on `object_id` in `session` with `args`, returning its JSON value.
pub(crate) async fn call_on(
    session: &Session,
    object_id: &str,
    function: &str,
    args: &[Value],
    reference: &str,
) -> Result<Value, ActError> {
    let arguments: Vec<Value> = args.iter().map(|v| json!({ "value": v })).collect();
    let answer = session
        .call_raw(
            "Runtime.callFunctionOn",
            json!({
                "functionDeclaration": function,
                "objectId": object_id,
                "arguments": arguments,
                "returnByValue": true,
                "awaitPromise": true,
                "silent": true,
            }),
        )
        .await
        .map_err(|e| gone_or(e, reference))?;
    script_value(&answer)
}

/// Calls `function` on `object_id` and returns the object id of its result (null: `None`).
pub(crate) async fn call_on_handle(
    session: &Session,
    object_id: &str,
    function: &str,
    args: &[Value],
    reference: &str,
) -> Result<Option<String>, ActError> {
    let arguments: Vec<Value> = args.iter().map(|v| json!({ "value": v })).collect();
    let answer = session
        .call_raw(
            "Runtime.callFunctionOn",
            json!({
                "functionDeclaration": function,
                "objectId": object_id,
                "arguments": arguments,
                "silent": true,
            }),
        )
        .await
        .map_err(|e| gone_or(e, reference))?;
    handle_of(&answer)
}

fn gone_or(e: CdpError, reference: &str) -> ActError {
    if is_gone(&e) {
        ActError::Gone {
            reference: reference.to_owned(),
        }
    } else {
        ActError::Cdp(e)
    }
}

fn script_value(answer: &Value) -> Result<Value, ActError> {
    if let Some(details) = answer.get("exceptionDetails") {
        let text = details
            .pointer("/exception/description")
            .or_else(|| details.get("text"))
            .and_then(Value::as_str)
            .unwrap_or("a script error");
        let first = text.lines().next().unwrap_or(text);
        return Err(ActError::Script(first.to_owned()));
    }
    Ok(answer
        .pointer("/result/value")
        .cloned()
        .unwrap_or(Value::Null))
}

fn handle_of(answer: &Value) -> Result<Option<String>, ActError> {
    if answer.get("exceptionDetails").is_some() {
        return Err(ActError::Script("the page's script threw".to_owned()));
    }
    Ok(answer
        .pointer("/result/objectId")
        .and_then(Value::as_str)
        .map(str::to_owned))
}

/// Describes the element `object_id` of `session`.
pub(crate) async fn describe(
    session: &Session,
    object_id: &str,
    reference: &str,
) -> Result<Desc, ActError> {
    let value = call_on(
        session,
        object_id,
        &with_prelude(js::DESCRIBE),
        &[],
        reference,
    )
    .await?;
    Ok(serde_json::from_value(value).unwrap_or_default())
}

/// Describes `el` (role, name, field facts…).
///
/// # Errors
/// [`ActError::Gone`], or a DevTools failure.
pub async fn describe_element(el: &Element) -> Result<Under, ActError> {
    Ok(describe(&el.frame, &el.object_id, &el.reference)
        .await?
        .under())
}

/// Waits until `el` is visible, stable and enabled (GES-15), scrolls it into view inside
/// every panel and frame that holds it (GES-2), and gives its centre in the page's
/// viewport, checked by the browser's own hit test to be on top there, through every frame
/// (GES-7; issue 11, class 3).
pub(crate) async fn actionable_point(
    el: &Element,
    options: &ActOptions,
    need_enabled: bool,
) -> Result<((f64, f64), Desc), ActError> {
    let desc = wait_actionable(el, options, need_enabled).await?;
    let label = call_on_handle(
        &el.frame,
        &el.object_id,
        &with_prelude(js::PRESS_TARGET),
        &[],
        &el.reference,
    )
    .await?;
    let pressed;
    let el = match label {
        Some(object_id) => {
            pressed = Element {
                object_id,
                ..el.clone()
            };
            &pressed
        }
        None => el,
    };
    let covered_until = Instant::now() + options.covered_within;
    let scrolled = call_on(
        &el.frame,
        &el.object_id,
        js::SCROLL_INTO_VIEW,
        &[],
        &el.reference,
    )
    .await?;
    if scrolled == Value::Bool(false) {
        return Err(ActError::Gone {
            reference: el.reference.clone(),
        });
    }
    loop {
        let unreachable = || ActError::Unreachable {
            reference: el.reference.clone(),
            what: desc.what_capital(),
        };
        let spot = spot(el).await?;
        match spot {
            Spot::Free(at) => return Ok((at, desc)),
            Spot::Covered(_) | Spot::Out if Instant::now() < covered_until => {}
            Spot::Covered(blocker) => return Err(ActError::Covered { blocker }),
            Spot::Out => {
                return Err(closed_by(el, &desc).await?.unwrap_or_else(unreachable));
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The control that opens what hides `el` ([`ActError::Closed`]), or `None` when no such
/// control is found.
async fn closed_by(el: &Element, desc: &Desc) -> Result<Option<ActError>, ActError> {
    let value = call_on(
        &el.frame,
        &el.object_id,
        &with_prelude(js::REVEALER),
        &[],
        &el.reference,
    )
    .await?;
    if value.is_null() {
        return Ok(None);
    }
    let control: Desc = serde_json::from_value(value.clone()).unwrap_or_default();
    let words = if control.name.is_empty() {
        control.words.chars().take(80).collect()
    } else {
        control.name.clone()
    };
    if words.is_empty() {
        return Ok(None);
    }
    // The control's ref, in the element's own frame (same prefix).
    let prefix = el
        .reference
        .rfind(['e', 'E'])
        .map_or("", |i| &el.reference[..i]);
    let named = control.what();
    let control_text = match value.get("ref").and_then(Value::as_u64) {
        Some(n) => format!("{named}, ref {prefix}e{n}"),
        None => named,
    };
    Ok(Some(ActError::Closed {
        reference: el.reference.clone(),
        what: desc.what_capital(),
        closed: words,
        control: control_text,
    }))
}

/// Where an element stands for the pointer now.
enum Spot {
    /// Its point in the page's viewport is on top.
    Free((f64, f64)),
    /// Something else is on top there: "A dialog “Cookie settings”".
    Covered(String),
    /// It has no box, or its point is outside the viewport (or outside its frame's).
    Out,
}

async fn spot(el: &Element) -> Result<Spot, ActError> {
    let Some(local) = hit::session_point(el).await? else {
        return Ok(Spot::Out);
    };
    let at = hit::to_page(el, local).await;
    let (_, _, width, height) = hit::viewport_of(&el.page).await?;
    if !(at.0 >= 0.0 && at.1 >= 0.0 && at.0 < width && at.1 < height) {
        return Ok(Spot::Out);
    }
    // An out-of-process frame: nothing of the page may cover the frame there, and nothing
    // of the frame may cover the element.
    if el.frame.id() != el.page.id() {
        match hit::hit(&el.page, at).await? {
            Some(top) if top.owns.is_some() => {}
            Some(top) => {
                return Ok(Spot::Covered(hit::blocker(&top).await?.what_indefinite()));
            }
            None => return Ok(Spot::Out),
        }
    }
    let Some(found) = hit::hit(&el.frame, local).await? else {
        return Ok(Spot::Out);
    };
    if hit::lands_on(el, &found).await? {
        return Ok(Spot::Free(at));
    }
    let blocker = hit::blocker(&found).await?;
    // Its own frame's edge: the element is scrolled out of its frame's view.
    if blocker.role == "iframe" {
        return Ok(Spot::Out);
    }
    Ok(Spot::Covered(blocker.what_indefinite()))
}

/// Fails when a dialog of the page waits for an answer: a frozen page would hold every
/// call until then, so nothing is sent to it (DLG-14).
fn not_frozen(page: &Session) -> Result<(), ActError> {
    match dialog::watching(page).and_then(|w| w.pending_words()) {
        Some(words) => Err(ActError::Frozen(words)),
        None => Ok(()),
    }
}

async fn wait_actionable(
    el: &Element,
    options: &ActOptions,
    need_enabled: bool,
) -> Result<Desc, ActError> {
    not_frozen(&el.page)?;
    if el.frame.id() != el.page.id() {
        not_frozen(&el.frame)?;
    }
    let started = Instant::now();
    let deadline = started + options.actionable_within;
    let script = with_prelude(js::ACTIONABLE);
    loop {
        let value = call_on(&el.frame, &el.object_id, &script, &[], &el.reference).await?;
        let desc: Desc = serde_json::from_value(value).unwrap_or_default();
        if desc.gone {
            return Err(ActError::Gone {
                reference: el.reference.clone(),
            });
        }
        let enabled = !need_enabled || !desc.disabled;
        if desc.visible && desc.stable && enabled {
            return Ok(desc);
        }
        // Inside something closed: nothing opens it but a click, so say which at once.
        if !desc.visible
            && Instant::now() >= started + options.covered_within
            && let Some(closed) = closed_by(el, &desc).await?
        {
            return Err(closed);
        }
        if Instant::now() >= deadline {
            let reference = el.reference.clone();
            let what = desc.what_capital();
            return Err(if !desc.visible {
                ActError::Hidden {
                    reference,
                    what,
                    seconds: options.actionable_within.as_secs().max(1),
                }
            } else if !enabled {
                ActError::Disabled { reference, what }
            } else {
                ActError::Moving { reference, what }
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Runs `act` (input to `page`); input held up behind a dialog it raised counts as done
/// once the dialog is answered (DLG-13). Returns whether a dialog came up.
async fn through_dialogs<F>(page: &Session, act: F) -> Result<bool, ActError>
where
    F: Future<Output = Result<(), ActError>>,
{
    let watch = dialog::watching(page);
    let before = watch.as_ref().map_or(0, |w| w.opened());
    let outcome = act.await;
    let raised = watch.as_ref().is_some_and(|w| w.opened() > before);
    match outcome {
        Ok(()) => {
            if raised && let Some(w) = &watch {
                // The answer's note is written as the dialog closes.
                let _ = tokio::time::timeout(Duration::from_secs(2), w.until_answered()).await;
            }
            Ok(raised)
        }
        Err(ActError::Cdp(e))
            if e.is_timeout() && (raised || watch.as_ref().is_some_and(|w| w.is_pending())) =>
        {
            if let Some(w) = &watch {
                w.until_answered().await;
            }
            Ok(true)
        }
        Err(e) => Err(e),
    }
}

async fn settled<F>(page: &Session, options: &ActOptions, act: F) -> Result<Done, ActError>
where
    F: Future<Output = Result<(), ActError>>,
{
    let settle = Settle::begin(page).await;
    let through_dialog = through_dialogs(page, act).await?;
    let settled = settle.finish(options.settle).await;
    Ok(Done {
        settled,
        through_dialog,
    })
}

/// Clicks, double-clicks, right-clicks or hovers `el` (GES-1).
///
/// # Errors
/// [`ActError::Gone`], [`ActError::Hidden`], [`ActError::Disabled`] (not for a hover),
/// [`ActError::Moving`], [`ActError::Covered`], or a DevTools failure.
pub async fn click(el: &Element, how: How, options: &ActOptions) -> Result<Done, ActError> {
    let (at, _) = actionable_point(el, options, how != How::Hover).await?;
    settled(&el.page, options, async {
        match how {
            How::Hover => input::move_to(&el.page, at).await?,
            How::Click => input::click(&el.page, at, Press::Left).await?,
            How::Double => input::click(&el.page, at, Press::Double).await?,
            How::Right => input::click(&el.page, at, Press::Right).await?,
        }
        Ok(())
    })
    .await
}

/// Drags `from` onto `to` (GES-4): press, move in steps, release. HTML5 drag and drop
/// is carried through the browser's drag interception; pointer-built sortable lists see
/// the moves themselves.
///
/// # Errors
/// As [`click`], for either end.
pub async fn drag(from: &Element, to: &Element, options: &ActOptions) -> Result<Done, ActError> {
    let (start, _) = actionable_point(from, options, true).await?;
    // The target may be covered by the dragged element's ghost later, not now.
    let (end, _) = actionable_point(to, options, false).await?;
    settled(&from.page, options, drag_points(&from.page, start, end)).await
}

async fn drag_points(page: &Session, start: (f64, f64), end: (f64, f64)) -> Result<(), ActError> {
    use futures_util::StreamExt;
    let mut intercepted = page.events("Input.dragIntercepted");
    page.call_raw("Input.setInterceptDrags", json!({ "enabled": true }))
        .await?;
    let outcome = async {
        input::left_down(page, start).await?;
        const STEPS: usize = 10;
        let mut data: Option<Value> = None;
        for step in 1..=STEPS {
            let t = step as f64 / STEPS as f64;
            let at = (
                start.0 + (end.0 - start.0) * t,
                start.1 + (end.1 - start.1) * t,
            );
            if let Some(data) = &data {
                drag_event(page, "dragOver", at, data).await?;
            } else {
                input::drag_move(page, at).await?;
                if step <= 3
                    && let Ok(Some(event)) =
                        tokio::time::timeout(Duration::from_millis(40), intercepted.next()).await
                    && let Ok(params) = event.parse::<Value>()
                {
                    let d = params.get("data").cloned().unwrap_or(Value::Null);
                    drag_event(page, "dragEnter", at, &d).await?;
                    data = Some(d);
                }
            }
        }
        if let Some(data) = &data {
            drag_event(page, "dragOver", end, data).await?;
            drag_event(page, "drop", end, data).await?;
        }
        input::left_up(page, end).await?;
        Ok::<(), ActError>(())
    }
    .await;
    let _ = page
        .call_raw("Input.setInterceptDrags", json!({ "enabled": false }))
        .await;
    outcome
}

async fn drag_event(
    page: &Session,
    kind: &str,
    at: (f64, f64),
    data: &Value,
) -> Result<(), ActError> {
    page.call_raw(
        "Input.dispatchDragEvent",
        json!({ "type": kind, "x": at.0, "y": at.1, "data": data }),
    )
    .await?;
    Ok(())
}

/// Focuses `el`: by script, and by a click at its centre when the script could not move
/// the browser's focus there (a frame of another site).
pub(crate) async fn focus(el: &Element, options: &ActOptions) -> Result<(), ActError> {
    let focused = call_on(
        &el.frame,
        &el.object_id,
        &with_prelude(js::FOCUS),
        &[],
        &el.reference,
    )
    .await?;
    if focused != Value::Bool(true) {
        let (at, _) = actionable_point(el, options, true).await?;
        input::click(&el.page, at, Press::Left).await?;
    }
    Ok(())
}

/// Replaces the contents of the text field `el` with `text`, as typed input (GES-8).
/// Never into a secret field (SEC-2).
///
/// # Errors
/// [`ActError::NotEditable`], [`ActError::Secret`], [`ActError::Disabled`], or as
/// [`click`].
pub async fn type_text(el: &Element, text: &str, options: &ActOptions) -> Result<Done, ActError> {
    let desc = wait_actionable(el, options, true).await?;
    if !desc.editable {
        return Err(ActError::NotEditable {
            reference: el.reference.clone(),
            what: desc.what_capital(),
        });
    }
    if let Some(refusal) = typing_verdict(classify_field(&desc.field_facts())).refusal() {
        return Err(ActError::Secret(refusal.sentence()));
    }
    settled(&el.page, options, async {
        focus(el, options).await?;
        replace_text_in(el, text).await
    })
    .await
}

/// Replaces the contents of the focused field `el` with `text`: selects all, then checks
/// in the element's own world that it still holds the focus right before the text goes
/// in, so a page that moves the focus elsewhere gets nothing typed (issue 11 review).
///
/// # Errors
/// [`ActError::FocusMoved`] when `el` lost the focus, or a DevTools failure.
pub async fn replace_text_in(el: &Element, text: &str) -> Result<(), ActError> {
    input::select_all_focused(&el.page).await?;
    let held = call_on(
        &el.frame,
        &el.object_id,
        &with_prelude(js::HAS_FOCUS),
        &[],
        &el.reference,
    )
    .await?;
    if held != Value::Bool(true) {
        let what = describe(&el.frame, &el.object_id, &el.reference)
            .await
            .map(|d| d.what())
            .unwrap_or_else(|_| "the field".to_owned());
        return Err(ActError::FocusMoved {
            reference: el.reference.clone(),
            what,
        });
    }
    input::insert_over_selection(&el.page, text).await?;
    Ok(())
}

/// Presses `keys` (a key or a chord such as `Control+Shift+K`) on `on` after focusing it,
/// or on whatever has focus (GES-5).
///
/// # Errors
/// [`ActError::Keys`] for a chord that can't be read or a key Conch doesn't know, or as
/// [`click`].
pub async fn press(
    page: &Session,
    keys: &str,
    on: Option<&Element>,
    options: &ActOptions,
) -> Result<Done, ActError> {
    let chord = Chord::parse(keys).map_err(|e| ActError::Keys(e.to_string()))?;
    let target = match on {
        Some(el) => Some(wait_actionable(el, options, true).await?.under()),
        None => focused(page).await?,
    };
    // On a secret field only keys that type nothing (Tab, Enter, arrows…) go (SEC-5, AMB-13).
    if target.is_some_and(|t| t.secret)
        && let Some(refusal) = key_verdict_on_secret(&chord).refusal()
    {
        return Err(ActError::Secret(refusal.sentence()));
    }
    settled(page, options, async {
        if let Some(el) = on {
            focus(el, options).await?;
        }
        input::press_chord(page, &chord).await?;
        Ok(())
    })
    .await
}

/// Picks the options of a `<select>` or listbox `el` by label or value (GES-9). Returns
/// the labels picked.
///
/// # Errors
/// [`ActError::NotSelect`], [`ActError::NoOption`], [`ActError::OneChoice`], or as
/// [`click`].
pub async fn select(
    el: &Element,
    values: &[String],
    options: &ActOptions,
) -> Result<(Done, Vec<String>), ActError> {
    let desc = wait_actionable(el, options, true).await?;
    let values_json: Vec<Value> = values.iter().cloned().map(Value::String).collect();
    if desc.tag == "select" {
        let mut picked = Vec::new();
        let done = settled(&el.page, options, async {
            let answer = call_on(
                &el.frame,
                &el.object_id,
                js::SELECT,
                &[Value::Array(values_json.clone())],
                &el.reference,
            )
            .await?;
            picked = option_answer(&answer, el, &desc)?;
            Ok(())
        })
        .await?;
        return Ok((done, picked));
    }
    if desc.role != "listbox" {
        return Err(ActError::NotSelect {
            reference: el.reference.clone(),
            what: desc.what_capital(),
        });
    }
    let list = call_on_handle(
        &el.frame,
        &el.object_id,
        js::LISTBOX_OPTIONS,
        &[Value::Array(values_json)],
        &el.reference,
    )
    .await?
    .ok_or_else(|| ActError::Script("no options".to_owned()))?;
    let mut targets = Vec::new();
    for (i, value) in values.iter().enumerate() {
        let item = call_on_handle(
            &el.frame,
            &list,
            "function(i) { return this[i]; }",
            &[json!(i)],
            &el.reference,
        )
        .await?;
        match item {
            Some(object_id) => targets.push((
                value.clone(),
                Element {
                    reference: el.reference.clone(),
                    page: el.page.clone(),
                    frame: el.frame.clone(),
                    object_id,
                    offset: el.offset,
                },
            )),
            None => {
                return Err(ActError::NoOption {
                    missing: format!("“{value}”"),
                    choices: "the options the page shows".to_owned(),
                });
            }
        }
    }
    let mut done = None;
    for (_, option) in &targets {
        done = Some(click(option, How::Click, options).await?);
    }
    let picked = targets.into_iter().map(|(v, _)| v).collect();
    let done = done.unwrap_or(Done {
        settled: Settled {
            waited: Duration::ZERO,
            quiet: true,
        },
        through_dialog: false,
    });
    Ok((done, picked))
}

fn option_answer(answer: &Value, el: &Element, desc: &Desc) -> Result<Vec<String>, ActError> {
    let quote = |v: &Value| -> String {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(|s| format!("“{s}”"))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    if let Some(missing) = answer.get("missing") {
        return Err(ActError::NoOption {
            missing: quote(missing),
            choices: answer.get("choices").map(quote).unwrap_or_default(),
        });
    }
    if answer.get("tooMany").is_some() {
        return Err(ActError::OneChoice {
            reference: el.reference.clone(),
            what: desc.what_capital(),
        });
    }
    Ok(answer
        .get("picked")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default())
}

/// Scrolls (GES-6): a direction alone scrolls the page; an element alone is brought into
/// view; both scroll the nearest panel around the element that scrolls on that axis, or
/// turn the mouse wheel over the element when none does.
///
/// # Errors
/// As [`click`] for the element, or a DevTools failure.
pub async fn scroll(
    page: &Session,
    direction: Option<Direction>,
    on: Option<&Element>,
    options: &ActOptions,
) -> Result<Done, ActError> {
    not_frozen(page)?;
    match (direction, on) {
        (None, None) => settled(page, options, async { Ok(()) }).await,
        (Some(direction), None) => {
            let (dx, dy) = direction.signs();
            let expression = format!(
                "(() => {{ const s = document.scrollingElement || document.documentElement; s.scrollBy({{left: {dx} * innerWidth * 0.8, top: {dy} * innerHeight * 0.8, behavior: 'instant'}}); return true; }})()"
            );
            settled(page, options, async {
                page.call_raw(
                    "Runtime.evaluate",
                    json!({ "expression": expression, "silent": true }),
                )
                .await?;
                Ok(())
            })
            .await
        }
        (None, Some(el)) => {
            actionable_point(el, options, false).await?;
            settled(page, options, async { Ok(()) }).await
        }
        (Some(direction), Some(el)) => {
            let (dx, dy) = direction.signs();
            wait_actionable(el, options, false).await?;
            let answer = call_on(
                &el.frame,
                &el.object_id,
                js::SCROLL_PANEL,
                &[json!(dx), json!(dy)],
                &el.reference,
            )
            .await?;
            if answer.get("scrolled") == Some(&Value::Bool(true)) {
                return settled(page, options, async { Ok(()) }).await;
            }
            let (at, _) = actionable_point(el, options, false).await?;
            settled(page, options, async {
                input::wheel(page, at, dx * 400.0, dy * 400.0).await?;
                Ok(())
            })
            .await
        }
    }
}

/// The page's viewport now, in CSS pixels, read in Conch's isolated world (the page
/// cannot redefine `innerWidth` there).
///
/// # Errors
/// A DevTools failure.
pub async fn viewport(page: &Session) -> Result<Size, ActError> {
    let answer = Frame::top(page)
        .await?
        .evaluate("[innerWidth, innerHeight]", true)
        .await?;
    let v = answer.result.value.unwrap_or(Value::Null);
    let dim = |i: usize| {
        v.get(i)
            .and_then(Value::as_f64)
            .map_or(0, |d| d.round().clamp(0.0, f64::from(u32::MAX)) as u32)
    };
    Ok(Size::new(dim(0), dim(1)))
}

/// A point of the last screenshot (its pixels) as a point of the viewport now, scaled when
/// the viewport changed shape since (GES-11, conch-policy's `click_at_point`).
///
/// # Errors
/// [`ActError::Refused`] without a screenshot (GES-12) or for a point outside it.
pub async fn scale_point(
    page: &Session,
    point: Point,
    screenshot: Option<Size>,
) -> Result<Point, ActError> {
    let now = viewport(page).await?;
    click_at_point(point, screenshot, now).map_err(|v| {
        ActError::Refused(
            v.refusal()
                .map_or_else(|| "That point can't be used.".to_owned(), |r| r.sentence()),
        )
    })
}

/// What lies at `point` of the page's viewport (CSS pixels), through frames of any site,
/// for the rules to judge (HS-5): the browser's own hit test, judged in Conch's world.
///
/// # Errors
/// A DevTools failure.
pub async fn under_point(page: &Session, point: Point) -> Result<Under, ActError> {
    not_frozen(page)?;
    let Some(found) = hit::deepest(page, (point.x, point.y)).await? else {
        return Ok(Under::default());
    };
    Ok(
        describe(&found.frame.session, &found.object_id, "the element")
            .await?
            .under(),
    )
}

/// What holds the keyboard focus, through frames of any site, read in Conch's isolated
/// world of each frame (the page cannot redefine `activeElement` there).
///
/// # Errors
/// A DevTools failure.
pub async fn focused(page: &Session) -> Result<Option<Under>, ActError> {
    not_frozen(page)?;
    let mut frame = Frame::top(page).await?;
    for _ in 0..8 {
        let answer = frame.evaluate(js::FOCUSED, false).await?;
        let Some(object_id) = answer.result.object_id else {
            return Ok(None);
        };
        let desc = describe(&frame.session, &object_id, "the element").await?;
        if !desc.cross_frame {
            return Ok(Some(desc.under()));
        }
        match Frame::owned_by(&frame.session, &object_id).await? {
            Some(child) => frame = child,
            None => return Ok(Some(desc.under())),
        }
    }
    Ok(None)
}

/// A pointer gesture at a point (GES-10).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PointHow {
    /// One left click.
    Click,
    /// A double click.
    Double,
    /// A right click.
    Right,
    /// Move there only.
    Hover,
    /// Press here and release at the given point.
    DragTo(Point),
}

/// Clicks (or hovers, double- or right-clicks, drags) at `point` of the page's viewport,
/// already scaled ([`scale_point`]), then types `text` when given (GES-10, GES-14): a text
/// field's contents are replaced; into anything else the keys are sent as typed. The
/// focused element is checked again, through frames, before any key is sent: a secret field
/// gets nothing (SEC-6).
///
/// # Errors
/// [`ActError::Secret`] when the typing would land in a secret field (the click was done),
/// or a DevTools failure.
pub async fn click_at(
    page: &Session,
    point: Point,
    how: PointHow,
    text: Option<&str>,
    options: &ActOptions,
) -> Result<PointDone, ActError> {
    let under = under_point(page, point).await?;
    let at = (point.x, point.y);
    let mut typed = false;
    let done = settled(page, options, async {
        match how {
            PointHow::Click => input::click(page, at, Press::Left).await?,
            PointHow::Double => input::click(page, at, Press::Double).await?,
            PointHow::Right => input::click(page, at, Press::Right).await?,
            PointHow::Hover => input::move_to(page, at).await?,
            PointHow::DragTo(to) => drag_points(page, at, (to.x, to.y)).await?,
        }
        if let Some(text) = text {
            let target = focused(page).await?;
            if let Some(field) = target.as_ref().filter(|u| u.secret) {
                let class = classify_field(field.field.as_ref().unwrap_or(&FieldFacts::default()));
                let sentence = typing_verdict(class)
                    .refusal()
                    .map_or_else(String::new, |r| r.sentence());
                return Err(ActError::Secret(sentence));
            }
            if let Some(field) = target.as_ref().filter(|u| u.editable) {
                // The focus is read again right before the text goes in: a page that moved
                // it on the select-all key gets nothing.
                input::select_all_focused(page).await?;
                if focused(page).await?.as_ref() != Some(field) {
                    return Err(ActError::FocusMoved {
                        reference: "the point".to_owned(),
                        what: if field.name.is_empty() {
                            format!("the {}", field.role)
                        } else {
                            format!("the {} “{}”", field.role, field.name)
                        },
                    });
                }
                input::insert_over_selection(page, text).await?;
            } else {
                input::type_keys(page, text).await?;
            }
            typed = true;
        }
        Ok(())
    })
    .await?;
    Ok(PointDone { done, under, typed })
}
