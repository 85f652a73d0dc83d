//! Pointer gestures on an element: click, double and right click, hover (GES-1, GES-3),
//! and drag, HTML5 or built on mouse events (GES-4).

use std::time::Duration;

use conch_cdp::Session;
use serde_json::{Value, json};

use super::call::{call_on, call_on_handle};
use super::ready::{
    Known, Still, actionable_point, free_point, on_top, point_in_view, prepared, settled,
};
use super::{ActError, ActOptions, Done, How, js};
use crate::page::Element;
use crate::page::input::{self, Press};

/// Clicks, double-clicks, right-clicks or hovers `el` (GES-1).
///
/// # Errors
/// [`ActError::Gone`], [`ActError::Hidden`], [`ActError::Disabled`] (not for a hover),
/// [`ActError::Moving`], [`ActError::Covered`], or a DevTools failure.
pub async fn click(el: &Element, how: How, options: &ActOptions) -> Result<Done, ActError> {
    let at = match how {
        How::Hover => actionable_point(el, options, false).await?.0,
        _ => arrive(el, options).await?,
    };
    let done = settled(&el.page, options, async {
        match how {
            How::Hover => move_into(el, at, options).await?,
            // The pointer already stands at `at` (`arrive`).
            How::Click => input::press_at(&el.page, at, Press::Left).await?,
            How::Double => input::press_at(&el.page, at, Press::Double).await?,
            How::Right => input::press_at(&el.page, at, Press::Right).await?,
        }
        Ok(())
    })
    .await?;
    Ok(Done {
        at: Some(at),
        ..done
    })
}

/// How long the frame's page is given to see the pointer's move before the pointer tries
/// again (a move can be answered before the page saw it).
const FRAME_INPUT_WITHIN: Duration = Duration::from_millis(50);

/// Moves the pointer to `at`, over `el`. For an element of an out-of-process frame, until
/// the move reaches the frame's own window (issue 31): the browser sends a frame no input
/// until it has drawn it (a frame just added or scrolled into view, or whose page waits
/// for its stylesheet), and input sent before goes to the page around the frame, while
/// the frame's own document already reads and measures the element in place. A press
/// sent then was lost, so the press waits for the frame as it waits for the element to
/// be visible (GES-15): the pointer moves away and back again until the frame's page sees
/// it, within [`ActOptions::actionable_within`]; past that, the press goes as before (a
/// page may keep pointer events from every watcher).
async fn move_into(el: &Element, at: (f64, f64), options: &ActOptions) -> Result<(), ActError> {
    if el.frame.id() == el.page.id() {
        input::move_to(&el.page, at).await?;
        return Ok(());
    }
    let deadline = tokio::time::Instant::now() + options.actionable_within;
    let within = u64::try_from(FRAME_INPUT_WITHIN.as_millis()).unwrap_or(50);
    let mut again = false;
    loop {
        let watch = call_on_handle(
            &el.frame,
            &el.object_id,
            js::POINTER_WATCH,
            &[],
            &el.reference,
        )
        .await?;
        if again {
            // A move to where the pointer stands already may not be sent on.
            input::move_to(&el.page, (at.0 + 1.0, at.1)).await?;
        }
        input::move_to(&el.page, at).await?;
        let Some(watch) = watch else {
            return Ok(());
        };
        let came = call_on(
            &el.frame,
            &watch,
            "function(within) { return this(within); }",
            &[json!(within)],
            &el.reference,
        )
        .await;
        let _ = el
            .frame
            .call_raw("Runtime.releaseObject", json!({ "objectId": watch }))
            .await;
        if came? == Value::Bool(true) || tokio::time::Instant::now() >= deadline {
            return Ok(());
        }
        again = true;
    }
}

