//! Making sure a browser is there before tests run, with the product's own discovery.

use std::path::PathBuf;
use std::process::Command;

use crate::cmd;

/// Finds the browser the product would use (conch-browser's discovery, through its
/// `find-browser` example). When none is found and this runs as root on Debian, installs
/// Debian's `chromium` and `chromium-driver` and says so; otherwise stops with one
/// sentence saying what to install.
pub(crate) fn ensure() -> Result<PathBuf, String> {
    if let Some(found) = discover()? {
        return Ok(found);
    }
    if !apt_install(&["chromium", "chromium-driver"], "no browser found")? {
        return Err("no browser found: install Chrome, Edge, Brave or Chromium (on Debian: apt-get install chromium chromium-driver), or set CONCH_BROWSER to one.".to_owned());
    }
    discover()?.ok_or_else(|| {
        "apt-get installed chromium, yet discovery still finds no browser.".to_owned()
    })
}

/// Finds chromedriver for the panel's WebDriver tests: `CONCH_CHROMEDRIVER`, else
/// `chromedriver` on `PATH`. When it is missing and this runs as root on Debian, installs
/// Debian's `chromium-driver` (a browser may be there without it); otherwise stops with
/// one sentence saying what to install.
pub(crate) fn ensure_driver() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("CONCH_CHROMEDRIVER") {
        return Ok(PathBuf::from(path));
    }
    if let Some(found) = crate::axe::find_on_path("chromedriver") {
        return Ok(found);
    }
    if !apt_install(&["chromium-driver"], "no chromedriver found")? {
        return Err("no chromedriver found: install the one matching your browser (on Debian: apt-get install chromium-driver), or set CONCH_CHROMEDRIVER to it.".to_owned());
    }
    crate::axe::find_on_path("chromedriver").ok_or_else(|| {
        "apt-get installed chromium-driver, yet no chromedriver is on PATH.".to_owned()
    })
}

/// Installs Debian's `packages` with apt-get when this runs as root on Debian, saying
/// `why` first; `false` (nothing done) anywhere else.
pub(crate) fn apt_install(packages: &[&str], why: &str) -> Result<bool, String> {
    if !is_root() || !PathBuf::from("/etc/debian_version").exists() {
        return Ok(false);
    }
    eprintln!(
        "xtask: {why}; installing Debian's {} with apt-get",
        packages.join(" and ")
    );
    // apt's chatter goes to standard error: standard output may be an MCP stream.
    cmd::run(
        Command::new("apt-get")
            .args(["update", "-qq"])
            .stdout(std::io::stderr()),
    )?;
    cmd::run(
        Command::new("apt-get")
            .args(["install", "-y", "-qq"])
            .args(packages)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(std::io::stderr()),
    )?;
    Ok(true)
}

/// Runs the product's discovery; `None` when it finds nothing.
fn discover() -> Result<Option<PathBuf>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args([
            "run",
            "--quiet",
            "--locked",
            "--package",
            "conch-browser",
            "--example",
            "find-browser",
        ])
        .current_dir(cmd::root())
        .output()
        .map_err(|e| format!("could not run cargo: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.success() && !stdout.trim().is_empty() {
        return Ok(Some(PathBuf::from(stdout.trim())));
    }
    if out.status.code() == Some(1) && !out.stderr.is_empty() && stdout.trim().is_empty() {
        // The example ran and said no browser was found.
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("No Chrome, Edge, Brave or Chromium found") {
            return Ok(None);
        }
    }
    Err(format!(
        "browser discovery failed to build or run:\n{}",
        String::from_utf8_lossy(&out.stderr)
    ))
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}
