//! Reading pages and acting on them: the accessibility snapshot with refs, diffs, parts
//! and find (reading), and trusted input on refs and points (acting).
//!
//! [`Element`] is where the two meet: reading resolves a ref to an element, acting sends
//! input to it.

pub mod act;
pub mod base64;
pub mod botcheck;
pub mod cast;
pub mod consent;
pub mod dialog;
pub mod download;
mod element;
mod error;
pub mod form;
pub mod gate;
pub mod input;
mod look;
mod read;
mod resolve;
mod screenshot;
pub mod script;
pub mod settle;
pub mod upload;
mod world;

pub use world::{call_in_world, evaluate_in_world, listened_marks, listener_lookups, page_address};
pub(crate) use world::{
    forget_browser, forget_session, frame_attached, frame_detached, watch_sockets,
};

pub use element::Element;
pub use error::PageError;
pub use read::{
    BIG_DIFF_CHARS, BIG_DIFF_PERCENT, Change, Found, MASK, NEIGHBOURHOOD_LINES, Reader, Snapshot,
    Who, changes_since, diff, read,
};
pub use resolve::resolve;
pub use screenshot::{
    MASK_COLOUR, SecretBox, THUMBNAIL_SCALE, screenshot_for_model, secret_fields, thumbnail,
};
