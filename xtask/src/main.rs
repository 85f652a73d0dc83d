//! Developer commands for the Conch workspace.
//!
//! - `cargo xtask test`: finds a browser with the product's own discovery (installing
//!   Debian's `chromium` when run as root on Debian and none is found) and chromedriver,
//!   installs the pinned axe-core into `target/axe/` and the pinned browserless (with the
//!   Node it needs) into `target/browserless/`, then runs the whole suite: format
//!   check, clippy with warnings denied, every test, and the conformance run.
//! - `cargo xtask conformance`: the MCP door through the official MCP Python SDK, its 1.x
//!   line for the old protocol era and its 2.x line for the new one (2026-07-28), both
//!   pinned, from PyPI into `target/conformance/`, over stdio and over HTTP.
//! - `cargo xtask install`: the one-time set-up for MCP clients: the browser check, then
//!   `cargo install --path conch-gateway --locked`, so `conch-gateway mcp` is on the
//!   `PATH` and answers `initialize` at once ([`install`]).
//! - `cargo xtask browserless`: installs the pinned browserless and its Node into
//!   `target/browserless/` (as `cargo xtask test` does) and prints how to start one.
//! - `cargo xtask gateway ARGS…`: for development: the same browser set-up, then
//!   `conch-gateway ARGS…` (for example `mcp`), built in release; it says on standard
//!   error that it builds first. Its standard output is the gateway's alone.
//! - `cargo xtask demo`: the same browser set-up, then launches the browser through the
//!   stack and prints its version.
//! - `cargo xtask bench [cdp | snapshot | mcp | guard | load | scale | backends | live | real]`: benchmarks, side by side
//!   with the peers.
//!
//! Kept to std and serde_json so it builds in seconds.

mod axe;
mod bench;
mod bench_agent;
mod bench_backends;
mod bench_errands;
mod bench_guard;
mod bench_live;
mod bench_load;
mod bench_mcp;
mod bench_real;
mod bench_scale;
mod bench_snapshot;
mod browser;
mod browserless;
mod cmd;
mod conformance;
mod ext_apps;
mod install;
mod keychain;
mod mcp;
mod pages;
mod person;
#[cfg(test)]
mod tidy;
mod ws;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <install | browserless | gateway ARGS… | test | conformance | demo | bench [cdp | snapshot | mcp | guard | load | scale | backends | live | real]...>";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("test") => test(),
        Some("conformance") => browser::ensure().and_then(|b| conformance::run(&b)),
        Some("demo") => demo(),
        Some("install") => install::run(),
        Some("browserless") => browserless::install_only(),
        Some("gateway") => gateway(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        _ => Err(USAGE.to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The whole suite, in the order that fails fastest.
fn test() -> Result<(), String> {
    let browser = browser::ensure()?;
    eprintln!("xtask: tests use {}", browser.display());
    let driver = browser::ensure_driver()?;
    let axe = axe::ensure()?;
    let ext_apps = ext_apps::ensure()?;
    let browserless = browserless::ensure(&browser)?;
    keychain::ensure()?;
    cmd::cargo(&["fmt", "--all", "--", "--check"], &[])?;
    cmd::cargo(
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    let env = [
        ("CONCH_BROWSER", browser.as_os_str()),
        ("CONCH_CHROMEDRIVER", driver.as_os_str()),
        ("CONCH_AXE", axe.as_os_str()),
        ("CONCH_EXT_APPS", ext_apps.as_os_str()),
        ("CONCH_BROWSERLESS", browserless.as_os_str()),
    ];
    if cmd::has_nextest() {
        cmd::cargo(
            &[
                "nextest",
                "run",
                "--workspace",
                "--locked",
                "--no-fail-fast",
            ],
            &env,
        )?;
    } else {
        cmd::cargo(&["test", "--workspace", "--locked", "--no-fail-fast"], &env)?;
    }
    conformance::run(&browser)
}

/// The gateway, after making sure there is a browser for it.
fn gateway(args: &[String]) -> Result<(), String> {
    browser::ensure()?;
    // Standard output is the gateway's (an MCP stream); the notice goes to standard error.
    eprintln!(
        "xtask: building conch-gateway in release first if it changed (minutes on a fresh clone), then running it. \
         MCP clients time out on that: install once with `cargo xtask install`, then use `{}`",
        install::CLIENT_LINE
    );
    let mut cargo_args = vec![
        "run",
        "--quiet",
        "--release",
        "--locked",
        "--package",
        "conch-gateway",
        "--",
    ];
    cargo_args.extend(args.iter().map(String::as_str));
    cmd::cargo(&cargo_args, &[])
}

/// The smallest real use of the stack: find a browser, launch it over the pipe, print
/// its version.
fn demo() -> Result<(), String> {
    let browser = browser::ensure()?;
    cmd::cargo(
        &[
            "run",
            "--quiet",
            "--package",
            "conch-browser",
            "--example",
            "version",
        ],
        &[("CONCH_BROWSER", browser.as_os_str())],
    )
}
