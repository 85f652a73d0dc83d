//! `cargo xtask bench mcp`: Conch's MCP door against Playwright MCP, side by side, on the
//! same fixture pages and the same browser executable.
//!
//! Each scenario is written once, as steps on elements named by role and name; each
//! server's refs are looked up in the snapshot text it gave. A step counts every call a
//! server needs before the agent knows the step's outcome: Playwright MCP's acts write
//! their snapshot to a file, so its step is the act plus `browser_snapshot`.
//!
//! First each server is spawned [`SPAWNS`] times on a fresh home and timed from spawn to
//! its answer to `initialize`: an MCP client gives up on a server that is slower than its
//! start-up timeout (issue 31). Conch's is the release binary, the one
//! `cargo xtask install` puts on the `PATH`.
//!
//! A run starts a fresh server, reads a first page (cold start), plays every scenario and
//! reads the memory. A scenario counts only when its proof shows on the page afterwards,
//! read by the same server outside the scenario's costs. One warm-up run per server comes
//! first; then runs alternate between the servers, and which of them goes first alternates
//! from run to run; the figures kept are medians. Ratios are Conch / Playwright.
//!
//! The line held (issue 31): the characters of each of Conch's journeys may not grow past
//! the checked-in baseline, [`BASELINE`] (with [`SLACK`] for the noise of port numbers
//! and tab ids in results); the bench fails, naming each journey that grew, after its
//! table and JSON are written. `cargo xtask bench mcp-baseline` plays Conch's journeys
//! once (characters don't depend on timing; `CONCH_BENCH_GATEWAY` may name a debug build)
//! and writes the baseline anew, for a change that makes a journey cost more on purpose:
//! the diff shows it in review.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::bench_agent::{Agent, Cost, Proof, Server, Step, ms, t, tempdir};
use crate::mcp::{McpClient, peak_rss_kib, tree_pss_kib};
use crate::pages::Pages;
use crate::{bench, browser, cmd};

/// The peer, pinned; the report records it.
pub(crate) const PLAYWRIGHT_MCP: &str = "0.0.83";
/// Where the journeys' characters are held, from the repository's root.
const BASELINE: &str = "xtask/bench/mcp-baseline.json";
/// How much a journey may grow past its baseline before the bench fails: 1% and 40
/// characters (a result names fixture addresses with their port, and tab ids).
const SLACK: (f64, f64) = (0.01, 40.0);
/// Measured runs per server, after one warm-up run each.
const RUNS: usize = 3;
/// Spawns per server timed from spawn to the answer to `initialize`, after one warm-up.
const SPAWNS: usize = 5;

struct Scenario {
    name: &'static str,
    steps: Vec<Step>,
    /// What the page shows once the steps have done their work, for both servers.
    proof: Vec<Proof>,
}

const SIGNUP: [(&str, &str); 12] = [
    ("First name", "Ada"),
    ("Last name", "Lovelace"),
    ("Email", "ada@example.test"),
    ("Phone", "+44 20 7946 0000"),
    ("Street", "12 Analytical Row"),
    ("City", "London"),
    ("ZIP code", "N1 9GU"),
    ("Country", "United Kingdom"),
    ("Company", "Engines Ltd"),
    ("Job title", "Programmer"),
    ("Website", "https://ada.example.test"),
    ("Username", "ada"),
];

