//! `cargo xtask bench scale`: many conversations at once on one `conch-gateway serve`,
//! on the local browser and on a pool of remote browsers (issue 32).
//!
//! 1, 4, 8 and 16 MCP sessions over streamable HTTP at once, each its own conversation,
//! each opening the 200-item page (`fixtures/pages/load.html`, served on 127.0.0.1) and
//! clicking "Add to cart" [`CLICKS`] times; one read after the clicks checks that every
//! click landed (a click that did not counts as a failed step). The figures per level:
//! failed steps, p50 and p95 step time (all steps, and the clicks alone, which leave out
//! the open's browser start on a pool; each open's time too: they start together, and
//! the first of them to finish is the p95 at 4), the gateway's resident memory after the
//! level and at its peak, and the gateway's CPU time per step.
//!
//! Two backends, each on a gateway of its own: `local` (the gateway's own Chromium) and
//! `pool`, two real browserless servers on 127.0.0.1 (installed as `cargo xtask test`
//! does, see `browserless`), set with `conch-gateway backend set pool --endpoint URL
//! --endpoint URL --per-endpoint N`. A gateway that does not know the pool backend says
//! so, and the pool rows are skipped with one line saying why.
//!
//! `CONCH_BENCH_SCALE_LEVELS=1,4` runs only those levels, `CONCH_BENCH_SCALE_BACKENDS=local`
//! only the local rows (no browserless servers started); with `CONCH_BENCH_STDERR=FILE`
//! the gateway's log goes to FILE with a line marking where each level starts.
//!
//! Where the time goes: each row also names the busiest threads of the gateway and of
//! the processes below it (the local browser's), as cores used over the level
//! (`CONCH_BENCH_THREADS=1` prints them under each row).
//!
//! Absolute times on a shared machine mean little: read the ratios against one
//! conversation on the same backend, measured in the same run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::bench::write_report;
use crate::bench_load::{
    Gateway, HttpSession, Sampler, percentile, ref_on_line, send, start_gateway,
};
use crate::browserless::Server;
use crate::pages::Pages;
use crate::{browser, cmd};

/// Conversations at once, level by level.
const LEVELS: [usize; 4] = [1, 4, 8, 16];
/// Clicks per conversation after its open.
const CLICKS: usize = 15;
/// Browsers at once on one browserless server: the pool's cap per endpoint.
const PER_ENDPOINT: usize = 8;

/// What one conversation measured.
#[derive(Default)]
struct Measured {
    steps: Vec<Duration>,
    clicks: Vec<Duration>,
    opens: Vec<Duration>,
    failures: Vec<String>,
}

/// One conversation: open, [`CLICKS`] clicks, the check, the session's end.
fn conversation(port: u16, url: &str, who: usize, start: &Barrier) -> Measured {
    let mut measured = Measured::default();
    let session = HttpSession::start(port);
    // Every conversation of a level starts its first step together.
    start.wait();
    let mut session = match session {
        Ok(session) => session,
        Err(e) => {
            measured.failures.push(format!("c{who}: {e}"));
            return measured;
        }
    };
    if let Err(e) = clicks(&mut session, url, &mut measured) {
        measured.failures.push(format!("c{who}: {e}"));
    }
    match send("DELETE", port, Some(&session.session), &Value::Null) {
        Ok((204 | 200, _, _)) => {}
        Ok((status, _, body)) => measured.failures.push(format!(
            "c{who}: ending the session answered {status}: {body}"
        )),
        Err(e) => measured
            .failures
            .push(format!("c{who}: ending the session: {e}")),
    }
    measured
}

