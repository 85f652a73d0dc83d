//! conch-browser's integration tests: one binary, one module per area.

mod env;
mod fetch;
mod heal;
mod home;
mod runtime;
mod store;
