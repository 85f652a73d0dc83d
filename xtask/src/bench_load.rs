//! `cargo xtask bench load`: many conversations on one `conch-gateway serve` at once
//! (issue 18).
//!
//! 1, 2, 4 and 8 MCP sessions over streamable HTTP, each its own conversation, each
//! running the same journey [`ROUNDS`] times on a 200-item page: open it, click an "Add to
//! cart", type a note, press Enter, read. Every step is one `tools/call`; a step fails when
//! the server flags an error or the page's outcome is wrong (the cart count and the notes
//! are checked from the last read). The figures per level: failed steps, p50 and p95 step
//! time, and the gateway's resident memory after the level and at its peak during it
//! (sampled every 100 ms), and the gateway's CPU time per step (user and system, from
//! `/proc`). The targets: no failed step at any level, p95 at 4
//! conversations at most twice the single conversation's, memory flat.
//!
//! Deliberately small: a std-only HTTP/1.1 client, one connection per request, JSON
//! answers only (the journey sends no progress token, so no event stream is needed).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::bench::write_report;
use crate::pages::Pages;
use crate::{browser, cmd};

/// Journeys per conversation.
const ROUNDS: usize = 20;
/// The levels, in order; 8 comes twice, so memory that a level keeps after it ends
/// (a leak) shows apart from memory the process keeps once it has needed it.
const LEVELS: [usize; 5] = [1, 2, 4, 8, 8];
/// How long one HTTP request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// The token the bench gives the gateway (`CONCH_GATEWAY_TOKEN`).
pub(crate) const TOKEN: &str = "conch-bench-load-token-0123456789";

/// One MCP session over HTTP.
pub(crate) struct HttpSession {
    port: u16,
    pub(crate) session: String,
    next_id: u64,
}

/// A timed `tools/call`.
pub(crate) struct Called {
    pub(crate) text: String,
    pub(crate) is_error: bool,
    pub(crate) elapsed: Duration,
}

fn post(port: u16, session: Option<&str>, body: &Value) -> Result<(u16, String, String), String> {
    send("POST", port, session, body)
}

/// One HTTP request to `/mcp`; gives the status, the session header and the body.
pub(crate) fn send(
    method: &str,
    port: u16,
    session: Option<&str>,
    body: &Value,
) -> Result<(u16, String, String), String> {
    let mut stream =
        TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect: {e}"))?;
    stream
        .set_read_timeout(Some(REQUEST_TIMEOUT))
        .map_err(|e| e.to_string())?;
    let body = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(session) = session {
        head.push_str(&format!(
            "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18\r\n"
        ));
    }
    head.push_str("\r\n");
    stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body.as_bytes()))
        .map_err(|e| format!("send: {e}"))?;
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader
        .read_line(&mut status_line)
        .map_err(|e| format!("read: {e}"))?;
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("not HTTP: {status_line:?}"))?;
    let mut session_id = String::new();
    loop {
        let mut line = String::new();
        reader
            .read_line(&mut line)
            .map_err(|e| format!("read: {e}"))?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("mcp-session-id")
        {
            value.trim().clone_into(&mut session_id);
        }
    }
    let mut body = String::new();
    reader
        .read_to_string(&mut body)
        .map_err(|e| format!("read: {e}"))?;
    Ok((status, session_id, body))
}

/// The JSON-RPC answer in a response body: plain JSON, or the `data:` of an event stream.
fn answer_of(body: &str) -> Option<Value> {
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return Some(value);
    }
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|v| v.get("id").is_some())
}