fn scenarios() -> Vec<Scenario> {
    let signup_fields = || {
        SIGNUP
            .iter()
            .map(|(label, value)| (t("textbox", label), *value))
    };
    vec![
        Scenario {
            name: "sign-up form, field by field",
            steps: std::iter::once(Step::Open("bench-signup.html"))
                .chain(signup_fields().map(|(target, value)| Step::Type(target, value)))
                .collect(),
            proof: vec![
                Proof::Shows("Lovelace"),
                Proof::Shows("Engines Ltd"),
                Proof::Shows("https://ada.example.test"),
            ],
        },
        Scenario {
            name: "sign-up form, one step",
            steps: vec![
                Step::Open("bench-signup.html"),
                Step::Form(signup_fields().collect()),
            ],
            proof: vec![
                Proof::Shows("Lovelace"),
                Proof::Shows("Engines Ltd"),
                Proof::Shows("https://ada.example.test"),
            ],
        },
        Scenario {
            name: "add to cart, 200 products",
            steps: vec![
                Step::Open("products.html"),
                Step::Click(t("button", "Add to cart")),
            ],
            proof: vec![Proof::Shows("Cart: 1 items")],
        },
        Scenario {
            name: "long article, parts and find",
            steps: vec![
                Step::Open("long-page.html"),
                Step::ReadPart(2),
                Step::ReadPart(3),
                Step::Find("needle"),
            ],
            proof: vec![Proof::Shows("zebra-needle-42")],
        },
        Scenario {
            name: "a confirm and an alert",
            steps: vec![
                Step::Open("bench-dialogs.html"),
                Step::DialogClick(t("button", "Remove item")),
                Step::DialogClick(t("button", "Show notice")),
            ],
            proof: vec![Proof::Shows("Notice shown")],
        },
        Scenario {
            name: "a link that opens a new tab",
            steps: vec![
                Step::Open("tabs.html"),
                Step::NewTabClick(t("link", "Open A in a new tab")),
            ],
            proof: vec![Proof::Shows("The first of two pages for tab tests.")],
        },
        Scenario {
            name: "hover and drag",
            steps: vec![
                Step::Open("bench-gestures.html"),
                Step::Hover(t("button", "Menu")),
                Step::Drag(t("listitem", "Card one"), t("list", "Done")),
            ],
            proof: vec![Proof::Before("\"Done\"", "Card one")],
        },
    ]
}

/// What one run of one server measured.
#[derive(Debug, Default, Clone)]
struct RunReport {
    cold_start: Duration,
    tools_list_chars: usize,
    scenarios: BTreeMap<&'static str, Cost>,
    /// The cost of each step, by scenario, for the per-step figures.
    steps: BTreeMap<&'static str, Vec<Cost>>,
    /// Scenarios whose proof did not show on the page afterwards.
    failed: Vec<&'static str>,
    peak_rss_kib: u64,
    pss_kib: u64,
}

fn run_once(
    server: Server,
    browser: &Path,
    pages: &Pages,
    node_dir: &Path,
) -> Result<RunReport, String> {
    let home = tempdir(server.label())?;
    let started = Instant::now();
    let client = McpClient::start(server.command(browser, &[pages.port], &home, node_dir, false))?;
    let mut agent = Agent::new(server, client);
    let url = |page: &str| pages.url(page);
    let mut report = RunReport::default();
    agent.step(&Step::Open("basic.html"), &url, &mut Cost::default())?;
    report.cold_start = started.elapsed();
    report.tools_list_chars = agent.client.tools_list()?.chars().count();
    for scenario in scenarios() {
        let mut total = Cost::default();
        let mut steps = Vec::new();
        for step in &scenario.steps {
            let mut cost = Cost::default();
            agent
                .step(step, &url, &mut cost)
                .map_err(|e| format!("{} in \"{}\": {e}", server.label(), scenario.name))?;
            total.absorb(cost);
            steps.push(cost);
        }
        if let Err(e) = agent.prove(&scenario.proof) {
            eprintln!(
                "xtask: {} in \"{}\" did not do its work: {e}",
                server.label(),
                scenario.name
            );
            report.failed.push(scenario.name);
        }
        report.scenarios.insert(scenario.name, total);
        report.steps.insert(scenario.name, steps);
    }
    let pid = agent.client.pid();
    report.peak_rss_kib = peak_rss_kib(pid).unwrap_or(0);
    report.pss_kib = tree_pss_kib(pid);
    drop(agent);
    let _ = std::fs::remove_dir_all(&home);
    Ok(report)
}

