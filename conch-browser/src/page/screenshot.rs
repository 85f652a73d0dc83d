//! Screenshots for the model with every secret field painted over, in every frame (SEC-4).
//!
//! The fields' boxes come from Conch's world in each frame (never their values), are
//! classified by conch-policy's `classify_field`, and are painted as opaque boxes of
//! [`MASK_COLOUR`] on the captured PNG. Boxes are read before and after the capture and
//! both are painted, so a field that moves in between is still covered. The badge Conch
//! shows on its pages in the person's own Chrome is hidden for the capture. Deliberately
//! absent: the person's live view, which is never masked.
//!
//! Also the steps' thumbnails for the person's transcript (LIVE-6, DATA-8), made as
//! cheaply as the browser allows: one frame of a screencast of the page ([`super::cast`]).

use std::collections::HashMap;
use std::io::Cursor;
use std::time::Duration;

use conch_cdp::Session;
use conch_policy::{FieldFacts, classify_field};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::cast::Cast;
use super::error::PageError;
use super::read::Reader;
use super::world::Frame;

/// The colour secret fields are painted with (RGB).
pub const MASK_COLOUR: [u8; 3] = [0x1f, 0x29, 0x37];

/// Device pixels painted beyond each side of a field's box.
const MARGIN: f64 = 2.0;

/// A secret field's box in the page's viewport, in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SecretBox {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawFields {
    fields: Vec<RawBox>,
    frames: Vec<RawFrame>,
    width: f64,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawBox {
    input_type: String,
    autocomplete: String,
    label: String,
    name: String,
    id: String,
    placeholder: String,
    x: f64,
    y: f64,
    width: f64,
    height: f64,
}

#[derive(Debug, Deserialize)]
struct RawFrame {
    frame: u64,
    x: f64,
    y: f64,
}

/// The boxes of every secret field of the page, frames included, in the page's viewport.
///
/// # Errors
/// [`PageError::Cdp`], [`PageError::Script`].
pub async fn secret_fields(
    page: &Session,
    reader: &mut Reader,
) -> Result<Vec<SecretBox>, PageError> {
    Ok(fields_and_width(page, reader).await?.0)
}

async fn fields_and_width(
    page: &Session,
    reader: &mut Reader,
) -> Result<(Vec<SecretBox>, f64), PageError> {
    let mut boxes = Vec::new();
    let top = Frame::top(page).await?;
    let width = frame_fields(top, (0.0, 0.0), reader.high_water_mut(), &mut boxes).await?;
    Ok((boxes, width))
}

async fn frame_fields(
    frame: Frame,
    offset: (f64, f64),
    high_water: &mut HashMap<String, u64>,
    boxes: &mut Vec<SecretBox>,
) -> Result<f64, PageError> {
    let value = frame
        .call_reader("__conch.fields()", Some(high_water))
        .await?
        .unwrap_or(Value::Null);
    let raw: RawFields = serde_json::from_value(value)
        .map_err(|e| PageError::Script(format!("the field list did not fit: {e}")))?;
    for field in &raw.fields {
        let facts = FieldFacts {
            input_type: field.input_type.clone(),
            autocomplete: field.autocomplete.clone(),
            label: field.label.clone(),
            name: field.name.clone(),
            id: field.id.clone(),
            placeholder: field.placeholder.clone(),
        };
        if classify_field(&facts).is_secret() {
            boxes.push(SecretBox {
                x: offset.0 + field.x,
                y: offset.1 + field.y,
                width: field.width,
                height: field.height,
            });
        }
    }
    for inner in &raw.frames {
        let Some((child, _)) = frame.child(inner.frame).await? else {
            continue;
        };
        let at = (offset.0 + inner.x, offset.1 + inner.y);
        // A frame that cannot be asked is painted over whole rather than shown.
        if Box::pin(frame_fields(child, at, high_water, boxes))
            .await
            .is_err()
        {
            boxes.push(SecretBox {
                x: at.0,
                y: at.1,
                width: raw.width,
                height: raw.width,
            });
        }
    }
    Ok(raw.width)
}

