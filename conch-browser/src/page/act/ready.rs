//! Before and after input: waiting until an element is visible, stable and enabled
//! (GES-15), its point in the page and what covers it (GES-7), what opens a closed thing
//! it is in (issue 11, class 2), a page frozen by its dialog (DLG-14), and settling after
//! the act through the page's dialogs (DLG-13).

use std::time::Duration;

use conch_cdp::Session;
use serde_json::Value;
use tokio::time::Instant;

use super::call::{Desc, call_on, call_on_handle};
use super::{ActError, ActOptions, Done, hit, js, with_prelude};
use crate::page::Element;
use crate::page::dialog;
use crate::page::settle::Settle;

/// Waits until `el` is visible, stable and enabled (GES-15), scrolls it into view inside
/// every panel and frame that holds it (GES-2), and gives its centre in the page's
/// viewport, checked by the browser's own hit test to be on top there, through every frame
/// (GES-7; issue 11, class 3).
pub(crate) async fn actionable_point(
    el: &Element,
    options: &ActOptions,
    need_enabled: bool,
) -> Result<((f64, f64), Desc), ActError> {
    let (desc, pressed) = prepared(el, options, need_enabled, Still::Waited).await?;
    let at = on_top(&pressed, &desc, options, &mut Known::default()).await?;
    Ok((at, desc))
}

/// What an act learns once about the element it presses and keeps for the act, as it
/// cannot change meanwhile (issue 32): its node's backend id, asked of the browser the
/// first time the hit test needs it.
#[derive(Debug, Default)]
pub(super) struct Known {
    backend: Option<Option<i64>>,
}

/// Whether an actionability check waits a frame to see the element hold still.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Still {
    /// It waits: the element's box is the same one animation frame later (GES-15).
    Waited,
    /// It does not: the caller proves stillness itself (the pointer's arrival takes a
    /// frame, and the point is measured on both sides of it), or needs none (the keyboard
    /// and a list's options act through focus and script, not at a point).
    Unchecked,
}

