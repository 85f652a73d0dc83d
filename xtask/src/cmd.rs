//! Running cargo and other programs, with their output passed through.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The workspace root (xtask lives one folder below it).
pub(crate) fn root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

/// Cargo's target folder: `CARGO_TARGET_DIR` when set (relative to the workspace root),
/// else `target` in the root. Release builds and bench results live there.
pub(crate) fn target() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root().join(dir),
        _ => root().join("target"),
    }
}

/// The cargo that runs xtask.
fn cargo_bin() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// Runs `cargo <args>` in the workspace root; fails with one sentence if it fails.
pub(crate) fn cargo(args: &[&str], env: &[(&str, &OsStr)]) -> Result<(), String> {
    let mut command = Command::new(cargo_bin());
    command.args(args).current_dir(root());
    for (key, value) in env {
        command.env(key, value);
    }
    run(&mut command)
}

/// Runs a command with inherited output; an error names it.
pub(crate) fn run(command: &mut Command) -> Result<(), String> {
    let shown = format!("{command:?}");
    let status = command
        .status()
        .map_err(|e| format!("could not start {shown}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{shown} failed ({status})"))
    }
}

/// Runs a command and gives its standard output (standard error passes through).
pub(crate) fn output(command: &mut Command) -> Result<String, String> {
    let shown = format!("{command:?}");
    let out = command
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("could not start {shown}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!("{shown} failed ({})", out.status))
    }
}

/// Makes sure the venv at `venv` holds exactly the pinned `specs` from PyPI: made and
/// installed when missing or pinned otherwise (a mark file remembers what was installed).
pub(crate) fn pip_venv(venv: &Path, specs: &[&str]) -> Result<(), String> {
    let mark = venv.join("conch-installed");
    let wanted = specs.join(" ");
    if std::fs::read_to_string(&mark).ok().as_deref() == Some(wanted.as_str()) {
        return Ok(());
    }
    eprintln!("xtask: installing {wanted} into {}", venv.display());
    run(Command::new("python3").args(["-m", "venv"]).arg(venv))?;
    run(Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .args(specs))?;
    std::fs::write(&mark, wanted).map_err(|e| format!("could not write {}: {e}", mark.display()))
}

/// Whether `cargo nextest` is installed.
pub(crate) fn has_nextest() -> bool {
    Command::new(cargo_bin())
        .args(["nextest", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `npm install`s the pinned `packages` into `prefix` (no save, audit or fund; `flags`
/// added), npm's chatter to standard error; installs npm itself through apt when it is
/// missing and this is Debian as root. `what` names what the packages are for, in the
/// error when npm can't be had.
pub(crate) fn npm_install(
    prefix: &std::path::Path,
    packages: &[String],
    flags: &[&str],
    envs: &[(&str, &str)],
    what: &str,
) -> Result<(), String> {
    if crate::axe::find_on_path("npm").is_none()
        && !(crate::browser::apt_install(&["npm"], "npm is missing")?
            && crate::axe::find_on_path("npm").is_some())
    {
        return Err(format!(
            "npm is missing: install Node.js with npm (on Debian: apt-get install npm) so {what}."
        ));
    }
    std::fs::create_dir_all(prefix)
        .map_err(|e| format!("could not make {}: {e}", prefix.display()))?;
    run(Command::new("npm")
        .args(["install", "--no-save", "--no-audit", "--no-fund"])
        .args(flags)
        .arg("--prefix")
        .arg(prefix)
        .args(packages)
        .envs(envs.iter().copied())
        .stdout(std::io::stderr()))
}