/// A PNG of the tab's viewport for the model, every secret field painted over in
/// [`MASK_COLOUR`] (SEC-4).
///
/// # Errors
/// [`PageError::Cdp`], [`PageError::Script`], [`PageError::Image`].
pub async fn screenshot_for_model(
    page: &Session,
    reader: &mut Reader,
) -> Result<Vec<u8>, PageError> {
    let (mut boxes, _) = fields_and_width(page, reader).await?;
    // The badge on Conch's pages in the person's own Chrome is for the person, never
    // for the model (BE-14).
    let badge = crate::own_chrome::hide_badge(page).await;
    let shot = page
        .call_raw("Page.captureScreenshot", json!({ "format": "png" }))
        .await;
    if let Some(context) = badge {
        crate::own_chrome::unhide_badge(page, context).await;
    }
    let shot = shot?;
    let (after, css_width) = fields_and_width(page, reader).await?;
    boxes.extend(after);
    let data = shot["data"]
        .as_str()
        .ok_or_else(|| PageError::Image("no image data".to_owned()))?;
    let png =
        super::base64::decode(data).ok_or_else(|| PageError::Image("bad base64".to_owned()))?;
    let mut image = image::load_from_memory_with_format(&png, image::ImageFormat::Png)
        .map_err(|e| PageError::Image(e.to_string()))?
        .into_rgba8();
    let scale = if css_width > 0.0 {
        f64::from(image.width()) / css_width
    } else {
        1.0
    };
    paint(&mut image, &boxes, scale);
    let mut out = Cursor::new(Vec::new());
    image
        .write_to(&mut out, image::ImageFormat::Png)
        .map_err(|e| PageError::Image(e.to_string()))?;
    Ok(out.into_inner())
}

/// How much a step's thumbnail shrinks a 1280×800 tab (to 320×200, [`THUMBNAIL_MAX`]).
pub const THUMBNAIL_SCALE: f64 = 0.25;

/// The most a step's thumbnail made by its own cast measures on either side, in pixels:
/// a 1280×800 tab gives 320×200.
pub const THUMBNAIL_MAX: u32 = 320;

/// How long a thumbnail's own cast waits for its one frame before it captures the page
/// instead (a tab the browser does not draw, such as one hidden in the person's Chrome).
const FRAME_WITHIN: Duration = Duration::from_secs(2);

/// How long a thumbnail waits for the page's screencast while it is another step's
/// thumbnail's for a moment.
const OWNER_WITHIN: Duration = Duration::from_secs(2);

