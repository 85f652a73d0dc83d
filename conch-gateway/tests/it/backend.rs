//! `conch-gateway backend …`: the person chooses the browser, keys are sealed and printed
//! nowhere, and a chosen DevTools address is what `mcp` then drives (BE-1, BE-3, BE-8,
//! DATA-6, TOOL-14).

use std::process::Stdio;

use conch_fixtures::FixtureServer;
use conch_fixtures::browser::Standalone;
use serde_json::json;

use crate::support::{StdioClient, gateway};

const CANARY: &str = "bb_live_CANARY_7d1c";

/// Runs `conch-gateway backend …` on `home`; gives (success, stdout, stderr).
pub(crate) async fn backend(
    home: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (bool, String, String) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_conch-gateway"));
    command
        .arg("backend")
        .args(args)
        .arg("--home")
        .arg(home)
        .stdin(Stdio::null())
        .envs(env.iter().copied());
    let out = command.output().await.expect("the gateway runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every file under `dir`, read as bytes.
pub(crate) fn everything_in(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                out.push((path, bytes));
            }
        }
    }
    out
}

/// BE-3, DATA-6: a provider's key is sealed; it is in no file, output or log in plain
/// text, and `show` lists it by name, kind and host only.
#[tokio::test(flavor = "multi_thread")]
async fn be_3_a_saved_key_appears_nowhere_in_plain_text() {
    let home = tempfile::tempdir().unwrap();
    let (ok, out, err) = backend(
        home.path(),
        &[
            "set",
            "browserbase",
            "--key-env",
            "BB_KEY",
            "--project",
            "proj-1",
        ],
        &[("BB_KEY", CANARY)],
    )
    .await;
    assert!(ok, "{out} {err}");
    assert!(out.contains("key saved"), "{out}");
    let (ok, shown, err) = backend(home.path(), &["show"], &[]).await;
    assert!(ok, "{err}");
    assert!(shown.contains("backend: browserbase"), "{shown}");
    assert!(
        shown.contains("browserbase (api key) for api.browserbase.com"),
        "{shown}"
    );
    for text in [&out, &err, &shown] {
        assert!(!text.contains(CANARY), "{text}");
    }
    for (path, bytes) in everything_in(home.path()) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(CANARY),
            "{} holds the key in plain text",
            path.display()
        );
    }
    // No key given: one sentence, exit 2, nothing saved.
    let (ok, _, err) = backend(
        home.path(),
        &["set", "steel", "--key-env", "NO_SUCH_VAR"],
        &[],
    )
    .await;
    assert!(!ok && err.contains("holds no key"), "{err}");
    let (ok, _, err) = backend(home.path(), &["set", "opera"], &[]).await;
    assert!(!ok && err.contains("is not a backend"), "{err}");
}

/// BE-10, BE-1: `backend set chrome` is real: the next `mcp` finds the person's Chrome by
/// the DevToolsActivePort in its profile folder (here a stand-in's, named by
/// `CONCH_CHROME_PROFILE`), connects at start, and the page opens there; the person's tab
/// is never shown.
#[tokio::test(flavor = "multi_thread")]
async fn be_10_mcp_drives_your_own_chrome_after_backend_set_chrome() {
    let server = FixtureServer::start().await.unwrap();
    let standalone = Standalone::start_on(&server.url("person-tab.html")).expect("a stand-in");
    let home = tempfile::tempdir().unwrap();
    let (ok, out, err) = backend(home.path(), &["set", "chrome"], &[]).await;
    assert!(ok, "{out} {err}");
    assert!(out.contains("backend: chrome"), "{out}");
    assert!(!out.contains("cannot drive"), "{out}");
    assert!(out.contains("chrome://inspect/#remote-debugging"), "{out}");
    let mut command = gateway(home.path(), &["mcp", "--unattended", "--allow-localhost"]);
    command.env("CONCH_CHROME_PROFILE", standalone.profile());
    let mut client = StdioClient::start(command).await;
    let (page, error) = client
        .call("browser_open", json!({ "url": server.url("basic.html") }))
        .await;
    assert!(!error, "{page}");
    assert!(page.contains("Hello from the fixtures"), "{page}");
    let (tabs, error) = client
        .call("browser_tabs", json!({ "action": "list" }))
        .await;
    assert!(!error, "{tabs}");
    assert!(!tabs.contains("CANARY-7731"), "{tabs}");
    let targets = http_get(standalone.port(), "/json/list").await;
    assert!(targets.contains(&server.url("basic.html")), "{targets}");
    client.finish().await;
    let targets = http_get(standalone.port(), "/json/list").await;
    assert!(targets.contains("CANARY-7731"), "{targets}");
}

