//! The person's saved passwords (issue 16, SEC-2): saved from the command line, sealed,
//! typed into the saved site's password field without the model seeing them, never into a
//! look-alike, and failing closed when the file was tampered with.

use std::process::Stdio;

use conch_fixtures::FixtureServer;
use serde_json::json;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt};

use crate::backend::everything_in;
use crate::support::{StdioClient, door_request, gateway, ref_of};

use conch_browser::seal::{Sealer, SecretsFile};
use conch_browser::{Home, SystemClock};

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
/// password field whatever the agent wrote, and the page accepts it; its one-time code
/// field gets nothing; the same page on another origin gets nothing; the canary is in no result, no log (trace on) and no file
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
        format!("password saved for http://{site} (ada@example.com)\n")
    );
    let (ok, listed, err) = passwords(home.path(), &["list"], "").await;
    assert!(ok, "{err}");
    assert_eq!(listed, format!("http://{site}\tada@example.com\n"));

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
        typed.contains(&format!("Filled the saved password for {site}")),
        "{typed}"
    );
    assert!(
        typed.contains("Password accepted"),
        "the page got the saved password: {typed}"
    );
    said.push_str(&page);
    said.push_str(&typed);
    // A one-time code field of the same site is no password: the person gets it.
    let code = ref_of(&page, "textbox \"Two-step code\"");
    let (handed, error) = client
        .call("browser_type", json!({ "ref": code, "text": "123456" }))
        .await;
    assert!(error, "a code field was filled: {handed}");
    assert!(handed.contains("browser_handoff"), "{handed}");
    said.push_str(&handed);

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
    assert_eq!(listed, "https://example.com\tada\n");
    let (ok, _, err) = passwords(home.path(), &["remove", "nowhere.test"], "").await;
    assert!(!ok && err.contains("no password is saved"), "{err}");
    let (ok, _, err) = passwords(home.path(), &["add", "example.com"], "x\n").await;
    assert!(!ok && err.contains("--username"), "{err}");

    let path = home.path().join("passwords.secrets.json");
    flip_a_sealed_byte(&path);
    let (ok, _, err) = passwords(home.path(), &["list"], "").await;
    assert!(!ok, "a tampered file was read");
    assert!(err.contains("Save the passwords again"), "{err}");
    assert!(!path.exists(), "the tampered file was set aside");
}

/// Issue 29, SEC-2: a password saved for the https site is never filled into the http
/// page of the same host and port. The http page asks for it (its password field, typed
/// on by the agent) and gets nothing: no input reaches it, the agent is told to hand the
/// field over, and the canary is in no result, no log (trace on) and no file but the
/// sealed one.
#[tokio::test(flavor = "multi_thread")]
async fn sec_2_a_password_saved_for_https_is_never_filled_into_the_http_page() {
    let pages = FixtureServer::start().await.expect("fixture server");
    let home = tempfile::tempdir().expect("temp home");
    let site = format!("https://127.0.0.1:{}", pages.port());
    let (ok, out, err) = passwords(
        home.path(),
        &["add", &site, "--username", "ada@example.com"],
        &format!("{CANARY}\n"),
    )
    .await;
    assert!(ok && out.starts_with("password saved for"), "{err}");

    let mut client = traced_gateway(home.path()).await;
    let http = pages.url("vault-signin.html");
    assert!(http.starts_with("http://"), "{http}");
    let (page, error) = client.call("browser_open", json!({ "url": http })).await;
    assert!(!error, "{page}");
    let field = ref_of(&page, "textbox \"Password\"");
    let (refused, error) = client
        .call("browser_type", json!({ "ref": field, "text": "a guess" }))
        .await;
    assert!(error, "the http page got the https password: {refused}");
    assert!(refused.contains("browser_handoff"), "{refused}");
    let (read, _) = client.call("browser_read", json!({})).await;
    assert!(
        read.contains("Not signed in"),
        "input reached the page: {read}"
    );
    let transcript = std::mem::take(&mut client.transcript);
    client.finish().await;
    assert!(
        !transcript.contains(CANARY),
        "a message carries the password"
    );
    let sealed = home.path().join("passwords.secrets.json");
    for (path, bytes) in everything_in(home.path()) {
        if path != sealed {
            assert!(
                !String::from_utf8_lossy(&bytes).contains(CANARY),
                "{} holds the password in plain text",
                path.display()
            );
        }
    }
}

