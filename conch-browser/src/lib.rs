//! conch-browser: Conch's browser runtime.
//!
//! So far it holds [`discover`], which finds a Chromium-family browser the way the product
//! does (Chrome, Edge, Brave, then Chromium in their usual places on Linux, macOS and
//! Windows, then Playwright's cache), behind the [`discover::Probe`] seam so tests give
//! a fake table of paths. Launch, healing, tabs, page reading and the guard build on it.

pub mod discover;
