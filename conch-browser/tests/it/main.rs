//! conch-browser's integration tests: one binary, one module per area.

mod act;
mod botcheck;
mod dialog;
mod env;
mod errands;
mod errands_beside;
mod fetch;
mod guard;
mod handoff;
mod heal;
mod home;
#[cfg(target_os = "linux")]
mod keychain;
mod many;
mod own;
mod own_chrome;
mod pool;
mod pool_browserless;
mod remote;
mod revive;
mod runtime;
mod settle;
mod snapshot;
mod store;