/// A small JPEG of the tab's viewport for a step's card (LIVE-6, DATA-8), as it stands
/// once the step has settled. It is for the person, who sees the page anyway: password
/// fields show as the page draws them (dots).
///
/// When nobody casts the page, it is one frame of a screencast of its own, at most
/// [`THUMBNAIL_MAX`] pixels a side, which the browser scales as it copies the frame, once
/// the page has drawn what it shows now (two animation frames): about half the browser's
/// work of a scaled capture, and little of it on the page's main thread (issue 32). While
/// the live view casts the page, or when no frame comes, it is a capture of the whole
/// viewport, unscaled: a scaled one would stall the live view's cast.
///
/// # Errors
/// [`PageError::Cdp`], [`PageError::Image`].
pub async fn thumbnail(page: &Session) -> Result<Vec<u8>, PageError> {
    let cast = Cast::of(page);
    if !cast.live() {
        // A cast's frame is the view as last drawn, which may be from before the step's
        // last change: the page draws it first.
        drawn(page).await;
    }
    let asked = Instant::now();
    while !cast.live() {
        if let Some(owner) = cast.try_own() {
            let frame = one_frame(page).await;
            drop(owner);
            match frame {
                Ok(Some(jpeg)) => return Ok(jpeg),
                Ok(None) => break,
                Err(e) => {
                    tracing::debug!(target: "conch_browser", error = %e, "a thumbnail's cast failed; capturing instead");
                    break;
                }
            }
        }
        if asked.elapsed() >= OWNER_WITHIN {
            break;
        }
        // Another step's thumbnail casts the page for a frame, or the live view starts.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    captured(page).await
}

/// How long the page may take to draw what it shows now before its thumbnail is taken
/// anyway (a page busy with a script of its own, a tab the browser does not draw).
const DRAWN_WITHIN: Duration = Duration::from_millis(500);

/// Waits until the page has drawn what it shows now: two animation frames, in Conch's
/// world, where the page cannot redefine `requestAnimationFrame`. Not asked of a page
/// frozen by its dialog (DLG-14), which draws nothing more until it is answered.
async fn drawn(page: &Session) {
    if super::dialog::watching(page).is_some_and(|w| w.is_pending()) {
        return;
    }
    let Ok(top) = Frame::top(page).await else {
        return;
    };
    let _ = top
        .evaluate_awaiting(
            "new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))",
            DRAWN_WITHIN,
        )
        .await;
}

#[derive(Deserialize)]
struct CastFrame {
    data: String,
}

/// One frame of a screencast of the page's viewport, at most [`THUMBNAIL_MAX`] a side;
/// `None` when none came within [`FRAME_WITHIN`]. The browser sends a cast's first frame
/// at once, changed or not.
async fn one_frame(page: &Session) -> Result<Option<Vec<u8>>, PageError> {
    let mut frames = page.events("Page.screencastFrame");
    page.call_raw(
        "Page.startScreencast",
        json!({
            "format": "jpeg",
            "quality": 50,
            "maxWidth": THUMBNAIL_MAX,
            "maxHeight": THUMBNAIL_MAX,
        }),
    )
    .await?;
    let frame = tokio::time::timeout(FRAME_WITHIN, frames.next()).await;
    // Unacknowledged, the cast sends no second frame; stopped, it sends none at all.
    let stopped = page.call_raw("Page.stopScreencast", json!({})).await;
    let Ok(Some(event)) = frame else {
        return Ok(None);
    };
    stopped?;
    let frame: CastFrame = event
        .parse()
        .map_err(|e| PageError::Image(format!("the frame did not fit: {e}")))?;
    super::base64::decode(&frame.data)
        .map(Some)
        .ok_or_else(|| PageError::Image("bad base64".to_owned()))
}

/// The viewport captured whole, unscaled. Never with a clip: the browser lays the page
/// out at a clip's scale for it and back, which stalls a screencast running on the page
/// (the live view's would send no frame more).
async fn captured(page: &Session) -> Result<Vec<u8>, PageError> {
    let shot = page
        .call_raw(
            "Page.captureScreenshot",
            json!({ "format": "jpeg", "quality": 50, "optimizeForSpeed": true }),
        )
        .await?;
    let data = shot["data"]
        .as_str()
        .ok_or_else(|| PageError::Image("no image data".to_owned()))?;
    super::base64::decode(data).ok_or_else(|| PageError::Image("bad base64".to_owned()))
}

/// Paints `boxes` (CSS pixels, `scale` device pixels each) opaque in [`MASK_COLOUR`].
fn paint(image: &mut image::RgbaImage, boxes: &[SecretBox], scale: f64) {
    let (w, h) = (f64::from(image.width()), f64::from(image.height()));
    let [r, g, b] = MASK_COLOUR;
    for found in boxes {
        let left = (found.x * scale - MARGIN).floor().clamp(0.0, w);
        let top = (found.y * scale - MARGIN).floor().clamp(0.0, h);
        let right = ((found.x + found.width) * scale + MARGIN)
            .ceil()
            .clamp(0.0, w);
        let bottom = ((found.y + found.height) * scale + MARGIN)
            .ceil()
            .clamp(0.0, h);
        let (left, top, right, bottom) = (left as u32, top as u32, right as u32, bottom as u32);
        for y in top..bottom {
            for x in left..right {
                image.put_pixel(x, y, image::Rgba([r, g, b, 255]));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paint_covers_the_box_and_stays_inside_the_image() {
        let mut image = image::RgbaImage::new(20, 20);
        paint(
            &mut image,
            &[SecretBox {
                x: 5.0,
                y: 5.0,
                width: 100.0,
                height: 2.0,
            }],
            1.0,
        );
        assert_eq!(image.get_pixel(10, 5).0[..3], MASK_COLOUR);
        assert_eq!(image.get_pixel(19, 8).0[..3], MASK_COLOUR);
        assert_eq!(image.get_pixel(10, 15).0, [0, 0, 0, 0]);
    }
}
