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

use conch_cdp::Session;
use conch_policy::{FieldFacts, classify_field};
use serde::Deserialize;
use serde_json::{Value, json};

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

/// How much a step's thumbnail shrinks a 1280×800 tab (to 320×200).
pub const THUMBNAIL_SCALE: f64 = 0.25;

/// A small JPEG of the tab's viewport for a step's card (LIVE-6, DATA-8), as it stands
/// once the step has settled. It is for the person, who sees the page anyway: password
/// fields show as the page draws them (dots).
///
/// When nobody casts the page, it is a capture scaled to [`THUMBNAIL_SCALE`] (no
/// screencast is ever started for it: the screencast runs only while someone watches,
/// LIVE-2). While the live view casts the page, it is a capture of the whole viewport,
/// unscaled: a scaled one lays the page out at the clip's scale and back, which stalls
/// the live view's cast (issue 32). The live view and a scaled capture never overlap on
/// one page ([`Cast`]).
///
/// # Errors
/// [`PageError::Cdp`], [`PageError::Image`].
pub async fn thumbnail(page: &Session) -> Result<Vec<u8>, PageError> {
    let cast = Cast::of(page);
    if !cast.live() {
        // Held for the capture, so the live view starts its cast only after it.
        if let Some(owner) = cast.try_own() {
            let shot = scaled(page).await;
            drop(owner);
            return shot;
        }
    }
    captured(page).await
}

/// The viewport captured at [`THUMBNAIL_SCALE`].
async fn scaled(page: &Session) -> Result<Vec<u8>, PageError> {
    let size = page.call_raw("Page.getLayoutMetrics", json!({})).await?;
    let view = &size["cssVisualViewport"];
    let width = view["clientWidth"].as_f64().unwrap_or(1280.0);
    let height = view["clientHeight"].as_f64().unwrap_or(800.0);
    let shot = page
        .call_raw(
            "Page.captureScreenshot",
            json!({
                "format": "jpeg",
                "quality": 50,
                "clip": { "x": view["pageX"].as_f64().unwrap_or(0.0),
                          "y": view["pageY"].as_f64().unwrap_or(0.0),
                          "width": width, "height": height, "scale": THUMBNAIL_SCALE },
            }),
        )
        .await?;
    decoded(&shot)
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
    decoded(&shot)
}

/// The picture of a `Page.captureScreenshot` answer.
fn decoded(shot: &Value) -> Result<Vec<u8>, PageError> {
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