/// Issue 29, DATA-6: a vault file or a device key file other users can read is refused
/// with the command that fixes it (`chmod 600 <path>`), never advice to remove it (which
/// would lose every saved password); after the chmod the passwords are there.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn data_6_a_file_readable_by_others_is_refused_with_chmod_600() {
    use std::os::unix::fs::PermissionsExt as _;
    let home = tempfile::tempdir().expect("temp home");
    save_canary_for_ada(home.path()).await;
    for file in ["passwords.secrets.json", "device.key"] {
        let path = home.path().join(file);
        let mode = |m| std::fs::set_permissions(&path, std::fs::Permissions::from_mode(m));
        mode(0o644).expect("chmod 644");
        let (ok, out, err) = passwords(home.path(), &["list"], "").await;
        assert!(!ok, "{file} readable by others was used: {out}");
        assert!(
            err.contains(&format!("chmod 600 {}", path.display())),
            "{file}: {err}"
        );
        assert!(!err.to_lowercase().contains("remove"), "{file}: {err}");
        assert!(path.exists(), "{file} was removed");
        mode(0o600).expect("chmod 600");
        let (ok, listed, err) = passwords(home.path(), &["list"], "").await;
        assert!(ok, "{err}");
        assert_eq!(listed, "https://example.com\tada\n");
    }
}

/// Signs in to a door on `port` with `code`; gives the session's two factors, the cookie
/// and the token (LIVE-18), as one value for each.
async fn session_cookie(port: u16, code: &str) -> (String, String) {
    let (status, head, _) =
        door_request(port, "GET", &format!("/signin?code={code}"), &[], "").await;
    assert_eq!(status, 303, "{head}");
    let cookie = head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .and_then(|c| c.split(';').next())
        .expect("a session cookie")
        .to_owned();
    let token = head
        .lines()
        .find_map(|l| l.strip_prefix("location: /#session="))
        .expect("the session's token")
        .trim()
        .to_owned();
    (cookie, token)
}

/// Saves the canary as ada's password for example.com with the `passwords` command.
async fn save_canary_for_ada(home: &std::path::Path) {
    let (ok, _, err) = passwords(
        home,
        &["add", "example.com", "--username", "ada"],
        &format!("{CANARY}\n"),
    )
    .await;
    assert!(ok, "{err}");
}

/// Flips one byte of the sealed text in the passwords file at `path`, as a tamperer would.
fn flip_a_sealed_byte(path: &std::path::Path) {
    let mut bytes = std::fs::read(path).expect("the sealed file");
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let at = text.find("\"sealed\": \"").expect("a sealed field") + 20;
    bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
    std::fs::write(path, &bytes).expect("flipped");
}

/// The Passwords API's list, asked with the session `cookie`: (status, head, body).
async fn list_through_the_api(port: u16, session: &(String, String)) -> (u16, String, String) {
    door_request(
        port,
        "GET",
        "/api/browser/passwords",
        &[
            ("Cookie", session.0.as_str()),
            ("X-Conch-Session", session.1.as_str()),
        ],
        "",
    )
    .await
}

/// Issue 29, DATA-6: a tampered vault is said to every reader, not only the first (which
/// sets it aside): the `passwords` command says it each time, and so does the Passwords
/// page's API (an error the page shows, never an empty list), until the person saves a
/// password again.
#[tokio::test(flavor = "multi_thread")]
async fn data_6_a_tampered_vault_is_said_to_every_reader() {
    let home = tempfile::tempdir().expect("temp home");
    save_canary_for_ada(home.path()).await;
    let path = home.path().join("passwords.secrets.json");
    flip_a_sealed_byte(&path);

    for reader in ["the first", "the second"] {
        let (ok, out, err) = passwords(home.path(), &["list"], "").await;
        assert!(!ok, "{reader} list read a tampered vault: {out}");
        assert!(err.contains("Save the passwords again"), "{reader}: {err}");
        assert!(err.contains("set aside as"), "{reader}: {err}");
    }
    let (ok, _, err) = passwords(home.path(), &["remove", "example.com"], "").await;
    assert!(!ok && err.contains("Save the passwords again"), "{err}");

    let (agent, port, code) = door(home.path()).await;
    let cookie = session_cookie(port, &code).await;
    let (status, _, said) = list_through_the_api(port, &cookie).await;
    assert_ne!(status, 200, "the page got a list: {said}");
    assert!(said.contains("Save the passwords again"), "{said}");
    assert!(!said.contains("\"passwords\""), "{said}");

    // Saving again starts a new vault, which every reader then reads.
    save_canary_for_ada(home.path()).await;
    let (status, _, said) = list_through_the_api(port, &cookie).await;
    assert_eq!(status, 200, "{said}");
    assert!(said.contains("https://example.com"), "{said}");
    drop(agent);
}

