//! `cargo xtask bench`: Conch measured side by side with its peers, in one run.
//!
//! - `mcp` (see `bench_mcp`): Conch's MCP door against Playwright MCP, scenario by
//!   scenario: wall time, characters, calls, cold start, memory, `tools/list`; it fails
//!   when a journey of Conch's grows past `xtask/bench/mcp-baseline.json`, which
//!   `mcp-baseline` (not in the default run) writes anew.
//! - `snapshot` (see `bench_snapshot`): one whole-page snapshot of the 200-product page,
//!   Conch's reader against Playwright's AI snapshot.
//! - `load` (see `bench_load`): 1, 2, 4 and 8 conversations at once over
//!   `conch-gateway serve`: failed steps, p95 step time, the gateway's memory and CPU
//!   per step.
//! - `scale` (see `bench_scale`): 1, 4, 8 and 16 conversations at once, each opening a
//!   200-item page and clicking 15 times, on the local browser and on a pool of two
//!   browserless servers: failed steps, p50 and p95 step time, the gateway's memory and
//!   CPU per step. Not part of the default run: it installs browserless first.
//! - `real` (see `bench_real`): Conch against Playwright MCP on real web applications
//!   installed from the registries, journey by journey. Not part of the default run: it
//!   installs the apps first.
//! - `backends` (see `bench_backends`): first read and step time on a DevTools address and
//!   pretend Browserbase and Steel providers, against the local browser.
//! - `live` (see `bench_live`): the live view's latency, frames per second, memory with a
//!   watcher that never reads, and frames with no watcher, through the gateway's live socket
//!   against a raw CDP screencast on the same tab.
//! - `errands` (see `bench_errands`): 1, 2, 4 and 6 errands (a browser context each) at
//!   once: step time against one errand, memory per open errand, set aside and resume.
//!   Not part of the default run.
//! - `cdp`: the median round trip of `Runtime.evaluate("1+1")` through conch-cdp and
//!   through playwright-core's CDP session, on the same browser executable and flags.
//!
//! Results print as a table and are written as JSON under `target/bench/`. Runs of the two
//! clients alternate, so a noisy neighbour slows both alike; the figure kept is the median
//! of each client's per-run medians, and the ratio is Conch / peer.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::{browser, cmd};

// Declared here rather than in main.rs, next to the bench list that runs it.

/// playwright-core's version, pinned so that results compare across runs.
pub(crate) const PLAYWRIGHT_CORE: &str = "1.65.1";
/// Alternating runs per client.
const RUNS: usize = 3;
/// Timed calls per run.
const ITERATIONS: &str = "2000";

/// Runs the named benchmarks (all when none is named).
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let names: Vec<&str> = if args.is_empty() {
        vec![
            "cdp", "snapshot", "guard", "mcp", "load", "backends", "live",
        ]
    } else {
        args.iter().map(String::as_str).collect()
    };
    for name in names {
        match name {
            "cdp" => cdp()?,
            "mcp" => crate::bench_mcp::run()?,
            "mcp-baseline" => crate::bench_mcp::write_baseline()?,
            "snapshot" => crate::bench_snapshot::run()?,
            "guard" => crate::bench_guard::run()?,
            "load" => crate::bench_load::run()?,
            "backends" => crate::bench_backends::run()?,
            "real" => crate::bench_real::run()?,
            "live" => crate::bench_live::run()?,
            "errands" => crate::bench_errands::run()?,
            "scale" => crate::bench_scale::run()?,
            other => {
                return Err(format!(
                    "no benchmark named {other}; try: cdp, snapshot, guard, mcp, mcp-baseline, load, scale, real, backends, live, errands"
                ));
            }
        }
    }
    Ok(())
}

pub(crate) fn bench_dir() -> PathBuf {
    cmd::target().join("bench")
}

/// Installs the pinned npm packages into `target/bench/node` (an ignored folder) unless
/// they are there already. No browser download: Playwright is pointed at our browser.
pub(crate) fn install_node_packages(packages: &[&str]) -> Result<PathBuf, String> {
    let dir = bench_dir().join("node");
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("could not create {}: {e}", dir.display()))?;
    let missing = packages.iter().any(|spec| {
        let (name, version) = spec.rsplit_once('@').unwrap_or((spec, ""));
        let manifest = dir.join("node_modules").join(name).join("package.json");
        let installed = std::fs::read_to_string(manifest)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .and_then(|v| v["version"].as_str().map(str::to_owned));
        installed.as_deref() != Some(version)
    });
    if missing {
        eprintln!(
            "xtask: installing {} into {}",
            packages.join(" "),
            dir.display()
        );
        cmd::run(
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
                .arg(&dir)
                .args(packages)
                .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1"),
        )?;
    }
    Ok(dir)
}

/// The flags the test browser gets (fixtures/src/browser.rs), read from the source so
/// xtask needs no dependency on the fixtures crate.
pub(crate) fn browser_flags() -> Result<Vec<String>, String> {
    let source = cmd::root().join("fixtures/src/browser.rs");
    let text = std::fs::read_to_string(&source)
        .map_err(|e| format!("could not read {}: {e}", source.display()))?;
    let start = text
        .find("pub const FLAGS")
        .ok_or("fixtures/src/browser.rs has no FLAGS")?;
    let end = text[start..].find("];").ok_or("FLAGS is not closed")? + start;
    Ok(text[start..end]
        .split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect())
}

/// Builds `conch-gateway` in release and gives the path of its executable.
pub(crate) fn release_gateway() -> Result<PathBuf, String> {
    if let Some(prebuilt) = prebuilt_gateway() {
        return Ok(prebuilt);
    }
    cmd::cargo(
        &[
            "build",
            "--release",
            "--locked",
            "--package",
            "conch-gateway",
        ],
        &[],
    )?;
    Ok(gateway_bin())
}

