//! `cargo xtask bench snapshot`: how long one whole-page snapshot of the 200-product page
//! takes, and how long it is, through Conch's reader and through Playwright's AI snapshot
//! (`page.ariaSnapshot({ mode: "ai" })`, what Playwright MCP returns), side by side on the
//! same browser executable, flags and page. Runs alternate; medians; ratio Conch / peer.

use std::process::Command;

use serde_json::{Value, json};

use crate::pages::Pages;
use crate::{bench, browser, cmd};

const RUNS: usize = 3;
const ITERATIONS: &str = "20";
const PAGE: &str = "products.html";

/// Runs the comparison and prints it.
pub(crate) fn run() -> Result<(), String> {
    let browser = browser::ensure()?;
    let node_dir =
        bench::install_node_packages(&[&format!("playwright-core@{}", bench::PLAYWRIGHT_CORE)])?;
    let pages = Pages::start()?;
    let url = pages.url(PAGE);
    let ours = bench::release_example("conch-browser", "snapshot_bench")?;
    let flags = serde_json::to_string(&bench::browser_flags()?).map_err(|e| e.to_string())?;
    let script = cmd::root().join("xtask/bench/snapshot.cjs");

    let (mut conch, mut peer) = (Vec::new(), Vec::new());
    for run in 1..=RUNS {
        eprintln!("xtask: bench snapshot, run {run} of {RUNS}");
        let out = cmd::output(
            Command::new(&ours)
                .args(["--iterations", ITERATIONS, "--url", &url, "--browser"])
                .arg(&browser),
        )?;
        conch.push(bench::parse_line(&out, "conch")?);
        let out = cmd::output(
            Command::new("node")
                .arg(&script)
                .args([
                    "--iterations",
                    ITERATIONS,
                    "--url",
                    &url,
                    "--flags",
                    &flags,
                    "--browser",
                ])
                .arg(&browser)
                .env("CONCH_BENCH_NODE", &node_dir),
        )?;
        peer.push(bench::parse_line(&out, "playwright")?);
    }
    let figure = |runs: &[Value], key: &str| {
        bench::median(
            &mut runs
                .iter()
                .filter_map(|r| r[key].as_f64())
                .collect::<Vec<_>>(),
        )
    };
    let (ours_ms, peer_ms) = (figure(&conch, "median_ms"), figure(&peer, "median_ms"));
    let (ours_chars, peer_chars) = (figure(&conch, "chars"), figure(&peer, "chars"));
    println!();
    println!(
        "Whole-page snapshot of {PAGE} (200 products), {RUNS} alternating runs of {ITERATIONS}"
    );
    println!("{:<30} {:>10} {:>10}", "reader", "median ms", "chars");
    println!("{:<30} {:>10.2} {:>10.0}", "conch", ours_ms, ours_chars);
    println!(
        "{:<30} {:>10.2} {:>10.0}",
        format!("playwright-core {}", bench::PLAYWRIGHT_CORE),
        peer_ms,
        peer_chars
    );
    println!(
        "ratio conch / playwright: time {:.2}x (target at most 0.5x), characters {:.2}x (target at most 0.7x)",
        ours_ms / peer_ms,
        ours_chars / peer_chars
    );
    let report = json!({
        "benchmark": "snapshot",
        "page": PAGE,
        "browser": browser.display().to_string(),
        "playwright_core": bench::PLAYWRIGHT_CORE,
        "conch": conch,
        "playwright": peer,
        "median_ms": { "conch": ours_ms, "playwright": peer_ms },
        "chars": { "conch": ours_chars, "playwright": peer_chars },
        "ratio": { "time": ours_ms / peer_ms, "chars": ours_chars / peer_chars },
    });
    bench::write_report(&cmd::target().join("bench/snapshot.json"), &report)
}