/// Drags `from` onto `to` (GES-4): press, move in steps, release. HTML5 drag and drop
/// is carried through the browser's drag interception; pointer-built sortable lists see
/// the moves themselves.
///
/// # Errors
/// As [`click`], for either end.
pub async fn drag(from: &Element, to: &Element, options: &ActOptions) -> Result<Done, ActError> {
    let start = arrive(from, options).await?;
    // The target may be covered by the dragged element's ghost later, not now.
    let (end, _) = actionable_point(to, options, false).await?;
    let done = settled(&from.page, options, drag_points(&from.page, start, end)).await?;
    Ok(Done {
        at: Some(end),
        ..done
    })
}

/// How many times the pointer follows an element that moved when the pointer came.
const ARRIVALS: usize = 3;

/// Brings the pointer onto `el` and gives the point to press, with the pointer standing
/// there: the pointer's arrival can move the element (a hover menu that closes as the
/// pointer leaves it, a row that grows under it), so the point is measured again after the
/// move and followed until it holds. Pressing where the element was would press whatever
/// took its place.
///
/// The move itself is the stillness check (GES-15): a pointer move is delivered with the
/// next animation frame, so the same point on both sides of it is an element that held
/// still for a frame, and the first look need not wait one of its own. The point the
/// pointer first goes to is read from the element's box alone; the look after the move is
/// the browser's hit test, so what covers the element is found once, where the pointer
/// stands (issue 11: a hit test on both sides of the move cost every click its time). An
/// element that left the point, or that something covers, is waited for as any (visible,
/// still over a frame of its own, enabled, on top) before the pointer follows it.
async fn arrive(el: &Element, options: &ActOptions) -> Result<(f64, f64), ActError> {
    let (desc, pressed) = prepared(el, options, true, Still::Unchecked).await?;
    let mut known = Known::default();
    let (mut at, mut viewport) = match point_in_view(&pressed).await? {
        Some((at, viewport)) => (at, Some(viewport)),
        None => (on_top(&pressed, &desc, options, &mut known).await?, None),
    };
    let mut moved = false;
    for _ in 0..ARRIVALS {
        move_into(&pressed, at, options).await?;
        let now = match free_point(&pressed, viewport.take(), &mut known).await? {
            Some(now) if !moved => now,
            _ => actionable_point(el, options, true).await?.0,
        };
        if (now.0 - at.0).abs() < 1.0 && (now.1 - at.1).abs() < 1.0 {
            return Ok(at);
        }
        moved = true;
        at = now;
    }
    input::move_to(&el.page, at).await?;
    Ok(at)
}

pub(super) async fn drag_points(
    page: &Session,
    start: (f64, f64),
    end: (f64, f64),
) -> Result<(), ActError> {
    use futures_util::StreamExt;
    let mut intercepted = page.events("Input.dragIntercepted");
    page.call_raw("Input.setInterceptDrags", json!({ "enabled": true }))
        .await?;
    // A drag cancelled midway leaves no drags intercepted for the person (nor its button
    // held: `held`).
    let intercepting = Intercepting(Some(page.clone()));
    let mut held = input::Held::new(page);
    let outcome = async {
        held.left_down(start).await?;
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
                held.drag_move(at).await?;
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
        held.left_up(end).await?;
        Ok::<(), ActError>(())
    }
    .await;
    drop(held);
    intercepting.end().await;
    outcome
}

/// A page whose drags Conch intercepts until [`Intercepting::end`]; dropped before that
/// (the drag's call was cancelled), it turns the interception off on its own.
struct Intercepting(Option<Session>);

impl Intercepting {
    async fn end(mut self) {
        if let Some(page) = self.0.take() {
            let _ = page
                .call_raw("Input.setInterceptDrags", json!({ "enabled": false }))
                .await;
        }
    }
}

impl Drop for Intercepting {
    fn drop(&mut self) {
        if let Some(page) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                let _ = page
                    .call_raw("Input.setInterceptDrags", json!({ "enabled": false }))
                    .await;
            });
        }
    }
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