fn clicks(session: &mut HttpSession, url: &str, measured: &mut Measured) -> Result<(), String> {
    let opened = session.call("browser_open", &json!({ "url": url }))?;
    measured.steps.push(opened.elapsed);
    measured.opens.push(opened.elapsed);
    if opened.is_error {
        return Err(format!("browser_open: {}", opened.text));
    }
    let add = ref_on_line(&opened.text, "button \"Add to cart\"").ok_or("no Add to cart ref")?;
    let mut landed_calls = 0;
    for click in 1..=CLICKS {
        let called = session.call("browser_click", &json!({ "ref": add }))?;
        measured.steps.push(called.elapsed);
        measured.clicks.push(called.elapsed);
        if called.is_error {
            measured
                .failures
                .push(format!("click {click}: {}", called.text));
        } else {
            landed_calls += 1;
        }
    }
    // The page counts what landed: a click that answered yet did not land fails too.
    let read = session.call("browser_read", &json!({}))?;
    let count = read
        .text
        .lines()
        .find(|l| l.contains("Cart:"))
        .and_then(|l| {
            l.split_whitespace().find_map(|w| {
                w.trim_matches(|c: char| !c.is_ascii_digit())
                    .parse::<usize>()
                    .ok()
            })
        })
        .unwrap_or(0);
    for missing in count..landed_calls {
        measured.failures.push(format!(
            "a click answered but did not land ({missing} of {CLICKS})"
        ));
    }
    Ok(())
}

/// One backend's gateway, and what else it needs alive (the pool's servers).
struct Backend {
    name: &'static str,
    gateway: Gateway,
    port: u16,
    home: PathBuf,
    _servers: Vec<Server>,
}

impl Drop for Backend {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.home);
    }
}

fn home(name: &str) -> Result<PathBuf, String> {
    let home =
        std::env::temp_dir().join(format!("conch-bench-scale-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&home).map_err(|e| format!("{}: {e}", home.display()))?;
    Ok(home)
}

fn local(browser: &Path, pages: &Pages) -> Result<Backend, String> {
    let home = home("local")?;
    let (gateway, port) = start_gateway(browser, &home, pages)?;
    Ok(Backend {
        name: "local",
        gateway,
        port,
        home,
        _servers: Vec::new(),
    })
}

/// Two browserless servers and a gateway set to them as a pool; `None` (and one line
/// saying why) when the gateway does not take `backend set pool`.
fn pool(browser: &Path, pages: &Pages) -> Result<Option<Backend>, String> {
    let home = home("pool")?;
    let dir = crate::browserless::ensure(browser)?;
    let servers = (0..2)
        .map(|_| Server::start(&dir, PER_ENDPOINT, 16))
        .collect::<Result<Vec<_>, _>>()?;
    let mut set = Command::new(crate::bench::gateway_bin());
    set.args(["backend", "set", "pool"]);
    for server in &servers {
        set.arg("--endpoint").arg(server.ws_url());
    }
    set.args(["--per-endpoint", &PER_ENDPOINT.to_string(), "--home"])
        .arg(&home)
        .stdin(Stdio::null());
    let out = set
        .output()
        .map_err(|e| format!("could not run conch-gateway backend set pool: {e}"))?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        let first = said.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        println!(
            "bench scale: this gateway does not take `backend set pool` ({}), so the pool rows are skipped.",
            first.trim()
        );
        let _ = std::fs::remove_dir_all(&home);
        return Ok(None);
    }
    let (gateway, port) = start_gateway(browser, &home, pages)?;
    Ok(Some(Backend {
        name: "pool",
        gateway,
        port,
        home,
        _servers: servers,
    }))
}

/// Milliseconds every thread of `root` and of the processes below it has waited, ready to
/// run, for a core (the second field of `/proc/PID/task/TID/schedstat`): time a step
/// stretched because the machine's cores were busy, not because Conch was.
fn threads_waited_ms(root: u32) -> f64 {
    let mut pids = vec![root];
    pids.extend(crate::bench::descendants(root));
    let mut total = 0.0;
    for pid in pids {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
            if let Some(ns) = stat
                .split_whitespace()
                .nth(1)
                .and_then(|n| n.parse::<f64>().ok())
            {
                total += ns / 1e6;
            }
        }
    }
    total
}