/// BE-6, BE-5: with Browserbase chosen (a pretend provider speaking its API), `mcp` makes
/// a session with the sealed key, drives it, and releases it when the gateway stops.
#[tokio::test(flavor = "multi_thread")]
async fn be_6_mcp_drives_a_browserbase_session_and_releases_it() {
    use conch_fixtures::cloud::{Flavour, PretendCloud};
    let server = FixtureServer::start().await.unwrap();
    let standalone = Standalone::start().expect("a standalone Chromium");
    let cloud = PretendCloud::start(Flavour::Browserbase(CANARY.to_owned()), standalone.port())
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let (ok, out, err) = backend(
        home.path(),
        &[
            "set",
            "browserbase",
            "--url",
            &cloud.base(),
            "--key-env",
            "BB_KEY",
        ],
        &[("BB_KEY", CANARY)],
    )
    .await;
    assert!(ok, "{out} {err}");
    let mut client = StdioClient::start(gateway(
        home.path(),
        &["mcp", "--unattended", "--allow-localhost"],
    ))
    .await;
    let (page, error) = client
        .call("browser_open", json!({ "url": server.url("basic.html") }))
        .await;
    assert!(!error, "{page}");
    assert!(page.contains("Hello from the fixtures"), "{page}");
    assert_eq!(cloud.created().len(), 1);
    assert_eq!(cloud.refused(), 0);
    client.finish().await;
    for _ in 0..100 {
        if !cloud.released().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(cloud.released(), ["sess-1"]);
    for (path, bytes) in everything_in(home.path()) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(CANARY),
            "{} holds the key in plain text",
            path.display()
        );
    }
}

/// BE-8, BE-1: `backend set cdp --url` makes the next `mcp` drive the browser at that
/// address: the page opens there, and nothing of it is printed but its host and port.
#[tokio::test(flavor = "multi_thread")]
async fn be_8_mcp_drives_the_chosen_devtools_address() {
    let server = FixtureServer::start().await.unwrap();
    let standalone = Standalone::start().expect("a standalone Chromium");
    let home = tempfile::tempdir().unwrap();
    let address = format!("{}/?token=SECRETISH", standalone.http());
    let (ok, out, err) = backend(home.path(), &["set", "cdp", "--url", &address], &[]).await;
    assert!(ok, "{out} {err}");
    let (_, shown, _) = backend(home.path(), &["show"], &[]).await;
    assert!(
        shown.contains(&format!("cdp (address) for {}", standalone.http())),
        "{shown}"
    );
    assert!(!shown.contains("SECRETISH"), "{shown}");

    let mut client = StdioClient::start(gateway(
        home.path(),
        &["mcp", "--unattended", "--allow-localhost"],
    ))
    .await;
    let (page, error) = client
        .call("browser_open", json!({ "url": server.url("basic.html") }))
        .await;
    assert!(!error, "{page}");
    assert!(page.contains("Hello from the fixtures"), "{page}");
    // The page is in the standalone browser: its own list of targets shows it.
    let targets = http_get(standalone.port(), "/json/list").await;
    assert!(targets.contains(&server.url("basic.html")), "{targets}");
    client.finish().await;
}

