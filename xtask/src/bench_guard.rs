//! `cargo xtask bench guard`: what the network guard costs a page load.
//!
//! Runs the release example `conch-browser/examples/guard_load.rs`, which loads a fixture
//! page with a hundred subresources through the guard's proxy and without it, on the same
//! browser, alternating, and prints one JSON line. Prints the medians side by side and the
//! ratio, and writes `target/bench/guard.json`. Target: at most 1.15x.

use std::process::Command;

use serde_json::json;

use crate::bench::{parse_line, write_report};
use crate::{browser, cmd};

/// Alternating rounds, and loads per browser per round.
const ROUNDS: &str = "4";
const LOADS: &str = "4";
/// The most the guard may cost.
const TARGET: f64 = 1.15;

/// Builds and runs the measurement, prints it, and writes the report.
pub(crate) fn run() -> Result<(), String> {
    let executable = browser::ensure()?;
    let example = crate::bench::release_example("conch-browser", "guard_load")?;
    eprintln!("xtask: bench guard, {ROUNDS} alternating rounds of {LOADS} loads each");
    let out = cmd::output(
        Command::new(&example)
            .args(["--rounds", ROUNDS, "--loads", LOADS])
            .env("CONCH_BROWSER", &executable),
    )?;
    let line = parse_line(&out, "guard_load")?;
    let direct = line["median_direct_ms"].as_f64().unwrap_or(f64::NAN);
    let guarded = line["median_guarded_ms"].as_f64().unwrap_or(f64::NAN);
    let ratio = guarded / direct;

    println!();
    println!("Load of a page with 100 subresources, {ROUNDS} alternating rounds of {LOADS} loads");
    println!("{:<28} {:>12}", "browser", "median ms");
    println!("{:<28} {:>12.1}", "without the guard", direct);
    println!("{:<28} {:>12.1}", "through the guard's proxy", guarded);
    println!("ratio guarded / direct: {ratio:.2}x (target: at most {TARGET}x)");

    let dir = cmd::target().join("bench");
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("could not create {}: {e}", dir.display()))?;
    let report = json!({
        "benchmark": "guard",
        "browser": executable.display().to_string(),
        "measurement": line,
        "median_ms": { "direct": direct, "guarded": guarded },
        "ratio": ratio,
        "target_ratio": TARGET,
    });
    write_report(&dir.join("guard.json"), &report)
}