impl HttpSession {
    /// Initializes a session on the gateway at `port`.
    pub(crate) fn start(port: u16) -> Result<HttpSession, String> {
        let init = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "conch-bench-load", "version": "1" }
            }
        });
        let (status, session, _) = post(port, None, &init)?;
        if status != 200 || session.is_empty() {
            return Err(format!("initialize answered {status} without a session"));
        }
        let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
        post(port, Some(&session), &note)?;
        Ok(HttpSession {
            port,
            session,
            next_id: 1,
        })
    }

    /// One timed `tools/call`.
    pub(crate) fn call(&mut self, name: &str, arguments: &Value) -> Result<Called, String> {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": name, "arguments": arguments }
        });
        let started = Instant::now();
        let (status, _, body) = post(self.port, Some(&self.session), &request)?;
        let elapsed = started.elapsed();
        if status != 200 {
            return Err(format!("{name}: HTTP {status}: {body}"));
        }
        let answer = answer_of(&body).ok_or_else(|| format!("{name}: no answer in {body:?}"))?;
        if let Some(error) = answer.get("error") {
            return Err(format!("{name}: {error}"));
        }
        let result = &answer["result"];
        let text = result["content"]
            .as_array()
            .map(|parts| {
                parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default();
        Ok(Called {
            text,
            is_error: result["isError"].as_bool().unwrap_or(false),
            elapsed,
        })
    }
}

/// The ref on the first line that contains `needle`: `- button "Add to cart" [ref=e9]`.
pub(crate) fn ref_on_line(text: &str, needle: &str) -> Option<String> {
    let line = text.lines().find(|l| l.contains(needle))?;
    let start = line.find("[ref=")? + 5;
    let end = line[start..].find(']')? + start;
    Some(line[start..end].to_owned())
}

/// What one conversation measured: each step's time, and the failed steps' reasons.
#[derive(Default)]
struct ConversationReport {
    steps: Vec<Duration>,
    failures: Vec<String>,
}

fn conversation(port: u16, url: &str, who: usize) -> ConversationReport {
    let mut report = ConversationReport::default();
    let mut session = match HttpSession::start(port) {
        Ok(session) => session,
        Err(e) => {
            report.failures.push(format!("c{who}: {e}"));
            return report;
        }
    };
    for round in 0..ROUNDS {
        if let Err(e) = journey(&mut session, url, who, round, &mut report) {
            report.failures.push(format!("c{who} round {round}: {e}"));
        }
    }
    // A client that is done ends its session, as streamable HTTP asks: what the
    // conversation held may then go, and the memory figure shows whether it does.
    match send("DELETE", port, Some(&session.session), &Value::Null) {
        Ok((204 | 200, _, _)) => {}
        Ok((status, _, body)) => report.failures.push(format!(
            "c{who}: ending the session answered {status}: {body}"
        )),
        Err(e) => report
            .failures
            .push(format!("c{who}: ending the session: {e}")),
    }
    report
}

fn journey(
    session: &mut HttpSession,
    url: &str,
    who: usize,
    round: usize,
    report: &mut ConversationReport,
) -> Result<(), String> {
    let mut step = |name: &str, args: Value| -> Result<String, String> {
        let called = session.call(name, &args)?;
        report.steps.push(called.elapsed);
        if called.is_error {
            return Err(format!("{name}: {}", called.text));
        }
        Ok(called.text)
    };
    let page = step("browser_open", json!({ "url": url }))?;
    let add = ref_on_line(&page, "button \"Add to cart\"").ok_or("no Add to cart ref")?;
    let note = ref_on_line(&page, "textbox \"Note\"").ok_or("no Note ref")?;
    // What the agent saw after the open: each result says what changed.
    let mut seen = step("browser_click", json!({ "ref": add }))?;
    let text = format!("c{who} round {round}");
    seen += &step("browser_type", json!({ "ref": note, "text": text }))?;
    seen += &step("browser_press", json!({ "key": "Enter", "ref": note }))?;
    seen += &step("browser_read", json!({}))?;
    // The page is new each round: one item in the cart, and this round's note.
    if !cart_has_one(&seen) {
        return Err(format!("the cart count is not 1 after the click: {seen}"));
    }
    if !seen.contains(&text) {
        return Err(format!(
            "the note \"{text}\" is missing after Enter: {seen}"
        ));
    }
    Ok(())
}

