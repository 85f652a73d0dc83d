//! `cargo xtask conformance` (also the last step of `cargo xtask test`): Conch's MCP door
//! driven by real clients over stdio and over streamable HTTP, in both protocol eras:
//! the official MCP Python SDK's 1.x line (old era, `initialize`;
//! `xtask/conformance/mcp_client.py`) and its 2.x line (new era, 2026-07-28, probing
//! `server/discover`; `xtask/conformance/mcp_client_modern.py`), each pinned in a venv
//! of its own under `target/conformance/`; and, as a second, independent client, the
//! official TypeScript SDK's v2 line (`@modelcontextprotocol/client`, which replaces
//! `@modelcontextprotocol/sdk`, whose 1.x line speaks only the old era), pinned from npm
//! into `target/conformance/ts/`, in both eras (`xtask/conformance/mcp_client.mjs`).
//! Each script says what it checks.

use std::path::Path;
use std::process::Command;

use crate::cmd;

/// The old era's client, pinned.
const MCP_PYTHON_SDK: &str = "mcp==1.30.0";

/// The new era's client, pinned.
const MCP_PYTHON_SDK_MODERN: &str = "mcp==2.3.0";

/// The TypeScript client, pinned: both eras.
const MCP_TYPESCRIPT_SDK: &str = "@modelcontextprotocol/client@2.4.0";

/// Runs both clients' checks against the debug `conch-gateway` on `browser`.
pub(crate) fn run(browser: &Path) -> Result<(), String> {
    let venv = cmd::target().join("conformance/venv");
    cmd::pip_venv(&venv, &[MCP_PYTHON_SDK])?;
    let modern = cmd::target().join("conformance/venv-2026");
    cmd::pip_venv(&modern, &[MCP_PYTHON_SDK_MODERN])?;
    cmd::cargo(&["build", "--locked", "--package", "conch-gateway"], &[])?;
    for (venv, script) in [(venv, "mcp_client.py"), (modern, "mcp_client_modern.py")] {
        cmd::run(
            Command::new(venv.join("bin/python"))
                .arg(cmd::root().join("xtask/conformance").join(script))
                .arg(cmd::target().join("debug/conch-gateway"))
                .arg(browser),
        )?;
    }
    let ts = typescript_sdk()?;
    cmd::run(
        Command::new("node")
            .current_dir(&ts)
            .arg(cmd::root().join("xtask/conformance/mcp_client.mjs"))
            .arg(cmd::target().join("debug/conch-gateway"))
            .arg(browser),
    )
}

/// The pinned TypeScript SDK under `target/conformance/ts/` (installed once).
fn typescript_sdk() -> Result<std::path::PathBuf, String> {
    let prefix = cmd::target().join("conformance/ts");
    let mark = prefix.join("conch-installed");
    if std::fs::read_to_string(&mark).ok().as_deref() == Some(MCP_TYPESCRIPT_SDK) {
        return Ok(prefix);
    }
    std::fs::create_dir_all(&prefix)
        .map_err(|e| format!("could not make {}: {e}", prefix.display()))?;
    eprintln!(
        "xtask: installing {MCP_TYPESCRIPT_SDK} into {}",
        prefix.display()
    );
    cmd::run(
        Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .arg(MCP_TYPESCRIPT_SDK)
            .stdout(std::io::stderr()),
    )
    .map_err(|e| format!("{e} (the TypeScript conformance client needs Node.js with npm)"))?;
    std::fs::write(&mark, MCP_TYPESCRIPT_SDK)
        .map_err(|e| format!("could not write {}: {e}", mark.display()))?;
    Ok(prefix)
}
