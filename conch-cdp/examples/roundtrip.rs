//! Round-trip benchmark of conch-cdp over the pipe (`cargo xtask bench cdp` runs it).
//!
//! Launches the test browser headless with `--remote-debugging-pipe`, opens a page, attaches
//! a flat session, warms up with 200 calls, then times N sequential
//! `Runtime.evaluate {expression: "1+1"}` calls on the page's session and prints one line
//! of JSON: `{"client":"conch-cdp","iterations":N,"median_us":…,"p90_us":…,"mean_us":…}`.
//!
//! Usage: `roundtrip [--browser PATH] [--iterations N]` (defaults: the fixtures' browser,
//! 2000).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use conch_cdp::protocol::{browser, runtime, target};
use conch_cdp::{Config, Connection};

const WARM_UP: usize = 200;

struct Args {
    browser: Option<PathBuf>,
    iterations: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        browser: None,
        iterations: 2000,
    };
    let mut given = std::env::args().skip(1);
    while let Some(arg) = given.next() {
        match arg.as_str() {
            "--browser" => {
                args.browser = Some(given.next().ok_or("--browser needs a path")?.into());
            }
            "--iterations" => {
                let n = given.next().ok_or("--iterations needs a number")?;
                args.iterations = n
                    .parse()
                    .map_err(|_| format!("--iterations: {n} is not a number"))?;
                if args.iterations == 0 {
                    return Err("--iterations must be at least 1".to_owned());
                }
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(args)
}

async fn run(args: Args) -> Result<String, String> {
    let profile = conch_fixtures::TempProfile::new().map_err(|e| format!("temp profile: {e}"))?;
    let mut command = conch_fixtures::browser::command(profile.path())?;
    if let Some(path) = &args.browser {
        // Same flags, another executable.
        let mut custom = std::process::Command::new(path);
        custom.args(command.get_args());
        command = custom;
    }
    // The browser's own chatter (dbus, ...) would bury the one line this prints.
    command.stderr(std::process::Stdio::null());
    let (connection, mut child) = Connection::launch(command, Config::default())
        .await
        .map_err(|e| format!("launch: {e}"))?;
    let created = connection
        .call(&target::CreateTarget::new("about:blank"))
        .await
        .map_err(|e| e.to_string())?;
    let page = connection
        .attach(created.target_id)
        .await
        .map_err(|e| e.to_string())?;
    let evaluate = runtime::Evaluate {
        expression: "1+1".to_owned(),
        ..runtime::Evaluate::default()
    };
    for _ in 0..WARM_UP {
        page.call(&evaluate).await.map_err(|e| e.to_string())?;
    }
    let mut samples = Vec::with_capacity(args.iterations);
    for _ in 0..args.iterations {
        let started = Instant::now();
        page.call(&evaluate).await.map_err(|e| e.to_string())?;
        samples.push(started.elapsed());
    }
    let _ = connection.call(&browser::Close {}).await;
    if tokio::time::timeout(Duration::from_secs(5), child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }

    samples.sort();
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let at = |q: f64| {
        let index = ((samples.len() - 1) as f64 * q).round() as usize;
        micros(samples[index.min(samples.len() - 1)])
    };
    let mean = samples.iter().map(|d| micros(*d)).sum::<f64>() / samples.len() as f64;
    Ok(format!(
        r#"{{"client":"conch-cdp","iterations":{},"median_us":{:.1},"p90_us":{:.1},"mean_us":{:.1}}}"#,
        args.iterations,
        at(0.5),
        at(0.9),
        mean
    ))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("roundtrip: {message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("roundtrip: tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("roundtrip: {message}");
            ExitCode::FAILURE
        }
    }
}
