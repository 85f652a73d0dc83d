//! The page's shape from the panel's, and clicking by position (LIVE-4, AMB-11, GES-10,
//! GES-11, GES-12).
//!
//! The viewport is desktop-wide with the panel's shape: width = clamp(round(1.6 × panel
//! width), 960, 1440) CSS px, height = round(panel height × width ÷ panel width), so
//! nothing is letterboxed. With no panel it is 1280×800, device scale factor 1.

use serde::Serialize;

use crate::verdict::{RefusalCode, Verdict};

/// A width and height in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Size {
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

impl Size {
    /// A size.
    pub const fn new(width: u32, height: u32) -> Self {
        Self { width, height }
    }
}

/// A point in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    /// From the left.
    pub x: f64,
    /// From the top.
    pub y: f64,
}

/// The viewport with no panel reporting (AMB-11).
pub const DEFAULT_VIEWPORT: Size = Size::new(1280, 800);

/// The narrowest and widest viewport (LIVE-4).
pub const VIEWPORT_WIDTHS: (u32, u32) = (960, 1440);

/// The viewport for a panel of this size, or the default with none (or an empty panel).
/// The most recently reported panel wins; that is the caller's to track.
pub fn viewport_for_panel(panel: Option<Size>) -> Size {
    let Some(panel) = panel.filter(|p| p.width > 0 && p.height > 0) else {
        return DEFAULT_VIEWPORT;
    };
    let (min, max) = VIEWPORT_WIDTHS;
    let width = (1.6 * f64::from(panel.width))
        .round()
        .clamp(f64::from(min), f64::from(max));
    let height = (f64::from(panel.height) * width / f64::from(panel.width)).round();
    Size::new(to_u32(width), to_u32(height).max(1))
}

/// The most device pixels a CSS pixel of a panel counts for: a bigger ratio asks for no
/// bigger frame (the viewport bounds the frames anyway).
pub const MAX_DPR: f64 = 4.0;

/// A panel of `panel` CSS pixels shown at device pixel ratio `dpr` (positive and finite;
/// at most [`MAX_DPR`] counts), in device pixels, at least 1 on each axis: what the live
/// view's frames are sized by (LIVE-4, issue 30).
pub fn panel_in_device_px(panel: Size, dpr: f64) -> Size {
    let px = |css: u32| to_u32((f64::from(css) * dpr.min(MAX_DPR)).round()).max(1);
    Size::new(px(panel.width), px(panel.height))
}

/// The size of the live view's frames (LIVE-4, issue 30): on each axis the biggest of the
/// watchers' `screens` in device pixels, never bigger than the `viewport` (Chrome keeps
/// the viewport's shape within it, so each watcher gets at least the pixels it shows);
/// the viewport when no watcher's panel reported its size.
pub fn cast_size(screens: impl IntoIterator<Item = Size>, viewport: Size) -> Size {
    let mut biggest: Option<Size> = None;
    for s in screens {
        biggest = Some(biggest.map_or(s, |b| {
            Size::new(b.width.max(s.width), b.height.max(s.height))
        }));
    }
    let Some(biggest) = biggest else {
        return viewport;
    };
    Size::new(
        biggest.width.clamp(1, viewport.width.max(1)),
        biggest.height.clamp(1, viewport.height.max(1)),
    )
}

/// Where the person's pointer at `point` of the panel lands in the viewport `viewport`
/// (LIVE-9): the panel shows the whole viewport at the panel's size, so the point scales by
/// viewport ÷ panel on each axis. With no panel size reported, or a point outside the
/// panel, the point is kept inside the viewport.
pub fn panel_to_viewport(point: Point, panel: Option<Size>, viewport: Size) -> Point {
    let clamp = |v: f64, max: u32| {
        if v.is_finite() {
            v.clamp(0.0, f64::from(max.saturating_sub(1)))
        } else {
            0.0
        }
    };
    let (sx, sy) = match panel.filter(|p| p.width > 0 && p.height > 0) {
        Some(panel) => (
            f64::from(viewport.width) / f64::from(panel.width),
            f64::from(viewport.height) / f64::from(panel.height),
        ),
        None => (1.0, 1.0),
    };
    Point {
        x: clamp(point.x * sx, viewport.width),
        y: clamp(point.y * sy, viewport.height),
    }
}

fn to_u32(value: f64) -> u32 {
    if value >= f64::from(u32::MAX) {
        u32::MAX
    } else if value <= 0.0 {
        0
    } else {
        value as u32
    }
}

/// Where a click_at lands (GES-10, GES-11, GES-12): the point in the last screenshot's
/// pixels, scaled by new/old width and height when the viewport changed shape since.
/// Refused with no screenshot of the tab, or a point outside it.
pub fn click_at_point(
    point: Point,
    screenshot: Option<Size>,
    viewport_now: Size,
) -> Result<Point, Verdict> {
    let Some(shot) = screenshot.filter(|s| s.width > 0 && s.height > 0) else {
        return Err(Verdict::refuse(RefusalCode::NoScreenshot));
    };
    let within = |v: f64, max: u32| v.is_finite() && v >= 0.0 && v <= f64::from(max);
    if !within(point.x, shot.width) || !within(point.y, shot.height) {
        return Err(Verdict::refuse(RefusalCode::PointOutsideScreenshot));
    }
    Ok(Point {
        x: point.x * f64::from(viewport_now.width) / f64::from(shot.width),
        y: point.y * f64::from(viewport_now.height) / f64::from(shot.height),
    })
}