/// Spawns the server on a fresh home and times spawn → `initialize` answered, in ms.
fn time_initialize(
    server: Server,
    browser: &Path,
    pages: &Pages,
    node_dir: &Path,
) -> Result<f64, String> {
    let home = tempdir(server.label())?;
    let started = Instant::now();
    let client = McpClient::start(server.command(browser, &[pages.port], &home, node_dir, false))?;
    let elapsed = started.elapsed();
    drop(client);
    let _ = std::fs::remove_dir_all(&home);
    Ok(ms(elapsed))
}

/// The median spawn → `initialize` of each server, Conch's first: one warm-up spawn
/// each, then [`SPAWNS`] alternating.
fn initialize_medians(
    browser: &Path,
    pages: &Pages,
    node_dir: &Path,
) -> Result<(f64, f64), String> {
    for server in [Server::Conch, Server::Playwright] {
        time_initialize(server, browser, pages, node_dir)?;
    }
    let (mut conch, mut peer) = (Vec::new(), Vec::new());
    for spawn in 0..SPAWNS {
        let order = if spawn % 2 == 0 {
            [Server::Conch, Server::Playwright]
        } else {
            [Server::Playwright, Server::Conch]
        };
        for server in order {
            let took = time_initialize(server, browser, pages, node_dir)?;
            match server {
                Server::Conch => conch.push(took),
                Server::Playwright => peer.push(took),
            }
        }
    }
    eprintln!("xtask: bench mcp, spawn to initialize: conch {conch:?} ms, playwright {peer:?} ms");
    Ok((median_of(conch.into_iter()), median_of(peer.into_iter())))
}

/// Whether the scenario's proof showed on the page in every run.
fn done(runs: &[RunReport], name: &str) -> bool {
    runs.iter().all(|r| !r.failed.contains(&name))
}

fn median_of(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Runs the comparison and prints the table.
pub(crate) fn run() -> Result<(), String> {
    let browser = browser::ensure()?;
    let node_dir = bench::install_node_packages(&[&format!("@playwright/mcp@{PLAYWRIGHT_MCP}")])?;
    crate::bench::release_gateway()?;
    let pages = Pages::start()?;

    eprintln!("xtask: bench mcp, spawn to initialize, {SPAWNS} spawns of each");
    let initialize = initialize_medians(&browser, &pages, &node_dir)?;
    for server in [Server::Conch, Server::Playwright] {
        eprintln!("xtask: bench mcp, warm-up run of {}", server.label());
        run_once(server, &browser, &pages, &node_dir)?;
    }
    let mut runs: BTreeMap<&str, Vec<RunReport>> = BTreeMap::new();
    for run in 1..=RUNS {
        // Which server goes first alternates, so neither always meets a warmer machine.
        let order = if run % 2 == 1 {
            [Server::Conch, Server::Playwright]
        } else {
            [Server::Playwright, Server::Conch]
        };
        for server in order {
            eprintln!("xtask: bench mcp, run {run} of {RUNS}, {}", server.label());
            let report = run_once(server, &browser, &pages, &node_dir)?;
            runs.entry(server.label()).or_default().push(report);
        }
    }
    let conch = runs.remove("conch").unwrap_or_default();
    let peer = runs.remove("playwright").unwrap_or_default();
    print_and_save(&conch, &peer, initialize, &browser)?;
    hold_the_line(&conch)
}

/// Each journey's characters in a run, by scenario.
fn journey_chars(runs: &[RunReport]) -> BTreeMap<String, f64> {
    scenarios()
        .iter()
        .map(|s| {
            let chars = median_of(
                runs.iter()
                    .map(|r| r.scenarios.get(s.name).map_or(f64::NAN, |c| c.chars as f64)),
            );
            (s.name.to_owned(), chars)
        })
        .collect()
}

/// The checked-in baseline: each journey's characters.
fn read_baseline() -> Result<BTreeMap<String, f64>, String> {
    let path = cmd::root().join(BASELINE);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "{} can't be read ({e}); write it with `cargo xtask bench mcp-baseline`",
            path.display()
        )
    })?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
    value["conch_chars"]
        .as_object()
        .ok_or_else(|| format!("{} has no conch_chars", path.display()))?
        .iter()
        .map(|(name, n)| {
            n.as_f64()
                .map(|n| (name.clone(), n))
                .ok_or_else(|| format!("{}: {name} is not a number", path.display()))
        })
        .collect()
}

