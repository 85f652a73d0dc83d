//! The person's browser for the panel's tests (issue 14): a chromedriver of its own on a
//! free loopback port, driven with fantoccini over plain WebDriver, so the panel is seen
//! by a client independent of Conch's own CDP code; and axe-core run inside the page.
//!
//! chromedriver is `CONCH_CHROMEDRIVER`, else `chromedriver` on `PATH` (Debian's
//! `chromium-driver`); axe-core is `CONCH_AXE`, else the copy `cargo xtask test` installs
//! under `target/axe/`. The browser is the test Chromium, headless, with every host name
//! failing unasked, so nothing it does leaves 127.0.0.1.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A chromedriver, and the WebDriver session on it. Dropping it kills chromedriver's
/// process group, so the Chromium it started goes too, whatever the test did.
pub(crate) struct Person {
    pub(crate) client: Client,
    _driver: Driver,
}

/// chromedriver, in a process group of its own; killed with its group when dropped.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill")
            .args(["-KILL", "--", &group])
            .stderr(Stdio::null())
            .status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Driver {
    /// Starts chromedriver on a free loopback port and waits until it is ready; gives
    /// it and its port. A port taken in between (chromedriver exits) means another try.
    async fn start() -> (Driver, u16) {
        let program = chromedriver();
        for _ in 0..3 {
            let port = free_port();
            let mut driver = Driver(
                Command::new(&program)
                    .arg(format!("--port={port}"))
                    .process_group(0)
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap_or_else(|e| panic!("{} does not start: {e}", program.display())),
            );
            for _ in 0..200 {
                if matches!(driver.0.try_wait(), Ok(Some(_))) {
                    break;
                }
                if ready(port).await {
                    return (driver, port);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        panic!("chromedriver did not answer /status within 20 s, three times over");
    }
}

/// The chromedriver to use; panics with one sentence when there is none.
fn chromedriver() -> PathBuf {
    if let Some(path) = std::env::var_os("CONCH_CHROMEDRIVER") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "CONCH_CHROMEDRIVER names {}, which is not a file.",
            path.display()
        );
        return path;
    }
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join("chromedriver"))
                .find(|candidate| candidate.is_file())
        })
        .unwrap_or_else(|| {
            panic!(
                "chromedriver is missing: install Debian's chromium-driver (cargo xtask test does, as root), or set CONCH_CHROMEDRIVER to one."
            )
        })
}

/// A loopback port nobody listens on right now.
fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// Whether chromedriver answers `GET /status` on `port` with `ready: true`.
async fn ready(port: u16) -> bool {
    let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return false;
    };
    let request =
        format!("GET /status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).await.is_err() {
        return false;
    }
    // chromedriver may keep the connection open: read until the answer says it is ready.
    let mut answer = Vec::new();
    let mut buf = [0u8; 1024];
    let read = tokio::time::timeout(Duration::from_secs(2), async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => answer.extend_from_slice(&buf[..n]),
            }
            let text = String::from_utf8_lossy(&answer);
            if text.contains("\"ready\":true") || text.contains("\"ready\": true") {
                return true;
            }
        }
    })
    .await;
    read.unwrap_or(false)
}

impl Person {
    /// Starts a chromedriver and opens a session in the test Chromium, headless.
    pub(crate) async fn start() -> Person {
        let (driver, port) = Driver::start().await;
        let browser = conch_fixtures::browser::executable().expect("test set-up");
        // Every test browser's flags, and this one's own: fewer background services, and
        // every name fails without a DNS query — this browser only ever opens the gateway
        // at 127.0.0.1 and must not reach past it (the component and extension updaters
        // still look up Google's hosts).
        let args: Vec<&str> = conch_fixtures::browser::FLAGS
            .iter()
            .copied()
            .chain([
                "--disable-breakpad",
                "--disable-domain-reliability",
                "--disable-client-side-phishing-detection",
                "--metrics-recording-only",
                "--no-pings",
                "--disable-features=OptimizationHints,MediaRouter,Translate,CertificateTransparencyComponentUpdater",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
                "--window-size=1280,900",
            ])
            .collect();
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".to_owned(),
            json!({
                "binary": browser,
                "args": args,
            }),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let connected = tokio::time::timeout(
            Duration::from_secs(30),
            ClientBuilder::new(connector)
                .capabilities(capabilities)
                .connect(&format!("http://127.0.0.1:{port}")),
        )
        .await;
        let client = match connected {
            Ok(Ok(client)) => client,
            other => panic!("no WebDriver session within 30 s: {other:?}"),
        };
        Person {
            client,
            _driver: driver,
        }
    }

