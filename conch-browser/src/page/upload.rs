//! Putting files into a file box (UP-1, UP-12): a file input by its element, or a button
//! that opens the file picker, whose picker Conch answers itself (no OS dialog opens).
//!
//! Files travel as bytes inside the DevTools messages and become `File` objects in the
//! page (a `DataTransfer` built by script), so a browser on another machine receives them
//! too: no host path ever reaches the browser.
//!
//! Deliberately absent: reading files from disk or judging paths (the tools crate checks
//! the path with conch-policy's `check_upload` and hands over the bytes), and
//! `DOM.setFileInputFiles`, which takes host paths.

use std::time::Duration;

use conch_cdp::Session;
use futures_util::StreamExt;
use serde_json::{Value, json};

use super::Element;
use super::act::{self, ActError, ActOptions, Done};
use super::input::{self, Press};
use super::settle::Settle;
use crate::page::script;

/// How long to wait for a button's click to open the file picker.
const CHOOSER_WAIT: Duration = Duration::from_secs(3);

/// One file, as bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct UploadFile {
    /// The file's name as the page sees it.
    pub name: String,
    /// Its MIME type (may be empty).
    pub mime: String,
    /// Its contents.
    pub bytes: Vec<u8>,
}

impl std::fmt::Debug for UploadFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UploadFile")
            .field("name", &self.name)
            .field("mime", &self.mime)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

/// What the upload did.
#[derive(Debug, Clone)]
pub struct Uploaded {
    /// The names and sizes the file box now holds.
    pub files: Vec<(String, u64)>,
    /// Whether Conch answered a file picker the element opened.
    pub via_picker: bool,
    /// The settle after.
    pub done: Done,
}

const SET_FILES: &str = script::body(include_str!("upload/set_files.js"));

async fn set_files(
    session: &Session,
    object_id: &str,
    files: &[UploadFile],
    reference: &str,
) -> Result<Vec<(String, u64)>, ActError> {
    let list: Vec<Value> = files
        .iter()
        .map(|f| json!({ "name": f.name, "mime": f.mime, "b64": super::base64::encode(&f.bytes) }))
        .collect();
    let answer = act::call_on(
        session,
        object_id,
        SET_FILES,
        &[Value::Array(list)],
        reference,
    )
    .await?;
    if answer.get("oneOnly").is_some() {
        return Err(ActError::Upload(format!(
            "The file box {reference} takes one file; pass one."
        )));
    }
    if answer.get("notFile").is_some() {
        return Err(ActError::Upload(format!(
            "{reference} is not a file box; pick the file input or the button that opens the file picker."
        )));
    }
    Ok(answer
        .get("files")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|f| Some((f.get(0)?.as_str()?.to_owned(), f.get(1)?.as_u64()?)))
                .collect()
        })
        .unwrap_or_default())
}

/// Puts `files` into the file box `el`: a file input directly, or, for any other
/// element, the file picker its click opens (UP-1).
///
/// # Errors
/// [`ActError::Upload`] when `el` opens no file picker or takes fewer files, or as
/// [`act::click`].
pub async fn upload(
    el: &Element,
    files: &[UploadFile],
    options: &ActOptions,
) -> Result<Uploaded, ActError> {
    let desc = act::describe(&el.frame, &el.object_id, &el.reference).await?;
    let settle = Settle::begin(&el.page).await;
    if desc.tag == "input" && desc.input_type == "file" {
        let names = set_files(&el.frame, &el.object_id, files, &el.reference).await?;
        return Ok(Uploaded {
            files: names,
            via_picker: false,
            done: Done {
                settled: settle.finish(options.settle).await,
                through_dialog: false,
                at: None,
            },
        });
    }
    // A button that opens the picker: intercept it on the session of the element's frame.
    let session = &el.frame;
    let mut opened = session.events("Page.fileChooserOpened");
    session.call_raw("Page.enable", Value::Null).await?;
    session
        .call_raw(
            "Page.setInterceptFileChooserDialog",
            json!({ "enabled": true }),
        )
        .await?;
    let outcome = async {
        let (at, _) = act::actionable_point(el, options, true).await?;
        input::click(&el.page, at, Press::Left).await?;
        let event = tokio::time::timeout(CHOOSER_WAIT, opened.next())
            .await
            .ok()
            .flatten()
            .ok_or_else(|| {
                ActError::Upload(format!(
                    "Clicking {} ({}) opened no file picker; pick the file input or the button that opens the picker.",
                    desc.what(),
                    el.reference
                ))
            })?;
        let params: Value = event.parse().map_err(ActError::Cdp)?;
        let backend = params
            .get("backendNodeId")
            .and_then(Value::as_i64)
            .ok_or_else(|| ActError::Upload("The file picker named no file box.".to_owned()))?;
        let node = session
            .call_raw("DOM.resolveNode", json!({ "backendNodeId": backend }))
            .await?;
        let object_id = node
            .pointer("/object/objectId")
            .and_then(Value::as_str)
            .ok_or_else(|| ActError::Upload("The file picker's file box is gone.".to_owned()))?;
        set_files(session, object_id, files, &el.reference).await
    }
    .await;
    let _ = session
        .call_raw(
            "Page.setInterceptFileChooserDialog",
            json!({ "enabled": false }),
        )
        .await;
    let names = outcome?;
    Ok(Uploaded {
        files: names,
        via_picker: true,
        done: Done {
            settled: settle.finish(options.settle).await,
            through_dialog: false,
            at: None,
        },
    })
}