/// Issue 29, DATA-6: the `passwords` command and the gateway (through the Passwords API)
/// saving at the same moment, many times over, lose nothing: every entry is there at the
/// end, as both the command and the API list it.
#[tokio::test(flavor = "multi_thread")]
async fn data_6_two_processes_saving_at_once_lose_nothing() {
    let home = tempfile::tempdir().expect("temp home");
    let (agent, port, code) = door(home.path()).await;
    let cookie = session_cookie(port, &code).await;
    let own = format!("http://127.0.0.1:{port}");
    const ROUNDS: usize = 3;
    const EACH: usize = 6;
    for round in 0..ROUNDS {
        let mut saves = Vec::new();
        for n in 0..EACH {
            let home = home.path().to_owned();
            saves.push(tokio::spawn(async move {
                let site = format!("cli-{round}-{n}.example");
                let (ok, _, err) =
                    passwords(&home, &["add", &site, "--username", "ada"], "pw\n").await;
                assert!(ok, "{site}: {err}");
            }));
            let (cookie, own) = (cookie.clone(), own.clone());
            saves.push(tokio::spawn(async move {
                let body = format!(
                    r#"{{"site": "api-{round}-{n}.example", "username": "bob", "password": "pw"}}"#
                );
                let (status, _, said) = door_request(
                    port,
                    "POST",
                    "/api/browser/passwords",
                    &[
                        ("Cookie", cookie.0.as_str()),
                        ("X-Conch-Session", cookie.1.as_str()),
                        ("Origin", own.as_str()),
                        ("Content-Type", "application/json"),
                    ],
                    &body,
                )
                .await;
                assert_eq!(status, 200, "{said}");
            }));
        }
        for save in saves {
            save.await.expect("a save ran");
        }
    }
    let (ok, listed, err) = passwords(home.path(), &["list"], "").await;
    assert!(ok, "{err}");
    let (status, _, api) = list_through_the_api(port, &cookie).await;
    assert_eq!(status, 200, "{api}");
    for round in 0..ROUNDS {
        for n in 0..EACH {
            for (who, user) in [("cli", "ada"), ("api", "bob")] {
                let entry = format!("https://{who}-{round}-{n}.example");
                assert!(
                    listed.contains(&format!("{entry}\t{user}\n")),
                    "{entry} was lost:\n{listed}"
                );
                assert!(
                    api.contains(&format!("\"{entry}\"")),
                    "{entry} was lost: {api}"
                );
            }
        }
    }
    assert_eq!(listed.lines().count(), 2 * ROUNDS * EACH, "{listed}");
    drop(agent);
}

/// The password saved for `site` in `home`, read back through the sealer as the gateway
/// keeps it.
fn saved_password(home: &std::path::Path, site: &str) -> String {
    let home = Home::new(home.to_path_buf());
    let sealer = Sealer::open(&home, None).expect("the device key");
    let file = SecretsFile::load_at(home.passwords_file(), &sealer, &SystemClock)
        .expect("the sealed passwords open");
    file.get(site)
        .unwrap_or_else(|| panic!("no password saved for {site}"))
        .expose()
        .to_owned()
}

/// The gateway on `home` in Full trust with trace logging to its log file only.
async fn traced_gateway(home: &std::path::Path) -> StdioClient {
    let mut command = gateway(
        home,
        &[
            "mcp",
            "--trust",
            "full",
            "--allow-localhost",
            "--panel-port",
            "0",
        ],
    );
    command.env("RUST_LOG", "trace").stderr(Stdio::null());
    StdioClient::start(command).await
}

/// `secret` is in no result, notification or request the gateway wrote (`transcript`),
/// no file of `home` but the sealed one, and the trace log (which was on).
fn nowhere_but_sealed(home: &std::path::Path, transcript: &str, secret: &str) {
    assert!(secret.len() >= 20, "a weak password was made");
    assert!(
        !transcript.contains(secret),
        "a message carries the password"
    );
    let sealed = home.join("passwords.secrets.json");
    for (path, bytes) in everything_in(home) {
        if path == sealed {
            continue;
        }
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} holds the password in plain text",
            path.display()
        );
    }
    let log = std::fs::read_to_string(home.join("gateway.log")).expect("the log");
    assert!(log.contains("TRACE"), "trace logging was off");
}

