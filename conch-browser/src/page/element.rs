//! An element of a page, found by its ref, ready for acting.

use conch_cdp::Session;

/// An element of a page, resolved from a ref (`e12`, or `f1e3` inside a frame).
///
/// Input always goes to [`Element::page`], the tab's top-level session, at viewport
/// coordinates: Chromium routes it to the right frame, out-of-process ones included. DOM
/// questions about the element go to [`Element::frame`], the session whose document holds
/// it.
#[derive(Debug, Clone)]
pub struct Element {
    /// The ref the agent used.
    pub reference: String,
    /// The tab's top-level page session: input goes here.
    pub page: Session,
    /// The session of the frame that holds the element (the page's own session for the
    /// main frame and same-process frames).
    pub frame: Session,
    /// The element's remote object id in `frame`.
    pub object_id: String,
    /// Where the frame's viewport origin sat in the page's viewport when the ref was
    /// resolved, in CSS pixels (`(0, 0)` in the page's own process). Acting measures it
    /// again through the owner of each out-of-process frame on the way up and falls back
    /// to this only when no owner can be found.
    pub offset: (f64, f64),
}
