//! The `Page` domain: navigation, load events, screenshots.

use serde::{Deserialize, Serialize};

use super::{Empty, FrameId, command, event, string_enum};

/// `Page.enable`: turns on the domain's events.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Enable {}
command!(Enable, "Page.enable", Empty);

/// `Page.navigate`. Subscribe to [`LoadEventFired`] *before* sending it.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Navigate {
    /// Where to go.
    pub url: String,
    /// The referrer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub referrer: Option<String>,
    /// The transition type (`"typed"`, `"link"`...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transition_type: Option<String>,
    /// A frame to navigate instead of the main frame.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<FrameId>,
}
command!(Navigate, "Page.navigate", NavigateResponse);

impl Navigate {
    /// Navigate the main frame to `url`.
    pub fn new(url: impl Into<String>) -> Self {
        Navigate {
            url: url.into(),
            ..Navigate::default()
        }
    }
}

/// The answer to [`Navigate`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigateResponse {
    /// The frame that navigated.
    pub frame_id: FrameId,
    /// The loader id (absent for same-document navigations).
    #[serde(default)]
    pub loader_id: Option<String>,
    /// Why the navigation failed, if it did (for example `"net::ERR_CONNECTION_REFUSED"`).
    #[serde(default)]
    pub error_text: Option<String>,
}

/// `Page.loadEventFired`: the main frame's load event.
#[derive(Debug, Clone, Deserialize)]
pub struct LoadEventFired {
    /// Monotonic time in seconds.
    #[serde(default)]
    pub timestamp: f64,
}
event!(LoadEventFired, "Page.loadEventFired");

/// `Page.domContentEventFired`: the main frame's DOMContentLoaded.
#[derive(Debug, Clone, Deserialize)]
pub struct DomContentEventFired {
    /// Monotonic time in seconds.
    #[serde(default)]
    pub timestamp: f64,
}
event!(DomContentEventFired, "Page.domContentEventFired");

string_enum! {
    /// The image format of [`CaptureScreenshot`].
    pub enum ScreenshotFormat {
        /// JPEG.
        Jpeg = "jpeg",
        /// PNG (the browser's default).
        Png = "png",
        /// WebP.
        Webp = "webp",
    }
}

/// A rectangle of the page, for [`CaptureScreenshot::clip`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Viewport {
    /// Left, in CSS pixels.
    pub x: f64,
    /// Top, in CSS pixels.
    pub y: f64,
    /// Width, in CSS pixels.
    pub width: f64,
    /// Height, in CSS pixels.
    pub height: f64,
    /// Scale factor.
    pub scale: f64,
}

/// `Page.captureScreenshot`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaptureScreenshot {
    /// The format (PNG when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<ScreenshotFormat>,
    /// JPEG/WebP quality, 0 to 100.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quality: Option<u8>,
    /// Only this part of the page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clip: Option<Viewport>,
    /// Capture from the surface rather than the view.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_surface: Option<bool>,
    /// Capture beyond the viewport.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capture_beyond_viewport: Option<bool>,
    /// Favour speed over size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optimize_for_speed: Option<bool>,
}
command!(
    CaptureScreenshot,
    "Page.captureScreenshot",
    CaptureScreenshotResponse
);

/// The answer to [`CaptureScreenshot`].
#[derive(Debug, Clone, Deserialize)]
pub struct CaptureScreenshotResponse {
    /// The image, base64.
    pub data: String,
}
