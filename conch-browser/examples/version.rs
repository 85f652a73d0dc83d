//! The smallest real use of the stack: find a browser with Conch's discovery, launch it
//! headless over the DevTools pipe on Conch's own profile, print what runs, and close it.
//! `cargo xtask demo` runs this. The home is `CONCH_HOME`, else `~/.conch`.

use conch_browser::{Browser, BrowserConfig, Home};

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    let home = match Home::from_env() {
        Ok(home) => home,
        Err(e) => {
            eprintln!("Conch can't find its home folder: {e}. Set CONCH_HOME.");
            return std::process::ExitCode::FAILURE;
        }
    };
    let browser = Browser::new(BrowserConfig::new(home));
    if let Err(e) = browser.ensure_running().await {
        eprintln!("{e}");
        return std::process::ExitCode::FAILURE;
    }
    let status = browser.status().await;
    println!(
        "Conch launched {} ({}) from {} over the DevTools pipe.",
        status.browser.as_deref().unwrap_or("a browser"),
        status.version.as_deref().unwrap_or("unknown version"),
        status
            .executable
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    );
    if let Some(why) = status.why {
        println!("{why}");
    }
    browser.shutdown().await;
    std::process::ExitCode::SUCCESS
}
