//! The backends bench's measuring half (`cargo xtask bench backends`): time to the first
//! read of a page, and the time of one step (a click and the read after it), on the local
//! browser, on a browser at a DevTools address (`cdp`), and through pretend Browserbase and
//! Steel providers that proxy the DevTools socket to a local Chromium (the hop a cloud adds,
//! without the internet). Rounds alternate the order. Prints one JSON line.
//!
//! Usage: `backend_steps [--rounds N] [--steps M]`.

use std::time::Instant;

use conch_browser::page::act::{self, ActOptions, How};
use conch_browser::page::{Element, Reader, read};
use conch_browser::remote::Remote;
use conch_browser::seal::SecretText;
use conch_browser::{Browser, BrowserConfig, Home};
use conch_fixtures::FixtureServer;
use conch_fixtures::browser::Standalone;
use conch_fixtures::cloud::{Flavour, PretendCloud};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// The element with id `id` in `page`'s main frame.
async fn element(page: &conch_cdp::Session, id: &str) -> Result<Element, String> {
    let answer = page
        .call_raw(
            "Runtime.evaluate",
            serde_json::json!({ "expression": format!("document.getElementById({id:?})") }),
        )
        .await
        .map_err(|e| e.to_string())?;
    let object_id = answer
        .pointer("/result/objectId")
        .and_then(serde_json::Value::as_str)
        .ok_or("the page has no Add button")?
        .to_owned();
    Ok(Element {
        reference: id.to_owned(),
        page: page.clone(),
        frame: page.clone(),
        object_id,
        offset: (0.0, 0.0),
    })
}

/// One session: a fresh runtime on `remote`, the first read of the page, then `steps`
/// clicks each followed by a read. Gives (first read ms, median step ms).
async fn session(
    home: &std::path::Path,
    remote: Option<Remote>,
    url: &str,
    steps: usize,
) -> Result<(f64, f64), String> {
    let mut config = BrowserConfig::new(Home::new(home));
    config.download = None;
    config.guard = None;
    config.remote = remote;
    let browser = Browser::new(config);
    let chat = browser.conversation("bench");
    let started = Instant::now();
    chat.open(url).await.map_err(|e| e.to_string())?;
    let page = chat.page().await.map_err(|e| e.to_string())?;
    let mut reader = Reader::new();
    read(&page, &mut reader).await.map_err(|e| e.to_string())?;
    let first = ms(started);
    let mut times = Vec::new();
    for _ in 0..steps {
        let started = Instant::now();
        let add = element(&page, "add").await?;
        act::click(&add, How::Click, &ActOptions::default())
            .await
            .map_err(|e| e.to_string())?;
        read(&page, &mut reader).await.map_err(|e| e.to_string())?;
        times.push(ms(started));
    }
    if let Some(warning) = browser.status().await.why {
        return Err(format!("the backend was not used: {warning}"));
    }
    browser.shutdown().await;
    Ok((first, median(&mut times)))
}

async fn run() -> Result<serde_json::Value, String> {
    let rounds = arg("--rounds", 3);
    let steps = arg("--steps", 10);
    let server = FixtureServer::start().await.map_err(|e| e.to_string())?;
    let url = server.url("many.html");
    let standalone = Standalone::start()?;
    let bb = PretendCloud::start(Flavour::Browserbase("bench".to_owned()), standalone.port())
        .await
        .map_err(|e| e.to_string())?;
    let steel = PretendCloud::start(Flavour::SteelSelfHosted, standalone.port())
        .await
        .map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let backends: Vec<(&str, Option<Remote>)> = vec![
        ("local", None),
        ("cdp", Some(Remote::Cdp(standalone.http()))),
        (
            "browserbase (pretend)",
            Some(Remote::Browserbase {
                base: bb.base(),
                key: SecretText::new("bench".to_owned()),
                project: None,
            }),
        ),
        (
            "steel (pretend, self-hosted)",
            Some(Remote::Steel {
                base: steel.base(),
                key: None,
                connect: None,
            }),
        ),
    ];
    let mut first: Vec<Vec<f64>> = vec![Vec::new(); backends.len()];
    let mut step: Vec<Vec<f64>> = vec![Vec::new(); backends.len()];
    for round in 0..rounds {
        let mut order: Vec<usize> = (0..backends.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for i in order {
            let (name, remote) = &backends[i];
            let home = dir.path().join(format!("{round}-{i}"));
            let (f, s) = session(&home, remote.clone(), &url, steps)
                .await
                .map_err(|e| format!("{name}: {e}"))?;
            first[i].push(f);
            step[i].push(s);
        }
    }
    let rows: Vec<serde_json::Value> = backends
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            serde_json::json!({
                "backend": name,
                "first_read_ms": median(&mut first[i].clone()),
                "step_ms": median(&mut step[i].clone()),
                "first_read_runs": first[i],
                "step_runs": step[i],
            })
        })
        .collect();
    Ok(
        serde_json::json!({ "rounds": rounds, "steps": steps, "page": "many.html", "backends": rows }),
    )
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(line) => {
            println!("{line}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("backend_steps: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