/// The machine's busy and total CPU time from `/proc/stat`'s first line, in ticks.
fn machine_ticks() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let fields: Vec<f64> = stat
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .collect();
    let total: f64 = fields.iter().take(8).sum();
    // idle and iowait are the fourth and fifth.
    let idle = fields.get(3).copied().unwrap_or(0.0) + fields.get(4).copied().unwrap_or(0.0);
    (total - idle, total)
}

/// CPU time of every thread of `root` and of the processes below it, in ms, keyed by
/// (process, thread), with the process's and the thread's names.
fn threads_cpu(root: u32) -> std::collections::HashMap<(u32, u32), (String, f64)> {
    let mut found = std::collections::HashMap::new();
    let mut pids = vec![root];
    pids.extend(crate::bench::descendants(root));
    for pid in pids {
        let process = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Some(tid) = task
                .file_name()
                .to_str()
                .and_then(|t| t.parse::<u32>().ok())
            else {
                continue;
            };
            let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
            let Some((head, rest)) = stat.rsplit_once(')') else {
                continue;
            };
            let name = head.split_once('(').map_or("", |(_, n)| n);
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let ticks = |i: usize| {
                fields
                    .get(i)
                    .and_then(|f| f.parse::<f64>().ok())
                    .unwrap_or(0.0)
            };
            found.insert(
                (pid, tid),
                (
                    format!("{}/{name}", process.trim()),
                    (ticks(11) + ticks(12)) * 1000.0 / crate::bench::clock_ticks(),
                ),
            );
        }
    }
    found
}

/// The threads that used the most CPU between two [`threads_cpu`] readings, as a share of
/// `wall_s` (1.0 is one core all the time), busiest first, names merged by kind.
fn busiest(
    before: &std::collections::HashMap<(u32, u32), (String, f64)>,
    after: &std::collections::HashMap<(u32, u32), (String, f64)>,
    wall_s: f64,
) -> Vec<Value> {
    let mut by_thread: Vec<(String, f64)> = after
        .iter()
        .map(|(key, (name, ms))| {
            let was = before.get(key).map_or(0.0, |(_, ms)| *ms);
            (name.clone(), ms - was)
        })
        .filter(|(_, ms)| *ms > 0.0)
        .collect();
    by_thread.sort_by(|a, b| b.1.total_cmp(&a.1));
    let total: f64 = by_thread.iter().map(|(_, ms)| ms).sum();
    let mut out = vec![json!({ "thread": "all", "cores": total / 1000.0 / wall_s })];
    out.extend(
        by_thread
            .iter()
            .take(8)
            .map(|(name, ms)| json!({ "thread": name, "cores": ms / 1000.0 / wall_s })),
    );
    out
}

/// [`LEVELS`], or the ones `CONCH_BENCH_SCALE_LEVELS` names (`1,4`).
fn levels_wanted() -> Vec<usize> {
    std::env::var("CONCH_BENCH_SCALE_LEVELS")
        .ok()
        .map(|v| {
            v.split(',')
                .filter_map(|n| n.trim().parse().ok())
                .collect::<Vec<usize>>()
        })
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| LEVELS.to_vec())
}

/// Whether `CONCH_BENCH_SCALE_BACKENDS` (`local`, `pool` or `local,pool`; both when unset)
/// names `backend`.
fn backend_wanted(backend: &str) -> bool {
    std::env::var("CONCH_BENCH_SCALE_BACKENDS")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .is_none_or(|v| v.split(',').any(|b| b.trim() == backend))
}

