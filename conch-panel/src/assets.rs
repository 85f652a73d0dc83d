//! The web panel's files (issue 14, LIVE-10): plain HTML, CSS and ES modules from
//! `conch-panel/panel/`, embedded in the library so the app that mounts the panel serves
//! them with no build step and nothing fetched from elsewhere.
//!
//! [`panel`] answers `/` for a signed-in person and [`file`] answers `/panel/{file}`; the
//! routes' checks (Host, the session cookie) are [`crate::door`]'s. Every answer carries a
//! Content-Security-Policy that allows only the gateway's own files and its own live
//! socket, no inline script or style, and no framing; files are never cached, so a new
//! gateway never meets an old page.
//!
//! `passwords.html` and `passwords.js` are the Passwords page (issue 16), served at
//! `/passwords` by [`crate::passwords`]. `signin.html` and `signin.js` are the sign-in
//! page a browser without a session gets ([`PUBLIC`]); `session.js` keeps the session's
//! token in the panel origin's own storage and sends it with every API call and live
//! socket (LIVE-18, AMB-2).
//!
//! Deliberately absent: step thumbnails (they live under the gateway's home and have a
//! route of their own in `panel`).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// One embedded file: its name under `/panel/` and its text.
struct Asset {
    name: &'static str,
    body: &'static str,
}

impl Asset {
    /// Its type, by its name's extension.
    fn content_type(&self) -> &'static str {
        match self.name.rsplit_once('.').map(|(_, ext)| ext) {
            Some("html") => HTML,
            Some("css") => "text/css; charset=utf-8",
            Some("svg") => "image/svg+xml",
            _ => JS,
        }
    }
}

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

/// The file `conch-panel/panel/NAME`, embedded.
macro_rules! asset {
    ($name:literal) => {
        Asset {
            name: $name,
            body: include_str!(concat!("../panel/", $name)),
        }
    };
}

/// The panel's files.
const ASSETS: &[Asset] = &[
    asset!("index.html"),
    asset!("panel.css"),
    asset!("main.js"),
    asset!("live.js"),
    asset!("input.js"),
    asset!("cards.js"),
    asset!("view.js"),
    asset!("icon.svg"),
    asset!("settings.html"),
    asset!("settings.js"),
    asset!("passwords.html"),
    asset!("passwords.js"),
    asset!("session.js"),
    asset!("signin.html"),
    asset!("signin.js"),
];

/// The files the sign-in page loads, served to anyone on the gateway's own host: they
/// hold nothing of the person's.
pub(crate) const PUBLIC: &[&str] = &[
    "signin.html",
    "signin.js",
    "session.js",
    "view.js",
    "panel.css",
    "icon.svg",
];

/// The panel's Content-Security-Policy on port `port`.
fn policy(port: u16) -> String {
    format!(
        "default-src 'self'; img-src 'self' blob: data:; connect-src 'self' ws://127.0.0.1:{port} ws://localhost:{port}; style-src 'self'; script-src 'self'; frame-ancestors 'none'"
    )
}

