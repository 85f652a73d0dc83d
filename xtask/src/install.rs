//! `cargo xtask install`: the one-time set-up that leaves `conch-gateway` on the `PATH`
//! for MCP clients (issue 31). A client gives a server a few seconds to answer
//! `initialize`; a release build from a fresh clone takes minutes, so the client's line
//! must run a binary that is already built, never `cargo xtask gateway`.
//!
//! Steps: find the browser with the product's own discovery (and say which one, or how
//! to get one), `cargo install --path conch-gateway --locked` (into `~/.cargo/bin`, or
//! `$CARGO_INSTALL_ROOT/bin`), then start the installed binary once and time its answer
//! to `initialize`.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use crate::bench_agent::{ms, tempdir};
use crate::mcp::McpClient;
use crate::{axe, browser, cmd};

/// The line an MCP client runs once the binary is installed.
pub(crate) const CLIENT_LINE: &str = "claude mcp add conch -- conch-gateway mcp";

/// Installs the gateway and checks it answers.
pub(crate) fn run() -> Result<(), String> {
    let browser = browser::ensure()?;
    eprintln!(
        "xtask: conch-gateway will use the browser at {}",
        browser.display()
    );
    eprintln!(
        "xtask: building conch-gateway in release and installing it (the first build takes minutes)"
    );
    cmd::cargo(
        &["install", "--path", "conch-gateway", "--locked", "--quiet"],
        &[],
    )?;
    let installed = installed_path();
    let on_path = axe::find_on_path("conch-gateway");
    match &on_path {
        Some(found) if *found == installed => {}
        Some(found) => eprintln!(
            "xtask: warning: {} comes first on PATH, not the one just installed at {}; remove it or put {} first",
            found.display(),
            installed.display(),
            installed
                .parent()
                .map_or_else(String::new, |d| d.display().to_string())
        ),
        None => eprintln!(
            "xtask: warning: {} is not on PATH; add {} to PATH, or give the client the full path",
            installed.display(),
            installed
                .parent()
                .map_or_else(String::new, |d| d.display().to_string())
        ),
    }
    let answered = time_initialize(&installed)?;
    eprintln!(
        "xtask: installed {}; it answers initialize in {answered:.0} ms",
        installed.display()
    );
    eprintln!("xtask: give an MCP client the browser with: {CLIENT_LINE}");
    Ok(())
}

/// Where `cargo install` puts the binary: `$CARGO_INSTALL_ROOT/bin`, else
/// `$CARGO_HOME/bin`, else `~/.cargo/bin`.
fn installed_path() -> PathBuf {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let root = var("CARGO_INSTALL_ROOT")
        .or_else(|| var("CARGO_HOME"))
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(var("HOME").unwrap_or_default()).join(".cargo"));
    root.join("bin/conch-gateway")
}

/// Spawns `binary mcp` on a throw-away home and gives the milliseconds from spawn to its
/// answer to `initialize`; the process (and anything it started) ends after.
pub(crate) fn time_initialize(binary: &std::path::Path) -> Result<f64, String> {
    let home = tempdir("install")?;
    let mut command = Command::new(binary);
    command
        .arg("mcp")
        .arg("--home")
        .arg(&home)
        .args(["--unattended", "--panel-port", "0"]);
    let started = Instant::now();
    let client = McpClient::start(command)?;
    let elapsed = started.elapsed();
    drop(client);
    let _ = std::fs::remove_dir_all(&home);
    Ok(ms(elapsed))
}