/// Issue 16, SEC-2, DATA-6: browser_type on a sign-up form's new-password field with
/// nothing saved makes a strong password, fills it and its confirmation, and saves it for
/// the site with the username the form holds; a later sign-in on the same site gets it
/// from the vault. The password is in no result, notification, live event (the person
/// watches), log or file but the sealed one.
#[tokio::test(flavor = "multi_thread")]
async fn sec_2_a_sign_up_gets_a_generated_password_that_the_sign_in_then_uses() {
    let pages = FixtureServer::start().await.expect("fixture server");
    let home = tempfile::tempdir().expect("temp home");
    let site = format!("127.0.0.1:{}", pages.port());
    let (mut client, port, code) = door_with(home.path(), &["--trust", "full"]).await;
    // The person watches: every live event is kept for the scan.
    let signed = crate::live::signed_in(port, &code).await;
    let mut socket = crate::live::join(port, &signed, "mcp-stdio").await;
    let events = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let kept = events.clone();
    let watcher = tokio::spawn(async move {
        use futures_util::StreamExt as _;
        while let Some(Ok(message)) = socket.next().await {
            if let tokio_tungstenite::tungstenite::Message::Text(text) = message {
                kept.lock().expect("the events").push_str(&text);
            }
        }
    });

    let (page, error) = client
        .call(
            "browser_open",
            json!({ "url": pages.url("vault-signup.html") }),
        )
        .await;
    assert!(!error, "{page}");
    let email = ref_of(&page, "textbox \"Email\"");
    let (typed, error) = client
        .call(
            "browser_type",
            json!({ "ref": email, "text": "ada@example.com" }),
        )
        .await;
    assert!(!error, "{typed}");
    let field = ref_of(&page, "textbox \"Choose a password\"");
    let (made, error) = client
        .call("browser_type", json!({ "ref": field, "text": "hunter2" }))
        .await;
    assert!(!error, "{made}");
    assert!(
        made.contains(&format!(
            "Generated a strong password for {site}, filled it and saved it"
        )),
        "{made}"
    );
    assert!(
        made.contains("Its confirmation field has it too."),
        "{made}"
    );
    let create = ref_of(&page, "button \"Create account\"");
    let (created, error) = client.call("browser_click", json!({ "ref": create })).await;
    assert!(!error, "{created}");
    let (read, _) = client.call("browser_read", json!({})).await;
    assert!(
        read.contains("Account created for ada@example.com"),
        "{read}"
    );

    let (signin, error) = client
        .call(
            "browser_open",
            json!({ "url": pages.url("vault-signin.html") }),
        )
        .await;
    assert!(!error, "{signin}");
    let field = ref_of(&signin, "textbox \"Password\"");
    let (filled, error) = client
        .call("browser_type", json!({ "ref": field, "text": "hunter2" }))
        .await;
    assert!(!error, "{filled}");
    assert!(
        filled.contains(&format!("Filled the saved password for {site}")),
        "{filled}"
    );
    assert!(
        filled.contains("Password accepted for ada@example.com"),
        "the sign-in got the generated password: {filled}"
    );
    let mut transcript = std::mem::take(&mut client.transcript);
    client.finish().await;
    watcher.abort();
    let events = events.lock().expect("the events").clone();
    assert!(events.contains("\"type\""), "no live event came: {events}");
    transcript.push_str(&events);

    let (ok, listed, err) = passwords(home.path(), &["list"], "").await;
    assert!(ok, "{err}");
    assert_eq!(listed, format!("http://{site}\tada@example.com\n"));
    let secret = saved_password(home.path(), &format!("http://{site}"));
    nowhere_but_sealed(home.path(), &transcript, &secret);
}