/// `body` as `content_type` with the panel's headers.
fn respond(
    status: StatusCode,
    content_type: &'static str,
    body: &'static str,
    port: u16,
) -> Response {
    let mut response = (
        status,
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::X_FRAME_OPTIONS, "DENY"),
        ],
        body,
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(&policy(port)) {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

/// `GET /` for a signed-in person: the panel.
pub(crate) fn panel(port: u16) -> Response {
    file("index.html", port)
}

/// The sign-in page (for a browser without a session) with `status`.
pub(crate) fn signin_page(status: StatusCode, port: u16) -> Response {
    let mut page = file("signin.html", port);
    *page.status_mut() = status;
    page
}

/// `GET /panel/{name}` for a signed-in person: the embedded file, or 404.
pub(crate) fn file(name: &str, port: u16) -> Response {
    match ASSETS.iter().find(|asset| asset.name == name) {
        Some(asset) => respond(StatusCode::OK, asset.content_type(), asset.body, port),
        None => respond(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            "Not found: the panel has no such file.\n",
            port,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values of `attribute="…"` in `html`.
    fn values<'a>(html: &'a str, attribute: &str) -> Vec<&'a str> {
        let needle = format!("{attribute}=\"");
        html.match_indices(&needle)
            .filter_map(|(at, _)| {
                let rest = &html[at + needle.len()..];
                rest.split_once('"').map(|(value, _)| value)
            })
            .collect()
    }

    /// The panel's HTML pages.
    fn pages() -> impl Iterator<Item = &'static Asset> {
        ASSETS.iter().filter(|asset| asset.content_type() == HTML)
    }

    /// Every file the pages load is embedded, so a renamed file fails here, not in a
    /// person's browser.
    #[test]
    fn live_10_every_file_index_html_references_is_embedded() {
        for page in pages() {
            every_file_is_embedded(page.body);
        }
    }

    /// Every `/panel/` file `html` loads is embedded, and it links nowhere else.
    fn every_file_is_embedded(html: &str) {
        let mut referenced: Vec<&str> = values(html, "src");
        referenced.extend(values(html, "href"));
        let local: Vec<&str> = referenced
            .iter()
            .filter_map(|value| value.strip_prefix("/panel/"))
            .collect();
        assert!(local.len() >= 3, "{referenced:?}");
        for name in &local {
            assert!(
                ASSETS.iter().any(|asset| asset.name == *name),
                "index.html loads /panel/{name}, which is not embedded"
            );
        }
        // Everything else it links to is the gateway's own page.
        for value in referenced {
            assert!(value.starts_with('/'), "{value} is not the gateway's own");
        }
    }

    /// The modules import one another by relative names: each must be embedded too.
    #[test]
    fn live_10_every_imported_module_is_embedded() {
        for asset in ASSETS.iter().filter(|asset| asset.content_type() == JS) {
            for line in asset.body.lines().filter(|l| l.starts_with("import ")) {
                let name = line
                    .rsplit_once("from './")
                    .and_then(|(_, rest)| rest.split_once('\''))
                    .map(|(name, _)| name)
                    .unwrap_or_else(|| panic!("{}: {line}", asset.name));
                assert!(
                    ASSETS.iter().any(|other| other.name == name),
                    "{} imports {name}, which is not embedded",
                    asset.name
                );
            }
        }
    }

    /// No inline script or style: the policy would block them (LIVE-10).
    #[test]
    fn the_page_has_no_inline_script_or_style() {
        for page in pages() {
            no_inline_script_or_style(page.body);
        }
        assert!(
            policy(7391).contains("connect-src 'self' ws://127.0.0.1:7391 ws://localhost:7391;")
        );
    }

    /// `html` has no inline script or style.
    fn no_inline_script_or_style(html: &str) {
        assert!(!html.contains("style="));
        assert!(!html.contains("<style"));
        for (at, _) in html.match_indices("<script") {
            let tag_end = html[at..].find('>').expect("a closed tag") + at;
            assert!(html[at..tag_end].contains("src="), "an inline script");
            assert!(
                html[tag_end + 1..].starts_with("</script>"),
                "a script body"
            );
        }
        // No inline event handler either (` onclick="…"`).
        for (at, _) in html.match_indices(" on") {
            let name: String = html[at + 3..]
                .chars()
                .take_while(char::is_ascii_lowercase)
                .collect();
            assert!(
                !html[at + 3 + name.len()..].starts_with('='),
                "an inline handler: on{name}"
            );
        }
    }

    #[test]
    fn an_unknown_file_is_not_found() {
        assert_eq!(file("nope.js", 1).status(), StatusCode::NOT_FOUND);
        assert_eq!(file("../main.rs", 1).status(), StatusCode::NOT_FOUND);
        let found = file("main.js", 1);
        assert_eq!(found.status(), StatusCode::OK);
        assert_eq!(
            found.headers().get(header::CONTENT_TYPE).unwrap(),
            "text/javascript; charset=utf-8"
        );
    }
}
