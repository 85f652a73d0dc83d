//! conch-tools' integration tests: the schemas and the MCP door without a browser, then
//! the tools and their rules against a real headless Chromium and fixture pages.

mod agent;
mod apps;
mod blocked;
mod calls;
mod commit;
mod cost;
mod embed;
mod errands;
mod flow;
mod handoff;
mod many;
mod pool;
mod rules;
mod schemas;
mod submit;
mod support;
mod trips;
