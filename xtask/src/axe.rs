//! axe-core for the panel's accessibility tests (issue 14, LIVE-10): pinned, installed
//! from npm into `target/axe/` by `cargo xtask test` before the suite runs. The tests read
//! `axe.min.js` from `CONCH_AXE`, which `cargo xtask test` sets to the installed file.

use std::path::PathBuf;

use crate::cmd;

/// axe-core, pinned to one exact version.
pub(crate) const AXE_CORE: &str = "4.11.0";

/// Makes sure `target/axe/node_modules/axe-core/axe.min.js` is axe-core [`AXE_CORE`],
/// installing it with npm when it is missing or another version; gives its path.
pub(crate) fn ensure() -> Result<PathBuf, String> {
    let prefix = cmd::target().join("axe");
    let package = prefix.join("node_modules/axe-core");
    let script = package.join("axe.min.js");
    if script.is_file() && installed_version(&package).as_deref() == Some(AXE_CORE) {
        return Ok(script);
    }
    eprintln!(
        "xtask: installing axe-core {AXE_CORE} into {}",
        prefix.display()
    );
    cmd::npm_install(
        &prefix,
        &[format!("axe-core@{AXE_CORE}")],
        &[],
        &[],
        &format!("the panel's tests can get axe-core {AXE_CORE}"),
    )?;
    match installed_version(&package) {
        Some(version) if version == AXE_CORE && script.is_file() => Ok(script),
        other => Err(format!(
            "npm ran, yet {} is not axe-core {AXE_CORE} (found {other:?}).",
            script.display()
        )),
    }
}

/// The `version` in the installed package's `package.json`.
fn installed_version(package: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(package.join("package.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json["version"].as_str().map(str::to_owned)
}

/// The file `name` in the first folder of `PATH` that has it.
pub(crate) fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}
