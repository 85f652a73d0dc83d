//! The MCP Apps host bridge for the inline live view's browser test (issue 31):
//! `@modelcontextprotocol/ext-apps`, pinned, installed from npm into `target/ext-apps/`
//! by `cargo xtask test` before the suite runs, next to axe-core. The test serves its
//! `node_modules` (named by `CONCH_EXT_APPS`) to a host page that imports `AppBridge`
//! from `dist/src/app-bridge.js` as a module, with an import map for its dependencies:
//! no bundler.

use std::path::{Path, PathBuf};

use crate::cmd;

/// `@modelcontextprotocol/ext-apps`, pinned to one exact version.
pub(crate) const EXT_APPS: &str = "2.0.4";

/// Its peer dependencies the bridge imports in a page, pinned too.
const PEERS: [&str; 3] = [
    "@modelcontextprotocol/client@2.4.0",
    "@modelcontextprotocol/core@2.4.0",
    "zod@4.6.7",
];

/// Makes sure `target/ext-apps/node_modules` holds ext-apps [`EXT_APPS`] with its
/// peers, installing them with npm when missing or another version; gives that folder.
pub(crate) fn ensure() -> Result<PathBuf, String> {
    let prefix = cmd::target().join("ext-apps");
    let modules = prefix.join("node_modules");
    if installed(&modules) {
        return Ok(modules);
    }
    eprintln!(
        "xtask: installing @modelcontextprotocol/ext-apps {EXT_APPS} into {}",
        prefix.display()
    );
    let mut packages = vec![format!("@modelcontextprotocol/ext-apps@{EXT_APPS}")];
    packages.extend(PEERS.iter().map(|p| (*p).to_owned()));
    cmd::npm_install(
        &prefix,
        &packages,
        &["--ignore-scripts"],
        &[],
        &format!("the inline live view's test can get @modelcontextprotocol/ext-apps {EXT_APPS}"),
    )?;
    if installed(&modules) {
        Ok(modules)
    } else {
        Err(format!(
            "npm ran, yet {} has no @modelcontextprotocol/ext-apps {EXT_APPS} with its bridge.",
            modules.display()
        ))
    }
}

/// Whether `modules` holds the pinned ext-apps and its bridge's file.
fn installed(modules: &Path) -> bool {
    let package = modules.join("@modelcontextprotocol/ext-apps");
    package.join("dist/src/app-bridge.js").is_file()
        && version(&package).as_deref() == Some(EXT_APPS)
}

/// The `version` in the installed package's `package.json`.
fn version(package: &Path) -> Option<String> {
    let text = std::fs::read_to_string(package.join("package.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json["version"].as_str().map(str::to_owned)
}
