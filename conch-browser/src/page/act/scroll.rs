//! Scrolling the page, a panel or an element into view (GES-6), and the viewport a
//! screenshot's points are scaled to (GES-11).

use conch_cdp::Session;
use conch_policy::{Point, Size, click_at_point};
use serde_json::{Value, json};

use super::call::call_on;
use super::ready::{Still, actionable_point, not_frozen, settled, wait_actionable};
use super::{ActError, ActOptions, Direction, Done, js};
use crate::page::Element;
use crate::page::input;
use crate::page::script;
use crate::page::world::Frame;

/// Scrolls the document by most of the window (`scroll/scroll_page.js`).
const SCROLL_PAGE: &str = script::body(include_str!("scroll/scroll_page.js"));

/// Scrolls (GES-6): a direction alone scrolls the page; an element alone is brought into
/// view; both scroll the nearest panel around the element that scrolls on that axis, or
/// turn the mouse wheel over the element when none does.
///
/// # Errors
/// As [`click`](super::click) for the element, or a DevTools failure.
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
            let expression = format!("({SCROLL_PAGE})({dx}, {dy})");
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
            wait_actionable(el, options, false, Still::Waited).await?;
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