/// The journeys that grew past `baseline` (beyond [`SLACK`]), or that it lacks, each in
/// one line. Pure, so it is tested below.
fn grown(baseline: &BTreeMap<String, f64>, now: &BTreeMap<String, f64>) -> Vec<String> {
    now.iter()
        .filter_map(|(name, &chars)| match baseline.get(name) {
            None => Some(format!(
                "\"{name}\" has no baseline ({chars:.0} characters now): run `cargo xtask bench mcp-baseline` and commit {BASELINE}"
            )),
            Some(&held) if chars.is_nan() || chars > held * (1.0 + SLACK.0) + SLACK.1 => Some(format!(
                "\"{name}\" grew from {held:.0} to {chars:.0} characters"
            )),
            Some(_) => None,
        })
        .collect()
}

/// Fails when one of Conch's journeys grew past the checked-in baseline.
fn hold_the_line(conch: &[RunReport]) -> Result<(), String> {
    let baseline = read_baseline()?;
    let grew = grown(&baseline, &journey_chars(conch));
    if grew.is_empty() {
        println!("No journey grew past {BASELINE}.");
        return Ok(());
    }
    Err(format!(
        "bench mcp: {} journey(s) cost more characters than {BASELINE} holds:\n{}\n(if on purpose, run `cargo xtask bench mcp-baseline` and commit the file)",
        grew.len(),
        grew.join("\n")
    ))
}

/// `cargo xtask bench mcp-baseline`: plays Conch's journeys once and writes [`BASELINE`].
pub(crate) fn write_baseline() -> Result<(), String> {
    let browser = browser::ensure()?;
    crate::bench::release_gateway()?;
    let pages = Pages::start()?;
    let report = run_once(Server::Conch, &browser, &pages, Path::new("/nonexistent"))?;
    if !report.failed.is_empty() {
        return Err(format!(
            "bench mcp-baseline: these journeys did not do their work, so nothing was written: {}",
            report.failed.join(", ")
        ));
    }
    let chars: serde_json::Map<String, Value> = journey_chars(std::slice::from_ref(&report))
        .into_iter()
        .map(|(name, n)| (name, json!(n.round() as u64)))
        .collect();
    let baseline = json!({
        "about": "Characters of each of Conch's journeys in `cargo xtask bench mcp` (issue 31): the bench fails when one grows past its figure by more than 1% and 40 characters. Written by `cargo xtask bench mcp-baseline`.",
        "conch_chars": chars,
    });
    let path = cmd::root().join(BASELINE);
    let text = serde_json::to_string_pretty(&baseline).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&path, text).map_err(|e| format!("{} can't be written: {e}", path.display()))?;
    println!("Wrote {BASELINE}:");
    for (name, n) in baseline["conch_chars"].as_object().into_iter().flatten() {
        println!("  {name:<34} {n}");
    }
    Ok(())
}

