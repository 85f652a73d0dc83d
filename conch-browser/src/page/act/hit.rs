//! Where a point lands, through every frame: the element's point in the page's viewport,
//! and what the pointer meets there (issue 11, class 3).
//!
//! An element's point comes from the browser's own box geometry (`DOM.getContentQuads`),
//! which already runs through every frame of the page's process, nested, scrolled or
//! transformed, and is carried into the page through the owner of an out-of-process frame
//! by that owner's content quad. What lies at a point is the browser's own hit test
//! (`DOM.getNodeForLocation`), which also runs through the frames of one process; an
//! out-of-process frame's owner hands the point on to the frame's own session. The node
//! found is then judged in Conch's isolated world of its frame, never in the page's realm,
//! so a page that redefines `elementFromPoint` or `contains` changes nothing.
//!
//! Deliberately absent: 3D transforms (perspective). A frame's quad is read as an affine
//! map of its viewport, which holds for every 2D transform.

use conch_cdp::Session;
use serde_json::{Value, json};

use super::{ActError, Desc, call_on, js, with_prelude};
use crate::page::Element;
use crate::page::world::Frame;

/// A quadrilateral in a viewport, its corners clockwise from the box's own top left.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Quad([(f64, f64); 4]);

impl Quad {
    /// A quad from CDP's eight numbers.
    pub(crate) fn from_json(value: &Value) -> Option<Quad> {
        let n: Vec<f64> = value.as_array()?.iter().filter_map(Value::as_f64).collect();
        if n.len() != 8 {
            return None;
        }
        Some(Quad([
            (n[0], n[1]),
            (n[2], n[3]),
            (n[4], n[5]),
            (n[6], n[7]),
        ]))
    }

    /// Its area (shoelace formula).
    pub(crate) fn area(&self) -> f64 {
        let p = &self.0;
        let mut twice = 0.0;
        for i in 0..4 {
            let (a, b) = (p[i], p[(i + 1) % 4]);
            twice += a.0 * b.1 - b.0 * a.1;
        }
        (twice / 2.0).abs()
    }

    /// Its centre.
    pub(crate) fn centre(&self) -> (f64, f64) {
        let p = &self.0;
        (
            (p[0].0 + p[1].0 + p[2].0 + p[3].0) / 4.0,
            (p[0].1 + p[1].1 + p[2].1 + p[3].1) / 4.0,
        )
    }

    /// Where the point `inner` of a box of `size` (its own untransformed pixels) lands,
    /// when the box shows as this quad.
    pub(crate) fn outer_point(self, inner: (f64, f64), size: (f64, f64)) -> (f64, f64) {
        let [q0, q1, _, q3] = self.0;
        let (a, b) = (inner.0 / size.0.max(1.0), inner.1 / size.1.max(1.0));
        (
            q0.0 + a * (q1.0 - q0.0) + b * (q3.0 - q0.0),
            q0.1 + a * (q1.1 - q0.1) + b * (q3.1 - q0.1),
        )
    }

    /// The point of a box of `size` that shows at `outer`; `None` for a flat quad.
    pub(crate) fn inner_point(self, outer: (f64, f64), size: (f64, f64)) -> Option<(f64, f64)> {
        let [q0, q1, _, q3] = self.0;
        let (e1, e2) = ((q1.0 - q0.0, q1.1 - q0.1), (q3.0 - q0.0, q3.1 - q0.1));
        let det = e1.0 * e2.1 - e1.1 * e2.0;
        if det.abs() < 1e-9 {
            return None;
        }
        let d = (outer.0 - q0.0, outer.1 - q0.1);
        let a = (d.0 * e2.1 - d.1 * e2.0) / det;
        let b = (e1.0 * d.1 - e1.1 * d.0) / det;
        Some((a * size.0, b * size.1))
    }
}