/// Runs every level on `backend`; gives one row per level.
fn levels(backend: &Backend, url: &str) -> Result<Vec<Value>, String> {
    let pid = backend.gateway.0.id();
    let port = backend.port;
    // A warm-up conversation, so the first level does not pay for the gateway's start.
    let warm = conversation(port, url, 99, &Barrier::new(1));
    if let Some(failure) = warm.failures.first() {
        return Err(format!(
            "{}: the warm-up conversation failed: {failure}",
            backend.name
        ));
    }
    let sampler = Sampler::start(pid);
    let mut rows = Vec::new();
    for level in levels_wanted() {
        // A mark in the gateway's log (`CONCH_BENCH_STDERR`), where each level starts.
        if let Some(path) = std::env::var_os("CONCH_BENCH_STDERR")
            && let Ok(mut log) = std::fs::OpenOptions::new().append(true).open(path)
        {
            use std::io::Write as _;
            let _ = writeln!(log, "== bench scale: {} {level}", backend.name);
        }
        sampler.reset_peak();
        let cpu_before = crate::bench::cpu_ms(pid);
        let threads_before = threads_cpu(pid);
        let waited_before = threads_waited_ms(pid);
        let machine_before = machine_ticks();
        let started = Instant::now();
        let barrier = Arc::new(Barrier::new(level));
        let threads: Vec<_> = (0..level)
            .map(|who| {
                let (url, barrier) = (url.to_owned(), barrier.clone());
                std::thread::spawn(move || conversation(port, &url, who, &barrier))
            })
            .collect();
        let mut all = Measured::default();
        for thread in threads {
            let one = thread.join().map_err(|_| "a conversation panicked")?;
            all.steps.extend(one.steps);
            all.clicks.extend(one.clicks);
            all.opens.extend(one.opens);
            all.failures.extend(one.failures);
        }
        let wall = started.elapsed().as_secs_f64();
        let threads_after = threads_cpu(pid);
        let busy = busiest(&threads_before, &threads_after, wall);
        let steps = all.steps.len().max(1) as f64;
        let stack_cpu: f64 = threads_after
            .iter()
            .map(|(key, (_, ms))| ms - threads_before.get(key).map_or(0.0, |(_, was)| *was))
            .sum();
        let waited = threads_waited_ms(pid) - waited_before;
        let machine_after = machine_ticks();
        let machine_busy =
            (machine_after.0 - machine_before.0) / (machine_after.1 - machine_before.1).max(1.0);
        all.steps.sort();
        all.clicks.sort();
        all.opens.sort();
        let cpu = (crate::bench::cpu_ms(pid) - cpu_before) / all.steps.len().max(1) as f64;
        let row = json!({
            "backend": backend.name,
            "conversations": level,
            "steps": all.steps.len(),
            "failed": all.failures.len(),
            "p50_ms": percentile(&all.steps, 0.5),
            "p95_ms": percentile(&all.steps, 0.95),
            "click_p50_ms": percentile(&all.clicks, 0.5),
            "click_p95_ms": percentile(&all.clicks, 0.95),
            "wall_s": wall,
            "gateway_rss_mib": crate::bench::rss_kib(pid) as f64 / 1024.0,
            "gateway_rss_peak_mib": sampler.peak_kib() as f64 / 1024.0,
            "gateway_cpu_ms_per_step": cpu,
            "busiest_threads": busy,
            "stack_cpu_ms_per_step": stack_cpu / steps,
            "open_ms": all.opens.iter().map(|d| d.as_secs_f64() * 1000.0).collect::<Vec<_>>(),
            "stack_waited_for_a_core_ms_per_step": waited / steps,
            "machine_busy": machine_busy,
        });
        print_row(&row);
        println!(
            "         clicks' p50 {:.1} ms; opens {:?} ms",
            percentile(&all.clicks, 0.5),
            all.opens.iter().map(|d| d.as_millis()).collect::<Vec<_>>()
        );
        println!(
            "         gateway and its browser: {:.1} ms CPU and {:.1} ms waiting for a core per step; machine {:.0}% busy",
            stack_cpu / steps,
            waited / steps,
            machine_busy * 100.0
        );
        if std::env::var_os("CONCH_BENCH_THREADS").is_some() {
            for thread in row["busiest_threads"].as_array().into_iter().flatten() {
                println!(
                    "         {:<40} {:>5.2} cores",
                    thread["thread"].as_str().unwrap_or("?"),
                    thread["cores"].as_f64().unwrap_or(f64::NAN)
                );
            }
        }
        for failure in all.failures.iter().take(5) {
            eprintln!("xtask: bench scale: {}: {failure}", backend.name);
        }
        rows.push(row);
    }
    sampler.stop();
    Ok(rows)
}