/// A plain GET on loopback, its body (enough for `/json/list`).
async fn http_get(port: u16, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("the DevTools port answers");
    stream
        .write_all(format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").as_bytes())
        .await
        .expect("the request is sent");
    let mut body = Vec::new();
    let mut chunk = [0u8; 8192];
    // The DevTools server keeps the connection open: read what comes within a moment.
    while let Ok(Ok(n)) = tokio::time::timeout(
        std::time::Duration::from_millis(500),
        stream.read(&mut chunk),
    )
    .await
    {
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// BE-3, BE-7: a key saved with a Steel address (a self-hosted steel-browser, or any API
/// base the person gave) is listed for that host, not for Steel's cloud.
#[tokio::test(flavor = "multi_thread")]
async fn be_7_a_key_saved_with_a_steel_address_is_listed_for_that_host() {
    let home = tempfile::tempdir().unwrap();
    let (ok, out, err) = backend(
        home.path(),
        &[
            "set",
            "steel",
            "--url",
            "http://127.0.0.1:3000",
            "--key-env",
            "ST_KEY",
        ],
        &[("ST_KEY", CANARY)],
    )
    .await;
    assert!(ok, "{out} {err}");
    let (ok, shown, err) = backend(home.path(), &["show"], &[]).await;
    assert!(ok, "{err}");
    assert!(
        shown.contains("steel (api key) for http://127.0.0.1:3000"),
        "{shown}"
    );
    assert!(
        !shown.contains("api.steel.dev") && !shown.contains(CANARY),
        "{shown}"
    );
}

/// BE-5, ERR-12: SIGTERM and SIGINT shut the gateway down as Ctrl-C does: with a pretend
/// Steel session open (one tool call made it), the signal makes the gateway release it
/// and exit with success at once, without waiting for its stdin to close.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn be_5_sigterm_and_sigint_release_the_steel_session_and_exit_cleanly() {
    use conch_fixtures::cloud::{Flavour, PretendCloud};
    let server = FixtureServer::start().await.unwrap();
    let standalone = Standalone::start().expect("a standalone Chromium");
    let cloud = PretendCloud::start(Flavour::SteelCloud(CANARY.to_owned()), standalone.port())
        .await
        .unwrap();
    for (n, signal) in [(1, libc::SIGTERM), (2, libc::SIGINT)] {
        let home = tempfile::tempdir().unwrap();
        let (ok, out, err) = backend(
            home.path(),
            &[
                "set",
                "steel",
                "--url",
                &cloud.base(),
                "--key-env",
                "ST_KEY",
            ],
            &[("ST_KEY", CANARY)],
        )
        .await;
        assert!(ok, "{out} {err}");
        let mut client = StdioClient::start(gateway(
            home.path(),
            &["mcp", "--unattended", "--allow-localhost"],
        ))
        .await;
        let (page, error) = client
            .call("browser_open", json!({ "url": server.url("basic.html") }))
            .await;
        assert!(!error, "{page}");
        assert_eq!(cloud.created().len(), n);
        assert_eq!(cloud.released().len(), n - 1);
        // The client keeps stdin open: only the signal stops the gateway.
        send_signal(&client.child, signal);
        let status = tokio::time::timeout(std::time::Duration::from_secs(15), client.child.wait())
            .await
            .expect("the gateway stops promptly on the signal")
            .expect("wait");
        assert!(status.success(), "signal {signal}: {status}");
        assert_eq!(
            cloud.released(),
            (1..=n).map(|i| format!("sess-{i}")).collect::<Vec<_>>()
        );
    }
}

/// Sends `signal` to `child`, a gateway this test started.
#[cfg(unix)]
#[expect(
    unsafe_code,
    reason = "kill(2) has no safe wrapper in the workspace's crates"
)]
pub(crate) fn send_signal(child: &tokio::process::Child, signal: libc::c_int) {
    let pid = child.id().expect("the gateway runs");
    let pid = libc::pid_t::try_from(pid).expect("a pid");
    // SAFETY: kill(2) only sends a signal; `pid` is our own running child's.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "the signal is sent");
}
