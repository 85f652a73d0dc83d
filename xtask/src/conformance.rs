//! `cargo xtask conformance` (also the last step of `cargo xtask test`): Conch's MCP door
//! driven by a real client, the official MCP Python SDK pinned in a venv under
//! `target/conformance/`, over stdio and over streamable HTTP
//! (`xtask/conformance/mcp_client.py` says what it checks).

use std::path::Path;
use std::process::Command;

use crate::cmd;

/// The client, pinned.
const MCP_PYTHON_SDK: &str = "mcp==1.30.0";

/// Runs the client's checks against the debug `conch-gateway` on `browser`.
pub(crate) fn run(browser: &Path) -> Result<(), String> {
    let venv = cmd::target().join("conformance/venv");
    cmd::pip_venv(&venv, &[MCP_PYTHON_SDK])?;
    cmd::cargo(&["build", "--locked", "--package", "conch-gateway"], &[])?;
    cmd::run(
        Command::new(venv.join("bin/python"))
            .arg(cmd::root().join("xtask/conformance/mcp_client.py"))
            .arg(cmd::target().join("debug/conch-gateway"))
            .arg(browser),
    )
}