/// The gateway binary the benches run: `CONCH_BENCH_GATEWAY` when set (a binary built
/// elsewhere, e.g. a debug build while a journey is being written), else the release build.
pub(crate) fn gateway_bin() -> PathBuf {
    prebuilt_gateway().unwrap_or_else(|| cmd::target().join("release/conch-gateway"))
}

fn prebuilt_gateway() -> Option<PathBuf> {
    std::env::var_os("CONCH_BENCH_GATEWAY")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
}

/// A process's resident memory in KiB (`VmRSS` of `/proc/PID/status`); 0 when it can't
/// be read.
pub(crate) fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// The CPU time a process has used, user and system over all its threads, in ms
/// (`utime` + `stime` of `/proc/PID/stat`); 0 when it can't be read.
pub(crate) fn cpu_ms(pid: u32) -> f64 {
    let per_second = clock_ticks();
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            // After the command name (in parentheses): state is the first field, utime
            // the 12th and stime the 13th.
            let (_, rest) = stat.rsplit_once(')')?;
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let user: f64 = fields.get(11)?.parse().ok()?;
            let system: f64 = fields.get(12)?.parse().ok()?;
            Some((user + system) * 1000.0 / per_second)
        })
        .unwrap_or(0.0)
}

/// Clock ticks per second, the unit of `/proc`'s CPU times (`getconf CLK_TCK`).
pub(crate) fn clock_ticks() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        cmd::output(Command::new("getconf").arg("CLK_TCK"))
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(100.0)
    })
}

/// Every process below `pid`, by the parent field of `/proc/*/stat`.
pub(crate) fn descendants(pid: u32) -> Vec<u32> {
    let mut pairs = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // The command name is in parentheses and may hold spaces: read after it.
        if let Some(parent) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok())
        {
            pairs.push((child, parent));
        }
    }
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let of = found[i];
        found.extend(pairs.iter().filter(|(_, p)| *p == of).map(|(c, _)| *c));
        i += 1;
    }
    found.remove(0);
    found
}

/// Builds `package`'s example `name` in release and gives the path of its executable.
pub(crate) fn release_example(package: &str, name: &str) -> Result<PathBuf, String> {
    cmd::cargo(
        &[
            "build",
            "--release",
            "--locked",
            "--package",
            package,
            "--example",
            name,
        ],
        &[],
    )?;
    Ok(cmd::target().join("release/examples").join(name))
}

pub(crate) fn parse_line(out: &str, who: &str) -> Result<Value, String> {
    out.lines()
        .rev()
        .find_map(|line| serde_json::from_str::<Value>(line).ok())
        .ok_or_else(|| format!("{who} printed no result line"))
}

pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn cdp() -> Result<(), String> {
    let browser = browser::ensure()?;
    let node_dir = install_node_packages(&[&format!("playwright-core@{PLAYWRIGHT_CORE}")])?;
    let ours = release_example("conch-cdp", "roundtrip")?;
    let flags = serde_json::to_string(&browser_flags()?).map_err(|e| e.to_string())?;
    let script = cmd::root().join("xtask/bench/cdp-roundtrip.cjs");

    let mut conch = Vec::new();
    let mut peer = Vec::new();
    for run in 1..=RUNS {
        eprintln!("xtask: bench cdp, run {run} of {RUNS}");
        let out = cmd::output(
            Command::new(&ours)
                .args(["--iterations", ITERATIONS, "--browser"])
                .arg(&browser),
        )?;
        conch.push(parse_line(&out, "conch-cdp")?);
        let out = cmd::output(
            Command::new("node")
                .arg(&script)
                .args(["--iterations", ITERATIONS, "--flags", &flags, "--browser"])
                .arg(&browser)
                .env("CONCH_BENCH_NODE", &node_dir),
        )?;
        peer.push(parse_line(&out, "playwright-core")?);
    }
    let figure = |runs: &[Value], key: &str| {
        median(
            &mut runs
                .iter()
                .filter_map(|r| r[key].as_f64())
                .collect::<Vec<_>>(),
        )
    };
    let (ours_median, peer_median) = (figure(&conch, "median_us"), figure(&peer, "median_us"));
    let (ours_p90, peer_p90) = (figure(&conch, "p90_us"), figure(&peer, "p90_us"));
    let ratio = ours_median / peer_median;

    println!();
    println!("Runtime.evaluate(\"1+1\") round trip, {RUNS} alternating runs of {ITERATIONS} calls");
    println!("{:<28} {:>12} {:>12}", "client", "median µs", "p90 µs");
    println!(
        "{:<28} {:>12.1} {:>12.1}",
        "conch-cdp (pipe)", ours_median, ours_p90
    );
    println!(
        "{:<28} {:>12.1} {:>12.1}",
        format!("playwright-core {PLAYWRIGHT_CORE}"),
        peer_median,
        peer_p90
    );
    println!("ratio conch / playwright-core: {ratio:.2}x (target: at most 0.5x)");

    let report = json!({
        "benchmark": "cdp",
        "browser": browser.display().to_string(),
        "playwright_core": PLAYWRIGHT_CORE,
        "runs": RUNS,
        "conch": conch,
        "playwright": peer,
        "median_us": { "conch": ours_median, "playwright": peer_median },
        "ratio": ratio,
        "target_ratio": 0.5,
    });
    write_report(&bench_dir().join("cdp.json"), &report)
}

pub(crate) fn write_report(path: &Path, report: &Value) -> Result<(), String> {
    let text = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("could not create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("could not write {}: {e}", path.display()))?;
    eprintln!("xtask: wrote {}", path.display());
    Ok(())
}
