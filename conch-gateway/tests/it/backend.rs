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

/// DATA-5, issue 29: a browser.json that can't be read is said in one sentence that names
/// the file and what the system said, with one closing full stop (it was "read PATH..").
#[tokio::test(flavor = "multi_thread")]
async fn data_5_backend_show_says_which_file_cannot_be_read_and_why() {
    let dir = tempfile::tempdir().expect("a temp dir");
    // Conch's folder sits under a plain file: nothing in it can be read.
    std::fs::write(dir.path().join("a-file"), b"x").expect("a file");
    let home = dir.path().join("a-file").join("home");
    let (ok, out, err) = backend(&home, &["show"], &[]).await;
    assert!(!ok, "{out}");
    let path = home.join("browser.json");
    assert!(
        err.starts_with(&format!(
            "conch-gateway: failed to read {} (",
            path.display()
        )),
        "{err}"
    );
    assert!(err.ends_with(").\n") && !err.contains(".."), "{err}");
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

/// Runs `conch-gateway backend …` on `home` on a terminal of its own (util-linux
/// `script` gives it one), typing `typed` once the terminal shows `prompt`; gives
/// (success, what the terminal showed).
pub(crate) async fn backend_on_a_terminal(
    home: &std::path::Path,
    args: &[&str],
    prompt: &str,
    typed: &str,
) -> (bool, String) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let quoted = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let mut line = vec![
        quoted(env!("CARGO_BIN_EXE_conch-gateway")),
        "backend".to_owned(),
    ];
    line.extend(args.iter().map(|a| quoted(a)));
    line.push("--home".to_owned());
    line.push(quoted(&home.display().to_string()));
    let mut child = tokio::process::Command::new("script")
        .args(["-qec", &line.join(" "), "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("util-linux script runs");
    let mut stdin = child.stdin.take().expect("piped");
    let mut stdout = child.stdout.take().expect("piped");
    let mut shown = Vec::new();
    let mut chunk = [0u8; 1024];
    let typed_at = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        while !String::from_utf8_lossy(&shown).contains(prompt) {
            match stdout.read(&mut chunk).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => shown.extend_from_slice(&chunk[..n]),
            }
        }
        true
    })
    .await
    .expect("the terminal shows the prompt");
    assert!(typed_at, "{}", String::from_utf8_lossy(&shown));
    stdin.write_all(typed.as_bytes()).await.expect("typed");
    let rest = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        let _ = stdout.read_to_end(&mut shown).await;
        child.wait().await
    })
    .await
    .expect("the command ends")
    .expect("it ran");
    drop(stdin);
    (rest.success(), String::from_utf8_lossy(&shown).into_owned())
}

/// BE-16: turning on the person's own Chrome from the command line needs the person: a
/// command without a terminal (its standard input piped, even answering "y") is refused
/// with a sentence and nothing changes; on a terminal, "y" turns it on and anything else
/// does not.
#[tokio::test(flavor = "multi_thread")]
async fn be_16_backend_set_chrome_without_a_terminal_is_refused() {
    use tokio::io::AsyncWriteExt as _;
    let home = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_conch-gateway"))
        .args(["backend", "set", "chrome", "--home"])
        .arg(home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gateway runs");
    let mut stdin = child.stdin.take().expect("piped");
    // The gateway may refuse and exit before it reads a byte: a broken pipe is fine.
    let _ = stdin.write_all(b"y\n").await;
    drop(stdin);
    let out = child.wait_with_output().await.expect("it ends");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("turning on your own Chrome needs you"),
        "{err}"
    );
    let (_, shown, _) = backend(home.path(), &["show"], &[]).await;
    assert!(shown.contains("backend: local"), "{shown}");
    // On a terminal, No is the default.
    let (ok, out) = backend_on_a_terminal(home.path(), &["set", "chrome"], "[y/N]", "\n").await;
    assert!(!ok && out.contains("was not turned on"), "{out}");
    let (_, shown, _) = backend(home.path(), &["show"], &[]).await;
    assert!(shown.contains("backend: local"), "{shown}");
    let (ok, out) = backend_on_a_terminal(home.path(), &["set", "chrome"], "[y/N]", "y\n").await;
    assert!(ok && out.contains("Turn it on? [y/N]"), "{out}");
    let (_, shown, _) = backend(home.path(), &["show"], &[]).await;
    assert!(shown.contains("backend: chrome"), "{shown}");
}

