//! `cargo xtask conformance` (also the last step of `cargo xtask test`): Conch's MCP door
//! driven by real clients over stdio and over streamable HTTP, in both protocol eras:
//! the official MCP Python SDK's 1.x line (old era, `initialize`;
//! `xtask/conformance/mcp_client.py`) and its 2.x line (new era, 2026-07-28, probing
//! `server/discover`; `xtask/conformance/mcp_client_modern.py`), each pinned in a venv
//! of its own under `target/conformance/`. Each script says what it checks.

use std::path::Path;
use std::process::Command;

use crate::cmd;

/// The old era's client, pinned.
const MCP_PYTHON_SDK: &str = "mcp==1.30.0";

/// The new era's client, pinned.
const MCP_PYTHON_SDK_MODERN: &str = "mcp==2.3.0";

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
    Ok(())
}
