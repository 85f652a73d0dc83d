//! Resolving a ref (`e12`, `f1e3`, `f1f2e7`) to an [`Element`] for acting (SNAP-2,
//! SNAP-4).
//!
//! Each `fN` step finds the `<iframe>` the world gave frame handle N and goes into its
//! frame: the same session for a frame in the page's process, the frame's own session
//! for an out-of-process one. The last step asks the frame's world for element N. A ref
//! whose element left the document, or whose document was replaced, is
//! [`PageError::RefGone`]: nothing else is ever picked in its place.
//!
//! [`Element::offset`] is the out-of-process frame's content-box origin in the page's
//! viewport at the time of resolving (summed through nested out-of-process frames), and
//! `(0, 0)` in the page's own process. Acting measures the frame's place again when it
//! acts (the page may have scrolled since), through the owner of each out-of-process
//! frame on the way up; the offset is only its fallback when no owner can be found.

use conch_cdp::Session;
use serde_json::json;

use super::element::Element;
use super::error::PageError;
use super::world::Frame;

/// One step of a ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Frame(u64),
    Element(u64),
}

/// Splits `f1e3` into its steps; `None` when it is not shaped like a ref.
fn parse(reference: &str) -> Option<Vec<Step>> {
    let mut steps = Vec::new();
    let mut rest = reference.trim();
    while !rest.is_empty() {
        let kind = rest.chars().next()?;
        rest = &rest[kind.len_utf8()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let n = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        steps.push(match kind {
            'f' | 'F' => Step::Frame(n),
            'e' | 'E' => Step::Element(n),
            _ => return None,
        });
    }
    match steps.split_last() {
        Some((Step::Element(_), frames)) if frames.iter().all(|s| matches!(s, Step::Frame(_))) => {
            Some(steps)
        }
        _ => None,
    }
}

/// The element behind `reference` on the tab whose page session is `page`.
///
/// # Errors
/// [`PageError::RefGone`] when its element left the document or the document changed,
/// [`PageError::NoSuchRef`] when no read gave it, [`PageError::FrameGone`] when its frame
/// is gone, [`PageError::Cdp`] when the browser does not answer.
pub async fn resolve(page: &Session, reference: &str) -> Result<Element, PageError> {
    let reference = reference.trim();
    let Some(steps) = parse(reference) else {
        return Err(PageError::NoSuchRef(reference.to_owned()));
    };
    let mut frame = Frame::top(page).await?;
    let mut offset = (0.0, 0.0);
    for step in steps {
        match step {
            Step::Frame(n) => {
                let Some((child, owner)) = frame.child(n).await? else {
                    return Err(PageError::FrameGone(reference.to_owned()));
                };
                if child.session.id() != frame.session.id() {
                    let (x, y) = content_origin(&frame.session, &owner)
                        .await
                        .ok_or_else(|| PageError::FrameGone(reference.to_owned()))?;
                    offset = (offset.0 + x, offset.1 + y);
                }
                frame = child;
            }
            Step::Element(n) => {
                let answer = frame
                    .evaluate(
                        &format!("typeof __conch === 'undefined' ? 'gone' : __conch.element({n})"),
                        false,
                    )
                    .await?;
                if let Some(object_id) = answer.result.object_id {
                    return Ok(Element {
                        reference: reference.to_owned(),
                        page: page.clone(),
                        frame: frame.session.clone(),
                        object_id,
                        offset,
                    });
                }
                return Err(
                    match answer.result.value.as_ref().and_then(|v| v.as_str()) {
                        Some("none") => PageError::NoSuchRef(reference.to_owned()),
                        _ => PageError::RefGone(reference.to_owned()),
                    },
                );
            }
        }
    }
    Err(PageError::NoSuchRef(reference.to_owned()))
}

/// Where the content box of the frame element `object_id` starts, in `session`'s viewport.
async fn content_origin(session: &Session, object_id: &str) -> Option<(f64, f64)> {
    let model = session
        .call_raw("DOM.getBoxModel", json!({ "objectId": object_id }))
        .await
        .ok()?;
    let quad = model["model"]["content"].as_array()?;
    Some((quad.first()?.as_f64()?, quad.get(1)?.as_f64()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_parse_into_steps() {
        assert_eq!(parse("e12"), Some(vec![Step::Element(12)]));
        assert_eq!(
            parse("f1f2e3"),
            Some(vec![Step::Frame(1), Step::Frame(2), Step::Element(3)])
        );
        assert_eq!(parse("f1"), None);
        assert_eq!(parse("e1f2"), None);
        assert_eq!(parse("x3"), None);
        assert_eq!(parse("e"), None);
        assert_eq!(parse(""), None);
        assert_eq!(parse("é1"), None);
    }
}
