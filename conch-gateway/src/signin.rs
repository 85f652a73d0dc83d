//! `conch-gateway signin` (LIVE-18, AMB-2): a person without a panel session gets a fresh
//! one-time sign-in link from the running gateway, without restarting it (which would end
//! the agent's session).
//!
//! The running gateway writes `<home>/panel.door` (readable by its owner only): its
//! panel's port and a secret made at start. The command reads it and asks the gateway at
//! `POST /api/browser/signin-code` with `Authorization: Bearer SECRET`; the gateway
//! answers a new link, which the command prints on standard output. Only someone who can
//! read the owner's home can do this, as only they can read the gateway's standard error.
//!
//! Deliberately absent: any way to reach a gateway on another computer (127.0.0.1 only).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use conch_browser::Home;
use serde::{Deserialize, Serialize};

use crate::panel::Panel;

/// The file's name under the home.
pub(crate) const DOOR_FILE: &str = "panel.door";

/// What `panel.door` holds.
#[derive(Serialize, Deserialize)]
struct Door {
    port: u16,
    secret: String,
}

/// Writes `<home>/panel.door` for `panel` (0600); gives its path.
pub(crate) fn write_door(home: &Home, panel: &Panel) -> Result<PathBuf, String> {
    let door = Door {
        port: panel.port(),
        secret: panel.door_secret().to_owned(),
    };
    let text = serde_json::to_string(&door).map_err(|e| format!("panel.door ({e})"))?;
    crate::write_private(home, DOOR_FILE, &text).map_err(|e| e.to_string())
}

/// Removes `panel.door` as the gateway stops (a failure is only logged).
pub(crate) fn remove_door(path: Option<&Path>) {
    if let Some(path) = path
        && let Err(e) = std::fs::remove_file(path)
    {
        tracing::warn!("{} can't be removed ({e})", path.display());
    }
}

/// The usage text of `signin`.
const USAGE: &str = "\
Usage: conch-gateway signin [--home DIR]

  Prints a new one-time link that signs this computer's browser in to the running
  gateway's panel (it works once, within 10 minutes). The gateway must be running on DIR
  (default: $CONCH_HOME or ~/.conch).
";

/// `conch-gateway signin [--home DIR]`: the line to print, or the sentence that says what
/// was wrong.
pub(crate) fn run(args: &[String]) -> Result<String, String> {
    let mut dir: Option<PathBuf> = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-h" | "--help" => return Ok(USAGE.to_owned()),
            "--home" => {
                let value = args.next().ok_or("--home needs a folder")?;
                dir = Some(PathBuf::from(value));
            }
            other => match other.strip_prefix("--home=") {
                Some(value) => dir = Some(PathBuf::from(value)),
                None => {
                    return Err(format!(
                        "signin takes only --home DIR, not “{other}”; see conch-gateway signin --help"
                    ));
                }
            },
        }
    }
    let home = crate::cli::home(dir.as_deref())
        .map_err(|e| String::from(e).trim_end_matches('.').to_owned())?;
    let path = home.root().join(DOOR_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "no running gateway was found for {} ({} can't be read: {e}); start conch-gateway, which prints a sign-in link",
            home.root().display(),
            path.display()
        )
    })?;
    let door: Door = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not the gateway's ({e})", path.display()))?;
    let link = ask(&door).map_err(|why| {
        format!(
            "the gateway of {} did not give a link ({why}); if it stopped, start it again",
            home.root().display()
        )
    })?;
    Ok(format!(
        "Open this link in your browser to sign in to Conch's panel (it works once, within 10 minutes):\n{link}\n"
    ))
}

/// Asks the gateway on `door.port` for a new link.
fn ask(door: &Door) -> Result<String, String> {
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], door.port));
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_secs(5))
        .map_err(|e| format!("nothing answers on 127.0.0.1:{}: {e}", door.port))?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(15)));
    let request = format!(
        "POST /api/browser/signin-code HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        door.port, door.secret
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("the request can't be sent: {e}"))?;
    let mut answer = Vec::new();
    stream
        .take(64 * 1024)
        .read_to_end(&mut answer)
        .map_err(|e| format!("the answer can't be read: {e}"))?;
    let answer = String::from_utf8_lossy(&answer);
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .ok_or("the answer is not HTTP")?;
    let status = head.split_whitespace().nth(1).unwrap_or_default();
    if status != "200" {
        return Err(format!("it answered {status}: {}", body.trim()));
    }
    #[derive(Deserialize)]
    struct Answer {
        link: String,
    }
    serde_json::from_str::<Answer>(body.trim())
        .map(|a| a.link)
        .map_err(|_| "its answer has no link".to_owned())
}