/// BE-3: on a terminal, `backend set` reads the key without showing it; piped, it reads
/// the first line of standard input.
#[tokio::test(flavor = "multi_thread")]
async fn be_3_backend_set_reads_a_key_without_echo_on_a_terminal() {
    use tokio::io::AsyncWriteExt as _;
    let home = tempfile::tempdir().unwrap();
    let (ok, out) = backend_on_a_terminal(
        home.path(),
        &["set", "browserbase"],
        "(not shown)",
        &format!("{CANARY}\n"),
    )
    .await;
    assert!(ok, "{out}");
    assert!(out.contains("key saved"), "{out}");
    assert!(!out.contains(CANARY), "the key was echoed: {out}");
    // Piped: one line, no prompt needed.
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_conch-gateway"))
        .args(["backend", "set", "steel", "--home"])
        .arg(home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gateway runs");
    let mut stdin = child.stdin.take().expect("piped");
    stdin
        .write_all(format!("{CANARY}\nnot the key\n").as_bytes())
        .await
        .expect("written");
    drop(stdin);
    let out = child.wait_with_output().await.expect("it ends");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && said.contains("key saved"), "{said}");
    let (_, shown, _) = backend(home.path(), &["show"], &[]).await;
    assert!(
        shown.contains("steel (api key) for api.steel.dev"),
        "{shown}"
    );
    assert!(!shown.contains(CANARY), "{shown}");
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
    let (ok, out) = backend_on_a_terminal(home.path(), &["set", "chrome"], "[y/N]", "y\n").await;
    assert!(ok, "{out}");
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

/// `backend set PROVIDER --url URL --key-env VAR` with the canary as VAR's value.
async fn set_with_key(
    home: &std::path::Path,
    provider: &str,
    url: &str,
    var: &str,
) -> (bool, String, String) {
    backend(
        home,
        &["set", provider, "--url", url, "--key-env", var],
        &[(var, CANARY)],
    )
    .await
}

/// The gateway's `mcp --unattended --allow-localhost` with `home` as its home.
async fn unattended_mcp(home: &std::path::Path) -> StdioClient {
    StdioClient::start(gateway(home, &["mcp", "--unattended", "--allow-localhost"])).await
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
    let (ok, out, err) = set_with_key(home.path(), "browserbase", &cloud.base(), "BB_KEY").await;
    assert!(ok, "{out} {err}");
    let mut client = unattended_mcp(home.path()).await;
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

    let mut client = unattended_mcp(home.path()).await;
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
pub(crate) async fn http_get(port: u16, path: &str) -> String {
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
    let (ok, out, err) =
        set_with_key(home.path(), "steel", "http://127.0.0.1:3000", "ST_KEY").await;
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

/// A pretend server on a stale address: counts the connections it is offered and keeps
/// every byte it receives, answering none.
struct Stale {
    port: u16,
    connections: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    received: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

impl Stale {
    async fn start() -> Stale {
        use tokio::io::AsyncReadExt as _;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a port");
        let port = listener.local_addr().expect("its address").port();
        let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (count, keep) = (connections.clone(), received.clone());
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let keep = keep.clone();
                tokio::spawn(async move {
                    let mut chunk = [0u8; 4096];
                    while let Ok(n) = stream.read(&mut chunk).await {
                        if n == 0 {
                            break;
                        }
                        keep.lock().expect("kept").extend_from_slice(&chunk[..n]);
                    }
                });
            }
        });
        Stale {
            port,
            connections,
            received,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Asserts it was offered nothing, and holds no canary.
    fn saw_nothing(&self) {
        let received = String::from_utf8_lossy(&self.received.lock().expect("kept")).into_owned();
        assert!(
            !received.contains(CANARY),
            "the stale address got the key: {received}"
        );
        assert_eq!(
            self.connections.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "the stale address was reached: {received}"
        );
    }
}

/// BE-7, BE-6: `backend set steel` without `--url` clears the address an earlier
/// `backend set steel --url` left: the new key is for Steel's own API, and nothing is
/// left that would send it to the stale address.
#[tokio::test(flavor = "multi_thread")]
async fn be_7_backend_set_without_url_clears_a_stale_base_address() {
    let stale = Stale::start().await;
    let home = tempfile::tempdir().unwrap();
    let (ok, out, err) = backend(home.path(), &["set", "steel", "--url", &stale.url()], &[]).await;
    assert!(ok, "{out} {err}");
    let (ok, out, err) = backend(
        home.path(),
        &["set", "steel", "--key-env", "ST_KEY"],
        &[("ST_KEY", CANARY)],
    )
    .await;
    assert!(ok, "{out} {err}");
    assert!(out.contains("earlier address was cleared"), "{out}");
    let (ok, shown, err) = backend(home.path(), &["show"], &[]).await;
    assert!(ok, "{err}");
    assert!(
        shown.contains("steel (api key) for api.steel.dev"),
        "{shown}"
    );
    assert!(
        !shown.contains(&stale.port.to_string()) && !shown.contains("steel-base"),
        "a stale address is still saved: {shown}"
    );
    // The other way round: a new address without a key drops the key saved for the old
    // host, rather than sending it to the new one.
    let (ok, out, err) = backend(home.path(), &["set", "steel", "--url", &stale.url()], &[]).await;
    assert!(ok, "{out} {err}");
    let (_, shown, _) = backend(home.path(), &["show"], &[]).await;
    assert!(!shown.contains("(api key)"), "{shown}");
    for text in [&out, &err, &shown] {
        assert!(!text.contains(CANARY), "{text}");
    }
    stale.saw_nothing();
}

/// BE-6, BE-7: a key is never sent to an address other than the one it was saved with.
/// A secrets file that pairs a Steel key (saved for Steel's own API) with a stale
/// address, as `backend set` used to leave it: `mcp` sends the key nowhere, says why,
/// and serves the page from its own browser; the pretend server on the stale address is
/// never reached.
#[tokio::test(flavor = "multi_thread")]
async fn be_7_a_key_is_never_sent_to_a_stale_base_address() {
    use conch_browser::seal::{Sealer, SecretText, SecretsFile};
    use conch_browser::{Home, SystemClock};
    let server = FixtureServer::start().await.unwrap();
    let stale = Stale::start().await;
    let home = tempfile::tempdir().unwrap();
    let (ok, out, err) = backend(home.path(), &["set", "steel", "--url", &stale.url()], &[]).await;
    assert!(ok, "{out} {err}");
    // What the old `backend set steel --key-env` left: the new key beside the old address.
    let conch = Home::new(home.path().to_path_buf());
    let sealer = Sealer::open(&conch, None).unwrap();
    let mut file = SecretsFile::load(&conch, &sealer, &SystemClock).unwrap();
    file.set(
        "steel",
        "api key",
        "api.steel.dev",
        SecretText::new(CANARY.to_owned()),
    );
    file.save(&sealer).unwrap();

    let mut client = unattended_mcp(home.path()).await;
    let pipe = client.child.stderr.take().expect("stderr is piped");
    let said = tokio::spawn(async move {
        use tokio::io::AsyncReadExt as _;
        let mut text = String::new();
        let _ = tokio::io::BufReader::new(pipe)
            .read_to_string(&mut text)
            .await;
        text
    });
    let (page, error) = client
        .call("browser_open", json!({ "url": server.url("basic.html") }))
        .await;
    assert!(!error, "{page}");
    assert!(page.contains("Hello from the fixtures"), "{page}");
    let transcript = client.transcript.clone();
    client.finish().await;
    let said = said.await.unwrap();
    assert!(said.contains("not sent there"), "{said}");
    for text in [&page, &transcript, &said] {
        assert!(!text.contains(CANARY), "{text}");
    }
    for (path, bytes) in everything_in(home.path()) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(CANARY),
            "{} holds the key in plain text",
            path.display()
        );
    }
    stale.saw_nothing();
}

/// BE-6: a key is never saved for a plain-http address on another machine: refused with
/// a sentence, nothing saved.
#[tokio::test(flavor = "multi_thread")]
async fn be_6_a_key_for_a_plain_http_address_elsewhere_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let (ok, out, err) =
        set_with_key(home.path(), "browserbase", "http://10.1.2.3:9", "BB_KEY").await;
    assert!(!ok, "{out}");
    assert!(err.contains("plain text"), "{err}");
    let (_, shown, _) = backend(home.path(), &["show"], &[]).await;
    assert!(!shown.contains("saved:"), "{shown}");
    assert!(!err.contains(CANARY) && !shown.contains(CANARY));
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
        let (ok, out, err) = set_with_key(home.path(), "steel", &cloud.base(), "ST_KEY").await;
        assert!(ok, "{out} {err}");
        let mut client = unattended_mcp(home.path()).await;
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

/// Issue 32 (BE-3, BE-1): `backend set pool` seals each endpoint, a token in its query
/// included, and shows and prints hosts only; `show` names the pool and its cap; mistakes
/// are sentences with nothing saved, and the existing forms refuse the pool's flags.
#[tokio::test(flavor = "multi_thread")]
async fn be_3_backend_set_pool_seals_each_endpoint_and_shows_hosts_only() {
    let home = tempfile::tempdir().unwrap();
    let (ok, _, err) = backend(home.path(), &["set", "pool"], &[]).await;
    assert!(
        !ok && err.contains("needs at least one DevTools address"),
        "{err}"
    );
    let (ok, _, err) = backend(
        home.path(),
        &[
            "set",
            "pool",
            "--endpoint",
            "http://127.0.0.1:1",
            "--per-endpoint",
            "0",
        ],
        &[],
    )
    .await;
    assert!(!ok && err.contains("from 1 to 64"), "{err}");
    let (ok, _, err) = backend(
        home.path(),
        &["set", "pool", "--endpoint", "ftp://127.0.0.1:1"],
        &[],
    )
    .await;
    assert!(!ok && err.contains("is not a DevTools address"), "{err}");
    let (ok, _, err) = backend(
        home.path(),
        &[
            "set",
            "cdp",
            "--url",
            "http://127.0.0.1:1",
            "--endpoint",
            "http://127.0.0.1:2",
        ],
        &[],
    )
    .await;
    assert!(!ok && err.contains("for the pool backend only"), "{err}");
    let (_, shown, _) = backend(home.path(), &["show"], &[]).await;
    assert!(shown.contains("backend: local"), "nothing saved: {shown}");

    let with_token = format!("ws://127.0.0.1:3000/?token={CANARY}");
    let (ok, out, err) = backend(
        home.path(),
        &[
            "set",
            "pool",
            "--endpoint",
            &with_token,
            "--endpoint",
            "http://127.0.0.1:9222",
            "--per-endpoint",
            "3",
        ],
        &[],
    )
    .await;
    assert!(ok, "{out} {err}");
    assert!(
        out.contains("address saved for ws://127.0.0.1:3000"),
        "{out}"
    );
    assert!(
        out.contains("at most 3 conversations on each browser"),
        "{out}"
    );
    let (ok, shown, err) = backend(home.path(), &["show"], &[]).await;
    assert!(ok, "{err}");
    assert!(shown.contains("backend: pool"), "{shown}");
    assert!(
        shown.contains("pool-1 (address) for ws://127.0.0.1:3000"),
        "{shown}"
    );
    assert!(
        shown.contains("pool-2 (address) for http://127.0.0.1:9222"),
        "{shown}"
    );
    assert!(shown.contains("3 per browser"), "{shown}");
    for text in [&out, &err, &shown] {
        assert!(!text.contains(CANARY) && !text.contains("token="), "{text}");
    }
    for (path, bytes) in everything_in(home.path()) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(CANARY),
            "{} holds the token in plain text",
            path.display()
        );
    }
    // A new pool replaces the old one's addresses.
    let (ok, _, err) = backend(
        home.path(),
        &["set", "pool", "--endpoint", "http://127.0.0.1:9333"],
        &[],
    )
    .await;
    assert!(ok, "{err}");
    let (_, shown, _) = backend(home.path(), &["show"], &[]).await;
    assert!(
        shown.contains("pool-1 (address) for http://127.0.0.1:9333")
            && !shown.contains("pool-2")
            && shown.contains("4 per browser"),
        "{shown}"
    );
}

