//! The web panel in a real browser (issue 14): the person's Chromium, driven over
//! WebDriver by fantoccini through chromedriver, signs in with the printed link and uses
//! the panel, while an MCP client drives Conch over stdio as the agent. axe-core checks
//! every state the person sees (LIVE-10).

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;

use crate::support::{StdioClient, gateway};
use crate::webdriver::Person;

/// A `conch-gateway mcp` with its person's door, the agent's MCP client, and the
/// person's browser.
struct Session {
    agent: StdioClient,
    person: Person,
    /// The person's door, `http://127.0.0.1:PORT`.
    door: String,
    /// The one-time sign-in link printed at start.
    link: String,
    _home: tempfile::TempDir,
}

impl Session {
    /// Starts `mcp --panel-port 0 --allow-localhost` with `args`, reads the sign-in link
    /// from standard error, and opens the person's browser (not yet signed in).
    async fn start(args: &[&str]) -> Session {
        let home = tempfile::tempdir().expect("a temp home");
        let mut all = vec!["mcp", "--panel-port", "0", "--allow-localhost"];
        all.extend_from_slice(args);
        let (mut agent, person) = tokio::join!(
            StdioClient::start(gateway(home.path(), &all)),
            Person::start()
        );
        let pipe = agent.child.stderr.take().expect("stderr is piped");
        let (tx, mut rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = BufReader::new(pipe).lines();
            let mut tx = Some(tx);
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(link) = line.split("watch and take over at ").nth(1)
                    && let Some(tx) = tx.take()
                {
                    let _ = tx.send(link.to_owned());
                }
            }
        });
        let link = tokio::time::timeout(Duration::from_secs(60), rx.recv())
            .await
            .expect("the sign-in link within 60 s")
            .expect("the gateway prints its sign-in link");
        let door = link
            .split("/signin?code=")
            .next()
            .expect("a sign-in link")
            .to_owned();
        assert!(door.starts_with("http://127.0.0.1:"), "{link}");
        Session {
            agent,
            person,
            door,
            link,
            _home: home,
        }
    }

    /// Opens the sign-in link in the person's browser: the 303 sets the cookie and
    /// leads to the panel.
    async fn sign_in(&self) {
        self.person
            .client
            .goto(&self.link)
            .await
            .expect("the sign-in link opens");
        let url = self.person.client.current_url().await.expect("a URL");
        assert_eq!(
            url.as_str(),
            format!("{}/", self.door),
            "the link leads to the panel"
        );
    }

    /// The text of the page's body as the person sees it.
    async fn body_text(&self) -> String {
        let text: Value = self
            .person
            .client
            .execute("return document.body.innerText", vec![])
            .await
            .expect("a script runs");
        text.as_str().unwrap_or_default().to_owned()
    }

    /// Ends the person's browser and the gateway.
    async fn finish(self) {
        self.person.finish().await;
        self.agent.finish().await;
    }
}

/// LIVE-10: the page at `/` has no axe-core violations, signed out (a sentence saying to
/// use the link) and signed in.
#[tokio::test(flavor = "multi_thread")]
async fn live_10_the_panel_has_no_axe_violations_signed_in_and_out() {
    let session = Session::start(&[]).await;
    session
        .person
        .client
        .goto(&format!("{}/", session.door))
        .await
        .expect("the door answers");
    let text = session.body_text().await;
    assert!(
        text.contains("sign-in link") || text.contains("Sign in"),
        "{text}"
    );
    session.person.assert_accessible("signed out").await;

    session.sign_in().await;
    let text = session.body_text().await;
    assert!(!text.contains("sign-in link"), "signed in: {text}");
    session.person.assert_accessible("signed in").await;
    session.finish().await;
}
