//! The web panel's page (issue 14, LIVE-10): served at `/` and `/panel/{file}` to a
//! signed-in person only, with a Content-Security-Policy that allows no inline script or
//! style and no socket but the gateway's own.

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

use crate::live::{get, header};
use crate::support::gateway;

/// A running `conch-gateway serve --port 0`: its port and the one-time sign-in code.
struct Served {
    child: tokio::process::Child,
    port: u16,
    code: String,
}

impl Served {
    async fn start(home: &std::path::Path) -> Served {
        let mut child = gateway(home, &["serve", "--port", "0"])
            .spawn()
            .expect("the gateway starts");
        let stderr = child.stderr.take().expect("stderr is piped");
        let mut lines = BufReader::new(stderr).lines();
        let link = loop {
            let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                .await
                .expect("the gateway starts within 30 s")
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
        Served {
            child,
            port: port.parse().expect("a port"),
            code: code.to_owned(),
        }
    }

    /// Signs in; gives the `Cookie` header's value.
    async fn sign_in(&self) -> String {
        let (status, head, _) = get(self.port, &format!("/signin?code={}", self.code), &[]).await;
        assert_eq!(status, 303, "{head}");
        let cookie = header(&head, "set-cookie").expect("a cookie");
        cookie.split(';').next().expect("a pair").to_owned()
    }
}

/// LIVE-10, PROTO-13: a signed-in person gets the panel and its files with the panel's
/// headers; anyone else gets the sign-in sentence for `/` and 403 for the files; an
/// unknown file is 404.
#[tokio::test(flavor = "multi_thread")]
async fn live_10_the_panel_is_served_to_a_signed_in_person_only() {
    let home = tempfile::tempdir().unwrap();
    let mut served = Served::start(home.path()).await;
    let port = served.port;

    // Not signed in.
    let (status, _, body) = get(port, "/", &[]).await;
    assert_eq!(status, 200);
    assert!(body.contains("Sign in"), "{body}");
    assert!(!body.contains("signin?code="), "{body}");
    for file in ["/panel/main.js", "/panel/live.js", "/panel/index.html"] {
        let (status, _, body) = get(port, file, &[]).await;
        assert_eq!(status, 401, "{file}: {body}");
        assert!(!body.contains("import "), "{file}: {body}");
    }
    // The sign-in page's own files are anyone's.
    for file in ["/panel/signin.js", "/panel/session.js", "/panel/panel.css"] {
        let (status, _, body) = get(port, file, &[]).await;
        assert_eq!(status, 200, "{file}: {body}");
    }
    let forged = [("Cookie", "conch_session=0123456789abcdef")];
    let (status, _, _) = get(port, "/panel/main.js", &forged).await;
    assert_eq!(status, 401);

    let cookie = served.sign_in().await;
    let with_cookie = [("Cookie", cookie.as_str())];
    let policy = format!(
        "default-src 'self'; img-src 'self' blob: data:; connect-src 'self' ws://127.0.0.1:{port} ws://localhost:{port}; style-src 'self'; script-src 'self'; frame-ancestors 'none'"
    );

    // The page: the panel's headers, and no inline script or style.
    let (status, head, html) = get(port, "/", &with_cookie).await;
    assert_eq!(status, 200, "{head}");
    assert_eq!(
        header(&head, "content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(
        header(&head, "content-security-policy"),
        Some(policy.to_lowercase().as_str())
    );
    assert_eq!(header(&head, "x-content-type-options"), Some("nosniff"));
    assert_eq!(header(&head, "referrer-policy"), Some("no-referrer"));
    assert_eq!(header(&head, "cache-control"), Some("no-store"));
    assert!(html.starts_with("<!doctype html>"), "{html}");
    assert!(html.contains("<html lang=\"en\">"));
    assert!(!html.contains("style="), "an inline style attribute");
    assert!(!html.contains("<style"), "an inline style sheet");
    for (at, _) in html.match_indices("<script") {
        let tag = &html[at..at + html[at..].find('>').expect("a closed tag")];
        assert!(tag.contains("src=\"/panel/"), "an inline script: {tag}");
        assert!(
            html[at + tag.len() + 1..].starts_with("</script>"),
            "a script with a body"
        );
    }
    for id in [
        "live-canvas",
        "takeover",
        "handback",
        "stop",
        "find-input",
        "find-count",
        "caption",
        "cursor",
        "tabs",
        "cards",
        "conversations",
        "page-dialog",
        "keys",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "#{id} is missing");
    }
    // `?browser=1` and a conversation are the page's own business: the same page.
    let (status, _, same) = get(port, "/?browser=1&conversation=mcp-stdio", &with_cookie).await;
    assert_eq!(status, 200);
    assert_eq!(same, html);

    // The files, with their types.
    for (file, kind) in [
        ("/panel/main.js", "text/javascript; charset=utf-8"),
        ("/panel/live.js", "text/javascript; charset=utf-8"),
        ("/panel/panel.css", "text/css; charset=utf-8"),
    ] {
        let (status, head, body) = get(port, file, &with_cookie).await;
        assert_eq!(status, 200, "{file}: {head}");
        assert_eq!(header(&head, "content-type"), Some(kind), "{file}");
        assert_eq!(header(&head, "cache-control"), Some("no-store"), "{file}");
        assert_eq!(
            header(&head, "content-security-policy"),
            Some(policy.to_lowercase().as_str()),
            "{file}"
        );
        assert_eq!(header(&head, "x-content-type-options"), Some("nosniff"));
        assert!(!body.is_empty(), "{file}");
    }

    // Unknown files, and a name that tries to climb out.
    for file in ["/panel/nope.js", "/panel/..%2Fsrc%2Fmain.rs", "/panel/"] {
        let (status, _, _) = get(port, file, &with_cookie).await;
        assert_eq!(status, 404, "{file}");
    }
    // A rebound name is refused even with the cookie.
    let rebound = [
        ("Cookie", cookie.as_str()),
        ("Host", &format!("evil.example:{port}")),
    ];
    let (status, _, _) = get(port, "/panel/main.js", &rebound).await;
    assert_eq!(status, 403);

    served.child.kill().await.expect("kill");
}
