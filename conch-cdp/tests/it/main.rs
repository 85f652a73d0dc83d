//! Integration tests of conch-cdp: one binary, one module per area. Everything that needs
//! a browser runs a real headless Chromium (each test its own, on a fresh temp profile);
//! misbehaviour a browser will not produce on demand comes from the scripted fake DevTools
//! server in conch-fixtures, or from a shell script standing in for a piped browser.

mod attach;
mod concurrency;
mod crash;
mod fake;
mod launch;
mod pipe;
mod redaction;
mod support;