/// The point to press on `el`, in the viewport of `el.frame`'s session: the centre of its
/// first box with an area (an inline element broken over lines has several).
pub(crate) async fn session_point(el: &Element) -> Result<Option<(f64, f64)>, ActError> {
    let answer = el
        .frame
        .call_raw("DOM.getContentQuads", json!({ "objectId": el.object_id }))
        .await;
    let answer = match answer {
        Ok(answer) => answer,
        Err(e) if matches!(e.kind(), conch_cdp::ErrorKind::Protocol { .. }) => {
            if super::call::is_gone(&e) {
                return Err(ActError::Gone {
                    reference: el.reference.clone(),
                });
            }
            // "Could not compute content quads": no box to press.
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };
    Ok(answer["quads"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Quad::from_json)
        .find(|q| q.area() >= 1.0)
        .map(|q| q.centre()))
}

/// The owner of the out-of-process frame `session`: the session holding it (the page's, or
/// that of the out-of-process frame it is nested in), its content quad there and the
/// frame's viewport size. `None` when no attached session holds it.
async fn owner_of(page: &Session, session: &Session) -> Option<(Session, Quad, (f64, f64))> {
    let (parent, backend) = owner_node(page, session).await?;
    let model = parent
        .call_raw("DOM.getBoxModel", json!({ "backendNodeId": backend }))
        .await
        .ok()?;
    let quad = Quad::from_json(model.pointer("/model/content")?)?;
    let size = viewport_of(session).await.ok()?;
    Some((parent, quad, (size.2, size.3)))
}

/// The session holding the out-of-process frame `session` (the page's, or that of
/// another out-of-process frame) and the backend node id of its owner element there.
/// `None` when no attached session holds it.
async fn owner_node(page: &Session, session: &Session) -> Option<(Session, i64)> {
    let top = Frame::top(session).await.ok()?;
    let mut candidates = vec![page.clone()];
    candidates.extend(
        crate::page::world::frame_sessions()
            .into_iter()
            .filter(|s| s.id() != session.id() && s.id() != page.id()),
    );
    for parent in candidates {
        let Ok(owner) = parent
            .call_raw("DOM.getFrameOwner", json!({ "frameId": top.frame_id }))
            .await
        else {
            continue;
        };
        if let Some(backend) = owner.get("backendNodeId").and_then(Value::as_i64) {
            return Some((parent, backend));
        }
    }
    None
}

/// The owner element (`<iframe>`) of each out-of-process frame from `el`'s up to the
/// page, each as the session that holds it and its object in Conch's world there (so
/// the page's script can't answer for it): what must hold the focus, besides `el`
/// itself, for a key to reach `el` (issue 29). Empty for an element of the page's own
/// process. `None` when an owner on the way up can't be found.
pub(crate) async fn frame_owners(el: &Element) -> Option<Vec<(Session, String)>> {
    let mut owners = Vec::new();
    let mut session = el.frame.clone();
    for _ in 0..8 {
        if session.id() == el.page.id() {
            return Some(owners);
        }
        let (parent, backend) = owner_node(&el.page, &session).await?;
        let frame = Frame::top(&parent).await.ok()?;
        let object = frame.resolve_node(backend).await.ok()??;
        owners.push((parent.clone(), object));
        session = parent;
    }
    None
}

/// A session's layout viewport: its scroll offset and size, in CSS pixels (read by the
/// browser, not by the page's script).
pub(crate) async fn viewport_of(session: &Session) -> Result<(f64, f64, f64, f64), ActError> {
    let metrics = session
        .call_raw("Page.getLayoutMetrics", Value::Null)
        .await?;
    let v = &metrics["cssLayoutViewport"];
    let n = |k: &str| v[k].as_f64().unwrap_or(0.0);
    Ok((n("pageX"), n("pageY"), n("clientWidth"), n("clientHeight")))
}

/// Carries `at`, a point of `el.frame`'s viewport, into the page's viewport, through the
/// owner of each out-of-process frame on the way up, measured now.
pub(crate) async fn to_page(el: &Element, at: (f64, f64)) -> (f64, f64) {
    let mut session = el.frame.clone();
    let mut at = at;
    for _ in 0..8 {
        if session.id() == el.page.id() {
            return at;
        }
        match owner_of(&el.page, &session).await {
            Some((parent, quad, size)) => {
                at = quad.outer_point(at, size);
                session = parent;
            }
            None => break,
        }
    }
    // No owner found: the origin measured when the ref was resolved.
    (at.0 + el.offset.0, at.1 + el.offset.1)
}

/// What the pointer meets at a point of a session's viewport: the node, as an object of
/// Conch's world in its frame, and that frame.
#[derive(Debug, Clone)]
pub(crate) struct Hit {
    pub(crate) frame: Frame,
    pub(crate) object_id: String,
    /// The frame this node owns, when it is an `<iframe>` or `<frame>`.
    pub(crate) owns: Option<String>,
}

/// The browser's own hit test at `at` of `session`'s viewport, through the frames of its
/// process; `None` when nothing is there.
pub(crate) async fn hit(session: &Session, at: (f64, f64)) -> Result<Option<Hit>, ActError> {
    let (sx, sy, _, _) = viewport_of(session).await?;
    hit_scrolled(session, at, (sx, sy)).await
}

/// [`hit`], with the session's scroll offset already read ([`viewport_of`]).
pub(crate) async fn hit_scrolled(
    session: &Session,
    at: (f64, f64),
    scroll: (f64, f64),
) -> Result<Option<Hit>, ActError> {
    match node_at(session, at, scroll).await? {
        Some((backend, frame_id)) => hit_node(session, backend, frame_id).await,
        None => Ok(None),
    }
}

/// The node the browser's hit test finds at `at` of `session`'s viewport, its scroll
/// offset already read: its backend node id and the id of its frame; `None` when nothing
/// is there. One round trip: a caller that knows the node it expects compares the ids
/// and looks no further when they match (issue 32).
pub(crate) async fn node_at(
    session: &Session,
    at: (f64, f64),
    (sx, sy): (f64, f64),
) -> Result<Option<(i64, String)>, ActError> {
    // The hit test takes whole pixels of the document: the viewport point plus the scroll.
    let found = session
        .call_raw(
            "DOM.getNodeForLocation",
            json!({
                "x": (at.0 + sx).floor() as i64,
                "y": (at.1 + sy).floor() as i64,
                "includeUserAgentShadowDOM": false,
            }),
        )
        .await;
    let found = match found {
        Ok(found) => found,
        Err(e) if matches!(e.kind(), conch_cdp::ErrorKind::Protocol { message, .. } if message.contains("No node")) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };
    Ok(found["backendNodeId"]
        .as_i64()
        .zip(found["frameId"].as_str().map(str::to_owned)))
}

/// The node `backend` of `session`'s frame `frame_id` (found by [`node_at`]) as the
/// pointer meets it: an object of Conch's world in that frame.
pub(crate) async fn hit_node(
    session: &Session,
    backend: i64,
    frame_id: String,
) -> Result<Option<Hit>, ActError> {
    let frame = Frame {
        session: session.clone(),
        frame_id,
    };
    // Two independent questions about the node, asked together.
    let (object_id, node) = tokio::join!(
        frame.resolve_node(backend),
        session.call_raw("DOM.describeNode", json!({ "backendNodeId": backend })),
    );
    let Some(mut object_id) = object_id? else {
        return Ok(None);
    };
    let node = node?;
    if node.pointer("/node/pseudoType").is_some() {
        // A `::before` or `::after` (an icon font's glyph): newer browsers hit the pseudo
        // element itself, which is no element of the page; the one it belongs to is.
        object_id = originating(session, &object_id).await?;
    }
    let owns = node
        .pointer("/node/frameId")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(Some(Hit {
        frame,
        object_id,
        owns,
    }))
}

/// The element a pseudo element (`object_id`) belongs to, as an object of the same world.
async fn originating(session: &Session, object_id: &str) -> Result<String, ActError> {
    let answer = session
        .call_raw(
            "Runtime.callFunctionOn",
            json!({
                "functionDeclaration": "function() { return this.element || this.parentElement || this; }",
                "objectId": object_id,
                "silent": true,
            }),
        )
        .await?;
    Ok(answer
        .pointer("/result/objectId")
        .and_then(Value::as_str)
        .map_or_else(|| object_id.to_owned(), str::to_owned))
}

/// The backend node id of `el` (`None` when the browser gives none): what the hit test's
/// answer is compared with.
pub(crate) async fn backend_of(el: &Element) -> Result<Option<i64>, ActError> {
    let node = el
        .frame
        .call_raw("DOM.describeNode", json!({ "objectId": el.object_id }))
        .await
        .map_err(|e| super::call::gone_or(e, &el.reference))?;
    Ok(node.pointer("/node/backendNodeId").and_then(Value::as_i64))
}

/// Whether `hit` is `el`, inside it (shadow trees included) or inside one of its labels,
/// judged in the hit's frame's isolated world; `backend` is `el`'s ([`backend_of`]).
pub(crate) async fn lands_on(
    el: &Element,
    backend: Option<i64>,
    hit: &Hit,
) -> Result<bool, ActError> {
    let Some(backend) = backend else {
        return Ok(false);
    };
    if hit.frame.session.id() != el.frame.id() {
        return Ok(false);
    }
    // The element as seen from the same world as the hit (objects of two worlds can't
    // meet in one call).
    let Some(mine) = hit.frame.resolve_node(backend).await? else {
        return Ok(false);
    };
    let answer = hit
        .frame
        .session
        .call_raw(
            "Runtime.callFunctionOn",
            json!({
                "functionDeclaration": with_prelude(js::LANDS_ON),
                "objectId": mine,
                "arguments": [{ "objectId": hit.object_id }],
                "returnByValue": true,
                "silent": true,
            }),
        )
        .await
        .map_err(|e| super::call::gone_or(e, &el.reference))?;
    Ok(super::call::script_value(&answer)? == Value::Bool(true))
}

/// The thing that covers a point: the dialog or fixed layer around `hit`, or `hit`.
pub(crate) async fn blocker(hit: &Hit) -> Result<Desc, ActError> {
    let value = call_on(
        &hit.frame.session,
        &hit.object_id,
        &with_prelude(js::BLOCKER),
        &[],
        "the element",
    )
    .await?;
    Ok(serde_json::from_value(value).unwrap_or_default())
}

/// What lies at `at` of the page's viewport, through frames of any site and process: the
/// innermost node, with its frame.
pub(crate) async fn deepest(page: &Session, at: (f64, f64)) -> Result<Option<Hit>, ActError> {
    let mut session = page.clone();
    let mut at = at;
    for _ in 0..8 {
        let Some(found) = hit(&session, at).await? else {
            return Ok(None);
        };
        let Some(child) = found.owns.as_deref() else {
            return Ok(Some(found));
        };
        // A frame of this process was already gone through by the hit test; an
        // out-of-process frame is entered through its owner's box.
        let Some(frame) = Frame::owned_by(&session, &found.object_id).await? else {
            return Ok(Some(found));
        };
        if frame.session.id() == session.id() || frame.frame_id != child {
            return Ok(Some(found));
        }
        let model = session
            .call_raw("DOM.getBoxModel", json!({ "objectId": found.object_id }))
            .await?;
        let (_, _, width, height) = viewport_of(&frame.session).await?;
        let inner = model
            .pointer("/model/content")
            .and_then(Quad::from_json)
            .and_then(|q| q.inner_point(at, (width, height)));
        let Some(inner) = inner else {
            return Ok(Some(found));
        };
        session = frame.session;
        at = inner;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame scaled by 0.8 and moved: points go out and back in through its quad.
    #[test]
    fn issue_11_a_transformed_frame_maps_both_ways() {
        let quad = Quad([(40.0, 100.0), (360.0, 100.0), (360.0, 228.0), (40.0, 228.0)]);
        let size = (400.0, 160.0);
        assert_eq!(quad.outer_point((100.0, 50.0), size), (120.0, 140.0));
        assert_eq!(quad.inner_point((120.0, 140.0), size), Some((100.0, 50.0)));
        assert_eq!(quad.centre(), (200.0, 164.0));
        assert!((quad.area() - 320.0 * 128.0).abs() < 1e-6);
        // Turned a quarter: the box's top edge runs down the page.
        let turned = Quad([(100.0, 0.0), (100.0, 50.0), (80.0, 50.0), (80.0, 0.0)]);
        let (x, y) = turned.outer_point((10.0, 5.0), (50.0, 20.0));
        assert!(
            (x - 95.0).abs() < 1e-9 && (y - 10.0).abs() < 1e-9,
            "{x},{y}"
        );
        let back = turned.inner_point((x, y), (50.0, 20.0)).unwrap();
        assert!((back.0 - 10.0).abs() < 1e-9 && (back.1 - 5.0).abs() < 1e-9);
        let flat = Quad([(0.0, 0.0), (10.0, 0.0), (10.0, 0.0), (0.0, 0.0)]);
        assert_eq!(flat.inner_point((1.0, 1.0), (10.0, 10.0)), None);
        assert_eq!(Quad::from_json(&json!([1, 2, 3])), None);
    }
}
