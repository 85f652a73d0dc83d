//! Times Conch's page snapshot on the 200-product fixture page and prints one JSON line:
//! `{"client":"conch","median_ms":…,"chars":…}` (`cargo xtask bench snapshot` runs it
//! beside Playwright's side).
//!
//! Arguments, all optional: `--iterations N` timed reads after three warm-up reads
//! (default 30), `--url URL` the page (default: products.html from a fixture server),
//! `--browser PATH` the executable (default: the test browser), `--dump` prints the
//! snapshot itself first.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use conch_browser::discover::FolderProbe;
use conch_browser::page::{Reader, read};
use conch_browser::{Browser, BrowserConfig, Home};
use conch_fixtures::FixtureServer;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut runs = 30usize;
    let (mut url, mut executable, mut dump) = (None, None, false);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--iterations" => runs = args.next().and_then(|v| v.parse().ok()).unwrap_or(runs),
            "--url" => url = args.next(),
            "--browser" => executable = args.next().map(PathBuf::from),
            "--dump" => dump = true,
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    let runs = runs.max(1);
    let server = match url {
        Some(_) => None,
        None => Some(FixtureServer::start().await?),
    };
    let url = match (&url, &server) {
        (Some(url), _) => url.clone(),
        (None, Some(server)) => server.url("products.html"),
        (None, None) => return Err("no page to read".into()),
    };
    let executable = match executable {
        Some(path) => path,
        None => conch_fixtures::browser::executable()?,
    };
    let dir = tempfile::tempdir()?;
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin)?;
    std::os::unix::fs::symlink(&executable, bin.join("chromium"))?;
    let mut config = BrowserConfig::new(Home::new(dir.path().join("home")));
    config.probe = Arc::new(FolderProbe { dir: bin });
    config.download = None;
    // The fixtures are served on loopback, which the guard refuses; containment has its
    // own tests (tests/it/guard.rs).
    config.guard = None;
    let browser = Browser::new(config);
    let chat = browser.conversation("bench");
    chat.open(&url).await?;
    let page = chat.page().await?;
    let mut reader = Reader::new();
    let mut snapshot = read(&page, &mut reader).await?;
    if dump {
        println!("{}", snapshot.text);
    }
    for _ in 0..3 {
        read(&page, &mut reader).await?;
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        snapshot = read(&page, &mut reader).await?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "{}",
        serde_json::json!({
            "client": "conch",
            "median_ms": (median * 100.0).round() / 100.0,
            "chars": snapshot.text.chars().count(),
        })
    );
    browser.shutdown().await;
    Ok(())
}
