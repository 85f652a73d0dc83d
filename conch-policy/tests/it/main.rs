//! conch-policy's integration tests: one binary, a module per area. Decision tables are
//! read from `tests/fixtures/*.txt` and rendered into one insta snapshot each
//! (`tests/it/snapshots/`), so a rule change shows up as a reviewed diff of decisions.
#![expect(
    clippy::unwrap_used,
    reason = "the table helpers panic on a malformed corpus line, which is the failure wanted"
)]

mod corpus;
mod limits;
mod net;
mod pages;
mod permit;
mod refusals;
mod secrets;
mod site;
mod stakes;
mod upload;
mod wrap;