    /// Opens a second window of the person's browser and switches to it; gives its
    /// handle.
    pub(crate) async fn second_window(&self) -> fantoccini::wd::WindowHandle {
        let second = self
            .client
            .new_window(false)
            .await
            .expect("a second window")
            .handle;
        self.client
            .switch_to_window(second.clone())
            .await
            .expect("the second window");
        second
    }

    /// Ends the WebDriver session (closing its Chromium); the driver goes on drop.
    pub(crate) async fn finish(self) {
        let _ = self.client.clone().close().await;
    }

    /// Runs axe-core on the current document and panics, listing each violation with its
    /// help and target nodes, unless there is none. `state` names what is on screen.
    pub(crate) async fn assert_accessible(&self, state: &str) {
        let loaded = self
            .client
            .execute("return typeof window.axe", vec![])
            .await
            .expect("a script runs");
        if loaded != json!("object") {
            self.client
                .execute(axe_source(), vec![])
                .await
                .expect("axe-core loads into the page");
        }
        let violations = self
            .client
            .execute_async(
                "const done = arguments[arguments.length - 1]; axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations)).catch(e => done([{id: 'axe-error', help: String(e), nodes: []}]));",
                vec![],
            )
            .await
            .expect("axe-core runs");
        let list = violations.as_array().cloned().unwrap_or_default();
        if list.is_empty() {
            return;
        }
        let shown: Vec<String> = list
            .iter()
            .map(|v| {
                let targets: Vec<String> = v["nodes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|n| format!("{} {}", n["target"], n["html"]))
                    .collect();
                format!(
                    "- {} ({}): {}\n    {}",
                    v["id"].as_str().unwrap_or("?"),
                    v["impact"].as_str().unwrap_or("?"),
                    v["help"].as_str().unwrap_or("?"),
                    targets.join("\n    ")
                )
            })
            .collect();
        panic!(
            "axe-core finds {} violation(s) {state}:\n{}",
            list.len(),
            shown.join("\n")
        );
    }
}

/// chromedriver's own command that runs one DevTools command in the session's browser
/// (`POST /session/ID/goog/cdp/execute`).
#[derive(Debug)]
struct CdpExecute {
    body: String,
}

impl fantoccini::wd::WebDriverCompatibleCommand for CdpExecute {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/goog/cdp/execute",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(self.body.clone()))
    }
}

impl Person {
    /// Runs one DevTools command in the person's current tab (through chromedriver): how
    /// a test stands in for what the gateway can't be made to send, or for the person's
    /// screen changing.
    pub(crate) async fn devtools(&self, method: &str, params: Value) {
        let body = json!({ "cmd": method, "params": params }).to_string();
        self.client
            .issue_cmd(CdpExecute { body })
            .await
            .unwrap_or_else(|e| panic!("chromedriver runs {method}: {e}"));
    }

    /// Runs `script` in every document this browser opens from now on, before the page's
    /// own scripts (DevTools' `Page.addScriptToEvaluateOnNewDocument`).
    pub(crate) async fn before_each_page(&self, script: &str) {
        self.devtools(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": script }),
        )
        .await;
    }
}

/// axe-core's `axe.min.js`, read once.
fn axe_source() -> &'static str {
    static SOURCE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SOURCE.get_or_init(|| {
        let path = axe_path();
        std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "axe-core is missing at {} ({e}): run cargo xtask test, which installs it, or set CONCH_AXE to axe.min.js.",
                path.display()
            )
        })
    })
}

/// Where axe.min.js is: `CONCH_AXE`, else under the target folder.
fn axe_path() -> PathBuf {
    if let Some(path) = std::env::var_os("CONCH_AXE") {
        return PathBuf::from(path);
    }
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace holds conch-gateway")
        .to_path_buf();
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => workspace.join(dir),
        _ => workspace.join("target"),
    };
    target.join("axe/node_modules/axe-core/axe.min.js")
}