fn print_header() {
    println!(
        "backend  conversations  steps  failed    p50 ms    p95 ms  click p95  RSS MiB  peak MiB  CPU ms/step"
    );
}

fn print_row(row: &Value) {
    let f = |k: &str| row[k].as_f64().unwrap_or(f64::NAN);
    println!(
        "{:<7}  {:>13}  {:>5}  {:>6}  {:>8.1}  {:>8.1}  {:>9.1}  {:>7.1}  {:>8.1}  {:>11.2}",
        row["backend"].as_str().unwrap_or("?"),
        row["conversations"],
        row["steps"],
        row["failed"],
        f("p50_ms"),
        f("p95_ms"),
        f("click_p95_ms"),
        f("gateway_rss_mib"),
        f("gateway_rss_peak_mib"),
        f("gateway_cpu_ms_per_step"),
    );
}

/// The ratio of `key` at `n` conversations to one conversation's, on `backend`.
fn ratio(rows: &[Value], backend: &str, n: usize, key: &str) -> f64 {
    let at = |n: usize| {
        rows.iter()
            .find(|r| r["backend"] == json!(backend) && r["conversations"] == json!(n))
            .and_then(|r| r[key].as_f64())
            .unwrap_or(f64::NAN)
    };
    at(n) / at(1)
}

/// Runs both backends and prints the table and the ratios.
pub(crate) fn run() -> Result<(), String> {
    let browser = browser::ensure()?;
    crate::bench::release_gateway()?;
    let pages = Pages::start()?;
    let url = pages.url("load.html");
    eprintln!(
        "xtask: bench scale: {:?} conversations at once, each an open and {CLICKS} clicks",
        levels_wanted()
    );
    let mut rows = Vec::new();
    print_header();
    let local_ran = backend_wanted("local");
    if local_ran {
        let backend = local(&browser, &pages)?;
        rows.extend(levels(&backend, &url)?);
    }
    let pool_ran = if backend_wanted("pool") {
        match pool(&browser, &pages)? {
            Some(backend) => {
                rows.extend(levels(&backend, &url)?);
                true
            }
            None => false,
        }
    } else {
        println!("bench scale: the pool rows are skipped (CONCH_BENCH_SCALE_BACKENDS).");
        false
    };
    let failed: u64 = rows.iter().filter_map(|r| r["failed"].as_u64()).sum();
    println!();
    println!("figure                                         value  target");
    println!("failed steps, all levels                     {failed:>7}  0");
    let mut ratios = json!({});
    for backend in ["local", "pool"]
        .into_iter()
        .filter(|b| (*b == "local" && local_ran) || (*b == "pool" && pool_ran))
    {
        for n in [4, 8, 16] {
            let r = ratio(&rows, backend, n, "p95_ms");
            println!("{backend:<5} p95 at {n:>2} / p95 at 1                 {r:>7.2}");
            ratios[format!("{backend}_p95_{n}_to_1")] = json!(r);
        }
        let memory = ratio(&rows, backend, 16, "gateway_rss_mib");
        println!("{backend:<5} gateway RSS at 16 / at 1              {memory:>7.2}  flat");
        ratios[format!("{backend}_rss_16_to_1")] = json!(memory);
    }
    let report = json!({
        "benchmark": "scale",
        "browser": browser.display().to_string(),
        "clicks_per_conversation": CLICKS,
        "pool": if pool_ran {
            json!({ "servers": 2, "per_endpoint": PER_ENDPOINT, "browserless": crate::browserless::BROWSERLESS })
        } else if backend_wanted("pool") {
            json!("skipped: the gateway does not take `backend set pool`")
        } else {
            json!("skipped: CONCH_BENCH_SCALE_BACKENDS")
        },
        "levels": rows,
        "ratios": ratios,
        "failed_steps": failed,
    });
    write_report(&cmd::target().join("bench/scale.json"), &report)?;
    if failed > 0 {
        return Err(format!("{failed} steps failed"));
    }
    Ok(())
}