/// Whether the results show one item in the cart, however the reader splits the line.
fn cart_has_one(seen: &str) -> bool {
    seen.lines().any(|l| {
        l.contains("Cart: 1 items")
            || (l.contains("Cart:") && l.contains(" 1 ") && l.contains("items"))
    })
}

/// Reads a process's resident memory every 100 ms on a thread of its own, keeping the
/// peak since the last reset and over the whole run.
pub(crate) struct Sampler {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicU64>,
    overall: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    pub(crate) fn start(pid: u32) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicU64::new(0));
        let overall = Arc::new(AtomicU64::new(0));
        let thread = {
            let (stop, peak, overall) = (stop.clone(), peak.clone(), overall.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let now = crate::bench::rss_kib(pid);
                    peak.fetch_max(now, Ordering::Relaxed);
                    overall.fetch_max(now, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
        };
        Sampler {
            stop,
            peak,
            overall,
            thread: Some(thread),
        }
    }

    pub(crate) fn reset_peak(&self) {
        self.peak.store(0, Ordering::Relaxed);
    }

    pub(crate) fn peak_kib(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    /// Stops sampling; the peak over the whole run.
    pub(crate) fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.overall.load(Ordering::Relaxed)
    }
}

pub(crate) fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1000.0
}

/// The gateway, ended with its browser when dropped.
pub(crate) struct Gateway(pub(crate) Child);

impl Drop for Gateway {
    fn drop(&mut self) {
        // Its own process group: the browser goes with it.
        if let Ok(pid) = i32::try_from(self.0.id()) {
            let _ = Command::new("kill")
                .args(["-TERM", "--", &format!("-{pid}")])
                .status();
        }
        let _ = self.0.wait();
    }
}

