//! The person's saved passwords (issue 16, SEC-2): saved from the command line, sealed,
//! typed into the saved site's password field without the model seeing them, never into a
//! look-alike, and failing closed when the file was tampered with.

use std::process::Stdio;

use conch_fixtures::FixtureServer;
use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::backend::everything_in;
use crate::support::{StdioClient, gateway, ref_of};

/// The fixture page's saved password (fixtures/pages/vault-signin.html).
const CANARY: &str = "canary-vault-93b1";

/// Runs `conch-gateway passwords …` on `home` with `stdin`; gives (success, stdout,
/// stderr).
async fn passwords(home: &std::path::Path, args: &[&str], stdin: &str) -> (bool, String, String) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_conch-gateway"))
        .arg("passwords")
        .args(args)
        .arg("--home")
        .arg(home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gateway runs");
    let mut input = child.stdin.take().expect("stdin");
    // A call refused on its arguments ends before it reads its input: a closed pipe
    // then is the refusal's business, not a failure of this helper.
    if let Err(error) = input.write_all(stdin.as_bytes()).await {
        assert_eq!(
            error.kind(),
            std::io::ErrorKind::BrokenPipe,
            "stdin: {error}"
        );
    }
    drop(input);
    let out = child.wait_with_output().await.expect("the gateway ends");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Issue 16, SEC-2: a password saved for 127.0.0.1:PORT is typed into that page's
/// password field whatever the agent wrote, and the page accepts it; the same page on
/// another origin gets nothing; the canary is in no result, no log (trace on) and no file
/// but the sealed one.
#[tokio::test(flavor = "multi_thread")]
async fn sec_2_an_agent_signs_in_with_a_saved_password_it_never_sees() {
    let pages = FixtureServer::start().await.expect("fixture server");
    let home = tempfile::tempdir().expect("temp home");
    let site = format!("127.0.0.1:{}", pages.port());
    let (ok, out, err) = passwords(
        home.path(),
        &["add", &site, "--username", "ada@example.com"],
        &format!("{CANARY}\n"),
    )
    .await;
    assert!(ok, "{err}");
    assert_eq!(
        out,
        format!("password saved for {site} (ada@example.com)\n")
    );
    let (ok, listed, err) = passwords(home.path(), &["list"], "").await;
    assert!(ok, "{err}");
    assert_eq!(listed, format!("{site}\tada@example.com\n"));

    let mut command = gateway(
        home.path(),
        &[
            "mcp",
            "--trust",
            "full",
            "--allow-localhost",
            "--panel-port",
            "0",
        ],
    );
    // Trace logging fills standard error faster than anyone reads it here: the log file
    // keeps it all.
    command.env("RUST_LOG", "trace").stderr(Stdio::null());
    let mut client = StdioClient::start(command).await;
    let mut said = String::new();
    let (page, error) = client
        .call(
            "browser_open",
            json!({ "url": pages.url("vault-signin.html") }),
        )
        .await;
    assert!(!error, "{page}");
    let field = ref_of(&page, "textbox \"Password\"");
    let (typed, error) = client
        .call(
            "browser_type",
            json!({ "ref": field, "text": "the agent's own guess" }),
        )
        .await;
    assert!(!error, "{typed}");
    assert!(
        typed.contains("Filled that field from the person's saved passwords"),
        "{typed}"
    );
    assert!(
        typed.contains("Password accepted"),
        "the page got the saved password: {typed}"
    );
    said.push_str(&page);
    said.push_str(&typed);

    // A look-alike: the same page on another origin is another site.
    let (other, error) = client
        .call(
            "browser_open",
            json!({ "url": pages.cross_site_url("vault-signin.html") }),
        )
        .await;
    assert!(!error, "{other}");
    let field = ref_of(&other, "textbox \"Password\"");
    let (refused, error) = client
        .call("browser_type", json!({ "ref": field, "text": "a guess" }))
        .await;
    assert!(error, "a look-alike got a password: {refused}");
    let (read, _) = client.call("browser_read", json!({})).await;
    assert!(read.contains("Not signed in"), "{read}");
    said.push_str(&other);
    said.push_str(&refused);
    said.push_str(&read);
    client.finish().await;

    assert!(!said.contains(CANARY), "a result carries the password");
    let sealed = home.path().join("passwords.secrets.json");
    for (path, bytes) in everything_in(home.path()) {
        if path == sealed {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(CANARY),
            "{} holds the password in plain text",
            path.display()
        );
    }
    let log = std::fs::read_to_string(home.path().join("gateway.log")).unwrap_or_default();
    assert!(
        log.contains("TRACE") || log.contains("trace"),
        "trace logging was off"
    );
}

/// Issue 16: a flipped byte in the sealed file fails closed: it is set aside, listed as a
/// sentence, and nothing is filled until the person saves again; remove forgets an entry.
#[tokio::test(flavor = "multi_thread")]
async fn data_6_a_tampered_passwords_file_fails_closed() {
    let home = tempfile::tempdir().expect("temp home");
    for (site, user) in [("example.com", "ada"), ("127.0.0.1:9", "bob")] {
        let (ok, _, err) = passwords(
            home.path(),
            &["add", site, "--username", user],
            &format!("{CANARY}\n"),
        )
        .await;
        assert!(ok, "{err}");
    }
    let (ok, out, _) = passwords(home.path(), &["remove", "127.0.0.1:9"], "").await;
    assert!(ok && out.contains("removed"), "{out}");
    let (_, listed, _) = passwords(home.path(), &["list"], "").await;
    assert_eq!(listed, "example.com\tada\n");
    let (ok, _, err) = passwords(home.path(), &["remove", "nowhere.test"], "").await;
    assert!(!ok && err.contains("no password is saved"), "{err}");
    let (ok, _, err) = passwords(home.path(), &["add", "example.com"], "x\n").await;
    assert!(!ok && err.contains("--username"), "{err}");

    let path = home.path().join("passwords.secrets.json");
    let mut bytes = std::fs::read(&path).expect("the sealed file");
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let at = text.find("\"sealed\": \"").expect("a sealed field") + 20;
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    std::fs::write(&path, &bytes).expect("flipped");
    let (ok, _, err) = passwords(home.path(), &["list"], "").await;
    assert!(!ok, "a tampered file was read");
    assert!(err.contains("Save the passwords again"), "{err}");
    assert!(!path.exists(), "the tampered file was set aside");
}