fn print_and_save(
    conch: &[RunReport],
    peer: &[RunReport],
    initialize: (f64, f64),
    browser: &Path,
) -> Result<(), String> {
    let med = |runs: &[RunReport], f: &dyn Fn(&RunReport) -> f64| median_of(runs.iter().map(f));
    let mut rows: Vec<Value> = Vec::new();
    println!();
    println!(
        "Conch vs Playwright MCP {PLAYWRIGHT_MCP}: medians of {RUNS} runs; ratio = Conch / Playwright"
    );
    println!(
        "{:<34} {:>9} {:>9} {:>6} | {:>8} {:>8} {:>6} | {:>5} {:>5} | {:>5} {:>5}",
        "scenario",
        "conch ms",
        "pw ms",
        "ratio",
        "conch ch",
        "pw ch",
        "ratio",
        "calls",
        "pw",
        "done",
        "pw"
    );
    for scenario in scenarios() {
        let name = scenario.name;
        let wall = |runs: &[RunReport]| {
            med(runs, &|r| {
                r.scenarios.get(name).map_or(f64::NAN, |c| ms(c.wall))
            })
        };
        let chars = |runs: &[RunReport]| {
            med(runs, &|r| {
                r.scenarios.get(name).map_or(f64::NAN, |c| c.chars as f64)
            })
        };
        let calls = |runs: &[RunReport]| {
            med(runs, &|r| {
                r.scenarios
                    .get(name)
                    .map_or(f64::NAN, |c| f64::from(c.calls))
            })
        };
        let (cw, pw, cc, pc) = (wall(conch), wall(peer), chars(conch), chars(peer));
        let yes = |runs: &[RunReport]| if done(runs, name) { "yes" } else { "NO" };
        println!(
            "{:<34} {:>9.0} {:>9.0} {:>6.2} | {:>8.0} {:>8.0} {:>6.2} | {:>5.0} {:>5.0} | {:>5} {:>5}",
            name,
            cw,
            pw,
            cw / pw,
            cc,
            pc,
            cc / pc,
            calls(conch),
            calls(peer),
            yes(conch),
            yes(peer)
        );
        let per_step = |runs: &[RunReport]| -> Vec<Value> {
            let count = runs
                .first()
                .and_then(|r| r.steps.get(name))
                .map_or(0, Vec::len);
            (0..count)
                .map(|i| {
                    let step = |f: &dyn Fn(&Cost) -> f64| med(runs, &|r| r.steps.get(name).and_then(|s| s.get(i)).map_or(f64::NAN, f));
                    json!({ "wall_ms": step(&|c| ms(c.wall)), "chars": step(&|c| c.chars as f64), "calls": step(&|c| f64::from(c.calls)) })
                })
                .collect()
        };
        rows.push(json!({
            "scenario": name,
            "wall_ms": { "conch": cw, "playwright": pw, "ratio": cw / pw },
            "chars": { "conch": cc, "playwright": pc, "ratio": cc / pc },
            "calls": { "conch": calls(conch), "playwright": calls(peer) },
            "done": { "conch": done(conch, name), "playwright": done(peer, name) },
            "steps": { "conch": per_step(conch), "playwright": per_step(peer) },
        }));
    }
    // The step after "Add to cart": the second step of that scenario.
    let cart = "add to cart, 200 products";
    let cart_step = |runs: &[RunReport], f: &dyn Fn(&Cost) -> f64| {
        med(runs, &|r| {
            r.steps.get(cart).and_then(|s| s.get(1)).map_or(f64::NAN, f)
        })
    };
    let (cart_cw, cart_pw) = (
        cart_step(conch, &|c| ms(c.wall)),
        cart_step(peer, &|c| ms(c.wall)),
    );
    let (cart_cc, cart_pc) = (
        cart_step(conch, &|c| c.chars as f64),
        cart_step(peer, &|c| c.chars as f64),
    );
    let cold = |runs: &[RunReport]| med(runs, &|r| ms(r.cold_start));
    let rss = |runs: &[RunReport]| med(runs, &|r| r.peak_rss_kib as f64 / 1024.0);
    let pss = |runs: &[RunReport]| med(runs, &|r| r.pss_kib as f64 / 1024.0);
    let list = |runs: &[RunReport]| med(runs, &|r| r.tools_list_chars as f64);
    println!();
    println!(
        "{:<34} {:>12} {:>12} {:>7}  target",
        "figure", "conch", "playwright", "ratio"
    );
    let figure = |label: &str, c: f64, p: f64, target: &str| {
        println!("{label:<34} {c:>12.1} {p:>12.1} {:>7.2}  {target}", c / p);
    };
    figure("\"Add to cart\" step, ms", cart_cw, cart_pw, "<= 0.3x");
    figure(
        "\"Add to cart\" outcome, chars",
        cart_cc,
        cart_pc,
        "<= 600 chars",
    );
    figure(
        "spawn to initialize answered, ms",
        initialize.0,
        initialize.1,
        "< 1,000 ms",
    );
    figure(
        "cold start to first read, ms",
        cold(conch),
        cold(peer),
        "<= 0.4x",
    );
    figure(
        "server peak memory, MiB",
        rss(conch),
        rss(peer),
        "<= 40 MiB",
    );
    figure(
        "PSS server + browser, MiB",
        pss(conch),
        pss(peer),
        "<= 0.9x",
    );
    figure(
        "tools/list, chars",
        list(conch),
        list(peer),
        "<= 5,000 chars",
    );
    // Totals are over the scenarios both servers did in every run.
    let both: Vec<&str> = scenarios()
        .iter()
        .map(|s| s.name)
        .filter(|name| done(conch, name) && done(peer, name))
        .collect();
    let total = |runs: &[RunReport], f: &dyn Fn(&Cost) -> f64| {
        med(runs, &|r| {
            r.scenarios
                .iter()
                .filter(|(name, _)| both.contains(name))
                .map(|(_, c)| f(c))
                .sum()
        })
    };
    println!(
        "(totals over the {} scenarios both servers did in every run)",
        both.len()
    );
    figure(
        "all scenarios, ms",
        total(conch, &|c| ms(c.wall)),
        total(peer, &|c| ms(c.wall)),
        "<= 0.4x",
    );
    figure(
        "all scenarios, chars",
        total(conch, &|c| c.chars as f64),
        total(peer, &|c| c.chars as f64),
        "<= 0.5x",
    );

    let report = json!({
        "benchmark": "mcp",
        "browser": browser.display().to_string(),
        "playwright_mcp": PLAYWRIGHT_MCP,
        "runs": RUNS,
        "scenarios": rows,
        "add_to_cart_step": { "wall_ms": { "conch": cart_cw, "playwright": cart_pw }, "chars": { "conch": cart_cc, "playwright": cart_pc } },
        "initialize_ms": { "conch": initialize.0, "playwright": initialize.1, "spawns": SPAWNS },
        "cold_start_ms": { "conch": cold(conch), "playwright": cold(peer) },
        "server_peak_rss_mib": { "conch": rss(conch), "playwright": rss(peer) },
        "pss_mib": { "conch": pss(conch), "playwright": pss(peer) },
        "tools_list_chars": { "conch": list(conch), "playwright": list(peer) },
        "totals_over": both,
    });
    bench::write_report(&cmd::target().join("bench/mcp.json"), &report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journeys(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        pairs.iter().map(|(n, c)| ((*n).to_owned(), *c)).collect()
    }

    /// Issue 31: a journey that grows past its baseline (beyond the slack), or that has
    /// none, fails the bench; one that stays or shrinks does not.
    #[test]
    fn cost_6_the_bench_fails_when_a_journey_grows_past_its_baseline() {
        let baseline = journeys(&[("open", 1000.0), ("form", 5000.0)]);
        assert!(grown(&baseline, &journeys(&[("open", 1000.0), ("form", 4000.0)])).is_empty());
        assert!(
            grown(&baseline, &journeys(&[("open", 1050.0)])).is_empty(),
            "within the slack"
        );
        let grew = grown(&baseline, &journeys(&[("open", 1051.0), ("form", 5000.0)]));
        assert_eq!(grew, ["\"open\" grew from 1000 to 1051 characters"]);
        let new = grown(&baseline, &journeys(&[("drag", 10.0)]));
        assert!(new[0].contains("has no baseline"), "{new:?}");
        assert_eq!(
            grown(&baseline, &journeys(&[("open", f64::NAN)])).len(),
            1,
            "no figure"
        );
    }

    /// The checked-in baseline names every journey of the bench.
    #[test]
    fn cost_6_the_baseline_holds_every_journey() {
        let baseline = read_baseline().expect("the baseline");
        for scenario in scenarios() {
            assert!(
                baseline.contains_key(scenario.name),
                "{} has no baseline",
                scenario.name
            );
        }
    }
}
