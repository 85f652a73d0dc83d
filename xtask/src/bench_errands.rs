//! `cargo xtask bench errands`: what a browser per errand costs (issue 17, ERR-20).
//!
//! Runs the release example `conch-browser/examples/errand_steps.rs`: 1, 2, 4 and 6 errands
//! (each a browser context of its own in the errands' browser) running the same 6-step
//! journey at once on the local backend. Prints, per count, the median step time and its
//! ratio against one errand, the errands' browser's memory (PSS) and the memory each open
//! errand adds, and the time to set an errand aside and to resume it. Writes
//! `target/bench/errands.json`.

use std::process::Command;

use serde_json::json;

use crate::bench::{parse_line, write_report};
use crate::{browser, cmd};

/// Builds and runs the measurement, prints it, and writes the report.
pub(crate) fn run() -> Result<(), String> {
    let executable = browser::ensure()?;
    let example = crate::bench::release_example("conch-browser", "errand_steps")?;
    eprintln!("xtask: bench errands, 1, 2, 4 and 6 errands at once");
    let out = cmd::output(Command::new(&example).env("CONCH_BROWSER", &executable))?;
    let line = parse_line(&out, "errand_steps")?;
    let rows = line["errands"].as_array().cloned().unwrap_or_default();
    let one = rows.first().cloned().unwrap_or_default();
    let (one_step, one_pss) = (
        one["step_ms"].as_f64().unwrap_or(f64::NAN),
        one["pss_mib"].as_f64().unwrap_or(f64::NAN),
    );
    println!();
    println!("Errands at once, a 6-step journey each, local backend; ratios against one errand");
    println!(
        "{:>7} {:>10} {:>7} {:>12} {:>16} {:>13} {:>10}",
        "errands", "step ms", "ratio", "PSS MiB", "MiB per errand", "set aside ms", "resume ms"
    );
    let mut table = Vec::new();
    for row in &rows {
        let count = row["errands"].as_f64().unwrap_or(f64::NAN);
        let step = row["step_ms"].as_f64().unwrap_or(f64::NAN);
        let pss = row["pss_mib"].as_f64().unwrap_or(f64::NAN);
        // What each errand past the first adds to the errands' browser.
        let per = if count > 1.0 {
            (pss - one_pss) / (count - 1.0)
        } else {
            f64::NAN
        };
        let aside = row["set_aside_ms"].as_f64().unwrap_or(f64::NAN);
        let resume = row["resume_ms"].as_f64().unwrap_or(f64::NAN);
        println!(
            "{count:>7} {step:>10.1} {:>7.2} {pss:>12.1} {per:>16.1} {aside:>13.1} {resume:>10.1}",
            step / one_step
        );
        table.push(json!({
            "errands": count,
            "step_ms": step,
            "step_ratio": step / one_step,
            "pss_mib": pss,
            "mib_per_errand": per,
            "set_aside_ms": aside,
            "resume_ms": resume,
        }));
    }
    write_report(
        &cmd::target().join("bench").join("errands.json"),
        &json!({ "errands": table }),
    )
}
