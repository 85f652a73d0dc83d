//! The guard bench's measuring half (`cargo xtask bench guard`): page-load time of a
//! fixture page with a hundred subresources, through the guard's proxy and without it, on
//! the same browser executable and flags, alternating, in one run. Prints one JSON line.
//!
//! Usage: `guard_load [--rounds N] [--loads M] [--fetches F] [--url http://127.0.0.1:PORT/PATH]`:
//! with `--url`, that page of an app already served on loopback (a bench app's, say)
//! instead of the fixture's, its host allowed to the guard; with `--fetches`, each round
//! also times F fetches of the page one after another from the page itself (a browser
//! reuses its connection to the server directly; through the proxy each request is its
//! own connection, judged), in milliseconds per fetch.

use std::time::{Duration, Instant};

use conch_browser::guard::{GuardConfig, GuardMode};
use conch_browser::{Browser, BrowserConfig, Home};
use conch_fixtures::FixtureServer;
use conch_policy::{AllowedHost, NetSettings};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The value of `--url`, if given.
fn url_arg() -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == "--url")?;
    args.get(at + 1).cloned()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn browser(home: &std::path::Path, guard: Option<GuardConfig>) -> Browser {
    let mut config = BrowserConfig::new(Home::new(home));
    config.download = None;
    config.guard = guard;
    Browser::new(config)
}

/// One load of `url` in `browser`'s tab, in milliseconds, or the error's sentence.
async fn load(browser: &Browser, url: &str) -> Result<f64, String> {
    let chat = browser.conversation("bench");
    let started = Instant::now();
    chat.open(url).await.map_err(|e| e.to_string())?;
    Ok(started.elapsed().as_secs_f64() * 1000.0)
}

/// `fetches` fetches of the page's own address one after another, from the page, in
/// milliseconds per fetch.
async fn fetches(browser: &Browser, fetches: usize) -> Result<f64, String> {
    let script = format!(
        "(async () => {{ const t = performance.now(); for (let i = 0; i < {fetches}; i++) \
         await (await fetch(location.href, {{ cache: 'no-store' }})).text(); \
         return (performance.now() - t) / {fetches}; }})()"
    );
    let value = browser
        .conversation("bench")
        .evaluate(&script)
        .await
        .map_err(|e| e.to_string())?;
    value
        .as_f64()
        .ok_or_else(|| format!("the page answered {value}"))
}

async fn run() -> Result<serde_json::Value, String> {
    let rounds = arg("--rounds", 5);
    let loads = arg("--loads", 10);
    let server = FixtureServer::start().await.map_err(|e| e.to_string())?;
    let url = url_arg().unwrap_or_else(|| server.url("hundred.html"));
    let host = url::Url::parse(&url)
        .ok()
        .and_then(|u| Some(format!("{}:{}", u.host_str()?, u.port()?)))
        .ok_or_else(|| format!("not an address with a host and port: {url}"))?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;

    // The same address both ways: the guard allows exactly the fixture origin (allowHosts),
    // so every request still goes through the proxy, is resolved and judged.
    let mut net = NetSettings::for_gateway_port(1);
    net.allow_hosts = vec![AllowedHost::parse(&host).map_err(|e| e.to_string())?];
    let mut guard = GuardConfig::new(net);
    guard.mode = GuardMode::Proxy;
    let direct = browser(&dir.path().join("direct"), None);
    let guarded = browser(&dir.path().join("guarded"), Some(guard));

    for b in [&direct, &guarded] {
        for _ in 0..2 {
            load(b, &url).await?; // warm-up: launch, first paint, caches of the browser itself
        }
    }
    let fetch_count = arg("--fetches", 0);
    let (mut direct_fetch, mut guarded_fetch) = (Vec::new(), Vec::new());
    let (mut direct_rounds, mut guarded_rounds) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Alternate which goes first, so neither always gets the quieter moment.
        let order = if round % 2 == 0 {
            [(&direct, true), (&guarded, false)]
        } else {
            [(&guarded, false), (&direct, true)]
        };
        for (b, is_direct) in order {
            let mut times = Vec::new();
            for _ in 0..loads {
                times.push(load(b, &url).await?);
            }
            let m = median(&mut times);
            if fetch_count > 0 {
                let per_fetch = fetches(b, fetch_count).await?;
                if is_direct {
                    direct_fetch.push(per_fetch);
                } else {
                    guarded_fetch.push(per_fetch);
                }
            }
            if is_direct {
                direct_rounds.push(m);
            } else {
                guarded_rounds.push(m);
            }
        }
    }
    let blocked = guarded.guard_log().since(0).len();
    direct.shutdown().await;
    guarded.shutdown().await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let d = median(&mut direct_rounds.clone());
    let g = median(&mut guarded_rounds.clone());
    Ok(serde_json::json!({
        "page": url,
        "rounds": rounds,
        "loads_per_round": loads,
        "direct_ms": direct_rounds,
        "guarded_ms": guarded_rounds,
        "median_direct_ms": d,
        "median_guarded_ms": g,
        "ratio": g / d,
        "fetch_ms_direct": direct_fetch,
        "fetch_ms_guarded": guarded_fetch,
        "median_fetch_ms_direct": median(&mut direct_fetch.clone()),
        "median_fetch_ms_guarded": median(&mut guarded_fetch.clone()),
        "guard_refusals": blocked,
    }))
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(line) => {
            println!("{line}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("guard_load: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