/// Issue 32 (BE-1): after `backend set pool`, the next `mcp` browses on the pool: the
/// page opens in one of its browsers, none of Conch's own.
#[tokio::test(flavor = "multi_thread")]
async fn be_1_mcp_browses_on_the_pool_after_backend_set_pool() {
    let server = FixtureServer::start().await.unwrap();
    let (a, b) = (
        Standalone::start().expect("a standalone Chromium"),
        Standalone::start().expect("a standalone Chromium"),
    );
    let home = tempfile::tempdir().unwrap();
    let (ok, out, err) = backend(
        home.path(),
        &[
            "set",
            "pool",
            "--endpoint",
            &a.http(),
            "--endpoint",
            &b.http(),
        ],
        &[],
    )
    .await;
    assert!(ok, "{out} {err}");
    let mut client = unattended_mcp(home.path()).await;
    let (page, error) = client
        .call("browser_open", json!({ "url": server.url("basic.html") }))
        .await;
    assert!(!error, "{page}");
    assert!(page.contains("Hello from the fixtures"), "{page}");
    let on_a = http_get(a.port(), "/json/list").await;
    let on_b = http_get(b.port(), "/json/list").await;
    assert!(
        on_a.contains(&server.url("basic.html")) || on_b.contains(&server.url("basic.html")),
        "{on_a} {on_b}"
    );
    client.finish().await;
}