/// Starts `conch-gateway serve` on a free port with Conch's folder `home`, driving
/// `browser`, the pages' origin allowed; waits until it listens.
pub(crate) fn start_gateway(
    browser: &Path,
    home: &Path,
    pages: &Pages,
) -> Result<(Gateway, u16), String> {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
        listener.local_addr().map_err(|e| e.to_string())?.port()
    };
    let mut command = Command::new(crate::bench::gateway_bin());
    command
        .arg("serve")
        .arg("--port")
        .arg(port.to_string())
        .arg("--home")
        .arg(home)
        .arg("--browser")
        .arg(browser)
        .args(["--trust", "full", "--unattended", "--allow-host"])
        .arg(format!("127.0.0.1:{}", pages.port))
        .env("CONCH_GATEWAY_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // `CONCH_BENCH_STDERR=FILE` keeps the gateway's log (as for the stdio benches).
        .stderr(match std::env::var_os("CONCH_BENCH_STDERR") {
            Some(path) => std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_or_else(|_| Stdio::null(), Stdio::from),
            None => Stdio::null(),
        });
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let child = command
        .spawn()
        .map_err(|e| format!("could not start the gateway: {e}"))?;
    let gateway = Gateway(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            return Err("the gateway did not listen within 30 s".to_owned());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok((gateway, port))
}

/// Runs the levels on one gateway and prints the table.
pub(crate) fn run() -> Result<(), String> {
    let browser = browser::ensure()?;
    crate::bench::release_gateway()?;
    let pages = Pages::start()?;
    let home: PathBuf =
        std::env::temp_dir().join(format!("conch-bench-load-{}", std::process::id()));
    std::fs::create_dir_all(&home).map_err(|e| format!("{}: {e}", home.display()))?;
    let (gateway, port) = start_gateway(&browser, &home, &pages)?;
    let url = pages.url("load.html");

    // A warm-up journey, so the first level does not pay for the browser's launch.
    let warm = conversation(port, &url, 99);
    if let Some(failure) = warm.failures.first() {
        return Err(format!("the warm-up journey failed: {failure}"));
    }
    let rss_start = crate::bench::rss_kib(gateway.0.id());
    // The gateway's memory is sampled all through the run, not only between levels, so
    // a level that holds memory while it runs shows as its peak.
    let sampler = Sampler::start(gateway.0.id());
    let mut levels = Vec::new();
    println!(
        "conversations  steps  failed    p50 ms    p95 ms  RSS after  RSS peak MiB  CPU ms/step"
    );
    for level in LEVELS {
        let started = Instant::now();
        let cpu_before = crate::bench::cpu_ms(gateway.0.id());
        sampler.reset_peak();
        let threads: Vec<_> = (0..level)
            .map(|who| {
                let url = url.clone();
                std::thread::spawn(move || conversation(port, &url, who))
            })
            .collect();
        let mut steps = Vec::new();
        let mut failures = Vec::new();
        for thread in threads {
            let report = thread.join().map_err(|_| "a conversation panicked")?;
            steps.extend(report.steps);
            failures.extend(report.failures);
        }
        steps.sort();
        let (p50, p95) = (percentile(&steps, 0.5), percentile(&steps, 0.95));
        let rss = crate::bench::rss_kib(gateway.0.id()) as f64 / 1024.0;
        let peak = sampler.peak_kib() as f64 / 1024.0;
        let cpu = (crate::bench::cpu_ms(gateway.0.id()) - cpu_before) / steps.len().max(1) as f64;
        println!(
            "{level:>13}  {:>5}  {:>6}  {p50:>8.1}  {p95:>8.1}  {rss:>9.1}  {peak:>12.1}  {cpu:>11.2}",
            steps.len(),
            failures.len()
        );
        for failure in failures.iter().take(5) {
            eprintln!("xtask: bench load: {failure}");
        }
        levels.push(json!({
            "conversations": level,
            "steps": steps.len(),
            "failed": failures.len(),
            "p50_ms": p50,
            "p95_ms": p95,
            "wall_s": started.elapsed().as_secs_f64(),
            "gateway_rss_mib": rss,
            "gateway_rss_peak_mib": peak,
            "gateway_cpu_ms_per_step": cpu,
        }));
    }
    let rss_end = crate::bench::rss_kib(gateway.0.id());
    let rss_peak = sampler.stop();
    drop(gateway);
    let _ = std::fs::remove_dir_all(&home);

    let p95 = |n: usize| {
        levels
            .iter()
            .find(|l| l["conversations"] == json!(n))
            .and_then(|l| l["p95_ms"].as_f64())
            .unwrap_or(f64::NAN)
    };
    let ratio = p95(4) / p95(1);
    let failed: u64 = levels.iter().filter_map(|l| l["failed"].as_u64()).sum();
    let growth = rss_end as f64 / rss_start.max(1) as f64;
    println!();
    println!("figure                                    value  target");
    println!("failed steps, all levels                {failed:>7}  0");
    println!("p95 at 4 conversations / p95 at 1       {ratio:>7.2}  <= 2.00");
    println!("gateway RSS after / before the levels   {growth:>7.2}  flat");
    println!(
        "gateway RSS peak / before the levels    {:>7.2}  flat",
        rss_peak as f64 / rss_start.max(1) as f64
    );
    // The second pass of 8 against the first: memory a level leaves behind grows again.
    let rss_of = |i: usize| levels.get(i).and_then(|l| l["gateway_rss_mib"].as_f64());
    let repeat = match (rss_of(LEVELS.len() - 2), rss_of(LEVELS.len() - 1)) {
        (Some(first), Some(second)) => second / first,
        _ => f64::NAN,
    };
    println!("gateway RSS after 8 again / after 8     {repeat:>7.2}  1.00");
    let report = json!({
        "browser": browser.display().to_string(),
        "rounds_per_conversation": ROUNDS,
        "levels": levels,
        "p95_ratio_4_to_1": ratio,
        "rss_ratio_second_8_to_first": repeat,
        "failed_steps": failed,
        "gateway_rss_kib": { "before": rss_start, "after": rss_end, "peak": rss_peak },
    });
    write_report(&cmd::target().join("bench/load.json"), &report)?;
    if failed > 0 {
        return Err(format!("{failed} steps failed"));
    }
    Ok(())
}
