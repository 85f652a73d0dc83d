//! `conch-gateway passwords add|list|remove` (issue 16, SEC-2): the person's saved
//! passwords from the command line. The vault itself, and the Passwords page, are
//! conch-panel's ([`Vault`]).
//!
//! - `conch-gateway passwords add SITE --username NAME [--home DIR]`: the password is one
//!   line of standard input, read without echo on a terminal; only "password saved" is
//!   printed.
//! - `conch-gateway passwords list [--home DIR]`: each site and username, never a password.
//! - `conch-gateway passwords remove SITE [--home DIR]`.
//!
//! Deliberately absent: any way to print a password back.

use std::io::{IsTerminal as _, Read};
use std::process::Command;

use conch_browser::Home;
use conch_browser::seal::SecretText;
use conch_panel::passwords::Vault;
use zeroize::{Zeroize as _, Zeroizing};

/// The usage of `passwords`.
pub(crate) const USAGE: &str = "\
Usage: conch-gateway passwords add SITE --username NAME [--home DIR]
       conch-gateway passwords list [--home DIR]
       conch-gateway passwords remove SITE [--home DIR]

  SITE             example.com: https://example.com and its subdomains; give
                   http://example.com for the plain http site, or a port
                   (example.com:8443) for another one; host:port for a local app or
                   an IP address (127.0.0.1:8080, http unless https:// is given)
  --username NAME  the account's user name
  --home DIR       Conch's folder (default: $CONCH_HOME or ~/.conch)

The password is read from standard input (without echo on a terminal) and never shown.
";

/// Runs `passwords …` with the arguments after `passwords`; gives what to print, or the
/// sentence that says what was wrong.
pub(crate) fn run(args: &[String]) -> Result<String, String> {
    let mut args = args.iter();
    let verb = args.next().map(String::as_str);
    let mut site = None;
    if matches!(verb, Some("add" | "remove")) {
        site = Some(
            args.next()
                .filter(|s| !s.starts_with("--"))
                .ok_or(
                    "give the site, as in: conch-gateway passwords add example.com --username ada",
                )?
                .clone(),
        );
    }
    let (mut home, mut username) = (None, None);
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| {
            args.next()
                .cloned()
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        match arg.as_str() {
            "--home" => home = Some(value("--home")?),
            "--username" => username = Some(value("--username")?),
            "-h" | "--help" => return Ok(USAGE.to_owned()),
            other => {
                return Err(format!(
                    "unknown option “{other}”; see conch-gateway passwords --help"
                ));
            }
        }
    }
    let home = crate::cli::home(home.as_deref().map(std::path::Path::new))?;
    match (verb, site) {
        (Some("add"), Some(site)) => {
            let username = username
                .filter(|u| !u.trim().is_empty())
                .ok_or("passwords add needs --username NAME")?;
            add(&home, &site, &username)
        }
        (Some("remove"), Some(site)) => remove(&home, &site),
        (Some("list"), _) => list(&home),
        (Some("-h" | "--help") | None, _) => Ok(USAGE.to_owned()),
        (Some(other), _) => Err(format!(
            "unknown passwords command “{other}”: use add, list or remove"
        )),
    }
}

fn add(home: &Home, site: &str, username: &str) -> Result<String, String> {
    let key = Vault::site(site)?;
    let password = read_password()?;
    vault(home).save(&key, username.trim(), password)?;
    Ok(format!("password saved for {key} ({})\n", username.trim()))
}

fn remove(home: &Home, site: &str) -> Result<String, String> {
    let key = Vault::site(site)?;
    if !vault(home).forget(&key)? {
        return Err(format!("no password is saved for {key}"));
    }
    Ok(format!("password removed for {key}\n"))
}

fn list(home: &Home) -> Result<String, String> {
    let entries: Vec<String> = vault(home)
        .entries()?
        .into_iter()
        .map(|(site, username)| format!("{site}\t{username}\n"))
        .collect();
    if entries.is_empty() {
        return Ok("no passwords saved\n".to_owned());
    }
    Ok(entries.concat())
}

/// The vault of `home`.
fn vault(home: &Home) -> Vault {
    Vault { home: home.clone() }
}

/// The most bytes of a password line on standard input.
const LINE_LIMIT: usize = 16 * 1024;

/// One line of standard input, without echo on a terminal. The line is read straight
/// into a buffer that is wiped once the password is taken from it: the buffer is larger
/// than standard input's own, which a read that large bypasses, so no copy of the
/// password stays in a buffer of the process (issue 29).
fn read_password() -> Result<SecretText, String> {
    let terminal = std::io::stdin().is_terminal();
    if terminal {
        eprint!("Password: ");
        // The terminal's own setting; no unsafe code for termios.
        let _ = Command::new("stty").arg("-echo").status();
    }
    let mut buffer = Zeroizing::new(vec![0u8; LINE_LIMIT + 1]);
    let read = read_line_into(&mut std::io::stdin(), &mut buffer);
    if terminal {
        let _ = Command::new("stty").arg("echo").status();
        eprintln!();
    }
    read
}

/// Reads one line of `input` into `buffer` and gives it as a secret; `buffer` is wiped
/// before this returns, whatever happens.
fn read_line_into(input: &mut impl Read, buffer: &mut [u8]) -> Result<SecretText, String> {
    let line = read_line(input, buffer).and_then(|len| {
        let line = buffer[..len].strip_suffix(b"\r").unwrap_or(&buffer[..len]);
        let text =
            std::str::from_utf8(line).map_err(|_| "the password is not UTF-8 text".to_owned())?;
        if text.is_empty() {
            return Err("give the password as one line on standard input".to_owned());
        }
        Ok(SecretText::new(text.to_owned()))
    });
    buffer.zeroize();
    line
}

/// Reads `input` into `buffer` up to the first line break or the end; gives the line's
/// length.
fn read_line(input: &mut impl Read, buffer: &mut [u8]) -> Result<usize, String> {
    let mut len = 0;
    loop {
        if len == buffer.len() {
            return Err(format!(
                "the password is longer than {} bytes",
                buffer.len().saturating_sub(1)
            ));
        }
        let read = match input.read(&mut buffer[len..]) {
            Ok(0) => return Ok(len),
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("the password could not be read ({e})")),
        };
        if let Some(end) = buffer[len..len + read].iter().position(|b| *b == b'\n') {
            return Ok(len + end);
        }
        len += read;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 29, DATA-6: the line the password is read into is wiped once the password
    /// is taken from it, and when the line is refused too; only the line is taken.
    #[test]
    fn data_6_the_stdin_buffer_holding_a_password_is_wiped() {
        let mut buffer = vec![0u8; 64];
        let mut input = std::io::Cursor::new(b"canary-line-7e21\r\nnext line".to_vec());
        let password = read_line_into(&mut input, &mut buffer).expect("a line");
        assert_eq!(password.expose(), "canary-line-7e21");
        assert!(
            buffer.iter().all(|b| *b == 0),
            "the buffer holds {buffer:?}"
        );
        let mut input = std::io::Cursor::new(b"\n".to_vec());
        assert!(read_line_into(&mut input, &mut buffer).is_err());
        let mut input = std::io::Cursor::new(vec![b'x'; 100]);
        let long = read_line_into(&mut input, &mut buffer).expect_err("too long");
        assert!(long.contains("longer than 63 bytes"), "{long}");
        assert!(buffer.iter().all(|b| *b == 0), "a refused line stayed");
    }
}