/// Issue 16, SEC-2, FORM-3: browser_form fills a sign-up form's password fields from the
/// vault (a generated password, then the saved one) instead of skipping them, never with
/// the agent's values, and names them as filled from the vault; the sign-in form then
/// gets the saved password; a site with nothing saved and no new-password field still
/// has its password field skipped and named.
#[tokio::test(flavor = "multi_thread")]
async fn form_3_browser_form_fills_password_fields_from_the_vault() {
    let pages = FixtureServer::start().await.expect("fixture server");
    let home = tempfile::tempdir().expect("temp home");
    let site = format!("127.0.0.1:{}", pages.port());
    let mut client = traced_gateway(home.path()).await;

    let (page, error) = client
        .call(
            "browser_open",
            json!({ "url": pages.url("vault-signup.html") }),
        )
        .await;
    assert!(!error, "{page}");
    let (email, password, again) = (
        ref_of(&page, "textbox \"Email\""),
        ref_of(&page, "textbox \"Choose a password\""),
        ref_of(&page, "textbox \"Repeat the password\""),
    );
    let (filled, error) = client
        .call(
            "browser_form",
            json!({ "fields": [
                { "ref": email, "value": "bob@example.com" },
                { "ref": password, "value": "the agent's guess" },
                { "ref": again, "value": "the agent's guess" },
            ] }),
        )
        .await;
    assert!(!error, "{filled}");
    assert!(filled.contains("Filled 3 of 3 fields."), "{filled}");
    assert!(
        filled.contains(&format!(
            "{password}: Generated a strong password for {site}, filled it and saved it"
        )),
        "{filled}"
    );
    assert!(
        filled.contains(&format!("{again}: Filled the saved password for {site}")),
        "{filled}"
    );
    assert!(!filled.contains("Skipped"), "{filled}");
    let create = ref_of(&page, "button \"Create account\"");
    let (created, error) = client.call("browser_click", json!({ "ref": create })).await;
    assert!(!error, "{created}");
    let (read, _) = client.call("browser_read", json!({})).await;
    assert!(
        read.contains("Account created for bob@example.com"),
        "{read}"
    );

    let (signin, _) = client
        .call(
            "browser_open",
            json!({ "url": pages.url("vault-signin.html") }),
        )
        .await;
    let (email, password) = (
        ref_of(&signin, "textbox \"Email\""),
        ref_of(&signin, "textbox \"Password\""),
    );
    let fields = json!({ "fields": [
        { "ref": email, "value": "bob@example.com" },
        { "ref": password, "value": "the agent's guess" },
    ] });
    let (signed, error) = client.call("browser_form", fields).await;
    assert!(!error, "{signed}");
    assert!(
        signed.contains(&format!("{password}: Filled the saved password for {site}")),
        "{signed}"
    );
    assert!(
        signed.contains("Password accepted for bob@example.com"),
        "{signed}"
    );

    // Another site, nothing saved, a sign-in form: skipped and named as before.
    let (other, _) = client
        .call(
            "browser_open",
            json!({ "url": pages.cross_site_url("vault-signin.html") }),
        )
        .await;
    let password = ref_of(&other, "textbox \"Password\"");
    let (skipped, error) = client
        .call(
            "browser_form",
            json!({ "fields": [{ "ref": password, "value": "the agent's guess" }] }),
        )
        .await;
    assert!(!error, "{skipped}");
    assert!(skipped.contains("Filled 0 of 1 field."), "{skipped}");
    assert!(
        skipped.contains(&format!(
            "Skipped: {password}: a password, code or card field"
        )),
        "{skipped}"
    );
    let (read, _) = client.call("browser_read", json!({})).await;
    assert!(read.contains("Not signed in"), "{read}");
    let transcript = std::mem::take(&mut client.transcript);
    client.finish().await;

    let (_, listed, _) = passwords(home.path(), &["list"], "").await;
    assert_eq!(listed, format!("http://{site}\tbob@example.com\n"));
    let secret = saved_password(home.path(), &format!("http://{site}"));
    nowhere_but_sealed(home.path(), &transcript, &secret);
}

/// A `conch-gateway mcp` with its person's door: the agent's client (which keeps it
/// running), the door's port and the one-time sign-in code.
async fn door(home: &std::path::Path) -> (StdioClient, u16, String) {
    door_with(home, &[]).await
}

