//! `cargo xtask bench backends`: what each backend costs a step.
//!
//! Runs the release example `conch-browser/examples/backend_steps.rs`: on the local
//! browser, a browser at a DevTools address, and pretend Browserbase and Steel providers
//! (loopback servers speaking their API that proxy the DevTools socket to a local Chromium,
//! since the real services can't be reached here), the time to the first read of a page and
//! the median step (a click and the read after it), rounds alternating the order. Prints
//! each backend against local and writes `target/bench/backends.json`.

use std::process::Command;

use serde_json::json;

use crate::bench::{parse_line, write_report};
use crate::{browser, cmd};

/// Alternating rounds, and steps per session.
const ROUNDS: &str = "4";
const STEPS: &str = "10";

/// Builds and runs the measurement, prints it, and writes the report.
pub(crate) fn run() -> Result<(), String> {
    let executable = browser::ensure()?;
    let example = crate::bench::release_example("conch-browser", "backend_steps")?;
    eprintln!("xtask: bench backends, {ROUNDS} alternating rounds of {STEPS} steps");
    let out = cmd::output(
        Command::new(&example)
            .args(["--rounds", ROUNDS, "--steps", STEPS])
            .env("CONCH_BROWSER", &executable),
    )?;
    let line = parse_line(&out, "backend_steps")?;
    let rows = line["backends"].as_array().cloned().unwrap_or_default();
    let local = rows.first().cloned().unwrap_or_default();
    let (local_first, local_step) = (
        local["first_read_ms"].as_f64().unwrap_or(f64::NAN),
        local["step_ms"].as_f64().unwrap_or(f64::NAN),
    );
    println!();
    println!("Backends on many.html, {ROUNDS} alternating rounds, medians; ratios against local");
    println!(
        "{:<30} {:>14} {:>7} {:>10} {:>7}",
        "backend", "first read ms", "ratio", "step ms", "ratio"
    );
    let mut ratios = Vec::new();
    for row in &rows {
        let first = row["first_read_ms"].as_f64().unwrap_or(f64::NAN);
        let step = row["step_ms"].as_f64().unwrap_or(f64::NAN);
        let name = row["backend"].as_str().unwrap_or("?");
        println!(
            "{name:<30} {first:>14.1} {:>7.2} {step:>10.1} {:>7.2}",
            first / local_first,
            step / local_step
        );
        ratios.push(json!({
            "backend": name,
            "first_read_ratio": first / local_first,
            "step_ratio": step / local_step,
        }));
    }
    println!(
        "(local's first read includes launching Chromium; the others reach a browser that already runs)"
    );
    let dir = cmd::target().join("bench");
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("could not create {}: {e}", dir.display()))?;
    let report = json!({
        "benchmark": "backends",
        "browser": executable.display().to_string(),
        "measurement": line,
        "ratios_against_local": ratios,
    });
    write_report(&dir.join("backends.json"), &report)
}
