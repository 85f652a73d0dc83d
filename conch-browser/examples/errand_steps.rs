//! The errands bench's measuring half (`cargo xtask bench errands`): 1, 2, 4 and 6 errands
//! (task conversations, each in a browser context of its own) running the same 6-step
//! journey at once on the local backend. Per count: the median step time, the errands'
//! browser's memory (PSS of its processes) with that many contexts open, then the time to
//! set one errand aside and to resume it (its next call). Prints one JSON line.
//!
//! Usage: `errand_steps`.

use std::time::Instant;

use conch_browser::page::{Reader, read};
use conch_browser::{Browser, BrowserConfig, ConversationKind, Home, TaskState};
use conch_fixtures::FixtureServer;

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// The proportional set size, in KiB, of every process whose command line holds `needle`
/// (a browser and its helpers share the profile path).
fn pss_kib(needle: &str) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|entry| {
            std::fs::read(entry.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("smaps_rollup")).ok())
        .filter_map(|rollup| {
            rollup
                .lines()
                .find_map(|l| l.strip_prefix("Pss:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .sum()
}

/// One errand's journey: six steps, each an open or a read; gives each step's time.
async fn journey(browser: &Browser, id: &str, urls: &[String]) -> Result<Vec<f64>, String> {
    browser.set_kind(id, ConversationKind::Task);
    let conv = browser.conversation(id);
    let mut reader = Reader::new();
    let mut times = Vec::new();
    for url in urls {
        let started = Instant::now();
        conv.open(url).await.map_err(|e| e.to_string())?;
        times.push(ms(started));
        let started = Instant::now();
        let page = conv.page().await.map_err(|e| e.to_string())?;
        read(&page, &mut reader).await.map_err(|e| e.to_string())?;
        times.push(ms(started));
    }
    Ok(times)
}

/// `count` errands at once on a fresh runtime: (median step ms, PSS MiB with them open,
/// set-aside ms, resume ms).
async fn errands_at_once(count: usize, urls: &[String]) -> Result<(f64, f64, f64, f64), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let home = Home::new(dir.path().join("home"));
    let mut config = BrowserConfig::new(home.clone());
    config.download = None;
    config.guard = None;
    config.errand_limit = 6;
    let browser = Browser::new(config);
    // Warm: the errands' browser is started by a first errand, then forgotten.
    journey(&browser, "warm", &urls[..1]).await?;
    browser.task_changed("warm", TaskState::Done).await;
    let ids: Vec<String> = (0..count).map(|n| format!("errand-{n}")).collect();
    let runs = ids.iter().map(|id| journey(&browser, id, urls));
    let mut times = Vec::new();
    for run in futures_util::future::join_all(runs).await {
        times.extend(run?);
    }
    let profile = home
        .browser_dir()
        .join("errands")
        .join("browser")
        .join("profile");
    let pss = pss_kib(&profile.to_string_lossy()) as f64 / 1024.0;
    let started = Instant::now();
    browser
        .task_changed("errand-0", TaskState::Interrupted)
        .await;
    let aside = ms(started);
    let started = Instant::now();
    browser
        .conversation("errand-0")
        .tabs()
        .await
        .map_err(|e| e.to_string())?;
    let resume = ms(started);
    browser.shutdown().await;
    Ok((median(&mut times), pss, aside, resume))
}

async fn run() -> Result<serde_json::Value, String> {
    let server = FixtureServer::start().await.map_err(|e| e.to_string())?;
    let urls: Vec<String> = ["many.html", "products.html", "basic.html"]
        .iter()
        .map(|p| server.url(p))
        .collect();
    let mut rows = Vec::new();
    for count in [1usize, 2, 4, 6] {
        let (step, pss, aside, resume) = errands_at_once(count, &urls).await?;
        rows.push(serde_json::json!({
            "errands": count,
            "step_ms": step,
            "pss_mib": pss,
            "set_aside_ms": aside,
            "resume_ms": resume,
        }));
    }
    Ok(serde_json::json!({ "errands": rows }))
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    match run().await {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("errand_steps: {e}");
            std::process::exit(1);
        }
    }
}
