//! Acting at a point of the screenshot (click_at, GES-10, GES-14): what lies there and
//! what holds the focus, through frames of any site, for the rules (HS-5, SEC-6).

use conch_cdp::Session;
use conch_policy::{FieldFacts, Point, classify_field, typing_verdict};

use super::call::describe;
use super::pointer::drag_points;
use super::ready::{not_frozen, settled};
use super::{ActError, ActOptions, Done, PointDone, Under, hit, js};
use crate::page::input::{self, Press};
use crate::page::world::Frame;

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
    through_focus(page, js::FOCUSED).await
}

/// Runs `expression` (it answers an element, or a frame holding the focus that it cannot
/// enter) in Conch's isolated world of the top frame, then of each frame of another site
/// it answers, and describes the element it ends on.
pub(super) async fn through_focus(
    page: &Session,
    expression: &str,
) -> Result<Option<Under>, ActError> {
    not_frozen(page)?;
    let mut frame = Frame::top(page).await?;
    for _ in 0..8 {
        let answer = frame.evaluate(expression, false).await?;
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
/// already scaled ([`scale_point`](super::scale_point)), then types `text` when given (GES-10, GES-14): a text
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
    let done = Done {
        at: Some(at),
        ..done
    };
    Ok(PointDone { done, under, typed })
}