/// The point of `pressed` (an element [`prepared`] gave) in the page's viewport once the
/// browser's hit test finds it on top there, waiting [`ActOptions::covered_within`] for
/// what covers it or keeps it out of view to go; then says what covers it, or what opens
/// the closed thing it is in.
pub(super) async fn on_top(
    pressed: &Element,
    desc: &Desc,
    options: &ActOptions,
    known: &mut Known,
) -> Result<(f64, f64), ActError> {
    let covered_until = Instant::now() + options.covered_within;
    loop {
        match spot(pressed, None, known).await? {
            Spot::Free(at) => return Ok(at),
            Spot::Covered(_) | Spot::Out if Instant::now() < covered_until => {}
            Spot::Covered(blocker) => return Err(ActError::Covered { blocker }),
            Spot::Out => {
                return Err(closed_by(pressed, desc).await?.unwrap_or_else(|| {
                    ActError::Unreachable {
                        reference: pressed.reference.clone(),
                        what: desc.what_capital(),
                    }
                }));
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until `el` is visible, (with `still`, stable) and enabled, and scrolls into view
/// the element the pointer presses: `el` itself, or the control a label of it stands for.
pub(super) async fn prepared(
    el: &Element,
    options: &ActOptions,
    need_enabled: bool,
    still: Still,
) -> Result<(Desc, Element), ActError> {
    let desc = wait_ready(el, options, need_enabled, still, true).await?;
    if desc.press_self {
        // Scrolled into view by the check itself (issue 32).
        return Ok((desc, el.clone()));
    }
    let target = call_on_handle(
        &el.frame,
        &el.object_id,
        &with_prelude(js::PRESS_TARGET_IN_VIEW),
        &[],
        &el.reference,
    )
    .await?;
    let Some(object_id) = target else {
        return Err(ActError::Gone {
            reference: el.reference.clone(),
        });
    };
    Ok((
        desc,
        Element {
            object_id,
            ..el.clone()
        },
    ))
}

/// `el`'s point in the page's viewport from its box alone, with no hit test, and the
/// page's viewport it was measured in: `None` when it has no box or the point is outside
/// the viewport. The pointer goes there, and what it meets is looked at once it stands
/// there ([`free_point`]).
pub(super) async fn point_in_view(
    el: &Element,
) -> Result<Option<((f64, f64), Viewport)>, ActError> {
    Ok(point_and_viewport(el, None)
        .await?
        .and_then(|(_, at, view)| in_view(at, view.2, view.3).then_some((at, view))))
}

/// Whether a point of the page's viewport lies inside its `width` × `height`.
fn in_view(at: (f64, f64), width: f64, height: f64) -> bool {
    at.0 >= 0.0 && at.1 >= 0.0 && at.0 < width && at.1 < height
}

/// A page's viewport in CSS pixels: scroll x, y, width, height.
pub(super) type Viewport = (f64, f64, f64, f64);

/// A point and a viewport, both in CSS pixels: the point in its own session's viewport,
/// the same point in the page's, and the page's viewport.
type PointView = ((f64, f64), (f64, f64), Viewport);

/// `el`'s point in its session's viewport ([`hit::session_point`]), carried into the
/// page's ([`hit::to_page`]), with the page's viewport ([`hit::viewport_of`]), asked
/// together, or `viewport` when the act measured it already: `None` when `el` has no box.
async fn point_and_viewport(
    el: &Element,
    viewport: Option<Viewport>,
) -> Result<Option<PointView>, ActError> {
    let (local, viewport) = match viewport {
        Some(viewport) => (hit::session_point(el).await, Ok(viewport)),
        None => tokio::join!(hit::session_point(el), hit::viewport_of(&el.page)),
    };
    let Some(local) = local? else {
        return Ok(None);
    };
    let viewport = viewport?;
    Ok(Some((local, hit::to_page(el, local).await, viewport)))
}

/// `el`'s point in the page's viewport when the browser's hit test finds it on top there
/// now, with no wait: a second look right after the pointer came ([`on_top`]
/// waited for it once already). `None` when it is covered, out of view or has no box.
/// `viewport` is the page's as measured just before the pointer came, when it was: a
/// pointer's move scrolls nothing, and the element's own box is measured again (issue
/// 32: the page's layout was asked twice in one act).
pub(super) async fn free_point(
    el: &Element,
    viewport: Option<Viewport>,
    known: &mut Known,
) -> Result<Option<(f64, f64)>, ActError> {
    Ok(match spot(el, viewport, known).await? {
        Spot::Free(at) => Some(at),
        Spot::Covered(_) | Spot::Out => None,
    })
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

async fn spot(
    el: &Element,
    viewport: Option<Viewport>,
    known: &mut Known,
) -> Result<Spot, ActError> {
    let Some((local, at, (sx, sy, width, height))) = point_and_viewport(el, viewport).await? else {
        return Ok(Spot::Out);
    };
    if !in_view(at, width, height) {
        return Ok(Spot::Out);
    }
    // An out-of-process frame: nothing of the page may cover the frame there, and nothing
    // of the frame may cover the element.
    if el.frame.id() != el.page.id() {
        match hit::hit_scrolled(&el.page, at, (sx, sy)).await? {
            Some(top) if top.owns.is_some() => {}
            Some(top) => {
                return Ok(Spot::Covered(hit::blocker(&top).await?.what_indefinite()));
            }
            None => return Ok(Spot::Out),
        }
    }
    let scroll = if el.frame.id() == el.page.id() {
        (sx, sy)
    } else {
        let (fx, fy, _, _) = hit::viewport_of(&el.frame).await?;
        (fx, fy)
    };
    // The element's own node is asked of the browser once per act, with the first hit
    // test; when the pointer meets that very node, nothing more is asked (issue 32).
    let (node, mine) = match known.backend {
        Some(mine) => (hit::node_at(&el.frame, local, scroll).await?, mine),
        None => {
            let (node, mine) =
                tokio::join!(hit::node_at(&el.frame, local, scroll), hit::backend_of(el));
            let mine = mine?;
            known.backend = Some(mine);
            (node?, mine)
        }
    };
    let Some((backend, frame_id)) = node else {
        return Ok(Spot::Out);
    };
    if mine == Some(backend) {
        return Ok(Spot::Free(at));
    }
    let Some(found) = hit::hit_node(&el.frame, backend, frame_id).await? else {
        return Ok(Spot::Out);
    };
    if hit::lands_on(el, mine, &found).await? {
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
pub(super) fn not_frozen(page: &Session) -> Result<(), ActError> {
    match dialog::watching(page).and_then(|w| w.pending_words()) {
        Some(words) => Err(ActError::Frozen(words)),
        None => Ok(()),
    }
}

pub(super) async fn wait_actionable(
    el: &Element,
    options: &ActOptions,
    need_enabled: bool,
    still: Still,
) -> Result<Desc, ActError> {
    wait_ready(el, options, need_enabled, still, false).await
}

/// [`wait_actionable`]; with `in_view`, the element found ready has what the pointer
/// presses scrolled into view by the same call, and [`Desc::press_self`] says whether that
/// is the element itself.
async fn wait_ready(
    el: &Element,
    options: &ActOptions,
    need_enabled: bool,
    still: Still,
    in_view: bool,
) -> Result<Desc, ActError> {
    not_frozen(&el.page)?;
    if el.frame.id() != el.page.id() {
        not_frozen(&el.frame)?;
    }
    let started = Instant::now();
    let deadline = started + options.actionable_within;
    let script = with_prelude(js::ACTIONABLE);
    loop {
        let args = [
            Value::Bool(still == Still::Waited),
            Value::Bool(in_view),
            Value::Bool(need_enabled),
        ];
        let value = call_on(&el.frame, &el.object_id, &script, &args, &el.reference).await?;
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

pub(super) async fn settled<F>(
    page: &Session,
    options: &ActOptions,
    act: F,
) -> Result<Done, ActError>
where
    F: Future<Output = Result<(), ActError>>,
{
    settled_sending(page, options, act, Sends::Maybe).await
}

/// As [`settled`], saying whether the act may send on a socket still opening. Text typed
/// into a field ([`Sends::NotOnOpening`]) sends nothing on one, so it does not wait for
/// one to open (issue 30: a notebook's kernel connecting held typing into a cell about
/// 600 ms); a socket the page sends on during the act is still waited on for its answer.
pub(super) async fn settled_sending<F>(
    page: &Session,
    options: &ActOptions,
    act: F,
    sends: Sends,
) -> Result<Done, ActError>
where
    F: Future<Output = Result<(), ActError>>,
{
    // On the heap: with the wait for animations, an act's future held inline grew past
    // the stack of a debug build's test thread (every tool's future holds one).
    Box::pin(settled_inner(page, options, act, sends)).await
}

/// Whether an act may send on a socket still opening (a click's or a key's queued message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sends {
    /// It may (a click, a key).
    Maybe,
    /// It does not: text typed into a field, whose page reacts to it within a frame
    /// ([`super::super::settle::Settle::quiet_after_a_frame`]).
    NotOnOpening,
}

async fn settled_inner<F>(
    page: &Session,
    options: &ActOptions,
    act: F,
    sends: Sends,
) -> Result<Done, ActError>
where
    F: Future<Output = Result<(), ActError>>,
{
    let began = Instant::now();
    let mut settle = Settle::begin(page).await;
    if sends == Sends::NotOnOpening {
        settle.not_for_sockets_opening();
        settle.quiet_after_a_frame();
        settle.answers_briefly();
    }
    let through_dialog = through_dialogs(page, act).await?;
    // The transitions are waited for by the settle's own wait when it found the DOM
    // quiet (issue 32: one round trip less); else here, as before.
    let (mut settled, animated) = settle
        .finish_animated(options.settle, began, ANIMATIONS_WITHIN)
        .await;
    if !animated {
        settled.waited += animations_ended(page, began).await;
    }
    Ok(Done {
        settled,
        through_dialog,
        at: None,
    })
}

/// The most an act waits for the transitions it started (a panel's opening slide, a
/// menu's fade; component libraries use 200 to 400 ms).
const ANIMATIONS_WITHIN: Duration = Duration::from_millis(1000);

/// Waits until the CSS transitions and animations the act started, and that end on their
/// own, have ended, bounded (issue 30): a panel that slides or grows open is read once
/// open, not while its controls are still off the page or clipped. Skipped while a dialog
/// holds the page; a page that cannot answer costs nothing more. Gives the time it took.
async fn animations_ended(page: &Session, began: Instant) -> Duration {
    if not_frozen(page).is_err() {
        return Duration::ZERO;
    }
    let start = Instant::now();
    let since = began.elapsed().as_millis();
    let expression = format!(
        "({})({since}, {})",
        js::ANIMATIONS,
        ANIMATIONS_WITHIN.as_millis()
    );
    let Ok(frame) = crate::page::world::Frame::top(page).await else {
        return Duration::ZERO;
    };
    let _ = frame
        .evaluate_awaiting(&expression, ANIMATIONS_WITHIN + Duration::from_millis(500))
        .await;
    start.elapsed()
}