/// [`door`] with more arguments and, with `RUST_LOG` set to trace, every log line.
async fn door_with(home: &std::path::Path, args: &[&str]) -> (StdioClient, u16, String) {
    let mut all = vec!["mcp", "--panel-port", "0", "--allow-localhost"];
    all.extend_from_slice(args);
    let mut command = gateway(home, &all);
    command.env("RUST_LOG", "trace");
    let mut agent = StdioClient::start(command).await;
    let pipe = agent.child.stderr.take().expect("stderr is piped");
    let mut lines = tokio::io::BufReader::new(pipe).lines();
    let link = loop {
        let line = tokio::time::timeout(std::time::Duration::from_secs(60), lines.next_line())
            .await
            .expect("the sign-in link within 60 s")
            .expect("stderr is readable")
            .expect("the gateway prints its sign-in link");
        if let Some(link) = line.split("watch and take over at ").nth(1) {
            break link.to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let rest = link
        .strip_prefix("http://127.0.0.1:")
        .unwrap_or_else(|| panic!("a loopback link: {link}"));
    let (port, code) = rest
        .split_once("/signin?code=")
        .unwrap_or_else(|| panic!("a sign-in link: {link}"));
    (agent, port.parse().expect("a port"), code.to_owned())
}

/// Issue 16, AMB-2, SEC-2: the Passwords API is the signed-in person's on the gateway's
/// own host and origin only: a forged cross-origin save or removal gets 403 and changes
/// nothing, as does one with no Origin, a form post, the wrong Host or no session; the
/// list gives sites and usernames only, and no answer ever carries the password.
#[tokio::test(flavor = "multi_thread")]
async fn amb_2_a_forged_cross_origin_change_to_the_passwords_is_refused() {
    let home = tempfile::tempdir().expect("temp home");
    let (agent, port, code) = door(home.path()).await;
    let own = format!("http://127.0.0.1:{port}");
    let mut answers = String::new();

    let session = crate::live::signed_in(port, &code).await;
    let json = ("Content-Type", "application/json");
    let signed = ("Cookie", session.cookie.as_str());
    let token = (crate::live::TOKEN, session.token.as_str());
    let origin = ("Origin", own.as_str());
    let body = format!(
        r#"{{"site": "https://login.example.com/x", "username": "ada", "password": "{CANARY}"}}"#
    );
    let refused: [(&str, Vec<(&str, &str)>); 7] = [
        (
            "a forged cross-origin post",
            vec![signed, token, json, ("Origin", "http://evil.example")],
        ),
        ("a post with no Origin", vec![signed, token, json]),
        (
            "a post from the null origin",
            vec![signed, token, json, ("Origin", "null")],
        ),
        (
            "a rebound host",
            vec![signed, token, json, origin, ("Host", "evil.example")],
        ),
        ("no session", vec![json, origin]),
        (
            "the cookie alone (any local server the browser visits gets it)",
            vec![signed, json, origin],
        ),
        (
            "a made-up session",
            vec![json, origin, ("Cookie", "conch_session=00ff")],
        ),
    ];
    for (what, headers) in &refused {
        let (status, _, said) =
            door_request(port, "POST", "/api/browser/passwords", headers, &body).await;
        let session_missing = what.starts_with("no session")
            || what.starts_with("a made-up")
            || what.starts_with("the cookie alone");
        assert_eq!(
            status,
            if session_missing { 401 } else { 403 },
            "{what}: {said}"
        );
        answers.push_str(&said);
    }
    let (status, _, said) = door_request(
        port,
        "POST",
        "/api/browser/passwords",
        &[
            signed,
            token,
            origin,
            ("Content-Type", "application/x-www-form-urlencoded"),
        ],
        &format!("site=example.com&username=ada&password={CANARY}"),
    )
    .await;
    assert_eq!(status, 415, "a form post: {said}");
    answers.push_str(&said);
    let (_, listed, _) = passwords(home.path(), &["list"], "").await;
    assert_eq!(
        listed, "no passwords saved\n",
        "a refused request saved something"
    );

    // The person's own page saves, lists and removes.
    let (status, _, said) = door_request(
        port,
        "POST",
        "/api/browser/passwords",
        &[signed, token, origin, json],
        &body,
    )
    .await;
    assert_eq!(status, 200, "{said}");
    let saved: serde_json::Value = serde_json::from_str(&said).expect("JSON");
    assert_eq!(
        saved,
        json!({ "saved": { "site": "https://example.com", "username": "ada" } })
    );
    answers.push_str(&said);
    for (what, bad) in [
        ("not JSON", "site=example.com"),
        (
            "no password",
            r#"{"site": "example.com", "username": "ada"}"#,
        ),
        (
            "not a site",
            r#"{"site": "not a site", "username": "ada", "password": "x"}"#,
        ),
        (
            "no username",
            r#"{"site": "example.com", "username": " ", "password": "x"}"#,
        ),
    ] {
        let (status, _, said) = door_request(
            port,
            "POST",
            "/api/browser/passwords",
            &[signed, token, origin, json],
            bad,
        )
        .await;
        assert_eq!(status, 400, "{what}: {said}");
        assert!(
            said.trim().ends_with('.') && said.len() < 300,
            "{what}: {said}"
        );
        answers.push_str(&said);
    }
    let (status, _, said) =
        door_request(port, "GET", "/api/browser/passwords", &[signed, token], "").await;
    assert_eq!(status, 200, "{said}");
    let listed: serde_json::Value = serde_json::from_str(&said).expect("JSON");
    assert_eq!(
        listed,
        json!({ "passwords": [{ "site": "https://example.com", "username": "ada" }] })
    );
    answers.push_str(&said);
    let (status, _, said) = door_request(
        port,
        "GET",
        "/api/browser/passwords",
        &[signed, token, ("Origin", "http://evil.example")],
        "",
    )
    .await;
    assert_eq!(status, 403, "a cross-origin read: {said}");
    let (status, _, said) = door_request(port, "GET", "/api/browser/passwords", &[], "").await;
    assert_eq!(status, 401, "a read with no session: {said}");

    let (status, _, said) = door_request(
        port,
        "DELETE",
        "/api/browser/passwords/example.com",
        &[signed, token, ("Origin", "http://evil.example")],
        "",
    )
    .await;
    assert_eq!(status, 403, "a forged removal: {said}");
    let (_, listed, _) = passwords(home.path(), &["list"], "").await;
    assert_eq!(
        listed, "https://example.com\tada\n",
        "a forged removal removed it"
    );
    let (status, _, said) = door_request(
        port,
        "DELETE",
        "/api/browser/passwords/example.com",
        &[signed, token, origin],
        "",
    )
    .await;
    assert_eq!(status, 200, "{said}");
    answers.push_str(&said);
    let (status, _, said) = door_request(
        port,
        "DELETE",
        "/api/browser/passwords/example.com",
        &[signed, token, origin],
        "",
    )
    .await;
    assert_eq!(status, 404, "{said}");
    assert!(
        said.contains("No password is saved for https://example.com"),
        "{said}"
    );

    // The page itself: the signed-in person's, on the gateway's own host.
    let (status, head, page) = door_request(port, "GET", "/passwords", &[signed, token], "").await;
    assert_eq!(status, 200, "{head}");
    assert!(page.contains("<h1>Passwords</h1>"), "{page}");
    assert!(
        head.contains("content-security-policy: default-src 'self'"),
        "{head}"
    );
    let (_, _, page) = door_request(port, "GET", "/passwords", &[], "").await;
    assert!(page.contains("Print a new sign-in link"), "{page}");
    let (status, _, _) = door_request(
        port,
        "GET",
        "/passwords",
        &[signed, token, ("Host", "evil.example")],
        "",
    )
    .await;
    assert_eq!(status, 403);

    assert!(!answers.contains(CANARY), "an answer carries the password");
    drop(agent);
    let sealed = home.path().join("passwords.secrets.json");
    for (path, bytes) in everything_in(home.path()) {
        if path != sealed {
            assert!(
                !String::from_utf8_lossy(&bytes).contains(CANARY),
                "{} holds the password in plain text",
                path.display()
            );
        }
    }
}

/// Issue 16, LIVE-10, SEC-2: the person reaches the Passwords page from the panel's
/// navigation, saves a password by keyboard, sees it listed by site and username only,
/// and removes it; the outcomes are said in a live region, the password is in no answer
/// the page received, and axe-core finds nothing in any state.
#[tokio::test(flavor = "multi_thread")]
async fn live_10_the_passwords_page_saves_lists_and_removes_by_keyboard() {
    use fantoccini::Locator;
    use fantoccini::key::Key;

    let home = tempfile::tempdir().expect("temp home");
    let ((agent, port, code), person) =
        tokio::join!(door(home.path()), crate::webdriver::Person::start());
    let client = &person.client;
    let own = format!("http://127.0.0.1:{port}");
    client
        .goto(&format!("{own}/signin?code={code}"))
        .await
        .expect("the sign-in link opens");
    client
        .find(Locator::Css("nav.panel-nav a[href='/passwords']"))
        .await
        .expect("the panel's navigation links to Passwords")
        .click()
        .await
        .expect("the link can be clicked");
    let wait = |condition: &'static str| async move {
        let script = format!("return Boolean({condition});");
        for _ in 0..200 {
            if client
                .execute(&script, vec![])
                .await
                .expect("a script runs")
                == json!(true)
            {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let text = client
            .execute("return document.body.innerText", vec![])
            .await
            .expect("a script runs");
        panic!("waited 20 s for {condition}; the page says:\n{text}");
    };
    wait("location.pathname === '/passwords' && document.getElementById('loading').hidden").await;
    wait("!document.getElementById('none').hidden").await;
    person
        .assert_accessible("on the empty Passwords page")
        .await;

    // By keyboard: the site field, then Tab to each next field, Enter to save.
    let site = client
        .find(Locator::Id("site"))
        .await
        .expect("the site field");
    site.click().await.expect("the site field takes the focus");
    let tab = Key::Tab.to_string();
    let enter = Key::Enter.to_string();
    for keys in [
        "127.0.0.1:8080",
        &tab,
        "ada@example.com",
        &tab,
        CANARY,
        &enter,
    ] {
        client
            .active_element()
            .await
            .expect("a focused element")
            .send_keys(keys)
            .await
            .expect("keys");
    }
    wait("document.getElementById('outcome').textContent.startsWith('Saved')").await;
    let said = client
        .execute(
            "return [document.getElementById('outcome').textContent, document.getElementById('password').value, document.getElementById('saved-rows').innerText, document.getElementById('outcome').getAttribute('role')]",
            vec![],
        )
        .await
        .expect("a script runs");
    assert_eq!(
        said,
        json!([
            "Saved the password for http://127.0.0.1:8080 (ada@example.com).",
            "",
            "http://127.0.0.1:8080\tada@example.com\tRemove",
            "status"
        ])
    );
    let (_, listed, _) = passwords(home.path(), &["list"], "").await;
    assert_eq!(listed, "http://127.0.0.1:8080\tada@example.com\n");
    person.assert_accessible("with a saved password").await;
    let shown = client
        .execute("return document.documentElement.outerHTML", vec![])
        .await
        .expect("a script runs");
    assert!(
        !shown.to_string().contains(CANARY),
        "the page shows the password"
    );
    // Everything the page fetched: the list carries no password.
    let fetched = client
        .execute_async(
            "const done = arguments[arguments.length - 1]; fetch('/api/browser/passwords', {headers: {'X-Conch-Session': localStorage.getItem('conch.session')}}).then(r => r.text()).then(done);",
            vec![],
        )
        .await
        .expect("a fetch");
    assert!(fetched.to_string().contains("ada@example.com"), "{fetched}");
    assert!(!fetched.to_string().contains(CANARY), "{fetched}");

    // Remove it by keyboard: the row's button, named for its site.
    let remove = client
        .find(Locator::Css(
            "button[aria-label='Remove the password for http://127.0.0.1:8080']",
        ))
        .await
        .expect("a remove button named for the site");
    remove.send_keys(&enter).await.expect("Enter on it");
    wait("document.getElementById('outcome').textContent === 'Removed the password for http://127.0.0.1:8080.'").await;
    wait(
        "!document.getElementById('none').hidden && document.activeElement.id === 'saved-heading'",
    )
    .await;
    let (_, listed, _) = passwords(home.path(), &["list"], "").await;
    assert_eq!(listed, "no passwords saved\n");
    person.assert_accessible("after removing it").await;

    // The panel's front page links back and forth.
    client.goto(&format!("{own}/")).await.expect("the panel");
    let current = client
        .find(Locator::Css("nav.panel-nav a[aria-current='page']"))
        .await
        .expect("the current page is marked")
        .text()
        .await
        .expect("its text");
    assert_eq!(current, "Conversations");
    person.finish().await;
    drop(agent);
}

/// Issue 29, DATA-6, LIVE-10: the Passwords page says a tampered vault, in its live
/// region, when another reader (the `passwords` command) was the one that set it aside:
/// never "No password is saved yet", never an empty list.
#[tokio::test(flavor = "multi_thread")]
async fn data_6_the_passwords_page_says_a_tampered_vault() {
    let home = tempfile::tempdir().expect("temp home");
    save_canary_for_ada(home.path()).await;
    let path = home.path().join("passwords.secrets.json");
    flip_a_sealed_byte(&path);
    let (ok, _, _) = passwords(home.path(), &["list"], "").await;
    assert!(!ok, "the first reader read a tampered vault");

    let ((agent, port, code), person) =
        tokio::join!(door(home.path()), crate::webdriver::Person::start());
    let client = &person.client;
    let own = format!("http://127.0.0.1:{port}");
    client
        .goto(&format!("{own}/signin?code={code}"))
        .await
        .expect("the sign-in link opens");
    client
        .goto(&format!("{own}/passwords"))
        .await
        .expect("the Passwords page opens");
    let mut said = serde_json::Value::Null;
    for _ in 0..200 {
        said = client
            .execute(
                "return [document.getElementById('outcome').textContent, document.getElementById('none').hidden, document.getElementById('saved').hidden, document.getElementById('loading').hidden]",
                vec![],
            )
            .await
            .expect("a script runs");
        if said[0].as_str().is_some_and(|s| !s.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let outcome = said[0].as_str().unwrap_or_default();
    assert!(
        outcome.starts_with("The saved passwords could not be listed")
            && outcome.contains("Save the passwords again"),
        "{said}"
    );
    assert_eq!(said[1], json!(true), "the page said none is saved: {said}");
    assert_eq!(said[2], json!(true), "the page showed a list: {said}");
    assert_eq!(said[3], json!(true), "the page still loads: {said}");
    person.finish().await;
    drop(agent);
}
